/* capacity.h - is the card's capacity real?  A fake-capacity check.
 *
 * Counterfeit cards report more space than their flash holds: writes past
 * the real end either wrap around onto the start (the controller ignores
 * the high address bits) or land in limbo (acknowledged and lost).  This
 * analyzer writes a few self-describing test blocks over the whole
 * reported capacity, defeats the card's write cache, reads them back and
 * searches the last good position, so the number of blocks grows with
 * log(capacity).  See capacity.c for the method.
 *
 * The test writes (in the planned positions and the cache-flush area
 * only); the caller backs those up (session_protect() with sparse=true
 * over the plan's area) and restores them.  It never prints or exits.
 *
 * Use: capacity_opts_default(), capacity_plan() (pure: the positions and
 * areas to be written, to announce and protect), then capacity_run().
 */
#ifndef FLASHPROBE_CAPACITY_H
#define FLASHPROBE_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct fp_dev;

#define CAPACITY_DEFAULT_CACHE_BYTES (1024u * 1024u * 1024u)	/* --cache-size */
#define CAPACITY_MAX_CACHE_BYTES (1024u * 1024u * 1024u)
#define CAPACITY_ROUND_FLUSH_BYTES (32u * 1024u * 1024u)	/* before each round's read-back */
#define CAPACITY_GRID_BYTES (1024u * 1024u)	/* resolution of real_bytes */
#define CAPACITY_BLOCK_BYTES 4096u		/* test block (or one sector) */
#define CAPACITY_ROUND_PROBES 16u		/* new positions per search round */
#define CAPACITY_STRATA 16u			/* random positions in round 0 */
#define CAPACITY_COMB_MAX 512u		/* round 0 comb (plan_comb()) */
#define CAPACITY_ODD_MAX_CANDIDATES 4096u	/* divisors written when measuring
						 * an odd wrap period */
#define CAPACITY_MAX_FIXED 584u		/* round 0 positions */
#define CAPACITY_MAX_PROBES 800u

struct capacity_opts {
	uint64_t cache_bytes;		/* the largest write cache to defeat
					 * (0: no cache defeat, less certain) */
	uint64_t nonce;			/* per-run random number in every block
					 * and the random positions; default
					 * from the clock */
	fp_progress_fn progress;	/* rounds (total: an upper bound) */
	void *progress_arg;
};

/* What will be written, computed before anything is.  Positions are
 * block offsets; search positions are chosen while the test runs, all at
 * multiples of grid_bytes minus one block (the last block of each 1 MiB)
 * or at the device end. */
struct capacity_plan {
	uint64_t device_bytes;
	uint64_t block_bytes;		/* one test block */
	uint64_t grid_bytes;		/* search resolution */
	uint64_t start_bytes;		/* write area [start, end): the whole
					 * device, written sparsely */
	uint64_t end_bytes;
	uint64_t flush_start_bytes;	/* a round's cache flush: the top of the
					 * deep area (skips test blocks) */
	uint64_t flush_bytes;		/* 0: disabled */
	uint64_t deep_start_bytes;	/* the deep flush: deep_bytes below the
					 * round flush (at most a quarter of the
					 * device), then the round flush */
	uint64_t deep_bytes;		/* == flush_bytes: no deep check */
	bool comb_covers;		/* the comb's positions lie less than the
					 * deep flush apart (plan_comb()) */
	uint64_t fixed[CAPACITY_MAX_FIXED];	/* round 0, in writing order:
						 * offset 0, powers of two from
						 * the top down, random positions,
						 * the last block */
	size_t nfixed;
	size_t npow2;			/* fixed[1..npow2] are the powers of two */
	unsigned max_rounds;
	unsigned max_probes;
	uint64_t max_bytes;		/* upper bound of bytes written, flushes
					 * included */
	/* On a fake the writes wrap onto blocks the plan never aimed at,
	 * anywhere on the card: the journal must then tell a swapped card
	 * from blocks these writes changed (journal_writes_may_alias). */
	bool writes_may_alias;
};

enum capacity_verdict {
	CAPACITY_UNDETERMINED,
	CAPACITY_GENUINE,		/* every probed position holds its own data */
	CAPACITY_WRAPAROUND,		/* positions past the real end alias lower ones */
	CAPACITY_LIMBO,			/* writes past the real end are lost */
	CAPACITY_DAMAGED,		/* I/O errors or lost writes inside,
					 * blocks stored with bit errors, or
					 * no data kept from offset 0 on */
};

