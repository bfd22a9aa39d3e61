/* check_main.c - the single test runner: every suite, one summary line. */
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>

#include <stdio.h>

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

int main(void)
{
	SRunner *sr;
	int failed, run;

	default_signals();
	/* The simulated cards store what is written in 4 KiB blocks, freed
	 * when a card is closed: keeping that memory for the next card spares
	 * a page fault per block (half the time of the write-heavy suites). */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	sr = srunner_create(units_suite());

	srunner_add_suite(sr, stats_suite());
	srunner_add_suite(sr, json_suite());
	srunner_add_suite(sr, schema_suite());
	srunner_add_suite(sr, dev_suite());
	srunner_add_suite(sr, sim_suite());
	srunner_add_suite(sr, align_suite());
	srunner_add_suite(sr, advice_suite());
	srunner_add_suite(sr, partition_suite());
	srunner_add_suite(sr, layout_suite());
	srunner_add_suite(sr, openau_suite());
	srunner_add_suite(sr, findfat_suite());
	srunner_add_suite(sr, auwrite_suite());
	srunner_add_suite(sr, safety_suite());
	srunner_add_suite(sr, journal_suite());
	srunner_add_suite(sr, benchio_suite());
	srunner_add_suite(sr, sysinfo_suite());
	srunner_add_suite(sr, identify_suite());
	srunner_add_suite(sr, capacity_suite());
	srunner_add_suite(sr, probe_suite());
	srunner_add_suite(sr, stability_suite());
	srunner_add_suite(sr, svg_suite());
	srunner_add_suite(sr, e2e_suite());
	srunner_add_suite(sr, cli_suite());
	srunner_add_suite(sr, datasafety_suite());
	srunner_add_suite(sr, killsweep_suite());
	srunner_add_suite(sr, realtime_suite());
	if (TESTS_SWEEP_STRIDE > 1)
		fprintf(stderr, "sanitizer pass: the sweeps (every card, geometry, kill "
			"point) run every %dth case (the plain pass runs them all)\n",
			TESTS_SWEEP_STRIDE);
	if (tu_skipped())
		fprintf(stderr, "%u test(s) SKIPPED on this machine (see above); "
			"they are not counted as passed\n", tu_skipped());
	tu_scratch_begin();
	srunner_run_all(sr, CK_ENV);
	tu_scratch_end();
	failed = srunner_ntests_failed(sr);
	run = srunner_ntests_run(sr);
	srunner_free(sr);
	/* Check's summary does not know the skipped tests; this line does */
	printf("%d passed, %d failed, %u skipped\n", run - failed, failed,
	       tu_skipped());
	if (run == 0)
		return EXIT_FAILURE;	/* a filter matched nothing: not a pass */
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
