/* benchio.c - the four-workload speed test (see benchio.h).
 *
 * What is measured: completion latency of single synchronous requests at
 * queue depth one (fio's psync engine with iodepth=1), for 1 MiB sequential
 * reads and writes and 4 KiB random reads and writes inside the test area.
 * Sequential requests follow each other and wrap around at the end of the
 * area; each sequential workload keeps its position across repeats so
 * repeats cover new ground.  Random offsets are uniform over the
 * block-aligned slots of the area (seeded, so a run can be repeated).
 *
 * The time box counts device time spent inside requests (the device clock:
 * CLOCK_MONOTONIC for real devices, the virtual clock for simulated cards),
 * so a stall ends a window no earlier than it would end fio's.  Rates
 * divide by the elapsed device time of the window, which also contains the
 * analyzer's own work between requests, as fio's do; nothing between two
 * requests reads the clock, and bench/overhead checks against fio that the
 * loop costs no measurable throughput on a RAM disk.
 *
 * Warm-up: before every measurement window the same workload runs
 * unrecorded for warmup_ns, so the state the previous workload left behind
 * (an open AU to be merged after random writes, a controller cache) is paid
 * for outside the window.
 *
 * Repeats and order: each repeat runs every selected workload once; repeat
 * r rotates the order by r places (r0: A B C D, r1: B C D A, ...), so slow
 * drift of the card (heat, background garbage collection) is spread over
 * all workloads instead of always following the same one.  The figure
 * reported per workload is the median of its repeats with the min-max
 * range (seed 001's method).
 *
 * Percentiles: per repeat, the nearest-rank percentile over all of that
 * repeat's samples (stats_percentile_ns(), fio's definition: exact, no
 * histogram); the reported p50..p99.9 and mean are the median over repeats
 * of the per-repeat values, as seed 001 reports fio's numbers, and max is
 * the largest latency seen in any repeat (a median of maxima would hide the
 * one stall a user asks about).  With a few samples per repeat (a card at
 * 300 ms per random write gives ten per 3 s window) p99 and p99.9 are the
 * repeat's maximum: the percentiles are exact for the samples, not for the
 * card.  Samples beyond max_samples per repeat are thinned by reservoir
 * sampling (a uniform subset, Vitter's algorithm R); mean and max stay
 * exact and the result says so.
 *
 * Known limits: a card's internal write cache can make the first seconds
 * of writes look faster than sustained writing (warm-up and the window
 * length are the defence; seed 001 also wrote for two minutes); USB
 * readers add their own latency; on real devices the kernel block layer
 * and the reader are part of what is measured, as with fio.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "benchio.h"
#include "dev.h"
#include "stats.h"
#include "util.h"

#define BENCHIO_PROGRESS_STEP_NS UINT64_C(100000000)	/* 100 ms */
#define BENCHIO_SAMPLES_INITIAL ((size_t)1 << 16)
/* No synchronous request completes faster than this (a system call alone
 * costs more), so a window never needs more requests than runtime / this.
 * Guards against a backend whose clock does not advance. */
#define BENCHIO_MIN_REQUEST_NS UINT64_C(100)
#define BENCHIO_MIB (UINT64_C(1) << 20)

static const struct {
	const char *name;
	bool is_write;
	bool sequential;
} benchio_kinds[BENCHIO_NWORKLOADS] = {
	[BENCHIO_SEQ_READ] = { "seq_read", false, true },
	[BENCHIO_SEQ_WRITE] = { "seq_write", true, true },
	[BENCHIO_RAND_READ] = { "rand_read", false, false },
	[BENCHIO_RAND_WRITE] = { "rand_write", true, false },
};

