/* openau.c - count the AUs a card keeps open, in linear and random order.
 *
 * What the card is assumed to do (flash-model.md section 4; flashbench
 * README; LWN 428584): the controller keeps a small pool of "open" AUs,
 * each being rewritten into a fresh erase block.  Writing to an AU outside
 * the pool closes the least recently used open AU, which copies the pages
 * the host did not rewrite (garbage collection, about one AU copy).  Inside
 * an open AU a linear-only card accepts writes at increasing offsets only;
 * a random-capable card accepts a limited number of AUs in any order, for
 * a small extra cost per write.  So writing N AUs alternately costs nothing
 * extra while N fits the pool, and about one AU copy per write once it
 * does not ("collapse").
 *
 * What is measured: a trial writes chunks of size c, then 4c, to N AUs in
 * rounds, one chunk per AU per round, visiting the AUs in a fixed shuffled
 * order.  Linear order continues each AU at increasing offsets; random
 * order writes random slots of the AU, each at or below the previous one,
 * so every write needs random mode.  The first round only brings the AUs
 * into the pool and is not used.  A reference trial (one AU, linear) gives
 * the chunk write time without collection, the card's jitter, and, from
 * the c and 4c writes, T_AU, the time of writing a whole AU.  c starts at
 * E/64 (at least a page on real geometry) and doubles until writes grow
 * with their size.
 *
 * How it is decided: per AU, the mean of its chunk writes without the
 * largest one (a stall does not count, a share of collapsed writes does);
 * the slowest AU against the reference decides, because a card out of
 * random-mode quota collapses on the one AU that did not get it while the
 * others stay fast.  Open: the slowest AU is within what jitter explains
 * (noise estimated from the samples, including the drift of a maximum over
 * N AUs).  Collapsed: its extra time per write is at least 0.12 T_AU
 * (cards in flash-model.md collapse at 0.4-2.2 T_AU; random mode costs
 * 0.01-0.03 T_AU) and hardly grows from c to 4c, as garbage collection
 * does.  A collapse also needs the median of that AU's writes above the
 * open limit: a few very long stalls (a worn card's garbage collection)
 * raise its mean but are no collection on every write.  Anything else,
 * or a trial too noisy to see a collapse, is unclear.  Only ratios enter,
 * so a card 10x faster or slower gives the same answer.  N is searched
 * upwards 1, 2, 4, ... to the limit, bisected, and the edge (N open, N+1
 * collapsed) re-tested, N+1 only when its collapse is not already shown
 * twice (collapse_shown_twice); disagreement lowers the
 * confidence, an unclear trial (after one re-test) leaves the count
 * undetermined.  Random order is first tested with one AU against the
 * linear reference: a collapse there means linear only (random = 0),
 * trusted only when a linear collapse was measured to compare it with,
 * and only when the cost of ending a cycle of one AU follows what the
 * cycle left to copy: random mode can cost as much per write as a cheap
 * collapse, but the same however much of the AU was written
 * (check_random_zero()).
 *
 * Random mode against a collapse: the one-AU random trial is compared with
 * the linear reference, and random mode's own cost per write must stay
 * well below a collapse: below X_RAND_OPEN T_AU, or, once a linear
 * collapse was measured on the card, below X_RAND_OF_COL of it (on 128 KiB
 * AUs of 64 pages, random mode's bookkeeping alone can cost 15 % of T_AU
 * while a collapse costs more than T_AU).
 *
 * Drift: the one-AU linear reference is measured again at the end (from a
 * clean cycle, its bytes reserved from the budget); a worn card that gets
 * slower the more it is written would otherwise make late trials look
 * collapsed (random = 0, low counts), so when it is no longer open against
 * the first reference both counts are undetermined.
 *
 * Before anything, the reference AU is written whole: earlier writes (the
 * capacity check in probe) may have left it open with a write pointer in
 * its middle, and completing its cycle makes the calibration start a
 * clean one.  The default test area starts one unit past flashbench's
 * 16 MiB, so that a FAT area of up to 16 MiB from unit 1 stays outside.
 *
 * State between trials: linear trials continue each AU where the last one
 * stopped, and once its cycle is complete (the rest written in one
 * request) go on at the start of a spare AU of the area (move_on()), so
 * they never write below an open AU's write pointer and never put it into
 * random mode: a card may take a write at the start of an AU it still
 * holds open, written to its end, as out of order (flash-model.md rule 3
 * read literally, as bench/indepcard does).  Starting the same AU again
 * left the one-AU reference in random mode on such cards, every linear
 * trial faster than it, and the linear count undetermined.
 * Random-mode AUs keep their quota until closed, so before a random trial
 * that does not include every AU a previous one used, "flush" AUs get one
 * small in-order write each: after as many distinct AUs as the pool holds,
 * only they are open (LRU), and they are in linear mode.
 *
 * Failure modes: per-command overhead far above the transfer time (a slow
 * USB bridge) hides the size response and the collapse; garbage collection
 * cheaper than 0.12 T_AU is not separable by timing: such trials come
 * out unclear and the counts undetermined or of low confidence.  Random
 * mode as expensive as a collapse only shows in the cycle check, which
 * needs valid data to copy: on a card that copies nothing (a never-written
 * one) random 0 is undetermined.  Cards that defer garbage collection
 * (log blocks, background merges, PCTIPS2 in flash-model.md) can look open
 * beyond their pool.
 *
 * Write buffers (an SLC cache or DRAM in front of the flash, sim wbuf=):
 * one that fills during the run makes the late reference slower than the
 * first, and the drift check leaves both counts undetermined; one larger
 * than the run's writes hides every collapse, so "at least N" (no trial
 * collapsed) is trusted only after FP_WBUF_HIDE_BYTES of writes and is
 * UNBUFFERED_CONF with a note before (no_collapse_confidence).  Exact
 * counts need a collapse, which a write-through buffer cannot fake.  A
 * buffer that ignores flushes and stays write-back when full (an SLC
 * cache; sim wbuf_back=, bench/indepcard noflush=1) can: a write that does
 * not fit waits for older writes to reach the flash, so chunk writes that
 * fit look open while the big writes after them pay for their collapse,
 * and the next trial pays for this one's (linear 2 for 1, 4 for 3 at
 * 0.53).  On flash a write of 4c never takes more than 4 times a write of
 * c (t = a + c w, a >= 0); medians saying it does, beyond slack and noise
 * (writes_absorbed()), in the reference or any trial, leave both counts
 * undetermined.
 *
 * Writes go through fp_dev_write_timed() with a constant 0x5a pattern,
 * as flashbench writes; data-dependent controllers are not exercised.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "openau.h"
#include "stats.h"
#include "util.h"

#define FLASHBENCH_SPACING_AUS 12	/* flashbench puts test AUs 12 AUs apart */
#define BIG_FACTOR 4			/* the second chunk size is 4c */
#define FIRST_CHUNK_DIV 64		/* first chunk tried: E / 64 */
#define MIN_SLOTS 16			/* largest chunk tried: E / 16 */
#define PAGE_GUESS_BYTES (16u * 1024u)	/* largest common page */
#define BUDGET_AUS_PER_OPEN 12		/* byte budget: 12 AUs per max_open */
#define BUDGET_AUS_EXTRA 16
#define EARLY_ROUNDS 3			/* measured rounds before an early stop */
#define EARLY_BIG_ROUNDS 2		/* big rounds after an early stop */

/* Size response of the reference (t(4c) / t(c)): at 1.75 the proportional
 * part of a chunk write is at least its fixed part, good enough to estimate
 * T_AU; below, the chunk is doubled; at the largest chunk 1.3 is still
 * accepted (T_AU from the difference is noisier). */
#define R_REF_GOOD 1.75
#define R_REF_MIN 1.3

/* Excess per write in units of T_AU (see the opening comment): a
 * collapse counts from X_COL_MIN; random mode may cost up to X_RAND_OPEN
 * (Kingston SA04G: 9 ms per write, 1.1 % of T_AU). */
#define X_COL_MIN 0.12
#define X_COL_CLEAR 0.25
#define X_RAND_CLEAR 0.03
#define X_RAND_OPEN 0.06
/* Against the card's own linear collapse (x_lin_col, once measured), random
 * mode may cost up to this share of it: a collapse copies every page of
 * the AU, random mode's bookkeeping a few pages, which on small AUs (64
 * pages of 2 KiB in 128 KiB) is well above X_RAND_OPEN of T_AU.  Collapses
 * count from COL_MIN_OF_COL (0.4) of it, so the two stay 2x apart. */
#define X_RAND_OF_COL 0.2
/* Once the card's own linear collapse (x_lin_col) is known, the collapse
 * thresholds follow it: a collapse counts from COL_MIN_OF_COL of it (a
 * partial one, e.g. an AU with fewer pages to copy), is clear from
 * COL_CLEAR_OF_COL, and an open verdict needs a trial able to see
 * SEEN_OF_COL of it (half: a collapse smaller than that is not expected). */
#define COL_MIN_OF_COL 0.4
#define COL_CLEAR_OF_COL 0.7
/* A one-AU random trial that collapses copies nearly the whole AU on
 * every write (its writes step down a few chunks at a time): on the
 * simulator's linear-only cards at 0.83-1.05 of the linear collapse.
 * Random mode's own cost is a constant per write (about 9 ms on the
 * Kingston of flash-model.md) that reaches half of a cheap collapse on an
 * AU of 32-64 pages, and 0.8 of it on a fast one (bench/indepcard: 0.6
 * and 0.78 of it read as linear only at 0.89 and 0.97).  So against the
 * linear reference a collapse counts only from RAND_COL_MIN_OF_COL of the
 * linear one, clear from RAND_COL_CLEAR_OF_COL; below, the random count
 * is undetermined.  (0.95 for clear left two generated legacy cards'
 * random 0 below trusted.) */
