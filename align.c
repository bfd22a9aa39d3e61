/* align.c - infer the effective page and erase-block size from read timing.
 *
 * What the card is assumed to do (flash-model.md section 3): a read that
 * crosses an internal boundary costs more than one that does not, because
 * two NAND pages (or two erase blocks, found through the mapping table) must
 * be sensed instead of one.  The extra cost depends on the largest internal
 * unit whose boundary is crossed: nothing below the page, a page penalty at
 * page boundaries, usually a larger one at erase-block boundaries, and
 * sometimes steps in between (multi-plane groups, sub-AU mapping units).
 *
 * What is measured: for a candidate boundary size s we read blocksize bytes
 * across ("on") offsets x = k * s, at several positions spread over the
 * device, and next to them, alternately just before ("pre") and just after
 * ("post") the boundary, and take diff = on - base, flashbench -a's
 * on - (pre + post) / 2 at two reads per position instead of three.
 * Unlike flashbench, k is always coprime to 30: then a unit of size
 * 2^a * 3^b * 5^c divides x exactly when it divides s, so every position
 * of a group tests the same set of units.  Candidates are powers of two and 3 * 2^n, so 1.5, 3, 6, 12
 * and 24 MiB erase blocks show up as themselves instead of as a partial
 * step at a smaller power of two.
 *
 * How it decides: a size L is a boundary level when crossing it costs
 * clearly more than crossing its largest divisors L/2 and L/3, and every
 * tested size that L divides costs more than every size it does not
 * divide; "clearly" is a z score against the spread between positions,
 * which also captures per-location noise that repeating cannot remove.
 * The page is the smallest level, the erase block the largest; both are
 * reported only with enough evidence, and not while a step next to them
 * (L/2 or L/3 below the page, 2E or 3E above the erase block) is
 * suspected but unconfirmed, nor a page P whose multiples by 2 or 4 cost
 * more than its other multiples (raw pages inside a multi-plane page):
 * else they are undetermined.  Every decision
 * is a ratio against measured noise and the read base cost, so the same
 * card ten times faster or slower gives the same answer.
 *
 * How it spends reads: in rounds, in shuffled order (no two reads of one
 * position in a row, so a read cache cannot help), every size at a third
 * of its positions for the first three rounds.  After that a round reads
 * only what can still change the answer, decided per size (a sequential
 * test): a candidate level while its z is close to a threshold; a size
 * that is not a level while the confidence interval of its step over
 * the level it stands on still reaches the smallest step that would
 * change the verdict there and its lower end is not clearly above any
 * level's minimum (then the level tests decide), together with the sizes
 * that step is judged against.  The step that matters: below a reported
 * page, what would make a size the page or the choice ambiguous; at the
 * page's multiples, what would lift the plateau past it; with no page,
 * the 1.5 % from which any level counts (nothing once two levels firmly
 * could each be the page: a further level would not tell them apart; and
 * nothing once no page-size level has shown, or come close, after twice
 * flashbench -a's reads); nothing between the page sizes and the erase
 * block E; 3 % from E to 3E, 9 % beyond but 5 % at E's multiples (the
 * boundaries of a larger AU, a clear step at one of which withholds E,
 * see larger_multiple_suspected).  A size measured
 * further gets its full positions; a size whose spread is per-location
 * noise gets more positions instead of repeats.  The run ends when the
 * answer has held for three rounds and nothing is open, when nothing
 * improves any more, when nothing at all has stood out after twice
 * flashbench -a's reads, or at the budget; a run the budget ends says so,
 * trusts its answer less, and drops a size whose neighbours could still
 * hide a step that would change it.
 *
 * Known limits: USB readers add jitter that can hide page steps (the erase
 * step usually survives); cards that charge the same at every boundary show
 * a page level but no erase block; erase blocks that are not 2^a 3^b 5^c
 * multiples of the page are not found.  Reference: Arnd Bergmann,
 * "Optimizing Linux with cheap flash drives", LWN 428584, and flashbench.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "align.h"
#include "dev.h"
#include "stats.h"

/* Coarse to fine: every size starts with a third of ALIGN_POSITIONS,
 * enough to tell whether it matters at all; a size still measured after
 * the first rounds is brought up to ALIGN_POSITIONS (the same grid: its
 * first positions are among them). */
#define ALIGN_POSITIONS 24
#define ALIGN_START_POSITIONS (ALIGN_POSITIONS / 3)
#define ALIGN_MAX_POSITIONS 48		/* after extending against location noise */
#define ALIGN_MIN_POSITIONS 3
#define ALIGN_MAX_GROUP (128ULL << 20)	/* largest boundary worth testing */
#define ALIGN_DEFAULT_MAX_REPEATS 48
#define ALIGN_REPEATS_CAP 1024
#define ALIGN_DEFAULT_MIN_REPEATS 3
#define ALIGN_DEFAULT_MAX_READS 60000
#define ALIGN_PAGE_MAX (64ULL << 10)	/* the largest size reported as a page */
#define ALIGN_ERASE_MIN (128ULL << 10)	/* the smallest size reported as an erase block */
/* Up to this size the top level may be a multi-plane page as well as an
 * erase block (4 planes of 64 KiB): reported as the erase block only
 * under a page at least ALIGN_SMALL_ERASE_PAGES times smaller. */
#define ALIGN_PAGE_OR_ERASE_MAX (256ULL << 10)
#define ALIGN_SMALL_ERASE_PAGES 8

/* A level must stand out by this many standard errors.  Values between
 * ALIGN_Z_HINT and ALIGN_Z_LEVEL are borderline: measure more. */
#define ALIGN_Z_LEVEL 4.0
#define ALIGN_Z_HINT 2.0
/* and every multiple of a level must cost more than every other size by
 * this many standard errors (a worst pair among dozens: lenient) */
#define ALIGN_Z_CONSISTENT 1.0
/* a step this many standard errors high is suspected of being a level
 * next to a candidate.  Below the page the bar is low, and the step must
 * also reach this share of the candidate's own: multi-plane pages hide a
 * smaller real page (the flashbench README card).  Above the erase block
 * the z bar is higher (the largest sizes have few positions) and the
 * candidate's step does not count: an AU of two mapping units can add
 * only a little at its own boundary to the step at the unit's, however
 * large that step (a share of a tenth of it let a 4 MiB AU adding 2-3 %
 * of a read to its 2 MiB half's 60 % be reported as 2 MiB at 0.99), and
 * a clear step there means the erase block may be larger. */
#define ALIGN_Z_SUSPECT_BELOW 1.5
#define ALIGN_SUSPECT_SHARE_BELOW 0.25
#define ALIGN_Z_SUSPECT_ABOVE 2.5
/* and by this fraction of the read base cost, so that tiny systematic
 * effects of a cache or a loop device are not taken for flash geometry */
#define ALIGN_MIN_REL_STEP 0.015
/* Above the erase block a suspected step needs only this share of a
 * read: an AU made of two mapping units may cost barely more at its own
 * boundary than at the units' (nearly equal penalties), too little to
 * be a level; with ALIGN_MIN_REL_STEP there the half-AU was reported as
 * the erase block at 0.99.  A clear step of a third of that is enough to
 * withhold the erase block (undetermined), not to report a larger one. */
#define ALIGN_MIN_SUSPECT_REL_ABOVE (ALIGN_MIN_REL_STEP / 3)
/* around the erase block, measure until a step of this fraction of the
 * read cost could not hide (ALIGN_TRUSTED_REL_STEP: a smaller erase-block
 * step would not be trusted fully anyway); the page sizes have targets
 * of their own, see rel_step_that_matters */
#define ALIGN_TARGET_REL_ERASE 0.03
/* but 2E and 3E, where the AU would be if E were its half or third, are
 * measured until a step that is a level on its own could not hide: the
 * AU's boundary may add that little to the step of its half */
#define ALIGN_TARGET_REL_NEXT_AU ALIGN_MIN_REL_STEP
/* above the erase block's nearest multiples (2E, 3E) a level would be a
 * larger AU, whose read step is typically tens of percent of a read
 * (flash-model.md section 2): a coarser target there is enough */
#define ALIGN_TARGET_REL_FAR 0.09
/* but E's own multiples there are the boundaries of such a larger AU, and
 * over a large mapping step at E its own may add little (a 4 MiB AU 6 %
 * of a read above its 512 KiB mapping step's 46 %): measured until a 5 %
 * step could not hide */
#define ALIGN_TARGET_REL_FAR_MULTIPLE 0.05
/* --quick: every step that matters this much coarser (a page step under
 * about 2.3 % and an erase step under 4.5 % of the read cost may go
 * unseen), no positions
 * added after the first rounds, a budget of about what flashbench -a
 * reads on a 1 GiB card, and no confidence above ALIGN_QUICK_CONF_CAP,
 * since a smaller step may have been missed */
#define ALIGN_QUICK_TARGET_SCALE 1.5
#define ALIGN_QUICK_MAX_READS 3000
#define ALIGN_QUICK_CONF_CAP 0.8
/* While no size stands out at all, the run ends after this many times
 * flashbench -a's reads: a step the noise still hides by then is one an
 * expert's table would not show either, and would be trusted little.
 * The same holds for the page sizes alone (page_search_done). */
#define ALIGN_NOTHING_FB_SHARE 2
/* a run the budget stopped before its answer settled trusts that answer
 * at most this much (still above ALIGN_REPORT_MIN: it is the best the
 * reads could say, not a guess) */
#define ALIGN_BUDGET_CONF_CAP 0.7
/* steps of at least this fraction of the read cost get full trust */
#define ALIGN_TRUSTED_REL_STEP 0.03
/* The page is the smallest level whose step reaches the plateau that the
 * steps settle on above it, at least this share of it; a smaller level is
 * a sub-page level (raw pages of a multi-plane page, the seed card's 2 KiB
 * step) only when its step is also below ALIGN_TRUSTED_REL_STEP of the
 * read cost.  A smaller level with a larger step that does not reach the
 * plateau could be the page as well: then the page is undetermined. */
