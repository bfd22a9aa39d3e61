/* check_sim.c - the simulated card: read costs, the write state machine,
 * storage, noise, profiles and the profile parser.
 *
 * Expected costs are derived from the profile fields (read back with
 * sim_profile_of), never from hard-coded microseconds, so retuning a
 * profile does not break the tests; only the seed calibration test
 * compares against the measured card (seeds/004).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "devspec.h"
#include "safety.h"
#include "sim.h"
#include "tests.h"

#define KIB UINT64_C(1024)
#define MIB (1024 * KIB)
#define NOISE_OFF ",jitter=0,location=0,stall_ppm=0"
#define SCRATCH_BYTES (4 * MIB)
#define SIM_TEST_US UINT64_C(1000)
#define SIM_TEST_MS (1000 * SIM_TEST_US)

static uint8_t *scratch;	/* I/O buffer, one per test (checked fixture) */

static void setup(void)
{
	scratch = fp_dev_alloc_buf(SCRATCH_BYTES);
	ck_assert_ptr_nonnull(scratch);
}

static void teardown(void)
{
	free(scratch);
	scratch = NULL;
}

static struct fp_dev *open_spec(const char *spec)
{
	struct sim_profile p;
	struct fp_dev *d = NULL;
	char err[256] = "";
	int rc = sim_profile_parse(spec, &p, err, sizeof(err));

	ck_assert_msg(rc == 0, "parse '%s': %s", spec, err);
	ck_assert_int_eq(sim_open(&p, &d), 0);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, p.size_bytes), 0);
	return d;
}

static uint64_t rd(struct fp_dev *d, uint64_t off, uint64_t len)
{
	uint64_t ns = 0;
	int rc;

	ck_assert_uint_le(len, SCRATCH_BYTES);
	rc = fp_dev_read_timed(d, scratch, len, off, &ns);
	ck_assert_msg(rc == 0, "read %llu at %llu: %d", (unsigned long long)len,
		      (unsigned long long)off, rc);
	return ns;
}

static uint64_t wr(struct fp_dev *d, uint64_t off, uint64_t len, uint8_t byte)
{
	uint64_t ns = 0;
	int rc;

	ck_assert_uint_le(len, SCRATCH_BYTES);
	memset(scratch, byte, len);
	rc = fp_dev_write_timed(d, scratch, len, off, &ns);
	ck_assert_msg(rc == 0, "write %llu at %llu: %d", (unsigned long long)len,
		      (unsigned long long)off, rc);
	return ns;
}

/* The program unit the write model uses (see sim.h). */
static uint64_t unit_of(const struct sim_profile *p)
{
	uint64_t u = 16 * KIB;

	if (p->page_bytes)
		return p->page_bytes;
	if (p->raw_page_bytes)
		return p->raw_page_bytes;
	while (p->erase_bytes % u)
		u /= 2;
	return u;
}

/* Brute force over every sector boundary: an independent restatement of
 * the read model of flash-model.md section 3. */
static uint64_t expect_read_ns(const struct sim_profile *p, uint64_t off,
			       uint64_t len)
{
	uint64_t t = p->read_base_ns + p->read_page_ns * len / unit_of(p);

	for (uint64_t b = off + p->sector_bytes; b < off + len;
	     b += p->sector_bytes) {
		if (b % p->erase_bytes == 0)
			t += p->au_cross_ns;
		else if (p->subau_bytes && b % p->subau_bytes == 0)
			t += p->subau_cross_ns;
		else if (p->page_bytes && b % p->page_bytes == 0)
			t += p->page_cross_ns;
		else if (p->raw_page_bytes && b % p->raw_page_bytes == 0)
			t += p->raw_cross_ns;
	}
	return t;
}

/* ------------------------------------------------------------------ */
/* Reads */