void benchio_opts_default(struct benchio_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->offset_bytes = BENCHIO_DEFAULT_OFFSET_BYTES;
	o->size_bytes = BENCHIO_DEFAULT_AREA_BYTES;
	o->seq_block_bytes = BENCHIO_DEFAULT_SEQ_BLOCK_BYTES;
	o->rand_block_bytes = BENCHIO_DEFAULT_RAND_BLOCK_BYTES;
	o->runtime_ns = BENCHIO_DEFAULT_RUNTIME_NS;
	o->warmup_ns = BENCHIO_DEFAULT_WARMUP_NS;
	o->repeats = BENCHIO_DEFAULT_REPEATS;
	o->workloads = BENCHIO_ALL_WORKLOADS;
	o->seed = 1;
	o->max_samples = BENCHIO_DEFAULT_MAX_SAMPLES;
}

const char *benchio_workload_name(enum benchio_workload w)
{
	if ((unsigned)w >= BENCHIO_NWORKLOADS)
		return NULL;
	return benchio_kinds[w].name;
}

int benchio_workloads_parse(const char *list, unsigned *mask)
{
	unsigned m = 0;
	const char *p = list;

	if (list == NULL || *list == '\0')
		return -EINVAL;
	for (;;) {
		size_t len = strcspn(p, ",");
		unsigned bit = 0;

		if (len == 3 && memcmp(p, "all", 3) == 0)
			bit = BENCHIO_ALL_WORKLOADS;
		for (unsigned w = 0; w < BENCHIO_NWORKLOADS && !bit; w++)
			if (strlen(benchio_kinds[w].name) == len &&
			    memcmp(p, benchio_kinds[w].name, len) == 0)
				bit = BENCHIO_MASK(w);
		if (bit == 0)
			return -EINVAL;
		m |= bit;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*mask = m;
	return 0;
}

int benchio_plan_area(uint64_t device_bytes, uint32_t sector_bytes,
		      uint64_t erase_bytes, uint64_t fat_end_bytes,
		      uint64_t *offset_bytes, uint64_t *size_bytes)
{
	/* Erase blocks are the unit a card manages writes in: an area made of
	 * whole erase blocks measures the card, not a neighbour's garbage
	 * collection.  Without a known erase block, 1 MiB is a multiple of
	 * every common page and allocation-unit fraction. */
	uint64_t unit = erase_bytes ? erase_bytes : BENCHIO_MIB;
	uint64_t start, size;

	if (sector_bytes == 0 || unit % sector_bytes != 0)
		return -EINVAL;
	start = fat_end_bytes ? fat_end_bytes : BENCHIO_DEFAULT_OFFSET_BYTES;
	start = util_round_up(start, unit);
	if (start >= device_bytes || device_bytes - start < unit)
		return -ENOSPC;
	size = device_bytes - start;
	if (size > BENCHIO_DEFAULT_AREA_BYTES)
		size = BENCHIO_DEFAULT_AREA_BYTES;
	size -= size % unit;
	*offset_bytes = start;
	*size_bytes = size;
	return 0;
}

static int benchio_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void benchio_lat_summary(uint64_t *samples, size_t n, struct benchio_lat_ns *out)
{
	unsigned __int128 sum = 0;	/* cannot overflow */

	memset(out, 0, sizeof(*out));
	if (samples == NULL || n == 0)
		return;
	qsort(samples, n, sizeof(*samples), benchio_cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += samples[i];
	out->mean = (uint64_t)((sum + n / 2) / n);	/* rounded to nearest */
	out->p50 = stats_percentile_ns(samples, n, 50.0);
	out->p95 = stats_percentile_ns(samples, n, 95.0);
	out->p99 = stats_percentile_ns(samples, n, 99.0);
	out->p999 = stats_percentile_ns(samples, n, 99.9);
	out->max = samples[n - 1];
}

/* ------------------------------------------------------------------ */
/* The run */

/* Where one workload is: its request size, the block-aligned slots of the
 * area it uses, its sequential cursor and its random generator. */
struct benchio_stream {
	uint64_t block_bytes;
	uint64_t base_bytes;		/* first block-aligned offset in the area */
	uint64_t slots;			/* whole blocks from base to the area end */
	uint64_t next_slot;		/* sequential cursor */
	struct stats_rng rng;		/* random offsets */
};

struct benchio_ctx {
	struct fp_dev *d;
	const struct benchio_opts *o;
	struct benchio_result *r;
	struct benchio_stream stream[BENCHIO_NWORKLOADS];
	void *buf;			/* what every write writes */
	void *rbuf;			/* what reads land in: writes stay bench's data */
	uint64_t *samples;		/* this window's latencies */
	size_t nsamples, cap_samples;
	struct stats_rng reservoir;	/* which samples a capped window keeps */
	uint64_t done_ns, total_ns;	/* progress */
};

/* Uniform in [0, n): the high half of a 64x64-bit product (Lemire), no
 * division in the measuring loop.  The bias, below n / 2^64, is nil for any
 * device. */
static uint64_t benchio_below(struct stats_rng *rng, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)stats_rng_next(rng) * n) >> 64);
}

