/* plot_fig.h - what cmd_plot.c shares with plot_fig.c and plot_words.c:
 * the command's options and the steps that choose and lay out the figure
 * and word it.  Only those files include it.  The checks report on
 * stderr and return a TFGB_EXIT_* code. */
#ifndef TFGB_PLOT_FIG_H
#define TFGB_PLOT_FIG_H

#include "plot.h"

/* The percentile figure's y axis is logarithmic from this ratio of its
 * largest latency to its smallest. */
#define PLOT_PCT_LOGY 100
/* A line figure's y axis is logarithmic from this ratio of its series'
 * highest values, the largest to the smallest (plot_series_logy). */
#define PLOT_SERIES_LOGY 10

struct plot_opts {
	const char *out, *title;
	int style, metric, errbar, xkey; /* -1: chosen from the files */
	int svg, quiet;
};

/* Whether points differ in key k; buf with s appended (cut to len). */
int plot_differs(const struct plot_set *s, int k);
void plot_cat(char *buf, size_t len, const char *s);

int plot_check_set(const struct plot_set *s, struct plot_opts *o);

int plot_choose_x(const struct plot_set *s, struct plot_opts *o);

unsigned plot_series_keys(const struct plot_set *s, int xkey);

int plot_layout(const struct plot_set *s, const struct plot_opts *o, unsigned keys,
                struct plot_fig *f, unsigned *how);

void plot_title(const struct plot_set *s, const struct plot_opts *o, unsigned keys,
                struct plot_fig *f);

void plot_notes(const struct plot_set *s, unsigned how, struct plot_fig *f);

void plot_scale(const struct plot_set *s, struct plot_fig *f);

void plot_x2bytes(const struct plot_set *s, struct plot_fig *f);

void plot_axes(const struct plot_set *s, struct plot_fig *f);

void plot_series_logy(struct plot_fig *f);

void plot_xunit(const struct plot_set *s, struct plot_fig *f);

void plot_xcat(struct plot_fig *f);

void plot_channels(const struct plot_set *s, unsigned keys, struct plot_fig *f);

#endif
