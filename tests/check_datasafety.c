/* check_datasafety.c - issue 10 through the built binary: the lock on the
 * target, SIGPIPE and the report after the restore, outputs on the device
 * under test, consent without a terminal, over-long paths, other writers,
 * one exit status per meaning, signals and messages.
 *
 * Every test works in a private directory under /var/tmp (a disk, not
 * tmpfs), with FLASHPROBE_STATE_DIR inside it, on its own image of random
 * data; a test that could write compares the image's checksum before and
 * after.  Loop-device variants need root and are skipped loudly otherwise.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blockfix.h"
#include "journal.h"
#include "journal_format.h"
#include "testutil.h"
#include "util.h"
#include "tests.h"

#define MIB (1024ull * 1024)
#define IMG_BYTES (64 * MIB)
#define AU_SEARCH_IMG_BYTES (128 * MIB)	/* room for a 16 MiB search */
#define MAX_ARGS 16
#define JR_TEST_HEADER 4096	/* a journal's header: its records follow */
#define NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))

static char root[128];			/* private directory of a test case */
static char work[256];			/* root/tN: one test's directory */
static char state[256 + 8];	/* work/state: FLASHPROBE_STATE_DIR */

/* In the parent: the directory every test of the case works under;
 * removed afterwards whatever the tests did. */
static void root_setup(void)
{
	snprintf(root, sizeof(root), "/var/tmp/flashprobe-ds-XXXXXX");
	if (mkdtemp(root) == NULL)
		root[0] = '\0';
}

static void root_teardown(void)
{
	if (root[0])
		tu_rm_tree(root);
	root[0] = '\0';
}

/* In each test's process: a fresh directory and state directory. */
static void work_setup(void)
{
	work[0] = '\0';
	if (!root[0])
		return;
	snprintf(work, sizeof(work), "%s/tXXXXXX", root);
	if (mkdtemp(work) == NULL) {
		work[0] = '\0';
		return;
	}
	snprintf(state, sizeof(state), "%s/state", work);
	if (mkdir(state, 0700) != 0)
		work[0] = '\0';
	else
		tu_state_dir_set(state);
}

static char *new_image(uint64_t bytes, uint64_t seed)
{
	char *img;

	ck_assert_msg(work[0], "no private directory under /var/tmp");
	img = bf_image_in(work, bytes, seed);
	ck_assert_msg(img != NULL, "cannot make an image in %s", work);
	return img;
}

static void in_work(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", work, name);
}

/* Entries in the state directory (journals and their links). */
static size_t state_entries(void)
{
	char names[16];

	return tu_dir_list(state, names, sizeof(names));
}

/* The one journal in the state directory: its size (-1 when there is
 * none) and, when path is given, its path. */
static long long state_journal(char *path, size_t len)
{
	DIR *d = opendir(state);
	struct dirent *e;
	long long size = -1;

	while (d != NULL && (e = readdir(d)) != NULL) {
		char p[PATH_MAX + 300];
		struct stat st;
		size_t n = strlen(e->d_name);

		snprintf(p, sizeof(p), "%s/%s", state, e->d_name);
		if (n <= 8 || strcmp(e->d_name + n - 8, ".journal") || lstat(p, &st) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		size = (long long)st.st_size;
		if (path)
			snprintf(path, len, "%s", p);
	}
	if (d != NULL)
		closedir(d);
	return size;
}

static long long journal_size(void)
{
	return state_journal(NULL, 0);
}

/* Placeholders in argument templates, alone or after "--option=". */
struct subst {
	const char *name, *value;
};

static void expand(const char *const *tmpl, const char **argv, char store[][PATH_MAX + 16],
		   const struct subst *subs)
{
	size_t i;

	for (i = 0; tmpl[i]; i++) {
		const char *eq = strchr(tmpl[i], '=');
		const char *v = eq ? eq + 1 : tmpl[i];

		argv[i] = tmpl[i];
		for (const struct subst *x = subs; x->name; x++) {
			if (strcmp(v, x->name))
				continue;
			snprintf(store[i], PATH_MAX + 16, "%.*s%s",
				 eq ? (int)(eq - tmpl[i] + 1) : 0, tmpl[i], x->value);
			argv[i] = store[i];
		}
	}
	argv[i] = NULL;
}

/* The image reads as before and no journal is left. */
static void assert_kept(const char *img, uint64_t before)
{
	ck_assert_msg(tu_checksum(img) == before, "'%s' was not restored", img);
	ck_assert_msg(state_entries() == 0, "%zu journal file(s) left", state_entries());
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Whether pid runs flashprobe (not the forked test before its exec,
 * which has the test runner's handlers) and has a handler for sig
 * (SigCgt of /proc/PID/status). */
static bool catches(int pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	bool named = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f)) {
		named |= !strcmp(line, "Name:\tflashprobe\n");
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	}
	fclose(f);
	return named && (mask & (1ull << (sig - 1)));
}

/* Whether pid has exited (a zombie waiting for tu_wait(), or gone). */
static bool exited(int pid)
{
	char path[64], line[512];
	char *p;
	FILE *f;
	bool gone = true;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return true;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) != NULL)
		gone = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return gone;
}

#define FD_CLOSED (-2)	/* run_fds(): the stream is closed, as by `>&-` */

static void place_stream(int fd, int target, int null)
{
	if (fd == FD_CLOSED)
		close(target);
	else
		dup2(fd >= 0 ? fd : null, target);
}

/* Run the binary with stdout and stderr on the given descriptors (-1:
 * /dev/null, FD_CLOSED: closed); the status as tu_run() and the
 * terminating signal. */
static int run_fds(const char *const *argv, int out, int err, int *termsig)
{
	const char *args[MAX_ARGS + 1] = { tu_binary() };
	int st = 0;
	pid_t pid;

	for (size_t i = 0; argv[i] && i < MAX_ARGS - 1; i++)
		args[i + 1] = argv[i];
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		place_stream(out, 1, null);
		place_stream(err, 2, null);
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	waitpid(pid, &st, 0);
	*termsig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A pipe whose reading end is already closed: the first write fails. */
static int broken_pipe(void)
{
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	return p[1];
}

static char *slurp(const char *path)
{
	static char buf[8192];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

static const char *const bench_write[] = {
	"bench", "--write", "--runtime=200ms", "--warmup=0", "--repeat=1", "--size=16M",
	NULL
};

/* bench_write (or another list) with extra arguments and the target. */
static void args_with(const char **argv, const char *const *base,
		      const char *const *extra, const char *target)
{
	size_t n = 0;

	for (size_t i = 0; base[i]; i++)
		argv[n++] = base[i];
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n++] = target;
	argv[n] = NULL;
	ck_assert_uint_lt(n, MAX_ARGS);
}

/* ==== item 2: one writer at a time ==== */

/* longer than a writer waits for the lock (a second) */
static const char *const long_bench[] = {
	"bench", "--runtime=3", "--warmup=0", "--repeat=1", "--workload=seq_write",
	"--size=16M", NULL
};

/* Start a three-second bench (write consent in extra) on target and wait
 * until it announces its write area: it holds the target then.  ignore:
 * a signal the child starts with ignored (as under nohup), or 0. */
static void start_bench(struct tu_child *ch, const char *const *extra, const char *target,
			int ignore)
{
	const char *argv[MAX_ARGS];

	args_with(argv, long_bench, extra, target);
	if (ignore)
		signal(ignore, SIG_IGN);
	ck_assert_int_eq(tu_spawn(ch, argv, 0), 0);
	if (ignore)
		signal(ignore, SIG_DFL);
	ck_assert_msg(tu_child_said(ch, "bench will write", 10000), "bench did not start");
}

/* A second writer while a --destructive bench writes the same image is
 * refused (status 3) naming the first, and writes nothing. */
static void second_writer_refused(const char *target, const char *consent)
{
	const char *const first_extra[] = { consent, "--yes", "--offset=8M", NULL };
	const char *const second_extra[] = { consent, "--yes", "--offset=32M", NULL };
	const char *b[MAX_ARGS];
	uint64_t untouched = tu_checksum_range(target, 32 * MIB, 32 * MIB);
	struct run_result r, f;
	struct tu_child ch;
	char who[64];

	args_with(b, long_bench, second_extra, target);
	start_bench(&ch, first_extra, target, 0);
	snprintf(who, sizeof(who), "'flashprobe' (pid %d)", ch.pid);
	tu_run(&r, b);
	tu_wait(&ch, &f);
	ck_assert_msg(r.status == 3, "second writer: status %d, '%s'", r.status, r.err);
	ck_assert_msg(strstr(r.err, who), "the refusal does not name %s: '%s'", who, r.err);
	ck_assert_msg(!strstr(r.err, "run 'flashprobe restore"), "a running test's "
		      "journal is not one to restore: '%s'", r.err);
	ck_assert_msg(tu_checksum_range(target, 32 * MIB, 32 * MIB) == untouched,
		      "the refused writer wrote to the device");
	ck_assert_msg(f.status == 0, "first writer: status %d, '%s'", f.status, f.err);
	tu_run_free(&r);
	tu_run_free(&f);
}

START_TEST(test_second_writer_image)
{
	char *img = new_image(IMG_BYTES, 21);

	second_writer_refused(img, "--destructive");
	free(img);
}
END_TEST

/* With --write the second run meets the first one's journal first: it
 * is refused as a test in progress (naming it), not sent to restore. */
START_TEST(test_second_writer_journaled)
{
	char *img = new_image(IMG_BYTES, 22);

	second_writer_refused(img, "--write");
	free(img);
}
END_TEST

static struct bf_scene loop;

static void loop_setup(void)
{
	root_setup();
	memset(&loop, 0, sizeof(loop));
	if (root[0] && bf_image(&loop, IMG_BYTES, false))
		bf_attach(&loop, "");
}

static void loop_teardown(void)
{
	/* loop devices a test attached over the scene's image, whatever
	 * assertion ended it */
	if (loop.dev != NULL)
		bf_sh("losetup -n -O NAME -j '%s' | grep -vx '%s' | xargs -r -n1 "
		      "losetup -d", loop.image, loop.dev);
	bf_cleanup(&loop);
	root_teardown();
}

static void require_loop(void)
{
	ck_assert_msg(loop.dev != NULL, "no loop device: %s", loop.why);
}

START_TEST(test_second_writer_loop)
{
	require_loop();
	second_writer_refused(loop.dev, "--destructive");
}
END_TEST

/* restore while a --write test runs refuses (status 3) and leaves the
 * live journal alone; the test then restores the image itself. */
START_TEST(test_restore_refused_during_test)
{
	char *img = new_image(IMG_BYTES, 22);
	uint64_t before = tu_checksum(img);
	static const char *const extra[] = { "--write", "--offset=8M", NULL };
	const char *const rest[] = { "restore", img, NULL };
	struct run_result r, f;
	struct tu_child ch;
	size_t during;

	start_bench(&ch, extra, img, 0);
	tu_run(&r, rest);
	during = state_entries();
	tu_wait(&ch, &f);
	ck_assert_msg(r.status == 3, "restore during a test: status %d, '%s' '%s'", r.status,
		      r.out, r.err);
	ck_assert_msg(strstr(r.err, "lock"), "the refusal does not say why: '%s'", r.err);
	ck_assert_msg(during > 0, "the live journal is gone after the refused restore");
	ck_assert_msg(f.status == 0, "the test: status %d, '%s'", f.status, f.err);
	assert_kept(img, before);
	tu_run_free(&r);
	tu_run_free(&f);
	free(img);
}
END_TEST

/* restore of an image while a --write test of the loop device over it
 * runs: refused (status 3) as that test's, which is running, not as a
 * journal left behind to restore by hand; the test restores the image. */
START_TEST(test_restore_alias_during_test)
{
	uint64_t before;
	static const char *const extra[] = { "--write", "--offset=8M", NULL };
	struct run_result r, f;
	struct tu_child ch;

	require_loop();
	before = tu_checksum(loop.image);
	start_bench(&ch, extra, loop.dev, 0);
	tu_run(&r, (const char *const[]){ "restore", loop.image, NULL });
	tu_wait(&ch, &f);
	ck_assert_msg(r.status == 3 && strstr(r.err, "testing now") &&
		      !strstr(r.err, "left the unfinished journal"),
		      "restore during a test of its loop device: status %d, '%s' '%s'",
		      r.status, r.out, r.err);
	ck_assert_msg(f.status == 0, "the test: status %d, '%s'", f.status, f.err);
	ck_assert_uint_eq(tu_checksum(loop.image), before);
	tu_run_free(&r);
	tu_run_free(&f);
}
END_TEST

/* ==== item 3: SIGPIPE, and the report after the restore ==== */

/* Notes to a closed pipe (flashprobe ... 2>&1 >/dev/null | head -1): the
 * test runs to its end and restores; no death by SIGPIPE. */
START_TEST(test_sigpipe_on_notes)
{
	char *img = new_image(IMG_BYTES, 31);
	uint64_t before = tu_checksum(img);
	const char *const argv[] = { "probe", "--write", "--quick", "--erasesize=1M", img,
				     NULL };
	int err = broken_pipe(), sig, status;

	status = run_fds(argv, -1, err, &sig);
	close(err);
	ck_assert_msg(sig == 0, "killed by signal %d (status %d)", sig, status);
	ck_assert_int_eq(status, 0);
	assert_kept(img, before);
	free(img);
}
END_TEST

/* The report to a closed pipe (| head -c100) or a full device: the data
 * is restored first, and the status is 1, never 0 or 141; the reason is
 * the stream's, never an I/O error that would point at the card. */
static void report_lost(const char *const *extra, int out, const char *reason)
{
	char *img = new_image(IMG_BYTES, 32);
	uint64_t before = tu_checksum(img);
	const char *argv[MAX_ARGS];
	char errpath[PATH_MAX + 16];
	int errfd, sig, status;

	in_work(errpath, sizeof(errpath), "stderr");
	errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	args_with(argv, bench_write, extra, img);
	status = run_fds(argv, out, errfd, &sig);
	close(errfd);
	ck_assert_msg(sig == 0 && status == 1, "status %d, signal %d, '%s'", status, sig,
		      slurp(errpath));
	ck_assert_msg(strstr(slurp(errpath), "cannot write the report") &&
		      strstr(slurp(errpath), reason), "'%s'", slurp(errpath));
	ck_assert_msg(!strstr(slurp(errpath), "Input/output error"), "'%s'",
		      slurp(errpath));
	assert_kept(img, before);
	free(img);
}

/* The write-based AU search (probe --write, and open-au without a read
 * step) writes its own area of an image and restores it: the image's
 * checksum is unchanged and no journal is left. */
START_TEST(test_au_search_image)
{
	static const char *const cmds[] = { "probe", "open-au" };
	char *img = new_image(AU_SEARCH_IMG_BYTES, 71);
	uint64_t before = tu_checksum(img);

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *argv[] = { cmds[i], "--write", "--yes", img, NULL };
		struct run_result r;

		tu_run(&r, argv);
		ck_assert_msg(r.status == 0 || r.status == 4, "%s: status %d: %s",
			      cmds[i], r.status, r.err);
		ck_assert_msg(strstr(r.err, "au-search will write") != NULL ||
			      strstr(r.err, "erase block") != NULL, "%s: %s", cmds[i], r.err);
		if (i == 0)
			ck_assert_msg(strstr(r.err, "au-search will write") != NULL,
				      "probe --write did not run the AU search: %s", r.err);
		tu_run_free(&r);
		assert_kept(img, before);
	}
	free(img);
}
END_TEST

