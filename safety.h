/* safety.h - the write-safety gate, data signatures, typed consent and
 * interruption handling.
 *
 * Every writing test passes safety_check_target() before the device is
 * opened for writing: a partition instead of the whole disk, a device (or
 * any partition of it) that is mounted, used as swap or held by another
 * block device (device-mapper, md, LVM), and a read-only device are
 * refused with a one-line reason.  Reading tests only get warnings.
 *
 * The signal part lets a writing test stop at the next I/O boundary and
 * restore the original data instead of dying half-way (see journal.h).
 *
 * Nothing here prints (except the async-signal-safe notes of the signal
 * handler on stderr) or exits; errors are negative errno values.
 */
#ifndef FLASHPROBE_SAFETY_H
#define FLASHPROBE_SAFETY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fp_dev;

enum safety_mode {
	SAFETY_READ,		/* read-only test: nothing refused for safety */
	SAFETY_WRITE,		/* --write or --destructive */
};

enum safety_target {
	SAFETY_TARGET_SIM,	/* "sim:..." */
	SAFETY_TARGET_FILE,	/* regular file (image) */
	SAFETY_TARGET_DISK,	/* whole block device */
	SAFETY_TARGET_PARTITION,
};

#define SAFETY_NAME_MAX 64

/* What the gate found.  Filled as far as the check got, also on refusal. */
struct safety_report {
	enum safety_target target;
	unsigned major, minor;		/* block devices: the target's number */
	char disk[SAFETY_NAME_MAX];	/* block devices: the disk, "/dev/sdb" */
	bool partition_warning;		/* read test on a partition: offsets are
					 * relative to the partition start */
	bool mounted;			/* target, its disk or a partition */
	bool swap;
	bool held;			/* holders/ not empty */
	bool readonly;
	char busy[SAFETY_NAME_MAX];	/* the one mounted, swap or held */
	char warning[256];		/* one line for the user, or "" */
};

/* The gate.  path is what the user gave ("sim:..." always passes).
 * Returns 0 (rep->warning may still say something), or a refusal with a
 * one-line reason in err (no program prefix, no newline):
 *   -ENOENT etc.  path cannot be examined (errno of stat)
 *   -EISDIR       a directory
 *   -ENOTBLK      neither a block device nor a regular file
 *   -EXDEV        SAFETY_WRITE on a partition (the reason names the disk)
 *   -EBUSY        SAFETY_WRITE and the disk or one of its partitions is
 *                 mounted, used as swap or held (for a loop device also
 *                 another loop device over the same backing file, which
 *                 rep->busy names); a regular file used as
 *                 swap, attached to a loop device, or a flashprobe journal
 *   -EROFS        SAFETY_WRITE on a read-only device (BLKROGET, sysfs ro)
 *   -FP_EREFUSED  SAFETY_WRITE on a block device whose sysfs entry cannot
 *                 be read: nothing could prove it unused
 * -ENOENT, -EISDIR, -ENOTBLK and -EINVAL are bad input (usage errors);
 * the others are refusals for safety.
 * The mount check reads /proc/self/mountinfo by major:minor (and by the
 * source's device number), so it sees mounts under any name; mounts in
 * other mount namespaces are left to the O_EXCL open of fp_dev_open_path().
 * With SAFETY_WRITE, another process that holds the target open for
 * writing (seen in /proc/PID/fd and fdinfo) is only a warning in
 * rep->warning: O_EXCL does not stop it, the lock of fp_dev_open_path() stops
 * only other lockers (a second flashprobe). */
int safety_check_target(const char *path, enum safety_mode mode,
			struct safety_report *rep, char *err, size_t errlen);

/* An output file the run will write (what: "--svg", "--journal") must
 * not be the device under test: the same file (inode), the block device
 * itself or another node of its disk, or a file (or, when it does not
 * exist yet, a directory) on a file system whose device is the disk or
 * one of its partitions.  The data of a loop device is its backing file:
 * that file, another loop device over it (or a partition of one) and a
 * file system mounted from such a loop device are the device too, and
 * for an image under test so is a loop device over it.  0, or -EINVAL with the reason in err (a bad
 * invocation: nothing has been opened yet), or the error when sysfs cannot
 * tell (unknown is refused too).  Sims have no such outputs. */
int safety_check_output(const char *what, const char *output,
			const char *device, char *err, size_t errlen);

/* The same for an open stream (what: "standard output", "standard
 * error"), as a shell redirection made it: `>/dev/sdb`, `2>>card.img`.
 * 0, or -EINVAL with the reason in err.  Only a stream known to be on the
 * device is refused: a pipe or terminal has no place on a disk, and a
 * device sysfs cannot place is the gate's to refuse. */
int safety_check_stream(const char *what, int fd, const char *device,
			char *err, size_t errlen);