static uint64_t benchio_next_offset(struct benchio_stream *s, bool sequential)
{
	uint64_t slot;

	if (!sequential)
		return s->base_bytes + benchio_below(&s->rng, s->slots) * s->block_bytes;
	slot = s->next_slot;
	s->next_slot = slot + 1 < s->slots ? slot + 1 : 0;
	return s->base_bytes + slot * s->block_bytes;
}

/* Keep the latency of the seen-th request (0-based) of a window: grow the
 * array up to max_samples, then keep a uniform subset (Vitter's algorithm
 * R: the seen-th sample replaces a kept one with probability
 * max / (seen + 1)).  0 or -ENOMEM. */
static int benchio_keep_sample(struct benchio_ctx *c, uint64_t seen,
			       uint64_t ns)
{
	size_t max = c->o->max_samples;
	uint64_t j;

	if (c->nsamples < max) {
		if (c->nsamples == c->cap_samples) {
			size_t want = c->cap_samples ? c->cap_samples * 2 :
						       BENCHIO_SAMPLES_INITIAL;
			uint64_t *p;

			if (want > max)
				want = max;
			p = realloc(c->samples, want * sizeof(*p));
			if (p == NULL)
				return -ENOMEM;
			c->samples = p;
			c->cap_samples = want;
		}
		c->samples[c->nsamples++] = ns;
		return 0;
	}
	j = benchio_below(&c->reservoir, seen + 1);
	if (j < max)
		c->samples[j] = ns;
	return 0;
}

static void benchio_progress(struct benchio_ctx *c, uint64_t phase_done_ns,
			     uint64_t phase_budget_ns)
{
	uint64_t done;

	if (c->o->progress == NULL)
		return;
	done = c->done_ns + (phase_done_ns < phase_budget_ns ? phase_done_ns :
			     phase_budget_ns);
	c->o->progress(c->o->progress_arg, done, c->total_ns);
}

static bool benchio_stop_requested(const struct benchio_ctx *c)
{
	return c->o->interrupted != NULL && *c->o->interrupted != 0;
}

/* Run workload w for budget_ns of device time spent in requests.  When rep
 * is not NULL the window is measured into it. */
