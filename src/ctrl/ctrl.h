/* ctrl.h - the control service that coordinates a multi-process run.
 *
 * PS 0's `tfgb serve` hosts it on [cluster] control (by default PS 0's host,
 * one port below PS 0); the one-machine launcher hosts its own, and so does
 * worker 0 of a run without a launcher (src/run/wctl.h), on a port the
 * kernel picks (ctrl_server_port).  It is gRPC whatever the benchmark's transport, and
 * speaks tfgb.v1.Control (proto/tfgb.proto; raw big-endian bodies, see
 * ctrl_server.c for the exact layouts, ctrl_wire.c for their codecs):
 *
 *   Barrier  every worker of a run calls it with the same generation; all
 *            replies go out together once `workers` distinct workers have
 *            arrived.  Generation 0 is registration.
 *   Report   a worker hands in its result blob (at most CTRL_BLOB_MAX bytes).
 *   Collect  answers with every report of the run once all `workers` are
 *            in, or at once with what is there when `partial` is set.
 *
 * A run is named by a 64-bit run id that all its workers share (see
 * cluster_run_id()), so that one long-lived server serves run after run and
 * a crashed run's leftovers never mix with the next.  The server keeps at
 * most CTRL_RUNS runs (the least recently used is dropped) and each at most
 * `workers` <= CTRL_WORKERS_MAX reports, so its memory is bounded.
 *
 * When the job sets [cluster] token, every call carries it as the request
 * metadata entry "tfgb-token" and the service refuses calls without it.
 */
#ifndef TFGB_CTRL_H
#define TFGB_CTRL_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "opt.h"

#define CTRL_BLOB_MAX (256u << 10)
#define CTRL_WORKERS_MAX 4096u
#define CTRL_RUNS 8

struct ctrl_server;
struct ctrl_client;

/* Starts the service on addr in a thread of its own, over TLS when tls has
 * a certificate and key (grpcx_server_creds; NULL: plaintext).  With a token
 * (the job's cluster.token; NULL or "" for none) every call must present it,
 * or it is answered UNAUTHENTICATED.  The process must have called
 * grpc_init() (or let this call it; it balances with grpc_shutdown() in
 * ctrl_server_stop).  Returns 0 or -errno with err set ("cannot listen on
 * 'host:port': ..."). 
 *
 * polled: another thread of this process polls gRPC's file descriptors for
 * the service's whole life (a gRPC server's completion-queue threads, as in
 * `tfgb serve` with transport grpc).  The service's thread then waits on a
 * non-polling queue and never takes the poller's role: with a second polling
 * thread, gRPC's epoll1 poller hands the role back and forth on every event,
 * which costs the data plane two wake-ups per call (futex, eventfd).  This
 * needs a poller that watches every descriptor (epoll1, gRPC's choice on
 * Linux); with GRPC_POLL_STRATEGY set to another, polled is ignored.  0: the
 * service's thread polls itself (any other transport). */
int ctrl_server_start(const struct opt_hostport *addr, const struct job_tls *tls,
                      const char *token, int verbose, int polled,
                      struct ctrl_server **out, struct err *err);
/* The port it listens on: addr's, or the one the kernel picked when addr's
 * port is 0. */
uint16_t ctrl_server_port(const struct ctrl_server *s);
/* Stops it: pending calls are cancelled; accepts NULL. */
void ctrl_server_stop(struct ctrl_server *s);

/* Connects to the service, over TLS when tls has a CA (grpcx_channel_creds;
 * NULL: plaintext), waiting until deadline_ns (now_ns() clock) for it to
 * come up (workers may start before PS 0).  Every call presents token (NULL
 * or "": none).  0 or -errno with err set.  A call the service refuses for
 * its token fails with -EACCES and err saying so; a host that does not
 * resolve fails at once with -EHOSTUNREACH; SIGINT or SIGTERM during the
 * wait (tfgb_stop, util.h) end it within 100 ms, -EINTR. */
int ctrl_client_open(const struct opt_hostport *addr, const struct job_tls *tls,
                     const char *token, uint64_t deadline_ns, struct ctrl_client **out,
                     struct err *err);
void ctrl_client_close(struct ctrl_client *c); /* accepts NULL */
/* A ctrl_client is used by one thread at a time. */

/* Blocks until `workers` distinct workers of run_id entered barrier `gen`.
 * -ETIMEDOUT at deadline_ns with err saying how many had arrived; other
 * -errno with err on failure (e.g. workers differs between callers). */
int ctrl_barrier(struct ctrl_client *c, uint64_t run_id, uint32_t worker, uint32_t workers,
                 uint32_t gen, uint64_t deadline_ns, struct err *err);
/* The same, and *last set to the worker whose arrival completed it (the
 * last one in: who a synchronous step waited for). */
int ctrl_barrier_last(struct ctrl_client *c, uint64_t run_id, uint32_t worker, uint32_t workers,
                      uint32_t gen, uint64_t deadline_ns, uint32_t *last, struct err *err);

/* Hands in worker's result blob for run_id (a second report replaces the
 * first). */
int ctrl_report(struct ctrl_client *c, uint64_t run_id, uint32_t worker, uint32_t workers,
                const void *blob, size_t len, uint64_t deadline_ns, struct err *err);

/* Called once per report collected, in worker order; a non-zero return
 * stops the walk and is returned by ctrl_collect. */
typedef int (*ctrl_report_fn)(void *arg, uint32_t worker, const void *blob, size_t len);

/* Waits until all `workers` reports of run_id are in (partial = 0) or takes
 * what is there now (partial = 1), and walks them.  *got is set to the
 * number of reports walked.  -ETIMEDOUT at deadline_ns. */
int ctrl_collect(struct ctrl_client *c, uint64_t run_id, uint32_t workers, int partial,
                 uint64_t deadline_ns, ctrl_report_fn fn, void *arg, uint32_t *got, struct err *err);

#endif
