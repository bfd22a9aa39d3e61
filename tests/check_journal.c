/* check_journal.c - back up, scribble, restore: the whole device must come
 * back bit for bit; damaged, foreign or misplaced journals are refused.
 *
 * Simulated cards are filled with random data (sim_fill_random) and have
 * noise switched off, so their clock is deterministic.  Files live in a
 * private directory on a disk file system, made and removed by an
 * unchecked fixture in the parent (removed even when a test fails); the
 * state directory for default journal paths is redirected into it with
 * FLASHPROBE_STATE_DIR.
 */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "blockfix.h"
#include "dev.h"
#include "devspec.h"
#include "errmsg.h"
#include "durable.h"
#include "benchio.h"
#include "journal.h"
#include "journal_format.h"
#include "safety.h"
#include "sim.h"
#include "stats.h"
#include "testutil.h"
#include "util.h"
#include "tests.h"

#define MIB (1024u * 1024u)
#define QUIET_SIM "seed,size=16M,jitter=0,stall_ppm=0,location=0"
#define AREA_START (4u * MIB)
#define AREA_END (12u * MIB)

static char test_dir[PATH_MAX];		/* "" when setup failed */
static char state_dir[PATH_MAX + 8];

/* ---- fixtures ---- */

static void dir_setup(void)
{
	snprintf(test_dir, sizeof(test_dir), "/var/tmp/flashprobe-jrnl.XXXXXX");
	if (mkdtemp(test_dir) == NULL) {
		test_dir[0] = '\0';
		return;
	}
	snprintf(state_dir, sizeof(state_dir), "%s/state", test_dir);
	mkdir(state_dir, 0700);
	tu_state_dir_set(state_dir);
}

static void dir_teardown(void)
{
	tu_state_dir_unset();
	if (test_dir[0] != '\0')
		tu_rm_tree(test_dir);
	test_dir[0] = '\0';
}

/* ---- helpers ---- */

static struct fp_dev *sim_with(const char *spec, uint64_t seed)
{
	struct sim_profile p;
	struct fp_dev *d = NULL;
	char err[256];

	ck_assert_msg(sim_profile_parse(spec, &p, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_int_eq(sim_open(&p, &d), 0);
	ck_assert_int_eq(sim_fill_random(d, seed), 0);
	return d;
}

/* FNV-1a 64 of [start, end) of a device, read through the device layer. */
static uint64_t dev_sum_range(struct fp_dev *d, uint64_t start, uint64_t end)
{
	uint64_t h = tu_dev_sum(d, start, end);

	ck_assert_msg(h != 0, "cannot read [%llu, %llu)", (unsigned long long)start,
		      (unsigned long long)end);
	return h;
}

static uint64_t dev_sum(struct fp_dev *d)
{
	return dev_sum_range(d, 0, fp_dev_size_bytes(d));
}

/* Zeroes over [from, to) of d, written past any journal: the blank part
 * of a card. */
static void blank_range(struct fp_dev *d, uint64_t from, uint64_t to)
{
	unsigned char *zero = fp_dev_alloc_buf(MIB);

	ck_assert_ptr_nonnull(zero);
	memset(zero, 0, MIB);
	fp_dev_end_write_area(d);
	ck_assert_int_eq(fp_dev_set_write_area(d, from, to), 0);
	for (uint64_t at = from; at < to; at += MIB)
		ck_assert_int_eq(fp_dev_write_timed(d, zero, (size_t)(to - at < MIB ? to - at : MIB),
						    at, NULL), 0);
	fp_dev_end_write_area(d);
	free(zero);
}

static void blank_from(struct fp_dev *d, uint64_t from)
{
	blank_range(d, from, fp_dev_size_bytes(d));
}

/* A 16 MiB card blank but for [4 MiB, 12 MiB) (the test's area) and
 * [1.25 MiB, 2 MiB), which evenly spaced blocks (every 16 MiB / 15)
 * pass by. */
static void blank_but_area_and_stripe(struct fp_dev *d)
{
	blank_range(d, 0, MIB + MIB / 4);
	blank_range(d, 2 * MIB, AREA_START);
	blank_from(d, AREA_END);
}

/* The tests' fill byte over [start, end) through d, 1 MiB at a time (as
 * open-au and find-fat write). */
static void fill_area(struct fp_dev *d, uint64_t start, uint64_t end)
{
	unsigned char *buf = fp_dev_alloc_buf(MIB);

	ck_assert_ptr_nonnull(buf);
	memset(buf, FP_FILL_BYTE, MIB);
	ck_assert_int_eq(fp_dev_set_write_area(d, start, end), 0);
	for (uint64_t off = start; off < end; off += MIB)
		ck_assert_int_eq(fp_dev_write_timed(d, buf, (size_t)(end - off < MIB ?
								      end - off : MIB),
						    off, NULL), 0);
	free(buf);
}

/* Write seeded garbage over [start, end) through d in uneven chunks. */
static void scribble(struct fp_dev *d, uint64_t start, uint64_t end,
		     uint64_t seed)
{
	unsigned char *buf = fp_dev_alloc_buf(MIB);
	struct stats_rng rng;

	ck_assert_ptr_nonnull(buf);
	stats_rng_seed(&rng, seed);
	ck_assert_int_eq(fp_dev_set_write_area(d, start, end), 0);
	for (uint64_t off = start; off < end;) {
		uint64_t n = (1 + stats_rng_below(&rng, 512)) * 512;

		if (n > end - off)
			n = end - off;
		for (size_t i = 0; i < n; i++)
			buf[i] = (unsigned char)stats_rng_next(&rng);
		ck_assert_int_eq(fp_dev_write_timed(d, buf, (size_t)n, off, NULL),
				 0);
		off += n;
	}
	free(buf);
}

static void jpath(char *buf, size_t len, const char *name)
{
	ck_assert_msg(test_dir[0] != '\0', "no test directory");
	ck_assert(snprintf(buf, len, "%s/%s", test_dir, name) < (int)len);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static struct fp_dev *jopen(struct fp_dev *inner, const char *path)
{
	struct fp_dev *jd = NULL;
	char err[512] = "";
	int rc = journal_open(inner, path, &jd, err, sizeof(err));

	ck_assert_msg(rc == 0, "journal_open: %d %s", rc, err);
	return jd;
}

/* A journal left behind by a run that died after scribbling on d:
 * returns the device's checksum in that damaged state. */
static uint64_t crashed_run(struct fp_dev *d, const char *path, uint64_t start,
			    uint64_t end)
{
	struct fp_dev *jd = jopen(d, path);
	char err[512] = "";

	ck_assert_msg(journal_backup_area(jd, start, end, err, sizeof(err)) == 0,
		      "%s", err);
	scribble(jd, start, end, 99);
	fp_dev_close(jd);	/* no journal_finish: as if killed */
	ck_assert(exists(path));
	return dev_sum(d);
}

static size_t file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (size_t)st.st_size;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	unsigned char *buf;

	ck_assert_int_ge(fd, 0);
	*len = file_size(path);
	buf = malloc(*len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(read(fd, buf, *len), (ssize_t)*len);
	close(fd);
	return buf;
}

static void spill(const char *path, const unsigned char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* ---- round trips ---- */

START_TEST(test_roundtrip_sim)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 7), *jd;
	struct journal_restore_report rep;
	uint64_t before = dev_sum(d);
	char path[PATH_MAX], err[512] = "";
	/* Not MiB aligned: records of 1 MiB and a short one. */
	uint64_t start = AREA_START + 512, end = AREA_END - 3 * 512;

	jpath(path, sizeof(path), "rt-sim.journal");
	jd = jopen(d, path);
	ck_assert_str_eq(journal_path_of(jd), path);
	ck_assert_int_eq(journal_backup_area(jd, start, end, err, sizeof(err)), 0);
	scribble(jd, start, end, 1);
	ck_assert_uint_ne(dev_sum(d), before);
	ck_assert_uint_eq(fp_dev_bytes_written(jd), end - start);
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(rep.restored_bytes, end - start);
	ck_assert_uint_eq(rep.records, (end - start + MIB - 1) / MIB);
	ck_assert_uint_eq(rep.nfailed, 0);
	ck_assert(rep.deleted);
	ck_assert(!exists(path));
	ck_assert_uint_eq(dev_sum(d), before);
	/* Finished: no more writes through the journal device. */
	ck_assert_int_ne(fp_dev_write_timed(jd, (unsigned char[512]){ 0 }, 512,
					    start, NULL), 0);
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

/* An image deleted after a crash and made again under its name gets the
 * old inode number at once on ext4, and when both are blank the
 * fingerprint matches too: a restore replayed the old journal over the
 * new file's data, on the image and on a loop device over it.  Only the
 * birth time tells them apart.  The journal's birth of file is moved back
 * a second, as the deleted file's would be: the restore onto node refuses
 * it and writes nothing; put back, the same journal restores. */
static void check_reborn_refused(const char *node, const char *file,
				 const char *test)
{
	uint64_t birth = util_birth_ns(AT_FDCWD, file, 0), before, crashed;
	struct journal_restore_report rep;
	unsigned char hdr[JR_STATIC_BYTES];
	char path[PATH_MAX], err[512] = "";
	struct fp_dev *d = NULL;
	struct jr_header h;
	int fd;

	if (birth == 0) {
		tu_skip(test, "the file system keeps no birth times");
		return;
	}
	before = tu_checksum(node);
	ck_assert_msg(fp_dev_open_path(node, FP_OPEN_WRITE, &d, err, sizeof(err)) == 0,
		      "%s", err);
	jpath(path, sizeof(path), "reborn.journal");
	crashed = crashed_run(d, path, 2 * MIB, 3 * MIB);
	ck_assert_int_eq(jr_header_read(path, true, &fd, &h, err, sizeof(err)), 0);
	ck_assert_uint_eq(h.id.file_birth_ns, birth);
	h.id.file_birth_ns = birth - 1000000000u;
	jr_static_encode(&h, hdr);
	ck_assert_int_eq(pwrite(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	ck_assert_msg(strstr(err, "made at another time"), "%s", err);
	ck_assert_uint_eq(dev_sum(d), crashed);
	ck_assert(exists(path));
	h.id.file_birth_ns = birth;
	jr_static_encode(&h, hdr);
	ck_assert_int_eq(pwrite(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	close(fd);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(dev_sum(d), before);
	fp_dev_close(d);
}

/* An image grown after a crash: its journal is refused (the blocks past
 * its old end were never saved), and the line says that the image was
 * resized and how to give it back its size; it said "belongs to IMG, not
 * to IMG".  Truncated back, the journal restores it. */
START_TEST(test_resized_image_named)
{
	char *img = bf_image_in(test_dir, 8u * MIB, 24);
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";
	struct fp_dev *d = NULL;
	uint64_t before, crashed;

	ck_assert_ptr_nonnull(img);
	before = tu_checksum(img);
	ck_assert_msg(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err, sizeof(err)) == 0,
		      "%s", err);
	jpath(path, sizeof(path), "resized.journal");
	crashed_run(d, path, 2 * MIB, 3 * MIB);
	fp_dev_close(d);
	crashed = tu_checksum(img);
	ck_assert_int_eq(truncate(img, 9 * MIB), 0);
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err, sizeof(err)), 0);
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	ck_assert_msg(strstr(err, "resized") && strstr(err, "truncate -s 8388608"),
		      "%s", err);
	fp_dev_close(d);
	ck_assert_int_eq(truncate(img, 8 * MIB), 0);
	ck_assert_uint_eq(tu_checksum(img), crashed);
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err, sizeof(err)), 0);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	fp_dev_close(d);
	ck_assert_uint_eq(tu_checksum(img), before);
	free(img);
}
END_TEST

/* The journal's directory moved away while the test ran (a failing file
 * system remounted elsewhere does the same): the restore at its end puts
 * the data back but cannot delete the journal.  It is marked replayed
 * through the test's own descriptor, and the report says it was not
 * deleted and why (the session then says so and fails); it used to be
 * left unmarked and unmentioned, and a later restore put the old data
 * over whatever the card held by then. */
START_TEST(test_journal_moved_during_test)
{
	char dir[PATH_MAX], moved[PATH_MAX + 8], path[PATH_MAX + 32], err[512] = "";
	char moved_path[PATH_MAX + 64];
	struct fp_dev *d = sim_with(QUIET_SIM, 17), *jd;
	struct journal_restore_report rep;
	uint64_t orig = dev_sum(d), later;

	jpath(dir, sizeof(dir), "moving-state");
	snprintf(moved, sizeof(moved), "%s.away", dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/moved.journal", dir);
	jd = jopen(d, path);
	ck_assert_msg(journal_backup_area(jd, AREA_START, AREA_END, err, sizeof(err)) == 0,
		      "%s", err);
	scribble(jd, AREA_START, AREA_END, 7);
	ck_assert_int_eq(rename(dir, moved), 0);
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s",
		      err);
	fp_dev_close(jd);
	ck_assert_uint_eq(dev_sum(d), orig);
	ck_assert(!rep.deleted && rep.marked_spent);
	ck_assert_int_eq(rep.delete_error, -ENOENT);
	/* the card is used, then the journal is found again: not replayed */
	scribble(d, AREA_START, AREA_START + MIB, 8);
	later = dev_sum(d);
	snprintf(moved_path, sizeof(moved_path), "%s/moved.journal", moved);
	ck_assert_msg(journal_restore(moved_path, d, 0, NULL, NULL, &rep, err,
				      sizeof(err)) == 0, "%s", err);
	ck_assert(rep.spent && rep.deleted);
	ck_assert_uint_eq(dev_sum(d), later);
	fp_dev_close(d);
	rmdir(moved);
}
END_TEST

/* The journal deleted (case 0) or its directory moved away (case 1)
 * while the test still writes: a crash from then on would find no journal
 * (its pointer names the old path) and leave the test's data on the card.
 * The next write is refused instead, the end restores the card from the
 * open file, and the pointer goes with it: it was left behind, and told
 * every later run that the card may hold test data until removed by hand
 * (an attack: "the journal of the last test is lost", the card intact). */
START_TEST(test_journal_gone_stops_test)
{
	char *img = bf_image_in(test_dir, 16u * MIB, 29);
	char dir[PATH_MAX], away[PATH_MAX + 8], path[PATH_MAX + 32], def[PATH_MAX];
	char found[PATH_MAX], name[16], err[512] = "";
	unsigned char *buf = fp_dev_alloc_buf(64 * 1024);
	struct journal_restore_report rep;
	struct fp_dev *d = NULL, *jd;
	uint64_t before;

	ck_assert_ptr_nonnull(img);
	before = tu_checksum(img);
	ck_assert_ptr_nonnull(buf);
	snprintf(name, sizeof(name), "jdir%d", _i);
	jpath(dir, sizeof(dir), name);
	snprintf(away, sizeof(away), "%s.away", dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/gone.journal", dir);
	ck_assert_int_eq(journal_default_path(img, def, sizeof(def), err, sizeof(err)), 0);
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err, sizeof(err)), 0);
	jd = jopen(d, path);
	scribble(jd, MIB, 3 * MIB, 5);
	ck_assert(exists(def));
	if (_i == 0)
		ck_assert_int_eq(unlink(path), 0);
	else
		ck_assert_int_eq(rename(dir, away), 0);
	memset(buf, 0xa5, 64 * 1024);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, 64 * 1024, 2 * MIB, NULL), -ESTALE);
	ck_assert_msg(strstr(journal_last_error(jd), "deleted, moved or replaced"),
		      "%s", journal_last_error(jd));
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s", err);
	ck_assert(!rep.deleted && rep.marked_spent);
	ck_assert_int_eq(rep.delete_error, -ENOENT);
	fp_dev_close(jd);
	fp_dev_close(d);
	ck_assert_uint_eq(tu_checksum(img), before);
	ck_assert_msg(!exists(def), "the pointer '%s' was left behind", def);
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err, sizeof(err)), 0);
	unlink(img);
	free(img);
	free(buf);
	tu_rm_tree(_i ? away : dir);
}
END_TEST

