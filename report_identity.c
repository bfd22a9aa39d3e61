/* report_identity.c - output of the identity step (sysinfo.h). */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "report_identity.h"
#include "sysinfo.h"
#include "units.h"
#include "util.h"

/* SPEED_CLASS codes 0..4 are classes 0, 2, 4, 6 and 10. */
static unsigned speed_class_number(unsigned code)
{
	static const unsigned classes[] = { 0, 2, 4, 6, 10 };

	return code < 5 ? classes[code] : code;
}

static const char *cbx_name(unsigned cbx)
{
	static const char *const names[] = { "card", "BGA", "POP", "reserved" };

	return names[cbx & 3];
}

static void hex_string(const uint8_t *reg, size_t n, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < n && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", reg[i]);
	buf[2 * i] = '\0';
}

/* SD_BUS_WIDTHS (SCR): bit 0 1-bit, bit 2 4-bit; the others reserved. */
static size_t sd_bus_widths(unsigned mask, unsigned widths[2])
{
	size_t n = 0;

	if (mask & 1)
		widths[n++] = 1;
	if (mask & 4)
		widths[n++] = 4;
	return n;
}

static const char *capacity_register(const struct sysinfo *si)
{
	return si->has_ext_csd && si->ext_csd.sec_count ? "EXT_CSD" : "CSD";
}

/* The card's capacity against the disk's size, "" when they agree or
 * cannot be compared. */
static void capacity_warning(const struct sysinfo *si, char *buf, size_t len)
{
	char a[32], b[32];

	buf[0] = '\0';
	if (!si->capacity_mismatch)
		return;
	snprintf(buf, len, "the card's %s says %s (%" PRIu64 " bytes) but the block "
		 "device has %s (%" PRIu64 " bytes): one of them is wrong (a "
		 "damaged or fake card, or a mixed-up sysfs copy); check the real "
		 "capacity with 'flashprobe capacity --write'",
		 capacity_register(si),
		 units_format_bytes(si->capacity.bytes, a, sizeof(a)), si->capacity.bytes,
		 units_format_bytes(si->disk_size.bytes, b, sizeof(b)), si->disk_size.bytes);
}

const char *report_identity_reader_note(const struct sysinfo *si)
{
	if (!si->registers_hidden)
		return NULL;
	return "USB transport, no MMC registers: a card behind a USB reader hides "
		"its registers (CID, CSD, SD Status) and timings through the reader "
		"hide small page steps; for what the card says and its finer geometry "
		"use a native SD slot (the card then shows up as /dev/mmcblkN)";
}

/* "seed" for "sim:seed,size=1G". */
static int sim_name_length(const char *spec)
{
	return (int)strcspn(spec, ",");
}

/* ---------------------------------------------------------------- */
/* JSON */

static void j_value(struct json_writer *w, const char *key,
		    const struct sysinfo_value *v)
{
	if (!v->present) {
		json_null(w, key);
		return;
	}
	json_object_begin(w, key);
	json_uint(w, "value", v->bytes);
	report_json_value_end(w, NAN, sysinfo_source_name(v->source));
}

static void j_flag(struct json_writer *w, const char *key,
		   const struct sysinfo_flag *f)
{
	if (!f->present) {
		json_null(w, key);
		return;
	}
	json_object_begin(w, key);
	json_bool(w, "value", f->value);
	report_json_value_end(w, NAN, sysinfo_source_name(f->source));
}

/* A string value; null when s is NULL or empty. */
static void j_str(struct json_writer *w, const char *key, const char *s,
		  enum sysinfo_source src)
{
	if (!s || !*s) {
		json_null(w, key);
		return;
	}
	json_object_begin(w, key);
	json_string(w, "value", s);
	report_json_value_end(w, NAN, sysinfo_source_name(src));
}

static void j_uint(struct json_writer *w, const char *key, uint64_t v,
		   bool present, enum sysinfo_source src)
{
	if (!present) {
		json_null(w, key);
		return;
	}
	json_object_begin(w, key);
	json_uint(w, "value", v);
	report_json_value_end(w, NAN, sysinfo_source_name(src));
}

static void j_hex_reg(struct json_writer *w, const char *key, bool present,
		      const uint8_t *reg, size_t n)
{
	char buf[2 * 64 + 1];

	if (!present) {
		json_null(w, key);
		return;
	}
	hex_string(reg, n, buf, sizeof(buf));
	j_str(w, key, buf, SYSINFO_SRC_CARD);
}

