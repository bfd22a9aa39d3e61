/* sim.c - the simulated card: storage plus a flash-translation-layer timing
 * model on a virtual clock (see sim.h and ../shared/docs/flash-model.md).
 *
 * Reads (model section 3): read_base + read_page_ns per page pro rata, plus
 * one penalty per internal boundary crossed, charged at the boundary's
 * highest level (erase > subau > page > raw page).  Reads that stay inside
 * never-written AUs skip the array access when erased_reads_fast is set.
 *
 * Writes (model section 4): every AU (= erase block here) is erased (no
 * valid pages), partially valid or fully valid.  An LRU pool of at most
 * open_au_linear AUs is open; an open AU has a write pointer (bytes, so
 * 4 KiB writes inside an 8 KiB page stay in order; whole pages with
 * page_wp) and a bitmap of the
 * pages programmed or copied in the current cycle.
 *   - in order (off >= wp): forward gaps copy their valid pages (linear
 *     mode), then the touched pages are programmed (a partial page costs
 *     a whole one);
 *   - out of order (off < wp): switch to random mode if the quota allows
 *     (+random_write_ns), otherwise close the AU and reopen it;
 *   - closing copies every valid page not handled in this cycle, then
 *     erases, so a write cycle costs about one AU copy unless the host
 *     wrote the AU start to end.
 * The FAT area is page mapped: no pool, no GC, an out-of-order write costs
 * fat_random_ns and pages cost fat_page_pct % of write_page_ns.
 * A write buffer (wbuf=) changes only what the host waits for: writes
 * that fit cost wbuf_write per 4 KiB and owe their flash time, which the
 * flash works off while the host reads or fills the buffer; with
 * wbuf_back a full buffer stays write-back (a write waits for the oldest
 * buffered writes, whatever they cost, then joins the queue).
 *
 * Data is stored sparsely in 4 KiB blocks: a block that holds one repeated
 * byte keeps just that byte, so never-written space and constant patterns
 * (flashbench writes 0x5a) cost no memory.
 */
#include "errmsg.h"
#include "sim.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "stats.h"
#include "units.h"

#define SIM_KIB UINT64_C(1024)
#define SIM_MIB (1024 * SIM_KIB)
#define SIM_GIB (1024 * SIM_MIB)
#define SIM_US UINT64_C(1000)
#define SIM_MS (1000 * SIM_US)

#define SIM_BLOCK_BYTES 4096u		/* data store and location-noise grain */
#define SIM_LEAF_BLOCKS 1024u		/* blocks per lazily allocated table */
#define SIM_DEFAULT_UNIT_BYTES 16384u	/* program unit when no page is set */
#define SIM_MAX_OPEN 256u
#define SIM_MAX_AUS (UINT64_C(1) << 20)
#define SIM_MAX_PAGES_PER_AU (UINT64_C(1) << 16)
#define SIM_MAX_PCT 50u
#define SIM_MAX_FAT_PAGE_PCT 1000u
#define SIM_PPM 1000000u
#define SIM_NO_SLOT (-1)

/* ------------------------------------------------------------------ */
/* Built-in cards.  Numbers come from flash-model.md section 2 and
 * cards.tsv; where a source gives none we pick a plausible value and say
 * so in the description. */

/* Geometry, costs and noise shared by a card and its counterfeit twins. */
#define SIM_SDHC_4M_CARD \
	.page_bytes = 16 * SIM_KIB, .raw_page_bytes = 8 * SIM_KIB, \
	.erase_bytes = 4 * SIM_MIB, \
	.open_au_linear = 3, .open_au_random = 3, \
	.read_base_ns = 1600 * SIM_US, .read_page_ns = 160 * SIM_US, \
	.raw_cross_ns = 12 * SIM_US, .page_cross_ns = 300 * SIM_US, \
	.au_cross_ns = 680 * SIM_US, .erased_reads_fast = true, \
	.write_base_ns = 1200 * SIM_US, .write_page_ns = 3200 * SIM_US, \
	.gc_page_ns = 1600 * SIM_US, .erase_ns = 5 * SIM_MS, \
	.random_write_ns = 9 * SIM_MS, \
	.jitter_pct = 3, .stall_ppm = 50, .stall_ns = 10 * SIM_MS, \
	.location_pct = 1

/* the same for the USB stick (Patriot Xporter) */
#define SIM_USB_8M_STICK \
	.page_bytes = 0, .erase_bytes = 8 * SIM_MIB, \
	.open_au_linear = 2, .open_au_random = 0, \
	.read_base_ns = 600 * SIM_US, .read_page_ns = 450 * SIM_US, \
	.au_cross_ns = 220 * SIM_US, \
	.write_base_ns = 500 * SIM_US, .write_page_ns = 1200 * SIM_US, \
	.gc_page_ns = 500 * SIM_US, .erase_ns = 4 * SIM_MS, \
	.jitter_pct = 4, .stall_ppm = 200, .stall_ns = 10 * SIM_MS, \
	.location_pct = 2