#define RAND_COL_MIN_OF_COL 0.8
#define RAND_COL_CLEAR_OF_COL 0.9
#define SEEN_OF_COL 0.5
/* Random mode against the linear reference must cost clearly less than
 * any slowdown the linear trials showed: at most this share of the
 * smallest. */
#define RAND_OF_LIN_SLOW 0.5
/* Relative uncertainty of the references, per sigma of one write: the
 * random one is a trimmed mean of k1 - 2 writes (1/sqrt(k1 - 2)); the
 * linear one a median of k1 - 1 rounds, which spreads sqrt(pi/2), about
 * 1.25 times, as much as their mean. */
#define MEDIAN_SD_FACTOR 1.25
/* Slowdown of the slowest AU that still counts as open: 5 % for effects
 * noise does not explain, plus three times the noise. */
#define OPEN_SLACK 0.05
#define OPEN_SIGMAS 3.0
/* A trial resolves only if a collapse stands at least MIN_RESOLUTION
 * times as far from the reference as the open limit. */
#define MIN_RESOLUTION 2.0
#define SIGMA_FLOOR 0.01
/* A slowdown beyond noise still counts as open (device drift) up to this
 * fraction of the smallest collapse. */
#define DRIFT_MAX 0.25
/* and never more than this many T_AU: drift is a fraction of a write's
 * time, while a collapse measured during a stall of the host can make a
 * quarter of it look like tens of T_AU (an AU collapsing in random order
 * was then taken for drift: random 8 of 6 at 0.77) */
#define DRIFT_X_MAX 1.0
/* The one-AU linear reference measured again (after random 0, and at the
 * end) may take at most this much longer or less time than at the start:
 * beyond it the host or the card changed speed (a reader stalling for a
 * while, a throttling card), and every trial of that while is suspect. */
#define REF_CHANGE_MAX 0.5
/* A collapse keeps (t(4c)/t(c) - 1) at about 1/S of the reference's; at
 * half of the reference's or more the slowdown scales with the data and is
 * no garbage collection. */
#define RHO_COL_CLEAR 0.5
#define RHO_COL_MAX 0.75
#define CONF_CAP 0.99
#define UNSUPPORTED_CONF 0.5		/* random count without a linear one */
#define UNBUFFERED_CONF 0.45		/* no collapse, fewer bytes than a buffer */
#define CYCLE_PAIRS 4			/* random-0 check: cycles of each kind */
#define CYCLE_RATIO_MAX 0.75		/* its ratio: about 0.5 linear only, 1
					 * in random mode */

enum phase_kind { PHASE_REF, PHASE_TRIAL };

/* Chunk and rounds of a trial. */
struct shape {
	uint64_t chunk;
	unsigned k1;		/* rounds of chunk writes, the first is warm-up */
	unsigned k2;		/* rounds of BIG_FACTOR x chunk writes */
};

struct trial_stats {
	double small_med;	/* all measured chunk writes */
	double big_med;
	double worst_small;	/* slowest AU: trimmed mean of its chunk writes */
	double worst_big;	/* the same AU: trimmed mean of its big writes */
	double worst_med;	/* the same AU: median of its chunk writes */
	double best_small;	/* fastest AU: trimmed mean of its chunk writes */
	double rel_sigma;	/* chunk writes: robust relative spread */
	double bytes_per_sec;
	unsigned k1_used;	/* chunk rounds written (early stop) */
	unsigned k2_used;	/* big rounds written */
};

struct ctx {
	struct fp_dev *d;
	const struct openau_opts *o;
	const struct openau_plan *p;
	struct openau_result *r;
	uint8_t *buf;			/* erase size bytes of FP_FILL_BYTE */
	uint64_t e;
	struct stats_rng rng;
	uint64_t *cursor;		/* test AU: next linear offset (AU-relative) */
	uint64_t *flush_cursor;
	uint64_t *test_at;		/* test AU i: the AU it writes now (number
					 * from start_bytes) */
	uint64_t *flush_at;
	uint64_t *spare;		/* AUs of the area not written now: a ring */
	size_t nspare, spare_next;
	uint64_t budget_bytes;		/* automatic mode limit */
	uint64_t bytes0, ns0, io0;	/* device counters at start */
	uint64_t trials_done;

	struct shape normal, ref;
	uint64_t *slots_small;		/* random order: slot numbers per round */
	uint64_t *slots_big;
	double ref_lin;			/* reference chunk write (linear, N=1) */
	double ref_rand;		/* N=1 random when open, else 0 */
	double r_ref;			/* reference size response t(4c)/t(c) */
	double au_ns;			/* T_AU */
	double sigma_rel;		/* relative jitter of one chunk write */
	double x_lin_col;		/* smallest linear collapse seen, or 0 */
	double x_lin_slow;		/* smallest excess of a linear trial not
					 * open (collapsed or unclear), or 0 */
	unsigned holders;		/* random phase: AUs 0..holders-1 may
					 * hold random mode */
	unsigned flush_count;		/* flush writes that empty the pool */
	bool out_of_budget;
	bool absorbed;			/* a trial's writes were absorbed by
					 * a write buffer (writes_absorbed()) */
	bool last_beyond_doubt;		/* the last trial collapsed and stopped
					 * early (see run_trial) */
};

/* ------------------------------------------------------------------ */
/* Layout */

/* flashbench's 16 MiB rounded up to the erase size (manual mode); the
 * automatic mode, which gives verdicts, skips one unit more: a FAT area of
 * up to 16 MiB may start at unit 1, and a test AU inside it would never
 * collapse and count as one more open AU. */
static uint64_t default_offset(uint64_t e, bool manual)
{
	return util_round_up(OPENAU_FAT_SKIP_BYTES, e) + (manual ? 0 : e);
}

/* Manual mode: the chunk sizes flashbench uses, E, E/2, ... >= B. */
static unsigned manual_rows(uint64_t e, uint64_t b, uint32_t sector)
{
	return (unsigned)util_chunk_ladder(e, b, sector, NULL, SIZE_MAX);
}

/* Automatic mode: the first chunk is E/64 but at least min(16 KiB, E/32),
 * so it covers a whole page on real geometries (2 KiB pages in 128 KiB
 * AUs, 16 KiB pages from 1 MiB AUs on; a partial page costs a whole one
 * and would blur every measurement), and at least the blocksize option;
 * it must divide E in sector multiples and leave MIN_SLOTS chunks per AU.
 * 0 when none does. */
static uint64_t first_chunk(uint64_t e, uint64_t min_bytes, uint32_t sector)
{
	uint64_t floor_bytes = e / 32 < PAGE_GUESS_BYTES ? e / 32 : PAGE_GUESS_BYTES;

	if (min_bytes < floor_bytes)
		min_bytes = floor_bytes;
	for (uint64_t div = FIRST_CHUNK_DIV; div >= MIN_SLOTS; div /= 2) {
		uint64_t c = e / div;

		if (e % div == 0 && c % sector == 0 && c >= min_bytes)
			return c;
	}
	return 0;
}

/* Rounds per trial for chunk c: enough writes per AU to average jitter,
 * and few enough that two or three linear trials share one AU cycle (the
 * reference, a single AU, gets more). */
static struct shape shape_for(uint64_t e, uint64_t c, enum phase_kind kind)
{
	uint64_t slots = e / c;
	struct shape s = { .chunk = c, .k1 = 8, .k2 = 3 };	/* 20 chunks */

	if (kind == PHASE_REF && slots >= 64) {
		s.k1 = 16;
		s.k2 = 6;
	} else if (kind == PHASE_REF && slots >= 32) {
		s.k1 = 12;
		s.k2 = 4;
	} else if (slots < 64) {
		s.k2 = 2;	/* 16 chunks: two trials per cycle at E/32 */
	}
	return s;
}

static uint64_t shape_bytes(const struct shape *s)
{
	return s->chunk * (s->k1 + (uint64_t)BIG_FACTOR * s->k2);
}

/* Upper bound of trials: calibration, geometric and bisection steps with
 * one re-test each, and the edge re-tests with a tie-break, per order;
 * then the closing re-test of the reference (check_drift). */
static unsigned auto_max_trials(unsigned max_open)
{
	unsigned lg = 0;

	while ((1u << lg) < max_open)
		lg++;
	return 2 * (3 + 2 * (lg + 1) + 2 * lg + 6) + 1;
}

void openau_opts_default(struct openau_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_open = OPENAU_DEFAULT_MAX_OPEN;
	o->seed = 1;
}

static int plan_manual(uint64_t avail, const struct openau_opts *o,
		       uint64_t b, uint32_t sector, struct openau_plan *p)
{
	uint64_t e = o->erase_size_bytes, spacing = FLASHBENCH_SPACING_AUS;
	unsigned n = o->open_au_nr;

	if (n > OPENAU_MAX_OPEN_LIMIT)
		return -EINVAL;
	if (avail < n)
		return -ENOSPC;
	/* Keep flashbench's spacing where the device allows it. */
	if (n > 1 && (n - 1) * spacing + 1 > avail)
		spacing = (avail - 1) / (n - 1);
	p->test_aus = n;
	p->spacing_bytes = spacing * e;
	p->end_bytes = p->start_bytes + ((n - 1) * spacing + 1) * e;
	p->max_bytes = (uint64_t)n * e * manual_rows(e, b, sector);
	p->max_trials = manual_rows(e, b, sector);
	return 0;
}

