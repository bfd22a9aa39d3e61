/* journal_format.c - encoding of the journal's header, commit slots,
 * records and pointer file, and the file and identity helpers that the
 * journal's writer (journal.c) and reader (journal_replay.c) share.
 * The layout is described in journal_format.h.
 */
#define _GNU_SOURCE	/* O_TMPFILE, AT_EMPTY_PATH; realpath() */
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dev.h"
#include "devspec.h"
#include "errmsg.h"
#include "journal.h"
#include "loopfile.h"
#include "sysfs.h"
#include "util.h"
#include "journal_format.h"
#include "safety.h"
#include "units.h"

#define JR_NAME_MAX 150		/* sanitized part of a default file name */

/* Static header field offsets. */
enum {
	H_MAGIC = 0, H_VERSION = 8, H_HDRLEN = 12, H_KIND = 16, H_SECTOR = 20,
	H_SIZE = 24, H_MAJOR = 32, H_MINOR = 36, H_FDEV = 40, H_FINO = 48,
	H_CREATED = 56, H_RECMAX = 64, H_PATH = 72,
	H_SERIAL = H_PATH + JR_PATH_MAX, H_LINK = H_SERIAL + JR_SERIAL_MAX,
	H_FBIRTH = H_LINK + JR_LINK_MAX,	/* 0 in journals before it */
	H_CRC = JR_STATIC_BYTES - 4,
};

/* Commit slot field offsets. */
#define SLOT_MAGIC "FPCOMMIT"
enum {
	S_MAGIC = 0, S_GEN = 8, S_RECORDS = 16, S_NDATA = 24, S_BYTES = 32,
	S_END = 40, S_AREA_LO = 48, S_AREA_HI = 56, S_NFP = 64, S_FP = 72,
	S_FLAGS = S_FP + JR_FP_MAX * 16, S_CRC = JR_SLOT_BYTES - 4,
};
_Static_assert(S_FLAGS + 4 <= S_CRC, "fingerprints and flags fit a slot");
_Static_assert(H_FBIRTH + 8 <= H_CRC, "static header fits");

/* Record field offsets. */
enum {
	R_MAGIC = 0, R_TYPE = 4, R_SEQ = 8, R_OFF = 16, R_LEN = 24,
	R_DATACRC = 32, R_CRC = 36,
};

/* ---- checksums: CRC32C (Castagnoli, as iSCSI, ext4 and btrfs) and
 * FNV-1a 64 for fingerprints ---- */

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

uint32_t jr_crc32c(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t c = 0xffffffffu;

	crc_init();
	while (n-- > 0)
		c = crc_table[(c ^ *b++) & 0xff] ^ (c >> 8);
	return ~c;
}

uint64_t jr_fnv1a64(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;

	while (n-- > 0)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
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

/* A new or removed directory entry is durable only once the directory
 * itself is fsync'ed. */
int jr_fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc = 0;

	util_dir_of(path, dir, sizeof(dir));
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
int jr_abs_path(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');

	util_dir_of(path, dir, sizeof(dir));
	if (realpath(dir, real) == NULL)
		return -errno;
	if ((size_t)snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "",
			     slash ? slash + 1 : path) >= len)
		return -ENAMETOOLONG;
	return 0;
}

size_t jr_default_dirs(const char *dirs[2])
{
	const char *test = getenv(JOURNAL_TEST_HOME_ENV);

	if (test != NULL && test[0] != '\0') {	/* the test suite's stand-in */
		dirs[0] = test;
		return 1;
	}
	dirs[0] = JOURNAL_STATE_DIR;
	dirs[1] = JOURNAL_FALLBACK_DIR;
	return 2;
}

bool jr_same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* A journal of another user: root too refuses it (a user could have
 * written one for any disk), so the way out is to replay it as its
 * owner, who ran the test. */
