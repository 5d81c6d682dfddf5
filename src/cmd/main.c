/* main.c - tfgb's entry point: the command table, common options, dispatch. */
#include "cmd.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <protobuf-c/protobuf-c.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "cmd_rerun.h"
#include "input.h"
#include "jsonr.h"
#include "netem.h"
#include "outfile.h"
#include "sweep.h"
#include "sysinfo.h"
#include "train.h"
#include "transport.h"
#include "validate.h"

#ifndef TFGB_MANDIR
#define TFGB_MANDIR "/usr/local/share/man"
#endif

static int cmd_help(struct tfgb *t);
static char **main_argv; /* for job.allocator's second start (alloc_apply) */
static int cmd_version(struct tfgb *t);
static int cmd_transport_info(struct tfgb *t);

struct cmd {
	const char *name;
	int (*fn)(struct tfgb *t);
	unsigned flags;
	const char *usage;   /* operands and command-specific options */
	const char *summary; /* one line for `tfgb help` */
};

static const struct cmd commands[] = {
	{"serve", cmd_serve, CMD_JOB | CMD_TASK, "[--task N]",
	 "run a parameter server (tfgb.v1.Bench) for the job's [cluster] ps"},
	{"latency", cmd_latency, CMD_JOB | CMD_SWEEP, "",
	 "point-to-point latency: one worker, one PS, Echo, one call at a time"},
	{"bandwidth", cmd_bandwidth, CMD_JOB | CMD_SWEEP, "",
	 "point-to-point bandwidth: Ack calls with [job] inflight outstanding"},
	{"throughput", cmd_throughput, CMD_JOB | CMD_TASK | CMD_SWEEP, "[--task N]",
	 "parameter-server throughput: every worker calls every PS"},
	{"train", cmd_train, CMD_JOB | CMD_TASK | CMD_SWEEP | CMD_LIST, "[--task N] [--list]",
	 "training steps of a model: every worker pulls and pushes every variable"},
	{"collective", cmd_collective, CMD_JOB | CMD_TASK, "[--task N]",
	 "all-reduce, reduce-scatter or all-gather over every rank, size by size"},
	{"genpayload", cmd_genpayload, CMD_JOB | CMD_INI, "[--ini]",
	 "print the payload layout the job describes"},
	{"rerun", cmd_rerun, CMD_JOB | CMD_RESULT, "RESULT.json",
	 "run a JSON result's benchmark again with exactly its job"},
	{"compare", cmd_compare, 0, "A.json B.json",
	 "two JSON results side by side, with what differs between them"},
	{"plot", cmd_plot, CMD_ARGS, "-o FIGURE.png|.svg RESULT...",
	 "draw results (JSON, a sweep's JSON or CSV) as a figure, with gnuplot"},
	{"help", cmd_help, 0, "[COMMAND]", "show the manual page of a command"},
	{"version", cmd_version, 0, "", "print versions and compiled-in features"},
	{"verbs-info", cmd_transport_info, 0, "",
	 "list the RDMA devices, ports and GIDs the verbs transport can use"},
	{0},
};

enum {
	OPT_PRINT_CONFIG = 256,
	OPT_TASK,
	OPT_INI_FLAG,
	OPT_LIST,
	OPT_SERIES,
	OPT_INTERVAL,
	OPT_SWEEP,
	OPT_NDJSON,
};

static const struct option long_opts[] = {
	{"config", required_argument, NULL, 'c'},
	{"set", required_argument, NULL, 's'},
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"task", required_argument, NULL, OPT_TASK},
	{"ini", no_argument, NULL, OPT_INI_FLAG},
	{"list", no_argument, NULL, OPT_LIST},
	{"series", required_argument, NULL, OPT_SERIES},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"sweep", required_argument, NULL, OPT_SWEEP},
	{"ndjson", no_argument, NULL, OPT_NDJSON},
	{0},
};

