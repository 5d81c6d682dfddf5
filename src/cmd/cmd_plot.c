/* cmd_plot.c - `tfgb plot`: the paper's figures drawn from result files.
 *
 * The files become points (plot_read.c; a collective's and the all-reduce
 * strategy's, plot_coll.c); the figure is chosen from what they hold: a
 * sweep is drawn as lines against its swept value (message size on log
 * axes), a collective's sizes as lines against the size (nccl-tests'
 * busbw), single results as groups of bars, the key on x being
 * the first one that differs among PS x workers (throughput), payload
 * scheme, iovec count, payload size, calls in flight, mode, transport.
 * Every other key that differs (and is not implied by those chosen) names
 * the series.  --figure and --x choose explicitly.  gnuplot draws it
 * (plot_gp.c) into a temporary file renamed onto -o once complete.
 */
#include "cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "plot.h"
#include "plot_fig.h"
#include "plot_trace.h"

/* How long gnuplot may take to draw one figure. */
#define PLOT_GP_TIMEOUT_S 60

static const struct option plot_long[] = {
	{"output", required_argument, NULL, 'o'},
	{"figure", required_argument, NULL, 'F'},
	{"metric", required_argument, NULL, 'm'},
	{"x", required_argument, NULL, 'x'},
	{"errors", required_argument, NULL, 'e'},
	{"title", required_argument, NULL, 't'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

static void plot_usage(FILE *f)
{
	fprintf(f, "usage: tfgb plot -o FIGURE.png|FIGURE.svg [--figure lines|bars|percentiles]\n"
	        "                 [--x KEY] [--metric M] [--errors minmax|stddev|p99]\n"
	        "                 [--title TEXT] [-q]\n"
	        "                 RESULT...\n"
	        "       tfgb plot -o FIGURE.png|FIGURE.svg [--title TEXT] [-q] TIMELINE\n\n"
	        "  draw results (JSON, a sweep's JSON or CSV, tfgb's CSV) with gnuplot;\n"
	        "  a timeline (output.timeline): each rank's step time and its wait (at\n"
	        "  the barrier, or in its exchanges)\n\n"
	        "  -o FILE          the figure: PNG or SVG, by the name's ending\n"
	        "  --figure KIND    lines (against a numeric x) or bars (a group per value\n"
	        "                   of x); default: lines for a numeric sweep, else bars;\n"
	        "                   percentiles: each result's latency distribution from its\n"
	        "                   histogram (JSON), against the percentile\n"
	        "  --x KEY          the key on x: sweep, transport, strategy, op, algorithm,\n"
	        "                   mode, scheme, iovecs, bytes, shape, workers, inflight, rpc,\n"
	        "                   tls, model, delay, rate, loss, congestion, host, file\n"
	        "  --metric M       avg, p50, p90, p99, p999 (latency, microseconds; train:\n"
	        "                   step time; collective: time per operation), rpc (RPC/s;\n"
	        "                   train: steps/s), MBps, Gbps, busbw, algbw (collective,\n"
	        "                   GB/s); default: p50 for latency, MBps for bandwidth, rpc\n"
	        "                   for throughput, avg for train, busbw for collective\n"
	        "  --errors WHICH   repeats' error bars: minmax of the runs or stddev (mean\n"
	        "                   +- one sample standard deviation); p99: latency's whisker\n"
	        "                   up to the 99th percentile (default for latency without\n"
	        "                   --metric), else minmax\n"
	        "  --title TEXT     the figure's title instead of the one made up\n"
	        "  -q               no gnuplot warnings on stderr\n"
	        "\nSee 'tfgb help plot' for the manual.\n");
}

static int parse_choice(const char *opt, const char *v, const char *const *names, int *out)
{
	char list[128] = "";

	for (int i = 0; names[i]; i++) {
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
		         names[i]);
	}
	tfgb_error("%s %s: must be one of %s", opt, v, list);
	return -1;
}

/* -1 to go on, or an exit status. */
static int plot_options(struct tfgb *t, struct plot_opts *o)
{
	static const char *const styles[] = {"lines", "bars", "percentiles", NULL};
	static const char *const errbars[] = {"minmax", "stddev", "p99", NULL};
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(t->argc, t->argv, "o:qh", plot_long, NULL)) != -1) {
		switch (opt) {
		case 'h': plot_usage(stdout); return TFGB_EXIT_OK;
		case 'o': o->out = optarg; break;
		case 'q': o->quiet = 1; break;
		case 't': o->title = optarg; break;
		case 'F':
			if (parse_choice("--figure", optarg, styles, &o->style) < 0)
				return TFGB_EXIT_USAGE;
			break;
		case 'e':
			if (parse_choice("--errors", optarg, errbars, &o->errbar) < 0)
				return TFGB_EXIT_USAGE;
			break;
		case 'm':
			if ((o->metric = plot_metric_find(optarg)) < 0) {
				tfgb_error("--metric %s: must be one of avg, p50, p90, p99, p999, rpc, "
				           "MBps, Gbps, busbw, algbw", optarg);
				return TFGB_EXIT_USAGE;
			}
			break;
		case 'x':
			if ((o->xkey = plot_key_find(optarg)) < 0) {
				tfgb_error("--x %s: must be one of sweep, transport, strategy, op, "
				           "algorithm, mode, scheme, iovecs, bytes, shape, workers, inflight, "
				           "rpc, tls, model, delay, rate, loss, congestion, host, file", optarg);
				return TFGB_EXIT_USAGE;
			}
			break;
		default:
			tfgb_error("unknown option '%s' for 'plot'; see 'tfgb plot -h'",
			           t->argv[optind - 1]);
			return TFGB_EXIT_USAGE;
		}
	}
	return -1;
}