/* What a read of a test position returned. */
enum capacity_state {
	CAPACITY_UNREAD,
	CAPACITY_OWN,			/* this run's block for this offset */
	CAPACITY_FOREIGN,		/* this run's block of another offset */
	CAPACITY_LOST,			/* anything else: the write did not stick */
	CAPACITY_IOERR,			/* the write or the read failed (EIO) */
};

struct capacity_probe {
	uint64_t offset_bytes;
	enum capacity_state state;	/* at the last read-back */
	enum capacity_state first;	/* at the first read-back */
	uint64_t claimed_bytes;		/* FOREIGN: the offset the block names */
	bool claimed_filler;		/* ... and the block is cache-flush filler */
	bool ignored;			/* explained by the wrap aliasing */
	bool garbled;			/* LOST, but read back as its own block
					 * with a few bits wrong: the write
					 * reached flash that stores badly
					 * (worn), it was not dropped */
	bool rechecked;			/* written again by recheck_good() */
	bool fresh;			/* ... or written there first */
	unsigned round;
};

struct capacity_result {
	enum capacity_verdict verdict;
	uint64_t reported_bytes;
	uint64_t real_bytes;		/* verified from offset 0: never more than
					 * is there, at most grid_bytes less */
	uint64_t alias_period_bytes;	/* wraparound, else 0 */
	bool first_bad_known;
	uint64_t first_bad_bytes;	/* where the loss starts: real_bytes (the
					 * bad block lies less than a grid step
					 * above), or the wrap period */
	double confidence;		/* [0, 1]; 0 when undetermined */
	bool cache_defeated;		/* the verdict's read-backs followed a
					 * flush of the cache size asked for */
	bool cache_hid_loss;		/* the deep flush showed lost writes a
					 * cache had served: the test ran again
					 * with deep flushes */
	bool stopped_keeping;		/* a position that had kept its block
					 * lost it when written again: the card
					 * stopped keeping writes (worn out) */
	uint64_t deep_flush_bytes;	/* the deep check's flush, or 0 */
	unsigned deep_flushes;		/* the deep check's and the second pass's */
	bool aliasing_seen;		/* some read returned another offset's block */
	uint64_t flush_bytes;		/* per round flush of the first pass */
	unsigned flushes;		/* round flushes of the first pass */
	unsigned rounds;
	uint64_t blocks_tested;		/* test blocks written */
	uint64_t blocks_rechecked;	/* good ones written again (recheck) */
	uint64_t blocks_fresh;		/* new ones written with them, in the
					 * gaps of the verified part */
	bool fresh_lost;		/* one of those lost its block: the card
					 * keeps only what it wrote first */
	uint64_t bytes_written;		/* by this run, flushes included */
	uint64_t io_count;
	uint64_t elapsed_ns;		/* device time */
	struct capacity_probe probes[CAPACITY_MAX_PROBES];
	size_t nprobes;
	char note[240];			/* why undetermined, or a limit, or "" */
};

void capacity_opts_default(struct capacity_opts *o);

/* The plan for a device of device_bytes with sector_bytes sectors.
 * Pure.  0, or -EINVAL (no sectors, a device smaller than two grid
 * steps, a cache size over CAPACITY_MAX_CACHE_BYTES). */
int capacity_plan(uint64_t device_bytes, uint32_t sector_bytes,
		  const struct capacity_opts *o, struct capacity_plan *p);

/* Run the plan on d (d's size and sector size must be the plan's).
 * Returns 0 whatever the verdict (I/O errors at test positions are
 * evidence), -ENOMEM, or a negative errno that stops the test (-EINTR,
 * -EPERM outside the write area, ...); r then holds what was done. */
int capacity_run(struct fp_dev *d, const struct capacity_opts *o,
		 const struct capacity_plan *p, struct capacity_result *r);

/* "genuine", "wraparound", "limbo", "damaged", "undetermined". */
const char *capacity_verdict_name(enum capacity_verdict v);

/* True for wraparound, limbo and damaged: results of other write tests
 * on the card would not be trustworthy. */
bool capacity_is_bad(enum capacity_verdict v);

/* The restore after the test could not put the card's own data back at
 * byte at, where the test had found it sound: the card has stopped
 * keeping writes since (turned read-only, or failing).  r becomes that
 * verdict: damaged, nothing verified, the note naming the byte. */
void capacity_refused_restore(struct capacity_result *r, uint64_t at);

#endif
