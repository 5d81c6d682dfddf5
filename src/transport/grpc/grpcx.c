/* grpcx.c - gRPC core helpers shared by the transport and the control service. */
#include "grpcx.h"

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

static void log_set(void)
{
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

grpc_connectivity_state grpcx_wait_ready(grpc_channel *ch, int64_t offset, uint64_t deadline_ns)
{
	grpc_completion_queue *wcq = grpc_completion_queue_create_for_next(NULL);
	grpc_connectivity_state st;

	for (;;) {
		st = grpc_channel_check_connectivity_state(ch, 1);
		if (st == GRPC_CHANNEL_READY || st == GRPC_CHANNEL_SHUTDOWN ||
		    now_ns() >= deadline_ns)
			break;
		grpc_channel_watch_connectivity_state(ch, st, grpcx_deadline(offset, deadline_ns), wcq,
		                                      NULL);
		grpc_completion_queue_next(wcq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	}
	grpc_completion_queue_shutdown(wcq);
	grpcx_cq_drain(wcq);
	grpc_completion_queue_destroy(wcq);
	return st;
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

static int tls_client(const struct job_tls *tls)
{
	return tls && tls->ca;
}

grpc_channel_credentials *grpcx_channel_creds(const struct job_tls *tls)
{
	if (!tls_client(tls))
		return grpc_insecure_credentials_create();
	return grpc_ssl_credentials_create(tls->ca, NULL, NULL, NULL);
}

/* 1 when every address host:port resolves to can be bound now. */
static int bindable(const struct opt_hostport *addr)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *res;
	char port[8];
	int ok = 1, one = 1;

	snprintf(port, sizeof port, "%u", addr->port);
	if (getaddrinfo(addr->host, port, &hints, &res) != 0)
		return 0;
	for (struct addrinfo *ai = res; ai && ok; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* as gRPC binds: SO_REUSEADDR, so a port in TIME_WAIT is no obstacle */
		ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
		     bind(fd, ai->ai_addr, ai->ai_addrlen) == 0;
		if (fd >= 0)
			close(fd);
	}
	freeaddrinfo(res);
	return ok;
}

const char *grpcx_listen_text(const struct job_tls *tls, const struct opt_hostport *addr)
{
	/* gRPC refuses a key that does not belong to its certificate only by
	 * failing the bind: an address that binds tells that apart */
	if (tls && tls->cert && bindable(addr))
		return "gRPC refused server.tls_cert and server.tls_key: does the key belong to the "
		       "certificate?";
	return "address in use or not local";
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
