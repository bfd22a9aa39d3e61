/* units.h - parsing and printing sizes, times and rates. */
#ifndef FLASHPROBE_UNITS_H
#define FLASHPROBE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parse a size: "4194304", "0x400000", "4M", "4MiB", "4m", "512K", "512KiB",
 * "1G", "1GiB", "2T", "512B" (binary multiples; K/M/G/T and KiB/MiB/GiB/TiB
 * accepted).  Rejects empty strings, signs, garbage, trailing junk,
 * fractions and overflow with -EINVAL / -ERANGE.  Zero is accepted here;
 * callers decide whether it is meaningful. */
int units_parse_size(const char *s, uint64_t *out);

/* Parse an unsigned decimal integer (no suffix) into *out, <= max.
 * -EINVAL on garbage, -ERANGE above max. */
int units_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* Bytes in flashbench's style: exact binary multiples print as "4MiB",
 * "16KiB", "1.5MiB" (up to 2 decimals when exact), otherwise "3000B" or
 * the largest unit with decimals.  Writes into buf (always terminated);
 * returns buf. */
char *units_format_bytes(uint64_t bytes, char *buf, size_t len);

/* Signed nanoseconds with a unit that always survives: "2.06ms", "504µs",
 * "-49.4µs", "812ns", "1.2s".  Three significant digits. */
char *units_format_ns(int64_t ns, char *buf, size_t len);

/* Throughput in flashbench's decimal style: "12.4M/s", "818K/s", "96.7K/s",
 * "512/s" (10^3 multiples, three significant digits). */
char *units_format_rate(double bytes_per_sec, char *buf, size_t len);

#endif