START_TEST(test_read_cost_levels)
{
	struct fp_dev *d = open_spec("seed" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t k1 = p->read_base_ns + p->read_page_ns * KIB / p->page_bytes;
	uint64_t m2 = 2 * MIB;

	ck_assert_uint_eq(p->erase_bytes, m2);
	ck_assert_uint_eq(rd(d, KIB, KIB), k1);
	ck_assert_uint_eq(rd(d, 4 * KIB - 512, KIB), k1 + p->raw_cross_ns);
	ck_assert_uint_eq(rd(d, 8 * KIB - 512, KIB), k1 + p->page_cross_ns);
	ck_assert_uint_eq(rd(d, MIB - 512, KIB), k1 + p->subau_cross_ns);
	ck_assert_uint_eq(rd(d, m2 - 512, KIB), k1 + p->au_cross_ns);
	/* ending exactly on a boundary crosses nothing */
	ck_assert_uint_eq(rd(d, m2 - KIB, KIB), k1);
	ck_assert_uint_eq(rd(d, m2, KIB), k1);
	/* 32 KiB around an AU boundary: 1 AU, 2 page, 4 raw boundaries */
	ck_assert_uint_eq(rd(d, m2 - 16 * KIB, 32 * KIB),
			  p->read_base_ns + 4 * p->read_page_ns +
			  p->au_cross_ns + 2 * p->page_cross_ns +
			  4 * p->raw_cross_ns);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_read_cost_many_crossings)
{
	struct fp_dev *d = open_spec("readme" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	const uint64_t cases[][2] = {
		{ 0, 4 * MIB }, { 3 * MIB + 512, 3 * MIB }, { 4 * MIB - 12 * KIB, 40 * KIB },
		{ 16 * KIB - 1536, 20 * KIB + 1024 }, { 7 * MIB, 512 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_uint_eq(rd(d, cases[i][0], cases[i][1]),
				  expect_read_ns(p, cases[i][0], cases[i][1]));
	/* long reads cross many boundaries: more than base + transfer */
	ck_assert_uint_gt(rd(d, MIB, 2 * MIB), p->read_base_ns +
			  p->read_page_ns * 2 * MIB / p->page_bytes +
			  100 * p->subau_cross_ns);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_read_cost_np2)
{
	struct fp_dev *d = open_spec("np2-3m" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t k1 = expect_read_ns(p, 0, KIB);

	ck_assert_uint_eq(rd(d, 3 * MIB - 512, KIB), k1 + p->au_cross_ns);
	ck_assert_uint_eq(rd(d, 4 * MIB - 512, KIB), k1 + p->page_cross_ns);
	ck_assert_uint_eq(rd(d, 6 * MIB - 512, KIB), k1 + p->au_cross_ns);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_erased_reads_fast)
{
	struct fp_dev *d = open_spec("seed,fresh=1" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t k1 = expect_read_ns(p, 0, KIB), au = p->au_cross_ns;
	uint64_t m64 = 64 * MIB;

	ck_assert(p->erased_reads_fast);
	ck_assert_uint_eq(rd(d, m64 - 512, KIB), k1);
	ck_assert_uint_eq(rd(d, m64 + 8 * KIB - 512, KIB), k1);
	/* once one of the two AUs holds data, the penalty is back */
	wr(d, m64, 4 * KIB, 0x11);
	ck_assert_uint_eq(rd(d, m64 - 512, KIB), k1 + p->au_cross_ns);
	ck_assert_uint_eq(rd(d, m64 + 8 * KIB - 512, KIB), k1 + p->page_cross_ns);
	fp_dev_close(d);

	d = open_spec("seed,fresh=1,erased_fast=0" NOISE_OFF);
	ck_assert_uint_eq(rd(d, m64 - 512, KIB), k1 + au);
	fp_dev_close(d);
	d = open_spec("seed" NOISE_OFF);	/* a used card */
	ck_assert_uint_eq(rd(d, m64 - 512, KIB), k1 + au);
	fp_dev_close(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Storage */

static void fill_pattern(uint8_t *b, size_t n, unsigned salt)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + salt + i / 251);
}

START_TEST(test_data_roundtrip)
{
	struct fp_dev *d = open_spec("seed,size=64M");
	uint8_t *pat = malloc(16 * KIB);
	uint8_t zero[4096] = { 0 };

	ck_assert_ptr_nonnull(pat);
	/* never written reads as zeros */
	rd(d, 5 * MIB, 8 * KIB);
	ck_assert_mem_eq(scratch, zero, sizeof(zero));
	/* 512 bytes inside a 4 KiB block */
	fill_pattern(pat, 512, 1);
	memcpy(scratch, pat, 512);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 512, MIB + 1024, NULL), 0);
	rd(d, MIB, 4 * KIB);
	ck_assert_mem_eq(scratch, zero, 1024);
	ck_assert_mem_eq(scratch + 1024, pat, 512);
	ck_assert_mem_eq(scratch + 1536, zero, 4096 - 1536);
	/* across blocks, unaligned to them */
	fill_pattern(pat, 12 * KIB, 2);
	memcpy(scratch, pat, 12 * KIB);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 12 * KIB, 2 * MIB + 2 * KIB, NULL), 0);
	rd(d, 2 * MIB + 2 * KIB, 12 * KIB);
	ck_assert_mem_eq(scratch, pat, 12 * KIB);
	/* uniform blocks, then a partial overwrite of a uniform block */
	wr(d, 3 * MIB, 8 * KIB, 0xab);
	memset(scratch, 0x01, 512);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 512, 3 * MIB + 4 * KIB + 512, NULL), 0);
	rd(d, 3 * MIB, 8 * KIB);
	for (size_t i = 0; i < 8 * KIB; i++)
		ck_assert_uint_eq(scratch[i], i >= 4 * KIB + 512 && i < 4 * KIB + 1024 ? 0x01 : 0xab);
	/* zeros over data read back as zeros */
	wr(d, 2 * MIB, 16 * KIB, 0);
	rd(d, 2 * MIB, 16 * KIB);
	for (size_t i = 0; i < 16 * KIB; i++)
		ck_assert_uint_eq(scratch[i], 0);
	free(pat);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_memory_stays_small)
{
	struct fp_dev *d = open_spec("seed");
	uint64_t m0 = sim_mem_bytes(d), m1, m2;

	ck_assert_uint_eq(fp_dev_size_bytes(d), 1024 * MIB);
	ck_assert_uint_lt(m0, 256 * KIB);
	/* 256 MiB of flashbench's constant pattern */
	for (uint64_t off = 16 * MIB; off < 272 * MIB; off += 4 * MIB)
		wr(d, off, 4 * MIB, 0x5a);
	m1 = sim_mem_bytes(d);
	ck_assert_uint_lt(m1, m0 + MIB);
	/* one block of real data costs a block */
	fill_pattern(scratch, 4096, 3);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 4096, 20 * MIB, NULL), 0);
	m2 = sim_mem_bytes(d);
	ck_assert_uint_ge(m2, m1 + 4096);
	/* filled back to one byte with 512-byte writes: freed again */
	for (uint64_t o = 0; o < 4096; o += 512)
		wr(d, 20 * MIB + o, 512, 0x5a);
	ck_assert_uint_eq(sim_mem_bytes(d), m1);
	rd(d, 20 * MIB, 4096);
	for (size_t i = 0; i < 4096; i++)
		ck_assert_uint_eq(scratch[i], 0x5a);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_fill_random)
{
	struct fp_dev *a = open_spec("seed,size=64M,fresh=1" NOISE_OFF);
	struct fp_dev *b = open_spec("seed,size=64M" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(a);
	uint64_t t0 = fp_dev_now_ns(a), k1 = expect_read_ns(p, 0, KIB);
	uint8_t *first = malloc(8 * KIB);
	size_t zeros = 0;

	ck_assert_ptr_nonnull(first);
	ck_assert_uint_eq(rd(a, 4 * MIB - 512, KIB), k1);	/* erased: fast */
	ck_assert_int_eq(sim_fill_random(a, 99), 0);
	ck_assert_int_eq(sim_fill_random(b, 99), 0);
	ck_assert_uint_ge(sim_mem_bytes(a), 64 * MIB);
	ck_assert_uint_eq(fp_dev_now_ns(a), t0 + k1);	/* fill is free */
	rd(a, 10 * MIB, 8 * KIB);
	memcpy(first, scratch, 8 * KIB);
	for (size_t i = 0; i < 8 * KIB; i++)
		zeros += first[i] == 0;
	ck_assert_uint_lt(zeros, 256);
	rd(b, 10 * MIB, 8 * KIB);
	ck_assert_mem_eq(scratch, first, 8 * KIB);
	ck_assert_int_eq(sim_fill_random(b, 100), 0);
	rd(b, 10 * MIB, 8 * KIB);
	ck_assert(memcmp(scratch, first, 8 * KIB) != 0);
	/* every AU now holds data: the AU penalty applies */
	ck_assert_uint_eq(rd(a, 4 * MIB - 512, KIB), k1 + p->au_cross_ns);
	free(first);
	fp_dev_close(a);
	fp_dev_close(b);
}
END_TEST

START_TEST(test_bad_range)
{
	struct fp_dev *d = open_spec("seed,bad_start=4M,bad=1M");
	uint64_t m4 = 4 * MIB, t0;

	wr(d, m4 - 8 * KIB, 8 * KIB, 0x77);
	t0 = fp_dev_now_ns(d);
	memset(scratch, 0x22, 16 * KIB);
	ck_assert_int_eq(fp_dev_read_timed(d, scratch, 512, m4, NULL), -EIO);
	ck_assert_int_eq(fp_dev_read_timed(d, scratch, 16 * KIB, m4 - 8 * KIB, NULL), -EIO);
	ck_assert_int_eq(fp_dev_read_timed(d, scratch, 512, 5 * MIB - 512, NULL), -EIO);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 16 * KIB, m4 - 8 * KIB, NULL), -EIO);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 512, m4 + 512, NULL), -EIO);
	ck_assert_uint_eq(fp_dev_now_ns(d), t0);
	/* right next to the range works, and the failed write changed nothing */
	rd(d, m4 - 8 * KIB, 8 * KIB);
	for (size_t i = 0; i < 8 * KIB; i++)
		ck_assert_uint_eq(scratch[i], 0x77);
	rd(d, 5 * MIB, 512);
	fp_dev_close(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Writes: exact costs of the state machine, noise off */

START_TEST(test_write_cost_exact)
{
	struct fp_dev *d = open_spec("seed" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t P = p->page_bytes, E = p->erase_bytes;
	uint64_t ppa = E / P, base = p->write_base_ns, wp = p->write_page_ns;
	uint64_t a8 = 8 * E, a9 = 9 * E, a10 = 10 * E, a11 = 11 * E;

	ck_assert_uint_eq(p->open_au_linear, 1);
	ck_assert_uint_eq(p->open_au_random, 0);
	/* opening into an empty pool at page 0: no copies */
	ck_assert_uint_eq(wr(d, a8, 2 * P, 1), base + 2 * wp);
	/* in order: just the pages; a partial page is a whole program */
	ck_assert_uint_eq(wr(d, a8 + 2 * P, P / 2, 1), base + wp);
	ck_assert_uint_eq(wr(d, a8 + 2 * P + P / 2, P / 2, 1), base + wp);
	/* a forward gap copies the skipped valid pages */
	ck_assert_uint_eq(wr(d, a8 + 5 * P, P, 1), base + 2 * p->gc_page_ns + wp);
	/* another AU: close a8 (copy the ppa-6 pages not handled, erase),
	 * then copy [0, 8) in a9 before writing pages 8 and 9 */
	ck_assert_uint_eq(wr(d, a9 + 8 * P, 2 * P, 1),
			  (ppa - 6) * p->gc_page_ns + p->erase_ns +
			  8 * p->gc_page_ns + base + 2 * wp);
	/* in order again after a gap: pages 10..15 copied */
	ck_assert_uint_eq(wr(d, a9 + 16 * P, 2 * P, 1),
			  6 * p->gc_page_ns + base + 2 * wp);
	/* out of order without random quota: merge (the ppa - 18 pages not
	 * yet handled) and restart at page 0 */
	ck_assert_uint_eq(wr(d, a9, 2 * P, 1),
			  (ppa - 18) * p->gc_page_ns + p->erase_ns + base + 2 * wp);
	/* whole aligned AUs never copy, even when they force a close */
	ck_assert_uint_eq(wr(d, a10, E, 1),
			  (ppa - 2) * p->gc_page_ns + p->erase_ns + base + ppa * wp);
	ck_assert_uint_eq(wr(d, a11, E, 1), p->erase_ns + base + ppa * wp);
	ck_assert_uint_eq(wr(d, a10, E, 1), p->erase_ns + base + ppa * wp);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_write_cost_fresh_and_random)
{
	struct fp_dev *d = open_spec("seed,fresh=1" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t P = p->page_bytes, E = p->erase_bytes;
	uint64_t base = p->write_base_ns, wp = p->write_page_ns;

	/* erased AUs: gaps and closes copy nothing */
	ck_assert_uint_eq(wr(d, 8 * E + 8 * P, P, 1), base + wp);
	ck_assert_uint_eq(wr(d, 9 * E + 8 * P, P, 1), p->erase_ns + base + wp);
	fp_dev_close(d);

	d = open_spec("seed,open_random=1,random_write=5ms" NOISE_OFF);
	p = sim_profile_of(d);
	ck_assert_uint_eq(p->random_write_ns, 5000000);
	ck_assert_uint_eq(wr(d, 8 * E + 4 * P, P, 1), 4 * p->gc_page_ns + base + wp);
	/* out of order with quota: random mode, no copies */
	ck_assert_uint_eq(wr(d, 8 * E, P, 1), base + wp + p->random_write_ns);
	ck_assert_uint_eq(wr(d, 8 * E + 2 * P, P, 1), base + wp + p->random_write_ns);
	/* in order above the highest written byte: no random charge, no gap
	 * copy (page mapped) */
	ck_assert_uint_eq(wr(d, 8 * E + 9 * P, P, 1), base + wp);
	/* rewriting a completely written AU from its start closes it for an
	 * erase and stays linear: no random charge */
	wr(d, 12 * E, E, 1);
	ck_assert_uint_eq(wr(d, 12 * E, P, 1), p->erase_ns + base + wp);
	ck_assert_uint_eq(wr(d, 12 * E + P, P, 1), base + wp);
	fp_dev_close(d);

	/* restart_random: out of order like any other write, random mode
	 * from then on */
	d = open_spec("seed,open_random=1,random_write=5ms,restart_random=1" NOISE_OFF);
	p = sim_profile_of(d);
	wr(d, 12 * E, E, 1);
	ck_assert_uint_eq(wr(d, 12 * E, P, 1), base + wp + p->random_write_ns);
	ck_assert_uint_eq(wr(d, 12 * E + P, P, 1), base + wp + p->random_write_ns);
	fp_dev_close(d);

	/* page_wp: the second half of a page after its first half is out of
	 * order (the byte pointer above took it in order), a write at the
	 * next page is not, and neither is a page's start after a gap */
	d = open_spec("seed,open_random=1,random_write=5ms,page_wp=1" NOISE_OFF);
	p = sim_profile_of(d);
	ck_assert(p->page_wp);
	wr(d, 12 * E, E, 1);
	ck_assert_uint_eq(wr(d, 13 * E, P / 2, 1), p->erase_ns + base + wp);
	ck_assert_uint_eq(wr(d, 13 * E + P, P / 2, 1), base + wp);
	ck_assert_uint_eq(wr(d, 13 * E + P + P / 2, P / 2, 1),
			  base + wp + p->random_write_ns);
	fp_dev_close(d);
	d = open_spec("seed,page_wp=1" NOISE_OFF);
	p = sim_profile_of(d);
	wr(d, 12 * E, E, 1);
	ck_assert_uint_eq(wr(d, 13 * E, P / 2, 1), p->erase_ns + base + wp);
	ck_assert_uint_eq(wr(d, 13 * E + 3 * P, P, 1), 2 * p->gc_page_ns + base + wp);
	fp_dev_close(d);
}
END_TEST

/* flashbench --open-au in miniature: nr AUs, 12 AUs apart as flashbench
 * places them, chunk j of every AU in turn; mean time per write over
 * rounds 1.. (round 0 opens the AUs). */
static double open_au_mean_ns(const char *spec, unsigned nr, uint64_t len,
			      bool random_order)
{
	struct fp_dev *d = open_spec(spec);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t E = p->erase_bytes;
	uint64_t start = (p->fat_start_bytes + p->fat_bytes + 16 * MIB + E - 1) / E * E;
	uint64_t stride = E * 12;
	const unsigned rounds = E / len < 16 ? (unsigned)(E / len) : 16;
	uint64_t sum = 0, n = 0;

	if (start + (nr - 1) * stride + E > p->size_bytes)
		stride = E;	/* big AUs on a small card: adjacent */
	ck_assert_uint_le(start + (nr - 1) * stride + E, p->size_bytes);
	ck_assert_uint_ge(rounds, 4);
	for (unsigned j = 0; j < rounds; j++) {
		/* 5 is coprime to 4, 8 and 16: a permutation */
		unsigned c = random_order ? (j * 5 + 3) % rounds : j;

		for (unsigned i = 0; i < nr; i++) {
			uint64_t t = wr(d, start + i * stride + c * len, len, 0x5a);

			if (j > 0) {
				sum += t;
				n++;
			}
		}
	}
	fp_dev_close(d);
	return (double)sum / (double)n;
}

static const char *const openau_cards[] = {
	"seed", "sdhc-4m", "readme", "emmc", "legacy-128k", "np2-3m",
	"np2-12m", "usb-8m", "sandisk-24m", "nopattern",
};

/* N <= open: throughput flat as the chunk shrinks; N > open: every write
 * pays a GC, so time per write stays nearly constant and throughput falls
 * with the chunk. */
START_TEST(test_open_au_signature)
{
	const char *name = openau_cards[_i];
	const struct sim_profile *p = sim_profile_find(name);
	uint64_t P, big, small;
	unsigned open, flat_nr;
	double tb, ts, ratio;

	ck_assert_ptr_nonnull(p);
	P = unit_of(p);
	big = 8 * P;
	small = 2 * P;
	open = p->open_au_linear;
	flat_nr = open < 4 ? open : 4;

	tb = open_au_mean_ns(name, flat_nr, big, false);
	ts = open_au_mean_ns(name, flat_nr, small, false);
	ratio = ((double)small / ts) / ((double)big / tb);
	ck_assert_msg(ratio > 0.7, "%s nr=%u: throughput ratio %.2f, not flat",
		      name, flat_nr, ratio);
	/* and it is just the page programs: no GC in the mean */
	ck_assert_msg(ts < 1.3 * (double)(p->write_base_ns + 2 * p->write_page_ns),
		      "%s: %.0f ns per in-order write", name, ts);

	tb = open_au_mean_ns(name, open + 1, big, false);
	ts = open_au_mean_ns(name, open + 1, small, false);
	ratio = ((double)small / ts) / ((double)big / tb);
	ck_assert_msg(ratio < 0.45, "%s nr=%u: throughput ratio %.2f, no collapse",
		      name, open + 1, ratio);
	ck_assert_msg(ts > 0.6 * tb, "%s: not constant per write (%.0f vs %.0f)",
		      name, ts, tb);
	ck_assert_msg(ts > (double)(p->erase_bytes / P / 2) * (double)p->gc_page_ns,
		      "%s: %.0f ns per write is less than half an AU copy", name, ts);
}
END_TEST

/* The seed card's own numbers (seeds/004), flashbench's full pattern:
 * nr=1 flat near 12.4 MB/s, nr=2 halving per row to ~12 KB/s at 4 KiB. */
static double openau_row_bps(struct fp_dev *d, unsigned nr, uint64_t len)
{
	const uint64_t E = 2 * MIB, start = 16 * MIB;
	uint64_t sum = 0, n = 0;

	for (uint64_t j = 0; j < E / len; j++)
		for (unsigned i = 0; i < nr; i++) {
			sum += wr(d, start + i * 12 * E + j * len, len, 0x5a);
			n++;
		}
	return (double)(n * len) / ((double)sum / 1e9);
}

START_TEST(test_seed_calibration)
{
	struct fp_dev *d = open_spec("seed");
	double prev = 0, bps;

	for (uint64_t len = 2 * MIB; len >= 16 * KIB; len /= 2) {
		bps = openau_row_bps(d, 1, len);
		ck_assert_msg(bps > 10e6 && bps < 15e6, "nr=1 %llu: %.3g B/s",
			      (unsigned long long)len, bps);
	}
	for (uint64_t len = 2 * MIB; len >= 4 * KIB; len /= 2) {
		bps = openau_row_bps(d, 2, len);
		if (len <= 256 * KIB)
			ck_assert_msg(bps / prev > 0.4 && bps / prev < 0.6,
				      "nr=2 %llu: %.3g B/s after %.3g",
				      (unsigned long long)len, bps, prev);
		prev = bps;
	}
	ck_assert_msg(prev > 9e3 && prev < 16e3, "nr=2 4KiB: %.3g B/s", prev);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_random_in_au)
{
	const struct sim_profile *p = sim_profile_find("seed");
	uint64_t P = p->page_bytes;
	double lin = open_au_mean_ns("seed", 1, 2 * P, false);
	double coll = open_au_mean_ns("seed", 1, 2 * P, true);
	double ok = open_au_mean_ns("seed,open_random=1", 1, 2 * P, true);

	/* open_random = 0: random order inside one AU collapses */
	ck_assert_msg(coll > (double)(p->erase_bytes / P / 4) * (double)p->gc_page_ns,
		      "random with no random AU: %.0f ns per write", coll);
	ck_assert_msg(coll > 20 * lin, "%.0f vs linear %.0f", coll, lin);
	/* within the quota it does not */
	ck_assert_msg(ok < 3 * lin + (double)p->random_write_ns,
		      "random within quota: %.0f vs linear %.0f", ok, lin);
}
END_TEST

START_TEST(test_random_quota)
{
	const struct sim_profile *p = sim_profile_find("readme");
	uint64_t P = p->page_bytes;
	double one = open_au_mean_ns("readme", 1, 2 * P, true);
	double two = open_au_mean_ns("readme", 2, 2 * P, true);
	double two_q = open_au_mean_ns("readme,open_random=2", 2, 2 * P, true);

	ck_assert_uint_eq(p->open_au_linear, 2);
	ck_assert_uint_eq(p->open_au_random, 1);
	ck_assert_msg(one < 2 * (double)(p->write_base_ns + 2 * p->write_page_ns +
					 p->random_write_ns), "%.0f", one);
	/* the second AU cannot go random: it collapses */
	ck_assert_msg(two > 5 * one, "%.0f vs %.0f", two, one);
	ck_assert_msg(two_q < 2 * one, "%.0f vs %.0f", two_q, one);
}
END_TEST

START_TEST(test_fat_area)
{
	struct fp_dev *d = open_spec("seed" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t P = p->page_bytes, E = p->erase_bytes, fat = p->fat_start_bytes + E;
	uint64_t base = p->write_base_ns, wp = p->write_page_ns;
	uint64_t lin = 40 * E;

	ck_assert_uint_gt(p->fat_bytes, E);
	/* page mapped: no gap copies, out of order costs fat_random */
	ck_assert_uint_eq(wr(d, fat + 8 * P, 2 * P, 1),
			  base + 2 * wp * p->fat_page_pct / 100);
	ck_assert_uint_eq(wr(d, fat, 2 * P, 1),
			  base + 2 * wp * p->fat_page_pct / 100 + p->fat_random_ns);
	/* FAT writes do not touch the pool: the open AU stays open */
	wr(d, lin, P, 2);
	for (unsigned i = 1; i < 8; i++) {
		wr(d, fat + (16 - i) * P, P, 3);
		ck_assert_uint_eq(wr(d, lin + i * P, P, 2), base + wp);
	}
	fp_dev_close(d);
}
END_TEST

START_TEST(test_fat_fast_for_random)
{
	const struct sim_profile *p = sim_profile_find("seed");
	struct fp_dev *d = open_spec("seed");
	uint64_t E = p->erase_bytes, len = 4 * KIB;
	uint64_t fat_sum = 0, normal_sum = 0;

	for (unsigned j = 0; j < 64; j++) {
		uint64_t c = (j * 37 + 11) % 64;	/* a permutation */

		fat_sum += wr(d, p->fat_start_bytes + E + c * len, len, 1);
		normal_sum += wr(d, 40 * E + c * len, len, 1);
	}
	ck_assert_msg(fat_sum * 2 < normal_sum, "FAT %llu vs normal %llu",
		      (unsigned long long)fat_sum, (unsigned long long)normal_sum);
	fp_dev_close(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Noise */

static void mixed_run(const char *spec, uint64_t *t, size_t n)
{
	struct fp_dev *d = open_spec(spec);

	for (size_t i = 0; i < n; i++) {
		uint64_t off = (i * 7919 % 512) * 64 * KIB + 16 * MIB;

		t[i] = i % 3 ? rd(d, off + 3584, KIB) : wr(d, off, 16 * KIB, (uint8_t)i);
	}
	fp_dev_close(d);
}

START_TEST(test_determinism)
{
	uint64_t a[300], b[300], c[300];
	size_t same = 0;

	mixed_run("seed,stall_ppm=20000", a, 300);
	mixed_run("seed,stall_ppm=20000", b, 300);
	mixed_run("seed,stall_ppm=20000,seed=5", c, 300);
	ck_assert_mem_eq(a, b, sizeof(a));
	for (size_t i = 0; i < 300; i++)
		same += a[i] == c[i];
	ck_assert_uint_lt(same, 30);
}
END_TEST

START_TEST(test_jitter_bounds)
{
	struct fp_dev *d = open_spec("seed,jitter=10,location=0,stall_ppm=0");
	const struct sim_profile *p = sim_profile_of(d);
	double c = (double)expect_read_ns(p, 0, KIB), lo = 2 * c, hi = 0;

	for (unsigned i = 0; i < 2000; i++) {
		double t = (double)rd(d, 64 * MIB + KIB, KIB);

		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	ck_assert_msg(lo >= 0.9 * c - 1 && hi <= 1.1 * c + 1, "%.0f..%.0f", lo, hi);
	ck_assert_msg(lo < 0.92 * c && hi > 1.08 * c, "%.0f..%.0f", lo, hi);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_location_noise)
{
	struct fp_dev *d = open_spec("seed,jitter=0,location=20,stall_ppm=0");
	const struct sim_profile *p = sim_profile_of(d);
	double c = (double)expect_read_ns(p, 0, KIB), lo = 2 * c, hi = 0;

	for (unsigned i = 0; i < 400; i++) {
		uint64_t off = 64 * MIB + i * 12 * KIB + KIB;
		uint64_t t = rd(d, off, KIB);

		/* repeating gives the same time: it cannot be averaged away */
		ck_assert_uint_eq(rd(d, off, KIB), t);
		ck_assert_uint_eq(rd(d, off + 2 * KIB, KIB), t);	/* same block */
		lo = (double)t < lo ? (double)t : lo;
		hi = (double)t > hi ? (double)t : hi;
	}
	ck_assert_msg(lo >= 0.8 * c - 1 && hi <= 1.2 * c + 1, "%.0f..%.0f", lo, hi);
	ck_assert_msg(lo < 0.85 * c && hi > 1.15 * c, "%.0f..%.0f", lo, hi);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_stall_frequency)
{
	struct fp_dev *d = open_spec("seed,jitter=0,location=0,stall_ppm=50000,stall=10ms");
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t c = expect_read_ns(p, 0, KIB);
	unsigned stalls = 0;

	for (unsigned i = 0; i < 4000; i++) {
		uint64_t t = rd(d, 64 * MIB + KIB, KIB);

		ck_assert(t == c || t == c + p->stall_ns);
		stalls += t != c;
	}
	/* expect 200, sd ~14 */
	ck_assert_msg(stalls > 140 && stalls < 260, "%u stalls", stalls);
	fp_dev_close(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A worn-out card */

/* ro_after: the write that would pass the limit fails with EROFS and
 * stores nothing; from then on every write fails, reads still work. */
START_TEST(test_worn_read_only_switch)
{
	struct fp_dev *d = open_spec("seed,ro_after=64K" NOISE_OFF);
	uint64_t t0;

	wr(d, 8 * MIB, 32 * KIB, 0x11);
	wr(d, 8 * MIB + 32 * KIB, 16 * KIB, 0x22);
	memset(scratch, 0x33, 32 * KIB);
	t0 = fp_dev_now_ns(d);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 32 * KIB, 9 * MIB, NULL), -EROFS);
	/* 16 KiB would still have fitted: the card stays read-only */
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 512, 10 * MIB, NULL), -EROFS);
	ck_assert_uint_eq(fp_dev_now_ns(d), t0);
	rd(d, 9 * MIB, 32 * KIB);
	for (size_t i = 0; i < 32 * KIB; i++)
		ck_assert_uint_eq(scratch[i], 0);
	rd(d, 8 * MIB, 48 * KIB);
	ck_assert_uint_eq(scratch[0], 0x11);
	ck_assert_uint_eq(scratch[48 * KIB - 1], 0x22);
	fp_dev_close(d);
}
END_TEST

/* ro_silent: past ro_after the writes are acknowledged and dropped, the
 * old data stays (a worn card whose controller hides that it turned
 * read-only); earlier writes are kept. */
START_TEST(test_worn_read_only_silent)
{
	struct fp_dev *d = open_spec("seed,ro_after=64K,ro_silent=1" NOISE_OFF);

	wr(d, 8 * MIB, 48 * KIB, 0x11);
	memset(scratch, 0x33, 32 * KIB);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 32 * KIB, 8 * MIB, NULL), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 512, 10 * MIB, NULL), 0);
	rd(d, 8 * MIB, 48 * KIB);
	for (size_t i = 0; i < 48 * KIB; i++)
		ck_assert_uint_eq(scratch[i], 0x11);
	rd(d, 10 * MIB, 512);
	ck_assert_uint_eq(scratch[0], 0);
	fp_dev_close(d);
}
END_TEST

/* eio_write: program failures; the range stays readable and unchanged. */
START_TEST(test_worn_write_eio)
{
	struct fp_dev *d = open_spec("seed,eio_write=4M+64K" NOISE_OFF);

	wr(d, 4 * MIB - 4 * KIB, 4 * KIB, 0x44);
	memset(scratch, 0x55, 8 * KIB);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 8 * KIB, 4 * MIB - 4 * KIB, NULL), -EIO);
	ck_assert_int_eq(fp_dev_write_timed(d, scratch, 512, 4 * MIB + 63 * KIB, NULL), -EIO);
	rd(d, 4 * MIB - 4 * KIB, 8 * KIB);
	ck_assert_uint_eq(scratch[0], 0x44);
	ck_assert_uint_eq(scratch[4 * KIB], 0);
	wr(d, 4 * MIB + 64 * KIB, 4 * KIB, 0x66);
	fp_dev_close(d);
}
END_TEST

