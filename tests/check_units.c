/* check_units.c - size parsing and the human-readable formatters. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests.h"
#include "units.h"

struct size_case {
	const char *in;
	int rc;
	uint64_t val;
};

static const struct size_case size_cases[] = {
	{ "0", 0, 0 },
	{ "4194304", 0, 4194304 },
	{ "010", 0, 10 },			/* decimal, never octal */
	{ "0x400000", 0, 0x400000 },
	{ "0X1b", 0, 27 },			/* hex B is a digit */
	{ "0xFFFFFFFFFFFFFFFF", 0, UINT64_MAX },
	{ "4M", 0, 4u << 20 },
	{ "4m", 0, 4u << 20 },
	{ "4MiB", 0, 4u << 20 },
	{ "4mib", 0, 4u << 20 },
	{ "512K", 0, 512u << 10 },
	{ "512KiB", 0, 512u << 10 },
	{ "1G", 0, UINT64_C(1) << 30 },
	{ "1GiB", 0, UINT64_C(1) << 30 },
	{ "2T", 0, UINT64_C(2) << 40 },
	{ "2TiB", 0, UINT64_C(2) << 40 },
	{ "512B", 0, 512 },
	{ "0K", 0, 0 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "16777215T", 0, UINT64_C(16777215) << 40 },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "99999999999999999999999999", -ERANGE, 0 },
	{ "16777216T", -ERANGE, 0 },
	{ "17179869184G", -ERANGE, 0 },
	{ "0x10000000000000000", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 },
	{ "4 M", -EINVAL, 0 },
	{ "1.5M", 0, 3u << 19 },		/* as the reports write it */
	{ "1.25KiB", 0, 1280 },
	{ "2.0", 0, 2 },
	{ "0.5K", 0, 512 },
	{ "1.000000000001T", -EINVAL, 0 },	/* not whole bytes */
	{ "1.1M", -EINVAL, 0 },
	{ "1.5", -EINVAL, 0 },			/* half a byte */
	{ "1.0000000000000M", -EINVAL, 0 },	/* 13 decimals */
	{ "1.M", -EINVAL, 0 },
	{ "1.5MB", -EINVAL, 0 },
	{ "16777215.5T", 0, (UINT64_C(16777215) << 40) + (UINT64_C(1) << 39) },
	{ "16777215.9999999999T", -EINVAL, 0 },
	{ "17592186044415.9999990463256836K", -EINVAL, 0 },
	{ "4MB", -EINVAL, 0 },			/* 1000 or 1024? refused */
	{ "4Mi", -EINVAL, 0 },
	{ "4MiBx", -EINVAL, 0 },
	{ "4X", -EINVAL, 0 },
	{ "M", -EINVAL, 0 },
	{ "0x", -EINVAL, 0 },
	{ "0x10K", -EINVAL, 0 },
	{ "0xg", -EINVAL, 0 },
	{ "abc", -EINVAL, 0 },
	{ "12abc", -EINVAL, 0 },
	{ "99999999999999999999x", -EINVAL, 0 },	/* garbage wins */
};

START_TEST(test_parse_size_table)
{
	for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
		const struct size_case *c = &size_cases[i];
		uint64_t v = 12345;
		int rc = units_parse_size(c->in, &v);

		ck_assert_msg(rc == c->rc, "parse \"%s\": rc %d, want %d",
			      c->in, rc, c->rc);
		if (c->rc == 0)
			ck_assert_msg(v == c->val, "parse \"%s\": %ju, want %ju",
				      c->in, (uintmax_t)v, (uintmax_t)c->val);
		else
			ck_assert_msg(v == 12345, "parse \"%s\" wrote on error",
				      c->in);
	}
}
END_TEST

START_TEST(test_parse_size_null)
{
	uint64_t v = 7;

	ck_assert_int_eq(units_parse_size(NULL, &v), -EINVAL);
	ck_assert_uint_eq(v, 7);
}
END_TEST

