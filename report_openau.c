/* report_openau.c - output of the open-AU counter. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "json.h"
#include "openau.h"
#include "report.h"
#include "report_openau.h"
#include "units.h"

void report_openau_plan_text(FILE *out, const struct openau_plan *p)
{
	char s[32], e[32], len[32], gap[32], bytes[32];

	units_format_bytes(p->start_bytes, s, sizeof(s));
	units_format_bytes(p->end_bytes, e, sizeof(e));
	units_format_bytes(p->end_bytes - p->start_bytes, len, sizeof(len));
	units_format_bytes(p->spacing_bytes, gap, sizeof(gap));
	units_format_bytes(p->max_bytes, bytes, sizeof(bytes));
	fprintf(out, "test area: %s to %s (%s), ", s, e, len);
	if (p->test_aus == 1)
		fprintf(out, "1 AU, ");
	else
		fprintf(out, "%u AUs %s apart, ", p->test_aus, gap);
	fprintf(out, "%s%s to be written\n", p->manual ? "" : "at most ", bytes);
}

static bool determined(const struct openau_count *c)
{
	return c->bound == OPENAU_EXACT || c->bound == OPENAU_AT_LEAST;
}

/* "5 linear", "at least 32 linear", "0 random: linear only", "linear
 * undetermined". */
static void print_count(FILE *out, const struct openau_count *c,
			const char *order)
{
	if (!determined(c))
		fprintf(out, "%s undetermined", order);
	else if (c->bound == OPENAU_AT_LEAST)
		fprintf(out, "at least %u %s", c->n, order);
	else
		fprintf(out, "%u %s%s", c->n, order,
			c->n == 0 ? ": linear only" : "");
}

static void print_verdict(FILE *out, const struct openau_result *r)
{
	const struct openau_count *lin = &r->linear, *rnd = &r->random;

	if (!determined(lin) && !determined(rnd)) {
		fprintf(out, "open AUs: undetermined\n");
		return;
	}
	fprintf(out, "open AUs: ");
	print_count(out, lin, "linear");
	fprintf(out, ", ");
	print_count(out, rnd, "random");
	if (determined(lin) && determined(rnd) &&
	    fabs(lin->confidence - rnd->confidence) >= 0.005)
		fprintf(out, " (confidence: linear %.2f, random %.2f)\n",
			lin->confidence, rnd->confidence);
	else
		fprintf(out, " (confidence %.2f)\n",
			determined(lin) ? lin->confidence : rnd->confidence);
}

static const char *verdict_name(enum openau_verdict v)
{
	switch (v) {
	case OPENAU_TRIAL_OPEN:
		return "open";
	case OPENAU_TRIAL_COLLAPSED:
		return "collapsed";
	case OPENAU_TRIAL_UNCLEAR:
		return "unclear";
	default:
		return "";
	}
}

static void print_totals(FILE *out, const struct openau_result *r)
{
	char b[32], t[32];

	fprintf(out, "written: %s (%" PRIu64 " bytes) in %s of device time, %"
		PRIu64 " writes\n",
		units_format_bytes(r->bytes_written, b, sizeof(b)),
		r->bytes_written,
		units_format_ns((int64_t)r->elapsed_ns, t, sizeof(t)), r->io_count);
}

static void print_manual(FILE *out, const struct openau_result *r)
{
	char e[32];

	unsigned n = r->ntrials ? r->trials[0].n : 0;

	fprintf(out, "flashbench --open-au: %u AU%s of %s, %s order\n", n,
		n == 1 ? "" : "s",
		units_format_bytes(r->erase_size_bytes, e, sizeof(e)),
		r->ntrials ? openau_order_name(r->trials[0].order) : "linear");
	report_openau_flashbench(out, r);
	print_totals(out, r);
}

void report_openau_text(FILE *out, const struct openau_result *r)
{
	char a[32], b[32], c[32];

	if (r->manual) {
		print_manual(out, r);
		return;
	}
	print_verdict(out, r);
	if (r->note[0])
		fprintf(out, "note: %s\n", r->note);
	if (r->random_cycle_ratio >= 0)
		fprintf(out, "random 0 check: an out-of-order write after half "
			"the AU was written cost %.2f of one after a single "
			"chunk (linear only: about 0.5, random mode: 1)\n",
			r->random_cycle_ratio);
	if (r->chunk_bytes)
		fprintf(out, "chunk %s; writing a whole %s AU takes about %s\n",
			units_format_bytes(r->chunk_bytes, a, sizeof(a)),
			units_format_bytes(r->erase_size_bytes, b, sizeof(b)),
			units_format_ns((int64_t)r->au_write_ns, c, sizeof(c)));
	fprintf(out, "%4s  %-6s  %8s  %11s  %9s  %7s  %s\n", "N", "order",
		"chunk", "throughput", "per write", "excess", "verdict");
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct openau_trial *t = &r->trials[i];

		fprintf(out, "%4u  %-6s  %8s  %11s  %9s  %7.3f  %s%s\n", t->n,
			openau_order_name(t->order),
			units_format_bytes(t->chunk_bytes, a, sizeof(a)),
			units_format_rate_binary(t->bytes_per_sec, b, sizeof(b)),
			units_format_ns((int64_t)t->write_ns, c, sizeof(c)),
			fabs(t->excess) < 0.0005 ? 0.0 : t->excess,
			verdict_name(t->verdict),
			i == 0 ? " (reference)" : "");
	}
	print_totals(out, r);
}

void report_openau_flashbench(FILE *out, const struct openau_result *r)
{
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct openau_trial *t = &r->trials[i];
		char len[32], rate[32];

		units_format_bytes(t->chunk_bytes, len, sizeof(len));
		units_format_rate(t->bytes_per_sec, rate, sizeof(rate));
		if (r->manual)
			fprintf(out, "%s\t%s\n", len, rate);
		else
			fprintf(out, "n=%u %s %s\t%s\n", t->n,
				openau_order_name(t->order), len, rate);
	}
}

/* "<order>", "<order>_bound", "<order>_confidence". */
static void json_count(struct json_writer *w, const char *order,
		       const struct openau_count *c)
{
	if (determined(c))
		report_json_count(w, order, c->n, c->bound == OPENAU_AT_LEAST,
				  c->confidence, "measured");
	else
		json_null(w, order);
}

void report_openau_json(struct json_writer *w, const struct openau_result *r)
{
	json_object_begin(w, "open_au");
	json_uint(w, "erase_size_bytes", r->erase_size_bytes);
	json_count(w, "linear", &r->linear);
	json_count(w, "random", &r->random);
	json_array_begin(w, "trials");
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct openau_trial *t = &r->trials[i];

		json_object_begin(w, NULL);
		json_uint(w, "n", t->n);
		json_string(w, "order", openau_order_name(t->order));
		json_uint(w, "chunk_bytes", t->chunk_bytes);
		json_double(w, "bytes_per_sec", t->bytes_per_sec);
		json_object_end(w);
	}
	json_array_end(w);
	if (r->random_cycle_ratio >= 0)
		json_double(w, "random_cycle_ratio", r->random_cycle_ratio);
	else
		json_null(w, "random_cycle_ratio");
	json_text_or_null(w, "note", r->note);
	json_uint(w, "bytes_written", r->bytes_written);
	json_uint(w, "elapsed_ns", r->elapsed_ns);
	json_object_end(w);
}
