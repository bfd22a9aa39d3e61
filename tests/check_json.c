/* check_json.c - the streaming JSON writer, byte for byte. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "json.h"
#include "stats.h"

/* Each test writes into memory; json_finish_doc() returns the text. */
struct json_capture {
	FILE *f;
	char *text;
	size_t len;
	struct json_writer w;
};

static void capture_begin(struct json_capture *c)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->text, &c->len);
	ck_assert_ptr_nonnull(c->f);
	json_init(&c->w, c->f);
}

/* Finishes the document and returns its text (owned by c). */
static const char *capture_end(struct json_capture *c)
{
	json_end(&c->w);
	ck_assert_int_eq(fclose(c->f), 0);
	return c->text;
}

START_TEST(test_nesting_and_commas)
{
	struct json_capture c;
	struct json_writer *w = &c.w;

	capture_begin(&c);
	json_object_begin(w, NULL);
	json_string(w, "device", "sim:seed");
	json_uint(w, "size_bytes", 4096);
	json_array_begin(w, "levels");
	json_uint(w, NULL, 1);
	json_uint(w, NULL, 2);
	json_array_end(w);
	json_object_begin(w, "align");
	json_double(w, "confidence", 0.5);
	json_bool(w, "found", true);
	json_bool(w, "ambiguous", false);
	json_null(w, "note");
	json_object_end(w);
	json_array_begin(w, "empty");
	json_array_end(w);
	json_object_begin(w, "none");
	json_object_end(w);
	json_array_begin(w, "rows");
	json_object_begin(w, NULL);
	json_int(w, "diff_ns", -5);
	json_object_end(w);
	json_object_begin(w, NULL);
	json_int(w, "diff_ns", 7);
	json_object_end(w);
	json_array_end(w);
	json_object_end(w);
	ck_assert_str_eq(capture_end(&c),
		"{\n"
		"  \"schema\": \"flashprobe/1\",\n"
		"  \"device\": \"sim:seed\",\n"
		"  \"size_bytes\": 4096,\n"
		"  \"levels\": [\n"
		"    1,\n"
		"    2\n"
		"  ],\n"
		"  \"align\": {\n"
		"    \"confidence\": 0.5,\n"
		"    \"found\": true,\n"
		"    \"ambiguous\": false,\n"
		"    \"note\": null\n"
		"  },\n"
		"  \"empty\": [],\n"
		"  \"none\": {},\n"
		"  \"rows\": [\n"
		"    {\n"
		"      \"diff_ns\": -5\n"
		"    },\n"
		"    {\n"
		"      \"diff_ns\": 7\n"
		"    }\n"
		"  ]\n"
		"}\n");
	ck_assert_int_eq(c.w.depth, 0);
	free(c.text);
}
END_TEST

START_TEST(test_top_level_scalar_and_array)
{
	struct json_capture c;

	capture_begin(&c);
	json_uint(&c.w, NULL, 42);
	ck_assert_str_eq(capture_end(&c), "42\n");
	free(c.text);

	capture_begin(&c);
	json_array_begin(&c.w, NULL);
	json_string(&c.w, NULL, "a");
	json_string(&c.w, NULL, NULL);
	json_array_end(&c.w);
	ck_assert_str_eq(capture_end(&c), "[\n  \"a\",\n  null\n]\n");
	free(c.text);
}
END_TEST

START_TEST(test_string_escaping)
{
	struct json_capture c;

	capture_begin(&c);
	json_object_begin(&c.w, NULL);
	json_string(&c.w, "q\"k", "say \"hi\" \\ /");
	json_string(&c.w, "ctl", "a\nb\tc\rd\be\ff\x01g\x1f" "h\x7f");
	json_string(&c.w, "utf8", "4\xc2\xb5s \xe2\x82\xac \xf0\x9f\x92\xbe");
	json_string(&c.w, "bad", "\xff" "a\xc0\xaf" "b\xed\xa0\x80" "c\xe2\x82");
	json_string(&c.w, "empty", "");
	json_object_end(&c.w);
	ck_assert_str_eq(capture_end(&c),
		"{\n"
		"  \"schema\": \"flashprobe/1\",\n"
		"  \"q\\\"k\": \"say \\\"hi\\\" \\\\ /\",\n"
		"  \"ctl\": \"a\\nb\\tc\\rd\\be\\ff\\u0001g\\u001fh\x7f\",\n"
		"  \"utf8\": \"4\xc2\xb5s \xe2\x82\xac \xf0\x9f\x92\xbe\",\n"
		/* lone byte, overlong '/', surrogate, truncated sequence */
		"  \"bad\": \"\\ufffda\\ufffd\\ufffdb\\ufffd\\ufffd\\ufffd"
		"c\\ufffd\\ufffd\",\n"
		"  \"empty\": \"\"\n"
		"}\n");
	free(c.text);
}
END_TEST

