/* plot_gp.c - `tfgb plot`'s gnuplot script, and gnuplot run on it
 * (plot.h).
 *
 * The script carries its data inline ($sN datablocks), so gnuplot needs no
 * file but the image it writes: nothing of the source tree is read.  Text
 * from the results goes out quoted (double quotes, backslash escapes, no
 * control characters) and marked noenhanced, so no value can be taken
 * for a command or markup; only tfgb's own words (the y axis's label,
 * the tics of a log axis) are enhanced text, for their superscripts.
 */
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Image size in pixels (SVG: in its own units). */
#define PLOT_WIDTH 960
#define PLOT_HEIGHT 600
/* Explicit tics on x, at most this many: one every few values of up to
 * PLOT_XVALUES_MAX (more: gnuplot's own). */
#define PLOT_TICS_MAX 24
#define PLOT_XVALUES_MAX 256
/* gnuplot's line colours 1 to 8, then they come round again. */
#define PLOT_COLOURS 8
/* Marked (status not ok) results are drawn in this colour. */
#define PLOT_MARK_RGB "#d62728"

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2 ? 2 :
	        (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* s as a gnuplot double-quoted string; "\n" in s stays a line break,
 * other control characters and bytes that are not UTF-8 become '?' (an
 * SVG must stay valid XML); a tic's label is a format for the tic's
 * value, its '%' doubled. */
static void gp_quote(FILE *f, const char *s, int tic)
{
	fputc('"', f);
	while (*s) {
		unsigned char c = (unsigned char)*s;
		int n = utf8_len((const unsigned char *)s);
		if (c == '\n')
			fputs("\\n", f);
		else if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '%' && tic)
			fputs("%%", f);
		else if (n > 1)
			fwrite(s, 1, (size_t)n, f);
		else
			fputc(c < 0x20 || c == 0x7f || !n ? '?' : c, f);
		s += n > 1 ? n : 1;
	}
	fputc('"', f);
}

static void gp_str(FILE *f, const char *s)
{
	gp_quote(f, s, 0);
}

/* s as gp_str, taken literally (no enhanced-text markup). */
void plot_gp_lit(FILE *f, const char *s)
{
	gp_str(f, s);
	fputs(" noenhanced", f);
}

void plot_gp_cmd_str(FILE *f, const char *cmd, const char *s)
{
	fprintf(f, "%s ", cmd);
	plot_gp_lit(f, s);
	fputc('\n', f);
}

void plot_gp_term(const char *out, int svg, FILE *f)
{
	if (svg) {
		fprintf(f, "set terminal svg size %d,%d dynamic font \"sans,12\"\n", PLOT_WIDTH,
		        PLOT_HEIGHT);
	} else {
		fprintf(f, "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
		        "  set terminal pngcairo size %d,%d font \"sans,11\"\n} else {\n"
		        "  set terminal png size %d,%d\n}\n", PLOT_WIDTH, PLOT_HEIGHT, PLOT_WIDTH,
		        PLOT_HEIGHT);
	}
	fprintf(f, "set termoption enhanced\nset encoding utf8\n");
	/* the name as it is, byte for byte (-o has no control character) */
	fputs("set output \"", f);
	for (; *out; out++)
		fprintf(f, *out == '"' || *out == '\\' ? "\\%c" : "%c", *out);
	fputs("\"\n", f);
}

static void gp_head(const struct plot_fig *fig, const char *out, int svg, FILE *f)
{
	char title[sizeof fig->title + sizeof fig->subtitle + 2];

	plot_gp_term(out, svg, f);
	snprintf(title, sizeof title, "%s%s%s", fig->title, *fig->subtitle ? "\n" : "",
	         fig->subtitle);
	plot_gp_cmd_str(f, "set title", title);
	plot_gp_cmd_str(f, "set xlabel", fig->xlabel);
	/* tfgb's own words, its superscripts typeset */
	fputs("set ylabel ", f);
	gp_str(f, fig->ylabel);
	fprintf(f, "\nset grid ytics\nset border %d\nset xtics nomirror\nset ytics nomirror\n",
	        fig->x2bytes ? 7 : 3);
	if (fig->x2bytes)
		plot_gp_cmd_str(f, "set x2label", "payload size");
	/* under the plot, never over it (inside, an opaque box hid the
	 * points of a grid's line that ran under it) nor beside it (the
	 * plot, narrower, cut the subtitle's long lines) */
	fprintf(f, "set key below left vertical Left reverse maxcols 2\n");
}

