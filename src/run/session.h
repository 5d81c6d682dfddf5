/* session.h - what the benchmark commands share around the engine.
 *
 * A worker session is the set-up every worker process makes before its
 * engine runs (latency, bandwidth, throughput), in this order: its
 * placement, its payload (its pages come from the worker's node), the
 * transport's context and client, the payload's registration, one
 * connection to every PS; and the tear-down in reverse.  Besides: the
 * local servers a command starts for itself (latency, and the launcher of
 * launch.h), the end barriers of one launch that its servers meet at, and
 * the resource monitor a command starts over the processes of its run.
 * The launcher of throughput and train, above these, is launch.h.
 *
 * Errors are printed here, one line naming the command and the process
 * ("throughput: worker 2: PS 1: ..."); the functions return a TFGB_EXIT_*
 * status.
 */
#ifndef TFGB_SESSION_H
#define TFGB_SESSION_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "engine.h"
#include "monitor.h"
#include "payload.h"
#include "tfgb.h"
#include "transport.h"

struct session {
	struct tfgb *t;
	const struct tr_ops *ops;
	int index;                /* the worker's index, in messages */
	int method;               /* enum tr_method of its calls */
	int inflight;             /* calls outstanding per connection */
	struct payload p;         /* its one payload, laid out and allocated once */
	void *trctx;              /* ops->init's context */
	struct tr_client *client;
	struct tr_conn **conns;   /* one per PS, nconns of them */
	int nconns;
};

/* Finds the job's transport and probes it (tr_find, tr_probe), as every
 * process of a run does first: *ops and TFGB_EXIT_OK, or the exit status
 * after one line "WHO: why" (none when another rank of the launch refused
 * it: that rank's line says why). */
int session_transport(struct tfgb *t, const char *who, const struct tr_ops **ops);
/* This process refused its launch, and said why: it tells the job's
 * transport (tr_refuse), so that the other ranks of one MPI world leave
 * with it, each without a line.  TFGB_EXIT_USAGE. */
int session_refused(struct tfgb *t);

/* Opens worker `index`'s session, which keeps inflight calls of method
 * outstanding on each connection: places this process, makes the payload,
 * opens the transport and connects to PS 0 .. nps-1.  TFGB_EXIT_OK, or the
 * status of the error it printed; session_close undoes what was done
 * either way. */
int session_open(struct session *s, struct tfgb *t, const struct tr_ops *ops, int index,
                 int method, int inflight, int nps);
/* The same for calls whose bodies are not the payload's: max_body bytes
 * at most each way (a Pull asks for up to that much; 0: the payload's). */
int session_open_sized(struct session *s, struct tfgb *t, const struct tr_ops *ops, int index,
                       int method, int inflight, int nps, uint64_t max_body);
void session_close(struct session *s);

/* The engine's configuration for the session's job: the connections, the
 * payload and every figure the job sets; the caller adds what is its own
 * (progress, the interval output, an open loop's seed). */
void session_engine_cfg(const struct session *s, struct engine_cfg *cfg);

/* Starts `tfgb serve` for each of PS 0 .. nps-1 whose host is this one and
 * whose server (ops->port_offset) is not listening yet (the look and the
 * start under the port's start lock, with a lease on the server whoever
 * started it: lease.h), with flags (enum
 * of cluster_spawn), and waits until each started one is ready.  Call it
 * before any transport starts threads (it forks).  ps[] gets the children
 * (pid 0 where none started; cluster_stop accepts them all).  TFGB_EXIT_OK
 * or the status of the error it printed. */
int session_start_servers(struct tfgb *t, const struct tr_ops *ops, int nps, unsigned flags,
                          struct cluster_child *ps);
/* The end of a run that called session_start_servers, whatever it
 * returned: a server it started is stopped when no other run uses it
 * (lease.h), else left to stop by itself after the last; a server it found
 * is left alone; every lease is given up. */
void session_stop_servers(struct cluster_child *ps, int nps);

/* A resource monitor over the n targets, every job.monitor interval with
 * the resources it selects, counting the run's own wire bytes as those of
 * the nports ports, ctl among them the control service's (0: none;
 * monitor_ports); *mon stays NULL when the job samples nothing.
 * TFGB_EXIT_OK or TFGB_EXIT_FAIL (printed). */
int session_monitor(struct tfgb *t, const struct monitor_target *mt, size_t n,
                    const uint16_t *port, size_t nports, uint16_t ctl, struct monitor **mon);

struct ctrl_client;

