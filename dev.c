/* dev.c - the device layer: checks, timing and counters around a backend,
 * plus the backend for real block devices and regular files.
 *
 * Every analyzer I/O passes fp_dev_read_timed()/fp_dev_write_timed(), so the
 * safety rules live here once: requests must be sector aligned and inside
 * the device, and nothing is written outside the area the caller announced
 * with fp_dev_set_write_area() (no area, no writes).  Refused requests never
 * reach the backend and are neither counted nor timed.
 *
 * Real targets are opened with O_DIRECT so reads hit the card rather than
 * the page cache; a target where that cannot hold (tmpfs) is refused,
 * because its timings would describe RAM.
 */
#define _GNU_SOURCE		/* O_DIRECT */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "clock.h"
#include "dev.h"
#include "loopfile.h"
#include "procfd.h"
#include "sysfs.h"
#include "util.h"

/* O_DIRECT wants buffers aligned to the logical block size; a page covers
 * every sector size in use (512, 4096). */
#define DEV_BUF_ALIGN 4096
/* Regular files have no logical sector; 512 is what O_DIRECT needs on
 * common filesystems over 512-byte-sector disks. */
#define DEV_FILE_SECTOR_BYTES 512u
/* Real-time priority for timing runs, as flashbench uses. */
#define DEV_RT_PRIORITY 10
/* A lock held by someone else is retried this often, this far apart (a
 * second in all: udev's probe of a card takes a fraction of that). */
#define DEV_LOCK_RETRIES 10
#define DEV_LOCK_RETRY_NS 100000000L

struct fp_dev {
	const struct fp_dev_ops *ops;
	void *priv;
	enum fp_dev_kind kind;
	char *path;
	uint64_t size_bytes;
	uint32_t sector_bytes;
	uint64_t io_count;
	uint64_t io_ns;
	uint64_t bytes_written;
	uint64_t write_start_bytes;	/* write area [start, end) */
	uint64_t write_end_bytes;
	bool write_area_set;
	struct fp_dev *inner;		/* a wrapper's device, else NULL */
	struct fp_dev_failure failure;	/* the last I/O the device failed */
};

void fp_dev_set_inner(struct fp_dev *d, struct fp_dev *inner)
{
	if (d != NULL)
		d->inner = inner;
}

struct fp_dev *fp_dev_inner(const struct fp_dev *d)
{
	return d != NULL ? d->inner : NULL;
}

struct fp_dev *fp_dev_create(const struct fp_dev_ops *ops, void *priv,
			     enum fp_dev_kind kind, const char *path,
			     uint64_t size_bytes, uint32_t sector_bytes)
{
	struct fp_dev *d;

	/* A backend without a read or a clock, or with no sector size,
	 * could only fail later in a less obvious place. */
	if (ops == NULL || ops->pread == NULL || ops->now_ns == NULL ||
	    sector_bytes == 0)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->path = strdup(path != NULL ? path : "");
	if (d->path == NULL) {
		free(d);
		return NULL;
	}
	d->ops = ops;
	d->priv = priv;
	d->kind = kind;
	d->size_bytes = size_bytes;
	d->sector_bytes = sector_bytes;
	return d;
}

void fp_dev_close(struct fp_dev *d)
{
	if (d == NULL)
		return;
	if (d->ops->close != NULL)
		d->ops->close(d->priv);
	free(d->path);
	free(d);
}

/* Alignment and range checks shared by reads and writes. */
static int dev_check_io(const struct fp_dev *d, const void *buf, size_t len,
			uint64_t off)
{
	if (d == NULL || buf == NULL)
		return -EINVAL;
	if (len == 0 || len % d->sector_bytes != 0 || off % d->sector_bytes != 0)
		return -EINVAL;
	/* Written as a subtraction so off + len cannot wrap. */
	if (off > d->size_bytes || (uint64_t)len > d->size_bytes - off)
		return -ENOSPC;
	return 0;
}

/* Called only after dev_check_io(), so off + len does not wrap. */
static bool dev_in_write_area(const struct fp_dev *d, size_t len, uint64_t off)
{
	return d->write_area_set && off >= d->write_start_bytes &&
	       off + len <= d->write_end_bytes;
}

