/* check_dev.c - the device layer: checks, timing, counters, write area, and
 * the real backend on regular files.
 *
 * File tests use a private directory (made by an unchecked fixture, so it is
 * removed by the parent process even when a test fails) on a filesystem
 * with real O_DIRECT, and unlink each file right after opening it.
 */
#define _GNU_SOURCE		/* O_DIRECT */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "testutil.h"
#include "dev.h"
#include "devspec.h"
#include "errmsg.h"

#define DEV_TMPFS_MAGIC 0x01021994	/* linux/magic.h TMPFS_MAGIC */
#define DEV_RAMFS_MAGIC 0x858458f6	/* linux/magic.h RAMFS_MAGIC */
#define FILE_BYTES (64 * 1024)
#define SENTINEL_NS UINT64_C(0xdeadbeef)

static char test_dir[PATH_MAX];	/* "" when no suitable directory exists */

static int fs_is_memory(const char *dir)
{
	struct statfs sfs;

	if (statfs(dir, &sfs) != 0)
		return -1;
	return sfs.f_type == DEV_TMPFS_MAGIC || sfs.f_type == DEV_RAMFS_MAGIC;
}

/* Unchecked fixture: a private directory on a disk-backed filesystem; /tmp
 * is often tmpfs, where O_DIRECT timing is refused by design. */
static void dir_setup(void)
{
	const char *cands[] = { getenv("TMPDIR"), "/var/tmp", "/tmp", "." };

	test_dir[0] = '\0';
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (cands[i] == NULL || fs_is_memory(cands[i]) != 0)
			continue;
		snprintf(test_dir, sizeof(test_dir), "%s/flashprobe-check.XXXXXX",
			 cands[i]);
		if (mkdtemp(test_dir) != NULL)
			return;
		test_dir[0] = '\0';
	}
	fprintf(stderr, "check_dev: no disk-backed temporary directory: "
		"the file tests fail\n");
}

static void dir_teardown(void)
{
	char path[PATH_MAX + 256];
	struct dirent *e;
	DIR *d;

	if (test_dir[0] == '\0')
		return;
	d = opendir(test_dir);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", test_dir, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(test_dir);
}

static unsigned char pattern_byte(unsigned seed, size_t off)
{
	return (unsigned char)((off * 131u) ^ (off >> 9) ^ seed);
}

static void pattern_fill(unsigned char *buf, size_t len, unsigned seed,
			 size_t off)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern_byte(seed, off + i);
}

/* A file of len pattern bytes in dir; returns a buffered fd for checking
 * the contents and writes its name into path. */
static int make_file(const char *dir, size_t len, unsigned seed, char *path,
		     size_t pathlen)
{
	unsigned char *buf = malloc(len > 0 ? len : 1);
	int fd;

	ck_assert_ptr_nonnull(buf);
	snprintf(path, pathlen, "%s/dev.XXXXXX", dir);
	fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp in %s: %s", dir, strerror(errno));
	pattern_fill(buf, len, seed, 0);
	ck_assert_int_eq(pwrite(fd, buf, len, 0), (ssize_t)len);
	free(buf);
	return fd;
}

/* Opens a fresh pattern file as a device and unlinks it at once. */
static struct fp_dev *open_file_dev(enum fp_open_mode mode, int *fd)
{
	char path[PATH_MAX + 32], err[256] = "";
	struct fp_dev *d = NULL;
	int rc;

	*fd = make_file(test_dir, FILE_BYTES, 1, path, sizeof(path));
	rc = fp_dev_open_path(path, mode, &d, err, sizeof(err));
	unlink(path);
	ck_assert_msg(rc == 0, "open %s: %d %s", path, rc, err);
	ck_assert_ptr_nonnull(d);
	return d;
}

/* Whether the file still holds the pattern in [off, off + len). */
static int file_has_pattern(int fd, unsigned seed, size_t off, size_t len)
{
	unsigned char *got = malloc(len), *want = malloc(len);
	int same;

	ck_assert(got != NULL && want != NULL);
	ck_assert_int_eq(pread(fd, got, len, (off_t)off), (ssize_t)len);
	pattern_fill(want, len, seed, off);
	same = memcmp(got, want, len) == 0;
	free(got);
	free(want);
	return same;
}

/* A file test without its directory fails: returning early would count
 * it as passed when it never ran. */
#define REQUIRE_DIR()							\
	ck_assert_msg(test_dir[0] != '\0', "%s: no disk-backed temporary "	\
		      "directory (TMPDIR, /var/tmp, /tmp or .)", __func__)

