/* journal.c - back up the test area, restore it afterwards, survive crashes.
 *
 * Protocol (the order is what makes it crash-safe):
 *   1. create the journal (O_EXCL), write the header, fsync file and
 *      directory; for a non-default path, leave a pointer symlink at the
 *      default path so later runs find it;
 *   2. copy every range about to be written into data records, append a
 *      commit record, fsync: only now may the device be written;
 *   3. after the test, replay the records, read each range back and compare
 *      it, then delete the journal and the pointer.
 * A crash in 1 or 2 leaves the device untouched and the journal without a
 * final commit; a crash in or after the test leaves a committed journal
 * that restores everything.  Records never overlap (a range is saved
 * once), so the replay order does not matter.
 *
 * Every record and the header carry a CRC32C, so a truncated or corrupted
 * journal is detected; it is refused unless forced, and even then only
 * intact records before the damage are replayed.  Memory stays at two
 * 1 MiB buffers whatever the size of the backup.
 *
 * The backup itself is I/O the measurement must not see: the intended use
 * is journal_backup_area() over the test's planned area before the test;
 * a write outside it is still backed up first, with the time it took
 * subtracted from the decorator's clock.
 */
#define _XOPEN_SOURCE 700	/* realpath(), symlinks: POSIX 2008 + XSI */
#define _FILE_OFFSET_BITS 64

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "clock.h"
#include "dev.h"
#include "journal.h"
#include "safety.h"
#include "units.h"

#define JR_HEADER_BYTES 2048u
#define JR_REC_BYTES 40u
#define JR_REC_MAGIC 0x524a5046u	/* "FPJR" */
#define JR_REC_DATA 1u
#define JR_REC_COMMIT 2u
#define JR_PATH_MAX 1024
#define JR_SERIAL_MAX 256
#define JR_LINK_MAX 512
#define JR_NAME_MAX 150		/* sanitized part of a default file name */

/* Header field offsets. */
enum {
	H_MAGIC = 0, H_VERSION = 8, H_HDRLEN = 12, H_KIND = 16, H_SECTOR = 20,
	H_SIZE = 24, H_MAJOR = 32, H_MINOR = 36, H_FDEV = 40, H_FINO = 48,
	H_CREATED = 56, H_RECMAX = 64, H_PATH = 72,
	H_SERIAL = H_PATH + JR_PATH_MAX, H_LINK = H_SERIAL + JR_SERIAL_MAX,
	H_CRC = JR_HEADER_BYTES - 4,
};

/* Record field offsets. */
enum {
	R_MAGIC = 0, R_TYPE = 4, R_SEQ = 8, R_OFF = 16, R_LEN = 24,
	R_DATACRC = 32, R_CRC = 36,
};

/* What identifies the device a journal belongs to. */
struct jr_identity {
	uint32_t kind;			/* enum fp_dev_kind */
	uint32_t sector_bytes;
	uint64_t size_bytes;
	uint32_t major, minor;		/* block devices */
	uint64_t file_dev, file_ino;	/* regular files */
	char path[JR_PATH_MAX];
	char serial[JR_SERIAL_MAX];	/* serial, CID, WWID, loop file */
};

struct jr_header {
	struct jr_identity id;
	uint64_t created_unix;
	uint32_t record_max;
	char link[JR_LINK_MAX];		/* pointer symlink, or "" */
};

struct jr_record {
	uint32_t type;
	uint64_t seq;
	uint64_t offset;		/* commit: number of data records */
	uint64_t length;		/* commit: their total bytes */
	uint32_t data_crc;
};

struct jr_span {
	uint64_t start, end;
};

/* Byte ranges, sorted and merged. */
struct jr_spanset {
	struct jr_span *v;
	size_t n, cap;
};

/* The decorator's state. */
struct journal {
	struct fp_dev *inner;
	struct fp_dev *outer;		/* the decorator itself: its write area */
	int fd;				/* journal file; -1 once finished */
	char *path;
	char link[JR_LINK_MAX];
	void *buf;			/* one record of data */
	uint64_t seq;			/* next record number */
	uint64_t ndata, data_bytes;	/* data records written */
	uint64_t committed_size;	/* file size at the last commit */
	uint64_t committed_seq;		/* seq, ndata, data_bytes then */
	uint64_t committed_ndata, committed_bytes;
	struct jr_spanset saved;	/* committed: may be written */
	struct jr_spanset pending;	/* in records not committed yet */
	uint64_t hidden_ns;		/* backup time taken off the clock */
	bool dirty;			/* the device has been written */
	bool torn;			/* an append failed since the commit */
	bool finished;
	char last_err[256];
};


/* Copy src into dst of len bytes, cutting it if it does not fit. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n > len - 1)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- CRC32C (Castagnoli), the checksum of iSCSI, ext4 and btrfs ---- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	if (crc_table[1] != 0)
		return;
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32c(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t c = 0xffffffffu;

	crc_init();
	while (n-- > 0)
		c = crc_table[(c ^ *b++) & 0xff] ^ (c >> 8);
	return ~c;
}

/* ---- little-endian fields ---- */