START_TEST(test_reborn_inode_refused)
{
	char *img = bf_image_in(test_dir, 8u * MIB, 23);

	ck_assert_ptr_nonnull(img);
	check_reborn_refused(img, img, "journal/test_reborn_inode_refused");
	free(img);
}
END_TEST

/* A test that saved the whole image before writing it (find-fat on a
 * small card) leaves the fingerprint nothing to compare.  Another file of
 * the same size copied over the image after the crash (same path, same
 * inode) must not get the journal's data: the saved ranges read as
 * neither what was saved nor the fill byte, so the restore is refused
 * (status 3's error) and the file stays as it is, also with --force
 * (which overrides the identity checks, not the data found there);
 * --force with --overwrite-newer restores. */
START_TEST(test_replaced_image_refused)
{
	char *img = bf_image_in(test_dir, 8u * MIB, 21), *other = bf_image_in(test_dir, 8u * MIB, 22);
	struct journal_restore_report rep;
	struct fp_dev *d = NULL, *jd;
	char path[PATH_MAX], err[512] = "";
	uint64_t before, replaced;
	int rc;

	ck_assert(img && other);
	before = tu_checksum(img);
	ck_assert_msg(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err, sizeof(err)) == 0, "%s", err);
	jpath(path, sizeof(path), "replaced.journal");
	jd = jopen(d, path);
	fill_area(jd, 0, 8u * MIB);
	fp_dev_close(jd);	/* killed */
	ck_assert_int_eq(tu_copy_sparse(other, img, 0), 0);
	replaced = tu_checksum(img);
	rc = journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err));
	ck_assert_msg(rc == -FP_EREFUSED && strstr(err, "probably not the card"), "%d %s", rc, err);
	ck_assert_uint_eq(tu_checksum(img), replaced);
	ck_assert(exists(path));
	ck_assert_int_eq(journal_restore(path, d, JOURNAL_RESTORE_FORCE, NULL, NULL, &rep, err,
					 sizeof(err)), -FP_EREFUSED);
	ck_assert_uint_eq(tu_checksum(img), replaced);
	ck_assert_int_eq(journal_restore(path, d, JOURNAL_RESTORE_FORCE |
					 JOURNAL_RESTORE_OVERWRITE_NEWER, NULL, NULL, &rep, err,
					 sizeof(err)), 0);
	ck_assert_uint_eq(tu_checksum(img), before);
	fp_dev_close(d);
	unlink(other);
	free(other);
	free(img);
}
END_TEST

/* After a crash, another card that is blank where the first one is and
 * differs where the first one holds data: the restore refuses it and
 * leaves it as it is.  The fingerprint takes blocks with data first;
 * before, it took evenly spread blocks, every one of them blank on both
 * cards here, and let the journal's data onto the other card. */
START_TEST(test_restore_refuses_card_sharing_blank)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 51);
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";
	uint64_t other;
	int rc;

	blank_but_area_and_stripe(d);
	jpath(path, sizeof(path), "blank-swap.journal");
	crashed_run(d, path, AREA_START, AREA_END);
	ck_assert_int_eq(sim_fill_random(d, 52), 0);
	blank_but_area_and_stripe(d);
	other = dev_sum(d);
	rc = journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err));
	ck_assert_msg(rc == -FP_EREFUSED && strstr(err, "probably not the card"), "%d %s", rc, err);
	ck_assert_uint_eq(dev_sum(d), other);
	ck_assert(exists(path));
	fp_dev_close(d);
	unlink(path);
}
END_TEST

/* An image file, backed up from sector 0 as the FAT test needs. */
START_TEST(test_roundtrip_file)
{
	char *img = bf_image_in(test_dir, 32u * MIB, 11);
	struct journal_restore_report rep;
	struct fp_dev *d = NULL, *jd;
	char path[PATH_MAX], err[512] = "";
	uint64_t before;

	ck_assert_ptr_nonnull(img);
	before = tu_checksum(img);
	ck_assert_msg(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err,
				       sizeof(err)) == 0, "%s", err);
	jpath(path, sizeof(path), "rt-file.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, 0, 8u * MIB, err, sizeof(err)),
			 0);
	scribble(jd, 0, 8u * MIB, 2);
	ck_assert_uint_ne(tu_checksum(img), before);
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert(rep.deleted);
	fp_dev_close(jd);
	fp_dev_close(d);
	ck_assert_uint_eq(tu_checksum(img), before);
	unlink(img);
	free(img);
}
END_TEST

/* Writes outside any announced backup are saved on the fly, overlapping
 * ones only once, and the backup time does not show in the write's time. */
/* A card swapped in the same reader mid-test (here: the sim's content
 * replaced behind the open device): the next backup finds the blocks the
 * test never wrote changed, so the second card gets no more writes and
 * none of its blocks enters the journal; the end restores nothing onto
 * it; with the first card back, the journal puts that card back exactly.
 * Before, the second card's blocks were saved and later replayed onto
 * the first card.  The write area is [lo, hi). */
static void swap_mid_test(uint64_t lo, uint64_t hi, bool blank_top)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 41), *jd;
	uint64_t size = fp_dev_size_bytes(d), before, second;
	unsigned char *buf = fp_dev_alloc_buf(MIB), *first = malloc(size);
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";

	ck_assert(buf != NULL && first != NULL);
	if (blank_top)
		blank_from(d, size / 2);
	before = dev_sum(d);
	jpath(path, sizeof(path), "swap.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(fp_dev_set_write_area(jd, lo, hi), 0);
	memset(buf, 0x5a, MIB);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, AREA_START, NULL), 0);
	/* the first card leaves the reader as the test left it */
	ck_assert_int_eq(fp_dev_read_timed(d, first, (size_t)size, 0, NULL), 0);
	ck_assert_int_eq(sim_fill_random(d, 42), 0);
	if (blank_top)
		blank_from(d, size / 2);
	second = dev_sum(d);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, AREA_START + MIB, NULL),
			 -FP_EREFUSED);
	ck_assert_msg(strstr(journal_last_error(jd), "changed during the test"), "%s",
		      journal_last_error(jd));
	/* refused from then on, also where the block was saved already */
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, AREA_START, NULL),
			 -FP_EREFUSED);
	ck_assert_uint_eq(dev_sum(d), second);
	ck_assert_int_eq(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	ck_assert_msg(strstr(err, "put that card back") && strstr(err, path), "%s", err);
	fp_dev_close(jd);
	ck_assert_uint_eq(dev_sum(d), second);
	ck_assert(exists(path));
	/* the first card back in the reader: restored byte for byte */
	fp_dev_end_write_area(d);
	ck_assert_int_eq(fp_dev_set_write_area(d, 0, size), 0);
	ck_assert_int_eq(fp_dev_write_timed(d, first, (size_t)size, 0, NULL), 0);
	fp_dev_end_write_area(d);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(dev_sum(d), before);
	ck_assert(!exists(path));
	free(first);
	free(buf);
	fp_dev_close(d);
}

START_TEST(test_card_swapped_mid_test)
{
	swap_mid_test(AREA_START, AREA_END, false);
}
END_TEST

/* Both cards blank in their upper half (a new card, a file system's free
 * space): the swap check's blocks there read alike on either card, which
 * says nothing about the card; those with data differ.  Before, the
 * first blank block that matched ended the check, the swap went unseen,
 * and the second card's blocks entered the journal. */
START_TEST(test_card_swapped_sharing_blank)
{
	swap_mid_test(AREA_START, AREA_END, true);
}
END_TEST

/* The same with the whole card as the write area (find-fat or open-au on
 * a card of 128 MiB or less): only the capacity check, whose writes alias
 * everywhere on a fake, goes without the swap check.  Before, a test
 * writing the whole card never noticed the swap. */
START_TEST(test_card_swapped_whole_card)
{
	swap_mid_test(0, 16 * MIB, false);
}
END_TEST

/* A test that only rewrites blocks it saved already makes no backups to
 * check before: the card is checked every 64 MiB of writes too, so a
 * swapped card takes at most that much before the test is stopped. */
START_TEST(test_card_swapped_while_rewriting)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 43), *jd;
	unsigned char *buf = fp_dev_alloc_buf(MIB);
	char path[PATH_MAX];
	unsigned passed = 0;
	int rc = 0;

	ck_assert_ptr_nonnull(buf);
	jpath(path, sizeof(path), "swap-rewrite.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(fp_dev_set_write_area(jd, AREA_START, AREA_END), 0);
	memset(buf, 0x3c, MIB);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, AREA_START, NULL), 0);
	ck_assert_int_eq(sim_fill_random(d, 44), 0);
	while (passed < 100 && (rc = fp_dev_write_timed(jd, buf, MIB, AREA_START,
							 NULL)) == 0)
		passed++;
	ck_assert_int_eq(rc, -FP_EREFUSED);
	ck_assert_uint_lt(passed, 64);
	fp_dev_close(jd);
	unlink(path);
	free(buf);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_on_the_fly)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 8), *twin = sim_with(QUIET_SIM, 8);
	struct journal_restore_report rep;
	unsigned char *buf = fp_dev_alloc_buf(MIB);
	uint64_t before = dev_sum(d), ns_j = 0, ns_t = 0;
	static const uint64_t offs[][2] = {
		{ 8 * MIB, 3 * MIB }, { 9 * MIB, 64 * 1024 },
		{ 7 * MIB + 512, 2 * MIB }, { 14 * MIB, 4096 },
		{ 0, 4096 },
	};
	char path[PATH_MAX], err[512] = "";
	struct fp_dev *jd;

	jpath(path, sizeof(path), "otf.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(fp_dev_set_write_area(jd, 0, fp_dev_size_bytes(jd)), 0);
	ck_assert_int_eq(fp_dev_set_write_area(twin, 0, fp_dev_size_bytes(twin)),
			 0);
	memset(buf, 0x5a, MIB);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (uint64_t o = 0; o < offs[i][1]; o += MIB) {
			size_t n = offs[i][1] - o < MIB ? (size_t)(offs[i][1] - o)
							: MIB;

			ck_assert_int_eq(fp_dev_write_timed(jd, buf, n,
							    offs[i][0] + o, &ns_j),
					 0);
			ck_assert_int_eq(fp_dev_write_timed(twin, buf, n,
							    offs[i][0] + o, &ns_t),
					 0);
			ck_assert_uint_eq(ns_j, ns_t);
		}
	}
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s",
		      err);
	/* The union of the ranges widened to whole 1 MiB save blocks:
	 * [7M, 11M), [14M, 15M), [0, 1M). */
	ck_assert_uint_eq(JOURNAL_SAVE_GRAIN_BYTES, MIB);
	ck_assert_uint_eq(rep.restored_bytes, 4 * MIB + MIB + MIB);
	ck_assert_uint_eq(dev_sum(d), before);
	free(buf);
	fp_dev_close(jd);
	fp_dev_close(d);
	fp_dev_close(twin);
}
END_TEST

/* The journal's file system fills up (RLIMIT_FSIZE stands in): the write
 * whose backup failed is not performed, the journal is cut back to its
 * last commit and still restores everything that was written. */
START_TEST(test_journal_full)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 31), *jd;
	struct journal_restore_report rep;
	unsigned char *buf = fp_dev_alloc_buf(MIB);
	uint64_t before = dev_sum(d), at_b;
	struct rlimit old, lim;
	char path[PATH_MAX], err[512] = "";
	void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);

	jpath(path, sizeof(path), "full.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(fp_dev_set_write_area(jd, 0, fp_dev_size_bytes(jd)), 0);
	memset(buf, 0xa5, MIB);
	at_b = dev_sum_range(d, 8 * MIB, 9 * MIB);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 2048 + 40 + MIB + 40 + MIB / 2;	/* one record fits */
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, 2 * MIB, NULL), 0);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, 8 * MIB, NULL), -EFBIG);
	ck_assert_ptr_nonnull(strstr(journal_last_error(jd), "cannot write"));
	ck_assert_uint_eq(dev_sum_range(d, 8 * MIB, 9 * MIB), at_b);
	/* The journal is whole again: saved ranges still pass. */
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, 4096, 2 * MIB + 8192, NULL),
			 0);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_xfsz);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, 8 * MIB, NULL), 0);
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(rep.restored_bytes, 2 * MIB);
	ck_assert_uint_eq(dev_sum(d), before);
	free(buf);
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

