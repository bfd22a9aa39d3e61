/* journal.h - data preservation for --write: back up, test, restore.
 *
 * Before a writing test touches the device, the original content of the
 * test area is copied into a journal file and committed (fsync'ed, and
 * counted in the journal's header); after the test (also after an
 * interruption or an I/O error) the journal is replayed, every range is
 * read back and compared with its checksum, and only then is the journal
 * deleted.  If flashprobe dies instead (SIGKILL, crash, power loss), the
 * journal stays, later runs find it with journal_find_pending() and
 * refuse to test until it has been replayed with journal_restore().
 *
 * The header says how much the journal commits, so a journal that was
 * cut short or damaged is refused as a whole (and kept) instead of being
 * replayed partly; see journal_format.h for the file format.  The journal
 * file is locked (flock) while its test runs.
 *
 * Errors are negative errno values, or flashprobe's own codes from
 * errmsg.h, with a one-line reason in err (no program prefix, no
 * newline); nothing here prints or exits.
 */
#ifndef FLASHPROBE_JOURNAL_H
#define FLASHPROBE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct fp_dev;
struct fp_dev_failure;

#define JOURNAL_MAGIC "FPJOURNL"		/* 8 bytes at offset 0 */
#define JOURNAL_RECORD_MAX_BYTES (1u << 20)	/* bounds memory: 2 buffers */
#define JOURNAL_SAVE_GRAIN_BYTES (1u << 20)	/* on-the-fly saves: whole blocks */
#define JOURNAL_STATE_DIR "/var/lib/flashprobe"	/* created 0700 */
#define JOURNAL_FALLBACK_DIR "/var/tmp"
#define JOURNAL_STATE_ENV "FLASHPROBE_STATE_DIR"	/* overrides both */
/* A test seam: the test suite's stand-in for both default places, so that
 * the pointer files of its journals (below) never reach the machine's. */
#define JOURNAL_TEST_HOME_ENV "FLASHPROBE_TEST_DEFAULT_DIR"
#define JOURNAL_MAX_FAILED 16			/* failed ranges kept */

/* Restore flags. */
#define JOURNAL_RESTORE_FORCE 1u	/* replay the intact records of a
					 * damaged journal, or onto a device
					 * whose identity does not match */
#define JOURNAL_RESTORE_KEEP 2u		/* do not delete the journal */
#define JOURNAL_RESTORE_SAME_DEVICE 4u	/* journal_finish(): the device is
					 * the one the test had open, so the
					 * fingerprint is not checked (a fake
					 * card whose writes wrap around
					 * changes blocks outside the area) */
#define JOURNAL_RESTORE_OVERWRITE_NEWER 16u	/* replay over places that
					 * hold neither what was saved nor a
					 * write of the test: data written
					 * since, or a torn or damaged write
					 * (not implied by FORCE) */
#define JOURNAL_RESTORE_NO_ALIAS 8u	/* journal_finish(): the test that
					 * saved records while its writes might
					 * alias ran to its end and saw none
					 * do: they are restored and read
					 * again like any other */

/* Restore progress (an fp_progress_fn) is in bytes: called with done 0
 * before the first write, after every record, and with done == total
 * after the last. */

struct journal_range {
	uint64_t offset_bytes;
	uint64_t length_bytes;
	int error;			/* negative errno; -EILSEQ: read back
					 * differently than written */
};

struct journal_restore_report {
	uint64_t records;		/* data records replayed */
	uint64_t restored_bytes;	/* written and verified */
	uint64_t failed_bytes;
	uint64_t failed_lowest;		/* the lowest byte not restored */
	size_t nfailed;			/* failed ranges; the first
					 * JOURNAL_MAX_FAILED are in failed[] */
	struct journal_range failed[JOURNAL_MAX_FAILED];
	uint64_t committed_records;	/* data records the journal commits */
	uint64_t missing_records;	/* forced: committed but not found */
	uint64_t area_lo, area_hi;	/* what the test may have written */
	bool damaged;			/* journal failed its checks (forced) */
	bool nothing_written;		/* no commit: the device is as it was */
	bool spent;			/* replayed and verified before, by a
					 * run stopped before deleting it */
	bool fingerprint_forced;	/* fingerprint mismatch overridden */
	bool identity_forced;		/* identity mismatch overridden */
	uint64_t newer_overwritten;	/* bytes that held neither what was
					 * saved nor the test's writes,
					 * replayed over (OVERWRITE_NEWER) */
	bool deleted;			/* journal (and pointer link) removed */
	int delete_error;		/* why not (-errno), when it was to be */
	bool marked_spent;		/* marked replayed before that */
	char note[320];			/* the journal's damage, or "" */
};

