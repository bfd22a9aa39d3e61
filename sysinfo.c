/* sysinfo.c - device identity from sysfs and the SD/MMC registers.
 *
 * What is read: the block device's sysfs directory (size, queue limits,
 * removable) and, when the device sits on a native SD/MMC host, the card
 * directory behind device/ where Linux shows the raw registers (cid, csd,
 * scr, and on newer kernels ssr) next to its own reading of them (name,
 * manfid, date, erase_size, preferred_erase_size, ...).  The raw
 * registers are decoded here from tables of named bit positions, so a
 * value is labelled "card" only when it comes out of a register, and the
 * kernel's numbers can be checked against them.
 *
 * The one value that needs care is preferred_erase_size, which people
 * take for the card's erase block: Linux sets it to the SD Status AU size
 * when the card reports one, and otherwise to a guess from the capacity
 * (mmc_init_erase() in drivers/mmc/core/core.c: 4 MiB for anything of
 * 1 GiB or more).  The guess is recomputed here from the CSD so the label
 * can say which of the two it is; when the kernel does not expose the SD
 * Status (kernels before the ssr attribute) a value equal to the guess
 * stays "kernel_guess" but is marked unverified, because the card may
 * report exactly that AU.
 *
 * Known limits: a USB card reader hides every register (the result says
 * so and names the reader); eMMC EXT_CSD is only read from debugfs
 * (root only), so without it the high-capacity erase group is unknown;
 * MMC cards older than MMC 2.0 (SPEC_VERS < 2) use another CID layout
 * that is not decoded (the kernel's attributes are used instead).
 *
 * Register layouts: SD Physical Layer Simplified Specification (CID 5.2,
 * CSD 5.3, SCR 5.6, SD Status 4.10.2), JEDEC JESD84-B51 (MMC CID 7.2,
 * CSD 7.3, EXT_CSD 7.4); decoding rules follow Linux drivers/mmc/core
 * (sd.c, mmc.c) where the kernel interprets a field.
 */
#define _XOPEN_SOURCE 700	/* realpath(): POSIX 2008 + XSI */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include "devspec.h"
#include "sysfs.h"
#include "sysinfo.h"
#include "util.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

/* ---------------------------------------------------------------- */
/* Register maps: name, lowest bit, width.  Bit numbers are the specs'. */

struct reg_field {
	const char *name;
	uint16_t lsb;
	uint8_t width;
};

enum sd_cid_field {
	SD_CID_MID, SD_CID_OID, SD_CID_PNM, SD_CID_PRV, SD_CID_PSN,
	SD_CID_MDT_YEAR, SD_CID_MDT_MONTH, SD_CID_CRC,
};

static const struct reg_field sd_cid_map[] = {
	[SD_CID_MID]       = { "MID", 120, 8 },
	[SD_CID_OID]       = { "OID", 104, 16 },
	[SD_CID_PNM]       = { "PNM", 64, 40 },
	[SD_CID_PRV]       = { "PRV", 56, 8 },
	[SD_CID_PSN]       = { "PSN", 24, 32 },
	[SD_CID_MDT_YEAR]  = { "MDT year", 12, 8 },	/* years since 2000 */
	[SD_CID_MDT_MONTH] = { "MDT month", 8, 4 },
	[SD_CID_CRC]       = { "CRC", 1, 7 },
};

enum mmc_cid_field {
	MMC_CID_MID, MMC_CID_OID16, MMC_CID_CBX, MMC_CID_OID, MMC_CID_PNM,
	MMC_CID_PRV, MMC_CID_PSN, MMC_CID_MDT_MONTH, MMC_CID_MDT_YEAR,
	MMC_CID_CRC,
};

static const struct reg_field mmc_cid_map[] = {
	[MMC_CID_MID]       = { "MID", 120, 8 },
	/* Linux reports bits [119:104] as oemid: BIN/reserved, CBX, OID. */
	[MMC_CID_OID16]     = { "OID (16 bits, as Linux)", 104, 16 },
	[MMC_CID_CBX]       = { "CBX", 112, 2 },
	[MMC_CID_OID]       = { "OID", 104, 8 },
	[MMC_CID_PNM]       = { "PNM", 56, 48 },
	[MMC_CID_PRV]       = { "PRV", 48, 8 },
	[MMC_CID_PSN]       = { "PSN", 16, 32 },
	[MMC_CID_MDT_MONTH] = { "MDT month", 12, 4 },
	[MMC_CID_MDT_YEAR]  = { "MDT year", 8, 4 },	/* 1997 + y, see below */
	[MMC_CID_CRC]       = { "CRC", 1, 7 },
};

enum csd_field {
	CSD_STRUCTURE, CSD_SPEC_VERS, CSD_TRAN_SPEED, CSD_CCC,
	CSD_READ_BL_LEN, CSD_C_SIZE_V1, CSD_C_SIZE_MULT, CSD_C_SIZE_V2,
	CSD_C_SIZE_V3, CSD_ERASE_BLK_EN, CSD_SECTOR_SIZE, CSD_ERASE_GRP_SIZE,
	CSD_ERASE_GRP_MULT, CSD_WRITE_BL_LEN, CSD_PERM_WRITE_PROTECT,
	CSD_TMP_WRITE_PROTECT,
};

/* One table for both families: SD and MMC agree on every field both
 * have; SPEC_VERS and ERASE_GRP_* are MMC only, ERASE_BLK_EN, SECTOR_SIZE
 * and the 2.0/3.0 C_SIZE SD only (the same bits mean other things in the
 * other family). */
static const struct reg_field csd_map[] = {
	[CSD_STRUCTURE]          = { "CSD_STRUCTURE", 126, 2 },
	[CSD_SPEC_VERS]          = { "SPEC_VERS", 122, 4 },
	[CSD_TRAN_SPEED]         = { "TRAN_SPEED", 96, 8 },
	[CSD_CCC]                = { "CCC", 84, 12 },
	[CSD_READ_BL_LEN]        = { "READ_BL_LEN", 80, 4 },
	[CSD_C_SIZE_V1]          = { "C_SIZE (1.0, MMC)", 62, 12 },
	[CSD_C_SIZE_MULT]        = { "C_SIZE_MULT", 47, 3 },
	[CSD_C_SIZE_V2]          = { "C_SIZE (SD 2.0)", 48, 22 },
	[CSD_C_SIZE_V3]          = { "C_SIZE (SD 3.0)", 48, 28 },
	[CSD_ERASE_BLK_EN]       = { "ERASE_BLK_EN", 46, 1 },
	[CSD_SECTOR_SIZE]        = { "SECTOR_SIZE", 39, 7 },
	[CSD_ERASE_GRP_SIZE]     = { "ERASE_GRP_SIZE", 42, 5 },
	[CSD_ERASE_GRP_MULT]     = { "ERASE_GRP_MULT", 37, 5 },
	[CSD_WRITE_BL_LEN]       = { "WRITE_BL_LEN", 22, 4 },
	[CSD_PERM_WRITE_PROTECT] = { "PERM_WRITE_PROTECT", 13, 1 },
	[CSD_TMP_WRITE_PROTECT]  = { "TMP_WRITE_PROTECT", 12, 1 },
};

enum scr_field {
	SCR_STRUCTURE, SCR_SD_SPEC, SCR_DATA_STAT_AFTER_ERASE, SCR_SD_SECURITY,
	SCR_SD_BUS_WIDTHS, SCR_SD_SPEC3, SCR_SD_SPEC4, SCR_SD_SPECX,
	SCR_CMD_SUPPORT,
};