/* Nothing written: nothing to restore, the journal just goes away. */
START_TEST(test_no_write_no_replay)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 9), *jd;
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";

	jpath(path, sizeof(path), "nowrite.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START, AREA_END, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.records, 0);
	ck_assert(rep.deleted);
	ck_assert(!exists(path));
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_bad_backup_range)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 9), *jd;
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";

	jpath(path, sizeof(path), "badrange.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, 100, 4096, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(journal_backup_area(jd, 0, fp_dev_size_bytes(d) + 512,
					     err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(journal_backup_area(jd, 4096, 4096, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

/* An existing journal is never overwritten. */
START_TEST(test_existing_journal_refused)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 9), *jd = NULL;
	char path[PATH_MAX], err[512] = "";

	jpath(path, sizeof(path), "exists.journal");
	spill(path, (const unsigned char *)"x", 1);
	ck_assert_int_eq(journal_open(d, path, &jd, err, sizeof(err)), -EEXIST);
	ck_assert_ptr_null(jd);
	ck_assert_ptr_nonnull(strstr(err, "already exists"));
	ck_assert_int_eq((int)file_size(path), 1);
	fp_dev_close(d);
}
END_TEST

/* ---- damaged journals ---- */

/* A journal left behind by a run that died after writing on d the way
 * open-au and find-fat do: each 1 MiB block saved (and committed) on the
 * fly just before its first write, so the journal holds several commits. */
static uint64_t crashed_sparse_run_of(struct fp_dev *d, const char *path,
				      uint64_t start, uint64_t end, bool fill)
{
	struct fp_dev *jd = jopen(d, path);

	if (fill)
		fill_area(jd, start, end);
	else
		scribble(jd, start, end, 98);
	fp_dev_close(jd);	/* no journal_finish: as if killed */
	ck_assert(exists(path));
	return dev_sum(d);
}

static uint64_t crashed_sparse_run(struct fp_dev *d, const char *path,
				   uint64_t start, uint64_t end)
{
	return crashed_sparse_run_of(d, path, start, end, false);
}

/* Where every record of a journal file starts, and where the file ends
 * (last element). */
static size_t record_starts(const unsigned char *j, size_t len, size_t *at,
			    size_t max)
{
	size_t n = 0, pos = 4096;

	while (pos + 40 <= len && n + 1 < max) {
		uint32_t type = j[pos + 4];
		uint64_t rlen = 0;

		for (int i = 7; i >= 0; i--)
			rlen = rlen << 8 | j[pos + 24 + i];
		at[n++] = pos;
		pos += 40 + (type == 1 ? rlen : 0);
	}
	at[n++] = len;
	return n;
}

/* The one rule of a replay: the device comes back whole, or nothing is
 * written and the journal is kept with an error. */
static int restore_copy(struct fp_dev *d, const char *copy, uint64_t orig,
			uint64_t damaged, const char *what)
{
	struct journal_restore_report rep;
	char err[512] = "";
	int rc = journal_restore(copy, d, 0, NULL, NULL, &rep, err, sizeof(err));
	uint64_t now = dev_sum(d);

	if (rc == 0) {
		ck_assert_msg(now == orig, "%s: restore said yes, device differs",
			      what);
		ck_assert_msg(!exists(copy), "%s: journal left", what);
	} else {
		ck_assert_msg(now == damaged, "%s: rc %d but device changed (%s)",
			      what, rc, err);
		ck_assert_msg(exists(copy), "%s: refused journal deleted", what);
		ck_assert_msg(strstr(err, copy) != NULL, "%s: %s", what, err);
	}
	return rc;
}

/* Cut at every record boundary and inside every record (header, data,
 * last byte), and inside the file header: a journal whose header commits
 * records that are no longer all there is refused, never replayed in
 * part.  The crash leaves every record committed, so every cut refuses. */
START_TEST(test_cut_journal_everywhere)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 12);
	uint64_t orig = dev_sum(d), damaged;
	char path[PATH_MAX], copy[PATH_MAX], what[64], err[512] = "";
	struct journal_restore_report rep;
	size_t len, at[64], n, cuts = 0;
	unsigned char *j;

	jpath(path, sizeof(path), "cut.journal");
	jpath(copy, sizeof(copy), "cut-copy.journal");
	damaged = crashed_sparse_run(d, path, AREA_START, AREA_START + 3 * MIB);
	j = slurp(path, &len);
	n = record_starts(j, len, at, 64);
	ck_assert_uint_ge(n, 7);	/* 3 data records, 3 commits, the end */
	for (size_t k = 0; k + 1 < n; k++) {
		const size_t inside[] = { 0, 1, 20, 39, 40, 41, 4096, 65537 };

		for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
			size_t cut = at[k] + inside[i];

			if (cut >= at[k + 1] || (i > 0 && cut == at[k]))
				continue;
			spill(copy, j, cut);
			snprintf(what, sizeof(what), "cut at %zu", cut);
			ck_assert_msg(restore_copy(d, copy, orig, damaged, what) ==
				      -EBADMSG, "%s", what);
			cuts++;
		}
	}
	/* inside the file header, the commit slots included */
	for (size_t cut = 0; cut < 4096; cut += 511) {
		spill(copy, j, cut);
		snprintf(what, sizeof(what), "header cut at %zu", cut);
		ck_assert_int_ne(restore_copy(d, copy, orig, damaged, what), 0);
	}
	ck_assert_uint_ge(cuts, 3 * 7);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err,
				      sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(dev_sum(d), orig);
	free(j);
	fp_dev_close(d);
}
END_TEST

/* What a crash leaves: records written after the last commit slot never
 * let a write through, so a tail beyond it (cut, garbage, an unfinished
 * record) is ignored and everything committed is restored. */
START_TEST(test_uncommitted_tail)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 31);
	uint64_t orig = dev_sum(d), damaged;
	char path[PATH_MAX], copy[PATH_MAX];
	unsigned char *j, *longer;
	size_t len;

	jpath(path, sizeof(path), "tail.journal");
	jpath(copy, sizeof(copy), "tail-copy.journal");
	damaged = crashed_sparse_run(d, path, AREA_START, AREA_START + 2 * MIB);
	j = slurp(path, &len);
	longer = malloc(len + 5000);
	ck_assert_ptr_nonnull(longer);
	memcpy(longer, j, len);
	/* the start of the next record, as an append cut by the crash */
	memcpy(longer + len, j + 4096, 40 + 4000);
	memset(longer + len + 4040, 0xa5, 960);
	spill(copy, longer, len + 5000);
	ck_assert_int_eq(restore_copy(d, copy, orig, damaged, "tail"), 0);
	free(longer);
	free(j);
	fp_dev_close(d);
	(void)path;
}
END_TEST

/* Any flipped byte of what the journal commits is found (static header,
 * commit slots, record headers, data, commit records) and refused; the
 * header's spare bytes are not part of the proof. */
START_TEST(test_corrupt_journal)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 13);
	uint64_t orig = dev_sum(d), damaged;
	char path[PATH_MAX], copy[PATH_MAX], what[64], err[512] = "";
	struct journal_restore_report rep;
	size_t len, at[64], n, tried = 0;
	unsigned char *j;

	jpath(path, sizeof(path), "corrupt.journal");
	jpath(copy, sizeof(copy), "corrupt-copy.journal");
	damaged = crashed_sparse_run(d, path, AREA_START, AREA_START + 3 * MIB);
	j = slurp(path, &len);
	n = record_starts(j, len, at, 64);
	{
		size_t where[64 + 8] = { 3, 100, 2044, 2048 + 9, 2560 + 20,
					 2560 + 508 };
		size_t nw = 6;

		for (size_t k = 0; k + 1 < n; k++) {
			where[nw++] = at[k] + 17;			/* header */
			if (at[k + 1] - at[k] > 40)
				where[nw++] = at[k + 1] - 1;	/* data */
		}
		for (size_t i = 0; i < nw; i++) {
			j[where[i]] ^= 0x10;
			spill(copy, j, len);
			j[where[i]] ^= 0x10;
			snprintf(what, sizeof(what), "byte %zu", where[i]);
			ck_assert_msg(restore_copy(d, copy, orig, damaged, what) !=
				      0, "%s accepted", what);
			tried++;
		}
	}
	ck_assert_uint_ge(tried, 6 + 6 + 3);
	j[3500] ^= 0x10;	/* spare header bytes */
	spill(copy, j, len);
	ck_assert_int_eq(restore_copy(d, copy, orig, damaged, "spare"), 0);
	j[3500] ^= 0x10;
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err,
				      sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(dev_sum(d), orig);
	free(j);
	fp_dev_close(d);
}
END_TEST

/* A copy of journal j with [at, at + n) zeroed, restored through
 * restore_copy()'s rule: the device comes back whole or stays as it was. */
static int restore_zeroed(struct fp_dev *d, const char *copy,
			  unsigned char *j, size_t len, size_t at, size_t n,
			  uint64_t orig, uint64_t damaged, const char *what)
{
	unsigned char *z = malloc(len);
	int rc;

	ck_assert_ptr_nonnull(z);
	memcpy(z, j, len);
	memset(z + at, 0, n);
	spill(copy, z, len);
	free(z);
	rc = restore_copy(d, copy, orig, damaged, what);
	if (rc == 0)
		ck_assert_uint_eq(dev_sum(d), orig);
	return rc;
}

/* Erased commit slots never make a journal look complete or empty: its
 * intact COMMIT records prove more.  Three commits (slot A gen 2, slot B
 * gen 3): erasing either slot or both is refused and keeps the device as
 * it was; one commit with its slot erased is the state a crash between
 * the COMMIT record and its slot leaves, and its records are replayed. */
START_TEST(test_erased_slots)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 14);
	uint64_t orig = dev_sum(d), damaged;
	char path[PATH_MAX], one[PATH_MAX], copy[PATH_MAX];
	unsigned char *j;
	size_t len;

	jpath(path, sizeof(path), "erased.journal");
	jpath(one, sizeof(one), "erased-one.journal");
	jpath(copy, sizeof(copy), "erased-copy.journal");
	damaged = crashed_sparse_run(d, path, AREA_START, AREA_START + 3 * MIB);
	j = slurp(path, &len);
	ck_assert_int_eq(restore_zeroed(d, copy, j, len, 2048, 1024, orig,
					damaged, "both slots"), -EBADMSG);
	ck_assert_int_eq(restore_zeroed(d, copy, j, len, 2048, 512, orig,
					damaged, "slot A"), -EBADMSG);
	ck_assert_int_eq(restore_zeroed(d, copy, j, len, 2560, 512, orig,
					damaged, "slot B (newest)"), -EBADMSG);
	ck_assert_int_eq(restore_copy(d, path, orig, damaged, "intact"), 0);
	free(j);
	ck_assert_uint_eq(dev_sum(d), orig);

	/* fill-byte writes: one commit (other data adds a second, which
	 * says the writes are no longer all of the fill byte) */
	damaged = crashed_sparse_run_of(d, one, AREA_START, AREA_START + MIB, true);
	j = slurp(one, &len);
	ck_assert_int_eq(restore_zeroed(d, copy, j, len, 2560, 512, orig,
					damaged, "the only slot"), 0);
	free(j);
	ck_assert_uint_eq(dev_sum(d), orig);
	fp_dev_close(d);
}
END_TEST

/* Slots erased while the test runs: the restore at its end replays what
 * the test committed, as it holds it in memory, and still fails, keeping
 * the journal, since the file was changed behind its back. */
START_TEST(test_slots_erased_mid_test)
{
	static const unsigned char zero[1024];
	struct fp_dev *d = sim_with(QUIET_SIM, 15), *jd;
	struct journal_restore_report rep;
	uint64_t orig = dev_sum(d);
	char path[PATH_MAX], err[512] = "";
	int fd, rc;

	jpath(path, sizeof(path), "midtest.journal");
	jd = jopen(d, path);
	scribble(jd, AREA_START, AREA_START + 3 * MIB, 97);
	ck_assert_uint_ne(dev_sum(d), orig);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, zero, sizeof(zero), 2048),
			 (ssize_t)sizeof(zero));
	close(fd);
	rc = journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err));
	fp_dev_close(jd);
	ck_assert_uint_eq(dev_sum(d), orig);
	ck_assert_msg(rc == -EBADMSG && strstr(err, "were changed"), "%d %s",
		      rc, err);
	ck_assert(exists(path));
	fp_dev_close(d);
}
END_TEST

/* --force replays every intact record, also those after the damage, keeps
 * the journal, and still fails, naming how many committed records are
 * missing and where test data may be left. */
START_TEST(test_force_replays_every_intact_record)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 32);
	uint64_t orig = dev_sum(d);
	uint64_t orig_rec[3];
	char path[PATH_MAX], copy[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	size_t len, at[64];
	unsigned char *j;
	int rc;

	for (unsigned i = 0; i < 3; i++)
		orig_rec[i] = dev_sum_range(d, AREA_START + i * MIB,
					    AREA_START + (i + 1) * MIB);
	jpath(path, sizeof(path), "force.journal");
	jpath(copy, sizeof(copy), "force-copy.journal");
	crashed_sparse_run(d, path, AREA_START, AREA_START + 3 * MIB);
	j = slurp(path, &len);
	ck_assert_uint_ge(record_starts(j, len, at, 64), 7);
	/* the header of the first data record: its length is lost too */
	j[at[0] + 30] ^= 0x01;
	spill(copy, j, len);
	rc = journal_restore(copy, d, JOURNAL_RESTORE_FORCE, NULL, NULL, &rep,
			     err, sizeof(err));
	ck_assert_msg(rc == -EBADMSG, "rc %d %s", rc, err);
	ck_assert(rep.damaged);
	ck_assert_uint_eq(rep.records, 2);
	ck_assert_uint_eq(rep.committed_records, 3);
	ck_assert_uint_eq(rep.missing_records, 1);
	ck_assert_msg(strstr(err, "missing") && strstr(err, "kept"), "%s", err);
	ck_assert(exists(copy));
	ck_assert_uint_ne(dev_sum_range(d, AREA_START, AREA_START + MIB),
			  orig_rec[0]);
	for (unsigned i = 1; i < 3; i++)
		ck_assert_uint_eq(dev_sum_range(d, AREA_START + i * MIB,
						AREA_START + (i + 1) * MIB),
				  orig_rec[i]);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err,
				      sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(dev_sum(d), orig);
	free(j);
	fp_dev_close(d);
}
END_TEST

/* A test that died before its first commit never wrote the device: its
 * journal is removed without writing anything. */
START_TEST(test_no_commit_writes_nothing)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 33), *jd;
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";

	jpath(path, sizeof(path), "nocommit.journal");
	jd = jopen(d, path);
	fp_dev_close(jd);	/* killed before anything was saved */
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err,
					 sizeof(err)), 0);
	ck_assert(rep.nothing_written && rep.deleted && !exists(path));
	ck_assert_uint_eq(rep.records, 0);
	ck_assert_uint_eq(fp_dev_bytes_written(d), 0);
	fp_dev_close(d);
}
END_TEST

/* Killed after every number of device writes of an open-au-like run
 * (writes spread over the area, each 1 MiB block saved on the fly): the
 * journal left behind always restores the whole device. */
START_TEST(test_kill_after_every_write)
{
	const unsigned nwrites = 24;
	struct fp_dev *d = sim_with(QUIET_SIM, 34);
	uint64_t orig = dev_sum(d);
	unsigned char *buf = fp_dev_alloc_buf(256 * 1024);
	char path[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	struct stats_rng rng;

	ck_assert_ptr_nonnull(buf);
	memset(buf, 0x5a, 256 * 1024);
	jpath(path, sizeof(path), "kill.journal");
	for (unsigned kill_at = 0; kill_at <= nwrites; kill_at++) {
		struct fp_dev *jd = jopen(d, path);

		stats_rng_seed(&rng, 500);
		ck_assert_int_eq(fp_dev_set_write_area(jd, AREA_START, AREA_END),
				 0);
		for (unsigned w = 0; w < kill_at; w++) {
			uint64_t off = AREA_START + stats_rng_below(&rng, 32) *
						    256 * 1024;

			ck_assert_int_eq(fp_dev_write_timed(jd, buf, 256 * 1024,
							    off, NULL), 0);
		}
		fp_dev_close(jd);	/* killed here */
		ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err,
					      sizeof(err)) == 0,
			      "killed after %u writes: %s", kill_at, err);
		ck_assert_msg(dev_sum(d) == orig, "killed after %u writes: "
			      "device differs after the restore", kill_at);
		ck_assert(!exists(path));
	}
	free(buf);
	fp_dev_close(d);
}
END_TEST

/* A restore while the test still runs would replay and delete the live
 * journal: the running test holds a lock, and the restore refuses. */
START_TEST(test_live_journal_refused)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 35), *jd;
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";
	uint64_t during;

	jpath(path, sizeof(path), "live.journal");
	jd = jopen(d, path);
	scribble(jd, AREA_START, AREA_START + MIB, 3);
	during = dev_sum(d);
	ck_assert_int_eq(journal_restore(path, d, JOURNAL_RESTORE_FORCE, NULL,
					 NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	ck_assert_msg(strstr(err, "still running") != NULL, "%s", err);
	ck_assert(exists(path));
	ck_assert_uint_eq(dev_sum(d), during);
	/* the test itself finishes normally */
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err,
				     sizeof(err)) == 0, "%s", err);
	ck_assert(!exists(path));
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

/* Another card in the same reader has the same identity (serial, size);
 * it does not hold the blocks the test saw around its area, so the
 * journal is not written onto it, unless forced. */
