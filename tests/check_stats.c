/* check_stats.c - robust statistics and the deterministic generator. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>

#include "tests.h"
#include "stats.h"
#include "util.h"

#define TOL 1e-12

START_TEST(test_quantile_type7)
{
	/* Reference values from numpy.quantile (linear, R type 7). */
	const double v[] = { 4, 1, 3, 2 };
	const double w[] = { 10, 20, 30, 40, 50 };

	ck_assert_double_eq_tol(stats_quantile(v, 4, 0.25), 1.75, TOL);
	ck_assert_double_eq_tol(stats_quantile(v, 4, 0.5), 2.5, TOL);
	ck_assert_double_eq_tol(stats_quantile(v, 4, 0.9), 3.7, TOL);
	ck_assert_double_eq_tol(stats_quantile(v, 4, 0.0), 1.0, TOL);
	ck_assert_double_eq_tol(stats_quantile(v, 4, 1.0), 4.0, TOL);
	ck_assert_double_eq_tol(stats_quantile(w, 5, 0.1), 14.0, TOL);
	ck_assert_double_eq_tol(stats_quantile(w, 5, 0.75), 40.0, TOL);
	/* out-of-range q is clamped */
	ck_assert_double_eq_tol(stats_quantile(w, 5, -1.0), 10.0, TOL);
	ck_assert_double_eq_tol(stats_quantile(w, 5, 2.0), 50.0, TOL);
	ck_assert_double_eq_tol(stats_quantile(w, 1, 0.3), 10.0, TOL);
	ck_assert_double_eq_tol(stats_quantile(w, 0, 0.5), 0.0, TOL);
}
END_TEST

START_TEST(test_median_min_max_mean)
{
	const double odd[] = { 3, 1, 2 };
	const double even[] = { 8, 2, 6, 4 };
	double copy[4];

	memcpy(copy, even, sizeof(copy));
	ck_assert_double_eq_tol(stats_median(odd, 3), 2.0, TOL);
	ck_assert_double_eq_tol(stats_median(copy, 4), 5.0, TOL);
	/* the input is left alone */
	ck_assert_int_eq(memcmp(copy, even, sizeof(copy)), 0);
	ck_assert_double_eq_tol(stats_min(even, 4), 2.0, TOL);
	ck_assert_double_eq_tol(stats_max(even, 4), 8.0, TOL);
	ck_assert_double_eq_tol(stats_mean(even, 4), 5.0, TOL);
	ck_assert_double_eq_tol(stats_min(even, 0), 0.0, TOL);
	ck_assert_double_eq_tol(stats_max(even, 0), 0.0, TOL);
	ck_assert_double_eq_tol(stats_mean(even, 0), 0.0, TOL);
	ck_assert_double_eq_tol(stats_median(even, 0), 0.0, TOL);
}
END_TEST

/* The trimmed mean drops the given share at each end, in value order:
 * wild values do not move it, the input is left alone, and trimming
 * everything gives the median. */
START_TEST(test_trimmed_mean)
{
	const double v[] = { 100, 1, 2, 3, 4, 5, 6, 7, 8, -50 };
	double copy[10];

	memcpy(copy, v, sizeof(copy));
	ck_assert_double_eq_tol(stats_trimmed_mean(copy, 10, 0.0), 8.6, TOL);
	ck_assert_double_eq_tol(stats_trimmed_mean(copy, 10, 0.1), 4.5, TOL);
	ck_assert_double_eq_tol(stats_trimmed_mean(copy, 10, 0.2), 4.5, TOL);
	ck_assert_int_eq(memcmp(copy, v, sizeof(copy)), 0);
	ck_assert_double_eq_tol(stats_trimmed_mean(v, 10, 0.5), stats_median(v, 10), TOL);
	ck_assert_double_eq_tol(stats_trimmed_mean(v, 3, 0.2), (100 + 1 + 2) / 3.0, TOL);
	ck_assert_double_eq_tol(stats_trimmed_mean(v, 0, 0.2), 0.0, TOL);
}
END_TEST

/* The trimmed mean's spread: near sigma on normal data, unmoved by a
 * wild value past the trimmed share, and large when the values split in
 * two groups, where the MAD sees only the larger group. */
