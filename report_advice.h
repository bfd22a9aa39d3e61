/* report_advice.h - the Advice section, for people and for scripts; used
 * by probe and advise (and check for its fixes). */
#ifndef FLASHPROBE_REPORT_ADVICE_H
#define FLASHPROBE_REPORT_ADVICE_H

#include <stdbool.h>
#include <stdio.h>

#include "advice.h"

struct json_writer;

/* The words DEVICE and PARTITION in s, replaced by device and its first
 * partition (/dev/sdb -> /dev/sdb1, /dev/mmcblk0 -> /dev/mmcblk0p1, a
 * /dev/disk/by-id link by its kernel node's) when device is a /dev path;
 * s unchanged otherwise.  PARTITION stays when no partition name can be
 * derived safely (report_advice_first_partition). */
void report_advice_substitute(const char *s, const char *device, char *out,
			      size_t len);

/* The same with PARTITION as partition number of device (check's fixes). */
void report_advice_substitute_part(const char *s, const char *device, unsigned number,
				   char *out, size_t len);

/* The same with both names given (NULL leaves the word).  Each name is
 * one shell word (report_shell_quote); a name that does not fit whole
 * ends out before it. */
void report_advice_substitute_names(const char *s, const char *device, const char *part,
				    char *out, size_t len);

/* s as one shell word: as it is when made of characters no shell treats
 * specially, else in single quotes with ' as '\''.  False (out empty)
 * when it does not fit. */
bool report_shell_quote(const char *s, char *out, size_t len);

/* The first (or number-th) partition of the disk at device: its kernel node resolved
 * (realpath) and named the kernel's way; false when that is not a plain
 * /dev name (a device-mapper node, a path that does not resolve to one). */
bool report_advice_first_partition(const char *device, char *out, size_t len);
bool report_advice_partition_node(const char *device, unsigned number, char *out,
				  size_t len);

/* Which placeholders a printed line still holds, and the one line that
 * says to replace them (nothing for 0). */
#define PLACEHOLDER_DEVICE 1u
#define PLACEHOLDER_PARTITION 2u
unsigned report_advice_placeholders(const char *line);
void report_advice_placeholder_note(FILE *out, const char *indent, unsigned left);

/* "Advice" heading, the alignment, each command with its reasons, notes. */
void report_advice_text(FILE *out, const struct advice *a, const char *device);

/* The "advice" object, with advice.commands as argv arrays keeping the
 * DEVICE and PARTITION placeholders. */
void report_advice_json(struct json_writer *w, const struct advice *a);

/* One line / the "geometry" object: the erase block, page and FAT area
 * used and where each came from (advise and check). */
void report_given_geometry_text(FILE *out, const struct geometry *g);
void report_given_geometry_json(struct json_writer *w, const struct geometry *g);

#endif
