/* journal_replay.c - check a journal, put its data back, find journals
 * left behind.
 *
 * A journal is replayed only when it can prove it is whole: its header's
 * newest commit slot says how many records it commits and where they end,
 * and every one of them must be there, intact and in sequence.  Anything
 * less is refused with the journal kept, because the device may hold test
 * data exactly where the missing records would have put the original
 * back.  With --force every intact record in the file is replayed (also
 * past damage, found again by its magic and checksum), the journal is
 * still kept and the outcome is still an error when something is missing.
 *
 * Records are replayed newest first.  Their device ranges never overlap,
 * so on a genuine card the order does not matter; on a fake card whose
 * writes wrap around, a later record may have saved test data that an
 * earlier test write had put at an aliased address, and replaying it
 * first lets the earlier (original) record have the last word.
 */
#define _XOPEN_SOURCE 700	/* realpath(): POSIX 2008 + XSI */
#define _DEFAULT_SOURCE		/* flock() */
#define _FILE_OFFSET_BITS 64

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev.h"
#include "devspec.h"
#include "errmsg.h"
#include "journal.h"
#include "util.h"
#include "journal_format.h"
#include "loopfile.h"
#include "procfd.h"
#include "safety.h"
#include "units.h"

#define RESYNC_CHUNK (64u * 1024u)

#define CONTENT_SAMPLES 32	/* check_saved_content() */

/* One intact data record: where it is in the file and what it covers. */
struct jr_entry {
	uint64_t pos;
	uint64_t offset, length;
	bool may_alias;			/* saved while the test's writes may alias */
};

/* What a pass over the records found. */
struct jr_scan {
	struct jr_entry *v;		/* intact data records, file order */
	size_t n, cap;
	uint64_t data_bytes;
	uint64_t last_seq;		/* force: of the last record taken */
	bool any;
	bool damaged;
	char problem[256];
	uint64_t problem_at;		/* byte offset in the journal */
};

static void scan_free(struct jr_scan *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int scan_damaged(struct jr_scan *s, uint64_t at, const char *why)
{
	if (!s->damaged) {
		s->damaged = true;
		s->problem_at = at;
		snprintf(s->problem, sizeof(s->problem), "%s", why);
	}
	return 0;
}

static int scan_push(struct jr_scan *s, uint64_t pos,
		     const struct jr_record *r)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct jr_entry *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct jr_entry){ pos, r->offset, r->length, r->may_alias };
	s->data_bytes += r->length;
	return 0;
}

/* A data record's bounds, before its data is read into a bounded buffer. */
static bool data_record_sane(const struct jr_header *h,
			     const struct jr_record *r)
{
	const struct jr_identity *id = &h->id;

	return r->length > 0 && r->length <= h->record_max &&
	       r->length % id->sector_bytes == 0 &&
	       r->offset % id->sector_bytes == 0 &&
	       r->offset <= id->size_bytes &&
	       r->length <= id->size_bytes - r->offset;
}

static uint64_t record_bytes(const struct jr_record *r)
{
	return JR_REC_BYTES + (r->type == JR_REC_DATA ? r->length : 0);
}

/* The record at pos, its data read into buf and checked: 1, 0 when the
 * file ends exactly at pos, -EBADMSG with *why (and *header_ok when only
 * the data is bad, so the record's length is known), or -errno. */
static int record_at(int fd, const struct jr_header *h, uint64_t pos,
		     void *buf, struct jr_record *r, bool *header_ok,
		     const char **why)
{
	unsigned char b[JR_REC_BYTES];
	ssize_t n = util_pread_full(fd, b, sizeof(b), pos);

	*header_ok = false;
	if (n <= 0)
		return (int)n;
	*why = "a record header is cut short";
	if (n < (ssize_t)sizeof(b))
		return -EBADMSG;
	*why = "a record header fails its checksum";
	if (!jr_record_decode(b, r))
		return -EBADMSG;
	if (r->type == JR_REC_COMMIT)
		return 1;
	*why = "a record has impossible values";
	if (r->type != JR_REC_DATA || !data_record_sane(h, r))
		return -EBADMSG;
	*header_ok = true;
	n = util_pread_full(fd, buf, (size_t)r->length, pos + JR_REC_BYTES);
	if (n < 0)
		return (int)n;
	*why = "record data is cut short";
	if ((uint64_t)n < r->length)
		return -EBADMSG;
	*why = "record data fails its checksum";
	if (jr_crc32c(buf, (size_t)r->length) != r->data_crc)
		return -EBADMSG;
	return 1;
}

/* One record of a scan, in sequence: a data record is kept (and counted
 * in *ndata); a COMMIT must close exactly the records before it.  1 for
 * such a COMMIT, 0 for a data record, -EBADMSG for a COMMIT that does not
 * match, or -ENOMEM. */
static int take_record(struct jr_scan *s, uint64_t pos,
		       const struct jr_record *r, uint64_t *ndata)
{
	int rc;

	if (r->type == JR_REC_COMMIT)
		return r->offset == *ndata && r->length == s->data_bytes ?
		       1 : -EBADMSG;
	rc = scan_push(s, pos, r);
	if (rc == 0)
		(*ndata)++;
	return rc;
}

/* Every record the newest commit slot commits, exactly: anything missing,
 * damaged, out of sequence or not adding up is damage. */
static int scan_committed(int fd, const struct jr_header *h, void *buf,
			  struct jr_scan *s)
{
	const struct jr_slot *slot = &h->slot;
	uint64_t pos = JR_HEADER_BYTES, seq = 0, ndata = 0;
	bool ends_in_commit = false, header_ok;
	struct jr_record r;
	const char *why = "";
	char msg[256];
	int rc;

	while (pos < slot->end) {
		rc = record_at(fd, h, pos, buf, &r, &header_ok, &why);
		if (rc == 0) {
			snprintf(msg, sizeof(msg), "the journal is cut short: its "
				 "header commits %" PRIu64 " records (%" PRIu64
				 " data bytes) up to byte %" PRIu64 ", the file "
				 "ends at byte %" PRIu64, slot->ndata,
				 slot->data_bytes, slot->end, pos);
			return scan_damaged(s, pos, msg);
		}
		if (rc == -EBADMSG)
			return scan_damaged(s, pos, why);
		if (rc < 0)
			return rc;
		if (pos + record_bytes(&r) > slot->end)
			return scan_damaged(s, pos, "a record runs past the end "
					    "the header commits");
		if (r.seq != seq)
			return scan_damaged(s, pos, "records out of sequence");
		rc = take_record(s, pos, &r, &ndata);
		if (rc == -EBADMSG)
			return scan_damaged(s, pos, "a commit marker does not "
					    "match the records before it");
		if (rc < 0)
			return rc;
		ends_in_commit = rc == 1;
		seq++;
		pos += record_bytes(&r);
	}
	if (!ends_in_commit || seq != slot->records || ndata != slot->ndata ||
	    s->data_bytes != slot->data_bytes)
		return scan_damaged(s, pos, "the records do not add up to what "
				    "the header commits");
	return 0;
}

/* After what the slot commits, the intact records that continue the
 * sequence, up to the first that does not: a COMMIT record among them
 * was fsync'ed before its slot, so either the crash came between the two
 * (its device writes never happened, and replaying its records puts back
 * what is there already) or the slot that counted it was erased.  One
 * such commit is replayed: right in both cases.  Two or more cannot be a
 * crash, as the slot of the first was written before the second began:
 * the header was tampered with and cannot say whether more is missing,
 * so that is damage.  Data records after the last commit are dropped:
 * they never let a write through. */
static int scan_beyond(int fd, const struct jr_header *h, void *buf,
		       struct jr_scan *s, uint64_t *commits)
{
	const struct jr_slot *slot = &h->slot;
	uint64_t pos = h->slots == JR_SLOTS_OK ? slot->end : JR_HEADER_BYTES;
	uint64_t seq = slot->records, ndata = slot->ndata;
	size_t kept_n = s->n;
	uint64_t kept_bytes = s->data_bytes, second_at = 0;
	bool header_ok;
	struct jr_record r;
	const char *why;
	int rc;

	*commits = 0;
	while ((rc = record_at(fd, h, pos, buf, &r, &header_ok, &why)) == 1 &&
	       r.seq == seq) {
		rc = take_record(s, pos, &r, &ndata);
		if (rc == -EBADMSG)
			break;		/* not a commit of these records */
		if (rc < 0)
			return rc;
		if (rc == 1) {
			if (++*commits == 2)
				second_at = pos;
			kept_n = s->n;
			kept_bytes = s->data_bytes;
		}
		seq++;
		pos += record_bytes(&r);
	}
	if (rc < 0 && rc != -EBADMSG)
		return rc;
	s->n = kept_n;
	s->data_bytes = kept_bytes;
	if (*commits > 1)
		return scan_damaged(s, second_at, "the records hold commits "
				    "that the header's commit slots do not "
				    "count (the slots were erased or "
				    "replaced)");
	return 0;
}

/* The next offset after from where an intact record header starts, or
 * UINT64_MAX.  Only used by --force, past damage. */
static uint64_t resync(int fd, uint64_t from)
{
	static const unsigned char magic[4] = { 'F', 'P', 'J', 'R' };
	unsigned char *chunk = malloc(RESYNC_CHUNK + JR_REC_BYTES);
	uint64_t found = UINT64_MAX;
	struct jr_record r;
	ssize_t n;

	if (chunk == NULL)
		return UINT64_MAX;
	for (uint64_t at = from; found == UINT64_MAX; at += RESYNC_CHUNK) {
		n = util_pread_full(fd, chunk, RESYNC_CHUNK + JR_REC_BYTES, at);
		if (n < (ssize_t)JR_REC_BYTES)
			break;
		for (ssize_t i = 0; i + (ssize_t)JR_REC_BYTES <= n &&
				    i < (ssize_t)RESYNC_CHUNK; i++) {
			if (memcmp(chunk + i, magic, 4) == 0 &&
			    jr_record_decode(chunk + i, &r)) {
				found = at + (uint64_t)i;
				break;
			}
		}
	}
	free(chunk);
	return found;
}

