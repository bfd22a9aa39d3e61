/* auwrite.c - find the allocation unit from writes.
 *
 * What the card is assumed to do (flash-model.md section 4, rules 1 and
 * 2): inside an open AU a write past the write pointer first copies the
 * skipped pages that hold valid data (linear mode); a write that opens an
 * AU at page s first copies its pages [0, s).  So at a site S that is a
 * multiple of every candidate size, small writes at increasing offsets o
 * cost a copy of their gap while they stay inside one AU, and nothing
 * beyond the base cost where o is the start of the next AU.
 *
 * What is measured: a 16 MiB sequential write just below S first fills the
 * card's pool of open AUs with complete ones, whose closing copies nothing
 * (otherwise closing an unrelated, half-written AU when the site opens its
 * next one would hide the vanished copy).  Then a few contiguous chunk
 * writes at S give the base cost of a write without a gap, and chunks at
 * 32, 64, 96 KiB and at every candidate (128 KiB, 192 KiB, 256 KiB, 384 KiB,
 * ... ascending) each cost base + k x gap inside the AU, k being the copy
 * cost per skipped byte (estimated from the previous points, so a card 10x
 * faster or slower gives the same ratios).  Those offsets are for 4 KiB
 * chunks; a larger chunk (a page, auwrite_chunk_for_page) scales them all:
 * a card that keeps its write pointer in whole pages (rule 3 read
 * literally) takes the calibration's second 4 KiB write inside a 16 KiB
 * page as out of order, which spoils the base.
 *
 * How it is decided: a point is "opened" when its cost above the base is
 * below 0.35 of the expected gap copy, "inside" above 0.6, unclear in
 * between, and too weak to judge when the expected copy is not well above
 * the base cost and its jitter.  The first opened candidate D is the AU if
 * 1.5 D is inside, 2 D opened and 2.5 D inside again (so neither D/2 nor
 * 2 D fits), and every smaller size e dividing D (2^n and 3 * 2^n from
 * 128 KiB, below the first candidate too) is excluded by a pair test in
 * D's fourth unit (or a later one): a write at a multiple
 * of e there, right after one a short gap g before it, costs the copy of
 * g, neither nothing (an AU start) nor the closing of some half-written AU
 * that can hide an AU start from the sweep.  An opening write still costs
 * an erase (when the pool is full), so 1.5 D and 2.5 D count as inside,
 * and g is long enough, only where the copy costs at least 2.5 times the
 * costliest opening.  Anything else is undetermined: no answer is a
 * guess.
 *
 * Failure modes, all answered "undetermined": a card with one open AU
 * (closing the site's own AU copies exactly what the gap would have, so
 * the cost never vanishes); erased or trimmed areas (no valid pages, no
 * copies); cards whose erase cost when closing an AU is comparable to the
 * gap copy (small AUs with cheap copies); pools so large that their
 * closing victims are half-written AUs of earlier tests; cards that defer
 * garbage collection.  A write buffer in front of the flash (SLC cache,
 * DRAM) larger than the flush makes every write cheap and the points too
 * weak to judge; a smaller one is full after the flush, but it takes a
 * write whenever it drained meanwhile (the host read, e.g. a journal's
 * backup before each new MiB), and an absorbed write looks like an AU
 * start.  So a write under half the base, or one judged opened that is
 * clearly faster than the calibration's gap-free writes (below them by
 * twice their jitter and 5 % of the base), makes the answer undetermined,
 * with a note; a buffer about as slow as a gap-free write is not seen.
 * Writes use flashbench's constant pattern (FP_FILL_BYTE).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auwrite.h"
#include "dev.h"
#include "stats.h"
#include "util.h"

#define KIB UINT64_C(1024)
#define MIB (1024 * KIB)
#define FAT_SKIP_BYTES (16 * MIB)	/* FAT areas seen reach 16 MiB */
#define DEFAULT_FLUSH_BYTES (16 * MIB)
#define FLUSH_REQUEST_BYTES MIB
#define DEFAULT_CHUNK_BYTES (4 * KIB)
#define MIN_SEARCH_BYTES MIB		/* below this the search is not worth it */
#define CALIBRATION_WRITES 6		/* the first opens the site's AU: unused */
#define SPAN_FACTOR 4			/* the area reaches 4 x the largest candidate */
#define K_WINDOW 3			/* k: median of the last 3 gap points */

