/* outfile.c - output files checked on the descriptor that is written.
 *
 * The checks of a name and the open of that name are two steps: between
 * them, a link can be pointed at the card or an image, or the name can
 * become another device's unfinished journal.  So the name is opened
 * without following a final symbolic link and without truncating, and
 * what was opened is checked (a regular file, not a journal, not the data
 * of the device under test); only then is it emptied and written. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "journal.h"
#include "outfile.h"
#include "safety.h"

/* A created file may become a second name of nothing else; an existing
 * one is opened as it is, O_NONBLOCK so that a fifo put there does not
 * block. */
#define OUTFILE_CREATE (O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
#define OUTFILE_EXISTING (O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Why the open file fd (named path) must not be written, into err; 0 or
 * -EINVAL. */
static int refuse_opened(const char *what, const char *path, int fd,
			 const char *device, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fp_errf(err, errlen, "%s '%s' is not a regular file", what, path);
		return -EINVAL;
	}
	if (journal_is_journal_fd(fd)) {
		fp_errf(err, errlen, "%s '%s' is a flashprobe journal: it would be "
			"overwritten (replay it with 'flashprobe restore')", what, path);
		return -EINVAL;
	}
	if (device && safety_check_stream(what, fd, device, err, errlen))
		return -EINVAL;
	return 0;
}

int outfile_check(const char *what, const char *path, const char *device,
		  char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0)
		return 0;	/* created at the end, with the same rules */
	if (S_ISLNK(st.st_mode)) {
		fp_errf(err, errlen, "%s '%s' is a symbolic link: give the file it "
			"names", what, path);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		fp_errf(err, errlen, "%s '%s' is not a regular file", what, path);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* the open at the end says why */
	rc = refuse_opened(what, path, fd, device, err, errlen);
	close(fd);
	return rc;
}

/* An existing name: a regular file, opened as it is.  ENOENT when it
 * went away meanwhile. */
static int open_existing(const char *what, const char *path, char *err,
			 size_t errlen)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) != 0)
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		fp_errf(err, errlen, "%s '%s' became a symbolic link during the run: "
			"not written", what, path);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		fp_errf(err, errlen, "%s '%s' is not a regular file: not written",
			what, path);
		return -EINVAL;
	}
	fd = open(path, OUTFILE_EXISTING);
	if (fd < 0 && errno == ELOOP)
		fp_errf(err, errlen, "%s '%s' became a symbolic link during the run: "
			"not written", what, path);
	return fd < 0 ? -errno : fd;
}

int outfile_open(const char *what, const char *path, const char *device,
		 FILE **out, char *err, size_t errlen)
{
	bool created = false;
	int fd = -ENOENT, rc;

	*out = NULL;
	for (int tries = 0; tries < 2 && fd == -ENOENT; tries++) {
		fd = open(path, OUTFILE_CREATE, 0666);
		created = fd >= 0;
		if (fd < 0 && errno == EEXIST)
			fd = open_existing(what, path, err, errlen);
		else if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		if (!err[0])
			fp_errf(err, errlen, "cannot write %s '%s': %s", what, path,
				strerror(-fd));
		return fd;
	}
	rc = refuse_opened(what, path, fd, device, err, errlen);
	if (rc == 0 && ftruncate(fd, 0) != 0) {
		rc = -errno;
		fp_errf(err, errlen, "cannot write %s '%s': %s", what, path, strerror(-rc));
	}
	if (rc == 0 && (*out = fdopen(fd, "w")) == NULL) {
		rc = -errno;
		fp_errf(err, errlen, "cannot write %s '%s': %s", what, path, strerror(-rc));
	}
	if (rc) {
		close(fd);
		if (created)
			unlink(path);
	}
	return rc;
}
