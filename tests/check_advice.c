/* check_advice.c - partition and file-system advice from geometry. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>
#include <unistd.h>

#include "advice.h"
#include "report_advice.h"
#include "testutil.h"
#include "tests.h"

#define KIB 1024ULL
#define MIB (1024ULL * 1024)

static struct geometry base_geometry(uint64_t erase, uint64_t page)
{
	struct geometry g;

	memset(&g, 0, sizeof(g));
	g.device_bytes = 3800 * MIB + 512 * 7;	/* not a multiple of anything */
	g.sector_bytes = 512;
	g.erase = (struct geo_size){ erase, 0.95, GEO_MEASURED };
	g.page = (struct geo_size){ page, 0.9, GEO_MEASURED };
	g.open_linear.value = g.open_random.value = -1;
	return g;
}

static const char *line_of(const struct advice *a, const char *purpose)
{
	const struct advice_command *c = advice_command(a, purpose);

	ck_assert_msg(c != NULL, "no %s command", purpose);
	return c->line;
}

/* Across erase sizes, FAT areas and disagreeing AUs: the partition starts
 * on the alignment unit, after the FAT area, and spans whole units. */
START_TEST(test_partition_alignment)
{
	static const uint64_t erases[] = { 128 * KIB, 512 * KIB, 1536 * KIB, 2 * MIB,
					   3 * MIB, 4 * MIB, 6 * MIB, 12 * MIB, 24 * MIB };
	struct geometry g = base_geometry(erases[_i % 9], 16 * KIB);
	struct advice a;

	if (_i >= 9) {
		g.fat_tested = g.fat_found = true;
		g.fat_start_bytes = 0;
		g.fat_size_bytes = (uint64_t)(_i - 8) * g.erase.bytes;
	}
	advice_compute(&g, &a);
	ck_assert_uint_eq(a.align_bytes, g.erase.bytes);
	ck_assert_uint_eq(a.part_start_bytes % a.align_bytes, 0);
	ck_assert_uint_ge(a.part_start_bytes, MIB);
	ck_assert_uint_ge(a.part_start_bytes, g.fat_start_bytes + g.fat_size_bytes);
	ck_assert_uint_eq(a.part_size_bytes % a.align_bytes, 0);
	ck_assert_uint_le(a.part_start_bytes + a.part_size_bytes, g.device_bytes);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "partition"), "start="),
			  a.part_start_bytes / 512);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "partition"), "size="),
			  a.part_size_bytes / 512);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "ext4"), "stripe_width="),
			  g.erase.bytes / 4096);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "ext4"), "stride="), 4);
}
END_TEST

START_TEST(test_card_au_disagreement)
{
	struct geometry g = base_geometry(2 * MIB, 8 * KIB);
	struct advice a;

	g.card_au = (struct geo_size){ 4 * MIB, 1.0, GEO_CARD };
	advice_compute(&g, &a);
	ck_assert_uint_eq(a.align_bytes, 4 * MIB);
	ck_assert_ptr_nonnull(strstr(a.align_reason, "suits both"));
	g.erase.bytes = 3 * MIB;
	advice_compute(&g, &a);
	ck_assert_uint_eq(a.align_bytes, 12 * MIB);
	g.erase.bytes = 4 * MIB;
	advice_compute(&g, &a);
	ck_assert_uint_eq(a.align_bytes, 4 * MIB);
	ck_assert_ptr_nonnull(strstr(a.align_reason, "confirms"));
}
END_TEST

/* Without a measured erase block, only a card-reported AU is used; a
 * kernel guess is not geometry. */
START_TEST(test_unknown_geometry)
{
	struct geometry g = base_geometry(0, 0);
	struct advice a;

	g.card_au = (struct geo_size){ 4 * MIB, 0.3, GEO_KERNEL_GUESS };
	advice_compute(&g, &a);
	ck_assert_uint_eq(a.align_bytes, 0);
	ck_assert_uint_eq(a.ncommands, 0);
	ck_assert_ptr_nonnull(strstr(a.align_reason, "no erase block"));
	g.card_au.source = GEO_CARD;
	advice_compute(&g, &a);
	ck_assert_uint_eq(a.align_bytes, 4 * MIB);
}
END_TEST

