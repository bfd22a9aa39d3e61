/* parttable.h - the partition table of a disk, read from the disk itself.
 *
 * MBR (with the extended partition's chain of logical partitions, loops
 * cut) and GPT (header and entry-array CRCs checked, the backup header
 * compared).  Everything odd becomes one sentence in problems; nothing
 * here prints, and malformed input never makes it fail: only an I/O error
 * does.
 */
#ifndef FLASHPROBE_PARTTABLE_H
#define FLASHPROBE_PARTTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the parsers read from: len bytes at off (any alignment).  0, or
 * -ENOSPC past the end, or another negative errno. */
struct disk {
	int (*read)(void *arg, uint64_t off, void *buf, size_t len);
	void *arg;
	uint64_t size_bytes;
	uint32_t sector_bytes;
};

/* Read exactly len bytes at off through d (range checked). */
int disk_read(const struct disk *d, uint64_t off, void *buf, size_t len);

/* The little-endian number of n bytes at p (on-disk fields). */
static inline uint64_t disk_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A disk over a memory buffer (tests and fuzzers). */
void disk_from_memory(struct disk *d, const void *buf, size_t len, uint32_t sector_bytes);

#define PT_MAX_PARTS 64
#define PT_MAX_PROBLEMS 16
#define PT_LINE 200

enum pt_kind { PT_NONE, PT_DOS, PT_GPT };

struct pt_entry {
	unsigned number;		/* 1-4 primary, 5... logical; GPT: slot + 1 */
	uint64_t start_bytes, size_bytes;
	uint8_t mbr_type;		/* 0 for GPT */
	char gpt_type[40];		/* "" for MBR */
	bool logical;
	char problem[PT_LINE];		/* past the end, overlaps: "" when none */
};

struct parttable {
	enum pt_kind kind;
	bool boot_signature;		/* sector 0 ends in 55 AA (table or boot sector) */
	struct pt_entry parts[PT_MAX_PARTS];
	size_t nparts;
	bool too_many;			/* more than PT_MAX_PARTS: said once */
	char problems[PT_MAX_PROBLEMS][PT_LINE];	/* about the table itself */
	size_t nproblems;
};

const char *parttable_kind_name(enum pt_kind k);	/* "dos", "gpt", "none" */

/* Read the table.  0 (whatever was found, problems included), or a
 * negative errno when the disk could not be read. */
int parttable_read(const struct disk *d, struct parttable *t);

/* CRC-32 (IEEE 802.3, as GPT uses it). */
uint32_t parttable_crc32(const void *buf, size_t len);

#endif
