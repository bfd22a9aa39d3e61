/* svg.c - a self-contained SVG chart of the probe's evidence.
 *
 * Left: the alignment diff against boundary size (log scale), with the
 * inferred page and erase block marked.  Right: open-AU throughput against
 * chunk size for every number of AUs tried.  Plain SVG 1.1, no scripts, no
 * external fonts or styles.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "align.h"
#include "openau.h"
#include "svg.h"
#include "units.h"

#define PANEL_W 460
#define PANEL_H 300
#define MARGIN_L 70
#define MARGIN_T 40
#define MARGIN_B 50
#define GAP 40

struct axis {
	double lo, hi;		/* data range (log2 for x, linear or log10 for y) */
	double px0, px1;	/* pixel range */
};

static double map(const struct axis *a, double v)
{
	if (a->hi <= a->lo)
		return (a->px0 + a->px1) / 2;
	return a->px0 + (v - a->lo) / (a->hi - a->lo) * (a->px1 - a->px0);
}

/* Text for XML: escape the five special characters. */
static void put_text(FILE *out, const char *s)
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

static void label(FILE *out, double x, double y, const char *anchor,
		  const char *text)
{
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
	put_text(out, text);
	fputs("</text>\n", out);
}

static void frame(FILE *out, double x0, const char *title, const char *xlabel,
		  const char *ylabel)
{
	fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"none\" stroke=\"#444\"/>\n", x0, MARGIN_T,
		PANEL_W - MARGIN_L, PANEL_H - MARGIN_T - MARGIN_B);
	label(out, x0 + (PANEL_W - MARGIN_L) / 2.0, MARGIN_T - 12, "middle", title);
	label(out, x0 + (PANEL_W - MARGIN_L) / 2.0, PANEL_H - 10, "middle", xlabel);
	fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 %.1f %d)\">", x0 - 52, PANEL_H / 2,
		x0 - 52, PANEL_H / 2);
	put_text(out, ylabel);
	fputs("</text>\n", out);
}

/* Size ticks on a log2 axis: every power of four, or of two when few. */
static void size_ticks(FILE *out, const struct axis *x, double y)
{
	char buf[32];

	int step = x->hi - x->lo > 6 ? 2 : 1;

	for (int e = (int)ceil(x->lo); e <= (int)floor(x->hi); e++) {
		if (e % step)
			continue;
		units_format_bytes(1ULL << e, buf, sizeof(buf));
		label(out, map(x, e), y + 16, "middle", buf);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#444\"/>\n", map(x, e), y, map(x, e), y + 4);
	}
}

static void marker(FILE *out, const struct axis *x, double y0, double y1,
		   uint64_t bytes, const char *what, const char *color)
{
	char buf[64], size[32];
	double px = map(x, log2((double)bytes));

	snprintf(buf, sizeof(buf), "%s %s", what,
		 units_format_bytes(bytes, size, sizeof(size)));
	fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"%s\" stroke-dasharray=\"4 3\"/>\n", px, y0, px, y1, color);
	label(out, px + 3, y0 + 12, "start", buf);
}

static bool is_power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

static void align_panel(FILE *out, const struct align_result *r)
{
	struct axis x = { 0, 1, MARGIN_L, PANEL_W }, y = { 0, 1, 0, 0 };
	double top = MARGIN_T, bottom = PANEL_H - MARGIN_B;
	char buf[32];

	y.px0 = bottom;
	y.px1 = top;
	frame(out, MARGIN_L, "read cost of crossing a boundary", "boundary size",
	      "diff (µs)");
	if (!r->nrows)
		return;
	x.lo = log2((double)r->rows[0].align_bytes);
	x.hi = log2((double)r->rows[r->nrows - 1].align_bytes);
	for (size_t i = 0; i < r->nrows; i++) {
		y.lo = fmin(y.lo, r->rows[i].diff_ns / 1e3);
		y.hi = fmax(y.hi, r->rows[i].diff_ns / 1e3);
	}
	y.hi = y.hi * 1.1 + 1e-3;
	size_ticks(out, &x, bottom);
	snprintf(buf, sizeof(buf), "%.0f", y.hi);
	label(out, MARGIN_L - 4, top + 4, "end", buf);
	label(out, MARGIN_L - 4, map(&y, 0) + 4, "end", "0");
	/* powers of two as a line; 3 * 2^n sizes as open circles, since they
	 * fall back to lower levels where they are not multiples of a unit */
	fputs("<polyline fill=\"none\" stroke=\"#1f5fa8\" points=\"", out);
	for (size_t i = 0; i < r->nrows; i++)
		if (is_power_of_two(r->rows[i].align_bytes))
			fprintf(out, "%.1f,%.1f ", map(&x, log2((double)r->rows[i].align_bytes)),
				map(&y, r->rows[i].diff_ns / 1e3));
	fputs("\"/>\n", out);
	for (size_t i = 0; i < r->nrows; i++)
		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" %s/>\n",
			map(&x, log2((double)r->rows[i].align_bytes)),
			map(&y, r->rows[i].diff_ns / 1e3),
			is_power_of_two(r->rows[i].align_bytes) ? "fill=\"#1f5fa8\""
				: "fill=\"white\" stroke=\"#1f5fa8\"");
	if (r->page_size_bytes)
		marker(out, &x, top, bottom, r->page_size_bytes, "page", "#2a8a3a");
	if (r->erase_size_bytes)
		marker(out, &x, top + 16, bottom, r->erase_size_bytes, "erase block",
		       "#b03a2e");
}

