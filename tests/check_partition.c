/* check_partition.c - the advice run for real: `flashprobe advise --json`
 * gives the commands, the real sfdisk and mkfs tools run them on sparse
 * image files, their fsck accepts the result, and this file reads the
 * partition table and each file system's own on-disk structures itself
 * (independently of flashprobe's parsers) to confirm that the partition
 * and the data area start where the advice promised.
 *
 * Geometries: every built-in simulated card, and generated ones (erase
 * blocks 128 KiB to 24 MiB including 3*2^n, pages 2-48 KiB, FAT areas
 * 0-16 MiB), each with three partition sizes.  `make check` samples the
 * generated ones; FLASHPROBE_LONG=1 (make check-long) runs them all.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blockfix.h"
#include "jsonv.h"
#include "sim.h"
#include "testutil.h"
#include "tests.h"

#define KIB ((uint64_t)1024)
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)

static const uint64_t gen_erases[] = {
	128 * KIB, 192 * KIB, 256 * KIB, 384 * KIB, 512 * KIB, 768 * KIB, 1 * MIB,
	1536 * KIB, 2 * MIB, 3 * MIB, 4 * MIB, 6 * MIB, 8 * MIB, 12 * MIB, 16 * MIB,
	24 * MIB,
};
static const uint64_t gen_pages[] = { 2 * KIB, 4 * KIB, 8 * KIB, 12 * KIB, 16 * KIB,
				      24 * KIB, 32 * KIB, 48 * KIB };
static const uint64_t gen_fats[] = { 0, 1 * MIB, 4 * MIB, 8 * MIB, 16 * MIB };
#define N_ERASES (sizeof(gen_erases) / sizeof(gen_erases[0]))
#define N_PAGES (sizeof(gen_pages) / sizeof(gen_pages[0]))
#define N_FATS (sizeof(gen_fats) / sizeof(gen_fats[0]))
#define N_GENERATED (N_ERASES * N_PAGES)
#define N_SAMPLED 12

struct geo_case {
	char name[128];
	uint64_t erase, page, fat, device;
	uint32_t sector;
};

static size_t n_sims(void)
{
	size_t n = 0;

	while (sim_profiles[n].name[0])
		n++;
	return n;
}

static void sim_case(size_t i, struct geo_case *c)
{
	const struct sim_profile *p = &sim_profiles[i];

	snprintf(c->name, sizeof(c->name), "sim:%s", p->name);
	c->erase = p->erase_bytes;
	c->page = p->page_bytes;
	c->fat = p->fat_bytes ? p->fat_start_bytes + p->fat_bytes : 0;
	c->device = p->size_bytes;
	c->sector = p->sector_bytes;
}

/* Every erase size meets every page size that divides it (an erase
 * block is whole pages); FAT areas and device sizes rotate through their
 * lists. */
static void generated_case(size_t i, struct geo_case *c)
{
	static const uint64_t devices[] = { 2 * GIB + 7 * 512, 3 * GIB + 3 * MIB, 5 * GIB };

	c->erase = gen_erases[i % N_ERASES];
	c->page = gen_pages[(i / N_ERASES + i) % N_PAGES];
	for (size_t k = 1; c->erase % c->page; k++)
		c->page = gen_pages[(i / N_ERASES + i + k) % N_PAGES];
	c->fat = gen_fats[i % N_FATS];
	c->device = devices[i % 3];
	c->sector = 512;
	snprintf(c->name, sizeof(c->name), "erase %" PRIu64 "K page %" PRIu64 "K fat %"
		 PRIu64 "M dev %" PRIu64 "M", c->erase / KIB, c->page / KIB, c->fat / MIB,
		 c->device / MIB);
}

/* ---- files ---- */

static char *image_file(uint64_t size)
{
	char *path = tu_sparse_file(tu_disk_dir(), size);

	ck_assert_ptr_nonnull(path);
	return path;
}

static char *partition_file(uint64_t size)
{
	char *path = tu_sparse_file(tu_fast_dir(), size);

	ck_assert_ptr_nonnull(path);
	return path;
}

static void read_at(const char *path, uint64_t off, void *buf, size_t len)
{
	ck_assert_int_eq(tu_read_at(path, off, buf, len), 0);
}

