/* session.c - consent, gate, journal and restore around a writing test.
 *
 * The order matters: consent, the gate and the journal's path come before
 * the device is even opened for writing; the exclusive open comes before the confirmation (so
 * nobody mounts the device while the user types); the journal exists
 * before the first write; the restore is verified before the journal is
 * deleted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev.h"
#include "devspec.h"
#include "errmsg.h"
#include "journal.h"
#include "safety.h"
#include "session.h"
#include "units.h"


static bool writing(enum session_consent c)
{
	return c == SESSION_WRITE || c == SESSION_DESTRUCTIVE;
}

/* A test of another node over this device's data (the image a loop
 * device reads, a partition of a disk) left a journal: testing now would
 * overwrite what it saved, and that journal restores its own node. */
static int refuse_alias_journal(const char *device, const char *journal,
				char *err, size_t errlen)
{
	char why[3 * PATH_MAX];

	journal_describe_alias(device, journal, why, sizeof(why));
	snprintf(err, errlen, "%s before testing again", why);
	return -EALREADY;
}

static int gate(struct session *s, const struct session_opts *o, char *err,
		size_t errlen)
{
	struct safety_report rep;
	char pending[PATH_MAX], who[64];
	int ret;

	ret = safety_check_target(o->device, writing(o->consent) ? SAFETY_WRITE
								: SAFETY_READ,
				  &rep, err, errlen);
	if (ret)
		return ret;
	if (rep.warning[0] && o->notes)
		fprintf(o->notes, "flashprobe: %s\n", rep.warning);
	if (!writing(o->consent))
		return rep.partition_warning ?
		       fp_dev_share_disk_lock(rep.disk, o->device, &s->disk_lock_fd,
					      err, errlen) : 0;
	ret = journal_find_pending(o->device, pending, sizeof(pending), err, errlen);
	if (ret > 0 && journal_in_use(pending, who, sizeof(who))) {
		snprintf(err, errlen, "'%s' is being tested by %s (its journal '%s' "
			 "is in use): wait for it to finish", o->device, who, pending);
		return -FP_EREFUSED;
	}
	if (ret == JOURNAL_PENDING_ALIAS)
		return refuse_alias_journal(o->device, pending, err, errlen);
	if (ret > 0) {
		snprintf(err, errlen, "'%s' has an unfinished journal '%s': run "
			 "'flashprobe restore %s' before testing again",
			 o->device, pending, pending);
		return -EALREADY;
	}
	return ret < 0 ? ret : 0;
}

/* A device that holds a partition table or a file system: say what will
 * be overwritten, and on a terminal have the user type its name.  With no
 * terminal to ask (a script, a pipe, </dev/null) only --yes consents. */
static int confirm_if_data(struct session *s, const struct session_opts *o,
			   char *err, size_t errlen)
{
	bool ask = !o->yes && o->tty_in && o->tty_out;
	char what[128];
	int found = safety_find_signature(s->raw, what, sizeof(what));

	/* with no backup, anything but an erased card is worth a question */
	if (found == 0 && o->consent == SESSION_DESTRUCTIVE)
		found = safety_find_nonblank(s->raw, what, sizeof(what));
	if (found == 0)
		return 0;
	if (found < 0)
		snprintf(what, sizeof(what), "unreadable data");
	if (!o->yes && !ask) {
		fp_errf(err, errlen, "'%s' holds data (%s) and there is no terminal "
			"to confirm on (standard input and standard error are not "
			"both one): add --yes to %s", o->device, what,
			o->consent == SESSION_DESTRUCTIVE ? "overwrite it" :
			"test it (it is backed up and restored)");
		return -FP_EREFUSED;
	}
	/* -q silences the note, not the question it introduces */
	if (o->notes && (ask || !o->quiet))
		fprintf(o->notes, "flashprobe: '%s' holds %s: %s\n", o->device, what,
			o->consent == SESSION_DESTRUCTIVE ?
			"--destructive overwrites it without a backup" :
			"it is backed up and restored around the test");
	if (!ask)
		return 0;
	if (safety_confirm(o->device, o->tty_in, o->tty_out)) {
		snprintf(err, errlen, "'%s' was not confirmed: nothing written", o->device);
		return -ECANCELED;
	}
	return 0;
}

/* An existing file given as --journal is never overwritten: a journal
 * there holds another test's backup (a refusal), anything else is a
 * mistyped path. */
static int check_existing_journal(const char *path, char *err, size_t errlen)
{
	char device[PATH_MAX], derr[256];
	struct stat st;

	if (lstat(path, &st) != 0)
		return 0;
	if (!journal_is_journal_file(path)) {
		fp_errf(err, errlen, "--journal '%s' already exists and is not a "
			"journal: give a new file", path);
		return -EINVAL;
	}
	if (journal_device_of(path, device, sizeof(device), derr, sizeof(derr)))
		snprintf(device, sizeof(device), "another device");
	fp_errf(err, errlen, "'%s' is an unfinished journal of '%s': replay it "
		"with 'flashprobe restore %s' or give another --journal", path,
		device, path);
	return -FP_EREFUSED;
}