/* The x position of an item: bars of a group side by side around it. */
static double item_x(const struct plot_fig *fig, const struct plot_item *it)
{
	double w = 0.8 / fig->nseries;

	return fig->style == PLOT_BARS ? it->x - 0.4 + w * (it->series + 0.5) : it->x;
}

static int is_ok(const struct plot_set *s, const struct plot_item *it)
{
	return !strcmp(s->pt[it->point].status, "ok");
}

/* Datablock $sN: x, y, low, high per item of series n; a null figure
 * leaves a gap (a blank line breaks the line drawn). */
static void gp_series_data(const struct plot_fig *fig, int n, FILE *f)
{
	fprintf(f, "$s%d << EOD\n", n);
	for (size_t i = 0; i < fig->nitem; i++) {
		const struct plot_item *it = &fig->item[i];
		if (it->series != n)
			continue;
		if (isnan(it->y)) {
			fputc('\n', f);
			continue;
		}
		/* x, y, low, high, y again where there is an error bar (NaN: none) */
		fprintf(f, "%.17g %.17g %.17g %.17g %.17g\n", item_x(fig, it), it->y, it->lo, it->hi,
		        isnan(it->lo) ? NAN : it->y);
	}
	fprintf(f, "EOD\n");
}

/* Marked results: datablock $bad, and a label naming each one's status
 * (at the bottom of the graph for a null figure).  Bit 0 when any result
 * is marked, bit 1 when $bad has a point. */
static int gp_marks(const struct plot_fig *fig, const struct plot_set *s, FILE *f)
{
	int n = 0;

	fprintf(f, "$bad << EOD\n");
	for (size_t i = 0; i < fig->nitem; i++) {
		const struct plot_item *it = &fig->item[i];
		if (is_ok(s, it))
			continue;
		n |= 1; /* marked */
		if (!isnan(it->y)) {
			fprintf(f, "%.17g %.17g\n", item_x(fig, it), it->y);
			n |= 2; /* ... and drawn */
		}
	}
	fprintf(f, "EOD\n");
	for (size_t i = 0; i < fig->nitem; i++) {
		const struct plot_item *it = &fig->item[i];
		char text[64];
		if (is_ok(s, it))
			continue;
		snprintf(text, sizeof text, "%s%s", s->pt[it->point].status,
		         isnan(it->y) ? ": no figure" : "");
		fprintf(f, "set label ");
		plot_gp_lit(f, text);
		if (isnan(it->y))
			fprintf(f, " at first %.17g, graph 0.03", item_x(fig, it));
		else
			fprintf(f, " at first %.17g, first %.17g offset 0,0.6", item_x(fig, it), it->y);
		fprintf(f, " rotate by 90 left front font \",9\" tc rgb \"%s\"\n", PLOT_MARK_RGB);
	}
	return n;
}

/* Points whose route is not the usual one (plot_route_usual): datablock
 * $route, each labelled with its route.  1 when it has a point. */
static int gp_route_marks(const struct plot_fig *fig, const struct plot_set *s, FILE *f)
{
	const char *usual = plot_route_usual(s);
	int n = 0;

	if (!usual || fig->style == PLOT_PERCENTILES)
		return 0;
	fprintf(f, "$route << EOD\n");
	for (size_t i = 0; i < fig->nitem; i++) {
		const struct plot_item *it = &fig->item[i];
		if (isnan(it->y) || !strcmp(plot_route_of(&s->pt[it->point]), usual))
			continue;
		fprintf(f, "%.17g %.17g\n", item_x(fig, it), it->y);
		n = 1;
	}
	fprintf(f, "EOD\n");
	for (size_t i = 0; i < fig->nitem && n; i++) {
		const struct plot_item *it = &fig->item[i];
		char text[48];
		if (isnan(it->y) || !strcmp(plot_route_of(&s->pt[it->point]), usual))
			continue;
		snprintf(text, sizeof text, "%s", plot_route_of(&s->pt[it->point]));
		fprintf(f, "set label ");
		plot_gp_lit(f, text);
		fprintf(f, " at first %.17g, first %.17g offset 0.8,-0.8 front font \",9\"\n",
		        item_x(fig, it), it->y);
	}
	return n;
}

