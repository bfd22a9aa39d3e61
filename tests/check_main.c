/* check_main.c - the single test runner: every suite, each in a process
 * of its own, several side by side (CHECK_JOBS), and one summary line. */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tests.h"

#define MAX_JOBS 16

/* The suites test how flashprobe treats signals, including ones ignored
 * at its start (nohup); they set up such cases themselves.  Start them
 * from the defaults, whatever the runner inherited: a shell without job
 * control starts background jobs with SIGINT and SIGQUIT ignored, and
 * some CI runners ignore SIGHUP or SIGPIPE. */
static void default_signals(void)
{
	static const int sigs[] = { SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

/* Every suite, in this order; each constructor is named after its suite
 * (units_suite() makes "units"), which CK_RUN_SUITE picks by name.  Suites
 * run side by side, as their sharing allows:
 *  LOOP      attaches loop devices of its own;
 *  REATTACH  also detaches one and expects its number back when it
 *            attaches again (a card taken out and put back): no LOOP suite
 *            beside it, whose attach in between would take the number;
 *  ALONE     serves cards in real time: after the others, with nothing
 *            beside it, so that no other test's work shows in its timing. */
enum sharing { SHARED, LOOP, REATTACH, ALONE };
#define SUITE(name, sharing) { #name, name##_suite, sharing }
static const struct {
	const char *name;
	Suite *(*make)(void);
	enum sharing sharing;
} suites[] = {
	SUITE(units, SHARED), SUITE(stats, SHARED), SUITE(json, SHARED),
	SUITE(schema, SHARED), SUITE(dev, SHARED), SUITE(sim, SHARED),
	SUITE(align, SHARED), SUITE(advice, SHARED), SUITE(partition, LOOP),
	SUITE(layout, SHARED), SUITE(openau, SHARED), SUITE(findfat, SHARED),
	SUITE(auwrite, SHARED), SUITE(safety, LOOP), SUITE(journal, LOOP),
	SUITE(benchio, SHARED), SUITE(sysinfo, SHARED), SUITE(identify, SHARED),
	SUITE(capacity, LOOP), SUITE(probe, SHARED), SUITE(stability, SHARED),
	SUITE(svg, SHARED), SUITE(e2e, REATTACH), SUITE(cli, LOOP),
	SUITE(datasafety, LOOP), SUITE(killsweep, LOOP), SUITE(realtime, ALONE),
};
#define NSUITES (sizeof(suites) / sizeof(suites[0]))

/* What one suite's process reports back. */
struct tally {
	int run, failed;
	unsigned skipped;
};

/* Build and run suite i (as CK_RUN_SUITE and CK_RUN_CASE filter), with
 * its XML log, if one is asked for, named after it. */
static struct tally run_suite(size_t i)
{
	const char *xml = getenv("CK_XML_LOG_FILE_NAME");
	Suite *suite = suites[i].make();
	SRunner *sr = srunner_create(suite);
	struct tally t;
	char name[4096];

	if (xml != NULL && xml[0] != '\0') {
		snprintf(name, sizeof(name), "%s.%zu", xml, i);
		srunner_set_xml(sr, name);
	}
	srunner_run_all(sr, CK_ENV);
	t.run = srunner_ntests_run(sr);
	t.failed = srunner_ntests_failed(sr);
	t.skipped = tu_skipped();
	srunner_free(sr);
	return t;
}

/* A suite running in a process of its own.  Each suite runs in one: what
 * a suite's fixtures leave in the runner, every test of the later suites
 * would inherit through fork, and under the sanitizers each test's leak
 * check then scanned all of it (a third of the sanitizer pass's time went
 * there).  Its output goes to a file of its own, printed whole when it
 * ends, so that suites running side by side do not mix their lines. */
struct running {
	pid_t pid;
	size_t suite;
	int tally_fd;		/* the pipe its tally comes through */
	FILE *log;		/* its stdout and stderr */
	uint64_t t0;
};

static struct tally failed_to_run(void)
{
	return (struct tally){ 0, 1, 0 };
}

static bool start_suite(size_t i, struct running *r)
{
	int fds[2];

	r->suite = i;
	r->log = tmpfile();
	r->t0 = tu_now_ns();
	fflush(NULL);	/* or the child would print it again */
	if (r->log == NULL || pipe(fds) != 0) {
		perror("check_main: cannot start a suite");
		if (r->log)
			fclose(r->log);
		return false;
	}
	r->pid = fork();
	if (r->pid < 0) {
		perror("check_main: cannot start a suite");
		close(fds[0]);
		close(fds[1]);
		fclose(r->log);
		return false;
	}
	if (r->pid == 0) {
		struct tally t;

		close(fds[0]);
		dup2(fileno(r->log), STDOUT_FILENO);
		dup2(fileno(r->log), STDERR_FILENO);
		t = run_suite(i);
		fflush(NULL);	/* _exit() would drop what stdio holds */
		if (write(fds[1], &t, sizeof(t)) != (ssize_t)sizeof(t))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	r->tally_fd = fds[0];
	return true;
}

/* Print what the suite said and how long it took, and take its tally.
 * Its process has ended, so the tally (smaller than a pipe's buffer) is
 * waiting in the pipe if it was sent at all. */
static struct tally finish_suite(struct running *r)
{
	struct tally t;
	char buf[8192];
	size_t n;

	rewind(r->log);
	while ((n = fread(buf, 1, sizeof(buf), r->log)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(r->log);
	if (read(r->tally_fd, &t, sizeof(t)) != (ssize_t)sizeof(t)) {
		fprintf(stderr, "check_main: suite %s ended without its results\n",
			suites[r->suite].name);
		t = failed_to_run();
	}
	close(r->tally_fd);
	printf("(suite %s: %.0f s)\n", suites[r->suite].name,
	       (double)(tu_now_ns() - r->t0) / 1e9);
	fflush(stdout);
	return t;
}

static void add_tally(struct tally *all, struct tally t)
{
	all->run += t.run;
	all->failed += t.failed;
	all->skipped += t.skipped;
}

/* Wait for one of the n running suites to end, add its tally, and close
 * the gap it leaves in the array; returns the new count. */
static size_t reap_one(struct running *run, size_t n, struct tally *all)
{
	int st;
	pid_t pid = wait(&st);

	if (pid < 0 && errno != EINTR) {	/* none left to wait for */
		perror("check_main: lost the suites' processes");
		for (size_t k = 0; k < n; k++)
			add_tally(all, failed_to_run());
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		if (run[k].pid != pid)
			continue;
		add_tally(all, finish_suite(&run[k]));
		run[k] = run[n - 1];
		return n - 1;
	}
	return n;	/* not a suite's process: wait again */
}

static bool picked(size_t i)
{
	const char *only = getenv("CK_RUN_SUITE");

	return only == NULL || only[0] == '\0' || strcmp(only, suites[i].name) == 0;
}

/* How many suites run side by side: CHECK_JOBS (make check passes the
 * machine's core count), else one.  The suites' simulated cards keep
 * their own clocks, so their verdicts do not depend on the load. */
static size_t jobs(void)
{
	const char *s = getenv("CHECK_JOBS");
	long j = s ? strtol(s, NULL, 10) : 1;

	return j < 1 ? 1 : j > MAX_JOBS ? MAX_JOBS : (size_t)j;
}

static bool attaches(size_t i)
{
	return suites[i].sharing == LOOP || suites[i].sharing == REATTACH;
}

/* Whether suite i may start beside the n running ones. */
static bool may_start(size_t i, const struct running *run, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		size_t other = run[k].suite;

		if ((suites[i].sharing == REATTACH && attaches(other)) ||
		    (suites[other].sharing == REATTACH && attaches(i)))
			return false;
	}
	return true;
}

/* The next picked suite not yet started that may start now (and is
 * ALONE if and only if solo), or NSUITES.  REATTACH suites first, while
 * the suites that attach loop devices have not started: later they would
 * have to wait for all of those to end. */
static size_t next_suite(bool solo, const bool *started, const struct running *run,
			 size_t n)
{
	for (int reattach_first = 1; reattach_first >= 0; reattach_first--)
		for (size_t i = 0; i < NSUITES; i++)
			if (!started[i] && picked(i) &&
			    (suites[i].sharing == ALONE) == solo &&
			    (!reattach_first || suites[i].sharing == REATTACH) &&
			    may_start(i, run, n))
				return i;
	return NSUITES;
}

/* Run the picked suites, up to `width` at once: the ALONE ones if solo,
 * else the others. */
static void run_suites(bool solo, size_t width, struct tally *all)
{
	struct running run[MAX_JOBS];
	bool started[NSUITES] = { false };
	size_t n = 0;

	for (;;) {
		size_t i = n < width ? next_suite(solo, started, run, n) : NSUITES;

		if (i < NSUITES) {
			started[i] = true;
			if (start_suite(i, &run[n]))
				n++;
			else
				add_tally(all, failed_to_run());
		} else if (n > 0) {
			n = reap_one(run, n, all);
		} else {
			return;	/* none running, none left to start */
		}
	}
}

int main(void)
{
	struct tally all = { 0, 0, 0 };

	default_signals();
	/* The simulated cards store what is written in 4 KiB blocks, freed
	 * when a card is closed: keeping that memory for the next card spares
	 * a page fault per block (half the time of the write-heavy suites). */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	if (TESTS_SWEEP_STRIDE > 1)
		fprintf(stderr, "sanitizer pass: the sweeps (every card, geometry, kill "
			"point) run every %dth case (the plain pass runs them all)\n",
			TESTS_SWEEP_STRIDE);
	tu_scratch_begin();
	run_suites(false, jobs(), &all);
	run_suites(true, 1, &all);
	tu_scratch_end();
	if (all.skipped)
		fprintf(stderr, "%u test(s) SKIPPED on this machine (see above); "
			"they are not counted as passed\n", all.skipped);
	/* Check's summaries are per suite and do not know the skipped tests;
	 * this line counts them all */
	printf("%d passed, %d failed, %u skipped\n", all.run - all.failed, all.failed,
	       all.skipped);
	if (all.run == 0)
		return EXIT_FAILURE;	/* a filter matched nothing: not a pass */
	return all.failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
