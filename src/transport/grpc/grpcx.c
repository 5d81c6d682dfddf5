/* grpcx.c - gRPC core helpers shared by the transport and the control service. */
#include "grpcx.h"

#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/support/log.h>

#include "cluster.h"
#include "net.h"
#include "peer.h"
#include "util.h"

static atomic_int log_quiet;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* A failing handshake is retried, and logged, every reconnect backoff: a
 * line like the one before it (by its first 511 bytes) says nothing new and
 * is dropped. */
static void log_line(gpr_log_func_args *a)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char last[512];
	const char *file = strrchr(a->file, '/');
	char key[sizeof last];
	int repeat;

	if (atomic_load(&log_quiet))
		return;
	file = file ? file + 1 : a->file;
	snprintf(key, sizeof key, "%s:%d %s", file, a->line, a->message);
	pthread_mutex_lock(&lock);
	repeat = !strcmp(key, last);
	if (!repeat)
		memcpy(last, key, sizeof last);
	pthread_mutex_unlock(&lock);
	if (!repeat)
		fprintf(stderr, "tfgb: grpc: %s (%s:%d)\n", a->message, file, a->line);
}

int grpcx_absl_nodeadlock(void)
{
	/* absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle): Debian's
	 * inline namespace, then none; the enum class is an int, kIgnore 0 */
	static const char *const names[] = {
		"_ZN4absl7debian329SetMutexDeadlockDetectionModeENS0_15OnDeadlockCycleE",
		"_ZN4absl29SetMutexDeadlockDetectionModeENS_15OnDeadlockCycleE",
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		void (*set)(int);
		*(void **)&set = dlsym(RTLD_DEFAULT, names[i]);
		if (set) {
			set(0);
			return 1;
		}
	}
	return 0;
}

static void log_set(void)
{
	grpcx_absl_nodeadlock();
	gpr_set_log_function(log_line);
}

void grpcx_log_install(void)
{
	pthread_once(&log_once, log_set);
}

void grpcx_log_quiet(int quiet)
{
	atomic_store(&log_quiet, quiet);
}

int64_t grpcx_clock_offset(void)
{
	gpr_timespec g = gpr_now(GPR_CLOCK_MONOTONIC);
	uint64_t n = now_ns();

	return (int64_t)g.tv_sec * 1000000000 + g.tv_nsec - (int64_t)n;
}

gpr_timespec grpcx_deadline(int64_t offset, uint64_t deadline_ns)
{
	int64_t g;

	if (deadline_ns >= (uint64_t)INT64_MAX / 2)
		return gpr_inf_future(GPR_CLOCK_MONOTONIC);
	g = (int64_t)deadline_ns + offset;
	if (g <= 0)
		return gpr_inf_past(GPR_CLOCK_MONOTONIC);
	return gpr_time_from_nanos(g, GPR_CLOCK_MONOTONIC);
}

static int tls_client(const struct job_tls *tls)
{
	return tls && tls->ca;
}

/* Whether the peer at addr, whose channel is in TRANSIENT_FAILURE, is
 * something a retry will not turn into a gRPC server of this client's kind
 * (an HTTP/1.x server, a tfgb socket or verbs server, TLS for a plaintext
 * client, plaintext for a TLS client): 1 with why set, else 0 (nothing
 * listens yet, or a gRPC server that failed for a passing reason). */
static int hopeless_peer(const struct opt_hostport *addr, const struct job_tls *tls,
                         uint64_t deadline_ns, struct err *why)
{
	unsigned char b[256];
	uint64_t now = now_ns();
	int ms = now >= deadline_ns ? 0 : (int)((deadline_ns - now) / 1000000);
	int n = peer_identify(addr, peer_h2_preface, peer_h2_preface_len, b, sizeof b,
	                      ms < 1000 ? ms : 1000);

	if (n <= 0)
		return 0;
	switch (peer_kind_of(b, (size_t)n)) {
	case PEER_HTTP2:
		if (!tls_client(tls))
			return 0;
		err_set(why, "the TLS handshake failed: it speaks plaintext gRPC; unset "
		        "server.tls_ca, or give the server tls_cert and tls_key");
		return 1;
	case PEER_TLS:
		if (tls_client(tls))
			return 0; /* a certificate question: said at the deadline */
		err_set(why, "it accepts TCP connections but speaks TLS, not plaintext gRPC; "
		        "if the server uses TLS, set server.tls_ca");
		return 1;
	case PEER_NONE:
		return 0;
	default:
		peer_describe(b, (size_t)n, why->msg, sizeof why->msg);
		return 1;
	}
}