START_TEST(test_numbers)
{
	struct json_capture c;

	capture_begin(&c);
	json_array_begin(&c.w, NULL);
	json_double(&c.w, NULL, NAN);
	json_double(&c.w, NULL, INFINITY);
	json_double(&c.w, NULL, -INFINITY);
	json_double(&c.w, NULL, 0.1);
	json_double(&c.w, NULL, 3.0);
	json_double(&c.w, NULL, -0.25);
	json_double(&c.w, NULL, 1e300);
	json_double(&c.w, NULL, 0.1 + 0.2);
	json_int(&c.w, NULL, INT64_MIN);
	json_uint(&c.w, NULL, UINT64_MAX);
	json_array_end(&c.w);
	ck_assert_str_eq(capture_end(&c),
		"[\n"
		"  null,\n"
		"  null,\n"
		"  null,\n"
		"  0.1,\n"
		"  3,\n"
		"  -0.25,\n"
		"  1e+300,\n"
		"  0.30000000000000004,\n"
		"  -9223372036854775808,\n"
		"  18446744073709551615\n"
		"]\n");
	free(c.text);
}
END_TEST

/* Any finite double survives a write and strtod() unchanged. */
START_TEST(test_double_round_trip)
{
	struct stats_rng r;
	struct json_capture c;
	double v;
	char *end;

	stats_rng_seed(&r, 1);
	for (int i = 0; i < 2000; i++) {
		v = (stats_rng_uniform(&r) - 0.5) *
		    pow(10.0, (double)stats_rng_below(&r, 40) - 20.0);
		capture_begin(&c);
		json_double(&c.w, NULL, v);
		capture_end(&c);
		ck_assert_msg(strtod(c.text, &end) == v && strcmp(end, "\n") == 0,
			      "%.17g printed as %s", v, c.text);
		free(c.text);
	}
}
END_TEST

START_TEST(test_deep_nesting_is_bounded)
{
	struct json_capture c;
	const int levels = JSON_MAX_DEPTH + 8;

	capture_begin(&c);
	for (int i = 0; i < levels; i++)
		json_array_begin(&c.w, NULL);
	json_uint(&c.w, NULL, 1);
	for (int i = 0; i < levels; i++)
		json_array_end(&c.w);
	capture_end(&c);
	ck_assert_int_eq(c.w.depth, 0);
	ck_assert_ptr_nonnull(strstr(c.text, "1"));
	ck_assert_int_eq(c.text[c.len - 2], ']');
	free(c.text);
}
END_TEST

/* 0 means unknown for sizes: null, anything else the number. */
START_TEST(test_uint_or_null)
{
	struct json_capture c;

	capture_begin(&c);
	json_object_begin(&c.w, NULL);
	json_uint_or_null(&c.w, "unknown", 0);
	json_uint_or_null(&c.w, "known", 4194304);
	json_object_end(&c.w);
	ck_assert_str_eq(capture_end(&c),
			 "{\n  \"schema\": \"flashprobe/1\",\n  \"unknown\": null,\n"
			 "  \"known\": 4194304\n}\n");
	free(c.text);
}
END_TEST

/* A note or any text where "" means none is null; other text stays. */
START_TEST(test_text_or_null)
{
	struct json_capture c;

	capture_begin(&c);
	json_array_begin(&c.w, NULL);
	json_text_or_null(&c.w, NULL, "");
	json_text_or_null(&c.w, NULL, NULL);
	json_text_or_null(&c.w, NULL, "x");
	json_array_end(&c.w);
	ck_assert_str_eq(capture_end(&c), "[\n  null,\n  null,\n  \"x\"\n]\n");
	free(c.text);
}
END_TEST

/* The schema key opens the top-level object only: once, first, and not
 * in nested objects or at the top of an array. */
START_TEST(test_schema_key_first)
{
	struct json_capture c;

	capture_begin(&c);
	json_object_begin(&c.w, NULL);
	json_object_begin(&c.w, "inner");
	json_object_end(&c.w);
	json_array_begin(&c.w, "list");
	json_object_begin(&c.w, NULL);
	json_object_end(&c.w);
	json_array_end(&c.w);
	json_object_end(&c.w);
	ck_assert_str_eq(capture_end(&c),
			 "{\n  \"schema\": \"" JSON_SCHEMA "\",\n  \"inner\": {},\n"
			 "  \"list\": [\n    {}\n  ]\n}\n");
	free(c.text);
}
END_TEST

Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("writer");

	tcase_add_test(tc, test_nesting_and_commas);
	tcase_add_test(tc, test_top_level_scalar_and_array);
	tcase_add_test(tc, test_string_escaping);
	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_double_round_trip);
	tcase_add_test(tc, test_deep_nesting_is_bounded);
	tcase_add_test(tc, test_uint_or_null);
	tcase_add_test(tc, test_text_or_null);
	tcase_add_test(tc, test_schema_key_first);
	suite_add_tcase(s, tc);
	return s;
}
