/* session.c - a worker's session, local servers and the monitor (session.h). */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "place.h"
#include "util.h"

int session_open(struct session *s, struct tfgb *t, const struct tr_ops *ops, int index,
                 int method, int inflight, int nps)
{
	return session_open_sized(s, t, ops, index, method, inflight, nps, 0);
}

int session_open_sized(struct session *s, struct tfgb *t, const struct tr_ops *ops, int index,
                       int method, int inflight, int nps, uint64_t max_body)
{
	const struct job *j = &t->job;
	struct tr_client_cfg ccfg;
	struct tr_err terr = {{0}};
	struct opt_hostport addr;
	struct job_err jerr;
	char err[CLUSTER_ERR_MAX];
	int erc;

	*s = (struct session){.t = t, .ops = ops, .index = index, .method = method,
	                      .inflight = inflight};
	/* before the payload exists: its pages come from the worker's node */
	if (place_check(j, PLACE_WORKER, PLACE_NODE_DIR, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	if (place_apply(j, PLACE_WORKER, err, sizeof err) < 0) {
		tfgb_error("%s: worker %d: %s", t->cmd, index, err);
		return TFGB_EXIT_FAIL;
	}
	if (!(s->conns = calloc((size_t)nps, sizeof *s->conns)) || payload_layout(j, &s->p) < 0 ||
	    payload_alloc(&s->p) < 0) {
		tfgb_error("%s: worker %d: out of memory for a %llu-byte payload", t->cmd, index,
		           (unsigned long long)s->p.total);
		return TFGB_EXIT_FAIL;
	}
	if (ops->init(j, &s->trctx, &terr) < 0) {
		tfgb_error("%s: worker %d: %s", t->cmd, index, terr.msg);
		return TFGB_EXIT_FAIL;
	}
	tr_client_cfg_of(j, &s->p, max_body ? max_body : codec_wire_len(&s->p, j->mode, j->dtype),
	                 method, inflight, &ccfg);
	if (ops->client_open(s->trctx, &ccfg, &s->client, &terr) < 0) {
		s->client = NULL;
		tfgb_error("%s: worker %d: %s", t->cmd, index, terr.msg);
		return TFGB_EXIT_FAIL;
	}
	if (ops->reg_mem && (erc = ops->reg_mem(s->client, s->p.mem, s->p.mem_len)) < 0) {
		tfgb_error("%s: worker %d: cannot register the %zu-byte payload for %s: %s", t->cmd,
		           index, s->p.mem_len, ops->name, strerror(-erc));
		return TFGB_EXIT_FAIL;
	}
	for (; s->nconns < nps; s->nconns++) {
		cluster_ps_addr(j, s->nconns, &addr);
		if (ops->connect(s->client, &addr, now_ns() + j->timeout_ns, &s->conns[s->nconns],
		                 &terr) < 0) {
			tfgb_error("%s: worker %d: PS %d: %s", t->cmd, index, s->nconns, terr.msg);
			return TFGB_EXIT_FAIL;
		}
	}
	return TFGB_EXIT_OK;
}

void session_close(struct session *s)
{
	if (s->client)
		s->ops->client_close(s->client); /* its connections too */
	if (s->trctx)
		s->ops->fini(s->trctx);
	payload_free(&s->p);
	free(s->conns);
	*s = (struct session){0};
}

void session_engine_cfg(const struct session *s, struct engine_cfg *cfg)
{
	const struct job *j = &s->t->job;

	*cfg = (struct engine_cfg){
		.ops = s->ops, .client = s->client, .conns = s->conns, .nconns = s->nconns,
		.method = s->method, .mode = j->mode, .dtype = j->dtype, .payload = &s->p,
		.inflight = s->inflight,
		.warmup_ns = j->warmup_ns, .duration_ns = j->duration_ns,
		.iterations = (uint64_t)j->iterations, .timeout_ns = j->timeout_ns,
		.verify_all = j->verify, .stop = &tfgb_stop, .label = s->t->cmd,
		.repeat = (int)j->repeat, .interval_ns = s->t->interval_ns,
	};
}

int session_start_servers(struct tfgb *t, const struct tr_ops *ops, int nps, unsigned flags,
                          struct cluster_child *ps)
{
	const struct job *j = &t->job;
	char err[CLUSTER_ERR_MAX];
	struct job_err jerr;

	for (int i = 0; i < nps; i++)
		ps[i] = (struct cluster_child){.pid = 0, .ready_fd = -1};
	for (int i = 0; i < nps; i++) {
		struct opt_hostport a;
		cluster_ps_addr(j, i, &a);
		a.port = (uint16_t)(a.port + ops->port_offset); /* where its server listens */
		if (cluster_host_is_local(a.host) != 1 || cluster_tcp_probe(&a, 200))
			continue;
		if (place_check(j, PLACE_PS, PLACE_NODE_DIR, &jerr) < 0) {
			tfgb_error("%s", jerr.msg);
			return TFGB_EXIT_USAGE;
		}
		if (cluster_spawn_serve(j, i, flags, &ps[i], err, sizeof err) < 0) {
			tfgb_error("%s: %s", t->cmd, err);
			return TFGB_EXIT_FAIL;
		}
	}
	for (int i = 0; i < nps; i++) {
		if (!ps[i].pid)
			continue;
		if (cluster_wait_ready(&ps[i], now_ns() + j->timeout_ns, &tfgb_stop, err,
		                       sizeof err) < 0) {
			tfgb_error("%s: %s", t->cmd, err);
			return TFGB_EXIT_FAIL;
		}
		if (t->verbose)
			fprintf(stderr, "tfgb: %s: started PS %d (pid %d) on %s:%u\n", t->cmd, i,
			        (int)ps[i].pid, ps[i].addr.host, ps[i].addr.port);
	}
	return TFGB_EXIT_OK;
}

int session_monitor(struct tfgb *t, const struct monitor_target *mt, size_t n,
                    const uint16_t *port, size_t nports, struct monitor **mon)
{
	const struct job *j = &t->job;
	int mrc;

	*mon = NULL;
	if (!j->monitor_ns)
		return TFGB_EXIT_OK;
	mrc = monitor_new(mon, mt, n, j->monitor_ns, 0);
	if (mrc == 0 && nports) /* the run's own bytes: those of its ports */
		mrc = monitor_ports(*mon, port, nports);
	if (mrc == 0) {
		monitor_select(*mon, job_monitor_mask(j));
		mrc = monitor_start(*mon);
	}
	if (mrc < 0) {
		tfgb_error("%s: cannot start the resource monitor: %s", t->cmd, strerror(-mrc));
		return TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}
