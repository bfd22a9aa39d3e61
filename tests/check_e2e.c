/* check_e2e.c - the writing commands end to end, through the built binary:
 * consent, data preservation with --write on image files and loop devices,
 * the --destructive write area, the safety refusals, interruption and
 * crash recovery, simulated I/O errors and bad input (issues 3, 4, 5, 7).
 *
 * Every test runs on files in a private directory under /var/tmp and on
 * loop devices it attached itself; FLASHPROBE_STATE_DIR points into that
 * directory so that no journal lands in /var/lib.  Images, loop devices,
 * mounts and swap are made by unchecked fixtures in the parent process and
 * undone there, whatever a test did.  Tests that share an image repair it
 * (rewrite the seeded data, delete journals) before they assert, so one
 * failure does not cascade into the next. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blockfix.h"
#include "dev.h"
#include "journal.h"
#include "journal_format.h"
#include "jsonv.h"
#include "stats.h"
#include "testutil.h"
#include "units.h"
#include "util.h"
#include "tests.h"

#define MIB (1024ull * 1024)
#define IMG_BYTES (128 * MIB)
#define IMG_SEED 0xe2e5eedull
#define MAX_ARGS 16

/* ---- the private directory and the state directory ---- */

static char work[PATH_MAX];		/* private temp directory, or "" */
static char state[PATH_MAX + 8];	/* work/state = FLASHPROBE_STATE_DIR */

static bool env_up(void)
{
	snprintf(work, sizeof(work), "/var/tmp/flashprobe-e2e-XXXXXX");
	if (mkdtemp(work) == NULL) {
		work[0] = '\0';
		return false;
	}
	snprintf(state, sizeof(state), "%s/state", work);
	if (mkdir(state, 0700) != 0)
		return false;
	tu_state_dir_set(state);
	return true;
}

static void env_down(void)
{
	if (work[0] != '\0')
		tu_rm_tree(work);
	work[0] = state[0] = '\0';
	tu_state_dir_unset();
}

/* The entries of the state directory (journals, links) as "name (size)"
 * in names; returns how many there are. */
static size_t state_list(char *names, size_t len)
{
	return tu_dir_list(state, names, len);
}

/* The path of the one journal file in the state directory, or "". */
static void state_journal(char *path, size_t len, long long *size)
{
	DIR *d = opendir(state);
	struct dirent *e;

	path[0] = '\0';
	*size = -1;
	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		struct stat st;

		if (n < 8 || strcmp(e->d_name + n - 8, ".journal"))
			continue;
		snprintf(path, len, "%s/%s", state, e->d_name);
		if (lstat(path, &st) == 0)
			*size = (long long)st.st_size;
		break;
	}
	if (d != NULL)
		closedir(d);
}

static void state_clear(void)
{
	DIR *d = opendir(state);
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL) {
		char path[PATH_MAX + 300];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", state, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
}

/* ---- a checksum of a whole file or device ---- */

/* FNV-1a over 64-bit words (tu_checksum() goes byte by byte: eight times
 * slower on the 128 MiB images read a few hundred times here); 0 on
 * error. */
static uint64_t csum(const char *path)
{
	static uint64_t buf[1 << 15];
	uint64_t h = 1469598103934665603ULL;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		size_t words = (size_t)n / 8;

		for (size_t i = 0; i < words; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
		for (size_t i = words * 8; i < (size_t)n; i++)
			h = (h ^ ((unsigned char *)buf)[i]) * 1099511628211ULL;
	}
	close(fd);
	return n < 0 ? 0 : h | 1;
}

/* ---- seeded images: the same data as bf_image_in() ---- */

static void seeded_chunk(struct stats_rng *rng, uint64_t *buf, size_t words)
{
	for (size_t i = 0; i < words; i++)
		buf[i] = stats_rng_next(rng);
}

/* Write the seeded data over path again (in place). */
static bool image_rewrite(const char *path, uint64_t size, uint64_t seed)
{
	static uint64_t buf[8192];
	struct stats_rng rng;
	int fd = open(path, O_WRONLY);
	bool ok = fd >= 0;

	stats_rng_seed(&rng, seed);
	for (uint64_t off = 0; ok && off < size; off += sizeof(buf)) {
		size_t len = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);

		seeded_chunk(&rng, buf, sizeof(buf) / 8);
		ok = pwrite(fd, buf, len, (off_t)off) == (ssize_t)len;
	}
	if (fd >= 0) {
		ok = fsync(fd) == 0 && ok;
		close(fd);
	}
	return ok;
}

struct area {
	uint64_t lo, hi;	/* [lo, hi) */
};

static bool in_areas(uint64_t off, const struct area *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (off >= a[i].lo && off < a[i].hi)
			return true;
	return false;
}

/* Compare path with the seeded data it was made from.  Returns the offset
 * of the first byte that differs outside the areas, or UINT64_MAX; counts
 * the differing bytes inside them. */
static uint64_t first_change_outside(const char *path, uint64_t size, uint64_t seed,
				     const struct area *a, size_t na, uint64_t *inside)
{
	static uint64_t want[8192];
	static unsigned char got[sizeof(want)];
	const unsigned char *w = (const unsigned char *)want;
	struct stats_rng rng;
	uint64_t bad = UINT64_MAX;
	int fd = open(path, O_RDONLY);

	*inside = 0;
	if (fd < 0)
		return 0;
	stats_rng_seed(&rng, seed);
	for (uint64_t off = 0; off < size; off += sizeof(want)) {
		size_t len = size - off < sizeof(want) ? (size_t)(size - off) : sizeof(want);

		seeded_chunk(&rng, want, sizeof(want) / 8);
		if (pread(fd, got, len, (off_t)off) != (ssize_t)len) {
			bad = bad < off ? bad : off;
			break;
		}
		if (memcmp(got, want, len) == 0)
			continue;
		for (size_t i = 0; i < len; i++) {
			if (got[i] == w[i])
				continue;
			if (in_areas(off + i, a, na))
				(*inside)++;
			else if (bad == UINT64_MAX)
				bad = off + i;
		}
	}
	close(fd);
	return bad;
}

/* A size as the announcements print it, exactly ("96MiB", "1.5MiB"): an
 * area's bound is never rounded (a rounded end hid 4 KiB written past
 * "the first 100.50MiB"). */
static bool parse_printed_size(const char *s, size_t n, uint64_t *v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	char buf[40], *end;
	double x;

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	x = strtod(buf, &end);
	if (end == buf || x < 0)
		return false;
	for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i]))
			continue;
		*v = (uint64_t)(x * (double)(1ull << (10 * i)) + 0.5);
		return true;
	}
	return false;
}

/* The areas announced on stderr: "... will write [at most N] within the
 * first END of '...'", "... within START to END of '...'" or, for bounds
 * the short form would round, "... within bytes START to END of '...'". */
static size_t announced_areas(const char *err, struct area *a, size_t max)
{
	size_t n = 0;

	for (const char *p = strstr(err, " will write "); p && n < max;
	     p = strstr(p + 1, " will write ")) {
		const char *eol = strchr(p, '\n'), *x = strstr(p, " within "), *to, *of;
		uint64_t s = 0, e;

		if (x == NULL || (eol && x > eol))
			continue;
		x += 8;
		of = strstr(x, " of '");
		if (of == NULL || (eol && of > eol))
			continue;
		if (sscanf(x, "bytes %" SCNu64 " to %" SCNu64 " of '", &s, &e) == 2) {
			a[n].lo = s;
			a[n++].hi = e;
			continue;
		}
		if (!strncmp(x, "the first ", 10)) {
			to = x + 10;
		} else {
			to = strstr(x, " to ");
			if (to == NULL || to > of || !parse_printed_size(x, (size_t)(to - x), &s))
				continue;
			to += 4;
		}
		if (!parse_printed_size(to, (size_t)(of - to), &e))
			continue;
		a[n].lo = s;
		a[n].hi = e;
		n++;
	}
	return n;
}

/* ---- running the binary ---- */

static char *image;		/* the shared image of a test case */
static uint64_t image_sum;
static char tiny[PATH_MAX + 16], empty[PATH_MAX + 16], journal_link[PATH_MAX + 64];
static struct bf_scene scene;
static const char *scene_target;	/* scene.dev or scene.part */
static char scene_journal[PATH_MAX + 64];	/* a path on the scene's mount */
static uint64_t scene_sum;

/* The argument list with its placeholders filled in. */
static void expand(const char *const *tmpl, const char **argv)
{
	size_t i;

	for (i = 0; tmpl[i] && i < MAX_ARGS - 1; i++) {
		const char *t = tmpl[i];

		if (!strcmp(t, "@IMG"))
			t = image ? image : "/nonexistent/image";
		else if (!strcmp(t, "@TINY"))
			t = tiny;
		else if (!strcmp(t, "@EMPTY"))
			t = empty;
		else if (!strcmp(t, "@DIR"))
			t = work;
		else if (!strcmp(t, "@DEV"))
			t = scene_target ? scene_target : "/nonexistent/device";
		else if (!strcmp(t, "--journal=@J"))
			t = scene_journal;
		else if (!strcmp(t, "--journal=@LINK"))
			t = journal_link;
		argv[i] = t;
	}
	argv[i] = NULL;
}

static void run(struct run_result *r, const char *const *tmpl)
{
	const char *argv[MAX_ARGS];

	expand(tmpl, argv);
	tu_run(r, argv);
	ck_assert_ptr_nonnull(r->out);
	ck_assert_ptr_nonnull(r->err);
}

static char *cmdline(const char *const *tmpl, char *buf, size_t len)
{
	const char *argv[MAX_ARGS];

	expand(tmpl, argv);
	buf[0] = '\0';
	for (size_t i = 0; argv[i]; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
	}
	return buf;
}

/* The first line of s, for messages. */
static const char *first_line(const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(s, "\n"), s);
	return buf;
}

static const struct jsonv *need(const struct jsonv *doc, const char *path)
{
	const struct jsonv *v = jsonv_get(doc, path);

	ck_assert_msg(v != NULL, "JSON lacks %s", path);
	return v;
}

static double need_number(const struct jsonv *doc, const char *path)
{
	const struct jsonv *v = need(doc, path);

	ck_assert_msg(v->type == JSONV_NUMBER, "JSON %s is not a number", path);
	return v->number;
}

/* ---- fixtures ---- */

static void image_setup(void)
{
	if (!env_up())
		return;
	image = bf_image_in(work, IMG_BYTES, IMG_SEED);
	image_sum = image ? csum(image) : 0;
	snprintf(tiny, sizeof(tiny), "%s/tiny.img", work);
	snprintf(empty, sizeof(empty), "%s/empty.img", work);
	snprintf(journal_link, sizeof(journal_link), "--journal=%s/link-to-image", work);
	{
		char *t = bf_image_in(work, MIB, 99);

		if (t != NULL && rename(t, tiny) != 0)
			unlink(t);
		free(t);
	}
	close(open(empty, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	if (image != NULL && symlink(image, journal_link + strlen("--journal=")) != 0)
		journal_link[0] = '\0';
}

static void image_teardown(void)
{
	free(image);
	image = NULL;
	image_sum = 0;
	env_down();
}

static void env_setup(void)
{
	env_up();
}

static void require_image(void)
{
	ck_assert_msg(image != NULL && image_sum != 0, "could not make the test image in %s",
		      work[0] ? work : "/var/tmp");
}

/* Put the shared image back as it was made and drop journals: called
 * before asserting, so that a failure does not spill into the next test. */
static void repair(void)
{
	if (image != NULL && csum(image) != image_sum)
		image_rewrite(image, IMG_BYTES, IMG_SEED);
	state_clear();
}

/* ==== 1. consent ==== */

static const char *const no_consent_cases[][MAX_ARGS] = {
	{ "open-au", "@IMG", NULL },
	{ "find-fat", "@IMG", NULL },
	{ "open-au", "--erasesize=1M", "--max-open=4", "--json", "@IMG", NULL },
	{ "find-fat", "--erasesize=1M", "--manual", "@IMG", NULL },
	{ "-O", "--open-au-nr=2", "--erasesize=1M", "@IMG", NULL },
	{ "-f", "--erasesize=1M", "@IMG", NULL },
};

/* A writing test without --write/--destructive: status 2, one line naming
 * both, nothing on stdout, nothing written, no journal. */
static void check_no_consent(const char *const *tmpl, const char *target, uint64_t sum)
{
	const char *args[MAX_ARGS];
	struct run_result r;
	char cmd[1024], names[512];
	size_t i;

	for (i = 0; tmpl[i]; i++)
		args[i] = strcmp(tmpl[i], "@IMG") ? tmpl[i] : target;
	args[i] = NULL;
	run(&r, args);
	cmdline(args, cmd, sizeof(cmd));
	ck_assert_msg(r.status == 2, "%s: status %d, stderr '%s'", cmd, r.status, r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "%s: stderr is not one line: '%s'", cmd, r.err);
	ck_assert_int_eq(strncmp(r.err, "flashprobe: ", 12), 0);
	ck_assert_msg(strstr(r.err, "--write") && strstr(r.err, "--destructive"),
		      "%s: '%s' names neither --write nor --destructive", cmd, r.err);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(csum(target) == sum, "%s changed %s", cmd, target);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "%s left %s", cmd, names);
	tu_run_free(&r);
}

START_TEST(test_no_consent)
{
	require_image();
	check_no_consent(no_consent_cases[_i], image, image_sum);
}
END_TEST

/* The reason bench.skipped gives for workload w, or NULL when it ran. */
static const char *bench_skip_reason(const struct jsonv *doc, const char *w)
{
	const struct jsonv *skipped = need(doc, "bench.skipped");

	ck_assert_int_eq(skipped->type, JSONV_ARRAY);
	for (size_t i = 0; i < jsonv_len(skipped); i++)
		if (!strcmp(jsonv_get(jsonv_at(skipped, i), "test")->string, w))
			return jsonv_get(jsonv_at(skipped, i), "reason")->string;
	return NULL;
}

/* bench without consent: reads run, the write workloads are skipped. */
START_TEST(test_bench_no_consent)
{
	static const char *const args[] = { "bench", "--json", "--runtime=200ms", "--warmup=0",
					    "--repeat=1", "--size=16M", "@IMG", NULL };
	struct run_result r;
	struct jsonv *doc;
	char names[512];
	uint64_t sum;

	require_image();
	run(&r, args);
	sum = csum(image);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "stdout is not one JSON document: %s", r.out);
	for (unsigned i = 0; i < 2; i++) {
		const char *w = i ? "rand_write" : "seq_write";
		const char *why = bench_skip_reason(doc, w);

		ck_assert_msg(why && why[0], "%s is not skipped, or without a reason", w);
		ck_assert_str_eq(why, "read-only");
	}
	ck_assert_ptr_null(bench_skip_reason(doc, "seq_read"));
	ck_assert_ptr_null(bench_skip_reason(doc, "rand_read"));
	ck_assert(need_number(doc, "bench.seq_read.bytes_per_sec") > 0);
	ck_assert(need_number(doc, "bench.rand_read.iops") > 0);
	ck_assert(need_number(doc, "bench.bytes_written") == 0);
	ck_assert_msg(strstr(r.err, " will write ") == NULL, "a write area was announced: %s", r.err);
	ck_assert_msg(sum == image_sum, "bench without consent changed the image");
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "left %s", names);
	jsonv_free(doc);
	tu_run_free(&r);
}
END_TEST

