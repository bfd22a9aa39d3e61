/* capacity.c - the fake-capacity check (see capacity.h).
 *
 * What a counterfeit card is assumed to do: its real flash is a prefix
 * [0, real) of the reported size.  Past it, a write either lands on a
 * lower position (wraparound: the controller drops the address bits above
 * the flash, so offset X reads and writes X mod period, period a power of
 * two) or is lost (limbo).  A damaged card fails I/O, or loses writes, in
 * some range inside.  Any of them may hide the loss behind a write cache
 * that serves the most recent writes (f3probe, ../shared/docs/peers.md
 * section 2, reports the same types).
 *
 * What is measured: test blocks that describe themselves (magic, their
 * own offset, a per-run nonce, a checksum over the block), so a read-back
 * tells "my block" from "another offset's block of this run" (aliasing)
 * from anything else (lost).  Before every read-back, 32 MiB of other
 * blocks (half the deep flush on a small device) are written and read in
 * a flush area at the top of the device,
 * so no recently written test block can still be served from a cache of
 * that size.  The flush's read-back is checked too (note_flush_loss()): a
 * worn card that starts dropping writes silently during the flush keeps
 * the test blocks written before, and only the filler shows the loss.  The flush is at the top because a fake card may cache only
 * the writes its flash drops (f3probe's model: a direct-mapped cache of
 * the addresses past the real flash), which a flush inside the real
 * flash would never touch.
 *
 * The deep check: caches of up to cache_bytes (1 GiB, f3probe's largest;
 * at most a quarter of the device) are defeated once, at the end: the
 * flush area is extended downwards by cache_bytes (new blocks: a cache
 * may update the round flush's blocks in place and push nothing out) and
 * every position read again.  A position that kept its own block so far and loses it now was
 * served by a cache larger than 32 MiB: the whole test then runs again,
 * with a fresh nonce and the deep flush before every read-back (slow, but
 * only on such a fake).  A genuine card pays the deep flush once.
 *
 * How it is decided, in rounds of write, flush, read back everything:
 *   round 0  offset 0 (the anchor), then every power of two B..N from the
 *            top down, then one random position in each 16th of the
 *            device (islands), then the last block.  On a wraparound card
 *            every power of two at or above the period lands on offset 0,
 *            the smallest one last: offset 0 then reads the block of the
 *            period, and so do all larger powers of two; the smallest
 *            power of two that reads what offset 0 reads is the period.
 *            Offset 0 is read once already before the rest of round 0
 *            (early_period()): a card whose controller maps an address
 *            on its first write reads zeros at an unwritten one past the
 *            period, so a journal would save zeros for what the test's
 *            writes there really overwrite; with the period seen first,
 *            round 0 leaves out its positions past it and every flush
 *            writes where its blocks land.
 *            Then the comb (plan_comb()): a position below every
 *            multiple of the deep flush's size, so that the deep flush
 *            lands on one of them below any period.
 *   odd      a period that is not a power of two (a controller mapping
 *            addresses modulo its flash) lands nothing on offset 0; a
 *            position reads another offset's block instead, the comb's
 *            at the latest.  The difference is a multiple of the period:
 *            offset 0 and each of its divisors are written, the largest
 *            first, and after a flush offset 0 reads the period's block
 *            (measure_odd_period()).  The test then runs again knowing it.
 *   search   the last block of 1 MiB units between the end of the last
 *            good position and the first bad one (below the period on a
 *            wraparound card), 16 per round evenly spread, until no unit
 *            is left between them: real_bytes is then at most 1 MiB below
 *            the truth, and never above it (a good block proves the flash
 *            up to its end).  Rounds grow with log17(capacity / 1 MiB).
 *   confirm  every position is read once more; one that reads differently
 *            makes the answer undetermined.  Then the deep check (above):
 *            on a wraparound card too, whose flash between the real end
 *            and the period may lose writes that a cache hides.
 *   recheck  when a position was found bad or offset 0 aliased, every
 *            good one below it is written again (fresh nonce), flushed
 *            and read back: a card
 *            that stopped keeping writes during the test (worn, turning
 *            read-only) loses them (recheck_good()), and is damaged with
 *            only what still keeps data verified.
 *   verdict  wraparound when offset 0 aliased; else genuine when nothing
 *            was bad; damaged when the first bad position failed with an
 *            I/O error or a good position follows it (an island), when a
 *            position read back as its own block with a few bits wrong
 *            (worn flash), when not even offset 0 kept its data or when
 *            the recheck lost a block; limbo
 *            when everything past it lost its writes.  Anything the model
 *            cannot explain (a block of another offset without a period,
 *            a position good once and bad later) gives "undetermined".
 *
 * Known limits: an island smaller than a 16th of the device may be
 * missed; on a card that maps addresses on their first write with a
 * period that is not a power of two, or behind a cache keyed by the
 * address before the folding, the period shows only after the flush,
 * whose blocks past it the journal saved as zeros (docs/design.md); a
 * wrap period that is not a power of two is sure to show only while the
 * comb's positions lie less than a deep flush apart (devices up
 * to 512 times --cache-size; beyond, a genuine verdict has confidence 0.5
 * and says why), and when offset 0 cannot show it the answer is damaged
 * from a lower offset or undetermined; a write cache
 * larger than cache_bytes can hide a limbo card; a loose direct-mapped
 * cache larger than it (one serving a slot's block for any address mapped
 * to it) makes positions read other test blocks: "undetermined".
 * On a wraparound card the flush area aliases onto the real flash: round
 * 0's flush may clobber test blocks (they read the filler of an alias and
 * are set aside, and the search writes them again); later flushes leave
 * out every block landing on a test block.
 */
#include "capacity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "dev.h"
#include "errmsg.h"
#include "stats.h"
#include "units.h"

#define CAPACITY_CHUNK_BYTES (1024u * 1024u)	/* flush I/O size */
#define CAPACITY_HDR_OFFSET 8
#define CAPACITY_HDR_NONCE 16
#define CAPACITY_HDR_KIND 24
#define CAPACITY_HDR_SUM 32
#define CAPACITY_HDR_BYTES 40

enum block_kind {
	KIND_PROBE = 1,			/* a test position */
	KIND_FLUSH = 2,			/* cache-flush filler */
};

/* ------------------------------------------------------------------ */
/* Self-describing blocks */

static void put64(uint8_t *b, size_t at, uint64_t v)
{
	memcpy(b + at, &v, sizeof(v));
}

static uint64_t get64(const uint8_t *b, size_t at)
{
	uint64_t v;

	memcpy(&v, b + at, sizeof(v));
	return v;
}

/* Over the whole block with the checksum field read as zero. */
static uint64_t block_sum(const uint8_t *b, size_t len)
{
	uint64_t h = UINT64_C(0x9e3779b97f4a7c15) ^ len;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w = i == CAPACITY_HDR_SUM ? 0 : get64(b, i);

		h = (h ^ w) * UINT64_C(0x100000001b3);
		h ^= h >> 29;
	}
	return stats_hash64(h);
}

/* Test blocks carry pseudo-random data (so no two look alike and no
 * controller can compress them); flush blocks only their header. */
