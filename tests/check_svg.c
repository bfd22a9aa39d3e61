/* check_svg.c - the chart is well-formed XML whose labels never overlap and
 * never leave the figure, for every built-in card (all four panels) and
 * for random geometries; and it renders (rsvg-convert, where installed).
 *
 * Label boxes are worked out here independently of svg.c: width = number
 * of characters x font size x LABEL_EM, from the baseline up by 0.8 and
 * down by 0.2 font sizes. */
#define _GNU_SOURCE		/* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchio.h"
#include "dev.h"
#include "probe.h"
#include "sim.h"
#include "stats.h"
#include "svg.h"
#include "testutil.h"
#include "tests.h"
#include "units.h"
#include "xmlcheck.h"

#define LABEL_EM 0.6

struct lbox {
	double x0, y0, x1, y1;
};

static struct lbox label_box(const struct xml_text *t)
{
	double w = (double)t->chars * t->font_size * LABEL_EM;
	double x0 = !strcmp(t->anchor, "middle") ? t->x - w / 2 :
		    !strcmp(t->anchor, "end") ? t->x - w : t->x;

	return (struct lbox){ x0, t->y - 0.8 * t->font_size, x0 + w,
			      t->y + 0.2 * t->font_size };
}

/* The first layout problem of a document, or NULL. */
static const char *layout_problem(const char *doc, struct xml_stats *st,
				  char *why, size_t len)
{
	if (!xml_check(doc, NULL, st))
		return "not well-formed XML";
	if (strcmp(st->root, "svg") || st->width <= 0 || st->height <= 0)
		return "not an <svg> root with a width and height";
	if (st->ntexts > XML_MAX_TEXTS)
		return "more labels than the checker keeps";
	for (size_t i = 0; i < st->ntexts; i++) {
		const struct xml_text *t = &st->texts[i];
		struct lbox a = label_box(t);

		if (t->font_size <= 0 || !t->anchor[0]) {
			snprintf(why, len, "'%s' has no font-size or text-anchor", t->s);
			return why;
		}
		if (a.x0 < 0 || a.y0 < 0 || a.x1 > st->width || a.y1 > st->height) {
			snprintf(why, len, "'%s' leaves the %gx%g figure", t->s,
				 st->width, st->height);
			return why;
		}
		for (size_t j = 0; j < i; j++) {
			struct lbox b = label_box(&st->texts[j]);

			if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) {
				snprintf(why, len, "'%s' overlaps '%s'", t->s,
					 st->texts[j].s);
				return why;
			}
		}
	}
	return NULL;
}

