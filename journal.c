/* journal.c - back up the test area before a --write test touches it.
 *
 * Protocol (the order is what makes it crash-safe):
 *   1. create the journal (O_EXCL, then flock for the whole session),
 *      write the header, fsync file and directory; for a non-default
 *      path, leave a pointer file at the default path so later runs find
 *      it;
 *   2. copy every range about to be written into data records, append a
 *      commit record, fsync, then write the next commit slot of the
 *      header (counts, end, the hull of the write area, a fingerprint of
 *      the device outside it) and fsync again: only now may the device
 *      be written;
 *   3. after the test, replay the records (journal_replay.c), read each
 *      range back and compare it, then delete the journal and the
 *      pointer.
 * A crash in 1 or 2 leaves the device untouched for every record after
 * the last slot; a crash in or after the test leaves a journal whose slot
 * proves what it must hold, so a cut or damaged one is refused instead of
 * replayed partly.  Memory stays at one 1 MiB buffer whatever the size of
 * the backup.
 *
 * The backup itself is I/O the measurement must not see: the intended use
 * is journal_backup_area() over the test's planned area before the test;
 * a write outside it is still backed up first, with the time it took
 * subtracted from the decorator's clock.
 *
 * The card is checked against blocks read at the first backup before and
 * after every backup and every JOURNAL_RECHECK_BYTES of writes: a card
 * swapped in the same reader mid-test stops the test there, and its
 * blocks never enter the journal of the first card.
 */
#define _XOPEN_SOURCE 700	/* realpath(): POSIX 2008 + XSI */
#define _DEFAULT_SOURCE		/* flock() */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "dev.h"
#include "devspec.h"
#include "durable.h"
#include "errmsg.h"
#include "journal.h"
#include "util.h"
#include "journal_format.h"
#include "safety.h"
#include "units.h"

/* While a test rewrites blocks saved already (no backups, so no checks
 * before them), the card is checked again after this many bytes. */
#define JOURNAL_RECHECK_BYTES (64ULL << 20)
/* Blocks the swap check samples, spread over the card: dense enough that
 * several lie outside any test's area and away from what it saved. */
#define JOURNAL_SENTINELS 64

struct jr_span {
	uint64_t start, end;
};

/* Byte ranges, sorted and merged. */
struct jr_spanset {
	struct jr_span *v;
	size_t n, cap;
};

/* The decorator's state. */
struct journal {
	struct fp_dev *inner;
	struct fp_dev *outer;		/* the decorator itself: its write area */
	int fd;				/* journal file, locked; -1 once closed */
	char *path;
	struct jr_pointer pointer;	/* at pointer_path, when there is one */
	char pointer_path[JR_LINK_MAX];
	void *buf;			/* one record of data */
	uint64_t seq;			/* next record number */
	uint64_t ndata, data_bytes;	/* data records written */
	struct jr_slot slot;		/* the last commit, as on disk */
	bool fingerprinted;		/* slot.fp taken (maybe 0 blocks) */
	struct jr_spanset saved;	/* committed: may be written */
	struct jr_spanset pending;	/* in records not committed yet */
	uint64_t hidden_ns;		/* backup time taken off the clock */
	bool dirty;			/* the device has been written */
	bool torn;			/* an append failed since the commit */
	bool finished;
	bool card_changed;		/* card_swapped() said so: no more writes */
	bool writes_alias;		/* journal_writes_may_alias() */
	struct {			/* while they may: what they wrote */
		uint64_t *v;		/* open addressing, 0 = empty */
		size_t cap, n;
	} written;
	uint64_t unchecked_bytes;	/* written since the card was checked */
	/* blocks spread over the card, read at the first backup: a swapped
	 * card is one on which they read differently (card_swapped) */
	struct jr_fingerprint sentinel[JOURNAL_SENTINELS];
	bool sentinel_blank[JOURNAL_SENTINELS];	/* one repeated byte */
	unsigned nsentinels;
	char last_err[256];
	bool card_read_failed;		/* last_err is a read of the card that
					 * failed (cleared with each other error) */
};

/* ---- default location ---- */

/* The default place journals go to without FLASHPROBE_STATE_DIR, and
 * pointer files with it; creates the state directory. */
static const char *default_dir(void)
{
	const char *dirs[2];
	size_t n = jr_default_dirs(dirs);
	struct stat st;

	if (n == 1)
		return dirs[0];
	if (mkdir(dirs[0], 0700) == 0 || errno == EEXIST)
		if (stat(dirs[0], &st) == 0 && S_ISDIR(st.st_mode) &&
		    access(dirs[0], W_OK | X_OK) == 0)
			return dirs[0];
	return dirs[1];
}

/* The directory journals go to. */
static const char *state_dir(void)
{
	const char *env = getenv(JOURNAL_STATE_ENV);

	return env != NULL && env[0] != '\0' ? env : default_dir();
}

/* The length of dir without its trailing slashes ("/" gives 0). */
static size_t without_trailing_slashes(const char *dir)
{
	size_t n = strlen(dir);

	while (n > 0 && dir[n - 1] == '/')
		n--;
	return n;
}

/* The journal of device named in dir. */
static int path_in(const char *dir, const char *device, char *buf, size_t len,
		   char *err, size_t errlen)
{
	char name[NAME_MAX + 1];
	int rc;

	if (device == NULL || buf == NULL)
		return -EINVAL;
	rc = jr_default_name(device, name, sizeof(name));
	if (rc < 0) {
		fp_errf(err, errlen, "cannot open '%s': %s", device, strerror(-rc));
		return rc;
	}
	/* "/x/" names /x too: one slash between them */
	if ((size_t)snprintf(buf, len, "%.*s/%s", (int)without_trailing_slashes(dir), dir,
			     name) >= len) {
		fp_errf(err, errlen, "journal path for '%s' is too long", device);
		return -ENAMETOOLONG;
	}
	return 0;
}

