/* findfat.c - find the FAT area by timing writes at the start of the card.
 *
 * What the card is assumed to do (flash-model.md sections 4.3 and 4.5):
 * outside the FAT area, a small write out of order inside an erase unit
 * either goes to an open unit in random mode or, when the card cannot keep
 * the unit open that way, forces the unit to be copied and erased: about
 * one unit copy per write, whatever the write's size ("collapse").  The
 * first few units, where a factory FAT32 format keeps its tables, are
 * mapped per page and need no open unit, so there scattered small writes
 * stay cheap; whole-unit writes there may even be slower than elsewhere
 * (seed 004: the first 8 MiB take random 32 KiB writes 3.5x faster, whole
 * 4 MiB writes 2-4x slower).  The area starts at unit 0 or 1 and spans at
 * most FINDFAT_MAX_AREA_UNITS units.
 *
 * What is measured (automatic mode): leading units in batches (8 by
 * default) together with 8 reference units at least 64 MiB in, beyond any
 * FAT area.  Each unit is written whole once (the large row; it also
 * leaves every unit in the same state, all pages valid), then k small
 * chunks per unit at random positions (one per k-th of the unit, from the
 * top down, so every write is out of order), interleaved across the batch
 * and the references.  Interleaving makes a card with a pool of fewer
 * open units than that switch units on every write, so normal units cannot
 * hide in the pool; visiting the highest units first hands any random-mode
 * slots to the references, so pool effects can only make leading units
 * look slower, never like a FAT area.  Writing a sample instead of every
 * chunk keeps the cost modest: a collapsing unit pays a unit copy per write
 * (0.2-0.7 s on real cards), so 16 writes show the per-write cost where a
 * full random pass would take minutes.
 *
 * How it decides: a unit's level is the log of its median small write
 * time.  Every split of the leading units into "unit 0 (optionally)
 * normal, then an area of 1-32 units, then normal units" is scored against
 * the levels (the references always count as normal), and the best split
 * is accepted only when the area is at least FINDFAT_MIN_RATIO times
 * faster than the normal units, the two levels lie FINDFAT_Z_MIN noise
 * units apart, and every unit sits on its side of the midpoint by
 * FINDFAT_SEP_MIN (noise: the spread between units and each unit's
 * standard error).  Only ratios between units of the same card are used,
 * so the same card 10x faster or slower gives the same answer.  Batches are
 * added until FINDFAT_NORMAL_RUN normal units follow the area.
 * Each batch is read after half its small writes (the same positions,
 * the top half of every unit's strata); a settled verdict with nothing
 * weak about it and confidence FINDFAT_EARLY_CONFIDENCE stops the test
 * there, anything else completes the batch with the writes it would have
 * made at once (a collapsing unit pays a unit copy per small write, so
 * this halves the device time on clear cards).
 * Confidence falls with a small ratio, a unit near the midpoint or a short
 * run of normal units after the area.  "None" is believed only as far as an
 * area could have stood out: normal units must collapse and the levels be
 * quiet; units that disagree, a unit mixing fast and slow writes (a unit
 * size that does not match the card's) or leading units whose whole-unit
 * writes differ a lot all lower it.
 *
 * Cards whose normal units take small random writes without a unit copy
 * (many random-capable open units) show no such contrast.  When the first
 * batch settles on "none" there, a confirmation writes the batch and the
 * references whole once more, then a run of in-order chunks from each
 * unit's start, lowest unit first: "none" is confident only when leading
 * units and references agree in small random, small in-order and
 * whole-unit writes within FINDFAT_AGREE_SIGMAS of each row's noise, and
 * that noise could have shown a FINDFAT_QUIET_RATIO difference.
 *
 * Drift: the references are normal units written whole one after the
 * other; a steady climb of their times (check_drift) means every write
 * pays a growing extra time (a worn card getting slower the more it is
 * written, or a write buffer filling up), which squeezes the contrast and
 * makes "none" wrong, so the answer is undetermined.
 *
 * Write buffers (an SLC cache or DRAM in front of the flash, sim wbuf=)
 * larger than what the test writes make every unit take every write
 * alike: that is the no-collapse "none" of the confirmation, so it is
 * trusted only after FP_WBUF_HIDE_BYTES of writes and FINDFAT_WBUF_CAP
 * with a note before (cap_unbuffered_none); a "none" where normal units
 * collapse needs writes that reached the flash and stands.
 *
 * Failure modes: a leading area that differs from the rest by less than
 * that in all three rows is invisible to timing and reported as "none";
 * a noisy card that does not collapse stays undetermined; cards keeping
 * more units open than a batch and its
 * references can show slower leading units, reported as no FAT area at
 * low confidence; an area that takes small random writes no faster than a
 * unit copy and whole writes like the rest is invisible to this method;
 * USB readers add per-command overhead that shrinks every ratio;
 * background garbage collection (flash-model 4.7) makes levels noisy,
 * which lowers the confidence.  Reference: Arnd Bergmann, "Optimizing
 * Linux with cheap flash drives", LWN 428584, and flashbench --findfat.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "findfat.h"
#include "stats.h"
#include "util.h"

#define FINDFAT_MANUAL_UNITS 6		/* flashbench --fat-nr default */
#define FINDFAT_DEFAULT_BLOCK (16ULL << 10)	/* flashbench --blocksize default */
#define FINDFAT_BATCH_UNITS 8
#define FINDFAT_AUTO_LEAD_UNITS 40	/* unit 1 + 32-unit area + normal run */
#define FINDFAT_AUTO_BUDGET_BYTES (384ULL << 20)	/* whole writes, big units */
#define FINDFAT_REF_UNITS 8		/* more than most cards keep open */
#define FINDFAT_REF_MIN_BYTES (64ULL << 20)	/* FAT areas are a few MiB */
#define FINDFAT_SAMPLES 16
#define FINDFAT_MIN_CHUNKS 32		/* small chunks per unit, default blocksize */
#define FINDFAT_MIN_CHUNKS_USER 8	/* the least a sample makes sense in */
#define FINDFAT_MAX_ENTRIES (5 * FINDFAT_MAX_UNITS)

/* Decision thresholds, all on natural-log levels (i.e. ratios). */
#define FINDFAT_MIN_RATIO 1.5		/* the area is this much faster, at least */
#define FINDFAT_FULL_RATIO 2.5		/* full confidence from here on */
#define FINDFAT_QUIET_RATIO 1.25	/* a difference this big spoils "none" */
#define FINDFAT_SEP_MIN 1.5		/* worst unit's margin, in noise units */
#define FINDFAT_SEP_FULL 6.0
#define FINDFAT_Z_MIN 4.0		/* area and normal level apart, in noise */
#define FINDFAT_NORMAL_RUN 4		/* leading normal units after the area */
#define FINDFAT_NOISE_FLOOR 0.03	/* 3 %: levels closer than this are equal */
/* Collapse: normal units' small random write costs at least
 * FINDFAT_COLLAPSE of writing the whole unit, and at least
 * FINDFAT_COLLAPSE_CHUNKS times a chunk's share of it, so it cannot be a
 * page-mapped write; full confidence from the _FULL values on.  Units of
 * few pages blur the two (a random-mode write with its bookkeeping can cost
 * a fifth of a small unit), hence the chunk condition: a random-mode
 * write costs a few page programs, a unit copy tens to hundreds. */
#define FINDFAT_COLLAPSE 0.2
#define FINDFAT_COLLAPSE_FULL 0.4
#define FINDFAT_COLLAPSE_CHUNKS 8.0
#define FINDFAT_COLLAPSE_CHUNKS_FULL 32.0
/* The large row agrees when it steps by this much at the same boundary;
 * a step of FINDFAT_LARGE_DOUBT there alone caps "none" at
 * FINDFAT_DOUBT_CAP (the first whole writes into an empty pool of open
 * units skip an erase, which can reach 1.3x on small units). */
