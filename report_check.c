/* report_check.c - the layout check as text and as JSON. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "json.h"
#include "report.h"
#include "report_advice.h"
#include "report_check.h"
#include "units.h"

static const char *yes_no(bool aligned)
{
	return aligned ? "aligned" : "NOT aligned";
}

static void text_geometry(FILE *out, const struct check_geometry *g)
{
	char e[32] = "unknown", p[32] = "unknown", f[32] = "unknown";

	if (g->erase_bytes)
		units_format_bytes(g->erase_bytes, e, sizeof(e));
	if (g->page_bytes)
		units_format_bytes(g->page_bytes, p, sizeof(p));
	if (g->fat_area_bytes)
		units_format_bytes(g->fat_area_bytes, f, sizeof(f));
	else if (g->fat_source != GEO_NONE)	/* --fat-area 0: known to be none */
		snprintf(f, sizeof(f), "none");
	fprintf(out, "Geometry: erase block %s (%s), page %s (%s), FAT area %s (%s)\n", e,
		geo_source_name(g->erase_source), p, geo_source_name(g->page_source), f,
		geo_source_name(g->fat_source));
	if (!g->erase_bytes)
		fprintf(out, "  without an erase block nothing can be judged for alignment: "
			"give --erasesize\n");
}

/* The start's verdict: against the erase block and the page, the page
 * alone, or none. */
static const char *start_verdict(const struct check_geometry *g, const struct check_part *p)
{
	if (p->start_harmless)
		return g->erase_bytes ? "off the erase block (harmless: the data area is on it)" :
		       "off the page (harmless: the data area is on it)";
	if (g->erase_bytes)
		return yes_no(p->start_aligned && p->start_page_aligned);
	if (g->page_bytes)
		return p->start_page_aligned ? "on the page (no erase block to judge by)" :
		       "NOT on the page";
	return "not judged (no erase block)";
}

static void text_part(FILE *out, const struct check_geometry *g,
		      const struct check_part *p, const char *device, const char *disk)
{
	char s[32], z[32], d[32], c[32], line[2 * ADVICE_TEXT], name[32] = "Whole device";
	unsigned left = 0;

	if (p->entry.number)
		snprintf(name, sizeof(name), "Partition %u", p->entry.number);
	fprintf(out, "\n%s: starts at %s, %s, start %s\n", name,
		units_format_bytes(p->entry.start_bytes, s, sizeof(s)),
		units_format_bytes(p->entry.size_bytes, z, sizeof(z)), start_verdict(g, p));
	if (p->fs.type == FS_UNKNOWN)
		fprintf(out, "  file system: unknown\n");
	else
		fprintf(out, "  file system: %s%s%s, %s %s, %s at %s on the device: %s\n",
			fsprobe_type_name(p->fs.type), p->fs.fat_bits ? " FAT" : "",
			p->fs.fat_bits ? (p->fs.fat_bits == 12 ? "12" : p->fs.fat_bits == 16 ?
					  "16" : "32") : "",
			p->fs.type == FS_VFAT || p->fs.type == FS_EXFAT ? "clusters" : "blocks",
			units_format_bytes(p->fs.cluster_bytes, c, sizeof(c)), p->fs.data_name,
			units_format_bytes(p->data_start_bytes, d, sizeof(d)),
			g->erase_bytes ? yes_no(p->data_aligned) : "not judged");
	for (size_t i = 0; i < p->nproblems; i++)
		fprintf(out, "  - %s\n", p->problems[i]);
	if (p->nfix)
		fprintf(out, "  fix (this destroys the data on it: copy it first):\n");
	for (size_t i = 0; i < p->nfix; i++) {
		if (disk && !p->new_table)	/* a partition device: the disk's table */
			report_advice_substitute_names(p->fix[i], disk, device, line,
						       sizeof(line));
		else	/* a new table's partition is its first */
			report_advice_substitute_part(p->fix[i], disk ? disk : device,
						      p->new_table || !p->entry.number ? 1 :
						      p->entry.number, line, sizeof(line));
		fprintf(out, "    %s\n", line);
		left |= report_advice_placeholders(line);
	}
	report_advice_placeholder_note(out, "    ", left);
}

/* The verdict, first. */
static void text_verdict(FILE *out, const struct check_result *r)
{
	size_t problems = r->table.nproblems;

	for (size_t i = 0; i < r->nparts; i++)
		problems += r->parts[i].nproblems;
	if (!r->nparts && !problems)
		fprintf(out, "No partitions and no file system found: nothing to judge.\n");
	else if (problems)
		fprintf(out, "Problems found: %zu (each below, with its fix where one "
			"exists).\n", problems);
	else
		fprintf(out, "%s\n", r->geo.erase_bytes ? "No problems found: the layout "
			"fits the card." : "No structural problems found.");
}

