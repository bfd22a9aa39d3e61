/* report_bench.h - text and JSON output of the speed test (benchio.h).
 * Nothing here measures. */
#ifndef FLASHPROBE_REPORT_BENCH_H
#define FLASHPROBE_REPORT_BENCH_H

#include <stdio.h>

struct json_writer;
struct benchio_result;

/* A line saying what was run (test area, repeats, window, warm-up), a
 * table in seed 001's layout, one row per workload: workload, block size,
 * MiB/s, IOPS (medians of the repeats), latency mean, p50, p95, p99, p99.9
 * and max (units_format_ns), and the min-max range of the repeats (MiB/s
 * for sequential workloads, IOPS for random ones); skipped workloads say
 * why.  Then the verdict lines: the random-write p99 against the
 * random-read p99, and random-write IOPS against random-read IOPS; then a
 * note and an "interrupted" line when they apply. */
void report_bench_text(FILE *out, const struct benchio_result *r);

/* The "bench" object:
 *   offset_bytes, size_bytes, runtime_ns, warmup_ns, repeats, queue_depth,
 *   seed, percentile_method (a sentence);
 *   one object per workload under its name ("seq_read", "seq_write",
 *   "rand_read", "rand_write"): name, block_bytes, skipped, skip_reason
 *   (null when run), bytes_per_sec, iops (medians of the repeats; null when
 *   skipped), bytes_per_sec_min, bytes_per_sec_max, iops_min, iops_max,
 *   ios, samples_capped, lat_ns {mean, p50, p95, p99, p999, max} (null
 *   when skipped), repeats [{bytes_per_sec, iops, ios, elapsed_ns,
 *   busy_ns, position, samples, samples_capped, lat_ns {...}}];
 *   order: one array of workload names per completed repeat, as run;
 *   verdict {rand_write_p99_ns, rand_write_p99_vs_read,
 *   rand_write_iops_vs_read} (each null unless both random workloads ran);
 *   io_count, bytes_written, elapsed_ns, interrupted, note. */
void report_bench_json(struct json_writer *w, const struct benchio_result *r);

#endif
