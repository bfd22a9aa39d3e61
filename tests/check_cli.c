/* check_cli.c - the built binary end to end: options, bad input, output
 * formats, and a real loop device where the machine allows it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "jsonv.h"
#include "testutil.h"
#include "tests.h"
#include "xmlcheck.h"

static void run(struct run_result *r, const char *const *argv)
{
	tu_run(r, argv);
	ck_assert_ptr_nonnull(r->out);
	ck_assert_ptr_nonnull(r->err);
}

START_TEST(test_help_and_version)
{
	struct run_result r;

	run(&r, (const char *const[]){ "--help", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "Usage: flashprobe"));
	ck_assert_ptr_nonnull(strstr(r.out, "See flashprobe(1)."));
	ck_assert_str_eq(r.err, "");
	tu_run_free(&r);
	run(&r, (const char *const[]){ "--version", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(strncmp(r.out, "flashprobe ", 11), 0);
	tu_run_free(&r);
}
END_TEST

/* Every long option help_args' help names is documented in man. */
static void help_options_in_man(const char *const *help_args, const char *man)
{
	struct run_result r;

	run(&r, help_args);
	ck_assert_int_eq(r.status, 0);
	for (const char *p = strstr(r.out, "--"); p; p = strstr(p + 2, "--")) {
		char opt[64], roff[160];
		size_t len = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");

		if (len == 0 || len >= sizeof(opt))
			continue;
		memcpy(opt, p + 2, len);
		opt[len] = '\0';
		/* roff writes every hyphen of an option as \- */
		snprintf(roff, sizeof(roff), "\\-\\-");
		for (size_t i = 0; i < len; i++)
			snprintf(roff + strlen(roff), sizeof(roff) - strlen(roff), "%s",
				 opt[i] == '-' ? "\\-" : (char[]){ opt[i], 0 });
		ck_assert_msg(strstr(man, roff), "--%s is not in the man page", opt);
	}
	tu_run_free(&r);
}

/* Every long option --help and each command's help name (flashbench's
 * spellings among them) is documented in the man page. */
START_TEST(test_help_matches_man_page)
{
	static const char *const commands[] = { "probe", "align", "open-au", "find-fat",
						"capacity", "identify", "bench", "restore",
						"list-sims", "advise", "check" };
	FILE *f = fopen("docs/flashprobe.1", "r");
	static char man[131072];
	size_t n;

	ck_assert_msg(f != NULL, "docs/flashprobe.1 not found (run from the source tree)");
	n = fread(man, 1, sizeof(man) - 1, f);
	fclose(f);
	man[n] = '\0';
	ck_assert_uint_lt(n, sizeof(man) - 1);
	help_options_in_man((const char *const[]){ "--help", NULL }, man);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		help_options_in_man((const char *const[]){ "help", commands[i], NULL }, man);
}
END_TEST

/* Each bad invocation: exit status 2, exactly one line of reason first on
 * stderr (a second line may point to --help), nothing on stdout. */
static const struct bad_case {
	const char *args[6];
	const char *expect;
} bad_cases[] = {
	{ { NULL }, "no command" },
	{ { "align", NULL }, "no device" },
	{ { "--bogus", "align", "sim:seed", NULL }, "unknown option" },
	{ { "align", "sim:seed", "extra", NULL }, "unexpected argument" },
	{ { "align", "--blocksize", NULL }, "needs a value" },
	{ { "align", "--blocksize=0", "sim:seed", NULL }, "not a positive size" },
	{ { "align", "--blocksize=-4k", "sim:seed", NULL }, "not a positive size" },
	{ { "align", "--blocksize=12q", "sim:seed", NULL }, "not a positive size" },
	{ { "align", "--blocksize=99999999999999999999", "sim:seed", NULL }, "too large" },
	{ { "align", "--blocksize=1536", "sim:seed", NULL }, "multiple of two sectors" },
	{ { "align", "--count=abc", "sim:seed", NULL }, "not a number" },
	{ { "align", "sim:nosuchcard", NULL }, "unknown simulated card" },
	{ { "align", "sim:seed,bogus=1", NULL }, "unknown key" },
	{ { "align", "/nonexistent/flashprobe-device", NULL }, "No such file" },
	{ { "align", "/", NULL }, "is a directory" },
	{ { "align", "/dev/null", NULL }, "not a block device or regular file" },
	{ { "align", "--json", "--flashbench", "sim:seed", NULL }, "output format" },
	/* a chart that cannot be written is refused before measuring (a
	 * probe would announce its write areas first) */
	{ { "probe", "--svg=/nonexistent/dir/chart.svg", "sim:seed", NULL },
	  "directory does not exist" },
	{ { "bench", "--svg=/", "sim:seed", NULL }, "not a regular file" },
	{ { "align", "--svg=", "sim:seed", NULL }, "needs a file name" },
	{ { "restore", "--svg=chart.svg", "sim:seed", NULL }, "commands that measure" },
	{ { "list-sims", "--svg=chart.svg", NULL }, "commands that measure" },
	{ { "align", "--json", "--svg=-", "sim:seed", NULL }, "standard output" },
	/* a mistyped command is named as one, not taken for a device */
	{ { "frobnicate", "sim:seed", NULL }, "unknown command 'frobnicate'" },
	{ { "help", "frobnicate", NULL }, "unknown command 'frobnicate'" },
	{ { "frobnicate", NULL }, "'frobnicate' is neither a command nor a device" },
	{ { "help", "align", "bench", NULL }, "unexpected argument 'bench'" },
	/* options a command would ignore are refused, not ignored */
	{ { "align", "--fat-nr=3", "sim:seed", NULL }, "--fat-nr only applies to find-fat" },
	{ { "align", "--workload=all", "sim:seed", NULL }, "--workload only applies to bench" },
	{ { "align", "--write", "sim:seed", NULL }, "(align only reads)" },
	{ { "open-au", "--runtime=1", "sim:seed", NULL }, "--runtime only applies to bench" },
	{ { "list-sims", "--seed=1", NULL }, "--seed only applies to" },
	{ { "restore", "--journal=x", "sim:seed", NULL }, "--journal only applies to" },
	/* the pointer file keeps one path per line: a newline would cut it
	 * and leave a pointer to a "lost" journal */
	{ { "open-au", "--write", "--journal=/var/tmp/j\nk", "sim:seed", NULL },
	  "holds a control character" },
	/* sizes are binary: a decimal-looking unit is refused with the fix */
	{ { "align", "--blocksize=4MB", "sim:seed", NULL }, "use 4M or 4MiB (binary units)" },
	{ { "bench", "--runtime=0", "sim:seed", NULL }, "out of range (1ms to 86400s)" },
	/* bench's area too small for its blocks failed at run time (status 1,
	 * after announcing writes); only write workloads in a run that does
	 * not write measured nothing and said 0 */
	{ { "bench", "--size=4k", "sim:seed", NULL }, "must hold one aligned 1MiB block" },
	{ { "bench", "--workload=seq_write", "--read-only", "sim:seed", NULL },
	  "nothing to measure" },
	/* a journal named for a run that keeps none was ignored without a word */
	{ { "find-fat", "--destructive", "--journal=/var/tmp/x.journal", "sim:seed", NULL },
	  "--destructive keeps no backup" },
	/* a page larger than the erase block, a size the arithmetic cannot
	 * hold ("the device is too small" for 2^64 - 1MiB) */
	{ { "advise", "-e", "4M", "--page=8M", "--size=1G", NULL },
	  "page 8MiB is larger than the erasesize 4MiB" },
	{ { "check", "-e", "4M", "--page=8M", "sim:seed", NULL }, "is larger than the erasesize" },
	{ { "advise", "-e", "4M", "--size=0xfffffffffff00000", NULL }, "larger than any device" },
	/* an offset past the end: said before the card is timed for an
	 * erase size (two lines, the first a measurement, came before) */
	{ { "open-au", "--offset=1T", "sim:seed", NULL }, "offset 1TiB is past the end of" },
	/* a fifth range was "a bad value" */
	{ { "align", "sim:seed,eio=1M+1M,eio=2M+1M,eio=3M+1M,eio=4M+1M,eio=5M+1M", NULL },
	  "at most 4 eio ranges" },
	/* an erase size above find-fat's largest was called "too small" */
	{ { "find-fat", "--destructive", "-y", "--erasesize=128M", "sim:seed", NULL },
	  "erasesize 128MiB is larger than this test takes" },
};