/* probe without consent runs its read-only part only. */
START_TEST(test_probe_no_consent)
{
	static const char *const args[] = { "probe", "--json", "--quick", "@IMG", NULL };
	struct run_result r;
	struct jsonv *doc;
	const struct jsonv *v;
	char names[512];
	uint64_t sum;

	require_image();
	run(&r, args);
	sum = csum(image);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "stdout is not one JSON document: %s", r.out);
	ck_assert(need_number(doc, "bytes_written") == 0);
	ck_assert_msg(need(doc, "open_au")->type == JSONV_NULL, "open_au ran without consent");
	ck_assert_msg(need(doc, "fat_area")->type == JSONV_NULL, "find-fat ran without consent");
	v = need(doc, "skipped");
	ck_assert_msg(v->type == JSONV_ARRAY && jsonv_len(v) == 3,
		      "probe does not say that it skipped the capacity and write tests");
	ck_assert_msg(sum == image_sum, "probe without consent changed the image");
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "left %s", names);
	jsonv_free(doc);
	tu_run_free(&r);
}
END_TEST

/* ==== 2. --write keeps the data: image file and loop device ==== */

/* --yes in every case: the loop device holds a file system, and without a
 * terminal to confirm on only --yes consents to testing it. */
static const struct write_case {
	const char *args[MAX_ARGS];
	const char *key;		/* top-level JSON object, "" for probe */
	const char *keys[12];		/* members it must have */
} write_cases[] = {
	{ { "open-au", "--write", "--yes", "--json", "--erasesize=4M", "--max-open=4", "@T", NULL },
	  "open_au",
	  { "erase_size_bytes", "linear", "random", "trials", "note", "bytes_written",
	    "elapsed_ns", NULL } },
	{ { "find-fat", "--write", "--yes", "--json", "--erasesize=1M", "@T", NULL },
	  "fat_area",
	  { "found", "start_bytes", "size_bytes.value", "size_bytes.confidence",
	    "erase_size_bytes", "rows", "bytes_written", "elapsed_ns", NULL } },
	{ { "bench", "--write", "--yes", "--json", "--runtime=200ms", "--warmup=0", "--repeat=1",
	    "--size=16M", "@T", NULL },
	  "bench",
	  { "seq_read", "seq_write", "rand_read", "rand_write", "bytes_written", NULL } },
	{ { "probe", "--write", "--yes", "--json", "--quick", "--erasesize=1M", "@T", NULL },
	  "",
	  { "geometry", "align", "open_au", "fat_area", "advice", "bytes_written", NULL } },
};

static void check_bench_workload(const struct jsonv *doc, const char *w)
{
	static const char *const keys[] = { "name", "block_bytes", "bytes_per_sec", "iops",
					    "lat_ns.mean", "lat_ns.p50", "lat_ns.p95",
					    "lat_ns.p99", "lat_ns.p999", "lat_ns.max", "repeats" };
	char p[96];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(p, sizeof(p), "bench.%s.%s", w, keys[i]);
		need(doc, p);
	}
	ck_assert_msg(!bench_skip_reason(doc, w), "%s skipped with --write", w);
	snprintf(p, sizeof(p), "bench.%s.bytes_per_sec", w);
	ck_assert_msg(need_number(doc, p) > 0, "%s: no throughput", w);
}

/* One write test on target (image or loop device): status 0, the JSON
 * report, and the whole device unchanged afterwards, no journal left. */
static void write_case_on(const struct write_case *c, const char *target, const char *kind)
{
	const char *tmpl[MAX_ARGS];
	struct run_result r;
	struct jsonv *doc;
	char prefix[64], p[128], names[512], cmd[1024];
	uint64_t before = csum(target), after;
	size_t i;

	ck_assert_msg(before != 0, "cannot read %s", target);
	for (i = 0; c->args[i]; i++)
		tmpl[i] = strcmp(c->args[i], "@T") ? c->args[i] : target;
	tmpl[i] = NULL;
	run(&r, tmpl);
	after = csum(target);
	cmdline(tmpl, cmd, sizeof(cmd));
	ck_assert_msg(r.status == 0, "%s: status %d, stderr '%s'", cmd, r.status, r.err);
	ck_assert_msg(strstr(r.err, "backed up"), "%s: no backed-up write area announced: %s",
		      cmd, r.err);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "%s: stdout is not one JSON document: %s", cmd, r.out);
	ck_assert_msg(need(doc, "device.kind")->type == JSONV_STRING &&
		      !strcmp(need(doc, "device.kind")->string, kind), "device.kind is not %s", kind);
	snprintf(prefix, sizeof(prefix), "%s%s", c->key, c->key[0] ? "." : "");
	for (i = 0; c->keys[i]; i++) {
		snprintf(p, sizeof(p), "%s%s", prefix, c->keys[i]);
		need(doc, p);
	}
	snprintf(p, sizeof(p), "%sbytes_written", prefix);
	ck_assert_msg(need_number(doc, p) > 0, "%s: %s is 0: nothing was tested", cmd, p);
	if (!strcmp(c->key, "open_au")) {
		ck_assert(need_number(doc, "open_au.erase_size_bytes") == 4 * MIB);
		ck_assert(need(doc, "open_au.trials")->type == JSONV_ARRAY);
		ck_assert_uint_gt(jsonv_len(need(doc, "open_au.trials")), 0);
	} else if (!strcmp(c->key, "fat_area")) {
		ck_assert(need_number(doc, "fat_area.erase_size_bytes") == MIB);
		ck_assert(need(doc, "fat_area.found")->type == JSONV_BOOL);
		ck_assert(need(doc, "fat_area.rows")->type == JSONV_ARRAY);
	} else if (!strcmp(c->key, "bench")) {
		check_bench_workload(doc, "seq_read");
		check_bench_workload(doc, "seq_write");
		check_bench_workload(doc, "rand_read");
		check_bench_workload(doc, "rand_write");
	} else {
		ck_assert_msg(need(doc, "open_au")->type == JSONV_OBJECT,
			      "probe --write did not run open-au");
		ck_assert_msg(need(doc, "fat_area")->type == JSONV_OBJECT,
			      "probe --write did not run find-fat");
	}
	ck_assert_msg(after == before, "%s: the checksum of %s changed", cmd, target);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "%s left %s in the state directory",
		      cmd, names);
	jsonv_free(doc);
	tu_run_free(&r);
}

START_TEST(test_write_image)
{
	require_image();
	write_case_on(&write_cases[_i], image, "file");
	ck_assert_uint_eq(csum(image), image_sum);
}
END_TEST

static void loop_write_setup(void)
{
	if (!env_up())
		return;
	/* a real file system on the device where mkfs.ext4 exists; the
	 * random data of the image everywhere else */
	if (bf_image(&scene, IMG_BYTES, false) && bf_attach(&scene, "") &&
	    (!bf_have("mkfs.ext4") || bf_mkfs(&scene, scene.dev)))
		scene_sum = csum(scene.dev);
	scene_target = scene.dev;
}

static void scene_teardown(void)
{
	bf_cleanup(&scene);
	scene_target = NULL;
	scene_journal[0] = '\0';
	scene_sum = 0;
	env_down();
}

static void require_scene(void)
{
	ck_assert_msg(scene.dev != NULL && scene_sum != 0 && !scene.why[0],
		      "loop scene setup failed: %s", scene.why[0] ? scene.why : "checksum");
}

START_TEST(test_write_loop)
{
	require_scene();
	write_case_on(&write_cases[_i], scene.dev, "block");
	ck_assert_uint_eq(csum(scene.dev), scene_sum);
}
END_TEST

START_TEST(test_no_consent_loop)
{
	require_scene();
	check_no_consent(no_consent_cases[_i], scene.dev, scene_sum);
}
END_TEST

/* --quiet leaves nothing on stderr of a run that goes well, not even the
 * note that the card holds a file system (it said so before): the yes
 * was given, and scripts that treat stderr as trouble have none. */
START_TEST(test_quiet_write_loop)
{
	const char *args[] = { "find-fat", "--write", "--yes", "--erasesize=1M",
			       scene.dev, NULL, NULL };
	struct run_result r;

	require_scene();
	run(&r, args);
	ck_assert_msg(r.status == 0, "status %d, stderr '%s'", r.status, r.err);
	if (bf_have("mkfs.ext4"))	/* the note is there to be silenced */
		ck_assert_msg(strstr(r.err, "holds"), "no note of the data: '%s'", r.err);
	tu_run_free(&r);
	args[4] = "--quiet";
	args[5] = scene.dev;
	run(&r, args);
	ck_assert_msg(r.status == 0, "status %d, stderr '%s'", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	ck_assert_uint_eq(csum(scene.dev), scene_sum);
	tu_run_free(&r);
}
END_TEST

/* The image behind an attached loop device is not written around it. */
START_TEST(test_write_backing_file)
{
	static const char *const args[] = { "open-au", "--write", "--erasesize=1M", "@IMG", NULL };
	struct run_result r;
	char names[512];
	char *saved = image;

	require_scene();
	image = scene.image;
	run(&r, args);
	image = saved;
	ck_assert_msg(r.status == 3, "status %d, stderr '%s'", r.status, r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "stderr: '%s'", r.err);
	ck_assert_msg(strstr(r.err, scene.dev), "'%s' does not name %s", r.err, scene.dev);
	ck_assert_str_eq(r.out, "");
	ck_assert_uint_eq(csum(scene.dev), scene_sum);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "left %s", names);
	tu_run_free(&r);
}
END_TEST

/* ==== 3. --destructive writes only inside the announced area ==== */

/* --yes: the images hold a pattern, which --destructive asks about. */

static const char *const destructive_cases[][MAX_ARGS] = {
	{ "open-au", "--destructive", "--yes", "--erasesize=1M", "--max-open=4", "@IMG", NULL },
	{ "open-au", "--destructive", "--yes", "--erasesize=2M", "--max-open=4", "--offset=40M", "@IMG",
	  NULL },
	{ "-O", "--destructive", "--yes", "--open-au-nr=2", "--erasesize=1M", "--blocksize=64K", "@IMG",
	  NULL },
	{ "find-fat", "--destructive", "--yes", "--erasesize=1M", "@IMG", NULL },
	{ "-f", "--destructive", "--yes", "--erasesize=1M", "--fat-nr=3", "@IMG", NULL },
	{ "bench", "--destructive", "--yes", "--runtime=200ms", "--warmup=0", "--repeat=1", "--size=16M",
	  "@IMG", NULL },
	{ "bench", "--destructive", "--yes", "--runtime=200ms", "--warmup=0", "--repeat=1", "--size=8M",
	  "--offset=100M", "@IMG", NULL },
	{ "probe", "--destructive", "--yes", "--quick", "--erasesize=1M", "@IMG", NULL },
	{ "capacity", "--destructive", "--yes", "@IMG", NULL },
};

/* The capacity check writes up to the last block: on an image whose size
 * the short form rounds down ("127.50MiB" for 508 KiB less than 128 MiB),
 * the announcement said so and 4 KiB were written past it. */