/* Test AUs and flush AUs alternate, slot units apart: test AU i at slot
 * 2i, flush AU j at slot 2j+1 (the last flush AU at slot 2m). */
static int plan_auto(uint64_t avail, const struct openau_opts *o,
		     uint64_t b, uint32_t sector, struct openau_plan *p)
{
	uint64_t e = o->erase_size_bytes, slot = FLASHBENCH_SPACING_AUS / 2, full;
	unsigned m = o->max_open ? o->max_open : OPENAU_DEFAULT_MAX_OPEN;
	uint64_t c = first_chunk(e, b, sector);

	if (c == 0 || m < 2 || m > OPENAU_MAX_OPEN_LIMIT)
		return -EINVAL;
	if (avail < 2 * (uint64_t)m + 1)
		m = (unsigned)((avail - 1) / 2);
	if (avail < 5 || m < 2)
		return -ENOSPC;
	if (2 * (uint64_t)m * slot + 1 > avail)
		slot = (avail - 1) / (2 * (uint64_t)m);
	p->max_open = m;
	p->test_aus = m;
	p->flush_aus = m + 1;
	p->spacing_bytes = 2 * slot * e;
	/* a smaller slot leaves AUs past the layout: spares too (move_on()) */
	full = 2 * (uint64_t)m * (FLASHBENCH_SPACING_AUS / 2) + 1;
	p->end_bytes = p->start_bytes + (avail < full ? avail : full) * e;
	p->max_bytes = ((uint64_t)BUDGET_AUS_PER_OPEN * m + BUDGET_AUS_EXTRA) * e;
	p->max_trials = auto_max_trials(m);
	return 0;
}

int openau_plan(uint64_t size, uint32_t sector, const struct openau_opts *o,
		struct openau_plan *p)
{
	uint64_t e, avail, b;
	int rc;

	if (o == NULL || p == NULL || sector == 0)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	e = o->erase_size_bytes;
	if (e == 0 || e % sector != 0 || e / sector < MIN_SLOTS)
		return -EINVAL;
	b = o->blocksize_bytes;
	if (o->open_au_nr && b == 0)
		b = OPENAU_DEFAULT_BLOCKSIZE < e ? OPENAU_DEFAULT_BLOCKSIZE : e;
	if (b && (b % sector != 0 || b > e || e % b != 0))
		return -EINVAL;
	p->start_bytes = o->offset_set ? o->offset_bytes :
			 default_offset(e, o->open_au_nr > 0);
	if (p->start_bytes % sector != 0)
		return -EINVAL;
	/* verdicts need test AUs that are the card's AUs: one across two of
	 * them keeps both open, and the count halves (4 linear, 1 random at
	 * 0.90 on a 4/2 card of 6 MiB AUs from 100 MiB); flashbench's table
	 * (manual mode) is written where it is asked for */
	if (o->offset_set && !o->open_au_nr && p->start_bytes % e) {
		p->start_bytes = util_round_up(p->start_bytes, e);
		p->start_rounded = true;
	}
	if (p->start_bytes >= size || size - p->start_bytes < e)
		return -ENOSPC;
	avail = (size - p->start_bytes) / e;
	p->manual = o->open_au_nr > 0;
	p->erase_size_bytes = e;
	rc = p->manual ? plan_manual(avail, o, b, sector, p)
		       : plan_auto(avail, o, b, sector, p);
	if (rc < 0)
		memset(p, 0, sizeof(*p));
	return rc;
}

static uint64_t test_au_off(const struct ctx *c, unsigned i)
{
	return c->p->start_bytes + c->test_at[i] * c->e;
}

static uint64_t flush_au_off(const struct ctx *c, unsigned j)
{
	return c->p->start_bytes + c->flush_at[j] * c->e;
}

/* Where each AU starts (AU numbers from start_bytes): test AU i at slot
 * 2i, flush AU j at slot 2j+1, the last flush AU at slot 2m (manual mode:
 * the test AUs, spacing apart); every other AU of the area is a spare.
 * 0, or -ENOMEM. */
static int place_aus(struct ctx *c)
{
	const struct openau_plan *p = c->p;
	uint64_t slot = p->spacing_bytes / 2 / c->e, area = (p->end_bytes - p->start_bytes) / c->e;
	bool *used = calloc(area, sizeof(*used));

	c->test_at = calloc(p->test_aus + 1, sizeof(uint64_t));
	c->flush_at = calloc(p->flush_aus + 1, sizeof(uint64_t));
	c->spare = calloc(area, sizeof(uint64_t));
	if (!used || !c->test_at || !c->flush_at || !c->spare) {
		free(used);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < p->test_aus; i++) {
		c->test_at[i] = p->manual ? i * p->spacing_bytes / c->e : 2 * i * slot;
		used[c->test_at[i]] = true;
	}
	for (unsigned j = 0; j < p->flush_aus; j++) {
		c->flush_at[j] = j < p->test_aus ? (2 * (uint64_t)j + 1) * slot
						 : 2 * (uint64_t)p->test_aus * slot;
		used[c->flush_at[j]] = true;
	}
	for (uint64_t k = 0; k < area && !p->manual; k++)
		if (!used[k])
			c->spare[c->nspare++] = k;
	free(used);
	return 0;
}

/* The AU *at has had its cycle completed: the next write goes to the
 * start of a spare AU instead, the one that has waited longest, and *at
 * joins the spares.  The card may still hold *at open, with its write
 * pointer at the end, and take a write at its start as out of order
 * (random mode, or a collapse), as a literal reading of flash-model.md
 * section 4 rule 3 has it; by the time it comes back every other spare
 * was opened, which closes it on any card whose pool is smaller than
 * that.  Manual mode keeps flashbench's fixed AUs. */
static void move_on(struct ctx *c, uint64_t *at)
{
	uint64_t next;

	if (c->nspare == 0)
		return;
	next = c->spare[c->spare_next];
	c->spare[c->spare_next] = *at;
	c->spare_next = (c->spare_next + 1) % c->nspare;
	*at = next;
}

/* An AU's cycle is complete: its next write goes to the start of a
 * spare (cursor: its next linear offset, at: where it is). */
static void next_cycle(struct ctx *c, uint64_t *cursor, uint64_t *at)
{
	*cursor = 0;
	move_on(c, at);
}

/* ------------------------------------------------------------------ */
/* Small helpers */

