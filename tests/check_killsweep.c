/* check_killsweep.c - an outside tester's attack on data safety: every
 * writing command (probe --write, open-au, find-fat, capacity, bench) is
 * stopped at a random moment, by SIGKILL mostly, sometimes by a signal it
 * catches (find-fat also with its journal elsewhere, found through a
 * pointer file); then "flashprobe restore" runs, itself SIGKILLed at a random
 * moment one time in three and run again.  Whatever happened, the device
 * must end byte for byte as it was, with no journal left, and the last
 * restore must succeed.
 *
 * On an image file under /var/tmp and on a loop device over one (root
 * only: skipped loudly otherwise).  `make check` samples a few moments
 * per target; FLASHPROBE_LONG=1 (`make check-long`) runs many.  The
 * moments are drawn from a seed printed at the start (FLASHPROBE_SWEEP_SEED
 * repeats a run); each failure names its command, signal and moment.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blockfix.h"
#include "stats.h"
#include "testutil.h"
#include "tests.h"

#define MIB (1024ull * 1024)
#define IMG_BYTES (64 * MIB)
#define IMG_SEED 0x5eedull
#define MAX_ARGS 16
#define POINTS_SAMPLED 6	/* per target in make check: each command */
#define POINTS_LONG 150		/* per target with FLASHPROBE_LONG */
#define RESTORE_KILL_NS 300000000ull	/* restore killed within 0.3 s */

static const char *const commands[][MAX_ARGS] = {
	{ "probe", "--write", "--quick", "@DEV", NULL },
	{ "open-au", "--write", "--erasesize=1M", "--max-open=4", "@DEV", NULL },
	{ "find-fat", "--write", "--erasesize=1M", "@DEV", NULL },
	{ "capacity", "--write", "@DEV", NULL },
	{ "bench", "--write", "--runtime=100ms", "--warmup=0", "--repeat=1", "--size=16M",
	  "@DEV", NULL },
	/* the journal elsewhere: a pointer file in the state directory */
	{ "find-fat", "--write", "--erasesize=1M", "@JOURNAL", "@DEV", NULL },
};
#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

/* A stop now and then that the binary catches: it must restore itself
 * (SIGPIPE is ignored while a test writes: the run goes on). */
static const int caught[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE };

static uint64_t seed;

/* The target of one test case, made by its unchecked fixture. */
static struct target {
	char dir[128];		/* private directory under /var/tmp */
	char state[160];	/* FLASHPROBE_STATE_DIR */
	char elsewhere[160];	/* --journal's directory */
	char journal_opt[192];	/* --journal=elsewhere/... */
	char pristine[192];	/* a copy of the device as it was */
	const char *dev;	/* the image or the loop device */
	uint64_t sum;		/* its checksum as it was */
	uint64_t run_ns[NCOMMANDS];	/* one uninterrupted run of each */
	char why[512];		/* why the target is not usable, or "" */
	struct bf_scene loop;
	char *image;
} t;

static void expand(const char *const *tmpl, const char **argv)
{
	size_t i;

	for (i = 0; tmpl[i]; i++)
		argv[i] = !strcmp(tmpl[i], "@DEV") ? t.dev :
			  !strcmp(tmpl[i], "@JOURNAL") ? t.journal_opt : tmpl[i];
	argv[i] = NULL;
}

