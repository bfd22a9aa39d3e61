/* safety.c - the write-safety gate, data signatures, typed consent and
 * interruption handling.
 *
 * The gate works on device numbers, not names: a disk can be mounted
 * under any alias (/dev/disk/by-id/..., a private mknod), so the target's
 * major:minor is mapped to its sysfs directory (/sys/dev/block/M:m), the
 * whole disk and every partition of it are collected, and each of them is
 * looked up in /proc/self/mountinfo, /proc/swaps and its holders/
 * directory (util-linux lib/ismounted.c checks partitions the same way;
 * fio #1382 shows what happens when only the given node is checked).
 * What this cannot see (mounts in other mount namespaces, device-mapper
 * set up elsewhere) is caught by the O_EXCL open that follows, which
 * conflicts with every other exclusive holder.  O_EXCL does not conflict
 * with a process that opened the disk (or an image file) without it: for
 * those the gate only warns, when /proc shows one holding the target
 * open for writing (procfd.c), and the device layer's lock stops a second
 * flashprobe.
 */
#define _XOPEN_SOURCE 700	/* realpath(), symlinks: POSIX 2008 + XSI */
#define _FILE_OFFSET_BITS 64

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "clock.h"
#include "errmsg.h"
#include "dev.h"
#include "devspec.h"
#include "sysfs.h"
#include "journal.h"
#include "procfd.h"
#include "safety.h"

/* ---- sysfs: the disk and its partitions ---- */

/* One block device of a disk: the disk itself or a partition. */
struct member {
	char name[SAFETY_NAME_MAX];	/* sysfs name, "sdb1" */
	char dir[PATH_MAX];		/* its sysfs directory */
	unsigned major, minor;
};

struct members {
	struct member *v;
	size_t n, cap;
};

static void members_free(struct members *ms)
{
	free(ms->v);
	ms->v = NULL;
	ms->n = ms->cap = 0;
}

static int members_add(struct members *ms, const char *dir, const char *name)
{
	char line[64];
	struct member *m;
	int rc;

	if (ms->n == ms->cap) {
		size_t cap = ms->cap ? ms->cap * 2 : 8;
		struct member *v = realloc(ms->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		ms->v = v;
		ms->cap = cap;
	}
	m = &ms->v[ms->n];
	rc = sysfs_read_attr(dir, "dev", line, sizeof(line));
	if (rc < 0)
		return rc;
	if (sscanf(line, "%u:%u", &m->major, &m->minor) != 2)
		return -EIO;
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->dir, sizeof(m->dir), "%s", dir);
	ms->n++;
	return 0;
}

static const struct member *members_find(const struct members *ms,
					 unsigned major, unsigned minor)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->v[i].major == major && ms->v[i].minor == minor)
			return &ms->v[i];
	return NULL;
}

static const char *last_component(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

/* "/dev/NAME" for a sysfs name; '!' stands for '/' there (cciss!c0d0). */
static void dev_node_of(const char *name, char *buf, size_t len)
{
	if (snprintf(buf, len, "/dev/%s", name) >= (int)len)
		buf[0] = '\0';	/* a cut name would point elsewhere */
	for (char *p = buf; *p != '\0'; p++)
		if (*p == '!')
			*p = '/';
}

/* The disk directory and every partition directory below it. */
static int collect_members(const char *diskdir, struct members *ms)
{
	char sub[PATH_MAX + 2];
	struct dirent *e;
	DIR *d;
	int rc = members_add(ms, diskdir, last_component(diskdir));

	if (rc < 0)
		return rc;
	d = opendir(diskdir);
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", diskdir, e->d_name) >=
			    (int)sizeof(sub))
			continue;
		if (!sysfs_is_partition(sub))
			continue;
		rc = members_add(ms, sub, e->d_name);
		if (rc < 0)
			break;
	}
	closedir(d);
	return rc;
}

/* The disk of major:minor and all its partitions; diskdir gets the
 * disk's sysfs directory, *is_part whether major:minor is a partition. */
