/* advice.c - partitioning and file-system advice from geometry.
 *
 * The alignment unit is the erase block measured by read timing, or the
 * allocation unit the card reports when that is a multiple of it: cards
 * often combine two erase blocks into one AU (flash-model.md section 3),
 * and aligning to the larger unit also aligns to the smaller.  Partitions
 * start on that unit past the FAT area and span whole units; FAT32 and
 * exFAT clusters follow the page and their data areas the unit; ext4
 * stripes and f2fs sections and zones follow the erase block and the unit.
 *
 * Each command is built as an argv array first; the shell line shown to
 * people is made from the same array, so the two cannot disagree.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "units.h"
#include "util.h"

#define KIB ((uint64_t)1024)
#define MIB (1024 * KIB)
#define TIB (MIB * MIB)
#define FAT32_MIN_CLUSTERS 65525ULL	/* mkfs.fat's MIN_CLUST_32 */
#define FAT32_MAX_CLUSTERS 268435446ULL	/* mkfs.fat's MAX_CLUST_32 */
#define FAT32_MAX_CLUSTER (64 * KIB)
#define FAT32_MAX_SECTORS 0xffffffffULL	/* a 32-bit field: mkfs.fat leaves the rest unused */
#define FAT32_MAX_SPC 128u		/* mkfs.fat -s accepts 1..128 */
#define FAT32_DEFAULT_RESERVED 32u
#define FAT16_MIN_CLUSTERS 4087ULL	/* mkfs.fat's MIN_CLUST_16 */
#define FAT16_MAX_CLUSTERS 65524ULL	/* mkfs.fat's MAX_CLUST_16 */
#define FAT16_ROOT_ENTRIES 512u		/* mkfs.fat's default on a disk */
#define FAT16_MAX_CLUSTER (32 * KIB)	/* 64 KiB ones: Windows NT's only, not
					 * the SD spec's (FAT16 up to 2 GB) */
#define FAT_UNALIGNED_MAX_SECTORS 8192u	/* mkfs.fat aligns nothing this small */
#define FAT_MAX_RESERVED 65535u		/* a 16-bit field */
#define FAT_TRACK_SECTORS 32u		/* the -g 64/32 of the advice */
#define MIN_CLUSTER (4 * KIB)
#define UNKNOWN_PAGE_CLUSTER (32 * KIB)	/* SDHC cards' own format */
#define FS_BLOCK 4096u			/* ext4 and f2fs block */
#define EXFAT_BOOT_SECTORS 24u		/* main and backup boot regions */
#define EXFAT_MAX_CLUSTER (32 * MIB)
#define EXFAT_START_UNITS 4		/* how far a start may move for exFAT */
/* the smallest --boundary-align tried on a unit that is not a power of two */
#define EXFAT_MIN_BOUNDARY (64 * KIB)
#define F2FS_SEGMENT (2 * MIB)
#define F2FS_MIN_SECTIONS 40		/* mkfs.f2fs reserves about 28 for cleaning */
#define MAX_SANE_ALIGN (64 * MIB)
#define DOS_MAX_SECTORS 0xffffffffULL
#define GPT_BACKUP_ENTRIES_BYTES (16 * KIB)

const char *geo_source_name(enum geo_source s)
{
	switch (s) {
	case GEO_MEASURED:
		return "measured";
	case GEO_CARD:
		return "card";
	case GEO_KERNEL_GUESS:
		return "kernel_guess";
	case GEO_GIVEN:
		return "given";
	case GEO_MEASURED_WRITES:
		return "measured_writes";
	default:
		return "none";
	}
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static uint64_t lcm64(uint64_t a, uint64_t b)
{
	return a / gcd64(a, b) * b;
}

static uint64_t div_up(uint64_t x, uint64_t d)
{
	return (x + d - 1) / d;
}

/* The largest power of two that is at most x (x > 0). */
static uint64_t pow2_floor(uint64_t x)
{
	uint64_t p = 1;

	while (p <= x / 2)
		p *= 2;
	return p;
}

static const char *fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	return units_format_bytes(bytes, buf, len);
}