/* The end of one launch (tfgb-throughput(1), "One launch"): the launch's
 * servers (who = their PS index) and the worker that prints the result
 * (who = nps) meet at barriers of their own on the control service (a run
 * id from the launcher's job ids alone, cluster_run_id(NULL)), so that the
 * servers end with the run: generation 0 once every worker has reported
 * (each server then hands in its own resources, LAUNCH_RES_ID), 1 once
 * the result is printed.  One phase: enters generation gen through *cc
 * (opened when NULL; the caller closes it), in slices of a second until
 * the barrier releases, it fails for another reason than its slice's
 * deadline (the service is gone), *stop is set (NULL: never) or
 * deadline_ns passes.  0 when released, else -1. */
int session_launch_phase(const struct job *j, struct ctrl_client **cc, int who, int nps,
                         uint32_t gen, uint64_t deadline_ns, volatile sig_atomic_t *stop);
/* The collector's word to the servers of one launch that the run is over
 * without the end barriers (a PS died, so they would never fill): a Report
 * under its own run id on PS 0's service, through *cc (opened when NULL;
 * the caller closes it), within job.timeout.  A server waiting at an end
 * barrier looks for it after each second's slice (session_launch_phase
 * then fails), so that it stops within about a second.  Nothing happens
 * when PS 0's service is gone: its servers' calls fail then. */
void session_launch_abort(const struct job *j, struct ctrl_client **cc);
/* Both phases, between(cc, arg) after the first when not NULL (a server:
 * its resources). */
typedef void (*session_end_fn)(struct ctrl_client *cc, void *arg);
int session_launch_end(const struct job *j, int who, int nps, uint64_t deadline_ns,
                       volatile sig_atomic_t *stop, session_end_fn between, void *arg);
/* The run id under which the servers of one launch hand in their
 * resources (host name and monitor_pack series, session_res_*), xor'd
 * with cluster_run_id(NULL). */
#define LAUNCH_RES_ID 0x524553u /* "RES" */
/* A server's resources as it hands them in: u16 length + its host name,
 * u32 length + its series (monitor_pack; 0: not sampled).  The length, or
 * -1 when cap is too small. */
long session_res_pack(const struct monitor *mon, unsigned char *buf, size_t cap);
/* Reads one back: 0 with host (RESULT_HOST_MAX bytes) and *mon (NULL when
 * it sent none), or -1 when malformed. */
int session_res_unpack(const unsigned char *buf, size_t len, char *host, struct monitor **mon);

/* How long a server of one launch waits for the run to end: job.timeout
 * to start, the warm-up, every window (a day with job.iterations) and four
 * times job.timeout, as the one-machine launcher waits for its workers. */
uint64_t session_run_span_ns(const struct job *j);

/* The start-up waits (connecting to the PSs, reaching the control
 * service, its registration barrier) of a worker whose launcher starts
 * many processes on few CPUs last job.timeout times their number per CPU
 * (at most LAUNCH_START_SCALE_MAX): 40 processes starting on 2 CPUs are
 * slow, not broken.  The launcher passes its figures (TFGB_START_PROCS,
 * TFGB_START_CPUS) to its workers; launch_start_ns is job.timeout for any
 * other process. */
#define LAUNCH_START_SCALE_MAX 30
void launch_start_scale(int procs);
uint64_t launch_start_ns(const struct tfgb *t);
/* ", a wait of job.timeout x N: P processes starting on C CPUs" when
 * launch_start_ns is above job.timeout, else "". */
const char *launch_start_text(const struct tfgb *t);

/* After figures that are complete: when a signal came, says that it came
 * after the window and changed nothing (not a failure; launch.h,
 * launch_interrupted).  Returns TFGB_EXIT_OK. */
int session_late_signal(struct tfgb *t);

/* A transport whose processes are ranks of one launch (TR_CAP_RANKS,
 * tfgb-mpi(7)): throughput and train run only as every PS and worker of
 * one launch (role->one_launch).  TFGB_EXIT_OK, or TFGB_EXIT_USAGE after
 * one line giving the command to use (said by the first rank only). */
int session_ranks_check(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                        const struct cluster_role *role);

/* A transport whose processes are ranks of one launch cannot have the
 * emulated link of [network], which needs the PSs and workers that tfgb
 * starts itself: TFGB_EXIT_USAGE, after one line naming the [network] key
 * when say is set (the first rank), else TFGB_EXIT_OK. */
int session_net_ranks(struct tfgb *t, const struct tr_ops *ops, int say);

#endif
