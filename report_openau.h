/* report_openau.h - text, flashbench-style and JSON output of the open-AU
 * counter (openau.h).  Nothing here measures. */
#ifndef FLASHPROBE_REPORT_OPENAU_H
#define FLASHPROBE_REPORT_OPENAU_H

#include <stdio.h>

struct json_writer;
struct openau_plan;
struct openau_result;

/* The announcement before anything is written: one line with the test
 * area [start, end), the AUs used and the bytes to be written (exact in
 * manual mode, an upper bound in automatic mode), e.g.
 * "test area: 16MiB to 784MiB (768MiB), 32 AUs 24MiB apart, at most
 * 1.5GiB to be written". */
void report_openau_plan_text(FILE *out, const struct openau_plan *p);

/* Automatic mode: the verdict line first ("open AUs: 5 linear, 2 random
 * (confidence 0.95)", "at least 32 linear", "0 random: linear only"), a
 * note when something is undetermined, then the trials (N, order, chunk,
 * throughput, time per write, excess, verdict) and the totals.  Manual
 * mode: a header line, the flashbench table and the totals. */
void report_openau_text(FILE *out, const struct openau_result *r);

/* flashbench --open-au's output: one "4MiB\t12.4M/s" line per chunk size
 * (manual mode).  In automatic mode one such line per trial, prefixed
 * with N and the order ("n=2 linear 64KiB\t4.68M/s"). */
void report_openau_flashbench(FILE *out, const struct openau_result *r);

/* The "open_au" object: erase_size_bytes, linear (integer or null),
 * linear_bound ("exact", "at_least" or null), linear_confidence, random,
 * random_bound, random_confidence, trials (n, order, chunk_bytes,
 * bytes_per_sec), bytes_written, elapsed_ns. */
void report_openau_json(struct json_writer *w, const struct openau_result *r);

#endif
