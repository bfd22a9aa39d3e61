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
 *   hc_erase_group_bytes, registers {cid, csd, scr, ssr}. */
void sysinfo_json(struct json_writer *w, const struct sysinfo *si);

/* A first line naming the device, its kind and size, then one indented
 * line per known fact, each ending in its source in brackets, e.g.
 *   identity: mmcblk0, SDHC card, 3.71GiB (3980394496 bytes) [kernel]
 *     card: Kingston (manfid 0x41), OEM 0x3432 "42", SD4GB rev 3.0, ...
 *     preferred erase size: 4MiB [kernel_guess] ...
 * For a USB reader a line says the card's registers are hidden behind it. */
void sysinfo_text(FILE *out, const struct sysinfo *si);

#endif