static const struct reg_field scr_map[] = {
	[SCR_STRUCTURE]             = { "SCR_STRUCTURE", 60, 4 },
	[SCR_SD_SPEC]               = { "SD_SPEC", 56, 4 },
	[SCR_DATA_STAT_AFTER_ERASE] = { "DATA_STAT_AFTER_ERASE", 55, 1 },
	[SCR_SD_SECURITY]           = { "SD_SECURITY", 52, 3 },
	[SCR_SD_BUS_WIDTHS]         = { "SD_BUS_WIDTHS", 48, 4 },
	[SCR_SD_SPEC3]              = { "SD_SPEC3", 47, 1 },
	[SCR_SD_SPEC4]              = { "SD_SPEC4", 42, 1 },
	[SCR_SD_SPECX]              = { "SD_SPECX", 38, 4 },
	[SCR_CMD_SUPPORT]           = { "CMD_SUPPORT", 32, 4 },
};

enum ssr_field {
	SSR_DAT_BUS_WIDTH, SSR_SD_CARD_TYPE, SSR_SIZE_OF_PROTECTED_AREA,
	SSR_SPEED_CLASS, SSR_PERFORMANCE_MOVE, SSR_AU_SIZE, SSR_ERASE_SIZE,
	SSR_ERASE_TIMEOUT, SSR_ERASE_OFFSET, SSR_UHS_SPEED_GRADE,
	SSR_UHS_AU_SIZE, SSR_VIDEO_SPEED_CLASS, SSR_APP_PERF_CLASS,
	SSR_DISCARD_SUPPORT, SSR_FULE_SUPPORT,
};

/* SD Status, 512 bits (Simplified Spec table 4-44); AU_SIZE is the
 * card-reported allocation unit. */
static const struct reg_field ssr_map[] = {
	[SSR_DAT_BUS_WIDTH]          = { "DAT_BUS_WIDTH", 510, 2 },
	[SSR_SD_CARD_TYPE]           = { "SD_CARD_TYPE", 480, 16 },
	[SSR_SIZE_OF_PROTECTED_AREA] = { "SIZE_OF_PROTECTED_AREA", 448, 32 },
	[SSR_SPEED_CLASS]            = { "SPEED_CLASS", 440, 8 },
	[SSR_PERFORMANCE_MOVE]       = { "PERFORMANCE_MOVE", 432, 8 },
	[SSR_AU_SIZE]                = { "AU_SIZE", 428, 4 },
	[SSR_ERASE_SIZE]             = { "ERASE_SIZE", 408, 16 },
	[SSR_ERASE_TIMEOUT]          = { "ERASE_TIMEOUT", 402, 6 },
	[SSR_ERASE_OFFSET]           = { "ERASE_OFFSET", 400, 2 },
	[SSR_UHS_SPEED_GRADE]        = { "UHS_SPEED_GRADE", 396, 4 },
	[SSR_UHS_AU_SIZE]            = { "UHS_AU_SIZE", 392, 4 },
	[SSR_VIDEO_SPEED_CLASS]      = { "VIDEO_SPEED_CLASS", 384, 8 },
	[SSR_APP_PERF_CLASS]         = { "APP_PERF_CLASS", 336, 4 },
	[SSR_DISCARD_SUPPORT]        = { "DISCARD_SUPPORT", 313, 1 },
	[SSR_FULE_SUPPORT]           = { "FULE_SUPPORT", 312, 1 },
};

/* EXT_CSD byte indices (JESD84-B51 table 7.4; names as mmc-utils mmc.h). */
#define EXT_CSD_ERASE_GROUP_DEF		175
#define EXT_CSD_BUS_WIDTH		183
#define EXT_CSD_REV			192
#define EXT_CSD_SEC_CNT			212	/* 4 bytes, little endian */
#define EXT_CSD_HC_WP_GRP_SIZE		221
#define EXT_CSD_HC_ERASE_GRP_SIZE	224
#define EXT_CSD_ACC_SIZE		225
#define EXT_CSD_OPTIMAL_TRIM_UNIT_SIZE	264	/* eMMC 5.0 on */
#define EXT_CSD_OPTIMAL_WRITE_SIZE	265
#define EXT_CSD_OPTIMAL_READ_SIZE	266

#define CID_BYTES 16
#define CSD_BYTES 16
#define SCR_BYTES 8
#define SSR_BYTES 64
#define EXT_CSD_BYTES 512

uint32_t sysinfo_reg_bits(const uint8_t *reg, size_t reg_bytes,
			  unsigned lsb, unsigned width)
{
	uint32_t v = 0;

	if (width > 32)
		width = 32;
	for (unsigned i = width; i-- > 0;) {
		size_t bit = (size_t)lsb + i;

		v <<= 1;
		if (bit < reg_bytes * 8)
			v |= (reg[reg_bytes - 1 - bit / 8] >> (bit % 8)) & 1u;
	}
	return v;
}

static uint32_t field(const uint8_t *reg, size_t reg_bytes,
		      const struct reg_field *f)
{
	return sysinfo_reg_bits(reg, reg_bytes, f->lsb, f->width);
}

/* A character field (PNM): width / 8 bytes, first character highest.
 * Non-printable bytes become '?'; trailing spaces and NULs are kept out. */
static void field_chars(const uint8_t *reg, size_t reg_bytes,
			const struct reg_field *f, char *out, size_t outlen)
{
	size_t n = f->width / 8, len = 0;

	for (size_t i = 0; i < n && len + 1 < outlen; i++) {
		unsigned c = sysinfo_reg_bits(reg, reg_bytes,
					      f->lsb + 8 * (unsigned)(n - 1 - i), 8);

		out[len++] = (c >= 0x20 && c < 0x7f) ? (char)c : (c ? '?' : ' ');
	}
	while (len > 0 && out[len - 1] == ' ')
		len--;
	out[len] = '\0';
}

/* ---------------------------------------------------------------- */
/* Decoders */

int sysinfo_decode_cid_sd(const uint8_t cid[16], struct sysinfo_cid *out)
{
	memset(out, 0, sizeof(*out));
	out->manfid = (uint8_t)field(cid, CID_BYTES, &sd_cid_map[SD_CID_MID]);
	out->oemid = (uint16_t)field(cid, CID_BYTES, &sd_cid_map[SD_CID_OID]);
	field_chars(cid, CID_BYTES, &sd_cid_map[SD_CID_PNM], out->name,
		    sizeof(out->name));
	out->prv = (uint8_t)field(cid, CID_BYTES, &sd_cid_map[SD_CID_PRV]);
	out->serial = field(cid, CID_BYTES, &sd_cid_map[SD_CID_PSN]);
	out->year = 2000 + field(cid, CID_BYTES, &sd_cid_map[SD_CID_MDT_YEAR]);
	out->month = field(cid, CID_BYTES, &sd_cid_map[SD_CID_MDT_MONTH]);
	out->crc = (uint8_t)field(cid, CID_BYTES, &sd_cid_map[SD_CID_CRC]);
	return 0;
}

int sysinfo_decode_cid_mmc(const uint8_t cid[16], unsigned ext_csd_rev,
			   struct sysinfo_cid *out)
{
	memset(out, 0, sizeof(*out));
	out->mmc = true;
	out->manfid = (uint8_t)field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_MID]);
	out->oemid = (uint16_t)field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_OID16]);
	out->mmc_cbx = (uint8_t)field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_CBX]);
	out->mmc_oid = (uint8_t)field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_OID]);
	field_chars(cid, CID_BYTES, &mmc_cid_map[MMC_CID_PNM], out->name,
		    sizeof(out->name));
	out->prv = (uint8_t)field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_PRV]);
	out->serial = field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_PSN]);
	out->month = field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_MDT_MONTH]);
	/* A 4-bit year counted from 1997; eMMC 4.41 (EXT_CSD_REV 5) rolled
	 * it over after 2012 (y = 0 is 2013), eMMC 5.1B (REV 9) again after
	 * 2025.  Linux: "if (rev >= 5 && year < 2010) year += 16", and for
	 * REV >= 9 "if (year < 2023) year += 16". */
	out->year = 1997 + field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_MDT_YEAR]);
	if (ext_csd_rev >= 5 && out->year < 2010)
		out->year += 16;
	if (ext_csd_rev >= 9 && out->year < 2023)
		out->year += 16;
	out->crc = (uint8_t)field(cid, CID_BYTES, &mmc_cid_map[MMC_CID_CRC]);
	return 0;
}