static void block_fill(uint8_t *b, size_t len, uint64_t off, uint64_t nonce,
		       enum block_kind kind)
{
	if (kind == KIND_PROBE)
		for (size_t i = CAPACITY_HDR_BYTES; i + 8 <= len; i += 8)
			put64(b, i, stats_hash64(nonce ^ off ^ (i * UINT64_C(0x9e3779b97f4a7c15))));
	else
		memset(b + CAPACITY_HDR_BYTES, 0, len - CAPACITY_HDR_BYTES);
	util_mark_test_pieces(b, len);	/* the first piece's is the header's */
	put64(b, CAPACITY_HDR_OFFSET, off);
	put64(b, CAPACITY_HDR_NONCE, nonce);
	put64(b, CAPACITY_HDR_KIND, kind);
	put64(b, CAPACITY_HDR_SUM, block_sum(b, len));
}

/* This run's intact block: its kind and the offset it was written for. */
static bool block_parse(const uint8_t *b, size_t len, uint64_t nonce,
			uint64_t *off, enum block_kind *kind)
{
	if (!util_is_test_block(b, len) || get64(b, CAPACITY_HDR_NONCE) != nonce ||
	    get64(b, CAPACITY_HDR_SUM) != block_sum(b, len))
		return false;
	*off = get64(b, CAPACITY_HDR_OFFSET);
	*kind = (enum block_kind)get64(b, CAPACITY_HDR_KIND);
	return *kind == KIND_PROBE || *kind == KIND_FLUSH;
}

/* ------------------------------------------------------------------ */
/* The plan */

/* A fresh nonce per run, so no block of an earlier run (or a controller
 * that learned one) passes for this run's: the kernel's random bytes,
 * else the clock. */
static uint64_t fresh_nonce(void)
{
	uint64_t n = 0;

	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != (ssize_t)sizeof(n))
		n = clock_now_ns();
	return stats_hash64(n);
}