/* What a user typed or a file is named goes into messages with its
 * control characters as \xNN: one line, and no escape sequence reaches
 * the terminal (an ESC in a device name cleared the screen). */
START_TEST(test_control_characters_shown)
{
	struct run_result r;

	run(&r, (const char *const[]){ "align", "sim:seed\x1b[2J\nfoo", NULL });
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(!strchr(r.err, 0x1b) && tu_count_lines(r.err) == 1 &&
		      strstr(r.err, "seed\\x1b[2J\\x0afoo"), "'%s'", r.err);
	tu_run_free(&r);
}
END_TEST

/* Help and the version that did not reach standard output (a full disk)
 * are a failure, as a report is; an explicit bench area on a device too
 * small for the default one is taken (it was refused, telling the user
 * to give what they gave). */
START_TEST(test_help_to_full_and_small_bench)
{
	static const char *const forms[] = { "--help", "-V", "help align" };
	char cmd[4096 + 64];
	struct run_result r;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(cmd, sizeof(cmd), "'%s' %s >/dev/full", tu_binary(), forms[i]);
		tu_run_tool(&r, (const char *const[]){ "sh", "-c", cmd, NULL }, NULL);
		ck_assert_msg(r.status == 1 && strstr(r.err, "cannot write"), "%s: %d '%s'",
			      forms[i], r.status, r.err);
		tu_run_free(&r);
	}
	run(&r, (const char *const[]){ "bench", "--offset=0", "--size=1M", "--runtime=100ms",
				       "--warmup=0", "--repeat=1", "--json", "-q",
				       "sim:seed,sector=4096,size=8M", NULL });
	ck_assert_msg(r.status == 0, "%d '%s'", r.status, r.err);
	tu_run_free(&r);
}
END_TEST

START_TEST(test_bad_input)
{
	const struct bad_case *c = &bad_cases[_i];
	struct run_result r;

	run(&r, c->args);
	ck_assert_msg(r.status == 2, "case %d: status %d, stderr '%s'", _i, r.status, r.err);
	ck_assert_msg(strstr(r.err, c->expect), "case %d: stderr '%s' lacks '%s'",
		      _i, r.err, c->expect);
	ck_assert_int_eq(strncmp(r.err, "flashprobe: ", 12), 0);
	ck_assert_uint_le(tu_count_lines(r.err), 2);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
}
END_TEST

/* A relative FLASHPROBE_STATE_DIR is refused (2) before anything runs: a
 * restore from another directory said "nothing to restore" while the
 * journal waited where the test ran. */
