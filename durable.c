/* durable.c - see durable.h. */
#include <errno.h>
#include <linux/magic.h>
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

/* One mountinfo line: its upper directory when it is the overlay mounted
 * as major:minor. */
static int line_upper(char *line, unsigned major, unsigned minor, char *upper,
		      size_t len)
{
	char fstype[64], opts[4096];
	unsigned ma, mi;
	char *tail = strstr(line, " - ");

	if (tail == NULL || sscanf(line, "%*u %*u %u:%u", &ma, &mi) != 2 ||
	    ma != major || mi != minor ||
	    sscanf(tail, " - %63s %*s %4095s", fstype, opts) != 2 ||
	    strcmp(fstype, "overlay") != 0)
		return 0;
	return option_value(opts, "upperdir", upper, len);
}

int durable_overlay_upper(const char *mountinfo, unsigned major, unsigned minor,
			  char *upper, size_t len)
{
	FILE *f = fopen(mountinfo, "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (f == NULL)
		return -errno;
	while (!found && getline(&line, &cap, f) > 0)
		found = line_upper(line, major, minor, upper, len);
	free(line);
	fclose(f);
	return found;
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

/* A file system on block device rdev: in memory when the disk is, or when
 * it is a loop device over a file that is. */
static int block_in_memory(const char *sys, const char *mountinfo, dev_t rdev,
			   int depth, char *what, size_t len)
{
	struct loopfile f;
	char dir[PATH_MAX], inner[256];

	if (loopfile_data(sys, major(rdev), minor(rdev), &f) != 1)
		return disk_in_memory(sys, rdev, what, len);
	if (f.rdev != 0)
		return disk_in_memory(sys, f.rdev, what, len);
	if (!f.named)
		return 0;
	util_dir_of(f.path, dir, sizeof(dir));
	if (dir_in_memory(sys, mountinfo, dir, depth + 1, inner, sizeof(inner)) != 1)
		return 0;
	snprintf(what, len, "a loop device over '%s', in %s", f.path, inner);
	return 1;
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
		if (durable_overlay_upper(mountinfo, major(st.st_dev), minor(st.st_dev),
					  upper, sizeof(upper)) != 1 ||
		    dir_in_memory(sys, mountinfo, upper, depth + 1, inner,
				  sizeof(inner)) != 1)
			return 0;
		snprintf(what, len, "an overlay whose upper layer is in %s", inner);
		return 1;
	}
	return block_in_memory(sys, mountinfo, st.st_dev, depth, what, len);
}

int durable_in_memory(const char *sys, const char *mountinfo, const char *dir,
		      char *what, size_t len)
{
	return dir_in_memory(sys, mountinfo, dir, 0, what, len);
}
