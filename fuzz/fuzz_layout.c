/* fuzz_layout.c - libFuzzer harness for what `flashprobe check` reads
 * from a card: the partition table parser (MBR, extended chain, GPT), the
 * file-system probes (FAT, exFAT, ext, f2fs) and the verdicts over them,
 * on the input taken as a disk image; and the advice computed from a
 * geometry decoded from the input's first bytes.
 *
 * Besides crashes, sanitizer reports and hangs it checks behaviour:
 * counts within their bounds, every sentence one terminated line, every
 * partition either inside the disk or flagged, data never before its
 * partition, and the advice's partition on its alignment unit, past the
 * FAT area, inside the device.  Built and run by `make fuzz`. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "fsprobe.h"
#include "layoutcheck.h"
#include "parttable.h"

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "fuzz_layout: check failed at line %d: %s\n",  \
				__LINE__, #cond);                                      \
			abort();                                                       \
		}                                                                      \
	} while (0)

static void check_line(const char *s, size_t cap)
{
	CHECK(memchr(s, '\0', cap) != NULL);
	CHECK(strchr(s, '\n') == NULL);
}

static void fuzz_table(const struct disk *d)
{
	static struct parttable t;

	if (parttable_read(d, &t))
		return;
	CHECK(t.nparts <= PT_MAX_PARTS && t.nproblems <= PT_MAX_PROBLEMS);
	for (size_t i = 0; i < t.nproblems; i++) {
		check_line(t.problems[i], PT_LINE);
		CHECK(t.problems[i][0] != '\0');
	}
	for (size_t i = 0; i < t.nparts; i++) {
		const struct pt_entry *p = &t.parts[i];

		check_line(p->problem, PT_LINE);
		CHECK(p->start_bytes + p->size_bytes <= d->size_bytes || p->problem[0]);
	}
}

static void fuzz_check(const struct disk *d, const uint8_t *data)
{
	static struct check_result r;
	struct check_geometry g = {
		.erase_bytes = (uint64_t)(data[1] % 8) << 16,
		.page_bytes = (uint64_t)(data[2] % 4) << 11,
		.fat_area_bytes = (uint64_t)(data[3] % 4) << 16,
		.erase_source = GEO_GIVEN, .page_source = GEO_GIVEN, .fat_source = GEO_GIVEN,
	};

	if (layoutcheck_run(d, &g, &r))
		return;
	CHECK(r.nparts <= PT_MAX_PARTS);
	for (size_t i = 0; i < r.nparts; i++) {
		const struct check_part *p = &r.parts[i];

		CHECK(p->nproblems <= CHECK_MAX_PROBLEMS && p->nfix <= CHECK_MAX_FIX);
		for (size_t k = 0; k < p->nproblems; k++)
			check_line(p->problems[k], CHECK_LINE);
		CHECK(p->fs.type == FS_UNKNOWN || p->data_start_bytes >= p->entry.start_bytes);
		CHECK(!g.erase_bytes || p->start_aligned ==
		      (p->entry.start_bytes % g.erase_bytes == 0));
		CHECK(p->fs.type != FS_UNKNOWN || !p->fs.cluster_bytes);
	}
}

/* The first 16 bytes as a geometry; the advice must keep its promises. */
static void fuzz_advice(const uint8_t *data, size_t size)
{
	static struct advice a;
	struct geometry g;
	struct advice_request q;
	uint64_t v[4] = { 0 };

	if (size < 16)
		return;
	memcpy(v, data, 16);
	memset(&g, 0, sizeof(g));
	g.sector_bytes = data[0] & 1 ? 4096 : 512;
	g.device_bytes = v[0] % (64ULL << 30);
	g.erase = (struct geo_size){ (1 + v[1] % 384) << 16, 1, GEO_GIVEN };
	g.page = (struct geo_size){ (v[1] >> 32) % 64 << 10, 1, GEO_GIVEN };
	g.fat_found = g.fat_tested = data[8] & 1;
	g.fat_size_bytes = (v[1] >> 48) % 32 << 20;
	g.open_linear = g.open_random = (struct geo_count){ -1, false, 0, GEO_NONE };
	q.part_bytes = data[9] & 1 ? 0 : (uint64_t)(data[10] | data[11] << 8) << 20;
	q.label = (enum advice_label)(data[12] % 3);
	advice_compute_for(&g, &q, &a);
	if (!a.ncommands)
		return;
	CHECK(a.part_start_bytes % a.align_bytes == 0 && a.part_size_bytes % a.align_bytes == 0);
	CHECK(!g.fat_found || a.part_start_bytes >= g.fat_size_bytes);
	CHECK(!g.device_bytes || a.part_start_bytes + a.part_size_bytes <= g.device_bytes);
	for (size_t i = 0; i < a.ncommands; i++) {
		CHECK(a.commands[i].argc > 0 && a.commands[i].line[0]);
		CHECK(memchr(a.commands[i].why, '\0', sizeof(a.commands[i].why)) != NULL);
	}
	if (a.fat_ok)
		CHECK((a.fat.reserved_sectors + 2ULL * a.fat.fat_sectors + a.fat.root_sectors) *
		      g.sector_bytes %
		      a.align_bytes == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size heap copy, so ASan sees any read past the end */
	uint8_t *img = malloc(size ? size : 1);
	struct fsinfo fi;
	struct disk d;

	if (img == NULL || size < 4) {
		free(img);
		return 0;
	}
	memcpy(img, data, size);
	/* the first byte's low bit: 4096-byte sectors (when the image holds one) */
	disk_from_memory(&d, img, size, data[0] & 1 && size >= 4096 ? 4096 : 512);
	fuzz_table(&d);
	fuzz_check(&d, data);
	fsprobe_parse(img, size, size, &fi);
	check_line(fi.problem, PT_LINE);
	fuzz_advice(data, size);
	free(img);
	return 0;
}