START_TEST(test_relative_state_dir)
{
	const char *old = getenv("FLASHPROBE_STATE_DIR");
	char *keep = old ? strdup(old) : NULL;
	struct run_result r;

	ck_assert_int_eq(setenv("FLASHPROBE_STATE_DIR", "state", 1), 0);
	run(&r, (const char *const[]){ "restore", "sim:seed", NULL });
	if (keep) {
		setenv("FLASHPROBE_STATE_DIR", keep, 1);
		free(keep);
	} else {
		unsetenv("FLASHPROBE_STATE_DIR");
	}
	ck_assert_msg(r.status == 2 && strstr(r.err, "not an absolute path"),
		      "status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
}
END_TEST

/* open-au says where it starts when a given offset is not on an AU
 * (openau test_given_offset_on_au): the note, then the announcement of
 * the area from there. */
START_TEST(test_open_au_offset_rounded)
{
	struct run_result r;

	run(&r, (const char *const[]){ "open-au", "-e", "6M", "--offset=100M", "sim:np2-6m",
				       NULL });
	ck_assert_msg(r.status == 0, "%d '%s'", r.status, r.err);
	ck_assert_msg(strstr(r.err, "offset 100MiB is not on a 6MiB erase block: the test "
			     "starts at 102MiB") && strstr(r.err, "within 102MiB to"),
		      "'%s'", r.err);
	ck_assert_msg(strstr(r.out, "open AUs: 4 linear, 2 random"), "'%s'", r.out);
	tu_run_free(&r);
}
END_TEST

/* A device too small for align's reads is a usage error that says so,
 * with the block size the user gave or without one when none was given
 * (it said "blocksize 0"). */
START_TEST(test_align_device_too_small)
{
	char *img = tu_make_image(32 * 1024, 5);
	struct run_result r;

	ck_assert_ptr_nonnull(img);
	{
		const char *argv[] = { "align", img, NULL };

		run(&r, argv);
	}
	ck_assert_msg(r.status == 2, "status %d, stderr '%s'", r.status, r.err);
	ck_assert_msg(strstr(r.err, "is too small for the align test"), "stderr '%s'", r.err);
	tu_run_free(&r);
	{
		const char *argv[] = { "align", "--blocksize=4K", img, NULL };

		run(&r, argv);
	}
	ck_assert_msg(r.status == 2, "status %d, stderr '%s'", r.status, r.err);
	ck_assert_msg(strstr(r.err, "too small for blocksize 4096"), "stderr '%s'", r.err);
	tu_run_free(&r);
	unlink(img);
	free(img);
}
END_TEST

/* The long options in the first column of a help text (not those its
 * explanations mention), each once, space separated and framed by spaces. */
static void help_options(const char *help, char *out, size_t len)
{
	snprintf(out, len, " ");
	for (const char *line = help; line && *line; line = strchr(line, '\n') ?
	     strchr(line, '\n') + 1 : NULL) {
		const char *p = line;
		size_t n;

		if (strncmp(p, "  -", 3) && strncmp(p, "      --", 8))
			continue;
		p += strspn(p, " ");
		if (p[1] != '-')
			p += 4;		/* "-b, " */
		if (strncmp(p, "--", 2))
			continue;
		n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
		snprintf(out + strlen(out), len - strlen(out), "%.*s ", (int)n, p + 2);
	}
}

static const char *const command_names[] = {
	"probe", "align", "open-au", "find-fat", "capacity", "identify", "bench",
	"restore", "list-sims", "advise", "check",
};

/* COMMAND --help and help COMMAND print the same text: that command's
 * usage and options.  Every option of the full help that a command's help
 * leaves out is refused by that command (exit 2, before any device
 * work); so the help cannot promise an option the parser ignores. */
START_TEST(test_command_help)
{
	const char *cmd = command_names[_i];
	char all[2048], mine[2048], usage[64], opt[80];
	struct run_result r, h;

	run(&r, (const char *const[]){ "--help", NULL });
	help_options(r.out, all, sizeof(all));
	tu_run_free(&r);
	ck_assert_ptr_nonnull(strstr(all, " runtime "));
	run(&r, (const char *const[]){ cmd, "--help", NULL });
	run(&h, (const char *const[]){ "help", cmd, NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(h.status, 0);
	ck_assert_str_eq(r.out, h.out);
	snprintf(usage, sizeof(usage), "Usage: flashprobe %s ", cmd);
	ck_assert_msg(!strncmp(r.out, usage, strlen(usage)), "%s", r.out);
	help_options(r.out, mine, sizeof(mine));
	ck_assert_ptr_nonnull(strstr(mine, " help "));
	ck_assert_msg(strlen(mine) < strlen(all), "%s --help lists every option", cmd);
	tu_run_free(&r);
	tu_run_free(&h);
	for (char *p = all + 1, *end; *p; p = end + 1) {
		char name[40];

		end = strchr(p, ' ');
		snprintf(name, sizeof(name), " %.*s ", (int)(end - p), p);
		if (strstr(mine, name) || !strcmp(name, " help ") || !strcmp(name, " version "))
			continue;
		snprintf(opt, sizeof(opt), "--%.*s", (int)(end - p), p);
		run(&r, (const char *const[]){ cmd, opt, "sim:seed", NULL });
		if (r.status != 2 || !strstr(r.err, "only applies to")) {
			tu_run_free(&r);
			/* it takes a value: the refusal must not depend on it */
			snprintf(opt + strlen(opt), sizeof(opt) - strlen(opt), "=1");
			run(&r, (const char *const[]){ cmd, opt, "sim:seed", NULL });
		}
		ck_assert_msg(r.status == 2 && strstr(r.err, "only applies to") &&
			      !strncmp(r.err, "flashprobe: --", 14),
			      "%s %s: status %d, '%s'", cmd, opt, r.status, r.err);
		ck_assert_str_eq(r.out, "");
		tu_run_free(&r);
	}
}
END_TEST

/* bench's help names its options and no other command's. */
START_TEST(test_bench_help_is_its_own)
{
	struct run_result r;
	char mine[2048];

	run(&r, (const char *const[]){ "bench", "--help", NULL });
	help_options(r.out, mine, sizeof(mine));
	for (const char *o = "runtime warmup repeat workload read-only offset size write"; *o; ) {
		size_t n = strcspn(o, " ");
		char name[32];

		snprintf(name, sizeof(name), " %.*s ", (int)n, o);
		ck_assert_msg(strstr(mine, name), "bench --help lacks --%s", name + 1);
		o += n + (o[n] == ' ');
	}
	ck_assert(!strstr(mine, " fat-nr ") && !strstr(mine, " open-au-nr ") &&
		  !strstr(mine, " sysfs-root ") && !strstr(mine, " blocksize "));
	tu_run_free(&r);
}
END_TEST

/* flashbench's -r is --random. */
START_TEST(test_flashbench_random_spelling)
{
	const char *base[] = { "-O", NULL, "--open-au-nr=2", "-e", "4M", "-q", "sim:sdhc-4m", NULL };
	struct run_result a, b, plain;

	base[1] = "-r";
	run(&a, base);
	base[1] = "--random";
	run(&b, base);
	base[1] = "--flashbench";
	run(&plain, base);
	ck_assert_msg(a.status == 0, "-r: status %d, '%s'", a.status, a.err);
	ck_assert_str_eq(a.out, b.out);
	ck_assert_str_ne(a.out, plain.out);	/* the order changed the table */
	tu_run_free(&a);
	tu_run_free(&b);
	tu_run_free(&plain);
}
END_TEST

/* "96MiB", "160.39MiB", "1GiB" as printed, in bytes (0 when not a size). */
static double printed_bytes(const char *p)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	char unit[4] = "";
	double v;

	if (sscanf(p, "%lf%3[BKMGTi]", &v, unit) != 2)
		return 0;
	for (size_t i = 0; i < 5; i++)
		if (!strcmp(unit, units[i]))
			return v * (double)(1ull << (10 * i));
	return 0;
}

/* Each writing test announces its area as a sentence before it writes:
 * "will write at most N within ..." only when N fits in the area (never
 * more than the 1GiB card), else the total as a total.  -q silences the
 * announcements; the JSON keeps the plan. */
START_TEST(test_write_announcements)
{
	static const char *const tests[] = { "find-fat", "open-au", "capacity" };
	const double card = 1024.0 * 1024 * 1024;
	struct run_result r;
	struct jsonv *doc;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		char want[64];
		const char *p, *within, *of;

		run(&r, (const char *const[]){ tests[i], "sim:seed", NULL });
		ck_assert_msg(r.status == 0, "%s: %d %s", tests[i], r.status, r.err);
		snprintf(want, sizeof(want), "flashprobe: %s will write ", tests[i]);
		p = strstr(r.err, want);
		ck_assert_msg(p != NULL, "%s: no announcement in '%s'", tests[i], r.err);
		p += strlen(want);
		within = strstr(p, "within ");
		of = strstr(p, " of 'sim:seed'");
		ck_assert_msg(within && of && within < of, "%s: '%s'", tests[i], p);
		if (!strncmp(p, "at most ", 8)) {
			double most = printed_bytes(p + 8);
			const char *end = strstr(within, " to ");
			double area = printed_bytes(end && end < of ? end + 4 : within + 17);

			ck_assert_msg(!strncmp(within, "within the first ", 17) || end,
				      "%s: '%s'", tests[i], p);
			ck_assert_msg(most > 0 && most <= area && most <= card,
				      "%s: at most %.0f in %.0f: '%s'", tests[i], most, area, p);
		} else {
			ck_assert_msg(!strncmp(p, "within ", 7) && strstr(p, "(up to ") &&
				      strstr(p, "in all"),
				      "%s: '%s'", tests[i], p);
		}
		ck_assert_msg(!strstr(r.err, "writes 0B"), "%s", r.err);
		tu_run_free(&r);
	}
	run(&r, (const char *const[]){ "find-fat", "-q", "--json", "sim:seed", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	doc = jsonv_parse(r.out);
	ck_assert_ptr_nonnull(doc);
	ck_assert_ptr_nonnull(jsonv_get(doc, "fat_area.plan.max_write_bytes"));
	{
		/* the announcement -q silenced, as data */
		const struct jsonv *areas = jsonv_get(doc, "write_areas"), *a;

		ck_assert(areas && areas->type == JSONV_ARRAY && jsonv_len(areas) == 1);
		a = jsonv_at(areas, 0);
		ck_assert_str_eq(jsonv_get(a, "test")->string, "find-fat");
		ck_assert(jsonv_get(a, "start_bytes")->number == 0);
		ck_assert(jsonv_get(a, "end_bytes")->number ==
			  jsonv_get(doc, "fat_area.plan.end_bytes")->number);
		ck_assert(jsonv_get(a, "max_write_bytes")->number ==
			  jsonv_get(doc, "fat_area.plan.max_write_bytes")->number);
	}
	jsonv_free(doc);
	tu_run_free(&r);
	/* a reading command announces nothing: an empty list */
	run(&r, (const char *const[]){ "align", "-q", "--json", "sim:seed", NULL });
	doc = jsonv_parse(r.out);
	ck_assert_ptr_nonnull(doc);
	ck_assert(jsonv_get(doc, "write_areas") &&
		  jsonv_len(jsonv_get(doc, "write_areas")) == 0);
	jsonv_free(doc);
	tu_run_free(&r);
}
END_TEST

/* A decimal rate ("13.5M/s", "49.4K/s") anywhere in s. */
static bool has_decimal_rate(const char *s)
{
	for (const char *p = strstr(s, "/s"); p; p = strstr(p + 1, "/s"))
		if (p - s >= 2 && strchr("KMGT", p[-1]) && p[-2] >= '0' && p[-2] <= '9')
			return true;
	return false;
}

/* The text reports give throughput in binary units, like their sizes
 * (MiB/s), in one size style ("8MiB"); flashbench's table keeps its own
 * decimal M/s for its users' scripts.  A bench without warm-up says so
 * instead of "after 0ns of warm-up". */
START_TEST(test_text_units)
{
	struct run_result r;

	run(&r, (const char *const[]){ "find-fat", "-q", "sim:seed", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "FAT area: first 8MiB"));
	ck_assert_ptr_nonnull(strstr(r.out, "MiB/s\t"));
	ck_assert_msg(!has_decimal_rate(r.out), "%s", r.out);
	ck_assert_ptr_null(strstr(r.out, " MiB"));
	tu_run_free(&r);
	run(&r, (const char *const[]){ "open-au", "-q", "sim:seed", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "MiB/s"));
	ck_assert_msg(!has_decimal_rate(r.out), "%s", r.out);
	tu_run_free(&r);
	run(&r, (const char *const[]){ "find-fat", "-q", "--flashbench", "sim:seed", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(has_decimal_rate(r.out) && !strstr(r.out, "iB/s"), "%s", r.out);
	tu_run_free(&r);
	run(&r, (const char *const[]){ "bench", "-q", "--warmup=0", "--runtime=100ms",
				       "--repeat=1", "sim:seed", NULL });
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, ", no warm-up;"));
	ck_assert_ptr_null(strstr(r.out, "0ns of warm-up"));
	ck_assert_ptr_nonnull(strstr(r.out, "MiB/s"));
	ck_assert_msg(!has_decimal_rate(r.out), "%s", r.out);
	tu_run_free(&r);
}
END_TEST

/* make install into a DESTDIR (install-files: the binary under test,
 * nothing rebuilt) puts the binary, the man page, the completion and the
 * docs under PREFIX, and the installed binary runs; uninstall removes
 * them all. */
START_TEST(test_make_install_destdir)
{
	char dir[] = "/var/tmp/flashprobe-destdir.XXXXXX", destdir[128], bin[160];
	char prefix[] = "PREFIX=/opt/fp";
	static const char *const files[] = {
		"/opt/fp/bin/flashprobe", "/opt/fp/share/man/man1/flashprobe.1",
		"/opt/fp/share/bash-completion/completions/flashprobe",
		"/opt/fp/share/doc/flashprobe/README.md",
		"/opt/fp/share/doc/flashprobe/design.md",
	};
	struct run_result r;
	char path[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(destdir, sizeof(destdir), "DESTDIR=%s", dir);
	snprintf(bin, sizeof(bin), "INSTALL_BIN=%s", tu_binary());
	tu_run_tool(&r, (const char *const[]){ "make", "-s", "--no-print-directory",
					       "install-files", destdir, prefix, bin, NULL }, "");
	ck_assert_msg(r.status == 0, "make install-files: %d %s", r.status, r.err);
	tu_run_free(&r);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, files[i]);
		ck_assert_msg(access(path, R_OK) == 0, "%s not installed", files[i]);
	}
	snprintf(path, sizeof(path), "%s/opt/fp/bin/flashprobe", dir);
	tu_run_tool(&r, (const char *const[]){ path, "--version", NULL }, "");
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(strncmp(r.out, "flashprobe ", 11), 0);
	tu_run_free(&r);
	tu_run_tool(&r, (const char *const[]){ "make", "-s", "--no-print-directory",
					       "uninstall", destdir, prefix, NULL }, "");
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, files[i]);
		ck_assert_msg(access(path, F_OK) != 0, "%s left after uninstall", files[i]);
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* What the bash completion offers for the words given (the last one is
 * being completed), one per line; COMP_WORDS is built as bash builds it,
 * ':' and '=' apart. */
static char *complete_words(const char *words)
{
	char script[2048];
	struct run_result r;
	char *out;

	snprintf(script, sizeof(script),
		 "source completion/flashprobe.bash || exit 9\n"
		 "COMP_WORDS=('%s' %s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
		 "_flashprobe; printf '%%s\\n' \"${COMPREPLY[@]}\"\n", tu_binary(), words);
	tu_run_tool(&r, (const char *const[]){ "bash", "-c", script, NULL }, "");
	ck_assert_msg(r.status == 0, "bash: %d %s", r.status, r.err);
	out = strdup(r.out);
	tu_run_free(&r);
	ck_assert_ptr_nonnull(out);
	return out;
}

static bool offers(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (!strncmp(p, word, n) && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/* The completion registers itself and offers commands, a command's own
 * options (exactly those of its help), simulated cards from list-sims,
 * and the values of --label and --workload. */
START_TEST(test_bash_completion)
{
	struct run_result r;
	char *got, help[2048], listed[2048] = " ";

	tu_run_tool(&r, (const char *const[]){ "bash", "-c",
		"source completion/flashprobe.bash && complete -p flashprobe", NULL }, "");
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "complete -F _flashprobe flashprobe"));
	tu_run_free(&r);

	got = complete_words("be");
	ck_assert_msg(offers(got, "bench"), "%s", got);
	free(got);
	got = complete_words("help fi");
	ck_assert_msg(offers(got, "find-fat") && !offers(got, "bench"), "%s", got);
	free(got);
	got = complete_words("bench --ru");
	ck_assert_msg(offers(got, "--runtime="), "%s", got);
	free(got);
	got = complete_words("align --ru");
	ck_assert_str_eq(got, "\n");		/* printf of no words: one newline */
	free(got);
	got = complete_words("align sim : se");
	ck_assert_msg(offers(got, "seed") && !offers(got, "sim:seed"), "%s", got);
	free(got);
	got = complete_words("advise --label = g");
	ck_assert_msg(offers(got, "gpt") && !offers(got, "dos"), "%s", got);
	free(got);

	/* "bench --" offers exactly the options bench --help lists */
	run(&r, (const char *const[]){ "bench", "--help", NULL });
	help_options(r.out, help, sizeof(help));
	tu_run_free(&r);
	got = complete_words("bench --");
	for (char *line = strtok(got, "\n"); line; line = strtok(NULL, "\n")) {
		size_t n = strcspn(line + 2, "=");

		ck_assert_int_eq(strncmp(line, "--", 2), 0);
		snprintf(listed + strlen(listed), sizeof(listed) - strlen(listed), "%.*s ",
			 (int)n, line + 2);
	}
	free(got);
	ck_assert_str_eq(listed, help);
}
END_TEST

/* A file on tmpfs cannot bypass the page cache: refused with the cause. */
START_TEST(test_tmpfs_refused)
{
	char path[] = "/dev/shm/flashprobe-test-XXXXXX";
	int fd = mkstemp(path);
	struct run_result r;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 16 << 20), 0);
	close(fd);
	run(&r, (const char *const[]){ "align", path, NULL });
	unlink(path);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "O_DIRECT"), "stderr: %s", r.err);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
}
END_TEST