/* corrupt: acknowledged, stored with exactly one flipped bit in each
 * 512-byte sector inside the range, the same on every write; writes
 * next to it are stored as written. */
START_TEST(test_worn_corrupt_writes)
{
	struct fp_dev *d = open_spec("seed,corrupt=1M+8K" NOISE_OFF);
	uint8_t first[16 * KIB];

	wr(d, MIB - 4 * KIB, 16 * KIB, 0x5a);
	rd(d, MIB - 4 * KIB, 16 * KIB);
	memcpy(first, scratch, sizeof(first));
	for (uint64_t sec = 0; sec < 32; sec++) {
		unsigned flipped = 0;

		for (size_t i = 0; i < 512; i++)
			flipped += (unsigned)__builtin_popcount(scratch[sec * 512 + i] ^ 0x5a);
		ck_assert_uint_eq(flipped, sec >= 8 && sec < 24 ? 1 : 0);
	}
	wr(d, MIB - 4 * KIB, 16 * KIB, 0x5a);
	rd(d, MIB - 4 * KIB, 16 * KIB);
	ck_assert_mem_eq(scratch, first, sizeof(first));
	fp_dev_close(d);
}
END_TEST

/* slow: a read touching the range costs read_retry more. */
START_TEST(test_worn_slow_reads)
{
	struct fp_dev *d = open_spec("seed,slow=64M+1M,read_retry=7ms" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t c = expect_read_ns(p, 0, KIB);

	ck_assert_uint_eq(rd(d, 64 * MIB + KIB, KIB), c + 7 * SIM_TEST_MS);
	ck_assert_uint_eq(rd(d, 65 * MIB - 512, 512),
			  expect_read_ns(p, 0, 512) + 7 * SIM_TEST_MS);
	ck_assert_uint_eq(rd(d, 65 * MIB + KIB, KIB), c);
	ck_assert_uint_eq(rd(d, 63 * MIB + KIB, KIB), c);
	fp_dev_close(d);
}
END_TEST

/* wear: each write costs wear more per MiB written before it. */
START_TEST(test_worn_latency_grows)
{
	struct fp_dev *d = open_spec("seed,wear=100us" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t E = p->erase_bytes, whole = p->erase_ns + p->write_base_ns +
		     E / p->page_bytes * p->write_page_ns;

	/* whole aligned AUs (the seed card has one open AU: from the second
	 * on, each closes the one before for an erase) */
	ck_assert_uint_eq(wr(d, 100 * E, E, 1), whole - p->erase_ns);
	ck_assert_uint_eq(wr(d, 101 * E, E, 1), whole + 2 * 100 * SIM_TEST_US);
	ck_assert_uint_eq(wr(d, 102 * E, E, 1), whole + 4 * 100 * SIM_TEST_US);
	fp_dev_close(d);
}
END_TEST

/* write stalls: writes only, at about the rate asked; reads never. */
START_TEST(test_worn_write_stalls)
{
	struct fp_dev *d = open_spec("seed,write_stall_ppm=50000,write_stall=400ms" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t c = expect_read_ns(p, 0, KIB), w = wr(d, 8 * MIB, p->page_bytes, 1);
	unsigned stalls = 0;

	for (unsigned i = 1; i < 4000; i++) {
		uint64_t t = wr(d, 8 * MIB + (i % 256) * p->page_bytes, p->page_bytes, 1);

		ck_assert_uint_eq(rd(d, 64 * MIB + KIB, KIB), c);
		stalls += t >= w + p->write_stall_ns;
	}
	/* expect 200, sd ~14 */
	ck_assert_msg(stalls > 140 && stalls < 260, "%u stalls", stalls);
	fp_dev_close(d);
}
END_TEST

/* The seed card behind an 8 MiB buffer, and what a whole AU costs there:
 * absorbed (fast) and at the flash (whole, closing the one open AU). */
static struct fp_dev *open_wbuf_seed(uint64_t *fast, uint64_t *whole)
{
	struct fp_dev *d = open_spec("seed,wbuf=8MiB,wbuf_write=50us" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t E = p->erase_bytes;

	*fast = E / 4096 * p->wbuf_write_ns;
	*whole = p->erase_ns + p->write_base_ns + E / p->page_bytes * p->write_page_ns;
	return d;
}

/* A write buffer (wbuf=): whole AUs on the one-open-AU seed card cost
 * wbuf_write per 4 KiB while the buffer has room, then exactly what the
 * flash charges; in between a few fit in part.  The data is stored as
 * without the buffer. */
START_TEST(test_wbuf_fast_then_slow)
{
	uint64_t fast, whole;
	struct fp_dev *d = open_wbuf_seed(&fast, &whole);
	uint64_t E = sim_profile_of(d)->erase_bytes;
	unsigned nfast = 0, npart = 0, nslow = 0;

	ck_assert_uint_lt(fast, whole / 4);
	for (unsigned i = 0; i < 16; i++) {
		uint64_t t = wr(d, (100 + i) * E, E, (uint8_t)(i + 1));

		if (i > 0 && t == whole) {
			nslow++;
		} else if (t == fast) {
			ck_assert_uint_eq(npart + nslow, 0);
			nfast++;
		} else {
			ck_assert_msg(t > fast && t < whole, "write %u: %llu ns", i,
				      (unsigned long long)t);
			ck_assert_uint_eq(nslow, 0);
			npart++;
		}
	}
	/* 8 MiB absorbed while the flash drains about a sixth as fast: 4-5
	 * whole 2 MiB AUs, a few that fit in part (what drained meanwhile),
	 * then the flash's speed */
	ck_assert_uint_ge(nfast, 4);
	ck_assert_uint_le(nfast + npart, 10);
	ck_assert_uint_ge(nslow, 6);
	for (unsigned i = 0; i < 16; i++) {
		rd(d, (100 + i) * E + 4096, 4096);
		for (unsigned k = 0; k < 4096; k++)
			ck_assert_uint_eq(scratch[k], i + 1);
	}
	fp_dev_close(d);
}
END_TEST

/* The buffer drains at the flash's cost while the host reads: a short
 * read leaves it almost full (the next whole AU fits only in part), a
 * read longer than the owed flash time empties it (fast again). */
START_TEST(test_wbuf_drains_on_reads)
{
	uint64_t fast, whole;
	struct fp_dev *d = open_wbuf_seed(&fast, &whole);
	uint64_t E = sim_profile_of(d)->erase_bytes;
	uint64_t t, idle = 0;
	unsigned i = 0;

	while (wr(d, (100 + i) * E, E, 1) != whole)	/* until full */
		ck_assert_uint_lt(++i, 12);
	while (idle < whole / 2)
		idle += rd(d, 300 * E, 64 * KIB);
	t = wr(d, 200 * E, E, 1);
	ck_assert_msg(t > fast && t < whole, "after a short read: %llu ns",
		      (unsigned long long)t);
	/* the buffer owes at most 8 MiB of whole-AU writes */
	for (idle = 0; idle < (8 * MIB / E + 1) * whole;)
		idle += rd(d, 300 * E, SCRATCH_BYTES);
	ck_assert_uint_eq(wr(d, 201 * E, E, 1), fast);
	fp_dev_close(d);
}
END_TEST

/* The keys parse, and the flash state machine runs behind the buffer:
 * small writes to alternating AUs are absorbed, and once the buffer is
 * full they cost the collapse (one AU copy) again. */
START_TEST(test_wbuf_flash_behind)
{
	struct fp_dev *d = open_spec("seed,wbuf=1MiB,wbuf_write=20us" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t E = p->erase_bytes, P = p->page_bytes;
	uint64_t first = 0, last = 0;

	ck_assert_uint_eq(p->wbuf_bytes, MIB);
	ck_assert_uint_eq(p->wbuf_write_ns, 20 * SIM_TEST_US);
	for (unsigned i = 0; i < 400; i++) {
		uint64_t t = wr(d, (100 + i % 2) * E + (i / 2) * P, P, 1);

		if (i == 1)
			first = t;
		last = t;
	}
	ck_assert_uint_eq(first, (P + 4095) / 4096 * p->wbuf_write_ns);
	/* the collapse: the other AU's valid pages copied and erased */
	ck_assert_uint_gt(last, (E / P / 2) * p->gc_page_ns);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_worn_parse)
{
	struct sim_profile p;
	char err[256] = "";

	ck_assert_int_eq(sim_profile_parse(
		"sdhc-4m,eio_write=1M+4K,corrupt=2M+8K,corrupt=3M+1K,slow=4M+1M,"
		"read_retry=3ms,ro_after=100M,wear=20us,write_stall_ppm=10,"
		"write_stall=1.5s", &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.eio_write.n, 1);
	ck_assert_uint_eq(p.eio_write.r[0].start_bytes, MIB);
	ck_assert_uint_eq(p.eio_write.r[0].bytes, 4 * KIB);
	ck_assert_uint_eq(p.corrupt.n, 2);
	ck_assert_uint_eq(p.corrupt.r[1].start_bytes, 3 * MIB);
	ck_assert_uint_eq(p.slow.r[0].bytes, MIB);
	ck_assert_uint_eq(p.read_retry_ns, 3 * SIM_TEST_MS);
	ck_assert_uint_eq(p.ro_after_bytes, 100 * MIB);
	ck_assert_uint_eq(p.wear_ns, 20 * SIM_TEST_US);
	ck_assert_uint_eq(p.write_stall_ppm, 10);
	ck_assert_uint_eq(p.write_stall_ns, 1500 * SIM_TEST_MS);
	ck_assert_int_eq(sim_profile_parse("sdhc-4m,slow=4M+1M", &p, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "slow ranges need read_retry (the extra time of a read there)");
	ck_assert_int_eq(sim_profile_parse("sdhc-4m,write_stall_ppm=1000001", &p, err,
					   sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "write_stall_ppm must be at most 1000000 (got 1000001)");
	ck_assert_int_eq(sim_profile_parse("sdhc-4m,corrupt=1023M+2M", &p, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "corrupt range 1 is empty or passes the end of the device");
	ck_assert_int_eq(sim_profile_parse("sdhc-4m,eio_write=5M", &p, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "bad value '5M' for 'eio_write'");
	ck_assert_int_eq(sim_profile_parse("sdhc-4m,ro_after=lots", &p, err, sizeof(err)), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Profiles */

static size_t profile_count(void)
{
	size_t n = 0;

	while (sim_profiles[n].name[0])
		n++;
	return n;
}

START_TEST(test_profile_builtin)
{
	const struct sim_profile *p = &sim_profiles[_i];
	const struct sim_profile *q;
	struct fp_dev *d = NULL;
	char err[256] = "", path[64];

	ck_assert_msg(sim_profile_validate(p, err, sizeof(err)) == 0, "%s: %s",
		      p->name, err);
	ck_assert_msg(p->description && strlen(p->description) > 10, "%s", p->name);
	ck_assert_ptr_eq(sim_profile_find(p->name), p);
	for (size_t j = 0; j < profile_count(); j++)
		ck_assert(j == (size_t)_i || strcmp(sim_profiles[j].name, p->name));
	/* the page_bytes convention of sim.h */
	if (p->raw_page_bytes)
		ck_assert_msg(p->raw_cross_ns * 100 <= p->read_base_ns, "%s", p->name);
	if (p->page_bytes && !p->ambiguous)
		ck_assert_msg(p->page_cross_ns > 3 * p->raw_cross_ns &&
			      p->page_cross_ns * 50 >= p->read_base_ns, "%s", p->name);
	if (p->page_bytes == 0)
		ck_assert_uint_eq(p->page_cross_ns, 0);
	if (!p->ambiguous)
		ck_assert_msg(p->au_cross_ns > p->page_cross_ns, "%s", p->name);

	ck_assert_int_eq(sim_open(p, &d), 0);
	snprintf(path, sizeof(path), "sim:%s", p->name);
	ck_assert_str_eq(fp_dev_path(d), path);
	ck_assert_int_eq(fp_dev_kind(d), FP_DEV_SIM);
	ck_assert_uint_eq(fp_dev_size_bytes(d), p->size_bytes);
	ck_assert_uint_eq(fp_dev_sector_bytes(d), p->sector_bytes);
	q = sim_profile_of(d);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_ne(q, p);	/* a copy */
	ck_assert_str_eq(q->name, p->name);
	ck_assert_uint_lt(sim_mem_bytes(d), MIB);
	rd(d, 0, p->sector_bytes);
	rd(d, p->size_bytes - p->sector_bytes, p->sector_bytes);
	rd(d, p->erase_bytes - p->sector_bytes, 2 * p->sector_bytes);
	ck_assert_int_eq(fp_dev_read_timed(d, scratch, p->sector_bytes, p->size_bytes, NULL), -ENOSPC);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_profile_table)
{
	const char *const need[] = {
		"seed", "sdhc-4m", "readme", "emmc", "legacy-128k", "np2-3m",
		"np2-6m", "np2-12m", "flat", "nopattern", "usb-8m",
	};
	const struct sim_profile *p;
	bool sector4k = false;

	ck_assert_uint_ge(profile_count(), 10);
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		ck_assert_msg(sim_profile_find(need[i]) != NULL, "%s", need[i]);
	for (size_t i = 0; i < profile_count(); i++)
		sector4k |= sim_profiles[i].sector_bytes == 4096;
	ck_assert(sector4k);
	ck_assert_ptr_null(sim_profile_find("nosuch"));
	ck_assert_ptr_null(sim_profile_find(""));
	ck_assert_ptr_null(sim_profile_find(NULL));
	/* the seed card's truth */
	p = sim_profile_find("seed");
	ck_assert_uint_eq(p->erase_bytes, 2 * MIB);
	ck_assert_uint_eq(p->page_bytes, 8 * KIB);
	ck_assert_uint_eq(p->open_au_linear, 1);
	ck_assert_uint_eq(p->open_au_random, 0);
	ck_assert_uint_eq(p->fat_bytes, 8 * MIB);
	ck_assert(sim_profile_find("nopattern")->ambiguous);
	ck_assert(!sim_profile_find("flat")->ambiguous);
	ck_assert_uint_eq(sim_profile_find("usb-8m")->page_bytes, 0);
}
END_TEST

START_TEST(test_sector_4096)
{
	struct fp_dev *d = open_spec("emmc-4k" NOISE_OFF);
	const struct sim_profile *p = sim_profile_of(d);

	ck_assert_uint_eq(fp_dev_sector_bytes(d), 4096);
	ck_assert_int_eq(fp_dev_read_timed(d, scratch, 512, 0, NULL), -EINVAL);
	ck_assert_uint_eq(rd(d, p->erase_bytes - 4096, 8192),
			  expect_read_ns(p, p->erase_bytes - 4096, 8192));
	ck_assert_uint_eq(rd(d, p->erase_bytes - 4096, 8192),
			  p->read_base_ns + p->read_page_ns * 8192 / p->page_bytes +
			  p->au_cross_ns);
	fp_dev_close(d);
}
END_TEST

static int other_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	(void)priv;
	memset(buf, 0, len);
	(void)off;
	return 0;
}

static uint64_t other_now(void *priv)
{
	(void)priv;
	return 0;
}

START_TEST(test_not_a_sim)
{
	static const struct fp_dev_ops other_ops = {
		.pread = other_pread, .now_ns = other_now,
	};
	struct fp_dev *d = open_spec("seed");
	struct fp_dev *other;

	/* another backend is not a simulated card, and cannot reach the
	 * card's state (fp_dev_priv_if() gives it only to sim.c) */
	ck_assert_ptr_null(fp_dev_priv_if(d, &other_ops));
	other = fp_dev_create(&other_ops, NULL, FP_DEV_FILE, "x", MIB, 512);
	ck_assert_ptr_nonnull(other);
	ck_assert_ptr_null(sim_profile_of(other));
	ck_assert_uint_eq(sim_mem_bytes(other), 0);
	ck_assert_int_eq(sim_fill_random(other, 1), -EINVAL);
	ck_assert_ptr_null(sim_profile_of(NULL));
	ck_assert(!devspec_dev_is_sim(other));
	ck_assert(devspec_dev_is_sim(d));
	/* a wrapper over the card is asked through to it */
	fp_dev_set_inner(other, d);
	ck_assert(devspec_dev_is_sim(other));
	ck_assert_ptr_eq(sim_profile_of(other), sim_profile_of(d));
	fp_dev_close(other);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_open_through_dev)
{
	struct fp_dev *d = NULL;
	char err[256] = "";

	ck_assert_int_eq(devspec_open("sim:readme,jitter=0,seed=9", FP_OPEN_WRITE, &d,
				     err, sizeof(err)), 0);
	ck_assert_str_eq(sim_profile_of(d)->name, "readme");
	ck_assert_uint_eq(sim_profile_of(d)->jitter_pct, 0);
	ck_assert_uint_eq(sim_profile_of(d)->seed, 9);
	fp_dev_close(d);
	ck_assert_int_eq(devspec_open("sim:bogus", FP_OPEN_READ, &d, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "unknown simulated card 'bogus' (see flashprobe list-sims)");
}
END_TEST

/* Wrapped in the interruptible device (as --destructive and reading
 * tests are) the card is still recognised: every report says the same
 * about the same device.  Changing the card through a wrapper is not
 * allowed (a journal would miss it). */
START_TEST(test_profile_through_wrappers)
{
	struct fp_dev *d = NULL, *w1 = NULL, *w2 = NULL;
	char err[256] = "";

	ck_assert_int_eq(devspec_open("sim:emmc", FP_OPEN_WRITE, &d, err,
				     sizeof(err)), 0);
	ck_assert_int_eq(safety_wrap_interruptible(d, &w1), 0);
	ck_assert_int_eq(safety_wrap_interruptible(w1, &w2), 0);
	ck_assert_ptr_eq(fp_dev_inner(w2), w1);
	ck_assert_ptr_eq(fp_dev_inner(w1), d);
	ck_assert_ptr_null(fp_dev_inner(d));
	ck_assert_ptr_nonnull(sim_profile_of(w2));
	ck_assert_str_eq(sim_profile_of(w2)->name, "emmc");
	ck_assert_int_eq(sim_fill_random(w2, 1), -EINVAL);
	ck_assert_int_eq(sim_fill_random(d, 1), 0);
	fp_dev_close(w2);
	fp_dev_close(w1);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_open_rejects_invalid)
{
	struct sim_profile p = *sim_profile_find("seed");
	struct fp_dev *d = NULL;

	p.page_bytes = 3 * KIB;
	ck_assert_int_eq(sim_open(&p, &d), -EINVAL);
	ck_assert_int_eq(sim_open(NULL, &d), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Parser */

START_TEST(test_parse_overrides)
{
	struct sim_profile p;
	char err[256] = "";

	ck_assert_int_eq(sim_profile_parse(
		"seed,size=2G,erase=4MiB,page=16K,raw_page=0,subau=0,jitter=0,"
		"read_base=1.5ms,page_cross=10us,au_cross=250000,stall=1s,"
		"gc_page=2ms,erase_time=3.25ms,fresh=yes,erased_fast=off,"
		"open_linear=4,open_random=2,fat=4M,fat_start=4M,seed=42,"
		"location=7,stall_ppm=12,fat_page_pct=150,sector=4096,"
		"bad_start=1G,bad=4K,write_base=7,write_page=8us,random_write=9ms,"
		"fat_random=11ms,read_page=13ns,raw_cross=1us,subau_cross=2us,"
		"jitter=3", &p, err, sizeof(err)), 0);
	ck_assert_str_eq(p.name, "seed");
	ck_assert_uint_eq(p.size_bytes, 2048 * MIB);
	ck_assert_uint_eq(p.erase_bytes, 4 * MIB);
	ck_assert_uint_eq(p.page_bytes, 16 * KIB);
	ck_assert_uint_eq(p.raw_page_bytes, 0);
	ck_assert_uint_eq(p.subau_bytes, 0);
	ck_assert_uint_eq(p.jitter_pct, 3);	/* the last one wins */
	ck_assert_uint_eq(p.read_base_ns, 1500000);
	ck_assert_uint_eq(p.page_cross_ns, 10000);
	ck_assert_uint_eq(p.au_cross_ns, 250000);
	ck_assert_uint_eq(p.stall_ns, 1000000000);
	ck_assert_uint_eq(p.gc_page_ns, 2000000);
	ck_assert_uint_eq(p.erase_ns, 3250000);
	ck_assert(p.fresh);
	ck_assert(!p.erased_reads_fast);
	ck_assert_uint_eq(p.open_au_linear, 4);
	ck_assert_uint_eq(p.open_au_random, 2);
	ck_assert_uint_eq(p.fat_bytes, 4 * MIB);
	ck_assert_uint_eq(p.fat_start_bytes, 4 * MIB);
	ck_assert_uint_eq(p.seed, 42);
	ck_assert_uint_eq(p.location_pct, 7);
	ck_assert_uint_eq(p.stall_ppm, 12);
	ck_assert_uint_eq(p.fat_page_pct, 150);
	ck_assert_uint_eq(p.sector_bytes, 4096);
	ck_assert_uint_eq(p.bad_start_bytes, 1024 * MIB);
	ck_assert_uint_eq(p.bad_bytes, 4 * KIB);
	ck_assert_uint_eq(p.write_base_ns, 7);
	ck_assert_uint_eq(p.write_page_ns, 8000);
	ck_assert_uint_eq(p.random_write_ns, 9000000);
	ck_assert_uint_eq(p.fat_random_ns, 11000000);
	ck_assert_uint_eq(p.read_page_ns, 13);
	ck_assert_uint_eq(p.raw_cross_ns, 1000);
	ck_assert_uint_eq(p.subau_cross_ns, 2000);
	/* a plain name; the "sim:" prefix is the device argument's, which
	 * devspec takes off (and only devspec knows) */
	ck_assert_int_eq(sim_profile_parse("emmc", &p, err, sizeof(err)), 0);
	ck_assert_uint_eq(p.erase_bytes, sim_profile_find("emmc")->erase_bytes);
	ck_assert_int_eq(sim_profile_parse(devspec_sim_body("sim:flat"), &p, err,
					   sizeof(err)), 0);
	ck_assert_str_eq(p.name, "flat");
	ck_assert_int_eq(sim_profile_parse("sim:flat", &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(devspec_sim_body("/dev/sdb"));
	ck_assert_ptr_null(devspec_sim_body(NULL));
	ck_assert(devspec_is_sim("sim:"));
	ck_assert(!devspec_is_sim("./sim:flat"));
}
END_TEST

static const struct {
	const char *spec;
	const char *msg;	/* exact message, or NULL: any nonempty one */
} parse_errors[] = {
	{ "nosuch", "unknown simulated card 'nosuch' (see flashprobe list-sims)" },
	{ "seedx,jitter=1", "unknown simulated card 'seedx' (see flashprobe list-sims)" },
	{ "", "missing simulated card name (see flashprobe list-sims)" },
	{ ",jitter=1", "missing simulated card name (see flashprobe list-sims)" },
	{ "seed,foo=1", "unknown key 'foo' in 'sim:seed,foo=1'" },
	{ "seed,jitter=1,Jitter=2", "unknown key 'Jitter' in 'sim:seed,jitter=1,Jitter=2'" },
	{ "seed,=3", "unknown key '' in 'sim:seed,=3'" },
	{ "seed,jitter", "missing value for 'jitter' in 'sim:seed,jitter'" },
	{ "seed,,jitter=1", "empty option in 'sim:seed,,jitter=1'" },
	{ "seed,", "empty option in 'sim:seed,'" },
	{ "seed,jitter=x", "bad value 'x' for 'jitter'" },
	{ "seed,jitter=", "bad value '' for 'jitter'" },
	{ "seed,jitter=-1", "bad value '-1' for 'jitter'" },
	{ "seed,jitter=99999999999", "bad value '99999999999' for 'jitter'" },
	{ "seed,page=4Q", "bad value '4Q' for 'page'" },
	{ "seed,size=1.1G", "bad value '1.1G' for 'size'" },	/* not whole bytes */
	{ "seed,sector=8G", "bad value '8G' for 'sector'" },
	{ "seed,read_base=5xs", "bad value '5xs' for 'read_base'" },
	{ "seed,read_base=1.5ns", "bad value '1.5ns' for 'read_base'" },
	{ "seed,read_base=.5ms", "bad value '.5ms' for 'read_base'" },
	{ "seed,read_base=2.ms", "bad value '2.ms' for 'read_base'" },
	{ "seed,read_base=99999999999s", "bad value '99999999999s' for 'read_base'" },
	{ "seed,fresh=2", "bad value '2' for 'fresh'" },
	{ "seed,seed=0x10", "bad value '0x10' for 'seed'" },
	{ "seed,jitter=60", "jitter must be at most 50 (got 60)" },
	{ "seed,location=51", "location must be at most 50 (got 51)" },
	{ "seed,open_random=2", "open_random (2) must not exceed open_linear (1)" },
	{ "seed,page=3K", NULL },
	{ "seed,erase=3M", NULL },
};

START_TEST(test_parse_errors)
{
	struct sim_profile p, before;
	char err[256];

	memset(&p, 0xee, sizeof(p));
	before = p;
	strcpy(err, "");
	ck_assert_msg(sim_profile_parse(parse_errors[_i].spec, &p, err,
					sizeof(err)) == -EINVAL,
		      "'%s' accepted", parse_errors[_i].spec);
	if (parse_errors[_i].msg)
		ck_assert_str_eq(err, parse_errors[_i].msg);
	ck_assert_msg(strlen(err) > 10 && !strchr(err, '\n'), "'%s'", err);
	ck_assert_mem_eq(&p, &before, sizeof(p));	/* untouched */
}
END_TEST

START_TEST(test_parse_long_value)
{
	struct sim_profile p;
	char spec[200], err[256] = "";

	snprintf(spec, sizeof(spec), "seed,jitter=%0100d", 1);
	ck_assert_int_eq(sim_profile_parse(spec, &p, err, sizeof(err)), -EINVAL);
	ck_assert(strncmp(err, "bad value '000", 14) == 0);
	/* no room for the message is fine too */
	ck_assert_int_eq(sim_profile_parse("nosuch", &p, NULL, 0), -EINVAL);
	ck_assert_int_eq(sim_profile_parse("nosuch", &p, err, 8), -EINVAL);
	ck_assert_uint_eq(strlen(err), 7);
}
END_TEST

/* One broken field per row, checked by sim_profile_validate. */
static void break_profile(struct sim_profile *p, int which)
{
	switch (which) {
	case 0: p->size_bytes = 0; break;
	case 1: p->sector_bytes = 1000; break;
	case 2: p->sector_bytes = 256; break;
	case 3: p->erase_bytes = 0; break;
	case 4: p->size_bytes += 2 * MIB + 512; break;	/* erase does not divide */
	case 5: p->raw_page_bytes = 3 * KIB; break;
	case 6: p->raw_page_bytes = p->page_bytes; break;
	case 7: p->subau_bytes = 24 * KIB; break;
	case 8: p->subau_bytes = p->erase_bytes; break;
	case 9: p->page_bytes = 4 * MIB; break;
	case 10: p->fat_start_bytes = MIB; break;
	case 11: p->fat_bytes = 3 * MIB; break;
	case 12: p->fat_start_bytes = p->size_bytes; break;
	case 13: p->open_au_linear = 0; p->open_au_random = 0; break;
	case 14: p->open_au_random = 2; break;
	case 15: p->jitter_pct = 51; break;
	case 16: p->location_pct = 90; break;
	case 17: p->stall_ppm = 1000001; break;
	case 18: p->bad_start_bytes = p->size_bytes - 512; p->bad_bytes = 1024; break;
	case 19: p->sector_bytes = 4096; p->raw_page_bytes = 2 * KIB; break;
	case 20: p->open_au_linear = 1000; break;
	case 21: p->fat_page_pct = 5000; break;
	case 22: p->erase_bytes = p->size_bytes = 8 * 1024 * MIB; p->page_bytes = 512;
		 p->raw_page_bytes = 0; p->subau_bytes = 0; break;	/* 2^24 pages per AU */
	case 23: p->size_bytes = 64 * 1024 * 1024 * MIB; break;	/* 2^25 AUs */
	}
}

START_TEST(test_validate_rules)
{
	struct sim_profile p = *sim_profile_find("seed");
	char err[256] = "";

	ck_assert_int_eq(sim_profile_validate(&p, err, sizeof(err)), 0);
	break_profile(&p, _i);
	ck_assert_msg(sim_profile_validate(&p, err, sizeof(err)) == -EINVAL,
		      "rule %d not enforced", _i);
	ck_assert_msg(strlen(err) > 10 && !strchr(err, '\n'), "'%s'", err);
	ck_assert_int_eq(sim_profile_validate(NULL, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_validate_accepts_edges)
{
	struct sim_profile p = *sim_profile_find("seed");
	char err[256] = "";

	p.page_bytes = 0;	/* page not observable: raw level remains */
	p.page_cross_ns = 0;
	ck_assert_msg(sim_profile_validate(&p, err, sizeof(err)) == 0, "%s", err);
	p = *sim_profile_find("seed");
	p.jitter_pct = 50;
	p.location_pct = 50;
	p.open_au_random = 1;
	p.fat_bytes = 0;
	p.bad_start_bytes = p.size_bytes - 512;
	p.bad_bytes = 512;
	ck_assert_msg(sim_profile_validate(&p, err, sizeof(err)) == 0, "%s", err);
}
END_TEST

Suite *sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *reads = tcase_create("reads");
	TCase *store = tcase_create("storage");
	TCase *writes = tcase_create("writes");
	TCase *noise = tcase_create("noise");
	TCase *worn = tcase_create("worn");
	TCase *prof = tcase_create("profiles");
	TCase *parse = tcase_create("parse");

	tcase_add_checked_fixture(reads, setup, teardown);
	tcase_add_test(reads, test_read_cost_levels);
	tcase_add_test(reads, test_read_cost_many_crossings);
	tcase_add_test(reads, test_read_cost_np2);
	tcase_add_test(reads, test_erased_reads_fast);
	suite_add_tcase(s, reads);

	tcase_add_checked_fixture(store, setup, teardown);
	tcase_set_timeout(store, 20);	/* 256 MiB of writes under ASan */
	tcase_add_test(store, test_data_roundtrip);
	tcase_add_test(store, test_memory_stays_small);
	tcase_add_test(store, test_fill_random);
	tcase_add_test(store, test_bad_range);
	suite_add_tcase(s, store);

	tcase_add_checked_fixture(writes, setup, teardown);
	tcase_set_timeout(writes, 20);
	tcase_add_test(writes, test_write_cost_exact);
	tcase_add_test(writes, test_write_cost_fresh_and_random);
	tcase_add_loop_test(writes, test_open_au_signature, 0,
			    (int)(sizeof(openau_cards) / sizeof(openau_cards[0])));
	tcase_add_test(writes, test_seed_calibration);
	tcase_add_test(writes, test_random_in_au);
	tcase_add_test(writes, test_random_quota);
	tcase_add_test(writes, test_fat_area);
	tcase_add_test(writes, test_fat_fast_for_random);
	suite_add_tcase(s, writes);

	tcase_add_checked_fixture(noise, setup, teardown);
	tcase_add_test(noise, test_determinism);
	tcase_add_test(noise, test_jitter_bounds);
	tcase_add_test(noise, test_location_noise);
	tcase_add_test(noise, test_stall_frequency);
	suite_add_tcase(s, noise);

	tcase_add_checked_fixture(worn, setup, teardown);
	tcase_add_test(worn, test_worn_read_only_switch);
	tcase_add_test(worn, test_worn_read_only_silent);
	tcase_add_test(worn, test_worn_write_eio);
	tcase_add_test(worn, test_worn_corrupt_writes);
	tcase_add_test(worn, test_worn_slow_reads);
	tcase_add_test(worn, test_worn_latency_grows);
	tcase_add_test(worn, test_worn_write_stalls);
	tcase_add_test(worn, test_worn_parse);
	tcase_add_test(worn, test_wbuf_fast_then_slow);
	tcase_add_test(worn, test_wbuf_drains_on_reads);
	tcase_add_test(worn, test_wbuf_flash_behind);
	suite_add_tcase(s, worn);

	tcase_add_checked_fixture(prof, setup, teardown);
	tcase_set_timeout(prof, 20);	/* fills a 1 GiB card, slow under ASan */
	tcase_add_loop_test(prof, test_profile_builtin, 0, (int)profile_count());
	tcase_add_test(prof, test_profile_table);
	tcase_add_test(prof, test_sector_4096);
	tcase_add_test(prof, test_not_a_sim);
	tcase_add_test(prof, test_open_through_dev);
	tcase_add_test(prof, test_profile_through_wrappers);
	tcase_add_test(prof, test_open_rejects_invalid);
	suite_add_tcase(s, prof);

	tcase_add_test(parse, test_parse_overrides);
	tcase_add_loop_test(parse, test_parse_errors, 0,
			    (int)(sizeof(parse_errors) / sizeof(parse_errors[0])));
	tcase_add_test(parse, test_parse_long_value);
	tcase_add_loop_test(parse, test_validate_rules, 0, 24);
	tcase_add_test(parse, test_validate_accepts_edges);
	suite_add_tcase(s, parse);
	return s;
}
