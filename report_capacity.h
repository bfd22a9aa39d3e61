/* report_capacity.h - text and JSON output of the fake-capacity check
 * (capacity.h).  Nothing here measures. */
#ifndef FLASHPROBE_REPORT_CAPACITY_H
#define FLASHPROBE_REPORT_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct capacity_plan;
struct capacity_result;
struct json_writer;

/* The finding in one phrase, e.g. "FAKE: 8GiB of 64GiB real (writes past
 * 8GiB wrap to the start)", "genuine: 64GiB real (all 58 test blocks kept
 * their data)",
 * "DAMAGED: I/O errors at 512MiB (512MiB verified from the start)",
 * "undetermined: ...".  Returns buf. */
const char *report_capacity_headline(const struct capacity_result *r, char *buf,
				     size_t len);

/* How the capacity advice speaks of partitioning: its own sfdisk line,
 * the partition of the advice that follows it, or none at all (the card
 * is failing: no partitioning advice). */
enum capacity_partition {
	CAPACITY_PARTITION_LINE,
	CAPACITY_PARTITION_BELOW,
	CAPACITY_PARTITION_NONE,
};

/* For a fake or damaged card: partition only the verified part (see
 * enum capacity_partition) and return the card; nothing otherwise.  Each
 * line starts with indent. */
void report_capacity_advice(FILE *out, const struct capacity_result *r,
			    const char *device, enum capacity_partition partition,
			    const char *indent);

/* The verdict line ("capacity: <headline> (confidence 0.95)"), the
 * advice, then the evidence: blocks, flushes, bytes, device time. */
void report_capacity_text(FILE *out, const struct capacity_result *r,
			  const char *device);

/* The evidence alone: a note, blocks, flushes, bytes, I/Os, device time. */
void report_capacity_evidence(FILE *out, const struct capacity_result *r);

/* The "capacity" object: verdict, reported_bytes, real_bytes (null when
 * undetermined), alias_period_bytes (null unless wraparound),
 * first_bad_bytes (null when none), confidence, blocks_tested,
 * bytes_written, io_count, elapsed_ns, cache_flush_bytes, cache_flushes,
 * cache_defeated, rounds, note. */
void report_capacity_json(struct json_writer *w, const struct capacity_result *r);

#endif
