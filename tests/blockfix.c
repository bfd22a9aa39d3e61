/* blockfix.c - loop-device scenes for the safety and journal tests. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blockfix.h"
#include "stats.h"
#include "testutil.h"

char *bf_image_in(const char *dir, uint64_t size_bytes, uint64_t seed)
{
	size_t len = strlen(dir) + 16;
	char *path = malloc(len);
	uint64_t buf[8192];
	struct stats_rng rng;
	bool ok = true;
	int fd;

	if (path == NULL)
		return NULL;
	snprintf(path, len, "%s/img.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	stats_rng_seed(&rng, seed);
	for (uint64_t done = 0; ok && done < size_bytes; done += sizeof(buf)) {
		size_t n = size_bytes - done < sizeof(buf) ?
			   (size_t)(size_bytes - done) : sizeof(buf);

		for (size_t i = 0; i < sizeof(buf) / 8; i++)
			buf[i] = stats_rng_next(&rng);
		ok = write(fd, buf, n) == (ssize_t)n;
	}
	ok = fsync(fd) == 0 && ok;
	close(fd);
	if (!ok) {
		unlink(path);
		free(path);
		return NULL;
	}
	return path;
}

bool bf_have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

int bf_sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	size_t n;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 32, fmt, ap);
	va_end(ap);
	n = strlen(cmd);
	snprintf(cmd + n, sizeof(cmd) - n, " >/dev/null 2>&1");
	st = system(cmd);
	return st < 0 ? -1 : (st >> 8) & 0xff;
}

const char *bf_unavailable(const char *tool)
{
	const char *why = tu_loop_unavailable();
	static char buf[128];

	if (why != NULL)
		return why;
	if (!bf_have("mount"))
		return "mount not installed";
	/* tools: space-separated names, each must be installed */
	for (const char *t = tool; t != NULL && *t != '\0';) {
		size_t n = strcspn(t, " ");
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)n, t);
		if (!bf_have(name)) {
			snprintf(buf, sizeof(buf), "%s not installed", name);
			return buf;
		}
		t += n + (t[n] == ' ');
	}
	return NULL;
}