#define ALIGN_PLATEAU_SHARE 0.75
/* a page choice whose deciding steps lie closer than this many standard
 * errors to those thresholds could flip on a rerun: measure more, and
 * trust it less */
#define ALIGN_Z_CHOICE 2.0
/* a size less trusted than this is not reported at all: no guessing */
#define ALIGN_REPORT_MIN 0.6
/* a reported level is settled once its key test passes by this many
 * more standard errors than ALIGN_Z_LEVEL: a rerun would rarely drop it
 * below the threshold (its z moves by about one between reruns) */
#define ALIGN_Z_SETTLED_MARGIN 2.0

/* Confidence maps: evidence at its threshold is worth ALIGN_CONF_FLOOR,
 * and it approaches ALIGN_CONF_FLOOR + ALIGN_CONF_SPAN (never 1: read
 * timing cannot prove geometry) with this many more standard errors per
 * e-fold.  The level test's z grows slower per unit than a choice margin
 * (a level needs to stand out of several comparisons). */
#define ALIGN_CONF_FLOOR 0.5
#define ALIGN_CONF_SPAN 0.49
#define ALIGN_Z_CONF_SCALE 3.0
#define ALIGN_CHOICE_CONF_SCALE 2.0
/* a level whose multiples only just separate from the other sizes keeps
 * at most this much trust, rising to FLOOR + SPAN over this many more
 * standard errors */
#define ALIGN_ALL_CONF_FLOOR 0.6
#define ALIGN_ALL_CONF_SPAN 0.39
#define ALIGN_ALL_CONF_SCALE 3.0
/* A size's diff is the mean of its positions' diffs without the fifth
 * at each end (a position in a slow spot or with an unlucky stall moves
 * it little).  Its standard error comes from the winsorized spread
 * (stats_trimmed_sigma, about 1.07 sigma for Gaussian spread), here
 * divided by ALIGN_TRIMMED_SE_FACTOR to give the spread between
 * positions in sigma's terms, which the error multiplies back.  The MAD
 * was used before: it collapses when the positions split into two
 * groups, some crossing a step and some not (a card that reads
 * never-written units cheaply, after the capacity check wrote a few of
 * them at powers of two), and the few sizes whose positions mostly landed
 * on written units looked certain (32 MiB reported for 2 MiB). */
#define ALIGN_POSITION_TRIM 0.2
#define ALIGN_TRIMMED_SE_FACTOR 1.1
/* a median of n values is about as precise as a mean of n / this many */
#define ALIGN_MEDIAN_VAR_FACTOR 1.57
/* doubling the repeats must raise the typical z (or lower the detectable
 * step) by this factor to count as progress: pure sampling noise gives
 * sqrt(2) = 1.41, per-location noise 1.0 */
#define ALIGN_PROGRESS_RATIO 1.1
/* keeps a z score finite when both errors are zero (a noiseless device) */
#define ALIGN_SE_EPS_NS 1e-9

/* multipliers coprime to 30 among 1..kmax, tabulated when kmax is at most
 * this (8/30 of them qualify, so ALIGN_SMALL_KMAX * 8 / 30 + 1 slots
 * hold them all); larger devices step through k directly */
#define ALIGN_SMALL_KMAX 4096
#define ALIGN_SMALL_K_SLOTS (ALIGN_SMALL_KMAX * 8 / 30 + 2)

/* measure_round packs (group, position * KIND_COUNT + kind) into 32 bits
 * as gi << ALIGN_SLOT_BITS | slot */
#define ALIGN_SLOT_BITS 8

/* Two reads per position and repeat: the one across the boundary ("on")
 * and one next to it that crosses nothing ("base").  The base read
 * alternates between the block just before the boundary ("pre") and just
 * after it ("post"), so that over the repeats it is flashbench's pre and
 * post average at two thirds of its reads: a position's location effects
 * still cancel, and both sides are seen. */
enum { KIND_ON, KIND_BASE, KIND_COUNT };
enum { SIDE_PRE, SIDE_POST };
_Static_assert(ALIGN_MAX_POSITIONS * KIND_COUNT <= (1 << ALIGN_SLOT_BITS),
	       "a position and read kind must fit in the slot bits");
_Static_assert((uint64_t)ALIGN_MAX_ROWS << ALIGN_SLOT_BITS <= UINT32_MAX,
	       "a group index must fit above the slot bits");

/* A robust "typical fast" time of one read from its repeats: the mean of
 * the fastest 1/fraction of them.  Every variant ignores stalls and other
 * slow outliers.  Which one is most precise depends on the shape of the
 * jitter: for bounded (uniform-like) jitter the fastest few are best, for
 * Gaussian-like jitter the faster half; align_run tries both. */
enum align_estimator { EST_FAST_TAIL, EST_FAST_HALF, EST_COUNT };

struct align_group {
	uint64_t size;
	unsigned npos;
	uint64_t pos[ALIGN_MAX_POSITIONS];
	unsigned reps[ALIGN_MAX_POSITIONS];	/* repeats done per position */
	bool focus;			/* measured in the next round */
	double *samples;		/* [pos][kind][repeat] in ns */
	/* estimates, recomputed after every round, over the positions with
	 * enough repeats (nused of them, est/diff indexed like pos) */
	double est[ALIGN_MAX_POSITIONS][KIND_COUNT];
	double diff[ALIGN_MAX_POSITIONS];
	unsigned nused;
	double d;			/* trimmed mean diff over positions */
	double sigma;			/* spread of diffs between positions */
	double se;			/* standard error of d */
	/* noise of one position's diff from its own repeats (split-half;
	 * INFINITY until there are enough): when it is small against sigma,
	 * the spread is per-location noise that repeats cannot shrink */
	double within;
	unsigned rep_cap;		/* repeats per position once saturated (0: none) */
	bool extended;			/* positions were added against location noise */
};

struct align_state {
	struct fp_dev *dev;
	uint64_t bs;
	unsigned min_repeats;
	unsigned max_repeats;
	unsigned rounds;		/* rounds done */
	bool extended;			/* positions were added against location noise */
	double target_scale;		/* 1, or ALIGN_QUICK_TARGET_SCALE */
	unsigned full_positions;	/* per group once it is measured further */
	bool page_search_over;		/* ALIGN_NOTHING_FB_SHARE x flashbench's reads done */
	struct align_group groups[ALIGN_MAX_ROWS];
	size_t ngroups;
	double base_ns;
	double pooled_sigma;
	enum align_estimator estimator;	/* the one the estimates were made with */
	void *buf;
	struct stats_rng rng;
};

/* One candidate level and how well it separates the sizes it divides from
 * the sizes it does not divide. */
struct align_level {
	uint64_t size;
	double gap_ns;
	double z;			/* key test: L against its divisors */
	double z_all;			/* consistency: all multiples against all others */
	double rel;			/* gap / read base */
	double gap_se_ns;		/* standard error of gap_ns */
	/* the groups the two tests compared: where more repeats pay off */
	const struct align_group *self, *below, *lo, *hi;
};

static bool coprime30(uint64_t k)
{
	return k % 2 && k % 3 && k % 5;
}

static bool divides(uint64_t a, uint64_t b)
{
	return b % a == 0;
}

/* Up to want multipliers k coprime to 30 with k * s + bs <= size, spread
 * evenly over the device so that no region (FAT area, a bad spot)
 * dominates a group; the positions are k * s. */
static unsigned pick_positions(uint64_t s, uint64_t bs, uint64_t size,
			       unsigned want, uint64_t *pos)
{
	uint64_t kmax = (size - bs) / s;
	uint64_t ks[ALIGN_MAX_POSITIONS];
	unsigned n = 0;

	if (kmax <= ALIGN_SMALL_KMAX) {
		uint64_t all[ALIGN_SMALL_K_SLOTS];
		unsigned nall = 0;

		for (uint64_t k = 1; k <= kmax; k++)
			if (coprime30(k)) {
				if (nall >= ALIGN_SMALL_K_SLOTS)
					abort();	/* the bound above is wrong */
				all[nall++] = k;
			}
		if (nall <= want) {
			for (unsigned i = 0; i < nall; i++)
				ks[n++] = all[i];
		} else {
			for (unsigned i = 0; i < want; i++)
				ks[n++] = all[(2 * i + 1) * nall / (2 * want)];
		}
	} else {
		for (unsigned i = 0; i < want; i++) {
			uint64_t k = (2 * i + 1) * kmax / (2 * want);

			while (!coprime30(k))
				k++;
			ks[n++] = k;
		}
	}
	for (unsigned i = 0; i < n; i++)
		pos[i] = ks[i] * s;
	return n;
}

static void add_group(struct align_state *st, uint64_t s, uint64_t size)
{
	struct align_group *g;

	if (st->ngroups >= ALIGN_MAX_ROWS || s % st->bs)
		return;
	g = &st->groups[st->ngroups];
	memset(g, 0, sizeof(*g));
	g->size = s;
	g->focus = true;
	g->npos = pick_positions(s, st->bs, size,
				 ALIGN_START_POSITIONS,
				 g->pos);
	if (g->npos >= ALIGN_MIN_POSITIONS)
		st->ngroups++;
}

static int cmp_group(const void *a, const void *b)
{
	const struct align_group *x = a, *y = b;

	return (x->size > y->size) - (x->size < y->size);
}

/* Powers of two and 3 * 2^n from the block size up to the largest size
 * that still fits ALIGN_MIN_POSITIONS positions. */
