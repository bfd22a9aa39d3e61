/* units.c - parsing and printing sizes, times and rates.
 *
 * One parser for every size the user types (util-linux strtosize style,
 * never atoi), and formatters that write into caller-sized buffers: output
 * is truncated rather than overflowing and always NUL-terminated.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

static char units_ascii_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Value of c as a digit in base 10 or 16, or -1.  Locale independent. */
static int units_digit(char c, unsigned base)
{
	char l = units_ascii_lower(c);

	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && l >= 'a' && l <= 'f')
		return l - 'a' + 10;
	return -1;
}

/* Accumulate digits from *pp into *val, advancing *pp.  Overflow is
 * remembered in *overflow rather than stopping, so that syntax errors are
 * still reported as -EINVAL.  Returns the number of digits read. */
static size_t units_scan(const char **pp, unsigned base, uint64_t *val,
			 bool *overflow)
{
	const char *p = *pp;
	size_t ndigits = 0;
	int d;

	*val = 0;
	*overflow = false;
	while ((d = units_digit(*p, base)) >= 0) {
		if (*val > (UINT64_MAX - (uint64_t)d) / base)
			*overflow = true;
		else
			*val = *val * base + (uint64_t)d;
		p++;
		ndigits++;
	}
	*pp = p;
	return ndigits;
}

#define UNITS_MAX_DECIMALS 12	/* 5^12 and 2^12 keep the fraction exact */

/* The decimals after the '.' at *pp: 1 to max digits into *frac and
 * *digits, *pp moved past them; -EINVAL for none or more than max. */
static int units_scan_decimals(const char **pp, unsigned max, uint64_t *frac, unsigned *digits)
{
	const char *p = *pp + 1;
	bool overflow;

	*digits = (unsigned)units_scan(&p, 10, frac, &overflow);
	if (*digits == 0 || *digits > max)
		return -EINVAL;
	*pp = p;
	return 0;
}

/* Binary shift for a size suffix: "", "B", "K", "KiB", ... "T", "TiB",
 * case-insensitive.  "KB" is refused: it means 1000 to some tools and 1024
 * to others, and guessing wrong would silently misplace a boundary. */
static int units_suffix_shift(const char *s, unsigned *shift)
{
	static const char letters[] = "kmgt";
	const char *pos;

	if (s[0] == '\0' || (units_ascii_lower(s[0]) == 'b' && s[1] == '\0')) {
		*shift = 0;
		return 0;
	}
	pos = strchr(letters, units_ascii_lower(s[0]));
	if (pos == NULL)
		return -EINVAL;
	s++;
	if (s[0] != '\0' && !(units_ascii_lower(s[0]) == 'i' &&
			      units_ascii_lower(s[1]) == 'b' && s[2] == '\0'))
		return -EINVAL;
	*shift = 10u * (unsigned)(pos - letters + 1);
	return 0;
}

/* The bytes in .frac (digits decimals) of 2^shift: 0, or -EINVAL when
 * they are not a whole number.  frac / 10^digits * 2^shift is whole when
 * frac holds 5^digits and what is left, times 2^shift, holds 2^digits. */
static int units_fraction_bytes(uint64_t frac, unsigned digits, unsigned shift,
				uint64_t *bytes)
{
	uint64_t pow5 = 1, twos;

	for (unsigned i = 0; i < digits; i++)
		pow5 *= 5;
	if (frac % pow5)
		return -EINVAL;
	twos = frac / pow5 << shift;	/* frac / 5^d < 2^d <= 2^12: no overflow */
	if (twos % (UINT64_C(1) << digits))
		return -EINVAL;
	*bytes = twos >> digits;
	return 0;
}

int units_parse_size(const char *s, uint64_t *out)
{
	uint64_t val, frac = 0, frac_bytes = 0;
	unsigned shift = 0, digits = 0;
	bool overflow;
	int rc;

	/* The first character must be a digit: this refuses signs and
	 * leading spaces, which strtoull() would silently accept. */
	if (s == NULL || units_digit(s[0], 10) < 0)
		return -EINVAL;
	if (s[0] == '0' && units_ascii_lower(s[1]) == 'x') {
		/* Hex takes no suffix: "0x1B" is 27, not 1 byte. */
		s += 2;
		if (units_scan(&s, 16, &val, &overflow) == 0 || *s != '\0')
			return -EINVAL;
	} else {
		/* Leading zeros are decimal, never octal.  "1.5M" as the
		 * reports write it: a fraction that is whole bytes. */
		units_scan(&s, 10, &val, &overflow);
		if (*s == '.' && units_scan_decimals(&s, UNITS_MAX_DECIMALS, &frac, &digits) < 0)
			return -EINVAL;
		rc = units_suffix_shift(s, &shift);
		if (rc == 0 && digits)
			rc = units_fraction_bytes(frac, digits, shift, &frac_bytes);
		if (rc < 0)
			return rc;
	}
	if (overflow || (shift > 0 && val > (UINT64_MAX >> shift)) ||
	    (val << shift) > UINT64_MAX - frac_bytes)
		return -ERANGE;
	*out = (val << shift) + frac_bytes;
	return 0;
}

int units_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t val;
	bool overflow;

	if (s == NULL || units_digit(s[0], 10) < 0)
		return -EINVAL;
	units_scan(&s, 10, &val, &overflow);
	if (*s != '\0')
		return -EINVAL;
	if (overflow || val > max)
		return -ERANGE;
	*out = val;
	return 0;
}