static void refuse_foreign_owner(const char *path, uid_t uid, char *err,
				 size_t errlen)
{
	struct passwd *pw = getpwuid(uid);

	if (pw != NULL)
		fp_errf(err, errlen, "refusing journal '%s': it belongs to user '%s', "
		    "and anyone may write a journal for any device: restore it as that "
		    "user, 'sudo -u %s flashprobe restore %s'", path, pw->pw_name,
		    pw->pw_name, path);
	else
		fp_errf(err, errlen, "refusing journal '%s': it belongs to uid %u, "
		    "and anyone may write a journal for any device: run the restore as "
		    "that user", path, (unsigned)uid);
}

/* Journals are replayed onto disks, and /var/tmp is writable by
 * everyone: only a regular file of ours (or root's) that nobody else may
 * write is believed.  O_NONBLOCK keeps a planted FIFO from hanging us. */
int jr_open_trusted(const char *path, int flags, int *fdp, char *err,
		    size_t errlen)
{
	struct stat st;
	int fd = open(path, flags | O_CLOEXEC | O_NONBLOCK);
	int rc;

	if (fd < 0) {
		rc = -errno;
		fp_errf(err, errlen, "cannot open journal '%s': %s", path,
		    strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		fp_errf(err, errlen, "refusing journal '%s': not a regular file "
		    "writable only by its owner", path);
		close(fd);
		return -FP_EREFUSED;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		refuse_foreign_owner(path, st.st_uid, err, errlen);
		close(fd);
		return -FP_EREFUSED;
	}
	*fdp = fd;
	return 0;
}

/* ---- device identity ---- */

/* The birth time of the file behind loop device major:minor, 0 when it
 * is none or has no name left to ask. */
static uint64_t loop_file_birth_ns(unsigned major, unsigned minor)
{
	struct loopfile f;

	if (loopfile_data(sysfs_roots_default.sys, major, minor, &f) != 1 ||
	    !f.named || f.rdev != 0)
		return 0;
	return util_birth_ns(AT_FDCWD, f.path, 0);
}

/* Identity of what path names, given its stat and birth time (size and
 * sector size are left 0); a loop device's is its file's. */
static int identity_of_node(const char *path, const struct stat *st,
			    uint64_t birth_ns, struct jr_identity *id)
{
	char real[PATH_MAX];

	/* Absolute, so "flashprobe restore JOURNAL" works from anywhere. */
	if (realpath(path, real) != NULL)
		util_copy_str(id->path, sizeof(id->path), real);
	if (S_ISBLK(st->st_mode)) {
		id->kind = FP_DEV_BLOCK;
		id->major = major(st->st_rdev);
		id->minor = minor(st->st_rdev);
		int rc = loopfile_serial(sysfs_roots_default.sys, id->major,
					 id->minor, id->serial, sizeof(id->serial));

		if (rc == -ENAMETOOLONG)	/* not to be told apart: refuse */
			return rc;
		if (rc > 0)
			id->file_birth_ns = loop_file_birth_ns(id->major, id->minor);
		else
			sysfs_device_serial(sysfs_roots_default.sys, path,
					    id->serial, sizeof(id->serial));
		return 0;
	}
	if (S_ISREG(st->st_mode)) {
		id->kind = FP_DEV_FILE;
		id->file_dev = (uint64_t)st->st_dev;
		id->file_ino = (uint64_t)st->st_ino;
		id->file_birth_ns = birth_ns;
		return 0;
	}
	return -ENOTBLK;
}

/* Identity from a path (size and sector size are left 0). */
int jr_identity_of_path(const char *path, struct jr_identity *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	util_copy_str(id->path, sizeof(id->path), path);
	if (devspec_is_sim(path)) {
		id->kind = FP_DEV_SIM;
		return 0;
	}
	if (stat(path, &st) != 0)
		return -errno;
	return identity_of_node(path, &st, util_birth_ns(AT_FDCWD, path, 0), id);
}

/* The device's identity from the descriptor it holds where it has one:
 * an image renamed (or another file put under its name) during the test
 * is still the file under test, and the journal must say so. */
int jr_identity_of_dev(struct fp_dev *d, struct jr_identity *id)
{
	struct stat st;
	int rc;

	if (fp_dev_node_stat(d, &st) == 0) {
		memset(id, 0, sizeof(*id));
		util_copy_str(id->path, sizeof(id->path), fp_dev_path(d));
		rc = identity_of_node(fp_dev_path(d), &st,
				      fp_dev_node_birth_ns(d), id);
	} else {
		rc = jr_identity_of_path(fp_dev_path(d), id);
	}
	id->kind = fp_dev_kind(d);
	id->size_bytes = fp_dev_size_bytes(d);
	id->sector_bytes = fp_dev_sector_bytes(d);
	return rc;
}

/* An inode number is reused as soon as its file is deleted: a new image
 * made under the old name often gets it (ext4), and a blank one matches
 * the old one's fingerprint too.  Their birth times differ; a journal
 * written before they were recorded, or a file system without them,
 * leaves only the number. */
static bool same_birth(const struct jr_identity *a, const struct jr_identity *b)
{
	return a->file_birth_ns == 0 || b->file_birth_ns == 0 ||
	       a->file_birth_ns == b->file_birth_ns;
}

/* The same device, whatever its size: a serial beats a device number
 * (numbers change when a card is plugged in again). */
bool jr_same_device(const struct jr_identity *a, const struct jr_identity *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case FP_DEV_SIM:
		return strcmp(a->path, b->path) == 0;
	case FP_DEV_FILE:
		return a->file_dev == b->file_dev && a->file_ino == b->file_ino &&
		       same_birth(a, b);
	default:
		if (a->serial[0] != '\0' && b->serial[0] != '\0')
			return loopfile_serials_same(a->serial, b->serial) && same_birth(a, b);
		return a->major == b->major && a->minor == b->minor;
	}
}