static void plan_groups(struct align_state *st, uint64_t max_group)
{
	uint64_t size = fp_dev_size_bytes(st->dev);

	for (uint64_t s = st->bs; s <= max_group; s *= 2) {
		add_group(st, s, size);
		if (3 * s / 2 > st->bs && 3 * s / 2 <= max_group)
			add_group(st, 3 * s / 2, size);
	}
	qsort(st->groups, st->ngroups, sizeof(st->groups[0]), cmp_group);
}

static double *sample_slot(struct align_state *st, struct align_group *g,
			   unsigned p, unsigned kind)
{
	return &g->samples[(p * KIND_COUNT + kind) * st->max_repeats];
}

/* Which side of the boundary the base read of repeat rep at position p
 * takes: alternating, and the other way round at odd positions, so that
 * every round reads both sides somewhere. */
static unsigned base_side(unsigned p, unsigned rep)
{
	return (p + rep) % 2 ? SIDE_POST : SIDE_PRE;
}

static uint64_t read_offset(uint64_t x, uint64_t bs, unsigned kind, unsigned side)
{
	if (kind == KIND_ON)
		return x - bs / 2;
	return side == SIDE_PRE ? x - bs : x;
}

static bool wants_repeat(const struct align_state *st,
			 const struct align_group *g, unsigned p)
{
	return g->focus && g->reps[p] < st->max_repeats &&
	       (!g->rep_cap || g->reps[p] < g->rep_cap);
}

static size_t reads_per_round(const struct align_state *st)
{
	size_t n = 0;

	for (size_t i = 0; i < st->ngroups; i++)
		for (unsigned p = 0; p < st->groups[i].npos; p++)
			n += wants_repeat(st, &st->groups[i], p) ? KIND_COUNT : 0;
	return n;
}

/* One read of every (group, position, kind) that still wants repeats, in
 * a shuffled order. */
static int measure_round(struct align_state *st)
{
	size_t total = 0, i = 0;
	uint32_t *order;
	int ret = 0;

	order = malloc(reads_per_round(st) * sizeof(*order) + 1);
	if (!order)
		return -ENOMEM;
	for (size_t gi = 0; gi < st->ngroups; gi++)
		for (unsigned p = 0; p < st->groups[gi].npos; p++)
			for (unsigned k = 0; k < KIND_COUNT && wants_repeat(st, &st->groups[gi], p); k++)
				order[total++] = (uint32_t)(gi << ALIGN_SLOT_BITS |
							    (p * KIND_COUNT + k));
	stats_shuffle(&st->rng, order, total);
	/* real-time priority for the reads only, not for the estimates
	 * between rounds */
	fp_dev_rt_enter(st->dev);
	for (i = 0; i < total && !ret; i++) {
		uint32_t slot = order[i] & ((1u << ALIGN_SLOT_BITS) - 1);
		struct align_group *g = &st->groups[order[i] >> ALIGN_SLOT_BITS];
		unsigned p = slot / KIND_COUNT;
		unsigned kind = slot % KIND_COUNT;
		uint64_t ns;

		ret = fp_dev_read_timed(st->dev, st->buf, st->bs,
					read_offset(g->pos[p], st->bs, kind,
						    base_side(p, g->reps[p])), &ns);
		if (!ret)
			sample_slot(st, g, p, kind)[g->reps[p]] = (double)ns;
	}
	fp_dev_rt_leave(st->dev);
	free(order);
	if (ret)
		return ret;
	for (size_t gi = 0; gi < st->ngroups; gi++)
		for (unsigned p = 0; p < st->groups[gi].npos; p++)
			if (wants_repeat(st, &st->groups[gi], p))
				st->groups[gi].reps[p]++;
	st->rounds++;
	return 0;
}

static double fast_mean(const double *v, unsigned n, enum align_estimator e)
{
	double sorted[ALIGN_REPEATS_CAP];
	unsigned keep = e == EST_FAST_TAIL ? (n + 7) / 8 : (n + 1) / 2;

	memcpy(sorted, v, n * sizeof(*v));
	stats_sort_inplace(sorted, n);
	return stats_mean(sorted, keep);
}

/* Positions need three repeats before their fast mean means anything. */
#define ALIGN_MIN_REPS_USED 3
/* Repeats stop paying off in a group once the noise of a position's own
 * repeats is below this share of the spread between positions: the
 * spread is then at least 3/4 per-location noise, and doubling the
 * repeats would shrink the group's error by under 7 %. */
#define ALIGN_SATURATED_SHARE 0.5
#define ALIGN_SATURATION_POSITIONS 12

/* One position's diff from half of its repeats: pairs 0-1, 4-5, ...
 * (half = 0) or 2-3, 6-7, ... (1), so that each half has base reads on
 * both sides of the boundary. */
static double half_diff(struct align_state *st, struct align_group *g,
			unsigned p, unsigned half, enum align_estimator e)
{
	double v[ALIGN_REPEATS_CAP / 2 + 2], est[KIND_COUNT];

	for (unsigned k = 0; k < KIND_COUNT; k++) {
		const double *all = sample_slot(st, g, p, k);
		unsigned n = 0;

		for (unsigned i = 0; i < g->reps[p]; i++)
			if ((i / 2) % 2 == half)
				v[n++] = all[i];
		est[k] = fast_mean(v, n, e);
	}
	return est[KIND_ON] - est[KIND_BASE];
}

/* The noise of one position's diff that comes from its repeats: half the
 * spread of (even-repeat diff - odd-repeat diff), each half being about
 * half as precise as all repeats together. */
static double within_noise(struct align_state *st, struct align_group *g,
			   enum align_estimator e)
{
	double hd[ALIGN_MAX_POSITIONS];
	unsigned n = 0;

	for (unsigned p = 0; p < g->npos; p++)
		if (g->reps[p] >= 2 * ALIGN_MIN_REPS_USED)
			hd[n++] = half_diff(st, g, p, 0, e) - half_diff(st, g, p, 1, e);
	/* two spreads from a handful of positions are too noisy to compare */
	return n >= ALIGN_SATURATION_POSITIONS ? stats_mad_sigma(hd, n) / 2 : INFINITY;
}

/* The fast mean of the base reads of position p on one side. */
static double side_mean(struct align_state *st, struct align_group *g,
			unsigned p, unsigned side, enum align_estimator e)
{
	const double *all = sample_slot(st, g, p, KIND_BASE);
	double v[ALIGN_REPEATS_CAP];
	unsigned n = 0;

	for (unsigned i = 0; i < g->reps[p]; i++)
		if (base_side(p, i) == side)
			v[n++] = all[i];
	return fast_mean(v, n, e);
}

static void estimate_group(struct align_state *st, struct align_group *g,
			   enum align_estimator e)
{
	g->nused = 0;
	for (unsigned p = 0; p < g->npos; p++) {
		unsigned u = g->nused;

		if (g->reps[p] < ALIGN_MIN_REPS_USED)
			continue;
		for (unsigned k = 0; k < KIND_COUNT; k++)
			g->est[u][k] = fast_mean(sample_slot(st, g, p, k),
						 g->reps[p], e);
		g->diff[u] = g->est[u][KIND_ON] - g->est[u][KIND_BASE];
		g->nused++;
	}
	g->d = stats_trimmed_mean(g->diff, g->nused, ALIGN_POSITION_TRIM);
	g->sigma = stats_trimmed_sigma(g->diff, g->nused, ALIGN_POSITION_TRIM) /
		   ALIGN_TRIMMED_SE_FACTOR;
	g->within = within_noise(st, g, e);
}

/* Per-group spreads from a few positions are themselves noisy; pooling
 * them (median over groups) keeps one lucky group from looking precise.
 * Groups are measured to different repeats, so the pool is of spreads
 * scaled to one repeat (as if the spread shrank as 1/sqrt(repeats), the
 * slowest it does) and scaled back to each group's repeats.  Returns the
 * typical spread relative to the read cost. */
static double estimate_with(struct align_state *st, enum align_estimator e)
{
	double sig[ALIGN_MAX_ROWS], unit[ALIGN_MAX_ROWS];
	double base[ALIGN_MAX_ROWS * ALIGN_MAX_POSITIONS];
	size_t nb = 0;

	for (size_t i = 0; i < st->ngroups; i++) {
		struct align_group *g = &st->groups[i];

		estimate_group(st, g, e);
		sig[i] = g->sigma;
		unit[i] = g->sigma * sqrt((double)g->reps[0]);
		for (unsigned p = 0; p < g->nused; p++)
			base[nb++] = g->est[p][KIND_BASE];
	}
	st->pooled_sigma = stats_median(unit, st->ngroups);
	st->base_ns = stats_median(base, nb);
	for (size_t i = 0; i < st->ngroups; i++) {
		struct align_group *g = &st->groups[i];
		double s = fmax(g->sigma, st->pooled_sigma / sqrt((double)g->reps[0]));

		/* n - 1 widens the error for the few positions of the
		 * largest sizes */
		g->se = ALIGN_TRIMMED_SE_FACTOR * s / sqrt((double)g->nused - 1.0);
	}
	return stats_median(sig, st->ngroups) / st->base_ns;
}

/* Use whichever estimator gives the smaller spread between positions,
 * relative to the read cost (the spread is measured, not assumed). */
static void estimate_all(struct align_state *st)
{
	enum align_estimator best = EST_FAST_HALF;
	double best_spread = INFINITY;

	for (int e = 0; e < EST_COUNT; e++) {
		double spread = estimate_with(st, (enum align_estimator)e);

		if (spread < best_spread) {
			best_spread = spread;
			best = (enum align_estimator)e;
		}
	}
	if (best != EST_COUNT - 1)
		estimate_with(st, best);
	st->estimator = best;
}

static const struct align_group *group_of(const struct align_state *st,
					  uint64_t size)
{
	for (size_t i = 0; i < st->ngroups; i++)
		if (st->groups[i].size == size)
			return &st->groups[i];
	return NULL;
}

