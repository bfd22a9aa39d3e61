/* check_capacity.c - the fake-capacity check: simulated fake cards (wrap,
 * limbo, write cache, EIO and lost ranges), the analyzer on genuine, fake
 * and damaged cards of many sizes, the plan, data preservation through
 * the journal, and the binary on simulated cards, an image file and a
 * loop device. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capacity.h"
#include "dev.h"
#include "devspec.h"
#include "errmsg.h"
#include "journal.h"
#include "journal_format.h"
#include "jsonv.h"
#include "report_capacity.h"
#include "sim.h"
#include "stats.h"
#include "testutil.h"
#include "tests.h"

#define KIB (UINT64_C(1) << 10)
#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)
#define QUIET ",jitter=0,stall_ppm=0,location=0"

static struct fp_dev *open_spec(const char *spec)
{
	struct fp_dev *d = NULL;
	char err[256] = "";

	ck_assert_msg(devspec_open(spec, FP_OPEN_WRITE, &d, err, sizeof(err)) == 0,
		      "%s: %s", spec, err);
	return d;
}

/* A card whose whole surface may be written. */
static struct fp_dev *open_writable(const char *spec)
{
	struct fp_dev *d = open_spec(spec);

	ck_assert_int_eq(fp_dev_set_write_area(d, 0, fp_dev_size_bytes(d)), 0);
	return d;
}

static void put_block(struct fp_dev *d, uint64_t off, uint8_t fill)
{
	uint8_t *b = fp_dev_alloc_buf(4096);

	ck_assert_ptr_nonnull(b);
	memset(b, fill, 4096);
	ck_assert_int_eq(fp_dev_write_timed(d, b, 4096, off, NULL), 0);
	free(b);
}

/* The byte a 4 KiB block at off reads as (uniform blocks only). */
static int get_block(struct fp_dev *d, uint64_t off)
{
	uint8_t *b = fp_dev_alloc_buf(4096);
	int v, rc;

	ck_assert_ptr_nonnull(b);
	rc = fp_dev_read_timed(d, b, 4096, off, NULL);
	v = rc ? rc : b[0];
	for (size_t i = 1; rc == 0 && i < 4096; i++)
		ck_assert_msg(b[i] == b[0], "block at %llu is not uniform",
			      (unsigned long long)off);
	free(b);
	return v;
}

/* ==== the simulator's fake cards ==== */

START_TEST(test_sim_wrap)
{
	struct fp_dev *d = open_writable("sim:sdhc-4m,size=256M,fake=wrap,real=64M" QUIET);

	put_block(d, 8 * MIB, 0x11);
	ck_assert_int_eq(get_block(d, 72 * MIB), 0x11);	/* 8M + 64M */
	ck_assert_int_eq(get_block(d, 200 * MIB), 0x11);	/* 8M + 3 x 64M */
	put_block(d, 136 * MIB, 0x22);			/* lands on 8M */
	ck_assert_int_eq(get_block(d, 8 * MIB), 0x22);
	fp_dev_close(d);
	/* real below the period: the rest of each period loses its writes */
	d = open_writable("sim:sdhc-4m,size=256M,fake=wrap,real=40M,period=64M" QUIET);
	put_block(d, 48 * MIB, 0x33);
	ck_assert_int_eq(get_block(d, 48 * MIB), 0);
	put_block(d, 100 * MIB, 0x44);			/* 36M: real */
	ck_assert_int_eq(get_block(d, 36 * MIB), 0x44);
	fp_dev_close(d);
	/* mapped on first write: past the period zeros until written */
	d = open_writable("sim:sdhc-4m,size=256M,fake=wrap,real=64M,map_on_write=1" QUIET);
	put_block(d, 8 * MIB, 0x11);
	ck_assert_int_eq(get_block(d, 8 * MIB), 0x11);
	ck_assert_int_eq(get_block(d, 72 * MIB), 0);
	put_block(d, 136 * MIB, 0x22);			/* lands on 8M */
	ck_assert_int_eq(get_block(d, 8 * MIB), 0x22);
	ck_assert_int_eq(get_block(d, 136 * MIB), 0x22);
	ck_assert_int_eq(get_block(d, 72 * MIB), 0);
	put_block(d, 72 * MIB, 0x33);
	ck_assert_int_eq(get_block(d, 136 * MIB), 0x33);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_sim_limbo_and_cache)
{
	struct fp_dev *d = open_writable("sim:sdhc-4m,size=256M,fake=limbo,real=100M" QUIET);

	put_block(d, 99 * MIB, 0x55);
	put_block(d, 100 * MIB, 0x66);
	ck_assert_int_eq(get_block(d, 99 * MIB), 0x55);
	ck_assert_int_eq(get_block(d, 100 * MIB), 0);
	fp_dev_close(d);

	/* a 1 MiB cache serves the lost block until 1 MiB of other writes
	 * pushed it out */
	d = open_writable("sim:sdhc-4m,size=256M,fake=limbo,real=100M,cache=1M" QUIET);
	put_block(d, 200 * MIB, 0x77);
	ck_assert_int_eq(get_block(d, 200 * MIB), 0x77);
	for (uint64_t off = 0; off < MIB - 4 * KIB; off += 4 * KIB)
		put_block(d, 10 * MIB + off, 0x01);
	ck_assert_int_eq(get_block(d, 200 * MIB), 0x77);	/* still cached */
	put_block(d, 20 * MIB, 0x02);
	put_block(d, 21 * MIB, 0x02);
	ck_assert_int_eq(get_block(d, 200 * MIB), 0);		/* evicted */
	ck_assert_int_eq(get_block(d, 10 * MIB), 0x01);	/* real: kept */
	fp_dev_close(d);
}
END_TEST

/* f3probe's cache: direct-mapped (slot = 4 KiB block mod slots), only
 * for the writes past the real flash; strict serves a block only from
 * its own entry, loose serves whatever its slot holds. */
START_TEST(test_sim_direct_cache)
{
	struct fp_dev *d = open_writable("sim:sdhc-4m,size=256M,fake=limbo,real=100M,"
					 "cache=1M,cache_direct=1,cache_strict=1" QUIET);

	put_block(d, 200 * MIB, 0x77);
	for (uint64_t off = 0; off < 4 * MIB; off += 4 * KIB)
		put_block(d, 10 * MIB + off, 0x01);	/* real flash: not cached */
	ck_assert_int_eq(get_block(d, 200 * MIB), 0x77);
	put_block(d, 200 * MIB + 4 * KIB, 0x55);	/* another slot */
	ck_assert_int_eq(get_block(d, 200 * MIB), 0x77);
	put_block(d, 201 * MIB, 0x66);			/* the same slot */
	ck_assert_int_eq(get_block(d, 200 * MIB), 0);	/* strict: evicted */
	ck_assert_int_eq(get_block(d, 201 * MIB), 0x66);
	ck_assert_int_eq(get_block(d, 10 * MIB), 0x01);
	fp_dev_close(d);

	d = open_writable("sim:sdhc-4m,size=256M,fake=limbo,real=100M,"
			  "cache=1M,cache_direct=1" QUIET);
	put_block(d, 201 * MIB, 0x66);
	ck_assert_int_eq(get_block(d, 200 * MIB), 0x66);	/* loose: the slot's */
	ck_assert_int_eq(get_block(d, 200 * MIB + 4 * KIB), 0);	/* never written */
	fp_dev_close(d);
}
END_TEST

START_TEST(test_sim_bad_ranges)
{
	struct fp_dev *d = open_writable("sim:sdhc-4m,eio=8M+4K,eio=700M+1M,lost=16M+1M" QUIET);

	ck_assert_int_eq(get_block(d, 8 * MIB), -EIO);
	ck_assert_int_eq(get_block(d, 8 * MIB + 4 * KIB), 0);
	ck_assert_int_eq(get_block(d, 700 * MIB + 512 * KIB), -EIO);
	put_block(d, 16 * MIB, 0x99);			/* dropped */
	ck_assert_int_eq(get_block(d, 16 * MIB), 0);
	put_block(d, 17 * MIB, 0x99);
	ck_assert_int_eq(get_block(d, 17 * MIB), 0x99);
	fp_dev_close(d);
}
END_TEST

static const struct {
	const char *spec;
	const char *reason;
} bad_specs[] = {
	{ "sdhc-4m,fake=wrap,real=0", "real (0) must be" },
	{ "sdhc-4m,fake=limbo,real=1G", "real (1073741824) must be" },
	{ "sdhc-4m,fake=limbo,real=1000", "real (1000) must be" },
	{ "sdhc-4m,fake=wrap,real=600M", "at most half" },
	{ "sdhc-4m,fake=wrap,real=64M,period=100000000", "multiple of 4KiB" },
	{ "sdhc-4m,fake=wrap,real=64M,period=32M", "from real up to below size" },
	{ "sdhc-4m,fake=bogus", "bad value 'bogus' for 'fake'" },
	{ "sdhc-4m,fake=limbo,real=64M,map_on_write=1", "map_on_write needs fake=wrap" },
	{ "sdhc-4m,fake=wrap,real=64M,cache_logical=1", "cache_logical needs cache=SIZE" },
	{ "sdhc-4m,eio=5M", "bad value '5M' for 'eio'" },
	{ "sdhc-4m,lost=1M+0", "lost range 1 is empty" },
	{ "sdhc-4m,eio=1023M+2M", "eio range 1 is empty or passes" },
	{ "sdhc-4m,eio=1M+1,eio=2M+1,eio=3M+1,eio=4M+1,eio=5M+1", "at most 4 eio ranges" },
	{ "sdhc-4m,cache=5000", "cache must be a multiple of 4KiB" },
	{ "sdhc-4m,cache_direct=1", "cache_direct needs cache=SIZE" },
	{ "sdhc-4m,cache=1M,cache_strict=1", "cache_strict needs cache_direct" },
};

START_TEST(test_sim_fake_parse_errors)
{
	struct sim_profile p;
	char err[256] = "";

	ck_assert_int_eq(sim_profile_parse(bad_specs[_i].spec, &p, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, bad_specs[_i].reason), "%s: '%s'", bad_specs[_i].spec, err);
}
END_TEST

START_TEST(test_sim_fake_truth)
{
	char buf[80];
	struct sim_profile p;
	char err[256];

	ck_assert_str_eq(sim_capacity_truth(sim_profile_find("fake-wrap"), buf, sizeof(buf)),
			 "wrap 8GiB/8GiB");
	ck_assert_str_eq(sim_capacity_truth(sim_profile_find("fake-limbo"), buf, sizeof(buf)),
			 "limbo 8GiB");
	ck_assert_str_eq(sim_capacity_truth(sim_profile_find("fake-cache"), buf, sizeof(buf)),
			 "limbo 4GiB +cache 16MiB");
	ck_assert_str_eq(sim_capacity_truth(sim_profile_find("seed"), buf, sizeof(buf)),
			 "genuine");
	ck_assert_int_eq(sim_profile_parse("seed,fake=wrap,real=100M", &p, err, sizeof(err)), 0);
	ck_assert_str_eq(sim_capacity_truth(&p, buf, sizeof(buf)), "wrap 100MiB/128MiB");
}
END_TEST

