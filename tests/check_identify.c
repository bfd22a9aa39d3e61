/* check_identify.c - `flashprobe identify` through the built binary on
 * fake sysfs trees (an SD card in a native slot and its partition, the
 * same card whose block device is larger than its CSD says, an eMMC with
 * a readable EXT_CSD, a card behind a USB reader), simulated cards and bad
 * input; and the reader note in the probe's conclusion. */
#define _GNU_SOURCE	/* memmem */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev.h"
#include "jsonv.h"
#include "probe.h"
#include "report_probe.h"
#include "sim.h"
#include "sysinfo.h"
#include "testutil.h"
#include "tests.h"

#define USB_TREE "tests/data/sysfs/usb-reader"

/* The SanDisk SE32G of tests/data/sysfs/sdhc-au: CSD capacity 62333952
 * sectors, AU 4 MiB in its SD Status. */
#define SD_SECTORS 62333952ull
#define SD_PART_START 8192ull
#define SD_CARD "devices/pci0000:00/0000:00:14.7/mmc_host/mmc0/mmc0:0001"
#define SD_DISK SD_CARD "/block/mmcblk0"

/* The Samsung M8G1GC eMMC with an EXT_CSD set by hand (see emmc_tree). */
#define EMMC_SECTORS 15269888ull
#define EMMC_CARD "devices/platform/fe330000.mmc/mmc_host/mmc1/mmc1:0001"
#define EMMC_DISK EMMC_CARD "/block/mmcblk1"

struct attr {
	const char *path, *text;
};

static void put_all(const char *root, const char *dir, const struct attr *a, size_t n)
{
	char rel[512];

	for (size_t i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "%s/%s", dir, a[i].path);
		ck_assert_int_eq(tu_put_file(root, rel, a[i].text), 0);
	}
}

static void put_num(const char *root, const char *dir, const char *name,
		    unsigned long long v)
{
	char rel[512], text[32];

	snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	snprintf(text, sizeof(text), "%llu", v);
	ck_assert_int_eq(tu_put_file(root, rel, text), 0);
}

/* block/NAME, class/block/NAME and dev/block/MAJ:MIN as sysfs links
 * them; disk is the device directory below root. */
static void link_block(const char *root, const char *name, const char *dev,
		       const char *disk)
{
	char rel[256], target[512];

	snprintf(rel, sizeof(rel), "class/block/%s", name);
	snprintf(target, sizeof(target), "../../%s", disk);
	ck_assert_int_eq(tu_put_link(root, rel, target), 0);
	snprintf(rel, sizeof(rel), "dev/block/%s", dev);
	ck_assert_int_eq(tu_put_link(root, rel, target), 0);
	if (strchr(name, 'p'))		/* partitions have no block/ entry */
		return;
	snprintf(rel, sizeof(rel), "block/%s", name);
	snprintf(target, sizeof(target), "../%s", disk);
	ck_assert_int_eq(tu_put_link(root, rel, target), 0);
}

/* The queue limits a 6.x kernel shows for an SD card. */
static const struct attr sd_queue[] = {
	{ "queue/logical_block_size", "512" },
	{ "queue/physical_block_size", "512" },
	{ "queue/minimum_io_size", "512" },
	{ "queue/optimal_io_size", "0" },
	{ "queue/max_sectors_kb", "1024" },
	{ "queue/discard_granularity", "4194304" },
	{ "queue/discard_max_bytes", "4194304" },
	{ "queue/rotational", "0" },
	{ "removable", "0" },
	{ "ro", "0" },
	{ "alignment_offset", "0" },
};

/* An SD card in a native slot with one partition; the block device has
 * disk_sectors (SD_SECTORS: what the CSD says).  Returns the root. */
