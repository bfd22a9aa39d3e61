/* sysinfo.h - what the card and the kernel say about a device, before any
 * timing: the probe's "identity" step.
 *
 * For a block device this reads sysfs (the block device's size and queue
 * limits and, for SD/MMC cards on a native host, the card's registers as
 * Linux exposes them under device/: cid, csd, scr, ssr, erase_size,
 * preferred_erase_size, ...) and decodes the registers itself.  Every
 * value carries where it came from:
 *
 *   card          the card's own registers (CID, CSD, SCR, SD Status,
 *                 EXT_CSD), decoded here;
 *   kernel        what Linux reports (sizes, queue limits, attributes we
 *                 cannot tie to a register);
 *   kernel_guess  a value Linux made up: preferred_erase_size is the SD
 *                 card's AU size when the card reports one, otherwise a
 *                 guess from the capacity (4 MiB for cards of 1 GiB and
 *                 more), see sysinfo_linux_pref_erase_guess().
 *
 * Behind a USB reader the card's registers are not visible at all; the
 * result says so (registers_hidden) instead of guessing.
 *
 * Pure library: nothing here prints or exits; errors are negative errno
 * values.  Text and JSON output live in report_identity.c.
 */
#ifndef FLASHPROBE_SYSINFO_H
#define FLASHPROBE_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sysinfo_kind {
	SYSINFO_KIND_UNKNOWN = 0,
	SYSINFO_KIND_SD,	/* SDSC: CSD structure 1.0, up to 2 GB */
	SYSINFO_KIND_SDHC,	/* CSD 2.0, C_SIZE < 0xFFFF */
	SYSINFO_KIND_SDXC,	/* CSD 2.0, C_SIZE >= 0xFFFF (as Linux decides) */
	SYSINFO_KIND_SDUC,	/* CSD 3.0 */
	SYSINFO_KIND_MMC,	/* MMC card (CID CBX "card", or pre-4.x) */
	SYSINFO_KIND_EMMC,	/* embedded MMC: CID CBX BGA or POP */
	SYSINFO_KIND_USB,	/* USB mass storage: stick or card reader */
	SYSINFO_KIND_LOOP,	/* loop device */
	SYSINFO_KIND_VIRTUAL,	/* other /sys/devices/virtual block device */
	SYSINFO_KIND_BLOCK,	/* any other block device (SATA, NVMe, ...) */
	SYSINFO_KIND_IMAGE,	/* a regular file */
	SYSINFO_KIND_SIM,	/* "sim:..." simulated card */
};

enum sysinfo_source {
	SYSINFO_SRC_NONE = 0,
	SYSINFO_SRC_CARD,		/* "card" */
	SYSINFO_SRC_KERNEL,		/* "kernel" */
	SYSINFO_SRC_KERNEL_GUESS,	/* "kernel_guess" */
	SYSINFO_SRC_MEASURED,		/* "measured": for the probe's own
					 * results; sysinfo never sets it */
};

/* A size with its provenance.  present is false when nobody reported it
 * (then bytes is 0 and source SYSINFO_SRC_NONE). */
struct sysinfo_value {
	uint64_t bytes;
	enum sysinfo_source source;
	bool present;
};

/* A yes/no attribute with its provenance. */
struct sysinfo_flag {
	bool value;
	enum sysinfo_source source;
	bool present;
};

/* ---------------------------------------------------------------- */
/* Register decoders.  Registers are given most significant byte first,
 * exactly as the sysfs hex strings read (cid "41343253...": byte 0 holds
 * bits 127..120).  Bit numbers below are the specifications' (SD Physical
 * Layer Simplified Specification, JEDEC JESD84 for MMC). */

/* Bits [lsb + width - 1 : lsb] of a reg_bytes-long register; width <= 32.
 * Bits beyond the register read as 0. */
uint32_t sysinfo_reg_bits(const uint8_t *reg, size_t reg_bytes,
			  unsigned lsb, unsigned width);

