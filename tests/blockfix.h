/* blockfix.h - loop-device scenes for the safety and journal tests: a loop
 * device over a temporary image, optionally read-only, with a partition,
 * a file system mounted from it or swap enabled on it.
 *
 * Scenes are built by unchecked fixtures (in the parent process) and torn
 * down by bf_cleanup(), which always unmounts, turns swap off, detaches
 * and deletes, whatever the test did.  Every command that changes a
 * device refuses paths that are not /dev/loop*: the tests never touch any
 * other device. */
#ifndef FLASHPROBE_TESTS_BLOCKFIX_H
#define FLASHPROBE_TESTS_BLOCKFIX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct bf_scene {
	char *image;			/* backing file (malloc'ed) */
	char *dev;			/* "/dev/loopN" (malloc'ed) */
	char part[64];			/* "/dev/loopNp1" or "" */
	unsigned nparts;		/* partitions in the image's MBR */
	char mnt[PATH_MAX];		/* mount point directory or "" */
	char mounted[64];		/* node mounted on mnt, or "" */
	char swap[PATH_MAX];		/* node or file with swap on, or "" */
	char why[256];			/* why setup failed, or "" */
};

/* A file of size_bytes seeded random data in dir (so that the fixture
 * removing dir removes it even after a failed test); malloc'ed path or
 * NULL. */
char *bf_image_in(const char *dir, uint64_t size_bytes, uint64_t seed);

/* Whether a program is on PATH. */
bool bf_have(const char *tool);

/* Run a shell command with output discarded; its exit status. */
int bf_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Why the loop scenes cannot run here (not root, no /dev/loop-control,
 * missing losetup or mount, or one of the space-separated tools), or
 * NULL. */
const char *bf_unavailable(const char *tool);

/* An image of size_bytes on a disk file system; with_mbr writes an MBR
 * with one Linux partition from 1 MiB to the end.  false + s->why. */
bool bf_image(struct bf_scene *s, uint64_t size_bytes, bool with_mbr);
/* The same with nparts (1 to 4) partitions of equal size from 1 MiB on;
 * bf_attach with "-P" then waits for all of them. */
bool bf_image_parts(struct bf_scene *s, uint64_t size_bytes, unsigned nparts);

/* Attach s->image; losetup options such as "-r" or "-P" (may be "").
 * With "-P", waits for partition 1 (asking partx when the kernel did not
 * scan) and fills s->part. */
bool bf_attach(struct bf_scene *s, const char *opts);

/* mkfs.ext4 on a loop node of the scene (no lazy init: nothing writes in
 * the background afterwards). */
bool bf_mkfs(struct bf_scene *s, const char *node);

/* Mount node on a fresh directory with options (e.g. "ro,noload"). */
bool bf_mount(struct bf_scene *s, const char *node, const char *opts);

/* mkswap + swapon on a loop node, or on a regular file. */
bool bf_swapon(struct bf_scene *s, const char *path);

/* Undo everything in reverse order; safe on a partly built scene. */
void bf_cleanup(struct bf_scene *s);

#endif
