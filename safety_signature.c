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
	{ 0x1000, 4, "\xfc\x4e\x2b\xa9", "Linux RAID (md) member" },
	{ 0, 4, "\xfc\x4e\x2b\xa9", "Linux RAID (md) member" },
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

int safety_find_signature(struct fp_dev *d, char *what, size_t whatlen)
{
	uint64_t size = fp_dev_size_bytes(d);
	size_t n = SIG_READ_BYTES;
	const char *name;
	unsigned char *buf;
	int rc;

	if (what != NULL && whatlen > 0)
		what[0] = '\0';
	if (size < n)
		n = (size_t)size;
	n -= n % fp_dev_sector_bytes(d);
	if (n == 0)
		return 0;
	buf = fp_dev_alloc_buf(n);
	if (buf == NULL)
		return -ENOMEM;
	rc = fp_dev_read_timed(d, buf, n, 0, NULL);
	name = rc == 0 ? sig_match(buf, n) : NULL;
	free(buf);
	if (rc < 0)
		return rc;
	if (name == NULL)
		return 0;
	if (what != NULL && whatlen > 0)
		snprintf(what, whatlen, "%s", name);
	return 1;
}
