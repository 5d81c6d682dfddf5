/* plot_trace.h - `tfgb plot` of a timeline (output.timeline): each rank's
 * or worker's step time over its steps, and each worker's barrier wait or
 * each rank's time in exchanges (plot_trace.c). */
#ifndef TFGB_PLOT_TRACE_H
#define TFGB_PLOT_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

#define PLOT_TRACE_TRACKS 24

struct plot_trace_track {
	double pid;
	char name[64];               /* "worker 1", "rank 3" */
	double *step, *wait;         /* ms, in the order run */
	double *waitx;               /* each wait's step: its place among the track's steps */
	size_t nstep, capstep, nwait, capwait;
	/* a run of ranks' exchanges (thread 1): the track's steps before
	 * the batch they belong to, and whether the last event was one */
	size_t xbase;
	int in_x;
};

struct plot_trace {
	char what[192];              /* otherData.tfgb: what run it is of */
	int ntrack, waits;           /* tracks; those with waits */
	int exchanges;               /* the waits are time in exchanges, not at a barrier */
	struct plot_trace_track track[PLOT_TRACE_TRACKS];
};

/* Reads path: 1 when it is a timeline (t filled; plot_trace_free it), 0
 * when it is not (a result: plot_read's), -1 with err (one line naming
 * the file). */
int plot_trace_read(const char *path, struct plot_trace *t, struct err *err);
void plot_trace_free(struct plot_trace *t);

/* The gnuplot script drawing t to out (PNG, or SVG when svg), titled. */
void plot_trace_script(const struct plot_trace *t, const char *title, const char *out, int svg,
                       FILE *f);

#endif