static int disk_members(const struct sysfs_roots *r, unsigned major,
			unsigned minor, struct members *ms, char *diskdir,
			bool *is_part)
{
	char dir[PATH_MAX];
	int rc = sysfs_block_dir(r->sys, major, minor, dir, sizeof(dir));

	if (rc < 0)
		return rc;
	*is_part = sysfs_is_partition(dir);
	snprintf(diskdir, PATH_MAX, "%s", dir);
	if (*is_part) {
		char *slash = strrchr(diskdir, '/');

		if (slash == NULL)
			return -EIO;
		*slash = '\0';
	}
	return collect_members(diskdir, ms);
}

int safety_dev_on_disk_at(const struct sysfs_roots *r, const char *device_path,
			  unsigned major, unsigned minor)
{
	struct members ms = { 0 };
	char diskdir[PATH_MAX];
	struct stat st;
	bool is_part;
	int rc;

	if (devspec_is_sim(device_path))
		return 0;
	if (stat(device_path, &st) != 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return 0;
	rc = disk_members(r, major(st.st_rdev), minor(st.st_rdev), &ms, diskdir,
			  &is_part);
	if (rc == 0)
		rc = members_find(&ms, major, minor) != NULL;
	members_free(&ms);
	return rc;
}

int safety_dev_on_disk(const char *device_path, unsigned major,
		       unsigned minor)
{
	return safety_dev_on_disk_at(&sysfs_roots_default, device_path, major,
				     minor);
}

int safety_device_serial_at(const struct sysfs_roots *r, const char *path,
			    char *buf, size_t len)
{
	static const char *const keys[] = {
		"device/serial", "device/cid", "device/wwid", "wwid",
		"loop/backing_file",
	};
	char dir[PATH_MAX], line[512];
	struct stat st;
	int rc;

	buf[0] = '\0';
	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	rc = sysfs_block_dir(r->sys, major(st.st_rdev), minor(st.st_rdev), dir,
			     sizeof(dir));
	if (rc < 0)
		return rc;
	if (sysfs_is_partition(dir))
		*strrchr(dir, '/') = '\0';
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (sysfs_read_attr(dir, keys[i], line, sizeof(line)) == 0 &&
		    line[0] != '\0') {
			/* A loop device is its backing file: a journal must
			 * not follow the number to another file. */
			snprintf(buf, len, "%s%s",
				 i == 4 ? "loop:" : "", line);
			return 0;
		}
	}
	return 0;
}

int safety_device_serial(const char *path, char *buf, size_t len)
{
	return safety_device_serial_at(&sysfs_roots_default, path, buf, len);
}

/* ---- what uses a device ---- */

/* Undo the octal escapes of /proc/self/mountinfo and /proc/swaps. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r != '\0'; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' &&
		    r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 +
				      (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* The member a mount source names, by the source's device number: btrfs
 * reports an anonymous major:minor in mountinfo, its source is real. */
static const struct member *member_of_node(const struct members *ms,
					   const char *node)
{
	struct stat st;

	if (node[0] != '/' || stat(node, &st) != 0 || !S_ISBLK(st.st_mode))
		return NULL;
	return members_find(ms, major(st.st_rdev), minor(st.st_rdev));
}

/* One mountinfo line: "id parent M:m root mountpoint opts ... - fs src". */
static const struct member *mount_line_member(const struct members *ms,
					      char *line, char *mnt,
					      size_t mntlen)
{
	unsigned major, minor;
	char point[PATH_MAX], src[PATH_MAX], *sep;
	const struct member *m;

	if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &major, &minor,
		   point) != 3)
		return NULL;
	unescape_octal(point);
	snprintf(mnt, mntlen, "%s", point);
	m = members_find(ms, major, minor);
	if (m != NULL)
		return m;
	sep = strstr(line, " - ");
	if (sep == NULL || sscanf(sep + 3, "%*s %4095s", src) != 1)
		return NULL;
	unescape_octal(src);
	return member_of_node(ms, src);
}

static const struct member *find_mounted(const struct sysfs_roots *r,
					 const struct members *ms, char *mnt,
					 size_t mntlen)
{
	char path[PATH_MAX], *line = NULL;
	const struct member *m = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/self/mountinfo", r->proc);
	f = fopen(path, "re");
	if (f == NULL)
		return NULL;
	while (m == NULL && getline(&line, &cap, f) > 0)
		m = mount_line_member(ms, line, mnt, mntlen);
	free(line);
	fclose(f);
	return m;
}