/* Force: every intact data record in the file, in sequence order.  A
 * record found again past damage counts only when it continues the
 * sequence and lies where the test could write, so that a journal file
 * that happens to be stored on the device is not taken for ours. */
static bool plausible(const struct jr_header *h, const struct jr_scan *s,
		      const struct jr_record *r)
{
	if (s->any && r->seq <= s->last_seq)
		return false;
	if (h->slots == JR_SLOTS_OK && h->slot.area_lo < h->slot.area_hi)
		return r->offset >= h->slot.area_lo &&
		       r->offset + r->length <= h->slot.area_hi;
	return true;
}

static int scan_everything(int fd, const struct jr_header *h, void *buf,
			   struct jr_scan *s)
{
	uint64_t pos = JR_HEADER_BYTES;
	bool header_ok;
	struct jr_record r;
	const char *why = "";
	int rc;

	while (pos != UINT64_MAX) {
		rc = record_at(fd, h, pos, buf, &r, &header_ok, &why);
		if (rc == 0)
			break;
		if (rc == 1 && plausible(h, s, &r)) {
			if (r.type == JR_REC_DATA && (rc = scan_push(s, pos, &r)))
				return rc;
			s->any = true;
			s->last_seq = r.seq;
			pos += record_bytes(&r);
			continue;
		}
		if (rc < 0 && rc != -EBADMSG)
			return rc;
		scan_damaged(s, pos, rc == 1 ? "a record out of place" : why);
		pos = header_ok ? pos + record_bytes(&r) : resync(fd, pos + 1);
	}
	return 0;
}

/* ---- replay ---- */

/* Writes a replay may spend narrowing down pieces whose write failed
 * (beyond one write per record).  Each is an in-place rewrite: on a card
 * without random writes inside an AU it costs an AU copy (~0.3 s), and
 * narrowing every failed 1 MiB record to single sectors took 8000 writes
 * per 2 MiB of bad flash, 40 minutes, under a progress line that counts
 * records.  256 writes: a bad spot or two located to SPLIT_GRAIN, then
 * failed pieces are reported as they are (about a minute at most). */
#define SPLIT_WRITES_MAX 256u
/* The smallest piece a failed write is split into: the test blocks' size,
 * so a bad range is still located to the block the test wrote. */
#define SPLIT_GRAIN 4096u

/* A grain some record restores, by the hash of its data. */
struct grain_of {
	uint64_t hash;
	size_t record;			/* scan index: restored before the lower ones */
};

struct replay {
	struct fp_dev *dev;
	void *vbuf;			/* read-back buffer */
	struct journal_restore_report *rep;
	unsigned split_writes;		/* spent of SPLIT_WRITES_MAX */
	struct grain_of *grains;	/* check_kept(): every record's, by hash */
	size_t ngrains;
};

/* The replay runs backwards over the records and forwards inside one: a
 * failed range that grew up to the one before it (the next record on the
 * device) joins it, so a run of failed records is reported as one range. */
static void join_last_failed(struct journal_restore_report *rep)
{
	struct journal_range *prev, *last;

	if (rep->nfailed < 2 || rep->nfailed > JOURNAL_MAX_FAILED)
		return;
	prev = &rep->failed[rep->nfailed - 2];
	last = &rep->failed[rep->nfailed - 1];
	if (prev->error != last->error ||
	    last->offset_bytes + last->length_bytes != prev->offset_bytes)
		return;
	prev->offset_bytes = last->offset_bytes;
	prev->length_bytes += last->length_bytes;
	rep->nfailed--;
}

static void add_failed(struct journal_restore_report *rep, uint64_t off,
		       uint64_t len, int error)
{
	struct journal_range *last = rep->nfailed > 0 &&
				     rep->nfailed <= JOURNAL_MAX_FAILED ?
				     &rep->failed[rep->nfailed - 1] : NULL;

	if (rep->failed_bytes == 0 || off < rep->failed_lowest)
		rep->failed_lowest = off;
	rep->failed_bytes += len;
	if (last != NULL && last->error == error &&
	    last->offset_bytes + last->length_bytes == off) {
		last->length_bytes += len;
		join_last_failed(rep);
		return;
	}
	if (rep->nfailed < JOURNAL_MAX_FAILED)
		rep->failed[rep->nfailed] = (struct journal_range){ off, len,
								    error };
	rep->nfailed++;
	join_last_failed(rep);
}

/* SPLIT_GRAIN, or the sector when it is larger. */
static uint64_t split_grain(const struct replay *c)
{
	uint32_t sector = fp_dev_sector_bytes(c->dev);

	return sector > SPLIT_GRAIN ? sector : SPLIT_GRAIN;
}

/* The piece [off, off + len) was written (or refused) and read back into
 * vbuf: the grains (SPLIT_GRAIN) that read back as the original are
 * restored, runs of the others failed with error.  The read-back tells
 * which hold what was written: no write more is needed to locate them
 * (flipped bits, dropped writes, a refused write that changed nothing).
 * Grains, not sectors: a worn card flipping a bit in one sector of each
 * page would otherwise be reported as thousands of 512-byte ranges. */
static void sort_grains(struct replay *c, const unsigned char *data,
			uint64_t off, uint64_t len, int error)
{
	const unsigned char *got = c->vbuf;
	uint64_t grain = split_grain(c);

	for (uint64_t i = 0; i < len; i += grain) {
		uint64_t n = len - i < grain ? len - i : grain;

		if (memcmp(got + i, data + i, (size_t)n) == 0)
			c->rep->restored_bytes += n;
		else
			add_failed(c->rep, off + i, n, error);
	}
}

/* Whether a piece whose write or read failed with rc is worth
 * splitting: a smaller one may succeed where a bad spot is local, never
 * on a read-only or full device, nor past the budget of split writes. */
static bool worth_splitting(const struct replay *c, uint64_t len, int rc)
{
	return len > split_grain(c) && rc != -EINVAL && rc != -ENOSPC &&
	       rc != -EROFS && c->split_writes + 2 <= SPLIT_WRITES_MAX;
}

/* Write one piece, read it back, compare grain by grain (see
 * sort_grains()).  Only a failed write or read is split, in halves down
 * to SPLIT_GRAIN within SPLIT_WRITES_MAX, so a bad spot costs about the
 * blocks it covers and everything around it is still restored.
 * restored_bytes counts a refused piece that already reads back as the
 * original too. */
static void restore_piece(struct replay *c, const unsigned char *data,
			  uint64_t off, uint64_t len)
{
	int wrc = fp_dev_write_timed(c->dev, data, (size_t)len, off, NULL);
	int rrc = fp_dev_read_timed(c->dev, c->vbuf, (size_t)len, off, NULL);
	int rc = wrc ? wrc : rrc;

	/* a refused write that changed nothing (a worn card gone read-only,
	 * a write failing before it changed anything): nothing lost */
	if (rc == 0 || (rrc == 0 && memcmp(c->vbuf, data, (size_t)len) == 0)) {
		sort_grains(c, data, off, len, -EILSEQ);
		return;
	}
	if (!worth_splitting(c, len, rc)) {
		if (rrc == 0)
			sort_grains(c, data, off, len, rc);
		else
			add_failed(c->rep, off, len, rc);
		return;
	}
	{
		uint64_t grain = split_grain(c), half = len / 2 - (len / 2) % grain;

		if (half == 0)
			half = grain;
		c->split_writes += 2;
		restore_piece(c, data, off, half);
		restore_piece(c, data + half, off + half, len - half);
	}
}

/* The replay is the write authority of the restore: it allows what the
 * records cover (their hull, inside the device) once, in place of
 * whatever area the test had, and ends it when done.  Records past the
 * end fail one by one. */
static int grant_records(struct fp_dev *dev, const struct jr_scan *s)
{
	uint64_t lo = UINT64_MAX, hi = 0, size = fp_dev_size_bytes(dev);

	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].offset < lo)
			lo = s->v[i].offset;
		if (s->v[i].offset + s->v[i].length > hi)
			hi = s->v[i].offset + s->v[i].length;
	}
	hi = hi < size ? hi : size;
	fp_dev_end_write_area(dev);
	return lo < hi ? fp_dev_set_write_area(dev, lo, hi) : 0;
}

/* The record of scan entry i, read again from the journal (the data was
 * checked, the buffer reused). */
static int record_again(int fd, const struct jr_header *h, const struct jr_scan *s,
			size_t i, void *buf, struct jr_record *r)
{
	bool header_ok;
	const char *why;
	int rc = record_at(fd, h, s->v[i].pos, buf, r, &header_ok, &why);

	return rc == 1 ? 0 : rc < 0 && rc != -EBADMSG ? rc : -EIO;
}

static int cmp_grain(const void *a, const void *b)
{
	const struct grain_of *x = a, *y = b;

	return x->hash < y->hash ? -1 : x->hash > y->hash ? 1 : x->record < y->record ? -1 :
	       x->record > y->record;
}

/* The grains of every record saved while the test's writes may alias, by
 * hash, read once more from the journal; built the first time
 * check_kept() finds a grain of such a record that changed. */
