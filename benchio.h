/* benchio.h - the four-workload speed test: sequential and random reads and
 * writes at queue depth one, with exact completion-latency percentiles.
 *
 * What users compare cards with (fio's psync engine, iodepth=1): 1 MiB
 * sequential read and write, 4 KiB random read and write, each warmed up,
 * then measured for a fixed time, repeated in alternating order; the
 * reported figure is the median of the repeats with their min-max range.
 * See benchio.c for the method and its limits.
 *
 * The analyzer never prints, never exits and sets nothing on the device:
 * writes happen only when the caller allows them, and only inside the test
 * area, which the caller must have made the device's write area
 * (fp_dev_set_write_area() or the safety layer) beforehand.
 *
 * Use: benchio_opts_default(), set offset_bytes and size_bytes (e.g. from
 * benchio_plan_area()), allow_writes after consent, then benchio_run().
 */
#ifndef FLASHPROBE_BENCHIO_H
#define FLASHPROBE_BENCHIO_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct fp_dev;

enum benchio_workload {
	BENCHIO_SEQ_READ,
	BENCHIO_SEQ_WRITE,
	BENCHIO_RAND_READ,
	BENCHIO_RAND_WRITE,
	BENCHIO_NWORKLOADS
};

#define BENCHIO_MASK(w) (1u << (w))
#define BENCHIO_ALL_WORKLOADS ((1u << BENCHIO_NWORKLOADS) - 1)

#define BENCHIO_MAX_REPEATS 32u
#define BENCHIO_DEFAULT_REPEATS 3u
#define BENCHIO_DEFAULT_RUNTIME_NS UINT64_C(3000000000)	/* 3 s per workload */
#define BENCHIO_DEFAULT_WARMUP_NS UINT64_C(1000000000)		/* 1 s before each */
#define BENCHIO_DEFAULT_SEQ_BLOCK_BYTES (UINT64_C(1) << 20)
#define BENCHIO_DEFAULT_RAND_BLOCK_BYTES UINT64_C(4096)
/* Latency samples kept per repeat: 4 Mi samples = 32 MiB.  Beyond it a
 * uniform random subset of that size is kept (reservoir sampling); mean and
 * max stay exact. */
#define BENCHIO_DEFAULT_MAX_SAMPLES ((size_t)4 << 20)
/* Default test area (benchio_plan_area()). */
#define BENCHIO_DEFAULT_AREA_BYTES (UINT64_C(256) << 20)
#define BENCHIO_DEFAULT_OFFSET_BYTES (UINT64_C(16) << 20)

struct benchio_opts {
	uint64_t offset_bytes;		/* test area start, sector aligned */
	uint64_t size_bytes;		/* test area size (> 0) */
	uint64_t seq_block_bytes;	/* sequential request size (1 MiB) */
	uint64_t rand_block_bytes;	/* random request size (4 KiB) */
	uint64_t runtime_ns;		/* measurement per workload and repeat (> 0) */
	uint64_t warmup_ns;		/* unrecorded I/O before each measurement; 0 = none */
	unsigned repeats;		/* 1..BENCHIO_MAX_REPEATS */
	unsigned workloads;		/* BENCHIO_MASK() bits; default all */
	bool allow_writes;		/* consent given: else the write workloads are
					 * skipped as "read-only" and nothing is written */
	bool constant_fill;		/* write 0x5a bytes (as flashbench) instead of
					 * incompressible pseudo-random data (as fio);
					 * keeps simulated cards small in memory */
	uint64_t seed;			/* random offsets, data, sample subsets */
	size_t max_samples;		/* latency samples kept per repeat (>= 1) */
	/* done and total in nanoseconds of device time (the planned
	 * warm-ups and measurements), called about every 100 ms of device
	 * time and at the end of every warm-up and measurement; it may set
	 * the interrupted flag */
	fp_progress_fn progress;
	void *progress_arg;
	/* Checked before every request: when it becomes nonzero (e.g. from a
	 * SIGINT handler) the run stops at the next I/O boundary and returns
	 * -EINTR.  NULL = never. */
	const volatile sig_atomic_t *interrupted;
};

/* Completion latency of single requests, in nanoseconds. */
struct benchio_lat_ns {
	uint64_t mean;
	uint64_t p50;
	uint64_t p95;
	uint64_t p99;
	uint64_t p999;			/* 99.9th percentile */
	uint64_t max;
};

/* One measurement window of one workload. */
struct benchio_repeat {
	double bytes_per_sec;		/* bytes / elapsed device time */
	double iops;			/* requests / elapsed device time */
	struct benchio_lat_ns lat_ns;
	uint64_t ios;			/* requests measured */
	uint64_t elapsed_ns;		/* device clock, first request start to last end */
	uint64_t busy_ns;		/* summed request latencies */
	uint64_t samples;		/* latencies the percentiles are computed from */
	bool samples_capped;		/* samples < ios: percentiles from a uniform subset */
	unsigned position;		/* 0-based place in this repeat's order */
};