int journal_default_path(const char *device, char *buf, size_t len,
			 char *err, size_t errlen)
{
	return path_in(state_dir(), device, buf, len, err, errlen);
}

/* ---- where the journal may live ---- */

/* A journal that a power loss empties protects nothing: after the crash
 * it is gone and the device keeps the test's data. */
static int check_durable(const char *journal_path, const char *dir, char *err,
			 size_t errlen)
{
	char where[512];
	int rc = durable_in_memory("/sys", "/proc/self/mountinfo", dir, where, sizeof(where));

	if (rc == 0)
		return 0;
	if (rc == 1)
		fp_errf(err, errlen, "journal '%s' would be in memory (%s), which a "
		    "power loss empties; put it on a disk with --journal or %s",
		    journal_path, where, JOURNAL_STATE_ENV);
	else
		fp_errf(err, errlen, "journal '%s' would be on %s; put it on a disk "
		    "with --journal or %s", journal_path, where, JOURNAL_STATE_ENV);
	return -EINVAL;
}

static bool has_control_char(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

int journal_check_location(const char *journal_path, const char *device,
			   char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct stat dirst, devst;
	int rc;

	if (journal_path == NULL || device == NULL || journal_path[0] == '\0') {
		fp_errf(err, errlen, "the journal path is empty");
		return -EINVAL;
	}
	if (strlen(journal_path) >= PATH_MAX) {
		fp_errf(err, errlen, "the journal path is longer than %d bytes",
		    PATH_MAX - 1);
		return -ENAMETOOLONG;
	}
	if (has_control_char(journal_path)) {
		fp_errf(err, errlen, "the journal path holds a control character "
		    "(a newline?); the pointer file that finds the journal keeps "
		    "one path per line: choose another");
		return -EINVAL;
	}
	if (devspec_is_sim(device))
		return 0;	/* its data lives only as long as the process */
	rc = safety_check_output("--journal", journal_path, device, err, errlen);
	if (rc < 0)
		return rc;
	util_dir_of(journal_path, dir, sizeof(dir));
	if (stat(dir, &dirst) != 0 || stat(device, &devst) != 0) {
		rc = -errno;
		fp_errf(err, errlen, "cannot use journal '%s': %s", journal_path,
		    strerror(-rc));
		return rc;
	}
	return check_durable(journal_path, dir, err, errlen);
}

/* ---- writing the journal ---- */

static const struct fp_dev_ops journal_ops;

static struct journal *journal_of(const struct fp_dev *d)
{
	return fp_dev_priv_if(d, &journal_ops);
}

static int append(struct journal *j, const struct jr_record *r,
		  const void *data)
{
	unsigned char b[JR_REC_BYTES];
	int rc;

	jr_record_encode(r, b);
	rc = util_write_full(j->fd, b, sizeof(b));
	if (rc == 0 && r->type == JR_REC_DATA)
		rc = util_write_full(j->fd, data, (size_t)r->length);
	if (rc < 0)
		j->torn = true;
	else
		j->seq++;
	return rc;
}

static int spans_reserve(struct jr_spanset *set, size_t more)
{
	size_t cap = set->cap ? set->cap : 16;
	struct jr_span *v;

	while (cap < set->n + more)
		cap *= 2;
	if (cap == set->cap)
		return 0;
	v = realloc(set->v, cap * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	set->v = v;
	set->cap = cap;
	return 0;
}

/* Add [start, end), merging with every span it touches.  Needs room for
 * one more span (spans_reserve). */
static void spans_add(struct jr_spanset *set, uint64_t start, uint64_t end)
{
	size_t i = 0, k;

	while (i < set->n && set->v[i].end < start)
		i++;
	k = i;
	while (k < set->n && set->v[k].start <= end) {
		if (set->v[k].start < start)
			start = set->v[k].start;
		if (set->v[k].end > end)
			end = set->v[k].end;
		k++;
	}
	if (k == i)
		memmove(&set->v[i + 1], &set->v[i],
			(set->n - i) * sizeof(*set->v));
	else if (k > i + 1)
		memmove(&set->v[i + 1], &set->v[k],
			(set->n - k) * sizeof(*set->v));
	set->n = set->n + 1 - (k - i);
	set->v[i].start = start;
	set->v[i].end = end;
}

/* Move cur past every span of set that contains it. */
static bool spans_skip(const struct jr_spanset *set, uint64_t *cur)
{
	for (size_t i = 0; i < set->n; i++) {
		if (set->v[i].start <= *cur && *cur < set->v[i].end) {
			*cur = set->v[i].end;
			return true;
		}
	}
	return false;
}

static void spans_clip(const struct jr_spanset *set, uint64_t cur,
		       uint64_t *ge)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].start > cur && set->v[i].start < *ge)
			*ge = set->v[i].start;
}

/* The first range in [from, end) in no record yet, committed or not. */
static bool spans_gap(const struct journal *j, uint64_t from, uint64_t end,
		      uint64_t *gs, uint64_t *ge)
{
	uint64_t cur = from;

	while (spans_skip(&j->saved, &cur) || spans_skip(&j->pending, &cur))
		;
	if (cur >= end)
		return false;
	*gs = cur;
	*ge = end;
	spans_clip(&j->saved, cur, ge);
	spans_clip(&j->pending, cur, ge);
	return true;
}

/* A torn tail (disk full, I/O error) is cut back to the last commit so
 * the journal stays valid; the device was not written for any of it, and
 * its ranges count as unsaved again. */
static void cut_torn_tail(struct journal *j)
{
	if (!j->torn)
		return;
	if (ftruncate(j->fd, (off_t)j->slot.end) != 0 ||
	    lseek(j->fd, (off_t)j->slot.end, SEEK_SET) < 0 ||
	    fsync(j->fd) != 0)
		return;
	j->torn = false;
	j->seq = j->slot.records;
	j->ndata = j->slot.ndata;
	j->data_bytes = j->slot.data_bytes;
	j->pending.n = 0;
}

