/* sysfs.c - see sysfs.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sysfs.h"
#include "util.h"

const struct sysfs_roots sysfs_roots_default = { "/sys", "/proc" };

int sysfs_join(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int sysfs_read_raw(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err;

	err = sysfs_join(path, sizeof(path), dir, name);
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = util_read_full(fd, buf, len);
	close(fd);
	if (n < 0)
		return (int)n;
	if ((size_t)n == len)
		return -EOVERFLOW;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

int sysfs_read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	size_t got, start = 0;
	int err = sysfs_read_raw(dir, name, buf, len);

	if (err)
		return err;
	got = strlen(buf);
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' ' ||
			   buf[got - 1] == '\t' || buf[got - 1] == '\r'))
		buf[--got] = '\0';
	while (buf[start] == ' ' || buf[start] == '\t')
		start++;
	if (start)
		memmove(buf, buf + start, got - start + 1);
	return 0;
}

int sysfs_block_dir(const char *root, unsigned major, unsigned minor,
		    char *dir, size_t len)
{
	char link[PATH_MAX];
	int n = snprintf(link, sizeof(link), "%s/dev/block/%u:%u", root, major,
			 minor);

	if (n < 0 || (size_t)n >= sizeof(link) || len < PATH_MAX)
		return -ENAMETOOLONG;
	return realpath(link, dir) != NULL ? 0 : -errno;
}

bool sysfs_is_partition(const char *dir)
{
	char path[PATH_MAX];

	return sysfs_join(path, sizeof(path), dir, "partition") == 0 &&
	       access(path, F_OK) == 0;
}

int sysfs_disk_devno(const char *root, unsigned major, unsigned minor,
		     unsigned *dmajor, unsigned *dminor)
{
	char dir[PATH_MAX], num[32];
	int rc = sysfs_block_dir(root, major, minor, dir, sizeof(dir));

	*dmajor = major;
	*dminor = minor;
	if (rc < 0 || !sysfs_is_partition(dir))
		return rc;
	*strrchr(dir, '/') = '\0';
	rc = sysfs_read_attr(dir, "dev", num, sizeof(num));
	if (rc == 0 && sscanf(num, "%u:%u", dmajor, dminor) != 2)
		rc = -EINVAL;
	return rc;
}

int sysfs_device_serial(const char *root, const char *path, char *buf,
			size_t len)
{
	static const char *const keys[] = {
		"device/serial", "device/cid", "device/wwid", "wwid",
	};
	char dir[PATH_MAX], line[512];
	struct stat st;
	int rc;

	buf[0] = '\0';
	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	rc = sysfs_block_dir(root, major(st.st_rdev), minor(st.st_rdev), dir,
			     sizeof(dir));
	if (rc < 0)
		return rc;
	if (sysfs_is_partition(dir))
		*strrchr(dir, '/') = '\0';
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (sysfs_read_attr(dir, keys[i], line, sizeof(line)) == 0 &&
		    line[0] != '\0') {
			snprintf(buf, len, "%s", line);
			return 0;
		}
	}
	return 0;
}
