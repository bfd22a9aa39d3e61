/* check_killsweep.c - an outside tester's attack on data safety: every
 * writing command (probe --write, open-au, find-fat, capacity, bench) is
 * stopped at a random moment, by SIGKILL mostly, sometimes by a signal it
 * catches (find-fat also with its journal elsewhere, found through a
 * pointer file); then "flashprobe restore" runs, itself SIGKILLed at a random
 * moment one time in three and run again.  Whatever happened, the device
 * must end byte for byte as it was, with no journal left, and the last
 * restore must succeed.
 *
 * A second sweep is exact instead of random: strace stops find-fat, and
 * then restore, at each system call that creates, replaces or
 * removes the journal, its pointer or their directory entries (and at
 * restore's device writes).  No run killed between two of those steps
 * may leave a file that no lookup finds or a journal that blocks the card.
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
#include "journal_format.h"
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

/* Once the device exists: its checksum and a pristine copy. */
static bool keep_pristine(void)
{
	snprintf(t.pristine, sizeof(t.pristine), "%s/pristine", t.dir);
	t.sum = tu_checksum(t.dev);
	if (t.sum == 0 || bf_sh("cp '%s' '%s'", t.dev, t.pristine) != 0) {
		snprintf(t.why, sizeof(t.why), "cannot copy '%s'", t.dev);
		return false;
	}
	return true;
}

/* One uninterrupted run of each command (which must restore the device,
 * and tells how long a run takes). */
static void measure_runs(void)
{
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
	if (mkdir(t.state, 0700) != 0 || mkdir(t.elsewhere, 0700) != 0) {
		snprintf(t.why, sizeof(t.why), "cannot make '%s'", t.state);
		return false;
	}
	tu_state_dir_set(t.state);
	return true;
}

/* The image target, its pristine copy kept: false (why in t.why) when
 * it cannot be made. */
static bool make_image(void)
{
	if (!make_dirs())
		return false;
	t.image = bf_image_in(t.dir, IMG_BYTES, IMG_SEED);
	if (t.image == NULL) {
		snprintf(t.why, sizeof(t.why), "cannot make an image in '%s'", t.dir);
		return false;
	}
	t.dev = t.image;
	return keep_pristine();
}

static void image_setup(void)
{
	if (make_image())
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
	if (keep_pristine())
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
	tu_state_dir_unset();
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

/* ---- the exact sweep: a kill at each step of the journal's files ---- */

/* The calls that change what a run killed then leaves (an fsync changes
 * only what a power cut leaves: a kill before it finds what a kill after
 * the step before it finds). */
#define STEP_CALLS "openat,linkat,rename,renameat,renameat2,unlink,unlinkat," \
		   "ftruncate,pwrite64"
#define MAX_STEPS 96
#define STRACE_ARGS 40

/* One traced system call: its name and which call of that name it is. */
struct step {
	char call[24];
	int nth;
};

static bool with_journal_elsewhere;	/* the configuration under test */

static void steps_setup(void)
{
	make_image();
}

/* Why strace cannot stop flashprobe here, or NULL. */
static const char *strace_unavailable(void)
{
	const char *argv[] = { "strace", "-qq", "-o", "/dev/null", "true", NULL };
	struct run_result r;
	int status;

	if (!tu_have_tool("strace"))
		return "no strace (tests/deps.sh installs it)";
	tu_run_tool(&r, argv, NULL);
	status = r.status;
	tu_run_free(&r);
	return status == 0 ? NULL : "strace cannot trace a program here (ptrace refused)";
}

/* strace's arguments up to "--": only the calls on the journal's files
 * (and the image's, with device) are traced, the nth of call killed. */
static size_t strace_argv(const char **argv, char paths[][PATH_MAX], const char *out,
			  bool device, const char *trace, const char *inject)
{
	char name[NAME_MAX + 1];
	size_t n = 0;

	jr_default_name(t.dev, name, sizeof(name));
	snprintf(paths[0], PATH_MAX, "%s/%s", t.state, name);
	jr_pointer_tmp_name(paths[0], paths[1], PATH_MAX);
	snprintf(paths[2], PATH_MAX, "%s/j.journal", t.elsewhere);
	argv[n++] = "strace";
	argv[n++] = "-qq";
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n++] = "-e";
	argv[n++] = trace;
	if (inject) {
		argv[n++] = "-e";
		argv[n++] = inject;
	}
	argv[n++] = "-P";
	argv[n++] = t.state;
	argv[n++] = "-P";
	argv[n++] = t.elsewhere;
	for (int i = 0; i < 3; i++) {
		argv[n++] = "-P";
		argv[n++] = paths[i];
	}
	if (device) {
		argv[n++] = "-P";
		argv[n++] = t.dev;
	}
	argv[n++] = "--";
	argv[n++] = tu_binary();
	return n;
}

