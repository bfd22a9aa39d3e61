/* openau.h - count the AUs a card keeps open, in linear and random order.
 *
 * The card is written (this test is destructive inside its test area).
 * Two modes:
 *   - manual (opts.open_au_nr > 0): flashbench --open-au's procedure, one
 *     throughput per chunk size, no verdict;
 *   - automatic: searches the largest number of AUs that can be written
 *     alternately without garbage collection on every write, once in
 *     linear order and once in random order inside each AU.
 * See openau.c for the method.  The analyzer never prints and never exits.
 *
 * Use: openau_opts_default(), set erase_size_bytes (and anything else),
 * openau_plan() (pure: the test area, for the caller to show, back up and
 * make the device's write area), then openau_run() on a device whose
 * write area covers the plan.
 */
#ifndef FLASHPROBE_OPENAU_H
#define FLASHPROBE_OPENAU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct fp_dev;

#define OPENAU_DEFAULT_MAX_OPEN 32u
#define OPENAU_MAX_OPEN_LIMIT 256u	/* highest accepted max_open */
#define OPENAU_DEFAULT_BLOCKSIZE (16u * 1024u)	/* flashbench's default */
#define OPENAU_FAT_SKIP_BYTES (16u * 1024u * 1024u)	/* default offset */
#define OPENAU_MAX_TRIALS 128

enum openau_order {
	OPENAU_LINEAR,		/* chunks of an AU written at increasing offsets */
	OPENAU_RANDOM,		/* chunks of an AU out of order: shuffled
				 * (manual, as flashbench), random slots each
				 * at or below the last (automatic) */
};

struct openau_opts {
	uint64_t erase_size_bytes;	/* required: the AU (erase block) size */
	bool offset_set;		/* else 16 MiB rounded up to erase size,
					 * plus one erase size (automatic) */
	uint64_t offset_bytes;		/* start of the test area (sector aligned;
					 * automatic: rounded up to the AU) */
	unsigned open_au_nr;		/* manual mode: N AUs; 0 = automatic */
	uint64_t blocksize_bytes;	/* manual: smallest chunk (0 = 16 KiB);
					 * automatic: smallest chunk tried (0 = auto) */
	bool random;			/* manual mode: random order */
	unsigned max_open;		/* automatic: search limit (0 = 32) */
	uint64_t seed;			/* shuffles: chunk order, AU visiting order */
	bool full_trials;		/* automatic: every big round of a trial
					 * that collapsed early and every edge
					 * re-test written (the method without
					 * those savings, for comparison) */
	fp_progress_fn progress;	/* trials (total: an upper bound) */
	void *progress_arg;
};

/* The test area, computed before anything is written. */
struct openau_plan {
	bool manual;
	uint64_t erase_size_bytes;
	uint64_t start_bytes;		/* write area [start_bytes, end_bytes) */
	bool start_rounded;		/* automatic: a given offset that is not
					 * on an AU, rounded up to one */
	uint64_t end_bytes;
	uint64_t spacing_bytes;		/* distance between consecutive test AUs */
	unsigned test_aus;		/* AUs written alternately (N, or max_open) */
	unsigned flush_aus;		/* automatic: AUs used to close open ones */
	unsigned max_open;		/* automatic: effective search limit, lowered
					 * when the device is too small for the default */
	uint64_t max_bytes;		/* bytes to be written: exact in manual mode,
					 * an upper bound in automatic mode */
	unsigned max_trials;		/* upper bound of trials (progress total) */
};

enum openau_bound {
	OPENAU_UNDETERMINED,		/* not decided (count meaningless) */
	OPENAU_EXACT,
	OPENAU_AT_LEAST,		/* no collapse up to the limit */
	OPENAU_NOT_TESTED,		/* manual mode */
};

enum openau_verdict {
	OPENAU_TRIAL_MANUAL,		/* manual mode row: no verdict */
	OPENAU_TRIAL_OPEN,		/* every AU stayed open */
	OPENAU_TRIAL_COLLAPSED,		/* at least one AU was collected on
					 * (nearly) every write */
	OPENAU_TRIAL_UNCLEAR,
};

/* One measured trial (automatic) or one chunk size (manual). */
struct openau_trial {
	unsigned n;			/* AUs written alternately */
	enum openau_order order;
	uint64_t chunk_bytes;
	double bytes_per_sec;		/* chunk writes: bytes / device time */
	uint64_t write_ns;		/* time of one chunk write: median
					 * (automatic), mean (manual, as
					 * flashbench) */
	/* automatic mode only: */
	double excess;			/* extra time per write of the slowest
					 * AU over the reference, in full-AU
					 * write times */
	double strength;		/* [0,1]: how clearly the verdict holds */
	enum openau_verdict verdict;
};

struct openau_count {
	unsigned n;			/* meaningful for EXACT and AT_LEAST */
	enum openau_bound bound;
	double confidence;		/* [0, 1]; 0 when undetermined */
};

struct openau_result {
	bool manual;
	uint64_t erase_size_bytes;
	uint64_t chunk_bytes;		/* automatic: chunk the verdicts use */
	struct openau_count linear;
	struct openau_count random;	/* random.n == 0: linear only */
	uint64_t au_write_ns;		/* automatic: estimated time of writing
					 * one whole AU in one request */
	struct openau_trial trials[OPENAU_MAX_TRIALS];
	size_t ntrials;
	uint64_t bytes_written;		/* by this run */
	uint64_t elapsed_ns;		/* device time of this run's I/O */
	uint64_t io_count;
	double random_cycle_ratio;	/* automatic, random 0 only: what an
					 * out-of-order write costs after half
					 * the AU was written over after one
					 * chunk (linear only about 0.5, random
					 * mode 1); -1 when not measured */
	char note[200];			/* why something is undetermined, or "" */
};

void openau_opts_default(struct openau_opts *o);

/* Compute the test area [start_bytes, end_bytes) for o on a device of
 * size_bytes with sector_bytes sectors; nothing is touched.  Returns 0,
 * -EINVAL for bad options (no or unaligned erase size, blocksize not
 * dividing the erase size, offset not sector aligned), -ENOSPC when the
 * area does not fit in the device. */
int openau_plan(uint64_t size_bytes, uint32_t sector_bytes,
		const struct openau_opts *o, struct openau_plan *p);

/* Run the test planned by openau_plan() with the same o, writing only
 * inside the plan.  Returns 0 (also when a count is undetermined),
 * -EINVAL for a plan of other options or another device, -EFAULT when
 * d's write area does not cover the plan (nothing written), -ENOMEM, or a
 * negative errno from the device (the result then holds what was measured
 * so far). */
int openau_run(struct fp_dev *d, const struct openau_opts *o,
	       const struct openau_plan *p, struct openau_result *r);

/* "linear" / "random". */
const char *openau_order_name(enum openau_order order);

/* Bytes flashbench writes for one --open-au run with nr AUs (nr x erase
 * size x number of chunk sizes from erase size down to blocksize). */
uint64_t openau_flashbench_bytes(uint64_t erase_bytes, uint64_t blocksize_bytes,
				 unsigned nr);

#endif