static char *render(const struct svg_evidence *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(svg_write(f, e), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

static bool has_label(const struct xml_stats *st, const char *text)
{
	for (size_t i = 0; i < st->ntexts && i < XML_MAX_TEXTS; i++)
		if (strstr(st->texts[i].s, text))
			return true;
	return false;
}

/* ---- every built-in card, every panel ---- */

static void run_bench(struct fp_dev *d, struct benchio_result *b)
{
	struct benchio_opts o;

	benchio_opts_default(&o);
	ck_assert_int_eq(benchio_plan_area(fp_dev_size_bytes(d), fp_dev_sector_bytes(d),
					   0, 0, &o.offset_bytes, &o.size_bytes), 0);
	o.allow_writes = true;
	o.constant_fill = true;
	o.repeats = 1;
	ck_assert_int_eq(tu_allow_area(d, "bench", o.offset_bytes,
				       o.offset_bytes + o.size_bytes, 0, false), 0);
	ck_assert_int_eq(benchio_run(d, &o, b), 0);
}

START_TEST(test_every_card)
{
	const struct sim_profile *p = &sim_profiles[_i];
	struct probe_result *r = calloc(1, sizeof(*r));
	struct benchio_result *b = calloc(1, sizeof(*b));
	struct xml_stats *st = malloc(sizeof(*st));
	struct probe_opts o = { .device = "sim:test", .sysfs_root = "/sys",
				.writes_allowed = true, .protect = tu_allow_area };
	char why[256], want[64], size[32], *doc;
	const char *problem;
	struct fp_dev *d;

	ck_assert(r && b && st);
	ck_assert_int_eq(sim_open(p, &d), 0);
	o.protect_arg = d;
	ck_assert_int_eq(probe_run(d, &o, r), 0);
	run_bench(d, b);
	doc = render(&(struct svg_evidence){ .title = p->name, .align = &r->align,
		.openau = r->openau_done ? &r->openau : NULL,
		.findfat = r->findfat_done ? &r->fat : NULL, .bench = b });
	problem = layout_problem(doc, st, why, sizeof(why));
	ck_assert_msg(!problem, "%s: %s", p->name, problem);
	/* the verdicts are marked */
	if (r->align.page_size_bytes) {
		snprintf(want, sizeof(want), "page %s",
			 units_format_bytes(r->align.page_size_bytes, size, sizeof(size)));
		ck_assert_msg(has_label(st, want), "%s: no '%s'", p->name, want);
	}
	if (r->align.erase_size_bytes) {
		snprintf(want, sizeof(want), "erase block %s",
			 units_format_bytes(r->align.erase_size_bytes, size, sizeof(size)));
		ck_assert_msg(has_label(st, want), "%s: no '%s'", p->name, want);
	}
	if (r->openau_done && r->openau.linear.bound == OPENAU_EXACT) {
		snprintf(want, sizeof(want), r->openau.linear.n ? "linear: %u stay open" :
			 "linear: even one", r->openau.linear.n);
		ck_assert_msg(has_label(st, want), "%s: no '%s'", p->name, want);
	}
	if (r->findfat_done && r->fat.found)
		ck_assert_msg(has_label(st, "FAT area"), "%s: FAT area not named", p->name);
	ck_assert_msg(has_label(st, "p99.9") && has_label(st, "rand_write"),
		      "%s: no bench panel", p->name);
	free(doc);
	fp_dev_close(d);
	free(st);
	free(b);
	free(r);
}
END_TEST

/* ---- random geometries ---- */

static double log_uniform(struct stats_rng *g, double lo, double hi)
{
	return lo * pow(hi / lo, (double)stats_rng_below(g, 1000001) / 1e6);
}

static void random_align(struct stats_rng *g, struct align_result *a)
{
	unsigned first = 9 + (unsigned)stats_rng_below(g, 8);

	memset(a, 0, sizeof(*a));
	a->nrows = 1 + stats_rng_below(g, ALIGN_MAX_ROWS);
	for (size_t i = 0; i < a->nrows; i++) {
		/* 2^n and 3 x 2^n alternately, as align tests them */
		unsigned e = first + (unsigned)(i / 2);

		a->rows[i].align_bytes = i % 2 ? 3ULL << (e - 1) : 1ULL << e;
		a->rows[i].diff_ns = (int64_t)stats_rng_below(g, 2000000) - 300000;
		a->rows[i].diff_se_ns = log_uniform(g, 1, 200000);
	}
	a->noise_ns = log_uniform(g, 1, 1e5);
	/* verdicts on neighbouring sizes test the label lanes */
	a->page_size_bytes = a->rows[stats_rng_below(g, a->nrows)].align_bytes;
	a->erase_size_bytes = stats_rng_below(g, 3) ? a->page_size_bytes * 2 : 0;
	a->page_confidence = 0.5;
	a->erase_confidence = 1;
}

static void random_openau(struct stats_rng *g, struct openau_result *o)
{
	memset(o, 0, sizeof(*o));
	o->manual = stats_rng_below(g, 4) == 0;
	o->chunk_bytes = 16384;
	o->erase_size_bytes = 4 << 20;
	o->ntrials = 1 + stats_rng_below(g, OPENAU_MAX_TRIALS);
	for (size_t i = 0; i < o->ntrials; i++) {
		struct openau_trial *t = &o->trials[i];

		t->n = o->manual ? 3 : 1 + (unsigned)stats_rng_below(g, OPENAU_MAX_OPEN_LIMIT);
		t->order = o->manual || stats_rng_below(g, 2) ? OPENAU_LINEAR : OPENAU_RANDOM;
		t->chunk_bytes = o->manual ? 4096ULL << stats_rng_below(g, 12) : o->chunk_bytes;
		t->write_ns = (uint64_t)log_uniform(g, 100, 1e10);
		t->bytes_per_sec = log_uniform(g, 1, 1e10);
		t->verdict = (enum openau_verdict)stats_rng_below(g, 4);
	}
	o->linear = (struct openau_count){ (unsigned)stats_rng_below(g, 300),
					   (enum openau_bound)stats_rng_below(g, 4), 0.9 };
	o->random = (struct openau_count){ (unsigned)stats_rng_below(g, 300),
					   (enum openau_bound)stats_rng_below(g, 4), 0.9 };
}

static void random_findfat(struct stats_rng *g, struct findfat_result *f)
{
	unsigned unit = 0;

	memset(f, 0, sizeof(*f));
	f->mode = stats_rng_below(g, 3) ? FINDFAT_AUTO : FINDFAT_MANUAL;
	f->erase_size_bytes = 1ULL << (17 + stats_rng_below(g, 10));
	f->ncols = 1 + (unsigned)stats_rng_below(g, FINDFAT_MAX_UNITS);
	f->nrows = 1 + stats_rng_below(g, FINDFAT_MAX_ROWS);
	for (unsigned c = 0; c < f->ncols; c++) {
		f->col_unit[c] = unit;
		unit += stats_rng_below(g, 6) ? 1 : 1 + (unsigned)stats_rng_below(g, 5000);
	}
	for (size_t i = 0; i < f->nrows; i++) {
		f->rows[i].chunk_bytes = 4096ULL << i;
		f->rows[i].random = stats_rng_below(g, 2);
		for (unsigned c = 0; c < f->ncols; c++)
			f->rows[i].bytes_per_sec[c] = log_uniform(g, 1e3, 1e9);
	}
	f->found = stats_rng_below(g, 2);
	f->start_bytes = 0;
	f->size_bytes = f->erase_size_bytes * (1 + stats_rng_below(g, 8));
	f->confidence = 0.75;
}

static void random_bench(struct stats_rng *g, struct benchio_result *b)
{
	static const char *const names[] = { "seq_read", "seq_write", "rand_read",
					     "rand_write" };

	memset(b, 0, sizeof(*b));
	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++) {
		struct benchio_lat_ns *l = &b->w[w].lat_ns;

		b->w[w].name = names[w % 4];
		b->w[w].block_bytes = w < 2 ? 1 << 20 : 4096;
		b->w[w].skipped = stats_rng_below(g, 4) == 0;
		b->w[w].nrepeats = 1;
		l->p50 = (uint64_t)log_uniform(g, 100, 1e9);
		l->p95 = l->p50 + (uint64_t)log_uniform(g, 1, 1e9);
		l->p99 = l->p95 + (uint64_t)log_uniform(g, 1, 1e9);
		l->p999 = l->p99 + (uint64_t)log_uniform(g, 1, 1e9);
		l->max = l->p999 + (uint64_t)log_uniform(g, 1, 1e10);
	}
}

START_TEST(test_random_geometry)
{
	struct align_result *a = malloc(sizeof(*a));
	struct openau_result *o = malloc(sizeof(*o));
	struct findfat_result *f = malloc(sizeof(*f));
	struct benchio_result *b = malloc(sizeof(*b));
	struct xml_stats *st = malloc(sizeof(*st));
	struct stats_rng g;
	char why[256], *doc;
	const char *problem;

	ck_assert(a && o && f && b && st);
	stats_rng_seed(&g, 1000 + (uint64_t)_i);
	random_align(&g, a);
	random_openau(&g, o);
	random_findfat(&g, f);
	random_bench(&g, b);
	doc = render(&(struct svg_evidence){
		.title = "/dev/disk/by-id/usb-Generic_STORAGE_DEVICE_000000000819-0:0 "
			 "with a name far too long for one line of the figure",
		.align = a, .openau = o, .findfat = f, .bench = b });
	problem = layout_problem(doc, st, why, sizeof(why));
	ck_assert_msg(!problem, "geometry %d: %s", _i, problem);
	free(doc);
	free(st);
	free(a);
	free(o);
	free(f);
	free(b);
}
END_TEST

/* The checker finds what it is there to find (else the tests above prove
 * nothing). */
START_TEST(test_checker_catches)
{
	static const char *const bad[] = {
		"<svg width=\"200\" height=\"100\"><text x=\"10\" y=\"20\" font-size=\"10\" "
		"text-anchor=\"start\">one label</text><text x=\"30\" y=\"24\" "
		"font-size=\"10\" text-anchor=\"start\">another</text></svg>",
		"<svg width=\"200\" height=\"100\"><text x=\"190\" y=\"20\" font-size=\"10\" "
		"text-anchor=\"start\">past the edge</text></svg>",
		"<svg width=\"200\" height=\"100\"><text x=\"100\" y=\"20\" font-size=\"10\" "
		"text-anchor=\"middle\">&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;"
		"&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;"
		"&lt;&lt;&lt;&lt;</text></svg>",
		"<svg width=\"200\" height=\"100\"><text x=\"10\" y=\"20\">no size</text></svg>",
	};
	struct xml_stats *st = malloc(sizeof(*st));
	char why[256];

	ck_assert_ptr_nonnull(st);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(layout_problem(bad[i], st, why, sizeof(why)),
			      "accepted %s", bad[i]);
	ck_assert_ptr_null(layout_problem("<svg width=\"200\" height=\"100\"><text x=\"10\" "
					  "y=\"20\" font-size=\"10\" text-anchor=\"start\">a"
					  "</text><text x=\"10\" y=\"40\" font-size=\"10\" "
					  "text-anchor=\"start\">b</text></svg>",
					  st, why, sizeof(why)));
	ck_assert_uint_eq(st->ntexts, 2);
	ck_assert_uint_eq(st->texts[1].chars, 1);
	free(st);
}
END_TEST

/* ---- rendered by a real SVG renderer ---- */

START_TEST(test_renders_to_png)
{
	char dir[] = "/var/tmp/flashprobe-svg.XXXXXX", svg[64], png[64], cmd[200];
	unsigned char magic[8] = { 0 };
	struct run_result r;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(svg, sizeof(svg), "%s/seed.svg", dir);
	snprintf(png, sizeof(png), "%s/seed.png", dir);
	tu_run(&r, (const char *const[]){ "probe", "-q", "--svg", svg, "sim:seed", NULL });
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	tu_run_free(&r);
	snprintf(cmd, sizeof(cmd), "rsvg-convert -o '%s' '%s'", png, svg);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(png, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(magic, 1, 8, f), 8);
	fclose(f);
	ck_assert_int_eq(memcmp(magic, "\x89PNG\r\n\x1a\n", 8), 0);
	tu_rm_tree(dir);
}
END_TEST

Suite *svg_suite(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("layout");

	tcase_set_timeout(tc, 120);
	tests_add_sweep(tc, test_every_card, tu_sim_profile_count());
	tcase_add_loop_test(tc, test_random_geometry, 0, 60);
	tcase_add_test(tc, test_checker_catches);
	if (system("command -v rsvg-convert >/dev/null 2>&1") == 0)
		tcase_add_test(tc, test_renders_to_png);
	else
		tu_skip("svg/rendered by rsvg-convert", "rsvg-convert not installed "
			"(librsvg2-bin; sudo make deps)");
	suite_add_tcase(s, tc);
	return s;
}