static double pair_z(const struct align_group *hi, const struct align_group *lo)
{
	return (hi->d - lo->d) / (sqrt(hi->se * hi->se + lo->se * lo->se) + ALIGN_SE_EPS_NS);
}

/* How well size L stands out as a boundary level.
 *
 * Key test: the crossing cost at L itself against its largest proper
 * divisors, L/2 and L/3.  If the true unit were any proper divisor of L,
 * one of these two would be a multiple of it and cost as much as L; if it
 * were a multiple of L, L itself would be cheap.  Comparing three groups
 * keeps the test free of the pessimism of extremes over dozens of noisy
 * groups.
 *
 * Consistency test: every size that L divides against every size it does
 * not (worst pair), which catches patterns that do not nest; it only has
 * to be clearly positive. */
static bool evaluate_level(const struct align_state *st, uint64_t L,
			   struct align_level *out)
{
	const struct align_group *self = group_of(st, L);
	const struct align_group *half = group_of(st, L / 2);
	const struct align_group *third = L % 3 ? NULL : group_of(st, L / 3);
	const struct align_group *below = half, *lo = NULL, *hi = NULL;
	unsigned nm = 0;

	if (third && (!below || third->d > below->d))
		below = third;
	for (size_t i = 0; i < st->ngroups; i++) {
		const struct align_group *g = &st->groups[i];

		if (divides(L, g->size)) {
			nm++;
			if (!lo || g->d < lo->d)
				lo = g;
		} else if (!hi || g->d > hi->d) {
			hi = g;
		}
	}
	if (!self || nm < 2 || !hi || !below)
		return false;
	out->size = L;
	out->gap_ns = self->d - below->d;
	out->z = pair_z(self, below);
	out->gap_se_ns = sqrt(self->se * self->se + below->se * below->se);
	out->z_all = pair_z(lo, hi);
	out->rel = st->base_ns > 0 ? out->gap_ns / st->base_ns : 0;
	out->self = self;
	out->below = below;
	out->lo = lo;
	out->hi = hi;
	return true;
}

static bool is_level(const struct align_level *l)
{
	return l->z >= ALIGN_Z_LEVEL && l->z_all >= ALIGN_Z_CONSISTENT &&
	       l->rel >= ALIGN_MIN_REL_STEP;
}

/* More repeats could still turn it into a level: the margin is there but
 * not yet certain.  A margin that is certain but too small relative to the
 * read cost will not grow with repeats. */
static bool is_borderline(const struct align_level *l, double matters_ns)
{
	double upper = l->gap_ns + ALIGN_Z_HINT * l->gap_se_ns;

	/* a clear key test whose consistency test fails is worth measuring
	 * too: the worst pair is often a size with few positions */
	return l->z >= ALIGN_Z_HINT && (l->z_all >= 0 || l->z >= ALIGN_Z_LEVEL) &&
	       !is_level(l) && upper >= matters_ns;
}

/* Map the statistical evidence of a level to [0, 1]: 0.5 at the
 * threshold, about 0.8 at z = 8 and 0.93 at z = 12. */
static double z_confidence(const struct align_level *l)
{
	return fmax(0.0, ALIGN_CONF_FLOOR + ALIGN_CONF_SPAN *
			 (1.0 - exp(-(l->z - ALIGN_Z_LEVEL) / ALIGN_Z_CONF_SCALE)));
}

/* Small steps relative to the read cost are the first to be faked by host
 * effects (caches, bridges), so they get less trust however certain. */
static double level_confidence(const struct align_level *l)
{
	double rel_cap = ALIGN_CONF_FLOOR + ALIGN_CONF_SPAN *
			 fmin(1.0, l->rel / ALIGN_TRUSTED_REL_STEP);
	double all_cap = ALIGN_ALL_CONF_FLOOR + ALIGN_ALL_CONF_SPAN *
			 fmin(1.0, (l->z_all - ALIGN_Z_CONSISTENT) / ALIGN_ALL_CONF_SCALE);

	return fmin(z_confidence(l), fmin(rel_cap, all_cap));
}

/* The typical standard error of a row's diff, over the groups in only
 * (all of them when only is NULL). */
static double typical_se(const struct align_state *st, const bool *only)
{
	double se[ALIGN_MAX_ROWS];
	size_t n = 0;

	for (size_t i = 0; i < st->ngroups; i++)
		if (!only || only[i])
			se[n++] = st->groups[i].se;
	return n ? stats_median(se, n) : 0;
}

enum { REGION_PAGE, REGION_ERASE, REGION_FAR, ALIGN_REGIONS };


struct align_decision {
	uint64_t page, erase;
	double page_conf, erase_conf;
	bool uncertain;			/* a reported level could firm up */
	/* the smallest step a level test can see now, as a multiple of its
	 * target, in the page region (0), the erase region (1) and the
	 * sizes beyond the erase block's nearest multiples (2) */
	double detectable[ALIGN_REGIONS];
	double detectable_worst;		/* the largest of them */
	/* per candidate (group index): its z, and whether more repeats
	 * could still change what is reported about it */
	double z[ALIGN_MAX_ROWS];
	bool unresolved[ALIGN_MAX_ROWS];
	/* groups whose precision decides an unresolved candidate */
	bool focus[ALIGN_MAX_ROWS];
	uint64_t levels[16];
	double level_diff[16];
	enum align_level_role roles[16];
	size_t nlevels;
	bool borderline;
	double page_full_ns;		/* a step this high below the page would be the page */
	/* two levels could each be the page, each firmly between the
	 * sub-page and the full step: more reads would not settle it */
	bool page_ambiguous;
	bool page_borderline;		/* a borderline level up to ALIGN_PAGE_MAX */
	const char *note;
};

/* Report a level as the page or erase block when it is trusted enough;
 * either way, more repeats are wanted while its z could still grow. */
static bool adopt_level(struct align_decision *dc, const struct align_level *l,
			size_t idx, uint64_t *size, double *conf)
{
	double c = level_confidence(l);

	dc->unresolved[idx] |= l->z < ALIGN_Z_LEVEL + ALIGN_Z_SETTLED_MARGIN;
	dc->uncertain |= dc->unresolved[idx];
	if (c < ALIGN_REPORT_MIN)
		return false;
	*size = l->size;
	*conf = c;
	return true;
}

/* A step from lo to hi that is large enough to matter (against the read
 * cost, and below the page against the candidate's own step) but not
 * certain: evidence of a level the tests have not confirmed.  Relating it
 * to the candidate's step there keeps noise from raising it when that
 * step is clear. */
static bool step_suspected(const struct align_state *st,
			   const struct align_group *hi, const struct align_group *lo,
			   double candidate_step_ns, bool below)
{
	/* the bars below the page candidate and above the erase block */
	static const struct { double rel, share, z; } bar[2] = {
		{ ALIGN_MIN_SUSPECT_REL_ABOVE, 0, ALIGN_Z_SUSPECT_ABOVE },
		{ ALIGN_MIN_REL_STEP, ALIGN_SUSPECT_SHARE_BELOW, ALIGN_Z_SUSPECT_BELOW },
	};
	double gap = hi->d - lo->d;

	return gap >= bar[below].rel * st->base_ns &&
	       gap >= bar[below].share * candidate_step_ns &&
	       pair_z(hi, lo) >= bar[below].z;
}

/* What the page rule compares: the plateau the steps reach above the
 * largest level that can be a page, and the diff of the smallest size
 * (which crosses no boundary of interest). */
struct page_scale {
	double floor_ns;		/* diff of the smallest size */
	double plateau_ns;		/* step of the plateau above the floor */
	double plateau_se;
};

/* Whether size s is on the plateau above level Q: a multiple of Q below
 * the next level, and no larger than the page sizes or 4Q (the sizes
 * that are measured further when the plateau decides: far above the
 * page only a few positions are read, too noisy to count). */
static bool on_plateau(uint64_t s, uint64_t Q, uint64_t next)
{
	uint64_t top = 4 * Q > ALIGN_PAGE_MAX ? 4 * Q : ALIGN_PAGE_MAX;

	return s >= Q && s < next && s <= top && divides(Q, s);
}

/* The median diff of the groups marked in in, and its standard error; the
 * number of those groups. */
static size_t pooled_diff(const struct align_state *st, const bool *in, double *median,
			  double *se)
{
	double d[ALIGN_MAX_ROWS], e[ALIGN_MAX_ROWS];
	size_t n = 0;

	for (size_t i = 0; i < st->ngroups; i++) {
		if (in[i]) {
			d[n] = st->groups[i].d;
			e[n++] = st->groups[i].se;
		}
	}
	*median = stats_median(d, n);
	/* the median of n values is about as precise as one of them with
	 * n / ALIGN_MEDIAN_VAR_FACTOR times the samples */
	*se = stats_median(e, n) * sqrt(ALIGN_MEDIAN_VAR_FACTOR / (double)n);
	return n;
}

/* The plateau above level Q: the median diff of the sizes on it (see
 * on_plateau). */
static void page_scale_of(const struct align_state *st, uint64_t Q,
			  uint64_t next, struct page_scale *ps)
{
	bool in[ALIGN_MAX_ROWS];
	double median;

	for (size_t i = 0; i < st->ngroups; i++)
		in[i] = on_plateau(st->groups[i].size, Q, next);
	pooled_diff(st, in, &median, &ps->plateau_se);
	ps->floor_ns = st->groups[0].d;
	ps->plateau_ns = median - ps->floor_ns;
}

enum step_kind { STEP_SUBPAGE, STEP_FULL, STEP_AMBIGUOUS };

/* How the step of group g compares with the plateau; *margin is how many
 * standard errors it lies from the nearest threshold that decides. */
