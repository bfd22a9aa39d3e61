/* fsprobe.c - FAT, exFAT, ext2/3/4 and f2fs from their first sectors.
 *
 * Layouts: Microsoft's FAT specification (BPB at byte 11 of the boot
 * sector), the exFAT specification (main boot sector fields from byte
 * 64), the ext2/3/4 superblock at byte 1024 (s_magic at 56,
 * s_raid_stride at 0x164, s_raid_stripe_width at 0x170), and the f2fs
 * superblock at byte 1024 (fields as in f2fs_fs.h).  ext and f2fs are
 * tried first: mkfs.ext4 and mkfs.f2fs leave an old boot sector's bytes
 * where they do not need them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fsprobe.h"
#include "units.h"

#define PROBE_BYTES 8192u
#define SB_OFFSET 1024u
#define EXT_MAGIC 0xef53
#define F2FS_MAGIC 0xf2f52010u
#define F2FS_BLOCK_LOG 12
#define F2FS_SEGMENT_LOG 9		/* 512 blocks of 4 KiB */
#define FAT12_MAX_CLUSTERS 4085u

const char *fsprobe_type_name(enum fs_type t)
{
	static const char *const names[] = { "unknown", "vfat", "exfat", "ext2", "ext3",
					     "ext4", "f2fs" };

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

static bool pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static void inconsistent(struct fsinfo *fi, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A recognised but inconsistent structure: say what is wrong, trust none
 * of it. */
static void inconsistent(struct fsinfo *fi, const char *what, const char *fmt, ...)
{
	char why[PT_LINE / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	memset(fi, 0, sizeof(*fi));
	fi->type = FS_UNKNOWN;
	snprintf(fi->problem, PT_LINE, "its %s is damaged (%s): the file system is not checked",
		 what, why);
}

/* The size the file system claims against its partition's. */
static bool fits(struct fsinfo *fi, const char *what, uint64_t fs_bytes, uint64_t size)
{
	char a[32], b[32];

	if (fs_bytes <= size)
		return true;
	inconsistent(fi, what, "it claims %s, the partition holds %s",
		     units_format_bytes(fs_bytes, a, sizeof(a)),
		     units_format_bytes(size, b, sizeof(b)));
	return false;
}

/* ---- ext2/3/4 ---- */

#define EXT_COMPAT_JOURNAL 0x4u
#define EXT_INCOMPAT_EXT4 (0x40u | 0x80u | 0x200u)		/* extents, 64bit, flex_bg */
#define EXT_RO_COMPAT_EXT4 (0x8u | 0x10u | 0x20u | 0x40u | 0x400u)
#define EXT_INCOMPAT_64BIT 0x80u

static bool parse_ext(const unsigned char *b, uint64_t size, struct fsinfo *fi)
{
	const unsigned char *sb = b + SB_OFFSET;
	uint64_t log = disk_le(sb + 24, 4), incompat = disk_le(sb + 96, 4), blocks;

	if (disk_le(sb + 56, 2) != EXT_MAGIC)
		return false;
	if (log > 6) {
		inconsistent(fi, "ext superblock", "block size 2^%" PRIu64 " KiB", log);
		return true;
	}
	fi->cluster_bytes = 1024ULL << log;
	blocks = disk_le(sb + 4, 4);
	if (incompat & EXT_INCOMPAT_64BIT)
		blocks |= disk_le(sb + 0x150, 4) << 32;
	if (!blocks) {
		inconsistent(fi, "ext superblock", "no blocks");
		return true;
	}
	if (!fits(fi, "ext superblock", blocks * fi->cluster_bytes, size))
		return true;
	fi->type = (incompat & EXT_INCOMPAT_EXT4) || (disk_le(sb + 100, 4) & EXT_RO_COMPAT_EXT4) ?
		   FS_EXT4 : disk_le(sb + 92, 4) & EXT_COMPAT_JOURNAL ? FS_EXT3 : FS_EXT2;
	fi->stride_blocks = disk_le(sb + 0x164, 2);
	fi->stripe_blocks = disk_le(sb + 0x170, 4);
	fi->data_offset_bytes = 0;
	fi->data_name = "block 0";
	return true;
}

/* ---- f2fs ---- */

static bool parse_f2fs(const unsigned char *b, uint64_t size, struct fsinfo *fi)
{
	const unsigned char *sb = b + SB_OFFSET;
	uint64_t segs = disk_le(sb + 24, 4), secs = disk_le(sb + 28, 4);
	uint64_t seg0 = disk_le(sb + 72, 4), main_blk = disk_le(sb + 92, 4);

	if (disk_le(sb, 4) != F2FS_MAGIC)
		return false;
	if (disk_le(sb + 16, 4) != F2FS_BLOCK_LOG || disk_le(sb + 20, 4) != F2FS_SEGMENT_LOG) {
		inconsistent(fi, "f2fs superblock", "block or segment size not 4KiB/2MiB");
		return true;
	}
	if (!segs || !secs || segs > 65536 || secs > 65536) {
		inconsistent(fi, "f2fs superblock", "%" PRIu64 " segments per section, %" PRIu64
			     " sections per zone", segs, secs);
		return true;
	}
	if (main_blk < seg0 || main_blk << F2FS_BLOCK_LOG >= size) {
		inconsistent(fi, "f2fs superblock", "the main area at block %" PRIu64
			     " is outside the partition", main_blk);
		return true;
	}
	if (!fits(fi, "f2fs superblock", disk_le(sb + 36, 8) << F2FS_BLOCK_LOG, size))
		return true;
	fi->type = FS_F2FS;
	fi->cluster_bytes = 1u << F2FS_BLOCK_LOG;
	fi->section_bytes = segs << (F2FS_BLOCK_LOG + F2FS_SEGMENT_LOG);
	fi->zone_bytes = fi->section_bytes * secs;
	fi->data_offset_bytes = main_blk << F2FS_BLOCK_LOG;
	fi->data_name = "main area";
	return true;
}

/* ---- exFAT ---- */

/* The boot region's checksum (exFAT's specification: sectors 0-10 but
 * the volume flags and percent in use, one rotating 32-bit sum) against
 * the value sector 11 repeats; true when it cannot be read here (sectors
 * too large for what was read). */
static bool exfat_checksum_ok(const unsigned char *b, uint64_t bps, uint64_t size)
{
	uint64_t sector = 1ULL << bps;
	uint32_t sum = 0;

	if (12 * sector > PROBE_BYTES || 12 * sector > size)
		return true;
	for (uint64_t i = 0; i < 11 * sector; i++)
		if (i != 106 && i != 107 && i != 112)
			sum = ((sum & 1) ? 0x80000000u : 0) + (sum >> 1) + b[i];
	return disk_le(b + 11 * sector, 4) == sum;
}

static bool parse_exfat(const unsigned char *b, uint64_t size, struct fsinfo *fi)
{
	uint64_t bpss = b[108], spcs = b[109], volume = disk_le(b + 72, 8);
	uint64_t fat = disk_le(b + 80, 4), fat_len = disk_le(b + 84, 4), heap = disk_le(b + 88, 4);

	if (memcmp(b + 3, "EXFAT   ", 8))
		return false;
	if (bpss < 9 || bpss > 12 || bpss + spcs > 25) {
		inconsistent(fi, "exFAT boot sector", "sector shift %" PRIu64 ", cluster shift %"
			     PRIu64, bpss, spcs);
		return true;
	}
	if (heap < fat + fat_len || heap >= volume) {
		inconsistent(fi, "exFAT boot sector", "the cluster heap at sector %" PRIu64
			     " is not after the FAT and inside the volume", heap);
		return true;
	}
	if (!fits(fi, "exFAT boot sector", volume << bpss, size))
		return true;
	fi->type = FS_EXFAT;
	fi->cluster_bytes = 1ULL << (bpss + spcs);
	fi->data_offset_bytes = heap << bpss;
	fi->data_name = "cluster heap";
	if (!exfat_checksum_ok(b, bpss, size))
		snprintf(fi->problem, PT_LINE, "its exFAT boot region does not match its "
			 "checksum: fsck.exfat calls it corrupted, and systems may refuse to "
			 "mount it (the backup boot region at sector 12 may still be whole)");
	return true;
}

/* ---- FAT12/16/32 ---- */

/* The jump instruction and the signature every FAT boot sector has. */
static bool looks_like_fat(const unsigned char *b)
{
	return (b[0] == 0xeb || b[0] == 0xe9) && disk_le(b + 510, 2) == 0xaa55 &&
	       (!memcmp(b + 54, "FAT", 3) || !memcmp(b + 82, "FAT", 3) || disk_le(b + 11, 2) == 512);
}

static bool parse_fat(const unsigned char *b, uint64_t size, struct fsinfo *fi)
{
	uint64_t bps = disk_le(b + 11, 2), spc = b[13], reserved = disk_le(b + 14, 2), nfats = b[16];
	uint64_t root = disk_le(b + 17, 2), total = disk_le(b + 19, 2), fatsz = disk_le(b + 22, 2);
	uint64_t start, clusters;
	bool fat32 = !fatsz;	/* FAT32's length is in its own field */

	if (!looks_like_fat(b))
		return false;
	if (!total)
		total = disk_le(b + 32, 4);
	if (fat32)
		fatsz = disk_le(b + 36, 4);
	if (!pow2(bps) || bps < 512 || bps > 4096 || !pow2(spc) || spc > 128 || !reserved ||
	    !nfats || nfats > 4 || !fatsz || !total) {
		inconsistent(fi, "FAT boot sector", "%" PRIu64 "-byte sectors, %" PRIu64
			     " per cluster, %" PRIu64 " reserved, %" PRIu64 " FATs", bps, spc,
			     reserved, nfats);
		return true;
	}
	start = reserved + nfats * fatsz + (root * 32 + bps - 1) / bps;
	if (start >= total) {
		inconsistent(fi, "FAT boot sector", "the data area starts after the volume ends");
		return true;
	}
	if (!fits(fi, "FAT boot sector", total * bps, size))
		return true;
	clusters = (total - start) / spc;
	fi->type = FS_VFAT;
	/* what it was made as, as Linux reads it: a FAT32 with fewer than
	 * 65525 clusters is still one (mkfs.fat -F 32 makes them) */
	fi->fat_bits = fat32 ? 32 : clusters < FAT12_MAX_CLUSTERS ? 12 : 16;
	fi->cluster_bytes = spc * bps;
	fi->reserved_sectors = reserved;
	fi->data_offset_bytes = start * bps;
	fi->data_name = "first data cluster";
	return true;
}

void fsprobe_parse(const unsigned char *buf, size_t len, uint64_t size, struct fsinfo *fi)
{
	unsigned char b[PROBE_BYTES];

	memset(fi, 0, sizeof(*fi));
	memset(b, 0, sizeof(b));
	memcpy(b, buf, len < sizeof(b) ? len : sizeof(b));
	if (parse_ext(b, size, fi) || parse_f2fs(b, size, fi) || parse_exfat(b, size, fi) ||
	    parse_fat(b, size, fi))
		return;
	fi->type = FS_UNKNOWN;
	fi->data_name = "";
}

int fsprobe_read(const struct disk *d, uint64_t start, uint64_t size, struct fsinfo *fi)
{
	unsigned char b[PROBE_BYTES] = { 0 };
	uint64_t len = size < sizeof(b) ? size : sizeof(b);
	int ret;

	memset(fi, 0, sizeof(*fi));
	fi->data_name = "";
	if (start >= d->size_bytes) {
		snprintf(fi->problem, PT_LINE, "it starts past the end of the device: "
			 "nothing to read");
		return 0;
	}
	if (len > d->size_bytes - start)
		len = d->size_bytes - start;
	ret = disk_read(d, start, b, (size_t)len);
	if (ret)
		return ret;
	fsprobe_parse(b, (size_t)len, size, fi);
	return 0;
}
