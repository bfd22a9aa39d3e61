/* cliopts.c - the table of commands and options, and the help made from it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cliopts.h"

#define ON(cmd) (1u << (cmd))
#define EVERY_COMMAND (~0u)
/* Commands that time the card (and so take --seed and --no-realtime). */
#define MEASURING (ON(CMD_ALIGN) | ON(CMD_OPEN_AU) | ON(CMD_FIND_FAT) | \
		   ON(CMD_PROBE) | ON(CMD_BENCH) | ON(CMD_CAPACITY) | ON(CMD_CHECK))
/* Commands that may write the card under test (and so need consent). */
#define WRITING (ON(CMD_OPEN_AU) | ON(CMD_FIND_FAT) | ON(CMD_PROBE) | \
		 ON(CMD_BENCH) | ON(CMD_CAPACITY))
/* Commands that only read, whatever the options. */
#define READING (ON(CMD_ALIGN) | ON(CMD_CHECK) | ON(CMD_IDENTIFY) | ON(CMD_ADVISE))
/* Commands that draw a chart of what they measured. */
#define DRAWING (ON(CMD_ALIGN) | ON(CMD_OPEN_AU) | ON(CMD_FIND_FAT) | \
		 ON(CMD_PROBE) | ON(CMD_BENCH))
#define ALIGNING (ON(CMD_ALIGN) | ON(CMD_OPEN_AU) | ON(CMD_FIND_FAT) | ON(CMD_CHECK))

/* Where the help column starts. */
#define HELP_COLUMN 24

struct cli_command {
	const char *name;
	enum fp_command command;
	const char *flashbench;		/* its flashbench option, or NULL */
	const char *args;		/* what follows the options */
	const char *summary;		/* lines separated by '\n' */
};