static char *sd_tree(unsigned long long disk_sectors)
{
	static const struct attr card[] = {
		{ "type", "SD" },
		{ "cid", "035344534533324780f1086bc000e344" },
		{ "csd", "400e00325b590000edc87f800a4040c2" },
		{ "scr", "0235800100000000" },
		{ "ssr", "8000000005000000040090000f051a00000000000000000000000000"
			 "000000000000000000000000000000000000000000000000000000"
			 "000000000000000000" },
		{ "name", "SE32G" }, { "manfid", "0x000003" }, { "oemid", "0x5344" },
		{ "serial", "0xf1086bc0" }, { "date", "03/2014" },
		{ "hwrev", "0x8" }, { "fwrev", "0x0" },
		{ "erase_size", "512" }, { "preferred_erase_size", "4194304" },
	};
	static const struct attr part[] = {
		{ "mmcblk0p1/partition", "1" }, { "mmcblk0p1/dev", "179:1" },
		{ "mmcblk0p1/start", "8192" }, { "mmcblk0p1/ro", "0" },
		{ "mmcblk0p1/alignment_offset", "0" },
	};
	char *root = strdup("/tmp/flashprobe-identify-XXXXXX");

	ck_assert_ptr_nonnull(root);
	ck_assert_ptr_nonnull(mkdtemp(root));
	put_all(root, SD_CARD, card, sizeof(card) / sizeof(card[0]));
	put_all(root, SD_DISK, sd_queue, sizeof(sd_queue) / sizeof(sd_queue[0]));
	ck_assert_int_eq(tu_put_file(root, SD_DISK "/dev", "179:0"), 0);
	put_num(root, SD_DISK, "size", disk_sectors);
	put_all(root, SD_DISK, part, sizeof(part) / sizeof(part[0]));
	put_num(root, SD_DISK, "mmcblk0p1/size", disk_sectors - SD_PART_START);
	ck_assert_int_eq(tu_put_link(root, SD_DISK "/device", "../../../mmc0:0001"), 0);
	link_block(root, "mmcblk0", "179:0", SD_DISK);
	link_block(root, "mmcblk0p1", "179:1", SD_DISK "/mmcblk0p1");
	return root;
}

/* An eMMC 5.1 whose EXT_CSD debugfs shows: SEC_COUNT = the disk size,
 * high-capacity erase groups of 1 MiB in use, write-protect groups of 8
 * of them, a 16 KiB super page, optimal read 16 KiB, write 64 KiB, trim
 * 1 MiB, and an 8-bit DDR bus. */
static char *emmc_tree(void)
{
	static const struct attr card[] = {
		{ "type", "MMC" },
		{ "cid", "1501004d384731474303dc0db061506f" },
		{ "csd", "d02701320f5903fff6dbffef8e40400d" },
		{ "name", "M8G1GC" }, { "rev", "0x8" },
		{ "erase_size", "1048576" }, { "preferred_erase_size", "4194304" },
	};
	char *root = strdup("/tmp/flashprobe-identify-XXXXXX");
	uint8_t ext[512] = { 0 };
	char hex[2 * sizeof(ext) + 1];

	ck_assert_ptr_nonnull(root);
	ck_assert_ptr_nonnull(mkdtemp(root));
	put_all(root, EMMC_CARD, card, sizeof(card) / sizeof(card[0]));
	put_all(root, EMMC_DISK, sd_queue, sizeof(sd_queue) / sizeof(sd_queue[0]));
	ck_assert_int_eq(tu_put_file(root, EMMC_DISK "/dev", "179:8"), 0);
	put_num(root, EMMC_DISK, "size", EMMC_SECTORS);
	ck_assert_int_eq(tu_put_link(root, EMMC_DISK "/device", "../../../mmc1:0001"), 0);
	link_block(root, "mmcblk1", "179:8", EMMC_DISK);
	ext[192] = 8;				/* EXT_CSD_REV: eMMC 5.1 */
	ext[212] = (uint8_t)EMMC_SECTORS;	/* SEC_COUNT, little endian */
	ext[213] = (uint8_t)(EMMC_SECTORS >> 8);
	ext[214] = (uint8_t)(EMMC_SECTORS >> 16);
	ext[175] = 1;				/* ERASE_GROUP_DEF */
	ext[224] = 2;				/* HC_ERASE_GRP_SIZE: 1 MiB */
	ext[221] = 8;				/* HC_WP_GRP_SIZE */
	ext[225] = 6;				/* SUPER_PAGE_SIZE: 16 KiB */
	ext[183] = 6;				/* BUS_WIDTH: 8-bit DDR */
	ext[266] = 4;				/* OPTIMAL_READ_SIZE */
	ext[265] = 16;				/* OPTIMAL_WRITE_SIZE */
	ext[264] = 9;				/* OPTIMAL_TRIM_UNIT_SIZE */
	for (size_t i = 0; i < sizeof(ext); i++)
		snprintf(hex + 2 * i, 3, "%02x", ext[i]);
	ck_assert_int_eq(tu_put_file(root, "kernel/debug/mmc1/mmc1:0001/ext_csd", hex), 0);
	return root;
}

