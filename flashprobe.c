/* flashprobe.c - command line: options, dispatch, exit status.  The only
 * file that exits; commands print their reports here. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "align.h"
#include "auwrite.h"
#include "clock.h"
#include "benchio.h"
#include "capacity.h"
#include "dev.h"
#include "errmsg.h"
#include "findfat.h"
#include "journal.h"
#include "layoutcheck.h"
#include "json.h"
#include "openau.h"
#include "probe.h"
#include "report.h"
#include "report_advice.h"
#include "report_bench.h"
#include "report_capacity.h"
#include "report_check.h"
#include "report_findfat.h"
#include "report_identity.h"
#include "report_openau.h"
#include "report_probe.h"
#include "safety.h"
#include "session.h"
#include "sim.h"
#include "stats.h"
#include "svg.h"
#include "units.h"

#ifndef FLASHPROBE_VERSION
#define FLASHPROBE_VERSION "0.0.0"
#endif

/* Exit statuses, documented in flashprobe(1). */
enum fp_exit {
	FP_EXIT_OK = 0,
	FP_EXIT_FAILURE = 1,		/* I/O error or other runtime failure */
	FP_EXIT_USAGE = 2,		/* bad invocation or input; nothing written */
	FP_EXIT_REFUSED = 3,		/* refused for safety; nothing written */
	FP_EXIT_UNDETERMINED = 4,	/* a needed size could not be measured; nothing written */
};

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
};

struct cli {
	enum fp_command command;
	bool flashbench_form;		/* invoked as -a, -O or -f */
	const char *device;
	bool json, flashbench, quiet, quick, read_only, no_realtime;
	const char *svg;
	bool write, destructive, yes, force, manual, random;
	const char *journal;
	uint64_t blocksize_bytes, erase_bytes, offset_bytes;
	bool offset_set;
	uint64_t count, seed, open_au_nr, max_open, fat_nr;
	uint64_t size_bytes, repeat, runtime_ms, warmup_ms;
	bool warmup_set;
	const char *workloads;
	bool seed_set;
	uint64_t cache_bytes;		/* --cache-size */
	bool cache_set;
	const char *sysfs_root;		/* identify --sysfs-root */
	char spec[4096];		/* device with the seed folded in */
	uint64_t page_bytes, fat_area_bytes;	/* advise: known geometry */
	bool fat_area_set;
	enum advice_label label;
};

static const struct {
	const char *name;
	enum fp_command command;
} commands[] = {
	{ "align", CMD_ALIGN },
	{ "open-au", CMD_OPEN_AU },
	{ "find-fat", CMD_FIND_FAT },
	{ "probe", CMD_PROBE },
	{ "bench", CMD_BENCH },
	{ "restore", CMD_RESTORE },
	{ "list-sims", CMD_LIST_SIMS },
	{ "capacity", CMD_CAPACITY },
	{ "advise", CMD_ADVISE },
	{ "check", CMD_CHECK },
	{ "identify", CMD_IDENTIFY },
};

static void usage(FILE *out)
{
	fputs("Usage: flashprobe [COMMAND] [OPTIONS] DEVICE\n"
	      "\n"
	      "Infer the geometry of an SD card, eMMC or USB stick by timing it.\n"
	      "DEVICE is a block device, an image file, or a simulated card\n"
	      "written sim:NAME[,key=value...] (see list-sims).\n"
	      "\n"
	      "Commands:\n"
	      "  probe                 the default: identity, geometry, advice; the\n"
	      "                        write tests only with --write or --destructive\n"
	      "  align, -a             read-only: the page and erase-block size\n"
	      "  open-au, -O           writes: count the AUs kept open (linear, random)\n"
	      "  find-fat, -f          writes from sector 0: find the FAT area\n"
	      "  capacity              writes: is the capacity real (fake-card check)\n"
	      "  identify              read-only, no timing: what the card and the\n"
	      "                        kernel say about it, each value with its source\n"
	      "  bench                 1MiB sequential and 4KiB random speed, latency\n"
	      "  restore               replay an unfinished journal (JOURNAL or DEVICE)\n"
	      "  list-sims             the built-in simulated cards and their truth\n"
	      "  advise                partitioning advice from known numbers (--erasesize,\n"
	      "                        --page, --fat-area, --size, --label); DEVICE optional\n"
	      "  check                 read-only: does the card's partition table and file\n"
	      "                        systems fit its geometry (--erasesize, --page, --fat-area\n"
	      "                        or the card's AU or a read-only align run)\n"
	      "\n"
	      "Write consent (simulated cards need none):\n"
	      "      --write           back the test area up, test, restore, verify\n"
	      "      --destructive     test without a backup (blank cards)\n"
	      "  -y, --yes             do not ask to type the device name (without a\n"
	      "                        terminal: needed when the device holds data)\n"
	      "      --journal=PATH    where --write keeps the backup\n"
	      "      --force           restore: replay a damaged or foreign journal\n"
	      "\n"
	      "Measurement:\n"
	      "  -b, --blocksize=SIZE  read size (align) or smallest chunk (writes)\n"
	      "  -c, --count=N         align: at most N reads per position (default 48)\n"
	      "  -e, --erasesize=SIZE  erase block for write tests (default: measured)\n"
	      "      --open-au-nr=N    open-au: flashbench's manual run with N AUs\n"
	      "      --max-open=N      open-au: search limit (default 32)\n"
	      "      --random          manual runs: random order inside each AU\n"
	      "      --offset=SIZE     open-au, bench: start of the test area\n"
	      "      --fat-nr=N        find-fat: units examined (manual) or at least (auto)\n"
	      "      --manual          find-fat: flashbench's table, no verdict\n"
	      "      --quick           probe: cheaper, less certain\n"
	      "      --cache-size=SIZE capacity, probe: write cache to defeat\n"
	      "                        (default 32MiB; 0 = none)\n"
	      "      --workload=LIST   bench: seq_read,seq_write,rand_read,rand_write or all\n"
	      "      --runtime=TIME    bench: seconds per workload and repeat (default 3)\n"
	      "      --warmup=TIME     bench: unrecorded I/O first (default 1)\n"
	      "      --repeat=N        bench: repeats, median reported (default 3)\n"
	      "      --size=SIZE       bench: test area size (default 256MiB)\n"
	      "      --read-only       bench: only the read workloads\n"
	      "      --seed=N          measurement order and simulated noise\n"
	      "      --page=SIZE       advise, check: the page (program unit)\n"
	      "      --fat-area=SIZE   advise, check: the FAT area at the start of the card\n"
	      "      --size=SIZE       advise: the partition size (default: the device)\n"
	      "      --label=dos|gpt   advise: the partition table (default: dos up to 2TiB)\n"
	      "      --no-realtime     never raise to real-time priority (by default\n"
	      "                        SCHED_FIFO 10 while timing I/O, when root)\n"
	      "\n"
	      "Output:\n"
	      "  -j, --json            one JSON document on stdout\n"
	      "      --flashbench      only flashbench's table\n"
	      "      --svg=FILE        a chart of the evidence (FILE - : standard\n"
	      "                        output, the report then goes to stderr)\n"
	      "      --sysfs-root=DIR  identify: read a copied sysfs tree (tests,\n"
	      "                        offline analysis); DEVICE is its kernel name\n"
	      "  -q, --quiet           no progress or notes on stderr\n"
	      "  -h, --help            this help\n"
	      "  -V, --version         the version\n"
	      "\n"
	      "SIZE accepts 4194304, 0x400000, 4M, 4MiB; TIME 3, 3s or 500ms.\n"
	      "Exit status: 0 done (also when a parameter is undetermined), 1 runtime\n"
	      "error, 2 bad usage, 3 refused for safety, 4 a needed size could not be\n"
	      "measured; with 2, 3 and 4 nothing was written.  128+N after signal N\n"
	      "(the data restored first; a restore always finishes).\n"
	      "\n"
	      "See flashprobe(1).\n", out);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "flashprobe: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'flashprobe --help' for more information.\n");
	return FP_EXIT_USAGE;
}

