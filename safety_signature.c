/* safety_signature.c - signatures of existing data: whether a target
 * holds a file system, a RAID or LVM member, swap, an encrypted volume,
 * so that a writing test asks before it overwrites them.
 */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "safety.h"

/* ---- signatures of existing data ---- */

/* Enough for the deepest signature below (btrfs at 64 KiB + 64). */
#define SIG_READ_BYTES (68u * 1024u)
/* The end of the device: md 0.90 keeps its superblock in the last 64 KiB
 * aligned block (up to 128 KiB from the end), md 1.0 8 KiB from it, GPT
 * its backup header in the last sector. */
#define SIG_END_BYTES (128u * 1024u)
#define MD_MAGIC "\xfc\x4e\x2b\xa9"		/* 0xa92b4efc, little-endian */
/* Blank-card sampling for --destructive: the first and last MiB whole,
 * and blocks spread over the rest. */
#define BLANK_EDGE_BYTES (1024u * 1024u)
#define BLANK_SAMPLE_BYTES 4096u
#define BLANK_SAMPLES 64u

static const struct signature {
	uint32_t off;
	uint32_t len;
	const char *magic;
	const char *name;
} signatures[] = {
	{ 0x10040, 8, "_BHRfS_M", "btrfs file system" },
	{ 0x438, 2, "\x53\xef", "ext2/3/4 file system" },
	{ 0x400, 4, "\x10\x20\xf5\xf2", "F2FS file system" },
	{ 0, 4, "XFSB", "XFS file system" },
	{ 0, 6, "LUKS\xba\xbe", "LUKS encrypted volume" },
	{ 0x1000, 4, MD_MAGIC, "Linux RAID (md) member" },
	{ 0, 4, MD_MAGIC, "Linux RAID (md) member" },
	{ 0, 4, "hsqs", "squashfs file system" },
	{ 0, 4, "sqsh", "squashfs file system" },
	{ 0x400, 4, "\xe2\xe1\xf5\xe0", "EROFS file system" },
	{ 0x400, 4, "H+\0\x04", "HFS+ file system" },
	{ 0x400, 4, "HX\0\x05", "HFS+ file system" },
	{ 32, 4, "NXSB", "APFS container" },
	{ 0x8000, 4, "JFS1", "JFS file system" },
	{ 0x10034, 8, "ReIsEr2F", "ReiserFS file system" },
	{ 0x10034, 8, "ReIsEr3F", "ReiserFS file system" },
	{ 0x1018, 16, "\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81",
	  "bcache member" },
	{ 3, 8, "-FVE-FS-", "BitLocker encrypted volume" },
	{ 0, 8, "verity\0\0", "dm-verity hash device" },
	{ 0x218, 8, "LVM2 001", "LVM2 physical volume" },
	/* swap: the last 10 bytes of the first page, for 4/8/16/64 KiB pages */
	{ 0xff6, 10, "SWAPSPACE2", "Linux swap" },
	{ 0x1ff6, 10, "SWAPSPACE2", "Linux swap" },
	{ 0x3ff6, 10, "SWAPSPACE2", "Linux swap" },
	{ 0xfff6, 10, "SWAPSPACE2", "Linux swap" },
	{ 0xff6, 10, "SWAP-SPACE", "Linux swap" },
	{ 0x8001, 5, "CD001", "ISO 9660 file system" },
	{ 3, 8, "NTFS    ", "NTFS file system" },
	{ 3, 8, "EXFAT   ", "exFAT file system" },
	/* GPT header in LBA 1, for 512- and 4096-byte sectors; before the
	 * MBR, which a GPT disk carries too (the protective MBR). */
	{ 0x200, 8, "EFI PART", "GPT partition table" },
	{ 0x1000, 8, "EFI PART", "GPT partition table" },
};

static bool sig_at(const unsigned char *buf, size_t n, uint32_t off,
		   uint32_t len, const char *magic)
{
	return (size_t)off + len <= n && memcmp(buf + off, magic, len) == 0;
}

/* FAT boot sectors and MBRs both end in 55 AA; a FAT boot sector also
 * names its type in the BPB (offset 0x36 for FAT12/16, 0x52 for FAT32). */
static const char *sig_boot_sector(const unsigned char *buf, size_t n)
{
	if (!sig_at(buf, n, 0x1fe, 2, "\x55\xaa"))
		return NULL;
	if (sig_at(buf, n, 0x36, 3, "FAT") || sig_at(buf, n, 0x52, 5, "FAT32"))
		return "FAT file system";
	return "MBR partition table";
}

static const char *sig_match(const unsigned char *buf, size_t n)
{
	for (size_t i = 0; i < sizeof(signatures) / sizeof(signatures[0]);
	     i++) {
		const struct signature *s = &signatures[i];

		if (sig_at(buf, n, s->off, s->len, s->magic))
			return s->name;
	}
	return sig_boot_sector(buf, n);
}

