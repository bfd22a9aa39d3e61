/* testutil.c - end-to-end helpers: run the binary, loop devices, checksums,
 * sparse image files. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sched.h>

#include "dev.h"
#include "journal.h"
#include "sim.h"
#include "stats.h"
#include "testutil.h"

const char *tu_binary(void)
{
	const char *b = getenv("FLASHPROBE_BIN");

	return b && *b ? b : "./build/flashprobe";
}

static char *slurp_fd(int fd)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		return NULL;
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	return buf;
}

static int temp_fd(void)
{
	char path[] = "/var/tmp/flashprobe-test-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

/* Run path with args (argv[0] = path), stdin from in, capture output. */
static void run_program(struct run_result *r, const char *path,
			const char *const *argv, int in, bool search)
{
	int out = temp_fd(), err = temp_fd(), st = 0;
	size_t n = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	while (argv[n])
		n++;
	pid = fork();
	if (pid == 0) {
		const char **args = calloc(n + 2, sizeof(*args));

		if (!args || in < 0)
			_exit(127);
		args[0] = path;
		memcpy(args + 1, argv, n * sizeof(*args));
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		if (search)
			execvp(args[0], (char *const *)args);
		else
			execv(args[0], (char *const *)args);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = slurp_fd(out);
	r->err = slurp_fd(err);
	close(out);
	close(err);
}

void tu_run(struct run_result *r, const char *const *argv)
{
	int in = open("/dev/null", O_RDONLY);

	run_program(r, tu_binary(), argv, in, false);
	if (in >= 0)
		close(in);
}

void tu_run_tool(struct run_result *r, const char *const *argv, const char *input)
{
	int in = temp_fd();
	size_t len = input ? strlen(input) : 0;

	if (in >= 0 && (write(in, input ? input : "", len) != (ssize_t)len ||
			lseek(in, 0, SEEK_SET) != 0)) {
		close(in);
		in = -1;
	}
	run_program(r, argv[0], argv + 1, in, true);
	if (in >= 0)
		close(in);
}

bool tu_have_tool(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	for (const char *p = path ? path : "/usr/sbin:/usr/bin:/sbin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, name);
		if (access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

void tu_run_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

size_t tu_count_lines(const char *s)
{
	size_t n = 0;

	for (const char *p = s; *p; p++)
		if (*p == '\n')
			n++;
	if (*s && s[strlen(s) - 1] != '\n')
		n++;
	return n;
}

char *tu_make_image(uint64_t size_bytes, uint64_t seed)
{
	char *path = strdup("/var/tmp/flashprobe-img-XXXXXX");
	uint64_t buf[8192];
	struct stats_rng rng;
	int fd;

	if (!path)
		return NULL;
	fd = mkstemp(path);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	stats_rng_seed(&rng, seed);
	for (uint64_t done = 0; done < size_bytes; done += sizeof(buf)) {
		size_t len = size_bytes - done < sizeof(buf) ? size_bytes - done
							      : sizeof(buf);

		for (size_t i = 0; i < sizeof(buf) / 8; i++)
			buf[i] = stats_rng_next(&rng);
		if (write(fd, buf, len) != (ssize_t)len) {
			close(fd);
			unlink(path);
			free(path);
			return NULL;
		}
	}
	fsync(fd);
	close(fd);
	return path;
}

const char *tu_loop_unavailable(void)
{
	if (geteuid() != 0)
		return "not root";
	if (access("/dev/loop-control", F_OK))
		return "no /dev/loop-control";
	if (system("command -v losetup >/dev/null 2>&1"))
		return "no losetup";
	return NULL;
}

char *tu_loop_attach(const char *path, bool partscan)
{
	return tu_loop_attach_opts(path, partscan ? "-P" : "");
}

char *tu_loop_attach_opts(const char *path, const char *opts)
{
	char cmd[512], dev[256] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "losetup --find --show %s '%s' 2>/dev/null", opts, path);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	if (!fgets(dev, sizeof(dev), p))
		dev[0] = '\0';
	pclose(p);
	dev[strcspn(dev, "\n")] = '\0';
	return strncmp(dev, "/dev/loop", 9) ? NULL : strdup(dev);
}

void tu_loop_detach(const char *dev)
{
	char cmd[300];

	if (!dev)
		return;
	snprintf(cmd, sizeof(cmd), "losetup -d '%s' 2>/dev/null", dev);
	if (system(cmd))
		fprintf(stderr, "warning: could not detach %s\n", dev);
}

uint64_t tu_checksum(const char *path)
{
	return tu_checksum_range(path, 0, UINT64_MAX);
}

uint64_t tu_checksum_range(const char *path, uint64_t off, uint64_t len)
{
	uint64_t h = 1469598103934665603ULL;
	unsigned char buf[65536];
	ssize_t n = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	while (len > 0 &&
	       (n = pread(fd, buf, len < sizeof(buf) ? (size_t)len : sizeof(buf),
			  (off_t)off)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	close(fd);
	return n < 0 ? 0 : h;
}

static unsigned skipped;

void tu_skip(const char *test, const char *why)
{
	fprintf(stderr, "SKIPPED: %s: %s\n", test, why);
	skipped++;
}

unsigned tu_skipped(void)
{
	return skipped;
}

/* mkdir -p of the directories in root/rel before its last component. */
static int make_parents(const char *root, const char *rel, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s", root, rel);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	for (char *p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

int tu_put_file(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;
	int err = make_parents(root, rel, path, sizeof(path));

	if (err)
		return err;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", text);
	return fclose(f) ? -errno : 0;
}

int tu_put_link(const char *root, const char *rel, const char *target)
{
	char path[PATH_MAX];
	int err = make_parents(root, rel, path, sizeof(path));

	if (err)
		return err;
	return symlink(target, path) ? -errno : 0;
}

/* Removes dir's tree without leaving dir's file system: a mount left
 * inside it (a FUSE card of a failed test) is not emptied. */
static void rm_tree_on(const char *dir, dev_t fs)
{
	char path[PATH_MAX + 256];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) != 0)
			continue;
		if (!S_ISDIR(st.st_mode))
			unlink(path);
		else if (st.st_dev == fs)
			rm_tree_on(path, fs);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
}

void tu_rm_tree(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		rm_tree_on(dir, st.st_dev);
}

/* ---- one scratch directory per run ---- */

static char scratch_disk[PATH_MAX], scratch_fast[PATH_MAX];
static char scratch_home[PATH_MAX + 8];	/* scratch_disk/home */

static void scratch_make(char *dir, size_t len, const char *in)
{
	snprintf(dir, len, "%s/flashprobe-tests-XXXXXX", in);
	if (mkdtemp(dir) == NULL)
		dir[0] = '\0';
}

void tu_scratch_begin(void)
{
	scratch_make(scratch_disk, sizeof(scratch_disk), "/var/tmp");
	if (access("/dev/shm", W_OK) == 0)
		scratch_make(scratch_fast, sizeof(scratch_fast), "/dev/shm");
	if (scratch_disk[0]) {
		snprintf(scratch_home, sizeof(scratch_home), "%s/home", scratch_disk);
		if (mkdir(scratch_home, 0700) != 0)
			scratch_home[0] = '\0';
	}
	tu_state_dir_unset();
}

void tu_state_dir_set(const char *dir)
{
	setenv(JOURNAL_STATE_ENV, dir, 1);
	setenv(JOURNAL_TEST_HOME_ENV, dir, 1);
}

bool tu_default_dir_make(const char *dir)
{
	return mkdir(dir, 0700) == 0 && setenv(JOURNAL_TEST_HOME_ENV, dir, 1) == 0;
}

void tu_state_dir_unset(void)
{
	unsetenv(JOURNAL_STATE_ENV);
	if (scratch_home[0])
		setenv(JOURNAL_TEST_HOME_ENV, scratch_home, 1);
	else
		unsetenv(JOURNAL_TEST_HOME_ENV);
}

void tu_scratch_end(void)
{
	if (scratch_disk[0])
		tu_rm_tree(scratch_disk);
	if (scratch_fast[0])
		tu_rm_tree(scratch_fast);
	scratch_disk[0] = scratch_fast[0] = '\0';
}

const char *tu_disk_dir(void)
{
	return scratch_disk[0] ? scratch_disk : "/var/tmp";
}

int tu_spawn(struct tu_child *c, const char *const *argv, uint64_t fsize_limit)
{
	size_t n = 0;
	pid_t pid;

	while (argv[n])
		n++;
	c->out = temp_fd();
	c->err = temp_fd();
	c->pid = -1;
	if (c->out < 0 || c->err < 0)
		goto fail;
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		const char **args = calloc(n + 2, sizeof(*args));
		int in = open("/dev/null", O_RDONLY);

		if (!args || in < 0)
			_exit(127);
		if (fsize_limit) {
			struct rlimit core = { 0, 0 };
			struct rlimit fsize = { fsize_limit, fsize_limit };

			if (setrlimit(RLIMIT_CORE, &core) || setrlimit(RLIMIT_FSIZE, &fsize))
				_exit(127);
		}
		args[0] = tu_binary();
		memcpy(args + 1, argv, n * sizeof(*args));
		dup2(in, 0);
		dup2(c->out, 1);
		dup2(c->err, 2);
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	c->pid = pid;
	return 0;
fail:
	if (c->out >= 0)
		close(c->out);
	if (c->err >= 0)
		close(c->err);
	c->out = c->err = -1;
	return -EAGAIN;
}

bool tu_child_said(const struct tu_child *c, const char *needle, unsigned timeout_ms)
{
	static char buf[1 << 16];

	for (unsigned t = 0; t <= timeout_ms; t += 2) {
		ssize_t n = pread(c->err, buf, sizeof(buf) - 1, 0);

		buf[n > 0 ? n : 0] = '\0';
		if (strstr(buf, needle))
			return true;
		tu_sleep_ns(2000000);
	}
	return false;
}

int tu_wait(struct tu_child *c, struct run_result *r)
{
	int st = 0, sig = 0;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	if (c->pid > 0 && waitpid(c->pid, &st, 0) == c->pid) {
		sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
		r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + sig;
	}
	c->pid = -1;
	r->out = c->out >= 0 ? slurp_fd(c->out) : strdup("");
	r->err = c->err >= 0 ? slurp_fd(c->err) : strdup("");
	if (c->out >= 0)
		close(c->out);
	if (c->err >= 0)
		close(c->err);
	c->out = c->err = -1;
	return sig;
}

uint64_t tu_number_after(const char *s, const char *key)
{
	const char *at = strstr(s, key);
	uint64_t v = 0;

	if (at)
		sscanf(at + strlen(key), "%" SCNu64, &v);
	return v;
}

char *tu_sparse_file(const char *dir, uint64_t size)
{
	size_t n = strlen(dir) + 32;
	char *path = malloc(n);
	int fd;

	if (!path)
		return NULL;
	snprintf(path, n, "%s/flashprobe-part-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

const char *tu_fast_dir(void)
{
	return scratch_fast[0] ? scratch_fast : tu_disk_dir();
}

int tu_read_at(const char *path, uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? pread(fd, buf, len, (off_t)off) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

int tu_write_at(const char *path, uint64_t off, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY);
	ssize_t n = fd >= 0 ? pwrite(fd, buf, len, (off_t)off) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

int tu_copy_sparse(const char *src, const char *dst, uint64_t off)
{
	static char buf[1 << 20];
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY), ret = 0;
	off_t pos = 0, end = in >= 0 ? lseek(in, 0, SEEK_END) : -1;

	if (in < 0 || out < 0 || end < 0)
		ret = -EIO;
	while (!ret && pos < end && (pos = lseek(in, pos, SEEK_DATA)) >= 0) {
		off_t hole = lseek(in, pos, SEEK_HOLE);

		while (!ret && pos < hole) {
			size_t n = (size_t)(hole - pos) < sizeof(buf) ? (size_t)(hole - pos)
								       : sizeof(buf);

			if (pread(in, buf, n, pos) != (ssize_t)n ||
			    pwrite(out, buf, n, pos + (off_t)off) != (ssize_t)n)
				ret = -EIO;
			pos += (off_t)n;
		}
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

struct policy_spy {
	struct fp_dev *inner;
	struct tu_policy_counts *counts;
};

static void count_policy(unsigned *rt, unsigned *other)
{
	if (sched_getscheduler(0) == SCHED_FIFO)
		(*rt)++;
	else
		(*other)++;
}

static int spy_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct policy_spy *s = priv;

	count_policy(&s->counts->reads_rt, &s->counts->reads_other);
	return fp_dev_read_timed(s->inner, buf, len, off, NULL);
}

static int spy_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct policy_spy *s = priv;

	count_policy(&s->counts->writes_rt, &s->counts->writes_other);
	return fp_dev_write_timed(s->inner, buf, len, off, NULL);
}

static uint64_t spy_now_ns(void *priv)
{
	return fp_dev_now_ns(((struct policy_spy *)priv)->inner);
}

static void spy_close(void *priv)
{
	struct policy_spy *s = priv;

	fp_dev_close(s->inner);
	free(s);
}

static const struct fp_dev_ops policy_spy_ops = {
	.pread = spy_pread,
	.pwrite = spy_pwrite,
	.now_ns = spy_now_ns,
	.close = spy_close,
};

int tu_allow_area(void *arg, const char *test, uint64_t start, uint64_t end,
		  uint64_t max_bytes, bool may_alias)
{
	(void)test;
	(void)max_bytes;
	(void)may_alias;
	fp_dev_end_write_area(arg);
	return fp_dev_set_write_area(arg, start, end);
}

struct fp_dev *tu_policy_spy(struct fp_dev *inner, const char *path,
			     struct tu_policy_counts *counts)
{
	struct policy_spy *s = malloc(sizeof(*s));
	struct fp_dev *d;

	if (s == NULL)
		return NULL;
	s->inner = inner;
	s->counts = counts;
	d = fp_dev_create(&policy_spy_ops, s, FP_DEV_FILE, path,
			  fp_dev_size_bytes(inner), fp_dev_sector_bytes(inner));
	if (d == NULL)
		free(s);
	fp_dev_set_inner(d, inner);
	return d;
}

size_t tu_sim_profile_count(void)
{
	size_t n = 0;

	while (sim_profiles[n].name[0])
		n++;
	return n;
}

uint64_t tu_dev_sum(struct fp_dev *d, uint64_t start, uint64_t end)
{
	const size_t piece = 1024 * 1024;
	unsigned char *buf = fp_dev_alloc_buf(piece);
	uint64_t h = UINT64_C(1469598103934665603);

	if (buf == NULL)
		return 0;
	for (uint64_t off = start; off < end; off += piece) {
		size_t n = end - off < piece ? (size_t)(end - off) : piece;

		if (fp_dev_read_timed(d, buf, n, off, NULL) != 0) {
			free(buf);
			return 0;
		}
		for (size_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * UINT64_C(1099511628211);
	}
	free(buf);
	return h;
}

int tu_dev_copy(struct fp_dev *from, struct fp_dev *to)
{
	const size_t piece = 1024 * 1024;
	uint64_t size = fp_dev_size_bytes(from);
	unsigned char *buf = fp_dev_alloc_buf(piece);
	int rc = buf == NULL ? -ENOMEM : size != fp_dev_size_bytes(to) ? -EINVAL :
		 fp_dev_set_write_area(to, 0, size);

	for (uint64_t off = 0; rc == 0 && off < size; off += piece) {
		size_t n = size - off < piece ? (size_t)(size - off) : piece;

		rc = fp_dev_read_timed(from, buf, n, off, NULL);
		if (rc == 0)
			rc = fp_dev_write_timed(to, buf, n, off, NULL);
	}
	fp_dev_end_write_area(to);
	free(buf);
	return rc;
}

uint64_t tu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tu_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The entries of directory dir (but . and ..) as "name (size)" in
 * names; returns how many there are. */
size_t tu_dir_list(const char *dir, char *names, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (len > 0)
		names[0] = '\0';
	while (d != NULL && (e = readdir(d)) != NULL) {
		char path[PATH_MAX + 300];
		struct stat st;
		size_t used = strlen(names);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) != 0)
			st.st_size = -1;
		if (used < len)
			snprintf(names + used, len - used, "%s%s (%lld bytes)",
				 n ? ", " : "", e->d_name, (long long)st.st_size);
		n++;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/* A pointer to a structure points to its first member. */
static struct fp_dev *wrapped(void *priv)
{
	return *(struct fp_dev **)priv;
}

int tu_wrapped_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	return fp_dev_read_timed(wrapped(priv), buf, len, off, NULL);
}

uint64_t tu_wrapped_now(void *priv)
{
	return fp_dev_now_ns(wrapped(priv));
}

void tu_wrapped_keep(void *priv)
{
	(void)priv;
}

void tu_wrapped_close(void *priv)
{
	fp_dev_close(wrapped(priv));
}

/* ---- a fake card whose writes wrap around ---- */

struct wrap_fake {
	struct fp_dev *inner;		/* first: the tu_wrapped_* ops */
	uint64_t period_bytes;
};

static int wrap_fake_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct wrap_fake *w = priv;

	return fp_dev_read_timed(w->inner, buf, len, off % w->period_bytes, NULL);
}

static int wrap_fake_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct wrap_fake *w = priv;
	uint64_t o = off % w->period_bytes;
	int rc;

	/* the card writes where the address lands, wherever the last did */
	fp_dev_end_write_area(w->inner);
	rc = fp_dev_set_write_area(w->inner, o, o + len);
	return rc ? rc : fp_dev_write_timed(w->inner, buf, len, o, NULL);
}

static void wrap_fake_close(void *priv)
{
	free(priv);
}

static const struct fp_dev_ops wrap_fake_ops = {
	wrap_fake_pread, wrap_fake_pwrite, tu_wrapped_now, wrap_fake_close,
};

struct fp_dev *tu_wrap_fake(struct fp_dev *inner, uint64_t period_bytes, uint64_t size_bytes)
{
	struct wrap_fake *w = malloc(sizeof(*w));
	struct fp_dev *d;

	if (w == NULL)
		return NULL;
	*w = (struct wrap_fake){ inner, period_bytes };
	d = fp_dev_create(&wrap_fake_ops, w, FP_DEV_SIM, "sim:fake-wrap", size_bytes,
			  fp_dev_sector_bytes(inner));
	if (d == NULL)
		free(w);
	return d;
}