/* Keep what failed for the error message (fp_dev_last_failure). */
static int dev_failed(struct fp_dev *d, int rc, bool write, size_t len, uint64_t off)
{
	d->failure = (struct fp_dev_failure){ .err = rc < 0 ? rc : -EIO, .write = write,
					      .offset_bytes = off, .len = len };
	return d->failure.err;
}

const struct fp_dev_failure *fp_dev_last_failure(const struct fp_dev *d)
{
	return d != NULL && d->failure.err ? &d->failure : NULL;
}

/* Book a successful call; a clock that went backwards counts as zero. */
static void dev_account(struct fp_dev *d, uint64_t t0, uint64_t t1,
			uint64_t *ns)
{
	uint64_t dt = t1 >= t0 ? t1 - t0 : 0;

	d->io_count++;
	d->io_ns += dt;
	if (ns != NULL)
		*ns = dt;
}

int fp_dev_read_timed(struct fp_dev *d, void *buf, size_t len, uint64_t off,
		      uint64_t *ns)
{
	uint64_t t0, t1;
	int rc = dev_check_io(d, buf, len, off);

	if (rc < 0)
		return rc;
	t0 = d->ops->now_ns(d->priv);
	rc = d->ops->pread(d->priv, buf, len, off);
	t1 = d->ops->now_ns(d->priv);
	if (rc != 0)
		return dev_failed(d, rc, false, len, off);
	dev_account(d, t0, t1, ns);
	return 0;
}

int fp_dev_write_timed(struct fp_dev *d, const void *buf, size_t len,
		       uint64_t off, uint64_t *ns)
{
	uint64_t t0, t1;
	int rc = dev_check_io(d, buf, len, off);

	if (rc < 0)
		return rc;
	/* Outside the announced area: a program error, never a device's
	 * answer (EFAULT: the request points where it must not). */
	if (!dev_in_write_area(d, len, off))
		return -EFAULT;
	if (d->ops->pwrite == NULL)
		return -EROFS;
	t0 = d->ops->now_ns(d->priv);
	rc = d->ops->pwrite(d->priv, buf, len, off);
	t1 = d->ops->now_ns(d->priv);
	if (rc != 0)
		return dev_failed(d, rc, true, len, off);
	dev_account(d, t0, t1, ns);
	d->bytes_written += len;
	return 0;
}

bool fp_dev_write_area(const struct fp_dev *d, uint64_t *start, uint64_t *end)
{
	if (!d->write_area_set)
		return false;
	*start = d->write_start_bytes;
	*end = d->write_end_bytes;
	return true;
}

bool fp_dev_may_write(const struct fp_dev *d, uint64_t start, uint64_t end)
{
	return d != NULL && d->write_area_set && start < end &&
	       start >= d->write_start_bytes && end <= d->write_end_bytes;
}

/* The area belongs to the whole stack: a wrapper writes through its inner
 * device, which checks the same area again. */
int fp_dev_set_write_area(struct fp_dev *d, uint64_t start, uint64_t end)
{
	struct fp_dev *e;

	if (d == NULL)
		return -EINVAL;
	for (e = d; e != NULL; e = e->inner)
		if (start >= end || end > e->size_bytes)
			return -EINVAL;
	for (e = d; e != NULL; e = e->inner)
		if (e->write_area_set && !fp_dev_may_write(e, start, end))
			return -EPERM;	/* only narrowing */
	for (e = d; e != NULL; e = e->inner) {
		e->write_start_bytes = start;
		e->write_end_bytes = end;
		e->write_area_set = true;
	}
	return 0;
}

void fp_dev_end_write_area(struct fp_dev *d)
{
	for (; d != NULL; d = d->inner)
		d->write_area_set = false;
}

void *fp_dev_alloc_buf(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, DEV_BUF_ALIGN, len > 0 ? len : 1) != 0)
		return NULL;
	/* Defined contents: a write of a fresh buffer is reproducible. */
	memset(p, 0, len > 0 ? len : 1);
	return p;
}

