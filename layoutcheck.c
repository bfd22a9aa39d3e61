/* layoutcheck.c - judge an existing layout against the card's geometry.
 *
 * What the card sees is where the file system puts its data.  A partition
 * whose start is off the erase block is a flaw when its data area is off
 * too (repartitioning fixes both); a start off the erase block under a
 * data area that is on it (mkfs.exfat aligns to the device, a FAT's
 * reserved sectors can be chosen so, as card factories do) is not.  A
 * partition that starts well but whose file system puts its data off the
 * erase block is another flaw (reformatting fixes it).  Clusters are judged against the page
 * only for FAT and exFAT, whose cluster size is a choice; ext4 and f2fs
 * blocks are 4 KiB whatever the page.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dev.h"
#include "layoutcheck.h"
#include "units.h"
#include "util.h"

#define MIB ((uint64_t)1024 * 1024)
#define BOUNCE_BYTES (1024 * 1024)
#define FAT32_MAX_CLUSTER (64 * 1024)
#define EXT_BLOCK 4096u		/* the advice's mkfs.ext4 -b */

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

/* An exFAT on an erase block that is not a power of two (3 x 2^n):
 * mkfs.exfat's --boundary-align takes only powers of two, counted from
 * the device's start, so its heap lands on the unit only from some
 * partition starts, which are off the unit (the advice finds one). */
static bool exfat_on_odd_unit(const struct check_geometry *g, const struct check_part *p)
{
	return p->fs.type == FS_EXFAT && g->erase_bytes &&
	       util_pow2_factor(g->erase_bytes) != g->erase_bytes;
}

/* The start against the erase block, the page and the FAT area. */
static void place_start(const struct check_geometry *g, struct check_part *p)
{
	uint64_t start = p->entry.start_bytes, e = g->erase_bytes, pg = g->page_bytes;

	p->start_aligned = !e || start % e == 0;
	/* the page only counts where erase blocks are whole pages */
	p->start_page_aligned = !pg || (e && e % pg) || start % pg == 0;
	p->in_fat_area = start < g->fat_area_bytes;
}

/* A start off the erase block (or the page) under a file system whose
 * data begins on it: the card only sees the data area aligned. */
static bool data_makes_start_harmless(const struct check_geometry *g,
				      const struct check_part *p)
{
	uint64_t unit = g->erase_bytes ? g->erase_bytes : g->page_bytes;

	return p->fs.type != FS_UNKNOWN && unit && p->data_start_bytes % unit == 0;
}

/* Where to start instead: a sole partition where the advice (and so the
 * fix) puts it, after the FAT area and at least 1 MiB in; one among
 * others on the next multiple past it (or past the FAT area). */
static uint64_t better_start(const struct check_geometry *g, const struct check_part *p,
			     bool sole)
{
	uint64_t e = g->erase_bytes, fat_end = util_round_up(g->fat_area_bytes, e);

	if (sole)
		return util_round_up(fat_end > MIB ? fat_end : MIB, e);
	return (p->entry.start_bytes / e + 1) * e > fat_end ?
	       (p->entry.start_bytes / e + 1) * e : fat_end;
}

/* After the file system was read: the start's flaws, unless the data
 * area makes them harmless. */
static void judge_start(const struct check_geometry *g, uint32_t sector, bool sole,
			struct check_part *p)
{
	uint64_t start = p->entry.start_bytes, e = g->erase_bytes, pg = g->page_bytes;
	uint64_t to = e ? better_start(g, p, sole) : 0;	/* no erase size: no verdict */
	char s[32], eb[32], pb[32], n[32], hint[192];

