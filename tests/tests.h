/* tests.h - one constructor per test file; check_main.c runs them all. */
#ifndef FLASHPROBE_TESTS_H
#define FLASHPROBE_TESTS_H

#include <check.h>

/* Sweeps, the loops that run one code path over many cases (each
 * built-in card, each generated geometry, each kill point), take every
 * TESTS_SWEEP_STRIDE-th case under the sanitizers: make check's plain pass
 * runs them all, and what ASan and UBSan look for is in the paths, which
 * every case takes.  (That pass took 27 minutes with them all, and
 * make check as a whole has 20.)
 * check_main.c says so once. */
#if defined(__SANITIZE_ADDRESS__)
#define TESTS_SWEEP_STRIDE 8
#else
#define TESTS_SWEEP_STRIDE 1
#endif
#define tests_add_sweep(tc, test, n)                                        \
	do {                                                                    \
		for (int card_ = 0; card_ < (int)(n); card_ += TESTS_SWEEP_STRIDE) \
			tcase_add_loop_test((tc), (test), card_, card_ + 1);     \
	} while (0)

Suite *units_suite(void);
Suite *stats_suite(void);
Suite *json_suite(void);
Suite *dev_suite(void);
Suite *sim_suite(void);
Suite *align_suite(void);
Suite *advice_suite(void);
Suite *partition_suite(void);
Suite *layout_suite(void);
Suite *openau_suite(void);
Suite *findfat_suite(void);
Suite *probe_suite(void);
Suite *e2e_suite(void);
Suite *cli_suite(void);
Suite *safety_suite(void);
Suite *journal_suite(void);
Suite *benchio_suite(void);
Suite *sysinfo_suite(void);
Suite *stability_suite(void);
Suite *datasafety_suite(void);
Suite *capacity_suite(void);
Suite *svg_suite(void);
Suite *identify_suite(void);
Suite *schema_suite(void);
Suite *auwrite_suite(void);
Suite *killsweep_suite(void);
Suite *realtime_suite(void);

#endif
