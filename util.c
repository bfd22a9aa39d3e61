/* util.c - see util.h. */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

uint64_t util_round_up(uint64_t x, uint64_t unit)
{
	return (x + unit - 1) / unit * unit;
}

void util_copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* One loop for all four: at is the file offset, or -1 for the file's own
 * position. */
static ssize_t read_loop(int fd, void *buf, size_t n, int64_t at)
{
	char *p = buf;
	size_t done = 0;

	while (done < n) {
		ssize_t r = at < 0 ? read(fd, p + done, n - done) :
			    pread(fd, p + done, n - done, (off_t)at + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static int write_loop(int fd, const void *buf, size_t n, int64_t at)
{
	const char *p = buf;
	size_t done = 0;

	while (done < n) {
		ssize_t w = at < 0 ? write(fd, p + done, n - done) :
			    pwrite(fd, p + done, n - done, (off_t)at + (off_t)done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		done += (size_t)w;
	}
	return 0;
}

ssize_t util_read_full(int fd, void *buf, size_t n)
{
	return read_loop(fd, buf, n, -1);
}

ssize_t util_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	return read_loop(fd, buf, n, (int64_t)off);
}

int util_write_full(int fd, const void *buf, size_t n)
{
	return write_loop(fd, buf, n, -1);
}

int util_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
	return write_loop(fd, buf, n, (int64_t)off);
}