/* Run flashprobe's args (NULL-terminated) under strace: traced into
 * trace_file, or killed at step (when not NULL). */
static void run_traced(const char *const *args, bool device, const char *trace_file,
		      const struct step *kill_at)
{
	char paths[3][PATH_MAX], trace[160], inject[96];
	const char *argv[STRACE_ARGS + MAX_ARGS];
	struct run_result r;
	size_t n;

	if (kill_at) {
		snprintf(trace, sizeof(trace), "trace=%s", kill_at->call);
		snprintf(inject, sizeof(inject), "inject=%s:signal=KILL:when=%d",
			 kill_at->call, kill_at->nth);
	} else {
		snprintf(trace, sizeof(trace), "trace=%s", STEP_CALLS);
	}
	n = strace_argv(argv, paths, trace_file ? trace_file : "/dev/null", device,
			trace, kill_at ? inject : NULL);
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	tu_run_tool(&r, argv, NULL);
	tu_run_free(&r);
}

/* Whether a traced line changed anything: an open that reads, or an
 * unlink of nothing, leaves the state the step before it left. */
static bool changes_files(const char *call, const char *line)
{
	if (strstr(line, ") = -1 ") != NULL)
		return false;
	if (strcmp(call, "openat") == 0)
		return strstr(line, "O_CREAT") != NULL || strstr(line, "O_TMPFILE") != NULL;
	return true;
}

/* The steps strace wrote to path that change files, in order, each with
 * its count among all the calls of its name (what strace's when= counts). */
static size_t read_steps(const char *path, struct step *steps, size_t max)
{
	struct step seen[4 * MAX_STEPS];
	FILE *f = fopen(path, "r");
	char line[4 * PATH_MAX];
	size_t n = 0, nseen = 0;

	while (f != NULL && n < max && nseen < 4 * MAX_STEPS && fgets(line, sizeof(line), f)) {
		struct step *s = &seen[nseen];
		size_t len = strcspn(line, "(");

		if (line[len] != '(' || len == 0 || len >= sizeof(s->call))
			continue;	/* "+++ exited", "--- SIG..." */
		snprintf(s->call, sizeof(s->call), "%.*s", (int)len, line);
		s->nth = 1;
		for (size_t i = 0; i < nseen; i++)
			s->nth += strcmp(seen[i].call, s->call) == 0;
		nseen++;
		if (changes_files(s->call, line))
			steps[n++] = *s;
	}
	if (f != NULL)
		fclose(f);
	return n;
}

static void test_args(const char **args)
{
	size_t n = 0;

	args[n++] = "find-fat";
	args[n++] = "--write";
	args[n++] = "--erasesize=1M";
	if (with_journal_elsewhere)
		args[n++] = t.journal_opt;
	args[n++] = t.dev;
	args[n] = NULL;
}

/* The last restore must succeed and leave the device as it was and no
 * file behind. */
static void assert_restored(const char *what)
{
	const char *restore[] = { "restore", t.dev, NULL };
	struct run_result r;
	char names[1024];
	uint64_t sum;
	size_t left;
	int status;

	tu_run(&r, restore);
	status = r.status;
	sum = tu_checksum(t.dev);
	left = state_left(names, sizeof(names));
	repair();
	ck_assert_msg(status == 0, "%s: restore exited %d: '%.300s'", what, status,
		      r.err ? r.err : "");
	tu_run_free(&r);
	ck_assert_msg(sum == t.sum, "%s: the device differs after restore", what);
	ck_assert_msg(left == 0, "%s: after restore there are still %s", what, names);
}

/* The steps of one run of args, traced (with the image's writes when
 * device); nothing is left of the run. */
