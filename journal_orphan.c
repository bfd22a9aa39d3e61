/* journal_orphan.c - unfinished journals whose device is gone, matched to
 * a device by their data; journals too damaged to be read as one.
 *
 * An image moved to another file system after a crash (a copy, then an
 * unlink: a new inode), or copied elsewhere and the original deleted, is
 * no longer the file its journal names, and the search by identity
 * (journal_find_pending()) found nothing: "nothing to restore" (status 0)
 * while the image still held the test's data, and a new test of it was
 * allowed.  Such a journal names a file that is no longer at its path.
 * When the device asked about has its size and the blocks it
 * fingerprinted outside the test's area read the same there (a test that
 * covered the whole image left none to compare: then size alone), that
 * device may well be the image moved: the search refuses it (a test would
 * overwrite what only that journal can put back), and "restore --force"
 * replays it.  Blank images fingerprint alike, so an unrelated image of
 * the same size can be taken for the moved one: it is refused too, which
 * costs a message and a choice, never data.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev.h"
#include "errmsg.h"
#include "journal.h"
#include "journal_format.h"
#include "loopfile.h"
#include "units.h"
#include "util.h"

/* Whether the file at path is no longer the one with identity (dev, ino,
 * birth): gone, or another file in its place. */
static bool file_left(const char *path, uint64_t dev, uint64_t ino,
		      uint64_t birth_ns)
{
	struct stat st;
	uint64_t now;

	if (stat(path, &st) != 0)
		return true;
	if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)
		return true;
	now = util_birth_ns(AT_FDCWD, path, 0);
	return birth_ns != 0 && now != 0 && now != birth_ns;
}

/* The journal's device is an image file (or the file behind a loop
 * device) that is no longer where the journal says; its path into was. */
static bool device_gone(const struct jr_identity *id, char *was, size_t len)
{
	char path[PATH_MAX];
	struct stat node;

	util_copy_str(was, len, id->path);
	if (id->kind == FP_DEV_FILE)
		return file_left(id->path, id->file_dev, id->file_ino,
				 id->file_birth_ns);
	/* "loop:ino=DEV:INO (PATH)": the name it was attached by */
	if (id->kind != FP_DEV_BLOCK ||
	    loopfile_serial_node(id->serial, &node) != 1 ||
	    !S_ISREG(node.st_mode) ||
	    loopfile_serial_name(id->serial, path, sizeof(path)) != 1)
		return false;
	util_copy_str(was, len, path);
	return file_left(path, (uint64_t)node.st_dev, (uint64_t)node.st_ino,
			 id->file_birth_ns);
}

/* Whether the device open as fd (size bytes) may hold the journal's
 * data: its size, and every fingerprinted block outside the test's area
 * as the journal saw it; *same counts those blocks. */
static bool data_matches(const struct jr_header *h, int fd, uint64_t size,
			 unsigned *same)
{
	const struct jr_slot *s = &h->slot;
	uint32_t sector = h->id.sector_bytes;
	size_t block = (size_t)((JR_FP_BLOCK_BYTES + sector - 1) / sector * sector);
	unsigned char *buf;
	bool all = true;

	*same = 0;
	if (h->slots != JR_SLOTS_OK || h->spent || h->id.size_bytes != size)
		return false;
	buf = malloc(block);
	if (buf == NULL)
		return false;
	for (uint32_t i = 0; all && i < s->nfp; i++) {
		const struct jr_fingerprint *f = &s->fp[i];

		if (f->offset + block > s->area_lo && f->offset < s->area_hi)
			continue;	/* the test may have written it */
		all = util_pread_full(fd, buf, block, f->offset) == (ssize_t)block &&
		      jr_fnv1a64(buf, block) == f->hash;
		*same += all;
	}
	free(buf);
	return all;
}

/* Whether the journal a pointer names lies in one of the directories
 * looked in, where it is counted itself (a journal kept under
 * FLASHPROBE_STATE_DIR has a pointer at the default place too). */
static bool counted_there(const char *journal, const char *const *dirs, size_t ndirs)
{
	char parent[PATH_MAX];

	util_dir_of(journal, parent, sizeof(parent));
	for (size_t i = 0; i < ndirs; i++)
		if (jr_same_dir(parent, dirs[i]))
			return true;
	return false;
}

/* The journal at dir/name (following a pointer file, unless its journal
 * is counted in one of dirs), read into h. */
static bool read_journal(const char *dir, const char *name, const char *const *dirs,
			 size_t ndirs, char *path, size_t len, struct jr_header *h)
{
	struct jr_pointer p;
	int fd;

	if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len)
		return false;
	if (jr_pointer_read(path, &p) == 1) {
		if (counted_there(p.journal, dirs, ndirs))
			return false;
		util_copy_str(path, len, p.journal);
	}
	if (jr_header_read(path, false, &fd, h, NULL, 0) != 0)
		return false;
	close(fd);
	return true;
}

/* How many orphans in dir the device open as fd may hold the data of;
 * the first one's path into found (when found is empty), its device's
 * former path into was, the blocks compared into same. */