static void j_reader(struct json_writer *w, const struct sysinfo *si)
{
	char id[16];

	if (si->kind != SYSINFO_KIND_USB) {
		json_null(w, "reader");
		return;
	}
	json_object_begin(w, "reader");
	j_str(w, "vendor", si->vendor, SYSINFO_SRC_KERNEL);
	j_str(w, "model", si->model, SYSINFO_SRC_KERNEL);
	if (si->usb_id_present)
		snprintf(id, sizeof(id), "%04x:%04x", si->usb_vendor_id,
			 si->usb_product_id);
	else
		id[0] = '\0';
	j_str(w, "usb_id", id, SYSINFO_SRC_KERNEL);
	j_str(w, "usb_product", si->usb_product, SYSINFO_SRC_KERNEL);
	json_object_end(w);
}

static void j_ident(struct json_writer *w, const struct sysinfo *si)
{
	const struct sysinfo_ident *id = &si->ident;
	const char *src = sysinfo_source_name(id->source);
	char buf[32];

	if (!id->present) {
		json_null(w, "manfid");
		json_null(w, "manufacturer");
		json_null(w, "oemid");
		json_null(w, "product_name");
		json_null(w, "revision");
		json_null(w, "serial");
		json_null(w, "date");
		return;
	}
	json_object_begin(w, "manfid");
	json_uint(w, "value", id->manfid);
	snprintf(buf, sizeof(buf), "0x%02x", id->manfid);
	json_string(w, "hex", buf);
	report_json_value_end(w, NAN, src);
	j_str(w, "manufacturer", id->manufacturer, id->source);

	json_object_begin(w, "oemid");
	json_uint(w, "value", id->oemid);
	snprintf(buf, sizeof(buf), "0x%04x", id->oemid);
	json_string(w, "hex", buf);
	json_string(w, "ascii", id->oem_ascii[0] ? id->oem_ascii : NULL);
	report_json_value_end(w, NAN, src);

	j_str(w, "product_name", id->product, id->source);

	json_object_begin(w, "revision");
	snprintf(buf, sizeof(buf), "%u.%u", id->hwrev, id->fwrev);
	json_string(w, "value", buf);
	json_uint(w, "hwrev", id->hwrev);
	json_uint(w, "fwrev", id->fwrev);
	report_json_value_end(w, NAN, src);

	if (id->serial_present) {
		json_object_begin(w, "serial");
		json_uint(w, "value", id->serial);
		snprintf(buf, sizeof(buf), "0x%08" PRIx32, id->serial);
		json_string(w, "hex", buf);
		report_json_value_end(w, NAN, src);
	} else {
		json_null(w, "serial");
	}

	if (id->year) {
		json_object_begin(w, "date");
		snprintf(buf, sizeof(buf), "%04u-%02u", id->year % 10000,
			 id->month % 100);
		json_string(w, "value", buf);
		json_uint(w, "year", id->year);
		json_uint(w, "month", id->month);
		report_json_value_end(w, NAN, src);
	} else {
		json_null(w, "date");
	}
}

static void j_uint_list(struct json_writer *w, const char *key,
			const unsigned *v, size_t n)
{
	json_array_begin(w, key);
	for (size_t i = 0; i < n; i++)
		json_uint(w, NULL, v[i]);
	json_array_end(w);
}