START_TEST(test_fingerprint_mismatch)
{
	struct fp_dev *a = sim_with(QUIET_SIM, 36);
	struct fp_dev *b = sim_with(QUIET_SIM, 37);	/* same spec, other data */
	struct journal_restore_report rep;
	uint64_t orig = dev_sum(a), sum_b = dev_sum(b);
	char path[PATH_MAX], err[512] = "";

	jpath(path, sizeof(path), "fprint.journal");
	crashed_sparse_run(a, path, AREA_START, AREA_START + 2 * MIB);
	ck_assert_int_eq(journal_restore(path, b, 0, NULL, NULL, &rep, err,
					 sizeof(err)), -FP_EREFUSED);
	ck_assert_msg(strstr(err, "probably not the card") && strstr(err,
		      "--force"), "%s", err);
	ck_assert_uint_eq(dev_sum(b), sum_b);
	ck_assert(exists(path));
	ck_assert_int_eq(journal_restore(path, b, JOURNAL_RESTORE_FORCE |
					 JOURNAL_RESTORE_KEEP, NULL, NULL, &rep,
					 err, sizeof(err)), 0);
	ck_assert(rep.fingerprint_forced);
	ck_assert_int_eq(journal_restore(path, a, 0, NULL, NULL, &rep, err,
					 sizeof(err)), 0);
	ck_assert_uint_eq(dev_sum(a), orig);
	fp_dev_close(a);
	fp_dev_close(b);
}
END_TEST

/* ---- a fake card whose writes wrap around (tu_wrap_fake) ---- */

/* The test writes P and then P + real: the second backup saves the test
 * data written at P.  Replaying newest first puts P's original back
 * last, so the card reads as before.  The writes may alias, as the
 * capacity check says of its own: only then does a grain that reads as
 * an older record's count as restored. */
/* A 16 MiB fake wrapping at 8 MiB over a quiet simulated card, a MiB
 * buffer, and a journal on the fake whose writes may alias. */
struct wrap_scene {
	struct fp_dev *inner, *fake, *jd;
	unsigned char *buf;
	char path[PATH_MAX];
};

static void wrap_scene_open(struct wrap_scene *w, uint64_t seed, const char *name)
{
	w->inner = sim_with(QUIET_SIM, seed);
	w->fake = tu_wrap_fake(w->inner, 8u * MIB, 16u * MIB);
	w->buf = fp_dev_alloc_buf(MIB);
	ck_assert(w->fake != NULL && w->buf != NULL);
	jpath(w->path, sizeof(w->path), name);
	w->jd = jopen(w->fake, w->path);
	journal_writes_may_alias(w->jd, true);
}

static void wrap_scene_close(struct wrap_scene *w)
{
	free(w->buf);
	fp_dev_close(w->fake);
	fp_dev_close(w->inner);
}

START_TEST(test_wraparound_restored)
{
	struct wrap_scene w;
	struct journal_restore_report rep;
	char err[512] = "";
	uint64_t orig;

	wrap_scene_open(&w, 38, "wrap.journal");
	orig = dev_sum(w.inner);
	memset(w.buf, 0x5a, MIB);
	ck_assert_int_eq(fp_dev_set_write_area(w.jd, 2 * MIB, 12 * MIB), 0);
	ck_assert_int_eq(fp_dev_write_timed(w.jd, w.buf, MIB, 3 * MIB, NULL), 0);
	ck_assert_int_eq(fp_dev_write_timed(w.jd, w.buf, MIB, 11 * MIB, NULL), 0);
	fp_dev_close(w.jd);	/* killed */
	ck_assert_uint_ne(dev_sum(w.inner), orig);
	/* a wrapping card changes the blocks around the area too: the
	 * fingerprint cannot vouch for it, the user forces */
	ck_assert_msg(journal_restore(w.path, w.fake, JOURNAL_RESTORE_FORCE, NULL,
				      NULL, &rep, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(dev_sum(w.inner), orig);
	wrap_scene_close(&w);
}
END_TEST

/* On a wrapping fake the capacity check's flushes land on blocks the
 * journal fingerprinted and never saved: an attack's card (a 477 MiB
 * period on a 1e9-byte card) refused the restore at the end of the test
 * as "probably not the card", and its real flash kept the test's data
 * until the user forced it.  A fingerprinted block that holds flashprobe's
 * own test data, while the test's writes may alias, is such a write; a
 * block of anything else still counts as another card's. */
START_TEST(test_aliased_test_data_on_fingerprint)
{
	struct wrap_scene w;
	struct journal_restore_report rep;
	char err[512] = "";
	uint64_t orig, target = 0;
	struct jr_header h;
	int fd;

	wrap_scene_open(&w, 39, "wrap-fp.journal");
	orig = dev_sum(w.inner);
	memset(w.buf, FP_FILL_BYTE, MIB);
	util_mark_test_pieces(w.buf, MIB);
	ck_assert_int_eq(fp_dev_set_write_area(w.jd, 2 * MIB, 16 * MIB), 0);
	ck_assert_int_eq(fp_dev_write_timed(w.jd, w.buf, MIB, 3 * MIB, NULL), 0);
	ck_assert_int_eq(jr_header_read(w.path, false, &fd, &h, err, sizeof(err)), 0);
	close(fd);
	/* outside the write area, as they are taken; one in [1, 2) MiB lands
	 * under a write at 9-10 MiB, inside it */
	for (uint32_t i = 0; i < h.slot.nfp && !target; i++)
		if (h.slot.fp[i].offset >= MIB && h.slot.fp[i].offset + JR_FP_BLOCK_BYTES <= 2 * MIB)
			target = h.slot.fp[i].offset;
	ck_assert_msg(target, "no fingerprinted block in [1, 2) MiB");
	/* through the wrap, onto the fingerprinted block */
	ck_assert_int_eq(fp_dev_write_timed(w.jd, w.buf, JR_FP_BLOCK_BYTES, target + 8 * MIB, NULL), 0);
	fp_dev_close(w.jd);	/* killed */
	ck_assert_uint_ne(dev_sum(w.inner), orig);
	ck_assert_msg(journal_restore(w.path, w.fake, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(dev_sum(w.inner), orig);
	wrap_scene_close(&w);
}
END_TEST

/* ---- a worn card that stops keeping writes behind a write cache ---- */

#define DROP_CACHE_BLOCKS 256		/* 1 MiB of 4 KiB blocks */

/* Once keep_left bytes more are written, writes are acknowledged and
 * dropped; the last DROP_CACHE_BLOCKS blocks written are served from a
 * cache either way (bench: a card turning read-only silently with a
 * 4 MiB cache). */
struct dropcache {
	struct fp_dev *inner;
	uint64_t keep_left;
	uint64_t block[DROP_CACHE_BLOCKS];	/* block number + 1, 0: free */
	unsigned char data[DROP_CACHE_BLOCKS][4096];
	size_t next;				/* FIFO: the slot to fill next */
};

static long dropcache_find(const struct dropcache *c, uint64_t block)
{
	for (size_t i = 0; i < DROP_CACHE_BLOCKS; i++) {
		size_t k = (c->next + DROP_CACHE_BLOCKS - 1 - i) % DROP_CACHE_BLOCKS;

		if (c->block[k] == block + 1)
			return (long)k;
	}
	return -1;
}

static int dropcache_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	struct dropcache *c = priv;
	int rc = fp_dev_read_timed(c->inner, buf, len, off, NULL);

	for (size_t i = 0; rc == 0 && i < len; i += 4096) {
		long k = dropcache_find(c, (off + i) / 4096);

		if (k >= 0)
			memcpy((unsigned char *)buf + i, c->data[k], 4096);
	}
	return rc;
}

static int dropcache_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	struct dropcache *c = priv;
	int rc = 0;

	for (size_t i = 0; i < len; i += 4096) {
		c->block[c->next] = (off + i) / 4096 + 1;
		memcpy(c->data[c->next], (const unsigned char *)buf + i, 4096);
		c->next = (c->next + 1) % DROP_CACHE_BLOCKS;
	}
	if (c->keep_left < len) {
		c->keep_left = 0;
		return 0;	/* acknowledged, dropped */
	}
	c->keep_left -= len;
	rc = fp_dev_write_timed(c->inner, buf, len, off, NULL);
	return rc;
}

static const struct fp_dev_ops dropcache_ops = {
	dropcache_pread, dropcache_pwrite, tu_wrapped_now, tu_wrapped_keep,
};

/* The card stops keeping writes 2 MiB into the restore, and its 1 MiB
 * cache serves each restored piece's read-back: the restore said
 * verified and deleted the journal while 5 MiB of the area still held
 * test data.  Now the records are read again once all are written: the
 * restore fails, names the ranges and keeps the journal.  The second
 * time, the user's data holds one 4 KiB block of the test's own pattern
 * (the first record's): a grain found in an older record was taken for
 * one a wrapping card had aliased, on any journal, and the restore said
 * verified again.  The third time the card stops keeping writes for the
 * last record restored only (the oldest, where a partition table
 * lives), which nothing written after it pushed out of the cache: the
 * restore said verified until the first records restored were written
 * again before it was read.  The fourth time that record is one the
 * capacity check saved (its writes may alias), as in a probe's journal:
 * it is not written again, but the others are.  The fifth time every
 * record is the capacity check's, which ran to its end and saw no write
 * alias (JOURNAL_RESTORE_NO_ALIAS): they are written again like any. */
START_TEST(test_dropped_behind_cache)
{
	struct fp_dev *inner = sim_with(QUIET_SIM, 41);
	struct dropcache *dc = calloc(1, sizeof(*dc));
	struct fp_dev *card;
	unsigned char *buf = fp_dev_alloc_buf(MIB);
	struct journal_restore_report rep;
	char path[PATH_MAX], name[32], err[1024] = "";
	uint64_t orig;
	struct fp_dev *jd;
	int rc;

	ck_assert(dc != NULL && buf != NULL);
	memset(buf, 0xa5, MIB);
	ck_assert_int_eq(fp_dev_set_write_area(inner, AREA_START, AREA_END), 0);
	if (_i == 1)
		ck_assert_int_eq(fp_dev_write_timed(inner, buf, 4096, AREA_START + 8192, NULL), 0);
	orig = dev_sum_range(inner, AREA_START, AREA_END);
	dc->inner = inner;
	dc->keep_left = UINT64_MAX;
	card = fp_dev_create(&dropcache_ops, dc, FP_DEV_SIM, "sim:worn", 16u * MIB, 512);
	ck_assert_ptr_nonnull(card);
	snprintf(name, sizeof(name), "dropped%d.journal", _i);
	jpath(path, sizeof(path), name);
	jd = jopen(card, path);
	journal_writes_may_alias(jd, _i >= 3);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START, AREA_START + MIB, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, AREA_START, NULL), 0);
	fp_dev_end_write_area(jd);	/* the next test, as in a probe */
	journal_writes_may_alias(jd, _i == 4);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START + MIB, AREA_END, err, sizeof(err)),
			 0);
	for (uint64_t off = AREA_START + MIB; off < AREA_END; off += MIB)
		ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, off, NULL), 0);
	dc->keep_left = _i >= 2 ? AREA_END - AREA_START - MIB : 2 * MIB;
	rc = journal_finish(jd, _i == 4 ? JOURNAL_RESTORE_NO_ALIAS : 0, NULL, NULL, &rep, err,
			    sizeof(err));
	ck_assert_msg(rc < 0, "the restore said verified: %s", err);
	ck_assert(!rep.deleted && exists(path));
	/* all but what was kept, less what the cache still serves */
	ck_assert_uint_ge(rep.failed_bytes, _i >= 2 ? MIB : AREA_END - AREA_START - 3 * MIB);
	ck_assert_uint_eq(rep.failed_lowest, AREA_START);
	ck_assert_uint_ne(dev_sum_range(inner, AREA_START, AREA_END), orig);
	fp_dev_close(jd);
	/* later, the card taking writes again: everything comes back */
	dc->keep_left = UINT64_MAX;
	memset(dc->block, 0, sizeof(dc->block));
	ck_assert_msg(journal_restore(path, card, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(dev_sum_range(inner, AREA_START, AREA_END), orig);
	free(buf);
	fp_dev_close(card);
	fp_dev_close(inner);
	free(dc);
}
END_TEST

/* A journal others could have written is not believed, and a FIFO
 * planted under a journal's name does not hang the search. */
START_TEST(test_untrusted_journal)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 29);
	char *img = bf_image_in(test_dir, MIB, 30);
	struct journal_restore_report rep;
	char path[PATH_MAX], fifo[PATH_MAX + 64], found[PATH_MAX];
	char err[512] = "";
	uint64_t damaged;

	jpath(path, sizeof(path), "untrusted.journal");
	damaged = crashed_run(d, path, AREA_START, AREA_START + MIB);
	ck_assert_int_eq(chmod(path, 0666), 0);
	ck_assert_int_eq(journal_restore(path, d, JOURNAL_RESTORE_FORCE, NULL, NULL, &rep,
					 err, sizeof(err)), -FP_EREFUSED);
	ck_assert_msg(strstr(err, "refusing journal") != NULL, "%s", err);
	ck_assert_uint_eq(dev_sum(d), damaged);
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(img);
	snprintf(fifo, sizeof(fifo), "%s/flashprobe-planted.journal", state_dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), 0);
	unlink(fifo);
	free(img);
	fp_dev_close(d);
}
END_TEST

/* A journal of another user (here nobody's) is refused to root as well,
 * and the refusal names its owner and the restore to run as that user;
 * the device is not written.  Owned by root again, it is replayed. */
START_TEST(test_foreign_owner_journal)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 31);
	struct journal_restore_report rep;
	struct passwd *nobody = getpwuid(65534);
	char path[PATH_MAX], err[512] = "", want[PATH_MAX + 64];
	uint64_t damaged;

	ck_assert_ptr_nonnull(nobody);
	jpath(path, sizeof(path), "foreign.journal");
	damaged = crashed_run(d, path, AREA_START, AREA_START + MIB);
	ck_assert_int_eq(chown(path, 65534, (gid_t)-1), 0);
	ck_assert_int_eq(journal_restore(path, d, JOURNAL_RESTORE_FORCE, NULL, NULL, &rep,
					 err, sizeof(err)), -FP_EREFUSED);
	snprintf(want, sizeof(want), "'sudo -u %s flashprobe restore %s'", nobody->pw_name,
		 path);
	ck_assert_msg(strstr(err, "belongs to user") && strstr(err, want), "%s", err);
	ck_assert_uint_eq(dev_sum(d), damaged);
	ck_assert_int_eq(chown(path, 0, (gid_t)-1), 0);
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert_uint_ne(dev_sum(d), damaged);
	fp_dev_close(d);
}
END_TEST

/* ---- identity ---- */