/* Card Identification register. */
struct sysinfo_cid {
	bool mmc;		/* decoded with the MMC layout */
	uint8_t manfid;		/* MID [127:120] */
	uint16_t oemid;		/* OID [119:104]; for MMC the same 16 bits
				 * Linux reports (reserved/BIN, CBX, OID) */
	uint8_t mmc_oid;	/* MMC: OID [111:104] */
	uint8_t mmc_cbx;	/* MMC: CBX [113:112] 0 card, 1 BGA, 2 POP */
	char name[7];		/* PNM: 5 characters (SD) or 6 (MMC) */
	uint8_t prv;		/* PRV: hardware (high) and firmware (low)
				 * revision nibbles */
	uint32_t serial;	/* PSN */
	unsigned year;		/* MDT, with the year offsets applied */
	unsigned month;		/* 1..12 (0 or >12 if the card says so) */
	uint8_t crc;		/* CRC7 [7:1] */
};

/* SD layout: MID, OID (2 chars), PNM (5), PRV, PSN, MDT [19:8] = year
 * since 2000 and month.  Returns 0 (every bit pattern decodes). */
int sysinfo_decode_cid_sd(const uint8_t cid[16], struct sysinfo_cid *out);

/* MMC/eMMC layout (MMC 2.0 and later): MID, CBX, OID, PNM (6), PRV,
 * PSN, MDT [15:8] = month and a 4-bit year.  The year is 1997 + y; from
 * EXT_CSD_REV 5 (eMMC 4.41) years before 2010 move up by 16 (JESD84-B451),
 * and from EXT_CSD_REV 9 years before 2023 move up by 16 again (JESD84-B51B)
 * - the rules Linux applies.  ext_csd_rev 0 means unknown (no shift).
 * Returns 0. */
int sysinfo_decode_cid_mmc(const uint8_t cid[16], unsigned ext_csd_rev,
			   struct sysinfo_cid *out);

/* Card Specific Data register. */
struct sysinfo_csd {
	bool mmc;			/* decoded with the MMC layout */
	unsigned structure;		/* CSD_STRUCTURE [127:126] */
	unsigned spec_vers;		/* MMC SPEC_VERS [125:122] */
	unsigned tran_speed;		/* TRAN_SPEED [103:96], raw */
	uint32_t tran_speed_kbit;	/* decoded: max rate per data line,
					 * kbit/s (0 if reserved) */
	unsigned ccc;			/* card command classes [95:84] */
	unsigned read_bl_len;		/* log2 of the read block, bytes */
	unsigned write_bl_len;		/* log2 of the write block, bytes */
	uint32_t c_size;
	unsigned c_size_mult;		/* CSD 1.0 / MMC only */
	uint64_t capacity_bytes;	/* 0 when the CSD does not hold it
					 * (MMC above 2 GB: EXT_CSD SEC_COUNT) */
	bool erase_blk_en;		/* SD 1.0: 512-byte erase allowed */
	uint64_t sector_bytes;		/* SD 1.0: (SECTOR_SIZE + 1) write
					 * blocks, the card's erasable sector */
	unsigned erase_grp_size;	/* MMC ERASE_GRP_SIZE [46:42] */
	unsigned erase_grp_mult;	/* MMC ERASE_GRP_MULT [41:37] */
	uint64_t erase_bytes;		/* smallest erase unit, as Linux
					 * derives its erase_size from the CSD:
					 * SD 1.0 ERASE_BLK_EN ? 512 : sector;
					 * SD 2.0/3.0 512; MMC erase group */
	bool perm_write_protect;
	bool tmp_write_protect;
};

/* SD CSD 1.0 (SDSC), 2.0 (SDHC/SDXC: capacity (C_SIZE+1) * 512 KiB) and
 * 3.0 (SDUC, 28-bit C_SIZE).  -EINVAL for the reserved structure 3. */
int sysinfo_decode_csd_sd(const uint8_t csd[16], struct sysinfo_csd *out);