static void hull_add(struct jr_slot *s, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	if (s->area_lo == s->area_hi) {
		s->area_lo = lo;
		s->area_hi = hi;
		return;
	}
	s->area_lo = lo < s->area_lo ? lo : s->area_lo;
	s->area_hi = hi > s->area_hi ? hi : s->area_hi;
}

/* The next commit slot: what is in the log now, and every range the test
 * may write (the pending backups and the write area). */
static struct jr_slot next_slot(const struct journal *j, uint64_t end)
{
	struct jr_slot s = j->slot;
	uint64_t lo, hi;

	s.gen++;
	s.records = j->seq;
	s.ndata = j->ndata;
	s.data_bytes = j->data_bytes;
	s.end = end;
	for (size_t i = 0; i < j->pending.n; i++)
		hull_add(&s, j->pending.v[i].start, j->pending.v[i].end);
	if (j->outer != NULL && fp_dev_write_area(j->outer, &lo, &hi))
		hull_add(&s, lo, hi);
	return s;
}

static int write_slot(struct journal *j, const struct jr_slot *s)
{
	unsigned char b[JR_SLOT_BYTES];
	ssize_t w;

	jr_slot_encode(s, b);
	w = pwrite(j->fd, b, sizeof(b), JR_SLOT_OFFSET(s->gen));
	if (w != (ssize_t)sizeof(b))
		return w < 0 ? -errno : -EIO;
	if (fsync(j->fd) != 0)
		return -errno;
	return 0;
}

/* The pointer names the range a lost journal leaves unrestored: it must
 * cover the slot's hull before the device is written. */
static int update_pointer(struct journal *j)
{
	if (j->pointer_path[0] == '\0' ||
	    (j->pointer.area_lo == j->slot.area_lo &&
	     j->pointer.area_hi == j->slot.area_hi))
		return 0;
	j->pointer.area_lo = j->slot.area_lo;
	j->pointer.area_hi = j->slot.area_hi;
	return jr_pointer_write(j->pointer_path, &j->pointer);
}

/* Append a commit for every record so far, fsync, record it in the next
 * header slot and fsync again: from then on the pending ranges may be
 * written on the device. */
static int commit(struct journal *j)
{
	struct jr_record r = {
		.type = JR_REC_COMMIT, .seq = j->seq, .offset = j->ndata,
		.length = j->data_bytes,
	};
	struct jr_slot s;
	off_t end;
	int rc;

	/* Room first: once committed, merging must not fail, or a range
	 * would be saved twice, the second time with test data in it. */
	rc = spans_reserve(&j->saved, j->pending.n);
	if (rc == 0)
		rc = append(j, &r, NULL);
	if (rc == 0 && fsync(j->fd) != 0)
		rc = -errno;
	end = rc == 0 ? lseek(j->fd, 0, SEEK_CUR) : -1;
	if (rc == 0 && end < 0)
		rc = -errno;
	if (rc == 0) {
		s = next_slot(j, (uint64_t)end);
		rc = write_slot(j, &s);
	}
	if (rc < 0) {
		j->torn = true;
		return rc;
	}
	j->slot = s;
	for (size_t i = 0; i < j->pending.n; i++)
		spans_add(&j->saved, j->pending.v[i].start,
			  j->pending.v[i].end);
	j->pending.n = 0;
	rc = update_pointer(j);
	if (rc < 0) {
		j->card_read_failed = false;
		fp_errf(j->last_err, sizeof(j->last_err), "cannot update journal "
		    "pointer '%s': %s", j->pointer_path, strerror(-rc));
	}
	return rc;
}

/* Whether [off, off + len) touches [lo, hi). */
static bool overlaps(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
	return off < hi && lo < off + len;
}

/* A fingerprint or sentinel block: JR_FP_BLOCK_BYTES in whole sectors. */
static uint64_t sample_block_bytes(const struct journal *j)
{
	uint32_t sector = fp_dev_sector_bytes(j->inner);

	return (JR_FP_BLOCK_BYTES + sector - 1) / sector * sector;
}

/* Read the sample block at off and record its hash in *f; false when it
 * cannot be read (it is then left out). */
static bool sample_block(struct journal *j, uint64_t off, struct jr_fingerprint *f)
{
	uint64_t block = sample_block_bytes(j);

	if (fp_dev_read_timed(j->inner, j->buf, (size_t)block, off, NULL) != 0)
		return false;
	f->offset = off;
	f->hash = jr_fnv1a64(j->buf, (size_t)block);
	return true;
}

/* Whether the block sample_block() just read is one repeated byte: a
 * blank block, which another card (blank there too) reads alike, so
 * that it tells little about which card this is. */
static bool sampled_blank(const struct journal *j)
{
	return util_is_one_byte(j->buf, (size_t)sample_block_bytes(j));
}

static bool in_fingerprint(const struct journal *j, uint64_t off)
{
	for (uint32_t i = 0; i < j->slot.nfp; i++)
		if (j->slot.fp[i].offset == off)
			return true;
	return false;
}

/* One pass of fingerprint blocks: JR_FP_MAX places spread over the
 * device, shifted by frac sixteenths of their spacing, none touching
 * [lo, hi) or [alo, ahi), blank ones only when blank_too.  Blocks that
 * cannot be read are left out. */