START_TEST(test_read_back)
{
	unsigned char *buf, want[4096];
	uint64_t ns = SENTINEL_NS;
	struct fp_dev *d;
	int fd;

	REQUIRE_DIR();
	buf = fp_dev_alloc_buf(FILE_BYTES);
	d = open_file_dev(FP_OPEN_READ, &fd);
	ck_assert_uint_eq(fp_dev_size_bytes(d), FILE_BYTES);
	ck_assert_uint_eq(fp_dev_sector_bytes(d), 512);
	ck_assert_int_eq(fp_dev_kind(d), FP_DEV_FILE);
	ck_assert_str_eq(fp_dev_kind_name(d), "file");
	ck_assert_ptr_nonnull(strstr(fp_dev_path(d), "/dev."));

	ck_assert_int_eq(fp_dev_read_timed(d, buf, 4096, 8192, &ns), 0);
	pattern_fill(want, 4096, 1, 8192);
	ck_assert_int_eq(memcmp(buf, want, 4096), 0);
	ck_assert_uint_ne(ns, SENTINEL_NS);
	ck_assert_uint_gt(ns, 0);
	ck_assert_uint_eq(fp_dev_io_ns(d), ns);

	/* the last sector and the whole device, without a time pointer */
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 512, FILE_BYTES - 512, NULL), 0);
	pattern_fill(want, 512, 1, FILE_BYTES - 512);
	ck_assert_int_eq(memcmp(buf, want, 512), 0);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, FILE_BYTES, 0, NULL), 0);
	ck_assert(file_has_pattern(fd, 1, 0, FILE_BYTES));
	pattern_fill(want, 4096, 1, 60 * 1024);
	ck_assert_int_eq(memcmp(buf + 60 * 1024, want, 4096), 0);
	ck_assert_uint_eq(fp_dev_io_count(d), 3);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	fp_dev_close(d);
	close(fd);
	free(buf);
}
END_TEST

/* Whether a descriptor of this process on a file under dir has O_DIRECT
 * set: its flags in /proc/self/fdinfo, octal as the kernel prints them. */
static bool direct_fd_under(const char *dir)
{
	char link[300], target[PATH_MAX], line[128];
	bool found = false;
	struct dirent *e;
	DIR *fds = opendir("/proc/self/fd");

	ck_assert_ptr_nonnull(fds);
	while (!found && (e = readdir(fds)) != NULL) {
		unsigned long flags;
		ssize_t n;
		FILE *info;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, dir, strlen(dir)) != 0)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fdinfo/%s", e->d_name);
		if ((info = fopen(link, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), info) != NULL)
			if (sscanf(line, "flags: %lo", &flags) == 1 &&
			    (flags & O_DIRECT))
				found = true;
		fclose(info);
	}
	closedir(fds);
	return found;
}

/* O_DIRECT is really in effect: the kernel holds the device's descriptor
 * with it (the page cache would serve misaligned reads and RAM-speed
 * timings), and only the device's descriptor (the test's own has none). */
START_TEST(test_o_direct_in_effect)
{
	struct fp_dev *d;
	int fd;

	REQUIRE_DIR();
	d = open_file_dev(FP_OPEN_READ, &fd);
	ck_assert(direct_fd_under(test_dir));
	fp_dev_close(d);
	ck_assert(!direct_fd_under(test_dir));
	close(fd);
}
END_TEST

START_TEST(test_alignment_and_range)
{
	unsigned char *buf;
	uint64_t ns = SENTINEL_NS;
	struct fp_dev *d;
	int fd;

	REQUIRE_DIR();
	buf = fp_dev_alloc_buf(8192);
	d = open_file_dev(FP_OPEN_WRITE, &fd);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, FILE_BYTES), 0);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 512, 1, &ns), -EINVAL);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 100, 0, &ns), -EINVAL);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 0, 0, &ns), -EINVAL);
	ck_assert_int_eq(fp_dev_read_timed(d, NULL, 512, 0, &ns), -EINVAL);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 256, &ns), -EINVAL);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 513, 0, &ns), -EINVAL);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 512, FILE_BYTES, &ns), -ENOSPC);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 1024, FILE_BYTES - 512, &ns),
			 -ENOSPC);
	/* off + len wraps around 2^64: still out of range, not allowed */
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 1024, UINT64_MAX - 511, &ns),
			 -ENOSPC);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 1024, UINT64_MAX - 511, &ns),
			 -ENOSPC);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, FILE_BYTES, &ns), -ENOSPC);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, SIZE_MAX - 511, 512, &ns),
			 -ENOSPC);
	ck_assert_uint_eq(ns, SENTINEL_NS);
	ck_assert_uint_eq(fp_dev_io_count(d), 0);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	ck_assert(file_has_pattern(fd, 1, 0, FILE_BYTES));
	fp_dev_close(d);
	close(fd);
	free(buf);
}
END_TEST