static size_t trace_steps(const char *const *args, bool device, struct step *steps)
{
	char file[PATH_MAX];
	size_t n;

	snprintf(file, sizeof(file), "%s/trace", t.dir);
	run_traced(args, device, file, NULL);
	n = read_steps(file, steps, MAX_STEPS);
	unlink(file);
	return n;
}

/* Stop at each step of a test, then restore. */
static void kill_test_at_each_step(void)
{
	const char *args[MAX_ARGS];
	struct step steps[MAX_STEPS];
	char what[512];
	size_t n;

	test_args(args);
	n = trace_steps(args, false, steps);
	repair();
	ck_assert_msg(n >= 3, "strace saw %zu steps of find-fat's journal", n);
	for (size_t i = 0; i < n; i += TESTS_SWEEP_STRIDE) {
		snprintf(what, sizeof(what), "find-fat%s killed at %.23s #%d (step %zu of %zu)",
			 with_journal_elsewhere ? " --journal elsewhere" : "", steps[i].call,
			 steps[i].nth, i + 1, n);
		run_traced(args, false, NULL, &steps[i]);
		assert_restored(what);
	}
}

/* A test killed at its third write to the device: a journal with data. */
static void leave_pending(void)
{
	const struct step third_write = { "pwrite64", 3 };
	const char *args[MAX_ARGS];
	char names[1024];

	test_args(args);
	run_traced(args, true, NULL, &third_write);
	ck_assert_msg(state_left(names, sizeof(names)) > 0 && tu_checksum(t.dev) != t.sum,
		      "find-fat killed at its third device write left no journal or no "
		      "test data");
}

/* Stop a restore at each of its steps (its device writes too), then
 * restore again. */
static void kill_restore_at_each_step(void)
{
	const char *restore[] = { "restore", t.dev, NULL };
	struct step steps[MAX_STEPS];
	char what[512];
	size_t n;

	leave_pending();
	n = trace_steps(restore, true, steps);
	repair();
	ck_assert_msg(n >= 3, "strace saw %zu steps of restore", n);
	for (size_t i = 0; i < n; i += TESTS_SWEEP_STRIDE) {
		snprintf(what, sizeof(what), "restore%s killed at %.23s #%d (step %zu of %zu)",
			 with_journal_elsewhere ? " of a journal elsewhere" : "",
			 steps[i].call, steps[i].nth, i + 1, n);
		leave_pending();
		run_traced(restore, true, NULL, &steps[i]);
		assert_restored(what);
	}
}

START_TEST(test_kill_at_each_file_step)
{
	ck_assert_msg(!t.why[0], "the target is not usable: %s", t.why);
	with_journal_elsewhere = _i == 1;
	kill_test_at_each_step();
	kill_restore_at_each_step();
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

/* Both journal places under FLASHPROBE_LONG, the one with a pointer
 * (which has every step of the other and more) in make check. */
static TCase *steps_case(void)
{
	TCase *tc = tcase_create("filesteps");

	tcase_set_timeout(tc, 600);
	tcase_add_unchecked_fixture(tc, steps_setup, target_teardown);
	tcase_add_loop_test(tc, test_kill_at_each_file_step, getenv("FLASHPROBE_LONG") ? 0 : 1, 2);
	return tc;
}

Suite *killsweep_suite(void)
{
	Suite *s = suite_create("killsweep");
	const char *env = getenv("FLASHPROBE_SWEEP_SEED");
	int points = getenv("FLASHPROBE_LONG") ? POINTS_LONG : POINTS_SAMPLED;
	const char *why;

	seed = env && env[0] ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	fprintf(stderr, "killsweep: %d moments per target, seed %llu "
		"(FLASHPROBE_SWEEP_SEED=%llu repeats them)\n", points,
		(unsigned long long)seed, (unsigned long long)seed);
	suite_add_tcase(s, sweep_case("image", image_setup, points));
	if ((why = strace_unavailable()) != NULL)
		tu_skip("killsweep/filesteps: a kill at each step of the journal's files", why);
	else
		suite_add_tcase(s, steps_case());
	if ((why = bf_unavailable("")) != NULL)
		tu_skip("killsweep/loop: stops and restores on a loop device", why);
	else
		suite_add_tcase(s, sweep_case("loop", loop_setup, points));
	return s;
}