static int benchio_phase(struct benchio_ctx *c, enum benchio_workload w,
			 uint64_t budget_ns, struct benchio_repeat *rep)
{
	struct benchio_stream *s = &c->stream[w];
	const bool is_write = benchio_kinds[w].is_write;
	const bool sequential = benchio_kinds[w].sequential;
	const size_t len = (size_t)s->block_bytes;
	const uint64_t max_ios = budget_ns / BENCHIO_MIN_REQUEST_NS + 1;
	uint64_t busy = 0, ios = 0, lat_max = 0, lat_sum = 0;
	uint64_t t0, t1;
	uint64_t next_progress = BENCHIO_PROGRESS_STEP_NS;
	int rc = 0;

	c->nsamples = 0;
	/* real-time priority for measured windows only, not the warm-up */
	if (rep != NULL)
		fp_dev_rt_enter(c->d);
	t0 = fp_dev_now_ns(c->d);
	while (busy < budget_ns && ios < max_ios) {
		uint64_t off, ns = 0;

		if (benchio_stop_requested(c)) {
			rc = -EINTR;
			break;
		}
		off = benchio_next_offset(s, sequential);
		if (is_write)
			rc = fp_dev_write_timed(c->d, c->buf, len, off, &ns);
		else
			rc = fp_dev_read_timed(c->d, c->rbuf, len, off, &ns);
		if (rc < 0)
			break;
		busy += ns;
		if (rep != NULL) {
			rc = benchio_keep_sample(c, ios, ns);
			if (rc < 0)
				break;
			lat_sum += ns;
			if (ns > lat_max)
				lat_max = ns;
		}
		ios++;
		if (busy >= next_progress) {
			benchio_progress(c, busy, budget_ns);
			next_progress = busy + BENCHIO_PROGRESS_STEP_NS;
		}
	}
	t1 = fp_dev_now_ns(c->d);
	if (rep != NULL)
		fp_dev_rt_leave(c->d);
	c->r->elapsed_ns += busy;
	if (rc < 0)
		return rc;
	c->done_ns += budget_ns;
	benchio_progress(c, 0, budget_ns);
	if (rep == NULL)
		return 0;

	memset(rep, 0, sizeof(*rep));
	rep->ios = ios;
	rep->busy_ns = busy;
	/* Never below the summed latencies: a clock that went backwards
	 * (dev.c counts such a request as zero) must not inflate rates. */
	rep->elapsed_ns = t1 - t0 > busy ? t1 - t0 : busy;
	if (rep->elapsed_ns > 0) {
		rep->iops = (double)ios * 1e9 / (double)rep->elapsed_ns;
		rep->bytes_per_sec = rep->iops * (double)s->block_bytes;
	}
	rep->samples = c->nsamples;
	rep->samples_capped = c->nsamples < ios;
	benchio_lat_summary(c->samples, c->nsamples, &rep->lat_ns);
	/* mean and max from every request, not just the kept ones */
	rep->lat_ns.mean = ios ? (lat_sum + ios / 2) / ios : 0;
	rep->lat_ns.max = lat_max;
	if (ios >= max_ios)
		snprintf(c->r->note, sizeof(c->r->note),
			 "%s: window ended after %llu requests: the device clock "
			 "hardly advances", benchio_kinds[w].name,
			 (unsigned long long)ios);
	return 0;
}

static double benchio_median_u64(const uint64_t *v, size_t n)
{
	double tmp[BENCHIO_MAX_REPEATS];

	for (size_t i = 0; i < n; i++)
		tmp[i] = (double)v[i];
	return stats_median(tmp, n);
}

/* Median, min and max over the completed repeats. */
static void benchio_aggregate(struct benchio_workload_result *wr)
{
	unsigned n = wr->nrepeats;
	double bps[BENCHIO_MAX_REPEATS], iops[BENCHIO_MAX_REPEATS];
	uint64_t v[6][BENCHIO_MAX_REPEATS];

	if (n == 0)
		return;
	wr->ios = 0;
	wr->lat_ns.max = 0;
	wr->samples_capped = false;
	for (unsigned i = 0; i < n; i++) {
		const struct benchio_repeat *rp = &wr->repeats[i];

		bps[i] = rp->bytes_per_sec;
		iops[i] = rp->iops;
		v[0][i] = rp->lat_ns.mean;
		v[1][i] = rp->lat_ns.p50;
		v[2][i] = rp->lat_ns.p95;
		v[3][i] = rp->lat_ns.p99;
		v[4][i] = rp->lat_ns.p999;
		wr->ios += rp->ios;
		wr->samples_capped |= rp->samples_capped;
		if (rp->lat_ns.max > wr->lat_ns.max)
			wr->lat_ns.max = rp->lat_ns.max;
	}
	wr->bytes_per_sec = stats_median(bps, n);
	wr->bytes_per_sec_min = stats_min(bps, n);
	wr->bytes_per_sec_max = stats_max(bps, n);
	wr->iops = stats_median(iops, n);
	wr->iops_min = stats_min(iops, n);
	wr->iops_max = stats_max(iops, n);
	wr->lat_ns.mean = (uint64_t)llround(benchio_median_u64(v[0], n));
	wr->lat_ns.p50 = (uint64_t)llround(benchio_median_u64(v[1], n));
	wr->lat_ns.p95 = (uint64_t)llround(benchio_median_u64(v[2], n));
	wr->lat_ns.p99 = (uint64_t)llround(benchio_median_u64(v[3], n));
	wr->lat_ns.p999 = (uint64_t)llround(benchio_median_u64(v[4], n));
}