#define ODD_IMG_BYTES (IMG_BYTES - 508 * 1024)

static uint64_t destructive_image_bytes(size_t i)
{
	return strcmp(destructive_cases[i][0], "capacity") ? IMG_BYTES : ODD_IMG_BYTES;
}

START_TEST(test_destructive_area)
{
	uint64_t seed = IMG_SEED + 1 + (uint64_t)_i, inside, bad;
	struct area a[8];
	struct run_result r;
	char cmd[1024], names[512];
	size_t n;

	image = bf_image_in(work, destructive_image_bytes(_i), seed);
	ck_assert_msg(image != NULL, "cannot make an image in %s", work);
	run(&r, destructive_cases[_i]);
	cmdline(destructive_cases[_i], cmd, sizeof(cmd));
	n = announced_areas(r.err, a, 8);
	bad = first_change_outside(image, destructive_image_bytes(_i), seed, a, n, &inside);
	unlink(image);
	free(image);
	image = NULL;
	ck_assert_msg(r.status == 0, "%s: status %d, stderr '%s'", cmd, r.status, r.err);
	ck_assert_msg(n > 0, "%s announced no write area: '%s'", cmd, r.err);
	ck_assert_msg(bad == UINT64_MAX, "%s changed byte %llu, outside the area it announced: %s",
		      cmd, (unsigned long long)bad, r.err);
	ck_assert_msg(inside > 0, "%s wrote nothing inside its area", cmd);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "%s left %s", cmd, names);
	tu_run_free(&r);
}
END_TEST

/* Data a writing test asks about before it writes, without a terminal
 * to ask on: status 3 and not a byte changed.  A blank image with
 * nothing but a signature: the ones at the end (md 0.90 and 1.0
 * superblocks, a GPT's backup header), which the first 68 KiB it read
 * before never showed, and ones it did not know (squashfs), for --write
 * too.  A pattern without any signature: --destructive, which keeps no
 * backup, asks about it; an erased image it does not. */
static const struct {
	uint64_t from_end;	/* where the magic goes: bytes before the end,
				 * or 0: the start */
	const char *magic;	/* NULL: a pattern image, no magic */
	const char *consent;
	const char *named;	/* in the refusal; NULL: tested, status 0 */
} data_cases[] = {
	{ 8 * 1024, "\xfc\x4e\x2b\xa9", "--write", "md 1.0" },
	{ 64 * 1024, "\xfc\x4e\x2b\xa9", "--destructive", "md 0.90" },
	{ 512, "EFI PART", "--write", "GPT partition table (backup header)" },
	{ 0, "hsqs", "--write", "squashfs" },
	{ 0, NULL, "--destructive", "non-erased content" },
	{ 0, "", "--destructive", NULL },
};

START_TEST(test_data_asks_first)
{
	const char *args[] = { "find-fat", data_cases[_i].consent, "--erasesize=1M", "@IMG",
			       NULL };
	const char *magic = data_cases[_i].magic;
	struct run_result r;
	uint64_t before;

	image = magic ? tu_sparse_file(work, 64 * MIB) : bf_image_in(work, 64 * MIB, IMG_SEED);
	ck_assert_ptr_nonnull(image);
	if (magic && magic[0])
		ck_assert_int_eq(tu_write_at(image, data_cases[_i].from_end ?
					     64 * MIB - data_cases[_i].from_end : 0, magic,
					     strlen(magic)), 0);
	before = csum(image);
	run(&r, args);
	if (data_cases[_i].named) {
		ck_assert_msg(r.status == 3 && strstr(r.err, data_cases[_i].named) &&
			      strstr(r.err, "add --yes"), "status %d: %s", r.status, r.err);
		ck_assert_msg(csum(image) == before, "the refused run changed the image");
	} else {
		ck_assert_msg(r.status == 0, "an erased image: status %d: %s", r.status, r.err);
	}
	tu_run_free(&r);
	unlink(image);
	free(image);
	image = NULL;
}
END_TEST

/* A second loop device over the image of the scene (another name for
 * the same data), detached by alias_teardown(). */
static struct bf_scene alias;

static bool attach_alias(void)
{
	alias.image = scene.image ? strdup(scene.image) : NULL;
	return alias.image && bf_attach(&alias, "");
}

static void alias_teardown(void)
{
	bf_cleanup(&alias);	/* unmounts and detaches first */
	scene_teardown();
}

static void output_alias_setup(void)
{
	loop_write_setup();
	if (scene_sum && !attach_alias())
		scene_sum = 0;
	scene_target = scene.dev;
}

/* Outputs that are the data of the loop device under test under another
 * name: its backing file, a link to that, a second loop device over it;
 * named by --svg or opened by the shell as stdout or stderr.  Each is a
 * bad invocation (status 2) refused before anything is written. */
enum data_name { NAME_IMAGE, NAME_LINK, NAME_ALIAS_LOOP };

static const struct output_alias_case {
	const char *svg, *redirect;	/* formats taking the path, or "" */
	enum data_name name;
} output_alias_cases[] = {
	{ "--svg='%s'", "", NAME_IMAGE },
	{ "--svg='%s'", "", NAME_LINK },
	{ "--svg='%s'", "", NAME_ALIAS_LOOP },
	{ "", "1<>'%s'", NAME_IMAGE },
	{ "", "2<>'%s'", NAME_IMAGE },
	{ "", "1<>'%s'", NAME_ALIAS_LOOP },
};

static const char *data_name_path(enum data_name n, char *buf, size_t len)
{
	if (n == NAME_IMAGE)
		return scene.image;
	if (n == NAME_ALIAS_LOOP)
		return alias.dev;
	snprintf(buf, len, "%s/image.link", work);
	unlink(buf);
	ck_assert_int_eq(symlink(scene.image, buf), 0);
	return buf;
}

START_TEST(test_output_is_device_data)
{
	const struct output_alias_case *c = &output_alias_cases[_i];
	char link[PATH_MAX + 16], svg[PATH_MAX + 32], redirect[PATH_MAX + 32];
	const char *path;
	int status;

	require_scene();
	path = data_name_path(c->name, link, sizeof(link));
	snprintf(svg, sizeof(svg), c->svg, path);
	snprintf(redirect, sizeof(redirect), c->redirect, path);
	/* the subshell keeps the redirection from bf_sh()'s own */
	status = bf_sh("( '%s' find-fat --erasesize=1M --write --yes -q %s '%s' %s )",
		       tu_binary(), svg, scene.dev, redirect);
	ck_assert_msg(status == 2, "%s %s: status %d", svg, redirect, status);
	ck_assert_msg(csum(scene.dev) == scene_sum, "%s %s: the device changed", svg,
		      redirect);
}
END_TEST

/* Two runs on one image through two loop devices over it, or through
 * the image and a loop device: each took only the lock of its own node,
 * so a second writer went ahead with its journal in another state
 * directory (FLASHPROBE_STATE_DIR dropped by sudo, say) and both saved
 * and restored each other's test patterns.  A run on a loop device now
 * locks the image too.  Here the test holds the lock a running test
 * holds: case 0 a writer on the first loop device, case 1 a writer on
 * the image file itself (flock, as dev_lock takes it), case 2 the same
 * for a timing run on the second loop device; case 3 only an O_EXCL open
 * of the first loop device, as a file system mounted in another mount
 * namespace holds it (no mount shows here): a writer on the second one
 * went ahead before. */
START_TEST(test_alias_loop_shares_file_lock)
{
	char err[512] = "", names[512];
	struct fp_dev *held = NULL;
	struct run_result r;
	int fd = -1;

	require_scene();
	ck_assert_ptr_nonnull(alias.dev);
	if (_i == 0) {
		ck_assert_msg(fp_dev_open_path(scene.dev, FP_OPEN_WRITE, &held, err,
					       sizeof(err)) == 0, "%s", err);
	} else if (_i == 3) {
		fd = open(scene.dev, O_RDONLY | O_EXCL | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
	} else {
		fd = open(scene.image, O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	}
	if (_i != 2)
		run(&r, (const char *const[]){ "find-fat", "--write", "--yes",
					      "--erasesize=1M", alias.dev, NULL });
	else
		run(&r, (const char *const[]){ "align", alias.dev, NULL });
	if (held)
		fp_dev_close(held);
	if (fd >= 0)
		close(fd);
	ck_assert_msg(r.status == 3, "case %d: status %d, stderr '%s'", _i, r.status, r.err);
	ck_assert_msg(strstr(r.err, _i != 2 ? "refusing to write" : "refusing to time") &&
		      strstr(r.err, _i == 0 || _i == 3 ? scene.dev : scene.image) &&
		      strstr(r.err, "wait for it to finish"), "case %d: %s", _i, r.err);
	ck_assert_str_eq(r.out, "");
	ck_assert_uint_eq(csum(scene.dev), scene_sum);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "left %s", names);
	tu_run_free(&r);
}
END_TEST

/* A loop device whose image was renamed away after it was attached:
 * kept under a new name through a hard link, its old name (the one
 * sysfs still gives, marked " (deleted)") now another file, the decoy.
 * flashprobe followed that name: it locked the decoy and let a second
 * writer on the image under its new name run at the same time, did not
 * see that the image was attached, and let --svg and stdout land on it
 * (attack test: 15 MB differed after two writers; the read-only
 * "bench --svg=IMAGE LOOP" truncated the image).  The kernel's identity
 * of the file is what counts now. */
static char decoy[PATH_MAX];
static uint64_t decoy_sum;

static bool rename_image_away(void)
{
	char dir[PATH_MAX], *moved, *other, *slash;

	snprintf(dir, sizeof(dir), "%s", scene.image);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return false;
	*slash = '\0';
	if (asprintf(&moved, "%s.moved", scene.image) < 0)
		return false;
	if (link(scene.image, moved) != 0 || unlink(scene.image) != 0) {
		free(moved);
		return false;
	}
	snprintf(decoy, sizeof(decoy), "%s", scene.image);
	free(scene.image);
	scene.image = moved;
	other = bf_image_in(dir, MIB, IMG_SEED + 99);
	if (other == NULL || rename(other, decoy) != 0) {
		free(other);
		decoy[0] = '\0';
		return false;
	}
	free(other);
	decoy_sum = csum(decoy);
	return true;
}

static void renamed_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, false) && bf_attach(&scene, "") &&
	    rename_image_away())
		scene_sum = csum(scene.dev);
	scene_target = scene.dev;
}

static void renamed_teardown(void)
{
	if (decoy[0])
		unlink(decoy);
	decoy[0] = '\0';
	alias_teardown();
}

/* With the image renamed away: a writer on the loop device cannot lock
 * the image (no name leads to it), so it is refused (status 3); a writer
 * on the image under its new name sees the loop device over it (3);
 * --svg or stdout onto the image under its new name is a bad invocation
 * (2).  Device, image and decoy must not change. */
static const struct renamed_case {
	const char *cmd;	/* shell words after the binary; %s: dev, then image */
	bool image_first;	/* the image's name comes before the device's */
	int status;
	const char *says;
} renamed_cases[] = {
	{ "find-fat --write --yes --erasesize=1M '%s'", false, 3, "renamed or deleted" },
	{ "find-fat --write --yes --erasesize=1M '%s'", true, 3, "attached to loop device" },
	{ "align --svg='%s' '%s'", true, 2, "device under test" },
	{ "align '%s' 1<>'%s'", false, 2, "device under test" },
};

START_TEST(test_renamed_image)
{
	const struct renamed_case *c = &renamed_cases[_i];
	char cmd[PATH_MAX * 3], line[PATH_MAX * 4], names[512];
	const char *a = c->image_first ? scene.image : scene.dev;
	const char *b = c->image_first ? scene.dev : scene.image;
	struct run_result r;

	require_scene();
	ck_assert_msg(decoy[0] != '\0', "the image was not renamed away");
	snprintf(cmd, sizeof(cmd), c->cmd, a, b);
	snprintf(line, sizeof(line), "exec '%s' %s", tu_binary(), cmd);
	tu_run_tool(&r, (const char *const[]){ "sh", "-c", line, NULL }, NULL);
	ck_assert_msg(r.status == c->status, "%s: status %d, stderr '%s'", cmd, r.status,
		      r.err);
	ck_assert_msg(strstr(r.err, c->says) != NULL, "%s: '%s' lacks '%s'", cmd, r.err,
		      c->says);
	ck_assert_msg(csum(scene.dev) == scene_sum, "%s: the device changed", cmd);
	ck_assert_msg(csum(decoy) == decoy_sum, "%s: the decoy changed", cmd);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "%s left %s", cmd, names);
	tu_run_free(&r);
}
END_TEST

/* ==== 4. safety refusals through the command line ==== */

static const char *const refusal_cases[][MAX_ARGS] = {
	{ "open-au", "--write", "--erasesize=1M", "@DEV", NULL },
	{ "find-fat", "--destructive", "--erasesize=1M", "@DEV", NULL },
	{ "bench", "--write", "--runtime=200ms", "--warmup=0", "--repeat=1", "--size=16M", "@DEV",
	  NULL },
	{ "probe", "--write", "--quick", "--erasesize=1M", "@DEV", NULL },
	{ "-O", "--destructive", "--open-au-nr=2", "--erasesize=1M", "@DEV", NULL },
};

