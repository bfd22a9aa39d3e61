/* svg.c - the evidence of a run as one SVG figure, panels stacked:
 *
 *   align     extra read time at a boundary against its size (log axis,
 *             every tested size), 2^n and 3*2^n apart, +-2 standard
 *             errors, the page and erase-block verdicts marked;
 *   open-au   time of one chunk write against the number of AUs written
 *             in turn, linear and random, where the card collapses marked
 *             (a manual run: throughput against chunk size);
 *   find-fat  throughput of each leading unit, the FAT area shaded;
 *   bench     latency percentiles of each workload.
 *
 * Every label goes through one placement routine that estimates its box
 * from the text length and font size and refuses it where it would
 * overlap a label already placed or leave the figure, so that no card's
 * geometry can produce a pile of text.  Plain SVG 1.1, no scripts, no
 * external fonts or styles.
 */
#define _GNU_SOURCE		/* open_memstream */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "benchio.h"
#include "findfat.h"
#include "openau.h"
#include "svg.h"
#include "units.h"

#define FIG_W 800
#define PLOT_L 84		/* room for the y tick labels */
#define PLOT_R 24
#define PLOT_H 210
#define FONT 11
#define SMALL 10
#define TITLE 13
#define LEGEND_ROW 16
#define MAX_BOXES 2048

static const char *const BLUE = "#1f5fa8", *const ORANGE = "#d9730d",
		  *const GREEN = "#2a8a3a", *const RED = "#b03a2e",
		  *const GRAY = "#777777";
