/* check_findfat.c - the FAT-area finder on simulated cards: every built-in
 * card, a generated table of areas, unit sizes, pools and noise, the
 * flashbench-compatible manual mode, the write area, and the reports. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "findfat.h"
#include "json.h"
#include "jsonv.h"
#include "report_findfat.h"
#include "sim.h"
#include "stats.h"
#include "testutil.h"
#include "util.h"
#include "tests.h"

#define GENERATED_CASES 48
#define CONFIDENT 0.8
#define FINDFAT_TRUSTED_TEST 0.5	/* below: reported as low */

static const uint64_t KiB = 1024, MiB = 1024 * 1024;
static const uint64_t US = 1000, MS = 1000 * 1000;

/* ------------------------------------------------------------------ */
/* A recording device: passes everything to a simulated card and keeps the
 * lowest and highest byte any write reached, so a test sees where writes
 * went without trusting the analyzer. */

struct recorder {
	struct fp_dev *inner;
	uint64_t lo, hi;		/* written bytes span [lo, hi) */
	uint64_t writes;
	uint64_t slow_end;		/* writes starting below it take */
	double slow_factor;		/* this many times as long (if > 1) */
	size_t slow_max_len;		/* only writes up to this long (0: all) */
	uint64_t spare_lo, spare_hi;	/* writes starting here are not slowed */
	uint64_t extra_ns;
};

static int rec_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct recorder *rc = priv;

	if (off < rc->lo)
		rc->lo = off;
	if (off + len > rc->hi)
		rc->hi = off + len;
	rc->writes++;
	if (off < rc->slow_end && rc->slow_factor > 1 &&
	    (!rc->slow_max_len || len <= rc->slow_max_len) &&
	    (off < rc->spare_lo || off >= rc->spare_hi)) {
		uint64_t t0 = fp_dev_now_ns(rc->inner);
		int ret = fp_dev_write_timed(rc->inner, buf, len, off, NULL);

		rc->extra_ns += (uint64_t)llround((rc->slow_factor - 1) *
						  (double)(fp_dev_now_ns(rc->inner) - t0));
		return ret;
	}
	return fp_dev_write_timed(rc->inner, buf, len, off, NULL);
}

static uint64_t rec_now_ns(void *priv)
{
	struct recorder *rc = priv;

	return fp_dev_now_ns(rc->inner) + rc->extra_ns;
}

static void rec_close(void *priv)
{
	(void)priv;	/* the test closes the inner device itself */
}

static const struct fp_dev_ops rec_ops = {
	.pread = tu_wrapped_pread,
	.pwrite = rec_pwrite,
	.now_ns = rec_now_ns,
	.close = rec_close,
};

/* Open p behind a recorder; the inner card accepts writes anywhere, the
 * outer device only where the analyzer announces. */
static struct fp_dev *rec_open(const struct sim_profile *p, struct recorder *rc)
{
	struct fp_dev *d;

	memset(rc, 0, sizeof(*rc));
	rc->lo = UINT64_MAX;
	ck_assert_int_eq(sim_open(p, &rc->inner), 0);
	ck_assert_int_eq(fp_dev_set_write_area(rc->inner, 0, p->size_bytes), 0);
	d = fp_dev_create(&rec_ops, rc, FP_DEV_SIM, "rec", p->size_bytes,
			  p->sector_bytes);
	ck_assert_ptr_nonnull(d);
	return d;
}

static void rec_close_all(struct fp_dev *d, struct recorder *rc)
{
	fp_dev_close(d);
	fp_dev_close(rc->inner);
}

/* ------------------------------------------------------------------ */
/* Generated cards */

static double uni(struct stats_rng *g, double lo, double hi)
{
	return lo + (hi - lo) * stats_rng_uniform(g);
}

/* The read and write costs of a generated card, all scaled by one factor
 * drawn over two decades (returned). */
static double gen_costs(struct stats_rng *g, struct sim_profile *p)
{
	double scale = pow(10, uni(g, -1, 1));

	p->read_base_ns = (uint64_t)(800 * US * scale);
	p->read_page_ns = (uint64_t)(100 * US * scale);
	p->write_base_ns = (uint64_t)(uni(g, 100, 800) * US * scale);
	p->write_page_ns = (uint64_t)(uni(g, 200, 3000) * US * scale);
	p->gc_page_ns = (uint64_t)(p->write_page_ns * uni(g, 0.4, 2.0));
	p->erase_ns = (uint64_t)(uni(g, 1, 6) * MS * scale);
	return scale;
}

/* Case i of the table.  Every fourth card has no FAT area; the others
 * span 1-32 units from unit 0 or 1 (the ends of both ranges are always in
 * the table).  Unit sizes 128 KiB-8 MiB (non-powers of two too), pools of
 * 1-6 open units with up to 2 random, all costs scaled by one factor over
 * two decades, jitter 0-30 %, every third card with its write pointer in
 * whole pages (sim page_wp).  Cards keeping more units open than the
 * finder interleaves, and areas whose small random writes are not at least
 * twice as fast as a unit copy, are marked ambiguous. */
static void gen_profile(unsigned i, struct sim_profile *p)
{
	static const uint64_t erase_kib[] = {
		128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	};
	struct stats_rng g;
	uint64_t e, units, pages;
	double scale, collapse_ns, fat_ns;

	memset(p, 0, sizeof(*p));
	stats_rng_seed(&g, 0xfa7ULL * (i + 1));
	snprintf(p->name, sizeof(p->name), "gen%u", i);
	p->description = "generated for check_findfat";
	e = erase_kib[i % 10] * KiB;
	p->erase_bytes = e;
	p->sector_bytes = i % 7 == 3 ? 4096 : 512;
	p->page_bytes = (2 * KiB) << stats_rng_below(&g, 4);	/* 2-16 KiB */
	while (e / p->page_bytes < 16)
		p->page_bytes /= 2;
	if (p->page_bytes < p->sector_bytes)
		p->page_bytes = p->sector_bytes;
	units = 48;
	p->size_bytes = e * (units > (256 * MiB) / e ? units : (256 * MiB) / e);

	/* FAT area */
	if (i % 4 != 0) {
		unsigned k = i % 8 == 1 ? 32 : i % 8 == 2 ? 1 :
			     1 + (unsigned)stats_rng_below(&g, i % 3 ? 8 : 32);

		p->fat_start_bytes = (i / 2) % 2 ? e : 0;
		p->fat_bytes = k * e;
	}

	/* pool */
	p->open_au_linear = 1 + (unsigned)stats_rng_below(&g, 6);
	p->open_au_random = (unsigned)stats_rng_below(&g, 3);
	if (p->open_au_random > p->open_au_linear)
		p->open_au_random = p->open_au_linear;
	if (i % 16 == 5) {
		/* a big pool: random writes never collapse, nothing stands out */
		p->open_au_linear = 16;
		p->open_au_random = 16;
		p->ambiguous = true;
	}

	/* costs: one scale for the whole card */
	scale = gen_costs(&g, p);
	p->random_write_ns = (uint64_t)(p->write_page_ns * uni(&g, 1, 5));
	pages = e / p->page_bytes;
	collapse_ns = (double)pages * p->gc_page_ns + p->erase_ns;
	p->fat_page_pct = 100 + (unsigned)stats_rng_below(&g, 400);
	p->fat_random_ns = (uint64_t)(collapse_ns * uni(&g, 0.02, 0.3));

	/* noise */
	p->jitter_pct = (unsigned)stats_rng_below(&g, 31);
	p->stall_ppm = (unsigned)stats_rng_below(&g, 300);
	p->stall_ns = (uint64_t)(uni(&g, 5, 20) * MS * scale);
	p->location_pct = 1;
	p->seed = i + 1;
	p->page_wp = i % 3 == 2;

	/* an area must stand out by twice a unit copy to be decidable */
	fat_ns = p->write_base_ns + p->fat_random_ns +
		 (double)p->write_page_ns * p->fat_page_pct / 100;
	if (p->fat_bytes && collapse_ns < 2 * fat_ns)
		p->ambiguous = true;
}