static void benchio_verdict(struct benchio_result *r)
{
	const struct benchio_workload_result *rr = &r->w[BENCHIO_RAND_READ];
	const struct benchio_workload_result *rw = &r->w[BENCHIO_RAND_WRITE];

	r->verdict_valid = rr->nrepeats > 0 && rw->nrepeats > 0 &&
			   rr->lat_ns.p99 > 0 && rr->iops > 0;
	if (!r->verdict_valid)
		return;
	r->rand_write_p99_ns = rw->lat_ns.p99;
	r->rand_write_p99_ratio = (double)rw->lat_ns.p99 / (double)rr->lat_ns.p99;
	r->rand_write_iops_ratio = rw->iops / rr->iops;
}

int benchio_check_area(uint64_t dev_bytes, uint64_t sector, const struct benchio_opts *o)
{
	const uint64_t blocks[2] = { o->seq_block_bytes, o->rand_block_bytes };

	if (o->size_bytes == 0 || o->runtime_ns == 0 || o->repeats == 0 ||
	    o->repeats > BENCHIO_MAX_REPEATS || o->max_samples == 0 ||
	    (o->workloads & ~BENCHIO_ALL_WORKLOADS) != 0 ||
	    (o->workloads & BENCHIO_ALL_WORKLOADS) == 0)
		return -EINVAL;
	if (o->offset_bytes % sector != 0 || o->offset_bytes > dev_bytes ||
	    o->size_bytes > dev_bytes - o->offset_bytes)
		return -EINVAL;
	for (size_t i = 0; i < 2; i++) {
		uint64_t base;

		if (blocks[i] == 0 || blocks[i] % sector != 0 || blocks[i] > SIZE_MAX / 2)
			return -EINVAL;
		/* room for one aligned block in the area */
		base = util_round_up(o->offset_bytes, blocks[i]);
		if (base - o->offset_bytes >= o->size_bytes ||
		    o->size_bytes - (base - o->offset_bytes) < blocks[i])
			return -EINVAL;
	}
	return 0;
}

static void benchio_result_init(struct benchio_result *r,
				const struct benchio_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->offset_bytes = o->offset_bytes;
	r->size_bytes = o->size_bytes;
	r->runtime_ns = o->runtime_ns;
	r->warmup_ns = o->warmup_ns;
	r->repeats = o->repeats;
	r->seed = o->seed;
	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++) {
		struct benchio_workload_result *wr = &r->w[w];

		wr->workload = (enum benchio_workload)w;
		wr->name = benchio_kinds[w].name;
		wr->is_write = benchio_kinds[w].is_write;
		wr->sequential = benchio_kinds[w].sequential;
		wr->block_bytes = wr->sequential ? o->seq_block_bytes :
						   o->rand_block_bytes;
		if (!(o->workloads & BENCHIO_MASK(w)))
			wr->skip_reason = "not selected";
		else if (wr->is_write && !o->allow_writes)
			wr->skip_reason = "read-only";
		wr->skipped = wr->skip_reason != NULL;
	}
}

