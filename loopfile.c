/* loopfile.c - see loopfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "loopfile.h"
#include "sysfs.h"

/* A chain of loop devices deeper than this is not followed. */
#define LOOPFILE_CHAIN_MAX 8

/* The kernel's identity of the file behind the loop device diskdir, asked
 * through its node in /dev (which must be that very device): false when
 * the node cannot be opened or is another device. */
static bool kernel_identity(const char *diskdir, struct loopfile *f)
{
	const char *name = strrchr(diskdir, '/');
	char node[PATH_MAX], num[32];
	struct loop_info64 info;
	unsigned maj, min;
	struct stat st;
	bool ok;
	int fd;

	if (name == NULL || sysfs_read_attr(diskdir, "dev", num, sizeof(num)) != 0 ||
	    sscanf(num, "%u:%u", &maj, &min) != 2 ||
	    snprintf(node, sizeof(node), "/dev%s", name) >= (int)sizeof(node))
		return false;
	fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) &&
	     st.st_rdev == makedev(maj, min) &&
	     ioctl(fd, LOOP_GET_STATUS64, &info) == 0;
	close(fd);
	if (!ok)
		return false;
	/* The kernel encodes these as stat() does for st_dev. */
	f->dev = (dev_t)info.lo_device;
	f->ino = (ino_t)info.lo_inode;
	f->rdev = (dev_t)info.lo_rdevice;
	return true;
}

/* Whether name leads to the file f (with known identity), or, without
 * one, to any file, whose identity f then takes. */
static bool name_leads_there(const char *name, bool known, struct loopfile *f)
{
	struct stat st;

	if (stat(name, &st) != 0)
		return false;
	if (known)
		return st.st_dev == f->dev && st.st_ino == f->ino;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->rdev = S_ISBLK(st.st_mode) ? st.st_rdev : 0;
	return true;
}

/* Removes the mark d_path() puts after the name of a deleted file: true
 * when name ended in it. */
static bool strip_deleted_mark(char *name)
{
	static const char mark[] = " (deleted)";
	size_t n = strlen(name), m = strlen(mark);

	if (n <= m || strcmp(name + n - m, mark) != 0)
		return false;
	name[n - m] = '\0';
	return true;
}

int loopfile_backing(const char *diskdir, struct loopfile *f)
{
	char name[PATH_MAX];
	bool known;

	memset(f, 0, sizeof(*f));
	if (sysfs_read_raw(diskdir, "loop/backing_file", name, sizeof(name)) != 0 ||
	    name[0] == '\0')
		return 0;
	known = kernel_identity(diskdir, f);
	f->named = name_leads_there(name, known, f);
	if (!f->named && strip_deleted_mark(name))
		f->named = name_leads_there(name, known, f);
	if (f->named)
		snprintf(f->path, sizeof(f->path), "%s", name);
	return known || f->named ? 1 : -ESTALE;
}

int loopfile_data(const char *root, unsigned major, unsigned minor,
		  struct loopfile *f)
{
	for (int depth = 0; depth < LOOPFILE_CHAIN_MAX; depth++) {
		char dir[PATH_MAX];
		int rc = sysfs_block_dir(root, major, minor, dir, sizeof(dir));

		if (rc < 0)
			return rc;
		if (sysfs_is_partition(dir))
			*strrchr(dir, '/') = '\0';
		rc = loopfile_backing(dir, f);
		if (rc <= 0 || f->rdev == 0)
			return rc;
		major = major(f->rdev);	/* a loop device over a block device */
		minor = minor(f->rdev);
	}
	return -ELOOP;
}