static int fail(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("flashprobe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

static bool set_command(struct cli *c, enum fp_command cmd, bool flashbench_form)
{
	if (c->command != CMD_NONE && c->command != cmd)
		return false;
	c->command = cmd;
	c->flashbench_form |= flashbench_form;
	return true;
}

static enum fp_command command_named(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return commands[i].command;
	return CMD_NONE;
}

static int parse_size_option(const char *name, const char *arg, uint64_t *out)
{
	int ret = units_parse_size(arg, out);

	if (ret == -ERANGE)
		return fail(FP_EXIT_USAGE, "%s '%s' is too large", name, arg);
	if (ret || *out == 0)
		return fail(FP_EXIT_USAGE, "%s '%s' is not a positive size", name, arg);
	return FP_EXIT_OK;
}

static int parse_count_option(const char *name, const char *arg,
			      uint64_t max, uint64_t *out)
{
	if (units_parse_uint(arg, max, out) || *out == 0)
		return fail(FP_EXIT_USAGE, "%s '%s' is not a number from 1 to %" PRIu64,
			    name, arg, max);
	return FP_EXIT_OK;
}

/* Seconds as a whole number, or with an ms or s suffix, into ms. */
static int parse_seconds(const char *name, const char *arg, bool zero_ok,
			 uint64_t *ms)
{
	const char *unit = arg + strspn(arg, "0123456789");
	char digits[32];
	uint64_t v;
	size_t n = (size_t)(unit - arg);

	if (n == 0 || n >= sizeof(digits) ||
	    (*unit && strcmp(unit, "s") && strcmp(unit, "ms")))
		return fail(FP_EXIT_USAGE, "%s '%s' is not a duration (e.g. 3, 3s, 500ms)",
			    name, arg);
	memcpy(digits, arg, n);
	digits[n] = '\0';
	if (units_parse_uint(digits, 86400000, &v) || (!v && !zero_ok))
		return fail(FP_EXIT_USAGE, "%s '%s' is out of range", name, arg);
	*ms = strcmp(unit, "ms") ? v * 1000 : v;
	return FP_EXIT_OK;
}

enum {
	OPT_SEED = 256, OPT_FLASHBENCH, OPT_OPEN_AU_NR, OPT_MAX_OPEN, OPT_RANDOM,
	OPT_OFFSET, OPT_FAT_NR, OPT_MANUAL, OPT_WRITE, OPT_DESTRUCTIVE,
	OPT_JOURNAL, OPT_FORCE, OPT_SVG, OPT_QUICK, OPT_READ_ONLY, OPT_RUNTIME,
	OPT_WARMUP, OPT_REPEAT, OPT_WORKLOAD, OPT_SIZE, OPT_CACHE_SIZE,
	OPT_PAGE, OPT_FAT_AREA, OPT_LABEL, OPT_NO_REALTIME, OPT_SYSFS_ROOT,
};

static const struct option longopts[] = {
	{ "align", no_argument, NULL, 'a' },
	{ "open-au", no_argument, NULL, 'O' },
	{ "findfat", no_argument, NULL, 'f' },
	{ "find-fat", no_argument, NULL, 'f' },
	{ "blocksize", required_argument, NULL, 'b' },
	{ "count", required_argument, NULL, 'c' },
	{ "erasesize", required_argument, NULL, 'e' },
	{ "open-au-nr", required_argument, NULL, OPT_OPEN_AU_NR },
	{ "max-open", required_argument, NULL, OPT_MAX_OPEN },
	{ "random", no_argument, NULL, OPT_RANDOM },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "fat-nr", required_argument, NULL, OPT_FAT_NR },
	{ "manual", no_argument, NULL, OPT_MANUAL },
	{ "write", no_argument, NULL, OPT_WRITE },
	{ "destructive", no_argument, NULL, OPT_DESTRUCTIVE },
	{ "yes", no_argument, NULL, 'y' },
	{ "journal", required_argument, NULL, OPT_JOURNAL },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "read-only", no_argument, NULL, OPT_READ_ONLY },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE },
	{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "page", required_argument, NULL, OPT_PAGE },
	{ "fat-area", required_argument, NULL, OPT_FAT_AREA },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "no-realtime", no_argument, NULL, OPT_NO_REALTIME },
	{ "json", no_argument, NULL, 'j' },
	{ "flashbench", no_argument, NULL, OPT_FLASHBENCH },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* One option; returns an exit status (FP_EXIT_OK to go on). */
static int parse_option(struct cli *c, int opt, const char *arg, char **argv)
{
	switch (opt) {
	case 'a':
	case 'O':
	case 'f':
		if (!set_command(c, opt == 'a' ? CMD_ALIGN : opt == 'O' ? CMD_OPEN_AU
									  : CMD_FIND_FAT, true))
			return usage_error("%s", "more than one command given");
		return FP_EXIT_OK;
	case 'b':
		return parse_size_option("blocksize", arg, &c->blocksize_bytes);
	case 'c':
		return parse_count_option("count", arg, 1024, &c->count);
	case 'e':
		return parse_size_option("erasesize", arg, &c->erase_bytes);
	case OPT_OPEN_AU_NR:
		return parse_count_option("open-au-nr", arg, OPENAU_MAX_OPEN_LIMIT,
					  &c->open_au_nr);
	case OPT_MAX_OPEN:
		return parse_count_option("max-open", arg, OPENAU_MAX_OPEN_LIMIT,
					  &c->max_open);
	case OPT_FAT_NR:
		return parse_count_option("fat-nr", arg, FINDFAT_MAX_UNITS, &c->fat_nr);
	case OPT_OFFSET:
		c->offset_set = true;
		if (units_parse_size(arg, &c->offset_bytes))
			return fail(FP_EXIT_USAGE, "offset '%s' is not a size", arg);
		return FP_EXIT_OK;
	case OPT_SEED:
		c->seed_set = true;
		if (units_parse_uint(arg, UINT64_MAX, &c->seed))
			return usage_error("seed '%s' is not a number", arg);
		return FP_EXIT_OK;
	case OPT_RANDOM: c->random = true; return FP_EXIT_OK;
	case OPT_MANUAL: c->manual = true; return FP_EXIT_OK;
	case OPT_WRITE: c->write = true; return FP_EXIT_OK;
	case OPT_DESTRUCTIVE: c->destructive = true; return FP_EXIT_OK;
	case 'y': c->yes = true; return FP_EXIT_OK;
	case OPT_JOURNAL: c->journal = arg; return FP_EXIT_OK;
	case OPT_FORCE: c->force = true; return FP_EXIT_OK;
	case OPT_SVG: c->svg = arg; return FP_EXIT_OK;
	case OPT_SYSFS_ROOT: c->sysfs_root = arg; return FP_EXIT_OK;
	case OPT_QUICK: c->quick = true; return FP_EXIT_OK;
	case OPT_READ_ONLY: c->read_only = true; return FP_EXIT_OK;
	case OPT_NO_REALTIME: c->no_realtime = true; return FP_EXIT_OK;
	case OPT_WORKLOAD: c->workloads = arg; return FP_EXIT_OK;
	case OPT_SIZE:
		return parse_size_option("size", arg, &c->size_bytes);
	case OPT_CACHE_SIZE:
		c->cache_set = true;
		if (units_parse_size(arg, &c->cache_bytes) ||
		    c->cache_bytes > CAPACITY_MAX_CACHE_BYTES)
			return fail(FP_EXIT_USAGE, "cache-size '%s' is not a size up to 1GiB", arg);
		return FP_EXIT_OK;
	case OPT_REPEAT:
		return parse_count_option("repeat", arg, BENCHIO_MAX_REPEATS, &c->repeat);
	case OPT_RUNTIME:
		return parse_seconds("runtime", arg, false, &c->runtime_ms);
	case OPT_WARMUP:
		c->warmup_set = true;
		return parse_seconds("warmup", arg, true, &c->warmup_ms);
	case OPT_PAGE:
		return parse_size_option("page", arg, &c->page_bytes);
	case OPT_FAT_AREA:
		c->fat_area_set = true;
		if (units_parse_size(arg, &c->fat_area_bytes))
			return fail(FP_EXIT_USAGE, "fat-area '%s' is not a size", arg);
		return FP_EXIT_OK;
	case OPT_LABEL:
		if (strcmp(arg, "dos") && strcmp(arg, "gpt"))
			return usage_error("label '%s' is not dos or gpt", arg);
		c->label = strcmp(arg, "dos") ? ADVICE_LABEL_GPT : ADVICE_LABEL_DOS;
		return FP_EXIT_OK;
	case 'j': c->json = true; return FP_EXIT_OK;
	case OPT_FLASHBENCH: c->flashbench = true; return FP_EXIT_OK;
	case 'q': c->quiet = true; return FP_EXIT_OK;
	case 'h':
		usage(stdout);
		exit(FP_EXIT_OK);
	case 'V':
		printf("flashprobe %s\n", FLASHPROBE_VERSION);
		exit(FP_EXIT_OK);
	case ':':
		return usage_error("option '%s' needs a value", argv[optind - 1]);
	default:
		return usage_error("unknown option '%s'", argv[optind - 1]);
	}
}

