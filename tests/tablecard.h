/* tablecard.h - a test device whose read costs replay a real flashbench -a
 * table: a read crossing a boundary that is a multiple of 2^n (and of no
 * larger power of two) pays that row's diff, on top of a base cost, with
 * per-location noise, jitter and rare stalls drawn from a seed.  Its
 * clock is virtual, so a run takes no real time.  Reads only. */
#ifndef FLASHPROBE_TESTS_TABLECARD_H
#define FLASHPROBE_TESTS_TABLECARD_H

#include <stddef.h>
#include <stdint.h>

struct fp_dev;

struct tablecard_row {
	uint64_t align_bytes;		/* a power of two */
	uint64_t diff_ns;
};

struct tablecard {
	const char *name;
	uint64_t size_bytes;
	uint64_t base_ns;		/* a read of blocksize bytes */
	unsigned jitter_pct;		/* +- uniform per read */
	unsigned location_pct;		/* +- fixed per 64 KiB region */
	unsigned stall_ppm;
	uint64_t stall_ns;
	const struct tablecard_row *rows;	/* ascending; sizes above the
						 * last one cost like it */
	size_t nrows;
	/* what the person who posted the table read from it (0: unknown) */
	uint64_t page_bytes, erase_bytes;
};

/* The seed card (shared/seeds/004): a 4 GB SD card behind a USB2 reader,
 * flashbench -a with 1 KiB reads; read as an 8 KiB page and a 2 MiB
 * erase block by its poster. */
extern const struct tablecard tablecard_seed4;

/* Open c as a device with noise drawn from seed.  0 or -ENOMEM. */
int tablecard_open(const struct tablecard *c, uint64_t seed,
		   struct fp_dev **out);

#endif