const char *openau_order_name(enum openau_order order)
{
	return order == OPENAU_RANDOM ? "random" : "linear";
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* k random slots in [first, first + n), highest first (repeats allowed:
 * rewriting a chunk is out of order too). */
static void pick_slots(struct stats_rng *rng, uint64_t first, uint64_t n,
		       unsigned k, uint64_t *out)
{
	for (unsigned i = 0; i < k; i++)
		out[i] = first + stats_rng_below(rng, n);
	qsort(out, k, sizeof(*out), cmp_desc);
}

static int write_at(struct ctx *c, uint64_t off, uint64_t len, uint64_t *ns)
{
	uint64_t dummy;

	return fp_dev_write_timed(c->d, c->buf, (size_t)len, off,
				  ns ? ns : &dummy);
}

static void progress(struct ctx *c)
{
	c->trials_done++;
	if (c->o->progress)
		c->o->progress(c->o->progress_arg, c->trials_done,
			       c->p->max_trials > c->trials_done ?
			       c->p->max_trials : c->trials_done);
}

static struct openau_trial *add_trial(struct ctx *c, unsigned n,
				      enum openau_order order, uint64_t chunk)
{
	struct openau_trial *t;

	if (c->r->ntrials >= OPENAU_MAX_TRIALS)
		return NULL;
	t = &c->r->trials[c->r->ntrials++];
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->order = order;
	t->chunk_bytes = chunk;
	return t;
}

/* The first reason something stayed undetermined, for the report. */
static void note(struct ctx *c, const char *what, const char *msg)
{
	if (c->r->note[0] == '\0')
		snprintf(c->r->note, sizeof(c->r->note), "%s%s%s", what,
			 what[0] ? ": " : "", msg);
}

/* ------------------------------------------------------------------ */
/* Manual mode: flashbench --open-au */

static int run_manual(struct ctx *c)
{
	uint64_t e = c->e, b = c->o->blocksize_bytes;
	uint32_t sector = fp_dev_sector_bytes(c->d);
	unsigned n = c->o->open_au_nr, *visit, *order = NULL;
	int rc = 0;

	if (b == 0)
		b = OPENAU_DEFAULT_BLOCKSIZE < e ? OPENAU_DEFAULT_BLOCKSIZE : e;
	visit = malloc(n * sizeof(*visit));
	order = malloc((size_t)(e / b) * sizeof(*order));
	if (visit == NULL || order == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	stats_permutation(&c->rng, visit, n);
	for (uint64_t len = e; len >= b && len % sector == 0 && e % len == 0;
	     len /= 2) {
		unsigned chunks = (unsigned)(e / len);
		uint64_t total = 0, ns;
		struct openau_trial *t;

		if (c->o->random)
			stats_permutation(&c->rng, order, chunks);
		for (unsigned j = 0; j < chunks; j++) {
			uint64_t in_au = (c->o->random ? order[j] : j) * len;

			for (unsigned i = 0; i < n; i++) {
				rc = write_at(c, test_au_off(c, visit[i]) + in_au,
					      len, &ns);
				if (rc < 0)
					goto out;
				total += ns;
			}
		}
		t = add_trial(c, n, c->o->random ? OPENAU_RANDOM : OPENAU_LINEAR,
			      len);
		if (t != NULL) {
			t->verdict = OPENAU_TRIAL_MANUAL;
			t->write_ns = total / ((uint64_t)chunks * n);
			t->bytes_per_sec = total ? (double)e * n * 1e9 / total : 0;
		}
		progress(c);
		if (len % 2)
			break;
	}
out:
	free(visit);
	free(order);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Trials */

/* Linear trials continue each AU's cycle; when the next trial does not
 * fit, the rest of the AU is written in one request so the cycle is
 * complete (the card closes it later without copies), and the trial goes
 * on at the start of a spare AU (move_on()). */
static int linear_room(struct ctx *c, unsigned au, uint64_t need)
{
	uint64_t *cur = &c->cursor[au];
	int rc = 0;

	if (*cur + need <= c->e)
		return 0;
	if (*cur < c->e)
		rc = write_at(c, test_au_off(c, au) + *cur, c->e - *cur, NULL);
	next_cycle(c, cur, &c->test_at[au]);
	return rc;
}

/* Test AU 0, the one-AU trials', written whole: whatever wrote it before
 * may have left a cycle open with its write pointer in the middle, and
 * every write below it would be out of order (random mode's cost, or a
 * collapse).  The next one-AU trial starts a clean cycle in a spare. */
static int complete_reference(struct ctx *c)
{
	int rc = write_at(c, test_au_off(c, 0), c->e, NULL);

	next_cycle(c, &c->cursor[0], &c->test_at[0]);
	return rc;
}

/* AU-relative offset of round k (small rounds first, then big ones). */
static uint64_t chunk_off(const struct ctx *c, const struct shape *s,
			  enum openau_order order, unsigned au, unsigned k)
{
	uint64_t big = s->chunk * BIG_FACTOR;

	if (order == OPENAU_RANDOM)
		return k < s->k1 ? c->slots_small[k] * s->chunk
				 : c->slots_big[k - s->k1] * big;
	if (k < s->k1)
		return c->cursor[au] + k * s->chunk;
	return c->cursor[au] + s->k1 * s->chunk + (k - s->k1) * big;
}

/* Mean of v without its largest value (a single stall or background
 * merge does not move it, a fraction of collapsed writes does). */
static double trimmed_mean(const double *v, size_t n)
{
	double sum = 0, max = 0;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		max = i == 0 || v[i] > max ? v[i] : max;
	}
	return n < 3 ? sum / (double)n : (sum - max) / (double)(n - 1);
}

/* Summary of a trial's samples t[au * (k1 + k2) + round], of which the
 * first k1_used chunk rounds and k2_used big rounds were written; the
 * first round only opened the AUs and is left out. */
static void trial_summary(const struct shape *s, unsigned k1_used,
			  unsigned k2_used, unsigned n, const double *t,
			  struct trial_stats *st)
{
	unsigned per = s->k1 + s->k2, m1 = k1_used - 1;
	double *small = malloc((size_t)n * m1 * sizeof(double));
	double *big = malloc((size_t)n * k2_used * sizeof(double));
	double sum = 0;

	memset(st, 0, sizeof(*st));
	if (small == NULL || big == NULL)
		goto out;
	st->k1_used = k1_used;
	st->k2_used = k2_used;
	st->worst_small = -1;
	st->best_small = -1;
	for (unsigned a = 0; a < n; a++) {
		const double *ta = t + (size_t)a * per;
		double mean = trimmed_mean(ta + 1, m1);

		memcpy(small + (size_t)a * m1, ta + 1, m1 * sizeof(double));
		memcpy(big + (size_t)a * k2_used, ta + s->k1, k2_used * sizeof(double));
		if (mean > st->worst_small) {
			st->worst_small = mean;
			st->worst_big = trimmed_mean(ta + s->k1, k2_used);
			st->worst_med = stats_median(ta + 1, m1);
		}
		if (st->best_small < 0 || mean < st->best_small)
			st->best_small = mean;
		for (unsigned k = 1; k < k1_used; k++)
			sum += ta[k];
	}
	st->small_med = stats_median(small, (size_t)n * m1);
	st->big_med = stats_median(big, (size_t)n * k2_used);
	/* spread around each AU's own median, pooled */
	for (unsigned a = 0; a < n; a++) {
		double med = stats_median(small + (size_t)a * m1, m1);

		for (unsigned k = 0; k < m1 && med > 0; k++)
			small[(size_t)a * m1 + k] /= med;
	}
	st->rel_sigma = stats_mad_sigma(small, (size_t)n * m1);
	st->bytes_per_sec = sum > 0 ? (double)s->chunk * n * m1 * 1e9 / sum : 0;
out:
	free(small);
	free(big);
}

/* True when some AU's chunk writes of rounds 1..k all took at least
 * stop_ns: the trial has collapsed beyond doubt. */
static bool clearly_collapsed(const double *t, unsigned per, unsigned n,
			      unsigned k, double stop_ns)
{
	for (unsigned a = 0; a < n; a++) {
		bool all = true;

		for (unsigned r = 1; r <= k && all; r++)
			all = t[(size_t)a * per + r] >= stop_ns;
		if (all)
			return true;
	}
	return false;
}

/* Write the trial: k1 + k2 rounds over AUs 0..n-1 in a shuffled order.
 * Chunk rounds stop early (after EARLY_ROUNDS measured ones) once an AU
 * has collapsed on every write past stop_ns (0: never): collapsed writes
 * cost a garbage collection each and add nothing to a clear verdict.
 * Such a trial also writes only EARLY_BIG_ROUNDS big rounds: they only
 * show that the slowdown does not grow with the chunk (rho_factor()),
 * and a stall among fewer of them can only refuse the collapse. */
static int run_trial(struct ctx *c, const struct shape *s, unsigned n,
		     enum openau_order order, double stop_ns,
		     struct trial_stats *st)
{
	unsigned per = s->k1 + s->k2, k1_used = s->k1, k2_used = s->k2;
	unsigned *visit = malloc(n * sizeof(unsigned));
	double *t = calloc((size_t)n * per, sizeof(double));
	int rc = 0;

	if (visit == NULL || t == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	stats_permutation(&c->rng, visit, n);
	for (unsigned a = 0; a < n && order == OPENAU_LINEAR && rc == 0; a++)
		rc = linear_room(c, a, shape_bytes(s));
	for (unsigned k = 0; k < per && rc == 0; k++) {
		uint64_t len = k < s->k1 ? s->chunk : s->chunk * BIG_FACTOR;

		for (unsigned i = 0; i < n && rc == 0; i++) {
			unsigned a = visit[i];
			uint64_t ns = 0;

			rc = write_at(c, test_au_off(c, a) +
				      chunk_off(c, s, order, a, k), len, &ns);
			t[(size_t)a * per + k] = (double)ns;
		}
		if (k >= EARLY_ROUNDS && k + 1 < s->k1 && stop_ns > 0 &&
		    clearly_collapsed(t, per, n, k, stop_ns)) {
			k1_used = k + 1;
			k = s->k1 - 1;	/* on to the big writes */
			if (k2_used > EARLY_BIG_ROUNDS && !c->o->full_trials)
				k2_used = EARLY_BIG_ROUNDS;
		}
		if (k + 1 >= s->k1 + k2_used)
			break;
	}
	if (rc == 0 && order == OPENAU_LINEAR)
		for (unsigned a = 0; a < n; a++)
			c->cursor[a] += shape_bytes(s);
	if (rc == 0)
		trial_summary(s, k1_used, k2_used, n, t, st);
out:
	free(visit);
	free(t);
	return rc;
}

/* One small in-order write to each of flush_count distinct flush AUs:
 * afterwards the LRU pool holds only them, all in linear mode. */
static int flush_pool(struct ctx *c)
{
	uint64_t len = c->normal.chunk;

	for (unsigned j = 0; j < c->flush_count; j++) {
		uint64_t *cur = &c->flush_cursor[j];
		int rc;

		if (*cur + len > c->e)	/* complete: on to a spare */
			next_cycle(c, cur, &c->flush_at[j]);
		rc = write_at(c, flush_au_off(c, j) + *cur, len, NULL);
		if (rc < 0)
			return rc;
		*cur += len;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Verdicts */

/* Map v from [lo, hi] onto [0.5, 1] on a log scale (clamped). */
static double log_strength(double v, double lo, double hi)
{
	double f;

	if (v <= lo)
		return 0.5;
	if (v >= hi)
		return 1.0;
	f = log(v / lo) / log(hi / lo);
	return 0.5 + 0.5 * f;
}

/* Noise of a trial's slowest-AU slowdown, relative to the reference.
 * sigma: relative jitter of one chunk write.  An AU's statistic averages
 * k1 - 2 writes (k1 of the trial's shape); the reference has its own
 * uncertainty (ref_sd, relative); the slowest of n AUs drifts up by about
 * sqrt(2 ln n) of an AU's noise. */
struct noise {
	double drift;		/* expected excess of the slowest of n */
	double sd;		/* spread around that */
};

static struct noise trial_noise(double sigma, const struct shape *s,
				unsigned n, double ref_sd)
{
	double au = sigma / sqrt((double)(s->k1 - 2));
	double ref = sigma * ref_sd;
	struct noise z = {
		.drift = au * sqrt(2.0 * log((double)n)),
		.sd = sqrt(au * au + ref * ref),
	};

	return z;
}

static double open_limit(struct noise z)
{
	return OPEN_SLACK + z.drift + OPEN_SIGMAS * z.sd;
}

/* Garbage collection costs about the same per write whatever the chunk:
 * scale a collapse verdict down when t(4c)/t(c) grows like the
 * reference's (rho near 1), refuse it from RHO_COL_MAX. */
static double rho_factor(const struct ctx *c, const struct trial_stats *st)
{
	double resp = st->worst_small > 0 ? st->worst_big / st->worst_small : 0;
	double rho = (resp - 1.0) / (c->r_ref - 1.0);

	if (rho > RHO_COL_MAX)
		return 0;
	if (rho <= RHO_COL_CLEAR)
		return 1;
	return 1.0 - (rho - RHO_COL_CLEAR) / (2 * (RHO_COL_MAX - RHO_COL_CLEAR));
}

/* Strength of an open verdict: full up to half the slack plus the drift
 * plus 2 sd, 0.5 at the open limit (3 sd). */
static double open_strength(double d, struct noise z)
{
	double k = (d - OPEN_SLACK / 2 - z.drift) / z.sd;

	return k <= 2 ? 1.0 : fmax(0.3, 1.0 - (k - 2) / 2);
}

/* How well a trial resolves: ratio r of a distance to the open limit;
 * none below MIN_RESOLUTION, full from MIN_RESOLUTION + 1. */
static double resolution(double r)
{
	return r < MIN_RESOLUTION ? 0 : fmin(1.0, 0.5 + (r - MIN_RESOLUTION) / 2);
}

/* Writes timed one by one on flash cost a fixed part and a part that
 * grows with their size (t = a + c w, a >= 0: flash-model.md section 4
 * rule 1), so a write of BIG_FACTOR c never takes more than BIG_FACTOR
 * times a write of c.  When the medians say it does, beyond the slack and
 * three times their noise (sigma: relative spread of one write; m_small,
 * m_big: writes in each median), the chunk writes were absorbed by a
 * write buffer that ignores flushes (an SLC cache) and the larger ones
 * waited for it to drain: every write's time then shows older writes'
 * costs, not its own, and no verdict can rest on it. */
static bool writes_absorbed(double small, double big, double sigma,
			    unsigned m_small, unsigned m_big)
{
	double sd;

	if (small <= 0 || m_small == 0 || m_big == 0)
		return false;
	sd = MEDIAN_SD_FACTOR * sigma * sqrt(1.0 / m_small + 1.0 / m_big);
	return big / small > BIG_FACTOR * (1.0 + OPEN_SLACK + OPEN_SIGMAS * sd);
}

static bool trial_absorbed(const struct ctx *c, const struct trial_stats *st,
			   unsigned n)
{
	return writes_absorbed(st->small_med, st->big_med,
			       fmax(c->sigma_rel, st->rel_sigma),
			       n * (st->k1_used - 1), n * st->k2_used);
}

/* The smallest slowdown (in T_AU) that counts as a collapse on this card. */
static double collapse_min(const struct ctx *c)
{
	return fmax(X_COL_MIN, COL_MIN_OF_COL * c->x_lin_col);
}

/* Classify a trial from its AUs against the reference time ref.
 * cross_order: random order against the linear reference, where random
 * mode's own cost per write is allowed for.  An open verdict needs the
 * trial to be able to see the smallest collapse expected on this card
 * (X_COL_MIN, or half the linear collapse once measured); a collapse
 * needs to stand clear of the open limit. */
static enum openau_verdict classify(const struct ctx *c,
				    const struct trial_stats *st,
				    const struct shape *s, unsigned n,
				    double ref, double ref_sd, bool cross_order,
				    double *excess, double *strength)
{
	double d = st->worst_small / ref - 1.0;	/* slowdown of the slowest AU */
	double x = d * ref / c->au_ns;		/* the same in T_AU */
	double to_d = c->au_ns / ref;		/* T_AU units -> slowdown */
	struct shape used = { s->chunk, st->k1_used, s->k2 };
	/* this trial's own spread, if larger than the card's, widens it */
	struct noise z = trial_noise(fmax(c->sigma_rel, st->rel_sigma), &used,
				     n, ref_sd);
	double lim = open_limit(z);
	double col_min = collapse_min(c);
	double drift_max = fmin(DRIFT_MAX * col_min, DRIFT_X_MAX);
	double col_clear = fmax(X_COL_CLEAR, COL_CLEAR_OF_COL * c->x_lin_col);
	double x_seen = fmax(X_COL_MIN, SEEN_OF_COL * c->x_lin_col);
	double res_open = resolution(x_seen * to_d / lim), open_max, best, f;

	*excess = x;
	*strength = 0;
	/* some AUs clearly faster than the reference and than the others:
	 * the AUs do not behave alike (e.g. a collapse cheaper than random
	 * mode itself); all of them faster is just the device speeding up */
	best = st->best_small / ref - 1.0;
	if (best < -lim && d - best > lim)
		return OPENAU_TRIAL_UNCLEAR;
	if (cross_order) {
		/* random mode must cost clearly less than any slowdown the
		 * linear trials showed */
		double rand_max = fmax(X_RAND_OPEN, X_RAND_OF_COL * c->x_lin_col);
		double rand_clear = rand_max * (X_RAND_CLEAR / X_RAND_OPEN);

		open_max = rand_max;
		if (c->x_lin_slow > 0)
			open_max = fmin(open_max, RAND_OF_LIN_SLOW * c->x_lin_slow);
		if (x <= open_max) {
			*strength = resolution(col_min * to_d / lim) *
				    (x <= rand_clear ? 1.0 :
				     log_strength(rand_max * rand_clear / x,
						  rand_clear, rand_max));
			return *strength > 0 ? OPENAU_TRIAL_OPEN
					     : OPENAU_TRIAL_UNCLEAR;
		}
		col_min = fmax(col_min, RAND_COL_MIN_OF_COL * c->x_lin_col);
		col_clear = fmax(col_clear, RAND_COL_CLEAR_OF_COL * c->x_lin_col);
	} else if (d <= lim) {
		*strength = res_open * open_strength(d, z);
		return *strength > 0 ? OPENAU_TRIAL_OPEN : OPENAU_TRIAL_UNCLEAR;
	} else if (x <= drift_max) {
		/* slower than noise explains, but far below any collapse:
		 * the device drifting (caches, temperature), not collection;
		 * trusted less the closer it gets to a collapse */
		*strength = res_open * (1.0 - 0.5 * x / drift_max);
		return *strength > 0 ? OPENAU_TRIAL_OPEN : OPENAU_TRIAL_UNCLEAR;
	}
	f = rho_factor(c, st);
	*strength = resolution(d / lim) * f * log_strength(x, col_min, col_clear);
	/* most of the slowest AU's writes as fast as the reference: a few
	 * long stalls (a worn card's garbage collection) made it slow, not a
	 * collection on every write */
	if (st->worst_med / ref - 1.0 <= lim)
		*strength = 0;
	if (x < col_min || *strength == 0) {
		*strength = 0;
		return OPENAU_TRIAL_UNCLEAR;
	}
	return OPENAU_TRIAL_COLLAPSED;
}

/* Early stop for a trial: a write this slow is a collapse beyond doubt
 * (twice the collapse threshold and four open limits above ref). */
static double stop_time(const struct ctx *c, const struct shape *s,
			unsigned n, double ref, double ref_sd)
{
	struct shape few = { s->chunk, EARLY_ROUNDS + 1, s->k2 };
	double lim = open_limit(trial_noise(c->sigma_rel, &few, n, ref_sd));
	double col = collapse_min(c) * c->au_ns;

	return ref + fmax(4 * lim * ref, 2 * col);
}

/* A linear trial's slowdown into what the card's collapses cost (the
 * smallest collapse, x_lin_col) and the smallest slowdown of a trial
 * that was not open (x_lin_slow). */
static void count_linear_slowdown(struct ctx *c, enum openau_verdict v, double x_typ,
				  double excess)
{
	if (v == OPENAU_TRIAL_COLLAPSED)
		c->x_lin_col = c->x_lin_col > 0 ? fmin(c->x_lin_col, x_typ) : x_typ;
	if (v != OPENAU_TRIAL_OPEN && excess > 0)
		c->x_lin_slow = c->x_lin_slow > 0 ? fmin(c->x_lin_slow, excess) : excess;
}

/* Run and classify one trial of n AUs; records it in the result.  The
 * linear reference is a median of its rounds, the random one the trimmed
 * mean of a one-AU trial (ref_sd: their relative uncertainty).  One-AU
 * trials use the longer reference shape: they are cheap and they set (or
 * re-test) what the others are compared with. */
static int test_n(struct ctx *c, enum openau_order order, unsigned n,
		  enum openau_verdict *v, double *strength)
{
	const struct shape *s = n == 1 ? &c->ref : &c->normal;
	struct trial_stats st;
	struct openau_trial *t;
	double ref, ref_sd, excess, x_typ;
	bool cross;
	int rc;

	*v = OPENAU_TRIAL_UNCLEAR;
	*strength = 0;
	if (c->out_of_budget ||
	    fp_dev_bytes_written(c->d) - c->bytes0 +
	    (uint64_t)n * 2 * shape_bytes(s) > c->budget_bytes) {
		c->out_of_budget = true;
		return 0;
	}
	if (order == OPENAU_RANDOM && n < c->holders) {
		rc = flush_pool(c);
		if (rc < 0)
			return rc;
		c->holders = 0;
	}
	cross = order == OPENAU_RANDOM && c->ref_rand == 0;
	ref = order == OPENAU_RANDOM && !cross ? c->ref_rand : c->ref_lin;
	ref_sd = order == OPENAU_RANDOM && !cross ?
		 1.0 / sqrt((double)(c->ref.k1 - 2)) :
		 MEDIAN_SD_FACTOR / sqrt((double)(c->ref.k1 - 1));
	rc = run_trial(c, s, n, order, stop_time(c, s, n, ref, ref_sd), &st);
	if (rc < 0)
		return rc;
	if (order == OPENAU_RANDOM && n > c->holders)
		c->holders = n;
	*v = classify(c, &st, s, n, ref, ref_sd, cross, &excess, strength);
	if (trial_absorbed(c, &st, n)) {
		c->absorbed = true;
		*v = OPENAU_TRIAL_UNCLEAR;
		*strength = 0;
	}
	c->last_beyond_doubt = *v == OPENAU_TRIAL_COLLAPSED && st.k1_used < s->k1 &&
			       !c->o->full_trials;
	/* the typical collapsed write, not the slowest AU (which adds the
	 * gap copies of AUs at different offsets) */
	x_typ = (st.small_med - ref) / c->au_ns;
	if (order == OPENAU_LINEAR)
		count_linear_slowdown(c, *v, x_typ, excess);
	t = add_trial(c, n, order, s->chunk);
	if (t != NULL) {
		t->bytes_per_sec = st.bytes_per_sec;
		t->write_ns = (uint64_t)llround(st.small_med);
		t->excess = excess;
		t->strength = *strength;
		t->verdict = *v;
	}
	if (order == OPENAU_RANDOM && n == 1 && *v == OPENAU_TRIAL_OPEN &&
	    c->ref_rand == 0)
		c->ref_rand = st.worst_small;
	progress(c);
	return 0;
}

/* The reference: one AU in linear order (always open), at chunk E/64 or
 * larger until the write time grows clearly with the chunk size. */
static int calibrate(struct ctx *c, bool *ok)
{
	uint64_t chunk = first_chunk(c->e, c->o->blocksize_bytes,
				     fp_dev_sector_bytes(c->d));
	struct trial_stats st;
	int rc;

	*ok = false;
	for (;;) {
		struct openau_trial *t;
		double w;

		c->ref = shape_for(c->e, chunk, PHASE_REF);
		c->normal = shape_for(c->e, chunk, PHASE_TRIAL);
		rc = run_trial(c, &c->ref, 1, OPENAU_LINEAR, 0, &st);
		if (rc < 0)
			return rc;
		c->r_ref = st.small_med > 0 ? st.big_med / st.small_med : 0;
		t = add_trial(c, 1, OPENAU_LINEAR, chunk);
		if (t != NULL) {
			t->bytes_per_sec = st.bytes_per_sec;
			t->write_ns = (uint64_t)llround(st.small_med);
			t->strength = 1.0;
			t->verdict = OPENAU_TRIAL_OPEN;
		}
		progress(c);
		if (c->r_ref < R_REF_GOOD && c->e / chunk > MIN_SLOTS) {
			chunk *= 2;
			continue;
		}
		if (c->r_ref < R_REF_MIN)
			return 0;
		if (writes_absorbed(st.small_med, st.big_med,
				    fmax(SIGMA_FLOOR, st.rel_sigma),
				    c->ref.k1 - 1, c->ref.k2)) {
			c->absorbed = true;
			return 0;
		}
		/* t(c) = a + c w: T_AU = a + E w, from the c and 4c medians */
		w = (st.big_med - st.small_med) / ((BIG_FACTOR - 1) * (double)chunk);
		c->au_ns = st.small_med + w * (double)(c->e - chunk);
		c->ref_lin = st.small_med;
		c->sigma_rel = fmax(SIGMA_FLOOR, st.rel_sigma);
		c->r->chunk_bytes = chunk;
		c->r->au_write_ns = (uint64_t)llround(c->au_ns);
		*ok = true;
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* Search */

/* Votes per N for one order. */
struct tally {
	unsigned open[OPENAU_MAX_OPEN_LIMIT + 2];
	unsigned col[OPENAU_MAX_OPEN_LIMIT + 2];
	double open_str[OPENAU_MAX_OPEN_LIMIT + 2];	/* strongest open */
	double col_str[OPENAU_MAX_OPEN_LIMIT + 2];
	bool col_beyond_doubt[OPENAU_MAX_OPEN_LIMIT + 2];
	unsigned unclear;
};

static void tally_add(struct tally *t, unsigned n, enum openau_verdict v,
		      double s)
{
	if (v == OPENAU_TRIAL_OPEN) {
		t->open_str[n] = t->open[n]++ ? fmax(t->open_str[n], s) : s;
	} else if (v == OPENAU_TRIAL_COLLAPSED) {
		t->col_str[n] = t->col[n]++ ? fmax(t->col_str[n], s) : s;
	} else {
		t->unclear++;
	}
}

/* Test n, once more when unclear. */
static int decide(struct ctx *c, enum openau_order order, unsigned n,
		  struct tally *t, enum openau_verdict *v)
{
	double s;
	int rc;

	for (int tries = 0; tries < 2; tries++) {
		rc = test_n(c, order, n, v, &s);
		if (rc < 0 || c->out_of_budget)
			return rc;
		tally_add(t, n, *v, s);
		t->col_beyond_doubt[n] |= c->last_beyond_doubt;
		if (*v != OPENAU_TRIAL_UNCLEAR)
			return 0;
	}
	return 0;
}

/* Re-test n, expecting verdict want; a disagreement gets a tie-break.
 * *agree: the majority of all tests at n agrees with want. */
static int confirm(struct ctx *c, enum openau_order order, unsigned n,
		   enum openau_verdict want, struct tally *t, bool *agree)
{
	enum openau_verdict v;
	int rc = decide(c, order, n, t, &v);

	if (rc < 0)
		return rc;
	if (v != want && !c->out_of_budget)
		rc = decide(c, order, n, t, &v);
	if (want == OPENAU_TRIAL_OPEN)
		*agree = t->open[n] > t->col[n];
	else
		*agree = t->col[n] > t->open[n];
	return rc;
}

/* How much to trust one N's verdict: its strongest agreeing trial (more
 * evidence only helps), halved for every trial that said the opposite. */
static double n_confidence(const struct tally *t, unsigned n, bool open)
{
	unsigned yes = open ? t->open[n] : t->col[n];
	unsigned no = open ? t->col[n] : t->open[n];
	double s = open ? t->open_str[n] : t->col_str[n];

	if (yes == 0)
		return 0;
	return s * pow(0.5, no);
}

static void set_count(struct openau_count *out, unsigned n,
		      enum openau_bound bound, double conf)
{
	out->n = n;
	out->bound = bound;
	out->confidence = bound == OPENAU_UNDETERMINED ? 0 :
			  fmin(CONF_CAP, fmax(0.0, conf));
	if (bound == OPENAU_UNDETERMINED)
		out->n = 0;
}

/* Geometric steps 1, 2, 4, ... (the last one at the limit) up to the first
 * collapse; returns lo (largest open, 0 if none) and hi (first collapsed,
 * limit + 1 if none), or *unclear. */
static int search_up(struct ctx *c, enum openau_order order, unsigned start,
		     unsigned limit, struct tally *t, unsigned *lo,
		     unsigned *hi, bool *unclear)
{
	for (unsigned n = start; n <= limit; n = n * 2 > limit && n < limit ?
						   limit : n * 2) {
		enum openau_verdict v;
		int rc = decide(c, order, n, t, &v);

		if (rc < 0 || c->out_of_budget)
			return rc;
		if (v == OPENAU_TRIAL_UNCLEAR) {
			*unclear = true;
			return 0;
		}
		if (v == OPENAU_TRIAL_COLLAPSED) {
			*hi = n;
			return 0;
		}
		*lo = n;
		if (n == limit)
			break;
	}
	return 0;
}

static int bisect(struct ctx *c, enum openau_order order, struct tally *t,
		  unsigned *lo, unsigned *hi, bool *unclear)
{
	while (*hi - *lo > 1) {
		unsigned mid = *lo + (*hi - *lo) / 2;
		enum openau_verdict v;
		int rc = decide(c, order, mid, t, &v);

		if (rc < 0 || c->out_of_budget)
			return rc;
		if (v == OPENAU_TRIAL_UNCLEAR) {
			*unclear = true;
			return 0;
		}
		if (v == OPENAU_TRIAL_OPEN)
			*lo = mid;
		else
			*hi = mid;
	}
	return 0;
}

/* Whether the collapse at hi needs no re-test: hi collapsed beyond doubt
 * (some AU paid a collection on every write, far above any open limit,
 * which no stall does once per round in the same AU) and a trial at a
 * larger N collapsed too, at another time, so a slowdown of the whole
 * card during one trial (deferred garbage collection) cannot be what
 * both show.  A re-test writes hi AUs at a collection per write. */
static bool collapse_shown_twice(const struct tally *t, unsigned hi,
				 unsigned limit)
{
	if (!t->col_beyond_doubt[hi])
		return false;
	for (unsigned m = hi + 1; m <= limit; m++)
		if (t->col[m] > 0)
			return true;
	return false;
}

/* "At least N": no trial collapsed.  A write buffer larger than what the
 * run wrote looks the same (every write fast), so the bound is trusted
 * only after FP_WBUF_HIDE_BYTES of writes; below, its confidence is
 * UNBUFFERED_CONF at most (under the 0.5 of a trusted answer), with a
 * note. */
static double no_collapse_confidence(struct ctx *c, enum openau_order order,
				     double conf)
{
	uint64_t written = fp_dev_bytes_written(c->d) - c->bytes0;
	char msg[160];

	if (!util_wbuf_may_hide(written, "trial collapsed", msg, sizeof(msg)))
		return conf;
	note(c, openau_order_name(order), msg);
	return fmin(conf, UNBUFFERED_CONF);
}

/* The one-AU linear reference, measured again now: whether it still
 * takes the time it took at the start (within REF_CHANGE_MAX), and in
 * *change how much it differs. */
static int reference_holds(struct ctx *c, bool *holds, double *change)
{
	enum openau_verdict v;
	double strength;
	int rc = test_n(c, OPENAU_LINEAR, 1, &v, &strength);

	*holds = false;
	*change = 0;
	if (rc < 0 || c->out_of_budget || c->r->ntrials == 0)
		return rc;
	*change = (double)c->r->trials[c->r->ntrials - 1].write_ns / c->ref_lin - 1.0;
	*holds = v == OPENAU_TRIAL_OPEN && fabs(*change) <= REF_CHANGE_MAX;
	return 0;
}

/* Find the count for one order.  known_open: N already shown open (the
 * linear reference covers N=1); limit: highest N tested; at_limit_exact:
 * an open result at the limit is exact (random cannot exceed a known
 * linear count). */
static int search(struct ctx *c, enum openau_order order, unsigned known_open,
		  unsigned limit, bool at_limit_exact, struct openau_count *out)
{
	struct tally *t = calloc(1, sizeof(*t));
	unsigned lo = known_open, hi = limit + 1;
	bool unclear = false, agree_lo = true, agree_hi = true;
	double conf = 1.0;
	int rc;

	set_count(out, 0, OPENAU_UNDETERMINED, 0);
	if (t == NULL)
		return -ENOMEM;
	if (known_open)
		tally_add(t, known_open, OPENAU_TRIAL_OPEN, 1.0);
	rc = search_up(c, order, known_open ? known_open * 2 : 1, limit, t,
		       &lo, &hi, &unclear);
	if (rc == 0 && !unclear && !c->out_of_budget)
		rc = bisect(c, order, t, &lo, &hi, &unclear);
	/* the edge: re-test the last open N and the first collapsed one,
	 * unless that is already shown twice (see collapse_shown_twice) */
	if (rc == 0 && !unclear && !c->out_of_budget && lo >= 1)
		rc = confirm(c, order, lo, OPENAU_TRIAL_OPEN, t, &agree_lo);
	if (rc == 0 && !unclear && !c->out_of_budget && hi <= limit &&
	    !collapse_shown_twice(t, hi, limit))
		rc = confirm(c, order, hi, OPENAU_TRIAL_COLLAPSED, t, &agree_hi);
	/* random 0 says one AU written out of order costs a collapse; a host
	 * stalling through the trial and its re-test looks the same, unless
	 * the linear reference, measured right after, is as fast as ever */
	if (rc == 0 && order == OPENAU_RANDOM && hi == 1 && !unclear && !c->out_of_budget) {
		bool holds;
		double change;

		rc = reference_holds(c, &holds, &change);
		if (rc == 0 && !holds && !c->out_of_budget) {
			unclear = true;
			note(c, "random", "the one-AU linear reference, written again "
			     "after the random trials, was slower than at the start: "
			     "the slow random writes may have been the host or the "
			     "card slowing down");
		}
	}
	if (rc < 0)
		goto out;
	if (c->out_of_budget) {
		note(c, openau_order_name(order), "stopped at the byte budget "
		     "before the edge was confirmed");
	} else if (unclear) {
		note(c, openau_order_name(order), "a trial was neither clearly "
		     "open nor clearly collapsed (noise, or garbage collection "
		     "too cheap to separate)");
	} else if (!agree_lo || !agree_hi) {
		note(c, openau_order_name(order), "re-tests contradicted the "
		     "first result");
	} else {
		/* N=1 decides random mode at all; lo and hi are the edge */
		if (lo >= 1)
			conf = fmin(conf, fmin(n_confidence(t, 1, true),
					       n_confidence(t, lo, true)));
		if (hi <= limit)
			conf = fmin(conf, n_confidence(t, hi, false));
		conf *= pow(0.9, t->unclear);
		if (hi <= limit || at_limit_exact)
			set_count(out, lo, OPENAU_EXACT, conf);
		else
			set_count(out, lo, OPENAU_AT_LEAST,
				  no_collapse_confidence(c, order, conf));
	}
out:
	free(t);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Automatic mode */

/* Random order: every write lands at or below the previous one, so each
 * write needs random mode (a shuffled order, as flashbench's, goes upwards
 * half the time, and an upward write only costs a gap copy on a collapsed
 * AU, halving the signal).  Chunks come from the upper half of the AU
 * except its last chunk, the big writes after them from the lower half:
 * the AU is never written completely, which would let the card restart
 * it in linear mode. */
static int setup_random_slots(struct ctx *c)
{
	const struct shape *s = &c->ref;	/* the longer shape */
	uint64_t half = c->e / s->chunk / 2;

	c->slots_small = malloc(s->k1 * sizeof(uint64_t));
	c->slots_big = malloc(s->k2 * sizeof(uint64_t));
	if (c->slots_small == NULL || c->slots_big == NULL)
		return -ENOMEM;
	pick_slots(&c->rng, half, half - 1, s->k1, c->slots_small);
	pick_slots(&c->rng, 0, half / BIG_FACTOR, s->k2, c->slots_big);
	return 0;
}

/* What check_drift() writes: the reference AU whole, then the one-AU
 * reference trial (test_n's bound). */
static uint64_t drift_check_bytes(const struct ctx *c)
{
	return c->e + 2 * shape_bytes(&c->ref);
}

/* A worn card gets slower the more it is written (a throttling one
 * too): trials late in the run then look collapsed against a reference
 * measured at the start, and the counts come out too low.  So the one-AU
 * linear reference, which no pool size can collapse, is measured once
 * more at the end, from a clean cycle as in run_auto(); unless it is
 * still open against the first, neither count stands. */
static int check_drift(struct ctx *c)
{
	bool out_of_budget = c->out_of_budget, holds = false;
	double change = 0;
	int rc;

	c->budget_bytes += drift_check_bytes(c);	/* reserved in run_auto() */
	c->out_of_budget = false;
	rc = flush_pool(c);
	if (rc == 0)
		rc = complete_reference(c);
	if (rc == 0)
		rc = reference_holds(c, &holds, &change);
	if (rc == 0 && (c->out_of_budget || !holds)) {
		set_count(&c->r->linear, 0, OPENAU_UNDETERMINED, 0);
		set_count(&c->r->random, 0, OPENAU_UNDETERMINED, 0);
		snprintf(c->r->note, sizeof(c->r->note), "one-AU reference writes "
			 "took %.0f %% %s at the end than at the start: the card's "
			 "write time changed during the test (a worn or throttling "
			 "card, or a host stalling), so no count stands", 100.0 * fabs(change),
			 change >= 0 ? "longer" : "less time");
	}
	c->out_of_budget = out_of_budget;
	return rc;
}

/* What check_random_zero() writes: the AU whole, then CYCLE_PAIRS
 * one-chunk cycles and as many that go on for half the AU. */
static uint64_t cycle_check_bytes(const struct ctx *c)
{
	return c->e + CYCLE_PAIRS * (2 * c->ref.chunk + c->e / 2);
}

/* Random 0 says one AU written out of order costs a collapse, and random
 * mode can cost as much per write (bench/indepcard seed 435: 48 pages of
 * collection at 0.2 ms, random mode 9 ms a write): the random trials
 * cannot tell "linear only" from "one random AU".  A collapse copies the
 * pages the cycle it ends did not write (flash-model.md section 4 rule
 * 2); random mode's cost does not depend on them.  So one AU, written
 * whole first (every page valid), is written below its write pointer at
 * the same chunk, over and over, ending cycles that wrote only that
 * chunk and cycles that went on to write half the AU in order.  Linear
 * only: ending the second kind costs about half as much as the first;
 * random mode: the same.  *ratio: the median excess of the second over
 * the first's, or -1 when the first's is too small to compare. */
static int cycle_cost_ratio(struct ctx *c, double *ratio)
{
	uint64_t chunk = c->ref.chunk, at = c->e / chunk / 8, au, ns = 0;
	double after_chunk[CYCLE_PAIRS], after_half[CYCLE_PAIRS - 1], first;
	int rc;

	*ratio = -1;
	at = (at ? at : 1) * chunk;
	next_cycle(c, &c->cursor[0], &c->test_at[0]);
	rc = flush_pool(c);	/* random-mode quota held elsewhere: freed */
	au = test_au_off(c, 0);
	if (rc == 0)
		rc = write_at(c, au, c->e, NULL);
	for (unsigned j = 0; j < CYCLE_PAIRS && rc == 0; j++) {
		rc = write_at(c, au + at, chunk, &ns);	/* ends a half cycle */
		if (rc == 0 && j > 0)
			after_half[j - 1] = (double)ns - c->ref_lin;
		if (rc == 0)
			rc = write_at(c, au + at, chunk, &ns);	/* ends a chunk's */
		if (rc == 0) {
			after_chunk[j] = (double)ns - c->ref_lin;
			rc = write_at(c, au + at + chunk, c->e / 2, NULL);
		}
	}
	next_cycle(c, &c->cursor[0], &c->test_at[0]);
	if (rc < 0)
		return rc;
	first = stats_median(after_chunk, CYCLE_PAIRS);
	if (first >= collapse_min(c) * c->au_ns)
		*ratio = stats_median(after_half, CYCLE_PAIRS - 1) / first;
	return 0;
}

/* Random 0 stands only where ending a cycle costs what a collapse does:
 * less after a cycle that wrote more (cycle_cost_ratio()). */
static int check_random_zero(struct ctx *c, struct openau_count *rnd)
{
	double ratio;
	int rc = cycle_cost_ratio(c, &ratio);

	c->r->random_cycle_ratio = ratio;
	if (rc < 0 || (ratio >= 0 && ratio <= CYCLE_RATIO_MAX))
		return rc;
	set_count(rnd, 0, OPENAU_UNDETERMINED, 0);
	note(c, "random", ratio < 0 ? "the writes that ended cycles of one AU "
	     "were not slow enough to tell linear only from random mode" :
	     "an out-of-order write cost as much after the AU was half "
	     "written as after one chunk: random mode costing about a "
	     "collapse, not linear only");
	return 0;
}

/* random = 0 rests on the one-AU random trial's slowdown, judged in T_AU
 * (X_COL_MIN) unless a linear collapse showed what a collapse costs on
 * this card.  Random mode's own cost per write is a constant (about 9 ms
 * on the Kingston of flash-model.md), not a share of the AU: on a small
 * AU written fast it reaches a fifth of T_AU and more, and only the
 * card's own collapse tells the two apart (bench/indepcard, 1.5 MiB AU at
 * 24 MB/s: random mode read as linear only at 0.78).  Without one,
 * "linear only" is kept below the report threshold. */
static void unsupported_linear_only(struct ctx *c, struct openau_count *rnd)
{
	rnd->confidence = fmin(rnd->confidence, UNSUPPORTED_CONF);
	note(c, "random", "one-AU random writes were slow, but no linear "
	     "collapse showed what a collapse costs on this card: random "
	     "mode's own cost per write can look the same");
}

/* What a collapse costs on this card, for the random search: only from
 * linear trials past the count the linear search settled on.  A slow
 * trial at or below it was a stall of the host or the card that its
 * re-tests overruled (a reader's hiccup slowing one trial five times
 * over): kept, its slowdown made random mode's own cost look like a
 * collapse, random 0 at 0.99 for a card with 6 random AUs
 * (bench/indepcard seed 450).  No settled count: no collapse is known. */
static void settle_linear_collapse(struct ctx *c, const struct openau_count *lin)
{
	c->x_lin_col = 0;
	c->x_lin_slow = 0;
	if (lin->bound != OPENAU_EXACT)
		return;
	for (size_t i = 0; i < c->r->ntrials; i++) {
		const struct openau_trial *t = &c->r->trials[i];

		if (t->order == OPENAU_LINEAR && t->n > lin->n)
			count_linear_slowdown(c, t->verdict, ((double)t->write_ns -
					      c->ref_lin) / c->au_ns, t->excess);
	}
}

/* Some writes were absorbed by a buffer (writes_absorbed()): no count
 * stands, whatever the trials said. */
static void absorbed_verdict(struct ctx *c)
{
	set_count(&c->r->linear, 0, OPENAU_UNDETERMINED, 0);
	set_count(&c->r->random, 0, OPENAU_UNDETERMINED, 0);
	snprintf(c->r->note, sizeof(c->r->note), "writes %dx larger took more "
		 "than %dx as long: a write buffer that ignores flushes absorbed "
		 "some writes and made others wait for it, so write times do not "
		 "show what each write cost; no count stands", BIG_FACTOR,
		 BIG_FACTOR);
}

static int run_auto(struct ctx *c)
{
	unsigned m = c->p->max_open, rlimit = m;
	struct openau_count *lin = &c->r->linear, *rnd = &c->r->random;
	bool ok = false, exact;
	int rc;

	set_count(lin, 0, OPENAU_UNDETERMINED, 0);
	set_count(rnd, 0, OPENAU_UNDETERMINED, 0);
	/* whatever wrote the card before (the capacity check in probe, a
	 * file system) must not spoil the calibration */
	rc = complete_reference(c);
	if (rc == 0)
		rc = calibrate(c, &ok);
	if (rc == 0 && c->absorbed) {
		absorbed_verdict(c);
		return 0;
	}
	if (rc < 0 || !ok) {
		if (rc == 0)
			note(c, "", "write time does not grow with the chunk "
			     "size: cannot tell collection from overhead");
		return rc;
	}
	if (c->budget_bytes < drift_check_bytes(c) + cycle_check_bytes(c))
		return 0;
	/* for check_drift() and check_random_zero() */
	c->budget_bytes -= drift_check_bytes(c) + cycle_check_bytes(c);
	rc = search(c, OPENAU_LINEAR, 1, m, false, lin);
	if (rc < 0)
		return rc;
	if (c->absorbed) {	/* no count stands: no more writes */
		absorbed_verdict(c);
		return 0;
	}
	settle_linear_collapse(c, lin);
	/* Random mode is a subset of the open pool: no need to test beyond
	 * a known linear count, and the pool size tells how many flush
	 * writes empty it. */
	exact = lin->bound == OPENAU_EXACT;
	if (exact)
		rlimit = lin->n;
	c->flush_count = exact && lin->n + 1 <= c->p->flush_aus ? lin->n + 1
							       : c->p->flush_aus;
	rc = setup_random_slots(c);
	/* AUs left in random mode by earlier writes would hold quota */
	if (rc == 0)
		rc = flush_pool(c);
	if (rc == 0)
		rc = search(c, OPENAU_RANDOM, 0, rlimit, exact, rnd);
	/* Both counts come from the same card and the same noise: a weak
	 * linear result does not make a strong random one, and when linear
	 * found no clean collapse, random "open" verdicts (judged against a
	 * random reference that already carries random mode's cost) cannot
	 * be trusted either; random = 0 rests on its own clear collapse. */
	if (lin->bound != OPENAU_UNDETERMINED && rnd->confidence > lin->confidence)
		rnd->confidence = lin->confidence;
	if (lin->bound == OPENAU_UNDETERMINED && rnd->n > 0)
		rnd->confidence = fmin(rnd->confidence, UNSUPPORTED_CONF);
	if (rnd->bound == OPENAU_EXACT && rnd->n == 0 && c->x_lin_col == 0)
		unsupported_linear_only(c, rnd);
	else if (rc == 0 && rnd->bound == OPENAU_EXACT && rnd->n == 0)
		rc = check_random_zero(c, rnd);
	if (rc == 0)
		rc = check_drift(c);
	if (rc == 0 && c->absorbed)
		absorbed_verdict(c);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Entry points */

static void ctx_free(struct ctx *c)
{
	free(c->buf);
	free(c->cursor);
	free(c->flush_cursor);
	free(c->test_at);
	free(c->flush_at);
	free(c->spare);
	free(c->slots_small);
	free(c->slots_big);
}

int openau_run(struct fp_dev *d, const struct openau_opts *o,
	       const struct openau_plan *p, struct openau_result *r)
{
	struct ctx c = { .d = d, .o = o, .p = p, .r = r };
	int rc;

	if (d == NULL || o == NULL || p == NULL || r == NULL ||
	    p->erase_size_bytes != o->erase_size_bytes ||
	    p->manual != (o->open_au_nr > 0) ||
	    p->end_bytes > fp_dev_size_bytes(d))
		return -EINVAL;
	if (!fp_dev_may_write(d, p->start_bytes, p->end_bytes))
		return -EFAULT;
	memset(r, 0, sizeof(*r));
	r->manual = p->manual;
	r->erase_size_bytes = c.e = p->erase_size_bytes;
	r->random_cycle_ratio = -1;
	set_count(&r->linear, 0, p->manual ? OPENAU_NOT_TESTED : OPENAU_UNDETERMINED, 0);
	set_count(&r->random, 0, p->manual ? OPENAU_NOT_TESTED : OPENAU_UNDETERMINED, 0);
	stats_rng_seed(&c.rng, o->seed);
	c.buf = fp_dev_alloc_buf((size_t)c.e);
	c.cursor = calloc(p->test_aus + 1, sizeof(uint64_t));
	c.flush_cursor = calloc(p->flush_aus + 1, sizeof(uint64_t));
	if (c.buf == NULL || c.cursor == NULL || c.flush_cursor == NULL ||
	    place_aus(&c) < 0) {
		ctx_free(&c);
		return -ENOMEM;
	}
	memset(c.buf, FP_FILL_BYTE, (size_t)c.e);
	c.budget_bytes = p->max_bytes;
	c.bytes0 = fp_dev_bytes_written(d);
	c.ns0 = fp_dev_io_ns(d);
	c.io0 = fp_dev_io_count(d);
	fp_dev_rt_enter(d);	/* writing and timing, with little in between */
	rc = p->manual ? run_manual(&c) : run_auto(&c);
	fp_dev_rt_leave(d);
	r->bytes_written = fp_dev_bytes_written(d) - c.bytes0;
	r->elapsed_ns = fp_dev_io_ns(d) - c.ns0;
	r->io_count = fp_dev_io_count(d) - c.io0;
	ctx_free(&c);
	return rc;
}

uint64_t openau_flashbench_bytes(uint64_t erase_bytes, uint64_t blocksize_bytes,
				 unsigned nr)
{
	unsigned rows;

	if (erase_bytes == 0 || blocksize_bytes == 0)
		return 0;
	rows = manual_rows(erase_bytes, blocksize_bytes, 1);
	return (uint64_t)nr * erase_bytes * rows;
}
