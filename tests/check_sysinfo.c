/* check_sysinfo.c - register decoding on known values, the provenance
 * labels, captured sysfs trees (tests/data/sysfs, see its README.md) and
 * the identity report in text and JSON. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "json.h"
#include "jsonv.h"
#include "report_identity.h"
#include "sysinfo.h"
#include "tests.h"
#include "testutil.h"

/* Tests run from the repository root. */
#define SYSFS_DATA "tests/data/sysfs/"

static const uint64_t KiB = 1024, MiB = 1024 * 1024;

/* "4134..." -> bytes; the string must have exactly 2 * n digits. */
static void hex(const char *s, uint8_t *out, size_t n)
{
	ck_assert_uint_eq(strlen(s), 2 * n);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		ck_assert_int_eq(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static void read_tree(const char *tree, const char *name, struct sysinfo *si)
{
	int err = sysinfo_read_name(name, tree, si);

	ck_assert_msg(err == 0, "sysinfo_read_name(%s, %s) = %d", name, tree, err);
}

/* ------------------------------------------------------------------ */
/* The extractor and the decoders */

START_TEST(test_reg_bits)
{
	/* 16-bit register 0x12 0x34: bit 15 is the top bit of byte 0. */
	const uint8_t r2[2] = { 0x12, 0x34 };
	uint8_t r16[16] = { 0 };

	ck_assert_uint_eq(sysinfo_reg_bits(r2, 2, 0, 16), 0x1234);
	ck_assert_uint_eq(sysinfo_reg_bits(r2, 2, 4, 8), 0x23);	/* across bytes */
	ck_assert_uint_eq(sysinfo_reg_bits(r2, 2, 12, 4), 0x1);
	ck_assert_uint_eq(sysinfo_reg_bits(r2, 2, 0, 1), 0);
	ck_assert_uint_eq(sysinfo_reg_bits(r2, 2, 2, 1), 1);
	ck_assert_uint_eq(sysinfo_reg_bits(r2, 2, 14, 8), 0);	/* past the top */
	r16[0] = 0x80;
	r16[15] = 0x01;
	ck_assert_uint_eq(sysinfo_reg_bits(r16, 16, 127, 1), 1);
	ck_assert_uint_eq(sysinfo_reg_bits(r16, 16, 0, 1), 1);
	ck_assert_uint_eq(sysinfo_reg_bits(r16, 16, 96, 32), 0x80000000u);
	ck_assert_uint_eq(sysinfo_reg_bits(r16, 16, 1, 32), 0);
}
END_TEST

/* The seed card (shared/seeds/004): Kingston SD4GB, 10/2011. */
START_TEST(test_seed_cid)
{
	uint8_t cid[16];
	struct sysinfo_cid c;

	hex("4134325344344742300000011200ba39", cid, sizeof(cid));
	ck_assert_int_eq(sysinfo_decode_cid_sd(cid, &c), 0);
	ck_assert(!c.mmc);
	ck_assert_uint_eq(c.manfid, 0x41);
	ck_assert_uint_eq(c.oemid, 0x3432);		/* "42" */
	ck_assert_str_eq(c.name, "SD4GB");
	ck_assert_uint_eq(c.prv, 0x30);			/* hwrev 3, fwrev 0 */
	ck_assert_uint_eq(c.serial, 0x00000112);
	ck_assert_uint_eq(c.year, 2011);
	ck_assert_uint_eq(c.month, 10);
	ck_assert_uint_eq(c.crc, 0x39 >> 1);
}
END_TEST

/* CSD 2.0: C_SIZE 0x1da7 = 7591, capacity (7591 + 1) * 512 KiB. */
START_TEST(test_seed_csd_v2)
{
	uint8_t csd[16];
	struct sysinfo_csd c;

	hex("400e00325b5900001da77f800a40002d", csd, sizeof(csd));
	ck_assert_int_eq(sysinfo_decode_csd_sd(csd, &c), 0);
	ck_assert_uint_eq(c.structure, 1);
	ck_assert_uint_eq(c.c_size, 7591);
	ck_assert_uint_eq(c.capacity_bytes, 3980394496u);
	ck_assert_uint_eq(c.capacity_bytes, 7592 * 512 * KiB);
	ck_assert_uint_eq(c.tran_speed, 0x32);
	ck_assert_uint_eq(c.tran_speed_kbit, 25000);	/* 25 MHz default speed */
	ck_assert_uint_eq(c.ccc, 0x5b5);
	ck_assert_uint_eq(c.read_bl_len, 9);
	ck_assert_uint_eq(c.erase_bytes, 512);		/* Linux: one sector */
	ck_assert_uint_eq(c.sector_bytes, 0);		/* fixed, meaningless */
	ck_assert(!c.perm_write_protect);
	ck_assert(!c.tmp_write_protect);
}
END_TEST

/* An SD CSD 1.0 built by hand from the spec's bit layout (Simplified
 * Spec 5.3.2), byte by byte (byte 0 holds bits 127..120):
 *   0  [127:120] CSD_STRUCTURE 0, reserved           00
 *   1  [119:112] TAAC                                 26
 *   2  [111:104] NSAC                                 00
 *   3  [103:96]  TRAN_SPEED 0x32 (25 Mbit/s)          32
 *   4  [95:88]   CCC[11:4] of 0x5f5                   5f
 *   5  [87:80]   CCC[3:0] 5, READ_BL_LEN 9            59
 *   6  [79:72]   READ_BL_PARTIAL 1, misalign/DSR 0,
 *                reserved 00, C_SIZE[11:10] of 0xf0f = 3   83
 *   7  [71:64]   C_SIZE[9:2] = 0xc3                   c3
 *   8  [63:56]   C_SIZE[1:0] = 3, VDD_R_CURR 0 0      c0
 *   9  [55:48]   VDD_W_CURR 0 0, C_SIZE_MULT[2:1] of 6 = 3   03
 *  10  [47:40]   C_SIZE_MULT[0] 0, ERASE_BLK_EN 0,
 *                SECTOR_SIZE[6:1] of 0x1f = 0x0f      0f
 *  11  [39:32]   SECTOR_SIZE[0] 1, WP_GRP_SIZE 0      80
 *  12  [31:24]   WP_GRP_ENABLE 0, reserved, R2W_FACTOR 2,
 *                WRITE_BL_LEN[3:2] of 9 = 2           0a
 *  13  [23:16]   WRITE_BL_LEN[1:0] 1, rest 0          40
 *  14  [15:8]    TMP_WRITE_PROTECT 1                  10
 *  15  [7:0]     CRC 0, stop bit 1                    01
 * Capacity (0xf0f + 1) * 2^(6 + 2) * 2^9 = 3856 * 256 * 512 bytes; erase
 * unit (SECTOR_SIZE + 1) = 32 write blocks of 512 = 16 KiB, since
 * ERASE_BLK_EN is 0. */
START_TEST(test_sd_v1_csd_by_hand)
{
	uint8_t csd[16];
	struct sysinfo_csd c;

	hex("002600325f5983c3c0030f800a401001", csd, sizeof(csd));
	ck_assert_int_eq(sysinfo_decode_csd_sd(csd, &c), 0);
	ck_assert_uint_eq(c.structure, 0);
	ck_assert_uint_eq(c.ccc, 0x5f5);
	ck_assert_uint_eq(c.read_bl_len, 9);
	ck_assert_uint_eq(c.c_size, 0xf0f);
	ck_assert_uint_eq(c.c_size_mult, 6);
	ck_assert_uint_eq(c.capacity_bytes, 3856ull * 256 * 512);
	ck_assert(!c.erase_blk_en);
	ck_assert_uint_eq(c.write_bl_len, 9);
	ck_assert_uint_eq(c.sector_bytes, 16 * KiB);
	ck_assert_uint_eq(c.erase_bytes, 16 * KiB);
	ck_assert(c.tmp_write_protect);
	ck_assert(!c.perm_write_protect);
	ck_assert_uint_eq(c.tran_speed_kbit, 25000);
}
END_TEST

/* A real SD 1.0 card: SanDisk SU02G (libmaple's Card/sdcard-verification.md
 * dump): 1024-byte read blocks, ERASE_BLK_EN 1 and 32 KiB sectors. */
START_TEST(test_sd_v1_real)
{
	uint8_t cid[16], csd[16];
	struct sysinfo_cid ci;
	struct sysinfo_csd c;

	hex("03534453553032478000e22ef4009cfc", cid, sizeof(cid));
	hex("002600325f5a83aefefbcfff928040de", csd, sizeof(csd));
	sysinfo_decode_cid_sd(cid, &ci);
	ck_assert_uint_eq(ci.manfid, 0x03);
	ck_assert_str_eq(ci.name, "SU02G");
	ck_assert_uint_eq(ci.year, 2009);
	ck_assert_uint_eq(ci.month, 12);
	ck_assert_int_eq(sysinfo_decode_csd_sd(csd, &c), 0);
	ck_assert_uint_eq(c.read_bl_len, 10);
	ck_assert_uint_eq(c.c_size, 3771);
	ck_assert_uint_eq(c.c_size_mult, 7);
	ck_assert_uint_eq(c.capacity_bytes, 3772ull * 512 * 1024);
	ck_assert(c.erase_blk_en);
	ck_assert_uint_eq(c.erase_bytes, 512);
	ck_assert_uint_eq(c.sector_bytes, 32 * KiB);	/* 32 blocks of 1 KiB */
}
END_TEST

START_TEST(test_sd_csd_reserved_structure)
{
	uint8_t csd[16] = { 0xc0 };	/* CSD_STRUCTURE 3 */
	struct sysinfo_csd c;

	ck_assert_int_eq(sysinfo_decode_csd_sd(csd, &c), -EINVAL);
}
END_TEST

/* An MMC CSD built by hand (JESD84 7.3), byte by byte:
 *   0  [127:120] CSD_STRUCTURE 2, SPEC_VERS 4, reserved    90
 *   1  TAAC 27    2  NSAC 01    3  TRAN_SPEED 32            27 01 32
 *   4  [95:88]   CCC[11:4] of 0x0f5                        0f
 *   5  [87:80]   CCC[3:0] 5, READ_BL_LEN 9                 59
 *   6  [79:72]   partial/misalign/DSR 0, reserved,
 *                C_SIZE[11:10] of 0x7ff = 1                01
 *   7  [71:64]   C_SIZE[9:2] = 0xff                        ff
 *   8  [63:56]   C_SIZE[1:0] 3, VDD_R_CURR_MIN 7, _MAX 7   ff
 *   9  [55:48]   VDD_W_CURR_MIN 7, _MAX 7, C_SIZE_MULT[2:1] 3   ff
 *  10  [47:40]   C_SIZE_MULT[0] 1, ERASE_GRP_SIZE 0x07,
 *                ERASE_GRP_MULT[4:3] of 0x0f = 1           9d
 *  11  [39:32]   ERASE_GRP_MULT[2:0] 7, WP_GRP_SIZE 0x0f   ef
 *  12  [31:24]   WP_GRP_ENABLE 1, DEFAULT_ECC 0, R2W_FACTOR 4,
 *                WRITE_BL_LEN[3:2] 2                       92
 *  13  [23:16]   WRITE_BL_LEN[1:0] 1, rest 0               40
 *  14  00    15  CRC 0, stop bit 1                         00 01
 * Capacity (0x7ff + 1) * 2^(7 + 2) * 512 = 512 MiB; erase group
 * (7 + 1) * (15 + 1) write blocks of 512 = 64 KiB (values that differ
 * from their neighbours, so an off-by-one bit position shows); TRAN_SPEED
 * 0x32 is 26 Mbit/s on MMC (multiplier 2.6), not SD's 25. */
START_TEST(test_mmc_csd_by_hand)
{
	uint8_t csd[16];
	struct sysinfo_csd c;

	hex("902701320f5901ffffff9def92400001", csd, sizeof(csd));
	ck_assert_int_eq(sysinfo_decode_csd_mmc(csd, &c), 0);
	ck_assert(c.mmc);
	ck_assert_uint_eq(c.structure, 2);
	ck_assert_uint_eq(c.spec_vers, 4);
	ck_assert_uint_eq(c.ccc, 0x0f5);
	ck_assert_uint_eq(c.c_size, 0x7ff);
	ck_assert_uint_eq(c.c_size_mult, 7);
	ck_assert_uint_eq(c.capacity_bytes, 512 * MiB);
	ck_assert_uint_eq(c.erase_grp_size, 7);
	ck_assert_uint_eq(c.erase_grp_mult, 15);
	ck_assert_uint_eq(c.write_bl_len, 9);
	ck_assert_uint_eq(c.erase_bytes, 64 * KiB);
	ck_assert_uint_eq(c.tran_speed_kbit, 26000);
}
END_TEST

/* A real eMMC 4.41: Samsung M8G1GC (armbian/build#246). */
START_TEST(test_emmc_real_registers)
{
	uint8_t cid[16], csd[16];
	struct sysinfo_cid c;
	struct sysinfo_csd d;

	hex("1501004d384731474303dc0db061506f", cid, sizeof(cid));
	hex("d02701320f5903fff6dbffef8e40400d", csd, sizeof(csd));
	ck_assert_int_eq(sysinfo_decode_cid_mmc(cid, 6, &c), 0);
	ck_assert(c.mmc);
	ck_assert_uint_eq(c.manfid, 0x15);
	ck_assert_uint_eq(c.mmc_cbx, 1);		/* BGA: embedded */
	ck_assert_uint_eq(c.mmc_oid, 0x00);
	ck_assert_uint_eq(c.oemid, 0x0100);		/* as Linux reports it */
	ck_assert_str_eq(c.name, "M8G1GC");
	ck_assert_uint_eq(c.prv, 0x03);
	ck_assert_uint_eq(c.serial, 0xdc0db061);
	ck_assert_uint_eq(c.month, 5);
	ck_assert_uint_eq(c.year, 2013);		/* y = 0, EXT_CSD_REV 6 */
	ck_assert_uint_eq(c.crc, 0x6f >> 1);
	/* Without EXT_CSD_REV the year stays 1997 + y (what that kernel
	 * printed); from REV 9 on it moves up once more. */
	sysinfo_decode_cid_mmc(cid, 0, &c);
	ck_assert_uint_eq(c.year, 1997);
	sysinfo_decode_cid_mmc(cid, 4, &c);
	ck_assert_uint_eq(c.year, 1997);
	sysinfo_decode_cid_mmc(cid, 5, &c);		/* eMMC 4.41 */
	ck_assert_uint_eq(c.year, 2013);
	sysinfo_decode_cid_mmc(cid, 8, &c);
	ck_assert_uint_eq(c.year, 2013);
	sysinfo_decode_cid_mmc(cid, 9, &c);
	ck_assert_uint_eq(c.year, 2029);

	ck_assert_int_eq(sysinfo_decode_csd_mmc(csd, &d), 0);
	ck_assert_uint_eq(d.structure, 3);		/* version in EXT_CSD */
	ck_assert_uint_eq(d.spec_vers, 4);
	ck_assert_uint_eq(d.c_size, 0xfff);
	ck_assert_uint_eq(d.capacity_bytes, 0);		/* > 2 GB: see EXT_CSD */
	ck_assert_uint_eq(d.erase_grp_size, 31);
	ck_assert_uint_eq(d.erase_grp_mult, 31);
	ck_assert_uint_eq(d.erase_bytes, 512 * KiB);
	ck_assert_uint_eq(d.tran_speed_kbit, 26000);
}
END_TEST

START_TEST(test_scr)
{
	uint8_t scr[8];
	struct sysinfo_scr s;

	/* The seed card: SD 3.0X, 1- and 4-bit bus, CPRM 2.00 (SDHC). */
	hex("0235800001000000", scr, sizeof(scr));
	ck_assert_int_eq(sysinfo_decode_scr(scr, &s), 0);
	ck_assert_uint_eq(s.sd_spec, 2);
	ck_assert(s.sd_spec3);
	ck_assert(!s.sd_spec4);
	ck_assert_uint_eq(s.bus_widths, 5);
	ck_assert_uint_eq(s.security, 3);
	ck_assert_str_eq(s.version, "3.0X");
	/* SanDisk SN512 (system-monitoring-center#45): SD 6.x, CMD23,
	 * CMD48/49 and CMD58/59 support bits. */
	hex("0245848700000000", scr, sizeof(scr));
	ck_assert_int_eq(sysinfo_decode_scr(scr, &s), 0);
	ck_assert(s.sd_spec4);
	ck_assert_uint_eq(s.sd_specx, 2);
	ck_assert_uint_eq(s.security, 4);		/* SDXC */
	ck_assert_uint_eq(s.cmd_support, 0x7);
	ck_assert_str_eq(s.version, "6.XX");
	hex("0205000000000000", scr, sizeof(scr));
	sysinfo_decode_scr(scr, &s);
	ck_assert_str_eq(s.version, "2.00");
	hex("0105000000000000", scr, sizeof(scr));
	sysinfo_decode_scr(scr, &s);
	ck_assert_str_eq(s.version, "1.10");
	hex("0235840000000000", scr, sizeof(scr));
	sysinfo_decode_scr(scr, &s);
	ck_assert_str_eq(s.version, "4.XX");
	hex("1235800000000000", scr, sizeof(scr));	/* SCR_STRUCTURE 1 */
	ck_assert_int_eq(sysinfo_decode_scr(scr, &s), -EINVAL);
}
END_TEST

/* SanDisk Extreme 32 GB SD Status (sdio-host test table): C10, U1, AU
 * 4 MiB, UHS AU 8 MiB, ERASE_SIZE 15, ERASE_TIMEOUT 1, ERASE_OFFSET 1. */
#define SE32G_SSR "8000000005000000040090000f051a00" \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"00000000000000000000000000000000"

START_TEST(test_ssr)
{
	uint8_t ssr[64];
	struct sysinfo_ssr s;

	hex(SE32G_SSR, ssr, sizeof(ssr));
	ck_assert_int_eq(sysinfo_decode_ssr(ssr, true, &s), 0);
	ck_assert_uint_eq(s.bus_width, 2);		/* 4-bit */
	ck_assert_uint_eq(s.card_type, 0);
	ck_assert_uint_eq(s.protected_area, 0x05000000);
	ck_assert_uint_eq(s.speed_class, 4);		/* class 10 */
	ck_assert_uint_eq(s.performance_move, 0);
	ck_assert_uint_eq(s.au_code, 9);
	ck_assert_uint_eq(s.au_bytes, 4 * MiB);
	ck_assert(!s.au_invalid);
	ck_assert_uint_eq(s.erase_size_aus, 15);
	ck_assert_uint_eq(s.erase_timeout_s, 1);
	ck_assert_uint_eq(s.erase_offset_s, 1);
	ck_assert_uint_eq(s.uhs_speed_grade, 1);
	ck_assert_uint_eq(s.uhs_au_code, 0xa);
	ck_assert_uint_eq(s.uhs_au_bytes, 8 * MiB);
	ck_assert_uint_eq(s.video_speed_class, 0);
	ck_assert_uint_eq(s.app_perf_class, 0);
	ck_assert(!s.discard_support);

	/* AU_SIZE [431:428] is the high nibble of byte 63 - 431 / 8 = 10.
	 * Code 0xA (8 MiB) only exists from SD 3.00 on. */
	ssr[10] = 0xa0;
	sysinfo_decode_ssr(ssr, true, &s);
	ck_assert_uint_eq(s.au_bytes, 8 * MiB);
	sysinfo_decode_ssr(ssr, false, &s);
	ck_assert(s.au_invalid);
	ck_assert_uint_eq(s.au_bytes, 0);
	ssr[10] = 0x00;
	sysinfo_decode_ssr(ssr, true, &s);
	ck_assert_uint_eq(s.au_code, 0);
	ck_assert_uint_eq(s.au_bytes, 0);
	ck_assert(!s.au_invalid);
}
END_TEST

START_TEST(test_au_table)
{
	static const uint64_t want[16] = {
		0, 16 * 1024, 32 * 1024, 64 * 1024, 128 * 1024, 256 * 1024,
		512 * 1024, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 12 << 20,
		16 << 20, 24 << 20, 32 << 20, 64 << 20,
	};

	for (unsigned code = 0; code < 16; code++)
		ck_assert_uint_eq(sysinfo_au_code_bytes(code), want[code]);
	ck_assert_uint_eq(sysinfo_au_code_bytes(16), 0);
}
END_TEST

START_TEST(test_ext_csd)
{
	uint8_t ext[512] = { 0 };
	struct sysinfo_ext_csd e;

	ext[192] = 8;					/* EXT_CSD_REV: eMMC 5.1 */
	ext[212] = 0x00;				/* SEC_COUNT 0x00e90000, */
	ext[213] = 0x00;				/* little endian */
	ext[214] = 0xe9;
	ext[215] = 0x00;
	ext[175] = 1;					/* ERASE_GROUP_DEF */
	ext[224] = 1;					/* HC_ERASE_GRP_SIZE */
	ext[221] = 8;					/* HC_WP_GRP_SIZE */
	ck_assert_int_eq(sysinfo_decode_ext_csd(ext, &e), 0);
	ck_assert_uint_eq(e.rev, 8);
	ck_assert_uint_eq(e.sec_count, 15269888);
	ck_assert_uint_eq(e.erase_group_def, 1);
	ck_assert_uint_eq(e.hc_erase_grp_size, 1);
	ck_assert_uint_eq(e.hc_wp_grp_size, 8);
	ck_assert_uint_eq(e.hc_erase_bytes, 512 * KiB);
	ck_assert_uint_eq(e.hc_wp_bytes, 4 * MiB);	/* 8 erase groups */
	ck_assert_uint_eq(e.super_page_bytes, 0);	/* ACC_SIZE 0 */
	ck_assert_uint_eq(e.optimal_write_bytes, 0);

	ext[183] = 6;					/* BUS_WIDTH: 8-bit DDR */
	ext[225] = 0x16;				/* SUPER_PAGE_SIZE 6 */
	ext[266] = 4;					/* OPTIMAL_READ_SIZE */
	ext[265] = 16;					/* OPTIMAL_WRITE_SIZE */
	ext[264] = 9;					/* OPTIMAL_TRIM_UNIT_SIZE */
	ck_assert_int_eq(sysinfo_decode_ext_csd(ext, &e), 0);
	ck_assert_uint_eq(e.bus_width, 6);
	ck_assert_uint_eq(e.super_page_bytes, 16 * KiB);	/* 512 << 5 */
	ck_assert_uint_eq(e.optimal_read_bytes, 16 * KiB);
	ck_assert_uint_eq(e.optimal_write_bytes, 64 * KiB);
	ck_assert_uint_eq(e.optimal_trim_bytes, 1 * MiB);	/* 4 KiB << 8 */
	/* before eMMC 5.0 those bytes are reserved */
	ext[192] = 6;
	ck_assert_int_eq(sysinfo_decode_ext_csd(ext, &e), 0);
	ck_assert_uint_eq(e.optimal_read_bytes, 0);
	ck_assert_uint_eq(e.optimal_trim_bytes, 0);
	ck_assert_uint_eq(e.super_page_bytes, 16 * KiB);
}
END_TEST

START_TEST(test_emmc_version)
{
	ck_assert_str_eq(sysinfo_emmc_version(0), "4.0");
	ck_assert_str_eq(sysinfo_emmc_version(5), "4.41");
	ck_assert_str_eq(sysinfo_emmc_version(6), "4.5");
	ck_assert_str_eq(sysinfo_emmc_version(8), "5.1");
	ck_assert_ptr_null(sysinfo_emmc_version(4));	/* obsolete */
	ck_assert_ptr_null(sysinfo_emmc_version(200));
}
END_TEST

/* The CRC7 on real registers whose hosts pass it on, one changed bit, and
 * a host that drops it (the SN512's CID ends in 00). */
START_TEST(test_crc7)
{
	uint8_t cid[16], csd[16];

	hex("4134325344344742300000011200ba39", cid, sizeof(cid));
	ck_assert_uint_eq(sysinfo_crc7(cid, 15), 0x39 >> 1);
	ck_assert_int_eq(sysinfo_check_crc(cid), SYSINFO_CRC_OK);
	hex("400e00325b5900001da77f800a40002d", csd, sizeof(csd));
	ck_assert_int_eq(sysinfo_check_crc(csd), SYSINFO_CRC_OK);
	hex("1501004d384731474303dc0db061506f", cid, sizeof(cid));	/* eMMC */
	ck_assert_int_eq(sysinfo_check_crc(cid), SYSINFO_CRC_OK);
	cid[9] ^= 0x10;
	ck_assert_int_eq(sysinfo_check_crc(cid), SYSINFO_CRC_BAD);
	cid[15] = 0;
	ck_assert_int_eq(sysinfo_check_crc(cid), SYSINFO_CRC_NOT_PASSED);
	ck_assert_str_eq(sysinfo_crc_name(SYSINFO_CRC_NOT_PASSED), "not_passed");
	ck_assert_str_eq(sysinfo_crc_name(SYSINFO_CRC_OK), "ok");
}
END_TEST

/* ------------------------------------------------------------------ */
/* preferred_erase_size: Linux's guess and the labels */

START_TEST(test_linux_guess)
{
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(100 * MiB, 512), 512 * KiB);
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(200 * MiB, 512), 1 * MiB);
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(600 * MiB, 512), 2 * MiB);
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(1023 * MiB, 512), 2 * MiB);
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(1024 * MiB, 512), 4 * MiB);
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(3980394496u, 512), 4 * MiB);
	/* at least one erase unit, rounded up to a multiple of it */
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(64 * MiB, 1 * MiB), 1 * MiB);
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(4096 * MiB, 3 * MiB), 6 * MiB);
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(4096 * MiB, 512 * KiB), 4 * MiB);
	ck_assert_uint_eq(sysinfo_linux_pref_erase_guess(4096 * MiB, 0), 0);
}
END_TEST

