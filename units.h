/* units.h - parsing and printing sizes, times and rates. */
#ifndef FLASHPROBE_UNITS_H
#define FLASHPROBE_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parse a size: "4194304", "0x400000", "4M", "4MiB", "4m", "512K", "512KiB",
 * "1G", "1GiB", "2T", "512B" (binary multiples; K/M/G/T and KiB/MiB/GiB/TiB
 * accepted), and decimal fractions that are whole bytes, as the reports
 * write sizes ("1.5M", "1.25KiB"; up to 12 decimals).  Rejects empty
 * strings, signs, garbage, trailing junk, fractions of a byte and
 * overflow with -EINVAL / -ERANGE.  Zero is accepted here;
 * callers decide whether it is meaningful. */
int units_parse_size(const char *s, uint64_t *out);

/* Parse an unsigned decimal integer (no suffix) into *out, <= max.
 * -EINVAL on garbage, -ERANGE above max. */
int units_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* Parse a duration: a decimal number with an optional unit "ns", "us",
 * "ms" or "s" ("2.5ms", "117us", "1s"); a bare number counts in
 * bare_unit_ns nanoseconds (1e9 for seconds).  The result must be a whole
 * number of nanoseconds.  -EINVAL on garbage, signs, an unknown unit or
 * a fraction of a nanosecond; -ERANGE on overflow. */
int units_parse_duration(const char *s, uint64_t bare_unit_ns, uint64_t *ns);

/* "4MB", "512kB", "1gb": a size written with a decimal-looking suffix,
 * which units_parse_size() refuses; callers say to use K/M/G/T or
 * KiB/MiB/GiB/TiB instead. */
bool units_is_decimal_size(const char *s);

/* Bytes in flashbench's style: exact binary multiples print as "4MiB",
 * "16KiB", "1.5MiB" (up to 2 decimals when exact), otherwise "3000B" or
 * the largest unit with two decimals, cut (never more than there is).  Writes into buf (always terminated);
 * returns buf. */
char *units_format_bytes(uint64_t bytes, char *buf, size_t len);

/* Signed nanoseconds with a unit that always survives: "2.06ms", "504µs",
 * "-49.4µs", "812ns", "1.2s".  Three significant digits. */
char *units_format_ns(int64_t ns, char *buf, size_t len);

/* Throughput in binary units, like the sizes: "12.4MiB/s", "818KiB/s",
 * "96.7KiB/s", "512B/s" (2^10 multiples, three significant digits).  The
 * text reports use this; the flashbench-compatible tables keep
 * units_format_rate(). */
char *units_format_rate_binary(double bytes_per_sec, char *buf, size_t len);

/* Throughput in flashbench's decimal style: "12.4M/s", "818K/s", "96.7K/s",
 * "512/s" (10^3 multiples, three significant digits). */
char *units_format_rate(double bytes_per_sec, char *buf, size_t len);

#endif