static void put32(unsigned char *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *b)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static uint64_t get64(const unsigned char *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

/* A NUL-terminated string field of len bytes (always terminated). */
static void put_str(unsigned char *b, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (n > len - 1)
		n = len - 1;
	memcpy(b, s, n);
	memset(b + n, 0, len - n);
}

static void get_str(char *dst, const unsigned char *b, size_t len)
{
	memcpy(dst, b, len);
	dst[len - 1] = '\0';
}

/* ---- plain file I/O ---- */

static int write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Bytes read (fewer than n only at end of file) or a negative errno. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	size_t done = 0;

	while (done < n) {
		ssize_t r = read(fd, p + done, n - done);

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

/* The directory part of path, "." when there is none. */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* A new or removed directory entry is durable only once the directory
 * itself is fsync'ed. */
static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc = 0;

	dir_of(path, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Absolute path of a file that may not exist yet: its directory resolved,
 * its name kept. */
static int abs_path(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');

	dir_of(path, dir, sizeof(dir));
	if (realpath(dir, real) == NULL)
		return -errno;
	if ((size_t)snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "",
			     slash ? slash + 1 : path) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- device identity ---- */

static bool is_sim(const char *spec)
{
	return strncmp(spec, "sim:", 4) == 0;
}

/* Identity from a path (size and sector size are left 0). */
static int identity_of_path(const char *path, struct jr_identity *id)
{
	char real[PATH_MAX];
	struct stat st;

	memset(id, 0, sizeof(*id));
	copy_str(id->path, sizeof(id->path), path);
	if (is_sim(path)) {
		id->kind = FP_DEV_SIM;
		return 0;
	}
	if (stat(path, &st) != 0)
		return -errno;
	/* Absolute, so "flashprobe restore JOURNAL" works from anywhere. */
	if (realpath(path, real) != NULL)
		copy_str(id->path, sizeof(id->path), real);
	if (S_ISBLK(st.st_mode)) {
		id->kind = FP_DEV_BLOCK;
		id->major = major(st.st_rdev);
		id->minor = minor(st.st_rdev);
		safety_device_serial(path, id->serial, sizeof(id->serial));
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		id->kind = FP_DEV_FILE;
		id->file_dev = (uint64_t)st.st_dev;
		id->file_ino = (uint64_t)st.st_ino;
		return 0;
	}
	return -ENOTBLK;
}

static int identity_of_dev(struct fp_dev *d, struct jr_identity *id)
{
	int rc = identity_of_path(fp_dev_path(d), id);

	id->kind = fp_dev_kind(d);
	id->size_bytes = fp_dev_size_bytes(d);
	id->sector_bytes = fp_dev_sector_bytes(d);
	return rc;
}

/* The same device, whatever its size: a serial beats a device number
 * (numbers change when a card is plugged in again). */
static bool same_device(const struct jr_identity *a,
			const struct jr_identity *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case FP_DEV_SIM:
		return strcmp(a->path, b->path) == 0;
	case FP_DEV_FILE:
		return a->file_dev == b->file_dev && a->file_ino == b->file_ino;
	default:
		if (a->serial[0] != '\0' && b->serial[0] != '\0')
			return strcmp(a->serial, b->serial) == 0;
		return a->major == b->major && a->minor == b->minor;
	}
}

static bool identity_match(const struct jr_identity *a,
			   const struct jr_identity *b)
{
	return same_device(a, b) && a->size_bytes == b->size_bytes &&
	       a->sector_bytes == b->sector_bytes;
}

static void identity_describe(const struct jr_identity *id, char *buf,
			      size_t len)
{
	char size[32];

	units_format_bytes(id->size_bytes, size, sizeof(size));
	if (id->kind == FP_DEV_BLOCK)
		fp_errf(buf, len, "'%s' (%u:%u, %s%s%s)", id->path, id->major,
		    id->minor, size, id->serial[0] ? ", " : "", id->serial);
	else
		fp_errf(buf, len, "'%s' (%s)", id->path, size);
}

/* ---- header and records ---- */

static void header_encode(const struct jr_header *h, unsigned char *b)
{
	const struct jr_identity *id = &h->id;

	memset(b, 0, JR_HEADER_BYTES);
	memcpy(b + H_MAGIC, JOURNAL_MAGIC, 8);
	put32(b + H_VERSION, JOURNAL_VERSION);
	put32(b + H_HDRLEN, JR_HEADER_BYTES);
	put32(b + H_KIND, id->kind);
	put32(b + H_SECTOR, id->sector_bytes);
	put64(b + H_SIZE, id->size_bytes);
	put32(b + H_MAJOR, id->major);
	put32(b + H_MINOR, id->minor);
	put64(b + H_FDEV, id->file_dev);
	put64(b + H_FINO, id->file_ino);
	put64(b + H_CREATED, h->created_unix);
	put32(b + H_RECMAX, h->record_max);
	put_str(b + H_PATH, JR_PATH_MAX, id->path);
	put_str(b + H_SERIAL, JR_SERIAL_MAX, id->serial);
	put_str(b + H_LINK, JR_LINK_MAX, h->link);
	put32(b + H_CRC, crc32c(b, H_CRC));
}

static int header_decode(const unsigned char *b, struct jr_header *h,
			 const char **why)
{
	struct jr_identity *id = &h->id;

	if (memcmp(b + H_MAGIC, JOURNAL_MAGIC, 8) != 0) {
		*why = "not a flashprobe journal";
		return -EBADMSG;
	}
	if (get32(b + H_VERSION) != JOURNAL_VERSION ||
	    get32(b + H_HDRLEN) != JR_HEADER_BYTES) {
		*why = "unsupported journal version";
		return -EBADMSG;
	}
	if (get32(b + H_CRC) != crc32c(b, H_CRC)) {
		*why = "header checksum mismatch";
		return -EBADMSG;
	}
	memset(h, 0, sizeof(*h));
	id->kind = get32(b + H_KIND);
	id->sector_bytes = get32(b + H_SECTOR);
	id->size_bytes = get64(b + H_SIZE);
	id->major = get32(b + H_MAJOR);
	id->minor = get32(b + H_MINOR);
	id->file_dev = get64(b + H_FDEV);
	id->file_ino = get64(b + H_FINO);
	h->created_unix = get64(b + H_CREATED);
	h->record_max = get32(b + H_RECMAX);
	get_str(id->path, b + H_PATH, JR_PATH_MAX);
	get_str(id->serial, b + H_SERIAL, JR_SERIAL_MAX);
	get_str(h->link, b + H_LINK, JR_LINK_MAX);
	if (id->sector_bytes == 0 || h->record_max == 0 ||
	    h->record_max > JOURNAL_RECORD_MAX_BYTES) {
		*why = "header has impossible values";
		return -EBADMSG;
	}
	return 0;
}

static void record_encode(const struct jr_record *r, unsigned char *b)
{
	put32(b + R_MAGIC, JR_REC_MAGIC);
	put32(b + R_TYPE, r->type);
	put64(b + R_SEQ, r->seq);
	put64(b + R_OFF, r->offset);
	put64(b + R_LEN, r->length);
	put32(b + R_DATACRC, r->data_crc);
	put32(b + R_CRC, crc32c(b, R_CRC));
}

static bool record_decode(const unsigned char *b, struct jr_record *r)
{
	if (get32(b + R_MAGIC) != JR_REC_MAGIC ||
	    get32(b + R_CRC) != crc32c(b, R_CRC))
		return false;
	r->type = get32(b + R_TYPE);
	r->seq = get64(b + R_SEQ);
	r->offset = get64(b + R_OFF);
	r->length = get64(b + R_LEN);
	r->data_crc = get32(b + R_DATACRC);
	return true;
}

/* Journals are replayed onto disks, and /var/tmp is writable by
 * everyone: only a regular file of ours (or root's) that nobody else may
 * write is believed.  O_NONBLOCK keeps a planted FIFO from hanging us. */
static int open_trusted(const char *path, int *fdp, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int rc;

	if (fd < 0) {
		rc = -errno;
		fp_errf(err, errlen, "cannot open journal '%s': %s", path,
		    strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		fp_errf(err, errlen, "refusing journal '%s': not a regular file "
		    "owned by this user and writable only by it", path);
		close(fd);
		return -EPERM;
	}
	*fdp = fd;
	return 0;
}

/* Open a journal and read its header; the file offset is left at the
 * first record. */
static int header_read(const char *path, int *fdp, struct jr_header *h,
		       char *err, size_t errlen)
{
	unsigned char b[JR_HEADER_BYTES];
	const char *why = "header is cut short";
	ssize_t n;
	int fd = -1, rc = open_trusted(path, &fd, err, errlen);

	if (rc < 0)
		return rc;
	rc = -EBADMSG;
	n = read_full(fd, b, sizeof(b));
	if (n < 0) {
		rc = (int)n;
		fp_errf(err, errlen, "cannot read journal '%s': %s", path,
		    strerror(-rc));
	} else if (n == (ssize_t)sizeof(b)) {
		rc = header_decode(b, h, &why);
	}
	if (rc == -EBADMSG)
		fp_errf(err, errlen, "cannot use journal '%s': %s", path, why);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*fdp = fd;
	return 0;
}

/* ---- default location ---- */

/* The directory journals go to; creates the state directory. */
static const char *state_dir(void)
{
	const char *env = getenv(JOURNAL_STATE_ENV);
	struct stat st;

	if (env != NULL && env[0] != '\0')
		return env;
	if (mkdir(JOURNAL_STATE_DIR, 0700) == 0 || errno == EEXIST)
		if (stat(JOURNAL_STATE_DIR, &st) == 0 && S_ISDIR(st.st_mode) &&
		    access(JOURNAL_STATE_DIR, W_OK | X_OK) == 0)
			return JOURNAL_STATE_DIR;
	return JOURNAL_FALLBACK_DIR;
}

static uint64_t fnv1a64(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* "flashprobe-<path with / and odd characters as _>"; long paths are cut
 * and made unique with a hash of the whole. */
static void sanitized_name(const char *path, char *buf, size_t len)
{
	char s[JR_NAME_MAX + 1];
	size_t n = 0;

	for (const char *p = path; *p != '\0' && n < JR_NAME_MAX; p++) {
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '.' || *p == '-';

		if (n == 0 && *p == '/')
			continue;
		s[n++] = ok ? *p : '_';
	}
	s[n] = '\0';
	if (strlen(path) > JR_NAME_MAX)
		snprintf(buf, len, "flashprobe-%s-%016llx.journal", s,
			 (unsigned long long)fnv1a64(path));
	else
		snprintf(buf, len, "flashprobe-%s.journal", s);
}

static int default_name(const char *device, char *buf, size_t len)
{
	char real[PATH_MAX];
	struct stat st;

	if (is_sim(device)) {
		sanitized_name(device, buf, len);
		return 0;
	}
	if (stat(device, &st) != 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		snprintf(buf, len, "flashprobe-%u-%u.journal",
			 major(st.st_rdev), minor(st.st_rdev));
		return 0;
	}
	sanitized_name(realpath(device, real) ? real : device, buf, len);
	return 0;
}

int journal_default_path(const char *device, char *buf, size_t len,
			 char *err, size_t errlen)
{
	char name[NAME_MAX + 1];
	int rc;

	if (device == NULL || buf == NULL)
		return -EINVAL;
	rc = default_name(device, name, sizeof(name));
	if (rc < 0) {
		fp_errf(err, errlen, "cannot open '%s': %s", device, strerror(-rc));
		return rc;
	}
	if ((size_t)snprintf(buf, len, "%s/%s", state_dir(), name) >= len) {
		fp_errf(err, errlen, "journal path for '%s' is too long", device);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* ---- where the journal may live ---- */

static int check_location_block(const char *journal_path, const char *device,
				const struct stat *dirst, char *err,
				size_t errlen)
{
	int rc = safety_dev_on_disk(device, major(dirst->st_dev),
				    minor(dirst->st_dev));

	if (rc == 1) {
		fp_errf(err, errlen, "journal '%s' would be on the device under test "
		    "'%s'; choose another place with --journal", journal_path,
		    device);
		return -EINVAL;
	}
	if (rc < 0)
		fp_errf(err, errlen, "cannot check where journal '%s' is: %s",
		    journal_path, strerror(-rc));
	return rc;
}

static int check_location_file(const char *journal_path, const char *device,
			       const struct stat *devst, char *err,
			       size_t errlen)
{
	char ja[PATH_MAX], da[PATH_MAX];
	struct stat jst;

	if ((stat(journal_path, &jst) == 0 && jst.st_dev == devst->st_dev &&
	     jst.st_ino == devst->st_ino) ||
	    (abs_path(journal_path, ja, sizeof(ja)) == 0 &&
	     realpath(device, da) != NULL && strcmp(ja, da) == 0)) {
		fp_errf(err, errlen, "journal '%s' is the device under test itself",
		    journal_path);
		return -EINVAL;
	}
	return 0;
}

int journal_check_location(const char *journal_path, const char *device,
			   char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct stat dirst, devst;
	int rc;

	if (journal_path == NULL || device == NULL || journal_path[0] == '\0')
		return -EINVAL;
	if (is_sim(device))
		return 0;
	dir_of(journal_path, dir, sizeof(dir));
	if (stat(dir, &dirst) != 0 || stat(device, &devst) != 0) {
		rc = -errno;
		fp_errf(err, errlen, "cannot use journal '%s': %s", journal_path,
		    strerror(-rc));
		return rc;
	}
	if (S_ISBLK(devst.st_mode))
		return check_location_block(journal_path, device, &dirst, err,
					    errlen);
	return check_location_file(journal_path, device, &devst, err, errlen);
}

/* ---- writing the journal ---- */

static const struct fp_dev_ops journal_ops;

static struct journal *journal_of(const struct fp_dev *d)
{
	if (d == NULL || fp_dev_ops_of(d) != &journal_ops)
		return NULL;
	return fp_dev_priv(d);
}

static int append(struct journal *j, const struct jr_record *r,
		  const void *data)
{
	unsigned char b[JR_REC_BYTES];
	int rc;

	record_encode(r, b);
	rc = write_full(j->fd, b, sizeof(b));
	if (rc == 0 && r->type == JR_REC_DATA)
		rc = write_full(j->fd, data, (size_t)r->length);
	if (rc < 0)
		j->torn = true;
	else
		j->seq++;
	return rc;
}

static int spans_reserve(struct jr_spanset *set, size_t more)
{
	size_t cap = set->cap ? set->cap : 16;
	struct jr_span *v;

	while (cap < set->n + more)
		cap *= 2;
	if (cap == set->cap)
		return 0;
	v = realloc(set->v, cap * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	set->v = v;
	set->cap = cap;
	return 0;
}

/* Add [start, end), merging with every span it touches.  Needs room for
 * one more span (spans_reserve). */
static void spans_add(struct jr_spanset *set, uint64_t start, uint64_t end)
{
	size_t i = 0, k;

	while (i < set->n && set->v[i].end < start)
		i++;
	k = i;
	while (k < set->n && set->v[k].start <= end) {
		if (set->v[k].start < start)
			start = set->v[k].start;
		if (set->v[k].end > end)
			end = set->v[k].end;
		k++;
	}
	if (k == i)
		memmove(&set->v[i + 1], &set->v[i],
			(set->n - i) * sizeof(*set->v));
	else if (k > i + 1)
		memmove(&set->v[i + 1], &set->v[k],
			(set->n - k) * sizeof(*set->v));
	set->n = set->n + 1 - (k - i);
	set->v[i].start = start;
	set->v[i].end = end;
}

/* Move cur past every span of set that contains it. */
static bool spans_skip(const struct jr_spanset *set, uint64_t *cur)
{
	for (size_t i = 0; i < set->n; i++) {
		if (set->v[i].start <= *cur && *cur < set->v[i].end) {
			*cur = set->v[i].end;
			return true;
		}
	}
	return false;
}

static void spans_clip(const struct jr_spanset *set, uint64_t cur,
		       uint64_t *ge)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].start > cur && set->v[i].start < *ge)
			*ge = set->v[i].start;
}

/* The first range in [from, end) in no record yet, committed or not. */
static bool spans_gap(const struct journal *j, uint64_t from, uint64_t end,
		      uint64_t *gs, uint64_t *ge)
{
	uint64_t cur = from;

	while (spans_skip(&j->saved, &cur) || spans_skip(&j->pending, &cur))
		;
	if (cur >= end)
		return false;
	*gs = cur;
	*ge = end;
	spans_clip(&j->saved, cur, ge);
	spans_clip(&j->pending, cur, ge);
	return true;
}

/* A torn tail (disk full, I/O error) is cut back to the last commit so
 * the journal stays valid; the device was not written for any of it, and
 * its ranges count as unsaved again. */
static void cut_torn_tail(struct journal *j)
{
	if (!j->torn)
		return;
	if (ftruncate(j->fd, (off_t)j->committed_size) != 0 ||
	    lseek(j->fd, (off_t)j->committed_size, SEEK_SET) < 0 ||
	    fsync(j->fd) != 0)
		return;
	j->torn = false;
	j->seq = j->committed_seq;
	j->ndata = j->committed_ndata;
	j->data_bytes = j->committed_bytes;
	j->pending.n = 0;
}

/* Append a commit for every record so far and fsync: from now on the
 * pending ranges may be written on the device. */
static int commit(struct journal *j)
{
	struct jr_record r = {
		.type = JR_REC_COMMIT, .seq = j->seq, .offset = j->ndata,
		.length = j->data_bytes,
	};
	off_t end;
	int rc;

	/* Room first: once committed, merging must not fail, or a range
	 * would be saved twice, the second time with test data in it. */
	rc = spans_reserve(&j->saved, j->pending.n);
	if (rc == 0)
		rc = append(j, &r, NULL);
	if (rc == 0 && fsync(j->fd) != 0) {
		rc = -errno;
		j->torn = true;
	}
	end = rc == 0 ? lseek(j->fd, 0, SEEK_CUR) : -1;
	if (rc == 0 && end < 0) {
		rc = -errno;
		j->torn = true;
	}
	if (rc < 0)
		return rc;
	j->committed_size = (uint64_t)end;
	j->committed_seq = j->seq;
	j->committed_ndata = j->ndata;
	j->committed_bytes = j->data_bytes;
	for (size_t i = 0; i < j->pending.n; i++)
		spans_add(&j->saved, j->pending.v[i].start,
			  j->pending.v[i].end);
	j->pending.n = 0;
	return 0;
}

/* Copy [start, end) of the device into data records (not committed). */
static int save_range(struct journal *j, uint64_t start, uint64_t end,
		      bool interruptible)
{
	for (uint64_t off = start; off < end;) {
		uint64_t n = end - off < JOURNAL_RECORD_MAX_BYTES ?
			     end - off : JOURNAL_RECORD_MAX_BYTES;
		struct jr_record r = { .type = JR_REC_DATA, .seq = j->seq,
				       .offset = off, .length = n };
		int rc;

		if (interruptible && safety_interrupted())
			return -EINTR;
		rc = fp_dev_read_timed(j->inner, j->buf, (size_t)n, off, NULL);
		if (rc < 0) {
			fp_errf(j->last_err, sizeof(j->last_err), "cannot back up "
			    "'%s' at byte %llu: %s", fp_dev_path(j->inner),
			    (unsigned long long)off, strerror(-rc));
			return rc;
		}
		r.data_crc = crc32c(j->buf, (size_t)n);
		rc = spans_reserve(&j->pending, 1);
		if (rc == 0)
			rc = append(j, &r, j->buf);
		if (rc < 0) {
			fp_errf(j->last_err, sizeof(j->last_err), "cannot write "
			    "journal '%s': %s", j->path, strerror(-rc));
			return rc;
		}
		spans_add(&j->pending, off, off + n);
		j->ndata++;
		j->data_bytes += n;
		off += n;
	}
	return 0;
}

/* Save every unsaved part of [start, end) and commit it.  What was saved
 * is committed even when a later part fails (a read error), so the
 * journal stays valid; a failed append is cut off again.  The time spent
 * is hidden from the decorator's clock. */
static int save_missing(struct journal *j, uint64_t start, uint64_t end,
			bool interruptible)
{
	uint64_t t0 = fp_dev_now_ns(j->inner), gs, ge, t1;
	int rc = 0, crc;
	bool rt_held = false;

	cut_torn_tail(j);
	if (j->torn)
		return -EIO;
	/* A backup is not timed: no real-time priority for it.  Most writes
	 * find their block saved already and switch nothing. */
	if (spans_gap(j, start, end, &gs, &ge))
		rt_held = fp_dev_rt_suspend();
	while (rc == 0 && spans_gap(j, start, end, &gs, &ge))
		rc = save_range(j, gs, ge, interruptible);
	if (!j->torn && j->seq != j->committed_seq) {
		crc = commit(j);
		if (crc < 0)
			j->torn = true;	/* cut the uncommitted records */
		if (crc < 0 && rc == 0) {
			fp_errf(j->last_err, sizeof(j->last_err), "cannot write "
			    "journal '%s': %s", j->path, strerror(-crc));
			rc = crc;
		}
	}
	if (j->torn) {
		cut_torn_tail(j);
		if (rc == 0)
			rc = -EIO;
	}
	fp_dev_rt_resume(rt_held);
	t1 = fp_dev_now_ns(j->inner);
	j->hidden_ns += t1 > t0 ? t1 - t0 : 0;
	return rc;
}

/* ---- the decorator ---- */

static int jdev_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct journal *j = priv;

	if (safety_interrupted())
		return -EINTR;
	return fp_dev_ops_of(j->inner)->pread(fp_dev_priv(j->inner), buf, len,
					      off);
}

/* Ranges saved on the fly are widened to whole JOURNAL_SAVE_GRAIN_BYTES
 * blocks, within the write area (nothing outside it can be written): a
 * test writing small chunks then pays one backup (and one fsync) per block
 * instead of one per chunk. */
static void save_bounds(const struct journal *j, uint64_t off, uint64_t end,
			uint64_t *from, uint64_t *to)
{
	uint64_t lo = 0, hi = fp_dev_size_bytes(j->inner);

	if (j->outer)
		fp_dev_write_area(j->outer, &lo, &hi);
	*from = off / JOURNAL_SAVE_GRAIN_BYTES * JOURNAL_SAVE_GRAIN_BYTES;
	*to = (end + JOURNAL_SAVE_GRAIN_BYTES - 1) / JOURNAL_SAVE_GRAIN_BYTES *
	      JOURNAL_SAVE_GRAIN_BYTES;
	*from = *from > lo ? *from : lo;
	*to = *to < hi ? *to : hi;
}

static int jdev_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct journal *j = priv;
	const struct fp_dev_ops *ops = fp_dev_ops_of(j->inner);
	uint64_t from, to;
	int rc;

	if (safety_interrupted())
		return -EINTR;
	if (j->finished)
		return -EBADF;
	if (ops->pwrite == NULL)
		return -EROFS;
	save_bounds(j, off, off + len, &from, &to);
	rc = save_missing(j, from, to, false);
	if (rc < 0)
		return rc;
	j->dirty = true;
	return ops->pwrite(fp_dev_priv(j->inner), buf, len, off);
}

static uint64_t jdev_now_ns(void *priv)
{
	struct journal *j = priv;

	return fp_dev_now_ns(j->inner) - j->hidden_ns;
}

static void jdev_close(void *priv)
{
	struct journal *j = priv;

	if (j->fd >= 0)
		close(j->fd);
	free(j->saved.v);
	free(j->pending.v);
	free(j->buf);
	free(j->path);
	free(j);
}

static const struct fp_dev_ops journal_ops = {
	.pread = jdev_pread,
	.pwrite = jdev_pwrite,
	.now_ns = jdev_now_ns,
	.close = jdev_close,
};

/* The pointer link at the default path, when the journal is elsewhere;
 * "" for simulated cards, which no later run can find anyway. */
static int pointer_path(struct fp_dev *inner, const char *journal_abs,
			char *link, size_t len, char *err, size_t errlen)
{
	char def[PATH_MAX], def_abs[PATH_MAX];
	int rc;

	link[0] = '\0';
	if (fp_dev_kind(inner) == FP_DEV_SIM)
		return 0;
	rc = journal_default_path(fp_dev_path(inner), def, sizeof(def), err,
				  errlen);
	if (rc < 0)
		return rc;
	if (abs_path(def, def_abs, sizeof(def_abs)) != 0)
		snprintf(def_abs, sizeof(def_abs), "%s", def);
	if (strcmp(def_abs, journal_abs) != 0)
		copy_str(link, len, def_abs);
	return 0;
}

static int create_pointer(const char *journal_abs, const char *link,
			  const char *device, char *err, size_t errlen)
{
	int rc;

	if (link[0] == '\0')
		return 0;
	if (symlink(journal_abs, link) != 0) {
		rc = -errno;
		if (rc == -EEXIST)
			fp_errf(err, errlen, "a journal for '%s' already exists at "
			    "'%s'; replay it with 'flashprobe restore'", device,
			    link);
		else
			fp_errf(err, errlen, "cannot create journal pointer '%s': %s",
			    link, strerror(-rc));
		return rc;
	}
	return fsync_dir_of(link);
}

/* Create the file, write and fsync the header and its directory entry. */
static int create_file(const char *path, const struct jr_header *h,
		       const char *device, char *err, size_t errlen)
{
	unsigned char b[JR_HEADER_BYTES];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		      0600);
	int rc;

	if (fd < 0) {
		rc = -errno;
		if (rc == -EEXIST)
			fp_errf(err, errlen, "journal '%s' already exists; replay it "
			    "with 'flashprobe restore' first", path);
		else
			fp_errf(err, errlen, "cannot create journal '%s': %s", path,
			    strerror(-rc));
		return rc;
	}
	header_encode(h, b);
	rc = write_full(fd, b, sizeof(b));
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (rc == 0)
		rc = fsync_dir_of(path);
	if (rc < 0) {
		fp_errf(err, errlen, "cannot write journal '%s' for '%s': %s", path,
		    device, strerror(-rc));
		close(fd);
		unlink(path);
		return rc;
	}
	return fd;
}

static int journal_alloc(struct fp_dev *inner, const char *path, int fd,
			 const char *link, struct fp_dev **out)
{
	struct journal *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return -ENOMEM;
	j->inner = inner;
	j->fd = fd;
	j->committed_size = JR_HEADER_BYTES;	/* the header was fsync'ed */
	snprintf(j->link, sizeof(j->link), "%s", link);
	j->path = strdup(path);
	j->buf = fp_dev_alloc_buf(JOURNAL_RECORD_MAX_BYTES);
	if (j->path != NULL && j->buf != NULL)
		*out = fp_dev_create(&journal_ops, j, fp_dev_kind(inner),
				     fp_dev_path(inner),
				     fp_dev_size_bytes(inner),
				     fp_dev_sector_bytes(inner));
	j->outer = *out;
	if (*out == NULL) {
		j->fd = -1;	/* the caller closes and removes it */
		jdev_close(j);
		return -ENOMEM;
	}
	return 0;
}

int journal_open(struct fp_dev *inner, const char *journal_path,
		 struct fp_dev **out, char *err, size_t errlen)
{
	struct jr_header h = { .record_max = JOURNAL_RECORD_MAX_BYTES };
	char jabs[PATH_MAX];
	int fd, rc;

	if (out != NULL)
		*out = NULL;
	if (inner == NULL || journal_path == NULL || out == NULL)
		return -EINVAL;
	rc = journal_check_location(journal_path, fp_dev_path(inner), err,
				    errlen);
	if (rc < 0)
		return rc;
	rc = abs_path(journal_path, jabs, sizeof(jabs));
	if (rc == 0)
		rc = identity_of_dev(inner, &h.id);
	if (rc < 0) {
		fp_errf(err, errlen, "cannot create journal '%s': %s", journal_path,
		    strerror(-rc));
		return rc;
	}
	rc = pointer_path(inner, jabs, h.link, sizeof(h.link), err, errlen);
	if (rc < 0)
		return rc;
	h.created_unix = (uint64_t)time(NULL);
	fd = create_file(journal_path, &h, fp_dev_path(inner), err, errlen);
	if (fd < 0)
		return fd;
	rc = create_pointer(jabs, h.link, fp_dev_path(inner), err, errlen);
	if (rc == 0)
		rc = journal_alloc(inner, journal_path, fd, h.link, out);
	if (rc < 0) {
		if (rc == -ENOMEM)
			fp_errf(err, errlen, "cannot create journal '%s': %s",
			    journal_path, strerror(ENOMEM));
		if (rc != -EEXIST && h.link[0] != '\0')
			unlink(h.link);
		close(fd);
		unlink(journal_path);
	}
	return rc;
}

/* Enough free space for the records of [start, end) and their headers. */
static int check_space(const struct journal *j, uint64_t bytes, char *err,
		       size_t errlen)
{
	uint64_t need = bytes + (bytes / JOURNAL_RECORD_MAX_BYTES + 2) *
				JR_REC_BYTES;
	char dir[PATH_MAX], a[32], b[32];
	struct statvfs vfs;

	dir_of(j->path, dir, sizeof(dir));
	if (statvfs(dir, &vfs) != 0)
		return 0;	/* unknown: the writes will tell */
	if ((uint64_t)vfs.f_bavail * vfs.f_frsize >= need)
		return 0;
	fp_errf(err, errlen, "not enough space for journal '%s': %s needed, %s "
	    "free", j->path, units_format_bytes(need, a, sizeof(a)),
	    units_format_bytes((uint64_t)vfs.f_bavail * vfs.f_frsize, b,
			       sizeof(b)));
	return -ENOSPC;
}

int journal_backup_area(struct fp_dev *jdev, uint64_t start, uint64_t end,
			char *err, size_t errlen)
{
	struct journal *j = journal_of(jdev);
	uint32_t sector;
	int rc;

	if (j == NULL || j->finished)
		return -EINVAL;
	sector = fp_dev_sector_bytes(jdev);
	if (start >= end || end > fp_dev_size_bytes(jdev) ||
	    start % sector != 0 || end % sector != 0) {
		fp_errf(err, errlen, "cannot back up bytes %llu to %llu of '%s': "
		    "not a sector-aligned range inside the device",
		    (unsigned long long)start, (unsigned long long)end,
		    fp_dev_path(jdev));
		return -EINVAL;
	}
	rc = check_space(j, end - start, err, errlen);
	if (rc < 0)
		return rc;
	rc = save_missing(j, start, end, true);
	if (rc == -EINTR)
		fp_errf(err, errlen, "backup of '%s' interrupted; nothing was "
		    "written", fp_dev_path(jdev));
	else if (rc < 0)
		fp_errf(err, errlen, "%s", j->last_err);
	if (rc < 0)
		return rc;
	return fp_dev_set_write_area(jdev, start, end);
}

const char *journal_path_of(const struct fp_dev *jdev)
{
	const struct journal *j = journal_of(jdev);

	return j != NULL ? j->path : NULL;
}

const char *journal_last_error(const struct fp_dev *jdev)
{
	const struct journal *j = journal_of(jdev);

	return j != NULL ? j->last_err : "";
}

/* ---- reading and replaying ---- */

/* What one pass over the records found. */
struct jr_scan {
	uint64_t ndata, data_bytes;	/* intact data records */
	bool damaged;
	bool torn_tail;			/* cut by a crash while appending */
	char problem[128];
	uint64_t problem_at;		/* byte offset in the journal */
};

typedef int (*jr_record_fn)(void *ctx, const struct jr_record *r,
			    void *data);

static int scan_damaged(struct jr_scan *s, uint64_t at, const char *why)
{
	s->damaged = true;
	s->problem_at = at;
	snprintf(s->problem, sizeof(s->problem), "%s", why);
	return 0;
}

/* A data record's bounds, before its data is read into a bounded buffer. */
static bool data_record_sane(const struct jr_header *h,
			     const struct jr_record *r)
{
	const struct jr_identity *id = &h->id;

	return r->length > 0 && r->length <= h->record_max &&
	       r->length % id->sector_bytes == 0 &&
	       r->offset % id->sector_bytes == 0 &&
	       r->offset <= id->size_bytes &&
	       r->length <= id->size_bytes - r->offset;
}

/* One record at *pos: 1 to go on, 0 at the end or damage, or -errno. */
static int scan_one(int fd, const struct jr_header *h, void *buf,
		    jr_record_fn fn, void *ctx, struct jr_scan *s,
		    uint64_t seq, uint64_t *pos, bool *at_commit)
{
	unsigned char b[JR_REC_BYTES];
	struct jr_record r;
	ssize_t n = read_full(fd, b, sizeof(b));
	int rc;

	if (n <= 0)
		return (int)n;
	if (n < (ssize_t)sizeof(b))
		return scan_damaged(s, *pos, "a record header is cut short");
	if (!record_decode(b, &r))
		return scan_damaged(s, *pos, "a record header fails its "
				    "checksum");
	if (r.seq != seq)
		return scan_damaged(s, *pos, "records out of sequence");
	if (r.type == JR_REC_COMMIT) {
		if (r.offset != s->ndata || r.length != s->data_bytes)
			return scan_damaged(s, *pos, "a commit marker does not "
					    "match the records before it");
		*at_commit = true;
		*pos += sizeof(b);
		return 1;
	}
	if (r.type != JR_REC_DATA || !data_record_sane(h, &r))
		return scan_damaged(s, *pos, "a record has impossible values");
	n = read_full(fd, buf, (size_t)r.length);
	if (n < 0)
		return (int)n;
	if ((uint64_t)n < r.length)
		return scan_damaged(s, *pos, "record data is cut short");
	if (crc32c(buf, (size_t)r.length) != r.data_crc)
		return scan_damaged(s, *pos, "record data fails its checksum");
	if (fn != NULL) {
		rc = fn(ctx, &r, buf);
		if (rc < 0)
			return rc;
	}
	s->ndata++;
	s->data_bytes += r.length;
	*at_commit = false;
	*pos += sizeof(b) + r.length;
	return 1;
}

/* Whether damage found at byte at is the tail a crash leaves: it lies
 * within the last append's reach of the end of the file (one data record
 * and its commit), where a write cut short or never synced ends up. */
static bool torn_tail(int fd, const struct jr_header *h, uint64_t at)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < at)
		return false;
	return (uint64_t)st.st_size - at <= 2 * JR_REC_BYTES + h->record_max;
}

