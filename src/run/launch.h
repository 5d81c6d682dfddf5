/* launch.h - the launcher of throughput and train, and what their
 * workers and collectors share.
 *
 * The one-machine launcher starts the local PSs that are not running yet
 * (session_start_servers) and the workers, hosts or finds the control
 * service, watches the processes and hands the reports to the command's
 * collector.  A worker (of a launcher, of mpirun or srun, or by --task)
 * gets its run id here, meets the others at the control service's
 * barrier and sends its report; a collector takes the reports in
 * (launch_collect, launch_agg) and asks the PSs for their figures.
 *
 * A process takes part in one launch: the run's announcement to its PSs
 * is this process's, kept here (the start-up scale of its waits is
 * session.h's).
 *
 * Errors are printed here, naming the command and the process; the
 * functions return a TFGB_EXIT_* status unless they say otherwise.
 */
#ifndef TFGB_LAUNCH_H
#define TFGB_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "collect_res.h"
#include "engine.h"
#include "monitor.h"
#include "session.h"
#include "tfgb.h"
#include "transport.h"

struct ctrl_client;
struct report_lost;
struct sysinfo_env;
struct srvinfo;

/* A command's collector: gathers run_id's `workers` reports from the
 * control service (partial: take what is there; note: the failure that
 * makes it incomplete, or NULL; lost: the process that died, or NULL), prints the result with env and the
 * stopped monitor mon (either may be NULL) and returns the exit status. */
typedef int (*launch_collect_fn)(struct tfgb *t, const struct tr_ops *ops, struct ctrl_client *cc,
                                 uint64_t run_id, uint32_t workers, int partial,
                                 const char *note, const struct report_lost *lost,
                                 const struct sysinfo_env *env, const struct monitor *mon);


/* The note launch_run passes its collector after a Ctrl-C (SIGINT or
 * SIGTERM) and no failure.  One rule for every benchmark: a signal cuts
 * the figures short only when it ends a measured window early (a worker's
 * result then says interrupted); one that comes after every window closed
 * leaves them complete: the report is not marked, the exit status is 0,
 * and session_late_signal says so on standard error.  A collector drops
 * this note (launch_note) when every worker reported a window that
 * completed. */
extern const char launch_interrupted[];
/* note, or NULL when it is launch_interrupted and complete (every worker
 * reported, none failed). */
const char *launch_note(const char *note, int complete);

struct launch {
	launch_collect_fn collect;
	uint64_t run_ns; /* the longest the workers' runs may take, beyond 4 x job.timeout */
};

/* The one-machine launcher: starts the local PSs not running yet and
 * cluster.workers processes of `tfgb t->cmd --task N`, watches them (a
 * death or Ctrl-C stops the others, which report partial figures), then
 * calls l->collect.  Returns the exit status. */
int launch_run(struct tfgb *t, const struct tr_ops *ops, const struct launch *l);

/* With [network] knobs set: builds the emulated link (netem.h), leaves
 * this process on its PS side with every PS host the link's PS end (here
 * and in the processes it starts: NETEM_ENV), and calibrates it.  Call it
 * before any fork or thread; netem_stop undoes it.  With network.topology
 * = switch: a switch of `hosts` hosts, the first ps_hosts the PSs, this
 * process in host 0's namespace (every PS at its own host's address; the
 * calibration's figures in NETEM_SWITCH_ENV); hosts < 0 (a command of one
 * worker and one PS) refuses the switch.  TFGB_EXIT_OK, or the status of
 * the error it printed (TFGB_EXIT_USAGE: the link cannot be had here). */
int launch_net_up(struct tfgb *t, int ps_hosts, int hosts);

/* Meets the other workers at the control service's registration barrier,
 * leaving *cc open for the caller: 0, or the exit status of the error it
 * printed. */
int launch_barrier(struct tfgb *t, const struct cluster_rank *rk, int workers, uint64_t run_id,
                   struct ctrl_client **cc);
/* The same with wc's hello before the barrier and its meeting after
 * (wctl.h: a worker with no launcher above it; NULL: none). */
struct wctl;
int launch_meet(struct tfgb *t, const struct cluster_rank *rk, int workers, uint64_t run_id,
                struct ctrl_client **cc, struct wctl *wc);