START_TEST(test_report_to_closed_pipe)
{
	static const char *const json[] = { "--json", NULL };
	int out = broken_pipe();

	report_lost(json, out, "Broken pipe");
	close(out);
}
END_TEST

START_TEST(test_report_to_full_device)
{
	int out = open("/dev/full", O_WRONLY);

	ck_assert_int_ge(out, 0);
	report_lost(NULL, out, "No space left on device");
	close(out);
}
END_TEST

/* ==== item 4: no output on the device under test ==== */

static const char *const output_cases[][MAX_ARGS] = {
	{ "probe", "--svg=@IMG", "@IMG", NULL },
	{ "probe", "--svg=@LINK", "@IMG", NULL },
	{ "probe", "--svg=@HARD", "@IMG", NULL },
	{ "probe", "--write", "--quick", "--erasesize=1M", "--svg=@IMG", "@IMG", NULL },
	/* every command that draws a chart, not only probe */
	{ "align", "--svg=@IMG", "@IMG", NULL },
	{ "open-au", "--write", "--erasesize=1M", "--svg=@LINK", "@IMG", NULL },
	{ "bench", "--write", "--svg=@HARD", "@IMG", NULL },
	{ "open-au", "--write", "--erasesize=1M", "--journal=@IMG", "@IMG", NULL },
	{ "open-au", "--write", "--erasesize=1M", "--journal=@HARD", "@IMG", NULL },
};

START_TEST(test_output_on_device)
{
	char *img = new_image(IMG_BYTES, 41);
	uint64_t before = tu_checksum(img);
	char sym[PATH_MAX], hard[PATH_MAX], store[MAX_ARGS][PATH_MAX + 16];
	const char *argv[MAX_ARGS];
	struct run_result r;

	in_work(sym, sizeof(sym), "link.svg");
	in_work(hard, sizeof(hard), "hard.svg");
	ck_assert_int_eq(symlink(img, sym), 0);
	ck_assert_int_eq(link(img, hard), 0);
	expand(output_cases[_i], argv, store, (const struct subst[]){
		{ "@IMG", img }, { "@LINK", sym }, { "@HARD", hard }, { NULL, NULL } });
	tu_run(&r, argv);
	ck_assert_msg(r.status == 2, "case %d: status %d, '%s'", _i, r.status, r.err);
	ck_assert_msg(strstr(r.err, "device under test"), "case %d: '%s'", _i, r.err);
	assert_kept(img, before);
	tu_run_free(&r);
	free(img);
}
END_TEST

/* On a block device: the device itself as --svg. */
START_TEST(test_output_on_loop)
{
	char svg[PATH_MAX + 8];
	const char *argv[] = { "probe", svg, NULL, NULL };
	struct run_result r;
	uint64_t before;

	require_loop();
	before = tu_checksum(loop.dev);
	snprintf(svg, sizeof(svg), "--svg=%s", loop.dev);
	argv[2] = loop.dev;
	tu_run(&r, argv);
	ck_assert_msg(r.status == 2, "status %d, '%s'", r.status, r.err);
	ck_assert_msg(strstr(r.err, "device under test"), "'%s'", r.err);
	ck_assert_msg(tu_checksum(loop.dev) == before, "the device was overwritten");
	tu_run_free(&r);
}
END_TEST

/* Standard output or error on the device under test, as `1<>card.img`
 * or `2>>/dev/sdb` make it: refused (status 2) before anything is
 * written, the refusal on the other stream, and the device unchanged
 * (the report and the notes used to be written onto it). */
static const struct stream_case {
	int stream;			/* 1 or 2: the one on the device */
	const char *args[MAX_ARGS];
} stream_cases[] = {
	{ 1, { "capacity", "--write", "--yes", "@IMG", NULL } },
	{ 2, { "capacity", "--write", "--yes", "@IMG", NULL } },
	{ 1, { "probe", "--write", "--yes", "--json", "--quick", "--erasesize=1M", "@IMG",
	       NULL } },
	{ 2, { "find-fat", "--write", "--yes", "--erasesize=1M", "@IMG", NULL } },
	{ 1, { "align", "@IMG", NULL } },
	{ 2, { "restore", "@IMG", NULL } },
};