/* The journal's path, checked before the device is opened: not on the
 * device under test, not an existing file, not too long. */
static int choose_journal(struct session *s, const struct session_opts *o,
			  char *err, size_t errlen)
{
	int ret;

	if (o->journal) {
		if (snprintf(s->journal, sizeof(s->journal), "%s", o->journal) >=
		    (int)sizeof(s->journal)) {
			fp_errf(err, errlen, "--journal is longer than %zu bytes",
				sizeof(s->journal) - 1);
			return -ENAMETOOLONG;
		}
	} else if ((ret = journal_default_path(o->device, s->journal,
					       sizeof(s->journal), err, errlen))) {
		return ret;
	}
	/* -EINVAL: on the device under test or in memory, a bad --journal
	 * (exit 2) */
	ret = journal_check_location(s->journal, o->device, err, errlen);
	if (!ret && o->journal)
		ret = check_existing_journal(s->journal, err, errlen);
	return ret;
}

static void release_disk_lock(struct session *s)
{
	if (s->disk_lock_fd >= 0)
		close(s->disk_lock_fd);
	s->disk_lock_fd = -1;
}

int session_open(struct session *s, const struct session_opts *o, char *err,
		 size_t errlen)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->disk_lock_fd = -1;
	s->consent = o->consent;
	s->notes = o->notes;
	s->quiet = o->quiet;
	s->simulated = devspec_is_sim(o->device);
	if (o->consent == SESSION_NO_CONSENT && !s->simulated) {
		snprintf(err, errlen, "%s writes to '%s': add --write (its data is "
			 "backed up and restored) or --destructive (no backup)",
			 o->test, o->device);
		return -FP_ENOCONSENT;
	}
	if (o->consent == SESSION_NO_CONSENT)
		s->consent = SESSION_DESTRUCTIVE;	/* a simulated card has nothing to lose */
	if (!s->simulated && (ret = gate(s, o, err, errlen)))
		return ret;
	if (s->consent == SESSION_WRITE && (ret = choose_journal(s, o, err, errlen)))
		return ret;
	ret = devspec_open(o->device, writing(s->consent) ? FP_OPEN_WRITE : FP_OPEN_TIME,
			  &s->raw, err, errlen);
	if (ret) {
		release_disk_lock(s);
		return ret;
	}
	s->dev = s->raw;
	if (!writing(s->consent))
		return 0;
	if (!s->simulated && (ret = confirm_if_data(s, o, err, errlen)))
		goto fail;
	if ((ret = safety_signals_install()))
		goto fail;
	/* by the journal's name: found wherever FLASHPROBE_STATE_DIR was */
	safety_fsize_note(s->consent == SESSION_WRITE ? s->journal : NULL);
	if (s->consent == SESSION_WRITE)
		ret = journal_open(s->raw, s->journal, &s->dev, err, errlen);
	else if ((ret = safety_wrap_interruptible(s->raw, &s->guard)) == 0)
		s->dev = s->guard;
	if (ret)
		goto fail;
	return 0;
fail:
	if (!err[0])
		snprintf(err, errlen, "cannot prepare '%s': %s", o->device, strerror(-ret));
	s->dev = NULL;
	fp_dev_close(s->raw);
	s->raw = NULL;
	return ret;
}

/* Whether the short form of bytes ("96MiB") is exact: "100.50MiB" is
 * not, for an end 4 KiB past it. */
static bool short_form_exact(uint64_t bytes)
{
	char buf[32];
	uint64_t back;

	units_format_bytes(bytes, buf, sizeof(buf));
	return units_parse_size(buf, &back) == 0 && back == bytes;
}

/* "find-fat will write at most 42MiB within the first 96MiB of 'DEV'".
 * A test that rewrites blocks can plan more bytes of writes than its area
 * holds: then what may change is the area, and the total is said as an
 * "up to" total (the plan's bound: a card found fake early writes far less),
 * never as an "at most" larger than the area (or the card). */
static void announce(const struct session *s, const char *what, uint64_t start,
		     uint64_t end, uint64_t max_bytes, bool sparse)
{
	char a[32], b[32], n[32], area[96];

	if (!s->notes || s->quiet)
		return;
	units_format_bytes(end, b, sizeof(b));
	if (!short_form_exact(start) || !short_form_exact(end))	/* never rounded */
		snprintf(area, sizeof(area), "bytes %" PRIu64 " to %" PRIu64, start, end);
	else if (start == 0)
		snprintf(area, sizeof(area), "the first %s", b);
	else
		snprintf(area, sizeof(area), "%s to %s",
			 units_format_bytes(start, a, sizeof(a)), b);
	units_format_bytes(max_bytes, n, sizeof(n));
	if (max_bytes <= end - start)
		fprintf(s->notes, "flashprobe: %s will write at most %s within %s of '%s'",
			what, n, area, fp_dev_path(s->raw));
	else
		fprintf(s->notes, "flashprobe: %s will write within %s of '%s' (up to %s of "
			"writes in all: some blocks more than once)", what, area,
			fp_dev_path(s->raw), n);
	fprintf(s->notes, "%s\n", s->consent != SESSION_WRITE ? "" :
		sparse ? "; each block is backed up before its first write" :
		"; it is backed up first");
}

