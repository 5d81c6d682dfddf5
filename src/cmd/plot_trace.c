/* plot_trace.c - `tfgb plot` of a timeline (output.timeline, Trace Event
 * JSON: report_trace.h): each track's step time over its steps and, where
 * the timeline has them, each worker's wait at the barrier before each
 * step (synchronous PS training) or each rank's time in the exchanges of
 * each step (a run of ranks: the spans of its thread 1, those with a
 * "waited_for", summed by their operation's index; a size of the
 * collective is a batch of steps followed by its exchanges, so that an
 * exchange's step is the track's steps before its batch plus its index).
 * A step is a complete event of thread 0
 * named "step #k" (the PS and all-reduce strategies) or, for tfgb
 * collective, any of its operations ("allreduce 1024 B #k"); its number
 * is its place among its track's steps, so that a collective's sizes
 * follow one another.
 */
#include "plot_trace.h"

#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "jsonr.h"
#include "plot.h"

void plot_trace_free(struct plot_trace *t)
{
	for (int i = 0; i < t->ntrack; i++) {
		free(t->track[i].step);
		free(t->track[i].wait);
		free(t->track[i].waitx);
	}
	memset(t, 0, sizeof *t);
}

/* The track of pid, made when new: NULL past PLOT_TRACE_TRACKS (said). */
static struct plot_trace_track *track_of(struct plot_trace *t, double pid, const char *path,
                                         struct err *err)
{
	for (int i = 0; i < t->ntrack; i++)
		if (t->track[i].pid == pid)
			return &t->track[i];
	if (t->ntrack == PLOT_TRACE_TRACKS) {
		err_set(err, "'%s': a timeline of more than %d tracks (ranks or workers): plot draws "
		        "up to %d", path, PLOT_TRACE_TRACKS, PLOT_TRACE_TRACKS);
		return NULL;
	}
	t->track[t->ntrack] = (struct plot_trace_track){.pid = pid};
	snprintf(t->track[t->ntrack].name, sizeof t->track[0].name, "track %.0f", pid);
	return &t->track[t->ntrack++];
}

/* Appends ms to a growing array: 0, or -1 (out of memory). */
static int push(double **a, size_t *n, size_t *cap, double ms)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		double *b = realloc(*a, c * sizeof *b);
		if (!b)
			return -1;
		*a = b;
		*cap = c;
	}
	(*a)[(*n)++] = ms;
	return 0;
}

/* A wait of track k at step x, ms: added to the last when at the same
 * step, else appended.  0, or -1 (out of memory). */
static int push_wait(struct plot_trace_track *k, double x, double ms)
{
	size_t cap = k->capwait, n = k->nwait;

	if (n && k->waitx[n - 1] == x) {
		k->wait[n - 1] += ms;
		return 0;
	}
	if (push(&k->waitx, &n, &cap, x) < 0)
		return -1;
	return push(&k->wait, &k->nwait, &k->capwait, ms);
}

/* An exchange of a run of ranks (thread 1): its time added to its step's
 * wait.  0, or -1. */
static int exchange(struct plot_trace *t, struct plot_trace_track *k, const struct jsonr *r,
                    int e, double dur)
{
	double index;

	if (jsonr_num(r, jsonr_find(r, e, "args.index"), &index) < 0 || index < 0)
		return 0;
	t->exchanges = 1;
	k->in_x = 1;
	return push_wait(k, (double)k->xbase + index, dur / 1e3);
}

/* One event: a track's name, a step, a barrier wait or an exchange.  0
 * or -1. */
static int event(struct plot_trace *t, const struct jsonr *r, int e, const char *path,
                 struct err *err)
{
	char ph[4] = "", name[96] = "";
	double pid, tid = 0, dur;
	struct plot_trace_track *k;