const struct sim_profile sim_profiles[] = {
	{
		.name = "seed",
		.description = "seeds/004 4GB SD via USB2 reader: 2MiB erase, "
			       "8KiB page, 1MiB step, 1 open AU, no random, "
			       "8MiB FAT area",
		.size_bytes = SIM_GIB, .sector_bytes = 512,
		.page_bytes = 8 * SIM_KIB, .raw_page_bytes = 4 * SIM_KIB,
		.subau_bytes = SIM_MIB, .erase_bytes = 2 * SIM_MIB,
		.open_au_linear = 1, .open_au_random = 0,
		.fat_start_bytes = 0, .fat_bytes = 8 * SIM_MIB,
		.read_base_ns = 2000 * SIM_US, .read_page_ns = 250 * SIM_US,
		.raw_cross_ns = 15 * SIM_US, .page_cross_ns = 65 * SIM_US,
		.subau_cross_ns = 117 * SIM_US, .au_cross_ns = 500 * SIM_US,
		.erased_reads_fast = true,
		.write_base_ns = 200 * SIM_US, .write_page_ns = 600 * SIM_US,
		.gc_page_ns = 1300 * SIM_US, .erase_ns = 3 * SIM_MS,
		.fat_random_ns = 70 * SIM_MS, .fat_page_pct = 480,
		.jitter_pct = 5, .stall_ppm = 100, .stall_ns = 8 * SIM_MS,
		.location_pct = 1, .seed = 4,
	},
	{
		.name = "sdhc-4m",
		.description = "microSDHC with a clear step: 4MiB erase, 16KiB "
			       "page, 3/3 open AUs (Kingston SA04G writes)",
		.size_bytes = SIM_GIB, .sector_bytes = 512,
		SIM_SDHC_4M_CARD, .seed = 41,
	},
	{
		.name = "readme",
		.description = "flashbench README card: 4MiB erase, 8KiB pages "
			       "read in 16KiB pairs (which is the page is "
			       "ambiguous), 2 open AUs (1 random: our pick)",
		.size_bytes = SIM_GIB, .sector_bytes = 512,
		.page_bytes = 8 * SIM_KIB, .raw_page_bytes = 4 * SIM_KIB,
		.subau_bytes = 16 * SIM_KIB, .erase_bytes = 4 * SIM_MIB,
		.open_au_linear = 2, .open_au_random = 1,
		.read_base_ns = 740 * SIM_US, .read_page_ns = 60 * SIM_US,
		.raw_cross_ns = 5 * SIM_US, .page_cross_ns = 53 * SIM_US,
		.subau_cross_ns = 160 * SIM_US, .au_cross_ns = 310 * SIM_US,
		.erased_reads_fast = true,
		.write_base_ns = 300 * SIM_US, .write_page_ns = 900 * SIM_US,
		.gc_page_ns = 620 * SIM_US, .erase_ns = 4 * SIM_MS,
		.random_write_ns = 6 * SIM_MS,
		.jitter_pct = 3, .stall_ppm = 50, .stall_ns = 5 * SIM_MS,
		.location_pct = 1, .seed = 7,
	},
	{
		.name = "emmc",
		.description = "eMMC on a native host: fast reads, 10-25us "
			       "penalties, 512KiB erase group, 16KiB page, "
			       "8/8 open AUs",
		.size_bytes = SIM_GIB, .sector_bytes = 512,
		.page_bytes = 16 * SIM_KIB, .erase_bytes = 512 * SIM_KIB,
		.open_au_linear = 8, .open_au_random = 8,
		.read_base_ns = 120 * SIM_US, .read_page_ns = 80 * SIM_US,
		.page_cross_ns = 12 * SIM_US, .au_cross_ns = 25 * SIM_US,
		.write_base_ns = 60 * SIM_US, .write_page_ns = 160 * SIM_US,
		.gc_page_ns = 60 * SIM_US, .erase_ns = 1500 * SIM_US,
		.random_write_ns = 150 * SIM_US,
		.jitter_pct = 3, .stall_ppm = 300, .stall_ns = 2 * SIM_MS,
		.location_pct = 2, .seed = 5,
	},
	{
		.name = "emmc-4k",
		.description = "the emmc card in 4KiB native-sector mode "
			       "(eMMC 4.5 large sectors): 4096-byte sectors",
		.size_bytes = SIM_GIB, .sector_bytes = 4096,
		.page_bytes = 16 * SIM_KIB, .erase_bytes = 512 * SIM_KIB,
		.open_au_linear = 8, .open_au_random = 8,
		.read_base_ns = 120 * SIM_US, .read_page_ns = 80 * SIM_US,
		.page_cross_ns = 12 * SIM_US, .au_cross_ns = 25 * SIM_US,
		.write_base_ns = 60 * SIM_US, .write_page_ns = 160 * SIM_US,
		.gc_page_ns = 60 * SIM_US, .erase_ns = 1500 * SIM_US,
		.random_write_ns = 150 * SIM_US,
		.jitter_pct = 3, .stall_ppm = 300, .stall_ns = 2 * SIM_MS,
		.location_pct = 2, .seed = 6,
	},
	{
		.name = "legacy-128k",
		.description = "old ~1GB SD card: 128KiB erase, 2KiB page, "
			       "slow writes, 2 open AUs, 1MiB FAT area",
		.size_bytes = SIM_GIB, .sector_bytes = 512,
		.page_bytes = 2 * SIM_KIB, .erase_bytes = 128 * SIM_KIB,
		.open_au_linear = 2, .open_au_random = 0,
		.fat_start_bytes = 0, .fat_bytes = SIM_MIB,
		.read_base_ns = 1200 * SIM_US, .read_page_ns = 100 * SIM_US,
		.page_cross_ns = 90 * SIM_US, .au_cross_ns = 350 * SIM_US,
		.erased_reads_fast = true,
		.write_base_ns = 300 * SIM_US, .write_page_ns = 1000 * SIM_US,
		.gc_page_ns = 700 * SIM_US, .erase_ns = 2 * SIM_MS,
		.fat_random_ns = 5 * SIM_MS, .fat_page_pct = 100,
		.jitter_pct = 4, .stall_ppm = 100, .stall_ns = 10 * SIM_MS,
		.location_pct = 2, .seed = 128,
	},
	{
		.name = "np2-3m",
		.description = "non-power-of-two 3MiB erase block (flashbench "
			       "c32531a), 16KiB page, 2 open AUs",
		.size_bytes = 1536 * SIM_MIB, .sector_bytes = 512,
		.page_bytes = 16 * SIM_KIB, .erase_bytes = 3 * SIM_MIB,
		.open_au_linear = 2, .open_au_random = 0,
		.read_base_ns = 900 * SIM_US, .read_page_ns = 120 * SIM_US,
		.page_cross_ns = 250 * SIM_US, .au_cross_ns = 600 * SIM_US,
		.erased_reads_fast = true,
		.write_base_ns = 400 * SIM_US, .write_page_ns = 1500 * SIM_US,
		.gc_page_ns = 1000 * SIM_US, .erase_ns = 4 * SIM_MS,
		.jitter_pct = 3, .stall_ppm = 50, .stall_ns = 8 * SIM_MS,
		.location_pct = 1, .seed = 3,
	},
	{
		.name = "np2-6m",
		.description = "non-power-of-two 6MiB erase block, 16KiB page, "
			       "4/2 open AUs, one-AU FAT area",
		.size_bytes = 1536 * SIM_MIB, .sector_bytes = 512,
		.page_bytes = 16 * SIM_KIB, .erase_bytes = 6 * SIM_MIB,
		.open_au_linear = 4, .open_au_random = 2,
		.fat_start_bytes = 0, .fat_bytes = 6 * SIM_MIB,
		.read_base_ns = 1000 * SIM_US, .read_page_ns = 120 * SIM_US,
		.page_cross_ns = 200 * SIM_US, .au_cross_ns = 550 * SIM_US,
		.erased_reads_fast = true,
		.write_base_ns = 400 * SIM_US, .write_page_ns = 1400 * SIM_US,
		.gc_page_ns = 900 * SIM_US, .erase_ns = 5 * SIM_MS,
		.random_write_ns = 8 * SIM_MS,
		.fat_random_ns = 20 * SIM_MS, .fat_page_pct = 150,
		.jitter_pct = 3, .stall_ppm = 50, .stall_ns = 8 * SIM_MS,
		.location_pct = 1, .seed = 6,
	},
	{
		.name = "np2-12m",
		.description = "12MiB erase block (an SD-spec AU size), 16KiB "
			       "page, 6/6 open AUs",
		.size_bytes = 1536 * SIM_MIB, .sector_bytes = 512,
		.page_bytes = 16 * SIM_KIB, .erase_bytes = 12 * SIM_MIB,
		.open_au_linear = 6, .open_au_random = 6,
		.read_base_ns = 850 * SIM_US, .read_page_ns = 100 * SIM_US,
		.page_cross_ns = 180 * SIM_US, .au_cross_ns = 450 * SIM_US,
		.erased_reads_fast = true,
		.write_base_ns = 300 * SIM_US, .write_page_ns = 1000 * SIM_US,
		.gc_page_ns = 700 * SIM_US, .erase_ns = 6 * SIM_MS,
		.random_write_ns = 5 * SIM_MS,
		.jitter_pct = 3, .stall_ppm = 50, .stall_ns = 8 * SIM_MS,
		.location_pct = 1, .seed = 12,
	},
	{
		.name = "flat",
		.description = "Kingston SA04G plateau: 560us at every 16KiB "
			       "boundary, 680us at 4MiB (a real step, not "
			       "ambiguous), 3/3 open AUs",
		.size_bytes = SIM_GIB, .sector_bytes = 512,
		.page_bytes = 16 * SIM_KIB, .raw_page_bytes = 8 * SIM_KIB,
		.erase_bytes = 4 * SIM_MIB,
		.open_au_linear = 3, .open_au_random = 3,
		.read_base_ns = 1650 * SIM_US, .read_page_ns = 160 * SIM_US,
		.raw_cross_ns = 12 * SIM_US, .page_cross_ns = 560 * SIM_US,
		.au_cross_ns = 680 * SIM_US,
		.write_base_ns = 1200 * SIM_US, .write_page_ns = 3200 * SIM_US,
		.gc_page_ns = 1600 * SIM_US, .erase_ns = 5 * SIM_MS,
		.random_write_ns = 9 * SIM_MS,
		.jitter_pct = 3, .stall_ppm = 50, .stall_ns = 10 * SIM_MS,
		.location_pct = 1, .seed = 2013,
	},
	{
		.name = "nopattern",
		.description = "no read pattern at all (Samsung in johnlane/"
			       "sdinfo, NVMe): undetermined is the honest "
			       "answer; writes: 4MiB AU, 3/1 open",
		.size_bytes = SIM_GIB, .sector_bytes = 512,
		.page_bytes = 0, .erase_bytes = 4 * SIM_MIB,
		.open_au_linear = 3, .open_au_random = 1, .ambiguous = true,
		.read_base_ns = 1000 * SIM_US, .read_page_ns = 120 * SIM_US,
		.write_base_ns = 400 * SIM_US, .write_page_ns = 1500 * SIM_US,
		.gc_page_ns = 600 * SIM_US, .erase_ns = 4 * SIM_MS,
		.random_write_ns = 6 * SIM_MS,
		.jitter_pct = 8, .stall_ppm = 200, .stall_ns = 5 * SIM_MS,
		.location_pct = 5, .seed = 27,
	},
	{
		.name = "usb-8m",
		.description = "USB stick (Patriot Xporter): 8MiB erase, 220us "
			       "AU step, page not observable, 2 open AUs",
		.size_bytes = SIM_GIB, .sector_bytes = 512,
		SIM_USB_8M_STICK, .seed = 8,
	},
	{
		.name = "sandisk-24m",
		.description = "SanDisk Ultra 64GB via USB2 reader: 24MiB "
			       "erase, 48KiB page over 16KiB units, 64/64 "
			       "open AUs",
		.size_bytes = 3 * SIM_GIB, .sector_bytes = 512,
		.page_bytes = 48 * SIM_KIB, .raw_page_bytes = 16 * SIM_KIB,
		.erase_bytes = 24 * SIM_MIB,
		.open_au_linear = 64, .open_au_random = 64,
		.read_base_ns = 850 * SIM_US, .read_page_ns = 1400 * SIM_US,
		.raw_cross_ns = 8 * SIM_US, .page_cross_ns = 150 * SIM_US,
		.au_cross_ns = 400 * SIM_US, .erased_reads_fast = true,
		.write_base_ns = 300 * SIM_US, .write_page_ns = 2800 * SIM_US,
		.gc_page_ns = 1500 * SIM_US, .erase_ns = 6 * SIM_MS,
		.random_write_ns = 500 * SIM_US,
		.jitter_pct = 4, .stall_ppm = 100, .stall_ns = 10 * SIM_MS,
		.location_pct = 1, .seed = 64,
	},
	{
		.name = "fake-wrap",
		.description = "counterfeit 64GiB microSDXC holding 8GiB: the "
			       "controller ignores the high address bits, so "
			       "writes past 8GiB wrap to the start (sdhc-4m "
			       "timing)",
		.size_bytes = 64 * SIM_GIB, .sector_bytes = 512,
		SIM_SDHC_4M_CARD, .seed = 81,
		.fake = SIM_FAKE_WRAP, .real_bytes = 8 * SIM_GIB,
	},
	{
		.name = "fake-limbo",
		.description = "counterfeit 64GiB card holding 8GiB: writes past "
			       "8GiB are acknowledged and lost, reads there "
			       "return zeros (sdhc-4m timing)",
		.size_bytes = 64 * SIM_GIB, .sector_bytes = 512,
		SIM_SDHC_4M_CARD, .seed = 82,
		.fake = SIM_FAKE_LIMBO, .real_bytes = 8 * SIM_GIB,
	},
	{
		.name = "fake-cache",
		.description = "counterfeit 32GiB USB stick holding 4GiB (limbo) "
			       "with a 16MiB write cache that serves recent "
			       "writes: only a cache flush shows the loss "
			       "(usb-8m timing)",
		.size_bytes = 32 * SIM_GIB, .sector_bytes = 512,
		SIM_USB_8M_STICK, .seed = 83,
		.fake = SIM_FAKE_LIMBO, .real_bytes = 4 * SIM_GIB,
		.cache_bytes = 16 * SIM_MIB,
	},
	{ .name = "" },
};

const struct sim_profile *sim_profile_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (const struct sim_profile *p = sim_profiles; p->name[0]; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Validation */


static bool sim_is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

/* The alias period of a wrap card: given, or the smallest power of two
 * holding the real flash (the address bits a controller keeps). */
uint64_t sim_wrap_period(const struct sim_profile *p)
{
	uint64_t period = 1;

	if (p->period_bytes)
		return p->period_bytes;
	while (period < p->real_bytes && period <= UINT64_MAX / 2)
		period *= 2;
	return period;
}

/* The unit pages are programmed, copied and transferred in: the page, or
 * when no page is observable a plausible 16 KiB (never larger than what
 * divides the erase block). */
static uint64_t sim_unit_bytes(const struct sim_profile *p)
{
	uint64_t u = SIM_DEFAULT_UNIT_BYTES;

	if (p->page_bytes)
		return p->page_bytes;
	if (p->raw_page_bytes)
		return p->raw_page_bytes;
	while (u > 1 && p->erase_bytes % u != 0)
		u /= 2;
	return u;
}

/* Read-side levels from small to large, with their parse-key names. */
struct sim_level {
	const char *key;
	uint64_t bytes;
};

static int sim_validate_levels(const struct sim_profile *p, char *err,
			       size_t errlen)
{
	const struct sim_level lv[] = {
		{ "raw_page", p->raw_page_bytes }, { "page", p->page_bytes },
		{ "subau", p->subau_bytes }, { "erase", p->erase_bytes },
	};
	const struct sim_level *lower = NULL;

	for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		if (lv[i].bytes == 0)
			continue;
		if (lv[i].bytes % p->sector_bytes != 0) {
			fp_errf(err, errlen, "sector (%u) must divide %s (%llu)",
				p->sector_bytes, lv[i].key,
				(unsigned long long)lv[i].bytes);
			return -EINVAL;
		}
		if (lower && (lower->bytes >= lv[i].bytes ||
			      lv[i].bytes % lower->bytes != 0)) {
			fp_errf(err, errlen,
				"%s (%llu) must be smaller than %s (%llu) and "
				"divide it", lower->key,
				(unsigned long long)lower->bytes, lv[i].key,
				(unsigned long long)lv[i].bytes);
			return -EINVAL;
		}
		lower = &lv[i];
	}
	return 0;
}

static int sim_validate_range_list(const struct sim_profile *p,
				   const struct sim_ranges *rs,
				   const char *key, char *err, size_t errlen)
{
	if (rs->n > SIM_MAX_RANGES) {
		fp_errf(err, errlen, "at most %u %s ranges", SIM_MAX_RANGES, key);
		return -EINVAL;
	}
	for (unsigned i = 0; i < rs->n; i++) {
		const struct sim_range *r = &rs->r[i];

		if (r->bytes == 0 || r->start_bytes > p->size_bytes ||
		    r->bytes > p->size_bytes - r->start_bytes) {
			fp_errf(err, errlen, "%s range %u is empty or passes the "
				"end of the device", key, i + 1);
			return -EINVAL;
		}
	}
	return 0;
}

/* The capacity truth: a fake card's real flash is a positive multiple
 * of the sector below the reported size; a wrap period holds the real
 * flash and repeats inside the device: the smallest power of two that
 * holds it unless given (any multiple of 4 KiB: a controller that maps
 * addresses modulo a size that is not a power of two). */