/* A filled fake card stores its real flash only, and a 64 GiB card stays
 * small in memory. */
START_TEST(test_sim_fake_memory)
{
	struct fp_dev *d = open_spec("sim:sdhc-4m,size=256M,fake=limbo,real=32M" QUIET);

	ck_assert_int_eq(sim_fill_random(d, 5), 0);
	ck_assert_uint_lt(sim_mem_bytes(d), 40 * MIB);
	ck_assert_uint_gt(sim_mem_bytes(d), 32 * MIB);
	fp_dev_close(d);
	d = open_spec("sim:fake-wrap");
	ck_assert_uint_lt(sim_mem_bytes(d), 4 * MIB);
	fp_dev_close(d);
}
END_TEST

/* ==== the analyzer ==== */

struct card_case {
	const char *spec;
	enum capacity_verdict verdict;
	uint64_t real;			/* truth: real flash, or the first bad byte */
	uint64_t period;		/* wraparound */
	bool second_pass;		/* a cache larger than the round flush
					 * hides lost writes from it */
};

static const struct card_case cards[] = {
	{ "sim:sdhc-4m", CAPACITY_GENUINE, GIB, 0, false },
	{ "sim:sdhc-4m,size=64G", CAPACITY_GENUINE, 64 * GIB, 0, false },
	{ "sim:emmc-4k,size=2G", CAPACITY_GENUINE, 2 * GIB, 0, false },
	{ "sim:np2-3m", CAPACITY_GENUINE, 1536 * MIB, 0, false },
	{ "sim:fake-wrap", CAPACITY_WRAPAROUND, 8 * GIB, 8 * GIB, false },
	{ "sim:fake-limbo", CAPACITY_LIMBO, 8 * GIB, 0, false },
	{ "sim:fake-cache", CAPACITY_LIMBO, 4 * GIB, 0, false },
	{ "sim:sdhc-4m,fake=wrap,real=256M", CAPACITY_WRAPAROUND, 256 * MIB, 256 * MIB, false },
	/* real flash not a multiple of the 4 MiB erase block */
	{ "sim:sdhc-4m,fake=wrap,real=102M", CAPACITY_WRAPAROUND, 102 * MIB, 128 * MIB, false },
	{ "sim:sdhc-4m,fake=limbo,real=301M", CAPACITY_LIMBO, 301 * MIB, 0, false },
	/* ... nor of the 1 MiB search grid */
	{ "sim:sdhc-4m,fake=limbo,real=315097088", CAPACITY_LIMBO, 315097088, 0, false },
	{ "sim:sdhc-4m,fake=wrap,real=200000K,period=256M", CAPACITY_WRAPAROUND,
	  200000 * KIB, 256 * MIB, false },
	/* just below the reported size */
	{ "sim:sdhc-4m,fake=limbo,real=1023M", CAPACITY_LIMBO, 1023 * MIB, 0, false },
	{ "sim:sdhc-4m,fake=limbo,real=1073737728", CAPACITY_LIMBO, 1073737728, 0, false },
	{ "sim:sdhc-4m,fake=wrap,real=512M", CAPACITY_WRAPAROUND, 512 * MIB, 512 * MIB, false },
	/* tiny: inside the flush area, or below one grid step */
	{ "sim:sdhc-4m,fake=wrap,real=4M", CAPACITY_WRAPAROUND, 4 * MIB, 4 * MIB, false },
	{ "sim:sdhc-4m,fake=limbo,real=3M", CAPACITY_LIMBO, 3 * MIB, 0, false },
	{ "sim:sdhc-4m,fake=limbo,real=512K", CAPACITY_LIMBO, 512 * KIB, 0, false },
	{ "sim:sdhc-4m,fake=wrap,real=6M,period=16M", CAPACITY_WRAPAROUND, 6 * MIB, 16 * MIB, false },
	/* an FTL mapping on first write (unwritten addresses past the
	 * period read zeros): the period seen before the first flush */
	{ "sim:sdhc-4m,fake=wrap,real=256M,map_on_write=1", CAPACITY_WRAPAROUND, 256 * MIB,
	  256 * MIB, false },
	{ "sim:sdhc-4m,fake=wrap,real=200000K,period=256M,map_on_write=1", CAPACITY_WRAPAROUND,
	  200000 * KIB, 256 * MIB, false },
	{ "sim:sdhc-4m,fake=wrap,real=24M,cache=8M,map_on_write=1", CAPACITY_WRAPAROUND,
	  24 * MIB, 32 * MIB, false },
	/* write caches that serve recent writes */
	{ "sim:sdhc-4m,fake=wrap,real=24M,cache=8M", CAPACITY_WRAPAROUND, 24 * MIB, 32 * MIB, false },
	{ "sim:sdhc-4m,fake=limbo,real=300M,cache=16M", CAPACITY_LIMBO, 300 * MIB, 0, false },
	{ "sim:usb-8m,fake=wrap,real=128M,cache=32M", CAPACITY_WRAPAROUND, 128 * MIB, 128 * MIB, false },
	/* caches larger than the round flush: the deep check finds them and
	 * a second pass runs; f3probe's model (direct-mapped, only for the
	 * writes past the real flash) and a FIFO of every write */
	{ "sim:fake-cache,cache=64M", CAPACITY_LIMBO, 4 * GIB, 0, true },
	{ "sim:fake-limbo,cache=96M,cache_direct=1,cache_strict=1", CAPACITY_LIMBO, 8 * GIB, 0,
	  true },
	{ "sim:fake-cache,size=64000M,real=7248M,cache=64M,cache_direct=1,cache_strict=1",
	  CAPACITY_LIMBO, 7248 * MIB, 0, true },
	{ "sim:sdhc-4m,fake=limbo,real=600M,cache=48M", CAPACITY_LIMBO, 600 * MIB, 0, true },
	/* loose: a position past the real flash reads its slot's last block */
	{ "sim:fake-limbo,cache=96M,cache_direct=1", CAPACITY_LIMBO, 8 * GIB, 0, true },
	/* a cache in front of the wrap folding (test_cache_before_folding) */
	{ "sim:sdhc-4m,fake=wrap,real=256M,cache=64M,cache_logical=1", CAPACITY_WRAPAROUND,
	  256 * MIB, 256 * MIB, true },
	/* limbo between the real end and the wrap period, hidden by a cache */
	{ "sim:sdhc-4m,fake=wrap,real=200000K,period=256M,cache=64M", CAPACITY_WRAPAROUND,
	  200000 * KIB, 256 * MIB, true },
	{ "sim:sdhc-4m,fake=limbo,real=300M,cache=16M,cache_direct=1", CAPACITY_LIMBO,
	  300 * MIB, 0, false },
	/* damaged: start, middle, end; EIO and silently lost writes */
	{ "sim:sdhc-4m,eio=0+1M", CAPACITY_DAMAGED, 0, 0, false },
	{ "sim:sdhc-4m,eio=512M+64M", CAPACITY_DAMAGED, 512 * MIB, 0, false },
	{ "sim:sdhc-4m,eio=700M+70M", CAPACITY_DAMAGED, 700 * MIB, 0, false },
	{ "sim:sdhc-4m,eio=1016M+8M", CAPACITY_DAMAGED, 1016 * MIB, 0, false },
	{ "sim:sdhc-4m,bad_start=1020M,bad=4M", CAPACITY_DAMAGED, 1020 * MIB, 0, false },
	{ "sim:sdhc-4m,lost=640M+64M", CAPACITY_DAMAGED, 640 * MIB, 0, false },
	/* a small bad spot inside the flush area (at the top) */
	{ "sim:sdhc-4m,eio=1000M+1M", CAPACITY_DAMAGED, 1000 * MIB, 0, false },
	{ "sim:sdhc-4m,fake=limbo,real=600M,eio=100M+64M", CAPACITY_DAMAGED, 100 * MIB, 0, false },
	/* worn: writes stored with bit errors (at the end they would look
	 * like a limbo fake), writes that fail, nothing kept from the start */
	{ "sim:sdhc-4m,corrupt=960M+64M", CAPACITY_DAMAGED, 960 * MIB, 0, false },
	{ "sim:sdhc-4m,corrupt=300M+100M", CAPACITY_DAMAGED, 300 * MIB, 0, false },
	{ "sim:sdhc-4m,corrupt=0+1G", CAPACITY_DAMAGED, 0, 0, false },
	{ "sim:sdhc-4m,lost=0+1G", CAPACITY_DAMAGED, 0, 0, false },
	{ "sim:sdhc-4m,eio_write=1000M+24M", CAPACITY_DAMAGED, 1000 * MIB, 0, false },
};

#define NONCES 2
/* The cards' deep flush: above the round flush (so the deep check and
 * the second pass run) and the caches in the table, but not the default
 * 1 GiB, whose filler a genuine 64 GiB card would store in memory. */
#define CARDS_CACHE_BYTES (128 * MIB)

static struct capacity_result *run_card(const char *spec, uint64_t nonce,
					uint64_t cache_bytes, struct capacity_plan *plan)
{
	struct capacity_result *r = calloc(1, sizeof(*r));
	struct fp_dev *d = open_spec(spec);
	struct capacity_opts o;

	ck_assert_ptr_nonnull(r);
	capacity_opts_default(&o);
	o.nonce = nonce;
	o.cache_bytes = cache_bytes;
	ck_assert_int_eq(capacity_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), &o, plan), 0);
	ck_assert_int_eq(fp_dev_set_write_area(d, plan->start_bytes, plan->end_bytes), 0);
	ck_assert_int_eq(capacity_run(d, &o, plan, r), 0);
	ck_assert_uint_eq(r->bytes_written, fp_dev_bytes_written(d));
	/* a 64 GiB card must stay sparse in memory (the deep flush's
	 * filler blocks are stored where the flash keeps them) */
	ck_assert_uint_lt(sim_mem_bytes(d), 128 * MIB + plan->deep_bytes);
	fp_dev_close(d);
	return r;
}

/* A genuine verdict rests on a sample: the headline says how many blocks
 * kept their data, not that every byte of the card does (a worn card with
 * a bad spot between the test blocks passes it). */
START_TEST(test_genuine_headline_is_a_sample)
{
	struct capacity_plan plan;
	struct capacity_result *r = run_card("sim:sdhc-4m,corrupt=500M+1M", 3,
					     CAPACITY_DEFAULT_CACHE_BYTES, &plan);
	char line[160], want[64];

	ck_assert_int_eq(r->verdict, CAPACITY_GENUINE);
	ck_assert(r->confidence >= 0.9);	/* the default deep flush */
	report_capacity_headline(r, line, sizeof(line));
	snprintf(want, sizeof(want), "all %llu test blocks kept their data",
		 (unsigned long long)r->blocks_tested);
	ck_assert_msg(strstr(line, want) && !strstr(line, "all 1GiB"), "%s", line);
	free(r);
}
END_TEST

