/* wctl.h - worker 0's control service, for throughput runs with no
 * launcher process above the workers (tfgb-throughput(1), "The control
 * service" and "Failures").
 *
 * Without a launcher, PS 0's `tfgb serve` hosts the control service the
 * workers meet at; its death would take every report with it.  So worker 0
 * hosts a second one on a thread of its own, on the local address of its
 * route to PS 0 and a port the kernel picks, and the workers hand in their
 * reports at both:
 *
 *  - Before the start barrier each worker hands in a hello at PS 0's
 *    service (a Report under run_id ^ WCTL_HELLO_ID: its pid, its host and,
 *    from worker 0, its service's address); after the release each
 *    collects every hello, so every worker knows the others' hosts and
 *    pids and where worker 0's service is.
 *  - At the end each worker reports to worker 0's service and (the others
 *    than worker 0) to PS 0's.  Worker 0 collects from its own, then takes
 *    from PS 0's what is missing; when worker 0's service has gone away
 *    worker 1 collects from PS 0's instead.  Whoever collects names a
 *    missing worker by its hello, and a PS that no longer listens.
 *
 * No new message: hellos are Reports of the existing contract, so an older
 * PS 0 keeps them like any report, and a run whose worker 0 announced no
 * service (an older worker 0, TLS, no route) reports to PS 0 alone, as
 * before. */
#ifndef TFGB_WCTL_H
#define TFGB_WCTL_H

#include <stdint.h>

#include "cluster.h"
#include "opt.h"
#include "wresult.h"
#include "tfgb.h"
#include "transport.h"

/* xor'd with the run id: the run id of the workers' hellos */
#define WCTL_HELLO_ID 0x48454c4c4fu /* "HELLO" */

struct ctrl_client;
struct ctrl_server;
struct wresult;

struct wctl {
	int index;                    /* this worker's */
	uint32_t workers;
	uint64_t run_id;
	struct ctrl_server *srv;      /* worker 0: its own service, or NULL */
	struct ctrl_client *w0;       /* a client of worker 0's service, or NULL */
	struct opt_hostport w0addr;   /* where it is; port 0: none announced */
	int w0_gone;                  /* a report to it failed: it went away */
	char (*host)[RESULT_HOST_MAX]; /* [workers]: each one's host, from its hello */
	int32_t *pid;                 /* [workers]: each one's pid; 0: no hello */
};

/* Sets w up for worker index of a run; worker 0 starts its service when
 * alone (no launcher process above the workers, which hosts the service
 * then; ops: the benchmark's transport, for the service's polling).  Never
 * fails the run: a service that cannot start is said, and the run goes on
 * with PS 0's alone.  TFGB_EXIT_OK or TFGB_EXIT_FAIL (out of memory, said). */
int wctl_open(struct wctl *w, struct tfgb *t, const struct tr_ops *ops, int index,
              uint32_t workers, uint64_t run_id, int alone);
/* Frees what w holds: the client, then the service; accepts a zeroed w. */
void wctl_close(struct wctl *w);

/* Before the start barrier, on PS 0's service (cc): the worker's hello.
 * 0, or -errno with err set (ctrl_report's). */
int wctl_hello(struct wctl *w, struct ctrl_client *cc, uint64_t deadline_ns, struct err *err);
/* After the release: every worker's hello, and a client of worker 0's
 * service when it announced one (a failure to reach it is said; the
 * worker then reports to PS 0's alone). */
void wctl_meet(struct tfgb *t, struct wctl *w, struct ctrl_client *cc);

/* Hands in wr at worker 0's service and at PS 0's (cc): 0 when one of
 * them took it, else -1 (said).  Sets w->w0_gone when worker 0's service
 * was reached before and refuses now. */
int wctl_send(struct tfgb *t, struct wctl *w, struct ctrl_client *cc, const struct wresult *wr);

/* Whether this worker prints the result: worker 0, or worker 1 when
 * worker 0's service went away. */
int wctl_collector(const struct wctl *w);

/* Where the collector collects: its primary service, and the one to fill
 * the gaps from (NULL: none). */
struct ctrl_client *wctl_primary(const struct wctl *w, struct ctrl_client *cc);
struct ctrl_client *wctl_secondary(const struct wctl *w, struct ctrl_client *cc);

struct report_lost;
/* After collecting (seen[i]: worker i reported; failed: a report says its
 * run failed): the process that died, as far as the collector can tell.  A
 * PS that no longer listens (ops->port_offset added to its port, probed
 * when a worker failed or a report is missing) comes first: its death
 * makes the workers' calls fail; else the first worker with no report,
 * named by its hello.  Fills *lost with strings in how and host (their
 * sizes: RESULT_HOST_MAX + 64 and RESULT_HOST_MAX at least) and returns
 * 1, or 0 when nothing died that it can see. */
int wctl_lost(const struct wctl *w, const struct job *j, const struct tr_ops *ops,
              const unsigned char *seen, int failed, struct report_lost *lost, char *how,
              size_t howlen, char *host, size_t hostlen);

#endif