static int sim_validate_capacity(const struct sim_profile *p, char *err,
				 size_t errlen)
{
	if (p->cache_bytes % SIM_BLOCK_BYTES || p->cache_bytes > SIM_MAX_CACHE_BYTES) {
		fp_errf(err, errlen, "cache must be a multiple of 4KiB up to 1GiB");
		return -EINVAL;
	}
	if ((p->cache_direct && !p->cache_bytes) || (p->cache_strict && !p->cache_direct)) {
		fp_errf(err, errlen, "cache_direct needs cache=SIZE, cache_strict "
			"needs cache_direct");
		return -EINVAL;
	}
	if (p->cache_logical && (!p->cache_bytes || p->cache_direct)) {
		fp_errf(err, errlen, "cache_logical needs cache=SIZE without cache_direct");
		return -EINVAL;
	}
	if (p->map_on_write && p->fake != SIM_FAKE_WRAP) {
		fp_errf(err, errlen, "map_on_write needs fake=wrap");
		return -EINVAL;
	}
	if (p->fake == SIM_FAKE_NONE)
		return 0;
	if (p->real_bytes == 0 || p->real_bytes >= p->size_bytes ||
	    p->real_bytes % p->sector_bytes) {
		fp_errf(err, errlen, "real (%llu) must be a multiple of sector "
			"below size (%llu) on a fake card",
			(unsigned long long)p->real_bytes,
			(unsigned long long)p->size_bytes);
		return -EINVAL;
	}
	if (p->fake == SIM_FAKE_WRAP && p->period_bytes &&
	    (p->period_bytes % SIM_BLOCK_BYTES || p->period_bytes < p->real_bytes ||
	     p->period_bytes >= p->size_bytes)) {
		fp_errf(err, errlen, "period (%llu) must be a multiple of 4KiB from "
			"real up to below size", (unsigned long long)p->period_bytes);
		return -EINVAL;
	}
	if (p->fake == SIM_FAKE_ALLOC && p->real_bytes % p->erase_bytes) {
		fp_errf(err, errlen, "real must be whole erase blocks for fake=alloc");
		return -EINVAL;
	}
	if (p->fake == SIM_FAKE_WRAP && !p->period_bytes &&
	    sim_wrap_period(p) >= p->size_bytes) {
		fp_errf(err, errlen, "real must be at most half the size for fake=wrap");
		return -EINVAL;
	}
	return 0;
}

static int sim_validate_ranges(const struct sim_profile *p, char *err,
			       size_t errlen)
{
	const struct {
		const struct sim_ranges *rs;
		const char *key;
	} lists[] = {
		{ &p->eio, "eio" }, { &p->lost, "lost" },
		{ &p->eio_write, "eio_write" }, { &p->corrupt, "corrupt" },
		{ &p->slow, "slow" },
	};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(lists) / sizeof(lists[0]); i++)
		rc = sim_validate_range_list(p, lists[i].rs, lists[i].key, err, errlen);
	if (rc == 0 && p->slow.n && p->read_retry_ns == 0) {
		fp_errf(err, errlen, "slow ranges need read_retry (the extra time of a read there)");
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = sim_validate_capacity(p, err, errlen);
	return rc;
}

static int sim_validate_areas(const struct sim_profile *p, char *err,
			      size_t errlen)
{
	uint64_t e = p->erase_bytes;

	if (p->fat_start_bytes % e != 0 || p->fat_bytes % e != 0) {
		fp_errf(err, errlen,
			"fat_start and fat must be multiples of erase (%llu)",
			(unsigned long long)e);
		return -EINVAL;
	}
	if (p->fat_start_bytes > p->size_bytes ||
	    p->fat_bytes > p->size_bytes - p->fat_start_bytes) {
		fp_errf(err, errlen, "FAT area passes the end of the device");
		return -EINVAL;
	}
	if (p->bad_start_bytes > p->size_bytes ||
	    p->bad_bytes > p->size_bytes - p->bad_start_bytes) {
		fp_errf(err, errlen, "bad range passes the end of the device");
		return -EINVAL;
	}
	return sim_validate_ranges(p, err, errlen);
}

static int sim_validate_counts(const struct sim_profile *p, char *err,
			       size_t errlen)
{
	const struct {
		const char *key;
		unsigned val, max;
	} lim[] = {
		{ "jitter", p->jitter_pct, SIM_MAX_PCT },
		{ "location", p->location_pct, SIM_MAX_PCT },
		{ "stall_ppm", p->stall_ppm, SIM_PPM },
		{ "write_stall_ppm", p->write_stall_ppm, SIM_PPM },
		{ "fat_page_pct", p->fat_page_pct, SIM_MAX_FAT_PAGE_PCT },
		{ "open_linear", p->open_au_linear, SIM_MAX_OPEN },
	};

	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		if (lim[i].val > lim[i].max) {
			fp_errf(err, errlen, "%s must be at most %u (got %u)",
				lim[i].key, lim[i].max, lim[i].val);
			return -EINVAL;
		}
	}
	if (p->open_au_linear == 0) {
		fp_errf(err, errlen, "open_linear must be at least 1");
		return -EINVAL;
	}
	if (p->open_au_random > p->open_au_linear) {
		fp_errf(err, errlen,
			"open_random (%u) must not exceed open_linear (%u)",
			p->open_au_random, p->open_au_linear);
		return -EINVAL;
	}
	return 0;
}

int sim_profile_validate(const struct sim_profile *p, char *err, size_t errlen)
{
	int rc;

	if (p == NULL) {
		fp_errf(err, errlen, "no profile");
		return -EINVAL;
	}
	if (!sim_is_pow2(p->sector_bytes) || p->sector_bytes < 512 ||
	    p->sector_bytes > 64 * SIM_KIB) {
		fp_errf(err, errlen,
			"sector (%u) must be a power of two from 512 to 65536",
			p->sector_bytes);
		return -EINVAL;
	}
	if (p->size_bytes == 0 || p->size_bytes % p->sector_bytes != 0) {
		fp_errf(err, errlen,
			"size (%llu) must be a positive multiple of sector (%u)",
			(unsigned long long)p->size_bytes, p->sector_bytes);
		return -EINVAL;
	}
	if (p->erase_bytes == 0 || p->size_bytes % p->erase_bytes != 0) {
		fp_errf(err, errlen, "erase (%llu) must divide size (%llu)",
			(unsigned long long)p->erase_bytes,
			(unsigned long long)p->size_bytes);
		return -EINVAL;
	}
	rc = sim_validate_levels(p, err, errlen);
	if (rc == 0 && p->size_bytes / p->erase_bytes > SIM_MAX_AUS) {
		fp_errf(err, errlen, "too many erase blocks (at most %llu)",
			(unsigned long long)SIM_MAX_AUS);
		rc = -EINVAL;
	}
	if (rc == 0 && p->erase_bytes / sim_unit_bytes(p) > SIM_MAX_PAGES_PER_AU) {
		fp_errf(err, errlen, "erase holds too many pages (at most %llu)",
			(unsigned long long)SIM_MAX_PAGES_PER_AU);
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = sim_validate_areas(p, err, errlen);
	if (rc == 0)
		rc = sim_validate_counts(p, err, errlen);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Parsing "NAME,key=value,..." */

enum sim_key_kind {
	SIM_KEY_BYTES,		/* uint64_t, units_parse_size */
	SIM_KEY_BYTES32,	/* uint32_t, units_parse_size */
	SIM_KEY_NS,		/* uint64_t, time with suffix */
	SIM_KEY_UINT,		/* unsigned */
	SIM_KEY_U64,		/* uint64_t, plain decimal */
	SIM_KEY_BOOL,		/* bool */
	SIM_KEY_FAKE,		/* enum sim_fake by name */
	SIM_KEY_RANGE,		/* START+LEN appended to a struct sim_ranges */
};

struct sim_key {
	const char *name;
	size_t offset;
	enum sim_key_kind kind;
};

#define SIM_KEY(name, field, kind) \
	{ name, offsetof(struct sim_profile, field), kind }

static const struct sim_key sim_keys[] = {
	SIM_KEY("size", size_bytes, SIM_KEY_BYTES),
	SIM_KEY("sector", sector_bytes, SIM_KEY_BYTES32),
	SIM_KEY("page", page_bytes, SIM_KEY_BYTES),
	SIM_KEY("raw_page", raw_page_bytes, SIM_KEY_BYTES),
	SIM_KEY("subau", subau_bytes, SIM_KEY_BYTES),
	SIM_KEY("erase", erase_bytes, SIM_KEY_BYTES),
	SIM_KEY("open_linear", open_au_linear, SIM_KEY_UINT),
	SIM_KEY("open_random", open_au_random, SIM_KEY_UINT),
	SIM_KEY("fat_start", fat_start_bytes, SIM_KEY_BYTES),
	SIM_KEY("fat", fat_bytes, SIM_KEY_BYTES),
	SIM_KEY("read_base", read_base_ns, SIM_KEY_NS),
	SIM_KEY("read_page", read_page_ns, SIM_KEY_NS),
	SIM_KEY("raw_cross", raw_cross_ns, SIM_KEY_NS),
	SIM_KEY("page_cross", page_cross_ns, SIM_KEY_NS),
	SIM_KEY("subau_cross", subau_cross_ns, SIM_KEY_NS),
	SIM_KEY("au_cross", au_cross_ns, SIM_KEY_NS),
	SIM_KEY("erased_fast", erased_reads_fast, SIM_KEY_BOOL),
	SIM_KEY("fresh", fresh, SIM_KEY_BOOL),
	SIM_KEY("restart_random", restart_random, SIM_KEY_BOOL),
	SIM_KEY("page_wp", page_wp, SIM_KEY_BOOL),
	SIM_KEY("write_base", write_base_ns, SIM_KEY_NS),
	SIM_KEY("write_page", write_page_ns, SIM_KEY_NS),
	SIM_KEY("gc_page", gc_page_ns, SIM_KEY_NS),
	SIM_KEY("erase_time", erase_ns, SIM_KEY_NS),
	SIM_KEY("random_write", random_write_ns, SIM_KEY_NS),
	SIM_KEY("fat_random", fat_random_ns, SIM_KEY_NS),
	SIM_KEY("fat_page_pct", fat_page_pct, SIM_KEY_UINT),
	SIM_KEY("jitter", jitter_pct, SIM_KEY_UINT),
	SIM_KEY("stall_ppm", stall_ppm, SIM_KEY_UINT),
	SIM_KEY("stall", stall_ns, SIM_KEY_NS),
	SIM_KEY("location", location_pct, SIM_KEY_UINT),
	SIM_KEY("seed", seed, SIM_KEY_U64),
	SIM_KEY("bad_start", bad_start_bytes, SIM_KEY_BYTES),
	SIM_KEY("bad", bad_bytes, SIM_KEY_BYTES),
	SIM_KEY("eio", eio, SIM_KEY_RANGE),
	SIM_KEY("lost", lost, SIM_KEY_RANGE),
	SIM_KEY("fake", fake, SIM_KEY_FAKE),
	SIM_KEY("real", real_bytes, SIM_KEY_BYTES),
	SIM_KEY("period", period_bytes, SIM_KEY_BYTES),
	SIM_KEY("cache", cache_bytes, SIM_KEY_BYTES),
	SIM_KEY("cache_direct", cache_direct, SIM_KEY_BOOL),
	SIM_KEY("cache_strict", cache_strict, SIM_KEY_BOOL),
	SIM_KEY("map_on_write", map_on_write, SIM_KEY_BOOL),
	SIM_KEY("cache_logical", cache_logical, SIM_KEY_BOOL),
	SIM_KEY("eio_write", eio_write, SIM_KEY_RANGE),
	SIM_KEY("corrupt", corrupt, SIM_KEY_RANGE),
	SIM_KEY("slow", slow, SIM_KEY_RANGE),
	SIM_KEY("read_retry", read_retry_ns, SIM_KEY_NS),
	SIM_KEY("ro_after", ro_after_bytes, SIM_KEY_BYTES),
	SIM_KEY("ro_silent", ro_silent, SIM_KEY_BOOL),
	SIM_KEY("wear", wear_ns, SIM_KEY_NS),
	SIM_KEY("write_stall_ppm", write_stall_ppm, SIM_KEY_UINT),
	SIM_KEY("write_stall", write_stall_ns, SIM_KEY_NS),
	SIM_KEY("wbuf", wbuf_bytes, SIM_KEY_BYTES),
	SIM_KEY("wbuf_write", wbuf_write_ns, SIM_KEY_NS),
	SIM_KEY("wbuf_back", wbuf_back, SIM_KEY_BOOL),
};

static const char *const sim_fake_names[] = {
	[SIM_FAKE_NONE] = "none", [SIM_FAKE_WRAP] = "wrap",
	[SIM_FAKE_LIMBO] = "limbo", [SIM_FAKE_ALLOC] = "alloc",
};

static const struct sim_key *sim_key_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(sim_keys) / sizeof(sim_keys[0]); i++)
		if (strlen(sim_keys[i].name) == len &&
		    memcmp(sim_keys[i].name, name, len) == 0)
			return &sim_keys[i];
	return NULL;
}