struct benchio_workload_result {
	enum benchio_workload workload;
	const char *name;		/* "seq_read", "seq_write", "rand_read", "rand_write" */
	uint64_t block_bytes;
	bool is_write;
	bool sequential;
	bool skipped;			/* not run; skip_reason says why */
	const char *skip_reason;	/* "read-only", "not selected", or NULL */
	/* Over the completed repeats: median, minimum and maximum. */
	double bytes_per_sec;
	double iops;
	double bytes_per_sec_min, bytes_per_sec_max;
	double iops_min, iops_max;
	/* mean and percentiles: median over repeats of each repeat's value;
	 * max: the largest single latency of all repeats */
	struct benchio_lat_ns lat_ns;
	uint64_t ios;			/* over all repeats */
	bool samples_capped;		/* some repeat's percentiles use a subset */
	struct benchio_repeat repeats[BENCHIO_MAX_REPEATS];
	unsigned nrepeats;		/* completed */
};

struct benchio_result {
	/* indexed by enum benchio_workload */
	struct benchio_workload_result w[BENCHIO_NWORKLOADS];
	/* The order the workloads ran in, repeat by repeat. */
	enum benchio_workload order[BENCHIO_MAX_REPEATS][BENCHIO_NWORKLOADS];
	unsigned nactive;		/* workloads per repeat */
	unsigned repeats_done;		/* repeats completed by every workload */

	/* What was run (the effective options). */
	uint64_t offset_bytes;
	uint64_t size_bytes;
	uint64_t runtime_ns;
	uint64_t warmup_ns;
	unsigned repeats;
	uint64_t seed;

	/* Verdict: how far random writes fall behind random reads; valid
	 * only when both random workloads have completed repeats. */
	bool verdict_valid;
	uint64_t rand_write_p99_ns;
	double rand_write_p99_ratio;	/* random-write p99 / random-read p99 */
	double rand_write_iops_ratio;	/* random-write IOPS / random-read IOPS */

	uint64_t io_count;		/* this run, warm-ups included */
	uint64_t bytes_written;
	uint64_t elapsed_ns;		/* device time spent inside requests */
	bool interrupted;		/* stopped by the flag: results partial */
	char note[200];			/* limits worth telling, or "" */
};

void benchio_opts_default(struct benchio_opts *o);

/* "seq_read" etc.; NULL for an invalid value. */
const char *benchio_workload_name(enum benchio_workload w);

/* Parse a comma-separated list of workload names ("rand_read",
 * "seq_read,rand_read"; "all") into a BENCHIO_MASK() set.  0 or -EINVAL
 * (unknown or empty name); *mask is only written on success. */
int benchio_workloads_parse(const char *list, unsigned *mask);

/* The default test area: BENCHIO_DEFAULT_AREA_BYTES (or what the device
 * has) starting at the first erase-block boundary at or past the end of the
 * FAT area, or past BENCHIO_DEFAULT_OFFSET_BYTES when the FAT area is not
 * known.  erase_bytes and fat_end_bytes are 0 when unknown.  0, or -ENOSPC
 * when the device ends before the start plus one erase block (or 1 MiB):
 * the caller must then give an offset. */
int benchio_plan_area(uint64_t device_bytes, uint32_t sector_bytes,
		      uint64_t erase_bytes, uint64_t fat_end_bytes,
		      uint64_t *offset_bytes, uint64_t *size_bytes);

/* Latency summary of n samples: sorts samples in place, then mean (rounded
 * to the nearest ns), p50, p95, p99, p99.9 by the nearest-rank definition
 * (the smallest sample with at least p percent of the samples at or below
 * it, as fio) and max.  n == 0 gives all zeros. */
void benchio_lat_summary(uint64_t *samples, size_t n, struct benchio_lat_ns *out);

/* Measure.  r is filled completely (also partially on error, with the
 * repeats completed so far).  Returns 0; -EINVAL for invalid options or an
 * area outside the device or too small for a block; -ENOMEM; -EINTR when
 * the interrupted flag stopped it; or the device's negative errno (-EFAULT
 * when a write falls outside the device's write area). */
int benchio_run(struct fp_dev *d, const struct benchio_opts *o,
		struct benchio_result *r);

/* Whether o can run on a device of dev_bytes: the options in range and
 * the area (offset_bytes, size_bytes) inside it, sector aligned, with room
 * for one aligned block of each size.  0 or -EINVAL. */
int benchio_check_area(uint64_t dev_bytes, uint64_t sector, const struct benchio_opts *o);

#endif