/* Bus widths, TRAN_SPEED, CCC, write protection, CRCs. */
static void j_csd_scr(struct json_writer *w, const struct sysinfo *si)
{
	bool csd = si->has_csd;
	unsigned widths[2], classes[12];
	size_t n = 0;
	char buf[16];
	struct sysinfo_flag perm = { si->csd.perm_write_protect, SYSINFO_SRC_CARD, csd };
	struct sysinfo_flag tmp = { si->csd.tmp_write_protect, SYSINFO_SRC_CARD, csd };

	if (sysinfo_kind_is_sd(si->kind) && si->has_scr) {
		json_object_begin(w, "bus_widths");
		j_uint_list(w, "value", widths, sd_bus_widths(si->scr.bus_widths, widths));
		report_json_value_end(w, NAN, "card");
	} else {
		json_null(w, "bus_widths");
	}
	j_uint(w, "bus_width_in_use", si->bus_width_in_use, si->bus_width_in_use != 0,
	       SYSINFO_SRC_CARD);
	if (csd && si->csd.tran_speed_kbit) {
		json_object_begin(w, "tran_speed_kbit_per_s");
		json_uint(w, "value", si->csd.tran_speed_kbit);
		snprintf(buf, sizeof(buf), "0x%02x", si->csd.tran_speed);
		json_string(w, "raw", buf);
		report_json_value_end(w, NAN, "card");
	} else {
		json_null(w, "tran_speed_kbit_per_s");
	}
	if (csd) {
		for (unsigned c = 0; c < 12; c++)
			if (si->csd.ccc & (1u << c))
				classes[n++] = c;
		json_object_begin(w, "ccc");
		json_uint(w, "value", si->csd.ccc);
		snprintf(buf, sizeof(buf), "0x%03x", si->csd.ccc);
		json_string(w, "hex", buf);
		j_uint_list(w, "classes", classes, n);
		report_json_value_end(w, NAN, "card");
	} else {
		json_null(w, "ccc");
	}
	j_flag(w, "perm_write_protect", &perm);
	j_flag(w, "tmp_write_protect", &tmp);
	j_str(w, "cid_crc", si->cid_crc ? sysinfo_crc_name(si->cid_crc) : NULL,
	      SYSINFO_SRC_CARD);
	j_str(w, "csd_crc", si->csd_crc ? sysinfo_crc_name(si->csd_crc) : NULL,
	      SYSINFO_SRC_CARD);
}

/* The eMMC's version and the EXT_CSD sizes (null without EXT_CSD). */
static void j_ext_csd(struct json_writer *w, const struct sysinfo *si)
{
	const struct sysinfo_ext_csd *e = &si->ext_csd;
	bool x = si->has_ext_csd;
	struct sysinfo_flag hc = { e->erase_group_def & 1, SYSINFO_SRC_CARD, x };
	struct sysinfo_value wp = { e->hc_wp_bytes, SYSINFO_SRC_CARD, x && e->hc_wp_bytes };
	struct sysinfo_value sp = { e->super_page_bytes, SYSINFO_SRC_CARD,
				    x && e->super_page_bytes };
	struct sysinfo_value rd = { e->optimal_read_bytes, SYSINFO_SRC_CARD,
				    x && e->optimal_read_bytes };
	struct sysinfo_value wr = { e->optimal_write_bytes, SYSINFO_SRC_CARD,
				    x && e->optimal_write_bytes };
	struct sysinfo_value tr = { e->optimal_trim_bytes, SYSINFO_SRC_CARD,
				    x && e->optimal_trim_bytes };

	j_str(w, "emmc_version", si->ext_csd_rev >= 0 ?
	      sysinfo_emmc_version((unsigned)si->ext_csd_rev) : NULL,
	      x ? SYSINFO_SRC_CARD : SYSINFO_SRC_KERNEL);
	j_flag(w, "hc_erase_group_enabled", &hc);
	j_value(w, "hc_wp_group_bytes", &wp);
	j_value(w, "super_page_bytes", &sp);
	j_value(w, "optimal_read_bytes", &rd);
	j_value(w, "optimal_write_bytes", &wr);
	j_value(w, "optimal_trim_bytes", &tr);
}

static void j_warnings(struct json_writer *w, const struct sysinfo *si)
{
	char cap[320];
	const char *reader = report_identity_reader_note(si);

	capacity_warning(si, cap, sizeof(cap));
	if (si->capacity.present && si->disk_size.present)
		json_bool(w, "capacity_mismatch", si->capacity_mismatch);
	else
		json_null(w, "capacity_mismatch");
	json_array_begin(w, "warnings");
	if (cap[0])
		json_string(w, NULL, cap);
	if (reader)
		json_string(w, NULL, reader);
	json_array_end(w);
}