struct classify_case {
	bool sd;
	uint64_t pref;
	bool ssr_visible;
	uint64_t au, guess, hc;
	enum sysinfo_source want;
	bool unverified;
};

static const struct classify_case classify_cases[] = {
	/* SD with a visible SD Status */
	{ true, 4 << 20, true, 4 << 20, 4 << 20, 0, SYSINFO_SRC_CARD, false },
	{ true, 8 << 20, true, 8 << 20, 4 << 20, 0, SYSINFO_SRC_CARD, false },
	{ true, 4 << 20, true, 8 << 20, 4 << 20, 0, SYSINFO_SRC_KERNEL, false },
	{ true, 4 << 20, true, 0, 4 << 20, 0, SYSINFO_SRC_KERNEL_GUESS, false },
	{ true, 2 << 20, true, 0, 4 << 20, 0, SYSINFO_SRC_KERNEL, false },
	/* SD on a kernel without the ssr attribute */
	{ true, 4 << 20, false, 0, 4 << 20, 0, SYSINFO_SRC_KERNEL_GUESS, true },
	{ true, 8 << 20, false, 0, 4 << 20, 0, SYSINFO_SRC_CARD, false },
	{ true, 8 << 20, false, 0, 0, 0, SYSINFO_SRC_KERNEL, false },
	/* MMC */
	{ false, 4 << 20, false, 0, 4 << 20, 512 << 10, SYSINFO_SRC_KERNEL_GUESS, false },
	{ false, 512 << 10, false, 0, 4 << 20, 512 << 10, SYSINFO_SRC_CARD, false },
	{ false, 512 << 10, false, 0, 4 << 20, 0, SYSINFO_SRC_KERNEL, false },
	/* nothing reported */
	{ true, 0, true, 4 << 20, 4 << 20, 0, SYSINFO_SRC_NONE, false },
};

