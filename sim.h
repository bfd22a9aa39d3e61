/* sim.h - the simulated card: a flash-translation-layer timing model.
 *
 * A simulated card stores data (sparse: untouched and uniformly filled
 * 4 KiB blocks cost no memory) and charges every request a cost in
 * nanoseconds on a virtual clock, following ../shared/docs/flash-model.md:
 *
 *   reads  (section 3): per-request base + per-page transfer + a penalty for
 *          every internal boundary crossed (raw page, effective page, sub-AU
 *          mapping step, erase block), optional cheap reads of erased AUs;
 *   writes (section 4): an LRU pool of open AUs with write pointers, linear
 *          and random-capable AUs, garbage collection (copy + erase) when an
 *          AU is closed or rewritten out of order, and a FAT area at the
 *          start managed per page;
 *   noise: multiplicative jitter, rare stalls, and per-location noise that
 *          is a fixed function of the offset (repeating cannot remove it).
 *
 * The same seed gives the same timings.  Nothing sleeps.
 */
#ifndef FLASHPROBE_SIM_H
#define FLASHPROBE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fp_dev;

#define SIM_NAME_MAX 32
#define SIM_MAX_RANGES 4		/* ranges per key (eio=, lost=...) per card */
#define SIM_MAX_CACHE_BYTES (1024u * 1024u * 1024u)

/* What a counterfeit card does with the space past its real flash. */
enum sim_fake {
	SIM_FAKE_NONE,		/* genuine: every reported byte is real */
	SIM_FAKE_WRAP,		/* the controller ignores the address bits
				 * above the flash: offset X reads and writes
				 * X mod period (positions of [real, period)
				 * lose their writes) */
	SIM_FAKE_LIMBO,		/* writes past real are acknowledged and
				 * lost; reads there return zeros */
	SIM_FAKE_ALLOC,		/* each erase block gets a unit of the real
				 * flash on its first write, wherever it is,
				 * until there is none left; later writes to
				 * the others are lost, and they read zeros */
};

/* A byte range [start, start + bytes). */
struct sim_range {
	uint64_t start_bytes;
	uint64_t bytes;
};

struct sim_ranges {
	unsigned n;
	struct sim_range r[SIM_MAX_RANGES];
};

/* A card: its true geometry, its costs and its noise.  All sizes in bytes,
 * all times in nanoseconds, all percentages 0..100 (of the request's cost).
 * A zero size disables that level. */
struct sim_profile {
	char name[SIM_NAME_MAX];
	const char *description;

	/* capacity */
	uint64_t size_bytes;
	uint32_t sector_bytes;		/* logical sector, 512 or 4096 */

	/* truth: what the analyzers should find.  Read-side levels nest:
	 * raw_page | page | subau | erase, each nonzero level strictly smaller
	 * than the next nonzero one; a boundary is charged only at its
	 * highest level.
	 *
	 * Convention: page_bytes is what the align analyzer must report as
	 * the page: the smallest boundary level whose crossing cost is clear
	 * (page_cross_ns well above the noise).  raw_page_bytes is a smaller
	 * level whose cost is noise-level (raw_cross_ns <= 1% of
	 * read_base_ns): real but not something an analyzer must find.  A
	 * multi-plane group above a clear page (the flashbench README card:
	 * 53 us at 8 KiB, 160 us at 16 KiB) is expressed as page = 8 KiB,
	 * subau = 16 KiB.  page_bytes = 0: no page level is observable (no
	 * page crossing cost); writes and transfers then use a 16 KiB unit
	 * (or raw_page_bytes, or the largest power of two dividing erase
	 * below 16 KiB).  When ambiguous is set the read-side truth is
	 * "undetermined"; erase_bytes and the open-AU counts still drive the
	 * write model. */
	uint64_t page_bytes;		/* effective page: program unit (0 = not observable) */
	uint64_t raw_page_bytes;	/* noise-level level below the page (0 = none) */
	uint64_t subau_bytes;		/* intermediate read step: plane group or mapping step (0 = none) */
	uint64_t erase_bytes;		/* erase block: the read-timing step and the write unit */
	unsigned open_au_linear;	/* AUs kept open for in-order writes */
	unsigned open_au_random;	/* of those, how many may be written out of order */
	uint64_t fat_start_bytes;	/* FAT area start (multiple of erase_bytes) */
	uint64_t fat_bytes;		/* FAT area size (0 = none) */
	bool ambiguous;			/* built so "undetermined" is the honest answer */

	/* read costs */
	uint64_t read_base_ns;		/* per request */
	uint64_t read_page_ns;		/* per page (program unit) transferred, pro rata, rounded down */
	uint64_t raw_cross_ns;		/* crossing a raw-page boundary inside a group */
	uint64_t page_cross_ns;		/* crossing an effective-page boundary */
	uint64_t subau_cross_ns;	/* crossing a sub-AU step */
	uint64_t au_cross_ns;		/* crossing an erase-block boundary */
	bool erased_reads_fast;		/* never-written AUs read without array access */
	bool fresh;			/* start erased (default: every AU written once) */