/* The FAT32 data area lands on the alignment unit, with enough clusters. */
START_TEST(test_fat32_layout)
{
	static const uint64_t parts[] = { 2048 * MIB, 3796 * MIB, 30000 * MIB, 120000 * MIB };
	static const uint64_t units[] = { 128 * KIB, 2 * MIB, 3 * MIB, 4 * MIB, 24 * MIB };
	struct fat32_layout l;

	for (int p = 0; p < 4; p++)
		for (int u = 0; u < 5; u++) {
			uint64_t data, clusters;

			ck_assert(advice_fat32_layout(parts[p], 512, 16 * KIB, units[u], &l));
			data = l.reserved_sectors + 2ULL * l.fat_sectors;
			ck_assert_uint_eq(data * 512 % units[u], 0);
			ck_assert_uint_eq(l.sectors_per_cluster, 32);
			clusters = (parts[p] / 512 - data) / l.sectors_per_cluster;
			ck_assert_uint_ge(clusters, 65525);
			/* the FATs hold every cluster */
			ck_assert_uint_ge((uint64_t)l.fat_sectors * 512 / 4, clusters + 2);
		}
}
END_TEST

/* The FAT line, FAT32's or FAT16's. */
static const struct advice_command *fat_command(const struct advice *a)
{
	const struct advice_command *c = advice_command(a, "fat32");

	return c ? c : advice_command(a, "fat16");
}

/* A partition too small for 65525 clusters of one page gets FAT16 with
 * clusters of one page (FAT32's would have to be smaller), in a FAT16
 * partition (type e). */
START_TEST(test_small_partition_fat16)
{
	struct geometry g = base_geometry(4 * MIB, 32 * KIB);
	struct advice a;

	g.device_bytes = 1024 * MIB;
	advice_compute(&g, &a);
	ck_assert_ptr_null(advice_command(&a, "fat32"));
	ck_assert_uint_eq(tu_number_after(line_of(&a, "fat16"), "-s "), 64);
	ck_assert_ptr_nonnull(strstr(line_of(&a, "fat16"), "mkfs.fat -F 16 "));
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "partition")->stdin_text, "type=e\n"));
	ck_assert(a.fat_ok && a.fat16);
	ck_assert_uint_eq(a.fat.root_sectors, 64);	/* 512 entries, whole clusters */
	/* large enough for FAT32 with 32 KiB clusters: FAT32 */
	g.device_bytes = 4096 * MIB;
	advice_compute(&g, &a);
	ck_assert_ptr_null(advice_command(&a, "fat16"));
	ck_assert_uint_eq(tu_number_after(line_of(&a, "fat32"), "-s "), 64);
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "partition")->stdin_text, "type=c\n"));
}
END_TEST

/* FAT16's clusters stop at 32 KiB (FAT16 up to 2 GiB, as the SD spec has
 * it): a 3 GiB partition under a 64 KiB page got FAT16 with 64 KiB
 * clusters, which many hosts do not read; now FAT32 with 32 KiB ones.
 * 1.5 GiB still gets FAT16, with 32 KiB clusters. */
START_TEST(test_fat16_clusters_at_most_32k)
{
	struct geometry g = base_geometry(24 * MIB, 64 * KIB);
	struct advice_request q = { .part_bytes = 3072 * MIB, .label = ADVICE_LABEL_DOS };
	struct advice a;

	g.device_bytes = 4096 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_null(advice_command(&a, "fat16"));
	ck_assert_uint_eq(tu_number_after(line_of(&a, "fat32"), "-s "), 64);
	q.part_bytes = 1536 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "fat16"), "-s "), 64);
}
END_TEST

/* A FAT whose aligned data area would hold less than half the partition
 * is no advice (a 6 MiB partition on 4 MiB units kept 2 MiB in 512-byte
 * clusters: check's fix for a FAT12 that had all of it); 8 MiB keeps half. */
START_TEST(test_fat_keeps_half_the_partition)
{
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice_request q = { .part_bytes = 6 * MIB, .label = ADVICE_LABEL_DOS,
				    .exact_size = true };
	struct advice a;

	g.device_bytes = 64 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert(!a.fat_ok);
	ck_assert_ptr_null(fat_command(&a));
	q.part_bytes = 8 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert(a.fat_ok);
	ck_assert_uint_ge(a.fat.clusters * a.fat.sectors_per_cluster * 512ULL * 2, 8 * MIB);
}
END_TEST

