/* flashprobe.c - command line: options, dispatch, exit status.  The only
 * file that exits; commands print their reports here. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "align.h"
#include "cliopts.h"
#include "auwrite.h"
#include "clock.h"
#include "benchio.h"
#include "capacity.h"
#include "dev.h"
#include "devspec.h"
#include "errmsg.h"
#include "findfat.h"
#include "journal.h"
#include "layoutcheck.h"
#include "json.h"
#include "openau.h"
#include "outfile.h"
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

struct cli {
	enum fp_command command;
	bool flashbench_form;		/* invoked as -a, -O or -f */
	const char *device;
	bool json, flashbench, quiet, quick, read_only, no_realtime, help;
	bool given[CLIOPTS_MAX];	/* by cliopts index: what was typed */
	const char *help_topic;		/* help COMMAND */
	const char *svg;
	bool write, destructive, yes, force, overwrite_newer, manual, random;
	const char *journal;
	uint64_t blocksize_bytes, erase_bytes, offset_bytes;
	bool offset_set;
	uint64_t count, seed, open_au_nr, max_open, fat_nr;
	uint64_t size_bytes, repeat, runtime_ns, warmup_ns;
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

/* One progress line per phase on stderr (a terminal only: show_progress()):
 * shown once the phase has taken a second, with percent and an estimate of
 * the time left, and wiped before anything else is printed, so that no
 * note, error or report starts after it. */
static struct {
	const char *phase;
	uint64_t start_ns;
	int width;		/* of the line shown, 0 when none is */
} progress;

static void progress_done(void)
{
	if (progress.width)
		fprintf(stderr, "\r%*s\r", progress.width, "");
	progress.phase = NULL;
	progress.width = 0;
}

static void progress_line(void *arg, uint64_t done, uint64_t total)
{
	const char *phase = arg;
	uint64_t now = clock_now_ns(), elapsed;
	int n;

	if (progress.phase != phase) {
		progress_done();
		progress.phase = phase;
		progress.start_ns = now;
	}
	elapsed = now - progress.start_ns;
	if (!total || elapsed < 1000000000ULL)
		return;
	done = done < total ? done : total;
	n = fprintf(stderr, "\r%s: %3u%%", phase, (unsigned)(100 * done / total));
	if (done)
		n += fprintf(stderr, ", about %" PRIu64 " s left  ",
			     (uint64_t)((double)elapsed * (double)(total - done) /
					(double)done / 1e9));
	progress.width = n > progress.width ? n : progress.width;
}

/* "flashprobe: " and the message on one line of stderr: what the user
 * typed or a file is named is in it, control characters shown as \xNN. */
static void put_message(const char *fmt, va_list ap)
{
	char msg[3 * PATH_MAX];	/* two paths and the words around them */

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fputs("flashprobe: ", stderr);
	util_fputs_visible(msg, stderr);
	fputc('\n', stderr);
}

static void put_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void put_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
}

static int usage_error(const char *fmt, const char *arg)
{
	put_line(fmt, arg);
	fprintf(stderr, "Try 'flashprobe --help' for more information.\n");
	return FP_EXIT_USAGE;
}