	if (exfat_on_odd_unit(g, p))	/* its start is off the unit */
		snprintf(hint, sizeof(hint), "for exFAT, only some starts off the unit "
			 "put its cluster heap on the unit: mkfs.exfat counts its boundary "
			 "from the device's start");
	else
		snprintf(hint, sizeof(hint), "start it at %s, sector %" PRIu64,
			 fmt(to, n, sizeof(n)), to / sector);
	p->start_harmless = (!p->start_aligned || !p->start_page_aligned) &&
			    data_makes_start_harmless(g, p);
	p->misfit = ((!p->start_aligned || !p->start_page_aligned) &&
		     !p->start_harmless) || p->in_fat_area;
	/* the sector too: "1.58GiB" may read the same as where it starts */
	if (!p->start_aligned && !p->start_harmless)
		problem(p, "%s starts at %s (sector %" PRIu64 "), not on a multiple "
			"of the %s erase block: its writes straddle the card's erase blocks, "
			"so the card copies more than is written (%s)%s", p->name,
			fmt(start, s, sizeof(s)), start / sector, fmt(e, eb, sizeof(eb)), hint,
			p->start_page_aligned ? "" : "; it is not on the page either");
	if (!p->start_page_aligned && p->start_aligned && !p->start_harmless)
		problem(p, "%s starts at %s, not on a multiple of the %s page: "
			"every page-sized write touches two pages", p->name,
			fmt(start, s, sizeof(s)), fmt(pg, pb, sizeof(pb)));
	if (p->in_fat_area)
		problem(p, "%s starts at %s, inside the card's FAT area (the first "
			"%s), which is made for the FAT's small writes, not for a file "
			"system's data: start it at %s or later", p->name,
			fmt(start, s, sizeof(s)), fmt(g->fat_area_bytes, eb, sizeof(eb)),
			fmt(g->fat_area_bytes, n, sizeof(n)));
}

/* What a fix may do to the layout around one partition. */
struct fix_scope {
	enum pt_kind label;		/* the table's kind, kept by a new table */
	bool sole;			/* the only partition (or a file system on
					 * the whole device): a new table may
					 * replace the old one */
};

/* The advice for the partition: as it is (exact: its real size, for a
 * fix that only formats it), or as the advice would make it anew; NULL
 * without an erase size or memory. */
static struct advice *advice_for(const struct disk *d, const struct check_geometry *g,
				 const struct check_part *p, const struct fix_scope *sc,
				 bool exact)
{
	enum fs_type t = p->fs.type;
	struct advice_request q = {
		.part_bytes = p->entry.size_bytes,
		.label = sc->label == PT_GPT ? ADVICE_LABEL_GPT :
			 sc->label == PT_DOS ? ADVICE_LABEL_DOS : ADVICE_LABEL_AUTO,
		.exact_size = exact,
		.start_bytes = exact ? p->entry.start_bytes : 0,
		.linux_type = t == FS_EXT2 || t == FS_EXT3 || t == FS_EXT4 || t == FS_F2FS,
		.exfat_type = t == FS_EXFAT,
		.exfat_heap_on_unit = t == FS_EXFAT,
	};
	struct geometry geo;
	struct advice *a = malloc(sizeof(*a));

	if (!a || !g->erase_bytes) {	/* nothing to advise without it */
		free(a);
		return NULL;
	}
	memset(&geo, 0, sizeof(geo));
	geo.device_bytes = d->size_bytes;
	geo.sector_bytes = d->sector_bytes;
	geo.erase = (struct geo_size){ g->erase_bytes, 1.0, g->erase_source };
	geo.page = (struct geo_size){ g->page_bytes, 1.0, g->page_source };
	geo.open_linear = geo.open_random = (struct geo_count){ -1, false, 0, GEO_NONE };
	geo.fat_tested = geo.fat_found = g->fat_area_bytes > 0;
	geo.fat_size_bytes = g->fat_area_bytes;
	advice_compute_for(&geo, &q, a);
	return a;
}

/* Where the data begins (data_start_bytes, set by check_part()), against
 * the erase block. */
static void judge_data_start(const struct check_geometry *g, struct check_part *p)
{
	const struct fsinfo *fs = &p->fs;
	uint64_t e = g->erase_bytes, pg = g->page_bytes, c = fs->cluster_bytes;
	char d[32], eb[32], b2[32], what[64];

	p->data_aligned = !e || p->data_start_bytes % e == 0;
	data_label(fs, what, sizeof(what));
	if (!e && pg && p->start_page_aligned && p->data_start_bytes % pg &&
	    (fs->type == FS_VFAT || fs->type == FS_EXFAT)) {
		p->misfit = true;	/* the page alone can judge this much */
		problem(p, "%s: the %s starts at %s on the device, not on a "
			"multiple of the %s page: each cluster write touches two pages",
			p->name, what, fmt(p->data_start_bytes, d, sizeof(d)),
			fmt(pg, b2, sizeof(b2)));
	}
	if (p->data_aligned || !p->start_aligned)
		return;		/* a misplaced start says it all (judge_start) */
	p->misfit = true;
	problem(p, "%s: the %s starts at %s on the device, not on a "
		"multiple of the %s erase block: each erase block's worth of file "
		"data is spread over two of the card's, which the card must copy "
		"around the rest (about twice the work for large writes)%s",
		p->name, what, fmt(p->data_start_bytes, d, sizeof(d)),
		fmt(e, eb, sizeof(eb)),
		pg && c < pg * 2 && p->data_start_bytes % pg ?
		", and each cluster write touches two pages: random writes cost about "
		"twice as much" : "");
}