static void fingerprint_pass(struct journal *j, unsigned frac, uint64_t lo,
			     uint64_t hi, uint64_t alo, uint64_t ahi,
			     bool blank_too)
{
	uint64_t size = fp_dev_size_bytes(j->inner);
	uint32_t sector = fp_dev_sector_bytes(j->inner);
	uint64_t block = sample_block_bytes(j);
	uint64_t step = size >= block ? (size - block) / (JR_FP_MAX - 1) : 0;

	for (unsigned i = 0; i < JR_FP_MAX && size >= block &&
			     j->slot.nfp < JR_FP_MAX; i++) {
		uint64_t off = step * i + step / 16 * frac;

		off -= off % sector;
		if (off + block > size || overlaps(off, block, lo, hi) ||
		    overlaps(off, block, alo, ahi) || in_fingerprint(j, off))
			continue;
		if (sample_block(j, off, &j->slot.fp[j->slot.nfp]) &&
		    (blank_too || !sampled_blank(j)))
			j->slot.nfp++;
	}
}

/* Passes in the order of their shifts: each halves the gaps left. */
static const unsigned fp_shifts[] = { 0, 8, 4, 12 };
#define FP_SHIFTS (sizeof(fp_shifts) / sizeof(fp_shifts[0]))

/* Sample blocks spread over the device so that a restore can tell
 * whether it is about to write onto the same card: outside what the
 * test may write ([lo, hi) and the write area) first.  When the area
 * covers most of the device (capacity, a small card), blocks inside it
 * that are not being written now fill up the fingerprint: the test saves
 * every block before writing it, so a restore compares only those it
 * never saved.  Blocks that hold data come first: a blank block reads
 * the same on another card blank there (a new card, the free space of
 * a file system), so a fingerprint of blank blocks alone would let a
 * restore write the journal onto that card; blank ones fill up what
 * the card has too little data for. */
static void take_fingerprint(struct journal *j, uint64_t lo, uint64_t hi)
{
	uint64_t alo = lo, ahi = hi;

	j->fingerprinted = true;
	if (j->outer == NULL || !fp_dev_write_area(j->outer, &alo, &ahi))
		alo = ahi = lo;
	for (int blank_too = 0; blank_too < 2; blank_too++) {
		for (size_t k = 0; k < FP_SHIFTS && j->slot.nfp < JR_FP_MAX; k++)
			fingerprint_pass(j, fp_shifts[k], lo, hi, alo, ahi, blank_too);
		for (size_t k = 0; k < FP_SHIFTS && j->slot.nfp < JR_FP_MAX / 2; k++)
			fingerprint_pass(j, fp_shifts[k], lo, hi, lo, lo, blank_too);
	}
}

/* The swap check's blocks, JOURNAL_SENTINELS of them evenly over the
 * card, read at the first backup (before anything is written).  Blocks
 * that cannot be read are left out.  Each starts on a multiple of its
 * size, as the written blocks remembered below do: a write that wraps
 * onto one on a fake covers it whole. */
static void take_sentinels(struct journal *j)
{
	uint64_t size = fp_dev_size_bytes(j->inner);
	uint64_t block = sample_block_bytes(j);
	uint64_t step = size >= block ? (size - block) / (JOURNAL_SENTINELS - 1) : 0;

	for (unsigned i = 0; i < JOURNAL_SENTINELS && size >= block; i++)
		if (sample_block(j, step * i - step * i % block,
				 &j->sentinel[j->nsentinels]))
			j->sentinel_blank[j->nsentinels++] = sampled_blank(j);
}

/* ---- what the test wrote, while its writes may alias ---- */

static void hide_time_since(struct journal *j, uint64_t t0);

#define WRITTEN_MAX ((size_t)1 << 21)	/* hashes: 16 MiB, 4 GiB of writes */

static size_t written_slot(const struct journal *j, uint64_t h)
{
	size_t i = (size_t)(h * 0x9e3779b97f4a7c15ull) & (j->written.cap - 1);

	while (j->written.v[i] != 0 && j->written.v[i] != h)
		i = (i + 1) & (j->written.cap - 1);
	return i;
}

static bool written_has(const struct journal *j, uint64_t h)
{
	h = h ? h : 1;	/* 0 marks an empty slot */
	return j->written.cap && j->written.v[written_slot(j, h)] == h;
}

/* Kept at most half full; past WRITTEN_MAX hashes the rest go unnoted
 * (a swap check then may stop a test on a fake: never a wrong restore). */
static void written_add(struct journal *j, uint64_t h)
{
	size_t slot;

	h = h ? h : 1;
	if (2 * (j->written.n + 1) > j->written.cap) {
		size_t cap = j->written.cap ? 2 * j->written.cap : 4096;
		uint64_t *old = j->written.v, *v;
		size_t oldcap = j->written.cap;

		if (cap > 2 * WRITTEN_MAX || (v = calloc(cap, sizeof(*v))) == NULL)
			return;
		j->written.v = v;
		j->written.cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i] != 0)
				j->written.v[written_slot(j, old[i])] = old[i];
		free(old);
	}
	slot = written_slot(j, h);
	if (j->written.v[slot] == 0) {
		j->written.v[slot] = h;
		j->written.n++;
	}
}

/* The whole sample-sized blocks of a write, but those of one repeated
 * byte, which a blank second card would read as well. */
static void note_written(struct journal *j, const void *buf, size_t len, uint64_t off)
{
	uint64_t block = sample_block_bytes(j), t0 = fp_dev_now_ns(j->inner);
	const unsigned char *b = buf;

	for (uint64_t at = util_round_up(off, block); at + block <= off + len; at += block)
		if (!util_is_one_byte(b + (at - off), (size_t)block))
			written_add(j, jr_fnv1a64(b + (at - off), (size_t)block));
	hide_time_since(j, t0);
}

/* Whether the card behind the device is not the one the sentinels were
 * read on (a card swapped in the same reader, or gone): every sentinel
 * the test has not saved, and so never wrote, reads differently, or
 * reads alike only where it is blank (another card blank there reads
 * alike too), and at least two differ.  One block may change on the
 * same card (a worn range); another card changes every block that holds
 * data.  While the writes may alias (the capacity check: on a fake they
 * wrap onto blocks never aimed at, and on a small fake onto every
 * sentinel), a sentinel that now reads as a block the test wrote is
 * such a write, not another card.  Stops at the first block with data
 * that still matches: one read on the usual path. */
