/* report.c - text, JSON and flashbench-style output of analyzer results. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "advice.h"
#include "align.h"
#include "dev.h"
#include "devspec.h"
#include "json.h"
#include "report.h"
#include "sim.h"
#include "units.h"
#include "util.h"

void report_device_json(struct json_writer *w, struct fp_dev *d)
{
	const struct sim_profile *p = sim_profile_of(d);

	json_object_begin(w, "device");
	json_string(w, "path", fp_dev_path(d));
	json_uint(w, "size_bytes", fp_dev_size_bytes(d));
	json_uint(w, "sector_bytes", fp_dev_sector_bytes(d));
	json_string(w, "kind", fp_dev_kind_name(d));
	json_string(w, "simulated_card", p ? p->name : NULL);
	json_object_end(w);
}

/* ---- decided values ---- */

void report_json_value_end(struct json_writer *w, double confidence, const char *source)
{
	json_double(w, "confidence", confidence);	/* NAN: null */
	json_string(w, "source", source);
	json_object_end(w);
}

void report_json_size(struct json_writer *w, const char *key, uint64_t value,
		      double confidence, const char *source)
{
	json_object_begin(w, key);
	json_uint(w, "value", value);
	report_json_value_end(w, confidence, source);
}

void report_json_verdict(struct json_writer *w, const char *key, const char *value,
			 double confidence, const char *source)
{
	json_object_begin(w, key);
	json_string(w, "value", value);
	report_json_value_end(w, confidence, source);
}

void report_json_count(struct json_writer *w, const char *key, int64_t value,
		       bool at_least, double confidence, const char *source)
{
	json_object_begin(w, key);
	json_int(w, "value", value);
	json_string(w, "bound", at_least ? "at_least" : "exact");
	report_json_value_end(w, confidence, source);
}

/* A value given on the command line carries no confidence. */
static double confidence_of(double confidence, enum geo_source source)
{
	return source == GEO_GIVEN ? NAN : confidence;
}

void report_json_geo_size(struct json_writer *w, const char *key,
			  const struct geo_size *s)
{
	if (!s->bytes || s->source == GEO_NONE)
		json_null(w, key);
	else
		report_json_size(w, key, s->bytes, confidence_of(s->confidence, s->source),
				 geo_source_name(s->source));
}

void report_json_geo_count(struct json_writer *w, const char *key,
			   const struct geo_count *c)
{
	if (c->value < 0 || c->source == GEO_NONE)
		json_null(w, key);
	else
		report_json_count(w, key, c->value, c->at_least,
				  confidence_of(c->confidence, c->source),
				  geo_source_name(c->source));
}

void report_json_skip(struct json_writer *w, const char *test, const char *reason)
{
	json_object_begin(w, NULL);
	json_string(w, "test", test);
	json_string(w, "reason", reason);
	json_object_end(w);
}

/* ---- the built-in simulated cards ---- */

static const char *sim_fake_name(enum sim_fake fake)
{
	return fake == SIM_FAKE_WRAP ? "wrap" : fake == SIM_FAKE_LIMBO ? "limbo" :
	       fake == SIM_FAKE_ALLOC ? "alloc" : "genuine";
}

static void sim_json(struct json_writer *w, const struct sim_profile *p)
{
	bool fake = p->fake != SIM_FAKE_NONE;

	json_object_begin(w, NULL);
	json_string(w, "name", p->name);
	json_string(w, "description", p->description);
	json_uint(w, "size_bytes", p->size_bytes);
	json_uint(w, "sector_bytes", p->sector_bytes);
	json_uint_or_null(w, "page_size_bytes", p->page_bytes);
	json_uint(w, "erase_size_bytes", p->erase_bytes);
	json_uint(w, "open_au_linear", p->open_au_linear);
	json_uint(w, "open_au_random", p->open_au_random);
	if (p->fat_bytes) {
		json_uint(w, "fat_area_start_bytes", p->fat_start_bytes);
		json_uint(w, "fat_area_size_bytes", p->fat_bytes);
	} else {
		json_null(w, "fat_area_start_bytes");
		json_uint(w, "fat_area_size_bytes", 0);
	}
	json_bool(w, "ambiguous", p->ambiguous);
	json_string(w, "capacity", sim_fake_name(p->fake));
	json_uint(w, "real_bytes", fake ? p->real_bytes : p->size_bytes);
	json_uint_or_null(w, "alias_period_bytes",
			  p->fake == SIM_FAKE_WRAP ? sim_wrap_period(p) : 0);
	json_uint(w, "cache_bytes", p->cache_bytes);
	json_object_end(w);
}

void report_sims_json(struct json_writer *w, const struct sim_profile *profiles)
{
	json_array_begin(w, "sims");
	for (const struct sim_profile *p = profiles; p->name[0]; p++)
		sim_json(w, p);
	json_array_end(w);
}

void report_device_text(FILE *out, struct fp_dev *d)
{
	char size[32];
	const char *what = devspec_dev_is_sim(d) ? "simulated card" :
			   fp_dev_kind(d) == FP_DEV_BLOCK ? "block device" :
			   "regular file";

	util_fputs_visible(fp_dev_path(d), out);
	fprintf(out, ": %s, %s (%" PRIu64 " bytes, %u-byte sectors)\n", what,
		units_format_bytes(fp_dev_size_bytes(d), size, sizeof(size)),
		fp_dev_size_bytes(d), fp_dev_sector_bytes(d));
}

