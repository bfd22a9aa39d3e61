/* check_safety.c - the write-safety gate, signatures, consent, signals.
 *
 * Three kinds of tests:
 *   - plain ones (simulated cards, image files, in-memory streams);
 *   - a fake sysfs/procfs tree with private device nodes of an unused
 *     major (240, "local/experimental use"), so partition, mount, swap,
 *     holder and read-only logic is checked on a made-up eMMC without
 *     touching any real device (needs root for mknod);
 *   - real loop devices: mounted, with a mounted partition, used as swap,
 *     read-only (needs root and /dev/loop-control).
 * Scenes are built and always torn down by unchecked fixtures in the
 * parent process; a machine that cannot build them skips them loudly.
 */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "blockfix.h"
#include "dev.h"
#include "devspec.h"
#include "errmsg.h"
#include "journal.h"
#include "loopfile.h"
#include "outfile.h"
#include "safety.h"
#include "sysfs.h"
#include "sim.h"
#include "testutil.h"
#include "tests.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

static char test_dir[PATH_MAX];

static void dir_setup(void)
{
	snprintf(test_dir, sizeof(test_dir), "/var/tmp/flashprobe-safe.XXXXXX");
	if (mkdtemp(test_dir) == NULL)
		test_dir[0] = '\0';
}

static void dir_teardown(void)
{
	if (test_dir[0] != '\0')
		tu_rm_tree(test_dir);
	test_dir[0] = '\0';
}

static void in_dir(char *buf, size_t len, const char *name)
{
	ck_assert_msg(test_dir[0] != '\0', "no test directory");
	ck_assert(snprintf(buf, len, "%s/%s", test_dir, name) < (int)len);
}

static void put_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static uint64_t head_sum(const char *path)
{
	unsigned char buf[4096];
	uint64_t h = 1469598103934665603ull;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	close(fd);
	for (size_t i = 0; i < sizeof(buf); i++)
		h = (h ^ buf[i]) * 1099511628211ull;
	return h;
}

/* ---- the gate on plain targets ---- */