void sysinfo_json(struct json_writer *w, const struct sysinfo *si)
{
	bool sd = sysinfo_kind_is_sd(si->kind);
	bool ssr = sd && si->has_ssr;
	char buf[32];

	json_object_begin(w, "identity");
	json_string(w, "device", si->name);
	json_string(w, "kind", sysinfo_kind_name(si->kind));
	json_string(w, "description", sysinfo_kind_description(si->kind));
	json_string(w, "sysfs_path", si->sysfs_path[0] ? si->sysfs_path : NULL);
	if (si->major || si->minor) {
		snprintf(buf, sizeof(buf), "%u:%u", si->major, si->minor);
		json_string(w, "dev", buf);
	} else {
		json_null(w, "dev");
	}
	json_string(w, "partition_of", si->is_partition ? si->disk_name : NULL);
	json_bool(w, "usb", si->usb_bus);
	json_bool(w, "registers_hidden", si->registers_hidden);

	j_value(w, "size_bytes", &si->size);
	j_value(w, "logical_block_bytes", &si->logical_block);
	j_value(w, "physical_block_bytes", &si->physical_block);
	j_value(w, "discard_granularity_bytes", &si->discard_granularity);
	j_value(w, "discard_max_bytes", &si->discard_max);
	j_value(w, "minimum_io_bytes", &si->minimum_io);
	j_value(w, "optimal_io_bytes", &si->optimal_io);
	j_value(w, "max_request_bytes", &si->max_request);
	j_value(w, "alignment_offset_bytes", &si->alignment_offset);
	j_value(w, "disk_size_bytes", &si->disk_size);
	j_flag(w, "rotational", &si->rotational);
	j_flag(w, "removable", &si->removable);
	j_flag(w, "read_only", &si->read_only);
	j_reader(w, si);
	j_str(w, "backing_file", si->backing_file, SYSINFO_SRC_KERNEL);

	j_str(w, "card_type", si->card_type, SYSINFO_SRC_KERNEL);
	j_ident(w, si);
	j_str(w, "kernel_date", si->kernel_date, SYSINFO_SRC_KERNEL);
	j_str(w, "package", si->has_cid && si->cid.mmc ?
	      cbx_name(si->cid.mmc_cbx) : NULL, SYSINFO_SRC_CARD);
	j_uint(w, "ext_csd_rev", (uint64_t)(si->ext_csd_rev < 0 ? 0 : si->ext_csd_rev),
	       si->ext_csd_rev >= 0,
	       si->has_ext_csd ? SYSINFO_SRC_CARD : SYSINFO_SRC_KERNEL);
	j_str(w, "sd_spec", sd && si->has_scr ? si->scr.version : NULL,
	      SYSINFO_SRC_CARD);
	j_uint(w, "speed_class", speed_class_number(si->ssr.speed_class), ssr,
	       SYSINFO_SRC_CARD);
	j_uint(w, "uhs_speed_grade", si->ssr.uhs_speed_grade, ssr,
	       SYSINFO_SRC_CARD);
	j_uint(w, "video_speed_class", si->ssr.video_speed_class, ssr,
	       SYSINFO_SRC_CARD);
	j_uint(w, "app_perf_class", si->ssr.app_perf_class, ssr,
	       SYSINFO_SRC_CARD);

	j_value(w, "capacity_bytes", &si->capacity);
	j_value(w, "erase_size_bytes", &si->erase_size);
	if (si->preferred_erase.present) {
		json_object_begin(w, "preferred_erase_size_bytes");
		json_uint(w, "value", si->preferred_erase.bytes);
		json_bool(w, "unverified", si->preferred_erase_unverified);
		json_uint_or_null(w, "linux_guess_bytes", si->linux_guess_bytes);
		report_json_value_end(w, NAN, sysinfo_source_name(si->preferred_erase.source));
	} else {
		json_null(w, "preferred_erase_size_bytes");
	}
	if (si->au.present) {
		json_object_begin(w, "au_size_bytes");
		json_uint(w, "value", si->au.bytes);
		json_bool(w, "via_kernel", si->au_via_kernel);
		report_json_value_end(w, NAN, sysinfo_source_name(si->au.source));
	} else {
		json_null(w, "au_size_bytes");
	}
	j_value(w, "erase_sector_bytes", &si->erase_sector);
	j_value(w, "erase_group_bytes", &si->erase_group);
	j_value(w, "hc_erase_group_bytes", &si->hc_erase_group);
	j_csd_scr(w, si);
	j_ext_csd(w, si);
	j_warnings(w, si);

	json_object_begin(w, "registers");
	j_hex_reg(w, "cid", si->has_cid, si->raw_cid, sizeof(si->raw_cid));
	j_hex_reg(w, "csd", si->has_csd, si->raw_csd, sizeof(si->raw_csd));
	j_hex_reg(w, "scr", si->has_scr, si->raw_scr, sizeof(si->raw_scr));
	j_hex_reg(w, "ssr", si->has_ssr, si->raw_ssr, sizeof(si->raw_ssr));
	json_object_end(w);
	json_object_end(w);
}