static int index_grains(int fd, const struct jr_header *h, const struct jr_scan *s,
			void *buf, struct replay *c)
{
	uint64_t grain = split_grain(c), n = 0;
	struct jr_record r;
	int rc = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->v[i].may_alias ? (s->v[i].length + grain - 1) / grain : 0;
	c->grains = calloc(n ? n : 1, sizeof(*c->grains));
	if (c->grains == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < s->n && rc == 0; i++) {
		if (!s->v[i].may_alias)
			continue;
		rc = record_again(fd, h, s, i, buf, &r);
		for (uint64_t at = 0; rc == 0 && at < r.length; at += grain)
			c->grains[c->ngrains++] = (struct grain_of){
				jr_fnv1a64((unsigned char *)buf + at,
					   (size_t)(r.length - at < grain ? r.length - at : grain)), i };
	}
	qsort(c->grains, c->ngrains, sizeof(*c->grains), cmp_grain);
	return rc;
}

/* Whether a grain of record i that now reads as got was overwritten by a
 * record restored after it (an older one, lower index): on a card whose
 * writes wrap around, the original of an aliased address has the last
 * word, as it should.  Only between records saved while the writes may
 * alias (the capacity check's): anywhere else, a grain that still holds
 * the test's fill pattern would pass wherever an older record saved a
 * block of that pattern, and a card that kept none of the restore's
 * writes was reported restored and verified. */
static bool restored_later(const struct replay *c, size_t i, const void *got, size_t n)
{
	uint64_t hash = jr_fnv1a64(got, n);
	size_t lo = 0, hi = c->ngrains;

	while (lo < hi) {	/* the first of that hash: its lowest record */
		size_t mid = lo + (hi - lo) / 2;

		if (c->grains[mid].hash < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ngrains && c->grains[lo].hash == hash && c->grains[lo].record < i;
}

/* A record's first and last grain as restored, by hash: what
 * check_kept() reads again once every record is written (a record that
 * did not restore cleanly is not: its failures are known). */
struct kept_sample {
	bool clean;
	bool checked;			/* check_all_kept(): read again, kept */
	uint64_t first, last;
};

/* Where a record's first and last grain lie: [0, *n1) and [*at2, len). */
static void sample_grains(const struct replay *c, uint64_t len, uint64_t *n1, uint64_t *at2)
{
	uint64_t grain = split_grain(c);

	*n1 = len < grain ? len : grain;
	*at2 = len > grain ? len - grain : 0;
}

static struct kept_sample sample_of(const struct replay *c, const unsigned char *data,
				    uint64_t len)
{
	uint64_t n1, at2;

	sample_grains(c, len, &n1, &at2);
	return (struct kept_sample){ true, false, jr_fnv1a64(data, (size_t)n1),
				     jr_fnv1a64(data + at2, (size_t)(len - at2)) };
}

/* Whether the grain [at, at + n) at off still reads as hashed. */
static bool grain_kept(struct replay *c, uint64_t off, uint64_t at, uint64_t n,
		       uint64_t hash)
{
	return fp_dev_read_timed(c->dev, c->vbuf, (size_t)n, off + at, NULL) == 0 &&
	       jr_fnv1a64(c->vbuf, (size_t)n) == hash;
}

/* A record that read back right after its write, once every record is
 * written: its first and last grain are read again against their hashes
 * (kept_sample), and when either differs, the record is read again from
 * the journal and compared whole, and the grains that no longer hold it fail
 * (-EILSEQ).  A card that stopped keeping writes (a worn one turning
 * read-only) behind a write cache served each read-back right after its
 * write from the cache: a 4 MiB cache had 388 MiB of test data left on
 * the card and the restore reported verified.  The writes after a record
 * must have pushed it out of the cache by then: see check_all_kept().
 * Two grains a record: under 1 % more reads. */
static int compare_record(int fd, const struct jr_header *h, const struct jr_scan *s,
			  size_t rec, struct replay *c, void *buf, bool *same);

static int check_kept(int fd, const struct jr_header *h, const struct jr_scan *s,
		      size_t rec, struct replay *c, struct kept_sample k, void *buf)
{
	uint64_t off = s->v[rec].offset, len = s->v[rec].length;
	uint64_t n1, at2;
	bool same;

	sample_grains(c, len, &n1, &at2);
	if (grain_kept(c, off, 0, n1, k.first) &&
	    grain_kept(c, off, at2, len - at2, k.last))
		return 0;
	return compare_record(fd, h, s, rec, c, buf, &same);
}

/* Record rec, read again from the journal into buf, against what the
 * card reads now, grain by grain: the grains that no longer hold it fail
 * (-EILSEQ, or -EIO when the card cannot be read); *same when none did
 * (an aliased grain restored_later() explains is no failure, but not the
 * same either). */
static int compare_record(int fd, const struct jr_header *h, const struct jr_scan *s,
			  size_t rec, struct replay *c, void *buf, bool *same)
{
	uint64_t grain = split_grain(c), off = s->v[rec].offset, len = s->v[rec].length;
	unsigned char *got = c->vbuf, *data = buf;
	struct jr_record r;
	bool readable;
	int rc = record_again(fd, h, s, rec, buf, &r);

	*same = false;
	if (rc < 0)
		return rc;
	readable = fp_dev_read_timed(c->dev, got, (size_t)len, off, NULL) == 0;
	*same = readable;	/* until a grain differs */
	for (uint64_t i = 0; i < len && rc == 0; i += grain) {
		uint64_t n = len - i < grain ? len - i : grain;

		if (readable && memcmp(got + i, data + i, (size_t)n) == 0)
			continue;
		*same = false;
		if (readable && s->v[rec].may_alias && c->grains == NULL) {
			/* the journal's buffer is data: keep it */
			unsigned char *tmp = malloc((size_t)h->record_max);

			rc = tmp ? index_grains(fd, h, s, tmp, c) : -ENOMEM;
			free(tmp);
			if (rc < 0)
				break;
		}
		if (readable && s->v[rec].may_alias && restored_later(c, rec, got + i, (size_t)n))
			continue;
		c->rep->restored_bytes -= n;
		add_failed(c->rep, off + i, n, readable ? -EILSEQ : -EIO);
	}
	return rc;
}

/* What check_kept() needs written after a record before its reads mean
 * anything: the capacity check's round flush, or half of what was
 * restored when that is less (a cache larger than that can still hide a
 * card that stopped keeping writes). */
#define KEPT_PUSH_MAX_BYTES (32u * 1024u * 1024u)

/* Write record i again, the same data, where the card reads exactly that
 * data now (compared whole: what no longer holds it fails, and nothing
 * is written).  Writing the bytes a place already holds changes nothing
 * there, whatever other address lands on it.  A refused write that
 * changed nothing (a card gone read-only) costs nothing; one that did
 * fails the record. */
static int rewrite_record(int fd, const struct jr_header *h, const struct jr_scan *s,
			  size_t i, struct replay *c, void *buf)
{
	uint64_t off = s->v[i].offset, len = s->v[i].length;
	bool same;
	int rc = compare_record(fd, h, s, i, c, buf, &same);

	if (rc < 0 || !same)
		return rc;
	rc = fp_dev_write_timed(c->dev, buf, (size_t)len, off, NULL);
	if (rc < 0 && (fp_dev_read_timed(c->dev, c->vbuf, (size_t)len, off, NULL) ||
		       memcmp(c->vbuf, buf, (size_t)len))) {
		c->rep->restored_bytes -= len;
		add_failed(c->rep, off, len, rc);
	}
	return 0;
}

/* check_kept() on every record that restored cleanly, in replay order
 * (newest first).  A record is checked once push bytes were restored
 * after it; the ones restored last have no such writes behind them, and
 * the cache would answer for them: so the first ones restored, checked
 * by then, are written again (push bytes of them, where the card still
 * reads them whole) before the rest is checked.  Not the records saved
 * while the writes may alias (the capacity check's): a cache in front
 * of a wrapping card's folding may serve a stale block for their
 * address, and writing it would undo an older record restored over its
 * alias. */
static int check_all_kept(int fd, const struct jr_header *h, const struct jr_scan *s,
			  struct replay *c, struct kept_sample *kept, void *buf)
{
	uint64_t push = s->data_bytes / 2 < KEPT_PUSH_MAX_BYTES ? s->data_bytes / 2
								 : KEPT_PUSH_MAX_BYTES;
	uint64_t through = 0, rewritten = 0;
	int rc = 0;

	for (size_t i = s->n; rc == 0 && i-- > 0;) {
		through += s->v[i].length;
		if (kept[i].clean && s->data_bytes - through >= push) {
			uint64_t failed = c->rep->failed_bytes;

			rc = check_kept(fd, h, s, i, c, kept[i], buf);
			kept[i].clean = false;
			kept[i].checked = c->rep->failed_bytes == failed;
		}
	}
	for (size_t i = s->n; rc == 0 && i-- > 0 && rewritten < push;)
		if (kept[i].checked && !s->v[i].may_alias) {
			rc = rewrite_record(fd, h, s, i, c, buf);
			rewritten += s->v[i].length;
		}
	for (size_t i = s->n; rc == 0 && i-- > 0;)
		if (kept[i].clean)
			rc = check_kept(fd, h, s, i, c, kept[i], buf);
	return rc;
}

/* Newest record first (see the top of this file), then check_all_kept(). */
static int replay_all(int fd, const struct jr_header *h,
		      const struct jr_scan *s, struct fp_dev *dev,
		      fp_progress_fn progress, void *arg,
		      struct journal_restore_report *rep, void *buf,
		      void *vbuf)
{
	struct replay c = { .dev = dev, .vbuf = vbuf, .rep = rep };
	struct kept_sample *kept = calloc(s->n ? s->n : 1, sizeof(*kept));
	uint64_t done = 0;
	struct jr_record r;
	int rc;

	rc = kept ? grant_records(dev, s) : -ENOMEM;
	if (progress != NULL && rc == 0)
		progress(arg, 0, s->data_bytes);
	for (size_t i = s->n; rc == 0 && i-- > 0;) {
		uint64_t failed = rep->failed_bytes;

		rc = record_again(fd, h, s, i, buf, &r);
		if (rc < 0)
			break;
		restore_piece(&c, buf, r.offset, r.length);
		if (rep->failed_bytes == failed)
			kept[i] = sample_of(&c, buf, r.length);
		rep->records++;
		done += r.length;
		if (progress != NULL)
			progress(arg, done, s->data_bytes);
	}
	if (rc == 0)
		rc = check_all_kept(fd, h, s, &c, kept, buf);
	if (rc == 0)
		fp_dev_end_write_area(dev);	/* restored: nothing more to write */
	free(kept);
	free(c.grains);
	return rc;
}

/* ---- checks before writing anything ---- */

/* How to show a loop journal's data again: attach its file through the
 * window its serial records (one losetup line, also for a chain of loop
 * devices and partitions: the same bytes of the file are the journal's
 * device) and restore through that loop device. */
static void reattach_advice(const char *serial, char *buf, size_t len)
{
	char file[PATH_MAX], opts[96];

	if (loopfile_serial_name(serial, file, sizeof(file)) != 1)
		util_copy_str(file, sizeof(file), "its file");
	if (loopfile_serial_losetup_opts(serial, opts, sizeof(opts)))
		snprintf(buf, len, "attach '%s' again over the bytes its test saw "
			 "(losetup --find --show%s '%s') and run 'flashprobe restore' on "
			 "the loop device that prints", file, opts, file);
	else
		snprintf(buf, len, "set up the loop devices over '%s' as they were "
			 "and run 'flashprobe restore' on the last of them", file);
}

/* The journal's loop device and this one show the same file through
 * other windows (the image attached again at another offset): its data
 * belongs elsewhere in that file, and even --force must not put it here.
 * 1 with what to do in buf. */
static int other_window(const struct jr_identity *journal,
			const struct jr_identity *now, char *buf, size_t len)
{
	char advice[2 * PATH_MAX + 256];

	if (journal->kind != FP_DEV_BLOCK || now->kind != FP_DEV_BLOCK ||
	    !loopfile_serials_other_window(journal->serial, now->serial))
		return 0;
	reattach_advice(journal->serial, advice, sizeof(advice));
	snprintf(buf, len, "'%s' shows the journal's file through another window "
		 "than its test did: %s; --force here would put the data at the "
		 "wrong place", now->path, advice);
	return 1;
}

static int check_identity(const char *path, const struct jr_header *h,
			  struct fp_dev *dev, unsigned flags,
			  struct journal_restore_report *rep, char *err,
			  size_t errlen)
{
	struct jr_identity id;
	char why[2 * JR_PATH_MAX + 128], hint[3 * PATH_MAX + 256];

	jr_identity_of_dev(dev, &id);
	jr_identity_difference(&h->id, &id, why, sizeof(why));
	if (why[0] == '\0')
		return 0;
	if (other_window(&h->id, &id, hint, sizeof(hint))) {
		fp_errf(err, errlen, "journal '%s': %s; nothing was restored", path,
		    hint);
		return -FP_EREFUSED;
	}
	if (flags & JOURNAL_RESTORE_FORCE) {
		rep->identity_forced = true;
		return 0;
	}
	/* the same file or card, resized: "belongs to X, not to X" hid it
	 * behind the path */
	if (jr_same_device(&h->id, &id) && id.kind == FP_DEV_FILE &&
	    h->id.size_bytes != id.size_bytes)
		fp_errf(err, errlen, "journal '%s' is of image '%s', but %s: it was "
		    "resized since; nothing was restored: bring it back to %" PRIu64
		    " bytes (truncate -s %" PRIu64 ") and run restore again", path,
		    fp_dev_path(dev), why, h->id.size_bytes, h->id.size_bytes);
	/* the same path with another card behind it: say so, not "belongs
	 * to X, not to X" */
	else if (strcmp(h->id.path, fp_dev_path(dev)) == 0)
		fp_errf(err, errlen, "journal '%s' was made on another card or file "
		    "behind '%s' (%s); nothing was restored", path, h->id.path, why);
	else
		fp_errf(err, errlen, "journal '%s' belongs to '%s', not to '%s' (%s); "
		    "nothing was restored", path, h->id.path, fp_dev_path(dev), why);
	return -FP_EREFUSED;
}

static bool covered(const struct jr_scan *s, uint64_t off, uint64_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (off < s->v[i].offset + s->v[i].length &&
		    s->v[i].offset < off + len)
			return true;
	return false;
}

/* The device does not look like the journal's card (why says what
 * differs): refused, or replayed all the same with --force. */
static int other_card(const char *path, struct fp_dev *dev, unsigned flags,
		      const char *why, const char *example,
		      struct journal_restore_report *rep, char *err, size_t errlen)
{
	if (flags & JOURNAL_RESTORE_FORCE) {
		rep->fingerprint_forced = true;
		return 0;
	}
	fp_errf(err, errlen, "'%s' is probably not the card journal '%s' was "
	    "made on: %s; nothing was restored.  If it is the same card%s, run "
	    "'flashprobe restore --force %s'", fp_dev_path(dev), path, why,
	    example, path);
	return -FP_EREFUSED;
}

/* Whether some record was saved while the test's writes may alias (a
 * fake card whose writes wrap around). */
static bool writes_aliased(const struct jr_scan *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].may_alias)
			return true;
	return false;
}