/* With consent given, so that only the gate stands between the test and
 * the data (the code before wrote and restored under the mounted alias). */
static const char *const consented_refusal_cases[][MAX_ARGS] = {
	{ "find-fat", "--write", "--yes", "--erasesize=1M", "@DEV", NULL },
	{ "open-au", "--destructive", "--yes", "--erasesize=1M", "--max-open=2", "@DEV", NULL },
};

static const char *const journal_refusal_cases[][MAX_ARGS] = {
	{ "open-au", "--write", "--erasesize=1M", "--journal=@J", "@DEV", NULL },
	{ "find-fat", "--write", "--erasesize=1M", "--journal=@J", "@DEV", NULL },
	{ "bench", "--write", "--runtime=200ms", "--warmup=0", "--repeat=1", "--size=16M",
	  "--journal=@J", "@DEV", NULL },
	{ "probe", "--write", "--quick", "--erasesize=1M", "--journal=@J", "@DEV", NULL },
};

/* What the one line of each scene must contain (all of want, and one of
 * any when given). */
static const char *scene_want[3];
static const char *scene_any[3];

static void mounted_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, false) && bf_attach(&scene, "") &&
	    bf_mkfs(&scene, scene.dev) && bf_mount(&scene, scene.dev, "ro,noload"))
		scene_sum = csum(scene.dev);
	scene_target = scene.dev;
	scene_want[0] = "mounted";
	scene_want[1] = scene.dev;
	scene_want[2] = NULL;
}

static void mounted_partition_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, true) && bf_attach(&scene, "-P") &&
	    bf_mkfs(&scene, scene.part) && bf_mount(&scene, scene.part, "ro,noload"))
		scene_sum = csum(scene.dev);
	scene_target = scene.dev;
	scene_want[0] = "mounted";
	scene_want[1] = scene.part[0] ? scene.part : "p1";
	scene_want[2] = NULL;
}

static void partition_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, true) && bf_attach(&scene, "-P"))
		scene_sum = csum(scene.dev);
	scene_target = scene.part[0] ? scene.part : NULL;
	scene_want[0] = "partition";
	scene_want[1] = scene.dev;	/* names the whole disk */
	scene_want[2] = NULL;
}

/* ---- a journal left under another name of the same data ---- */

/* Start find-fat --write on target and SIGKILL it once its journal holds a
 * few saved blocks, so that the device holds test data; the journal's
 * path into journal ("" when none was left). */
/* Waits (up to 10 s) until the journal in the state directory holds 4 MiB
 * of saved data: the running test is writing the device by then. */
static void wait_for_saved_data(char *journal, size_t len)
{
	long long size = -1;

	for (int i = 0; i < 20000 && size < (long long)(4 * MIB); i++) {
		state_journal(journal, len, &size);
		tu_sleep_ns(500000);
	}
}

/* Runs the test argv and kills it once it has saved data: its journal
 * into journal. */
static void kill_test_with_journal(const char *const *argv, char *journal, size_t len)
{
	struct tu_child ch;
	struct run_result r;
	long long size = -1;

	journal[0] = '\0';
	if (tu_spawn(&ch, argv, 0) != 0)
		return;
	wait_for_saved_data(journal, len);
	kill(ch.pid, SIGKILL);
	tu_wait(&ch, &r);
	tu_run_free(&r);
	state_journal(journal, len, &size);
}

static void kill_with_journal(const char *target, char *journal, size_t len)
{
	const char *const argv[] = { "find-fat", "--write", "--yes", "--erasesize=1M",
				     target, NULL };

	kill_test_with_journal(argv, journal, len);
}

static void run_args(struct run_result *r, const char *a0, const char *a1, const char *a2,
		     const char *a3, const char *a4)
{
	const char *const argv[] = { a0, a1, a2, a3, a4, NULL };

	tu_run(r, argv);
}

/* Detach *dev (if attached) and forget it. */
static void detach_own(char **dev)
{
	tu_loop_detach(*dev);
	free(*dev);
	*dev = NULL;
}

/* Two names for the same data: the first is tested and killed, then the
 * second is tested and restored by name.  NULL options: the image file
 * itself; else a loop device attached with them, over the image or (over
 * the first) over the first loop device. */
static const struct alias_case {
	const char *first, *second;
	bool over_first;
	bool same_device;	/* the same file through the same windows */
} alias_cases[] = {
	{ "", NULL, false, false },			/* a loop device, then the image */
	{ NULL, "", false, false },			/* the image, then a loop device */
	{ "", "", true, true },				/* a loop device over the loop device */
	{ "--sizelimit 67108864", "--offset 1048576", false, false },	/* another window */
};

/* Another device's journal, damaged, named by a pointer in the last
 * directory searched (/var/tmp): unreadable, so it might be anyone's, but
 * it is not the one a search should name when an earlier directory held
 * a match.  Its pointer's path into ptr; the caller removes both. */
static void plant_damaged_journal(char *ptr, size_t len, char *data, size_t dlen)
{
	struct jr_pointer p = { .area_lo = 8 * MIB, .area_hi = 56 * MIB };

	snprintf(data, dlen, "%s/damaged-elsewhere", work);
	ck_assert_int_eq(tu_put_file(work, "damaged-elsewhere", "not a journal"), 0);
	snprintf(ptr, len, "%s/flashprobe-e2e-damaged-%ld.journal", JOURNAL_FALLBACK_DIR,
		 (long)getpid());
	util_copy_str(p.journal, sizeof(p.journal), data);
	snprintf(p.device, sizeof(p.device), "img");
	ck_assert_int_eq(jr_pointer_write(ptr, &p), 0);
}

/* Either second test would overwrite what the journal saved (and
 * restoring that journal then puts test data back): both are refused, as
 * is "restore" of the second name, with status 3, nothing written and
 * the journal named (not another device's damaged journal found later in
 * the search: it used to be named instead); restoring the journal brings the data back.  A loop
 * device stacked on the first without a window shows the same file at
 * the same offsets: it is the journal's device, and "restore" of it
 * replays the journal.  The
 * test attaches and detaches its own loop devices (it runs in a child
 * process), all before it asserts. */
START_TEST(test_pending_journal_of_alias)
{
	const struct alias_case *k = &alias_cases[_i];
	char journal[PATH_MAX + 300], names[512], other[PATH_MAX];
	struct run_result t, rs, fix;
	uint64_t sum0, sum_after_kill, sum_killed, sum_refused, sum_restored;
	char *img = bf_image_in(work, 65 * MIB, IMG_SEED + 7), *dev = NULL, *dev2 = NULL;
	char elsewhere[PATH_MAX + 64], elsewhere_data[PATH_MAX + 32];

	ck_assert_msg(img != NULL, "could not make an image in %s", work);
	plant_damaged_journal(elsewhere, sizeof(elsewhere), elsewhere_data,
			      sizeof(elsewhere_data));
	sum0 = csum(img);
	if (k->first)
		dev = tu_loop_attach_opts(img, k->first);
	kill_with_journal(k->first ? dev : img, journal, sizeof(journal));
	sum_after_kill = csum(img);
	if (k->first && !k->over_first)
		detach_own(&dev);	/* the image is free for the second */
	if (k->second)
		dev2 = tu_loop_attach_opts(k->over_first ? dev : img, k->second);
	snprintf(other, sizeof(other), "%s", k->second ? dev2 ? dev2 : "" : img);
	sum_killed = csum(other);
	run_args(&t, "find-fat", "--write", "--yes", "--erasesize=1M", other);
	run_args(&rs, "restore", other, NULL, NULL, NULL);
	sum_refused = csum(other);
	detach_own(&dev2);
	if (k->first && !dev)
		dev = tu_loop_attach_opts(img, k->first);	/* the journal's device */
	run_args(&fix, "restore", journal, NULL, NULL, NULL);
	detach_own(&dev);
	sum_restored = csum(img);
	unlink(img);
	free(img);
	unlink(elsewhere);
	unlink(elsewhere_data);
	ck_assert_msg(journal[0], "the killed test left no journal");
	ck_assert_msg(sum_after_kill != sum0, "the killed test had written nothing");
	ck_assert_msg(t.status == 3 && tu_count_lines(t.err) == 1 && strstr(t.err, journal) &&
		      strstr(t.err, "flashprobe restore"),
		      "a test of '%s' with the journal of its alias pending: status %d, '%s'",
		      other, t.status, t.err);
	if (k->same_device) {
		ck_assert_msg(rs.status == 0, "restore of '%s', the journal's device: "
			      "status %d, '%s'", other, rs.status, rs.err);
		ck_assert_msg(sum_refused == sum0, "the restore through '%s' differs", other);
	} else {
		ck_assert_msg(rs.status == 3 && strstr(rs.err, journal),
			      "restore of '%s' whose alias has the journal: status %d, '%s'",
			      other, rs.status, rs.err);
		ck_assert_msg(sum_refused == sum_killed, "a refused command wrote to '%s'",
			      other);
		ck_assert_msg(fix.status == 0, "restore of the journal: status %d, '%s'",
			      fix.status, fix.err);
	}
	ck_assert_msg(sum_restored == sum0, "the data differs after the restore");
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "the state directory holds %s",
		      names);
	tu_run_free(&t);
	tu_run_free(&rs);
	tu_run_free(&fix);
}
END_TEST

/* A killed test's image, then attached to a loop device: "restore
 * IMAGE" is refused with status 3, nothing written and the way out
 * named, as a writing test is (it wrote the file under the loop device,
 * where a file system mounted from it could write its cached blocks back
 * over the restored ones).  Detached, the restore brings the data back. */
START_TEST(test_restore_image_while_attached)
{
	char journal[PATH_MAX + 300], names[512];
	char *img = bf_image_in(work, 64 * MIB, IMG_SEED + 9), *dev = NULL;
	struct run_result rs, fix;
	uint64_t sum0, sum_killed, sum_refused;

	ck_assert_msg(img != NULL, "could not make an image in %s", work);
	sum0 = csum(img);
	kill_with_journal(img, journal, sizeof(journal));
	sum_killed = csum(img);
	dev = tu_loop_attach_opts(img, "");
	run_args(&rs, "restore", img, NULL, NULL, NULL);
	sum_refused = csum(img);
	detach_own(&dev);
	run_args(&fix, "restore", img, NULL, NULL, NULL);
	ck_assert_msg(csum(img) == sum0, "the data differs after the restore: %s", fix.err);
	unlink(img);
	free(img);
	ck_assert_msg(journal[0], "the killed test left no journal");
	ck_assert_msg(sum_killed != sum0, "the killed test had written nothing");
	ck_assert_msg(rs.status == 3 && strstr(rs.err, "attached to loop device") &&
		      strstr(rs.err, "losetup -d") && tu_count_lines(rs.err) == 1,
		      "restore of an attached image: status %d, '%s'", rs.status, rs.err);
	ck_assert_msg(sum_refused == sum_killed, "the refused restore wrote to the image");
	ck_assert_msg(fix.status == 0, "restore once detached: status %d, '%s'", fix.status,
		      fix.err);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "the state directory holds %s",
		      names);
	tu_run_free(&rs);
	tu_run_free(&fix);
}
END_TEST

/* An image of zeros but for 16 MiB of random data at 16 MiB (where the
 * bench test below writes): two of them differ only where the test's
 * journal saved data. */