static void identify(struct run_result *r, const char *root, const char *dev,
		     bool json)
{
	const char *argv[] = { "identify", "--sysfs-root", root, dev,
			       json ? "--json" : NULL, NULL };

	tu_run(r, argv);
	ck_assert_ptr_nonnull(r->out);
	ck_assert_ptr_nonnull(r->err);
	ck_assert_msg(r->status == 0, "identify %s in %s: status %d, %s", dev, root,
		      r->status, r->err);
	ck_assert_str_eq(r->err, "");
}

#define HAS(text, s) ck_assert_msg(strstr(text, s) != NULL, "missing \"%s\" in:\n%s", s, text)
#define STARTS(text, s) ck_assert_msg(strncmp(text, s, strlen(s)) == 0, \
				      "not starting with \"%s\":\n%s", s, text)
#define LACKS(text, s) ck_assert_msg(strstr(text, s) == NULL, "unexpected \"%s\" in:\n%s", s, text)

/* The whole stdout is one JSON document whose members are the schema
 * and identity. */
static struct jsonv *identity_doc(const char *out, const struct jsonv **id)
{
	struct jsonv *doc = jsonv_parse(out);

	ck_assert_msg(doc != NULL, "not one JSON document:\n%s", out);
	*id = jsonv_get(doc, "identity");
	ck_assert_ptr_nonnull(*id);
	ck_assert_str_eq(doc->child->key, "schema");
	ck_assert_ptr_eq(doc->child->next, *id);
	ck_assert_ptr_null((*id)->next);
	return doc;
}

static double num(const struct jsonv *id, const char *path)
{
	const struct jsonv *v = jsonv_get(id, path);

	ck_assert_msg(v && v->type == JSONV_NUMBER, "%s is not a number", path);
	return v->number;
}

static const char *str(const struct jsonv *id, const char *path)
{
	const struct jsonv *v = jsonv_get(id, path);

	ck_assert_msg(v && v->type == JSONV_STRING, "%s is not a string", path);
	return v->string;
}

static bool boolean(const struct jsonv *id, const char *path)
{
	const struct jsonv *v = jsonv_get(id, path);

	ck_assert_msg(v && v->type == JSONV_BOOL, "%s is not a boolean", path);
	return v->boolean;
}

static void is_null(const struct jsonv *id, const char *path)
{
	const struct jsonv *v = jsonv_get(id, path);

	ck_assert_msg(v && v->type == JSONV_NULL, "%s is not null", path);
}