/* Walk the records after the header, calling fn for each intact data
 * record, until the end or the first damage.  Damage at the very end, or
 * records after the last commit, are a crash's torn tail, not damage:
 * their ranges were never written, so replaying what is intact restores
 * everything.  Damage anywhere else refuses the journal. */
static int scan(int fd, const struct jr_header *h, void *buf, jr_record_fn fn,
		void *ctx, struct jr_scan *s)
{
	uint64_t pos = JR_HEADER_BYTES, seq = 0;
	bool at_commit = false;
	int rc;

	memset(s, 0, sizeof(*s));
	if (lseek(fd, JR_HEADER_BYTES, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		rc = scan_one(fd, h, buf, fn, ctx, s, seq, &pos, &at_commit);
		if (rc <= 0 || s->damaged)
			break;
		seq++;
	}
	if (rc < 0)
		return rc;
	if (s->damaged && torn_tail(fd, h, s->problem_at)) {
		/* a crash while appending: the range of the cut record (and of
		 * any record after the last commit) was never written, since
		 * every write waits for the commit of its backup */
		s->damaged = false;
		s->torn_tail = true;
	}
	if (!s->damaged && !at_commit)
		s->torn_tail = true;	/* intact records, their commit never came */
	return 0;
}

/* ---- replay ---- */

struct replay {
	struct fp_dev *dev;
	void *vbuf;			/* read-back buffer */
	struct journal_restore_report *rep;
	uint64_t done_bytes;
	uint64_t t0_ns;
};

static void add_failed(struct journal_restore_report *rep, uint64_t off,
		       uint64_t len, int error)
{
	struct journal_range *last = rep->nfailed > 0 &&
				     rep->nfailed <= JOURNAL_MAX_FAILED ?
				     &rep->failed[rep->nfailed - 1] : NULL;

	rep->failed_bytes += len;
	if (last != NULL && last->error == error &&
	    last->offset_bytes + last->length_bytes == off) {
		last->length_bytes += len;
		return;
	}
	if (rep->nfailed < JOURNAL_MAX_FAILED)
		rep->failed[rep->nfailed] = (struct journal_range){ off, len,
								    error };
	rep->nfailed++;
}

/* Write one piece, read it back, compare.  On failure split it in halves
 * down to single sectors, so a bad spot costs only the sectors it covers
 * and everything around it is still restored. */
static void restore_piece(struct replay *c, const unsigned char *data,
			  uint64_t off, uint64_t len)
{
	uint32_t sector = fp_dev_sector_bytes(c->dev);
	int rc = fp_dev_set_write_area(c->dev, off, off + len);

	if (rc == 0)
		rc = fp_dev_write_timed(c->dev, data, (size_t)len, off, NULL);
	if (rc == 0)
		rc = fp_dev_read_timed(c->dev, c->vbuf, (size_t)len, off, NULL);
	if (rc == 0 && memcmp(c->vbuf, data, (size_t)len) != 0)
		rc = -EILSEQ;
	if (rc == 0) {
		c->rep->restored_bytes += len;
		return;
	}
	if (len <= sector || rc == -EINVAL || rc == -ENOSPC) {
		add_failed(c->rep, off, len, rc);
		return;
	}
	{
		uint64_t half = len / 2 - (len / 2) % sector;

		if (half == 0)
			half = sector;
		restore_piece(c, data, off, half);
		restore_piece(c, data + half, off + half, len - half);
	}
}

static int replay_record(void *ctx, const struct jr_record *r, void *data)
{
	struct replay *c = ctx;

	restore_piece(c, data, r->offset, r->length);
	c->rep->records++;
	c->done_bytes += r->length;
	safety_restore_progress(c->done_bytes, clock_now_ns() - c->t0_ns);
	return 0;
}

/* Remove the journal and, if it still points to it, its pointer link. */
static int delete_journal(const char *path, const char *link)
{
	char target[PATH_MAX], jabs[PATH_MAX];
	ssize_t n;

	if (unlink(path) != 0)
		return -errno;
	fsync_dir_of(path);
	if (link[0] == '\0')
		return 0;
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	if (abs_path(path, jabs, sizeof(jabs)) == 0 &&
	    strcmp(target, jabs) == 0) {
		unlink(link);
		fsync_dir_of(link);
	}
	return 0;
}

static int check_identity(const char *path, const struct jr_header *h,
			  struct fp_dev *dev, unsigned flags,
			  struct journal_restore_report *rep, char *err,
			  size_t errlen)
{
	struct jr_identity id;
	char want[JR_PATH_MAX + 64], have[JR_PATH_MAX + 64];

	identity_of_dev(dev, &id);
	if (identity_match(&h->id, &id))
		return 0;
	if (flags & JOURNAL_RESTORE_FORCE) {
		rep->identity_forced = true;
		return 0;
	}
	identity_describe(&h->id, want, sizeof(want));
	identity_describe(&id, have, sizeof(have));
	fp_errf(err, errlen, "journal '%s' belongs to %s, not to %s", path, want,
	    have);
	return -ENODEV;
}

static int replay_all(int fd, const struct jr_header *h, struct fp_dev *dev,
		      struct journal_restore_report *rep, uint64_t total,
		      void *buf, void *vbuf)
{
	struct replay c = { .dev = dev, .vbuf = vbuf, .rep = rep,
			    .t0_ns = clock_now_ns() };
	struct jr_scan s;
	int rc;

	safety_restore_begin(fp_dev_path(dev), total);
	rc = scan(fd, h, buf, replay_record, &c, &s);
	safety_restore_end();
	return rc;
}

/* The outcome of a replay, as errno and one line. */
static int restore_outcome(const char *path, struct fp_dev *dev,
			   const struct jr_header *h, unsigned flags,
			   struct journal_restore_report *rep, char *err,
			   size_t errlen)
{
	const struct journal_range *f = &rep->failed[0];

	if (rep->nfailed > 0) {
		fp_errf(err, errlen, "cannot restore %zu range(s) of '%s' (first at "
		    "byte %llu, %llu bytes: %s); journal '%s' is kept",
		    rep->nfailed, fp_dev_path(dev),
		    (unsigned long long)f->offset_bytes,
		    (unsigned long long)f->length_bytes, strerror(-f->error),
		    path);
		return f->error;
	}
	if (rep->damaged || (flags & JOURNAL_RESTORE_KEEP))
		return 0;
	if (delete_journal(path, h->link) == 0)
		rep->deleted = true;
	return 0;
}

int journal_restore(const char *journal_path, struct fp_dev *dev,
		    unsigned flags, struct journal_restore_report *rep,
		    char *err, size_t errlen)
{
	struct jr_header h;
	struct jr_scan s;
	char real[PATH_MAX];
	void *buf = NULL, *vbuf = NULL;
	int fd = -1, rc;

	memset(rep, 0, sizeof(*rep));
	if (journal_path == NULL || dev == NULL)
		return -EINVAL;
	/* Given the pointer link, work on (and delete) what it points to. */
	if (realpath(journal_path, real) != NULL)
		journal_path = real;
	rc = header_read(journal_path, &fd, &h, err, errlen);
	if (rc < 0)
		return rc;
	rc = check_identity(journal_path, &h, dev, flags, rep, err, errlen);
	if (rc < 0)
		goto out;
	buf = fp_dev_alloc_buf(h.record_max);
	vbuf = fp_dev_alloc_buf(h.record_max);
	rc = buf != NULL && vbuf != NULL ? scan(fd, &h, buf, NULL, NULL, &s)
					 : -ENOMEM;
	if (rc < 0) {
		fp_errf(err, errlen, "cannot read journal '%s': %s", journal_path,
		    strerror(-rc));
		goto out;
	}
	if (s.torn_tail)
		snprintf(rep->note, sizeof(rep->note), "the journal's last save was "
			 "cut short by a crash; its range had not been written");
	if (s.damaged) {
		snprintf(rep->note, sizeof(rep->note), "journal damaged at byte "
			 "%llu: %s", (unsigned long long)s.problem_at, s.problem);
		if (!(flags & JOURNAL_RESTORE_FORCE)) {
			fp_errf(err, errlen, "journal '%s' is damaged at byte %llu "
			    "(%s); nothing was restored", journal_path,
			    (unsigned long long)s.problem_at, s.problem);
			rc = -EBADMSG;
			goto out;
		}
		rep->damaged = true;
	}
	rc = replay_all(fd, &h, dev, rep, s.data_bytes, buf, vbuf);
	if (rc < 0) {
		fp_errf(err, errlen, "cannot read journal '%s': %s", journal_path,
		    strerror(-rc));
		goto out;
	}
	rc = restore_outcome(journal_path, dev, &h, flags, rep, err, errlen);
out:
	free(buf);
	free(vbuf);
	close(fd);
	return rc;
}

int journal_finish(struct fp_dev *jdev, unsigned flags,
		   struct journal_restore_report *rep, char *err,
		   size_t errlen)
{
	struct journal *j = journal_of(jdev);

	if (j == NULL || rep == NULL)
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	if (j->finished)
		return 0;
	j->finished = true;
	/* Records never committed never let a write through: drop them. */
	if (j->seq != j->committed_seq)
		j->torn = true;
	cut_torn_tail(j);
	close(j->fd);
	j->fd = -1;
	if (!j->dirty) {
		/* The device was never written: nothing to put back. */
		if (delete_journal(j->path, j->link) == 0)
			rep->deleted = true;
		return 0;
	}
	/* A tail that could not be cut back holds only ranges that were
	 * never written; the committed part is exactly what is needed. */
	if (j->torn)
		flags |= JOURNAL_RESTORE_FORCE;
	return journal_restore(j->path, j->inner, flags, rep, err, errlen);
}

/* ---- finding journals ---- */

static bool journal_name(const char *name)
{
	size_t n = strlen(name), sl = strlen(".journal");

	return strncmp(name, "flashprobe-", 11) == 0 && n > sl &&
	       strcmp(name + n - sl, ".journal") == 0;
}

/* Whether dir/name is a journal of want (following a pointer link); its
 * real path into found. */
static bool pending_in(const char *dir, const char *name,
		       const struct jr_identity *want, const char *own_name,
		       char *found, size_t foundlen)
{
	char path[PATH_MAX], real[PATH_MAX];
	struct jr_header h;
	bool hit;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return false;
	if (header_read(path, &fd, &h, NULL, 0) == 0) {
		close(fd);
		hit = same_device(&h.id, want);
	} else {
		/* Unreadable but named after this device: it may be ours. */
		hit = strcmp(name, own_name) == 0 && access(path, F_OK) == 0;
	}
	if (hit)
		snprintf(found, foundlen, "%s",
			 realpath(path, real) != NULL ? real : path);
	return hit;
}

static int pending_dir(const char *dir, const struct jr_identity *want,
		       const char *own_name, char *found, size_t foundlen)
{
	struct dirent *e;
	bool hit = false;
	DIR *d = opendir(dir);

	if (d == NULL)
		return errno == ENOENT || errno == EACCES ? 0 : -errno;
	while (!hit && (e = readdir(d)) != NULL)
		hit = journal_name(e->d_name) &&
		      pending_in(dir, e->d_name, want, own_name, found,
				 foundlen);
	closedir(d);
	return hit;
}

int journal_find_pending(const char *device, char *found, size_t foundlen,
			 char *err, size_t errlen)
{
	const char *env = getenv(JOURNAL_STATE_ENV);
	const char *dirs[2] = { JOURNAL_STATE_DIR, JOURNAL_FALLBACK_DIR };
	size_t ndirs = 2, i;
	char own[NAME_MAX + 1];
	struct jr_identity want;
	int rc = 0;

	if (device == NULL || found == NULL)
		return -EINVAL;
	found[0] = '\0';
	if (is_sim(device))
		return 0;
	rc = identity_of_path(device, &want);
	if (rc == 0)
		rc = default_name(device, own, sizeof(own));
	if (rc < 0) {
		fp_errf(err, errlen, "cannot open '%s': %s", device, strerror(-rc));
		return rc;
	}
	if (env != NULL && env[0] != '\0') {
		dirs[0] = env;
		ndirs = 1;
	}
	for (i = 0; i < ndirs && rc == 0; i++)
		rc = pending_dir(dirs[i], &want, own, found, foundlen);
	if (rc < 0)
		fp_errf(err, errlen, "cannot look for journals in '%s': %s",
		    dirs[i - 1], strerror(-rc));
	return rc;
}

int journal_device_of(const char *journal_path, char *device, size_t len,
		      char *err, size_t errlen)
{
	struct jr_header h;
	int fd, rc = header_read(journal_path, &fd, &h, err, errlen);

	if (rc < 0)
		return rc;
	close(fd);
	snprintf(device, len, "%s", h.id.path);
	return 0;
}

bool journal_is_journal_file(const char *path)
{
	char magic[8];
	struct stat st;
	bool is = false;
	int fd;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	is = read_full(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	     memcmp(magic, JOURNAL_MAGIC, sizeof(magic)) == 0;
	close(fd);
	return is;
}
