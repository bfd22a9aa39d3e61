/* check_main.c - the single test runner: every suite, each in a process
 * of its own, and one summary line. */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tests.h"

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
 * (units_suite() makes "units"), which CK_RUN_SUITE picks by name. */
#define SUITE(name) { #name, name##_suite }
static const struct {
	const char *name;
	Suite *(*make)(void);
} suites[] = {
	SUITE(units), SUITE(stats), SUITE(json), SUITE(schema), SUITE(dev), SUITE(sim),
	SUITE(align), SUITE(advice), SUITE(partition), SUITE(layout), SUITE(openau),
	SUITE(findfat), SUITE(auwrite), SUITE(safety), SUITE(journal), SUITE(benchio),
	SUITE(sysinfo), SUITE(identify), SUITE(capacity), SUITE(probe), SUITE(stability),
	SUITE(svg), SUITE(e2e), SUITE(cli), SUITE(datasafety), SUITE(killsweep),
	SUITE(realtime),
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

/* Each suite runs in a process of its own.  What a suite's fixtures
 * leave in the runner, every test of the later suites inherits through
 * fork: under the sanitizers each test's leak check then scanned all of
 * it (a third of the sanitizer pass's time went there). */
static struct tally run_in_child(size_t i)
{
	struct tally t = { 0, 1, 0 };
	int fds[2], st;
	pid_t pid;

	fflush(NULL);	/* or the child would print it again */
	if (pipe(fds) != 0 || (pid = fork()) < 0) {
		perror("check_main: cannot start a suite");
		return t;
	}
	if (pid == 0) {
		close(fds[0]);
		t = run_suite(i);
		fflush(NULL);	/* _exit() would drop what stdio holds */
		if (write(fds[1], &t, sizeof(t)) != (ssize_t)sizeof(t))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &t, sizeof(t)) != (ssize_t)sizeof(t)) {
		fprintf(stderr, "check_main: suite %zu ended without its results\n", i);
		t = (struct tally){ 0, 1, 0 };
	}
	close(fds[0]);
	waitpid(pid, &st, 0);
	return t;
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
	for (size_t i = 0; i < NSUITES; i++) {
		const char *only = getenv("CK_RUN_SUITE");
		struct tally t;

		if (only != NULL && only[0] != '\0' && strcmp(only, suites[i].name) != 0)
			continue;
		t = run_in_child(i);

		all.run += t.run;
		all.failed += t.failed;
		all.skipped += t.skipped;
	}
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