/* A path is used as given or not at all: one longer than PATH_MAX, cut
 * to fit a buffer, could name another, existing file. */
static int check_path(const char *option, const char *path)
{
	if (path && !path[0])
		return usage_error("%s needs a path (the value is empty)", option);
	if (path && strlen(path) >= PATH_MAX)
		return fail(FP_EXIT_USAGE, "the %s path is longer than %d bytes "
			    "(PATH_MAX): '%.32s...'", option, PATH_MAX - 1, path);
	return FP_EXIT_OK;
}

static int check_paths(const struct cli *c)
{
	int ret = check_path("device", c->device);

	if (!ret)
		ret = check_path("--journal", c->journal);
	if (!ret)
		ret = check_path("--svg", c->svg);
	if (!ret)
		ret = check_path("--sysfs-root", c->sysfs_root);
	return ret;
}

/* A chart path that cannot be written is refused before anything is
 * measured. */
static int check_svg_path(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!*path)
		return usage_error("%s", "--svg needs a file name (or - for standard output)");
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return usage_error("--svg '%s' is not a regular file", path);
		if (access(path, W_OK))
			return usage_error("--svg '%s' is not writable", path);
		return FP_EXIT_OK;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1,
		 slash ? path : ".");
	if (access(dir, W_OK))
		return usage_error("--svg '%s': its directory does not exist or is "
				   "not writable", path);
	return FP_EXIT_OK;
}

/* The commands that draw their evidence. */
static bool draws_chart(enum fp_command cmd)
{
	return cmd == CMD_ALIGN || cmd == CMD_OPEN_AU || cmd == CMD_FIND_FAT ||
	       cmd == CMD_PROBE || cmd == CMD_BENCH;
}

/* Before anything is opened: a command that draws, a file that is not the
 * device under test (or on it) and that can be written. */
static int check_svg(const struct cli *c)
{
	char err[512] = "";

	if (!draws_chart(c->command))
		return usage_error("%s applies only to commands that measure and draw "
				   "(align, open-au, find-fat, probe, bench)", "--svg");
	if (!strcmp(c->svg, "-"))
		return c->json ? usage_error("%s: both want standard output",
					     "--json and --svg=-") : FP_EXIT_OK;
	if (c->device && safety_check_output("--svg", c->svg, c->device, err, sizeof(err)))
		return fail(FP_EXIT_USAGE, "%s", err);
	return check_svg_path(c->svg);
}

static int check_combinations(const struct cli *c)
{
	if (c->json && c->flashbench)
		return usage_error("%s: choose one output format", "--json and --flashbench");
	if (c->write && c->destructive)
		return usage_error("%s: choose one", "--write and --destructive");
	if (c->command != CMD_LIST_SIMS && c->command != CMD_ADVISE && !c->device)
		return usage_error("%s", "no device given");
	if (c->command == CMD_LIST_SIMS && c->device)
		return usage_error("unexpected argument '%s' (list-sims takes none)",
				   c->device);
	if (c->open_au_nr && c->command != CMD_OPEN_AU)
		return usage_error("%s only applies to open-au", "--open-au-nr");
	if (c->sysfs_root && c->command != CMD_IDENTIFY)
		return usage_error("%s only applies to identify", "--sysfs-root");
	if (c->cache_set && c->command != CMD_CAPACITY && c->command != CMD_PROBE)
		return usage_error("%s only applies to capacity and probe", "--cache-size");
	if (c->offset_set && c->command != CMD_OPEN_AU && c->command != CMD_BENCH)
		return usage_error(c->command == CMD_FIND_FAT ?
				   "%s only applies to open-au and bench (find-fat "
				   "writes from sector 0)" :
				   "%s only applies to open-au and bench", "--offset");
	if ((c->page_bytes || c->fat_area_set) && c->command != CMD_ADVISE &&
	    c->command != CMD_CHECK)
		return usage_error("%s only apply to advise and check", "--page and --fat-area");
	if (c->label != ADVICE_LABEL_AUTO && c->command != CMD_ADVISE)
		return usage_error("%s only applies to advise", "--label");
	if (c->svg && !c->svg[0])
		return usage_error("%s", "--svg needs a file name (or - for standard output)");
	if (check_paths(c))
		return FP_EXIT_USAGE;
	return c->svg ? check_svg(c) : FP_EXIT_OK;
}

static bool is_simulated(const char *device)
{
	return strncmp(device, "sim:", 4) == 0;
}

static int parse_args(int argc, char **argv, struct cli *c)
{
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":aOfb:c:e:yjqhV", longopts, NULL)) != -1)
		if ((ret = parse_option(c, opt, optarg, argv)))
			return ret;
	for (int i = optind; i < argc; i++) {
		enum fp_command cmd = c->command == CMD_NONE ? command_named(argv[i])
							     : CMD_NONE;

		if (cmd != CMD_NONE)
			c->command = cmd;
		else if (!c->device)
			c->device = argv[i];
		else
			return usage_error("unexpected argument '%s'", argv[i]);
	}
	if (c->command == CMD_NONE && !c->device)
		return usage_error("%s", "no command and no device given");
	if (c->command == CMD_NONE)
		c->command = CMD_PROBE;	/* flashprobe DEVICE */
	if ((ret = check_combinations(c)))
		return ret;
	if (c->device && c->seed_set && is_simulated(c->device))
		ret = snprintf(c->spec, sizeof(c->spec), "%s,seed=%" PRIu64, c->device,
			       c->seed);
	else if (c->device)
		ret = snprintf(c->spec, sizeof(c->spec), "%s", c->device);
	if (ret >= (int)sizeof(c->spec))
		return usage_error("%s: the simulated card with its seed is too long",
				   "--seed");
	return FP_EXIT_OK;
}

static int list_sims(void)
{
	char e[32], p[32], s[32], f[32], cap[80];

	printf("%-14s %8s %8s %8s %5s %5s %-10s %-16s %s\n", "name", "size", "erase",
	       "page", "open", "rand", "fat area", "capacity", "description");
	for (const struct sim_profile *sp = sim_profiles; sp->name[0]; sp++) {
		units_format_bytes(sp->size_bytes, s, sizeof(s));
		units_format_bytes(sp->erase_bytes, e, sizeof(e));
		if (sp->page_bytes)
			units_format_bytes(sp->page_bytes, p, sizeof(p));
		else
			snprintf(p, sizeof(p), "-");
		if (sp->fat_bytes)
			units_format_bytes(sp->fat_bytes, f, sizeof(f));
		else
			snprintf(f, sizeof(f), "none");
		printf("%-14s %8s %8s %8s %5u %5u %-10s %-16s %s\n", sp->name, s, e, p,
		       sp->open_au_linear, sp->open_au_random, f,
		       sim_capacity_truth(sp, cap, sizeof(cap)),
		       sp->description ? sp->description : "");
	}
	return FP_EXIT_OK;
}

