/* check_benchio.c - the speed test: exact percentiles, the median-of-repeats
 * arithmetic on a scripted device, the workloads on simulated cards, and
 * the promises about writes, the test area and interruption. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchio.h"
#include "dev.h"
#include "json.h"
#include "jsonv.h"
#include "report_bench.h"
#include "sim.h"
#include "stats.h"
#include "testutil.h"
#include "tests.h"

static const uint64_t KiB = 1024, MiB = 1024 * 1024;
static const uint64_t MS = 1000000;

/* ------------------------------------------------------------------ */
/* Percentiles */

static void shuffle(uint64_t *v, size_t n, uint64_t seed)
{
	struct stats_rng r;

	stats_rng_seed(&r, seed);
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)stats_rng_below(&r, i);
		uint64_t t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* 1..n in shuffled order. */
static uint64_t *ramp(size_t n)
{
	uint64_t *v = malloc(n * sizeof(*v));

	ck_assert_ptr_nonnull(v);
	for (size_t i = 0; i < n; i++)
		v[i] = i + 1;
	shuffle(v, n, n);
	return v;
}

START_TEST(test_percentiles_uniform)
{
	uint64_t *v = ramp(1000);
	struct benchio_lat_ns l;

	benchio_lat_summary(v, 1000, &l);
	ck_assert_uint_eq(l.p50, 500);
	ck_assert_uint_eq(l.p95, 950);
	ck_assert_uint_eq(l.p99, 990);
	ck_assert_uint_eq(l.p999, 999);
	ck_assert_uint_eq(l.max, 1000);
	ck_assert_uint_eq(l.mean, 501);		/* 500.5 rounds up */
	/* sorted in place, as documented */
	for (size_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(v[i], i + 1);
	free(v);
}
END_TEST

START_TEST(test_percentiles_constant_and_single)
{
	uint64_t v[50], one = 42;
	struct benchio_lat_ns l;

	for (size_t i = 0; i < 50; i++)
		v[i] = 777;
	benchio_lat_summary(v, 50, &l);
	ck_assert_uint_eq(l.mean, 777);
	ck_assert_uint_eq(l.p50, 777);
	ck_assert_uint_eq(l.p999, 777);
	ck_assert_uint_eq(l.max, 777);
	benchio_lat_summary(&one, 1, &l);
	ck_assert_uint_eq(l.mean, 42);
	ck_assert_uint_eq(l.p50, 42);
	ck_assert_uint_eq(l.p95, 42);
	ck_assert_uint_eq(l.p99, 42);
	ck_assert_uint_eq(l.p999, 42);
	ck_assert_uint_eq(l.max, 42);
	benchio_lat_summary(v, 0, &l);
	ck_assert_uint_eq(l.p50, 0);
	ck_assert_uint_eq(l.max, 0);
}
END_TEST

/* Fast requests and a few slow ones: where the nearest rank lands. */
START_TEST(test_percentiles_two_point)
{
	uint64_t v[1000];
	struct benchio_lat_ns l;

	/* 990 fast, 10 slow: p99 is still fast, p99.9 is slow */
	for (size_t i = 0; i < 1000; i++)
		v[i] = i < 990 ? 100 : 5000;
	shuffle(v, 1000, 1);
	benchio_lat_summary(v, 1000, &l);
	ck_assert_uint_eq(l.p50, 100);
	ck_assert_uint_eq(l.p95, 100);
	ck_assert_uint_eq(l.p99, 100);
	ck_assert_uint_eq(l.p999, 5000);
	ck_assert_uint_eq(l.max, 5000);
	ck_assert_uint_eq(l.mean, 149);
	/* one more slow one moves p99 */
	for (size_t i = 0; i < 1000; i++)
		v[i] = i < 989 ? 100 : 5000;
	shuffle(v, 1000, 2);
	benchio_lat_summary(v, 1000, &l);
	ck_assert_uint_eq(l.p99, 5000);
	ck_assert_uint_eq(l.p95, 100);
	/* half and half: p50 is the last of the lower half */
	for (size_t i = 0; i < 1000; i++)
		v[i] = i < 500 ? 100 : 5000;
	shuffle(v, 1000, 3);
	benchio_lat_summary(v, 1000, &l);
	ck_assert_uint_eq(l.p50, 100);
	ck_assert_uint_eq(l.mean, 2550);
}
END_TEST

/* p99.9 needs about a thousand samples to differ from the maximum. */
START_TEST(test_percentiles_p999_edges)
{
	static const struct {
		size_t n;
		uint64_t p999, p99;
	} cases[] = {
		{ 10, 10, 10 },
		{ 999, 999, 990 },	/* rank ceil(998.001) = 999: the max */
		{ 1000, 999, 990 },
		{ 1001, 1000, 991 },	/* ceil(999.999) = 1000: below the max */
		{ 2000, 1998, 1980 },
		{ 10000, 9990, 9900 },
		{ 100, 100, 99 },
		{ 101, 101, 100 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint64_t *v = ramp(cases[c].n);
		struct benchio_lat_ns l;

		benchio_lat_summary(v, cases[c].n, &l);
		ck_assert_msg(l.p999 == cases[c].p999, "n=%zu: p99.9 %llu, want %llu",
			      cases[c].n, (unsigned long long)l.p999,
			      (unsigned long long)cases[c].p999);
		ck_assert_msg(l.p99 == cases[c].p99, "n=%zu: p99 %llu, want %llu",
			      cases[c].n, (unsigned long long)l.p99,
			      (unsigned long long)cases[c].p99);
		ck_assert_uint_eq(l.max, cases[c].n);
		free(v);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Options, names and the default area */

START_TEST(test_workload_names)
{
	unsigned m = 77;

	ck_assert_str_eq(benchio_workload_name(BENCHIO_SEQ_READ), "seq_read");
	ck_assert_str_eq(benchio_workload_name(BENCHIO_SEQ_WRITE), "seq_write");
	ck_assert_str_eq(benchio_workload_name(BENCHIO_RAND_READ), "rand_read");
	ck_assert_str_eq(benchio_workload_name(BENCHIO_RAND_WRITE), "rand_write");
	ck_assert_ptr_null(benchio_workload_name(BENCHIO_NWORKLOADS));
	ck_assert_int_eq(benchio_workloads_parse("rand_read", &m), 0);
	ck_assert_uint_eq(m, BENCHIO_MASK(BENCHIO_RAND_READ));
	ck_assert_int_eq(benchio_workloads_parse("seq_read,rand_write", &m), 0);
	ck_assert_uint_eq(m, BENCHIO_MASK(BENCHIO_SEQ_READ) | BENCHIO_MASK(BENCHIO_RAND_WRITE));
	ck_assert_int_eq(benchio_workloads_parse("all", &m), 0);
	ck_assert_uint_eq(m, BENCHIO_ALL_WORKLOADS);
	m = 77;
	ck_assert_int_eq(benchio_workloads_parse("", &m), -EINVAL);
	ck_assert_int_eq(benchio_workloads_parse("rand_read,", &m), -EINVAL);
	ck_assert_int_eq(benchio_workloads_parse(",rand_read", &m), -EINVAL);
	ck_assert_int_eq(benchio_workloads_parse("rand_reads", &m), -EINVAL);
	ck_assert_int_eq(benchio_workloads_parse("rand", &m), -EINVAL);
	ck_assert_int_eq(benchio_workloads_parse("RAND_READ", &m), -EINVAL);
	ck_assert_uint_eq(m, 77);	/* untouched on failure */
}
END_TEST

START_TEST(test_plan_area)
{
	uint64_t off = 1, size = 1;

	/* nothing known: 256 MiB at 16 MiB */
	ck_assert_int_eq(benchio_plan_area(1024 * MiB, 512, 0, 0, &off, &size), 0);
	ck_assert_uint_eq(off, 16 * MiB);
	ck_assert_uint_eq(size, 256 * MiB);
	/* a 3 MiB erase block: both ends on erase-block boundaries */
	ck_assert_int_eq(benchio_plan_area(1536 * MiB, 512, 3 * MiB, 0, &off, &size), 0);
	ck_assert_uint_eq(off, 18 * MiB);
	ck_assert_uint_eq(size, 255 * MiB);
	/* a known FAT area: start right after it */
	ck_assert_int_eq(benchio_plan_area(1024 * MiB, 512, 2 * MiB, 8 * MiB, &off, &size), 0);
	ck_assert_uint_eq(off, 8 * MiB);
	ck_assert_uint_eq(size, 256 * MiB);
	ck_assert_int_eq(benchio_plan_area(1024 * MiB, 512, 4 * MiB, 9 * MiB, &off, &size), 0);
	ck_assert_uint_eq(off, 12 * MiB);
	/* a small device: the rest of it */
	ck_assert_int_eq(benchio_plan_area(100 * MiB, 512, 4 * MiB, 0, &off, &size), 0);
	ck_assert_uint_eq(off, 16 * MiB);
	ck_assert_uint_eq(size, 84 * MiB);
	/* too small for the default start */
	off = size = 1;
	ck_assert_int_eq(benchio_plan_area(16 * MiB, 512, 0, 0, &off, &size), -ENOSPC);
	ck_assert_int_eq(benchio_plan_area(20 * MiB, 512, 8 * MiB, 0, &off, &size), -ENOSPC);
	ck_assert_uint_eq(off, 1);
	ck_assert_uint_eq(size, 1);
}
END_TEST

static struct fp_dev *open_sim(const char *name)
{
	struct fp_dev *d = NULL;

	ck_assert_int_eq(sim_open(sim_profile_find(name), &d), 0);
	return d;
}

static void short_opts(struct benchio_opts *o)
{
	benchio_opts_default(o);
	o->runtime_ns = 200 * MS;
	o->warmup_ns = 50 * MS;
	o->size_bytes = 64 * MiB;
}

START_TEST(test_bad_options)
{
	struct fp_dev *d = open_sim("emmc");
	static struct benchio_result r;
	struct benchio_opts o;
	const uint64_t dev_bytes = fp_dev_size_bytes(d);

	for (int c = 0; c < 12; c++) {
		short_opts(&o);
		switch (c) {
		case 0: o.offset_bytes = 16 * MiB + 100; break;	/* not sector aligned */
		case 1: o.size_bytes = 0; break;
		case 2: o.offset_bytes = dev_bytes - MiB; break;	/* past the end */
		case 3: o.offset_bytes = dev_bytes + 512; o.size_bytes = 512; break;
		case 4: o.rand_block_bytes = 1000; break;		/* not sectors */
		case 5: o.seq_block_bytes = 0; break;
		case 6: o.repeats = 0; break;
		case 7: o.repeats = BENCHIO_MAX_REPEATS + 1; break;
		case 8: o.runtime_ns = 0; break;
		case 9: o.size_bytes = 512 * KiB; break;		/* no room for 1 MiB */
		case 10: o.workloads = 0; break;
		case 11: o.max_samples = 0; break;
		}
		ck_assert_msg(benchio_run(d, &o, &r) == -EINVAL, "case %d accepted", c);
		ck_assert_msg(fp_dev_io_count(d) == 0, "case %d did I/O", c);
	}
	fp_dev_close(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A scripted device: exact arithmetic and the order actually run */

/* Each workload is recognised by its request kind and size; the k-th time
 * a workload starts (its warm-up begins), its requests take lat[k] ns of
 * virtual time. */
struct script {
	uint64_t now_ns;
	int last;			/* workload of the previous request, -1 */
	unsigned starts[BENCHIO_NWORKLOADS];
	int seen[64];			/* workloads in the order they started */
	size_t nseen;
	uint64_t lat[BENCHIO_NWORKLOADS][BENCHIO_MAX_REPEATS];
};

static void script_io(struct script *s, bool write, size_t len)
{
	int w = len == 4096 ? (write ? BENCHIO_RAND_WRITE : BENCHIO_RAND_READ) :
			      (write ? BENCHIO_SEQ_WRITE : BENCHIO_SEQ_READ);

	if (w != s->last) {
		s->starts[w]++;
		if (s->nseen < 64)
			s->seen[s->nseen++] = w;
		s->last = w;
	}
	s->now_ns += s->lat[w][s->starts[w] - 1];
}

static int script_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	(void)buf;
	(void)off;
	script_io(priv, false, len);
	return 0;
}

static int script_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	(void)buf;
	(void)off;
	script_io(priv, true, len);
	return 0;
}

static uint64_t script_now(void *priv)
{
	return ((struct script *)priv)->now_ns;
}

static const struct fp_dev_ops script_ops = {
	.pread = script_pread,
	.pwrite = script_pwrite,
	.now_ns = script_now,
};

START_TEST(test_scripted_medians_and_order)
{
	static struct script s;
	static struct benchio_result r;
	static const uint64_t rr_lat[3] = { 1000, 3000, 2000 };
	struct benchio_opts o;
	struct fp_dev *d;

	memset(&s, 0, sizeof(s));
	s.last = -1;
	for (unsigned k = 0; k < BENCHIO_MAX_REPEATS; k++) {
		s.lat[BENCHIO_SEQ_READ][k] = 1 * MS;
		s.lat[BENCHIO_SEQ_WRITE][k] = 2 * MS;
		s.lat[BENCHIO_RAND_READ][k] = k < 3 ? rr_lat[k] : 1;
		s.lat[BENCHIO_RAND_WRITE][k] = 5000;
	}
	d = fp_dev_create(&script_ops, &s, FP_DEV_FILE, "script", 1024 * MiB, 512);
	ck_assert_ptr_nonnull(d);
	benchio_opts_default(&o);
	o.runtime_ns = 10 * MS;
	o.warmup_ns = 1 * MS;
	o.allow_writes = true;
	ck_assert_int_eq(fp_dev_set_write_area(d, o.offset_bytes,
					       o.offset_bytes + o.size_bytes), 0);
	ck_assert_int_eq(benchio_run(d, &o, &r), 0);

	/* each repeat starts one workload later: A B C D, B C D A, C D A B */
	ck_assert_uint_eq(r.nactive, 4);
	ck_assert_uint_eq(r.repeats_done, 3);
	ck_assert_uint_eq(s.nseen, 12);
	for (unsigned rep = 0; rep < 3; rep++)
		for (unsigned k = 0; k < 4; k++) {
			ck_assert_uint_eq(r.order[rep][k], (k + rep) % 4);
			/* the device saw exactly that order */
			ck_assert_int_eq(s.seen[rep * 4 + k], (int)r.order[rep][k]);
			ck_assert_uint_eq(r.w[r.order[rep][k]].repeats[rep].position, k);
		}

	/* rand_read: one repeat at each latency; the figure is the middle */
	{
		const struct benchio_workload_result *w = &r.w[BENCHIO_RAND_READ];

		ck_assert_uint_eq(w->nrepeats, 3);
		ck_assert_double_eq_tol(w->iops, 1e9 / 2000, 1e-6);
		ck_assert_double_eq_tol(w->iops_min, 1e9 / 3000, 1e-6);
		ck_assert_double_eq_tol(w->iops_max, 1e9 / 1000, 1e-6);
		ck_assert_double_eq_tol(w->bytes_per_sec, 1e9 / 2000 * 4096, 1e-3);
		ck_assert_uint_eq(w->lat_ns.p50, 2000);
		ck_assert_uint_eq(w->lat_ns.p99, 2000);
		ck_assert_uint_eq(w->lat_ns.mean, 2000);
		ck_assert_uint_eq(w->lat_ns.max, 3000);	/* worst of all repeats */
		/* windows end at the first request reaching 10 ms */
		ck_assert_uint_eq(w->repeats[0].ios, 10000);
		ck_assert_uint_eq(w->repeats[1].ios, 3334);
		ck_assert_uint_eq(w->repeats[2].ios, 5000);
		ck_assert_uint_eq(w->ios, 18334);
	}
	ck_assert_double_eq_tol(r.w[BENCHIO_SEQ_READ].bytes_per_sec, 1e3 * MiB, 1e-3);
	ck_assert_double_eq_tol(r.w[BENCHIO_SEQ_WRITE].bytes_per_sec, 500.0 * MiB, 1e-3);
	ck_assert_double_eq_tol(r.w[BENCHIO_SEQ_WRITE].iops, 500.0, 1e-9);
	ck_assert_uint_eq(r.w[BENCHIO_RAND_WRITE].lat_ns.p999, 5000);
	/* verdict: 5000 / 2000 and 200000 / 500000 */
	ck_assert(r.verdict_valid);
	ck_assert_uint_eq(r.rand_write_p99_ns, 5000);
	ck_assert_double_eq_tol(r.rand_write_p99_ratio, 2.5, 1e-12);
	ck_assert_double_eq_tol(r.rand_write_iops_ratio, 0.4, 1e-12);
	ck_assert(!r.interrupted);
	ck_assert_str_eq(r.note, "");
	fp_dev_close(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Simulated cards */

static int run_sim(const char *name, struct benchio_opts *o,
		   struct benchio_result *r, struct fp_dev **out)
{
	struct fp_dev *d = open_sim(name);
	int rc;

	if (o->allow_writes)
		ck_assert_int_eq(fp_dev_set_write_area(d, o->offset_bytes,
						       o->offset_bytes + o->size_bytes), 0);
	rc = benchio_run(d, o, r);
	if (out)
		*out = d;
	else
		fp_dev_close(d);
	return rc;
}

/* What the model charges for an aligned read of len bytes: the base, the
 * transfer, and each internal boundary at its highest level (sim.h). */
static double model_read_ns(const struct sim_profile *p, uint64_t len)
{
	const uint64_t lv[] = { p->erase_bytes, p->subau_bytes, p->page_bytes,
				p->raw_page_bytes };
	const uint64_t cost[] = { p->au_cross_ns, p->subau_cross_ns,
				  p->page_cross_ns, p->raw_cross_ns };
	double t = (double)p->read_base_ns +
		   (double)p->read_page_ns * (double)len / (double)p->page_bytes;
	uint64_t above = 0;

	for (size_t i = 0; i < 4; i++) {
		uint64_t n;

		if (lv[i] == 0)
			continue;
		n = len > lv[i] ? len / lv[i] - 1 : 0;
		t += (double)(n - above) * (double)cost[i];
		above = n;
	}
	return t;
}

/* Every workload runs, and its figures hang together. */
START_TEST(test_all_workloads_consistent)
{
	static struct benchio_result r;
	struct benchio_opts o;

	short_opts(&o);
	o.allow_writes = true;
	ck_assert_int_eq(run_sim("sdhc-4m", &o, &r, NULL), 0);
	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++) {
		const struct benchio_workload_result *wr = &r.w[w];
		const struct benchio_lat_ns *l = &wr->lat_ns;

		ck_assert(!wr->skipped);
		ck_assert_uint_eq(wr->nrepeats, 3);
		ck_assert_uint_eq(wr->block_bytes, wr->sequential ? MiB : 4 * KiB);
		ck_assert(wr->iops > 0);
		ck_assert_double_eq_tol(wr->bytes_per_sec / (double)wr->block_bytes,
					wr->iops, wr->iops * 1e-9);
		ck_assert(wr->iops_min <= wr->iops && wr->iops <= wr->iops_max);
		ck_assert(wr->bytes_per_sec_min <= wr->bytes_per_sec &&
			  wr->bytes_per_sec <= wr->bytes_per_sec_max);
		ck_assert(l->p50 > 0 && l->p50 <= l->p95 && l->p95 <= l->p99 &&
			  l->p99 <= l->p999 && l->p999 <= l->max);
		ck_assert(l->mean <= l->max);
		for (unsigned k = 0; k < wr->nrepeats; k++) {
			const struct benchio_repeat *rp = &wr->repeats[k];

			/* virtual time passes only inside requests */
			ck_assert_uint_eq(rp->elapsed_ns, rp->busy_ns);
			ck_assert_uint_ge(rp->busy_ns, o.runtime_ns);
			ck_assert_uint_eq(rp->samples, rp->ios);
			ck_assert(!rp->samples_capped);
		}
	}
	ck_assert(r.verdict_valid);
	ck_assert_uint_gt(r.bytes_written, 0);
	ck_assert_uint_gt(r.io_count, r.w[0].ios + r.w[1].ios + r.w[2].ios + r.w[3].ios);
}
END_TEST

/* A card that writes only linearly (one open AU, none random) merges a
 * whole AU for nearly every random write: its random-write latency is the
 * AU copy, far above its reads. */
START_TEST(test_linear_only_card)
{
	static struct benchio_result r;
	const struct sim_profile *p = sim_profile_find("seed");
	struct benchio_opts o;
	double pages = (double)(p->erase_bytes / p->page_bytes);
	double merge_ns, read_ns;

	ck_assert_uint_eq(p->open_au_random, 0);
	benchio_opts_default(&o);
	o.size_bytes = 64 * MiB;
	o.warmup_ns = 500 * MS;
	o.workloads = BENCHIO_MASK(BENCHIO_RAND_READ) | BENCHIO_MASK(BENCHIO_RAND_WRITE);
	o.allow_writes = true;
	ck_assert_int_eq(run_sim("seed", &o, &r, NULL), 0);

	/* a random write pays the rest of one AU copy plus an erase */
	merge_ns = (pages - 1) * (double)p->gc_page_ns + (double)p->erase_ns +
		   (double)p->write_base_ns + (double)p->write_page_ns;
	read_ns = model_read_ns(p, 4 * KiB);
	ck_assert_msg(r.w[BENCHIO_RAND_WRITE].lat_ns.mean > 0.7 * merge_ns &&
		      r.w[BENCHIO_RAND_WRITE].lat_ns.mean < 1.3 * merge_ns,
		      "random-write mean %llu, model %.0f",
		      (unsigned long long)r.w[BENCHIO_RAND_WRITE].lat_ns.mean, merge_ns);
	ck_assert_msg(r.w[BENCHIO_RAND_READ].lat_ns.p50 > 0.9 * read_ns &&
		      r.w[BENCHIO_RAND_READ].lat_ns.p50 < 1.1 * read_ns,
		      "random-read p50 %llu, model %.0f",
		      (unsigned long long)r.w[BENCHIO_RAND_READ].lat_ns.p50, read_ns);
	ck_assert(r.verdict_valid);
	ck_assert_msg(r.rand_write_p99_ratio > 0.5 * merge_ns / read_ns,
		      "p99 ratio %.1f, model %.1f", r.rand_write_p99_ratio,
		      merge_ns / read_ns);
	ck_assert_uint_eq(r.rand_write_p99_ns, r.w[BENCHIO_RAND_WRITE].lat_ns.p99);
	ck_assert(r.rand_write_iops_ratio < 2.0 * read_ns / merge_ns);
}
END_TEST

/* An eMMC keeps several AUs open in random mode: on an area those AUs
 * cover, a random write costs a page program and the random-mode extra,
 * and random writes fall far less behind reads than on a linear-only card,
 * also on a larger area. */
START_TEST(test_emmc_card)
{
	static struct benchio_result r, lin;
	const struct sim_profile *p = sim_profile_find("emmc");
	struct benchio_opts o;
	double write_ns = (double)(p->write_base_ns + p->write_page_ns +
				   p->random_write_ns);

	ck_assert_uint_gt(p->open_au_random, 1);
	short_opts(&o);
	o.runtime_ns = 1000 * MS;
	o.size_bytes = p->open_au_random * p->erase_bytes;
	o.workloads = BENCHIO_MASK(BENCHIO_RAND_READ) | BENCHIO_MASK(BENCHIO_RAND_WRITE);
	o.allow_writes = true;
	ck_assert_int_eq(run_sim("emmc", &o, &r, NULL), 0);
	ck_assert_msg(r.w[BENCHIO_RAND_WRITE].lat_ns.p50 > 0.9 * write_ns &&
		      r.w[BENCHIO_RAND_WRITE].lat_ns.p50 < 1.1 * write_ns,
		      "random-write p50 %llu, model %.0f",
		      (unsigned long long)r.w[BENCHIO_RAND_WRITE].lat_ns.p50, write_ns);
	ck_assert(r.rand_write_iops_ratio > 0.2);

	/* the same 64 MiB area on both cards */
	o.size_bytes = 64 * MiB;
	ck_assert_int_eq(run_sim("emmc", &o, &r, NULL), 0);
	ck_assert_int_eq(run_sim("seed", &o, &lin, NULL), 0);
	ck_assert_msg(r.rand_write_p99_ratio * 4 < lin.rand_write_p99_ratio,
		      "eMMC p99 ratio %.1f, linear-only card %.1f",
		      r.rand_write_p99_ratio, lin.rand_write_p99_ratio);
	ck_assert(r.rand_write_iops_ratio > 4 * lin.rand_write_iops_ratio);
}
END_TEST

/* Sequential throughput is the profile's transfer rate. */
START_TEST(test_sequential_rate)
{
	static struct benchio_result r;
	const struct sim_profile *p = sim_profile_find("seed");
	struct benchio_opts o;
	double read_ns, write_ns;

	short_opts(&o);
	o.runtime_ns = 2000 * MS;
	o.workloads = BENCHIO_MASK(BENCHIO_SEQ_READ) | BENCHIO_MASK(BENCHIO_SEQ_WRITE);
	o.allow_writes = true;
	ck_assert_int_eq(run_sim("seed", &o, &r, NULL), 0);
	read_ns = model_read_ns(p, MiB);
	/* whole AUs written in order: pages programmed, one erase per AU
	 * when it is closed, no copies */
	write_ns = (double)p->write_base_ns +
		   (double)(MiB / p->page_bytes) * (double)p->write_page_ns +
		   (double)p->erase_ns * (double)MiB / (double)p->erase_bytes;
	ck_assert_msg(r.w[BENCHIO_SEQ_READ].bytes_per_sec > 0.95 * MiB * 1e9 / read_ns &&
		      r.w[BENCHIO_SEQ_READ].bytes_per_sec < 1.05 * MiB * 1e9 / read_ns,
		      "sequential read %.0f B/s, model %.0f",
		      r.w[BENCHIO_SEQ_READ].bytes_per_sec, MiB * 1e9 / read_ns);
	ck_assert_msg(r.w[BENCHIO_SEQ_WRITE].bytes_per_sec > 0.95 * MiB * 1e9 / write_ns &&
		      r.w[BENCHIO_SEQ_WRITE].bytes_per_sec < 1.05 * MiB * 1e9 / write_ns,
		      "sequential write %.0f B/s, model %.0f",
		      r.w[BENCHIO_SEQ_WRITE].bytes_per_sec, MiB * 1e9 / write_ns);
	/* both random workloads were not selected */
	ck_assert(r.w[BENCHIO_RAND_READ].skipped);
	ck_assert_str_eq(r.w[BENCHIO_RAND_READ].skip_reason, "not selected");
	ck_assert(!r.verdict_valid);
}
END_TEST

START_TEST(test_read_only_never_writes)
{
	static struct benchio_result r;
	struct benchio_opts o;
	struct fp_dev *d = open_sim("sdhc-4m");

	/* writes would be allowed by the device: only the option stops them */
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, fp_dev_size_bytes(d)), 0);
	short_opts(&o);
	ck_assert(!o.allow_writes);	/* the default */
	ck_assert_int_eq(benchio_run(d, &o, &r), 0);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	ck_assert_uint_eq(r.bytes_written, 0);
	ck_assert(r.w[BENCHIO_SEQ_WRITE].skipped);
	ck_assert(r.w[BENCHIO_RAND_WRITE].skipped);
	ck_assert_str_eq(r.w[BENCHIO_RAND_WRITE].skip_reason, "read-only");
	ck_assert_uint_eq(r.w[BENCHIO_RAND_WRITE].nrepeats, 0);
	ck_assert_uint_eq(r.w[BENCHIO_SEQ_READ].nrepeats, 3);
	ck_assert_uint_eq(r.w[BENCHIO_RAND_READ].nrepeats, 3);
	ck_assert_uint_eq(r.nactive, 2);
	ck_assert(!r.verdict_valid);
	fp_dev_close(d);

	/* only write workloads selected: nothing at all happens */
	d = open_sim("sdhc-4m");
	o.workloads = BENCHIO_MASK(BENCHIO_RAND_WRITE);
	ck_assert_int_eq(benchio_run(d, &o, &r), 0);
	ck_assert_uint_eq(fp_dev_io_count(d), 0);
	fp_dev_close(d);
}
END_TEST

/* Writes need the caller's write area: the analyzer sets none itself. */
START_TEST(test_writes_need_write_area)
{
	static struct benchio_result r;
	struct benchio_opts o;
	struct fp_dev *d = open_sim("emmc");

	short_opts(&o);
	o.allow_writes = true;
	ck_assert_int_eq(benchio_run(d, &o, &r), -EFAULT);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	fp_dev_close(d);
}
END_TEST

/* A pass-through device that records the extent of every request. */
struct recorder {
	struct fp_dev *inner;
	uint64_t min_off, max_end;
	uint64_t seq_write_bytes;
};

static void record(struct recorder *rec, size_t len, uint64_t off)
{
	if (off < rec->min_off)
		rec->min_off = off;
	if (off + len > rec->max_end)
		rec->max_end = off + len;
}

static int rec_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct recorder *rec = priv;

	record(rec, len, off);
	return fp_dev_read_timed(rec->inner, buf, len, off, NULL);
}

static int rec_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct recorder *rec = priv;

	record(rec, len, off);
	if (len > 4096)
		rec->seq_write_bytes += len;
	return fp_dev_write_timed(rec->inner, buf, len, off, NULL);
}

static const struct fp_dev_ops rec_ops = {
	.pread = rec_pread,
	.pwrite = rec_pwrite,
	.now_ns = tu_wrapped_now,
};

START_TEST(test_stays_inside_area)
{
	static struct benchio_result r;
	struct benchio_opts o;
	struct fp_dev *inner = open_sim("emmc"), *d;
	struct recorder rec = {
		.inner = inner,
		.min_off = UINT64_MAX,
	};

	d = fp_dev_create(&rec_ops, &rec, FP_DEV_SIM, "rec", fp_dev_size_bytes(inner),
			  fp_dev_sector_bytes(inner));
	ck_assert_ptr_nonnull(d);
	fp_dev_set_inner(d, inner);
	short_opts(&o);
	/* an area on no block boundary at either end */
	o.offset_bytes = 16 * MiB + 3 * 512;
	o.size_bytes = 3 * MiB + 7 * 512;
	o.allow_writes = true;
	ck_assert_int_eq(fp_dev_set_write_area(d, o.offset_bytes,
					       o.offset_bytes + o.size_bytes), 0);
	ck_assert_int_eq(benchio_run(d, &o, &r), 0);	/* no -EFAULT */
	ck_assert_uint_ge(rec.min_off, o.offset_bytes);
	ck_assert_uint_le(rec.max_end, o.offset_bytes + o.size_bytes);
	/* sequential writes went around the area more than once */
	ck_assert_uint_gt(rec.seq_write_bytes, 2 * o.size_bytes);
	ck_assert_uint_eq(r.bytes_written, fp_dev_bytes_written(d));
	fp_dev_close(d);
	fp_dev_close(inner);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Interruption and progress */

struct stopper {
	volatile sig_atomic_t flag;
	struct fp_dev *d;
	uint64_t stop_at_ns;
	uint64_t io_at_stop;
	uint64_t calls, last_done, total;
	bool monotone;
};

static void stop_progress(void *arg, uint64_t done, uint64_t total)
{
	struct stopper *s = arg;

	if (done < s->last_done)
		s->monotone = false;
	s->last_done = done;
	s->total = total;
	s->calls++;
	if (!s->flag && s->stop_at_ns && done >= s->stop_at_ns) {
		s->flag = 1;
		s->io_at_stop = fp_dev_io_count(s->d);
	}
}

START_TEST(test_interrupt_stops_at_next_request)
{
	static struct benchio_result r;
	static struct stopper s;
	struct benchio_opts o;

	memset(&s, 0, sizeof(s));
	s.d = open_sim("emmc");
	s.monotone = true;
	short_opts(&o);
	o.allow_writes = true;
	ck_assert_int_eq(fp_dev_set_write_area(s.d, o.offset_bytes,
					       o.offset_bytes + o.size_bytes), 0);
	o.progress = stop_progress;
	o.progress_arg = &s;
	o.interrupted = &s.flag;
	/* in the second repeat's first window */
	s.stop_at_ns = 4 * (o.runtime_ns + o.warmup_ns) + o.warmup_ns + 100 * MS;
	ck_assert_int_eq(benchio_run(s.d, &o, &r), -EINTR);
	ck_assert(s.flag);
	/* not one request after the flag */
	ck_assert_uint_eq(fp_dev_io_count(s.d), s.io_at_stop);
	ck_assert(r.interrupted);
	ck_assert_uint_eq(r.repeats_done, 1);
	/* what finished is reported: every workload once */
	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++)
		ck_assert_uint_eq(r.w[w].nrepeats, 1);
	ck_assert(r.verdict_valid);
	fp_dev_close(s.d);

	/* a flag already set: no I/O at all */
	memset(&s, 0, sizeof(s));
	s.d = open_sim("emmc");
	s.flag = 1;
	o.progress = NULL;
	ck_assert_int_eq(benchio_run(s.d, &o, &r), -EINTR);
	ck_assert_uint_eq(fp_dev_io_count(s.d), 0);
	ck_assert(r.interrupted);
	ck_assert_uint_eq(r.repeats_done, 0);
	fp_dev_close(s.d);
}
END_TEST

START_TEST(test_progress)
{
	static struct benchio_result r;
	static struct stopper s;
	struct benchio_opts o;

	memset(&s, 0, sizeof(s));
	s.d = open_sim("emmc");
	s.monotone = true;
	short_opts(&o);
	o.progress = stop_progress;
	o.progress_arg = &s;
	ck_assert_int_eq(benchio_run(s.d, &o, &r), 0);
	ck_assert(s.monotone);
	ck_assert_uint_eq(s.total, 2 * 3 * (o.runtime_ns + o.warmup_ns));
	ck_assert_uint_eq(s.last_done, s.total);
	/* about every 100 ms of device time, and at each window's end */
	ck_assert_uint_ge(s.calls, s.total / (100 * MS));
	fp_dev_close(s.d);
}
END_TEST

/* More requests than samples kept: percentiles from a uniform subset,
 * mean and max still exact, and the result says so. */
START_TEST(test_sample_cap)
{
	static struct benchio_result full, capped;
	struct benchio_opts o;
	const struct benchio_workload_result *f, *c;

	short_opts(&o);
	o.workloads = BENCHIO_MASK(BENCHIO_RAND_READ);
	ck_assert_int_eq(run_sim("emmc", &o, &full, NULL), 0);
	o.max_samples = 300;
	ck_assert_int_eq(run_sim("emmc", &o, &capped, NULL), 0);
	f = &full.w[BENCHIO_RAND_READ];
	c = &capped.w[BENCHIO_RAND_READ];
	ck_assert(!f->samples_capped);
	ck_assert(c->samples_capped);
	ck_assert_uint_gt(c->repeats[0].ios, 300);
	ck_assert_uint_eq(c->repeats[0].samples, 300);
	/* the same requests were made: exact figures agree */
	ck_assert_uint_eq(c->ios, f->ios);
	ck_assert_uint_eq(c->lat_ns.mean, f->lat_ns.mean);
	ck_assert_uint_eq(c->lat_ns.max, f->lat_ns.max);
	ck_assert_double_eq(c->iops, f->iops);
	ck_assert(c->lat_ns.p50 > f->lat_ns.p50 * 0.97 && c->lat_ns.p50 < f->lat_ns.p50 * 1.03);
	ck_assert_ptr_nonnull(strstr(capped.note, "uniform sample"));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Reports */

START_TEST(test_report_text_and_json)
{
	static struct benchio_result r;
	struct benchio_opts o;
	char *text = NULL, *json = NULL;
	size_t len;
	FILE *f;
	struct json_writer w;
	struct jsonv *doc;

	short_opts(&o);
	ck_assert_int_eq(run_sim("emmc", &o, &r, NULL), 0);
	f = open_memstream(&text, &len);
	report_bench_text(f, &r);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "MiB/s"));
	ck_assert_ptr_nonnull(strstr(text, "p99.9"));
	ck_assert_ptr_nonnull(strstr(text, "seq_write"));
	ck_assert_ptr_nonnull(strstr(text, "skipped (read-only"));
	ck_assert_ptr_nonnull(strstr(text, "random writes: not compared"));
	f = open_memstream(&json, &len);
	json_init(&w, f);
	json_object_begin(&w, NULL);
	report_bench_json(&w, &r);
	json_object_end(&w);
	json_end(&w);
	fclose(f);
	doc = jsonv_parse(json);
	ck_assert_msg(doc != NULL, "not one JSON document: %s", json);
	for (unsigned i = 0; i < BENCHIO_NWORKLOADS; i++) {
		const struct benchio_workload_result *wr = &r.w[i];
		static const char *const lat[] = { "mean", "p50", "p95", "p99",
						   "p999", "max" };
		const uint64_t want[] = { wr->lat_ns.mean, wr->lat_ns.p50,
					  wr->lat_ns.p95, wr->lat_ns.p99,
					  wr->lat_ns.p999, wr->lat_ns.max };
		const struct jsonv *obj = jsonv_get(doc, "bench"), *v;
		char key[64];

		obj = jsonv_get(obj, wr->name);
		ck_assert_ptr_nonnull(obj);
		v = jsonv_get(obj, "name");
		ck_assert(v && v->type == JSONV_STRING && !strcmp(v->string, wr->name));
		v = jsonv_get(obj, "block_bytes");
		ck_assert(v && v->type == JSONV_NUMBER && v->number == (double)wr->block_bytes);
		v = jsonv_get(obj, "repeats");
		ck_assert(v && v->type == JSONV_ARRAY);
		ck_assert_uint_eq(jsonv_len(v), wr->nrepeats);
		v = jsonv_get(obj, "iops");
		if (wr->skipped) {
			ck_assert(v && v->type == JSONV_NULL);
			v = jsonv_get(obj, "lat_ns");
			ck_assert(v && v->type == JSONV_NULL);
			continue;
		}
		ck_assert(v && v->type == JSONV_NUMBER && v->number == wr->iops);
		v = jsonv_get(obj, "bytes_per_sec");
		ck_assert(v && v->type == JSONV_NUMBER && v->number == wr->bytes_per_sec);
		for (size_t k = 0; k < 6; k++) {
			snprintf(key, sizeof(key), "lat_ns.%s", lat[k]);
			v = jsonv_get(obj, key);
			ck_assert_msg(v && v->type == JSONV_NUMBER &&
				      v->number == (double)want[k], "%s %s", wr->name, key);
		}
	}
	ck_assert(jsonv_get(doc, "bench.verdict.rand_write_p99_ns")->type == JSONV_NULL);
	ck_assert_uint_eq(jsonv_len(jsonv_get(doc, "bench.order")), 3);
	jsonv_free(doc);
	free(text);
	free(json);
}
END_TEST

