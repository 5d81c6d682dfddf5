/* srvinfo.c - the Info call: a server's ServerInfo, packed and asked for. */
#include "srvinfo.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tfgb.pb-c.h"
#include "bebuf.h"
#include "monitor.h"
#include "place.h"
#include "util.h"
#include "version.h"


size_t srvinfo_pack(const char *transport, unsigned char *buf, size_t cap)
{
	Tfgb__V1__ServerInfo m = TFGB__V1__SERVER_INFO__INIT;
	struct alloc_info a;
	struct place_seen pl;
	char host[64] = "", node[16] = "none";

	alloc_detect(&a);
	if (gethostname(host, sizeof host) != 0)
		host[0] = 0;
	host[sizeof host - 1] = 0;
	m.tfgb_version = (char *)TFGB_VERSION;
	m.allocator = a.name;
	m.allocator_version = a.version;
	m.host = host;
	m.pid = getpid();
	m.transport = (char *)transport;
	place_measure(&pl); /* as placed when it started: cmd_serve placed it first */
	m.cpus = pl.cpus;
	m.mempolicy = pl.mempolicy;
	if (pl.numa_node >= 0)
		snprintf(node, sizeof node, "%d", pl.numa_node);
	m.numa_node = node;
	/* every field is bounded: 64 + 16 + 64 + 64 + 10 + 128 + 64 + 16 +
	 * short names < 1024 */
	if (tfgb__v1__server_info__get_packed_size(&m) > cap)
		return 0;
	return tfgb__v1__server_info__pack(&m, buf);
}

void srvinfo_clear(struct srvinfo *s)
{
	monitor_free(s->mon);
	s->mon = NULL;
}

void srvinfo_req_pack(unsigned char *buf, unsigned kind, uint64_t run_id, uint64_t span_ns,
                      uint64_t ago_ns)
{
	struct wbuf w = {buf, 0, SRVINFO_REQ_LEN, 0};

	be_put(&w, SRVINFO_REQ_MAGIC, 4);
	be_put(&w, kind, 4);
	be_put(&w, run_id, 8);
	be_put(&w, span_ns, 8);
	be_put(&w, ago_ns, 8);
}

/* The fields of a server's own figures (10 to 14). */
static void unpack_self(const Tfgb__V1__ServerInfo *m, struct srvinfo *out)
{
	int rc;

	out->self = m->samples_itself;
	out->runs = m->runs;
	out->window_ns = m->window_ns;
	if (!m->samples_itself) {
		snprintf(out->res_why, sizeof out->res_why, "it does not sample itself (a tfgb serve "
		         "older than this one, or monitor.interval = 0 in its job)");
	} else if (!m->resources.len) {
		snprintf(out->res_why, sizeof out->res_why, "%.110s", *m->resources_why ?
		         m->resources_why : "no samples in the window");
	} else if ((rc = monitor_unpack(m->resources.data, m->resources.len, &out->mon)) < 0) {
		snprintf(out->res_why, sizeof out->res_why, "its figures do not parse (%s)",
		         strerror(-rc));
		out->mon = NULL;
	}
}

/* Field 15, the server transport's counters: tc_has, or tc says why not. */
static void unpack_counters(const Tfgb__V1__ServerInfo *m, struct srvinfo *out)
{
	struct rbuf b = {m->transport_counters.data, m->transport_counters.len, 0, 0};

	if (!m->transport_counters.len) {
		char why[96];
		/* a serve of this tfgb sends its transport's whenever it keeps them */
		if (m->transport && *m->transport)
			snprintf(why, sizeof why, "the PS's %.32s transport keeps none", m->transport);
		else
			snprintf(why, sizeof why, "the PS's reply has none (an older tfgb serve)");
		tr_counters_none(&out->tc, why);
		return;
	}
	tr_counters_get(&b, &out->tc);
	if (b.bad || b.at != b.len) {
		tr_counters_none(&out->tc, "the PS's counters do not parse");
		return;
	}
	out->tc_has = 1;
}

/* A ServerInfo; its own figures too when they were asked for (self): a
 * plain reply has samples_itself false whoever the server is, and its
 * absence says nothing then. */