/* Case i of the many-open table: cards whose 16-64 open units all take
 * random writes (nothing collapses), units 128 KiB-24 MiB (3*2^n too),
 * costs over two decades, jitter 0-30 %, every other card with its write
 * pointer in whole pages (sim page_wp).  Two cards in three have a FAT
 * area of 1 unit up to 16 MiB (at most 32 units) from unit 0 or 1 that
 * differs from the rest as a FAT area does: small random writes at least
 * FAT_FASTER times faster, or page programs (small in-order and whole-unit
 * writes) at least FAT_SLOWER times slower, or both; the expected ratios
 * are computed from the card's costs. */
#define MANY_OPEN_CASES 36
#define FAT_FASTER 1.5
#define FAT_SLOWER 1.3
#define QUIET_JITTER 10		/* confident "none" expected up to this */

static void gen_many_open(unsigned i, struct sim_profile *p)
{
	static const uint64_t erase_kib[] = {
		128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 24576,
	};
	struct stats_rng g;
	uint64_t e, units;
	double scale, small, fat_small, lin, fat_lin;

	memset(p, 0, sizeof(*p));
	stats_rng_seed(&g, 0x0be7ULL * (i + 3));
	snprintf(p->name, sizeof(p->name), "many%u", i);
	p->description = "generated for check_findfat (many open units)";
	e = erase_kib[i % 12] * KiB;
	p->erase_bytes = e;
	p->sector_bytes = 512;
	p->page_bytes = (2 * KiB) << stats_rng_below(&g, 4);
	while (e / p->page_bytes < 16)
		p->page_bytes /= 2;
	units = 48;
	p->size_bytes = e * (units > (256 * MiB) / e ? units : (256 * MiB) / e);
	p->open_au_linear = 16 + (unsigned)stats_rng_below(&g, 49);
	p->open_au_random = p->open_au_linear;

	scale = gen_costs(&g, p);
	p->random_write_ns = (uint64_t)(p->write_page_ns * uni(&g, 0.2, 5));
	p->jitter_pct = (unsigned)(i / 12 == 0 ? stats_rng_below(&g, 4) :
				   stats_rng_below(&g, 31));
	p->stall_ppm = (unsigned)stats_rng_below(&g, 300);
	p->stall_ns = (uint64_t)(uni(&g, 5, 20) * MS * scale);
	p->location_pct = 1;
	p->seed = i + 1;
	p->page_wp = i % 2 == 1;
	if (i % 3 == 0)
		return;

	/* the FAT area: 1 unit up to 16 MiB */
	units = 16 * MiB / e;
	units = units < 1 ? 1 : units > 32 ? 32 : units;
	p->fat_bytes = e * (1 + stats_rng_below(&g, units));
	p->fat_start_bytes = i % 2 ? e : 0;
	small = (double)p->write_base_ns + p->write_page_ns + p->random_write_ns;
	lin = (double)p->write_base_ns + p->write_page_ns;
	do {
		unsigned kind = (unsigned)stats_rng_below(&g, 3);

		p->fat_page_pct = kind == 0 ? 100 :
				  130 + (unsigned)stats_rng_below(&g, 300);
		p->fat_random_ns = kind == 1 ? p->random_write_ns :
				   (uint64_t)(p->random_write_ns * uni(&g, 0, 0.3));
		fat_small = p->write_base_ns + p->fat_random_ns +
			    (double)p->write_page_ns * p->fat_page_pct / 100;
		fat_lin = p->write_base_ns +
			  (double)p->write_page_ns * p->fat_page_pct / 100;
	} while (small < FAT_FASTER * fat_small && fat_lin < FAT_SLOWER * lin);
}

/* ------------------------------------------------------------------ */
/* Checks */

/* Plan o for d, grant the plan's area as the session does, and run. */
static int plan_and_run(struct fp_dev *d, const struct findfat_opts *o,
			struct findfat_result *r)
{
	struct findfat_plan plan;
	int rc = findfat_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), o, &plan);

	fp_dev_end_write_area(d);
	if (rc == 0)
		rc = fp_dev_set_write_area(d, plan.start_bytes, plan.end_bytes);
	return rc < 0 ? rc : findfat_run(d, o, &plan, r);
}

static void run_auto(const struct sim_profile *p, uint64_t erase,
		     struct findfat_result *r, struct recorder *rc)
{
	struct fp_dev *d = rec_open(p, rc);
	struct findfat_opts o;
	struct findfat_plan plan;

	findfat_opts_default(&o);
	o.erase_size_bytes = erase;
	o.seed = p->seed * 31 + 1;
	/* the plan is known before anything is written */
	ck_assert_int_eq(findfat_plan(p->size_bytes, p->sector_bytes, &o, &plan), 0);
	ck_assert_uint_eq(rc->writes, 0);
	ck_assert_int_eq(plan_and_run(d, &o, r), 0);
	ck_assert_mem_eq(&plan, &r->plan, sizeof(plan));

	/* every write inside [start, end) of the plan, and within its bytes */
	ck_assert_uint_eq(plan.start_bytes, 0);
	ck_assert_uint_eq(plan.end_bytes, (uint64_t)plan.max_units * erase);
	ck_assert_uint_ge(rc->lo, plan.start_bytes);
	ck_assert_uint_le(rc->hi, plan.end_bytes);
	ck_assert_uint_le(r->bytes_written, plan.max_write_bytes);
	ck_assert_uint_eq(r->bytes_written, fp_dev_bytes_written(d));
	ck_assert_uint_gt(r->elapsed_ns, 0);
	rec_close_all(d, rc);
}

/* With FINDFAT_VERBOSE set, one line per card: the truth and the verdict
 * (for tables of the method's behaviour; checks do not depend on it). */
