/* sysfs.h - reading what the kernel says about block devices, below roots
 * the caller passes ("/sys" and "/proc"; a fake tree in tests).  Used by
 * the safety gate (which disk, which partitions, read-only, serial) and by
 * sysinfo.c (what the card and the kernel say).  No state of its own.
 */
#ifndef FLASHPROBE_SYSFS_H
#define FLASHPROBE_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

/* Where sysfs and procfs are mounted. */
struct sysfs_roots {
	const char *sys;
	const char *proc;
};

/* "/sys" and "/proc". */
extern const struct sysfs_roots sysfs_roots_default;

/* dir/name into buf: 0 or -ENAMETOOLONG. */
int sysfs_join(char *buf, size_t len, const char *dir, const char *name);

/* A small attribute file dir/name (name may hold slashes) into buf as it
 * is, but for the newline that ends it: 0, -ENOENT etc. when absent,
 * -EOVERFLOW when it does not fit.  For names, which may hold any byte. */
int sysfs_read_raw(const char *dir, const char *name, char *buf, size_t len);

/* A small attribute file dir/name (name may hold slashes: "device/cid")
 * into buf, surrounding white space removed.  0, -ENOENT etc. when absent,
 * -EOVERFLOW when it does not fit. */
int sysfs_read_attr(const char *dir, const char *name, char *buf, size_t len);

/* The sysfs directory of block device major:minor below root, symlinks
 * resolved, into dir (len >= PATH_MAX).  0 or a negative errno. */
int sysfs_block_dir(const char *root, unsigned major, unsigned minor,
		    char *dir, size_t len);

/* Whether the sysfs directory of a block device is a partition's. */
bool sysfs_is_partition(const char *dir);

/* The number of the disk that block device major:minor is on: its own
 * for a whole disk, its disk's for a partition (and when sysfs does not
 * know it).  0 or a negative errno. */
int sysfs_disk_devno(const char *root, unsigned major, unsigned minor,
		     unsigned *dmajor, unsigned *dminor);

/* Identity string of the disk behind block device path: serial, CID or
 * WWID; "" when none (loop devices: loopfile_serial()).  Returns 0, or a
 * negative errno (-ENOTBLK when path is not a block device). */
int sysfs_device_serial(const char *root, const char *path, char *buf,
			size_t len);

#endif
