/* auwrite.h - find the allocation unit from writes, when reads show none.
 *
 * Writes a few small chunks at increasing offsets inside one announced
 * area and times them: inside an AU a forward gap costs a copy of the
 * skipped pages; where a write opens the next AU at its start nothing is
 * copied.  The first candidate size (2^n and 3*2^n, 128 KiB to 64 MiB,
 * from 32 chunks with chunks above 4 KiB) where the gap cost vanishes,
 * confirmed one and two AUs further, is the AU.  See auwrite.c for the
 * method.  The analyzer never prints and keeps
 * no globals; the caller backs the area up (session_protect) first.
 *
 * Use: auwrite_opts_default(), auwrite_plan() (pure: the area and the
 * bytes it writes, to announce), then auwrite_run().
 */
#ifndef FLASHPROBE_AUWRITE_H
#define FLASHPROBE_AUWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fp_dev;

#define AUWRITE_MIN_AU (128u * 1024u)	/* with the default 4 KiB chunk */
#define AUWRITE_MAX_AU (64u * 1024u * 1024u)
#define AUWRITE_MAX_CHUNK (64u * 1024u)
#define AUWRITE_UNKNOWN_PAGE_CHUNK (16u * 1024u)	/* the common page today */
#define AUWRITE_MAX_POINTS 96

/* Progress: done and total in timed writes (total is an upper bound). */
typedef void (*auwrite_progress_fn)(void *arg, uint64_t done, uint64_t total);

struct auwrite_opts {
	uint64_t max_au_bytes;		/* largest candidate (0 = 64 MiB); lowered
					 * by the plan when the device is small */
	uint64_t chunk_bytes;		/* timed write size (0 = 4 KiB or a sector;
					 * give the page, when known, on cards
					 * whose write pointer moves in whole
					 * pages: see auwrite_chunk_for_page) */
	uint64_t flush_bytes;		/* sequential write before the site (0 = 16 MiB) */
	auwrite_progress_fn progress;
	void *progress_arg;
};

/* The area, computed before anything is written. */
struct auwrite_plan {
	uint64_t start_bytes;		/* write area [start_bytes, end_bytes) */
	uint64_t end_bytes;
	uint64_t site_bytes;		/* the timed writes' origin: a multiple of
					 * every candidate */
	uint64_t max_au_bytes;		/* largest candidate searched */
	uint64_t chunk_bytes;
	uint64_t grain_bytes;		/* the search's offsets (pre points, first
					 * candidate, pair gaps) are multiples of
					 * it: 4 KiB, or the chunk when larger */
	uint64_t min_au_bytes;		/* smallest candidate: 32 grains */
	uint64_t flush_bytes;
	uint64_t max_bytes;		/* upper bound of bytes written */
	unsigned max_points;		/* upper bound of timed writes */
};

enum auwrite_class {
	AUWRITE_PT_CALIBRATION,		/* a contiguous write: the base cost */
	AUWRITE_PT_INSIDE,		/* the gap was copied: inside one AU */
	AUWRITE_PT_OPENED,		/* nothing copied: an AU starts here */
	AUWRITE_PT_UNCLEAR,
	AUWRITE_PT_WEAK,		/* expected gap cost too small to judge */
};

/* One timed write at site + offset. */
struct auwrite_point {
	uint64_t offset_bytes;		/* from the site */
	uint64_t gap_bytes;		/* skipped since the previous write's end */
	uint64_t write_ns;
	double ratio;			/* (write - base) / expected gap cost */
	enum auwrite_class cls;
};

struct auwrite_result {
	uint64_t au_bytes;		/* 0 = undetermined */
	double confidence;		/* [0, 1]; 0 when undetermined */
	uint64_t base_ns;		/* a write without a gap */
	double copy_ns_per_byte;	/* gap cost per skipped byte (last estimate) */
	struct auwrite_point points[AUWRITE_MAX_POINTS];
	size_t npoints;
	uint64_t bytes_written;
	uint64_t elapsed_ns;		/* device time of this run's I/O */
	uint64_t io_count;
	char note[200];			/* why undetermined, or "" */
};

void auwrite_opts_default(struct auwrite_opts *o);

/* Pure: the area for a device of size bytes with sector-byte sectors.
 * 0, -EINVAL (bad options), -ENOSPC (the device is too small for even a
 * 1 MiB search). */
int auwrite_plan(uint64_t size, uint32_t sector, const struct auwrite_opts *o,
		 struct auwrite_plan *p);

/* Run the planned search.  0 (also when undetermined), -ENOMEM, or a
 * negative errno from the device (the result holds what was measured). */
int auwrite_run(struct fp_dev *d, const struct auwrite_opts *o,
		const struct auwrite_plan *p, struct auwrite_result *r);

/* "calibration", "inside", "opened", "unclear", "weak". */
const char *auwrite_class_name(enum auwrite_class c);

/* The chunk for a card whose page (from the read test, 0 = none) is
 * page_bytes, so that every timed write starts a page of its own (a card
 * that keeps its write pointer in whole pages takes a 4 KiB write after
 * 4 KiB inside one page as out of order): the page when it is a power of
 * two above 4 KiB and at most AUWRITE_MAX_CHUNK; 0 (the default, 4 KiB)
 * for pages up to 4 KiB, whose cards have AUs from 128 KiB; else, with
 * no page or an odd one, AUWRITE_UNKNOWN_PAGE_CHUNK.  On the generated
 * cards of tests/check_auwrite.c 16 KiB chunks find 33 AUs of 60 where
 * the write pointer moves in pages (4 KiB ones: 22) and 66 of 120
 * where it moves in bytes (4 KiB ones: 70), none wrong. */
uint64_t auwrite_chunk_for_page(uint64_t page_bytes);

#endif