static const struct cli_command commands[] = {
	{ "probe", CMD_PROBE, NULL, "DEVICE",
	  "the default: identity, geometry, advice; the\n"
	  "write tests only with --write or --destructive" },
	{ "align", CMD_ALIGN, "-a", "DEVICE", "read-only: the page and erase-block size" },
	{ "open-au", CMD_OPEN_AU, "-O", "DEVICE",
	  "writes: count the AUs kept open (linear, random)" },
	{ "find-fat", CMD_FIND_FAT, "-f", "DEVICE", "writes from sector 0: find the FAT area" },
	{ "capacity", CMD_CAPACITY, NULL, "DEVICE",
	  "writes: is the capacity real (fake-card check)" },
	{ "identify", CMD_IDENTIFY, NULL, "DEVICE",
	  "read-only, no timing: what the card and the\n"
	  "kernel say about it, each value with its source" },
	{ "bench", CMD_BENCH, NULL, "DEVICE",
	  "1MiB sequential and 4KiB random speed, latency;\n"
	  "the writes with --write or --destructive (a\n"
	  "simulated card: unless --read-only)" },
	{ "restore", CMD_RESTORE, NULL, "JOURNAL|DEVICE",
	  "replay an unfinished journal (JOURNAL or DEVICE)" },
	{ "list-sims", CMD_LIST_SIMS, NULL, "", "the built-in simulated cards and their truth" },
	{ "advise", CMD_ADVISE, NULL, "[DEVICE]",
	  "partitioning advice from known numbers (--erasesize,\n"
	  "--page, --fat-area, --size, --label); DEVICE optional" },
	{ "check", CMD_CHECK, NULL, "DEVICE",
	  "read-only: does the card's partition table and\n"
	  "file systems fit its geometry (--erasesize,\n"
	  "--page, --fat-area or the card's AU or a\n"
	  "read-only align run)" },
	{ "help", CMD_HELP, NULL, "[COMMAND]", "this help, or COMMAND's usage and options" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

enum opt_group { GROUP_CONSENT, GROUP_MEASURE, GROUP_OUTPUT, NGROUPS };

static const char *const group_titles[NGROUPS] = {
	"Write consent (simulated cards need none)", "Measurement", "Output",
};

struct cli_option {
	const char *name;
	int key;			/* short letter, or OPT_* */
	const char *arg;		/* "SIZE", or NULL for a flag */
	unsigned commands;		/* ON() of the commands that take it */
	enum opt_group group;
	const char *help;		/* lines separated by '\n' */
};

static const struct cli_option options[] = {
	{ "write", OPT_WRITE, NULL, WRITING, GROUP_CONSENT,
	  "back the test area up, test, restore, verify" },
	{ "destructive", OPT_DESTRUCTIVE, NULL, WRITING, GROUP_CONSENT,
	  "test without a backup (blank cards)" },
	{ "yes", 'y', NULL, WRITING, GROUP_CONSENT,
	  "do not ask to type the device name (without a\n"
	  "terminal: needed when the device holds data)" },
	{ "journal", OPT_JOURNAL, "PATH", WRITING, GROUP_CONSENT,
	  "where --write keeps the backup" },
	{ "force", OPT_FORCE, NULL, ON(CMD_RESTORE), GROUP_CONSENT,
	  "replay a damaged or foreign journal" },
	{ "overwrite-newer", OPT_OVERWRITE_NEWER, NULL, ON(CMD_RESTORE), GROUP_CONSENT,
	  "replay over data written since the test" },

	{ "blocksize", 'b', "SIZE", ALIGNING, GROUP_MEASURE,
	  "read size (align) or smallest chunk (writes)" },
	{ "count", 'c', "N", ALIGNING, GROUP_MEASURE,
	  "at most N reads per alignment position\n(default 48)" },
	{ "erasesize", 'e', "SIZE", ON(CMD_OPEN_AU) | ON(CMD_FIND_FAT) | ON(CMD_PROBE) |
	  ON(CMD_BENCH) | ON(CMD_ADVISE) | ON(CMD_CHECK), GROUP_MEASURE,
	  "the erase block (default: measured)" },
	{ "open-au-nr", OPT_OPEN_AU_NR, "N", ON(CMD_OPEN_AU), GROUP_MEASURE,
	  "flashbench's manual run with N AUs" },
	{ "max-open", OPT_MAX_OPEN, "N", ON(CMD_OPEN_AU), GROUP_MEASURE,
	  "search limit (default 32)" },
	{ "random", 'r', NULL, ON(CMD_OPEN_AU) | ON(CMD_FIND_FAT), GROUP_MEASURE,
	  "manual runs: random order inside each AU" },
	{ "offset", OPT_OFFSET, "SIZE", ON(CMD_OPEN_AU) | ON(CMD_BENCH), GROUP_MEASURE,
	  "start of the test area" },
	{ "fat-nr", OPT_FAT_NR, "N", ON(CMD_FIND_FAT), GROUP_MEASURE,
	  "units examined (manual) or at least (auto)" },
	{ "manual", OPT_MANUAL, NULL, ON(CMD_FIND_FAT), GROUP_MEASURE,
	  "flashbench's table, no verdict" },
	{ "quick", OPT_QUICK, NULL, ON(CMD_ALIGN) | ON(CMD_PROBE), GROUP_MEASURE, "cheaper, less certain" },
	{ "cache-size", OPT_CACHE_SIZE, "SIZE", ON(CMD_CAPACITY) | ON(CMD_PROBE), GROUP_MEASURE,
	  "largest write cache to defeat (default 1GiB; 0 = none)" },
	{ "workload", OPT_WORKLOAD, "LIST", ON(CMD_BENCH), GROUP_MEASURE,
	  "seq_read,seq_write,rand_read,rand_write or all" },
	{ "runtime", OPT_RUNTIME, "TIME", ON(CMD_BENCH), GROUP_MEASURE,
	  "per workload and repeat (default 3s)" },
	{ "warmup", OPT_WARMUP, "TIME", ON(CMD_BENCH), GROUP_MEASURE,
	  "unrecorded I/O first (default 1s; 0 = none)" },
	{ "repeat", OPT_REPEAT, "N", ON(CMD_BENCH), GROUP_MEASURE,
	  "repeats, median reported (default 3)" },
	{ "size", OPT_SIZE, "SIZE", ON(CMD_BENCH) | ON(CMD_ADVISE), GROUP_MEASURE,
	  "bench: the test area (default 256MiB); advise:\n"
	  "the partition (default: the device)" },
	{ "read-only", OPT_READ_ONLY, NULL, ON(CMD_BENCH), GROUP_MEASURE,
	  "only the read workloads" },
	{ "seed", OPT_SEED, "N", MEASURING, GROUP_MEASURE,
	  "measurement order and simulated noise" },
	{ "page", OPT_PAGE, "SIZE", ON(CMD_ADVISE) | ON(CMD_CHECK), GROUP_MEASURE,
	  "the page (program unit)" },
	{ "fat-area", OPT_FAT_AREA, "SIZE", ON(CMD_ADVISE) | ON(CMD_CHECK), GROUP_MEASURE,
	  "the FAT area at the start of the card" },
	{ "label", OPT_LABEL, "dos|gpt", ON(CMD_ADVISE), GROUP_MEASURE,
	  "the partition table (default: dos up to 2TiB)" },
	{ "no-realtime", OPT_NO_REALTIME, NULL, MEASURING, GROUP_MEASURE,
	  "never raise to real-time priority (by default\n"
	  "SCHED_FIFO 10 while timing I/O, when root)" },

	{ "json", 'j', NULL, EVERY_COMMAND & ~(ON(CMD_RESTORE) | ON(CMD_HELP)),
	  GROUP_OUTPUT, "one JSON document on stdout" },
	{ "flashbench", OPT_FLASHBENCH, NULL, ON(CMD_ALIGN) | ON(CMD_OPEN_AU) | ON(CMD_FIND_FAT),
	  GROUP_OUTPUT, "only flashbench's table" },
	{ "svg", OPT_SVG, "FILE", DRAWING, GROUP_OUTPUT,
	  "a chart of the evidence (FILE - : standard\n"
	  "output, the report then goes to stderr)" },
	{ "sysfs-root", OPT_SYSFS_ROOT, "DIR", ON(CMD_IDENTIFY), GROUP_OUTPUT,
	  "read a copied sysfs tree (tests, offline\n"
	  "analysis); DEVICE is its kernel name" },
	{ "quiet", 'q', NULL, EVERY_COMMAND, GROUP_OUTPUT,
	  "no progress, notes or write announcements on\n"
	  "stderr (the JSON still has the planned areas)" },
	{ "help", 'h', NULL, EVERY_COMMAND, GROUP_OUTPUT,
	  "this help; after a command: its options only" },
	{ "version", 'V', NULL, EVERY_COMMAND, GROUP_OUTPUT, "the version" },
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))
_Static_assert(NOPTIONS <= CLIOPTS_MAX, "raise CLIOPTS_MAX");

/* The flashbench spellings that choose a command. */
static const struct option command_forms[] = {
	{ "align", no_argument, NULL, 'a' },
	{ "open-au", no_argument, NULL, 'O' },
	{ "findfat", no_argument, NULL, 'f' },
	{ "find-fat", no_argument, NULL, 'f' },
};

#define NFORMS (sizeof(command_forms) / sizeof(command_forms[0]))

enum fp_command cliopts_command_named(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return commands[i].command;
	return CMD_NONE;
}

static const struct cli_command *command_info(enum fp_command cmd)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (commands[i].command == cmd)
			return &commands[i];
	return NULL;
}