static const struct cmd *find_cmd(const char *name)
{
	for (const struct cmd *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* The commands that run the call engine (and so take --interval). */
static int runs_calls(const struct cmd *c)
{
	return c->fn == cmd_latency || c->fn == cmd_bandwidth || c->fn == cmd_throughput ||
	       c->fn == cmd_rerun;
}

static void usage_of(const struct cmd *c, FILE *f)
{
	fprintf(f, "usage: tfgb %s", c->name);
	if (c->flags & CMD_JOB)
		fprintf(f, "%s [-s SECTION.KEY=VALUE]... [-f text|csv|json] [-o FILE]\n"
		           "       %*s [--print-config] [--series FILE] [-q] [-v]", c->flags & CMD_RESULT ? "" :
		           " [-c FILE]", (int)strlen(c->name), "");
	if (*c->usage)
		fprintf(f, " %s", c->usage);
	fprintf(f, "\n\n  %s\n", c->summary);
	if (c->flags & CMD_RESULT)
		fprintf(f, "\n"
		        "  RESULT.json          a JSON result (-f json): its benchmark and its job\n"
		        "                       run again; output.file is not taken from it\n");
	else if (c->flags & CMD_JOB)
		fprintf(f, "\n"
		        "  -c FILE              job file ('-': standard input; a pipe or FIFO too),\n"
		        "                       or a JSON result to take the job of\n"
		        "                       (default: ./tfgb.ini, then\n"
		        "                       $XDG_CONFIG_HOME/tfgb/tfgb.ini, then %s/tfgb.ini)\n",
		        TFGB_DATADIR);
	if (c->flags & CMD_JOB)
		fprintf(f, "  -s SECTION.KEY=VALUE override one job key; repeatable, applied in order\n"
		        "  -f FORMAT            report format: text, csv or json (output.format)\n"
		        "  -o FILE              write the report to FILE (output.file; - is stdout)\n"
		        "  --series FILE        write the sampled resource use as CSV (output.series)\n"
		        "  --print-config       print the effective job as INI and exit\n"
		        "  -q, -v               quieter, more verbose\n");
	if (runs_calls(c))
		fprintf(f, "  --interval S         also report every S (>= 100ms) that interval's figures\n"
		        "  --ndjson             JSON as lines: each interval as it ends, then the result\n");
	if (c->flags & CMD_SWEEP)
		fprintf(f, "  --sweep KEY=VALUES   one run and one row per value: "
		        "SECTION.KEY=START:END:STEP\n"
		        "                       (STEP may be *N) or SECTION.KEY=V1,V2,...; given 2 or 3\n"
		        "                       times, one run per point of the grid (first key outermost)\n");
	if (c->flags & CMD_TASK)
		fprintf(f, "  --task N             this process's index (PS index for serve)\n");
	if (c->flags & CMD_LIST)
		fprintf(f, "  --list               show the model's variables, placement and size "
		        "classes, run nothing\n");
	if (c->flags & CMD_INI)
		fprintf(f, "  --ini                print a [payload] section pinning the exact layout\n");
	fprintf(f, "\nSee 'tfgb help %s' for the manual.\n", c->name);
}

static void usage_all(FILE *f)
{
	fprintf(f, "usage: tfgb COMMAND [OPTIONS]\n\ncommands:\n");
	for (const struct cmd *c = commands; c->name; c++)
		fprintf(f, "  %-11s %s\n", c->name, c->summary);
	fprintf(f, "\nSee 'tfgb help COMMAND' for a command's manual, 'tfgb help tfgb.ini' for job files.\n");
}

static const char *opt_name_of(int id)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == id)
			return o->name;
	return "?";
}

/* "unknown option '--prnt'; did you mean '--print-config'?" */
static void unknown_option(const struct cmd *c, const char *arg, int optopt_)
{
	const char *names[sizeof long_opts / sizeof long_opts[0]];
	char word[64];
	size_t n = 0;
	int at;

	if (optopt_ && optopt_ < 256 && arg && arg[0] == '-' && arg[1] != '-') {
		for (const struct option *o = long_opts; o->name; o++)
			if (o->val == optopt_ && o->has_arg) {
				tfgb_error("option '-%c' needs a value; see 'tfgb %s -h'", optopt_, c->name);
				return;
			}
		tfgb_error("unknown option '-%c' for '%s'; see 'tfgb %s -h'", optopt_, c->name, c->name);
		return;
	}
	if (!arg) {
		tfgb_error("bad option for '%s'; see 'tfgb %s -h'", c->name, c->name);
		return;
	}
	snprintf(word, sizeof word, "%s", arg + strspn(arg, "-"));
	word[strcspn(word, "=")] = 0;
	for (const struct option *o = long_opts; o->name; o++)
		if (!strcmp(o->name, word) && o->has_arg) {
			tfgb_error("option '--%s' needs a value; see 'tfgb %s -h'", word, c->name);
			return;
		}
	for (const struct option *o = long_opts; o->name; o++)
		names[n++] = o->name;
	names[n] = NULL;
	at = opt_suggest(word, names);
	if (at >= 0)
		tfgb_error("unknown option '%s'; did you mean '--%s'?", arg, names[at]);
	else
		tfgb_error("unknown option '%s' for '%s'; see 'tfgb %s -h'", arg, c->name, c->name);
}

