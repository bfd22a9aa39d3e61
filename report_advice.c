/* report_advice.c - the Advice section as text and as JSON. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "report_advice.h"
#include "units.h"

static const char *const labels[][2] = {
	{ "partition", "partition" }, { "fat32", "FAT32" }, { "fat16", "FAT16" },
	{ "exfat", "exFAT" },
	{ "ext4", "ext4" }, { "f2fs", "f2fs" },
};

static const char *label_of(const char *purpose)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(labels[i][0], purpose))
			return labels[i][1];
	return purpose;
}

/* Characters a shell never treats specially: a word made of them only is
 * pasted as it is, so ordinary paths stay readable. */
static bool shell_plain(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("/._+-:,@%=", *s))
			return false;
	return true;
}

/* Appends n bytes of s at *o, all or nothing. */
static bool append(char *out, size_t len, size_t *o, const char *s, size_t n)
{
	if (*o + n >= len)
		return false;
	memcpy(out + *o, s, n);
	*o += n;
	out[*o] = '\0';
	return true;
}

bool report_shell_quote(const char *s, char *out, size_t len)
{
	size_t o = 0;
	bool ok;

	if (!len)
		return false;
	out[0] = '\0';
	if (shell_plain(s))
		return append(out, len, &o, s, strlen(s));
	/* inside single quotes only ' is special: close, escape it, reopen */
	ok = append(out, len, &o, "'", 1);
	for (const char *p = s; ok && *p; p++)
		ok = *p == '\'' ? append(out, len, &o, "'\\''", 4) : append(out, len, &o, p, 1);
	ok = ok && append(out, len, &o, "'", 1);
	if (!ok)	/* a cut quoted word could end the quote early */
		out[0] = '\0';
	return ok;
}

void report_advice_substitute_names(const char *s, const char *device, const char *part,
				    char *out, size_t len)
{
	char word[2 * PATH_MAX];
	size_t o = 0;

	if (!len)
		return;
	out[0] = '\0';
	while (*s) {
		const char *name = NULL;
		size_t skip = 0;

		if (device && !strncmp(s, "DEVICE", 6))
			name = device, skip = 6;
		else if (part && !strncmp(s, "PARTITION", 9))
			name = part, skip = 9;
		/* a path is pasted as one word: never cut, never split */
		if (name && (!report_shell_quote(name, word, sizeof(word)) ||
			     !append(out, len, &o, word, strlen(word))))
			return;
		if (!name && !append(out, len, &o, s, 1))
			return;
		s += name ? skip : 1;
	}
}

/* The kernel names a disk's partitions after the disk, with a p when the
 * name ends in a digit (sdb1, mmcblk0p1, loop0p1, nvme0n1p1).  Other
 * names (/dev/disk/by-id links, whose partitions udev calls ...-part1;
 * device-mapper nodes, partitioned by kpartx) are resolved to the kernel
 * node first, and when that gives no plain /dev name the partition is not
 * guessed. */
bool report_advice_partition_node(const char *device, unsigned number, char *out,
				  size_t len)
{
	char *real = realpath(device, NULL);
	const char *path = real ? real : device;
	const char *name = path + 5;
	size_t n = strlen(path);
	bool ok = !strncmp(path, "/dev/", 5) && n > 5 && !strchr(name, '/') &&
		  strncmp(name, "dm-", 3) && shell_plain(name) && number > 0;

	if (ok)
		ok = (size_t)snprintf(out, len, "%s%s%u", path,
				      isdigit((unsigned char)path[n - 1]) ? "p" : "",
				      number) < len;
	free(real);
	return ok;
}

bool report_advice_first_partition(const char *device, char *out, size_t len)
{
	return report_advice_partition_node(device, 1, out, len);
}

void report_advice_substitute_part(const char *s, const char *device, unsigned number,
				   char *out, size_t len)
{
	char part[PATH_MAX + 16];
	bool real = !strncmp(device, "/dev/", 5) && strlen(device) > 5;
	bool have_part = real && report_advice_partition_node(device, number, part,
							       sizeof(part));

	report_advice_substitute_names(s, real ? device : NULL, have_part ? part : NULL,
				       out, len);
}

void report_advice_substitute(const char *s, const char *device, char *out,
			      size_t len)
{
	report_advice_substitute_part(s, device, 1, out, len);
}

unsigned report_advice_placeholders(const char *line)
{
	return (strstr(line, "DEVICE") ? PLACEHOLDER_DEVICE : 0) |
	       (strstr(line, "PARTITION") ? PLACEHOLDER_PARTITION : 0);
}

void report_advice_placeholder_note(FILE *out, const char *indent, unsigned left)
{
	static const char dev[] = "DEVICE with the card (e.g. /dev/sdX, /dev/mmcblkN)";
	static const char part[] = "PARTITION with its first partition (e.g. /dev/sdX1, "
				   "/dev/mmcblkNp1; under /dev/disk/by-id the name ending in -part1)";

	if (left)
		fprintf(out, "%sreplace %s%s%s before pasting these lines\n", indent,
			left & PLACEHOLDER_DEVICE ? dev : "",
			left == (PLACEHOLDER_DEVICE | PLACEHOLDER_PARTITION) ? " and " : "",
			left & PLACEHOLDER_PARTITION ? part : "");
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
	unsigned left = 0;

	fprintf(out, "\nAdvice\n");
	if (a->align_bytes)
		fprintf(out, "  align partitions to %s: %s\n",
			units_format_bytes(a->align_bytes, u, sizeof(u)), a->align_reason);
	else
		fprintf(out, "  %s\n", a->align_reason);
	if (a->warning[0]) {
		report_advice_substitute(a->warning, device, line, sizeof(line));
		fprintf(out, "  WARNING: %s\n", line);
		left |= report_advice_placeholders(line);
	}
	for (size_t i = 0; i < a->ncommands; i++) {
		const struct advice_command *c = &a->commands[i];

		report_advice_substitute(c->line, device, line, sizeof(line));
		fprintf(out, "  %-11s %s\n", label_of(c->purpose), line);
		each_line(c->why, print_reason, out);
		left |= report_advice_placeholders(line);
	}
	report_advice_placeholder_note(out, "  ", left);
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
		g->fat_tested ? " (given)" : " (not given)");
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