static void trace_result(const struct sim_profile *p,
			 const struct findfat_result *r)
{
	if (!getenv("FINDFAT_VERBOSE"))
		return;
	fprintf(stderr, "%s: E %llu KiB fat %llu+%llu pct %u fr %.2f jit %u: "
		"found %d %llu+%llu conf %.2f note '%s'\n", p->name,
		(unsigned long long)(p->erase_bytes / KiB),
		(unsigned long long)(p->fat_start_bytes / KiB),
		(unsigned long long)(p->fat_bytes / KiB), p->fat_page_pct,
		(double)p->fat_random_ns / (double)(p->random_write_ns + 1),
		p->jitter_pct, r->found, (unsigned long long)(r->start_bytes / KiB),
		(unsigned long long)(r->size_bytes / KiB), r->confidence, r->note);
}

/* The card's FAT area (or none) is what r says. */
static bool answer_right(const struct sim_profile *p,
			 const struct findfat_result *r)
{
	return p->fat_bytes ? r->found && r->start_bytes == p->fat_start_bytes &&
			      r->size_bytes == p->fat_bytes : !r->found;
}

/* Right answer where the card is decidable, never a confident wrong one. */
static void check_answer(const struct sim_profile *p,
			 const struct findfat_result *r)
{
	bool right = answer_right(p, r);

	ck_assert_msg(r->confidence >= 0 && r->confidence <= 1,
		      "%s: confidence %f", p->name, r->confidence);
	ck_assert_msg(right || r->confidence < CONFIDENT,
		      "%s: confidently wrong: found %d at %llu+%llu (confidence %.2f), "
		      "truth %llu+%llu; note '%s'", p->name, r->found,
		      (unsigned long long)r->start_bytes,
		      (unsigned long long)r->size_bytes, r->confidence,
		      (unsigned long long)p->fat_start_bytes,
		      (unsigned long long)p->fat_bytes, r->note);
	if (p->ambiguous)
		return;
	ck_assert_msg(right, "%s: found %d at %llu+%llu (confidence %.2f), "
		      "truth %llu+%llu; note '%s'", p->name, r->found,
		      (unsigned long long)r->start_bytes,
		      (unsigned long long)r->size_bytes, r->confidence,
		      (unsigned long long)p->fat_start_bytes,
		      (unsigned long long)p->fat_bytes, r->note);
	/* a found area is never reported at the lowest level of belief */
	if (r->found)
		ck_assert_msg(r->confidence >= 0.5, "%s: found with confidence %.2f",
			      p->name, r->confidence);
}

static unsigned builtin_count(void)
{
	unsigned n = 0;

	while (sim_profiles[n].name[0])
		n++;
	return n;
}

/* Each built-in card with several seeds of its noise (and so of the test's
 * order): one lucky run is not an answer the card gives. */
#define NSEEDS 3

START_TEST(test_builtin_profiles)
{
	struct sim_profile p = sim_profiles[_i / NSEEDS];
	struct findfat_result r;
	struct recorder rc;

	p.seed += (uint64_t)(_i % NSEEDS) * 7919;
	run_auto(&p, p.erase_bytes, &r, &rc);
	trace_result(&p, &r);
	check_answer(&p, &r);
}
END_TEST

/* Worn cards whose writes get slower the more they are written: the
 * answer is right or undetermined (below 0.5), never a wrong one the
 * report states (np2-6m with wear=20ms said "no FAT area found, 0.76"
 * before the references' whole writes were checked for a trend); cards
 * that slow down only slightly still get the right answer. */
static const struct {
	const char *spec;
	bool drifts;
} worn_cards[] = {
	{ "np2-6m,wear=20ms", true },
	{ "seed,wear=20ms", true },
	{ "emmc,wear=5ms", true },
	{ "legacy-128k,wear=1ms", false },
	{ "seed,wear=1ms", false },
	{ "np2-6m,wear=1ms", false },
};

START_TEST(test_worn_slowing_card)
{
	struct sim_profile p;
	struct findfat_result r;
	struct recorder rc;
	char err[256] = "";
	bool right;

	ck_assert_msg(sim_profile_parse(worn_cards[_i].spec, &p, err, sizeof(err)) == 0,
		      "%s", err);
	run_auto(&p, p.erase_bytes, &r, &rc);
	trace_result(&p, &r);
	right = p.fat_bytes ? r.found && r.start_bytes == p.fat_start_bytes &&
			      r.size_bytes == p.fat_bytes : !r.found;
	ck_assert_msg(right || r.confidence < 0.5, "%s: found %d %llu+%llu with "
		      "confidence %.2f; note '%s'", worn_cards[_i].spec, r.found,
		      (unsigned long long)r.start_bytes, (unsigned long long)r.size_bytes,
		      r.confidence, r.note);
	if (!worn_cards[_i].drifts)
		check_answer(&p, &r);
	else if (!right)
		ck_assert_msg(strstr(r.note, "changed during the test"), "%s: %s",
			      worn_cards[_i].spec, r.note);
}
END_TEST

/* Genuine cards behind a write buffer (sim wbuf=), with a FAT area and
 * without: buffers smaller than a unit, of a few units, 4-64 MiB and
 * larger than everything the test writes, fast and slow.  The answer is
 * right or below trusted (0.5, reported as low): a buffer larger than the
 * writes made every unit look alike, which before the byte rule for
 * "none" (FP_WBUF_HIDE_BYTES) was a "none" at 0.95 on seed, legacy-128k
 * and np2-6m.  FLASHPROBE_LONG=1 adds seeds and time scales. */
static const char *const wbuf_cards[] = { "seed", "legacy-128k", "np2-6m",
					  "sdhc-4m", "emmc" };
static const char *const wbuf_sizes[] = { "512KiB", "6MiB", "48MiB", "2GiB" };
static const char *const wbuf_times[] = { "20us", "300us", "5us", "1ms" };
#define WBUF_TIMES_SHORT 2
#define WBUF_SEEDS_LONG 3

static unsigned wbuf_times_used(void)
{
	return getenv("FLASHPROBE_LONG") ?
	       (unsigned)(sizeof(wbuf_times) / sizeof(wbuf_times[0])) : WBUF_TIMES_SHORT;
}

static unsigned wbuf_case_count(void)
{
	return (unsigned)(sizeof(wbuf_cards) / sizeof(wbuf_cards[0]) *
			  sizeof(wbuf_sizes) / sizeof(wbuf_sizes[0])) *
	       wbuf_times_used() * (getenv("FLASHPROBE_LONG") ? WBUF_SEEDS_LONG : 1);
}