	if (jsonr_num(r, jsonr_obj_get(r, e, "pid"), &pid) < 0)
		return 0; /* not a track's */
	jsonr_num(r, jsonr_obj_get(r, e, "tid"), &tid);
	jsonr_str(r, jsonr_obj_get(r, e, "ph"), ph, sizeof ph);
	jsonr_str(r, jsonr_obj_get(r, e, "name"), name, sizeof name);
	if (!(k = track_of(t, pid, path, err)))
		return -1;
	if (!strcmp(ph, "M") && !strcmp(name, "process_name"))
		jsonr_str(r, jsonr_find(r, e, "args.name"), k->name, sizeof k->name);
	if (strcmp(ph, "X") || !strstr(name, " #") ||
	    jsonr_num(r, jsonr_obj_get(r, e, "dur"), &dur) < 0)
		return 0;
	if (tid == 1 && jsonr_find(r, e, "args.waited_for") >= 0)
		return exchange(t, k, r, e, dur);
	if (tid != 0)
		return 0;
	if (!strncmp(name, "barrier #", 9))
		return push_wait(k, (double)k->nstep, dur / 1e3);
	if (!strncmp(name, "compute #", 9))
		return 0; /* within its step */
	if (k->in_x) { /* a new batch of steps */
		k->xbase = k->nstep;
		k->in_x = 0;
	}
	return push(&k->step, &k->nstep, &k->capstep, dur / 1e3);
}

int plot_trace_read(const char *path, struct plot_trace *t, struct err *err)
{
	struct jsonr r = {0};
	char *text;
	size_t len;
	int ev, rc = 1;

	memset(t, 0, sizeof *t);
	if (input_read(path, "timeline", JSONR_MAX_LEN, JSONR_MAX_LEN, &text, &len, err) < 0)
		return -1;
	if (strlen(text) != len || jsonr_load(&r, text, len) < 0 ||
	    jsonr_type(&r, ev = jsonr_find(&r, 0, "traceEvents")) != JSONR_ARRAY) {
		rc = 0; /* not a timeline: plot_read says what it is */
		goto out;
	}
	jsonr_str(&r, jsonr_find(&r, 0, "otherData.tfgb"), t->what, sizeof t->what);
	for (int e = jsonr_arr_get(&r, ev, 0), end = jsonr_next(&r, ev); e >= 0 && e < end && rc == 1;
	     e = jsonr_next(&r, e))
		if (jsonr_type(&r, e) == JSONR_OBJECT && event(t, &r, e, path, err) < 0)
			rc = -1;
	if (rc == 1 && !t->ntrack) {
		err_set(err, "'%s': a timeline with no track", path);
		rc = -1;
	}
out:
	if (rc == 1)
		for (int i = 0; i < t->ntrack; i++)
			t->waits += t->track[i].nwait > 0;
	if (rc < 1)
		plot_trace_free(t);
	jsonr_free(&r);
	free(text);
	return rc;
}

/* One panel: the tracks' values (step or wait) against their numbers. */
static void panel(const struct plot_trace *t, int wait, FILE *f)
{
	int first = 1;

	plot_gp_cmd_str(f, "set ylabel", !wait ? "step time (ms)" : t->exchanges
	                ? "time in exchanges (ms)" : "barrier wait (ms)");
	plot_gp_cmd_str(f, "set xlabel", wait && !t->exchanges ? "step"
	                : "step (or operation), in the order run");
	for (int i = 0; i < t->ntrack; i++) {
		const struct plot_trace_track *k = &t->track[i];
		size_t n = wait ? k->nwait : k->nstep;
		fprintf(f, "$%c%d << EOD\n", wait ? 'w' : 's', i);
		for (size_t j = 0; j < n; j++)
			fprintf(f, "%.0f %.6f\n", wait ? k->waitx[j] : (double)j, wait ? k->wait[j] : k->step[j]);
		fputs("EOD\n", f);
	}
	for (int i = 0; i < t->ntrack; i++) {
		if (!(wait ? t->track[i].nwait : t->track[i].nstep))
			continue;
		fprintf(f, "%s$%c%d with linespoints pt 7 ps 0.4 lw 1.5 title ", first ? "plot " : ", ",
		        wait ? 'w' : 's', i);
		plot_gp_lit(f, t->track[i].name);
		first = 0;
	}
	fputc('\n', f);
}

void plot_trace_script(const struct plot_trace *t, const char *title, const char *out, int svg,
                       FILE *f)
{
	plot_gp_term(out, svg, f);
	fprintf(f, "set grid ytics\nset border 3\nset xtics nomirror\nset ytics nomirror\n"
	        "set key outside right top vertical Left reverse\n");
	if (t->waits) {
		fputs("set multiplot layout 2,1 title ", f);
		plot_gp_lit(f, title);
		fputc('\n', f);
	} else {
		plot_gp_cmd_str(f, "set title", title);
	}
	panel(t, 0, f);
	if (t->waits) {
		panel(t, 1, f);
		fputs("unset multiplot\n", f);
	}
}
