/* probe.c - identity, capacity, alignment, open AUs, FAT area,
 * conclusion, advice.
 *
 * With consent the fake-capacity check comes first: on a counterfeit or
 * damaged card every other write test would measure aliased or lost
 * positions, so they are skipped and the finding leads the conclusion.
 * Without consent only the card's registers can be compared with the
 * block device, which proves nothing (fakes program the fake size).
 *
 * The read-only alignment test comes first; with writes allowed the
 * write-based AU search follows (the AU the card manages, which reads may
 * show only as its erase blocks or not at all).  The write tests use, in
 * this order, a size given on the command line, the AU from writes, the
 * read step, the card's reported AU; with none they are skipped rather
 * than run on a guess.  The conclusion keeps every value's
 * source and says where sources disagree.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dev.h"
#include "probe.h"
#include "stats.h"
#include "units.h"

/* --quick: align's quick mode, a smaller search limit; confidences show it. */
#define PROBE_QUICK_MAX_OPEN 8
#define PROBE_QUICK_FAT_SAMPLES 8

struct phase_progress {
	const struct probe_opts *o;
	const char *phase;
};

static void forward_progress(void *arg, uint64_t done, uint64_t total)
{
	struct phase_progress *p = arg;

	p->o->progress(p->o->progress_arg, p->phase, done, total);
}

static void read_identity(const struct probe_opts *o, struct probe_result *r)
{
	r->identity_read = sysinfo_read(o->device, o->sysfs_root ? o->sysfs_root : "/sys",
					&r->identity) == 0;
}

/* The AU the card (or the kernel, guessing) reports. */
static struct geo_size card_au(const struct probe_result *r)
{
	const struct sysinfo *si = &r->identity;
	struct geo_size s = { 0, 0, GEO_NONE };

	if (!r->identity_read)
		return s;
	if (si->au.present && si->au.bytes) {
		s = (struct geo_size){ si->au.bytes, 1.0, GEO_CARD };
	} else if (si->preferred_erase.present && si->preferred_erase.bytes) {
		bool guess = si->preferred_erase.source == SYSINFO_SRC_KERNEL_GUESS;

		s = (struct geo_size){ si->preferred_erase.bytes, guess ? 0.3 : 0.9,
				       guess ? GEO_KERNEL_GUESS : GEO_CARD };
	}
	return s;
}

static int run_capacity(struct fp_dev *d, const struct probe_opts *o,
			struct probe_result *r)
{
	struct phase_progress pp = { o, "capacity" };
	struct capacity_opts co;
	struct capacity_plan plan;
	int ret;

	capacity_opts_default(&co);
	if (o->cache_set)
		co.cache_bytes = o->cache_bytes;
	else if (o->quick)	/* the deep flush is most of the check's cost */
		co.cache_bytes = CAPACITY_ROUND_FLUSH_BYTES;
	if (o->seed_set)
		co.nonce = stats_hash64(o->seed);
	if (o->progress) {
		co.progress = forward_progress;
		co.progress_arg = &pp;
	}
	if (capacity_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), &co, &plan)) {
		snprintf(r->capacity_note, sizeof(r->capacity_note),
			 "not verified: the device is too small for the check");
		return 0;
	}
	ret = o->protect(o->protect_arg, "capacity", plan.start_bytes, plan.end_bytes,
			 plan.max_bytes, plan.writes_may_alias);
	if (!ret)
		ret = capacity_run(d, &co, &plan, &r->capacity);
	r->capacity_done = ret == 0;
	if (ret)
		snprintf(r->capacity_note, sizeof(r->capacity_note),
			 "not verified: the capacity check did not finish");
	return ret;
}

/* Read-only: the card's CSD capacity against the block device. */
static void note_unverified_capacity(const struct fp_dev *d, struct probe_result *r)
{
	const struct sysinfo_value *csd = &r->identity.capacity;
	uint64_t dev = fp_dev_size_bytes(d);
	char a[32], b[32];

	units_format_bytes(csd->bytes, a, sizeof(a));
	units_format_bytes(dev, b, sizeof(b));
	if (!r->identity_read || !csd->present || !csd->bytes)
		snprintf(r->capacity_note, sizeof(r->capacity_note), "not verified (needs "
			 "--write or --destructive); the card's registers are not visible");
	else if (csd->bytes == dev)
		snprintf(r->capacity_note, sizeof(r->capacity_note), "not verified (needs "
			 "--write or --destructive); the card's CSD reports %s like the block "
			 "device, which fake cards do too", a);
	else
		snprintf(r->capacity_note, sizeof(r->capacity_note), "not verified (needs "
			 "--write or --destructive); the card's CSD reports %s but the block "
			 "device has %s: suspicious", a, b);
}

