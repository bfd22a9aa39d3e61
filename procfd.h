/* procfd.h - which other process has a file or device open, from /proc.
 *
 * Used to name the process behind a refused lock and to warn about a
 * process that holds the device under test open for writing, which the
 * exclusive open does not stop (O_EXCL conflicts only with other
 * exclusive openers such as mounts).  Processes of other users are
 * visible only to root; nothing here is a guarantee, only a name for the
 * user.
 */
#ifndef FLASHPROBE_PROCFD_H
#define FLASHPROBE_PROCFD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct procfd_user {
	int pid;
	char comm[32];		/* /proc/PID/comm, or "" */
};

/* Look through /proc/PID/fd of every process but this one for target (a
 * stat() of the file or device node: the same st_rdev for a block device,
 * the same st_dev and st_ino for anything else).  With writers_only, only
 * descriptors opened for writing count (the flags: line of
 * /proc/PID/fdinfo).  Returns 1 with the first one found in *u, 0 when
 * none is visible, or a negative errno when /proc cannot be read. */
int procfd_find_user(const struct stat *target, bool writers_only,
		     struct procfd_user *u);

/* Like procfd_find_user(target, true, u), but only a process that also
 * has /dev/fuse open: a FUSE server (fuse2fs, ntfs-3g, ...) writing the
 * file, most likely the image of a file system it serves.  0 as well
 * when this system has no /dev/fuse. */
int procfd_find_fuse_writer(const struct stat *target, struct procfd_user *u);

/* Whether process pid runs command word: the first of its arguments
 * after the program's name that is no option (/proc/PID/cmdline), as in
 * "flashprobe -q restore DEVICE".  False when it cannot be read. */
bool procfd_runs_command(int pid, const char *word);

/* "'comm' (pid N)" for messages. */
void procfd_describe(const struct procfd_user *u, char *buf, size_t len);

#endif