static void copy_into(const char *src, const char *dst, uint64_t off)
{
	ck_assert_int_eq(tu_copy_sparse(src, dst, off), 0);
}

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ---- the commands from advise --json ---- */

struct command {
	const char *purpose;
	const char *argv[24];
	const char *input;
	uint64_t data_align;
};

/* argv with DEVICE and PARTITION replaced by files. */
static void command_of(const struct jsonv *c, const char *device, const char *part,
		       struct command *out)
{
	const struct jsonv *argv = jsonv_get(c, "argv"), *in = jsonv_get(c, "stdin");
	size_t n = jsonv_len(argv);

	ck_assert(n > 0 && n < 24);
	out->purpose = jsonv_get(c, "purpose")->string;
	for (size_t i = 0; i < n; i++) {
		const char *a = jsonv_at(argv, i)->string;

		out->argv[i] = !strcmp(a, "DEVICE") ? device : !strcmp(a, "PARTITION") ? part : a;
	}
	out->argv[n] = NULL;
	out->input = in->type == JSONV_STRING ? in->string : NULL;
	out->data_align = (uint64_t)jsonv_get(c, "data_align_bytes")->number;
}

/* fsck.f2fs 1.15 counts free segments differently from its own mkfs when
 * a section has several segments (a fresh file system "fails" that one
 * line at some sizes); every other check must pass. */
static bool only_f2fs_free_count(const char *tool, const struct run_result *r)
{
	const char *fail = strstr(r->out, "[Fail]");

	return !strcmp(tool, "fsck.f2fs") && fail && !strstr(fail + 1, "[Fail]") &&
	       strstr(r->out, "free segment_count matched with CP             [Fail]");
}

static void run_ok(const char *const *argv, const char *input, const char *what)
{
	struct run_result r;

	tu_run_tool(&r, argv, input);
	ck_assert_msg(r.status == 0 || only_f2fs_free_count(argv[0], &r), "%s: %s failed (%d): %s%s", what, argv[0], r.status,
		      r.out, r.err);
	tu_run_free(&r);
}

/* ---- independent readings of what the tools wrote ---- */

struct part_entry {
	uint64_t start, size;	/* in bytes */
};

static struct part_entry read_first_partition(const char *image, const char *label)
{
	unsigned char s[512];
	struct part_entry p;

	read_at(image, 0, s, sizeof(s));
	ck_assert_uint_eq(le(s + 510, 2), 0xaa55);
	if (!strcmp(label, "dos")) {
		p.start = le(s + 446 + 8, 4) * 512;
		p.size = le(s + 446 + 12, 4) * 512;
	} else {
		unsigned char h[512], e[128];

		ck_assert_uint_eq(s[446 + 4], 0xee);	/* protective MBR */
		read_at(image, 512, h, sizeof(h));
		ck_assert(!memcmp(h, "EFI PART", 8));
		read_at(image, le(h + 72, 8) * 512, e, sizeof(e));
		p.start = le(e + 32, 8) * 512;
		p.size = (le(e + 40, 8) + 1) * 512 - p.start;
	}
	return p;
}

/* Where the file system's data begins, from the start of its partition. */
static uint64_t data_offset(const char *purpose, const char *part,
			    const struct geo_case *g, uint64_t align)
{
	unsigned char b[4096];

	read_at(part, 0, b, sizeof(b));
	if (!strcmp(purpose, "fat32")) {
		uint64_t ss = le(b + 11, 2);

		ck_assert(!memcmp(b + 82, "FAT32   ", 8));
		return (le(b + 14, 2) + b[16] * le(b + 36, 4)) * ss;
	}
	if (!strcmp(purpose, "fat16")) {	/* and the root directory */
		uint64_t ss = le(b + 11, 2);

		ck_assert(!memcmp(b + 54, "FAT16   ", 8));
		return (le(b + 14, 2) + b[16] * le(b + 22, 2)) * ss + le(b + 17, 2) * 32;
	}
	if (!strcmp(purpose, "exfat")) {
		ck_assert(!memcmp(b + 3, "EXFAT   ", 8));
		return le(b + 88, 4) << b[108];
	}
	if (!strcmp(purpose, "ext4")) {
		const unsigned char *sb = b + 1024;
		uint64_t stride = le(sb + 0x164, 2), width = le(sb + 0x170, 4);

		ck_assert_uint_eq(le(sb + 56, 2), 0xef53);
		ck_assert_uint_eq(width * 4096, align);
		ck_assert_uint_eq(width % stride, 0);
		ck_assert_uint_le(stride * 4096, g->page > 4096 ? g->page : 4096);
		return 0;
	}
	if (!strcmp(purpose, "f2fs")) {
		const unsigned char *sb = b + 1024;
		uint64_t blk = 1ULL << le(sb + 16, 4), seg = blk << le(sb + 20, 4);
		uint64_t section = seg * le(sb + 24, 4);

		ck_assert_uint_eq(le(sb, 4), 0xf2f52010);
		/* a section is a whole number of erase blocks */
		ck_assert_uint_eq(section % g->erase, 0);
		return le(sb + 92, 4) * blk;
	}
	ck_abort_msg("unknown purpose %s", purpose);
	return 0;
}