/* Entries left in dir, their names appended to names. */
static size_t entries_in(const char *dir, char *names, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t used = strlen(names);

		if (e->d_name[0] == '.')
			continue;
		n++;
		snprintf(names + used, len - used, "%s%s", used ? ", " : "", e->d_name);
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/* Journals and pointers left, in the state directory and elsewhere,
 * their names in names. */
static size_t state_left(char *names, size_t len)
{
	names[0] = '\0';
	return entries_in(t.state, names, len) + entries_in(t.elsewhere, names, len);
}

/* The device as it was and no journal: so that one failure does not
 * spill into the next case. */
static void repair(void)
{
	char names[1024];

	if (tu_checksum(t.dev) != t.sum)
		bf_sh("dd if='%s' of='%s' bs=1M conv=notrunc,fsync status=none", t.pristine,
		      t.dev);
	if (state_left(names, sizeof(names)))
		bf_sh("rm -f '%s'/* '%s'/*", t.state, t.elsewhere);
}

/* Shared by both fixtures once the device exists: its checksum, a
 * pristine copy, and one uninterrupted run of each command (which must
 * restore it, and tells how long a run takes). */
static void measure_runs(void)
{
	snprintf(t.pristine, sizeof(t.pristine), "%s/pristine", t.dir);
	t.sum = tu_checksum(t.dev);
	if (t.sum == 0 || bf_sh("cp '%s' '%s'", t.dev, t.pristine) != 0) {
		snprintf(t.why, sizeof(t.why), "cannot copy '%s'", t.dev);
		return;
	}
	for (int c = 0; c < NCOMMANDS && !t.why[0]; c++) {
		const char *argv[MAX_ARGS];
		struct run_result r;
		char names[1024];
		uint64_t t0 = tu_now_ns();

		expand(commands[c], argv);
		tu_run(&r, argv);
		t.run_ns[c] = tu_now_ns() - t0;
		if (r.status != 0 || tu_checksum(t.dev) != t.sum ||
		    state_left(names, sizeof(names)))
			snprintf(t.why, sizeof(t.why), "an uninterrupted %s: status %d, "
				 "'%.300s'", commands[c][0], r.status, r.err ? r.err : "");
		tu_run_free(&r);
	}
	repair();
}

static bool make_dirs(void)
{
	memset(&t, 0, sizeof(t));
	snprintf(t.dir, sizeof(t.dir), "%s/flashprobe-ks-XXXXXX", tu_disk_dir());
	if (mkdtemp(t.dir) == NULL) {
		snprintf(t.why, sizeof(t.why), "cannot make a directory in %s", tu_disk_dir());
		t.dir[0] = '\0';
		return false;
	}
	snprintf(t.state, sizeof(t.state), "%s/state", t.dir);
	snprintf(t.elsewhere, sizeof(t.elsewhere), "%s/elsewhere", t.dir);
	snprintf(t.journal_opt, sizeof(t.journal_opt), "--journal=%s/j.journal", t.elsewhere);
	if (mkdir(t.state, 0700) != 0 || mkdir(t.elsewhere, 0700) != 0 ||
	    setenv("FLASHPROBE_STATE_DIR", t.state, 1) != 0) {
		snprintf(t.why, sizeof(t.why), "cannot make '%s'", t.state);
		return false;
	}
	return true;
}

static void image_setup(void)
{
	if (!make_dirs())
		return;
	t.image = bf_image_in(t.dir, IMG_BYTES, IMG_SEED);
	if (t.image == NULL) {
		snprintf(t.why, sizeof(t.why), "cannot make an image in '%s'", t.dir);
		return;
	}
	t.dev = t.image;
	measure_runs();
}

static void loop_setup(void)
{
	if (!make_dirs())
		return;
	if (!bf_image(&t.loop, IMG_BYTES, false) || !bf_attach(&t.loop, "")) {
		snprintf(t.why, sizeof(t.why), "%s", t.loop.why);
		return;
	}
	t.dev = t.loop.dev;
	measure_runs();
}

static void target_teardown(void)
{
	bf_cleanup(&t.loop);	/* detaches and deletes, whatever happened */
	free(t.image);
	if (t.dir[0])
		tu_rm_tree(t.dir);
	memset(&t, 0, sizeof(t));
	/* the fixture runs in the runner itself: later suites must not
	 * inherit a state directory that no longer exists */
	unsetenv("FLASHPROBE_STATE_DIR");
}

/* Run argv, SIGKILLed after at_ns (0: never); the status as tu_run(). */
static int run_killed(const char *const *argv, uint64_t at_ns, int sig, int *termsig,
		      char *err, size_t errlen)
{
	struct tu_child ch;
	struct run_result r;
	int status;

	ck_assert_int_eq(tu_spawn(&ch, argv, 0), 0);
	if (at_ns) {
		tu_sleep_ns(at_ns);
		kill(ch.pid, sig);
	}
	*termsig = tu_wait(&ch, &r);
	status = r.status;
	snprintf(err, errlen, "%s%s", r.out ? r.out : "", r.err ? r.err : "");
	tu_run_free(&r);
	return status;
}

START_TEST(test_stop_then_restore)
{
	const char *restore[] = { "restore", t.dev, NULL };
	const char *argv[MAX_ARGS];
	struct stats_rng rng;
	char what[1024], said[2048], rsaid[2048], names[1024];
	int c = _i % NCOMMANDS, sig, termsig, status, rstatus, rterm;
	uint64_t at, rat = 0, sum;
	size_t left;

	ck_assert_msg(!t.why[0], "the target is not usable: %s", t.why);
	stats_rng_seed(&rng, seed * 1000003u + (uint64_t)_i);
	sig = stats_rng_below(&rng, 4) ? SIGKILL
				       : caught[stats_rng_below(&rng, sizeof(caught) / sizeof(int))];
	at = 1 + (uint64_t)(stats_rng_uniform(&rng) * 1.1 * (double)t.run_ns[c]);
	if (stats_rng_below(&rng, 3) == 0)
		rat = 1 + stats_rng_below(&rng, RESTORE_KILL_NS);
	expand(commands[c], argv);
	snprintf(what, sizeof(what), "%s on %s, %s at %.3f s of a %.3f s run%s (seed %llu, "
		 "case %d)", commands[c][0], t.dev, strsignal(sig), (double)at / 1e9,
		 (double)t.run_ns[c] / 1e9, rat ? ", the first restore SIGKILLed" : "",
		 (unsigned long long)seed, _i);
	status = run_killed(argv, at, sig, &termsig, said, sizeof(said));
	if (rat)
		run_killed(restore, rat, SIGKILL, &rterm, rsaid, sizeof(rsaid));
	rstatus = run_killed(restore, 0, 0, &rterm, rsaid, sizeof(rsaid));
	sum = tu_checksum(t.dev);
	left = state_left(names, sizeof(names));
	repair();
	ck_assert_msg(sum == t.sum, "%s: the device differs after restore (test: status %d, "
		      "'%.300s'; restore: status %d, '%.300s')", what, status, said, rstatus,
		      rsaid);
	ck_assert_msg(rstatus == 0, "%s: restore exited %d: '%.300s'", what, rstatus, rsaid);
	ck_assert_msg(left == 0, "%s: after restore the state directory holds %s", what,
		      names);
	/* a signal it catches: it restored and said so, or had finished */
	if (sig != SIGKILL && !termsig)
		ck_assert_msg(status == 0 || status == 128 + sig, "%s: status %d, '%.300s'",
			      what, status, said);
}
END_TEST

static TCase *sweep_case(const char *name, void (*setup)(void), int points)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 60 + 30 * points);
	tcase_add_unchecked_fixture(tc, setup, target_teardown);
	tcase_add_loop_test(tc, test_stop_then_restore, 0, points);
	return tc;
}

Suite *killsweep_suite(void)
{
	Suite *s = suite_create("killsweep");
	const char *env = getenv("FLASHPROBE_SWEEP_SEED");
	int points = getenv("FLASHPROBE_LONG") ? POINTS_LONG : POINTS_SAMPLED;
	const char *why = bf_unavailable("");

	seed = env && env[0] ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	fprintf(stderr, "killsweep: %d moments per target, seed %llu "
		"(FLASHPROBE_SWEEP_SEED=%llu repeats them)\n", points,
		(unsigned long long)seed, (unsigned long long)seed);
	suite_add_tcase(s, sweep_case("image", image_setup, points));
	if (why)
		tu_skip("killsweep/loop: stops and restores on a loop device", why);
	else
		suite_add_tcase(s, sweep_case("loop", loop_setup, points));
	return s;
}