/* The node of a journal's identity, as stat would give it now. */
static bool identity_node(const struct jr_identity *id, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	if (id->kind == FP_DEV_FILE) {
		st->st_mode = S_IFREG;
		st->st_dev = (dev_t)id->file_dev;
		st->st_ino = (ino_t)id->file_ino;
		return true;
	}
	/* Device numbers name another card after a swap; a disk with a
	 * serial is matched by it (jr_same_device), not by its number. */
	if (id->kind != FP_DEV_BLOCK || id->serial[0] != '\0')
		return false;
	st->st_mode = S_IFBLK;
	st->st_rdev = makedev(id->major, id->minor);
	return true;
}

bool jr_shares_data(const struct jr_identity *id, const struct stat *st)
{
	const char *file = strchr(id->serial, ':');
	struct stat node;

	if (identity_node(id, &node) && safety_nodes_overlap(&node, st))
		return true;
	/* a loop device's journal: the file (or device) it reads, which any
	 * other loop device over it, at any offset, reads too */
	if (loopfile_serial_node(id->serial, &node) == 1)
		return safety_nodes_overlap(&node, st);
	/* an older journal's serial named the file */
	return strncmp(id->serial, "loop", 4) == 0 && file != NULL &&
	       stat(file + 1, &node) == 0 &&
	       (S_ISREG(node.st_mode) || S_ISBLK(node.st_mode)) &&
	       safety_nodes_overlap(&node, st);
}

static const char *kind_word(uint32_t kind)
{
	return kind == FP_DEV_BLOCK ? "a block device" :
	       kind == FP_DEV_FILE ? "an image file" : "a simulated card";
}

