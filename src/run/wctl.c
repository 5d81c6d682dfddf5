/* wctl.c - worker 0's control service and the workers' hellos (wctl.h). */
#include "wctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bebuf.h"
#include "ctrl.h"
#include "net.h"
#include "report.h"
#include "util.h"

/* A hello: u32 pid, the host name, worker 0's service (host, u16 port;
 * "" and 0 when none). */
#define HELLO_MAX (4 + 2 + RESULT_HOST_MAX + 2 + OPT_HOST_MAX + 2)

/* Worker 0's service, on the address it sends from to reach PS 0 (the
 * network the others reach PS 0 by, so they reach this host by it too)
 * and a port the kernel picks.  Not with TLS: the certificate is PS 0's,
 * for PS 0's name.  Said when it cannot start; the run goes on without. */
static void wctl_serve(struct wctl *w, struct tfgb *t, const struct tr_ops *ops)
{
	const struct job *j = &t->job;
	struct opt_hostport ps0, addr = {.port = 0};
	struct err err;
	/* a client that polls every descriptor while it runs (ctrl.h, polled);
	 * another transport leaves the polling to the service's own thread */
	int polled = !!(ops->caps & TR_CAP_SHARED_POLLER);

	if ((j->tls.cert && *j->tls.cert) || (j->tls.ca && *j->tls.ca))
		return;
	job_ps_addr(j, 0, &ps0);
	if (net_route_host(ps0.host, ps0.port, addr.host, sizeof addr.host, &err) < 0 ||
	    ctrl_server_start(&addr, NULL, j->token, t->verbose, polled, &w->srv, &err) < 0) {
		tfgb_error("%s: worker 0: warning: no control service of its own (%s): the reports go to "
		          "PS 0's alone, and are lost if PS 0 dies", t->cmd, err.msg);
		w->srv = NULL;
		return;
	}
	w->w0addr = addr;
	w->w0addr.port = ctrl_server_port(w->srv);
	if (t->verbose)
		fprintf(stderr, "tfgb: %s: worker 0: control service at %s:%u\n", t->cmd,
		        w->w0addr.host, w->w0addr.port);
}

int wctl_open(struct wctl *w, struct tfgb *t, const struct tr_ops *ops, int index,
              uint32_t workers, uint64_t run_id, int alone)
{
	*w = (struct wctl){.index = index, .workers = workers, .run_id = run_id};
	w->host = calloc(workers, sizeof *w->host);
	w->pid = calloc(workers, sizeof *w->pid);
	if (!w->host || !w->pid) {
		tfgb_error("%s: worker %d: out of memory", t->cmd, index);
		return TFGB_EXIT_FAIL;
	}
	if (index == 0 && alone)
		wctl_serve(w, t, ops);
	return TFGB_EXIT_OK;
}

void wctl_close(struct wctl *w)
{
	ctrl_client_close(w->w0);
	ctrl_server_stop(w->srv);
	free(w->host);
	free(w->pid);
	*w = (struct wctl){0};
}

int wctl_hello(struct wctl *w, struct ctrl_client *cc, uint64_t deadline_ns, struct err *err)
{
	unsigned char blob[HELLO_MAX];
	struct wbuf b = {blob, 0, sizeof blob, 0};
	char host[RESULT_HOST_MAX] = "";

	if (gethostname(host, sizeof host) != 0)
		host[0] = 0;
	host[sizeof host - 1] = 0;
	be_put(&b, (uint64_t)getpid(), 4);
	be_put_str(&b, host, sizeof host);
	be_put_str(&b, w->w0addr.host, sizeof w->w0addr.host);
	be_put(&b, w->w0addr.port, 2);
	return ctrl_report(cc, w->run_id ^ WCTL_HELLO_ID, (uint32_t)w->index, w->workers, blob,
	                   b.len, deadline_ns, err);
}

static int hello_add(void *arg, uint32_t worker, const void *blob, size_t len)
{
	struct wctl *w = arg;
	struct rbuf b = {blob, len, 0, 0};
	char host[RESULT_HOST_MAX];
	struct opt_hostport a;
	int32_t pid = (int32_t)be_get(&b, 4);

	be_get_str(&b, host, sizeof host);
	be_get_str(&b, a.host, sizeof a.host);
	a.port = (uint16_t)be_get(&b, 2);
	if (b.bad || b.at != len || worker >= w->workers)
		return 0; /* not a hello of this version: as if none came */
	memcpy(w->host[worker], host, sizeof host);
	w->pid[worker] = pid;
	if (worker == 0 && a.port && a.host[0])
		w->w0addr = a;
	return 0;
}

