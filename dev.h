/* dev.h - raw device layer: one interface, several backends.
 *
 * Analyzers read and write through a struct fp_dev and never know whether it
 * is a block device, a regular file or a simulated card.  Every I/O goes
 * through fp_dev_read_timed()/fp_dev_write_timed(), which time the call with
 * the backend's clock (CLOCK_MONOTONIC for real devices, a virtual clock for
 * simulated cards), count it, and enforce the announced write area.
 *
 * Errors are negative errno values; nothing here prints or exits.
 */
#ifndef FLASHPROBE_DEV_H
#define FLASHPROBE_DEV_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct fp_dev;

enum fp_dev_kind {
	FP_DEV_FILE,
	FP_DEV_BLOCK,
	FP_DEV_SIM,
};

/* Open modes.  FP_OPEN_READ never opens the target for writing. */
enum fp_open_mode {
	FP_OPEN_READ,
	FP_OPEN_TIME,		/* FP_OPEN_READ for a timing run: with the
				 * exclusive flock() of FP_OPEN_WRITE, so a
				 * test or restore writing the target (or a
				 * second timing run) cannot disturb the
				 * timings, nor start while they are taken */
	FP_OPEN_WRITE,		/* O_RDWR, O_EXCL on block devices, and an
				 * exclusive flock() on every target until
				 * close: another writer (or a lock holder)
				 * is refused with -FP_EREFUSED */
};

/* What a backend implements.  pread/pwrite transfer exactly len bytes or
 * return a negative errno; they are called with sector-aligned offsets and
 * lengths and with buffers from fp_dev_alloc_buf().  now_ns is the backend
 * clock in nanoseconds (monotonic, or virtual for simulators).  close frees
 * priv. */
struct fp_dev_ops {
	int (*pread)(void *priv, void *buf, size_t len, uint64_t off);
	int (*pwrite)(void *priv, const void *buf, size_t len, uint64_t off);
	uint64_t (*now_ns)(void *priv);
	void (*close)(void *priv);
};

/* Wrap a backend into a device.  path is copied.  Returns NULL on ENOMEM
 * (priv is not closed then). */
struct fp_dev *fp_dev_create(const struct fp_dev_ops *ops, void *priv,
			     enum fp_dev_kind kind, const char *path,
			     uint64_t size_bytes, uint32_t sector_bytes);

/* A wrapper (journal, interruptible device) is a device over an inner
 * device and says so once, so that lookups needing the backend (is it a
 * simulated card, which one) walk the stack instead of stopping at the
 * first wrapper.  fp_dev_inner() is NULL for a backend. */
void fp_dev_set_inner(struct fp_dev *d, struct fp_dev *inner);
struct fp_dev *fp_dev_inner(const struct fp_dev *d);

/* Open a real block device or regular file with O_DIRECT (a device
 * argument that may also name a simulated card: devspec_open()).  On
 * failure returns a negative errno and writes a one-line reason (no program
 * prefix, no newline) into err. */
int fp_dev_open_path(const char *path, enum fp_open_mode mode,
		     struct fp_dev **out, char *err, size_t errlen);

void fp_dev_close(struct fp_dev *d);

/* A partition and its disk are separate nodes with locks of their own, so
 * a timing run on a partition also shares its disk's lock (LOCK_SH) until
 * it closes *fd: a test or restore of the disk, or a timing run on it, is
 * refused while the partition is timed, and the partition's timing run is
 * refused (-FP_EREFUSED, the reason naming path and disk) while one of
 * those holds the disk.  A disk that cannot be opened or locked is not a
 * refusal (*fd = -1): the partition's own lock still holds. */
int fp_dev_share_disk_lock(const char *disk, const char *path, int *fd,
			   char *err, size_t errlen);

/* Read or write exactly len bytes at off and report the time the call took
 * in *ns (may be NULL).  Returns 0 or a negative errno; a failed I/O never
 * yields a time.  off and len must be multiples of the sector size (-EINVAL
 * otherwise), off + len must not pass the end (-ENOSPC).  Writes outside the
 * write area return -EFAULT and are not performed. */
int fp_dev_read_timed(struct fp_dev *d, void *buf, size_t len, uint64_t off,
		      uint64_t *ns);
int fp_dev_write_timed(struct fp_dev *d, const void *buf, size_t len,
		       uint64_t off, uint64_t *ns);

