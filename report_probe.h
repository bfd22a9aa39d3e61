/* report_probe.h - the probe's report for people (conclusion and advice
 * first) and as JSON. */
#ifndef FLASHPROBE_REPORT_PROBE_H
#define FLASHPROBE_REPORT_PROBE_H

#include <stdio.h>

struct fp_dev;
struct json_writer;
struct probe_result;

void report_probe_text(FILE *out, struct fp_dev *d, const struct probe_result *r);

/* The members of the probe document (device, identity, geometry,
 * capacity, align, open_au, fat_area, advice, skipped, conflict,
 * bytes_written, elapsed_ns) inside an object the caller opened. */
void report_probe_json(struct json_writer *w, struct fp_dev *d,
		       const struct probe_result *r);

#endif