/* The name's ending picks the format. */
static int plot_check_out(struct plot_opts *o)
{
	size_t n;

	if (!o->out) {
		tfgb_error("plot needs -o FIGURE.png or -o FIGURE.svg");
		return TFGB_EXIT_USAGE;
	}
	n = strlen(o->out);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)o->out[i] < 0x20 || o->out[i] == 0x7f) {
			tfgb_error("-o: the figure's name holds a control character");
			return TFGB_EXIT_USAGE;
		}
	if (n > 4 && !strcasecmp(o->out + n - 4, ".svg"))
		o->svg = 1;
	else if (!(n > 4 && !strcasecmp(o->out + n - 4, ".png"))) {
		tfgb_error("-o %s: a figure is written as PNG or SVG, chosen by the name's ending "
		           "(.png, .svg)", o->out);
		return TFGB_EXIT_USAGE;
	}
	return -1;
}

/* The figure's place, before anything is read or drawn: not a directory,
 * not one of the results it draws (it would be replaced by the figure). */
static int plot_check_place(const struct plot_opts *o, char **names, int n)
{
	struct outfile_input *in = calloc((size_t)n, sizeof *in);
	struct err why;
	int fifo, rc = -1;

	if (!in) {
		tfgb_error("plot: out of memory");
		return TFGB_EXIT_FAIL;
	}
	for (int i = 0; i < n; i++)
		in[i] = (struct outfile_input){names[i], "a result to draw"};
	if (outfile_place(o->out, in, n, &fifo, &why) < 0) {
		tfgb_error("-o %s: cannot write the figure there: %s", o->out, why.msg);
		rc = TFGB_EXIT_USAGE;
	}
	free(in);
	return rc;
}

/* ---- the command ---- */

/* What writes a figure's script: a result's figure, or a timeline's. */
struct plot_what {
	const struct plot_set *s;
	const struct plot_fig *f;
	const struct plot_trace *t;
	const char *title;
};

/* Draws w into o->out through a temporary file next to it.  0, or an
 * exit status (said). */
static int plot_draw(const struct plot_what *w, const struct plot_opts *o)
{
	struct err err;
	char *tmp = malloc(strlen(o->out) + 16), *script = NULL;
	size_t len = 0;
	FILE *ms;
	int fd, rc = TFGB_EXIT_FAIL;
	mode_t mask;
	struct stat st;

	if (!tmp || !(ms = open_memstream(&script, &len))) {
		free(tmp);
		tfgb_error("plot: out of memory");
		return TFGB_EXIT_FAIL;
	}
	sprintf(tmp, "%s.tmp-XXXXXX", o->out);
	if ((fd = mkstemp(tmp)) < 0) {
		tfgb_error("cannot write the figure to '%s': %s", o->out, strerror(errno));
		fclose(ms);
		goto out;
	}
	/* mkstemp's 0600 would outlive the rename: the mode a result file of
	 * -o gets, 0666 less the umask */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		tfgb_error("cannot write the figure to '%s': %s", o->out, strerror(errno));
		close(fd);
		fclose(ms);
		goto fail;
	}
	close(fd);
	if (w->t)
		plot_trace_script(w->t, w->title, tmp, o->svg, ms);
	else
		plot_gp_script(w->f, w->s, tmp, o->svg, ms);
	if (fclose(ms) != 0) {
		tfgb_error("plot: out of memory");
	} else if ((fd = plot_gp_run(script, len, PLOT_GP_TIMEOUT_S, &tfgb_stop, &err)) == -1) {
		if (errno == ENOENT)
			tfgb_error("plot: no gnuplot to run ('%s' not found); install it "
			           "(Debian: apt-get install gnuplot-nox), or name it in GNUPLOT",
			           getenv("GNUPLOT") && *getenv("GNUPLOT") ? getenv("GNUPLOT") : "gnuplot");
		else
			tfgb_error("plot: cannot start gnuplot: %s", strerror(errno));
	} else if (fd == -2 && tfgb_stop) {
		tfgb_error("plot: interrupted: gnuplot killed, no figure written");
	} else if (fd == -2) {
		tfgb_error("plot: gnuplot failed: %s", err.msg);
	} else if (stat(tmp, &st) != 0 || !st.st_size) {
		/* a gnuplot that exits 0 without writing: no empty figure */
		tfgb_error("plot: gnuplot wrote no figure%s%s", *err.msg ? ": " : "", err.msg);
	} else if (rename(tmp, o->out) != 0) {
		tfgb_error("cannot write the figure to '%s': %s", o->out, strerror(errno));
	} else {
		if (*err.msg && !o->quiet)
			tfgb_error("plot: gnuplot says: %s", err.msg);
		rc = TFGB_EXIT_OK;
	}
