/* align.h - read-only alignment analysis: effective page and erase block.
 *
 * Times reads of blocksize bytes just before ("pre"), across ("on") and just
 * after ("post") boundaries of candidate sizes, power-of-two and 3*2^n, and
 * decides which sizes the card treats as internal boundaries.  See align.c
 * for the method.  The analyzer never prints and never writes.
 */
#ifndef FLASHPROBE_ALIGN_H
#define FLASHPROBE_ALIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct fp_dev;

#define ALIGN_MAX_ROWS 64

/* Progress callback: done and total in arbitrary units, called between
 * measurement rounds. */
typedef fp_progress_fn align_progress_fn;

struct align_opts {
	uint64_t blocksize_bytes;	/* read size; 0 = 2 sectors, at least 1 KiB */
	unsigned max_repeats;		/* per position and read kind; 0 = default (48) */
	unsigned min_repeats;		/* rounds over every position before any stop; 0 = default (3) */
	uint64_t max_reads;		/* I/O budget; 0 = default (60000, quick 3000) */
	uint64_t max_boundary_bytes;	/* largest boundary tested; 0 = from device size */
	uint64_t seed;			/* order of measurements */
	bool quick;			/* coarser targets, a smaller budget, capped confidence */
	align_progress_fn progress;
	void *progress_arg;
};

/* One tested boundary size.  Times are robust per-position estimates
 * combined across positions (median); diff = on - (pre + post) / 2. */
struct align_row {
	uint64_t align_bytes;
	int64_t pre_ns;
	int64_t on_ns;
	int64_t post_ns;
	int64_t diff_ns;
	double diff_se_ns;		/* standard error of diff_ns */
	unsigned positions;
	unsigned repeats;
};

/* What a boundary level is, once the page and erase block are decided. */
enum align_level_role {
	ALIGN_LEVEL_UNKNOWN,		/* the page could not be decided */
	ALIGN_LEVEL_SUBPAGE,		/* below the page: raw pages of a
					 * multi-plane page, or a small effect */
	ALIGN_LEVEL_PAGE,
	ALIGN_LEVEL_SUBAU,		/* between page and erase block */
	ALIGN_LEVEL_ERASE,
};

/* "sub-page", "page", "sub-AU", "erase block", "unclassified". */
const char *align_level_role_name(enum align_level_role role);

struct align_result {
	uint64_t page_size_bytes;	/* 0 = undetermined */
	double page_confidence;		/* [0, 1] */
	uint64_t erase_size_bytes;	/* 0 = undetermined */
	double erase_confidence;
	uint64_t blocksize_bytes;
	int64_t base_read_ns;		/* typical read of blocksize bytes */
	double noise_ns;		/* typical standard error of a row's diff */
	bool pattern_found;		/* any boundary effect at all */
	bool positions_extended;	/* more positions were measured against location noise */
	bool quick;			/* a --quick run: small steps were not looked for */
	bool budget_stopped;		/* the read budget ended the run before the
					 * answer settled (confidences capped) */
	/* every size that behaves as a boundary level, ascending (page,
	 * multi-plane group, sub-AU step, erase block...) */
	uint64_t levels[16];
	int64_t level_diff_ns[16];	/* the diff at each level */
	enum align_level_role level_roles[16];
	size_t nlevels;
	struct align_row rows[ALIGN_MAX_ROWS];	/* ascending align_bytes */
	size_t nrows;
	uint64_t io_count;
	uint64_t elapsed_ns;		/* device time spent in I/O */
	char note[160];			/* why something is undetermined, or "" */
};

void align_opts_default(struct align_opts *o);

/* Measure and decide.  Returns 0 (even when undetermined) or a negative
 * errno from the device (the result is then incomplete). */
uint64_t align_flashbench_reads(uint64_t size, uint64_t bs);
int align_run(struct fp_dev *d, const struct align_opts *o,
	      struct align_result *r);

#endif