static int sim_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Parse val as the kind of key k into *v (booleans as 0 or 1). */
static int sim_key_value(const struct sim_key *k, const char *val,
			 uint64_t *v)
{
	bool b = false;
	int rc;

	switch (k->kind) {
	case SIM_KEY_BYTES:
		return units_parse_size(val, v);
	case SIM_KEY_BYTES32:
		rc = units_parse_size(val, v);
		return rc == 0 && *v > UINT32_MAX ? -ERANGE : rc;
	case SIM_KEY_NS:
		return units_parse_duration(val, 1, v);	/* bare: ns */
	case SIM_KEY_UINT:
		return units_parse_uint(val, UINT_MAX, v);
	case SIM_KEY_U64:
		return units_parse_uint(val, UINT64_MAX, v);
	case SIM_KEY_BOOL:
		rc = sim_parse_bool(val, &b);
		*v = b;
		return rc;
	case SIM_KEY_FAKE:
		for (size_t i = 0; i < sizeof(sim_fake_names) / sizeof(sim_fake_names[0]); i++)
			if (strcmp(val, sim_fake_names[i]) == 0) {
				*v = i;
				return 0;
			}
		return -EINVAL;
	case SIM_KEY_RANGE:
		return -EINVAL;	/* sim_range_append() */
	}
	return -EINVAL;
}

/* "START+LEN" appended to the ranges field k names. */
static int sim_range_append(const struct sim_key *k, const char *val,
			    struct sim_profile *p)
{
	struct sim_ranges rs;
	const char *plus = strchr(val, '+');
	char start[64];
	uint64_t a, n;

	if (plus == NULL || (size_t)(plus - val) >= sizeof(start))
		return -EINVAL;
	memcpy(start, val, (size_t)(plus - val));
	start[plus - val] = '\0';
	if (units_parse_size(start, &a) || units_parse_size(plus + 1, &n))
		return -EINVAL;
	memcpy(&rs, (char *)p + k->offset, sizeof(rs));
	if (rs.n >= SIM_MAX_RANGES)
		return -E2BIG;
	rs.r[rs.n++] = (struct sim_range){ a, n };
	memcpy((char *)p + k->offset, &rs, sizeof(rs));
	return 0;
}

/* Store v into the field of *p that k names, at the field's width. */
static void sim_key_store(const struct sim_key *k, uint64_t v,
			  struct sim_profile *p)
{
	char *dst = (char *)p + k->offset;
	uint32_t v32 = (uint32_t)v;
	unsigned u = (unsigned)v;
	bool b = v != 0;

	switch (k->kind) {
	case SIM_KEY_BYTES32:
		memcpy(dst, &v32, sizeof(v32));
		break;
	case SIM_KEY_UINT:
		memcpy(dst, &u, sizeof(u));
		break;
	case SIM_KEY_FAKE: {
		enum sim_fake f = (enum sim_fake)v;

		memcpy(dst, &f, sizeof(f));
		break;
	}
	case SIM_KEY_RANGE:
		break;
	case SIM_KEY_BOOL:
		memcpy(dst, &b, sizeof(b));
		break;
	case SIM_KEY_BYTES:
	case SIM_KEY_NS:
	case SIM_KEY_U64:
		memcpy(dst, &v, sizeof(v));
		break;
	}
}

/* Apply one "key=value" option of length len. */
static int sim_apply_option(const char *spec, const char *opt, size_t len,
			    struct sim_profile *p, char *err, size_t errlen)
{
	const char *eq = memchr(opt, '=', len);
	const struct sim_key *k;
	char val[64];
	uint64_t v;
	size_t klen = eq ? (size_t)(eq - opt) : len;

	if (len == 0) {
		fp_errf(err, errlen, "empty option in 'sim:%s'", spec);
		return -EINVAL;
	}
	k = sim_key_find(opt, klen);
	if (k == NULL) {
		fp_errf(err, errlen, "unknown key '%.*s' in 'sim:%s'", (int)klen,
			opt, spec);
		return -EINVAL;
	}
	if (eq == NULL) {
		fp_errf(err, errlen, "missing value for '%s' in 'sim:%s'",
			k->name, spec);
		return -EINVAL;
	}
	len -= klen + 1;
	if (len < sizeof(val)) {
		memcpy(val, eq + 1, len);
		val[len] = '\0';
		int rc = k->kind == SIM_KEY_RANGE ? sim_range_append(k, val, p)
						  : sim_key_value(k, val, &v);

		if (rc == 0 && k->kind != SIM_KEY_RANGE)
			sim_key_store(k, v, p);
		if (rc == 0)
			return 0;
		if (rc == -E2BIG) {
			fp_errf(err, errlen, "at most %u %s ranges", SIM_MAX_RANGES,
				k->name);
			return -EINVAL;
		}
	}
	fp_errf(err, errlen, "bad value '%.*s' for '%s'", (int)len, eq + 1,
		k->name);
	return -EINVAL;
}

int sim_profile_parse(const char *spec, struct sim_profile *p, char *err,
		      size_t errlen)
{
	const struct sim_profile *base;
	struct sim_profile tmp;
	const char *comma, *opt;
	size_t nlen;
	int rc;

	if (spec == NULL || p == NULL) {
		fp_errf(err, errlen, "no simulated card given");
		return -EINVAL;
	}
	comma = strchr(spec, ',');
	nlen = comma ? (size_t)(comma - spec) : strlen(spec);
	if (nlen == 0) {
		fp_errf(err, errlen,
			"missing simulated card name (see flashprobe list-sims)");
		return -EINVAL;
	}
	for (base = sim_profiles; base->name[0]; base++)
		if (strlen(base->name) == nlen &&
		    memcmp(base->name, spec, nlen) == 0)
			break;
	if (base->name[0] == '\0') {
		fp_errf(err, errlen,
			"unknown simulated card '%.*s' (see flashprobe list-sims)",
			(int)nlen, spec);
		return -EINVAL;
	}
	tmp = *base;
	for (opt = comma; opt != NULL; opt = comma) {
		opt++;
		comma = strchr(opt, ',');
		nlen = comma ? (size_t)(comma - opt) : strlen(opt);
		rc = sim_apply_option(spec, opt, nlen, &tmp, err, errlen);
		if (rc < 0)
			return rc;
	}
	rc = sim_profile_validate(&tmp, err, errlen);
	if (rc < 0)
		return rc;
	*p = tmp;
	return 0;
}

/* ------------------------------------------------------------------ */
/* State */

enum sim_au_fill {
	SIM_AU_ERASED,		/* never written: no valid page */
	SIM_AU_PARTIAL,		/* some pages valid (bitmap) */
	SIM_AU_FULL,		/* every page valid */
};

struct sim_au {
	uint64_t *valid;	/* page bitmap, only while SIM_AU_PARTIAL */
	uint32_t nvalid;	/* pages set in valid */
	int32_t slot;		/* open-pool slot, or SIM_NO_SLOT */
	uint8_t fill;		/* enum sim_au_fill */
};

/* One open AU: the new physical block being filled. */
struct sim_slot {
	bool used;
	bool random;		/* page-mapped: accepts any order */
	uint64_t au;
	uint64_t wp_bytes;	/* AU-relative: everything below is done */
	uint64_t stamp;		/* last write, for LRU */
	uint64_t *written;	/* pages programmed or copied this cycle */
	uint64_t nwritten;	/* pages set in written */
};

/* Data of SIM_LEAF_BLOCKS blocks: a block either has a buffer or is
 * filled with one byte. */
struct sim_leaf {
	uint8_t *buf[SIM_LEAF_BLOCKS];
	uint8_t fill[SIM_LEAF_BLOCKS];
};

/* A write cache of 4 KiB blocks, filled in FIFO order, in front of the
 * flash but after the address folding of a wrap card (aliases share an
 * entry): a read of a cached block returns what was written last, also
 * when the flash dropped it.  An open-addressing table finds the slot of
 * a block. */
struct sim_cache {
	size_t n;			/* slots: cache_bytes / 4 KiB */
	size_t next;			/* slot the next new block takes */
	uint64_t *block;		/* logical block + 1 per slot, 0 = free */
	uint8_t *data;			/* n blocks */
	size_t *table;			/* slot + 1, 0 = empty */
	size_t mask;			/* table size - 1 */
};

/* One write in a wbuf_back buffer: its bytes, and the flash time it
 * still owes. */
struct sim_wbuf_write {
	uint64_t bytes, ns;
};

struct sim {
	struct sim_profile prof;
	uint64_t phys_bytes;		/* flash behind the reported size */
	uint64_t period_bytes;		/* offsets alias modulo this */
	struct sim_cache cache;
	uint64_t *mapped;		/* map_on_write: one bit per 4 KiB block
					 * from the period on, set once written */
	uint32_t *alloc;		/* fake=alloc: per erase block, 1 + the
					 * flash unit it was given (0: none) */
	uint32_t alloc_used;		/* flash units given out */
	uint64_t now_ns;		/* the virtual clock */
	struct stats_rng rng;		/* jitter and stalls */
	uint64_t unit_bytes;		/* program page */
	uint64_t pages_per_au;
	size_t map_words;		/* uint64_t words of a page bitmap */
	uint64_t nau;
	struct sim_au *aus;
	struct sim_slot *slots;
	unsigned nrandom;		/* slots in random mode */
	uint64_t stamp;
	uint64_t *fat_wp_bytes;		/* per FAT-area AU */
	uint64_t nblocks;		/* 4 KiB data blocks */
	struct sim_leaf **leaves;	/* nblocks / SIM_LEAF_BLOCKS, rounded up */
	size_t nleaves;
	uint64_t mem_bytes;
	uint64_t written_bytes;		/* acknowledged writes since the open */
	uint64_t nwrites;		/* write requests, for write stalls */
	bool read_only;			/* ro_after reached */
	uint64_t wbuf_fill_bytes;	/* write buffer: bytes not yet drained */
	uint64_t wbuf_debt_ns;		/* flash time owed for them */
	/* wbuf_back: the buffered writes in order, oldest at q_head (a ring
	 * of q_cap) */
	struct sim_wbuf_write *wbuf_q;
	size_t wbuf_q_head, wbuf_q_len, wbuf_q_cap;
};

/* Allocation with accounting, so sim_mem_bytes() is exact. */
static void *sim_calloc(struct sim *s, size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p != NULL)
		s->mem_bytes += (uint64_t)n * size;
	return p;
}

