/* check_realtime.c - the binary on a real block device whose timing is a
 * simulated card's, in real time.
 *
 * bench/simfuse serves the card as a FUSE file that holds every I/O back
 * for the card's own cost times a scale, and a loop device over that file
 * is what flashprobe opens.  The simulator's virtual clock has no host
 * noise; this path has the system calls, the loop and FUSE round trips and
 * the scheduling of real hardware.  Answers must be the truth or
 * undetermined, a clear erase-block step must be found, and a writing run
 * killed on such a device must restore it byte for byte.
 *
 * Needs root, /dev/fuse, loop devices and the simfuse binary
 * ($FLASHPROBE_SIMFUSE, which make check builds when libfuse3-dev is
 * installed); skipped loudly otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jsonv.h"
#include "tests.h"
#include "testutil.h"

#define MIB (1024ull * 1024)
#define SERVE_WAIT_NS (10ull * 1000000000)	/* for the FUSE mount to appear */

struct served {
	pid_t pid;
	char dir[PATH_MAX];
	char *loop;
};

static const char *simfuse_path(void)
{
	const char *p = getenv("FLASHPROBE_SIMFUSE");

	return p && access(p, X_OK) == 0 ? p : NULL;
}

/* Why the real-time card cannot be served here, or NULL. */
static const char *realtime_unavailable(void)
{
	const char *why = tu_loop_unavailable();

	if (why)
		return why;
	if (access("/dev/fuse", R_OK | W_OK) != 0)
		return "no /dev/fuse";
	if (!simfuse_path())
		return "no simfuse binary (FLASHPROBE_SIMFUSE; make check builds it "
		       "when libfuse3-dev is installed: sudo make deps)";
	return NULL;
}

/* Serve spec at scale under a fresh mount point and put a loop device
 * over it. */
static void serve(const char *spec, const char *scale, struct served *s)
{
	char card[PATH_MAX + 8];
	uint64_t deadline = tu_now_ns() + SERVE_WAIT_NS;
	struct stat st;

	snprintf(s->dir, sizeof(s->dir), "%s/flashprobe-rt.XXXXXX", tu_fast_dir());
	ck_assert_ptr_nonnull(mkdtemp(s->dir));
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0) {
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execl(simfuse_path(), "simfuse", spec, scale, s->dir, (char *)NULL);
		_exit(127);
	}
	snprintf(card, sizeof(card), "%s/card", s->dir);
	while (stat(card, &st) != 0 && tu_now_ns() < deadline)
		tu_sleep_ns(50000000);
	ck_assert_msg(stat(card, &st) == 0, "simfuse did not serve %s", card);
	s->loop = tu_loop_attach(card, false);
	ck_assert_msg(s->loop != NULL, "no loop device over %s", card);
}

/* Detach, unmount (simfuse then exits) and remove the mount point. */
static void unserve(struct served *s)
{
	int status;

	tu_loop_detach(s->loop);
	free(s->loop);
	s->loop = NULL;
	if (umount(s->dir) != 0)
		kill(s->pid, SIGTERM);
	waitpid(s->pid, &status, 0);
	rmdir(s->dir);
}

/* A decided value ({value, confidence, source} or null) in the document:
 * its value, or -1 when undetermined. */
static double decided(const struct jsonv *doc, const char *path)
{
	const struct jsonv *v = jsonv_get(doc, path);
	char value[128];

	ck_assert_msg(v != NULL, "JSON lacks %s", path);
	if (v->type == JSONV_NULL)
		return -1;
	snprintf(value, sizeof(value), "%s.value", path);
	v = jsonv_get(doc, value);
	ck_assert_msg(v != NULL && v->type == JSONV_NUMBER, "JSON %s is not a number", value);
	return v->number;
}

static struct jsonv *align_json(const char *dev)
{
	const char *argv[] = { "align", "--json", "-q", dev, NULL };
	struct run_result r;
	struct jsonv *doc;

	tu_run(&r, argv);
	ck_assert_msg(r.status == 0, "align on %s: status %d, %s", dev, r.status, r.err);
	doc = jsonv_parse(r.out);
	ck_assert_msg(doc != NULL, "align on %s: no JSON", dev);
	tu_run_free(&r);
	return doc;
}