/* Where the journal of device goes by default: $FLASHPROBE_STATE_DIR, else
 * /var/lib/flashprobe (created 0700 when missing), else /var/tmp (the
 * default places); a journal kept anywhere but there has a pointer file
 * at the default places, which any later run looks in; named
 * flashprobe-<major>-<minor>.journal for block devices,
 * flashprobe-<sanitized path>-<hash of the path>.journal for files and
 * simulated cards (two paths that sanitize alike keep apart).
 * Returns 0, -ENAMETOOLONG, or the stat error of device. */
int journal_default_path(const char *device, char *buf, size_t len,
			 char *err, size_t errlen);

/* Refuse a journal path that would live on the device under test (asked
 * of safety_check_output(), as for every output: on the disk or any
 * partition of it, or the image itself) or in memory (tmpfs, ramfs).  0,
 * -EINVAL (with the reason), the error when sysfs cannot tell, or the
 * stat error of the journal's directory. */
int journal_check_location(const char *journal_path, const char *device,
			   char *err, size_t errlen);

/* Create the journal at journal_path (must not exist: -EEXIST) for inner
 * and return a decorator device over it.  The decorator:
 *   - reads through to inner;
 *   - writes through to inner once the range has been saved; a range not
 *     saved yet (outside journal_backup_area()) is saved, committed and
 *     fsync'ed first, and that backup time is hidden from its clock;
 *   - fails reads and writes with -EINTR once safety_interrupted() is set;
 *   - uses inner's clock; has its own I/O counters;
 *   - does not own inner: fp_dev_close(*out) closes the journal file and
 *     leaves it on disk (the crash-safe default), then close inner.
 * When journal_path is not the default path, a symlink at the default path
 * points to it so that journal_find_pending() finds it. */
int journal_open(struct fp_dev *inner, const char *journal_path,
		 struct fp_dev **out, char *err, size_t errlen);

/* Save [start, end) of the inner device into the journal (1 MiB records),
 * commit and fsync, and make it jdev's write area: call it with the area
 * the test announced (its plan) before the test, so no measured write
 * waits for a backup.  Checks free space first (-ENOSPC).  On error or
 * interruption (-EINTR) what was saved is committed and nothing has been
 * written to the device. */
int journal_backup_area(struct fp_dev *jdev, uint64_t start, uint64_t end,
			char *err, size_t errlen);

/* After the test (finished, failed or interrupted): if anything was
 * written, replay the journal onto inner (through the same code as
 * journal_restore(), on the file just written, still locked), else just
 * delete it (rep->nothing_written).  flags as for journal_restore().
 * jdev accepts no more writes; close it afterwards.  Returns as
 * journal_restore(). */
int journal_finish(struct fp_dev *jdev, unsigned flags,
		   fp_progress_fn progress, void *progress_arg,
		   struct journal_restore_report *rep, char *err,
		   size_t errlen);

/* The journal file of a decorator device, NULL for other devices. */
const char *journal_path_of(const struct fp_dev *jdev);

/* The reason of the last failed on-the-fly backup in a decorator write
 * (the write itself only returns an errno), or "". */
const char *journal_last_error(const struct fp_dev *jdev);

/* When that reason is a read of the card that failed (the block to back
 * up could not be read: the card's own failure, not the journal's), the
 * read that failed; else NULL. */
const struct fp_dev_failure *journal_card_failure(const struct fp_dev *jdev);

/* Whether the decorator has let any write through to the device. */
bool journal_device_written(const struct fp_dev *jdev);

/* Whether the writes to come may land anywhere on the card (the capacity
 * check, whose writes alias everywhere on a wrapping fake): then the
 * journal remembers a hash of each block written, and the swap check
 * takes a block it never aimed at that now reads as one of them for an
 * aliased write, not another card.  Off by default.  No effect on other
 * devices. */
void journal_writes_may_alias(struct fp_dev *jdev, bool may);

