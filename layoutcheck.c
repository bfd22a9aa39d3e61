/* layoutcheck.c - judge an existing layout against the card's geometry.
 *
 * A partition whose start is off the erase block is one flaw (its data
 * area then is off too, and repartitioning fixes both); a partition that
 * starts well but whose file system puts its data off the erase block is
 * another (reformatting fixes it).  Clusters are judged against the page
 * only for FAT and exFAT, whose cluster size is a choice; ext4 and f2fs
 * blocks are 4 KiB whatever the page.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "layoutcheck.h"
#include "units.h"

#define MIB ((uint64_t)1024 * 1024)
#define BOUNCE_BYTES (1024 * 1024)
#define FAT32_MAX_CLUSTER (64 * 1024)
#define FAT32_MIN_CLUSTERS 65525

static void problem(struct check_part *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct check_part *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nproblems >= CHECK_MAX_PROBLEMS)
		return;
	va_start(ap, fmt);
	vsnprintf(p->problems[p->nproblems++], CHECK_LINE, fmt, ap);
	va_end(ap);
}

static const char *fmt(uint64_t bytes, char *buf, size_t len)
{
	return units_format_bytes(bytes, buf, len);
}

static uint64_t pow2_floor(uint64_t x)
{
	uint64_t p = 1;

	while (p <= x / 2)
		p *= 2;
	return p;
}

/* "the FAT32 first data cluster", "the ext4 block 0" ... */
static void data_label(const struct fsinfo *fs, char *out, size_t len)
{
	if (fs->type == FS_VFAT)
		snprintf(out, len, "FAT%u %s", fs->fat_bits, fs->data_name);
	else
		snprintf(out, len, "%s %s", fsprobe_type_name(fs->type), fs->data_name);
}

static void judge_start(const struct check_geometry *g, struct check_part *p)
{
	uint64_t start = p->entry.start_bytes, e = g->erase_bytes, pg = g->page_bytes;
	char s[32], eb[32], pb[32], n[32];

	p->start_aligned = !e || start % e == 0;
	/* the page only counts where erase blocks are whole pages */
	p->start_page_aligned = !pg || (e && e % pg) || start % pg == 0;
	p->in_fat_area = start < g->fat_area_bytes;
	p->misfit = !p->start_aligned || !p->start_page_aligned || p->in_fat_area;
	if (!p->start_aligned)
		problem(p, "partition %u starts at %s (sector %" PRIu64 "), not on a multiple "
			"of the %s erase block: its writes straddle the card's erase blocks, "
			"so the card copies more than is written (start it at %s)%s",
			p->entry.number, fmt(start, s, sizeof(s)), start / 512,
			fmt(e, eb, sizeof(eb)),
			fmt((start / e + 1) * e > g->fat_area_bytes ? (start / e + 1) * e :
			    (g->fat_area_bytes + e - 1) / e * e, n, sizeof(n)),
			p->start_page_aligned ? "" : "; it is not on the page either");
	if (!p->start_page_aligned && p->start_aligned)
		problem(p, "partition %u starts at %s, not on a multiple of the %s page: "
			"every page-sized write touches two pages", p->entry.number,
			fmt(start, s, sizeof(s)), fmt(pg, pb, sizeof(pb)));
	if (p->in_fat_area)
		problem(p, "partition %u starts at %s, inside the card's FAT area (the first "
			"%s), which is made for the FAT's small writes, not for a file "
			"system's data: start it at %s or later", p->entry.number,
			fmt(start, s, sizeof(s)), fmt(g->fat_area_bytes, eb, sizeof(eb)),
			fmt(g->fat_area_bytes, n, sizeof(n)));
}

/* The largest power of two that divides x. */
static uint64_t pow2_factor(uint64_t x)
{
	return x & -x;
}

/* An exFAT whose data is on the largest power of two dividing an erase
 * block that is not one (3 x 2^n): the most mkfs.exfat can do, so its own
 * command is no fix. */
static bool exfat_best_possible(const struct fsinfo *fs, uint64_t e,
				const struct check_part *p)
{
	return fs->type == FS_EXFAT && e && pow2_factor(e) != e &&
	       p->data_start_bytes % pow2_factor(e) == 0;
}

