/* devspec.h - what a device argument names, and opening it.
 *
 * A device argument is "sim:NAME[,key=value...]" (a simulated card, see
 * sim.h) or anything else (a path: a block device or an image file, see
 * dev.c).  Whether something is simulated is asked here and only here: of
 * an argument with devspec_is_sim(), of an opened device (through any
 * wrappers) with devspec_dev_is_sim().  This module sits above both
 * backends, so the device layer itself (dev.c) knows neither.
 */
#ifndef FLASHPROBE_DEVSPEC_H
#define FLASHPROBE_DEVSPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "dev.h"

/* true when spec names a simulated card (NULL is not one). */
bool devspec_is_sim(const char *spec);

/* The simulated card's part of spec ("NAME[,key=value...]" after "sim:"),
 * or NULL when spec is a path. */
const char *devspec_sim_body(const char *spec);

/* true when the backend at the bottom of d's stack is a simulated card. */
bool devspec_dev_is_sim(const struct fp_dev *d);

/* Open spec as a simulated card or as a path (fp_dev_open_path()).  On
 * failure returns a negative errno and writes a one-line reason (no
 * program prefix, no newline) into err. */
int devspec_open(const char *spec, enum fp_open_mode mode, struct fp_dev **out,
		 char *err, size_t errlen);

#endif
