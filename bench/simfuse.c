/* simfuse.c - a simulated card as a file that answers in real time, for
 * tests and benchmarks only (flashprobe never uses it).
 *
 * Serves one file, "card", through FUSE, and "sector_bytes" with the
 * card's sector size in decimal (a loop device over "card" needs it as
 * its --sector-size: a 4 KiB-sector card refuses 512-byte I/O).  Every read and write goes to the
 * simulated card (sim.c) and the answer is held back until the card's own
 * cost of that I/O, times SCALE, has passed on CLOCK_MONOTONIC.  A loop
 * device over the file is then a block device with the card's geometry in
 * its timing plus everything a real host adds (system calls, the loop and
 * FUSE round trips, scheduling): what flashprobe meets on real hardware,
 * and what the simulator's virtual clock leaves out.
 *
 * The file is opened with direct_io, so that no page cache answers for the
 * card; requests are served one at a time (-s), like a card's.
 *
 * SIGUSR1 swaps the card in the reader: from the next request on, another
 * card of SPEC answers (made at the first swap, holding random data); the
 * next SIGUSR1 puts the first one back, as it was left.
 *
 * Usage: simfuse SPEC SCALE MOUNTPOINT [FUSE options]
 *   SPEC   a simulated card, e.g. sdhc-4m or "seed,jitter=10"
 *   SCALE  real time per simulated time, e.g. 1 or 0.1
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "clock.h"
#include "dev.h"
#include "sim.h"

#define CARD_NAME "card"
#define SECTOR_NAME "sector_bytes"
#define MAX_IO (1u << 20)		/* FUSE never passes more in one request */
#define SPIN_NS 200000ull		/* the last part of a wait is spun: exact */

#define SWAP_SEED 0x5a7c4d		/* the second card's content */

static struct fp_dev *card;		/* the one in the reader */
static struct fp_dev *cards[2];		/* SPEC's first card; the second, once swapped in */
static struct sim_profile profile;
static volatile sig_atomic_t swaps_asked;
static unsigned swaps_done;
static double scale;
static void *iobuf;
static char sector_text[16];

/* Hold the caller until deadline (clock_now_ns): sleep most of the way,
 * spin the rest. */
static void wait_until(uint64_t deadline)
{
	uint64_t now = clock_now_ns();

	if (now + SPIN_NS < deadline) {
		uint64_t nap = deadline - SPIN_NS - now;
		struct timespec ts = { (time_t)(nap / 1000000000ull),
				       (long)(nap % 1000000000ull) };

		nanosleep(&ts, NULL);
	}
	while (clock_now_ns() < deadline)
		;
}

static int card_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	st->st_nlink = 1;
	if (strcmp(path, "/" SECTOR_NAME) == 0) {
		st->st_mode = S_IFREG | 0444;
		st->st_size = (off_t)strlen(sector_text);
		return 0;
	}
	if (strcmp(path, "/" CARD_NAME) != 0)
		return -ENOENT;
	st->st_mode = S_IFREG | 0600;
	st->st_size = (off_t)fp_dev_size_bytes(card);
	return 0;
}

static int card_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
			off_t off, struct fuse_file_info *fi,
			enum fuse_readdir_flags flags)
{
	(void)off; (void)fi; (void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, CARD_NAME, NULL, 0, 0);
	fill(buf, SECTOR_NAME, NULL, 0, 0);
	return 0;
}

static int card_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/" CARD_NAME) != 0 && strcmp(path, "/" SECTOR_NAME) != 0)
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static void ask_swap(int sig)
{
	(void)sig;
	swaps_asked++;
}

/* Between requests (they are served one at a time): the other card in
 * the reader, when SIGUSR1 asked for it.  0 or a negative errno. */
static int swap_if_asked(void)
{
	while (swaps_done != (unsigned)swaps_asked) {
		struct fp_dev **other = &cards[card == cards[0]];
		int ret;

		if (!*other) {
			ret = sim_open(&profile, other);
			if (!ret)
				ret = sim_fill_random(*other, SWAP_SEED);
			if (!ret)
				ret = fp_dev_set_write_area(*other, 0,
							    fp_dev_size_bytes(*other));
			if (ret)
				return ret < 0 ? ret : -EIO;
		}
		card = *other;
		swaps_done++;
	}
	return 0;
}

/* One I/O at the card's pace.  The card takes sector-aligned requests;
 * FUSE passes the loop device's, which are. */
static int card_io(bool write, char *buf, size_t len, off_t off)
{
	uint64_t start = clock_now_ns(), ns = 0;
	int ret;

	if (len > MAX_IO || off < 0)
		return -EINVAL;
	if ((ret = swap_if_asked()))
		return ret;
	if ((uint64_t)off >= fp_dev_size_bytes(card))
		return 0;
	if ((uint64_t)off + len > fp_dev_size_bytes(card))
		len = fp_dev_size_bytes(card) - (uint64_t)off;
	if (write) {
		memcpy(iobuf, buf, len);
		ret = fp_dev_write_timed(card, iobuf, len, (uint64_t)off, &ns);
	} else {
		ret = fp_dev_read_timed(card, iobuf, len, (uint64_t)off, &ns);
		if (ret == 0)
			memcpy(buf, iobuf, len);
	}
	if (ret)
		return ret;
	wait_until(start + (uint64_t)((double)ns * scale));
	return (int)len;
}

static int card_read(const char *path, char *buf, size_t len, off_t off,
		     struct fuse_file_info *fi)
{
	size_t n = strlen(sector_text);

	(void)fi;
	if (strcmp(path, "/" SECTOR_NAME) != 0)
		return card_io(false, buf, len, off);
	if (off < 0 || (size_t)off >= n)
		return 0;
	n -= (size_t)off;
	memcpy(buf, sector_text + off, n < len ? n : len);
	return (int)(n < len ? n : len);
}

static int card_write(const char *path, const char *buf, size_t len, off_t off,
		      struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/" CARD_NAME) != 0)
		return -EACCES;
	return card_io(true, (char *)buf, len, off);
}

static int card_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path; (void)datasync; (void)fi;
	return 0;
}

static const struct fuse_operations ops = {
	.getattr = card_getattr,
	.readdir = card_readdir,
	.open = card_open,
	.read = card_read,
	.write = card_write,
	.fsync = card_fsync,
};

int main(int argc, char **argv)
{
	struct sim_profile p;
	char err[256] = "";
	char *fargv[16];
	int fargc = 0;

	if (argc < 4 || argc > 12) {
		fprintf(stderr, "usage: simfuse SPEC SCALE MOUNTPOINT [FUSE options]\n");
		return 2;
	}
	scale = strtod(argv[2], NULL);
	if (!(scale > 0) || sim_profile_parse(argv[1], &p, err, sizeof(err)) ||
	    sim_open(&p, &card)) {
		fprintf(stderr, "simfuse: bad card or scale: %s\n", err);
		return 2;
	}
	if (fp_dev_set_write_area(card, 0, fp_dev_size_bytes(card)))
		return 1;
	cards[0] = card;
	profile = p;
	signal(SIGUSR1, ask_swap);
	snprintf(sector_text, sizeof(sector_text), "%u\n", (unsigned)p.sector_bytes);
	iobuf = fp_dev_alloc_buf(MAX_IO);
	if (!iobuf)
		return 1;
	prctl(PR_SET_TIMERSLACK, 1UL);
	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-s";
	for (int i = 4; i < argc; i++)
		fargv[fargc++] = argv[i];
	fargv[fargc++] = argv[3];
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ops, NULL);
}