START_TEST(test_sd_native_text)
{
	char *root = sd_tree(SD_SECTORS);
	struct run_result r;

	identify(&r, root, "mmcblk0", false);
	tu_rm_tree(root);
	STARTS(r.out, "identity: mmcblk0, SDHC card, 29.72GiB (31914983424 bytes) "
	       "[kernel]\n");
	HAS(r.out, "  card: SanDisk (manfid 0x03), OEM 0x5344 \"SD\", SE32G rev 8.0, "
	    "serial 0xf1086bc0, made 2014-03 [card]\n");
	HAS(r.out, "  SD spec 3.0X, class C10 U1 [card]\n");
	HAS(r.out, "  bus widths: 1-bit, 4-bit (SCR) [card]\n");
	HAS(r.out, "  bus width in use: 4-bit [card]\n");
	HAS(r.out, "  TRAN_SPEED 0x32: 25 Mbit/s per data line [card]\n");
	HAS(r.out, "  command classes (CCC) 0x5b5: 0 2 4 5 7 8 10 [card]\n");
	HAS(r.out, "  write protect: permanent no, temporary no [card]\n");
	HAS(r.out, "  CRC7: CID ok, CSD ok [card]\n");
	HAS(r.out, "  capacity: 29.72GiB (31914983424 bytes, CSD) [card] = the block "
	    "device's size [kernel]\n");
	HAS(r.out, "  AU size: 4MiB [card]\n");
	HAS(r.out, "  queue: logical block 512B, physical block 512B, minimum I/O 512B, "
	    "optimal I/O none, max request 1MiB, discard granularity 4MiB, discard max "
	    "4MiB, alignment offset 0B, rotational no [kernel]\n");
	LACKS(r.out, "warning");
	LACKS(r.out, "USB");
	LACKS(r.out, "eMMC");
	tu_run_free(&r);
	free(root);
}
END_TEST

START_TEST(test_sd_native_json)
{
	char *root = sd_tree(SD_SECTORS);
	const struct jsonv *id, *v;
	struct run_result r;
	struct jsonv *doc;

	identify(&r, root, "mmcblk0", true);
	tu_rm_tree(root);
	doc = identity_doc(r.out, &id);
	ck_assert_str_eq(str(id, "kind"), "sdhc");
	ck_assert_str_eq(str(id, "manufacturer.value"), "SanDisk");
	ck_assert_str_eq(str(id, "manufacturer.source"), "card");
	ck_assert_double_eq(num(id, "serial.value"), 0xf1086bc0u);
	ck_assert_str_eq(str(id, "date.value"), "2014-03");
	ck_assert_double_eq(num(id, "capacity_bytes.value"), SD_SECTORS * 512);
	ck_assert_double_eq(num(id, "disk_size_bytes.value"), SD_SECTORS * 512);
	ck_assert(!boolean(id, "capacity_mismatch"));
	ck_assert_uint_eq(jsonv_len(jsonv_get(id, "warnings")), 0);
	ck_assert_double_eq(num(id, "speed_class.value"), 10);
	ck_assert_double_eq(num(id, "uhs_speed_grade.value"), 1);
	ck_assert_double_eq(num(id, "au_size_bytes.value"), 4 << 20);
	ck_assert_str_eq(str(id, "au_size_bytes.source"), "card");
	v = jsonv_get(id, "bus_widths.value");
	ck_assert_uint_eq(jsonv_len(v), 2);
	ck_assert_double_eq(jsonv_at(v, 0)->number, 1);
	ck_assert_double_eq(jsonv_at(v, 1)->number, 4);
	ck_assert_double_eq(num(id, "bus_width_in_use.value"), 4);
	ck_assert_double_eq(num(id, "tran_speed_kbit_per_s.value"), 25000);
	ck_assert_str_eq(str(id, "tran_speed_kbit_per_s.raw"), "0x32");
	ck_assert_str_eq(str(id, "ccc.hex"), "0x5b5");
	ck_assert_uint_eq(jsonv_len(jsonv_get(id, "ccc.classes")), 7);
	ck_assert(!boolean(id, "perm_write_protect.value"));
	ck_assert_str_eq(str(id, "tmp_write_protect.source"), "card");
	ck_assert_str_eq(str(id, "cid_crc.value"), "ok");
	ck_assert_str_eq(str(id, "csd_crc.value"), "ok");
	ck_assert_double_eq(num(id, "logical_block_bytes.value"), 512);
	ck_assert_double_eq(num(id, "minimum_io_bytes.value"), 512);
	ck_assert_str_eq(str(id, "minimum_io_bytes.source"), "kernel");
	ck_assert_double_eq(num(id, "optimal_io_bytes.value"), 0);
	ck_assert_double_eq(num(id, "max_request_bytes.value"), 1 << 20);
	ck_assert_double_eq(num(id, "discard_granularity_bytes.value"), 4 << 20);
	ck_assert_double_eq(num(id, "alignment_offset_bytes.value"), 0);
	ck_assert(!boolean(id, "rotational.value"));
	ck_assert(!boolean(id, "read_only.value"));
	ck_assert(!boolean(id, "registers_hidden"));
	is_null(id, "emmc_version");
	is_null(id, "optimal_write_bytes");
	is_null(id, "reader");
	jsonv_free(doc);
	tu_run_free(&r);
	free(root);
}
END_TEST