START_TEST(test_classify_pref_erase)
{
	const struct classify_case *c = &classify_cases[_i];
	bool unverified = !c->unverified;

	ck_assert_int_eq(sysinfo_classify_pref_erase(c->sd, c->pref,
						     c->ssr_visible, c->au,
						     c->guess, c->hc, &unverified),
			 c->want);
	ck_assert_int_eq(unverified, c->unverified);
	/* NULL is allowed for the flag */
	ck_assert_int_eq(sysinfo_classify_pref_erase(c->sd, c->pref,
						     c->ssr_visible, c->au,
						     c->guess, c->hc, NULL),
			 c->want);
}
END_TEST

START_TEST(test_manufacturer_names)
{
	ck_assert_str_eq(sysinfo_manufacturer_name(SYSINFO_KIND_SDHC, 0x41), "Kingston");
	ck_assert_str_eq(sysinfo_manufacturer_name(SYSINFO_KIND_SD, 0x03), "SanDisk");
	ck_assert_str_eq(sysinfo_manufacturer_name(SYSINFO_KIND_SDXC, 0x74), "Transcend");
	ck_assert_str_eq(sysinfo_manufacturer_name(SYSINFO_KIND_SDHC, 0x28), "Lexar");
	ck_assert_ptr_nonnull(strstr(sysinfo_manufacturer_name(SYSINFO_KIND_SDHC, 0x1b),
				     "Samsung"));
	ck_assert_ptr_nonnull(strstr(sysinfo_manufacturer_name(SYSINFO_KIND_SDHC, 0x27),
				     "Phison"));
	ck_assert_str_eq(sysinfo_manufacturer_name(SYSINFO_KIND_EMMC, 0x15), "Samsung");
	ck_assert_str_eq(sysinfo_manufacturer_name(SYSINFO_KIND_EMMC, 0x45), "SanDisk");
	ck_assert_str_eq(sysinfo_manufacturer_name(SYSINFO_KIND_EMMC, 0x90), "SK Hynix");
	ck_assert_str_eq(sysinfo_manufacturer_name(SYSINFO_KIND_MMC, 0x13), "Micron");
	ck_assert_ptr_nonnull(strstr(sysinfo_manufacturer_name(SYSINFO_KIND_EMMC, 0xfe),
				     "Micron"));
	/* the two families number differently */
	ck_assert_ptr_null(sysinfo_manufacturer_name(SYSINFO_KIND_SDHC, 0x15));
	ck_assert_ptr_null(sysinfo_manufacturer_name(SYSINFO_KIND_EMMC, 0x41));
	/* unlisted, or not a card */
	ck_assert_ptr_null(sysinfo_manufacturer_name(SYSINFO_KIND_SDHC, 0x9c));
	ck_assert_ptr_null(sysinfo_manufacturer_name(SYSINFO_KIND_USB, 0x03));
	ck_assert_ptr_null(sysinfo_manufacturer_name(SYSINFO_KIND_BLOCK, 0x15));
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(sysinfo_kind_name(SYSINFO_KIND_SDHC), "sdhc");
	ck_assert_str_eq(sysinfo_kind_name(SYSINFO_KIND_EMMC), "emmc");
	ck_assert_str_eq(sysinfo_kind_name(SYSINFO_KIND_USB), "usb-storage");
	ck_assert_str_eq(sysinfo_kind_name(SYSINFO_KIND_SIM), "sim");
	ck_assert_str_eq(sysinfo_kind_name((enum sysinfo_kind)99), "unknown");
	ck_assert_str_eq(sysinfo_kind_description(SYSINFO_KIND_SDXC), "SDXC card");
	ck_assert_str_eq(sysinfo_source_name(SYSINFO_SRC_CARD), "card");
	ck_assert_str_eq(sysinfo_source_name(SYSINFO_SRC_KERNEL), "kernel");
	ck_assert_str_eq(sysinfo_source_name(SYSINFO_SRC_KERNEL_GUESS), "kernel_guess");
	ck_assert_str_eq(sysinfo_source_name(SYSINFO_SRC_MEASURED), "measured");
	ck_assert_str_eq(sysinfo_source_name(SYSINFO_SRC_NONE), "none");
	ck_assert(sysinfo_kind_is_sd(SYSINFO_KIND_SDUC));
	ck_assert(!sysinfo_kind_is_sd(SYSINFO_KIND_EMMC));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Captured sysfs trees */

START_TEST(test_tree_sd_seed)
{
	struct sysinfo si;

	read_tree(SYSFS_DATA "sd-seed", "mmcblk0", &si);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_SDHC);
	ck_assert_str_eq(si.name, "mmcblk0");
	ck_assert_str_eq(si.sysfs_path,
			 "/devices/platform/omap_hsmmc.0/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0");
	ck_assert_uint_eq(si.major, 179);
	ck_assert_uint_eq(si.minor, 0);
	ck_assert(!si.is_partition);
	ck_assert(!si.usb_bus);
	ck_assert(!si.registers_hidden);
	ck_assert(si.size.present);
	ck_assert_int_eq(si.size.source, SYSINFO_SRC_KERNEL);
	ck_assert_uint_eq(si.size.bytes, 7774208ull * 512);
	ck_assert_uint_eq(si.logical_block.bytes, 512);
	ck_assert_uint_eq(si.physical_block.bytes, 512);
	ck_assert(si.rotational.present && !si.rotational.value);
	ck_assert(si.removable.present && !si.removable.value);
	ck_assert(!si.discard_granularity.present);	/* not in this dump */

	ck_assert(si.has_card);
	ck_assert_str_eq(si.card_type, "SD");
	ck_assert(si.has_cid && si.has_csd && si.has_scr);
	ck_assert(!si.has_ssr);
	ck_assert_uint_eq(si.malformed, 0);
	ck_assert(si.ident.present);
	ck_assert_int_eq(si.ident.source, SYSINFO_SRC_CARD);
	ck_assert_uint_eq(si.ident.manfid, 0x41);
	ck_assert_str_eq(si.ident.manufacturer, "Kingston");
	ck_assert_uint_eq(si.ident.oemid, 0x3432);
	ck_assert_str_eq(si.ident.oem_ascii, "42");
	ck_assert_str_eq(si.ident.product, "SD4GB");
	ck_assert_uint_eq(si.ident.hwrev, 3);
	ck_assert_uint_eq(si.ident.fwrev, 0);
	ck_assert(si.ident.serial_present);
	ck_assert_uint_eq(si.ident.serial, 0x112);
	ck_assert_uint_eq(si.ident.year, 2011);
	ck_assert_uint_eq(si.ident.month, 10);
	ck_assert_str_eq(si.kernel_date, "10/2011");
	ck_assert(!si.kernel_date_differs);
	ck_assert_str_eq(si.scr.version, "3.0X");

	/* capacity from the CSD equals the kernel's size */
	ck_assert(si.capacity.present);
	ck_assert_int_eq(si.capacity.source, SYSINFO_SRC_CARD);
	ck_assert_uint_eq(si.capacity.bytes, 3980394496u);
	ck_assert_uint_eq(si.capacity.bytes, si.size.bytes);
	ck_assert_uint_eq(si.erase_size.bytes, 512);
	ck_assert_int_eq(si.erase_size.source, SYSINFO_SRC_CARD);
	/* 4 MiB preferred erase size: Linux's default; no SD Status in this
	 * kernel's sysfs, so the card may have reported the same AU. */
	ck_assert(si.preferred_erase.present);
	ck_assert_uint_eq(si.preferred_erase.bytes, 4 * MiB);
	ck_assert_int_eq(si.preferred_erase.source, SYSINFO_SRC_KERNEL_GUESS);
	ck_assert(si.preferred_erase_unverified);
	ck_assert_uint_eq(si.linux_guess_bytes, 4 * MiB);
	ck_assert(!si.au.present);
	ck_assert(!si.erase_sector.present);
	ck_assert(!si.erase_group.present);
}
END_TEST

