/* durable.c - see durable.h. */
#include <errno.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "durable.h"
#include "loopfile.h"
#include "sysfs.h"
#include "util.h"

/* Overlays on loop devices on overlays...: deeper is not followed. */
#define DURABLE_DEPTH_MAX 8

/* Undo mountinfo's octal escapes (\040 for a space, \054 for a comma in
 * an option's value) in place. */
static void unescape_octal(char *s)
{
	char *out = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/* The value of option name in a comma-separated option list: 1 and val,
 * or 0. */
static int option_value(char *opts, const char *name, char *val, size_t len)
{
	size_t n = strlen(name);

	for (char *o = strtok(opts, ","); o != NULL; o = strtok(NULL, ","))
		if (strncmp(o, name, n) == 0 && o[n] == '=') {
			unescape_octal(o + n + 1);
			return snprintf(val, len, "%s", o + n + 1) < (int)len;
		}
	return 0;
}

/* A mount's file system type and super options, from mountinfo. */
struct mount_line {
	char fstype[64];
	char opts[4096];
};

/* Whether the mountinfo line is a mount of device major:minor (m filled). */
static bool line_of_dev(const char *line, unsigned major, unsigned minor,
			struct mount_line *m)
{
	unsigned ma, mi;
	const char *tail = strstr(line, " - ");

	return tail != NULL && sscanf(line, "%*u %*u %u:%u", &ma, &mi) == 2 &&
	       ma == major && mi == minor &&
	       sscanf(tail, " - %63s %*s %4095s", m->fstype, m->opts) == 2;
}

/* The first mount of device major:minor: 1 and m, 0 when it is mounted
 * nowhere, -errno when the file cannot be read. */
static int find_mount(const char *mountinfo, unsigned major, unsigned minor,
		      struct mount_line *m)
{
	FILE *f = fopen(mountinfo, "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (f == NULL)
		return -errno;
	while (!found && getline(&line, &cap, f) > 0)
		found = line_of_dev(line, major, minor, m);
	free(line);
	fclose(f);
	return found;
}

int durable_overlay_upper(const char *mountinfo, unsigned major, unsigned minor,
			  char *upper, size_t len)
{
	struct mount_line m;
	int rc = find_mount(mountinfo, major, minor, &m);

	if (rc <= 0 || strcmp(m.fstype, "overlay") != 0)
		return rc < 0 ? rc : 0;
	return option_value(m.opts, "upperdir", upper, len);
}

static int dir_in_memory(const char *sys, const char *mountinfo, const char *dir,
			 int depth, char *what, size_t len);

/* A disk that is memory: a RAM disk (brd: ram0, ram1...) or zram. */
static int disk_in_memory(const char *sys, dev_t rdev, char *what, size_t len)
{
	unsigned ma, mi;
	char dir[PATH_MAX];
	const char *name;

	if (sysfs_disk_devno(sys, major(rdev), minor(rdev), &ma, &mi) < 0 ||
	    sysfs_block_dir(sys, ma, mi, dir, sizeof(dir)) < 0 ||
	    (name = strrchr(dir, '/')) == NULL)
		return 0;
	name++;
	if (strncmp(name, "zram", 4) == 0 ||
	    (strncmp(name, "ram", 3) == 0 && name[3] >= '0' && name[3] <= '9')) {
		snprintf(what, len, "%s, a disk in memory", name);
		return 1;
	}
	return 0;
}

static int block_in_memory(const char *sys, const char *mountinfo, dev_t rdev,
			   int depth, char *what, size_t len);

/* The file system of a loop device's file that no longer has a name
 * (deleted, or its file system unmounted lazily; its path, if any, leads
 * elsewhere), found by the file's device number: in memory when that is
 * tmpfs or ramfs or a disk in memory, and 2 when it is mounted nowhere:
 * where the file lives cannot be told then, and a journal must not bet
 * on it. */
static int unnamed_file_in_memory(const char *sys, const char *mountinfo, dev_t dev,
				  int depth, char *what, size_t len)
{
	struct mount_line m;
	char inner[256];
	int rc = find_mount(mountinfo, major(dev), minor(dev), &m);

	if (rc < 0)
		return 0;
	if (rc == 0) {
		snprintf(what, len, "a loop device over a file that has no name, on a "
			 "file system mounted nowhere: whether it survives a power loss "
			 "cannot be told");
		return 2;
	}
	if (strcmp(m.fstype, "tmpfs") == 0 || strcmp(m.fstype, "ramfs") == 0) {
		snprintf(what, len, "a loop device over a deleted file in %s", m.fstype);
		return 1;
	}
	if (major(dev) == 0 ||
	    (rc = block_in_memory(sys, mountinfo, dev, depth + 1, inner, sizeof(inner))) == 0)
		return 0;
	snprintf(what, len, "a loop device over a deleted file on %s", inner);
	return rc;
}

/* A file system on block device rdev: in memory when the disk is, or when
 * it is a loop device over a file that is (1), or over a file that cannot
 * be found (2). */
static int block_in_memory(const char *sys, const char *mountinfo, dev_t rdev,
			   int depth, char *what, size_t len)
{
	struct loopfile f;
	char dir[PATH_MAX], inner[256];
	int rc = loopfile_data(sys, major(rdev), minor(rdev), &f);

	if (depth > DURABLE_DEPTH_MAX)
		return 0;
	if (rc == -ESTALE) {
		snprintf(what, len, "a loop device over a file that has no name and "
			 "cannot be identified: whether it survives a power loss cannot be "
			 "told");
		return 2;
	}
	if (rc != 1)
		return disk_in_memory(sys, rdev, what, len);
	if (f.rdev != 0)
		return disk_in_memory(sys, f.rdev, what, len);
	if (!f.named)
		return unnamed_file_in_memory(sys, mountinfo, f.dev, depth, what, len);
	util_dir_of(f.path, dir, sizeof(dir));
	if ((rc = dir_in_memory(sys, mountinfo, dir, depth + 1, inner, sizeof(inner))) == 0)
		return 0;
	snprintf(what, len, "a loop device over '%s', in %s", f.path, inner);
	return rc;
}

static int dir_in_memory(const char *sys, const char *mountinfo, const char *dir,
			 int depth, char *what, size_t len)
{
	char upper[PATH_MAX], inner[256];
	struct statfs fs;
	struct stat st;

	if (depth > DURABLE_DEPTH_MAX || statfs(dir, &fs) != 0 || stat(dir, &st) != 0)
		return 0;	/* unknown: creating the file will tell */
	if ((unsigned long)fs.f_type == TMPFS_MAGIC ||
	    (unsigned long)fs.f_type == RAMFS_MAGIC) {
		snprintf(what, len, "tmpfs or ramfs");
		return 1;
	}
	if ((unsigned long)fs.f_type == OVERLAYFS_SUPER_MAGIC) {
		/* what is written goes to the upper layer */
		int rc;

		if (durable_overlay_upper(mountinfo, major(st.st_dev), minor(st.st_dev),
					  upper, sizeof(upper)) != 1 ||
		    (rc = dir_in_memory(sys, mountinfo, upper, depth + 1, inner,
					sizeof(inner))) == 0)
			return 0;
		snprintf(what, len, "an overlay whose upper layer is in %s", inner);
		return rc;
	}
	return block_in_memory(sys, mountinfo, st.st_dev, depth, what, len);
}

int durable_in_memory(const char *sys, const char *mountinfo, const char *dir,
		      char *what, size_t len)
{
	return dir_in_memory(sys, mountinfo, dir, 0, what, len);
}
