/* util.h - small helpers shared by every layer: one progress-callback
 * type, the fill byte, rounding, bounded string copies and full file
 * I/O loops.  Libc only; nothing here knows about devices.
 */
#ifndef FLASHPROBE_UTIL_H
#define FLASHPROBE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

/* Progress of a long step: done out of total, in the step's own unit
 * (bytes written or restored, reads, device nanoseconds: each caller
 * says which).  Called from the step, so it must not do I/O on the
 * device being measured. */
typedef void (*fp_progress_fn)(void *arg, uint64_t done, uint64_t total);

/* What the writing tests write: flashbench's constant pattern (its
 * WBUF_RAND), so results compare with flashbench's and the simulated card
 * stores runs of it without memory. */
#define FP_FILL_BYTE 0x5a

/* What flashprobe's own test data begins with where it is not the fill
 * byte: every block the capacity check writes (which describes itself,
 * capacity.c) and every write of bench (benchio.c), so that the journal
 * and its replay can tell the tests' writes from other data. */
#define FP_TEST_BLOCK_MAGIC "FPCAPBLK"	/* 8 bytes, no terminator */
#define FP_TEST_BLOCK_MAGIC_BYTES 8u

/* Whether len bytes at p begin with FP_TEST_BLOCK_MAGIC. */
bool util_is_test_block(const void *p, size_t len);

/* flashprobe's own data carries the mark at the start of every piece of
 * this size (the smallest logical sector), not only at the start of a
 * write: then every sector a test wrote shows it, whatever the device's
 * sector, and a restore can tell each one from data written since. */
#define FP_TEST_PIECE_BYTES 512u

/* Puts FP_TEST_BLOCK_MAGIC at the start of every FP_TEST_PIECE_BYTES of
 * the len bytes at p. */
void util_mark_test_pieces(void *p, size_t len);

/* Whether len bytes at p are whole pieces, each of the fill byte or
 * beginning with FP_TEST_BLOCK_MAGIC: what the tests write. */
bool util_is_test_data(const void *p, size_t len);

/* Whether len bytes at p are all one byte value, and all FP_FILL_BYTE
 * (both true for len 0). */
bool util_is_one_byte(const void *p, size_t len);

/* The directory part of path: "." when there is none, "/" for a file in
 * the root. */
void util_dir_of(const char *path, char *dir, size_t len);
bool util_is_fill(const void *p, size_t len);

/* A write buffer (SLC cache, DRAM, a log) in front of the flash makes
 * every write fast until it is full: a test that saw no write slow down
 * cannot tell a card that never slows from one whose buffer outlasted the
 * test.  Answers that rest on "nothing slowed down" are trusted only
 * after this many bytes of writes (cards seen buffer 16 KiB to a few
 * hundred MiB, flash-model.md 4.7); below, they stay low in confidence. */
#define FP_WBUF_HIDE_BYTES (256ULL << 20)

/* Whether a write buffer could hide what a test saw in written bytes
 * ("no <what>"): then true, with the note that says so in note. */
bool util_wbuf_may_hide(uint64_t written, const char *what, char *note, size_t len);

/* x rounded up to a multiple of unit (unit > 0). */
uint64_t util_round_up(uint64_t x, uint64_t unit);

/* The largest power of two that divides x (x > 0). */
uint64_t util_pow2_factor(uint64_t x);

/* flashbench's ladder of chunk sizes: erase, erase/2, ... down to block,
 * while each stays a whole number of sectors dividing erase.  Stores at
 * most max sizes in chunk (which may be NULL) and returns how many. */
size_t util_chunk_ladder(uint64_t erase, uint64_t block, uint32_t sector,
			 uint64_t *chunk, size_t max);

/* Copy src into dst of len bytes (len > 0), cut to fit, always ended. */
void util_copy_str(char *dst, size_t len, const char *src);

/* Write s to f with control characters (a newline, an escape sequence
 * in a file name or an argument) as \xNN: a message stays one line and
 * cannot drive the terminal. */
void util_fputs_visible(const char *s, FILE *f);

/* read()/pread()/write()/pwrite() until n bytes are done, retrying after
 * EINTR.  The reads return the bytes read (fewer than n only at end of
 * file) or a negative errno; the writes return 0, a negative errno, or
 * -EIO when the file takes no more. */
ssize_t util_read_full(int fd, void *buf, size_t n);
ssize_t util_pread_full(int fd, void *buf, size_t n, uint64_t off);
int util_write_full(int fd, const void *buf, size_t n);
int util_pwrite_full(int fd, const void *buf, size_t n, uint64_t off);

/* When the file was created, in ns since the epoch (statx's birth time;
 * dirfd, path and flags as statx takes them: "" and AT_EMPTY_PATH for the
 * file open as dirfd), or 0 where the file system keeps none.  A file
 * deleted and made again under the same inode number has another. */
uint64_t util_birth_ns(int dirfd, const char *path, int flags);

#endif