/* Replay journal_path (or the pointer file that names it) onto dev
 * (opened for writing): lock it, check the header, the identity
 * (path/serial, size, device number or inode), that every record the
 * header commits is there and intact, and the fingerprint of the blocks
 * around the test area; then write each range, newest first (so that a
 * fake card whose writes wrap around reads as before), read it back and
 * compare, and delete the journal and its pointer.  Writes are
 * synchronous (the device layer opens with O_SYNC), so verified means on
 * the medium.  Idempotent.  A journal that commits nothing (the test died
 * before its first write) is deleted without writing anything.
 * Returns 0, or
 *   -EBADMSG      header, commit slot or a committed record damaged or
 *                 missing: nothing written, the journal kept and err says
 *                 what is missing; with JOURNAL_RESTORE_FORCE every intact
 *                 record in the file is replayed, the journal is kept and
 *                 rep->missing_records counts what could not be found;
 *   -FP_EREFUSED  the journal belongs to another device, the device does
 *                 not hold the blocks the journal saw around the test
 *                 area (probably another card in the same reader), the
 *                 journal is locked by a test still running, or it is not
 *                 a regular file of this user (or root) writable only by
 *                 its owner (a journal in /var/tmp could be planted); the
 *                 first two can be overridden with JOURNAL_RESTORE_FORCE;
 *   -EIO etc.     some ranges could not be written or verified: all others
 *                 are restored, rep->failed lists the failed ones, the
 *                 journal is kept;
 *   other negative errnos from opening or reading the journal.
 * progress may be NULL. */
int journal_restore(const char *journal_path, struct fp_dev *dev,
		    unsigned flags, fp_progress_fn progress,
		    void *progress_arg, struct journal_restore_report *rep,
		    char *err, size_t errlen);

/* Look for an unfinished journal of device in the state directories (the
 * ones journal_default_path() uses, following pointer files), matching
 * by identity (serial, else device number; inode for files), not by
 * name.  Files that journal_restore() would not trust are ignored.
 * Returns JOURNAL_PENDING_OWN (1) with its path in found, 0 when there is
 * none (always for simulated cards, which live only in memory),
 * JOURNAL_PENDING_ALIAS when the only one is of another node over the
 * same data (an image file and a loop device over it, a disk without a
 * serial and its partition: testing either undoes what it saved, and
 * restoring it with its own device is what puts the data back), -FP_ELOST when a pointer
 * file names a journal that no longer exists (err says which range of
 * the device may hold test data and how to go on), -FP_EREFUSED when
 * the journal named after device is another device's (a card swapped
 * after a crash, an image replaced: err says so, found names it) or when
 * device has none but holds the data of a journal whose image is gone
 * (moved: found names it, and restore --force replays it), or a
 * negative errno. */
#define JOURNAL_PENDING_OWN	1
#define JOURNAL_PENDING_ALIAS	2
int journal_find_pending(const char *device, char *found, size_t foundlen,
			 char *err, size_t errlen);

/* The directories journal_find_pending() looks in, in its order:
 * FLASHPROBE_STATE_DIR when set, then the default places.  Their count. */
#define JOURNAL_STATE_DIRS_MAX 3
size_t journal_state_dirs(const char *dirs[JOURNAL_STATE_DIRS_MAX]);

/* The device path recorded in a journal's header (or in the journal a
 * pointer file names), for "flashprobe restore JOURNAL".  0, -EBADMSG,
 * or the open error. */
int journal_device_of(const char *journal_path, char *device, size_t len,
		      char *err, size_t errlen);

/* What a JOURNAL_PENDING_ALIAS match means, for the refusals of a test
 * and of "restore DEVICE": "'DEVICE' shares its data with 'OTHER', whose
 * test left the unfinished journal 'JOURNAL': run 'flashprobe restore
 * JOURNAL'" (that journal restores through its own node, named in it),
 * or, while a running test holds that journal, that it is being tested. */
void journal_describe_alias(const char *device, const char *journal,
			    char *buf, size_t len);

/* Whether the journal is of a loop device that no longer shows its data
 * (detached, or attached to another file since): 1 with what to do in
 * buf (attach the file again, the losetup line, restore on that device),
 * else 0.  Its journal restores only through such a loop device. */
int journal_loop_gone(const char *journal, char *buf, size_t len);

/* Whether a running test holds the journal at path (its lock is taken):
 * true with "another flashprobe" or "'comm' (pid N)" in who. */
bool journal_in_use(const char *path, char *who, size_t wholen);

/* A regular file that does not read as a journal (its magic damaged, cut
 * short) but that a state directory names as one: it lies there under a
 * journal's name, or a pointer file there names it.  -EBADMSG with what
 * its card may hold and what to do in err; else 0 (an image file, say,
 * for "restore DEVICE"). */
int journal_check_damaged(const char *path, char *err, size_t errlen);

/* Whether path is a regular file starting with the journal's or the
 * pointer file's magic. */
bool journal_is_journal_file(const char *path);
/* The same for an open file (read from offset 0). */
bool journal_is_journal_fd(int fd);

#endif