static enum step_kind classify_step(const struct align_state *st,
				    const struct align_group *g,
				    const struct page_scale *ps, double *margin)
{
	double step = g->d - ps->floor_ns, f_se = st->groups[0].se;
	double full = ALIGN_PLATEAU_SHARE * ps->plateau_ns;
	double trusted = ALIGN_TRUSTED_REL_STEP * st->base_ns;
	/* step - full = d - s P - (1 - s) f: the floor mostly cancels */
	double full_se = sqrt(g->se * g->se +
			      pow(ALIGN_PLATEAU_SHARE * ps->plateau_se, 2) +
			      pow((1 - ALIGN_PLATEAU_SHARE) * f_se, 2)) + ALIGN_SE_EPS_NS;
	double trusted_se = sqrt(g->se * g->se + f_se * f_se) + ALIGN_SE_EPS_NS;
	double m_full = (step - full) / full_se;
	double m_trusted = (step - trusted) / trusted_se;

	if (m_full >= 0) {
		*margin = m_full;
		return STEP_FULL;
	}
	if (m_trusted < 0) {
		*margin = fmin(-m_full, -m_trusted);
		return STEP_SUBPAGE;
	}
	*margin = fmin(-m_full, m_trusted);
	return STEP_AMBIGUOUS;
}

/* Map how far a choice lies from flipping to a confidence cap: 0.69 at
 * ALIGN_Z_CHOICE standard errors, 0.93 at 5. */
static double choice_confidence(double margin)
{
	return fmax(0.0, ALIGN_CONF_FLOOR + ALIGN_CONF_SPAN *
			 (1.0 - exp(-(margin - 1.0) / ALIGN_CHOICE_CONF_SCALE)));
}

/* The likeliest hidden level next to a candidate is one of its nearest
 * neighbours (pages read in pairs, AUs made of two erase blocks).  Below
 * the page candidate L, L/2 and L/3 should cost what the smallest size
 * does, or at most a sub-page step; above the erase-block candidate E, 2E
 * and 3E should cost what E does.  A suspected step there means the true
 * page may be smaller or the erase block larger: the candidate is not
 * reported, and those groups are measured more. */
static bool hidden_level(const struct align_state *st, struct align_decision *dc,
			 const struct align_level *l, bool below,
			 const struct page_scale *ps)
{
	uint64_t L = l->size;
	const struct align_group *ref = below ? &st->groups[0] : group_of(st, L);
	const struct align_group *near[2] = {
		group_of(st, below ? L / 2 : 2 * L),
		below && L % 3 ? NULL : group_of(st, below ? L / 3 : 3 * L),
	};
	bool suspected = false;
	double margin;

	for (size_t i = 0; i < 2 && ref; i++) {
		if (!near[i] || near[i] == ref ||
		    !step_suspected(st, near[i], ref, l->gap_ns, below))
			continue;
		if (below && ps != NULL &&
		    classify_step(st, near[i], ps, &margin) == STEP_SUBPAGE &&
		    margin >= ALIGN_Z_CHOICE)
			continue;	/* a sub-page step: it cannot be the page */
		dc->focus[near[i] - st->groups] = dc->focus[ref - st->groups] = true;
		suspected = true;
	}
	dc->uncertain |= suspected;
	return suspected;
}

/* Beyond 2E and 3E, a multiple of the erase-block candidate E that reads
 * clearly dearer than E (step_suspected's bar above the erase block) says
 * that E may be a mapping unit inside a larger AU whose own step the
 * noise still hides: a card whose 512 KiB mapping step is 90 % of its
 * 4 MiB AU's, under 20-30 % jitter, was read as a 512 KiB erase block at
 * 0.91-0.98, since the sizes past 3E are measured only until a 9 % step
 * could not hide.  Those sizes and E are measured until the step is a
 * level (the larger AU) or gone. */
static bool larger_multiple_suspected(const struct align_state *st,
				      struct align_decision *dc, uint64_t E)
{
	const struct align_group *ref = group_of(st, E);
	bool suspected = false;

	for (size_t i = 0; i < st->ngroups && ref; i++) {
		const struct align_group *g = &st->groups[i];

		if (g->size <= 3 * E || !divides(E, g->size) ||
		    !step_suspected(st, g, ref, 0, false))
			continue;
		dc->focus[i] = dc->focus[ref - st->groups] = true;
		suspected = true;
	}
	dc->uncertain |= suspected;
	return suspected;
}

/* The plateau's groups (see page_scale_of) decide whether the steps keep
 * growing above Q: measure them. */
static void focus_plateau(const struct align_state *st, struct align_decision *dc,
			  uint64_t Q, uint64_t next)
{
	for (size_t i = 0; i < st->ngroups; i++) {
		uint64_t s = st->groups[i].size;

		dc->focus[i] |= on_plateau(s, Q, next);
	}
}

/* The page among the levels up to ALIGN_PAGE_MAX (lv[0..npage)): the
 * smallest one whose step reaches the plateau, every smaller one being a
 * sub-page level.  Returns its index, or -1 with dc->note set when the
 * levels do not say which one it is. */
static int choose_page(const struct align_state *st, struct align_decision *dc,
		       const struct align_level *lv, size_t npage, size_t n,
		       const size_t *idx, struct page_scale *ps, double *cap)
{
	uint64_t next = npage < n ? lv[npage].size : UINT64_MAX;
	double margin, worst = INFINITY;

	page_scale_of(st, lv[npage - 1].size, next, ps);
	for (size_t i = 0; i < npage; i++) {
		enum step_kind k = classify_step(st, lv[i].self, ps, &margin);

		if (i + 1 == npage && (k != STEP_FULL || margin < ALIGN_Z_CHOICE)) {
			/* its multiples cost more than it does, or may: a
			 * larger step the level test has not confirmed */
			dc->note = "the steps keep growing above the largest "
				   "page-size level: the page may be larger";
			dc->unresolved[idx[i]] = dc->uncertain = true;
			/* the plateau, a median of many sizes, is measured
			 * only while its error counts against the step's */
			if (ALIGN_PLATEAU_SHARE * ps->plateau_se > lv[i].self->se / 2)
				focus_plateau(st, dc, lv[npage - 1].size, next);
			return -1;
		}
		if (k == STEP_AMBIGUOUS) {
			dc->note = "steps at two sizes below 64 KiB could each be "
				   "the page (see the levels)";
			/* a step firmly between the two thresholds stays
			 * ambiguous however often it is read */
			if (margin < ALIGN_Z_CHOICE)
				dc->unresolved[idx[i]] = dc->uncertain = true;
			else
				dc->page_ambiguous = true;
			return -1;
		}
		worst = fmin(worst, margin);
		/* Not worth more repeats: what limits the margin is the
		 * spread between positions, which they do not shrink. */
		if (k == STEP_FULL) {
			*cap = choice_confidence(worst);
			return (int)i;
		}
	}
	return -1;	/* not reached: the last one counts as full */
}

/* The role of every level once the page and erase block are known. */
static void assign_roles(struct align_decision *dc, const struct align_level *lv,
			 size_t n, int page, size_t npage)
{
	for (size_t i = 0; i < n; i++) {
		dc->levels[i] = lv[i].size;
		dc->level_diff[i] = lv[i].self->d;
		if (page >= 0 && (int)i < page)
			dc->roles[i] = ALIGN_LEVEL_SUBPAGE;
		else if (page >= 0 && (int)i == page)
			dc->roles[i] = ALIGN_LEVEL_PAGE;
		else if (dc->erase && lv[i].size == dc->erase)
			dc->roles[i] = ALIGN_LEVEL_ERASE;
		else if (i >= npage && (!dc->erase || lv[i].size < dc->erase))
			dc->roles[i] = ALIGN_LEVEL_SUBAU;
		else
			dc->roles[i] = ALIGN_LEVEL_UNKNOWN;
	}
	dc->nlevels = n;
}

/* The pooled diff (pooled_diff()) of the measured page sizes s
 * (P <= s <= ALIGN_PAGE_MAX) that P divides and Q divides (on_q) or does
 * not; the number of sizes, which g marks too. */
static size_t pool_of(const struct align_state *st, uint64_t P, uint64_t Q, bool on_q,
		      double *median, double *se, bool *g)
{
	bool in[ALIGN_MAX_ROWS];

	for (size_t i = 0; i < st->ngroups; i++) {
		uint64_t s = st->groups[i].size;

		in[i] = s >= P && s <= ALIGN_PAGE_MAX && divides(P, s) && divides(Q, s) == on_q;
		g[i] |= in[i];
	}
	return pooled_diff(st, in, median, se);
}

enum step_above { ABOVE_NONE, ABOVE_MAYBE, ABOVE_CLEAR };

/* Whether the page sizes that Q, twice or four times the page P (a group
 * of 2 or 4 planes), divides cost more than the other multiples of P,
 * pooled, by a step the level test has
 * not confirmed: raw pages inside a multi-plane group read so, every
 * raw-page boundary costing nearly what the group's does, and the group
 * is the page (an independent card model's 16 KiB page under 4 KiB raw
 * pages at 85 % of its step was read as 4 KiB at 0.71-0.88).  Clear: at
 * ALIGN_Z_SUSPECT_ABOVE standard errors, from ALIGN_MIN_SUSPECT_REL_ABOVE
 * of a read (the bar above the erase block).  Maybe: a gap of
 * ALIGN_MIN_REL_STEP or more, not yet that certain but more than
 * ALIGN_Z_CONSISTENT; those sizes are measured further while a gap that
 * large lies within a standard error. */
static enum step_above larger_step_above(const struct align_state *st,
					 struct align_decision *dc, uint64_t P)
{
	enum step_above worst = ABOVE_NONE;