/* A partition, named as a device path: its size, the disk's identity,
 * and the CSD compared with the disk, not with the partition. */
START_TEST(test_partition)
{
	char *root = sd_tree(SD_SECTORS);
	const struct jsonv *id;
	struct run_result r;
	struct jsonv *doc;

	identify(&r, root, "/dev/mmcblk0p1", false);
	STARTS(r.out, "identity: mmcblk0p1 (partition of mmcblk0), SDHC card, ");
	HAS(r.out, "(31910789120 bytes) [kernel]\n");
	HAS(r.out, "= the block device's size [kernel]");
	HAS(r.out, "SE32G");
	LACKS(r.out, "warning");
	tu_run_free(&r);

	identify(&r, root, "/dev/mmcblk0p1", true);
	tu_rm_tree(root);
	doc = identity_doc(r.out, &id);
	ck_assert_str_eq(str(id, "device"), "mmcblk0p1");
	ck_assert_str_eq(str(id, "partition_of"), "mmcblk0");
	ck_assert_str_eq(str(id, "dev"), "179:1");
	ck_assert_double_eq(num(id, "size_bytes.value"), (SD_SECTORS - SD_PART_START) * 512);
	ck_assert_double_eq(num(id, "disk_size_bytes.value"), SD_SECTORS * 512);
	ck_assert(!boolean(id, "capacity_mismatch"));
	ck_assert_str_eq(str(id, "product_name.value"), "SE32G");
	ck_assert_double_eq(num(id, "max_request_bytes.value"), 1 << 20);
	jsonv_free(doc);
	tu_run_free(&r);
	free(root);
}
END_TEST

/* The block device is twice what the CSD says: a warning line first, the
 * capacity line says so, the JSON flags it; still exit 0. */
START_TEST(test_capacity_mismatch)
{
	char *root = sd_tree(2 * SD_SECTORS);
	const struct jsonv *id;
	struct run_result r;
	struct jsonv *doc;

	identify(&r, root, "mmcblk0", false);
	HAS(r.out, "\n  warning: the card's CSD says 29.72GiB (31914983424 bytes) but "
	    "the block device has 59.44GiB (63829966848 bytes)");
	HAS(r.out, "flashprobe capacity --write");
	HAS(r.out, "  capacity: 29.72GiB (31914983424 bytes, CSD) [card] NOT the block "
	    "device's size\n");
	tu_run_free(&r);

	/* from a partition, the disk's size is what counts */
	identify(&r, root, "mmcblk0p1", true);
	tu_rm_tree(root);
	doc = identity_doc(r.out, &id);
	ck_assert(boolean(id, "capacity_mismatch"));
	ck_assert_uint_eq(jsonv_len(jsonv_get(id, "warnings")), 1);
	HAS(jsonv_at(jsonv_get(id, "warnings"), 0)->string, "CSD says 29.72GiB");
	ck_assert_double_eq(num(id, "disk_size_bytes.value"), 2 * SD_SECTORS * 512);
	jsonv_free(doc);
	tu_run_free(&r);
	free(root);
}
END_TEST