/* Whether a partition table, file system, swap or RAID/LVM/LUKS signature
 * is on d (reads the first 68 KiB and the last 128 KiB, where md 0.90 and
 * 1.0 and a GPT's backup header are).  Returns 1 with its name in what
 * ("MBR partition table", "ext2/3/4 file system", ...), 0 when none is
 * known, or a negative errno from the read (treat as "may hold data"). */
int safety_find_signature(struct fp_dev *d, char *what, size_t whatlen);

/* Whether d holds anything but erased bytes (0x00 or 0xff) where it is
 * sampled: its first and last MiB and 63 blocks of 4 KiB spread between.
 * For --destructive, which has no backup: data without a known signature
 * (a raw archive, plain dm-crypt) is data too.  1 with a description in
 * what, 0 blank, or a negative errno. */
int safety_find_nonblank(struct fp_dev *d, char *what, size_t whatlen);

/* Ask on out for the device name and read one line from in.  Accepts the
 * path as given or its last component ("sdb" for "/dev/sdb").  Returns 0
 * when it matches, -ECANCELED otherwise (also on end of input or an
 * interrupted read).  The caller decides when to ask: a signature found,
 * stdin a terminal, no --yes. */
int safety_confirm(const char *device, FILE *in, FILE *out);

/* Whether major:minor is the disk behind device_path or one of that
 * disk's partitions: 1 yes, 0 no (also for files and sims), negative
 * errno when sysfs cannot be read.  Used to keep the journal off the
 * device under test. */
int safety_dev_on_disk(const char *device_path, unsigned major,
		       unsigned minor);

/* The same two with sysfs and procfs below other roots (a fake tree in
 * tests); the plain ones read sysfs_roots_default. */
/* Whether writing one of two nodes (st_mode with st_rdev for block
 * devices, st_dev and st_ino for files) can change what the other reads:
 * the same file or device, a disk and one of its partitions, a loop device
 * (or a partition of one) and its backing file or another loop device over
 * that file. */
struct stat;
bool safety_nodes_overlap(const struct stat *a, const struct stat *b);

struct sysfs_roots;
int safety_check_target_at(const struct sysfs_roots *r, const char *path,
			   enum safety_mode mode, struct safety_report *rep,
			   char *err, size_t errlen);
int safety_dev_on_disk_at(const struct sysfs_roots *r, const char *device_path,
			  unsigned major, unsigned minor);

/* ---- interruption ---- */

/* Install handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT that only
 * record the signal: analyzers stop at their next I/O (the journal device
 * and the wrapper below return -EINTR), the caller restores and exits with
 * safety_exit_status().  A signal ignored at start (SIGHUP under nohup)
 * stays ignored.  SIGPIPE is ignored until uninstall, so that a closed
 * output pipe is a write error after the restore, not a death before it.
 * Returns 0 or a negative errno. */
int safety_signals_install(void);

/* The line a file size limit's SIGXFSZ prints before it ends a test
 * (as a crash, which the journal covers): how to restore from journal,
 * or, with NULL (--destructive), only what happened. */
void safety_fsize_note(const char *journal);

/* Put back the handlers that were there before install (tests). */
void safety_signals_uninstall(void);

/* The first signal received since install (or the last clear), or 0. */
int safety_interrupted(void);

/* Forget a received signal (tests). */
void safety_interrupt_clear(void);

/* Conventional exit status for death by sig: 128 + sig (130 for SIGINT,
 * 143 for SIGTERM, 129 for SIGHUP). */
int safety_exit_status(int sig);

/* While a restore runs, every signal prints (async-signal-safely) that
 * the restore continues, what it restores, how far it is and about how
 * long is left, instead of stopping anything.  what is copied (device
 * path); progress takes bytes done and elapsed nanoseconds. */
void safety_restore_begin(const char *what, uint64_t total_bytes);
/* Before a replay: a file size limit (ulimit -f) does not cut it short.
 * SIGXFSZ is ignored from here on (until safety_signals_uninstall()), so
 * an image's write past the limit fails with EFBIG, which the restore
 * reports, keeping its journal, after restoring everything below the
 * limit (it killed the restore without a word before), and the report
 * after it fails as any write would. */
void safety_restore_start(void);
void safety_restore_progress(uint64_t done_bytes, uint64_t elapsed_ns);
void safety_restore_end(void);

/* The same as a progress callback (the shape of journal.h's
 * fp_progress_fn): the first call begins the notes for the device
 * named by arg (a string), later calls update them with the time since
 * that first call.  Call safety_restore_end() after the replay. */
void safety_restore_note(void *arg, uint64_t done_bytes, uint64_t total_bytes);

/* A pass-through device over inner that fails every read and write with
 * -EINTR once a signal was recorded, so an analyzer run without a
 * journal (--destructive, read tests) stops at the next I/O.  Its clock
 * is inner's; it does not own inner (close it first, then inner).
 * Returns 0, -EINVAL or -ENOMEM. */
int safety_wrap_interruptible(struct fp_dev *inner, struct fp_dev **out);

#endif
