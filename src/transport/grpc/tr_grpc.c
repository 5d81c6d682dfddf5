/* tr_grpc.c - the gRPC transport: gRPC core's C API, HTTP/2 in plaintext
 * or, with [server] tls_* set, over TLS (grpcx_server_creds/channel_creds).
 *
 * Client: one completion queue per tr_client shared by its connections;
 * [grpc] channels channels per connection (each with a distinct channel
 * argument and a local subchannel pool, so that each is a TCP connection of
 * its own), calls spread over them round-robin as TensorFlow spreads them
 * over num_channels_per_target; the method paths registered once per
 * channel; every channel and the server made with the [grpc] section's
 * channel arguments (gr_conf_args); a call is one registered call and ONE batch of six ops, tagged
 * with its per-call state (which points back at its struct tr_call, so that
 * a tr_call released while in flight is never touched again).  The request is a byte buffer whose slices point
 * at the engine's iovec buffers (grpc_slice_from_static_buffer: no copy); the
 * byte buffer, metadata arrays and status slot live behind tr_call.priv,
 * allocated on the first submit and reused, so the steady state allocates
 * nothing here (gRPC core allocates its own call arena).
 *
 * Server (`tfgb serve`): tr_grpc_serve.c; what both sides share:
 * tr_grpc_int.h.
 */
#include "gr_channelz.h"
#include "gr_conf.h"
#include "grpcx.h"
#include "tr_call.h"
#include "tr_grpc_int.h"
#include "tr_grpc_lib.h"
#include "transport.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/slice_buffer.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include "bench.h"
#include "codec.h"
#include "payload.h"
#include "peer.h"
#include "sysinfo.h"
#include "util.h"

#define NMETHODS (TR_METHOD_LAST + 1) /* indexed by enum tr_method; 0 unused */

/* ---- common ------------------------------------------------------------ */

/* The transport's context: a copy of the job's [grpc] section, which the
 * server and clients without a section of their own read. */
