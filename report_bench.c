/* report_bench.c - text and JSON output of the speed test. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "benchio.h"
#include "json.h"
#include "report.h"
#include "report_bench.h"
#include "units.h"

#define MIB 1048576.0

/* Columns of the latency part of the table, in this order. */
static const char *const lat_heads[] = {
	"mean", "p50", "p95", "p99", "p99.9", "max"
};
#define LAT_COLS (sizeof(lat_heads) / sizeof(lat_heads[0]))
#define LAT_WIDTH 9

/* Print s right-aligned in width terminal columns: UTF-8 continuation
 * bytes ("µs") take no column of their own. */
static void put_right(FILE *out, const char *s, int width)
{
	int cols = 0;

	for (const char *p = s; *p; p++)
		if (((unsigned char)*p & 0xc0) != 0x80)
			cols++;
	for (; cols < width; cols++)
		fputc(' ', out);
	fputs(s, out);
}

/* MiB/s with three or four significant digits, as seed 001 prints them
 * (153.6, 47.0, 1.76). */
static char *format_mibps(double bytes_per_sec, char *buf, size_t len)
{
	double v = bytes_per_sec / MIB;

	snprintf(buf, len, v >= 100 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f", v);
	return buf;
}

static char *format_iops(double iops, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f", iops);
	return buf;
}

static void lat_values(const struct benchio_lat_ns *l, uint64_t v[LAT_COLS])
{
	v[0] = l->mean;
	v[1] = l->p50;
	v[2] = l->p95;
	v[3] = l->p99;
	v[4] = l->p999;
	v[5] = l->max;
}

static void print_row(FILE *out, const struct benchio_workload_result *wr)
{
	char a[32], b[32], block[32];
	uint64_t v[LAT_COLS];

	fprintf(out, "%-11s", wr->name);
	put_right(out, units_format_bytes(wr->block_bytes, block, sizeof(block)), 6);
	if (wr->skipped || wr->nrepeats == 0) {
		fprintf(out, "  %s\n", wr->skipped ?
			(strcmp(wr->skip_reason, "read-only") == 0 ?
			 "skipped (read-only run: nothing is written)" :
			 "skipped (not selected)") :
			"not measured (interrupted)");
		return;
	}
	put_right(out, format_mibps(wr->bytes_per_sec, a, sizeof(a)), 9);
	put_right(out, format_iops(wr->iops, a, sizeof(a)), 11);
	lat_values(&wr->lat_ns, v);
	for (size_t i = 0; i < LAT_COLS; i++)
		put_right(out, units_format_ns((int64_t)v[i], a, sizeof(a)), LAT_WIDTH);
	if (wr->sequential)
		fprintf(out, "  %s-%s MiB/s",
			format_mibps(wr->bytes_per_sec_min, a, sizeof(a)),
			format_mibps(wr->bytes_per_sec_max, b, sizeof(b)));
	else
		fprintf(out, "  %s-%s IOPS",
			format_iops(wr->iops_min, a, sizeof(a)),
			format_iops(wr->iops_max, b, sizeof(b)));
	fprintf(out, "%s\n", wr->samples_capped ? " *" : "");
}

static void print_verdict(FILE *out, const struct benchio_result *r)
{
	const struct benchio_workload_result *rr = &r->w[BENCHIO_RAND_READ];
	const struct benchio_workload_result *rw = &r->w[BENCHIO_RAND_WRITE];
	char a[32], b[32], c[32], d[32];

	if (!r->verdict_valid) {
		fprintf(out, "random writes: not compared with random reads (%s)\n",
			rw->skipped && rw->skip_reason &&
			strcmp(rw->skip_reason, "read-only") == 0 ?
			"read-only run" : "both random workloads are needed");
		return;
	}
	fprintf(out, "random writes: p99 %s, %.1fx the random-read p99 (%s)\n",
		units_format_ns((int64_t)r->rand_write_p99_ns, a, sizeof(a)),
		r->rand_write_p99_ratio,
		units_format_ns((int64_t)rr->lat_ns.p99, b, sizeof(b)));
	fprintf(out, "random writes: %s IOPS against %s for random reads: ",
		format_iops(rw->iops, c, sizeof(c)),
		format_iops(rr->iops, d, sizeof(d)));
	if (r->rand_write_iops_ratio > 0 && r->rand_write_iops_ratio < 1)
		fprintf(out, "%.1fx fewer\n", 1.0 / r->rand_write_iops_ratio);
	else
		fprintf(out, "%.2fx as many\n", r->rand_write_iops_ratio);
}

void report_bench_text(FILE *out, const struct benchio_result *r)
{
	char a[32], b[32], c[32], d[32];

	fprintf(out, "test area %s at %s; %u repeat%s of %s per workload",
		units_format_bytes(r->size_bytes, a, sizeof(a)),
		units_format_bytes(r->offset_bytes, b, sizeof(b)),
		r->repeats, r->repeats == 1 ? "" : "s",
		units_format_ns((int64_t)r->runtime_ns, c, sizeof(c)));
	if (r->warmup_ns)
		fprintf(out, " after %s of warm-up",
			units_format_ns((int64_t)r->warmup_ns, d, sizeof(d)));
	else
		fputs(", no warm-up", out);
	fputs("; queue depth 1\n", out);
	fprintf(out, "%-11s", "workload");
	put_right(out, "block", 6);
	put_right(out, "MiB/s", 9);
	put_right(out, "IOPS", 11);
	for (size_t i = 0; i < LAT_COLS; i++)
		put_right(out, lat_heads[i], LAT_WIDTH);
	fprintf(out, "  range of repeats\n");
	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++)
		print_row(out, &r->w[w]);
	fprintf(out, "\n");
	print_verdict(out, r);
	for (unsigned w = 0; w < BENCHIO_NWORKLOADS; w++)
		if (r->w[w].samples_capped) {
			fprintf(out, "* percentiles from a uniform sample of each "
				"window's latencies (mean and max from all)\n");
			break;
		}
	if (r->note[0])
		fprintf(out, "note: %s\n", r->note);
	if (r->interrupted)
		fprintf(out, "interrupted: %u of %u repeats complete; figures "
			"are from the windows that finished\n",
			r->repeats_done, r->repeats);
	fprintf(out, "latency: completion time of each request; percentiles "
		"nearest-rank per window, median of the windows; max over all\n");
}