START_TEST(test_emmc)
{
	char *root = emmc_tree();
	const struct jsonv *id;
	struct run_result r;
	struct jsonv *doc;

	identify(&r, root, "mmcblk1", false);
	HAS(r.out, "identity: mmcblk1, eMMC, 7.28GiB (7818182656 bytes) [kernel]\n");
	HAS(r.out, "  card: Samsung (manfid 0x15), OEM 0x0100, M8G1GC rev 0.3, serial "
	    "0xdc0db061, made 2013-05, BGA package [card]\n");
	HAS(r.out, "  eMMC 5.1 (EXT_CSD_REV 8) [card]\n");
	HAS(r.out, "  EXT_CSD: high-capacity erase groups in use, write-protect group "
	    "8MiB, super page 16KiB [card]\n");
	HAS(r.out, "  EXT_CSD preferred sizes: read 16KiB, write 64KiB, trim 1MiB [card]\n");
	HAS(r.out, "  bus width in use: 8-bit DDR [card]\n");
	HAS(r.out, "  TRAN_SPEED 0x32: 26 Mbit/s per data line [card]\n");
	HAS(r.out, "  capacity: 7.28GiB (7818182656 bytes, EXT_CSD) [card] = the block "
	    "device's size [kernel]\n");
	HAS(r.out, "  erase size: 1MiB [card]\n");
	HAS(r.out, "  high-capacity erase group: 1MiB [card]\n");
	LACKS(r.out, "bus widths:");	/* the SCR is SD's */
	LACKS(r.out, "warning");
	tu_run_free(&r);

	identify(&r, root, "mmcblk1", true);
	tu_rm_tree(root);
	doc = identity_doc(r.out, &id);
	ck_assert_str_eq(str(id, "kind"), "emmc");
	ck_assert_str_eq(str(id, "emmc_version.value"), "5.1");
	ck_assert_str_eq(str(id, "emmc_version.source"), "card");
	ck_assert_double_eq(num(id, "ext_csd_rev.value"), 8);
	ck_assert(boolean(id, "hc_erase_group_enabled.value"));
	ck_assert_double_eq(num(id, "hc_erase_group_bytes.value"), 1 << 20);
	ck_assert_double_eq(num(id, "hc_wp_group_bytes.value"), 8 << 20);
	ck_assert_double_eq(num(id, "super_page_bytes.value"), 16384);
	ck_assert_double_eq(num(id, "optimal_read_bytes.value"), 16384);
	ck_assert_double_eq(num(id, "optimal_write_bytes.value"), 65536);
	ck_assert_double_eq(num(id, "optimal_trim_bytes.value"), 1 << 20);
	ck_assert_double_eq(num(id, "bus_width_in_use.value"), 8);
	ck_assert_double_eq(num(id, "tran_speed_kbit_per_s.value"), 26000);
	ck_assert_str_eq(str(id, "package.value"), "BGA");
	ck_assert(!boolean(id, "capacity_mismatch"));
	is_null(id, "bus_widths");
	is_null(id, "speed_class");
	jsonv_free(doc);
	tu_run_free(&r);
	free(root);
}
END_TEST

/* Behind a USB reader: the reader is named, the note says what it costs
 * and what to do, nothing claims to come from the card. */