START_TEST(test_identity_mismatch_sim)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 14);
	struct fp_dev *small = sim_with("seed,size=8M", 15);
	struct fp_dev *other = sim_with("sdhc-4m,size=16M", 16);
	struct journal_restore_report rep;
	uint64_t orig = dev_sum(d), s_small = dev_sum(small), s_other;
	uint64_t orig_area = dev_sum_range(d, AREA_START, AREA_END);
	char path[PATH_MAX], err[512] = "";

	jpath(path, sizeof(path), "ident.journal");
	crashed_run(d, path, AREA_START, AREA_END);
	ck_assert_int_eq(journal_restore(path, small, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	/* both answer to "sim:seed": another card behind the same name */
	ck_assert_msg(strstr(err, "another card or file behind 'sim:seed'") != NULL, "%s", err);
	ck_assert_uint_eq(dev_sum(small), s_small);
	s_other = dev_sum(other);
	ck_assert_int_eq(journal_restore(path, other, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	ck_assert_uint_eq(dev_sum(other), s_other);
	ck_assert(exists(path));
	/* Forced onto the other card: the backed-up ranges land there. */
	ck_assert_int_eq(journal_restore(path, other, JOURNAL_RESTORE_FORCE |
					 JOURNAL_RESTORE_KEEP, NULL, NULL, &rep, err,
					 sizeof(err)), 0);
	ck_assert(rep.identity_forced);
	ck_assert(!rep.deleted);
	ck_assert_uint_eq(dev_sum_range(other, AREA_START, AREA_END), orig_area);
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert_uint_eq(dev_sum(d), orig);
	fp_dev_close(d);
	fp_dev_close(small);
	fp_dev_close(other);
}
END_TEST

/* Another image file of the same size is another device, and so is
 * another file swapped in under the journal's name (a card swapped in the
 * same reader): the message then says another card or file is behind that
 * name (it said "belongs to X, not to X"). */
START_TEST(test_identity_mismatch_file)
{
	char *a = bf_image_in(test_dir, 4u * MIB, 21);
	char *b = bf_image_in(test_dir, 4u * MIB, 22);
	struct journal_restore_report rep;
	struct fp_dev *da = NULL, *db = NULL;
	char path[PATH_MAX], err[512] = "";
	uint64_t sum_b;

	ck_assert(a != NULL && b != NULL);
	sum_b = tu_checksum(b);
	ck_assert_int_eq(fp_dev_open_path(a, FP_OPEN_WRITE, &da, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(fp_dev_open_path(b, FP_OPEN_WRITE, &db, err,
					  sizeof(err)), 0);
	jpath(path, sizeof(path), "ident-file.journal");
	crashed_run(da, path, 0, MIB);
	ck_assert_int_eq(journal_restore(path, db, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	ck_assert_msg(strstr(err, a) != NULL && strstr(err, b) != NULL, "%s",
		      err);
	/* it says what differs, not two equal-looking descriptions */
	ck_assert_msg(strstr(err, "inode") != NULL, "%s", err);
	fp_dev_close(db);
	ck_assert_uint_eq(tu_checksum(b), sum_b);
	ck_assert_int_eq(journal_restore(path, da, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	crashed_run(da, path, 0, MIB);
	fp_dev_close(da);
	ck_assert_int_eq(rename(b, a), 0);	/* b now answers to a's name */
	ck_assert_int_eq(fp_dev_open_path(a, FP_OPEN_WRITE, &db, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(journal_restore(path, db, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	ck_assert_msg(strstr(err, "another card or file behind") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "inode") != NULL, "%s", err);
	fp_dev_close(db);
	ck_assert_uint_eq(tu_checksum(a), sum_b);
	ck_assert(exists(path));
	unlink(path);
	unlink(a);
	free(a);
	free(b);
}
END_TEST

/* Replaying twice (a restore that was itself interrupted and run again)
 * gives the same device. */
START_TEST(test_idempotent_restore)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 17);
	struct journal_restore_report rep;
	uint64_t orig = dev_sum(d);
	char path[PATH_MAX], copy[PATH_MAX], err[512] = "";
	unsigned char *j;
	size_t len;

	jpath(path, sizeof(path), "idem.journal");
	jpath(copy, sizeof(copy), "idem-copy.journal");
	crashed_run(d, path, AREA_START, AREA_END);
	j = slurp(path, &len);
	ck_assert_int_eq(journal_restore(path, d, JOURNAL_RESTORE_KEEP, NULL, NULL, &rep, err,
					 sizeof(err)), 0);
	ck_assert(!rep.deleted && exists(path));
	ck_assert_uint_eq(dev_sum(d), orig);
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert(rep.deleted && !exists(path));
	ck_assert_uint_eq(dev_sum(d), orig);
	spill(copy, j, len);
	ck_assert_int_eq(journal_restore(copy, d, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.restored_bytes, AREA_END - AREA_START);
	ck_assert_uint_eq(dev_sum(d), orig);
	free(j);
	fp_dev_close(d);
}
END_TEST

/* ---- I/O errors ---- */

#define BAD_START (6u * MIB + 4096u)
#define BAD_BYTES (64u * 1024u)

/* The card went bad inside the test area: every other byte is restored,
 * the bad range is reported exactly, and the journal is kept. */
START_TEST(test_eio_during_restore)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 18), *bad;
	struct journal_restore_report rep;
	uint64_t lo, hi, outside;
	char path[PATH_MAX], err[512] = "", spec[256];
	int rc;

	lo = dev_sum_range(d, AREA_START, BAD_START);
	hi = dev_sum_range(d, BAD_START + BAD_BYTES, AREA_END);
	jpath(path, sizeof(path), "eio.journal");
	crashed_run(d, path, AREA_START, AREA_END);
	/* The same card (same name, size and data around the test area),
	 * now with a bad range inside it. */
	snprintf(spec, sizeof(spec), "%s,bad_start=%u,bad=%u", QUIET_SIM,
		 BAD_START, BAD_BYTES);
	bad = sim_with(spec, 18);
	outside = dev_sum_range(bad, 0, AREA_START);
	rc = journal_restore(path, bad, 0, NULL, NULL, &rep, err, sizeof(err));
	ck_assert_msg(rc == -EIO, "rc %d %s", rc, err);
	ck_assert_msg(strstr(err, "journal") && strstr(err, "kept"), "%s", err);
	ck_assert_uint_eq(rep.nfailed, 1);
	ck_assert_uint_eq(rep.failed[0].offset_bytes, BAD_START);
	ck_assert_uint_eq(rep.failed[0].length_bytes, BAD_BYTES);
	ck_assert_int_eq(rep.failed[0].error, -EIO);
	ck_assert_uint_eq(rep.failed_bytes, BAD_BYTES);
	ck_assert_uint_eq(rep.restored_bytes, AREA_END - AREA_START - BAD_BYTES);
	ck_assert(!rep.deleted);
	ck_assert(exists(path));
	ck_assert_uint_eq(dev_sum_range(bad, AREA_START, BAD_START), lo);
	ck_assert_uint_eq(dev_sum_range(bad, BAD_START + BAD_BYTES, AREA_END), hi);
	ck_assert_uint_eq(dev_sum_range(bad, 0, AREA_START), outside);
	fp_dev_close(bad);
	fp_dev_close(d);
}
END_TEST

/* A range that cannot be read cannot be backed up: nothing is written. */
START_TEST(test_eio_during_backup)
{
	char spec[256], path[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	struct fp_dev *d, *jd;
	uint64_t orig;

	snprintf(spec, sizeof(spec), "%s,bad_start=%u,bad=%u", QUIET_SIM,
		 BAD_START, BAD_BYTES);
	d = sim_with(spec, 20);
	orig = dev_sum_range(d, 0, AREA_START);
	jpath(path, sizeof(path), "eio-backup.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START, AREA_END, err,
					     sizeof(err)), -EIO);
	ck_assert_msg(strstr(err, "cannot back up") != NULL, "%s", err);
	ck_assert_uint_eq(fp_dev_bytes_written(jd), 0);
	ck_assert_int_eq(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert(rep.deleted && !exists(path));
	ck_assert_uint_eq(dev_sum_range(d, 0, AREA_START), orig);
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

/* A worn card turns read-only after 3 MiB of the test's writes: the
 * restore cannot write anything, so exactly the 3 MiB the test changed are
 * reported (the rest of the area still holds its data and reads back as
 * the backup), the journal is kept, and a later restore onto a writable
 * card holding the same data brings everything back. */
START_TEST(test_readonly_mid_test)
{
	struct fp_dev *d = sim_with(QUIET_SIM ",ro_after=3M", 24), *jd, *good;
	struct journal_restore_report rep;
	unsigned char *buf = fp_dev_alloc_buf(MIB);
	uint64_t orig = dev_sum(d), rest = dev_sum_range(d, AREA_START + 3 * MIB, AREA_END);
	char path[PATH_MAX], err[1024] = "";
	uint64_t off = AREA_START;
	int rc;

	jpath(path, sizeof(path), "readonly.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START, AREA_END, err, sizeof(err)), 0);
	memset(buf, 0xa5, MIB);
	while ((rc = fp_dev_write_timed(jd, buf, MIB, off, NULL)) == 0)
		off += MIB;
	ck_assert_int_eq(rc, -EROFS);
	ck_assert_uint_eq(off, AREA_START + 3 * MIB);
	rc = journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err));
	ck_assert_msg(rc == -EROFS, "rc %d %s", rc, err);
	ck_assert_msg(rep.nfailed == 1, "%s", err);
	ck_assert_uint_eq(rep.failed[0].offset_bytes, AREA_START);
	ck_assert_uint_eq(rep.failed[0].length_bytes, 3 * MIB);
	ck_assert_uint_eq(rep.failed_bytes, 3 * MIB);
	ck_assert_uint_eq(rep.restored_bytes, AREA_END - AREA_START - 3 * MIB);
	ck_assert_msg(strstr(err, "bytes 4194304+3145728;") && strstr(err, "kept") &&
		      strstr(err, "flashprobe restore"), "%s", err);
	ck_assert(!rep.deleted && exists(path));
	ck_assert_uint_eq(dev_sum_range(d, AREA_START + 3 * MIB, AREA_END), rest);
	fp_dev_close(jd);
	/* later, on a card that takes writes again */
	good = sim_with(QUIET_SIM, 1);
	ck_assert_int_eq(tu_dev_copy(d, good), 0);
	ck_assert_msg(journal_restore(path, good, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert(rep.deleted && !exists(path));
	ck_assert_uint_eq(dev_sum(good), orig);
	free(buf);
	fp_dev_close(good);
	fp_dev_close(d);
}
END_TEST

/* A write that fails with EIO changed nothing (a program failure): the
 * restore cannot write there either, but the range reads back as the
 * backup, so the restore succeeds and deletes the journal. */
START_TEST(test_refused_write_changed_nothing)
{
	char spec[256], path[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	unsigned char *buf = fp_dev_alloc_buf(MIB);
	struct fp_dev *d, *jd;
	uint64_t orig;

	snprintf(spec, sizeof(spec), "%s,eio_write=%u+%u", QUIET_SIM, BAD_START, BAD_BYTES);
	d = sim_with(spec, 25);
	orig = dev_sum(d);
	jpath(path, sizeof(path), "eio-write.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START, AREA_END, err, sizeof(err)), 0);
	memset(buf, 0x3c, MIB);
	for (uint64_t off = AREA_START; off < AREA_END; off += MIB)
		ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, off, NULL),
				 off + MIB > BAD_START && off < BAD_START + BAD_BYTES ? -EIO : 0);
	ck_assert_uint_ne(dev_sum(d), orig);
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(rep.nfailed, 0);
	ck_assert_uint_eq(rep.restored_bytes, AREA_END - AREA_START);
	ck_assert(rep.deleted && !exists(path));
	ck_assert_uint_eq(dev_sum(d), orig);
	free(buf);
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

/* Worn flash in the test area stores what the restore writes with bit
 * errors: exactly that range is reported, in words (not "Invalid or
 * incomplete multibyte or wide character"), and the rest is restored. */
START_TEST(test_restore_reads_back_wrong)
{
	char spec[256], path[PATH_MAX], err[1024] = "";
	struct journal_restore_report rep;
	struct fp_dev *d, *jd;
	uint64_t lo, hi;
	int rc;

	snprintf(spec, sizeof(spec), "%s,corrupt=%u+%u", QUIET_SIM, BAD_START, BAD_BYTES);
	d = sim_with(spec, 26);
	lo = dev_sum_range(d, 0, BAD_START);
	hi = dev_sum_range(d, BAD_START + BAD_BYTES, fp_dev_size_bytes(d));
	jpath(path, sizeof(path), "corrupt.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START, AREA_END, err, sizeof(err)), 0);
	scribble(jd, AREA_START, AREA_END, 5);
	rc = journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err));
	ck_assert_msg(rc == -EILSEQ, "rc %d %s", rc, err);
	ck_assert_uint_eq(rep.nfailed, 1);
	ck_assert_uint_eq(rep.failed[0].offset_bytes, BAD_START);
	ck_assert_uint_eq(rep.failed[0].length_bytes, BAD_BYTES);
	ck_assert_msg(strstr(err, "reads back something else than was written") &&
		      !strstr(err, "multibyte"), "%s", err);
	ck_assert(exists(path));
	ck_assert_uint_eq(dev_sum_range(d, 0, BAD_START), lo);
	ck_assert_uint_eq(dev_sum_range(d, BAD_START + BAD_BYTES, fp_dev_size_bytes(d)), hi);
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

/* ---- interruption ---- */

START_TEST(test_interrupt_stops_io)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 23), *jd;
	struct journal_restore_report rep;
	unsigned char *buf = fp_dev_alloc_buf(4096);
	uint64_t orig = dev_sum(d);
	char path[PATH_MAX], err[512] = "";

	jpath(path, sizeof(path), "intr.journal");
	ck_assert_int_eq(safety_signals_install(), 0);
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START, AREA_END, err,
					     sizeof(err)), 0);
	scribble(jd, AREA_START, AREA_START + MIB, 3);
	raise(SIGINT);
	ck_assert_int_eq(safety_interrupted(), SIGINT);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, 4096, AREA_START, NULL),
			 -EINTR);
	ck_assert_int_eq(fp_dev_read_timed(jd, buf, 4096, AREA_START, NULL),
			 -EINTR);
	/* The restore itself ignores the signal. */
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(dev_sum(d), orig);
	ck_assert_int_eq(safety_exit_status(safety_interrupted()), 130);
	safety_interrupt_clear();
	safety_signals_uninstall();
	free(buf);
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

START_TEST(test_interrupt_during_backup)
{
	struct fp_dev *d = sim_with(QUIET_SIM, 24), *jd;
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";

	jpath(path, sizeof(path), "intr-backup.journal");
	ck_assert_int_eq(safety_signals_install(), 0);
	jd = jopen(d, path);
	raise(SIGTERM);
	ck_assert_int_eq(journal_backup_area(jd, AREA_START, AREA_END, err,
					     sizeof(err)), -EINTR);
	ck_assert_msg(strstr(err, "nothing was written") != NULL, "%s", err);
	ck_assert_int_eq(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert(!exists(path));
	safety_interrupt_clear();
	safety_signals_uninstall();
	fp_dev_close(jd);
	fp_dev_close(d);
}
END_TEST

/* ---- finding unfinished journals ---- */

/* A restore killed after it put the data back and verified it, before
 * it deleted the journal (jr_delete_journal() marks it spent first): the
 * card is then used, and the next run must neither ask for a restore nor
 * replay the journal over what was written since.  Both the restore by
 * the journal's name and the search by the device's drop it. */
START_TEST(test_spent_journal_not_replayed)
{
	char *img = bf_image_in(test_dir, 4u * MIB, 27);
	char def[PATH_MAX], found[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	struct fp_dev *d = NULL;
	uint64_t used;

	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(journal_default_path(img, def, sizeof(def), err,
					      sizeof(err)), 0);
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err,
					  sizeof(err)), 0);
	for (int by_search = 0; by_search < 2; by_search++) {
		crashed_run(d, def, 0, 2 * MIB);
		ck_assert_msg(journal_restore(def, d, JOURNAL_RESTORE_KEEP, NULL, NULL,
					      &rep, err, sizeof(err)) == 0, "%s", err);
		int fd = open(def, O_RDONLY);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(jr_mark_spent(fd, def), 0);	/* then killed */
		close(fd);
		scribble(d, MIB / 2, 3 * MIB / 2, 7 + by_search);	/* the user's data */
		fp_dev_end_write_area(d);
		used = dev_sum(d);
		if (by_search) {
			ck_assert_int_eq(journal_find_pending(img, found, sizeof(found),
							      err, sizeof(err)), 0);
		} else {
			ck_assert_msg(journal_restore(def, d, 0, NULL, NULL, &rep, err,
						      sizeof(err)) == 0, "%s", err);
			ck_assert(rep.spent && rep.deleted && rep.restored_bytes == 0);
		}
		ck_assert_uint_eq(dev_sum(d), used);
		ck_assert(!exists(def));
	}
	fp_dev_close(d);
	unlink(img);
	free(img);
}
END_TEST

/* An old copy of a journal whose test wrote only the fill byte (find-fat,
 * open-au, the AU search; _i 0) or the capacity check's self-describing
 * blocks (capacity and probe; 1), put back after that journal was
 * replayed and after the user wrote into the area it saved (a /var/lib
 * restored from a backup): its replay put the old data over the user's
 * and said "verified" (an attack run lost 1 MiB so).  Refused now,
 * nothing written, the journal kept, also with --force (for another
 * card); --overwrite-newer replays it all the same.
 * The same crash replayed on time is restored as before.  Cases 3-5: the
 * copy put in place of a second crashed run's journal, whose writes (of
 * the kinds of cases 0-2) show near the start but never reached the
 * user's data (a second attack): every piece a test writes shows it, so
 * the journal refuses any sector it cannot explain. */
/* What the test of case i writes into [0, 4 MiB) of jd: the fill byte
 * (0), blocks marked like the capacity check's (1), or bench's write
 * workloads themselves (2). */
static void write_as_test(struct fp_dev *jd, int i)
{
	unsigned char *buf = fp_dev_alloc_buf(MIB);
	struct benchio_result res;
	struct benchio_opts o;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(fp_dev_set_write_area(jd, 0, 8 * MIB), 0);
	if (i == 2) {
		benchio_opts_default(&o);
		o.offset_bytes = 0;
		o.size_bytes = 4 * MIB;
		o.runtime_ns = 20000000;
		o.warmup_ns = 0;
		o.repeats = 1;
		o.allow_writes = true;
		o.seed = 3;
		ck_assert_int_eq(benchio_run(jd, &o, &res), 0);
		ck_assert_uint_gt(res.bytes_written, 0);
	}
	memset(buf, FP_FILL_BYTE, MIB);
	for (size_t k = 0; i == 1 && k < MIB; k++)
		buf[k] = (unsigned char)(k * 31 + k / 4096);
	if (i == 1)
		util_mark_test_pieces(buf, MIB);
	for (uint64_t at = 0; i < 2 && at < 4 * MIB; at += MIB)
		ck_assert_int_eq(fp_dev_write_timed(jd, buf, MIB, at, NULL), 0);
	free(buf);
}

START_TEST(test_old_journal_copy_refused)
{
	char *img = bf_image_in(test_dir, 16u * MIB, 31);
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";
	struct fp_dev *d = NULL, *jd;
	uint64_t original, user;
	unsigned char *old;
	size_t len;

	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err, sizeof(err)), 0);
	original = dev_sum(d);
	jpath(path, sizeof(path), "old-copy.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, 0, 8 * MIB, err, sizeof(err)), 0);
	write_as_test(jd, _i % 3);
	fp_dev_close(jd);	/* killed */
	old = slurp(path, &len);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(dev_sum(d), original);
	scribble(d, 5 * MIB, 6 * MIB, 7);	/* the user's new data */
	fp_dev_end_write_area(d);
	if (_i >= 3) {	/* a second run killed before it reached them */
		jd = jopen(d, path);
		ck_assert_int_eq(journal_backup_area(jd, 0, 8 * MIB, err, sizeof(err)), 0);
		write_as_test(jd, _i - 3);
		fp_dev_close(jd);
	}
	user = dev_sum(d);
	spill(path, old, len);	/* over the second run's journal in cases 3-5 */
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)),
			 -FP_EREFUSED);
	ck_assert_msg(strstr(err, "written since") && strstr(err, "--overwrite-newer"), "%s",
		      err);
	/* --force, for another card, is no licence to overwrite newer data */
	ck_assert_int_eq(journal_restore(path, d, JOURNAL_RESTORE_FORCE, NULL, NULL, &rep, err,
					 sizeof(err)), -FP_EREFUSED);
	ck_assert_uint_eq(dev_sum(d), user);
	ck_assert(exists(path));
	ck_assert_msg(journal_restore(path, d, JOURNAL_RESTORE_OVERWRITE_NEWER, NULL, NULL, &rep,
				      err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_ge(rep.newer_overwritten, MIB / 2);
	ck_assert_uint_eq(dev_sum(d), original);
	free(old);
	fp_dev_close(d);
	unlink(img);
	free(img);
}
END_TEST

/* The spent mark and the deletion go to the file the caller checked and
 * locked, never to whatever holds its name by then: a restore that found
 * a spent journal while another run removed it and a new test created
 * its own journal there marked that one spent and deleted it (the test
 * then skipped its replay: its writes stayed, status 0).  And a test's
 * own journal marked spent by someone else is replayed all the same. */
START_TEST(test_spent_mark_only_on_its_file)
{
	char *img = bf_image_in(test_dir, 4u * MIB, 28);
	char path[PATH_MAX], old[PATH_MAX + 8], def[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	struct fp_dev *d = NULL, *jd;
	struct jr_header h;
	uint64_t before;
	int fd_old, fd;

	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(journal_default_path(img, def, sizeof(def), err, sizeof(err)), 0);
	before = tu_checksum(img);
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err, sizeof(err)), 0);
	jpath(path, sizeof(path), "spent-name.journal");
	snprintf(old, sizeof(old), "%s.old", path);
	crashed_run(d, path, 0, MIB);
	fd_old = open(path, O_RDONLY);
	ck_assert_int_ge(fd_old, 0);
	ck_assert_int_eq(rename(path, old), 0);		/* removed by another run */
	ck_assert_msg(journal_restore(old, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	unlink(def);		/* its pointer named the old name */
	crashed_run(d, path, MIB, 2 * MIB);		/* the new test's journal */
	ck_assert_int_eq(jr_delete_journal(fd_old, path, "", NULL), -ESTALE);
	ck_assert_int_eq(jr_mark_spent(fd_old, path), -ESTALE);
	close(fd_old);
	ck_assert_int_eq(jr_header_read(path, false, &fd, &h, err, sizeof(err)), 0);
	close(fd);
	ck_assert(!h.spent);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(dev_sum(d), before);
	/* a running test's own journal, marked by someone else */
	jd = jopen(d, path);
	ck_assert_int_eq(journal_backup_area(jd, 0, MIB, err, sizeof(err)), 0);
	scribble(jd, 0, MIB, 5);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(jr_mark_spent(fd, path), 0);
	close(fd);
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(rep.restored_bytes, 0);
	fp_dev_close(jd);
	ck_assert_uint_eq(dev_sum(d), before);
	fp_dev_close(d);
	unlink(img);
	free(img);
}
END_TEST

/* "DIR/img/a.img" and "DIR/img_a.img" sanitize to the same name: their
 * journals shared it, a test of one was refused as having the other's,
 * and restore --force replayed that onto it.  The hash keeps them apart. */
START_TEST(test_default_names_keep_apart)
{
	char dir[PATH_MAX], a[PATH_MAX + 16], b[PATH_MAX + 16];
	char ja[PATH_MAX], jb[PATH_MAX], err[256] = "";
	char *ia, *ib;

	jpath(dir, sizeof(dir), "img");
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ia = bf_image_in(dir, MIB, 29);
	ib = bf_image_in(test_dir, MIB, 30);
	ck_assert(ia && ib);
	snprintf(a, sizeof(a), "%s/a.img", dir);
	snprintf(b, sizeof(b), "%s/img_a.img", test_dir);
	ck_assert_int_eq(rename(ia, a), 0);
	ck_assert_int_eq(rename(ib, b), 0);
	ck_assert_int_eq(journal_default_path(a, ja, sizeof(ja), err, sizeof(err)), 0);
	ck_assert_int_eq(journal_default_path(b, jb, sizeof(jb), err, sizeof(err)), 0);
	ck_assert_str_ne(ja, jb);
	unlink(a);
	unlink(b);
	rmdir(dir);
	free(ia);
	free(ib);
}
END_TEST

/* An image crashed and deleted; a new image under another name gets its
 * inode number (ext4 gives it at once; here the journal is made to name
 * the new file's inode, with the birth a second earlier).  The new image
 * was taken for a node sharing the old one's data: its tests and restore
 * refused, with no way out.  Now it has no pending journal. */
START_TEST(test_reborn_inode_not_an_alias)
{
	char *old = bf_image_in(test_dir, 8u * MIB, 31), *fresh = bf_image_in(test_dir, 8u * MIB, 32);
	char def[PATH_MAX], found[PATH_MAX], err[512] = "";
	unsigned char hdr[JR_STATIC_BYTES];
	struct fp_dev *d = NULL;
	struct jr_header h;
	struct stat st;
	uint64_t birth;
	int fd;

	ck_assert(old && fresh);
	birth = util_birth_ns(AT_FDCWD, fresh, 0);
	if (birth == 0) {
		tu_skip("journal/test_reborn_inode_not_an_alias", "the file system keeps "
			"no birth times");
		goto out;
	}
	ck_assert_int_eq(journal_default_path(old, def, sizeof(def), err, sizeof(err)), 0);
	ck_assert_int_eq(fp_dev_open_path(old, FP_OPEN_WRITE, &d, err, sizeof(err)), 0);
	crashed_run(d, def, 2 * MIB, 3 * MIB);
	fp_dev_close(d);
	ck_assert_int_eq(unlink(old), 0);
	ck_assert_int_eq(stat(fresh, &st), 0);
	ck_assert_int_eq(jr_header_read(def, true, &fd, &h, err, sizeof(err)), 0);
	h.id.file_dev = (uint64_t)st.st_dev;
	h.id.file_ino = (uint64_t)st.st_ino;
	h.id.file_birth_ns = birth - 1000000000u;
	jr_static_encode(&h, hdr);
	ck_assert_int_eq(pwrite(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	close(fd);
	ck_assert_msg(journal_find_pending(fresh, found, sizeof(found), err, sizeof(err)) == 0,
		      "%s", err);
	unlink(def);
out:
	unlink(old);
	unlink(fresh);
	free(old);
	free(fresh);
}
END_TEST

START_TEST(test_find_pending_default_path)
{
	char *img = bf_image_in(test_dir, 4u * MIB, 25);
	char *other = bf_image_in(test_dir, MIB, 26);
	char def[PATH_MAX], found[PATH_MAX], dev[PATH_MAX], real[PATH_MAX];
	struct journal_restore_report rep;
	struct fp_dev *d = NULL, *jd = NULL;
	char err[512] = "";

	ck_assert(img != NULL && other != NULL);
	ck_assert_int_eq(journal_default_path(img, def, sizeof(def), err,
					      sizeof(err)), 0);
	ck_assert_int_eq(strncmp(def, state_dir, strlen(state_dir)), 0);
	ck_assert_ptr_nonnull(strstr(def, ".journal"));
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), 0);
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err,
					  sizeof(err)), 0);
	crashed_run(d, def, 0, MIB);
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), 1);
	ck_assert_str_eq(found, def);
	ck_assert_int_eq(journal_find_pending(other, dev, sizeof(dev), err,
					      sizeof(err)), 0);
	ck_assert_int_eq(journal_find_pending("sim:seed", dev, sizeof(dev),
					      err, sizeof(err)), 0);
	/* "flashprobe restore JOURNAL" learns the device from the header. */
	ck_assert_int_eq(journal_device_of(def, dev, sizeof(dev), err,
					   sizeof(err)), 0);
	ck_assert_ptr_nonnull(realpath(img, real));
	ck_assert_str_eq(dev, real);
	/* A second run must not start a new journal over the old one. */
	ck_assert_int_eq(journal_open(d, def, &jd, err, sizeof(err)), -EEXIST);
	ck_assert_msg(journal_restore(found, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), 0);
	fp_dev_close(d);
	unlink(img);
	unlink(other);
	free(img);
	free(other);
}
END_TEST

/* A journal placed elsewhere with --journal is found through a pointer
 * link at the default path, which the restore removes too. */
START_TEST(test_find_pending_custom_path)
{
	char *img = bf_image_in(test_dir, 4u * MIB, 27);
	char def[PATH_MAX], found[PATH_MAX], path[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	struct fp_dev *d = NULL, *jd = NULL, *d2 = NULL;

	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(journal_default_path(img, def, sizeof(def), err,
					      sizeof(err)), 0);
	jpath(path, sizeof(path), "custom.journal");
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err,
					  sizeof(err)), 0);
	crashed_run(d, path, MIB, 2 * MIB);
	ck_assert(exists(def));
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), 1);
	ck_assert_str_eq(found, path);
	/* Another journal for the same device elsewhere is refused. */
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_READ, &d2, err,
					  sizeof(err)), 0);
	jpath(path, sizeof(path), "custom2.journal");
	ck_assert_int_eq(journal_open(d2, path, &jd, err, sizeof(err)), -EEXIST);
	ck_assert(!exists(path));
	/* Restoring through the pointer works on the journal itself. */
	ck_assert_int_eq(journal_restore(def, d, 0, NULL, NULL, &rep, err, sizeof(err)), 0);
	ck_assert(!exists(found));
	ck_assert(!exists(def));
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), 0);
	fp_dev_close(d2);
	fp_dev_close(d);
	unlink(img);
	free(img);
}
END_TEST

