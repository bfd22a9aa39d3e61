/* loopfile.h - the file a loop device reads and writes.
 *
 * sysfs gives the name the file had when it was attached.  Since then it
 * may have been renamed (kept through a hard link) or deleted, and the
 * name may lead to another file or nowhere; a name that really ends in
 * " (deleted)" or in a space reads like one of those.  The kernel still
 * knows the file itself: LOOP_GET_STATUS64 on the device's node gives its
 * device and inode.  So the identity comes from the kernel, and the name
 * counts only when it still leads to that very file.  Used by the safety
 * gate (aliases, outputs onto the data under test) and by dev.c (the
 * image's lock, which needs a name to open).
 */
#ifndef FLASHPROBE_LOOPFILE_H
#define FLASHPROBE_LOOPFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct loopfile {
	dev_t dev;		/* the file's identity */
	ino_t ino;
	dev_t rdev;		/* its device number when it is a block device */
	bool named;		/* path leads to this very file now */
	char path[PATH_MAX];
	char window[160];	/* "+OFFSET+SIZE" of each loop device in the
				 * chain that shows a window and of each
				 * partition on the way, top first */
	bool window_cut;	/* more windows than window holds */
	bool composed;		/* those windows as one of the file: */
	uint64_t offset;	/* the device's byte y is the file's byte */
	uint64_t limit;		/* offset + y, for y below limit (0: all) */
};

/* What the loop device whose sysfs disk directory is diskdir reads: 1 and
 * *f; 0 when it is no loop device or has no file; -ESTALE when its name
 * leads nowhere and the kernel cannot be asked (its node cannot be
 * opened). */
int loopfile_backing(const char *diskdir, struct loopfile *f);

/* Where the data of block device major:minor lives when it is a loop
 * device or a partition of one, through loop devices over loop devices:
 * 1 and *f, the regular file (f->rdev 0) or the block device that is no
 * loop device (f->rdev) at the end of the chain; 0 when it is no loop
 * device; a negative errno when sysfs (below root) or the kernel cannot
 * tell (-ESTALE, -ELOOP). */
int loopfile_data(const char *root, unsigned major, unsigned minor,
		  struct loopfile *f);

/* A loop device's serial for the journal, naming where its chain of loop
 * devices ends: "loop:ino=DEV:INO (NAME)" for a file, "loop:blk=MAJ:MIN
 * (NAME)" for a disk, "loop+OFFSET+LIMIT:..." when loop devices or
 * partitions on the way show a window of it (all of them composed into
 * one, however deep the chain); NAME only while it leads there.  1, 0
 * when major:minor is no loop device, or a negative errno. */
int loopfile_serial(const char *root, unsigned major, unsigned minor,
		    char *buf, size_t len);
/* (-ENAMETOOLONG when a partition's window cannot be read and the chain
 * shows more windows than a serial holds: cut, two chains differing
 * only in the last one would read alike.) */

/* The node a loop serial names (S_IFREG with st_dev/st_ino, or S_IFBLK
 * with st_rdev): 1, or 0 for other serials (older journals named the
 * file: "loop:PATH"). */
struct stat;
int loopfile_serial_node(const char *serial, struct stat *st);

/* The name for people at the end of a loop serial ("... (NAME)"): 1
 * with it in buf, 0 when the serial has none. */
int loopfile_serial_name(const char *serial, char *buf, size_t len);

/* The windows of a loop serial's chain composed into one window of its
 * file: the device's byte y is the file's byte *offset + y, for y below
 * *limit (0: up to the file's end).  False for other serials and for a
 * window it cannot read (a partition sysfs did not describe). */
bool loopfile_serial_window(const char *serial, uint64_t *offset, uint64_t *limit);

/* losetup's options for the one window of its file a loop serial's chain
 * shows (" --offset N [--sizelimit M]"), "" without one: 1, or 0 when it
 * has none that can be read. */
int loopfile_serial_losetup_opts(const char *serial, char *buf, size_t len);

/* Whether two serials name the same device: any serial up to the name
 * for people (loopfile_serial_key_len); loop serials by their file and
 * the window of it they show, however many loop devices and partitions
 * the chain passes (the same bytes of the same file are one device). */
bool loopfile_serials_same(const char *a, const char *b);

/* Whether two loop serials end at the same file (or disk) through other
 * windows of it. */
bool loopfile_serials_other_window(const char *a, const char *b);

/* How much of a serial says which device it is: a loop serial up to the
 * name for people, any other whole. */
size_t loopfile_serial_key_len(const char *serial);

#endif
