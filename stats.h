/* stats.h - robust statistics for timing samples.
 *
 * Timing noise on flash is skewed (interrupts, stalls, garbage collection),
 * so decisions use medians, low quantiles and the median absolute deviation
 * rather than means and standard deviations.  Functions that take an array
 * do not modify it (they sort a private copy) unless named *_inplace.
 */
#ifndef FLASHPROBE_STATS_H
#define FLASHPROBE_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Quantile q in [0,1] with linear interpolation between order statistics
 * (type 7, as R and numpy default).  n == 0 returns 0. */
double stats_quantile(const double *v, size_t n, double q);
double stats_median(const double *v, size_t n);
double stats_min(const double *v, size_t n);
double stats_max(const double *v, size_t n);
double stats_mean(const double *v, size_t n);
double stats_trimmed_mean(const double *v, size_t n, double trim);
/* The spread behind stats_trimmed_mean's error: that error is about this
 * over sqrt(n) (winsorized standard deviation over the share kept).  n < 2
 * returns 0. */
double stats_trimmed_sigma(const double *v, size_t n, double trim);

/* Median absolute deviation scaled by 1.4826, so it estimates the standard
 * deviation for normal data.  n < 2 returns 0. */
double stats_mad_sigma(const double *v, size_t n);

/* Standard error of the median of v, estimated as 1.2533 * sigma / sqrt(n)
 * with sigma from stats_mad_sigma (normal-theory efficiency of the
 * median).  n < 2 returns 0. */
double stats_median_se(const double *v, size_t n);

/* Sort in place, ascending. */
void stats_sort_inplace(double *v, size_t n);

/* Exact percentiles of latency samples in nanoseconds (nearest-rank
 * definition, as fio's completion latency percentiles): p in (0, 100]. */
uint64_t stats_percentile_ns(const uint64_t *sorted_ns, size_t n, double p);

/* Deterministic pseudo-random numbers (splitmix64): identical sequences for
 * identical seeds on every platform. */
struct stats_rng {
	uint64_t state;
};
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
double stats_rng_uniform(struct stats_rng *r);		/* [0, 1) */
double stats_rng_normal(struct stats_rng *r);		/* mean 0, sd 1 */
uint64_t stats_rng_below(struct stats_rng *r, uint64_t n);	/* [0, n) */
/* v[0..n) = a seeded random permutation of 0..n-1 (Fisher-Yates). */
void stats_permutation(struct stats_rng *r, uint32_t *v, size_t n);
/* Shuffle v[0..n) in place (Fisher-Yates), the draws of stats_permutation. */
void stats_shuffle(struct stats_rng *r, uint32_t *v, size_t n);

/* A 64-bit mix of x (stateless hash, for per-location noise). */
uint64_t stats_hash64(uint64_t x);

#endif
