/* safety_signals.c - interruption: the signal handlers that only record
 * a signal, the notes printed while a restore runs (async-signal-safe),
 * and the interruptible device that stops a test at its next I/O.
 */
#define _XOPEN_SOURCE 700
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "dev.h"
#include "safety.h"

/* ---- interruption ---- */

/* Every signal whose default action ends the process and that a user, a
 * job manager or a resource limit sends (SIGXCPU at RLIMIT_CPU's soft
 * limit, SIGALRM from timeout -s ALRM): each would otherwise kill a test
 * with its patterns on the card.  SIGXFSZ still ends a test: it comes at
 * the journal write that crossed RLIMIT_FSIZE, before the block that
 * write saves is touched, or at an image's write past the limit, after
 * its block was saved, so it is a crash the journal is built for and
 * "flashprobe restore" replays; its handler only says so first
 * (on_file_size_limit).  A restore ignores it (safety_restore_start). */
static const int caught_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
	SIGVTALRM, SIGPROF, SIGXCPU,
};
#define NCAUGHT (sizeof(caught_signals) / sizeof(caught_signals[0]))

static volatile sig_atomic_t sig_received;
static volatile sig_atomic_t restoring;
static volatile sig_atomic_t restore_done_mib;
static volatile sig_atomic_t restore_total_mib;
static volatile sig_atomic_t restore_left_s;	/* -1: not known yet */
static char restore_what[256];
static struct sigaction old_actions[NCAUGHT];
static bool replaced[NCAUGHT];		/* this handler is installed */
static struct sigaction old_pipe;
static struct sigaction old_xfsz_action;
static bool xfsz_replaced;
static char xfsz_note[PATH_MAX + 256];
static bool installed;

/* Async-signal-safe formatting: no stdio in a handler. */
static size_t put_str(char *buf, size_t pos, size_t cap, const char *s)
{
	while (*s != '\0' && pos + 1 < cap)
		buf[pos++] = *s++;
	buf[pos] = '\0';
	return pos;
}

static size_t put_uint(char *buf, size_t pos, size_t cap, unsigned long v)
{
	char digits[24];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0 && pos + 1 < cap)
		buf[pos++] = digits[--n];
	buf[pos] = '\0';
	return pos;
}

static void write_stderr(const char *s, size_t n)
{
	/* Nothing can be done about a failed note from a handler. */
	if (write(STDERR_FILENO, s, n) < 0)
		return;
}

static void note_restoring(void)
{
	char msg[512];
	size_t p = 0;

	p = put_str(msg, p, sizeof(msg), "flashprobe: still restoring the "
		    "original data of '");
	p = put_str(msg, p, sizeof(msg), restore_what);
	p = put_str(msg, p, sizeof(msg), "': ");
	p = put_uint(msg, p, sizeof(msg), (unsigned long)restore_done_mib);
	p = put_str(msg, p, sizeof(msg), " of ");
	p = put_uint(msg, p, sizeof(msg), (unsigned long)restore_total_mib);
	p = put_str(msg, p, sizeof(msg), " MiB done");
	if (restore_left_s >= 0) {
		p = put_str(msg, p, sizeof(msg), ", about ");
		p = put_uint(msg, p, sizeof(msg), (unsigned long)restore_left_s);
		p = put_str(msg, p, sizeof(msg), " s left");
	}
	p = put_str(msg, p, sizeof(msg), "; stopping now would lose data, "
		    "please wait\n");
	write_stderr(msg, p);
}

static void on_signal(int sig)
{
	static const char stopping[] = "flashprobe: interrupted; stopping at "
				       "the next I/O\n";
	int saved = errno;

	if (restoring)
		note_restoring();
	else if (sig_received == 0)
		write_stderr(stopping, sizeof(stopping) - 1);
	if (sig_received == 0)
		sig_received = sig;
	errno = saved;
}

/* SIGXFSZ during a test: a crash all the same (see caught_signals), with
 * a line that says why and how to restore first (it died without one). */
static void on_file_size_limit(int sig)
{
	write_stderr(xfsz_note, strlen(xfsz_note));
	raise(sig);	/* SA_RESETHAND: the default action, now */
}

void safety_fsize_note(const char *journal)
{
	if (journal == NULL)	/* --destructive: nothing to put back */
		snprintf(xfsz_note, sizeof(xfsz_note), "flashprobe: a file size "
			 "limit (ulimit -f) ended the test at a write\n");
	else
		snprintf(xfsz_note, sizeof(xfsz_note), "flashprobe: a file size "
			 "limit (ulimit -f) ended the test at a write; the data it "
			 "changed is in journal '%s': run 'flashprobe restore %s' "
			 "without that limit\n", journal, journal);
}

static void put_back_handlers(void)
{
	for (size_t i = 0; i < NCAUGHT; i++)
		if (replaced[i])
			sigaction(caught_signals[i], &old_actions[i], NULL);
	memset(replaced, 0, sizeof(replaced));
	sigaction(SIGPIPE, &old_pipe, NULL);
	if (xfsz_replaced)
		sigaction(SIGXFSZ, &old_xfsz_action, NULL);
	xfsz_replaced = false;
}