static void sim_free(struct sim *s, void *p, size_t bytes)
{
	if (p == NULL)
		return;
	free(p);
	s->mem_bytes -= bytes;
}

static size_t sim_map_bytes(const struct sim *s)
{
	return s->map_words * sizeof(uint64_t);
}

static bool sim_bit(const uint64_t *map, uint64_t i)
{
	return (map[i / 64] >> (i % 64)) & 1;
}

static void sim_bit_set(uint64_t *map, uint64_t i)
{
	map[i / 64] |= UINT64_C(1) << (i % 64);
}

static void sim_destroy(struct sim *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nleaves; i++) {
		if (s->leaves[i] == NULL)
			continue;
		for (size_t k = 0; k < SIM_LEAF_BLOCKS; k++)
			free(s->leaves[i]->buf[k]);
		free(s->leaves[i]);
	}
	free(s->leaves);
	free(s->wbuf_q);
	for (uint64_t a = 0; s->aus && a < s->nau; a++)
		free(s->aus[a].valid);
	free(s->aus);
	for (unsigned i = 0; s->slots && i < s->prof.open_au_linear; i++)
		free(s->slots[i].written);
	free(s->slots);
	free(s->fat_wp_bytes);
	free(s->cache.block);
	free(s->cache.data);
	free(s->cache.table);
	free(s->mapped);
	free(s->alloc);
	free(s);
}

static int sim_cache_create(struct sim *s)
{
	struct sim_cache *c = &s->cache;
	size_t slots = 1;

	c->n = (size_t)(s->prof.cache_bytes / SIM_BLOCK_BYTES);
	if (c->n == 0)
		return 0;
	while (slots < 2 * c->n)
		slots *= 2;
	c->mask = slots - 1;
	c->block = sim_calloc(s, c->n, sizeof(*c->block));
	c->table = sim_calloc(s, slots, sizeof(*c->table));
	return c->block && c->table ? 0 : -ENOMEM;	/* data on first write */
}

static struct sim *sim_create(const struct sim_profile *p)
{
	struct sim *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->mem_bytes = sizeof(*s);
	s->prof = *p;
	stats_rng_seed(&s->rng, p->seed);
	s->unit_bytes = sim_unit_bytes(p);
	s->pages_per_au = p->erase_bytes / s->unit_bytes;
	s->map_words = (size_t)((s->pages_per_au + 63) / 64);
	s->nau = p->size_bytes / p->erase_bytes;
	s->phys_bytes = p->fake == SIM_FAKE_NONE ? p->size_bytes : p->real_bytes;
	s->period_bytes = p->fake == SIM_FAKE_WRAP ? sim_wrap_period(p) : p->size_bytes;
	s->nblocks = (p->size_bytes + SIM_BLOCK_BYTES - 1) / SIM_BLOCK_BYTES;
	s->nleaves = (size_t)((s->nblocks + SIM_LEAF_BLOCKS - 1) /
			      SIM_LEAF_BLOCKS);
	s->aus = sim_calloc(s, s->nau, sizeof(*s->aus));
	s->slots = sim_calloc(s, p->open_au_linear, sizeof(*s->slots));
	s->fat_wp_bytes = sim_calloc(s, p->fat_bytes / p->erase_bytes + 1,
				     sizeof(uint64_t));
	s->leaves = sim_calloc(s, s->nleaves, sizeof(*s->leaves));
	if (p->map_on_write)
		s->mapped = sim_calloc(s, (size_t)(s->nblocks / 64 + 1), sizeof(uint64_t));
	if (p->fake == SIM_FAKE_ALLOC)
		s->alloc = sim_calloc(s, s->nau + 1, sizeof(*s->alloc));
	if (!s->aus || !s->slots || !s->fat_wp_bytes || !s->leaves ||
	    (p->map_on_write && !s->mapped) || (p->fake == SIM_FAKE_ALLOC && !s->alloc) ||
	    sim_cache_create(s) < 0)
		goto err;
	for (unsigned i = 0; i < p->open_au_linear; i++) {
		s->slots[i].written = sim_calloc(s, s->map_words,
						 sizeof(uint64_t));
		if (s->slots[i].written == NULL)
			goto err;
	}
	/* A used card by default: every AU written once and closed. */
	for (uint64_t a = 0; a < s->nau; a++) {
		s->aus[a].slot = SIM_NO_SLOT;
		s->aus[a].fill = p->fresh ? SIM_AU_ERASED : SIM_AU_FULL;
	}
	return s;
err:
	sim_destroy(s);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Data store */

static bool sim_uniform(const uint8_t *p, size_t n, uint8_t *byte)
{
	*byte = n ? p[0] : 0;
	return n == 0 || memcmp(p, p + 1, n - 1) == 0;
}

static struct sim_leaf *sim_leaf_get(struct sim *s, uint64_t block)
{
	struct sim_leaf **l = &s->leaves[block / SIM_LEAF_BLOCKS];

