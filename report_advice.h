/* report_advice.h - the Advice section, for people and for scripts; used
 * by probe and advise (and check for its fixes). */
#ifndef FLASHPROBE_REPORT_ADVICE_H
#define FLASHPROBE_REPORT_ADVICE_H

#include <stdio.h>

#include "advice.h"

struct json_writer;

/* The words DEVICE and PARTITION in s, replaced by device and its first
 * partition (/dev/sdb -> /dev/sdb1, /dev/mmcblk0 -> /dev/mmcblk0p1) when
 * device is a /dev path; s unchanged otherwise. */
void report_advice_substitute(const char *s, const char *device, char *out,
			      size_t len);

/* The same with both names given (NULL leaves the word). */
void report_advice_substitute_names(const char *s, const char *device, const char *part,
				    char *out, size_t len);

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