/* Sets output.KEY to value as option opt does (-f, -o, --series), after the
 * pos - 1 -s: an error names the option, not an -s position. */
static int option_set(struct job *j, const char *opt, const char *key, const char *value,
                      int pos, struct err *err)
{
	char *kv = NULL, loc[24];

	if (asprintf(&kv, "output.%s=%s", key, value) < 0) {
		err_set(err, "%s: out of memory", opt);
		return -1;
	}
	if (job_override(j, kv, pos, err) < 0) {
		struct err was = *err;
		snprintf(loc, sizeof loc, "-s #%d: ", pos);
		if (!strncmp(was.msg, loc, strlen(loc)))
			err_set(err, "%s: %s", opt, was.msg + strlen(loc));
		free(kv);
		return -1;
	}
	free(kv);
	job_key_option(j, "output", key, opt);
	return 0;
}

/* A process of an emulated run (netem.h) was told so by its launcher: its
 * PSs are behind the link. */
static void net_inherit(struct job *j)
{
	if (getenv(NETEM_ENV))
		snprintf(j->net_ps_host, sizeof j->net_ps_host, "%s", getenv(NETEM_ENV));
}

/* Loads the job: built-in defaults, then the file, then -s in order, then
 * -f and -o (shortcuts for -s output.format=, -s output.file=).  The file
 * is read once, into t->job_text (a pipe gives its bytes to one read only):
 * a JSON result's job (tfgb rerun, -c RESULT.json; `result` when only a
 * result will do) or a job file. */
static int load_job(struct tfgb *t, const char *config, int result, char **sets, int nsets,
                    const char *fmt, const char *outfile, const char *series)
{
	static char found[4096];
	struct err err;
	int inherited, one = result; /* tfgb rerun: one job, not a sweep's */

	if (job_init(&t->job) < 0) {
		tfgb_error("out of memory");
		return TFGB_EXIT_FAIL;
	}
	if (!config && job_find_default(found, sizeof found) == 0)
		config = found;
	t->job_path = config;
	/* started again for job.allocator: the job comes from the first start,
	 * its file is not read again (a pipe cannot be) */
	if ((inherited = alloc_job_inherited(&t->job, config, &err)) < 0)
		goto bad;
	if (config && !inherited) {
		size_t max = result ? JSONR_MAX_LEN : JOB_TEXT_MAX;
		if (input_read(config, result ? "result" : "job file", max, JSONR_MAX_LEN,
		               &t->job_text, &t->job_len, &err) < 0)
			goto bad;
		result = result || rerun_is_result(t->job_text);
	}
	if (inherited) {
		/* the -s, -f, -o and --series below apply again, as the first time */
	} else if (result) {
		char name[4200], *text;
		int rc;
		if (rerun_read(config, t->job_text, t->job_len, one, NULL, &text, &err) < 0)
			goto bad;
		snprintf(name, sizeof name, "%s#job", config); /* line numbers are the job's */
		rc = job_load_string(&t->job, name, text, &err);
		free(text);
		if (rc < 0)
			goto bad;
	} else if (config && job_load_text(&t->job, config, t->job_text, t->job_len, &err) < 0) {
		goto bad;
	}
	for (int i = 0; i < nsets; i++)
		if (job_override(&t->job, sets[i], i + 1, &err) < 0)
			goto bad;
	if (!inherited && result && !job_secrets_set(&t->job, NULL, 0)) {
		/* results never record a secret: say what this run goes without */
		char withheld[200];
		rerun_withheld(config, t->job_text, t->job_len, withheld, sizeof withheld);
		if (withheld[0] && !t->quiet)
			fprintf(stderr, "tfgb: note: %s's run set %s, which results do not record; "
			        "this run goes without (as a launcher that starts its own PS 0 can); "
			        "against a tfgb serve started with it, add -s %s=...\n", config,
			        withheld, withheld);
	}
	if (fmt) {
		/* checked here so that the message names -f, not an -s position */
		const struct opt_def *d = job_key_find("output", "format");
		struct err why;
		int f;
		if (opt_parse(d, &f, fmt, 0, &why) < 0) {
			tfgb_error("-f %s: %s", fmt, why.msg);
			return TFGB_EXIT_USAGE;
		}
		if (option_set(&t->job, "-f", "format", fmt, nsets + 1, &err) < 0)
			goto bad;
	}
	if (outfile && option_set(&t->job, "-o", "file", outfile, nsets + 1 + !!fmt, &err) < 0)
		goto bad;
	if (series && option_set(&t->job, "--series", "series", series,
	                         nsets + 1 + !!fmt + !!outfile, &err) < 0)
		goto bad;
	if (job_validate(&t->job, &err) < 0)
		goto bad;
	net_inherit(&t->job);
	if (t->verbose)
		fprintf(stderr, "tfgb: job from %s\n", config ? config : "built-in defaults");
	return TFGB_EXIT_OK;
bad:
	tfgb_error("%s", err.msg);
	return TFGB_EXIT_USAGE;
}

