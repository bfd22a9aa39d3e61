/* advice.h - from measured geometry to partitioning and file-system advice.
 *
 * Pure computation: the probe (or `advise`, from numbers the user knows)
 * fills a struct geometry, advice_compute() turns it into commands a user
 * can paste, the same commands as argv arrays for scripts, and the
 * consequences in plain language.  In the commands the literal words
 * DEVICE and PARTITION stand for the disk and its first partition.
 */
#ifndef FLASHPROBE_ADVICE_H
#define FLASHPROBE_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a value comes from. */
enum geo_source {
	GEO_NONE,		/* unknown */
	GEO_MEASURED,		/* timed by flashprobe */
	GEO_CARD,		/* reported by the card's registers */
	GEO_KERNEL_GUESS,	/* Linux's guess (preferred_erase_size without an AU) */
	GEO_GIVEN,		/* given on the command line */
	GEO_MEASURED_WRITES,	/* timed by flashprobe's write-based AU search */
};

/* "measured", "card", "kernel_guess", "given", "measured_writes", "none" */
const char *geo_source_name(enum geo_source s);

struct geo_size {
	uint64_t bytes;		/* 0 = unknown */
	double confidence;
	enum geo_source source;
};

struct geo_count {
	int value;		/* -1 = unknown */
	bool at_least;		/* value is a lower bound */
	double confidence;
	enum geo_source source;
};

struct geometry {
	uint64_t device_bytes;		/* 0: no device (advise --size alone) */
	uint32_t sector_bytes;
	struct geo_size page;
	struct geo_size erase;		/* measured (or given) erase block */
	struct geo_size card_au;	/* AU the card or kernel reports */
	struct geo_count open_linear;
	struct geo_count open_random;
	bool fat_tested;
	bool fat_found;
	uint64_t fat_start_bytes, fat_size_bytes;
	double fat_confidence;
	/* the fake-capacity check: verdict name (NULL: not verified) and the
	 * size verified from offset 0; partitions stay inside usable_bytes
	 * (0: the whole device) */
	const char *capacity_verdict;
	double capacity_confidence;
	enum geo_source capacity_source;
	struct geo_size capacity_real;
	uint64_t usable_bytes;
};

enum advice_label {
	ADVICE_LABEL_AUTO,	/* dos up to 2 TiB, gpt above */
	ADVICE_LABEL_DOS,
	ADVICE_LABEL_GPT,
};

/* What the user asks for besides the geometry. */
struct advice_request {
	uint64_t part_bytes;		/* 0: the rest of the device */
	enum advice_label label;
	/* check's fixes: part_bytes is an existing partition to format as it
	 * is (not rounded to whole units), and its type is Linux's or
	 * exFAT's (the file system it holds) */
	bool exact_size;
	uint64_t start_bytes;		/* exact_size: where it starts (0: where
					 * the advice would start it) */
	bool linux_type;
	bool exfat_type;
	/* check's fix for an exFAT on a unit that is not a power of two:
	 * the partition starts where mkfs.exfat puts its cluster heap on the
	 * unit (part_start_bytes is then off the unit) */
	bool exfat_heap_on_unit;
};

#define ADVICE_LINE 384
#define ADVICE_TEXT 640
#define ADVICE_WHY 1024			/* FAT16's reasons take five lines */
#define ADVICE_MAX_NOTES 8
#define ADVICE_MAX_ARGS 16
#define ADVICE_ARG 48
#define ADVICE_MAX_COMMANDS 5

/* One command: argv with DEVICE/PARTITION placeholders, its standard
 * input (or none), why each value was chosen, and the alignment its file
 * system's data area will have on the device. */
struct advice_command {
	const char *purpose;		/* "partition", "fat32" or "fat16", "exfat",
					 * "ext4", "f2fs" */
	char argv[ADVICE_MAX_ARGS][ADVICE_ARG];
	size_t argc;
	char stdin_text[ADVICE_TEXT];	/* "" = no input */
	char why[ADVICE_WHY];		/* one reason per line */
	uint64_t data_align_bytes;	/* the data area starts on a multiple of this */
	char line[ADVICE_TEXT];		/* the whole command as one shell line */
};

