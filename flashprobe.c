/* flashprobe.c - command line: options, the safety gate, dispatch, exit
 * status.  The only file that prints to the user or exits. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "align.h"
#include "dev.h"
#include "json.h"
#include "report.h"
#include "sim.h"
#include "units.h"

#ifndef FLASHPROBE_VERSION
#define FLASHPROBE_VERSION "0.0.0"
#endif

/* Exit statuses, documented in flashprobe(1). */
enum fp_exit {
	FP_EXIT_OK = 0,
	FP_EXIT_FAILURE = 1,	/* I/O error or other runtime failure */
	FP_EXIT_USAGE = 2,	/* bad invocation or input; nothing written */
	FP_EXIT_REFUSED = 3,	/* refused for safety; nothing written */
};

enum fp_command {
	CMD_NONE,
	CMD_ALIGN,
	CMD_LIST_SIMS,
};

struct cli {
	enum fp_command command;
	const char *device;
	bool json;
	bool flashbench;
	bool quiet;
	uint64_t blocksize_bytes;
	uint64_t count;
	uint64_t seed;
	bool seed_set;
};

static const struct {
	const char *name;
	enum fp_command command;
} commands[] = {
	{ "align", CMD_ALIGN },
	{ "list-sims", CMD_LIST_SIMS },
};

static void usage(FILE *out)
{
	fputs("Usage: flashprobe COMMAND [OPTIONS] DEVICE\n"
	      "       flashprobe -a [OPTIONS] DEVICE\n"
	      "\n"
	      "Infer the geometry of an SD card, eMMC or USB stick by timing it.\n"
	      "DEVICE is a block device, an image file, or a simulated card\n"
	      "written sim:NAME[,key=value...] (see list-sims).\n"
	      "\n"
	      "Commands:\n"
	      "  align, -a           read-only: find the page and erase-block size\n"
	      "  list-sims           list the built-in simulated cards and their truth\n"
	      "\n"
	      "Options:\n"
	      "  -b, --blocksize=SIZE   size of each timed read (default 2 sectors, >= 1KiB)\n"
	      "  -c, --count=N          at most N reads per position (default 48)\n"
	      "      --seed=N           seed of the measurement order and of simulated noise\n"
	      "  -j, --json             one JSON document on stdout\n"
	      "      --flashbench       only flashbench's table\n"
	      "  -q, --quiet            no progress on stderr\n"
	      "  -h, --help             this help\n"
	      "  -V, --version          the version\n"
	      "\n"
	      "SIZE accepts 4194304, 0x400000, 4M, 4MiB.\n"
	      "Exit status: 0 done (also when a parameter is undetermined), 1 runtime\n"
	      "error, 2 bad usage, 3 refused for safety.\n"
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

static bool set_command(struct cli *c, enum fp_command cmd)
{
	if (c->command != CMD_NONE && c->command != cmd)
		return false;
	c->command = cmd;
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

	if (ret == -ERANGE) {
		fprintf(stderr, "flashprobe: %s '%s' is too large\n", name, arg);
		return FP_EXIT_USAGE;
	}
	if (ret || *out == 0) {
		fprintf(stderr, "flashprobe: %s '%s' is not a positive size\n",
			name, arg);
		return FP_EXIT_USAGE;
	}
	return FP_EXIT_OK;
}

static int parse_count_option(const char *name, const char *arg,
			      uint64_t max, uint64_t *out)
{
	if (units_parse_uint(arg, max, out) || *out == 0) {
		fprintf(stderr, "flashprobe: %s '%s' is not a number from 1 to %" PRIu64 "\n",
			name, arg, max);
		return FP_EXIT_USAGE;
	}
	return FP_EXIT_OK;
}

enum { OPT_SEED = 256, OPT_FLASHBENCH };

static int parse_args(int argc, char **argv, struct cli *c)
{
	static const struct option longopts[] = {
		{ "align", no_argument, NULL, 'a' },
		{ "blocksize", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "json", no_argument, NULL, 'j' },
		{ "flashbench", no_argument, NULL, OPT_FLASHBENCH },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":ab:c:jqhV", longopts, NULL)) != -1) {
		ret = FP_EXIT_OK;
		switch (opt) {
		case 'a':
			if (!set_command(c, CMD_ALIGN))
				return usage_error("%s conflicts with another command", "-a");
			break;
		case 'b':
			ret = parse_size_option("blocksize", optarg, &c->blocksize_bytes);
			break;
		case 'c':
			ret = parse_count_option("count", optarg, 1024, &c->count);
			break;
		case OPT_SEED:
			ret = units_parse_uint(optarg, UINT64_MAX, &c->seed) ?
			      usage_error("seed '%s' is not a number", optarg) : 0;
			c->seed_set = true;
			break;
		case 'j':
			c->json = true;
			break;
		case OPT_FLASHBENCH:
			c->flashbench = true;
			break;
		case 'q':
			c->quiet = true;
			break;
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
		if (ret)
			return ret;
	}
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
	if (c->json && c->flashbench)
		return usage_error("%s: choose one output format", "--json and --flashbench");
	if (c->command == CMD_NONE)
		return usage_error("%s", c->device ? "no command given (try 'align')"
						   : "no command and no device given");
	if (c->command != CMD_LIST_SIMS && !c->device)
		return usage_error("%s", "no device given");
	return FP_EXIT_OK;
}

static int list_sims(void)
{
	char e[32], p[32], s[32], f[32];

	printf("%-14s %8s %8s %8s %5s %5s %-10s %s\n", "name", "size", "erase",
	       "page", "open", "rand", "fat area", "description");
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
		printf("%-14s %8s %8s %8s %5u %5u %-10s %s\n", sp->name, s, e, p,
		       sp->open_au_linear, sp->open_au_random, f,
		       sp->description ? sp->description : "");
	}
	return FP_EXIT_OK;
}