uint64_t fp_dev_size_bytes(const struct fp_dev *d)
{
	return d->size_bytes;
}

uint32_t fp_dev_sector_bytes(const struct fp_dev *d)
{
	return d->sector_bytes;
}

enum fp_dev_kind fp_dev_kind(const struct fp_dev *d)
{
	return d->kind;
}

const char *fp_dev_kind_name(const struct fp_dev *d)
{
	switch (d->kind) {
	case FP_DEV_FILE:
		return "file";
	case FP_DEV_BLOCK:
		return "block";
	case FP_DEV_SIM:
		return "sim";
	}
	return "unknown";
}

const char *fp_dev_path(const struct fp_dev *d)
{
	return d->path;
}

uint64_t fp_dev_now_ns(struct fp_dev *d)
{
	return d->ops->now_ns(d->priv);
}

void *fp_dev_priv_if(const struct fp_dev *d, const struct fp_dev_ops *ops)
{
	return d != NULL && d->ops == ops ? d->priv : NULL;
}

uint64_t fp_dev_io_count(const struct fp_dev *d)
{
	return d->io_count;
}

uint64_t fp_dev_io_ns(const struct fp_dev *d)
{
	return d->io_ns;
}

uint64_t fp_dev_bytes_written(const struct fp_dev *d)
{
	return d->bytes_written;
}

/* The priority is held per measuring phase (an align round, a bench
 * window, one analyzer's write sequence), not per I/O: switching costs two
 * system calls (about 1 us for the pair on a loaded 2-core machine), which
 * is 1-5% of a 20-100 us request on a fast card, and leaving SCHED_FIFO
 * invites a reschedule between requests.  Per phase it is noise. */
static struct {
	struct fp_dev_rt_policy policy;
	unsigned depth;			/* enters without their leave */
	bool held;			/* SCHED_FIFO was granted */
	bool refusal_told;
	int saved_policy;
	struct sched_param saved_param;
} rt = { .policy = { .allowed = true } };

void fp_dev_rt_configure(const struct fp_dev_rt_policy *p)
{
	rt.policy = *p;
	rt.refusal_told = false;
}

static bool rt_switch_on(void)
{
	struct sched_param sp = { .sched_priority = DEV_RT_PRIORITY };

	rt.saved_policy = sched_getscheduler(0);
	if (rt.saved_policy < 0 || sched_getparam(0, &rt.saved_param) != 0)
		return false;
	return sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
}

static void rt_switch_off(void)
{
	sched_setscheduler(0, rt.saved_policy, &rt.saved_param);
}

void fp_dev_rt_enter(struct fp_dev *d)
{
	if (d == NULL || d->kind == FP_DEV_SIM || !rt.policy.allowed)
		return;
	if (rt.depth++ > 0)
		return;
	rt.held = rt_switch_on();
	if (!rt.held && !rt.refusal_told && rt.policy.refused != NULL)
		rt.policy.refused(rt.policy.arg);
	rt.refusal_told |= !rt.held;
}

void fp_dev_rt_leave(struct fp_dev *d)
{
	if (d == NULL || d->kind == FP_DEV_SIM || !rt.policy.allowed ||
	    rt.depth == 0)
		return;
	if (--rt.depth > 0)
		return;
	if (rt.held)
		rt_switch_off();
	rt.held = false;
}

bool fp_dev_rt_suspend(void)
{
	bool was = rt.held;

	if (was)
		rt_switch_off();
	rt.held = false;
	return was;
}

void fp_dev_rt_resume(bool was_held)
{
	if (was_held)
		rt.held = rt_switch_on();
}

bool fp_dev_rt_held(void)
{
	return rt.held;
}

/* ---- the real backend: block devices and regular files ---- */

struct dev_real {
	int fd;
	int data_lock_fd;	/* a loop device's file, locked; or -1 */
};

static int dev_real_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	ssize_t n = util_pread_full(((struct dev_real *)priv)->fd, buf, len, off);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;	/* end of file inside the device */
}

static int dev_real_pwrite(void *priv, const void *buf, size_t len,
			   uint64_t off)
{
	return util_pwrite_full(((struct dev_real *)priv)->fd, buf, len, off);
}