/* MMC/eMMC CSD: capacity (C_SIZE+1) << (C_SIZE_MULT+2) read blocks,
 * left 0 when C_SIZE is 0xFFF (the card is larger than 2 GB and its size
 * is in EXT_CSD); erase group (ERASE_GRP_SIZE+1) * (ERASE_GRP_MULT+1)
 * write blocks.  Returns 0. */
int sysinfo_decode_csd_mmc(const uint8_t csd[16], struct sysinfo_csd *out);

/* SD Configuration Register (64 bits). */
struct sysinfo_scr {
	unsigned structure;	/* SCR_STRUCTURE [63:60] */
	unsigned sd_spec;	/* [59:56] */
	bool erased_ones;	/* DATA_STAT_AFTER_ERASE [55] */
	unsigned security;	/* SD_SECURITY [54:52] */
	unsigned bus_widths;	/* SD_BUS_WIDTHS [51:48] */
	bool sd_spec3;		/* [47] */
	bool sd_spec4;		/* [42] */
	unsigned sd_specx;	/* [41:38] */
	unsigned cmd_support;	/* [35:32] (CMD_SUPPORT incl. CMD48/49/58/59) */
	const char *version;	/* "1.0", "1.10", "2.00", "3.0X", "4.XX",
				 * "5.XX" .. "9.XX", or "unknown" */
};

/* Returns 0, or -EINVAL for an unknown SCR_STRUCTURE. */
int sysinfo_decode_scr(const uint8_t scr[8], struct sysinfo_scr *out);

/* SD Status (512 bits, ACMD13), the register holding the AU size. */
struct sysinfo_ssr {
	unsigned bus_width;		/* DAT_BUS_WIDTH: 0 1-bit, 2 4-bit */
	unsigned card_type;		/* SD_CARD_TYPE */
	uint32_t protected_area;	/* SIZE_OF_PROTECTED_AREA, raw */
	unsigned speed_class;		/* SPEED_CLASS: 0,1,2,3,4 = C0,2,4,6,10 */
	unsigned performance_move;	/* MB/s, 0 = sequential write */
	unsigned au_code;		/* AU_SIZE [431:428] */
	uint64_t au_bytes;		/* decoded, 0 if none or invalid */
	bool au_invalid;		/* code above 9 on a pre-3.0 card */
	unsigned erase_size_aus;	/* ERASE_SIZE: AUs per erase timing */
	unsigned erase_timeout_s;	/* ERASE_TIMEOUT */
	unsigned erase_offset_s;	/* ERASE_OFFSET */
	unsigned uhs_speed_grade;	/* 0, 1 = U1, 3 = U3 */
	unsigned uhs_au_code;		/* UHS_AU_SIZE */
	uint64_t uhs_au_bytes;
	unsigned video_speed_class;	/* V6 .. V90 */
	unsigned app_perf_class;	/* 0, 1 = A1, 2 = A2 */
	bool discard_support;
	bool fule_support;
};

/* The AU_SIZE code table: 0 none, 1 16 KiB ... 9 4 MiB, 0xA 8 MiB,
 * 0xB 12 MiB, 0xC 16 MiB, 0xD 24 MiB, 0xE 32 MiB, 0xF 64 MiB.  Codes
 * above 9 are defined from SD 3.00 on: like Linux, a card without
 * sd_spec3 reporting one gets au_invalid.  Returns 0. */
int sysinfo_decode_ssr(const uint8_t ssr[64], bool sd_spec3,
		       struct sysinfo_ssr *out);

/* Bytes for an AU_SIZE code (0 for 0 and out-of-range codes). */
uint64_t sysinfo_au_code_bytes(unsigned code);