#define FINDFAT_LARGE_RATIO 1.3
#define FINDFAT_LARGE_DOUBT 2.0
#define FINDFAT_DOUBT_CAP 0.6
/* Cards whose normal units take small random writes without a unit copy
 * (many random-capable open units): "none" is believed when the leading
 * units match the references within FINDFAT_AGREE_SIGMAS noise units in
 * small random, small in-order and whole-unit writes, and the noise of the
 * two small rows could have shown a FINDFAT_QUIET_RATIO difference at
 * FINDFAT_Z_MIN noise units. */
#define FINDFAT_AGREE_SIGMAS 3.0
#define FINDFAT_NONE_BASE 0.4		/* no agreement: undetermined */
#define FINDFAT_NONE_SPAN 0.55
#define FINDFAT_CONFIRM_BELOW 0.8	/* a weaker "none" gets the confirmation */
/* Every batch is read after half its rounds; a settled verdict this
 * confident with nothing weak about it stops there (each small write on a card that
 * collapses costs a unit copy, so this halves the test's device time). */
#define FINDFAT_EARLY_CONFIDENCE 0.85
#define FINDFAT_EARLY_MIN_SAMPLES 6
/* A unit with this share of its writes far off its median mixes two
 * behaviours; answers are then capped at FINDFAT_MIXED_CAP. */
#define FINDFAT_MIXED 0.2
#define FINDFAT_MIXED_CAP 0.5
/* Confidence maps: FINDFAT_TRUSTED is the line below which an answer is
 * reported as weak ("low", report_findfat.c). */
#define FINDFAT_TRUSTED 0.5
/* Leading units slower than the rest differ, but not as a FAT area: a
 * "none" there stays well below trusted. */
#define FINDFAT_ODD_CAP 0.3
/* Levels too noisy to see an area: "none" below trusted however quiet. */
#define FINDFAT_NOISY_CAP 0.4
/* Normal units collapse, so an area would have stood out: "none" is
 * trusted, up to FINDFAT_TRUSTED + this for a full collapse and quiet
 * levels (0.95: never certain from timing alone). */
#define FINDFAT_COLLAPSE_SPAN 0.45
/* "None" without any write slowing down, in fewer bytes than a write
 * buffer may hold (cap_unbuffered_none): below trusted. */
#define FINDFAT_WBUF_CAP 0.45
/* No collapse and no confirmation ran: "none" is a guess, from this base
 * up to twice it (0.4) on quiet levels, below trusted. */
#define FINDFAT_GUESS_BASE 0.2
#define FINDFAT_GUESS_SPAN 0.2
/* A found area: trusted, plus up to this for a large ratio, a clean
 * separation and enough normal units after it ... */
#define FINDFAT_FOUND_SPAN 0.44
/* ... and this when the large-chunk row steps at the same boundary
 * (0.99 at most in all). */
#define FINDFAT_LARGE_BONUS 0.05
/* Faster units that do not form one clean block: below trusted. */
#define FINDFAT_UNCLEAN_CAP 0.3

/* Levels of the units examined so far: the leading units 0..nlead-1 in
 * order, then every measurement of a reference unit (one per batch).  The
 * whole-unit write times have one entry per unit: leading, then refs. */
struct findfat_levels {
	unsigned nlead, nref;
	double level[FINDFAT_MAX_ENTRIES];	/* ln median small write ns */
	double se[FINDFAT_MAX_ENTRIES];
	double mixed[FINDFAT_MAX_ENTRIES];	/* share of writes far off */
	unsigned unit[FINDFAT_MAX_ENTRIES];
	double large[FINDFAT_MAX_UNITS];	/* ln whole-unit write ns */
};

/* Everything a run keeps between units. */
struct findfat_ctx {
	struct fp_dev *d;
	const struct findfat_opts *o;
	struct findfat_result *r;
	unsigned char *buf;
	uint32_t *order;		/* manual: chunk permutation */
	double *times;			/* manual: one unit's write times */
	struct stats_rng rng;
	uint64_t done_bytes;
	struct findfat_levels lv;	/* small random writes */
	/* the confirmation (cards that do not collapse): small in-order
	 * writes, and more whole-unit samples (sum of logs, count) */
	bool confirmed;
	struct findfat_levels lin;
	double large2_sum[FINDFAT_MAX_UNITS];
	unsigned large2_n[FINDFAT_MAX_UNITS];
	char drift[160];		/* why the write time drifted, or "" */
};

/* A split of the levels: area [s, s + k) of the leading units, every
 * other entry normal. */
struct findfat_split {
	unsigned s, k;
	double area, normal;		/* median levels */
	double cost;			/* sum of absolute deviations */
};

/* The automatic mode's reading of the levels. */
struct findfat_verdict {
	bool found;
	bool settled;			/* no need to examine more units */
	unsigned start, count;		/* area in units */
	double confidence;
	double contrast;		/* normal / area, as a ratio */
	double noise;
	bool collapse;
	double col_degree;		/* "none": collapse_degree() */
	bool large_agrees;
	char note[160];
};

void findfat_opts_default(struct findfat_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = FINDFAT_AUTO;
	o->seed = 0x5eedfa7;
}

uint64_t findfat_flashbench_bytes(uint64_t erase_size_bytes,
				  uint64_t blocksize_bytes, unsigned units)
{
	uint64_t rows = 0;

	if (blocksize_bytes == 0)
		return 0;
	/* flashbench halves from the erase size while len >= blocksize */
	for (uint64_t len = erase_size_bytes; len >= blocksize_bytes; len /= 2)
		rows++;
	return rows * units * erase_size_bytes;
}

static double clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* ------------------------------------------------------------------ */
/* Planning */

/* The largest of 16 KiB, 8 KiB, ... (not below a sector) that divides the
 * unit at least min_chunks times. */
static uint64_t default_blocksize(uint64_t erase, uint32_t sector,
				  uint64_t min_chunks)
{
	uint64_t b = FINDFAT_DEFAULT_BLOCK;

	while (b > sector && (erase % b || erase / b < min_chunks))
		b /= 2;
	return b < sector ? sector : b;
}

/* Chunk sizes E, E/2, ... down to B, as long as they stay whole sectors. */
static size_t manual_rows(uint64_t erase, uint64_t block, uint32_t sector,
			  uint64_t *chunk)
{
	return util_chunk_ladder(erase, block, sector, chunk, FINDFAT_MAX_ROWS);
}

static int plan_manual(const struct findfat_opts *o, uint32_t sector,
		       struct findfat_plan *p)
{
	uint64_t e = p->erase_size_bytes, b = o->blocksize_bytes;

	if (!b)
		b = default_blocksize(e, sector, 1);
	p->blocksize_bytes = b;
	p->min_units = p->max_units = o->units ? o->units : FINDFAT_MANUAL_UNITS;
	if (p->max_units > FINDFAT_MAX_UNITS)
		return -EINVAL;
	p->nrows = manual_rows(e, b, sector, NULL);
	p->max_write_bytes = p->nrows * p->max_units * e;
	return 0;
}

/* Automatic: leading units in whole batches, up to FINDFAT_AUTO_LEAD_UNITS
 * (fewer for big units, to bound the bytes), then the reference units at
 * least FINDFAT_REF_MIN_BYTES in, beyond any FAT area even when the unit
 * size given is much smaller than the card's.  A small device moves the
 * references to its end. */