static int run_align(struct fp_dev *d, const struct probe_opts *o,
		     struct probe_result *r)
{
	struct phase_progress pp = { o, "align" };
	struct align_opts ao;
	int ret;

	align_opts_default(&ao);
	if (o->seed_set)
		ao.seed = o->seed;
	ao.quick = o->quick;
	if (o->progress) {
		ao.progress = forward_progress;
		ao.progress_arg = &pp;
	}
	ret = align_run(d, &ao, &r->align);
	r->align_done = ret == 0;
	if (ret)	/* a partial result is no finding */
		memset(&r->align, 0, sizeof(r->align));
	return ret;
}

/* Records that test was not run (each test once). */
static void skip_test(struct probe_result *r, const char *test, const char *reason)
{
	struct probe_skip *k;

	if (r->nskipped >= PROBE_MAX_SKIPPED)
		return;
	k = &r->skipped[r->nskipped++];
	k->test = test;
	snprintf(k->reason, sizeof(k->reason), "%s", reason);
}

static void skip_write_tests(struct probe_result *r, const char *reason)
{
	skip_test(r, "open-au", reason);
	skip_test(r, "find-fat", reason);
}

/* The write-based AU search, in its own announced area: it also runs
 * when the read test found a step, because the AU the card manages can be
 * a multiple of the erase block the reads show. */
static int run_auwrite(struct fp_dev *d, const struct probe_opts *o,
		       struct probe_result *r)
{
	struct phase_progress pp = { o, "au-search" };
	struct auwrite_opts ao;
	struct auwrite_plan *plan = &r->auwrite_plan;
	int ret;

	auwrite_opts_default(&ao);
	/* whole pages per timed write, for cards whose write pointer moves
	 * in pages */
	ao.chunk_bytes = auwrite_chunk_for_page(r->align.page_size_bytes);
	if (o->progress) {
		ao.progress = forward_progress;
		ao.progress_arg = &pp;
	}
	if (auwrite_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), &ao, plan))
		return 0;	/* too small: the read step or the card's AU decide */
	ret = o->protect(o->protect_arg, "au-search", plan->start_bytes, plan->end_bytes,
			 plan->max_bytes, false);
	if (!ret)
		ret = auwrite_run(d, &ao, plan, &r->auwrite);
	r->auwrite_done = ret == 0;
	return ret;
}

/* Erase size for the write tests, or 0 with the reason in r->skipped. */
static uint64_t erase_for_writes(const struct probe_opts *o, struct probe_result *r)
{
	struct geo_size au = card_au(r);
	uint64_t reads = r->align.erase_size_bytes;
	char a[32], b[32];

	if (o->erase_bytes) {
		r->test_erase_origin = "given";
		return o->erase_bytes;
	}
	if (r->auwrite.au_bytes) {
		r->test_erase_origin = "measured_writes";
		units_format_bytes(r->auwrite.au_bytes, a, sizeof(a));
		units_format_bytes(reads, b, sizeof(b));
		if (!reads)
			snprintf(r->decided_by, sizeof(r->decided_by), "the write-based AU "
				 "search (%s); the read test found no erase block", a);
		else if (reads == r->auwrite.au_bytes)
			snprintf(r->decided_by, sizeof(r->decided_by), "the read test and "
				 "the write-based AU search, which agree (%s)", a);
		else
			snprintf(r->decided_by, sizeof(r->decided_by), "the write-based AU "
				 "search (%s AU) over the read test (%s erase block): the "
				 "write tests and the advice use %s", a, b, a);
		return r->auwrite.au_bytes;
	}
	if (reads) {
		r->test_erase_origin = "measured";
		snprintf(r->decided_by, sizeof(r->decided_by), "the read test%s",
			 r->auwrite_done ? " (the write-based AU search was undetermined)" : "");
		return reads;
	}
	if (au.source == GEO_CARD) {
		r->test_erase_origin = "card";
		snprintf(r->decided_by, sizeof(r->decided_by), "the card's reported AU "
			 "(neither the read test nor the write-based AU search found one)");
		return au.bytes;
	}
	skip_write_tests(r, "the write tests were skipped: no erase-block size was "
			 "measured by reads or writes or reported; run again with --erasesize");
	return 0;
}