/* The few EXT_CSD bytes the identity needs (eMMC, from debugfs). */
struct sysinfo_ext_csd {
	unsigned rev;			/* EXT_CSD_REV [192] */
	uint64_t sec_count;		/* SEC_COUNT [215:212], 512-byte sectors */
	unsigned erase_group_def;	/* ERASE_GROUP_DEF [175] */
	unsigned hc_erase_grp_size;	/* HC_ERASE_GRP_SIZE [224], 512 KiB units */
	unsigned hc_wp_grp_size;	/* HC_WP_GRP_SIZE [221] */
	uint64_t hc_erase_bytes;	/* hc_erase_grp_size * 512 KiB */
	uint64_t hc_wp_bytes;		/* hc_wp_grp_size erase groups */
	unsigned bus_width;		/* BUS_WIDTH [183]: 0 1-bit, 1 4-bit,
					 * 2 8-bit, 5 4-bit DDR, 6 8-bit DDR */
	unsigned acc_size;		/* ACC_SIZE [225], SUPER_PAGE_SIZE in
					 * bits [3:0] */
	uint64_t super_page_bytes;	/* 512 << (SUPER_PAGE_SIZE - 1), 0 if 0 */
	/* eMMC 5.0 (EXT_CSD_REV 7) on, else 0: */
	uint64_t optimal_read_bytes;	/* OPTIMAL_READ_SIZE [266] x 4 KiB */
	uint64_t optimal_write_bytes;	/* OPTIMAL_WRITE_SIZE [265] x 4 KiB */
	uint64_t optimal_trim_bytes;	/* OPTIMAL_TRIM_UNIT_SIZE [264]:
					 * 4 KiB << (N - 1) */
};

/* Returns 0. */
int sysinfo_decode_ext_csd(const uint8_t ext_csd[512],
			   struct sysinfo_ext_csd *out);

/* The eMMC version an EXT_CSD_REV stands for: 0 "4.0", 1 "4.1",
 * 2 "4.2", 3 "4.3", 5 "4.41", 6 "4.5", 7 "5.0", 8 "5.1", 9 "5.1B";
 * NULL for 4 (obsolete) and unknown revisions. */
const char *sysinfo_emmc_version(unsigned ext_csd_rev);

/* The CRC7 (x^7 + x^3 + 1) over n bytes, as CID and CSD carry it in bits
 * [7:1]. */
uint8_t sysinfo_crc7(const uint8_t *data, size_t n);

/* Whether a CID or CSD as sysfs shows it carries a good CRC. */
enum sysinfo_crc {
	SYSINFO_CRC_UNKNOWN = 0,	/* no register */
	SYSINFO_CRC_OK,			/* CRC7 of bytes 0..14 matches */
	SYSINFO_CRC_BAD,		/* it does not */
	SYSINFO_CRC_NOT_PASSED,		/* byte 15 is 0: the host controller
					 * does not pass the CRC on (SDHCI) */
};

enum sysinfo_crc sysinfo_check_crc(const uint8_t reg[16]);

/* "ok", "bad", "not_passed", "unknown". */
const char *sysinfo_crc_name(enum sysinfo_crc crc);

/* What Linux's mmc_init_erase() sets preferred_erase_size to when it has
 * no AU size: by the CSD capacity (< 128 MiB: 512 KiB, < 512 MiB: 1 MiB,
 * < 1 GiB: 2 MiB, else 4 MiB), at least one erase_size and rounded up to a
 * multiple of it.  0 when erase_bytes is 0. */
uint64_t sysinfo_linux_pref_erase_guess(uint64_t csd_capacity_bytes,
					uint64_t erase_bytes);

/* Label the kernel's preferred_erase_size (pref_bytes):
 *   SD card with a visible SD Status: AU reported and equal -> card;
 *     no AU (code 0) -> kernel_guess; anything else -> kernel.
 *   SD card without a visible SD Status (ssr_visible false, older
 *     kernels): equal to Linux's guess -> kernel_guess and *unverified set
 *     (the card may report that very AU); different -> card (the kernel
 *     only departs from its guess for a reported AU).
 *   MMC: equal to the guess -> kernel_guess; equal to the EXT_CSD high
 *     capacity erase group (hc_erase_bytes, 0 if unknown) -> card;
 *     anything else -> kernel.
 * unverified may be NULL. */