static const char *const palette[] = {
	"#1f5fa8", "#d9730d", "#2a8a3a", "#b03a2e", "#6a3d9a", "#1b9e9e",
	"#8a5a1f", "#c71585",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

struct box {
	double x0, y0, x1, y1;
};

struct fig {
	FILE *out;
	double y;			/* top of the next panel */
	struct box boxes[MAX_BOXES];	/* every label placed so far */
	size_t nboxes;
};

enum scale { LINEAR, LOG };

struct axis {
	enum scale scale;
	double lo, hi;			/* data range (positive for LOG) */
	double px0, px1;		/* pixels of lo and hi */
};

/* One panel's plot area. */
struct panel {
	struct axis x, y;
	double left, right, top, bottom;
};

typedef void (*fmt_fn)(double v, char *buf, size_t len);

/* ---- text and its boxes ---- */

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static struct box text_box(double x, double y, const char *anchor,
			   double size, const char *s)
{
	double w = (double)utf8_chars(s) * size * SVG_CHAR_WIDTH_EM;
	double x0 = !strcmp(anchor, "start") ? x :
		    !strcmp(anchor, "middle") ? x - w / 2 : x - w;

	return (struct box){ x0, y - size * 0.85, x0 + w, y + size * 0.3 };
}

static bool boxes_meet(const struct box *a, const struct box *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Labels keep this much space around them, so that neighbouring tick
 * labels do not read as one ("25" "28" as "2528"). */
#define LABEL_GAP 4

static struct box padded(struct box b)
{
	return (struct box){ b.x0 - LABEL_GAP / 2.0, b.y0 - 1, b.x1 + LABEL_GAP / 2.0,
			     b.y1 + 1 };
}

static bool box_free(const struct fig *f, const struct box *b)
{
	struct box p = padded(*b);

	if (b->x0 < 2 || b->x1 > FIG_W - 2 || b->y0 < 0)
		return false;
	for (size_t i = 0; i < f->nboxes; i++)
		if (boxes_meet(&f->boxes[i], &p))
			return false;
	return f->nboxes < MAX_BOXES;
}

/* Text for XML: escape the five special characters. */
static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* Place a label if its box is free; a white backing keeps it readable
 * over lines and points.  Returns whether it was placed. */
static bool try_text(struct fig *f, double x, double y, const char *anchor,
		     double size, const char *color, const char *s)
{
	struct box b = text_box(x, y, anchor, size, s);

	if (!box_free(f, &b))
		return false;
	f->boxes[f->nboxes++] = padded(b);
	fprintf(f->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"white\" fill-opacity=\"0.8\"/>\n", b.x0, b.y0,
		b.x1 - b.x0, b.y1 - b.y0);
	fprintf(f->out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" "
		"text-anchor=\"%s\" fill=\"%s\">", x, y, size, anchor, color);
	put_escaped(f->out, s);
	fputs("</text>\n", f->out);
	return true;
}

/* Try a label at y, then lane by lane further by dy, on either side of x. */
static bool place_text(struct fig *f, double x, double y, double dy,
		       unsigned lanes, double size, const char *color,
		       const char *s)
{
	for (unsigned i = 0; i < lanes; i++)
		if (try_text(f, x + 4, y + i * dy, "start", size, color, s) ||
		    try_text(f, x - 4, y + i * dy, "end", size, color, s))
			return true;
	return false;
}

/* ---- axes ---- */

static double tr(const struct axis *a, double v)
{
	return a->scale == LOG ? log10(v) : v;
}

/* A log axis cannot show zero or less (an unmeasured value). */
static bool shown(const struct axis *a, double v)
{
	return isfinite(v) && (a->scale == LINEAR || v > 0);
}

static double pos(const struct axis *a, double v)
{
	double lo = tr(a, a->lo), hi = tr(a, a->hi);

	if (!(hi > lo))
		return (a->px0 + a->px1) / 2;
	return a->px0 + (tr(a, v) - lo) / (hi - lo) * (a->px1 - a->px0);
}

/* Widen [lo, hi] to round values and list the ticks: 1-2-5 steps of a
 * linear axis (about five), 1, 2, 5 x 10^k on a log axis (only 10^k over
 * more than three decades).  At least two ticks, so every axis has a
 * labelled bottom and top. */
static size_t nice_ticks(struct axis *a, double *t, size_t cap)
{
	size_t n = 0;

	if (a->scale == LOG) {
		static const double m[] = { 1, 2, 5 };
		bool decades = log10(a->hi / a->lo) > 3;
		double lo = 0, hi = 0;

		for (int k = (int)floor(log10(a->lo)) - 1;
		     k <= (int)ceil(log10(a->hi)) + 1; k++)
			for (size_t i = 0; i < 3; i++) {
				double v = m[i] * pow(10, k);

				if (decades && i > 0)
					continue;
				if (v <= a->lo * (1 + 1e-9))
					lo = v;
				if (!hi && v >= a->hi * (1 - 1e-9))
					hi = v;
			}
		a->lo = lo;
		a->hi = hi;
		for (int k = (int)floor(log10(lo)); k <= (int)ceil(log10(hi)); k++)
			for (size_t i = 0; i < 3 && n < cap; i++) {
				double v = m[i] * pow(10, k);

				if (!(decades && i > 0) && v >= lo * (1 - 1e-9) &&
				    v <= hi * (1 + 1e-9))
					t[n++] = v;
			}
		return n;
	}
	{
		static const double m[] = { 1, 2, 5 };
		double span = a->hi - a->lo > 0 ? a->hi - a->lo : fabs(a->hi) + 1;
		double base = pow(10, floor(log10(span)) - 1), step = base;

		/* the smallest round step that leaves at most eight intervals */
		for (int i = 0; span / step > 8; i++)
			step = m[(i + 1) % 3] * base * pow(10, (i + 1) / 3);
		a->lo = floor(a->lo / step) * step;
		a->hi = ceil(a->hi / step) * step;
		if (a->hi <= a->lo)
			a->hi = a->lo + step;
		for (double v = a->lo; v <= a->hi + step / 2 && n < cap; v += step)
			t[n++] = fabs(v) < step / 1e6 ? 0 : v;
		return n;
	}
}

static void line(struct fig *f, double x0, double y0, double x1, double y1,
		 const char *color, const char *extra)
{
	fprintf(f->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"%s\"%s/>\n", x0, y0, x1, y1, color, extra);
}

/* y ticks with grid lines; labels that would touch are left out. */
static void y_ticks(struct fig *f, const struct panel *p, const double *t,
		    size_t n, fmt_fn fmt)
{
	char buf[48];

	for (size_t i = 0; i < n; i++) {
		double py = pos(&p->y, t[i]);

		line(f, p->left, py, p->right, py, "#e4e4e4", "");
		line(f, p->left - 4, py, p->left, py, "#444", "");
		fmt(t[i], buf, sizeof(buf));
		try_text(f, p->left - 7, py + SMALL * 0.35, "end", SMALL, "#222", buf);
	}
}

/* x ticks at the given values; labels (unless fmt is NULL) in order, each
 * only if it fits, so the ones given first win. */
static void x_ticks(struct fig *f, const struct panel *p, const double *t,
		    size_t n, fmt_fn fmt)
{
	char buf[48];

	for (size_t i = 0; i < n; i++) {
		double px = pos(&p->x, t[i]);

		if (px < p->left - 0.5 || px > p->right + 0.5)
			continue;
		line(f, px, p->bottom, px, p->bottom + 4, "#444", "");
		if (!fmt)
			continue;
		fmt(t[i], buf, sizeof(buf));
		try_text(f, px, p->bottom + 16, "middle", SMALL, "#222", buf);
	}
}

/* ---- tick formats: a number and a unit, few digits ---- */

static void fmt_scaled(double v, const double *steps, const char *const *names,
		       size_t n, char *buf, size_t len)
{
	size_t i = 0;

	while (i + 1 < n && fabs(v) >= steps[i + 1] * 0.9995)
		i++;
	if (v == 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%.3g %s", v / steps[i], names[i]);
}

static void fmt_time(double ns, char *buf, size_t len)
{
	static const double steps[] = { 1, 1e3, 1e6, 1e9 };
	static const char *const names[] = { "ns", "\xc2\xb5s", "ms", "s" };

	fmt_scaled(ns, steps, names, 4, buf, len);
}

static void fmt_rate(double bps, char *buf, size_t len)
{
	static const double steps[] = { 1, 1e3, 1e6, 1e9 };
	static const char *const names[] = { "B/s", "kB/s", "MB/s", "GB/s" };

	fmt_scaled(bps, steps, names, 4, buf, len);
}

static void fmt_bytes(double v, char *buf, size_t len)
{
	if (v < 0.5)
		snprintf(buf, len, "0");
	else
		units_format_bytes((uint64_t)llround(v), buf, len);
}

static void fmt_count(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f", v);
}

/* ---- panels ---- */

/* An entry of a panel's legend: a sample mark and its text. */
enum mark { MARK_DOT, MARK_SQUARE, MARK_HOLLOW, MARK_LINE, MARK_DASH,
	    MARK_BAR, MARK_SHADE, MARK_NONE };

struct legend {
	enum mark mark;
	const char *color;
	char text[128];
};

static void draw_mark(struct fig *f, enum mark m, double x, double y,
		      const char *color)
{
	switch (m) {
	case MARK_DOT:
		fprintf(f->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
			x, y, color);
		break;
	case MARK_SQUARE:
		fprintf(f->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\" "
			"fill=\"white\" stroke=\"%s\" stroke-width=\"1.3\"/>\n",
			x - 3, y - 3, color);
		break;
	case MARK_HOLLOW:
		fprintf(f->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.2\" fill=\"white\" "
			"stroke=\"%s\" stroke-width=\"1.3\"/>\n", x, y, color);
		break;
	case MARK_LINE:
		line(f, x - 8, y, x + 8, y, color, " stroke-width=\"1.5\"");
		break;
	case MARK_DASH:
		line(f, x - 8, y, x + 8, y, color, " stroke-dasharray=\"4 3\"");
		break;
	case MARK_BAR:
	case MARK_SHADE:
		fprintf(f->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"8\" "
			"fill=\"%s\"/>\n", x - 5, y - 4, color);
		break;
	case MARK_NONE:
		break;
	}
}

/* Title, legend rows and y-axis title; sets the plot area below them. */
static void panel_begin(struct fig *f, struct panel *p, const char *title,
			const char *ytitle, const struct legend *lg, size_t nlg)
{
	double x = PLOT_L, y;

	try_text(f, 12, f->y + 18, "start", TITLE, "#000", title);
	y = f->y + 18 + LEGEND_ROW + 2;
	for (size_t i = 0; i < nlg; i++) {
		double skip = lg[i].mark == MARK_NONE ? 0 : 20;
		struct box b = text_box(x + skip, y, "start", SMALL, lg[i].text);

		if (b.x1 > FIG_W - PLOT_R && x > PLOT_L) {
			x = PLOT_L;
			y += LEGEND_ROW;
			b = text_box(x + skip, y, "start", SMALL, lg[i].text);
		}
		draw_mark(f, lg[i].mark, x + 8, y - SMALL * 0.3, lg[i].color);
		try_text(f, x + skip, y, "start", SMALL, "#222", lg[i].text);
		x = b.x1 + 16;
	}
	try_text(f, 12, y + LEGEND_ROW + 2, "start", FONT, "#000", ytitle);
	p->left = PLOT_L;
	p->right = FIG_W - PLOT_R;
	p->top = y + LEGEND_ROW + 14;
	p->bottom = p->top + PLOT_H;
	p->x.px0 = p->left;
	p->x.px1 = p->right;
	p->y.px0 = p->bottom;
	p->y.px1 = p->top;
}

static void panel_end(struct fig *f, const struct panel *p, const char *xtitle)
{
	fprintf(f->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"none\" stroke=\"#444\"/>\n", p->left, p->top,
		p->right - p->left, p->bottom - p->top);
	try_text(f, (p->left + p->right) / 2, p->bottom + 34, "middle", FONT,
		 "#000", xtitle);
	f->y = p->bottom + 52;
}

/* A vertical verdict line through the plot with its label in the first
 * free lane at the top. */
static void verdict_line(struct fig *f, const struct panel *p, double v,
			 const char *color, const char *dash, const char *text)
{
	double px = pos(&p->x, v);
	char extra[64];

	if (px < p->left || px > p->right)
		return;
	snprintf(extra, sizeof(extra), " stroke-dasharray=\"%s\" stroke-width=\"1.5\"", dash);
	line(f, px, p->top, px, p->bottom, color, extra);
	place_text(f, px, p->top + 13, 13, 6, SMALL, color, text);
}

/* Range of positive values for a log axis; a flat series gets room. */
static void log_range(struct axis *a, const double *v, size_t n)
{
	a->scale = LOG;
	a->lo = INFINITY;
	a->hi = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] > 0 && isfinite(v[i])) {
			a->lo = fmin(a->lo, v[i]);
			a->hi = fmax(a->hi, v[i]);
		}
	if (!(a->hi > 0)) {
		a->lo = 1;
		a->hi = 10;
	}
}

static void polyline(struct fig *f, const struct panel *p, const double *x,
		     const double *y, size_t n, const char *color, const char *dash)
{
	if (n < 2)
		return;
	fprintf(f->out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.3\"%s%s%s points=\"",
		color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
		dash ? "\"" : "");
	for (size_t i = 0; i < n; i++)
		if (shown(&p->x, x[i]) && shown(&p->y, y[i]))
			fprintf(f->out, "%.1f,%.1f ", pos(&p->x, x[i]), pos(&p->y, y[i]));
	fputs("\"/>\n", f->out);
}

/* ---- (a) align ---- */

static bool is_power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

static double row_spread(const struct align_result *r, size_t i)
{
	double se = r->rows[i].diff_se_ns > 0 ? r->rows[i].diff_se_ns : r->noise_ns;

	return 2 * (se > 0 ? se : 0);
}

static void align_points(struct fig *f, const struct panel *p,
			 const struct align_result *r, bool powers)
{
	double xs[ALIGN_MAX_ROWS] = { 0 }, ys[ALIGN_MAX_ROWS] = { 0 };
	const char *color = powers ? BLUE : ORANGE;
	size_t n = 0;

	for (size_t i = 0; i < r->nrows; i++) {
		const struct align_row *row = &r->rows[i];
		double px, d = (double)row->diff_ns, s = row_spread(r, i);

		if (is_power_of_two(row->align_bytes) != powers)
			continue;
		xs[n] = (double)row->align_bytes;
		ys[n++] = d;
		px = pos(&p->x, xs[n - 1]);
		if (s > 0) {
			line(f, px, pos(&p->y, d - s), px, pos(&p->y, d + s), color, "");
			line(f, px - 3, pos(&p->y, d - s), px + 3, pos(&p->y, d - s), color, "");
			line(f, px - 3, pos(&p->y, d + s), px + 3, pos(&p->y, d + s), color, "");
		}
	}
	polyline(f, p, xs, ys, n, color, powers ? NULL : "4 3");
	for (size_t i = 0; i < n; i++)
		draw_mark(f, powers ? MARK_DOT : MARK_SQUARE, pos(&p->x, xs[i]),
			  pos(&p->y, ys[i]), color);
}

/* Every power of two labelled, or every second, fourth...: a regular
 * stride that leaves room for the widest label ("512KiB"). */
static unsigned size_label_stride(const struct panel *p)
{
	double per_doubling = (pos(&p->x, 2 * p->x.lo) - pos(&p->x, p->x.lo));
	double need = 6 * SMALL * SVG_CHAR_WIDTH_EM + LABEL_GAP + 2;
	unsigned stride = 1;

	while (stride < 64 && stride * per_doubling < need)
		stride *= 2;
	return stride;
}

static void size_ticks(struct fig *f, const struct panel *p,
		       const struct align_result *r)
{
	double labelled[ALIGN_MAX_ROWS], marked[ALIGN_MAX_ROWS];
	unsigned stride = size_label_stride(p);
	size_t nl = 0, nm = 0;

	/* labels on a regular stride of powers of two; tick marks at every
	 * tested size, 3*2^n included */
	for (size_t i = 0; i < r->nrows; i++) {
		uint64_t b = r->rows[i].align_bytes;

		if (is_power_of_two(b) && __builtin_ctzll(b) % stride == 0)
			labelled[nl++] = (double)b;
		else
			marked[nm++] = (double)b;
	}
	x_ticks(f, p, labelled, nl, fmt_bytes);
	x_ticks(f, p, marked, nm, NULL);
}

static void verdict_text(char *buf, size_t len, const char *what, uint64_t bytes,
			 double confidence)
{
	char size[32];

	if (bytes)
		snprintf(buf, len, "%s %s (confidence %.2f)", what,
			 units_format_bytes(bytes, size, sizeof(size)), confidence);
	else
		snprintf(buf, len, "%s: undetermined", what);
}

static void align_panel(struct fig *f, const struct align_result *r)
{
	struct legend lg[6] = {
		{ MARK_DOT, BLUE, "2\xe2\x81\xbf sizes (powers of two)" },
		{ MARK_SQUARE, ORANGE, "3\xc2\xb7" "2\xe2\x81\xbf sizes" },
		{ MARK_NONE, GRAY, "bars: \xc2\xb1" "2 standard errors of the measured noise" },
		{ MARK_DASH, GREEN, "" },
		{ MARK_DASH, RED, "" },
	};
	double ys[2 * ALIGN_MAX_ROWS + 1], t[64];
	struct panel p;
	size_t n = 0, nt;
	char buf[96];

	verdict_text(lg[3].text, sizeof(lg[3].text), "page", r->page_size_bytes,
		     r->page_confidence);
	verdict_text(lg[4].text, sizeof(lg[4].text), "erase block", r->erase_size_bytes,
		     r->erase_confidence);
	/* no line is drawn for an undetermined size: no sample mark */
	lg[3].mark = r->page_size_bytes ? MARK_DASH : MARK_NONE;
	lg[4].mark = r->erase_size_bytes ? MARK_DASH : MARK_NONE;
	panel_begin(f, &p, "Alignment (align): the extra cost of a read across a boundary",
		    "read time across minus beside the boundary", lg, 5);
	ys[n++] = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		ys[n++] = (double)r->rows[i].diff_ns + row_spread(r, i);
		ys[n++] = (double)r->rows[i].diff_ns - row_spread(r, i);
	}
	p.y.scale = LINEAR;
	p.y.lo = p.y.hi = 0;
	for (size_t i = 0; i < n; i++) {
		p.y.lo = fmin(p.y.lo, ys[i]);
		p.y.hi = fmax(p.y.hi, ys[i]);
	}
	if (p.y.hi <= p.y.lo)
		p.y.hi = p.y.lo + 1000;
	nt = nice_ticks(&p.y, t, 64);
	p.x.scale = LOG;
	p.x.lo = r->nrows ? (double)r->rows[0].align_bytes / 1.25 : 512;
	p.x.hi = r->nrows ? (double)r->rows[r->nrows - 1].align_bytes * 1.25 : 4096;
	y_ticks(f, &p, t, nt, fmt_time);
	line(f, p.left, pos(&p.y, 0), p.right, pos(&p.y, 0), "#999", "");
	size_ticks(f, &p, r);
	if (r->page_size_bytes) {
		snprintf(buf, sizeof(buf), "page %s",
			 units_format_bytes(r->page_size_bytes, buf + 64, 32));
		verdict_line(f, &p, (double)r->page_size_bytes, GREEN, "5 3", buf);
	}
	if (r->erase_size_bytes) {
		snprintf(buf, sizeof(buf), "erase block %s",
			 units_format_bytes(r->erase_size_bytes, buf + 64, 32));
		verdict_line(f, &p, (double)r->erase_size_bytes, RED, "5 3", buf);
	}
	align_points(f, &p, r, true);
	align_points(f, &p, r, false);
	panel_end(f, &p, "boundary size (log scale; every tested size has a tick)");
}

