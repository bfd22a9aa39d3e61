/* util.c - see util.h. */
#define _GNU_SOURCE	/* statx() */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

uint64_t util_round_up(uint64_t x, uint64_t unit)
{
	return (x + unit - 1) / unit * unit;
}

uint64_t util_pow2_factor(uint64_t x)
{
	return x & (~x + 1);
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
 * position; out says which way.  A read that gets nothing is the end of
 * the file, a write that takes nothing is -EIO. */
static ssize_t full_io(int fd, char *p, size_t n, int64_t at, bool out)
{
	size_t done = 0;

	while (done < n) {
		off_t o = (off_t)at + (off_t)done;
		ssize_t r = out ? (at < 0 ? write(fd, p + done, n - done) :
				   pwrite(fd, p + done, n - done, o)) :
				  (at < 0 ? read(fd, p + done, n - done) :
				   pread(fd, p + done, n - done, o));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return out ? -EIO : (ssize_t)done;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

ssize_t util_read_full(int fd, void *buf, size_t n)
{
	return full_io(fd, buf, n, -1, false);
}

ssize_t util_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	return full_io(fd, buf, n, (int64_t)off, false);
}

/* full_io() only reads from buf when out is true. */
int util_write_full(int fd, const void *buf, size_t n)
{
	ssize_t rc = full_io(fd, (char *)buf, n, -1, true);

	return rc < 0 ? (int)rc : 0;
}

int util_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
	ssize_t rc = full_io(fd, (char *)buf, n, (int64_t)off, true);

	return rc < 0 ? (int)rc : 0;
}

size_t util_chunk_ladder(uint64_t erase, uint64_t block, uint32_t sector,
			 uint64_t *chunk, size_t max)
{
	size_t n = 0;

	for (uint64_t c = erase; c >= block && n < max; c /= 2) {
		if (c % sector || erase % c)
			break;
		if (chunk)
			chunk[n] = c;
		n++;
		if (c % 2)
			break;
	}
	return n;
}

bool util_wbuf_may_hide(uint64_t written, const char *what, char *note, size_t len)
{
	if (written >= FP_WBUF_HIDE_BYTES)
		return false;
	snprintf(note, len, "no %s in the %llu MiB written: a write buffer larger "
		 "than that would look the same", what, (unsigned long long)(written >> 20));
	return true;
}

bool util_is_one_byte(const void *p, size_t len)
{
	const unsigned char *b = p;

	return len == 0 || memcmp(b, b + 1, len - 1) == 0;
}

bool util_is_fill(const void *p, size_t len)
{
	return len == 0 || (*(const unsigned char *)p == FP_FILL_BYTE && util_is_one_byte(p, len));
}

bool util_is_test_block(const void *p, size_t len)
{
	return len >= FP_TEST_BLOCK_MAGIC_BYTES &&
	       memcmp(p, FP_TEST_BLOCK_MAGIC, FP_TEST_BLOCK_MAGIC_BYTES) == 0;
}

void util_mark_test_pieces(void *p, size_t len)
{
	for (size_t at = 0; at + FP_TEST_PIECE_BYTES <= len; at += FP_TEST_PIECE_BYTES)
		memcpy((char *)p + at, FP_TEST_BLOCK_MAGIC, FP_TEST_BLOCK_MAGIC_BYTES);
}

bool util_is_test_data(const void *p, size_t len)
{
	const char *b = p;

	if (len % FP_TEST_PIECE_BYTES != 0)
		return false;
	for (size_t at = 0; at < len; at += FP_TEST_PIECE_BYTES)
		if (!util_is_test_block(b + at, FP_TEST_PIECE_BYTES) &&
		    !util_is_fill(b + at, FP_TEST_PIECE_BYTES))
			return false;
	return true;
}

void util_dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

uint64_t util_birth_ns(int dirfd, const char *path, int flags)
{
	struct statx stx;

	if (statx(dirfd, path, flags, STATX_BTIME, &stx) != 0 ||
	    !(stx.stx_mask & STATX_BTIME) || stx.stx_btime.tv_sec < 0)
		return 0;
	return (uint64_t)stx.stx_btime.tv_sec * 1000000000u +
	       stx.stx_btime.tv_nsec;
}

void util_fputs_visible(const char *s, FILE *f)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}