static char *zero_image_random_middle(uint64_t seed)
{
	char *noise = bf_image_in(work, 16 * MIB, seed), *img = NULL;
	void *buf = malloc(16 * MIB);
	int in = noise ? open(noise, O_RDONLY) : -1, out = -1;

	if (asprintf(&img, "%s/zeros.%llu", work, (unsigned long long)seed) < 0)
		img = NULL;
	if (img)
		out = open(img, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (buf == NULL || in < 0 || out < 0 || ftruncate(out, 65 * MIB) != 0 ||
	    read(in, buf, 16 * MIB) != 16 * MIB ||
	    pwrite(out, buf, 16 * MIB, 16 * MIB) != 16 * MIB) {
		free(img);
		img = NULL;
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (noise)
		unlink(noise);
	free(noise);
	free(buf);
	return img;
}

/* A loop device's journal names the file the loop device read, not its
 * name.  The test of a loop device over image e is killed, the loop
 * device detached, e renamed away and another image f put under e's name
 * and attached: "restore LOOP" must refuse (another card, status 3) and
 * leave f as it was; with e attached again the journal brings e back.
 * The serial was the name before, and f got e's saved blocks (attack
 * test: 16 MB overwritten, e's journal deleted as restored).  The images
 * differ only where the test saved data, as in the attack: elsewhere the
 * content check before a restore cannot tell them apart.  Case 1 tests a
 * loop device stacked on the loop device over e: its journal must name
 * the file at the end of the chain, not the loop device under it. */
static void attach_chain(const char *img, bool stacked, char **dev, char **top)
{
	*dev = tu_loop_attach_opts(img, "");
	*top = stacked && *dev ? tu_loop_attach_opts(*dev, "") : *dev;
}

static void detach_chain(char **dev, char **top)
{
	if (*top != *dev)
		detach_own(top);
	*top = NULL;
	detach_own(dev);
}

START_TEST(test_journal_follows_file_not_name)
{
	char journal[PATH_MAX + 300], moved[PATH_MAX + 16];
	char *e = zero_image_random_middle(IMG_SEED + 11);
	char *f = zero_image_random_middle(IMG_SEED + 12);
	const char *argv[] = { "bench", "--write", "--yes", "--runtime=3s", "--warmup=0",
			       "--repeat=1", "--size=16M", "--workload=seq_write", NULL,
			       NULL };
	uint64_t sum_e, sum_f, sum_f_after, sum_e_restored;
	struct run_result rs, fix;
	char *dev = NULL, *top = NULL;

	ck_assert_msg(e != NULL && f != NULL, "could not make images in %s", work);
	sum_e = csum(e);
	sum_f = csum(f);
	attach_chain(e, _i == 1, &dev, &top);
	argv[8] = top;
	kill_test_with_journal(argv, journal, sizeof(journal));
	detach_chain(&dev, &top);
	snprintf(moved, sizeof(moved), "%s.real", e);
	ck_assert_int_eq(rename(e, moved), 0);
	ck_assert_int_eq(rename(f, e), 0);
	attach_chain(e, _i == 1, &dev, &top);
	run_args(&rs, "restore", top, NULL, NULL, NULL);
	detach_chain(&dev, &top);
	sum_f_after = csum(e);
	ck_assert_int_eq(rename(e, f), 0);
	ck_assert_int_eq(rename(moved, e), 0);
	attach_chain(e, _i == 1, &dev, &top);
	run_args(&fix, "restore", journal, NULL, NULL, NULL);
	detach_chain(&dev, &top);
	sum_e_restored = csum(e);
	unlink(e);
	unlink(f);
	free(e);
	free(f);
	ck_assert_msg(journal[0], "the killed test left no journal");
	ck_assert_msg(rs.status == 3, "restore onto another file under the old name: "
		      "status %d, '%s'", rs.status, rs.err);
	ck_assert_msg(sum_f_after == sum_f, "the other image was written");
	ck_assert_msg(fix.status == 0, "restore of the journal: status %d, '%s'", fix.status,
		      fix.err);
	ck_assert_msg(sum_e_restored == sum_e, "the data differs after the restore");
	tu_run_free(&rs);
	tu_run_free(&fix);
}
END_TEST

/* The image renamed while a test writes it, through a loop device or as
 * the target itself: the test still restores it and exits 0.  The end
 * checked the device by name before: the loop device's serial was the
 * file's name, the image's identity its name's inode, and "another card"
 * left 16 MB of test patterns in the image (attack test). */
static const struct renamed_during_case {
	bool on_loop;
	bool by_link;		/* a hard link kept, the old name removed */
} renamed_during_cases[] = {
	{ true, false }, { true, true }, { false, false },
};

START_TEST(test_renamed_during_test)
{
	const struct renamed_during_case *c = &renamed_during_cases[_i];
	char journal[PATH_MAX + 300], moved[PATH_MAX + 16], names[512];
	char *img = bf_image_in(work, 65 * MIB, IMG_SEED + 13), *dev = NULL;
	const char *argv[] = { "bench", "--write", "--yes", "--runtime=1s", "--warmup=0",
			       "--repeat=1", "--size=16M", NULL, NULL };
	struct run_result r;
	struct tu_child ch;
	uint64_t sum0, sum_after;
	int moved_rc = -1;

	ck_assert_msg(img != NULL, "could not make an image in %s", work);
	sum0 = csum(img);
	snprintf(moved, sizeof(moved), "%s.moved", img);
	if (c->on_loop)
		dev = tu_loop_attach_opts(img, "");
	argv[7] = c->on_loop ? dev : img;
	ck_assert_int_eq(tu_spawn(&ch, argv, 0), 0);
	wait_for_saved_data(journal, sizeof(journal));
	moved_rc = c->by_link ? (link(img, moved) == 0 ? unlink(img) : -1) : rename(img, moved);
	tu_wait(&ch, &r);
	detach_own(&dev);
	sum_after = csum(moved);
	unlink(moved);
	unlink(img);
	free(img);
	ck_assert_msg(journal[0], "the test saved nothing");
	ck_assert_int_eq(moved_rc, 0);
	ck_assert_msg(r.status == 0, "case %d: status %d, stderr '%s'", _i, r.status, r.err);
	ck_assert_msg(sum_after == sum0, "case %d: the image differs after the test", _i);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "left %s", names);
	tu_run_free(&r);
}
END_TEST

/* work/homeN, made, as the default places (/var/lib/flashprobe): runs
 * with FLASHPROBE_STATE_DIR set look there too, and a run without it
 * puts its journal there.  One per case: the cases share work. */
static void use_home(char *home, size_t len, int n)
{
	snprintf(home, len, "%s/home%d", work, n);
	ck_assert_msg(tu_default_dir_make(home), "cannot make '%s'", home);
}

/* find-fat --write on img killed by the file size limit once its journal
 * holds 8 MiB (the image written, the journal not replayed), with
 * FLASHPROBE_STATE_DIR unset when state_dir is NULL; the image's
 * checksum after. */
static uint64_t crash_find_fat(const char *img, const char *state_dir)
{
	const char *const argv[] = { "find-fat", "--write", "--yes", "--erasesize=1M", img,
				     NULL };
	struct tu_child ch;
	struct run_result r;
	int sig;

	if (state_dir == NULL)
		unsetenv("FLASHPROBE_STATE_DIR");
	else
		setenv("FLASHPROBE_STATE_DIR", state_dir, 1);
	ck_assert_int_eq(tu_spawn(&ch, argv, 8 * MIB), 0);
	sig = tu_wait(&ch, &r);
	ck_assert_msg(sig == SIGXFSZ, "the run did not crash as planned (signal %d, '%s')",
		      sig, r.err);
	tu_run_free(&r);
	return csum(img);
}

/* A test run crashes, and later runs see its journal wherever it is: case
 * 0 crashes without FLASHPROBE_STATE_DIR (the journal in the default
 * place) and the later runs have it set; case 1 crashes with it set and
 * the later runs lack it (sudo drops the environment), which find the
 * journal through the pointer file it left in the default place.  A new
 * test is refused (status 3) naming the journal, "restore IMAGE" replays
 * it, and neither journal nor pointer is left. */
START_TEST(test_journal_found_across_state_dirs)
{
	char *img = bf_image_in(work, 64 * MIB, IMG_SEED + 9);
	char home[PATH_MAX + 8], names[512];
	const char *crash_state = _i == 0 ? NULL : state;
	const char *journal_dir;
	struct run_result t, rs;
	uint64_t sum0;

	ck_assert_ptr_nonnull(img);
	use_home(home, sizeof(home), _i);
	journal_dir = crash_state ? crash_state : home;
	sum0 = csum(img);
	ck_assert_msg(crash_find_fat(img, crash_state) != sum0, "the crashed run wrote nothing");
	ck_assert_msg(_i == 0 || tu_dir_list(home, names, sizeof(names)) == 1,
		      "no pointer file in the default place: '%s'", names);
	if (crash_state)
		unsetenv("FLASHPROBE_STATE_DIR");
	else
		setenv("FLASHPROBE_STATE_DIR", state, 1);
	run_args(&t, "find-fat", "--write", "--yes", "--erasesize=1M", img);
	run_args(&rs, "restore", img, NULL, NULL, NULL);
	ck_assert_msg(t.status == 3 && strstr(t.err, journal_dir),
		      "a test with the journal pending: %d '%s'", t.status, t.err);
	ck_assert_msg(rs.status == 0 && csum(img) == sum0, "restore: %d '%s' '%s'", rs.status,
		      rs.out, rs.err);
	ck_assert_msg(tu_dir_list(home, names, sizeof(names)) == 0, "left in home: %s", names);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "left in state: %s", names);
	tu_run_free(&t);
	tu_run_free(&rs);
	unlink(img);
	free(img);
}
END_TEST

/* A partition and its disk are separate nodes with locks of their own:
 * a timing run (align, check) on the partition shares the disk's lock, so it is refused
 * while a test (here flock(1)'s lock, the one a test holds) has the disk,
 * and a test of the disk is refused while the partition is timed.
 * Nothing is written either way. */
START_TEST(test_partition_shares_disk_lock)
{
	char err[512] = "";
	struct run_result r;
	int fd, shared;

	ck_assert_msg(scene.part[0] && scene_sum, "partition scene: %s", scene.why);
	fd = open(scene.dev, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	for (int i = 0; i < 2; i++) {
		run(&r, i == 0 ? (const char *const[]){ "align", scene.part, NULL }
			       : (const char *const[]){ "check", "-e", "1M", scene.part, NULL });
		ck_assert_msg(r.status == 3, "%s: status %d, stderr '%s'",
			      i ? "check" : "align", r.status, r.err);
		ck_assert_msg(strstr(r.err, "refusing to time") && strstr(r.err, scene.dev) &&
			      strstr(r.err, "wait for it to finish"), "%s", r.err);
		ck_assert_str_eq(r.out, "");
		tu_run_free(&r);
	}
	close(fd);

	ck_assert_int_eq(fp_dev_share_disk_lock(scene.dev, scene.part, &shared, err,
						sizeof(err)), 0);
	ck_assert_int_ge(shared, 0);
	run(&r, (const char *const[]){ "open-au", "--write", "--yes", "--erasesize=1M",
				      "--max-open=2", scene.dev, NULL });
	close(shared);
	ck_assert_msg(r.status == 3, "status %d, stderr '%s'", r.status, r.err);
	ck_assert_msg(strstr(r.err, "holds its lock"), "%s", r.err);
	ck_assert_uint_eq(csum(scene.dev), scene_sum);
	ck_assert_msg(state_list(err, sizeof(err)) == 0, "left %s", err);
	tu_run_free(&r);
}
END_TEST

/* Tests on target must be refused because mounted (one of the loop
 * devices over the same image) is mounted. */
static void want_mounted(const char *target, const char *mounted)
{
	scene_target = target;
	scene_want[0] = "mounted";
	scene_want[1] = mounted;
	scene_want[2] = NULL;
}

/* The image is attached twice and the second loop device is mounted: a
 * test on the first would write under that file system. */
static void mounted_alias_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, false) && bf_attach(&scene, "") &&
	    attach_alias() && bf_mkfs(&alias, alias.dev) &&
	    bf_mount(&alias, alias.dev, "ro,noload"))
		scene_sum = csum(scene.dev);
	want_mounted(scene.dev, alias.dev);
}

/* The loop device over the renamed image holds a mounted file system,
 * and the target is a second loop device attached over the image under
 * its new name: the mount must be seen through the kernel's identity of
 * the file, since the first one's name leads to the decoy. */
static void renamed_mounted_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, false) && bf_attach(&scene, "") &&
	    bf_mkfs(&scene, scene.dev) && rename_image_away() && attach_alias() &&
	    bf_mount(&scene, scene.dev, "ro,noload"))
		scene_sum = csum(scene.dev);
	want_mounted(alias.dev, scene.dev);
}

/* A loop device stacked on the loop device of the scene (alias over
 * scene.dev, not over the image): its data is the image too, through the
 * chain.  The image is not alias's to unlink. */
static bool attach_stacked(void)
{
	bool ok;

	alias.image = strdup(scene.dev);
	ok = alias.image && bf_attach(&alias, "");
	free(alias.image);
	alias.image = NULL;
	return ok;
}

/* The upper loop device is mounted, the lower one is the target: the
 * code before looked only at loop devices over the same file, so a test
 * wrote under the mounted file system (attack test: 34 of 40 files
 * corrupted) and kept its journal there (42 MB lost for good). */
static void stacked_upper_mounted_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, false) && bf_attach(&scene, "") &&
	    attach_stacked() && bf_mkfs(&alias, alias.dev) &&
	    bf_mount(&alias, alias.dev, "ro,noload"))
		scene_sum = csum(scene.dev);
	want_mounted(scene.dev, alias.dev);
}

/* The lower loop device is mounted, the upper one is the target. */
static void stacked_lower_mounted_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, false) && bf_attach(&scene, "") &&
	    bf_mkfs(&scene, scene.dev) && attach_stacked() &&
	    bf_mount(&scene, scene.dev, "ro,noload"))
		scene_sum = csum(scene.dev);
	want_mounted(alias.dev, scene.dev);
}

/* An output on the file system of the upper loop device is on the
 * lower one's data: a bad invocation (status 2) before anything runs. */
START_TEST(test_output_on_stacked_mount)
{
	char svg[PATH_MAX + 32];
	struct run_result r;

	require_scene();
	snprintf(svg, sizeof(svg), "--svg=%s/chart.svg", alias.mnt);
	run(&r, (const char *const[]){ "align", "--quick", svg, scene.dev, NULL });
	ck_assert_msg(r.status == 2, "%s: status %d, stderr '%s'", svg, r.status, r.err);
	ck_assert_msg(strstr(r.err, "device under test") != NULL, "%s: '%s'", svg, r.err);
	ck_assert_uint_eq(csum(scene.dev), scene_sum);
	tu_run_free(&r);
}
END_TEST