	for (uint64_t Q = 2 * P; Q <= 4 * P && Q <= ALIGN_PAGE_MAX; Q *= 2) {
		bool g[ALIGN_MAX_ROWS] = { false };
		double ma, sa, mb, sb, gap, se, z;

		if (!group_of(st, Q) || !pool_of(st, P, Q, false, &ma, &sa, g) ||
		    !pool_of(st, P, Q, true, &mb, &sb, g))
			continue;
		gap = mb - ma;
		se = sqrt(sa * sa + sb * sb) + ALIGN_SE_EPS_NS;
		z = gap / se;
		if (gap >= ALIGN_MIN_SUSPECT_REL_ABOVE * st->base_ns &&
		    z >= ALIGN_Z_SUSPECT_ABOVE)
			return ABOVE_CLEAR;
		if (gap + ALIGN_Z_CONSISTENT * se < ALIGN_MIN_REL_STEP * st->base_ns)
			continue;
		for (size_t i = 0; i < st->ngroups; i++)
			dc->focus[i] |= g[i];
		dc->uncertain = true;
		if (gap >= ALIGN_MIN_REL_STEP * st->base_ns && z >= ALIGN_Z_CONSISTENT)
			worst = ABOVE_MAYBE;
	}
	return worst;
}

static void report_page(const struct align_state *st, struct align_decision *dc,
			const struct align_level *lv, const size_t *idx, size_t n,
			size_t npage, int *page)
{
	struct page_scale ps;
	enum step_above above;
	double cap = 1.0;

	*page = -1;
	if (npage == 0) {
		dc->note = "no page-size step: the page effect is hidden or absent";
		return;
	}
	*page = choose_page(st, dc, lv, npage, n, idx, &ps, &cap);
	if (*page < 0)
		return;
	if (hidden_level(st, dc, &lv[*page], true, &ps)) {
		dc->note = "a smaller step is not yet certain: the page may be smaller";
	} else if ((above = larger_step_above(st, dc, lv[*page].size)) == ABOVE_CLEAR) {
		dc->note = "steps at two sizes below 64 KiB could each be the page: "
			   "the multiples of the smaller cost more (see the diffs)";
		dc->page_ambiguous = true;	/* more reads would not settle it */
	} else if (above == ABOVE_MAYBE) {
		dc->note = "the multiples of the page may cost more: the page may "
			   "be larger";
	} else if (!adopt_level(dc, &lv[*page], idx[*page], &dc->page, &dc->page_conf))
		dc->note = "the page step is too weak to report";
	else if (cap < ALIGN_REPORT_MIN) {
		dc->page = 0;
		dc->page_conf = 0;
		dc->note = "a sub-page step is close to a page step: more reads "
			   "(--count) would settle which is the page";
	} else {
		dc->page_conf = fmin(dc->page_conf, cap);
		dc->page_full_ns = ALIGN_PLATEAU_SHARE * ps.plateau_ns;
	}
	if (!dc->page)
		*page = -1;
}

/* A top level of 128-256 KiB with no page under it, or one only a few
 * times smaller: a card whose page is that large (4 planes of 32 KiB)
 * and whose erase block adds nothing to it reads the same (an
 * independent card model's 128 KiB page over a 4 MiB AU was read as a
 * 128 KiB erase block at 0.99).  An old card's 128 KiB erase block over a
 * 2 KiB page keeps its answer. */
static bool page_or_erase(const struct align_decision *dc)
{
	return dc->erase && dc->erase <= ALIGN_PAGE_OR_ERASE_MAX &&
	       (!dc->page || dc->erase / dc->page < ALIGN_SMALL_ERASE_PAGES);
}

static void report_levels(const struct align_state *st, struct align_decision *dc,
			  const struct align_level *lv, const size_t *idx,
			  size_t n)
{
	size_t npage = 0;
	int page = -1;

	if (n == 0) {
		dc->note = "no boundary effect stands out of the noise";
		return;
	}
	while (npage < n && lv[npage].size <= ALIGN_PAGE_MAX)
		npage++;
	report_page(st, dc, lv, idx, n, npage, &page);
	if (lv[n - 1].size < ALIGN_ERASE_MIN)
		dc->note = "every boundary above the page costs the same: no erase-block step";
	else if (hidden_level(st, dc, &lv[n - 1], false, NULL) ||
		 larger_multiple_suspected(st, dc, lv[n - 1].size))
		dc->note = "a larger step is not yet certain: the erase block may be larger";
	else if (!adopt_level(dc, &lv[n - 1], idx[n - 1], &dc->erase, &dc->erase_conf))
		dc->note = "the erase-block step is too weak to report";
	else if (page_or_erase(dc)) {
		dc->erase = 0;
		dc->erase_conf = 0;
		dc->note = "the top step is small enough for a multi-plane page: a small "
			   "erase block, or a large page over an erase block whose own step "
			   "does not show (reads cannot tell; the write test can)";
	}
	assign_roles(dc, lv, n, page, npage);
}

static void mark_focus(const struct align_state *st, struct align_decision *dc,
		       const struct align_level *l)
{
	const struct align_group *g[] = { l->self, l->below, l->lo, l->hi };

	for (size_t i = 0; i < 4; i++)
		dc->focus[g[i] - st->groups] = true;
}

/* The smallest step at L that would change what is reported (INFINITY:
 * none would), given the decision so far and the erase-block candidate E
 * (0 = none).  A step whose upper bound stays below it is not worth more
 * reads, however close to a level it is.  Below a reported page a level
 * changes nothing while it stays a sub-page step (below the page's full
 * step and below ALIGN_TRUSTED_REL_STEP); between the page sizes and E it
 * is only a sub-AU step; elsewhere any level (ALIGN_MIN_REL_STEP) counts. */
static double step_that_matters(const struct align_state *st,
				const struct align_decision *dc, uint64_t L, uint64_t E)
{
	double any = ALIGN_MIN_REL_STEP * st->base_ns;

	if (L > ALIGN_PAGE_MAX && E && L < E)
		return INFINITY;
	if (dc->page && L < dc->page)
		return fmax(any, fmin(dc->page_full_ns, ALIGN_TRUSTED_REL_STEP * st->base_ns));
	return any;
}

/* Which region a size belongs to, given the reported page and the
 * erase-block candidate E (0 = none), or -1 for none: the page sizes up
 * to twice the page; the erase block, its multiples up to 3E and the
 * sizes between them (all sizes from ALIGN_ERASE_MIN while there is no
 * erase block); beyond 3E.  Between the page sizes and E a step would
 * only be a sub-AU step, which changes nothing reported. */
static int region_of(const struct align_decision *dc, uint64_t s, uint64_t E)
{
	if (s <= (dc->page ? 2 * dc->page : ALIGN_PAGE_MAX))
		return REGION_PAGE;
	if (E ? s >= E && s <= 3 * E : s >= ALIGN_ERASE_MIN)
		return REGION_ERASE;
	return E && s > 3 * E ? REGION_FAR : -1;
}

/* What a size's step stands on: the costlier of its largest divisors,
 * s/2 and s/3, as in the level test (a step over both is what would make
 * s a level), or the smallest size when neither is tested. */
static const struct align_group *step_base(const struct align_state *st, uint64_t s)
{
	const struct align_group *half = group_of(st, s / 2);
	const struct align_group *third = s % 3 ? NULL : group_of(st, s / 3);

	if (third && (!half || third->d > half->d))
		return third;
	return half ? half : &st->groups[0];
}

/* The smallest step of size s over its base that would change what is
 * reported, as a fraction of the read cost.  With a page P reported: a
 * step at a size P does not divide that reaches the page's full step or
 * ALIGN_TRUSTED_REL_STEP would make that size the page or the choice
 * ambiguous; a step above P at its multiples would have to lift the
 * plateau enough that P no longer reaches ALIGN_PLATEAU_SHARE of it.
 * Without a page, any level (ALIGN_MIN_REL_STEP) would be reported as one;
 * around and above the erase block, the region's target, and at 2E and 3E
 * (E the erase-block candidate, 0 = none) ALIGN_TARGET_REL_NEXT_AU. */
static double rel_step_that_matters(const struct align_state *st,
				    const struct align_decision *dc, uint64_t s,
				    uint64_t E, int region)
{
	double plateau = dc->page_full_ns / ALIGN_PLATEAU_SHARE / st->base_ns;

	if (region == REGION_ERASE && E && (s == 2 * E || s == 3 * E))
		return ALIGN_TARGET_REL_NEXT_AU;
	if (region == REGION_FAR && E && divides(E, s))
		return ALIGN_TARGET_REL_FAR_MULTIPLE;
	if (region != REGION_PAGE)
		return region == REGION_ERASE ? ALIGN_TARGET_REL_ERASE : ALIGN_TARGET_REL_FAR;
	if (dc->page_ambiguous)
		return INFINITY;
	if (!dc->page)
		return ALIGN_MIN_REL_STEP;
	if (divides(dc->page, s))
		return fmax(ALIGN_MIN_REL_STEP, (1 / ALIGN_PLATEAU_SHARE - 1) * plateau);
	return fmin(ALIGN_PLATEAU_SHARE * plateau, ALIGN_TRUSTED_REL_STEP);
}

/* An open size is measured with its largest divisors, against which the
 * level test would judge it (or with the smallest size, its base when
 * neither is tested). */
static void focus_step(const struct align_state *st, struct align_decision *dc,
		       const struct align_group *g)
{
	const struct align_group *half = group_of(st, g->size / 2);
	const struct align_group *third = g->size % 3 ? NULL : group_of(st, g->size / 3);

	dc->focus[g - st->groups] = true;
	if (half)
		dc->focus[half - st->groups] = true;
	if (third)
		dc->focus[third - st->groups] = true;
	if (!half && !third)
		dc->focus[0] = true;
}

static bool is_level_group(const struct align_level *lv, size_t n,
			   const struct align_group *g)
{
	for (size_t j = 0; j < n; j++)
		if (lv[j].self == g)
			return true;
	return false;
}

