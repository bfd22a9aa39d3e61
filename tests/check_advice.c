/* check_advice.c - partition and file-system advice from geometry. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>
#include <unistd.h>

#include "advice.h"
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
	ck_assert_uint_eq(tu_number_after(a.sfdisk, "start="), a.part_start_bytes / 512);
	ck_assert_uint_eq(tu_number_after(a.sfdisk, "size="), a.part_size_bytes / 512);
	ck_assert_uint_eq(tu_number_after(a.mkfs_ext4, "stripe_width="), g.erase.bytes / 4096);
	ck_assert_uint_eq(tu_number_after(a.mkfs_ext4, "stride="), 4);
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
	ck_assert_str_eq(a.sfdisk, "");
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

/* A partition too small for 65525 clusters of one page gets smaller
 * clusters, not an invalid FAT32. */
START_TEST(test_small_partition_smaller_clusters)
{
	struct geometry g = base_geometry(4 * MIB, 32 * KIB);
	struct advice a;

	g.device_bytes = 1024 * MIB;
	advice_compute(&g, &a);
	ck_assert_uint_le(tu_number_after(a.mkfs_fat, "-s "), 16);
	ck_assert_uint_ge(tu_number_after(a.mkfs_fat, "-s "), 1);
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
	ck_assert_uint_eq(tu_number_after(a.mkfs_f2fs, "-s "), cases[_i].sections);
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

/* The real mkfs.fat, given the advised options, puts the data area on
 * the alignment unit. */
START_TEST(test_mkfs_fat_follows_advice)
{
	static const uint64_t erases[] = { 2 * MIB, 3 * MIB, 4 * MIB };
	struct geometry g = base_geometry(erases[_i], 16 * KIB);
	char path[] = "/var/tmp/flashprobe-fat-XXXXXX", cmd[512];
	unsigned char boot[512];
	struct advice a;
	uint64_t data;
	FILE *f;
	int fd;

	g.device_bytes = 2200 * MIB;
	advice_compute(&g, &a);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)a.part_size_bytes), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%.*s%s >/dev/null 2>&1",
		 (int)(strstr(a.mkfs_fat, "PARTITION") - a.mkfs_fat), a.mkfs_fat, path);
	ck_assert_msg(system(cmd) == 0, "'%s' failed", cmd);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(boot, 1, sizeof(boot), f), sizeof(boot));
	fclose(f);
	unlink(path);
	/* reserved sectors at 14, FAT count at 16, FAT32 FAT length at 36 */
	data = boot[14] | boot[15] << 8;
	data += (uint64_t)boot[16] * (boot[36] | boot[37] << 8 | boot[38] << 16 |
				      (uint64_t)boot[39] << 24);
	ck_assert_uint_eq(data * 512 % a.align_bytes, 0);
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
	tcase_add_test(tc, test_small_partition_smaller_clusters);
	tcase_add_loop_test(tc, test_f2fs_sections, 0, 6);
	tcase_add_test(tc, test_consequences);
	if (system("command -v mkfs.fat >/dev/null 2>&1") == 0)
		tcase_add_loop_test(tc, test_mkfs_fat_follows_advice, 0, 3);
	else
		tu_skip("advice: mkfs.fat follows the advice", "mkfs.fat not installed");
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