START_TEST(test_write_area)
{
	unsigned char *buf, want[4096];
	uint64_t ns = SENTINEL_NS;
	struct fp_dev *d;
	int fd;

	REQUIRE_DIR();
	buf = fp_dev_alloc_buf(8192);
	d = open_file_dev(FP_OPEN_WRITE, &fd);
	memset(buf, 0xa5, 8192);
	/* no area announced: nothing may be written */
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 4096, 4096, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_set_write_area(d, 4096, 8192), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 0, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 8192, 4096, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 1024, 3584, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 8192, &ns), -EFAULT);
	ck_assert_uint_eq(ns, SENTINEL_NS);
	ck_assert_uint_eq(fp_dev_io_count(d), 0);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	ck_assert(file_has_pattern(fd, 1, 0, FILE_BYTES));

	/* inside the area the data lands, and nothing else changes */
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 4096, 4096, &ns), 0);
	ck_assert_uint_ne(ns, SENTINEL_NS);
	ck_assert_int_eq(pread(fd, want, 4096, 4096), 4096);
	ck_assert_int_eq(memcmp(want, buf, 4096), 0);
	ck_assert(file_has_pattern(fd, 1, 0, 4096));
	ck_assert(file_has_pattern(fd, 1, 8192, FILE_BYTES - 8192));
	ck_assert_uint_eq(fp_dev_io_count(d), 1);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 4096);

	/* bad areas are refused and keep the old one */
	ck_assert_int_eq(fp_dev_set_write_area(d, 8192, 8192), -EINVAL);
	ck_assert_int_eq(fp_dev_set_write_area(d, 8192, 4096), -EINVAL);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, FILE_BYTES + 512), -EINVAL);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 0, NULL), -EFAULT);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 7680, NULL), 0);
	fp_dev_close(d);
	close(fd);
	free(buf);
}
END_TEST

START_TEST(test_read_mode_cannot_write)
{
	unsigned char *buf;
	uint64_t ns = SENTINEL_NS;
	struct fp_dev *d;
	int fd, rc;

	REQUIRE_DIR();
	buf = fp_dev_alloc_buf(4096);
	d = open_file_dev(FP_OPEN_READ, &fd);
	memset(buf, 0x5a, 4096);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, FILE_BYTES), 0);
	rc = fp_dev_write_timed(d, buf, 4096, 0, &ns);
	ck_assert_int_eq(rc, -EBADF);
	ck_assert_uint_eq(ns, SENTINEL_NS);
	ck_assert_uint_eq(fp_dev_io_count(d), 0);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	ck_assert(file_has_pattern(fd, 1, 0, FILE_BYTES));
	fp_dev_close(d);
	close(fd);
	free(buf);
}
END_TEST

START_TEST(test_counters)
{
	unsigned char *buf;
	uint64_t ns, sum = 0;
	struct fp_dev *d;
	int fd;

	REQUIRE_DIR();
	buf = fp_dev_alloc_buf(8192);
	d = open_file_dev(FP_OPEN_WRITE, &fd);
	ck_assert_int_eq(fp_dev_set_write_area(d, 16384, 32768), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(fp_dev_read_timed(d, buf, 2048, 512u * i, &ns), 0);
		sum += ns;
	}
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 8192, 16384, &ns), 0);
	sum += ns;
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 1024, 30720, &ns), 0);
	sum += ns;
	/* refused and failed calls do not count */
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 1024, 0, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 7, 0, &ns), -EINVAL);
	ck_assert_uint_eq(fp_dev_io_count(d), 5);
	ck_assert_uint_eq(fp_dev_io_ns(d), sum);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 8192 + 1024);
	fp_dev_close(d);
	close(fd);
	free(buf);
}
END_TEST

/* A file that shrinks after open: reading past its new end is an error,
 * not a hang and not a half-filled buffer. */
START_TEST(test_shrunk_file_is_eio)
{
	unsigned char *buf;
	uint64_t ns = SENTINEL_NS;
	struct fp_dev *d;
	int fd;

	REQUIRE_DIR();
	buf = fp_dev_alloc_buf(4096);
	d = open_file_dev(FP_OPEN_READ, &fd);
	ck_assert_int_eq(ftruncate(fd, FILE_BYTES / 2), 0);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 4096, FILE_BYTES - 4096, &ns),
			 -EIO);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 4096, FILE_BYTES / 2 - 2048,
					   &ns), -EIO);
	ck_assert_uint_eq(ns, SENTINEL_NS);
	ck_assert_uint_eq(fp_dev_io_count(d), 0);
	fp_dev_close(d);
	close(fd);
	free(buf);
}
END_TEST

/* Opens path and expects rc and exactly the message want (NULL: any). */
static void expect_open_error(const char *path, enum fp_open_mode mode,
			      int want_rc, const char *want)
{
	struct fp_dev *d = (struct fp_dev *)&d;	/* must be reset to NULL */
	char err[512] = "";
	int rc = fp_dev_open_path(path, mode, &d, err, sizeof(err));

	ck_assert_msg(rc == want_rc, "open '%s': rc %d, want %d (%s)", path, rc,
		      want_rc, err);
	ck_assert_ptr_null(d);
	if (want != NULL)
		ck_assert_str_eq(err, want);
}

