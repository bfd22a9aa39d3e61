/* report_check.h - the layout check for people and for scripts. */
#ifndef FLASHPROBE_REPORT_CHECK_H
#define FLASHPROBE_REPORT_CHECK_H

#include <stdio.h>

#include "layoutcheck.h"

struct json_writer;

/* The geometry and its source, the table, each partition with its
 * verdicts, problems and fixes (DEVICE and PARTITION filled in from
 * device when it is a /dev path; for a partition device, disk is its
 * disk and device the partition, else disk is NULL). */
void report_check_text(FILE *out, const struct check_result *r, const char *device,
		       const char *disk);

/* The "check" object: table, problems, geometry, partitions. */
void report_check_json(struct json_writer *w, const struct check_result *r);

#endif