/* Lines: x from the smallest value to the largest, with a margin (a point
 * or a tic at the very edge may be dropped). */
static void gp_xrange(const struct plot_fig *fig, FILE *f)
{
	double lo = INFINITY, hi = -INFINITY;

	for (size_t i = 0; i < fig->nitem; i++) {
		lo = fig->item[i].x < lo ? fig->item[i].x : lo;
		hi = fig->item[i].x > hi ? fig->item[i].x : hi;
	}
	if (fig->logx)
		fprintf(f, "set xrange [%.17g:%.17g]\n", lo / 1.2, hi * 1.2);
	else if (hi > lo)
		fprintf(f, "set xrange [%.17g:%.17g]\n", lo - (hi - lo) * 0.04, hi + (hi - lo) * 0.04);
}

/* x2bytes: the payload size of each x on top, the axes linked. */
static void gp_x2tics(const struct plot_fig *fig, const struct plot_set *s, FILE *f)
{
	int n = 0;

	fprintf(f, "set link x2\nset x2tics out (");
	for (size_t i = 0; i < fig->nitem; i++) {
		const struct plot_item *it = &fig->item[i];
		char text[PLOT_LABEL_MAX];
		size_t j = 0;
		while (j < i && fig->item[j].x != it->x)
			j++;
		if (j < i)
			continue; /* this x has its tic */
		plot_key_text(PK_BYTES, s->pt[it->point].key[PK_BYTES], text, sizeof text);
		fprintf(f, "%s", n++ ? ", " : "");
		gp_quote(f, text, 1);
		fprintf(f, " %.17g", it->x);
	}
	fprintf(f, ") noenhanced\n");
}

/* Tics at the values on x: the groups' names, or a sweep's values (sizes
 * written as sizes). */