static int run_open_au(struct fp_dev *d, const struct probe_opts *o,
		       struct probe_result *r)
{
	struct phase_progress pp = { o, "open-au" };
	struct openau_opts oo;
	int ret;

	openau_opts_default(&oo);
	oo.erase_size_bytes = r->test_erase_bytes;
	if (o->seed_set)
		oo.seed = o->seed;
	if (o->quick)
		oo.max_open = PROBE_QUICK_MAX_OPEN;
	if (o->progress) {
		oo.progress = forward_progress;
		oo.progress_arg = &pp;
	}
	ret = openau_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), &oo, &r->openau_plan);
	if (ret == -ENOSPC || ret == -EINVAL) {
		skip_test(r, "open-au", "the open-AU test was skipped: the device is too "
			  "small for its test area");
		return 0;
	}
	if (!ret)
		ret = o->protect(o->protect_arg, "open-au", r->openau_plan.start_bytes,
				 r->openau_plan.end_bytes, r->openau_plan.max_bytes, false);
	if (!ret)
		ret = openau_run(d, &oo, &r->openau_plan, &r->openau);
	r->openau_done = ret == 0;
	return ret;
}

static int run_find_fat(struct fp_dev *d, const struct probe_opts *o,
			struct probe_result *r)
{
	struct phase_progress pp = { o, "find-fat" };
	struct findfat_opts fo;
	struct findfat_plan plan;
	int ret;

	findfat_opts_default(&fo);
	fo.erase_size_bytes = r->test_erase_bytes;
	if (o->seed_set)
		fo.seed = o->seed;
	if (o->quick)
		fo.samples = PROBE_QUICK_FAT_SAMPLES;
	if (o->progress) {
		fo.progress = forward_progress;
		fo.progress_arg = &pp;
	}
	ret = findfat_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), &fo, &plan);
	if (ret == -ENOSPC || ret == -EINVAL) {
		skip_test(r, "find-fat", "the FAT-area test was skipped: the device is too "
			  "small for it");
		return 0;
	}
	if (!ret)
		ret = o->protect(o->protect_arg, "find-fat", plan.start_bytes,
				 plan.end_bytes, plan.max_write_bytes, false);
	if (!ret)
		ret = findfat_run(d, &fo, &plan, &r->fat);
	r->findfat_done = ret == 0;
	return ret;
}

static struct geo_count count_of(const struct openau_count *c)
{
	struct geo_count g = { -1, false, 0, GEO_NONE };

	if (c->bound == OPENAU_EXACT || c->bound == OPENAU_AT_LEAST)
		g = (struct geo_count){ (int)c->n, c->bound == OPENAU_AT_LEAST,
					c->confidence, GEO_MEASURED };
	return g;
}

static void conclude_capacity(struct probe_result *r)
{
	const struct capacity_result *c = &r->capacity;
	struct geometry *g = &r->geo;

	if (!r->capacity_done)
		return;
	g->capacity_verdict = capacity_verdict_name(c->verdict);
	g->capacity_confidence = c->confidence;
	g->capacity_source = GEO_MEASURED;
	if (c->verdict != CAPACITY_UNDETERMINED)
		g->capacity_real = (struct geo_size){ c->real_bytes, c->confidence,
						      GEO_MEASURED };
	if (capacity_is_bad(c->verdict))
		g->usable_bytes = c->real_bytes ? c->real_bytes : 1;	/* 1: none */
}

/* A FAT area that find-fat found reaching into the open-AU test area
 * (past the 16 MiB and one unit open-au skips: four units of 12 MiB): a
 * test AU there never collapses and counts as one more open AU (the
 * independent card model's seed 495: 6 linear and 1 random at 0.9 for a
 * card with 5 and 0).  Neither count stands. */