/* A card that drops writes silently where only the deep flush writes (no
 * test block there): the flush's read-back shows it, and the card is
 * damaged there.  Such a card was called genuine at 0.90 (the independent
 * card model: a worn card turning silently read-only after 64 MiB, which
 * lost the deep flush while the test blocks written before it held). */
START_TEST(test_flush_loss_is_damage)
{
	struct capacity_plan plan;
	struct capacity_result *r = run_card("sim:sdhc-4m,lost=900M+2M",
					     stats_hash64((uint64_t)_i + 17),
					     CAPACITY_DEFAULT_CACHE_BYTES, &plan);

	ck_assert_msg(plan.deep_start_bytes < 900 * MIB &&
		      plan.flush_start_bytes > 902 * MIB, "the range is not in the deep flush");
	ck_assert_msg(r->verdict == CAPACITY_DAMAGED, "%s (%s)",
		      capacity_verdict_name(r->verdict), r->note);
	ck_assert(r->first_bad_known);
	/* found by the last flush, after the search: the loss starts past
	 * the last good block below it, never past the truth */
	ck_assert_msg(r->first_bad_bytes <= 900 * MIB && r->real_bytes <= 900 * MIB,
		      "first bad %llu, real %llu", (unsigned long long)r->first_bad_bytes,
		      (unsigned long long)r->real_bytes);
	free(r);
}
END_TEST

/* A worn card turning read-only silently once some amount was written
 * (sim ro_after with ro_silent; bench/indepcard's ro= with romode=drop):
 * the blocks written before hold, the later ones are lost, wherever the
 * test happened to be writing.  Such a card was called damaged with up
 * to 729 MiB "verified" of a card that keeps nothing any more: the
 * recheck writes the good positions again and finds that nothing
 * sticks.  A card turning read-only only after the test's writes shows
 * nothing (genuine), and a limbo fake's real flash passes the recheck.
 * A wraparound fake is rechecked too: one that stopped keeping writes
 * behind a 4 MiB cache was "FAKE: 512MiB real" with the advice to use
 * them. */
static const struct {
	const char *spec;
	enum capacity_verdict verdict;
	uint64_t real;
	bool stopped;
} stopping_cards[] = {
	{ "sim:sdhc-4m,ro_after=20M,ro_silent=1", CAPACITY_DAMAGED, 0, true },
	{ "sim:sdhc-4m,ro_after=40M,ro_silent=1", CAPACITY_DAMAGED, 0, true },
	{ "sim:sdhc-4m,ro_after=100M,ro_silent=1", CAPACITY_DAMAGED, 0, true },
	{ "sim:sdhc-4m,ro_after=250M,ro_silent=1", CAPACITY_DAMAGED, 0, true },
	{ "sim:sdhc-4m,size=4096M,fake=limbo,real=1500M,ro_after=60M,ro_silent=1",
	  CAPACITY_DAMAGED, 0, true },
	{ "sim:sdhc-4m,ro_after=2G,ro_silent=1", CAPACITY_GENUINE, GIB, false },
	{ "sim:sdhc-4m,size=4096M,fake=limbo,real=1500M", CAPACITY_LIMBO, 1500 * MIB, false },
	{ "sim:sdhc-4m,size=2G,fake=wrap,real=512M,ro_after=100M,ro_silent=1,cache=4M",
	  CAPACITY_DAMAGED, 0, true },
	{ "sim:sdhc-4m,size=2G,fake=wrap,real=400M,period=512M", CAPACITY_WRAPAROUND,
	  400 * MIB, false },
	{ "sim:sdhc-4m,size=2G,fake=wrap,real=512M", CAPACITY_WRAPAROUND, 512 * MIB, false },
};

START_TEST(test_card_stopping_to_keep_writes)
{
	struct capacity_plan plan;
	struct capacity_result *r = run_card(stopping_cards[_i].spec, 9,
					     CAPACITY_DEFAULT_CACHE_BYTES, &plan);

	ck_assert_msg(r->verdict == stopping_cards[_i].verdict && r->confidence >= 0.9,
		      "%s: %s %.2f (%s)", stopping_cards[_i].spec,
		      capacity_verdict_name(r->verdict), r->confidence, r->note);
	ck_assert_uint_le(r->real_bytes, stopping_cards[_i].real);
	ck_assert_uint_ge(r->real_bytes + MIB, stopping_cards[_i].real);
	ck_assert_int_eq(r->stopped_keeping, stopping_cards[_i].stopped);
	/* a card found bad had its good positions written again */
	ck_assert_int_eq(r->blocks_rechecked > 0,
			 stopping_cards[_i].verdict != CAPACITY_GENUINE);
	if (r->stopped_keeping) {
		char line[320];

		ck_assert_msg(strstr(r->note, "stopped keeping writes"), "%s", r->note);
		report_capacity_headline(r, line, sizeof(line));
		ck_assert_msg(strstr(line, "it stopped keeping writes during the test "
				     "(nothing verified"), "%s", line);
	}
	ck_assert_uint_le(r->bytes_written, plan.max_bytes);
	free(r);
}
END_TEST

/* A counterfeit whose controller gives each erase block a unit of its
 * flash on the block's first write, wherever it is (fake=alloc), keeps
 * every block the test wrote until the flash runs out and loses the later
 * ones whatever their address.  An attack's card of 256 MiB of flash on
 * 1 GiB was reported damaged with 780 MiB "verified from the start" (up to
 * 4.7 times the flash, and advice to partition it), as test blocks below
 * the first lost one had their flash.  First writes between them now lose
 * their blocks: damaged, nothing verified.  One with more flash than the
 * test writes keeps everything it is given and passes as genuine: the
 * documented limit of any check that does not fill the card. */
static const struct {
	const char *spec;
	uint64_t flash;
} alloc_cards[] = {
	{ "sim:seed,fake=alloc,real=128M", 128 * MIB },
	{ "sim:seed,fake=alloc,real=256M", 256 * MIB },
	{ "sim:sdhc-4m,fake=alloc,real=200M", 200 * MIB },
	{ "sim:np2-3m,fake=alloc,real=192M", 192 * MIB },
	{ "sim:sdhc-4m,size=4G,fake=alloc,real=512M", 512 * MIB },
};

START_TEST(test_card_giving_flash_on_first_write)
{
	struct capacity_plan plan;
	struct capacity_result *r = run_card(alloc_cards[_i].spec, 11 + (uint64_t)_i,
					     CAPACITY_DEFAULT_CACHE_BYTES, &plan);
	char line[320];

	ck_assert_msg(r->verdict == CAPACITY_DAMAGED && r->fresh_lost && r->real_bytes == 0,
		      "%s: %s %.2f, %llu verified (%s)", alloc_cards[_i].spec,
		      capacity_verdict_name(r->verdict), r->confidence,
		      (unsigned long long)r->real_bytes, r->note);
	ck_assert_uint_gt(r->blocks_fresh, 0);
	ck_assert_msg(!r->stopped_keeping || r->fresh_lost, "%s", r->note);
	report_capacity_headline(r, line, sizeof(line));
	ck_assert_msg(strstr(line, "new writes were lost") && strstr(line, "nothing verified"),
		      "%s", line);
	ck_assert_msg(strstr(r->note, "first"), "%s", r->note);
	free(r);
}
END_TEST

START_TEST(test_cards)
{
	const struct card_case *c = &cards[_i / NONCES];
	struct capacity_plan plan;
	struct capacity_result *r = run_card(c->spec, stats_hash64((uint64_t)_i + 1),
					     CARDS_CACHE_BYTES, &plan);
	uint64_t passes;

	ck_assert_msg(r->verdict == c->verdict, "%s: %s (%s), want %s", c->spec,
		      capacity_verdict_name(r->verdict), r->note,
		      capacity_verdict_name(c->verdict));
	/* never more than is there, at most one grid step less */
	ck_assert_msg(r->real_bytes <= c->real && r->real_bytes + MIB >= c->real,
		      "%s: real %llu, truth %llu", c->spec, (unsigned long long)r->real_bytes,
		      (unsigned long long)c->real);
	ck_assert_uint_eq(r->reported_bytes, plan.device_bytes);
	ck_assert_uint_eq(r->alias_period_bytes, c->period);
	if (c->verdict == CAPACITY_GENUINE) {
		ck_assert(!r->first_bad_known);
	} else {
		ck_assert(r->first_bad_known);
		/* where the bad range starts, as real_bytes says; on a wrap
		 * card whose flash reaches its period: the period */
		ck_assert_msg(r->first_bad_bytes == r->real_bytes ||
			      (c->period && r->first_bad_bytes == c->period),
			      "%s: first bad %llu, real %llu", c->spec,
			      (unsigned long long)r->first_bad_bytes,
			      (unsigned long long)r->real_bytes);
	}
	/* a genuine verdict with less than the default deep flush says so,
	 * and one whose comb could miss an odd wrap period is a guess */
	if (c->verdict == CAPACITY_GENUINE && !plan.comb_covers)
		ck_assert_msg(r->confidence == 0.5 && strstr(r->note, "power of two"),
			      "%s: confidence %.2f, note '%s'", c->spec, r->confidence, r->note);
	else
		ck_assert_msg(r->confidence >= (c->verdict == CAPACITY_GENUINE ? 0.8 : 0.9),
			      "%s: confidence %.2f", c->spec, r->confidence);
	if (c->verdict == CAPACITY_GENUINE && plan.deep_bytes < plan.device_bytes / 4)
		ck_assert_msg(r->confidence <= 0.8 && strstr(r->note, "not ruled out"),
			      "%s: confidence %.2f, note '%s'", c->spec, r->confidence, r->note);
	ck_assert(r->cache_defeated);
	ck_assert_uint_le(r->bytes_written, plan.max_bytes);
	/* per pass (a second pass when a cache hid lost writes) */
	passes = r->cache_hid_loss ? 2 : 1;
	ck_assert_uint_le(r->blocks_tested, passes * plan.max_probes);
	/* besides the cache flushes: a few MiB at most (the comb is up to
	 * 2 MiB), never 64 MiB */
	ck_assert_uint_le(r->blocks_tested * plan.block_bytes, passes * 4 * MIB);
	ck_assert_uint_le(r->blocks_tested, passes * (120 + CAPACITY_COMB_MAX));
	ck_assert_int_eq(r->cache_hid_loss, c->second_pass);
	/* every verdict rests on the deep flush too */
	ck_assert_uint_eq(r->deep_flush_bytes, plan.deep_bytes);
	ck_assert_uint_gt(r->elapsed_ns, 0);
	free(r);
}
END_TEST