/* Evenly spaced values (plot_xcat): a tic at each, its value. */
static void gp_cat_tics(const struct plot_fig *fig, FILE *f)
{
	fprintf(f, "set xtics (");
	for (int k = 0; k < fig->ncat; k++) {
		char text[32];
		snprintf(text, sizeof text, "%.12g", fig->xcat[k]);
		fprintf(f, "%s", k ? ", " : "");
		gp_quote(f, text, 1);
		fprintf(f, " %d", k);
	}
	fprintf(f, ") noenhanced%s\n", fig->ncat > 10 ? " rotate by -30" : "");
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void gp_xtics(const struct plot_fig *fig, const struct plot_set *s, FILE *f)
{
	double seen[PLOT_XVALUES_MAX];
	int n = 0, longest = 0, step;
	/* sizes as sizes: a size's log axis (plot_axes), not another's */
	int x_bytes = fig->logx && !*fig->xunit && fig->nitem &&
	              (fig->xkey == PK_BYTES || (fig->xkey == PK_SWEEP &&
	               !strcmp(s->pt[fig->item[0].point].sweep_unit, "B")));

	if (fig->style == PLOT_BARS) {
		fprintf(f, "set xrange [-0.6:%g]\nset xtics (", fig->ngroups - 0.4);
		for (int g = 0; g < fig->ngroups; g++) {
			fprintf(f, "%s", g ? ", " : "");
			gp_quote(f, fig->group[g], 1);
			fprintf(f, " %d", g);
			longest = (int)strlen(fig->group[g]) > longest ? (int)strlen(fig->group[g]) : longest;
		}
		fprintf(f, ") noenhanced%s\n", fig->ngroups * longest > 90 ? " rotate by -30" : "");
		if (fig->x2bytes)
			gp_x2tics(fig, s, f);
		return;
	}
	gp_xrange(fig, f);
	if (fig->ncat) {
		gp_cat_tics(fig, f);
		return;
	}
	for (size_t i = 0; i < fig->nitem; i++) {
		int k = 0;
		while (k < n && seen[k] != fig->item[i].x)
			k++;
		if (k == n && n == PLOT_XVALUES_MAX)
			return; /* too many: gnuplot's own tics, and no sizes on top */
		if (k == n)
			seen[n++] = fig->item[i].x;
	}
	/* more values than tics (a collective's 25 sizes, 8 B to 128 MiB by
	 * 2): every step-th, from the smallest */
	qsort(seen, (size_t)n, sizeof *seen, by_value);
	step = (n + PLOT_TICS_MAX - 1) / PLOT_TICS_MAX;
	fprintf(f, "set xtics (");
	for (int k = 0; k < n; k += step) {
		char v[32], text[PLOT_LABEL_MAX];
		snprintf(v, sizeof v, "%.17g", seen[k]);
		plot_key_text(x_bytes ? PK_BYTES : -1, v, text, sizeof text);
		fprintf(f, "%s", k ? ", " : "");
		gp_quote(f, text, 1);
		fprintf(f, " %.17g", seen[k]);
	}
	fprintf(f, ") noenhanced%s\n", n / step > 10 ? " rotate by -30" : "");
	if (fig->x2bytes)
		gp_x2tics(fig, s, f);
}

/* A series' legend entry: none when it is the only one (the subtitle says
 * what all share). */
static void gp_series_title(const struct plot_fig *fig, int n, FILE *f)
{
	if (fig->nseries == 1) {
		fputs("notitle", f);
		return;
	}
	fputs("title ", f);
	plot_gp_lit(f, fig->series[n]);
}

static int has_errbars(const struct plot_fig *fig, int n)
{
	for (size_t i = 0; i < fig->nitem; i++)
		if (fig->item[i].series == n && !isnan(fig->item[i].lo))
			return 1;
	return 0;
}

/* Series n's colour: its first key's (plot_channels), else by its index. */
static int gp_colour(const struct plot_fig *fig, int n)
{
	return fig->channels ? fig->colour[n] + 1 : n % PLOT_COLOURS + 1;
}

/* Series n's elements: its bars or line (a legend entry alone when it has
 * no figure at all), its error bars. */
static void gp_series_plot(const struct plot_fig *fig, int n, FILE *f)
{
	int bars = fig->style == PLOT_BARS, drawn = 0;

	for (size_t i = 0; i < fig->nitem; i++)
		drawn |= fig->item[i].series == n && !isnan(fig->item[i].y);
	if (drawn)
		fprintf(f, "%s$s%d using 1:2", n ? ", \\\n     " : "", n);
	else
		fprintf(f, "%skeyentry", n ? ", \\\n     " : "");
	/* past gnuplot's 8 colours, the same again dashed or cross-hatched */
	if (bars)
		fprintf(f, " with boxes lc %d %s", n % PLOT_COLOURS + 1, n < PLOT_COLOURS ? "" :
		        n < 2 * PLOT_COLOURS ? "fs pattern 1 border " : "fs pattern 2 border ");
	else
		fprintf(f, " with linespoints lw 2 pt 7 ps 1.2 lc %d dt %d ", gp_colour(fig, n),
		        fig->channels ? fig->dash[n] + 1 : n / PLOT_COLOURS + 1);
	gp_series_title(fig, n, f);
	if (!has_errbars(fig, n))
		return;
	if (bars)
		fprintf(f, ", \\\n     $s%d using 1:5:3:4 with yerrorbars lc rgb \"black\" pt 7 "
		        "ps 0.4 lw 1.5 notitle", n);
	else
		fprintf(f, ", \\\n     $s%d using 1:5:3:4 with yerrorbars lc %d pt 7 ps 0.4 lw 1.5 "
		        "notitle", n, gp_colour(fig, n));
}

/* The percentile on a log axis of 1/(1 - p), as HdrHistogram's plotter
 * draws it: tics from 0% to the largest percentile of the results. */
static void gp_pct_axes(const struct plot_fig *fig, const struct plot_set *s, FILE *f)
{
	static const char *const tic[] = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%",
	                                  "99.9999%", "99.99999%", "99.999999%", "99.9999999%"};
	double top = 10, x = 1;

	for (size_t i = 0; i < fig->nitem; i++) {
		const struct plot_point *p = &s->pt[fig->item[i].point];
		if (p->npct && 1 / (1 - p->pct[2 * p->npct - 2]) > top)
			top = 1 / (1 - p->pct[2 * p->npct - 2]);
	}
	fprintf(f, "set logscale x 10\nset xrange [1:%.17g]\nset xtics (\"50%%%%\" 2", top);
	for (size_t k = 0; k < sizeof tic / sizeof *tic && x <= top * 1.0001; k++, x *= 10) {
		fputs(", ", f);
		gp_quote(f, tic[k], 1);
		fprintf(f, " %.17g", x);
	}
	fprintf(f, ")\nset mxtics 10\nset grid xtics\n");
	if (fig->logy) /* powers of ten, typeset */
		fprintf(f, "set logscale y 10\nset mytics 10\nset format y \"10^{%%L}\"\n");
	else
		fprintf(f, "set yrange [0:*]\n");
}