	if (*l == NULL)
		*l = sim_calloc(s, 1, sizeof(**l));
	return *l;
}

/* Store n bytes at offset bo of one block, keeping uniform blocks as a
 * single byte. */
static int sim_block_write(struct sim *s, uint64_t block, size_t bo,
			   const uint8_t *src, size_t n)
{
	struct sim_leaf *leaf = s->leaves[block / SIM_LEAF_BLOCKS];
	size_t k = block % SIM_LEAF_BLOCKS;
	uint8_t fill = leaf ? leaf->fill[k] : 0;
	uint8_t byte;

	if ((leaf == NULL || leaf->buf[k] == NULL) &&
	    sim_uniform(src, n, &byte) &&
	    (byte == fill || n == SIM_BLOCK_BYTES)) {
		if (byte == fill)
			return 0;
		leaf = sim_leaf_get(s, block);
		if (leaf == NULL)
			return -ENOMEM;
		leaf->fill[k] = byte;
		return 0;
	}
	leaf = sim_leaf_get(s, block);
	if (leaf == NULL)
		return -ENOMEM;
	if (leaf->buf[k] == NULL) {
		leaf->buf[k] = sim_calloc(s, 1, SIM_BLOCK_BYTES);
		if (leaf->buf[k] == NULL)
			return -ENOMEM;
		memset(leaf->buf[k], fill, SIM_BLOCK_BYTES);
	}
	memcpy(leaf->buf[k] + bo, src, n);
	if (sim_uniform(leaf->buf[k], SIM_BLOCK_BYTES, &byte)) {
		sim_free(s, leaf->buf[k], SIM_BLOCK_BYTES);
		leaf->buf[k] = NULL;
		leaf->fill[k] = byte;
	}
	return 0;
}

static int sim_store_write(struct sim *s, const uint8_t *src, size_t len,
			   uint64_t off)
{
	while (len > 0) {
		uint64_t block = off / SIM_BLOCK_BYTES;
		size_t bo = (size_t)(off % SIM_BLOCK_BYTES);
		size_t n = SIM_BLOCK_BYTES - bo < len ? SIM_BLOCK_BYTES - bo : len;
		int rc = sim_block_write(s, block, bo, src, n);

		if (rc < 0)
			return rc;
		src += n;
		off += n;
		len -= n;
	}
	return 0;
}

static void sim_store_read(const struct sim *s, uint8_t *dst, size_t len,
			   uint64_t off)
{
	while (len > 0) {
		uint64_t block = off / SIM_BLOCK_BYTES;
		size_t bo = (size_t)(off % SIM_BLOCK_BYTES);
		size_t n = SIM_BLOCK_BYTES - bo < len ? SIM_BLOCK_BYTES - bo : len;
		const struct sim_leaf *leaf = s->leaves[block / SIM_LEAF_BLOCKS];
		size_t k = block % SIM_LEAF_BLOCKS;

		if (leaf && leaf->buf[k])
			memcpy(dst, leaf->buf[k] + bo, n);
		else
			memset(dst, leaf ? leaf->fill[k] : 0, n);
		dst += n;
		off += n;
		len -= n;
	}
}

/* ------------------------------------------------------------------ */
/* Capacity: where a logical offset lives on a fake card, and the cache */

#define SIM_LOST_OFFSET UINT64_MAX

static bool sim_in_range(const struct sim_range *r, uint64_t off)
{
	return off >= r->start_bytes && off - r->start_bytes < r->bytes;
}

/* fake=alloc: the flash offset of logical off in its erase block's unit
 * (SIM_LOST_OFFSET: it has none), and in *run the bytes to the block's
 * end. */
static uint64_t sim_alloc_at(const struct sim *s, uint64_t off, uint64_t *run)
{
	uint64_t eb = s->prof.erase_bytes, unit = s->alloc[off / eb];

	*run = eb - off % eb;
	return unit ? (unit - 1) * eb + off % eb : SIM_LOST_OFFSET;
}

/* fake=alloc: give [off, off + len)'s erase blocks a unit of the flash
 * on their first write, while one is left. */
static void sim_alloc_units(struct sim *s, uint64_t off, uint64_t len)
{
	uint64_t eb = s->prof.erase_bytes;

	for (uint64_t b = off / eb; s->alloc && b * eb < off + len && b < s->nau; b++)
		if (!s->alloc[b] && s->alloc_used < s->phys_bytes / eb)
			s->alloc[b] = ++s->alloc_used;
}

/* The flash offset behind logical off (SIM_LOST_OFFSET: the write is
 * dropped, a read returns zeros or, in a lost= range, the old data), and
 * in *seg how many bytes from off (at most len) map the same way. */
static uint64_t sim_map(const struct sim *s, uint64_t off, uint64_t len,
			uint64_t *seg, bool *dropped)
{
	const struct sim_ranges *lost = &s->prof.lost;
	uint64_t m, run;

	if (s->alloc) {
		m = sim_alloc_at(s, off, &run);
	} else {
		m = off % s->period_bytes;
		run = m < s->phys_bytes ? s->phys_bytes - m : s->period_bytes - m;
	}

	*dropped = false;
	for (unsigned i = 0; i < lost->n; i++) {
		const struct sim_range *r = &lost->r[i];

		if (sim_in_range(r, off)) {
			*dropped = true;
			run = run < r->start_bytes + r->bytes - off ?
			      run : r->start_bytes + r->bytes - off;
		} else if (r->start_bytes > off && r->start_bytes - off < run) {
			run = r->start_bytes - off;
		}
	}
	*seg = run < len ? run : len;
	return m < s->phys_bytes ? m : SIM_LOST_OFFSET;
}

/* What the flash gives for [off, off + len): no cache. */
static void sim_flash_read(const struct sim *s, uint8_t *dst, size_t len,
			   uint64_t off)
{
	while (len > 0) {
		uint64_t seg;
		bool dropped;
		uint64_t at = sim_map(s, off, len, &seg, &dropped);

		if (at == SIM_LOST_OFFSET)
			memset(dst, 0, (size_t)seg);
		else
			sim_store_read(s, dst, (size_t)seg, at);
		dst += seg;
		off += seg;
		len -= (size_t)seg;
	}
}

static int sim_flash_write(struct sim *s, const uint8_t *src, size_t len,
			   uint64_t off)
{
	sim_alloc_units(s, off, len);
	while (len > 0) {
		uint64_t seg;
		bool dropped;
		uint64_t at = sim_map(s, off, len, &seg, &dropped);
		int rc = 0;

		if (at != SIM_LOST_OFFSET && !dropped)
			rc = sim_store_write(s, src, (size_t)seg, at);
		if (rc < 0)
			return rc;
		src += seg;
		off += seg;
		len -= (size_t)seg;
	}
	return 0;
}

static size_t sim_cache_home(const struct sim_cache *c, uint64_t block)
{
	return (size_t)stats_hash64(block) & c->mask;
}

/* The cache slot holding logical block, or -1. */
static long sim_cache_find(const struct sim_cache *c, uint64_t block)
{
	for (size_t h = sim_cache_home(c, block); c->table[h]; h = (h + 1) & c->mask)
		if (c->block[c->table[h] - 1] == block + 1)
			return (long)(c->table[h] - 1);
	return -1;
}

/* Take slot out of the table (backward-shift deletion keeps every other
 * key reachable from its home position). */
static void sim_cache_unlink(struct sim_cache *c, size_t slot)
{
	size_t h = sim_cache_home(c, c->block[slot] - 1), j;

	while (c->table[h] != slot + 1)
		h = (h + 1) & c->mask;
	c->table[h] = 0;
	for (j = (h + 1) & c->mask; c->table[j]; j = (j + 1) & c->mask) {
		size_t k = sim_cache_home(c, c->block[c->table[j] - 1] - 1);
		bool movable = j > h ? (k <= h || k > j) : (k <= h && k > j);

		if (movable) {
			c->table[h] = c->table[j];
			c->table[j] = 0;
			h = j;
		}
	}
	c->block[slot] = 0;
}

/* The slot for logical block, evicting the oldest block when it is new. */
static size_t sim_cache_slot(struct sim_cache *c, uint64_t block, bool *fresh)
{
	long found = sim_cache_find(c, block);
	size_t slot, h;

	*fresh = found < 0;
	if (found >= 0)
		return (size_t)found;
	slot = c->next;
	c->next = (c->next + 1) % c->n;
	if (c->block[slot])
		sim_cache_unlink(c, slot);
	c->block[slot] = block + 1;
	for (h = sim_cache_home(c, block); c->table[h]; h = (h + 1) & c->mask)
		;
	c->table[h] = slot + 1;
	return slot;
}

/* The cache entry of the block at logical base: its folded position. */
static uint64_t sim_cache_key(const struct sim *s, uint64_t base)
{
	return (s->prof.cache_logical ? base : base % s->period_bytes) / SIM_BLOCK_BYTES;
}

/* f3probe's cache (its file device): direct-mapped, slot = logical
 * block mod slots, and only for blocks past the real flash, whose writes
 * the flash drops.  A strict cache serves a block only from its own
 * entry; a loose one serves whatever its slot holds. */
static bool sim_block_dropped(const struct sim *s, uint64_t block)
{
	uint64_t seg;
	bool dropped;

	return sim_map(s, block * SIM_BLOCK_BYTES, SIM_BLOCK_BYTES, &seg, &dropped) ==
	       SIM_LOST_OFFSET;
}

static long sim_direct_find(const struct sim *s, uint64_t block)
{
	const struct sim_cache *c = &s->cache;
	size_t slot = (size_t)(block % c->n);

	if (!c->block[slot] || !sim_block_dropped(s, block) ||
	    (s->prof.cache_strict && c->block[slot] != block + 1))
		return -1;
	return (long)slot;
}

/* The slot a write of block goes to, or -1 when the flash keeps it. */
static long sim_direct_slot(struct sim *s, uint64_t block, bool *fresh)
{
	struct sim_cache *c = &s->cache;
	size_t slot = (size_t)(block % c->n);

	if (!sim_block_dropped(s, block))
		return -1;
	*fresh = c->block[slot] != block + 1;
	c->block[slot] = block + 1;
	return (long)slot;
}

/* The slot serving reads of the 4 KiB block at base, or -1. */
static long sim_cache_lookup(const struct sim *s, uint64_t base)
{
	if (s->prof.cache_direct)
		return sim_direct_find(s, base / SIM_BLOCK_BYTES);
	return sim_cache_find(&s->cache, sim_cache_key(s, base));
}

/* The slot a write of the block at base fills (-1: none). */
static long sim_cache_take(struct sim *s, uint64_t base, bool *fresh)
{
	if (s->prof.cache_direct)
		return sim_direct_slot(s, base / SIM_BLOCK_BYTES, fresh);
	return (long)sim_cache_slot(&s->cache, sim_cache_key(s, base), fresh);
}

/* Reads see the cached blocks over the flash. */
static void sim_cached_read(const struct sim *s, uint8_t *dst, size_t len,
			    uint64_t off)
{
	const struct sim_cache *c = &s->cache;

	sim_flash_read(s, dst, len, off);
	for (uint64_t b = off / SIM_BLOCK_BYTES; c->n && b * SIM_BLOCK_BYTES < off + len; b++) {
		long slot = sim_cache_lookup(s, b * SIM_BLOCK_BYTES);
		uint64_t from = b * SIM_BLOCK_BYTES > off ? b * SIM_BLOCK_BYTES : off;
		uint64_t to = (b + 1) * SIM_BLOCK_BYTES < off + len ?
			      (b + 1) * SIM_BLOCK_BYTES : off + len;

		if (slot >= 0)
			memcpy(dst + (from - off), c->data + (size_t)slot * SIM_BLOCK_BYTES +
			       (from - b * SIM_BLOCK_BYTES), (size_t)(to - from));
	}
}

/* map_on_write: the blocks of [off, off + len) at or past the period
 * that were never written read zeros (no flash is mapped to them yet);
 * a write maps them. */
static bool sim_unmapped(const struct sim *s, uint64_t block)
{
	return s->mapped && block * SIM_BLOCK_BYTES >= s->period_bytes &&
	       !(s->mapped[block / 64] >> (block % 64) & 1);
}

static void sim_zero_unmapped(const struct sim *s, uint8_t *dst, size_t len,
			      uint64_t off)
{
	for (uint64_t b = off / SIM_BLOCK_BYTES; s->mapped && b * SIM_BLOCK_BYTES < off + len; b++) {
		uint64_t from = b * SIM_BLOCK_BYTES > off ? b * SIM_BLOCK_BYTES : off;
		uint64_t to = (b + 1) * SIM_BLOCK_BYTES < off + len ?
			      (b + 1) * SIM_BLOCK_BYTES : off + len;

		if (sim_unmapped(s, b))
			memset(dst + (from - off), 0, (size_t)(to - from));
	}
}

static void sim_map_written(struct sim *s, size_t len, uint64_t off)
{
	for (uint64_t b = off / SIM_BLOCK_BYTES; s->mapped && b * SIM_BLOCK_BYTES < off + len; b++)
		s->mapped[b / 64] |= UINT64_C(1) << (b % 64);
}

/* A write goes to the cache (whole blocks: a partial one is completed
 * from what reads return now) and to the flash. */
static int sim_cached_write(struct sim *s, const uint8_t *src, size_t len,
			    uint64_t off)
{
	struct sim_cache *c = &s->cache;

	if (c->n && !c->data && !(c->data = sim_calloc(s, c->n, SIM_BLOCK_BYTES)))
		return -ENOMEM;
	for (uint64_t b = off / SIM_BLOCK_BYTES; c->n && b * SIM_BLOCK_BYTES < off + len; b++) {
		uint64_t base = b * SIM_BLOCK_BYTES;
		uint64_t from = base > off ? base : off;
		uint64_t to = base + SIM_BLOCK_BYTES < off + len ? base + SIM_BLOCK_BYTES
								 : off + len;
		uint64_t whole = s->prof.size_bytes - base < SIM_BLOCK_BYTES ?
				 s->prof.size_bytes - base : SIM_BLOCK_BYTES;
		uint8_t old[SIM_BLOCK_BYTES];
		bool fresh = false;
		long slot;

		if (to - from < whole)
			sim_cached_read(s, old, (size_t)whole, base);
		slot = sim_cache_take(s, base, &fresh);
		if (slot < 0)
			continue;
		if (to - from < whole && fresh)
			memcpy(c->data + (size_t)slot * SIM_BLOCK_BYTES, old, (size_t)whole);
		memcpy(c->data + (size_t)slot * SIM_BLOCK_BYTES + (from - base), src + (from - off),
		       (size_t)(to - from));
	}
	return sim_flash_write(s, src, len, off);
}

/* ------------------------------------------------------------------ */
/* Noise: jitter and stalls from the seeded generator, location noise as
 * a fixed function of the offset so that repeating cannot average it. */

/* A hash as a uniform number in [0, 1). */
static double sim_hash_unit(uint64_t h)
{
	return (double)(h >> 11) * 0x1.0p-53;
}

/* The factor of a spread of +-pct % for a uniform u in [0, 1). */
static double sim_spread(unsigned pct, double u)
{
	return 1.0 + pct / 100.0 * (2.0 * u - 1.0);
}

static double sim_location_factor(const struct sim *s, uint64_t off)
{
	if (s->prof.location_pct == 0)
		return 1.0;
	return sim_spread(s->prof.location_pct,
			  sim_hash_unit(stats_hash64(s->prof.seed ^ (off / SIM_BLOCK_BYTES))));
}

/* Both draws happen on every request so the sequence does not depend on
 * which noise is enabled. */
static uint64_t sim_noisy(struct sim *s, uint64_t cost_ns, double factor)
{
	double u = stats_rng_uniform(&s->rng);
	bool stall = stats_rng_below(&s->rng, SIM_PPM) < s->prof.stall_ppm;
	double f = factor * sim_spread(s->prof.jitter_pct, u);
	uint64_t t = f == 1.0 ? cost_ns : (uint64_t)llround((double)cost_ns * f);

	return stall ? t + s->prof.stall_ns : t;
}

/* ------------------------------------------------------------------ */
/* Read cost */

/* Boundaries b with off < b < off + len and b % m == 0. */
static uint64_t sim_crossings(uint64_t off, uint64_t len, uint64_t m)
{
	if (m == 0 || len < 2)
		return 0;
	return (off + len - 1) / m - off / m;
}

static bool sim_all_erased(const struct sim *s, uint64_t off, uint64_t len)
{
	uint64_t last = (off + len - 1) / s->prof.erase_bytes;

	for (uint64_t a = off / s->prof.erase_bytes; a <= last; a++)
		if (s->aus[a].fill != SIM_AU_ERASED)
			return false;
	return true;
}

static uint64_t sim_read_cost(const struct sim *s, uint64_t off, uint64_t len)
{
	const struct sim_profile *p = &s->prof;
	/* highest level first: a boundary is charged at its highest level */
	const struct {
		uint64_t bytes, ns;
	} lv[] = {
		{ p->erase_bytes, p->au_cross_ns },
		{ p->subau_bytes, p->subau_cross_ns },
		{ p->page_bytes, p->page_cross_ns },
		{ p->raw_page_bytes, p->raw_cross_ns },
	};
	uint64_t u = s->unit_bytes;
	/* read_page_ns * len / u, split so that long reads cannot overflow */
	uint64_t cost = p->read_base_ns + p->read_page_ns * (len / u) +
			p->read_page_ns * (len % u) / u;
	uint64_t above = 0;

	if (len == 0 || (p->erased_reads_fast && sim_all_erased(s, off, len)))
		return cost;
	for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		uint64_t n;

		if (lv[i].bytes == 0)
			continue;
		n = sim_crossings(off, len, lv[i].bytes);
		cost += (n - above) * lv[i].ns;
		above = n;
	}
	return cost;
}

/* ------------------------------------------------------------------ */
/* Write cost: the AU state machine */

static bool sim_page_valid(const struct sim_au *au, uint64_t page)
{
	if (au->fill == SIM_AU_FULL)
		return true;
	return au->fill == SIM_AU_PARTIAL && sim_bit(au->valid, page);
}

