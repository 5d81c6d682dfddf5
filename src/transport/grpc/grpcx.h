/* grpcx.h - gRPC core helpers shared by the gRPC transport (tr_grpc.c) and
 * the control service (ctrl.c): log routing, deadlines on tfgb's clock,
 * credentials (TLS or plaintext), channel readiness, queue draining. */
#ifndef TFGB_GRPCX_H
#define TFGB_GRPCX_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "job.h"

/* Routes gRPC's own log lines to stderr as "tfgb: grpc: ..." (once per
 * process), and silences them while quiet is set.  The setting is the
 * process's: the transport and the control service share it.  The same
 * once-per-process step turns Abseil's mutex deadlock detector off
 * (grpcx_absl_nodeadlock); call it before grpc_init. */
void grpcx_log_install(void);

/* Debian builds Abseil without NDEBUG, so every absl::Mutex lock and
 * unlock inside gRPC core also runs Abseil's deadlock detector (a
 * process-wide graph of lock order, kept under one global lock): on a
 * 1 x 10 B Echo server that is 7.9k of the 46k instructions per call
 * (bench/README).  Release builds of Abseil have no detector; this sets
 * the mode they run in (absl::SetMutexDeadlockDetectionMode(kIgnore)),
 * found by its symbol name.  Returns 1 when it was set, 0 when this
 * Abseil has no such symbol (another inline namespace, or a static
 * build): then nothing changes.  Call it before gRPC takes a lock. */
int grpcx_absl_nodeadlock(void);
void grpcx_log_quiet(int quiet);

/* GPR_CLOCK_MONOTONIC minus the now_ns() clock: both advance together, so
 * one reading converts every deadline of a client. */
int64_t grpcx_clock_offset(void);
/* A now_ns()-clock deadline as a gpr_timespec (infinite when huge). */
gpr_timespec grpcx_deadline(int64_t offset, uint64_t deadline_ns);

/* Channelz off: gRPC core's channelz (on by default) counts every call
 * on the channel, subchannel and server and stamps its start with a
 * GPR_CLOCK_REALTIME reading, five clock reads per call on each side that
 * no one here reads back (tfgb has no admin service).  A clock read costs
 * 0.2-0.3 us on a VM with kvm-clock; see bench/README. */
#define GRPCX_NO_CHANNELZ {GRPC_ARG_INTEGER, (char *)GRPC_ARG_ENABLE_CHANNELZ, {.integer = 0}}

/* The channel arguments of every tfgb client, before its own: no message
 * size limit (the server's max_message is the limit), no retries (the
 * retry filter would hold a copy of every request), no channelz, and a
 * reconnect backoff short enough to notice a server that starts a little
 * after its clients. */
#define GRPCX_CLIENT_ARGS \
	{GRPC_ARG_INTEGER, (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, {.integer = -1}}, \
	{GRPC_ARG_INTEGER, (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, {.integer = -1}}, \
	{GRPC_ARG_INTEGER, (char *)GRPC_ARG_ENABLE_RETRIES, {.integer = 0}}, \
	GRPCX_NO_CHANNELZ, \
	{GRPC_ARG_INTEGER, (char *)GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, {.integer = 100}}, \
	{GRPC_ARG_INTEGER, (char *)GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, {.integer = 100}}, \
	{GRPC_ARG_INTEGER, (char *)GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, {.integer = 1000}}

/* Waits until ch is READY, SHUTDOWN or deadline_ns, or until tfgb_stop
 * (util.h) is no longer stop0, its value when the caller's wait began
 * (seen within GRPCX_STOP_POLL_NS); returns the last state. */
#define GRPCX_STOP_POLL_NS 100000000ull
grpc_connectivity_state grpcx_wait_ready(grpc_channel *ch, int64_t offset, uint64_t deadline_ns,
                                         sig_atomic_t stop0);
/* The same for a channel to addr with the credentials of tls, which also
 * returns TRANSIENT_FAILURE at once, with why (when not NULL) saying what the
 * peer is, when the failure is one that waiting will not cure: the peer is
 * not a gRPC server (peer.h), or it speaks TLS to a plaintext client or
 * plaintext to a TLS one.  why is "" otherwise. */
grpc_connectivity_state grpcx_wait_ready_why(grpc_channel *ch, int64_t offset,
                                             uint64_t deadline_ns, sig_atomic_t stop0,
                                             const struct opt_hostport *addr,
                                             const struct job_tls *tls, struct err *why);
/* The time from start_ns to deadline_ns, to the millisecond, for "cannot
 * connect ... within 10s" messages. */
void grpcx_within(uint64_t start_ns, uint64_t deadline_ns, char *buf, size_t len);
/* Server credentials: TLS presenting tls->cert with tls->key when tls is
 * not NULL and has them (no client certificate is asked for), else
 * plaintext.  Release with grpc_server_credentials_release. */
grpc_server_credentials *grpcx_server_creds(const struct job_tls *tls);
/* Channel credentials: TLS checking the server against the CA certificates
 * tls->ca when tls is not NULL and has them, else plaintext.  The server's
 * certificate must name the host of the target (DNS or IP SAN). */
grpc_channel_credentials *grpcx_channel_creds(const struct job_tls *tls);

/* Why grpc_server_add_http2_port refused addr with the credentials of tls,
 * for messages: the address (in use, not local, a port that needs
 * privileges, a host that does not resolve: bind's own errno, peer.h), or
 * (when the address binds) the certificate and key.  The text is the
 * calling thread's until its next call. */
const char *grpcx_listen_text(const struct job_tls *tls, const struct opt_hostport *addr);

/* Why a channel to addr is not ready, for messages: "nothing is listening".
 * A channel in TRANSIENT_FAILURE to an address that accepts TCP
 * connections did not get past the handshake: the text then says which
 * TLS setting is likely wrong. */
const char *grpcx_fail_text(grpc_connectivity_state st, const struct opt_hostport *addr,
                            const struct job_tls *tls);

/* Takes every event off a queue that was shut down. */
void grpcx_cq_drain(grpc_completion_queue *cq);

/* A message's whole body as one contiguous slice (gRPC copies it when it
 * came in pieces); empty if it cannot be read.  The caller unrefs it. */
grpc_slice grpcx_body_slice(grpc_byte_buffer *bb);

/* Fills ops[0..2], zeroed first, with a server's reply: its initial
 * metadata, the message bb unless NULL, and the status st with details
 * unless NULL (both must live until the batch completes).  Returns how
 * many ops it filled, 2 or 3; the caller may add more after them. */
size_t grpcx_reply_ops(grpc_op ops[3], grpc_byte_buffer *bb, grpc_status_code st,
                       grpc_slice *details);

#endif