int units_parse_duration(const char *s, uint64_t bare_unit_ns, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	uint64_t whole, frac = 0, frac_div = 1, mult = bare_unit_ns;
	unsigned digits = 0;
	bool overflow;

	if (s == NULL || units_digit(s[0], 10) < 0 || bare_unit_ns == 0)
		return -EINVAL;
	units_scan(&s, 10, &whole, &overflow);
	/* nine decimals: finer than 1 ns in any unit is refused */
	if (*s == '.' && units_scan_decimals(&s, 9, &frac, &digits) < 0)
		return -EINVAL;
	while (digits--)
		frac_div *= 10;
	if (*s) {
		mult = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(s, units[i].suffix) == 0)
				mult = units[i].ns;
	}
	if (mult == 0 || (frac * mult) % frac_div != 0)
		return -EINVAL;
	if (overflow || whole > UINT64_MAX / mult ||
	    whole * mult > UINT64_MAX - frac * mult / frac_div)
		return -ERANGE;
	*ns = whole * mult + frac * mult / frac_div;
	return 0;
}

bool units_is_decimal_size(const char *s)
{
	if (s == NULL || units_digit(s[0], 10) < 0)
		return false;
	s += strspn(s, "0123456789");
	return *s && strchr("kmgtKMGT", *s) && units_ascii_lower(s[1]) == 'b' &&
	       s[2] == '\0';
}

char *units_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const names[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"
	};
	static const char *const quarters[] = { "", ".25", ".5", ".75" };
	unsigned order = 0;
	uint64_t unit, rem, quarter;

	if (buf == NULL || len == 0)
		return buf;
	while (order < 6 && (bytes >> (10 * (order + 1))) != 0)
		order++;
	if (order == 0) {
		snprintf(buf, len, "%" PRIu64 "B", bytes);
		return buf;
	}
	unit = UINT64_C(1) << (10 * order);
	rem = bytes & (unit - 1);
	quarter = unit / 4;
	/* A binary fraction has at most two decimals exactly when it is a
	 * multiple of a quarter (100 = 4 * 25 and 25 is odd). */
	if (rem % quarter == 0)
		snprintf(buf, len, "%" PRIu64 "%s%s", bytes >> (10 * order),
			 quarters[rem / quarter], names[order]);
	else if (bytes < (UINT64_C(1) << 20))
		snprintf(buf, len, "%" PRIu64 "B", bytes);
	else	/* cut, not rounded: 999.996 MiB of real flash is not "1000.00MiB" */
		snprintf(buf, len, "%" PRIu64 ".%02u%s", bytes >> (10 * order),
			 (unsigned)((unsigned __int128)rem * 100 / unit), names[order]);
	return buf;
}

/* Decimals that give three significant digits for 1 <= v < 1000, decided on
 * the rounded value so that 9.996 prints as "10.0", not "10.00". */
static int units_decimals(double v)
{
	if (v < 9.995)
		return 2;
	if (v < 99.95)
		return 1;
	return 0;
}

char *units_format_ns(int64_t ns, char *buf, size_t len)
{
	static const char *const names[] = { "ns", "\xc2\xb5s", "ms", "s" };
	const char *sign = ns < 0 ? "-" : "";
	/* Magnitude without negating INT64_MIN. */
	uint64_t mag = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	unsigned i = 0;
	double v;

	if (buf == NULL || len == 0)
		return buf;
	if (mag < 1000) {
		snprintf(buf, len, "%s%" PRIu64 "ns", sign, mag);
		return buf;
	}
	v = (double)mag;
	/* Move up while the value would round to four digits. */
	while (i < 3 && v >= 999.5) {
		v /= 1000.0;
		i++;
	}
	snprintf(buf, len, "%s%.*f%s", sign, units_decimals(v), v, names[i]);
	return buf;
}

/* A rate with 1000 or 1024 multiples: the names are "", "K", "M"... or
 * "B", "KiB", "MiB"... */
static char *units_format_rate_in(double bytes_per_sec, double base,
				  const char *const names[7], char *buf, size_t len)
{
	const char *sign = bytes_per_sec < 0 ? "-" : "";
	double v = fabs(bytes_per_sec);
	unsigned i = 0;

	if (buf == NULL || len == 0)
		return buf;
	if (!isfinite(bytes_per_sec)) {
		snprintf(buf, len, "%s/s", isnan(bytes_per_sec) ? "nan" :
			 bytes_per_sec < 0 ? "-inf" : "inf");
		return buf;
	}
	if (v < 0.5)
		sign = "";	/* no "-0/s" */
	if (v < 999.5) {
		/* Below 1K/s a fractional byte count means nothing. */
		snprintf(buf, len, "%s%.0f%s/s", sign, v, names[0]);
		return buf;
	}
	while (i < 6 && v >= 999.5) {
		v /= base;
		i++;
	}
	snprintf(buf, len, "%s%.*f%s/s", sign, units_decimals(v), v, names[i]);
	return buf;
}

char *units_format_rate(double bytes_per_sec, char *buf, size_t len)
{
	static const char *const names[] = { "", "K", "M", "G", "T", "P", "E" };

	return units_format_rate_in(bytes_per_sec, 1000.0, names, buf, len);
}

char *units_format_rate_binary(double bytes_per_sec, char *buf, size_t len)
{
	static const char *const names[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"
	};

	return units_format_rate_in(bytes_per_sec, 1024.0, names, buf, len);
}