/* Wraparound cards whose period is not a power of two (a controller
 * mapping addresses modulo its flash, as bench/indepcard's fakes do):
 * nothing but the period lands on offset 0.  Before round 0's comb and
 * measure_odd_period(), the first was called genuine (0.9), the second
 * damaged with 16.5 GiB "verified" of its 12.5, the rest damaged from
 * offset 0.  The period must be found, and the real flash within a grid
 * step, never above it; two nonces each. */
static const struct {
	const char *spec;
	uint64_t real, period;
} odd_wraps[] = {
	{ "sim:sdhc-4m,size=32768M,fake=wrap,real=10954M,period=10954M", 10954 * MIB,
	  10954 * MIB },
	{ "sim:sdhc-4m,size=32768M,fake=wrap,real=12849M,period=12849M", 12849 * MIB,
	  12849 * MIB },
	{ "sim:sdhc-4m,size=65536M,fake=wrap,real=14146M,period=14576M,cache=48M",
	  14146 * MIB, 14576 * MIB },
	{ "sim:sdhc-4m,size=4096M,fake=wrap,real=599M,period=1532M", 599 * MIB, 1532 * MIB },
	{ "sim:sdhc-4m,size=2048M,fake=wrap,real=245M,period=245M,cache=16M", 245 * MIB,
	  245 * MIB },
	{ "sim:sdhc-4m,size=16384M,fake=wrap,real=405M,period=405M", 405 * MIB, 405 * MIB },
	{ "sim:sdhc-4m,size=4G,fake=wrap,real=1000M,period=1000M", 1000 * MIB, 1000 * MIB },
	{ "sim:sdhc-4m,size=4G,fake=wrap,real=1000M,period=1000M,cache=64M,cache_logical=1",
	  1000 * MIB, 1000 * MIB },
};

START_TEST(test_odd_period_wrap_is_found)
{
	const int k = _i / 2;
	struct capacity_plan plan;
	struct capacity_result *r = run_card(odd_wraps[k].spec, stats_hash64((uint64_t)_i + 5),
					     CAPACITY_DEFAULT_CACHE_BYTES, &plan);

	ck_assert_msg(r->verdict == CAPACITY_WRAPAROUND && r->confidence >= 0.9, "%s: %s (%s)",
		      odd_wraps[k].spec, capacity_verdict_name(r->verdict), r->note);
	ck_assert_msg(r->alias_period_bytes == odd_wraps[k].period &&
		      r->real_bytes <= odd_wraps[k].real &&
		      r->real_bytes + MIB >= odd_wraps[k].real,
		      "%s: period %llu, real %llu", odd_wraps[k].spec,
		      (unsigned long long)r->alias_period_bytes,
		      (unsigned long long)r->real_bytes);
	ck_assert_uint_le(r->bytes_written, plan.max_bytes);
	/* the deep flush landing on the comb is no cache (the note said
	 * one had served lost writes) */
	if (!strstr(odd_wraps[k].spec, "cache="))
		ck_assert_msg(!strstr(r->note, "cache"), "%s: %s", odd_wraps[k].spec, r->note);
	free(r);
}
END_TEST

/* A wraparound card's write cache in front of the address folding (keyed
 * by the address asked for, as a controller's cache in front of its
 * FTL), larger than the round flush: offset 0 reads its own block until
 * the deep flush, whose filler then lands on every position below the
 * period.  Positions that had read their own blocks and read filler now
 * lost them to the flush: a cache had served them, and the test runs
 * again with the deep flush before every read-back.  They were marked
 * lost instead, and the card called "damaged from the start" (nothing
 * usable) with five nonces of six. */
static const struct {
	const char *spec;
	uint64_t real, period;
} logical_caches[] = {
	{ "sim:sdhc-4m,fake=wrap,real=256M,cache=64M,cache_logical=1", 256 * MIB, 256 * MIB },
	{ "sim:sdhc-4m,fake=wrap,real=200000K,period=256M,cache=48M,cache_logical=1",
	  200000 * KIB, 256 * MIB },
};

#define LOGICAL_CACHE_NONCES 6

START_TEST(test_cache_before_folding)
{
	const int k = _i / LOGICAL_CACHE_NONCES;
	struct capacity_plan plan;
	struct capacity_result *r = run_card(logical_caches[k].spec,
					     stats_hash64((uint64_t)_i + 40),
					     CAPACITY_DEFAULT_CACHE_BYTES, &plan);

	ck_assert_msg(r->verdict == CAPACITY_WRAPAROUND && r->confidence >= 0.9, "%s: %s (%s)",
		      logical_caches[k].spec, capacity_verdict_name(r->verdict), r->note);
	ck_assert_uint_eq(r->alias_period_bytes, logical_caches[k].period);
	ck_assert_msg(r->real_bytes <= logical_caches[k].real &&
		      r->real_bytes + MIB >= logical_caches[k].real, "%s: real %llu",
		      logical_caches[k].spec, (unsigned long long)r->real_bytes);
	ck_assert(r->cache_hid_loss);
	ck_assert_uint_le(r->bytes_written, plan.max_bytes);
	free(r);
}
END_TEST

/* f3probe's "real limbo drive with 256MB of strict cache" (7.6 of 67
 * GB) and a FIFO cache of the same size, with the default cache size: a
 * 32 MiB flush alone called the FIFO one genuine. */
static const struct {
	const char *spec;
	uint64_t real;
} large_caches[] = {
	{ "sim:fake-cache,size=64000M,real=7248M,cache=256M,cache_direct=1,cache_strict=1",
	  7248 * MIB },
	{ "sim:fake-cache,cache=256M", 4 * GIB },
	/* caches just under the deep flush (1 GiB; a quarter of a 1 GiB
	 * card): the deep check's filler came from the round flush's area
	 * too, whose blocks a cache updates in place, pushing nothing out;
	 * these were called genuine at 0.9 */
	{ "sim:sdhc-4m,size=16384M,fake=limbo,real=5000M,cache=1000M", 5000 * MIB },
	{ "sim:sdhc-4m,size=1024M,fake=limbo,real=300M,cache=240M", 300 * MIB },
};

START_TEST(test_large_cache_found)
{
	struct capacity_plan plan;
	struct capacity_result *r = run_card(large_caches[_i].spec, 5,
					     CAPACITY_DEFAULT_CACHE_BYTES, &plan);
	uint64_t truth = large_caches[_i].real;

	ck_assert_msg(r->verdict == CAPACITY_LIMBO, "%s: %s (%s)", large_caches[_i].spec,
		      capacity_verdict_name(r->verdict), r->note);
	ck_assert_uint_le(r->real_bytes, truth);
	ck_assert_uint_ge(r->real_bytes + MIB, truth);
	ck_assert(r->cache_hid_loss);
	ck_assert(r->cache_defeated);
	ck_assert_uint_eq(r->deep_flush_bytes, plan.deep_bytes);
	ck_assert_msg(strstr(r->note, "write cache larger than"), "%s", r->note);
	free(r);
}
END_TEST

/* A flaky reader: one read in seven (pseudo-random) returns zeros.  Positions read
 * differently from one read-back to the next, which no fake-card model
 * explains: no verdict rather than a confident wrong one. */
struct flaky {
	struct fp_dev *inner;
	unsigned reads;
	bool once;		/* instead: only the first read of offset 0
				 * after its second write (the recheck's) */
	unsigned writes0;
	bool lost_once;
};

static bool flaky_loses(struct flaky *f, uint64_t off)
{
	if (!f->once)
		return stats_hash64(++f->reads) % 7 == 0;
	if (off != 0 || f->writes0 < 2 || f->lost_once)
		return false;
	f->lost_once = true;
	return true;
}

static int flaky_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct flaky *f = priv;
	int rc = fp_dev_read_timed(f->inner, buf, len, off, NULL);

	if (rc == 0 && flaky_loses(f, off))
		memset(buf, 0, len);
	return rc;
}

static int flaky_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct flaky *f = priv;

	f->writes0 += off == 0;
	return fp_dev_write_timed(f->inner, buf, len, off, NULL);
}

static void flaky_close(void *priv)
{
	fp_dev_close(((struct flaky *)priv)->inner);
	free(priv);
}

static const struct fp_dev_ops flaky_ops = {
	.pread = flaky_pread, .pwrite = flaky_pwrite, .now_ns = tu_wrapped_now,
	.close = flaky_close,
};

START_TEST(test_flaky_is_undetermined)
{
	struct flaky *f = calloc(1, sizeof(*f));
	struct capacity_result *r = calloc(1, sizeof(*r));
	struct capacity_opts o;
	struct capacity_plan plan;
	struct fp_dev *d;

	ck_assert(f && r);
	/* the third: a damaged card (so the recheck runs) whose reader
	 * loses one read, offset 0's in the recheck; it was called damaged
	 * with nothing verified */
	f->inner = open_spec(_i == 2 ? "sim:sdhc-4m,lost=900M+2M" :
			     _i ? "sim:fake-limbo" : "sim:sdhc-4m");
	f->once = _i == 2;
	d = fp_dev_create(&flaky_ops, f, FP_DEV_SIM, "flaky", fp_dev_size_bytes(f->inner),
			  fp_dev_sector_bytes(f->inner));
	ck_assert_ptr_nonnull(d);
	fp_dev_set_inner(d, f->inner);
	capacity_opts_default(&o);
	o.nonce = 5;
	ck_assert_int_eq(capacity_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), &o, &plan), 0);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, plan.device_bytes), 0);
	ck_assert_int_eq(capacity_run(d, &o, &plan, r), 0);
	ck_assert_msg(r->verdict == CAPACITY_UNDETERMINED, "flaky reads gave %s",
		      capacity_verdict_name(r->verdict));
	ck_assert(r->confidence == 0);
	ck_assert_uint_eq(r->real_bytes, 0);
	ck_assert_ptr_nonnull(strstr(r->note, "cannot explain"));
	fp_dev_close(d);
	free(r);
}
END_TEST

/* Writes at the powers of two that would reveal a wrap are lost too: the
 * wrap period is still the smallest power of two reading offset 0's block. */
START_TEST(test_wrap_with_lost_candidate)
{
	struct capacity_plan plan;
	struct capacity_result *r = run_card("sim:sdhc-4m,fake=wrap,real=256M,lost=256M+4K,"
					     "lost=0+4K", 7, CAPACITY_DEFAULT_CACHE_BYTES, &plan);

	ck_assert_int_eq(r->verdict, CAPACITY_WRAPAROUND);
	ck_assert_uint_eq(r->alias_period_bytes, 256 * MIB);
	ck_assert_uint_eq(r->real_bytes, 256 * MIB);
	free(r);
}
END_TEST

/* A 2 MiB card: its deep flush (a quarter of it) is smaller than the
 * 1 MiB search grid's comb needs, and the note says how large it is; it
 * said "the deep flush (0 MiB, ...)" before. */