/* ---------------------------------------------------------------- */
/* Text */

static void t_size_line(FILE *out, const char *label,
			const struct sysinfo_value *v)
{
	char buf[32];

	if (!v->present)
		return;
	fprintf(out, "  %s: %s [%s]\n", label,
		units_format_bytes(v->bytes, buf, sizeof(buf)),
		sysinfo_source_name(v->source));
}

static void t_first_line(FILE *out, const struct sysinfo *si)
{
	char buf[32];

	fputs("identity: ", out);
	util_fputs_visible(si->name, out);
	if (si->is_partition)
		fprintf(out, " (partition of %s)", si->disk_name);
	fprintf(out, ", %s", sysinfo_kind_description(si->kind));
	if (si->size.present)
		fprintf(out, ", %s (%" PRIu64 " bytes) [%s]",
			units_format_bytes(si->size.bytes, buf, sizeof(buf)),
			si->size.bytes, sysinfo_source_name(si->size.source));
	fputc('\n', out);
}

static void t_reader(FILE *out, const struct sysinfo *si)
{
	bool any = si->vendor[0] || si->model[0] || si->usb_id_present;

	if (any) {
		fprintf(out, "  reader:");
		if (si->vendor[0])
			fprintf(out, " %s", si->vendor);
		if (si->model[0])
			fprintf(out, " %s", si->model);
		if (si->usb_id_present) {
			fprintf(out, " (USB %04x:%04x", si->usb_vendor_id,
				si->usb_product_id);
			if (si->usb_product[0])
				fprintf(out, " \"%s\"", si->usb_product);
			fputc(')', out);
		}
		fprintf(out, " [kernel]\n");
	}
	fprintf(out, "  note: %s\n", report_identity_reader_note(si));
}

static void t_card(FILE *out, const struct sysinfo *si)
{
	const struct sysinfo_ident *id = &si->ident;

	if (!id->present)
		return;
	fprintf(out, "  card: %s (manfid 0x%02x), OEM 0x%04x",
		id->manufacturer ? id->manufacturer : "unknown manufacturer",
		id->manfid, id->oemid);
	if (id->oem_ascii[0])
		fprintf(out, " \"%s\"", id->oem_ascii);
	if (id->product[0])
		fprintf(out, ", %s", id->product);
	fprintf(out, " rev %u.%u", id->hwrev, id->fwrev);
	if (id->serial_present)
		fprintf(out, ", serial 0x%08" PRIx32, id->serial);
	if (id->year)
		fprintf(out, ", made %04u-%02u", id->year % 10000, id->month % 100);
	if (si->has_cid && si->cid.mmc)
		fprintf(out, ", %s package", cbx_name(si->cid.mmc_cbx));
	fprintf(out, " [%s]\n", sysinfo_source_name(id->source));
	if (si->kernel_date_differs)
		fprintf(out, "  kernel date: %s (the CID says %04u-%02u; older "
			"kernels skip the eMMC year rules) [kernel]\n",
			si->kernel_date, id->year % 10000, id->month % 100);
}

static void t_classes(FILE *out, const struct sysinfo *si)
{
	bool sd = sysinfo_kind_is_sd(si->kind);

	if (!sd || (!si->has_scr && !si->has_ssr))
		return;
	fprintf(out, "  SD");
	if (si->has_scr)
		fprintf(out, " spec %s", si->scr.version);
	if (si->has_ssr) {
		fprintf(out, ", class C%u", speed_class_number(si->ssr.speed_class));
		if (si->ssr.uhs_speed_grade)
			fprintf(out, " U%u", si->ssr.uhs_speed_grade);
		if (si->ssr.video_speed_class)
			fprintf(out, " V%u", si->ssr.video_speed_class);
		if (si->ssr.app_perf_class)
			fprintf(out, " A%u", si->ssr.app_perf_class);
	}
	fprintf(out, " [card]\n");
}