/* Calls fn for the file name of each active swap area until it returns
 * true; returns whether one did. */
static bool each_swap(const struct sysfs_roots *r,
		      bool (*fn)(const char *name, void *arg), void *arg)
{
	char path[PATH_MAX], name[PATH_MAX], *line = NULL;
	size_t cap = 0;
	bool hit = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/swaps", r->proc);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	/* The first line is the column header. */
	if (getline(&line, &cap, f) > 0) {
		while (!hit && getline(&line, &cap, f) > 0) {
			if (sscanf(line, "%4095s", name) != 1)
				continue;
			unescape_octal(name);
			hit = fn(name, arg);
		}
	}
	free(line);
	fclose(f);
	return hit;
}

struct swap_member_ctx {
	const struct members *ms;
	const struct member *hit;
};

static bool swap_is_member(const char *name, void *arg)
{
	struct swap_member_ctx *c = arg;

	c->hit = member_of_node(c->ms, name);
	return c->hit != NULL;
}

static bool dir_has_entries(const char *dir)
{
	struct dirent *e;
	bool any = false;
	DIR *d = opendir(dir);

	if (d == NULL)
		return false;
	while (!any && (e = readdir(d)) != NULL)
		any = e->d_name[0] != '.';
	closedir(d);
	return any;
}

static const struct member *find_held(const struct members *ms, char *holder,
				      size_t len)
{
	char dir[PATH_MAX + 16];

	for (size_t i = 0; i < ms->n; i++) {
		struct dirent *e;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s/holders", ms->v[i].dir);
		if (!dir_has_entries(dir))
			continue;
		d = opendir(dir);
		holder[0] = '\0';
		while (d != NULL && (e = readdir(d)) != NULL)
			if (e->d_name[0] != '.')
				snprintf(holder, len, "%s", e->d_name);
		if (d != NULL)
			closedir(d);
		return &ms->v[i];
	}
	return NULL;
}