Suite *benchio_suite(void)
{
	Suite *s = suite_create("benchio");
	TCase *pct = tcase_create("percentiles");
	TCase *opts = tcase_create("options");
	TCase *run = tcase_create("run");

	tcase_add_test(pct, test_percentiles_uniform);
	tcase_add_test(pct, test_percentiles_constant_and_single);
	tcase_add_test(pct, test_percentiles_two_point);
	tcase_add_test(pct, test_percentiles_p999_edges);
	suite_add_tcase(s, pct);

	tcase_add_test(opts, test_workload_names);
	tcase_add_test(opts, test_plan_area);
	tcase_add_test(opts, test_bad_options);
	suite_add_tcase(s, opts);

	tcase_add_test(run, test_scripted_medians_and_order);
	tcase_add_test(run, test_all_workloads_consistent);
	tcase_add_test(run, test_linear_only_card);
	tcase_add_test(run, test_emmc_card);
	tcase_add_test(run, test_sequential_rate);
	tcase_add_test(run, test_read_only_never_writes);
	tcase_add_test(run, test_writes_need_write_area);
	tcase_add_test(run, test_stays_inside_area);
	tcase_add_test(run, test_interrupt_stops_at_next_request);
	tcase_add_test(run, test_progress);
	tcase_add_test(run, test_sample_cap);
	tcase_add_test(run, test_report_text_and_json);
	tcase_set_timeout(run, 30);
	suite_add_tcase(s, run);
	return s;
}