fail:
	if (rc != TFGB_EXIT_OK)
		unlink(tmp);
out:
	free(script);
	free(tmp);
	return rc;
}

/* A timeline (output.timeline) drawn: an exit status; -1 when path is not
 * one (a result, read as such). */
static int plot_timeline(const char *path, const struct plot_opts *o)
{
	struct plot_trace tr;
	struct err err;
	int rc = plot_trace_read(path, &tr, &err);

	if (rc <= 0) {
		if (rc < 0)
			tfgb_error("%s", err.msg);
		return rc < 0 ? TFGB_EXIT_USAGE : -1;
	}
	if (o->style >= 0 || o->metric >= 0 || o->xkey >= 0 || o->errbar >= 0) {
		tfgb_error("plot: '%s' is a timeline: it draws each track's step time (and wait) over "
		           "its steps, and takes no --figure, --metric, --x or --errors", path);
		rc = TFGB_EXIT_USAGE;
	} else {
		rc = plot_draw(&(struct plot_what){.t = &tr, .title = o->title ? o->title : *tr.what
		                                   ? tr.what : "a tfgb timeline"}, o);
	}
	plot_trace_free(&tr);
	return rc;
}

int cmd_plot(struct tfgb *t)
{
	struct plot_opts o = {.style = -1, .metric = -1, .xkey = -1, .errbar = -1};
	struct plot_set s = {0};
	struct plot_fig *f = NULL;
	struct err err;
	unsigned keys, how = 0;
	int rc;

	if ((rc = plot_options(t, &o)) >= 0 || (rc = plot_check_out(&o)) >= 0)
		return rc;
	if (optind >= t->argc) {
		tfgb_error("plot needs result files: tfgb plot -o %s RESULT...", o.out);
		return TFGB_EXIT_USAGE;
	}
	s.names = t->argv + optind;
	s.nfiles = t->argc - optind;
	s.hist = o.style == PLOT_PERCENTILES;
	if ((rc = plot_check_place(&o, s.names, s.nfiles)) >= 0)
		return rc;
	tfgb_catch_signals(); /* Ctrl-C: gnuplot killed, no figure left */
	if (s.nfiles == 1 && (rc = plot_timeline(s.names[0], &o)) >= 0)
		return rc;
	for (int i = 0; i < s.nfiles; i++)
		if (plot_read(&s, s.names[i], i, &err) < 0) {
			tfgb_error("%s", err.msg);
			rc = TFGB_EXIT_USAGE;
			goto out;
		}
	if ((rc = plot_check_set(&s, &o)) >= 0 || (rc = plot_choose_x(&s, &o)) >= 0)
		goto out;
	if (!(f = calloc(1, sizeof *f))) {
		tfgb_error("plot: out of memory");
		rc = TFGB_EXIT_FAIL;
		goto out;
	}
	keys = plot_series_keys(&s, o.xkey);
	if ((rc = plot_layout(&s, &o, keys, f, &how)) != 0)
		goto out;
	plot_channels(&s, keys, f);
	plot_axes(&s, f);
	plot_xunit(&s, f);
	plot_xcat(f);
	if (!f->logy)
		plot_scale(&s, f); /* a log axis spans the decades in microseconds */
	plot_series_logy(f);
	plot_x2bytes(&s, f);
	plot_title(&s, &o, keys, f);
	plot_notes(&s, how, f);
	rc = plot_draw(&(struct plot_what){.s = &s, .f = f}, &o);
out:
	if (f)
		free(f->item);
	free(f);
	plot_set_free(&s);
	return rc;
}
