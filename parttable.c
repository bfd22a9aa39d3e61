/* parttable.c - MBR and GPT, parsed from the disk's own sectors.
 *
 * Every field is range-checked before it is used as an offset or a count,
 * so a damaged or hostile table costs at most a bounded number of reads:
 * at most PT_MAX_LOGICAL links of the extended chain (a link seen before
 * ends the walk), at most GPT_MAX_ENTRY_BYTES of GPT entries.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsprobe.h"
#include "parttable.h"
#include "units.h"

#define MBR_SIGNATURE 0xaa55
#define MBR_ENTRIES 446
#define MBR_PROTECTIVE 0xee
#define PT_MAX_LOGICAL 128
#define GPT_MIN_HEADER 92
#define GPT_MAX_ENTRY_BYTES (1024 * 1024)
#define GPT_MAX_SECTOR 4096

int disk_read(const struct disk *d, uint64_t off, void *buf, size_t len)
{
	if (off > d->size_bytes || len > d->size_bytes - off)
		return -ENOSPC;
	return d->read(d->arg, off, buf, len);
}

static int memory_read(void *arg, uint64_t off, void *buf, size_t len)
{
	memcpy(buf, (const unsigned char *)arg + off, len);
	return 0;
}

void disk_from_memory(struct disk *d, const void *buf, size_t len, uint32_t sector_bytes)
{
	d->read = memory_read;
	d->arg = (void *)buf;
	d->size_bytes = len;
	d->sector_bytes = sector_bytes;
}

const char *parttable_kind_name(enum pt_kind k)
{
	return k == PT_DOS ? "dos" : k == PT_GPT ? "gpt" : "none";
}

uint32_t parttable_crc32(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t c = 0xffffffffu;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static void table_problem(struct parttable *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void table_problem(struct parttable *t, const char *fmt, ...)
{
	va_list ap;

	if (t->nproblems >= PT_MAX_PROBLEMS)
		return;
	va_start(ap, fmt);
	vsnprintf(t->problems[t->nproblems++], PT_LINE, fmt, ap);
	va_end(ap);
}

static struct pt_entry *add_part(struct parttable *t, unsigned number, uint64_t start,
				 uint64_t size)
{
	struct pt_entry *e;

	if (t->nparts >= PT_MAX_PARTS) {
		if (!t->too_many)
			table_problem(t, "more than %d partitions: the rest are not checked",
				      PT_MAX_PARTS);
		t->too_many = true;
		return NULL;
	}
	e = &t->parts[t->nparts++];
	memset(e, 0, sizeof(*e));
	e->number = number;
	e->start_bytes = start;
	e->size_bytes = size;
	return e;
}

/* ---- MBR ---- */

static bool is_extended(uint8_t type)
{
	return type == 0x05 || type == 0x0f || type == 0x85;
}

/* A sector that ends in the signature and whose four entries have a valid
 * boot flag.  A FAT boot sector of a card formatted without a partition
 * table usually fails the second test (boot code lies there). */
static bool valid_mbr(const unsigned char *s)
{
	if (disk_le(s + 510, 2) != MBR_SIGNATURE)
		return false;
	for (int i = 0; i < 4; i++) {
		uint8_t flag = s[MBR_ENTRIES + 16 * i];

		if (flag != 0 && flag != 0x80)
			return false;
	}
	return true;
}

/* A FAT boot sector with a consistent BPB is the file system, whatever
 * its table area holds: mkfs.fat --mbr (its default on non-removable
 * disks) writes one entry there, partition 1 from sector 0 over the whole
 * device, for firmware that wants a table.  libblkid reads such a device
 * as a FAT without a table, and so does check: it was "partition 1 over
 * the table itself", with fix lines naming a partition node that is not
 * there. */
static bool is_fat_boot_sector(const unsigned char *s, const struct disk *d)
{
	struct fsinfo fi;

	fsprobe_parse(s, d->sector_bytes, d->size_bytes, &fi);
	return fi.type == FS_VFAT;
}

