/* report_probe.c - the probe's report: conclusion and advice first, then
 * the identity and each analyzer's evidence. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dev.h"
#include "json.h"
#include "probe.h"
#include "report.h"
#include "report_advice.h"
#include "report_capacity.h"
#include "report_findfat.h"
#include "report_identity.h"
#include "report_openau.h"
#include "report_probe.h"
#include "units.h"

/* ---- text ---- */

static void row(FILE *out, const char *name, const char *value, double conf,
		enum geo_source src)
{
	char c[16] = "-";

	if (src != GEO_NONE && src != GEO_KERNEL_GUESS)
		snprintf(c, sizeof(c), "%.2f", conf);
	fprintf(out, "  %-16s %-22s %-10s %s\n", name, value, c, geo_source_name(src));
}

static void size_row(FILE *out, const char *name, const struct geo_size *s,
		     const char *unknown)
{
	char v[32];

	if (s->bytes)
		units_format_bytes(s->bytes, v, sizeof(v));
	else
		snprintf(v, sizeof(v), "%s", unknown);
	row(out, name, v, s->confidence, s->bytes ? s->source : GEO_NONE);
}

static void count_row(FILE *out, const char *name, const struct geo_count *c,
		      bool tested)
{
	char v[32];

	if (!tested)
		snprintf(v, sizeof(v), "not tested");
	else if (c->value < 0)
		snprintf(v, sizeof(v), "undetermined");
	else if (c->value == 0)
		snprintf(v, sizeof(v), "0 (linear only)");
	else
		snprintf(v, sizeof(v), "%s%d", c->at_least ? "at least " : "", c->value);
	row(out, name, v, c->confidence, c->value >= 0 ? c->source : GEO_NONE);
}

static void fat_row(FILE *out, const struct probe_result *r)
{
	const struct geometry *g = &r->geo;
	char v[64], a[32], b[32];

	if (!g->fat_tested)
		snprintf(v, sizeof(v), "not tested");
	else if (!g->fat_found)
		snprintf(v, sizeof(v), "none found");
	else if (g->fat_start_bytes == 0)
		snprintf(v, sizeof(v), "first %s",
			 units_format_bytes(g->fat_size_bytes, a, sizeof(a)));
	else
		snprintf(v, sizeof(v), "%s to %s",
			 units_format_bytes(g->fat_start_bytes, a, sizeof(a)),
			 units_format_bytes(g->fat_start_bytes + g->fat_size_bytes, b,
					    sizeof(b)));
	row(out, "FAT area", v, g->fat_confidence, g->fat_tested ? GEO_MEASURED : GEO_NONE);
}

/* The write-based AU search: its answer and every timed write. */
static void auwrite_text(FILE *out, const struct probe_result *r)
{
	const struct auwrite_result *a = &r->auwrite;
	char x[32], y[32];

	if (a->au_bytes)
		fprintf(out, "AU %s from writes (confidence %.2f)\n",
			units_format_bytes(a->au_bytes, x, sizeof(x)), a->confidence);
	else
		fprintf(out, "AU undetermined from writes: %s\n", a->note);
	fprintf(out, "area %s to %s, write without a gap %s\n",
		units_format_bytes(r->auwrite_plan.start_bytes, x, sizeof(x)),
		units_format_bytes(r->auwrite_plan.end_bytes, y, sizeof(y)),
		units_format_ns((int64_t)a->base_ns, (char[32]){ 0 }, 32));
	fprintf(out, "%10s %10s %10s %7s  %s\n", "offset", "gap", "time", "ratio", "judged");
	for (size_t i = 0; i < a->npoints; i++) {
		const struct auwrite_point *p = &a->points[i];

		if (p->cls == AUWRITE_PT_CALIBRATION)
			continue;
		fprintf(out, "%10s %10s %10s %7.2f  %s\n",
			units_format_bytes(p->offset_bytes, x, sizeof(x)),
			units_format_bytes(p->gap_bytes, y, sizeof(y)),
			units_format_ns((int64_t)p->write_ns, (char[32]){ 0 }, 32),
			p->ratio, auwrite_class_name(p->cls));
	}
	fprintf(out, "wrote %s in %s of device time\n",
		units_format_bytes(a->bytes_written, x, sizeof(x)),
		units_format_ns((int64_t)a->elapsed_ns, y, sizeof(y)));
}