START_TEST(test_tiny_device_note)
{
	struct capacity_plan plan;
	struct capacity_result *r = run_card("sim:legacy-128k,size=2M" QUIET, 3,
					     CAPACITY_DEFAULT_CACHE_BYTES, &plan);

	ck_assert_int_eq(r->verdict, CAPACITY_GENUINE);
	ck_assert(r->confidence <= 0.5);
	ck_assert_msg(strstr(r->note, "deep flush (512KiB, --cache-size)") != NULL, "%s",
		      r->note);
	free(r);
}
END_TEST

/* Without a flush a cached fake can pass, but never confidently. */
START_TEST(test_no_flush_is_not_confident)
{
	struct capacity_plan plan;
	struct capacity_result *r = run_card("sim:fake-cache", 9, 0, &plan);

	ck_assert_uint_eq(plan.flush_bytes, 0);
	ck_assert(!r->cache_defeated);
	ck_assert_uint_eq(r->flushes, 0);
	ck_assert_msg(r->verdict != CAPACITY_GENUINE || r->confidence <= 0.5,
		      "genuine with confidence %.2f without a cache flush", r->confidence);
	ck_assert_ptr_nonnull(strstr(r->note, "cache"));
	free(r);
	/* the default flush sees through the same cache */
	r = run_card("sim:fake-cache", 9, CAPACITY_DEFAULT_CACHE_BYTES, &plan);
	ck_assert_int_eq(r->verdict, CAPACITY_LIMBO);
	free(r);
}
END_TEST

/* Blocks grow with log(capacity), besides round 0's comb (at most
 * CAPACITY_COMB_MAX blocks): 64 times the capacity costs a few more
 * powers of two, not 64 times the blocks; far fewer than f3probe's
 * documented 2,158 for a 16 GB fake. */
START_TEST(test_cost_grows_with_log)
{
	struct capacity_plan p1, p64;
	struct capacity_result *g1 = run_card("sim:sdhc-4m", 1, CAPACITY_DEFAULT_CACHE_BYTES, &p1);
	struct capacity_result *g64 = run_card("sim:sdhc-4m,size=64G", 1,
					       CAPACITY_DEFAULT_CACHE_BYTES, &p64);
	struct capacity_result *f = run_card("sim:fake-limbo", 1, CAPACITY_DEFAULT_CACHE_BYTES,
					     &p64);

	ck_assert_uint_le(g64->blocks_tested, g1->blocks_tested + 8 + CAPACITY_COMB_MAX);
	ck_assert_uint_lt(f->blocks_tested, 2158 / 10);
	ck_assert_uint_le(f->rounds, p64.max_rounds);
	free(g1);
	free(g64);
	free(f);
}
END_TEST

/* ==== the plan ==== */

START_TEST(test_plan)
{
	struct capacity_opts o;
	struct capacity_plan p, q;
	uint64_t n = 64 * GIB;

	capacity_opts_default(&o);
	o.nonce = 42;
	ck_assert_int_eq(capacity_plan(n, 512, &o, &p), 0);
	ck_assert_int_eq(capacity_plan(n, 512, &o, &q), 0);
	ck_assert_int_eq(memcmp(&p, &q, sizeof(p)), 0);	/* pure */
	ck_assert_uint_eq(p.start_bytes, 0);
	ck_assert_uint_eq(p.end_bytes, n);
	ck_assert_uint_eq(p.block_bytes, 4096);
	/* at the top, below the last block; the deep area extends it down */
	ck_assert_uint_eq(p.flush_bytes, 32 * MIB);
	ck_assert_uint_eq(p.flush_start_bytes, n - 4096 - 32 * MIB);
	ck_assert_uint_eq(p.deep_bytes, GIB);
	ck_assert_uint_eq(p.deep_start_bytes, n - 4096 - 32 * MIB - GIB);
	ck_assert(p.comb_covers);
	ck_assert_uint_eq(p.fixed[0], 0);
	ck_assert_uint_eq(p.fixed[p.nfixed - 1], n - 4096);
	ck_assert_uint_eq(p.npow2, 24);			/* 4 KiB .. 32 GiB */
	ck_assert_uint_eq(p.fixed[1], 32 * GIB);
	ck_assert_uint_eq(p.fixed[p.npow2], 4096);
	for (size_t i = 0; i < p.nfixed; i++) {
		ck_assert_uint_le(p.fixed[i] + p.block_bytes, n);
		ck_assert_uint_eq(p.fixed[i] % 512, 0);
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(p.fixed[i] >= p.fixed[j] + 4096 || p.fixed[j] >= p.fixed[i] + 4096,
				      "fixed positions %zu and %zu overlap", i, j);
	}
	/* the comb: a position below every multiple of the deep flush less
	 * a grid step, up to the deep flush area */
	for (uint64_t at = p.deep_bytes - MIB; at < p.deep_start_bytes; at += p.deep_bytes - MIB) {
		bool found = false;

		for (size_t i = 0; i < p.nfixed && !found; i++)
			found = p.fixed[i] == at - p.block_bytes;
		ck_assert_msg(found, "no comb position below %llu", (unsigned long long)at);
	}
	/* two passes, the second with the deep flush every round, then an odd
	 * period's measurement and its pass with the deep flush, then the
	 * recheck */
	ck_assert_uint_eq(p.max_bytes, 3 * p.max_probes * p.block_bytes +
			  p.max_rounds * (p.flush_bytes + 2 * p.deep_bytes) + p.deep_bytes -
			  p.flush_bytes + (CAPACITY_ODD_MAX_CANDIDATES + 1) * p.block_bytes +
			  2 * p.deep_bytes +
			  /* and the recheck of the good positions */
			  p.max_probes * p.block_bytes + p.deep_bytes);
	/* another nonce moves the random positions only */
	o.nonce = 43;
	ck_assert_int_eq(capacity_plan(n, 512, &o, &q), 0);
	ck_assert_uint_eq(q.nfixed, p.nfixed);
	ck_assert_int_ne(memcmp(p.fixed, q.fixed, sizeof(p.fixed)), 0);
	/* a small device: the deep area shrinks to a quarter of it */
	ck_assert_int_eq(capacity_plan(8 * MIB, 512, &o, &p), 0);
	ck_assert_uint_eq(p.flush_bytes, MIB);
	ck_assert_uint_eq(p.deep_bytes, 2 * MIB);
	ck_assert_int_eq(capacity_plan(GIB, 512, &o, &p), 0);
	ck_assert_uint_eq(p.deep_bytes, GIB / 4);
	ck_assert_int_eq(capacity_plan(64 * KIB * 16 * 2, 4096, &o, &p), 0);
	ck_assert_int_eq(capacity_plan(MIB, 512, &o, &p), -EINVAL);
	ck_assert_int_eq(capacity_plan(n, 0, &o, &p), -EINVAL);
	o.cache_bytes = 2 * GIB;
	ck_assert_int_eq(capacity_plan(n, 512, &o, &p), -EINVAL);
	o.cache_bytes = 0;
	ck_assert_int_eq(capacity_plan(n, 512, &o, &p), 0);
	ck_assert_uint_eq(p.flush_bytes, 0);
}
END_TEST

/* ==== data preservation through the journal ==== */

static char jdir[PATH_MAX];

static void jdir_setup(void)
{
	snprintf(jdir, sizeof(jdir), "/var/tmp/flashprobe-cap.XXXXXX");
	if (mkdtemp(jdir) == NULL)
		jdir[0] = '\0';
	else
		tu_state_dir_set(jdir);
}

static void jdir_teardown(void)
{
	tu_state_dir_unset();
	if (jdir[0])
		tu_rm_tree(jdir);
	jdir[0] = '\0';
}

/* Everything the card reads, over the whole reported size; on a wrap
 * card, over its flash: [0, period) (an address past it reads the flash
 * it aliases, or zeros until written on a card that maps addresses on
 * their first write, or what a cache in front of the folding still holds
 * for it, which a power cycle forgets). */
static uint64_t sim_checksum(struct fp_dev *d)
{
	uint64_t *buf = fp_dev_alloc_buf(MIB), h = 1469598103934665603ULL;
	const struct sim_profile *p = sim_profile_of(d);
	uint64_t end = p && p->fake == SIM_FAKE_WRAP ? sim_wrap_period(p) : fp_dev_size_bytes(d);

	ck_assert_ptr_nonnull(buf);
	for (uint64_t off = 0; off < end; off += MIB) {
		ck_assert_int_eq(fp_dev_read_timed(d, buf, MIB, off, NULL), 0);
		for (size_t i = 0; i < MIB / 8; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
	}
	free(buf);
	return h;
}

static const char *const keep_cards[] = {
	"sim:sdhc-4m,size=256M" QUIET,
	"sim:sdhc-4m,size=256M,fake=limbo,real=64M" QUIET,
	"sim:sdhc-4m,size=256M,fake=limbo,real=64M,cache=4M" QUIET,
	"sim:sdhc-4m,size=256M,fake=wrap,real=64M" QUIET,
	"sim:sdhc-4m,size=256M,fake=wrap,real=16M,cache=4M" QUIET,
	/* an odd period: its measurement writes at every divisor */
	"sim:sdhc-4m,size=256M,fake=wrap,real=50M,period=50M" QUIET,
	"sim:sdhc-4m,size=256M,fake=wrap,real=37M,period=70M,cache=4M" QUIET,
	"sim:sdhc-4m,size=256M,fake=wrap,real=64M,cache=48M,cache_logical=1" QUIET,
	/* an FTL mapping on first write: the addresses past the period
	 * read zeros to the backup while their writes land on the flash */
	"sim:sdhc-4m,size=256M,fake=wrap,real=64M,map_on_write=1" QUIET,
	"sim:sdhc-4m,size=256M,fake=wrap,real=16M,cache=4M,map_on_write=1" QUIET,
	"sim:sdhc-4m,size=256M,fake=wrap,real=40M,period=64M,map_on_write=1" QUIET,
};

/* The capacity check through a journal at path, as --write runs it:
 * its plan's area is the only one writable (and backed up).  The
 * capacity check's return, the journaled device in *jd.  On the wrap
 * cards its writes change blocks it never wrote, which must not be
 * taken for a swapped card (on one of 16 MiB, every block the swap
 * check reads). */
static int run_journaled_rc(struct fp_dev *d, const char *path, uint64_t nonce,
			    struct capacity_result *r, struct fp_dev **jd)
{
	struct capacity_opts o;
	struct capacity_plan plan;
	char err[512] = "";

	ck_assert_msg(journal_open(d, path, jd, err, sizeof(err)) == 0, "%s", err);
	capacity_opts_default(&o);
	o.nonce = nonce;
	ck_assert_int_eq(capacity_plan(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), &o, &plan), 0);
	/* as session_protect() passes it on */
	journal_writes_may_alias(*jd, plan.writes_may_alias);
	ck_assert_int_eq(fp_dev_set_write_area(*jd, plan.start_bytes, plan.end_bytes), 0);
	return capacity_run(*jd, &o, &plan, r);
}