/* ---- (b) open-au ---- */

/* Trials of one order at the verdict chunk, in the order they ran. */
static size_t openau_series(const struct openau_result *r, enum openau_order o,
			    const struct openau_trial **out)
{
	size_t n = 0;

	for (size_t i = 0; i < r->ntrials; i++)
		if (r->trials[i].order == o && r->trials[i].write_ns > 0 &&
		    (r->manual || !r->chunk_bytes ||
		     r->trials[i].chunk_bytes == r->chunk_bytes))
			out[n++] = &r->trials[i];
	return n;
}

static int cmp_trial_n(const void *a, const void *b)
{
	const struct openau_trial *x = *(const struct openau_trial *const *)a;
	const struct openau_trial *y = *(const struct openau_trial *const *)b;

	return (x->n > y->n) - (x->n < y->n);
}

static double trial_x(const struct openau_result *r, const struct openau_trial *t)
{
	return r->manual ? (double)t->chunk_bytes : (double)t->n;
}

static double trial_y(const struct openau_result *r, const struct openau_trial *t)
{
	return r->manual ? t->bytes_per_sec : (double)t->write_ns;
}

static enum mark trial_mark(const struct openau_trial *t)
{
	return t->verdict == OPENAU_TRIAL_COLLAPSED ? MARK_HOLLOW : MARK_DOT;
}