static void add_note(struct advice *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_note(struct advice *a, const char *fmt, ...)
{
	va_list ap;

	if (a->nnotes >= ADVICE_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(a->notes[a->nnotes++], ADVICE_LINE, fmt, ap);
	va_end(ap);
}

/* ---- building commands ---- */

static struct advice_command *new_command(struct advice *a, const char *purpose)
{
	struct advice_command *c = &a->commands[a->ncommands++];

	memset(c, 0, sizeof(*c));
	c->purpose = purpose;
	return c;
}

static void arg(struct advice_command *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void arg(struct advice_command *c, const char *fmt, ...)
{
	va_list ap;

	if (c->argc >= ADVICE_MAX_ARGS)
		return;
	va_start(ap, fmt);
	vsnprintf(c->argv[c->argc++], ADVICE_ARG, fmt, ap);
	va_end(ap);
}

static void why(struct advice_command *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reasons accumulate one per line. */
static void why(struct advice_command *c, const char *fmt, ...)
{
	size_t n = strlen(c->why);
	va_list ap;

	if (n && n + 1 < sizeof(c->why)) {
		memcpy(c->why + n, "\n", 2);
		n += 1;
	}
	va_start(ap, fmt);
	vsnprintf(c->why + n, sizeof(c->why) - n, fmt, ap);
	va_end(ap);
}

/* The shell line: the input, if any, through printf (newlines as \n),
 * then the arguments separated by spaces. */
static void make_line(struct advice_command *c)
{
	size_t n = 0, cap = sizeof(c->line);

	c->line[0] = '\0';
	if (c->stdin_text[0]) {
		n += (size_t)snprintf(c->line, cap, "printf '");
		for (const char *p = c->stdin_text; *p && n + 3 < cap; p++) {
			if (*p == '\n') {
				c->line[n++] = '\\';
				c->line[n++] = 'n';
			} else {
				c->line[n++] = *p;
			}
		}
		c->line[n] = '\0';
		if (n < cap)
			n += (size_t)snprintf(c->line + n, cap - n, "' | ");
	}
	for (size_t i = 0; i < c->argc && n < cap; i++)
		n += (size_t)snprintf(c->line + n, cap - n, "%s%s", i ? " " : "", c->argv[i]);
}

const struct advice_command *advice_command(const struct advice *a,
					    const char *purpose)
{
	for (size_t i = 0; i < a->ncommands; i++)
		if (!strcmp(a->commands[i].purpose, purpose))
			return &a->commands[i];
	return NULL;
}

/* ---- the alignment unit ---- */

/* The measured erase block and the card's AU: agree on one unit. */
static void choose_alignment(const struct geometry *g, struct advice *a)
{
	uint64_t e = g->erase.bytes, c = g->card_au.bytes;
	char eb[32], cb[32], ab[32];
	const char *what = g->erase.source == GEO_GIVEN ? "given" : "measured";

	fmt_bytes(e, eb, sizeof(eb));
	fmt_bytes(c, cb, sizeof(cb));
	if (e && c && c != e) {
		uint64_t l = lcm64(e, c);

		a->align_bytes = l <= MAX_SANE_ALIGN ? l : e;
		fmt_bytes(a->align_bytes, ab, sizeof(ab));
		snprintf(a->align_reason, ADVICE_LINE,
			 "the %s erase block (%s) and the %s AU (%s) differ: "
			 "aligning to %s suits both", what, eb,
			 g->card_au.source == GEO_CARD ? "card-reported" :
			 g->card_au.source == GEO_GIVEN ? "given" : "kernel-guessed",
			 cb, ab);
	} else if (e) {
		a->align_bytes = e;
		snprintf(a->align_reason, ADVICE_LINE, "the %s erase block (%s)%s",
			 what, eb, c == e ? ", which the card's AU confirms" : "");
	} else if (c && g->card_au.source == GEO_CARD) {
		a->align_bytes = c;
		snprintf(a->align_reason, ADVICE_LINE,
			 "the card-reported AU (%s); the read test found no erase block", cb);
	} else {
		a->align_bytes = 0;
		snprintf(a->align_reason, ADVICE_LINE,
			 "no erase block was measured and the card reports no AU: "
			 "no geometry-specific advice (4MiB alignment is a common, unmeasured default)");
	}
}

/* ---- the partition table ---- */

static bool want_gpt(const struct geometry *g, const struct advice_request *q)
{
	uint64_t size = g->device_bytes ? g->device_bytes : q->part_bytes;

	if (q->label != ADVICE_LABEL_AUTO)
		return q->label == ADVICE_LABEL_GPT;
	if (!g->device_bytes)	/* the partition as asked, from 1MiB in */
		return size + MIB > DOS_MAX_SECTORS * g->sector_bytes;
	return size > 2 * TIB;
}

/* Where the partition can end: before GPT's backup entries and header, and
 * within the 32-bit sector numbers of an MBR (*mbr_cut: that is what
 * ends it). */
static uint64_t usable_end(const struct geometry *g, const struct advice *a,
			   bool gpt, bool *mbr_cut)
{
	uint64_t ss = g->sector_bytes, end = g->device_bytes;

	*mbr_cut = false;
	if (!end)	/* no device: the partition as asked */
		end = a->part_start_bytes + a->part_size_bytes;
	else if (g->usable_bytes && g->usable_bytes < end)
		end = g->usable_bytes;	/* a fake card: only the verified part */
	if (gpt && g->device_bytes && end > GPT_BACKUP_ENTRIES_BYTES + ss)
		end -= GPT_BACKUP_ENTRIES_BYTES + ss;
	if (!gpt && end > DOS_MAX_SECTORS * ss) {
		/* worth a note where it costs a unit or more */
		*mbr_cut = end - DOS_MAX_SECTORS * ss >= a->align_bytes;
		end = DOS_MAX_SECTORS * ss;
	}
	return end;
}

static uint64_t page_cluster(const struct geometry *g, uint64_t max);

/* Where mkfs.exfat (exfatprogs) puts the cluster heap on the device, for
 * a partition of len bytes at start formatted with clusters of cluster
 * and --boundary-align=boundary: it rounds the FAT's start and then the
 * heap's up to the boundary counted from the start of the device (it
 * reads the partition's offset from sysfs), not of the partition.  Its
 * versions size the FAT differently (1.2: an entry per cluster of the
 * partition, rounded to a cluster; later ones: the clusters left after
 * the FAT, rounded to a sector); 0 where they put the heap apart. */
static uint64_t exfat_heap_on_device(uint64_t start, uint64_t len, uint32_t ss,
				     uint64_t cluster, uint64_t boundary)
{
	uint64_t fat = util_round_up(start + EXFAT_BOOT_SECTORS * ss, boundary);
	uint64_t before = fat - start + 9;	/* and the 8-byte first entries */
	uint64_t old_len = util_round_up(len / cluster * 4, cluster), new_len, heap;

	if (len <= before)
		return 0;
	new_len = util_round_up(((len - before) / (cluster + 4) + 3) * 4, ss);
	heap = util_round_up(fat + old_len, boundary);
	return heap == util_round_up(fat + new_len, boundary) ? heap : 0;
}

/* exFAT's clusters: one page (a power of two), at most 32 MiB. */
static uint64_t exfat_cluster(const struct geometry *g)
{
	return page_cluster(g, EXFAT_MAX_CLUSTER);
}

/* On a unit A that is not a power of two, no --boundary-align is A, but
 * a smaller one may still put the heap on it from where the partition
 * starts: the power of two from EXFAT_MIN_BOUNDARY up that divides the
 * start (so that counting from the device's start, as exfatprogs does, or
 * from the partition's gives the same heap) and does so nearest the
 * start, leaving at least a boundary of data; 0 if none does.  *heap:
 * where. */
static uint64_t exfat_boundary_on_unit(const struct geometry *g, uint64_t A,
				       uint64_t start, uint64_t len, uint64_t *heap)
{
	uint64_t best = 0, cluster = exfat_cluster(g);

	*heap = 0;
	for (uint64_t b = EXFAT_MIN_BOUNDARY; b <= util_pow2_factor(start); b *= 2) {
		uint64_t at = exfat_heap_on_device(start, len, g->sector_bytes, cluster, b);

		if (b < g->sector_bytes || !at || at % A || at + b > start + len ||
		    (best && at >= *heap))
			continue;
		best = b;
		*heap = at;
	}
	return best;
}

/* Where a partition may start: past the FAT area and at least 1 MiB in,
 * where partitioning tools start. */
static uint64_t earliest_start(const struct geometry *g)
{
	uint64_t fat_end = g->fat_found ? g->fat_start_bytes + g->fat_size_bytes : 0;

	return fat_end > MIB ? fat_end : MIB;
}

/* Where a partition for exFAT alone may lie so that some --boundary-align
 * puts its cluster heap on the unit (exfat_boundary_on_unit): the first
 * start from the earliest one on, in steps of the largest power of two in
 * the unit, ending where the advice's partition does or, where exfatprogs'
 * versions would put the heap apart there, up to EXFAT_START_UNITS units
 * before; the start then and *end, or 0 when nothing within
 * EXFAT_START_UNITS units of the earliest start does (further on would
 * waste more of the card than it saves).  *heap: where the heap lands. */
static uint64_t exfat_start_on_unit(const struct geometry *g, const struct advice *a,
				    uint64_t *end, uint64_t *heap)
{
	uint64_t A = a->align_bytes, B = util_pow2_factor(A);
	uint64_t last = a->part_start_bytes + a->part_size_bytes;
	uint64_t first = util_round_up(earliest_start(g), B);

	for (unsigned j = 0; j < EXFAT_START_UNITS && j * A < last; j++) {
		*end = last - j * A;
		for (uint64_t s = first; s + A < *end && s < first + EXFAT_START_UNITS * A;
		     s += B)
			if (exfat_boundary_on_unit(g, A, s, *end - s, heap))
				return s;
	}
	return 0;
}

/* check's fix for an exFAT on a unit that is not a power of two: the
 * partition lies where mkfs.exfat puts the heap on the unit (see
 * exfat_start_on_unit), unless it does from the advice's own start. */
static bool shift_for_exfat(const struct geometry *g, struct advice *a)
{
	uint64_t heap, start, end;

	if (util_pow2_factor(a->align_bytes) == a->align_bytes ||
	    exfat_boundary_on_unit(g, a->align_bytes, a->part_start_bytes,
				   a->part_size_bytes, &heap))
		return true;	/* from its own start, on the unit */
	start = exfat_start_on_unit(g, a, &end, &heap);
	if (!start) {
		add_note(a, "the partition has no start within the device at which "
			 "mkfs.exfat puts its cluster heap on the unit");
		a->part_size_bytes = 0;
		return false;
	}
	a->part_size_bytes = end - start;
	a->part_start_bytes = start;
	a->exfat_heap_bytes = heap;
	return true;
}

/* Start after the FAT area (at least 1 MiB in, where partitioning tools
 * start) on the unit; the requested size or the rest, in whole units. */
static bool place_partition(const struct geometry *g, const struct advice_request *q,
			    bool gpt, struct advice *a)
{
	uint64_t A = a->align_bytes, end;
	bool mbr_cut, cut = false;
	char s[32], u[32];

	a->part_start_bytes = util_round_up(earliest_start(g), A);
	if (q->exact_size) {	/* an existing partition, formatted where it is */
		if (q->start_bytes)
			a->part_start_bytes = q->start_bytes;
		a->part_size_bytes = q->part_bytes / g->sector_bytes * g->sector_bytes;
		return a->part_size_bytes > 0;
	}
	a->part_size_bytes = q->part_bytes / A * A;
	if (q->part_bytes && !a->part_size_bytes) {
		add_note(a, "the partition size asked for (%s) is less than one %s alignment "
			 "unit", fmt_bytes(q->part_bytes, s, sizeof(s)),
			 fmt_bytes(A, u, sizeof(u)));
		return false;
	}
	end = usable_end(g, a, gpt, &mbr_cut);
	if (a->part_start_bytes >= end) {
		add_note(a, "the device is too small for a partition that starts at %s",
			 fmt_bytes(a->part_start_bytes, s, sizeof(s)));
		a->part_size_bytes = 0;
		return false;
	}
	if (!a->part_size_bytes || a->part_start_bytes + a->part_size_bytes > end) {
		/* said only of a partition that is made (below) */
		cut = q->part_bytes && g->device_bytes && !mbr_cut;
		a->part_size_bytes = (end - a->part_start_bytes) / A * A;
	}
	if (mbr_cut)	/* sfdisk refuses a partition past it */
		add_note(a, "an MBR (label dos) reaches only the first %s (its sector "
			 "numbers are 32-bit): the partition ends there and the rest stays "
			 "unused; --label=gpt uses all of it",
			 fmt_bytes((DOS_MAX_SECTORS + 1) * g->sector_bytes, s, sizeof(s)));
	if (!a->part_size_bytes) {
		add_note(a, "the partition would be smaller than one alignment unit");
		return false;
	}
	if (cut)
		add_note(a, "the requested partition does not fit: it gets the "
			 "rest of the device instead");
	if (q->exfat_heap_on_unit)
		return shift_for_exfat(g, a);
	return true;
}

#define GPT_LINUX_TYPE "0FC63DAF-8483-4772-8E79-3D69D8477DE4"

/* The MBR type of a partition an advice line formats, by the line's
 * purpose, and the types of the same kind a partition may already have. */
static const struct mbr_kind {
	const char *purpose, *type, *name;
	uint8_t same[3];
} mbr_kinds[] = {
	{ "fat16", "e", "W95 FAT16 (LBA)", { 0x04, 0x06, 0x0e } },
	{ "fat32", "c", "W95 FAT32 (LBA)", { 0x0b, 0x0c, 0x0c } },
	{ "exfat", "7", "exFAT/NTFS", { 0x07, 0x07, 0x07 } },
	{ "ext4", "83", "Linux", { 0x83, 0x83, 0x83 } },
	{ "f2fs", "83", "Linux", { 0x83, 0x83, 0x83 } },
};

static const struct mbr_kind *mbr_kind_of(const char *purpose)
{
	for (size_t i = 0; i < sizeof(mbr_kinds) / sizeof(mbr_kinds[0]); i++)
		if (!strcmp(purpose, mbr_kinds[i].purpose))
			return &mbr_kinds[i];
	return NULL;
}

const char *advice_mbr_type(const char *purpose, uint8_t have, bool *same_kind)
{
	const struct mbr_kind *k = mbr_kind_of(purpose);

	*same_kind = k == NULL || memchr(k->same, have, sizeof(k->same)) != NULL;
	return k ? k->type : NULL;
}

/* FAT32 (SDHC's format) up to 32 GiB, exFAT (SDXC's) above; Linux's or
 * exFAT's where asked (check's fix for a partition that holds one). */
static const char *partition_type(bool gpt, uint64_t part_bytes,
				  const struct advice_request *q, bool fat16,
				  const char **name)
{
	bool small = part_bytes <= 32 * 1024 * MIB && !q->exfat_type;
	const struct mbr_kind *k;

	if (gpt) {
		*name = q->linux_type ? "Linux filesystem" : "Microsoft basic data";
		return q->linux_type ? GPT_LINUX_TYPE : "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7";
	}
	k = mbr_kind_of(q->linux_type ? "ext4" : fat16 ? "fat16" : small ? "fat32" : "exfat");
	*name = k->name;
	return k->type;
}

static bool fat16_instead(const struct geometry *g, const struct advice *a,
			  struct fat32_layout *l);

static void partition_advice(const struct geometry *g, const struct advice_request *q,
			     struct advice *a)
{
	bool gpt = want_gpt(g, q);
	uint64_t ss = g->sector_bytes;
	struct advice_command *c;
	const char *type, *type_name;
	char s[32], u[32], z[32];

	a->label = gpt ? "gpt" : "dos";
	if (!place_partition(g, q, gpt, a))
		return;
	/* FAT16 or FAT32 is decided here, once: the type depends on it, and
	 * fat_advice() makes the line from a->fat */
	a->fat16 = fat16_instead(g, a, &a->fat);
	type = partition_type(gpt, a->part_size_bytes, q, a->fat16 && !q->exfat_type,
			      &type_name);
	a->part_mbr_type = gpt ? 0 : (uint8_t)strtoul(type, NULL, 16);
	snprintf(a->sized_for, ADVICE_LINE, "a %s partition (%" PRIu64 " sectors of %" PRIu64
		 " bytes)", fmt_bytes(a->part_size_bytes, s, sizeof(s)),
		 a->part_size_bytes / ss, ss);
	snprintf(a->warning, ADVICE_LINE,
		 "this replaces the partition table of DEVICE and everything on it is lost: "
		 "copy the files you need first and save the old table with: "
		 "sfdisk --dump DEVICE > table.txt");
	c = new_command(a, "partition");
	/* --wipe only clears the disk's own signatures, and run from a
	 * script sfdisk leaves those inside the new partition: a file system
	 * left there makes mkfs.f2fs refuse and mkfs.ext4 ask */
	arg(c, "sfdisk");
	arg(c, "--wipe");
	arg(c, "always");
	arg(c, "--wipe-partitions");
	arg(c, "always");
	arg(c, "DEVICE");
	snprintf(c->stdin_text, sizeof(c->stdin_text),
		 "label: %s\nunit: sectors\n\nstart=%" PRIu64 ", size=%" PRIu64 ", type=%s\n",
		 a->label, a->part_start_bytes / ss, a->part_size_bytes / ss, type);
	fmt_bytes(a->part_start_bytes, s, sizeof(s));
	fmt_bytes(a->align_bytes, u, sizeof(u));
	why(c, "label %s: %s", a->label, q->label != ADVICE_LABEL_AUTO ? "as asked" :
	    !gpt ? "what SD cards ship with (MBR, up to 2TiB)" : g->device_bytes ?
	    "the device is larger than MBR's 2TiB" :
	    "the partition would not fit an MBR (up to 2TiB)");
	if (a->exfat_heap_bytes) {
		why(c, "the partition starts at %s, where mkfs.exfat puts the cluster heap "
		    "on the %s alignment unit (at %s): its --boundary-align takes only "
		    "powers of two, counted from the device's start", s, u,
		    fmt_bytes(a->exfat_heap_bytes, z, sizeof(z)));
		why(c, "it is %s, so it ends on the unit", a->sized_for);
	} else {
		why(c, "the partition starts at %s, a multiple of the %s alignment unit%s", s, u,
		    g->fat_found ? " past the card's FAT area" : " and at least 1MiB in");
		why(c, "it is %s: whole alignment units, so it also ends on one%s",
		    a->sized_for, g->device_bytes ? "" : " (no device: the size given)");
	}
	if (g->device_bytes)
		why(c, "computed for a %s device", fmt_bytes(g->device_bytes, z, sizeof(z)));
	why(c, "--wipe-partitions always: old file-system signatures inside the new "
	    "partition are erased too, so the mkfs lines do not stop at them");
	if (q->linux_type || q->exfat_type)
		why(c, "type %s (%s), for %s", type, type_name,
		    q->linux_type ? "ext4 or f2fs" : "exFAT");
	else if (gpt)
		why(c, "type %s (%s), for FAT and exFAT; for ext4 or f2fs use type=%s",
		    type, type_name, GPT_LINUX_TYPE);
	else {
		bool exfat = !strcmp(type, "7");

		why(c, "type %s (%s); for %s use type=%s, for ext4 or f2fs type=83",
		    type, type_name, exfat ? "FAT32" : "exFAT", exfat ? "c" : "7");
	}
	c->data_align_bytes = a->align_bytes;
	a->sector_bytes = g->sector_bytes;
}

/* ---- FAT32 ---- */

/* What sets FAT32 and FAT16 apart in mkfs.fat's computation. */
struct fat_kind {
	unsigned entry_bytes;		/* of a FAT entry */
	uint64_t min_clusters, max_clusters;
	uint32_t root_entries;		/* the fixed root directory (FAT16) */
	uint32_t min_reserved;		/* mkfs.fat's own count */
};

static const struct fat_kind fat32_kind = {
	4, FAT32_MIN_CLUSTERS, FAT32_MAX_CLUSTERS, 0, FAT32_DEFAULT_RESERVED,
};
static const struct fat_kind fat16_kind = {
	2, FAT16_MIN_CLUSTERS, FAT16_MAX_CLUSTERS, FAT16_ROOT_ENTRIES, 1,
};

/* mkfs.fat (dosfstools 4.x, setup_tables) with two FATs and aligned
 * structures: the size rounded to whole tracks, the root directory (FAT16)
 * rounded up to whole clusters, the cluster count estimate, the FAT length
 * from it rounded up to whole clusters, then the clusters that really fit.
 * Alignment is off at 8192 sectors and below, so those are refused. */
static bool fat_for_reserved(const struct fat_kind *k, uint64_t total_sectors,
			     uint32_t sector_bytes, uint32_t spc, uint32_t reserved,
			     struct fat32_layout *out)
{
	uint64_t ss = sector_bytes, e = k->entry_bytes;
	uint64_t total = total_sectors / FAT_TRACK_SECTORS * FAT_TRACK_SECTORS;
	uint64_t root, fatdata, clusters, fat, maxclusters;

	if (!ss || !spc || reserved % spc || total <= FAT_UNALIGNED_MAX_SECTORS ||
	    total > FAT32_MAX_SECTORS)
		return false;
	root = k->root_entries ? util_round_up(div_up(k->root_entries * 32ULL, ss), spc) : 0;
	if (total <= reserved + root)
		return false;
	fatdata = total - reserved - root;
	clusters = (fatdata * ss + 2 * 2 * e) / (spc * ss + 2 * e);
	fat = util_round_up(div_up((clusters + 2) * e, ss), spc);
	if (2 * fat >= fatdata)
		return false;
	clusters = (fatdata - 2 * fat) / spc;
	maxclusters = fat * ss / e;
	if (maxclusters > k->max_clusters)
		maxclusters = k->max_clusters;
	if (clusters > maxclusters || clusters < k->min_clusters)
		return false;
	out->sectors_per_cluster = spc;
	out->reserved_sectors = reserved;
	out->fat_sectors = (uint32_t)fat;
	out->root_sectors = (uint32_t)root;
	out->clusters = clusters;
	return true;
}

/* The fewest reserved sectors (at least mkfs.fat's own count, whole
 * clusters) that put the first data cluster on the unit.  The FAT length
 * shrinks as the reserved area grows, so every candidate is tried in
 * turn.  A layout whose clusters hold less than half the partition is
 * none: aligning would cost the user more than it saves (a 6 MiB
 * partition on 4 MiB units kept 2 MiB). */
static bool fat_layout(const struct fat_kind *k, uint64_t part_bytes, uint32_t sector_bytes,
		       uint64_t cluster_bytes, uint64_t align_bytes, struct fat32_layout *out)
{
	uint64_t ss = sector_bytes, spc = ss ? cluster_bytes / ss : 0;
	uint64_t unit = ss ? align_bytes / ss : 0;

	if (!spc || !unit || spc > FAT32_MAX_SPC || cluster_bytes % ss || align_bytes % ss ||
	    unit % spc)
		return false;
	for (uint64_t r = util_round_up(k->min_reserved, spc); r <= FAT_MAX_RESERVED; r += spc) {
		struct fat32_layout l;

		if (!fat_for_reserved(k, part_bytes / ss, sector_bytes, (uint32_t)spc,
				      (uint32_t)r, &l))
			return false;
		if ((r + 2ULL * l.fat_sectors + l.root_sectors) % unit == 0) {
			*out = l;
			return l.clusters * cluster_bytes * 2 >= part_bytes;
		}
	}
	return false;
}

bool advice_fat32_for_reserved(uint64_t total_sectors, uint32_t sector_bytes,
			       uint32_t spc, uint32_t reserved,
			       struct fat32_layout *out)
{
	return fat_for_reserved(&fat32_kind, total_sectors, sector_bytes, spc, reserved, out);
}

bool advice_fat32_layout(uint64_t part_bytes, uint32_t sector_bytes,
			 uint64_t cluster_bytes, uint64_t align_bytes,
			 struct fat32_layout *out)
{
	return fat_layout(&fat32_kind, part_bytes, sector_bytes, cluster_bytes, align_bytes,
			  out);
}

bool advice_fat16_layout(uint64_t part_bytes, uint32_t sector_bytes,
			 uint64_t cluster_bytes, uint64_t align_bytes,
			 struct fat32_layout *out)
{
	return fat_layout(&fat16_kind, part_bytes, sector_bytes, cluster_bytes, align_bytes,
			  out);
}

/* Clusters of one page: the largest power of two within it, from
 * MIN_CLUSTER up to max, at least one sector; UNKNOWN_PAGE_CLUSTER
 * without a page. */
static uint64_t page_cluster(const struct geometry *g, uint64_t max)
{
	uint64_t cluster = g->page.bytes ? pow2_floor(g->page.bytes) : UNKNOWN_PAGE_CLUSTER;

	if (cluster > max)
		cluster = max;
	if (cluster < MIN_CLUSTER)
		cluster = MIN_CLUSTER;
	return cluster < g->sector_bytes ? g->sector_bytes : cluster;
}

/* page_cluster(), with the reason for it. */
static uint64_t cluster_for_page(const struct geometry *g, uint64_t max,
				 struct advice_command *c)
{
	uint64_t page = g->page.bytes, cluster = page_cluster(g, max);
	char p[32], k[32];

	fmt_bytes(cluster, k, sizeof(k));
	fmt_bytes(page, p, sizeof(p));
	if (!page)
		why(c, "the page is unknown: %s clusters, what SD cards are formatted with", k);
	else if (pow2_floor(page) > max)
		why(c, "clusters of %s, the largest allowed, within the %s page", k, p);
	else if (pow2_floor(page) < MIN_CLUSTER)
		why(c, "clusters of %s, whole %s pages (smaller ones only make the FAT larger)",
		    k, p);
	else if (pow2_floor(page) != page)
		why(c, "clusters of %s: the largest power of two (which mkfs requires) "
		    "within the %s page", k, p);
	else
		why(c, "clusters of %s, one page: a cluster write never shares a page", k);
	return cluster;
}

/* Where mkfs.exfat (exfatprogs) puts the cluster heap, at the latest, in
 * a partition that starts on the boundary: the boot region rounded up to
 * the boundary, then the FAT for every cluster the partition could hold,
 * rounded up to a cluster and then to the boundary. */
static uint64_t exfat_heap_bound(const struct geometry *g, uint64_t part_bytes,
				 uint64_t cluster, uint64_t boundary)
{
	uint64_t fat_off = util_round_up(EXFAT_BOOT_SECTORS * g->sector_bytes, boundary);
	uint64_t fat_len = util_round_up((part_bytes / cluster + 2) * 4, cluster);

	return util_round_up(fat_off + fat_len, boundary);
}

/* exFAT's boundary: the largest power of two in the unit (the only
 * kind mkfs.exfat takes). */
static uint64_t exfat_boundary(const struct advice *a)
{
	return util_pow2_factor(a->align_bytes);
}

/* Whether an exFAT of cluster-sized clusters leaves at least one
 * boundary of data after a heap on the boundary: mkfs.exfat fails
 * ("boundary alignment is too big") when nothing is left, and less is
 * no file system worth advising. */
static bool exfat_fits(const struct geometry *g, const struct advice *a, uint64_t cluster)
{
	uint64_t boundary = exfat_boundary(a);

	return exfat_heap_bound(g, a->part_size_bytes, cluster, boundary) + boundary <=
	       a->part_size_bytes;
}

/* What to use instead where FAT32 is not advised. */
static const char *instead_of_fat32(const struct geometry *g, const struct advice *a)
{
	return exfat_fits(g, a, page_cluster(g, EXFAT_MAX_CLUSTER)) ? "use exFAT" :
	       "exFAT does not fit either (below): use a larger partition";
}

/* Whether FAT32 has enough clusters of cluster_bytes in the partition at
 * all (with the fewest reserved sectors), whatever its alignment. */
static bool fat32_enough_clusters(const struct geometry *g, const struct advice *a,
				  uint64_t cluster)
{
	uint32_t spc = (uint32_t)(cluster / g->sector_bytes);
	struct fat32_layout l;

	return advice_fat32_for_reserved(a->part_size_bytes / g->sector_bytes,
					 g->sector_bytes, spc,
					 (uint32_t)util_round_up(FAT32_DEFAULT_RESERVED, spc), &l);
}

/* FAT16 where FAT32 would need clusters smaller than the page's (the
 * partition holds fewer than 65525 of those): what SD cards up to 2GB
 * ship with, and its clusters are 16 times larger than FAT32's would be.
 * The smallest cluster from the page's up to 32KiB (FAT16 up to 2 GiB,
 * as the SD spec has it: 64 KiB clusters only work on some hosts) whose
 * FAT16 lands on the unit, else the largest below that (a partition too
 * small for 4087 page-sized clusters); false when FAT32 has enough
 * page-sized clusters or no FAT16 does. */
static bool fat16_instead(const struct geometry *g, const struct advice *a,
			  struct fat32_layout *l)
{
	uint64_t first = page_cluster(g, FAT32_MAX_CLUSTER), ss = g->sector_bytes;
	uint64_t first16 = first < FAT16_MAX_CLUSTER ? first : FAT16_MAX_CLUSTER;

	if (a->part_size_bytes / ss > FAT32_MAX_SECTORS || fat32_enough_clusters(g, a, first))
		return false;
	for (uint64_t cluster = first16; cluster <= FAT16_MAX_CLUSTER; cluster *= 2)
		if (advice_fat16_layout(a->part_size_bytes, (uint32_t)ss, cluster,
					a->align_bytes, l))
			return true;
	for (uint64_t cluster = first16 / 2; cluster >= ss; cluster /= 2)
		if (advice_fat16_layout(a->part_size_bytes, (uint32_t)ss, cluster,
					a->align_bytes, l))
			return true;
	return false;
}

/* mkfs.fat's options for the layout in a->fat, and the reasons for -R
 * and -g. */
static void fat_options(const struct geometry *g, struct advice *a,
			struct advice_command *c, unsigned bits)
{
	const struct fat32_layout *l = &a->fat;
	char u[32], d[32];

	arg(c, "mkfs.fat");
	arg(c, "-F");
	arg(c, "%u", bits);
	arg(c, "-S");
	arg(c, "%u", g->sector_bytes);
	arg(c, "-s");
	arg(c, "%u", l->sectors_per_cluster);
	arg(c, "-R");
	arg(c, "%u", l->reserved_sectors);
	if (bits == 16) {
		arg(c, "-r");
		arg(c, "%u", FAT16_ROOT_ENTRIES);
	}
	arg(c, "-g");
	arg(c, "64/32");
	arg(c, "PARTITION");
	fmt_bytes(a->align_bytes, u, sizeof(u));
	fmt_bytes(((uint64_t)l->reserved_sectors + 2ULL * l->fat_sectors + l->root_sectors) *
		  g->sector_bytes, d, sizeof(d));
	if (bits == 16)
		why(c, "-R %u: with mkfs.fat's two FATs of %u sectors and the root "
		    "directory (-r %u entries, %u sectors) the first data cluster starts "
		    "%s in, on the %s unit; this holds for %s only (for another size run "
		    "'flashprobe advise --size SIZE')", l->reserved_sectors, l->fat_sectors,
		    FAT16_ROOT_ENTRIES, l->root_sectors, d, u, a->sized_for);
	else
		why(c, "-R %u: with mkfs.fat's two FATs of %u sectors the first data "
		    "cluster starts %s in, on the %s unit; this holds for %s only (for "
		    "another size run 'flashprobe advise --size SIZE')",
		    l->reserved_sectors, l->fat_sectors, d, u, a->sized_for);
	why(c, "-g 64/32 fixes the track size mkfs.fat rounds the size to (it differs "
	    "between card readers and image files), so the FAT length is the one -R is "
	    "computed for");
	c->data_align_bytes = a->align_bytes;
}

/* The FAT16 line, in place of FAT32's. */
static void fat16_advice(const struct geometry *g, struct advice *a,
			 struct advice_command *c, uint64_t first)
{
	uint64_t cluster = (uint64_t)a->fat.sectors_per_cluster * g->sector_bytes;
	char k[32], f[32];

	a->fat_ok = true;
	c->purpose = "fat16";
	fmt_bytes(first, f, sizeof(f));
	if (cluster != first) {
		c->why[0] = '\0';	/* the page's reason no longer describes -s */
		why(c, "clusters of %s: %s ones would be %s", fmt_bytes(cluster, k, sizeof(k)),
		    f, cluster > first ? "more than FAT16's 65524" :
		    "fewer than FAT16's 4087 (or its data would miss the unit)");
	}
	why(c, "FAT16, not FAT32: fewer than FAT32's 65525 clusters of %s fit, and "
	    "smaller ones %s; FAT16 is what SD cards up to 2GB ship with", f,
	    g->page.bytes ? "would cost a whole page per write" :
	    "would make the FAT larger for no known gain");
	fat_options(g, a, c, 16);
}

static void fat_advice(const struct geometry *g, struct advice *a)
{
	struct advice_command *c = new_command(a, "fat32");
	uint64_t cluster = cluster_for_page(g, FAT32_MAX_CLUSTER, c), first = cluster;
	char k[32], u[32], d[32];

	if (a->part_size_bytes / g->sector_bytes > FAT32_MAX_SECTORS) {
		a->ncommands--;
		add_note(a, "FAT32 is not advised: %s is more than FAT32's %llu sectors "
			 "(mkfs.fat would leave the rest unused and its data would land off "
			 "the unit); %s", a->sized_for, FAT32_MAX_SECTORS,
			 instead_of_fat32(g, a));
		return;
	}
	if (a->fat16) {	/* decided with the partition's type */
		fat16_advice(g, a, c, first);
		return;
	}

	/* smaller clusters only when the partition is too small for enough of
	 * the page-sized ones.  When the unit is out of reach (the reserved
	 * sectors, at most 65535, cannot pad the FAT area to it: units of
	 * 64MiB and more on 512-byte sectors) smaller clusters could reach it
	 * only by growing the FAT, and would cost a whole page per cluster
	 * write: FAT32 is not advised then, exFAT is */
	for (; cluster >= g->sector_bytes; cluster /= 2) {
		if (advice_fat32_layout(a->part_size_bytes, g->sector_bytes, cluster,
					a->align_bytes, &a->fat))
			break;
		if (fat32_enough_clusters(g, a, cluster)) {
			a->ncommands--;
			add_note(a, "FAT32 is not advised: its first data cluster cannot start "
				 "on the %s unit with %s clusters (the reserved sectors, at most "
				 "%u, cannot pad the FAT area that far, and smaller clusters cost "
				 "a whole page per write); %s",
				 fmt_bytes(a->align_bytes, u, sizeof(u)),
				 fmt_bytes(cluster, k, sizeof(k)), FAT_MAX_RESERVED,
				 instead_of_fat32(g, a));
			return;
		}
	}
	if (cluster < g->sector_bytes) {
		a->ncommands--;
		add_note(a, "FAT32: %s is too small for an aligned FAT32 (it needs 65525 "
			 "clusters); %s", a->sized_for, instead_of_fat32(g, a));
		return;
	}
	a->fat_ok = true;
	if (cluster != first) {
		c->why[0] = '\0';	/* the page's reason no longer describes -s */
		why(c, "clusters of %s: %s ones would be fewer than FAT32's 65525 in %s",
		    fmt_bytes(cluster, d, sizeof(d)), fmt_bytes(first, k, sizeof(k)),
		    a->sized_for);
	}
	fat_options(g, a, c, 32);
}

/* ---- exFAT ---- */

/* Under the partition the advice gives (on a unit that is not a power of
 * two) the heap lands off the unit, or on it only by chance: where else
 * an exFAT alone could start, if a start puts it on the unit where this
 * one does not. */
static void exfat_other_start(const struct geometry *g, const struct advice *a,
			      struct advice_command *c)
{
	uint64_t heap, end, start = exfat_start_on_unit(g, a, &end, &heap);
	char s[32], h[32];

	if (!start)
		return;
	if (start == a->part_start_bytes)	/* a shorter one from the same start */
		why(c, "for exFAT alone, make the partition %" PRIu64 " sectors (size=%"
		    PRIu64 " in the partition line): mkfs.exfat then puts the heap on the "
		    "unit, at %s", (end - start) / g->sector_bytes,
		    (end - start) / g->sector_bytes, fmt_bytes(heap, h, sizeof(h)));
	else
		why(c, "for exFAT alone, start the partition at %s instead (start=%" PRIu64
		    ", size=%" PRIu64 " in the partition line): mkfs.exfat then puts the "
		    "heap on the unit, at %s ('flashprobe check' after it gives that "
		    "layout too)", fmt_bytes(start, s, sizeof(s)), start / g->sector_bytes,
		    (end - start) / g->sector_bytes, fmt_bytes(heap, h, sizeof(h)));
}

static void exfat_advice(const struct geometry *g, struct advice *a)
{
	struct advice_command *c = new_command(a, "exfat");
	uint64_t cluster = cluster_for_page(g, EXFAT_MAX_CLUSTER, c);
	uint64_t boundary = exfat_boundary(a);
	uint64_t heap = exfat_heap_bound(g, a->part_size_bytes, cluster, boundary);
	uint64_t on_device = 0, landing = 0, used;
	char b[32], u[32], h[32];

	if (!exfat_fits(g, a, cluster)) {
		a->ncommands--;
		add_note(a, "exFAT: %s is too small for a cluster heap on the %s boundary "
			 "(its FAT and boot region take %s before it): use a larger partition",
			 a->sized_for, fmt_bytes(boundary, b, sizeof(b)),
			 fmt_bytes(heap, u, sizeof(u)));
		return;
	}

	if (boundary != a->align_bytes)	/* 3 x 2^n: a power of two that lands */
		landing = exfat_boundary_on_unit(g, a->align_bytes, a->part_start_bytes,
						 a->part_size_bytes, &on_device);
	used = landing ? landing : boundary;
	arg(c, "mkfs.exfat");
	arg(c, "-c");
	arg(c, "%" PRIu64 "K", cluster / KIB);
	arg(c, "--boundary-align=%" PRIu64 "K", used / KIB);
	arg(c, "PARTITION");
	fmt_bytes(used, b, sizeof(b));
	fmt_bytes(a->align_bytes, u, sizeof(u));
	c->data_align_bytes = boundary;
	if (boundary == a->align_bytes) {
		why(c, "--boundary-align=%s puts the FAT and the cluster heap on the "
		    "alignment unit, for any partition size", b);
		return;
	}
	if (landing) {
		why(c, "--boundary-align=%s: mkfs.exfat takes only powers of two and "
		    "counts them from the device's start; from the partition's start "
		    "this one puts the cluster heap on the %s unit, at %s", b, u,
		    fmt_bytes(on_device, h, sizeof(h)));
		c->data_align_bytes = a->align_bytes;
		return;
	}
	on_device = exfat_heap_on_device(a->part_start_bytes, a->part_size_bytes,
					 g->sector_bytes, cluster, boundary);
	fmt_bytes(on_device, h, sizeof(h));
	if (on_device)
		why(c, "mkfs.exfat's --boundary-align takes only powers of two, counted "
		    "from the device's start: from the partition's start the cluster heap "
		    "lands at %s, off the %s unit (%s can be aligned fully)", h, u,
		    a->fat_ok ? "FAT32 or f2fs" : "f2fs");
	else
		why(c, "mkfs.exfat's --boundary-align takes only powers of two: the cluster "
		    "heap starts on a boundary of %s, counted from the device's start, "
		    "which is on the %s unit only where the FAT happens to end right "
		    "(%s can be aligned fully)", b, u, a->fat_ok ? "FAT32 or f2fs" : "f2fs");
	exfat_other_start(g, a, c);
}

/* ---- ext4 ---- */

static void ext4_advice(const struct geometry *g, struct advice *a)
{
	struct advice_command *c = new_command(a, "ext4");
	uint64_t stripe = a->align_bytes / FS_BLOCK;
	uint64_t page_blocks = g->page.bytes > FS_BLOCK && g->page.bytes % FS_BLOCK == 0 ?
			       g->page.bytes / FS_BLOCK : 1;
	uint64_t stride = gcd64(page_blocks, stripe ? stripe : 1);
	char u[32], p[32];

	arg(c, "mkfs.ext4");
	arg(c, "-b");
	arg(c, "%u", FS_BLOCK);
	if (stripe)
		arg(c, "-E");
	if (stripe)
		arg(c, "stride=%" PRIu64 ",stripe_width=%" PRIu64, stride, stripe);
	arg(c, "PARTITION");
	fmt_bytes(g->page.bytes, p, sizeof(p));
	if (!g->page.bytes)
		why(c, "stride=1: the page is unknown");
	else if (stride == page_blocks && page_blocks > 1)
		why(c, "stride=%" PRIu64 ": one %s page is %" PRIu64 " blocks, so related "
		    "blocks are kept within a page", stride, p, page_blocks);
	else if (page_blocks == 1 && g->page.bytes > FS_BLOCK)
		why(c, "stride=1: the %s page is not a whole number of 4KiB blocks", p);
	else if (page_blocks == 1)
		why(c, "stride=1: the %s page is not larger than a 4KiB block", p);
	else
		why(c, "stride=%" PRIu64 ": the %s page is %" PRIu64 " blocks, reduced to "
		    "divide the stripe", stride, p, page_blocks);
	if (stripe)
		why(c, "stripe_width=%" PRIu64 ": one %s alignment unit, so the allocator "
		    "starts large files on erase-block boundaries", stripe,
		    fmt_bytes(a->align_bytes, u, sizeof(u)));
	why(c, "block 0 is the partition start, aligned already; the values do not "
	    "depend on the partition size");
	/* no -F: it would also skip mke2fs's question when PARTITION was
	 * replaced by the whole card by mistake */
	why(c, "if mkfs.ext4 still finds an old file system it asks 'Proceed anyway?': "
	    "answer y (the partition line's WARNING has said what is lost); -F is "
	    "not given, as it would also skip the question for a whole card");
	c->data_align_bytes = a->align_bytes;
}

/* ---- f2fs ---- */

/* Sections (f2fs's unit of garbage collection) of whole erase blocks;
 * zones of whole alignment units, because the main area starts on a zone. */
static void f2fs_advice(const struct geometry *g, struct advice *a)
{
	uint64_t erase = g->erase.bytes ? g->erase.bytes : a->align_bytes;
	uint64_t section = lcm64(erase, F2FS_SEGMENT);
	uint64_t zone = lcm64(a->align_bytes, section);
	uint64_t segs = section / F2FS_SEGMENT, secs = zone / section;
	struct advice_command *c;
	char e[32], s[32], z[32];

	if (a->part_size_bytes / zone * secs < F2FS_MIN_SECTIONS) {
		add_note(a, "f2fs: %s holds fewer than %d sections of %s, and mkfs.f2fs "
			 "keeps about 28 for cleaning: use a larger partition or another "
			 "file system", a->sized_for, F2FS_MIN_SECTIONS,
			 fmt_bytes(section, s, sizeof(s)));
		return;
	}
	c = new_command(a, "f2fs");
	arg(c, "mkfs.f2fs");
	arg(c, "-f");	/* else it refuses (255) where it finds an old file system */
	arg(c, "-s");
	arg(c, "%" PRIu64, segs);
	if (secs > 1) {
		arg(c, "-z");
		arg(c, "%" PRIu64, secs);
	}
	arg(c, "PARTITION");
	fmt_bytes(erase, e, sizeof(e));
	fmt_bytes(section, s, sizeof(s));
	fmt_bytes(zone, z, sizeof(z));
	if (section == erase && segs == 1)
		why(c, "-s 1: a section of one 2MiB segment is one %s erase block", e);
	else if (section == erase)
		why(c, "-s %" PRIu64 ": a section of %" PRIu64 " 2MiB segments is one %s "
		    "erase block", segs, segs, e);
	else if (erase < F2FS_SEGMENT && F2FS_SEGMENT % erase == 0)
		why(c, "-s 1: the %s erase block divides the 2MiB segment, so each "
		    "segment is %" PRIu64 " whole erase blocks", e, F2FS_SEGMENT / erase);
	else
		why(c, "-s %" PRIu64 ": the %s erase block is not a multiple of f2fs's 2MiB "
		    "segment; %s (%" PRIu64 " segments) is the smallest section of whole "
		    "erase blocks (%" PRIu64 ")", segs, e, s, segs, section / erase);
	if (secs > 1)
		why(c, "-z %" PRIu64 ": the main area starts on a zone, and a zone of %s "
		    "is a whole number of %s alignment units", secs, z,
		    fmt_bytes(a->align_bytes, e, sizeof(e)));
	else
		why(c, "-z stays 1: the main area starts on a zone of one section, "
		    "already on the alignment unit");
	why(c, "the values do not depend on the partition size");
	if (segs > 1)
		why(c, "fsck.f2fs (f2fs-tools 1.15) may report \"free segment_count matched "
		    "with CP [Fail]\" on this fresh file system: with sections of several "
		    "segments it counts free segments differently from its own mkfs; every "
		    "other check passes");
	why(c, "-f: without it mkfs.f2fs stops where it finds an old file system; "
	    "the partition line's WARNING has said what is lost");
	c->data_align_bytes = a->align_bytes;
}

/* ---- consequences ---- */

static void consequences(const struct geometry *g, struct advice *a)
{
	char n[32], m[32];

	if (g->open_linear.value > 0)
		add_note(a, "this card keeps %s%d AU%s open: %s",
			 g->open_linear.at_least ? "at least " : "", g->open_linear.value,
			 g->open_linear.value == 1 ? "" : "s", g->open_linear.at_least ?
			 "many files can grow at once without slowing down" :
			 "more files growing at once than that will be slow");
	if (g->open_random.value == 0 && g->open_random.source == GEO_MEASURED)
		add_note(a, "linear-only: random writes anywhere outside the FAT area "
			 "are expensive (each can cost a copy of a whole AU)");
	else if (g->open_random.value > 0 && !g->open_random.at_least &&
		 g->open_random.value < g->open_linear.value)
		add_note(a, "only %d of the open AUs accept writes out of order: keep "
			 "random-write workloads to few files", g->open_random.value);
	if (g->fat_found) {
		units_format_bytes(g->fat_size_bytes, n, sizeof(n));
		snprintf(m, sizeof(m), "the start");
		if (g->fat_start_bytes)
			units_format_bytes(g->fat_start_bytes, m, sizeof(m));
		add_note(a, "the card handles %s from %s differently (FAT area): "
			 "the advised partition starts after it, so a busy journal does "
			 "not land there", n, m);
	}
}

void advice_compute_for(const struct geometry *g, const struct advice_request *q,
			struct advice *a)
{
	memset(a, 0, sizeof(*a));
	a->label = "dos";
	choose_alignment(g, a);
	consequences(g, a);
	if (!a->align_bytes || !g->sector_bytes || a->align_bytes % g->sector_bytes)
		return;
	partition_advice(g, q, a);
	if (!a->part_size_bytes)
		return;
	fat_advice(g, a);
	exfat_advice(g, a);
	if (g->sector_bytes <= FS_BLOCK) {
		ext4_advice(g, a);
		f2fs_advice(g, a);
	}
	for (size_t i = 0; i < a->ncommands; i++)
		make_line(&a->commands[i]);
}

void advice_compute(const struct geometry *g, struct advice *a)
{
	struct advice_request q = { .label = ADVICE_LABEL_AUTO };

	advice_compute_for(g, &q, a);
}