static void open_au_outside_fat(struct probe_result *r)
{
	uint64_t fat_end = r->fat.start_bytes + r->fat.size_bytes;
	char e[32], s[32];

	if (!r->openau_done || !r->findfat_done || !r->fat.found ||
	    fat_end <= r->openau_plan.start_bytes)
		return;
	r->openau.linear = (struct openau_count){ 0, OPENAU_UNDETERMINED, 0 };
	r->openau.random = (struct openau_count){ 0, OPENAU_UNDETERMINED, 0 };
	snprintf(r->openau.note, sizeof(r->openau.note), "the FAT area find-fat found "
		 "(up to %s) reaches into the open-AU test area (from %s), whose AUs "
		 "there never collapse: no count stands",
		 units_format_bytes(fat_end, e, sizeof(e)),
		 units_format_bytes(r->openau_plan.start_bytes, s, sizeof(s)));
}

static void conclude(const struct fp_dev *d, struct probe_result *r)
{
	struct geometry *g = &r->geo;

	memset(g, 0, sizeof(*g));
	g->device_bytes = fp_dev_size_bytes(d);
	g->sector_bytes = fp_dev_sector_bytes(d);
	if (r->align.page_size_bytes)
		g->page = (struct geo_size){ r->align.page_size_bytes,
					     r->align.page_confidence, GEO_MEASURED };
	if (r->auwrite.au_bytes)
		g->erase = (struct geo_size){ r->auwrite.au_bytes, r->auwrite.confidence,
					      GEO_MEASURED_WRITES };
	else if (r->align.erase_size_bytes)
		g->erase = (struct geo_size){ r->align.erase_size_bytes,
					      r->align.erase_confidence, GEO_MEASURED };
	g->card_au = card_au(r);
	g->open_linear = g->open_random = (struct geo_count){ -1, false, 0, GEO_NONE };
	if (r->openau_done) {
		g->open_linear = count_of(&r->openau.linear);
		g->open_random = count_of(&r->openau.random);
	}
	if (r->findfat_done) {
		g->fat_tested = true;
		g->fat_found = r->fat.found;
		g->fat_start_bytes = r->fat.start_bytes;
		g->fat_size_bytes = r->fat.size_bytes;
		g->fat_confidence = r->fat.confidence;
	}
	conclude_capacity(r);
	advice_compute(g, &r->advice);
}

/* The read step and the AU from writes, or the measured size and the
 * card's AU, disagree: common (two erase blocks per AU), and worth saying
 * which one the advice uses. */
static void note_conflict(struct probe_result *r)
{
	const struct geometry *g = &r->geo;
	char e[32], c[32];

	if (r->auwrite.au_bytes && r->align.erase_size_bytes &&
	    r->auwrite.au_bytes != r->align.erase_size_bytes) {
		bool nested = r->auwrite.au_bytes % r->align.erase_size_bytes == 0;

		snprintf(r->conflict, sizeof(r->conflict), "the read test found a %s "
			 "erase block, the write-based search a %s AU (%s); %.160s",
			 units_format_bytes(r->align.erase_size_bytes, e, sizeof(e)),
			 units_format_bytes(r->auwrite.au_bytes, c, sizeof(c)),
			 nested ? "erase blocks inside a larger AU" : "they disagree",
			 r->advice.align_reason);
		return;
	}
	if (!g->erase.bytes || !g->card_au.bytes || g->erase.bytes == g->card_au.bytes)
		return;
	snprintf(r->conflict, sizeof(r->conflict),
		 "the %s found a %s erase block, the %s says %s; %.160s",
		 g->erase.source == GEO_MEASURED_WRITES ? "write-based AU search" :
		 "read test", units_format_bytes(g->erase.bytes, e, sizeof(e)),
		 g->card_au.source == GEO_CARD ? "card's AU" : "kernel's guess",
		 units_format_bytes(g->card_au.bytes, c, sizeof(c)),
		 r->advice.align_reason);
}

/* The write tests after a capacity check that found the card fake or
 * damaged, or saw reads return other offsets' blocks, would measure
 * aliased or lost positions (and their writes would land elsewhere). */