static void lat_json(struct json_writer *w, const char *key,
		     const struct benchio_lat_ns *l)
{
	json_object_begin(w, key);
	json_uint(w, "mean", l->mean);
	json_uint(w, "p50", l->p50);
	json_uint(w, "p95", l->p95);
	json_uint(w, "p99", l->p99);
	json_uint(w, "p999", l->p999);
	json_uint(w, "max", l->max);
	json_object_end(w);
}

static void workload_json(struct json_writer *w,
			  const struct benchio_workload_result *wr)
{
	bool have = !wr->skipped && wr->nrepeats > 0;

	json_object_begin(w, wr->name);
	json_string(w, "name", wr->name);
	json_uint(w, "block_bytes", wr->block_bytes);
	if (have) {
		json_double(w, "bytes_per_sec", wr->bytes_per_sec);
		json_double(w, "iops", wr->iops);
		json_double(w, "bytes_per_sec_min", wr->bytes_per_sec_min);
		json_double(w, "bytes_per_sec_max", wr->bytes_per_sec_max);
		json_double(w, "iops_min", wr->iops_min);
		json_double(w, "iops_max", wr->iops_max);
		lat_json(w, "lat_ns", &wr->lat_ns);
	} else {
		static const char *const nulls[] = {
			"bytes_per_sec", "iops", "bytes_per_sec_min",
			"bytes_per_sec_max", "iops_min", "iops_max", "lat_ns"
		};

		for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
			json_null(w, nulls[i]);
	}
	json_uint(w, "ios", wr->ios);
	json_bool(w, "samples_capped", wr->samples_capped);
	json_array_begin(w, "repeats");
	for (unsigned i = 0; i < wr->nrepeats; i++) {
		const struct benchio_repeat *rp = &wr->repeats[i];

		json_object_begin(w, NULL);
		json_double(w, "bytes_per_sec", rp->bytes_per_sec);
		json_double(w, "iops", rp->iops);
		json_uint(w, "ios", rp->ios);
		json_uint(w, "elapsed_ns", rp->elapsed_ns);
		json_uint(w, "busy_ns", rp->busy_ns);
		json_uint(w, "position", rp->position);
		json_uint(w, "samples", rp->samples);
		json_bool(w, "samples_capped", rp->samples_capped);
		lat_json(w, "lat_ns", &rp->lat_ns);
		json_object_end(w);
	}
	json_array_end(w);
	json_object_end(w);
}

void report_bench_json(struct json_writer *w, const struct benchio_result *r)
{
	json_object_begin(w, "bench");
	json_uint(w, "offset_bytes", r->offset_bytes);
	json_uint(w, "size_bytes", r->size_bytes);
	json_uint(w, "runtime_ns", r->runtime_ns);
	json_uint(w, "warmup_ns", r->warmup_ns);
	json_uint(w, "repeats", r->repeats);
	json_uint(w, "queue_depth", 1);
	json_uint(w, "seed", r->seed);
	json_string(w, "percentile_method",
		    "completion latency; nearest rank over each window's "
		    "samples, median of the windows; max over all windows");
	for (unsigned i = 0; i < BENCHIO_NWORKLOADS; i++)
		workload_json(w, &r->w[i]);
	json_array_begin(w, "skipped");
	for (unsigned i = 0; i < BENCHIO_NWORKLOADS; i++)
		if (r->w[i].skipped)
			report_json_skip(w, r->w[i].name, r->w[i].skip_reason);
	json_array_end(w);
	json_array_begin(w, "order");
	for (unsigned rep = 0; rep < r->repeats_done; rep++) {
		json_array_begin(w, NULL);
		for (unsigned k = 0; k < r->nactive; k++)
			json_string(w, NULL, benchio_workload_name(r->order[rep][k]));
		json_array_end(w);
	}
	json_array_end(w);
	json_object_begin(w, "verdict");
	if (r->verdict_valid) {
		json_uint(w, "rand_write_p99_ns", r->rand_write_p99_ns);
		json_double(w, "rand_write_p99_vs_read", r->rand_write_p99_ratio);
		json_double(w, "rand_write_iops_vs_read", r->rand_write_iops_ratio);
	} else {
		json_null(w, "rand_write_p99_ns");
		json_null(w, "rand_write_p99_vs_read");
		json_null(w, "rand_write_iops_vs_read");
	}
	json_object_end(w);
	json_uint(w, "io_count", r->io_count);
	json_uint(w, "bytes_written", r->bytes_written);
	json_uint(w, "elapsed_ns", r->elapsed_ns);
	json_bool(w, "interrupted", r->interrupted);
	json_text_or_null(w, "note", r->note);
	json_object_end(w);
}