/* Allow writes only inside [start, end), on d and every device below it.
 * Until this is called no write is allowed at all.  Once an area is set it
 * may only narrow: a range not inside the current one is -EPERM and
 * changes nothing, so code given a device cannot widen what its caller
 * allowed.  Returns -EINVAL for an empty or out-of-device range.  The
 * write authority is the session (session_protect()) and the journal's
 * replay; analyzers only ask fp_dev_may_write() about their plan. */
int fp_dev_set_write_area(struct fp_dev *d, uint64_t start, uint64_t end);

/* End the write area of d and every device below it: nothing may be
 * written until the next fp_dev_set_write_area().  For the write
 * authority only, between one test's area and the next's. */
void fp_dev_end_write_area(struct fp_dev *d);

/* The write area, when one is set: true with [*start, *end). */
bool fp_dev_write_area(const struct fp_dev *d, uint64_t *start, uint64_t *end);

/* The last read or write the device (its backend or a wrapper) failed,
 * so that an error message can name it; NULL when none did. */
struct fp_dev_failure {
	int err;			/* negative errno */
	bool write;
	uint64_t offset_bytes;
	size_t len;
};
const struct fp_dev_failure *fp_dev_last_failure(const struct fp_dev *d);

/* Whether the write area covers [start, end): an analyzer's check that it
 * was given the area its plan needs, before it writes anything. */
bool fp_dev_may_write(const struct fp_dev *d, uint64_t start, uint64_t end);

/* Buffer suitable for O_DIRECT on any backend (page aligned); free with
 * free().  NULL on ENOMEM. */
void *fp_dev_alloc_buf(size_t len);

uint64_t fp_dev_size_bytes(const struct fp_dev *d);
uint32_t fp_dev_sector_bytes(const struct fp_dev *d);
enum fp_dev_kind fp_dev_kind(const struct fp_dev *d);
const char *fp_dev_kind_name(const struct fp_dev *d);	/* "file", "block", "sim" */
const char *fp_dev_path(const struct fp_dev *d);
uint64_t fp_dev_now_ns(struct fp_dev *d);

/* What the block device or file at the bottom of d's stack is: fstat()
 * of the descriptor it holds, so a file renamed or replaced under its
 * name since it was opened is still the one under test.  0, or -ENOTSUP
 * for a simulated card. */
struct stat;
int fp_dev_node_stat(const struct fp_dev *d, struct stat *st);
/* The birth time of that node (util_birth_ns()), 0 when unknown. */
uint64_t fp_dev_node_birth_ns(const struct fp_dev *d);

/* A backend's own state, when d is a device of that backend (ops is the
 * backend's table), else NULL: how a backend recognises its devices
 * (sim_profile_of(), journal_path_of()).  Wrappers reach their inner
 * device only through fp_dev_inner() and fp_dev_read_timed() etc. */
void *fp_dev_priv_if(const struct fp_dev *d, const struct fp_dev_ops *ops);

/* Counters since open: number of I/O calls, summed time spent inside them,
 * bytes written. */
uint64_t fp_dev_io_count(const struct fp_dev *d);
uint64_t fp_dev_io_ns(const struct fp_dev *d);
uint64_t fp_dev_bytes_written(const struct fp_dev *d);

/* Real-time scheduling while timing.  Analyzers hold SCHED_FIFO (priority
 * 10, as flashbench uses) only around the I/O they time: fp_dev_rt_enter()
 * before a measuring phase, fp_dev_rt_leave() after it.  Calls nest; the
 * first enter on a real device switches the process, the matching leave
 * restores the policy it had before (so nice keeps its effect outside).
 * Simulated cards never switch (virtual time is not disturbed by the
 * scheduler).  Nothing happens while the policy forbids it. */
struct fp_dev_rt_policy {
	bool allowed;			/* false: --no-realtime */
	/* Called once, at the first refusal (not root): a notice. */
	void (*refused)(void *arg);
	void *arg;
};

/* Set the policy for the process; the default allows real-time and
 * notifies nobody. */
void fp_dev_rt_configure(const struct fp_dev_rt_policy *p);
void fp_dev_rt_enter(struct fp_dev *d);
void fp_dev_rt_leave(struct fp_dev *d);

/* Step out of a held priority for work that is not timed (a backup in
 * the middle of a measurement) and back in.  fp_dev_rt_suspend() returns
 * what fp_dev_rt_resume() needs. */
bool fp_dev_rt_suspend(void);
void fp_dev_rt_resume(bool was_held);

/* true while the process runs at the real-time priority. */
bool fp_dev_rt_held(void);

#endif