static const char *fsck_of(const char *purpose, const char *part, const char **argv)
{
	static const struct { const char *purpose, *tool, *opt1, *opt2; } tools[] = {
		{ "fat32", "fsck.fat", "-n", NULL }, { "fat16", "fsck.fat", "-n", NULL },
		{ "exfat", "fsck.exfat", "-n", NULL },
		{ "ext4", "e2fsck", "-fn", NULL }, { "f2fs", "fsck.f2fs", NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		size_t n = 0;

		if (strcmp(tools[i].purpose, purpose))
			continue;
		argv[n++] = tools[i].tool;
		if (tools[i].opt1)
			argv[n++] = tools[i].opt1;
		argv[n++] = part;
		argv[n] = NULL;
		return tools[i].tool;
	}
	return NULL;
}

static const char *const needed_tools[] = {
	"sfdisk", "mkfs.fat", "fsck.fat", "mkfs.exfat", "fsck.exfat", "mkfs.ext4",
	"e2fsck", "mkfs.f2fs", "fsck.f2fs", NULL,
};

static const char *missing_tool(void)
{
	for (size_t i = 0; needed_tools[i]; i++)
		if (!tu_have_tool(needed_tools[i]))
			return needed_tools[i];
	return NULL;
}

/* ---- one geometry, one partition size ---- */

static struct jsonv *advise_json(const struct geo_case *g, const char *image,
				 uint64_t size, const char *label)
{
	char e[32], p[32], f[32], s[32];
	const char *argv[16] = { "advise", "--json", "--erasesize", e };
	size_t n = 4;
	struct run_result r;
	struct jsonv *doc;

	snprintf(e, sizeof(e), "%" PRIu64, g->erase);
	snprintf(p, sizeof(p), "%" PRIu64, g->page);
	snprintf(f, sizeof(f), "%" PRIu64, g->fat);
	snprintf(s, sizeof(s), "%" PRIu64, size);
	if (g->page) {
		argv[n++] = "--page";
		argv[n++] = p;
	}
	argv[n++] = "--fat-area";
	argv[n++] = f;
	if (label) {
		argv[n++] = "--label";
		argv[n++] = label;
	}
	if (size) {
		argv[n++] = "--size";
		argv[n++] = s;
	}
	argv[n++] = image;
	argv[n] = NULL;
	tu_run(&r, argv);
	ck_assert_msg(r.status == 0, "%s: advise failed: %s", g->name, r.err);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "%s: advise --json is not JSON", g->name);
	tu_run_free(&r);
	return doc;
}

/* flashprobe check on the image agrees that partition 1 and its file
 * system start aligned, and finds no problem. */
static void check_agrees(const struct geo_case *g, const char *image, const char *label,
			 const char *purpose, uint64_t start, uint64_t data_start,
			 bool data_aligned);

