/* stats.c - robust statistics and deterministic random numbers.
 *
 * Functions taking const arrays sort a private copy.  If that copy cannot be
 * allocated they return NAN, which fails every comparison a caller makes,
 * rather than a plausible but wrong number.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Normal-theory constants: sigma = 1.4826 * MAD, and the median's standard
 * error is sqrt(pi/2) = 1.2533 times the mean's. */
#define STATS_MAD_TO_SIGMA 1.4826
#define STATS_MEDIAN_SE_FACTOR 1.2533

/* Ascending; NaN sorts last so it cannot split the finite values. */
static int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	return (x > y) - (x < y);
}

void stats_sort_inplace(double *v, size_t n)
{
	if (v != NULL && n > 1)
		qsort(v, n, sizeof(*v), stats_cmp_double);
}

static double *stats_sorted_copy(const double *v, size_t n)
{
	double *c = malloc(n * sizeof(*c));

	if (c == NULL)
		return NULL;
	memcpy(c, v, n * sizeof(*c));
	stats_sort_inplace(c, n);
	return c;
}

/* Type 7 on sorted data: h = (n-1)q, interpolate between floor and ceil. */
static double stats_quantile_sorted(const double *s, size_t n, double q)
{
	double h, frac;
	size_t lo;

	if (!(q > 0.0))		/* also catches NaN */
		q = 0.0;
	if (q > 1.0)
		q = 1.0;
	h = (double)(n - 1) * q;
	lo = (size_t)floor(h);
	if (lo >= n - 1)
		return s[n - 1];
	frac = h - (double)lo;
	return s[lo] + frac * (s[lo + 1] - s[lo]);
}

double stats_quantile(const double *v, size_t n, double q)
{
	double *s, r;

	if (v == NULL || n == 0)
		return 0.0;
	s = stats_sorted_copy(v, n);
	if (s == NULL)
		return NAN;
	r = stats_quantile_sorted(s, n, q);
	free(s);
	return r;
}

double stats_median(const double *v, size_t n)
{
	return stats_quantile(v, n, 0.5);
}

double stats_min(const double *v, size_t n)
{
	double m;

	if (v == NULL || n == 0)
		return 0.0;
	m = v[0];
	for (size_t i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

double stats_max(const double *v, size_t n)
{
	double m;

	if (v == NULL || n == 0)
		return 0.0;
	m = v[0];
	for (size_t i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* The mean of the values left after dropping the share trim (0 to 0.5)
 * of them at each end: nearly as precise as the mean on well-behaved
 * data, and unmoved by a few wild values. */
double stats_trimmed_mean(const double *v, size_t n, double trim)
{
	size_t cut = (size_t)(trim * (double)n);
	double *s, r;

	if (v == NULL || n == 0)
		return 0.0;
	if (2 * cut >= n)
		return stats_median(v, n);
	s = stats_sorted_copy(v, n);
	if (s == NULL)
		return NAN;
	r = stats_mean(s + cut, n - 2 * cut);
	free(s);
	return r;
}

/* The winsorized standard deviation (the share trim at each end set to
 * the nearest value kept) over the share kept: the trimmed mean's
 * standard error is this over sqrt(n) (Tukey and McLaughlin).  Unlike the
 * MAD it does not collapse when the values split into two groups of
 * nearly equal size (half of them far from the rest): the trimmed mean
 * then lies between the groups and is as uncertain as their distance. */
double stats_trimmed_sigma(const double *v, size_t n, double trim)
{
	size_t cut = (size_t)(trim * (double)n), kept;
	double *s, mean, ss = 0.0;

	if (v == NULL || n < 2 || 2 * cut >= n)
		return 0.0;
	s = stats_sorted_copy(v, n);
	if (s == NULL)
		return NAN;
	for (size_t i = 0; i < cut; i++) {
		s[i] = s[cut];
		s[n - 1 - i] = s[n - 1 - cut];
	}
	mean = stats_mean(s, n);
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - mean) * (s[i] - mean);
	free(s);
	kept = n - 2 * cut;
	return sqrt(ss / (double)(n - 1)) * (double)n / (double)kept;
}

double stats_mean(const double *v, size_t n)
{
	double sum = 0.0;

	if (v == NULL || n == 0)
		return 0.0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

double stats_mad_sigma(const double *v, size_t n)
{
	double *dev, med, mad;

	if (v == NULL || n < 2)
		return 0.0;
	med = stats_median(v, n);
	dev = malloc(n * sizeof(*dev));
	if (dev == NULL || isnan(med)) {
		free(dev);
		return NAN;
	}
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(v[i] - med);
	stats_sort_inplace(dev, n);
	mad = stats_quantile_sorted(dev, n, 0.5);
	free(dev);
	return STATS_MAD_TO_SIGMA * mad;
}

double stats_median_se(const double *v, size_t n)
{
	if (v == NULL || n < 2)
		return 0.0;
	return STATS_MEDIAN_SE_FACTOR * stats_mad_sigma(v, n) / sqrt((double)n);
}

uint64_t stats_percentile_ns(const uint64_t *sorted_ns, size_t n, double p)
{
	double x;
	size_t rank;

	if (sorted_ns == NULL || n == 0)
		return 0;
	if (!(p > 0.0))
		return sorted_ns[0];
	if (p >= 100.0)
		return sorted_ns[n - 1];
	/* Nearest rank: the smallest rank covering p percent.  The relative
	 * epsilon keeps p = 99.9 of n = 1000 at rank 999 although 99.9 is
	 * not exact in binary. */
	x = p / 100.0 * (double)n;
	rank = (size_t)ceil(x - x * 1e-12);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted_ns[rank - 1];
}

void stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	r->state = seed;
}

/* The splitmix64 output function (Steele, Lea, Flood 2014). */
static uint64_t stats_splitmix_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

#define STATS_GOLDEN_GAMMA UINT64_C(0x9e3779b97f4a7c15)

uint64_t stats_rng_next(struct stats_rng *r)
{
	r->state += STATS_GOLDEN_GAMMA;
	return stats_splitmix_mix(r->state);
}

double stats_rng_uniform(struct stats_rng *r)
{
	/* 53 random bits fill the double's mantissa exactly. */
	return (double)(stats_rng_next(r) >> 11) * 0x1.0p-53;
}

double stats_rng_normal(struct stats_rng *r)
{
	double x, y, s;

	/* Marsaglia's polar method: only sqrt() and log(), no trigonometry,
	 * and the second value is dropped so the state alone determines the
	 * sequence. */
	do {
		x = 2.0 * stats_rng_uniform(r) - 1.0;
		y = 2.0 * stats_rng_uniform(r) - 1.0;
		s = x * x + y * y;
	} while (s >= 1.0 || s == 0.0);
	return x * sqrt(-2.0 * log(s) / s);
}

uint64_t stats_rng_below(struct stats_rng *r, uint64_t n)
{
	uint64_t threshold, x;

	if (n == 0)
		return 0;	/* empty range: nothing to draw */
	/* Reject the 2^64 mod n lowest values so every residue is equally
	 * likely. */
	threshold = (0 - n) % n;
	do
		x = stats_rng_next(r);
	while (x < threshold);
	return x % n;
}

void stats_permutation(struct stats_rng *r, uint32_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	stats_shuffle(r, v, n);
}

void stats_shuffle(struct stats_rng *r, uint32_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)stats_rng_below(r, i);
		uint32_t t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

uint64_t stats_hash64(uint64_t x)
{
	/* Offset first so that 0 does not map to 0. */
	return stats_splitmix_mix(x + STATS_GOLDEN_GAMMA);
}