int session_protect(struct session *s, const char *what, uint64_t start,
		    uint64_t end, uint64_t max_bytes, unsigned flags, char *err,
		    size_t errlen)
{
	bool sparse = flags & SESSION_AREA_SPARSE;

	announce(s, what, start, end, max_bytes, sparse);
	/* the journal then tells a swapped card from blocks the writes
	 * changed outside the area (see journal.h) */
	journal_writes_may_alias(s->dev, flags & SESSION_AREA_MAY_ALIAS);
	if (s->nareas < SESSION_MAX_AREAS)
		s->areas[s->nareas++] = (struct session_area){ what, start, end, max_bytes };
	s->wrote = true;
	fp_dev_end_write_area(s->dev);	/* the previous test's, if any */
	if (s->consent == SESSION_WRITE && !sparse)
		return journal_backup_area(s->dev, start, end, err, errlen);
	return fp_dev_set_write_area(s->dev, start, end);
}

/* The restore at the end of a test failed: err (the journal's reason,
 * or none) becomes one message that says the card may still hold the
 * test's writes and, unless the reason already says what to run, that
 * the journal keeps the data and how to replay it. */
static void tell_restore_failed(const struct session *s, int ret, char *err,
				size_t errlen)
{
	char why[768];

	snprintf(why, sizeof(why), "%s", err[0] ? err : strerror(-ret));
	if (strstr(why, "flashprobe restore"))
		snprintf(err, errlen, "restoring the original data of '%s' after "
			 "the test failed: %s", fp_dev_path(s->raw), why);
	else
		snprintf(err, errlen, "restoring the original data of '%s' after "
			 "the test failed: %s; the card may still hold the test's "
			 "writes: run 'flashprobe restore %s' when the cause is fixed "
			 "(the journal is kept)", fp_dev_path(s->raw), why, s->journal);
}

/* The data is back and verified but its journal could not be deleted
 * (its file system failed or went read-only, its directory was moved):
 * it ended quietly, and the next test asked for a restore that put the
 * old data over whatever the card held by then. */
static int tell_journal_kept(struct session *s, char *err, size_t errlen)
{
	int rc = s->restore.delete_error ? s->restore.delete_error : -EIO;

	if (s->restore.marked_spent && rc == -ENOENT)
		snprintf(err, errlen, "the original data of '%s' is restored and "
			 "verified; its journal '%s' was deleted or moved away during "
			 "the test, and is marked as replayed wherever it went, so no "
			 "restore will replay it again", fp_dev_path(s->raw), s->journal);
	else if (s->restore.marked_spent)
		snprintf(err, errlen, "the original data of '%s' is restored and "
			 "verified, but its journal '%s' could not be deleted (%s); it "
			 "is marked as replayed, so no restore will replay it again: "
			 "delete it", fp_dev_path(s->raw), s->journal, strerror(-rc));
	else
		snprintf(err, errlen, "the original data of '%s' is restored and "
			 "verified, but its journal '%s' could not be marked as "
			 "replayed nor deleted (%s): delete it by hand before using "
			 "the card; restoring it again would undo every change made "
			 "to the card since", fp_dev_path(s->raw), s->journal,
			 strerror(-rc));
	return rc;
}

int session_finish(struct session *s, char *err, size_t errlen)
{
	unsigned flags = 0;
	int ret = 0;

	if (s->finished)
		return 0;
	s->finished = true;
	s->bytes_written = s->dev ? fp_dev_bytes_written(s->dev) : 0;
	if (s->may_alias)	/* the writes changed what the fingerprint reads */
		flags |= JOURNAL_RESTORE_SAME_DEVICE;
	else if (s->aliasing_ruled_out)
		flags |= JOURNAL_RESTORE_NO_ALIAS;
	if (s->consent == SESSION_WRITE && s->dev && s->dev != s->raw) {
		safety_restore_start();
		ret = journal_finish(s->dev, flags, safety_restore_note,
				     (void *)fp_dev_path(s->raw), &s->restore,
				     err, errlen);
		safety_restore_end();	/* also when the replay stopped early */
		if (ret)
			tell_restore_failed(s, ret, err, errlen);
		else if (!s->restore.deleted && !s->restore.nothing_written)
			ret = tell_journal_kept(s, err, errlen);
	}
	s->finish_rc = ret;
	return ret;
}

int session_close(struct session *s, char *err, size_t errlen)
{
	int ret = session_finish(s, err, errlen);

	if (s->dev && s->dev != s->raw)
		fp_dev_close(s->dev);
	fp_dev_close(s->raw);
	s->dev = s->raw = s->guard = NULL;
	release_disk_lock(s);
	if (writing(s->consent))
		safety_signals_uninstall();
	return ret;
}

int session_interrupted(void)
{
	return safety_interrupted();
}