START_TEST(test_refusals)
{
	char want[PATH_MAX + 64], missing[PATH_MAX + 16];
	struct fp_dev *d = NULL;
	char err[512] = "";

	REQUIRE_DIR();
	snprintf(want, sizeof(want), "'%s' is a directory", test_dir);
	expect_open_error(test_dir, FP_OPEN_READ, -EISDIR, want);
	expect_open_error(test_dir, FP_OPEN_WRITE, -EISDIR, want);
	expect_open_error("/dev/null", FP_OPEN_READ, -ENOTBLK,
			  "'/dev/null' is not a block device or regular file");
	expect_open_error("/dev/null", FP_OPEN_WRITE, -ENOTBLK,
			  "'/dev/null' is not a block device or regular file");
	snprintf(missing, sizeof(missing), "%s/missing", test_dir);
	snprintf(want, sizeof(want),
		 "cannot open '%s': No such file or directory", missing);
	expect_open_error(missing, FP_OPEN_READ, -ENOENT, want);
	/* devspec_open() passes anything but "sim:" to the path backend */
	ck_assert_int_eq(devspec_open(missing, FP_OPEN_READ, &d, err, sizeof(err)),
			 -ENOENT);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(d);
	ck_assert_int_eq(devspec_open(NULL, FP_OPEN_READ, &d, err, sizeof(err)),
			 -EINVAL);
}
END_TEST

/* A timing run holds the writers' lock: a test or restore writing the
 * target would disturb its timings, and so would a second timing run;
 * both are refused while it runs, and it is refused while a writer runs.
 * A plain read (advise reads the size) takes no lock. */