static bool has_note(const struct advice *a, const char *text)
{
	for (size_t i = 0; i < a->nnotes; i++)
		if (strstr(a->notes[i], text))
			return true;
	return false;
}

/* A size below one unit is said to be that (it said "the device is too
 * small" without a device, and with one gave the rest of it). */
START_TEST(test_size_below_a_unit)
{
	struct geometry g = base_geometry(3 * MIB, 16 * KIB);
	struct advice_request q = { .part_bytes = MIB, .label = ADVICE_LABEL_DOS };
	struct advice a;

	for (int with_device = 0; with_device < 2; with_device++) {
		g.device_bytes = with_device ? 1024 * MIB : 0;
		advice_compute_for(&g, &q, &a);
		ck_assert_ptr_null(advice_command(&a, "partition"));
		ck_assert_msg(has_note(&a, "the partition size asked for (1MiB) is less than "
				       "one 3MiB alignment unit"), "%s", a.nnotes ? a.notes[0] : "");
	}
}
END_TEST

/* The reasons describe the clusters the line makes: once they are made
 * smaller (a partition too small for FAT16's 4087 of one page), no reason
 * still speaks of clusters of one page. */
START_TEST(test_smaller_clusters_reason)
{
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice_request q = { .part_bytes = 48 * MIB, .label = ADVICE_LABEL_DOS };
	const struct advice_command *c;
	struct advice a;

	g.device_bytes = 1024 * MIB;
	advice_compute_for(&g, &q, &a);
	c = advice_command(&a, "fat16");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(tu_number_after(c->line, "-s "), 16);
	ck_assert_ptr_null(strstr(c->why, "clusters of 16KiB, one page"));
	ck_assert_ptr_nonnull(strstr(c->why, "clusters of 8KiB: 16KiB ones would be fewer "
				     "than FAT16's 4087"));
}
END_TEST

/* The FAT16 data area lands on the alignment unit (after the reserved
 * sectors, two FATs and the root directory), with a count of clusters
 * FAT16 accepts that the FATs hold. */
START_TEST(test_fat16_layout)
{
	static const uint64_t parts[] = { 200 * MIB, 500 * MIB, 1000 * MIB, 2000 * MIB };
	static const uint64_t units[] = { 128 * KIB, 2 * MIB, 3 * MIB, 4 * MIB, 24 * MIB };
	static const uint32_t sectors[] = { 512, 4096 };

	for (int p = 0; p < 4; p++)
		for (int u = 0; u < 5; u++)
			for (int z = 0; z < 2; z++) {
				uint64_t cluster = 32 * KIB, data, clusters, ss = sectors[z];
				struct fat32_layout l;

				ck_assert(advice_fat16_layout(parts[p], sectors[z], cluster,
							      units[u], &l));
				data = l.reserved_sectors + 2ULL * l.fat_sectors + l.root_sectors;
				ck_assert_uint_eq(data * ss % units[u], 0);
				ck_assert_uint_eq(l.root_sectors * ss % cluster, 0);
				ck_assert_uint_ge(l.root_sectors * ss, 512 * 32);
				clusters = (parts[p] / ss / 32 * 32 - data) / l.sectors_per_cluster;
				ck_assert_uint_eq(clusters, l.clusters);
				ck_assert_uint_ge(clusters, 4087);
				ck_assert_uint_le(clusters, 65524);
				ck_assert_uint_ge((uint64_t)l.fat_sectors * ss / 2, clusters + 2);
			}
	/* 65536 clusters of 16 KiB do not fit FAT16; 2000 clusters are too few */
	{
		struct fat32_layout l;

		ck_assert(!advice_fat16_layout(1024 * MIB + 64 * MIB, 512, 16 * KIB, 4 * MIB, &l));
		ck_assert(!advice_fat16_layout(2000 * 16 * KIB, 512, 16 * KIB, 4 * MIB, &l));
	}
}
END_TEST