static void swap_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, false) && bf_attach(&scene, "") &&
	    bf_swapon(&scene, scene.dev))
		scene_sum = csum(scene.dev);
	scene_target = scene.dev;
	scene_want[0] = "swap";
	scene_want[1] = scene.dev;
	scene_want[2] = NULL;
}

static void readonly_setup(void)
{
	if (env_up() && bf_image(&scene, 64 * MIB, false) && bf_attach(&scene, "-r"))
		scene_sum = csum(scene.dev);
	scene_target = scene.dev;
	scene_want[0] = "read-only";
	scene_want[1] = scene.dev;
	scene_want[2] = NULL;
}

/* The journal would live on the device under test: on the file system
 * mounted from it (the gate may refuse the mount first: either reason). */
static void journal_on_device_setup(void)
{
	mounted_setup();
	if (scene.mnt[0])
		snprintf(scene_journal, sizeof(scene_journal), "--journal=%s/fp.journal",
			 scene.mnt);
	scene_want[0] = scene.dev;
	scene_want[1] = NULL;
	scene_any[0] = "mounted";
	scene_any[1] = "journal";
	scene_any[2] = NULL;
}

static void check_refusal(const char *const *args)
{
	struct run_result r;
	char cmd[1024], names[512];
	uint64_t sum;
	bool any = scene_any[0] == NULL;

	require_scene();
	ck_assert_msg(scene_target != NULL, "no target in the scene");
	run(&r, args);
	sum = csum(scene.dev);
	cmdline(args, cmd, sizeof(cmd));
	ck_assert_msg(r.status == 3, "%s: status %d, stderr '%s'", cmd, r.status, r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "%s: stderr is not one line: '%s'", cmd, r.err);
	ck_assert_int_eq(strncmp(r.err, "flashprobe: ", 12), 0);
	for (size_t i = 0; scene_want[i]; i++)
		ck_assert_msg(strstr(r.err, scene_want[i]), "%s: '%s' lacks '%s'", cmd, r.err,
			      scene_want[i]);
	for (size_t i = 0; scene_any[i]; i++)
		any |= strstr(r.err, scene_any[i]) != NULL;
	ck_assert_msg(any, "%s: '%s' gives no reason", cmd, r.err);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(sum == scene_sum, "%s: the device changed", cmd);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "%s left %s", cmd, names);
	if (scene_journal[0])
		ck_assert_msg(access(scene_journal + strlen("--journal="), F_OK) != 0,
			      "%s created the journal on the device", cmd);
	tu_run_free(&r);
}

START_TEST(test_refused)
{
	check_refusal(refusal_cases[_i]);
}
END_TEST

START_TEST(test_consented_refused)
{
	check_refusal(consented_refusal_cases[_i]);
}
END_TEST

START_TEST(test_journal_refused)
{
	check_refusal(journal_refusal_cases[_i]);
}
END_TEST

/* An image file: a journal that is the image itself (or a link to it) is
 * an output on the device under test, a bad --journal (status 2), like
 * every other output path (issue 10, item 4). */
static const char *const image_journal_cases[][MAX_ARGS] = {
	{ "open-au", "--write", "--erasesize=1M", "--journal=@LINK", "@IMG", NULL },
	{ "find-fat", "--write", "--erasesize=1M", "--journal=@LINK", "@IMG", NULL },
	{ "bench", "--write", "--runtime=200ms", "--warmup=0", "--repeat=1", "--size=16M",
	  "--journal=@LINK", "@IMG", NULL },
};

START_TEST(test_image_journal_refused)
{
	struct run_result r;
	char cmd[1024], names[512];
	uint64_t sum;

	require_image();
	ck_assert_msg(journal_link[0], "could not make the link");
	run(&r, image_journal_cases[_i]);
	sum = csum(image);
	cmdline(image_journal_cases[_i], cmd, sizeof(cmd));
	if (sum != image_sum)
		repair();
	ck_assert_msg(sum == image_sum, "%s: the image changed", cmd);
	ck_assert_msg(r.status == 2, "%s: status %d (a journal on the device under test is a "
		      "bad --journal, status 2), stderr '%s'", cmd, r.status, r.err);
	ck_assert_msg(tu_count_lines(r.err) == 1, "%s: stderr is not one line: '%s'", cmd, r.err);
	ck_assert_msg(strstr(r.err, "journal"), "%s: '%s' does not say why", cmd, r.err);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "%s left %s", cmd, names);
	tu_run_free(&r);
}
END_TEST

/* ==== 5. interruption and crash recovery ==== */

static const char *const intr_cmds[2][MAX_ARGS] = {
	{ "open-au", "--write", "--erasesize=4M", "--max-open=4", "@IMG", NULL },
	{ "find-fat", "--write", "--erasesize=2M", "@IMG", NULL },
};

static uint64_t run_ns[2];		/* one uninterrupted run of each */
static char intr_note[512];

static void interrupt_setup(void)
{
	image_setup();
	intr_note[0] = '\0';
	for (int c = 0; c < 2 && image != NULL; c++) {
		const char *argv[MAX_ARGS];
		struct run_result r;
		uint64_t t0;
		char names[256];

		expand(intr_cmds[c], argv);
		t0 = tu_now_ns();
		tu_run(&r, argv);
		run_ns[c] = tu_now_ns() - t0;
		if (r.status != 0 || csum(image) != image_sum ||
		    state_list(names, sizeof(names)) != 0) {
			snprintf(intr_note, sizeof(intr_note), "%s: status %d, %s", argv[0],
				 r.status, r.err ? r.err : "");
			run_ns[c] = 0;
			repair();
		}
		tu_run_free(&r);
	}
}

/* The k-th of ten fixed points in a run of command c, spread over its
 * measured duration (and a little past it). */
static uint64_t kill_point(int c, int sig, int k)
{
	struct stats_rng rng;

	stats_rng_seed(&rng, 0x5eed0000u + (uint64_t)c * 1000 + (uint64_t)sig * 10 + (uint64_t)k);
	return (uint64_t)(stats_rng_uniform(&rng) * 1.1 * (double)run_ns[c]);
}

static int spawn(struct tu_child *ch, const char *const *tmpl, uint64_t fsize_limit)
{
	const char *argv[MAX_ARGS];

	expand(tmpl, argv);
	return tu_spawn(ch, argv, fsize_limit);
}

/* SIGINT and SIGTERM at ten points of open-au and find-fat each: the data
 * is restored and the status says so (or the run had finished: 0). */
START_TEST(test_interrupt)
{
	int c = _i / 20, sig = (_i / 10) % 2 ? SIGTERM : SIGINT, k = _i % 10, termsig;
	struct tu_child ch;
	struct run_result r;
	uint64_t at, sum;
	char names[512], cmd[512], where[160];
	size_t left;

	require_image();
	ck_assert_msg(run_ns[c] > 0, "the uninterrupted run failed: %s", intr_note);
	at = kill_point(c, sig, k);
	ck_assert_int_eq(spawn(&ch, intr_cmds[c], 0), 0);
	tu_sleep_ns(at);
	kill(ch.pid, sig);
	termsig = tu_wait(&ch, &r);
	sum = csum(image);
	left = state_list(names, sizeof(names));
	repair();
	cmdline(intr_cmds[c], cmd, sizeof(cmd));
	snprintf(where, sizeof(where), "%s at %.3f s of a %.3f s run", strsignal(sig),
		 (double)at / 1e9, (double)run_ns[c] / 1e9);
	if (termsig) {
		/* only before the handlers exist, when nothing can be written yet */
		ck_assert_msg(termsig == sig, "%s: %s: died of signal %d: %s", cmd, where,
			      termsig, r.err);
	} else {
		ck_assert_msg(r.status == 0 || r.status == 128 + sig,
			      "%s: %s: status %d, stderr '%s'", cmd, where, r.status, r.err);
		if (r.status)
			ck_assert_msg(strstr(r.err, "interrupted"), "%s: %s: stderr '%s'", cmd,
				      where, r.err);
		else
			ck_assert_msg(r.out[0], "%s: %s: status 0 without a report", cmd, where);
	}
	ck_assert_msg(sum == image_sum, "%s: %s: the image was not restored (status %d, "
		      "stderr '%s')", cmd, where, r.status, r.err);
	ck_assert_msg(left == 0, "%s: %s: left %s", cmd, where, names);
	tu_run_free(&r);
}
END_TEST

struct restore_outcome {
	int status;
	char out[1024], err[1024];
	uint64_t sum;
	size_t left;
	char names[512];
	int again_status;		/* a second restore */
	char again_err[1024];
};

/* Run restore (of target) and a second one of the image; record what a
 * test asserts afterwards, after repair(). */
static void restore_and_record(const char *target, struct restore_outcome *o)
{
	const char *const args[] = { "restore", target, NULL };
	const char *const again[] = { "restore", image, NULL };
	struct run_result r;

	tu_run(&r, args);
	o->status = r.status;
	snprintf(o->out, sizeof(o->out), "%s", r.out ? r.out : "");
	snprintf(o->err, sizeof(o->err), "%s", r.err ? r.err : "");
	tu_run_free(&r);
	o->sum = csum(image);
	o->left = state_list(o->names, sizeof(o->names));
	tu_run(&r, again);
	o->again_status = r.status;
	snprintf(o->again_err, sizeof(o->again_err), "%s", r.err ? r.err : "");
	tu_run_free(&r);
}

static void assert_restored(const struct restore_outcome *o, bool had_journal,
			    const char *what)
{
	ck_assert_msg(o->status == 0, "%s: restore exited %d: %s", what, o->status, o->err);
	if (had_journal)	/* a journal without a commit: nothing written */
		ck_assert_msg(strstr(o->out, "restored") || strstr(o->out, "written nothing"),
			      "%s: restore said '%s' '%s'", what, o->out, o->err);
	else
		ck_assert_msg(strstr(o->err, "nothing to restore"), "%s: restore said '%s' '%s'",
			      what, o->out, o->err);
	ck_assert_msg(o->sum == image_sum, "%s: the image differs after restore", what);
	ck_assert_msg(o->left == 0, "%s: after restore the state directory holds %s", what,
		      o->names);
	ck_assert_msg(o->again_status == 0 && strstr(o->again_err, "nothing to restore"),
		      "%s: a second restore: status %d, '%s'", what, o->again_status,
		      o->again_err);
}

/* SIGKILL at ten points of open-au and find-fat each, then restore (of the
 * image, or of the journal file itself every other time). */
START_TEST(test_kill_restore)
{
	int c = _i / 10, k = _i % 10, termsig;
	struct restore_outcome o;
	struct tu_child ch;
	struct run_result r;
	char journal[PATH_MAX + 300], cmd[512], what[2 * PATH_MAX];
	long long jsize;
	uint64_t at;

	require_image();
	ck_assert_msg(run_ns[c] > 0, "the uninterrupted run failed: %s", intr_note);
	at = kill_point(c, SIGKILL, k);
	ck_assert_int_eq(spawn(&ch, intr_cmds[c], 0), 0);
	tu_sleep_ns(at);
	kill(ch.pid, SIGKILL);
	termsig = tu_wait(&ch, &r);
	state_journal(journal, sizeof(journal), &jsize);
	restore_and_record(k % 2 && journal[0] ? journal : image, &o);
	repair();
	cmdline(intr_cmds[c], cmd, sizeof(cmd));
	snprintf(what, sizeof(what), "%s: SIGKILL at %.3f s of a %.3f s run (%s; journal %s, "
		 "%lld bytes)", cmd, (double)at / 1e9, (double)run_ns[c] / 1e9,
		 termsig ? "killed" : "had finished", journal[0] ? journal : "none", jsize);
	ck_assert_msg(termsig == SIGKILL || r.status == 0, "%s: status %d", what, r.status);
	assert_restored(&o, journal[0] != '\0', what);
	tu_run_free(&r);
}
END_TEST

/* After a crash, writing tests on that image are refused until restore. */
START_TEST(test_pending_journal_refused)
{
	static const char *const retry[][MAX_ARGS] = {
		{ "find-fat", "--write", "--erasesize=1M", "@IMG", NULL },
		{ "open-au", "--destructive", "--erasesize=1M", "@IMG", NULL },
	};
	struct run_result r[2];
	char journal[PATH_MAX + 300], journal_after[PATH_MAX + 300];
	long long jsize = -1, jsize_after;
	uint64_t sum_killed = 0, sum_after;

	require_image();
	ck_assert_msg(run_ns[0] > 0, "the uninterrupted run failed: %s", intr_note);
	journal[0] = '\0';
	/* the kill point searched in halves: a run that had finished asks
	 * for an earlier one, a run killed before its journal for a later
	 * one (fixed points missed them all when the machine was busier
	 * than while run_ns was measured) */
	for (uint64_t attempt = 0, lo = 0, hi = run_ns[0] * 3 / 2, at = run_ns[0] / 2;
	     attempt < 12 && !journal[0]; attempt++, at = (lo + hi) / 2) {
		struct tu_child ch;
		struct run_result k;
		int sig;

		repair();
		ck_assert_int_eq(spawn(&ch, intr_cmds[0], 0), 0);
		tu_sleep_ns(at);
		kill(ch.pid, SIGKILL);
		sig = tu_wait(&ch, &k);
		tu_run_free(&k);
		state_journal(journal, sizeof(journal), &jsize);
		if (sig != SIGKILL)
			hi = at;
		else
			lo = at;
	}
	if (journal[0]) {
		sum_killed = csum(image);
		run(&r[0], retry[0]);
		run(&r[1], retry[1]);
	}
	state_journal(journal_after, sizeof(journal_after), &jsize_after);
	sum_after = csum(image);
	repair();
	ck_assert_msg(journal[0], "no run was killed while its journal existed");
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(r[i].status == 3, "%s with a pending journal: status %d, '%s'",
			      retry[i][0], r[i].status, r[i].err);
		ck_assert_msg(tu_count_lines(r[i].err) == 1, "stderr: '%s'", r[i].err);
		ck_assert_msg(strstr(r[i].err, "flashprobe restore"), "'%s' does not name "
			      "'flashprobe restore'", r[i].err);
		ck_assert_str_eq(r[i].out, "");
		tu_run_free(&r[i]);
	}
	ck_assert_msg(sum_after == sum_killed, "a refused test wrote to the image");
	ck_assert_msg(!strcmp(journal_after, journal) && jsize_after == jsize,
		      "a refused test changed the journal");
}
END_TEST