START_TEST(test_timing_lock)
{
	char path[PATH_MAX + 32], err[512] = "";
	struct fp_dev *t = NULL, *other = NULL;
	int fd;

	REQUIRE_DIR();
	fd = make_file(test_dir, FILE_BYTES, 4, path, sizeof(path));
	ck_assert_int_eq(fp_dev_open_path(path, FP_OPEN_TIME, &t, err, sizeof(err)), 0);
	ck_assert_int_eq(fp_dev_open_path(path, FP_OPEN_TIME, &other, err,
					  sizeof(err)), -FP_EREFUSED);
	ck_assert_msg(strstr(err, "refusing to time") && strstr(err, "wait for it"),
		      "%s", err);
	ck_assert_int_eq(fp_dev_open_path(path, FP_OPEN_WRITE, &other, err,
					  sizeof(err)), -FP_EREFUSED);
	ck_assert_msg(strstr(err, "refusing to write") && strstr(err, "timing run"),
		      "%s", err);
	ck_assert_ptr_null(other);
	ck_assert_int_eq(fp_dev_open_path(path, FP_OPEN_READ, &other, err,
					  sizeof(err)), 0);
	fp_dev_close(other);
	fp_dev_close(t);
	ck_assert_int_eq(fp_dev_open_path(path, FP_OPEN_WRITE, &other, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(fp_dev_open_path(path, FP_OPEN_TIME, &t, err, sizeof(err)),
			 -FP_EREFUSED);
	fp_dev_close(other);
	ck_assert_int_eq(fp_dev_open_path(path, FP_OPEN_TIME, &t, err, sizeof(err)), 0);
	fp_dev_close(t);
	ck_assert(file_has_pattern(fd, 4, 0, FILE_BYTES));
	unlink(path);
	close(fd);
}
END_TEST

/* A lock held for a moment (udev probing the card after it appears, or
 * after a test closes it) is waited for, not refused. */
START_TEST(test_lock_held_briefly)
{
	char path[PATH_MAX + 32], err[512] = "";
	enum fp_open_mode modes[] = { FP_OPEN_TIME, FP_OPEN_WRITE };
	int fd, ready[2];

	REQUIRE_DIR();
	fd = make_file(test_dir, FILE_BYTES, 5, path, sizeof(path));
	for (size_t m = 0; m < 2; m++) {
		struct fp_dev *d = NULL;
		pid_t pid;
		char c;
		int status;

		ck_assert_int_eq(pipe(ready), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {	/* udev: a shared lock for 300 ms */
			int lfd = open(path, O_RDONLY);

			if (lfd < 0 || flock(lfd, LOCK_SH) != 0 || write(ready[1], "x", 1) != 1)
				_exit(1);
			usleep(300 * 1000);
			_exit(0);
		}
		close(ready[1]);
		ck_assert_int_eq(read(ready[0], &c, 1), 1);
		close(ready[0]);
		ck_assert_msg(fp_dev_open_path(path, modes[m], &d, err, sizeof(err)) == 0,
			      "mode %d: %s", (int)modes[m], err);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		fp_dev_close(d);
	}
	ck_assert(file_has_pattern(fd, 5, 0, FILE_BYTES));
	unlink(path);
	close(fd);
}
END_TEST

START_TEST(test_empty_and_tiny_files)
{
	char path[PATH_MAX + 32], want[PATH_MAX + 128], err[512];
	struct fp_dev *d = NULL;
	int fd, rc;

	REQUIRE_DIR();
	fd = make_file(test_dir, 0, 0, path, sizeof(path));
	snprintf(want, sizeof(want), "'%s' is empty", path);
	expect_open_error(path, FP_OPEN_READ, -EINVAL, want);
	unlink(path);
	close(fd);

	fd = make_file(test_dir, 100, 0, path, sizeof(path));
	snprintf(want, sizeof(want), "'%s' is smaller than one 512-byte sector",
		 path);
	expect_open_error(path, FP_OPEN_READ, -EINVAL, want);
	unlink(path);
	close(fd);

	/* a partial last sector is not part of the device */
	fd = make_file(test_dir, 1000, 0, path, sizeof(path));
	rc = fp_dev_open_path(path, FP_OPEN_READ, &d, err, sizeof(err));
	unlink(path);
	close(fd);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(fp_dev_size_bytes(d), 512);
	fp_dev_close(d);
}
END_TEST

/* A file on tmpfs: O_DIRECT there (refused by old kernels, accepted but
 * meaningless since 6.6) would time the page cache, so open refuses it. */
START_TEST(test_tmpfs_refused)
{
	const char *cands[] = { "/dev/shm", "/run/shm", "/tmp", "/run" };
	char path[PATH_MAX], want[PATH_MAX + 128], err_r[512], err_w[512];
	struct fp_dev *d_r = NULL, *d_w = NULL;
	int fd = -1, rc_r, rc_w, sized;

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]) && fd < 0; i++) {
		if (fs_is_memory(cands[i]) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/flashprobe-check.XXXXXX",
			 cands[i]);
		fd = mkstemp(path);
	}
	if (fd < 0) {
		fprintf(stderr, "check_dev: no writable tmpfs on this machine, "
			"O_DIRECT refusal not tested\n");
		return;
	}
	/* Everything that can fail happens before the first assertion, so
	 * the file is always removed. */
	sized = ftruncate(fd, 4096) == 0;
	rc_r = fp_dev_open_path(path, FP_OPEN_READ, &d_r, err_r, sizeof(err_r));
	rc_w = fp_dev_open_path(path, FP_OPEN_WRITE, &d_w, err_w, sizeof(err_w));
	unlink(path);
	close(fd);
	fp_dev_close(d_r);
	fp_dev_close(d_w);
	ck_assert(sized);
	snprintf(want, sizeof(want), "'%s' does not support O_DIRECT (tmpfs?): "
		 "timing would measure the page cache", path);
	ck_assert_int_eq(rc_r, -EINVAL);
	ck_assert_str_eq(err_r, want);
	ck_assert_ptr_null(d_r);
	ck_assert_int_eq(rc_w, -EINVAL);
	ck_assert_str_eq(err_w, want);
	ck_assert_ptr_null(d_w);
}
END_TEST

/* ---- a fake backend with a virtual clock, for exact assertions ---- */

struct fake {
	uint64_t clock_ns;
	unsigned reads, writes, closes;
	int fail_rc;
	unsigned char data[8192];
};

/* Each transfer costs 1000 ns plus 1 ns per byte of virtual time. */
static int fake_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct fake *f = priv;

	f->reads++;
	f->clock_ns += 1000 + len;
	if (f->fail_rc != 0)
		return f->fail_rc;
	memcpy(buf, f->data + off, len);
	return 0;
}

static int fake_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct fake *f = priv;

	f->writes++;
	f->clock_ns += 1000 + len;
	if (f->fail_rc != 0)
		return f->fail_rc;
	memcpy(f->data + off, buf, len);
	return 0;
}

static uint64_t fake_now_ns(void *priv)
{
	return ((struct fake *)priv)->clock_ns;
}

static void fake_close(void *priv)
{
	((struct fake *)priv)->closes++;
}

static const struct fp_dev_ops fake_ops = {
	.pread = fake_pread,
	.pwrite = fake_pwrite,
	.now_ns = fake_now_ns,
	.close = fake_close,
};

static struct fp_dev *fake_dev(struct fake *f, enum fp_dev_kind kind)
{
	struct fp_dev *d;

	memset(f, 0, sizeof(*f));
	f->clock_ns = 5000;
	d = fp_dev_create(&fake_ops, f, kind, "fake0", sizeof(f->data), 512);
	ck_assert_ptr_nonnull(d);
	return d;
}

