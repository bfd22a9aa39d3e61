/* cliopts.h - the commands and options of the command line, in one table.
 *
 * Each option lists the commands it applies to, so that the parser
 * rejects an option a command would ignore (exit 2, before any device
 * work), and `--help`, `COMMAND --help` and `help COMMAND` are printed
 * from the same table and cannot drift from what the parser accepts.
 */
#ifndef FLASHPROBE_CLIOPTS_H
#define FLASHPROBE_CLIOPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum fp_command {
	CMD_NONE,
	CMD_ALIGN,
	CMD_OPEN_AU,
	CMD_FIND_FAT,
	CMD_PROBE,
	CMD_BENCH,
	CMD_RESTORE,
	CMD_LIST_SIMS,
	CMD_CAPACITY,
	CMD_ADVISE,
	CMD_CHECK,
	CMD_IDENTIFY,
	CMD_HELP,
};

/* getopt_long values of the options without a short letter. */
enum {
	OPT_SEED = 256, OPT_FLASHBENCH, OPT_OPEN_AU_NR, OPT_MAX_OPEN,
	OPT_OFFSET, OPT_FAT_NR, OPT_MANUAL, OPT_WRITE, OPT_DESTRUCTIVE,
	OPT_JOURNAL, OPT_FORCE, OPT_OVERWRITE_NEWER, OPT_SVG, OPT_QUICK, OPT_READ_ONLY, OPT_RUNTIME,
	OPT_WARMUP, OPT_REPEAT, OPT_WORKLOAD, OPT_SIZE, OPT_CACHE_SIZE,
	OPT_PAGE, OPT_FAT_AREA, OPT_LABEL, OPT_NO_REALTIME, OPT_SYSFS_ROOT,
};

/* The most options the table holds (a bound for arrays indexed by it). */
#define CLIOPTS_MAX 48

/* The command named name ("bench"), or CMD_NONE. */
enum fp_command cliopts_command_named(const char *name);

/* "bench" for CMD_BENCH. */
const char *cliopts_command_name(enum fp_command cmd);

/* getopt_long's tables: every option of the table plus the flashbench
 * command forms (-a/--align, -O/--open-au, -f/--find-fat/--findfat). */
const struct option *cliopts_longopts(void);
const char *cliopts_shortopts(void);

/* The table index of the option getopt_long returned as key, or -1. */
int cliopts_index(int key);

/* Its long name ("blocksize"). */
const char *cliopts_name(int index);

/* Whether option index applies to cmd. */
bool cliopts_applies(int index, enum fp_command cmd);

/* "--offset only applies to open-au and bench (find-fat writes from
 * sector 0)": why option index is refused for cmd. */
void cliopts_refusal(int index, enum fp_command cmd, char *buf, size_t len);

/* The whole help (cmd CMD_NONE), or one command's usage, what it does
 * and only its options. */
void cliopts_help(FILE *out, enum fp_command cmd);

#endif