START_TEST(test_align_text_on_sim)
{
	struct run_result r;

	run(&r, (const char *const[]){ "align", "sim:seed", NULL });
	ck_assert_int_eq(r.status, 0);
	/* the verdict comes before the evidence */
	ck_assert_ptr_nonnull(strstr(r.out, "erase block: 2MiB"));
	ck_assert_ptr_nonnull(strstr(r.out, "page:        8KiB"));
	ck_assert(strstr(r.out, "erase block:") < strstr(r.out, "align 2097152\t"));
	tu_run_free(&r);
}
END_TEST

/* flashbench users type -a and get flashbench's table. */
START_TEST(test_flashbench_compatible)
{
	struct run_result r;

	run(&r, (const char *const[]){ "-a", "--flashbench", "sim:sdhc-4m", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(strncmp(r.out, "align ", 6), 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\tpre "));
	ck_assert_ptr_nonnull(strstr(r.out, "\tdiff "));
	tu_run_free(&r);
}
END_TEST

START_TEST(test_align_json_on_sim)
{
	struct run_result r;
	struct jsonv *doc;
	const struct jsonv *rows, *v;

	run(&r, (const char *const[]){ "align", "--json", "sim:sdhc-4m", NULL });
	ck_assert_int_eq(r.status, 0);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "stdout is not one JSON document: %s", r.out);
	v = jsonv_get(doc, "device.path");
	ck_assert(v && v->type == JSONV_STRING && !strcmp(v->string, "sim:sdhc-4m"));
	v = jsonv_get(doc, "device.kind");
	ck_assert(v && !strcmp(v->string, "sim"));
	v = jsonv_get(doc, "device.size_bytes");
	ck_assert(v && v->type == JSONV_NUMBER && v->number > 0);
	v = jsonv_get(doc, "align.erase_size_bytes.value");
	ck_assert(v && v->type == JSONV_NUMBER && v->number == 4194304);
	v = jsonv_get(doc, "align.page_size_bytes.value");
	ck_assert(v && v->type == JSONV_NUMBER && v->number == 16384);
	v = jsonv_get(doc, "align.erase_size_bytes.confidence");
	ck_assert(v && v->number >= 0.8 && v->number <= 1);
	ck_assert_str_eq(jsonv_get(doc, "align.erase_size_bytes.source")->string, "measured");
	ck_assert(jsonv_get(doc, "align.page_size_bytes.confidence"));
	ck_assert(jsonv_get(doc, "align.io_count"));
	ck_assert(jsonv_get(doc, "align.elapsed_ns"));
	rows = jsonv_get(doc, "align.rows");
	ck_assert(rows && rows->type == JSONV_ARRAY && jsonv_len(rows) > 10);
	for (size_t i = 0; i < jsonv_len(rows); i++) {
		const struct jsonv *row = jsonv_at(rows, i);
		static const char *keys[] = { "align_bytes", "pre_ns", "on_ns",
					      "post_ns", "diff_ns" };

		for (size_t k = 0; k < 5; k++) {
			v = jsonv_get(row, keys[k]);
			ck_assert_msg(v && v->type == JSONV_NUMBER, "row %zu lacks %s",
				      i, keys[k]);
		}
	}
	jsonv_free(doc);
	tu_run_free(&r);
}
END_TEST

/* undetermined answers are null in JSON, and the run still succeeds */
START_TEST(test_align_json_undetermined)
{
	struct run_result r;
	struct jsonv *doc;
	const struct jsonv *v;

	run(&r, (const char *const[]){ "align", "--json", "sim:nopattern", NULL });
	ck_assert_int_eq(r.status, 0);
	doc = jsonv_parse(r.out);
	ck_assert_ptr_nonnull(doc);
	v = jsonv_get(doc, "align.erase_size_bytes");
	ck_assert(v && v->type == JSONV_NULL);
	v = jsonv_get(doc, "align.page_size_bytes");
	ck_assert(v && v->type == JSONV_NULL);
	jsonv_free(doc);
	tu_run_free(&r);
}
END_TEST

START_TEST(test_list_sims)
{
	struct run_result r;

	run(&r, (const char *const[]){ "list-sims", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "seed"));
	ck_assert_ptr_nonnull(strstr(r.out, "np2-3m"));
	ck_assert_uint_ge(tu_count_lines(r.out), 9);
	tu_run_free(&r);
}
END_TEST

/* An image file has no flash behind it: honest answer, status 0. */
START_TEST(test_align_on_image_file)
{
	char *img = tu_make_image(64 << 20, 3);
	struct run_result r;

	ck_assert_ptr_nonnull(img);
	run(&r, (const char *const[]){ "align", img, NULL });
	unlink(img);
	free(img);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "erase block: undetermined"));
	ck_assert_ptr_nonnull(strstr(r.out, "regular file"));
	tu_run_free(&r);
}
END_TEST

