/* report.h - turn analyzer results into text for people, JSON for scripts
 * and flashbench-compatible tables.  Nothing here measures. */
#ifndef FLASHPROBE_REPORT_H
#define FLASHPROBE_REPORT_H

#include <stdio.h>

struct fp_dev;
struct json_writer;
struct align_result;

/* "device": path, size_bytes, kind (and the simulated card's name). */
void report_device_json(struct json_writer *w, struct fp_dev *d);

/* One line naming the device, e.g. "sim:seed: simulated card, 1GiB". */
void report_device_text(FILE *out, struct fp_dev *d);

/* Verdict lines first, then the evidence table. */
void report_align_text(FILE *out, const struct align_result *r);

/* The table alone, in flashbench -a's layout, largest boundary first. */
void report_align_flashbench(FILE *out, const struct align_result *r);

/* The "align" object. */
void report_align_json(struct json_writer *w, const struct align_result *r);

#endif