/* What the command line gave, besides struct tfgb's own fields. */
struct cli {
	char **sets; /* -s values, nsets of them */
	int nsets, print_config;
	const char *config, *fmt, *outfile, *series;
	const char *sweep[SWEEP_KEYS_MAX + 1]; /* --sweep, nsweep of them: one, or a grid's */
	int nsweep;
};

/* Whether command c takes option opt (getopt_long's value). */
static int option_allowed(const struct cmd *c, int opt)
{
	switch (opt) {
	case 'c':
		return (c->flags & CMD_JOB) && !(c->flags & CMD_RESULT);
	case 'f': case 'o': case 's': case 'q': case 'v': case OPT_PRINT_CONFIG: case OPT_SERIES:
		return (c->flags & CMD_JOB) != 0;
	case OPT_TASK:
		return (c->flags & CMD_TASK) != 0;
	case OPT_INI_FLAG:
		return (c->flags & CMD_INI) != 0;
	case OPT_LIST:
		return (c->flags & CMD_LIST) != 0;
	case OPT_INTERVAL: case OPT_NDJSON:
		return runs_calls(c);
	case OPT_SWEEP:
		return (c->flags & CMD_SWEEP) != 0;
	}
	return 1;
}

/* One option's value into t or o: 0, or an exit status (said). */
static int take_option(int opt, struct tfgb *t, struct cli *o)
{
	int64_t v;

	switch (opt) {
	case 'c': o->config = optarg; break;
	case 's': o->sets[o->nsets++] = optarg; break;
	case 'q': t->quiet = 1; break;
	case 'v': t->verbose++; break;
	case OPT_PRINT_CONFIG: o->print_config = 1; break;
	case OPT_INI_FLAG: t->ini = 1; break;
	case OPT_LIST: t->list = 1; break;
	case 'f': o->fmt = optarg; break;
	case 'o': o->outfile = optarg; break;
	case OPT_SERIES: o->series = optarg; break;
	case OPT_NDJSON: t->ndjson = 1; break;
	case OPT_INTERVAL:
		/* below 100 ms the lines would be mostly formatting and noise */
		if (opt_parse_duration(optarg, &t->interval_ns) < 0 ||
		    t->interval_ns < TFGB_INTERVAL_MIN_NS || t->interval_ns > 86400000000000ull) {
			tfgb_error("--interval %s: must be a duration in [100ms, 24h], "
			           "like 1s or 500ms", optarg);
			return TFGB_EXIT_USAGE;
		}
		break;
	case OPT_SWEEP:
		if (o->nsweep == SWEEP_KEYS_MAX) {
			tfgb_error("--sweep is given more than %d times: a grid sweeps 1 to %d keys",
			           SWEEP_KEYS_MAX, SWEEP_KEYS_MAX);
			return TFGB_EXIT_USAGE;
		}
		o->sweep[o->nsweep++] = optarg;
		break;
	case OPT_TASK:
		if (opt_parse_int(optarg, &v) < 0 || v < 0 || v > 65535) {
			tfgb_error("--task %s: must be a whole number in [0, 65535]", optarg);
			return TFGB_EXIT_USAGE;
		}
		t->task = (int)v;
		break;
	}
	return 0;
}

