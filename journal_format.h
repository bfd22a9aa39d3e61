/* journal_format.h - the journal's on-disk format and the file helpers that
 * journal.c (writing) and journal_replay.c (reading) share.  Internal to
 * the journal: everyone else uses journal.h.
 *
 * File layout, version 2 (little-endian):
 *   0     static header, 2048 bytes, written once: magic "FPJOURNL",
 *         version, header length, device identity (kind, sector size,
 *         size, device number or file dev/inode, path, serial/CID/WWID or
 *         loop backing file), creation time, largest record, pointer
 *         path, a regular file's birth time (0 in journals written before
 *         it was recorded: then unknown); CRC32C of the rest in its last
 *         4 bytes.
 *   2048  commit slot A, 512 bytes \  rewritten at every commit, the two
 *   2560  commit slot B, 512 bytes /  alternating, each with its own CRC
 *   3072  zero up to 4096, but for the "spent" mark: JR_SPENT_MAGIC
 *         written (and fsync'ed) here once the journal was replayed and
 *         verified, before it is deleted
 *   4096  records: a 40-byte header (magic "FPJR", type, sequence number,
 *         offset, length, CRC32C of the data, CRC32C of the header),
 *         then the data of a data record.
 *
 * A commit slot says what is durable: how many records, data records and
 * data bytes the journal commits and where in the file they end, the hull
 * of the device ranges the test may write, and a fingerprint of a few
 * device blocks outside them.  It is written (and fsync'ed) after the
 * records it counts and before the device is written, so on replay every
 * committed record must be there and intact: a journal cut short or
 * damaged inside its committed part is refused, never replayed partly.
 * Records after the committed end were never allowed to reach the device.
 * The slots alternate so that a write torn by a power loss leaves the
 * previous one; each slot lives in its own 512-byte sector.  Generation
 * g goes to slot g % 2, so an empty slot beside generation 2 or later, or
 * two generations not one apart, is damage; so are two or more intact
 * COMMIT records past what the slots count (a crash leaves at most one:
 * its slot was never written, and neither were its device ranges).
 */
#ifndef FLASHPROBE_JOURNAL_FORMAT_H
#define FLASHPROBE_JOURNAL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "journal.h"

struct fp_dev;

#define JR_VERSION 2u
#define JR_HEADER_BYTES 4096u		/* static header, slots, spare */
#define JR_STATIC_BYTES 2048u
#define JR_SLOT_BYTES 512u
#define JR_SLOT_OFFSET(gen) (JR_STATIC_BYTES + ((gen) % 2) * JR_SLOT_BYTES)
#define JR_REC_BYTES 40u
#define JR_REC_MAGIC 0x524a5046u	/* "FPJR" */
#define JR_REC_DATA 1u
#define JR_REC_COMMIT 2u
/* On disk only: a data record saved while the test's writes may alias
 * (journal_writes_may_alias()); decoded as JR_REC_DATA with may_alias. */
#define JR_REC_DATA_MAY_ALIAS 3u
#define JR_PATH_MAX 1024
#define JR_SERIAL_MAX 256
#define JR_LINK_MAX 512
#define JR_FP_MAX 16			/* fingerprint blocks */
#define JR_FP_BLOCK_BYTES 4096u
#define JR_POINTER_MAGIC "FPPOINTER 2\n"
#define JR_SPENT_OFFSET 3072u
#define JR_SPENT_MAGIC "FPSPENT1"		/* 8 bytes, no terminator */

/* What identifies the device a journal belongs to. */
struct jr_identity {
	uint32_t kind;			/* enum fp_dev_kind */
	uint32_t sector_bytes;
	uint64_t size_bytes;
	uint32_t major, minor;		/* block devices */
	uint64_t file_dev, file_ino;	/* regular files */
	uint64_t file_birth_ns;		/* a file's (a loop device's file's)
					 * birth, 0: unknown */
	char path[JR_PATH_MAX];
	char serial[JR_SERIAL_MAX];	/* serial, CID, WWID, loop file */
};

/* One block of the device outside the test's ranges, as it was before
 * the test: a different card in the same reader will not match. */
struct jr_fingerprint {
	uint64_t offset;
	uint64_t hash;			/* FNV-1a 64 of JR_FP_BLOCK_BYTES */
};