/* A wrapper as the journal is one: its I/O goes through the inner
 * device's checks. */
static int pass_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	return fp_dev_read_timed(priv, buf, len, off, NULL);
}

static int pass_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	return fp_dev_write_timed(priv, buf, len, off, NULL);
}

static uint64_t pass_now_ns(void *priv)
{
	return fp_dev_now_ns(priv);
}

static const struct fp_dev_ops pass_ops = {
	.pread = pass_pread, .pwrite = pass_pwrite, .now_ns = pass_now_ns,
};

static bool area_is(const struct fp_dev *d, uint64_t start, uint64_t end)
{
	uint64_t s, e;

	return fp_dev_write_area(d, &s, &e) && s == start && e == end;
}

/* One write area for the whole stack, and it only narrows: code handed a
 * device cannot widen what its caller allowed; only an end (the write
 * authority's, between tests) starts over. */
START_TEST(test_area_only_narrows)
{
	struct fake f;
	struct fp_dev *inner = fake_dev(&f, FP_DEV_FILE), *d;
	unsigned char buf[512];

	memset(buf, 0x3c, sizeof(buf));
	d = fp_dev_create(&pass_ops, inner, FP_DEV_FILE, "wrap", sizeof(f.data), 512);
	ck_assert_ptr_nonnull(d);
	fp_dev_set_inner(d, inner);
	ck_assert(!fp_dev_may_write(d, 0, 512));
	ck_assert_int_eq(fp_dev_set_write_area(d, 1024, 4096), 0);
	ck_assert(area_is(d, 1024, 4096) && area_is(inner, 1024, 4096));
	ck_assert(fp_dev_may_write(d, 1024, 4096));
	ck_assert(!fp_dev_may_write(d, 512, 4096));
	ck_assert(!fp_dev_may_write(d, 1024, 4608));

	/* widening, at either end or both, is refused and changes nothing */
	ck_assert_int_eq(fp_dev_set_write_area(d, 512, 4096), -EPERM);
	ck_assert_int_eq(fp_dev_set_write_area(d, 1024, 4608), -EPERM);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, 8192), -EPERM);
	ck_assert_int_eq(fp_dev_set_write_area(inner, 0, 8192), -EPERM);
	ck_assert(area_is(d, 1024, 4096) && area_is(inner, 1024, 4096));
	ck_assert_int_eq(fp_dev_set_write_area(d, 1024, 4096), 0);	/* same */

	/* narrowing holds for the whole stack */
	ck_assert_int_eq(fp_dev_set_write_area(d, 2048, 4096), 0);
	ck_assert(area_is(inner, 2048, 4096));
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 1024, NULL), -EFAULT);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 2048, NULL), 0);
	ck_assert_int_eq(f.writes, 1);
	ck_assert_int_eq(memcmp(f.data + 2048, buf, 512), 0);
	/* the inner device narrowed below the wrapper refuses on its own */
	ck_assert_int_eq(fp_dev_set_write_area(inner, 2048, 3072), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 3072, NULL), -EFAULT);
	ck_assert_int_eq(f.writes, 1);

	/* after an end nothing may be written, until a new area is set */
	fp_dev_end_write_area(d);
	ck_assert(!fp_dev_write_area(d, &(uint64_t){0}, &(uint64_t){0}));
	ck_assert(!fp_dev_write_area(inner, &(uint64_t){0}, &(uint64_t){0}));
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 2048, NULL), -EFAULT);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, 8192), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 0, NULL), 0);
	ck_assert_int_eq(f.writes, 2);
	fp_dev_close(d);
	fp_dev_close(inner);
}
END_TEST

START_TEST(test_fake_timing)
{
	static unsigned char buf[4096];
	uint64_t ns = 0;
	struct fake f;
	struct fp_dev *d = fake_dev(&f, FP_DEV_SIM);

	ck_assert_uint_eq(fp_dev_now_ns(d), 5000);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 1024, 512, &ns), 0);
	ck_assert_uint_eq(ns, 2024);
	ck_assert_int_eq(fp_dev_set_write_area(d, 4096, 8192), 0);
	memset(buf, 0x77, sizeof(buf));
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 4096, 4096, &ns), 0);
	ck_assert_uint_eq(ns, 5096);
	ck_assert_uint_eq(f.data[4096], 0x77);
	ck_assert_uint_eq(f.data[4095], 0);
	ck_assert_uint_eq(fp_dev_io_count(d), 2);
	ck_assert_uint_eq(fp_dev_io_ns(d), 2024 + 5096);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 4096);
	ck_assert_uint_eq(fp_dev_now_ns(d), 5000 + 2024 + 5096);
	fp_dev_close(d);
	ck_assert_uint_eq(f.closes, 1);
}
END_TEST

