/* session.h - one writing test's life: consent, the safety gate, the
 * journal that preserves the data, and the restore at the end.
 *
 * Every command that writes goes through here, in this order:
 *   session_open()     consent, gate, pending-journal check, the journal's
 *                      path, exclusive open and lock, confirmation, signal
 *                      handlers, journal;
 *   session_protect()  for each announced area, before writing it: back it
 *                      up (--write) and make it the only writable range
 *                      (the one place that sets a test's write area: the
 *                      analyzer then may only narrow it, see dev.h);
 *   ... the analyzer runs on session.dev ...
 *   session_finish()   restore and verify (--write), before any report:
 *                      a report that cannot be written must not cost data;
 *   ... the caller prints its report (the devices are still open) ...
 *   session_close()    close everything.
 * Reading commands use session_open() with SESSION_READ_ONLY.
 */
#ifndef FLASHPROBE_SESSION_H
#define FLASHPROBE_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "journal.h"

struct fp_dev;

enum session_consent {
	SESSION_READ_ONLY,	/* reading tests: nothing is written */
	SESSION_NO_CONSENT,	/* a writing test without --write/--destructive */
	SESSION_WRITE,		/* --write: back up, test, restore */
	SESSION_DESTRUCTIVE,	/* --destructive: no backup */
};

struct session_opts {
	const char *device;		/* path or sim:... spec (seed folded in) */
	const char *test;		/* "open-au", for messages */
	enum session_consent consent;
	bool yes;			/* no typed confirmation */
	const char *journal;		/* --journal, or NULL for the default */
	FILE *tty_in, *tty_out;		/* where to ask (NULL: never ask) */
	FILE *notes;			/* warnings and announcements (stderr) */
	bool quiet;			/* -q: no announcements of write areas
					 * (the JSON reports hold the plans) */
};

/* An area announced by session_protect(), kept for the reports. */
struct session_area {
	const char *test;		/* "find-fat" */
	uint64_t start_bytes, end_bytes, max_bytes;
};

#define SESSION_MAX_AREAS 8		/* probe protects three */

struct session {
	struct fp_dev *raw;		/* the opened device */
	struct fp_dev *dev;		/* what tests use: journal or guard */
	struct fp_dev *guard;		/* interruptible wrapper, or NULL */
	int disk_lock_fd;		/* a timed partition's disk, sharing
					 * its lock (-1: none) */
	enum session_consent consent;
	bool simulated;
	bool wrote;			/* session_protect() was called */
	bool finished;			/* session_finish() ran */
	int finish_rc;			/* what it returned: how a restore
					 * failed, or 0 */
	uint64_t bytes_written;		/* by the test, known at finish */
	bool may_alias;			/* the test saw writes land on other
					 * offsets (a wraparound card): the
					 * in-process restore skips the
					 * journal's content fingerprint */
	bool aliasing_ruled_out;	/* the capacity check ran to its end
					 * and saw none: its records are
					 * restored like any other
					 * (JOURNAL_RESTORE_NO_ALIAS) */
	char journal[PATH_MAX];		/* --write: the journal file */
	struct journal_restore_report restore;
	FILE *notes;
	bool quiet;			/* no announcements */
	struct session_area areas[SESSION_MAX_AREAS];	/* as announced */
	size_t nareas;
};

/* Open for the test.  Returns 0, or a negative errno with a one-line
 * reason in err:
 *   -FP_ENOCONSENT  a writing test without consent (nothing opened)
 *   -EXDEV, -EBUSY, -EROFS, -FP_EREFUSED   refused by the safety gate, the
 *                 target's lock, or data found with no terminal to confirm
 *                 on and no --yes; -FP_EREFUSED also for a --journal that
 *                 is another test's unfinished journal
 *   -EALREADY     an unfinished journal of this device exists: restore first
 *   -ECANCELED    the typed confirmation did not match
 *   -EINVAL, -ENOENT, -EISDIR, -ENOTBLK, -ELOOP, -ENAMETOOLONG   bad
 *                 device or --journal argument (a journal on the device
 *                 under test is -EINVAL)
 *   others        failures opening the device or the journal. */
int session_open(struct session *s, const struct session_opts *o, char *err,
		 size_t errlen);

/* Announce [start, end) and the bytes of writes planned there (max_bytes)
 * on the notes stream, unless quiet, and make it writable.  With --write its content is saved in the journal
 * first, or, for a sparse test that writes only parts of a large area
 * (open-au, find-fat), each 1 MiB block just before its first write, with
 * that time kept out of the measurement.  0 or a negative errno with the
 * reason in err.  flags: enum session_area_flags. */
enum session_area_flags {
	SESSION_AREA_SPARSE = 1 << 0,	/* writes parts of a large area */
	SESSION_AREA_MAY_ALIAS = 1 << 1,	/* capacity_plan.writes_may_alias */
};
int session_protect(struct session *s, const char *what, uint64_t start,
		    uint64_t end, uint64_t max_bytes, unsigned flags, char *err,
		    size_t errlen);

/* Restore and verify what was written (--write) and delete the journal;
 * the devices stay open for the report (fp_dev_* of session.dev) and the
 * signal handlers stay (SIGPIPE ignored) until session_close().  Runs
 * once.  Returns 0, or a negative errno when the restore failed (the
 * journal is then kept and err names it). */
int session_finish(struct session *s, char *err, size_t errlen);

/* Finish (when not done yet), close the devices, put the signal handlers
 * back.  Returns as session_finish(). */
int session_close(struct session *s, char *err, size_t errlen);

/* The signal that interrupted the session, or 0. */
int session_interrupted(void);

#endif