static uint64_t dev_real_now_ns(void *priv)
{
	(void)priv;
	return clock_now_ns();
}

static void dev_real_close(void *priv)
{
	struct dev_real *r = priv;

	close(r->fd);
	if (r->data_lock_fd >= 0)
		close(r->data_lock_fd);
	free(r);
}

static const struct fp_dev_ops dev_real_ops = {
	.pread = dev_real_pread,
	.pwrite = dev_real_pwrite,
	.now_ns = dev_real_now_ns,
	.close = dev_real_close,
};

int fp_dev_node_stat(const struct fp_dev *d, struct stat *st)
{
	for (; d != NULL; d = fp_dev_inner(d)) {
		const struct dev_real *r = fp_dev_priv_if(d, &dev_real_ops);

		if (r != NULL)
			return fstat(r->fd, st) == 0 ? 0 : -errno;
	}
	return -ENOTSUP;
}

uint64_t fp_dev_node_birth_ns(const struct fp_dev *d)
{
	for (; d != NULL; d = fp_dev_inner(d)) {
		const struct dev_real *r = fp_dev_priv_if(d, &dev_real_ops);

		if (r != NULL)
			return util_birth_ns(r->fd, "", AT_EMPTY_PATH);
	}
	return 0;
}

static int dev_open_flags(enum fp_open_mode mode, bool is_block)
{
	int flags = O_DIRECT | O_CLOEXEC | O_NOCTTY;

	if (mode != FP_OPEN_WRITE)
		return flags | O_RDONLY;
	/* O_SYNC: a write's time includes the card's program time.  O_EXCL
	 * on a block device fails with EBUSY while another exclusive opener
	 * holds it (a mount, device-mapper, md, another O_EXCL open), as for
	 * blkdiscard; a process that opened it without O_EXCL is not stopped
	 * (safety.c warns about writers it can see).  dev_lock() adds a lock
	 * for the files O_EXCL does not cover. */
	flags |= O_RDWR | O_SYNC;
	return is_block ? flags | O_EXCL : flags;
}

static void dev_err_no_direct(char *err, size_t errlen, const char *path)
{
	fp_errf(err, errlen, "'%s' does not support O_DIRECT (tmpfs?): "
		"timing would measure the page cache", path);
}

/* Size and logical sector of an open target of the type in st. */
static int dev_geometry(int fd, const struct stat *st, const char *path,
			uint64_t *size_bytes, uint32_t *sector_bytes,
			char *err, size_t errlen)
{
	struct statfs sfs;
	int ssz = 0;

	if (S_ISBLK(st->st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, size_bytes) != 0 ||
		    ioctl(fd, BLKSSZGET, &ssz) != 0) {
			int rc = -errno;

			fp_errf(err, errlen, "cannot get the size of '%s': %s",
				path, strerror(-rc));
			return rc;
		}
		if (ssz <= 0) {
			fp_errf(err, errlen, "'%s' reports a sector size of %d",
				path, ssz);
			return -EIO;
		}
		*sector_bytes = (uint32_t)ssz;
		return 0;
	}
	/* Since Linux 6.6 tmpfs accepts O_DIRECT, but its "device" is the
	 * page cache itself: refuse it like the kernels that say EINVAL. */
	if (fstatfs(fd, &sfs) == 0 &&
	    (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC)) {
		dev_err_no_direct(err, errlen, path);
		return -EINVAL;
	}
	*sector_bytes = DEV_FILE_SECTOR_BYTES;
	/* A partial last sector cannot be read with O_DIRECT. */
	*size_bytes = (uint64_t)st->st_size -
		      (uint64_t)st->st_size % DEV_FILE_SECTOR_BYTES;
	if (*size_bytes == 0 && st->st_size > 0) {
		fp_errf(err, errlen, "'%s' is smaller than one %u-byte sector",
			path, DEV_FILE_SECTOR_BYTES);
		return -EINVAL;
	}
	return 0;
}

/* Who holds the file of st open, writers first, as /proc shows it;
 * who is left as it is when nobody shows. */
