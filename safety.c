/* safety.c - the write-safety gate (sysfs membership, mounts, swap and
 * holders), outputs kept off the device under test, and typed consent.
 * Data signatures are in safety_signature.c, signals, the restore notes
 * and the interruptible device in safety_signals.c.
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
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "errmsg.h"
#include "devspec.h"
#include "sysfs.h"
#include "journal.h"
#include "loopfile.h"
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

static int check_loop_aliases_in_use(const struct sysfs_roots *r,
				     const char *path, const struct stat *st,
				     const char *diskdir,
				     struct safety_report *rep, char *err,
				     size_t errlen);

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
		if (rc == 0)
			rc = check_loop_aliases_in_use(r, path, st, diskdir,
						       rep, err, errlen);
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

/* A loop device's file as a stat of it that same_inode() can compare:
 * it may have no name to stat. */
static void identity_of(const struct loopfile *f, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = f->dev;
	st->st_ino = f->ino;
	st->st_rdev = f->rdev;
	st->st_mode = f->rdev != 0 ? S_IFBLK : S_IFREG;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* A block device node as stat would give it, from its device number. */
static void block_node(dev_t rdev, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFBLK;
	st->st_rdev = rdev;
}

/* Where the data of a node finally lives: a regular file is itself; a
 * loop device (or a partition of one) the file or the block device at
 * the end of its chain of loop devices (whatever their names are now);
 * any other block device itself.  False when that cannot be told. */
static bool data_end(const struct sysfs_roots *r, const struct stat *st,
		     struct stat *end)
{
	struct loopfile f;
	int rc;

	if (S_ISREG(st->st_mode)) {
		*end = *st;
		return true;
	}
	if (!S_ISBLK(st->st_mode))
		return false;
	rc = loopfile_data(r->sys, major(st->st_rdev), minor(st->st_rdev), &f);
	if (rc < 0)
		return false;
	if (rc == 0)
		block_node(st->st_rdev, end);
	else
		identity_of(&f, end);
	return true;
}

/* Whether one block device is the disk the other is a partition of. */
static bool disk_and_partition(const struct sysfs_roots *r,
			       const struct stat *a, const struct stat *b)
{
	unsigned ma, mi, mb, nb;

	if (sysfs_disk_devno(r->sys, major(a->st_rdev), minor(a->st_rdev), &ma,
			     &mi) < 0 ||
	    sysfs_disk_devno(r->sys, major(b->st_rdev), minor(b->st_rdev), &mb,
			     &nb) < 0)
		return false;
	return makedev(ma, mi) == b->st_rdev || makedev(mb, nb) == a->st_rdev;
}

/* Whether two nodes overlap where they stand: one file, or one block
 * device, or a disk and one of its partitions. */
static bool nodes_overlap_here(const struct sysfs_roots *r,
			       const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode))
		return a->st_rdev == b->st_rdev || disk_and_partition(r, a, b);
	return S_ISREG(a->st_mode) && S_ISREG(b->st_mode) && same_inode(a, b);
}

/* Whether two nodes (an image, a loop device over it, another loop device
 * over the same image or over that loop device, a partition of one, the
 * disk at the end of a chain of loop devices) reach the same data. */
static bool same_data(const struct sysfs_roots *r, const struct stat *a,
		      const struct stat *b)
{
	struct stat ea, eb;

	if (nodes_overlap_here(r, a, b))
		return true;
	return data_end(r, a, &ea) && data_end(r, b, &eb) &&
	       nodes_overlap_here(r, &ea, &eb);
}

bool safety_nodes_overlap(const struct stat *a, const struct stat *b)
{
	return same_data(&sysfs_roots_default, a, b);
}

/* Calls fn with the sysfs directory and name of each loop device (or
 * partition of one) whose data is st's, until it returns true; returns
 * whether one did.  Device numbers cannot find them: every loop device
 * over a file, over a disk, or over another loop device is a disk of its
 * own that reads and writes the same data. */
static bool each_loop_over(const struct sysfs_roots *r, const struct stat *st,
			   bool (*fn)(const char *dir, const char *name, void *arg),
			   void *arg)
{
	char dir[PATH_MAX], sub[PATH_MAX + 300], num[32];
	unsigned ma, mi;
	struct dirent *e;
	struct stat node;
	bool hit = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/block", r->sys);
	d = opendir(dir);
	while (d != NULL && !hit && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "loop", 4) != 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		if (sysfs_read_attr(sub, "dev", num, sizeof(num)) != 0 ||
		    sscanf(num, "%u:%u", &ma, &mi) != 2)
			continue;
		block_node(makedev(ma, mi), &node);
		if (same_data(r, &node, st))
			hit = fn(sub, e->d_name, arg);
	}
	if (d != NULL)
		closedir(d);
	return hit;
}

struct loop_name_ctx {
	char *loop;
	size_t len;
};

static bool note_loop_name(const char *dir, const char *name, void *arg)
{
	const struct loop_name_ctx *c = arg;

	(void)dir;
	dev_node_of(name, c->loop, c->len);
	return true;
}