START_TEST(test_tree_sdhc_au)
{
	struct sysinfo si;

	read_tree(SYSFS_DATA "sdhc-au", "mmcblk0", &si);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_SDHC);
	ck_assert(si.has_ssr && si.has_scr && si.has_cid && si.has_csd);
	ck_assert_uint_eq(si.malformed, 0);
	ck_assert_str_eq(si.ident.manufacturer, "SanDisk");
	ck_assert_str_eq(si.ident.product, "SE32G");
	ck_assert_str_eq(si.ident.oem_ascii, "SD");
	ck_assert_uint_eq(si.ident.serial, 0xf1086bc0);
	ck_assert_uint_eq(si.ident.year, 2014);
	ck_assert_uint_eq(si.ident.month, 3);
	ck_assert_uint_eq(si.ident.hwrev, 8);
	ck_assert_uint_eq(si.size.bytes, 62333952ull * 512);
	ck_assert_uint_eq(si.capacity.bytes, si.size.bytes);
	ck_assert_uint_eq(si.ssr.speed_class, 4);
	ck_assert_uint_eq(si.ssr.uhs_speed_grade, 1);
	/* the card reports its AU, and Linux's preferred_erase_size is it */
	ck_assert(si.au.present);
	ck_assert_int_eq(si.au.source, SYSINFO_SRC_CARD);
	ck_assert_uint_eq(si.au.bytes, 4 * MiB);
	ck_assert(!si.au_via_kernel);
	ck_assert_int_eq(si.preferred_erase.source, SYSINFO_SRC_CARD);
	ck_assert(!si.preferred_erase_unverified);
	ck_assert_uint_eq(si.preferred_erase.bytes, si.au.bytes);
	ck_assert(si.discard_granularity.present);
	ck_assert_uint_eq(si.discard_granularity.bytes, 4 * MiB);
	ck_assert_uint_eq(si.discard_max.bytes, 4 * MiB);
}
END_TEST

