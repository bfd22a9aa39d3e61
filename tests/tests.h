/* tests.h - one constructor per test file; check_main.c runs them all. */
#ifndef FLASHPROBE_TESTS_H
#define FLASHPROBE_TESTS_H

#include <check.h>

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