static int unpack(const unsigned char *buf, size_t len, int self, struct srvinfo *out)
{
	Tfgb__V1__ServerInfo *m = tfgb__v1__server_info__unpack(NULL, len, buf);

	memset(out, 0, sizeof *out);
	if (!m) {
		snprintf(out->why, sizeof out->why, "its Info reply does not parse");
		return -1;
	}
	snprintf(out->alloc.name, sizeof out->alloc.name, "%s", m->allocator);
	snprintf(out->alloc.version, sizeof out->alloc.version, "%s", m->allocator_version);
	snprintf(out->version, sizeof out->version, "%s", m->tfgb_version);
	snprintf(out->host, sizeof out->host, "%s", m->host);
	out->pid = m->pid;
	snprintf(out->place.cpus, sizeof out->place.cpus, "%s", m->cpus);
	snprintf(out->place.mempolicy, sizeof out->place.mempolicy, "%s", m->mempolicy);
	/* -1: unbound; -2: not told (an older server) */
	out->place.numa_node = !*m->numa_node ? -2 : (int)opt_rank_int(m->numa_node);
	if (out->place.numa_node > PLACE_NODE_MAX)
		out->place.numa_node = -2;
	if (!out->alloc.name[0])
		snprintf(out->why, sizeof out->why, "its Info reply names no allocator");
	if (self)
		unpack_self(m, out);
	unpack_counters(m, out);
	tfgb__v1__server_info__free_unpacked(m, NULL);
	return 0;
}

int srvinfo_unpack(const unsigned char *buf, size_t len, struct srvinfo *out)
{
	return unpack(buf, len, 1, out);
}

void srvinfo_query(const struct tr_ops *ops, void *trctx, const struct job *j,
                   const struct opt_hostport *addr, uint64_t deadline_ns, struct srvinfo *out)
{
	srvinfo_query_req(ops, trctx, j, addr, deadline_ns, NULL, out);
}

/* The kind of an InfoRequest of srvinfo_req (after its magic); 0: none. */
static uint64_t req_kind(const unsigned char *req)
{
	struct rbuf r = {req, req ? SRVINFO_REQ_LEN : 0, 0, 0};

	be_get(&r, 4); /* the magic */
	return be_get(&r, 4);
}

void srvinfo_query_req(const struct tr_ops *ops, void *trctx, const struct job *j,
                       const struct opt_hostport *addr, uint64_t deadline_ns,
                       const unsigned char *req, struct srvinfo *out)
{
	static _Thread_local unsigned char reply[TR_INFO_MAX];
	struct iovec body = {(void *)req, req ? SRVINFO_REQ_LEN : 0};
	struct tr_call call = {.method = TR_INFO, .resp_buf = reply, .resp_cap = sizeof reply,
	                       .iov = req ? &body : NULL, .iovcnt = req ? 1 : 0};
	struct tr_call *done[4];
	struct tr_client *c = NULL;
	struct tr_conn *conn = NULL;
	struct err err = {{0}};
	struct tr_client_cfg ccfg;
	const struct payload nopayload = {0};
	int got = 0, n, rc;

	memset(out, 0, sizeof *out);
	/* one call of no payload whose reply is at most TR_INFO_MAX bytes */
	tr_client_cfg_of(j, &nopayload, TR_INFO_MAX, TR_INFO, 1, &ccfg);
	if (ops->client_open(trctx, &ccfg, &c, &err) < 0) {
		snprintf(out->why, sizeof out->why, "no client for Info: %.120s", err.msg);
		return;
	}
	if (ops->connect(c, addr, deadline_ns, &conn, &err) < 0) {
		snprintf(out->why, sizeof out->why, "no connection for Info: %.120s", err.msg);
		goto out;
	}
	call.t_start_ns = now_ns();
	if ((rc = ops->submit(conn, &call)) < 0) {
		snprintf(out->why, sizeof out->why, "Info could not be sent (%d)", rc);
		goto out;
	}
	while (!got && now_ns() < deadline_ns) {
		n = ops->reap(c, done, 4, deadline_ns);
		if (n < 0)
			break;
		for (int i = 0; i < n; i++)
			got |= done[i] == &call;
	}
	if (!got)
		snprintf(out->why, sizeof out->why, "no Info reply within the timeout");
	else if (call.status != TR_OK)
		snprintf(out->why, sizeof out->why, "it answered Info with %s (not a tfgb serve, "
		         "or an older one)", tr_status_name(call.status));
	else if (call.resp_len > sizeof reply)
		snprintf(out->why, sizeof out->why, "its Info reply is over %d bytes", TR_INFO_MAX);
	else /* its own figures only when an SRVINFO_END asked for them */
		unpack(reply, (size_t)call.resp_len, req_kind(req) == SRVINFO_END, out);
out:
	ops->call_release(&call);
	ops->client_close(c);
}

void srvinfo_text(const struct srvinfo *s, char *buf, size_t len)
{
	if (s->alloc.name[0])
		alloc_text(&s->alloc, buf, len);
	else
		snprintf(buf, len, "unknown (%s)", s->why[0] ? s->why : "not asked");
}