static bool is_tmpfs(const char *dir)
{
	struct statfs fs;

	return statfs(dir, &fs) == 0 && fs.f_type == 0x01021994;
}

/* A journal in memory is gone after a power loss, and with it the only
 * copy of what the test overwrote. */
START_TEST(test_journal_in_memory_refused)
{
	char *img = bf_image_in(test_dir, MIB, 39);
	char err[512] = "";

	ck_assert_ptr_nonnull(img);
	if (!is_tmpfs("/dev/shm")) {
		fprintf(stderr, "test_journal_in_memory_refused: /dev/shm is not "
			"tmpfs here; checked only that a disk is accepted\n");
	} else {
		ck_assert_int_eq(journal_check_location("/dev/shm/x.journal", img,
							err, sizeof(err)),
				 -EINVAL);
		ck_assert_msg(strstr(err, "tmpfs") != NULL, "%s", err);
	}
	ck_assert_int_eq(journal_check_location("", img, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "empty") != NULL, "%s", err);
	err[0] = '\0';
	ck_assert_int_eq(journal_check_location(state_dir, img, err, sizeof(err)),
			 0);
	unlink(img);
	free(img);
}
END_TEST

/* The upper directory of an overlay from mountinfo: the right mount by
 * its device number, octal escapes undone (a space, a comma), none for a
 * read-only overlay (no upper layer) or another file system. */