/* Refused requests never reach the backend. */
START_TEST(test_fake_refused_not_called)
{
	static unsigned char buf[8192];
	uint64_t ns = SENTINEL_NS;
	struct fake f;
	struct fp_dev *d = fake_dev(&f, FP_DEV_SIM);

	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 0, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_set_write_area(d, 1024, 4096), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 512, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 1024, 3584, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 4096, &ns), -EFAULT);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 1000, &ns), -EINVAL);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 512, 8192, &ns), -ENOSPC);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 511, 0, &ns), -EINVAL);
	/* off + len wraps to 0: must not pass as "inside" */
	ck_assert_int_eq(fp_dev_read_timed(d, buf, SIZE_MAX - 511, 512, &ns),
			 -ENOSPC);
	ck_assert_uint_eq(f.reads + f.writes, 0);
	ck_assert_uint_eq(ns, SENTINEL_NS);
	ck_assert_uint_eq(fp_dev_io_count(d), 0);
	/* the area's edges are exact: [1024, 4096) */
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 1024, NULL), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 3584, NULL), 0);
	ck_assert_uint_eq(f.writes, 2);
	fp_dev_close(d);
}
END_TEST

/* A failing backend: the error comes through, with no time and no count. */
START_TEST(test_fake_failure_no_time)
{
	static unsigned char buf[1024];
	uint64_t ns = SENTINEL_NS;
	struct fake f;
	struct fp_dev *d = fake_dev(&f, FP_DEV_SIM);

	f.fail_rc = -EIO;
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, 8192), 0);
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 512, 0, &ns), -EIO);
	ck_assert_int_eq(fp_dev_write_timed(d, buf, 512, 0, &ns), -EIO);
	ck_assert_uint_eq(f.reads, 1);
	ck_assert_uint_eq(f.writes, 1);
	ck_assert_uint_eq(ns, SENTINEL_NS);
	ck_assert_uint_eq(fp_dev_io_count(d), 0);
	ck_assert_uint_eq(fp_dev_io_ns(d), 0);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	/* a backend breaking the contract with a positive value is an error */
	f.fail_rc = 3;
	ck_assert_int_eq(fp_dev_read_timed(d, buf, 512, 0, &ns), -EIO);
	ck_assert_uint_eq(ns, SENTINEL_NS);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_fake_accessors)
{
	struct fake f;
	struct fp_dev *d;
	char path[] = "card7";

	d = fake_dev(&f, FP_DEV_SIM);
	ck_assert_str_eq(fp_dev_kind_name(d), "sim");
	ck_assert_int_eq(fp_dev_kind(d), FP_DEV_SIM);
	ck_assert_ptr_eq(fp_dev_priv_if(d, &fake_ops), &f);
	ck_assert_ptr_null(fp_dev_priv_if(d, NULL));
	ck_assert_ptr_null(fp_dev_priv_if(NULL, &fake_ops));
	ck_assert_uint_eq(fp_dev_size_bytes(d), 8192);
	ck_assert_uint_eq(fp_dev_sector_bytes(d), 512);
	fp_dev_rt_enter(d);	/* virtual time: no real-time priority */
	ck_assert(!fp_dev_rt_held());
	fp_dev_rt_leave(d);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, 8193), -EINVAL);
	fp_dev_close(d);

	memset(&f, 0, sizeof(f));
	d = fp_dev_create(&fake_ops, &f, FP_DEV_BLOCK, path, 4096, 4096);
	ck_assert_ptr_nonnull(d);
	path[0] = 'X';		/* the device keeps its own copy */
	ck_assert_str_eq(fp_dev_path(d), "card7");
	ck_assert_str_eq(fp_dev_kind_name(d), "block");
	ck_assert_uint_eq(fp_dev_sector_bytes(d), 4096);
	fp_dev_close(d);
	d = fp_dev_create(&fake_ops, &f, FP_DEV_FILE, NULL, 4096, 512);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(fp_dev_kind_name(d), "file");
	ck_assert_str_eq(fp_dev_path(d), "");
	fp_dev_close(d);
	ck_assert_uint_eq(f.closes, 2);
	fp_dev_close(NULL);

	ck_assert_ptr_null(fp_dev_create(NULL, &f, FP_DEV_SIM, "x", 4096, 512));
	ck_assert_ptr_null(fp_dev_create(&fake_ops, &f, FP_DEV_SIM, "x", 4096, 0));
}
END_TEST

START_TEST(test_alloc_buf)
{
	unsigned char *p = fp_dev_alloc_buf(12345), *q = fp_dev_alloc_buf(0);
	size_t zeros = 0;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq((uintptr_t)p % 4096, 0);
	ck_assert_uint_eq((uintptr_t)q % 4096, 0);
	for (size_t i = 0; i < 12345; i++)
		zeros += p[i] == 0;
	ck_assert_uint_eq(zeros, 12345);
	free(p);
	free(q);
}
END_TEST