/* Only loop devices (and their partitions) may be formatted or mounted. */
static bool ours(const struct bf_scene *s, const char *node)
{
	return s->dev != NULL && strncmp(node, "/dev/loop", 9) == 0 &&
	       (strcmp(node, s->dev) == 0 || strcmp(node, s->part) == 0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static bool wait_path(const char *path, int ms)
{
	for (int t = 0; t < ms; t += 20) {
		if (access(path, F_OK) == 0)
			return true;
		sleep_ms(20);
	}
	return access(path, F_OK) == 0;
}

/* One partition entry (type 0x83, LBA start and count) + 55 AA. */
/* An MBR with nparts Linux partitions of equal size from 1 MiB on. */
static bool write_mbr(const char *image, uint64_t size_bytes, unsigned nparts)
{
	unsigned char mbr[512] = { 0 };
	uint32_t count = ((uint32_t)(size_bytes / 512) - 2048) / nparts;
	int fd = open(image, O_WRONLY);
	bool ok;

	for (unsigned p = 0; p < nparts && p < 4; p++) {
		unsigned char *e = mbr + 446 + 16 * p;
		uint32_t start = 2048 + p * count;

		e[4] = 0x83;
		for (int i = 0; i < 4; i++) {
			e[8 + i] = (unsigned char)(start >> (8 * i));
			e[12 + i] = (unsigned char)(count >> (8 * i));
		}
	}
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	ok = fd >= 0 && pwrite(fd, mbr, sizeof(mbr), 0) == (ssize_t)sizeof(mbr);
	if (fd >= 0) {
		ok = fsync(fd) == 0 && ok;
		close(fd);
	}
	return ok;
}

bool bf_image_parts(struct bf_scene *s, uint64_t size_bytes, unsigned nparts)
{
	s->image = tu_make_image(size_bytes, 77);
	if (s->image == NULL) {
		snprintf(s->why, sizeof(s->why), "cannot make an image file");
		return false;
	}
	s->nparts = nparts;
	if (nparts && !write_mbr(s->image, size_bytes, nparts)) {
		snprintf(s->why, sizeof(s->why), "cannot write an MBR");
		return false;
	}
	return true;
}

bool bf_image(struct bf_scene *s, uint64_t size_bytes, bool with_mbr)
{
	return bf_image_parts(s, size_bytes, with_mbr ? 1 : 0);
}

static bool find_partition(struct bf_scene *s)
{
	char sys[128];
	const char *name = strrchr(s->dev, '/') + 1;

	/* the last partition: the kernel and partx add them in order */
	snprintf(sys, sizeof(sys), "/sys/class/block/%sp%u", name,
		 s->nparts > 1 ? s->nparts : 1);
	/* Kernels without the MBR parser do not scan; partx adds the
	 * partition with BLKPG from user space. */
	if (!wait_path(sys, 500) && bf_have("partx"))
		bf_sh("partx -a '%s'", s->dev);
	snprintf(s->part, sizeof(s->part), "%sp1", s->dev);
	if (wait_path(sys, 2000) && wait_path(s->part, 2000))
		return true;
	snprintf(s->why, sizeof(s->why), "no partition node %s appeared",
		 s->part);
	s->part[0] = '\0';
	return false;
}

bool bf_attach(struct bf_scene *s, const char *opts)
{
	char cmd[PATH_MAX + 64], dev[64] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "losetup --find --show %s '%s' 2>/dev/null",
		 opts, s->image);
	p = popen(cmd, "r");
	if (p != NULL) {
		if (fgets(dev, sizeof(dev), p) == NULL)
			dev[0] = '\0';
		pclose(p);
	}
	dev[strcspn(dev, "\n")] = '\0';
	if (strncmp(dev, "/dev/loop", 9) != 0) {
		snprintf(s->why, sizeof(s->why), "losetup %s failed", opts);
		return false;
	}
	s->dev = strdup(dev);
	if (strstr(opts, "-P") != NULL)
		return find_partition(s);
	return true;
}

bool bf_mkfs(struct bf_scene *s, const char *node)
{
	if (!ours(s, node)) {
		snprintf(s->why, sizeof(s->why), "refusing mkfs on %s", node);
		return false;
	}
	if (bf_sh("mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "
		  "'%s'", node) != 0) {
		snprintf(s->why, sizeof(s->why), "mkfs.ext4 %s failed", node);
		return false;
	}
	return true;
}

bool bf_mount(struct bf_scene *s, const char *node, const char *opts)
{
	snprintf(s->mnt, sizeof(s->mnt), "/var/tmp/flashprobe-mnt-XXXXXX");
	if (!ours(s, node) || mkdtemp(s->mnt) == NULL) {
		s->mnt[0] = '\0';
		snprintf(s->why, sizeof(s->why), "cannot make a mount point");
		return false;
	}
	if (bf_sh("mount -o '%s' '%s' '%s'", opts, node, s->mnt) != 0) {
		snprintf(s->why, sizeof(s->why), "mount %s failed", node);
		return false;
	}
	snprintf(s->mounted, sizeof(s->mounted), "%s", node);
	return true;
}

bool bf_swapon(struct bf_scene *s, const char *path)
{
	bool file = s->image != NULL && strcmp(path, s->image) == 0;

	if (!file && !ours(s, path)) {
		snprintf(s->why, sizeof(s->why), "refusing mkswap on %s", path);
		return false;
	}
	if (file)
		chmod(path, 0600);
	if (bf_sh("mkswap -f '%s'", path) != 0 || bf_sh("swapon '%s'", path) != 0) {
		snprintf(s->why, sizeof(s->why), "mkswap/swapon %s failed", path);
		return false;
	}
	snprintf(s->swap, sizeof(s->swap), "%s", path);
	return true;
}

void bf_cleanup(struct bf_scene *s)
{
	if (s->swap[0] != '\0' && bf_sh("swapoff '%s'", s->swap) != 0)
		fprintf(stderr, "warning: could not swapoff %s\n", s->swap);
	if (s->mounted[0] != '\0' && bf_sh("umount '%s'", s->mnt) != 0 &&
	    bf_sh("umount -l '%s'", s->mnt) != 0)
		fprintf(stderr, "warning: could not unmount %s\n", s->mnt);
	if (s->mnt[0] != '\0')
		rmdir(s->mnt);
	if (s->part[0] != '\0' && s->dev != NULL)
		bf_sh("partx -d '%s'", s->dev);
	tu_loop_detach(s->dev);
	if (s->image != NULL)
		unlink(s->image);
	free(s->dev);
	free(s->image);
	memset(s, 0, sizeof(*s));
}
