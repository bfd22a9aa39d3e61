/* report_findfat.c - output of the FAT-area finder. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "findfat.h"
#include "json.h"
#include "report.h"
#include "report_findfat.h"
#include "units.h"

/* Below this the verdict is called undetermined. */
#define REPORT_FINDFAT_LOW_CONFIDENCE 0.5

static void print_verdict(FILE *out, const struct findfat_result *r)
{
	char size[64], start[64];
	uint64_t e = r->erase_size_bytes;

	if (r->found) {
		unsigned first = (unsigned)(r->start_bytes / e);
		unsigned last = (unsigned)((r->start_bytes + r->size_bytes) / e) - 1;
		char units[32];

		if (first == last)
			snprintf(units, sizeof(units), "unit %u", first);
		else
			snprintf(units, sizeof(units), "units %u-%u", first, last);
		units_format_bytes(r->size_bytes, size, sizeof(size));
		if (r->start_bytes == 0)
			fprintf(out, "FAT area: first %s", size);
		else
			fprintf(out, "FAT area: %s at %s", size,
				units_format_bytes(r->start_bytes, start, sizeof(start)));
		fprintf(out, " (%s), confidence %.2f%s\n", units, r->confidence,
			r->confidence < REPORT_FINDFAT_LOW_CONFIDENCE ? " (low)" : "");
	} else if (r->confidence >= REPORT_FINDFAT_LOW_CONFIDENCE) {
		fprintf(out, "no FAT area found, confidence %.2f\n", r->confidence);
	} else {
		fprintf(out, "FAT area undetermined: none found, confidence %.2f\n",
			r->confidence);
	}
}

static void print_evidence(FILE *out, const struct findfat_result *r)
{
	char a[32], b[32], c[32];

	if (r->note[0])
		fprintf(out, "note: %s\n", r->note);
	if (r->found)
		fprintf(out, "small random writes (%s) are %.2fx faster in the area; "
			"whole-unit writes %s\n",
			units_format_bytes(r->blocksize_bytes, a, sizeof(a)),
			r->contrast, r->large_agrees ?
			"step at the same boundary" : "do not show it");
	fprintf(out, "unit %s, noise %.1f%%, normal units %s on small random writes\n",
		units_format_bytes(r->erase_size_bytes, a, sizeof(a)),
		100.0 * r->noise, r->collapse_seen ? "collapse" : "do not collapse");
	fprintf(out, "wrote %s in %u units (area %s from 0), %s of device time\n",
		units_format_bytes(r->bytes_written, b, sizeof(b)), r->ncols,
		units_format_bytes(r->plan.end_bytes, a, sizeof(a)),
		units_format_ns((int64_t)r->elapsed_ns, c, sizeof(c)));
}

/* One row per chunk size, one rate per unit, in the given units. */
static void print_table(FILE *out, const struct findfat_result *r,
			char *(*rate)(double, char *, size_t))
{
	char buf[32];

	for (size_t i = 0; i < r->nrows; i++) {
		const struct findfat_row *row = &r->rows[i];

		fputs(units_format_bytes(row->chunk_bytes, buf, sizeof(buf)), out);
		for (unsigned u = 0; u < r->ncols; u++)
			fprintf(out, "\t%s", rate(row->bytes_per_sec[u], buf, sizeof(buf)));
		fputc('\n', out);
	}
}

/* flashbench's own decimal M/s, for its users' scripts. */
void report_findfat_flashbench(FILE *out, const struct findfat_result *r)
{
	print_table(out, r, units_format_rate);
}

void report_findfat_text(FILE *out, const struct findfat_result *r)
{
	char a[32], b[32];

	if (r->mode == FINDFAT_MANUAL) {
		fprintf(out, "flashbench --findfat table: %u units of %s, chunks "
			"%s down to %s, %s order (no verdict in manual mode)\n",
			r->ncols, units_format_bytes(r->erase_size_bytes, a, sizeof(a)),
			a, units_format_bytes(r->nrows ? r->rows[r->nrows - 1].chunk_bytes :
					      r->blocksize_bytes, b, sizeof(b)),
			r->nrows && r->rows[0].random ? "random" : "linear");
		fprintf(out, "wrote %s, %s of device time\n",
			units_format_bytes(r->bytes_written, a, sizeof(a)),
			units_format_ns((int64_t)r->elapsed_ns, b, sizeof(b)));
	} else {
		print_verdict(out, r);
		print_evidence(out, r);
	}
	fputc('\n', out);
	fputs("unit", out);
	for (unsigned u = 0; u < r->ncols; u++)
		fprintf(out, "\t%u", r->col_unit[u]);
	fputc('\n', out);
	print_table(out, r, units_format_rate_binary);	/* the sizes' units */
}

void report_findfat_json(struct json_writer *w, const struct findfat_result *r)
{
	json_object_begin(w, "fat_area");
	json_string(w, "mode", r->mode == FINDFAT_MANUAL ? "manual" : "auto");
	json_bool(w, "found", r->found);
	/* none found is a finding too: size 0, with its confidence */
	if (r->found)
		report_json_size(w, "start_bytes", r->start_bytes, r->confidence,
				 "measured");
	else
		json_null(w, "start_bytes");
	report_json_size(w, "size_bytes", r->found ? r->size_bytes : 0, r->confidence,
			 "measured");
	json_uint(w, "erase_size_bytes", r->erase_size_bytes);
	json_uint(w, "blocksize_bytes", r->blocksize_bytes);
	json_text_or_null(w, "note", r->note);
	json_double(w, "contrast", r->contrast);
	json_double(w, "noise", r->noise);
	json_bool(w, "collapse_seen", r->collapse_seen);
	json_bool(w, "large_agrees", r->large_agrees);
	json_array_begin(w, "units");
	for (unsigned u = 0; u < r->ncols; u++)
		json_uint(w, NULL, r->col_unit[u]);
	json_array_end(w);
	json_array_begin(w, "rows");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct findfat_row *row = &r->rows[i];

		json_object_begin(w, NULL);
		json_uint(w, "chunk_bytes", row->chunk_bytes);
		json_string(w, "order", row->random ? "random" : "linear");
		json_uint(w, "writes_per_unit", row->writes_per_unit);
		json_array_begin(w, "bytes_per_sec");
		for (unsigned u = 0; u < r->ncols; u++)
			json_double(w, NULL, row->bytes_per_sec[u]);
		json_array_end(w);
		json_array_begin(w, "write_ns");
		for (unsigned u = 0; u < r->ncols; u++)
			json_double(w, NULL, row->write_ns[u]);
		json_array_end(w);
		json_object_end(w);
	}
	json_array_end(w);
	json_object_begin(w, "plan");
	json_uint(w, "start_bytes", r->plan.start_bytes);
	json_uint(w, "end_bytes", r->plan.end_bytes);
	json_uint(w, "max_write_bytes", r->plan.max_write_bytes);
	json_object_end(w);
	json_uint(w, "bytes_written", r->bytes_written);
	json_uint(w, "elapsed_ns", r->elapsed_ns);
	json_object_end(w);
}