/* Percentiles: the result of series n (one each). */
static const struct plot_point *series_point(const struct plot_fig *fig,
                                             const struct plot_set *s, int n)
{
	for (size_t i = 0; i < fig->nitem; i++)
		if (fig->item[i].series == n)
			return &s->pt[fig->item[i].point];
	return NULL;
}

/* Percentiles: series n's result as $sN, x = 1/(1 - p), y its latency. */
static void gp_pct_data(const struct plot_fig *fig, const struct plot_set *s, int n, FILE *f)
{
	const struct plot_point *p = series_point(fig, s, n);

	fprintf(f, "$s%d << EOD\n", n);
	for (size_t k = 0; p && k < p->npct; k++)
		fprintf(f, "%.17g %.17g\n", 1 / (1 - p->pct[2 * k]),
		        p->pct[2 * k + 1] / (fig->ms ? 1000 : 1));
	fprintf(f, "EOD\n");
}

/* Percentiles: series n's line, or a legend entry alone when it measured
 * no call; a status not ok is named in the legend. */
static void gp_pct_plot(const struct plot_fig *fig, const struct plot_set *s, int n, FILE *f)
{
	const struct plot_point *p = series_point(fig, s, n);
	char title[PLOT_LABEL_MAX + 48];
	int ok = p && !strcmp(p->status, "ok");

	if (!p)
		return;
	snprintf(title, sizeof title, "%s%s%s%s", fig->nseries > 1 ? fig->series[n] : "",
	         ok ? "" : fig->nseries > 1 ? " (" : "(", ok ? "" : p->status,
	         ok ? "" : p->npct ? ")" : ": no call)");
	if (p->npct)
		fprintf(f, "%s$s%d using 1:2", n ? ", \\\n     " : "", n);
	else
		fprintf(f, "%skeyentry", n ? ", \\\n     " : "");
	fprintf(f, " with lines lw 2 lc %d dt %d %s", n % PLOT_COLOURS + 1, n / PLOT_COLOURS + 1,
	        *title ? "title " : "notitle");
	if (*title)
		plot_gp_lit(f, title);
}

void plot_gp_script(const struct plot_fig *fig, const struct plot_set *s, const char *out,
                    int svg, FILE *f)
{
	int bars = fig->style == PLOT_BARS, marked, route;

	gp_head(fig, out, svg, f);
	if (fig->style == PLOT_PERCENTILES) {
		gp_pct_axes(fig, s, f);
		for (int n = 0; n < fig->nseries; n++)
			gp_pct_data(fig, s, n, f);
		if (fig->nseries == 1 && is_ok(s, &fig->item[0]))
			fprintf(f, "unset key\n"); /* no entry: no empty box */
		fprintf(f, "plot ");
		for (int n = 0; n < fig->nseries; n++)
			gp_pct_plot(fig, s, n, f);
		fprintf(f, "\nunset output\n");
		return;
	}
	if (fig->logx)
		fprintf(f, "set logscale x 2\n");
	if (fig->logy) /* powers of ten, typeset */
		fprintf(f, "set logscale y 10\nset mytics 10\nset format y \"10^{%%L}\"\n");
	else
		fprintf(f, "set yrange [0:*]\nset offsets 0, 0, graph 0.12, 0\n");
	gp_xtics(fig, s, f);
	if (bars)
		fprintf(f, "set boxwidth %.6g absolute\nset style fill solid 0.85 border -1\n",
		        0.8 / fig->nseries);
	for (int n = 0; n < fig->nseries; n++)
		gp_series_data(fig, n, f);
	marked = gp_marks(fig, s, f);
	route = gp_route_marks(fig, s, f);
	if (fig->nseries == 1 && !marked && !route)
		fprintf(f, "unset key\n");
	fprintf(f, "plot ");
	for (int n = 0; n < fig->nseries; n++)
		gp_series_plot(fig, n, f);
	if (marked) {
		/* a legend entry even when every marked result is null */
		fprintf(f, ", \\\n     %s with %s lc rgb \"%s\" lw 2 %s title \"status not ok\" noenhanced",
		        marked & 2 ? "$bad using 1:2" : "keyentry", bars ? "boxes" : "points pt 6 ps 2.5",
		        PLOT_MARK_RGB, bars ? "fs transparent pattern 4 border" : "");
	}
	if (route)
		fprintf(f, ", \\\n     $route using 1:2 with points pt 4 ps 2.5 lw 1.5 lc rgb \"black\" "
		        "title \"another route\" noenhanced");
	fprintf(f, "\nunset output\n");
}

