/* collect_train.h - the collector of a training run: the workers' step
 * reports added up (train_agg) and what makes them incomplete.  A
 * worker's report travels as a throughput worker's (wresult.h): calls are
 * its measured steps, the latency histogram its step times, the
 * service-time one its pull phases, with the bytes it sent to and
 * received from each PS and the barriers it passed.  The command prints
 * the result with the model's plan (cmd_train.c).
 */
#ifndef TFGB_COLLECT_TRAIN_H
#define TFGB_COLLECT_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "launch.h"
#include "stats.h"
#include "tfgb.h"
#include "train.h"

/* A worker's timeline, as its report brought it (wresult.h). */
struct train_marks {
	uint64_t zero_ns, dropped;
	uint32_t n, conns;
	struct step_mark *m;       /* n */
	uint64_t *ends;            /* 2 n conns (step.h: conn_end) */
	char host[64];
};

struct train_agg {
	struct launch_agg c;        /* calls: steps; lat: step times */
	uint64_t *sent, *recv;      /* nps */
	uint64_t *calls;            /* nps: transfers each PS answered */
	uint64_t *barriers;         /* workers: barriers passed */
	uint64_t barrier_wait_ns;   /* all workers' time in barriers */
	uint64_t closing;           /* barriers that closed a measured step (the most a worker saw) */
	uint64_t *last_in;          /* workers: those it was the last one in at */
	uint64_t *injected_ns;      /* workers: the delay put in on it (fault.h) */
	struct stats *wstep;        /* workers */
	struct stats pull;
	const size_t *ps_vars;      /* the plan's, nps */
	struct train_marks *marks;  /* workers, when the job writes a timeline; else NULL */
};

/* For the plan p's PSs, keeping the workers' timelines when timeline: 0,
 * or -ENOMEM (train_agg_free cleans up either way). */
int train_agg_init(struct train_agg *a, uint32_t workers, const struct train_plan *p,
                   int timeline);
void train_agg_free(struct train_agg *a);

/* Collects run_id's reports through cc into a, and says in why (len
 * bytes, "" when nothing) what makes them incomplete: the process lost
 * that died (the figures are the survivors'), the failure note, workers
 * that did not report or failed, malformed reports.  Then, as
 * tput_collect does, meets the servers of one launch (*one_launch: enum
 * LAUNCH_ONE*, moved on; NULL for the launcher) and, without a
 * launcher's monitor mon, merges each host's series (a->c.res).  0, or
 * -1 (said, naming note). */
int train_collect(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                  int partial, const char *note, const struct report_lost *lost,
                  const struct monitor *mon, int *one_launch, struct train_agg *a, char *why,
                  size_t len);

/* Writes the workers' timelines to path (output.timeline, Trace Event
 * JSON: report_trace.h): per worker its steps, barriers and compute on
 * one thread, its pulls and pushes to each PS on a thread each.  0, or
 * -errno. */
int train_timeline(const struct train_agg *a, const char *path);

#endif
