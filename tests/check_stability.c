/* check_stability.c - the same card, the same answer: every built-in
 * simulated card, a few generated ones and a replay of the seed card's
 * real flashbench table, each over STABILITY_SEEDS seeds (other noise
 * draws and measurement orders).  Per parameter it counts how often the
 * verdict differs from the most common one and prints the table; it
 * fails only when one parameter gets two different values (a value and
 * "undetermined" is allowed: the target of 19 of 20 is reported by
 * bench/stability, which runs this test with more seeds).
 *
 * STABILITY_SEEDS (environment) overrides the number of seeds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "probe.h"
#include "sim.h"
#include "tablecard.h"
#include "tests.h"
#include "testutil.h"
#include "units.h"

#define DEFAULT_SEEDS 12		/* make check's sample; bench/stability runs more */
#define MAX_SEEDS 200
#define NPARAMS 6
#define VERDICT_LEN 40

static const char *const param_names[NPARAMS] = {
	"page", "erase block", "open linear", "open random", "FAT area",
	"capacity",
};

/* One parameter's verdicts over the seeds; "" is undetermined. */
struct tally {
	char v[MAX_SEEDS][VERDICT_LEN];
	unsigned n;
};

static unsigned seeds(void)
{
	const char *e = getenv("STABILITY_SEEDS");
	unsigned n = e ? (unsigned)strtoul(e, NULL, 10) : DEFAULT_SEEDS;

	return n < 2 ? 2 : n > MAX_SEEDS ? MAX_SEEDS : n;
}

static void size_verdict(char *out, uint64_t bytes)
{
	if (bytes)
		units_format_bytes(bytes, out, VERDICT_LEN);
	else
		out[0] = '\0';
}

static void count_verdict(char *out, const struct geo_count *c)
{
	if (c->value < 0)
		out[0] = '\0';
	else
		snprintf(out, VERDICT_LEN, "%s%d", c->at_least ? ">=" : "", c->value);
}

static void fat_verdict(char *out, const struct geometry *g)
{
	char a[32], b[32];

	if (!g->fat_tested || (!g->fat_found && g->fat_confidence < 0.5))
		out[0] = '\0';
	else if (!g->fat_found)
		snprintf(out, VERDICT_LEN, "none");
	else
		snprintf(out, VERDICT_LEN, "%s+%s",
			 units_format_bytes(g->fat_start_bytes, a, sizeof(a)),
			 units_format_bytes(g->fat_size_bytes, b, sizeof(b)));
}

/* The fake-capacity verdict with the real size it found. */
static void capacity_verdict(char *out, const struct probe_result *r)
{
	char a[32];

	if (!r->capacity_done || r->capacity.verdict == CAPACITY_UNDETERMINED)
		out[0] = '\0';
	else
		snprintf(out, VERDICT_LEN, "%s %s",
			 capacity_verdict_name(r->capacity.verdict),
			 units_format_bytes(r->capacity.real_bytes, a, sizeof(a)));
}

/* Two verdicts that cannot both be true: different exact values, or an
 * exact value below an "at least". */
static bool contradict(const char *a, const char *b)
{
	bool la = strncmp(a, ">=", 2) == 0, lb = strncmp(b, ">=", 2) == 0;

	if (!a[0] || !b[0] || !strcmp(a, b))
		return false;
	if (la && lb)
		return false;
	if (la || lb) {
		long bound = atol((la ? a : b) + 2), exact = atol(la ? b : a);

		return exact < bound;
	}
	return true;
}

/* The most common verdict and how many runs differ from it. */
static unsigned differing(const struct tally *t, const char **mode)
{
	unsigned best = 0;

	*mode = "";
	for (unsigned i = 0; i < t->n; i++) {
		unsigned same = 0;

		for (unsigned k = 0; k < t->n; k++)
			same += !strcmp(t->v[i], t->v[k]);
		if (same > best) {
			best = same;
			*mode = t->v[i];
		}
	}
	return t->n - best;
}

/* The probe's verdicts on d (writes allowed when it is writable). */
static void probe_verdicts(struct fp_dev *d, bool writes, uint64_t seed,
			   struct tally *t)
{
	struct probe_result *r = calloc(1, sizeof(*r));
	struct probe_opts o = { 0 };