/* Where the data begins, and (FAT, exFAT) the cluster against the page. */
static void judge_filesystem(const struct check_geometry *g, struct check_part *p)
{
	const struct fsinfo *fs = &p->fs;
	uint64_t e = g->erase_bytes, pg = g->page_bytes, c = fs->cluster_bytes;
	char d[32], eb[32], cb[32], pb[32], what[64];

	if (fs->type == FS_UNKNOWN)
		return;
	p->data_start_bytes = p->entry.start_bytes + fs->data_offset_bytes;
	p->data_aligned = !e || p->data_start_bytes % e == 0;
	data_label(fs, what, sizeof(what));
	if (!p->data_aligned && p->start_aligned && exfat_best_possible(fs, e, p)) {
		problem(p, "partition %u: the %s starts at %s on the device, on the %s "
			"boundary that mkfs.exfat can align to but not on the %s erase "
			"block: mkfs.exfat accepts only powers of two, so no exFAT does "
			"better here (FAT32 or f2fs can be aligned fully)",
			p->entry.number, what, fmt(p->data_start_bytes, d, sizeof(d)),
			fmt(pow2_factor(e), cb, sizeof(cb)), fmt(e, eb, sizeof(eb)));
	} else if (!p->data_aligned && p->start_aligned) {
		p->misfit = true;
		problem(p, "partition %u: the %s starts at %s on the device, not on a "
			"multiple of the %s erase block: each erase block's worth of file "
			"data is spread over two of the card's, which the card must copy "
			"around the rest (about twice the work for large writes)%s",
			p->entry.number, what, fmt(p->data_start_bytes, d, sizeof(d)),
			fmt(e, eb, sizeof(eb)),
			pg && c < pg * 2 && p->data_start_bytes % pg ?
			", and each cluster write touches two pages: random writes cost about "
			"twice as much" : "");
	}
	if ((fs->type == FS_VFAT || fs->type == FS_EXFAT) && pg) {
		uint64_t best = pow2_floor(pg);

		if (fs->type == FS_VFAT && best > FAT32_MAX_CLUSTER)
			best = FAT32_MAX_CLUSTER;
		/* smaller clusters are right when page-sized ones would leave
		 * FAT32 too few (the advice makes that choice too) */
		if (fs->type == FS_VFAT && p->entry.size_bytes / best < FAT32_MIN_CLUSTERS)
			best = c;
		p->misfit |= c < best;
		if (c < best)
			problem(p, "partition %u: its %s clusters are smaller than the %s page: "
				"every cluster write programs a whole page, so small writes "
				"cost up to %" PRIu64 " times as much", p->entry.number,
				fmt(c, cb, sizeof(cb)), fmt(pg, pb, sizeof(pb)), best / c);
	}
	if (fs->type == FS_F2FS && e && fs->section_bytes % e) {
		p->misfit = true;
		problem(p, "partition %u: its f2fs sections of %s are not whole %s erase "
			"blocks: f2fs cleans a section at a time, so the card copies the "
			"rest of an erase block around each one", p->entry.number,
			fmt(fs->section_bytes, d, sizeof(d)), fmt(e, eb, sizeof(eb)));
	}
	if (e && fs->stripe_blocks && (fs->stripe_blocks * c) % e)
		p->misfit = true;
	if (e && fs->stripe_blocks && (fs->stripe_blocks * c) % e)
		problem(p, "partition %u: its ext stripe_width of %" PRIu64 " blocks (%s) is "
			"not a multiple of the %s erase block, so large files are placed "
			"across erase blocks", p->entry.number, fs->stripe_blocks,
			fmt(fs->stripe_blocks * c, d, sizeof(d)), fmt(e, eb, sizeof(eb)));
}

/* A FAT32 the advice cannot align (a unit the reserved sectors cannot
 * reach, a partition too small for enough clusters): say why, from the
 * advice's note, and give exFAT's line, the one it advises instead. */
static void fat32_out_of_reach(const struct advice *a, struct check_part *p)
{
	const struct advice_command *c = advice_command(a, "exfat");

	for (size_t i = 0; i < a->nnotes; i++)
		if (strncmp(a->notes[i], "FAT32", 5) == 0)
			problem(p, "partition %u: %s", p->entry.number, a->notes[i]);
	if (c != NULL && p->nfix < CHECK_MAX_FIX)
		snprintf(p->fix[p->nfix++], ADVICE_TEXT, "%s", c->line);
}

/* The commands that fix the flaws: repartition when the start is wrong,
 * else reformat. */
static void add_fix(const struct disk *d, const struct check_geometry *g,
		    struct check_part *p)
{
	static const char *const purpose[] = { NULL, "fat32", "exfat", "ext4", "ext4",
					       "ext4", "f2fs" };
	struct geometry geo;
	struct advice_request q = { p->entry.size_bytes, ADVICE_LABEL_AUTO };
	const struct advice_command *c;
	struct advice *a;

	if (!g->erase_bytes || !p->misfit)
		return;
	a = malloc(sizeof(*a));
	if (!a)
		return;
	memset(&geo, 0, sizeof(geo));
	geo.device_bytes = d->size_bytes;
	geo.sector_bytes = d->sector_bytes;
	geo.erase = (struct geo_size){ g->erase_bytes, 1.0, g->erase_source };
	geo.page = (struct geo_size){ g->page_bytes, 1.0, g->page_source };
	geo.open_linear = geo.open_random = (struct geo_count){ -1, false, 0, GEO_NONE };
	geo.fat_tested = geo.fat_found = g->fat_area_bytes > 0;
	geo.fat_size_bytes = g->fat_area_bytes;
	advice_compute_for(&geo, &q, a);
	if ((!p->start_aligned || p->in_fat_area) && (c = advice_command(a, "partition")))
		snprintf(p->fix[p->nfix++], ADVICE_TEXT, "%s", c->line);
	if ((unsigned)p->fs.type < sizeof(purpose) / sizeof(purpose[0]) && purpose[p->fs.type] &&
	    (c = advice_command(a, purpose[p->fs.type])))
		snprintf(p->fix[p->nfix++], ADVICE_TEXT, "%s", c->line);
	else if (p->fs.type == FS_VFAT)
		fat32_out_of_reach(a, p);
	free(a);
}