/* Pages [p0, p1) now hold data. */
static int sim_mark_valid(struct sim *s, struct sim_au *au, uint64_t p0,
			  uint64_t p1)
{
	if (au->fill == SIM_AU_FULL)
		return 0;
	if (au->fill == SIM_AU_ERASED) {
		au->valid = sim_calloc(s, s->map_words, sizeof(uint64_t));
		if (au->valid == NULL)
			return -ENOMEM;
		au->nvalid = 0;
		au->fill = SIM_AU_PARTIAL;
	}
	for (uint64_t pg = p0; pg < p1; pg++) {
		if (!sim_bit(au->valid, pg)) {
			sim_bit_set(au->valid, pg);
			au->nvalid++;
		}
	}
	if (au->nvalid == s->pages_per_au) {
		sim_free(s, au->valid, sim_map_bytes(s));
		au->valid = NULL;
		au->fill = SIM_AU_FULL;
	}
	return 0;
}

/* Close an open AU: copy the valid pages this cycle did not handle into
 * the new block, erase the old one.  Returns the cost. */
static uint64_t sim_slot_close(struct sim *s, struct sim_slot *sl)
{
	struct sim_au *au = &s->aus[sl->au];
	uint64_t copies = 0;

	for (uint64_t pg = 0; pg < s->pages_per_au; pg++)
		if (!sim_bit(sl->written, pg) && sim_page_valid(au, pg))
			copies++;
	au->slot = SIM_NO_SLOT;
	if (sl->random)
		s->nrandom--;
	sl->used = false;
	sl->random = false;
	return copies * s->prof.gc_page_ns + s->prof.erase_ns;
}

static void sim_slot_mark(struct sim_slot *sl, uint64_t page)
{
	if (!sim_bit(sl->written, page)) {
		sim_bit_set(sl->written, page);
		sl->nwritten++;
	}
}

static void sim_slot_start(struct sim *s, struct sim_slot *sl, uint64_t au)
{
	sl->used = true;
	sl->random = false;
	sl->au = au;
	sl->wp_bytes = 0;
	sl->nwritten = 0;
	memset(sl->written, 0, sim_map_bytes(s));
	s->aus[au].slot = (int32_t)(sl - s->slots);
}

/* Open AU au in a free slot, closing the least recently used one when the
 * pool is full; adds the closing cost to *cost. */
static struct sim_slot *sim_slot_open(struct sim *s, uint64_t au,
				      uint64_t *cost)
{
	struct sim_slot *pick = NULL;

	for (unsigned i = 0; i < s->prof.open_au_linear; i++) {
		struct sim_slot *sl = &s->slots[i];

		if (!sl->used) {
			pick = sl;
			break;
		}
		if (pick == NULL || sl->stamp < pick->stamp)
			pick = sl;
	}
	if (pick->used)
		*cost += sim_slot_close(s, pick);
	sim_slot_start(s, pick, au);
	return pick;
}

/* Linear mode: the pages between the write pointer and the write must be
 * filled from the old block before the new data can follow them. */
static uint64_t sim_gap_copies(struct sim *s, struct sim_slot *sl,
			       uint64_t p_end)
{
	const struct sim_au *au = &s->aus[sl->au];
	uint64_t copies = 0;

	for (uint64_t pg = sl->wp_bytes / s->unit_bytes; pg < p_end; pg++) {
		if (sim_bit(sl->written, pg) || !sim_page_valid(au, pg))
			continue;
		sim_slot_mark(sl, pg);
		copies++;
	}
	return copies;
}

/* A write below the write pointer.  Random mode takes it for
 * random_write_ns when the quota allows; otherwise the AU is merged and a
 * new cycle starts (about one AU copy).  A complete cycle closes for just
 * an erase, so rewriting a full AU from its start stays linear (unless
 * restart_random: then it is out of order like any other write). */
static uint64_t sim_out_of_order(struct sim *s, struct sim_slot *sl)
{
	bool complete = sl->nwritten == s->pages_per_au && !s->prof.restart_random;
	uint64_t au = sl->au, cost;

	if (!complete && !sl->random && s->nrandom < s->prof.open_au_random) {
		sl->random = true;
		s->nrandom++;
	}
	if (!complete && sl->random)
		return s->prof.random_write_ns;
	cost = sim_slot_close(s, sl);
	sim_slot_start(s, sl, au);
	return cost;
}

/* Move a write pointer past a write ending at end (AU-relative): to the
 * byte, or with page_wp to the end of the last page it touched, so that
 * the rest of that page counts as written. */
static void sim_advance_wp(const struct sim *s, uint64_t *wp, uint64_t end)
{
	if (s->prof.page_wp)
		end = (end + s->unit_bytes - 1) / s->unit_bytes * s->unit_bytes;
	if (end > *wp)
		*wp = end;
}

/* Write [start, end) (AU-relative bytes) of normal AU au. */
static int sim_write_normal(struct sim *s, uint64_t au, uint64_t start,
			    uint64_t end, uint64_t *cost)
{
	const struct sim_profile *p = &s->prof;
	uint64_t p0 = start / s->unit_bytes;
	uint64_t p1 = (end + s->unit_bytes - 1) / s->unit_bytes;
	struct sim_slot *sl;

	if (s->aus[au].slot == SIM_NO_SLOT)
		sl = sim_slot_open(s, au, cost);
	else
		sl = &s->slots[s->aus[au].slot];
	if (start < sl->wp_bytes)
		*cost += sim_out_of_order(s, sl);
	sl->stamp = ++s->stamp;
	if (!sl->random)
		*cost += sim_gap_copies(s, sl, p0) * p->gc_page_ns;
	*cost += (p1 - p0) * p->write_page_ns;
	for (uint64_t pg = p0; pg < p1; pg++)
		sim_slot_mark(sl, pg);
	sim_advance_wp(s, &sl->wp_bytes, end);
	return sim_mark_valid(s, &s->aus[au], p0, p1);
}

/* Write [start, end) of FAT-area AU au: page mapped, never collected. */
static int sim_write_fat(struct sim *s, uint64_t au, uint64_t start,
			 uint64_t end, uint64_t *cost)
{
	const struct sim_profile *p = &s->prof;
	uint64_t *wp = &s->fat_wp_bytes[au - p->fat_start_bytes / p->erase_bytes];
	uint64_t p0 = start / s->unit_bytes;
	uint64_t p1 = (end + s->unit_bytes - 1) / s->unit_bytes;

	if (start < *wp)
		*cost += p->fat_random_ns;
	sim_advance_wp(s, wp, end);
	*cost += (p1 - p0) * p->write_page_ns * p->fat_page_pct / 100;
	return sim_mark_valid(s, &s->aus[au], p0, p1);
}

static bool sim_in_fat(const struct sim_profile *p, uint64_t off)
{
	return off >= p->fat_start_bytes &&
	       off - p->fat_start_bytes < p->fat_bytes;
}

