/* journal.h - data preservation for --write: back up, test, restore.
 *
 * Before a writing test touches the device, the original content of the
 * test area is copied into a journal file and fsync'ed; after the test
 * (also after an interruption or an I/O error) the journal is replayed,
 * every range is read back and compared with its checksum, and only then
 * is the journal deleted.  If flashprobe dies instead (SIGKILL, crash,
 * power loss), the journal stays, later runs find it with
 * journal_find_pending() and refuse to test until it has been replayed
 * with journal_restore().
 *
 * File format (little-endian; see journal.c):
 *   header   2048 bytes: magic "FPJOURNL", version, device identity (path,
 *            size, sector size, device number or file dev/inode, serial,
 *            CID, WWID or loop backing file), pointer link; CRC32C;
 *   records  40-byte header (magic, type, sequence number, offset, length,
 *            CRC32C of the data, CRC32C of the header) + data, at most
 *            JOURNAL_RECORD_MAX_BYTES each;
 *   commit   a record without data counting the records before it, fsync'ed
 *            before the device is written.  A valid journal ends with a
 *            commit; a torn or corrupted one is never replayed blindly.
 *
 * Errors are negative errno values with a one-line reason in err (no
 * program prefix, no newline); nothing here prints or exits.
 */
#ifndef FLASHPROBE_JOURNAL_H
#define FLASHPROBE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fp_dev;

#define JOURNAL_MAGIC "FPJOURNL"		/* 8 bytes at offset 0 */
#define JOURNAL_VERSION 1u
#define JOURNAL_RECORD_MAX_BYTES (1u << 20)	/* bounds memory: 2 buffers */
#define JOURNAL_SAVE_GRAIN_BYTES (1u << 20)	/* on-the-fly saves: whole blocks */
#define JOURNAL_STATE_DIR "/var/lib/flashprobe"	/* created 0700 */
#define JOURNAL_FALLBACK_DIR "/var/tmp"
#define JOURNAL_STATE_ENV "FLASHPROBE_STATE_DIR"	/* overrides both */
#define JOURNAL_MAX_FAILED 16			/* failed ranges kept */

/* Restore flags. */
#define JOURNAL_RESTORE_FORCE 1u	/* replay the intact records of a
					 * damaged journal, or onto a device
					 * whose identity does not match */
#define JOURNAL_RESTORE_KEEP 2u		/* do not delete the journal */

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
	size_t nfailed;			/* failed ranges; the first
					 * JOURNAL_MAX_FAILED are in failed[] */
	struct journal_range failed[JOURNAL_MAX_FAILED];
	bool damaged;			/* journal failed its checks (forced) */
	bool identity_forced;		/* identity mismatch overridden */
	bool deleted;			/* journal (and pointer link) removed */
	char note[256];			/* the journal's damage, or "" */
};

/* Where the journal of device goes by default: $FLASHPROBE_STATE_DIR, else
 * /var/lib/flashprobe (created 0700 when missing), else /var/tmp; named
 * flashprobe-<major>-<minor>.journal for block devices,
 * flashprobe-<sanitized path>.journal for files and simulated cards.
 * Returns 0, -ENAMETOOLONG, or the stat error of device. */
int journal_default_path(const char *device, char *buf, size_t len,
			 char *err, size_t errlen);

/* Refuse a journal path that would live on the device under test: its
 * directory's st_dev equal to the disk or to any partition of it, or, for
 * an image file, the journal being the image itself.  0, -EINVAL (with the
 * reason), or the stat error of the journal's directory. */
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
 * written, replay the journal onto inner (journal_restore() on the file
 * just written, so every run exercises the restore path), else just delete
 * it.  flags as for journal_restore().  jdev accepts no more writes; close
 * it afterwards.  Returns as journal_restore(). */
int journal_finish(struct fp_dev *jdev, unsigned flags,
		   struct journal_restore_report *rep, char *err,
		   size_t errlen);

/* The journal file of a decorator device, NULL for other devices. */
const char *journal_path_of(const struct fp_dev *jdev);

/* The reason of the last failed on-the-fly backup in a decorator write
 * (the write itself only returns an errno), or "". */
const char *journal_last_error(const struct fp_dev *jdev);

/* Replay journal_path onto dev (opened for writing): check the header,
 * the identity (path/serial, size, device number or inode) and every
 * record, then write each range, read it back and compare, and delete the
 * journal and its pointer link.  Writes are synchronous (the device layer
 * opens with O_SYNC), so verified means on the medium.  Idempotent.
 * Returns 0, or
 *   -EBADMSG  header, record or commit damaged or missing (nothing written
 *             unless JOURNAL_RESTORE_FORCE: then the intact records up to
 *             the damage are replayed, and the journal is kept);
 *   -ENODEV   the journal belongs to another device (unless forced);
 *   -EPERM    not a regular file owned by this user (or root) and
 *             writable only by its owner: a journal in a shared
 *             directory such as /var/tmp could be planted;
 *   -EIO etc. some ranges could not be written or verified: all others
 *             are restored, rep->failed lists the failed ones, the journal
 *             is kept;
 *   other negative errnos from opening or reading the journal.
 * While it runs, signals only print how far it is (see safety.h). */
int journal_restore(const char *journal_path, struct fp_dev *dev,
		    unsigned flags, struct journal_restore_report *rep,
		    char *err, size_t errlen);

/* Look for an unfinished journal of device in the state directories (the
 * ones journal_default_path() uses, following pointer links), matching by
 * identity (serial, else device number; inode for files), not by name.
 * Files that journal_restore() would not trust are ignored.
 * Returns 1 with its path in found, 0 when there is none (always for
 * simulated cards, which live only in memory), or a negative errno. */
int journal_find_pending(const char *device, char *found, size_t foundlen,
			 char *err, size_t errlen);

/* The device path recorded in a journal's header, for
 * "flashprobe restore JOURNAL".  0, -EBADMSG, or the open error. */
int journal_device_of(const char *journal_path, char *device, size_t len,
		      char *err, size_t errlen);

/* Whether path is a regular file starting with the journal magic. */
bool journal_is_journal_file(const char *path);

#endif