static void describe_holder(const struct stat *st, char *who, size_t len)
{
	struct procfd_user u;

	if (procfd_find_user(st, true, &u) > 0 ||
	    procfd_find_user(st, false, &u) > 0)
		procfd_describe(&u, who, len);
}

/* Refused because something else holds the target: name the process
 * when /proc shows one (excl: the O_EXCL open failed, else the lock). */
static int dev_err_in_use(const struct stat *st, const char *path,
			  enum fp_open_mode mode, bool excl, char *err, size_t errlen)
{
	char who[64] = "";

	describe_holder(st, who, sizeof(who));
	if (excl)
		fp_errf(err, errlen, "refusing to write '%s': it is held "
			"exclusively (mounted, device-mapper, or an O_EXCL "
			"open)%s%s", path, who[0] ? "; open by " : "", who);
	else if (mode == FP_OPEN_TIME)
		fp_errf(err, errlen, "refusing to time '%s': %s holds its lock "
			"(a test or restore writing it, or another timing run): "
			"wait for it to finish", path, who[0] ? who : "another process");
	else
		fp_errf(err, errlen, "refusing to write '%s': %s holds its lock "
			"(another test, restore or timing run is using it)", path,
			who[0] ? who : "another process");
	return -FP_EREFUSED;
}

/* flock() without blocking, retried for a while: udev holds a shared
 * lock on a disk while it probes it (after it appears, and after every
 * close of a written device, such as the end of a test), which must not
 * refuse a run started just then.  0 or a negative errno (-EWOULDBLOCK:
 * still held at the end). */