/* The loop device whose data is the file st, if any (name into loop). */
static bool file_on_loop(const struct sysfs_roots *r, const struct stat *st,
			 char *loop, size_t len)
{
	struct loop_name_ctx c = { loop, len };

	return each_loop_over(r, st, note_loop_name, &c);
}

struct alias_ctx {
	const struct sysfs_roots *r;
	const char *path, *self;	/* the target and its sysfs name */
	struct safety_report *rep;
	char *err;
	size_t errlen;
	int rc;
};

/* One loop device over the target's file: the target in use when it (or
 * a partition of it) is mounted, swap or held. */
/* A member held exclusively though no mount or holder shows it here: a
 * file system mounted in another mount namespace, or any program that
 * opened it with O_EXCL.  The target's own O_EXCL open finds those for
 * the target; another block device over the same data needs asking. */
static const struct member *find_excl_held(const struct members *ms)
{
	char node[SAFETY_NAME_MAX + 8];

	for (size_t i = 0; i < ms->n; i++) {
		int fd;

		dev_node_of(ms->v[i].name, node, sizeof(node));
		fd = open(node, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0)
			close(fd);
		else if (errno == EBUSY)
			return &ms->v[i];
	}
	return NULL;
}

/* check_disk_in_use() for another block device that reaches the target's
 * data, and its exclusive holders. */
static int check_alias_disk_in_use(const struct sysfs_roots *r, const char *path,
				   const struct members *ms,
				   struct safety_report *rep, char *err,
				   size_t errlen)
{
	const struct member *m;
	int rc = check_disk_in_use(r, path, ms, rep, err, errlen);

	if (rc != 0 || (m = find_excl_held(ms)) == NULL)
		return rc;
	rep->held = true;
	dev_node_of(m->name, rep->busy, sizeof(rep->busy));
	fp_errf(err, errlen, "refusing to write '%s': '%s', which reaches the same "
		"data, is held exclusively (a file system mounted in another mount "
		"namespace, or a program or test that has it open): wait for it to "
		"finish or release it", path, rep->busy);
	return -EBUSY;
}

static bool alias_in_use(const char *dir, const char *name, void *arg)
{
	struct alias_ctx *c = arg;
	struct members ms = { 0 };
	int rc;

	if (strcmp(name, c->self) == 0)
		return false;
	rc = collect_members(dir, &ms);
	if (rc < 0) {	/* unknown is not unused */
		fp_errf(c->err, c->errlen, "refusing to write '%s': cannot check "
			"whether '%s' over the same file is in use: %s", c->path,
			name, strerror(-rc));
		c->rc = -FP_EREFUSED;
	} else {
		c->rc = check_alias_disk_in_use(c->r, c->path, &ms, c->rep,
						c->err, c->errlen);
	}
	members_free(&ms);
	return c->rc != 0;
}

/* A loop device writes the data at the end of its chain, and so through
 * every other loop device over that data: over the same file, over the
 * target itself (or a partition of it), over a loop device in between.
 * A file system mounted from one of those (or a journal directory on it)
 * would be corrupted as if the target itself were mounted, and so would
 * one on the disk at the end of the target's own chain.  The kernel's
 * exclusive open sees none of them: each loop device is a block device
 * of its own. */
static int check_loop_aliases_in_use(const struct sysfs_roots *r,
				     const char *path, const struct stat *st,
				     const char *diskdir,
				     struct safety_report *rep, char *err,
				     size_t errlen)
{
	struct alias_ctx c = { r, path, last_component(diskdir), rep, err,
			       errlen, 0 };
	struct members ms = { 0 };
	char enddir[PATH_MAX];
	struct stat end;
	bool is_part;

	each_loop_over(r, st, alias_in_use, &c);
	if (c.rc != 0 || !data_end(r, st, &end) || !S_ISBLK(end.st_mode) ||
	    end.st_rdev == st->st_rdev)
		return c.rc;
	if (disk_members(r, major(end.st_rdev), minor(end.st_rdev), &ms, enddir,
			 &is_part) < 0) {
		members_free(&ms);
		fp_errf(err, errlen, "refusing to write '%s': cannot check whether "
			"the disk under its loop devices is in use", path);
		return -FP_EREFUSED;
	}
	c.rc = check_alias_disk_in_use(r, path, &ms, rep, err, errlen);
	members_free(&ms);
	return c.rc;
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
 * tool that keeps an idle descriptor is common and harmless).  what
 * names st for the line: the target, or the file a loop device reads. */
static void warn_other_writer(const char *what, const struct stat *st,
			      struct safety_report *rep)
{
	struct procfd_user u;
	char who[64];

	if (rep->warning[0] || procfd_find_user(st, true, &u) <= 0)
		return;
	procfd_describe(&u, who, sizeof(who));
	snprintf(rep->warning, sizeof(rep->warning), "warning: %s is open for "
		 "writing by %s: its writes would mix with the test's", what, who);
}