/* A card with clear steps at its native pace: the erase block is found,
 * the page is the truth or undetermined. */
START_TEST(test_realtime_align)
{
	struct served s;
	struct jsonv *doc;
	double page;

	serve("sdhc-4m", "1", &s);
	doc = align_json(s.loop);
	unserve(&s);
	ck_assert_double_eq(decided(doc, "align.erase_size_bytes"), 4.0 * MIB);
	page = decided(doc, "align.page_size_bytes");
	ck_assert_msg(page == -1 || page == 16 * 1024, "page %.0f", page);
	jsonv_free(doc);
}
END_TEST

/* A fast eMMC-like part ten times faster: its steps (1-2.5 us) lie under
 * the host's own noise, so each answer is the truth or undetermined. */
START_TEST(test_realtime_fast_part_is_honest)
{
	struct served s;
	struct jsonv *doc;
	double page, erase;

	serve("emmc", "0.1", &s);
	doc = align_json(s.loop);
	unserve(&s);
	erase = decided(doc, "align.erase_size_bytes");
	page = decided(doc, "align.page_size_bytes");
	ck_assert_msg(erase == -1 || erase == 512 * 1024, "erase block %.0f", erase);
	ck_assert_msg(page == -1 || page == 16 * 1024, "page %.0f", page);
	jsonv_free(doc);
}
END_TEST

/* The buffered writes of tu_write_at() on the device itself. */
static void sync_device(const char *dev)
{
	int fd = open(dev, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fsync(fd), 0);
	close(fd);
}

/* probe --write killed in its write tests on a real-time card, then
 * restore: the device reads back as before, user data included. */
START_TEST(test_realtime_kill_restore)
{
	const char *restore[] = { "restore", NULL, NULL };
	struct served s;
	struct tu_child c;
	struct run_result r;
	unsigned char block[64 * 1024];
	char state[PATH_MAX];
	uint64_t before;

	/* a private journal directory: nothing lands in the system's */
	snprintf(state, sizeof(state), "%s/flashprobe-rt-state.XXXXXX", TU_DISK_DIR);
	ck_assert_ptr_nonnull(mkdtemp(state));
	ck_assert_int_eq(setenv("FLASHPROBE_STATE_DIR", state, 1), 0);
	serve("sdhc-4m", "0.1", &s);
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (unsigned char)(i * 131 + 7);
	for (uint64_t off = 0; off < 96 * MIB; off += 4 * MIB)
		ck_assert_int_eq(tu_write_at(s.loop, off + 12345 * 512, block, sizeof(block)), 0);
	sync_device(s.loop);
	before = tu_checksum(s.loop);
	{
		const char *argv[] = { "probe", "--write", "--yes", "-q", s.loop, NULL };

		ck_assert_int_eq(tu_spawn(&c, argv, 0), 0);
	}
	tu_sleep_ns(4000000000ull);	/* past the capacity check's first writes */
	kill(c.pid, SIGKILL);
	tu_wait(&c, &r);
	ck_assert_msg(r.status == 128 + SIGKILL, "probe ended with %d before the kill: %s",
		      r.status, r.err);
	tu_run_free(&r);
	restore[1] = s.loop;
	tu_run(&r, restore);
	ck_assert_msg(r.status == 0, "restore: status %d, %s", r.status, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(s.loop), before);
	unserve(&s);
	ck_assert_msg(rmdir(state) == 0, "a journal is left in %s", state);
}
END_TEST

Suite *realtime_suite(void)
{
	Suite *s = suite_create("realtime");
	TCase *tc = tcase_create("realtime");
	const char *why = realtime_unavailable();

	if (why) {
		tu_skip("realtime/align on a real-time card", why);
		tu_skip("realtime/a fast part is honest", why);
		tu_skip("realtime/kill and restore on a real-time card", why);
	} else {
		tcase_set_timeout(tc, 300);
		tcase_add_test(tc, test_realtime_align);
		tcase_add_test(tc, test_realtime_fast_part_is_honest);
		tcase_add_test(tc, test_realtime_kill_restore);
	}
	suite_add_tcase(s, tc);
	return s;
}