static int flock_briefly(int fd, int how)
{
	for (int tries = 0;; tries++) {
		struct timespec pause = { 0, DEV_LOCK_RETRY_NS };

		if (flock(fd, how | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK || tries == DEV_LOCK_RETRIES)
			return -errno;
		nanosleep(&pause, NULL);
	}
}

/* A writer holds an exclusive lock on the target until it closes it, so
 * a second flashprobe (or anything else that takes the lock, such as
 * flock(1)) cannot write the same image or device at the same time, and
 * "flashprobe restore" cannot replay a journal under a running test.
 * O_EXCL alone covers neither regular files nor non-exclusive openers.
 * A timing run takes the same lock: two runs on one card at once would
 * each time the other's I/O.  Where locks are not supported (ENOLCK on
 * some network file systems) a timing run goes on without one; a writer
 * does not. */
static int dev_lock(int fd, const struct stat *st, const char *path,
		    enum fp_open_mode mode, char *err, size_t errlen)
{
	int rc = flock_briefly(fd, LOCK_EX);

	if (rc == 0)
		return 0;
	if (rc == -EWOULDBLOCK)
		return dev_err_in_use(st, path, mode, false, err, errlen);
	if (mode == FP_OPEN_TIME)
		return 0;
	fp_errf(err, errlen, "cannot lock '%s': %s", path, strerror(-rc));
	return rc;
}

/* The file behind a loop device no longer has the name it was attached
 * by (renamed away, deleted, or that name now leads elsewhere), so its
 * lock cannot be taken: another run on the file under its new name, or
 * on another loop device over it, would not see this one.  A timing run
 * goes on with the node's lock; a writer does not. */
static int unnamed_data_file(const char *path, enum fp_open_mode mode,
			     char *err, size_t errlen)
{
	if (mode == FP_OPEN_TIME)
		return 0;
	fp_errf(err, errlen, "refusing to write '%s': the file it reads was "
		"renamed or deleted after it was attached, so a run on that file "
		"under another name could write it at the same time: detach the "
		"loop device and attach the file again (losetup -d, losetup -f)",
		path);
	return -FP_EREFUSED;
}

/* A loop device reads and writes its file, which a test of the file
 * itself, or of another loop device over it, locks under another name:
 * the lock of the device node alone would let two runs write the same
 * data (their journals, one in each state directory, would then save
 * each other's test patterns).  So a writer or timing run on a loop
 * device (or a partition of one) also locks the file, as dev_lock()
 * does: *fd is that file's descriptor, or -1 when the device is no loop
 * device. */
/* What a run locks for the data at the end of a loop device's chain: the
 * file by a name that still leads to it, or, for a loop device over a
 * disk (or a partition of one), the disk's node, which a run on the disk
 * locks.  False when the file has no name left. */
struct data_lock {
	char node[PATH_MAX];
	struct stat want;	/* st_dev/st_ino of the file, st_rdev of the disk */
};

static bool data_lock_of(const struct loopfile *f, struct data_lock *l)
{
	unsigned ma, mi;
	char dir[PATH_MAX];

	memset(l, 0, sizeof(*l));
	if (f->rdev == 0) {
		l->want.st_mode = S_IFREG;
		l->want.st_dev = f->dev;
		l->want.st_ino = f->ino;
		snprintf(l->node, sizeof(l->node), "%s", f->path);
		return f->named;
	}
	if (sysfs_disk_devno("/sys", major(f->rdev), minor(f->rdev), &ma, &mi) < 0 ||
	    sysfs_block_dir("/sys", ma, mi, dir, sizeof(dir)) < 0)
		return false;
	l->want.st_mode = S_IFBLK;
	l->want.st_rdev = makedev(ma, mi);
	return snprintf(l->node, sizeof(l->node), "/dev%s", strrchr(dir, '/')) <
	       (int)sizeof(l->node);
}

/* Whether what was opened is what data_lock_of() meant. */
static bool is_data_lock(const struct data_lock *l, const struct stat *st)
{
	if (S_ISBLK(l->want.st_mode))
		return S_ISBLK(st->st_mode) && st->st_rdev == l->want.st_rdev;
	return S_ISREG(st->st_mode) && st->st_dev == l->want.st_dev &&
	       st->st_ino == l->want.st_ino;
}

static int dev_lock_data_file(const struct stat *st, const char *path,
			      enum fp_open_mode mode, int *fd, char *err,
			      size_t errlen)
{
	char who[64] = "";
	struct data_lock l;
	struct loopfile f;
	struct stat fst;
	int rc;

	*fd = -1;
	rc = loopfile_data("/sys", major(st->st_rdev), minor(st->st_rdev), &f);
	if (rc == 0 || (rc < 0 && rc != -ESTALE))
		return 0;	/* no loop device, or sysfs is gone: the node's lock */
	if (rc < 0 || !data_lock_of(&f, &l))
		return unnamed_data_file(path, mode, err, errlen);
	*fd = open(l.node, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (*fd < 0)
		return 0;	/* a file we cannot open, nobody else opens either */
	if (fstat(*fd, &fst) != 0 || !is_data_lock(&l, &fst)) {
		close(*fd);	/* renamed over since loopfile_data() looked */
		*fd = -1;
		return unnamed_data_file(path, mode, err, errlen);
	}
	rc = flock_briefly(*fd, LOCK_EX);
	if (rc == 0 || (rc != -EWOULDBLOCK && mode == FP_OPEN_TIME))
		return 0;
	if (rc == -EWOULDBLOCK)
		describe_holder(&fst, who, sizeof(who));
	close(*fd);
	*fd = -1;
	if (rc != -EWOULDBLOCK) {
		fp_errf(err, errlen, "cannot lock '%s', the data behind '%s': %s",
			l.node, path, strerror(-rc));
		return rc;
	}
	fp_errf(err, errlen, "refusing to %s '%s': its data '%s' is locked by %s "
		"(a test, restore or timing run on it or on another loop device "
		"over it): wait for it to finish",
		mode == FP_OPEN_TIME ? "time" : "write", path, l.node,
		who[0] ? who : "another process");
	return -FP_EREFUSED;
}

int fp_dev_share_disk_lock(const char *disk, const char *path, int *fd,
			   char *err, size_t errlen)
{
	char who[64] = "another process";
	struct stat st;
	bool held;
	int rc;

	*fd = open(disk, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*fd < 0 || (rc = flock_briefly(*fd, LOCK_SH)) == 0)
		return 0;
	held = rc == -EWOULDBLOCK;
	if (held && fstat(*fd, &st) == 0)
		describe_holder(&st, who, sizeof(who));
	close(*fd);
	*fd = -1;
	if (!held)
		return 0;
	fp_errf(err, errlen, "refusing to time '%s': %s holds the lock of its "
		"disk '%s' (a test or restore writing it, or a timing run): "
		"wait for it to finish", path, who, disk);
	return -FP_EREFUSED;
}

/* Refuse what is neither a block device nor a regular file, before open():
 * opening a fifo would block and opening a tape would rewind it. */
static int dev_check_type(const struct stat *st, const char *path, char *err,
			  size_t errlen)
{
	if (S_ISDIR(st->st_mode)) {
		fp_errf(err, errlen, "'%s' is a directory", path);
		return -EISDIR;
	}
	if (!S_ISBLK(st->st_mode) && !S_ISREG(st->st_mode)) {
		fp_errf(err, errlen, "'%s' is not a block device or regular file",
			path);
		return -ENOTBLK;
	}
	return 0;
}

int fp_dev_open_path(const char *path, enum fp_open_mode mode,
		     struct fp_dev **out, char *err, size_t errlen)
{
	struct stat st, fst;
	struct dev_real *r = NULL;
	uint64_t size_bytes = 0;
	uint32_t sector_bytes = 0;
	int fd, data_lock_fd = -1, rc;

	if (out != NULL)
		*out = NULL;
	if (path == NULL || out == NULL) {
		fp_errf(err, errlen, "no device given");
		return -EINVAL;
	}
	if (stat(path, &st) != 0) {
		rc = -errno;
		fp_errf(err, errlen, "cannot open '%s': %s", path, strerror(-rc));
		return rc;
	}
	rc = dev_check_type(&st, path, err, errlen);
	if (rc < 0)
		return rc;
	fd = open(path, dev_open_flags(mode, S_ISBLK(st.st_mode)));
	if (fd < 0) {
		rc = -errno;
		if (rc == -EINVAL)
			dev_err_no_direct(err, errlen, path);
		else if (rc == -EBUSY && mode == FP_OPEN_WRITE)
			rc = dev_err_in_use(&st, path, mode, true, err, errlen);
		else
			fp_errf(err, errlen, "cannot open '%s': %s", path,
				strerror(-rc));
		return rc;
	}
	/* The path may have been replaced between stat() and open(). */
	if (fstat(fd, &fst) != 0) {
		rc = -errno;
		fp_errf(err, errlen, "cannot stat '%s': %s", path, strerror(-rc));
		goto err_close;
	}
	rc = dev_check_type(&fst, path, err, errlen);
	if (rc < 0)
		goto err_close;
	if (mode != FP_OPEN_READ &&
	    (rc = dev_lock(fd, &fst, path, mode, err, errlen)) < 0)
		goto err_close;
	if (mode != FP_OPEN_READ && S_ISBLK(fst.st_mode) &&
	    (rc = dev_lock_data_file(&fst, path, mode, &data_lock_fd, err, errlen)) < 0)
		goto err_close;
	rc = dev_geometry(fd, &fst, path, &size_bytes, &sector_bytes, err,
			  errlen);
	if (rc < 0)
		goto err_close;
	if (size_bytes == 0) {
		fp_errf(err, errlen, "'%s' is empty", path);
		rc = -EINVAL;
		goto err_close;
	}
	r = malloc(sizeof(*r));
	if (r == NULL)
		goto err_nomem;
	r->fd = fd;
	r->data_lock_fd = data_lock_fd;
	*out = fp_dev_create(&dev_real_ops, r,
			     S_ISBLK(fst.st_mode) ? FP_DEV_BLOCK : FP_DEV_FILE,
			     path, size_bytes, sector_bytes);
	if (*out == NULL)
		goto err_nomem;
	return 0;

err_nomem:
	rc = -ENOMEM;
	fp_errf(err, errlen, "cannot open '%s': %s", path, strerror(ENOMEM));
err_close:
	free(r);
	close(fd);
	if (data_lock_fd >= 0)
		close(data_lock_fd);
	return rc;
}