static void stream_refused(const struct stream_case *c, const char *dev, const char *what)
{
	char store[MAX_ARGS][PATH_MAX + 16], said[PATH_MAX];
	const char *argv[MAX_ARGS];
	uint64_t before = tu_checksum(dev);
	int on_dev = open(dev, O_WRONLY), msg, status, termsig;

	in_work(said, sizeof(said), "said");
	msg = open(said, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(on_dev, 0);
	ck_assert_int_ge(msg, 0);
	expand(c->args, argv, store, (const struct subst[]){ { "@IMG", dev }, { NULL, NULL } });
	status = c->stream == 1 ? run_fds(argv, on_dev, msg, &termsig)
				: run_fds(argv, msg, on_dev, &termsig);
	close(on_dev);
	close(msg);
	ck_assert_msg(tu_checksum(dev) == before, "%s %d, stream %d: the device was written",
		      what, (int)(c - stream_cases), c->stream);
	ck_assert_msg(status == 2, "%s %d: status %d, '%s'", what, (int)(c - stream_cases),
		      status, slurp(said));
	ck_assert_msg(strstr(slurp(said), c->stream == 1 ? "standard output is the device"
							 : "standard error is the device"),
		      "%s %d: '%s'", what, (int)(c - stream_cases), slurp(said));
	ck_assert_msg(state_entries() == 0, "%zu journal file(s) left", state_entries());
}

START_TEST(test_stream_on_device)
{
	char *img = new_image(IMG_BYTES, 43);

	stream_refused(&stream_cases[_i], img, "image case");
	free(img);
}
END_TEST

START_TEST(test_stream_on_loop)
{
	require_loop();
	stream_refused(&stream_cases[_i], loop.dev, "loop case");
}
END_TEST

/* /dev/null as the device, with standard output on /dev/null too: the
 * same file, but not a device the tests take, and the refusal says so
 * (not "standard output is the device under test"). */
START_TEST(test_null_device_and_stream)
{
	const char *const argv[] = { "align", "/dev/null", NULL };
	char said[PATH_MAX];
	int msg, status, termsig;

	in_work(said, sizeof(said), "said");
	msg = open(said, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(msg, 0);
	status = run_fds(argv, -1, msg, &termsig);
	close(msg);
	ck_assert_msg(status == 2 && strstr(slurp(said), "not a block device or regular file"),
		      "status %d, '%s'", status, slurp(said));
}
END_TEST

/* Closed standard streams (`>&- 2>&-`): the device or the journal, opened
 * next, used to take their numbers, and the notes and the report were
 * written into it (the device's O_DIRECT refused the unaligned text, by
 * luck).  Now they are opened on /dev/null: the test runs and restores. */
START_TEST(test_closed_streams)
{
	static const char *const args[][MAX_ARGS] = {
		{ "find-fat", "--write", "--yes", "--erasesize=1M", "@IMG", NULL },
		{ "capacity", "--write", "--yes", "@IMG", NULL },
	};
	char *img = new_image(IMG_BYTES, 44);
	uint64_t before = tu_checksum(img);
	char store[MAX_ARGS][PATH_MAX + 16];
	const char *argv[MAX_ARGS];

	for (int i = 0; i < NCASES(args); i++) {
		int termsig, status;

		expand(args[i], argv, store, (const struct subst[]){ { "@IMG", img },
								   { NULL, NULL } });
		status = run_fds(argv, FD_CLOSED, FD_CLOSED, &termsig);
		ck_assert_msg(status == 0, "%s with stdout and stderr closed: status %d",
			      args[i][0], status);
		assert_kept(img, before);
	}
	free(img);
}
END_TEST

/* A file system of the disk under test, mounted: a chart there would be
 * written through it onto the disk. */
static struct bf_scene mounted;

static void mounted_setup(void)
{
	root_setup();
	memset(&mounted, 0, sizeof(mounted));
	if (root[0] && bf_image(&mounted, IMG_BYTES, true) && bf_attach(&mounted, "-P") &&
	    bf_mkfs(&mounted, mounted.part))
		bf_mount(&mounted, mounted.part, "ro,noload");
}

static void mounted_teardown(void)
{
	bf_cleanup(&mounted);
	root_teardown();
}

START_TEST(test_output_on_mounted_partition)
{
	char svg[PATH_MAX + 32], chart[PATH_MAX + 16];
	const char *argv[] = { "probe", svg, mounted.dev, NULL };
	struct run_result r;
	uint64_t before;

	ck_assert_msg(mounted.mnt[0], "no mounted partition: %s", mounted.why);
	before = tu_checksum(mounted.dev);
	snprintf(chart, sizeof(chart), "%s/chart.svg", mounted.mnt);
	snprintf(svg, sizeof(svg), "--svg=%s", chart);
	tu_run(&r, argv);
	ck_assert_msg(r.status == 2, "status %d, '%s'", r.status, r.err);
	ck_assert_msg(strstr(r.err, "is on the device under test"), "'%s'", r.err);
	ck_assert_msg(access(chart, F_OK) != 0, "the chart was written");
	ck_assert_msg(tu_checksum(mounted.dev) == before, "the device changed");
	tu_run_free(&r);
}
END_TEST

/* A tiny file system (8 MiB of ext4 on a loop device) for journals that
 * cannot fit. */
static struct bf_scene tiny;

static void tiny_setup(void)
{
	root_setup();
	memset(&tiny, 0, sizeof(tiny));
	if (root[0] && bf_image(&tiny, 8 * MIB, false) && bf_attach(&tiny, "") &&
	    bf_mkfs(&tiny, tiny.dev))
		bf_mount(&tiny, tiny.dev, "");
}

static void tiny_teardown(void)
{
	bf_cleanup(&tiny);
	root_teardown();
}

/* The journal's file system fills up during the test: it stops, restores
 * what it wrote, removes its journal and says it was the journal that
 * could not be written (status 1; the line used to be a bare "No space
 * left on device", which reads as the card's). */
static const char *const full_cases[][MAX_ARGS] = {
	{ "find-fat", "--write", "--erasesize=1M", "--journal=@JOURNAL", "@IMG", NULL },
	{ "capacity", "--write", "--journal=@JOURNAL", "@IMG", NULL },
};

START_TEST(test_journal_fs_full)
{
	char *img = new_image(IMG_BYTES, 49);
	uint64_t before = tu_checksum(img);
	char journal[PATH_MAX + 32], store[MAX_ARGS][PATH_MAX + 16];
	const char *argv[MAX_ARGS];
	struct run_result r;

	ck_assert_msg(tiny.mnt[0], "no tiny file system: %s", tiny.why);
	snprintf(journal, sizeof(journal), "%s/test.journal", tiny.mnt);
	expand(full_cases[_i], argv, store, (const struct subst[]){
		{ "@IMG", img }, { "@JOURNAL", journal }, { NULL, NULL } });
	tu_run(&r, argv);
	ck_assert_msg(tu_checksum(img) == before, "case %d: the image was not restored", _i);
	ck_assert_msg(r.status == 1 && strstr(r.err, "cannot write journal") &&
		      strstr(r.err, "No space left"),
		      "case %d: status %d, '%s'", _i, r.status, r.err);
	ck_assert_msg(access(journal, F_OK) != 0, "case %d: the journal was left", _i);
	ck_assert_msg(state_entries() == 0, "case %d: %zu entries left in the state directory",
		      _i, state_entries());
	tu_run_free(&r);
	free(img);
}
END_TEST

/* A journal on a read-only file system is a bad --journal, like one in
 * a missing directory: status 2, one line, nothing written. */
START_TEST(test_journal_fs_read_only)
{
	char *img = new_image(IMG_BYTES, 50);
	uint64_t before = tu_checksum(img);
	char journal[PATH_MAX + 32], arg[PATH_MAX + 48];
	struct run_result r;

	ck_assert_msg(tiny.mnt[0], "no tiny file system: %s", tiny.why);
	ck_assert_int_eq(bf_sh("mount -o remount,ro '%s'", tiny.mnt), 0);
	snprintf(journal, sizeof(journal), "%s/test.journal", tiny.mnt);
	snprintf(arg, sizeof(arg), "--journal=%s", journal);
	tu_run(&r, (const char *const[]){ "find-fat", "--write", "--yes", "--erasesize=1M",
					  arg, img, NULL });
	ck_assert_int_eq(bf_sh("mount -o remount,rw '%s'", tiny.mnt), 0);
	ck_assert_msg(r.status == 2 && strstr(r.err, "Read-only file system") &&
		      !strchr(strchr(r.err, '\n') + 1, '\n'),
		      "status %d, '%s'", r.status, r.err);
	ck_assert_msg(tu_checksum(img) == before, "the image changed");
	ck_assert_msg(access(journal, F_OK) != 0, "a journal was made");
	tu_run_free(&r);
	free(img);
}
END_TEST

/* The restore put the data back but its journal's file system had gone
 * read-only: the journal stays, and restoring it again later would undo
 * whatever the card holds by then.  Status 1, and the line says to delete
 * it by hand; the image is restored. */
START_TEST(test_restored_journal_not_deleted)
{
	char *img = new_image(IMG_BYTES, 52);
	uint64_t before = tu_checksum(img), after;
	char journal[PATH_MAX + 32], arg[PATH_MAX + 48];
	struct tu_child ch;
	struct run_result r;
	bool kept;
	int sig;

	ck_assert_msg(tiny.mnt[0], "no tiny file system: %s", tiny.why);
	snprintf(journal, sizeof(journal), "%s/kept.journal", tiny.mnt);
	snprintf(arg, sizeof(arg), "--journal=%s", journal);
	ck_assert_int_eq(tu_spawn(&ch, (const char *const[]){ "find-fat", "--write", "--yes",
							    "--erasesize=1M", arg, img, NULL },
				  2 * MIB), 0);
	sig = tu_wait(&ch, &r);
	tu_run_free(&r);
	ck_assert_int_eq(bf_sh("mount -o remount,ro '%s'", tiny.mnt), 0);
	tu_run(&r, (const char *const[]){ "restore", journal, NULL });
	after = tu_checksum(img);
	kept = access(journal, F_OK) == 0;
	ck_assert_int_eq(bf_sh("mount -o remount,rw '%s'", tiny.mnt), 0);
	unlink(journal);
	ck_assert_msg(sig == SIGXFSZ, "the test did not crash as planned (signal %d)", sig);
	ck_assert_msg(after == before, "the image was not restored");
	ck_assert_msg(kept, "the journal went away on a read-only file system");
	ck_assert_msg(r.status == 1 && strstr(r.out, "restored") &&
		      strstr(r.err, "could not be deleted") && strstr(r.err, "by hand"),
		      "status %d, out '%s', err '%s'", r.status, r.out, r.err);
	tu_run_free(&r);
	free(img);
}
END_TEST

/* ==== item 5: data on the device, no terminal to confirm on ==== */

static const struct signature_case {
	uint32_t off;
	const char *magic;
	size_t len;
} signature_cases[] = {
	{ 0x438, "\x53\xef", 2 },		/* ext2/3/4 */
	{ 0x1fe, "\x55\xaa", 2 },		/* MBR */
	{ 0x218, "LVM2 001", 8 },		/* LVM2 physical volume */
	{ 0x1000, "\xfc\x4e\x2b\xa9", 4 },	/* md RAID member */
};

START_TEST(test_signature_without_terminal)
{
	const struct signature_case *c = &signature_cases[_i];
	char *img = new_image(IMG_BYTES, 51);
	const char *const destroy[] = { "find-fat", "--destructive", "-e", "1M", "--manual",
					img, NULL };
	const char *const keep[] = { "open-au", "--write", "-e", "1M", "--max-open=2", img,
				     NULL };
	const char *const yes[] = { "open-au", "--write", "--yes", "-e", "1M",
				    "--max-open=2", img, NULL };
	struct run_result r;
	uint64_t before;
	int fd = open(img, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, c->magic, c->len, c->off), (ssize_t)c->len);
	close(fd);
	before = tu_checksum(img);
	for (int i = 0; i < 2; i++) {
		tu_run(&r, i ? keep : destroy);
		ck_assert_msg(r.status == 3, "case %d/%d: status %d, '%s'", _i, i, r.status,
			      r.err);
		ck_assert_msg(strstr(r.err, "--yes") && strstr(r.err, "terminal"),
			      "case %d/%d: '%s'", _i, i, r.err);
		ck_assert_msg(tu_checksum(img) == before, "case %d/%d: the image changed", _i, i);
		tu_run_free(&r);
	}
	tu_run(&r, yes);
	ck_assert_msg(r.status == 0, "with --yes: status %d, '%s'", r.status, r.err);
	ck_assert_msg(tu_checksum(img) == before, "with --yes: not restored");
	tu_run_free(&r);
	free(img);
}
END_TEST

/* The question asked on a terminal: stdin and stderr (where it is
 * written) both on the terminal.  Standard input on a terminal with
 * standard error sent to a file hid the question in the file, and the run
 * waited for an answer nobody had been asked for; now that is no terminal
 * to confirm on (status 3, --yes needed).  On a terminal a wrong answer
 * writes nothing (3) and the device's name proceeds (restored, 0).
 * Case 0: standard error to a file; 1: a wrong name; 2: the right one. */
static int run_on_pty(const char *const *args, const char *answer, char *said,
		      size_t saidlen)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), status = -1;
	char errfile[PATH_MAX];
	size_t got = 0;
	bool reaped = false;
	pid_t pid;

	ck_assert_int_ge(master, 0);
	ck_assert_int_eq(fcntl(master, F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(grantpt(master), 0);
	ck_assert_int_eq(unlockpt(master), 0);
	in_work(errfile, sizeof(errfile), "stderr.txt");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *argv[MAX_ARGS] = { tu_binary() };
		int slave, err;

		setsid();
		slave = open(ptsname(master), O_RDWR);
		err = answer ? slave : open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (slave < 0 || err < 0)
			_exit(126);
		dup2(slave, STDIN_FILENO);
		dup2(slave, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		for (int i = 0; args[i] && i + 2 < MAX_ARGS; i++)
			argv[i + 1] = args[i];
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	said[0] = '\0';
	for (uint64_t end = tu_now_ns() + 60000000000ull; tu_now_ns() < end;) {
		char buf[512];
		ssize_t n;

		/* once it has exited, one more pass reads what it left */
		bool last = reaped;

		reaped = reaped || waitpid(pid, &status, WNOHANG) == pid;
		n = read(master, buf, sizeof(buf) - 1);
		if (n > 0 && got + (size_t)n < saidlen) {
			memcpy(said + got, buf, (size_t)n);
			said[got += (size_t)n] = '\0';
		}
		if (answer && strstr(said, "to continue: ")) {
			ck_assert_int_eq(write(master, answer, strlen(answer)), (ssize_t)strlen(answer));
			answer = NULL;
		}
		if (n <= 0 && last)
			break;
		if (n <= 0)
			sleep_ms(50);
	}
	if (!reaped) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		status = -1;	/* still waiting after a minute */
	}
	close(master);
	if (access(errfile, F_OK) == 0) {	/* standard error went there */
		char *text = slurp(errfile);

		snprintf(said + got, saidlen - got, "%s", text);
		unlink(errfile);
	}
	return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(test_question_needs_terminal_stderr)
{
	char *img = new_image(IMG_BYTES, 52);
	const char *const args[] = { "open-au", "--write", "-e", "1M", "--max-open=2", img,
				     NULL };
	static char said[1 << 16];
	char answer[PATH_MAX + 2];
	uint64_t before;
	int fd = open(img, O_WRONLY), status;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "\x55\xaa", 2, 0x1fe), 2);	/* an MBR */
	close(fd);
	before = tu_checksum(img);
	snprintf(answer, sizeof(answer), "%s\n", _i == 1 ? "/dev/wrong" : img);
	status = run_on_pty(args, _i ? answer : NULL, said, sizeof(said));
	if (_i == 0)
		ck_assert_msg(status == 3 && strstr(said, "--yes") && strstr(said, "terminal") &&
			      !strstr(said, "to continue"),
			      "standard error to a file: status %d, '%s'", status, said);
	else if (_i == 1)
		ck_assert_msg(status == 3 && strstr(said, "to continue") &&
			      strstr(said, "not confirmed"),
			      "a wrong name: status %d, '%s'", status, said);
	else
		ck_assert_msg(status == 0 && strstr(said, "to continue"),
			      "the right name: status %d, '%s'", status, said);
	ck_assert_uint_eq(tu_checksum(img), before);
	ck_assert_int_eq(state_entries(), 0);
	free(img);
}
END_TEST

/* ==== item 6: over-long paths are refused, never cut ==== */

/* dir/././.../name: exactly want bytes long (one '/' doubled when the
 * parity needs it). */
static void padded_path(char *buf, size_t len, const char *name, size_t want)
{
	size_t n = (size_t)snprintf(buf, len, "%s/", work);

	if ((want - n - strlen(name)) % 2)
		n += (size_t)snprintf(buf + n, len - n, "/");
	while (n + strlen(name) < want)
		n += (size_t)snprintf(buf + n, len - n, "./");
	snprintf(buf + n, len - n, "%s", name);
}