static void make_filesystem(const struct geo_case *g, const struct jsonv *cmd,
			    const char *image, const char *label, const struct part_entry *pe,
			    uint64_t align)
{
	char *part = partition_file(pe->size);
	const char *fsck[8];
	struct command c;
	uint64_t off;

	command_of(cmd, image, part, &c);
	/* a used card: the advised line must replace the old file system
	 * (mkfs.f2fs refuses one without -f) */
	run_ok((const char *const[]){ "mkfs.fat", part, NULL }, NULL, g->name);
	run_ok(c.argv, c.input, g->name);
	fsck_of(c.purpose, part, fsck);
	run_ok(fsck, NULL, g->name);
	off = data_offset(c.purpose, part, g, align);
	ck_assert_msg((pe->start + off) % c.data_align == 0,
		      "%s, %s: data at %" PRIu64 " + %" PRIu64 ", not on %" PRIu64, g->name,
		      c.purpose, pe->start, off, c.data_align);
	/* FAT32, ext4 and f2fs are aligned to the whole unit; exFAT to the
	 * power of two that divides it */
	if (strcmp(c.purpose, "exfat"))
		ck_assert_uint_eq(c.data_align, align);
	else
		ck_assert_uint_eq(align % c.data_align, 0);
	if (g->sector == 512) {
		copy_into(part, image, pe->start);
		check_agrees(g, image, label, c.purpose, pe->start, pe->start + off,
			     (pe->start + off) % align == 0);
	}
	unlink(part);
	free(part);
}

/* The problems in list that are not a missing fix's reason. */
static size_t problems_but_no_fix(const struct jsonv *list)
{
	size_t n = 0;

	for (size_t i = 0; i < jsonv_len(list); i++)
		n += !strstr(jsonv_at(list, i)->string, ": no fix is given: ");
	return n;
}

/* One partition size: its image and the advice for it. */
struct size_run {
	uint64_t size;
	const char *label;		/* --label, or NULL for the default */
	char *image;
	struct jsonv *doc;
	pid_t pid;
};

/* Start argv with input on its stdin and its output discarded; sfdisk
 * sleeps a quarter of a second after writing, so the three sizes'
 * tables are written at once. */
static pid_t start_tool(const char *const *argv, const char *input)
{
	int fd[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fd[0], 0);
		dup2(null, 1);
		dup2(null, 2);
		close(fd[1]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fd[0]);
	ck_assert_int_eq(write(fd[1], input, strlen(input)), (ssize_t)strlen(input));
	close(fd[1]);
	return pid;
}

static void check_advice_numbers(const struct geo_case *g, struct size_run *s)
{
	const struct jsonv *cmds = jsonv_get(s->doc, "advice.commands");
	uint64_t align = (uint64_t)jsonv_get(s->doc, "advice.align_bytes")->number;
	uint64_t start = (uint64_t)jsonv_get(s->doc, "advice.partition_start_bytes")->number;
	uint64_t psize = (uint64_t)jsonv_get(s->doc, "advice.partition_size_bytes")->number;

	ck_assert_msg(jsonv_len(cmds) >= 4, "%s: only %zu commands", g->name, jsonv_len(cmds));
	ck_assert_str_eq(jsonv_get(jsonv_at(cmds, 0), "purpose")->string, "partition");
	ck_assert_str_eq(jsonv_get(s->doc, "advice.label")->string, s->label ? s->label : "dos");
	ck_assert_ptr_nonnull(strstr(jsonv_get(jsonv_at(cmds, 0), "stdin")->string,
				     s->label ? "label: gpt\n" : "label: dos\n"));
	ck_assert_uint_eq(start % align, 0);
	ck_assert_uint_eq(psize % align, 0);
	ck_assert_uint_ge(start, g->fat);
	if (s->size)
		ck_assert_uint_eq(psize, s->size / align * align);
}

static void start_partitioning(struct size_run *s)
{
	struct command c;

	command_of(jsonv_at(jsonv_get(s->doc, "advice.commands"), 0), s->image, NULL, &c);
	s->pid = start_tool(c.argv, c.input);
}

/* The table sfdisk wrote (run again in the open when it failed, for its
 * message), then every file system on the partition. */