/* Read-only by sysfs or by the kernel's BLKROGET on the node itself. */
static bool block_readonly(const char *path, const char *sysdir)
{
	char line[16];
	int ro = 0, fd;

	if (sysfs_read_attr(sysdir, "ro", line, sizeof(line)) == 0 &&
	    strcmp(line, "1") == 0)
		return true;
	/* O_NONBLOCK: do not wait for media in a removable drive. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (ioctl(fd, BLKROGET, &ro) != 0)
		ro = 0;
	close(fd);
	return ro != 0;
}

/* ---- the gate ---- */

/* Refusals that apply to the whole disk: mounted, swap, held. */
static int check_disk_in_use(const struct sysfs_roots *r, const char *path,
			     const struct members *ms,
			     struct safety_report *rep, char *err,
			     size_t errlen)
{
	struct swap_member_ctx sc = { .ms = ms };
	char where[PATH_MAX], node[SAFETY_NAME_MAX + 8];
	const struct member *m;

	m = find_mounted(r, ms, where, sizeof(where));
	if (m != NULL) {
		rep->mounted = true;
		dev_node_of(m->name, rep->busy, sizeof(rep->busy));
		fp_errf(err, errlen, "refusing to write '%s': '%s' is mounted on "
		    "'%s'", path, rep->busy, where);
		return -EBUSY;
	}
	if (each_swap(r, swap_is_member, &sc)) {
		rep->swap = true;
		dev_node_of(sc.hit->name, rep->busy, sizeof(rep->busy));
		fp_errf(err, errlen, "refusing to write '%s': '%s' is used as swap",
		    path, rep->busy);
		return -EBUSY;
	}
	m = find_held(ms, where, sizeof(where));
	if (m != NULL) {
		rep->held = true;
		dev_node_of(m->name, rep->busy, sizeof(rep->busy));
		dev_node_of(where, node, sizeof(node));
		fp_errf(err, errlen, "refusing to write '%s': '%s' is held by '%s' "
		    "(device-mapper, md or LVM)", path, rep->busy, node);
		return -EBUSY;
	}
	return 0;
}

/* Fill the report's facts without refusing (read tests see them too). */
static void note_disk_in_use(const struct sysfs_roots *r,
			     const struct members *ms,
			     struct safety_report *rep)
{
	struct swap_member_ctx sc = { .ms = ms };
	char where[PATH_MAX];

	rep->mounted = find_mounted(r, ms, where, sizeof(where)) != NULL;
	rep->swap = each_swap(r, swap_is_member, &sc);
	rep->held = find_held(ms, where, sizeof(where)) != NULL;
}

static int check_block(const struct sysfs_roots *r, const char *path,
		       const struct stat *st,
		       enum safety_mode mode, struct safety_report *rep,
		       char *err, size_t errlen)
{
	struct members ms = { 0 };
	char diskdir[PATH_MAX];
	const struct member *self;
	bool is_part = false;
	int rc;

	rep->target = SAFETY_TARGET_DISK;
	rep->major = major(st->st_rdev);
	rep->minor = minor(st->st_rdev);
	rc = disk_members(r, rep->major, rep->minor, &ms, diskdir, &is_part);
	if (rc < 0) {
		members_free(&ms);
		if (mode == SAFETY_READ)
			return 0;
		/* Without sysfs nothing says what else is on this disk. */
		fp_errf(err, errlen, "refusing to write '%s': cannot check "
		    "whether it is in use: '%s/dev/block/%u:%u': %s", path,
		    r->sys, rep->major, rep->minor, strerror(-rc));
		return -FP_EREFUSED;
	}
	dev_node_of(last_component(diskdir), rep->disk, sizeof(rep->disk));
	self = members_find(&ms, rep->major, rep->minor);
	rep->readonly = block_readonly(path,
				       self != NULL ? self->dir : diskdir);
	if (is_part)
		rep->target = SAFETY_TARGET_PARTITION;
	if (is_part && mode == SAFETY_READ) {
		rep->partition_warning = true;
		snprintf(rep->warning, sizeof(rep->warning),
			 "'%s' is a partition: offsets are relative to its start, "
			 "not to the erase blocks of '%s'", path, rep->disk);
	}
	if (mode == SAFETY_READ) {
		note_disk_in_use(r, &ms, rep);
		members_free(&ms);
		return 0;
	}
	if (is_part) {
		fp_errf(err, errlen, "'%s' is a partition; run write tests on the "
		    "whole disk '%s'", path, rep->disk);
		rc = -EXDEV;
	} else {
		rc = check_disk_in_use(r, path, &ms, rep, err, errlen);
	}
	members_free(&ms);
	if (rc == 0 && rep->readonly) {
		fp_errf(err, errlen, "refusing to write '%s': the device is "
		    "read-only", path);
		rc = -EROFS;
	}
	return rc;
}

struct swap_file_ctx {
	dev_t dev;
	ino_t ino;
};

static bool swap_is_file(const char *name, void *arg)
{
	const struct swap_file_ctx *c = arg;
	struct stat st;

	return stat(name, &st) == 0 && S_ISREG(st.st_mode) &&
	       st.st_dev == c->dev && st.st_ino == c->ino;
}

/* The loop device whose backing file is st, if any (name into loop). */
static bool file_on_loop(const struct sysfs_roots *r, const struct stat *st,
			 char *loop, size_t len)
{
	char dir[PATH_MAX], sub[PATH_MAX + 300], back[PATH_MAX];
	struct dirent *e;
	struct stat bst;
	bool hit = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/block", r->sys);
	d = opendir(dir);
	while (d != NULL && !hit && (e = readdir(d)) != NULL) {
		char *del;

		if (strncmp(e->d_name, "loop", 4) != 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		if (sysfs_read_attr(sub, "loop/backing_file", back,
				    sizeof(back)) != 0)
			continue;
		del = strstr(back, " (deleted)");
		if (del != NULL)
			*del = '\0';
		hit = stat(back, &bst) == 0 && bst.st_dev == st->st_dev &&
		      bst.st_ino == st->st_ino;
		if (hit)
			dev_node_of(e->d_name, loop, len);
	}
	if (d != NULL)
		closedir(d);
	return hit;
}

static int check_file(const struct sysfs_roots *r, const char *path,
		      const struct stat *st,
		      enum safety_mode mode, struct safety_report *rep,
		      char *err, size_t errlen)
{
	struct swap_file_ctx sc = { st->st_dev, st->st_ino };

	rep->target = SAFETY_TARGET_FILE;
	if (mode == SAFETY_READ)
		return 0;
	if (journal_is_journal_file(path)) {
		fp_errf(err, errlen, "refusing to write '%s': it is a flashprobe "
		    "journal (replay it with 'flashprobe restore')", path);
		return -EBUSY;
	}
	if (each_swap(r, swap_is_file, &sc)) {
		rep->swap = true;
		snprintf(rep->busy, sizeof(rep->busy), "%s", path);
		fp_errf(err, errlen, "refusing to write '%s': it is used as swap",
		    path);
		return -EBUSY;
	}
	if (file_on_loop(r, st, rep->busy, sizeof(rep->busy))) {
		fp_errf(err, errlen, "refusing to write '%s': it is attached to "
		    "loop device '%s'", path, rep->busy);
		return -EBUSY;
	}
	return 0;
}

/* A process that holds the target open for writing is not stopped by
 * O_EXCL (it did not ask for exclusivity): say so, without refusing (a
 * tool that keeps an idle descriptor is common and harmless). */
static void warn_other_writer(const char *path, const struct stat *st,
			      struct safety_report *rep)
{
	struct procfd_user u;
	char who[64];

	if (procfd_find_user(st, true, &u) <= 0)
		return;
	procfd_describe(&u, who, sizeof(who));
	snprintf(rep->warning, sizeof(rep->warning), "warning: '%s' is open for "
		 "writing by %s: its writes would mix with the test's", path,
		 who);
}

int safety_check_target(const char *path, enum safety_mode mode,
			struct safety_report *rep, char *err, size_t errlen)
{
	return safety_check_target_at(&sysfs_roots_default, path, mode, rep,
				      err, errlen);
}

int safety_check_target_at(const struct sysfs_roots *r, const char *path,
			   enum safety_mode mode, struct safety_report *rep,
			   char *err, size_t errlen)
{
	struct stat st;
	int rc;

	memset(rep, 0, sizeof(*rep));
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || path[0] == '\0') {
		fp_errf(err, errlen, "no device given");
		return -EINVAL;
	}
	if (devspec_is_sim(path)) {
		rep->target = SAFETY_TARGET_SIM;
		return 0;
	}
	if (stat(path, &st) != 0) {
		rc = -errno;
		fp_errf(err, errlen, "cannot open '%s': %s", path, strerror(-rc));
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		fp_errf(err, errlen, "'%s' is a directory", path);
		return -EISDIR;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		fp_errf(err, errlen, "'%s' is not a block device or regular file",
		    path);
		return -ENOTBLK;
	}
	rc = S_ISBLK(st.st_mode) ? check_block(r, path, &st, mode, rep, err, errlen)
				 : check_file(r, path, &st, mode, rep, err, errlen);
	if (rc == 0 && mode == SAFETY_WRITE)
		warn_other_writer(path, &st, rep);
	return rc;
}

/* ---- outputs that must not land on the device under test ---- */

/* The output itself, or its directory when it does not exist yet. */
static int stat_output(const char *output, struct stat *st, bool *exists)
{
	const char *slash = strrchr(output, '/');
	char dir[PATH_MAX];

	*exists = stat(output, st) == 0;
	if (*exists)
		return 0;
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == output)
		snprintf(dir, sizeof(dir), "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - output),
			  output) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	return stat(dir, st) == 0 ? 0 : -errno;
}