/* A crash at a known point: RLIMIT_FSIZE kills flashprobe (SIGXFSZ) when
 * its journal grows past limit bytes.  Then restore must bring the image
 * back, delete the journal and let the next test run. */
static void crash_then_restore(uint64_t limit, bool device_untouched)
{
	static const char *const next[] = { "open-au", "--write", "--erasesize=4M",
					    "--max-open=4", "@IMG", NULL };
	static const char *const args[] = { "find-fat", "--write", "--erasesize=1M", "@IMG",
					    NULL };
	struct restore_outcome o;
	struct tu_child ch;
	struct run_result r, n;
	char journal[PATH_MAX + 300], what[1024];
	long long jsize;
	uint64_t sum_crash;
	int termsig;

	require_image();
	ck_assert_int_eq(spawn(&ch, args, limit), 0);
	termsig = tu_wait(&ch, &r);
	sum_crash = csum(image);
	state_journal(journal, sizeof(journal), &jsize);
	restore_and_record(image, &o);
	run(&n, next);
	repair();
	snprintf(what, sizeof(what), "crash with the journal at %lld bytes (limit %llu)", jsize,
		 (unsigned long long)limit);
	ck_assert_msg(termsig == SIGXFSZ, "the run did not crash as planned: status %d, "
		      "signal %d, '%s'", r.status, termsig, r.err);
	ck_assert_msg(journal[0], "%s: no journal left", what);
	if (device_untouched)
		ck_assert_msg(sum_crash == image_sum, "%s: the image was written before the "
			      "journal held a commit", what);
	assert_restored(&o, true, what);
	ck_assert_msg(n.status == 0, "%s: after restore, the next test: status %d, '%s'", what,
		      n.status, n.err);
	tu_run_free(&r);
	tu_run_free(&n);
}

/* Killed before the first commit: the header only and part of a record. */
START_TEST(test_crash_before_first_commit)
{
	crash_then_restore(4096, true);
}
END_TEST

/* Killed while saving the third block on the fly: two committed blocks
 * have been overwritten, the third record is torn. */
START_TEST(test_crash_during_save)
{
	crash_then_restore(2048 + 2 * (40 + MIB + 40) + 2048, false);
}
END_TEST

/* restore --force does not claim to have deleted a journal it kept. */
START_TEST(test_force_restore_honest)
{
	static const char *const args[] = { "find-fat", "--write", "--erasesize=1M", "@IMG",
					    NULL };
	static const char *const force[] = { "restore", "--force", "@IMG", NULL };
	struct tu_child ch;
	struct run_result r, f;
	char names[512];
	size_t left;

	require_image();
	ck_assert_int_eq(spawn(&ch, args, 4096), 0);
	tu_wait(&ch, &r);
	run(&f, force);
	left = state_list(names, sizeof(names));
	repair();
	ck_assert_msg(!(f.status == 0 && strstr(f.out, "journal was deleted") && left > 0),
		      "restore --force says '%s' but the state directory holds %s",
		      f.out, names);
	tu_run_free(&r);
	tu_run_free(&f);
}
END_TEST

/* A journal damaged after the crash (cut to its static header, cut in
 * half, a flipped byte in the first data record, which is committed):
 * restore refuses, writes nothing, keeps the journal and fails; --force
 * replays what is intact and still fails, the journal kept. */
static void damage_journal(const char *journal, long long size, int how)
{
	int fd = open(journal, O_RDWR);
	unsigned char b;

	ck_assert_int_ge(fd, 0);
	if (how == 0) {
		ck_assert_int_eq(ftruncate(fd, 2048), 0);
	} else if (how == 1) {
		ck_assert_int_eq(ftruncate(fd, (off_t)(size / 2)), 0);
	} else {
		ck_assert_int_eq(pread(fd, &b, 1, 4096 + 40 + 1000), 1);
		b ^= 0x20;
		ck_assert_int_eq(pwrite(fd, &b, 1, 4096 + 40 + 1000), 1);
	}
	close(fd);
}

START_TEST(test_damaged_journal_refused)
{
	static const char *const restore[] = { "restore", "@IMG", NULL };
	static const char *const force[] = { "restore", "--force", "@IMG", NULL };
	char journal[PATH_MAX + 300], after[PATH_MAX + 300];
	struct run_result r, f;
	long long jsize = -1, jafter;
	uint64_t sum_killed = 0, sum_after;

	require_image();
	ck_assert_msg(run_ns[0] > 0, "the uninterrupted run failed: %s", intr_note);
	journal[0] = '\0';
	/* killed once the journal holds three to five records of 1 MiB
	 * (watching the journal, not the clock: a loaded machine
	 * runs the attempts at another pace than the run that was timed).  A
	 * changed image proves a commit: a kill during the first backup
	 * leaves records without one, which restore rightly calls nothing
	 * written. */
	for (int attempt = 0; attempt < 10 && (jsize < 4096 + 2 * (40 + (1 << 20)) ||
					       sum_killed == image_sum);
	     attempt++) {
		long long want = 4096 + (3 + attempt % 3) * (40 + (1 << 20));
		struct tu_child ch;
		struct run_result k;

		repair();
		ck_assert_int_eq(spawn(&ch, intr_cmds[0], 0), 0);
		for (uint64_t waited = 0; waited < 4 * run_ns[0]; waited += 1000000) {
			state_journal(journal, sizeof(journal), &jsize);
			if (jsize >= want)
				break;
			tu_sleep_ns(1000000);
		}
		kill(ch.pid, SIGKILL);
		tu_wait(&ch, &k);
		tu_run_free(&k);
		state_journal(journal, sizeof(journal), &jsize);
		sum_killed = csum(image);
	}
	ck_assert_msg(jsize >= 4096 + 2 * (40 + (1 << 20)) && sum_killed != image_sum,
		      "no run was killed with a committed journal of two records or more");
	damage_journal(journal, jsize, _i);
	run(&r, restore);
	sum_after = csum(image);
	state_journal(after, sizeof(after), &jafter);
	run(&f, force);
	repair();
	ck_assert_msg(r.status == 1, "damage %d: restore exited %d: '%s' '%s'", _i,
		      r.status, r.out, r.err);
	ck_assert_msg(strstr(r.err, "kept") && !strstr(r.out, "verified"),
		      "damage %d: restore said '%s' '%s'", _i, r.out, r.err);
	ck_assert_msg(sum_after == sum_killed, "damage %d: a refused restore wrote to "
		      "the image", _i);
	ck_assert_msg(!strcmp(after, journal), "damage %d: the journal is gone", _i);
	ck_assert_msg(f.status == 1 && strstr(f.err, "kept"),
		      "damage %d: restore --force exited %d: '%s' '%s'", _i, f.status,
		      f.out, f.err);
	tu_run_free(&r);
	tu_run_free(&f);
}
END_TEST

/* ==== 6. simulated I/O errors ==== */

static const struct sim_error_case {
	const char *args[MAX_ARGS];
	int status;
	const char *expect;
	uint64_t bad_start, bad_end;	/* the failing I/O must touch it */
} sim_error_cases[] = {
	{ { "open-au", "--write", "--erasesize=4M", "--max-open=4",
	    "sim:sdhc-4m,bad_start=20M,bad=1M", NULL }, 1, "open-au failed", 20 * MIB, 21 * MIB },
	{ { "open-au", "--erasesize=4M", "--max-open=4", "sim:sdhc-4m,bad_start=20M,bad=1M",
	    NULL }, 1, "open-au failed", 20 * MIB, 21 * MIB },
	{ { "find-fat", "--write", "--erasesize=4M", "sim:sdhc-4m,bad_start=1M,bad=64K", NULL },
	  1, "find-fat failed", MIB, MIB + 64 * 1024 },
	{ { "find-fat", "--erasesize=4M", "sim:sdhc-4m,bad_start=1M,bad=64K", NULL },
	  1, "find-fat failed", MIB, MIB + 64 * 1024 },
	{ { "bench", "--runtime=200ms", "--warmup=0", "--repeat=1", "--size=16M",
	    "sim:sdhc-4m,bad_start=20M,bad=1M", NULL }, 1, "bench", 20 * MIB, 21 * MIB },
	/* the same runs with the bad range outside the test area succeed */
	{ { "open-au", "--write", "--erasesize=4M", "--max-open=4",
	    "sim:sdhc-4m,bad_start=900M,bad=1M", NULL }, 0, NULL, 0, 0 },
	{ { "find-fat", "--erasesize=4M", "sim:sdhc-4m,bad_start=900M,bad=1M", NULL }, 0, NULL,
	  0, 0 },
};

/* The line names where the I/O failed: "... writing 4MiB at byte
 * 20971520 ..." (or the journal's "cannot back up ... at byte N", a 1 MiB
 * block), touching [bad_start, bad_end). */
static void assert_names_failed_io(const struct sim_error_case *c, const char *line)
{
	const char *at = strstr(line, " at byte ");
	const char *what = strstr(line, "reading ");
	char size[32] = "";
	uint64_t off, len = MIB;

	ck_assert_msg(at, "'%s' names no position", line);
	if (!what)
		what = strstr(line, "writing ");
	if (what && at > what + 8 && (size_t)(at - what - 8) < sizeof(size)) {
		memcpy(size, what + 8, (size_t)(at - what - 8));
		ck_assert_msg(units_parse_size(size, &len) == 0, "'%s': bad size '%s'", line,
			      size);
	}
	off = strtoull(at + 9, NULL, 10);
	ck_assert_msg(off < c->bad_end && off + len > c->bad_start,
		      "'%s' names an I/O outside the bad range", line);
}

START_TEST(test_sim_io_error)
{
	const struct sim_error_case *c = &sim_error_cases[_i];
	struct run_result r;
	char cmd[1024], names[512], line[512];
	const char *last;
	size_t failures = 0;

	run(&r, c->args);
	cmdline(c->args, cmd, sizeof(cmd));
	ck_assert_msg(r.status == c->status, "%s: status %d, stderr '%s'", cmd, r.status, r.err);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "%s left %s", cmd, names);
	if (c->status == 0) {
		ck_assert_msg(r.out[0], "%s: no report", cmd);
		tu_run_free(&r);
		return;
	}
	ck_assert_str_eq(r.out, "");
	/* one line says what failed and why, and it comes last */
	for (const char *p = r.err; (p = strstr(p, "flashprobe: ")); p++)
		if (strstr(first_line(p, line, sizeof(line)), "Input/output error"))
			failures++;
	ck_assert_msg(failures == 1, "%s: %zu lines name the I/O error: '%s'", cmd, failures,
		      r.err);
	last = r.err + strlen(r.err);
	while (last > r.err && last[-1] == '\n')
		last--;
	while (last > r.err && last[-1] != '\n')
		last--;
	ck_assert_msg(strstr(last, c->expect) && strstr(last, "Input/output error"),
		      "%s: the last line '%s' does not name the failure", cmd, last);
	assert_names_failed_io(c, last);
	tu_run_free(&r);
}
END_TEST

/* ==== 7. bad input to the writing commands ==== */

