/* check_layout.c - flashprobe check on layouts with known flaws, made by
 * the standard tools, and on malformed tables and file systems built
 * here byte by byte.  A flawed layout must get exactly its flaw; each
 * malformed input exactly one clear line, exit status 0, no crash (the
 * suite also runs under ASan and UBSan) and no hang (Check's timeout). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>

#include "jsonv.h"
#include "layoutcheck.h"
#include "report_advice.h"
#include "report_check.h"
#include "sysinfo.h"
#include "testutil.h"
#include "tests.h"

#define KIB ((uint64_t)1024)
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)

/* ---- building images ---- */

static char *new_image(uint64_t size)
{
	char *path = tu_sparse_file(tu_disk_dir(), size);

	ck_assert_ptr_nonnull(path);
	return path;
}

static void drop(char *path)
{
	unlink(path);
	free(path);
}

static void put(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* One MBR (or EBR) entry in slot, sectors relative as the caller wants. */
static void mbr_entry(unsigned char *s, int slot, uint8_t type, uint64_t lba, uint64_t count)
{
	unsigned char *e = s + 446 + 16 * slot;

	e[4] = type;
	put(e + 8, lba, 4);
	put(e + 12, count, 4);
	put(s + 510, 0xaa55, 2);
}

static void write_sector(const char *image, uint64_t lba, const unsigned char *s)
{
	ck_assert_int_eq(tu_write_at(image, lba * 512, s, 512), 0);
}

/* ---- running check ---- */

struct checked {
	struct jsonv *doc;
	size_t problems;	/* table and partition problems together */
	char all[8192];		/* every problem, one per line */
};

static void collect(const struct jsonv *list, struct checked *c)
{
	for (size_t i = 0; i < jsonv_len(list); i++) {
		size_t n = strlen(c->all);

		snprintf(c->all + n, sizeof(c->all) - n, "%s\n", jsonv_at(list, i)->string);
		c->problems++;
	}
}

/* check --json with opts (NULL-terminated) on image. */
static void run_check_opts(const char *image, const char *const *opts, struct checked *c)
{
	const char *argv[12] = { "check", "--json", "--no-realtime" };
	size_t n = 3;
	const struct jsonv *parts;
	struct run_result r;

	while (*opts && n < 10)
		argv[n++] = *opts++;
	argv[n++] = image;
	argv[n] = NULL;
	memset(c, 0, sizeof(*c));
	tu_run(&r, argv);
	ck_assert_msg(r.status == 0, "check exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	c->doc = jsonv_parse(r.out);
	ck_assert_msg(c->doc != NULL, "not one JSON document: %s", r.out);
	collect(jsonv_get(c->doc, "check.problems"), c);
	parts = jsonv_get(c->doc, "check.partitions");
	for (size_t i = 0; i < jsonv_len(parts); i++)
		collect(jsonv_get(jsonv_at(parts, i), "problems"), c);
	tu_run_free(&r);
}

/* check --json on image; erase or page NULL: check times it with a
 * read-only align run (--no-realtime keeps a non-root run's notice off
 * stderr). */
static void run_check_page(const char *image, const char *erase, const char *page,
			   struct checked *c)
{
	const char *opts[5] = { NULL };
	size_t n = 0;

	if (erase) {
		opts[n++] = "--erasesize";
		opts[n++] = erase;
	}
	if (page) {
		opts[n++] = "--page";
		opts[n++] = page;
	}
	run_check_opts(image, opts, c);
}

static void run_check(const char *image, const char *erase, struct checked *c)
{
	run_check_page(image, erase, NULL, c);
}

static const struct jsonv *partition(const struct checked *c, size_t i)
{
	const struct jsonv *parts = jsonv_get(c->doc, "check.partitions");

	ck_assert_uint_gt(jsonv_len(parts), i);
	return jsonv_at(parts, i);
}

/* Exactly one problem, and it says what. */
static void expect_one(const struct checked *c, const char *words)
{
	ck_assert_msg(c->problems == 1, "%zu problems, want one with '%s':\n%s", c->problems,
		      words, c->all);
	ck_assert_msg(strstr(c->all, words), "the problem does not say '%s': %s", words, c->all);
	ck_assert_msg(!strchr(c->all, '\n') || strchr(c->all, '\n')[1] == '\0',
		      "more than one line");
}

/* ---- flawed layouts made by the real tools ---- */

static void tool_ok(const char *const *argv, const char *input)
{
	struct run_result r;

	tu_run_tool(&r, argv, input);
	ck_assert_msg(r.status == 0, "%s failed: %s%s", argv[0], r.out, r.err);
	tu_run_free(&r);
}

/* A table by sfdisk, then a file system made by argv (PARTITION last)
 * on a partition file copied in at start. */
static char *layout(uint64_t device, const char *script, uint64_t start, uint64_t size,
		    const char **mkfs)
{
	char *image = new_image(device), *part = tu_sparse_file(tu_fast_dir(), size);
	const char *sfdisk[] = { "sfdisk", image, NULL };
	size_t n = 0;

	ck_assert_ptr_nonnull(part);
	tool_ok(sfdisk, script);
	while (mkfs[n])
		n++;
	mkfs[n] = part;
	tool_ok(mkfs, NULL);
	mkfs[n] = NULL;
	ck_assert_int_eq(tu_copy_sparse(part, image, start), 0);
	drop(part);
	return image;
}

static uint64_t fat_data_start(const char *image, uint64_t start)
{
	unsigned char b[512];

	ck_assert_int_eq(tu_read_at(image, start, b, sizeof(b)), 0);
	return start + (get(b + 14, 2) + b[16] * get(b + 36, 4)) * get(b + 11, 2);
}

START_TEST(test_flaw_63_sector_start)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	char *image = layout(2 * GIB, "label: dos\nstart=63, size=4000000, type=c\n", 63 * 512,
			     4000000 * 512ULL, mkfs);
	struct checked c;

	run_check(image, "4M", &c);
	expect_one(&c, "(sector 63), not on a multiple of the 4MiB erase block");
	ck_assert(!jsonv_get(partition(&c, 0), "start_aligned")->boolean);
	ck_assert_str_eq(jsonv_get(partition(&c, 0), "filesystem.type")->string, "vfat");
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "filesystem.data_start_bytes")->number,
			  fat_data_start(image, 63 * 512));
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* Without an erase size nothing is judged against it: the verdicts
 * are null (they said "aligned" for a partition at sector 63), and the
 * text says "not judged".  With a page alone, the start and a FAT's data
 * are judged against the page. */