/* Unless SIGXFSZ was ignored at start (then a write past the limit fails
 * with EFBIG, an ordinary error). */
static int catch_file_size_limit(void)
{
	struct sigaction sa;

	if (sigaction(SIGXFSZ, NULL, &old_xfsz_action) != 0)
		return -errno;
	if (old_xfsz_action.sa_handler == SIG_IGN)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_file_size_limit;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGXFSZ, &sa, NULL) != 0)
		return -errno;
	xfsz_replaced = true;
	return 0;
}

int safety_signals_install(void)
{
	struct sigaction sa, ign;
	int rc;

	if (installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NCAUGHT; i++)
		sigaddset(&sa.sa_mask, caught_signals[i]);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	/* A closed output pipe must not kill a test before its restore: the
	 * write then fails with EPIPE, an ordinary error reported after it. */
	if (sigaction(SIGPIPE, &ign, &old_pipe) != 0)
		return -errno;
	/* No SA_RESTART: a read from the terminal (the consent prompt)
	 * returns on Ctrl-C; device I/O retries EINTR itself.  A signal
	 * that was ignored at start (SIGHUP under nohup) stays ignored. */
	for (size_t i = 0; i < NCAUGHT; i++) {
		rc = sigaction(caught_signals[i], NULL, &old_actions[i]);

		if (rc == 0 && old_actions[i].sa_handler == SIG_IGN)
			continue;
		if (rc == 0)
			rc = sigaction(caught_signals[i], &sa, NULL);
		if (rc != 0) {
			rc = -errno;
			put_back_handlers();
			return rc;
		}
		replaced[i] = true;
	}
	if ((rc = catch_file_size_limit()) != 0) {
		put_back_handlers();
		return rc;
	}
	installed = true;
	return 0;
}

void safety_signals_uninstall(void)
{
	if (!installed)
		return;
	put_back_handlers();
	installed = false;
}

int safety_interrupted(void)
{
	return sig_received;
}

void safety_interrupt_clear(void)
{
	sig_received = 0;
}

int safety_exit_status(int sig)
{
	return 128 + sig;
}

void safety_restore_begin(const char *what, uint64_t total_bytes)
{
	/* The text first, then the flag: the handler reads it only once
	 * restoring is set. */
	snprintf(restore_what, sizeof(restore_what), "%s", what);
	restore_done_mib = 0;
	restore_total_mib =
		(sig_atomic_t)((total_bytes + (1u << 20) - 1) >> 20);
	restore_left_s = -1;
	atomic_signal_fence(memory_order_seq_cst);
	restoring = 1;
}

void safety_restore_progress(uint64_t done_bytes, uint64_t elapsed_ns)
{
	uint64_t total = (uint64_t)restore_total_mib << 20;

	restore_done_mib = (sig_atomic_t)(done_bytes >> 20);
	if (done_bytes == 0 || elapsed_ns == 0 || done_bytes > total)
		return;
	/* Remaining time at the rate so far; good enough for "please wait". */
	restore_left_s = (sig_atomic_t)((double)elapsed_ns / 1e9 *
					(double)(total - done_bytes) /
					(double)done_bytes + 0.5);
}

/* From the replay on, for the rest of the run: a write past the limit
 * fails (EFBIG) instead, the replay's and then the report's, whose line
 * "the data it changed is in its journal" would be wrong once the data
 * is back.  safety_signals_uninstall() puts back what was there. */
void safety_restore_start(void)
{
	signal(SIGXFSZ, SIG_IGN);
}

void safety_restore_end(void)
{
	restoring = 0;
}

void safety_restore_note(void *arg, uint64_t done_bytes, uint64_t total_bytes)
{
	static uint64_t t0_ns;

	if (!restoring) {
		safety_restore_begin(arg != NULL ? arg : "", total_bytes);
		t0_ns = clock_now_ns();
	}
	safety_restore_progress(done_bytes, clock_now_ns() - t0_ns);
}

/* ---- the interruptible pass-through device ---- */

static int intr_pread(void *priv, void *buf, size_t len, uint64_t off)
{
	if (sig_received)
		return -EINTR;
	return fp_dev_read_timed(priv, buf, len, off, NULL);
}

static int intr_pwrite(void *priv, const void *buf, size_t len, uint64_t off)
{
	if (sig_received)
		return -EINTR;
	return fp_dev_write_timed(priv, buf, len, off, NULL);
}

static uint64_t intr_now_ns(void *priv)
{
	return fp_dev_now_ns(priv);
}

static const struct fp_dev_ops intr_ops = {
	.pread = intr_pread,
	.pwrite = intr_pwrite,
	.now_ns = intr_now_ns,
	.close = NULL,		/* inner belongs to the caller */
};

int safety_wrap_interruptible(struct fp_dev *inner, struct fp_dev **out)
{
	if (inner == NULL || out == NULL)
		return -EINVAL;
	*out = fp_dev_create(&intr_ops, inner, fp_dev_kind(inner),
			     fp_dev_path(inner), fp_dev_size_bytes(inner),
			     fp_dev_sector_bytes(inner));
	fp_dev_set_inner(*out, inner);
	return *out != NULL ? 0 : -ENOMEM;
}