START_TEST(test_write_buffer)
{
	const unsigned ncards = sizeof(wbuf_cards) / sizeof(wbuf_cards[0]);
	const unsigned nsizes = sizeof(wbuf_sizes) / sizeof(wbuf_sizes[0]);
	unsigned i = (unsigned)_i, per_seed = ncards * nsizes * wbuf_times_used();
	struct sim_profile p;
	struct findfat_result r;
	struct recorder rc;
	char spec[128], err[256] = "";

	snprintf(spec, sizeof(spec), "%s,wbuf=%s,wbuf_write=%s,seed=%u",
		 wbuf_cards[i % ncards], wbuf_sizes[i / ncards % nsizes],
		 wbuf_times[i / ncards / nsizes % wbuf_times_used()],
		 1 + i / per_seed);
	ck_assert_msg(sim_profile_parse(spec, &p, err, sizeof(err)) == 0, "%s", err);
	run_auto(&p, p.erase_bytes, &r, &rc);
	ck_assert_msg(answer_right(&p, &r) || r.confidence < FINDFAT_TRUSTED_TEST,
		      "%s: found %d at %llu+%llu (confidence %.2f), truth %llu+%llu; "
		      "note '%s'", spec, r.found, (unsigned long long)r.start_bytes,
		      (unsigned long long)r.size_bytes, r.confidence,
		      (unsigned long long)p.fat_start_bytes,
		      (unsigned long long)p.fat_bytes, r.note);
}
END_TEST

START_TEST(test_generated_profiles)
{
	struct sim_profile p;
	struct findfat_result r;
	struct recorder rc;
	char err[128];

	gen_profile((unsigned)_i, &p);
	ck_assert_msg(sim_profile_validate(&p, err, sizeof(err)) == 0,
		      "gen%d: %s", _i, err);
	run_auto(&p, p.erase_bytes, &r, &rc);
	trace_result(&p, &r);
	check_answer(&p, &r);
}
END_TEST

/* Many random-capable open units: never confidently wrong, a FAT area
 * found or undetermined, and a "none" on the quiet cards without one:
 * confident once some unit collapsed or the run wrote more than a write
 * buffer may hold (FP_WBUF_HIDE_BYTES), below trusted with a note before
 * (no write slowed down, which a large write buffer would show too). */
START_TEST(test_many_open_profiles)
{
	struct sim_profile p;
	struct findfat_result r;
	struct recorder rc;
	char err[128];

	gen_many_open((unsigned)_i, &p);
	ck_assert_msg(sim_profile_validate(&p, err, sizeof(err)) == 0,
		      "many%d: %s", _i, err);
	p.ambiguous = true;	/* right or undetermined */
	run_auto(&p, p.erase_bytes, &r, &rc);
	trace_result(&p, &r);
	check_answer(&p, &r);
	if (p.fat_bytes == 0 && p.jitter_pct <= QUIET_JITTER &&
	    (r.collapse_seen || r.bytes_written >= FP_WBUF_HIDE_BYTES))
		ck_assert_msg(!r.found && r.confidence >= CONFIDENT,
			      "%s: no area, jitter %u%%: found %d, confidence %.2f, "
			      "note '%s'", p.name, p.jitter_pct, r.found,
			      r.confidence, r.note);
	else if (p.fat_bytes == 0 && p.jitter_pct <= QUIET_JITTER)
		ck_assert_msg(!r.found && r.confidence >= 0.4 &&
			      strstr(r.note, "write buffer") != NULL,
			      "%s: no area, jitter %u%%, %llu bytes written: found "
			      "%d, confidence %.2f, note '%s'", p.name, p.jitter_pct,
			      (unsigned long long)r.bytes_written, r.found,
			      r.confidence, r.note);
}
END_TEST

/* The table holds what it promises: both FAT-area ends, both starts, no
 * area, every unit size, and enough decidable cards. */
START_TEST(test_generated_table_coverage)
{
	bool none = false, one = false, many = false, at0 = false, at1 = false;
	unsigned decidable = 0, jitter_max = 0;
	uint64_t e_min = UINT64_MAX, e_max = 0;

	for (unsigned i = 0; i < GENERATED_CASES; i++) {
		struct sim_profile p;

		gen_profile(i, &p);
		none |= p.fat_bytes == 0;
		one |= p.fat_bytes == p.erase_bytes;
		many |= p.fat_bytes == 32 * p.erase_bytes;
		at0 |= p.fat_bytes && p.fat_start_bytes == 0;
		at1 |= p.fat_bytes && p.fat_start_bytes == p.erase_bytes;
		decidable += !p.ambiguous;
		e_min = p.erase_bytes < e_min ? p.erase_bytes : e_min;
		e_max = p.erase_bytes > e_max ? p.erase_bytes : e_max;
		jitter_max = p.jitter_pct > jitter_max ? p.jitter_pct : jitter_max;
	}
	ck_assert(none && one && many && at0 && at1);
	ck_assert_uint_ge(decidable, 30);
	ck_assert_uint_eq(e_min, 128 * KiB);
	ck_assert_uint_eq(e_max, 8 * MiB);
	ck_assert_uint_ge(jitter_max, 25);
}
END_TEST

/* sandisk-24m's behaviour (64 random-capable open units) on 8 MiB units
 * over 512 MiB, so that a test runs in moments. */
static void many_open_card(struct sim_profile *p)
{
	*p = *sim_profile_find("sandisk-24m");
	p->size_bytes = 512 * MiB;	/* 2^29 is not a multiple of 24 MiB */
	p->erase_bytes = 8 * MiB;
	p->page_bytes = 16 * KiB;
	p->raw_page_bytes = 0;
}

/* Same card, every cost 10x higher or lower: same answer (a collapsing
 * card, and one that keeps many units open). */
START_TEST(test_speed_invariance)
{
	static const double factor[] = { 0.1, 10 };
	struct sim_profile base;
	struct findfat_result r0, r;
	struct recorder rc;

	if (_i == 0)
		base = *sim_profile_find("seed");
	else
		many_open_card(&base);
	run_auto(&base, base.erase_bytes, &r0, &rc);
	for (size_t i = 0; i < 2; i++) {
		struct sim_profile p = base;
		double f = factor[i];

		p.write_base_ns = (uint64_t)(p.write_base_ns * f);
		p.write_page_ns = (uint64_t)(p.write_page_ns * f);
		p.gc_page_ns = (uint64_t)(p.gc_page_ns * f);
		p.erase_ns = (uint64_t)(p.erase_ns * f);
		p.random_write_ns = (uint64_t)(p.random_write_ns * f);
		p.fat_random_ns = (uint64_t)(p.fat_random_ns * f);
		p.stall_ns = (uint64_t)(p.stall_ns * f);
		run_auto(&p, p.erase_bytes, &r, &rc);
		ck_assert_int_eq(r.found, r0.found);
		ck_assert_uint_eq(r.start_bytes, r0.start_bytes);
		ck_assert_uint_eq(r.size_bytes, r0.size_bytes);
		ck_assert_double_eq_tol(r.confidence, r0.confidence, 0.05);
	}
}
END_TEST

/* Units twice the card's erase block (flashbench's default 4 MiB on the
 * seed card): the area is still the first 8 MiB. */
/* Unit 0 of the seed card's 8 MiB FAT area written 2.5 times slower than
 * the rest of it: still faster than normal units, slower than units 1-3
 * (was "6MiB at unit 1" at 0.87; a card
 * charging the test's own order of writes inside its FAT area: the
 * independent card model's seed 505 was read as "1MiB at unit 1" at
 * 0.94-0.99 for a 2 MiB area from 0).  An area at units 1-3 is not
 * reported above the report threshold. */