/* TRAN_SPEED: bits [2:0] the unit (100 kbit/s .. 100 Mbit/s), [6:3] a
 * multiplier in tenths; the SD and MMC multiplier tables differ at 6
 * (2.5 / 2.6) and 11 (5.0 / 5.2). */
static uint32_t tran_speed_kbit(unsigned ts, bool mmc)
{
	static const uint32_t unit_kbit[8] = { 100, 1000, 10000, 100000 };
	static const uint8_t sd_tenths[16] = {
		0, 10, 12, 13, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 70, 80,
	};
	static const uint8_t mmc_tenths[16] = {
		0, 10, 12, 13, 15, 20, 26, 30, 35, 40, 45, 52, 55, 60, 70, 80,
	};
	unsigned mult = (ts >> 3) & 0xf;

	return unit_kbit[ts & 7] * (mmc ? mmc_tenths[mult] : sd_tenths[mult]) / 10;
}

static void csd_common(const uint8_t *csd, bool mmc, struct sysinfo_csd *out)
{
	memset(out, 0, sizeof(*out));
	out->mmc = mmc;
	out->structure = field(csd, CSD_BYTES, &csd_map[CSD_STRUCTURE]);
	out->tran_speed = field(csd, CSD_BYTES, &csd_map[CSD_TRAN_SPEED]);
	out->tran_speed_kbit = tran_speed_kbit(out->tran_speed, mmc);
	out->ccc = field(csd, CSD_BYTES, &csd_map[CSD_CCC]);
	out->read_bl_len = field(csd, CSD_BYTES, &csd_map[CSD_READ_BL_LEN]);
	out->write_bl_len = field(csd, CSD_BYTES, &csd_map[CSD_WRITE_BL_LEN]);
	out->perm_write_protect = field(csd, CSD_BYTES,
					&csd_map[CSD_PERM_WRITE_PROTECT]);
	out->tmp_write_protect = field(csd, CSD_BYTES,
				       &csd_map[CSD_TMP_WRITE_PROTECT]);
}

/* (C_SIZE + 1) * 2^(C_SIZE_MULT + 2) blocks of 2^READ_BL_LEN bytes. */
static uint64_t csd_v1_capacity(const struct sysinfo_csd *c)
{
	return ((uint64_t)c->c_size + 1) << (c->c_size_mult + 2) << c->read_bl_len;
}