/* The cluster size the advice would give this FAT or exFAT: the page's
 * (FAT32 at most 64 KiB, and smaller where page-sized clusters would be
 * too few for FAT32, as the advice computes for this partition). */
static uint64_t best_cluster(const struct fsinfo *fs, uint64_t pg, const struct advice *a)
{
	uint64_t best = pow2_floor(pg);

	if (fs->type != FS_VFAT)
		return best;
	if (a && a->fat_ok)	/* FAT32, or FAT16 where FAT32's would be too few */
		return (uint64_t)a->fat.sectors_per_cluster * a->sector_bytes;
	return best > FAT32_MAX_CLUSTER ? FAT32_MAX_CLUSTER : best;
}

/* Clusters (FAT, exFAT) and ext blocks against the page. */
static void judge_clusters(const struct check_geometry *g, const struct advice *a,
			   struct check_part *p)
{
	const struct fsinfo *fs = &p->fs;
	uint64_t pg = g->page_bytes, c = fs->cluster_bytes, best;
	char cb[32], pb[32], bb[32];
	bool ext = fs->type == FS_EXT2 || fs->type == FS_EXT3 || fs->type == FS_EXT4;

	if (ext && c < EXT_BLOCK) {
		p->misfit = true;
		problem(p, "%s: its %s blocks are smaller than 4KiB: each "
			"block written alone programs a whole page of the card",
			p->name, fmt(c, cb, sizeof(cb)));
	}
	if ((fs->type != FS_VFAT && fs->type != FS_EXFAT) || !pg)
		return;
	best = best_cluster(fs, pg, a);
	if (c >= best)
		return;
	p->misfit = true;
	problem(p, "%s: its %s clusters are smaller than the %s page: "
		"every cluster write programs a whole page, so small writes "
		"cost up to %" PRIu64 " times as much as with %s clusters", p->name,
		fmt(c, cb, sizeof(cb)), fmt(pg, pb, sizeof(pb)), best / c,
		fmt(best, bb, sizeof(bb)));
}

/* f2fs sections and ext stripes against the erase block. */
static void judge_units(const struct check_geometry *g, struct check_part *p)
{
	const struct fsinfo *fs = &p->fs;
	uint64_t e = g->erase_bytes, c = fs->cluster_bytes;
	char d[32], eb[32];

	if (fs->type == FS_F2FS && e && fs->section_bytes % e) {
		p->misfit = true;
		problem(p, "%s: its f2fs sections of %s are not whole %s erase "
			"blocks: f2fs cleans a section at a time, so the card copies the "
			"rest of an erase block around each one", p->name,
			fmt(fs->section_bytes, d, sizeof(d)), fmt(e, eb, sizeof(eb)));
	}
	if (e && fs->stripe_blocks && (fs->stripe_blocks * c) % e) {
		p->misfit = true;
		problem(p, "%s: its ext stripe_width of %" PRIu64 " blocks (%s) is "
			"not a multiple of the %s erase block, so large files are placed "
			"across erase blocks", p->name, fs->stripe_blocks,
			fmt(fs->stripe_blocks * c, d, sizeof(d)), fmt(e, eb, sizeof(eb)));
	}
}

static void add_fix_line(struct check_part *p, const struct advice_command *c)
{
	if (c != NULL && p->nfix < CHECK_MAX_FIX)
		snprintf(p->fix[p->nfix++], ADVICE_TEXT, "%s", c->line);
}

/* The advice's notes about a file system (their first word names it,
 * "FAT32", "exFAT", "f2fs": case aside, the purpose's name) or about the
 * layout ("the partition ...", "the device ..."), as the partition's
 * lines after lead: why the advice's command is missing or differs.
 * Whether any was taken. */
static bool take_notes(const struct advice *a, const char *about, const char *lead,
		       struct check_part *p)
{
	bool any = false;

	for (size_t i = 0; i < a->nnotes; i++)
		if (strncasecmp(a->notes[i], about, strlen(about)) == 0) {
			problem(p, "%s: %s%s", p->name, lead, a->notes[i]);
			any = true;
		}
	return any;
}

/* The command that formats the partition's file system as the advice
 * says; for a FAT32 the advice cannot align (a unit the reserved sectors
 * cannot reach, a partition too small for enough clusters), the advice's
 * reason and exFAT's line, the one it advises instead.  NULL when no file
 * system of the advice fits; the advice's reason is given then. */