static void print_size_verdict(FILE *out, const char *label, uint64_t bytes,
			       double confidence)
{
	char buf[32];

	if (bytes)
		fprintf(out, "%-12s %s (confidence %.2f)\n", label,
			units_format_bytes(bytes, buf, sizeof(buf)), confidence);
	else
		fprintf(out, "%-12s undetermined\n", label);
}

void report_align_flashbench(FILE *out, const struct align_result *r)
{
	for (size_t i = r->nrows; i-- > 0;) {
		const struct align_row *row = &r->rows[i];
		char pre[32], on[32], post[32], diff[32];

		fprintf(out, "align %" PRIu64 "\tpre %s\ton %s\tpost %s\tdiff %s\n",
			row->align_bytes,
			units_format_ns(row->pre_ns, pre, sizeof(pre)),
			units_format_ns(row->on_ns, on, sizeof(on)),
			units_format_ns(row->post_ns, post, sizeof(post)),
			units_format_ns(row->diff_ns, diff, sizeof(diff)));
	}
}

void report_align_text(FILE *out, const struct align_result *r)
{
	char a[32], b[32], c[32], d[32];

	print_size_verdict(out, "erase block:", r->erase_size_bytes,
			   r->erase_confidence);
	print_size_verdict(out, "page:", r->page_size_bytes, r->page_confidence);
	if (!r->pattern_found && r->budget_stopped)
		fprintf(out, "no pattern found: no boundary cost more than another in %"
			PRIu64 " reads (a step smaller than the noise may be hidden)\n",
			r->io_count);
	else if (!r->pattern_found)
		fprintf(out, "no pattern found: no boundary costs measurably more than another\n");
	else if (r->note[0])
		fprintf(out, "note: %s\n", r->note);
	if (r->nlevels) {
		fprintf(out, "boundary levels:");
		for (size_t i = 0; i < r->nlevels; i++)
			fprintf(out, "%s %s (%s, %s)", i ? "," : "",
				units_format_bytes(r->levels[i], a, sizeof(a)),
				align_level_role_name(r->level_roles[i]),
				units_format_ns(r->level_diff_ns[i], b, sizeof(b)));
		fprintf(out, "\n");
	}
	if (r->quick)
		fprintf(out, "quick: steps under about 2.3%% (page) or 4.5%% (erase block) "
			"of the read cost may have gone unseen; confidences at most 0.80\n");
	if (r->budget_stopped && r->pattern_found)
		fprintf(out, "the read budget ended the run before the answer settled "
			"(--count or a less noisy host may settle it); confidences at most 0.70\n");
	fprintf(out, "reads of %s take %s; noise per row %s; %" PRIu64
		" reads, %s of device time\n\n",
		units_format_bytes(r->blocksize_bytes, a, sizeof(a)),
		units_format_ns(r->base_read_ns, b, sizeof(b)),
		units_format_ns((int64_t)r->noise_ns, c, sizeof(c)),
		r->io_count, units_format_ns((int64_t)r->elapsed_ns, d, sizeof(d)));
	report_align_flashbench(out, r);
}

/* An analyzer's own finding: measured, null when it found nothing. */
static void json_size_or_null(struct json_writer *w, const char *key, uint64_t bytes,
			      double confidence)
{
	if (bytes)
		report_json_size(w, key, bytes, confidence, "measured");
	else
		json_null(w, key);
}

void report_align_json(struct json_writer *w, const struct align_result *r)
{
	json_object_begin(w, "align");
	json_size_or_null(w, "page_size_bytes", r->page_size_bytes, r->page_confidence);
	json_size_or_null(w, "erase_size_bytes", r->erase_size_bytes, r->erase_confidence);
	json_bool(w, "pattern_found", r->pattern_found);
	json_text_or_null(w, "note", r->note);
	json_uint(w, "blocksize_bytes", r->blocksize_bytes);
	json_int(w, "base_read_ns", r->base_read_ns);
	json_double(w, "noise_ns", r->noise_ns);
	json_array_begin(w, "levels");
	for (size_t i = 0; i < r->nlevels; i++) {
		json_object_begin(w, NULL);
		json_uint(w, "size_bytes", r->levels[i]);
		json_int(w, "diff_ns", r->level_diff_ns[i]);
		json_string(w, "role", align_level_role_name(r->level_roles[i]));
		json_object_end(w);
	}
	json_array_end(w);
	json_array_begin(w, "rows");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct align_row *row = &r->rows[i];

		json_object_begin(w, NULL);
		json_uint(w, "align_bytes", row->align_bytes);
		json_int(w, "pre_ns", row->pre_ns);
		json_int(w, "on_ns", row->on_ns);
		json_int(w, "post_ns", row->post_ns);
		json_int(w, "diff_ns", row->diff_ns);
		json_double(w, "diff_se_ns", row->diff_se_ns);
		json_uint(w, "positions", row->positions);
		json_uint(w, "repeats", row->repeats);
		json_object_end(w);
	}
	json_array_end(w);
	json_uint(w, "io_count", r->io_count);
	json_uint(w, "elapsed_ns", r->elapsed_ns);
	json_bool(w, "quick", r->quick);
	json_bool(w, "budget_stopped", r->budget_stopped);
	json_object_end(w);
}
