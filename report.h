/* report.h - turn analyzer results into text for people, JSON for scripts
 * and flashbench-compatible tables.  Nothing here measures. */
#ifndef FLASHPROBE_REPORT_H
#define FLASHPROBE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct fp_dev;
struct geo_size;
struct geo_count;
struct sim_profile;
struct json_writer;
struct align_result;

/* "device": path, size_bytes, sector_bytes, kind, simulated_card. */
void report_device_json(struct json_writer *w, struct fp_dev *d);

/* A value flashprobe decided, in the one shape every document uses
 * (docs/json.md, "Decided values"):
 *   "key": {"value": V, "confidence": C, "source": S}
 * confidence NAN is written as null (no confidence applies). */
void report_json_size(struct json_writer *w, const char *key, uint64_t value,
		      double confidence, const char *source);
void report_json_verdict(struct json_writer *w, const char *key, const char *value,
			 double confidence, const char *source);
/* Ends a value object the caller began and filled with "value" (and any
 * extras): writes confidence and source and closes it. */
void report_json_value_end(struct json_writer *w, double confidence, const char *source);
/* The same with "bound": "exact" or "at_least" after the value. */
void report_json_count(struct json_writer *w, const char *key, int64_t value,
		       bool at_least, double confidence, const char *source);

/* A struct geo_size / geo_count as above; null when unknown. */
void report_json_geo_size(struct json_writer *w, const char *key,
			  const struct geo_size *s);
void report_json_geo_count(struct json_writer *w, const char *key,
			   const struct geo_count *c);

/* One element of a "skipped" array: {"test": test, "reason": reason}. */
void report_json_skip(struct json_writer *w, const char *test, const char *reason);

/* The "sims" array: each built-in simulated card and its truth. */
void report_sims_json(struct json_writer *w, const struct sim_profile *profiles);

/* One line naming the device, e.g. "sim:seed: simulated card, 1GiB". */
void report_device_text(FILE *out, struct fp_dev *d);

/* Verdict lines first, then the evidence table. */
void report_align_text(FILE *out, const struct align_result *r);

/* The table alone, in flashbench -a's layout, largest boundary first. */
void report_align_flashbench(FILE *out, const struct align_result *r);

/* The "align" object. */
void report_align_json(struct json_writer *w, const struct align_result *r);

#endif