START_TEST(test_no_erase_size_no_verdicts)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	const char *unaligned[] = { "mkfs.fat", "-F", "32", "-a", "-R", "33", NULL, NULL };
	char *image = layout(2 * GIB, "label: dos\nstart=63, size=4000000, type=c\n", 63 * 512,
			     4000000 * 512ULL, mkfs);
	const char *text[] = { "check", "--no-realtime", image, NULL };
	const struct jsonv *p;
	struct run_result r;
	struct checked c;

	run_check_page(image, NULL, NULL, &c);
	ck_assert(jsonv_get(c.doc, "check.geometry.erase_size_bytes")->type == JSONV_NULL);
	p = partition(&c, 0);
	ck_assert(jsonv_get(p, "start_aligned")->type == JSONV_NULL);
	ck_assert(jsonv_get(p, "start_page_aligned")->type == JSONV_NULL);
	ck_assert(jsonv_get(p, "filesystem.data_aligned")->type == JSONV_NULL);
	ck_assert_uint_eq(c.problems, 0);
	jsonv_free(c.doc);
	tu_run(&r, text);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(!strstr(r.out, " aligned\n") && strstr(r.out, "start not judged") &&
		      strstr(r.out, "on the device: not judged"), "%s", r.out);
	tu_run_free(&r);
	run_check_page(image, NULL, "16K", &c);
	p = partition(&c, 0);
	ck_assert(jsonv_get(p, "start_aligned")->type == JSONV_NULL);
	ck_assert(!jsonv_get(p, "start_page_aligned")->boolean);
	ck_assert(jsonv_get(p, "filesystem.data_aligned")->type == JSONV_NULL);
	ck_assert_msg(strstr(c.all, "not on a multiple of the 16KiB page"), "%s", c.all);
	jsonv_free(c.doc);
	drop(image);
	/* on the page, but its data is not */
	image = layout(2 * GIB, "label: dos\nstart=8192, size=4000000, type=c\n", 4 * MIB,
		       4000000 * 512ULL, unaligned);
	ck_assert_uint_ne(fat_data_start(image, 4 * MIB) % (16 * KIB), 0);
	run_check_page(image, NULL, "16K", &c);
	p = partition(&c, 0);
	ck_assert(jsonv_get(p, "start_page_aligned")->boolean);
	ck_assert(jsonv_get(p, "filesystem.data_aligned")->type == JSONV_NULL);
	ck_assert_msg(strstr(c.all, "first data cluster starts at") &&
		      strstr(c.all, "not on a multiple of the 16KiB page"), "%s", c.all);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* The text report says its verdict before the evidence (it came last),
 * and a FAT area nobody measured or gave is unknown, not "none". */
START_TEST(test_text_verdict_first)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	char *image = layout(2 * GIB, "label: dos\nstart=63, size=4000000, type=c\n", 63 * 512,
			     4000000 * 512ULL, mkfs);
	const char *argv[] = { "check", "--no-realtime", "-e", "4M", image, NULL };
	const char *verdict, *part;
	struct run_result r;

	tu_run(&r, argv);
	ck_assert_int_eq(r.status, 0);
	verdict = strstr(r.out, "Problems found: 1 ");
	part = strstr(r.out, "Partition 1:");
	ck_assert_msg(verdict && part && verdict < part, "%s", r.out);
	ck_assert_msg(strstr(r.out, "FAT area unknown") && !strstr(r.out, "FAT area none"),
		      "%s", r.out);
	tu_run_free(&r);
	drop(image);
}
END_TEST

/* A FAT32 at 1 MiB whose reserved sectors put its first data cluster on
 * the 4 MiB unit, as card factories format: R found by running mkfs.fat
 * until the data lands there.  cluster_sectors: its -s. */
static char *fat32_data_on_unit(const char *cluster_sectors, uint64_t *data)
{
	char reserved[32] = "32";
	char *image = NULL;

	for (int tries = 0; tries < 4; tries++) {
		const char *mkfs[] = { "mkfs.fat", "-F", "32", "-s", cluster_sectors, "-R",
				       reserved, NULL, NULL };
		uint64_t off;

		if (image)
			drop(image);
		image = layout(2 * GIB, "label: dos\nstart=2048, size=4000000, type=c\n", MIB,
			       4000000 * 512ULL, mkfs);
		*data = fat_data_start(image, MIB);
		off = *data % (4 * MIB);
		if (off == 0)
			return image;
		snprintf(reserved, sizeof(reserved), "%" PRIu64,
			 (uint64_t)strtoull(reserved, NULL, 10) + (4 * MIB - off) / 512);
	}
	ck_abort_msg("mkfs.fat never put the data on the unit");
	return NULL;
}

/* A start off the erase block is no flaw when the data begins on it (it
 * was one, with a new partition table as its data-destroying fix); with
 * another flaw (clusters under the page) the fix still moves the
 * partition, since the advice's mkfs line aligns from the start. */
START_TEST(test_start_off_but_data_on_the_unit)
{
	const char *text[] = { "check", "--no-realtime", "-e", "4M", "--page", "16K", NULL,
			       NULL };
	uint64_t data;
	char *image = fat32_data_on_unit("32", &data);
	const struct jsonv *p, *fix;
	struct run_result r;
	struct checked c;

	run_check_page(image, "4M", "16K", &c);
	p = partition(&c, 0);
	ck_assert_msg(c.problems == 0, "%s", c.all);
	ck_assert(!jsonv_get(p, "start_aligned")->boolean);
	ck_assert(jsonv_get(p, "filesystem.data_aligned")->boolean);
	ck_assert_uint_eq(jsonv_len(jsonv_get(p, "fix")), 0);
	jsonv_free(c.doc);
	text[6] = image;
	tu_run(&r, text);
	ck_assert_msg(r.status == 0 && strstr(r.out, "No problems found") &&
		      strstr(r.out, "start off the erase block (harmless: the data area is on it)"),
		      "%s", r.out);
	tu_run_free(&r);
	drop(image);

	image = fat32_data_on_unit("8", &data);
	run_check_page(image, "4M", "16K", &c);
	expect_one(&c, "4KiB clusters are smaller than the 16KiB page");
	fix = jsonv_get(partition(&c, 0), "fix");
	ck_assert_uint_eq(jsonv_len(fix), 2);
	ck_assert_msg(strstr(jsonv_at(fix, 0)->string, "sfdisk"), "%s",
		      jsonv_at(fix, 0)->string);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* An exFAT that has to move gets exFAT's partition type in its fix (it
 * got FAT16's e, the type the advice gives a FAT of that size). */
START_TEST(test_exfat_fix_keeps_its_type)
{
	const char *mkfs[] = { "mkfs.exfat", "-c", "16K", NULL, NULL };
	char *image = layout(2 * GIB, "label: dos\nstart=63, size=614400, type=7\n", 63 * 512,
			     614400 * 512ULL, mkfs);
	const struct jsonv *fix;
	struct checked c;

	run_check_page(image, "4M", "16K", &c);
	fix = jsonv_get(partition(&c, 0), "fix");
	ck_assert_uint_eq(jsonv_len(fix), 2);
	ck_assert_msg(strstr(jsonv_at(fix, 0)->string, "type=7\\n"), "%s",
		      jsonv_at(fix, 0)->string);
	ck_assert_msg(strstr(jsonv_at(fix, 1)->string, "mkfs.exfat"), "%s",
		      jsonv_at(fix, 1)->string);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* The start a problem names is where the fix puts the partition: with a
 * 3 MiB unit a sole partition at 4 MiB was told "start it at 6MiB" while
 * the fix started it at 3 MiB. */
START_TEST(test_start_hint_matches_fix)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	char *image = layout(1 * GIB, "label: dos\nstart=8192, size=400000, type=c\n", 4 * MIB,
			     400000 * 512ULL, mkfs);
	const struct jsonv *fix;
	struct checked c;

	run_check(image, "3M", &c);
	ck_assert_msg(strstr(c.all, "(start it at 3MiB, sector 6144)"), "%s", c.all);
	fix = jsonv_get(partition(&c, 0), "fix");
	ck_assert_uint_ge(jsonv_len(fix), 1);
	ck_assert_msg(strstr(jsonv_at(fix, 0)->string, "start=6144,"), "%s",
		      jsonv_at(fix, 0)->string);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

START_TEST(test_flaw_fat32_default_reserved)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	char *image = layout(2 * GIB, "label: dos\nstart=8192, size=4000000, type=c\n", 4 * MIB,
			     4000000 * 512ULL, mkfs);
	uint64_t data = fat_data_start(image, 4 * MIB);
	struct checked c;

	/* the fixture really has the flaw */
	ck_assert_uint_ne(data % (4 * MIB), 0);
	run_check(image, "4M", &c);
	expect_one(&c, "FAT32 first data cluster starts at");
	ck_assert(jsonv_get(partition(&c, 0), "start_aligned")->boolean);
	ck_assert(!jsonv_get(partition(&c, 0), "filesystem.data_aligned")->boolean);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "filesystem.data_start_bytes")->number,
			  data);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

