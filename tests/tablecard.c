/* tablecard.c - a read-only test device replaying a flashbench -a table
 * (see tablecard.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "stats.h"
#include "tablecard.h"

#define US 1000ull
#define KIB 1024ull
#define MIB (1024ull * 1024ull)

/* shared/seeds/004_bb5590fe8f4d27f6.txt: "flashbench -a /dev/sdc
 * --blocksize=1024 --count=100", diffs as printed (1 GiB row and up
 * repeat the erase-block level). */
static const struct tablecard_row seed4_rows[] = {
	{ 2 * KIB, 39600 }, { 4 * KIB, 32100 }, { 8 * KIB, 71 * US },
	{ 16 * KIB, 88200 }, { 32 * KIB, 64200 }, { 64 * KIB, 57100 },
	{ 128 * KIB, 74300 }, { 256 * KIB, 60 * US }, { 512 * KIB, 59200 },
	{ 1 * MIB, 117 * US }, { 2 * MIB, 493 * US }, { 4 * MIB, 504 * US },
	{ 8 * MIB, 576 * US }, { 16 * MIB, 538 * US }, { 32 * MIB, 436 * US },
	{ 64 * MIB, 561 * US }, { 128 * MIB, 542 * US }, { 256 * MIB, 486 * US },
	{ 512 * MIB, 481 * US }, { 1024 * MIB, 505 * US },
};

const struct tablecard tablecard_seed4 = {
	.name = "seed4-table",
	.size_bytes = 3980394496ull,	/* 7774208 sectors */
	.base_ns = 2000 * US,
	/* the table's pre and post columns wander by about 2 % between
	 * rows (minimum of 100 tries, mean of 7 positions): location noise
	 * of that size, and per-read jitter of a USB2 reader */
	.jitter_pct = 3,
	.location_pct = 2,
	.stall_ppm = 500,
	.stall_ns = 1000 * US,
	.rows = seed4_rows,
	.nrows = sizeof(seed4_rows) / sizeof(seed4_rows[0]),
	.page_bytes = 8 * KIB,
	.erase_bytes = 2 * MIB,
};

struct tc_state {
	const struct tablecard *c;
	uint64_t now_ns;
	uint64_t seed;
	struct stats_rng rng;
};

/* The diff of the largest power of two that divides x. */
static uint64_t boundary_cost(const struct tablecard *c, uint64_t x)
{
	uint64_t cost = 0;

	for (size_t i = 0; i < c->nrows; i++)
		if (x % c->rows[i].align_bytes == 0)
			cost = c->rows[i].diff_ns;
	return cost;
}

/* Every boundary of at least the smallest row inside (off, off + len). */
static uint64_t crossing_cost(const struct tablecard *c, uint64_t off,
			      uint64_t len)
{
	uint64_t step = c->rows[0].align_bytes, worst = 0;

	for (uint64_t x = (off / step + 1) * step; x < off + len; x += step) {
		uint64_t cost = boundary_cost(c, x);

		worst = cost > worst ? cost : worst;
	}
	return worst;
}

/* A fixed factor in [-pct, +pct] % for a 64 KiB region, from the seed. */
static double location_factor(const struct tc_state *s, uint64_t off)
{
	uint64_t h = (off >> 16) * 0x9e3779b97f4a7c15ull ^ s->seed;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return ((double)(h % 20001) / 10000.0 - 1.0) * s->c->location_pct / 100.0;
}

static int tc_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct tc_state *s = priv;
	const struct tablecard *c = s->c;
	double t = (double)c->base_ns * (1.0 + location_factor(s, off));

	t += (double)crossing_cost(c, off, len);
	t *= 1.0 + (stats_rng_uniform(&s->rng) * 2.0 - 1.0) * c->jitter_pct / 100.0;
	if (stats_rng_below(&s->rng, 1000000) < c->stall_ppm)
		t += (double)c->stall_ns;
	s->now_ns += (uint64_t)t;
	memset(buf, 0, len);
	return 0;
}

static uint64_t tc_now(void *priv)
{
	return ((struct tc_state *)priv)->now_ns;
}

static void tc_close(void *priv)
{
	free(priv);
}

static const struct fp_dev_ops tc_ops = {
	.pread = tc_pread,
	.pwrite = NULL,
	.now_ns = tc_now,
	.close = tc_close,
};

int tablecard_open(const struct tablecard *c, uint64_t seed,
		   struct fp_dev **out)
{
	struct tc_state *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	s->c = c;
	s->seed = seed;
	stats_rng_seed(&s->rng, seed);
	*out = fp_dev_create(&tc_ops, s, FP_DEV_SIM, c->name, c->size_bytes, 512);
	if (*out == NULL) {
		free(s);
		return -ENOMEM;
	}
	return 0;
}
