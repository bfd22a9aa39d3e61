/* advice.c - partitioning and file-system advice from measured geometry.
 *
 * The alignment unit is the erase block measured by read timing, or the
 * allocation unit the card reports when that is a multiple of it: cards
 * often combine two erase blocks into one AU (flash-model.md section 3),
 * and aligning to the larger unit also aligns to the smaller.  Partitions
 * start on that unit past the FAT area, FAT32 clusters follow the page and
 * its data area the unit, ext4 stripes and f2fs sections the unit.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "advice.h"
#include "units.h"

#define MIB ((uint64_t)1024 * 1024)
#define FAT32_MIN_CLUSTERS 65525ULL
#define FAT32_MAX_CLUSTER (64 * 1024ULL)
#define FAT32_MIN_RESERVED 32ULL
#define F2FS_SEGMENT (2 * MIB)
#define MAX_SANE_ALIGN (64 * MIB)

const char *geo_source_name(enum geo_source s)
{
	switch (s) {
	case GEO_MEASURED:
		return "measured";
	case GEO_CARD:
		return "card";
	case GEO_KERNEL_GUESS:
		return "kernel_guess";
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

static uint64_t round_up(uint64_t x, uint64_t unit)
{
	return (x + unit - 1) / unit * unit;
}

static void add_note(struct advice *a, const char *fmt, const char *s1,
		     const char *s2)
{
	if (a->nnotes < ADVICE_MAX_NOTES)
		snprintf(a->notes[a->nnotes++], ADVICE_LINE, fmt, s1, s2);
}

/* The measured erase block and the card's AU: agree on one unit. */
static void choose_alignment(const struct geometry *g, struct advice *a)
{
	uint64_t e = g->erase.bytes, c = g->card_au.bytes;
	char eb[32], cb[32], ab[32];

	units_format_bytes(e, eb, sizeof(eb));
	units_format_bytes(c, cb, sizeof(cb));
	if (e && c && c != e) {
		uint64_t l = lcm64(e, c);

		a->align_bytes = l <= MAX_SANE_ALIGN ? l : e;
		units_format_bytes(a->align_bytes, ab, sizeof(ab));
		snprintf(a->align_reason, ADVICE_LINE,
			 "the measured erase block (%s) and the %s AU (%s) differ: "
			 "aligning to %s suits both", eb,
			 g->card_au.source == GEO_CARD ? "card-reported" : "kernel-guessed",
			 cb, ab);
	} else if (e) {
		a->align_bytes = e;
		snprintf(a->align_reason, ADVICE_LINE, "the measured erase block (%s)%s",
			 eb, c == e ? ", which the card's AU confirms" : "");
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

static void partition_advice(const struct geometry *g, struct advice *a)
{
	uint64_t A = a->align_bytes, fat_end = 0, ss = g->sector_bytes;
	uint64_t end = g->usable_bytes ? g->usable_bytes : g->device_bytes;

	if (g->fat_found)
		fat_end = g->fat_start_bytes + g->fat_size_bytes;
	a->part_start_bytes = round_up(fat_end > MIB ? fat_end : MIB, A);
	if (a->part_start_bytes >= end) {
		a->part_size_bytes = 0;
		return;
	}
	a->part_size_bytes = (end - a->part_start_bytes) / A * A;
	snprintf(a->sfdisk, ADVICE_LINE,
		 "echo 'start=%" PRIu64 ", size=%" PRIu64 ", type=83' | sfdisk DEVICE",
		 a->part_start_bytes / ss, a->part_size_bytes / ss);
}

/* FAT32 as mkfs.fat lays it out: reserved sectors, two FATs, data.  The
 * FAT length depends on the cluster count, which depends on the FAT
 * length: iterate to the fixed point, then move the data area onto the
 * alignment unit by growing the reserved area. */
static uint64_t fat_sectors_for(uint64_t total, uint64_t reserved, uint64_t spc,
				uint64_t ss)
{
	uint64_t fat = 1;

	for (int i = 0; i < 16; i++) {
		uint64_t data = total > reserved + 2 * fat ? total - reserved - 2 * fat : 0;
		uint64_t clusters = data / spc;
		uint64_t need = round_up((clusters + 2) * 4, ss) / ss;

		need = round_up(need, spc);	/* mkfs.fat aligns the FATs to clusters */
		if (need == fat)
			break;
		fat = need;
	}
	return fat;
}

bool advice_fat32_layout(uint64_t part_bytes, uint32_t sector_bytes,
			 uint64_t cluster_bytes, uint64_t align_bytes,
			 struct fat32_layout *out)
{
	uint64_t ss = sector_bytes, total = part_bytes / ss;
	uint64_t spc = cluster_bytes / ss, unit = align_bytes / ss;
	uint64_t reserved = round_up(FAT32_MIN_RESERVED, spc), fat = 0;

	if (!spc || !unit || cluster_bytes % ss || align_bytes % ss)
		return false;
	for (int i = 0; i < 16; i++) {
		uint64_t want;

		fat = fat_sectors_for(total, reserved, spc, ss);
		want = round_up(reserved + 2 * fat, unit) - 2 * fat;
		want = round_up(want, spc);
		if (want < FAT32_MIN_RESERVED)
			want += round_up(unit, spc);
		if (want == reserved)
			break;
		reserved = want;
	}
	if (reserved > 65535 || (reserved + 2 * fat) % unit ||
	    (total - reserved - 2 * fat) / spc < FAT32_MIN_CLUSTERS)
		return false;
	out->sectors_per_cluster = (uint32_t)spc;
	out->reserved_sectors = (uint32_t)reserved;
	out->fat_sectors = (uint32_t)fat;
	return true;
}

/* Cluster = the page (small writes then never share a page), 4-64 KiB;
 * smaller when the partition is too small for FAT32 at that size. */
static void fat_advice(const struct geometry *g, struct advice *a)
{
	uint64_t cluster = g->page.bytes ? g->page.bytes : 32 * 1024;
	struct fat32_layout l;

	if (cluster < 4096)
		cluster = 4096;
	if (cluster > FAT32_MAX_CLUSTER)
		cluster = FAT32_MAX_CLUSTER;
	for (; cluster >= g->sector_bytes; cluster /= 2) {
		if (advice_fat32_layout(a->part_size_bytes, g->sector_bytes, cluster,
					a->align_bytes, &l)) {
			snprintf(a->mkfs_fat, ADVICE_LINE,
				 "mkfs.fat -F 32 -S %u -s %u -R %u PARTITION",
				 g->sector_bytes, l.sectors_per_cluster,
				 l.reserved_sectors);
			return;
		}
	}
	snprintf(a->mkfs_fat, ADVICE_LINE, "(the partition is too small for an aligned FAT32)");
}

static void ext4_advice(const struct geometry *g, struct advice *a)
{
	uint64_t stride = g->page.bytes > 4096 ? g->page.bytes / 4096 : 1;

	snprintf(a->mkfs_ext4, ADVICE_LINE,
		 "mkfs.ext4 -b 4096 -E stride=%" PRIu64 ",stripe_width=%" PRIu64 " PARTITION",
		 stride, a->align_bytes / 4096);
}

/* f2fs sections are whole 2 MiB segments: the smallest section that is a
 * multiple of the alignment unit. */
static void f2fs_advice(struct advice *a)
{
	uint64_t section = lcm64(a->align_bytes, F2FS_SEGMENT);

	snprintf(a->mkfs_f2fs, ADVICE_LINE, "mkfs.f2fs -s %" PRIu64 " PARTITION",
		 section / F2FS_SEGMENT);
}

static void consequences(const struct geometry *g, struct advice *a)
{
	char n[32], m[32];

	if (g->open_linear.value > 0) {
		snprintf(n, sizeof(n), "%s%d AU%s", g->open_linear.at_least ? "at least " : "",
			 g->open_linear.value, g->open_linear.value == 1 ? "" : "s");
		add_note(a, "this card keeps %s open: %s",
			 n, g->open_linear.at_least ?
			 "many files can grow at once without slowing down" :
			 "more files growing at once than that will be slow");
	}
	if (g->open_random.value == 0 && g->open_random.source == GEO_MEASURED)
		add_note(a, "%s%s", "linear-only: random writes anywhere outside the FAT area "
			 "are expensive (each can cost a copy of a whole AU)", "");
	else if (g->open_random.value > 0 && !g->open_random.at_least &&
		 g->open_random.value < g->open_linear.value) {
		snprintf(n, sizeof(n), "%d", g->open_random.value);
		add_note(a, "only %s of the open AUs accept writes out of order%s", n,
			 ": keep random-write workloads to few files");
	}
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

void advice_compute(const struct geometry *g, struct advice *a)
{
	memset(a, 0, sizeof(*a));
	choose_alignment(g, a);
	consequences(g, a);
	if (!a->align_bytes || !g->sector_bytes)
		return;
	partition_advice(g, a);
	if (!a->part_size_bytes)
		return;
	fat_advice(g, a);
	ext4_advice(g, a);
	f2fs_advice(a);
}