START_TEST(test_flaw_gpt_1mib_start)
{
	const char *mkfs[] = { "mkfs.ext4", "-q", "-F", NULL, NULL };
	char *image = layout(2 * GIB, "label: gpt\nstart=2048, size=2000000\n", MIB,
			     2000000 * 512ULL, mkfs);
	const char *fix;
	struct checked c;

	run_check(image, "8M", &c);
	expect_one(&c, "starts at 1MiB (sector 2048), not on a multiple of the 8MiB");
	ck_assert_str_eq(jsonv_get(c.doc, "check.table")->string, "gpt");
	/* the new table stays a GPT, and ext4's partition gets Linux's type */
	fix = jsonv_at(jsonv_get(partition(&c, 0), "fix"), 0)->string;
	ck_assert_msg(strstr(fix, "label: gpt") && strstr(fix, "0FC63DAF"), "fix: %s", fix);
	ck_assert_str_eq(jsonv_get(partition(&c, 0), "filesystem.type")->string, "ext4");
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

START_TEST(test_flaw_f2fs_main_area)
{
	const char *mkfs[] = { "mkfs.f2fs", "-q", NULL, NULL };
	char *image = layout(2 * GIB, "label: dos\nstart=16384, size=3000000, type=83\n", 8 * MIB,
			     3000000 * 512ULL, mkfs);
	unsigned char sb[128];
	uint64_t main_area;
	struct checked c;

	ck_assert_int_eq(tu_read_at(image, 8 * MIB + 1024, sb, sizeof(sb)), 0);
	ck_assert_uint_eq(get(sb, 4), 0xf2f52010);
	main_area = 8 * MIB + get(sb + 92, 4) * 4096;
	ck_assert_uint_ne(main_area % (8 * MIB), 0);	/* the fixture has the flaw */
	run_check(image, "8M", &c);
	/* mkfs.f2fs's default sections are one 2MiB segment */
	ck_assert_msg(c.problems == 2 && strstr(c.all, "f2fs main area starts at") &&
		      strstr(c.all, "sections of 2MiB are not whole 8MiB erase blocks"),
		      "problems: %s", c.all);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "filesystem.data_start_bytes")->number,
			  main_area);
	/* the fix is the advice for this card */
	ck_assert_ptr_nonnull(strstr(jsonv_at(jsonv_get(partition(&c, 0), "fix"), 0)->string,
				     "mkfs.f2fs -f -s 4"));
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* f2fs with its main area on the 4 MiB erase block (zones of two 2 MiB
 * sections) but sections of half an erase block: the one flaw. */