START_TEST(test_usb_reader)
{
	const struct jsonv *id, *w;
	struct run_result r;
	struct jsonv *doc;

	identify(&r, USB_TREE, "sdc", false);
	HAS(r.out, "identity: sdc, USB storage, 3.70GiB (3980394496 bytes) [kernel]\n");
	HAS(r.out, "  reader: Generic SD/MMC Reader (USB 1234:5678 \"Card Reader\") [kernel]\n");
	HAS(r.out, "  note: USB transport, no MMC registers: a card behind a USB reader "
	    "hides its registers (CID, CSD, SD Status) and timings through the reader "
	    "hide small page steps; for what the card says and its finer geometry use "
	    "a native SD slot");
	HAS(r.out, "discard granularity none (no discard), rotational yes [kernel]\n");
	LACKS(r.out, "[card]");
	LACKS(r.out, "CRC7");
	tu_run_free(&r);

	identify(&r, USB_TREE, "sdc", true);
	doc = identity_doc(r.out, &id);
	ck_assert(boolean(id, "registers_hidden"));
	ck_assert(boolean(id, "usb"));
	ck_assert(boolean(id, "rotational.value"));
	ck_assert_str_eq(str(id, "reader.usb_id.value"), "1234:5678");
	w = jsonv_get(id, "warnings");
	ck_assert_uint_eq(jsonv_len(w), 1);
	HAS(jsonv_at(w, 0)->string, "native SD slot");
	is_null(id, "capacity_mismatch");
	is_null(id, "manfid");
	is_null(id, "ccc");
	is_null(id, "cid_crc");
	is_null(id, "perm_write_protect");
	is_null(id, "bus_widths");
	jsonv_free(doc);
	tu_run_free(&r);
}
END_TEST

START_TEST(test_sim_and_image)
{
	const struct jsonv *id;
	struct run_result r;
	struct jsonv *doc;
	char *img = tu_make_image(1 << 20, 7);

	tu_run(&r, (const char *const[]){ "identify", "sim:seed", NULL });
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "identity: sim:seed, simulated card\n"
			 "  simulated card seed: its truth is in list-sims\n");
	ck_assert_str_eq(r.err, "");
	tu_run_free(&r);
	tu_run(&r, (const char *const[]){ "identify", "sim:sandisk-24m,seed=5", NULL });
	ck_assert_int_eq(r.status, 0);
	HAS(r.out, "  simulated card sandisk-24m: its truth is in list-sims\n");
	tu_run_free(&r);
	tu_run(&r, (const char *const[]){ "identify", "--json", "sim:seed", NULL });
	ck_assert_int_eq(r.status, 0);
	doc = identity_doc(r.out, &id);
	ck_assert_str_eq(str(id, "kind"), "sim");
	is_null(id, "size_bytes");
	jsonv_free(doc);
	tu_run_free(&r);

	/* an image file: its size, nothing else, and the file untouched */
	ck_assert_ptr_nonnull(img);
	uint64_t sum = tu_checksum(img);
	tu_run(&r, (const char *const[]){ "identify", img, NULL });
	ck_assert_int_eq(r.status, 0);
	HAS(r.out, ", image file, 1MiB (1048576 bytes) [kernel]\n");
	ck_assert_uint_eq(tu_checksum(img), sum);
	tu_run_free(&r);
	unlink(img);
	free(img);
}
END_TEST

/* Bad input: exit 2, one line of reason (and maybe the --help pointer),
 * nothing on stdout. */
static const struct bad_case {
	const char *args[6];
	const char *expect;
} bad_cases[] = {
	{ { "identify", NULL }, "no device given" },
	{ { "identify", "--sysfs-root", "/nonexistent/sysfs", "mmcblk0", NULL },
	  "--sysfs-root '/nonexistent/sysfs' is not a directory" },
	{ { "identify", "--sysfs-root", "README.md", "mmcblk0", NULL },
	  "is not a directory" },
	{ { "identify", "--sysfs-root=", "mmcblk0", NULL }, "needs a path" },
	{ { "identify", "--sysfs-root=/nonexistent", "sim:seed", NULL }, "is not a directory" },
	{ { "identify", "--sysfs-root", "tests/data/sysfs/sd-seed", "mmcblk7", NULL },
	  "'mmcblk7' is not in the sysfs tree 'tests/data/sysfs/sd-seed'" },
	{ { "identify", "/nonexistent/flashprobe-dev", NULL }, "cannot identify" },
	{ { "identify", "/tmp", NULL }, "is not a block device, an image file" },
	{ { "identify", "sim:no-such-card", NULL }, "unknown simulated card" },
	{ { "identify", "--write", "sim:seed", NULL }, "(identify only reads)" },
	{ { "align", "--sysfs-root", "tests/data/sysfs/sd-seed", "sim:seed", NULL },
	  "--sysfs-root only applies to identify" },
};