START_TEST(test_overlay_upper_parsed)
{
	static const char text[] =
		"26 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
		"40 26 0:39 / /mnt/ov rw,relatime - overlay overlay rw,lowerdir=/l,"
		"upperdir=/run/a\\040b/up\\054x,workdir=/run/w\n"
		"41 26 0:40 / /mnt/ro ro,relatime - overlay overlay ro,lowerdir=/l1:/l2\n";
	char path[PATH_MAX + 16], upper[PATH_MAX];

	snprintf(path, sizeof(path), "%s/mountinfo", test_dir);
	ck_assert_int_eq(tu_put_file(test_dir, "mountinfo", text), 0);
	ck_assert_int_eq(durable_overlay_upper(path, 0, 39, upper, sizeof(upper)), 1);
	ck_assert_str_eq(upper, "/run/a b/up,x");
	ck_assert_int_eq(durable_overlay_upper(path, 0, 40, upper, sizeof(upper)), 0);
	ck_assert_int_eq(durable_overlay_upper(path, 254, 0, upper, sizeof(upper)), 0);
	ck_assert_int_eq(durable_overlay_upper(path, 0, 41, upper, sizeof(upper)), 0);
	unlink(path);
	ck_assert_int_eq(durable_overlay_upper(path, 0, 39, upper, sizeof(upper)), -ENOENT);
}
END_TEST

/* Memory that is not tmpfs itself: an overlay whose upper layer is tmpfs
 * (the root of many live systems), ext4 on a loop device over a file
 * in /dev/shm, and ext4 on a loop device over a file in a tmpfs since
 * unmounted lazily (the file's path then leads nowhere).  Torn down by
 * mem_teardown whatever the test did. */
static struct {
	char dir[PATH_MAX];		/* the overlay's directory, on disk */
	struct bf_scene shm;		/* ext4 on a loop device over /dev/shm */
	struct bf_scene lazy;		/* ext4 on a loop device over a file in
					 * tmpfs unmounted with umount -l */
	char why[320];			/* why setup failed, or "" */
} mem;

/* The lazy scene: its tmpfs mounted at dir/lz, gone after the setup. */
static void lazy_setup(void)
{
	char image[PATH_MAX + 16];

	snprintf(image, sizeof(image), "%s/lz/img", mem.dir);
	mem.lazy.image = strdup(image);
	if (bf_sh("cd '%s' && mkdir lz && mount -t tmpfs tmpfs lz", mem.dir) != 0 ||
	    mem.lazy.image == NULL || bf_sh("truncate -s 64M '%s'", image) != 0 ||
	    !bf_attach(&mem.lazy, "") || !bf_mkfs(&mem.lazy, mem.lazy.dev) ||
	    !bf_mount(&mem.lazy, mem.lazy.dev, "rw") ||
	    bf_sh("umount -l '%s/lz'", mem.dir) != 0)
		snprintf(mem.why, sizeof(mem.why), "ext4 over a lazily unmounted tmpfs: %s",
			 mem.lazy.why);
}

static void mem_setup(void)
{
	char shm[] = "/dev/shm/flashprobe-mem.XXXXXX";
	int fd;

	snprintf(mem.dir, sizeof(mem.dir), "/var/tmp/flashprobe-mem.XXXXXX");
	if (mkdtemp(mem.dir) == NULL || (fd = mkstemp(shm)) < 0) {
		snprintf(mem.why, sizeof(mem.why), "cannot make the scene's files");
		return;
	}
	close(fd);
	mem.shm.image = strdup(shm);
	if (bf_sh("cd '%s' && mkdir t lower ov && mount -t tmpfs tmpfs t && "
		  "mkdir t/upper t/work && mount -t overlay overlay -o lowerdir=%s/lower,"
		  "upperdir=%s/t/upper,workdir=%s/t/work ov", mem.dir, mem.dir, mem.dir,
		  mem.dir) != 0)
		snprintf(mem.why, sizeof(mem.why), "cannot mount an overlay on tmpfs");
	else if (mem.shm.image == NULL || truncate(shm, 64 * MIB) != 0 ||
		 !bf_attach(&mem.shm, "") || !bf_mkfs(&mem.shm, mem.shm.dev) ||
		 !bf_mount(&mem.shm, mem.shm.dev, "rw"))
		snprintf(mem.why, sizeof(mem.why), "ext4 over /dev/shm: %s", mem.shm.why);
	else
		lazy_setup();
}

static void mem_teardown(void)
{
	bf_cleanup(&mem.shm);
	bf_cleanup(&mem.lazy);
	bf_sh("umount '%s/lz'", mem.dir);
	bf_sh("umount '%s/ov'; umount '%s/t'; rm -rf '%s'", mem.dir, mem.dir, mem.dir);
}

/* Each is refused as memory, before anything is written: the check and
 * a bench --write that names it (status 2, the image unchanged, no
 * journal made).  So are the loop device over /dev/shm once its file is
 * deleted (the loop device keeps it, in memory), and the one whose tmpfs
 * was unmounted lazily (where its file lives cannot be told): both were
 * taken for disks, as their files' paths lead nowhere (an attack lost a
 * killed test's data so).  A directory on the disk beside them is
 * accepted. */
START_TEST(test_journal_in_hidden_memory_refused)
{
	char *img = bf_image_in(test_dir, 32 * MIB, 41);
	char ov[PATH_MAX + 8], journal[PATH_MAX + 32], jopt[PATH_MAX + 48], err[512] = "";
	uint64_t before = tu_checksum(img);
	struct run_result r;
	struct {
		const char *dir, *says;
	} places[] = {
		{ ov, "an overlay whose upper layer is in tmpfs" },
		{ mem.shm.mnt, "a loop device over '/dev/shm/" },
		{ mem.shm.mnt, "a loop device over a deleted file in tmpfs" },
		{ mem.lazy.mnt, "cannot be told" },
	};

	ck_assert_msg(mem.why[0] == '\0', "setup: %s", mem.why);
	snprintf(ov, sizeof(ov), "%s/ov", mem.dir);
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		if (i == 2)
			ck_assert_int_eq(unlink(mem.shm.image), 0);
		snprintf(journal, sizeof(journal), "%s/x.journal", places[i].dir);
		ck_assert_int_eq(journal_check_location(journal, img, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, i == 3 ? "would be on" : "would be in memory") &&
			      strstr(err, places[i].says), "%s", err);
		snprintf(jopt, sizeof(jopt), "--journal=%s", journal);
		tu_run(&r, (const char *const[]){ "bench", "--write", "-y", "--offset=8M",
						  "--size=8M", "--runtime=1", "--warmup=0",
						  "--repeat=1", jopt, img, NULL });
		ck_assert_msg(r.status == 2 && strstr(r.err, places[i].says),
			      "%s: status %d, '%s'", places[i].dir, r.status, r.err);
		ck_assert_msg(!exists(journal), "%s: a journal was made", places[i].dir);
		tu_run_free(&r);
		ck_assert_uint_eq(tu_checksum(img), before);
	}
	snprintf(journal, sizeof(journal), "%s/lower/x.journal", mem.dir);
	ck_assert_msg(journal_check_location(journal, img, err, sizeof(err)) == 0, "%s", err);
	unlink(img);
	free(img);
}
END_TEST

/* The journal named by a pointer file was lost (deleted, a disk that is
 * gone): the next run says which range may hold test data instead of
 * "nothing to restore", and a pointer that never covered a write is
 * simply removed. */
START_TEST(test_lost_journal_reported)
{
	char *img = bf_image_in(test_dir, 4u * MIB, 40);
	char def[PATH_MAX], found[PATH_MAX], path[PATH_MAX], dev[PATH_MAX];
	struct journal_restore_report rep;
	struct fp_dev *d = NULL, *jd;
	char err[512] = "";

	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(journal_default_path(img, def, sizeof(def), err,
					      sizeof(err)), 0);
	jpath(path, sizeof(path), "lost.journal");
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err,
					  sizeof(err)), 0);
	crashed_sparse_run(d, path, MIB, 2 * MIB);
	ck_assert(journal_is_journal_file(def));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), -FP_ELOST);
	ck_assert_msg(strstr(err, "lost") && strstr(err, "1MiB to 2MiB") &&
		      strstr(err, def), "%s", err);
	ck_assert_int_eq(journal_restore(def, d, 0, NULL, NULL, &rep, err,
					 sizeof(err)), -FP_ELOST);
	ck_assert_int_eq(journal_device_of(def, dev, sizeof(dev), err,
					   sizeof(err)), -FP_ELOST);
	ck_assert_str_eq(dev, img);
	ck_assert_int_eq(unlink(def), 0);	/* the documented way out */
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), 0);
	/* a journal lost before its first commit: nothing was written */
	jd = jopen(d, path);
	fp_dev_close(jd);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert(exists(def));
	ck_assert_int_eq(journal_find_pending(img, found, sizeof(found), err,
					      sizeof(err)), 0);
	ck_assert(!exists(def));
	fp_dev_close(d);
	unlink(img);
	free(img);
}
END_TEST