static int plan_auto(const struct findfat_opts *o, uint32_t sector,
		     uint64_t dev_units, struct findfat_plan *p)
{
	uint64_t e = p->erase_size_bytes, b = o->blocksize_bytes;
	uint64_t lead, ref_first, per_unit;
	unsigned batch, batches;

	if (!b)
		b = default_blocksize(e, sector, FINDFAT_MIN_CHUNKS);
	if (e / b < FINDFAT_MIN_CHUNKS_USER)
		return -EINVAL;
	p->blocksize_bytes = b;
	batch = p->min_units = o->units ? o->units : FINDFAT_BATCH_UNITS;
	p->ref_units = FINDFAT_REF_UNITS;
	if (batch < 2 || batch + p->ref_units > FINDFAT_MAX_UNITS)
		return -EINVAL;
	lead = o->max_units;
	if (!lead) {
		lead = FINDFAT_AUTO_BUDGET_BYTES / e;
		lead = lead > p->ref_units ? lead - p->ref_units : 0;
		lead = lead < FINDFAT_AUTO_LEAD_UNITS ? lead : FINDFAT_AUTO_LEAD_UNITS;
	}
	batches = lead / batch ? (unsigned)(lead / batch) : 1;
	ref_first = (FINDFAT_REF_MIN_BYTES + e - 1) / e;
	ref_first = ref_first > (uint64_t)batches * batch ? ref_first :
		    (uint64_t)batches * batch;
	if (ref_first + p->ref_units > dev_units) {
		if (dev_units < batch + p->ref_units)
			return -ENOSPC;
		ref_first = dev_units - p->ref_units;
		if (batches > ref_first / batch)
			batches = (unsigned)(ref_first / batch);
	}
	p->max_lead_units = batches * batch;
	p->max_units = (unsigned)(ref_first + p->ref_units);
	if (p->max_lead_units + p->ref_units > FINDFAT_MAX_UNITS ||
	    p->max_lead_units + batches * p->ref_units > FINDFAT_MAX_ENTRIES)
		return -EINVAL;
	p->samples = o->samples ? o->samples : FINDFAT_SAMPLES;
	if (p->samples > e / b)
		p->samples = (unsigned)(e / b);
	if (p->samples < 3)
		return -EINVAL;
	p->nrows = 2;
	/* every unit once whole, every batch a sample of its units and of
	 * the references; or, on cards that do not collapse and settle on
	 * "none" after the first batch, that batch and its confirmation
	 * (each unit once more whole and a run of in-order chunks) */
	per_unit = e + p->samples * b;
	p->max_write_bytes = (uint64_t)(p->max_lead_units + p->ref_units) * e +
		(uint64_t)(p->max_lead_units + batches * p->ref_units) *
		p->samples * b;
	if (p->max_write_bytes < 2 * (uint64_t)(batch + p->ref_units) * per_unit)
		p->max_write_bytes = 2 * (uint64_t)(batch + p->ref_units) * per_unit;
	return 0;
}