/* Whether the output (stat of it, or of its directory) is on device: 1
 * yes, 0 no, a negative errno when sysfs cannot tell. */
static int output_on_device(const char *device, const struct stat *dev,
			    const struct stat *out, bool exists)
{
	int rc;

	if (exists && out->st_dev == dev->st_dev && out->st_ino == dev->st_ino)
		return 1;
	if (!S_ISBLK(dev->st_mode))
		return 0;
	if (exists && S_ISBLK(out->st_mode)) {
		rc = safety_dev_on_disk(device, major(out->st_rdev),
					minor(out->st_rdev));
		if (rc != 0)
			return rc;
	}
	return safety_dev_on_disk(device, major(out->st_dev), minor(out->st_dev));
}

int safety_check_output(const char *what, const char *output,
			const char *device, char *err, size_t errlen)
{
	struct stat dev, out;
	bool exists;
	int rc;

	if (output == NULL || devspec_is_sim(device) ||
	    stat(device, &dev) != 0)
		return 0;	/* the gate and the open report a bad device */
	if (stat_output(output, &out, &exists) != 0)
		return 0;	/* creating it will fail with the reason */
	rc = output_on_device(device, &dev, &out, exists);
	if (rc < 0)	/* unknown is not safe: it may be on the card */
		fp_errf(err, errlen, "cannot check where %s '%s' is: %s", what,
			output, strerror(-rc));
	if (rc <= 0)
		return rc;
	fp_errf(err, errlen, "%s '%s' %s the device under test '%s'; choose a "
		"file elsewhere", what, output,
		exists && (S_ISBLK(out.st_mode) ||
			   (out.st_dev == dev.st_dev && out.st_ino == dev.st_ino)) ?
		"is" : "is on", device);
	return -EINVAL;
}