START_TEST(test_bad_input)
{
	const struct bad_case *bc = &bad_cases[_i];
	struct run_result r;
	const char *nl;

	tu_run(&r, bc->args);
	ck_assert_msg(r.status == 2, "%s: status %d", bc->expect, r.status);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strncmp(r.err, "flashprobe: ", 12) == 0, "%s", r.err);
	nl = strchr(r.err, '\n');
	ck_assert_ptr_nonnull(nl);
	ck_assert_msg(memmem(r.err, (size_t)(nl - r.err), bc->expect,
			     strlen(bc->expect)) != NULL, "expected '%s' in the first "
		      "line of: %s", bc->expect, r.err);
	ck_assert_msg(!nl[1] || strncmp(nl + 1, "Try 'flashprobe --help'", 23) == 0,
		      "more than one line of reason: %s", r.err);
	tu_run_free(&r);
}
END_TEST

/* The probe's text for r with the identity read from tree/name. */
static char *probe_text_with(struct fp_dev *d, struct probe_result *r,
			     const char *tree, const char *name)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_int_eq(sysinfo_read_name(name, tree, &r->identity), 0);
	r->identity_read = true;
	ck_assert_ptr_nonnull(f);
	report_probe_text(f, d, r);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

/* The probe's conclusion repeats the reader note, before the advice; a
 * card in a native slot gets none. */
START_TEST(test_probe_conclusion_reader)
{
	struct probe_result *r = calloc(1, sizeof(*r));
	struct probe_opts o = { 0 };
	struct fp_dev *d;
	char *t;
	const char *concl, *advice, *note;

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(sim_open(sim_profile_find("seed"), &d), 0);
	o.device = "sim:seed";
	o.sysfs_root = "/sys";
	o.protect = tu_allow_area;
	o.protect_arg = d;
	o.quick = true;
	ck_assert_int_eq(probe_run(d, &o, r), 0);

	t = probe_text_with(d, r, USB_TREE, "sdc");
	concl = strstr(t, "\nConclusion\n");
	advice = strstr(t, "\nAdvice\n");
	note = strstr(t, "  note: USB transport, no MMC registers");
	ck_assert_ptr_nonnull(concl);
	ck_assert_ptr_nonnull(advice);
	ck_assert_msg(note && note > concl && note < advice, "%s", t);
	HAS(note, "timings through the reader hide small page steps");
	HAS(note, "use a native SD slot");
	free(t);

	t = probe_text_with(d, r, "tests/data/sysfs/sd-seed", "mmcblk0");
	LACKS(t, "USB transport");
	free(t);
	fp_dev_close(d);
	free(r);
}
END_TEST

Suite *identify_suite(void)
{
	Suite *s = suite_create("identify");
	TCase *trees = tcase_create("trees");
	TCase *input = tcase_create("input");
	TCase *probe = tcase_create("probe");

	tcase_add_test(trees, test_sd_native_text);
	tcase_add_test(trees, test_sd_native_json);
	tcase_add_test(trees, test_partition);
	tcase_add_test(trees, test_capacity_mismatch);
	tcase_add_test(trees, test_emmc);
	tcase_add_test(trees, test_usb_reader);
	tcase_add_test(input, test_sim_and_image);
	tcase_add_loop_test(input, test_bad_input, 0,
			    (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(probe, test_probe_conclusion_reader);
	tcase_set_timeout(probe, 60);
	suite_add_tcase(s, trees);
	suite_add_tcase(s, input);
	suite_add_tcase(s, probe);
	return s;
}