/* Where a count's collapse lies: between n and the next n tried. */
static double collapse_at(const struct openau_result *r, enum openau_order o,
			  unsigned n)
{
	unsigned next = 0;

	for (size_t i = 0; i < r->ntrials; i++)
		if (r->trials[i].order == o && r->trials[i].n > n &&
		    (!next || r->trials[i].n < next))
			next = r->trials[i].n;
	if (n == 0)
		return next ? next / 1.2 : 0.8;
	return next ? sqrt((double)n * next) : n * 1.2;
}

static void count_text(char *buf, size_t len, const char *order,
		       const struct openau_count *c)
{
	switch (c->bound) {
	case OPENAU_EXACT:
		snprintf(buf, len, "%s: %u open", order, c->n);
		break;
	case OPENAU_AT_LEAST:
		snprintf(buf, len, "%s: at least %u open (no collapse)", order, c->n);
		break;
	case OPENAU_UNDETERMINED:
		snprintf(buf, len, "%s: undetermined", order);
		break;
	case OPENAU_NOT_TESTED:
		snprintf(buf, len, "%s: not tested", order);
		break;
	}
}

static void openau_draw_series(struct fig *f, const struct panel *p,
			       const struct openau_result *r, enum openau_order o)
{
	const struct openau_trial *s[OPENAU_MAX_TRIALS];
	double xs[OPENAU_MAX_TRIALS] = { 0 }, ys[OPENAU_MAX_TRIALS] = { 0 };
	const char *color = o == OPENAU_LINEAR ? BLUE : ORANGE;
	size_t n = openau_series(r, o, s);

	qsort(s, n, sizeof(*s), cmp_trial_n);
	for (size_t i = 0; i < n; i++) {
		xs[i] = trial_x(r, s[i]);
		ys[i] = trial_y(r, s[i]);
	}
	polyline(f, p, xs, ys, n, color, o == OPENAU_LINEAR ? NULL : "4 3");
	for (size_t i = 0; i < n; i++)
		draw_mark(f, r->manual ? MARK_DOT : trial_mark(s[i]), pos(&p->x, xs[i]),
			  pos(&p->y, ys[i]), color);
}