/* Whether block device path reads a flashprobe journal: one at its
 * start, or f, the file at the end of its loop chain, whatever window of
 * it the chain shows (a loop device over a pending journal, which the
 * journal's own name refuses). */
static bool device_reads_journal(const char *path, const struct loopfile *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool is = false;

	if (fd >= 0) {
		is = journal_is_journal_fd(fd);
		close(fd);
	}
	return is || (f->named && journal_is_journal_file(f->path));
}

/* What a writing test changes in the end is a file when the target is
 * one or a loop device over one: a FUSE server writing that file serves a
 * file system from it (fuse2fs on an image) as good as mounted, which no
 * mount table or exclusive open shows; refused.  A loop device over a
 * journal is refused like the journal.  Any other writer is a warning. */
static int check_data_file(const struct sysfs_roots *r, const char *path,
			   const struct stat *st, struct safety_report *rep,
			   char *err, size_t errlen)
{
	bool loop = S_ISBLK(st->st_mode);
	struct procfd_user u;
	char who[64], what[PATH_MAX + 40];
	struct loopfile f;
	struct stat end = *st;

	snprintf(what, sizeof(what), "'%s'", path);
	warn_other_writer(what, st, rep);
	if (loop) {	/* a block device changes a file only as a loop device */
		if (loopfile_data(r->sys, major(st->st_rdev), minor(st->st_rdev), &f) != 1 ||
		    f.rdev != 0)
			return 0;
		identity_of(&f, &end);
		if (device_reads_journal(path, &f)) {
			fp_errf(err, errlen, "refusing to write '%s': it reads a flashprobe "
			    "journal (replay it with 'flashprobe restore')", path);
			return -EBUSY;
		}
	}
	if (procfd_find_fuse_writer(&end, &u) > 0) {
		procfd_describe(&u, who, sizeof(who));
		fp_errf(err, errlen, "refusing to write '%s': %s, which serves a FUSE "
		    "file system, has %s open for writing: a file system mounted from "
		    "it would be corrupted; unmount it first", path, who,
		    loop ? "the file it reads" : "it");
		return -EBUSY;
	}
	snprintf(what, sizeof(what), "the file '%s' reads", path);
	if (loop)
		warn_other_writer(what, &end, rep);
	return 0;
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
		rc = check_data_file(r, path, &st, rep, err, errlen);
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

/* Whether the output is the data the device reads, under another name:
 * the image behind a loop device under test, a loop device over the image
 * under test, a second loop device over the same image. */
static bool output_is_device_data(const struct stat *dev,
				  const struct stat *out, bool exists)
{
	return exists && (same_inode(out, dev) ||
			  same_data(&sysfs_roots_default, dev, out));
}

/* Whether the output's file system is mounted from a block device whose
 * data is the device's: a loop device (or a partition of one) over the
 * file the device reads, over the device itself, or over a loop device
 * in between. */
static bool output_fs_on_device_data(const struct stat *dev,
				     const struct stat *out)
{
	struct stat fs;

	block_node(out->st_dev, &fs);
	return same_data(&sysfs_roots_default, &fs, dev);
}

/* Whether the output (stat of it, or of its directory) is on device: 1
 * yes, 0 no, a negative errno when sysfs cannot tell. */
static int output_on_device(const char *device, const struct stat *dev,
			    const struct stat *out, bool exists)
{
	int rc;

	if (output_is_device_data(dev, out, exists) ||
	    output_fs_on_device_data(dev, out))
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

/* The refusal of an output (label: "--svg 'x.svg'", "standard output")
 * found on the device. */
static int refuse_output(const char *label, const char *device,
			 const struct stat *dev, const struct stat *out,
			 bool exists, char *err, size_t errlen)
{
	fp_errf(err, errlen, "%s %s the device under test '%s'; choose a "
		"file elsewhere", label,
		(exists && S_ISBLK(out->st_mode)) ||
		output_is_device_data(dev, out, exists) ? "is" : "is on", device);
	return -EINVAL;
}

int safety_check_output(const char *what, const char *output,
			const char *device, char *err, size_t errlen)
{
	struct stat dev, out;
	char label[PATH_MAX + 32];
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
	snprintf(label, sizeof(label), "%s '%s'", what, output);
	return refuse_output(label, device, &dev, &out, exists, err, errlen);
}

int safety_check_stream(const char *what, int fd, const char *device,
			char *err, size_t errlen)
{
	struct stat dev, out;

	if (devspec_is_sim(device) || stat(device, &dev) != 0 ||
	    !(S_ISBLK(dev.st_mode) || S_ISREG(dev.st_mode)) ||
	    fstat(fd, &out) != 0)
		return 0;	/* the gate refuses other devices; a closed
				 * stream writes nowhere */
	if (output_on_device(device, &dev, &out, true) != 1)
		return 0;	/* a pipe, a terminal, a file elsewhere */
	return refuse_output(what, device, &dev, &out, true, err, errlen);
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
