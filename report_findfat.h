/* report_findfat.h - text, flashbench-style and JSON output of the FAT-area
 * finder (findfat.h).  Nothing here measures. */
#ifndef FLASHPROBE_REPORT_FINDFAT_H
#define FLASHPROBE_REPORT_FINDFAT_H

#include <stdio.h>

struct json_writer;
struct findfat_result;

/* Verdict first ("FAT area: first 8 MiB (units 0-3), confidence 0.93",
 * "no FAT area found, confidence 0.95", or "FAT area undetermined: ..."
 * when the confidence is below 0.5), then a note, the evidence and cost
 * lines, a blank line and the table with a header line of unit numbers.
 * Manual mode has no verdict: a line saying what was run, then the
 * table. */
void report_findfat_text(FILE *out, const struct findfat_result *r);

/* The table alone in flashbench --findfat's layout: one line per chunk
 * size, largest first, "4MiB\t2.58M/s\t2.88M/s..." with one throughput
 * (10^6 B/s as flashbench prints) per examined unit. */
void report_findfat_flashbench(FILE *out, const struct findfat_result *r);

/* The "fat_area" object: found, start_bytes and size_bytes (null when not
 * found), confidence, erase_size_bytes, blocksize_bytes, mode, note,
 * evidence (contrast, noise, collapse_seen, large_agrees), units (the unit
 * index of every column), rows (chunk_bytes, order, writes_per_unit,
 * bytes_per_sec[] and write_ns[] per column), plan (start_bytes,
 * end_bytes, max_write_bytes), bytes_written and elapsed_ns. */
void report_findfat_json(struct json_writer *w, const struct findfat_result *r);

#endif