grpc_connectivity_state grpcx_wait_ready_why(grpc_channel *ch, int64_t offset,
                                             uint64_t deadline_ns, sig_atomic_t stop0,
                                             const struct opt_hostport *addr,
                                             const struct job_tls *tls, struct err *why)
{
	grpc_completion_queue *wcq = grpc_completion_queue_create_for_next(NULL);
	grpc_connectivity_state st, last = GRPC_CHANNEL_IDLE;

	if (why)
		why->msg[0] = 0;
	for (;;) {
		uint64_t now = now_ns(), until = deadline_ns;

		st = grpc_channel_check_connectivity_state(ch, 1);
		if (st == GRPC_CHANNEL_READY || st == GRPC_CHANNEL_SHUTDOWN || now >= deadline_ns ||
		    tfgb_stop != stop0)
			break;
		/* each new failure: a peer that is not what we want is told at once */
		if (addr && why && st == GRPC_CHANNEL_TRANSIENT_FAILURE && last != st &&
		    hopeless_peer(addr, tls, deadline_ns, why))
			break;
		last = st;
		/* a watch of 100 ms at most: SIGINT or SIGTERM (tfgb_stop) ends
		 * the wait then, not at the deadline */
		if (until - now > GRPCX_STOP_POLL_NS)
			until = now + GRPCX_STOP_POLL_NS;
		grpc_channel_watch_connectivity_state(ch, st, grpcx_deadline(offset, until), wcq, NULL);
		grpc_completion_queue_next(wcq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	}
	grpc_completion_queue_shutdown(wcq);
	grpcx_cq_drain(wcq);
	grpc_completion_queue_destroy(wcq);
	return st;
}

grpc_connectivity_state grpcx_wait_ready(grpc_channel *ch, int64_t offset, uint64_t deadline_ns,
                                         sig_atomic_t stop0)
{
	return grpcx_wait_ready_why(ch, offset, deadline_ns, stop0, NULL, NULL, NULL);
}

void grpcx_within(uint64_t start_ns, uint64_t deadline_ns, char *buf, size_t len)
{
	uint64_t ms = deadline_ns > start_ns ? (deadline_ns - start_ns + 500000) / 1000000 : 0;

	opt_format_duration(ms * 1000000, buf, len);
}

grpc_server_credentials *grpcx_server_creds(const struct job_tls *tls)
{
	grpc_ssl_pem_key_cert_pair pair;

	if (!tls || !tls->cert || !tls->key)
		return grpc_insecure_server_credentials_create();
	pair.private_key = tls->key;
	pair.cert_chain = tls->cert;
	return grpc_ssl_server_credentials_create_ex(NULL, &pair, 1,
	                                             GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE, NULL);
}

grpc_channel_credentials *grpcx_channel_creds(const struct job_tls *tls)
{
	if (!tls_client(tls))
		return grpc_insecure_credentials_create();
	return grpc_ssl_credentials_create(tls->ca, NULL, NULL, NULL);
}

/* 0 when every address host:port resolves to can be bound now, else the
 * errno of the first that cannot (EHOSTUNREACH: it does not resolve). */
static int bind_errno(const struct opt_hostport *addr)
{
	struct addrinfo *res;
	int e = 0, one = 1;

	if (net_resolve(addr->host, addr->port, 1, &res, NULL) < 0)
		return EHOSTUNREACH;
	for (struct addrinfo *ai = res; ai && !e; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* as gRPC binds: SO_REUSEADDR, so a port in TIME_WAIT is no obstacle */
		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
		    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0)
			e = errno ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
	}
	freeaddrinfo(res);
	return e;
}

const char *grpcx_listen_text(const struct job_tls *tls, const struct opt_hostport *addr)
{
	static _Thread_local struct err text;
	int e = bind_errno(addr);

	/* gRPC refuses a key that does not belong to its certificate only by
	 * failing the bind: an address that binds tells that apart */
	if (tls && tls->cert && e == 0)
		return "gRPC refused server.tls_cert and server.tls_key: does the key belong to the "
		       "certificate?";
	if (e == EHOSTUNREACH && peer_resolve(addr->host, &text) < 0)
		return text.msg;
	if (e == 0) /* it binds now: it did not a moment ago */
		return "address in use or not local";
	return peer_bind_text(e, addr->port, text.msg, sizeof text.msg);
}

const char *grpcx_fail_text(grpc_connectivity_state st, const struct opt_hostport *addr,
                            const struct job_tls *tls)
{
	switch (st) {
	case GRPC_CHANNEL_TRANSIENT_FAILURE:
		if (!cluster_tcp_probe(addr, 500))
			return "nothing is listening";
		if (tls_client(tls))
			return "it accepts TCP connections but the TLS handshake failed: the server "
			       "uses no TLS, or its certificate is not signed by server.tls_ca or does "
			       "not name this host";
		return "it accepts TCP connections but no plaintext gRPC; if the server uses TLS, "
		       "set server.tls_ca";
	case GRPC_CHANNEL_CONNECTING: return "still connecting";
	case GRPC_CHANNEL_IDLE: return "the channel stayed idle";
	case GRPC_CHANNEL_SHUTDOWN: return "the channel shut down";
	default: return "not ready";
	}
}

void grpcx_cq_drain(grpc_completion_queue *cq)
{
	while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type !=
	       GRPC_QUEUE_SHUTDOWN)
		;
}

grpc_slice grpcx_body_slice(grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader rd;
	grpc_slice all;

	if (!grpc_byte_buffer_reader_init(&rd, bb))
		return grpc_empty_slice();
	all = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	return all;
}

size_t grpcx_reply_ops(grpc_op ops[3], grpc_byte_buffer *bb, grpc_status_code st,
                       grpc_slice *details)
{
	size_t n = 0;

	memset(ops, 0, 3 * sizeof ops[0]);
	ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
	if (bb) {
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n++].data.send_message.send_message = bb;
	}
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = st;
	ops[n++].data.send_status_from_server.status_details = details;
	return n;
}