static struct fp_dev *run_journaled(struct fp_dev *d, const char *path, uint64_t nonce,
				    struct capacity_result *r)
{
	struct fp_dev *jd = NULL;

	ck_assert_int_eq(run_journaled_rc(d, path, nonce, r, &jd), 0);
	return jd;
}

/* Every piece the capacity check wrote carries flashprobe's mark, so a
 * restore can tell each sector it wrote from data written since
 * (journal_replay.c), and its journal says so. */
static void assert_pieces_marked(const char *path)
{
	char err[512] = "";
	struct jr_header h;
	int fd;

	ck_assert_msg(jr_header_read(path, false, &fd, &h, err, sizeof(err)) == 0, "%s", err);
	close(fd);
	ck_assert_uint_eq(h.slots, JR_SLOTS_OK);
	ck_assert_msg(h.slot.flags & JR_SLOT_PIECES_MARKED, "flags %#x", h.slot.flags);
}

/* --write's path: the journal saves each 1 MiB block before its first
 * write; after the restore the card reads exactly as before, aliases
 * included (the wrap cards need the journal's replay in reverse record
 * order). */
START_TEST(test_write_keeps_data)
{
	struct capacity_result *r = calloc(1, sizeof(*r));
	struct fp_dev *d = open_spec(keep_cards[_i]), *jd;
	struct journal_restore_report rep;
	char path[PATH_MAX + 32], err[512] = "";
	uint64_t before;

	ck_assert_msg(jdir[0], "no journal directory");
	ck_assert_int_eq(sim_fill_random(d, 11 + (uint64_t)_i), 0);
	before = sim_checksum(d);
	snprintf(path, sizeof(path), "%s/cap.journal", jdir);
	jd = run_journaled(d, path, 3, r);
	ck_assert_msg(r->verdict != CAPACITY_GENUINE || _i == 0, "%s: genuine",
		      keep_cards[_i]);
	ck_assert_uint_gt(r->bytes_written, 0);
	assert_pieces_marked(path);
	ck_assert_msg(journal_finish(jd, r->aliasing_seen ? JOURNAL_RESTORE_SAME_DEVICE : 0,
				     NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s: restore failed: %s", keep_cards[_i], err);
	fp_dev_close(jd);
	ck_assert_msg(sim_checksum(d) == before, "%s: the card reads differently after "
		      "the restore", keep_cards[_i]);
	ck_assert_int_ne(access(path, F_OK), 0);
	fp_dev_close(d);
	free(r);
}
END_TEST

/* A wraparound fake whose reported size is not whole blocks (a
 * 1,000,000,000-byte card), folding at a period that does not divide it:
 * the flush area lay askew to the blocks, so its filler, through the
 * folding, lay across the test positions' blocks and every position it
 * hit read as lost.  An attack's card (477 MiB of flash) got "damaged
 * from about 206 MiB" with no alias seen; the restore, told by the
 * session that the writes had not aliased, then reported 2923 ranges
 * lost on a card it had put back whole.  Now the period is found, and the
 * restore with the session's flags verifies. */
static const struct askew_card {
	const char *inner;		/* its first period_bytes: the flash */
	uint64_t period_bytes, size_bytes;
	bool random_data;		/* else the blank card's zeros */
} askew_cards[] = {
	{ "sim:sdhc-4m,size=480M" QUIET, 477 * MIB, 1000000000, false },
	{ "sim:sdhc-4m,size=480M" QUIET, 333 * MIB, 999999488, true },
};

START_TEST(test_wrap_on_size_not_whole_blocks)
{
	const struct askew_card *k = &askew_cards[_i];
	struct capacity_result *r = calloc(1, sizeof(*r));
	struct fp_dev *inner = open_spec(k->inner), *fake, *jd;
	struct journal_restore_report rep;
	char path[PATH_MAX + 32], err[512] = "";
	unsigned flags;
	uint64_t before;

	ck_assert_msg(jdir[0], "no journal directory");
	if (k->random_data)
		ck_assert_int_eq(sim_fill_random(inner, 5), 0);
	before = tu_dev_sum(inner, 0, k->period_bytes);
	fake = tu_wrap_fake(inner, k->period_bytes, k->size_bytes);
	ck_assert_ptr_nonnull(fake);
	snprintf(path, sizeof(path), "%s/askew%d.journal", jdir, _i);
	jd = run_journaled(fake, path, 2, r);
	ck_assert_msg(r->verdict == CAPACITY_WRAPAROUND && r->alias_period_bytes == k->period_bytes,
		      "verdict %d, period %" PRIu64 ", verified %" PRIu64, (int)r->verdict,
		      r->alias_period_bytes, r->real_bytes);
	ck_assert_uint_eq(r->real_bytes, k->period_bytes);
	/* as session_finish() passes them */
	flags = r->aliasing_seen ? JOURNAL_RESTORE_SAME_DEVICE : JOURNAL_RESTORE_NO_ALIAS;
	ck_assert_msg(journal_finish(jd, flags, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "restore failed: %s", err);
	fp_dev_close(jd);
	ck_assert_uint_eq(tu_dev_sum(inner, 0, k->period_bytes), before);
	fp_dev_close(fake);
	fp_dev_close(inner);
	free(r);
}
END_TEST

/* A card swapped in the reader during the capacity check, whose area is
 * the whole card: the first backup after the swap finds blocks the test
 * never wrote changed, so the second card gets no more writes and none
 * of its blocks enters the journal; with the first card back, the
 * journal puts it back exactly.  Before, the capacity check over the
 * whole card went without that check (its writes alias on a fake),
 * saved the second card's blocks and wrote them onto the first card at
 * the restore. */
struct swapper {
	struct fp_dev *inner;
	unsigned writes, swap_after;
	unsigned char *first;	/* card 1 as the test left it */
	uint64_t second;	/* card 2's checksum */
};

static int swapper_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct swapper *w = priv;
	uint64_t size = fp_dev_size_bytes(w->inner);
	int rc = fp_dev_write_timed(w->inner, buf, len, off, NULL);

	if (rc == 0 && ++w->writes == w->swap_after) {
		ck_assert_int_eq(fp_dev_read_timed(w->inner, w->first, (size_t)size, 0, NULL), 0);
		ck_assert_int_eq(sim_fill_random(w->inner, 42), 0);
		w->second = sim_checksum(w->inner);
	}
	return rc;
}

static const struct fp_dev_ops swapper_ops = {
	.pread = tu_wrapped_pread, .pwrite = swapper_pwrite, .now_ns = tu_wrapped_now,
	.close = tu_wrapped_keep,	/* the test closes the card */
};

START_TEST(test_card_swapped_during_capacity)
{
	struct capacity_result *r = calloc(1, sizeof(*r));
	struct swapper w = { .inner = open_spec("sim:sdhc-4m,size=128M" QUIET),
			     .swap_after = 3 + (unsigned)_i * 40 };
	uint64_t size = fp_dev_size_bytes(w.inner), before;
	struct journal_restore_report rep;
	char path[PATH_MAX + 32], err[512] = "";
	struct fp_dev *d, *jd = NULL;
	int rc;

	ck_assert(r != NULL && jdir[0]);
	w.first = malloc(size);
	ck_assert_ptr_nonnull(w.first);
	ck_assert_int_eq(sim_fill_random(w.inner, 11), 0);
	before = sim_checksum(w.inner);
	d = fp_dev_create(&swapper_ops, &w, FP_DEV_SIM, "sim:swapper", size,
			  fp_dev_sector_bytes(w.inner));
	ck_assert_ptr_nonnull(d);
	fp_dev_set_inner(d, w.inner);
	snprintf(path, sizeof(path), "%s/swap%d.journal", jdir, _i);
	rc = run_journaled_rc(d, path, 7, r, &jd);
	ck_assert_msg(w.writes >= w.swap_after, "the check wrote %u blocks only", w.writes);
	ck_assert_msg(rc == -FP_EREFUSED && strstr(journal_last_error(jd), "changed during"),
		      "swap after write %u: capacity returned %d (%s)", w.swap_after, rc,
		      journal_last_error(jd));
	ck_assert_uint_eq(sim_checksum(w.inner), w.second);
	ck_assert_int_eq(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	fp_dev_close(jd);
	ck_assert_uint_eq(sim_checksum(w.inner), w.second);
	/* the first card back in the reader */
	fp_dev_end_write_area(w.inner);
	ck_assert_int_eq(fp_dev_set_write_area(w.inner, 0, size), 0);
	ck_assert_int_eq(fp_dev_write_timed(w.inner, w.first, (size_t)size, 0, NULL), 0);
	fp_dev_end_write_area(w.inner);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_msg(sim_checksum(w.inner) == before, "the first card differs after the "
		      "restore: the second card's blocks were written onto it");
	fp_dev_close(d);
	fp_dev_close(w.inner);
	free(w.first);
	free(r);
}
END_TEST

/* Worn cards (no random writes inside an AU, so each in-place rewrite is
 * an AU copy): a range storing flipped bits, one dropping writes, one
 * refusing them, over test blocks (the power of two at 64 MiB).  The
 * restore after the test locates what it cannot put back from its
 * read-backs: about one write per saved block, not the 8000 writes per
 * 2 MiB (40 min on such a card) of narrowing every piece to a sector
 * with writes; the damage is still found and placed. */
static const char *const worn_cards[] = {
	"sim:seed,size=256M,corrupt=63M+2M" QUIET,
	"sim:seed,size=256M,lost=63M+2M" QUIET,
	"sim:seed,size=256M,eio_write=63M+2M" QUIET,
};

START_TEST(test_worn_card_restore_is_bounded)
{
	struct capacity_result *r = calloc(1, sizeof(*r));
	struct fp_dev *d = open_spec(worn_cards[_i]), *jd;
	struct journal_restore_report rep;
	char path[PATH_MAX + 32], err[512] = "";
	uint64_t io0, ns0;

	ck_assert_msg(jdir[0], "no journal directory");
	snprintf(path, sizeof(path), "%s/worn%d.journal", jdir, _i);
	jd = run_journaled(d, path, 5, r);
	ck_assert_msg(r->verdict == CAPACITY_DAMAGED, "%s: %s", worn_cards[_i],
		      capacity_verdict_name(r->verdict));
	ck_assert_uint_eq(r->first_bad_bytes, 63 * MIB);
	io0 = fp_dev_io_count(d);
	ns0 = fp_dev_io_ns(d);
	/* the flipped bits stay; the other cards kept or refused the test's
	 * writes there, so the original is still in place */
	ck_assert_int_eq(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) != 0,
			 _i == 0);
	fp_dev_close(jd);
	/* what failed lies in the bad range */
	ck_assert_uint_le(rep.nfailed, 1);
	ck_assert(rep.nfailed == 0 || (rep.failed[0].offset_bytes >= 63 * MIB &&
				       rep.failed[0].offset_bytes + rep.failed_bytes <= 65 * MIB));
	/* a write and a read per saved block, and two small reads of it once
	 * all are written (a cache cannot serve them then), a few more to
	 * place a refused write; about 0.3 s of device time per block (old,
	 * on the first card: 16580 I/O and 1421 s for 99 blocks) */
	ck_assert_msg(fp_dev_io_count(d) - io0 <= 4 * rep.records + 64,
		      "%s: %llu I/O for %llu records", worn_cards[_i],
		      (unsigned long long)(fp_dev_io_count(d) - io0),
		      (unsigned long long)rep.records);
	ck_assert_msg(fp_dev_io_ns(d) - ns0 < rep.records * 1000000000ull,
		      "%s: restore %.1f s for %llu records", worn_cards[_i],
		      (double)(fp_dev_io_ns(d) - ns0) / 1e9, (unsigned long long)rep.records);
	fp_dev_close(d);
	free(r);
}
END_TEST

/* A capacity check killed on a card that damages what it stores (a bit
 * flipped in every sector of a range its flush fills): the journal found
 * later holds pieces that read as neither what it saved nor the test's
 * writes, which is also what an old copy of a journal over newer data
 * shows.  It refuses, writes nothing, and names --overwrite-newer, which
 * then puts back all that the card keeps.  (The restore at the end of a test is its
 * own journal's, no copy: it restores at once, test_cli_findings_after_
 * failed_restore.) */
START_TEST(test_worn_card_crash_needs_force)
{
	struct capacity_result *r = calloc(1, sizeof(*r));
	struct fp_dev *d = open_spec("sim:sdhc-4m,size=1G,corrupt=900M+16M" QUIET), *jd;
	uint64_t size = fp_dev_size_bytes(d), bad = 900 * MIB, bad_end = 916 * MIB;
	uint64_t low, high, after;
	struct journal_restore_report rep;
	char path[PATH_MAX + 32], err[512] = "";

	ck_assert(jdir[0] && r != NULL);
	ck_assert_int_eq(sim_fill_random(d, 12), 0);
	low = tu_dev_sum(d, 0, bad);
	high = tu_dev_sum(d, bad_end, size);
	snprintf(path, sizeof(path), "%s/worn-crash.journal", jdir);
	jd = run_journaled(d, path, 5, r);
	ck_assert_msg(r->verdict == CAPACITY_DAMAGED, "%s", capacity_verdict_name(r->verdict));
	fp_dev_close(jd);	/* killed before its restore */
	after = sim_checksum(d);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)) ==
		      -FP_EREFUSED, "%s", err);
	ck_assert_msg(strstr(err, "failing card") && strstr(err, "--overwrite-newer"), "%s",
		      err);
	ck_assert_uint_eq(sim_checksum(d), after);
	ck_assert_int_ne(journal_restore(path, d, JOURNAL_RESTORE_OVERWRITE_NEWER, NULL, NULL,
					 &rep, err, sizeof(err)), 0);	/* the flipped bits stay */
	ck_assert_uint_ge(rep.nfailed, 1);
	ck_assert_uint_ge(rep.failed[0].offset_bytes, bad);
	ck_assert_uint_eq(tu_dev_sum(d, 0, bad), low);
	ck_assert_uint_eq(tu_dev_sum(d, bad_end, size), high);
	unlink(path);
	fp_dev_close(d);
	free(r);
}
END_TEST