enum sysinfo_source sysinfo_classify_pref_erase(bool sd, uint64_t pref_bytes,
						bool ssr_visible,
						uint64_t au_bytes,
						uint64_t guess_bytes,
						uint64_t hc_erase_bytes,
						bool *unverified);

/* Known manufacturer IDs (CID MID), per card family: SD kinds use the SD
 * Association's numbers, MMC/eMMC JEDEC's.  NULL when unknown or for
 * other kinds.  Sources: mmc-utils lsmmc.c and Linux
 * drivers/mmc/core/card.h (see sysinfo.c). */
const char *sysinfo_manufacturer_name(enum sysinfo_kind kind, unsigned manfid);

/* "sd", "sdhc", "sdxc", "sduc", "mmc", "emmc", "usb-storage", "loop",
 * "virtual", "block", "image", "sim", "unknown". */
const char *sysinfo_kind_name(enum sysinfo_kind kind);

/* "SD card", "SDHC card", ..., "eMMC", "USB storage", "loop device",
 * "virtual block device", "block device", "image file", "simulated card". */
const char *sysinfo_kind_description(enum sysinfo_kind kind);

/* true for the SD family (sd, sdhc, sdxc, sduc). */
bool sysinfo_kind_is_sd(enum sysinfo_kind kind);

/* "card", "kernel", "kernel_guess", "measured", "none". */
const char *sysinfo_source_name(enum sysinfo_source source);

/* ---------------------------------------------------------------- */
/* The identity of one device. */

#define SYSINFO_NAME_MAX 64
#define SYSINFO_PATH_MAX 512

/* The card's identification, from the decoded CID when sysfs has the raw
 * register (source card), else from Linux's attributes (source kernel). */
struct sysinfo_ident {
	bool present;
	enum sysinfo_source source;
	unsigned manfid;
	const char *manufacturer;	/* static string or NULL */
	uint16_t oemid;
	char oem_ascii[3];		/* the two OEM letters, "" unless both
					 * are printable ASCII */
	char product[8];
	unsigned hwrev, fwrev;		/* PRV nibbles (SD, MMC CID) */
	bool serial_present;
	uint32_t serial;
	unsigned year, month;		/* 0 when unknown */
};

struct sysinfo {
	enum sysinfo_kind kind;
	char name[SYSINFO_NAME_MAX];	/* "mmcblk0", "sdb", or the path/spec
					 * for images and simulated cards */
	char sysfs_path[SYSINFO_PATH_MAX]; /* device directory below the
					 * sysfs root ("/devices/.../mmcblk0"),
					 * "" when there is none */
	unsigned major, minor;		/* from dev, when present */
	bool is_partition;		/* name is a partition of disk_name;
					 * the rest describes the disk */
	char disk_name[SYSINFO_NAME_MAX];
	bool usb_bus;			/* the device hangs below a USB port */
	bool registers_hidden;		/* USB storage: the card's registers
					 * are hidden behind the reader */

	/* block layer (kernel) */
	struct sysinfo_value size;		/* sysfs size * 512 */
	struct sysinfo_value logical_block;
	struct sysinfo_value physical_block;
	struct sysinfo_value discard_granularity;
	struct sysinfo_value discard_max;
	struct sysinfo_value minimum_io;	/* queue/minimum_io_size */
	struct sysinfo_value optimal_io;	/* queue/optimal_io_size */
	struct sysinfo_value max_request;	/* queue/max_sectors_kb * 1024 */
	struct sysinfo_value alignment_offset;	/* of the device itself (a
						 * partition has its own) */
	struct sysinfo_value disk_size;		/* the whole disk's size: the
						 * size for a disk, the parent's
						 * for a partition */
	struct sysinfo_flag rotational;
	struct sysinfo_flag removable;
	struct sysinfo_flag read_only;		/* ro: the kernel refuses writes */