const char *cliopts_command_name(enum fp_command cmd)
{
	const struct cli_command *k = command_info(cmd);

	return k ? k->name : "flashprobe";
}

const struct option *cliopts_longopts(void)
{
	static struct option table[CLIOPTS_MAX + NFORMS + 1];

	if (!table[0].name) {
		for (size_t i = 0; i < NOPTIONS; i++)
			table[i] = (struct option){ options[i].name,
				options[i].arg ? required_argument : no_argument,
				NULL, options[i].key };
		memcpy(&table[NOPTIONS], command_forms, sizeof(command_forms));
	}
	return table;
}

const char *cliopts_shortopts(void)
{
	/* ':' first: a missing value is told apart from an unknown option */
	static char s[2 * CLIOPTS_MAX + 8] = ":aOf";

	if (!s[4])
		for (size_t i = 0, n = 4; i < NOPTIONS; i++)
			if (options[i].key < 256) {
				s[n++] = (char)options[i].key;
				if (options[i].arg)
					s[n++] = ':';
			}
	return s;
}

int cliopts_index(int key)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		if (options[i].key == key)
			return (int)i;
	return -1;
}

const char *cliopts_name(int index)
{
	return options[index].name;
}

bool cliopts_applies(int index, enum fp_command cmd)
{
	return options[index].commands & ON(cmd);
}