	/* write costs */
	uint64_t write_base_ns;		/* per request */
	uint64_t write_page_ns;		/* per page programmed (partial page = full) */
	uint64_t gc_page_ns;		/* per valid page copied when closing an AU */
	uint64_t erase_ns;		/* per block erase */
	uint64_t random_write_ns;	/* extra per out-of-order write in a random-mode AU */
	bool restart_random;		/* a write to the start of an open AU
					 * written whole is out of order like
					 * any other (random mode when the
					 * quota allows), as a literal reading
					 * of flash-model.md rule 3 has it;
					 * default: the full cycle closes for
					 * an erase and restarts linear */
	bool page_wp;			/* the write pointer moves in whole
					 * pages: a write into a page already
					 * programmed in this cycle (4 KiB
					 * after 4 KiB inside a 16 KiB page)
					 * is out of order, as a literal
					 * reading of rules 1 and 3 has it;
					 * default: bytes */
	uint64_t fat_random_ns;		/* extra per out-of-order write in the FAT area */
	unsigned fat_page_pct;		/* FAT-area page program cost, % of write_page_ns */

	/* noise */
	unsigned jitter_pct;		/* +-uniform multiplicative jitter per request */
	unsigned stall_ppm;		/* requests per million that stall */
	uint64_t stall_ns;		/* extra time of a stall */
	unsigned location_pct;		/* +-per-location noise, fixed per 4 KiB block */
	uint64_t seed;

	/* simulated media errors: I/O touching [bad_start, bad_start+bad_bytes)
	 * fails with EIO (bad_bytes 0 = none) */
	uint64_t bad_start_bytes;
	uint64_t bad_bytes;
	struct sim_ranges eio;		/* more ranges failing with EIO */
	struct sim_ranges lost;		/* ranges that drop writes silently
					 * (reads return the old data) */

	/* a worn-out card (all off when zero or empty) */
	struct sim_ranges eio_write;	/* writes fail with EIO, reads work
					 * (program failures of worn blocks) */
	struct sim_ranges corrupt;	/* writes are acknowledged but stored
					 * with one bit flipped per 512-byte
					 * sector (reads return neither the
					 * old nor the new data) */
	struct sim_ranges slow;		/* reads touching them cost
					 * read_retry_ns more (read retries,
					 * ECC correction) */
	uint64_t read_retry_ns;
	uint64_t ro_after_bytes;	/* once this many bytes were written
					 * the card turns read-only: the write
					 * that would pass it and every later
					 * one fail with EROFS (0 = never) */
	bool ro_silent;			/* ... or are acknowledged and dropped
					 * (reads return the old data): a worn
					 * card whose controller hides it */
	uint64_t wear_ns;		/* extra time per write for each MiB
					 * written since the card was opened
					 * (write latency grows over the run) */
	unsigned write_stall_ppm;	/* writes per million that stall */
	uint64_t write_stall_ns;	/* extra time of such a stall (garbage
					 * collection of a worn card) */

	/* a timing write buffer in front of the flash of a genuine card (SLC
	 * cache, DRAM, a log): writes cost wbuf_write_ns per 4 KiB while it
	 * holds less than wbuf_bytes not yet written to the flash; a write
	 * that does not fit costs what the flash charges (pro rata for the
	 * part that does not fit).  The flash behind sees every write in
	 * order at once (its open-AU state is not delayed) and works off the
	 * buffered writes in the time the host spends reading or writing
	 * into the buffer.  Timing only: data is stored as without it. */
	uint64_t wbuf_bytes;		/* 0 = no buffer */
	uint64_t wbuf_write_ns;		/* per 4 KiB absorbed */
	/* wbuf_back: a full buffer stays write-back (an SLC cache that
	 * ignores flushes, bench/indepcard noflush=1): a write that does not
	 * fit waits until the oldest buffered writes reached the flash
	 * (whatever they cost) and it fits, then joins the buffer; the host's
	 * time then shows the cost of earlier writes, not of its own. */
	bool wbuf_back;

	/* counterfeit capacity: the truth `flashprobe capacity` must find */
	enum sim_fake fake;
	uint64_t real_bytes;		/* flash behind the reported size (fake) */
	uint64_t period_bytes;		/* wrap: alias period, a power of two
					 * >= real_bytes (0 = the smallest) */
	uint64_t cache_bytes;		/* write cache (4 KiB blocks, FIFO,
					 * behind the wrap folding): reads of
					 * the last cache_bytes written come
					 * from it, not from the flash
					 * (0 = none) */
	bool cache_direct;		/* f3probe's model instead: the cache
					 * takes only writes the flash drops
					 * (past the real flash), slot = logical
					 * 4 KiB block mod slots */
	bool cache_strict;		/* direct: a read past the real flash
					 * sees its slot only when the slot
					 * holds that block (else the slot's
					 * block, whichever it is) */
	bool cache_logical;		/* the FIFO cache in front of the wrap
					 * folding: keyed by the address asked
					 * for, so aliases have entries apart */
	bool map_on_write;		/* wrap: an FTL that maps an address on
					 * its first write, not an address
					 * decoder: a 4 KiB block at or past
					 * the period reads zeros until it is
					 * written (writes still land on the
					 * flash it aliases) */
};