/* ==== the binary ==== */

static void run(struct run_result *r, const char *const *argv)
{
	tu_run(r, argv);
	ck_assert_ptr_nonnull(r->out);
	ck_assert_ptr_nonnull(r->err);
}

static const struct jsonv *need(const struct jsonv *doc, const char *path)
{
	const struct jsonv *v = jsonv_get(doc, path);

	ck_assert_msg(v != NULL, "JSON lacks %s", path);
	return v;
}

START_TEST(test_cli_text)
{
	struct run_result r;

	run(&r, (const char *const[]){ "capacity", "sim:fake-wrap", NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "capacity: FAKE: 8GiB of 64GiB real (writes past "
				     "8GiB wrap to the start)"));
	ck_assert_ptr_nonnull(strstr(r.out, "echo 'start=1MiB, size=8191MiB' | sfdisk "
				     "sim:fake-wrap"));
	ck_assert_ptr_nonnull(strstr(r.out, "return the card"));
	ck_assert_ptr_nonnull(strstr(r.out, "cache flushes of 32MiB"));
	ck_assert_ptr_nonnull(strstr(r.err, "capacity will write"));
	tu_run_free(&r);
}
END_TEST

START_TEST(test_cli_json)
{
	static const char *const keys[] = {
		"verdict.value", "verdict.confidence", "verdict.source", "reported_bytes",
		"real_bytes.value", "alias_period_bytes", "first_bad_bytes", "blocks_tested",
		"bytes_written",
		"io_count", "elapsed_ns", "cache_flush_bytes", "cache_defeated",
		"deep_flush_bytes", "deep_flushes", "cache_hid_loss",
	};
	struct run_result r;
	struct jsonv *doc;
	char k[64];

	run(&r, (const char *const[]){ "capacity", "--json", "--cache-size=16M",
				       "sim:fake-limbo", NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "not one JSON document: %s", r.out);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(k, sizeof(k), "capacity.%s", keys[i]);
		need(doc, k);
	}
	ck_assert_str_eq(need(doc, "capacity.verdict.value")->string, "limbo");
	ck_assert(need(doc, "capacity.real_bytes.value")->number == 8.0 * GIB);
	ck_assert(need(doc, "capacity.reported_bytes")->number == 64.0 * GIB);
	ck_assert_int_eq(need(doc, "capacity.alias_period_bytes")->type, JSONV_NULL);
	ck_assert(need(doc, "capacity.first_bad_bytes")->number == 8.0 * GIB);
	/* rounds flush half the cache size, the deep check all of it */
	ck_assert(need(doc, "capacity.cache_flush_bytes")->number == 8.0 * MIB);
	ck_assert(need(doc, "capacity.deep_flush_bytes")->number == 16.0 * MIB);
	ck_assert_int_eq(need(doc, "capacity.deep_flushes")->number, 1);
	ck_assert_int_eq(need(doc, "capacity.cache_hid_loss")->type, JSONV_BOOL);
	ck_assert(!need(doc, "capacity.cache_hid_loss")->boolean);
	ck_assert(need(doc, "capacity.blocks_tested")->number < 120 + CAPACITY_COMB_MAX);
	jsonv_free(doc);
	tu_run_free(&r);
	run(&r, (const char *const[]){ "capacity", "--json", "sim:fake-wrap", NULL });
	doc = jsonv_parse(r.out);
	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(need(doc, "capacity.verdict.value")->string, "wraparound");
	ck_assert(need(doc, "capacity.alias_period_bytes")->number == 8.0 * GIB);
	jsonv_free(doc);
	tu_run_free(&r);
}
END_TEST

static const struct {
	const char *args[5];
	const char *msg;
} cli_bad[] = {
	{ { "capacity", "--cache-size=lots", "sim:seed", NULL }, "cache-size 'lots'" },
	{ { "capacity", "--cache-size=2G", "sim:seed", NULL }, "up to 1GiB" },
	{ { "align", "--cache-size=1M", "sim:seed", NULL }, "--cache-size only applies" },
	{ { "capacity", "sim:sdhc-4m,size=1M,erase=512K", NULL }, "too small for the capacity" },
};

START_TEST(test_cli_bad_input)
{
	struct run_result r;

	run(&r, cli_bad[_i].args);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, cli_bad[_i].msg), "stderr: %s", r.err);
	tu_run_free(&r);
}
END_TEST

/* probe on a fake card: the finding first, the other write tests
 * skipped with the reason. */
START_TEST(test_cli_probe_fake)
{
	struct run_result r;
	struct jsonv *doc;

	run(&r, (const char *const[]){ "probe", "sim:fake-limbo", NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "Conclusion\n  capacity  FAKE: 8GiB of 64GiB real "
				     "(writes past 8GiB are lost)"));
	ck_assert_ptr_nonnull(strstr(r.out, "skipped: on a fake card"));
	ck_assert_ptr_nonnull(strstr(r.out, "return the card"));
	ck_assert_ptr_null(strstr(r.out, "\nOpen AUs\n"));
	tu_run_free(&r);
	run(&r, (const char *const[]){ "probe", "--json", "sim:fake-wrap", NULL });
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "not one JSON document");
	ck_assert_str_eq(need(doc, "geometry.capacity_verdict.value")->string, "wraparound");
	ck_assert(need(doc, "geometry.capacity_real_bytes.value")->number == 8.0 * GIB);
	ck_assert_str_eq(need(doc, "geometry.capacity_real_bytes.source")->string, "measured");
	ck_assert_int_eq(need(doc, "open_au")->type, JSONV_NULL);
	ck_assert_int_eq(need(doc, "fat_area")->type, JSONV_NULL);
	ck_assert(need(doc, "advice.partition_size_bytes")->number +
		  need(doc, "advice.partition_start_bytes")->number <= 8.0 * GIB);
	jsonv_free(doc);
	tu_run_free(&r);
}
END_TEST

START_TEST(test_cli_list_sims_truth)
{
	struct run_result r;

	run(&r, (const char *const[]){ "list-sims", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "wrap 8GiB/8GiB"));
	ck_assert_ptr_nonnull(strstr(r.out, "limbo 4GiB +cache 16MiB"));
	tu_run_free(&r);
}
END_TEST

/* A real target: --write leaves every byte as it was and no journal;
 * without consent nothing is written. */
static void check_real_target(const char *target, const char *kind)
{
	uint64_t before = tu_checksum(target);
	struct run_result r;
	struct jsonv *doc;

	ck_assert_uint_ne(before, 0);
	run(&r, (const char *const[]){ "capacity", target, NULL });
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "--write"));
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(target), before);
	run(&r, (const char *const[]){ "capacity", "--write", "--yes", "--json", target, NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "backed up before its first write"));
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "not one JSON document: %s", r.out);
	ck_assert_str_eq(need(doc, "device.kind")->string, kind);
	ck_assert_str_eq(need(doc, "capacity.verdict.value")->string, "genuine");
	ck_assert(need(doc, "capacity.real_bytes.value")->number == 64.0 * MIB);
	ck_assert(need(doc, "capacity.bytes_written")->number > 0);
	jsonv_free(doc);
	tu_run_free(&r);
	ck_assert_msg(tu_checksum(target) == before, "capacity --write changed %s", target);
}

/* The command line's seam: capacity_plan says its writes may alias, and
 * the session must hand that to the journal.  On a fake whose 16 MiB of
 * real flash every write wraps onto, a journal that is not told takes
 * its own aliased writes for a swapped card: the run stops with "the
 * card ... changed during the test" (status 1) and keeps the journal. */
