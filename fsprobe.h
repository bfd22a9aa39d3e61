/* fsprobe.h - which file system a partition holds, and where its data
 * begins, from the file system's own first sectors.
 *
 * FAT12/16/32 and exFAT boot sectors, the ext2/3/4 superblock and the
 * f2fs superblock are parsed here (no libraries, no external tools).
 * Fields are validated before use; a structure that is recognised but
 * inconsistent gives type FS_UNKNOWN and one sentence in problem.
 */
#ifndef FLASHPROBE_FSPROBE_H
#define FLASHPROBE_FSPROBE_H

#include <stdint.h>

#include "parttable.h"

enum fs_type { FS_UNKNOWN, FS_VFAT, FS_EXFAT, FS_EXT2, FS_EXT3, FS_EXT4, FS_F2FS };

/* "unknown", "vfat", "exfat", "ext2", "ext3", "ext4", "f2fs" */
const char *fsprobe_type_name(enum fs_type t);

struct fsinfo {
	enum fs_type type;
	unsigned fat_bits;		/* 12, 16 or 32 for vfat */
	uint64_t data_offset_bytes;	/* from the partition start: FAT's first
					 * cluster, exFAT's cluster heap, f2fs's
					 * main area, ext's block 0 */
	uint64_t cluster_bytes;		/* cluster, or file-system block */
	uint64_t reserved_sectors;	/* vfat */
	uint64_t stride_blocks, stripe_blocks;	/* ext: RAID hints, 0 = unset */
	uint64_t section_bytes, zone_bytes;	/* f2fs */
	const char *data_name;		/* "first data cluster", "cluster heap", ... */
	char problem[PT_LINE];		/* "" when the structures are consistent */
};

/* Look at the partition [start, start + size) of d.  0 (with FS_UNKNOWN
 * when nothing is recognised), or a negative errno on an I/O error. */
int fsprobe_read(const struct disk *d, uint64_t start, uint64_t size, struct fsinfo *fi);

/* The same on a buffer holding the partition's first bytes (fuzzers). */
void fsprobe_parse(const unsigned char *buf, size_t len, uint64_t size, struct fsinfo *fi);

#endif