static void t_erase(FILE *out, const struct sysinfo *si)
{
	bool sd = sysinfo_kind_is_sd(si->kind);
	char buf[32], guess[32];

	if (si->capacity.present)
		fprintf(out, "  capacity: %s (%" PRIu64 " bytes, %s) [%s]%s\n",
			units_format_bytes(si->capacity.bytes, buf, sizeof(buf)),
			si->capacity.bytes, capacity_register(si),
			sysinfo_source_name(si->capacity.source),
			!si->disk_size.present ? "" : si->capacity_mismatch ?
			" NOT the block device's size" :
			" = the block device's size [kernel]");
	else if (si->has_csd && si->csd.mmc)
		fprintf(out, "  capacity: in EXT_CSD, not readable here (debugfs, "
			"as root)\n");
	t_size_line(out, "erase size", &si->erase_size);
	if (si->preferred_erase.present) {
		fprintf(out, "  preferred erase size: %s [%s]",
			units_format_bytes(si->preferred_erase.bytes, buf, sizeof(buf)),
			sysinfo_source_name(si->preferred_erase.source));
		switch (si->preferred_erase.source) {
		case SYSINFO_SRC_KERNEL_GUESS:
			fprintf(out, " Linux's default when the card reports no "
				"AU size, not a card value");
			if (si->preferred_erase_unverified)
				fprintf(out, "; this kernel does not show the SD "
					"Status, so the card may report the same");
			break;
		case SYSINFO_SRC_CARD:
			fprintf(out, sd ? " the card's AU size" :
				" the card's high-capacity erase group");
			break;
		case SYSINFO_SRC_KERNEL:
			if (si->linux_guess_bytes)
				fprintf(out, " not Linux's capacity guess (%s)",
					units_format_bytes(si->linux_guess_bytes,
							   guess, sizeof(guess)));
			if (!sd)
				fprintf(out, "; older kernels put the EXT_CSD "
					"high-capacity erase group here");
			break;
		default:
			break;
		}
		fputc('\n', out);
	}
	if (si->au.present)
		fprintf(out, "  AU size: %s [card]%s\n",
			units_format_bytes(si->au.bytes, buf, sizeof(buf)),
			si->au_via_kernel ?
			" read back from preferred_erase_size" : "");
	else if (sd && si->has_ssr)
		fprintf(out, "  AU size: %s\n", si->ssr.au_invalid ?
			"invalid in the SD Status (ignored, as Linux does)" :
			"not reported by the card");
	else if (sd && si->has_card)
		fprintf(out, "  AU size: not visible (this kernel shows no SD "
			"Status)\n");
	t_size_line(out, "erase sector", &si->erase_sector);
	t_size_line(out, "erase group", &si->erase_group);
	t_size_line(out, "high-capacity erase group", &si->hc_erase_group);
}

/* The EXT_CSD sizes an eMMC reports about its own geometry. */
static void t_ext_csd(FILE *out, const struct sysinfo *si)
{
	const struct sysinfo_ext_csd *e = &si->ext_csd;
	const char *version = si->ext_csd_rev >= 0 ?
		sysinfo_emmc_version((unsigned)si->ext_csd_rev) : NULL;
	char a[32], b[32], c[32];

	if (si->ext_csd_rev >= 0)
		fprintf(out, "  eMMC %s (EXT_CSD_REV %d) [%s]\n",
			version ? version : "of an unknown version", si->ext_csd_rev,
			si->has_ext_csd ? "card" : "kernel");
	if (!si->has_ext_csd)
		return;
	fprintf(out, "  EXT_CSD: high-capacity erase groups %s", (e->erase_group_def & 1) ?
		"in use" : "not enabled (the CSD erase group applies)");
	if (e->hc_wp_bytes)
		fprintf(out, ", write-protect group %s",
			units_format_bytes(e->hc_wp_bytes, a, sizeof(a)));
	if (e->super_page_bytes)
		fprintf(out, ", super page %s",
			units_format_bytes(e->super_page_bytes, a, sizeof(a)));
	fprintf(out, " [card]\n");
	if (e->optimal_read_bytes || e->optimal_write_bytes || e->optimal_trim_bytes)
		fprintf(out, "  EXT_CSD preferred sizes: read %s, write %s, trim %s [card]\n",
			units_format_bytes(e->optimal_read_bytes, a, sizeof(a)),
			units_format_bytes(e->optimal_write_bytes, b, sizeof(b)),
			units_format_bytes(e->optimal_trim_bytes, c, sizeof(c)));
}

static const char *yes_no(bool v)
{
	return v ? "yes" : "no";
}

/* Bus widths and TRAN_SPEED, the command classes, write protection and
 * the registers' CRCs. */