/* The options of command c, into t and o; t->argc and t->argv get the
 * operands.  -1 to go on, or an exit status (-h, an error said). */
static int parse_options(const struct cmd *c, int argc, char **argv, struct tfgb *t,
                         struct cli *o)
{
	int opt, rc;

	opterr = 0;
	optind = 1;
	/* a result file may come before its options: tfgb rerun R.json -s ... */
	while ((opt = getopt_long(argc, argv, c->flags & CMD_RESULT ? "c:s:f:o:qvh" : "+c:s:f:o:qvh",
	                          long_opts, NULL)) != -1) {
		if (opt == 'h') {
			usage_of(c, stdout);
			return TFGB_EXIT_OK;
		}
		if (opt == '?' || opt == ':') {
			unknown_option(c, argv[optind - 1], optopt);
			return TFGB_EXIT_USAGE;
		}
		if (!option_allowed(c, opt)) {
			if (opt < 256)
				tfgb_error("option '-%c' is not used by '%s'", opt, c->name);
			else
				tfgb_error("option '--%s' is not used by '%s'", opt_name_of(opt), c->name);
			return TFGB_EXIT_USAGE;
		}
		if ((rc = take_option(opt, t, o)) != 0)
			return rc;
	}
	t->argc = argc - optind;
	t->argv = argv + optind;
	return -1;
}

/* A command's job: the result file's or the layers of -c, -s, -f and -o,
 * validated; then the sweep's spec, --print-config and the report file's
 * place.  -1 to run the command, or an exit status (said). */
static int prepare_job(const struct cmd *c, struct tfgb *t, struct cli *o, struct sweep_grid *sw)
{
	int rc;

	if (c->flags & CMD_RESULT) {
		if (t->argc != 1) {
			if (t->argc)
				tfgb_error("unexpected argument '%s'; '%s' takes one result file",
				           t->argv[1], c->name);
			else
				tfgb_error("missing the result file: tfgb %s RESULT.json", c->name);
			return TFGB_EXIT_USAGE;
		}
		o->config = t->argv[0]; /* checked as a result by load_job */
		t->argc = 0;
	}
	if (t->argc > 0) {
		tfgb_error("unexpected argument '%s'; job settings go in -c FILE or -s SECTION.KEY=VALUE",
		           t->argv[0]);
		return TFGB_EXIT_USAGE;
	}
	rc = load_job(t, o->config, (c->flags & CMD_RESULT) != 0, o->sets, o->nsets, o->fmt,
	              o->outfile, o->series);
	if (rc != TFGB_EXIT_OK)
		return rc;
	if (t->ndjson && (t->job.format != FMT_JSON || o->nsweep)) {
		tfgb_error("--ndjson: only for one run's JSON output (-f json, no --sweep)");
		return TFGB_EXIT_USAGE;
	}
	/* --sweep: its spec is checked before anything else happens */
	if (o->nsweep) {
		struct err why;
		if (t->interval_ns) {
			tfgb_error("--interval and --sweep do not go together: a sweep "
			           "prints one row per run, not lines while it runs");
			return TFGB_EXIT_USAGE;
		}
		for (int i = 0; i < o->nsweep; i++)
			if (sweep_grid_add(sw, o->sweep[i], &why) < 0) {
				tfgb_error("%s", why.msg);
				return TFGB_EXIT_USAGE;
			}
	}
	if (o->print_config) {
		job_print_ini(&t->job, stdout);
		return TFGB_EXIT_OK;
	}
	/* the job's malloc, before any thread: may start this program again */
	if (runs_calls(c) || c->fn == cmd_serve || c->fn == cmd_train || c->fn == cmd_collective) {
		struct err aerr;
		if ((rc = alloc_apply(&t->job, main_argv, &aerr)) < 0) {
			tfgb_error("%s", aerr.msg);
			return rc == -2 ? TFGB_EXIT_USAGE : TFGB_EXIT_FAIL;
		}
	}
	/* every output's place, before any work (and after a start again for
	 * the malloc: a FIFO's reader keeps the one open end it finds) */
	return outfile_check_job(t);
}