	ck_assert_ptr_nonnull(r);
	o.device = "sim:stability";
	o.sysfs_root = "/nonexistent";
	o.writes_allowed = writes;
	o.seed = seed;
	o.seed_set = true;
	/* the capacity check's deep flush (256 MiB per run here) is tested in
	 * check_capacity.c; its verdict is stable with a small one too */
	o.cache_set = true;
	o.cache_bytes = 32 << 20;
	o.protect = tu_allow_area;
	o.protect_arg = d;
	ck_assert_int_eq(probe_run(d, &o, r), 0);
	size_verdict(t[0].v[t[0].n++], r->geo.page.bytes);
	size_verdict(t[1].v[t[1].n++], r->geo.erase.bytes);
	if (!writes) {
		free(r);
		return;		/* the write tests did not run */
	}
	count_verdict(t[2].v[t[2].n++], &r->geo.open_linear);
	count_verdict(t[3].v[t[3].n++], &r->geo.open_random);
	fat_verdict(t[4].v[t[4].n++], &r->geo);
	capacity_verdict(t[5].v[t[5].n++], r);
	free(r);
}

/* Print one card's line and fail on a contradiction. */
static void judge(const char *card, const struct tally *t)
{
	char line[512];
	size_t len = (size_t)snprintf(line, sizeof(line), "stability %-26s", card);

	for (int p = 0; p < NPARAMS; p++) {
		const char *mode;
		unsigned diff = differing(&t[p], &mode);

		if (t[p].n == 0)
			continue;
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %s %s %u/%u |",
					param_names[p], mode[0] ? mode : "undetermined",
					t[p].n - diff, t[p].n);
		for (unsigned i = 0; i < t[p].n; i++)
			for (unsigned k = i + 1; k < t[p].n; k++)
				ck_assert_msg(!contradict(t[p].v[i], t[p].v[k]),
					      "%s: %s is %s in one run and %s in another",
					      card, param_names[p], t[p].v[i], t[p].v[k]);
	}
	fprintf(stderr, "%s\n", line);
}

static struct tally *new_tallies(void)
{
	struct tally *t = calloc(NPARAMS, sizeof(*t));

	ck_assert_ptr_nonnull(t);
	return t;
}

static void run_profile(const struct sim_profile *base, const char *label)
{
	struct tally *t = new_tallies();
	unsigned n = seeds();

	for (unsigned s = 0; s < n; s++) {
		struct sim_profile p = *base;
		struct fp_dev *d;

		p.seed = 1000 + 7919 * (uint64_t)s;
		ck_assert_int_eq(sim_open(&p, &d), 0);
		probe_verdicts(d, true, p.seed, t);
		fp_dev_close(d);
	}
	judge(label, t);
	free(t);
}

START_TEST(test_builtin_cards_stable)
{
	run_profile(&sim_profiles[_i], sim_profiles[_i].name);
}
END_TEST

/* Built-in cards moved past the analyzers' thresholds: other penalties,
 * noise and sizes (spec strings, so that a failure names the card). */
static const char *const generated[] = {
	"seed,raw_cross=40us",
	"seed,raw_cross=25us,jitter=8",
	"readme,jitter=12",
	"sdhc-4m,page_cross=640us",
	"np2-3m,location=3",
	"legacy-128k,jitter=10",
	"emmc,jitter=15",
	"sandisk-24m,raw_cross=40us",
};

START_TEST(test_generated_cards_stable)
{
	struct sim_profile p;
	char err[256];

	ck_assert_msg(sim_profile_parse(generated[_i], &p, err, sizeof(err)) == 0,
		      "%s: %s", generated[_i], err);
	run_profile(&p, generated[_i]);
}
END_TEST

/* The seed card's real table, replayed with jitter: read-only. */
START_TEST(test_seed_table_stable)
{
	struct tally *t = new_tallies();
	unsigned n = seeds();

	for (unsigned s = 0; s < n; s++) {
		struct fp_dev *d;

		ck_assert_int_eq(tablecard_open(&tablecard_seed4, 77 + s, &d), 0);
		probe_verdicts(d, false, 77 + s, t);
		fp_dev_close(d);
	}
	judge(tablecard_seed4.name, t);
	for (unsigned i = 0; i < t[0].n; i++)
		ck_assert_msg(!t[0].v[i][0] || !strcmp(t[0].v[i], "8KiB"),
			      "seed table: page %s, its poster read 8KiB", t[0].v[i]);
	for (unsigned i = 0; i < t[1].n; i++)
		ck_assert_msg(!t[1].v[i][0] || !strcmp(t[1].v[i], "2MiB"),
			      "seed table: erase block %s, its poster read 2MiB",
			      t[1].v[i]);
	free(t);
}
END_TEST

Suite *stability_suite(void)
{
	Suite *s = suite_create("stability");
	TCase *tc = tcase_create("stability");
	size_t nprof = 0;

	while (sim_profiles[nprof].name[0])
		nprof++;
	tcase_set_timeout(tc, 600);
	tests_add_sweep(tc, test_builtin_cards_stable, nprof);
	tests_add_sweep(tc, test_generated_cards_stable,
			    sizeof(generated) / sizeof(generated[0]));
	tcase_add_test(tc, test_seed_table_stable);
	suite_add_tcase(s, tc);
	return s;
}