/* The FAT32 layout mkfs.fat makes with the advised options: sectors per
 * cluster, reserved sectors and the FAT length for the partition size. */
struct fat32_layout {
	uint32_t sectors_per_cluster;
	uint32_t reserved_sectors;
	uint32_t fat_sectors;		/* per FAT copy */
	uint32_t root_sectors;		/* FAT16's root directory; 0 in FAT32 */
	uint64_t clusters;
};

struct advice {
	/* the unit partitions and file-system structures are aligned to */
	uint64_t align_bytes;		/* 0: nothing known, no advice */
	char align_reason[ADVICE_LINE];
	uint32_t sector_bytes;
	uint64_t part_start_bytes;
	uint64_t part_size_bytes;
	uint64_t exfat_heap_bytes;	/* where mkfs.exfat's heap lands on the
					 * device, for exfat_heap_on_unit (0: not
					 * asked) */
	const char *label;		/* "dos" or "gpt" */
	uint8_t part_mbr_type;		/* the type the partition line sets
					 * (dos; 0 on gpt) */
	char warning[ADVICE_LINE];	/* what the partition command destroys */
	char sized_for[ADVICE_LINE];	/* "a 1.9GiB partition (3977216 sectors)" */
	bool fat_ok;			/* a FAT (FAT32 or FAT16) is advised */
	bool fat16;			/* FAT16 instead of FAT32 (a->fat its
					 * layout), decided with the partition */
	struct fat32_layout fat;
	struct advice_command commands[ADVICE_MAX_COMMANDS];
	size_t ncommands;
	char notes[ADVICE_MAX_NOTES][ADVICE_LINE];	/* plain-language consequences */
	size_t nnotes;
};

/* Compute advice for the whole device; never fails (unknown geometry
 * gives align_bytes 0 and a reason). */
void advice_compute(const struct geometry *g, struct advice *a);

/* The same with a partition size and label (advise --size, --label).  A
 * request that does not fit gives no commands and a note saying why. */
void advice_compute_for(const struct geometry *g, const struct advice_request *q,
			struct advice *a);

/* The MBR type ("e", "c", "7", "83") of a partition that purpose's line
 * formats, or NULL for another purpose; *same_kind: whether have is
 * already a type of that kind (0x06 for FAT16's e, 0x0b for FAT32's c). */
const char *advice_mbr_type(const char *purpose, uint8_t have, bool *same_kind);

/* The command for purpose, or NULL. */
const struct advice_command *advice_command(const struct advice *a,
					    const char *purpose);

/* The FAT32 layout for a partition of part_bytes with clusters of
 * cluster_bytes whose data area starts on a multiple of align_bytes,
 * following mkfs.fat's own FAT-size computation (dosfstools 4.x, two FATs,
 * structures aligned to clusters, size rounded to the 32-sector tracks
 * the advice's -g 64/32 sets).  False when no reserved count up to 65535
 * does it or FAT32 would get too few clusters. */
bool advice_fat32_layout(uint64_t part_bytes, uint32_t sector_bytes,
			 uint64_t cluster_bytes, uint64_t align_bytes,
			 struct fat32_layout *out);

/* mkfs.fat's FAT32 layout for reserved sectors (a multiple of spc) on a
 * partition of total_sectors (exposed for the fuzzer and tests). */
bool advice_fat32_for_reserved(uint64_t total_sectors, uint32_t sector_bytes,
			       uint32_t spc, uint32_t reserved,
			       struct fat32_layout *out);

/* The same for FAT16 (mkfs.fat -F 16 with its default 512 root
 * directory entries): the data area also follows the root directory. */
bool advice_fat16_layout(uint64_t part_bytes, uint32_t sector_bytes,
			 uint64_t cluster_bytes, uint64_t align_bytes,
			 struct fat32_layout *out);

#endif