static int benchio_setup(struct benchio_ctx *c)
{
	const struct benchio_opts *o = c->o;
	uint64_t area_end = o->offset_bytes + o->size_bytes;
	size_t buf_len = (size_t)(o->seq_block_bytes > o->rand_block_bytes ?
				  o->seq_block_bytes : o->rand_block_bytes);
	struct stats_rng fill;

	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++) {
		struct benchio_stream *s = &c->stream[w];

		s->block_bytes = c->r->w[w].block_bytes;
		s->base_bytes = util_round_up(o->offset_bytes, s->block_bytes);
		s->slots = (area_end - s->base_bytes) / s->block_bytes;
		stats_rng_seed(&s->rng, stats_hash64(o->seed * BENCHIO_NWORKLOADS + w));
	}
	stats_rng_seed(&c->reservoir, stats_hash64(o->seed ^ UINT64_C(0x5eed)));
	c->buf = fp_dev_alloc_buf(buf_len);
	c->rbuf = fp_dev_alloc_buf(buf_len);
	if (c->buf == NULL || c->rbuf == NULL)
		return -ENOMEM;
	/* Random data by default: a controller that compresses or skips
	 * constant data must not look faster than it is. */
	stats_rng_seed(&fill, o->seed);
	if (o->constant_fill) {
		memset(c->buf, FP_FILL_BYTE, buf_len);
	} else {
		for (size_t i = 0; i + 8 <= buf_len; i += 8) {
			uint64_t x = stats_rng_next(&fill);

			memcpy((char *)c->buf + i, &x, 8);
		}
		/* flashprobe's mark: a restore tells a place bench wrote
		 * from one written since by someone else (journal_replay.c) */
		util_mark_test_pieces(c->buf, buf_len);
	}
	return 0;
}

int benchio_run(struct fp_dev *d, const struct benchio_opts *o,
		struct benchio_result *r)
{
	struct benchio_ctx c;
	enum benchio_workload active[BENCHIO_NWORKLOADS];
	unsigned nactive = 0;
	uint64_t io0, written0;
	int rc;

	if (d == NULL || o == NULL || r == NULL)
		return -EINVAL;
	benchio_result_init(r, o);
	rc = benchio_check_area(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), o);
	if (rc < 0)
		return rc;
	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++)
		if (!r->w[w].skipped)
			active[nactive++] = (enum benchio_workload)w;
	r->nactive = nactive;
	if (nactive == 0)
		return 0;	/* read-only and only write workloads selected */

	memset(&c, 0, sizeof(c));
	c.d = d;
	c.o = o;
	c.r = r;
	c.total_ns = (uint64_t)nactive * o->repeats * (o->runtime_ns + o->warmup_ns);
	io0 = fp_dev_io_count(d);
	written0 = fp_dev_bytes_written(d);
	rc = benchio_setup(&c);

	for (unsigned rep = 0; rc == 0 && rep < o->repeats; rep++) {
		for (unsigned k = 0; rc == 0 && k < nactive; k++) {
			enum benchio_workload w = active[(k + rep) % nactive];
			struct benchio_workload_result *wr = &r->w[w];

			r->order[rep][k] = w;
			if (o->warmup_ns > 0)
				rc = benchio_phase(&c, w, o->warmup_ns, NULL);
			if (rc == 0)
				rc = benchio_phase(&c, w, o->runtime_ns,
						   &wr->repeats[wr->nrepeats]);
			if (rc == 0)
				wr->repeats[wr->nrepeats++].position = k;
		}
		if (rc == 0)
			r->repeats_done = rep + 1;
	}

	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++)
		benchio_aggregate(&r->w[w]);
	benchio_verdict(r);
	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++)
		if (r->w[w].samples_capped && r->note[0] == '\0')
			snprintf(r->note, sizeof(r->note),
				 "%s: more than %zu requests in a window: its "
				 "percentiles come from a uniform sample of %zu",
				 r->w[w].name, o->max_samples, o->max_samples);
	r->io_count = fp_dev_io_count(d) - io0;
	r->bytes_written = fp_dev_bytes_written(d) - written0;
	r->interrupted = rc == -EINTR;
	free(c.samples);
	free(c.buf);
	free(c.rbuf);
	return rc;
}
