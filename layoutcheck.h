/* layoutcheck.h - does a card's existing layout fit its geometry?
 *
 * Reads the partition table and each partition's file system (parttable,
 * fsprobe), then judges each partition against the erase block, the page
 * and the FAT area: where it starts, where its file system's data begins,
 * its cluster size.  Each flaw becomes one sentence with its consequence,
 * and the fix comes from the advice code.  Read-only; never prints.
 */
#ifndef FLASHPROBE_LAYOUTCHECK_H
#define FLASHPROBE_LAYOUTCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "advice.h"
#include "fsprobe.h"
#include "parttable.h"

struct fp_dev;

struct check_geometry {
	uint64_t erase_bytes;		/* 0 = unknown: no alignment verdicts */
	uint64_t page_bytes;		/* 0 = unknown */
	uint64_t fat_area_bytes;	/* from the start of the card; 0 = none or unknown */
	enum geo_source erase_source, page_source, fat_source;
};

#define CHECK_MAX_PROBLEMS 6
#define CHECK_LINE 400
#define CHECK_MAX_FIX 3		/* a new table, the format, the MBR type */

struct check_part {
	struct pt_entry entry;		/* number 0: a file system on the whole device */
	char name[32];			/* "partition N", or the whole device's
					 * file system: what its lines are about */
	bool start_aligned;		/* on the erase block (not judged, and
					 * true, without one) */
	bool start_page_aligned;
	bool start_harmless;		/* off the erase block or the page, but
					 * the file system's data is on it */
	bool in_fat_area;
	struct fsinfo fs;
	uint64_t data_start_bytes;	/* absolute: partition start + data offset */
	bool data_aligned;
	bool misfit;			/* a flaw the advice's commands fix */
	bool new_table;			/* the fix makes a new table first: its
					 * PARTITION is that table's partition 1 */
	char problems[CHECK_MAX_PROBLEMS][CHECK_LINE];
	size_t nproblems;
	char fix[CHECK_MAX_FIX][ADVICE_TEXT];	/* shell lines with DEVICE/PARTITION */
	size_t nfix;
};

struct check_result {
	bool partition_device;		/* a partition given: one entry, at its offset */
	uint64_t device_bytes;
	uint32_t sector_bytes;
	struct check_geometry geo;
	struct parttable table;		/* its problems are about the table itself */
	struct check_part parts[PT_MAX_PARTS];
	size_t nparts;
};

/* Check the layout of d.  0 when the layout could be read (whatever was
 * found), or a negative errno from the device. */
int layoutcheck_run(const struct disk *d, const struct check_geometry *g,
		    struct check_result *r);

/* d is one partition (a /dev/mmcblk0p1) that starts offset bytes into its
 * disk: judge it as partition number of that disk.  The fix then names the
 * disk's commands for a partition of this size. */
int layoutcheck_run_partition(const struct disk *d, const struct check_geometry *g,
			      uint64_t offset, unsigned number, struct check_result *r);

/* A disk reading through a flashprobe device (sector-aligned bounce
 * buffers; reads only). */
void layoutcheck_disk_of(struct fp_dev *dev, struct disk *out);

#endif