/* C_SIZE 0x0ee5b7 >= 0xFFFF: SDXC (the Linux rule), SD 6.x. */
START_TEST(test_tree_sdxc)
{
	struct sysinfo si;

	read_tree(SYSFS_DATA "sdxc", "mmcblk0", &si);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_SDXC);
	ck_assert_uint_eq(si.csd.c_size, 0x0ee5b7);
	ck_assert_uint_eq(si.capacity.bytes, (0x0ee5b7ull + 1) * 512 * KiB);
	ck_assert_uint_eq(si.capacity.bytes, si.size.bytes);
	ck_assert_str_eq(si.scr.version, "6.XX");
	ck_assert_str_eq(si.ident.manufacturer, "SanDisk");
	ck_assert_str_eq(si.ident.product, "SN512");
	ck_assert_uint_eq(si.ident.serial, 0xfff7b17b);
	ck_assert_uint_eq(si.ident.year, 2021);
	ck_assert_uint_eq(si.ident.month, 7);
	ck_assert(!si.kernel_date_differs);
	ck_assert_uint_eq(si.cid.crc, 0);		/* host strips the CRC */
	ck_assert_int_eq(si.cid_crc, SYSINFO_CRC_NOT_PASSED);
	ck_assert_int_eq(si.preferred_erase.source, SYSINFO_SRC_KERNEL_GUESS);
	ck_assert(si.preferred_erase_unverified);
	ck_assert_uint_eq(si.malformed, 0);
}
END_TEST