static int read_sector(const struct disk *d, uint64_t lba, unsigned char *buf)
{
	return disk_read(d, lba * d->sector_bytes, buf, d->sector_bytes);
}

/* The chain of extended boot records: each holds one logical partition
 * (relative to itself) and the link to the next (relative to the
 * extended partition). */
static int read_logical(const struct disk *d, uint64_t ext_lba, struct parttable *t)
{
	uint64_t seen[PT_MAX_LOGICAL], ebr = ext_lba, ss = d->sector_bytes;
	unsigned char s[GPT_MAX_SECTOR];
	unsigned number = 5;

	for (size_t n = 0; n < PT_MAX_LOGICAL; n++) {
		const unsigned char *e0 = s + MBR_ENTRIES, *e1 = e0 + 16;
		int ret;

		for (size_t i = 0; i < n; i++) {
			if (seen[i] == ebr) {
				table_problem(t, "the chain of logical partitions loops back to "
					      "sector %" PRIu64 ": the walk stopped there", ebr);
				return 0;
			}
		}
		seen[n] = ebr;
		ret = read_sector(d, ebr, s);
		if (ret == -ENOSPC) {
			table_problem(t, "a logical partition table at sector %" PRIu64
				      " lies past the end of the device", ebr);
			return 0;
		}
		if (ret)
			return ret;
		if (disk_le(s + 510, 2) != MBR_SIGNATURE) {
			table_problem(t, "the logical partition table at sector %" PRIu64
				      " is damaged (no signature): logical partitions from "
				      "there on are missing", ebr);
			return 0;
		}
		if (e0[4] && disk_le(e0 + 12, 4)) {
			struct pt_entry *p = add_part(t, number++, (ebr + disk_le(e0 + 8, 4)) * ss,
						      disk_le(e0 + 12, 4) * ss);

			if (p) {
				p->mbr_type = e0[4];
				p->logical = true;
			}
		}
		if (!is_extended(e1[4]) || !disk_le(e1 + 8, 4))
			return 0;
		ebr = ext_lba + disk_le(e1 + 8, 4);
	}
	table_problem(t, "more than %d logical partitions: the rest are not checked",
		      PT_MAX_LOGICAL);
	return 0;
}

static int read_gpt(const struct disk *d, struct parttable *t);

static int read_mbr(const struct disk *d, const unsigned char *s, struct parttable *t)
{
	bool extended_seen = false;
	int ret = 0;

	for (int i = 0; i < 4; i++)
		if (s[MBR_ENTRIES + 16 * i + 4] == MBR_PROTECTIVE)
			return read_gpt(d, t);
	t->kind = PT_DOS;
	for (unsigned i = 0; i < 4 && !ret; i++) {
		const unsigned char *e = s + MBR_ENTRIES + 16 * i;
		uint64_t lba = disk_le(e + 8, 4), count = disk_le(e + 12, 4);
		struct pt_entry *p;

		if (!e[4] || !count)
			continue;
		if (is_extended(e[4])) {
			if (extended_seen)
				table_problem(t, "more than one extended partition: only the "
					      "first is read");
			else
				ret = read_logical(d, lba, t);
			extended_seen = true;
			continue;
		}
		p = add_part(t, i + 1, lba * d->sector_bytes, count * d->sector_bytes);
		if (p)
			p->mbr_type = e[4];
	}
	return ret;
}

/* ---- GPT ---- */

struct gpt_header {
	uint64_t my_lba, alternate_lba, entries_lba;
	uint32_t nentries, entry_size, entries_crc;
	unsigned char disk_guid[16];
};

/* The header at lba: signature, size and CRC, and the fields that later
 * become offsets and counts within bounds.  NULL when valid, else why. */
static const char *parse_header(const struct disk *d, const unsigned char *s, uint64_t lba,
				struct gpt_header *h)
{
	unsigned char copy[GPT_MAX_SECTOR];
	uint64_t hsize = disk_le(s + 12, 4), sectors = d->size_bytes / d->sector_bytes;