static void finish_case(const struct geo_case *g, struct size_run *s)
{
	const struct jsonv *cmds = jsonv_get(s->doc, "advice.commands");
	uint64_t align = (uint64_t)jsonv_get(s->doc, "advice.align_bytes")->number;
	struct part_entry pe = {
		(uint64_t)jsonv_get(s->doc, "advice.partition_start_bytes")->number,
		(uint64_t)jsonv_get(s->doc, "advice.partition_size_bytes")->number,
	};

	/* sfdisk counts an image file in 512-byte sectors: a table for
	 * 4096-byte sectors is checked through the advice's numbers only */
	if (s->pid > 0) {
		struct part_entry got;
		int st = 0;

		ck_assert_int_eq(waitpid(s->pid, &st, 0), s->pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			struct command c;

			command_of(jsonv_at(cmds, 0), s->image, NULL, &c);
			run_ok(c.argv, c.input, g->name);
		}
		got = read_first_partition(s->image, jsonv_get(s->doc, "advice.label")->string);
		ck_assert_uint_eq(got.start, pe.start);
		ck_assert_uint_eq(got.size, pe.size);
	}
	for (size_t i = 1; i < jsonv_len(cmds); i++)
		make_filesystem(g, jsonv_at(cmds, i), s->image,
				jsonv_get(s->doc, "advice.label")->string, &pe, align);
	jsonv_free(s->doc);
	unlink(s->image);
	free(s->image);
}

/* The device, about half of it, and a size that fits nothing evenly (on
 * a GPT). */
static void run_sizes(const struct geo_case *g)
{
	struct size_run runs[3] = {
		{ .size = 0 }, { .size = g->device / 2 + 5 * MIB + 7 * 512 },
		{ .size = 700 * MIB + 123 * 512, .label = "gpt" },
	};

	for (int i = 0; i < 3; i++) {
		runs[i].image = image_file(g->device);
		runs[i].doc = advise_json(g, runs[i].image, runs[i].size, runs[i].label);
		check_advice_numbers(g, &runs[i]);
		runs[i].pid = -1;
		if (g->sector == 512)
			start_partitioning(&runs[i]);
	}
	for (int i = 0; i < 3; i++)
		finish_case(g, &runs[i]);
}

START_TEST(test_sim_cards)
{
	struct geo_case g;

	sim_case((size_t)_i, &g);
	run_sizes(&g);
}
END_TEST

START_TEST(test_generated)
{
	struct geo_case g;
	bool all = getenv("FLASHPROBE_LONG") != NULL;
	/* a spread sample: a stride coprime to the number of cases */
	size_t i = all ? (size_t)_i : (size_t)_i * 37 % N_GENERATED;

	generated_case(i, &g);
	run_sizes(&g);
}
END_TEST

/* ---- partitions an MBR cannot hold ---- */

/* advise without a device for a partition of 2TiB (which an MBR cannot
 * hold: GPT) and of 3TiB with --label=dos (cut to what it can hold):
 * the partition line pasted on a sparse image of the size asked for is
 * taken by sfdisk, which refused a dos line past 2^32 - 1 sectors ("No
 * free sectors available"). */