START_TEST(test_tree_emmc)
{
	struct sysinfo si;

	read_tree(SYSFS_DATA "emmc", "mmcblk1", &si);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_EMMC);
	ck_assert_str_eq(si.card_type, "MMC");
	ck_assert_uint_eq(si.major, 179);
	ck_assert_uint_eq(si.minor, 8);
	ck_assert(!si.has_scr && !si.has_ssr && !si.has_ext_csd);
	ck_assert_int_eq(si.ext_csd_rev, 6);		/* device/rev */
	ck_assert_int_eq(si.ident.source, SYSINFO_SRC_CARD);
	ck_assert_uint_eq(si.ident.manfid, 0x15);
	ck_assert_str_eq(si.ident.manufacturer, "Samsung");
	ck_assert_str_eq(si.ident.product, "M8G1GC");
	ck_assert_uint_eq(si.ident.oemid, 0x0100);
	ck_assert_str_eq(si.ident.oem_ascii, "");
	ck_assert_uint_eq(si.ident.serial, 0xdc0db061);
	/* the CID decodes to 05/2013; that 3.4 kernel printed 05/1997 */
	ck_assert_uint_eq(si.ident.year, 2013);
	ck_assert_uint_eq(si.ident.month, 5);
	ck_assert_str_eq(si.kernel_date, "05/1997");
	ck_assert(si.kernel_date_differs);
	/* C_SIZE 0xfff: the size is in EXT_CSD, which sysfs does not show */
	ck_assert(!si.capacity.present);
	ck_assert_uint_eq(si.size.bytes, 15269888ull * 512);
	ck_assert(si.erase_group.present);
	ck_assert_int_eq(si.erase_group.source, SYSINFO_SRC_CARD);
	ck_assert_uint_eq(si.erase_group.bytes, 512 * KiB);
	ck_assert_uint_eq(si.erase_size.bytes, 512 * KiB);
	ck_assert_int_eq(si.erase_size.source, SYSINFO_SRC_CARD);
	/* 512 KiB is not Linux's capacity guess (4 MiB): that kernel used
	 * the EXT_CSD high-capacity erase group, which cannot be checked
	 * without EXT_CSD - so "kernel", neither card nor guess. */
	ck_assert_uint_eq(si.preferred_erase.bytes, 512 * KiB);
	ck_assert_int_eq(si.preferred_erase.source, SYSINFO_SRC_KERNEL);
	ck_assert_uint_eq(si.linux_guess_bytes, 4 * MiB);
	ck_assert(!si.au.present);
	ck_assert(!si.hc_erase_group.present);
}
END_TEST

/* A temporary sysfs tree, for what no captured dump shows. */
static void put(const char *root, const char *dir, const char *name,
		const char *text)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	ck_assert_int_eq(tu_put_file(root, rel, text), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* An eMMC 5.1 whose EXT_CSD is readable in debugfs (as root): the size
 * comes from SEC_COUNT, the erase size from the high-capacity erase group
 * Linux enabled, and the date rule from EXT_CSD_REV.  The CID and CSD are
 * the M8G1GC's; the EXT_CSD bytes are set by hand. */
START_TEST(test_tree_debugfs_ext_csd)
{
	char root[] = "/tmp/flashprobe-sysfs-XXXXXX", link[600], target[128];
	char ext[2 * 512 + 1];
	const char *card = "devices/platform/mmc/mmc_host/mmc2/mmc2:0001";
	uint8_t bytes[512] = { 0 };
	struct sysinfo si;
	int err;

	ck_assert_ptr_nonnull(mkdtemp(root));
	put(root, card, "type", "MMC");
	put(root, card, "cid", "1501004d384731474303dc0db061506f");
	put(root, card, "csd", "d02701320f5903fff6dbffef8e40400d");
	put(root, card, "erase_size", "1048576");
	put(root, card, "preferred_erase_size", "4194304");
	put(root, card, "block/mmcblk2/size", "15269888");
	bytes[192] = 8;			/* EXT_CSD_REV */
	bytes[214] = 0xe9;		/* SEC_COUNT 0x00e90000 */
	bytes[175] = 1;			/* ERASE_GROUP_DEF */
	bytes[224] = 2;			/* HC_ERASE_GRP_SIZE: 1 MiB */
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(ext + 2 * i, 3, "%02x", bytes[i]);
	put(root, "kernel/debug/mmc2/mmc2:0001", "ext_csd", ext);
	snprintf(link, sizeof(link), "%s/%s/block/mmcblk2/device", root, card);
	ck_assert_int_eq(symlink("../../../mmc2:0001", link), 0);
	snprintf(link, sizeof(link), "%s/block", root);
	ck_assert_int_eq(mkdir(link, 0755), 0);
	snprintf(link, sizeof(link), "%s/block/mmcblk2", root);
	snprintf(target, sizeof(target), "../%s/block/mmcblk2", card);
	ck_assert_int_eq(symlink(target, link), 0);

	err = sysinfo_read_name("mmcblk2", root, &si);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_EMMC);
	ck_assert(si.has_ext_csd);
	ck_assert_int_eq(si.ext_csd_rev, 8);
	ck_assert_uint_eq(si.ident.year, 2013);
	ck_assert(si.capacity.present);
	ck_assert_int_eq(si.capacity.source, SYSINFO_SRC_CARD);
	ck_assert_uint_eq(si.capacity.bytes, 15269888ull * 512);
	ck_assert_uint_eq(si.hc_erase_group.bytes, 1 * MiB);
	ck_assert_int_eq(si.hc_erase_group.source, SYSINFO_SRC_CARD);
	ck_assert_uint_eq(si.erase_group.bytes, 512 * KiB);	/* CSD */
	ck_assert_uint_eq(si.erase_size.bytes, 1 * MiB);
	ck_assert_int_eq(si.erase_size.source, SYSINFO_SRC_CARD);
	/* a 6.x kernel: the capacity guess rounded to the erase size */
	ck_assert_uint_eq(si.linux_guess_bytes, 4 * MiB);
	ck_assert_int_eq(si.preferred_erase.source, SYSINFO_SRC_KERNEL_GUESS);
	ck_assert(!si.preferred_erase_unverified);
}
END_TEST

START_TEST(test_tree_usb_reader)
{
	struct sysinfo si;

	read_tree(SYSFS_DATA "usb-reader", "sdc", &si);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_USB);
	ck_assert(si.usb_bus);
	ck_assert(si.registers_hidden);
	ck_assert(!si.has_card);
	ck_assert(!si.ident.present);
	ck_assert(!si.preferred_erase.present);
	ck_assert(!si.erase_size.present);
	ck_assert(!si.au.present);
	ck_assert(!si.capacity.present);
	ck_assert_uint_eq(si.size.bytes, 7774208ull * 512);
	ck_assert(si.rotational.present && si.rotational.value);
	ck_assert(si.removable.present && si.removable.value);
	ck_assert_uint_eq(si.discard_granularity.bytes, 0);
	ck_assert_str_eq(si.vendor, "Generic");		/* trimmed */
	ck_assert_str_eq(si.model, "SD/MMC Reader");
	ck_assert(si.usb_id_present);
	ck_assert_uint_eq(si.usb_vendor_id, 0x1234);
	ck_assert_uint_eq(si.usb_product_id, 0x5678);
	ck_assert_str_eq(si.usb_product, "Card Reader");
	ck_assert_uint_eq(si.major, 8);
	ck_assert_uint_eq(si.minor, 32);

	/* a partition names its disk; the rest describes the disk */
	read_tree(SYSFS_DATA "usb-reader", "sdc1", &si);
	ck_assert(si.is_partition);
	ck_assert_str_eq(si.name, "sdc1");
	ck_assert_str_eq(si.disk_name, "sdc");
	ck_assert_int_eq(si.kind, SYSINFO_KIND_USB);
	ck_assert(si.registers_hidden);
	ck_assert_uint_eq(si.size.bytes, 7766016ull * 512);
	ck_assert_uint_eq(si.minor, 33);
	ck_assert(si.removable.value);
	ck_assert_uint_eq(si.logical_block.bytes, 512);
}
END_TEST

START_TEST(test_tree_loop)
{
	struct sysinfo si;

	read_tree(SYSFS_DATA "loop", "loop0", &si);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_LOOP);
	ck_assert_str_eq(si.backing_file, "/var/tmp/card.img");
	ck_assert_str_eq(si.sysfs_path, "/devices/virtual/block/loop0");
	ck_assert(!si.has_card);
	ck_assert(!si.registers_hidden);
	ck_assert_uint_eq(si.size.bytes, 1 << 30);
}
END_TEST