static void openau_marks(struct fig *f, const struct panel *p,
			 const struct openau_result *r)
{
	char buf[96];

	const struct openau_count *c[2] = { &r->linear, &r->random };

	for (int o = OPENAU_LINEAR; o <= OPENAU_RANDOM; o++) {
		if (c[o]->bound != OPENAU_EXACT)
			continue;
		if (c[o]->n)
			snprintf(buf, sizeof(buf), "%s: %u stay open, more collapse",
				 openau_order_name(o), c[o]->n);
		else
			snprintf(buf, sizeof(buf), "%s: even one AU collapses",
				 openau_order_name(o));
		verdict_line(f, p, collapse_at(r, o, c[o]->n), o ? ORANGE : BLUE,
			     o ? "2 3" : "5 3", buf);
	}
}

static void openau_panel(struct fig *f, const struct openau_result *r)
{
	struct legend lg[6] = {
		{ MARK_LINE, BLUE, "" }, { MARK_DASH, ORANGE, "" },
		{ MARK_DOT, GRAY, "every AU stayed open" },
		{ MARK_HOLLOW, GRAY, "collapsed (an AU was closed)" },
	};
	double xs[OPENAU_MAX_TRIALS], ys[OPENAU_MAX_TRIALS], t[64], xt[OPENAU_MAX_TRIALS];
	char title[128], size[32];
	struct panel p;
	size_t n = 0, nt, nx = 0;

	const struct openau_trial *s[OPENAU_MAX_TRIALS];

	count_text(lg[0].text, sizeof(lg[0].text), "linear", &r->linear);
	count_text(lg[1].text, sizeof(lg[1].text), "random", &r->random);
	if (r->manual) {
		/* one order per manual run */
		bool random = openau_series(r, OPENAU_RANDOM, s) > 0;

		lg[0] = (struct legend){ random ? MARK_DASH : MARK_LINE,
					 random ? ORANGE : BLUE, "" };
		snprintf(lg[0].text, sizeof(lg[0].text), "%s order",
			 random ? "random" : "linear");
	}
	if (r->manual)
		snprintf(title, sizeof(title), "Open AUs (open-au): flashbench's run "
			 "with %u AUs of %s", r->ntrials ? r->trials[0].n : 0,
			 units_format_bytes(r->erase_size_bytes, size, sizeof(size)));
	else
		snprintf(title, sizeof(title), "Open AUs (open-au): writing %s chunks "
			 "to N AUs in turn",
			 units_format_bytes(r->chunk_bytes, size, sizeof(size)));
	panel_begin(f, &p, title, r->manual ? "write throughput" :
		    "time of one chunk write (median)", lg, r->manual ? 1 : 4);
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct openau_trial *tr_ = &r->trials[i];
		bool dup = false;

		if (!r->manual && r->chunk_bytes && tr_->chunk_bytes != r->chunk_bytes)
			continue;
		xs[n] = trial_x(r, tr_);
		ys[n++] = trial_y(r, tr_);
		for (size_t j = 0; j < nx; j++)
			dup |= xt[j] == xs[n - 1];
		if (!dup)
			xt[nx++] = xs[n - 1];
	}
	log_range(&p.y, ys, n);
	p.y.lo /= 1.15;
	p.y.hi *= 1.15;
	nt = nice_ticks(&p.y, t, 64);
	log_range(&p.x, xs, n);
	p.x.lo /= 1.3;
	p.x.hi *= 1.3;
	y_ticks(f, &p, t, nt, r->manual ? fmt_rate : fmt_time);
	x_ticks(f, &p, xt, nx, r->manual ? fmt_bytes : fmt_count);
	if (!r->manual)
		openau_marks(f, &p, r);
	openau_draw_series(f, &p, r, OPENAU_LINEAR);
	openau_draw_series(f, &p, r, OPENAU_RANDOM);
	panel_end(f, &p, r->manual ? "chunk size (log scale)" :
		  "number of AUs written in turn (log scale; every tried number has a tick)");
}