static int g_init(const struct tr_setup *s, void **ctx, struct err *err)
{
	const struct gr_conf *sec = s ? s->section : NULL;
	struct gr_conf *conf = calloc(1, sizeof *conf);

	if (!conf) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	if (sec)
		*conf = *sec;
	else if (job_section_defaults(&tr_grpc_section, conf) < 0) {
		free(conf);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	grpcx_log_install();
	grpc_init();
	*ctx = conf;
	return 0;
}

static void g_fini(void *ctx)
{
	free(ctx);
	grpc_shutdown();
}

static char g_version_text[64];
static pthread_once_t g_version_once = PTHREAD_ONCE_INIT;

static void version_make(void)
{
	tr_grpc_version_text(g_version_text, sizeof g_version_text);
}

static const char *g_version(void)
{
	pthread_once(&g_version_once, version_make);
	return g_version_text;
}

/* ---- client ------------------------------------------------------------ */

/* Per-call state behind tr_call.priv. */
struct gcall {
	grpc_call *call;            /* non-NULL while in flight */
	grpc_byte_buffer *req;      /* reused: refilled with static slices per submit */
	grpc_byte_buffer *resp;     /* the reply, owned until reap */
	grpc_metadata_array md_initial, md_trailing;
	grpc_status_code status;
	grpc_slice details;
	struct tr_call *owner;
	struct tr_conn *conn;       /* the connection it was made on */
	int orphaned;               /* released while in flight: freed on completion */
	struct dlist dl;            /* the client's in-flight list */
};

/* The most channels of one connection: [grpc] channels' maximum. */
#define CHANNELS_MAX 64

struct tr_conn {
	struct tr_client *c;
	int nch;                    /* channels made, [grpc] channels when connected */
	int next;                   /* the channel of the next call, round-robin */
	grpc_channel *ch[CHANNELS_MAX];
	void *method[CHANNELS_MAX][NMETHODS]; /* grpc_channel_register_call handles */
	int64_t cz[CHANNELS_MAX];   /* their channelz ids (grpc.channelz on), else 0 */
	char target[TARGET_MAX];
	uint16_t port;
	char why[ERR_MAX];       /* the first failed call's explanation, "" until then */
};

struct tr_client {
	grpc_completion_queue *cq;
	int64_t gpr_off;            /* see grpcx_clock_offset */
	const struct job_tls *tls;  /* the job's: TLS when it has a CA */
	struct gr_conf conf;        /* the job's [grpc] section */
	struct tr_conn **conn;
	size_t nconn, capconn;
	struct dlist inflight;      /* list head */
	long outstanding;
	uint64_t started;           /* calls started: the counters' divisor */
	uint64_t link_rtt_ns;       /* tr_client_cfg's */
};

/* Makes every channel's arguments distinct: gRPC shares one subchannel (one
 * TCP connection) among channels with equal arguments. */
static atomic_long g_conn_serial;

static int g_client_open(void *ctx, const struct tr_client_cfg *cfg, struct tr_client **out,
                         struct err *err)
{
	struct tr_client *c = calloc(1, sizeof *c);

	(void)ctx;
	if (!c) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	c->tls = cfg ? cfg->tls : NULL;
	c->link_rtt_ns = cfg ? cfg->link_rtt_ns : 0;
	if (cfg && cfg->section)
		c->conf = *(const struct gr_conf *)cfg->section;
	else if (ctx)
		c->conf = *(const struct gr_conf *)ctx;
	else
		job_section_defaults(&tr_grpc_section, &c->conf); /* plain numbers: cannot fail */
	c->cq = grpc_completion_queue_create_for_next(NULL);
	c->gpr_off = grpcx_clock_offset();
	dlist_init(&c->inflight);
	*out = c;
	return 0;
}

/* Makes k's next channel, with the client's [grpc] arguments and a serial
 * of its own, and registers the method paths on it. */
static void channel_make(struct tr_client *c, struct tr_conn *k)
{
	grpc_arg args[GR_CONF_ARGS_MAX + 3] = {
		{GRPC_ARG_INTEGER, (char *)"tfgb.connection",
		 {.integer = (int)(atomic_fetch_add(&g_conn_serial, 1) & 0x7fffffff)}},
		{GRPC_ARG_INTEGER, (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, {.integer = 1}},
	};
	grpc_channel_args chargs = {2 + gr_conf_args(&c->conf, 0, 0, args + 2), args};
	size_t a = 0;

	/* gRPC gives a connection attempt max(this, the backoff) to finish
	 * (tfgb's preset: 100 ms, the backoff at most 1 s): over an emulated
	 * link, its handshake's round trips and a second (the first argument
	 * of a key is the one gRPC takes) */
	while (a < chargs.num_args && strcmp(args[a].key, GRPC_ARG_MIN_RECONNECT_BACKOFF_MS))
		a++;
	if (c->link_rtt_ns) {
		args[a] = (grpc_arg){GRPC_ARG_INTEGER, (char *)GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
		                     {.integer = (int)(1000 + 2 * c->link_rtt_ns / 1000000)}};
		chargs.num_args += a == chargs.num_args;
	}
	grpc_channel_credentials *creds = grpcx_channel_creds(c->tls);
	int i = k->nch++;

	k->ch[i] = grpc_channel_create(k->target, creds, &chargs);
	grpc_channel_credentials_release(creds);
	if (gr_conf_channelz(&c->conf)) /* this thread made the newest: it is this one */
		k->cz[i] = gr_channelz_newest(k->target);
	for (int m = TR_ECHO; m < NMETHODS; m++)
		k->method[i][m] = grpc_channel_register_call(k->ch[i], tr_method_path(m), NULL, NULL);
}

/* Waits until channel i of k is ready: 0, or -errno with err set. */
static int channel_wait(struct tr_client *c, struct tr_conn *k, int i,
                        const struct opt_hostport *addr, uint64_t start_ns, uint64_t deadline_ns,
                        struct err *err)
{
	grpc_connectivity_state st;
	struct err why;
	sig_atomic_t stop0 = tfgb_stop;

	st = grpcx_wait_ready_why(k->ch[i], c->gpr_off, deadline_ns, stop0, addr, c->tls, &why);
	if (st != GRPC_CHANNEL_READY && tfgb_stop != stop0) {
		err_set(err, "interrupted while connecting to '%s'", k->target);
		return -EINTR;
	}
	if (st != GRPC_CHANNEL_READY && why.msg[0]) { /* told at once: waiting would not help */
		err_set(err, "'%s' is not a tfgb gRPC server: %s", k->target, why.msg);
		return -EPROTO;
	}
	if (st != GRPC_CHANNEL_READY) {
		char within[32];
		grpcx_within(start_ns, deadline_ns, within, sizeof within);
		/* a PS behind the emulated link is one tfgb started and saw ready:
		 * no probe of 500 ms tells across it whether anything listens */
		err_set(err, "cannot connect to '%s' within %s: %s", k->target, within,
		        c->link_rtt_ns ? "no connection across the emulated link ([network])" :
		        grpcx_fail_text(st, addr, c->tls));
		return st == GRPC_CHANNEL_TRANSIENT_FAILURE ? -ECONNREFUSED : -ETIMEDOUT;
	}
	return 0;
}

static int g_connect(struct tr_client *c, const struct opt_hostport *addr, uint64_t deadline_ns,
                     struct tr_conn **out, struct err *err)
{
	uint64_t start_ns = now_ns();
	int nch = c->conf.channels < 1 ? 1 : c->conf.channels > CHANNELS_MAX ? CHANNELS_MAX
	                                                                      : (int)c->conf.channels;
	struct tr_conn *k;
	int rc;

	/* a name gRPC cannot resolve would only show as a timeout */
	if ((rc = peer_resolve(addr->host, err)) < 0)
		return rc;
	if (c->nconn == c->capconn) {
		size_t cap = c->capconn ? 2 * c->capconn : 8;
		struct tr_conn **v = realloc(c->conn, cap * sizeof *v);
		if (!v)
			goto nomem;
		c->conn = v;
		c->capconn = cap;
	}
	k = calloc(1, sizeof *k);
	if (!k)
		goto nomem;
	k->c = c;
	k->port = addr->port;
	opt_format_hostport(addr, k->target, sizeof k->target);
	c->conn[c->nconn++] = k;
	/* every channel connects at once; then each is waited for */
	for (int i = 0; i < nch; i++)
		channel_make(c, k);
	for (int i = 0; i < nch; i++)
		if ((rc = channel_wait(c, k, i, addr, start_ns, deadline_ns, err)) < 0)
			return rc;
	*out = k;
	return 0;
nomem:
	err_set(err, "out of memory");
	return -ENOMEM;
}

static struct gcall *gcall_new(void)
{
	struct gcall *g = calloc(1, sizeof *g);

	if (!g)
		return NULL;
	g->req = grpc_raw_byte_buffer_create(NULL, 0);
	grpc_metadata_array_init(&g->md_initial);
	grpc_metadata_array_init(&g->md_trailing);
	g->details = grpc_empty_slice();
	return g;
}

static int g_submit(struct tr_conn *conn, struct tr_call *call)
{
	struct tr_client *c = conn->c;
	struct gcall *g = call->priv;
	grpc_call_error e;
	int ch = conn->next;

	if (call->method < TR_ECHO || call->method >= NMETHODS)
		return -EINVAL;
	if (!g && !(g = call->priv = gcall_new()))
		return -ENOMEM;
	g->owner = call;
	g->conn = conn;
	grpc_slice_buffer_reset_and_unref(&g->req->data.raw.slice_buffer);
	for (int i = 0; i < call->iovcnt; i++)
		bb_add(g->req, call->iov[i].iov_base, call->iov[i].iov_len);
	g->md_initial.count = g->md_trailing.count = 0;
	g->status = GRPC_STATUS_UNKNOWN;
	g->resp = NULL;

	/* the engine enforces its own deadlines through reap */
	g->call = grpc_channel_create_registered_call(conn->ch[ch], NULL, GRPC_PROPAGATE_DEFAULTS,
	                                              c->cq, conn->method[ch][call->method],
	                                              gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	if (!g->call)
		return -EIO;
	grpc_op ops[6] = {
		{.op = GRPC_OP_SEND_INITIAL_METADATA},
		{.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = g->req},
		{.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT},
		{.op = GRPC_OP_RECV_INITIAL_METADATA,
		 .data.recv_initial_metadata.recv_initial_metadata = &g->md_initial},
		{.op = GRPC_OP_RECV_MESSAGE, .data.recv_message.recv_message = &g->resp},
		{.op = GRPC_OP_RECV_STATUS_ON_CLIENT,
		 .data.recv_status_on_client = {.trailing_metadata = &g->md_trailing,
		                                .status = &g->status,
		                                .status_details = &g->details}},
	};
	e = grpc_call_start_batch(g->call, ops, 6, g, NULL);
	if (e != GRPC_CALL_OK) {
		grpc_call_unref(g->call);
		g->call = NULL;
		return -EIO;
	}
	dlist_append(&c->inflight, &g->dl);
	c->outstanding++;
	c->started++;
	conn->next = ch + 1 == conn->nch ? 0 : ch + 1;
	return 0;
}

static void gcall_free(struct gcall *g)
{
	grpc_byte_buffer_destroy(g->req);
	grpc_metadata_array_destroy(&g->md_initial);
	grpc_metadata_array_destroy(&g->md_trailing);
	grpc_slice_unref(g->details);
	free(g);
}

/* Takes a finished call off the in-flight list and releases what this call
 * (not the tr_call) holds; frees an orphan. */
static void gcall_finish(struct tr_client *c, struct gcall *g)
{
	dlist_unlink(&g->dl);
	c->outstanding--;
	if (g->resp) {
		grpc_byte_buffer_destroy(g->resp);
		g->resp = NULL;
	}
	grpc_slice_unref(g->details);
	g->details = grpc_empty_slice();
	grpc_call_unref(g->call);
	g->call = NULL;
	if (g->orphaned)
		gcall_free(g);
}

static void copy_reply(grpc_byte_buffer *bb, void *dst, size_t cap)
{
	grpc_byte_buffer_reader rd;
	grpc_slice *s;
	size_t got = 0;

	if (!grpc_byte_buffer_reader_init(&rd, bb))
		return;
	while (got < cap && grpc_byte_buffer_reader_peek(&rd, &s)) {
		size_t n = GRPC_SLICE_LENGTH(*s);
		if (n > cap - got)
			n = cap - got;
		memcpy((char *)dst + got, GRPC_SLICE_START_PTR(*s), n);
		got += n;
	}
	grpc_byte_buffer_reader_destroy(&rd);
}

/* The first failed call of a connection: why, from its status and
 * details, kept for g_conn_error (a failure, so never on the timed path). */
static void conn_note(struct tr_conn *k, const struct gcall *g)
{
	int n = (int)GRPC_SLICE_LENGTH(g->details);
	const char *d = (const char *)GRPC_SLICE_START_PTR(g->details);

	if (k->why[0])
		return;
	if (g->status == GRPC_STATUS_UNIMPLEMENTED && n > 0 && memmem(d, (size_t)n,
	                                                             "tfgb.v1.Control", 15))
		snprintf(k->why, sizeof k->why, "'%s' is tfgb's control service port "
		         "(cluster.control), not a parameter server; the benchmark port of the "
		         "`tfgb serve` that hosts it is [cluster] ps, by default one above (%u)",
		         k->target, k->port + 1u);
	else if (g->status == GRPC_STATUS_UNIMPLEMENTED)
		snprintf(k->why, sizeof k->why, "'%s' does not implement tfgb.v1.Bench: not a tfgb "
		         "server%s%.*s%s", k->target, n ? " (" : "", n > 160 ? 160 : n, d, n ? ")" : "");
	else if (n > 0)
		snprintf(k->why, sizeof k->why, "%.*s", n > 200 ? 200 : n, d);
}

static const char *g_conn_error(const struct tr_conn *k)
{
	return k->why[0] ? k->why : NULL;
}

static int g_reap(struct tr_client *c, struct tr_call **done, int max, uint64_t deadline_ns)
{
	gpr_timespec dl = grpcx_deadline(c->gpr_off, deadline_ns);
	int n = 0;

	while (n < max) {
		grpc_event ev;
		struct tr_call *call;
		struct gcall *g;

		/* after the first completion, collect only what is already there */
		if (n > 0 && c->outstanding == 0)
			break;
		ev = grpc_completion_queue_next(c->cq, n ? gpr_inf_past(GPR_CLOCK_MONOTONIC) : dl, NULL);
		if (ev.type == GRPC_QUEUE_TIMEOUT)
			break;
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return n ? n : -ESHUTDOWN;
		g = ev.tag;
		call = g->owner;
		if (g->orphaned) {
			gcall_finish(c, g);
			continue;
		}
		call->status = g->status;
		if (!ev.success && call->status == GRPC_STATUS_OK)
			call->status = TR_UNAVAILABLE;
		if (call->status != GRPC_STATUS_OK)
			conn_note(g->conn, g);
		call->resp_len = g->resp ? grpc_byte_buffer_length(g->resp) : 0;
		if (g->resp && call->resp_buf && call->resp_cap)
			copy_reply(g->resp, call->resp_buf, call->resp_cap);
		gcall_finish(c, g);
		done[n++] = call;
	}
	return n;
}

/* The channelz socket data of every channel of c (tr_ops.counters). */
static void g_counters(struct tr_client *c, struct tr_counters *out)
{
	int on = gr_conf_channelz(&c->conf);

	memset(out, 0, sizeof *out);
	out->calls = c->started;
	for (size_t i = 0; on && i < c->nconn; i++)
		for (int j = 0; j < c->conn[i]->nch; j++)
			gr_channelz_channel(c->conn[i]->cz[j], out);
	gr_channelz_why(out, on);
}

/* The channelz socket data of this process's server (tr_ops.serve_counters). */
static void g_serve_counters(void *ctx, struct tr_counters *out)
{
	int on = gr_conf_channelz(ctx);

	memset(out, 0, sizeof *out);
	if (on) /* the connection of the Info call being answered left out */
		gr_channelz_server(atomic_load(&tr_grpc_server_cz), tr_grpc_info_peer, out);
	gr_channelz_why(out, on);
	if (on && !out->sockets)
		snprintf(out->why, sizeof out->why, "no open connection but the asking one: channelz "
		         "forgets a connection once it closes");
}

static void g_client_close(struct tr_client *c)
{
	if (!c)
		return;
	/* cancel what is in flight and wait for each call's completion */
	for (struct dlist *n = c->inflight.next; n != &c->inflight; n = n->next)
		grpc_call_cancel(dlist_entry(n, struct gcall, dl)->call, NULL);
	while (c->outstanding > 0) {
		grpc_event ev = grpc_completion_queue_next(c->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC),
		                                           NULL);
		if (ev.type != GRPC_OP_COMPLETE)
			break;
		struct gcall *g = ev.tag;
		if (!g->orphaned)
			g->owner->status = TR_CANCELLED;
		gcall_finish(c, g);
	}
	for (size_t i = 0; i < c->nconn; i++) {
		for (int j = 0; j < c->conn[i]->nch; j++)
			grpc_channel_destroy(c->conn[i]->ch[j]);
		free(c->conn[i]);
	}
	free(c->conn);
	grpc_completion_queue_shutdown(c->cq);
	grpcx_cq_drain(c->cq);
	grpc_completion_queue_destroy(c->cq);
	free(c);
}

/* A call still in flight is cancelled and left to its client, which frees
 * its state when the completion arrives (reap or client_close). */
static void g_call_release(struct tr_call *call)
{
	struct gcall *g = tr_priv_take(call);

	if (!g)
		return;
	if (g->call) {
		g->orphaned = 1;
		g->owner = NULL;
		grpc_call_cancel(g->call, NULL);
		return;
	}
	gcall_free(g);
}

const struct tr_ops tr_grpc_ops = {
	.name = "grpc",
	.size = sizeof(struct tr_ops),
	.caps = TR_CAP_SERVER | TR_CAP_CLIENT | TR_CAP_TLS | TR_CAP_SHARED_POLLER |
	        TR_CAP_VERSION_LINE,
	.init = g_init,
	.fini = g_fini,
	.version = g_version,
	.serve = tr_grpc_serve,
	.client_open = g_client_open,
	.client_close = g_client_close,
	.connect = g_connect,
	.conn_error = g_conn_error,
	.submit = g_submit,
	.reap = g_reap,
	.call_release = g_call_release,
	/* one completion-queue thread, as a hand-written gRPC server has: with
	 * two or more, gRPC's poller role moves between them on every event (a
	 * futex and an eventfd wake-up each), which costs small calls latency
	 * and large ones several times their CPU (tfgb-serve(1)) */
	.default_threads = 1,
	.environment = tr_grpc_environment,
	.counters = g_counters,
	.serve_counters = g_serve_counters,
	.coll = &gr_coll_ops,
};