/* The first difference that makes them two devices. */
static void device_difference(const struct jr_identity *w,
			      const struct jr_identity *h, char *buf,
			      size_t len)
{
	if (w->kind != h->kind)
		fp_errf(buf, len, "it is %s now, the journal's was %s",
		    kind_word(h->kind), kind_word(w->kind));
	else if (w->kind == FP_DEV_SIM)
		fp_errf(buf, len, "it is the simulated card '%s', the journal's "
		    "was '%s'", h->path, w->path);
	else if (w->kind == FP_DEV_FILE && w->file_dev == h->file_dev &&
		 w->file_ino == h->file_ino)
		fp_errf(buf, len, "it is a file made at another time under the "
		    "journal's inode number %" PRIu64 ": the journal's file was "
		    "deleted", h->file_ino);
	else if (w->kind == FP_DEV_FILE)
		fp_errf(buf, len, "it is inode %" PRIu64 " on file system %u:%u "
		    "now, the journal's was inode %" PRIu64 " on %u:%u: "
		    "another file", h->file_ino, major((dev_t)h->file_dev),
		    minor((dev_t)h->file_dev), w->file_ino,
		    major((dev_t)w->file_dev), minor((dev_t)w->file_dev));
	else if (w->serial[0] != '\0' && loopfile_serials_same(w->serial, h->serial))
		fp_errf(buf, len, "its file was made at another time under the "
		    "journal's inode number: the journal's file was deleted");
	else if (w->serial[0] != '\0' && h->serial[0] != '\0')
		fp_errf(buf, len, "its serial is '%s', the journal's is '%s'",
		    h->serial, w->serial);
	else
		fp_errf(buf, len, "it is device %u:%u, the journal's was %u:%u",
		    h->major, h->minor, w->major, w->minor);
}

void jr_identity_difference(const struct jr_identity *want,
			    const struct jr_identity *have, char *buf,
			    size_t len)
{
	char a[32], b[32];

	if (len > 0)
		buf[0] = '\0';
	if (!jr_same_device(want, have))
		device_difference(want, have, buf, len);
	else if (want->size_bytes != have->size_bytes)
		fp_errf(buf, len, "it holds %s now, the journal's device held %s",
		    units_format_bytes(have->size_bytes, a, sizeof(a)),
		    units_format_bytes(want->size_bytes, b, sizeof(b)));
	else if (want->sector_bytes != have->sector_bytes)
		fp_errf(buf, len, "its sectors are %u bytes now, the journal's "
		    "were %u", have->sector_bytes, want->sector_bytes);
}

/* ---- static header ---- */

void jr_static_encode(const struct jr_header *h, unsigned char *b)
{
	const struct jr_identity *id = &h->id;

	memset(b, 0, JR_STATIC_BYTES);
	memcpy(b + H_MAGIC, JOURNAL_MAGIC, 8);
	put32(b + H_VERSION, JR_VERSION);
	put32(b + H_HDRLEN, JR_HEADER_BYTES);
	put32(b + H_KIND, id->kind);
	put32(b + H_SECTOR, id->sector_bytes);
	put64(b + H_SIZE, id->size_bytes);
	put32(b + H_MAJOR, id->major);
	put32(b + H_MINOR, id->minor);
	put64(b + H_FDEV, id->file_dev);
	put64(b + H_FINO, id->file_ino);
	put64(b + H_FBIRTH, id->file_birth_ns);
	put64(b + H_CREATED, h->created_unix);
	put32(b + H_RECMAX, h->record_max);
	put_str(b + H_PATH, JR_PATH_MAX, id->path);
	put_str(b + H_SERIAL, JR_SERIAL_MAX, id->serial);
	put_str(b + H_LINK, JR_LINK_MAX, h->link);
	put32(b + H_CRC, jr_crc32c(b, H_CRC));
}