/* ---- signatures of existing data ---- */

/* Enough for the deepest signature below (btrfs at 64 KiB + 64). */
#define SIG_READ_BYTES (68u * 1024u)

static const struct signature {
	uint32_t off;
	uint32_t len;
	const char *magic;
	const char *name;
} signatures[] = {
	{ 0x10040, 8, "_BHRfS_M", "btrfs file system" },
	{ 0x438, 2, "\x53\xef", "ext2/3/4 file system" },
	{ 0x400, 4, "\x10\x20\xf5\xf2", "F2FS file system" },
	{ 0, 4, "XFSB", "XFS file system" },
	{ 0, 6, "LUKS\xba\xbe", "LUKS encrypted volume" },
	{ 0x1000, 4, "\xfc\x4e\x2b\xa9", "Linux RAID (md) member" },
	{ 0, 4, "\xfc\x4e\x2b\xa9", "Linux RAID (md) member" },
	{ 0x218, 8, "LVM2 001", "LVM2 physical volume" },
	/* swap: the last 10 bytes of the first page, for 4/8/16/64 KiB pages */
	{ 0xff6, 10, "SWAPSPACE2", "Linux swap" },
	{ 0x1ff6, 10, "SWAPSPACE2", "Linux swap" },
	{ 0x3ff6, 10, "SWAPSPACE2", "Linux swap" },
	{ 0xfff6, 10, "SWAPSPACE2", "Linux swap" },
	{ 0xff6, 10, "SWAP-SPACE", "Linux swap" },
	{ 0x8001, 5, "CD001", "ISO 9660 file system" },
	{ 3, 8, "NTFS    ", "NTFS file system" },
	{ 3, 8, "EXFAT   ", "exFAT file system" },
	/* GPT header in LBA 1, for 512- and 4096-byte sectors; before the
	 * MBR, which a GPT disk carries too (the protective MBR). */
	{ 0x200, 8, "EFI PART", "GPT partition table" },
	{ 0x1000, 8, "EFI PART", "GPT partition table" },
};

static bool sig_at(const unsigned char *buf, size_t n, uint32_t off,
		   uint32_t len, const char *magic)
{
	return (size_t)off + len <= n && memcmp(buf + off, magic, len) == 0;
}

/* FAT boot sectors and MBRs both end in 55 AA; a FAT boot sector also
 * names its type in the BPB (offset 0x36 for FAT12/16, 0x52 for FAT32). */
static const char *sig_boot_sector(const unsigned char *buf, size_t n)
{
	if (!sig_at(buf, n, 0x1fe, 2, "\x55\xaa"))
		return NULL;
	if (sig_at(buf, n, 0x36, 3, "FAT") || sig_at(buf, n, 0x52, 5, "FAT32"))
		return "FAT file system";
	return "MBR partition table";
}

static const char *sig_match(const unsigned char *buf, size_t n)
{
	for (size_t i = 0; i < sizeof(signatures) / sizeof(signatures[0]);
	     i++) {
		const struct signature *s = &signatures[i];

		if (sig_at(buf, n, s->off, s->len, s->magic))
			return s->name;
	}
	return sig_boot_sector(buf, n);
}