/* The blocks the test saw and never wrote must read as they did: a
 * card swapped in the same reader (same serial, same size) would get
 * the journal's data otherwise.  Blocks inside a saved range are
 * skipped: the test may have written them.  So is one that holds the
 * test's own data while its writes may alias: on a fake card whose writes
 * wrap around, the capacity check's flushes land where no record
 * covers (an attack's 477 MiB period on a 1e9-byte card refused its own
 * restore, with 3 of 9 such blocks). */
static int check_fingerprint(const char *path, const struct jr_header *h,
			     const struct jr_scan *s, struct fp_dev *dev,
			     unsigned flags,
			     struct journal_restore_report *rep, char *err,
			     size_t errlen)
{
	uint32_t sector = fp_dev_sector_bytes(dev);
	uint64_t block = (JR_FP_BLOCK_BYTES + sector - 1) / sector * sector;
	unsigned char *buf = fp_dev_alloc_buf((size_t)block);
	unsigned checked = 0, differ = 0, unreadable = 0;
	bool aliased = writes_aliased(s);
	uint64_t first = 0;
	int read_error = 0;
	char why[256];

	if (buf == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->slot.nfp; i++) {
		const struct jr_fingerprint *f = &h->slot.fp[i];
		int rc;

		if (covered(s, f->offset, block))
			continue;
		checked++;
		rc = fp_dev_read_timed(dev, buf, (size_t)block, f->offset, NULL);
		if (rc == 0 && (jr_fnv1a64(buf, (size_t)block) == f->hash ||
				(aliased && util_is_test_data(buf, (size_t)block))))
			continue;
		if (rc < 0 && unreadable++ == 0)
			read_error = rc;
		if (differ++ == 0)
			first = f->offset;
	}
	free(buf);
	if (differ == 0)
		return 0;
	/* a card failing its reads is not shown to be another card */
	if (unreadable == differ)
		snprintf(why, sizeof(why), "%u of %u blocks the test did not write "
			 "cannot be read (%s; the first at byte %" PRIu64 "): the card "
			 "may be failing, and whether it is the same card cannot be "
			 "told", unreadable, checked, strerror(-read_error), first);
	else
		snprintf(why, sizeof(why), "%u of %u blocks the test did not write differ "
			 "from what it saw (the first at byte %" PRIu64 ")", differ, checked,
			 first);
	return other_card(path, dev, flags, why, unreadable == differ ? "" :
			  " (for example a fake card whose writes wrap around)", rep, err,
			  errlen);
}

/* What one sector of the device holds against what the journal saved
 * there. */
enum sector_state {
	SECTOR_SAVED,			/* what was saved */
	SECTOR_TEST,			/* a write of the test: the fill byte, or
					 * (marked) flashprobe's mark */
	SECTOR_FOREIGN,			/* neither */
};

static enum sector_state sector_state(const unsigned char *saved, const unsigned char *now,
				      size_t len, bool marked)
{
	if (memcmp(saved, now, len) == 0)
		return SECTOR_SAVED;
	if (util_is_fill(now, len) || (marked && util_is_test_block(now, len)))
		return SECTOR_TEST;
	return SECTOR_FOREIGN;
}

/* Whether each sector of dev holds what the journal saved there or the
 * fill byte the tests write: what the right card can hold in a saved
 * range, and another card (or a file copied over the image) almost never. */
static bool sample_explained(const unsigned char *saved, const unsigned char *now,
			     size_t len, uint32_t sector)
{
	for (size_t at = 0; at < len; at += sector)
		if (sector_state(saved + at, now + at, sector, false) == SECTOR_FOREIGN)
			return false;
	return true;
}

/* One sample of record e: JR_FP_BLOCK_BYTES (whole sectors) from its
 * middle, as saved and as the device reads now.  1 explained, 0 not, or
 * a negative errno from the journal. */
static int check_sample(int fd, const struct jr_entry *e, struct fp_dev *dev,
			unsigned char *saved, unsigned char *now)
{
	uint32_t sector = fp_dev_sector_bytes(dev);
	uint64_t len = (JR_FP_BLOCK_BYTES + sector - 1) / sector * sector;
	uint64_t delta = e->length / 2 / sector * sector;
	ssize_t n;

	if (len > e->length - delta)
		len = e->length - delta;
	n = util_pread_full(fd, saved, (size_t)len, e->pos + JR_REC_BYTES + delta);
	if (n < 0)
		return (int)n;
	if ((uint64_t)n < len)
		return -EIO;
	if (fp_dev_read_timed(dev, now, (size_t)len, e->offset + delta, NULL) != 0)
		return 0;
	return sample_explained(saved, now, (size_t)len, sector);
}