/* The built-in profiles, terminated by an entry with an empty name. */
extern const struct sim_profile sim_profiles[];

/* Find a built-in profile by name; NULL if unknown. */
const struct sim_profile *sim_profile_find(const char *name);

/* Parse "NAME" or "NAME,key=value,..." (the part after "sim:", see
 * devspec_sim_body()) into *p: start from the named built-in profile, then
 * apply overrides in order (a repeated key wins last).  Keys:
 *   sizes (units_parse_size syntax): size, sector, page, raw_page, subau,
 *     erase, fat_start, fat, bad_start, bad;
 *   counts: open_linear, open_random, fat_page_pct, jitter, stall_ppm,
 *     location, seed;
 *   times (nanoseconds, or a decimal with ns/us/ms/s suffix, e.g. 117us,
 *     2.5ms): read_base, read_page, raw_cross, page_cross, subau_cross,
 *     au_cross, write_base, write_page, gc_page, erase_time, random_write,
 *     fat_random, stall;
 *   booleans (1/0, yes/no, true/false, on/off): erased_fast, fresh,
 *     restart_random, page_wp,
 *     cache_direct, cache_strict, map_on_write, cache_logical;
 *   capacity: fake=none|wrap|limbo|alloc, real=SIZE (the flash behind a fake),
 *     period=SIZE (wrap), cache=SIZE (write cache serving recent writes),
 *     cache_direct and cache_strict (booleans: f3probe's direct-mapped
 *     cache of the writes past the real flash, strict or not),
 *     map_on_write (boolean, wrap: addresses past the period read zeros
 *     until written), cache_logical (boolean: the cache in front of the
 *     wrap folding);
 *   ranges START+LEN (sizes, repeatable, up to SIM_MAX_RANGES each):
 *     eio=START+LEN (I/O there fails with EIO), lost=START+LEN (writes
 *     there are dropped silently);
 *   wear: eio_write=START+LEN (writes there fail with EIO, reads work),
 *     corrupt=START+LEN (writes there are stored with flipped bits),
 *     slow=START+LEN (reads there cost read_retry=TIME more; slow needs
 *     read_retry), ro_after=SIZE (read-only, EROFS, once SIZE bytes were
 *     written; ro_silent=1: such writes are dropped silently instead),
 *     wear=TIME (extra per write per MiB written so far),
 *     write_stall_ppm=N and write_stall=TIME (stalls of writes only);
 *   write buffer (timing only): wbuf=SIZE (bytes absorbed before writes
 *     run at the flash's cost, 0 = none), wbuf_write=TIME (cost per 4 KiB
 *     absorbed); the buffer drains at the flash's cost while the host
 *     reads or writes into it; wbuf_back=1: a full buffer stays
 *     write-back (a write waits for older ones to drain, then joins it).
 * Returns 0, or -EINVAL with a one-line reason in err (unknown profile,
 * unknown key, missing or bad value, inconsistent geometry); *p is only
 * written on success. */
int sim_profile_parse(const char *spec, struct sim_profile *p, char *err,
		      size_t errlen);

/* Check a profile for consistency (sizes nest, erase block divides the
 * device, open_au_random <= open_au_linear, ...).  0 or -EINVAL + reason. */
int sim_profile_validate(const struct sim_profile *p, char *err, size_t errlen);

/* Create a simulated card; the profile is copied.  0 or negative errno. */
int sim_open(const struct sim_profile *p, struct fp_dev **out);

/* Fill the whole card (a fake card: its real flash) with pseudo-random
 * data (seeded) without charging time, as if it had been used; also marks
 * every AU written and closed.
 * For data-preservation tests.  0, -ENOMEM, or -EINVAL when d is not a
 * simulated card. */
int sim_fill_random(struct fp_dev *d, uint64_t seed);

/* The alias period of a fake=wrap profile (its period, or the smallest
 * power of two holding its real flash). */
uint64_t sim_wrap_period(const struct sim_profile *p);

/* The capacity truth of p in words for list-sims, e.g. "genuine",
 * "wrap 8GiB/8GiB" (real/period), "limbo 8GiB +cache 16MiB". */
const char *sim_capacity_truth(const struct sim_profile *p, char *buf,
			       size_t len);

/* The profile a simulated device was created from, NULL for other devices. */
const struct sim_profile *sim_profile_of(const struct fp_dev *d);

/* Heap bytes a simulated card holds (stored data blocks, block tables and
 * translation-layer state); 0 for other devices.  Lets tests and users
 * check that large uniform writes stay cheap. */
uint64_t sim_mem_bytes(const struct fp_dev *d);

#endif