START_TEST(test_parse_uint)
{
	uint64_t v = 99;

	ck_assert_int_eq(units_parse_uint("42", 100, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(units_parse_uint("100", 100, &v), 0);
	ck_assert_uint_eq(v, 100);
	ck_assert_int_eq(units_parse_uint("0", 0, &v), 0);
	ck_assert_uint_eq(v, 0);
	v = 99;
	ck_assert_int_eq(units_parse_uint("101", 100, &v), -ERANGE);
	ck_assert_int_eq(units_parse_uint("18446744073709551616", UINT64_MAX, &v),
			 -ERANGE);
	ck_assert_int_eq(units_parse_uint("", 100, &v), -EINVAL);
	ck_assert_int_eq(units_parse_uint("-1", 100, &v), -EINVAL);
	ck_assert_int_eq(units_parse_uint("+1", 100, &v), -EINVAL);
	ck_assert_int_eq(units_parse_uint("4K", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(units_parse_uint("0x10", UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(units_parse_uint(" 1", 100, &v), -EINVAL);
	ck_assert_int_eq(units_parse_uint(NULL, 100, &v), -EINVAL);
	ck_assert_uint_eq(v, 99);
	ck_assert_int_eq(units_parse_uint("18446744073709551615", UINT64_MAX, &v),
			 0);
	ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

struct bytes_case {
	uint64_t in;
	const char *out;
};

static const struct bytes_case bytes_cases[] = {
	{ 0, "0B" },
	{ 512, "512B" },
	{ 1023, "1023B" },
	{ 1024, "1KiB" },
	{ 1536, "1.5KiB" },
	{ 1280, "1.25KiB" },
	{ 1792, "1.75KiB" },
	{ 3000, "3000B" },
	{ 16384, "16KiB" },
	{ 4u << 20, "4MiB" },
	{ 3u << 20, "3MiB" },
	{ 3u << 19, "1.5MiB" },
	{ 1000000000, "953.67MiB" },		/* inexact: two decimals */
	{ 100000, "100000B" },			/* inexact below 1MiB: bytes */
	{ UINT64_C(1) << 30, "1GiB" },
	{ UINT64_C(12) << 30, "12GiB" },
	{ UINT64_C(2) << 40, "2TiB" },
	{ UINT64_MAX, "15.99EiB" },		/* cut, never rounded up */
	{ 1048571904, "999.99MiB" },		/* not "1000.00MiB": more than there is */
	{ UINT64_C(1) << 63, "8EiB" },
};

START_TEST(test_format_bytes_table)
{
	char buf[32];

	for (size_t i = 0; i < sizeof(bytes_cases) / sizeof(bytes_cases[0]); i++) {
		ck_assert_ptr_eq(units_format_bytes(bytes_cases[i].in, buf,
						    sizeof(buf)), buf);
		ck_assert_msg(strcmp(buf, bytes_cases[i].out) == 0,
			      "%ju: \"%s\", want \"%s\"",
			      (uintmax_t)bytes_cases[i].in, buf,
			      bytes_cases[i].out);
	}
}
END_TEST

struct ns_case {
	int64_t in;
	const char *out;
};

static const struct ns_case ns_cases[] = {
	{ 0, "0ns" },
	{ 812, "812ns" },
	{ 999, "999ns" },
	{ -5, "-5ns" },
	{ 1000, "1.00\xc2\xb5s" },
	{ 504000, "504\xc2\xb5s" },
	{ -49400, "-49.4\xc2\xb5s" },
	{ -49449, "-49.4\xc2\xb5s" },
	{ 999499, "999\xc2\xb5s" },
	{ 999500, "1.00ms" },		/* rounds up into the next unit */
	{ 9996, "10.0\xc2\xb5s" },
	{ 99960, "100\xc2\xb5s" },
	{ 2060000, "2.06ms" },
	{ 1200000000, "1.20s" },
	{ 61500000000, "61.5s" },
	{ INT64_C(3600) * 1000000000, "3600s" },
};

START_TEST(test_format_ns_table)
{
	char buf[32];

	for (size_t i = 0; i < sizeof(ns_cases) / sizeof(ns_cases[0]); i++) {
		units_format_ns(ns_cases[i].in, buf, sizeof(buf));
		ck_assert_msg(strcmp(buf, ns_cases[i].out) == 0,
			      "%jd: \"%s\", want \"%s\"",
			      (intmax_t)ns_cases[i].in, buf, ns_cases[i].out);
	}
}
END_TEST

START_TEST(test_format_ns_extremes)
{
	char buf[64];
	size_t n;

	units_format_ns(INT64_MIN, buf, sizeof(buf));
	n = strlen(buf);
	ck_assert_msg(buf[0] == '-' && n > 2 && buf[n - 1] == 's' &&
		      strstr(buf, "9223") != NULL, "INT64_MIN: \"%s\"", buf);
	units_format_ns(INT64_MAX, buf, sizeof(buf));
	ck_assert_str_eq(buf, "9223372037s");
}
END_TEST

struct rate_case {
	double in;
	const char *out;
};

static const struct rate_case rate_cases[] = {
	{ 0, "0/s" },
	{ 512, "512/s" },
	{ 999.4, "999/s" },
	{ 999.6, "1.00K/s" },
	{ 96700, "96.7K/s" },
	{ 818000, "818K/s" },
	{ 12.4e6, "12.4M/s" },
	{ 1.5e9, "1.50G/s" },
	{ -2500, "-2.50K/s" },
	{ -0.2, "0/s" },
	{ INFINITY, "inf/s" },
	{ NAN, "nan/s" },
};

/* Each case of a table through one rate formatter. */
static void check_rates(const struct rate_case *cases, size_t n,
			char *(*format)(double, char *, size_t))
{
	char buf[32];

	for (size_t i = 0; i < n; i++) {
		format(cases[i].in, buf, sizeof(buf));
		ck_assert_msg(strcmp(buf, cases[i].out) == 0, "%g: \"%s\", want \"%s\"",
			      cases[i].in, buf, cases[i].out);
	}
}

START_TEST(test_format_rate_table)
{
	check_rates(rate_cases, sizeof(rate_cases) / sizeof(rate_cases[0]), units_format_rate);
}
END_TEST

static const struct rate_case binary_rate_cases[] = {
	{ 0, "0B/s" },
	{ 512, "512B/s" },
	{ 999.6, "0.98KiB/s" },
	{ 96700, "94.4KiB/s" },
	{ 1048576, "1.00MiB/s" },
	{ 12.4e6, "11.8MiB/s" },
	{ 1.5 * 1073741824.0, "1.50GiB/s" },
	{ -2560, "-2.50KiB/s" },
	{ INFINITY, "inf/s" },
};

/* The text reports' rates: 1024 multiples, the same names as the sizes. */
START_TEST(test_format_rate_binary_table)
{
	check_rates(binary_rate_cases, sizeof(binary_rate_cases) / sizeof(binary_rate_cases[0]),
		    units_format_rate_binary);
}
END_TEST

struct duration_case {
	const char *in;
	uint64_t bare_unit_ns;
	int rc;
	uint64_t ns;
};

static const struct duration_case duration_cases[] = {
	{ "3", 1000000000, 0, 3000000000 },		/* the CLI: seconds */
	{ "3s", 1000000000, 0, 3000000000 },
	{ "500ms", 1000000000, 0, 500000000 },
	{ "0", 1000000000, 0, 0 },
	{ "1.5", 1000000000, 0, 1500000000 },
	{ "2", 1, 0, 2 },				/* simulated cards: ns */
	{ "2ns", 1, 0, 2 },
	{ "117us", 1, 0, 117000 },
	{ "2.5ms", 1, 0, 2500000 },
	{ "0.000000001s", 1, 0, 1 },
	{ "1.5ns", 1, -EINVAL, 0 },			/* not a whole ns */
	{ "0.0000000001s", 1, -EINVAL, 0 },
	{ "", 1, -EINVAL, 0 },
	{ "-1s", 1, -EINVAL, 0 },
	{ " 1s", 1, -EINVAL, 0 },
	{ "1.s", 1, -EINVAL, 0 },
	{ ".5s", 1, -EINVAL, 0 },
	{ "3 s", 1, -EINVAL, 0 },
	{ "3sec", 1, -EINVAL, 0 },
	{ "3m", 1, -EINVAL, 0 },			/* minutes or metres: refused */
	{ "18446744073709551615", 1, 0, UINT64_MAX },
	{ "18446744073709551616", 1, -ERANGE, 0 },
	{ "18446744074s", 1, -ERANGE, 0 },
	{ "99999999999999999999999s", 1, -ERANGE, 0 },
};

START_TEST(test_parse_duration_table)
{
	for (size_t i = 0; i < sizeof(duration_cases) / sizeof(duration_cases[0]); i++) {
		const struct duration_case *c = &duration_cases[i];
		uint64_t v = 12345;
		int rc = units_parse_duration(c->in, c->bare_unit_ns, &v);

		ck_assert_msg(rc == c->rc, "'%s': rc %d, want %d", c->in, rc, c->rc);
		ck_assert_msg(rc != 0 || v == c->ns, "'%s': %llu, want %llu", c->in,
			      (unsigned long long)v, (unsigned long long)c->ns);
		ck_assert_msg(rc == 0 || v == 12345, "'%s': *ns written on error", c->in);
	}
	ck_assert_int_eq(units_parse_duration(NULL, 1, &(uint64_t){ 0 }), -EINVAL);
}
END_TEST

START_TEST(test_decimal_size_spellings)
{
	static const char *const decimal[] = { "4MB", "4mb", "512kB", "1GB", "2TB" };
	static const char *const other[] = { "4M", "4MiB", "4B", "MB", "4MBs", "0x4MB", "4XB" };
	uint64_t v;

	for (size_t i = 0; i < sizeof(decimal) / sizeof(decimal[0]); i++) {
		ck_assert_msg(units_is_decimal_size(decimal[i]), "%s", decimal[i]);
		ck_assert_int_eq(units_parse_size(decimal[i], &v), -EINVAL);
	}
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		ck_assert_msg(!units_is_decimal_size(other[i]), "%s", other[i]);
	ck_assert(!units_is_decimal_size(NULL));
}
END_TEST

/* Small buffers: truncated, terminated, and not one byte written past len. */
START_TEST(test_format_truncates)
{
	char buf[16];

	for (size_t len = 1; len <= 8; len++) {
		memset(buf, 'X', sizeof(buf));
		units_format_bytes(UINT64_C(3) << 19, buf, len);	/* 1.5MiB */
		ck_assert_uint_eq(strlen(buf), len - 1 < 6 ? len - 1 : 6);
		ck_assert_int_eq(strncmp(buf, "1.5MiB", len - 1), 0);
		ck_assert_int_eq(buf[len], 'X');

		memset(buf, 'X', sizeof(buf));
		units_format_ns(-49400, buf, len);
		ck_assert_uint_le(strlen(buf), len - 1);
		ck_assert_int_eq(buf[len], 'X');

		memset(buf, 'X', sizeof(buf));
		units_format_rate(12.4e6, buf, len);
		ck_assert_uint_eq(strlen(buf), len - 1 < 7 ? len - 1 : 7);
		ck_assert_int_eq(buf[len], 'X');
	}
	/* len 0 must not touch the buffer at all */
	memset(buf, 'X', sizeof(buf));
	units_format_bytes(4096, buf, 0);
	units_format_ns(1, buf, 0);
	units_format_rate(1, buf, 0);
	ck_assert_int_eq(buf[0], 'X');
}
END_TEST

Suite *units_suite(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_parse_size_table);
	tcase_add_test(tc, test_parse_size_null);
	tcase_add_test(tc, test_parse_uint);
	tcase_add_test(tc, test_parse_duration_table);
	tcase_add_test(tc, test_decimal_size_spellings);
	suite_add_tcase(s, tc);
	tc = tcase_create("format");
	tcase_add_test(tc, test_format_bytes_table);
	tcase_add_test(tc, test_format_ns_table);
	tcase_add_test(tc, test_format_ns_extremes);
	tcase_add_test(tc, test_format_rate_table);
	tcase_add_test(tc, test_format_rate_binary_table);
	tcase_add_test(tc, test_format_truncates);
	suite_add_tcase(s, tc);
	return s;
}