int sysinfo_decode_csd_sd(const uint8_t csd[16], struct sysinfo_csd *out)
{
	unsigned sector_size;

	csd_common(csd, false, out);
	switch (out->structure) {
	case 0:		/* SDSC, byte addressed */
		out->c_size = field(csd, CSD_BYTES, &csd_map[CSD_C_SIZE_V1]);
		out->c_size_mult = field(csd, CSD_BYTES, &csd_map[CSD_C_SIZE_MULT]);
		out->capacity_bytes = csd_v1_capacity(out);
		out->erase_blk_en = field(csd, CSD_BYTES, &csd_map[CSD_ERASE_BLK_EN]);
		sector_size = field(csd, CSD_BYTES, &csd_map[CSD_SECTOR_SIZE]);
		out->sector_bytes = ((uint64_t)sector_size + 1) << out->write_bl_len;
		/* Linux: one sector when ERASE_BLK_EN, else SECTOR_SIZE + 1
		 * write blocks (when write blocks are at least 512 bytes). */
		if (out->erase_blk_en)
			out->erase_bytes = 512;
		else if (out->write_bl_len >= 9)
			out->erase_bytes = out->sector_bytes;
		break;
	case 1:		/* SDHC / SDXC: most fields fixed, Linux forces them */
	case 2:		/* SDUC */
		out->c_size = field(csd, CSD_BYTES, out->structure == 1 ?
				    &csd_map[CSD_C_SIZE_V2] : &csd_map[CSD_C_SIZE_V3]);
		out->capacity_bytes = ((uint64_t)out->c_size + 1) * 512 * KiB;
		out->read_bl_len = 9;
		out->write_bl_len = 9;
		out->erase_blk_en = true;
		out->erase_bytes = 512;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int sysinfo_decode_csd_mmc(const uint8_t csd[16], struct sysinfo_csd *out)
{
	csd_common(csd, true, out);
	out->spec_vers = field(csd, CSD_BYTES, &csd_map[CSD_SPEC_VERS]);
	out->c_size = field(csd, CSD_BYTES, &csd_map[CSD_C_SIZE_V1]);
	out->c_size_mult = field(csd, CSD_BYTES, &csd_map[CSD_C_SIZE_MULT]);
	/* Above 2 GB the card sets C_SIZE to 0xFFF and keeps its size in
	 * EXT_CSD SEC_COUNT. */
	if (out->c_size != 0xfff)
		out->capacity_bytes = csd_v1_capacity(out);
	out->erase_grp_size = field(csd, CSD_BYTES, &csd_map[CSD_ERASE_GRP_SIZE]);
	out->erase_grp_mult = field(csd, CSD_BYTES, &csd_map[CSD_ERASE_GRP_MULT]);
	if (out->write_bl_len >= 9)
		out->erase_bytes = ((uint64_t)out->erase_grp_size + 1) *
			(out->erase_grp_mult + 1) << out->write_bl_len;
	return 0;
}

int sysinfo_decode_scr(const uint8_t scr[8], struct sysinfo_scr *out)
{
	memset(out, 0, sizeof(*out));
	out->structure = field(scr, SCR_BYTES, &scr_map[SCR_STRUCTURE]);
	out->sd_spec = field(scr, SCR_BYTES, &scr_map[SCR_SD_SPEC]);
	out->erased_ones = field(scr, SCR_BYTES, &scr_map[SCR_DATA_STAT_AFTER_ERASE]);
	out->security = field(scr, SCR_BYTES, &scr_map[SCR_SD_SECURITY]);
	out->bus_widths = field(scr, SCR_BYTES, &scr_map[SCR_SD_BUS_WIDTHS]);
	/* SD_SPEC3 and later bits only mean something on SD_SPEC 2 cards. */
	if (out->sd_spec == 2)
		out->sd_spec3 = field(scr, SCR_BYTES, &scr_map[SCR_SD_SPEC3]);
	if (out->sd_spec3) {
		out->sd_spec4 = field(scr, SCR_BYTES, &scr_map[SCR_SD_SPEC4]);
		out->sd_specx = field(scr, SCR_BYTES, &scr_map[SCR_SD_SPECX]);
		out->cmd_support = field(scr, SCR_BYTES, &scr_map[SCR_CMD_SUPPORT]);
	}
	static const char *const specx_names[] = {
		NULL, "5.XX", "6.XX", "7.XX", "8.XX", "9.XX",
	};
	if (out->sd_spec == 0)
		out->version = "1.0";
	else if (out->sd_spec == 1)
		out->version = "1.10";
	else if (out->sd_spec == 2 && !out->sd_spec3)
		out->version = "2.00";
	else if (out->sd_spec == 2 && out->sd_specx >= 1 && out->sd_specx <= 5)
		out->version = specx_names[out->sd_specx];
	else if (out->sd_spec == 2 && out->sd_spec4)
		out->version = "4.XX";
	else if (out->sd_spec == 2)
		out->version = "3.0X";
	else
		out->version = "unknown";
	return out->structure == 0 ? 0 : -EINVAL;
}

static const uint64_t au_table[16] = {
	0, 16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB,
	1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB, 12 * MiB, 16 * MiB, 24 * MiB,
	32 * MiB, 64 * MiB,
};

uint64_t sysinfo_au_code_bytes(unsigned code)
{
	return code < 16 ? au_table[code] : 0;
}

int sysinfo_decode_ssr(const uint8_t ssr[64], bool sd_spec3,
		       struct sysinfo_ssr *out)
{
	memset(out, 0, sizeof(*out));
	out->bus_width = field(ssr, SSR_BYTES, &ssr_map[SSR_DAT_BUS_WIDTH]);
	out->card_type = field(ssr, SSR_BYTES, &ssr_map[SSR_SD_CARD_TYPE]);
	out->protected_area = field(ssr, SSR_BYTES,
				    &ssr_map[SSR_SIZE_OF_PROTECTED_AREA]);
	out->speed_class = field(ssr, SSR_BYTES, &ssr_map[SSR_SPEED_CLASS]);
	out->performance_move = field(ssr, SSR_BYTES,
				      &ssr_map[SSR_PERFORMANCE_MOVE]);
	out->au_code = field(ssr, SSR_BYTES, &ssr_map[SSR_AU_SIZE]);
	/* Codes 0xA..0xF exist from SD 3.00 on; Linux ignores them on older
	 * cards ("SD Status: Invalid Allocation Unit size"). */
	if (out->au_code > 9 && !sd_spec3)
		out->au_invalid = true;
	else
		out->au_bytes = sysinfo_au_code_bytes(out->au_code);
	out->erase_size_aus = field(ssr, SSR_BYTES, &ssr_map[SSR_ERASE_SIZE]);
	out->erase_timeout_s = field(ssr, SSR_BYTES, &ssr_map[SSR_ERASE_TIMEOUT]);
	out->erase_offset_s = field(ssr, SSR_BYTES, &ssr_map[SSR_ERASE_OFFSET]);
	out->uhs_speed_grade = field(ssr, SSR_BYTES, &ssr_map[SSR_UHS_SPEED_GRADE]);
	out->uhs_au_code = field(ssr, SSR_BYTES, &ssr_map[SSR_UHS_AU_SIZE]);
	out->uhs_au_bytes = sysinfo_au_code_bytes(out->uhs_au_code);
	out->video_speed_class = field(ssr, SSR_BYTES,
				       &ssr_map[SSR_VIDEO_SPEED_CLASS]);
	out->app_perf_class = field(ssr, SSR_BYTES, &ssr_map[SSR_APP_PERF_CLASS]);
	out->discard_support = field(ssr, SSR_BYTES, &ssr_map[SSR_DISCARD_SUPPORT]);
	out->fule_support = field(ssr, SSR_BYTES, &ssr_map[SSR_FULE_SUPPORT]);
	return 0;
}

int sysinfo_decode_ext_csd(const uint8_t ext_csd[512],
			   struct sysinfo_ext_csd *out)
{
	memset(out, 0, sizeof(*out));
	out->rev = ext_csd[EXT_CSD_REV];
	out->sec_count = (uint64_t)ext_csd[EXT_CSD_SEC_CNT] |
		(uint64_t)ext_csd[EXT_CSD_SEC_CNT + 1] << 8 |
		(uint64_t)ext_csd[EXT_CSD_SEC_CNT + 2] << 16 |
		(uint64_t)ext_csd[EXT_CSD_SEC_CNT + 3] << 24;
	out->erase_group_def = ext_csd[EXT_CSD_ERASE_GROUP_DEF];
	out->hc_erase_grp_size = ext_csd[EXT_CSD_HC_ERASE_GRP_SIZE];
	out->hc_wp_grp_size = ext_csd[EXT_CSD_HC_WP_GRP_SIZE];
	out->hc_erase_bytes = (uint64_t)out->hc_erase_grp_size * 512 * KiB;
	out->hc_wp_bytes = (uint64_t)out->hc_wp_grp_size * out->hc_erase_bytes;
	out->bus_width = ext_csd[EXT_CSD_BUS_WIDTH];
	out->acc_size = ext_csd[EXT_CSD_ACC_SIZE];
	/* SUPER_PAGE_SIZE: 512 bytes x 2^(n - 1); values above 8 reserved */
	if ((out->acc_size & 0xf) && (out->acc_size & 0xf) <= 8)
		out->super_page_bytes = 512ull << ((out->acc_size & 0xf) - 1);
	if (out->rev >= 7) {
		unsigned trim = ext_csd[EXT_CSD_OPTIMAL_TRIM_UNIT_SIZE];

		out->optimal_read_bytes = ext_csd[EXT_CSD_OPTIMAL_READ_SIZE] * 4 * KiB;
		out->optimal_write_bytes = ext_csd[EXT_CSD_OPTIMAL_WRITE_SIZE] * 4 * KiB;
		if (trim && trim <= 21)	/* up to 4 GiB; larger is nonsense */
			out->optimal_trim_bytes = (4 * KiB) << (trim - 1);
	}
	return 0;
}

const char *sysinfo_emmc_version(unsigned ext_csd_rev)
{
	static const char *const versions[] = {
		"4.0", "4.1", "4.2", "4.3", NULL, "4.41", "4.5", "5.0", "5.1", "5.1B",
	};

	return ext_csd_rev < sizeof(versions) / sizeof(versions[0]) ?
		versions[ext_csd_rev] : NULL;
}

/* ---------------------------------------------------------------- */
/* CRC7 of CID and CSD */

uint8_t sysinfo_crc7(const uint8_t *data, size_t n)
{
	unsigned crc = 0;

	for (size_t i = 0; i < n; i++)
		for (int b = 7; b >= 0; b--) {
			unsigned in = (data[i] >> b) & 1u, top = (crc >> 6) & 1u;

			crc = (crc << 1) & 0x7f;
			if (in ^ top)
				crc ^= 0x09;
		}
	return (uint8_t)crc;
}

enum sysinfo_crc sysinfo_check_crc(const uint8_t reg[16])
{
	if (reg[15] == 0)
		return SYSINFO_CRC_NOT_PASSED;
	return (reg[15] >> 1) == sysinfo_crc7(reg, 15) ? SYSINFO_CRC_OK :
		SYSINFO_CRC_BAD;
}

const char *sysinfo_crc_name(enum sysinfo_crc crc)
{
	switch (crc) {
	case SYSINFO_CRC_OK:
		return "ok";
	case SYSINFO_CRC_BAD:
		return "bad";
	case SYSINFO_CRC_NOT_PASSED:
		return "not_passed";
	case SYSINFO_CRC_UNKNOWN:
		break;
	}
	return "unknown";
}

/* ---------------------------------------------------------------- */
/* Linux's preferred_erase_size and what to call it */

uint64_t sysinfo_linux_pref_erase_guess(uint64_t csd_capacity_bytes,
					uint64_t erase_bytes)
{
	uint64_t mib = csd_capacity_bytes / MiB, guess, rem;

	if (erase_bytes == 0)
		return 0;
	if (mib < 128)
		guess = 512 * KiB;
	else if (mib < 512)
		guess = 1 * MiB;
	else if (mib < 1024)
		guess = 2 * MiB;
	else
		guess = 4 * MiB;
	if (guess < erase_bytes)
		return erase_bytes;
	rem = guess % erase_bytes;
	return rem ? guess + erase_bytes - rem : guess;
}

enum sysinfo_source sysinfo_classify_pref_erase(bool sd, uint64_t pref_bytes,
						bool ssr_visible,
						uint64_t au_bytes,
						uint64_t guess_bytes,
						uint64_t hc_erase_bytes,
						bool *unverified)
{
	if (unverified)
		*unverified = false;
	if (pref_bytes == 0)
		return SYSINFO_SRC_NONE;
	if (sd) {
		if (ssr_visible) {
			if (au_bytes)
				return pref_bytes == au_bytes ?
					SYSINFO_SRC_CARD : SYSINFO_SRC_KERNEL;
			return pref_bytes == guess_bytes ?
				SYSINFO_SRC_KERNEL_GUESS : SYSINFO_SRC_KERNEL;
		}
		if (guess_bytes == 0)
			return SYSINFO_SRC_KERNEL;
		if (pref_bytes == guess_bytes) {
			if (unverified)
				*unverified = true;
			return SYSINFO_SRC_KERNEL_GUESS;
		}
		return SYSINFO_SRC_CARD;
	}
	if (guess_bytes && pref_bytes == guess_bytes)
		return SYSINFO_SRC_KERNEL_GUESS;
	if (hc_erase_bytes && pref_bytes == hc_erase_bytes)
		return SYSINFO_SRC_CARD;
	return SYSINFO_SRC_KERNEL;
}

/* ---------------------------------------------------------------- */
/* Names */

struct manfid_name {
	uint8_t id;
	const char *name;
};

/* SD Association manufacturer IDs.  Every entry is in mmc-utils lsmmc.c
 * (sd_database, git.kernel.org utils/mmc/mmc-utils) or named in Linux
 * drivers/mmc/core/card.h and used by an SD quirk in quirks.h (marked
 * "Linux").  Left out: 0x89 (mmc-utils: "Unknown") and IDs only seen in
 * hobbyist decoders (e.g. 0x9c). */
static const struct manfid_name sd_manfids[] = {
	{ 0x01, "Panasonic" },
	{ 0x02, "Toshiba/Kingston/Viking" },
	{ 0x03, "SanDisk" },			/* also Linux CID_MANFID_SANDISK_SD */
	{ 0x08, "Silicon Power" },
	{ 0x09, "ATP" },			/* Linux CID_MANFID_ATP */
	{ 0x12, "Gigastone" },			/* Linux CID_MANFID_GIGASTONE */
	{ 0x18, "Infineon" },
	{ 0x1b, "Transcend/Samsung" },
	{ 0x1c, "Transcend" },
	{ 0x1d, "Corsair/AData" },
	{ 0x1e, "Transcend" },
	{ 0x1f, "Kingston" },
	{ 0x27, "Delkin/Phison/Apacer" },	/* Linux CID_MANFID_APACER */
	{ 0x28, "Lexar" },
	{ 0x30, "SanDisk" },
	{ 0x31, "Silicon Power" },
	{ 0x33, "STMicroelectronics" },
	{ 0x41, "Kingston" },
	{ 0x5d, "Swissbit" },			/* Linux CID_MANFID_SWISSBIT */
	{ 0x6f, "STMicroelectronics" },
	{ 0x74, "Transcend" },
	{ 0x76, "Patriot" },
	{ 0x82, "Gobe/Sony" },
	{ 0x9f, "Kingston" },			/* Linux CID_MANFID_KINGSTON_SD */
};

/* JEDEC MMC/eMMC manufacturer IDs: mmc-utils lsmmc.c mmc_database and
 * Linux card.h (CID_MANFID_SAMSUNG 0x15, _HYNIX 0x90, _NUMONYX 0xfe,
 * _TOSHIBA 0x11, _MICRON 0x13, _KINGSTON 0x70, _SANDISK 0x2 and
 * _SANDISK_MMC 0x45 in eMMC quirks).  mmc-utils calls 0x15
 * "Samsung/SanDisk/LG"; Linux's quirks for it are Samsung moviNAND parts.
 * Left out: 0x05 and 0x06 (mmc-utils: "Unknown"). */
static const struct manfid_name mmc_manfids[] = {
	{ 0x00, "SanDisk" },
	{ 0x02, "SanDisk/Kingston" },
	{ 0x03, "Toshiba" },
	{ 0x11, "Toshiba" },
	{ 0x13, "Micron" },
	{ 0x15, "Samsung" },
	{ 0x2c, "Kingston" },
	{ 0x37, "KingMax" },
	{ 0x44, "ATP" },
	{ 0x45, "SanDisk" },
	{ 0x70, "Kingston" },
	{ 0x90, "SK Hynix" },
	{ 0xfe, "Micron (Numonyx)" },
};

static const char *manfid_lookup(const struct manfid_name *t, size_t n,
				 unsigned id)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].id == id)
			return t[i].name;
	return NULL;
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