START_TEST(test_tree_errors)
{
	struct sysinfo si;

	ck_assert_int_eq(sysinfo_read_name("mmcblk9", SYSFS_DATA "sd-seed", &si),
			 -ENOENT);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_UNKNOWN);
	ck_assert_int_eq(sysinfo_read_name("../mmcblk0", SYSFS_DATA "sd-seed", &si),
			 -EINVAL);
	ck_assert_int_eq(sysinfo_read_name("", SYSFS_DATA "sd-seed", &si), -EINVAL);
	ck_assert_int_eq(sysinfo_read_name("mmcblk0", SYSFS_DATA "no-such-tree", &si),
			 -ENOENT);
}
END_TEST

START_TEST(test_read_non_block)
{
	struct sysinfo si;
	char path[] = "/tmp/flashprobe-sysinfo-XXXXXX";
	int fd;

	ck_assert_int_eq(sysinfo_read("sim:seed", "/sys", &si), 0);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_SIM);
	ck_assert_str_eq(si.name, "sim:seed");
	ck_assert(!si.size.present);

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 123 * 512), 0);
	close(fd);
	ck_assert_int_eq(sysinfo_read(path, "/sys", &si), 0);
	unlink(path);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_IMAGE);
	ck_assert_uint_eq(si.size.bytes, 123 * 512);
	ck_assert_int_eq(si.size.source, SYSINFO_SRC_KERNEL);

	ck_assert_int_eq(sysinfo_read("/nonexistent/flashprobe", "/sys", &si),
			 -ENOENT);
	ck_assert_int_eq(sysinfo_read("/dev/null", "/sys", &si), -ENOTBLK);
}
END_TEST