struct jr_slot {
	uint64_t gen;			/* 0: no commit yet */
	uint64_t records;		/* all records, commits included */
	uint64_t ndata, data_bytes;	/* data records and their bytes */
	uint64_t end;			/* file offset after the last one */
	uint64_t area_lo, area_hi;	/* hull of what the test may write */
	uint32_t nfp;
	struct jr_fingerprint fp[JR_FP_MAX];
	uint32_t flags;			/* JR_SLOT_* */
};

/* Every write so far was of the fill byte (FP_FILL_BYTE): a saved range
 * then reads as saved or as that byte on the right card.  Cleared (and
 * committed) before the first other write: the capacity check's blocks,
 * bench's data.  0 in journals written before the flag. */
#define JR_SLOT_FILL_ONLY 1u
/* Every write so far was of the fill byte or began with flashprobe's
 * mark (FP_TEST_BLOCK_MAGIC: the capacity check's blocks, bench's
 * writes): a place the test wrote then shows it.  Cleared (and committed)
 * before the first other write.  0 in journals written before the flag. */
#define JR_SLOT_MARKED_ONLY 2u
/* Every write so far was whole pieces (FP_TEST_PIECE_BYTES, at offsets
 * of that size), each of the fill byte or beginning with the mark: every
 * sector the test wrote then shows it, not only a write's first.  0 in
 * journals written before the flag, whose marked writes showed the mark
 * at their start only. */
#define JR_SLOT_PIECES_MARKED 4u

enum jr_slots_state {
	JR_SLOTS_NONE,			/* never committed: nothing written */
	JR_SLOTS_OK,
	JR_SLOTS_DAMAGED,		/* a slot fails its checks */
};

struct jr_header {
	struct jr_identity id;
	uint64_t created_unix;
	uint32_t record_max;
	char link[JR_LINK_MAX];		/* pointer file, or "" */
	/* from the commit slots (header_read) */
	enum jr_slots_state slots;
	struct jr_slot slot;		/* the newest valid one */
	bool spent;			/* replayed and verified: delete it */
	const char *slots_problem;	/* JR_SLOTS_DAMAGED: why */
};

struct jr_record {
	uint32_t type;
	uint64_t seq;
	uint64_t offset;		/* commit: number of data records */
	uint64_t length;		/* commit: their total bytes */
	uint32_t data_crc;
	bool may_alias;			/* data: saved while the writes may alias */
};

/* ---- encoding ---- */
uint32_t jr_crc32c(const void *p, size_t n);
uint64_t jr_fnv1a64(const void *p, size_t n);
void jr_static_encode(const struct jr_header *h, unsigned char *b);
void jr_slot_encode(const struct jr_slot *s, unsigned char *b);
void jr_record_encode(const struct jr_record *r, unsigned char *b);
bool jr_record_decode(const unsigned char *b, struct jr_record *r);

/* Whether a directory entry's name is a journal's or a pointer's. */
bool jr_is_journal_name(const char *name);

/* An unfinished journal whose device (an image, or a loop device's file)
 * is gone from its path and whose fingerprinted data the device at path
 * device holds: -FP_EREFUSED with its path in found and the reason in err
 * (journal_orphan.c), else 0. */
int jr_find_orphan(const char *device, char *found, size_t foundlen,
		   char *err, size_t errlen);

/* Marks the journal at path spent (durably): its data is back on the
 * device.  Done before it is deleted, so that a run killed between the
 * two does not leave a journal that a later restore would replay again,
 * over whatever the card holds by then.  Through fd when it is open for
 * writing (a test's own journal: the file itself, wherever its name
 * went); else only when path still names the file open as fd (the one
 * the caller checked and locked): -ESTALE when another file took its
 * name.  0 or a negative errno. */
int jr_mark_spent(int fd, const char *path);

/* Open a journal (O_RDWR when writable, else read-only) after checking
 * that it is a regular file of ours that nobody else may write, and read
 * its header and commit slots.  A damaged static header is -EBADMSG;
 * damaged slots only set h->slots.  err names the file. */
int jr_header_read(const char *path, bool writable, int *fdp,
		   struct jr_header *h, char *err, size_t errlen);
/* The same on an open journal file. */
int jr_header_parse(int fd, const char *path, struct jr_header *h,
		    char *err, size_t errlen);

