/* findfat.h - find the FAT area: leading erase units the card manages
 * differently (per page, random-write friendly) from the rest.
 *
 * Two modes:
 *   manual (flashbench --findfat compatible): for chunk sizes from the erase
 *     size down to blocksize, halving, write each of the first N erase units
 *     completely in chunks, linear or random order, and record throughput
 *     per unit.  Nothing is decided.
 *   automatic: write each unit once whole, then a sample of small chunks in
 *     random order, and decide from ratios against the later "normal" units
 *     which leading units (if any) form the FAT area.
 *
 * Both write from sector 0 (partition table, file system).  The write area
 * is computed first by findfat_plan() (pure), so a caller can show it, ask
 * for consent, back it up and make it the device's write area;
 * findfat_run() then writes only inside that plan.  See findfat.c for the
 * method.
 * Nothing here prints or exits; errors are negative errno values.
 */
#ifndef FLASHPROBE_FINDFAT_H
#define FLASHPROBE_FINDFAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct fp_dev;

#define FINDFAT_MAX_UNITS 64		/* columns: units examined */
#define FINDFAT_MAX_ROWS 24		/* chunk sizes */
#define FINDFAT_MAX_AREA_UNITS 32	/* the largest FAT area reported */
#define FINDFAT_MAX_ERASE_BYTES (64ULL << 20)

enum findfat_mode {
	FINDFAT_AUTO,
	FINDFAT_MANUAL,
};

struct findfat_opts {
	enum findfat_mode mode;
	uint64_t erase_size_bytes;	/* unit size; required (no default) */
	uint64_t blocksize_bytes;	/* smallest chunk; 0 = default (manual
					 * 16 KiB as flashbench; automatic the
					 * largest of 16 KiB, 8 KiB... that
					 * divides the unit at least 32 times) */
	unsigned units;			/* manual: units written (0 = 6, as
					 * flashbench --fat-nr); automatic:
					 * leading units per batch, at least
					 * this many examined (0 = 8) */
	unsigned max_units;		/* automatic: leading units examined at
					 * most (0 = 40: unit 1 plus a 32-unit
					 * area plus normal units after it;
					 * fewer for units over 8 MiB) */
	bool random;			/* manual: random chunk order */
	unsigned samples;		/* automatic: small random writes per
					 * unit (0 = 16); each batch is read
					 * after half of them and may stop
					 * there (findfat.c) */
	uint64_t seed;			/* chunk order */
	bool full_batches;		/* automatic: write all of a batch's
					 * samples before reading it (the
					 * method without its early stop,
					 * for comparison) */
	/* bytes written, of the plan's max_write_bytes (an upper bound in
	 * automatic mode), after every unit */
	fp_progress_fn progress;
	void *progress_arg;
};

/* What a run may write, known before it writes anything.  Automatic mode
 * examines leading units in batches and compares them with reference
 * units at least 64 MiB in (beyond any FAT area), the last units of the
 * area; the units in between are never written.  max_write_bytes covers
 * the confirmation on cards that do not collapse (the first batch and the
 * references written once more). */
struct findfat_plan {
	uint64_t start_bytes;		/* always 0 */
	uint64_t end_bytes;		/* writes stay inside [start, end) */
	uint64_t max_write_bytes;	/* upper bound on bytes written */
	uint64_t erase_size_bytes;
	uint64_t blocksize_bytes;	/* smallest chunk actually used */
	unsigned max_units;		/* units in the area: end / erase size */
	unsigned min_units;		/* manual: units written; automatic:
					 * leading units per batch */
	unsigned max_lead_units;	/* automatic: leading units at most */
	unsigned ref_units;		/* automatic: reference units, the
					 * last ones of the area (8) */
	unsigned samples;		/* automatic: random writes per unit */
	size_t nrows;			/* chunk sizes (manual), 2 (automatic;
					 * the result gets a third, in-order
					 * row when the confirmation runs) */
};

/* One chunk size: one throughput per examined unit (column). */
struct findfat_row {
	uint64_t chunk_bytes;
	bool random;			/* chunks at random positions */
	unsigned writes_per_unit;	/* chunks written in each unit */
	double bytes_per_sec[FINDFAT_MAX_UNITS];	/* bytes / time spent */
	double write_ns[FINDFAT_MAX_UNITS];	/* median time of one write */
};

struct findfat_result {
	enum findfat_mode mode;
	struct findfat_plan plan;
	/* verdict (automatic mode; manual mode leaves found false and
	 * confidence 0) */
	bool found;
	uint64_t start_bytes;		/* FAT area, multiples of erase size */
	uint64_t size_bytes;
	double confidence;		/* [0, 1] in the verdict, found or not */
	/* evidence */
	double contrast;		/* normal / FAT time per small random
					 * write; 1 when nothing stands out */
	double noise;			/* spread of a unit's level (log scale) */
	bool collapse_seen;		/* normal units pay about a unit copy per
					 * small random write: a FAT area would
					 * stand out */
	bool large_agrees;		/* whole-unit writes step at the same
					 * boundary */
	uint64_t erase_size_bytes;
	uint64_t blocksize_bytes;
	/* columns: the units examined, ascending */
	unsigned ncols;
	unsigned col_unit[FINDFAT_MAX_UNITS];
	struct findfat_row rows[FINDFAT_MAX_ROWS];
	size_t nrows;
	uint64_t bytes_written;
	uint64_t elapsed_ns;		/* device time spent in writes */
	char note[160];			/* why the answer is weak, or "" */
};

void findfat_opts_default(struct findfat_opts *o);

/* Work out what a run with o would write on a device of device_bytes with
 * sector_bytes sectors; nothing is touched.  Returns 0, -EINVAL for impossible options (no or
 * misaligned erase size, blocksize not a sector multiple or not dividing
 * the erase size, too many units), -E2BIG for an erase size above
 * FINDFAT_MAX_ERASE_BYTES or -ENOSPC when the device is smaller than the
 * units that must be written. */
int findfat_plan(uint64_t device_bytes, uint32_t sector_bytes,
		 const struct findfat_opts *o, struct findfat_plan *p);

/* Measure as planned by findfat_plan() with the same o (the plan is kept
 * in r->plan) and (automatic mode) decide.  Returns 0 (also when nothing
 * was found or the answer is undetermined), -EINVAL for a plan of other
 * options or another device, -EFAULT when d's write area does not cover
 * the plan (nothing written), -ENOMEM, or a negative errno from the device
 * (the result then holds what was measured so far). */
int findfat_run(struct fp_dev *d, const struct findfat_opts *o,
		const struct findfat_plan *p, struct findfat_result *r);

/* Bytes flashbench --findfat writes with erase size, blocksize and unit
 * count (its defaults: 4 MiB, 16 KiB, 6 -> 216 MiB), for comparison. */
uint64_t findfat_flashbench_bytes(uint64_t erase_size_bytes,
				  uint64_t blocksize_bytes, unsigned units);

#endif