/* The capacity finding leads: everything else is only as true as it. */
static void capacity_line(FILE *out, const struct probe_result *r)
{
	char h[320];

	if (r->capacity_done)
		fprintf(out, "  capacity  %s (confidence %.2f)\n",
			report_capacity_headline(&r->capacity, h, sizeof(h)),
			r->capacity.confidence);
	else
		fprintf(out, "  capacity  %s\n", r->capacity_note);
}

void report_probe_text(FILE *out, struct fp_dev *d, const struct probe_result *r)
{
	const struct geometry *g = &r->geo;
	char a[32], b[32];

	report_device_text(out, d);
	fprintf(out, "\nConclusion\n");
	if (r->card_failure[0])	/* first: it is why the rest is incomplete */
		fprintf(out, "  FAILING CARD: %s during the %s test; the findings below "
			"were made before it\n", r->card_failure, r->failed_test);
	capacity_line(out, r);
	fprintf(out, "  %-16s %-22s %-10s %s\n", "parameter", "value",
		"confidence", "source");
	size_row(out, "page", &g->page, "undetermined");
	size_row(out, "erase block", &g->erase, "undetermined");
	if (g->erase.source == GEO_MEASURED_WRITES && r->align.erase_size_bytes &&
	    r->align.erase_size_bytes != g->erase.bytes)
		size_row(out, "read step", &(struct geo_size){ r->align.erase_size_bytes,
			 r->align.erase_confidence, GEO_MEASURED }, "");
	size_row(out, "card AU", &g->card_au, "not reported");
	count_row(out, "open AUs linear", &g->open_linear, r->openau_done);
	count_row(out, "open AUs random", &g->open_random, r->openau_done);
	fat_row(out, r);
	if (r->conflict[0])
		fprintf(out, "  note: %s\n", r->conflict);
	if (r->decided_by[0])
		fprintf(out, "  erase size for the write tests decided by %s\n", r->decided_by);
	for (size_t i = 0; i < r->nskipped; i++)	/* a shared reason once */
		if (!i || strcmp(r->skipped[i].reason, r->skipped[i - 1].reason))
			fprintf(out, "  %s\n", r->skipped[i].reason);
	if (r->identity_read && report_identity_reader_note(&r->identity))
		fprintf(out, "  note: %s\n", report_identity_reader_note(&r->identity));
	if (r->capacity_done && capacity_is_bad(r->capacity.verdict)) {
		/* before the Advice, which stays inside the verified part */
		fprintf(out, "\nFake or damaged card\n");
		report_capacity_advice(out, &r->capacity, fp_dev_path(d),
				       r->advice_withheld ? CAPACITY_PARTITION_NONE :
				       r->advice.ncommands == 0 ? CAPACITY_PARTITION_LINE :
				       CAPACITY_PARTITION_BELOW, "  ");
	}
	report_advice_text(out, &r->advice, fp_dev_path(d));
	if (r->identity_read) {
		fprintf(out, "\nIdentity\n");
		sysinfo_text(out, &r->identity);
	}
	if (r->capacity_done) {
		fprintf(out, "\nCapacity\n");
		report_capacity_evidence(out, &r->capacity);
	}
	if (r->align_done) {
		fprintf(out, "\nAlignment (read-only)\n");
		report_align_text(out, &r->align);
	}
	if (r->auwrite_done) {
		fprintf(out, "\nAU search (writes)\n");
		auwrite_text(out, r);
	}
	if (r->openau_done) {
		fprintf(out, "\nOpen AUs\n");
		report_openau_text(out, &r->openau);
	}
	if (r->findfat_done) {
		fprintf(out, "\nFAT area\n");
		report_findfat_text(out, &r->fat);
	}
	fprintf(out, "\n%s written, %s of device time\n",
		units_format_bytes(r->bytes_written, a, sizeof(a)),
		units_format_ns((int64_t)r->elapsed_ns, b, sizeof(b)));
}

/* ---- JSON ---- */

/* The FAT area: its start and size, or none found (size 0), or null when
 * find-fat did not run. */
