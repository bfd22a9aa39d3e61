/* testutil.h - running the built flashprobe binary and making loop
 * devices over temporary files, for end-to-end tests. */
#ifndef FLASHPROBE_TESTS_TESTUTIL_H
#define FLASHPROBE_TESTS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct run_result {
	int status;		/* exit status, or 128 + signal */
	char *out;		/* whole stdout, NUL-terminated */
	char *err;		/* whole stderr */
};

/* Path of the binary under test ($FLASHPROBE_BIN, else ./build/flashprobe). */
const char *tu_binary(void);

/* Run the binary with argv (NULL-terminated, without argv[0]) and stdin
 * from /dev/null; capture everything.  Free with tu_run_free(). */
void tu_run(struct run_result *r, const char *const *argv);
void tu_run_free(struct run_result *r);

/* Number of lines in s (a final line without newline counts). */
size_t tu_count_lines(const char *s);

/* A temporary regular file of size bytes on a disk file system (not
 * tmpfs, which refuses O_DIRECT), filled with seeded data.  Returns a
 * malloc'ed path or NULL. */
char *tu_make_image(uint64_t size_bytes, uint64_t seed);

/* Why loop devices cannot be used here, or NULL when they can (root and
 * /dev/loop-control present). */
const char *tu_loop_unavailable(void);

/* Attach a loop device to path (losetup --find --show); returns a
 * malloc'ed device path or NULL.  partscan adds -P. */
char *tu_loop_attach(const char *path, bool partscan);
/* Detach; safe to call with NULL. */
void tu_loop_detach(const char *dev);

/* A 64-bit FNV-1a checksum of a whole file or device (buffered reads),
 * 0 on error. */
uint64_t tu_checksum(const char *path);

/* Remove a directory and everything below it (best effort). */
void tu_rm_tree(const char *dir);

/* A test that cannot run on this machine is not added to its suite (so it
 * is never counted as passed); it is announced loudly on stderr and
 * counted here instead. */
void tu_skip(const char *test, const char *why);
unsigned tu_skipped(void);

#endif
