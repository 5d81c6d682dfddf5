/* collect_res.h - the resources of a run that no launcher sampled (one
 * launch by mpirun or srun, or workers started by --task), for throughput
 * and train alike.
 *
 * Each worker samples itself from the barrier's release to its report
 * (res_self_monitor) and packs its series into its report (wresult.h:
 * mon).  The collector keeps each worker's series as its report comes in
 * (res_agg_add, from launch_agg_add), takes the servers' of one launch at
 * the first end barrier (res_agg_servers: session.h, LAUNCH_RES_ID) and
 * merges them per host (res_agg_hosts): what the report's hosts hold
 * (report.h) and what output.series writes (res_series).
 */
#ifndef TFGB_COLLECT_RES_H
#define TFGB_COLLECT_RES_H

#include <stddef.h>
#include <stdint.h>

#include "monitor.h"
#include "report.h"
#include "tfgb.h"
#include "wresult.h"

/* A worker with no launcher above it samples itself from the barrier's
 * release on, as the launcher samples its processes ([monitor] interval;
 * *mon NULL when off or under a launcher): TFGB_EXIT_OK or the status of
 * the error it printed. */
int res_self_monitor(struct tfgb *t, int index, struct monitor **mon);
/* Packs the stopped series mon (NULL: none) into the report w; a series
 * of fewer than two samples is none. */
void res_self_pack(struct wresult *w, const struct monitor *mon);

struct res_agg {
	uint32_t workers, nps;
	const char **host;                /* workers: each one's host (launch_agg's), NULL until it reports */
	struct monitor **mon;             /* workers, then PSs: each one's series, when it sampled itself */
	char (*ps_host)[RESULT_HOST_MAX]; /* PSs of one launch: each one's host, as it said */
	struct report_host_res *hosts;    /* their hosts, nhosts: the series merged */
	size_t nhosts;
};

/* For workers reporting from the hosts host names: 0, or -ENOMEM
 * (res_agg_free cleans up either way). */
int res_agg_init(struct res_agg *r, uint32_t workers, uint32_t nps, const char **host);
void res_agg_free(struct res_agg *r);
/* Keeps the series of worker's report w, when it has one. */
void res_agg_add(struct res_agg *r, uint32_t worker, const struct wresult *w);

/* The collector of one launch, once every worker has reported: the
 * launch's servers pass the first end barrier and hand in their own
 * resources (session.h), which it waits job.timeout for.  Not when they
 * cannot be reached in that time, nor when a PS is known dead (ps_lost:
 * the barrier would never fill): the result goes without them, and the
 * servers still waiting are told the run is over (session_launch_abort),
 * so that the run costs no second timeout at the launch's end.  0 when
 * the servers passed the first end barrier, -1 when given up
 * (launch_agg_servers: what that leaves of the launch's end). */
int res_agg_servers(struct tfgb *t, struct res_agg *r, int ps_lost);

/* The hosts of the processes that sampled themselves, each with their
 * series merged (hosts in order of their first process): what the
 * report's resources hold when no launcher sampled the processes.  A
 * host left out for want of memory is left out. */
void res_agg_hosts(struct res_agg *r);

/* Writes output.series, when the job sets it: the launcher's monitor mon,
 * or without it each host's series of r with ".HOST" added when the run
 * spans several hosts, as is when one.  0, or -1 (said). */
int res_series(struct tfgb *t, const struct monitor *mon, const struct res_agg *r);

#endif