/* ---- (c) find-fat ---- */

/* Columns are the examined units, evenly spaced: the leading units and
 * the reference units far behind them then share one readable axis. */
static bool column_after_gap(const struct findfat_result *r, unsigned c)
{
	return c > 0 && r->col_unit[c] != r->col_unit[c - 1] + 1;
}

static bool unit_in_fat(const struct findfat_result *r, unsigned c)
{
	uint64_t at = (uint64_t)r->col_unit[c] * r->erase_size_bytes;

	return r->found && at >= r->start_bytes && at < r->start_bytes + r->size_bytes;
}

static void findfat_shade(struct fig *f, const struct panel *p,
			  const struct findfat_result *r)
{
	double x0 = 0, x1 = 0;
	bool any = false;

	for (unsigned c = 0; c < r->ncols; c++)
		if (unit_in_fat(r, c)) {
			x0 = any ? x0 : pos(&p->x, c - 0.5);
			x1 = pos(&p->x, c + 0.5);
			any = true;
		}
	if (!any)
		return;
	fprintf(f->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"#f6e08a\" fill-opacity=\"0.6\"/>\n", x0, p->top, x1 - x0,
		p->bottom - p->top);
}

/* Ticks at every column; the offsets of the first column, of each one
 * after skipped units and of the last are labelled first. */