static int run(const struct cmd *c, int argc, char **argv, const char *prog)
{
	struct tfgb t = {.prog = prog, .cmd = c->name, .out = stdout, .task = -1};
	struct cli o = {.sets = calloc((size_t)argc + 2, sizeof *o.sets)};
	struct sweep_grid sw = {0};
	int rc;

	if (!o.sets) {
		tfgb_error("out of memory");
		return TFGB_EXIT_FAIL;
	}
	if (c->flags & CMD_ARGS) { /* its options are its own */
		t.argc = argc;
		t.argv = argv;
		rc = -1;
	} else {
		rc = parse_options(c, argc, argv, &t, &o);
	}
	if (rc < 0 && (c->flags & CMD_JOB))
		rc = prepare_job(c, &t, &o, &sw);
	else if (rc < 0 && t.argc > 0 && !*c->usage && !(c->flags & CMD_ARGS)) {
		tfgb_error("unexpected argument '%s'; '%s' takes none", t.argv[0], c->name);
		rc = TFGB_EXIT_USAGE;
	}
	free(o.sets);
	if (rc < 0) {
		rc = o.nsweep ? sweep_run(&t, &sw) : c->fn(&t);
		if (t.out && t.out != stdout && fclose(t.out) != 0 && rc == TFGB_EXIT_OK) {
			tfgb_error("cannot write report to '%s': %s", t.job.file, strerror(errno));
			rc = TFGB_EXIT_FAIL;
		} else if (t.out == stdout && fflush(stdout) != 0 && rc == TFGB_EXIT_OK) {
			tfgb_error("cannot write report: %s", strerror(errno));
			rc = TFGB_EXIT_FAIL;
		}
	}
	sweep_grid_free(&sw);
	if (c->flags & CMD_JOB)
		job_free(&t.job);
	free(t.job_text);
	return rc;
}

/* Whether name is a transport with a page of its own (tfgb-NAME.7, such
 * as tfgb-verbs(7) and tfgb-mpi(7)): in the built tree next to the binary
 * or installed. */
static int transport_page(const char *name)
{
	char path[PATH_MAX + 96], dir[PATH_MAX];
	int known = 0;

	for (int i = 0; job_transport_names()[i] && !known; i++)
		known = !strcmp(job_transport_names()[i], name);
	if (!known)
		return 0;
	snprintf(path, sizeof path, "%s/man7/tfgb-%s.7", TFGB_MANDIR, name);
	if (access(path, R_OK) == 0)
		return 1;
	if (tfgb_exe_dir(dir, sizeof dir) < 0)
		return 0;
	snprintf(path, sizeof path, "%s/man/tfgb-%s.7", dir, name);
	return access(path, R_OK) == 0;
}