static bool card_swapped(struct journal *j)
{
	uint64_t block = sample_block_bytes(j), gs, ge;
	unsigned differ = 0;

	for (unsigned i = 0; i < j->nsentinels; i++) {
		const struct jr_fingerprint *f = &j->sentinel[i];
		struct jr_fingerprint now;

		if (!spans_gap(j, f->offset, f->offset + block, &gs, &ge) ||
		    gs != f->offset || ge != f->offset + block)
			continue;	/* saved: the test may have written it */
		if (!sample_block(j, f->offset, &now)) {
			differ++;
			continue;
		}
		if (j->writes_alias && written_has(j, now.hash))
			return false;
		if (now.hash != f->hash)
			differ++;
		else if (!j->sentinel_blank[i])
			return false;
	}
	return differ >= 2;
}

/* Before a backup and every JOURNAL_RECHECK_BYTES of writes: is it still
 * the same card?  A swapped card must get neither the test's writes nor a
 * place in the journal (a restore onto the first card would write the
 * second card's blocks there).  -FP_EREFUSED from then on. */
static int check_card(struct journal *j)
{
	if (j->card_changed)
		return -FP_EREFUSED;
	j->unchecked_bytes = 0;
	if (!card_swapped(j))
		return 0;
	j->card_changed = true;
	j->card_read_failed = false;
	fp_errf(j->last_err, sizeof(j->last_err), "the card behind '%s' changed "
	    "during the test (blocks the test never wrote read differently, or "
	    "not at all): the writes since the last check (up to %llu MiB) may "
	    "be on the card now in the reader, and nothing more was written",
	    fp_dev_path(j->inner), (unsigned long long)(JOURNAL_RECHECK_BYTES >> 20));
	return -FP_EREFUSED;
}

/* I/O since t0 (the inner clock) is not the test's: off the decorator's
 * clock. */
static void hide_time_since(struct journal *j, uint64_t t0)
{
	uint64_t t1 = fp_dev_now_ns(j->inner);

	j->hidden_ns += t1 > t0 ? t1 - t0 : 0;
}

/* Copy [start, end) of the device into data records (not committed). */
static int save_range(struct journal *j, uint64_t start, uint64_t end,
		      bool interruptible)
{
	for (uint64_t off = start; off < end;) {
		uint64_t n = end - off < JOURNAL_RECORD_MAX_BYTES ?
			     end - off : JOURNAL_RECORD_MAX_BYTES;
		struct jr_record r = { .type = JR_REC_DATA, .seq = j->seq,
				       .offset = off, .length = n,
				       .may_alias = j->writes_alias };
		int rc;

		if (interruptible && safety_interrupted())
			return -EINTR;
		rc = fp_dev_read_timed(j->inner, j->buf, (size_t)n, off, NULL);
		if (rc < 0) {
			fp_errf(j->last_err, sizeof(j->last_err), "cannot back up "
			    "'%s' at byte %llu: %s", fp_dev_path(j->inner),
			    (unsigned long long)off, strerror(-rc));
			j->card_read_failed = true;
			return rc;
		}
		r.data_crc = jr_crc32c(j->buf, (size_t)n);
		rc = spans_reserve(&j->pending, 1);
		if (rc == 0)
			rc = append(j, &r, j->buf);
		if (rc < 0) {
			j->card_read_failed = false;
			fp_errf(j->last_err, sizeof(j->last_err), "cannot write "
			    "journal '%s': %s", j->path, strerror(-rc));
			return rc;
		}
		spans_add(&j->pending, off, off + n);
		j->ndata++;
		j->data_bytes += n;
		off += n;
	}
	return 0;
}

/* Save every unsaved part of [start, end) and commit it.  What was saved
 * is committed even when a later part fails (a read error), so the
 * journal stays valid; a failed append is cut off again.  The time spent
 * is hidden from the decorator's clock. */
static int save_missing(struct journal *j, uint64_t start, uint64_t end,
			bool interruptible)
{
	uint64_t t0 = fp_dev_now_ns(j->inner), gs, ge;
	int rc = 0, crc;
	bool rt_held = false;

	cut_torn_tail(j);
	if (j->torn)
		return -EIO;
	/* A backup is not timed: no real-time priority for it.  Most writes
	 * find their block saved already and switch nothing. */
	if (spans_gap(j, start, end, &gs, &ge)) {
		rt_held = fp_dev_rt_suspend();
		rc = check_card(j);
	}
	if (!j->fingerprinted) {
		take_fingerprint(j, start, end);
		take_sentinels(j);
	}
	while (rc == 0 && spans_gap(j, start, end, &gs, &ge))
		rc = save_range(j, gs, ge, interruptible);
	/* a swap during the backup: its records may hold the second card's
	 * blocks, so they are cut, never committed */
	if (j->seq != j->slot.records && check_card(j) == -FP_EREFUSED) {
		j->torn = true;
		rc = -FP_EREFUSED;
	}
	if (!j->torn && j->seq != j->slot.records) {
		crc = commit(j);
		if (crc < 0 && rc == 0) {
			if (j->torn) {
				j->card_read_failed = false;
				fp_errf(j->last_err, sizeof(j->last_err), "cannot "
				    "write journal '%s': %s", j->path,
				    strerror(-crc));
			}
			rc = crc;
		}
	}
	if (j->torn) {
		cut_torn_tail(j);
		if (rc == 0)
			rc = -EIO;
	}
	fp_dev_rt_resume(rt_held);
	hide_time_since(j, t0);
	return rc;
}

/* ---- the decorator ---- */

/* check_card() between a test's writes, its time off the clock. */
static int check_card_hidden(struct journal *j)
{
	uint64_t t0 = fp_dev_now_ns(j->inner);
	int rc = check_card(j);

	hide_time_since(j, t0);
	return rc;
}

