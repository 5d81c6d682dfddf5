/* collect_tput.h - the collector of a throughput run: the workers'
 * reports added up (tput_agg), what makes them incomplete, the resources
 * of the launch's servers and of every host.  The command prints what it
 * gathered (cmd_throughput.c).
 *
 * Run k of [job] repeat adds up over the workers: the sum of their run k
 * calls/s and bytes/s, the mean latency of all their run k calls;
 * percentiles are not known (they do not add across workers).
 */
#ifndef TFGB_COLLECT_TPUT_H
#define TFGB_COLLECT_TPUT_H

#include <stddef.h>
#include <stdint.h>

#include "launch.h"
#include "report.h"
#include "tfgb.h"
#include "transport.h"
#include "wctl.h"

struct tput_agg {
	struct launch_agg c;      /* what every command's aggregate holds */
	uint64_t *per_ps;        /* nps */
	struct place_seen *place; /* workers: where each ran, as it measured itself */
	struct wresult_res *res;  /* workers: what each used over its run */
	/* repeats: run k summed over the workers (nruns: the most any reported) */
	struct report_run *runs; /* repeat */
	uint64_t *run_lat_sum, *run_lat_count, *run_window_total;
	uint32_t *run_workers;
	uint32_t repeat, nruns;
	struct engine_ivl_fig *ivl; /* every worker's intervals, nivl of cap */
	uint32_t nivl, ivl_cap;
	uint64_t ivl_dropped;
};

/* 0, or -ENOMEM (tput_agg_free cleans up either way). */
int tput_agg_init(struct tput_agg *a, uint32_t workers, uint32_t nps, uint32_t repeat);
void tput_agg_free(struct tput_agg *a);

/* A worker's view of the run as its collector, when no launcher is above
 * it (NULL for the launcher): wc names a process that died; cc2 is PS 0's
 * service when the reports go to worker 0's (wctl.h); one_launch: enum
 * LAUNCH_ONE*, moved on as the launch's servers are met or given up. */
struct tput_view {
	const struct wctl *wc;
	struct ctrl_client *cc2;
	int one_launch;
	struct report_lost found; /* the process wc found dead, in the buffers below */
	char how[RESULT_HOST_MAX + 64], host[RESULT_HOST_MAX], note[256];
};

/* Collects run_id's reports through cc (then those still missing through
 * v->cc2), names the process that died as v's service saw it when the
 * launcher named none (*lost, *note), says in why (len bytes, "" when
 * nothing) what makes the aggregate incomplete, finishes its figures,
 * meets the servers of one launch (v->one_launch) and, without a
 * launcher's monitor mon, merges each host's series.  v is NULL for the
 * launcher.  0, or -1 (said). */
int tput_collect(struct tfgb *t, const struct tr_ops *ops, struct ctrl_client *cc,
                 uint64_t run_id, uint32_t workers, int partial, const char **note,
                 const struct report_lost **lost, const struct monitor *mon,
                 struct tput_view *v, struct tput_agg *a, char *why, size_t len);

#endif
