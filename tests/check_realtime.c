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
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jsonv.h"
#include "tests.h"
#include "testutil.h"

#define MIB (1024ull * 1024)
#define SERVE_WAIT_NS (10ull * 1000000000)	/* for the FUSE mount to appear */

/* The card of the running test case, served by its unchecked fixture in
 * the runner itself: the teardown detaches and unmounts whatever the test
 * did (a checked teardown does not run after a failed test). */
struct served {
	pid_t pid;			/* simfuse, 0 when not started */
	char dir[128];			/* its mount point, "" when none */
	char *loop;			/* the loop device over its card */
	char state[128];		/* a private journal directory */
	char why[256];			/* why serving failed, "" when it did not */
};

static struct served served;

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
 * over it; on failure served.why says what went wrong. */
static void serve(const char *spec, const char *scale)
{
	struct served *s = &served;
	char card[sizeof(s->dir) + 8];
	uint64_t deadline = tu_now_ns() + SERVE_WAIT_NS;
	struct stat st;

	memset(s, 0, sizeof(*s));
	snprintf(s->state, sizeof(s->state), "%s/flashprobe-rt-state.XXXXXX", tu_disk_dir());
	snprintf(s->dir, sizeof(s->dir), "%s/flashprobe-rt.XXXXXX", tu_fast_dir());
	if (!mkdtemp(s->state) || !mkdtemp(s->dir)) {
		snprintf(s->why, sizeof(s->why), "cannot make temporary directories");
		return;
	}
	s->pid = fork();
	if (s->pid == 0) {
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execl(simfuse_path(), "simfuse", spec, scale, s->dir, (char *)NULL);
		_exit(127);
	}
	snprintf(card, sizeof(card), "%.*s/card", (int)sizeof(s->dir), s->dir);
	while (s->pid > 0 && stat(card, &st) != 0 && tu_now_ns() < deadline)
		tu_sleep_ns(50000000);
	if (s->pid < 0 || stat(card, &st) != 0)
		snprintf(s->why, sizeof(s->why), "simfuse did not serve %.*s", 200, card);
	else if (!(s->loop = tu_loop_attach(card, false)))
		snprintf(s->why, sizeof(s->why), "no loop device over %.*s", 200, card);
}

/* Detach, unmount (simfuse then exits), remove the mount point and the
 * journal directory. */
static void unserve(void)
{
	struct served *s = &served;
	int status;

	tu_loop_detach(s->loop);
	free(s->loop);
	s->loop = NULL;
	if (s->pid > 0) {
		if (umount(s->dir) != 0)
			kill(s->pid, SIGTERM);
		waitpid(s->pid, &status, 0);
	}
	if (s->dir[0])
		rmdir(s->dir);
	if (s->state[0])
		tu_rm_tree(s->state);
	memset(s, 0, sizeof(*s));
}

static void serve_native(void) { serve("sdhc-4m", "1"); }
static void serve_fast(void) { serve("emmc", "0.1"); }
/* the write tests' card: small, so that reading it whole is quick */
static void serve_writable(void) { serve("sdhc-4m,size=256M", "0.1"); }
/* the same card worn: reads and writes of 8 MiB at 200 MiB fail (EIO) */
#define FAILING_START (200 * MIB)
#define FAILING_END (208 * MIB)
static void serve_failing(void) { serve("sdhc-4m,size=256M,eio=200M+8M", "0.1"); }