/* Whether the magic is at byte pos of the device, in buf, which holds
 * the device's bytes from from on. */
static bool sig_at_pos(const unsigned char *buf, size_t n, uint64_t from, uint64_t pos,
		       const char *magic, uint32_t len)
{
	return pos >= from && pos - from <= n && sig_at(buf, n, (uint32_t)(pos - from), len,
							 magic);
}

/* What the end of a device of size bytes shows, buf holding its last
 * n bytes: md 0.90 and 1.0 superblocks, a GPT's backup header. */
static const char *sig_match_end(const unsigned char *buf, size_t n, uint64_t size)
{
	uint64_t from = size - n;

	if (size >= 2 * 65536 && sig_at_pos(buf, n, from, (size & ~65535ULL) - 65536,
					    MD_MAGIC, 4))
		return "Linux RAID (md 0.90) member";
	if (size >= 16 * 512 && sig_at_pos(buf, n, from, ((size / 512 - 16) & ~7ULL) * 512,
					   MD_MAGIC, 4))
		return "Linux RAID (md 1.0) member";
	if (sig_at_pos(buf, n, from, size - 512, "EFI PART", 8) ||
	    sig_at_pos(buf, n, from, size - 4096, "EFI PART", 8))
		return "GPT partition table (backup header)";
	return NULL;
}

/* Reads n bytes (whole sectors) at off into a new buffer. */
static int read_block(struct fp_dev *d, uint64_t off, size_t n, unsigned char **out)
{
	unsigned char *buf = fp_dev_alloc_buf(n);
	int rc;

	*out = NULL;
	if (buf == NULL)
		return -ENOMEM;
	rc = fp_dev_read_timed(d, buf, n, off, NULL);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	return 0;
}

static int found(const char *name, char *what, size_t whatlen)
{
	if (name == NULL)
		return 0;
	if (what != NULL && whatlen > 0)
		snprintf(what, whatlen, "%s", name);
	return 1;
}

int safety_find_signature(struct fp_dev *d, char *what, size_t whatlen)
{
	uint64_t size = fp_dev_size_bytes(d), ss = fp_dev_sector_bytes(d), end;
	size_t n = SIG_READ_BYTES;
	const char *name;
	unsigned char *buf;
	int rc;

	if (what != NULL && whatlen > 0)
		what[0] = '\0';
	if (size < n)
		n = (size_t)size;
	n -= n % ss;
	if (n == 0)
		return 0;
	rc = read_block(d, 0, n, &buf);
	if (rc < 0)
		return rc;
	name = sig_match(buf, n);
	free(buf);
	if (name != NULL || size <= SIG_READ_BYTES)
		return found(name, what, whatlen);
	n = size < SIG_END_BYTES ? (size_t)size : SIG_END_BYTES;
	n -= n % ss;
	end = size / ss * ss;	/* the last whole sector's end */
	rc = read_block(d, end - n, n, &buf);
	if (rc < 0)
		return rc;
	name = sig_match_end(buf, n, end);
	free(buf);
	return found(name, what, whatlen);
}

/* A sample is blank when every byte is the erased value, 0x00 or 0xff. */
static bool blank(const unsigned char *buf, size_t n)
{
	if (n == 0)
		return true;
	if (buf[0] != 0x00 && buf[0] != 0xff)
		return false;
	return memcmp(buf, buf + 1, n - 1) == 0;	/* every byte as the first */
}

/* The sample at off of n bytes: 1 when it holds data, 0 blank, or a
 * negative errno. */
static int sample_holds_data(struct fp_dev *d, uint64_t off, size_t n)
{
	unsigned char *buf;
	int rc = read_block(d, off, n, &buf);

	if (rc < 0)
		return rc;
	rc = !blank(buf, n);
	free(buf);
	return rc;
}

int safety_find_nonblank(struct fp_dev *d, char *what, size_t whatlen)
{
	uint64_t size = fp_dev_size_bytes(d), ss = fp_dev_sector_bytes(d);
	uint64_t edge = size < 2 * BLANK_EDGE_BYTES ? size / 2 / ss * ss : BLANK_EDGE_BYTES;
	uint64_t step = size / BLANK_SAMPLES / ss * ss;
	size_t sample = BLANK_SAMPLE_BYTES < ss ? (size_t)ss : BLANK_SAMPLE_BYTES;
	int rc = 0;

	if (what != NULL && whatlen > 0)
		what[0] = '\0';
	if (edge > 0)
		rc = sample_holds_data(d, 0, (size_t)edge);
	if (rc == 0 && edge > 0)	/* the last whole sectors */
		rc = sample_holds_data(d, size / ss * ss - edge, (size_t)edge);
	for (uint64_t i = 1; rc == 0 && step >= sample && i < BLANK_SAMPLES; i++)
		rc = sample_holds_data(d, i * step, sample);
	if (rc > 0)
		return found("non-erased content without a known signature", what, whatlen);
	return rc;
}