/* While no level up to ALIGN_PAGE_MAX has shown, or come close to
 * showing, after ALIGN_NOTHING_FB_SHARE times flashbench -a's reads, the
 * page sizes are not read further in search of a faint page step: one
 * still hidden by then is one an expert's table would not show either,
 * and would be trusted little (the run-wide rule of nothing_stands_out,
 * for the page alone).  A size that clearly steps keeps the search on. */
static bool page_search_done(const struct align_state *st,
			     const struct align_decision *dc,
			     const struct align_level *lv, size_t n)
{
	if (!st->page_search_over || dc->page_borderline)
		return false;
	return n == 0 || lv[0].size > ALIGN_PAGE_MAX;
}

/* Sequential, per size: a size that is not a level stays open while the
 * upper bound of its step over its base could still reach the step that
 * matters there (then it and its divisors are measured more); a level's
 * own precision is the level tests' business (unresolved, focus).
 * detectable[r] is the largest such bound over its target in region r:
 * below 1, nothing hidden there could change the verdict.  A step clearly
 * above any level's minimum that no level explains keeps the run
 * uncertain, and the smallest such size in each region (the level is
 * there or below) is measured until the level tests settle it. */
static void mark_open_sizes(const struct align_state *st, struct align_decision *dc,
			    const struct align_level *lv, size_t n, uint64_t E)
{
	const struct align_group *unexplained[ALIGN_REGIONS] = { NULL };
	bool page_done = page_search_done(st, dc, lv, n);

	for (size_t i = 1; i < st->ngroups && st->base_ns > 0; i++) {
		const struct align_group *g = &st->groups[i], *b;
		int r = region_of(dc, g->size, E);
		double step, margin, matters, ratio;

		if (r < 0 || is_level_group(lv, n, g))
			continue;
		b = step_base(st, g->size);
		step = g->d - b->d;
		margin = ALIGN_Z_HINT * sqrt(g->se * g->se + b->se * b->se);
		matters = rel_step_that_matters(st, dc, g->size, E, r) * st->target_scale;
		if ((step - margin) / st->base_ns > fmin(matters, ALIGN_MIN_REL_STEP)) {
			if (!unexplained[r])
				unexplained[r] = g;
			continue;
		}
		if (r == REGION_PAGE && page_done)
			continue;
		ratio = (step + margin) / st->base_ns / matters;
		dc->detectable[r] = fmax(dc->detectable[r], ratio);
		if (ratio > 1)
			focus_step(st, dc, g);
	}
	if (page_done && !unexplained[REGION_PAGE])
		dc->note = "no page-size step in twice flashbench -a's reads: "
			   "the page effect is hidden or absent";
	for (int r = 0; r < ALIGN_REGIONS; r++) {
		dc->detectable_worst = fmax(dc->detectable_worst, dc->detectable[r]);
		if (unexplained[r]) {
			focus_step(st, dc, unexplained[r]);
			dc->uncertain = true;
		}
	}
}

static void decide(const struct align_state *st, struct align_decision *dc)
{
	struct align_level lv[ALIGN_MAX_ROWS], all[ALIGN_MAX_ROWS];
	bool valid[ALIGN_MAX_ROWS] = { false };
	size_t idx[ALIGN_MAX_ROWS];
	size_t n = 0;
	uint64_t E;

	memset(dc, 0, sizeof(*dc));
	for (size_t i = 1; i < st->ngroups; i++) {
		struct align_level *l = &all[i];

		if (!evaluate_level(st, st->groups[i].size, l))
			continue;
		valid[i] = true;
		dc->z[i] = l->z;
		if (is_level(l) && n < 16) {
			idx[n] = i;
			lv[n++] = *l;
		}
	}
	report_levels(st, dc, lv, idx, n);
	E = n && lv[n - 1].size >= ALIGN_ERASE_MIN ? lv[n - 1].size : 0;
	for (size_t i = 1; i < st->ngroups; i++) {
		if (!valid[i] ||
		    !is_borderline(&all[i], step_that_matters(st, dc, all[i].size, E)))
			continue;
		dc->borderline = dc->unresolved[i] = true;
		dc->page_borderline |= all[i].size <= ALIGN_PAGE_MAX;
	}
	mark_open_sizes(st, dc, lv, n, E);
	for (size_t i = 1; i < st->ngroups; i++)
		if (dc->unresolved[i])
			mark_focus(st, dc, &all[i]);
}


static bool same_decision(const struct align_decision *a,
			  const struct align_decision *b)
{
	return a->page == b->page && a->erase == b->erase;
}

/* The median over a group's used positions of the fast mean of its base
 * reads on one side: the table's pre and post columns, made once at the
 * end (the estimates between rounds use both sides together). */
static int64_t side_column(struct align_state *st, struct align_group *g,
			   unsigned side)
{
	double v[ALIGN_MAX_POSITIONS];
	unsigned n = 0;

	for (unsigned p = 0; p < g->npos; p++)
		if (g->reps[p] >= ALIGN_MIN_REPS_USED)
			v[n++] = side_mean(st, g, p, side, st->estimator);
	return llround(stats_median(v, n));
}

static void fill_rows(struct align_state *st, struct align_result *r)
{
	r->nrows = st->ngroups;
	for (size_t i = 0; i < st->ngroups; i++) {
		struct align_group *g = &st->groups[i];
		struct align_row *row = &r->rows[i];
		double v[ALIGN_MAX_POSITIONS];

		row->align_bytes = g->size;
		for (unsigned p = 0; p < g->nused; p++)
			v[p] = g->est[p][KIND_ON];
		row->on_ns = llround(stats_median(v, g->nused));
		row->pre_ns = side_column(st, g, SIDE_PRE);
		row->post_ns = side_column(st, g, SIDE_POST);
		row->diff_ns = llround(g->d);
		row->diff_se_ns = g->se;
		row->positions = g->nused;
		row->repeats = g->reps[0];
	}
}

const char *align_level_role_name(enum align_level_role role)
{
	switch (role) {
	case ALIGN_LEVEL_SUBPAGE: return "sub-page";
	case ALIGN_LEVEL_PAGE: return "page";
	case ALIGN_LEVEL_SUBAU: return "sub-AU";
	case ALIGN_LEVEL_ERASE: return "erase block";
	default: return "unclassified";
	}
}

void align_opts_default(struct align_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_repeats = ALIGN_DEFAULT_MAX_REPEATS;
	o->min_repeats = ALIGN_DEFAULT_MIN_REPEATS;
	o->seed = 1;
}

static uint64_t default_blocksize(const struct fp_dev *d)
{
	uint64_t bs = 2ULL * fp_dev_sector_bytes(d);

	return bs < 1024 ? 1024 : bs;
}

static int setup(struct align_state *st, struct fp_dev *d,
		 const struct align_opts *o)
{
	uint64_t max_group = o->max_boundary_bytes ? o->max_boundary_bytes
						   : ALIGN_MAX_GROUP;

	memset(st, 0, sizeof(*st));
	st->dev = d;
	st->bs = o->blocksize_bytes ? o->blocksize_bytes : default_blocksize(d);
	if (st->bs % (2ULL * fp_dev_sector_bytes(d)) ||
	    fp_dev_size_bytes(d) < 64 * st->bs)
		return -EINVAL;
	st->min_repeats = o->min_repeats ? o->min_repeats
					 : ALIGN_DEFAULT_MIN_REPEATS;
	if (st->min_repeats < 3)
		st->min_repeats = 3;
	st->max_repeats = o->max_repeats ? o->max_repeats
					 : ALIGN_DEFAULT_MAX_REPEATS;
	if (st->max_repeats > ALIGN_REPEATS_CAP)
		st->max_repeats = ALIGN_REPEATS_CAP;
	if (st->max_repeats < 3)
		st->max_repeats = 3;	/* a spread needs three samples */
	if (st->min_repeats > st->max_repeats)
		st->min_repeats = st->max_repeats;
	st->target_scale = o->quick ? ALIGN_QUICK_TARGET_SCALE : 1.0;
	/* --quick keeps the start positions, so that its rounds fit its budget */
	st->full_positions = o->quick ? ALIGN_START_POSITIONS : ALIGN_POSITIONS;
	stats_rng_seed(&st->rng, o->seed);
	plan_groups(st, max_group);
	if (st->ngroups < 3)
		return -EINVAL;
	for (size_t i = 0; i < st->ngroups; i++) {
		struct align_group *g = &st->groups[i];

		g->samples = calloc((size_t)ALIGN_MAX_POSITIONS * KIND_COUNT * st->max_repeats,
				    sizeof(double));
		if (!g->samples)
			return -ENOMEM;
	}
	st->buf = fp_dev_alloc_buf(st->bs);
	return st->buf ? 0 : -ENOMEM;
}

static void teardown(struct align_state *st)
{
	for (size_t i = 0; i < st->ngroups; i++)
		free(st->groups[i].samples);
	free(st->buf);
}

/* Whether doubling the repeats made the unresolved candidates firmer.
 * Pure sampling noise shrinks as 1/sqrt(repeats), so z grows by about
 * 1.4; when per-location noise dominates, z stays where it is and more
 * repeats only cost time. */
static bool still_improving(const struct align_state *st,
			    const struct align_decision *now,
			    const struct align_decision *before)
{
	const double *z_before = before->z;
	double ratio[ALIGN_MAX_ROWS];
	size_t n = 0;

	if (now->detectable_worst > 1 &&
	    now->detectable_worst > before->detectable_worst / ALIGN_PROGRESS_RATIO)
		return false;

	for (size_t i = 1; i < st->ngroups; i++)
		if (now->unresolved[i] && z_before[i] > ALIGN_Z_HINT / 2)
			ratio[n++] = now->z[i] / z_before[i];
	return n == 0 || stats_median(ratio, n) >= ALIGN_PROGRESS_RATIO;
}