	/* USB storage / SCSI: the reader or stick, not the card (kernel) */
	char vendor[32];		/* device/vendor, trimmed, "" if none */
	char model[48];			/* device/model */
	bool usb_id_present;
	uint16_t usb_vendor_id, usb_product_id;
	char usb_product[64];		/* the USB device's product string */

	/* loop devices */
	char backing_file[SYSINFO_PATH_MAX];

	/* SD/MMC card attributes (device/ on a native host) */
	bool has_card;
	char card_type[16];		/* "SD", "MMC", "SDIO", "SDcombo" */
	bool has_cid, has_csd, has_scr, has_ssr, has_ext_csd;
	uint8_t raw_cid[16], raw_csd[16], raw_scr[8], raw_ssr[64];
	struct sysinfo_cid cid;
	struct sysinfo_csd csd;
	struct sysinfo_scr scr;
	struct sysinfo_ssr ssr;
	struct sysinfo_ext_csd ext_csd;	/* from debugfs, when readable */
	int ext_csd_rev;		/* device/rev or debugfs, -1 unknown */
	enum sysinfo_crc cid_crc, csd_crc;
	unsigned bus_width_in_use;	/* data lines in use (SD Status, EXT_CSD
					 * BUS_WIDTH), 0 unknown */
	bool bus_ddr;			/* EXT_CSD: dual data rate */
	char kernel_name[16];		/* device/name */
	char kernel_date[16];		/* device/date, "MM/YYYY" */
	bool kernel_date_differs;	/* device/date is not the decoded MDT
					 * (older kernels skip eMMC rules) */
	unsigned malformed;		/* attributes present but unparsable */

	struct sysinfo_ident ident;

	/* capacity and erase geometry, each with its provenance */
	struct sysinfo_value capacity;		/* CSD / EXT_CSD (card) */
	struct sysinfo_value erase_size;	/* device/erase_size */
	struct sysinfo_value preferred_erase;	/* device/preferred_erase_size */
	bool preferred_erase_unverified;	/* kernel_guess only because
						 * the SD Status is not shown */
	uint64_t linux_guess_bytes;		/* what Linux would guess */
	struct sysinfo_value au;		/* SD Status AU_SIZE (card) */
	bool au_via_kernel;			/* AU read back from
						 * preferred_erase_size */
	struct sysinfo_value erase_sector;	/* SD 1.0 CSD SECTOR_SIZE */
	struct sysinfo_value erase_group;	/* MMC CSD erase group */
	struct sysinfo_value hc_erase_group;	/* eMMC EXT_CSD */

	/* The card's capacity (CSD or EXT_CSD) is not the disk's size: a
	 * warning (fake cards usually program both alike, so a match proves
	 * nothing). */
	bool capacity_mismatch;
};

/* Identify dev_path: "sim:..." (kind sim, nothing read), a regular file
 * (kind image, size from stat) or a block device, looked up as
 * <sysfs_root>/dev/block/MAJ:MIN (sysfs_root is normally "/sys").
 * Fills *out completely.  Returns 0, or -ENOENT / -EACCES / ... from
 * stat, -ENOTBLK for other file types, -ENOENT when sysfs does not know
 * the device, -ENAMETOOLONG for paths that do not fit. */
int sysinfo_read(const char *dev_path, const char *sysfs_root,
		 struct sysinfo *out);

/* The same for a kernel block device name ("mmcblk0", "sdb", "sdb1"),
 * found as <sysfs_root>/block/NAME or <sysfs_root>/class/block/NAME;
 * needs no device node (tests use captured sysfs trees). */
int sysinfo_read_name(const char *name, const char *sysfs_root,
		      struct sysinfo *out);

/* For a partition (si->is_partition): its offset on the disk in bytes and
 * its number, from <sysfs_root>/class/block/NAME/{start,partition}.
 * 0, or -EINVAL (not a partition, unreadable number) or -errno. */
int sysinfo_partition_start(const char *sysfs_root, const struct sysinfo *si,
			    uint64_t *start_bytes, unsigned *number);

#endif
