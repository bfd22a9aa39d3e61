/* loopfile.c - see loopfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "loopfile.h"
#include "sysfs.h"
#include "units.h"

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

/* The windows of a chain so far, top first: as text, and composed into
 * one window of what lies below them. */
struct chain_window {
	char text[sizeof(((struct loopfile *)0)->window)];
	bool cut;		/* more than text holds */
	bool composed;		/* off and lim hold them all */
	uint64_t off, lim;
};

/* Window (o, l) below the windows (*off, *lim) already composed: a
 * limit counts from the offsets above it.  False when they leave nothing
 * (an empty device) or overflow. */
static bool compose_window(uint64_t *off, uint64_t *lim, uint64_t o, uint64_t l)
{
	if (l != 0) {
		if (l <= *off)
			return false;
		if (*lim == 0 || l - *off < *lim)
			*lim = l - *off;
	}
	if (o > UINT64_MAX - *off)
		return false;
	*off += o;
	return true;
}

/* Adds "+A+B" to the text of the windows. */
static void add_text(struct chain_window *w, const char *a, const char *b)
{
	size_t n = strlen(w->text);
	int used = snprintf(w->text + n, sizeof(w->text) - n, "+%s+%s", a, b);

	w->cut |= used < 0 || (size_t)used >= sizeof(w->text) - n;
}

/* Adds window (o, l) below the others. */
static void add_numbers(struct chain_window *w, uint64_t o, uint64_t l)
{
	char a[24], b[24];

	snprintf(a, sizeof(a), "%" PRIu64, o);
	snprintf(b, sizeof(b), "%" PRIu64, l);
	add_text(w, a, b);
	w->composed = w->composed && compose_window(&w->off, &w->lim, o, l);
}

/* Adds a window that cannot be read: its text, which matches no other,
 * and no composed window. */
static void add_unknown(struct chain_window *w, const char *a, const char *b)
{
	add_text(w, a, b);
	w->composed = false;
}

/* Adds the window loop device diskdir shows of its file, if any. */
static void add_window(const char *diskdir, struct chain_window *w)
{
	char offset[32] = "0", limit[32] = "0";
	uint64_t o, l;

	sysfs_read_attr(diskdir, "loop/offset", offset, sizeof(offset));
	sysfs_read_attr(diskdir, "loop/sizelimit", limit, sizeof(limit));
	if (units_parse_uint(offset, UINT64_MAX, &o) ||
	    units_parse_uint(limit, UINT64_MAX, &l))
		add_unknown(w, offset, limit);
	else if (o != 0 || l != 0)
		add_numbers(w, o, l);
}

/* Adds the window partition dir is of its disk: a loop device over a
 * partition of a loop device reads that part of the file, and two equal
 * partitions (an A/B layout) are two devices, not one. */
static void add_partition_window(const char *dir, struct chain_window *w)
{
	char start[32] = "", size[32] = "";
	uint64_t s, z;

	if (sysfs_read_attr(dir, "start", start, sizeof(start)) != 0 ||
	    sysfs_read_attr(dir, "size", size, sizeof(size)) != 0 ||
	    units_parse_uint(start, UINT64_MAX, &s) || units_parse_uint(size, UINT64_MAX, &z))
		add_unknown(w, "part?", "?");
	else	/* sysfs counts 512-byte sectors whatever the device's */
		add_numbers(w, s * 512, z * 512);
}

int loopfile_data(const char *root, unsigned major, unsigned minor,
		  struct loopfile *f)
{
	struct chain_window w = { .composed = true };
	int found = 0;

	for (int depth = 0; depth < LOOPFILE_CHAIN_MAX; depth++) {
		struct loopfile next;
		char dir[PATH_MAX];
		int rc = sysfs_block_dir(root, major, minor, dir, sizeof(dir));

		if (rc < 0)
			return rc;
		if (sysfs_is_partition(dir)) {
			add_partition_window(dir, &w);
			*strrchr(dir, '/') = '\0';
		}
		rc = loopfile_backing(dir, &next);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return found;	/* no loop device: the end of the chain */
		add_window(dir, &w);
		*f = next;
		memcpy(f->window, w.text, sizeof(w.text));
		f->window_cut = w.cut;
		f->composed = w.composed;
		f->offset = w.off;
		f->limit = w.lim;
		found = 1;
		if (f->rdev == 0)
			return 1;	/* a regular file */
		major = major(f->rdev);	/* a loop device over a block device */
		minor = minor(f->rdev);
	}
	return -ELOOP;
}

/* The device a loop device is, for a journal: the file it reads (by the
 * kernel's identity, so a rename does not make it another card, and a
 * file put in its place under the old name is one) and the window of it
 * it shows, then the name for people. */