/* "open-au and bench", "align, open-au, find-fat and check" (help,
 * which takes no options of its own, is never named). */
static void list_commands(unsigned mask, char *buf, size_t len)
{
	size_t n = 0, total = 0, at = 0;

	mask &= ~ON(CMD_HELP);
	for (size_t i = 0; i < NCOMMANDS; i++)
		total += (mask & ON(commands[i].command)) != 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NCOMMANDS && at < len; i++) {
		if (!(mask & ON(commands[i].command)))
			continue;
		n++;
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       n == 1 ? "" : n == total ? " and " : ", ",
				       commands[i].name);
	}
}

/* The commands of mask, or "all but ..." when that is shorter. */
static void command_list(unsigned mask, char *buf, size_t len)
{
	size_t taken = 0;

	for (size_t i = 0; i < NCOMMANDS; i++)
		taken += (mask & ON(commands[i].command)) != 0;
	if (2 * taken <= NCOMMANDS) {
		list_commands(mask, buf, len);
		return;
	}
	snprintf(buf, len, "all but ");
	list_commands(~mask, buf + strlen(buf), len - strlen(buf));
}

/* What helps to understand a refusal, or "". */
static const char *refusal_reason(int key, enum fp_command cmd, char *buf, size_t len)
{
	if (key == OPT_OFFSET && cmd == CMD_FIND_FAT)
		return " (find-fat writes from sector 0)";
	if (key == OPT_SVG)
		return " (the commands that measure and draw)";
	if (options[cliopts_index(key)].group == GROUP_CONSENT && (READING & ON(cmd))) {
		snprintf(buf, len, " (%s only reads)", cliopts_command_name(cmd));
		return buf;
	}
	return "";
}

void cliopts_refusal(int index, enum fp_command cmd, char *buf, size_t len)
{
	char list[256], why[64];
	const struct cli_option *o = &options[index];

	command_list(o->commands, list, sizeof(list));
	snprintf(buf, len, "--%s only applies to %s%s", o->name, list,
		 refusal_reason(o->key, cmd, why, sizeof(why)));
}

/* Text whose lines are separated by '\n', the first after column col
 * of the current line, the others indented to HELP_COLUMN. */
static void put_column(FILE *out, size_t col, const char *text)
{
	if (col + 2 > HELP_COLUMN) {
		fputc('\n', out);
		col = 0;
	}
	for (const char *line = text; line; ) {
		const char *nl = strchr(line, '\n');

		fprintf(out, "%*s%.*s\n", (int)(HELP_COLUMN - col), "",
			nl ? (int)(nl - line) : (int)strlen(line), line);
		col = 0;
		line = nl ? nl + 1 : NULL;
	}
}