static int sim_write_cost(struct sim *s, uint64_t off, uint64_t len,
			  uint64_t *cost)
{
	uint64_t e = s->prof.erase_bytes;
	int rc = 0;

	*cost = s->prof.write_base_ns;
	while (len > 0 && rc == 0) {
		uint64_t au = off / e, start = off % e;
		uint64_t end = e - start < len ? e : start + len;

		if (sim_in_fat(&s->prof, off))
			rc = sim_write_fat(s, au, start, end, cost);
		else
			rc = sim_write_normal(s, au, start, end, cost);
		off += end - start;
		len -= end - start;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* Write buffer timing (wbuf=): what the host waits for */

/* wbuf_back: the flash works off the oldest buffered write for up to dt
 * ns; a write frees its bytes once it is done.  The time used. */
static uint64_t sim_wbuf_pop(struct sim *s, uint64_t dt)
{
	struct sim_wbuf_write *w = &s->wbuf_q[s->wbuf_q_head];
	uint64_t used = dt < w->ns ? dt : w->ns;

	w->ns -= used;
	s->wbuf_debt_ns -= used;
	if (w->ns == 0) {
		s->wbuf_fill_bytes -= w->bytes;
		s->wbuf_q_head = (s->wbuf_q_head + 1) % s->wbuf_q_cap;
		s->wbuf_q_len--;
	}
	return used;
}

/* The flash works off buffered writes for dt ns: the owed time shrinks
 * by dt and the buffered bytes in proportion (a mean drain rate), or
 * with wbuf_back write by write, oldest first. */
static void sim_wbuf_drain(struct sim *s, uint64_t dt)
{
	if (s->prof.wbuf_back) {
		while (dt > 0 && s->wbuf_q_len > 0)
			dt -= sim_wbuf_pop(s, dt);
		return;
	}
	if (dt >= s->wbuf_debt_ns) {
		s->wbuf_fill_bytes = 0;
		s->wbuf_debt_ns = 0;
		return;
	}
	s->wbuf_fill_bytes -= (uint64_t)((unsigned __int128)s->wbuf_fill_bytes *
					 dt / s->wbuf_debt_ns);
	s->wbuf_debt_ns -= dt;
}

/* wbuf_back: a write of len bytes owing flash_ns joins the queue (false:
 * out of memory, it is then written through). */
static bool sim_wbuf_push(struct sim *s, uint64_t len, uint64_t flash_ns)
{
	if (s->wbuf_q_len == s->wbuf_q_cap) {	/* grow, oldest first again */
		size_t cap = s->wbuf_q_cap ? 2 * s->wbuf_q_cap : 256;
		struct sim_wbuf_write *q = sim_calloc(s, cap, sizeof(*q));

		if (q == NULL)
			return false;
		for (size_t i = 0; i < s->wbuf_q_len; i++)
			q[i] = s->wbuf_q[(s->wbuf_q_head + i) % s->wbuf_q_cap];
		sim_free(s, s->wbuf_q, s->wbuf_q_cap * sizeof(*q));
		s->wbuf_q = q;
		s->wbuf_q_head = 0;
		s->wbuf_q_cap = cap;
	}
	s->wbuf_q[(s->wbuf_q_head + s->wbuf_q_len++) % s->wbuf_q_cap] =
		(struct sim_wbuf_write){ len, flash_ns };
	s->wbuf_fill_bytes += len;
	s->wbuf_debt_ns += flash_ns;
	return true;
}

/* The buffer's cost of absorbing blocks 4 KiB blocks, with the card's
 * jitter drawn from a hash of the write count (not from the noise
 * generator, so the flash's timings stay those of a card without it). */
static uint64_t sim_wbuf_fast_ns(const struct sim *s, uint64_t blocks)
{
	const struct sim_profile *p = &s->prof;
	uint64_t h = stats_hash64(p->seed ^ (s->nwrites * 0xc2b2ae3d27d4eb4fu));
	double f = sim_spread(p->jitter_pct, sim_hash_unit(h));

	return (uint64_t)llround((double)(p->wbuf_write_ns * blocks) * f);
}

/* wbuf_back: the host's time of a write of len bytes owing flash_ns: it
 * waits until the oldest buffered writes are done and it fits (whatever
 * they cost), then takes the buffer's time and joins the queue. */
static uint64_t sim_wbuf_back_write(struct sim *s, uint64_t len, uint64_t flash_ns)
{
	uint64_t wait = 0, host;

	while (s->wbuf_q_len > 0 && s->wbuf_fill_bytes + len > s->prof.wbuf_bytes)
		wait += sim_wbuf_pop(s, UINT64_MAX);
	host = sim_wbuf_fast_ns(s, (len + SIM_BLOCK_BYTES - 1) / SIM_BLOCK_BYTES);
	sim_wbuf_drain(s, host);
	if (!sim_wbuf_push(s, len, flash_ns))
		return wait + flash_ns;
	return wait + host;
}

/* The host's time of a write of len bytes that costs the flash flash_ns:
 * the part that fits the buffer at wbuf_write_ns per 4 KiB (its flash
 * time becomes owed), the rest at the flash's cost pro rata.  The flash
 * drains the buffer while the host writes into it, but not while it
 * writes through (a full buffer stays full under writes). */
static uint64_t sim_wbuf_write(struct sim *s, uint64_t len, uint64_t flash_ns)
{
	const struct sim_profile *p = &s->prof;
	uint64_t room, fit, fit_flash, host;

	if (p->wbuf_bytes == 0 || len == 0)
		return flash_ns;
	if (p->wbuf_back)
		return sim_wbuf_back_write(s, len, flash_ns);
	room = p->wbuf_bytes > s->wbuf_fill_bytes ?
	       p->wbuf_bytes - s->wbuf_fill_bytes : 0;
	fit = len < room ? len : room - room % SIM_BLOCK_BYTES;	/* blocks */
	if (fit == 0)
		return flash_ns;	/* write-through: the flash is busy with it */
	fit_flash = (uint64_t)((unsigned __int128)flash_ns * fit / len);
	host = sim_wbuf_fast_ns(s, (fit + SIM_BLOCK_BYTES - 1) / SIM_BLOCK_BYTES);
	sim_wbuf_drain(s, host);
	s->wbuf_fill_bytes += fit;
	s->wbuf_debt_ns += fit_flash;
	return host + (flash_ns - fit_flash);
}

/* ------------------------------------------------------------------ */
/* Backend */

static bool sim_overlaps(uint64_t start, uint64_t bytes, uint64_t off,
			 uint64_t len)
{
	return bytes != 0 && off < start + bytes && start < off + len;
}

static bool sim_hits_ranges(const struct sim_ranges *rs, uint64_t off,
			    uint64_t len)
{
	for (unsigned i = 0; i < rs->n; i++)
		if (sim_overlaps(rs->r[i].start_bytes, rs->r[i].bytes, off, len))
			return true;
	return false;
}

static bool sim_hits_bad(const struct sim *s, uint64_t off, uint64_t len)
{
	const struct sim_profile *p = &s->prof;

	return sim_hits_ranges(&p->eio, off, len) ||
	       sim_overlaps(p->bad_start_bytes, p->bad_bytes, off, len);
}

static int sim_check(const struct sim *s, size_t len, uint64_t off)
{
	if (off > s->prof.size_bytes || len > s->prof.size_bytes - off)
		return -ENOSPC;
	if (sim_hits_bad(s, off, len))
		return -EIO;
	return 0;
}

static int sim_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct sim *s = priv;
	uint64_t t;
	int rc = sim_check(s, len, off);

	if (rc < 0)
		return rc;
	sim_cached_read(s, buf, len, off);
	sim_zero_unmapped(s, buf, len, off);
	t = sim_noisy(s, sim_read_cost(s, off, len), sim_location_factor(s, off));
	if (sim_hits_ranges(&s->prof.slow, off, len))
		t += s->prof.read_retry_ns;
	s->now_ns += t;
	sim_wbuf_drain(s, t);
	return 0;
}

/* A worn card refuses the write: a program failure in an eio_write
 * range, or the switch to read-only once ro_after bytes were written
 * (sticky: every later write fails too). */
static int sim_write_refused(struct sim *s, size_t len, uint64_t off)
{
	const struct sim_profile *p = &s->prof;

	if (p->ro_after_bytes &&
	    (s->read_only || len > p->ro_after_bytes - s->written_bytes)) {
		s->read_only = true;
		return -EROFS;
	}
	return sim_hits_ranges(&p->eio_write, off, len) ? -EIO : 0;
}

/* What a corrupt= range stores: the data with one bit flipped in every
 * 512-byte sector of the range the write covers (at a position fixed by
 * the sector).  Returns buf itself when no range is touched, a copy in
 * *copy otherwise (NULL: out of memory). */
static const void *sim_corrupted(const struct sim *s, const void *buf,
				 size_t len, uint64_t off, uint8_t **copy)
{
	const struct sim_ranges *rs = &s->prof.corrupt;

	*copy = NULL;
	if (!sim_hits_ranges(rs, off, len))
		return buf;
	*copy = malloc(len);
	if (*copy == NULL)
		return NULL;
	memcpy(*copy, buf, len);
	for (uint64_t sec = off / 512; sec * 512 < off + len; sec++) {
		uint64_t h = stats_hash64(s->prof.seed ^ ~sec);
		uint64_t at = sec * 512 + h % 512;

		if (at >= off && at < off + len && sim_hits_ranges(rs, at, 1))
			(*copy)[at - off] ^= (uint8_t)(1u << (h >> 9) % 8);
	}
	return *copy;
}

/* Write time a worn card adds: latency growing with what was written,
 * and garbage-collection stalls (drawn from a hash, not from the noise
 * generator, so the other timings stay the same). */
static uint64_t sim_wear_ns(struct sim *s)
{
	const struct sim_profile *p = &s->prof;
	uint64_t t = p->wear_ns * (s->written_bytes / SIM_MIB);

	s->nwrites++;
	if (p->write_stall_ppm &&
	    stats_hash64(p->seed ^ (s->nwrites * 0x9e3779b97f4a7c15u)) % SIM_PPM <
	    p->write_stall_ppm)
		t += p->write_stall_ns;
	return t;
}

/* A write a read-only card acknowledges without storing it (ro_silent):
 * it takes the time of a write to the buffer at most. */
static int sim_silently_dropped(struct sim *s, size_t len)
{
	s->now_ns += sim_noisy(s, s->prof.write_base_ns, 1.0);
	s->written_bytes += len;
	return 0;
}

static int sim_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct sim *s = priv;
	uint64_t cost = 0;
	uint8_t *copy;
	const void *data;
	int rc = sim_check(s, len, off);

	if (rc == 0)
		rc = sim_write_refused(s, len, off);
	if (rc == -EROFS && s->prof.ro_silent)
		return sim_silently_dropped(s, len);
	if (rc < 0)
		return rc;
	data = sim_corrupted(s, buf, len, off, &copy);
	rc = data ? sim_cached_write(s, data, len, off) : -ENOMEM;
	free(copy);
	if (rc == 0)
		sim_map_written(s, len, off);
	if (rc == 0)
		rc = sim_write_cost(s, off, len, &cost);
	if (rc < 0)
		return rc;
	s->now_ns += sim_wbuf_write(s, len, sim_noisy(s, cost, 1.0) +
				    sim_wear_ns(s));
	s->written_bytes += len;
	return 0;
}

static uint64_t sim_now_ns(void *priv)
{
	return ((const struct sim *)priv)->now_ns;
}

static void sim_close(void *priv)
{
	sim_destroy(priv);
}

static const struct fp_dev_ops sim_ops = {
	.pread = sim_pread,
	.pwrite = sim_pwrite,
	.now_ns = sim_now_ns,
	.close = sim_close,
};

int sim_open(const struct sim_profile *p, struct fp_dev **out)
{
	char path[SIM_NAME_MAX + 8];
	struct sim *s;

	if (p == NULL || out == NULL || sim_profile_validate(p, NULL, 0) < 0)
		return -EINVAL;
	s = sim_create(p);
	if (s == NULL)
		return -ENOMEM;
	snprintf(path, sizeof(path), "sim:%.*s", SIM_NAME_MAX - 1,
		 p->name[0] ? p->name : "custom");
	*out = fp_dev_create(&sim_ops, s, FP_DEV_SIM, path, p->size_bytes,
			     p->sector_bytes);
	if (*out == NULL) {
		sim_destroy(s);
		return -ENOMEM;
	}
	return 0;
}

/* d itself as a simulated card, or NULL: for what changes the card,
 * which must not reach past a wrapper (a journal would miss it). */
static struct sim *sim_here(const struct fp_dev *d)
{
	return fp_dev_priv_if(d, &sim_ops);
}

/* The simulated card at the bottom of d's stack, or NULL: for questions
 * about it, which every wrapper answers alike. */
static struct sim *sim_of(const struct fp_dev *d)
{
	while (d != NULL && sim_here(d) == NULL)
		d = fp_dev_inner(d);
	return sim_here(d);
}

const char *sim_capacity_truth(const struct sim_profile *p, char *buf,
			       size_t len)
{
	char real[32], period[32], cache[40] = "";

	if (p->cache_bytes)
		snprintf(cache, sizeof(cache), " +cache %s%s",
			 units_format_bytes(p->cache_bytes, real, sizeof(real)),
			 p->cache_strict ? " strict" : p->cache_direct ? " direct" : "");
	units_format_bytes(p->real_bytes, real, sizeof(real));
	units_format_bytes(sim_wrap_period(p), period, sizeof(period));
	if (p->fake == SIM_FAKE_WRAP)
		snprintf(buf, len, "wrap %s/%s%s%s", real, period, cache,
			 p->map_on_write ? " map-on-write" : "");
	else if (p->fake == SIM_FAKE_LIMBO)
		snprintf(buf, len, "limbo %s%s", real, cache);
	else if (p->fake == SIM_FAKE_ALLOC)
		snprintf(buf, len, "alloc %s%s", real, cache);
	else
		snprintf(buf, len, "genuine%s", cache);
	return buf;
}

const struct sim_profile *sim_profile_of(const struct fp_dev *d)
{
	const struct sim *s = sim_of(d);

	return s ? &s->prof : NULL;
}

uint64_t sim_mem_bytes(const struct fp_dev *d)
{
	const struct sim *s = sim_of(d);

	return s ? s->mem_bytes : 0;
}

/* Forget every open AU without charging time, as if the card had been
 * idle long enough to merge them all. */
static void sim_close_all_free(struct sim *s)
{
	for (unsigned i = 0; i < s->prof.open_au_linear; i++) {
		if (s->slots[i].used)
			s->aus[s->slots[i].au].slot = SIM_NO_SLOT;
		s->slots[i].used = false;
		s->slots[i].random = false;
	}
	s->nrandom = 0;
	memset(s->fat_wp_bytes, 0,
	       (s->prof.fat_bytes / s->prof.erase_bytes + 1) * sizeof(uint64_t));
}

int sim_fill_random(struct fp_dev *d, uint64_t seed)
{
	struct sim *s = sim_here(d);
	struct stats_rng rng;

	if (s == NULL)
		return -EINVAL;
	stats_rng_seed(&rng, seed);
	for (uint64_t b = 0; b * SIM_BLOCK_BYTES < s->phys_bytes; b++) {
		struct sim_leaf *leaf = sim_leaf_get(s, b);
		uint8_t **buf = leaf ? &leaf->buf[b % SIM_LEAF_BLOCKS] : NULL;

		if (leaf == NULL)
			return -ENOMEM;
		if (*buf == NULL)
			*buf = sim_calloc(s, 1, SIM_BLOCK_BYTES);
		if (*buf == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < SIM_BLOCK_BYTES; i += sizeof(uint64_t)) {
			uint64_t x = stats_rng_next(&rng);

			memcpy(*buf + i, &x, sizeof(x));
		}
	}
	sim_close_all_free(s);
	for (uint64_t a = 0; a < s->nau; a++) {
		sim_free(s, s->aus[a].valid, sim_map_bytes(s));
		s->aus[a].valid = NULL;
		s->aus[a].fill = SIM_AU_FULL;
	}
	return 0;
}