/* Bring group g up to want positions.  New positions interleave with the
 * old ones, still coprime-to-30 multiples. */
static size_t add_positions(struct align_state *st, struct align_group *g,
			    unsigned want)
{
	uint64_t more[ALIGN_MAX_POSITIONS];
	unsigned n = pick_positions(g->size, st->bs, fp_dev_size_bytes(st->dev),
				    want, more);
	size_t added = 0;

	for (unsigned j = 0; j < n && g->npos < want; j++) {
		bool known = false;

		for (unsigned q = 0; q < g->npos; q++)
			known |= g->pos[q] == more[j];
		if (!known) {
			g->reps[g->npos] = 0;
			g->pos[g->npos++] = more[j];
			added++;
		}
	}
	return added;
}

/* More positions against location noise, up to ALIGN_MAX_POSITIONS. */
static size_t extend_group(struct align_state *st, struct align_group *g)
{
	g->extended = st->extended = true;
	return add_positions(st, g, ALIGN_MAX_POSITIONS);
}

/* Spend the next round where it decides something: on the groups of
 * unresolved candidates; on the groups where a hidden step would change
 * the verdict while the noise could still hide one there, or while the
 * verdict is younger than half the rounds (a verdict reached by a lucky
 * round must survive as many again); on every group before the minimum
 * number of rounds. */
static void focus_groups(struct align_state *st, const struct align_decision *dc)
{
	bool everywhere = st->rounds < st->min_repeats;

	for (size_t i = 0; i < st->ngroups; i++) {
		st->groups[i].focus = everywhere || dc->focus[i];
		/* a size that still matters after the first rounds gets
		 * its full positions */
		if (st->groups[i].focus && !everywhere &&
		    st->groups[i].npos < st->full_positions)
			add_positions(st, &st->groups[i], st->full_positions);
	}
}

/* Add positions to every group, when the budget left can give the new
 * ones a useful number of repeats. */
static bool extend_positions(struct align_state *st, uint64_t reads_left)
{
	size_t added = 0;

	for (size_t i = 0; i < st->ngroups; i++)
		added += extend_group(st, &st->groups[i]);
	return added > 0 && reads_left > 4 * reads_per_round(st);
}

/* A focused group whose spread is per-location noise gets no more repeats
 * at its old positions; once, it gets more positions instead, which
 * catch up to the same repeats.  After that it is as precise as this
 * procedure can make it, and it stops. */
static void stop_saturated_repeats(struct align_state *st)
{
	for (size_t i = 0; i < st->ngroups; i++) {
		struct align_group *g = &st->groups[i];

		if (!g->focus || g->rep_cap ||
		    !(g->within < ALIGN_SATURATED_SHARE * g->sigma))
			continue;
		g->rep_cap = g->reps[0];
		if (!g->extended)
			extend_group(st, g);
	}
}

/* Stop when the answer has not changed over the last half of the rounds,
 * nothing is borderline and every reported size is certain enough, or
 * when the budget is spent. */
static bool settled(const struct align_state *st,
		    const struct align_decision *now, unsigned stable_rounds)
{
	if (st->rounds < st->min_repeats || now->borderline || now->uncertain ||
	    now->detectable_worst > 1)
		return false;
	return stable_rounds >= st->min_repeats;
}

/* No size is a level, none is close to becoming one, and that has held
 * for the last min_repeats rounds. */
static bool nothing_stands_out(const struct align_state *st,
			       const struct align_decision *dc, unsigned stable)
{
	return dc->nlevels == 0 && !dc->borderline && !dc->uncertain &&
	       stable >= st->min_repeats;
}

/* A run the budget stopped keeps a size only where no step that would
 * change it can still hide: an erase block whose multiples were not
 * measured far enough could be half of a larger one. */
static void drop_unchecked(const struct align_decision *dc, struct align_result *r)
{
	static const char why[] = "the read budget ended the run before the "
				  "sizes around it were measured";

	if (r->page_size_bytes && dc->detectable[REGION_PAGE] > 1) {
		r->page_size_bytes = 0;
		r->page_confidence = 0;
		snprintf(r->note, sizeof(r->note), "page: %s", why);
	}
	if (r->erase_size_bytes && dc->detectable[REGION_ERASE] > 1) {
		r->erase_size_bytes = 0;
		r->erase_confidence = 0;
		snprintf(r->note, sizeof(r->note), "erase block: %s", why);
	}
}

/* What the run gave up, in the result: the confidence caps of --quick
 * and of a stop by the budget (the report says which). */
static void mark_limits(const struct align_opts *o, bool budget_stopped,
			struct align_result *r)
{
	double cap = 1.0;

	r->quick = o->quick;
	r->budget_stopped = budget_stopped;
	if (o->quick)
		cap = ALIGN_QUICK_CONF_CAP;
	if (budget_stopped)
		cap = fmin(cap, ALIGN_BUDGET_CONF_CAP);
	r->page_confidence = fmin(r->page_confidence, cap);
	r->erase_confidence = fmin(r->erase_confidence, cap);
}

/* What flashbench -a's default procedure reads on a device of size bytes
 * with block size bs: 7 positions x 3 reads (pre, on, post) x 8 tries
 * for every power of two from the smallest one at or above size / 7 down
 * to 2 bs.  Align's budget is measured against it. */
uint64_t align_flashbench_reads(uint64_t size, uint64_t bs)
{
	uint64_t top = 2 * bs, n = 0;

	while (top < size / 7)
		top *= 2;
	for (uint64_t s = top; s >= 2 * bs; s /= 2)
		n++;
	return 7 * 3 * 8 * n;
}

int align_run(struct fp_dev *d, const struct align_opts *o,
	      struct align_result *r)
{
	struct align_opts def;
	struct align_state *st;
	struct align_decision dc = { 0 }, prev = { 0 };
	uint64_t io0 = fp_dev_io_count(d), ns0 = fp_dev_io_ns(d);
	unsigned stable = 0, checkpoint;
	struct align_decision at_checkpoint;
	unsigned flat_checkpoints = 0;
	bool have_checkpoint = false, budget_stopped = false;
	uint64_t max_reads, nothing_reads;
	int ret;

	if (!o) {
		align_opts_default(&def);
		o = &def;
	}
	memset(r, 0, sizeof(*r));
	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	ret = setup(st, d, o);
	if (ret)
		goto out;
	max_reads = o->max_reads ? o->max_reads :
		    o->quick ? ALIGN_QUICK_MAX_READS : ALIGN_DEFAULT_MAX_READS;
	nothing_reads = ALIGN_NOTHING_FB_SHARE *
			align_flashbench_reads(fp_dev_size_bytes(d), st->bs);
	checkpoint = st->min_repeats * 2;
	for (;;) {
		size_t next = reads_per_round(st);

		if (next == 0)
			break;
		if (st->rounds >= st->min_repeats &&
		    fp_dev_io_count(d) - io0 + next >
		    (nothing_stands_out(st, &dc, stable) ? fmin(max_reads, nothing_reads) : max_reads)) {
			budget_stopped = true;
			break;
		}
		ret = measure_round(st);
		if (ret)
			goto out;
		st->page_search_over = fp_dev_io_count(d) - io0 >= nothing_reads;
		if (o->progress)
			o->progress(o->progress_arg, fp_dev_io_count(d) - io0, max_reads);
		if (st->rounds < ALIGN_MIN_REPS_USED)
			continue;
		estimate_all(st);
		decide(st, &dc);
		/* the first decision is as old as the data it rests on */
		stable = st->rounds == ALIGN_MIN_REPS_USED ? st->rounds :
			 same_decision(&dc, &prev) ? stable + 1 : 0;
		focus_groups(st, &dc);
		stop_saturated_repeats(st);
		prev = dc;
		if (st->rounds == checkpoint) {
			if (have_checkpoint)
				flat_checkpoints = still_improving(st, &dc, &at_checkpoint)
						   ? 0 : flat_checkpoints + 1;
			at_checkpoint = dc;
			have_checkpoint = true;
			checkpoint *= 2;
		}
		if (settled(st, &dc, stable))
			break;
		/* Twice without progress (z is noisy, one flat step is chance):
		 * per-location noise dominates, and only more positions help. */
		if (flat_checkpoints >= 2) {
			if (st->extended || !extend_positions(st, max_reads - (fp_dev_io_count(d) - io0)))
				break;
			flat_checkpoints = 0;
			have_checkpoint = false;
			checkpoint = st->rounds + 2 * st->min_repeats;
		}
	}
	r->blocksize_bytes = st->bs;
	r->page_size_bytes = dc.page;
	r->page_confidence = dc.page_conf;
	r->erase_size_bytes = dc.erase;
	r->erase_confidence = dc.erase_conf;
	r->nlevels = dc.nlevels;
	memcpy(r->levels, dc.levels, sizeof(r->levels));
	for (size_t i = 0; i < dc.nlevels; i++) {
		r->level_diff_ns[i] = llround(dc.level_diff[i]);
		r->level_roles[i] = dc.roles[i];
	}
	r->pattern_found = dc.nlevels > 0;
	r->base_read_ns = llround(st->base_ns);
	r->noise_ns = typical_se(st, NULL);	/* per row, whatever positions it had */
	r->positions_extended = st->extended;
	if (dc.note)
		snprintf(r->note, sizeof(r->note), "%s", dc.note);
	if (budget_stopped)
		drop_unchecked(&dc, r);
	mark_limits(o, budget_stopped, r);
	fill_rows(st, r);
out:
	r->io_count = fp_dev_io_count(d) - io0;
	r->elapsed_ns = fp_dev_io_ns(d) - ns0;
	teardown(st);
	free(st);
	return ret;
}