static int check_part(const struct disk *d, const struct check_geometry *g,
		      const struct pt_entry *e, struct check_part *p)
{
	int ret;

	memset(p, 0, sizeof(*p));
	p->entry = *e;
	if (e->problem[0])
		problem(p, "%s", e->problem);
	judge_start(g, p);
	ret = fsprobe_read(d, e->start_bytes, e->size_bytes, &p->fs);
	if (ret)
		return ret;
	if (p->fs.problem[0])
		problem(p, "partition %u: %s", e->number, p->fs.problem);
	judge_filesystem(g, p);
	add_fix(d, g, p);
	return 0;
}

/* No partition table: a file system on the whole device is partition 0;
 * a boot signature over neither is garbage worth a line. */
static int check_whole_device(const struct disk *d, const struct check_geometry *g,
			      struct check_result *r)
{
	struct pt_entry whole = { .number = 0, .start_bytes = 0, .size_bytes = d->size_bytes };
	struct fsinfo fs;
	int ret = fsprobe_read(d, 0, d->size_bytes, &fs);
	struct parttable *t = &r->table;

	if (ret)
		return ret;
	if (fs.type == FS_UNKNOWN && !fs.problem[0]) {
		if (t->boot_signature && t->nproblems < PT_MAX_PROBLEMS)
			snprintf(t->problems[t->nproblems++], PT_LINE, "sector 0 ends in the "
				 "boot signature but holds neither a valid partition table nor a "
				 "known file system");
		return 0;
	}
	t->kind = PT_NONE;	/* an empty MBR that is really a boot sector */
	r->nparts = 1;
	return check_part(d, g, &whole, &r->parts[0]);
}

int layoutcheck_run(const struct disk *d, const struct check_geometry *g,
		    struct check_result *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->device_bytes = d->size_bytes;
	r->sector_bytes = d->sector_bytes;
	r->geo = *g;
	ret = parttable_read(d, &r->table);
	if (ret)
		return ret;
	if (r->table.kind == PT_NONE || (r->table.kind == PT_DOS && !r->table.nparts))
		return check_whole_device(d, g, r);
	for (size_t i = 0; i < r->table.nparts; i++) {
		ret = check_part(d, g, &r->table.parts[i], &r->parts[r->nparts++]);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- a partition device ---- */

struct shifted {
	const struct disk *inner;
	uint64_t offset;
};

/* The partition seen at its offset on the disk, so that every position
 * the verdicts use is the disk's. */
static int shifted_read(void *arg, uint64_t off, void *buf, size_t len)
{
	const struct shifted *s = arg;

	if (off < s->offset)
		return -EINVAL;
	return disk_read(s->inner, off - s->offset, buf, len);
}

int layoutcheck_run_partition(const struct disk *d, const struct check_geometry *g,
			      uint64_t offset, unsigned number, struct check_result *r)
{
	struct shifted sh = { d, offset };
	struct disk view = { shifted_read, &sh, d->size_bytes + offset, d->sector_bytes };
	struct pt_entry e = { .number = number, .start_bytes = offset,
			      .size_bytes = d->size_bytes };

	memset(r, 0, sizeof(*r));
	r->device_bytes = d->size_bytes;
	r->sector_bytes = d->sector_bytes;
	r->geo = *g;
	r->partition_device = true;
	r->table.kind = PT_NONE;
	r->nparts = 1;
	return check_part(&view, g, &e, &r->parts[0]);
}

/* ---- reading through a flashprobe device ---- */

static int dev_read(void *arg, uint64_t off, void *buf, size_t len)
{
	struct fp_dev *dev = arg;
	uint64_t ss = fp_dev_sector_bytes(dev), size = fp_dev_size_bytes(dev);
	unsigned char *bounce = fp_dev_alloc_buf(BOUNCE_BYTES), *out = buf;
	int ret = 0;

	if (!bounce)
		return -ENOMEM;
	while (len && !ret) {
		uint64_t from = off / ss * ss, skip = off - from;
		uint64_t n = (skip + len + ss - 1) / ss * ss;

		if (n > BOUNCE_BYTES)
			n = BOUNCE_BYTES;
		if (from + n > size)
			n = size - from;
		ret = fp_dev_read_timed(dev, bounce, (size_t)n, from, NULL);
		if (!ret) {
			size_t take = (size_t)(n - skip) < len ? (size_t)(n - skip) : len;

			memcpy(out, bounce + skip, take);
			out += take;
			off += take;
			len -= take;
		}
	}
	free(bounce);
	return ret;
}

void layoutcheck_disk_of(struct fp_dev *dev, struct disk *out)
{
	out->read = dev_read;
	out->arg = dev;
	out->size_bytes = fp_dev_size_bytes(dev);
	out->sector_bytes = fp_dev_sector_bytes(dev);
}
