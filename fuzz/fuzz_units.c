/* fuzz_units.c - libFuzzer harness for the parsers of what users type:
 * sizes (units_parse_size: --blocksize, --erasesize, --offset, --size and
 * the simulator's sizes), counts (units_parse_uint: --count, --max-open,
 * --seed ...), simulated-card specs (sim_profile_parse: "sim:NAME,k=v,...")
 * and bench workload lists (benchio_workloads_parse: --workload).
 *
 * Besides crashes and sanitizer reports it checks behaviour: both number
 * parsers against an independent reference written with 128-bit
 * arithmetic, round trips through the formatter, and that every error
 * leaves a terminated one-line reason.  Built and run by `make fuzz`. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchio.h"
#include "sim.h"
#include "units.h"

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "fuzz_units: check failed at line %d: %s\n",  \
				__LINE__, #cond);                                     \
			abort();                                                      \
		}                                                                     \
	} while (0)

typedef unsigned __int128 u128;

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int digit(int c, int base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && lower(c) >= 'a' && lower(c) <= 'f')
		return lower(c) - 'a' + 10;
	return -1;
}

/* Digits from *p in base; the value saturates just above UINT64_MAX. */
static size_t ref_scan(const char **p, int base, u128 *v)
{
	size_t n = 0;
	int d;

	*v = 0;
	while ((d = digit(**p, base)) >= 0) {
		*v = *v * (u128)base + (u128)d;
		if (*v > (u128)UINT64_MAX)
			*v = (u128)UINT64_MAX + 1;
		(*p)++;
		n++;
	}
	return n;
}

/* What units.h documents: decimal with an optional B, K[iB], M[iB], G[iB]
 * or T[iB] suffix (any case), or 0x hex without suffix; syntax errors are
 * -EINVAL even when the number also overflows, then -ERANGE. */
static int ref_parse_size(const char *s, uint64_t *out)
{
	static const char letters[] = "kmgt";
	const char *p = s;
	unsigned shift = 0;
	u128 v;

	if (digit(s[0], 10) < 0)
		return -EINVAL;
	if (s[0] == '0' && lower(s[1]) == 'x') {
		p += 2;
		if (ref_scan(&p, 16, &v) == 0 || *p != '\0')
			return -EINVAL;
	} else {
		ref_scan(&p, 10, &v);
		if (*p == '\0' || (lower(*p) == 'b' && p[1] == '\0')) {
			shift = 0;
		} else {
			const char *l = *p ? strchr(letters, lower(*p)) : NULL;

			if (l == NULL)
				return -EINVAL;
			if (p[1] != '\0' &&
			    !(lower(p[1]) == 'i' && lower(p[2]) == 'b' && p[3] == '\0'))
				return -EINVAL;
			shift = 10u * (unsigned)(l - letters + 1);
		}
	}
	if (v > (u128)UINT64_MAX || (v << shift) > (u128)UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)(v << shift);
	return 0;
}

static int ref_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	const char *p = s;
	u128 v;

	if (digit(s[0], 10) < 0)
		return -EINVAL;
	ref_scan(&p, 10, &v);
	if (*p != '\0')
		return -EINVAL;
	if (v > (u128)max)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

static void check_terminated(const char *buf, size_t len)
{
	CHECK(memchr(buf, '\0', len) != NULL);
}

static void fuzz_sizes(const char *s)
{
	uint64_t got = 0xdeadbeef, want = 0xdeadbeef;
	int rc = units_parse_size(s, &got), ref = ref_parse_size(s, &want);
	char buf[48];

	CHECK(rc == ref);
	if (rc != 0)
		return;
	CHECK(got == want);
	/* the decimal form reads back as the same value */
	snprintf(buf, sizeof(buf), "%" PRIu64, got);
	CHECK(units_parse_size(buf, &want) == 0 && want == got);
	/* the formatter never overflows a small buffer and always ends it */
	for (size_t len = 1; len <= sizeof(buf); len += 7) {
		memset(buf, 'x', sizeof(buf));
		units_format_bytes(got, buf, len);
		check_terminated(buf, len);
	}
	units_format_bytes(got, buf, sizeof(buf));
	/* printed without decimals it reads back (the parser stops at TiB) */
	if (strchr(buf, '.') == NULL && got < (UINT64_C(1) << 50))
		CHECK(units_parse_size(buf, &want) == 0 && want == got);
}

static void fuzz_uints(const char *s)
{
	static const uint64_t maxes[] = { 0, 1, 64, 256, 1024, 86400000, UINT32_MAX,
					  UINT64_MAX - 1, UINT64_MAX };

	for (size_t i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		uint64_t got = 7, want = 7;
		int rc = units_parse_uint(s, maxes[i], &got);

		CHECK(rc == ref_parse_uint(s, maxes[i], &want));
		if (rc == 0)
			CHECK(got == want && got <= maxes[i]);
		else
			CHECK(got == 7);	/* untouched on error */
	}
}

static void fuzz_sim_spec(const char *s)
{
	static const size_t errlens[] = { 1, 2, 17, 256 };

	for (size_t i = 0; i < sizeof(errlens) / sizeof(errlens[0]); i++) {
		struct sim_profile p, before;
		char err[256 + 1];
		int rc;

		memset(&p, 0xa5, sizeof(p));
		before = p;
		memset(err, 'x', sizeof(err));
		rc = sim_profile_parse(s, &p, err, errlens[i]);
		CHECK(err[errlens[i]] == 'x');	/* nothing past errlen */
		if (rc != 0) {
			CHECK(rc == -EINVAL);
			CHECK(memcmp(&p, &before, sizeof(p)) == 0);	/* untouched */
			check_terminated(err, errlens[i]);
			/* one line (unless it quotes a newline the user typed) */
			if (errlens[i] > 1)
				CHECK(err[0] != '\0' &&
				      (strchr(err, '\n') == NULL || strchr(s, '\n') != NULL));
			continue;
		}
		/* what the parser accepts is a consistent card */
		CHECK(sim_profile_validate(&p, err, sizeof(err) - 1) == 0);
		CHECK(memchr(p.name, '\0', sizeof(p.name)) != NULL);
		CHECK(p.size_bytes > 0);
	}
}

static void fuzz_workloads(const char *s)
{
	unsigned mask = 0xdead;
	int rc = benchio_workloads_parse(s, &mask);

	if (rc != 0) {
		CHECK(rc == -EINVAL && mask == 0xdead);
		return;
	}
	CHECK(mask != 0 && (mask & ~BENCHIO_ALL_WORKLOADS) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size heap copy, so ASan sees any read past the end */
	char *s = malloc(size + 1);

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';		/* the parsers see up to the first NUL */
	fuzz_sizes(s);
	fuzz_uints(s);
	fuzz_sim_spec(s);
	fuzz_workloads(s);
	free(s);
	return 0;
}