/* Inside what the journal saved, the device must read as saved or as the
 * tests' fill byte.  The fingerprint cannot tell another card when the
 * test saved nearly all of it (find-fat on a small card): a file of the
 * same size copied over the image, or another card in the same reader,
 * would get the journal's data and the tested card none.  Samples spread
 * over the records.  Only where every write was of the fill byte (open-au,
 * find-fat, the AU search); the capacity check's and bench's journals are
 * left to the fingerprint (and, read from the file, to
 * check_test_writes_there()). */
static int check_saved_content(int fd, const char *path, const struct jr_header *h,
			       const struct jr_scan *s, struct fp_dev *dev,
			       unsigned flags, struct journal_restore_report *rep,
			       unsigned char *saved, unsigned char *now, char *err,
			       size_t errlen)
{
	size_t nsamples = s->n < CONTENT_SAMPLES ? s->n : CONTENT_SAMPLES;
	unsigned differ = 0;
	uint64_t first = 0;
	char why[160];
	int rc;

	if (!(h->slot.flags & JR_SLOT_FILL_ONLY))
		return 0;
	for (size_t k = 0; k < nsamples; k++) {
		const struct jr_entry *e = &s->v[k * s->n / nsamples];

		rc = check_sample(fd, e, dev, saved, now);
		if (rc < 0)
			return rc;
		if (rc == 0 && differ++ == 0)
			first = e->offset;
	}
	/* one odd sample may be a worn sector; another card differs in most */
	if (differ < 2 || differ * 2 < nsamples)
		return 0;
	snprintf(why, sizeof(why), "%u of %zu places the test saved hold neither "
		 "what it saved nor what it wrote (the first at byte %" PRIu64 ")",
		 differ, nsamples, first);
	return other_card(path, dev, flags, why, "", rep, err, errlen);
}

/* What the saved ranges hold now, sector by sector. */
struct saved_tally {
	bool test_wrote;		/* a sector shows a write of the test */
	uint64_t foreign;		/* sectors holding neither that nor what
					 * was saved */
	uint64_t first;			/* the first of them */
};

/* Tallies record e piece by piece (sector_state(); a piece is the
 * smallest sector, and the tests mark every one).  A record whose device
 * range cannot be read counts as neither way: the replay reports read
 * errors. */
static int tally_record(int fd, const struct jr_entry *e, struct fp_dev *dev, bool marked,
			unsigned char *saved, unsigned char *now, struct saved_tally *t)
{
	const uint32_t piece = FP_TEST_PIECE_BYTES;
	ssize_t n = util_pread_full(fd, saved, (size_t)e->length, e->pos + JR_REC_BYTES);

	if (n < 0)
		return (int)n;
	if ((uint64_t)n < e->length)
		return -EIO;
	if (fp_dev_read_timed(dev, now, (size_t)e->length, e->offset, NULL) != 0)
		return 0;
	for (uint64_t at = 0; at + piece <= e->length; at += piece) {
		enum sector_state st = sector_state(saved + at, now + at, piece, marked);

		t->test_wrote |= st == SECTOR_TEST;
		if (st == SECTOR_FOREIGN && t->foreign++ == 0)
			t->first = e->offset + at;
	}
	return 0;
}

/* Where every write was of the fill byte or began with flashprobe's mark
 * (every test's, in journals written since the mark), the saved ranges
 * are read whole before anything is written: a sector that differs from
 * what the journal saved and shows no write of the test was written
 * after the test by someone else, and replaying the journal would put
 * the old data over it.  That is the case of a journal older than the
 * data (a copy put back after its restore, from a backup or a snapshot
 * of /var/lib; or put in place of a later run's journal) or of another
 * card; refused.  Where every piece the test wrote shows it (the fill
 * byte, or the mark at the start of each piece: journals written since
 * JR_SLOT_PIECES_MARKED), any such sector refuses (a power loss that
 * tore a write is told to --overwrite-newer: --force, which overrides
 * the checks of the card's identity, does not override this one, or a
 * user told to --force a copied image would lose what was written into
 * its area since); in older journals a marked write began with its mark
 * only, so there only a device without any write of the test refuses,
 * and the scan stops at the first one.  So it is for
 * the restore at the end of a test too (own: its journal known from
 * memory), which is no old copy: there such a sector is a worn card's
 * lost or damaged write, whose data the restore must put back, and only
 * a card swapped at the end shows no write of the test. */
static int check_test_writes_there(int fd, const char *path, const struct jr_header *h,
				   const struct jr_scan *s, bool own, struct fp_dev *dev,
				   unsigned flags, struct journal_restore_report *rep,
				   unsigned char *saved, unsigned char *now, char *err,
				   size_t errlen)
{
	bool every_piece = !own &&
			   (h->slot.flags & (JR_SLOT_FILL_ONLY | JR_SLOT_PIECES_MARKED));
	bool marked = h->slot.flags & JR_SLOT_MARKED_ONLY;
	struct saved_tally t = { false, 0, 0 };
	char why[320], f[32];

	if (!every_piece && !marked)
		return 0;
	for (size_t i = 0; i < s->n && (every_piece || !t.test_wrote); i++) {
		int rc = tally_record(fd, &s->v[i], dev, marked, saved, now, &t);

		if (rc < 0)
			return rc;
	}
	if (t.foreign == 0 || (!every_piece && t.test_wrote))
		return 0;
	if (flags & JOURNAL_RESTORE_OVERWRITE_NEWER) {
		rep->newer_overwritten = t.foreign * FP_TEST_PIECE_BYTES;
		return 0;
	}
	units_format_bytes(t.foreign * FP_TEST_PIECE_BYTES, f, sizeof(f));
	if (t.test_wrote)
		snprintf(why, sizeof(why), "%s of the places the test saved hold neither "
			 "what it saved nor what it wrote (the first at byte %" PRIu64 "): "
			 "written since by something else, torn by a power loss, or damaged "
			 "by a failing card", f,
			 t.first);
	else
		snprintf(why, sizeof(why), "none of the places the test saved shows its "
			 "writes, and %s of them hold other data than saved (the first at "
			 "byte %" PRIu64 "): written since, by something else", f, t.first);
	fp_errf(err, errlen, "'%s' holds data the journal '%s' would overwrite: %s; "
	    "nothing was restored.  If nothing wrote there since the test and this "
	    "journal is no old copy (else remove it), run 'flashprobe restore%s "
	    "--overwrite-newer %s'", fp_dev_path(dev), path, why,
	    flags & JOURNAL_RESTORE_FORCE ? " --force" : "", path);
	return -FP_EREFUSED;
}

/* The header of a journal whose own header is damaged, for --force:
 * the device's values, every record checked against them. */
static void forced_header(struct fp_dev *dev, struct jr_header *h)
{
	memset(h, 0, sizeof(*h));
	jr_identity_of_dev(dev, &h->id);
	h->record_max = JOURNAL_RECORD_MAX_BYTES;
	h->slots = JR_SLOTS_DAMAGED;
	h->slots_problem = "the header is damaged";
}

/* ---- deleting ---- */

/* Whether pointer names the journal at jabs: a pointer file (p filled)
 * or a version 1 pointer, a symbolic link (p->journal left ""). */
static bool pointer_names(const char *pointer, const char *jabs,
			  struct jr_pointer *p)
{
	char target[PATH_MAX];
	ssize_t n;

	memset(p, 0, sizeof(*p));
	if (jr_pointer_read(pointer, p) == 1)
		return strcmp(p->journal, jabs) == 0;
	memset(p, 0, sizeof(*p));
	n = readlink(pointer, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, jabs) == 0;
}

int jr_still_named(int fd, const char *path)
{
	struct stat open_one, named;

	if (stat(path, &named) != 0)
		return -errno;
	if (fstat(fd, &open_one) != 0)
		return -errno;
	return named.st_dev == open_one.st_dev && named.st_ino == open_one.st_ino ?
	       0 : -ESTALE;
}

/* The journal open as fd lost its name (deleted, or its directory moved
 * away) after it was marked spent: the pointer that names it, or names a
 * file that is gone, would tell of a lost journal whose data may be on
 * the device.  It is removed; the file, wherever it went, replays
 * nothing again. */
static void drop_pointer_of_gone(int fd, const char *pointer)
{
	struct jr_pointer p;

	if (pointer[0] == '\0' || jr_pointer_read(pointer, &p) != 1 ||
	    jr_still_named(fd, p.journal) == -ESTALE)
		return;		/* none, or another journal's */
	unlink(pointer);
	jr_fsync_dir_of(pointer);
}

int jr_delete_journal(int fd, const char *path, const char *pointer,
		      bool *marked)
{
	char jabs[PATH_MAX];
	struct jr_pointer p;
	bool ours = pointer[0] != '\0' &&
		    jr_abs_path(path, jabs, sizeof(jabs)) == 0 &&
		    pointer_names(pointer, jabs, &p);
	bool spent;
	int rc;

	/* The device is back as it was: a journal that outlives this (killed
	 * before the unlink) must not be replayed again, over what the card
	 * holds by then; one that cannot be marked cannot be unlinked
	 * either, and the caller says so.  Another file under its name (a
	 * new test's journal, made after this one was found spent and
	 * removed by another run) is left alone. */
	rc = jr_mark_spent(fd, path);
	if (marked)
		*marked = rc == 0;
	if (rc == -ESTALE)
		return rc;
	spent = rc == 0;
	rc = jr_still_named(fd, path);
	if (rc == -ENOENT && spent)
		drop_pointer_of_gone(fd, pointer);
	if (rc != 0)
		return rc;
	/* A pointer that outlives its journal (killed between the two
	 * unlinks) must not tell of a lost journal whose data may be on the
	 * device.  An empty area says "nothing there", and the next run
	 * removes it quietly. */
	if (ours && p.journal[0] != '\0') {
		p.area_lo = p.area_hi = 0;
		jr_pointer_write(pointer, &p);
	}
	if (unlink(path) != 0)
		return -errno;
	jr_fsync_dir_of(path);
	if (ours) {
		char tmp[PATH_MAX];

		unlink(pointer);
		/* left by a run killed while it replaced the pointer */
		if (jr_pointer_tmp_name(pointer, tmp, sizeof(tmp)) == 0)
			unlink(tmp);
		jr_fsync_dir_of(pointer);
	}
	return 0;
}

