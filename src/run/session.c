/* session.c - a worker's session, local servers and the monitor (session.h). */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bebuf.h"
#include "codec.h"
#include "lease.h"
#include "netem.h"
#include "opt.h"
#include "ctrl.h"
#include "place.h"
#include "wresult.h"
#include "util.h"

int session_transport(struct tfgb *t, const char *who, const struct tr_ops **ops)
{
	struct err err = {{0}};
	int rc = 0;

	*ops = tr_find(t->job.transport, &err);
	if (!*ops || (rc = tr_probe(*ops, &t->job, &err)) < 0) {
		if (rc != -ECANCELED) /* else another rank refused the launch: its line */
			tfgb_error("%s: %s", who, err.msg);
		return *ops ? tr_probe_status(rc) : TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

int session_refused(struct tfgb *t)
{
	struct err err;
	const struct tr_ops *ops = tr_find(t->job.transport, &err);

	if (ops)
		tr_refuse(ops, &t->job);
	return TFGB_EXIT_USAGE;
}

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
	struct err terr = {{0}};
	struct opt_hostport addr;
	struct err jerr;
	struct err err;
	int erc;

	*s = (struct session){.t = t, .ops = ops, .index = index, .method = method,
	                      .inflight = inflight};
	/* before the payload exists: its pages come from the worker's node */
	if (place_check(j, PLACE_WORKER, PLACE_NODE_DIR, &jerr) < 0 ||
	    place_check_local(j, PLACE_WORKER, t->local_rank,
	                      t->local_source ? t->local_source : "alone", &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	if (place_apply(j, PLACE_WORKER, t->local_rank, &err) < 0) {
		tfgb_error("%s: worker %d: %s", t->cmd, index, err.msg);
		return TFGB_EXIT_FAIL;
	}
	if (!(s->conns = calloc((size_t)nps, sizeof *s->conns)) || payload_layout(j, &s->p) < 0 ||
	    payload_alloc(&s->p) < 0) {
		tfgb_error("%s: worker %d: out of memory for a %llu-byte payload", t->cmd, index,
		           (unsigned long long)s->p.total);
		return TFGB_EXIT_FAIL;
	}
	if (tr_init(ops, j, &s->trctx, &terr) < 0) {
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
	launch_start_scale(0);
	for (; s->nconns < nps; s->nconns++) {
		job_ps_addr(j, s->nconns, &addr);
		if (ops->connect(s->client, &addr, now_ns() + launch_start_ns(t), &s->conns[s->nconns],
		                 &terr) < 0) {
			tfgb_error("%s: worker %d: PS %d: %s%s", t->cmd, index, s->nconns, terr.msg,
			           launch_start_text(t));
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

/* Takes the run's lease on the local server port of ps[i] (lease.h) and
 * says whether a server already listens there.  1: it does (use it);
 * 0: start one; -1: an error was printed. */
static int lease_and_probe(struct tfgb *t, const struct opt_hostport *a,
                           struct cluster_child *c)
{
	struct err err;
	int rc;

	if (!(c->lease = malloc(sizeof *c->lease))) {
		tfgb_error("%s: out of memory", t->cmd);
		return -1;
	}
	rc = lease_take(a->port, now_ns() + t->job.timeout_ns, &tfgb_stop, c->lease, &err);
	if (rc == -EAGAIN) {
		tfgb_error("%s: PS %d (%s:%u): %s", t->cmd, c->index, a->host, a->port, err.msg);
		return -1;
	}
	if (rc < 0) { /* no lock files here: start and stop a server of our own, as before */
		free(c->lease);
		c->lease = NULL;
	}
	return cluster_tcp_probe(a, 200);
}

int session_start_servers(struct tfgb *t, const struct tr_ops *ops, int nps, unsigned flags,
                          struct cluster_child *ps)
{
	const struct job *j = &t->job;
	struct err err;
	struct err jerr;
	int up;

	for (int i = 0; i < nps; i++)
		ps[i] = (struct cluster_child){.pid = 0, .ready_fd = -1, .index = i};
	for (int i = 0; i < nps; i++) {
		struct opt_hostport a;
		/* in a switch, each PS on its own host (netem.h), where its
		 * address is local; the caller is back on host 0 after */
		if (netem_switched() && netem_enter(i, &err) < 0) {
			tfgb_error("%s: %s", t->cmd, err.msg);
			return TFGB_EXIT_FAIL;
		}
		job_ps_addr(j, i, &a);
		a.port = (uint16_t)(a.port + ops->port_offset); /* where its server listens */
		if (cluster_host_is_local(a.host) != 1)
			continue;
		if ((up = lease_and_probe(t, &a, &ps[i])) < 0)
			return TFGB_EXIT_FAIL;
		if (up)
			continue; /* another run's or a hand-started server: used, never stopped */
		if (place_check(j, PLACE_PS, PLACE_NODE_DIR, &jerr) < 0) {
			tfgb_error("%s", jerr.msg);
			return TFGB_EXIT_USAGE;
		}
		if (ps[i].lease)
			setenv("TFGB_LEASE", ps[i].lease->path, 1); /* the server watches it */
		up = cluster_spawn_serve(j, i, flags, &ps[i], &err);
		unsetenv("TFGB_LEASE");
		if (up < 0) {
			tfgb_error("%s: %s", t->cmd, err.msg);
			return TFGB_EXIT_FAIL;
		}
	}
	if (netem_switched() && netem_enter(0, &err) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return TFGB_EXIT_FAIL;
	}
	for (int i = 0; i < nps; i++) {
		if (ps[i].pid && cluster_wait_ready(&ps[i], now_ns() + j->timeout_ns, &tfgb_stop, &err) < 0) {
			tfgb_error("%s: %s", t->cmd, err.msg);
			return TFGB_EXIT_FAIL;
		}
		if (ps[i].lease)
			lease_looked(ps[i].lease); /* the next run on this port may look now */
		if (ps[i].pid && t->verbose)
			fprintf(stderr, "tfgb: %s: started PS %d (pid %d) on %s:%u\n", t->cmd, i,
			        (int)ps[i].pid, ps[i].addr.host, ps[i].addr.port);
	}
	return TFGB_EXIT_OK;
}

void session_stop_servers(struct cluster_child *ps, int nps)
{
	for (int i = 0; i < nps; i++) {
		struct lease *l = ps[i].lease;
		int ours = ps[i].pid > 0;
		/* ours, and no other run uses it: stopped now; else it stops
		 * itself after the last (its lease), and is not ours to reap */
		if (ps[i].pid > 0 && (!l || lease_last(l, now_ns() + 5000000000ull)))
			cluster_stop(&ps[i], 5000);
		if (ps[i].ready_fd >= 0)
			close(ps[i].ready_fd);
		ps[i].ready_fd = -1;
		ps[i].pid = 0;
		if (l) {
			if (!ours) /* a server it found: no files left behind */
				lease_leave(l, now_ns() + 1000000000ull);
			lease_close(l);
			free(l);
			ps[i].lease = NULL;
		}
	}
}

int session_monitor(struct tfgb *t, const struct monitor_target *mt, size_t n,
                    const uint16_t *port, size_t nports, uint16_t ctl, struct monitor **mon)
{
	const struct job *j = &t->job;
	int mrc;

	*mon = NULL;
	if (!j->monitor_ns)
		return TFGB_EXIT_OK;
	mrc = monitor_new(mon, mt, n, j->monitor_ns, 0);
	if (mrc == 0 && nports) /* the run's own bytes: those of its ports */
		mrc = monitor_ports(*mon, port, nports, ctl);
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

/* Told apart from a workers' barrier of the same launch. */
#define LAUNCH_END_ID 0x454e44u /* "END" */
/* The collector's word that the run is over without the end barriers. */
#define LAUNCH_ABORT_ID 0x41424f5254u /* "ABORT" */

static int launch_none(void *arg, uint32_t worker, const void *blob, size_t len)
{
	(void)arg, (void)worker, (void)blob, (void)len;
	return 0;
}

/* Whether the collector has said the run is over (session_launch_abort). */
static int launch_aborted(struct ctrl_client *cc, uint64_t deadline_ns)
{
	struct err err;
	uint32_t got = 0;

	return ctrl_collect(cc, cluster_run_id(NULL) ^ LAUNCH_ABORT_ID, 1, 1, deadline_ns,
	                    launch_none, NULL, &got, &err) == 0 && got > 0;
}

void session_launch_abort(const struct job *j, struct ctrl_client **cc)
{
	struct opt_hostport caddr;
	struct err err;
	unsigned char one = 1;
	uint64_t deadline = now_ns() + j->timeout_ns;

	if (!*cc && (job_control_addr(j, &caddr) < 0 ||
	             ctrl_client_open(&caddr, &j->tls, j->token, deadline, cc, &err) < 0))
		return; /* PS 0's service is gone: its servers end on their own */
	ctrl_report(*cc, cluster_run_id(NULL) ^ LAUNCH_ABORT_ID, 0, 1, &one, 1, deadline, &err);
}

int session_launch_phase(const struct job *j, struct ctrl_client **cc, int who, int nps,
                         uint32_t gen, uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	struct opt_hostport caddr;
	struct err err;
	int erc;

	if (job_control_addr(j, &caddr) < 0)
		return -1;
	while (!(stop && *stop) && now_ns() < deadline_ns) {
		uint64_t slice = now_ns() + 1000000000ull;
		if (slice > deadline_ns)
			slice = deadline_ns;
		if (!*cc) { /* the service may not be up yet: PS 0 binds it */
			erc = ctrl_client_open(&caddr, &j->tls, j->token, slice, cc, &err);
			if (erc == -EACCES || erc == -EHOSTUNREACH)
				return -1;
			continue;
		}
		/* the launch's ids alone: its servers may be given another output
		 * format than its workers, which changes the job's text */
		erc = ctrl_barrier(*cc, cluster_run_id(NULL) ^ LAUNCH_END_ID, (uint32_t)who,
		                   (uint32_t)nps + 1, gen, slice, &err);
		if (erc != -ETIMEDOUT)
			return erc == 0 ? 0 : -1;
		if (who < nps && launch_aborted(*cc, now_ns() + 1000000000ull))
			return -1; /* a PS is dead: this barrier never fills */
	}
	return -1;
}

int session_launch_end(const struct job *j, int who, int nps, uint64_t deadline_ns,
                       volatile sig_atomic_t *stop, session_end_fn between, void *arg)
{
	struct ctrl_client *cc = NULL;
	int rc = session_launch_phase(j, &cc, who, nps, 0, deadline_ns, stop);

	if (rc == 0 && between)
		between(cc, arg);
	if (rc == 0) /* the collector prints, up to job.timeout for the reports */
		rc = session_launch_phase(j, &cc, who, nps, 1, now_ns() + 3 * j->timeout_ns, stop);
	ctrl_client_close(cc);
	return rc;
}

uint64_t session_run_span_ns(const struct job *j)
{
	return j->warmup_ns + 5 * j->timeout_ns +
	       (j->iterations ? 86400ull * 1000000000ull : j->duration_ns * (uint64_t)j->repeat);
}

long session_res_pack(const struct monitor *mon, unsigned char *buf, size_t cap)
{
	struct wbuf w = {buf, 0, cap, 0};
	char host[RESULT_HOST_MAX] = "";
	long n = 0;

	if (gethostname(host, sizeof host) != 0)
		host[0] = 0;
	host[sizeof host - 1] = 0;
	be_put_str(&w, host, sizeof host);
	if (mon && w.len + 4 <= cap)
		n = monitor_pack(mon, buf + w.len + 4, cap - w.len - 4);
	be_put(&w, n > 0 ? (uint64_t)n : 0, 4); /* < 2 samples: none */
	if (w.over)
		return -1;
	return (long)w.len + (n > 0 ? n : 0);
}

int session_res_unpack(const unsigned char *buf, size_t len, char *host, struct monitor **mon)
{
	struct rbuf b = {buf, len, 0, 0};
	size_t n;

	*mon = NULL;
	be_get_str(&b, host, RESULT_HOST_MAX);
	n = (size_t)be_get(&b, 4);
	if (b.bad || n != len - b.at)
		return -1;
	return n && monitor_unpack(buf + b.at, n, mon) < 0 ? -1 : 0;
}

int session_late_signal(struct tfgb *t)
{
	if (tfgb_stop)
		tfgb_error("%s: interrupted after every measured window had closed: the figures "
		           "are complete", t->cmd);
	return TFGB_EXIT_OK;
}

/* A worker's start-up scale, this process's (launch_start_scale). */
static struct {
	int procs, cpus; /* 0: alone */
} start;

/* The scale of the start-up waits: processes per CPU, rounded up. */
static uint64_t start_scale(void)
{
	int k;

	if (start.procs <= 0 || start.cpus <= 0)
		return 1;
	k = (start.procs + start.cpus - 1) / start.cpus;
	return (uint64_t)(k < 1 ? 1 : k > LAUNCH_START_SCALE_MAX ? LAUNCH_START_SCALE_MAX : k);
}

void launch_start_scale(int procs)
{
	const char *p = getenv("TFGB_START_PROCS"), *c = getenv("TFGB_START_CPUS");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t v;

	if (procs > 0) { /* the launcher: for itself and, through the environment, its workers */
		char num[16];
		start.procs = procs;
		start.cpus = cpus > 0 ? (int)cpus : 1;
		snprintf(num, sizeof num, "%d", start.procs);
		setenv("TFGB_START_PROCS", num, 1);
		snprintf(num, sizeof num, "%d", start.cpus);
		setenv("TFGB_START_CPUS", num, 1);
		return;
	}
	/* a worker of a launch: its launcher's figures, when they parse (once) */
	if (start.procs)
		return;
	if (getenv("TFGB_LAUNCHER") && p && c && opt_parse_int(p, &v) == 0 && v > 0 &&
	    v <= 1 << 20) {
		start.procs = (int)v;
		if (opt_parse_int(c, &v) == 0 && v > 0 && v <= 1 << 20)
			start.cpus = (int)v;
		else
			start.procs = 0;
	}
}

uint64_t launch_start_ns(const struct tfgb *t)
{
	return t->job.timeout_ns * start_scale();
}

const char *launch_start_text(const struct tfgb *t)
{
	static _Thread_local char text[96];

	(void)t;
	if (start_scale() == 1)
		return "";
	snprintf(text, sizeof text, ", a wait of job.timeout x %llu: %d processes starting on "
	         "%d CPU%s", (unsigned long long)start_scale(), start.procs, start.cpus,
	         start.cpus == 1 ? "" : "s");
	return text;
}

int session_net_ranks(struct tfgb *t, const struct tr_ops *ops, int say)
{
	const char *key = job_net_key(&t->job);
	struct err err;

	if (!(ops->caps & TR_CAP_RANKS) || !key)
		return TFGB_EXIT_OK;
	if (say) {
		job_key_err(&t->job, &err, "network", key, "[network] emulates a link between "
		            "the PSs and workers that tfgb starts itself; the processes of "
		            "transport %s are ranks that the MPI launcher places (tfgb-mpi(7)): "
		            "emulate with transport grpc or socket, or shape the hosts' own link",
		            ops->name);
		tfgb_error("%s: %s", t->cmd, err.msg);
	}
	return TFGB_EXIT_USAGE;
}

int session_ranks_check(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                        const struct cluster_role *role)
{
	long np = (long)t->job.ps_count, nw = (long)t->job.workers;

	if (session_net_ranks(t, ops, rk->index <= 0) != TFGB_EXIT_OK)
		return TFGB_EXIT_USAGE;
	if (!(ops->caps & TR_CAP_RANKS) || role->one_launch)
		return TFGB_EXIT_OK;
	if (rk->index <= 0)
		tfgb_error("%s: transport %s runs every PS and worker as a rank of one launch: "
		           "run '%s %ld tfgb %s ...' with cluster.workers = %ld set (ranks "
		           "0..%ld the PSs, the others the workers); this launch has %d", t->cmd,
		           ops->name, cluster_launch_cmd(), np + nw, t->cmd, nw, np - 1, rk->size);
	return TFGB_EXIT_USAGE;
}
