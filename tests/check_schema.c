/* check_schema.c - every command's JSON against docs/json.md.
 *
 * The schema is read from the documentation page itself (tests/schema.c),
 * so a key added to the output but not to the page, a documented key the
 * output lacks, or a value of another type fails here.  The runs cover the
 * branches where keys turn null: undetermined geometry, fake cards,
 * skipped tests and workloads, devices without a card behind them. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonv.h"
#include "schema.h"
#include "testutil.h"
#include "tests.h"

#define SCHEMA_PAGE "docs/json.md"

static struct schema *load_page(void)
{
	char err[256];
	struct schema *s = schema_load(SCHEMA_PAGE, err, sizeof(err));

	ck_assert_msg(s, "%s", err);
	return s;
}

static const char *last_arg(const char *const *argv)
{
	size_t n = 0;

	while (argv[n + 1])
		n++;
	return argv[n];
}

/* Run flashprobe with argv, parse its output and check it against the
 * document of command; returns the document (the caller frees it). */
static struct jsonv *run_checked_status(const char *command, const char *const *argv,
					int status)
{
	struct schema *s = load_page();
	struct run_result r;
	struct jsonv *doc;
	char problems[4096];
	int n;

	tu_run(&r, argv);
	ck_assert_msg(r.status == status, "%s %s: exit %d: %s", argv[0], argv[1], r.status,
		      r.err);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc, "%s: not JSON: %.300s", command, r.out);
	n = schema_check(s, command, doc, problems, sizeof(problems));
	ck_assert_msg(n == 0, "%s (%s): %d problem(s) against %s:\n%s", command,
		      last_arg(argv), n, SCHEMA_PAGE, problems);
	tu_run_free(&r);
	schema_free(s);
	return doc;
}

static struct jsonv *run_checked(const char *command, const char *const *argv)
{
	return run_checked_status(command, argv, 0);
}

/* A card that fails a read during the probe (here in the alignment
 * test): exit status 1 with the failed read named on standard error, and
 * still one document on standard output, with what was found before the
 * failure, the failure itself, and no partitioning commands.  It used to
 * give the error line alone. */
START_TEST(test_probe_failing_card_document)
{
	const char *argv[] = { "probe", "--json", "sim:sdhc-4m,eio=300M+10M", NULL };
	struct jsonv *doc = run_checked_status("probe", argv, 1);

	ck_assert_str_eq(jsonv_get(doc, "card_failure.test")->string, "align");
	ck_assert_ptr_nonnull(strstr(jsonv_get(doc, "card_failure.error")->string,
				     "Input/output error reading"));
	ck_assert_int_eq(jsonv_get(doc, "align")->type, JSONV_NULL);
	ck_assert_int_eq(jsonv_get(doc, "capacity")->type, JSONV_OBJECT);
	ck_assert_double_eq(jsonv_get(doc, "advice.align_bytes")->number, 0);
	ck_assert_uint_eq(jsonv_len(jsonv_get(doc, "advice.commands")), 0);
	jsonv_free(doc);
}
END_TEST

/* The same in text: the error line first, then the report, which opens
 * with the failure and gives a note instead of commands.  (When the
 * capacity check's random positions found the bad range first, the card
 * is DAMAGED, the failed read lies past its verified part and that
 * finding's partition of the verified part stands.) */
START_TEST(test_probe_failing_card_text)
{
	struct run_result r;
	const char *failing, *conclusion;

	tu_run(&r, (const char *const[]){ "probe", "sim:sdhc-4m,eio=300M+10M", NULL });
	ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "probe failed on") && strstr(r.err, "reading 1KiB at byte"),
		      "%s", r.err);
	conclusion = strstr(r.out, "Conclusion");
	failing = strstr(r.out, "FAILING CARD: Input/output error reading");
	ck_assert_msg(conclusion && failing && failing < strstr(r.out, "capacity  "),
		      "%s", r.out);
	if (!strstr(r.out, "capacity  DAMAGED"))
		ck_assert_msg(strstr(r.out, "no partitioning advice: the card failed during "
					    "the align test") && !strstr(r.out, "sfdisk"),
			      "%s", r.out);
	ck_assert_msg(!strstr(r.out, "sfdisk --wipe") && !strstr(r.out, "mkfs"), "%s", r.out);
	tu_run_free(&r);
}
END_TEST

START_TEST(test_page_is_consistent)
{
	static const char *const commands[] = { "align", "open-au", "find-fat", "capacity",
						"bench", "identify", "probe", "advise",
						"check", "list-sims" };
	struct schema *s = load_page();
	char problems[4096];
	int n = schema_self_check(s, problems, sizeof(problems));

	ck_assert_msg(n == 0, "%s refers to undefined tables:\n%s", SCHEMA_PAGE, problems);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		ck_assert_msg(schema_has_document(s, commands[i]), "no document `%s` in %s",
			      commands[i], SCHEMA_PAGE);
	schema_free(s);
}
END_TEST

/* The checker itself: each kind of drift is caught and named by path. */
static struct jsonv *sims_doc(void)
{
	static const char *const argv[] = { "list-sims", "--json", NULL };

