/* svg.h - the evidence of a run as one self-contained SVG figure, the kind
 * a person attaches to a bug report: one panel per test that ran. */
#ifndef FLASHPROBE_SVG_H
#define FLASHPROBE_SVG_H

#include <stdio.h>

struct align_result;
struct openau_result;
struct findfat_result;
struct benchio_result;

/* What to draw; NULL members are left out (at least one should be set). */
struct svg_evidence {
	const char *title;			/* the device, escaped; NULL: "flashprobe" */
	const struct align_result *align;	/* diff against boundary size */
	const struct openau_result *openau;	/* time per write against AUs */
	const struct findfat_result *findfat;	/* throughput per unit */
	const struct benchio_result *bench;	/* latency percentiles */
};

/* Write one SVG document.  Every label is placed so that it overlaps no
 * other and stays inside the figure (labels that cannot are left out).
 * Returns 0 or -EIO when the stream failed. */
int svg_write(FILE *out, const struct svg_evidence *e);

/* Text width estimate svg_write() lays labels out with: chars x size x
 * this (generous for common sans-serif fonts). */
#define SVG_CHAR_WIDTH_EM 0.64

#endif