START_TEST(test_long_paths_refused)
{
	static char dev[2 * PATH_MAX], jour[2 * PATH_MAX];
	char *img = new_image(IMG_BYTES, 61), victim[PATH_MAX], cut_journal[PATH_MAX];
	uint64_t before;
	struct run_result r;
	struct stat st;

	/* the first PATH_MAX - 1 bytes name an existing image, or a new
	 * journal next to it: what a cut path would have used */
	in_work(victim, sizeof(victim), "victim");
	ck_assert_int_eq(rename(img, victim), 0);
	before = tu_checksum(victim);
	padded_path(dev, sizeof(dev), "victim", PATH_MAX - 1);
	strcat(dev, "-is-not-this-one");
	padded_path(jour, sizeof(jour), "cut.journal", PATH_MAX - 1);
	ck_assert_uint_lt(strlen(jour), sizeof(cut_journal));
	memcpy(cut_journal, jour, strlen(jour) + 1);
	strcat(jour, "-is-not-this-one");
	{
		const char *const cases[][MAX_ARGS] = {
			{ "find-fat", "--destructive", "--yes", "-e", "1M", "--manual", dev, NULL },
			{ "restore", dev, NULL },
			{ "align", dev, NULL },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			tu_run(&r, cases[i]);
			ck_assert_msg(r.status == 2, "case %zu: status %d, '%s'", i, r.status,
				      r.err);
			ck_assert_msg(strstr(r.err, "PATH_MAX"), "case %zu: '%s'", i, r.err);
			tu_run_free(&r);
		}
	}
	ck_assert_msg(tu_checksum(victim) == before, "a cut path wrote to another file");
	{
		char opt[2 * PATH_MAX + 16];
		const char *const argv[] = { "open-au", "--write", "-e", "1M", opt, victim, NULL };

		snprintf(opt, sizeof(opt), "--journal=%s", jour);
		tu_run(&r, argv);
		ck_assert_msg(r.status == 2, "long --journal: status %d, '%s'", r.status, r.err);
		tu_run_free(&r);
	}
	ck_assert_msg(stat(cut_journal, &st) != 0, "a journal was created at the cut path");
	ck_assert_msg(tu_checksum(victim) == before, "the image changed");
	free(img);
}
END_TEST

/* ==== item 9: another process writing the device is named ==== */

/* A bench --write on target: exit status want, stderr naming both words
 * (NULL: any), and image (what target writes) as it was. */
static void bench_write_ends(const char *target, const char *image, int want,
			     const char *word1, const char *word2)
{
	uint64_t before = tu_checksum(image);
	const char *argv[MAX_ARGS];
	struct run_result r;

	args_with(argv, bench_write, NULL, target);
	tu_run(&r, argv);
	ck_assert_msg(r.status == want, "status %d, want %d: '%s'", r.status, want, r.err);
	ck_assert_msg((!word1 || strstr(r.err, word1)) && (!word2 || strstr(r.err, word2)),
		      "no '%s' or '%s' in '%s'", word1, word2, r.err);
	ck_assert_msg(tu_checksum(image) == before, "the image changed");
	tu_run_free(&r);
}

/* A bench --write on target while this process holds held (target, or
 * the file a loop device target reads) open for writing: warned, naming
 * this process, and restored. */