START_TEST(test_gate_sim_and_file)
{
	struct safety_report rep;
	char err[512], *img = bf_image_in(test_dir, MIB, 1);

	ck_assert_int_eq(safety_check_target("sim:seed", SAFETY_WRITE, &rep, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(rep.target, SAFETY_TARGET_SIM);
	ck_assert_int_eq(safety_check_target("sim:anything,bad=1", SAFETY_READ,
					     &rep, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(img);
	ck_assert_msg(safety_check_target(img, SAFETY_WRITE, &rep, err,
					  sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(rep.target, SAFETY_TARGET_FILE);
	ck_assert_str_eq(rep.warning, "");
	unlink(img);
	free(img);
}
END_TEST

static const struct bad_target {
	const char *path;
	int rc;
	const char *msg;
} bad_targets[] = {
	{ "/nonexistent/flashprobe-dev", -ENOENT,
	  "cannot open '/nonexistent/flashprobe-dev': No such file or directory" },
	{ "/", -EISDIR, "'/' is a directory" },
	{ "/dev/null", -ENOTBLK, "'/dev/null' is not a block device or regular file" },
	{ "", -EINVAL, "no device given" },
};

START_TEST(test_gate_bad_targets)
{
	const struct bad_target *t = &bad_targets[_i];
	struct safety_report rep;
	char err[512];

	for (int m = SAFETY_READ; m <= SAFETY_WRITE; m++) {
		ck_assert_int_eq(safety_check_target(t->path, m, &rep, err,
						     sizeof(err)), t->rc);
		ck_assert_str_eq(err, t->msg);
	}
}
END_TEST

/* A journal given as the device would be overwritten by the test. */
/* outfile_open() at the end of a run, on what the --svg name has become
 * by then: a new or regular file is written; a link (to the image under
 * test), an unfinished journal of another device, a fifo and a second
 * name of the image are refused, and what they name is unchanged.  The
 * run before opened the name with fopen(): a link pointed at the card
 * during the run had the chart written onto the card, and a journal put
 * there was overwritten. */
enum { OUT_NEW, OUT_REGULAR, OUT_LINK, OUT_JOURNAL, OUT_FIFO, OUT_HARDLINK, OUT_CASES };

static void make_output(int kind, const char *path, const char *image)
{
	struct fp_dev *d = NULL, *jd = NULL;
	char err[512];
	FILE *f;

	switch (kind) {
	case OUT_REGULAR:
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs("an older chart, longer than the new one\n", f);
		ck_assert_int_eq(fclose(f), 0);
		break;
	case OUT_LINK:
		ck_assert_int_eq(symlink(image, path), 0);
		break;
	case OUT_JOURNAL:
		ck_assert_int_eq(devspec_open("sim:seed,size=16M", FP_OPEN_WRITE, &d, err,
					     sizeof(err)), 0);
		ck_assert_int_eq(journal_open(d, path, &jd, err, sizeof(err)), 0);
		fp_dev_close(jd);
		fp_dev_close(d);
		break;
	case OUT_FIFO:
		ck_assert_int_eq(mkfifo(path, 0600), 0);
		break;
	case OUT_HARDLINK:
		ck_assert_int_eq(link(image, path), 0);
		break;
	}
}

START_TEST(test_output_file_opened_safely)
{
	static const char *const why[OUT_CASES] = {
		[OUT_LINK] = "symbolic link", [OUT_JOURNAL] = "flashprobe journal",
		[OUT_FIFO] = "not a regular file", [OUT_HARDLINK] = "",
	};
	char path[PATH_MAX], err[512] = "", buf[64] = "";
	char *image = tu_make_image(4 << 20, 5);
	uint64_t image_sum, sum;
	bool refused = _i >= OUT_LINK;
	FILE *f = NULL;
	int rc;

	ck_assert_ptr_nonnull(image);
	image_sum = tu_checksum(image);
	in_dir(path, sizeof(path), "chart.svg");
	unlink(path);
	make_output(_i, path, image);
	sum = _i == OUT_JOURNAL ? tu_checksum(path) : 0;
	rc = outfile_check("--svg", path, image, err, sizeof(err));
	ck_assert_msg(refused ? rc == -EINVAL && strstr(err, why[_i]) : rc == 0,
		      "case %d: check %d '%s'", _i, rc, err);
	err[0] = '\0';
	rc = outfile_open("--svg", path, image, &f, err, sizeof(err));
	if (refused) {
		ck_assert_msg(rc == -EINVAL && f == NULL && strstr(err, why[_i]),
			      "case %d: open %d '%s'", _i, rc, err);
	} else {
		ck_assert_msg(rc == 0 && f != NULL, "case %d: %s", _i, err);
		fputs("<svg/>\n", f);
		ck_assert_int_eq(fclose(f), 0);
		f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
		ck_assert_str_eq(buf, "<svg/>\n");
		ck_assert_ptr_null(fgets(buf, sizeof(buf), f));	/* emptied first */
		fclose(f);
	}
	if (refused) {	/* and on the command line, before anything is read */
		char svg[PATH_MAX + 8];
		struct run_result r;

		snprintf(svg, sizeof(svg), "--svg=%s", path);
		tu_run(&r, (const char *const[]){ "align", "-q", svg, image, NULL });
		/* a link to the image is first the device under another name */
		ck_assert_msg(r.status == 2 && r.err &&
			      strstr(r.err, _i == OUT_LINK ? "device under test" : why[_i]) &&
			      !strchr(strchr(r.err, '\n') + 1, '\n'),
			      "case %d: status %d '%s'", _i, r.status, r.err);
		tu_run_free(&r);
	}
	ck_assert_uint_eq(tu_checksum(image), image_sum);
	if (_i == OUT_JOURNAL)
		ck_assert_uint_eq(tu_checksum(path), sum);
	unlink(path);
	unlink(image);
	free(image);
}
END_TEST

START_TEST(test_gate_refuses_journal_file)
{
	struct fp_dev *d = NULL, *jd = NULL;
	struct safety_report rep;
	char path[PATH_MAX], err[512];

	ck_assert_int_eq(devspec_open("sim:seed,size=16M", FP_OPEN_WRITE, &d, err,
				     sizeof(err)), 0);
	in_dir(path, sizeof(path), "a.journal");
	ck_assert_int_eq(journal_open(d, path, &jd, err, sizeof(err)), 0);
	fp_dev_close(jd);
	ck_assert(journal_is_journal_file(path));
	ck_assert_int_eq(safety_check_target(path, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EBUSY);
	ck_assert_ptr_nonnull(strstr(err, "flashprobe journal"));
	ck_assert_int_eq(safety_check_target(path, SAFETY_READ, &rep, err,
					     sizeof(err)), 0);
	fp_dev_close(d);
}
END_TEST

/* ---- signatures ---- */

static void put16(unsigned char *b, uint16_t v)
{
	b[0] = (unsigned char)v;
	b[1] = (unsigned char)(v >> 8);
}

static void mk_mbr(unsigned char *b)
{
	b[446 + 4] = 0x83;
	b[446 + 8] = 0x00;
	b[446 + 9] = 0x08;	/* start LBA 2048 */
	b[446 + 13] = 0x10;	/* 4096 sectors */
	b[510] = 0x55;
	b[511] = 0xaa;
}

static void mk_gpt(unsigned char *b)
{
	b[446 + 4] = 0xee;	/* protective MBR */
	b[510] = 0x55;
	b[511] = 0xaa;
	memcpy(b + 512, "EFI PART", 8);
}

static void mk_fat16(unsigned char *b)
{
	memcpy(b, "\xeb\x3c\x90MSDOS5.0", 11);
	put16(b + 11, 512);
	memcpy(b + 0x36, "FAT16   ", 8);
	b[510] = 0x55;
	b[511] = 0xaa;
}

static void mk_fat32(unsigned char *b)
{
	memcpy(b, "\xeb\x58\x90mkfs.fat", 11);
	put16(b + 11, 512);
	memcpy(b + 0x52, "FAT32   ", 8);
	b[510] = 0x55;
	b[511] = 0xaa;
}

static void mk_ext4(unsigned char *b)
{
	put16(b + 1024 + 56, 0xef53);
}

static void mk_swap(unsigned char *b)
{
	memcpy(b + 4096 - 10, "SWAPSPACE2", 10);
}

static void mk_exfat(unsigned char *b)
{
	memcpy(b, "\xeb\x76\x90" "EXFAT   ", 11);
	b[510] = 0x55;
	b[511] = 0xaa;
}

static void mk_btrfs(unsigned char *b)
{
	memcpy(b + 0x10040, "_BHRfS_M", 8);
}

static void mk_luks(unsigned char *b)
{
	memcpy(b, "LUKS\xba\xbe", 6);
}

static void mk_nothing(unsigned char *b)
{
	(void)b;
}

static const struct sig_case {
	void (*make)(unsigned char *b);
	size_t size;
	const char *expect;		/* NULL: nothing found */
} sig_cases[] = {
	{ mk_nothing, MIB, NULL },
	{ mk_mbr, MIB, "MBR partition table" },
	{ mk_gpt, MIB, "GPT partition table" },
	{ mk_fat16, MIB, "FAT file system" },
	{ mk_fat32, MIB, "FAT file system" },
	{ mk_ext4, MIB, "ext2/3/4 file system" },
	{ mk_swap, MIB, "Linux swap" },
	{ mk_exfat, MIB, "exFAT file system" },
	{ mk_btrfs, MIB, "btrfs file system" },
	{ mk_luks, MIB, "LUKS encrypted volume" },
	{ mk_mbr, 1024, "MBR partition table" },	/* smaller than the probe */
	{ mk_btrfs, 64 * KIB, NULL },			/* btrfs beyond the end */
};

static int signature_of_file(const char *path, char *what, size_t len)
{
	struct fp_dev *d = NULL;
	char err[512];
	int rc;

	ck_assert_msg(fp_dev_open_path(path, FP_OPEN_READ, &d, err,
				       sizeof(err)) == 0, "%s", err);
	rc = safety_find_signature(d, what, len);
	fp_dev_close(d);
	return rc;
}

START_TEST(test_signatures)
{
	const struct sig_case *c = &sig_cases[_i];
	unsigned char *b = calloc(1, c->size > 0x10048 ? c->size : 0x10048);
	char path[PATH_MAX], what[64];
	int rc;

	ck_assert_ptr_nonnull(b);
	c->make(b);
	in_dir(path, sizeof(path), "sig.img");
	put_file(path, b, c->size);
	free(b);
	rc = signature_of_file(path, what, sizeof(what));
	if (c->expect == NULL) {
		ck_assert_msg(rc == 0, "case %d found '%s'", _i, what);
		ck_assert_str_eq(what, "");
	} else {
		ck_assert_int_eq(rc, 1);
		ck_assert_str_eq(what, c->expect);
	}
}
END_TEST

/* Random data (a used card without a partition table) is not mistaken
 * for a signature at this seed. */
START_TEST(test_signature_random)
{
	char *img = bf_image_in(test_dir, MIB, 3), what[64];

	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(signature_of_file(img, what, sizeof(what)), 0);
	unlink(img);
	free(img);
}
END_TEST

/* What the real tools write, where they are installed. */
static const struct real_sig {
	const char *tool;
	const char *cmd;
	const char *expect;
} real_sigs[] = {
	{ "mkfs.ext4", "mkfs.ext4 -q -F '%s'", "ext2/3/4 file system" },
	{ "mkswap", "mkswap -f '%s'", "Linux swap" },
	{ "mkfs.vfat", "mkfs.vfat '%s'", "FAT file system" },
	{ "mkfs.exfat", "mkfs.exfat '%s'", "exFAT file system" },
};

START_TEST(test_signature_real_tools)
{
	const struct real_sig *r = &real_sigs[_i];
	char path[PATH_MAX], what[64];
	unsigned char *zero = calloc(1, 8 * MIB);

	in_dir(path, sizeof(path), "real.img");
	ck_assert_ptr_nonnull(zero);
	put_file(path, zero, 8 * MIB);
	free(zero);
	ck_assert_int_eq(bf_sh(r->cmd, path), 0);
	ck_assert_int_eq(signature_of_file(path, what, sizeof(what)), 1);
	ck_assert_str_eq(what, r->expect);
}
END_TEST

/* ---- consent ---- */

static const struct confirm_case {
	const char *typed;
	int rc;
} confirm_cases[] = {
	{ "/dev/sdz\n", 0 },
	{ "sdz\n", 0 },
	{ "/dev/sdz\r\n", 0 },
	{ "/dev/sdz", 0 },		/* end of input without newline */
	{ "y\n", -ECANCELED },
	{ "yes\n", -ECANCELED },
	{ "\n", -ECANCELED },
	{ "", -ECANCELED },		/* end of input */
	{ "/dev/sdz1\n", -ECANCELED },
	{ "dev/sdz\n", -ECANCELED },
};

START_TEST(test_confirm)
{
	const struct confirm_case *c = &confirm_cases[_i];
	char in_buf[64], *out_buf = NULL;
	size_t out_len = 0;
	FILE *in, *out;

	snprintf(in_buf, sizeof(in_buf), "%s", c->typed);
	in = fmemopen(in_buf, strlen(in_buf) > 0 ? strlen(in_buf) : 1, "r");
	if (c->typed[0] == '\0')
		fgetc(in);	/* an empty stream: fmemopen needs one byte */
	out = open_memstream(&out_buf, &out_len);
	ck_assert(in != NULL && out != NULL);
	ck_assert_int_eq(safety_confirm("/dev/sdz", in, out), c->rc);
	fclose(in);
	fclose(out);
	ck_assert_msg(strstr(out_buf, "'/dev/sdz'") != NULL, "prompt: %s",
		      out_buf);
	free(out_buf);
}
END_TEST

/* ---- signals ---- */

/* Run fn with stderr going to a file; returns what was written. */
static char *capture_stderr(void (*fn)(void))
{
	char path[PATH_MAX], *text = malloc(4096);
	int saved = dup(STDERR_FILENO), fd;
	ssize_t n;

	in_dir(path, sizeof(path), "stderr.txt");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert(fd >= 0 && saved >= 0 && text != NULL);
	dup2(fd, STDERR_FILENO);
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, text, 4095, 0);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	return text;
}

static void raise_term_then_int(void)
{
	raise(SIGTERM);
	raise(SIGINT);
}

static void raise_during_restore(void)
{
	safety_restore_begin("/dev/sdz", 64 * MIB);
	safety_restore_progress(16 * MIB, 2000000000ull);
	raise(SIGINT);
	raise(SIGINT);
	safety_restore_end();
}

START_TEST(test_signals)
{
	char *text;

	ck_assert_int_eq(safety_exit_status(SIGINT), 130);
	ck_assert_int_eq(safety_exit_status(SIGTERM), 143);
	ck_assert_int_eq(safety_exit_status(SIGHUP), 129);
	ck_assert_int_eq(safety_signals_install(), 0);
	ck_assert_int_eq(safety_interrupted(), 0);
	text = capture_stderr(raise_term_then_int);
	/* The first signal counts; the process is still alive. */
	ck_assert_int_eq(safety_interrupted(), SIGTERM);
	ck_assert_str_eq(text, "flashprobe: interrupted; stopping at the next "
			 "I/O\n");
	free(text);
	safety_interrupt_clear();
	text = capture_stderr(raise_during_restore);
	ck_assert_str_eq(text,
			 "flashprobe: still restoring the original data of "
			 "'/dev/sdz': 16 of 64 MiB done, about 6 s left; "
			 "stopping now would lose data, please wait\n"
			 "flashprobe: still restoring the original data of "
			 "'/dev/sdz': 16 of 64 MiB done, about 6 s left; "
			 "stopping now would lose data, please wait\n");
	free(text);
	raise(SIGHUP);
	ck_assert_int_eq(safety_interrupted(), SIGINT);	/* from the restore */
	safety_interrupt_clear();
	safety_signals_uninstall();
	ck_assert_int_eq(safety_interrupted(), 0);
}
END_TEST

/* The callback form: the first call names the device and the total. */
static void raise_during_noted_restore(void)
{
	safety_restore_note("/dev/sdy", 0, 32 * MIB);
	safety_restore_note("/dev/sdy", 8 * MIB, 32 * MIB);
	raise(SIGTERM);
	safety_restore_end();
}

/* Ignored at start (nohup) stays ignored; SIGQUIT is caught; SIGPIPE is
 * ignored while installed and put back afterwards.  SIGQUIT starts at its
 * default: a shell without job control starts background jobs with it
 * ignored, and that must stay ignored too. */
START_TEST(test_signal_dispositions)
{
	struct sigaction now;
	char *text;

	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	ck_assert_int_eq(safety_signals_install(), 0);
	sigaction(SIGHUP, NULL, &now);
	ck_assert(now.sa_handler == SIG_IGN);
	sigaction(SIGPIPE, NULL, &now);
	ck_assert(now.sa_handler == SIG_IGN);
	/* a file size limit: a line, then death as before; a restore
	 * ignores it (the write fails instead) */
	sigaction(SIGXFSZ, NULL, &now);
	ck_assert(now.sa_handler != SIG_IGN && now.sa_handler != SIG_DFL);
	ck_assert(now.sa_flags & SA_RESETHAND);
	safety_restore_start();
	sigaction(SIGXFSZ, NULL, &now);
	ck_assert(now.sa_handler == SIG_IGN);
	/* the data is back: the report after it fails as a write would */
	safety_restore_end();
	sigaction(SIGXFSZ, NULL, &now);
	ck_assert(now.sa_handler == SIG_IGN);
	raise(SIGHUP);
	ck_assert_int_eq(safety_interrupted(), 0);
	raise(SIGQUIT);
	ck_assert_int_eq(safety_interrupted(), SIGQUIT);
	ck_assert_int_eq(safety_exit_status(SIGQUIT), 131);
	safety_interrupt_clear();
	text = capture_stderr(raise_during_noted_restore);
	ck_assert_msg(strstr(text, "still restoring the original data of '/dev/sdy': "
			     "8 of 32 MiB done") != NULL, "%s", text);
	free(text);
	safety_interrupt_clear();
	safety_signals_uninstall();
	sigaction(SIGPIPE, NULL, &now);
	ck_assert(now.sa_handler == SIG_DFL);
	sigaction(SIGXFSZ, NULL, &now);
	ck_assert(now.sa_handler == SIG_DFL);
	sigaction(SIGHUP, NULL, &now);
	ck_assert(now.sa_handler == SIG_IGN);
	signal(SIGHUP, SIG_DFL);
}
END_TEST

START_TEST(test_interruptible_wrapper)
{
	struct fp_dev *d = NULL, *w = NULL;
	unsigned char *buf = fp_dev_alloc_buf(4096);
	uint64_t ns = 0;
	char err[256];

	ck_assert_int_eq(devspec_open("sim:seed,size=16M", FP_OPEN_WRITE, &d, err,
				     sizeof(err)), 0);
	ck_assert_int_eq(safety_wrap_interruptible(d, &w), 0);
	ck_assert_uint_eq(fp_dev_size_bytes(w), fp_dev_size_bytes(d));
	ck_assert_str_eq(fp_dev_path(w), fp_dev_path(d));
	ck_assert_int_eq(fp_dev_set_write_area(w, 0, MIB), 0);
	ck_assert_int_eq(fp_dev_read_timed(w, buf, 4096, 0, &ns), 0);
	ck_assert_uint_gt(ns, 0);	/* the simulator's clock shows through */
	ck_assert_int_eq(fp_dev_write_timed(w, buf, 4096, 0, NULL), 0);
	ck_assert_int_eq(safety_signals_install(), 0);
	raise(SIGINT);
	ck_assert_int_eq(fp_dev_read_timed(w, buf, 4096, 0, NULL), -EINTR);
	ck_assert_int_eq(fp_dev_write_timed(w, buf, 4096, 0, NULL), -EINTR);
	safety_interrupt_clear();
	safety_signals_uninstall();
	ck_assert_int_eq(fp_dev_read_timed(w, buf, 4096, 0, NULL), 0);
	fp_dev_close(w);
	fp_dev_close(d);
	free(buf);
}
END_TEST

/* The name sysfs gives for a loop device's file, read where the kernel
 * cannot be asked (no node in /dev for this made-up disk): the name as
 * it is (a trailing space kept), without d_path()'s " (deleted)" mark
 * when only the name without it leads to a file, and no answer
 * (-ESTALE) when no name leads to one.  With a node, the kernel's
 * identity decides; e2e/renamed-image tests that on loop devices. */
static const struct loopname_case {
	const char *file;	/* made in test_dir, or NULL */
	const char *sysfs;	/* loop/backing_file below test_dir, or NULL */
	int rc;
	const char *named;	/* the path that counts, below test_dir */
} loopname_cases[] = {
	{ "img", "img", 1, "img" },
	{ "img", "img (deleted)", 1, "img" },
	{ "img ", "img ", 1, "img " },
	{ "img (deleted)", "img (deleted)", 1, "img (deleted)" },
	{ NULL, "img (deleted)", -ESTALE, NULL },
	{ "img", NULL, 0, NULL },
};

START_TEST(test_loopfile_names)
{
	const struct loopname_case *c = &loopname_cases[_i];
	char disk[PATH_MAX + 32], path[PATH_MAX * 2], want[PATH_MAX * 2];
	struct loopfile f;
	struct stat st;
	FILE *fp;

	ck_assert(test_dir[0] != '\0');
	snprintf(disk, sizeof(disk), "%s/fakeloop%d", test_dir, _i);
	ck_assert_int_eq(mkdir(disk, 0755), 0);
	snprintf(path, sizeof(path), "%s/loop", disk);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/dev", disk);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "240:%d\n", 40 + _i);	/* experimental major: no node */
	fclose(fp);
	if (c->file) {
		snprintf(path, sizeof(path), "%s/%d-%s", test_dir, _i, c->file);
		fp = fopen(path, "w");
		ck_assert_ptr_nonnull(fp);
		fclose(fp);
	}
	if (c->sysfs) {
		snprintf(path, sizeof(path), "%s/loop/backing_file", disk);
		fp = fopen(path, "w");
		ck_assert_ptr_nonnull(fp);
		fprintf(fp, "%s/%d-%s\n", test_dir, _i, c->sysfs);
		fclose(fp);
	}
	ck_assert_int_eq(loopfile_backing(disk, &f), c->rc);
	if (c->named == NULL)
		return;
	snprintf(want, sizeof(want), "%s/%d-%s", test_dir, _i, c->named);
	ck_assert(f.named);
	ck_assert_str_eq(f.path, want);
	ck_assert_int_eq(stat(want, &st), 0);
	ck_assert(f.dev == st.st_dev && f.ino == st.st_ino && f.rdev == 0);
}
END_TEST

/* A loop device's journal serial: the key (file identity and window) is
 * what names the device, the name after it is for people; an older
 * journal's serial (the file's name) names no node. */
START_TEST(test_loop_serial_parts)
{
	struct stat st;

	ck_assert_int_eq(loopfile_serial_node("loop:ino=2049:131073 (/a b.img)", &st), 1);
	ck_assert(S_ISREG(st.st_mode) && st.st_dev == 2049 && st.st_ino == 131073);
	ck_assert_int_eq(loopfile_serial_node("loop+1048576+0:blk=8:16", &st), 1);
	ck_assert(S_ISBLK(st.st_mode) && st.st_rdev == makedev(8, 16));
	ck_assert_int_eq(loopfile_serial_node("loop:/var/tmp/card.img", &st), 0);
	ck_assert_int_eq(loopfile_serial_node("0xf1086bc0", &st), 0);
	ck_assert_uint_eq(loopfile_serial_key_len("loop:ino=1:2 (/x y)"), 12);
	ck_assert_uint_eq(loopfile_serial_key_len("loop:ino=1:2"), 12);
	ck_assert_uint_eq(loopfile_serial_key_len("SD 1234"), 7);
}
END_TEST

/* The windows of a chain compose into one window of the file: a limit
 * counts from the offsets above it; a chain is the same device as one
 * loop device over the same bytes of the same file, whatever the names
 * for people, and another window of that file is not. */
START_TEST(test_loop_serial_windows)
{
	static const struct {
		const char *serial;
		bool ok;
		uint64_t offset, limit;
		const char *losetup;
	} c[] = {
		{ "loop:ino=1:2 (/a)", true, 0, 0, "" },
		{ "loop+1048576+0:ino=1:2", true, 1048576, 0, " --offset 1048576" },
		{ "loop+1048576+0+2097152+67108864:ino=1:2", true, 3145728, 66060288,
		  " --offset 3145728 --sizelimit 66060288" },
		{ "loop+4096+8192+1048576+0:blk=8:16", true, 1052672, 8192,
		  " --offset 1052672 --sizelimit 8192" },
		{ "loop+0+100+50+120:ino=1:2", true, 50, 100, " --offset 50 --sizelimit 100" },
		{ "loop+200+0+0+100:ino=1:2", false, 0, 0, NULL },	/* empty */
		{ "loop+part?+?:ino=1:2", false, 0, 0, NULL },
		{ "loop+1+:ino=1:2", false, 0, 0, NULL },
		{ "SD 1234", false, 0, 0, NULL },
	};
	char opts[96];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t off = 7, lim = 7;

		ck_assert_msg(loopfile_serial_window(c[i].serial, &off, &lim) == c[i].ok,
			      "%s", c[i].serial);
		ck_assert_msg(!c[i].ok || (off == c[i].offset && lim == c[i].limit),
			      "%s: %" PRIu64 " %" PRIu64, c[i].serial, off, lim);
		ck_assert_int_eq(loopfile_serial_losetup_opts(c[i].serial, opts,
							      sizeof(opts)),
				 c[i].losetup != NULL);
		ck_assert_str_eq(opts, c[i].losetup ? c[i].losetup : "");
	}
	ck_assert(loopfile_serials_same("loop+1048576+0+2097152+67108864:ino=1:2 (/a)",
					"loop+3145728+66060288:ino=1:2 (/b)"));
	ck_assert(!loopfile_serials_other_window("loop+1048576+0+2097152+0:ino=1:2",
						 "loop+3145728+0:ino=1:2"));
	ck_assert(!loopfile_serials_same("loop+1048576+0:ino=1:2", "loop+2097152+0:ino=1:2"));
	ck_assert(loopfile_serials_other_window("loop+1048576+0:ino=1:2",
						"loop+2097152+0:ino=1:2"));
	ck_assert(!loopfile_serials_same("loop+1048576+0:ino=1:2", "loop+1048576+0:ino=1:3"));
	ck_assert(!loopfile_serials_other_window("loop+1048576+0:ino=1:2",
						 "loop+2097152+0:ino=1:3"));
	ck_assert(loopfile_serials_same("SD 1234 (x)", "SD 1234 (x)"));
	ck_assert(!loopfile_serials_same("SD 1234", "loop:ino=1:2"));
}
END_TEST

/* ---- a made-up eMMC in a fake sysfs ---- */

#define FAKE_MAJOR 240u		/* "local/experimental use": never real */

static char fake[PATH_MAX];	/* root of the fake tree, "" if not built */
static char fake_sys[PATH_MAX + 8], fake_proc[PATH_MAX + 8];
static const struct sysfs_roots fake_roots = { fake_sys, fake_proc };

static bool fake_mkdir(const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", fake, rel);
	return mkdir(path, 0755) == 0;
}

/* The directories rels, parents first. */
static bool fake_mkdirs(const char *const *rels, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fake_mkdir(rels[i]))
			return false;
	return true;
}

static bool fake_text(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fake, rel);
	f = fopen(path, "w");
	if (f == NULL)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

static bool fake_link(unsigned minor, const char *rel)
{
	char path[PATH_MAX * 2], target[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u", fake, FAKE_MAJOR,
		 minor);
	snprintf(target, sizeof(target), "%s/%s", fake, rel);
	return symlink(target, path) == 0;
}

static bool fake_node(const char *name, unsigned minor)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/dev/%s", fake, name);
	return mknod(path, S_IFBLK | 0600, makedev(FAKE_MAJOR, minor)) == 0;
}

#define DISK "sys/devices/platform/mmc9/block/mmcblk9"

static bool fake_build(void)
{
	static const char *const dirs[] = {
		"sys", "sys/devices", "sys/devices/platform",
		"sys/devices/platform/mmc9", "sys/devices/platform/mmc9/block",
		DISK, DISK "/holders", DISK "/device",
		DISK "/mmcblk9p1", DISK "/mmcblk9p1/holders",
		DISK "/mmcblk9p2", DISK "/mmcblk9p2/holders",
		"sys/dev", "sys/dev/block", "sys/class", "sys/class/block",
		"proc", "proc/self", "dev",
	};

	if (!fake_mkdirs(dirs, sizeof(dirs) / sizeof(dirs[0])))
		return false;
	return fake_text(DISK "/dev", "240:0\n") &&
	       fake_text(DISK "/ro", "0\n") &&
	       fake_text(DISK "/device/cid", "1b534d4542304d5310cafe0a5e00c001\n") &&
	       fake_text(DISK "/mmcblk9p1/dev", "240:1\n") &&
	       fake_text(DISK "/mmcblk9p1/partition", "1\n") &&
	       fake_text(DISK "/mmcblk9p2/dev", "240:2\n") &&
	       fake_text(DISK "/mmcblk9p2/partition", "2\n") &&
	       fake_link(0, DISK) && fake_link(1, DISK "/mmcblk9p1") &&
	       fake_link(2, DISK "/mmcblk9p2") &&
	       fake_node("mmcblk9", 0) && fake_node("mmcblk9p1", 1) &&
	       fake_node("mmcblk9p2", 2) && fake_node("orphan", 9);
}

/* Two made-up loop devices: fakeloop1 (240:11) shows 1 MiB on of
 * partition 1 of fakeloop2 (240:13: 1 MiB on, 32 MiB long), and fakeloop2
 * (240:12) shows 4 KiB on, 64 MiB long, of the file "image". */
#define FAKE_LOOPS "sys/devices/virtual/block"
static bool fake_loops(void)
{
	static const char *const dirs[] = {
		"sys/devices/virtual", FAKE_LOOPS,
		FAKE_LOOPS "/fakeloop1", FAKE_LOOPS "/fakeloop1/loop",
		FAKE_LOOPS "/fakeloop2", FAKE_LOOPS "/fakeloop2/loop",
		FAKE_LOOPS "/fakeloop2/fakeloop2p1",
	};
	static const char *const attrs[][2] = {
		{ "image", "not empty\n" },
		{ FAKE_LOOPS "/fakeloop1/dev", "240:11\n" },
		{ FAKE_LOOPS "/fakeloop1/loop/offset", "1048576\n" },
		{ FAKE_LOOPS "/fakeloop1/loop/sizelimit", "0\n" },
		{ FAKE_LOOPS "/fakeloop2/dev", "240:12\n" },
		{ FAKE_LOOPS "/fakeloop2/loop/offset", "4096\n" },
		{ FAKE_LOOPS "/fakeloop2/loop/sizelimit", "67108864\n" },
		{ FAKE_LOOPS "/fakeloop2/fakeloop2p1/dev", "240:13\n" },
		{ FAKE_LOOPS "/fakeloop2/fakeloop2p1/partition", "1\n" },
		{ FAKE_LOOPS "/fakeloop2/fakeloop2p1/start", "2048\n" },
		{ FAKE_LOOPS "/fakeloop2/fakeloop2p1/size", "65536\n" },
	};
	char backing[PATH_MAX * 2 + 32];

	if (!fake_mkdirs(dirs, sizeof(dirs) / sizeof(dirs[0])))
		return false;
	snprintf(backing, sizeof(backing), "%s/dev/fakeloop2p1\n", fake);
	if (!fake_text(FAKE_LOOPS "/fakeloop1/loop/backing_file", backing))
		return false;
	snprintf(backing, sizeof(backing), "%s/image\n", fake);
	if (!fake_text(FAKE_LOOPS "/fakeloop2/loop/backing_file", backing))
		return false;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (!fake_text(attrs[i][0], attrs[i][1]))
			return false;
	return fake_link(11, FAKE_LOOPS "/fakeloop1") &&
	       fake_link(12, FAKE_LOOPS "/fakeloop2") &&
	       fake_link(13, FAKE_LOOPS "/fakeloop2/fakeloop2p1") &&
	       fake_node("fakeloop2p1", 13);
}

static void fake_setup(void)
{
	snprintf(fake, sizeof(fake), "/var/tmp/flashprobe-fakesys.XXXXXX");
	if (mkdtemp(fake) == NULL) {
		fake[0] = '\0';
		return;
	}
	snprintf(fake_sys, sizeof(fake_sys), "%s/sys", fake);
	snprintf(fake_proc, sizeof(fake_proc), "%s/proc", fake);
	if (!fake_build() || !fake_loops()) {
		tu_rm_tree(fake);
		fake[0] = '\0';
	}
}

static void fake_teardown(void)
{
	if (fake[0] != '\0')
		tu_rm_tree(fake);
	fake[0] = '\0';
}

/* The serial of a loop chain over the fake "image" at window
 * ("+OFFSET+SIZE"). */
static void fake_image_serial(const char *window, char *want, size_t len)
{
	char image[PATH_MAX + 16];
	struct stat st;

	snprintf(image, sizeof(image), "%s/image", fake);
	ck_assert_int_eq(stat(image, &st), 0);
	snprintf(want, len, "loop%s:ino=%llu:%llu (%s)", window,
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, image);
}

/* The serial of fakeloop1 composes its chain: 1 MiB, then the partition
 * at 1 MiB (32 MiB long: 31 MiB left below the first offset), then 4 KiB
 * of the file (64 MiB long); a partition whose start sysfs does not give
 * leaves the list as it is, which matches no other. */
START_TEST(test_fake_loop_chain_serial)
{
	char serial[512], want[PATH_MAX * 2 + 128], start[PATH_MAX * 2 + 64];

	ck_assert_msg(fake[0] != '\0', "no fake tree");
	fake_image_serial("+2101248+32505856", want, sizeof(want));
	ck_assert_int_eq(loopfile_serial(fake_sys, FAKE_MAJOR, 11, serial, sizeof(serial)),
			 1);
	ck_assert_str_eq(serial, want);
	snprintf(start, sizeof(start), "%s/" FAKE_LOOPS "/fakeloop2/fakeloop2p1/start", fake);
	ck_assert_int_eq(unlink(start), 0);
	ck_assert_int_eq(loopfile_serial(fake_sys, FAKE_MAJOR, 11, serial, sizeof(serial)),
			 1);
	ck_assert_msg(strncmp(serial, "loop+1048576+0+part?+?+4096+67108864:ino=", 41) == 0,
		      "%s", serial);
	ck_assert(!loopfile_serials_same(serial, want));
	ck_assert(fake_text(FAKE_LOOPS "/fakeloop2/fakeloop2p1/start", "2048\n"));
}
END_TEST

/* One more made-up loop device, fakeloopMINOR, over the node of
 * another (below fake/dev) at a window of large numbers. */
static bool fake_loop_over(unsigned minor, const char *below)
{
	char dir[64], rel[128], text[PATH_MAX * 2 + 32];

	snprintf(dir, sizeof(dir), FAKE_LOOPS "/fakeloop%u", minor);
	snprintf(rel, sizeof(rel), "%s/loop", dir);
	if (!fake_mkdir(dir) || !fake_mkdir(rel))
		return false;
	snprintf(rel, sizeof(rel), "%s/dev", dir);
	snprintf(text, sizeof(text), "%u:%u\n", FAKE_MAJOR, minor);
	if (!fake_text(rel, text))
		return false;
	snprintf(rel, sizeof(rel), "%s/loop/backing_file", dir);
	snprintf(text, sizeof(text), "%s/dev/%s\n", fake, below);
	if (!fake_text(rel, text))
		return false;
	snprintf(rel, sizeof(rel), "%s/loop/offset", dir);
	if (!fake_text(rel, "1000000000000\n"))
		return false;
	snprintf(rel, sizeof(rel), "%s/loop/sizelimit", dir);
	return fake_text(rel, "100000000000000\n") && fake_link(minor, dir);
}

/* A chain whose windows do not fit a journal's record: composed into
 * one while every window is known (however long the chain), refused
 * (-ENAMETOOLONG: a journal could not tell it from another chain) once
 * a partition's window is not, rather than cut short. */
START_TEST(test_fake_loop_chain_too_long)
{
	char serial[512], want[PATH_MAX * 2 + 128], below[16];

	ck_assert_msg(fake[0] != '\0', "no fake tree");
	/* a partition and a file large enough for five windows of 1e12 on */
	ck_assert(fake_text(FAKE_LOOPS "/fakeloop2/fakeloop2p1/size", "1099511627776\n"));
	ck_assert(fake_text(FAKE_LOOPS "/fakeloop2/loop/sizelimit", "0\n"));
	ck_assert(fake_node("fakeloop1", 11));
	for (unsigned minor = 14; minor <= 18; minor++) {
		snprintf(below, sizeof(below), "fakeloop%u", minor == 14 ? 1 : minor - 1);
		ck_assert(fake_loop_over(minor, below));
		snprintf(below, sizeof(below), "fakeloop%u", minor);
		ck_assert(fake_node(below, minor));
	}
	fake_image_serial("+5000002101248+96000000000000", want, sizeof(want));
	ck_assert_int_eq(loopfile_serial(fake_sys, FAKE_MAJOR, 18, serial, sizeof(serial)),
			 1);
	ck_assert_str_eq(serial, want);
	ck_assert(fake_text(FAKE_LOOPS "/fakeloop2/fakeloop2p1/start", "x\n"));
	ck_assert_int_eq(loopfile_serial(fake_sys, FAKE_MAJOR, 18, serial, sizeof(serial)),
			 -ENAMETOOLONG);
	ck_assert_int_eq(loopfile_serial(fake_sys, FAKE_MAJOR, 11, serial, sizeof(serial)),
			 1);	/* the short chain still fits */
	ck_assert(fake_text(FAKE_LOOPS "/fakeloop2/fakeloop2p1/start", "2048\n"));
	ck_assert(fake_text(FAKE_LOOPS "/fakeloop2/fakeloop2p1/size", "65536\n"));
	ck_assert(fake_text(FAKE_LOOPS "/fakeloop2/loop/sizelimit", "67108864\n"));
}
END_TEST

/* One situation of the fake card.  "@" in mountinfo and swaps stands for
 * the fake root. */
static const struct fake_case {
	const char *target;		/* node below fake/dev */
	enum safety_mode mode;
	const char *mountinfo;
	const char *swaps;
	bool held;			/* p2 held by dm-7 */
	bool ro;			/* the disk is read-only */
	int rc;
	const char *msg;		/* substring of err, or of the warning */
} fake_cases[] = {
	{ "mmcblk9", SAFETY_WRITE, "", "", false, false, 0, NULL },
	{ "mmcblk9", SAFETY_WRITE,
	  "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n", "", false,
	  false, 0, NULL },
	{ "mmcblk9p1", SAFETY_WRITE, "", "", false, false, -EXDEV,
	  "is a partition; run write tests on the whole disk '/dev/mmcblk9'" },
	{ "mmcblk9p1", SAFETY_READ, "", "", false, false, 0,
	  "not to the erase blocks of '/dev/mmcblk9'" },
	{ "mmcblk9", SAFETY_WRITE,
	  "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
	  "36 22 240:2 / /media/card rw,relatime shared:5 - vfat "
	  "/dev/mmcblk9p2 rw\n", "", false, false, -EBUSY,
	  "'/dev/mmcblk9p2' is mounted on '/media/card'" },
	/* btrfs shows an anonymous device number; its source is real */
	{ "mmcblk9", SAFETY_WRITE,
	  "40 22 0:55 / /mnt/my\\040card rw - btrfs @/dev/mmcblk9p1 rw\n", "",
	  false, false, -EBUSY, "'/dev/mmcblk9p1' is mounted on '/mnt/my card'" },
	{ "mmcblk9", SAFETY_WRITE, "",
	  "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	  "@/dev/mmcblk9p1                   partition\t1048572\t\t0\t\t-2\n",
	  false, false, -EBUSY, "'/dev/mmcblk9p1' is used as swap" },
	{ "mmcblk9", SAFETY_WRITE, "", "", true, false, -EBUSY,
	  "'/dev/mmcblk9p2' is held by '/dev/dm-7'" },
	{ "mmcblk9", SAFETY_WRITE, "", "", false, true, -EROFS, "read-only" },
	{ "mmcblk9", SAFETY_READ,
	  "36 22 240:2 / /media/card rw - vfat /dev/mmcblk9p2 rw\n", "", true,
	  true, 0, NULL },
	/* no sysfs entry: nothing can say what else is on the disk */
	{ "orphan", SAFETY_WRITE, "", "", false, false, -FP_EREFUSED,
	  "cannot check whether" },
	{ "orphan", SAFETY_READ, "", "", false, false, 0, NULL },
};

/* Expand "@" into the fake root. */
static void fake_expand(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (; *in != '\0' && n + 1 < len; in++) {
		if (*in == '@')
			n += (size_t)snprintf(out + n, len - n, "%s", fake);
		else
			out[n++] = *in;
	}
	out[n < len ? n : len - 1] = '\0';
}

static void fake_apply(const struct fake_case *c)
{
	char text[4096], holder[PATH_MAX * 2];

	fake_expand(c->mountinfo, text, sizeof(text));
	ck_assert(fake_text("proc/self/mountinfo", text));
	fake_expand(c->swaps, text, sizeof(text));
	ck_assert(fake_text("proc/swaps", text[0] ? text :
			    "Filename\tType\tSize\tUsed\tPriority\n"));
	ck_assert(fake_text(DISK "/ro", c->ro ? "1\n" : "0\n"));
	snprintf(holder, sizeof(holder), "%s/" DISK "/mmcblk9p2/holders/dm-7",
		 fake);
	if (c->held)
		ck_assert(mkdir(holder, 0755) == 0 || errno == EEXIST);
	else
		rmdir(holder);
}

START_TEST(test_fake_card)
{
	const struct fake_case *c = &fake_cases[_i];
	char node[PATH_MAX + 16], err[512] = "";
	struct safety_report rep;
	int rc;

	ck_assert_msg(fake[0] != '\0', "fake tree not built");
	fake_apply(c);
	snprintf(node, sizeof(node), "%s/dev/%s", fake, c->target);
	rc = safety_check_target_at(&fake_roots, node, c->mode, &rep, err,
				    sizeof(err));
	ck_assert_msg(rc == c->rc, "case %d: rc %d, want %d: %s", _i, rc, c->rc,
		      err);
	if (c->msg != NULL)
		ck_assert_msg(strstr(rc ? err : rep.warning, c->msg) != NULL,
			      "case %d: '%s' lacks '%s'", _i,
			      rc ? err : rep.warning, c->msg);
	if (rc == 0 && strcmp(c->target, "orphan") != 0)
		ck_assert_str_eq(rep.disk, "/dev/mmcblk9");
	if (rc != 0)
		ck_assert(err[0] != '\0');
}
END_TEST

/* The read test still reports what it saw. */
START_TEST(test_fake_card_report)
{
	const struct fake_case *c = &fake_cases[9];
	char node[PATH_MAX + 16], err[512] = "", cid[128];
	struct safety_report rep;

	ck_assert_msg(fake[0] != '\0', "fake tree not built");
	fake_apply(c);
	snprintf(node, sizeof(node), "%s/dev/mmcblk9", fake);
	ck_assert_int_eq(safety_check_target_at(&fake_roots, node, SAFETY_READ,
						&rep, err, sizeof(err)), 0);
	ck_assert(rep.mounted && rep.held && rep.readonly && !rep.swap);
	ck_assert_int_eq(rep.target, SAFETY_TARGET_DISK);
	ck_assert_uint_eq(rep.major, FAKE_MAJOR);
	ck_assert_uint_eq(rep.minor, 0);
	/* The journal's helpers see the same disk. */
	ck_assert_int_eq(safety_dev_on_disk_at(&fake_roots, node, FAKE_MAJOR, 2), 1);
	ck_assert_int_eq(safety_dev_on_disk_at(&fake_roots, node, FAKE_MAJOR, 0), 1);
	ck_assert_int_eq(safety_dev_on_disk_at(&fake_roots, node, 8, 1), 0);
	snprintf(node, sizeof(node), "%s/dev/mmcblk9p1", fake);
	ck_assert_int_eq(safety_dev_on_disk_at(&fake_roots, node, FAKE_MAJOR, 2), 1);
	ck_assert_int_eq(sysfs_device_serial(fake_sys, node, cid,
						 sizeof(cid)), 0);
	ck_assert_str_eq(cid, "1b534d4542304d5310cafe0a5e00c001");
	/* the real roots know nothing of the fake tree's nodes' disk */
	ck_assert_int_eq(safety_dev_on_disk(node, FAKE_MAJOR, 2) == 1, 0);
}
END_TEST

/* ---- real loop devices ---- */

static struct bf_scene scene;

static void scene_teardown(void)
{
	bf_cleanup(&scene);
}

static void plain_setup(void)
{
	if (bf_image(&scene, 16u * MIB, false))
		bf_attach(&scene, "");
}

static void mounted_setup(void)
{
	if (bf_image(&scene, 64u * MIB, false) && bf_attach(&scene, "") &&
	    bf_mkfs(&scene, scene.dev))
		bf_mount(&scene, scene.dev, "ro,noload");
}

static void partition_setup(void)
{
	if (bf_image(&scene, 64u * MIB, true) && bf_attach(&scene, "-P") &&
	    bf_mkfs(&scene, scene.part))
		bf_mount(&scene, scene.part, "ro,noload");
}

static void swap_setup(void)
{
	if (bf_image(&scene, 16u * MIB, false) && bf_attach(&scene, ""))
		bf_swapon(&scene, scene.dev);
}

static void swapfile_setup(void)
{
	if (bf_image(&scene, 16u * MIB, false))
		bf_swapon(&scene, scene.image);
}

static void readonly_setup(void)
{
	if (bf_image(&scene, 16u * MIB, false))
		bf_attach(&scene, "-r");
}

static void require_scene(bool ok)
{
	ck_assert_msg(ok, "setup failed: %s", scene.why);
}

START_TEST(test_loop_clean_disk)
{
	struct safety_report rep;
	char err[512] = "";

	require_scene(scene.dev != NULL);
	ck_assert_msg(safety_check_target(scene.dev, SAFETY_WRITE, &rep, err,
					  sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(rep.target, SAFETY_TARGET_DISK);
	ck_assert_str_eq(rep.disk, scene.dev);
	ck_assert(!rep.mounted && !rep.swap && !rep.held && !rep.readonly);
	/* The image behind it must not be written around the loop device. */
	ck_assert_int_eq(safety_check_target(scene.image, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EBUSY);
	ck_assert_msg(strstr(err, "attached to loop device") &&
		      strstr(err, scene.dev), "%s", err);
	ck_assert_int_eq(safety_check_target(scene.image, SAFETY_READ, &rep, err,
					     sizeof(err)), 0);
}
END_TEST

START_TEST(test_loop_mounted)
{
	char alias[PATH_MAX + 8], err[512] = "";
	struct safety_report rep;
	struct fp_dev *d = NULL;
	struct stat st;
	uint64_t before;

	require_scene(scene.mounted[0] != '\0');
	before = tu_checksum(scene.dev);
	ck_assert_int_eq(safety_check_target(scene.dev, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EBUSY);
	ck_assert(rep.mounted);
	ck_assert_str_eq(rep.busy, scene.dev);
	ck_assert_msg(strstr(err, "is mounted on") && strstr(err, scene.mnt),
		      "%s", err);
	/* Under another name: found by device number, not by name. */
	snprintf(alias, sizeof(alias), "%s.alias", scene.image);
	ck_assert_int_eq(stat(scene.dev, &st), 0);
	ck_assert_int_eq(mknod(alias, S_IFBLK | 0600, st.st_rdev), 0);
	ck_assert_int_eq(safety_check_target(alias, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EBUSY);
	unlink(alias);
	ck_assert_int_eq(safety_check_target(scene.dev, SAFETY_READ, &rep, err,
					     sizeof(err)), 0);
	ck_assert(rep.mounted);
	/* The second line of defence: the kernel refuses O_EXCL, a safety
	 * refusal that says so. */
	ck_assert_int_eq(devspec_open(scene.dev, FP_OPEN_WRITE, &d, err,
				     sizeof(err)), -FP_EREFUSED);
	ck_assert_msg(strstr(err, "held exclusively") != NULL, "%s", err);
	ck_assert_uint_eq(tu_checksum(scene.dev), before);
}
END_TEST

START_TEST(test_loop_mounted_partition)
{
	struct safety_report rep;
	char err[512] = "", want[128];
	uint64_t before;

	require_scene(scene.mounted[0] != '\0');
	before = tu_checksum(scene.dev);
	ck_assert_int_eq(safety_check_target(scene.dev, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EBUSY);
	ck_assert_msg(strstr(err, scene.part) && strstr(err, "is mounted on"),
		      "%s", err);
	ck_assert_int_eq(safety_check_target(scene.part, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EXDEV);
	snprintf(want, sizeof(want), "'%s' is a partition; run write tests on "
		 "the whole disk '%s'", scene.part, scene.dev);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(safety_check_target(scene.part, SAFETY_READ, &rep, err,
					     sizeof(err)), 0);
	ck_assert(rep.partition_warning);
	ck_assert_int_eq(rep.target, SAFETY_TARGET_PARTITION);
	ck_assert_str_eq(rep.disk, scene.dev);
	ck_assert_ptr_nonnull(strstr(rep.warning, scene.dev));
	ck_assert_uint_eq(tu_checksum(scene.dev), before);
}
END_TEST

START_TEST(test_loop_swap)
{
	struct safety_report rep;
	char err[512] = "";
	uint64_t before;

	require_scene(scene.swap[0] != '\0');
	before = head_sum(scene.dev);
	ck_assert_int_eq(safety_check_target(scene.dev, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EBUSY);
	ck_assert(rep.swap);
	ck_assert_msg(strstr(err, "used as swap") && strstr(err, scene.dev),
		      "%s", err);
	ck_assert_int_eq(safety_check_target(scene.dev, SAFETY_READ, &rep, err,
					     sizeof(err)), 0);
	ck_assert(rep.swap);
	ck_assert_uint_eq(head_sum(scene.dev), before);
}
END_TEST

START_TEST(test_swap_file)
{
	struct safety_report rep;
	char err[512] = "";

	require_scene(scene.swap[0] != '\0');
	ck_assert_int_eq(safety_check_target(scene.image, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EBUSY);
	ck_assert_msg(strstr(err, "used as swap"), "%s", err);
}
END_TEST

START_TEST(test_loop_readonly)
{
	struct safety_report rep;
	struct fp_dev *d = NULL;
	char err[512] = "";

	require_scene(scene.dev != NULL);
	ck_assert_int_eq(safety_check_target(scene.dev, SAFETY_WRITE, &rep, err,
					     sizeof(err)), -EROFS);
	ck_assert(rep.readonly);
	ck_assert_msg(strstr(err, "read-only") && strstr(err, scene.dev), "%s",
		      err);
	ck_assert_int_eq(safety_check_target(scene.dev, SAFETY_READ, &rep, err,
					     sizeof(err)), 0);
	/* The kernel opens a read-only loop device for writing and only
	 * fails the writes: why the gate asks BLKROGET first. */
	if (devspec_open(scene.dev, FP_OPEN_WRITE, &d, err, sizeof(err)) == 0) {
		unsigned char *buf = fp_dev_alloc_buf(4096);

		ck_assert_int_eq(fp_dev_set_write_area(d, 0, 4096), 0);
		ck_assert_int_ne(fp_dev_write_timed(d, buf, 4096, 0, NULL), 0);
		free(buf);
		fp_dev_close(d);
	}
}
END_TEST

static void add_scene(Suite *s, const char *name, void (*setup)(void),
		      const TTest *test, const char *tool)
{
	const char *why = bf_unavailable(tool);
	char label[128];
	TCase *tc;

	if (why != NULL) {
		snprintf(label, sizeof(label), "safety/%s", name);
		tu_skip(label, why);
		return;
	}
	tc = tcase_create(name);
	tcase_add_unchecked_fixture(tc, setup, scene_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

Suite *safety_suite(void)
{
	Suite *s = suite_create("safety");
	TCase *tc = tcase_create("safety");
	TCase *fk;

	tcase_add_unchecked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, test_gate_sim_and_file);
	tcase_add_loop_test(tc, test_gate_bad_targets, 0,
			    (int)(sizeof(bad_targets) / sizeof(bad_targets[0])));
	tcase_add_test(tc, test_gate_refuses_journal_file);
	tcase_add_loop_test(tc, test_output_file_opened_safely, 0, OUT_CASES);
	tcase_add_test(tc, test_loop_serial_parts);
	tcase_add_test(tc, test_loop_serial_windows);
	tcase_add_loop_test(tc, test_loopfile_names, 0,
			    (int)(sizeof(loopname_cases) / sizeof(loopname_cases[0])));
	tcase_add_loop_test(tc, test_signatures, 0,
			    (int)(sizeof(sig_cases) / sizeof(sig_cases[0])));
	tcase_add_test(tc, test_signature_random);
	for (size_t i = 0; i < sizeof(real_sigs) / sizeof(real_sigs[0]); i++) {
		char why[64];

		if (bf_have(real_sigs[i].tool)) {
			tcase_add_loop_test(tc, test_signature_real_tools,
					    (int)i, (int)i + 1);
			continue;
		}
		snprintf(why, sizeof(why), "%s not installed", real_sigs[i].tool);
		tu_skip("safety/signature of a real file system", why);
	}
	tcase_add_loop_test(tc, test_confirm, 0,
			    (int)(sizeof(confirm_cases) / sizeof(confirm_cases[0])));
	tcase_add_test(tc, test_signals);
	tcase_add_test(tc, test_signal_dispositions);
	tcase_add_test(tc, test_interruptible_wrapper);
	suite_add_tcase(s, tc);

	if (geteuid() != 0) {
		tu_skip("safety/fake-card: gate on a fake sysfs tree",
			"not root (mknod)");
	} else {
		fk = tcase_create("fake-card");
		tcase_add_unchecked_fixture(fk, fake_setup, fake_teardown);
		tcase_add_loop_test(fk, test_fake_card, 0,
				    (int)(sizeof(fake_cases) / sizeof(fake_cases[0])));
		tcase_add_test(fk, test_fake_card_report);
		tcase_add_test(fk, test_fake_loop_chain_serial);
		tcase_add_test(fk, test_fake_loop_chain_too_long);
		suite_add_tcase(s, fk);
	}
	add_scene(s, "loop-clean", plain_setup, test_loop_clean_disk, NULL);
	add_scene(s, "loop-mounted", mounted_setup, test_loop_mounted,
		  "mkfs.ext4");
	add_scene(s, "loop-mounted-partition", partition_setup,
		  test_loop_mounted_partition, "mkfs.ext4 partx");
	add_scene(s, "loop-swap", swap_setup, test_loop_swap, "swapon");
	add_scene(s, "swap-file", swapfile_setup, test_swap_file, "swapon");
	add_scene(s, "loop-readonly", readonly_setup, test_loop_readonly, NULL);
	return s;
}