int loopfile_serial(const char *root, unsigned major, unsigned minor,
		    char *buf, size_t len)
{
	const char *lp = "", *rp = "";
	struct loopfile f;
	int rc = loopfile_data(root, major, minor, &f);

	buf[0] = '\0';
	if (rc <= 0)
		return rc;
	if (f.composed && (f.offset != 0 || f.limit != 0))
		snprintf(f.window, sizeof(f.window), "+%" PRIu64 "+%" PRIu64, f.offset,
			 f.limit);
	else if (f.composed)
		f.window[0] = '\0';
	else if (f.window_cut)
		return -ENAMETOOLONG;
	if (f.named) {
		lp = " (";
		rp = ")";
	}
	if (f.rdev != 0)
		snprintf(buf, len, "loop%s:blk=%u:%u%s%s%s", f.window, major(f.rdev),
			 minor(f.rdev), lp, f.named ? f.path : "", rp);
	else
		snprintf(buf, len, "loop%s:ino=%llu:%llu%s%s%s", f.window,
			 (unsigned long long)f.dev, (unsigned long long)f.ino, lp,
			 f.named ? f.path : "", rp);
	return 1;
}

int loopfile_serial_node(const char *serial, struct stat *st)
{
	const char *key = strchr(serial, ':');
	unsigned long long a, b;
	unsigned ma, mi;

	if (strncmp(serial, "loop", 4) != 0 || key == NULL)
		return 0;
	memset(st, 0, sizeof(*st));
	if (sscanf(key, ":ino=%llu:%llu", &a, &b) == 2) {
		st->st_mode = S_IFREG;
		st->st_dev = (dev_t)a;
		st->st_ino = (ino_t)b;
		return 1;
	}
	if (sscanf(key, ":blk=%u:%u", &ma, &mi) == 2) {
		st->st_mode = S_IFBLK;
		st->st_rdev = makedev(ma, mi);
		return 1;
	}
	return 0;
}

int loopfile_serial_name(const char *serial, char *buf, size_t len)
{
	const char *open_paren = strstr(serial, " (");
	size_t n;

	if (strncmp(serial, "loop", 4) != 0 || open_paren == NULL)
		return 0;
	n = strlen(open_paren + 2);
	if (n < 2 || n > len || open_paren[2 + n - 1] != ')')
		return 0;
	memcpy(buf, open_paren + 2, n - 1);
	buf[n - 1] = '\0';
	return 1;
}

bool loopfile_serial_window(const char *serial, uint64_t *offset, uint64_t *limit)
{
	const char *p = serial + 4, *key = strchr(serial, ':');
	uint64_t off = 0, lim = 0;

	if (strncmp(serial, "loop", 4) != 0 || key == NULL)
		return false;
	/* "+OFFSET+LIMIT" per window, from the device down to the file: a
	 * window's limit counts from the offsets above it */
	while (p < key) {
		unsigned long long o, l;
		int used = 0;

		if (p[0] != '+' || sscanf(p, "+%llu+%llu%n", &o, &l, &used) != 2 ||
		    used == 0 || p + used > key || !compose_window(&off, &lim, o, l))
			return false;
		p += used;
	}
	*offset = off;
	*limit = lim;
	return true;
}

int loopfile_serial_losetup_opts(const char *serial, char *buf, size_t len)
{
	uint64_t off, limit;

	buf[0] = '\0';
	if (!loopfile_serial_window(serial, &off, &limit))
		return 0;
	if (limit)
		snprintf(buf, len, " --offset %" PRIu64 " --sizelimit %" PRIu64, off,
			 limit);
	else if (off)
		snprintf(buf, len, " --offset %" PRIu64, off);
	return 1;
}

/* The file (or disk) part of a loop serial: from ':' to the name for
 * people; NULL for other serials. */
static const char *serial_file(const char *serial, size_t *n)
{
	const char *k = strchr(serial, ':');

	if (strncmp(serial, "loop", 4) != 0 || k == NULL)
		return NULL;
	*n = strcspn(k, " ");
	return k;
}

/* Whether two loop serials show the same window: composed when both can
 * be, else as written. */
static bool same_window(const char *a, const char *b)
{
	uint64_t oa, la, ob, lb;
	const char *ka = strchr(a, ':'), *kb = strchr(b, ':');

	if (loopfile_serial_window(a, &oa, &la) && loopfile_serial_window(b, &ob, &lb))
		return oa == ob && la == lb;
	return ka - a == kb - b && memcmp(a, b, (size_t)(ka - a)) == 0;
}

/* Whether two loop serials end at the same file or disk. */
static bool same_file(const char *a, const char *b)
{
	size_t na, nb;
	const char *ka = serial_file(a, &na), *kb = serial_file(b, &nb);

	return ka != NULL && kb != NULL && na == nb && memcmp(ka, kb, na) == 0;
}

bool loopfile_serials_same(const char *a, const char *b)
{
	size_t n;

	if (strncmp(a, "loop", 4) == 0 && strncmp(b, "loop", 4) == 0)
		return same_file(a, b) && same_window(a, b);
	n = loopfile_serial_key_len(a);
	return n == loopfile_serial_key_len(b) && memcmp(a, b, n) == 0;
}

bool loopfile_serials_other_window(const char *a, const char *b)
{
	return same_file(a, b) && !same_window(a, b);
}

size_t loopfile_serial_key_len(const char *serial)
{
	return strncmp(serial, "loop", 4) == 0 ? strcspn(serial, " ") :
						 strlen(serial);
}