int safety_find_signature(struct fp_dev *d, char *what, size_t whatlen)
{
	uint64_t size = fp_dev_size_bytes(d);
	size_t n = SIG_READ_BYTES;
	const char *name;
	unsigned char *buf;
	int rc;

	if (what != NULL && whatlen > 0)
		what[0] = '\0';
	if (size < n)
		n = (size_t)size;
	n -= n % fp_dev_sector_bytes(d);
	if (n == 0)
		return 0;
	buf = fp_dev_alloc_buf(n);
	if (buf == NULL)
		return -ENOMEM;
	rc = fp_dev_read_timed(d, buf, n, 0, NULL);
	name = rc == 0 ? sig_match(buf, n) : NULL;
	free(buf);
	if (rc < 0)
		return rc;
	if (name == NULL)
		return 0;
	if (what != NULL && whatlen > 0)
		snprintf(what, whatlen, "%s", name);
	return 1;
}

int safety_confirm(const char *device, FILE *in, FILE *out)
{
	char line[PATH_MAX];

	fprintf(out, "type the device name ('%s') to continue: ", device);
	fflush(out);
	if (fgets(line, sizeof(line), in) == NULL)
		return -ECANCELED;
	line[strcspn(line, "\r\n")] = '\0';
	if (strcmp(line, device) == 0)
		return 0;
	if (line[0] != '\0' && strcmp(line, last_component(device)) == 0)
		return 0;
	return -ECANCELED;
}

/* ---- interruption ---- */

static const int caught_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NCAUGHT (sizeof(caught_signals) / sizeof(caught_signals[0]))

static volatile sig_atomic_t sig_received;
static volatile sig_atomic_t restoring;
static volatile sig_atomic_t restore_done_mib;
static volatile sig_atomic_t restore_total_mib;
static volatile sig_atomic_t restore_left_s;	/* -1: not known yet */
static char restore_what[256];
static struct sigaction old_actions[NCAUGHT];
static bool replaced[NCAUGHT];		/* this handler is installed */
static struct sigaction old_pipe;
static bool installed;

/* Async-signal-safe formatting: no stdio in a handler. */
static size_t put_str(char *buf, size_t pos, size_t cap, const char *s)
{
	while (*s != '\0' && pos + 1 < cap)
		buf[pos++] = *s++;
	buf[pos] = '\0';
	return pos;
}

static size_t put_uint(char *buf, size_t pos, size_t cap, unsigned long v)
{
	char digits[24];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0 && pos + 1 < cap)
		buf[pos++] = digits[--n];
	buf[pos] = '\0';
	return pos;
}

static void write_stderr(const char *s, size_t n)
{
	/* Nothing can be done about a failed note from a handler. */
	if (write(STDERR_FILENO, s, n) < 0)
		return;
}

static void note_restoring(void)
{
	char msg[512];
	size_t p = 0;

	p = put_str(msg, p, sizeof(msg), "flashprobe: still restoring the "
		    "original data of '");
	p = put_str(msg, p, sizeof(msg), restore_what);
	p = put_str(msg, p, sizeof(msg), "': ");
	p = put_uint(msg, p, sizeof(msg), (unsigned long)restore_done_mib);
	p = put_str(msg, p, sizeof(msg), " of ");
	p = put_uint(msg, p, sizeof(msg), (unsigned long)restore_total_mib);
	p = put_str(msg, p, sizeof(msg), " MiB done");
	if (restore_left_s >= 0) {
		p = put_str(msg, p, sizeof(msg), ", about ");
		p = put_uint(msg, p, sizeof(msg), (unsigned long)restore_left_s);
		p = put_str(msg, p, sizeof(msg), " s left");
	}
	p = put_str(msg, p, sizeof(msg), "; stopping now would lose data, "
		    "please wait\n");
	write_stderr(msg, p);
}

static void on_signal(int sig)
{
	static const char stopping[] = "flashprobe: interrupted; stopping at "
				       "the next I/O\n";
	int saved = errno;

	if (restoring)
		note_restoring();
	else if (sig_received == 0)
		write_stderr(stopping, sizeof(stopping) - 1);
	if (sig_received == 0)
		sig_received = sig;
	errno = saved;
}

static void put_back_handlers(void)
{
	for (size_t i = 0; i < NCAUGHT; i++)
		if (replaced[i])
			sigaction(caught_signals[i], &old_actions[i], NULL);
	memset(replaced, 0, sizeof(replaced));
	sigaction(SIGPIPE, &old_pipe, NULL);
}