START_TEST(test_f2fs_sections)
{
	static const struct { uint64_t erase, sections; } cases[] = {
		{ 512 * KIB, 1 }, { 2 * MIB, 1 }, { 4 * MIB, 2 }, { 3 * MIB, 3 },
		{ 12 * MIB, 6 }, { 1536 * KIB, 3 },
	};
	struct geometry g = base_geometry(cases[_i].erase, 16 * KIB);
	struct advice a;

	advice_compute(&g, &a);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "f2fs"), "-s "), cases[_i].sections);
	/* fsck.f2fs 1.15's one complaint on such sections is announced */
	ck_assert_int_eq(strstr(advice_command(&a, "f2fs")->why, "segment_count matched") != NULL,
			 cases[_i].sections > 1);
}
END_TEST

START_TEST(test_consequences)
{
	struct geometry g = base_geometry(2 * MIB, 8 * KIB);
	struct advice a;
	bool linear_only = false, open = false;

	g.open_linear = (struct geo_count){ 1, false, 0.9, GEO_MEASURED };
	g.open_random = (struct geo_count){ 0, false, 0.9, GEO_MEASURED };
	advice_compute(&g, &a);
	for (size_t i = 0; i < a.nnotes; i++) {
		linear_only |= strstr(a.notes[i], "linear-only") != NULL;
		open |= strstr(a.notes[i], "keeps 1 AU open") != NULL;
	}
	ck_assert(linear_only && open);
	g.open_linear = (struct geo_count){ 32, true, 0.9, GEO_MEASURED };
	g.open_random = (struct geo_count){ 32, true, 0.9, GEO_MEASURED };
	advice_compute(&g, &a);
	ck_assert_uint_eq(a.nnotes, 1);
	ck_assert_ptr_nonnull(strstr(a.notes[0], "at least 32"));
}
END_TEST

/* Sectors per cluster are a power of two mkfs.fat accepts, at most the
 * page and 64 KiB, for every page size (the 48 KiB page of sandisk-24m
 * once gave -s 96). */
START_TEST(test_fat32_cluster_power_of_two)
{
	static const uint64_t pages[] = { 2 * KIB, 4 * KIB, 8 * KIB, 12 * KIB, 16 * KIB,
					  24 * KIB, 32 * KIB, 48 * KIB, 128 * KIB };
	struct geometry g = base_geometry(24 * MIB, pages[_i]);
	struct advice a;
	uint64_t spc;

	advice_compute(&g, &a);
	ck_assert_ptr_nonnull(fat_command(&a));
	spc = tu_number_after(fat_command(&a)->line, "-s ");
	ck_assert_uint_eq(spc & (spc - 1), 0);
	ck_assert_uint_le(spc, 128);
	ck_assert_uint_le(spc * 512, pages[_i] < 4 * KIB ? 4 * KIB : pages[_i]);
	ck_assert_uint_eq(spc, a.fat.sectors_per_cluster);
	/* the size it was computed for is named */
	ck_assert_ptr_nonnull(strstr(fat_command(&a)->why, a.sized_for));
}
END_TEST

/* An AU of two erase blocks: sections of one erase block, zones of one AU. */
START_TEST(test_f2fs_zone_for_au)
{
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice a;

	g.card_au = (struct geo_size){ 8 * MIB, 1.0, GEO_CARD };
	advice_compute(&g, &a);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "f2fs"), "-s "), 2);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "f2fs"), "-z "), 2);
}
END_TEST

/* A GPT is chosen above 2 TiB or when asked; the partition then stays
 * clear of the backup table at the end. */
START_TEST(test_label_choice)
{
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice_request q = { .label = ADVICE_LABEL_AUTO };
	struct advice a;

	advice_compute_for(&g, &q, &a);
	ck_assert_str_eq(a.label, "dos");
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "partition")->stdin_text, "label: dos\n"));
	ck_assert_ptr_nonnull(strstr(a.warning, "replaces the partition table"));
	g.device_bytes = 4 * 1024 * 1024 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert_str_eq(a.label, "gpt");
	ck_assert_uint_le(a.part_start_bytes + a.part_size_bytes, g.device_bytes - 33 * 512);
	g.device_bytes = 8 * 1024 * MIB;
	q.label = ADVICE_LABEL_GPT;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "partition")->stdin_text, "label: gpt\n"));
	ck_assert_uint_eq(a.part_size_bytes, g.device_bytes - 8 * MIB);
	q.part_bytes = 1000 * MIB + 5;
	advice_compute_for(&g, &q, &a);
	ck_assert_uint_eq(a.part_size_bytes, 1000 * MIB);
}
END_TEST