/* A device spec with the seed option folded in for simulated cards. */
static int open_device(const struct cli *c, enum fp_open_mode mode,
		       struct fp_dev **d)
{
	char spec[4096], err[512];
	int ret;

	if (c->seed_set && !strncmp(c->device, "sim:", 4))
		snprintf(spec, sizeof(spec), "%s,seed=%" PRIu64, c->device, c->seed);
	else
		snprintf(spec, sizeof(spec), "%s", c->device);
	ret = fp_dev_open(spec, mode, d, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "flashprobe: %s\n", err);
		return ret == -EINVAL || ret == -ENOENT || ret == -ENOTDIR ||
		       ret == -EISDIR || ret == -ENOTBLK ? FP_EXIT_USAGE : FP_EXIT_FAILURE;
	}
	return FP_EXIT_OK;
}

static void progress_line(void *arg, uint64_t done, uint64_t total)
{
	const char *phase = arg;

	fprintf(stderr, "\r%s: %3u%%", phase, (unsigned)(100 * done / total));
	if (done >= total)
		fputc('\n', stderr);
}

static bool show_progress(const struct cli *c)
{
	return !c->quiet && !c->json && isatty(STDERR_FILENO);
}

static int run_align(const struct cli *c)
{
	struct align_opts o;
	struct align_result *r;
	struct fp_dev *d;
	int ret = open_device(c, FP_OPEN_READ, &d);

	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r) {
		fp_dev_close(d);
		fprintf(stderr, "flashprobe: out of memory\n");
		return FP_EXIT_FAILURE;
	}
	align_opts_default(&o);
	o.blocksize_bytes = c->blocksize_bytes;
	if (c->count)
		o.max_repeats = (unsigned)c->count;
	if (c->seed_set)
		o.seed = c->seed;
	if (show_progress(c)) {
		o.progress = progress_line;
		o.progress_arg = "align";
	}
	if (fp_dev_kind(d) != FP_DEV_SIM && !fp_dev_boost_priority(d) && !c->json)
		fprintf(stderr, "flashprobe: no real-time priority (needs root): timings may be noisier\n");
	ret = align_run(d, &o, r);
	if (ret == -EINVAL) {
		fprintf(stderr, "flashprobe: '%s' is too small for blocksize %" PRIu64
			" or the blocksize is not a multiple of two sectors\n",
			c->device, c->blocksize_bytes);
		ret = FP_EXIT_USAGE;
	} else if (ret) {
		fprintf(stderr, "flashprobe: read failed on '%s': %s\n", c->device,
			strerror(-ret));
		ret = FP_EXIT_FAILURE;
	} else if (c->json) {
		struct json_writer w;

		json_init(&w, stdout);
		json_object_begin(&w, NULL);
		report_device_json(&w, d);
		report_align_json(&w, r);
		json_object_end(&w);
		json_end(&w);
	} else if (c->flashbench) {
		report_align_flashbench(stdout, r);
	} else {
		report_device_text(stdout, d);
		report_align_text(stdout, r);
	}
	free(r);
	fp_dev_close(d);
	return ret;
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	int ret = parse_args(argc, argv, &c);

	if (ret)
		return ret;
	switch (c.command) {
	case CMD_LIST_SIMS:
		return list_sims();
	case CMD_ALIGN:
		return run_align(&c);
	default:
		return FP_EXIT_USAGE;
	}
}