static void json_fat(struct json_writer *w, const struct geometry *g)
{
	if (g->fat_tested && g->fat_found)
		report_json_size(w, "fat_area_start_bytes", g->fat_start_bytes,
				 g->fat_confidence, "measured");
	else
		json_null(w, "fat_area_start_bytes");
	if (g->fat_tested)
		report_json_size(w, "fat_area_size_bytes",
				 g->fat_found ? g->fat_size_bytes : 0, g->fat_confidence,
				 "measured");
	else
		json_null(w, "fat_area_size_bytes");
}

/* The verdict of the capacity check; null when it did not run or could
 * not decide. */
static void json_capacity(struct json_writer *w, const struct probe_result *r)
{
	const struct geometry *g = &r->geo;

	if (r->capacity_done && r->capacity.verdict != CAPACITY_UNDETERMINED)
		report_json_verdict(w, "capacity_verdict", g->capacity_verdict,
				    g->capacity_confidence,
				    geo_source_name(g->capacity_source));
	else
		json_null(w, "capacity_verdict");
	/* a verified size may be 0 (no flash at all) */
	if (g->capacity_real.source != GEO_NONE)
		report_json_size(w, "capacity_real_bytes", g->capacity_real.bytes,
				 g->capacity_real.confidence,
				 geo_source_name(g->capacity_real.source));
	else
		json_null(w, "capacity_real_bytes");
}

static void json_geometry(struct json_writer *w, const struct probe_result *r)
{
	const struct geometry *g = &r->geo;

	json_object_begin(w, "geometry");
	report_json_geo_size(w, "page_size_bytes", &g->page);
	report_json_geo_size(w, "erase_size_bytes", &g->erase);
	report_json_geo_size(w, "card_au_bytes", &g->card_au);
	report_json_geo_count(w, "open_au_linear", &g->open_linear);
	report_json_geo_count(w, "open_au_random", &g->open_random);
	json_fat(w, g);
	json_capacity(w, r);
	json_object_end(w);
}

/* Each test that did not run and why: the capacity check (its note) and
 * the write tests the probe left out. */
static void json_skipped(struct json_writer *w, const struct probe_result *r)
{
	json_array_begin(w, "skipped");
	if (!r->capacity_done)
		report_json_skip(w, "capacity", r->capacity_note);
	for (size_t i = 0; i < r->nskipped; i++)
		report_json_skip(w, r->skipped[i].test, r->skipped[i].reason);
	json_array_end(w);
}

void report_probe_json(struct json_writer *w, struct fp_dev *d,
		       const struct probe_result *r)
{
	report_device_json(w, d);
	if (r->identity_read)
		sysinfo_json(w, &r->identity);
	else
		json_null(w, "identity");
	json_geometry(w, r);
	if (r->capacity_done)
		report_capacity_json(w, &r->capacity);
	else
		json_null(w, "capacity");
	if (r->align_done)
		report_align_json(w, &r->align);
	else
		json_null(w, "align");
	if (r->auwrite_done) {
		json_object_begin(w, "au_search");
		if (r->auwrite.au_bytes)
			report_json_size(w, "au_size_bytes", r->auwrite.au_bytes,
					 r->auwrite.confidence, "measured_writes");
		else
			json_null(w, "au_size_bytes");
		json_uint(w, "bytes_written", r->auwrite.bytes_written);
		json_uint(w, "elapsed_ns", r->auwrite.elapsed_ns);
		json_string(w, "note", r->auwrite.note[0] ? r->auwrite.note : NULL);
		json_object_end(w);
	} else {
		json_null(w, "au_search");
	}
	json_string(w, "erase_size_decided_by", r->decided_by[0] ? r->decided_by : NULL);
	if (r->openau_done)
		report_openau_json(w, &r->openau);
	else
		json_null(w, "open_au");
	if (r->findfat_done)
		report_findfat_json(w, &r->fat);
	else
		json_null(w, "fat_area");
	report_advice_json(w, &r->advice);
	json_skipped(w, r);
	json_text_or_null(w, "conflict", r->conflict);
	if (r->card_failure[0]) {
		json_object_begin(w, "card_failure");
		json_string(w, "test", r->failed_test);
		json_string(w, "error", r->card_failure);
		json_object_end(w);
	} else {
		json_null(w, "card_failure");
	}
	json_uint(w, "bytes_written", r->bytes_written);
	json_uint(w, "elapsed_ns", r->elapsed_ns);
}