static int fail(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const struct cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(int status, const char *fmt, ...)
{
	va_list ap;

	progress_done();
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	return status;
}

/* A note on stderr, on a line of its own, unless -q. */
static void note(const struct cli *c, const char *fmt, ...)
{
	va_list ap;

	if (c->quiet)
		return;
	progress_done();
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
}

static bool set_command(struct cli *c, enum fp_command cmd, bool flashbench_form)
{
	if (c->command != CMD_NONE && c->command != cmd)
		return false;
	c->command = cmd;
	c->flashbench_form |= flashbench_form;
	return true;
}

/* units_parse_size(), and for "4MB" the spelling to use instead: MB
 * means 10^6 to some tools and 2^20 to others, and guessing could
 * misplace a boundary; flashprobe's units are binary. */
static int parse_size_arg(const char *name, const char *arg, uint64_t *out)
{
	size_t digits = strspn(arg, "0123456789");

	if (units_is_decimal_size(arg)) {
		char unit = (char)(arg[digits] & ~0x20);	/* k -> K */

		fail(FP_EXIT_USAGE, "%s '%s': use %.*s%c or %.*s%ciB (binary units)", name,
		     arg, (int)digits, arg, unit, (int)digits, arg, unit);
		return -EDOM;
	}
	return units_parse_size(arg, out);
}

static int parse_size_option(const char *name, const char *arg, uint64_t *out)
{
	int ret = parse_size_arg(name, arg, out);

	if (ret == -EDOM)
		return FP_EXIT_USAGE;	/* told */
	if (ret == -ERANGE)
		return fail(FP_EXIT_USAGE, "%s '%s' is too large", name, arg);
	if (ret && strchr(arg, '.'))
		return fail(FP_EXIT_USAGE, "%s '%s' is not a whole number of bytes", name, arg);
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

/* The longest --runtime or --warmup: a day; a runtime of less than 1ms
 * measures nothing. */
#define MAX_DURATION_NS (86400 * UINT64_C(1000000000))
#define MIN_RUNTIME_NS UINT64_C(1000000)

/* A duration in seconds, or with a unit (500ms, 1.5s), into ns. */
static int parse_duration_option(const char *name, const char *arg, bool zero_ok,
				 uint64_t *ns)
{
	int ret = units_parse_duration(arg, UINT64_C(1000000000), ns);

	if (ret == -EINVAL)
		return fail(FP_EXIT_USAGE, "%s '%s' is not a duration (e.g. 3, 3s, "
			    "500ms)", name, arg);
	if (ret || *ns > MAX_DURATION_NS || (*ns < MIN_RUNTIME_NS && !zero_ok))
		return fail(FP_EXIT_USAGE, "%s '%s' is out of range (%s to 86400s)",
			    name, arg, zero_ok ? "0" : "1ms");
	return FP_EXIT_OK;
}

/* One option; returns an exit status (FP_EXIT_OK to go on). */
static int parse_option(struct cli *c, int opt, const char *arg)
{
	int ret;

	switch (opt) {
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
		if ((ret = parse_size_arg("offset", arg, &c->offset_bytes)))
			return ret == -EDOM ? FP_EXIT_USAGE :
			       fail(FP_EXIT_USAGE, "offset '%s' is not a size", arg);
		return FP_EXIT_OK;
	case OPT_SEED:
		c->seed_set = true;
		if (units_parse_uint(arg, UINT64_MAX, &c->seed))
			return usage_error("seed '%s' is not a number", arg);
		return FP_EXIT_OK;
	case 'r': c->random = true; return FP_EXIT_OK;
	case OPT_MANUAL: c->manual = true; return FP_EXIT_OK;
	case OPT_WRITE: c->write = true; return FP_EXIT_OK;
	case OPT_DESTRUCTIVE: c->destructive = true; return FP_EXIT_OK;
	case 'y': c->yes = true; return FP_EXIT_OK;
	case OPT_JOURNAL: c->journal = arg; return FP_EXIT_OK;
	case OPT_FORCE: c->force = true; return FP_EXIT_OK;
	case OPT_OVERWRITE_NEWER: c->overwrite_newer = true; return FP_EXIT_OK;
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
		if ((ret = parse_size_arg("cache-size", arg, &c->cache_bytes)) ||
		    c->cache_bytes > CAPACITY_MAX_CACHE_BYTES)
			return ret == -EDOM ? FP_EXIT_USAGE :
			       fail(FP_EXIT_USAGE, "cache-size '%s' is not a size up to 1GiB", arg);
		return FP_EXIT_OK;
	case OPT_REPEAT:
		return parse_count_option("repeat", arg, BENCHIO_MAX_REPEATS, &c->repeat);
	case OPT_RUNTIME:
		return parse_duration_option("runtime", arg, false, &c->runtime_ns);
	case OPT_WARMUP:
		c->warmup_set = true;
		return parse_duration_option("warmup", arg, true, &c->warmup_ns);
	case OPT_PAGE:
		return parse_size_option("page", arg, &c->page_bytes);
	case OPT_FAT_AREA:
		c->fat_area_set = true;
		if ((ret = parse_size_arg("fat-area", arg, &c->fat_area_bytes)))
			return ret == -EDOM ? FP_EXIT_USAGE :
			       fail(FP_EXIT_USAGE, "fat-area '%s' is not a size", arg);
		return FP_EXIT_OK;
	case OPT_LABEL:
		if (strcmp(arg, "dos") && strcmp(arg, "gpt"))
			return usage_error("label '%s' is not dos or gpt", arg);
		c->label = strcmp(arg, "dos") ? ADVICE_LABEL_GPT : ADVICE_LABEL_DOS;
		return FP_EXIT_OK;
	case 'j': c->json = true; return FP_EXIT_OK;
	case OPT_FLASHBENCH: c->flashbench = true; return FP_EXIT_OK;
	case 'q': c->quiet = true; return FP_EXIT_OK;
	default:
		return fail(FP_EXIT_FAILURE, "option %d is in the table but not parsed "
			    "(a bug)", opt);
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

/* Before anything is opened: a file that is not the device under test
 * (or on it) and that can be written (the command is one that draws:
 * cliopts' table). */
static int check_svg(const struct cli *c)
{
	char err[512] = "";

	if (!strcmp(c->svg, "-"))
		return c->json ? usage_error("%s: both want standard output",
					     "--json and --svg=-") : FP_EXIT_OK;
	if (c->device && safety_check_output("--svg", c->svg, c->device, err, sizeof(err)))
		return fail(FP_EXIT_USAGE, "%s", err);
	if (outfile_check("--svg", c->svg, c->device, err, sizeof(err)))
		return fail(FP_EXIT_USAGE, "%s", err);
	return check_svg_path(c->svg);
}

/* Every option typed applies to the command (the table in cliopts.c):
 * an ignored option would leave the user believing it took effect. */
static int check_applicable(const struct cli *c)
{
	char why[512];

	for (int i = 0; i < CLIOPTS_MAX; i++)
		if (c->given[i] && !cliopts_applies(i, c->command)) {
			cliopts_refusal(i, c->command, why, sizeof(why));
			return usage_error("%s", why);
		}
	return FP_EXIT_OK;
}

/* Standard output and error must not be the device under test (a
 * shell's `>/dev/sdb` or `2>>card.img`): the report and the notes would
 * be written onto it, after the restore.  When standard error is the
 * device, it is pointed at /dev/null first and the refusal goes to
 * standard output, when that is safe. */
static int check_streams(const char *device)
{
	char out_err[512] = "", err_err[512] = "";
	int out = safety_check_stream("standard output", STDOUT_FILENO, device, out_err,
				      sizeof(out_err));
	int errs = safety_check_stream("standard error", STDERR_FILENO, device, err_err,
				       sizeof(err_err));
	int null;

	if (out == 0 && errs == 0)
		return FP_EXIT_OK;
	if (errs == 0)
		return fail(FP_EXIT_USAGE, "%s", out_err);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, STDERR_FILENO) < 0)
		close(STDERR_FILENO);
	if (null >= 0)
		close(null);
	if (out == 0)
		printf("flashprobe: %s\n", err_err);
	return FP_EXIT_USAGE;
}

static int check_combinations(const struct cli *c)
{
	if (c->json && c->flashbench)
		return usage_error("%s: choose one output format", "--json and --flashbench");
	if (c->write && c->destructive)
		return usage_error("%s: choose one", "--write and --destructive");
	if (c->read_only && (c->write || c->destructive))
		return usage_error("%s: choose one", "--read-only and --write/--destructive");
	/* a user who names a journal expects a backup; --destructive makes none */
	if (c->destructive && c->journal)
		return usage_error("%s", "--journal with --destructive: --destructive "
				   "keeps no backup (use --write for one)");
	if (c->command != CMD_LIST_SIMS && c->command != CMD_ADVISE && !c->device)
		return usage_error("%s", "no device given");
	if (c->command == CMD_LIST_SIMS && c->device)
		return usage_error("unexpected argument '%s' (list-sims takes none)",
				   c->device);
	if (c->svg && !c->svg[0])
		return usage_error("%s", "--svg needs a file name (or - for standard output)");
	if (check_paths(c))
		return FP_EXIT_USAGE;
	/* restore checks them once it knows the device (its argument may
	 * be a journal) */
	if (c->device && c->command != CMD_RESTORE && check_streams(c->device))
		return FP_EXIT_USAGE;
	return c->svg ? check_svg(c) : FP_EXIT_OK;
}

/* A first word that names neither a command nor a device, with more
 * words after it: a mistyped command ('frobnicate sim:seed'), not a
 * device with an unexpected argument. */
static bool looks_like_command(const char *word)
{
	struct stat st;

	return !strchr(word, '/') && !devspec_is_sim(word) && stat(word, &st);
}

/* The words after the options: the command (unless -a, -O or -f chose
 * it), then the device (or the topic of help). */
static int parse_words(int argc, char **argv, struct cli *c)
{
	for (int i = optind; i < argc; i++) {
		enum fp_command cmd = c->command == CMD_NONE && !c->device ?
				      cliopts_command_named(argv[i]) : CMD_NONE;

		if (cmd != CMD_NONE)
			c->command = cmd;
		else if (c->command == CMD_NONE && i + 1 < argc && looks_like_command(argv[i]))
			return usage_error("unknown command '%s'", argv[i]);
		else if (c->command == CMD_NONE && looks_like_command(argv[i]))
			return usage_error("'%s' is neither a command nor a device", argv[i]);
		else if (c->command == CMD_HELP && !c->help_topic)
			c->help_topic = argv[i];
		else if (!c->device && c->command != CMD_HELP)
			c->device = argv[i];
		else
			return usage_error("unexpected argument '%s'", argv[i]);
	}
	return FP_EXIT_OK;
}

/* --help, COMMAND --help, help [COMMAND]: on stdout, exit 0. */
static int print_help(const struct cli *c)
{
	enum fp_command topic = c->command == CMD_HELP ? CMD_NONE : c->command;

	if (c->help_topic && (topic = cliopts_command_named(c->help_topic)) == CMD_NONE)
		return usage_error("unknown command '%s'", c->help_topic);
	cliopts_help(stdout, topic);
	return -1;
}

/* An option as typed: its value is parsed once the command is known, so
 * that an option the command does not take is refused as such. */
struct typed_option {
	int opt;
	const char *arg;
};

static int report_status(int status);

/* First pass over one option: what getopt could not parse, the command
 * forms -a, -O and -f, and --help are handled here; the others are kept
 * in *t (t->opt 0 for none). */
static int scan_option(struct cli *c, int opt, const char *arg, char **argv,
		       struct typed_option *t)
{
	*t = (struct typed_option){ 0, NULL };
	switch (opt) {
	case ':':
		return usage_error("option '%s' needs a value", argv[optind - 1]);
	case '?':
		return usage_error("unknown option '%s'", argv[optind - 1]);
	case 'a':
	case 'O':
	case 'f':
		if (!set_command(c, opt == 'a' ? CMD_ALIGN : opt == 'O' ? CMD_OPEN_AU
									  : CMD_FIND_FAT, true))
			return usage_error("%s", "more than one command given");
		return FP_EXIT_OK;
	case 'h':
		c->help = true;
		break;
	case 'V':
		printf("flashprobe %s\n", FLASHPROBE_VERSION);
		exit(report_status(FP_EXIT_OK));
	default:
		*t = (struct typed_option){ opt, arg };
		break;
	}
	if (cliopts_index(opt) >= 0)
		c->given[cliopts_index(opt)] = true;
	return FP_EXIT_OK;
}

/* FP_EXIT_OK to run c, -1 when the help was printed (exit 0), or the
 * exit status of a usage error. */
static int parse_args(int argc, char **argv, struct cli *c)
{
	struct typed_option typed[argc];
	int opt, ret, ntyped = 0;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, cliopts_shortopts(), cliopts_longopts(),
				  NULL)) != -1)
		if ((ret = scan_option(c, opt, optarg, argv, &typed[ntyped])))
			return ret;
		else if (typed[ntyped].opt)
			ntyped++;
	if ((ret = parse_words(argc, argv, c)))
		return ret;
	if (c->help || c->command == CMD_HELP)
		return print_help(c);
	if (c->command == CMD_NONE && !c->device)
		return usage_error("%s", "no command and no device given");
	if (c->command == CMD_NONE)
		c->command = CMD_PROBE;	/* flashprobe DEVICE */
	if ((ret = check_applicable(c)))
		return ret;
	for (int i = 0; i < ntyped; i++)
		if ((ret = parse_option(c, typed[i].opt, typed[i].arg)))
			return ret;
	if ((ret = check_combinations(c)))
		return ret;
	if (c->device && c->seed_set && devspec_is_sim(c->device))
		ret = snprintf(c->spec, sizeof(c->spec), "%s,seed=%" PRIu64, c->device,
			       c->seed);
	else if (c->device)
		ret = snprintf(c->spec, sizeof(c->spec), "%s", c->device);
	if (ret >= (int)sizeof(c->spec))
		return usage_error("%s: the simulated card with its seed is too long",
				   "--seed");
	return FP_EXIT_OK;
}

