/* report.c - text, JSON and flashbench-style output of analyzer results. */
#include <inttypes.h>
#include <stdio.h>

#include "align.h"
#include "dev.h"
#include "devspec.h"
#include "json.h"
#include "report.h"
#include "sim.h"
#include "units.h"

void report_device_json(struct json_writer *w, struct fp_dev *d)
{
	const struct sim_profile *p = sim_profile_of(d);

	json_object_begin(w, "device");
	json_string(w, "path", fp_dev_path(d));
	json_uint(w, "size_bytes", fp_dev_size_bytes(d));
	json_uint(w, "sector_bytes", fp_dev_sector_bytes(d));
	json_string(w, "kind", fp_dev_kind_name(d));
	if (p)
		json_string(w, "simulated_card", p->name);
	json_object_end(w);
}

void report_device_text(FILE *out, struct fp_dev *d)
{
	char size[32];
	const char *what = devspec_dev_is_sim(d) ? "simulated card" :
			   fp_dev_kind(d) == FP_DEV_BLOCK ? "block device" :
			   "regular file";

	fprintf(out, "%s: %s, %s (%" PRIu64 " bytes, %u-byte sectors)\n",
		fp_dev_path(d), what,
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
	if (!r->pattern_found)
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
	fprintf(out, "reads of %s take %s; noise per row %s; %" PRIu64
		" reads, %s of device time\n\n",
		units_format_bytes(r->blocksize_bytes, a, sizeof(a)),
		units_format_ns(r->base_read_ns, b, sizeof(b)),
		units_format_ns((int64_t)r->noise_ns, c, sizeof(c)),
		r->io_count, units_format_ns((int64_t)r->elapsed_ns, d, sizeof(d)));
	report_align_flashbench(out, r);
}

void report_align_json(struct json_writer *w, const struct align_result *r)
{
	json_object_begin(w, "align");
	json_uint_or_null(w, "page_size_bytes", r->page_size_bytes);
	json_double(w, "page_confidence", r->page_confidence);
	json_uint_or_null(w, "erase_size_bytes", r->erase_size_bytes);
	json_double(w, "erase_confidence", r->erase_confidence);
	json_bool(w, "pattern_found", r->pattern_found);
	json_string(w, "note", r->note);
	json_uint(w, "blocksize_bytes", r->blocksize_bytes);
	json_int(w, "base_read_ns", r->base_read_ns);
	json_double(w, "noise_ns", r->noise_ns);
	json_array_begin(w, "levels_bytes");
	for (size_t i = 0; i < r->nlevels; i++)
		json_uint(w, NULL, r->levels[i]);
	json_array_end(w);
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
	json_object_end(w);
}