static unsigned orphans_in(const char *const *dirs, size_t ndirs, size_t i, int fd,
			   uint64_t size, char *found, size_t foundlen, char *was,
			   size_t waslen, unsigned *same)
{
	char path[PATH_MAX], gone[PATH_MAX];
	struct jr_header h;
	struct dirent *e;
	unsigned hits = 0, n;
	const char *dir = dirs[i];
	DIR *d = opendir(dir);

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (!jr_is_journal_name(e->d_name) ||
		    !read_journal(dir, e->d_name, dirs, ndirs, path, sizeof(path), &h) ||
		    !device_gone(&h.id, gone, sizeof(gone)) ||
		    !data_matches(&h, fd, size, &n))
			continue;
		if (hits++ == 0 && found[0] == '\0') {
			util_copy_str(found, foundlen, path);
			util_copy_str(was, waslen, gone);
			*same = n;
		}
	}
	closedir(d);
	return hits;
}

int jr_find_orphan(const char *device, char *found, size_t foundlen,
		   char *err, size_t errlen)
{
	const char *dirs[JOURNAL_STATE_DIRS_MAX];
	size_t ndirs = journal_state_dirs(dirs);
	char was[PATH_MAX] = "";
	unsigned same = 0, hits = 0;
	off_t size;
	int fd = open(device, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	found[0] = '\0';

	if (fd < 0)
		return 0;	/* the caller's own open says why */
	size = lseek(fd, 0, SEEK_END);
	for (size_t i = 0; size > 0 && i < ndirs; i++)
		hits += orphans_in(dirs, ndirs, i, fd, (uint64_t)size, found,
				   foundlen, was, sizeof(was), &same);
	close(fd);
	if (hits == 0)
		return 0;
	if (hits > 1) {
		/* --force would replay one of them, maybe another image's */
		fp_errf(err, errlen, "no journal of its own, but %u unfinished "
		    "journals whose images are gone (the first '%s', of '%s') "
		    "fit its size and data, and --force cannot tell which: if it "
		    "is one of those images moved, put it back under its old name "
		    "and run 'flashprobe restore --force' on it there; nothing was "
		    "written", hits, found, was);
		found[0] = '\0';
		return -FP_EREFUSED;
	}
	fp_errf(err, errlen, "no journal of its own, but it may be '%s' moved or "
	    "copied, still holding test data: that file is no longer there, and "
	    "its unfinished journal '%s' is of this size%s.  If it is, run "
	    "'flashprobe restore --force %s'; if not, move that journal away; "
	    "nothing was written", was, found, same > 0 ?
	    " (and the blocks its test did not write read as they did then)" :
	    " (its test covered it all: nothing else to compare)", device);
	return -FP_EREFUSED;
}

/* ---- journals too damaged to be recognised ---- */

/* Not through a symbolic link: one planted in a state directory could
 * name any file (the device under test, say). */
static bool same_file(const char *path, const struct stat *want)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* Whether dir/name (path) is the file want, or a pointer file (into p)
 * naming it. */
static bool names_file(const char *dir, const char *name, const struct stat *want,
		       char *path, size_t len, struct jr_pointer *p)
{
	if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len)
		return false;
	if (jr_pointer_read(path, p) == 1)
		return same_file(p->journal, want);
	memset(p, 0, sizeof(*p));
	return same_file(path, want);
}

/* What the restore of a damaged journal refuses with: where it is named,
 * and what its card may hold. */
static void describe_damaged(const char *journal, const char *named_by,
			     const struct jr_pointer *p, char *err, size_t errlen)
{
	static const char what[] = "does not read as a flashprobe journal (its "
				   "start is damaged or it was cut short) and "
				   "cannot be replayed, --force included; "
				   "nothing was written";
	char a[32], b[32];

	if (p->journal[0] == '\0') {
		fp_errf(err, errlen, "'%s' lies in the journal directory under a "
		    "journal's name but %s.  Its card may hold test data: if that "
		    "data does not matter or was restored another way, remove '%s' "
		    "to test again", journal, what, journal);
		return;
	}
	fp_errf(err, errlen, "'%s' is the journal of an unfinished test of '%s' "
	    "(named by '%s') but %s.  '%s' may hold test data in bytes %s to %s: "
	    "if a copy of the journal exists, put it back and run this restore "
	    "again; if that data does not matter or was restored another way, "
	    "remove '%s' and '%s' to test again", journal, p->device, named_by,
	    what, p->device, units_format_bytes(p->area_lo, a, sizeof(a)),
	    units_format_bytes(p->area_hi, b, sizeof(b)), journal, named_by);
}

int journal_check_damaged(const char *path, char *err, size_t errlen)
{
	const char *dirs[JOURNAL_STATE_DIRS_MAX];
	size_t ndirs = journal_state_dirs(dirs);
	char named_by[PATH_MAX];
	struct jr_pointer p;
	struct stat want;
	int found = 0;

	if (stat(path, &want) != 0 || !S_ISREG(want.st_mode) ||
	    journal_is_journal_file(path))
		return 0;
	for (size_t i = 0; i < ndirs && !found; i++) {
		struct dirent *e;
		DIR *d = opendir(dirs[i]);

		while (d != NULL && !found && (e = readdir(d)) != NULL)
			found = jr_is_journal_name(e->d_name) &&
				names_file(dirs[i], e->d_name, &want, named_by,
					   sizeof(named_by), &p);
		if (d != NULL)
			closedir(d);
	}
	if (!found)
		return 0;
	describe_damaged(path, named_by, &p, err, errlen);
	return -EBADMSG;
}