/* ---- restore ---- */

/* "bytes 46137344+786432, 58720256+1048576 and 3 more": the failed
 * ranges as START+LENGTH in bytes, as many as fit. */
static const char *failed_list(const struct journal_restore_report *rep,
			       char *buf, size_t len)
{
	size_t kept = rep->nfailed < JOURNAL_MAX_FAILED ? rep->nfailed :
		      JOURNAL_MAX_FAILED, n = 0, i;
	int w = snprintf(buf, len, "bytes");

	for (i = 0; i < kept && w > 0 && (size_t)w < len; i++) {
		char one[48];
		int k = snprintf(one, sizeof(one), "%s %" PRIu64 "+%" PRIu64,
				 i ? "," : "", rep->failed[i].offset_bytes,
				 rep->failed[i].length_bytes);

		if ((size_t)w + (size_t)k + sizeof(" and 99999 more") > len)
			break;
		memcpy(buf + w, one, (size_t)k + 1);
		w += k;
		n++;
	}
	if (n < rep->nfailed && w > 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, " and %zu more", rep->nfailed - n);
	return buf;
}

/* Deletes a replayed (or spent, or never committed) journal unless it
 * is to be kept, and records how that went. */
static void delete_replayed(int fd, const char *path, const struct jr_header *h,
			    unsigned flags, struct journal_restore_report *rep)
{
	if (flags & JOURNAL_RESTORE_KEEP)
		return;
	rep->delete_error = jr_delete_journal(fd, path, h->link, &rep->marked_spent);
	rep->deleted = rep->delete_error == 0;
}

/* When running the restore again can finish it. */
static const char *retry_when(int error, const struct fp_dev *dev)
{
	if (error == -EFBIG)
		return "without the file size limit (ulimit -f) that stopped it";
	if (error == -ENOSPC || error == -EDQUOT)
		return "when its file system has space again";
	return fp_dev_kind(dev) == FP_DEV_FILE ? "when the image takes writes again" :
						  "when the card takes writes again";
}

/* The outcome, as errno and one line: anything left undone keeps the
 * journal and is an error, so that no partial restore looks like a
 * success. */
static int restore_outcome(int fd, const char *path, struct fp_dev *dev,
			   const struct jr_header *h, const struct jr_scan *s,
			   bool header_changed, unsigned flags,
			   struct journal_restore_report *rep, char *err,
			   size_t errlen)
{
	const struct journal_range *f = &rep->failed[0];
	char a[32], b[32], list[200];

	if (rep->nfailed > 0) {
		fp_errf(err, errlen, "cannot restore %" PRIu64 " bytes in %zu "
		    "range(s) of '%s' (%s): %s; journal '%s' is kept: run "
		    "'flashprobe restore %s' %s",
		    rep->failed_bytes, rep->nfailed, fp_dev_path(dev),
		    f->error == -EILSEQ ? "the card reads back something else than "
		    "was written" : strerror(-f->error),
		    failed_list(rep, list, sizeof(list)),
		    path, path, retry_when(f->error, dev));
		return f->error;
	}
	if (rep->damaged) {
		if (h->slots == JR_SLOTS_OK)
			fp_errf(err, errlen, "replayed the %zu intact records of "
			    "damaged journal '%s'; %" PRIu64 " of the %" PRIu64
			    " it commits are missing, so bytes %s to %s of '%s' "
			    "may still hold test data; the journal is kept",
			    s->n, path, rep->missing_records,
			    rep->committed_records,
			    units_format_bytes(rep->area_lo, a, sizeof(a)),
			    units_format_bytes(rep->area_hi, b, sizeof(b)),
			    fp_dev_path(dev));
		else
			fp_errf(err, errlen, "replayed the %zu intact records of "
			    "damaged journal '%s', but its header no longer says "
			    "how many it commits: '%s' may still hold test data; "
			    "the journal is kept", s->n, path, fp_dev_path(dev));
		return -EBADMSG;
	}
	if (header_changed) {
		/* restored from the commits held in memory, but whatever
		 * changed the file may have changed more: keep it */
		fp_errf(err, errlen, "restored and verified the %zu records this "
		    "test committed onto '%s', but the commit slots of journal "
		    "'%s' were changed while the test ran (they no longer say "
		    "what it committed); the journal is kept", s->n,
		    fp_dev_path(dev), path);
		return -EBADMSG;
	}
	delete_replayed(fd, path, h, flags, rep);
	return 0;
}

/* Header, slots and records checked: 0 to replay what s holds, 1 when
 * there is nothing to replay, or a refusal. */
static int check_records(int fd, const char *path, const struct jr_header *h,
			 bool known, unsigned flags, void *buf,
			 struct jr_scan *s, struct journal_restore_report *rep,
			 char *err, size_t errlen)
{
	uint64_t commits = 0;
	int rc = 0;

	rep->committed_records = h->slot.ndata;
	rep->area_lo = h->slot.area_lo;
	rep->area_hi = h->slot.area_hi;
	if (h->slots == JR_SLOTS_OK)
		rc = scan_committed(fd, h, buf, s);
	else if (h->slots == JR_SLOTS_DAMAGED)
		rc = scan_damaged(s, 0, h->slots_problem);
	/* the slots of a journal this process wrote are taken from memory:
	 * nothing after them was committed */
	if (rc == 0 && !s->damaged && !known)
		rc = scan_beyond(fd, h, buf, s, &commits);
	if (rc == 0 && !s->damaged && h->slots == JR_SLOTS_NONE &&
	    commits == 0) {
		rep->nothing_written = true;
		return 1;
	}
	if (rc < 0) {
		fp_errf(err, errlen, "cannot read journal '%s': %s", path,
		    strerror(-rc));
		return rc;
	}
	if (!s->damaged) {
		rep->committed_records = s->n;
		return 0;
	}
	snprintf(rep->note, sizeof(rep->note), "journal damaged at byte %"
		 PRIu64 ": %s", s->problem_at, s->problem);
	if (!(flags & JOURNAL_RESTORE_FORCE)) {
		fp_errf(err, errlen, "journal '%s' is damaged at byte %" PRIu64
		    " (%s); nothing was restored and the journal is kept: the "
		    "device may hold test data in the records it lacks; "
		    "'flashprobe restore --force' replays every intact record",
		    path, s->problem_at, s->problem);
		return -EBADMSG;
	}
	rep->damaged = true;
	scan_free(s);
	rc = scan_everything(fd, h, buf, s);
	s->damaged = true;
	if (h->slots == JR_SLOTS_OK && s->n < h->slot.ndata)
		rep->missing_records = h->slot.ndata - s->n;
	return rc;
}

/* The restore at the end of a test: what this process committed, as it
 * holds it, is the truth, not what the file's slots say now.  Whether the
 * file's newest slot says the same (it does unless someone changed it
 * while the test ran). */
static bool take_known_slot(struct jr_header *h, const struct jr_slot *known)
{
	const struct jr_slot *f = &h->slot;
	bool same = known->gen == 0 ? h->slots == JR_SLOTS_NONE :
		    h->slots == JR_SLOTS_OK && f->gen == known->gen &&
		    f->records == known->records && f->ndata == known->ndata &&
		    f->data_bytes == known->data_bytes && f->end == known->end;

	h->slots = known->gen == 0 ? JR_SLOTS_NONE : JR_SLOTS_OK;
	h->slot = *known;
	return same;
}

int jr_restore_locked(int fd, const char *path, struct fp_dev *dev,
		      const struct jr_slot *known, unsigned flags,
		      fp_progress_fn progress, void *progress_arg,
		      struct journal_restore_report *rep, char *err,
		      size_t errlen)
{
	struct jr_header h;
	struct jr_scan s = { 0 };
	void *buf = NULL, *vbuf = NULL;
	bool header_changed = false;
	int rc;

	memset(rep, 0, sizeof(*rep));
	rc = jr_header_parse(fd, path, &h, err, errlen);
	if (rc == -EBADMSG && (flags & JOURNAL_RESTORE_FORCE)) {
		forced_header(dev, &h);
		rc = 0;
	}
	if (rc == 0 && h.spent && known == NULL) {
		/* its data went back and was verified: once more would undo
		 * whatever was written to the card since (a test's own journal
		 * is never spent: a mark there is not its own, and ignored) */
		rep->spent = true;
		delete_replayed(fd, path, &h, flags, rep);
		return 0;
	}
	if (rc == 0)
		rc = check_identity(path, &h, dev, flags, rep, err, errlen);
	if (rc < 0)
		return rc;
	if (known != NULL)
		header_changed = !take_known_slot(&h, known);
	buf = fp_dev_alloc_buf(h.record_max);
	vbuf = fp_dev_alloc_buf(h.record_max);
	rc = buf != NULL && vbuf != NULL ?
	     check_records(fd, path, &h, known != NULL, flags, buf, &s, rep,
			   err, errlen) :
	     -ENOMEM;
	if (rc == 1) {
		/* no commit: the test never wrote the device */
		rc = 0;
		delete_replayed(fd, path, &h, flags, rep);
		goto out;
	}
	/* is it the journal's card? */
	if (rc == 0 && h.slots == JR_SLOTS_OK &&
	    !(flags & JOURNAL_RESTORE_SAME_DEVICE)) {
		rc = check_fingerprint(path, &h, &s, dev, flags, rep, err,
				       errlen);
		if (rc == 0)
			rc = check_saved_content(fd, path, &h, &s, dev, flags, rep,
						 buf, vbuf, err, errlen);
		if (rc == 0)
			rc = check_test_writes_there(fd, path, &h, &s, known != NULL, dev,
						     flags, rep, buf, vbuf, err, errlen);
	}
	for (size_t i = 0; rc == 0 && (flags & JOURNAL_RESTORE_NO_ALIAS) && i < s.n; i++)
		s.v[i].may_alias = false;
	if (rc == 0)
		rc = replay_all(fd, &h, &s, dev, progress, progress_arg, rep,
				buf, vbuf);
	if (rc == 0)
		rc = restore_outcome(fd, path, dev, &h, &s, header_changed, flags,
				     rep, err, errlen);
	else if (!err[0])
		fp_errf(err, errlen, "cannot read journal '%s': %s", path,
		    strerror(-rc));
out:
	scan_free(&s);
	free(buf);
	free(vbuf);
	return rc;
}