void wctl_meet(struct tfgb *t, struct wctl *w, struct ctrl_client *cc)
{
	const struct job *j = &t->job;
	struct err err;
	uint32_t got = 0;

	if (w->index != 0)
		w->w0addr.port = 0; /* from worker 0's hello only */
	/* every hello is in: each was handed in before its worker entered the
	 * barrier that just released */
	if (ctrl_collect(cc, w->run_id ^ WCTL_HELLO_ID, w->workers, 1, now_ns() + j->timeout_ns,
	                 hello_add, w, &got, &err) < 0)
		tfgb_error("%s: worker %d: warning: the workers' hellos: %s", t->cmd, w->index, err.msg);
	if (!w->w0addr.port)
		return;
	if (ctrl_client_open(&w->w0addr, NULL, j->token, now_ns() + j->timeout_ns, &w->w0,
	                     &err) < 0) {
		tfgb_error("%s: worker %d: warning: worker 0's %s: its report goes to PS 0's service alone",
		          t->cmd, w->index, err.msg);
		w->w0 = NULL;
	}
}

int wctl_send(struct tfgb *t, struct wctl *w, struct ctrl_client *cc, const struct wresult *wr)
{
	unsigned char *blob = malloc(RESULT_BLOB_MAX);
	uint64_t deadline = now_ns() + t->job.timeout_ns;
	struct err err = {"out of memory"}, err0 = {""};
	int took = 0;
	long blen = -1;

	if (blob && (blen = wresult_encode(wr, blob, RESULT_BLOB_MAX)) < 0)
		err_set(&err, "result too large");
	if (blen >= 0 && w->w0) {
		if (ctrl_report(w->w0, w->run_id, wr->worker, w->workers, blob, (size_t)blen, deadline,
		                &err0) == 0)
			took = 1;
		else
			w->w0_gone = 1;
	}
	/* worker 0 collects from its own service (PS 0's when its own
	 * failed); the others keep a copy at PS 0's for worker 1, should
	 * worker 0 be gone */
	if (blen >= 0 && (w->index != 0 || !took) &&
	    ctrl_report(cc, w->run_id, wr->worker, w->workers, blob, (size_t)blen, deadline,
	                &err) == 0)
		took = 1;
	if (w->w0_gone && (took || t->verbose))
		tfgb_error("%s: worker %u: warning: worker 0's control service is gone (%s)%s", t->cmd,
		          wr->worker, err0.msg, wctl_collector(w) ? ": worker 1 collects from PS 0's" :
		          "");
	if (!took)
		tfgb_error("%s: worker %u: reporting: %s", t->cmd, wr->worker,
		           w->w0_gone && !w->index ? err0.msg : err.msg);
	free(blob);
	return took ? 0 : -1;
}

int wctl_collector(const struct wctl *w)
{
	return w->index == 0 || (w->index == 1 && w->w0_gone);
}

struct ctrl_client *wctl_primary(const struct wctl *w, struct ctrl_client *cc)
{
	return w->index == 0 && w->w0 ? w->w0 : cc;
}

struct ctrl_client *wctl_secondary(const struct wctl *w, struct ctrl_client *cc)
{
	return w->index == 0 && w->w0 ? cc : NULL;
}

int wctl_lost(const struct wctl *w, const struct job *j, const struct tr_ops *ops,
              const unsigned char *seen, int failed, struct report_lost *lost, char *how,
              size_t howlen, char *host, size_t hostlen)
{
	uint32_t missing = w->workers;

	for (uint32_t i = 0; i < w->workers && missing == w->workers; i++)
		if (!seen[i])
			missing = i;
	if (!failed && missing == w->workers)
		return 0;
	for (int i = 0; i < j->ps_count; i++) {
		struct opt_hostport a;
		job_ps_addr(j, i, &a);
		a.port = (uint16_t)(a.port + ops->port_offset);
		if (cluster_tcp_probe(&a, 500))
			continue;
		snprintf(host, hostlen, "%s", a.host);
		snprintf(how, howlen, "no longer listening on %s:%u", a.host, a.port);
		*lost = (struct report_lost){.role = "ps", .index = i, .pid = 0, .host = host,
		                             .how = how};
		return 1;
	}
	if (missing == w->workers)
		return 0;
	snprintf(host, hostlen, "%s", w->host[missing][0] ? w->host[missing] : "an unknown host");
	snprintf(how, howlen, "no report within %gs", (double)j->timeout_ns / 1e9);
	*lost = (struct report_lost){.role = "worker", .index = (int)missing,
	                             .pid = w->pid[missing], .host = host, .how = how};
	return 1;
}