/* Two runs on one card at once would time each other's I/O: while a
 * test or restore holds the card's lock (here flock(1)'s, the same one),
 * align and check are refused with exit 3 before they read; a plain
 * advise, which only reads the size, is not. */
START_TEST(test_timing_refused_while_locked)
{
	char *img = tu_make_image(64 << 20, 5);
	const char *const cmds[][4] = {
		{ "align", NULL, NULL, NULL },
		{ "check", "--erasesize=4M", "--page=16K", NULL },
		{ "probe", NULL, NULL, NULL },
	};
	struct run_result r;
	int fd;

	ck_assert_ptr_nonnull(img);
	fd = open(img, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *argv[6] = { cmds[i][0] };
		size_t n = 1;

		for (size_t j = 1; j < 4 && cmds[i][j]; j++)
			argv[n++] = cmds[i][j];
		argv[n++] = img;
		run(&r, argv);
		ck_assert_msg(r.status == 3, "%s: status %d: %s", argv[0], r.status,
			      r.err);
		ck_assert_msg(strstr(r.err, "refusing to time") &&
			      strstr(r.err, "wait for it to finish"), "%s", r.err);
		ck_assert_str_eq(r.out, "");
		tu_run_free(&r);
	}
	run(&r, (const char *const[]){ "advise", "--erasesize=4M", img, NULL });
	ck_assert_msg(r.status == 0, "advise: status %d: %s", r.status, r.err);
	tu_run_free(&r);
	close(fd);	/* the lock goes with it */
	run(&r, (const char *const[]){ "check", "--erasesize=4M", "--page=16K", img, NULL });
	ck_assert_msg(r.status == 0, "check unlocked: status %d: %s", r.status, r.err);
	tu_run_free(&r);
	unlink(img);
	free(img);
}
END_TEST