/* Paths are pasted as one shell word each: quoted when a shell would
 * split or run anything in them, as they are otherwise. */
START_TEST(test_paths_quoted)
{
	static const struct { const char *device, *want; } cases[] = {
		{ "/dev/sdb", "sfdisk /dev/sdb; mkfs.ext4 /dev/sdb1" },
		{ "/dev/x/my card", "sfdisk '/dev/x/my card'; mkfs.ext4 PARTITION" },
		{ "/dev/x;id", "sfdisk '/dev/x;id'; mkfs.ext4 PARTITION" },
		{ "/dev/$(id)", "sfdisk '/dev/$(id)'; mkfs.ext4 PARTITION" },
		{ "/dev/it's", "sfdisk '/dev/it'\\''s'; mkfs.ext4 PARTITION" },
		{ "/dev/`id`", "sfdisk '/dev/`id`'; mkfs.ext4 PARTITION" },
	};
	char out[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		report_advice_substitute("sfdisk DEVICE; mkfs.ext4 PARTITION", cases[i].device,
					 out, sizeof(out));
		ck_assert_str_eq(out, cases[i].want);
	}
	ck_assert(!report_shell_quote("/dev/a b", out, 9));	/* needs 10 and the NUL */
	ck_assert_str_eq(out, "");
}
END_TEST

/* The partition is named after the kernel's node, never by appending to a
 * /dev/disk/by-id name (udev calls its partition ...-part1). */
START_TEST(test_partition_name)
{
	char out[256], dir[] = "/tmp/fp-byid-XXXXXX", link[64];

	ck_assert(report_advice_first_partition("/dev/sdb", out, sizeof(out)));
	ck_assert_str_eq(out, "/dev/sdb1");
	ck_assert(report_advice_first_partition("/dev/mmcblk0", out, sizeof(out)));
	ck_assert_str_eq(out, "/dev/mmcblk0p1");
	ck_assert(report_advice_first_partition("/dev/loop0", out, sizeof(out)));
	ck_assert_str_eq(out, "/dev/loop0p1");
	ck_assert(!report_advice_first_partition("/dev/disk/by-id/usb-Card_abcd", out,
						 sizeof(out)));
	ck_assert(!report_advice_first_partition("/dev/dm-0", out, sizeof(out)));
	/* check's fixes name the partition they are about */
	ck_assert(report_advice_partition_node("/dev/sdb", 2, out, sizeof(out)));
	ck_assert_str_eq(out, "/dev/sdb2");
	ck_assert(report_advice_partition_node("/dev/mmcblk0", 5, out, sizeof(out)));
	ck_assert_str_eq(out, "/dev/mmcblk0p5");
	/* a link resolves to its kernel node (here /dev/null, which exists) */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/usb-abcd", dir);
	ck_assert_int_eq(symlink("/dev/null", link), 0);
	ck_assert(report_advice_first_partition(link, out, sizeof(out)));
	ck_assert_str_eq(out, "/dev/null1");
	unlink(link);
	rmdir(dir);
}
END_TEST

/* Placeholders left in the lines are named once, with what replaces them. */
START_TEST(test_placeholder_note)
{
	struct run_result r;
	const char *p;

	tu_run(&r, (const char *const[]){ "advise", "-e", "4M", "--size", "1G", NULL });
	ck_assert_int_eq(r.status, 0);
	p = strstr(r.out, "replace DEVICE with");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(strstr(p, "PARTITION with"));
	ck_assert_ptr_null(strstr(p + 1, "replace DEVICE"));
	tu_run_free(&r);
}
END_TEST

/* On a used card: sfdisk also wipes the old signatures inside the new
 * partition, and mkfs.f2fs overwrites a file system it finds there. */