static void other_writer_warned(const char *target, const char *held)
{
	char pid[32];
	int fd = open(held, O_RDWR | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	snprintf(pid, sizeof(pid), "pid %d", (int)getpid());
	bench_write_ends(target, held, 0, "open for writing", pid);
	close(fd);
}

START_TEST(test_other_writer_image)
{
	char *img = new_image(IMG_BYTES, 91);

	other_writer_warned(img, img);
	free(img);
}
END_TEST

/* O_EXCL does not stop a process that opened the disk without it; and
 * one that has the loop device's file open (the attack: no warning
 * there, while a program wrote the image during the test). */
START_TEST(test_other_writer_loop)
{
	require_loop();
	other_writer_warned(loop.dev, _i ? loop.image : loop.dev);
}
END_TEST

/* A FUSE server (fuse2fs) writing the image serves a file system from
 * it, mounted as far as the user is concerned, though no mount table
 * names the image: a test on the image, or on a loop device over it,
 * lost the user's files in an attack run (the journal went into that
 * file system too).  A child with /dev/fuse and the image open stands
 * for the server (and dies with this process): refused, status 3,
 * nothing changed. */
static void fuse_server_refused(const char *target, const char *image)
{
	int ready[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fuse = open("/dev/fuse", O_RDWR), img = open(image, O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		c = fuse >= 0 && img >= 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	ck_assert_msg(c == 'y', "the child could not open /dev/fuse and the image");
	bench_write_ends(target, image, 3, "serves a FUSE file system", NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

START_TEST(test_fuse_server_image)
{
	char *img = new_image(IMG_BYTES, 93);

	fuse_server_refused(img, img);
	free(img);
}
END_TEST

START_TEST(test_fuse_server_loop)
{
	require_loop();
	fuse_server_refused(loop.dev, loop.image);
}
END_TEST

/* A loop device over a pending journal was a write target like any
 * other (its file is refused by name): a test on it destroyed the
 * journal, and with it the crashed card's data.  Refused now, the file
 * unchanged; also through a window of it that starts past its magic
 * (case 1, --offset 4096: a second attack). */
START_TEST(test_loop_over_journal_refused)
{
	char *img = new_image(IMG_BYTES, 95), *dev;
	const char *argv[MAX_ARGS];
	struct run_result r;
	uint64_t before;

	require_loop();
	ck_assert_int_eq(tu_write_at(img, 0, JOURNAL_MAGIC, 8), 0);
	before = tu_checksum(img);
	dev = _i ? tu_loop_attach_opts(img, "--offset 4096") : tu_loop_attach(img, false);
	ck_assert_ptr_nonnull(dev);
	args_with(argv, bench_write, NULL, dev);
	tu_run(&r, argv);
	tu_loop_detach(dev);
	ck_assert_msg(r.status == 3 && strstr(r.err, "reads a flashprobe journal"),
		      "status %d, '%s'", r.status, r.err);
	ck_assert_msg(tu_checksum(img) == before, "the journal changed");
	tu_run_free(&r);
	free(dev);
	free(img);
}
END_TEST

/* ==== item 10: every documented exit status, one meaning each ==== */

static const struct status_case {
	const char *args[MAX_ARGS];
	int status;
	const char *expect;		/* in stderr */
} status_cases[] = {
	{ { "align", "sim:seed", NULL }, 0, "" },
	{ { "open-au", "--write", "--erasesize=4M", "--max-open=4",
	    "sim:sdhc-4m,bad_start=20M,bad=1M", NULL }, 1, "open-au failed" },
	{ { "open-au", "-e", "1M", "@IMG", NULL }, 2, "--write" },
	{ { "open-au", "--write", "-e", "1M", "--journal=", "@IMG", NULL }, 2, "empty" },
	{ { "align", "@LOOP", NULL }, 2, "symbolic links" },
	{ { "open-au", "--write", "-e", "1M", "--journal=@LOOP", "@IMG", NULL }, 2,
	  "--journal" },
	{ { "open-au", "--write", "-e", "1M", "--journal=@FILE", "@IMG", NULL }, 2,
	  "not a journal" },
	{ { "list-sims", "extra", NULL }, 2, "unexpected argument" },
	{ { "restore", "@DIR", NULL }, 2, "directory" },
	{ { "open-au", "--write", "-e", "1M", "--journal=@FAKEJ", "@IMG", NULL }, 3,
	  "unfinished journal" },
	{ { "open-au", "--write", "@IMG", NULL }, 4, "erase-block size" },
};

START_TEST(test_exit_status)
{
	const struct status_case *c = &status_cases[_i];
	char *img = new_image(16 * MIB, 101);
	char loopy[PATH_MAX], file[PATH_MAX], fake[PATH_MAX], store[MAX_ARGS][PATH_MAX + 16];
	const char *argv[MAX_ARGS];
	uint64_t before = tu_checksum(img);
	struct run_result r;
	int fd;

	in_work(loopy, sizeof(loopy), "loopy");
	in_work(file, sizeof(file), "notes.txt");
	in_work(fake, sizeof(fake), "other.journal");
	ck_assert_int_eq(symlink(loopy, loopy), 0);
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "keep me\n", 8), 8);
	close(fd);
	fd = open(fake, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "FPJOURNL", 8), 8);
	close(fd);
	expand(c->args, argv, store, (const struct subst[]){
		{ "@IMG", img }, { "@LOOP", loopy }, { "@FILE", file }, { "@FAKEJ", fake },
		{ "@DIR", work }, { NULL, NULL } });
	tu_run(&r, argv);
	ck_assert_msg(r.status == c->status, "case %d: status %d, want %d: '%s'", _i, r.status,
		      c->status, r.err);
	ck_assert_msg(strstr(r.err, c->expect), "case %d: '%s' lacks '%s'", _i, r.err,
		      c->expect);
	ck_assert_msg(tu_checksum(img) == before, "case %d: the image changed", _i);
	ck_assert_msg(!strcmp(slurp(file), "keep me\n"), "case %d: overwrote a file", _i);
	tu_run_free(&r);
	free(img);
}
END_TEST

/* A block device whose sysfs entry is missing: nothing can prove it
 * unused, a refusal for safety (3), not a usage error. */
START_TEST(test_unverifiable_device_refused)
{
	char node[PATH_MAX], sys[64];
	const char *const argv[] = { "open-au", "--destructive", "-e", "1M", node, NULL };
	struct run_result r;
	unsigned minor_nr = 200;

	ck_assert_msg(work[0], "no private directory");
	do
		snprintf(sys, sizeof(sys), "/sys/dev/block/240:%u", ++minor_nr);
	while (access(sys, F_OK) == 0 && minor_nr < 250);
	in_work(node, sizeof(node), "orphan");
	ck_assert_int_eq(mknod(node, S_IFBLK | 0600, makedev(240, minor_nr)), 0);
	tu_run(&r, argv);
	ck_assert_msg(r.status == 3, "status %d, '%s'", r.status, r.err);
	ck_assert_msg(strstr(r.err, "cannot check whether"), "'%s'", r.err);
	tu_run_free(&r);
}
END_TEST

/* "find-fat --write -e 1M IMG" killed by RLIMIT_FSIZE after two saved
 * blocks: a crash at a known point, leaving a pending journal. */
#define CRASH_FSIZE (2048 + 2 * (40 + MIB + 40) + 2048)
static void crash_find_fat(const char *img)
{
	const char *const args[] = { "find-fat", "--write", "-e", "1M", img, NULL };
	struct tu_child ch;
	struct run_result r;

	ck_assert_int_eq(tu_spawn(&ch, args, CRASH_FSIZE), 0);
	ck_assert_int_eq(tu_wait(&ch, &r), SIGXFSZ);
	/* it died without a word */
	ck_assert_msg(strstr(r.err, "a file size limit (ulimit -f) ended the test") &&
		      strstr(r.err, "flashprobe restore"), "'%s'", r.err);
	tu_run_free(&r);
}

/* A pending journal, then the image moved to another file system (a copy
 * and an unlink: another inode, another name).  Its journal names a file
 * that is gone; the search by identity found nothing, so restore said
 * "nothing to restore" (status 0) and a new test was allowed over the
 * test data only that journal can put back.  Now both are refused (3)
 * with the way out, an image of the same size with other data outside
 * the test's area (find-fat writes the first 64 MiB of 128) is not taken
 * for it, and restore --force puts the moved image back as it was
 * before the test.  Case 1 keeps the default place apart from the state
 * directory: the journal has a pointer file there too, and the two are
 * one journal, not two that --force could not choose between.  Case 2
 * names the state directory with a trailing slash: it is the default
 * place, looked in once. */
START_TEST(test_moved_image_keeps_its_journal)
{
	char home[PATH_MAX], names[256];
	char *img = new_image(AU_SEARCH_IMG_BYTES, 113);
	char *moved = new_image(AU_SEARCH_IMG_BYTES, 114);
	char *other = new_image(AU_SEARCH_IMG_BYTES, 115);
	const char *const again[] = { "find-fat", "--write", "-e", "1M", moved, NULL };
	struct run_result r;
	uint64_t before = tu_checksum(img), crashed, sum_other = tu_checksum(other);

	in_work(home, sizeof(home), "home");
	if (_i == 1) {
		ck_assert_msg(tu_default_dir_make(home), "cannot make '%s'", home);
	} else if (_i == 2) {
		char slashed[sizeof(state) + 1];

		snprintf(slashed, sizeof(slashed), "%s/", state);
		ck_assert_int_eq(setenv(JOURNAL_STATE_ENV, slashed, 1), 0);
	}
	crash_find_fat(img);
	ck_assert_msg(journal_size() > 0, "no pending journal");
	ck_assert_msg(_i != 1 || tu_dir_list(home, names, sizeof(names)) == 1,
		      "no pointer file at the default place: '%s'", names);
	ck_assert_int_eq(tu_copy_sparse(img, moved, 0), 0);
	ck_assert_int_eq(unlink(img), 0);
	crashed = tu_checksum(moved);
	ck_assert_uint_ne(crashed, before);
	tu_run(&r, (const char *const[]){ "restore", moved, NULL });
	ck_assert_msg(r.status == 3 && strstr(r.err, "no longer there") &&
		      strstr(r.err, "restore --force") && strstr(r.err, moved) &&
		      strstr(r.err, "read as they did"),
		      "restore of the moved image: "
		      "status %d, '%s' '%s'", r.status, r.out, r.err);
	tu_run_free(&r);
	tu_run(&r, again);
	ck_assert_msg(r.status == 3 && strstr(r.err, "no longer there"),
		      "a test of the moved image: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(moved), crashed);
	/* same size, other data where the test never wrote */
	tu_run(&r, (const char *const[]){ "restore", other, NULL });
	ck_assert_msg(r.status == 0 && strstr(r.err, "nothing to restore"),
		      "another image: status %d, '%s' '%s'", r.status, r.out, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(other), sum_other);
	tu_run(&r, (const char *const[]){ "restore", "--force", moved, NULL });
	ck_assert_msg(r.status == 0 && strstr(r.out, "restored"), "restore --force: "
		      "status %d, '%s' '%s'", r.status, r.out, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(moved), before);
	ck_assert_int_eq(journal_size(), -1);
	ck_assert_msg(_i != 1 || tu_dir_list(home, names, sizeof(names)) == 0,
		      "left at the default place: %s", names);
	free(other);
	free(moved);
	free(img);
}
END_TEST

/* The first 512 bytes of img that hold the tests' fill byte: a place
 * the crashed test wrote, inside what its journal saved. */
static uint64_t first_fill_piece(const char *img)
{
	static unsigned char buf[MIB];
	int fd = open(img, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	for (uint64_t off = 0; (n = pread(fd, buf, sizeof(buf), (off_t)off)) > 0; off += (uint64_t)n)
		for (ssize_t at = 0; at + 512 <= n; at += 512)
			if (util_is_fill(buf + at, 512)) {
				close(fd);
				return off + (uint64_t)at;
			}
	ck_abort_msg("no test write in '%s'", img);
	return 0;
}

/* A crashed find-fat, then the user's data written where the test had
 * written, then the image copied over itself (cp and mv: another inode,
 * as rsync or a move to another file system make it).  restore refuses
 * the other file, naming --force for a copy; --force then replayed the
 * journal over the user's new data and said "verified" (an attack:
 * 4 MiB lost), since it overrode every check.  It overrides the identity
 * and fingerprint only now: the newer data refuses (3, nothing written)
 * until --overwrite-newer, which says what it overwrote. */
START_TEST(test_force_keeps_newer_data)
{
	char *img = new_image(AU_SEARCH_IMG_BYTES, 116);
	char copy[PATH_MAX + 8];
	unsigned char user[512];
	struct run_result r;
	uint64_t before = tu_checksum(img), newer;
	int fd;

	crash_find_fat(img);
	memset(user, 'U', sizeof(user));
	fd = open(img, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, user, sizeof(user), (off_t)first_fill_piece(img)),
			 (ssize_t)sizeof(user));
	close(fd);
	snprintf(copy, sizeof(copy), "%s.cp", img);
	fd = open(copy, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)AU_SEARCH_IMG_BYTES), 0);
	close(fd);
	ck_assert_int_eq(tu_copy_sparse(img, copy, 0), 0);
	ck_assert_int_eq(rename(copy, img), 0);
	newer = tu_checksum(img);
	tu_run(&r, (const char *const[]){ "restore", img, NULL });
	ck_assert_msg(r.status == 3, "restore of the copy: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	tu_run(&r, (const char *const[]){ "restore", "--force", img, NULL });
	ck_assert_msg(r.status == 3 && strstr(r.err, "would overwrite") &&
		      strstr(r.err, "restore --force --overwrite-newer"),
		      "restore --force: status %d, '%s' '%s'", r.status, r.out, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(img), newer);
	ck_assert_msg(journal_size() > 0, "the journal is gone");
	tu_run(&r, (const char *const[]){ "restore", "--force", "--overwrite-newer", img, NULL });
	ck_assert_msg(r.status == 0 && strstr(r.out, "512 bytes held neither"),
		      "restore --force --overwrite-newer: status %d, '%s' '%s'", r.status,
		      r.out, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(img), before);
	ck_assert_int_eq(journal_size(), -1);
	free(img);
}
END_TEST

/* Two images crashed in find-fat (which covers all of 64 MiB: nothing to
 * compare but the size; a test of the second image had to come before
 * the first was moved, as any image of that size is taken for the moved
 * one then) and both moved: either fits both journals, and
 * restore --force put each one's data on the other.  Refused (3) while
 * both are there; with the other journal moved away, --force restores. */
START_TEST(test_two_moved_images_refused)
{
	char *img[2], *moved[2], journal[2][PATH_MAX + 300], away[PATH_MAX + 310];
	uint64_t before[2], crashed[2];
	struct run_result r;

	for (int i = 0; i < 2; i++) {
		img[i] = new_image(IMG_BYTES, 120 + (uint64_t)i);
		moved[i] = new_image(IMG_BYTES, 122 + (uint64_t)i);
		before[i] = tu_checksum(img[i]);
		crash_find_fat(img[i]);
		ck_assert_int_eq(journal_default_path(img[i], journal[i], sizeof(journal[i]),
						      NULL, 0), 0);
	}
	for (int i = 0; i < 2; i++) {	/* moved once both crashed */
		ck_assert_int_eq(tu_copy_sparse(img[i], moved[i], 0), 0);
		ck_assert_int_eq(unlink(img[i]), 0);
		crashed[i] = tu_checksum(moved[i]);
	}
	tu_run(&r, (const char *const[]){ "restore", "--force", moved[1], NULL });
	ck_assert_msg(r.status == 3 && strstr(r.err, "2 unfinished journals"),
		      "restore --force with two candidates: status %d, '%s' '%s'",
		      r.status, r.out, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(moved[0]), crashed[0]);
	ck_assert_uint_eq(tu_checksum(moved[1]), crashed[1]);
	snprintf(away, sizeof(away), "%s.away", journal[0]);
	ck_assert_int_eq(rename(journal[0], away), 0);
	tu_run(&r, (const char *const[]){ "restore", "--force", moved[1], NULL });
	ck_assert_msg(r.status == 0, "restore --force of one: status %d, '%s'", r.status,
		      r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(moved[1]), before[1]);
	ck_assert_uint_eq(tu_checksum(moved[0]), crashed[0]);
	unlink(away);
	for (int i = 0; i < 2; i++) {
		free(img[i]);
		free(moved[i]);
	}
}
END_TEST

/* A restore under a file size limit (ulimit -f, systemd's LimitFSIZE)
 * below the image's changed blocks: it was killed by SIGXFSZ without a
 * word, restoring nothing.  It restores what lies below the limit, says
 * what it could not write and why, keeps the journal (status 1), and the
 * restore without the limit finishes. */
START_TEST(test_restore_under_file_size_limit)
{
	char *img = new_image(IMG_BYTES, 113);
	const char *const restore[] = { "restore", img, NULL };
	const uint64_t limit = 256 * 1024;
	uint64_t before = tu_checksum(img), below = tu_checksum_range(img, 0, limit);
	struct tu_child ch;
	struct run_result r;
	char journal[PATH_MAX + 300];

	crash_find_fat(img);
	ck_assert_msg(state_journal(journal, sizeof(journal)) > 0, "no pending journal");
	ck_assert_uint_ne(tu_checksum_range(img, 0, limit), below);
	ck_assert_int_eq(tu_spawn(&ch, restore, limit), 0);
	ck_assert_msg(tu_wait(&ch, &r) == 0, "the restore was killed");
	ck_assert_msg(r.status == 1 && tu_count_lines(r.err) == 1 &&
		      strstr(r.err, "File too large") && strstr(r.err, "ulimit -f"),
		      "status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum_range(img, 0, limit), below);
	ck_assert_uint_ne(tu_checksum(img), before);
	ck_assert_msg(journal_size() > 0, "the journal was not kept");
	tu_run(&r, restore);
	ck_assert_msg(r.status == 0, "status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	assert_kept(img, before);
	free(img);
}
END_TEST

/* Two restores of one pending journal at once, one by the device's name
 * and one by the journal's: one replays it, and the other, finding it
 * gone, says that another restore replayed it (status 0).  It said
 * "cannot open journal: No such file or directory" with status 1. */
START_TEST(test_two_restores_at_once)
{
	char *img = new_image(IMG_BYTES, 114);
	uint64_t before = tu_checksum(img);
	char journal[PATH_MAX + 300];

	for (int round = 0; round < 3; round++) {
		const char *const by_dev[] = { "restore", img, NULL };
		const char *const by_name[] = { "restore", journal, NULL };
		struct tu_child a, b;
		struct run_result ra, rb;

		crash_find_fat(img);
		ck_assert_msg(state_journal(journal, sizeof(journal)) > 0, "no pending journal");
		ck_assert_uint_ne(tu_checksum(img), before);
		ck_assert_int_eq(tu_spawn(&a, by_dev, 0), 0);
		ck_assert_int_eq(tu_spawn(&b, by_name, 0), 0);
		ck_assert_int_eq(tu_wait(&a, &ra), 0);
		ck_assert_int_eq(tu_wait(&b, &rb), 0);
		ck_assert_msg(ra.status == 0 && rb.status == 0, "round %d: status %d '%s', "
			      "status %d '%s'", round, ra.status, ra.err, rb.status, rb.err);
		ck_assert_msg(strstr(ra.out, "restored") || strstr(rb.out, "restored"),
			      "round %d: neither restored: '%s' '%s'", round, ra.err, rb.err);
		assert_kept(img, before);
		tu_run_free(&ra);
		tu_run_free(&rb);
	}
	free(img);
}
END_TEST

/* A process that looks like "flashprobe restore" to /proc (its first
 * argument is "restore": sh running a script of that name) holding the
 * journal's lock for some seconds, as a concurrent restore holds it while
 * it replays.  Returns its pid. */
static pid_t fake_restore_holding(const char *journal, unsigned seconds)
{
	char script[PATH_MAX];
	int fd, pfd[2];
	pid_t pid;
	FILE *f;

	in_work(script, sizeof(script), "restore");
	f = fopen(script, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "sleep %u 9<&-\n", seconds);	/* the lock stays with sh alone */
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);		/* sh and its sleep: one group to kill */
		fd = open(journal, O_RDONLY);
		if (fd < 0 || dup2(fd, 9) != 9 || flock(9, LOCK_EX) != 0 ||
		    chdir(work) != 0)
			_exit(1);
		close(pfd[0]);
		close(pfd[1]);		/* locked: the parent may go on */
		execl("/bin/sh", "sh", "restore", (char *)NULL);
		_exit(1);
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], script, 1), 0);
	close(pfd[0]);
	return pid;
}

/* A restore finding the journal locked by another restore waits for it
 * (a replay always finishes) and then restores whatever is left, here
 * everything, as the other one wrote nothing (status 0).  It was refused
 * as "held by a flashprobe test that is still running" (status 3). */
START_TEST(test_restore_waits_for_restore)
{
	char *img = new_image(IMG_BYTES, 115);
	uint64_t before = tu_checksum(img);
	char journal[PATH_MAX + 300];
	struct run_result r;
	int status;
	pid_t holder;

	crash_find_fat(img);
	ck_assert_msg(state_journal(journal, sizeof(journal)) > 0, "no pending journal");
	holder = fake_restore_holding(journal, 1);
	tu_run(&r, (const char *const[]){ "restore", img, NULL });
	ck_assert_int_eq(waitpid(holder, &status, 0), holder);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder failed");
	ck_assert_msg(r.status == 0 && strstr(r.out, "restored"), "status %d, '%s' '%s'",
		      r.status, r.out, r.err);
	assert_kept(img, before);
	tu_run_free(&r);
	free(img);
}
END_TEST

/* A pending journal (find-fat --write killed by RLIMIT_FSIZE after two
 * saved blocks), then the image replaced by another file: restoring onto
 * it is refused (3) and writes nothing. */