START_TEST(test_mbr_limit_pasted)
{
	static const struct { const char *size, *label, *want; uint64_t image; } cases[] = {
		{ "2TiB", NULL, "gpt", 2048 * GIB + 16 * MIB },
		{ "3TiB", "dos", "dos", 3072 * GIB },
	};
	const char *argv[] = { "advise", "--json", "-e", "4M", "--size", cases[_i].size,
			       cases[_i].label ? "--label" : NULL, cases[_i].label, NULL };
	char *image = image_file(cases[_i].image);
	struct part_entry pe;
	struct run_result r;
	struct command c;
	struct jsonv *doc;

	tu_run(&r, argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	doc = jsonv_parse(r.out);
	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(jsonv_get(doc, "advice.label")->string, cases[_i].want);
	command_of(jsonv_at(jsonv_get(doc, "advice.commands"), 0), image, NULL, &c);
	ck_assert_str_eq(c.purpose, "partition");
	run_ok(c.argv, c.input, cases[_i].size);
	pe = read_first_partition(image, cases[_i].want);
	ck_assert_uint_eq(pe.start % (4 * MIB), 0);
	ck_assert_uint_eq(pe.size % (4 * MIB), 0);
	ck_assert_uint_ge(pe.size, 2047 * GIB);
	jsonv_free(doc);
	tu_run_free(&r);
	unlink(image);
	free(image);
}
END_TEST

/* ---- check on what the advice made ---- */

static const char *fs_name(const char *purpose)
{
	return !strcmp(purpose, "fat32") || !strcmp(purpose, "fat16") ? "vfat" : purpose;
}

static void check_agrees(const struct geo_case *g, const char *image, const char *label,
			 const char *purpose, uint64_t start, uint64_t data_start,
			 bool data_aligned)
{
	char e[32], p[32], f[32];
	const char *argv[] = { "check", "--json", "--erasesize", e, "--fat-area", f,
			       g->page ? "--page" : image, g->page ? p : NULL, image, NULL };
	const struct jsonv *part;
	struct run_result r;
	struct jsonv *doc;

	snprintf(e, sizeof(e), "%" PRIu64, g->erase);
	snprintf(p, sizeof(p), "%" PRIu64, g->page);
	snprintf(f, sizeof(f), "%" PRIu64, g->fat);
	tu_run(&r, argv);
	ck_assert_msg(r.status == 0, "%s: check failed: %s", g->name, r.err);
	doc = jsonv_parse(r.out);
	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(jsonv_get(doc, "check.table")->string, label);
	ck_assert_uint_eq(jsonv_len(jsonv_get(doc, "check.problems")), 0);
	ck_assert_uint_eq(jsonv_len(jsonv_get(doc, "check.partitions")), 1);
	part = jsonv_at(jsonv_get(doc, "check.partitions"), 0);
	ck_assert_uint_eq((uint64_t)jsonv_get(part, "start_bytes")->number, start);
	ck_assert(jsonv_get(part, "start_aligned")->boolean);
	ck_assert(!jsonv_get(part, "in_fat_area")->boolean);
	ck_assert_str_eq(jsonv_get(part, "filesystem.type")->string, fs_name(purpose));
	ck_assert_uint_eq((uint64_t)jsonv_get(part, "filesystem.data_start_bytes")->number,
			  data_start);
	ck_assert_int_eq(jsonv_get(part, "filesystem.data_aligned")->boolean, data_aligned);
	/* nothing to say about a layout made as advised, except what the
	 * advice itself said it could not do (exFAT's power-of-two boundary),
	 * and why no fix does better where none can: exfatprogs' versions put
	 * the heap apart at some sizes (an FAT's length just past a boundary) */
	ck_assert_msg(problems_but_no_fix(jsonv_get(part, "problems")) ==
		      (data_aligned ? 0u : 1u), "%s, %s: %s", g->name, purpose, r.out);
	jsonv_free(doc);
	tu_run_free(&r);
}

/* ---- the text lines pasted on a loop device ---- */

/* The command printed after label in advise's text ("  f2fs        ..."). */
static void text_line(const char *out, const char *label, char *line, size_t len)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "\n  %-11s ", label);
	p = strstr(out, key);
	ck_assert_msg(p != NULL, "no %s line in: %s", label, out);
	p += strlen(key);
	snprintf(line, len, "%.*s", (int)strcspn(p, "\n"), p);
}

static void paste(const char *line)
{
	run_ok((const char *const[]){ "sh", "-c", line, NULL }, NULL, line);
}

/* The kernel reads the new table (partx where loop devices do not
 * rescan); the partition node is there again. */
static void reread(struct bf_scene *sc)
{
	struct stat st;

	bf_sh("partx -d '%s'; partx -a '%s'", sc->dev, sc->dev);
	for (int i = 0; i < 50 && stat(sc->part, &st); i++)
		usleep(100000);
	ck_assert_msg(stat(sc->part, &st) == 0, "no %s", sc->part);
}

/* The scene is built and removed by the parent (an unchecked fixture), so
 * that a failed test leaves no loop device or link behind. */
static struct bf_scene pasted_scene;
static char pasted_dir[] = "/dev/fptest-XXXXXX", pasted_link[64];

static void pasted_setup(void)
{
	if (!bf_image(&pasted_scene, 512 * MIB, true) || !bf_attach(&pasted_scene, "-P"))
		return;
	if (!mkdtemp(pasted_dir))
		return;
	snprintf(pasted_link, sizeof(pasted_link), "%s/my card;x", pasted_dir);
	if (symlink(pasted_scene.dev, pasted_link))
		pasted_link[0] = '\0';
}

static void pasted_teardown(void)
{
	if (pasted_link[0])
		unlink(pasted_link);
	rmdir(pasted_dir);
	bf_cleanup(&pasted_scene);
}

/* A card named by a link with a space and a ; (as /dev/disk/by-id names
 * can hold odd characters): the lines quote it, name the partition after
 * the kernel's node, and, pasted as printed on a card that held a file
 * system there, leave no old signature for mkfs to stop at. */
