/* probe.h - the whole job: identity, read-only geometry, write tests when
 * allowed, one conclusion and advice.
 *
 * probe_run() never prints and never decides about consent: the caller
 * says whether writes are allowed and provides protect(), which announces
 * each write area and backs it up before the test writes it.
 *
 * With writes allowed and no --erasesize, the write-based AU search
 * (auwrite.h) runs after the read-only alignment test; its AU, when found,
 * is the erase size of the write tests and the advice, with source
 * measured_writes, and a read step that differs from it is reported next
 * to it.
 */
#ifndef FLASHPROBE_PROBE_H
#define FLASHPROBE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "advice.h"
#include "align.h"
#include "auwrite.h"
#include "capacity.h"
#include "findfat.h"
#include "openau.h"
#include "sysinfo.h"

struct fp_dev;

/* Announce [start, end) (at most max_bytes written) and make it writable;
 * may_alias: the writes may land outside it on a fake (the capacity
 * check).  0 to go on, a negative errno to stop before writing. */
typedef int (*probe_protect_fn)(void *arg, const char *test, uint64_t start,
				uint64_t end, uint64_t max_bytes, bool may_alias);

/* Progress: phase name, done and total in phase units. */
typedef void (*probe_progress_fn)(void *arg, const char *phase, uint64_t done,
				  uint64_t total);

struct probe_opts {
	const char *device;		/* as given: for sysinfo */
	const char *sysfs_root;		/* normally "/sys" */
	bool writes_allowed;
	bool quick;			/* cheaper, less certain */
	uint64_t erase_bytes;		/* --erasesize, 0 = measure */
	bool cache_set;			/* --cache-size given (else the default) */
	uint64_t cache_bytes;		/* capacity check: cache to defeat */
	uint64_t seed;
	bool seed_set;
	probe_protect_fn protect;
	void *protect_arg;
	probe_progress_fn progress;
	void *progress_arg;
};

/* A write test the probe did not run, and why. */
struct probe_skip {
	const char *test;		/* "open-au" or "find-fat" */
	char reason[320];
};

#define PROBE_MAX_SKIPPED 2

struct probe_result {
	struct sysinfo identity;
	bool identity_read;
	bool capacity_done;		/* the fake-capacity check ran (first) */
	struct capacity_result capacity;
	char capacity_note[320];	/* not verified: what the registers say */
	bool align_done;		/* the read-only alignment test finished */
	struct align_result align;
	bool auwrite_done;		/* the write-based AU search ran */
	struct auwrite_plan auwrite_plan;
	struct auwrite_result auwrite;
	uint64_t test_erase_bytes;	/* erase size the write tests used */
	const char *test_erase_origin;	/* "measured_writes", "measured", "given", "card" */
	char decided_by[200];		/* which test decided the erase size, or "" */
	bool openau_done;
	struct openau_plan openau_plan;
	struct openau_result openau;
	bool findfat_done;
	struct findfat_result fat;
	struct probe_skip skipped[PROBE_MAX_SKIPPED];	/* write tests not run */
	size_t nskipped;
	char conflict[320];		/* sources that disagree, or "" */
	/* the test that stopped the probe with an error (NULL: none), and,
	 * set by the caller when that error was the card's own (a read or
	 * write it failed), what failed: the findings up to there stand,
	 * and no advice is given for a failing card */
	const char *failed_test;
	char card_failure[256];
	/* the advice is a note: the card is failing (probe_withhold_advice) */
	bool advice_withheld;
	struct geometry geo;
	struct advice advice;
	uint64_t bytes_written;
	uint64_t elapsed_ns;		/* device time of all tests */
};

/* Run the probe on d.  With writes allowed the fake-capacity check runs
 * first; on a fake or damaged card the other write tests are skipped
 * (r->skipped says why).  Returns 0 (also with undetermined parts), or a
 * negative errno from the device or from protect() (the result then
 * holds what was done so far, and r->failed_test names the test). */
int probe_run(struct fp_dev *d, const struct probe_opts *o,
	      struct probe_result *r);

/* Replace the advice with a note (why, for people): advice for a card
 * that is failing would be advice to use it.  The findings stay. */
void probe_withhold_advice(struct probe_result *r, const char *why);

/* The caller found that the probe stopped on the card's own failure
 * (what: the failed I/O, for people; at: its byte offset): record it, and
 * withhold the advice, unless the failure lies past the verified part of
 * a card the capacity check found damaged or fake (that finding says
 * so already, and its advice for the verified part stands). */
void probe_note_card_failure(struct probe_result *r, const char *what, uint64_t at);

#endif