static int static_decode(const unsigned char *b, struct jr_header *h,
			 const char **why)
{
	struct jr_identity *id = &h->id;

	if (memcmp(b + H_MAGIC, JOURNAL_MAGIC, 8) != 0) {
		*why = "not a flashprobe journal";
		return -EBADMSG;
	}
	if (get32(b + H_VERSION) != JR_VERSION ||
	    get32(b + H_HDRLEN) != JR_HEADER_BYTES) {
		*why = "written by another version of flashprobe (version 1 "
		       "journals cannot prove what they committed: replay "
		       "with --force only if you know the test finished "
		       "its backups)";
		return -EBADMSG;
	}
	if (get32(b + H_CRC) != jr_crc32c(b, H_CRC)) {
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
	id->file_birth_ns = get64(b + H_FBIRTH);
	h->created_unix = get64(b + H_CREATED);
	h->record_max = get32(b + H_RECMAX);
	get_str(id->path, b + H_PATH, JR_PATH_MAX);
	get_str(id->serial, b + H_SERIAL, JR_SERIAL_MAX);
	get_str(h->link, b + H_LINK, JR_LINK_MAX);
	if (id->sector_bytes == 0 || h->record_max == 0 ||
	    h->record_max > JOURNAL_RECORD_MAX_BYTES ||
	    h->record_max % id->sector_bytes != 0) {
		*why = "header has impossible values";
		return -EBADMSG;
	}
	return 0;
}

/* ---- commit slots ---- */

void jr_slot_encode(const struct jr_slot *s, unsigned char *b)
{
	memset(b, 0, JR_SLOT_BYTES);
	memcpy(b + S_MAGIC, SLOT_MAGIC, 8);
	put64(b + S_GEN, s->gen);
	put64(b + S_RECORDS, s->records);
	put64(b + S_NDATA, s->ndata);
	put64(b + S_BYTES, s->data_bytes);
	put64(b + S_END, s->end);
	put64(b + S_AREA_LO, s->area_lo);
	put64(b + S_AREA_HI, s->area_hi);
	put32(b + S_NFP, s->nfp);
	for (uint32_t i = 0; i < s->nfp && i < JR_FP_MAX; i++) {
		put64(b + S_FP + 16 * i, s->fp[i].offset);
		put64(b + S_FP + 16 * i + 8, s->fp[i].hash);
	}
	put32(b + S_FLAGS, s->flags);
	put32(b + S_CRC, jr_crc32c(b, S_CRC));
}

static bool all_zero(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* 1 valid, 0 never written (all zero), -1 damaged. */
static int slot_decode(const unsigned char *b, struct jr_slot *s)
{
	memset(s, 0, sizeof(*s));
	if (all_zero(b, JR_SLOT_BYTES))
		return 0;
	if (memcmp(b + S_MAGIC, SLOT_MAGIC, 8) != 0 ||
	    get32(b + S_CRC) != jr_crc32c(b, S_CRC))
		return -1;
	s->gen = get64(b + S_GEN);
	s->records = get64(b + S_RECORDS);
	s->ndata = get64(b + S_NDATA);
	s->data_bytes = get64(b + S_BYTES);
	s->end = get64(b + S_END);
	s->area_lo = get64(b + S_AREA_LO);
	s->area_hi = get64(b + S_AREA_HI);
	s->nfp = get32(b + S_NFP);
	s->flags = get32(b + S_FLAGS);
	if (s->gen == 0 || s->nfp > JR_FP_MAX || s->end < JR_HEADER_BYTES ||
	    s->ndata > s->records || s->area_lo > s->area_hi)
		return -1;
	for (uint32_t i = 0; i < s->nfp; i++) {
		s->fp[i].offset = get64(b + S_FP + 16 * i);
		s->fp[i].hash = get64(b + S_FP + 16 * i + 8);
	}
	return 1;
}

/* Whether the two slots are what the commits leave: generation g goes to
 * slot g % 2, one after the other, so after the first commit (gen 1, slot
 * B) the other slot holds g - 1 for good.  An empty slot beside gen 2 or
 * later, or two generations not one apart, was erased or replaced: the
 * newer commit would be lost and the older slot would hide its records. */
static bool slots_paired(const int r[2], const struct jr_slot s[2])
{
	if (r[0] > 0 && r[1] > 0)
		return s[0].gen + 1 == s[1].gen || s[1].gen + 1 == s[0].gen;
	return r[0] == 0 && r[1] > 0 && s[1].gen == 1;
}

/* Both slots: the newer valid one counts.  A damaged slot is not what a
 * crash leaves (each slot is one sector, written in place), so it makes
 * the whole journal suspect: a damaged newest slot would otherwise hide
 * the commits it made. */
static void slots_decode(const unsigned char *b, struct jr_header *h)
{
	struct jr_slot s[2];
	int r[2];

	for (unsigned i = 0; i < 2; i++) {
		r[i] = slot_decode(b + JR_SLOT_OFFSET(i), &s[i]);
		if (r[i] > 0 && JR_SLOT_OFFSET(s[i].gen) != JR_SLOT_OFFSET(i))
			r[i] = -1;	/* a generation in the other's place */
	}
	if (r[0] < 0 || r[1] < 0) {
		h->slots = JR_SLOTS_DAMAGED;
		h->slots_problem = "a commit slot in the header fails its "
				   "checks";
		return;
	}
	if (r[0] == 0 && r[1] == 0) {
		h->slots = JR_SLOTS_NONE;
		return;
	}
	if (!slots_paired(r, s)) {
		h->slots = JR_SLOTS_DAMAGED;
		h->slots_problem = "a commit slot in the header was erased or "
				   "replaced";
		return;
	}
	h->slots = JR_SLOTS_OK;
	h->slot = r[0] > 0 && (r[1] == 0 || s[0].gen > s[1].gen) ? s[0] : s[1];
}

int jr_header_parse(int fd, const char *path, struct jr_header *h,
		    char *err, size_t errlen)
{
	unsigned char b[JR_HEADER_BYTES];
	const char *why = "the header is cut short";
	ssize_t n;
	int rc = -EBADMSG;

	memset(b, 0, sizeof(b));
	n = util_pread_full(fd, b, sizeof(b), 0);
	if (n < 0) {
		fp_errf(err, errlen, "cannot read journal '%s': %s", path,
		    strerror((int)-n));
		return (int)n;
	}
	if (n >= (ssize_t)JR_STATIC_BYTES)
		rc = static_decode(b, h, &why);
	if (rc < 0) {
		fp_errf(err, errlen, "cannot use journal '%s': %s", path, why);
		return rc;
	}
	if (n < (ssize_t)JR_HEADER_BYTES) {
		h->slots = JR_SLOTS_DAMAGED;
		h->slots_problem = "the journal is cut short inside its header";
	} else {
		slots_decode(b, h);
		h->spent = memcmp(b + JR_SPENT_OFFSET, JR_SPENT_MAGIC, 8) == 0;
	}
	return 0;
}

bool jr_is_journal_name(const char *name)
{
	size_t n = strlen(name), sl = strlen(".journal");

	return strncmp(name, "flashprobe-", 11) == 0 && n > sl &&
	       strcmp(name + n - sl, ".journal") == 0;
}

/* The mark through a descriptor open for writing. */
static int write_spent_mark(int wfd)
{
	int rc = util_pwrite_full(wfd, JR_SPENT_MAGIC, 8, JR_SPENT_OFFSET);

	if (rc == 0 && fdatasync(wfd) != 0)
		rc = -errno;
	return rc;
}

int jr_mark_spent(int fd, const char *path)
{
	int flags = fcntl(fd, F_GETFL), wfd;
	struct stat a, b;
	int rc;

	/* a test's own journal: the file itself, wherever its name went
	 * (a state directory moved away during the test) */
	if (flags >= 0 && (flags & O_ACCMODE) != O_RDONLY)
		return write_spent_mark(fd);
	wfd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (wfd < 0)
		return -errno;
	if (fstat(fd, &a) != 0 || fstat(wfd, &b) != 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		close(wfd);
		return -ESTALE;
	}
	rc = write_spent_mark(wfd);
	close(wfd);
	return rc;
}

int jr_header_read(const char *path, bool writable, int *fdp,
		   struct jr_header *h, char *err, size_t errlen)
{
	int fd = -1;
	int rc = jr_open_trusted(path, writable ? O_RDWR : O_RDONLY, &fd, err,
				 errlen);

	if (rc == 0)
		rc = jr_header_parse(fd, path, h, err, errlen);
	if (rc < 0 && fd >= 0)
		close(fd);
	else if (rc == 0)
		*fdp = fd;
	return rc;
}

/* ---- records ---- */

void jr_record_encode(const struct jr_record *r, unsigned char *b)
{
	put32(b + R_MAGIC, JR_REC_MAGIC);
	put32(b + R_TYPE, r->type == JR_REC_DATA && r->may_alias ? JR_REC_DATA_MAY_ALIAS
								 : r->type);
	put64(b + R_SEQ, r->seq);
	put64(b + R_OFF, r->offset);
	put64(b + R_LEN, r->length);
	put32(b + R_DATACRC, r->data_crc);
	put32(b + R_CRC, jr_crc32c(b, R_CRC));
}

bool jr_record_decode(const unsigned char *b, struct jr_record *r)
{
	if (get32(b + R_MAGIC) != JR_REC_MAGIC ||
	    get32(b + R_CRC) != jr_crc32c(b, R_CRC))
		return false;
	r->type = get32(b + R_TYPE);
	r->may_alias = r->type == JR_REC_DATA_MAY_ALIAS;
	if (r->may_alias)
		r->type = JR_REC_DATA;
	r->seq = get64(b + R_SEQ);
	r->offset = get64(b + R_OFF);
	r->length = get64(b + R_LEN);
	r->data_crc = get32(b + R_DATACRC);
	return true;
}

/* ---- default location ---- */

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
	/* "img/a.img" and "img_a.img" sanitize alike: the hash of the whole
	 * path keeps their journals apart (one was refused as having the
	 * other's, and --force replayed it onto it) */
	snprintf(buf, len, "flashprobe-%s-%016llx.journal", s,
		 (unsigned long long)jr_fnv1a64(path, strlen(path)));
}

int jr_default_name(const char *device, char *buf, size_t len)
{
	char real[PATH_MAX];
	struct stat st;

	if (devspec_is_sim(device)) {
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

/* ---- the pointer file ---- */

/* Text, so that a person can read it: the magic line, then key=value
 * lines, then the CRC32C of everything before the crc line. */
static int pointer_format(const struct jr_pointer *p, char *buf, size_t len)
{
	int n, m;

	/* one field per line: a path with a newline would cut its line */
	if (strchr(p->journal, '\n') != NULL || strchr(p->device, '\n') != NULL)
		return -EINVAL;
	n = snprintf(buf, len, JR_POINTER_MAGIC "journal=%s\ndevice=%s\n"
			 "area=%" PRIu64 " %" PRIu64 "\n", p->journal,
			 p->device, p->area_lo, p->area_hi);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	m = snprintf(buf + n, len - (size_t)n, "crc=%08x\n",
		     jr_crc32c(buf, (size_t)n));
	if (m < 0 || (size_t)(n + m) >= len)
		return -ENAMETOOLONG;
	return n + m;
}

/* Lock the new file at fd, then write buf[0..n) and fsync it. */
static int fill_locked(int fd, const void *buf, size_t n)
{
	int rc = flock(fd, LOCK_EX | LOCK_NB) != 0 ? -errno : 0;

	if (rc == 0)
		rc = util_write_full(fd, buf, n);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	return rc;
}

/* A file made under no name (O_TMPFILE) and linked in once whole: a kill
 * at any moment leaves path complete or absent, never empty.  -EEXIST
 * when path exists, -EOPNOTSUPP where the file system cannot. */
static int link_whole(const char *path, const void *buf, size_t n, int *fdp)
{
	char dir[PATH_MAX], self[64];
	int fd, rc;

	util_dir_of(path, dir, sizeof(dir));
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == EISDIR || errno == EINVAL ? -EOPNOTSUPP : -errno;
	rc = fill_locked(fd, buf, n);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	/* without /proc, AT_EMPTY_PATH (which needs CAP_DAC_READ_SEARCH) */
	if (rc == 0 && linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0 &&
	    (errno == EEXIST || linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) != 0))
		rc = errno == EEXIST ? -EEXIST : -EOPNOTSUPP;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*fdp = fd;
	return 0;
}

/* The same by O_EXCL where there is no O_TMPFILE: a kill between the
 * open and the write leaves an empty file. */
static int create_excl(const char *path, const void *buf, size_t n, int *fdp)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc;

	if (fd < 0)
		return -errno;
	rc = fill_locked(fd, buf, n);
	if (rc < 0) {
		close(fd);
		unlink(path);
		return rc;
	}
	*fdp = fd;
	return 0;
}

int jr_create_whole(const char *path, const void *buf, size_t n)
{
	int fd = -1, rc = link_whole(path, buf, n, &fd);

	if (rc == -EOPNOTSUPP)
		rc = create_excl(path, buf, n, &fd);
	if (rc == 0 && (rc = jr_fsync_dir_of(path)) < 0) {
		close(fd);
		unlink(path);
	}
	return rc < 0 ? rc : fd;
}

int jr_pointer_create(const char *link, const struct jr_pointer *p)
{
	char buf[JR_LINK_MAX + JR_PATH_MAX + 128];
	int n = pointer_format(p, buf, sizeof(buf));

	return n < 0 ? n : jr_create_whole(link, buf, (size_t)n);
}

/* Written whole under a temporary name and renamed over the old one, so
 * that a crash leaves either the old or the new pointer (and at worst
 * the temporary file, which jr_pointer_tmp_name() names for removal). */
int jr_pointer_write(const char *link, const struct jr_pointer *p)
{
	char buf[JR_LINK_MAX + JR_PATH_MAX + 128], tmp[PATH_MAX];
	int n = pointer_format(p, buf, sizeof(buf)), fd, rc;

	if (n < 0)
		return n;
	if (jr_pointer_tmp_name(link, tmp, sizeof(tmp)) != 0)
		return -ENAMETOOLONG;
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	rc = util_write_full(fd, buf, (size_t)n);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && rename(tmp, link) != 0)
		rc = -errno;
	if (rc == 0)
		rc = jr_fsync_dir_of(link);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

int jr_pointer_tmp_name(const char *link, char *tmp, size_t len)
{
	return (size_t)snprintf(tmp, len, "%s.new", link) >= len ? -ENAMETOOLONG : 0;
}

static bool pointer_field(const char *text, const char *key, char *out,
			  size_t len)
{
	const char *p = strstr(text, key), *e;

	if (p == NULL || (p != text && p[-1] != '\n'))
		return false;
	p += strlen(key);
	e = strchr(p, '\n');
	if (e == NULL || (size_t)(e - p) >= len)
		return false;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return true;
}

static int pointer_parse(const char *text, struct jr_pointer *p)
{
	char crc[16], area[64];
	const char *c = strstr(text, "\ncrc=");
	unsigned long want;

	if (c == NULL)
		return -EBADMSG;
	c++;
	if (!pointer_field(text, "crc=", crc, sizeof(crc)) ||
	    sscanf(crc, "%8lx", &want) != 1 ||
	    want != jr_crc32c(text, (size_t)(c - text)) ||
	    !pointer_field(text, "journal=", p->journal, sizeof(p->journal)) ||
	    !pointer_field(text, "device=", p->device, sizeof(p->device)) ||
	    !pointer_field(text, "area=", area, sizeof(area)) ||
	    sscanf(area, "%" SCNu64 " %" SCNu64, &p->area_lo, &p->area_hi) != 2)
		return -EBADMSG;
	return 1;
}

int jr_pointer_read(const char *path, struct jr_pointer *p)
{
	char text[JR_LINK_MAX + JR_PATH_MAX + 128];
	struct stat st;
	ssize_t n;
	int fd, rc;

	memset(p, 0, sizeof(*p));
	if (lstat(path, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	rc = jr_open_trusted(path, O_RDONLY, &fd, NULL, 0);
	if (rc < 0)
		return rc;
	n = util_pread_full(fd, text, sizeof(text) - 1, 0);
	close(fd);
	if (n < 0)
		return (int)n;
	text[n] = '\0';
	if (strncmp(text, JR_POINTER_MAGIC, strlen(JR_POINTER_MAGIC)) != 0)
		return 0;
	return pointer_parse(text, p);
}