START_TEST(test_pasted_on_loop)
{
	struct bf_scene *sc = &pasted_scene;
	char pline[1024], fline[1024], want[80];
	const char *argv[] = { "advise", "-e", "4M", "--page", "16K", pasted_link, NULL };
	struct run_result r;

	ck_assert_msg(sc->part[0] && pasted_link[0], "no scene: %s", sc->why);
	tu_run(&r, argv);
	ck_assert_msg(r.status == 0, "%s", r.err);
	text_line(r.out, "partition", pline, sizeof(pline));
	text_line(r.out, "f2fs", fline, sizeof(fline));
	tu_run_free(&r);
	snprintf(want, sizeof(want), " '%s'", pasted_link);
	ck_assert_msg(strstr(pline, want), "%s", pline);
	snprintf(want, sizeof(want), " %.63s", sc->part);
	ck_assert_msg(strstr(fline, want), "%s", fline);
	paste(pline);
	reread(sc);
	run_ok((const char *const[]){ "mkfs.fat", sc->part, NULL }, NULL, "used card");
	paste(pline);
	reread(sc);
	tu_run_tool(&r, (const char *const[]){ "blkid", "-p", "-s", "TYPE", "-o", "value",
					       sc->part, NULL }, NULL);
	ck_assert_msg(!strstr(r.out, "vfat"), "the old file system is still there: %s", r.out);
	tu_run_free(&r);
	paste(fline);
}
END_TEST

/* The fix lines of a check's text output, pasted one after the other
 * (the partition's node read again after a table). */
static void paste_fix(struct bf_scene *sc, const char *out)
{
	const char *p = strstr(out, "  fix (");

	ck_assert_msg(p != NULL, "no fix in: %s", out);
	for (p = strchr(p, '\n') + 1; !strncmp(p, "    ", 4); p = strchr(p, '\n') + 1) {
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p + 4, "\n"), p + 4);
		paste(line);
		if (strstr(line, "sfdisk"))
			reread(sc);
	}
}

/* check run on the scene with erase block e and a 16 KiB page: its text. */
static void check_scene(struct bf_scene *sc, const char *e, struct run_result *r)
{
	tu_run(r, (const char *const[]){ "check", "-e", e, "--page", "16K", sc->dev, NULL });
	ck_assert_msg(r->status == 0, "%s", r->err);
}

/* An exFAT on a 6 MiB erase block, made on the partition node (as a user
 * does: mkfs.exfat then counts its 2 MiB boundary from the device's
 * start): from a start on the unit its heap lands 4 MiB past it.  check's
 * fix, pasted, gives a layout whose heap is on the unit, which check then
 * finds right; the fix repartitioned on the unit before, and its heap
 * landed off the unit again (the card wiped for nothing).  On a 1.5 MiB
 * unit mkfs.exfat's 1 MiB boundary puts the heap of 4 KiB clusters on the
 * unit by chance, with clusters under the page: check gave no fix
 * (formatting it again on the unit would move the heap off it); now a
 * boundary that lands from where it starts formats it in place. */
START_TEST(test_exfat_fix_pasted_on_odd_unit)
{
	/* as the advice's lines made it, and mkfs.exfat's defaults at 1 MiB */
	static const char *const table[] = { "start=12288, type=7", "start=2048, type=7",
					     "start=2048, type=7" };
	static const char *const erase[] = { "6M", "6M", "1536K" };
	const char *advised[] = { "mkfs.exfat", "-c", "16K", "--boundary-align=2048K", NULL, NULL };
	const char *plain[] = { "mkfs.exfat", NULL, NULL };
	const char *small[] = { "mkfs.exfat", "-c", "4K", NULL, NULL };
	const char **mkfs = _i == 0 ? advised : _i == 1 ? plain : small;
	struct bf_scene *sc = &pasted_scene;
	struct run_result r;
	char script[80];

	ck_assert_msg(sc->part[0], "no scene: %s", sc->why);
	snprintf(script, sizeof(script), "label: dos\n%s\n", table[_i]);
	run_ok((const char *const[]){ "sfdisk", "--wipe", "always", sc->dev, NULL }, script,
	       "table");
	reread(sc);
	mkfs[_i == 0 ? 4 : _i == 1 ? 1 : 3] = sc->part;
	run_ok(mkfs, NULL, "exfat");
	check_scene(sc, erase[_i], &r);
	ck_assert_msg(strstr(r.out, _i < 2 ? "on the device: NOT aligned" :
				    "smaller than the 16KiB page"), "%s", r.out);
	paste_fix(sc, r.out);
	tu_run_free(&r);
	check_scene(sc, erase[_i], &r);
	ck_assert_msg(strstr(r.out, "No problems found") &&
		      strstr(r.out, "on the device: aligned"), "%s", r.out);
	tu_run_free(&r);
}
END_TEST