/* Ratio of the cost above base to the expected gap copy. */
#define OPENED_MAX 0.35
#define INSIDE_MIN 0.6
/* A point is judged only if its expected gap copy is at least this many
 * base costs plus this many calibration spreads (jitter up to 30 %). */
/* "Inside" excludes an AU start only when the gap copy costs this many
 * times what an opening write cost (its erase). */
#define OPENING_MARGIN 2.5
#define WEAK_BASES 2.0
/* The pair test's short gap: a multiple of PAIR_GAP_GRAINS grains
 * (32 KiB with 4 KiB chunks); its write must cost 0.6-1.7 times the
 * gap's copy. */
#define PAIR_GAP_GRAINS 8
#define PAIR_RATIO_MAX 1.7
/* At least 16 grains (64 KiB of 4 KiB chunks): a gap of a few pages
 * copies whole pages only, so much shorter gaps cost visibly less per
 * byte than the long ones k came from. */
#define PAIR_GAP_MIN_GRAINS 16
/* A write faster than any gap-free write of the calibration can be did
 * not reach the flash as they did: a write buffer absorbed it, and an
 * absorbed write looks like an AU start (no gap copy).  "Faster" is below
 * ABSORBED_OF_BASE of the base on any card (jitter stays within 30 %), and
 * for a write judged opened also below the second fastest calibration
 * write by ABSORBED_RANGES times the range of the four slowest (the
 * jitter, which five samples underestimate) plus ABSORBED_MARGIN of the
 * base. */
#define ABSORBED_RANGES 2.0
#define ABSORBED_MARGIN 0.05
#define ABSORBED_OF_BASE 0.5
#define WEAK_SPREADS 2.0

/* The search's offsets are in grains (4 KiB, or the chunk when larger:
 * with a page-sized chunk the search is the 4 KiB one scaled, so that
 * every write starts its own page): the pre points at 8, 16 and 24, the
 * first candidate at 32 (128 KiB). */
#define GRAIN_BYTES (4 * KIB)
static const uint64_t pre_points[] = { 8, 16, 24 };
#define MIN_AU_GRAINS 32

struct ctx {
	struct fp_dev *d;
	const struct auwrite_opts *o;
	const struct auwrite_plan *p;
	struct auwrite_result *r;
	void *buf;
	uint64_t prev_end;		/* end of the last write, from the site */
	double spread_ns;		/* calibration: max - min */
	double absorbed_ns;		/* faster than this: absorbed */
	unsigned absorbed;		/* writes faster than that */
};

void auwrite_opts_default(struct auwrite_opts *o)
{
	memset(o, 0, sizeof(*o));
}

