/* report_advice.c - the Advice section as text and as JSON. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "report_advice.h"
#include "units.h"

static const char *const labels[][2] = {
	{ "partition", "partition" }, { "fat32", "FAT32" }, { "exfat", "exFAT" },
	{ "ext4", "ext4" }, { "f2fs", "f2fs" },
};

static const char *label_of(const char *purpose)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(labels[i][0], purpose))
			return labels[i][1];
	return purpose;
}

void report_advice_substitute_names(const char *s, const char *device, const char *part,
				    char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	while (*s && o + 1 < len) {
		const char *word = NULL;
		size_t skip = 0;

		if (device && !strncmp(s, "DEVICE", 6))
			word = device, skip = 6;
		else if (part && !strncmp(s, "PARTITION", 9))
			word = part, skip = 9;
		if (word) {
			o += (size_t)snprintf(out + o, len - o, "%s", word);
			if (o >= len)
				o = len - 1;
			s += skip;
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = '\0';
}

void report_advice_substitute(const char *s, const char *device, char *out,
			      size_t len)
{
	char part[256];
	size_t n = strlen(device);
	bool real = !strncmp(device, "/dev/", 5) && n > 5;

	snprintf(part, sizeof(part), "%s%s1", device,
		 real && device[n - 1] >= '0' && device[n - 1] <= '9' ? "p" : "");
	report_advice_substitute_names(s, real ? device : NULL, real ? part : NULL, out, len);
}

/* Calls fn for each line of text (the reasons are one per line). */
static void each_line(const char *text, void (*fn)(void *arg, const char *s, int n),
		      void *arg)
{
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		int n = end ? (int)(end - p) : (int)strlen(p);

		fn(arg, p, n);
		p += n + (end ? 1 : 0);
	}
}

static void print_reason(void *out, const char *s, int n)
{
	fprintf(out, "%14s- %.*s\n", "", n, s);
}

static void json_reason(void *w, const char *s, int n)
{
	char buf[ADVICE_TEXT];

	snprintf(buf, sizeof(buf), "%.*s", n, s);
	json_string(w, NULL, buf);
}

void report_advice_text(FILE *out, const struct advice *a, const char *device)
{
	char u[32], line[2 * ADVICE_TEXT];

	fprintf(out, "\nAdvice\n");
	if (a->align_bytes)
		fprintf(out, "  align partitions to %s: %s\n",
			units_format_bytes(a->align_bytes, u, sizeof(u)), a->align_reason);
	else
		fprintf(out, "  %s\n", a->align_reason);
	if (a->warning[0]) {
		report_advice_substitute(a->warning, device, line, sizeof(line));
		fprintf(out, "  WARNING: %s\n", line);
	}
	for (size_t i = 0; i < a->ncommands; i++) {
		const struct advice_command *c = &a->commands[i];

		report_advice_substitute(c->line, device, line, sizeof(line));
		fprintf(out, "  %-11s %s\n", label_of(c->purpose), line);
		each_line(c->why, print_reason, out);
	}
	for (size_t i = 0; i < a->nnotes; i++)
		fprintf(out, "  - %s\n", a->notes[i]);
}

static void json_command(struct json_writer *w, const struct advice_command *c)
{
	json_object_begin(w, NULL);
	json_string(w, "purpose", c->purpose);
	json_array_begin(w, "argv");
	for (size_t i = 0; i < c->argc; i++)
		json_string(w, NULL, c->argv[i]);
	json_array_end(w);
	json_text_or_null(w, "stdin", c->stdin_text);
	json_string(w, "line", c->line);
	json_array_begin(w, "why");
	each_line(c->why, json_reason, w);
	json_array_end(w);
	json_uint(w, "data_align_bytes", c->data_align_bytes);
	json_object_end(w);
}

void report_advice_json(struct json_writer *w, const struct advice *a)
{
	bool known = a->align_bytes != 0;

	json_object_begin(w, "advice");
	json_uint_or_null(w, "align_bytes", a->align_bytes);
	json_uint_or_null(w, "partition_start_bytes", known ? a->part_start_bytes : 0);
	json_uint_or_null(w, "partition_size_bytes", known ? a->part_size_bytes : 0);
	json_string(w, "align_reason", a->align_reason);
	json_string(w, "label", a->ncommands ? a->label : NULL);
	json_text_or_null(w, "sized_for", a->sized_for);
	json_text_or_null(w, "warning", a->warning);
	json_array_begin(w, "commands");
	for (size_t i = 0; i < a->ncommands; i++)
		json_command(w, &a->commands[i]);
	json_array_end(w);
	json_array_begin(w, "notes");
	for (size_t i = 0; i < a->nnotes; i++)
		json_string(w, NULL, a->notes[i]);
	json_array_end(w);
	json_object_end(w);
}

/* ---- the geometry advise and check were given ---- */

void report_given_geometry_text(FILE *out, const struct geometry *g)
{
	char e[32] = "unknown", p[32] = "unknown", f[32] = "none";

	if (g->erase.bytes)
		units_format_bytes(g->erase.bytes, e, sizeof(e));
	if (g->page.bytes)
		units_format_bytes(g->page.bytes, p, sizeof(p));
	if (g->fat_found)
		units_format_bytes(g->fat_size_bytes, f, sizeof(f));
	fprintf(out, "Geometry: erase block %s (%s), page %s (%s), FAT area %s%s\n", e,
		geo_source_name(g->erase.bytes ? g->erase.source : GEO_NONE), p,
		geo_source_name(g->page.bytes ? g->page.source : GEO_NONE), f,
		g->fat_tested ? "" : " (not given)");
}

void report_given_geometry_json(struct json_writer *w, const struct geometry *g)
{
	json_object_begin(w, "geometry");
	report_json_geo_size(w, "erase_size_bytes", &g->erase);
	report_json_geo_size(w, "page_size_bytes", &g->page);
	if (g->fat_tested)	/* given: --fat-area 0 says there is none */
		report_json_size(w, "fat_area_size_bytes", g->fat_found ? g->fat_size_bytes : 0,
				 NAN, "given");
	else
		json_null(w, "fat_area_size_bytes");
	json_uint(w, "sector_bytes", g->sector_bytes);
	json_object_end(w);
}