static void t_interface(FILE *out, const struct sysinfo *si)
{
	unsigned widths[2];
	size_t n;

	if (sysinfo_kind_is_sd(si->kind) && si->has_scr) {
		n = sd_bus_widths(si->scr.bus_widths, widths);
		fprintf(out, "  bus widths:");
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s %u-bit", i ? "," : "", widths[i]);
		fprintf(out, "%s (SCR) [card]\n", n ? "" : " none");
	}
	if (si->bus_width_in_use)
		fprintf(out, "  bus width in use: %u-bit%s [card]\n", si->bus_width_in_use,
			si->bus_ddr ? " DDR" : "");
	if (si->has_csd) {
		fprintf(out, "  TRAN_SPEED 0x%02x: ", si->csd.tran_speed);
		if (si->csd.tran_speed_kbit % 1000)
			fprintf(out, "%" PRIu32 " kbit/s", si->csd.tran_speed_kbit);
		else
			fprintf(out, "%" PRIu32 " Mbit/s", si->csd.tran_speed_kbit / 1000);
		fprintf(out, " per data line [card]\n");
		fprintf(out, "  command classes (CCC) 0x%03x:", si->csd.ccc);
		for (unsigned c = 0; c < 12; c++)
			if (si->csd.ccc & (1u << c))
				fprintf(out, " %u", c);
		fprintf(out, " [card]\n");
		fprintf(out, "  write protect: permanent %s, temporary %s [card]\n",
			yes_no(si->csd.perm_write_protect), yes_no(si->csd.tmp_write_protect));
	}
	if (si->has_cid || si->has_csd)
		fprintf(out, "  CRC7: CID %s, CSD %s [card]\n",
			sysinfo_crc_name(si->cid_crc), sysinfo_crc_name(si->csd_crc));
}

/* One queue limit; zero_means is printed for 0 when 0 means "none". */
static void t_value(FILE *out, const char *label, const struct sysinfo_value *v,
		    const char *zero_means, bool *first)
{
	char buf[32];

	if (!v->present)
		return;
	fprintf(out, "%s %s %s", *first ? "  queue:" : ",", label,
		!v->bytes && zero_means ? zero_means :
		units_format_bytes(v->bytes, buf, sizeof(buf)));
	*first = false;
}

/* The kernel's queue limits: what file systems and partitioners read. */
static void t_queue(FILE *out, const struct sysinfo *si)
{
	bool first = true;

	t_value(out, "logical block", &si->logical_block, NULL, &first);
	t_value(out, "physical block", &si->physical_block, NULL, &first);
	t_value(out, "minimum I/O", &si->minimum_io, NULL, &first);
	t_value(out, "optimal I/O", &si->optimal_io, "none", &first);
	t_value(out, "max request", &si->max_request, NULL, &first);
	t_value(out, "discard granularity", &si->discard_granularity,
		"none (no discard)", &first);
	if (si->discard_granularity.bytes)
		t_value(out, "discard max", &si->discard_max, NULL, &first);
	t_value(out, "alignment offset", &si->alignment_offset, NULL, &first);
	if (si->rotational.present)
		fprintf(out, "%s rotational %s", first ? "  queue:" : ",",
			yes_no(si->rotational.value));
	if (si->rotational.present || !first)
		fprintf(out, " [kernel]\n");
	if (si->read_only.present && si->read_only.value)
		fprintf(out, "  read-only: the kernel refuses writes (ro) [kernel]\n");
}

static void t_warnings(FILE *out, const struct sysinfo *si)
{
	char cap[320];

	capacity_warning(si, cap, sizeof(cap));
	if (cap[0])
		fprintf(out, "  warning: %s\n", cap);
}

void sysinfo_text(FILE *out, const struct sysinfo *si)
{
	t_first_line(out, si);
	if (si->kind == SYSINFO_KIND_SIM) {
		fprintf(out, "  simulated card %.*s: its truth is in list-sims\n",
			sim_name_length(si->name + 4), si->name + 4);
		return;
	}
	t_warnings(out, si);
	if (si->kind == SYSINFO_KIND_USB || si->registers_hidden)
		t_reader(out, si);
	if (si->backing_file[0])
		fprintf(out, "  backing file: %s [kernel]\n", si->backing_file);
	t_card(out, si);
	t_classes(out, si);
	t_ext_csd(out, si);
	t_interface(out, si);
	t_erase(out, si);
	t_queue(out, si);
}