	return run_checked("list-sims", argv);
}

static struct jsonv *first_sim_member(struct jsonv *doc, const char *key)
{
	struct jsonv *m = (struct jsonv *)jsonv_get(jsonv_at(jsonv_get(doc, "sims"), 0), key);

	ck_assert_msg(m, "no sims[0].%s", key);
	return m;
}

static void expect_problem(const struct jsonv *doc, const char *words)
{
	struct schema *s = load_page();
	char problems[4096];
	int n = schema_check(s, "list-sims", doc, problems, sizeof(problems));

	ck_assert_msg(n > 0 && strstr(problems, words), "wanted a problem with '%s', got %d:\n%s",
		      words, n, problems);
	schema_free(s);
}

static void replace_string(char **field, const char *text)
{
	free(*field);
	*field = strdup(text);
	ck_assert_ptr_nonnull(*field);
}

START_TEST(test_checker_catches_drift)
{
	struct jsonv *doc = sims_doc();

	replace_string(&first_sim_member(doc, "name")->key, "nickname");
	expect_problem(doc, "sims[].nickname: undocumented key");
	expect_problem(doc, "missing key 'name'");
	jsonv_free(doc);

	doc = sims_doc();
	first_sim_member(doc, "ambiguous")->type = JSONV_NUMBER;
	expect_problem(doc, "sims[].ambiguous: number where boolean");
	jsonv_free(doc);

	doc = sims_doc();
	replace_string(&first_sim_member(doc, "capacity")->string, "bogus");
	expect_problem(doc, "'bogus' is not a value of enum sim_capacity");
	jsonv_free(doc);

	doc = sims_doc();
	first_sim_member(doc, "erase_size_bytes")->number += 0.5;
	expect_problem(doc, "sims[].erase_size_bytes: number where integer");
	first_sim_member(doc, "erase_size_bytes")->type = JSONV_NULL;
	expect_problem(doc, "sims[].erase_size_bytes: null where integer");
	jsonv_free(doc);

	doc = sims_doc();
	replace_string(&((struct jsonv *)jsonv_get(doc, "schema"))->string, "flashprobe/0");
	expect_problem(doc, "the first key must be");
	jsonv_free(doc);
}
END_TEST

/* ---- every command ---- */

struct run_case {
	const char *command;
	const char *argv[12];
};

static const struct run_case cases[] = {
	{ "align", { "align", "--json", "sim:seed", NULL } },
	{ "align", { "align", "--json", "sim:nopattern", NULL } },
	{ "open-au", { "open-au", "--json", "sim:seed", NULL } },
	{ "open-au", { "open-au", "--json", "--erasesize=4M", "sim:sdhc-4m", NULL } },
	{ "find-fat", { "find-fat", "--json", "sim:seed", NULL } },
	{ "find-fat", { "find-fat", "--json", "sim:flat", NULL } },
	{ "capacity", { "capacity", "--json", "sim:seed", NULL } },
	{ "capacity", { "capacity", "--json", "sim:fake-wrap", NULL } },
	{ "capacity", { "capacity", "--json", "sim:fake-limbo", NULL } },
	{ "bench", { "bench", "--json", "--runtime=200ms", "--repeat=2", "sim:seed", NULL } },
	{ "bench", { "bench", "--json", "--runtime=200ms", "--repeat=1",
		     "--workload=seq_read,rand_write", "sim:seed", NULL } },
	{ "probe", { "probe", "--json", "sim:seed", NULL } },
	{ "probe", { "probe", "--json", "sim:nopattern", NULL } },
	{ "probe", { "probe", "--json", "sim:fake-wrap", NULL } },
	{ "probe", { "probe", "--json", "--quick", "sim:sandisk-24m", NULL } },
	{ "probe", { "probe", "--json", "--erasesize=2M", "sim:seed,size=16M", NULL } },
	{ "advise", { "advise", "--json", "--erasesize=4M", "--size=1G", NULL } },
	{ "advise", { "advise", "--json", "--erasesize=4M", "--page=16K", "--fat-area=0",
		      "sim:seed", NULL } },
	{ "advise", { "advise", "--json", "--erasesize=8M", "--fat-area=16M", "--label=gpt",
		      "sim:seed", NULL } },
	{ "check", { "check", "--json", "--erasesize=4M", "sim:seed", NULL } },
	{ "check", { "check", "--json", "sim:seed", NULL } },
	{ "list-sims", { "list-sims", "--json", NULL } },
};

START_TEST(test_command_documents)
{
	jsonv_free(run_checked(cases[_i].command, cases[_i].argv));
}
END_TEST

/* identify and the identity of probe on every captured sysfs tree: SD,
 * SDHC with an SD Status, SDXC, eMMC, a USB reader and a loop device. */
static const char *const trees[][2] = {
	{ "sd-seed", "mmcblk0" }, { "sdhc-au", "mmcblk0" }, { "sdxc", "mmcblk0" },
	{ "emmc", "mmcblk1" }, { "usb-reader", "sdc" }, { "loop", "loop0" },
};