START_TEST(test_restore_other_identity_refused)
{
	char *img = new_image(IMG_BYTES, 111), *other;
	const char *const args[] = { "find-fat", "--write", "-e", "1M", img, NULL };
	struct run_result r;
	char journal[PATH_MAX + 300];
	uint64_t sum;

	crash_find_fat(img);
	ck_assert_msg(state_journal(journal, sizeof(journal)) > 0, "no pending journal");
	other = new_image(IMG_BYTES, 112);
	ck_assert_int_eq(rename(other, img), 0);
	sum = tu_checksum(img);
	/* by the journal's name: matched by identity, the new file has none */
	tu_run(&r, (const char *const[]){ "restore", journal, NULL });
	ck_assert_msg(r.status == 3, "status %d, '%s' '%s'", r.status, r.out, r.err);
	ck_assert_msg(tu_checksum(img) == sum, "the other file was written");
	ck_assert_msg(journal_size() > 0, "the journal was not kept");
	tu_run_free(&r);
	/* by the device's name, and a new test: the journal under its name
	 * is another file's (it said "nothing to restore", status 0, and the
	 * test failed creating its journal, status 1) */
	tu_run(&r, (const char *const[]){ "restore", img, NULL });
	ck_assert_msg(r.status == 3 && tu_count_lines(r.err) == 1 &&
		      strstr(r.err, "another card or file"), "restore of the new file: status "
		      "%d, '%s' '%s'", r.status, r.out, r.err);
	tu_run_free(&r);
	tu_run(&r, args);
	ck_assert_msg(r.status == 3 && strstr(r.err, "another card or file"),
		      "a test of the new file: status %d, '%s'", r.status, r.err);
	ck_assert_msg(tu_checksum(img) == sum, "the other file was written");
	ck_assert_msg(journal_size() > 0, "the journal was not kept");
	tu_run_free(&r);
	/* --force, for a copy of the first file, finds other data where the
	 * test saved: that takes --overwrite-newer too */
	tu_run(&r, (const char *const[]){ "restore", "--force", img, NULL });
	ck_assert_msg(r.status == 3 && strstr(r.err, "--force --overwrite-newer"),
		      "restore --force of the new file: status %d, '%s' '%s'", r.status, r.out,
		      r.err);
	ck_assert_msg(tu_checksum(img) == sum, "the other file was written");
	tu_run_free(&r);
	tu_run(&r, (const char *const[]){ "restore", "--force", "--overwrite-newer", img, NULL });
	ck_assert_msg(r.status == 0 && strstr(r.out, "restored") && state_entries() == 0,
		      "restore --force --overwrite-newer of the new file: status %d, '%s' '%s'",
		      r.status, r.out, r.err);
	tu_run_free(&r);
	free(other);
	free(img);
}
END_TEST

/* A link to the image planted at its journal's name: restore (also
 * --force) refuses it as the device itself (status 3; it was told as "a
 * test that is still running", the device's own lock), writes nothing,
 * and leaves the link. */