/* The exit status for a failure of session_open() or of a device. */
static int status_for_error(int err, bool writing)
{
	switch (err) {
	case -FP_ENOCONSENT: case -EINVAL: case -ENOENT: case -EISDIR: case -ENOTBLK:
	case -ENOTDIR: case -ENAMETOOLONG: case -ELOOP:
		return FP_EXIT_USAGE;
	case -FP_EREFUSED: case -EXDEV: case -EBUSY: case -EROFS: case -EALREADY:
	case -ECANCELED:
		return FP_EXIT_REFUSED;
	case -FP_ELOST:
		return FP_EXIT_FAILURE;
	case -EACCES:
		return writing ? FP_EXIT_REFUSED : FP_EXIT_FAILURE;
	default:
		return FP_EXIT_FAILURE;
	}
}

/* One progress line per phase on stderr: shown once the phase has taken
 * a second, with percent and an estimate of the time left. */
static struct {
	const char *phase;
	uint64_t start_ns;
	bool shown;
} progress;

static void progress_line(void *arg, uint64_t done, uint64_t total)
{
	const char *phase = arg;
	uint64_t now = clock_now_ns(), elapsed;
	unsigned pct;

	if (progress.phase != phase) {
		if (progress.shown)
			fputc('\n', stderr);
		progress.phase = phase;
		progress.start_ns = now;
		progress.shown = false;
	}
	elapsed = now - progress.start_ns;
	if (!total || elapsed < 1000000000ULL)
		return;
	done = done < total ? done : total;
	pct = (unsigned)(100 * done / total);
	fprintf(stderr, "\r%s: %3u%%", phase, pct);
	if (done)
		fprintf(stderr, ", about %" PRIu64 " s left  ",
			(uint64_t)((double)elapsed * (double)(total - done) / (double)done / 1e9));
	progress.shown = true;
}

static void progress_done(void)
{
	if (progress.shown)
		fputc('\n', stderr);
	progress.phase = NULL;
	progress.shown = false;
}

static void probe_progress(void *arg, const char *phase, uint64_t done,
			   uint64_t total)
{
	(void)arg;
	progress_line((void *)phase, done, total);
}

static bool show_progress(const struct cli *c)
{
	return !c->quiet && !c->json && isatty(STDERR_FILENO);
}

static enum session_consent consent_of(const struct cli *c, bool writes)
{
	if (!writes)
		return SESSION_READ_ONLY;
	return c->write ? SESSION_WRITE : c->destructive ? SESSION_DESTRUCTIVE
							 : SESSION_NO_CONSENT;
}

static int open_session(const struct cli *c, const char *test, bool writes,
			struct session *s)
{
	struct session_opts o = {
		.device = c->spec,
		.test = test,
		.consent = consent_of(c, writes),
		.yes = c->yes,
		.journal = c->journal,
		.tty_in = isatty(STDIN_FILENO) ? stdin : NULL,
		.tty_out = isatty(STDIN_FILENO) ? stderr : NULL,
		.notes = stderr,
	};
	char err[512] = "";
	int ret = session_open(s, &o, err, sizeof(err));

	if (ret)
		return fail(status_for_error(ret, writes), "%s", err[0] ? err : strerror(-ret));
	return FP_EXIT_OK;
}

/* Restore (--write) before any report is printed: a report that cannot
 * be written must not cost the data.  A failed restore or a signal
 * decides the status; the report is printed only when it is 0. */
static int finish_session(struct session *s, int status)
{
	char err[512] = "";
	int sig;

	progress_done();
	if (session_finish(s, err, sizeof(err)))
		return fail(FP_EXIT_FAILURE, "%s", err);
	sig = session_interrupted();	/* also one that came during the restore */
	if (sig)
		return fail(safety_exit_status(sig), "interrupted by signal %d; %s", sig,
			    !s->bytes_written ? "nothing was written" :
			    s->consent == SESSION_WRITE ? "the data was restored" :
			    "stopped");
	return status;
}

/* A report that did not reach standard output (a full disk, a closed
 * pipe: SIGPIPE is ignored while a test writes) is a failure, never 0. */
static int report_status(int status)
{
	int e = fflush(stdout) ? errno : ferror(stdout) ? EIO : 0;

	if (e && status == FP_EXIT_OK)
		return fail(FP_EXIT_FAILURE, "cannot write the report to standard "
			    "output: %s", strerror(e));
	return status;
}

/* After the report: close the devices.  The report is flushed first,
 * while SIGPIPE is still ignored. */
static int close_session(struct session *s, int status)
{
	char err[512] = "";

	status = report_status(status);
	if (session_close(s, err, sizeof(err)))
		return fail(FP_EXIT_FAILURE, "%s", err);
	return status;
}

/* A test that failed: its reason, unless a signal stopped it (the
 * interruption is reported once, after the restore). */
static int test_failed(const char *test, const struct cli *c, int ret,
		       const char *err)
{
	if (ret == -EINTR && session_interrupted())
		return FP_EXIT_FAILURE;
	return fail(FP_EXIT_FAILURE, "%s failed on '%s': %s", test, c->device,
		    err && err[0] ? err : strerror(-ret));
}

/* --svg=-: standard output carries the chart alone; what the commands
 * print there (the report) goes to standard error instead. */
static FILE *svg_stdout;