const char *sysinfo_manufacturer_name(enum sysinfo_kind kind, unsigned manfid)
{
	if (sysinfo_kind_is_sd(kind))
		return manfid_lookup(sd_manfids, ARRAY_LEN(sd_manfids), manfid);
	if (kind == SYSINFO_KIND_MMC || kind == SYSINFO_KIND_EMMC)
		return manfid_lookup(mmc_manfids, ARRAY_LEN(mmc_manfids), manfid);
	return NULL;
}

bool sysinfo_kind_is_sd(enum sysinfo_kind kind)
{
	return kind == SYSINFO_KIND_SD || kind == SYSINFO_KIND_SDHC ||
		kind == SYSINFO_KIND_SDXC || kind == SYSINFO_KIND_SDUC;
}

static const struct {
	const char *name, *description;
} kind_names[] = {
	[SYSINFO_KIND_UNKNOWN] = { "unknown", "unknown device" },
	[SYSINFO_KIND_SD]      = { "sd", "SD card" },
	[SYSINFO_KIND_SDHC]    = { "sdhc", "SDHC card" },
	[SYSINFO_KIND_SDXC]    = { "sdxc", "SDXC card" },
	[SYSINFO_KIND_SDUC]    = { "sduc", "SDUC card" },
	[SYSINFO_KIND_MMC]     = { "mmc", "MMC card" },
	[SYSINFO_KIND_EMMC]    = { "emmc", "eMMC" },
	[SYSINFO_KIND_USB]     = { "usb-storage", "USB storage" },
	[SYSINFO_KIND_LOOP]    = { "loop", "loop device" },
	[SYSINFO_KIND_VIRTUAL] = { "virtual", "virtual block device" },
	[SYSINFO_KIND_BLOCK]   = { "block", "block device" },
	[SYSINFO_KIND_IMAGE]   = { "image", "image file" },
	[SYSINFO_KIND_SIM]     = { "sim", "simulated card" },
};

const char *sysinfo_kind_name(enum sysinfo_kind kind)
{
	if ((unsigned)kind >= ARRAY_LEN(kind_names))
		kind = SYSINFO_KIND_UNKNOWN;
	return kind_names[kind].name;
}

const char *sysinfo_kind_description(enum sysinfo_kind kind)
{
	if ((unsigned)kind >= ARRAY_LEN(kind_names))
		kind = SYSINFO_KIND_UNKNOWN;
	return kind_names[kind].description;
}

const char *sysinfo_source_name(enum sysinfo_source source)
{
	switch (source) {
	case SYSINFO_SRC_CARD:
		return "card";
	case SYSINFO_SRC_KERNEL:
		return "kernel";
	case SYSINFO_SRC_KERNEL_GUESS:
		return "kernel_guess";
	case SYSINFO_SRC_MEASURED:
		return "measured";
	case SYSINFO_SRC_NONE:
		break;
	}
	return "none";
}

/* ---------------------------------------------------------------- */
/* sysfs plumbing */

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	return sysfs_join(path, sizeof(path), dir, name) == 0 && access(path, F_OK) == 0;
}