static const struct advice_command *format_command(const struct advice *a,
						  struct check_part *p)
{
	static const char *const purpose[] = { NULL, "fat32", "exfat", "ext4", "ext4",
					       "ext4", "f2fs" };
	const char *want = p->fs.type == FS_VFAT && a->fat16 ? "fat16" :
			   (unsigned)p->fs.type < sizeof(purpose) / sizeof(purpose[0]) ?
			   purpose[p->fs.type] : NULL;
	const struct advice_command *c = want ? advice_command(a, want) : NULL;

	if (c != NULL || want == NULL)
		return c;
	if (p->fs.type != FS_VFAT) {
		take_notes(a, want, "no fix is given: ", p);
		return NULL;
	}
	take_notes(a, "FAT32", "", p);
	return advice_command(a, "exfat");
}

/* A partition (number, of MBR type have) formatted as another kind of
 * FAT or as exFAT (FAT32 to the FAT16 the advice gives its size, a FAT32
 * in a new table whose line gives exFAT's type above 32 GiB): its MBR
 * type follows, since some devices go by the type. */
static void add_type_fix(const struct fix_scope *sc, const struct advice_command *c,
			 unsigned number, uint8_t have, struct check_part *p)
{
	bool fits;
	const char *type = c ? advice_mbr_type(c->purpose, have, &fits) : NULL;

	if (sc->label != PT_DOS || !number || !type || fits || p->nfix >= CHECK_MAX_FIX)
		return;
	snprintf(p->fix[p->nfix++], ADVICE_TEXT, "sfdisk --part-type DEVICE %u %s",
		 number, type);
}

/* Whether the advice's exFAT line, run on the partition where it is,
 * puts the cluster heap on the unit (exact: the advice for it as it is;
 * mkfs.exfat's boundary counts from the device's start). */
static bool exfat_lands_in_place(const struct check_geometry *g, const struct advice *exact)
{
	const struct advice_command *c = exact ? advice_command(exact, "exfat") : NULL;

	return c && c->data_align_bytes == g->erase_bytes;
}

/* A misfit left without a fix and without a line saying why (said: the
 * partition's lines before the fix was looked for): the reason. */
static void explain_missing_fix(const struct check_geometry *g, const struct advice *a,
				size_t said, struct check_part *p)
{
	char eb[32];

	if (p->nfix || p->nproblems > said)
		return;
	if (p->fs.type == FS_UNKNOWN)	/* the advice's notes are not why */
		problem(p, "%s: no fix is given: its file system is none flashprobe "
			"reads (or it has none), so no line could put it back after a new "
			"table: move the partition with a partition editor, or copy "
			"everything off and use the layout 'flashprobe advise' gives", p->name);
	else if (g->erase_bytes > p->entry.size_bytes && !p->entry.number)
		problem(p, "%s: no fix is given: the device is smaller than one %s erase "
			"block (is that the card's?)", p->name,
			fmt(g->erase_bytes, eb, sizeof(eb)));
	else if (g->erase_bytes > p->entry.size_bytes)
		problem(p, "%s: no fix is given: it is smaller than one %s erase block, so "
			"nothing in it can start and end on the card's units (a larger "
			"partition can, or the erase size is not the card's)", p->name,
			fmt(g->erase_bytes, eb, sizeof(eb)));
	/* | not ||: the notes about the device are said as well */
	else if (!a || !(take_notes(a, "the partition", "no fix is given: ", p) |
			 take_notes(a, "the device", "no fix is given: ", p)))
		problem(p, "%s: no fix is given: the advice has no layout for it (see "
			"'flashprobe advise')", p->name);
}

/* The commands that fix the flaws: a new table when the start is wrong
 * (or a file system fills the whole device) and no other partition would
 * go with it, then the file system as the advice makes it; else only the
 * file system, formatted where it is. */
static void add_fix(const struct disk *d, const struct check_geometry *g,
		    const struct fix_scope *sc, const struct advice *exact,
		    struct check_part *p)
{
	/* a harmless start moves too: the advice's mkfs lines align the data
	 * from an aligned start; an exFAT on an odd unit keeps its start if
	 * its data lands on the unit from there */
	bool table = p->in_fat_area || p->entry.number == 0 ||
		     (exfat_on_odd_unit(g, p) ? !exfat_lands_in_place(g, exact)
					      : !p->start_aligned);
	const struct advice_command *format;
	size_t said = p->nproblems;
	struct advice *a;