START_TEST(test_journal_is_not_the_image)
{
	char *img = bf_image_in(test_dir, MIB, 28);
	struct fp_dev *d = NULL, *jd = NULL;
	char err[512] = "";

	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(fp_dev_open_path(img, FP_OPEN_WRITE, &d, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(journal_check_location(img, img, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "is the device under test") && strstr(err, img),
		      "%s", err);
	ck_assert_int_eq(journal_open(d, img, &jd, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(jd);
	fp_dev_close(d);
	unlink(img);
	free(img);
}
END_TEST

/* ---- the journal on the device under test (loop devices) ---- */

static struct bf_scene scene;

static void fs_setup(void)
{
	if (bf_image(&scene, 64u * MIB, false) && bf_attach(&scene, "") &&
	    bf_mkfs(&scene, scene.dev))
		bf_mount(&scene, scene.dev, "ro,noload");
}

static void part_setup(void)
{
	if (bf_image(&scene, 64u * MIB, true) && bf_attach(&scene, "-P") &&
	    bf_mkfs(&scene, scene.part))
		bf_mount(&scene, scene.part, "ro,noload");
}

/* Loop devices over the scene's partitions (two_parts_setup). */
static char *over_part[2];

static void scene_teardown(void)
{
	for (int i = 0; i < 2; i++) {
		tu_loop_detach(over_part[i]);
		free(over_part[i]);
		over_part[i] = NULL;
	}
	bf_cleanup(&scene);
}

/* Two partitions of 8.5 MiB (an A/B layout), the second a copy of the
 * first but for 64 KiB at 2.5 MiB, and a loop device over each: whole
 * devices, which write tests may use. */
#define PART_BYTES (17408u * 512)
#define PART_DIFF_AT (2 * MIB + MIB / 2)
static void two_parts_setup(void)
{
	unsigned char *buf = malloc(PART_BYTES);
	char node[80];
	int fd;

	if (!bf_image_parts(&scene, 18u * MIB, 2) || buf == NULL)
		goto out;
	fd = open(scene.image, O_RDWR);
	if (fd < 0 || pread(fd, buf, PART_BYTES, MIB) != (ssize_t)PART_BYTES ||
	    (memset(buf + PART_DIFF_AT, 0x5a, 64 * 1024),
	     pwrite(fd, buf, PART_BYTES, MIB + PART_BYTES) != (ssize_t)PART_BYTES) ||
	    fsync(fd) != 0)
		snprintf(scene.why, sizeof(scene.why), "cannot copy partition 1 to 2");
	if (fd >= 0)
		close(fd);
	if (scene.why[0] != '\0' || !bf_attach(&scene, "-P"))
		goto out;
	for (int i = 0; i < 2; i++) {
		snprintf(node, sizeof(node), "%sp%d", scene.dev, i + 1);
		over_part[i] = tu_loop_attach(node, false);
		if (over_part[i] == NULL)
			snprintf(scene.why, sizeof(scene.why),
				 "cannot attach a loop device over %s", node);
	}
out:
	free(buf);
}

/* Mounted read-only: nothing, not even the kernel, writes the device, so
 * its checksum shows that refusing did not touch it. */
static void check_journal_on_device(void)
{
	char path[PATH_MAX + 16], here[PATH_MAX], err[512] = "";
	struct fp_dev *d = NULL, *jd = NULL;
	uint64_t before;

	ck_assert_msg(scene.mounted[0] != '\0', "setup: %s", scene.why);
	before = tu_checksum(scene.dev);
	ck_assert(snprintf(path, sizeof(path), "%s/flashprobe.journal",
			   scene.mnt) < (int)sizeof(path));
	ck_assert_int_eq(journal_check_location(path, scene.dev, err,
						sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "device under test") && strstr(err, scene.dev),
		      "%s", err);
	ck_assert_int_eq(fp_dev_open_path(scene.dev, FP_OPEN_READ, &d, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(journal_open(d, path, &jd, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(jd);
	/* Elsewhere is fine. */
	jpath(here, sizeof(here), "elsewhere.journal");
	ck_assert_msg(journal_check_location(here, scene.dev, err,
					     sizeof(err)) == 0, "%s", err);
	fp_dev_close(d);
	ck_assert_uint_eq(tu_checksum(scene.dev), before);
}

START_TEST(test_journal_on_mounted_disk)
{
	check_journal_on_device();
}
END_TEST

START_TEST(test_journal_on_mounted_partition)
{
	check_journal_on_device();
}
END_TEST

static void ext4_setup(void)
{
	if (bf_image(&scene, 64u * MIB, false) && bf_attach(&scene, ""))
		bf_mkfs(&scene, scene.dev);
}

START_TEST(test_loop_reborn_inode_refused)
{
	ck_assert_msg(scene.dev != NULL && scene.why[0] == '\0', "setup: %s",
		      scene.why);
	check_reborn_refused(scene.dev, scene.image,
			     "journal/test_loop_reborn_inode_refused");
}
END_TEST

/* A loop device over each of two equal partitions of a loop device: a
 * journal of the first is not replayed onto the second.  Their identity
 * named the image and the loop windows but not the partition's start, so
 * the second took the first's journal (its blocks outside the test's area
 * fingerprint alike) and got the first's data where it differed, and the
 * first's journal was deleted as restored and verified. */
START_TEST(test_loop_over_partitions_apart)
{
	struct journal_restore_report rep;
	struct jr_identity ia, ib;
	char path[PATH_MAX], err[512] = "";
	uint64_t a_before, b_before;
	struct fp_dev *d = NULL;

	ck_assert_msg(over_part[1] != NULL && scene.why[0] == '\0', "setup: %s",
		      scene.why);
	/* one at a time: both lock the image */
	ck_assert_msg(fp_dev_open_path(over_part[1], FP_OPEN_WRITE, &d, err,
				       sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(jr_identity_of_dev(d, &ib), 0);
	b_before = dev_sum(d);
	fp_dev_close(d);
	ck_assert_msg(fp_dev_open_path(over_part[0], FP_OPEN_WRITE, &d, err,
				       sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(jr_identity_of_dev(d, &ia), 0);
	ck_assert_msg(!jr_same_device(&ia, &ib), "%s and %s: one identity %s",
		      over_part[0], over_part[1], ia.serial);
	a_before = dev_sum(d);
	ck_assert_uint_ne(a_before, b_before);
	jpath(path, sizeof(path), "partition-a.journal");
	crashed_run(d, path, 2 * MIB, 3 * MIB);
	fp_dev_close(d);
	ck_assert_msg(fp_dev_open_path(over_part[1], FP_OPEN_WRITE, &d, err,
				       sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(journal_restore(path, d, 0, NULL, NULL, &rep, err,
					 sizeof(err)), -FP_EREFUSED);
	ck_assert_uint_eq(dev_sum(d), b_before);
	fp_dev_close(d);
	ck_assert(exists(path));
	ck_assert_msg(fp_dev_open_path(over_part[0], FP_OPEN_WRITE, &d, err,
				       sizeof(err)) == 0, "%s", err);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err,
				      sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(dev_sum(d), a_before);
	fp_dev_close(d);
}
END_TEST

/* A chain of loop devices over a large sparse file, each with a window
 * of long numbers: more windows than a journal's identity holds. */
#define DEEP_CHAIN 7
static char *deep[DEEP_CHAIN];
static char deep_file[PATH_MAX + 16];

static void deep_chain_setup(void)
{
	/* 1 TB offsets and 9-digit TB limits: each window over 25 bytes */
	static const char *const opts[DEEP_CHAIN] = {
		"--offset 1000000000000 --sizelimit 10000000000000",
		"--offset 1000000000 --sizelimit 9000000000000",
		"--offset 1000000000 --sizelimit 8000000000000",
		"--offset 1000000000 --sizelimit 7000000000000",
		"--offset 1000000000 --sizelimit 6000000000000",
		"--offset 1000000000 --sizelimit 5000000000000",
		"--offset 1000000000 --sizelimit 268435456",
	};
	int fd;

	/* in the case's private directory (dir_setup runs first) */
	snprintf(deep_file, sizeof(deep_file), "%s/deep.img", test_dir);
	fd = open(deep_file, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, 15ll << 40) != 0) {
		snprintf(scene.why, sizeof(scene.why), "cannot make a 15 TiB sparse file");
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	for (int i = 0; i < DEEP_CHAIN; i++) {
		deep[i] = tu_loop_attach_opts(i ? deep[i - 1] : deep_file, opts[i]);
		if (deep[i] == NULL) {
			snprintf(scene.why, sizeof(scene.why), "losetup %s failed", opts[i]);
			return;
		}
	}
}

static void deep_chain_teardown(void)
{
	for (int i = DEEP_CHAIN - 1; i >= 0; i--) {
		tu_loop_detach(deep[i]);
		free(deep[i]);
		deep[i] = NULL;
	}
	if (deep_file[0])
		unlink(deep_file);
	deep_file[0] = '\0';
	scene_teardown();
}

/* A journal of the last loop device of such a chain records the chain's
 * windows composed into one window of the file.  As a list they were cut
 * to what an identity holds, and two chains differing only in their
 * innermost window read alike: a journal of one was replayed onto the
 * other and reported verified (found by attack testing), so such chains
 * were refused.  Now one loop device over the same bytes of the file is
 * the journal's device and replays it, and the chain one step shorter
 * (another window of the file) is refused, --force too, unwritten. */
START_TEST(test_deep_loop_chain_composed)
{
	/* the windows above composed: their offsets, the last one's limit */
	const char *same_bytes = "--offset 1006000000000 --sizelimit 268435456";
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "", *single;
	struct fp_dev *d = NULL, *other = NULL;
	uint64_t before, other_sum;

	ck_assert_msg(deep[DEEP_CHAIN - 1] != NULL && scene.why[0] == '\0', "setup: %s",
		      scene.why);
	ck_assert_msg(fp_dev_open_path(deep[DEEP_CHAIN - 1], FP_OPEN_WRITE, &d, err,
				       sizeof(err)) == 0, "%s", err);
	before = dev_sum(d);
	jpath(path, sizeof(path), "deep.journal");
	ck_assert_uint_ne(crashed_run(d, path, AREA_START, AREA_START + MIB), before);
	fp_dev_close(d);
	ck_assert_msg(fp_dev_open_path(deep[DEEP_CHAIN - 2], FP_OPEN_WRITE, &other, err,
				       sizeof(err)) == 0, "%s", err);
	other_sum = dev_sum_range(other, 0, 8 * MIB);
	ck_assert_int_eq(journal_restore(path, other, JOURNAL_RESTORE_FORCE, NULL, NULL, &rep,
					 err, sizeof(err)), -FP_EREFUSED);
	ck_assert_msg(strstr(err, "another window") && strstr(err, same_bytes), "%s", err);
	ck_assert_uint_eq(dev_sum_range(other, 0, 8 * MIB), other_sum);
	fp_dev_close(other);
	single = tu_loop_attach_opts(deep_file, same_bytes);
	ck_assert_ptr_nonnull(single);
	ck_assert_msg(fp_dev_open_path(single, FP_OPEN_WRITE, &d, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_msg(journal_restore(path, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(dev_sum(d), before);
	fp_dev_close(d);
	tu_loop_detach(single);
	free(single);
}
END_TEST

/* A real block device with a file system: scribble over its first 8 MiB
 * (superblock, group descriptors, inode tables), die, be found by the
 * next run, restore: the whole device is as before. */
START_TEST(test_loop_roundtrip)
{
	char found[PATH_MAX], def[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	struct fp_dev *d = NULL, *jd;
	uint64_t before;

	ck_assert_msg(scene.dev != NULL && scene.why[0] == '\0', "setup: %s",
		      scene.why);
	before = tu_checksum(scene.dev);
	ck_assert_msg(devspec_open(scene.dev, FP_OPEN_WRITE, &d, err,
				  sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(fp_dev_kind(d), FP_DEV_BLOCK);
	ck_assert_int_eq(journal_default_path(scene.dev, def, sizeof(def), err,
					      sizeof(err)), 0);
	crashed_run(d, def, 0, 8u * MIB);
	fp_dev_close(d);
	ck_assert_uint_ne(tu_checksum(scene.dev), before);
	ck_assert_int_eq(journal_find_pending(scene.dev, found, sizeof(found),
					      err, sizeof(err)), 1);
	ck_assert_str_eq(found, def);
	ck_assert_int_eq(devspec_open(scene.dev, FP_OPEN_WRITE, &d, err,
				     sizeof(err)), 0);
	ck_assert_msg(journal_restore(found, d, 0, NULL, NULL, &rep, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(rep.restored_bytes, 8u * MIB);
	fp_dev_close(d);
	ck_assert_uint_eq(tu_checksum(scene.dev), before);
	ck_assert_int_eq(journal_find_pending(scene.dev, found, sizeof(found),
					      err, sizeof(err)), 0);
	/* And a normal run: back up, write, finish. */
	ck_assert_int_eq(devspec_open(scene.dev, FP_OPEN_WRITE, &d, err,
				     sizeof(err)), 0);
	jd = jopen(d, def);
	ck_assert_int_eq(journal_backup_area(jd, 0, 8u * MIB, err, sizeof(err)),
			 0);
	scribble(jd, 0, 8u * MIB, 5);
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s",
		      err);
	fp_dev_close(jd);
	fp_dev_close(d);
	ck_assert_uint_eq(tu_checksum(scene.dev), before);
	ck_assert_int_eq(bf_sh("fsck.ext4 -n -f '%s'", scene.dev), 0);
}
END_TEST

/* As root: a backup made on the fly, in the middle of a measured write
 * sequence at real-time priority, reads the device at normal priority;
 * the measured write keeps it, and the restore after the test runs
 * without it. */
START_TEST(test_backup_not_realtime)
{
	struct tu_policy_counts n = { 0 };
	struct fp_dev_rt_policy rt = { .allowed = true };
	struct journal_restore_report rep;
	char path[PATH_MAX], err[512] = "";
	char *img = bf_image_in(test_dir, MIB, 3);	/* only its name */
	struct fp_dev *d = tu_policy_spy(sim_with(QUIET_SIM, 7), img, &n), *jd;
	unsigned char *buf = fp_dev_alloc_buf(64 * 1024);

	ck_assert(img != NULL && d != NULL && buf != NULL);
	fp_dev_rt_configure(&rt);
	jpath(path, sizeof(path), "rt-spy.journal");
	jd = jopen(d, path);
	ck_assert_int_eq(fp_dev_set_write_area(jd, AREA_START, AREA_END), 0);
	fp_dev_rt_enter(jd);
	ck_assert_int_eq(fp_dev_write_timed(jd, buf, 64 * 1024, AREA_START, NULL), 0);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_FIFO);
	fp_dev_rt_leave(jd);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
	ck_assert_uint_gt(n.reads_other, 0);	/* the backup */
	ck_assert_uint_eq(n.reads_rt, 0);
	ck_assert_uint_eq(n.writes_rt, 1);	/* the measured write */
	ck_assert_uint_eq(n.writes_other, 0);
	ck_assert_msg(journal_finish(jd, 0, NULL, NULL, &rep, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(n.writes_other, 0);	/* the restore */
	ck_assert_uint_eq(n.writes_rt, 1);
	ck_assert_uint_eq(n.reads_rt, 0);
	fp_dev_close(jd);
	fp_dev_close(d);
	free(buf);
	free(img);
}
END_TEST

/* A loop-device case with its own private directory and scene. */
static void add_case(Suite *s, const char *name, void (*setup)(void),
		     void (*teardown)(void), const TTest *test)
{
	TCase *tc = tcase_create(name);

	tcase_add_unchecked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static void add_scene(Suite *s, const char *name, void (*setup)(void),
		      const TTest *test)
{
	add_case(s, name, setup, scene_teardown, test);
}

/* The memory scene needs overlayfs too. */
static void add_mem_scene(Suite *s)
{
	if (bf_sh("grep -qw overlay /proc/filesystems || modprobe overlay") != 0) {
		tu_skip("journal/journal-in-hidden-memory", "no overlayfs in this kernel");
		return;
	}
	add_case(s, "journal-in-hidden-memory", mem_setup, mem_teardown,
		 test_journal_in_hidden_memory_refused);
}

Suite *journal_suite(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("journal");
	const char *why = bf_unavailable("mkfs.ext4 fsck.ext4");

	tcase_add_unchecked_fixture(tc, dir_setup, dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_roundtrip_sim);
	tcase_add_test(tc, test_roundtrip_file);
	tcase_add_test(tc, test_replaced_image_refused);
	tcase_add_test(tc, test_reborn_inode_refused);
	tcase_add_test(tc, test_resized_image_named);
	tcase_add_test(tc, test_journal_moved_during_test);
	tcase_add_test(tc, test_aliased_test_data_on_fingerprint);
	tcase_add_loop_test(tc, test_journal_gone_stops_test, 0, 2);
	tcase_add_test(tc, test_on_the_fly);
	tcase_add_test(tc, test_card_swapped_mid_test);
	tcase_add_test(tc, test_card_swapped_sharing_blank);
	tcase_add_test(tc, test_restore_refuses_card_sharing_blank);
	tcase_add_test(tc, test_card_swapped_whole_card);
	tcase_add_test(tc, test_card_swapped_while_rewriting);
	tcase_add_test(tc, test_journal_full);
	tcase_add_test(tc, test_no_write_no_replay);
	tcase_add_test(tc, test_bad_backup_range);
	tcase_add_test(tc, test_existing_journal_refused);
	tcase_add_test(tc, test_cut_journal_everywhere);
	tcase_add_test(tc, test_uncommitted_tail);
	tcase_add_test(tc, test_corrupt_journal);
	tcase_add_test(tc, test_erased_slots);
	tcase_add_test(tc, test_slots_erased_mid_test);
	tcase_add_test(tc, test_force_replays_every_intact_record);
	tcase_add_test(tc, test_no_commit_writes_nothing);
	tcase_add_test(tc, test_kill_after_every_write);
	tcase_add_test(tc, test_live_journal_refused);
	tcase_add_test(tc, test_fingerprint_mismatch);
	tcase_add_test(tc, test_wraparound_restored);
	tcase_add_test(tc, test_untrusted_journal);
	if (geteuid() == 0 && getpwuid(65534) != NULL)
		tcase_add_test(tc, test_foreign_owner_journal);
	else
		tu_skip("journal/foreign-owner: another user's journal refused to root",
			"needs root and a user 65534 (nobody)");
	tcase_add_test(tc, test_identity_mismatch_sim);
	tcase_add_test(tc, test_identity_mismatch_file);
	tcase_add_test(tc, test_idempotent_restore);
	tcase_add_test(tc, test_eio_during_restore);
	tcase_add_test(tc, test_eio_during_backup);
	tcase_add_test(tc, test_readonly_mid_test);
	tcase_add_loop_test(tc, test_dropped_behind_cache, 0, 5);
	tcase_add_test(tc, test_refused_write_changed_nothing);
	tcase_add_test(tc, test_restore_reads_back_wrong);
	tcase_add_test(tc, test_interrupt_stops_io);
	tcase_add_test(tc, test_interrupt_during_backup);
	tcase_add_test(tc, test_find_pending_default_path);
	tcase_add_test(tc, test_spent_journal_not_replayed);
	tcase_add_loop_test(tc, test_old_journal_copy_refused, 0, 6);
	tcase_add_test(tc, test_spent_mark_only_on_its_file);
	tcase_add_test(tc, test_default_names_keep_apart);
	tcase_add_test(tc, test_reborn_inode_not_an_alias);
	tcase_add_test(tc, test_find_pending_custom_path);
	tcase_add_test(tc, test_journal_is_not_the_image);
	tcase_add_test(tc, test_journal_in_memory_refused);
	tcase_add_test(tc, test_overlay_upper_parsed);
	tcase_add_test(tc, test_lost_journal_reported);
	if (geteuid() == 0)
		tcase_add_test(tc, test_backup_not_realtime);
	else
		tu_skip("journal/backups run without real-time priority", "needs root");
	suite_add_tcase(s, tc);
	if (why != NULL) {
		tu_skip("journal/loop devices: ext4 round trip, journal on a "
			"mounted device refused", why);
		return s;
	}
	add_scene(s, "journal-loop-roundtrip", ext4_setup, test_loop_roundtrip);
	add_scene(s, "journal-loop-reborn", ext4_setup, test_loop_reborn_inode_refused);
	add_case(s, "journal-deep-loop-chain", deep_chain_setup, deep_chain_teardown,
		 test_deep_loop_chain_composed);
	add_mem_scene(s);
	add_scene(s, "journal-on-device-fs", fs_setup,
		  test_journal_on_mounted_disk);
	if (!bf_have("partx")) {
		tu_skip("journal/journal-on-device-partition",
			"partx not installed");
		tu_skip("journal/journal-loop-over-partitions", "partx not installed");
	} else {
		add_scene(s, "journal-on-device-partition", part_setup,
			  test_journal_on_mounted_partition);
		add_scene(s, "journal-loop-over-partitions", two_parts_setup,
			  test_loop_over_partitions_apart);
	}
	return s;
}