static const struct bad_case {
	const char *args[MAX_ARGS];
	const char *expect;
} bad_cases[] = {
	{ { "open-au", NULL }, "no device" },
	{ { "find-fat", "--write", NULL }, "no device" },
	{ { "bench", "--write", NULL }, "no device" },
	{ { "find-fat", "--write", "@IMG", "extra", NULL }, "unexpected argument" },
	{ { "open-au", "find-fat", "--write", "@IMG", NULL }, "unexpected argument" },
	{ { "-O", "-f", "--write", "@IMG", NULL }, "more than one command" },
	{ { "open-au", "--write", "--bogus", "@IMG", NULL }, "unknown option" },
	{ { "open-au", "--write", "@IMG", "--erasesize", NULL }, "needs a value" },
	{ { "open-au", "--write", "--erasesize=1M", "/nonexistent/flashprobe-image", NULL },
	  "No such file" },
	{ { "find-fat", "--write", "--erasesize=1M", "@DIR", NULL }, "is a directory" },
	{ { "open-au", "--write", "--erasesize=1M", "/dev/null", NULL },
	  "not a block device or regular file" },
	{ { "find-fat", "--destructive", "--erasesize=1M", "/dev/zero", NULL },
	  "not a block device or regular file" },
	{ { "open-au", "--write", "--erasesize=1M", "@EMPTY", NULL }, "empty" },
	{ { "open-au", "--write", "--erasesize=1M", "@TINY", NULL }, "too small" },
	{ { "find-fat", "--write", "--erasesize=1M", "@TINY", NULL }, "too small" },
	{ { "bench", "--write", "@TINY", NULL }, "too small" },
	{ { "open-au", "--write", "--erasesize=0", "@IMG", NULL }, "not a positive size" },
	{ { "open-au", "--write", "--erasesize=-1M", "@IMG", NULL }, "not a positive size" },
	{ { "find-fat", "--write", "--erasesize=1x", "@IMG", NULL }, "not a positive size" },
	{ { "find-fat", "--write", "--erasesize=1.1M", "@IMG", NULL }, "not a whole number of bytes" },
	{ { "open-au", "--write", "--erasesize=99999999999999999999", "@IMG", NULL },
	  "too large" },
	{ { "open-au", "--write", "--erasesize=17179869184T", "@IMG", NULL }, "too large" },
	{ { "open-au", "--write", "--erasesize=1000", "@IMG", NULL }, "512-byte sector" },
	{ { "find-fat", "--write", "--erasesize=1000", "@IMG", NULL }, "512-byte sector" },
	{ { "open-au", "--write", "--blocksize=3M", "--erasesize=2M", "@IMG", NULL },
	  "does not divide" },
	{ { "open-au", "--write", "--blocksize=48K", "--erasesize=1M", "@IMG", NULL },
	  "does not divide" },
	{ { "find-fat", "--write", "--blocksize=3M", "--erasesize=2M", "@IMG", NULL },
	  "does not divide" },
	{ { "find-fat", "--write", "--blocksize=48K", "--erasesize=1M", "@IMG", NULL },
	  "does not divide" },
	{ { "open-au", "--write", "--blocksize=0", "--erasesize=1M", "@IMG", NULL },
	  "not a positive size" },
	{ { "open-au", "--write", "--erasesize=1M", "--offset=1G", "@IMG", NULL }, "too small" },
	{ { "open-au", "--write", "--erasesize=1M", "--offset=-1M", "@IMG", NULL },
	  "not a size" },
	{ { "open-au", "--write", "--erasesize=1M", "--offset=1000", "@IMG", NULL },
	  "multiple of the 512-byte sector" },
	{ { "bench", "--write", "--offset=1G", "@IMG", NULL }, "inside" },
	{ { "bench", "--write", "--size=1G", "@IMG", NULL }, "inside" },
	{ { "bench", "--write", "--offset=1000", "--size=16M", "@IMG", NULL }, "sector aligned" },
	{ { "bench", "--write", "--size=0", "@IMG", NULL }, "not a positive size" },
	{ { "open-au", "--write", "--destructive", "--erasesize=1M", "@IMG", NULL },
	  "choose one" },
	{ { "find-fat", "--write", "--destructive", "--erasesize=1M", "@IMG", NULL },
	  "choose one" },
	{ { "bench", "--write", "--destructive", "@IMG", NULL }, "choose one" },
	{ { "probe", "--write", "--destructive", "@IMG", NULL }, "choose one" },
	{ { "bench", "--write", "--read-only", "@IMG", NULL }, "choose one" },
	{ { "open-au", "--write", "--max-open=0", "@IMG", NULL }, "not a number" },
	{ { "open-au", "--write", "--open-au-nr=abc", "@IMG", NULL }, "not a number" },
	{ { "find-fat", "--write", "--fat-nr=-3", "@IMG", NULL }, "not a number" },
	{ { "find-fat", "--write", "--open-au-nr=2", "@IMG", NULL }, "only applies to open-au" },
	{ { "bench", "--write", "--runtime=0", "@IMG", NULL }, "out of range" },
	{ { "bench", "--write", "--repeat=0", "@IMG", NULL }, "not a number" },
	{ { "bench", "--write", "--workload=foo", "@IMG", NULL }, "unknown workload" },
};

START_TEST(test_bad_input)
{
	const struct bad_case *c = &bad_cases[_i];
	struct run_result r;
	char cmd[1024], names[512];
	uint64_t sum;
	size_t lines;

	require_image();
	run(&r, c->args);
	sum = csum(image);
	cmdline(c->args, cmd, sizeof(cmd));
	if (sum != image_sum)
		repair();
	ck_assert_msg(sum == image_sum, "%s changed the image", cmd);
	ck_assert_msg(r.status == 2, "%s: status %d, stderr '%s'", cmd, r.status, r.err);
	ck_assert_msg(strncmp(r.err, "flashprobe: ", 12) == 0, "%s: stderr '%s'", cmd, r.err);
	ck_assert_msg(strstr(r.err, c->expect), "%s: stderr '%s' lacks '%s'", cmd, r.err,
		      c->expect);
	lines = tu_count_lines(r.err);
	ck_assert_msg(lines == 1 || (lines == 2 && strstr(strchr(r.err, '\n'), "--help")),
		      "%s: stderr is not one line (and the --help hint): '%s'", cmd, r.err);
	ck_assert_msg(r.out[0] == '\0', "%s: stdout '%s'", cmd, r.out);
	ck_assert_msg(state_list(names, sizeof(names)) == 0, "%s left %s", cmd, names);
	tu_run_free(&r);
}
END_TEST

/* ==== the suite ==== */

#define NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void add_scene_torn(Suite *s, const char *name, void (*setup)(void),
			   void (*teardown)(void), const TTest *test, int n,
			   const char *tools)
{
	const char *why = bf_unavailable(tools);
	char label[128];
	TCase *tc;

	snprintf(label, sizeof(label), "e2e/%s", name);
	if (why != NULL) {
		tu_skip(label, why);
		return;
	}
	tc = tcase_create(name);
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test, 0, n);
	suite_add_tcase(s, tc);
}

static void add_scene(Suite *s, const char *name, void (*setup)(void), const TTest *test,
		      int n, const char *tools)
{
	add_scene_torn(s, name, setup, scene_teardown, test, n, tools);
}

static void reset_scene_reasons(void)
{
	scene_any[0] = NULL;
}

static void refused_teardown(void)
{
	scene_teardown();
	reset_scene_reasons();
}

Suite *e2e_suite(void)
{
	Suite *s = suite_create("e2e");
	TCase *consent = tcase_create("consent");
	TCase *wimg = tcase_create("write-image");
	TCase *destr = tcase_create("destructive");
	TCase *intr = tcase_create("interrupt");
	TCase *sim = tcase_create("sim-io-error");
	TCase *bad = tcase_create("bad-input");
	const char *why = bf_unavailable(NULL);

	tcase_add_unchecked_fixture(consent, image_setup, image_teardown);
	tcase_set_timeout(consent, 120);
	tcase_add_loop_test(consent, test_no_consent, 0, NCASES(no_consent_cases));
	tcase_add_test(consent, test_bench_no_consent);
	tcase_add_test(consent, test_probe_no_consent);
	tcase_add_loop_test(consent, test_image_journal_refused, 0, NCASES(image_journal_cases));
	suite_add_tcase(s, consent);

	tcase_add_unchecked_fixture(wimg, image_setup, image_teardown);
	tcase_set_timeout(wimg, 300);
	tcase_add_loop_test(wimg, test_write_image, 0, NCASES(write_cases));
	suite_add_tcase(s, wimg);

	if (why != NULL) {
		tu_skip("e2e/write-loop: --write on a loop device holding a file system", why);
	} else {
		TCase *wloop = tcase_create("write-loop");

		tcase_add_unchecked_fixture(wloop, loop_write_setup, scene_teardown);
		tcase_set_timeout(wloop, 300);
		tcase_add_loop_test(wloop, test_write_loop, 0, NCASES(write_cases));
		tcase_add_loop_test(wloop, test_no_consent_loop, 0, NCASES(no_consent_cases));
		tcase_add_test(wloop, test_write_backing_file);
		tcase_add_test(wloop, test_quiet_write_loop);
		suite_add_tcase(s, wloop);
	}

	tcase_add_unchecked_fixture(destr, env_setup, image_teardown);
	tcase_set_timeout(destr, 300);
	tcase_add_loop_test(destr, test_destructive_area, 0, NCASES(destructive_cases));
	tcase_add_loop_test(destr, test_data_asks_first, 0, NCASES(data_cases));
	suite_add_tcase(s, destr);

	add_scene(s, "refuse-mounted", mounted_setup, test_refused, NCASES(refusal_cases),
		  "mkfs.ext4");
	add_scene(s, "refuse-mounted-partition", mounted_partition_setup, test_refused,
		  NCASES(refusal_cases), "mkfs.ext4 partx");
	add_scene(s, "refuse-partition", partition_setup, test_refused, NCASES(refusal_cases),
		  "partx");
	add_scene(s, "partition-lock", partition_setup, test_partition_shares_disk_lock, 1,
		  "partx");
	add_scene_torn(s, "refuse-mounted-alias", mounted_alias_setup, alias_teardown,
		       test_refused, NCASES(refusal_cases), "mkfs.ext4");
	add_scene_torn(s, "refuse-mounted-alias-yes", mounted_alias_setup, alias_teardown,
		       test_consented_refused, NCASES(consented_refusal_cases), "mkfs.ext4");
	add_scene_torn(s, "output-alias", output_alias_setup, alias_teardown,
		       test_output_is_device_data, NCASES(output_alias_cases), NULL);
	add_scene_torn(s, "alias-file-lock", output_alias_setup, alias_teardown,
		       test_alias_loop_shares_file_lock, 4, NULL);
	add_scene_torn(s, "renamed-image", renamed_setup, renamed_teardown,
		       test_renamed_image, NCASES(renamed_cases), NULL);
	add_scene_torn(s, "renamed-image-mounted", renamed_mounted_setup,
		       renamed_teardown, test_consented_refused,
		       NCASES(consented_refusal_cases), "mkfs.ext4");
	add_scene_torn(s, "stacked-upper-mounted", stacked_upper_mounted_setup,
		       alias_teardown, test_consented_refused,
		       NCASES(consented_refusal_cases), "mkfs.ext4");
	add_scene_torn(s, "stacked-lower-mounted", stacked_lower_mounted_setup,
		       alias_teardown, test_consented_refused,
		       NCASES(consented_refusal_cases), "mkfs.ext4");
	add_scene_torn(s, "stacked-output", stacked_upper_mounted_setup,
		       alias_teardown, test_output_on_stacked_mount, 1, "mkfs.ext4");
	add_scene_torn(s, "pending-alias", env_setup, image_teardown,
		       test_pending_journal_of_alias, NCASES(alias_cases), NULL);
	add_scene_torn(s, "restore-attached-image", env_setup, image_teardown,
		       test_restore_image_while_attached, 1, NULL);
	add_scene_torn(s, "journal-follows-file", env_setup, image_teardown,
		       test_journal_follows_file_not_name, 2, NULL);
	add_scene_torn(s, "renamed-during-test", env_setup, image_teardown,
		       test_renamed_during_test, NCASES(renamed_during_cases), NULL);
	add_scene_torn(s, "journal-across-state-dirs", env_setup, image_teardown,
		       test_journal_found_across_state_dirs, 2, NULL);
	add_scene(s, "refuse-swap", swap_setup, test_refused, NCASES(refusal_cases),
		  "mkswap swapon swapoff");
	add_scene(s, "refuse-readonly", readonly_setup, test_refused, NCASES(refusal_cases),
		  NULL);
	if (bf_unavailable("mkfs.ext4") == NULL) {
		TCase *tc = tcase_create("refuse-journal-on-device");

		tcase_add_unchecked_fixture(tc, journal_on_device_setup, refused_teardown);
		tcase_set_timeout(tc, 120);
		tcase_add_loop_test(tc, test_journal_refused, 0, NCASES(journal_refusal_cases));
		suite_add_tcase(s, tc);
	} else {
		tu_skip("e2e/refuse-journal-on-device", bf_unavailable("mkfs.ext4"));
	}

	tcase_add_unchecked_fixture(intr, interrupt_setup, image_teardown);
	tcase_set_timeout(intr, 120);
	tests_add_sweep(intr, test_interrupt, 40);
	tests_add_sweep(intr, test_kill_restore, 20);
	tcase_add_test(intr, test_pending_journal_refused);
	tcase_add_test(intr, test_crash_before_first_commit);
	tcase_add_test(intr, test_crash_during_save);
	tcase_add_test(intr, test_force_restore_honest);
	tcase_add_loop_test(intr, test_damaged_journal_refused, 0, 3);
	suite_add_tcase(s, intr);

	tcase_add_unchecked_fixture(sim, env_setup, image_teardown);
	tcase_set_timeout(sim, 120);
	tcase_add_loop_test(sim, test_sim_io_error, 0, NCASES(sim_error_cases));
	suite_add_tcase(s, sim);

	tcase_add_unchecked_fixture(bad, image_setup, image_teardown);
	tcase_set_timeout(bad, 120);
	tcase_add_loop_test(bad, test_bad_input, 0, NCASES(bad_cases));
	suite_add_tcase(s, bad);
	return s;
}