static void findfat_ticks(struct fig *f, const struct panel *p,
			  const struct findfat_result *r)
{
	char buf[32];

	for (int pass = 0; pass < 2; pass++)
		for (unsigned c = 0; c < r->ncols; c++) {
			bool key = c == 0 || c + 1 == r->ncols || column_after_gap(r, c);
			double px = pos(&p->x, c);

			if (key != (pass == 0))
				continue;
			line(f, px, p->bottom, px, p->bottom + 4, "#444", "");
			fmt_bytes((double)r->col_unit[c] * (double)r->erase_size_bytes, buf,
				  sizeof(buf));
			try_text(f, px, p->bottom + 16, "middle", SMALL, "#222", buf);
		}
	for (unsigned c = 1; c < r->ncols; c++)
		if (column_after_gap(r, c))
			line(f, pos(&p->x, c - 0.5), p->top, pos(&p->x, c - 0.5), p->bottom,
			     GRAY, " stroke-dasharray=\"1 3\"");
}

static void findfat_row_label(char *buf, size_t len, const struct findfat_row *row)
{
	char size[32];

	snprintf(buf, len, "%s %s", units_format_bytes(row->chunk_bytes, size, sizeof(size)),
		 row->random ? "random" : "linear");
}

static size_t findfat_legend(const struct findfat_result *r, struct legend *lg)
{
	char from[32], to[32];
	size_t n = 0;
	bool gaps = false;

	for (size_t i = 0; i < r->nrows; i++, n++) {
		lg[n].mark = MARK_LINE;
		lg[n].color = palette[i % NPALETTE];
		findfat_row_label(lg[n].text, sizeof(lg[n].text), &r->rows[i]);
	}
	lg[n].mark = r->found ? MARK_SHADE : MARK_NONE;
	lg[n].color = "#f6e08a";
	if (r->found)
		snprintf(lg[n].text, sizeof(lg[n].text), "FAT area %s to %s (confidence %.2f)",
			 units_format_bytes(r->start_bytes, from, sizeof(from)),
			 units_format_bytes(r->start_bytes + r->size_bytes, to, sizeof(to)),
			 r->confidence);
	else
		snprintf(lg[n].text, sizeof(lg[n].text), r->mode == FINDFAT_MANUAL ?
			 "manual run: no verdict" : "no FAT area found");
	n++;
	for (unsigned c = 1; c < r->ncols; c++)
		gaps |= column_after_gap(r, c);
	if (gaps) {
		lg[n].mark = MARK_DASH;
		lg[n].color = GRAY;
		snprintf(lg[n++].text, sizeof(lg[0].text), "units not examined in between");
	}
	return n;
}

static void findfat_panel(struct fig *f, const struct findfat_result *r)
{
	struct legend lg[FINDFAT_MAX_ROWS + 2];
	double xs[FINDFAT_MAX_UNITS], ys[FINDFAT_MAX_ROWS * FINDFAT_MAX_UNITS], t[64];
	char title[128], xtitle[128], esz[32];
	size_t nlg = findfat_legend(r, lg), n = 0, nt;

	struct panel p;

	for (size_t i = 0; i < r->nrows; i++)
		for (unsigned c = 0; c < r->ncols; c++)
			ys[n++] = r->rows[i].bytes_per_sec[c];
	units_format_bytes(r->erase_size_bytes, esz, sizeof(esz));
	snprintf(title, sizeof(title), "FAT area (find-fat): write throughput of "
		 "each leading %s unit", esz);
	panel_begin(f, &p, title, "write throughput", lg, nlg);
	log_range(&p.y, ys, n);
	p.y.lo /= 1.15;
	p.y.hi *= 1.15;
	nt = nice_ticks(&p.y, t, 64);
	p.x.scale = LINEAR;
	p.x.lo = -0.5;
	p.x.hi = r->ncols ? r->ncols - 0.5 : 0.5;
	y_ticks(f, &p, t, nt, fmt_rate);
	findfat_shade(f, &p, r);
	findfat_ticks(f, &p, r);
	for (unsigned c = 0; c < r->ncols; c++)
		xs[c] = c;
	for (size_t i = 0; i < r->nrows; i++) {
		const char *color = palette[i % NPALETTE];

		/* a line joins neighbouring units only */
		for (unsigned c = 0, run = 0; c < r->ncols; c++)
			if (c + 1 == r->ncols || column_after_gap(r, c + 1)) {
				polyline(f, &p, xs + run, r->rows[i].bytes_per_sec + run,
					 c + 1 - run, color, NULL);
				run = c + 1;
			}
		for (unsigned c = 0; c < r->ncols; c++)
			if (r->rows[i].bytes_per_sec[c] > 0)
				draw_mark(f, MARK_DOT, pos(&p.x, c),
					  pos(&p.y, r->rows[i].bytes_per_sec[c]), color);
	}
	snprintf(xtitle, sizeof(xtitle), "start of the unit (one column per %s unit "
		 "examined)", esz);
	panel_end(f, &p, xtitle);
}