	if (memcmp(s, "EFI PART", 8))
		return "no GPT signature";
	if (hsize < GPT_MIN_HEADER || hsize > d->sector_bytes)
		return "a header size out of range";
	memcpy(copy, s, hsize);
	memset(copy + 16, 0, 4);
	if (parttable_crc32(copy, hsize) != disk_le(s + 16, 4))
		return "a wrong header CRC";
	h->my_lba = disk_le(s + 24, 8);
	h->alternate_lba = disk_le(s + 32, 8);
	h->entries_lba = disk_le(s + 72, 8);
	h->nentries = (uint32_t)disk_le(s + 80, 4);
	h->entry_size = (uint32_t)disk_le(s + 84, 4);
	h->entries_crc = (uint32_t)disk_le(s + 88, 4);
	memcpy(h->disk_guid, s + 56, 16);
	if (h->my_lba != lba)
		return "a header that names another sector as its own";
	if (h->entry_size < 128 || h->entry_size % 8 ||
	    (uint64_t)h->nentries * h->entry_size > GPT_MAX_ENTRY_BYTES)
		return "an entry array of impossible size";
	if (h->entries_lba >= sectors)
		return "an entry array past the end of the device";
	return NULL;
}

/* The entry array a valid header describes, checked against its CRC. */
static int read_entries(const struct disk *d, const struct gpt_header *h,
			unsigned char **out, const char **why)
{
	size_t len = (size_t)h->nentries * h->entry_size;
	unsigned char *buf = malloc(len ? len : 1);
	int ret;

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	ret = disk_read(d, h->entries_lba * d->sector_bytes, buf, len);
	if (ret == -ENOSPC || (!ret && parttable_crc32(buf, len) != h->entries_crc)) {
		*why = ret ? "an entry array past the end of the device" : "a wrong entry-array CRC";
		free(buf);
		return 0;
	}
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

static void format_guid(const unsigned char *g, char *out, size_t len)
{
	snprintf(out, len, "%08" PRIX64 "-%04" PRIX64 "-%04" PRIX64
		 "-%02X%02X-%02X%02X%02X%02X%02X%02X", disk_le(g, 4), disk_le(g + 4, 2),
		 disk_le(g + 6, 2),
		 g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

static void add_gpt_entries(const struct disk *d, const struct gpt_header *h,
			    const unsigned char *entries, struct parttable *t)
{
	static const unsigned char unused[16];

	for (uint32_t i = 0; i < h->nentries; i++) {
		const unsigned char *e = entries + (size_t)i * h->entry_size;
		uint64_t first = disk_le(e + 32, 8), last = disk_le(e + 40, 8);
		struct pt_entry *p;

		if (!memcmp(e, unused, 16))
			continue;
		if (last < first || last - first >= UINT64_MAX / d->sector_bytes ||
		    first >= UINT64_MAX / d->sector_bytes) {
			table_problem(t, "GPT entry %u ends before it starts (sectors %" PRIu64
				      " to %" PRIu64 "): skipped", i + 1, first, last);
			continue;
		}
		p = add_part(t, i + 1, first * d->sector_bytes,
			     (last - first + 1) * d->sector_bytes);
		if (p)
			format_guid(e, p->gpt_type, sizeof(p->gpt_type));
	}
}

/* Read one header with its entries; why says what was wrong. */
static int read_gpt_copy(const struct disk *d, uint64_t lba, struct gpt_header *h,
			 unsigned char **entries, const char **why)
{
	unsigned char s[GPT_MAX_SECTOR];
	int ret = read_sector(d, lba, s);

	*entries = NULL;
	*why = NULL;
	if (ret == -ENOSPC) {
		*why = "a header past the end of the device";
		return 0;
	}
	if (ret)
		return ret;
	*why = parse_header(d, s, lba, h);
	if (*why)
		return 0;
	return read_entries(d, h, entries, why);
}

static bool same_table(const struct gpt_header *a, const struct gpt_header *b)
{
	return !memcmp(a->disk_guid, b->disk_guid, 16) && a->nentries == b->nentries &&
	       a->entry_size == b->entry_size && a->entries_crc == b->entries_crc &&
	       a->alternate_lba == b->my_lba;
}

static int read_gpt(const struct disk *d, struct parttable *t)
{
	uint64_t last = d->size_bytes / d->sector_bytes - 1;
	struct gpt_header h1, h2;
	unsigned char *e1 = NULL, *e2 = NULL;
	const char *why1, *why2;
	int ret;

	t->kind = PT_GPT;
	ret = read_gpt_copy(d, 1, &h1, &e1, &why1);
	if (!ret)
		ret = read_gpt_copy(d, e1 && h1.alternate_lba <= last ? h1.alternate_lba : last,
				    &h2, &e2, &why2);
	if (ret)
		goto out;
	if (e1 && !e2)
		table_problem(t, "the backup GPT at the end of the device has %s: a damaged "
			      "primary could not be recovered from it", why2);
	else if (e1 && !same_table(&h1, &h2))
		table_problem(t, "the backup GPT header differs from the primary one");
	if (!e1 && e2)
		table_problem(t, "the primary GPT has %s: the backup at the end of the "
			      "device was used", why1);
	if (!e1 && !e2)
		table_problem(t, "the protective MBR announces a GPT, but the primary has %s "
			      "and the backup %s: no partitions could be read", why1, why2);
	if (e1)
		add_gpt_entries(d, &h1, e1, t);
	else if (e2)
		add_gpt_entries(d, &h2, e2, t);
out:
	free(e1);
	free(e2);
	return ret;
}

/* ---- what applies to both ---- */

static void check_bounds(const struct disk *d, struct parttable *t)
{
	/* the MBR's sector, and GPT's header after it */
	uint64_t table_end = (t->kind == PT_GPT ? 2 : 1) * (uint64_t)d->sector_bytes;
	char end[32], size[32];

	for (size_t i = 0; i < t->nparts; i++) {
		struct pt_entry *p = &t->parts[i];

		if (p->start_bytes < table_end)
			snprintf(p->problem, PT_LINE, "partition %u starts at sector %llu, over "
				 "the partition table itself: writing it destroys the table",
				 p->number, (unsigned long long)(p->start_bytes / d->sector_bytes));
		else if (p->start_bytes + p->size_bytes > d->size_bytes ||
		    p->start_bytes + p->size_bytes < p->start_bytes)
			snprintf(p->problem, PT_LINE, "partition %u ends at %s, past the end of "
				 "the device (%s): it is truncated", p->number,
				 units_format_bytes(p->start_bytes + p->size_bytes, end, sizeof(end)),
				 units_format_bytes(d->size_bytes, size, sizeof(size)));
		for (size_t j = 0; j < i && !p->problem[0]; j++) {
			const struct pt_entry *q = &t->parts[j];

			if (p->start_bytes < q->start_bytes + q->size_bytes &&
			    q->start_bytes < p->start_bytes + p->size_bytes)
				snprintf(p->problem, PT_LINE, "partition %u overlaps partition %u: "
					 "writing one destroys the other", p->number, q->number);
		}
	}
}

int parttable_read(const struct disk *d, struct parttable *t)
{
	unsigned char s[GPT_MAX_SECTOR];
	int ret;

	memset(t, 0, sizeof(*t));
	if (d->sector_bytes < 512 || d->sector_bytes > GPT_MAX_SECTOR ||
	    d->size_bytes < d->sector_bytes)
		return 0;
	ret = read_sector(d, 0, s);
	if (ret)
		return ret == -ENOSPC ? 0 : ret;
	t->boot_signature = disk_le(s + 510, 2) == MBR_SIGNATURE;
	if (!valid_mbr(s) || is_fat_boot_sector(s, d))
		return 0;
	ret = read_mbr(d, s, t);
	if (!ret)
		check_bounds(d, t);
	return ret;
}