static int claim_stdout_for_svg(void)
{
	int fd = dup(STDOUT_FILENO);

	fflush(stdout);
	if (fd < 0 || !(svg_stdout = fdopen(fd, "w")) ||
	    dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return fail(FP_EXIT_FAILURE, "cannot set up --svg=-: %s", strerror(errno));
	return FP_EXIT_OK;
}

/* The chart of what ran, when --svg asked for one. */
static int write_svg(const struct cli *c, const struct svg_evidence *e)
{
	bool to_stdout = !strcmp(c->svg, "-");
	FILE *f = to_stdout ? svg_stdout : fopen(c->svg, "w");
	int ret;

	if (!f)
		return fail(FP_EXIT_FAILURE, "cannot write '%s': %s", c->svg, strerror(errno));
	ret = svg_write(f, e);
	if (fclose(f) || ret)
		return fail(FP_EXIT_FAILURE, "cannot write '%s'", c->svg);
	return FP_EXIT_OK;
}

static void begin_json(struct json_writer *w, struct fp_dev *d)
{
	json_init(w, stdout);
	json_object_begin(w, NULL);
	report_device_json(w, d);
}

static void end_json(struct json_writer *w)
{
	json_object_end(w);
	json_end(w);
}

static void fill_align_opts(const struct cli *c, struct align_opts *o)
{
	align_opts_default(o);
	o->blocksize_bytes = c->blocksize_bytes;
	if (c->count)
		o->max_repeats = (unsigned)c->count;
	if (c->seed_set)
		o->seed = c->seed;
	if (show_progress(c)) {
		o->progress = progress_line;
		o->progress_arg = "align";
	}
}

static int align_error(const struct cli *c, int ret)
{
	if (ret == -EINTR && session_interrupted())
		return FP_EXIT_FAILURE;	/* reported after the restore */
	if (ret == -EINVAL)
		return fail(FP_EXIT_USAGE, "'%s' is too small for blocksize %" PRIu64
			    " or the blocksize is not a multiple of two sectors",
			    c->device, c->blocksize_bytes);
	return fail(FP_EXIT_FAILURE, "read failed on '%s': %s", c->device,
		    strerror(-ret));
}

static void print_align(const struct cli *c, struct fp_dev *d,
			const struct align_result *r)
{
	if (c->json) {
		struct json_writer w;

		begin_json(&w, d);
		report_align_json(&w, r);
		end_json(&w);
	} else if (c->flashbench) {
		report_align_flashbench(stdout, r);
	} else {
		report_device_text(stdout, d);
		report_align_text(stdout, r);
	}
}

static int run_align(const struct cli *c)
{
	struct align_opts o;
	struct align_result *r = calloc(1, sizeof(*r));
	struct session s;
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	ret = open_session(c, "align", false, &s);
	if (ret) {
		free(r);
		return ret;
	}
	fill_align_opts(c, &o);
	ret = align_run(s.dev, &o, r);
	ret = finish_session(&s, ret ? align_error(c, ret) : FP_EXIT_OK);
	if (!ret)
		print_align(c, s.dev, r);
	if (!ret && c->svg)
		ret = write_svg(c, &(struct svg_evidence){ .title = c->device, .align = r });
	free(r);
	return close_session(&s, ret);
}

/* The erase size write tests need: given, or measured read-only first. */
/* The read test found no erase block: the write-based AU search, in its
 * own announced area (the session allows writes: these are write tests).
 * Exit 4 only when it is undetermined too. */
static int au_from_writes(const struct cli *c, struct session *s,
			  const char *why, uint64_t *out)
{
	struct auwrite_result *r = calloc(1, sizeof(*r));
	struct auwrite_opts o;
	struct auwrite_plan plan;
	char err[512] = "", buf[32];
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	auwrite_opts_default(&o);
	if (show_progress(c)) {
		o.progress = progress_line;
		o.progress_arg = "au-search";
	}
	ret = auwrite_plan(fp_dev_size_bytes(s->dev), fp_dev_sector_bytes(s->dev), &o, &plan);
	if (!ret)
		ret = session_protect(s, "au-search", plan.start_bytes, plan.end_bytes,
				      plan.max_bytes, true, err, sizeof(err));
	if (!ret)
		ret = auwrite_run(s->dev, &o, &plan, r);
	*out = r->au_bytes;
	if (ret == -ENOSPC)
		ret = fail(FP_EXIT_UNDETERMINED, "the alignment test could not determine "
			   "the erase-block size of '%s' (%s) and the device is too small "
			   "for the write-based AU search: give --erasesize", c->device, why);
	else if (ret)
		ret = test_failed("au-search", c, ret, err);
	else if (!*out)
		ret = fail(FP_EXIT_UNDETERMINED, "neither the alignment test (%s) nor the "
			   "write-based AU search (%s) could determine the AU of '%s': give "
			   "--erasesize", why, r->note, c->device);
	else if (!c->quiet)
		fprintf(stderr, "flashprobe: AU %s measured by the write-based AU search "
			"(confidence %.2f; the read test found no erase block)\n",
			units_format_bytes(*out, buf, sizeof(buf)), r->confidence);
	free(r);
	return ret;
}

static int erase_size_for(const struct cli *c, struct session *s, uint64_t *out)
{
	struct align_opts o;
	struct align_result *r;
	char buf[32];
	int ret;

	if (c->erase_bytes) {
		*out = c->erase_bytes;
		return FP_EXIT_OK;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	fill_align_opts(c, &o);
	o.blocksize_bytes = 0;
	ret = align_run(s->dev, &o, r);
	*out = r->erase_size_bytes;
	if (ret)
		ret = align_error(c, ret);
	else if (!*out)
		ret = au_from_writes(c, s, r->note[0] ? r->note : "no clear step", out);
	else if (!c->quiet)
		fprintf(stderr, "flashprobe: erase block %s measured by the alignment "
			"test (confidence %.2f)\n",
			units_format_bytes(*out, buf, sizeof(buf)), r->erase_confidence);
	free(r);
	return ret;
}

/* Name the size that made a write test's plan impossible. */
static int plan_error(const struct cli *c, struct fp_dev *d, uint64_t erase,
		      uint64_t blocksize, int ret)
{
	uint32_t sector = fp_dev_sector_bytes(d);
	char e[32], b[32];

	units_format_bytes(erase, e, sizeof(e));
	units_format_bytes(blocksize, b, sizeof(b));
	if (ret == -ENOSPC)
		return fail(FP_EXIT_USAGE, "'%s' is too small for this test with a %s "
			    "erase size%s", c->device, e,
			    c->offset_set ? " at this offset" : "");
	if (erase % sector)
		return fail(FP_EXIT_USAGE, "erasesize %s is not a multiple of the "
			    "%u-byte sector of '%s'", e, sector, c->device);
	if (blocksize && (blocksize > erase || erase % blocksize))
		return fail(FP_EXIT_USAGE, "blocksize %s does not divide erasesize %s",
			    b, e);
	if (blocksize % sector)
		return fail(FP_EXIT_USAGE, "blocksize %s is not a multiple of the "
			    "%u-byte sector of '%s'", b, sector, c->device);
	if (c->offset_set && c->offset_bytes % sector)
		return fail(FP_EXIT_USAGE, "offset %" PRIu64 " is not a multiple of the "
			    "%u-byte sector", c->offset_bytes, sector);
	return fail(FP_EXIT_USAGE, "erasesize %s is too small for this test on '%s'",
		    e, c->device);
}

static void print_open_au(const struct cli *c, struct fp_dev *d,
			  const struct openau_result *r)
{
	if (c->json) {
		struct json_writer w;

		begin_json(&w, d);
		report_openau_json(&w, r);
		end_json(&w);
	} else if (c->flashbench || r->manual) {
		report_openau_flashbench(stdout, r);
	} else {
		report_device_text(stdout, d);
		report_openau_text(stdout, r);
	}
}

static int run_open_au(const struct cli *c)
{
	struct openau_opts o;
	struct openau_plan plan;
	struct openau_result *r = calloc(1, sizeof(*r));
	struct session s;
	char err[512] = "";
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	ret = open_session(c, "open-au", true, &s);
	if (ret) {
		free(r);
		return ret;
	}
	openau_opts_default(&o);
	o.open_au_nr = (unsigned)c->open_au_nr;
	o.blocksize_bytes = c->blocksize_bytes;
	o.random = c->random;
	o.offset_set = c->offset_set;
	o.offset_bytes = c->offset_bytes;
	if (c->max_open)
		o.max_open = (unsigned)c->max_open;
	if (c->seed_set)
		o.seed = c->seed;
	if (show_progress(c)) {
		o.progress = progress_line;
		o.progress_arg = "open-au";
	}
	ret = erase_size_for(c, &s, &o.erase_size_bytes);
	if (ret)
		goto out;
	ret = openau_plan(s.dev, &o, &plan);
	if (ret) {
		ret = plan_error(c, s.dev, o.erase_size_bytes, o.blocksize_bytes, ret);
		goto out;
	}
	ret = session_protect(&s, "open-au", plan.start_bytes, plan.end_bytes,
			      plan.max_bytes, true, err, sizeof(err));
	if (!ret)
		ret = openau_run(s.dev, &o, &plan, r);
	if (ret)
		ret = test_failed("open-au", c, ret, err);
out:
	ret = finish_session(&s, ret);
	if (!ret)
		print_open_au(c, s.dev, r);
	if (!ret && c->svg)
		ret = write_svg(c, &(struct svg_evidence){ .title = c->device, .openau = r });
	free(r);
	return close_session(&s, ret);
}

static void print_find_fat(const struct cli *c, struct fp_dev *d,
			   const struct findfat_result *r)
{
	if (c->json) {
		struct json_writer w;

		begin_json(&w, d);
		report_findfat_json(&w, r);
		end_json(&w);
	} else if (c->flashbench || r->mode == FINDFAT_MANUAL) {
		report_findfat_flashbench(stdout, r);
	} else {
		report_device_text(stdout, d);
		report_findfat_text(stdout, r);
	}
}

static int run_find_fat(const struct cli *c)
{
	struct findfat_opts o;
	struct findfat_plan plan;
	struct findfat_result *r = calloc(1, sizeof(*r));
	struct session s;
	char err[512] = "";
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	ret = open_session(c, "find-fat", true, &s);
	if (ret) {
		free(r);
		return ret;
	}
	findfat_opts_default(&o);
	o.mode = c->manual || c->flashbench_form ? FINDFAT_MANUAL : FINDFAT_AUTO;
	o.blocksize_bytes = c->blocksize_bytes;
	o.units = (unsigned)c->fat_nr;
	o.random = c->random;
	if (c->seed_set)
		o.seed = c->seed;
	if (show_progress(c)) {
		o.progress = progress_line;
		o.progress_arg = "find-fat";
	}
	ret = erase_size_for(c, &s, &o.erase_size_bytes);
	if (ret)
		goto out;
	ret = findfat_plan(&o, fp_dev_size_bytes(s.dev), fp_dev_sector_bytes(s.dev), &plan);
	if (ret) {
		ret = plan_error(c, s.dev, o.erase_size_bytes, o.blocksize_bytes, ret);
		goto out;
	}
	ret = session_protect(&s, "find-fat", plan.start_bytes, plan.end_bytes,
			      plan.max_write_bytes, true, err, sizeof(err));
	if (!ret)
		ret = findfat_run(s.dev, &o, r);
	if (ret)
		ret = test_failed("find-fat", c, ret, err);
out:
	ret = finish_session(&s, ret);
	if (!ret)
		print_find_fat(c, s.dev, r);
	if (!ret && c->svg)
		ret = write_svg(c, &(struct svg_evidence){ .title = c->device, .findfat = r });
	free(r);
	return close_session(&s, ret);
}

static void fill_capacity_opts(const struct cli *c, struct capacity_opts *o)
{
	capacity_opts_default(o);
	if (c->cache_set)
		o->cache_bytes = c->cache_bytes;
	if (c->seed_set)
		o->nonce = stats_hash64(c->seed);
	if (show_progress(c)) {
		o->progress = progress_line;
		o->progress_arg = "capacity";
	}
}

static void print_capacity(const struct cli *c, struct fp_dev *d,
			   const struct capacity_result *r)
{
	if (c->json) {
		struct json_writer w;

		begin_json(&w, d);
		report_capacity_json(&w, r);
		end_json(&w);
	} else {
		report_device_text(stdout, d);
		report_capacity_text(stdout, r, c->device);
	}
}

/* Writes over the whole device, sparsely: each 1 MiB block is backed up
 * before its first write (--write). */
static int run_capacity(const struct cli *c)
{
	struct capacity_result *r = calloc(1, sizeof(*r));
	struct capacity_opts o;
	struct capacity_plan plan;
	struct session s;
	char err[512] = "";
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	ret = open_session(c, "capacity", true, &s);
	if (ret) {
		free(r);
		return ret;
	}
	fill_capacity_opts(c, &o);
	ret = capacity_plan(fp_dev_size_bytes(s.dev), fp_dev_sector_bytes(s.dev), &o, &plan);
	if (ret) {
		ret = fail(FP_EXIT_USAGE, "'%s' is too small for the capacity check "
			   "(at least 2MiB)", c->device);
		goto out;
	}
	ret = session_protect(&s, "capacity", plan.start_bytes, plan.end_bytes,
			      plan.max_bytes, true, err, sizeof(err));
	if (!ret)
		ret = capacity_run(s.dev, &o, &plan, r);
	s.may_alias = r->aliasing_seen;
	if (ret)
		ret = test_failed("capacity", c, ret, err);
out:
	ret = finish_session(&s, ret);
	if (!ret)
		print_capacity(c, s.dev, r);
	free(r);
	return close_session(&s, ret);
}

static int protect_area(void *arg, const char *test, uint64_t start,
			uint64_t end, uint64_t max_bytes)
{
	char err[512] = "";
	/* the probe's write tests both touch a few AUs of a large area */
	int ret = session_protect(arg, test, start, end, max_bytes, true, err,
				  sizeof(err));

	if (ret && !(ret == -EINTR && session_interrupted()))
		fprintf(stderr, "flashprobe: cannot prepare %s: %s\n", test,
			err[0] ? err : strerror(-ret));
	return ret;
}

static void print_probe(const struct cli *c, struct fp_dev *d,
			const struct probe_result *r)
{
	if (c->json) {
		struct json_writer w;

		json_init(&w, stdout);
		json_object_begin(&w, NULL);
		report_probe_json(&w, d, r);
		json_object_end(&w);
		json_end(&w);
	} else {
		report_probe_text(stdout, d, r);
	}
}

/* The whole job.  Write tests run when allowed: --write, --destructive,
 * or a simulated card (nothing to lose); else only the read-only part. */
static int run_probe(const struct cli *c)
{
	bool writes = c->write || c->destructive || is_simulated(c->device);
	struct probe_result *r = calloc(1, sizeof(*r));
	struct probe_opts o = { 0 };
	struct session s;
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	ret = open_session(c, "probe", writes, &s);
	if (ret) {
		free(r);
		return ret;
	}
	o.device = c->device;
	o.sysfs_root = "/sys";
	o.writes_allowed = writes;
	o.quick = c->quick;
	o.erase_bytes = c->erase_bytes;
	o.cache_set = c->cache_set;
	o.cache_bytes = c->cache_bytes;
	o.seed = c->seed;
	o.seed_set = c->seed_set;
	o.protect = protect_area;
	o.protect_arg = &s;
	if (show_progress(c))
		o.progress = probe_progress;
	ret = probe_run(s.dev, &o, r);
	s.may_alias = r->capacity.aliasing_seen;
	progress_done();
	ret = finish_session(&s, ret ? test_failed("probe", c, ret, NULL) : FP_EXIT_OK);
	if (!ret)
		print_probe(c, s.dev, r);
	if (!ret && c->svg)	/* after the restore, like the report */
		ret = write_svg(c, &(struct svg_evidence){
			.title = c->device, .align = &r->align,
			.openau = r->openau_done ? &r->openau : NULL,
			.findfat = r->findfat_done ? &r->fat : NULL });
	free(r);
	return close_session(&s, ret);
}

static int bench_options(const struct cli *c, struct fp_dev *d,
			 struct benchio_opts *o)
{
	benchio_opts_default(o);
	if (c->workloads && benchio_workloads_parse(c->workloads, &o->workloads))
		return fail(FP_EXIT_USAGE, "workload list '%s' names an unknown workload "
			    "(seq_read, seq_write, rand_read, rand_write, all)", c->workloads);
	if (benchio_plan_area(fp_dev_size_bytes(d), fp_dev_sector_bytes(d),
			      c->erase_bytes, 0, &o->offset_bytes, &o->size_bytes))
		return fail(FP_EXIT_USAGE, "'%s' is too small for the default test area: "
			    "give --offset and --size", c->device);
	if (c->offset_set)
		o->offset_bytes = c->offset_bytes;
	if (c->size_bytes)
		o->size_bytes = c->size_bytes;
	if (o->offset_bytes % fp_dev_sector_bytes(d) || o->size_bytes % fp_dev_sector_bytes(d) ||
	    o->offset_bytes + o->size_bytes > fp_dev_size_bytes(d) ||
	    o->offset_bytes + o->size_bytes < o->offset_bytes)
		return fail(FP_EXIT_USAGE, "the test area must be sector aligned and inside "
			    "'%s'", c->device);
	if (c->runtime_ms)
		o->runtime_ns = c->runtime_ms * 1000000ULL;
	if (c->warmup_set)
		o->warmup_ns = c->warmup_ms * 1000000ULL;
	if (c->repeat)
		o->repeats = (unsigned)c->repeat;
	if (c->seed_set)
		o->seed = c->seed;
	o->constant_fill = fp_dev_kind(d) == FP_DEV_SIM;
	if (show_progress(c)) {
		o->progress = progress_line;
		o->progress_arg = "bench";
	}
	return FP_EXIT_OK;
}

/* Reads always; writes with --write, --destructive, or on a simulated
 * card unless --read-only. */
static int run_bench(const struct cli *c)
{
	bool writes = !c->read_only &&
		      (c->write || c->destructive || is_simulated(c->device));
	struct benchio_result *r = calloc(1, sizeof(*r));
	struct benchio_opts o;
	struct session s;
	char err[512] = "";
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	if (c->read_only && (c->write || c->destructive)) {
		free(r);
		return usage_error("%s: choose one", "--read-only and --write/--destructive");
	}
	ret = open_session(c, "bench", writes, &s);
	if (ret) {
		free(r);
		return ret;
	}
	ret = bench_options(c, s.dev, &o);
	o.allow_writes = writes;
	if (!ret && writes && (ret = session_protect(&s, "bench", o.offset_bytes,
						     o.offset_bytes + o.size_bytes,
						     o.size_bytes, false, err, sizeof(err))))
		ret = fail(FP_EXIT_FAILURE, "cannot prepare bench: %s", err);
	if (!ret && (ret = benchio_run(s.dev, &o, r)))
		ret = test_failed("bench", c, ret, NULL);
	ret = finish_session(&s, ret);
	if (!ret && c->json) {
		struct json_writer w;

		begin_json(&w, s.dev);
		report_bench_json(&w, r);
		end_json(&w);
	} else if (!ret) {
		report_device_text(stdout, s.dev);
		report_bench_text(stdout, r);
	}
	if (!ret && c->svg)
		ret = write_svg(c, &(struct svg_evidence){ .title = c->device, .bench = r });
	free(r);
	return close_session(&s, ret);
}

/* A replay that was refused (the journal of another device, a file that
 * could have been planted) is a safety refusal; any other failure keeps
 * the journal and is a runtime failure. */
static int restore_status(int ret)
{
	return ret == -FP_EREFUSED ? FP_EXIT_REFUSED : FP_EXIT_FAILURE;
}

/* restore JOURNAL or restore DEVICE (its pending journal).  Signals do
 * not stop a replay: they only print its progress (see safety.h), and the
 * status says 128+N once it is done. */
static int run_restore(const struct cli *c)
{
	char journal[PATH_MAX], device[PATH_MAX], err[512] = "";
	struct journal_restore_report rep;
	struct stat st;
	struct fp_dev *d;
	int ret, sig;

	if ((ret = safety_signals_install()))
		return fail(FP_EXIT_FAILURE, "cannot install signal handlers: %s",
			    strerror(-ret));
	if (stat(c->device, &st) == 0 && S_ISDIR(st.st_mode))
		return fail(FP_EXIT_USAGE, "'%s' is a directory: restore expects a "
			    "journal file or a device", c->device);
	if (journal_is_journal_file(c->device)) {
		snprintf(journal, sizeof(journal), "%s", c->device);
		ret = journal_device_of(journal, device, sizeof(device), err, sizeof(err));
	} else {
		snprintf(device, sizeof(device), "%s", c->device);
		ret = journal_find_pending(device, journal, sizeof(journal), err, sizeof(err));
		if (ret == 0)
			return fail(FP_EXIT_OK, "no unfinished journal for '%s': nothing to restore",
				    device);
		ret = ret > 0 ? 0 : ret;
	}
	if (ret)
		return fail(status_for_error(ret, true), "%s", err[0] ? err : strerror(-ret));
	ret = fp_dev_open(device, FP_OPEN_WRITE, &d, err, sizeof(err));
	if (ret)
		return fail(status_for_error(ret, true), "%s", err);
	ret = journal_restore(journal, d, c->force ? JOURNAL_RESTORE_FORCE : 0,
			      safety_restore_note, device, &rep, err, sizeof(err));
	safety_restore_end();
	fp_dev_close(d);
	if (ret)
		return fail(restore_status(ret), "restore of '%s' from '%s' failed: %s",
			    device, journal, err[0] ? err : strerror(-ret));
	if (rep.nothing_written)
		printf("the test of '%s' had written nothing yet: nothing to restore; "
		       "%s\n", device, rep.deleted ? "the journal was deleted"
						    : "the journal was kept");
	else
		printf("restored %" PRIu64 " bytes of '%s' from '%s' and verified them; "
		       "%s\n", rep.restored_bytes, device, journal,
		       rep.deleted ? "the journal was deleted" : "the journal was kept");
	if (rep.note[0])
		printf("note: %s\n", rep.note);
	sig = safety_interrupted();
	if (sig)
		return fail(safety_exit_status(sig), "interrupted by signal %d; the "
			    "restore was finished first", sig);
	return FP_EXIT_OK;
}

/* The geometry the user gave: advise and check use no measurement. */
static void given_geometry(const struct cli *c, struct geometry *g)
{
	memset(g, 0, sizeof(*g));
	g->sector_bytes = 512;
	g->erase = (struct geo_size){ c->erase_bytes, 1.0, GEO_GIVEN };
	if (c->page_bytes)
		g->page = (struct geo_size){ c->page_bytes, 1.0, GEO_GIVEN };
	g->open_linear = g->open_random = (struct geo_count){ -1, false, 0, GEO_NONE };
	g->fat_tested = c->fat_area_set;
	g->fat_found = c->fat_area_bytes > 0;
	g->fat_size_bytes = c->fat_area_bytes;
	g->fat_confidence = 1.0;
}

/* advise: the Advice section from known numbers; the device, when given,
 * is only opened read-only for its size and sector size. */
static int run_advise(const struct cli *c)
{
	struct advice_request q = { c->size_bytes, c->label };
	struct advice *a = calloc(1, sizeof(*a));
	struct fp_dev *d = NULL;
	struct geometry g;
	char err[512] = "";
	int ret;

	if (!a)
		return fail(FP_EXIT_FAILURE, "out of memory");
	if (!c->erase_bytes || (!c->device && !c->size_bytes)) {
		free(a);
		return usage_error("%s", !c->erase_bytes ?
				   "advise needs --erasesize (measure it with 'flashprobe align DEVICE')" :
				   "advise needs a DEVICE or --size");
	}
	given_geometry(c, &g);
	if (c->device) {
		ret = fp_dev_open(c->spec, FP_OPEN_READ, &d, err, sizeof(err));
		if (ret) {
			free(a);
			return fail(status_for_error(ret, false), "%s", err);
		}
		g.device_bytes = fp_dev_size_bytes(d);
		g.sector_bytes = fp_dev_sector_bytes(d);
	}
	advice_compute_for(&g, &q, a);
	if (c->json) {
		struct json_writer w;

		json_init(&w, stdout);
		json_object_begin(&w, NULL);
		if (d)
			report_device_json(&w, d);
		else
			json_null(&w, "device");
		report_given_geometry_json(&w, &g);
		report_advice_json(&w, a);
		end_json(&w);
	} else {
		if (d)
			report_device_text(stdout, d);
		report_given_geometry_text(stdout, &g);
		report_advice_text(stdout, a, c->device ? c->device : "DEVICE");
	}
	if (d)
		fp_dev_close(d);
	free(a);
	return FP_EXIT_OK;
}

/* check's geometry: given, else the card's AU, else a read-only align run. */
static void check_geometry_of(const struct cli *c, struct fp_dev *d,
			      struct check_geometry *g)
{
	struct sysinfo *si = calloc(1, sizeof(*si));
	struct align_result *r = NULL;
	struct align_opts o;

	memset(g, 0, sizeof(*g));
	g->fat_area_bytes = c->fat_area_bytes;
	g->fat_source = c->fat_area_set ? GEO_GIVEN : GEO_NONE;
	g->erase_bytes = c->erase_bytes;
	g->erase_source = c->erase_bytes ? GEO_GIVEN : GEO_NONE;
	g->page_bytes = c->page_bytes;
	g->page_source = c->page_bytes ? GEO_GIVEN : GEO_NONE;
	if (!g->erase_bytes && si && fp_dev_kind(d) == FP_DEV_BLOCK &&
	    !sysinfo_read(c->device, "/sys", si) && si->au.present && si->au.bytes) {
		g->erase_bytes = si->au.bytes;
		g->erase_source = GEO_CARD;
	}
	free(si);
	if (g->erase_bytes && g->page_bytes)
		return;
	r = calloc(1, sizeof(*r));
	fill_align_opts(c, &o);
	if (r && !align_run(d, &o, r)) {
		if (!g->erase_bytes && r->erase_size_bytes) {
			g->erase_bytes = r->erase_size_bytes;
			g->erase_source = GEO_MEASURED;
		}
		if (!g->page_bytes && r->page_size_bytes) {
			g->page_bytes = r->page_size_bytes;
			g->page_source = GEO_MEASURED;
		}
	}
	free(r);
}

/* A partition device: its offset on the disk, its number and the disk's
 * path, from sysfs. */
static bool partition_of(const struct cli *c, struct fp_dev *d, uint64_t *offset,
			 unsigned *number, char *disk, size_t len)
{
	struct sysinfo *si = calloc(1, sizeof(*si));
	bool found = si && fp_dev_kind(d) == FP_DEV_BLOCK &&
		     !sysinfo_read(c->device, "/sys", si) && si->is_partition &&
		     !sysinfo_partition_start("/sys", si, offset, number);

	if (found)
		snprintf(disk, len, "/dev/%s", si->disk_name);
	free(si);
	return found;
}

/* check: read-only, allowed on a mounted card, no consent. */
static int run_check(const struct cli *c)
{
	struct check_result *r = calloc(1, sizeof(*r));
	struct check_geometry g;
	struct fp_dev *d;
	struct disk disk;
	uint64_t offset;
	unsigned number;
	char err[512] = "", disk_path[PATH_MAX] = "";
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	ret = fp_dev_open(c->spec, FP_OPEN_READ, &d, err, sizeof(err));
	if (ret) {
		free(r);
		return fail(status_for_error(ret, false), "%s", err);
	}
	check_geometry_of(c, d, &g);
	layoutcheck_disk_of(d, &disk);
	if (partition_of(c, d, &offset, &number, disk_path, sizeof(disk_path)))
		ret = layoutcheck_run_partition(&disk, &g, offset, number, r);
	else
		ret = layoutcheck_run(&disk, &g, r);
	if (ret) {
		ret = fail(FP_EXIT_FAILURE, "cannot read the layout of '%s': %s", c->device,
			   strerror(-ret));
	} else if (c->json) {
		struct json_writer w;

		begin_json(&w, d);
		report_check_json(&w, r);
		end_json(&w);
	} else {
		report_device_text(stdout, d);
		report_check_text(stdout, r, c->device, disk_path[0] ? disk_path : NULL);
	}
	fp_dev_close(d);
	free(r);
	return ret;
}

/* Why identify cannot describe DEVICE: bad input (exit 2) in one line. */
static int identify_error(const struct cli *c, const char *name, int err)
{
	if (c->sysfs_root && err == -ENOENT)
		return fail(FP_EXIT_USAGE, "'%s' is not in the sysfs tree '%s' (no "
			    "block/%s or class/block/%s)", c->device, c->sysfs_root,
			    name, name);
	if (err == -ENOTBLK)
		return fail(FP_EXIT_USAGE, "'%s' is not a block device, an image file "
			    "or a simulated card", c->device);
	if (err == -ENOENT && !c->sysfs_root)
		return fail(FP_EXIT_USAGE, "cannot identify '%s': no such device or "
			    "file (or sysfs does not know it)", c->device);
	return fail(status_for_error(err, false), "cannot identify '%s': %s",
		    c->device, strerror(-err));
}

/* Fill *si for identify; an exit status.  With --sysfs-root the device is
 * never touched: DEVICE's last path component names it in the tree. */
static int identify_read(const struct cli *c, struct sysinfo *si)
{
	const char *name = strrchr(c->device, '/');
	struct sim_profile p;
	struct stat st;
	char err[256];
	int ret;

	name = name ? name + 1 : c->device;
	if (c->sysfs_root && (stat(c->sysfs_root, &st) || !S_ISDIR(st.st_mode)))
		return fail(FP_EXIT_USAGE, "--sysfs-root '%s' is not a directory",
			    c->sysfs_root);
	if (is_simulated(c->device)) {
		if (sim_profile_parse(c->device, &p, err, sizeof(err)))
			return fail(FP_EXIT_USAGE, "%s", err);
		ret = sysinfo_read(c->device, "/sys", si);
	} else if (c->sysfs_root) {
		ret = sysinfo_read_name(name, c->sysfs_root, si);
	} else {
		ret = sysinfo_read(c->device, "/sys", si);
	}
	return ret ? identify_error(c, name, ret) : FP_EXIT_OK;
}

/* Read-only and untimed: sysfs and the card's registers only, so no
 * session, no consent, and a mounted card is fine. */
static int run_identify(const struct cli *c)
{
	struct sysinfo *si;
	int ret;

	if (c->write || c->destructive || c->svg || c->flashbench)
		return usage_error("%s", "identify only reads: --write, --destructive, "
				   "--svg and --flashbench do not apply");
	si = calloc(1, sizeof(*si));
	if (!si)
		return fail(FP_EXIT_FAILURE, "out of memory");
	ret = identify_read(c, si);
	if (!ret && c->json) {
		struct json_writer w;

		json_init(&w, stdout);
		json_object_begin(&w, NULL);
		sysinfo_json(&w, si);
		json_object_end(&w);
		json_end(&w);
	} else if (!ret) {
		sysinfo_text(stdout, si);
	}
	free(si);
	return ret;
}

static int run_command(const struct cli *c)
{
	switch (c->command) {
	case CMD_LIST_SIMS:
		return list_sims();
	case CMD_ALIGN:
		return run_align(c);
	case CMD_OPEN_AU:
		return run_open_au(c);
	case CMD_FIND_FAT:
		return run_find_fat(c);
	case CMD_PROBE:
		return run_probe(c);
	case CMD_BENCH:
		return run_bench(c);
	case CMD_RESTORE:
		return run_restore(c);
	case CMD_CAPACITY:
		return run_capacity(c);
	case CMD_ADVISE:
		return run_advise(c);
	case CMD_CHECK:
		return run_check(c);
	case CMD_IDENTIFY:
		return run_identify(c);
	default:
		return FP_EXIT_USAGE;
	}
}

/* Told when the first measurement starts, so that bad input is refused
 * before it. */
static void realtime_refused(void *arg)
{
	(void)arg;
	fprintf(stderr, "flashprobe: no real-time priority (needs root; "
		"--no-realtime silences this): timings may be noisier\n");
}

/* Real-time priority while timing unless --no-realtime; the notice of a
 * refusal unless -q. */
static void configure_realtime(const struct cli *c)
{
	struct fp_dev_rt_policy p = {
		.allowed = !c->no_realtime,
		.refused = c->quiet ? NULL : realtime_refused,
	};

	fp_dev_rt_configure(&p);
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	int ret = parse_args(argc, argv, &c);

	if (ret)
		return ret;
	if (c.svg && !strcmp(c.svg, "-") && (ret = claim_stdout_for_svg()))
		return ret;
	configure_realtime(&c);
	return report_status(run_command(&c));
}