static int jdev_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct journal *j = priv;

	if (safety_interrupted())
		return -EINTR;
	return fp_dev_read_timed(j->inner, buf, len, off, NULL);
}

/* Ranges saved on the fly are widened to whole JOURNAL_SAVE_GRAIN_BYTES
 * blocks, within the write area (nothing outside it can be written): a
 * test writing small chunks then pays one backup (and one fsync) per block
 * instead of one per chunk. */
static void save_bounds(const struct journal *j, uint64_t off, uint64_t end,
			uint64_t *from, uint64_t *to)
{
	uint64_t lo = 0, hi = fp_dev_size_bytes(j->inner);

	if (j->outer)
		fp_dev_write_area(j->outer, &lo, &hi);
	*from = off / JOURNAL_SAVE_GRAIN_BYTES * JOURNAL_SAVE_GRAIN_BYTES;
	*to = (end + JOURNAL_SAVE_GRAIN_BYTES - 1) / JOURNAL_SAVE_GRAIN_BYTES *
	      JOURNAL_SAVE_GRAIN_BYTES;
	*from = *from > lo ? *from : lo;
	*to = *to < hi ? *to : hi;
}

/* The first write of other data than the fill byte (or than it and the
 * capacity check's blocks): the journal stops saying that all writes were
 * of it before that write reaches the device (a commit of nothing new),
 * its time off the clock like a backup's. */
static int commit_without(struct journal *j, uint32_t flags)
{
	uint64_t t0 = fp_dev_now_ns(j->inner);
	int rc;

	j->slot.flags &= ~flags;
	rc = commit(j);
	hide_time_since(j, t0);
	return rc;
}

/* The "every write so far was ..." flags this write ends, committed
 * before it reaches the device.  The data is looked at only while some
 * flag is left to end: every write passes here. */
static int note_kind_written(struct journal *j, const void *buf, size_t len,
			     uint64_t off)
{
	const uint32_t kinds = JR_SLOT_FILL_ONLY | JR_SLOT_MARKED_ONLY | JR_SLOT_PIECES_MARKED;
	uint32_t ends = 0;
	bool fill;

	if (!(j->slot.flags & kinds))
		return 0;
	fill = util_is_fill(buf, len);
	if (!fill)
		ends = JR_SLOT_FILL_ONLY |
		       (util_is_test_block(buf, len) ? 0 : JR_SLOT_MARKED_ONLY);
	/* whole pieces; fill is that already when they are whole */
	if (off % FP_TEST_PIECE_BYTES != 0 ||
	    (fill ? len % FP_TEST_PIECE_BYTES != 0 : !util_is_test_data(buf, len)))
		ends |= JR_SLOT_PIECES_MARKED;
	ends &= j->slot.flags;
	return ends ? commit_without(j, ends) : 0;
}

/* The journal must keep its name while the test writes: one deleted or
 * moved away is found by no restore after a crash (its pointer names the
 * old path), and the card's data would go with it.  The test stops
 * instead, and its own restore reads the file still open. */
static int check_named(struct journal *j)
{
	if (jr_still_named(j->fd, j->path) == 0)
		return 0;
	j->card_read_failed = false;
	fp_errf(j->last_err, sizeof(j->last_err), "its journal '%s' was "
	    "deleted, moved or replaced during the test: after a crash no "
	    "restore could find it, so the test stopped (its writes are put back "
	    "from the journal still open)", j->path);
	return -ESTALE;
}

static int jdev_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct journal *j = priv;
	uint64_t from, to;
	int rc;

	if (safety_interrupted())
		return -EINTR;
	if (j->finished)
		return -EBADF;
	if (j->card_changed)
		return -FP_EREFUSED;
	save_bounds(j, off, off + len, &from, &to);
	rc = save_missing(j, from, to, false);
	if (rc == 0)
		rc = note_kind_written(j, buf, len, off);
	j->unchecked_bytes += len;
	if (rc == 0 && j->unchecked_bytes >= JOURNAL_RECHECK_BYTES)
		rc = check_card_hidden(j);
	if (rc == 0)
		rc = check_named(j);
	if (rc < 0)
		return rc;
	j->dirty = true;
	if (j->writes_alias)
		note_written(j, buf, len, off);
	return fp_dev_write_timed(j->inner, buf, len, off, NULL);
}

static uint64_t jdev_now_ns(void *priv)
{
	struct journal *j = priv;

	return fp_dev_now_ns(j->inner) - j->hidden_ns;
}

static void jdev_close(void *priv)
{
	struct journal *j = priv;

	if (j->fd >= 0)
		close(j->fd);	/* also drops the lock */
	free(j->saved.v);
	free(j->pending.v);
	free(j->written.v);
	free(j->buf);
	free(j->path);
	free(j);
}

static const struct fp_dev_ops journal_ops = {
	.pread = jdev_pread,
	.pwrite = jdev_pwrite,
	.now_ns = jdev_now_ns,
	.close = jdev_close,
};

/* ---- creating the journal ---- */

/* The pointer file at the default place, when the journal is elsewhere
 * (--journal, or FLASHPROBE_STATE_DIR, which a later run may lack: sudo
 * drops it); "" for simulated cards, which no later run can find anyway. */
static int pointer_path(struct fp_dev *inner, const char *journal_abs,
			char *link, size_t len, char *err, size_t errlen)
{
	char def[PATH_MAX], def_abs[PATH_MAX];
	int rc;

	link[0] = '\0';
	if (devspec_dev_is_sim(inner))
		return 0;
	rc = path_in(default_dir(), fp_dev_path(inner), def, sizeof(def), err,
		     errlen);
	if (rc < 0)
		return rc;
	if (jr_abs_path(def, def_abs, sizeof(def_abs)) != 0)
		snprintf(def_abs, sizeof(def_abs), "%s", def);
	if (strcmp(def_abs, journal_abs) != 0)
		util_copy_str(link, len, def_abs);
	return 0;
}