void capacity_opts_default(struct capacity_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cache_bytes = CAPACITY_DEFAULT_CACHE_BYTES;
	o->nonce = fresh_nonce();
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Units are grid steps; unit u ends at (u + 1) grid, the last one at top. */
static uint64_t unit_end(const struct capacity_plan *p, uint64_t u, uint64_t top)
{
	return u + 1 >= (top + p->grid_bytes - 1) / p->grid_bytes ? top
								   : (u + 1) * p->grid_bytes;
}

static bool overlaps(uint64_t a, uint64_t b, uint64_t len)
{
	return a < b + len && b < a + len;
}

static void plan_add(struct capacity_plan *p, uint64_t off)
{
	for (size_t i = 0; i < p->nfixed; i++)
		if (overlaps(p->fixed[i], off, p->block_bytes))
			return;
	if (p->nfixed < CAPACITY_MAX_FIXED)
		p->fixed[p->nfixed++] = off;
}

/* Rounds the search needs after round 0 to narrow units down to one:
 * each round splits the interval into ROUND_PROBES + 1 parts. */
static unsigned search_levels(uint64_t units)
{
	unsigned levels = 1;

	for (uint64_t span = CAPACITY_ROUND_PROBES + 1; span < units; levels++)
		span *= CAPACITY_ROUND_PROBES + 1;
	return levels;
}

/* The deep flush for a cache of cache_bytes: at most a quarter of the
 * device (a larger cache is not credible), in whole blocks. */
static uint64_t deep_size(uint64_t device_bytes, uint64_t block_bytes, uint64_t cache_bytes)
{
	return min64(cache_bytes, device_bytes / 4) / block_bytes * block_bytes;
}

/* The comb: a position a little below every multiple of the deep flush's
 * size (less one grid step) up to the flush area.  The deep flush lands
 * on a window of that size of a wraparound card's flash, wherever its
 * period: so on at least one comb position below the period, which then
 * reads filler, even when the period is not a power of two (nothing else
 * in round 0 lands on another position then, and every position read
 * back its own block: the card passed as genuine).  At most
 * CAPACITY_COMB_MAX positions: on a larger device (or with a smaller
 * --cache-size) they lie further apart than the window, such a period
 * may be missed, and a genuine verdict says so (confidence 0.5). */
static void plan_comb(struct capacity_plan *p)
{
	uint64_t g = p->grid_bytes, step, end = p->deep_start_bytes;

	if (p->deep_bytes < 2 * g)
		return;
	step = p->deep_bytes - g;
	if (end / step > CAPACITY_COMB_MAX)
		step = (end / CAPACITY_COMB_MAX + g - 1) / g * g;
	p->comb_covers = step < p->deep_bytes;
	for (uint64_t at = step; at < end; at += step)
		plan_add(p, at - p->block_bytes);
}

/* Bytes one pass may write with flushes of flush_bytes before each
 * read-back. */
static uint64_t pass_bytes(const struct capacity_plan *p, uint64_t flush_bytes)
{
	return p->max_probes * p->block_bytes + p->max_rounds * flush_bytes;
}

int capacity_plan(uint64_t device_bytes, uint32_t sector_bytes,
		  const struct capacity_opts *o, struct capacity_plan *p)
{
	uint64_t n = device_bytes, units, c;

	memset(p, 0, sizeof(*p));
	if (sector_bytes == 0 || n % sector_bytes || sector_bytes > CAPACITY_GRID_BYTES ||
	    n < 2 * CAPACITY_GRID_BYTES || o->cache_bytes > CAPACITY_MAX_CACHE_BYTES)
		return -EINVAL;
	p->device_bytes = n;
	p->block_bytes = sector_bytes > CAPACITY_BLOCK_BYTES ? sector_bytes
							     : CAPACITY_BLOCK_BYTES;
	p->grid_bytes = CAPACITY_GRID_BYTES;
	p->end_bytes = n;
	p->writes_may_alias = true;
	/* at the top, below the last block, past the real flash of most
	 * fakes (see the opening comment) */
	p->deep_bytes = deep_size(n, p->block_bytes, o->cache_bytes);
	/* half the deep flush at most, so that even a small device gets the
	 * deep check */
	p->flush_bytes = min64(CAPACITY_ROUND_FLUSH_BYTES,
			       p->deep_bytes / 2 / p->block_bytes * p->block_bytes);
	/* the deep check writes deep_bytes below the round flush: filler no
	 * earlier write put in a cache (the round flush's blocks, rewritten
	 * every round, may only be updated in a cache that holds them, and
	 * push nothing out) */
	p->flush_start_bytes = n - p->block_bytes - p->flush_bytes;
	/* on whole blocks from offset 0 (a size that is not, 1e9 bytes, would
	 * leave them askew): through a wraparound fake's folding, whose
	 * period is whole blocks, filler then lands on the test positions'
	 * blocks whole and reads as another offset's; askew, every
	 * position it hit read as lost and the wrap passed for damage */
	p->flush_start_bytes -= p->flush_start_bytes % p->block_bytes;
	p->deep_start_bytes = p->flush_start_bytes - p->deep_bytes;
	plan_add(p, 0);
	for (c = p->block_bytes; c <= (n - p->block_bytes) / 2; c *= 2)
		;
	for (; c >= p->block_bytes; c /= 2) {
		plan_add(p, c);
		p->npow2++;
	}
	units = (n + p->grid_bytes - 1) / p->grid_bytes;
	for (uint64_t i = 0; i < CAPACITY_STRATA; i++) {
		uint64_t lo = i * units / CAPACITY_STRATA;
		uint64_t hi = (i + 1) * units / CAPACITY_STRATA;

		if (hi > lo)
			plan_add(p, unit_end(p, lo + stats_hash64(o->nonce ^ (i + 1)) %
						     (hi - lo), n) - p->block_bytes);
	}
	plan_comb(p);
	plan_add(p, n - p->block_bytes);
	p->max_rounds = 2 + search_levels(units);
	p->max_probes = (unsigned)p->nfixed + CAPACITY_ROUND_PROBES * (p->max_rounds - 1);
	if (p->max_probes > CAPACITY_MAX_PROBES)
		return -EINVAL;
	p->max_bytes = pass_bytes(p, p->flush_bytes);
	if (p->deep_bytes > p->flush_bytes)	/* the deep check and a second pass */
		p->max_bytes += p->deep_bytes - p->flush_bytes +
				pass_bytes(p, p->deep_bytes);
	/* an odd period's measurement and the pass that knows it, with the
	 * deep flushes at worst */
	p->max_bytes += (CAPACITY_ODD_MAX_CANDIDATES + 1) * p->block_bytes + p->deep_bytes +
			pass_bytes(p, p->deep_bytes) + p->deep_bytes;
	/* recheck_good(): the good positions again, and a flush */
	p->max_bytes += p->max_probes * p->block_bytes + p->deep_bytes;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Running */

struct ctx {
	struct fp_dev *d;
	const struct capacity_opts *o;
	const struct capacity_plan *p;
	struct capacity_result *r;
	uint8_t *blk;			/* one block */
	uint8_t *expect;		/* one block: what a probe should read */
	uint8_t *chunk;			/* one flush chunk */
	bool flush_error_noted;
	bool flush_loss_noted;
	bool contradiction;
	bool may_reveal;		/* a position losing its block now means
					 * a cache served it (the first pass) */
	bool cache_hid;			/* ... and one did */
	uint64_t top;			/* end of what can be real */
	uint64_t nonce;			/* this pass's (the second has its own) */
	uint64_t flush_start;		/* the flush before each read-back */
	uint64_t flush_bytes;
	bool odd_alias;			/* a position read a block of another
					 * offset that no period explains: */
	uint64_t odd_pos, odd_claim;	/* the first one, and the block's offset */
	uint64_t known_period;		/* set by odd_period_pass() */
	uint64_t fold;			/* a power-of-two period seen before
					 * the first flush: writes go where
					 * they land (write_at()) */
};

/* -EIO is evidence about the position; everything else stops the test. */
static bool is_media_error(int rc)
{
	return rc == -EIO || rc == -EILSEQ || rc == -ENXIO;
}

static int add_probe(struct ctx *c, uint64_t off)
{
	struct capacity_result *r = c->r;

	if (r->nprobes >= CAPACITY_MAX_PROBES)
		return -ENOSPC;
	r->probes[r->nprobes++] = (struct capacity_probe){ .offset_bytes = off,
							   .round = r->rounds };
	return 0;
}

/* Write the position's block (an I/O error there is evidence: its
 * state), counted by the callers. */
static int write_block(struct ctx *c, struct capacity_probe *pr)
{
	size_t b = (size_t)c->p->block_bytes;
	int rc;

	block_fill(c->blk, b, pr->offset_bytes, c->nonce, KIND_PROBE);
	rc = fp_dev_write_timed(c->d, c->blk, b, pr->offset_bytes, NULL);
	if (is_media_error(rc)) {
		pr->state = pr->first = CAPACITY_IOERR;
		return 0;
	}
	return rc;
}

static int write_probe(struct ctx *c, struct capacity_probe *pr)
{
	c->r->blocks_tested++;
	return write_block(c, pr);
}

static enum capacity_state classify(struct ctx *c, const struct capacity_probe *pr,
				    uint64_t *claimed, bool *filler)
{
	enum block_kind kind;

	if (!block_parse(c->blk, (size_t)c->p->block_bytes, c->nonce, claimed, &kind))
		return CAPACITY_LOST;
	*filler = kind == KIND_FLUSH;
	if (*claimed != pr->offset_bytes)
		return CAPACITY_FOREIGN;
	return kind == KIND_PROBE ? CAPACITY_OWN : CAPACITY_LOST;
}

/* Bits in which two blocks differ, at most one in GARBLED_BIT_SHARE:
 * its own block with bit errors.  A dropped write reads zeros or older
 * data, another offset's block other pseudo-random data: about half the
 * bits differ. */
#define GARBLED_BIT_SHARE 64

static bool garbled_own(struct ctx *c, const struct capacity_probe *pr)
{
	size_t b = (size_t)c->p->block_bytes;
	uint64_t bits = 0;

	block_fill(c->expect, b, pr->offset_bytes, c->nonce, KIND_PROBE);
	for (size_t i = 0; i < b; i++)
		bits += (uint64_t)__builtin_popcount(c->blk[i] ^ c->expect[i]);
	return bits > 0 && bits <= b * 8 / GARBLED_BIT_SHARE;
}

/* Read the position into c->blk: *st is what it holds (classify()), or
 * CAPACITY_IOERR when the read failed with a media error.  0, or the
 * error that stops the test. */
static int read_block(struct ctx *c, const struct capacity_probe *pr,
		      enum capacity_state *st, uint64_t *claimed, bool *filler)
{
	int rc = fp_dev_read_timed(c->d, c->blk, (size_t)c->p->block_bytes,
				   pr->offset_bytes, NULL);

	*st = CAPACITY_IOERR;
	if (rc == 0)
		*st = classify(c, pr, claimed, filler);
	return is_media_error(rc) ? 0 : rc;
}

static int read_probe(struct ctx *c, struct capacity_probe *pr)
{
	enum capacity_state st;
	uint64_t claimed = 0;
	bool filler = false;
	int rc;

	if (pr->first == CAPACITY_IOERR && pr->state == CAPACITY_IOERR)
		return 0;	/* its write failed */
	rc = read_block(c, pr, &st, &claimed, &filler);
	if (rc)
		return rc;
	pr->garbled = st == CAPACITY_LOST && garbled_own(c, pr);
	/* each position is written once: reading it differently later has no
	 * explanation in the model (unstable media or reader, a cache larger
	 * than the flush: the first pass then ends, see run_passes()), except
	 * another offset's block landing on it, which sort_out_aliasing()
	 * judges; a position set aside for that
	 * says nothing any more (our own filler may come and go there) */
	if (c->may_reveal && pr->state == CAPACITY_OWN && !pr->ignored &&
	    (st == CAPACITY_LOST || (st == CAPACITY_FOREIGN && filler)))
		c->cache_hid = true;
	else if (!pr->ignored && pr->state != CAPACITY_UNREAD && st != pr->state &&
		 st != CAPACITY_FOREIGN)
		c->contradiction = true;
	if (pr->first == CAPACITY_UNREAD)
		pr->first = st;
	pr->state = st;
	pr->claimed_bytes = claimed;
	pr->claimed_filler = filler;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* An I/O error in the flush area is evidence like a failed test block:
 * the first failing block is found once and kept as a failed position. */
static int note_flush_error(struct ctx *c, uint64_t off, uint64_t end)
{
	size_t b = (size_t)c->p->block_bytes;
	struct capacity_probe *pr;
	int rc = 0;

	if (c->flush_error_noted)
		return 0;
	c->flush_error_noted = true;
	for (; off < end; off += b) {
		block_fill(c->blk, b, off, c->nonce, KIND_FLUSH);
		rc = fp_dev_write_timed(c->d, c->blk, b, off, NULL);
		if (rc == 0)
			rc = fp_dev_read_timed(c->d, c->blk, b, off, NULL);
		if (rc)
			break;
	}
	if (!is_media_error(rc))
		return rc;
	if (add_probe(c, off))
		return 0;
	pr = &c->r->probes[c->r->nprobes - 1];
	pr->state = pr->first = CAPACITY_IOERR;
	return 0;
}

/* The filler just written and read back at [off, off + len) (in
 * c->chunk) must be what was written: a card that drops writes silently
 * once worn (or once some amount was written) loses the flush's filler
 * where no test block lies, and the test blocks written before it still
 * read back whole.  The first filler block that did not keep its data is
 * kept as a lost position, evidence like a lost test block. */
static void note_flush_loss(struct ctx *c, uint64_t off, size_t len)
{
	size_t b = (size_t)c->p->block_bytes;
	struct capacity_probe *pr;

	for (size_t i = 0; !c->flush_loss_noted && i + b <= len; i += b) {
		enum block_kind kind;
		uint64_t at;

		if (block_parse(c->chunk + i, b, c->nonce, &at, &kind) &&
		    kind == KIND_FLUSH && at == off + i)
			continue;
		c->flush_loss_noted = true;
		if (add_probe(c, off + i) == 0) {
			pr = &c->r->probes[c->r->nprobes - 1];
			pr->state = pr->first = CAPACITY_LOST;
		}
	}
}

/* Where filler for offset off is written: where it lands once
 * early_period() has seen the period, so that a journal below saves what
 * the write really replaces.  A piece never crosses a multiple of the
 * period: the block that would is left out, as it lands on offset 0's
 * test block (avoided()). */
static uint64_t write_at(const struct ctx *c, uint64_t off)
{
	return c->fold ? off % c->fold : off;
}

/* Write then read [off, end) of the flush area with filler blocks. */
static int flush_piece(struct ctx *c, uint64_t off, uint64_t end)
{
	size_t b = (size_t)c->p->block_bytes, len = (size_t)(end - off);
	int rc;

	for (size_t i = 0; i < len; i += b)
		block_fill(c->chunk + i, min64(b, len - i), off + i, c->nonce, KIND_FLUSH);
	rc = fp_dev_write_timed(c->d, c->chunk, len, write_at(c, off), NULL);
	if (rc == 0)
		rc = fp_dev_read_timed(c->d, c->chunk, len, write_at(c, off), NULL);
	if (rc == 0)
		note_flush_loss(c, off, len);
	return is_media_error(rc) ? note_flush_error(c, off, end) : rc;
}

/* Where offset off lands: on a wraparound card off mod period. */
static uint64_t landing(const struct ctx *c, uint64_t off)
{
	return c->r->alias_period_bytes ? off % c->r->alias_period_bytes : off;
}

/* Blocks a flush leaves out: sorted offsets, and the period they repeat
 * with (0: none).  A block at off is left out when it would land on one
 * of them. */
struct avoid {
	const uint64_t *at;
	size_t n;
	uint64_t period;
};

static bool avoided(const struct ctx *c, const struct avoid *a, uint64_t off)
{
	uint64_t at = a->period ? off % a->period : off, b = c->p->block_bytes;
	size_t lo = 0, hi = a->n;

	while (lo < hi) {	/* the first one above at - b */
		size_t mid = lo + (hi - lo) / 2;

		if (a->at[mid] + b <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < a->n && a->at[lo] < at + b) ||
	       (a->period && a->n && a->at[0] < b && at + b > a->period);
}

/* Defeat a write cache: [off, end) of filler written and read in runs
 * of up to one chunk, leaving out every block that would land on one of
 * the blocks to avoid under any of the periods (on a wraparound card the
 * area itself may alias onto them). */
static int flush_avoiding(struct ctx *c, uint64_t off, uint64_t end,
			  const struct avoid *avoid, size_t navoid)
{
	int rc = 0;

	while (rc == 0 && off < end) {
		uint64_t run = off;
		bool skip = false;

		while (run < end && run - off < CAPACITY_CHUNK_BYTES && !skip) {
			for (size_t i = 0; i < navoid && !skip; i++)
				skip = avoided(c, &avoid[i], run);
			if (!skip)
				run += c->p->block_bytes;
		}
		if (run > off)
			rc = flush_piece(c, off, run);
		off = run > off ? run : off + c->p->block_bytes;
	}
	return rc;
}

/* The flush before a read-back, leaving out the blocks that land on a
 * test block (where the period, if known, says they land). */
static int flush_area(struct ctx *c, uint64_t off, uint64_t end)
{
	uint64_t *landings = malloc((c->r->nprobes + 1) * sizeof(*landings));
	struct avoid a = { .at = landings, .n = 0, .period = c->r->alias_period_bytes };
	int rc;

	if (!landings)
		return -ENOMEM;
	for (size_t i = 0; i < c->r->nprobes; i++)
		landings[a.n++] = landing(c, c->r->probes[i].offset_bytes);
	qsort(landings, a.n, sizeof(*landings), cmp_u64);
	rc = flush_avoiding(c, off, end, &a, 1);
	free(landings);
	return rc;
}

/* Write the probes from first on, flush, read back every probe. */
static int run_round(struct ctx *c, size_t first)
{
	struct capacity_result *r = c->r;
	int rc = 0;

	for (size_t i = first; rc == 0 && i < r->nprobes; i++)
		rc = write_probe(c, &r->probes[i]);
	if (rc == 0 && c->flush_bytes) {
		rc = flush_area(c, c->flush_start, c->flush_start + c->flush_bytes);
		/* the second pass flushes the deep area every round */
		if (r->cache_hid_loss)
			r->deep_flushes++;
		else
			r->flushes++;
	}
	for (size_t i = 0; rc == 0 && i < r->nprobes; i++)
		rc = read_probe(c, &r->probes[i]);
	r->rounds++;
	if (c->o->progress)
		c->o->progress(c->o->progress_arg, r->rounds, c->p->max_rounds);
	return rc;
}

/* What a position reads as an offset claim: its own, or another's. */
static bool claim_of(const struct capacity_probe *pr, uint64_t *claim)
{
	*claim = pr->state == CAPACITY_OWN ? pr->offset_bytes : pr->claimed_bytes;
	return pr->state == CAPACITY_OWN || pr->state == CAPACITY_FOREIGN;
}

/* Offset 0 reads another offset's block: the smallest power of two that
 * reads the same block is the period, and every larger one must too.
 * 0 when the pattern is not a power-of-two wraparound (an odd period is
 * measured apart: measure_odd_period()). */
static uint64_t find_period(const struct ctx *c)
{
	const struct capacity_probe *pr = c->r->probes;
	uint64_t anchor = pr[0].claimed_bytes, claim, period = 0;

	/* fixed[1..npow2] hold the powers of two from the top down */
	for (size_t i = c->p->npow2; i >= 1; i--) {
		bool same = claim_of(&pr[i], &claim) && claim == anchor;

		if (!period && same)
			period = pr[i].offset_bytes;
		else if (period && !same)
			return 0;
	}
	return period;
}

/* A block of another offset that no period explains: the first such
 * pair is kept.  A wraparound whose period is not a power of two shows
 * that way (the difference is a multiple of the period), and so does a
 * loose cache's slot. */
static void note_odd_alias(struct ctx *c, const struct capacity_probe *pr)
{
	if (c->odd_alias)
		return;
	c->odd_alias = true;
	c->odd_pos = pr->offset_bytes;
	c->odd_claim = pr->claimed_bytes;
}

/* Blocks of other offsets that the period explains are our own aliasing,
 * not evidence about the position.  Without that explanation, flush
 * filler there means the position serves what was written elsewhere (a
 * loose direct-mapped cache of a fake: the slot's last block): it does
 * not keep its own data.  Another test block there is a cache's doing in
 * the first pass (the second, with the deep flush, decides), else a
 * contradiction. */
static void sort_out_aliasing(struct ctx *c, uint64_t period)
{
	struct capacity_result *r = c->r;

	for (size_t i = 0; i < r->nprobes; i++) {
		struct capacity_probe *pr = &r->probes[i];

		if (pr->state != CAPACITY_FOREIGN)
			continue;
		r->aliasing_seen = true;
		if (period && pr->claimed_bytes % period == pr->offset_bytes % period) {
			pr->ignored = true;
			continue;
		}
		note_odd_alias(c, pr);
		if (pr->claimed_filler)
			pr->state = CAPACITY_LOST;
		else if (c->may_reveal)
			c->cache_hid = true;
		else
			c->contradiction = true;
	}
}

static bool counts(const struct ctx *c, const struct capacity_probe *pr)
{
	return !pr->ignored && pr->offset_bytes + c->p->block_bytes <= c->top;
}

/* The first bad position below top and the end of the last good one
 * below it. */
static void boundary(const struct ctx *c, uint64_t *good_end, bool *bad_found,
		     uint64_t *bad)
{
	const struct capacity_result *r = c->r;

	*bad_found = false;
	*bad = c->top;
	for (size_t i = 0; i < r->nprobes; i++)
		if (counts(c, &r->probes[i]) && r->probes[i].state != CAPACITY_OWN &&
		    r->probes[i].offset_bytes < *bad) {
			*bad = r->probes[i].offset_bytes;
			*bad_found = true;
		}
	*good_end = 0;
	for (size_t i = 0; i < r->nprobes; i++) {
		uint64_t end = r->probes[i].offset_bytes + c->p->block_bytes;

		if (counts(c, &r->probes[i]) && r->probes[i].state == CAPACITY_OWN &&
		    (!*bad_found || r->probes[i].offset_bytes < *bad) && end > *good_end)
			*good_end = end;
	}
}

/* Queue the block of unit u, or write a clobbered one again.  Returns 1
 * when a block was queued, 0 when u is tested already. */
static int queue_unit(struct ctx *c, uint64_t u)
{
	struct capacity_result *r = c->r;
	uint64_t off = unit_end(c->p, u, c->top) - c->p->block_bytes;
	struct capacity_probe again = { .offset_bytes = off, .round = r->rounds };

	for (size_t i = 0; i < r->nprobes; i++) {
		struct capacity_probe *pr = &r->probes[i];

		if (!overlaps(pr->offset_bytes, off, c->p->block_bytes))
			continue;
		if (!pr->ignored || pr->offset_bytes != off)
			return 0;
		/* clobbered by our own aliasing: to the end of the list, fresh */
		memmove(pr, pr + 1, (r->nprobes - i - 1) * sizeof(*pr));
		r->probes[r->nprobes - 1] = again;
		return 1;
	}
	return add_probe(c, off) == 0;
}

/* One search round's positions: up to ROUND_PROBES unit ends evenly
 * spread over the units ending after the good end and at or before the
 * first bad block (or top).  Returns how many were queued. */
static unsigned queue_search(struct ctx *c)
{
	uint64_t g = c->p->grid_bytes, units = (c->top + g - 1) / g;
	uint64_t good_end, bad, u_lo, u_hi, count, m;
	unsigned queued = 0;
	bool bad_found;

	boundary(c, &good_end, &bad_found, &bad);
	u_lo = good_end / g;	/* the first unit ending after good_end */
	if (!bad_found)
		u_hi = units - 1;
	else if (bad / g == 0)
		return 0;
	else
		u_hi = bad / g - 1;	/* the last unit ending at or before bad */
	if (u_lo >= units || u_hi < u_lo)
		return 0;
	count = u_hi - u_lo + 1;
	m = min64(CAPACITY_ROUND_PROBES, count);
	for (uint64_t i = 0; i < m && c->r->nprobes < CAPACITY_MAX_PROBES; i++)
		queued += (unsigned)queue_unit(c, u_lo + (i + 1) * count / m - 1);
	return queued;
}

static bool any_own_above(const struct ctx *c, uint64_t bad)
{
	for (size_t i = 0; i < c->r->nprobes; i++)
		if (!c->r->probes[i].ignored && c->r->probes[i].offset_bytes > bad &&
		    c->r->probes[i].state == CAPACITY_OWN)
			return true;
	return false;
}

/* Some position read back as its own block with bit errors. */
static bool any_garbled(const struct ctx *c)
{
	for (size_t i = 0; i < c->r->nprobes; i++)
		if (counts(c, &c->r->probes[i]) && c->r->probes[i].garbled)
			return true;
	return false;
}

static enum capacity_state state_at(const struct ctx *c, uint64_t off)
{
	for (size_t i = 0; i < c->r->nprobes; i++)
		if (c->r->probes[i].offset_bytes == off && !c->r->probes[i].ignored)
			return c->r->probes[i].state;
	return CAPACITY_UNREAD;
}

/* A deep flush smaller than the default one (capped by the device):
 * a fake's larger cache could hide lost writes from it. */
static bool small_cache(const struct capacity_plan *p)
{
	return p->deep_bytes < deep_size(p->device_bytes, p->block_bytes,
					 CAPACITY_DEFAULT_CACHE_BYTES);
}

static void conclude(struct ctx *c, bool converged)
{
	struct capacity_result *r = c->r;
	uint64_t good_end, bad;
	bool bad_found, sure = r->cache_defeated;
	char deep[32], flush[32];

	boundary(c, &good_end, &bad_found, &bad);
	/* a card that loses first writes where it kept others vouches for
	 * no address: what it kept is what it wrote first */
	r->real_bytes = r->fresh_lost ? 0 : good_end;
	r->first_bad_known = bad_found || r->alias_period_bytes;
	/* the damage starts somewhere between the last good block's end and
	 * the first bad block (the search leaves at most one grid step
	 * between them): report its start as real_bytes does, not the bad
	 * test block's offset almost a grid step higher */
	r->first_bad_bytes = bad_found ? good_end : r->alias_period_bytes;
	if (c->contradiction || !converged) {
		r->verdict = CAPACITY_UNDETERMINED;
		r->real_bytes = 0;
		snprintf(r->note, sizeof(r->note), "%s", !converged ?
			 "the search did not converge" :
			 "read-backs the fake-card model cannot explain (unstable "
			 "media, a cache larger than the flush, or aliasing that is "
			 "not a wraparound)");
	} else if ((bad_found && state_at(c, bad) == CAPACITY_IOERR) ||
		   r->stopped_keeping) {
		r->verdict = CAPACITY_DAMAGED;
	} else if (r->alias_period_bytes) {
		r->verdict = CAPACITY_WRAPAROUND;
	} else if (!bad_found) {
		r->verdict = CAPACITY_GENUINE;
	} else {
		/* a fake card's real flash is a prefix that keeps data, and its
		 * lost writes read back as zeros or old data, never as the
		 * block with a few bits wrong */
		r->verdict = any_own_above(c, bad) || any_garbled(c) || good_end == 0 ?
			     CAPACITY_DAMAGED : CAPACITY_LIMBO;
	}
	if (r->verdict == CAPACITY_UNDETERMINED)
		r->confidence = 0;
	else if (r->verdict == CAPACITY_GENUINE)
		r->confidence = !sure ? 0.5 : small_cache(c->p) ? 0.8 : 0.9;
	else
		r->confidence = sure ? 0.95 : 0.7;
	if (r->fresh_lost && r->verdict == CAPACITY_DAMAGED)
		snprintf(r->note, sizeof(r->note), "blocks written for the first time "
			 "between positions that had kept theirs were lost: it keeps "
			 "what it was written first, wherever (a counterfeit whose "
			 "flash is smaller than its addresses, or a worn card)");
	else if (r->stopped_keeping && r->verdict == CAPACITY_DAMAGED)
		snprintf(r->note, sizeof(r->note), "test positions that had kept their "
			 "blocks lost them when written again: the card stopped keeping "
			 "writes during the test (worn out, or turned read-only)");
	units_format_bytes(c->p->deep_bytes, deep, sizeof(deep));
	if (r->verdict == CAPACITY_GENUINE && !c->p->comb_covers) {
		/* a wraparound of a period that is not a power of two could
		 * have landed the deep flush between the comb's positions */
		r->confidence = 0.5;
		snprintf(r->note, sizeof(r->note), "a wraparound at a size that is not "
			 "a power of two was not ruled out: the deep flush (%s, "
			 "--cache-size) is smaller than the gaps between the test "
			 "positions", deep);
	}
	if (sure && small_cache(c->p) && r->verdict == CAPACITY_GENUINE && !r->note[0])
		snprintf(r->note, sizeof(r->note), "write caches over %s were not "
			 "ruled out (--cache-size)", deep);
	if (!sure && !r->note[0])
		snprintf(r->note, sizeof(r->note), "%s", !c->p->flush_bytes ?
			 "no cache flush: a write cache could have served lost writes" :
			 "no flush as large as the cache size asked for came before the "
			 "last read-backs");
	else if (r->cache_hid_loss && !c->known_period && !r->note[0])
		/* with an odd period measured, the deep flush that ended the
		 * first pass landed on test positions through the wraparound:
		 * no cache needed */
		snprintf(r->note, sizeof(r->note), "a write cache larger than the "
			 "%s flushes served lost writes; the test ran again with %s "
			 "flushes", units_format_bytes(c->p->flush_bytes, flush, sizeof(flush)),
			 deep);
}

/* Rounds until no unit is left between the good end and the first bad
 * position.  0 when converged (or contradicted), -EAGAIN when the rounds
 * ran out, or the error that stopped it. */
static int search(struct ctx *c)
{
	struct capacity_result *r = c->r;

	while (!c->contradiction && !c->cache_hid) {
		unsigned queued;
		int rc;

		if (r->rounds >= c->p->max_rounds)
			return -EAGAIN;
		queued = queue_search(c);
		if (queued == 0)
			return 0;
		/* this round's blocks are the last ones (see queue_unit) */
		rc = run_round(c, r->nprobes - queued);
		if (rc)
			return rc;
		sort_out_aliasing(c, r->alias_period_bytes);
	}
	return 0;
}

/* Read every position once more: a second look at what the verdict
 * rests on (read_probe() flags any change). */
static int confirm(struct ctx *c)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < c->r->nprobes; i++)
		rc = read_probe(c, &c->r->probes[i]);
	if (rc == 0)
		sort_out_aliasing(c, c->r->alias_period_bytes);
	return rc;
}

/* The deep check (see the opening comment): the rest of the deep area
 * flushed, then confirm() again; sets c->cache_hid when a position that
 * kept its own block lost it. */
static int deep_check(struct ctx *c)
{
	int rc;

	c->r->deep_flush_bytes = c->p->deep_bytes;
	c->r->deep_flushes++;
	rc = flush_area(c, c->p->deep_start_bytes, c->p->flush_start_bytes);
	return rc ? rc : confirm(c);
}

/* Offset 0 read back right after round 0 wrote it and then the powers of
 * two from the top down, before anything else: on a wraparound card of a
 * power-of-two period, every one at or above the period landed on it,
 * the period's last, and it reads the period's block (unless a cache in
 * front of the address folding serves its own).  Knowing the period this
 * early matters to the user's data: a card whose controller maps an
 * address on its first write reads zeros at one never written past the
 * period, so a journal that saves what a write replaces by reading its
 * address would save those zeros, not the data the write destroys where
 * it lands.  Writes up to here land on offset 0 or on themselves, and
 * offset 0 was written (so saved) first; from here on round 0 leaves out
 * its positions past the period and the flushes write where they land
 * (write_at()). */
static int early_period(struct ctx *c)
{
	const struct capacity_plan *p = c->p;
	uint64_t claimed;
	enum block_kind kind;
	int rc = fp_dev_read_timed(c->d, c->blk, (size_t)p->block_bytes, 0, NULL);

	if (rc || !block_parse(c->blk, (size_t)p->block_bytes, c->nonce, &claimed, &kind) ||
	    kind != KIND_PROBE)
		return is_media_error(rc) ? 0 : rc;
	for (size_t i = 1; i <= p->npow2; i++)
		if (p->fixed[i] == claimed)
			c->fold = claimed;
	return 0;
}

/* Round 0's positions: offset 0 and the powers of two written first
 * (early_period()), then the rest below the period if one showed. */
static int round_zero_positions(struct ctx *c)
{
	const struct capacity_plan *p = c->p;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i <= p->npow2; i++)
		rc = add_probe(c, p->fixed[i]);
	for (size_t i = 0; rc == 0 && i < c->r->nprobes; i++)
		rc = write_probe(c, &c->r->probes[i]);
	if (rc == 0 && !c->known_period)
		rc = early_period(c);
	for (size_t i = p->npow2 + 1; rc == 0 && i < p->nfixed; i++)
		if (!c->fold || p->fixed[i] + p->block_bytes <= c->fold)
			rc = add_probe(c, p->fixed[i]);
	/* the flush leaves out what lands on a position */
	c->r->alias_period_bytes = c->fold;
	return rc;
}

static int round_zero(struct ctx *c)
{
	struct capacity_result *r = c->r;
	int rc = round_zero_positions(c);

	if (rc == 0)
		rc = run_round(c, c->p->npow2 + 1);
	if (rc)
		return rc;
	r->alias_period_bytes = 0;
	if (c->known_period) {
		r->alias_period_bytes = c->known_period;
		c->top = c->known_period;
	} else if (r->probes[0].state == CAPACITY_FOREIGN) {
		r->alias_period_bytes = find_period(c);
		if (r->alias_period_bytes)
			c->top = r->alias_period_bytes;
	}
	/* offset 0 read a period's block before the flush, and not after (a
	 * smaller period is one whose own write was lost: its multiple
	 * folded the writes where they land just the same) */
	if (c->fold && (!r->alias_period_bytes || c->fold % r->alias_period_bytes))
		c->contradiction = true;
	sort_out_aliasing(c, r->alias_period_bytes);
	return 0;
}

static int one_pass(struct ctx *c)
{
	int rc = round_zero(c);

	if (rc == 0)
		rc = search(c);
	if (rc == 0)
		rc = confirm(c);
	return rc;
}

/* Forget this pass's positions: the next one starts afresh, with a new
 * nonce (the old blocks then read as lost). */
static void forget_pass(struct ctx *c)
{
	struct capacity_result *r = c->r;

	memset(r->probes, 0, sizeof(r->probes));
	r->nprobes = 0;
	r->rounds = 0;
	r->alias_period_bytes = 0;
	c->nonce = stats_hash64(c->nonce + 1);
	c->top = c->p->device_bytes;
	c->contradiction = c->cache_hid = c->may_reveal = c->flush_error_noted = false;
	c->flush_loss_noted = c->odd_alias = false;
	c->fold = 0;
}

/* A cache hid lost writes from the round flushes: test again with the
 * deep flush before every read-back. */
static void second_pass(struct ctx *c)
{
	forget_pass(c);
	c->r->cache_hid_loss = true;
	c->r->deep_flush_bytes = c->p->deep_bytes;
	c->flush_start = c->p->deep_start_bytes;
	c->flush_bytes = c->p->deep_bytes;
}

/* The period behind an odd alias (see note_odd_alias()): position p read
 * the block (filler or test) of offset x, so |x - p| is a multiple k of
 * the period.  Offset
 * 0 is written, then (x - p) / k for every k that divides it, the largest
 * first; after a flush offset 0 reads the block of the last one that
 * landed on it: the smallest multiple of the period, the period itself.
 * 0 when offset 0 reads anything else: its own block (a cache's slot,
 * not a wraparound: the verdict stands) or filler (the flush landed on
 * it), the verdict then resting on the positions found bad.  Periods
 * under the 1 MiB search grid are not candidates: the flush leaves out
 * every block landing on offset 0 under any candidate, and candidates
 * of a few KiB cut it into single blocks (a 1 GiB flush took 200,000
 * I/Os on a 4 GiB card holding 1000 MiB). */
static int measure_odd_period(struct ctx *c, uint64_t *period)
{
	const struct capacity_plan *p = c->p;
	uint64_t d = c->odd_claim > c->odd_pos ? c->odd_claim - c->odd_pos
					       : c->odd_pos - c->odd_claim;
	static const uint64_t zero = 0;
	uint64_t b = p->block_bytes, claimed;
	struct capacity_probe at0 = { .offset_bytes = 0 }, cand = { 0 };
	struct avoid *cands = calloc(CAPACITY_ODD_MAX_CANDIDATES, sizeof(*cands));
	enum block_kind kind;
	size_t n = 0;
	int rc;

	*period = 0;
	if (!cands)
		return -ENOMEM;
	rc = write_probe(c, &at0);
	for (uint64_t k = 1; rc == 0 && d / k >= p->grid_bytes && n < CAPACITY_ODD_MAX_CANDIDATES;
	     k++)
		if (d % k == 0 && (d / k) % b == 0 && d / k + b <= p->device_bytes) {
			cand.offset_bytes = d / k;
			rc = write_probe(c, &cand);
			cands[n++] = (struct avoid){ .at = &zero, .n = 1, .period = d / k };
		}
	/* the filler must not land on offset 0 under any candidate */
	if (rc == 0 && c->flush_bytes)
		rc = flush_avoiding(c, c->flush_start, c->flush_start + c->flush_bytes,
				    cands, n);
	free(cands);
	if (rc == 0)
		rc = fp_dev_read_timed(c->d, c->blk, (size_t)b, 0, NULL);
	if (is_media_error(rc))
		return 0;
	if (rc == 0 && block_parse(c->blk, (size_t)b, c->nonce, &claimed, &kind) &&
	    kind == KIND_PROBE && claimed > 0 && d % claimed == 0)
		*period = claimed;
	return rc;
}

/* An odd alias whose period measure_odd_period() finds: the test runs
 * again knowing it (its blocks then land where the period says, and the
 * search looks for the real flash below it), with the flushes of the
 * pass before, and decides alone.  Without a period what the passes
 * found stands (undetermined after a contradiction). */
static int odd_period_pass(struct ctx *c)
{
	uint64_t period;
	int rc = measure_odd_period(c, &period);

	if (rc || !period)
		return rc;
	forget_pass(c);
	c->known_period = period;
	rc = one_pass(c);
	if (rc == 0 && !c->r->cache_hid_loss && !c->contradiction)
		rc = deep_check(c);
	return rc;
}

/* The first pass, with the round flushes, then the deep check; the
 * second pass when a position lost its block in either.  0, -EAGAIN (a
 * search that did not converge), or the error that stopped the test. */
static int run_passes(struct ctx *c)
{
	int rc;

	c->may_reveal = c->p->deep_bytes > c->p->flush_bytes;
	rc = one_pass(c);
	if (rc == 0 && !c->cache_hid && !c->contradiction && c->may_reveal)
		rc = deep_check(c);
	if (rc == 0 && c->cache_hid) {
		second_pass(c);
		rc = one_pass(c);
	}
	if (rc == 0 && c->odd_alias)
		rc = odd_period_pass(c);
	return rc;
}

/* recheck_good()'s write: the position's block under the new nonce. */
static int rewrite_probe(struct ctx *c, struct capacity_probe *pr)
{
	pr->rechecked = true;
	c->r->blocks_rechecked++;
	return write_block(c, pr);
}

/* What the position reads now: its (new) block, anything else (lost), or
 * an I/O error. */
static int read_state(struct ctx *c, const struct capacity_probe *pr,
		      enum capacity_state *st)
{
	uint64_t claimed;
	bool filler;
	int rc = read_block(c, pr, st, &claimed, &filler);

	if (*st == CAPACITY_FOREIGN)
		*st = CAPACITY_LOST;
	return rc;
}

/* recheck_good()'s read-back: a failed write, or anything but the new
 * block when a second read agrees, makes the position bad; a flaky
 * reader that loses a read now and then is no worn card: undetermined. */
static int reread_probe(struct ctx *c, struct capacity_probe *pr)
{
	enum capacity_state st, again;
	int rc;

	if (pr->state != CAPACITY_IOERR) {	/* else the write failed */
		rc = read_state(c, pr, &st);
		if (rc || st == CAPACITY_OWN)
			return rc;
		rc = read_state(c, pr, &again);
		if (rc)
			return rc;
		if (again != st) {
			c->contradiction = true;
			return 0;
		}
		pr->state = st;
	}
	c->r->stopped_keeping = true;
	return 0;
}

/* The gap between written places that recheck_good() puts a fresh
 * position in the middle of: far enough from both ends to lie in another
 * erase block than either on every card (SD AUs go up to 24 MiB, but a
 * unit shared with a written neighbour only hides the loss). */
#define FRESH_GAP_BYTES (16ull * 1024 * 1024)
#define FRESH_MAX 16u

/* The middles of the gaps of at least FRESH_GAP_BYTES between the
 * places the test wrote (its positions and the flush areas), below
 * good_end, as new positions (up to FRESH_MAX, spread evenly). */
static int add_fresh_positions(struct ctx *c, uint64_t good_end)
{
	struct capacity_result *r = c->r;
	uint64_t *at = malloc((r->nprobes + 1) * sizeof(*at)), mid[64];
	uint64_t b = c->p->block_bytes, flushed = c->flush_start;
	size_t n = 0, nmid = 0;
	int rc = 0;

	if (!at)
		return -ENOMEM;
	if (r->deep_flush_bytes && c->p->deep_start_bytes < flushed)
		flushed = c->p->deep_start_bytes;
	for (size_t i = 0; i < r->nprobes; i++)
		at[n++] = r->probes[i].offset_bytes;
	at[n++] = flushed;
	qsort(at, n, sizeof(*at), cmp_u64);
	for (size_t i = 0; i + 1 < n && nmid < 64; i++) {
		uint64_t lo = at[i] + b, m = (lo + at[i + 1]) / 2 / b * b;

		if (at[i + 1] > lo && at[i + 1] - lo >= FRESH_GAP_BYTES && m + b <= good_end)
			mid[nmid++] = m;
	}
	for (size_t k = 0; rc == 0 && k < min64(nmid, FRESH_MAX); k++) {
		struct capacity_probe *pr;

		rc = add_probe(c, mid[k * nmid / min64(nmid, FRESH_MAX)]);
		if (rc)
			break;
		pr = &r->probes[r->nprobes - 1];
		pr->state = pr->first = CAPACITY_OWN;	/* until it reads otherwise */
		pr->rechecked = pr->fresh = true;
		r->blocks_fresh++;
		rc = write_block(c, pr);
	}
	free(at);
	return rc == -ENOSPC ? 0 : rc;
}

/* A card that stops keeping writes partway through the test (a worn
 * card turning read-only once some amount was written, silently or with
 * errors) keeps the blocks written before and loses those written after:
 * the first bad position is then wherever the test happened to be
 * writing, and the good ones below it prove only what the card kept,
 * not what it keeps.  So when a position was found bad, or offset 0
 * aliased (a wraparound fake can wear out too; its good positions below
 * the period were written before most of the flushes), every good one
 * below it is written again under a fresh nonce, flushed, and read back:
 * one that loses its new block is bad now (r->stopped_keeping).  A fake's
 * real flash and a damaged card's sound part keep them.
 *
 * New positions in the gaps of the good part are written with them: a
 * counterfeit whose controller gives each erase block a unit of its
 * flash on the block's first write, wherever it is, keeps every block
 * the test wrote until the flash runs out, and loses the later ones
 * whatever their address.  Its good positions span far more than its
 * flash (an attack's card: 780 MiB "verified" on 256 MiB of flash), and
 * rewriting them proves nothing, as they have their flash already; a
 * first write in between loses its block there (r->fresh_lost), where a
 * fake whose flash is a prefix, or a card damaged in one place, keeps
 * it.  Not on a wraparound card: its flushes landed all over the good
 * part. */
static int recheck_good(struct ctx *c)
{
	struct capacity_result *r = c->r;
	uint64_t good_end, bad;
	unsigned lost[2] = { 0, 0 };	/* rewritten, fresh */
	bool bad_found;
	int rc = 0;

	boundary(c, &good_end, &bad_found, &bad);
	if ((!bad_found && !r->alias_period_bytes) || good_end == 0 || c->contradiction)
		return 0;
	c->nonce = stats_hash64(c->nonce + 1);
	for (size_t i = 0; rc == 0 && i < r->nprobes; i++)
		if (counts(c, &r->probes[i]) && r->probes[i].state == CAPACITY_OWN &&
		    r->probes[i].offset_bytes < bad)
			rc = rewrite_probe(c, &r->probes[i]);
	if (rc == 0 && !r->alias_period_bytes)
		rc = add_fresh_positions(c, good_end);
	if (rc == 0 && c->flush_bytes)
		rc = flush_area(c, c->flush_start, c->flush_start + c->flush_bytes);
	for (size_t i = 0; rc == 0 && i < r->nprobes; i++)
		if (r->probes[i].rechecked)
			rc = reread_probe(c, &r->probes[i]);
	/* only new blocks lost: the card keeps writes where it kept them
	 * before (else it stopped keeping writes, r->stopped_keeping) */
	for (size_t i = 0; i < r->nprobes; i++) {
		const struct capacity_probe *pr = &r->probes[i];

		if (pr->rechecked && pr->state != CAPACITY_OWN)
			lost[pr->fresh]++;
	}
	r->fresh_lost = lost[1] > 0 && lost[0] == 0;
	return rc;
}

/* Whether the verdict's read-backs defeat the cache asked for (capped at
 * a quarter of the device: a larger cache is not credible): the deep
 * flush once it ran, or the round's. */
static bool cache_defeated(const struct ctx *c)
{
	const struct capacity_result *r = c->r;
	uint64_t flushed = r->deep_flush_bytes ? r->deep_flush_bytes : c->flush_bytes;

	return flushed > 0 && flushed >= c->p->deep_bytes;
}

int capacity_run(struct fp_dev *d, const struct capacity_opts *o,
		 const struct capacity_plan *p, struct capacity_result *r)
{
	struct ctx c = { .d = d, .o = o, .p = p, .r = r, .top = p->device_bytes,
			 .nonce = o->nonce, .flush_start = p->flush_start_bytes,
			 .flush_bytes = p->flush_bytes };
	uint64_t io0 = fp_dev_io_count(d), ns0 = fp_dev_io_ns(d);
	uint64_t w0 = fp_dev_bytes_written(d);
	int rc;

	memset(r, 0, sizeof(*r));
	r->reported_bytes = p->device_bytes;
	r->flush_bytes = p->flush_bytes;
	if (fp_dev_size_bytes(d) != p->device_bytes)
		return -EINVAL;
	c.blk = fp_dev_alloc_buf((size_t)p->block_bytes);
	c.expect = fp_dev_alloc_buf((size_t)p->block_bytes);
	c.chunk = fp_dev_alloc_buf(CAPACITY_CHUNK_BYTES);
	rc = c.blk && c.expect && c.chunk ? 0 : -ENOMEM;
	if (rc == 0)
		rc = run_passes(&c);
	if (rc == 0)
		rc = recheck_good(&c);
	r->cache_defeated = cache_defeated(&c);
	if (rc == 0 || rc == -EAGAIN)
		conclude(&c, rc == 0);
	if (rc == -EAGAIN)
		rc = 0;
	r->bytes_written = fp_dev_bytes_written(d) - w0;
	r->io_count = fp_dev_io_count(d) - io0;
	r->elapsed_ns = fp_dev_io_ns(d) - ns0;
	free(c.blk);
	free(c.expect);
	free(c.chunk);
	return rc;
}

const char *capacity_verdict_name(enum capacity_verdict v)
{
	switch (v) {
	case CAPACITY_GENUINE:
		return "genuine";
	case CAPACITY_WRAPAROUND:
		return "wraparound";
	case CAPACITY_LIMBO:
		return "limbo";
	case CAPACITY_DAMAGED:
		return "damaged";
	default:
		return "undetermined";
	}
}

bool capacity_is_bad(enum capacity_verdict v)
{
	return v == CAPACITY_WRAPAROUND || v == CAPACITY_LIMBO || v == CAPACITY_DAMAGED;
}

void capacity_refused_restore(struct capacity_result *r, uint64_t at)
{
	r->verdict = CAPACITY_DAMAGED;
	r->confidence = 0.95;
	r->stopped_keeping = true;
	r->real_bytes = 0;
	r->first_bad_known = true;
	r->first_bad_bytes = at;
	snprintf(r->note, sizeof(r->note), "the card did not take its own data back "
		 "at byte %llu when the test's writes were undone, where the test had "
		 "found it sound: it has turned read-only or is failing",
		 (unsigned long long)at);
}