/* The served device, or a failure that says why there is none. */
static const char *served_loop(void)
{
	ck_assert_msg(served.loop != NULL, "%s", served.why);
	return served.loop;
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
	struct jsonv *doc = align_json(served_loop());
	double page;

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
	struct jsonv *doc = align_json(served_loop());
	double page, erase;

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

/* User data where the write tests will go, and a private journal
 * directory (nothing lands in the system's); the device's checksum. */
static uint64_t prepare_card(const char *dev)
{
	unsigned char block[64 * 1024];

	tu_state_dir_set(served.state);
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (unsigned char)(i * 131 + 7);
	for (uint64_t off = 0; off < 96 * MIB; off += 4 * MIB)
		ck_assert_int_eq(tu_write_at(dev, off + 12345 * 512, block, sizeof(block)), 0);
	sync_device(dev);
	return tu_checksum(dev);
}

/* restore puts the first card back as it was (want: its checksum) and
 * leaves no journal. */
static void assert_restored(const char *dev, uint64_t want)
{
	const char *restore[] = { "restore", dev, NULL };
	struct run_result r;

	tu_run(&r, restore);
	ck_assert_msg(r.status == 0, "restore: status %d, %s", r.status, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(dev), want);
	ck_assert_msg(rmdir(served.state) == 0, "a journal is left in %s", served.state);
}

/* probe --write killed in its write tests on a real-time card, then
 * restore: the device reads back as before, user data included. */
START_TEST(test_realtime_kill_restore)
{
	const char *dev = served_loop();
	const char *probe[] = { "probe", "--write", "--yes", "-q", dev, NULL };
	struct tu_child c;
	struct run_result r;
	uint64_t before = prepare_card(dev);

	ck_assert_int_eq(tu_spawn(&c, probe, 0), 0);
	tu_sleep_ns(4000000000ull);	/* past the capacity check's first writes */
	kill(c.pid, SIGKILL);
	tu_wait(&c, &r);
	ck_assert_msg(r.status == 128 + SIGKILL, "probe ended with %d before the kill: %s",
		      r.status, r.err);
	tu_run_free(&r);
	assert_restored(dev, before);
}
END_TEST

/* The part a DAMAGED verdict's advice partitions, in MiB (0: none). */
static unsigned verified_mib(const char *report)
{
	static const char lead[] = "use only the verified ";
	const char *v = strstr(report, lead);
	unsigned mib = 0;

	return v && sscanf(v + strlen(lead), "%uMiB", &mib) == 1 ? mib : 0;
}

/* The device's checksum outside the range that fails. */
static uint64_t readable_checksum(const char *dev)
{
	return tu_checksum_range(dev, 0, FAILING_START) ^
	       3 * tu_checksum_range(dev, FAILING_END, UINT64_MAX);
}

/* probe --write on a worn card whose reads fail in one range, served as
 * a real block device: the probe stops on the failed read (status 1, the
 * read named), puts the data back (every readable byte as before, no
 * journal left) and still reports what it found, opened by FAILING CARD.
 * It used to print the error alone.  Where the capacity check read the
 * bad range first (its positions are random), the card is DAMAGED, the
 * read that failed lies past its verified part, and the capacity
 * finding's partition of that part stands; else (the backup of the
 * capacity check's area failed) there is no partitioning advice.  Never
 * a partition or file system for the whole card. */
START_TEST(test_realtime_failing_card)
{
	const char *dev = served_loop();
	const char *probe[] = { "probe", "--write", "--yes", dev, NULL };
	struct run_result r;
	uint64_t before;

	prepare_card(dev);
	before = readable_checksum(dev);
	ck_assert_uint_ne(before, 0);
	tu_run(&r, probe);
	ck_assert_msg(r.status == 1 && strstr(r.err, "Input/output error") &&
		      strstr(r.err, " at byte "), "probe: status %d, %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "FAILING CARD: Input/output error"),
		      "probe's report: %s\nstderr: %s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "capacity  DAMAGED") ?
		      verified_mib(r.out) > 0 && verified_mib(r.out) <= FAILING_START / MIB :
		      strstr(r.out, "no partitioning advice") && !strstr(r.out, "sfdisk"),
		      "probe's report: %s", r.out);
	ck_assert_msg(!strstr(r.out, "sfdisk --wipe") && !strstr(r.out, "mkfs"),
		      "probe's report: %s", r.out);
	tu_run_free(&r);
	ck_assert_uint_eq(readable_checksum(dev), before);
	ck_assert_msg(rmdir(served.state) == 0, "a journal is left in %s", served.state);
}
END_TEST

/* Swap the card in the reader (simfuse's SIGUSR1) and forget what the
 * loop device cached of the other one. */
static void swap_card(const char *dev)
{
	int fd;

	ck_assert_int_eq(kill(served.pid, SIGUSR1), 0);
	fd = open(dev, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ioctl(fd, BLKFLSBUF, 0), 0);
	close(fd);
}

/* A card swapped in the reader during probe --write's open-AU test: the
 * test stops at its next backup or check, restores nothing onto the
 * second card and keeps the journal; offered the second card, restore
 * refuses it and leaves it as it was; with the first card back, restore
 * puts it back byte for byte.  (A swap during the capacity check, whose
 * area is the whole card, is found by the restore's fingerprint.) */
START_TEST(test_realtime_card_swap)
{
	const char *dev = served_loop();
	const char *restore[] = { "restore", dev, NULL };
	const char *probe[] = { "probe", "--write", "--yes", dev, NULL };
	struct tu_child c;
	struct run_result r;
	uint64_t first = prepare_card(dev), second;

	ck_assert_int_eq(tu_spawn(&c, probe, 0), 0);
	ck_assert_msg(tu_child_said(&c, "open-au will write", 120000),
		      "probe did not reach the open-AU test");
	tu_sleep_ns(500000000ull);
	swap_card(dev);
	tu_wait(&c, &r);
	ck_assert_msg(r.status == 1 && strstr(r.err, "changed during the test") &&
		      strstr(r.err, "put that card back"), "probe: status %d, %s",
		      r.status, r.err);
	tu_run_free(&r);
	second = tu_checksum(dev);
	tu_run(&r, restore);
	ck_assert_msg(r.status == 3, "restore onto the second card: status %d, %s",
		      r.status, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(dev), second);
	swap_card(dev);
	assert_restored(dev, first);
}
END_TEST

Suite *realtime_suite(void)
{
	const struct {
		const char *name;
		void (*setup)(void);
		const TTest *test;
		const char *what;
	} cases[] = {
		{ "native", serve_native, test_realtime_align, "align on a real-time card" },
		{ "fast", serve_fast, test_realtime_fast_part_is_honest, "a fast part is honest" },
		{ "kill", serve_writable, test_realtime_kill_restore,
		  "kill and restore on a real-time card" },
		{ "swap", serve_writable, test_realtime_card_swap,
		  "a card swapped during a test" },
		{ "failing", serve_failing, test_realtime_failing_card,
		  "a card failing reads during the probe" },
	};
	Suite *s = suite_create("realtime");
	const char *why = realtime_unavailable();

	/* the cases wait on a card served in real time and run paths the
	 * simulated-card suites run under the sanitizers already: they are
	 * the plain pass's (keeping make check's two passes in 20 minutes) */
	if (TESTS_SWEEP_STRIDE > 1) {
		fprintf(stderr, "sanitizer pass: realtime runs in the plain pass only\n");
		return s;
	}

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		TCase *tc;
		char what[128];

		snprintf(what, sizeof(what), "realtime/%s", cases[i].what);
		if (why) {
			tu_skip(what, why);
			continue;
		}
		/* created only when added: the suite frees what it holds */
		tc = tcase_create(cases[i].name);
		tcase_set_timeout(tc, 300);
		tcase_add_unchecked_fixture(tc, cases[i].setup, unserve);
		tcase_add_test(tc, cases[i].test);
		suite_add_tcase(s, tc);
	}
	return s;
}