void report_check_text(FILE *out, const struct check_result *r, const char *device,
		       const char *disk)
{
	text_verdict(out, r);
	text_geometry(out, &r->geo);
	if (r->partition_device)
		fprintf(out, "A partition: its offset on the disk comes from sysfs; the "
			"disk's partition table is not read\n");
	else
		fprintf(out, "Partition table: %s\n", parttable_kind_name(r->table.kind));
	for (size_t i = 0; i < r->table.nproblems; i++)
		fprintf(out, "  - %s\n", r->table.problems[i]);
	for (size_t i = 0; i < r->nparts; i++)
		text_part(out, &r->geo, &r->parts[i], device, disk);
}

static void json_uint_if(struct json_writer *w, const char *key, uint64_t val,
			 bool applies)
{
	if (applies)
		json_uint(w, key, val);
	else
		json_null(w, key);
}

static void json_bool_if(struct json_writer *w, const char *key, bool val, bool applies)
{
	if (applies)
		json_bool(w, key, val);
	else
		json_null(w, key);
}

static void json_fs(struct json_writer *w, const struct check_geometry *g,
		    const struct check_part *p)
{
	const struct fsinfo *fs = &p->fs;
	bool known = fs->type != FS_UNKNOWN;
	bool ext = fs->type == FS_EXT2 || fs->type == FS_EXT3 || fs->type == FS_EXT4;

	json_object_begin(w, "filesystem");
	json_string(w, "type", fsprobe_type_name(fs->type));
	json_uint_or_null(w, "fat_bits", fs->fat_bits);
	if (known) {
		json_uint(w, "data_start_bytes", p->data_start_bytes);
		json_bool_if(w, "data_aligned", p->data_aligned, g->erase_bytes != 0);
		json_uint(w, "cluster_bytes", fs->cluster_bytes);
	} else {
		json_null(w, "data_start_bytes");
		json_null(w, "data_aligned");
		json_null(w, "cluster_bytes");
	}
	/* the keys of the other file systems are there too, as null */
	json_uint_if(w, "reserved_sectors", fs->reserved_sectors, fs->type == FS_VFAT);
	json_uint_if(w, "stride_blocks", fs->stride_blocks, ext);
	json_uint_if(w, "stripe_width_blocks", fs->stripe_blocks, ext);
	json_uint_if(w, "section_bytes", fs->section_bytes, fs->type == FS_F2FS);
	json_uint_if(w, "zone_bytes", fs->zone_bytes, fs->type == FS_F2FS);
	json_object_end(w);
}

static void json_part(struct json_writer *w, const struct check_geometry *g,
		      const struct check_part *p)
{
	json_object_begin(w, NULL);
	json_uint(w, "number", p->entry.number);
	json_uint(w, "start_bytes", p->entry.start_bytes);
	json_uint(w, "size_bytes", p->entry.size_bytes);
	json_bool_if(w, "start_aligned", p->start_aligned, g->erase_bytes != 0);
	json_bool_if(w, "start_page_aligned", p->start_page_aligned, g->page_bytes != 0);
	json_bool(w, "in_fat_area", p->in_fat_area);
	json_fs(w, g, p);
	json_array_begin(w, "problems");
	for (size_t i = 0; i < p->nproblems; i++)
		json_string(w, NULL, p->problems[i]);
	json_array_end(w);
	json_array_begin(w, "fix");
	for (size_t i = 0; i < p->nfix; i++)
		json_string(w, NULL, p->fix[i]);
	json_array_end(w);
	json_object_end(w);
}

/* A size check used: null when unknown; check keeps no confidences. */
static void json_check_size(struct json_writer *w, const char *key, uint64_t bytes,
			    enum geo_source source)
{
	struct geo_size s = { bytes, NAN, source };

	report_json_geo_size(w, key, &s);
}

void report_check_json(struct json_writer *w, const struct check_result *r)
{
	const struct check_geometry *g = &r->geo;

	json_object_begin(w, "check");
	json_string(w, "table", parttable_kind_name(r->table.kind));
	json_bool(w, "partition_device", r->partition_device);
	json_array_begin(w, "problems");
	for (size_t i = 0; i < r->table.nproblems; i++)
		json_string(w, NULL, r->table.problems[i]);
	json_array_end(w);
	json_object_begin(w, "geometry");
	json_check_size(w, "erase_size_bytes", g->erase_bytes, g->erase_source);
	json_check_size(w, "page_size_bytes", g->page_bytes, g->page_source);
	json_check_size(w, "fat_area_size_bytes", g->fat_area_bytes, g->fat_source);
	json_object_end(w);
	json_array_begin(w, "partitions");
	for (size_t i = 0; i < r->nparts; i++)
		json_part(w, &r->geo, &r->parts[i]);
	json_array_end(w);
	json_object_end(w);
}