START_TEST(test_fat_unit_between_speeds)
{
	/* the case above, then unit 0's small writes only, slowed until
	 * they are barely faster than normal units' while its whole-unit
	 * writes stay as fast as the area's (the independent model's 8 MiB
	 * area: 1.42x and 4x, read as "4MiB at unit 1" at 0.94) */
	static const double factor[] = { 2.5, 4, 6, 8, 10, 12 };
	const struct sim_profile *p = sim_profile_find("seed");
	struct findfat_result *r = malloc(sizeof(*r));
	struct findfat_opts o;
	struct findfat_plan plan;
	struct recorder rc;
	struct fp_dev *d = rec_open(p, &rc);

	ck_assert_ptr_nonnull(r);
	rc.slow_end = p->erase_bytes;
	rc.slow_factor = factor[_i];
	rc.slow_max_len = _i ? 64 * 1024 : 0;
	findfat_opts_default(&o);
	o.erase_size_bytes = p->erase_bytes;
	ck_assert_int_eq(findfat_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), &o,
				      &plan), 0);
	ck_assert_int_eq(fp_dev_set_write_area(d, plan.start_bytes, plan.end_bytes), 0);
	ck_assert_int_eq(findfat_run(d, &o, &plan, r), 0);
	ck_assert_msg(!r->found || r->start_bytes == 0 || r->confidence < 0.6,
		      "area at %llu, %llu bytes, confidence %.2f (%s)",
		      (unsigned long long)r->start_bytes, (unsigned long long)r->size_bytes,
		      r->confidence, r->note);
	rec_close_all(d, &rc);
	free(r);
}
END_TEST

/* One unit past the first ones takes small random writes 100 times
 * faster than every other unit, references included: no area of leading
 * units stands out, yet a unit behaves as a FAT area does.  "None" stays
 * below trusted (an independent card model's 32 MiB area, one unit
 * 191-246x faster, gave "none" at 0.60). */
START_TEST(test_one_fast_unit_is_no_confident_none)
{
	struct sim_profile p = *sim_profile_find("seed");
	struct findfat_result r;
	struct findfat_opts o;
	struct recorder rc;
	struct fp_dev *d;

	p.fat_bytes = 0;
	d = rec_open(&p, &rc);
	rc.slow_end = UINT64_MAX;
	rc.slow_factor = 100;
	rc.slow_max_len = 64 * 1024;
	rc.spare_lo = (3 + (uint64_t)_i) * p.erase_bytes;
	rc.spare_hi = rc.spare_lo + p.erase_bytes;
	findfat_opts_default(&o);
	o.erase_size_bytes = p.erase_bytes;
	ck_assert_int_eq(plan_and_run(d, &o, &r), 0);
	ck_assert_msg(r.confidence < 0.5, "%s at %llu, %llu bytes, confidence %.2f (%s)",
		      r.found ? "area" : "none", (unsigned long long)r.start_bytes,
		      (unsigned long long)r.size_bytes, r.confidence, r.note);
	rec_close_all(d, &rc);
}
END_TEST

START_TEST(test_seed_with_4mib_units)
{
	const struct sim_profile *p = sim_profile_find("seed");
	struct findfat_result r;
	struct recorder rc;

	run_auto(p, 4 * MiB, &r, &rc);
	ck_assert(r.found);
	ck_assert_uint_eq(r.start_bytes, 0);
	ck_assert_uint_eq(r.size_bytes, 8 * MiB);
	ck_assert_double_ge(r.confidence, CONFIDENT);
}
END_TEST

/* A card whose every unit takes random writes cheaply: nothing collapses,
 * so the confirmation compares small in-order and whole-unit writes too;
 * the start behaves like the rest, which is a confident "none". */
START_TEST(test_no_contrast_confident_none)
{
	struct sim_profile p;
	struct findfat_result r;
	struct recorder rc;

	many_open_card(&p);
	run_auto(&p, p.erase_bytes, &r, &rc);
	ck_assert(!r.found);
	ck_assert(!r.collapse_seen);
	ck_assert_uint_eq(r.nrows, 3);		/* the confirmation ran */
	ck_assert(!r.rows[2].random);
	ck_assert_double_ge(r.confidence, CONFIDENT);
}
END_TEST

/* Just past the thresholds: leading units that differ from the rest by
 * 1.15-1.3x in one way only (small random writes faster, or page programs
 * slower), on a quiet and a noisier card, are never a confident "none". */
START_TEST(test_small_differences_are_not_none)
{
	static const struct {
		double random_factor;	/* FAT random cost / card's */
		unsigned page_pct;
		unsigned jitter;
	} cases[] = {
		{ 0.0, 100, 4 },	/* random writes 1.16x faster */
		{ 0.0, 100, 10 },
		{ 1.0, 118, 4 },	/* page programs 1.18x slower */
		{ 1.0, 118, 10 },
		{ 1.0, 125, 4 },
		{ 1.0, 130, 10 },
		{ 3.0, 100, 4 },	/* random writes 1.28x slower */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sim_profile p;
		struct findfat_result r;
		struct recorder rc;

		many_open_card(&p);
		p.fat_start_bytes = 0;
		p.fat_bytes = 2 * p.erase_bytes;
		p.fat_random_ns = (uint64_t)(p.random_write_ns * cases[i].random_factor);
		p.fat_page_pct = cases[i].page_pct;
		p.jitter_pct = cases[i].jitter;
		run_auto(&p, p.erase_bytes, &r, &rc);
		ck_assert_msg(r.found || r.confidence < CONFIDENT,
			      "case %zu: none with confidence %.2f", i, r.confidence);
		ck_assert_msg(!r.found || r.size_bytes == p.fat_bytes ||
			      r.confidence < CONFIDENT, "case %zu: wrong area", i);
	}
}
END_TEST

/* A leading group that is slower, not faster (Kingston SA04G's slow AU 0
 * in spirit): not a FAT area. */
START_TEST(test_slow_start_is_not_fat)
{
	struct sim_profile p = *sim_profile_find("readme");
	struct findfat_result r;
	struct recorder rc;

	p.size_bytes = 256 * MiB;
	p.fat_bytes = 2 * p.erase_bytes;	/* "FAT" units, but slow ones */
	p.fat_random_ns = 3 * 1000 * MS;
	p.fat_page_pct = 100;
	run_auto(&p, p.erase_bytes, &r, &rc);
	ck_assert(!r.found);
	ck_assert_double_lt(r.confidence, CONFIDENT);
}
END_TEST

/* A pool large enough to keep every examined unit open, linear only: the
 * sample must still land out of order in every unit, so normal units
 * collapse and the area stands out. */
START_TEST(test_big_linear_pool)
{
	struct sim_profile p = *sim_profile_find("seed");
	struct findfat_result r;
	struct recorder rc;

	p.size_bytes = 256 * MiB;
	p.open_au_linear = 32;
	p.open_au_random = 0;
	run_auto(&p, p.erase_bytes, &r, &rc);
	ck_assert(r.found);
	ck_assert_uint_eq(r.start_bytes, p.fat_start_bytes);
	ck_assert_uint_eq(r.size_bytes, p.fat_bytes);
}
END_TEST