START_TEST(test_used_card)
{
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice a;

	advice_compute(&g, &a);
	ck_assert_ptr_nonnull(strstr(line_of(&a, "partition"),
				     "sfdisk --wipe always --wipe-partitions always DEVICE"));
	ck_assert_ptr_nonnull(strstr(line_of(&a, "f2fs"), "mkfs.f2fs -f "));
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "ext4")->why, "Proceed anyway?"));
}
END_TEST

/* Units the reserved sectors cannot pad the FAT area to (64 MiB and more
 * on 512-byte sectors): no FAT32 with clusters below the page, which the
 * old advice gave for a false reason and check then called a misfit. */
START_TEST(test_fat32_unit_out_of_reach)
{
	static const uint64_t units[] = { 64 * MIB, 96 * MIB, 128 * MIB };
	struct geometry g = base_geometry(units[_i], 16 * KIB);
	struct advice a;

	g.device_bytes = 8192 * MIB;
	advice_compute(&g, &a);
	ck_assert(!a.fat_ok);
	ck_assert_ptr_null(advice_command(&a, "fat32"));
	ck_assert_ptr_nonnull(strstr(a.notes[a.nnotes - 1], "FAT32 is not advised"));
	ck_assert_ptr_nonnull(strstr(a.notes[a.nnotes - 1], "65535"));
	ck_assert_ptr_null(strstr(advice_command(&a, "exfat")->why, "FAT32 or f2fs"));
	/* 4096-byte sectors reach it */
	g.sector_bytes = 4096;
	advice_compute(&g, &a);
	ck_assert_uint_eq(tu_number_after(line_of(&a, "fat32"), "-s "), 4);
}
END_TEST

/* mkfs.exfat fails ("boundary alignment is too big") where the boot
 * region and the FAT, each rounded up to the boundary, leave nothing: a
 * partition of one or two units gets a note instead of that line; three
 * units are enough. */
START_TEST(test_exfat_too_small_for_boundary)
{
	static const struct { uint64_t unit, part; bool ok; } cases[] = {
		{ 64 * MIB, 128 * MIB, false }, { 64 * MIB, 64 * MIB, false },
		{ 16 * MIB, 32 * MIB, false }, { 4 * MIB, 8 * MIB, false },
		{ 64 * MIB, 192 * MIB, true }, { 4 * MIB, 12 * MIB, true },
	};
	struct geometry g = base_geometry(cases[_i].unit, 16 * KIB);
	struct advice_request q = { .part_bytes = cases[_i].part, .label = ADVICE_LABEL_GPT };
	struct advice a;
	bool noted = false;

	advice_compute_for(&g, &q, &a);
	ck_assert_uint_eq(a.part_size_bytes, cases[_i].part);
	for (size_t i = 0; i < a.nnotes; i++)
		noted |= strncmp(a.notes[i], "exFAT: ", 7) == 0;
	ck_assert_int_eq(advice_command(&a, "exfat") != NULL, cases[_i].ok);
	ck_assert_int_eq(noted, !cases[_i].ok);
}
END_TEST

/* check's fix for a partition that stays where it is: formatted at its
 * real size (the FAT32 reserved sectors depend on it), with a Linux type
 * when its table is rewritten for ext4. */
START_TEST(test_exact_size_request)
{
	struct geometry g = base_geometry(24 * MIB, 8 * KIB);
	struct advice_request q = { .part_bytes = 4072 * MIB, .label = ADVICE_LABEL_DOS,
				    .exact_size = true, .linux_type = true };
	struct advice a;

	g.device_bytes = 4096 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert_uint_eq(a.part_size_bytes, 4072 * MIB);
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "partition")->stdin_text, "type=83"));
	q.exact_size = false;
	advice_compute_for(&g, &q, &a);
	ck_assert_uint_eq(a.part_size_bytes, 4056 * MIB);
}
END_TEST

/* check's fix for an exFAT partition gets exFAT's type whatever the
 * size (it got FAT16's e or FAT32's c); the advice's own partition line
 * says which type exFAT needs. */