/* A block device node 179:0 resolves through <root>/dev/block/179:0. */
START_TEST(test_read_block_node)
{
	char dir[] = "/tmp/flashprobe-sysinfo-XXXXXX", node[64];
	struct sysinfo si;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(node, sizeof(node), "%s/card", dir);
	ck_assert_int_eq(mknod(node, S_IFBLK | 0600, makedev(179, 0)), 0);
	ck_assert_int_eq(sysinfo_read(node, SYSFS_DATA "sd-seed", &si), 0);
	ck_assert_int_eq(si.kind, SYSINFO_KIND_SDHC);
	ck_assert_str_eq(si.name, "mmcblk0");
	ck_assert_str_eq(si.ident.product, "SD4GB");
	/* a device sysfs does not know */
	ck_assert_int_eq(sysinfo_read(node, SYSFS_DATA "usb-reader", &si), -ENOENT);
	unlink(node);
	rmdir(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Output */

struct tree_case {
	const char *tree, *name, *kind;
};

static const struct tree_case trees[] = {
	{ SYSFS_DATA "sd-seed", "mmcblk0", "sdhc" },
	{ SYSFS_DATA "sdhc-au", "mmcblk0", "sdhc" },
	{ SYSFS_DATA "sdxc", "mmcblk0", "sdxc" },
	{ SYSFS_DATA "emmc", "mmcblk1", "emmc" },
	{ SYSFS_DATA "usb-reader", "sdc", "usb-storage" },
	{ SYSFS_DATA "usb-reader", "sdc1", "usb-storage" },
	{ SYSFS_DATA "loop", "loop0", "loop" },
};

/* Keys every identity object has, null or not. */
static const char *const identity_keys[] = {
	"device", "kind", "description", "sysfs_path", "dev", "partition_of",
	"usb", "registers_hidden", "size_bytes", "logical_block_bytes",
	"physical_block_bytes", "discard_granularity_bytes", "discard_max_bytes",
	"rotational", "removable", "reader", "backing_file", "card_type",
	"manfid", "manufacturer", "oemid", "product_name", "revision", "serial",
	"date", "kernel_date", "package", "ext_csd_rev", "sd_spec",
	"speed_class", "uhs_speed_grade", "video_speed_class", "app_perf_class",
	"capacity_bytes", "erase_size_bytes", "preferred_erase_size_bytes",
	"au_size_bytes", "erase_sector_bytes", "erase_group_bytes",
	"hc_erase_group_bytes", "registers",
	"minimum_io_bytes", "optimal_io_bytes", "max_request_bytes",
	"alignment_offset_bytes", "disk_size_bytes", "read_only", "bus_widths",
	"bus_width_in_use", "tran_speed_kbit_per_s", "ccc", "perm_write_protect",
	"tmp_write_protect", "cid_crc", "csd_crc", "emmc_version",
	"hc_erase_group_enabled", "hc_wp_group_bytes", "super_page_bytes",
	"optimal_read_bytes", "optimal_write_bytes", "optimal_trim_bytes",
	"capacity_mismatch", "warnings",
};

static char *identity_json(const struct sysinfo *si)
{
	struct json_writer w;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	json_init(&w, f);
	json_object_begin(&w, NULL);
	sysinfo_json(&w, si);
	json_object_end(&w);
	json_end(&w);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

static bool known_source(const char *s)
{
	return strcmp(s, "card") == 0 || strcmp(s, "kernel") == 0 ||
		strcmp(s, "kernel_guess") == 0;
}

/* Every non-null member object carrying a "value" also has a known
 * "source"; recurses into "reader" and "registers". */
static void check_sources(const struct jsonv *obj)
{
	for (const struct jsonv *m = obj->child; m; m = m->next) {
		const struct jsonv *v, *src;

		if (m->type != JSONV_OBJECT)
			continue;
		v = jsonv_get(m, "value");
		if (!v) {
			check_sources(m);
			continue;
		}
		src = jsonv_get(m, "source");
		ck_assert_msg(src && src->type == JSONV_STRING &&
			      known_source(src->string),
			      "member %s has no known source", m->key);
	}
}

START_TEST(test_json_trees)
{
	const struct tree_case *tc = &trees[_i];
	struct sysinfo si;
	struct jsonv *doc;
	const struct jsonv *id, *v;
	char *text;

	read_tree(tc->tree, tc->name, &si);
	text = identity_json(&si);
	doc = jsonv_parse(text);
	ck_assert_msg(doc != NULL, "invalid JSON:\n%s", text);
	id = jsonv_get(doc, "identity");
	ck_assert_ptr_nonnull(id);
	ck_assert_int_eq(id->type, JSONV_OBJECT);
	for (size_t k = 0; k < sizeof(identity_keys) / sizeof(identity_keys[0]); k++)
		ck_assert_msg(jsonv_get(id, identity_keys[k]) != NULL,
			      "%s: key %s missing", tc->tree, identity_keys[k]);
	v = jsonv_get(id, "kind");
	ck_assert_str_eq(v->string, tc->kind);
	v = jsonv_get(id, "device");
	ck_assert_str_eq(v->string, tc->name);
	v = jsonv_get(id, "size_bytes.value");
	ck_assert_ptr_nonnull(v);
	ck_assert_double_eq_tol(v->number, (double)si.size.bytes, 0.5);
	v = jsonv_get(id, "registers_hidden");
	ck_assert_int_eq(v->type, JSONV_BOOL);
	ck_assert_int_eq(v->boolean, si.registers_hidden);
	check_sources(id);
	jsonv_free(doc);
	free(text);
}
END_TEST

/* The values the probe's conclusion needs, as a script would read them. */
START_TEST(test_json_values)
{
	struct sysinfo si;
	struct jsonv *doc;
	const struct jsonv *v;
	char *text;

	read_tree(SYSFS_DATA "sd-seed", "mmcblk0", &si);
	text = identity_json(&si);
	doc = jsonv_parse(text);
	ck_assert_ptr_nonnull(doc);
	v = jsonv_get(doc, "identity.preferred_erase_size_bytes.source");
	ck_assert_str_eq(v->string, "kernel_guess");
	v = jsonv_get(doc, "identity.preferred_erase_size_bytes.unverified");
	ck_assert(v->boolean);
	v = jsonv_get(doc, "identity.manufacturer.value");
	ck_assert_str_eq(v->string, "Kingston");
	v = jsonv_get(doc, "identity.oemid.ascii");
	ck_assert_str_eq(v->string, "42");
	v = jsonv_get(doc, "identity.date.value");
	ck_assert_str_eq(v->string, "2011-10");
	v = jsonv_get(doc, "identity.serial.hex");
	ck_assert_str_eq(v->string, "0x00000112");
	v = jsonv_get(doc, "identity.capacity_bytes.value");
	ck_assert_double_eq_tol(v->number, 3980394496.0, 0.5);
	v = jsonv_get(doc, "identity.au_size_bytes");
	ck_assert_int_eq(v->type, JSONV_NULL);
	v = jsonv_get(doc, "identity.registers.cid.value");
	ck_assert_str_eq(v->string, "4134325344344742300000011200ba39");
	v = jsonv_get(doc, "identity.registers.ssr");
	ck_assert_int_eq(v->type, JSONV_NULL);
	jsonv_free(doc);
	free(text);

	read_tree(SYSFS_DATA "sdhc-au", "mmcblk0", &si);
	text = identity_json(&si);
	doc = jsonv_parse(text);
	ck_assert_ptr_nonnull(doc);
	v = jsonv_get(doc, "identity.au_size_bytes.value");
	ck_assert_double_eq_tol(v->number, 4194304.0, 0.5);
	v = jsonv_get(doc, "identity.au_size_bytes.source");
	ck_assert_str_eq(v->string, "card");
	v = jsonv_get(doc, "identity.preferred_erase_size_bytes.source");
	ck_assert_str_eq(v->string, "card");
	v = jsonv_get(doc, "identity.speed_class.value");
	ck_assert_double_eq_tol(v->number, 10.0, 0.1);
	v = jsonv_get(doc, "identity.registers.ssr.value");
	ck_assert_str_eq(v->string, SE32G_SSR);
	jsonv_free(doc);
	free(text);

	read_tree(SYSFS_DATA "usb-reader", "sdc", &si);
	text = identity_json(&si);
	doc = jsonv_parse(text);
	ck_assert_ptr_nonnull(doc);
	v = jsonv_get(doc, "identity.registers_hidden");
	ck_assert(v->boolean);
	v = jsonv_get(doc, "identity.manfid");
	ck_assert_int_eq(v->type, JSONV_NULL);
	v = jsonv_get(doc, "identity.reader.usb_id.value");
	ck_assert_str_eq(v->string, "1234:5678");
	jsonv_free(doc);
	free(text);
}
END_TEST

static char *identity_text(const struct sysinfo *si)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	sysinfo_text(f, si);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

START_TEST(test_text)
{
	struct sysinfo si;
	char *t;

	read_tree(SYSFS_DATA "sd-seed", "mmcblk0", &si);
	t = identity_text(&si);
	ck_assert_msg(strncmp(t, "identity: mmcblk0, SDHC card, ", 30) == 0, "%s", t);
	ck_assert_ptr_nonnull(strstr(t, "Kingston (manfid 0x41)"));
	ck_assert_ptr_nonnull(strstr(t, "\"42\", SD4GB rev 3.0"));
	ck_assert_ptr_nonnull(strstr(t, "preferred erase size: 4MiB [kernel_guess]"));
	ck_assert_ptr_nonnull(strstr(t, "may report the same"));
	ck_assert_ptr_null(strstr(t, "hidden"));
	ck_assert_int_eq(t[strlen(t) - 1], '\n');
	free(t);

	read_tree(SYSFS_DATA "sdhc-au", "mmcblk0", &si);
	t = identity_text(&si);
	ck_assert_ptr_nonnull(strstr(t, "AU size: 4MiB [card]"));
	ck_assert_ptr_nonnull(strstr(t, "preferred erase size: 4MiB [card]"));
	ck_assert_ptr_nonnull(strstr(t, "class C10 U1"));
	free(t);

	read_tree(SYSFS_DATA "emmc", "mmcblk1", &si);
	t = identity_text(&si);
	ck_assert_ptr_nonnull(strstr(t, "identity: mmcblk1, eMMC, "));
	ck_assert_ptr_nonnull(strstr(t, "Samsung (manfid 0x15)"));
	ck_assert_ptr_nonnull(strstr(t, "made 2013-05, BGA package [card]"));
	ck_assert_ptr_nonnull(strstr(t, "kernel date: 05/1997"));
	ck_assert_ptr_nonnull(strstr(t, "erase group: 512KiB [card]"));
	free(t);

	read_tree(SYSFS_DATA "usb-reader", "sdc1", &si);
	t = identity_text(&si);
	ck_assert_ptr_nonnull(strstr(t, "identity: sdc1 (partition of sdc), USB storage"));
	ck_assert_ptr_nonnull(strstr(t, "note: USB transport, no MMC registers: a card behind a USB reader hides its registers"));
	ck_assert_ptr_nonnull(strstr(t, "use a native SD slot"));
	ck_assert_ptr_nonnull(strstr(t, "(USB 1234:5678 \"Card Reader\")"));
	ck_assert_ptr_null(strstr(t, "[card]"));
	free(t);
}
END_TEST

/* mknod works for root with CAP_MKNOD; tried once when the suite is built. */
static bool can_mknod(void)
{
	char dir[] = "/tmp/flashprobe-sysinfo-XXXXXX", node[64];
	bool ok;

	if (!mkdtemp(dir))
		return false;
	snprintf(node, sizeof(node), "%s/probe", dir);
	ok = mknod(node, S_IFBLK | 0600, makedev(179, 0)) == 0;
	unlink(node);
	rmdir(dir);
	return ok;
}

Suite *sysinfo_suite(void)
{
	Suite *s = suite_create("sysinfo");
	TCase *reg = tcase_create("registers");
	TCase *tree = tcase_create("sysfs");
	TCase *out = tcase_create("report");

	tcase_add_test(reg, test_reg_bits);
	tcase_add_test(reg, test_seed_cid);
	tcase_add_test(reg, test_seed_csd_v2);
	tcase_add_test(reg, test_sd_v1_csd_by_hand);
	tcase_add_test(reg, test_sd_v1_real);
	tcase_add_test(reg, test_sd_csd_reserved_structure);
	tcase_add_test(reg, test_mmc_csd_by_hand);
	tcase_add_test(reg, test_emmc_real_registers);
	tcase_add_test(reg, test_scr);
	tcase_add_test(reg, test_ssr);
	tcase_add_test(reg, test_au_table);
	tcase_add_test(reg, test_ext_csd);
	tcase_add_test(reg, test_emmc_version);
	tcase_add_test(reg, test_crc7);
	tcase_add_test(reg, test_linux_guess);
	tcase_add_loop_test(reg, test_classify_pref_erase, 0,
			    (int)(sizeof(classify_cases) / sizeof(classify_cases[0])));
	tcase_add_test(reg, test_manufacturer_names);
	tcase_add_test(reg, test_names);

	tcase_add_test(tree, test_tree_sd_seed);
	tcase_add_test(tree, test_tree_sdhc_au);
	tcase_add_test(tree, test_tree_sdxc);
	tcase_add_test(tree, test_tree_emmc);
	tcase_add_test(tree, test_tree_debugfs_ext_csd);
	tcase_add_test(tree, test_tree_usb_reader);
	tcase_add_test(tree, test_tree_loop);
	tcase_add_test(tree, test_tree_errors);
	tcase_add_test(tree, test_read_non_block);
	if (can_mknod())
		tcase_add_test(tree, test_read_block_node);
	else
		tu_skip("sysinfo: test_read_block_node",
			"creating a block device node needs root (CAP_MKNOD)");

	tcase_add_loop_test(out, test_json_trees, 0,
			    (int)(sizeof(trees) / sizeof(trees[0])));
	tcase_add_test(out, test_json_values);
	tcase_add_test(out, test_text);

	suite_add_tcase(s, reg);
	suite_add_tcase(s, tree);
	suite_add_tcase(s, out);
	return s;
}
