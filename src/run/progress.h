/* progress.h - the progress line of the throughput launcher.
 *
 * On a terminal (standard error a tty, no -q) the one-machine launcher of
 * `tfgb throughput` keeps one line on standard error, redrawn in place at
 * most PROGRESS_HZ times a second: the phase (starting the PSs, waiting
 * for the workers, warm-up, the measured window's elapsed and total time,
 * collecting) and its counts.  Everything is done in the launcher's own
 * loop: the only thing a worker does for it is one write of "go\n" on its
 * TFGB_READY_FD when the control service's barrier released it, before its
 * warm-up starts (nothing in the workers' call loop).
 */
#ifndef TFGB_PROGRESS_H
#define TFGB_PROGRESS_H

#include <stdint.h>

#include "cluster.h"
#include "tfgb.h"

#define PROGRESS_HZ 4

struct lprogress {
	int on;                 /* drawing at all */
	int drawn;              /* a line is on the screen */
	int nps, nw;
	int go;                 /* workers released by the barrier */
	int done;               /* workers ended */
	uint64_t t_go;          /* when the first was (the warm-up's start) */
	uint64_t next_ns;       /* no redraw before this */
	uint64_t warmup_ns, duration_ns, iterations;
	int repeat;
	const char *label;
	char last[128];         /* the text on the screen: redrawn only when it changes */
};

/* A progress line for launcher t with nps PSs and nw workers; drawn only
 * when standard error is a terminal and -q is not given. */
void lprogress_init(struct lprogress *p, const struct tfgb *t, int nps, int nw);
/* "starting N PS": drawn at once. */
void lprogress_starting(struct lprogress *p);
/* The workers are started: their readiness pipes (wk[i].ready_fd) carry
 * their "go"; closed here when nothing is drawn. */
void lprogress_workers(struct lprogress *p, struct cluster_child *wk);
/* From the launcher's loop: reads the workers' "go"s without waiting and
 * redraws the line when it is time; done = the workers ended so far. */
void lprogress_tick(struct lprogress *p, struct cluster_child *wk, int done);
/* Erases the line (before the report). */
void lprogress_end(struct lprogress *p);

/* In a worker of the launcher (TFGB_LAUNCHER set): tells it, through
 * TFGB_READY_FD, that the barrier released this worker; once. */
void lprogress_worker_go(void);

#endif