/* ---- files ---- */
int jr_fsync_dir_of(const char *path);
int jr_abs_path(const char *path, char *out, size_t len);
/* The default places, first choice first: /var/lib/flashprobe, then
 * /var/tmp (or the test suite's FLASHPROBE_TEST_DEFAULT_DIR alone). */
size_t jr_default_dirs(const char *dirs[2]);
/* Whether a and b name one directory (a trailing slash, a symbolic link):
 * looked in twice, its journals would count twice. */
bool jr_same_dir(const char *a, const char *b);
/* Create path holding exactly buf[0..n), it and its directory entry
 * fsync'ed, and return its descriptor, locked (flock LOCK_EX) until
 * closed; -EEXIST when path exists, else -errno.  A kill at any moment
 * leaves the file whole or absent where the file system has O_TMPFILE
 * (ext4, xfs, btrfs, f2fs, tmpfs); elsewhere perhaps empty. */
int jr_create_whole(const char *path, const void *buf, size_t n);
/* open() path, trusting only a regular file of this user (or root) that
 * nobody else may write: -FP_EREFUSED otherwise. */
int jr_open_trusted(const char *path, int flags, int *fdp, char *err,
		    size_t errlen);

/* ---- identity ---- */
int jr_identity_of_path(const char *path, struct jr_identity *id);
int jr_identity_of_dev(struct fp_dev *d, struct jr_identity *id);
bool jr_same_device(const struct jr_identity *a, const struct jr_identity *b);
/* Whether the journal's device (id) and the node st reach the same data
 * through different names: a loop device and its image file, two loop
 * devices over one file, a disk without a serial and its partition.
 * Writing one of them changes what the journal saved of the other. */
struct stat;
bool jr_shares_data(const struct jr_identity *id, const struct stat *st);
/* "" when a and b are the same device of the same size, else what
 * differs, in words ("its inode is 12 now, the journal's is 11"). */
void jr_identity_difference(const struct jr_identity *want,
			    const struct jr_identity *have, char *buf,
			    size_t len);

/* ---- default location and the pointer file ---- */
int jr_default_name(const char *device, char *buf, size_t len);
/* The pointer file at the default path of a journal kept elsewhere:
 * which journal, which device, and the hull of what may be written. */
struct jr_pointer {
	char journal[JR_LINK_MAX];
	char device[JR_PATH_MAX];
	uint64_t area_lo, area_hi;
};
/* Write the pointer at link, replacing any. */
int jr_pointer_write(const char *link, const struct jr_pointer *p);
/* A new pointer as jr_create_whole() makes files: its descriptor, locked
 * until closed, so that a pointer whose journal is still being created
 * is not taken for a stale one. */
int jr_pointer_create(const char *link, const struct jr_pointer *p);
/* The temporary name jr_pointer_write() replaces link through. */
int jr_pointer_tmp_name(const char *link, char *tmp, size_t len);
/* 1 with *p filled when path is a pointer file, 0 when it is not one,
 * -EBADMSG when it looks like one but is damaged, or -errno. */
int jr_pointer_read(const char *path, struct jr_pointer *p);

/* Whether path still names the file open as fd: 0, -ESTALE (another
 * file) or -ENOENT (-errno when it cannot be looked up). */
int jr_still_named(int fd, const char *path);

/* ---- replay (journal_replay.c), for journal_finish() ---- */
/* journal_restore() on an open, already locked journal file.  known:
 * the last commit as the process that wrote the journal holds it (the
 * file's slots must say the same, or the outcome is an error and the
 * journal is kept), or NULL to trust the file. */
int jr_restore_locked(int fd, const char *path, struct fp_dev *dev,
		      const struct jr_slot *known, unsigned flags,
		      fp_progress_fn progress, void *progress_arg,
		      struct journal_restore_report *rep, char *err,
		      size_t errlen);
/* Remove the journal open as fd (checked and locked by the caller) from
 * path, marked spent first (*marked, when not NULL, says whether that
 * worked), and, if it still names it, its pointer file; -ESTALE,
 * touching nothing of it, when path names another file by now (a new
 * test's journal), -ENOENT when it names nothing. */
int jr_delete_journal(int fd, const char *path, const char *pointer,
		      bool *marked);

#endif
