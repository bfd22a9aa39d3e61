/* procfd.c - which other process has a file or device open, from /proc. */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfd.h"

static bool is_number(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool same_target(const struct stat *a, const struct stat *t)
{
	if (S_ISBLK(t->st_mode))
		return S_ISBLK(a->st_mode) && a->st_rdev == t->st_rdev;
	if (S_ISCHR(t->st_mode))	/* /dev/fuse in any mount of /dev */
		return S_ISCHR(a->st_mode) && a->st_rdev == t->st_rdev;
	return a->st_dev == t->st_dev && a->st_ino == t->st_ino;
}

/* Whether descriptor fd of process pid was opened for writing. */
static bool fd_writes(int pid, const char *fd)
{
	char path[300], line[128];
	bool writes = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long flags;

		if (sscanf(line, "flags: %lo", &flags) == 1) {
			writes = (flags & O_ACCMODE) != O_RDONLY;
			break;
		}
	}
	fclose(f);
	return writes;
}

static bool process_uses(int pid, const struct stat *target,
			 bool writers_only)
{
	char dir[64], path[64 + 256];
	struct dirent *e;
	bool hit = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	while (d != NULL && !hit && (e = readdir(d)) != NULL) {
		struct stat st;

		if (!is_number(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		hit = stat(path, &st) == 0 && same_target(&st, target) &&
		      (!writers_only || fd_writes(pid, e->d_name));
	}
	if (d != NULL)
		closedir(d);
	return hit;
}

static void read_comm(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The first process but this one that uses target (for writing with
 * writers_only) and, when also is not NULL, also that. */
static int find_user(const struct stat *target, bool writers_only,
		     const struct stat *also, struct procfd_user *u)
{
	struct dirent *e;
	int found = 0;
	DIR *d = opendir("/proc");

	if (d == NULL)
		return -errno;
	while (!found && (e = readdir(d)) != NULL) {
		int pid = is_number(e->d_name) ? atoi(e->d_name) : 0;

		if (pid <= 0 || pid == (int)getpid() ||
		    !process_uses(pid, target, writers_only) ||
		    (also != NULL && !process_uses(pid, also, false)))
			continue;
		u->pid = pid;
		read_comm(pid, u->comm, sizeof(u->comm));
		found = 1;
	}
	closedir(d);
	return found;
}

int procfd_find_user(const struct stat *target, bool writers_only,
		     struct procfd_user *u)
{
	return find_user(target, writers_only, NULL, u);
}

int procfd_find_fuse_writer(const struct stat *target, struct procfd_user *u)
{
	struct stat fuse;

	if (stat("/dev/fuse", &fuse) != 0 || !S_ISCHR(fuse.st_mode))
		return 0;	/* no FUSE here, so no server */
	return find_user(target, true, &fuse, u);
}

bool procfd_runs_command(int pid, const char *word)
{
	char path[64], args[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, args, sizeof(args) - 1);
	close(fd);
	if (n <= 0)
		return false;
	args[n] = '\0';	/* the arguments end in NULs; a cut one ends here */
	for (char *a = args + strlen(args) + 1; a < args + n; a += strlen(a) + 1)
		if (a[0] != '-')
			return strcmp(a, word) == 0;
	return false;
}

void procfd_describe(const struct procfd_user *u, char *buf, size_t len)
{
	if (u->comm[0] != '\0')
		snprintf(buf, len, "'%s' (pid %d)", u->comm, u->pid);
	else
		snprintf(buf, len, "pid %d", u->pid);
}