int findfat_plan(uint64_t device_bytes, uint32_t sector_bytes,
		 const struct findfat_opts *o, struct findfat_plan *p)
{
	uint64_t e = o->erase_size_bytes, b = o->blocksize_bytes;
	int ret;

	memset(p, 0, sizeof(*p));
	if (sector_bytes == 0 || e == 0 || e % sector_bytes)
		return -EINVAL;
	if (e > FINDFAT_MAX_ERASE_BYTES)
		return -E2BIG;
	if (b && (b % sector_bytes || e % b))
		return -EINVAL;
	p->erase_size_bytes = e;
	if (o->mode == FINDFAT_MANUAL)
		ret = plan_manual(o, sector_bytes, p);
	else
		ret = plan_auto(o, sector_bytes, device_bytes / e, p);
	if (ret < 0)
		return ret;
	if (p->max_units > device_bytes / e)
		return -ENOSPC;
	p->start_bytes = 0;
	p->end_bytes = p->max_units * e;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Measuring */

static void progress(struct findfat_ctx *c, uint64_t bytes)
{
	c->done_bytes += bytes;
	if (c->o->progress)
		c->o->progress(c->o->progress_arg, c->done_bytes,
			       c->r->plan.max_write_bytes);
}

static int timed_write(struct findfat_ctx *c, uint64_t off, uint64_t len,
		       double *ns)
{
	uint64_t t = 0;
	int ret = fp_dev_write_timed(c->d, c->buf, len, off, &t);

	if (ret < 0)
		return ret;
	c->r->elapsed_ns += t;
	*ns = (double)t;
	return 0;
}

static double rate(uint64_t bytes, double ns)
{
	return ns > 0 ? (double)bytes * 1e9 / ns : 0;
}

/* Chunk order: identity, or a seeded random permutation (flashbench uses
 * an LFSR; any fixed permutation serves). */
static void make_order(struct findfat_ctx *c, uint32_t n, bool random)
{
	if (random) {
		stats_permutation(&c->rng, c->order, n);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		c->order[i] = i;
}

/* flashbench --findfat: for every chunk size, every unit written
 * completely in chunks, one column per unit. */
static int run_manual(struct findfat_ctx *c)
{
	struct findfat_result *r = c->r;
	uint64_t chunk[FINDFAT_MAX_ROWS];
	int ret;

	r->nrows = manual_rows(r->erase_size_bytes, r->blocksize_bytes,
			       fp_dev_sector_bytes(c->d), chunk);
	r->ncols = r->plan.max_units;
	for (unsigned u = 0; u < r->ncols; u++)
		r->col_unit[u] = u;
	for (size_t i = 0; i < r->nrows; i++) {
		struct findfat_row *row = &r->rows[i];
		uint32_t n = (uint32_t)(r->erase_size_bytes / chunk[i]);

		row->chunk_bytes = chunk[i];
		row->random = c->o->random;
		row->writes_per_unit = n;
		for (unsigned u = 0; u < r->ncols; u++) {
			uint64_t base = (uint64_t)u * r->erase_size_bytes;
			double sum = 0;

			make_order(c, n, c->o->random);
			for (uint32_t j = 0; j < n; j++) {
				ret = timed_write(c, base + (uint64_t)c->order[j] *
						  chunk[i], chunk[i], &c->times[j]);
				if (ret < 0)
					return ret;
				sum += c->times[j];
			}
			row->bytes_per_sec[u] = rate(r->erase_size_bytes, sum);
			row->write_ns[u] = stats_median(c->times, n);
			progress(c, r->erase_size_bytes);
		}
	}
	return 0;
}

/* The sample of a unit: k chunks at random, one in each k-th of the unit
 * (so two units' samples differ by less than a k-th at every step and
 * their copy costs compare), listed from the top down so that every write
 * lands below the one before it and is out of order for the card. */
static void pick_sample(struct findfat_ctx *c, uint32_t *out, uint32_t k)
{
	uint64_t chunks = c->r->erase_size_bytes / c->r->blocksize_bytes;

	for (uint32_t i = 0; i < k; i++) {
		uint32_t stratum = k - 1 - i;
		uint64_t lo = chunks * stratum / k, hi = chunks * (stratum + 1) / k;

		out[i] = (uint32_t)(lo + stats_rng_below(&c->rng, hi - lo));
	}
}

/* The column of unit u, added in ascending unit order on first use. */
static unsigned column_of(struct findfat_result *r, unsigned u)
{
	unsigned i = r->ncols;

	for (unsigned j = 0; j < r->ncols; j++)
		if (r->col_unit[j] == u)
			return j;
	/* leading units come before the references, which are last */
	while (i > 0 && r->col_unit[i - 1] > u) {
		r->col_unit[i] = r->col_unit[i - 1];
		for (size_t k = 0; k < r->nrows; k++) {
			r->rows[k].bytes_per_sec[i] = r->rows[k].bytes_per_sec[i - 1];
			r->rows[k].write_ns[i] = r->rows[k].write_ns[i - 1];
		}
		i--;
	}
	r->col_unit[i] = u;
	r->ncols++;
	return i;
}

/* Write unit u whole; the log of its time goes to *large and, with
 * show, its rate to the large row. */
static int write_whole(struct findfat_ctx *c, unsigned u, bool show,
		       double *large)
{
	struct findfat_result *r = c->r;
	uint64_t e = r->erase_size_bytes;
	unsigned col = column_of(r, u);
	double ns;
	int ret = timed_write(c, (uint64_t)u * e, e, &ns);

	if (ret < 0)
		return ret;
	if (show) {
		r->rows[0].bytes_per_sec[col] = rate(e, ns);
		r->rows[0].write_ns[col] = ns;
	}
	*large = log(ns > 1 ? ns : 1);
	progress(c, e);
	return 0;
}

/* Fill unit u's column of row and entry e of the levels lv: the log of
 * the median write time, its standard error, and the share of writes more
 * than FINDFAT_MIN_RATIO off the median (a unit that straddles the area's
 * end, when the unit size does not match the card's, mixes fast and slow
 * writes).  The k write times in t become logs. */
static void small_level(struct findfat_ctx *c, struct findfat_row *row,
			struct findfat_levels *lv, unsigned u, double *t,
			uint32_t k, unsigned e)
{
	unsigned col = column_of(c->r, u), off = 0;
	double sum = 0;

	for (uint32_t i = 0; i < k; i++)
		sum += t[i];
	row->bytes_per_sec[col] = rate((uint64_t)k * row->chunk_bytes, sum);
	row->write_ns[col] = stats_median(t, k);
	for (uint32_t i = 0; i < k; i++)
		t[i] = log(t[i] > 1 ? t[i] : 1);
	lv->level[e] = stats_median(t, k);
	lv->se[e] = stats_median_se(t, k);
	for (uint32_t i = 0; i < k; i++)
		off += fabs(t[i] - lv->level[e]) > log(FINDFAT_MIN_RATIO);
	lv->mixed[e] = (double)off / k;
	lv->unit[e] = u;
}

/* Where a whole-unit sample of batch entry i goes: the unit's slot in
 * large (leading units at their index, references after max_lead_units). */
static unsigned large_slot(const struct findfat_plan *p, unsigned first,
			   unsigned n, unsigned i)
{
	return i < n ? first + i : p->max_lead_units + (i - n);
}

/* A batch being measured: its units, sample positions and write times
 * (k per unit, m units: the leading ones, then the references), and how
 * many rounds of small writes are done. */
struct findfat_batch {
	unsigned first, n, m, nref0;	/* nref0: reference entries before it */
	bool confirm;
	uint32_t k, rounds;
	unsigned unit[FINDFAT_MAX_UNITS];
	uint32_t *pos;
	double *t;
	double *logt;			/* one unit's times, as levels */
};

/* One batch: leading units [first, first + n) and the references.
 *
 * The batches proper (confirm false): the leading units written whole,
 * the references too on the first batch, then k rounds of one small write
 * per unit at random positions, interleaved, visiting the highest unit
 * first; levels go to c->lv and the small random row.
 *
 * The confirmation (confirm true), run on cards whose normal units do not
 * collapse, so that leading units and references are compared like with
 * like in what a FAT area changes besides random writes: every unit of
 * the batch is written whole once more (a second sample of the large row)
 * and then gets k in-order chunks from its start, interleaved, visiting
 * the lowest unit first (the other order).  The first chunk restarts the
 * unit's write cycle and is left out; the others are plain page programs,
 * which a FAT area may do slower (seed 004: whole writes 2-4x slower).
 * Levels go to c->lin and the small in-order row.
 *
 * batch_start() writes the whole units and picks every position;
 * batch_rounds() writes rounds up to a count and (re)computes the batch's
 * levels from all rounds done, so a batch can be read after its first
 * rounds and continued with the very writes it would have made at once. */
static int batch_start(struct findfat_ctx *c, struct findfat_batch *b,
		       unsigned first, unsigned n, bool confirm)
{
	struct findfat_result *r = c->r;
	const struct findfat_plan *p = &r->plan;
	unsigned nref = p->ref_units;

	memset(b, 0, sizeof(*b));
	b->first = first;
	b->n = n;
	b->m = n + nref;
	b->confirm = confirm;
	b->k = p->samples;
	b->nref0 = (confirm ? &c->lin : &c->lv)->nref;
	b->pos = malloc((size_t)b->m * b->k * sizeof(*b->pos));
	b->t = malloc((size_t)b->m * b->k * sizeof(*b->t));
	b->logt = malloc(b->k * sizeof(*b->logt));
	if (b->pos == NULL || b->t == NULL || b->logt == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < b->m; i++)
		b->unit[i] = i < n ? first + i : p->max_units - nref + (i - n);	/* refs last */
	for (unsigned i = 0; i < b->m; i++) {
		unsigned slot = large_slot(p, first, n, i);
		double large;

		if (confirm || i < n || first == 0) {
			int ret = write_whole(c, b->unit[i], !confirm, &large);

			if (ret < 0)
				return ret;
			if (confirm)
				c->large2_sum[slot] += large, c->large2_n[slot]++;
			else
				c->lv.large[slot] = large;
		}
		if (confirm)
			for (uint32_t j = 0; j < b->k; j++)
				b->pos[i * b->k + j] = j;
		else
			pick_sample(c, &b->pos[i * b->k], b->k);
	}
	return 0;
}

static int batch_rounds(struct findfat_ctx *c, struct findfat_batch *b,
			uint32_t upto)
{
	struct findfat_result *r = c->r;
	struct findfat_levels *lv = b->confirm ? &c->lin : &c->lv;
	struct findfat_row *row = &r->rows[b->confirm ? 2 : 1];
	unsigned skip = b->confirm ? 1 : 0, m = b->m;
	uint32_t k = b->k;

	for (uint32_t j = b->rounds; j < upto; j++) {
		for (unsigned v = 0; v < m; v++) {
			unsigned i = b->confirm ? v : m - 1 - v;
			uint64_t off = (uint64_t)b->unit[i] * r->erase_size_bytes +
				       (uint64_t)b->pos[i * k + j] * r->blocksize_bytes;
			int ret = timed_write(c, off, r->blocksize_bytes, &b->t[i * k + j]);

			if (ret < 0)
				return ret;
		}
		progress(c, m * r->blocksize_bytes);
	}
	if (b->rounds == 0) {
		/* levels: leading units at their index, reference entries
		 * after all leading units (moved up when the next batch
		 * arrives) */
		unsigned first = b->first, n = b->n;

		memmove(&lv->level[first + n], &lv->level[first], lv->nref * sizeof(double));
		memmove(&lv->se[first + n], &lv->se[first], lv->nref * sizeof(double));
		memmove(&lv->mixed[first + n], &lv->mixed[first], lv->nref * sizeof(double));
		memmove(&lv->unit[first + n], &lv->unit[first], lv->nref * sizeof(unsigned));
		lv->nlead = first + n;
		lv->nref += m - n;
	}
	b->rounds = upto;
	row->writes_per_unit = upto - skip;
	for (unsigned i = 0; i < m; i++) {
		memcpy(b->logt, &b->t[i * k + skip], (upto - skip) * sizeof(double));
		small_level(c, row, lv, b->unit[i], b->logt, upto - skip,
			    i < b->n ? b->first + i : b->first + b->n + b->nref0 + (i - b->n));
	}
	return 0;
}

static void batch_free(struct findfat_batch *b)
{
	free(b->pos);
	free(b->t);
	free(b->logt);
	b->pos = NULL;
	b->t = NULL;
	b->logt = NULL;
}

/* A whole batch at once. */
static int measure_batch(struct findfat_ctx *c, unsigned first, unsigned n,
			 bool confirm)
{
	struct findfat_batch b;
	int ret = batch_start(c, &b, first, n, confirm);

	if (ret == 0)
		ret = batch_rounds(c, &b, b.k);
	batch_free(&b);
	return ret;
}

/* The confirmation of the first batch (see measure_batch). */
static int measure_confirm(struct findfat_ctx *c)
{
	struct findfat_result *r = c->r;
	struct findfat_row *row = &r->rows[2];
	int ret;

	row->chunk_bytes = r->blocksize_bytes;
	row->random = false;
	r->nrows = 3;
	ret = measure_batch(c, 0, r->plan.min_units, true);
	c->confirmed = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Deciding */

/* Median of v over [0, a) and [b, n). */
static double median_outside(const double *v, unsigned n, unsigned a,
			     unsigned b)
{
	double t[FINDFAT_MAX_ENTRIES];
	size_t m = 0;

	for (unsigned u = 0; u < n; u++)
		if (u < a || u >= b)
			t[m++] = v[u];
	return stats_median(t, m);
}

/* "unit 3" or "units 0-5", for notes. */
static const char *unit_range(const struct findfat_split *sp, char *buf,
			      size_t len)
{
	if (sp->k == 1)
		snprintf(buf, len, "unit %u", sp->s);
	else
		snprintf(buf, len, "units %u-%u", sp->s, sp->s + sp->k - 1);
	return buf;
}

static const char *are(const struct findfat_split *sp)
{
	return sp->k == 1 ? "is" : "are";
}

static bool in_area(const struct findfat_split *sp, unsigned u)
{
	return u >= sp->s && u < sp->s + sp->k;
}

/* Area [s, s + k) of v[0..n); everything else is normal. */
static void split_eval(const double *v, unsigned n, unsigned s, unsigned k,
		       struct findfat_split *sp)
{
	sp->s = s;
	sp->k = k;
	sp->area = stats_median(v + s, k);
	sp->normal = median_outside(v, n, s, s + k);
	sp->cost = 0;
	for (unsigned u = 0; u < n; u++)
		sp->cost += fabs(v[u] - (in_area(sp, u) ? sp->area : sp->normal));
}

/* The split of the leading units that fits the levels best. */
static void best_split(const struct findfat_levels *lv,
		       struct findfat_split *best)
{
	unsigned n = lv->nlead + lv->nref;
	struct findfat_split sp;

	best->cost = INFINITY;
	best->k = 0;
	for (unsigned s = 0; s <= 1; s++) {
		for (unsigned k = 1; k <= FINDFAT_MAX_AREA_UNITS &&
		     s + k <= lv->nlead; k++) {
			split_eval(lv->level, n, s, k, &sp);
			if (sp.cost < best->cost)
				*best = sp;
		}
	}
}

/* Spread of the levels around their group's median, as a standard
 * deviation; never below the typical standard error of one level nor the
 * floor. */
static double split_noise(const double *v, const double *se, unsigned n,
			  const struct findfat_split *sp)
{
	double res[FINDFAT_MAX_ENTRIES], s;

	for (unsigned u = 0; u < n; u++)
		res[u] = v[u] - (in_area(sp, u) ? sp->area : sp->normal);
	s = stats_mad_sigma(res, n);
	if (se) {
		double m = stats_median(se, n);

		s = m > s ? m : s;
	}
	return s > FINDFAT_NOISE_FLOOR ? s : FINDFAT_NOISE_FLOOR;
}

/* The worst level's distance from the midpoint between area and normal
 * level, on its own side, in noise units (negative: on the wrong side).
 * A normal unit slower than normal is on its side. */
static double split_margin(const double *v, const double *se, unsigned n,
			   const struct findfat_split *sp, double noise)
{
	double mid = (sp->area + sp->normal) / 2, worst = INFINITY;
	double dir = sp->normal > sp->area ? 1 : -1;

	for (unsigned u = 0; u < n; u++) {
		double m = dir * (in_area(sp, u) ? mid - v[u] : v[u] - mid);
		double sd = se ? sqrt(noise * noise + se[u] * se[u]) : noise;

		worst = m / sd < worst ? m / sd : worst;
	}
	return worst;
}

/* Whole-unit write times in split order: leading units, then refs. */
static unsigned large_levels(const struct findfat_ctx *c, double *v)
{
	const struct findfat_levels *lv = &c->lv;
	unsigned n = lv->nlead;

	for (unsigned i = 0; i < n + c->r->plan.ref_units; i++) {
		unsigned slot = i < n ? i : c->r->plan.max_lead_units + (i - n);

		/* the mean of the logs of every sample of the unit */
		v[i] = (lv->large[slot] + c->large2_sum[slot]) /
		       (1 + c->large2_n[slot]);
	}
	return n + c->r->plan.ref_units;
}

/* How clearly do the normal units pay about a unit copy per small random
 * write, 0 (a page-sized cost: random-capable) to 1? */
static double collapse_degree(const struct findfat_ctx *c,
			      const struct findfat_split *sp)
{
	const struct findfat_levels *lv = &c->lv;
	double large[FINDFAT_MAX_UNITS];
	unsigned nl = large_levels(c, large);
	double chunks = (double)c->r->erase_size_bytes / (double)c->r->blocksize_bytes;
	double small = median_outside(lv->level, lv->nlead + lv->nref,
				      sp->s, sp->s + sp->k);
	double whole = median_outside(large, nl, sp->s, sp->s + sp->k);
	double kappa = exp(small - whole);

	return fmin(clamp01((kappa - FINDFAT_COLLAPSE) /
			    (FINDFAT_COLLAPSE_FULL - FINDFAT_COLLAPSE)),
		    clamp01(log(kappa * chunks / FINDFAT_COLLAPSE_CHUNKS) /
			    log(FINDFAT_COLLAPSE_CHUNKS_FULL / FINDFAT_COLLAPSE_CHUNKS)));
}

/* Does the whole-unit row step at the same boundary? */
static bool large_agrees(const struct findfat_ctx *c,
			 const struct findfat_split *sp)
{
	double large[FINDFAT_MAX_UNITS], noise;
	unsigned nl = large_levels(c, large);
	struct findfat_split l;

	split_eval(large, nl, sp->s, sp->k, &l);
	if (fabs(l.normal - l.area) < log(FINDFAT_LARGE_RATIO))
		return false;
	noise = split_noise(large, NULL, nl, &l);
	return split_margin(large, NULL, nl, &l, noise) >= 2.0;
}

/* Before saying "none": units that disagree with the rest although no
 * area stands out (some faster, pool effects), or leading units whose
 * whole-unit writes differ a lot (seed 004's area is 2-4x slower there),
 * mean the card does something the levels do not explain.  Returns the
 * cap on "none" and says what in note, or 1.  A unit that takes small
 * random writes FINDFAT_MIN_RATIO times faster than the rest is what a
 * FAT area does, so there "none" stays well below trusted (an
 * independent card model's 32 MiB area, one unit 191-246x faster than
 * the rest, gave "none" at 0.60). */
static double doubt_none(const struct findfat_ctx *c, double noise, char *note,
			 size_t len)
{
	const struct findfat_levels *lv = &c->lv;
	unsigned n = lv->nlead + lv->nref;
	double med = stats_median(lv->level, n);
	double lim = fmax(log(FINDFAT_QUIET_RATIO), FINDFAT_Z_MIN * noise);
	double large[FINDFAT_MAX_UNITS], lnoise;
	unsigned nl = large_levels(c, large);
	struct findfat_levels tmp;
	struct findfat_split l;

	for (unsigned u = 0; u < n; u++) {
		if (fabs(lv->level[u] - med) > lim) {
			snprintf(note, len, "units disagree at small random writes "
				 "(one %.1fx off the rest) though no area stands out",
				 exp(fabs(lv->level[u] - med)));
			return med - lv->level[u] >= log(FINDFAT_MIN_RATIO) ?
			       FINDFAT_ODD_CAP : FINDFAT_DOUBT_CAP;
		}
	}
	/* the whole-unit row, split like the levels */
	tmp.nlead = lv->nlead;
	tmp.nref = nl - lv->nlead;
	memcpy(tmp.level, large, nl * sizeof(double));
	best_split(&tmp, &l);
	lnoise = split_noise(large, NULL, nl, &l);
	if (fabs(l.normal - l.area) >= log(FINDFAT_LARGE_DOUBT) &&
	    split_margin(large, NULL, nl, &l, lnoise) >= 2.0) {
		char units[32];

		snprintf(note, len, "whole-unit writes to %s take %.1fx the "
			 "time of the rest, though small random writes do not differ",
			 unit_range(&l, units, sizeof(units)),
			 exp(l.area - l.normal));
		return FINDFAT_DOUBT_CAP;
	}
	return 1;
}

/* How well one row of levels (leading units 0..nlead-1, then the
 * references) says "the start does not behave like a FAT area": over
 * every split a FAT area could take, the largest difference (dir 0),
 * or the largest in one direction (dir +1: the area slower), in that
 * split's noise units; 1 up to FINDFAT_AGREE_SIGMAS, 0 from one noise unit
 * more on (FINDFAT_Z_MIN, where an area would count as found).  Whole-unit
 * writes are judged one way: the start faster there (the pool's state can
 * make it: a whole write pays for closing whichever unit it evicts) is no
 * FAT area, which is slower there if anything.  *noise: the row's noise
 * around its best-fitting split; *ratio: the most FAT-like split's
 * area / normal time. */
static double row_agreement(const double *v, const double *se, unsigned nlead,
			    unsigned n, double dir, double *noise, double *ratio)
{
	struct findfat_levels tmp;
	struct findfat_split sp;
	double worst = -INFINITY;

	tmp.nlead = nlead;
	tmp.nref = n - nlead;
	memcpy(tmp.level, v, n * sizeof(double));
	best_split(&tmp, &sp);
	*noise = split_noise(v, se, n, &sp);
	*ratio = 1;
	for (unsigned s = 0; s <= 1; s++) {
		for (unsigned k = 1; k <= FINDFAT_MAX_AREA_UNITS && s + k <= nlead; k++) {
			double z;

			split_eval(v, n, s, k, &sp);
			z = (dir ? dir * (sp.area - sp.normal) :
			     fabs(sp.area - sp.normal)) / split_noise(v, se, n, &sp);
			if (z > worst) {
				worst = z;
				*ratio = exp(sp.area - sp.normal);
			}
		}
	}
	return clamp01(FINDFAT_AGREE_SIGMAS + 1 - worst);
}

/* Whole-unit write levels for the confirmation, in split order: per unit
 * the faster of the batches' sample and the confirmation's.  A whole write
 * may pay for closing the unit it evicts from the pool (what earlier
 * tests, open-au in probe, left open), which only ever adds time; the
 * confirmation's whole writes mostly go to units the batches have just
 * left in the pool and evict nothing. */
static unsigned confirm_large_levels(const struct findfat_ctx *c, double *v)
{
	const struct findfat_levels *lv = &c->lv;
	unsigned n = lv->nlead;

	for (unsigned i = 0; i < n + c->r->plan.ref_units; i++) {
		unsigned slot = i < n ? i : c->r->plan.max_lead_units + (i - n);

		v[i] = lv->large[slot];
		if (c->large2_n[slot])
			v[i] = fmin(v[i], c->large2_sum[slot] / c->large2_n[slot]);
	}
	return n + c->r->plan.ref_units;
}

/* How well noise sigma could have shown a difference of ratio: 1 when it
 * lies FINDFAT_Z_MIN noise units clear at the noise floor's resolution,
 * 0 when it would not clear FINDFAT_Z_MIN noise units at all. */
static double row_resolution(double sigma, double ratio)
{
	return clamp01((log(ratio) - FINDFAT_Z_MIN * sigma) /
		       (log(ratio) - FINDFAT_Z_MIN * FINDFAT_NOISE_FLOOR));
}

/* "None" on a card whose normal units do not collapse, from the
 * confirmation: small random writes (the batches, highest unit first),
 * small in-order writes and whole-unit writes (the confirmation, lowest
 * unit first) must all match between leading units and references, and
 * the rows must be quiet enough that a FINDFAT_QUIET_RATIO difference
 * would have shown (the whole-unit row, one request per sample, against
 * FINDFAT_LARGE_RATIO).  Says in note what spoiled it. */
static double none_without_collapse(const struct findfat_ctx *c,
				    double noise, bool *agree, char *note,
				    size_t len)
{
	const struct findfat_levels *lv = &c->lv, *lin = &c->lin;
	double large[FINDFAT_MAX_UNITS], sr, sl, sw, rr, rl, rw, a, res;
	unsigned nl = confirm_large_levels(c, large);

	a = row_agreement(lv->level, lv->se, lv->nlead, lv->nlead + lv->nref,
			  0, &sr, &rr);
	sr = fmax(sr, noise);
	a = fmin(a, row_agreement(lin->level, lin->se, lin->nlead,
				  lin->nlead + lin->nref, 0, &sl, &rl));
	a = fmin(a, row_agreement(large, NULL, lv->nlead, nl, 1, &sw, &rw));
	res = fmin(fmin(row_resolution(sr, FINDFAT_QUIET_RATIO),
			row_resolution(sl, FINDFAT_QUIET_RATIO)),
		   row_resolution(sw, FINDFAT_LARGE_RATIO));
	*agree = a >= 1;
	if (!*agree) {
		snprintf(note, len, "leading units take %.2fx the time of the rest "
			 "at small random, %.2fx at small in-order, %.2fx at whole-unit "
			 "writes: too close to rule out a FAT area", rr, rl, rw);
		return FINDFAT_NONE_BASE * a;
	}
	if (res < 1)
		snprintf(note, len, "the levels are too noisy (%.0f%%, %.0f%%, "
			 "%.0f%% between units) to rule out a small difference at "
			 "the start", 100 * sr, 100 * sl, 100 * sw);
	return FINDFAT_NONE_BASE + FINDFAT_NONE_SPAN * res;
}

/* "None" from the confirmation rests on no write having slowed down
 * anywhere: a write buffer larger than what the test wrote looks the same
 * (every write fast, leading units like the rest), so it is trusted only
 * after FP_WBUF_HIDE_BYTES of writes; below, it stays under trusted. */
static void cap_unbuffered_none(const struct findfat_ctx *c,
				struct findfat_verdict *v)
{
	if (v->confidence >= FINDFAT_TRUSTED &&
	    util_wbuf_may_hide(c->done_bytes, "write slowed down", v->note, sizeof(v->note)))
		v->confidence = FINDFAT_WBUF_CAP;
}

/* "none" where normal units collapse (col of them, on levels quiet). */
static double none_by_collapse(double quiet, double col)
{
	return FINDFAT_TRUSTED + FINDFAT_COLLAPSE_SPAN * quiet * col;
}

/* Nothing faster stands out.  How sure that there is no area depends on
 * how quiet the levels are, on the noise (an area FINDFAT_FULL_RATIO times
 * faster must have been able to clear FINDFAT_Z_MIN noise units), and on
 * whether an area could have stood out at all (normal units collapse). */
static void verdict_none(struct findfat_ctx *c, const struct findfat_split *sp,
			 double noise, struct findfat_verdict *v)
{
	double d = sp->normal - sp->area;
	double excess = fabs(d) - 2 * noise;
	double quiet = clamp01(1 - (excess > 0 ? excess : 0) /
			       log(FINDFAT_QUIET_RATIO));
	double visible = clamp01((log(FINDFAT_FULL_RATIO) - FINDFAT_Z_MIN * noise) /
				 (log(FINDFAT_FULL_RATIO) - log(FINDFAT_MIN_RATIO)));
	double col = collapse_degree(c, sp), doubt;

	v->found = false;
	v->settled = true;	/* more leading units cannot change this */
	v->collapse = col > 0;
	v->col_degree = col;
	if (d > -log(FINDFAT_MIN_RATIO) && visible == 1 &&
	    (doubt = doubt_none(c, noise, v->note, sizeof(v->note))) < 1) {
		v->confidence = doubt *
				(FINDFAT_TRUSTED + (1 - FINDFAT_TRUSTED) * col) * quiet;
		return;
	}
	if (d <= -log(FINDFAT_MIN_RATIO)) {
		char units[32];

		snprintf(v->note, sizeof(v->note),
			 "%s %s slower at small random writes: leading units "
			 "differ, but not as a FAT area does",
			 unit_range(sp, units, sizeof(units)), are(sp));
		v->confidence = FINDFAT_ODD_CAP * visible;
	} else if (visible < 1) {
		snprintf(v->note, sizeof(v->note),
			 "levels too noisy (%.0f%% between units) to see an area",
			 100 * noise);
		v->confidence = FINDFAT_NOISY_CAP * visible * quiet;
	} else if (c->confirmed) {
		/* the confirmation raises a belief where every row agrees;
		 * where one does not, a partial collapse keeps its own
		 * (whole-unit writes on small pools carry the pool's state) */
		bool agree;
		double w = none_without_collapse(c, noise, &agree, v->note,
						 sizeof(v->note));
		double by_col = col > 0 ? none_by_collapse(quiet, col) : 0;

		v->confidence = agree ? fmax(by_col, w) : col > 0 ? by_col : w;
		if (col > 0 && (!agree || by_col > w))
			v->note[0] = '\0';
		if (col == 0)
			cap_unbuffered_none(c, v);
	} else if (col > 0) {
		v->confidence = none_by_collapse(quiet, col);
	} else {
		snprintf(v->note, sizeof(v->note),
			 "normal units take small random writes without a unit copy: a FAT area would not stand out");
		v->confidence = FINDFAT_GUESS_BASE + FINDFAT_GUESS_SPAN * quiet;
	}
}

static double found_confidence(double d, double margin, unsigned trailing,
			       bool agrees)
{
	double ratio = clamp01((d - log(FINDFAT_MIN_RATIO)) /
			       (log(FINDFAT_FULL_RATIO) - log(FINDFAT_MIN_RATIO)));
	double sep = clamp01((margin - FINDFAT_SEP_MIN) /
			     (FINDFAT_SEP_FULL - FINDFAT_SEP_MIN));
	double run = clamp01((double)trailing / FINDFAT_NORMAL_RUN);

	return FINDFAT_TRUSTED + FINDFAT_FOUND_SPAN * fmin(ratio, sep) * run +
	       (agrees ? FINDFAT_LARGE_BONUS : 0);
}

/* Whether a leading unit right before or after the area looks like
 * part of it: faster than the normal units by FINDFAT_QUIET_RATIO at
 * small random writes (what spoils "none" spoils a clean edge too), or,
 * for the unit before it, where the area's whole-unit writes differ from
 * the normal units' (by FINDFAT_LARGE_RATIO, either way), closer to the
 * area's at those.  A unit of the area that the card charged for the
 * writes after it stands out at small writes only (the independent card
 * model: unit 0 of an 8 MiB area 1.42x faster than normal units at small
 * writes, 4x at whole units like the rest of the area; "4MiB at unit 1"
 * at 0.94).  Not the unit after: the units past an area may keep some of
 * its whole-unit speed (the card's pool), which says nothing.  *which:
 * its unit. */
static bool neighbour_fast(const struct findfat_ctx *c, const struct findfat_split *sp,
			   unsigned *which)
{
	const struct findfat_levels *lv = &c->lv;
	unsigned side[2] = { sp->s - 1, sp->s + sp->k };
	double large[FINDFAT_MAX_UNITS];
	unsigned nl = large_levels(c, large);
	struct findfat_split l;

	split_eval(large, nl, sp->s, sp->k, &l);
	for (unsigned i = sp->s ? 0 : 1; i < 2; i++) {
		unsigned e = side[i];
		bool like_area = i == 0 && e < nl &&
				 fabs(l.area - l.normal) >= log(FINDFAT_LARGE_RATIO) &&
				 fabs(large[e] - l.area) < fabs(large[e] - l.normal);

		if (e < lv->nlead && (lv->level[e] < sp->normal - log(FINDFAT_QUIET_RATIO) ||
				      like_area)) {
			*which = lv->unit[e];
			return true;
		}
	}
	return false;
}

/* Read the levels measured so far. */
static void decide(struct findfat_ctx *c, struct findfat_verdict *v)
{
	const struct findfat_levels *lv = &c->lv;
	unsigned n = lv->nlead + lv->nref, trailing, fast_unit;
	struct findfat_split sp;
	double noise, d, margin;

	memset(v, 0, sizeof(*v));
	v->contrast = 1;
	best_split(lv, &sp);
	noise = split_noise(lv->level, lv->se, n, &sp);
	d = sp.normal - sp.area;
	v->noise = noise;
	if (d < log(FINDFAT_MIN_RATIO) || d < FINDFAT_Z_MIN * noise) {
		verdict_none(c, &sp, noise, v);
		return;
	}
	margin = split_margin(lv->level, lv->se, n, &sp, noise);
	trailing = lv->nlead - (sp.s + sp.k);
	v->contrast = exp(d);
	v->collapse = collapse_degree(c, &sp) > 0;
	v->settled = trailing >= FINDFAT_NORMAL_RUN ||
		     lv->nlead >= c->r->plan.max_lead_units;
	if (margin < FINDFAT_SEP_MIN) {
		/* faster units exist but do not form one clean block */
		char units[32];

		snprintf(v->note, sizeof(v->note),
			 "%s %s faster, but some units lie between FAT-area and normal speed",
			 unit_range(&sp, units, sizeof(units)), are(&sp));
		v->confidence = FINDFAT_UNCLEAN_CAP * clamp01(margin / FINDFAT_SEP_MIN);
		return;
	}
	if (neighbour_fast(c, &sp, &fast_unit)) {
		/* a unit next to the area is FAT-fast too, only less so: a card
		 * that charges the test's own order of writes inside its FAT
		 * area (the independent card model's seed 505: unit 0 of a
		 * 2 MiB area 3.4x faster than normal units, unit 1 4.5x faster
		 * again, read as "1MiB at unit 1" at 0.94-0.99) */
		char units[32];

		snprintf(v->note, sizeof(v->note), "%s %s faster, and unit %u next to "
			 "them is faster than normal units too", unit_range(&sp, units,
			 sizeof(units)), are(&sp), fast_unit);
		v->confidence = FINDFAT_UNCLEAN_CAP;
		return;
	}
	v->found = true;
	v->start = sp.s;
	v->count = sp.k;
	v->large_agrees = large_agrees(c, &sp);
	v->confidence = found_confidence(d, margin, trailing, v->large_agrees);
	if (trailing == 0) {
		/* the area may go on: at most just trusted */
		v->confidence = fmin(v->confidence, FINDFAT_TRUSTED);
		snprintf(v->note, sizeof(v->note),
			 "the area reaches the last unit examined and may be larger");
	} else if (trailing < FINDFAT_NORMAL_RUN) {
		snprintf(v->note, sizeof(v->note),
			 "only %u normal units after the area", trailing);
	}
}

/* A unit whose writes split into fast and slow ones: the unit size given
 * does not match the card's, so no answer in these units is sound. */
static void check_mixed(const struct findfat_ctx *c, struct findfat_verdict *v)
{
	const struct findfat_levels *lv = &c->lv;

	for (unsigned e = 0; e < lv->nlead + lv->nref; e++) {
		if (lv->mixed[e] < FINDFAT_MIXED)
			continue;
		v->confidence = fmin(v->confidence, FINDFAT_MIXED_CAP);
		snprintf(v->note, sizeof(v->note),
			 "unit %u mixes fast and slow writes: is the erase size right?",
			 lv->unit[e]);
		return;
	}
}

/* Record the verdict in the result. */
static void apply_verdict(struct findfat_result *r,
			  const struct findfat_verdict *v)
{
	r->found = v->found;
	if (v->found) {
		r->start_bytes = (uint64_t)v->start * r->erase_size_bytes;
		r->size_bytes = (uint64_t)v->count * r->erase_size_bytes;
	}
	r->confidence = clamp01(v->confidence);
	r->contrast = v->contrast;
	r->noise = v->noise;
	r->collapse_seen = v->collapse;
	r->large_agrees = v->large_agrees;
	snprintf(r->note, sizeof(r->note), "%s", v->note);
}

/* Whether a batch's verdict after its first rounds is so clear that the
 * rest of its rounds cannot change it: settled (so this batch is the
 * last), nothing weak about it (no note) and confident, which in noise
 * units means an area at least 2x faster with every unit 4.5 noise units
 * clear of the midpoint, or normal units collapsing on quiet levels (see
 * decide()). */
static bool clear_early(const struct findfat_verdict *v)
{
	return v->settled && !v->note[0] && v->confidence >= FINDFAT_EARLY_CONFIDENCE;
}

/* Whole-unit writes of the references: at least this rank correlation
 * with the order they were written in, and the last two this much slower
 * than the first two, is a trend, not noise (8 references: a correlation
 * of 0.9 by chance is about one in a thousand). */
#define FINDFAT_DRIFT_RHO 0.9
#define FINDFAT_DRIFT_RATIO 1.2

/* Spearman's rank correlation of v[0..n) with 0..n-1 (no ties assumed). */
static double order_correlation(const double *v, unsigned n)
{
	double d2 = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned rank = 0;

		for (unsigned j = 0; j < n; j++)
			rank += v[j] < v[i] || (v[j] == v[i] && j < i);
		d2 += ((double)rank - i) * ((double)rank - i);
	}
	return 1 - 6 * d2 / ((double)n * ((double)n * n - 1));
}

/* A worn card gets slower the more it is written (a throttling one too).
 * The references are normal units written whole one after the other, so
 * on a steady card their times scatter; a steady climb means every write
 * pays a growing extra time, which squeezes the contrast a FAT area needs
 * (a "none" would be wrong) and shifts later batches against earlier
 * ones, so no verdict stands.  Sets c->drift. */
static void check_drift(struct findfat_ctx *c)
{
	const struct findfat_plan *p = &c->r->plan;
	const double *large = &c->lv.large[p->max_lead_units];
	unsigned n = p->ref_units;
	double ratio;

	if (n < 4 || c->drift[0])
		return;
	ratio = exp((large[n - 1] + large[n - 2] - large[0] - large[1]) / 2);
	if (order_correlation(large, n) < FINDFAT_DRIFT_RHO || ratio < FINDFAT_DRIFT_RATIO)
		return;
	snprintf(c->drift, sizeof(c->drift), "whole-unit writes got %.2fx slower "
		 "over the reference units: the card's write time changed during "
		 "the test (worn or throttling), so no verdict stands", ratio);
}

/* A drifting card: undetermined, and no more units examined. */
static void apply_drift(const struct findfat_ctx *c, struct findfat_verdict *v)
{
	if (!c->drift[0])
		return;
	v->found = false;
	v->settled = true;
	v->confidence = 0;
	snprintf(v->note, sizeof(v->note), "%s", c->drift);
}

/* Decide on every batch so far. */
static void decide_batch(struct findfat_ctx *c, struct findfat_verdict *v)
{
	check_drift(c);
	decide(c, v);
	check_mixed(c, v);
	apply_drift(c, v);
}

/* One batch, read after half its rounds (when half is enough to read at
 * all) and completed only when that reading is not clear; v: the verdict
 * over every batch so far. */
static int read_batch(struct findfat_ctx *c, unsigned first,
		      struct findfat_verdict *v)
{
	struct findfat_batch b;
	int ret = batch_start(c, &b, first, c->r->plan.min_units, false);
	uint32_t early = b.k / 2;

	if (ret == 0 && early >= FINDFAT_EARLY_MIN_SAMPLES && !c->o->full_batches) {
		ret = batch_rounds(c, &b, early);
		if (ret == 0)
			decide_batch(c, v);
		if (ret == 0 && (clear_early(v) || c->drift[0]))
			goto out;
	}
	if (ret == 0)
		ret = batch_rounds(c, &b, b.k);
	if (ret == 0)
		decide_batch(c, v);
out:
	batch_free(&b);
	return ret;
}

/* Batches until the verdict is settled or the leading units run out.
 * Every batch but the last is measured in full, and the last one's first
 * half are the same writes at the same strata in every unit, so levels
 * from different batches compare: a unit copy costs the same wherever in
 * the unit the write lands. */
static int run_auto(struct findfat_ctx *c)
{
	struct findfat_result *r = c->r;
	unsigned n = 0, batch = r->plan.min_units;
	struct findfat_verdict v;
	int ret;

	r->nrows = 2;
	r->rows[0].chunk_bytes = r->erase_size_bytes;
	r->rows[0].random = false;
	r->rows[0].writes_per_unit = 1;
	r->rows[1].chunk_bytes = r->blocksize_bytes;
	r->rows[1].random = true;
	do {
		ret = read_batch(c, n, &v);
		if (ret < 0)
			return ret;
		n += batch;
	} while (!v.settled && n < r->plan.max_lead_units);
	if (!v.found && v.col_degree < 1 && v.confidence < FINDFAT_CONFIRM_BELOW &&
	    n == batch && !c->drift[0]) {
		/* nothing collapses: compare like with like before a "none"
		 * (settled on the first batch; the plan's bound allows one) */
		ret = measure_confirm(c);
		if (ret < 0)
			return ret;
		decide(c, &v);
		check_mixed(c, &v);
	}
	apply_verdict(r, &v);
	return 0;
}

int findfat_run(struct fp_dev *d, const struct findfat_opts *o,
		const struct findfat_plan *p, struct findfat_result *r)
{
	const struct findfat_plan plan = *p;	/* p may be &r->plan */
	struct findfat_ctx *c;
	uint64_t written0 = fp_dev_bytes_written(d);
	uint32_t chunks;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->mode = o->mode;
	if (plan.erase_size_bytes != o->erase_size_bytes ||
	    plan.blocksize_bytes == 0 ||
	    (o->blocksize_bytes && plan.blocksize_bytes != o->blocksize_bytes) ||
	    (o->mode == FINDFAT_MANUAL) != (plan.ref_units == 0) ||
	    plan.end_bytes > fp_dev_size_bytes(d))
		return -EINVAL;
	if (!fp_dev_may_write(d, plan.start_bytes, plan.end_bytes))
		return -EFAULT;
	r->plan = plan;
	r->erase_size_bytes = r->plan.erase_size_bytes;
	r->blocksize_bytes = r->plan.blocksize_bytes;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->d = d;
	c->o = o;
	c->r = r;
	stats_rng_seed(&c->rng, o->seed);
	chunks = (uint32_t)(r->erase_size_bytes / r->blocksize_bytes);
	c->buf = fp_dev_alloc_buf(r->erase_size_bytes);
	c->order = malloc(chunks * sizeof(*c->order));
	c->times = malloc(chunks * sizeof(*c->times));
	if (c->buf == NULL || c->order == NULL || c->times == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	memset(c->buf, FP_FILL_BYTE, r->erase_size_bytes);
	fp_dev_rt_enter(d);	/* writing and timing, with little in between */
	ret = o->mode == FINDFAT_MANUAL ? run_manual(c) : run_auto(c);
	fp_dev_rt_leave(d);
out:
	r->bytes_written = fp_dev_bytes_written(d) - written0;
	free(c->buf);
	free(c->order);
	free(c->times);
	free(c);
	return ret;
}