/* The pointer comes first, locked until the journal it names exists and
 * is locked: a run killed in between leaves a pointer covering nothing,
 * which the next lookup removes, rather than a journal no lookup finds.
 * 0 with its descriptor in *fd (-1 when the journal is at the default
 * path and has none), or -errno. */
static int create_pointer(const char *link, struct jr_pointer *p,
			  const char *journal_abs, const char *device, int *fd,
			  char *err, size_t errlen)
{
	*fd = -1;
	if (link[0] == '\0')
		return 0;
	if (has_control_char(device)) {	/* it said "Invalid argument" */
		fp_errf(err, errlen, "the device's name holds a control "
		    "character (a newline?); the pointer file that finds a journal "
		    "kept elsewhere keeps one path per line: rename it, or keep "
		    "the journal in the default place (no --journal, no "
		    JOURNAL_STATE_ENV ")");
		*fd = -EINVAL;
		return *fd;
	}
	memset(p, 0, sizeof(*p));
	util_copy_str(p->journal, sizeof(p->journal), journal_abs);
	util_copy_str(p->device, sizeof(p->device), device);
	*fd = jr_pointer_create(link, p);
	if (*fd == -EEXIST)
		fp_errf(err, errlen, "a journal for '%s' already exists at '%s'; "
		    "replay it with 'flashprobe restore %s'", device, link, link);
	else if (*fd < 0)
		fp_errf(err, errlen, "cannot create journal pointer '%s': %s",
		    link, strerror(-*fd));
	return *fd < 0 ? *fd : 0;
}

/* Create the file whole (static header, empty commit slots) and locked.
 * The lock is held until the journal is closed: a "flashprobe restore"
 * run meanwhile must not replay (and delete) the journal of a test that
 * is still going. */
static int create_file(const char *path, const struct jr_header *h,
		       const char *device, char *err, size_t errlen)
{
	unsigned char b[JR_HEADER_BYTES];
	int fd;

	memset(b, 0, sizeof(b));
	jr_static_encode(h, b);
	fd = jr_create_whole(path, b, sizeof(b));
	if (fd == -EEXIST)
		fp_errf(err, errlen, "journal '%s' already exists; replay it "
		    "with 'flashprobe restore %s' first", path, path);
	else if (fd < 0)
		fp_errf(err, errlen, "cannot create journal '%s' for '%s': %s",
		    path, device, strerror(-fd));
	/* a path where no journal can be, like a read-only directory, is a
	 * bad --journal (status 2), not a refusal of the device */
	return fd == -EROFS ? -EINVAL : fd;
}

static struct journal *journal_new(struct fp_dev *inner, const char *path,
				   int fd, const char *link)
{
	struct journal *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->inner = inner;
	j->fd = fd;
	j->slot.end = JR_HEADER_BYTES;	/* the header was fsync'ed */
	/* nothing written yet */
	j->slot.flags = JR_SLOT_FILL_ONLY | JR_SLOT_MARKED_ONLY | JR_SLOT_PIECES_MARKED;
	util_copy_str(j->pointer_path, sizeof(j->pointer_path), link);
	j->path = strdup(path);
	j->buf = fp_dev_alloc_buf(JOURNAL_RECORD_MAX_BYTES);
	if (j->path == NULL || j->buf == NULL) {
		j->fd = -1;	/* the caller closes and removes it */
		jdev_close(j);
		return NULL;
	}
	return j;
}

static int journal_wrap(struct journal *j, struct fp_dev **out)
{
	*out = fp_dev_create(&journal_ops, j, fp_dev_kind(j->inner),
			     fp_dev_path(j->inner), fp_dev_size_bytes(j->inner),
			     fp_dev_sector_bytes(j->inner));
	j->outer = *out;
	fp_dev_set_inner(*out, j->inner);
	return *out != NULL ? 0 : -ENOMEM;
}

/* Undo a journal_open() that failed after the file was created. */
static void journal_abandon(struct journal *j, int fd, const char *path)
{
	if (j != NULL) {
		j->fd = -1;
		jdev_close(j);
	}
	close(fd);
	unlink(path);
}

/* The journal file and its pointer, then the device wrapper: 0, or -errno
 * with nothing left behind. */
static int create_journal(struct fp_dev *inner, const char *journal_path,
			  const struct jr_header *h, const char *jabs,
			  struct fp_dev **out, char *err, size_t errlen)
{
	const char *device = fp_dev_path(inner);
	struct jr_pointer p;
	struct journal *j = NULL;
	int pfd, fd, rc;

	/* the header's path, resolved: the pointer is read from anywhere */
	rc = create_pointer(h->link, &p, jabs, h->id.path[0] ? h->id.path : device,
			    &pfd, err, errlen);
	if (rc < 0)
		return rc;
	fd = create_file(journal_path, h, device, err, errlen);
	if (fd >= 0)
		j = journal_new(inner, journal_path, fd, h->link);
	rc = fd < 0 ? fd : j == NULL ? -ENOMEM : journal_wrap(j, out);
	if (rc == 0 && pfd >= 0)
		j->pointer = p;
	if (rc == -ENOMEM)
		fp_errf(err, errlen, "cannot create journal '%s': %s", journal_path,
		    strerror(ENOMEM));
	if (rc < 0 && fd >= 0)
		journal_abandon(j, fd, journal_path);
	if (rc < 0 && pfd >= 0) {
		unlink(h->link);
		jr_fsync_dir_of(h->link);
	}
	if (pfd >= 0)
		close(pfd);	/* the journal's own lock holds from here */
	return rc;
}

int journal_open(struct fp_dev *inner, const char *journal_path,
		 struct fp_dev **out, char *err, size_t errlen)
{
	struct jr_header h = { .record_max = JOURNAL_RECORD_MAX_BYTES };
	char jabs[PATH_MAX];
	int rc;