/* ---- real-time priority: held only between enter and leave ---- */

static unsigned refusals;

static void count_refusal(void *arg)
{
	(void)arg;
	refusals++;
}

static void rt_policy(bool allowed)
{
	struct fp_dev_rt_policy p = { .allowed = allowed,
				      .refused = count_refusal };

	refusals = 0;
	fp_dev_rt_configure(&p);
}

/* As root: SCHED_FIFO from the first enter to the last leave, the old
 * policy again after it, and none of it for a simulated card. */
START_TEST(test_rt_scope)
{
	struct fake f, g;
	struct fp_dev *d = fake_dev(&f, FP_DEV_FILE);
	struct fp_dev *sim = fake_dev(&g, FP_DEV_SIM);

	rt_policy(true);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
	fp_dev_rt_enter(sim);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
	fp_dev_rt_leave(sim);
	fp_dev_rt_enter(d);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_FIFO);
	ck_assert(fp_dev_rt_held());
	fp_dev_rt_enter(d);	/* nested: still held after the inner leave */
	fp_dev_rt_leave(d);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_FIFO);
	/* a backup in the middle steps out and back in */
	ck_assert(fp_dev_rt_suspend());
	ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
	fp_dev_rt_resume(true);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_FIFO);
	fp_dev_rt_leave(d);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
	ck_assert(!fp_dev_rt_held());
	ck_assert(!fp_dev_rt_suspend());	/* nothing held: nothing to resume */
	fp_dev_rt_leave(d);			/* unbalanced: harmless */
	ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
	ck_assert_uint_eq(refusals, 0);
	fp_dev_close(d);
	fp_dev_close(sim);
}
END_TEST

/* --no-realtime: never switched, nothing told. */
START_TEST(test_rt_not_allowed)
{
	struct fake f;
	struct fp_dev *d = fake_dev(&f, FP_DEV_FILE);

	rt_policy(false);
	fp_dev_rt_enter(d);
	ck_assert(!fp_dev_rt_held());
	ck_assert_int_ne(sched_getscheduler(0), SCHED_FIFO);
	fp_dev_rt_leave(d);
	ck_assert_uint_eq(refusals, 0);
	rt_policy(true);
	fp_dev_close(d);
}
END_TEST

/* Without the privilege (as root: in a child that gave it up) the
 * refusal is told once, however many phases ask. */
START_TEST(test_rt_refused_told_once)
{
	pid_t pid = fork();
	int st = 0;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit no_rt = { 0, 0 };
		struct fake f;
		struct fp_dev *d;

		if (setrlimit(RLIMIT_RTPRIO, &no_rt) != 0 ||
		    (geteuid() == 0 && setuid(65534) != 0))
			_exit(10);
		d = fake_dev(&f, FP_DEV_FILE);
		rt_policy(true);
		for (int i = 0; i < 3; i++) {
			fp_dev_rt_enter(d);
			if (fp_dev_rt_held() || sched_getscheduler(0) == SCHED_FIFO)
				_exit(11);
			fp_dev_rt_leave(d);
		}
		_exit(refusals == 1 ? 0 : 12);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}
END_TEST

Suite *dev_suite(void)
{
	Suite *s = suite_create("dev");
	TCase *tc = tcase_create("layer");

	tcase_add_test(tc, test_fake_timing);
	tcase_add_test(tc, test_area_only_narrows);
	tcase_add_test(tc, test_fake_refused_not_called);
	tcase_add_test(tc, test_fake_failure_no_time);
	tcase_add_test(tc, test_fake_accessors);
	tcase_add_test(tc, test_alloc_buf);
	tcase_add_test(tc, test_rt_not_allowed);
	tcase_add_test(tc, test_rt_refused_told_once);
	if (geteuid() == 0)
		tcase_add_test(tc, test_rt_scope);
	else
		tu_skip("dev/realtime: SCHED_FIFO held only while timing",
			"needs root");
	suite_add_tcase(s, tc);

	tc = tcase_create("file");
	tcase_add_unchecked_fixture(tc, dir_setup, dir_teardown);
	tcase_set_timeout(tc, 60);	/* each refused lock is retried for 1 s */
	tcase_add_test(tc, test_read_back);
	tcase_add_test(tc, test_o_direct_in_effect);
	tcase_add_test(tc, test_alignment_and_range);
	tcase_add_test(tc, test_write_area);
	tcase_add_test(tc, test_read_mode_cannot_write);
	tcase_add_test(tc, test_counters);
	tcase_add_test(tc, test_shrunk_file_is_eio);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_timing_lock);
	tcase_add_test(tc, test_lock_held_briefly);
	tcase_add_test(tc, test_empty_and_tiny_files);
	tcase_add_test(tc, test_tmpfs_refused);
	suite_add_tcase(s, tc);
	return s;
}