/* ---- (d) bench ---- */

static const struct {
	const char *name;
	const char *color;
} percentiles[] = {
	{ "p50", "#9ecae1" }, { "p95", "#4292c6" }, { "p99", "#2171b5" },
	{ "p99.9", "#08519c" }, { "max", "#b03a2e" },
};
#define NPCT (sizeof(percentiles) / sizeof(percentiles[0]))

static void lat_values(const struct benchio_lat_ns *l, double *v)
{
	v[0] = (double)l->p50;
	v[1] = (double)l->p95;
	v[2] = (double)l->p99;
	v[3] = (double)l->p999;
	v[4] = (double)l->max;
}

static void bench_panel(struct fig *f, const struct benchio_result *r)
{
	const struct benchio_workload_result *w[BENCHIO_NWORKLOADS];
	struct legend lg[NPCT];
	double ys[BENCHIO_NWORKLOADS * NPCT], t[64], gw;
	struct panel p;
	size_t nw = 0, nt;

	for (size_t i = 0; i < NPCT; i++) {
		lg[i].mark = MARK_BAR;
		lg[i].color = percentiles[i].color;
		snprintf(lg[i].text, sizeof(lg[i].text), "%s", percentiles[i].name);
	}
	for (unsigned i = 0; i < BENCHIO_NWORKLOADS; i++)
		if (!r->w[i].skipped && r->w[i].nrepeats > 0) {
			lat_values(&r->w[i].lat_ns, ys + nw * NPCT);
			w[nw++] = &r->w[i];
		}
	panel_begin(f, &p, "Latency (bench): percentiles of one request, median "
		    "over the repeats", "request latency (log scale)", lg, NPCT);
	log_range(&p.y, ys, nw * NPCT);
	p.y.lo /= 2;	/* the shortest bar stays visible */
	p.y.hi *= 1.1;
	nt = nice_ticks(&p.y, t, 64);
	p.x.scale = LINEAR;
	p.x.lo = 0;
	p.x.hi = nw ? (double)nw : 1;
	y_ticks(f, &p, t, nt, fmt_time);
	gw = (p.right - p.left) / (nw ? (double)nw : 1);
	for (size_t i = 0; i < nw; i++) {
		double x0 = p.left + gw * (double)i + gw * 0.2, bw = gw * 0.6 / NPCT;
		char label[64], size[32];

		for (size_t k = 0; k < NPCT; k++) {
			double y = ys[i * NPCT + k] > 0 ? pos(&p.y, ys[i * NPCT + k]) : p.bottom;

			fprintf(f->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\" fill=\"%s\"/>\n", x0 + bw * (double)k, y,
				bw * 0.9, p.bottom - y, percentiles[k].color);
		}
		snprintf(label, sizeof(label), "%s, %s requests", w[i]->name,
			 units_format_bytes(w[i]->block_bytes, size, sizeof(size)));
		if (!try_text(f, p.left + gw * ((double)i + 0.5), p.bottom + 16, "middle",
			      SMALL, "#222", label))
			try_text(f, p.left + gw * ((double)i + 0.5), p.bottom + 16, "middle",
				 SMALL, "#222", w[i]->name);
	}
	panel_end(f, &p, "workload");
}

/* ---- the document ---- */

/* The figure title, shortened to fit the width. */
static void figure_title(struct fig *f, const char *title)
{
	char buf[160];
	size_t max = (size_t)((FIG_W - 24) / (14 * SVG_CHAR_WIDTH_EM)) - 12;

	snprintf(buf, sizeof(buf), "flashprobe: %s", title);
	if (utf8_chars(buf) > max) {
		size_t cut = max;

		while (cut > 0 && ((unsigned char)buf[cut] & 0xc0) == 0x80)
			cut--;
		snprintf(buf + cut, sizeof(buf) - cut, "...");
	}
	try_text(f, 12, 24, "start", 14, "#000", buf);
	f->y = 34;
}

int svg_write(FILE *out, const struct svg_evidence *e)
{
	struct fig *f = calloc(1, sizeof(*f));
	char *body = NULL;
	size_t len = 0;
	int ret = 0;

	if (!f)
		return -ENOMEM;
	f->out = open_memstream(&body, &len);
	if (!f->out) {
		free(f);
		return -ENOMEM;
	}
	figure_title(f, e->title ? e->title : "flashprobe");
	if (e->align)
		align_panel(f, e->align);
	if (e->openau)
		openau_panel(f, e->openau);
	if (e->findfat)
		findfat_panel(f, e->findfat);
	if (e->bench)
		bench_panel(f, e->bench);
	if (fclose(f->out) != 0)
		ret = -ENOMEM;
	if (!ret) {
		int h = (int)ceil(f->y);

		fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
			"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
			"font-family=\"sans-serif\">\n<title>", FIG_W, h, FIG_W, h);
		put_escaped(out, e->title ? e->title : "flashprobe");
		fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", out);
		fwrite(body, 1, len, out);
		fputs("</svg>\n", out);
		ret = ferror(out) ? -EIO : 0;
	}
	free(body);
	free(f);
	return ret;
}
