/* advice.h - from measured geometry to partitioning and file-system advice.
 *
 * Pure computation: the probe fills a struct geometry with what the
 * analyzers and the card's registers said, advice_compute() turns it into
 * commands a user can paste and consequences in plain language.
 */
#ifndef FLASHPROBE_ADVICE_H
#define FLASHPROBE_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a value comes from. */
enum geo_source {
	GEO_NONE,		/* unknown */
	GEO_MEASURED,		/* timed by flashprobe */
	GEO_CARD,		/* reported by the card's registers */
	GEO_KERNEL_GUESS,	/* Linux's guess (preferred_erase_size without an AU) */
};

const char *geo_source_name(enum geo_source s);	/* "measured", "card", "kernel_guess", "none" */

struct geo_size {
	uint64_t bytes;		/* 0 = unknown */
	double confidence;
	enum geo_source source;
};

struct geo_count {
	int value;		/* -1 = unknown */
	bool at_least;		/* value is a lower bound */
	double confidence;
	enum geo_source source;
};

struct geometry {
	uint64_t device_bytes;
	uint32_t sector_bytes;
	struct geo_size page;
	struct geo_size erase;		/* measured erase block (read step) */
	struct geo_size card_au;	/* AU the card or kernel reports */
	struct geo_count open_linear;
	struct geo_count open_random;
	bool fat_tested;
	bool fat_found;
	uint64_t fat_start_bytes, fat_size_bytes;
	double fat_confidence;
	/* the fake-capacity check: verdict name (NULL: not verified) and the
	 * size verified from offset 0; partitions stay inside usable_bytes
	 * (0: the whole device) */
	const char *capacity_verdict;
	double capacity_confidence;
	enum geo_source capacity_source;
	struct geo_size capacity_real;
	uint64_t usable_bytes;
};

#define ADVICE_LINE 256
#define ADVICE_MAX_NOTES 8

struct advice {
	/* the unit partitions and file-system structures are aligned to */
	uint64_t align_bytes;		/* 0: nothing known, no advice */
	char align_reason[ADVICE_LINE];
	uint64_t part_start_bytes;
	uint64_t part_size_bytes;
	char sfdisk[ADVICE_LINE];	/* script line for sfdisk */
	char mkfs_fat[ADVICE_LINE];
	char mkfs_ext4[ADVICE_LINE];
	char mkfs_f2fs[ADVICE_LINE];
	char notes[ADVICE_MAX_NOTES][ADVICE_LINE];	/* plain-language consequences */
	size_t nnotes;
};

/* Compute advice; never fails (unknown geometry gives align_bytes 0 and a
 * note saying why). */
void advice_compute(const struct geometry *g, struct advice *a);

/* The FAT32 layout advice_compute() chose: sectors per cluster and the
 * reserved sectors that put the data area on an align_bytes boundary for
 * a partition of part_bytes (exposed for tests). */
struct fat32_layout {
	uint32_t sectors_per_cluster;
	uint32_t reserved_sectors;
	uint32_t fat_sectors;		/* per FAT copy */
};
bool advice_fat32_layout(uint64_t part_bytes, uint32_t sector_bytes,
			 uint64_t cluster_bytes, uint64_t align_bytes,
			 struct fat32_layout *out);

#endif
