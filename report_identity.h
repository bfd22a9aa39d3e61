/* report_identity.h - the probe's "identity" step (sysinfo.h) as text for
 * people and JSON for scripts.  Every value is printed with its source:
 * "card" (decoded from the card's registers), "kernel" (what Linux
 * reports) or "kernel_guess" (a value Linux made up).  Nothing here reads
 * devices. */
#ifndef FLASHPROBE_REPORT_IDENTITY_H
#define FLASHPROBE_REPORT_IDENTITY_H

#include <stdio.h>

struct json_writer;
struct sysinfo;

/* The "identity" object, written as a member (key "identity") of the
 * enclosing object.  Sizes are integer bytes.  A value someone reported is
 * {"value": ..., "source": "card" | "kernel" | "kernel_guess"} (with a few
 * extra members, e.g. "hex"), a value nobody reported is null; keys are
 * the same for every kind of device:
 *   device, kind, description, sysfs_path, dev ("MAJ:MIN"), partition_of,
 *   usb, registers_hidden, size_bytes, logical_block_bytes,
 *   physical_block_bytes, discard_granularity_bytes, discard_max_bytes,
 *   rotational, removable, reader {vendor, model, usb_id, usb_product},
 *   backing_file, card_type, manfid, manufacturer, oemid, product_name,
 *   revision, serial, date, kernel_date, package (MMC CBX), ext_csd_rev,
 *   sd_spec, speed_class, uhs_speed_grade, video_speed_class,
 *   app_perf_class, capacity_bytes, erase_size_bytes,
 *   preferred_erase_size_bytes (+ unverified, linux_guess_bytes),
 *   au_size_bytes (+ via_kernel), erase_sector_bytes, erase_group_bytes,
 *   hc_erase_group_bytes, registers {cid, csd, scr, ssr}, and
 *   minimum_io_bytes, optimal_io_bytes, max_request_bytes,
 *   alignment_offset_bytes, disk_size_bytes, read_only, bus_widths
 *   (value: a list), bus_width_in_use, tran_speed_kbit_per_s (+ raw), ccc
 *   (+ hex, classes), perm_write_protect, tmp_write_protect, cid_crc,
 *   csd_crc ("ok", "bad", "not_passed"), emmc_version,
 *   hc_erase_group_enabled, hc_wp_group_bytes, super_page_bytes,
 *   optimal_read_bytes, optimal_write_bytes, optimal_trim_bytes;
 *   capacity_mismatch (a bool, null when not comparable) and warnings (a
 *   list of sentences: the capacity mismatch, the USB reader note). */
void sysinfo_json(struct json_writer *w, const struct sysinfo *si);

/* A first line naming the device, its kind and size, then "warning:"
 * lines, then one indented line per known fact, each ending in its source
 * in brackets (a simulated card gets one line pointing to list-sims), e.g.
 *   identity: mmcblk0, SDHC card, 3.71GiB (3980394496 bytes) [kernel]
 *     card: Kingston (manfid 0x41), OEM 0x3432 "42", SD4GB rev 3.0, ...
 *     preferred erase size: 4MiB [kernel_guess] ...
 * For a USB reader a line says the card's registers are hidden behind it. */
void sysinfo_text(FILE *out, const struct sysinfo *si);

/* What a USB reader costs (registers hidden, small page steps lost in
 * the timings) and what to do instead, one sentence; NULL when the card's
 * registers are visible.  The probe's conclusion repeats it. */
const char *report_identity_reader_note(const struct sysinfo *si);

#endif