START_TEST(test_trimmed_sigma)
{
	const double split[] = { 20, 0, 20, 0, 20, 20, 0 };
	const double wild[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 1e6 };
	const double tame[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	static double v[20000];
	struct stats_rng r;

	ck_assert_double_lt(stats_mad_sigma(split, 7), 1e-9);
	/* winsorized (one each end): {0,0,0,20,20,20,20}, sd 10.69, over 5/7 */
	ck_assert_double_eq_tol(stats_trimmed_sigma(split, 7, 0.2),
				sqrt((3 * pow(80 / 7.0, 2) + 4 * pow(60 / 7.0, 2)) / 6) * 7 / 5,
				1e-9);
	ck_assert_double_eq_tol(stats_trimmed_sigma(wild, 10, 0.2),
				stats_trimmed_sigma(tame, 10, 0.2), TOL);
	ck_assert_double_eq_tol(stats_trimmed_sigma(split, 1, 0.2), 0.0, TOL);
	ck_assert_double_eq_tol(stats_trimmed_sigma(split, 7, 0.5), 0.0, TOL);
	stats_rng_seed(&r, 7);
	for (size_t i = 0; i < 20000; i++)
		v[i] = 5.0 * stats_rng_normal(&r);
	/* normal data: the 20 % trimmed mean's error is 1.07 sigma / sqrt(n) */
	ck_assert_double_eq_tol(stats_trimmed_sigma(v, 20000, 0.2), 5.0 * 1.07, 0.15);
}
END_TEST

START_TEST(test_mad_sigma)
{
	/* median 3, |deviations| {2,1,0,1,97}, MAD 1: the outlier is ignored */
	const double v[] = { 1, 2, 3, 4, 100 };
	const double same[] = { 7, 7, 7 };

	ck_assert_double_eq_tol(stats_mad_sigma(v, 5), 1.4826, TOL);
	ck_assert_double_eq_tol(stats_median_se(v, 5),
				1.2533 * 1.4826 / sqrt(5.0), TOL);
	ck_assert_double_eq_tol(stats_mad_sigma(same, 3), 0.0, TOL);
	ck_assert_double_eq_tol(stats_mad_sigma(v, 1), 0.0, TOL);
	ck_assert_double_eq_tol(stats_median_se(v, 1), 0.0, TOL);
}
END_TEST

/* On many normal samples the MAD sigma estimates the true sigma. */
START_TEST(test_mad_sigma_normal)
{
	static double v[20000];
	struct stats_rng r;
	double sigma;

	stats_rng_seed(&r, 42);
	for (size_t i = 0; i < 20000; i++)
		v[i] = 100.0 + 5.0 * stats_rng_normal(&r);
	sigma = stats_mad_sigma(v, 20000);
	ck_assert_msg(fabs(sigma - 5.0) < 0.15, "sigma %g", sigma);
	ck_assert_double_eq_tol(stats_median(v, 20000), 100.0, 0.15);
}
END_TEST

START_TEST(test_sort_inplace)
{
	double v[] = { 3, -1, NAN, 2, -5, 2 };

	stats_sort_inplace(v, 6);
	ck_assert_double_eq(v[0], -5);
	ck_assert_double_eq(v[1], -1);
	ck_assert_double_eq(v[2], 2);
	ck_assert_double_eq(v[3], 2);
	ck_assert_double_eq(v[4], 3);
	ck_assert_double_nan(v[5]);	/* NaN goes last */
}
END_TEST

START_TEST(test_percentile_ns)
{
	static uint64_t s[1000];
	const uint64_t three[] = { 10, 20, 30 };

	for (size_t i = 0; i < 1000; i++)
		s[i] = i + 1;
	ck_assert_uint_eq(stats_percentile_ns(s, 100, 50), 50);
	ck_assert_uint_eq(stats_percentile_ns(s, 100, 99), 99);
	ck_assert_uint_eq(stats_percentile_ns(s, 100, 100), 100);
	ck_assert_uint_eq(stats_percentile_ns(s, 100, 0.1), 1);
	ck_assert_uint_eq(stats_percentile_ns(s, 1000, 99.9), 999);
	ck_assert_uint_eq(stats_percentile_ns(s, 1000, 99.5), 995);
	ck_assert_uint_eq(stats_percentile_ns(s, 1000, 99.95), 1000);
	ck_assert_uint_eq(stats_percentile_ns(three, 3, 50), 20);
	ck_assert_uint_eq(stats_percentile_ns(three, 3, 34), 20);
	ck_assert_uint_eq(stats_percentile_ns(three, 3, 33), 10);
	ck_assert_uint_eq(stats_percentile_ns(three, 3, 0), 10);
	ck_assert_uint_eq(stats_percentile_ns(three, 0, 50), 0);
}
END_TEST

START_TEST(test_rng_reference)
{
	/* splitmix64 reference output for seed 0 and 1234567. */
	struct stats_rng r;

	stats_rng_seed(&r, 0);
	ck_assert_uint_eq(stats_rng_next(&r), UINT64_C(0xe220a8397b1dcdaf));
	ck_assert_uint_eq(stats_rng_next(&r), UINT64_C(0x6e789e6aa1b965f4));
	ck_assert_uint_eq(stats_rng_next(&r), UINT64_C(0x06c45d188009454f));
	stats_rng_seed(&r, 1234567);
	ck_assert_uint_eq(stats_rng_next(&r), UINT64_C(0x599ed017fb08fc85));
}
END_TEST

START_TEST(test_rng_deterministic)
{
	struct stats_rng a, b;
	int differ = 0;

	stats_rng_seed(&a, 7);
	stats_rng_seed(&b, 7);
	for (int i = 0; i < 100; i++) {
		ck_assert_double_eq(stats_rng_normal(&a), stats_rng_normal(&b));
		ck_assert_uint_eq(stats_rng_below(&a, 1000),
				  stats_rng_below(&b, 1000));
	}
	stats_rng_seed(&a, 7);
	stats_rng_seed(&b, 8);
	for (int i = 0; i < 100; i++)
		differ += stats_rng_next(&a) != stats_rng_next(&b);
	ck_assert_int_eq(differ, 100);
}
END_TEST

START_TEST(test_rng_uniform_normal)
{
	struct stats_rng r;
	double sum = 0, sum2 = 0, lo = 1, hi = 0, x;
	const int n = 200000;

	stats_rng_seed(&r, 99);
	for (int i = 0; i < n; i++) {
		x = stats_rng_uniform(&r);
		ck_assert(x >= 0.0 && x < 1.0);
		lo = fmin(lo, x);
		hi = fmax(hi, x);
		sum += x;
	}
	ck_assert_double_eq_tol(sum / n, 0.5, 0.005);
	ck_assert(lo < 0.001 && hi > 0.999);
	sum = 0;
	for (int i = 0; i < n; i++) {
		x = stats_rng_normal(&r);
		ck_assert(isfinite(x));
		sum += x;
		sum2 += x * x;
	}
	ck_assert_double_eq_tol(sum / n, 0.0, 0.01);
	ck_assert_double_eq_tol(sqrt(sum2 / n - (sum / n) * (sum / n)), 1.0, 0.01);
}
END_TEST

START_TEST(test_rng_below)
{
	struct stats_rng r;
	unsigned count[6] = { 0 };
	const unsigned n = 60000;
	uint64_t big = UINT64_C(0xaaaaaaaaaaaaaaaa), x;	/* ~2/3 of 2^64 */
	unsigned high = 0;

	stats_rng_seed(&r, 5);
	ck_assert_uint_eq(stats_rng_below(&r, 0), 0);
	ck_assert_uint_eq(stats_rng_below(&r, 1), 0);
	for (unsigned i = 0; i < n; i++) {
		x = stats_rng_below(&r, 6);
		ck_assert_uint_lt(x, 6);
		count[x]++;
	}
	for (unsigned k = 0; k < 6; k++)
		ck_assert_msg(count[k] > 9500 && count[k] < 10500,
			      "bucket %u: %u of %u", k, count[k], n);
	/* For n near 2/3 of 2^64, modulo without rejection would put two
	 * thirds of the draws into the low half of the range. */
	for (unsigned i = 0; i < 10000; i++) {
		x = stats_rng_below(&r, big);
		ck_assert_uint_lt(x, big);
		high += x >= big / 2;
	}
	ck_assert_msg(high > 4700 && high < 5300, "high half %u of 10000", high);
}
END_TEST

START_TEST(test_hash64)
{
	unsigned flips = 0;
	uint64_t h, h2;

	ck_assert_uint_eq(stats_hash64(12345), stats_hash64(12345));
	ck_assert_uint_ne(stats_hash64(0), 0);
	ck_assert_uint_ne(stats_hash64(0), stats_hash64(1));
	/* avalanche: one input bit flips about half of the output bits */
	for (uint64_t x = 0; x < 256; x++) {
		h = stats_hash64(x * 4096);
		for (int b = 0; b < 64; b++) {
			h2 = stats_hash64((x * 4096) ^ (UINT64_C(1) << b));
			flips += (unsigned)__builtin_popcountll(h ^ h2);
		}
	}
	ck_assert_msg(flips > 256 * 64 * 31 && flips < 256 * 64 * 33,
		      "mean flipped bits %g", flips / (256.0 * 64));
}
END_TEST

/* Every value once, the same order for the same seed, another for
 * another seed, and every position reached over many seeds. */
START_TEST(test_permutation)
{
	enum { N = 37 };
	uint32_t a[N], b[N];
	unsigned seen[N][N] = { { 0 } };
	struct stats_rng r1, r2;
	bool differ = false;

	stats_rng_seed(&r1, 11);
	stats_rng_seed(&r2, 11);
	stats_permutation(&r1, a, N);
	stats_permutation(&r2, b, N);
	ck_assert_mem_eq(a, b, sizeof(a));
	stats_rng_seed(&r2, 12);
	stats_permutation(&r2, b, N);
	for (unsigned i = 0; i < N; i++)
		differ |= a[i] != b[i];
	ck_assert(differ);
	for (unsigned s = 0; s < 2000; s++) {
		bool have[N] = { false };

		stats_rng_seed(&r1, s);
		stats_permutation(&r1, a, N);
		for (unsigned i = 0; i < N; i++) {
			ck_assert_uint_lt(a[i], N);
			ck_assert(!have[a[i]]);
			have[a[i]] = true;
			seen[i][a[i]]++;
		}
	}
	for (unsigned i = 0; i < N; i++)
		for (unsigned v = 0; v < N; v++)
			ck_assert_uint_gt(seen[i][v], 0);
	stats_permutation(&r1, a, 0);	/* nothing to do, nothing touched */
	stats_permutation(&r1, a, 1);
	ck_assert_uint_eq(a[0], 0);
}
END_TEST

START_TEST(test_util_helpers)
{
	char small[4];
	int fds[2];
	char got[8];

	ck_assert_uint_eq(util_round_up(0, 512), 0);
	ck_assert_uint_eq(util_round_up(1, 512), 512);
	ck_assert_uint_eq(util_round_up(512, 512), 512);
	ck_assert_uint_eq(util_round_up(UINT64_C(3) << 40 | 1, 4096),
			  (UINT64_C(3) << 40) + 4096);
	util_copy_str(small, sizeof(small), "abcdef");
	ck_assert_str_eq(small, "abc");
	util_copy_str(small, sizeof(small), "");
	ck_assert_str_eq(small, "");
	/* full loops: a short read only at end of file */
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(util_write_full(fds[1], "hello", 5), 0);
	close(fds[1]);
	ck_assert_int_eq(util_read_full(fds[0], got, sizeof(got)), 5);
	ck_assert_int_eq(memcmp(got, "hello", 5), 0);
	ck_assert_int_eq(util_read_full(fds[0], got, sizeof(got)), 0);
	close(fds[0]);
	ck_assert_int_eq(util_read_full(-1, got, 1), -EBADF);
	ck_assert_int_eq(util_pwrite_full(-1, got, 1, 0), -EBADF);
}
END_TEST

Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("robust");

	tcase_add_test(tc, test_quantile_type7);
	tcase_add_test(tc, test_median_min_max_mean);
	tcase_add_test(tc, test_trimmed_mean);
	tcase_add_test(tc, test_mad_sigma);
	tcase_add_test(tc, test_trimmed_sigma);
	tcase_add_test(tc, test_mad_sigma_normal);
	tcase_add_test(tc, test_sort_inplace);
	tcase_add_test(tc, test_percentile_ns);
	suite_add_tcase(s, tc);
	tc = tcase_create("rng");
	tcase_add_test(tc, test_rng_reference);
	tcase_add_test(tc, test_rng_deterministic);
	tcase_add_test(tc, test_rng_uniform_normal);
	tcase_add_test(tc, test_rng_below);
	tcase_add_test(tc, test_hash64);
	tcase_add_test(tc, test_permutation);
	suite_add_tcase(s, tc);
	tc = tcase_create("util");
	tcase_add_test(tc, test_util_helpers);
	suite_add_tcase(s, tc);
	return s;
}