START_TEST(test_exfat_type_request)
{
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice_request q = { .part_bytes = 300 * MIB, .label = ADVICE_LABEL_DOS,
				    .exact_size = true, .exfat_type = true };
	struct advice a;

	g.device_bytes = 2048 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "partition")->stdin_text, "type=7\n"));
	q.part_bytes = 1500 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "partition")->stdin_text, "type=7\n"));
	q.exfat_type = false;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_nonnull(strstr(advice_command(&a, "partition")->stdin_text, "type=c\n"));
	ck_assert_msg(strstr(advice_command(&a, "partition")->why, "for exFAT use type=7"),
		      "%s", advice_command(&a, "partition")->why);
}
END_TEST


/* An MBR's sector numbers are 32-bit: its partition ends within 2^32 - 1
 * sectors, with or without a device, or sfdisk refuses the line ("No
 * free sectors available").  Without a device, a partition that does
 * not fit gets GPT unless dos is asked for; then it is cut, with a note
 * (none where the cut costs less than a unit). */
START_TEST(test_mbr_limit)
{
	static const struct {
		uint64_t device, part;
		enum advice_label label;
		const char *want;
		bool cut;
	} cases[] = {
		{ 0, 2048 * 1024 * MIB, ADVICE_LABEL_AUTO, "gpt", false },
		{ 0, 2046 * 1024 * MIB, ADVICE_LABEL_AUTO, "dos", false },
		{ 0, 3072 * 1024 * MIB, ADVICE_LABEL_DOS, "dos", true },
		{ 0, 2048 * 1024 * MIB, ADVICE_LABEL_DOS, "dos", true },
		{ 3072 * 1024 * MIB, 0, ADVICE_LABEL_DOS, "dos", true },
		{ 2048 * 1024 * MIB, 0, ADVICE_LABEL_AUTO, "dos", false },
	};
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice_request q = { .part_bytes = cases[_i].part, .label = cases[_i].label };
	struct advice a;

	g.device_bytes = cases[_i].device;
	advice_compute_for(&g, &q, &a);
	ck_assert_str_eq(a.label, cases[_i].want);
	if (!strcmp(a.label, "dos"))
		ck_assert_uint_le(a.part_start_bytes + a.part_size_bytes, 0xffffffffULL * 512);
	else
		ck_assert_uint_eq(a.part_size_bytes, cases[_i].part);
	ck_assert_int_eq(has_note(&a, "reaches only the first 2TiB"), cases[_i].cut);
	ck_assert_uint_eq(a.part_size_bytes % (4 * MIB), 0);
}
END_TEST

/* FAT32 counts sectors in 32 bits: past that mkfs.fat leaves the rest
 * unused and its FAT length no longer matches -R, so the data lands off
 * the unit.  exFAT is advised instead; 4096-byte sectors reach further. */
START_TEST(test_fat32_sector_limit)
{
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice_request q = { .part_bytes = 3072 * 1024 * MIB, .label = ADVICE_LABEL_GPT };
	struct advice a;

	g.device_bytes = 0;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_null(advice_command(&a, "fat32"));
	ck_assert(has_note(&a, "more than FAT32's 4294967295 sectors"));
	ck_assert(has_note(&a, "use exFAT"));
	ck_assert_ptr_nonnull(advice_command(&a, "exfat"));
	g.sector_bytes = 4096;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_nonnull(advice_command(&a, "fat32"));
	q.part_bytes = 2047 * 1024 * MIB;	/* just within, on 512-byte sectors */
	g.sector_bytes = 512;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_nonnull(advice_command(&a, "fat32"));
}
END_TEST

/* Where neither FAT nor exFAT fits (one unit: nothing is left after the
 * data start), FAT32's note does not send the user to exFAT, whose own
 * note says it does not fit; an 8MiB partition still gets FAT16. */
START_TEST(test_small_partition_notes_agree)
{
	struct geometry g = base_geometry(4 * MIB, 16 * KIB);
	struct advice_request q = { .part_bytes = 4 * MIB, .label = ADVICE_LABEL_DOS };
	struct advice a;

	g.device_bytes = 0;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_null(advice_command(&a, "fat32"));
	ck_assert_ptr_null(advice_command(&a, "fat16"));
	ck_assert_ptr_null(advice_command(&a, "exfat"));
	ck_assert(has_note(&a, "exFAT: "));
	ck_assert(!has_note(&a, "use exFAT"));
	ck_assert(has_note(&a, "exFAT does not fit either"));
	q.part_bytes = 8 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_nonnull(advice_command(&a, "fat16"));
	ck_assert(!has_note(&a, "use exFAT"));
	q.part_bytes = 200 * MIB;	/* exFAT fits: FAT32's note points to it */
	g.erase.bytes = 64 * MIB;
	advice_compute_for(&g, &q, &a);
	ck_assert_ptr_nonnull(advice_command(&a, "exfat"));
	ck_assert(!has_note(&a, "exFAT does not fit either"));
}
END_TEST

