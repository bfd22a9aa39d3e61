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

/* Run another program (argv[0] looked up in PATH) with input (or nothing)
 * on its stdin; capture as tu_run(). */
void tu_run_tool(struct run_result *r, const char *const *argv, const char *input);

/* Whether name is an executable in PATH. */
bool tu_have_tool(const char *name);

/* A child running the binary, started without waiting, so that a test can
 * signal it: stdin from /dev/null, stdout and stderr captured as in
 * tu_run(). */
struct tu_child {
	int pid;
	int out, err;
};

/* Start the binary with argv (as tu_run()).  fsize_limit > 0 sets
 * RLIMIT_FSIZE in the child (and no core dumps): a write past it kills the
 * child with SIGXFSZ, a crash at a known point.  0 or -errno. */
int tu_spawn(struct tu_child *c, const char *const *argv, uint64_t fsize_limit);

/* Wait for the child and collect its output; r->status as tu_run().
 * Returns the signal that terminated it, or 0 if it exited. */
int tu_wait(struct tu_child *c, struct run_result *r);

/* Whether what the running child wrote to stderr so far contains needle,
 * polled for up to timeout_ms. */
bool tu_child_said(const struct tu_child *c, const char *needle, unsigned timeout_ms);

/* The monotonic clock in nanoseconds, and a sleep that EINTR does not
 * cut short: for stopping a child at a chosen moment. */
uint64_t tu_now_ns(void);
void tu_sleep_ns(uint64_t ns);

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
/* The same with losetup options ("--offset 1048576", "-r"). */
char *tu_loop_attach_opts(const char *path, const char *opts);
/* Detach; safe to call with NULL. */
void tu_loop_detach(const char *dev);

/* A 64-bit FNV-1a checksum of a whole file or device (buffered reads),
 * 0 on error. */
uint64_t tu_checksum(const char *path);

/* The same over len bytes from off (to the end when it is shorter). */
uint64_t tu_checksum_range(const char *path, uint64_t off, uint64_t len);

/* The unsigned number right after key in s, 0 when it is missing (a
 * check failure is reported by the caller's assertions). */
uint64_t tu_number_after(const char *s, const char *key);

/* Write text and a newline to root/rel, creating the directories on the
 * way (for fake sysfs trees).  0 or -errno. */
int tu_put_file(const char *root, const char *rel, const char *text);

/* A symbolic link root/rel -> target, creating the directories on the
 * way.  0 or -errno. */
int tu_put_link(const char *root, const char *rel, const char *target);

/* Remove a directory and everything below it (best effort). */
void tu_rm_tree(const char *dir);

/* A test that cannot run on this machine is not added to its suite (so it
 * is never counted as passed); it is announced loudly on stderr and
 * counted here instead. */
void tu_skip(const char *test, const char *why);
unsigned tu_skipped(void);

/* The run's scratch directories, made by main before the suites fork
 * their tests and removed with all they hold when the run ends: a test
 * that fails half-way leaves no image behind.  Images flashprobe opens
 * belong in tu_disk_dir() (under /var/tmp: O_DIRECT needs a disk file
 * system); files only other tools touch in tu_fast_dir() (under /dev/shm
 * when there is one: their fsyncs cost nothing). */
void tu_scratch_begin(void);
void tu_scratch_end(void);
const char *tu_disk_dir(void);
const char *tu_fast_dir(void);

/* Where journals go.  tu_scratch_begin() puts the default places
 * (FLASHPROBE_TEST_DEFAULT_DIR) in the scratch directory, so that no
 * test reaches the machine's /var/lib/flashprobe.  tu_state_dir_set(dir)
 * sets FLASHPROBE_STATE_DIR and the default places both to dir: every
 * journal and pointer file of the test stays there (a pointer file named
 * after a loop device would outlive the test in a shared place);
 * tu_state_dir_unset() unsets the first and puts the second back. */
void tu_state_dir_set(const char *dir);
void tu_state_dir_unset(void);
/* Makes dir and puts the default places there alone (FLASHPROBE_STATE_DIR
 * as it is): a test of journals kept apart from them.  False on failure. */
bool tu_default_dir_make(const char *dir);

/* Sparse files: a new one of size bytes in dir (malloc'ed path, NULL on
 * error). */
char *tu_sparse_file(const char *dir, uint64_t size);

/* Exactly len bytes at off; 0 or -EIO. */
int tu_read_at(const char *path, uint64_t off, void *buf, size_t len);
int tu_write_at(const char *path, uint64_t off, const void *buf, size_t len);

/* Copy the data of src (not its holes) into dst at off; 0 or -EIO. */
int tu_copy_sparse(const char *src, const char *dst, uint64_t off);

/* How many I/O calls ran at real-time priority (SCHED_FIFO) and how many
 * did not, as seen by a policy spy. */
struct tu_policy_counts {
	unsigned reads_rt, reads_other, writes_rt, writes_other;
};

struct fp_dev;

/* A device that passes every call to inner (a simulated card, closed
 * with it) but looks like a regular file named path, so that the
 * real-time rules for real devices apply; each read and write counts the
 * scheduling policy it ran under into *counts.  NULL on ENOMEM. */
/* A probe's protect callback over the device arg that grants each area as
 * the session does (the previous test's area ends; nothing is backed up). */
int tu_allow_area(void *arg, const char *test, uint64_t start, uint64_t end,
		  uint64_t max_bytes, bool may_alias);

/* The entries of directory dir (but . and ..) as "name (size)" in
 * names; returns how many there are. */
size_t tu_dir_list(const char *dir, char *names, size_t len);

struct fp_dev *tu_policy_spy(struct fp_dev *inner, const char *path,
			     struct tu_policy_counts *counts);

/* FNV-1a 64 of [start, end) of d, read through the device layer in 1 MiB
 * pieces; 0 when a read fails. */
uint64_t tu_dev_sum(struct fp_dev *d, uint64_t start, uint64_t end);

/* Copy every byte of from onto to (the same size; to's write area is
 * opened and ended around it).  0 or a negative errno. */
int tu_dev_copy(struct fp_dev *from, struct fp_dev *to);

/* Number of built-in simulated cards (sim_profiles). */
size_t tu_sim_profile_count(void);

/* Test devices that wrap another one (fp_dev_create() over a card, to
 * record, delay or break its I/O) keep it as the first member of their
 * state, a struct fp_dev *: these ops then pass reads through, take its
 * clock, and at close leave it to the test (tu_wrapped_keep) or close it
 * (tu_wrapped_close). */
int tu_wrapped_pread(void *priv, void *buf, size_t len, uint64_t off);
uint64_t tu_wrapped_now(void *priv);
void tu_wrapped_keep(void *priv);
void tu_wrapped_close(void *priv);

/* A counterfeit card that ignores the high address bits: an offset lands
 * at offset mod period_bytes of inner (whose first period_bytes are its
 * flash), whatever size_bytes it reports, a multiple of inner's sector.
 * Closing it leaves inner open.  NULL on ENOMEM. */
struct fp_dev *tu_wrap_fake(struct fp_dev *inner, uint64_t period_bytes,
			    uint64_t size_bytes);

#endif