/* Whole string as an unsigned number; base 16 accepts "0x". */
static bool parse_u64(const char *s, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* "0x1f" or "31". */
static bool parse_num(const char *s, uint64_t *out)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_u64(s, 16, out);
	return parse_u64(s, 10, out);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly 2 * n hex digits. */
static bool parse_hex_bytes(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/* A decimal attribute as a kernel value; a multiplier turns sectors into
 * bytes. */
static void read_value(const char *dir, const char *name, uint64_t mult,
		       struct sysinfo_value *v, unsigned *malformed)
{
	char buf[64];
	uint64_t n;

	if (sysfs_read_attr(dir, name, buf, sizeof(buf)) != 0)
		return;
	if (!parse_u64(buf, 10, &n) || (mult > 1 && n > UINT64_MAX / mult)) {
		(*malformed)++;
		return;
	}
	v->bytes = n * mult;
	v->source = SYSINFO_SRC_KERNEL;
	v->present = true;
}

static void read_flag(const char *dir, const char *name,
		      struct sysinfo_flag *f, unsigned *malformed)
{
	char buf[16];
	uint64_t n;

	if (sysfs_read_attr(dir, name, buf, sizeof(buf)) != 0)
		return;
	if (!parse_u64(buf, 10, &n)) {
		(*malformed)++;
		return;
	}
	f->value = n != 0;
	f->source = SYSINFO_SRC_KERNEL;
	f->present = true;
}

static bool read_hex_attr(const char *dir, const char *name, uint8_t *out,
			  size_t n, unsigned *malformed)
{
	/* The largest is EXT_CSD: 1024 digits. */
	char buf[2 * EXT_CSD_BYTES + 8];

	if (sysfs_read_attr(dir, name, buf, sizeof(buf)) != 0)
		return false;
	if (!parse_hex_bytes(buf, out, n)) {
		(*malformed)++;
		return false;
	}
	return true;
}

static bool read_num_attr(const char *dir, const char *name, uint64_t *out,
			  unsigned *malformed)
{
	char buf[64];

	if (sysfs_read_attr(dir, name, buf, sizeof(buf)) != 0)
		return false;
	if (!parse_num(buf, out)) {
		(*malformed)++;
		return false;
	}
	return true;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Trim a copy of dir to its parent ("/a/b/c" -> "/a/b"). */
static void parent_dir(char *dir)
{
	char *s = strrchr(dir, '/');

	if (s && s != dir)
		*s = '\0';
	else if (s)
		s[1] = '\0';
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static struct sysinfo_value card_value(uint64_t bytes)
{
	struct sysinfo_value v = { bytes, SYSINFO_SRC_CARD, bytes != 0 };

	if (!bytes)
		v.source = SYSINFO_SRC_NONE;
	return v;
}

/* ---------------------------------------------------------------- */
/* The card behind device/ on a native SD/MMC host */

/* Parse "MM/YYYY". */
static bool parse_date(const char *s, unsigned *month, unsigned *year)
{
	char mbuf[8];
	const char *slash = strchr(s, '/');
	uint64_t m, y;

	if (!slash || (size_t)(slash - s) >= sizeof(mbuf))
		return false;
	memcpy(mbuf, s, (size_t)(slash - s));
	mbuf[slash - s] = '\0';
	if (!parse_u64(mbuf, 10, &m) || !parse_u64(slash + 1, 10, &y) ||
	    m > 99 || y > 9999)
		return false;
	*month = (unsigned)m;
	*year = (unsigned)y;
	return true;
}

/* EXT_CSD from debugfs: <root>/kernel/debug/<host>/<card>/ext_csd. */
static void read_debugfs_ext_csd(struct sysinfo *si, const char *root,
				 const char *card_dir)
{
	char host[PATH_MAX], dir[PATH_MAX];
	uint8_t ext[EXT_CSD_BYTES];
	int n;

	util_copy_str(host, sizeof(host), card_dir);
	parent_dir(host);
	n = snprintf(dir, sizeof(dir), "%s/kernel/debug/%s/%s", root,
		     base_name(host), base_name(card_dir));
	if (n < 0 || (size_t)n >= sizeof(dir))
		return;
	if (!read_hex_attr(dir, "ext_csd", ext, sizeof(ext), &si->malformed))
		return;
	sysinfo_decode_ext_csd(ext, &si->ext_csd);
	si->has_ext_csd = true;
}

static enum sysinfo_kind card_kind(const struct sysinfo *si, bool sd, bool mmc)
{
	if (sd) {
		if (!si->has_csd)
			return SYSINFO_KIND_SD;
		switch (si->csd.structure) {
		case 0:
			return SYSINFO_KIND_SD;
		case 1:
			/* Linux: "SDXC cards have a minimum C_SIZE of 0x00FFFF" */
			return si->csd.c_size >= 0xffff ?
				SYSINFO_KIND_SDXC : SYSINFO_KIND_SDHC;
		default:
			return SYSINFO_KIND_SDUC;
		}
	}
	if (mmc) {
		/* CBX (MMC 4.3 on): 0 removable card, 1 BGA, 2 POP.  Linux
		 * reports every mmcblk as non-removable, so this is the only
		 * sign of an embedded device. */
		bool v4 = !si->has_csd || si->csd.spec_vers >= 4;

		if (si->has_cid && si->cid.mmc && v4 &&
		    (si->cid.mmc_cbx == 1 || si->cid.mmc_cbx == 2))
			return SYSINFO_KIND_EMMC;
		return SYSINFO_KIND_MMC;
	}
	return SYSINFO_KIND_BLOCK;
}

/* Linux's idea of the CSD capacity for its preferred_erase_size guess:
 * the CSD value even where EXT_CSD has the real size. */
static uint64_t linux_csd_capacity(const struct sysinfo_csd *c)
{
	if (!c->mmc && c->structure != 0)
		return c->capacity_bytes;
	return csd_v1_capacity(c);
}

static void fill_ident(struct sysinfo *si, bool cid_decoded, uint64_t kmanfid,
		       bool has_kmanfid, uint64_t koemid, bool has_koemid,
		       uint64_t kserial, bool has_kserial, uint64_t khwrev,
		       uint64_t kfwrev)
{
	struct sysinfo_ident *id = &si->ident;
	unsigned km = 0, ky = 0;
	bool kdate = si->kernel_date[0] &&
		parse_date(si->kernel_date, &km, &ky);

	if (cid_decoded) {
		id->present = true;
		id->source = SYSINFO_SRC_CARD;
		id->manfid = si->cid.manfid;
		id->oemid = si->cid.oemid;
		util_copy_str(id->product, sizeof(id->product), si->cid.name);
		id->hwrev = si->cid.prv >> 4;
		id->fwrev = si->cid.prv & 0xf;
		id->serial_present = true;
		id->serial = si->cid.serial;
		id->year = si->cid.year;
		id->month = si->cid.month;
		if (kdate && (km != id->month || ky != id->year))
			si->kernel_date_differs = true;
	} else if (has_kmanfid || si->kernel_name[0]) {
		id->present = true;
		id->source = SYSINFO_SRC_KERNEL;
		id->manfid = (unsigned)kmanfid;
		id->oemid = has_koemid ? (uint16_t)koemid : 0;
		util_copy_str(id->product, sizeof(id->product), si->kernel_name);
		id->hwrev = (unsigned)khwrev;
		id->fwrev = (unsigned)kfwrev;
		id->serial_present = has_kserial;
		id->serial = (uint32_t)kserial;
		if (kdate) {
			id->month = km;
			id->year = ky;
		}
	}
	if (!id->present)
		return;
	id->manufacturer = sysinfo_manufacturer_name(si->kind, id->manfid);
	if (sysinfo_kind_is_sd(si->kind)) {
		unsigned hi = id->oemid >> 8, lo = id->oemid & 0xff;

		if (hi > 0x20 && hi < 0x7f && lo > 0x20 && lo < 0x7f) {
			id->oem_ascii[0] = (char)hi;
			id->oem_ascii[1] = (char)lo;
			id->oem_ascii[2] = '\0';
		}
	}
}

/* The data lines the card runs with: the SD Status' DAT_BUS_WIDTH, or
 * the EXT_CSD BUS_WIDTH Linux switched the eMMC to. */
static void set_bus_width_in_use(struct sysinfo *si, bool sd)
{
	static const unsigned sd_widths[4] = { 1, 0, 4, 0 };
	static const unsigned mmc_widths[7] = { 1, 4, 8, 0, 0, 4, 8 };

	if (sd && si->has_ssr) {
		si->bus_width_in_use = sd_widths[si->ssr.bus_width & 3];
	} else if (!sd && si->has_ext_csd && si->ext_csd.bus_width < 7) {
		si->bus_width_in_use = mmc_widths[si->ext_csd.bus_width];
		si->bus_ddr = si->ext_csd.bus_width >= 5;
	}
}

static void read_card(struct sysinfo *si, const char *root, const char *card_dir)
{
	uint64_t manfid = 0, oemid = 0, serial = 0, hwrev = 0, fwrev = 0, rev;
	bool has_manfid, has_oemid, has_serial, sd, mmc, cid_decoded = false;
	struct sysinfo_value erase = { 0 }, pref = { 0 };
	uint64_t hc = 0;

	si->has_card = true;
	sysfs_read_attr(card_dir, "type", si->card_type, sizeof(si->card_type));
	sd = strcmp(si->card_type, "SD") == 0 ||
		strcmp(si->card_type, "SDcombo") == 0;
	mmc = strcmp(si->card_type, "MMC") == 0;

	si->has_cid = read_hex_attr(card_dir, "cid", si->raw_cid, CID_BYTES,
				    &si->malformed);
	si->has_csd = read_hex_attr(card_dir, "csd", si->raw_csd, CSD_BYTES,
				    &si->malformed);
	if (sd) {
		si->has_scr = read_hex_attr(card_dir, "scr", si->raw_scr,
					    SCR_BYTES, &si->malformed);
		si->has_ssr = read_hex_attr(card_dir, "ssr", si->raw_ssr,
					    SSR_BYTES, &si->malformed);
	}
	if (sysfs_read_attr(card_dir, "name", si->kernel_name,
		      sizeof(si->kernel_name)) != 0)
		si->kernel_name[0] = '\0';
	if (sysfs_read_attr(card_dir, "date", si->kernel_date,
		      sizeof(si->kernel_date)) != 0)
		si->kernel_date[0] = '\0';
	has_manfid = read_num_attr(card_dir, "manfid", &manfid, &si->malformed);
	has_oemid = read_num_attr(card_dir, "oemid", &oemid, &si->malformed);
	has_serial = read_num_attr(card_dir, "serial", &serial, &si->malformed);
	read_num_attr(card_dir, "hwrev", &hwrev, &si->malformed);
	read_num_attr(card_dir, "fwrev", &fwrev, &si->malformed);
	read_value(card_dir, "erase_size", 1, &erase, &si->malformed);
	read_value(card_dir, "preferred_erase_size", 1, &pref, &si->malformed);

	si->ext_csd_rev = -1;
	if (mmc) {
		read_debugfs_ext_csd(si, root, card_dir);
		if (si->has_ext_csd)
			si->ext_csd_rev = (int)si->ext_csd.rev;
		else if (read_num_attr(card_dir, "rev", &rev, &si->malformed) &&
			 rev < 256)
			si->ext_csd_rev = (int)rev;
	}

	/* Decode what sysfs holds. */
	if (si->has_csd) {
		int err = sd ? sysinfo_decode_csd_sd(si->raw_csd, &si->csd) :
			mmc ? sysinfo_decode_csd_mmc(si->raw_csd, &si->csd) : -EINVAL;

		if (err) {
			si->has_csd = false;
			si->malformed += sd || mmc;
		}
	}
	if (si->has_cid && sd) {
		sysinfo_decode_cid_sd(si->raw_cid, &si->cid);
		cid_decoded = true;
	} else if (si->has_cid && mmc && (!si->has_csd || si->csd.spec_vers >= 2)) {
		sysinfo_decode_cid_mmc(si->raw_cid, si->ext_csd_rev > 0 ?
				       (unsigned)si->ext_csd_rev : 0, &si->cid);
		cid_decoded = true;
	}
	if (si->has_scr && sysinfo_decode_scr(si->raw_scr, &si->scr) != 0) {
		si->has_scr = false;
		si->malformed++;
	}
	if (si->has_ssr)
		sysinfo_decode_ssr(si->raw_ssr, si->has_scr && si->scr.sd_spec3,
				   &si->ssr);

	if (si->has_cid)
		si->cid_crc = sysinfo_check_crc(si->raw_cid);
	if (si->has_csd)
		si->csd_crc = sysinfo_check_crc(si->raw_csd);
	set_bus_width_in_use(si, sd);

	si->kind = card_kind(si, sd, mmc);
	fill_ident(si, cid_decoded, manfid, has_manfid, oemid, has_oemid,
		   serial, has_serial, hwrev, fwrev);

	/* Capacity from the card. */
	if (mmc && si->has_ext_csd && si->ext_csd.sec_count)
		si->capacity = card_value(si->ext_csd.sec_count * 512);
	else if (si->has_csd)
		si->capacity = card_value(si->csd.capacity_bytes);

	if (si->has_csd && !si->csd.mmc && si->csd.structure == 0)
		si->erase_sector = card_value(si->csd.sector_bytes);
	if (si->has_csd && si->csd.mmc)
		si->erase_group = card_value(si->csd.erase_bytes);
	if (si->has_ext_csd)
		si->hc_erase_group = card_value(si->ext_csd.hc_erase_bytes);
	if (si->has_ext_csd && (si->ext_csd.erase_group_def & 1))
		hc = si->ext_csd.hc_erase_bytes;

	/* erase_size: the card's when it is what the registers say. */
	if (erase.present) {
		si->erase_size = erase;
		if ((si->has_csd && si->csd.erase_bytes == erase.bytes) ||
		    (hc && hc == erase.bytes))
			si->erase_size.source = SYSINFO_SRC_CARD;
	}

	/* preferred_erase_size: AU, or Linux's guess. */
	if (si->has_csd && erase.present)
		si->linux_guess_bytes = sysinfo_linux_pref_erase_guess(
			linux_csd_capacity(&si->csd), erase.bytes);
	if (pref.present && pref.bytes) {
		si->preferred_erase = pref;
		si->preferred_erase.source = sysinfo_classify_pref_erase(
			sd, pref.bytes, si->has_ssr, si->ssr.au_bytes,
			si->linux_guess_bytes,
			si->has_ext_csd ? si->ext_csd.hc_erase_bytes : 0,
			&si->preferred_erase_unverified);
	}

	/* The AU: from the SD Status, or read back through the kernel. */
	if (sd && si->has_ssr && si->ssr.au_bytes) {
		si->au = card_value(si->ssr.au_bytes);
	} else if (sd && !si->has_ssr &&
		   si->preferred_erase.source == SYSINFO_SRC_CARD) {
		si->au = card_value(si->preferred_erase.bytes);
		si->au_via_kernel = true;
	}
}

/* ---------------------------------------------------------------- */
/* USB and SCSI details: the reader or stick, never the card */

static void read_usb_ids(struct sysinfo *si, const char *root, const char *dir)
{
	char d[PATH_MAX], buf[16];
	uint64_t v, p;
	size_t rootlen = strlen(root);

	util_copy_str(d, sizeof(d), dir);
	while (strlen(d) > rootlen && starts_with(d, root)) {
		if (sysfs_read_attr(d, "idVendor", buf, sizeof(buf)) == 0 &&
		    parse_u64(buf, 16, &v) && v <= 0xffff &&
		    sysfs_read_attr(d, "idProduct", buf, sizeof(buf)) == 0 &&
		    parse_u64(buf, 16, &p) && p <= 0xffff) {
			si->usb_id_present = true;
			si->usb_vendor_id = (uint16_t)v;
			si->usb_product_id = (uint16_t)p;
			if (sysfs_read_attr(d, "product", si->usb_product,
				      sizeof(si->usb_product)) != 0)
				si->usb_product[0] = '\0';
			return;
		}
		parent_dir(d);
	}
}

static void read_scsi_strings(struct sysinfo *si, const char *dev_dir)
{
	if (sysfs_read_attr(dev_dir, "vendor", si->vendor, sizeof(si->vendor)) != 0)
		si->vendor[0] = '\0';
	if (sysfs_read_attr(dev_dir, "model", si->model, sizeof(si->model)) != 0)
		si->model[0] = '\0';
}

/* ---------------------------------------------------------------- */
/* The block device */

static void reset(struct sysinfo *si)
{
	memset(si, 0, sizeof(*si));
	si->ext_csd_rev = -1;
}

/* The disk's queue limits (queue_dir: <disk>/queue). */
static void read_queue(struct sysinfo *si, const char *queue_dir)
{
	read_value(queue_dir, "logical_block_size", 1, &si->logical_block,
		   &si->malformed);
	read_value(queue_dir, "physical_block_size", 1, &si->physical_block,
		   &si->malformed);
	read_value(queue_dir, "minimum_io_size", 1, &si->minimum_io, &si->malformed);
	read_value(queue_dir, "optimal_io_size", 1, &si->optimal_io, &si->malformed);
	read_value(queue_dir, "max_sectors_kb", 1024, &si->max_request,
		   &si->malformed);
	read_value(queue_dir, "discard_granularity", 1, &si->discard_granularity,
		   &si->malformed);
	read_value(queue_dir, "discard_max_bytes", 1, &si->discard_max,
		   &si->malformed);
	read_flag(queue_dir, "rotational", &si->rotational, &si->malformed);
}

/* link: a path that resolves to the device's sysfs directory. */
static int read_block(const char *sysfs_root, const char *link,
		      struct sysinfo *si)
{
	char disk[PATH_MAX], path[PATH_MAX], buf[64];
	char *root = NULL, *real = NULL, *dev = NULL;
	const char *rel;
	unsigned ma, mi;
	int err = 0;

	root = realpath(sysfs_root, NULL);
	if (!root) {
		err = -errno;
		goto out;
	}
	real = realpath(link, NULL);
	if (!real) {
		err = -errno;
		goto out;
	}
	rel = real;
	if (starts_with(real, root) && real[strlen(root)] == '/')
		rel = real + strlen(root);
	if (strlen(rel) >= sizeof(si->sysfs_path) ||
	    strlen(real) >= sizeof(disk)) {
		err = -ENAMETOOLONG;
		goto out;
	}
	util_copy_str(si->sysfs_path, sizeof(si->sysfs_path), rel);
	util_copy_str(si->name, sizeof(si->name), base_name(real));

	/* A partition: everything but the size describes its disk. */
	util_copy_str(disk, sizeof(disk), real);
	if (exists(real, "partition")) {
		si->is_partition = true;
		parent_dir(disk);
	}
	util_copy_str(si->disk_name, sizeof(si->disk_name), base_name(disk));

	if (sysfs_read_attr(real, "dev", buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "%u:%u", &ma, &mi) == 2) {
		si->major = ma;
		si->minor = mi;
	}
	read_value(real, "size", 512, &si->size, &si->malformed);
	read_value(disk, "size", 512, &si->disk_size, &si->malformed);
	read_value(real, "alignment_offset", 1, &si->alignment_offset,
		   &si->malformed);
	read_flag(real, "ro", &si->read_only, &si->malformed);
	read_flag(disk, "removable", &si->removable, &si->malformed);
	err = sysfs_join(path, sizeof(path), disk, "queue");
	if (err)
		goto out;
	read_queue(si, path);

	si->usb_bus = strstr(rel, "/usb") != NULL;

	/* device/: the SD/MMC card on a native host, or the SCSI device of a
	 * USB reader, stick or disk. */
	err = sysfs_join(path, sizeof(path), disk, "device");
	if (err)
		goto out;
	dev = realpath(path, NULL);
	if (dev && exists(dev, "type") &&
	    (exists(dev, "cid") || exists(dev, "manfid"))) {
		read_card(si, root, dev);
	} else if (si->usb_bus) {
		si->kind = SYSINFO_KIND_USB;
		si->registers_hidden = true;
		if (dev)
			read_scsi_strings(si, dev);
		read_usb_ids(si, root, disk);
	} else if (starts_with(si->disk_name, "loop")) {
		si->kind = SYSINFO_KIND_LOOP;
		err = sysfs_join(path, sizeof(path), disk, "loop");
		if (err)
			goto out;
		if (sysfs_read_attr(path, "backing_file", si->backing_file,
			      sizeof(si->backing_file)) != 0)
			si->backing_file[0] = '\0';
	} else if (strstr(rel, "/devices/virtual/")) {
		si->kind = SYSINFO_KIND_VIRTUAL;
	} else {
		si->kind = SYSINFO_KIND_BLOCK;
		if (dev)
			read_scsi_strings(si, dev);
	}
	si->capacity_mismatch = si->capacity.present && si->disk_size.present &&
		si->capacity.bytes != si->disk_size.bytes;
out:
	free(dev);
	free(real);
	free(root);
	return err;
}

int sysinfo_read_name(const char *name, const char *sysfs_root,
		      struct sysinfo *out)
{
	char path[PATH_MAX], dir[PATH_MAX];
	int err;

	reset(out);
	if (!name || !*name || strchr(name, '/') || !sysfs_root)
		return -EINVAL;
	err = sysfs_join(dir, sizeof(dir), sysfs_root, "block");
	if (!err)
		err = sysfs_join(path, sizeof(path), dir, name);
	if (err)
		return err;
	if (access(path, F_OK) != 0) {
		err = sysfs_join(dir, sizeof(dir), sysfs_root, "class/block");
		if (!err)
			err = sysfs_join(path, sizeof(path), dir, name);
		if (err)
			return err;
	}
	err = read_block(sysfs_root, path, out);
	if (err)
		reset(out);
	return err;
}

int sysinfo_read(const char *dev_path, const char *sysfs_root,
		 struct sysinfo *out)
{
	char path[PATH_MAX];
	struct stat st;
	int n, err;

	reset(out);
	if (!dev_path || !*dev_path || !sysfs_root)
		return -EINVAL;
	if (devspec_is_sim(dev_path)) {
		out->kind = SYSINFO_KIND_SIM;
		util_copy_str(out->name, sizeof(out->name), dev_path);
		return 0;
	}
	if (stat(dev_path, &st) != 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		out->kind = SYSINFO_KIND_IMAGE;
		util_copy_str(out->name, sizeof(out->name), dev_path);
		out->size.bytes = (uint64_t)st.st_size;
		out->size.source = SYSINFO_SRC_KERNEL;
		out->size.present = true;
		return 0;
	}
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	n = snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs_root,
		     major(st.st_rdev), minor(st.st_rdev));
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	err = read_block(sysfs_root, path, out);
	if (err)
		reset(out);
	return err;
}

int sysinfo_partition_start(const char *sysfs_root, const struct sysinfo *si,
			    uint64_t *start_bytes, unsigned *number)
{
	char dir[PATH_MAX], part[PATH_MAX], buf[64];
	uint64_t start, n;
	int err;

	if (!si->is_partition || strchr(si->name, '/'))
		return -EINVAL;
	err = sysfs_join(dir, sizeof(dir), sysfs_root, "class/block");
	if (!err)
		err = sysfs_join(part, sizeof(part), dir, si->name);
	if (!err)
		err = sysfs_read_attr(part, "start", buf, sizeof(buf));
	if (err)
		return err;
	if (!parse_u64(buf, 10, &start) || start > UINT64_MAX / 512)
		return -EINVAL;
	*start_bytes = start * 512;	/* sysfs counts 512-byte units */
	*number = 0;
	if (sysfs_read_attr(part, "partition", buf, sizeof(buf)) == 0 && parse_u64(buf, 10, &n) &&
	    n < 1u << 20)
		*number = (unsigned)n;
	return 0;
}