static void end_json(struct json_writer *w);

static int list_sims(const struct cli *c)
{
	char e[32], p[32], s[32], f[32], cap[80];

	if (c->json) {
		struct json_writer w;

		json_init(&w, stdout);
		json_object_begin(&w, NULL);
		report_sims_json(&w, sim_profiles);
		end_json(&w);
		return FP_EXIT_OK;
	}

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

/* Where a failure happened, for its exit status. */
enum failure_stage {
	STAGE_READ,		/* opening a device or a session to read */
	STAGE_WRITE,		/* opening one to write */
	STAGE_REPLAY,		/* replaying a journal whose arguments were checked */
};

/* The one mapping from a failure to an exit status.  A refusal (the
 * journal of another device, a file that could have been planted, the
 * gate) is always 3; during a replay anything else keeps the journal
 * and is a runtime failure. */
static int status_for_error(int err, enum failure_stage stage)
{
	if (err == -FP_EREFUSED)
		return FP_EXIT_REFUSED;
	if (stage == STAGE_REPLAY)
		return FP_EXIT_FAILURE;
	switch (err) {
	case -FP_ENOCONSENT: case -EINVAL: case -ENOENT: case -EISDIR: case -ENOTBLK:
	case -ENOTDIR: case -ENAMETOOLONG: case -ELOOP:
		return FP_EXIT_USAGE;
	case -EXDEV: case -EBUSY: case -EROFS: case -EALREADY: case -ECANCELED:
		return FP_EXIT_REFUSED;
	case -EACCES:
		return stage == STAGE_WRITE ? FP_EXIT_REFUSED : FP_EXIT_FAILURE;
	default:
		return FP_EXIT_FAILURE;	/* -FP_ELOST among them */
	}
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
	/* the question goes to standard error: sent to a file, it would
	 * wait for an answer nobody was asked for */
	bool on_terminal = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
	struct session_opts o = {
		.device = c->spec,
		.test = test,
		.consent = consent_of(c, writes),
		.yes = c->yes,
		.journal = c->journal,
		.tty_in = on_terminal ? stdin : NULL,
		.tty_out = on_terminal ? stderr : NULL,
		.notes = stderr,
		.quiet = c->quiet,
	};
	char err[512] = "";
	int ret = session_open(s, &o, err, sizeof(err));

	if (ret)
		return fail(status_for_error(ret, writes ? STAGE_WRITE : STAGE_READ), "%s", err[0] ? err : strerror(-ret));
	return FP_EXIT_OK;
}

/* Restore (--write) before any report is printed: a report that cannot
 * be written must not cost the data.  A failed restore or a signal
 * decides the status; the report is printed only when it is 0. */
static int finish_session(struct session *s, int status)
{
	char err[1024] = "";
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
	struct pollfd out = { .fd = STDOUT_FILENO, .events = POLLOUT };
	int e = fflush(stdout) ? errno : 0;

	if (!e && !ferror(stdout))
		return status;
	/* stdio keeps no errno of a write that failed before the flush; a
	 * pipe whose reader is gone polls as an error.  Never guess EIO: on
	 * a tool that reports the card's I/O errors it would point at the
	 * card. */
	if (poll(&out, 1, 0) == 1 && (out.revents & POLLERR))
		e = EPIPE;
	if (status != FP_EXIT_OK)
		return status;
	return fail(FP_EXIT_FAILURE, "cannot write the report to standard output%s%s",
		    e ? ": " : "", e ? strerror(e) : "");
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

/* A failed I/O, for people: "Input/output error writing 1MiB at byte
 * 20971520 (20MiB)". */
static const char *card_failure_text(const struct fp_dev_failure *f, char *buf, size_t len)
{
	char n[32], at[32];

	snprintf(buf, len, "%s %s %s at byte %" PRIu64 " (%s)", strerror(-f->err),
		 f->write ? "writing" : "reading", units_format_bytes(f->len, n, sizeof(n)),
		 f->offset_bytes, units_format_bytes(f->offset_bytes, at, sizeof(at)));
	return buf;
}

/* The error, and the I/O that got it when the device failed one with
 * that error. */
static const char *io_error_text(const struct fp_dev *d, int ret, char *buf, size_t len)
{
	const struct fp_dev_failure *f = fp_dev_last_failure(d);

	if (!f || f->err != ret)
		return strerror(-ret);
	return card_failure_text(f, buf, len);
}

/* The card's own failure that stopped a test, or NULL: a read or write
 * of the card that it refused (an I/O error, a card turned read-only),
 * also a read for the backup; not the journal's file, a signal, a
 * swapped card or a bad request. */
static const struct fp_dev_failure *card_failure(const struct session *s, int ret)
{
	const struct fp_dev_failure *backup = journal_card_failure(s->dev);
	const struct fp_dev_failure *f = fp_dev_last_failure(s->dev);
	const char *jerr = journal_last_error(s->dev);

	if ((ret != -EIO && ret != -EROFS && ret != -EILSEQ && ret != -EREMOTEIO) ||
	    session_interrupted())
		return NULL;
	if (backup)
		return backup;
	return f && f->err == ret && !(jerr && jerr[0]) ? f : NULL;
}

/* A test that failed: its reason (err, or the error with its I/O),
 * unless a signal stopped it (the interruption is reported once, after
 * the restore). */
static int test_failed(const char *test, const struct cli *c, const struct fp_dev *d,
		       int ret, const char *err)
{
	char buf[160];

	if (ret == -EINTR && session_interrupted())
		return FP_EXIT_FAILURE;
	return fail(FP_EXIT_FAILURE, "%s failed on '%s': %s", test, c->device,
		    err && err[0] ? err : io_error_text(d, ret, buf, sizeof(buf)));
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
	char err[512] = "";
	FILE *f = svg_stdout;
	int ret;

	if (strcmp(c->svg, "-") &&
	    outfile_open("--svg", c->svg, c->device, &f, err, sizeof(err)))
		return fail(FP_EXIT_FAILURE, "%s", err);
	ret = svg_write(f, e);
	if (fclose(f) || ret)
		return fail(FP_EXIT_FAILURE, "cannot write '%s'", c->svg);
	return FP_EXIT_OK;
}

/* "write_areas": what the session announced (also under -q, which
 * silences the announcements on stderr); [] when nothing was to be
 * written. */
static void write_areas_json(struct json_writer *w, const struct session *s)
{
	json_array_begin(w, "write_areas");
	for (size_t i = 0; i < s->nareas; i++) {
		json_object_begin(w, NULL);
		json_string(w, "test", s->areas[i].test);
		json_uint(w, "start_bytes", s->areas[i].start_bytes);
		json_uint(w, "end_bytes", s->areas[i].end_bytes);
		json_uint(w, "max_write_bytes", s->areas[i].max_bytes);
		json_object_end(w);
	}
	json_array_end(w);
}

/* The document's start: the device, and for a measuring command the
 * areas its session announced. */
static void begin_json(struct json_writer *w, struct fp_dev *d, const struct session *s)
{
	json_init(w, stdout);
	json_object_begin(w, NULL);
	report_device_json(w, d);
	if (s)
		write_areas_json(w, s);
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
	o->quick = c->quick;
	if (show_progress(c)) {
		o->progress = progress_line;
		o->progress_arg = "align";
	}
}

static int align_error(const struct cli *c, const struct fp_dev *d, int ret)
{
	char buf[160];

	if (ret == -EINTR && session_interrupted())
		return FP_EXIT_FAILURE;	/* reported after the restore */
	/* EINVAL from align_run itself is about its block size; from the
	 * device (an O_DIRECT read the kernel refused) it is a failed read */
	if (ret == -EINVAL && !fp_dev_last_failure(d)) {
		if (!c->blocksize_bytes)
			return fail(FP_EXIT_USAGE, "'%s' is too small for the align test",
				    c->device);
		return fail(FP_EXIT_USAGE, "'%s' is too small for blocksize %" PRIu64
			    " or the blocksize is not a multiple of two sectors",
			    c->device, c->blocksize_bytes);
	}
	return fail(FP_EXIT_FAILURE, "read failed on '%s': %s", c->device,
		    io_error_text(d, ret, buf, sizeof(buf)));
}

/* A command that measures, run by run_measurement(): the session opens,
 * measure() plans, announces, protects and runs, the session restores,
 * then print() reports and evidence() gives the chart its data. */
struct measurement {
	const char *test;		/* "open-au", for the session and messages */
	size_t result_bytes;
	/* between open and restore; an exit status */
	int (*measure)(const struct cli *c, struct session *s, void *result);
	void (*print)(const struct cli *c, const struct session *s, const void *result);
	/* what the chart shows, or NULL: the command draws none */
	void (*evidence)(const void *result, struct svg_evidence *e);
	/* whether measure() failed on the card's own I/O error with findings
	 * made before it that still stand (NULL: never) */
	bool (*card_failed)(const void *result);
};

/* A restore that failed on the card (a worn card refusing the writes
 * back, or not keeping them) ends with its message and status 1, and the
 * findings of the test, which finished, still follow: they say why.  Not
 * after an interruption (the test did not finish), nor when the card
 * turned out to be another one (the findings may mix two cards).  The
 * same holds for a test the card's own failure stopped (its message and
 * status 1 came first): what was found before it, and that the card is
 * failing, is what the user needs next. */
static bool findings_outlive_failure(const struct measurement *m, const struct session *s,
				     int measured, const void *result)
{
	bool finished = measured == FP_EXIT_OK || (m->card_failed && m->card_failed(result));

	return finished && !session_interrupted() && s->finish_rc != -FP_EREFUSED;
}

static int run_measurement(const struct cli *c, const struct measurement *m,
			   bool writes)
{
	void *r = calloc(1, m->result_bytes);
	struct session s;
	int ret, measured;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	ret = open_session(c, m->test, writes, &s);
	if (ret) {
		free(r);
		return ret;
	}
	measured = m->measure(c, &s, r);
	ret = finish_session(&s, measured);
	if (!ret || findings_outlive_failure(m, &s, measured, r))
		m->print(c, &s, r);
	if (!ret && c->svg && m->evidence) {	/* after the restore, like the report */
		struct svg_evidence e = { .title = c->device };

		m->evidence(r, &e);
		ret = write_svg(c, &e);
	}
	free(r);
	return close_session(&s, ret);
}

/* An area that could not be prepared: the reason (a backup stopped by a
 * signal says that nothing was written), unless a signal stopped it
 * before there was one to give (the interruption is reported once,
 * after the restore). */
static int protect_failed(const char *test, int ret, const char *err)
{
	if (!err[0] && ret == -EINTR && session_interrupted())
		return FP_EXIT_FAILURE;
	return fail(FP_EXIT_FAILURE, "cannot prepare %s: %s", test,
		    err[0] ? err : strerror(-ret));
}

/* Announce [start, end) and make it the only writable area (backed up
 * first with --write); an exit status. */
static int protect(struct session *s, const char *test, uint64_t start,
		   uint64_t end, uint64_t max_bytes, unsigned flags)
{
	char err[512] = "";
	int ret;

	progress_done();
	ret = session_protect(s, test, start, end, max_bytes, flags, err, sizeof(err));
	return ret ? protect_failed(test, ret, err) : FP_EXIT_OK;
}

/* An analyzer's return: 0, or the failure told once, in one line: what
 * the journal could not do (its file system full, a block that cannot be
 * read for the backup) when that is why, rather than a bare "No space
 * left on device" that seems to be the card's. */
static int run_status(const struct cli *c, const struct session *s, const char *test,
		      int ret)
{
	return ret ? test_failed(test, c, s->dev, ret, journal_last_error(s->dev)) : FP_EXIT_OK;
}

static void print_align(const struct cli *c, const struct session *s,
			const void *result)
{
	struct fp_dev *d = s->dev;
	const struct align_result *r = result;

	if (c->json) {
		struct json_writer w;

		begin_json(&w, d, s);
		report_align_json(&w, r);
		end_json(&w);
	} else if (c->flashbench) {
		report_align_flashbench(stdout, r);
	} else {
		report_device_text(stdout, d);
		report_align_text(stdout, r);
	}
}

static int measure_align(const struct cli *c, struct session *s, void *result)
{
	struct align_opts o;
	int ret;

	fill_align_opts(c, &o);
	ret = align_run(s->dev, &o, result);
	return ret ? align_error(c, s->dev, ret) : FP_EXIT_OK;
}

static void align_evidence(const void *result, struct svg_evidence *e)
{
	e->align = result;
}

static const struct measurement align_measurement = {
	"align", sizeof(struct align_result), measure_align, print_align,
	align_evidence, NULL,
};

/* The erase size write tests need: given, or measured read-only first. */
/* The read test found no erase block: the write-based AU search, in its
 * own announced area (the session allows writes: these are write tests).
 * Exit 4 only when it is undetermined too. */
static int au_from_writes(const struct cli *c, struct session *s,
			  const char *why, uint64_t page, uint64_t *out)
{
	struct auwrite_result *r = calloc(1, sizeof(*r));
	struct auwrite_opts o;
	struct auwrite_plan plan;
	char buf[32];
	int ret;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	auwrite_opts_default(&o);
	o.chunk_bytes = auwrite_chunk_for_page(page);
	if (show_progress(c)) {
		o.progress = progress_line;
		o.progress_arg = "au-search";
	}
	ret = auwrite_plan(fp_dev_size_bytes(s->dev), fp_dev_sector_bytes(s->dev), &o, &plan);
	if (ret == -ENOSPC)
		ret = fail(FP_EXIT_UNDETERMINED, "the alignment test could not determine "
			   "the erase-block size of '%s' (%s) and the device is too small "
			   "for the write-based AU search: give --erasesize", c->device, why);
	else if (ret)
		ret = run_status(c, s, "au-search", ret);
	else if (!(ret = protect(s, "au-search", plan.start_bytes, plan.end_bytes,
				 plan.max_bytes, SESSION_AREA_SPARSE)))
		ret = run_status(c, s, "au-search", auwrite_run(s->dev, &o, &plan, r));
	*out = r->au_bytes;
	if (ret)
		*out = 0;	/* the failure was told already */
	else if (!*out)
		ret = fail(FP_EXIT_UNDETERMINED, "neither the alignment test (%s) nor the "
			   "write-based AU search (%s) could determine the AU of '%s': give "
			   "--erasesize", why, r->note, c->device);
	else
		note(c, "AU %s measured by the write-based AU search (confidence %.2f; "
		     "the read test found no erase block)",
		     units_format_bytes(*out, buf, sizeof(buf)), r->confidence);
	free(r);
	return ret;
}

static int erase_size_for(const struct cli *c, struct session *s, uint64_t *out)
{
	struct align_opts o;
	struct align_result *r;
	char buf[32], size[32];
	int ret;

	if (c->erase_bytes) {
		*out = c->erase_bytes;
		return FP_EXIT_OK;
	}
	/* an offset no erase size can make fit is said before the card is
	 * timed for one */
	if (c->offset_set && c->offset_bytes >= fp_dev_size_bytes(s->dev))
		return fail(FP_EXIT_USAGE, "offset %s is past the end of '%s' (%s)",
			    units_format_bytes(c->offset_bytes, buf, sizeof(buf)), c->device,
			    units_format_bytes(fp_dev_size_bytes(s->dev), size, sizeof(size)));
	r = calloc(1, sizeof(*r));
	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	fill_align_opts(c, &o);
	o.blocksize_bytes = 0;
	ret = align_run(s->dev, &o, r);
	*out = r->erase_size_bytes;
	if (ret)
		ret = align_error(c, s->dev, ret);
	else if (!*out)
		ret = au_from_writes(c, s, r->note[0] ? r->note : "no clear step",
				     r->page_size_bytes, out);
	else
		note(c, "erase block %s measured by the alignment test (confidence %.2f)",
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
	if (ret == -E2BIG)	/* it said "too small" */
		return fail(FP_EXIT_USAGE, "erasesize %s is larger than this test "
			    "takes", e);
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

static void print_open_au(const struct cli *c, const struct session *s,
			const void *result)
{
	struct fp_dev *d = s->dev;
	const struct openau_result *r = result;

	if (c->json) {
		struct json_writer w;

		begin_json(&w, d, s);
		report_openau_json(&w, r);
		end_json(&w);
	} else if (c->flashbench || r->manual) {
		report_openau_flashbench(stdout, r);
	} else {
		report_device_text(stdout, d);
		report_openau_text(stdout, r);
	}
}

static void fill_openau_opts(const struct cli *c, struct openau_opts *o)
{
	openau_opts_default(o);
	o->open_au_nr = (unsigned)c->open_au_nr;
	o->blocksize_bytes = c->blocksize_bytes;
	o->random = c->random;
	o->offset_set = c->offset_set;
	o->offset_bytes = c->offset_bytes;
	if (c->max_open)
		o->max_open = (unsigned)c->max_open;
	if (c->seed_set)
		o->seed = c->seed;
	if (show_progress(c)) {
		o->progress = progress_line;
		o->progress_arg = "open-au";
	}
}

static int measure_open_au(const struct cli *c, struct session *s, void *result)
{
	struct openau_opts o;
	struct openau_plan plan;
	int ret;

	fill_openau_opts(c, &o);
	if ((ret = erase_size_for(c, s, &o.erase_size_bytes)))
		return ret;
	if ((ret = openau_plan(fp_dev_size_bytes(s->dev), fp_dev_sector_bytes(s->dev), &o, &plan)))
		return plan_error(c, s->dev, o.erase_size_bytes, o.blocksize_bytes, ret);
	if (plan.start_rounded) {
		char at[32], e[32], start[32];

		note(c, "offset %s is not on a %s erase block: the test starts at %s, where "
		     "one does", units_format_bytes(c->offset_bytes, at, sizeof(at)),
		     units_format_bytes(o.erase_size_bytes, e, sizeof(e)),
		     units_format_bytes(plan.start_bytes, start, sizeof(start)));
	}
	ret = protect(s, "open-au", plan.start_bytes, plan.end_bytes, plan.max_bytes,
		      SESSION_AREA_SPARSE);
	return ret ? ret : run_status(c, s, "open-au", openau_run(s->dev, &o, &plan, result));
}

static void open_au_evidence(const void *result, struct svg_evidence *e)
{
	e->openau = result;
}

static const struct measurement open_au_measurement = {
	"open-au", sizeof(struct openau_result), measure_open_au, print_open_au,
	open_au_evidence, NULL,
};

static void print_find_fat(const struct cli *c, const struct session *s,
			const void *result)
{
	struct fp_dev *d = s->dev;
	const struct findfat_result *r = result;

	if (c->json) {
		struct json_writer w;

		begin_json(&w, d, s);
		report_findfat_json(&w, r);
		end_json(&w);
	} else if (c->flashbench || r->mode == FINDFAT_MANUAL) {
		report_findfat_flashbench(stdout, r);
	} else {
		report_device_text(stdout, d);
		report_findfat_text(stdout, r);
	}
}

static void fill_findfat_opts(const struct cli *c, struct findfat_opts *o)
{
	findfat_opts_default(o);
	o->mode = c->manual || c->flashbench_form ? FINDFAT_MANUAL : FINDFAT_AUTO;
	o->blocksize_bytes = c->blocksize_bytes;
	o->units = (unsigned)c->fat_nr;
	o->random = c->random;
	if (c->seed_set)
		o->seed = c->seed;
	if (show_progress(c)) {
		o->progress = progress_line;
		o->progress_arg = "find-fat";
	}
}

static int measure_find_fat(const struct cli *c, struct session *s, void *result)
{
	struct findfat_opts o;
	struct findfat_plan plan;
	int ret;

	fill_findfat_opts(c, &o);
	if ((ret = erase_size_for(c, s, &o.erase_size_bytes)))
		return ret;
	if ((ret = findfat_plan(fp_dev_size_bytes(s->dev), fp_dev_sector_bytes(s->dev), &o,
				&plan)))
		return plan_error(c, s->dev, o.erase_size_bytes, o.blocksize_bytes, ret);
	ret = protect(s, "find-fat", plan.start_bytes, plan.end_bytes,
		      plan.max_write_bytes, SESSION_AREA_SPARSE);
	return ret ? ret : run_status(c, s, "find-fat", findfat_run(s->dev, &o, &plan, result));
}

static void find_fat_evidence(const void *result, struct svg_evidence *e)
{
	e->findfat = result;
}

static const struct measurement find_fat_measurement = {
	"find-fat", sizeof(struct findfat_result), measure_find_fat, print_find_fat,
	find_fat_evidence, NULL,
};

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

/* Where the card refused to take back its own data where the tests had
 * found it sound (everywhere on a genuine card, below the verified part
 * of a fake or damaged one; capacity NULL: not checked), or UINT64_MAX. */
static uint64_t refused_where_sound(const struct session *s,
				    const struct capacity_result *capacity)
{
	uint64_t limit = capacity && capacity_is_bad(capacity->verdict) ?
			 capacity->real_bytes : UINT64_MAX;

	return s->restore.failed_bytes && s->restore.failed_lowest < limit ?
	       s->restore.failed_lowest : UINT64_MAX;
}

static void print_capacity(const struct cli *c, const struct session *s,
			const void *result)
{
	struct fp_dev *d = s->dev;
	struct capacity_result *r = malloc(sizeof(*r));
	uint64_t at;

	if (r == NULL) {
		fail(FP_EXIT_FAILURE, "out of memory");
		return;
	}
	*r = *(const struct capacity_result *)result;
	at = refused_where_sound(s, r);
	if (at != UINT64_MAX)
		capacity_refused_restore(r, at);
	if (c->json) {
		struct json_writer w;

		begin_json(&w, d, s);
		report_capacity_json(&w, r);
		end_json(&w);
	} else {
		report_device_text(stdout, d);
		report_capacity_text(stdout, r, c->device);
	}
	free(r);
}

/* Writes over the whole device, sparsely: each 1 MiB block is backed up
 * before its first write (--write). */
static int measure_capacity(const struct cli *c, struct session *s, void *result)
{
	struct capacity_result *r = result;
	struct capacity_opts o;
	struct capacity_plan plan;
	int ret;

	fill_capacity_opts(c, &o);
	if (capacity_plan(fp_dev_size_bytes(s->dev), fp_dev_sector_bytes(s->dev), &o, &plan))
		return fail(FP_EXIT_USAGE, "'%s' is too small for the capacity check "
			    "(at least 2MiB)", c->device);
	ret = protect(s, "capacity", plan.start_bytes, plan.end_bytes, plan.max_bytes,
		      SESSION_AREA_SPARSE |
		      (plan.writes_may_alias ? SESSION_AREA_MAY_ALIAS : 0));
	if (ret)
		return ret;
	ret = capacity_run(s->dev, &o, &plan, r);
	s->may_alias = r->aliasing_seen;
	s->aliasing_ruled_out = ret == 0 && !r->aliasing_seen;
	return run_status(c, s, "capacity", ret);
}

static const struct measurement capacity_measurement = {
	"capacity", sizeof(struct capacity_result), measure_capacity, print_capacity,
	NULL, NULL,
};

/* probe's callback for each write test's area. */
static int protect_area(void *arg, const char *test, uint64_t start,
			uint64_t end, uint64_t max_bytes, bool may_alias)
{
	char err[512] = "";
	int ret;

	progress_done();
	/* the probe's write tests both touch a few AUs of a large area */
	ret = session_protect(arg, test, start, end, max_bytes, SESSION_AREA_SPARSE |
			      (may_alias ? SESSION_AREA_MAY_ALIAS : 0), err, sizeof(err));
	if (ret)
		protect_failed(test, ret, err);
	return ret;
}

/* Such a card has failed since, or turned read-only: partitioning advice
 * for it would be advice to use it, and its capacity verdict (genuine,
 * say) no longer holds.  The advice gives way to a note, the verdict to
 * damaged; the other findings stay. */
static void withhold_advice_if_refused(const struct session *s, struct probe_result *r)
{
	uint64_t at = refused_where_sound(s, r->capacity_done ? &r->capacity : NULL);
	char b[32], why[256];

	if (at == UINT64_MAX)
		return;
	snprintf(why, sizeof(why), "the card refused to take its own data back at "
		 "byte %" PRIu64 " (%s), where the tests had found it sound: it has "
		 "turned read-only or is failing", at, units_format_bytes(at, b, sizeof(b)));
	probe_withhold_advice(r, why);
	if (r->capacity_done)
		capacity_refused_restore(&r->capacity, at);
}

static void print_probe(const struct cli *c, const struct session *s,
			const void *result)
{
	struct probe_result *r = malloc(sizeof(*r));
	struct fp_dev *d = s->dev;

	if (r == NULL) {
		fail(FP_EXIT_FAILURE, "out of memory");
		return;
	}
	*r = *(const struct probe_result *)result;
	withhold_advice_if_refused(s, r);
	result = r;

	if (c->json) {
		struct json_writer w;

		json_init(&w, stdout);
		json_object_begin(&w, NULL);
		report_probe_json(&w, d, result);
		write_areas_json(&w, s);
		json_object_end(&w);
		json_end(&w);
	} else {
		report_probe_text(stdout, d, result);
	}
	free(r);
}

/* The write tests run when allowed: --write, --destructive, or a
 * simulated card (nothing to lose); else only the read-only part. */
static bool probe_writes(const struct cli *c)
{
	return c->write || c->destructive || devspec_is_sim(c->device);
}

static int measure_probe(const struct cli *c, struct session *s, void *result)
{
	struct probe_result *r = result;
	struct probe_opts o = {
		.device = c->device, .sysfs_root = "/sys",
		.writes_allowed = probe_writes(c), .quick = c->quick,
		.erase_bytes = c->erase_bytes, .cache_set = c->cache_set,
		.cache_bytes = c->cache_bytes, .seed = c->seed, .seed_set = c->seed_set,
		.protect = protect_area, .protect_arg = s,
		.progress = show_progress(c) ? probe_progress : NULL,
	};
	int ret = probe_run(s->dev, &o, r);
	const struct fp_dev_failure *f = card_failure(s, ret);
	char what[160];

	s->may_alias = r->capacity.aliasing_seen;
	s->aliasing_ruled_out = r->capacity_done && !r->capacity.aliasing_seen;
	if (f)
		probe_note_card_failure(r, card_failure_text(f, what, sizeof(what)),
					f->offset_bytes);
	return run_status(c, s, "probe", ret);
}

static bool probe_card_failed(const void *result)
{
	return ((const struct probe_result *)result)->card_failure[0] != '\0';
}

static void probe_evidence(const void *result, struct svg_evidence *e)
{
	const struct probe_result *r = result;

	e->align = &r->align;
	e->openau = r->openau_done ? &r->openau : NULL;
	e->findfat = r->findfat_done ? &r->fat : NULL;
}

static const struct measurement probe_measurement = {
	"probe", sizeof(struct probe_result), measure_probe, print_probe,
	probe_evidence, probe_card_failed,
};

/* Reads always; writes with --write, --destructive, or on a simulated
 * card unless --read-only. */
static bool bench_writes(const struct cli *c)
{
	return !c->read_only && (c->write || c->destructive || devspec_is_sim(c->device));
}

static int bench_options(const struct cli *c, struct fp_dev *d,
			 struct benchio_opts *o)
{
	benchio_opts_default(o);
	if (c->workloads && benchio_workloads_parse(c->workloads, &o->workloads))
		return fail(FP_EXIT_USAGE, "workload list '%s' names an unknown workload "
			    "(seq_read, seq_write, rand_read, rand_write, all)", c->workloads);
	/* the default area only where one of them is not given */
	if ((!c->offset_set || !c->size_bytes) &&
	    benchio_plan_area(fp_dev_size_bytes(d), fp_dev_sector_bytes(d),
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
	if (c->runtime_ns)
		o->runtime_ns = c->runtime_ns;
	if (c->warmup_set)
		o->warmup_ns = c->warmup_ns;
	if (c->repeat)
		o->repeats = (unsigned)c->repeat;
	if (c->seed_set)
		o->seed = c->seed;
	if (benchio_check_area(fp_dev_size_bytes(d), fp_dev_sector_bytes(d), o))
		return fail(FP_EXIT_USAGE, "the test area (%s) must hold one aligned "
			    "1MiB block and one 4KiB block: give a larger --size",
			    c->size_bytes ? "--size" : "the default");
	if (!bench_writes(c) && !(o->workloads & (BENCHIO_MASK(BENCHIO_SEQ_READ) |
						  BENCHIO_MASK(BENCHIO_RAND_READ))))
		return fail(FP_EXIT_USAGE, "only write workloads are selected, and this "
			    "run does not write (%s): nothing to measure",
			    c->read_only ? "--read-only" : "no --write or --destructive");
	o->constant_fill = devspec_dev_is_sim(d);
	if (show_progress(c)) {
		o->progress = progress_line;
		o->progress_arg = "bench";
	}
	return FP_EXIT_OK;
}

static void print_bench(const struct cli *c, const struct session *s,
			const void *result)
{
	struct fp_dev *d = s->dev;

	if (c->json) {
		struct json_writer w;

		begin_json(&w, d, s);
		report_bench_json(&w, result);
		end_json(&w);
	} else {
		report_device_text(stdout, d);
		report_bench_text(stdout, result);
	}
}

static int measure_bench(const struct cli *c, struct session *s, void *result)
{
	struct benchio_opts o;
	int ret = bench_options(c, s->dev, &o);

	o.allow_writes = bench_writes(c);
	if (!ret && o.allow_writes)
		ret = protect(s, "bench", o.offset_bytes, o.offset_bytes + o.size_bytes,
			      o.size_bytes, 0);
	return ret ? ret : run_status(c, s, "bench", benchio_run(s->dev, &o, result));
}

static void bench_evidence(const void *result, struct svg_evidence *e)
{
	e->bench = result;
}

static const struct measurement bench_measurement = {
	"bench", sizeof(struct benchio_result), measure_bench, print_bench,
	bench_evidence, NULL,
};

/* restore DEVICE found no journal: say where it looked (a journal kept
 * under another FLASHPROBE_STATE_DIR is found through its pointer file in
 * the default place, unless that file was deleted). */
static int nothing_to_restore(const char *device)
{
	const char *dirs[JOURNAL_STATE_DIRS_MAX];
	size_t n = journal_state_dirs(dirs);
	char where[3 * PATH_MAX] = "";

	for (size_t i = 0; i < n; i++)
		snprintf(where + strlen(where), sizeof(where) - strlen(where), "%s%s",
			 i == 0 ? "" : i + 1 == n ? " or " : ", ", dirs[i]);
	return fail(FP_EXIT_OK, "no unfinished journal for '%s' in %s: nothing to restore",
		    device, where);
}

/* The journal restore DEVICE found is gone before it could be opened:
 * another restore replayed and deleted it (it deletes a journal only
 * after verifying its data), when no journal is pending any more. */
static bool replayed_meanwhile(const char *device)
{
	char found[PATH_MAX], err[256];

	return journal_find_pending(device, found, sizeof(found), err,
				    sizeof(err)) == 0;
}

/* restore DEVICE found only the journal of another node over its data
 * (an image file and a loop device over it, a disk and its partition):
 * that journal restores through its own node, named in it. */
static int refuse_alias_restore(const char *device, const char *journal)
{
	char why[3 * PATH_MAX];

	journal_describe_alias(device, journal, why, sizeof(why));
	return fail(FP_EXIT_REFUSED, "'%s' has no journal of its own: %s; nothing was "
		    "written", device, why);
}

/* An image file in use elsewhere, as a writing test refuses it: attached
 * to a loop device (a file system mounted from it would write its
 * cached blocks back over the restored ones later) or used as swap.
 * Block devices are opened O_EXCL, which refuses theirs. */
static int refuse_image_in_use(const char *device)
{
	struct safety_report rep;
	char err[512];
	struct stat st;

	if (stat(device, &st) != 0 || !S_ISREG(st.st_mode) ||
	    safety_check_target(device, SAFETY_WRITE, &rep, err, sizeof(err)) != -EBUSY)
		return FP_EXIT_OK;
	if (rep.swap)
		return fail(FP_EXIT_REFUSED, "%s: nothing was written; the journal is "
			    "kept for a restore once it is no longer swap", err);
	return fail(FP_EXIT_REFUSED, "%s: nothing was written; unmount what is mounted "
		    "from it, detach it ('losetup -d %s') and run this restore again (the "
		    "journal is kept)", err, rep.busy);
}

/* restore JOURNAL or restore DEVICE (its pending journal).  Signals do
 * not stop a replay: they only print its progress (see safety.h), and the
 * status says 128+N once it is done. */
static int run_restore(const struct cli *c)
{
	char journal[PATH_MAX], device[PATH_MAX], err[1024] = "";
	struct journal_restore_report rep;
	struct stat st;
	struct fp_dev *d;
	bool by_device;
	int ret, sig;

	if ((ret = safety_signals_install()))
		return fail(FP_EXIT_FAILURE, "cannot install signal handlers: %s",
			    strerror(-ret));
	if (stat(c->device, &st) == 0 && S_ISDIR(st.st_mode))
		return fail(FP_EXIT_USAGE, "'%s' is a directory: restore expects a "
			    "journal file or a device", c->device);
	/* a journal whose start is damaged would otherwise be taken for an
	 * image file with no journal: "nothing to restore" */
	if ((ret = journal_check_damaged(c->device, err, sizeof(err))))
		return fail(status_for_error(ret, STAGE_REPLAY), "%s", err);
	by_device = !journal_is_journal_file(c->device);
	if (!by_device) {
		snprintf(journal, sizeof(journal), "%s", c->device);
		device[0] = '\0';
		ret = journal_device_of(journal, device, sizeof(device), err, sizeof(err));
		/* a pointer whose journal is gone: the device's own lookup
		 * tells a lost journal, and removes the pointer a restore
		 * killed as it finished left behind */
		by_device = ret == -FP_ELOST && device[0];
		if (ret == 0 && (ret = check_streams(device)))
			return ret;
	} else {
		snprintf(device, sizeof(device), "%s", c->device);
	}
	if (by_device) {
		if ((ret = check_streams(device)))
			return ret;
		ret = journal_find_pending(device, journal, sizeof(journal), err, sizeof(err));
		if (ret == 0)
			return nothing_to_restore(device);
		if (ret == JOURNAL_PENDING_ALIAS)
			return refuse_alias_restore(device, journal);
		/* another card's journal under this one's name: --force
		 * replays it all the same, as it would given by name */
		if (ret == -FP_EREFUSED && c->force && journal[0])
			ret = 1;
		ret = ret > 0 ? 0 : ret;
	}
	if (ret)
		return fail(status_for_error(ret, STAGE_WRITE), "%s", err[0] ? err : strerror(-ret));
	/* by its name, a journal restores through the device it names */
	if (!by_device && journal_loop_gone(journal, err, sizeof(err)))
		return fail(FP_EXIT_REFUSED, "%s; nothing was written", err);
	if ((ret = refuse_image_in_use(device)))
		return ret;
	ret = devspec_open(device, FP_OPEN_WRITE, &d, err, sizeof(err));
	if (ret)
		return fail(status_for_error(ret, STAGE_WRITE), "%s", err);
	safety_restore_start();
	ret = journal_restore(journal, d, (c->force ? JOURNAL_RESTORE_FORCE : 0) |
			      (c->overwrite_newer ? JOURNAL_RESTORE_OVERWRITE_NEWER : 0),
			      safety_restore_note, device, &rep, err, sizeof(err));
	safety_restore_end();
	fp_dev_close(d);
	if (ret == -ENOENT && replayed_meanwhile(device))
		return fail(FP_EXIT_OK, "journal '%s' was replayed and deleted by "
			    "another flashprobe restore meanwhile: nothing left to "
			    "restore on '%s'", journal, device);
	if (ret == -EINTR && (sig = safety_interrupted()))	/* while waiting */
		return fail(safety_exit_status(sig), "%s", err);
	if (ret)
		return fail(status_for_error(ret, STAGE_REPLAY), "restore of '%s' from '%s' failed: %s",
			    device, journal, err[0] ? err : strerror(-ret));
	if (rep.spent)
		printf("journal '%s' had been replayed onto '%s' and verified already "
		       "(the run that did it stopped before deleting it): nothing to "
		       "restore; %s\n", journal, device, rep.deleted ?
		       "the journal was deleted" : "the journal was kept");
	else if (rep.nothing_written)
		printf("the test of '%s' had written nothing yet: nothing to restore; "
		       "%s\n", device, rep.deleted ? "the journal was deleted"
						    : "the journal was kept");
	else
		printf("restored %" PRIu64 " bytes of '%s' from '%s' and verified them; "
		       "%s\n", rep.restored_bytes, device, journal,
		       rep.deleted ? "the journal was deleted" : "the journal was kept");
	if (rep.note[0])
		printf("note: %s\n", rep.note);
	if (rep.newer_overwritten)
		printf("note: %" PRIu64 " bytes held neither what the journal saved nor "
		       "the test's writes, and were overwritten (--overwrite-newer)\n",
		       rep.newer_overwritten);
	/* a journal left after its data was put back would, restored again,
	 * undo whatever the card holds by then */
	if (!rep.deleted && !rep.nothing_written && !rep.spent)
		return fail(FP_EXIT_FAILURE, "the journal '%s' could not be deleted: delete "
			    "it by hand before using the card; restoring it again would undo "
			    "every change made to the card since", journal);
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

/* advise and check align 4KiB file-system blocks (ext4's stripe, f2fs's
 * blocks, exFAT's boundary in KiB) to the erase block: a given size that
 * is no multiple of 4KiB would be cut to wrong values.  Real erase blocks
 * are multiples of the page, itself 4KiB or more on SD cards. */
#define ERASE_GRANULE 4096u

/* The largest --size advise takes: far above any card (SDUC ends at
 * 128TB), and far enough below 2^64 that a start and a rounding to the
 * unit added to it cannot wrap. */
#define ADVISE_MAX_SIZE (UINT64_C(1) << 60)

/* The sizes advise and check are given, judged before anything runs:
 * an erase block of whole 4KiB, a page no larger than it, a size that
 * the arithmetic holds. */
static int given_geometry_error(const struct cli *c)
{
	char e[32], p[32];

	units_format_bytes(c->erase_bytes, e, sizeof(e));
	units_format_bytes(c->page_bytes, p, sizeof(p));
	if (c->erase_bytes && c->erase_bytes % ERASE_GRANULE)
		return fail(FP_EXIT_USAGE, "erasesize %s is not a multiple of 4KiB, which no "
			    "SD card's erase block is: give the size 'flashprobe align' "
			    "measures", e);
	if (c->erase_bytes && c->page_bytes > c->erase_bytes)
		return fail(FP_EXIT_USAGE, "page %s is larger than the erasesize %s: an "
			    "erase block is whole pages", p, e);
	if (c->size_bytes > ADVISE_MAX_SIZE)
		return fail(FP_EXIT_USAGE, "--size is larger than any device (at most 1EiB)");
	return FP_EXIT_OK;
}

/* advise: the Advice section from known numbers; the device, when given,
 * is only opened read-only for its size and sector size. */
static int run_advise(const struct cli *c)
{
	struct advice_request q = { .part_bytes = c->size_bytes, .label = c->label };
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
	if ((ret = given_geometry_error(c))) {
		free(a);
		return ret;
	}
	given_geometry(c, &g);
	if (c->device) {
		ret = devspec_open(c->spec, FP_OPEN_READ, &d, err, sizeof(err));
		if (ret) {
			free(a);
			return fail(status_for_error(ret, STAGE_READ), "%s", err);
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

/* A given FAT area that leaves nothing of the device: one line, exit 2
 * (check told every partition to start past the device's end).  A given
 * erase size larger than the device stays: a truncated image's table
 * problems are still worth their lines. */
static int fat_area_past_device(const struct cli *c, struct fp_dev *d)
{
	uint64_t size = fp_dev_size_bytes(d);
	char a[32], b[32];

	units_format_bytes(size, b, sizeof(b));
	if (c->fat_area_set && c->fat_area_bytes >= size)
		return fail(FP_EXIT_USAGE, "fat-area %s leaves nothing of '%s' (%s)",
			    units_format_bytes(c->fat_area_bytes, a, sizeof(a)), c->device, b);
	return FP_EXIT_OK;
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
	bool partition;
	int ret, disk_lock = -1;

	if (!r)
		return fail(FP_EXIT_FAILURE, "out of memory");
	if ((ret = given_geometry_error(c))) {
		free(r);
		return ret;
	}
	/* locked like a timing run: its own align run times, and a test
	 * writing the card would change the table under it.  A partition's
	 * node has a lock of its own: its disk's is shared too, as a timing
	 * session does, so that a test of the whole card refuses it. */
	ret = devspec_open(c->spec, FP_OPEN_TIME, &d, err, sizeof(err));
	if (ret) {
		free(r);
		return fail(status_for_error(ret, STAGE_READ), "%s", err);
	}
	if ((ret = fat_area_past_device(c, d))) {
		fp_dev_close(d);
		free(r);
		return ret;
	}
	partition = partition_of(c, d, &offset, &number, disk_path, sizeof(disk_path));
	if (partition &&
	    (ret = fp_dev_share_disk_lock(disk_path, c->device, &disk_lock, err,
					  sizeof(err)))) {
		fp_dev_close(d);
		free(r);
		return fail(status_for_error(ret, STAGE_READ), "%s", err);
	}
	check_geometry_of(c, d, &g);
	progress_done();	/* of its align run, before the report */
	layoutcheck_disk_of(d, &disk);
	if (partition)
		ret = layoutcheck_run_partition(&disk, &g, offset, number, r);
	else
		ret = layoutcheck_run(&disk, &g, r);
	if (ret) {
		ret = fail(FP_EXIT_FAILURE, "cannot read the layout of '%s': %s", c->device,
			   strerror(-ret));
	} else if (c->json) {
		struct json_writer w;

		begin_json(&w, d, NULL);
		report_check_json(&w, r);
		end_json(&w);
	} else {
		report_device_text(stdout, d);
		report_check_text(stdout, r, c->device, disk_path[0] ? disk_path : NULL);
	}
	if (disk_lock >= 0)
		close(disk_lock);
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
	return fail(status_for_error(err, STAGE_READ), "cannot identify '%s': %s",
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
	if (devspec_is_sim(c->device)) {
		if (sim_profile_parse(devspec_sim_body(c->device), &p, err, sizeof(err)))
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
		return list_sims(c);
	case CMD_ALIGN:
		return run_measurement(c, &align_measurement, false);
	case CMD_OPEN_AU:
		return run_measurement(c, &open_au_measurement, true);
	case CMD_FIND_FAT:
		return run_measurement(c, &find_fat_measurement, true);
	case CMD_PROBE:
		return run_measurement(c, &probe_measurement, probe_writes(c));
	case CMD_BENCH:
		return run_measurement(c, &bench_measurement, bench_writes(c));
	case CMD_RESTORE:
		return run_restore(c);
	case CMD_CAPACITY:
		return run_measurement(c, &capacity_measurement, true);
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

/* A closed standard input, output or error (`>&-`) would be taken by the
 * next file opened, the device or the journal, and the report or a note
 * written into it: each one closed is opened on /dev/null first. */
static void open_closed_streams(void)
{
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", O_RDWR) != fd)
			_exit(FP_EXIT_FAILURE);	/* nowhere safe to say so */
}

/* A relative state directory names another place from every working
 * directory: a restore run elsewhere said "nothing to restore" while the
 * journal waited where the test ran. */
static int check_state_dir_env(void)
{
	const char *env = getenv(JOURNAL_STATE_ENV);

	if (env != NULL && env[0] != '\0' && env[0] != '/')
		return fail(FP_EXIT_USAGE, "%s='%s' is not an absolute path: journals "
			    "there would not be found from another directory",
			    JOURNAL_STATE_ENV, env);
	return FP_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	int ret;

	open_closed_streams();
	ret = parse_args(argc, argv, &c);

	if (ret)	/* -1: help was printed */
		return ret < 0 ? report_status(FP_EXIT_OK) : ret;
	if ((ret = check_state_dir_env()))
		return ret;
	if (c.svg && !strcmp(c.svg, "-") && (ret = claim_stdout_for_svg()))
		return ret;
	configure_realtime(&c);
	return report_status(run_command(&c));
}