START_TEST(test_identify_documents)
{
	char root[128];
	const char *argv[] = { "identify", "--json", "--sysfs-root", root, trees[_i][1], NULL };
	struct jsonv *doc;

	snprintf(root, sizeof(root), "tests/data/sysfs/%s", trees[_i][0]);
	doc = run_checked("identify", argv);
	ck_assert_str_eq(jsonv_get(doc, "identity.device")->string, trees[_i][1]);
	jsonv_free(doc);
}
END_TEST

/* An image file without consent: read-only, so every write test is in
 * skipped with its reason, and the geometry nulls are checked too. */
START_TEST(test_probe_image_read_only)
{
	char *image = tu_make_image(64ull << 20, 7);
	const char *argv[] = { "probe", "--json", "--quick", "--no-realtime", image, NULL };
	static const char *const tests[] = { "capacity", "open-au", "find-fat" };
	const struct jsonv *skipped;
	struct jsonv *doc;

	ck_assert_ptr_nonnull(image);
	doc = run_checked("probe", argv);
	skipped = jsonv_get(doc, "skipped");
	ck_assert_uint_eq(jsonv_len(skipped), 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_str_eq(jsonv_get(jsonv_at(skipped, i), "test")->string, tests[i]);
		ck_assert(strlen(jsonv_get(jsonv_at(skipped, i), "reason")->string) > 10);
	}
	ck_assert_int_eq(jsonv_get(doc, "open_au")->type, JSONV_NULL);
	ck_assert_int_eq(jsonv_get(doc, "geometry.open_au_linear")->type, JSONV_NULL);
	jsonv_free(doc);
	unlink(image);
	free(image);
}
END_TEST

static void tool(const char *const *argv, const char *input)
{
	struct run_result r;

	tu_run_tool(&r, argv, input);
	ck_assert_msg(r.status == 0, "%s failed: %s", argv[0], r.err);
	tu_run_free(&r);
}

/* check on a card with FAT32, ext4 and an unknown partition: each
 * filesystem object with its own keys set and the others null. */
START_TEST(test_check_partitions)
{
	static const char *const need[] = { "sfdisk", "mkfs.fat", "mkfs.ext4" };
	char *image;
	const char *argv[] = { "check", "--json", "--erasesize=4M", NULL, NULL };
	struct jsonv *doc;
	const struct jsonv *parts;

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!tu_have_tool(need[i])) {
			tu_skip("test_check_partitions", "sfdisk, mkfs.fat and mkfs.ext4 "
				"are needed to build the partitioned image");
			return;
		}
	image = tu_make_image(128ull << 20, 3);
	ck_assert_ptr_nonnull(image);
	tool((const char *const[]){ "sfdisk", "-q", image, NULL },
	     "label: dos\nstart=8192, size=65536, type=c\n"
	     "start=73728, size=65536, type=83\nstart=139264, size=32768, type=83\n");
	tool((const char *const[]){ "mkfs.fat", "-F", "32", "--offset=8192", image, "32768",
				    NULL }, NULL);
	tool((const char *const[]){ "mkfs.ext4", "-q", "-F", "-E", "offset=37748736", image,
				    "32M", NULL }, NULL);
	argv[3] = image;
	doc = run_checked("check", argv);
	parts = jsonv_get(doc, "check.partitions");
	ck_assert_str_eq(jsonv_get(doc, "check.table")->string, "dos");
	ck_assert_uint_eq(jsonv_len(parts), 3);
	ck_assert_str_eq(jsonv_get(jsonv_at(parts, 0), "filesystem.type")->string, "vfat");
	ck_assert_int_eq(jsonv_get(jsonv_at(parts, 0), "filesystem.stride_blocks")->type,
			 JSONV_NULL);
	ck_assert_str_eq(jsonv_get(jsonv_at(parts, 1), "filesystem.type")->string, "ext4");
	ck_assert_int_eq(jsonv_get(jsonv_at(parts, 1), "filesystem.reserved_sectors")->type,
			 JSONV_NULL);
	ck_assert_str_eq(jsonv_get(jsonv_at(parts, 2), "filesystem.type")->string, "unknown");
	ck_assert_int_eq(jsonv_get(jsonv_at(parts, 2), "filesystem.data_start_bytes")->type,
			 JSONV_NULL);
	jsonv_free(doc);
	unlink(image);
	free(image);
}
END_TEST

Suite *schema_suite(void)
{
	Suite *s = suite_create("schema");
	TCase *tc = tcase_create("schema");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_page_is_consistent);
	tcase_add_test(tc, test_checker_catches_drift);
	tcase_add_loop_test(tc, test_command_documents, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_loop_test(tc, test_identify_documents, 0, sizeof(trees) / sizeof(trees[0]));
	tcase_add_test(tc, test_probe_image_read_only);
	tcase_add_test(tc, test_probe_failing_card_document);
	tcase_add_test(tc, test_probe_failing_card_text);
	tcase_add_test(tc, test_check_partitions);
	suite_add_tcase(s, tc);
	return s;
}