static int cmd_help(struct tfgb *t)
{
	char page[64], path[PATH_MAX + 96], dir[PATH_MAX];
	const struct cmd *c = NULL;
	const char *sect = "1";
	pid_t pid;
	int status;

	if (t->argc == 0) {
		usage_all(stdout);
		return TFGB_EXIT_OK;
	}
	if (!strcmp(t->argv[0], "tfgb"))
		snprintf(page, sizeof page, "tfgb");
	else if (!strcmp(t->argv[0], "tfgb.ini") || !strcmp(t->argv[0], "ini")) {
		snprintf(page, sizeof page, "tfgb.ini");
		sect = "5";
	} else if ((c = find_cmd(t->argv[0]))) {
		snprintf(page, sizeof page, "tfgb-%s", c->name);
	} else if (transport_page(t->argv[0])) { /* `tfgb help verbs`, `tfgb help mpi` */
		snprintf(page, sizeof page, "tfgb-%s", t->argv[0]);
		sect = "7";
	} else {
		const char *names[16];
		int n = 0, at;
		for (const struct cmd *k = commands; k->name; k++)
			names[n++] = k->name;
		names[n] = NULL;
		at = opt_suggest(t->argv[0], names);
		if (at >= 0)
			tfgb_error("no manual for '%s'; did you mean '%s'?", t->argv[0], names[at]);
		else
			tfgb_error("no manual for '%s'; commands are listed by 'tfgb help'", t->argv[0]);
		return TFGB_EXIT_USAGE;
	}
	/* a page next to the binary (a built source tree: gen/man has the
	 * version filled in, man/ the source) wins over the installed one */
	path[0] = 0;
	if (tfgb_exe_dir(dir, sizeof dir) == 0) {
		snprintf(path, sizeof path, "%s/gen/man/%s.%s", dir, page, sect);
		if (access(path, R_OK) != 0)
			snprintf(path, sizeof path, "%s/man/%s.%s", dir, page, sect);
		if (access(path, R_OK) != 0)
			path[0] = 0;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (path[0])
			execlp("man", "man", "-l", path, (char *)NULL);
		else
			execlp("man", "man", sect, page, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0)
		return TFGB_EXIT_OK;
	/* no man(1), or no page: the built-in usage still helps */
	if (c)
		usage_of(c, stdout);
	else
		usage_all(stdout);
	return TFGB_EXIT_OK;
}

/* Whether transport i has a line of its own in `tfgb version`. */
static int version_line(int i)
{
	struct err err;
	const struct tr_ops *ops = job_transport_built(i) ? tr_find(i, &err) : NULL;

	return ops && (ops->caps & TR_CAP_VERSION_LINE) && ops->version;
}

static int cmd_version(struct tfgb *t)
{
	char text[128];
	struct err err;

	(void)t;
	printf("tfgb %s\n", TFGB_VERSION);
	if (*sysinfo_build())
		printf("build %s\n", sysinfo_build());
	for (int i = 0; job_transport_names()[i]; i++)
		if (version_line(i))
			printf("%s\n", tr_find(i, &err)->version());
	sysinfo_tls_library(text, sizeof text);
	printf("tls: %s\n", *text ? text : "gRPC's TLS library (it does not name itself)");
	printf("protobuf-c %s\n", protobuf_c_version());
	printf("features:");
	for (const char *const *f = sysinfo_features(); *f; f++)
		printf(" %s", *f);
	printf("\n");
	for (int i = 0; job_transport_names()[i]; i++)
		if (!version_line(i)) /* else its library's line above */
			printf("%s: %s\n", job_transport_names()[i],
			       job_transport_built(i) ? "compiled in" : "not compiled in");
	printf("numa: %s\n", TFGB_HAVE_NUMA ? "compiled in" : "not compiled in (NUMA=0)");
	{
		struct alloc_info a;
		char atext[300];

		alloc_detect(&a);
		alloc_text(&a, atext, sizeof atext);
		printf("allocator: %s (this process; a run applies job.allocator)\n", atext);
	}
	return TFGB_EXIT_OK;
}

/* `tfgb verbs-info` and any other command a transport lists (tr_info) */
static int cmd_transport_info(struct tfgb *t)
{
	struct err err = {{0}};

	if (tr_info(t->cmd, stdout, &err) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	main_argv = argv;
	if (train_registry_init() < 0) {
		tfgb_error("the transport registry does not fit the job model's tables (job.h)");
		return TFGB_EXIT_FAIL;
	}
	if (argc < 2) {
		/* one line, like every error; 'tfgb help' has the summaries */
		char list[256];
		size_t o = 0;
		for (c = commands; c->name && o < sizeof list; c++)
			o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", o ? ", " : "", c->name);
		tfgb_error("missing command, one of: %s; see 'tfgb help'", list);
		return TFGB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage_all(stdout);
		return TFGB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return cmd_version(NULL);
	c = find_cmd(argv[1]);
	if (!c) {
		const char *names[16];
		int n = 0, at;
		for (const struct cmd *k = commands; k->name; k++)
			names[n++] = k->name;
		names[n] = NULL;
		at = opt_suggest(argv[1], names);
		if (at >= 0)
			tfgb_error("unknown command '%s'; did you mean '%s'?", argv[1], names[at]);
		else
			tfgb_error("unknown command '%s'; see 'tfgb help'", argv[1]);
		return TFGB_EXIT_USAGE;
	}
	return run(c, argc - 1, argv + 1, argv[0]);
}