	if (!g->erase_bytes || !p->misfit)
		return;
	if (table && !sc->sole) {
		problem(p, "%s has to move, and a new partition table for it "
			"would take the other partitions with it: move it with a partition "
			"editor, or copy everything off and use the layout 'flashprobe "
			"advise' gives", p->name);
		return;
	}
	if (!table) {	/* formatted where it is: the advice judged by */
		format = exact ? format_command(exact, p) : NULL;
		add_fix_line(p, format);
		add_type_fix(sc, format, p->entry.number, p->entry.mbr_type, p);
		explain_missing_fix(g, exact, said, p);
		return;
	}
	a = advice_for(d, g, p, sc, false);
	/* no new table (which wipes the file system) without one to put back */
	format = a ? format_command(a, p) : NULL;
	if (format && advice_command(a, "partition")) {
		add_fix_line(p, advice_command(a, "partition"));
		add_fix_line(p, format);
		add_type_fix(sc, format, 1, a->part_mbr_type, p);
		p->new_table = true;
	}
	explain_missing_fix(g, a, said, p);
	free(a);
}

static int check_part(const struct disk *d, const struct check_geometry *g,
		      const struct pt_entry *e, const struct fix_scope *sc,
		      struct check_part *p)
{
	struct advice *a = NULL;
	int ret;

	memset(p, 0, sizeof(*p));
	p->entry = *e;
	if (e->number)
		snprintf(p->name, sizeof(p->name), "partition %u", e->number);
	else
		snprintf(p->name, sizeof(p->name), "the file system on the device");
	if (e->problem[0])
		problem(p, "%s", e->problem);
	place_start(g, p);
	ret = fsprobe_read(d, e->start_bytes, e->size_bytes, &p->fs);
	if (ret)
		return ret;
	if (p->fs.type != FS_UNKNOWN)
		p->data_start_bytes = e->start_bytes + p->fs.data_offset_bytes;
	judge_start(g, d->sector_bytes ? d->sector_bytes : 512, sc->sole, p);
	if (p->fs.problem[0])
		problem(p, "%s: %s", p->name, p->fs.problem);
	if (p->fs.type != FS_UNKNOWN) {
		/* the clusters are judged by what the advice would choose for
		 * this very partition */
		a = advice_for(d, g, p, sc, true);
		judge_data_start(g, p);
		judge_clusters(g, a, p);
		judge_units(g, p);
	}
	add_fix(d, g, sc, a, p);
	free(a);
	return 0;
}

/* No partition table (or an MBR without partitions, which may be a boot
 * sector): a file system on the whole device is partition 0; a boot
 * signature over neither a valid table nor a file system is garbage
 * worth a line (an empty table is just empty). */
static int check_whole_device(const struct disk *d, const struct check_geometry *g,
			      struct check_result *r)
{
	struct pt_entry whole = { .number = 0, .start_bytes = 0, .size_bytes = d->size_bytes };
	struct fix_scope sc = { PT_NONE, true };
	struct fsinfo fs;
	int ret = fsprobe_read(d, 0, d->size_bytes, &fs);
	struct parttable *t = &r->table;

	if (ret)
		return ret;
	if (fs.type == FS_UNKNOWN && !fs.problem[0]) {
		if (t->boot_signature && t->kind != PT_DOS && t->nproblems < PT_MAX_PROBLEMS)
			snprintf(t->problems[t->nproblems++], PT_LINE, "sector 0 ends in the "
				 "boot signature but holds neither a valid partition table nor a "
				 "known file system");
		return 0;
	}
	t->kind = PT_NONE;	/* an empty MBR that is really a boot sector */
	r->nparts = 1;
	return check_part(d, g, &whole, &sc, &r->parts[0]);
}

int layoutcheck_run(const struct disk *d, const struct check_geometry *g,
		    struct check_result *r)
{
	struct fix_scope sc;
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
	sc.label = r->table.kind;
	sc.sole = r->table.nparts == 1;
	for (size_t i = 0; i < r->table.nparts; i++) {
		ret = check_part(d, g, &r->table.parts[i], &sc, &r->parts[r->nparts++]);
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
	/* the disk's table is not read: whether other partitions would go
	 * with a new one is not known, so no fix replaces it */
	struct fix_scope sc = { PT_NONE, false };

	memset(r, 0, sizeof(*r));
	r->device_bytes = d->size_bytes;
	r->sector_bytes = d->sector_bytes;
	r->geo = *g;
	r->partition_device = true;
	r->table.kind = PT_NONE;
	r->nparts = 1;
	return check_part(&view, g, &e, &sc, &r->parts[0]);
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