/* ext4's stride is the page in whole 4KiB blocks: a 6KiB page is not
 * (it was explained as "not larger than a 4KiB block"), a 12KiB one is
 * three, a 2KiB one is within one. */
START_TEST(test_ext4_stride_reason)
{
	static const struct { uint64_t page, stride; const char *why; } cases[] = {
		{ 6 * KIB, 1, "not a whole number of 4KiB blocks" },
		{ 12 * KIB, 1, "reduced to divide the stripe" },
		{ 16 * KIB, 4, "one 16KiB page is 4 blocks" },
		{ 2 * KIB, 1, "not larger than a 4KiB block" },
	};
	struct geometry g = base_geometry(4 * MIB, cases[_i].page);
	const struct advice_command *c;
	struct advice a;

	advice_compute(&g, &a);
	c = advice_command(&a, "ext4");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(tu_number_after(c->line, "stride="), cases[_i].stride);
	ck_assert_msg(strstr(c->why, cases[_i].why), "%s", c->why);
}
END_TEST

/* An erase size that is no multiple of 4KiB gave cut ext4 stripes and
 * --boundary-align=0K: advise and check refuse it in one line. */
START_TEST(test_erase_not_4k)
{
	static const char *const sizes[] = { "6K", "10K", "512" };
	const char *e = sizes[_i % 3];
	struct run_result r;

	if (_i < 3)
		tu_run(&r, (const char *const[]){ "advise", "-e", e, "--size", "1G", NULL });
	else
		tu_run(&r, (const char *const[]){ "check", "-e", e, "sim:seed", NULL });
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "is not a multiple of 4KiB"));
	ck_assert_uint_eq(tu_count_lines(r.err), 1);
	tu_run_free(&r);
}
END_TEST

Suite *advice_suite(void)
{
	Suite *s = suite_create("advice");
	TCase *tc = tcase_create("advice");

	tcase_add_loop_test(tc, test_partition_alignment, 0, 14);
	tcase_add_test(tc, test_card_au_disagreement);
	tcase_add_test(tc, test_unknown_geometry);
	tcase_add_test(tc, test_fat32_layout);
	tcase_add_test(tc, test_small_partition_fat16);
	tcase_add_test(tc, test_size_below_a_unit);
	tcase_add_test(tc, test_fat16_clusters_at_most_32k);
	tcase_add_test(tc, test_fat_keeps_half_the_partition);
	tcase_add_test(tc, test_fat16_layout);
	tcase_add_loop_test(tc, test_mbr_limit, 0, 6);
	tcase_add_test(tc, test_fat32_sector_limit);
	tcase_add_test(tc, test_small_partition_notes_agree);
	tcase_add_loop_test(tc, test_ext4_stride_reason, 0, 4);
	tcase_add_test(tc, test_smaller_clusters_reason);
	tcase_add_loop_test(tc, test_f2fs_sections, 0, 6);
	tcase_add_test(tc, test_consequences);
	tcase_add_loop_test(tc, test_fat32_cluster_power_of_two, 0, 9);
	tcase_add_test(tc, test_f2fs_zone_for_au);
	tcase_add_test(tc, test_label_choice);
	tcase_add_test(tc, test_paths_quoted);
	tcase_add_test(tc, test_partition_name);
	tcase_add_test(tc, test_placeholder_note);
	tcase_add_test(tc, test_used_card);
	tcase_add_loop_test(tc, test_fat32_unit_out_of_reach, 0, 3);
	tcase_add_loop_test(tc, test_erase_not_4k, 0, 6);
	tcase_add_loop_test(tc, test_exfat_too_small_for_boundary, 0, 6);
	tcase_add_test(tc, test_exact_size_request);
	tcase_add_test(tc, test_exfat_type_request);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