/* A large pool with a few random-mode slots and no FAT area: whichever
 * units grab the slots get cheap random writes.  That must never look like
 * a FAT area at the start. */
START_TEST(test_random_slots_are_not_fat)
{
	struct sim_profile p = *sim_profile_find("readme");
	struct findfat_result r;
	struct recorder rc;

	p.size_bytes = 256 * MiB;
	for (unsigned rnd = 1; rnd <= 8; rnd++) {
		p.open_au_linear = 32;
		p.open_au_random = rnd;
		run_auto(&p, p.erase_bytes, &r, &rc);
		ck_assert_msg(!r.found || r.confidence < CONFIDENT,
			      "%u random slots: area %llu+%llu, confidence %.2f", rnd,
			      (unsigned long long)r.start_bytes,
			      (unsigned long long)r.size_bytes, r.confidence);
	}
}
END_TEST

/* A unit size that cuts through the area (3 MiB units over an 8 MiB area)
 * leaves a unit with fast and slow writes: say so, and do not be sure. */
START_TEST(test_wrong_unit_size)
{
	const struct sim_profile *p = sim_profile_find("seed");
	struct findfat_result r;
	struct recorder rc;

	run_auto(p, 3 * MiB, &r, &rc);
	ck_assert_double_lt(r.confidence, CONFIDENT);
	ck_assert_ptr_nonnull(strstr(r.note, "erase size"));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Manual mode */

static void run_manual(const struct sim_profile *p, uint64_t erase,
		       uint64_t block, unsigned units, bool random,
		       struct findfat_result *r)
{
	struct recorder rc;
	struct fp_dev *d = rec_open(p, &rc);
	struct findfat_opts o;

	findfat_opts_default(&o);
	o.mode = FINDFAT_MANUAL;
	o.erase_size_bytes = erase;
	o.blocksize_bytes = block;
	o.units = units;
	o.random = random;
	ck_assert_int_eq(plan_and_run(d, &o, r), 0);
	ck_assert_uint_le(rc.hi, (uint64_t)units * erase);
	ck_assert_uint_eq(r->bytes_written,
			  findfat_flashbench_bytes(erase, block, units));
	ck_assert_uint_eq(r->bytes_written, r->plan.max_write_bytes);
	rec_close_all(d, &rc);
}

/* flashbench --findfat --random --fat-nr=6 (4 MiB units) on the seed
 * card: the first two columns stay fast at small chunks and are slow at
 * whole units, as in seeds/004. */
START_TEST(test_manual_seed_signature)
{
	const struct sim_profile *p = sim_profile_find("seed");
	struct findfat_result r;
	const struct findfat_row *small, *large;

	run_manual(p, 4 * MiB, 32 * KiB, 6, true, &r);
	ck_assert_uint_eq(r.nrows, 8);		/* 4MiB .. 32KiB */
	ck_assert_uint_eq(r.ncols, 6);
	ck_assert(!r.found);
	large = &r.rows[0];
	small = &r.rows[r.nrows - 1];
	ck_assert_uint_eq(large->chunk_bytes, 4 * MiB);
	ck_assert_uint_eq(small->chunk_bytes, 32 * KiB);
	ck_assert_uint_eq(small->writes_per_unit, 128);
	for (unsigned fat = 0; fat < 2; fat++) {
		for (unsigned u = 2; u < 6; u++) {
			ck_assert_double_gt(small->bytes_per_sec[fat],
					    2.0 * small->bytes_per_sec[u]);
			ck_assert_double_lt(large->bytes_per_sec[fat],
					    large->bytes_per_sec[u]);
		}
	}
}
END_TEST

/* Linear order, a non-power-of-two unit: rows halve while they divide. */
START_TEST(test_manual_rows_np2)
{
	const struct sim_profile *p = sim_profile_find("np2-3m");
	struct findfat_result r;
	uint64_t expect = 3 * MiB;

	run_manual(p, 3 * MiB, 24 * KiB, 3, false, &r);
	ck_assert_uint_eq(r.nrows, 8);		/* 3M 1.5M 768K ... 24K */
	for (size_t i = 0; i < r.nrows; i++, expect /= 2) {
		ck_assert_uint_eq(r.rows[i].chunk_bytes, expect);
		ck_assert(!r.rows[i].random);
		for (unsigned u = 0; u < r.ncols; u++)
			ck_assert_double_gt(r.rows[i].bytes_per_sec[u], 0);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Plans, errors, costs */

START_TEST(test_plan_errors)
{
	struct findfat_opts o;
	struct findfat_plan p;

	findfat_opts_default(&o);
	ck_assert_int_eq(findfat_plan(256 * MiB, 512, &o, &p), -EINVAL);
	o.erase_size_bytes = 4 * MiB + 512 / 2;
	ck_assert_int_eq(findfat_plan(256 * MiB, 512, &o, &p), -EINVAL);
	o.erase_size_bytes = 4 * MiB;
	o.blocksize_bytes = 12 * KiB;		/* does not divide 4 MiB */
	ck_assert_int_eq(findfat_plan(256 * MiB, 512, &o, &p), -EINVAL);
	o.mode = FINDFAT_MANUAL;
	ck_assert_int_eq(findfat_plan(256 * MiB, 512, &o, &p), -EINVAL);
	o.blocksize_bytes = 1024;		/* not a 4 KiB-sector multiple */
	ck_assert_int_eq(findfat_plan(256 * MiB, 4096, &o, &p), -EINVAL);
	o.blocksize_bytes = 0;
	o.units = FINDFAT_MAX_UNITS + 1;
	ck_assert_int_eq(findfat_plan(256 * MiB, 512, &o, &p), -EINVAL);
	o.units = 6;
	ck_assert_int_eq(findfat_plan(16 * MiB, 512, &o, &p), -ENOSPC);
	o.mode = FINDFAT_AUTO;
	o.units = 0;
	ck_assert_int_eq(findfat_plan(32 * MiB, 512, &o, &p), -ENOSPC);
	o.blocksize_bytes = 1 * MiB;		/* too few chunks to sample */
	ck_assert_int_eq(findfat_plan(256 * MiB, 512, &o, &p), -EINVAL);
	o.blocksize_bytes = 0;
	o.erase_size_bytes = FINDFAT_MAX_ERASE_BYTES * 2;
	ck_assert_int_eq(findfat_plan(1024 * MiB, 512, &o, &p), -E2BIG);
}
END_TEST

START_TEST(test_plan_defaults)
{
	struct findfat_opts o;
	struct findfat_plan p;

	findfat_opts_default(&o);
	o.erase_size_bytes = 4 * MiB;
	ck_assert_int_eq(findfat_plan(1024 * MiB, 512, &o, &p), 0);
	ck_assert_uint_eq(p.start_bytes, 0);
	ck_assert_uint_eq(p.blocksize_bytes, 16 * KiB);
	ck_assert_uint_eq(p.min_units, 8);
	/* room for a 32-unit area after unit 0 and normal units after it */
	ck_assert_uint_ge(p.max_lead_units, 1 + FINDFAT_MAX_AREA_UNITS + 4);
	ck_assert_uint_eq(p.end_bytes, (uint64_t)p.max_units * 4 * MiB);
	ck_assert_uint_le(p.max_lead_units + p.ref_units, p.max_units);
	/* cheaper than flashbench's defaults even at the upper bound */
	ck_assert_uint_eq(findfat_flashbench_bytes(4 * MiB, 16 * KiB, 6), 216 * MiB);
	ck_assert_uint_lt(p.max_write_bytes, 216 * MiB);
	/* small units get a smaller chunk so a unit still has 32 of them */
	o.erase_size_bytes = 128 * KiB;
	ck_assert_int_eq(findfat_plan(256 * MiB, 512, &o, &p), 0);
	ck_assert_uint_eq(p.blocksize_bytes, 4 * KiB);
	/* the references lie 64 MiB in even for small units */
	ck_assert_uint_ge(p.end_bytes - p.ref_units * 128 * KiB, 64 * MiB);
	ck_assert_uint_le(p.max_lead_units + p.ref_units, FINDFAT_MAX_UNITS);
	/* a small device bounds the area */
	o.erase_size_bytes = 8 * MiB;
	ck_assert_int_eq(findfat_plan(128 * MiB, 512, &o, &p), 0);
	ck_assert_uint_le(p.end_bytes, 128 * MiB);
}
END_TEST

/* A typical card costs a fraction of what flashbench writes. */
START_TEST(test_cost_is_modest)
{
	const struct sim_profile *p = sim_profile_find("sdhc-4m");
	struct findfat_result r;
	struct recorder rc;

	run_auto(p, 4 * MiB, &r, &rc);
	ck_assert(!r.found);
	ck_assert_uint_lt(r.bytes_written,
			  findfat_flashbench_bytes(4 * MiB, 16 * KiB, 6) / 3);
}
END_TEST

/* Every batch read after half its samples: wherever that stopped the
 * test, the full batches (the same writes, all of them) give the same
 * area, and the early stop does fire on clear cards (else the saving is
 * gone).  Over the generated table and the built-in cards. */
START_TEST(test_early_stop_agrees_with_full_batch)
{
	unsigned early = 0, n = GENERATED_CASES + builtin_count();

	for (unsigned i = 0; i < n; i++) {
		struct sim_profile p;
		struct findfat_result r, full;
		struct findfat_opts o;
		struct fp_dev *d;

		if (i < GENERATED_CASES)
			gen_profile(i, &p);
		else
			p = sim_profiles[i - GENERATED_CASES];
		for (int pass = 0; pass < 2; pass++) {
			ck_assert_int_eq(sim_open(&p, &d), 0);
			findfat_opts_default(&o);
			o.erase_size_bytes = p.erase_bytes;
			o.seed = p.seed * 31 + 1;
			o.full_batches = pass == 1;
			ck_assert_int_eq(plan_and_run(d, &o, pass ? &full : &r), 0);
			fp_dev_close(d);
		}
		ck_assert_uint_eq(full.rows[1].writes_per_unit, full.plan.samples);
		if (r.rows[1].writes_per_unit == r.plan.samples)
			continue;	/* not clear early: the same run as full */
		early++;
		ck_assert_uint_eq(r.rows[1].writes_per_unit, r.plan.samples / 2);
		ck_assert_msg(r.found == full.found && r.start_bytes == full.start_bytes &&
			      r.size_bytes == full.size_bytes,
			      "%s: early %d %llu+%llu, full %d %llu+%llu", p.name,
			      r.found, (unsigned long long)r.start_bytes,
			      (unsigned long long)r.size_bytes, full.found,
			      (unsigned long long)full.start_bytes,
			      (unsigned long long)full.size_bytes);
		ck_assert_double_ge(r.confidence, 0.85);
		ck_assert_uint_lt(r.elapsed_ns, full.elapsed_ns);
		ck_assert_uint_lt(r.bytes_written, full.bytes_written);
	}
	ck_assert_msg(early >= n / 3, "the early stop fired on %u of %u cards", early, n);
}
END_TEST

/* A media error inside the area is returned, not hidden. */
START_TEST(test_io_error)
{
	struct sim_profile p = *sim_profile_find("seed");
	struct fp_dev *d;
	struct findfat_opts o;
	struct findfat_result r;

	p.bad_start_bytes = 3 * p.erase_bytes;
	p.bad_bytes = p.erase_bytes;
	ck_assert_int_eq(sim_open(&p, &d), 0);
	findfat_opts_default(&o);
	o.erase_size_bytes = p.erase_bytes;
	ck_assert_int_eq(plan_and_run(d, &o, &r), -EIO);
	fp_dev_close(d);
}
END_TEST

/* The area announced is exactly the plan: one sector past it is refused. */
START_TEST(test_write_area_is_the_plan)
{
	const struct sim_profile *p = sim_profile_find("legacy-128k");
	struct fp_dev *d;
	struct findfat_opts o;
	struct findfat_result r;
	void *buf = fp_dev_alloc_buf(512);

	ck_assert_ptr_nonnull(buf);
	memset(buf, 0, 512);
	ck_assert_int_eq(sim_open(p, &d), 0);
	findfat_opts_default(&o);
	o.erase_size_bytes = p->erase_bytes;
	/* the plan alone grants nothing: the run refuses to start */
	ck_assert_int_eq(findfat_plan(p->size_bytes, p->sector_bytes, &o, &r.plan), 0);
	ck_assert_int_eq(findfat_run(d, &o, &r.plan, &r), -EFAULT);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	ck_assert_int_eq(plan_and_run(d, &o, &r), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, r.plan.end_bytes - 512,
					    NULL), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, r.plan.end_bytes, NULL),
			 -EFAULT);
	free(buf);
	fp_dev_close(d);
}
END_TEST

struct progress_log {
	uint64_t calls, last, total;
	bool monotonic;
};

static void log_progress(void *arg, uint64_t done, uint64_t total)
{
	struct progress_log *l = arg;

	l->monotonic &= done >= l->last;
	l->last = done;
	l->total = total;
	l->calls++;
}

START_TEST(test_progress)
{
	const struct sim_profile *p = sim_profile_find("seed");
	struct progress_log log = { .monotonic = true };
	struct fp_dev *d;
	struct findfat_opts o;
	struct findfat_result r;

	ck_assert_int_eq(sim_open(p, &d), 0);
	findfat_opts_default(&o);
	o.erase_size_bytes = p->erase_bytes;
	o.progress = log_progress;
	o.progress_arg = &log;
	ck_assert_int_eq(plan_and_run(d, &o, &r), 0);
	ck_assert_uint_gt(log.calls, 8);
	ck_assert(log.monotonic);
	ck_assert_uint_eq(log.last, r.bytes_written);
	ck_assert_uint_eq(log.total, r.plan.max_write_bytes);
	fp_dev_close(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Reports */

static char *capture_text(void (*fn)(FILE *, const struct findfat_result *),
			  const struct findfat_result *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	fn(f, r);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

static void seed_result(struct findfat_result *r)
{
	const struct sim_profile *p = sim_profile_find("seed");
	struct recorder rc;

	run_auto(p, p->erase_bytes, r, &rc);
}

START_TEST(test_report_text_verdict)
{
	struct findfat_result r;
	char *text;

	seed_result(&r);
	text = capture_text(report_findfat_text, &r);
	ck_assert_msg(strncmp(text, "FAT area: first 8MiB (units 0-3), confidence 0.",
			      47) == 0, "got: %s", text);
	free(text);

	r.found = false;
	r.confidence = 0.93;
	text = capture_text(report_findfat_text, &r);
	ck_assert_msg(strncmp(text, "no FAT area found, confidence 0.93\n", 35) == 0,
		      "got: %s", text);
	free(text);

	r.confidence = 0.3;
	text = capture_text(report_findfat_text, &r);
	ck_assert_msg(strncmp(text, "FAT area undetermined", 21) == 0, "got: %s", text);
	free(text);

	r.found = true;
	r.start_bytes = 2 * MiB;
	r.size_bytes = 2 * MiB;
	r.confidence = 0.85;
	text = capture_text(report_findfat_text, &r);
	ck_assert_msg(strncmp(text, "FAT area: 2MiB at 2MiB (unit 1), confidence 0.85\n",
			      49) == 0, "got: %s", text);
	free(text);
}
END_TEST

START_TEST(test_report_flashbench_layout)
{
	const struct sim_profile *p = sim_profile_find("seed");
	struct findfat_result r;
	char *text, *line, *save = NULL;
	size_t lines = 0;

	run_manual(p, 4 * MiB, 1 * MiB, 6, false, &r);
	text = capture_text(report_findfat_flashbench, &r);
	ck_assert_msg(strncmp(text, "4MiB\t", 5) == 0, "got: %s", text);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), lines++) {
		size_t tabs = 0;

		for (const char *c = line; *c; c++)
			tabs += *c == '\t';
		ck_assert_uint_eq(tabs, 6);
		ck_assert_ptr_nonnull(strstr(line, "M/s"));
	}
	ck_assert_uint_eq(lines, 3);		/* 4MiB 2MiB 1MiB */
	free(text);
}
END_TEST

START_TEST(test_report_json)
{
	struct findfat_result r;
	struct json_writer w;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct jsonv *doc;
	const struct jsonv *rows, *bps, *units;

	ck_assert_ptr_nonnull(f);
	seed_result(&r);
	json_init(&w, f);
	json_object_begin(&w, NULL);
	report_findfat_json(&w, &r);
	json_object_end(&w);
	json_end(&w);
	ck_assert_int_eq(fclose(f), 0);
	doc = jsonv_parse(text);
	ck_assert_msg(doc != NULL, "invalid JSON: %s", text);
	ck_assert(jsonv_get(doc, "fat_area.found")->boolean);
	ck_assert_double_eq(jsonv_get(doc, "fat_area.start_bytes.value")->number, 0);
	ck_assert_double_eq(jsonv_get(doc, "fat_area.size_bytes.value")->number, 8.0 * MiB);
	ck_assert_double_eq(jsonv_get(doc, "fat_area.erase_size_bytes")->number,
			    2.0 * MiB);
	ck_assert_double_eq_tol(jsonv_get(doc, "fat_area.size_bytes.confidence")->number,
				r.confidence, 1e-6);
	ck_assert_str_eq(jsonv_get(doc, "fat_area.size_bytes.source")->string, "measured");
	ck_assert_double_eq(jsonv_get(doc, "fat_area.bytes_written")->number,
			    (double)r.bytes_written);
	ck_assert_ptr_nonnull(jsonv_get(doc, "fat_area.elapsed_ns"));
	units = jsonv_get(doc, "fat_area.units");
	rows = jsonv_get(doc, "fat_area.rows");
	ck_assert_uint_eq(jsonv_len(rows), 2);
	bps = jsonv_get(jsonv_at(rows, 1), "bytes_per_sec");
	ck_assert_uint_eq(jsonv_len(bps), r.ncols);
	ck_assert_uint_eq(jsonv_len(units), r.ncols);
	/* the FAT-area columns are the fast ones at small chunks */
	ck_assert_double_gt(jsonv_at(bps, 0)->number, 2 * jsonv_at(bps, 5)->number);
	jsonv_free(doc);
	free(text);
}
END_TEST

Suite *findfat_suite(void)
{
	Suite *s = suite_create("findfat");
	TCase *tc = tcase_create("auto");
	TCase *gen = tcase_create("generated");
	TCase *man = tcase_create("manual");
	TCase *api = tcase_create("api");

	tcase_set_timeout(tc, 30);
	tcase_set_timeout(gen, 30);
	tcase_set_timeout(man, 30);
	tcase_add_loop_test(tc, test_builtin_profiles, 0, (int)(builtin_count() * NSEEDS));
	tcase_add_loop_test(tc, test_speed_invariance, 0, 2);
	tcase_add_test(tc, test_seed_with_4mib_units);
	tcase_add_loop_test(tc, test_fat_unit_between_speeds, 0, 6);
	tcase_add_test(tc, test_no_contrast_confident_none);
	tcase_add_test(tc, test_small_differences_are_not_none);
	tcase_add_test(tc, test_slow_start_is_not_fat);
	tcase_add_loop_test(tc, test_one_fast_unit_is_no_confident_none, 0, 2);
	tcase_add_test(tc, test_big_linear_pool);
	tcase_add_test(tc, test_random_slots_are_not_fat);
	tcase_add_test(tc, test_wrong_unit_size);
	tcase_add_loop_test(tc, test_worn_slowing_card, 0,
			    (int)(sizeof(worn_cards) / sizeof(worn_cards[0])));
	tcase_add_loop_test(tc, test_write_buffer, 0, (int)wbuf_case_count());
	tcase_add_loop_test(gen, test_generated_profiles, 0, GENERATED_CASES);
	tcase_add_test(gen, test_generated_table_coverage);
	tcase_add_loop_test(gen, test_many_open_profiles, 0, MANY_OPEN_CASES);
	tcase_add_test(man, test_manual_seed_signature);
	tcase_add_test(man, test_manual_rows_np2);
	tcase_add_test(api, test_plan_errors);
	tcase_add_test(api, test_plan_defaults);
	tcase_add_test(api, test_cost_is_modest);
	tcase_add_test(gen, test_early_stop_agrees_with_full_batch);
	tcase_add_test(api, test_io_error);
	tcase_add_test(api, test_write_area_is_the_plan);
	tcase_add_test(api, test_progress);
	tcase_add_test(api, test_report_text_verdict);
	tcase_add_test(api, test_report_flashbench_layout);
	tcase_add_test(api, test_report_json);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, gen);
	suite_add_tcase(s, man);
	suite_add_tcase(s, api);
	return s;
}