/* A lost journal: what the pointer says may be left on the device. */
static int lost_journal(const char *pointer, const struct jr_pointer *p,
			char *err, size_t errlen)
{
	char a[32], b[32];

	fp_errf(err, errlen, "the journal of the last test is lost ('%s' no "
	    "longer exists): '%s' may hold test data in bytes %s to %s.  If "
	    "that data does not matter or was restored another way, remove "
	    "'%s' to test again", p->journal, p->device,
	    units_format_bytes(p->area_lo, a, sizeof(a)),
	    units_format_bytes(p->area_hi, b, sizeof(b)), pointer);
	return -FP_ELOST;
}

/* The journal a path names: itself, or what its pointer file names. */
static int resolve(const char *path, char *out, size_t len, char *err,
		   size_t errlen)
{
	struct jr_pointer p;
	char real[PATH_MAX];
	int rc;

	/* a version 1 pointer was a symbolic link */
	if (realpath(path, real) != NULL)
		path = real;
	rc = jr_pointer_read(path, &p);
	if (rc == -EBADMSG) {
		fp_errf(err, errlen, "journal pointer '%s' is damaged", path);
		return rc;
	}
	if (rc == 1 && access(p.journal, F_OK) != 0)
		return lost_journal(path, &p, err, errlen);
	util_copy_str(out, len, rc == 1 ? p.journal : path);
	return 0;
}

/* The lock after another restore of the journal open on fd: 0, or
 * -ENOENT when that restore deleted it (the name leads to it no more). */
static int waited_for_restore(int fd, const char *path)
{
	/* a Ctrl-C before the wait began (a slow start) would otherwise be
	 * noticed only after the other restore ends */
	if (safety_interrupted())
		return -EINTR;
	if (flock(fd, LOCK_EX) != 0)
		return -errno;
	return jr_still_named(fd, path) == 0 ? 0 : -ENOENT;
}

/* Take the journal's lock without waiting, as a running test holds it
 * for its whole session: 0, -FP_EREFUSED with the holder in *u (pid 0
 * when it cannot be seen), or -errno. */
static int lock_journal(int fd, struct procfd_user *u)
{
	struct stat st;

	memset(u, 0, sizeof(*u));
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	if (fstat(fd, &st) != 0 || procfd_find_user(&st, false, u) != 1)
		memset(u, 0, sizeof(*u));
	return -FP_EREFUSED;
}

static void describe_holder(const struct procfd_user *u, char *who, size_t wholen)
{
	if (u->pid > 0)
		procfd_describe(u, who, wholen);
	else
		snprintf(who, wholen, "another flashprobe");
}

/* Whether the open journal file is the image under test itself (a link
 * planted at a journal's name): its lock, taken by the device's open,
 * would read as a running test's. */
static bool journal_is_device(int fd, struct fp_dev *dev)
{
	struct stat j, d;

	return fstat(fd, &j) == 0 && stat(fp_dev_path(dev), &d) == 0 &&
	       j.st_dev == d.st_dev && j.st_ino == d.st_ino;
}

int journal_restore(const char *journal_path, struct fp_dev *dev,
		    unsigned flags, fp_progress_fn progress,
		    void *progress_arg, struct journal_restore_report *rep,
		    char *err, size_t errlen)
{
	char path[PATH_MAX], who[64];
	struct procfd_user holder;
	int fd = -1, rc;

	memset(rep, 0, sizeof(*rep));
	if (journal_path == NULL || dev == NULL)
		return -EINVAL;
	rc = resolve(journal_path, path, sizeof(path), err, errlen);
	if (rc == 0)
		rc = jr_open_trusted(path, O_RDONLY, &fd, err, errlen);
	if (rc < 0)
		return rc;
	if (journal_is_device(fd, dev)) {
		fp_errf(err, errlen, "journal '%s' is the device under test "
		    "itself (a link to it at a journal's name?), not a journal; "
		    "nothing was restored: remove that link", path);
		close(fd);
		return -FP_EREFUSED;
	}
	rc = lock_journal(fd, &holder);
	/* another restore holds it only while it replays, which always
	 * finishes: wait, then find the journal spent, gone, or kept after a
	 * failure (and replay it here) */
	if (rc == -FP_EREFUSED && holder.pid > 0 &&
	    procfd_runs_command(holder.pid, "restore"))
		rc = waited_for_restore(fd, path);
	describe_holder(&holder, who, sizeof(who));
	if (rc == -FP_EREFUSED)
		fp_errf(err, errlen, "journal '%s' is held by a flashprobe test "
		    "that is still running (%s); it restores the device itself "
		    "when it ends (Ctrl-C stops it and restores at once)", path,
		    who);
	else if (rc == -ENOENT)
		fp_errf(err, errlen, "journal '%s' was replayed and deleted by "
		    "another flashprobe restore meanwhile", path);
	else if (rc == -EINTR)
		fp_errf(err, errlen, "stopped waiting for the other flashprobe "
		    "restore of journal '%s' (%s); nothing was written", path, who);
	else if (rc < 0)
		fp_errf(err, errlen, "cannot lock journal '%s': %s", path,
		    strerror(-rc));
	if (rc < 0) {
		close(fd);
		return rc;
	}
	rc = jr_restore_locked(fd, path, dev, NULL, flags, progress, progress_arg,
			       rep, err, errlen);
	close(fd);
	return rc;
}

/* ---- finding journals ---- */

/* What journal_find_pending() looks for: the device's identity, its node
 * (for journals of other names over the same data) and the name its own
 * journal has. */
struct pending_query {
	struct jr_identity want;
	struct stat node;
	char own_name[NAME_MAX + 1];
};

/* A spent journal (replayed and verified, its deletion cut short) is no
 * test's: removed unless a run holds it (it is deleting it), and only
 * the file that was read spent and is locked here. */
static bool spent_removed(const char *path, const struct jr_header *h)
{
	struct jr_header now;
	int fd;

	if (!h->spent)
		return false;
	if (jr_header_read(path, false, &fd, &now, NULL, 0) != 0)
		return true;
	if (now.spent && flock(fd, LOCK_EX | LOCK_NB) == 0)
		jr_delete_journal(fd, path, now.link, NULL);
	close(fd);
	return true;
}

/* The regular file behind an identity (an image, or a loop device's
 * file): its device, inode and birth; false for anything else. */
static bool file_behind(const struct jr_identity *id, struct stat *st,
			uint64_t *birth_ns)
{
	*birth_ns = id->file_birth_ns;
	if (id->kind == FP_DEV_FILE) {
		st->st_dev = (dev_t)id->file_dev;
		st->st_ino = (ino_t)id->file_ino;
		return true;
	}
	return id->kind == FP_DEV_BLOCK &&
	       loopfile_serial_node(id->serial, st) == 1 && S_ISREG(st->st_mode);
}

/* The journal's file and the device's (or the file behind either loop
 * device) have one inode number but were made at different times: the
 * journal's was deleted and its number given to a new file, which shares
 * nothing with it. */
static bool reborn_inode(const struct jr_identity *journal,
			 const struct jr_identity *device)
{
	struct stat a, b;
	uint64_t ba, bb;

	return file_behind(journal, &a, &ba) && file_behind(device, &b, &bb) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino && ba != 0 &&
	       bb != 0 && ba != bb;
}

/* JOURNAL_PENDING_ALIAS when the journal in h is of another node that
 * reaches the device's data, else whether it is the device's own. */
static int pending_match(const struct jr_header *h,
			 const struct pending_query *q)
{
	if (jr_same_device(&h->id, &q->want))
		return JOURNAL_PENDING_OWN;
	if (reborn_inode(&h->id, &q->want))
		return 0;
	return jr_shares_data(&h->id, &q->node) ? JOURNAL_PENDING_ALIAS : 0;
}

/* A pointer file in the state directory: a match (above) with the journal
 * it names, 0 when that is another device's, or a stale pointer removed
 * (it never covered anything, so nothing was written), -FP_ELOST when the
 * journal is gone. */
static int pending_pointer(const char *path, const struct jr_pointer *p,
			   const struct pending_query *q, bool own,
			   char *found, size_t foundlen, char *err,
			   size_t errlen)
{
	struct jr_header h;
	int fd, hit;

	if (jr_header_read(p->journal, false, &fd, &h, NULL, 0) == 0) {
		close(fd);
		if (spent_removed(p->journal, &h))
			return 0;
		hit = pending_match(&h, q);
		if (hit)
			util_copy_str(found, foundlen, p->journal);
		return hit;
	}
	if (access(p->journal, F_OK) == 0) {
		/* there but unreadable: it may be ours, never test over it
		 * (found only then: it may hold another directory's match) */
		if (own)
			util_copy_str(found, foundlen, p->journal);
		return own;
	}
	if (!own)
		return 0;
	if (p->area_lo == p->area_hi) {
		/* locked: a test is creating the journal it names */
		if (!journal_in_use(path, NULL, 0))
			unlink(path);
		return 0;
	}
	return lost_journal(path, p, err, errlen);
}