/* advise's exFAT-only start on a 6 MiB erase block, as its exFAT line
 * words it, put into its partition line by hand (as a user would: type 7
 * for exFAT), then its exFAT line: check finds the heap on the unit.  The
 * advised start on the unit puts it 4 MiB off. */
START_TEST(test_exfat_only_start_pasted)
{
	struct bf_scene *sc = &pasted_scene;
	char out[16384], pline[1024], xline[1024], old[64], new[64];
	unsigned long long start, size;
	const char *why, *at;
	struct run_result r;

	ck_assert_msg(sc->part[0], "no scene: %s", sc->why);
	tu_run(&r, (const char *const[]){ "advise", "-e", "6M", "--page", "16K", sc->dev, NULL });
	ck_assert_msg(r.status == 0, "%s", r.err);
	snprintf(out, sizeof(out), "%s", r.out);
	tu_run_free(&r);
	text_line(out, "partition", pline, sizeof(pline));
	text_line(out, "exFAT", xline, sizeof(xline));
	why = strstr(out, "for exFAT alone, start the partition at ");
	ck_assert_msg(why && sscanf(strstr(why, "(start="), "(start=%llu, size=%llu",
				    &start, &size) == 2, "%s", out);
	at = strstr(pline, "start=");
	ck_assert_ptr_nonnull(at);
	snprintf(old, sizeof(old), "%.*s", (int)strcspn(at, "\\"), at);
	snprintf(new, sizeof(new), "start=%llu, size=%llu, type=7", start, size);
	ck_assert_uint_lt(strlen(pline) - strlen(old) + strlen(new), sizeof(pline));
	memmove((char *)at + strlen(new), at + strlen(old), strlen(at + strlen(old)) + 1);
	memcpy((char *)at, new, strlen(new));
	paste(pline);
	reread(sc);
	paste(xline);
	check_scene(sc, "6M", &r);
	ck_assert_msg(strstr(r.out, "No problems found") &&
		      strstr(r.out, "cluster heap at 6MiB on the device: aligned"), "%s\n%s",
		      pline, r.out);
	tu_run_free(&r);
}
END_TEST

Suite *partition_suite(void)
{
	Suite *s = suite_create("partition");
	TCase *tc = tcase_create("partition");
	const char *missing = missing_tool();
	char why[64];

	tcase_set_timeout(tc, 300);
	if (missing) {
		snprintf(why, sizeof(why), "%s is not installed", missing);
		tu_skip("partition: the advice run by sfdisk, mkfs and fsck", why);
	} else {
		tests_add_sweep(tc, test_sim_cards, n_sims());
		tcase_add_loop_test(tc, test_mbr_limit_pasted, 0, 2);
		tcase_add_loop_test(tc, test_generated, 0,
				    getenv("FLASHPROBE_LONG") ? (int)N_GENERATED : N_SAMPLED);
	}
	suite_add_tcase(s, tc);
	if (missing || bf_unavailable("partx blkid")) {
		tu_skip("partition/pasted: the advice's text lines pasted on a loop device",
			missing ? why : bf_unavailable("partx blkid"));
	} else {
		TCase *pasted = tcase_create("pasted");

		tcase_set_timeout(pasted, 120);
		tcase_add_unchecked_fixture(pasted, pasted_setup, pasted_teardown);
		tcase_add_test(pasted, test_pasted_on_loop);
		tcase_add_loop_test(pasted, test_exfat_fix_pasted_on_odd_unit, 0, 3);
		tcase_add_test(pasted, test_exfat_only_start_pasted);
		suite_add_tcase(s, pasted);
	}
	return s;
}