START_TEST(test_journal_link_to_device)
{
	char *img = new_image(IMG_BYTES, 47);
	const char *const args[] = { "find-fat", "--write", "-e", "1M", img, NULL };
	char journal[PATH_MAX + 300];
	uint64_t before;
	struct tu_child ch;
	struct run_result r;
	struct stat st;

	ck_assert_int_eq(tu_spawn(&ch, args, JR_TEST_HEADER + 2 * (MIB + 80)), 0);
	ck_assert_int_eq(tu_wait(&ch, &r), SIGXFSZ);
	tu_run_free(&r);
	ck_assert_msg(state_journal(journal, sizeof(journal)) > 0, "no pending journal");
	tu_run(&r, (const char *const[]){ "restore", img, NULL });
	ck_assert_msg(r.status == 0, "restore: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	before = tu_checksum(img);
	ck_assert_int_eq(symlink(img, journal), 0);
	for (int force = 0; force < 2; force++) {
		const char *const restore[] = { "restore", force ? "--force" : img,
						force ? img : NULL, NULL };

		tu_run(&r, restore);
		ck_assert_msg(r.status == 3 && strstr(r.err, "is the device under test itself"),
			      "restore%s: status %d, '%s' '%s'", force ? " --force" : "",
			      r.status, r.out, r.err);
		ck_assert_msg(tu_checksum(img) == before, "the image was written");
		ck_assert_msg(lstat(journal, &st) == 0 && S_ISLNK(st.st_mode),
			      "the link is gone");
		tu_run_free(&r);
	}
	free(img);
}
END_TEST

/* Killed as its restore ends, between deleting a journal kept elsewhere
 * (--journal) and its pointer: the pointer outlives the journal.  The
 * restore empties the pointer's area first, so the next restore (of the
 * pointer or of the device) removes it and says nothing is to be done
 * (status 0), and the next test runs; it used to tell of a lost journal
 * whose data might be on the device (status 1). */
START_TEST(test_pointer_outlives_journal)
{
	char *img = new_image(IMG_BYTES, 48);
	char jopt[PATH_MAX + 16], pointer[PATH_MAX + 300];
	const char *const args[] = { "find-fat", "--write", "-e", "1M", jopt, img, NULL };
	struct jr_pointer p;
	struct tu_child ch;
	struct run_result r;
	uint64_t before = tu_checksum(img);

	snprintf(jopt, sizeof(jopt), "--journal=%s/elsewhere.journal", work);
	ck_assert_int_eq(tu_spawn(&ch, args, JR_TEST_HEADER + 2 * (MIB + 80)), 0);
	ck_assert_int_eq(tu_wait(&ch, &r), SIGXFSZ);
	tu_run_free(&r);
	ck_assert_msg(state_journal(pointer, sizeof(pointer)) > 0, "no pointer file");
	ck_assert_int_eq(jr_pointer_read(pointer, &p), 1);
	ck_assert_msg(p.area_hi > p.area_lo, "the pointer names no area");
	tu_run(&r, (const char *const[]){ "restore", img, NULL });
	ck_assert_msg(r.status == 0, "restore: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	assert_kept(img, before);
	p.area_lo = p.area_hi = 0;
	for (int by_device = 0; by_device < 2; by_device++) {
		ck_assert_int_eq(jr_pointer_write(pointer, &p), 0);
		tu_run(&r, (const char *const[]){ "restore", by_device ? img : pointer, NULL });
		ck_assert_msg(r.status == 0 && strstr(r.err, "nothing to restore"),
			      "restore of the %s: status %d, '%s'", by_device ? "device" : "pointer",
			      r.status, r.err);
		ck_assert_msg(state_entries() == 0, "the stale pointer was kept");
		tu_run_free(&r);
	}
	ck_assert_int_eq(jr_pointer_write(pointer, &p), 0);
	tu_run(&r, args);
	ck_assert_msg(r.status == 0, "the next test: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	assert_kept(img, before);
	free(img);
}
END_TEST

/* A crashed test's journal whose start is damaged (its magic, a bit
 * flipped by the disk) or cut to a few bytes was taken for an image file
 * with no journal: "nothing to restore", status 0, --force alike, while
 * the image held the test's data and a new test was refused and sent
 * back to that restore.  Now it is refused as a damaged journal (1),
 * saying what the card may hold, with the image as the crash left it;
 * with the saved copy put back, as the message suggests, the restore
 * gives the image back as it was.  Case 0: the journal in the state
 * directory; 1: kept elsewhere, named by a pointer file; 2: cut short. */
START_TEST(test_damaged_journal_start_refused)
{
	char *img = new_image(IMG_BYTES, 49);
	char jpath[PATH_MAX + 300], jopt[PATH_MAX + 320], copy[PATH_MAX];
	const char *args[] = { "find-fat", "--write", "-e", "1M", img, NULL, NULL };
	struct tu_child ch;
	struct run_result r;
	uint64_t before = tu_checksum(img), crashed;

	snprintf(jpath, sizeof(jpath), "%s/elsewhere.journal", work);
	snprintf(jopt, sizeof(jopt), "--journal=%s", jpath);
	if (_i > 0) {
		args[4] = jopt;
		args[5] = img;
	}
	ck_assert_int_eq(tu_spawn(&ch, args, JR_TEST_HEADER + 2 * (MIB + 80)), 0);
	ck_assert_int_eq(tu_wait(&ch, &r), SIGXFSZ);
	tu_run_free(&r);
	if (_i == 0)
		ck_assert_msg(state_journal(jpath, sizeof(jpath)) > 0, "no journal");
	in_work(copy, sizeof(copy), "journal.copy");
	ck_assert_int_eq(close(open(copy, O_WRONLY | O_CREAT | O_EXCL, 0600)), 0);
	ck_assert_int_eq(tu_copy_sparse(jpath, copy, 0), 0);
	crashed = tu_checksum(img);
	ck_assert_uint_ne(crashed, before);
	if (_i < 2) {
		int fd = open(jpath, O_WRONLY);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pwrite(fd, "X", 1, 0), 1);
		close(fd);
	} else {
		ck_assert_int_eq(truncate(jpath, 5), 0);
	}
	for (int force = 0; force < 2; force++) {
		tu_run(&r, force ? (const char *const[]){ "restore", "--force", jpath, NULL } :
				   (const char *const[]){ "restore", jpath, NULL });
		ck_assert_msg(r.status == 1 && strstr(r.err, "does not read as a flashprobe journal") &&
			      strstr(r.err, _i ? "may hold test data in bytes" : "may hold test data"),
			      "restore%s: status %d, '%s' '%s'", force ? " --force" : "",
			      r.status, r.out, r.err);
		tu_run_free(&r);
		ck_assert_uint_eq(tu_checksum(img), crashed);
	}
	/* an image file given to restore is not taken for a journal */
	tu_run(&r, (const char *const[]){ "restore", img, NULL });
	ck_assert_msg(r.status != 0 && !strstr(r.err, "nothing to restore"),
		      "restore of the image: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	ck_assert_int_eq(rename(copy, jpath), 0);
	tu_run(&r, (const char *const[]){ "restore", jpath, NULL });
	ck_assert_msg(r.status == 0, "restore of the copy: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	assert_kept(img, before);
	ck_assert_int_eq(state_entries(), 0);
	free(img);
}
END_TEST

/* Copy the whole of from over to in place (the same inode or device),
 * synced. */
static void copy_over(const char *from, const char *to)
{
	static char buf[1 << 20];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY);
	ssize_t n;

	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(fsync(out), 0);
	close(in);
	close(out);
}

/* A crash, then another card in the same place (the same inode, the
 * same loop device and backing file: the same identity), restore: the
 * fingerprint must refuse it (status 3, nothing written, the journal
 * kept); the first card back, restore brings it back whole.  find-fat
 * and capacity write areas that cover the whole 64 MiB card, which left
 * no block outside them for the fingerprint: the journal was written
 * onto the other card. */
static const char *const swap_cases[][MAX_ARGS] = {
	{ "find-fat", "--write", "--erasesize=1M", "@IMG", NULL },
	{ "capacity", "--write", "@IMG", NULL },
};

static void swapped_card_refused(const char *const *tmpl, const char *dev)
{
	char store[MAX_ARGS][PATH_MAX + 16], crashed[PATH_MAX];
	const char *argv[MAX_ARGS];
	char *other = new_image(IMG_BYTES, 46);
	uint64_t before = tu_checksum(dev), other_sum = tu_checksum(other);
	struct tu_child ch;
	struct run_result r;

	expand(tmpl, argv, store, (const struct subst[]){ { "@IMG", dev }, { NULL, NULL } });
	ck_assert_int_eq(tu_spawn(&ch, argv, JR_TEST_HEADER + 3 * (MIB + 80)), 0);
	ck_assert_msg(tu_wait(&ch, &r) == SIGXFSZ, "%s did not crash: status %d, '%s'",
		      tmpl[0], r.status, r.err);
	tu_run_free(&r);
	ck_assert_msg(journal_size() > 0, "%s: no pending journal", tmpl[0]);
	in_work(crashed, sizeof(crashed), "crashed");
	ck_assert_int_eq(bf_sh("cp '%s' '%s'", dev, crashed), 0);
	copy_over(other, dev);
	tu_run(&r, (const char *const[]){ "restore", dev, NULL });
	ck_assert_msg(tu_checksum(dev) == other_sum, "%s: the journal was written onto "
		      "another card (restore: status %d, '%s' '%s')", tmpl[0], r.status, r.out,
		      r.err);
	ck_assert_msg(r.status == 3 && strstr(r.err, "probably not the card"),
		      "%s: status %d, '%s'", tmpl[0], r.status, r.err);
	ck_assert_msg(journal_size() > 0, "%s: the journal was not kept", tmpl[0]);
	tu_run_free(&r);
	copy_over(crashed, dev);
	tu_run(&r, (const char *const[]){ "restore", dev, NULL });
	ck_assert_msg(r.status == 0, "%s: the first card back: status %d, '%s'", tmpl[0],
		      r.status, r.err);
	assert_kept(dev, before);
	tu_run_free(&r);
	free(other);
}

START_TEST(test_swapped_card_image)
{
	char *img = new_image(IMG_BYTES, 45);

	swapped_card_refused(swap_cases[_i], img);
	free(img);
}
END_TEST

START_TEST(test_swapped_card_loop)
{
	require_loop();
	swapped_card_refused(swap_cases[_i], loop.dev);
}
END_TEST

/* A test of a loop device killed, the loop device detached: restore of
 * the image and of the journal by name said "run 'flashprobe restore
 * JOURNAL'" and then "'/dev/loopN' is empty" (status 2), never that the
 * image must be attached again.  Both say so now, with the losetup line
 * (status 3, nothing written), and once attached again the journal
 * restores the image. */
START_TEST(test_detached_loop_named)
{
	const char *args[] = { "find-fat", "--write", "-e", "1M", NULL, NULL };
	char journal[PATH_MAX + 300];
	uint64_t before, crashed;
	struct tu_child ch;
	struct run_result r;

	require_loop();
	args[4] = loop.dev;
	before = tu_checksum(loop.image);
	ck_assert_int_eq(tu_spawn(&ch, args, JR_TEST_HEADER + 2 * (MIB + 80)), 0);
	ck_assert_int_eq(tu_wait(&ch, &r), SIGXFSZ);
	tu_run_free(&r);
	ck_assert_msg(state_journal(journal, sizeof(journal)) > 0, "no pending journal");
	crashed = tu_checksum(loop.image);
	ck_assert_uint_ne(crashed, before);
	ck_assert_int_eq(bf_sh("losetup -d '%s'", loop.dev), 0);
	tu_run(&r, (const char *const[]){ "restore", loop.image, NULL });
	ck_assert_msg(r.status == 3 && strstr(r.err, "losetup --find --show") &&
		      strstr(r.err, loop.image), "restore of the image: status %d, '%s'",
		      r.status, r.err);
	tu_run_free(&r);
	tu_run(&r, (const char *const[]){ "restore", journal, NULL });
	ck_assert_msg(r.status == 3 && strstr(r.err, "losetup --find --show"),
		      "restore of the journal: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(loop.image), crashed);
	/* the same node again, which the scene detaches */
	ck_assert_int_eq(bf_sh("losetup '%s' '%s'", loop.dev, loop.image), 0);
	tu_run(&r, (const char *const[]){ "restore", journal, NULL });
	ck_assert_msg(r.status == 0, "restore: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	assert_kept(loop.image, before);
}
END_TEST

/* img attached again with losetup's opts: restore through that loop
 * device puts it back as it was before the test. */
static void restored_through(const char *img, const char *opts, uint64_t before)
{
	char *dev = tu_loop_attach_opts(img, opts);
	struct run_result r;

	ck_assert_ptr_nonnull(dev);
	tu_run(&r, (const char *const[]){ "restore", dev, NULL });
	ck_assert_msg(r.status == 0, "restore through %s: status %d, '%s'", opts, r.status,
		      r.err);
	tu_run_free(&r);
	tu_loop_detach(dev);
	free(dev);
	assert_kept(img, before);
}

/* A test of a loop device at offset 1 MiB killed, the image attached
 * again at 2 MiB under the same number: restore of it (also --force) and
 * of the journal are refused with the losetup line of the journal's
 * window, and that line's device restores the image.  The refusal said
 * "another card or file ... restore --force if this is a copy", and
 * --force put the data 1 MiB off and deleted the journal (found by attack
 * testing). */
START_TEST(test_loop_at_another_offset)
{
	char journal[PATH_MAX + 300], *dev;
	uint64_t before, crashed;
	struct run_result r;

	require_loop();
	before = tu_checksum(loop.image);
	dev = tu_loop_attach_opts(loop.image, "--offset 1048576");
	ck_assert_ptr_nonnull(dev);
	crash_find_fat(dev);
	ck_assert_msg(state_journal(journal, sizeof(journal)) > 0, "no pending journal");
	crashed = tu_checksum(loop.image);
	tu_loop_detach(dev);
	free(dev);
	dev = tu_loop_attach_opts(loop.image, "--offset 2097152");
	ck_assert_ptr_nonnull(dev);
	for (int i = 0; i < 3; i++) {
		const char *const by_dev[] = { "restore", dev, NULL };
		const char *const forced[] = { "restore", "--force", dev, NULL };
		const char *const by_name[] = { "restore", journal, NULL };

		tu_run(&r, i == 0 ? by_dev : i == 1 ? forced : by_name);
		ck_assert_msg(r.status == 3 && strstr(r.err, "--offset 1048576"),
			      "restore %d: status %d, '%s'", i, r.status, r.err);
		tu_run_free(&r);
	}
	ck_assert_uint_eq(tu_checksum(loop.image), crashed);
	tu_loop_detach(dev);
	free(dev);
	restored_through(loop.image, "--offset 1048576", before);
}
END_TEST

/* A test of the second loop device of a chain (each at offset 1 MiB over
 * the one below) killed, the chain detached: restore of the image gives
 * the one losetup line that shows the bytes the test saw (offset 2 MiB),
 * and the loop device it attaches is the journal's own device: restore
 * through it puts the image back.  A chain got "set up the loop devices
 * as they were", and one loop device over the same bytes was refused as
 * another window. */
START_TEST(test_loop_chain_reattached_as_one)
{
	char *inner, *outer;
	uint64_t before;
	struct run_result r;

	require_loop();
	before = tu_checksum(loop.image);
	inner = tu_loop_attach_opts(loop.image, "--offset 1048576");
	ck_assert_ptr_nonnull(inner);
	outer = tu_loop_attach_opts(inner, "--offset 1048576");
	ck_assert_ptr_nonnull(outer);
	crash_find_fat(outer);
	ck_assert_uint_ne(tu_checksum(loop.image), before);
	tu_loop_detach(outer);
	tu_loop_detach(inner);
	free(outer);
	free(inner);
	tu_run(&r, (const char *const[]){ "restore", loop.image, NULL });
	ck_assert_msg(r.status == 3 && strstr(r.err, "losetup --find --show --offset 2097152 '"),
		      "restore of the image: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	restored_through(loop.image, "--offset 2097152", before);
}
END_TEST

/* Ctrl-C while a restore waits for another restore: it stops waiting,
 * says so, writes nothing and exits 128 + SIGINT; it said "cannot lock
 * journal: Interrupted system call" with status 1. */
START_TEST(test_restore_wait_interrupted)
{
	char *img = new_image(IMG_BYTES, 117);
	const char *const restore[] = { "restore", img, NULL };
	char journal[PATH_MAX + 300];
	uint64_t crashed;
	struct tu_child ch;
	struct run_result r;
	pid_t holder;

	crash_find_fat(img);
	ck_assert_msg(state_journal(journal, sizeof(journal)) > 0, "no pending journal");
	crashed = tu_checksum(img);
	holder = fake_restore_holding(journal, 30);
	ck_assert_int_eq(tu_spawn(&ch, restore, 0), 0);
	sleep_ms(500);
	kill(ch.pid, SIGINT);
	tu_wait(&ch, &r);
	kill(-holder, SIGKILL);
	waitpid(holder, NULL, 0);
	ck_assert_msg(r.status == 130 && strstr(r.err, "stopped waiting") &&
		      strstr(r.err, "nothing was written"), "status %d, '%s'", r.status,
		      r.err);
	tu_run_free(&r);
	ck_assert_uint_eq(tu_checksum(img), crashed);
	ck_assert_msg(journal_size() > 0, "the journal was not kept");
	free(img);
}
END_TEST

/* An image whose name holds a newline, tested with --journal elsewhere:
 * the pointer file cannot keep its name.  One line saying so (it said
 * "cannot create journal pointer: Invalid argument"), status 2, nothing
 * written, nothing left. */
START_TEST(test_device_name_with_newline)
{
	char *img = new_image(IMG_BYTES, 116), odd[PATH_MAX], jopt[PATH_MAX + 16];
	uint64_t before = tu_checksum(img);
	struct run_result r;

	in_work(odd, sizeof(odd), "card\nimage");
	ck_assert_int_eq(rename(img, odd), 0);
	snprintf(jopt, sizeof(jopt), "--journal=%s/elsewhere.journal", work);
	tu_run(&r, (const char *const[]){ "find-fat", "--write", "--yes", "-e", "1M",
					  jopt, odd, NULL });
	ck_assert_msg(r.status == 2 && tu_count_lines(r.err) == 1 &&
		      strstr(r.err, "control character"), "status %d, '%s'", r.status,
		      r.err);
	ck_assert_uint_eq(tu_checksum(odd), before);
	ck_assert_int_eq(state_entries(), 0);
	tu_run_free(&r);
	free(img);
}
END_TEST

/* A device given by a relative path: the pointer names it by its full
 * path, which the messages about a lost journal give wherever they are
 * read from; it used to keep "img.XXXX", a file of whatever directory
 * the next run started in. */
START_TEST(test_pointer_names_device_in_full)
{
	char *img = new_image(IMG_BYTES, 49), dir[PATH_MAX], jopt[PATH_MAX + 16];
	char pointer[PATH_MAX + 300], *base = strrchr(img, '/') + 1;
	const char *const args[] = { "find-fat", "--write", "-e", "1M", jopt, base, NULL };
	uint64_t before = tu_checksum(img);
	struct jr_pointer p;
	struct tu_child ch;
	struct run_result r;

	snprintf(dir, sizeof(dir), "%.*s", (int)(base - 1 - img), img);
	snprintf(jopt, sizeof(jopt), "--journal=%s/elsewhere.journal", work);
	ck_assert_int_eq(chdir(dir), 0);	/* this test's process only */
	ck_assert_int_eq(tu_spawn(&ch, args, JR_TEST_HEADER + 2 * (MIB + 80)), 0);
	ck_assert_int_eq(tu_wait(&ch, &r), SIGXFSZ);
	tu_run_free(&r);
	ck_assert_int_eq(chdir("/"), 0);
	ck_assert_msg(state_journal(pointer, sizeof(pointer)) > 0, "no pointer file");
	ck_assert_int_eq(jr_pointer_read(pointer, &p), 1);
	ck_assert_str_eq(p.device, img);
	tu_run(&r, (const char *const[]){ "restore", img, NULL });
	ck_assert_msg(r.status == 0, "restore: status %d, '%s'", r.status, r.err);
	tu_run_free(&r);
	assert_kept(img, before);
	free(img);
}
END_TEST

/* ==== item 11: signals ==== */

static const int stop_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
	SIGVTALRM, SIGPROF, SIGXCPU,
};

/* Each stopping signal during a --write test: restored, 128 + N, one
 * line about the interruption and no "Interrupted system call". */
START_TEST(test_signal_restores)
{
	int sig = stop_signals[_i];
	char *img = new_image(IMG_BYTES, 121);
	uint64_t before = tu_checksum(img);
	static const char *const extra[] = { "--write", "--offset=8M", NULL };
	struct tu_child ch;
	struct run_result r;
	int termsig;

	signal(sig, SIG_DFL);	/* as if not started under nohup */
	start_bench(&ch, extra, img, 0);
	sleep_ms(300);
	kill(ch.pid, sig);
	termsig = tu_wait(&ch, &r);
	ck_assert_msg(termsig == 0 && r.status == 128 + sig, "%s: status %d, signal %d, '%s'",
		      strsignal(sig), r.status, termsig, r.err);
	ck_assert_msg(strstr(r.err, "interrupted by signal"), "'%s'", r.err);
	ck_assert_msg(!strstr(r.err, "Interrupted system call"), "'%s'", r.err);
	assert_kept(img, before);
	tu_run_free(&r);
	free(img);
}
END_TEST

/* Under nohup SIGHUP is ignored: it stays ignored, the test finishes. */
START_TEST(test_ignored_sighup_stays_ignored)
{
	char *img = new_image(IMG_BYTES, 122);
	uint64_t before = tu_checksum(img);
	static const char *const extra[] = { "--write", "--offset=8M", NULL };
	struct tu_child ch;
	struct run_result r;
	int termsig;

	start_bench(&ch, extra, img, SIGHUP);
	sleep_ms(300);
	kill(ch.pid, SIGHUP);
	termsig = tu_wait(&ch, &r);
	ck_assert_msg(termsig == 0 && r.status == 0, "status %d, signal %d, '%s'", r.status,
		      termsig, r.err);
	ck_assert_msg(strstr(r.out, "seq_write"), "no report: '%s'", r.out);
	ck_assert_msg(tu_checksum(img) == before, "not restored");
	tu_run_free(&r);
	free(img);
}
END_TEST

/* restore keeps replaying under a hail of SIGINTs, then says so. */
START_TEST(test_restore_finishes_under_signals)
{
	char *img = new_image(IMG_BYTES, 123);
	uint64_t before = tu_checksum(img);
	const char *const crash[] = { "bench", "--write", "--offset=8M", "--size=48M",
				      "--runtime=3", "--warmup=0", "--repeat=1",
				      "--workload=seq_write", img, NULL };
	const char *const rest[] = { "restore", img, NULL };
	struct tu_child ch;
	struct run_result r;
	int termsig, sent = 0;

	/* a journal holding 48 MiB, the device partly overwritten */
	ck_assert_int_eq(tu_spawn(&ch, crash, 0), 0);
	for (int t = 0; t < 10000 && journal_size() < (long long)(48 * MIB); t += 2)
		sleep_ms(2);
	sleep_ms(300);
	kill(ch.pid, SIGKILL);
	ck_assert_int_eq(tu_wait(&ch, &r), SIGKILL);
	tu_run_free(&r);
	ck_assert_msg(journal_size() >= (long long)(48 * MIB), "journal of %lld bytes",
		      journal_size());
	ck_assert_int_eq(tu_spawn(&ch, rest, 0), 0);
	for (int t = 0; t < 5000 && !catches(ch.pid, SIGINT) && !exited(ch.pid); t += 1)
		sleep_ms(1);
	while (!exited(ch.pid)) {
		kill(ch.pid, SIGINT);
		sent++;
		sleep_ms(2);
	}
	termsig = tu_wait(&ch, &r);
	ck_assert_msg(termsig == 0, "restore died of signal %d after %d SIGINTs: '%s'", termsig,
		      sent, r.err);
	ck_assert_msg(sent > 0 && r.status == 130, "status %d after %d SIGINTs: '%s'",
		      r.status, sent, r.err);
	ck_assert_msg(strstr(r.err, "still restoring") && strstr(r.err, "finished first"),
		      "'%s'", r.err);
	assert_kept(img, before);
	tu_run_free(&r);
	free(img);
}
END_TEST

/* ==== item 12: messages ==== */

/* SIGINT while --write backs up the area: nothing was written, and the
 * message must not claim a restore. */
START_TEST(test_interrupted_backup_message)
{
	char *img = new_image(128 * MIB, 131);
	uint64_t before = tu_checksum(img);
	const char *const argv[] = { "bench", "--write", "--offset=8M", "--size=112M",
				     "--runtime=1", "--warmup=0", "--repeat=1", img, NULL };
	struct run_result r = { 0 };
	bool caught = false;

	for (int attempt = 0; attempt < 3 && !caught; attempt++) {
		struct tu_child ch;

		tu_run_free(&r);
		ck_assert_int_eq(tu_spawn(&ch, argv, 0), 0);
		ck_assert_msg(tu_child_said(&ch, "bench will write", 10000), "bench did not start");
		kill(ch.pid, SIGINT);
		tu_wait(&ch, &r);
		caught = strstr(r.err, "backup") && strstr(r.err, "interrupted;");
	}
	ck_assert_msg(caught, "the signal never came during the backup: '%s'", r.err);
	ck_assert_msg(r.status == 130, "status %d: '%s'", r.status, r.err);
	ck_assert_msg(!strstr(r.err, "the data was restored"), "'%s'", r.err);
	ck_assert_msg(strstr(r.err, "signal 2; nothing was written"), "'%s'", r.err);
	assert_kept(img, before);
	tu_run_free(&r);
	free(img);
}
END_TEST

/* The journal destroyed under a running test (emptied here; a journal
 * file system that fails or a process out of memory do the same): the
 * restore at the end fails, and its message says so, that the card may
 * still hold the test's writes and what to run, with status 1; before,
 * it gave only the journal's error.  Nothing outside the area changed. */
START_TEST(test_failed_restore_says_what_to_do)
{
	char *img = new_image(IMG_BYTES, 132), journal[PATH_MAX + 300];
	uint64_t head = tu_checksum_range(img, 0, 8 * MIB);
	uint64_t tail = tu_checksum_range(img, 24 * MIB, IMG_BYTES - 24 * MIB);
	static const char *const extra[] = { "--write", "--offset=8M", NULL };
	struct tu_child ch;
	struct run_result r;

	start_bench(&ch, extra, img, 0);
	ck_assert_msg(state_journal(journal, sizeof(journal)) >= 0, "no journal");
	ck_assert_int_eq(truncate(journal, 0), 0);
	ck_assert_int_eq(tu_wait(&ch, &r), 0);
	ck_assert_msg(r.status == 1 && strstr(r.err, "restoring the original data of") &&
		      strstr(r.err, "after the test failed") &&
		      strstr(r.err, "may still hold the test's writes") &&
		      strstr(r.err, "run 'flashprobe restore"),
		      "status %d, '%s'", r.status, r.err);
	ck_assert_msg(journal_size() >= 0, "the journal was not kept");
	ck_assert_uint_eq(tu_checksum_range(img, 0, 8 * MIB), head);
	ck_assert_uint_eq(tu_checksum_range(img, 24 * MIB, IMG_BYTES - 24 * MIB), tail);
	tu_run_free(&r);
	free(img);
}
END_TEST

static const struct message_case {
	const char *args[MAX_ARGS];
	int status;
	const char *want, *not;
} message_cases[] = {
	{ { "align", "--offset=1M", "sim:seed", NULL }, 2, "--offset", "find-fat" },
	{ { "find-fat", "--offset=1M", "sim:seed", NULL }, 2, "find-fat writes from sector 0",
	  NULL },
	{ { "list-sims", "extra", NULL }, 2, "unexpected argument 'extra'", NULL },
	{ { "restore", "/var/tmp", NULL }, 2, "journal file or a device",
	  "Block device required" },
};

START_TEST(test_messages)
{
	const struct message_case *c = &message_cases[_i];
	struct run_result r;

	tu_run(&r, c->args);
	ck_assert_msg(r.status == c->status, "case %d: status %d: '%s'", _i, r.status, r.err);
	ck_assert_msg(strstr(r.err, c->want), "case %d: '%s' lacks '%s'", _i, r.err, c->want);
	ck_assert_msg(!c->not || !strstr(r.err, c->not), "case %d: '%s'", _i, r.err);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
}
END_TEST

Suite *datasafety_suite(void)
{
	Suite *s = suite_create("datasafety");
	TCase *img = tcase_create("image");
	TCase *blk, *mnt, *full;	/* made only when added: an unadded TCase leaks */
	const char *why = bf_unavailable("");

	tcase_set_timeout(img, 300);
	tcase_add_unchecked_fixture(img, root_setup, root_teardown);
	tcase_add_checked_fixture(img, work_setup, NULL);
	tcase_add_test(img, test_second_writer_image);
	tcase_add_test(img, test_second_writer_journaled);
	tcase_add_test(img, test_restore_refused_during_test);
	tcase_add_test(img, test_sigpipe_on_notes);
	tcase_add_test(img, test_au_search_image);
	tcase_add_test(img, test_report_to_closed_pipe);
	tcase_add_test(img, test_report_to_full_device);
	tcase_add_loop_test(img, test_output_on_device, 0, NCASES(output_cases));
	tcase_add_loop_test(img, test_stream_on_device, 0, NCASES(stream_cases));
	tcase_add_test(img, test_closed_streams);
	tcase_add_test(img, test_null_device_and_stream);
	tcase_add_loop_test(img, test_signature_without_terminal, 0, NCASES(signature_cases));
	tcase_add_loop_test(img, test_question_needs_terminal_stderr, 0, 3);
	tcase_add_test(img, test_long_paths_refused);
	tcase_add_test(img, test_other_writer_image);
	if (access("/dev/fuse", R_OK | W_OK) == 0)
		tcase_add_test(img, test_fuse_server_image);
	else
		tu_skip("datasafety/images: a FUSE server writing the image", "no usable /dev/fuse");
	tcase_add_loop_test(img, test_exit_status, 0, NCASES(status_cases));
	tcase_add_test(img, test_restore_other_identity_refused);
	tcase_add_test(img, test_restore_under_file_size_limit);
	tcase_add_test(img, test_two_restores_at_once);
	tcase_add_test(img, test_restore_waits_for_restore);
	tcase_add_test(img, test_restore_wait_interrupted);
	tcase_add_test(img, test_device_name_with_newline);
	tcase_add_loop_test(img, test_moved_image_keeps_its_journal, 0, 3);
	tcase_add_test(img, test_force_keeps_newer_data);
	tcase_add_test(img, test_two_moved_images_refused);
	tcase_add_loop_test(img, test_swapped_card_image, 0, NCASES(swap_cases));
	tcase_add_test(img, test_journal_link_to_device);
	tcase_add_test(img, test_pointer_outlives_journal);
	tcase_add_loop_test(img, test_damaged_journal_start_refused, 0, 3);
	tcase_add_test(img, test_pointer_names_device_in_full);
	tcase_add_loop_test(img, test_signal_restores, 0, NCASES(stop_signals));
	tcase_add_test(img, test_ignored_sighup_stays_ignored);
	tcase_add_test(img, test_restore_finishes_under_signals);
	tcase_add_test(img, test_interrupted_backup_message);
	tcase_add_test(img, test_failed_restore_says_what_to_do);
	tcase_add_loop_test(img, test_messages, 0, NCASES(message_cases));
	suite_add_tcase(s, img);
	if (why) {
		tu_skip("datasafety/loop: lock, writer warning, output and sysfs refusal on "
			"block devices", why);
		return s;
	}
	blk = tcase_create("loop");
	tcase_set_timeout(blk, 300);
	tcase_add_unchecked_fixture(blk, loop_setup, loop_teardown);
	tcase_add_checked_fixture(blk, work_setup, NULL);
	tcase_add_test(blk, test_second_writer_loop);
	tcase_add_test(blk, test_restore_alias_during_test);
	tcase_add_loop_test(blk, test_other_writer_loop, 0, 2);
	if (access("/dev/fuse", R_OK | W_OK) == 0)
		tcase_add_test(blk, test_fuse_server_loop);
	tcase_add_loop_test(blk, test_loop_over_journal_refused, 0, 2);
	tcase_add_test(blk, test_output_on_loop);
	tcase_add_loop_test(blk, test_stream_on_loop, 0, NCASES(stream_cases));
	tcase_add_loop_test(blk, test_swapped_card_loop, 0, NCASES(swap_cases));
	tcase_add_test(blk, test_unverifiable_device_refused);
	tcase_add_test(blk, test_detached_loop_named);
	tcase_add_test(blk, test_loop_at_another_offset);
	tcase_add_test(blk, test_loop_chain_reattached_as_one);
	suite_add_tcase(s, blk);
	why = bf_unavailable("mkfs.ext4");
	if (why) {
		tu_skip("datasafety/mounted, fullfs: --svg on a mounted partition, a "
			"journal on a full file system", why);
		return s;
	}
	full = tcase_create("fullfs");
	tcase_set_timeout(full, 300);
	tcase_add_unchecked_fixture(full, tiny_setup, tiny_teardown);
	tcase_add_checked_fixture(full, work_setup, NULL);
	tcase_add_loop_test(full, test_journal_fs_full, 0, NCASES(full_cases));
	tcase_add_test(full, test_journal_fs_read_only);
	tcase_add_test(full, test_restored_journal_not_deleted);
	suite_add_tcase(s, full);
	mnt = tcase_create("mounted");
	tcase_set_timeout(mnt, 300);
	tcase_add_unchecked_fixture(mnt, mounted_setup, mounted_teardown);
	tcase_add_test(mnt, test_output_on_mounted_partition);
	suite_add_tcase(s, mnt);
	return s;
}