/* The journal named after this device belongs to another one: a card
 * swapped after a crash, or an image file replaced.  Neither "nothing to
 * restore" (its card still holds test data) nor a new test (the name is
 * taken) would be right. */
static int foreign_journal(const char *path, const struct jr_header *h,
			   const struct jr_identity *want, char *err,
			   size_t errlen)
{
	char diff[3 * PATH_MAX + 256];

	if (other_window(&h->id, want, diff, sizeof(diff))) {
		fp_errf(err, errlen, "the unfinished journal '%s' named after '%s': "
		    "%s; nothing was written", path, want->path, diff);
		return -FP_EREFUSED;
	}
	jr_identity_difference(&h->id, want, diff, sizeof(diff));
	fp_errf(err, errlen, "the unfinished journal '%s' named after '%s' was "
	    "made on another card or file (%s): nothing was written.  Put that "
	    "card back and run 'flashprobe restore %s' ('restore --force' if "
	    "this is a copy of it), or move the journal away if its data no "
	    "longer matters", path, want->path, diff, path);
	return -FP_EREFUSED;
}

/* Whether dir/name is a journal of the query's device, directly or through
 * a pointer; its real path into found.  A match (JOURNAL_PENDING_OWN or
 * _ALIAS), 0, -FP_ELOST, or -FP_EREFUSED when the device's own name holds
 * another device's journal (its path in found, for restore --force). */
static int pending_in(const char *dir, const char *name,
		      const struct pending_query *q, char *found,
		      size_t foundlen, char *err, size_t errlen)
{
	char path[PATH_MAX], real[PATH_MAX];
	bool own = strcmp(name, q->own_name) == 0;
	struct jr_pointer p;
	struct jr_header h;
	int fd, rc, hit;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return 0;
	rc = jr_pointer_read(path, &p);
	if (rc == 1)
		return pending_pointer(path, &p, q, own, found, foundlen, err,
				       errlen);
	if (jr_header_read(path, false, &fd, &h, NULL, 0) == 0) {
		close(fd);
		if (spent_removed(path, &h))
			return 0;
		hit = pending_match(&h, q);
		if (hit != JOURNAL_PENDING_OWN && own) {
			snprintf(found, foundlen, "%s",
				 realpath(path, real) != NULL ? real : path);
			return foreign_journal(path, &h, &q->want, err, errlen);
		}
	} else {
		/* Unreadable but named after this device: it may be ours. */
		hit = own && access(path, F_OK) == 0;
	}
	if (hit)
		snprintf(found, foundlen, "%s",
			 realpath(path, real) != NULL ? real : path);
	return hit;
}

/* The device's own journal first; another device's under its name, then
 * one of another node over the same data, only when it has none. */
static int pending_dir(const char *dir, const struct pending_query *q,
		       char *found, size_t foundlen, char *err, size_t errlen)
{
	char alias[PATH_MAX] = "";
	struct dirent *e;
	int hit = 0, foreign = 0;
	DIR *d = opendir(dir);

	if (d == NULL)
		return errno == ENOENT || errno == EACCES ? 0 : -errno;
	while (hit == 0 && (e = readdir(d)) != NULL) {
		if (jr_is_journal_name(e->d_name))
			hit = pending_in(dir, e->d_name, q, found, foundlen, err,
					 errlen);
		if (hit == -FP_EREFUSED) {
			foreign = hit;
			hit = 0;
		} else if (hit == JOURNAL_PENDING_ALIAS && alias[0] == '\0') {
			util_copy_str(alias, sizeof(alias), found);
			hit = 0;
		} else if (hit == JOURNAL_PENDING_ALIAS) {
			hit = 0;
		}
	}
	closedir(d);
	if (hit || foreign || alias[0] == '\0')
		return hit ? hit : foreign;
	util_copy_str(found, foundlen, alias);
	return JOURNAL_PENDING_ALIAS;
}

size_t journal_state_dirs(const char *dirs[JOURNAL_STATE_DIRS_MAX])
{
	const char *env = getenv(JOURNAL_STATE_ENV);
	const char *defaults[2];
	size_t ndefaults = jr_default_dirs(defaults), n = 0;

	/* FLASHPROBE_STATE_DIR first, then the default places too: a journal
	 * left by a run without it is still found (and blocks new tests) */
	if (env != NULL && env[0] != '\0') {
		bool listed = false;

		for (size_t i = 0; i < ndefaults; i++)
			listed |= jr_same_dir(env, defaults[i]);
		if (!listed)
			dirs[n++] = env;
	}
	for (size_t i = 0; i < ndefaults; i++)
		dirs[n++] = defaults[i];
	return n;
}

int journal_find_pending(const char *device, char *found, size_t foundlen,
			 char *err, size_t errlen)
{
	const char *dirs[JOURNAL_STATE_DIRS_MAX];
	size_t ndirs = journal_state_dirs(dirs), i;
	struct pending_query q;
	int rc = 0, hit = 0;

	if (device == NULL || found == NULL)
		return -EINVAL;
	found[0] = '\0';
	if (devspec_is_sim(device))
		return 0;
	rc = jr_identity_of_path(device, &q.want);
	if (rc == 0 && stat(device, &q.node) != 0)
		rc = -errno;
	if (rc == 0)
		rc = jr_default_name(device, q.own_name, sizeof(q.own_name));
	if (rc < 0) {
		fp_errf(err, errlen, "cannot open '%s': %s", device, strerror(-rc));
		return rc;
	}
	/* an alias's journal (found stays on it) unless the next directory
	 * holds the device's own */
	for (i = 0; i < ndirs; i++) {
		rc = pending_dir(dirs[i], &q, found, foundlen, err, errlen);
		if (rc == JOURNAL_PENDING_ALIAS)
			hit = rc;
		else if (rc != 0)
			break;
	}
	if (rc < 0 && rc != -FP_ELOST && rc != -FP_EREFUSED)
		fp_errf(err, errlen, "cannot look for journals in '%s': %s",
		    dirs[i], strerror(-rc));
	/* none of its own: a journal whose image is gone may be this
	 * device's all the same, the image moved */
	if (rc == 0 && hit == 0)
		return jr_find_orphan(device, found, foundlen, err, errlen);
	return rc == 0 || rc == JOURNAL_PENDING_ALIAS ? hit : rc;
}

int journal_device_of(const char *journal_path, char *device, size_t len,
		      char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct jr_header h;
	int fd, rc = resolve(journal_path, path, sizeof(path), err, errlen);

	if (rc == -FP_ELOST) {
		struct jr_pointer p;

		/* the device is known even though its journal is gone */
		if (jr_pointer_read(journal_path, &p) == 1)
			util_copy_str(device, len, p.device);
		return rc;
	}
	if (rc == 0)
		rc = jr_header_read(path, false, &fd, &h, err, errlen);
	if (rc < 0)
		return rc;
	close(fd);
	snprintf(device, len, "%s", h.id.path);
	return 0;
}

int journal_loop_gone(const char *journal, char *buf, size_t len)
{
	char advice[2 * PATH_MAX + 256];
	struct jr_identity now;
	struct jr_header h;
	int fd;

	if (jr_header_read(journal, false, &fd, &h, NULL, 0) != 0)
		return 0;
	close(fd);
	if (h.id.kind != FP_DEV_BLOCK || strncmp(h.id.serial, "loop", 4) != 0)
		return 0;
	/* detached, it has no serial; over another file, another one */
	if (jr_identity_of_path(h.id.path, &now) == 0 && now.serial[0] != '\0' &&
	    jr_same_device(&h.id, &now))
		return 0;
	reattach_advice(h.id.serial, advice, sizeof(advice));
	snprintf(buf, len, "loop device '%s' no longer shows the data journal "
		 "'%s' saved (detached?): %s", h.id.path, journal, advice);
	return 1;
}

void journal_describe_alias(const char *device, const char *journal,
			    char *buf, size_t len)
{
	char other[PATH_MAX] = "?", who[64];

	journal_device_of(journal, other, sizeof(other), NULL, 0);
	if (journal_loop_gone(journal, buf, len))
		return;
	if (journal_in_use(journal, who, sizeof(who)))
		snprintf(buf, len, "'%s' shares its data with '%s', which %s is "
			 "testing now (journal '%s'): wait for it to finish; it puts "
			 "the data back itself", device, other, who, journal);
	else
		snprintf(buf, len, "'%s' shares its data with '%s', whose test left "
			 "the unfinished journal '%s': run 'flashprobe restore %s'",
			 device, other, journal, journal);
}

bool journal_in_use(const char *path, char *who, size_t wholen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct procfd_user u;
	bool held;

	if (fd < 0)
		return false;
	held = lock_journal(fd, &u) == -FP_EREFUSED;
	if (held)
		describe_holder(&u, who, wholen);
	close(fd);	/* also drops the lock if it was taken */
	return held;
}

bool journal_is_journal_fd(int fd)
{
	char magic[sizeof(JR_POINTER_MAGIC)];
	ssize_t n = util_pread_full(fd, magic, sizeof(magic) - 1, 0);

	return (n >= 8 && memcmp(magic, JOURNAL_MAGIC, 8) == 0) ||
	       (n == (ssize_t)sizeof(magic) - 1 &&
		memcmp(magic, JR_POINTER_MAGIC, sizeof(magic) - 1) == 0);
}

bool journal_is_journal_file(const char *path)
{
	struct stat st;
	bool is;
	int fd;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	is = journal_is_journal_fd(fd);
	close(fd);
	return is;
}