static unsigned count_of(const char *s, const char *what)
{
	unsigned n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* Real-time priority on a real target: root gets it silently, others are
 * told once that it was refused; --no-realtime asks for none and so tells
 * nothing.  --help documents it. */
/* A card where nothing stands out: align stops after twice flashbench
 * -a's reads and says what it looked at, not that a budget cut an answer
 * short; a card with a pattern that settles says neither. */
START_TEST(test_nothing_found_is_told)
{
	struct run_result r;

	run(&r, (const char *const[]){ "align", "sim:nopattern", NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "no pattern found: no boundary cost more "
					"than another in"));
	ck_assert_ptr_null(strstr(r.out, "read budget ended"));
	ck_assert_ptr_nonnull(strstr(r.out, "erase block: undetermined"));
	tu_run_free(&r);
	run(&r, (const char *const[]){ "align", "sim:sdhc-4m", NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_ptr_null(strstr(r.out, "no pattern found"));
	ck_assert_ptr_null(strstr(r.out, "read budget ended"));
	tu_run_free(&r);
}
END_TEST

START_TEST(test_realtime_notice)
{
	const char *notice = "no real-time priority";
	char *img = tu_make_image(8 << 20, 4);
	struct run_result r;

	ck_assert_ptr_nonnull(img);
	run(&r, (const char *const[]){ "align", "--count=4", img, NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_uint_eq(count_of(r.err, notice), geteuid() == 0 ? 0 : 1);
	tu_run_free(&r);
	run(&r, (const char *const[]){ "align", "--no-realtime", "--count=4", img, NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_uint_eq(count_of(r.err, notice), 0);
	ck_assert_ptr_nonnull(strstr(r.out, "erase block"));
	tu_run_free(&r);
	unlink(img);
	free(img);
	run(&r, (const char *const[]){ "--help", NULL });
	ck_assert_ptr_nonnull(strstr(r.out, "--no-realtime"));
	ck_assert_ptr_nonnull(strstr(r.out, "SCHED_FIFO"));
	tu_run_free(&r);
}
END_TEST

/* Every measuring command writes a well-formed chart of what it measured;
 * with --svg=- the chart alone is on standard output and the report on
 * standard error. */
START_TEST(test_svg_every_command)
{
	static const char *const commands[][4] = {
		{ "align", NULL }, { "open-au", NULL }, { "find-fat", NULL },
		{ "probe", NULL }, { "bench", "--runtime=1", "--repeat=1", NULL },
	};
	char path[] = "/var/tmp/flashprobe-chart.XXXXXX";
	struct xml_stats *st = malloc(sizeof(*st));
	struct run_result r;
	int fd = mkstemp(path);

	ck_assert_ptr_nonnull(st);
	ck_assert_int_ge(fd, 0);
	close(fd);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const char *args[8] = { commands[i][0], "-q", "--svg", path };
		size_t n = 4, len = 0;
		char *doc;
		FILE *f;

		for (size_t k = 1; commands[i][k]; k++)
			args[n++] = commands[i][k];
		args[n++] = "sim:seed";
		ck_assert_int_eq(truncate(path, 0), 0);
		run(&r, args);
		ck_assert_msg(r.status == 0, "%s: status %d: %s", args[0], r.status, r.err);
		tu_run_free(&r);
		f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		doc = NULL;
		ck_assert_int_gt(getdelim(&doc, &len, '\0', f), 100);
		fclose(f);
		ck_assert_msg(xml_check(doc, "text", st) && !strcmp(st->root, "svg"),
			      "%s: the chart is not an SVG document", args[0]);
		free(doc);
	}
	unlink(path);
	run(&r, (const char *const[]){ "align", "--svg=-", "sim:seed", NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_msg(xml_check(r.out, "text", st) && !strcmp(st->root, "svg"),
		      "stdout is not the SVG alone: '%.80s'", r.out);
	ck_assert_ptr_nonnull(strstr(r.err, "erase block"));	/* the report */
	ck_assert_int_ne(access("-", F_OK), 0);			/* no file named - */
	tu_run_free(&r);
	free(st);
}
END_TEST

/* The loop device is made in the parent (unchecked fixture) so that it is
 * detached even when a test fails. */
static char *loop_image, *loop_dev;

static void loop_setup(void)
{
	loop_image = tu_make_image(64 << 20, 5);
	loop_dev = loop_image ? tu_loop_attach(loop_image, false) : NULL;
}

static void loop_teardown(void)
{
	tu_loop_detach(loop_dev);
	if (loop_image)
		unlink(loop_image);
	free(loop_dev);
	free(loop_image);
	loop_dev = loop_image = NULL;
}

START_TEST(test_align_on_loop_device)
{
	struct run_result r;
	uint64_t before;

	ck_assert_msg(loop_dev != NULL, "could not attach a loop device");
	before = tu_checksum(loop_dev);
	run(&r, (const char *const[]){ "align", "--json", loop_dev, NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	{
		struct jsonv *doc = jsonv_parse(r.out);
		const struct jsonv *v;

		ck_assert_ptr_nonnull(doc);
		v = jsonv_get(doc, "device.kind");
		ck_assert(v && !strcmp(v->string, "block"));
		v = jsonv_get(doc, "align.erase_size_bytes");
		ck_assert_msg(v && v->type == JSONV_NULL, "a pattern on a loop device");
		jsonv_free(doc);
	}
	ck_assert_uint_eq(tu_checksum(loop_dev), before);
	tu_run_free(&r);
}
END_TEST

/* A loop device over a RAM file: no flash and little host noise, so the
 * write analyzers must find nothing flash-like there. */
static char *ram_image, *ram_dev;

static void ram_loop_setup(void)
{
	char path[] = "/dev/shm/flashprobe-ram-XXXXXX";
	int fd = mkstemp(path);

	ram_dev = NULL;
	ram_image = NULL;
	if (fd < 0)
		return;
	if (ftruncate(fd, 160 << 20) == 0)
		ram_image = strdup(path);
	close(fd);
	ram_dev = ram_image ? tu_loop_attach(ram_image, false) : NULL;
}

static void ram_loop_teardown(void)
{
	tu_loop_detach(ram_dev);
	if (ram_image)
		unlink(ram_image);
	free(ram_dev);
	free(ram_image);
	ram_dev = ram_image = NULL;
}

static struct jsonv *run_json(const char *const *argv)
{
	struct run_result r;
	struct jsonv *doc;

	tu_run(&r, argv);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "not JSON: %s", r.out);
	tu_run_free(&r);
	return doc;
}

/* No collapse anywhere: no run may report an exact count, and linear
 * order reaches the limit ("at least 4").  Host write-back can make one
 * run's trials disagree, which the analyzer rightly calls undetermined
 * (on a loaded machine one run in three or so), so up to five runs are
 * allowed to show the limit. */
START_TEST(test_open_au_no_flash)
{
	bool reached = false;

	ck_assert_msg(ram_dev != NULL, "could not attach a RAM-backed loop device");
	for (int attempt = 0; attempt < 5 && !reached; attempt++) {
		struct jsonv *doc = run_json((const char *const[]){
			"open-au", "--destructive", "--yes", "--json", "-q", "--erasesize=4M",
			"--max-open=4", ram_dev, NULL });
		const struct jsonv *lin = jsonv_get(doc, "open_au.linear");
		const struct jsonv *ran = jsonv_get(doc, "open_au.random");

		ck_assert(lin && (lin->type == JSONV_NULL ||
				  !strcmp(jsonv_get(lin, "bound")->string, "at_least")));
		ck_assert(ran && (ran->type == JSONV_NULL ||
				  !strcmp(jsonv_get(ran, "bound")->string, "at_least")));
		ck_assert(jsonv_get(doc, "open_au.bytes_written")->number > 0);
		reached = lin->type == JSONV_OBJECT &&
			  jsonv_get(lin, "value")->number == 4;
		jsonv_free(doc);
	}
	ck_assert_msg(reached, "linear order never reached the limit without flash");
}
END_TEST

START_TEST(test_find_fat_no_flash)
{
	struct jsonv *doc;
	const struct jsonv *v;

	ck_assert_msg(ram_dev != NULL, "could not attach a RAM-backed loop device");
	/* --yes: the open-au test before it left its patterns */
	doc = run_json((const char *const[]){ "find-fat", "--destructive", "--yes", "--json",
					      "-q", "--erasesize=1M", ram_dev, NULL });
	v = jsonv_get(doc, "fat_area.found");
	ck_assert(v && v->type == JSONV_BOOL && !v->boolean);
	jsonv_free(doc);
}
END_TEST

/* Output of cmd run on a pseudo-terminal (script(1)), stdout and stderr
 * together. */
static char *run_on_pty(const char *args)
{
	char cmd[1024], buf[4096];
	size_t len = 0, cap = 1 << 16;
	char *out = malloc(cap);
	FILE *p;

	ck_assert_ptr_nonnull(out);
	snprintf(cmd, sizeof(cmd), "script -qec \"%s %s\" /dev/null 2>&1 </dev/null",
		 tu_binary(), args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(buf, sizeof(buf), p) && len + strlen(buf) + 1 < cap) {
		memcpy(out + len, buf, strlen(buf));
		len += strlen(buf);
	}
	out[len] = '\0';
	pclose(p);
	return out;
}

/* A phase longer than a second shows percent and time left on a
 * terminal; never with --quiet, never when stderr is not a terminal. */
START_TEST(test_progress_only_on_terminal)
{
	char args[512], *out;
	struct run_result r;

	ck_assert_msg(loop_dev != NULL, "could not attach a loop device");
	snprintf(args, sizeof(args), "bench --read-only --runtime=2 --warmup=0 "
		 "--repeat=1 --workload=rand_read %s", loop_dev);
	out = run_on_pty(args);
	ck_assert_msg(strstr(out, "bench:") && strstr(out, "%") && strstr(out, "left"),
		      "no progress line on a terminal: %s", out);
	{
		/* the last progress line is wiped (return, spaces, return)
		 * before the report starts with the device's line */
		const char *last = NULL, *p;
		size_t blanks;

		for (p = strstr(out, "s left"); p; p = strstr(p + 1, "s left"))
			last = p;
		p = last + 6;
		p += strspn(p, " ");
		ck_assert_msg(*p == '\r', "progress not wiped: '%s'", last);
		blanks = strspn(p + 1, " ");
		ck_assert_msg(blanks >= 20 && p[1 + blanks] == '\r', "not wiped: '%s'", last);
		p += 2 + blanks;
		ck_assert_msg(!strncmp(p, loop_dev, strlen(loop_dev)),
			      "the report does not start on a clean line: '%s'", p);
	}
	free(out);
	snprintf(args, sizeof(args), "bench --quiet --read-only --runtime=2 --warmup=0 "
		 "--repeat=1 --workload=rand_read %s", loop_dev);
	out = run_on_pty(args);
	ck_assert_msg(!strstr(out, "left"), "progress despite --quiet: %s", out);
	free(out);
	tu_run(&r, (const char *const[]){ "bench", "--read-only", "--runtime=2",
					  "--warmup=0", "--repeat=1",
					  "--workload=rand_read", loop_dev, NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(!strstr(r.err, "left"), "progress on a pipe: %s", r.err);
	tu_run_free(&r);
}
END_TEST

Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("invocation");
	const char *why = tu_loop_unavailable();

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_help_and_version);
	tcase_add_test(tc, test_help_matches_man_page);
	tcase_add_loop_test(tc, test_command_help, 0,
			    (int)(sizeof(command_names) / sizeof(command_names[0])));
	tcase_add_test(tc, test_bench_help_is_its_own);
	tcase_add_test(tc, test_flashbench_random_spelling);
	tcase_add_test(tc, test_write_announcements);
	tcase_add_test(tc, test_text_units);
	if (tu_have_tool("make") && access("Makefile", R_OK) == 0)
		tcase_add_test(tc, test_make_install_destdir);
	else
		tu_skip("cli/invocation: make install DESTDIR", "no make or no Makefile here");
	if (tu_have_tool("bash"))
		tcase_add_test(tc, test_bash_completion);
	else
		tu_skip("cli/invocation: bash completion", "no bash");
	tcase_add_test(tc, test_align_device_too_small);
	tcase_add_test(tc, test_open_au_offset_rounded);
	tcase_add_test(tc, test_relative_state_dir);
	tcase_add_test(tc, test_control_characters_shown);
	tcase_add_test(tc, test_help_to_full_and_small_bench);
	tcase_add_loop_test(tc, test_bad_input, 0,
			    (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, test_align_text_on_sim);
	if (access("/dev/shm", W_OK) == 0)
		tcase_add_test(tc, test_tmpfs_refused);
	else
		tu_skip("cli/invocation: tmpfs refusal", "no writable /dev/shm");
	tcase_add_test(tc, test_flashbench_compatible);
	tcase_add_test(tc, test_align_json_on_sim);
	tcase_add_test(tc, test_align_json_undetermined);
	tcase_add_test(tc, test_list_sims);
	tcase_add_test(tc, test_align_on_image_file);
	tcase_add_test(tc, test_timing_refused_while_locked);
	tcase_add_test(tc, test_realtime_notice);
	tcase_add_test(tc, test_nothing_found_is_told);
	tcase_add_test(tc, test_svg_every_command);
	suite_add_tcase(s, tc);
	if (why) {
		/* no TCase made for it: one never added to a suite leaks in
		 * every forked test, which LeakSanitizer reports */
		tu_skip("cli/loop-device: align on a loop device", why);
	} else {
		TCase *loop = tcase_create("loop-device");

		tcase_set_timeout(loop, 300);
		tcase_add_unchecked_fixture(loop, loop_setup, loop_teardown);
		tcase_add_test(loop, test_align_on_loop_device);
		if (system("command -v script >/dev/null 2>&1") == 0)
			tcase_add_test(loop, test_progress_only_on_terminal);
		else
			tu_skip("cli/loop-device: progress on a terminal", "no script(1)");
		suite_add_tcase(s, loop);
	}
	if (why || access("/dev/shm", W_OK)) {
		tu_skip("cli/loop-ram: write analyzers on a RAM-backed loop device",
			why ? why : "no writable /dev/shm");
	} else {
		TCase *ram = tcase_create("loop-ram");

		tcase_set_timeout(ram, 300);
		tcase_add_unchecked_fixture(ram, ram_loop_setup, ram_loop_teardown);
		tcase_add_test(ram, test_open_au_no_flash);
		tcase_add_test(ram, test_find_fat_no_flash);
		suite_add_tcase(s, ram);
	}
	return s;
}