const char *auwrite_class_name(enum auwrite_class c)
{
	static const char *const names[] = { "calibration", "inside", "opened",
					     "unclear", "weak" };

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

/* The candidates in ascending order: 2^n and 3 * 2^n from min. */
static size_t candidates(uint64_t min, uint64_t max, uint64_t *out, size_t cap)
{
	size_t n = 0;

	for (uint64_t v = min; v <= max && n < cap; v *= 2) {
		out[n++] = v;
		if (v + v / 2 <= max && n < cap)
			out[n++] = v + v / 2;
	}
	return n;
}

static uint64_t largest_pow2_at_most(uint64_t v)
{
	uint64_t p = 1;

	while (p * 2 <= v)
		p *= 2;
	return p;
}

/* A multiple of every candidate up to max: 3 x its largest power of two. */
static uint64_t common_multiple(uint64_t max)
{
	return 3 * largest_pow2_at_most(max);
}

/* The sweep's candidates, the confirmation's three points and a pair
 * (two writes) for each size from AUWRITE_MIN_AU below the one
 * confirmed: at most three writes per size from AUWRITE_MIN_AU, with a
 * chunk of any size. */
static unsigned max_points(uint64_t max)
{
	uint64_t c[AUWRITE_MAX_POINTS];

	return CALIBRATION_WRITES + (unsigned)(sizeof(pre_points) / sizeof(pre_points[0])) +
	       3 * (unsigned)candidates(AUWRITE_MIN_AU, max, c, AUWRITE_MAX_POINTS) + 3;
}

/* A chunk larger than the grain is a page, and becomes the grain: a
 * power of two up to AUWRITE_MAX_CHUNK. */
static bool page_chunk(uint64_t v)
{
	return v > GRAIN_BYTES && v <= AUWRITE_MAX_CHUNK && !(v & (v - 1));
}

uint64_t auwrite_chunk_for_page(uint64_t page_bytes)
{
	if (page_chunk(page_bytes))
		return page_bytes;
	if (page_bytes && page_bytes <= GRAIN_BYTES)
		return 0;
	return AUWRITE_UNKNOWN_PAGE_CHUNK;
}

int auwrite_plan(uint64_t size, uint32_t sector, const struct auwrite_opts *o,
		 struct auwrite_plan *p)
{
	uint64_t max, chunk, flush, grain;

	if (!o || !p || sector == 0)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	max = o->max_au_bytes ? o->max_au_bytes : AUWRITE_MAX_AU;
	chunk = o->chunk_bytes ? o->chunk_bytes :
		sector > DEFAULT_CHUNK_BYTES ? sector : DEFAULT_CHUNK_BYTES;
	flush = o->flush_bytes ? o->flush_bytes : DEFAULT_FLUSH_BYTES;
	/* a chunk above 4 KiB is a page: the offsets scale with it */
	grain = chunk > GRAIN_BYTES ? chunk : GRAIN_BYTES;
	if (max < MIN_SEARCH_BYTES || max > AUWRITE_MAX_AU || chunk % sector ||
	    (chunk > GRAIN_BYTES && !page_chunk(chunk)) ||
	    MIN_AU_GRAINS * grain > max || flush % sector || flush % FLUSH_REQUEST_BYTES)
		return -EINVAL;
	for (; max >= MIN_SEARCH_BYTES && max >= MIN_AU_GRAINS * grain;
	     max = largest_pow2_at_most(max - 1)) {
		uint64_t a = common_multiple(max);
		uint64_t site = (FAT_SKIP_BYTES + flush + a - 1) / a * a;

		if (site + SPAN_FACTOR * max <= size) {
			p->site_bytes = site;
			break;
		}
	}
	if (!p->site_bytes)
		return -ENOSPC;
	p->max_au_bytes = max;
	p->chunk_bytes = chunk;
	p->grain_bytes = grain;
	p->min_au_bytes = MIN_AU_GRAINS * grain;
	p->flush_bytes = flush;
	p->start_bytes = p->site_bytes - flush;
	p->end_bytes = p->site_bytes + SPAN_FACTOR * max;
	p->max_points = max_points(max);
	p->max_bytes = flush + p->max_points * chunk;
	return 0;
}

static int timed_write(struct ctx *c, uint64_t off, uint64_t len, uint64_t *ns)
{
	uint64_t dummy;

	return fp_dev_write_timed(c->d, c->buf, (size_t)len, c->p->site_bytes + off,
				  ns ? ns : &dummy);
}

static void progress(struct ctx *c)
{
	if (c->o->progress)
		c->o->progress(c->o->progress_arg, c->r->npoints, c->p->max_points);
}

/* Fill the pool with AUs written start to end: [site - flush, site). */
static int flush_pool(struct ctx *c)
{
	void *big = fp_dev_alloc_buf(FLUSH_REQUEST_BYTES);
	uint64_t dummy;
	int rc = 0;

	if (!big)
		return -ENOMEM;
	memset(big, FP_FILL_BYTE, FLUSH_REQUEST_BYTES);
	for (uint64_t off = c->p->start_bytes; off < c->p->site_bytes && !rc;
	     off += FLUSH_REQUEST_BYTES)
		rc = fp_dev_write_timed(c->d, big, FLUSH_REQUEST_BYTES, off, &dummy);
	free(big);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Whether a write of ns was absorbed: any write under ABSORBED_OF_BASE of
 * the base, and one judged opened (what an absorbed write would fake)
 * under the calibration's limit too. */
static bool absorbed(const struct ctx *c, uint64_t ns, bool opened)
{
	return (double)ns < (opened ? c->absorbed_ns :
			     ABSORBED_OF_BASE * (double)c->r->base_ns);
}

/* The absorbed limit from the sorted gap-free writes t[1..5] (t[0] opens
 * the site's AU): their range without the fastest (which may itself have
 * been absorbed) measures the jitter. */
static double absorbed_limit(const uint64_t *t, double base)
{
	double low = (double)t[2], range = (double)(t[CALIBRATION_WRITES - 1] - t[2]);

	return fmax(low - ABSORBED_RANGES * range - ABSORBED_MARGIN * base,
		    ABSORBED_OF_BASE * base);
}

static int calibrate(struct ctx *c)
{
	uint64_t t[CALIBRATION_WRITES];
	struct auwrite_result *r = c->r;
	int rc = 0;

	for (unsigned i = 0; i < CALIBRATION_WRITES && !rc; i++) {
		struct auwrite_point *pt = &r->points[r->npoints++];

		rc = timed_write(c, i * c->p->chunk_bytes, c->p->chunk_bytes, &t[i]);
		*pt = (struct auwrite_point){ i * c->p->chunk_bytes, 0, t[i], 0,
					      AUWRITE_PT_CALIBRATION };
		progress(c);
	}
	if (rc)
		return rc;
	qsort(t + 1, CALIBRATION_WRITES - 1, sizeof(t[0]), cmp_u64);
	r->base_ns = t[1 + (CALIBRATION_WRITES - 1) / 2];
	c->spread_ns = (double)(t[CALIBRATION_WRITES - 1] - t[1]);
	c->absorbed_ns = absorbed_limit(t, (double)r->base_ns);
	for (unsigned i = 1; i < CALIBRATION_WRITES; i++)
		c->absorbed += absorbed(c, t[i], false);
	c->prev_end = CALIBRATION_WRITES * c->p->chunk_bytes;
	return 0;
}

/* Copy cost per skipped byte: median over the last gap points that were
 * not an AU start (the pre points and the candidates so far). */
static double copy_rate(const struct auwrite_result *r)
{
	double v[K_WINDOW];
	unsigned n = 0;

	for (size_t i = r->npoints; i-- > 0 && n < K_WINDOW;) {
		const struct auwrite_point *pt = &r->points[i];
		double excess = (double)pt->write_ns - (double)r->base_ns;

		if (pt->cls == AUWRITE_PT_CALIBRATION || pt->cls == AUWRITE_PT_OPENED)
			continue;
		v[n++] = excess > 0 ? excess / (double)pt->gap_bytes : 0;
	}
	if (n == 0)
		return 0;
	stats_sort_inplace(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static enum auwrite_class classify(const struct ctx *c, double expected,
				   double ratio)
{
	double floor_ns = WEAK_BASES * (double)c->r->base_ns + WEAK_SPREADS * c->spread_ns;

	if (expected <= 0 || expected < floor_ns)
		return AUWRITE_PT_WEAK;
	if (ratio <= OPENED_MAX)
		return AUWRITE_PT_OPENED;
	return ratio >= INSIDE_MIN ? AUWRITE_PT_INSIDE : AUWRITE_PT_UNCLEAR;
}

/* Write one chunk at site + off (past the last write) and judge it. */
static int measure(struct ctx *c, uint64_t off, const struct auwrite_point **out)
{
	struct auwrite_result *r = c->r;
	struct auwrite_point *pt;
	double k = copy_rate(r), expected, excess;
	uint64_t ns;
	int rc;

	if (r->npoints >= AUWRITE_MAX_POINTS || off < c->prev_end)
		return -EINVAL;
	rc = timed_write(c, off, c->p->chunk_bytes, &ns);
	if (rc)
		return rc;
	pt = &r->points[r->npoints++];
	pt->offset_bytes = off;
	pt->gap_bytes = off - c->prev_end;
	pt->write_ns = ns;
	expected = k * (double)pt->gap_bytes;
	excess = (double)ns - (double)r->base_ns;
	pt->ratio = expected > 0 ? excess / expected : 0;
	pt->cls = classify(c, expected, pt->ratio);
	if (absorbed(c, ns, pt->cls == AUWRITE_PT_OPENED))
		c->absorbed++;
	r->copy_ns_per_byte = k;
	c->prev_end = off + c->p->chunk_bytes;
	progress(c);
	*out = pt;
	return 0;
}

static double clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

static double strength(const struct auwrite_point *pt, enum auwrite_class want)
{
	if (pt->cls != want)
		return -1;
	if (want == AUWRITE_PT_OPENED)
		return clamp01((OPENED_MAX - pt->ratio) / OPENED_MAX);
	return clamp01((pt->ratio - INSIDE_MIN) / (1 - INSIDE_MIN));
}

static double excess_ns(const struct auwrite_result *r, const struct auwrite_point *pt)
{
	return (double)pt->write_ns - (double)r->base_ns;
}

/* The largest cost above base of a write that opened an AU: the erase
 * (and bookkeeping) an opening costs, which a gap copy must clearly
 * exceed before "inside" can exclude an AU start there. */
static double opening_excess(const struct auwrite_result *r)
{
	double m = 0;

	for (size_t i = 0; i < r->npoints; i++)
		if (r->points[i].cls == AUWRITE_PT_OPENED && excess_ns(r, &r->points[i]) > m)
			m = excess_ns(r, &r->points[i]);
	return m;
}

static bool clearly_inside(const struct auwrite_result *r, const struct auwrite_point *pt)
{
	return pt->cls == AUWRITE_PT_INSIDE &&
	       excess_ns(r, pt) >= OPENING_MARGIN * opening_excess(r);
}

/* 1.5 d and 2.5 d cost their gap copy well above an opening's cost. */
static bool halves_inside(const struct auwrite_result *r, uint64_t d)
{
	for (size_t j = 0; j < r->npoints; j++) {
		uint64_t off = r->points[j].offset_bytes;

		if ((off == d * 3 / 2 || off == d * 5 / 2) && !clearly_inside(r, &r->points[j]))
			return false;
	}
	return true;
}

/* A pair: a write at a multiple of e inside d's fourth unit [3 d, 4 d),
 * right after one a short gap g before it in the same unit, costs just
 * that gap's copy if e is not the AU.  An AU start there would cost
 * nothing, or, when closing some half-written AU, far more than the short
 * gap: an opening hidden by such a closing in the sweep cannot pass this.
 * Returns whether the second write cost 0.6-1.7 times the gap's copy. */
static int pair_inside(struct ctx *c, uint64_t at, uint64_t g, double k, bool *out)
{
	const struct auwrite_point *pt;
	double ratio;
	int rc = measure(c, at - g, &pt);

	if (!rc)
		rc = measure(c, at, &pt);
	if (rc)
		return rc;
	ratio = ((double)pt->write_ns - (double)c->r->base_ns) / (k * (double)pt->gap_bytes);
	*out = ratio >= INSIDE_MIN && ratio <= PAIR_RATIO_MAX;
	return 0;
}

/* The short gap: its copy must stand above the jitter and well above
 * what an opening costs, in whole PAIR_GAP_GRAINS grains, at least
 * PAIR_GAP_MIN_GRAINS. */
static uint64_t pair_gap(const struct ctx *c, double k)
{
	const struct auwrite_result *r = c->r;
	double need = WEAK_BASES * (double)r->base_ns + WEAK_SPREADS * c->spread_ns;
	uint64_t step = PAIR_GAP_GRAINS * c->p->grain_bytes;
	uint64_t min = PAIR_GAP_MIN_GRAINS * c->p->grain_bytes;
	uint64_t g;

	if (OPENING_MARGIN * opening_excess(r) > need)
		need = OPENING_MARGIN * opening_excess(r);
	g = ((uint64_t)(need / k) + c->p->chunk_bytes + step - 1) / step * step;
	return g > min ? g : min;
}

#define PAIR_UNITS 16

/* A place for e's pair in a unit u >= 3 of d: the highest multiple of e
 * below that unit's limit that is not a multiple of d, with room for the
 * short gap g inside the unit.  0 when no unit has room. */
static uint64_t pair_place(uint64_t d, uint64_t e, uint64_t g, uint64_t chunk,
			   uint64_t *limit, unsigned units)
{
	for (unsigned u = 3; u < units; u++) {
		uint64_t at = limit[u] / e * e;

		if (at % d == 0)
			at -= e;
		if (at <= u * d || at - g < u * d)
			continue;
		limit[u] = at - g - chunk;
		return at;
	}
	return 0;
}

/* Every size 2^n and 3 * 2^n from AUWRITE_MIN_AU below d that divides
 * it is excluded by a pair test (else the AU could be that size, its
 * starts hidden or too weak to see), and 1.5 d and 2.5 d were inside.
 * With chunks above 4 KiB the sweep starts above AUWRITE_MIN_AU, and an
 * AU below its first candidate then shows as a multiple of itself (a
 * 256 KiB AU as 768 KiB): the pairs test those sizes too.  The pairs'
 * places are chosen from the largest divisor down (d/2 has just one per
 * unit, at its middle) in d's units from the fourth on, then written in
 * ascending order. */
static int smaller_excluded(struct ctx *c, uint64_t d, bool *out)
{
	double k = c->r->copy_ns_per_byte;
	uint64_t at[AUWRITE_MAX_POINTS], limit[PAIR_UNITS], g, chunk = c->p->chunk_bytes;
	uint64_t span = c->p->end_bytes - c->p->site_bytes;
	unsigned units = span / d < PAIR_UNITS ? (unsigned)(span / d) : PAIR_UNITS;
	uint64_t cand[AUWRITE_MAX_POINTS];
	size_t ncand = candidates(AUWRITE_MIN_AU, d - 1, cand, AUWRITE_MAX_POINTS);
	size_t n = 0;

	*out = halves_inside(c->r, d) && k > 0;
	if (!*out)
		return 0;
	g = pair_gap(c, k);
	for (unsigned u = 0; u < units; u++)
		limit[u] = (u + 1) * d - chunk;
	for (size_t i = ncand; i-- > 0;) {
		if (d % cand[i])
			continue;
		at[n] = pair_place(d, cand[i], g, chunk, limit, units);
		if (!at[n]) {
			*out = false;
			return 0;
		}
		n++;
	}
	qsort(at, n, sizeof(at[0]), cmp_u64);
	for (size_t i = 0; *out && i < n; i++) {
		int rc = pair_inside(c, at[i], g, k, out);

		if (rc)
			return rc;
	}
	return 0;
}

static void note(struct auwrite_result *r, const char *msg)
{
	snprintf(r->note, sizeof(r->note), "%s", msg);
}

/* 1.5 d inside, 2 d opened, 2.5 d inside. */
static int confirm(struct ctx *c, uint64_t d, double *conf)
{
	static const struct { unsigned num; enum auwrite_class want; } steps[] = {
		{ 3, AUWRITE_PT_INSIDE }, { 4, AUWRITE_PT_OPENED }, { 5, AUWRITE_PT_INSIDE },
	};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct auwrite_point *pt;
		int rc = measure(c, d * steps[i].num / 2, &pt);
		double s;

		if (rc)
			return rc;
		s = strength(pt, steps[i].want);
		if (s < 0)
			return 1;
		if (s < *conf)
			*conf = s;
	}
	return 0;
}

static int search(struct ctx *c)
{
	uint64_t cand[AUWRITE_MAX_POINTS];
	size_t ncand = candidates(c->p->min_au_bytes, c->p->max_au_bytes, cand,
				  AUWRITE_MAX_POINTS);
	const struct auwrite_point *pt;
	int rc = calibrate(c);

	for (size_t i = 0; !rc && i < sizeof(pre_points) / sizeof(pre_points[0]); i++)
		rc = measure(c, pre_points[i] * c->p->grain_bytes, &pt);
	for (size_t i = 0; !rc && i < ncand; i++) {
		bool excluded = false;
		double conf = 1;

		rc = measure(c, cand[i], &pt);
		if (rc || pt->cls != AUWRITE_PT_OPENED)
			continue;
		conf = strength(pt, AUWRITE_PT_OPENED);
		rc = confirm(c, cand[i], &conf);
		if (rc < 0)
			return rc;
		if (rc == 0)
			rc = smaller_excluded(c, cand[i], &excluded);
		if (rc < 0)
			return rc;
		if (rc > 0 || !excluded) {
			note(c->r, "the copy cost vanished once but the next AU starts "
			     "did not confirm it");
			return 0;
		}
		c->r->au_bytes = cand[i];
		c->r->confidence = 0.5 + 0.5 * conf;
		return 0;
	}
	if (!rc)
		note(c->r, "the gap copy never vanished up to the largest candidate "
		     "(one open AU, an erased area, or an AU larger than searched)");
	return rc;
}

/* Some writes skipped the flash's cost: a write buffer in front of it
 * (an SLC cache, DRAM) takes writes whenever it has room (it drains while
 * the host reads, e.g. a journal's backup), and an absorbed write looks
 * like an AU start; noise larger than the copy cost does the same.  No
 * answer stands, whatever the sweep found, and the note names both
 * causes: which one it was is not measured. */
static void undetermined_absorbed(struct ctx *c)
{
	char msg[sizeof(c->r->note)];

	c->r->au_bytes = 0;
	c->r->confidence = 0;
	snprintf(msg, sizeof(msg), "%u writes ran faster than any write without "
		 "a gap (a write buffer absorbing writes, or noise above the copy "
		 "cost): no AU start can be told", c->absorbed);
	note(c->r, msg);
}

int auwrite_run(struct fp_dev *d, const struct auwrite_opts *o,
		const struct auwrite_plan *p, struct auwrite_result *r)
{
	struct ctx c = { d, o, p, r, NULL, 0, 0, 0, 0 };
	uint64_t ns0, bytes0, io0;
	int rc;

	if (!d || !o || !p || !r || !p->site_bytes)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	c.buf = fp_dev_alloc_buf(p->chunk_bytes);
	if (!c.buf)
		return -ENOMEM;
	memset(c.buf, FP_FILL_BYTE, p->chunk_bytes);
	ns0 = fp_dev_io_ns(d);
	bytes0 = fp_dev_bytes_written(d);
	io0 = fp_dev_io_count(d);
	rc = flush_pool(&c);
	if (!rc)
		rc = search(&c);
	if (!rc && c.absorbed)
		undetermined_absorbed(&c);
	r->elapsed_ns = fp_dev_io_ns(d) - ns0;
	r->bytes_written = fp_dev_bytes_written(d) - bytes0;
	r->io_count = fp_dev_io_count(d) - io0;
	free(c.buf);
	return rc;
}