static bool skip_for_capacity(struct probe_result *r)
{
	char why[320];

	if (!r->capacity_done || (!capacity_is_bad(r->capacity.verdict) &&
				  !r->capacity.aliasing_seen))
		return false;
	snprintf(why, sizeof(why), "the write tests (open AUs, FAT area) "
		 "were skipped: on a %s card their test positions would not hold "
		 "their own data", r->capacity.verdict == CAPACITY_DAMAGED ? "damaged" :
		 capacity_is_bad(r->capacity.verdict) ? "fake" : "possibly fake");
	skip_write_tests(r, why);
	return true;
}

/* The write tests that a failed test before them kept from running
 * (find-fat runs last, after open-au). */
static void skip_after_failure(const struct probe_opts *o, struct probe_result *r)
{
	bool at_open_au = !strcmp(r->failed_test, "open-au");
	bool at_find_fat = !strcmp(r->failed_test, "find-fat");
	char why[320];

	if (!o->writes_allowed || r->nskipped)
		return;		/* skipped for a reason of their own */
	snprintf(why, sizeof(why), "the write tests (open AUs, FAT area) were not "
		 "run: the %s test failed before them", r->failed_test);
	if (!at_open_au && !at_find_fat)
		skip_test(r, "open-au", why);
	if (!at_find_fat)
		skip_test(r, "find-fat", why);
}

/* ret of test: kept as the test that stopped the probe when it failed. */
static int ran(struct probe_result *r, const char *test, int ret)
{
	if (ret && !r->failed_test)
		r->failed_test = test;
	return ret;
}

int probe_run(struct fp_dev *d, const struct probe_opts *o,
	      struct probe_result *r)
{
	int ret = 0;

	memset(r, 0, sizeof(*r));
	read_identity(o, r);
	if (o->writes_allowed)
		ret = ran(r, "capacity", run_capacity(d, o, r));
	else
		note_unverified_capacity(d, r);
	if (!ret)
		ret = ran(r, "align", run_align(d, o, r));
	if (!ret && !o->writes_allowed)
		skip_write_tests(r, "the write tests (open AUs, FAT area) were skipped: "
				 "they need --write (data backed up and restored) or "
				 "--destructive");
	else if (!ret && !skip_for_capacity(r)) {
		if (!o->erase_bytes)
			ret = ran(r, "au-search", run_auwrite(d, o, r));
		if (!ret)
			r->test_erase_bytes = erase_for_writes(o, r);
	}
	if (!ret && r->test_erase_bytes)
		ret = ran(r, "open-au", run_open_au(d, o, r));
	if (!ret && r->test_erase_bytes)
		ret = ran(r, "find-fat", run_find_fat(d, o, r));
	open_au_outside_fat(r);
	if (ret)
		skip_after_failure(o, r);
	r->bytes_written = r->capacity.bytes_written + r->auwrite.bytes_written +
			   r->openau.bytes_written + r->fat.bytes_written;
	r->elapsed_ns = r->capacity.elapsed_ns + r->align.elapsed_ns +
			r->auwrite.elapsed_ns + r->openau.elapsed_ns + r->fat.elapsed_ns;
	conclude(d, r);
	note_conflict(r);
	return ret;
}

void probe_withhold_advice(struct probe_result *r, const char *why)
{
	memset(&r->advice, 0, sizeof(r->advice));
	/* why is cut where the fixed text (75 bytes with its NUL) would not fit */
	snprintf(r->advice.align_reason, sizeof(r->advice.align_reason),
		 "no partitioning advice: %.*s; copy what you can read from it and do "
		 "not use it", (int)(sizeof(r->advice.align_reason) - 75), why);
	r->advice_withheld = true;
}

void probe_note_card_failure(struct probe_result *r, const char *what, uint64_t at)
{
	char why[sizeof(r->advice.align_reason)];

	snprintf(r->card_failure, sizeof(r->card_failure), "%s", what);
	if (r->capacity_done && capacity_is_bad(r->capacity.verdict) &&
	    at >= r->capacity.real_bytes)
		return;
	snprintf(why, sizeof(why), "the card failed during the %s test (%.120s): it is "
		 "failing", r->failed_test ? r->failed_test : "probe's", what);
	probe_withhold_advice(r, why);
}