START_TEST(test_flaw_f2fs_small_sections)
{
	const char *mkfs[] = { "mkfs.f2fs", "-q", "-s", "1", "-z", "2", NULL, NULL };
	char *image = layout(2 * GIB, "label: dos\nstart=8192, size=3000000, type=83\n", 4 * MIB,
			     3000000 * 512ULL, mkfs);
	struct checked c;

	run_check(image, "4M", &c);
	ck_assert(jsonv_get(partition(&c, 0), "filesystem.data_aligned")->boolean);
	expect_one(&c, "sections of 2MiB are not whole 4MiB erase blocks");
	ck_assert_ptr_nonnull(strstr(jsonv_at(jsonv_get(partition(&c, 0), "fix"), 0)->string,
				     "mkfs.f2fs -f -s 2"));
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* ---- fixes that converge ---- */

/* The mkfs line fix (PARTITION its last word, no quoting) run on a new
 * partition file of size bytes, copied into image at start. */
static void apply_format_fix(const char *fix, const char *image, uint64_t start,
			     uint64_t size)
{
	char words[ADVICE_TEXT], *argv[32], *save = NULL;
	char *part = tu_sparse_file(tu_fast_dir(), size);
	size_t n = 0;

	ck_assert_ptr_nonnull(part);
	ck_assert_msg(!strchr(fix, '\'') && !strchr(fix, '|'), "not a plain line: %s", fix);
	snprintf(words, sizeof(words), "%s", fix);
	for (char *w = strtok_r(words, " ", &save); w && n < 31; w = strtok_r(NULL, " ", &save))
		argv[n++] = strcmp(w, "PARTITION") ? w : part;
	argv[n] = NULL;
	tool_ok((const char *const *)argv, NULL);
	ck_assert_int_eq(tu_copy_sparse(part, image, start), 0);
	drop(part);
}

/* mkfs.fat's defaults on a partition of 4072 MiB at 24 MiB, 24 MiB erase
 * block: the fix formats it at its real size (the reserved sectors
 * depend on it), and afterwards check finds nothing. */
START_TEST(test_fix_converges_at_real_size)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	uint64_t size = 4 * GIB - 24 * MIB;
	char *image = layout(4 * GIB, "label: dos\nstart=49152, type=c\n", 24 * MIB, size, mkfs);
	const struct jsonv *fix;
	struct checked c;

	run_check_page(image, "24M", "8K", &c);
	fix = jsonv_get(partition(&c, 0), "fix");
	ck_assert_uint_eq(jsonv_len(fix), 1);
	apply_format_fix(jsonv_at(fix, 0)->string, image, 24 * MIB, size);
	jsonv_free(c.doc);
	run_check_page(image, "24M", "8K", &c);
	ck_assert_msg(c.problems == 0, "after the fix: %s", c.all);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* The advice's own FAT for a 1 GiB partition and a 16 KiB page: FAT16
 * with 16 KiB clusters, as FAT32 would need clusters of 8 KiB (16 KiB ones
 * would be too few once the FATs are counted).  check judges it by the
 * same count: nothing to fix.  Case 1: the FAT32 with 8 KiB clusters an
 * earlier advice made is judged by it too, and its fix is that FAT16. */
START_TEST(test_advised_fat_passes)
{
	const char *advise[] = { "advise", "--json", "-e", "4M", "--page", "16K", "--size", "1G",
				 NULL, NULL };
	const char *mkfs[20] = { NULL };
	const struct jsonv *cmds, *argv = NULL;
	struct run_result r;
	struct jsonv *doc;
	struct checked c;
	char *image = new_image(4 * GIB), *made;
	size_t n = 0;

	advise[8] = image;
	tu_run(&r, advise);
	ck_assert_int_eq(r.status, 0);
	doc = jsonv_parse(r.out);
	ck_assert_ptr_nonnull(doc);
	cmds = jsonv_get(doc, "advice.commands");
	for (size_t i = 0; i < jsonv_len(cmds); i++)
		if (!strcmp(jsonv_get(jsonv_at(cmds, i), "purpose")->string, "fat16"))
			argv = jsonv_get(jsonv_at(cmds, i), "argv");
	ck_assert_ptr_nonnull(argv);
	for (size_t i = 0; i < jsonv_len(argv) && n < 18; i++)
		if (strcmp(jsonv_at(argv, i)->string, "PARTITION"))
			mkfs[n++] = jsonv_at(argv, i)->string;
	ck_assert_str_eq(mkfs[2], "16");
	ck_assert_str_eq(mkfs[6], "32");	/* -s 32: 16 KiB clusters */
	if (_i == 1) {	/* what the advice said before: FAT32, 8 KiB clusters */
		static const char *const fat32[] = { "mkfs.fat", "-F", "32", "-S", "512",
						     "-s", "16", "-R", "6144", "-g",
						     "64/32", NULL };

		memset(mkfs, 0, sizeof(mkfs));
		memcpy(mkfs, fat32, sizeof(fat32));
	}
	made = layout(4 * GIB, _i == 0 ? "label: dos\nstart=8192, size=2097152, type=e\n" :
		      "label: dos\nstart=8192, size=2097152, type=c\n", 4 * MIB, GIB, mkfs);
	run_check_page(made, "4M", "16K", &c);
	if (_i == 0) {
		ck_assert_msg(c.problems == 0, "advise's own FAT16: %s", c.all);
	} else {
		const struct jsonv *fix = jsonv_get(partition(&c, 0), "fix");
		const char *sfdisk[] = { "sfdisk", "--part-type", made, "1", "e", NULL };
		unsigned char mbr[512];

		expect_one(&c, "8KiB clusters are smaller than the 16KiB page");
		/* the FAT16 line, and FAT16's type for the FAT32's c */
		ck_assert_uint_eq(jsonv_len(fix), 2);
		ck_assert_msg(strstr(jsonv_at(fix, 0)->string, "mkfs.fat -F 16 -S 512 -s 32 "),
			      "%s", jsonv_at(fix, 0)->string);
		ck_assert_str_eq(jsonv_at(fix, 1)->string, "sfdisk --part-type DEVICE 1 e");
		apply_format_fix(jsonv_at(fix, 0)->string, made, 4 * MIB, GIB);
		tool_ok(sfdisk, NULL);
		ck_assert_int_eq(tu_read_at(made, 0, mbr, sizeof(mbr)), 0);
		ck_assert_uint_eq(mbr[446 + 4], 0x0e);
		jsonv_free(c.doc);
		run_check_page(made, "4M", "16K", &c);
		ck_assert_msg(c.problems == 0, "after the fix: %s", c.all);
	}
	jsonv_free(c.doc);
	jsonv_free(doc);
	tu_run_free(&r);
	drop(made);
	drop(image);
}
END_TEST

/* Two partitions; the second holds mkfs.fat's defaults (case 0: data off
 * the unit; case 1: also starting off it).  The first is left alone: its
 * fix is empty, and the second's never rewrites the table (that would take
 * the first with it): a mkfs line for it, or none and a reason. */
START_TEST(test_fix_spares_other_partitions)
{
	const char *ext4[] = { "mkfs.ext4", "-q", "-F", NULL, NULL };
	const char *fat[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	uint64_t start2 = _i == 0 ? 2105344 : 2105407;
	char script[160], *image, *part;
	const struct jsonv *fix1, *fix2;
	struct checked c;

	snprintf(script, sizeof(script), "label: dos\nstart=8192, size=2097152, type=83\n"
		 "start=%llu, size=2097152, type=c\n", (unsigned long long)start2);
	image = layout(4 * GIB, script, 4 * MIB, GIB, ext4);
	part = tu_sparse_file(tu_fast_dir(), GIB);
	ck_assert_ptr_nonnull(part);
	fat[3] = part;
	tool_ok(fat, NULL);
	ck_assert_int_eq(tu_copy_sparse(part, image, start2 * 512), 0);
	drop(part);
	run_check(image, "4M", &c);
	fix1 = jsonv_get(partition(&c, 0), "fix");
	fix2 = jsonv_get(partition(&c, 1), "fix");
	ck_assert_uint_eq(jsonv_len(fix1), 0);
	if (_i == 0) {
		bool fat16 = strstr(jsonv_at(fix2, 0)->string, "mkfs.fat -F 16 ") != NULL;

		/* a FAT16 in the FAT32's type c gets FAT16's type too */
		ck_assert_uint_eq(jsonv_len(fix2), fat16 ? 2 : 1);
		ck_assert_msg(!strncmp(jsonv_at(fix2, 0)->string, "mkfs.fat ", 9), "fix: %s",
			      jsonv_at(fix2, 0)->string);
		if (fat16)
			ck_assert_str_eq(jsonv_at(fix2, 1)->string,
					 "sfdisk --part-type DEVICE 2 e");
	} else {
		ck_assert_uint_eq(jsonv_len(fix2), 0);
		ck_assert_msg(strstr(c.all, "partition 2 has to move"), "problems: %s", c.all);
	}
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* A FAT32 on the whole device, no table: the fix makes the advised table
 * first, then formats its partition (there is no partition 1 before). */
START_TEST(test_fix_whole_device)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", "-I", NULL, NULL };
	char *image = new_image(2 * GIB);
	const struct jsonv *fix;
	struct checked c;

	mkfs[4] = image;
	tool_ok(mkfs, NULL);
	run_check_page(image, "4M", "16K", &c);
	ck_assert_uint_eq(jsonv_get(partition(&c, 0), "number")->number, 0);
	fix = jsonv_get(partition(&c, 0), "fix");
	ck_assert_uint_eq(jsonv_len(fix), 2);
	ck_assert_msg(strstr(jsonv_at(fix, 0)->string, "sfdisk") &&
		      !strncmp(jsonv_at(fix, 1)->string, "mkfs.fat ", 9), "fix: %s / %s",
		      jsonv_at(fix, 0)->string, jsonv_at(fix, 1)->string);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

static int file_read(void *arg, uint64_t off, void *buf, size_t len);

/* The text report of check on image (erase block e, a 16 KiB page), its
 * fix lines' names given as if image were the disk /dev/sdz. */
static void check_text_as_sdz(const char *image, uint64_t e, char *out, size_t len)
{
	struct check_geometry g = { .erase_bytes = e, .erase_source = GEO_GIVEN,
				    .page_bytes = 16 * KIB, .page_source = GEO_GIVEN };
	struct check_result *r = calloc(1, sizeof(*r));
	int fd = open(image, O_RDONLY);
	struct disk d = { file_read, &fd, 0, 512 };
	FILE *f = fmemopen(out, len, "w");

	ck_assert(r && f && fd >= 0);
	d.size_bytes = (uint64_t)lseek(fd, 0, SEEK_END);
	ck_assert_int_eq(layoutcheck_run(&d, &g, r), 0);
	report_check_text(f, r, "/dev/sdz", NULL);
	fclose(f);
	close(fd);
	free(r);
}

/* A fix that makes a new table formats that table's partition 1, as the
 * man page says, whatever the number the partition had (5, a logical
 * one; 2 in a GPT whose first entry is empty): the mkfs line named the
 * old number, which the new table does not have. */
START_TEST(test_new_table_fix_formats_partition_1)
{
	static const char *const scripts[] = {
		"label: dos\n,,5\n,,c\n", "label: gpt\n2: start=2048, size=4000000\n" };
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	char *image = new_image(4 * GIB), *part = tu_sparse_file(tu_fast_dir(), 512 * MIB);
	const char *sfdisk[] = { "sfdisk", image, NULL };
	char text[16384];
	uint64_t start = _i == 0 ? 2 * MIB : MIB;
	struct checked c;

	ck_assert_ptr_nonnull(part);
	tool_ok(sfdisk, scripts[_i]);
	mkfs[3] = part;
	tool_ok(mkfs, NULL);
	ck_assert_int_eq(tu_copy_sparse(part, image, start), 0);
	drop(part);
	run_check_page(image, "4M", "16K", &c);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "number")->number,
			  _i == 0 ? 5 : 2);
	jsonv_free(c.doc);
	check_text_as_sdz(image, 4 * MIB, text, sizeof(text));
	ck_assert_msg(strstr(text, "sfdisk --wipe always") && strstr(text, " /dev/sdz1\n") &&
		      !strstr(text, "/dev/sdz5") && !strstr(text, "/dev/sdz2"), "%s", text);
	drop(image);
}
END_TEST

/* An MBR without partitions (sfdisk's empty dos label, or one empty
 * extended partition) is an empty table, not "neither a valid partition
 * table nor a known file system". */
START_TEST(test_empty_mbr)
{
	char *image = new_image(64 * MIB);
	const char *sfdisk[] = { "sfdisk", image, NULL };
	struct checked c;

	tool_ok(sfdisk, _i == 0 ? "label: dos\n" : "label: dos\n,,5\n");
	run_check(image, "4M", &c);
	ck_assert_msg(c.problems == 0, "%s", c.all);
	ck_assert_uint_eq(jsonv_len(jsonv_get(c.doc, "check.partitions")), 0);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* A FAT12 in 4 MiB: no FAT32 and no exFAT fits, so no fix (the new
 * table alone wiped the file system and put none back). */
START_TEST(test_no_fix_without_a_file_system_that_fits)
{
	const char *mkfs[] = { "mkfs.fat", NULL, NULL };
	char *image = layout(8 * MIB, ",,c\n", MIB, 7 * MIB, mkfs);
	struct checked c;

	run_check_page(image, "4M", "16K", &c);
	ck_assert_msg(strstr(c.all, "exFAT does not fit either"), "%s", c.all);
	ck_assert_uint_eq(jsonv_len(jsonv_get(partition(&c, 0), "fix")), 0);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* Flaws no fix can mend say why, and a file system on the whole device
 * is not "partition 0": a device smaller than its erase block, f2fs
 * sections of 2 MiB in 64 MiB (too few 4 MiB sections for mkfs.f2fs),
 * a 1 MiB logical partition under 4 MiB erase blocks.  They were given
 * without a fix and without a word. */
START_TEST(test_missing_fix_says_why)
{
	static const char *const why[] = {
		"the file system on the device: no fix is given: the device is smaller "
		"than one 16MiB erase block",
		"partition 1: no fix is given: f2fs: a 64MiB partition",
		"partition 5: no fix is given: it is smaller than one 4MiB erase block",
	};
	const char *fat[] = { "mkfs.fat", NULL, NULL }, *f2fs[] = { "mkfs.f2fs", "-q", NULL, NULL };
	char *image;
	struct checked c;

	if (_i == 0)	/* the file system over the empty table */
		image = layout(12 * MIB, "label: dos\n", 0, 12 * MIB, fat);
	else if (_i == 1)
		image = layout(256 * MIB, "label: dos\nstart=8192, size=64M, type=83\n", 4 * MIB,
			       64 * MIB, f2fs);
	else
		image = layout(64 * MIB, "label: dos\nstart=2048, size=40960, type=5\n"
			       "start=6144, size=2048, type=6\n", 3 * MIB, MIB, fat);
	run_check_page(image, _i == 0 ? "16M" : "4M", "16K", &c);
	ck_assert_msg(strstr(c.all, why[_i]) && !strstr(c.all, "partition 0"), "%s", c.all);
	ck_assert_uint_eq(jsonv_len(jsonv_get(partition(&c, 0), "fix")), 0);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* A partition off the erase block holding no file system flashprobe
 * reads: no fix (a new table could not put its contents back), and the
 * line says that; it gave the advice's note that the old size does not
 * fit past the new start as the reason. */
START_TEST(test_unknown_fs_fix_reason)
{
	char *image = new_image(256 * MIB);
	const char *sfdisk[] = { "sfdisk", image, NULL };
	struct checked c;

	tool_ok(sfdisk, "label: dos\nstart=2048, type=83\n");
	run_check(image, "6M", &c);
	ck_assert_msg(strstr(c.all, "partition 1: no fix is given: its file system is none "
			      "flashprobe reads") && !strstr(c.all, "does not fit"), "%s", c.all);
	ck_assert_uint_eq(jsonv_len(jsonv_get(partition(&c, 0), "fix")), 0);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

static void fix_lines(const struct checked *c, size_t i, char *out, size_t len);

/* mkfs.exfat's default exFAT at 4 MiB has its cluster heap at 6 MiB, on
 * the 6 MiB erase block, with clusters under the page.  Formatting it
 * again on the unit would put the heap off it, so check gave no fix; it
 * now gives one from a start where mkfs.exfat puts the heap on the unit
 * (partition/pasted runs such a fix: its 1.5 MiB case). */
START_TEST(test_exfat_aligned_on_3x2n_unit_reformatted)
{
	const char *mkfs[] = { "mkfs.exfat", NULL, NULL };
	char *image = layout(256 * MIB, "start=8192, type=7\n", 4 * MIB, 252 * MIB, mkfs);
	char fix[2048];
	struct checked c;

	run_check_page(image, "6M", "16K", &c);
	ck_assert(jsonv_get(partition(&c, 0), "filesystem.data_aligned")->boolean);
	expect_one(&c, "smaller than the 16KiB page");
	fix_lines(&c, 0, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "mkfs.exfat -c 16K --boundary-align="), "%s", fix);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* An exFAT on a device too small for a 24 MiB unit past the FAT area: no
 * fix, and the reason is the advice's about the partition, not its notes
 * about a size nobody asked for or the FAT area, and the start's hint
 * sends nobody to a fix that is not there. */
START_TEST(test_exfat_tiny_device_reason)
{
	const char *mkfs[] = { "mkfs.exfat", NULL, NULL };
	const char *opts[] = { "-e", "24M", "--page", "16K", "--fat-area", "4M", NULL };
	char *image = layout(30 * MIB, "start=2048, type=7\n", MIB, 29 * MIB, mkfs);
	struct checked c;

	run_check_opts(image, opts, &c);
	ck_assert_msg(strstr(c.all, "partition 1: no fix is given: the partition would be "
			      "smaller than one alignment unit") &&
		      !strstr(c.all, "does not fit") && !strstr(c.all, "see the fix") &&
		      !strstr(c.all, "no fix is given: the card handles"), "%s", c.all);
	ck_assert_uint_eq(jsonv_len(jsonv_get(partition(&c, 0), "fix")), 0);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* An exFAT whose boot region no longer matches its checksum (one byte of
 * its boot sector changed) is a problem, as fsck.exfat has it; it was
 * judged by its clusters alone.  The same exFAT whole has none. */
START_TEST(test_exfat_boot_checksum)
{
	const char *mkfs[] = { "mkfs.exfat", "-c", "16K", NULL, NULL };
	char *image = layout(256 * MIB, "start=8192, type=7\n", 4 * MIB, 252 * MIB, mkfs);
	unsigned char x = 'X';
	struct checked c;

	run_check_page(image, "4M", "16K", &c);
	ck_assert_msg(!strstr(c.all, "checksum"), "%s", c.all);
	jsonv_free(c.doc);
	ck_assert_int_eq(tu_write_at(image, 4 * MIB + 200, &x, 1), 0);
	run_check_page(image, "4M", "16K", &c);
	ck_assert_msg(strstr(c.all, "partition 1: its exFAT boot region does not match its "
			      "checksum"), "%s", c.all);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* A FAT32 over 32 GiB in a type 7 partition off the erase block: the new
 * table's line gives exFAT's type (the advice's for that size), so the
 * FAT32 it formats gets its type after (the fix formatting in place gave
 * it; the fix with a new table left FAT32 under type 7). */
START_TEST(test_new_table_fat32_gets_its_type)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	char *image = layout(40 * GIB, ",,7\n", MIB, 40 * GIB - MIB, mkfs);
	char lines[4 * ADVICE_TEXT];
	struct checked c;

	run_check_page(image, "4M", "16K", &c);
	fix_lines(&c, 0, lines, sizeof(lines));
	ck_assert_msg(strstr(lines, "type=7") && strstr(lines, "mkfs.fat -F 32") &&
		      strstr(lines, "sfdisk --part-type DEVICE 1 c\n"), "%s", lines);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* More than 64 partitions: said once (it was said for each one more). */
START_TEST(test_too_many_partitions_said_once)
{
	char *image = new_image(256 * MIB), script[1024] = "label: gpt\n";
	const char *sfdisk[] = { "sfdisk", image, NULL };
	struct checked c;

	for (int i = 0; i < 70; i++)
		strcat(script, "size=2048\n");
	tool_ok(sfdisk, script);
	run_check(image, "4M", &c);
	ck_assert_ptr_nonnull(strstr(c.all, "more than 64 partitions"));
	ck_assert_ptr_null(strstr(strstr(c.all, "more than 64 partitions") + 1,
				  "more than 64 partitions"));
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* The fix lines of partition i, one per line. */
static void fix_lines(const struct checked *c, size_t i, char *out, size_t len)
{
	const struct jsonv *fix = jsonv_get(partition(c, i), "fix");

	out[0] = '\0';
	for (size_t k = 0; k < jsonv_len(fix); k++) {
		size_t n = strlen(out);

		snprintf(out + n, len - n, "%s\n", jsonv_at(fix, k)->string);
	}
}

/* exFAT as the advice made it on a 6 MiB erase block before it counted
 * mkfs.exfat's boundary from the device's start: the partition on the
 * unit, the heap 4 MiB into it.  The fix (which only said why before) is a
 * new table whose start is off the unit, where mkfs.exfat's 2 MiB
 * boundary puts the heap on it (partition/pasted runs such a fix). */
START_TEST(test_exfat_on_3x2n_unit)
{
	const char *mkfs[] = { "mkfs.exfat", "-c", "32K", "--boundary-align=2048K", NULL, NULL };
	char *image = layout(2 * GIB, "label: dos\nstart=12288, size=3145728, type=7\n", 6 * MIB,
			     3145728 * 512ULL, mkfs);
	uint64_t data;
	char fix[2048];
	struct checked c;

	run_check(image, "6M", &c);
	data = (uint64_t)jsonv_get(partition(&c, 0), "filesystem.data_start_bytes")->number;
	ck_assert_uint_eq(data % (2 * MIB), 0);
	ck_assert_uint_ne(data % (6 * MIB), 0);		/* the fixture is off the unit */
	expect_one(&c, "not on a multiple of the 6MiB erase block");
	fix_lines(&c, 0, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "start=4096, ") && strstr(fix, "type=7") &&
		      strstr(fix, "\nmkfs.exfat ") && strstr(fix, " --boundary-align=2048K "),
		      "%s", fix);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* FAT32 on a 64 MiB erase block with 512-byte sectors: no reserved
 * sector count reaches the unit, so the advice has no FAT32 line.  check
 * says why and gives exFAT's line, which the advice gives instead. */
START_TEST(test_fat32_out_of_reach)
{
	const char *mkfs[] = { "mkfs.fat", "-F", "32", NULL, NULL };
	char *image = layout(4 * GIB, "label: dos\nstart=131072, size=4194304, type=c\n", 64 * MIB,
			     4194304 * 512ULL, mkfs);
	char fix[2048];
	struct checked c;

	run_check(image, "64M", &c);
	ck_assert_msg(strstr(c.all, "FAT32 first data cluster starts at") &&
		      strstr(c.all, "FAT32 is not advised"), "problems: %s", c.all);
	fix_lines(&c, 0, fix, sizeof(fix));
	ck_assert_msg(strstr(fix, "mkfs.exfat") && !strstr(fix, "mkfs.fat"), "fix: %s", fix);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* A GPT by sfdisk with one byte changed: each damage is one line, and a
 * damaged primary falls back to the backup. */
START_TEST(test_gpt_damage)
{
	static const struct { uint64_t off; const char *words; bool parts; } cases[] = {
		{ 512 + 40, "the primary GPT has a wrong header CRC: the backup", true },
		{ 1024 + 56, "the primary GPT has a wrong entry-array CRC: the backup", true },
		{ 2 * GIB - 512 + 40, "the backup GPT at the end of the device has a wrong header CRC",
		  true },
	};
	char *image = new_image(2 * GIB);
	const char *sfdisk[] = { "sfdisk", image, NULL };
	unsigned char b;
	struct checked c;

	tool_ok(sfdisk, "label: gpt\nstart=8192, size=2000000\n");
	ck_assert_int_eq(tu_read_at(image, cases[_i].off, &b, 1), 0);
	b ^= 0x5a;
	ck_assert_int_eq(tu_write_at(image, cases[_i].off, &b, 1), 0);
	run_check(image, "4M", &c);
	expect_one(&c, cases[_i].words);
	ck_assert_uint_eq(jsonv_len(jsonv_get(c.doc, "check.partitions")), 1);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "start_bytes")->number, 4 * MIB);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* ---- malformed tables and boot sectors, built here ---- */

/* Two entries of one MBR: overlapping, or the first past the end. */
START_TEST(test_bad_mbr_entries)
{
	static const struct { uint64_t lba[2], count[2]; const char *words; } cases[] = {
		/* the second aligned, but inside the first */
		{ { 8192, 16384 }, { 40000, 40000 }, "partition 2 overlaps partition 1" },
		{ { 8192, 0 }, { 4000000, 0 }, "past the end of the device" },
		/* over the MBR itself (it had no problem) */
		{ { 0, 0 }, { 100000, 0 }, "partition 1 starts at sector 0, over the partition "
		  "table itself" },
	};
	char *image = new_image(64 * MIB);
	unsigned char s[512] = { 0 };
	struct checked c;

	for (int i = 0; i < 2; i++)
		if (cases[_i].count[i])
			mbr_entry(s, i, 0x83, cases[_i].lba[i], cases[_i].count[i]);
	write_sector(image, 0, s);
	run_check(image, "4M", &c);
	expect_one(&c, cases[_i].words);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* Two logical partitions whose second link points back at itself. */
START_TEST(test_extended_loop)
{
	char *image = new_image(64 * MIB);
	unsigned char s[512] = { 0 };
	struct checked c;

	mbr_entry(s, 0, 0x05, 8192, 100000);
	write_sector(image, 0, s);
	memset(s, 0, sizeof(s));
	mbr_entry(s, 0, 0x83, 8192, 8192);	/* logical 5 at 16384 */
	mbr_entry(s, 1, 0x05, 16384, 20000);	/* next EBR at 8192 + 16384 */
	write_sector(image, 8192, s);
	memset(s, 0, sizeof(s));
	mbr_entry(s, 0, 0x83, 8192, 8192);	/* logical 6 at 32768 */
	mbr_entry(s, 1, 0x05, 16384, 20000);	/* the same EBR again */
	write_sector(image, 8192 + 16384, s);
	run_check(image, "4M", &c);
	expect_one(&c, "loops back to sector 24576");
	ck_assert_uint_eq(jsonv_len(jsonv_get(c.doc, "check.partitions")), 2);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 1), "number")->number, 6);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* An image shorter than one sector cannot be a disk: the device layer
 * says so in one line (status 2). */
START_TEST(test_image_below_a_sector)
{
	char *image = new_image(100);
	const char *argv[] = { "check", "--erasesize", "4M", image, NULL };
	struct run_result r;

	tu_run(&r, argv);
	ck_assert_int_eq(r.status, 2);
	ck_assert_uint_eq(tu_count_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "smaller than one 512-byte sector"));
	tu_run_free(&r);
	drop(image);
}
END_TEST

/* Images cut short: a blank sector, a GPT without its header, a partition
 * whose file system lies beyond the end. */
START_TEST(test_truncated_images)
{
	static const struct { uint64_t size; uint8_t type; const char *words; } cases[] = {
		{ 512, 0, NULL },
		{ 512, 0xee, "the protective MBR announces a GPT" },
		{ 5 * MIB, 0x0c, "past the end of the device" },
	};
	char *image = new_image(cases[_i].size);
	unsigned char s[512] = { 0 };
	struct checked c;

	if (cases[_i].type) {
		mbr_entry(s, 0, cases[_i].type, 8192, 4000000);
		write_sector(image, 0, s);
	}
	run_check(image, "4M", &c);
	if (cases[_i].words)
		expect_one(&c, cases[_i].words);
	else
		ck_assert_uint_eq(c.problems, 0);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* Sector 0 with the signature over random bytes; a FAT boot sector with
 * 3 sectors per cluster; an ext superblock with a 2^40 KiB block. */
START_TEST(test_garbage_boot_sectors)
{
	char *image = new_image(64 * MIB);
	unsigned char s[2048] = { 0 };
	struct checked c;

	srand(13);
	for (size_t i = 0; i < 512; i++)
		s[i] = (unsigned char)rand();
	s[446] = 0x33;			/* no valid boot flag: not a table */
	s[0] = 0x12;			/* and no jump: not a boot sector */
	put(s + 510, 0xaa55, 2);
	if (_i == 0) {
		write_sector(image, 0, s);
		run_check(image, "4M", &c);
		expect_one(&c, "neither a valid partition table nor a known file system");
	} else {
		memset(s, 0, sizeof(s));
		mbr_entry(s, 0, 0x0c, 8192, 100000);
		write_sector(image, 0, s);
		memset(s, 0, sizeof(s));
		if (_i == 1) {
			s[0] = 0xeb, s[1] = 0x58, s[2] = 0x90;
			put(s + 11, 512, 2);
			s[13] = 3;
			put(s + 14, 32, 2);
			s[16] = 2;
			memcpy(s + 82, "FAT32   ", 8);
			put(s + 510, 0xaa55, 2);
		} else {
			put(s + 1024 + 56, 0xef53, 2);
			put(s + 1024 + 24, 40, 4);
		}
		ck_assert_int_eq(tu_write_at(image, 8192 * 512, s, sizeof(s)), 0);
		run_check(image, "4M", &c);
		expect_one(&c, _i == 1 ? "its FAT boot sector is damaged" :
			   "its ext superblock is damaged");
		ck_assert_str_eq(jsonv_get(partition(&c, 0), "filesystem.type")->string, "unknown");
	}
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* A card formatted without a partition table: the whole device is
 * one entry (number 0), and a blank device has nothing to report. */
START_TEST(test_no_table)
{
	char *image = new_image(64 * MIB);
	const char *mkfs[] = { "mkfs.fat", "-F", "16", image, NULL };
	struct checked c;

	run_check(image, "4M", &c);
	ck_assert_str_eq(jsonv_get(c.doc, "check.table")->string, "none");
	ck_assert_uint_eq(jsonv_len(jsonv_get(c.doc, "check.partitions")), 0);
	ck_assert_uint_eq(c.problems, 0);
	jsonv_free(c.doc);
	if (!tu_have_tool("mkfs.fat")) {
		drop(image);
		return;
	}
	tool_ok(mkfs, NULL);
	run_check(image, "4M", &c);
	ck_assert_str_eq(jsonv_get(c.doc, "check.table")->string, "none");
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "number")->number, 0);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "filesystem.fat_bits")->number, 16);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* mkfs.fat --mbr (its default on non-removable disks) writes a one-entry
 * table into the FAT's own boot sector: partition 1 from sector 0 over
 * the whole device.  libblkid reads that as a FAT without a table; check
 * read a DOS table whose partition 1 lay "over the partition table
 * itself" and gave fix lines for a partition node partx does not make (an
 * attack).  It is the whole device's FAT. */
START_TEST(test_fat_with_fake_mbr_is_whole_device)
{
	char *image = new_image(4 * GIB);
	const char *mkfs[] = { "mkfs.fat", "--mbr=y", "-F", "32", image, NULL };
	struct checked c;

	tool_ok(mkfs, NULL);
	run_check(image, "4M", &c);
	ck_assert_str_eq(jsonv_get(c.doc, "check.table")->string, "none");
	ck_assert_uint_eq(jsonv_len(jsonv_get(c.doc, "check.partitions")), 1);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "number")->number, 0);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "filesystem.fat_bits")->number, 32);
	ck_assert_uint_eq(c.problems, 0);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* A FAT32 with fewer than 65525 clusters (mkfs.fat -F 32 makes one on
 * 4 KiB sectors) is a FAT32, as Linux and fsck.fat read it; it was called
 * FAT16 from its cluster count. */
START_TEST(test_small_fat32_is_fat32)
{
	char *image = new_image(256 * MIB);
	const char *mkfs[] = { "mkfs.fat", "-F", "32", "-S", "4096", image, NULL };
	struct checked c;

	tool_ok(mkfs, NULL);
	run_check(image, "4M", &c);
	ck_assert_uint_eq((uint64_t)jsonv_get(partition(&c, 0), "filesystem.fat_bits")->number, 32);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* check never writes: the image is byte for byte the same afterwards. */
START_TEST(test_check_is_read_only)
{
	char *image = tu_make_image(8 * MIB, 7);
	unsigned char s[512] = { 0 };
	uint64_t before;
	struct checked c;

	ck_assert_ptr_nonnull(image);
	mbr_entry(s, 0, 0x83, 2048, 4096);
	write_sector(image, 0, s);
	before = tu_checksum(image);
	run_check(image, "1M", &c);
	ck_assert_uint_eq(tu_checksum(image), before);
	jsonv_free(c.doc);
	drop(image);
}
END_TEST

/* ---- a partition device (/dev/mmcblk0p1) ---- */

/* Its offset and number come from sysfs (a tree made here). */
START_TEST(test_partition_start_from_sysfs)
{
	char root[] = "/var/tmp/flashprobe-sysfs-XXXXXX", path[256];
	struct sysinfo *si = calloc(1, sizeof(*si));
	uint64_t start = 0;
	unsigned number = 0;
	FILE *f;

	ck_assert_ptr_nonnull(si);
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(path, sizeof(path), "mkdir -p %s/class/block/mmcblk0p2", root);
	ck_assert_int_eq(system(path), 0);
	snprintf(path, sizeof(path), "%s/class/block/mmcblk0p2/start", root);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("137216\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/class/block/mmcblk0p2/partition", root);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("2\n", f);
	fclose(f);
	snprintf(si->name, sizeof(si->name), "mmcblk0p2");
	ck_assert_int_eq(sysinfo_partition_start(root, si, &start, &number), -EINVAL);
	si->is_partition = true;
	ck_assert_int_eq(sysinfo_partition_start(root, si, &start, &number), 0);
	ck_assert_uint_eq(start, 137216 * 512ULL);
	ck_assert_uint_eq(number, 2);
	tu_rm_tree(root);
	free(si);
}
END_TEST

static int file_read(void *arg, uint64_t off, void *buf, size_t len)
{
	return pread(*(int *)arg, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

/* A FAT32 file system alone (what a partition device shows), judged at
 * the offset sysfs would give (case 2: on a disk of 4096-byte sectors,
 * whose sector numbers the problem gives). */
START_TEST(test_partition_device)
{
	static const uint64_t offsets[] = { 3 * MIB, 4 * MIB, 3 * MIB };
	static const uint32_t sectors[] = { 512, 512, 4096 };
	char *part = tu_sparse_file(tu_fast_dir(), 300 * MIB);
	const char *mkfs[] = { "mkfs.fat", "-F", "32", "-s", "8", part, NULL };
	struct check_geometry g = { .erase_bytes = 4 * MIB, .erase_source = GEO_GIVEN };
	struct check_result *r = calloc(1, sizeof(*r));
	uint64_t offset = offsets[_i], data;
	unsigned char b[512];
	struct disk d;
	int fd;

	ck_assert(part && r);
	tool_ok(mkfs, NULL);
	ck_assert_int_eq(tu_read_at(part, 0, b, sizeof(b)), 0);
	data = (get(b + 14, 2) + b[16] * get(b + 36, 4)) * 512;
	fd = open(part, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	d = (struct disk){ file_read, &fd, 300 * MIB, sectors[_i] };
	ck_assert_int_eq(layoutcheck_run_partition(&d, &g, offset, 3, r), 0);
	close(fd);
	ck_assert(r->partition_device);
	ck_assert_uint_eq(r->nparts, 1);
	ck_assert_uint_eq(r->parts[0].entry.number, 3);
	ck_assert_uint_eq(r->parts[0].entry.start_bytes, offset);
	ck_assert_int_eq(r->parts[0].start_aligned, offset % (4 * MIB) == 0);
	ck_assert_int_eq(r->parts[0].fs.type, FS_VFAT);
	ck_assert_uint_eq(r->parts[0].data_start_bytes, offset + data);
	if (!r->parts[0].start_aligned)
		ck_assert_msg(strstr(r->parts[0].problems[0], sectors[_i] == 512 ?
				     "(sector 6144)" : "(sector 768)"), "%s",
			      r->parts[0].problems[0]);
	free(r);
	drop(part);
}
END_TEST

/* advise and check on the command line: what they need, what they
 * refuse, one line each. */
START_TEST(test_advise_check_usage)
{
	static const struct { const char *argv[8]; int status; const char *words; } cases[] = {
		{ { "advise", "--size", "1G", NULL }, 2, "advise needs --erasesize" },
		{ { "advise", "-e", "4M", NULL }, 2, "advise needs a DEVICE or --size" },
		{ { "advise", "-e", "4M", "--size", "1G", "--label", "mbr", NULL }, 2,
		  "label 'mbr' is not dos or gpt" },
		{ { "check", "-e", "4M", NULL }, 2, "no device given" },
		{ { "probe", "--page", "16K", "sim:seed", NULL }, 2, "--page only applies to advise and check" },
		{ { "check", "--label", "gpt", "sim:seed", NULL }, 2, "only applies to advise" },
		{ { "advise", "-e", "4M", "--size", "1G", "--json", NULL }, 0, "\"device\": null" },
	};
	struct run_result r;

	tu_run(&r, cases[_i].argv);
	ck_assert_int_eq(r.status, cases[_i].status);
	if (cases[_i].status) {
		ck_assert_ptr_nonnull(strstr(r.err, cases[_i].words));
		ck_assert_uint_eq(tu_count_lines(r.err), 2);	/* and the --help hint */
		ck_assert_str_eq(r.out, "");
	} else {
		ck_assert_ptr_nonnull(strstr(r.out, cases[_i].words));
	}
	tu_run_free(&r);
}
END_TEST

/* A given FAT area that leaves nothing of the device: one line, status
 * 2, nothing on standard output (check told the partition to start at
 * 100GiB or later on a 64 MiB card). */
START_TEST(test_given_geometry_past_device)
{
	static const struct { const char *argv[8]; const char *words; } cases[] = {
		{ { "check", "-e", "4M", "--fat-area", "100G", "sim:seed", NULL },
		  "fat-area 100GiB leaves nothing of 'sim:seed' (1GiB)" },
		{ { "check", "-e", "4M", "--fat-area", "1G", "sim:seed", NULL },
		  "fat-area 1GiB leaves nothing of 'sim:seed' (1GiB)" },
	};
	struct run_result r;

	tu_run(&r, cases[_i].argv);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, cases[_i].words) && tu_count_lines(r.err) == 1, "%s",
		      r.err);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
}
END_TEST

/* The placeholders become the disk and its partition: the first one for
 * a disk (p1 after a digit), the partition given for a partition device;
 * anything but a /dev path keeps the words; a path that does not fit is
 * left out whole. */
START_TEST(test_placeholders)
{
	const char *cmd = "sfdisk DEVICE; mkfs.ext4 PARTITION";
	char out[256];

	report_advice_substitute(cmd, "/dev/sdb", out, sizeof(out));
	ck_assert_str_eq(out, "sfdisk /dev/sdb; mkfs.ext4 /dev/sdb1");
	report_advice_substitute(cmd, "/dev/mmcblk0", out, sizeof(out));
	ck_assert_str_eq(out, "sfdisk /dev/mmcblk0; mkfs.ext4 /dev/mmcblk0p1");
	report_advice_substitute(cmd, "card.img", out, sizeof(out));
	ck_assert_str_eq(out, cmd);
	report_advice_substitute_names(cmd, "/dev/mmcblk0", "/dev/mmcblk0p2", out, sizeof(out));
	ck_assert_str_eq(out, "sfdisk /dev/mmcblk0; mkfs.ext4 /dev/mmcblk0p2");
	report_advice_substitute(cmd, "/dev/mmcblk0", out, 12);
	ck_assert_str_eq(out, "sfdisk ");	/* a path is never cut */
}
END_TEST

Suite *layout_suite(void)
{
	static const char *const tools[] = { "sfdisk", "mkfs.fat", "mkfs.exfat", "mkfs.ext4",
					     "mkfs.f2fs", NULL };
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layout");
	const char *missing = NULL;

	for (size_t i = 0; tools[i] && !missing; i++)
		if (!tu_have_tool(tools[i]))
			missing = tools[i];
	tcase_set_timeout(tc, 60);
	if (missing) {
		char why[64];

		snprintf(why, sizeof(why), "%s is not installed", missing);
		tu_skip("layout: flawed layouts made by sfdisk and mkfs", why);
	} else {
		tcase_add_test(tc, test_flaw_63_sector_start);
		tcase_add_test(tc, test_flaw_fat32_default_reserved);
		tcase_add_test(tc, test_start_hint_matches_fix);
		tcase_add_test(tc, test_exfat_fix_keeps_its_type);
		tcase_add_test(tc, test_start_off_but_data_on_the_unit);
		tcase_add_test(tc, test_no_erase_size_no_verdicts);
		tcase_add_test(tc, test_text_verdict_first);
		tcase_add_test(tc, test_flaw_gpt_1mib_start);
		tcase_add_test(tc, test_flaw_f2fs_main_area);
		tcase_add_test(tc, test_flaw_f2fs_small_sections);
		tcase_add_test(tc, test_exfat_on_3x2n_unit);
		tcase_add_test(tc, test_unknown_fs_fix_reason);
		tcase_add_test(tc, test_fat32_out_of_reach);
		tcase_add_test(tc, test_fix_converges_at_real_size);
		tcase_add_loop_test(tc, test_advised_fat_passes, 0, 2);
		tcase_add_loop_test(tc, test_fix_spares_other_partitions, 0, 2);
		tcase_add_test(tc, test_fix_whole_device);
		tcase_add_test(tc, test_fat_with_fake_mbr_is_whole_device);
		tcase_add_loop_test(tc, test_gpt_damage, 0, 3);
		tcase_add_loop_test(tc, test_partition_device, 0, 3);
		tcase_add_test(tc, test_small_fat32_is_fat32);
		tcase_add_loop_test(tc, test_new_table_fix_formats_partition_1, 0, 2);
		tcase_add_loop_test(tc, test_empty_mbr, 0, 2);
		tcase_add_test(tc, test_no_fix_without_a_file_system_that_fits);
		tcase_add_test(tc, test_exfat_aligned_on_3x2n_unit_reformatted);
		tcase_add_test(tc, test_exfat_tiny_device_reason);
		tcase_add_test(tc, test_new_table_fat32_gets_its_type);
		tcase_add_test(tc, test_exfat_boot_checksum);
		tcase_add_test(tc, test_too_many_partitions_said_once);
		tcase_add_loop_test(tc, test_missing_fix_says_why, 0, 3);
	}
	tcase_add_loop_test(tc, test_bad_mbr_entries, 0, 3);
	tcase_add_test(tc, test_extended_loop);
	tcase_add_test(tc, test_image_below_a_sector);
	tcase_add_loop_test(tc, test_truncated_images, 0, 3);
	tcase_add_loop_test(tc, test_garbage_boot_sectors, 0, 3);
	tcase_add_test(tc, test_no_table);
	tcase_add_test(tc, test_check_is_read_only);
	tcase_add_test(tc, test_partition_start_from_sysfs);
	tcase_add_loop_test(tc, test_advise_check_usage, 0, 7);
	tcase_add_loop_test(tc, test_given_geometry_past_device, 0, 2);
	tcase_add_test(tc, test_placeholders);
	suite_add_tcase(s, tc);
	return s;
}