/* Checks worker rk's index against the run's `workers` (-1: refused
 * already) and gives the run id the workers share: TFGB_EXIT_OK or the
 * status of the error it printed. */
int launch_worker_id(struct tfgb *t, const struct cluster_rank *rk, int workers,
                     uint64_t *run_id);

struct wresult;
/* Encodes a worker's report and hands it to the control service: 0, or -1
 * (said, naming the worker). */
int launch_send(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                const struct wresult *wr);

/* Collects run_id's reports through fn (ctrl_collect): all of them within
 * job.timeout, else (or with partial) those that are there.  0, or
 * -errno with err set. */
typedef int (*launch_report_fn)(void *arg, uint32_t worker, const void *blob, size_t len);
int launch_collect(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                   int partial, launch_report_fn fn, void *arg, struct err *err);

/* Each PS's malloc (out: ps_count entries), asked once the run is over;
 * not asked when the run did not complete.  With ask_own and a run that
 * announced itself (launch_ps_announce), the PSs it announced itself to
 * are asked for their own figures over the time since, too (free them
 * with srvinfo_clear). */
void launch_ps_allocators(const struct job *j, const struct tr_ops *ops, int complete,
                          struct srvinfo *out, int ask_own);
/* Announces the run to each PS that this process does not sample itself
 * (own: ps_count flags, those the launcher started; NULL: none), so that
 * the PS counts it among the runs it serves and keeps its own figures of
 * the run's time (srvinfo.h): untimed, one connection per PS, within
 * job.timeout, before the run's window.  Remembers the announcement, its
 * id and its time, for launch_ps_allocators; own stays the caller's and
 * must outlive that call. */
void launch_ps_announce(const struct job *j, const struct tr_ops *ops,
                        const unsigned char *own);

/* The end of one launch as its collector sees it: the end barriers its
 * servers wait at (session_launch_end), both phases from LAUNCH_ONE, the
 * second alone from LAUNCH_ONE_PASSED, none from LAUNCH_ONE_GIVEN_UP (it
 * told them the run is over: session_launch_abort). */
enum {
	LAUNCH_ONE_NONE = 0,    /* its servers are not the launch's own */
	LAUNCH_ONE = 1,         /* servers and workers started together */
	LAUNCH_ONE_PASSED = 2,  /* the collector passed the first end barrier */
	LAUNCH_ONE_GIVEN_UP = 3,
};
void launch_end(const struct job *j, int one_launch);

struct alloc_info;
/* What every command's aggregate of the workers' reports holds (the
 * throughput's and train's add their own around it). */
struct launch_agg {
	uint32_t workers, nps, reported;
	struct wresult *w;          /* the report being added, decoded */
	unsigned char *seen;        /* workers */
	uint64_t *per_worker;       /* workers: each one's calls (train: steps) */
	double *worker_rps;         /* workers: each one's calls (steps) per second */
	const char **host;          /* workers: each one's host name, NULL until it reports */
	int32_t *pid;               /* workers: each one's process id */
	struct alloc_info *alloc;   /* workers: each one's malloc, name "" until it reports */
	struct engine_result sum;   /* the counts summed, lat merged; svc: the command's */
	uint64_t window_total, warmup_total;
	double rps, bps;
	int bad_blobs, failed;
	struct err first_err;       /* the first worker's failure */
	struct res_agg res;         /* the series of the workers that sampled themselves */
};

/* 0, or -ENOMEM (launch_agg_free cleans up either way). */
int launch_agg_init(struct launch_agg *a, uint32_t workers, uint32_t nps);
void launch_agg_free(struct launch_agg *a);
/* Decodes worker's report into a->w and adds what every aggregate holds
 * (its series too, res_agg_add): a->w, or NULL when it is malformed, not this worker's, a second one,
 * not of this run's PSs or not of its kind (train: a training worker's),
 * counted in bad_blobs. */
const struct wresult *launch_agg_add(struct launch_agg *a, uint32_t worker, const void *blob,
                                     size_t len, int train);
/* The collector of one launch, once every worker has reported: the
 * launch's servers' resources into a->res (res_agg_servers).  Returns
 * where the launch's end stands: LAUNCH_ONE_PASSED or
 * LAUNCH_ONE_GIVEN_UP. */
int launch_agg_servers(struct tfgb *t, struct launch_agg *a, int ps_lost);

#endif