int safety_signals_install(void)
{
	struct sigaction sa, ign;

	if (installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NCAUGHT; i++)
		sigaddset(&sa.sa_mask, caught_signals[i]);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	/* A closed output pipe must not kill a test before its restore: the
	 * write then fails with EPIPE, an ordinary error reported after it. */
	if (sigaction(SIGPIPE, &ign, &old_pipe) != 0)
		return -errno;
	/* No SA_RESTART: a read from the terminal (the consent prompt)
	 * returns on Ctrl-C; device I/O retries EINTR itself.  A signal
	 * that was ignored at start (SIGHUP under nohup) stays ignored. */
	for (size_t i = 0; i < NCAUGHT; i++) {
		int rc = sigaction(caught_signals[i], NULL, &old_actions[i]);

		if (rc == 0 && old_actions[i].sa_handler == SIG_IGN)
			continue;
		if (rc == 0)
			rc = sigaction(caught_signals[i], &sa, NULL);
		if (rc != 0) {
			rc = -errno;
			put_back_handlers();
			return rc;
		}
		replaced[i] = true;
	}
	installed = true;
	return 0;
}

void safety_signals_uninstall(void)
{
	if (!installed)
		return;
	put_back_handlers();
	installed = false;
}

int safety_interrupted(void)
{
	return sig_received;
}

void safety_interrupt_clear(void)
{
	sig_received = 0;
}

int safety_exit_status(int sig)
{
	return 128 + sig;
}

void safety_restore_begin(const char *what, uint64_t total_bytes)
{
	/* The text first, then the flag: the handler reads it only once
	 * restoring is set. */
	snprintf(restore_what, sizeof(restore_what), "%s", what);
	restore_done_mib = 0;
	restore_total_mib =
		(sig_atomic_t)((total_bytes + (1u << 20) - 1) >> 20);
	restore_left_s = -1;
	atomic_signal_fence(memory_order_seq_cst);
	restoring = 1;
}

void safety_restore_progress(uint64_t done_bytes, uint64_t elapsed_ns)
{
	uint64_t total = (uint64_t)restore_total_mib << 20;

	restore_done_mib = (sig_atomic_t)(done_bytes >> 20);
	if (done_bytes == 0 || elapsed_ns == 0 || done_bytes > total)
		return;
	/* Remaining time at the rate so far; good enough for "please wait". */
	restore_left_s = (sig_atomic_t)((double)elapsed_ns / 1e9 *
					(double)(total - done_bytes) /
					(double)done_bytes + 0.5);
}

void safety_restore_end(void)
{
	restoring = 0;
}

void safety_restore_note(void *arg, uint64_t done_bytes, uint64_t total_bytes)
{
	static uint64_t t0_ns;

	if (!restoring) {
		safety_restore_begin(arg != NULL ? arg : "", total_bytes);
		t0_ns = clock_now_ns();
	}
	safety_restore_progress(done_bytes, clock_now_ns() - t0_ns);
}

/* ---- the interruptible pass-through device ---- */

static int intr_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	if (sig_received)
		return -EINTR;
	return fp_dev_read_timed(priv, buf, len, off, NULL);
}

static int intr_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	if (sig_received)
		return -EINTR;
	return fp_dev_write_timed(priv, buf, len, off, NULL);
}

static uint64_t intr_now_ns(void *priv)
{
	return fp_dev_now_ns(priv);
}

static const struct fp_dev_ops intr_ops = {
	.pread = intr_pread,
	.pwrite = intr_pwrite,
	.now_ns = intr_now_ns,
	.close = NULL,		/* inner belongs to the caller */
};

int safety_wrap_interruptible(struct fp_dev *inner, struct fp_dev **out)
{
	if (inner == NULL || out == NULL)
		return -EINVAL;
	*out = fp_dev_create(&intr_ops, inner, fp_dev_kind(inner),
			     fp_dev_path(inner), fp_dev_size_bytes(inner),
			     fp_dev_sector_bytes(inner));
	fp_dev_set_inner(*out, inner);
	return *out != NULL ? 0 : -ENOMEM;
}