static void put_option(FILE *out, const struct cli_option *o, bool name_commands)
{
	char left[64], list[256];
	int n;

	n = snprintf(left, sizeof(left), "  %c%c%s--%s%s%s",
		     o->key < 256 ? '-' : ' ', o->key < 256 ? o->key : ' ',
		     o->key < 256 ? ", " : "  ", o->name, o->arg ? "=" : "",
		     o->arg ? o->arg : "");
	fputs(left, out);
	put_column(out, (size_t)n, o->help);
	if (name_commands && o->commands != EVERY_COMMAND) {
		command_list(o->commands, list, sizeof(list));
		fprintf(out, "%*s(%s)\n", HELP_COLUMN, "", list);
	}
}

/* The options of cmd (all of them for CMD_NONE), grouped. */
static void put_options(FILE *out, enum fp_command cmd)
{
	for (int g = 0; g < NGROUPS; g++) {
		bool titled = false;

		for (size_t i = 0; i < NOPTIONS; i++) {
			if (options[i].group != (enum opt_group)g ||
			    (cmd != CMD_NONE && !(options[i].commands & ON(cmd))))
				continue;
			if (!titled)
				fprintf(out, "\n%s:\n", group_titles[g]);
			titled = true;
			put_option(out, &options[i], cmd == CMD_NONE);
		}
	}
}

static void put_command(FILE *out, const struct cli_command *k)
{
	char left[32];
	int n = snprintf(left, sizeof(left), "  %s%s%s", k->name,
			 k->flashbench ? ", " : "", k->flashbench ? k->flashbench : "");

	fputs(left, out);
	put_column(out, (size_t)n, k->summary);
}

static const char footer[] =
	"\n"
	"SIZE accepts 4194304, 0x400000, 4M, 4MiB (binary units); TIME 3, 3s, 1.5s\n"
	"or 500ms.\n"
	"Exit status: 0 done (also when a parameter is undetermined), 1 runtime\n"
	"error, 2 bad usage, 3 refused for safety, 4 a needed size could not be\n"
	"measured; with 2, 3 and 4 nothing was changed (4: the AU search's area\n"
	"restored).  128+N after signal N\n"
	"(the data restored first; a restore always finishes).\n"
	"\n"
	"See flashprobe(1).\n";

void cliopts_help(FILE *out, enum fp_command cmd)
{
	const struct cli_command *k = command_info(cmd);

	if (!k) {
		fputs("Usage: flashprobe [COMMAND] [OPTIONS] DEVICE\n"
		      "\n"
		      "Infer the geometry of an SD card, eMMC or USB stick by timing it.\n"
		      "DEVICE is a block device, an image file, or a simulated card\n"
		      "written sim:NAME[,key=value...] (see list-sims).\n"
		      "\n"
		      "Commands:\n", out);
		for (size_t i = 0; i < NCOMMANDS; i++)
			put_command(out, &commands[i]);
		put_options(out, CMD_NONE);
		fputs("\n'flashprobe help COMMAND' or 'flashprobe COMMAND --help': that\n"
		      "command's options only.\n", out);
		fputs(footer, out);
		return;
	}
	fprintf(out, "Usage: flashprobe %s%s%s%s\n\n", k->name,
		cmd == CMD_HELP ? "" : " [OPTIONS]", k->args[0] ? " " : "", k->args);
	fprintf(out, "%s: %s\n", k->name, k->summary);
	if (k->flashbench) {
		fprintf(out, "flashbench's spelling: flashprobe %s DEVICE", k->flashbench);
		for (size_t i = 0; i < NFORMS; i++)
			if (command_forms[i].val == k->flashbench[1])
				fprintf(out, ", or --%s", command_forms[i].name);
		fputs(cmd == CMD_FIND_FAT ? " (these give flashbench's table without a "
		      "verdict, as --manual).\n" : ".\n", out);
	}
	put_options(out, cmd);
	fputs(footer, out);
}