static const char *const series_colors[] = {
	"#1f5fa8", "#b03a2e", "#2a8a3a", "#8a5a1f", "#6a3d9a", "#1b9e9e", "#c71585",
};

/* One label per (N, order) series. */
static bool first_of_series(const struct openau_result *r, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (r->trials[j].n == r->trials[i].n &&
		    r->trials[j].order == r->trials[i].order)
			return false;
	return true;
}

/* Labels of series that land on the same point are stacked downwards. */
static double label_y(const struct openau_result *r, size_t i,
		      const struct axis *x, const struct axis *y)
{
	const struct openau_trial *t = &r->trials[i];
	double px = map(x, log2((double)t->chunk_bytes));
	double py = map(y, log10(fmax(t->bytes_per_sec, 1.0)));
	unsigned below = 0;

	for (size_t j = 0; j < i; j++) {
		const struct openau_trial *u = &r->trials[j];

		if (first_of_series(r, j) &&
		    fabs(map(x, log2((double)u->chunk_bytes)) - px) < 40 &&
		    fabs(map(y, log10(fmax(u->bytes_per_sec, 1.0))) - py) < 12)
			below++;
	}
	return py + 4 + 12.0 * below;
}

static void openau_panel(FILE *out, const struct openau_result *r, double x0)
{
	struct axis x = { 0, 1, x0, x0 + PANEL_W - MARGIN_L }, y = { 0, 1, 0, 0 };
	double top = MARGIN_T, bottom = PANEL_H - MARGIN_B;
	char buf[64];

	y.px0 = bottom;
	y.px1 = top;
	frame(out, x0, "open-AU write throughput", "chunk size", "MB/s (log)");
	if (!r->ntrials)
		return;
	x.lo = x.hi = log2((double)r->trials[0].chunk_bytes);
	y.lo = y.hi = log10(fmax(r->trials[0].bytes_per_sec, 1.0));
	for (size_t i = 0; i < r->ntrials; i++) {
		double cx = log2((double)r->trials[i].chunk_bytes);
		double cy = log10(fmax(r->trials[i].bytes_per_sec, 1.0));

		x.lo = fmin(x.lo, cx);
		x.hi = fmax(x.hi, cx);
		y.lo = fmin(y.lo, cy);
		y.hi = fmax(y.hi, cy);
	}
	x.lo -= 0.5;
	x.hi += 0.5;
	y.lo -= 0.2;
	y.hi += 0.2;
	size_ticks(out, &x, bottom);
	label(out, x0 - 4, top + 4, "end", units_format_rate(pow(10, y.hi), buf, sizeof(buf)));
	label(out, x0 - 4, bottom, "end", units_format_rate(pow(10, y.lo), buf, sizeof(buf)));
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct openau_trial *t = &r->trials[i];
		const char *color = series_colors[(t->n + (t->order == OPENAU_RANDOM ? 3 : 0)) %
						  (sizeof(series_colors) / sizeof(series_colors[0]))];
		double px = map(&x, log2((double)t->chunk_bytes));
		double py = map(&y, log10(fmax(t->bytes_per_sec, 1.0)));

		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
			px, py, color);
		if (!first_of_series(r, i))
			continue;
		snprintf(buf, sizeof(buf), "%u %s", t->n, openau_order_name(t->order));
		label(out, px + 6, label_y(r, i, &x, &y), "start", buf);
	}
}

int svg_write(FILE *out, const struct align_result *a,
	      const struct openau_result *o, const char *title)
{
	int width = o ? 2 * PANEL_W + GAP : PANEL_W + GAP;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n",
		width, PANEL_H + 30, width, PANEL_H + 30);
	fputs("<title>", out);
	put_text(out, title ? title : "flashprobe");
	fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", out);
	fputs("<g transform=\"translate(0 20)\">\n", out);
	if (a)
		align_panel(out, a);
	if (o)
		openau_panel(out, o, PANEL_W + GAP + MARGIN_L);
	fputs("</g>\n</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