	if (out != NULL)
		*out = NULL;
	if (inner == NULL || journal_path == NULL || out == NULL)
		return -EINVAL;
	rc = journal_check_location(journal_path, fp_dev_path(inner), err,
				    errlen);
	if (rc < 0)
		return rc;
	rc = jr_abs_path(journal_path, jabs, sizeof(jabs));
	if (rc == 0)
		rc = jr_identity_of_dev(inner, &h.id);
	if (rc == -ENAMETOOLONG && h.id.kind == FP_DEV_BLOCK) {
		fp_errf(err, errlen, "cannot create journal '%s': the loop devices "
		    "over the file of '%s' pass a partition whose window sysfs does "
		    "not give, and more windows than a journal can record: a journal "
		    "that could not tell them apart might be replayed through "
		    "another; test it through fewer loop devices",
		    journal_path, fp_dev_path(inner));
		return -EINVAL;
	}
	if (rc < 0) {
		fp_errf(err, errlen, "cannot create journal '%s': %s", journal_path,
		    strerror(-rc));
		return rc;
	}
	rc = pointer_path(inner, jabs, h.link, sizeof(h.link), err, errlen);
	if (rc < 0)
		return rc;
	h.created_unix = (uint64_t)time(NULL);
	rc = create_journal(inner, journal_path, &h, jabs, out, err, errlen);
	if (rc < 0)
		*out = NULL;
	return rc;
}

/* Enough free space for the records of [start, end) and their headers. */
static int check_space(const struct journal *j, uint64_t bytes, char *err,
		       size_t errlen)
{
	uint64_t need = bytes + (bytes / JOURNAL_RECORD_MAX_BYTES + 2) *
				JR_REC_BYTES;
	char dir[PATH_MAX], a[32], b[32];
	struct statvfs vfs;

	util_dir_of(j->path, dir, sizeof(dir));
	if (statvfs(dir, &vfs) != 0)
		return 0;	/* unknown: the writes will tell */
	if ((uint64_t)vfs.f_bavail * vfs.f_frsize >= need)
		return 0;
	fp_errf(err, errlen, "not enough space for journal '%s': %s needed, %s "
	    "free", j->path, units_format_bytes(need, a, sizeof(a)),
	    units_format_bytes((uint64_t)vfs.f_bavail * vfs.f_frsize, b,
			       sizeof(b)));
	return -ENOSPC;
}

int journal_backup_area(struct fp_dev *jdev, uint64_t start, uint64_t end,
			char *err, size_t errlen)
{
	struct journal *j = journal_of(jdev);
	uint32_t sector;
	int rc;

	if (j == NULL || j->finished)
		return -EINVAL;
	sector = fp_dev_sector_bytes(jdev);
	if (start >= end || end > fp_dev_size_bytes(jdev) ||
	    start % sector != 0 || end % sector != 0) {
		fp_errf(err, errlen, "cannot back up bytes %llu to %llu of '%s': "
		    "not a sector-aligned range inside the device",
		    (unsigned long long)start, (unsigned long long)end,
		    fp_dev_path(jdev));
		return -EINVAL;
	}
	rc = check_space(j, end - start, err, errlen);
	if (rc < 0)
		return rc;
	rc = save_missing(j, start, end, true);
	if (rc == -EINTR)
		fp_errf(err, errlen, "backup of '%s' interrupted; nothing was "
		    "written", fp_dev_path(jdev));
	else if (rc < 0)
		fp_errf(err, errlen, "%s", j->last_err);
	if (rc < 0)
		return rc;
	return fp_dev_set_write_area(jdev, start, end);
}

const char *journal_path_of(const struct fp_dev *jdev)
{
	const struct journal *j = journal_of(jdev);

	return j != NULL ? j->path : NULL;
}

const char *journal_last_error(const struct fp_dev *jdev)
{
	const struct journal *j = journal_of(jdev);

	return j != NULL ? j->last_err : "";
}

const struct fp_dev_failure *journal_card_failure(const struct fp_dev *jdev)
{
	const struct journal *j = journal_of(jdev);

	return j != NULL && j->card_read_failed ? fp_dev_last_failure(j->inner) : NULL;
}

bool journal_device_written(const struct fp_dev *jdev)
{
	const struct journal *j = journal_of(jdev);

	return j != NULL && j->dirty;
}

void journal_writes_may_alias(struct fp_dev *jdev, bool may)
{
	struct journal *j = journal_of(jdev);

	if (j != NULL)
		j->writes_alias = may;
}

int journal_finish(struct fp_dev *jdev, unsigned flags,
		   fp_progress_fn progress, void *progress_arg,
		   struct journal_restore_report *rep, char *err,
		   size_t errlen)
{
	struct journal *j = journal_of(jdev);
	int rc;

	if (j == NULL || rep == NULL)
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	if (j->finished)
		return 0;
	j->finished = true;
	/* Records never committed never let a write through: drop them. */
	if (j->seq != j->slot.records)
		j->torn = true;
	cut_torn_tail(j);
	if (!j->dirty) {
		/* The device was never written: nothing to put back. */
		rc = jr_delete_journal(j->fd, j->path, j->pointer_path,
				       &rep->marked_spent);
		rep->deleted = rc == 0;
		rep->delete_error = rc;
		rep->nothing_written = true;
		return 0;
	}
	if (j->card_changed) {
		fp_errf(err, errlen, "%s and nothing was restored onto it; journal "
		    "'%s' keeps the first card's data: put that card back and run "
		    "'flashprobe restore %s'", j->last_err, j->path, j->path);
		return -FP_EREFUSED;
	}
	/* Replayed from the file just written, through the same code as
	 * "flashprobe restore", so every run exercises it; still locked. */
	return jr_restore_locked(j->fd, j->path, j->inner, &j->slot, flags,
				 progress, progress_arg, rep, err, errlen);
}