/* An anonymous file holding len bytes of data (or empty), at offset 0. */
static int memfile(const char *name, const char *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	for (size_t at = 0; fd >= 0 && at < len;) {
		ssize_t n = write(fd, data + at, len - at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		at += (size_t)n;
	}
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* gnuplot's messages, one line in err: newlines as spaces, cut to fit. */
static void read_messages(int fd, struct err *err)
{
	char *m = err->msg;
	ssize_t n = pread(fd, m, sizeof err->msg - 1, 0);
	size_t len = n > 0 ? (size_t)n : 0;

	while (len && strchr("\n\r ", m[len - 1]))
		len--;
	m[len] = 0;
	for (char *p = m; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

/* Waits for pid at most timeout_s seconds, or until *stop is set; its wait
 * status, or -1 when it ran out of time, -2 when stopped (then it is
 * killed and reaped). */
static int wait_deadline(pid_t pid, int timeout_s, const volatile sig_atomic_t *stop)
{
	struct timespec nap = {0, 10000000};
	int status, rc = -1;

	for (long waited = 0; waited < timeout_s * 100L; waited++) {
		if (stop && *stop) {
			rc = -2;
			break;
		}
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return rc;
}

int plot_gp_run(const char *script, size_t len, int timeout_s, const volatile sig_atomic_t *stop,
                struct err *err)
{
	const char *prog = getenv("GNUPLOT") && *getenv("GNUPLOT") ? getenv("GNUPLOT") : "gnuplot";
	char *argv[] = {(char *)prog, NULL};
	posix_spawn_file_actions_t fa;
	int in = memfile("tfgb-plot.gp", script, len), msg = memfile("tfgb-plot.err", NULL, 0);
	int rc = -1, status, e;
	pid_t pid;

	err->msg[0] = 0;
	if (in < 0 || msg < 0 || posix_spawn_file_actions_init(&fa) != 0) {
		e = errno;
		goto out;
	}
	posix_spawn_file_actions_adddup2(&fa, in, 0);
	posix_spawn_file_actions_adddup2(&fa, msg, 1);
	posix_spawn_file_actions_adddup2(&fa, msg, 2);
	e = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e != 0)
		goto out;
	status = wait_deadline(pid, timeout_s, stop);
	read_messages(msg, err);
	rc = -2;
	if (status == -1)
		err_set(err, "it did not finish in %d s (killed)", timeout_s);
	else if (status == -2)
		err_set(err, "interrupted (gnuplot killed)");
	else if (WIFSIGNALED(status))
		err_append(err, "%skilled by signal %d", err->msg[0] ? "; " : "", WTERMSIG(status));
	else if (WEXITSTATUS(status) != 0 && !err->msg[0])
		err_set(err, "exit status %d, no message", WEXITSTATUS(status));
	else if (WEXITSTATUS(status) == 0)
		rc = 0;
out:
	if (in >= 0)
		close(in);
	if (msg >= 0)
		close(msg);
	errno = e;
	return rc;
}
