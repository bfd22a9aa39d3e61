/* svg.h - the probe's evidence as a self-contained SVG chart. */
#ifndef FLASHPROBE_SVG_H
#define FLASHPROBE_SVG_H

#include <stdio.h>

struct align_result;
struct openau_result;

/* Write one SVG document: the alignment diffs (when a is not NULL) and the
 * open-AU throughputs (when o is not NULL).  title is escaped.  Returns 0
 * or -EIO when the stream failed. */
int svg_write(FILE *out, const struct align_result *a,
	      const struct openau_result *o, const char *title);

#endif