START_TEST(test_cli_write_on_wrapping_fake)
{
	static const char *const cmd[] = { "capacity", "probe" };
	struct run_result r;
	char names[1024];

	ck_assert_msg(jdir[0], "no journal directory");
	run(&r, (const char *const[]){ cmd[_i], "--write", "--yes", "-q",
		"sim:sdhc-4m,size=256M,fake=wrap,real=16M,cache=4M", NULL });
	ck_assert_msg(r.status == 0, "%s --write: status %d: %s", cmd[_i], r.status, r.err);
	ck_assert_ptr_null(strstr(r.err, "changed during the test"));
	tu_run_free(&r);
	ck_assert_msg(tu_dir_list(jdir, names, sizeof(names)) == 0,
		      "%s --write left in the state directory: %s", cmd[_i], names);
}
END_TEST

/* A worn card whose writes do not keep their data: the restore fails
 * (status 1, the journal kept), and the capacity check's findings, which
 * say why, still follow on standard output.  They were dropped before,
 * so the user learned nothing about the card that needed it most. */
START_TEST(test_cli_findings_after_failed_restore)
{
	struct run_result r;

	ck_assert_msg(jdir[0], "no journal directory");
	run(&r, (const char *const[]){ "capacity", "--write", "--yes",
		"sim:sdhc-4m,corrupt=900M+64M", NULL });
	/* the journal stays, as it must; the next test wants the directory empty */
	tu_rm_tree(jdir);
	ck_assert_int_eq(mkdir(jdir, 0700), 0);
	ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "cannot restore") != NULL, "%s", r.err);
	ck_assert_msg(strstr(r.out, "capacity: DAMAGED") != NULL, "stdout '%s'", r.out);
	tu_run_free(&r);
}
END_TEST

/* A card that turns read-only during the probe (sim ro_after): the
 * restore fails where the tests had found the card sound, so its report
 * keeps the findings but gives no partitioning advice, in text and in
 * JSON; it used to print an sfdisk line for a card that takes no more
 * writes.  A card whose restore failed only past its verified part (the
 * 900 MiB case above) keeps the advice for that part. */
START_TEST(test_cli_no_advice_for_card_refusing_restore)
{
	static const char *const refusing[] = { "sim:sdhc-4m,ro_after=600M",
					     "sim:sdhc-4m,corrupt=900M+64M" };
	struct run_result r;
	const char *advice;

	ck_assert_msg(jdir[0], "no journal directory");
	/* the card that refused its data in JSON, the other in text: the
	 * text of a withheld advice is test_card_failure_past_verified_part's */
	for (int k = 0; k < 2; k++) {
		int json = k == 0;

		run(&r, (const char *const[]){ "probe", "--write", "--yes",
			json ? "--json" : "--yes", refusing[k], NULL });
		tu_rm_tree(jdir);	/* the journal stays, as it must */
		ck_assert_int_eq(mkdir(jdir, 0700), 0);
		ck_assert_msg(r.status == 1 && strstr(r.err, "cannot restore"),
			      "%s: status %d: %s", refusing[k], r.status, r.err);
		advice = strstr(r.out, json ? "\"advice\"" : "Advice");
		ck_assert_msg(advice != NULL, "%s: no advice section", refusing[k]);
		ck_assert_msg((strstr(advice, "no partitioning advice") != NULL) == (k == 0),
			      "%s: '%.400s'", refusing[k], advice);
		ck_assert_msg((strstr(advice, "sfdisk --wipe") != NULL) == (k == 1),
			      "%s: '%.400s'", refusing[k], advice);
		if (json) {	/* the capacity check had found it genuine */
			struct jsonv *doc = jsonv_parse(r.out);

			ck_assert_msg(doc != NULL, "not one JSON document: %s", r.out);
			ck_assert_str_eq(need(doc, "capacity.verdict.value")->string, "damaged");
			ck_assert(need(doc, "capacity.stopped_keeping")->boolean);
			jsonv_free(doc);
		}
		tu_run_free(&r);
	}
}
END_TEST

/* The capacity check found the card genuine, then the card stopped
 * keeping writes before the restore put its data back (turned read-only
 * silently after 100 MiB; the test writes 96 MiB): the restore fails,
 * and the report says damaged, nothing verified, and where.  It said
 * "genuine: 256MiB real" under the failed restore's message before. */
START_TEST(test_cli_genuine_card_refusing_restore)
{
	static const char *const card = "sim:sdhc-4m,size=256M,ro_after=100M,ro_silent=1";
	struct run_result r;
	struct jsonv *doc;

	ck_assert_msg(jdir[0], "no journal directory");
	for (int json = 0; json < 2; json++) {
		run(&r, (const char *const[]){ "capacity", "--write", "--yes",
			json ? "--json" : "--yes", card, NULL });
		tu_rm_tree(jdir);	/* the journal stays, as it must */
		ck_assert_int_eq(mkdir(jdir, 0700), 0);
		ck_assert_msg(r.status == 1 && strstr(r.err, "cannot restore"),
			      "status %d: %s", r.status, r.err);
		ck_assert_msg(strstr(r.out, "genuine") == NULL, "%s", r.out);
		if (json) {
			doc = jsonv_parse(r.out);
			ck_assert_msg(doc != NULL, "not one JSON document: %s", r.out);
			ck_assert_str_eq(need(doc, "capacity.verdict.value")->string, "damaged");
			ck_assert(need(doc, "capacity.real_bytes.value")->number == 0);
			ck_assert_ptr_nonnull(strstr(need(doc, "capacity.note")->string,
						     "did not take its own data back"));
			jsonv_free(doc);
		} else {
			ck_assert_msg(strstr(r.out, "capacity: DAMAGED") != NULL, "%s", r.out);
			ck_assert_msg(strstr(r.out, "nothing of it is usable") != NULL, "%s", r.out);
		}
		tu_run_free(&r);
	}
}
END_TEST

static char *image;

static void image_setup(void)
{
	jdir_setup();
	image = tu_make_image(64 * MIB, 77);
}

static void image_teardown(void)
{
	if (image)
		unlink(image);
	free(image);
	image = NULL;
	jdir_teardown();
}

START_TEST(test_cli_image)
{
	ck_assert_ptr_nonnull(image);
	check_real_target(image, "file");
}
END_TEST

START_TEST(test_cli_loop_device)
{
	char *dev;

	ck_assert_ptr_nonnull(image);
	dev = tu_loop_attach(image, false);
	ck_assert_msg(dev != NULL, "losetup failed");
	check_real_target(dev, "block");
	tu_loop_detach(dev);
	free(dev);
}
END_TEST

Suite *capacity_suite(void)
{
	Suite *s = suite_create("capacity");
	TCase *sim = tcase_create("sim-fake");
	TCase *an = tcase_create("analyzer");
	TCase *keep = tcase_create("keeps-data");
	TCase *cli = tcase_create("cli");
	const char *why = tu_loop_unavailable();

	tcase_add_test(sim, test_sim_wrap);
	tcase_add_test(sim, test_sim_limbo_and_cache);
	tcase_add_test(sim, test_sim_direct_cache);
	tcase_add_test(sim, test_sim_bad_ranges);
	tcase_add_loop_test(sim, test_sim_fake_parse_errors, 0,
			    (int)(sizeof(bad_specs) / sizeof(bad_specs[0])));
	tcase_add_test(sim, test_sim_fake_truth);
	tcase_add_test(sim, test_sim_fake_memory);
	suite_add_tcase(s, sim);

	tcase_set_timeout(an, 300);
	tcase_add_test(an, test_genuine_headline_is_a_sample);
	tcase_add_loop_test(an, test_flush_loss_is_damage, 0, 3);
	tests_add_sweep(an, test_cards, NONCES * sizeof(cards) / sizeof(cards[0]));
	tcase_add_loop_test(an, test_card_stopping_to_keep_writes, 0,
			    (int)(sizeof(stopping_cards) / sizeof(stopping_cards[0])));
	tcase_add_loop_test(an, test_card_giving_flash_on_first_write, 0,
			    (int)(sizeof(alloc_cards) / sizeof(alloc_cards[0])));
	tcase_add_loop_test(an, test_large_cache_found, 0,
			    (int)(sizeof(large_caches) / sizeof(large_caches[0])));
	tcase_add_loop_test(an, test_flaky_is_undetermined, 0, 3);
	tcase_add_test(an, test_wrap_with_lost_candidate);
	tests_add_sweep(an, test_odd_period_wrap_is_found,
			2 * (int)(sizeof(odd_wraps) / sizeof(odd_wraps[0])));
	tcase_add_test(an, test_no_flush_is_not_confident);
	tcase_add_test(an, test_tiny_device_note);
	tcase_add_loop_test(an, test_cache_before_folding, 0,
			    LOGICAL_CACHE_NONCES *
			    (int)(sizeof(logical_caches) / sizeof(logical_caches[0])));
	tcase_add_test(an, test_cost_grows_with_log);
	tcase_add_test(an, test_plan);
	suite_add_tcase(s, an);

	tcase_set_timeout(keep, 300);
	tcase_add_unchecked_fixture(keep, jdir_setup, jdir_teardown);
	tcase_add_loop_test(keep, test_write_keeps_data, 0,
			    (int)(sizeof(keep_cards) / sizeof(keep_cards[0])));
	tcase_add_loop_test(keep, test_wrap_on_size_not_whole_blocks, 0,
			    (int)(sizeof(askew_cards) / sizeof(askew_cards[0])));
	tcase_add_loop_test(keep, test_card_swapped_during_capacity, 0, 2);
	tcase_add_loop_test(keep, test_worn_card_restore_is_bounded, 0,
			    sizeof(worn_cards) / sizeof(worn_cards[0]));
	tcase_add_test(keep, test_worn_card_crash_needs_force);
	suite_add_tcase(s, keep);

	tcase_set_timeout(cli, 300);
	tcase_add_unchecked_fixture(cli, image_setup, image_teardown);
	tcase_add_test(cli, test_cli_text);
	tcase_add_test(cli, test_cli_json);
	tcase_add_loop_test(cli, test_cli_bad_input, 0,
			    (int)(sizeof(cli_bad) / sizeof(cli_bad[0])));
	tcase_add_test(cli, test_cli_probe_fake);
	tcase_add_loop_test(cli, test_cli_write_on_wrapping_fake, 0, 2);
	tcase_add_test(cli, test_cli_findings_after_failed_restore);
	tcase_add_test(cli, test_cli_no_advice_for_card_refusing_restore);
	tcase_add_test(cli, test_cli_genuine_card_refusing_restore);
	tcase_add_test(cli, test_cli_list_sims_truth);
	tcase_add_test(cli, test_cli_image);
	if (why)
		tu_skip("capacity/cli: capacity --write on a loop device", why);
	else
		tcase_add_test(cli, test_cli_loop_device);
	suite_add_tcase(s, cli);
	return s;
}
