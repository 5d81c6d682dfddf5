/* launch.c - the launcher of throughput and train, a worker's part in a
 * run and the collector's asks of the PSs (launch.h). */
#include "launch.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "ctrl.h"
#include "fault.h"
#include "limit.h"
#include "netem.h"
#include "opt.h"
#include "place.h"
#include "progress.h"
#include "report.h"
#include "wresult.h"
#include "session.h"
#include "srvinfo.h"
#include "sysinfo.h"
#include "util.h"
#include "wctl.h"

/* This process's announcement to the PSs (launch_ps_*). */
static struct {
	uint64_t ask_id, since_ns;   /* the announcement's id, and when (0: none) */
	const unsigned char *own;    /* the PSs sampled here, not asked (NULL: none) */
} self;

const char launch_interrupted[] = "interrupted";

const char *launch_note(const char *note, int complete)
{
	return note == launch_interrupted && complete ? NULL : note;
}

/* ---- the PSs asked for their figures ---- */

/* The PSs whose own figures the run asks for: those it announced itself to. */
static int ps_asked(int ask_own, int i)
{
	return ask_own && self.since_ns && !(self.own && self.own[i]);
}

void launch_ps_announce(const struct job *j, const struct tr_ops *ops, const unsigned char *own)
{
	uint64_t deadline = now_ns() + j->timeout_ns;
	unsigned char req[SRVINFO_REQ_LEN];
	struct srvinfo info = {0};
	struct err terr = {{0}};
	struct opt_hostport addr;
	void *ctx = NULL;

	/* its own id: two runs of one job (one run id) are two runs to a server */
	self.own = own;
	while (!self.ask_id)
		if (getrandom(&self.ask_id, sizeof self.ask_id, 0) != sizeof self.ask_id)
			self.ask_id = now_ns() ^ (uint64_t)getpid() << 32;
	if (tr_init(ops, j, &ctx, &terr) < 0)
		return;
	self.since_ns = now_ns();
	srvinfo_req_pack(req, SRVINFO_BEGIN, self.ask_id, session_run_span_ns(j), 0);
	for (int i = 0; i < j->ps_count && now_ns() < deadline; i++) {
		if (!ps_asked(1, i))
			continue;
		job_ps_addr(j, i, &addr);
		srvinfo_query_req(ops, ctx, j, &addr, deadline, req, &info);
		srvinfo_clear(&info); /* a begin's reply has no figures */
	}
	ops->fini(ctx);
}

/* Each PS's malloc, asked once the run is over (untimed, one connection
 * per PS, all within one timeout): the process printing the result asks,
 * so that the workers' measured connections never carry it.  Not after a
 * run that did not complete: a PS may be gone or stopped, and its answer
 * would hold the report back by the timeout. */
void launch_ps_allocators(const struct job *j, const struct tr_ops *ops, int complete,
                          struct srvinfo *out, int ask_own)
{
	uint64_t deadline = now_ns() + j->timeout_ns;
	unsigned char req[SRVINFO_REQ_LEN];
	struct err terr = {{0}};
	struct opt_hostport addr;
	void *ctx = NULL;

	if (!complete) {
		for (int i = 0; i < j->ps_count; i++)
			snprintf(out[i].why, sizeof out[i].why, "not asked: the run did not complete");
		return;
	}
	if (tr_init(ops, j, &ctx, &terr) < 0) {
		for (int i = 0; i < j->ps_count; i++)
			snprintf(out[i].why, sizeof out[i].why, "not asked: %.120s", terr.msg);
		return;
	}
	for (int i = 0; i < j->ps_count; i++) {
		job_ps_addr(j, i, &addr);
		/* its own figures: over the run's time as this process measured it */
		if (ps_asked(ask_own, i))
			srvinfo_req_pack(req, SRVINFO_END, self.ask_id, now_ns() - self.since_ns, 0);
		if (now_ns() < deadline)
			srvinfo_query_req(ops, ctx, j, &addr, deadline, ps_asked(ask_own, i) ? req : NULL,
			                  &out[i]);
		else
			snprintf(out[i].why, sizeof out[i].why, "not asked: out of time");
	}
	ops->fini(ctx);
}

/* ---- the workers' reports ---- */

int launch_agg_init(struct launch_agg *a, uint32_t workers, uint32_t nps)
{
	memset(a, 0, sizeof *a);
	a->workers = workers;
	a->nps = nps;
	a->w = malloc(sizeof *a->w);
	a->seen = calloc(workers, 1);
	a->per_worker = calloc(workers, sizeof *a->per_worker);
	a->worker_rps = calloc(workers, sizeof *a->worker_rps);
	a->host = calloc(workers, sizeof *a->host);
	a->pid = calloc(workers, sizeof *a->pid);
	a->alloc = calloc(workers, sizeof *a->alloc);
	stats_init(&a->sum.lat);
	stats_init(&a->sum.svc);
	if (res_agg_init(&a->res, workers, nps, a->host) < 0)
		return -ENOMEM;
	return a->w && a->seen && a->per_worker && a->worker_rps && a->host && a->pid && a->alloc ?
	       0 : -ENOMEM;
}

void launch_agg_free(struct launch_agg *a)
{
	free(a->w);
	free(a->seen);
	free(a->per_worker);
	free(a->worker_rps);
	for (uint32_t i = 0; a->host && i < a->workers; i++)
		free((char *)a->host[i]);
	free(a->host);
	free(a->pid);
	free(a->alloc);
	res_agg_free(&a->res);
}

const struct wresult *launch_agg_add(struct launch_agg *a, uint32_t worker, const void *blob,
                                     size_t len, int train)
{
	struct wresult *w = a->w;
	double rps;

	if (wresult_decode(w, blob, len) < 0 || w->worker != worker || worker >= a->workers ||
	    a->seen[worker] || w->nps != a->nps || (int)w->train != train) {
		a->bad_blobs++;
		return NULL;
	}
	a->seen[worker] = 1;
	a->reported++;
	a->per_worker[worker] = w->calls;
	rps = w->window_ns ? (double)w->calls * 1e9 / (double)w->window_ns : 0.0;
	a->worker_rps[worker] = rps;
	a->host[worker] = strdup(w->host); /* NULL (shown as null) if out of memory */
	a->pid[worker] = w->pid;
	res_agg_add(&a->res, worker, w);
	snprintf(a->alloc[worker].name, sizeof a->alloc[worker].name, "%s", w->alloc);
	snprintf(a->alloc[worker].version, sizeof a->alloc[worker].version, "%s", w->alloc_version);
	a->rps += rps;
	a->bps += w->window_ns ? (double)w->bytes * 1e9 / (double)w->window_ns : 0.0;
	a->sum.calls += w->calls;
	a->sum.errors += w->errors;
	a->sum.warmup_calls += w->warmup_calls;
	a->sum.bytes += w->bytes;
	a->sum.offered += w->offered;
	a->sum.missed += w->missed;
	a->warmup_total += w->warmup_ns;
	a->sum.ser_sampled += w->ser_sampled;
	a->sum.enc_ns += w->enc_ns;
	a->sum.dec_ns += w->dec_ns;
	a->window_total += w->window_ns;
	stats_merge(&a->sum.lat, &w->lat);
	/* the workers' transport counters, summed (the first one's as they are) */
	if (a->reported == 1)
		a->sum.tc = w->tc;
	else
		tr_counters_add(&a->sum.tc, &w->tc);
	if (w->end != ENGINE_DONE && !a->failed) {
		a->failed = 1;
		a->sum.end = w->end;
		err_set(&a->first_err, "worker %u on %s (pid %d): %s", worker,
		         w->host, (int)w->pid,
		         w->end == ENGINE_INTERRUPTED ? "interrupted" : w->err.msg);
		a->sum.err = a->first_err;
	}
	return w;
}

/* ---- the emulated link ([network], netem.h) ---- */

/* The PSs must be this machine's: the link joins the launcher's own. */
static int net_local(struct tfgb *t)
{
	const struct job *j = &t->job;
	struct opt_hostport a;

	for (int i = 0; i < (int)j->ps_count; i++) {
		job_ps_addr(j, i, &a);
		if (cluster_host_is_local(a.host) != 1) {
			tfgb_error("%s: [network] emulates the link to PSs that tfgb starts on this "
			           "machine; PS %d's host %s (cluster.ps) is not this machine's", t->cmd,
			           i, a.host);
			return TFGB_EXIT_USAGE;
		}
	}
	if (j->control.n && cluster_host_is_local(j->control.v[0].host) != 1) {
		tfgb_error("%s: [network]: cluster.control's host %s is not this machine's", t->cmd,
		           j->control.v[0].host);
		return TFGB_EXIT_USAGE;
	}
	return TFGB_EXIT_OK;
}

/* The switch's size: hosts (PSs and workers, or ranks) from 2 to
 * JOB_NET_HOSTS_MAX, and not a command of one worker and one PS (hosts <
 * 0).  TFGB_EXIT_OK, or TFGB_EXIT_USAGE after the error. */
static int net_hosts(struct tfgb *t, int hosts)
{
	struct err err;

	if (hosts < 0)
		job_key_err(&t->job, &err, "network", "topology", "gives each "
		            "process of a run of many (tfgb throughput, train, collective) a NIC; "
		            "tfgb %s runs one worker against one PS: use topology = pair", t->cmd);
	else if (hosts > JOB_NET_HOSTS_MAX)
		job_key_err(&t->job, &err, "network", "topology", "has at most %d hosts "
		            "(a namespace and NIC each); this run has %d processes", JOB_NET_HOSTS_MAX,
		            hosts);
	else
		return TFGB_EXIT_OK;
	tfgb_error("%s: %s", t->cmd, err.msg);
	return TFGB_EXIT_USAGE;
}

int launch_net_up(struct tfgb *t, int ps_hosts, int hosts)
{
	struct job *j = &t->job;
	struct netem_cfg c = {.delay_ns = j->net_delay_ns, .jitter_ns = j->net_jitter_ns,
	                      .seed = (uint64_t)j->seed, .hosts = hosts, .ps_hosts = ps_hosts};
	struct err err = {{0}};
	int rc;

	if (!job_net_emulated(j) || j->net_ps_host[0])
		return TFGB_EXIT_OK;
	if ((rc = net_local(t)) != TFGB_EXIT_OK)
		return rc;
	if (j->net_topology == JOB_NET_SWITCH) {
		if ((rc = net_hosts(t, hosts)) != TFGB_EXIT_OK)
			return rc;
		c.topology = NETEM_TOPO_SWITCH;
	}
	job_net_rate(j->net_rate, &c.rate_bps);
	job_net_loss(j->net_loss, &c.loss_ppm);
	if (fault_conf_of(j) && c.topology == NETEM_TOPO_SWITCH) { /* a slow wire (fault.h) */
		c.slow_host = ps_hosts + (int)fault_conf_of(j)->rank;
		c.slow_rate_bps = c.slow_host < hosts ? fault_rate_bps(fault_conf_of(j)) : 0;
	}
	if (strcmp(j->net_cc, "system"))
		snprintf(c.cc, sizeof c.cc, "%s", j->net_cc);
	if ((rc = netem_start(&c, &err)) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return rc == -1 ? TFGB_EXIT_USAGE : TFGB_EXIT_FAIL;
	}
	/* from here on every PS host is the link's PS end, in this process
	 * and in the processes it starts */
	if (c.topology == NETEM_TOPO_SWITCH) /* host 0's: PS 0's, and the control service's */
		job_net_host(0, j->net_ps_host, sizeof j->net_ps_host);
	else
		snprintf(j->net_ps_host, sizeof j->net_ps_host, "%s", NETEM_PS_ADDR);
	setenv(NETEM_ENV, j->net_ps_host, 1);
	if (netem_calibrate(&err) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return TFGB_EXIT_FAIL;
	}
	netem_export();
	if (t->verbose)
		netem_text(stderr);
	return TFGB_EXIT_OK;
}

/* ---- a worker ---- */

int launch_worker_id(struct tfgb *t, const struct cluster_rank *rk, int workers, uint64_t *run_id)
{
	char *text;

	if (workers < 0)
		return TFGB_EXIT_USAGE;
	if (rk->index >= workers) {
		tfgb_error("%s: worker index %d (%s) is out of range: the run has %d workers (0..%d)",
		           t->cmd, rk->index, rk->source, workers, workers - 1);
		return TFGB_EXIT_USAGE;
	}
	if (job_net_emulated(&t->job) && !t->job.net_ps_host[0]) {
		struct err err;
		job_key_err(&t->job, &err, "network", job_net_key(&t->job),
		            "[network] emulates the link of a run that tfgb %s launches on this "
		            "machine; this worker was started another way (%s)", t->cmd, rk->source);
		tfgb_error("%s: worker %d: %s", t->cmd, rk->index, err.msg);
		return TFGB_EXIT_USAGE;
	}
	if (!(text = job_ini_public(&t->job))) { /* no hash of the token goes on the wire */
		tfgb_error("%s: worker %d: out of memory", t->cmd, rk->index);
		return TFGB_EXIT_FAIL;
	}
	*run_id = cluster_run_id(text);
	free(text);
	return TFGB_EXIT_OK;
}

int launch_send(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                const struct wresult *wr)
{
	unsigned char *blob = malloc(RESULT_BLOB_MAX);
	struct err err = {"out of memory"};
	long blen;
	int rc = -1;

	if (blob && (blen = wresult_encode(wr, blob, RESULT_BLOB_MAX)) < 0)
		err_set(&err, "result too large");
	else if (blob && ctrl_report(cc, run_id, wr->worker, workers, blob, (size_t)blen,
	                             now_ns() + t->job.timeout_ns, &err) == 0)
		rc = 0;
	if (rc < 0)
		tfgb_error("%s: worker %u: reporting: %s", t->cmd, wr->worker, err.msg);
	free(blob);
	return rc;
}

int launch_collect(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                   int partial, launch_report_fn fn, void *arg, struct err *err)
{
	uint64_t timeout = t->job.timeout_ns;
	uint32_t got = 0;
	int rc = ctrl_collect(cc, run_id, workers, partial, now_ns() + (partial ? 2 : 1) * timeout,
	                      fn, arg, &got, err);

	if (rc == -ETIMEDOUT && !partial) /* someone never reported: what there is, marked */
		rc = ctrl_collect(cc, run_id, workers, 1, now_ns() + timeout, fn, arg, &got, err);
	return rc;
}

/* Meets the other workers at the control service's barrier, with wc's
 * hello before it and its meeting after (NULL: none, under a launcher): 0,
 * or the exit status of the error it printed. */
int launch_meet(struct tfgb *t, const struct cluster_rank *rk, int workers,
                        uint64_t run_id, struct ctrl_client **cc, struct wctl *wc)
{
	const struct job *j = &t->job;
	struct opt_hostport addr, caddr;
	struct err err;
	uint64_t wait_ns;
	int erc;

	if (job_control_addr(j, &caddr) < 0) {
		tfgb_error("%s: PS 0's port %u has no port below it for the control service; "
		           "set cluster.control", t->cmd, caddr.port);
		return TFGB_EXIT_USAGE;
	}
	launch_start_scale(0);
	wait_ns = launch_start_ns(t); /* the others may be slow to start: a launch's load */
	if ((erc = ctrl_client_open(&caddr, &j->tls, j->token, now_ns() + wait_ns, cc, &err)) < 0 ||
	    (wc && (erc = wctl_hello(wc, *cc, now_ns() + wait_ns, &err)) < 0) ||
	    (erc = ctrl_barrier(*cc, run_id, (uint32_t)rk->index, (uint32_t)workers, 0,
	                        now_ns() + wait_ns, &err)) < 0) {
		if (erc == -EACCES) { /* name the PS whose serve hosts the service */
			job_ps_addr(j, 0, &addr);
			tfgb_error("%s: worker %d: PS 0 (%s:%u): %s", t->cmd, rk->index, addr.host,
			           addr.port, err.msg);
		} else {
			tfgb_error("%s: worker %d: %s%s", t->cmd, rk->index, err.msg,
			           launch_start_text(t));
		}
		return TFGB_EXIT_FAIL;
	}
	if (wc)
		wctl_meet(t, wc, *cc);
	return TFGB_EXIT_OK;
}

int launch_barrier(struct tfgb *t, const struct cluster_rank *rk, int workers, uint64_t run_id,
                   struct ctrl_client **cc)
{
	return launch_meet(t, rk, workers, run_id, cc, NULL);
}

void launch_end(const struct job *j, int one_launch)
{
	struct ctrl_client *cc = NULL;
	int np = (int)j->ps_count;

	if (one_launch == LAUNCH_ONE_NONE || one_launch == LAUNCH_ONE_GIVEN_UP)
		return;
	if (one_launch == LAUNCH_ONE_PASSED)
		session_launch_phase(j, &cc, np, np, 1, now_ns() + j->timeout_ns, NULL);
	else
		session_launch_end(j, np, np, now_ns() + j->timeout_ns, NULL, NULL, NULL);
	ctrl_client_close(cc);
}

int launch_agg_servers(struct tfgb *t, struct launch_agg *a, int ps_lost)
{
	return res_agg_servers(t, &a->res, ps_lost) == 0 ? LAUNCH_ONE_PASSED : LAUNCH_ONE_GIVEN_UP;
}

/* ---- the one-machine launcher ---- */

/* What watching the launcher's processes found. */
struct watch {
	int failed, interrupted;
	uint64_t stop_sent; /* when the workers were told to stop; 0: not yet */
	struct lprogress *prog; /* the progress line */
	char note[768];     /* the first failure, for the report */
	char how[96];       /* how the lost process ended */
	struct report_lost lost; /* the process that died, when lost.role is set */
};

/* Notes that process `index` of `role` (pid, on host; addr: a PS's)
 * ended with wait status `status` before the run was over.  A PS that
 * ends, or a worker killed by a signal, is lost: the report is partial and
 * names it (a worker that exits with a status has reported why). */
static void watch_ended(struct watch *w, const char *role, int index, pid_t pid,
                        const char *host, const struct opt_hostport *addr, int status)
{
	cluster_exit_text(status, w->how, sizeof w->how);
	if (addr)
		snprintf(w->note, sizeof w->note, "PS %d (pid %d on %s, %s:%u) ended: %s", index,
		         (int)pid, host, addr->host, addr->port, w->how);
	else
		snprintf(w->note, sizeof w->note, "worker %d (pid %d on %s) ended: %s", index,
		         (int)pid, host, w->how);
	if (addr || WIFSIGNALED(status))
		w->lost = (struct report_lost){.role = role, .index = index, .pid = (int)pid,
		                               .host = host, .how = w->how};
	w->failed = 1;
}

/* A PS that died is the root cause of the workers' failures that follow:
 * name it in preference to them. */
static int sweep_ps(struct cluster_child *ps, int np, const char *host, struct watch *w)
{
	int status, found = 0;

	for (int i = 0; i < np; i++)
		if (ps[i].pid > 0 && waitpid(ps[i].pid, &status, WNOHANG) == ps[i].pid) {
			if (!found)
				watch_ended(w, "ps", i, ps[i].pid, host, &ps[i].addr, status);
			ps[i].pid = 0;
			found = 1;
		}
	return found;
}

/* Reaps the launcher's processes until every worker is done: a process
 * that dies, Ctrl-C or the deadline stops the others early (SIGINT, then
 * SIGKILL after 2 x timeout), so that they report partial figures. */
static void watch(struct tfgb *t, struct cluster_child *ps, int np, struct cluster_child *wk,
                  int nw, struct monitor *mon, const char *host, uint64_t run_ns,
                  struct watch *w)
{
	const struct job *j = &t->job;
	uint64_t deadline;
	struct err lost;
	int running;

	deadline = now_ns() + 4 * launch_start_ns(t) + run_ns;
	running = nw;
	while (running > 0) {
		struct rusage ru;
		int status;
		pid_t pid = wait4(-1, &status, WNOHANG, &ru);

		if (pid > 0) {
			monitor_exited(mon, pid, &ru); /* what it did since the last sample counts */
			for (int i = 0; i < nw; i++)
				if (wk[i].pid == pid) {
					wk[i].pid = 0;
					running--;
					if (!w->stop_sent && !w->failed &&
					    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
						/* a PS that died is the cause: give it time to be seen */
						usleep(200000);
						if (!sweep_ps(ps, np, host, w))
							watch_ended(w, "worker", i, pid, host, NULL, status);
					}
				}
			for (int i = 0; i < np; i++)
				if (ps[i].pid == pid) {
					ps[i].pid = 0;
					if (!w->failed)
						watch_ended(w, "ps", i, pid, host, &ps[i].addr, status);
					w->failed = 1;
				}
			/* the link's forwarder: nothing crosses to the PSs or the control
			 * service, so no worker can end its calls or report; killed now */
			if (!w->failed && netem_lost(pid, status, &lost)) {
				snprintf(w->note, sizeof w->note, "%.760s", lost.msg);
				w->failed = 1;
				w->stop_sent = 1;
			}
			continue;
		}
		lprogress_tick(w->prog, wk, nw - running);
		if (tfgb_stop && !w->interrupted)
			w->interrupted = 1;
		if (!w->note[0] && now_ns() > deadline) {
			snprintf(w->note, sizeof w->note, "workers did not finish within %.0fs",
			         (double)(deadline - now_ns() + 1) / 1e9);
			w->failed = 1;
		}
		/* on a failure or Ctrl-C the others stop early and report partial figures */
		if ((w->failed || w->interrupted) && !w->stop_sent) {
			usleep(100000);
			w->failed |= sweep_ps(ps, np, host, w);
			w->stop_sent = now_ns();
			for (int i = 0; i < nw; i++)
				if (wk[i].pid)
					kill(wk[i].pid, SIGINT);
		}
		if (w->stop_sent && now_ns() - w->stop_sent > 2 * j->timeout_ns) {
			for (int i = 0; i < nw; i++)
				if (wk[i].pid) {
					kill(wk[i].pid, SIGKILL);
					waitpid(wk[i].pid, &status, 0);
					wk[i].pid = 0;
					running--;
				}
		}
		usleep(20000);
	}
}

/* Starts the launcher's nw workers (wk[]) and the monitor over them and
 * the PSs it started (ps[]), counting the bytes of the PSs' ports and the
 * control port (caddr).  TFGB_EXIT_OK or the status of the error it
 * printed. */
static int start_workers(struct tfgb *t, const struct tr_ops *ops, const struct cluster_child *ps,
                         int np, struct cluster_child *wk, int nw, uint64_t run_id,
                         const struct opt_hostport *caddr, struct monitor **mon)
{
	const struct job *j = &t->job;
	struct monitor_target *mt;
	uint16_t *port;
	struct err err;
	size_t n = 0;
	int rc, here = nw + 1;

	for (int i = 0; i < nw; i++)
		wk[i] = (struct cluster_child){.pid = 0, .ready_fd = -1};
	/* they all start at once on this host, this process too: the workers'
	 * start-up waits follow */
	for (int i = 0; i < np; i++)
		here += ps[i].pid > 0;
	launch_start_scale(here);
	if (t->interval_ns) {
		char ns[24];
		snprintf(ns, sizeof ns, "%llu", (unsigned long long)t->interval_ns);
		setenv("TFGB_INTERVAL_NS", ns, 1); /* the workers' --interval */
		if (t->ndjson)
			setenv("TFGB_NDJSON", "1", 1); /* and --ndjson */
		report_interval_header(stdout, j->format);
	}
	/* the workers start on the link's other side (in a switch: each on
	 * its own host, after the PSs') */
	if (netem_active() && !netem_switched() && netem_enter(NETEM_WORKER, &err) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return TFGB_EXIT_FAIL;
	}
	for (int i = 0; i < nw; i++) {
		if ((netem_switched() && netem_enter(np + i, &err) < 0) ||
		    cluster_spawn(j, t->cmd, i, run_id, 0, &wk[i], &err) < 0) {
			tfgb_error("%s: %s", t->cmd, err.msg);
			if (netem_active())
				netem_enter(NETEM_PS, &err);
			return TFGB_EXIT_FAIL;
		}
	}
	if (netem_active() && netem_enter(NETEM_PS, &err) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return TFGB_EXIT_FAIL;
	}
	/* the processes started here: the PSs this run started, every worker */
	mt = calloc((size_t)(np + nw), sizeof *mt);
	port = calloc((size_t)np + 1, sizeof *port);
	if (!mt || !port) {
		tfgb_error("%s: out of memory", t->cmd);
		free(mt);
		free(port);
		return TFGB_EXIT_FAIL;
	}
	for (int i = 0; i < np; i++)
		if (ps[i].pid > 0)
			mt[n++] = (struct monitor_target){"ps", i, ps[i].pid};
	for (int i = 0; i < nw; i++)
		mt[n++] = (struct monitor_target){"worker", i, wk[i].pid};
	/* the run's own bytes: its PSs' ports and its control port */
	for (int i = 0; i < np; i++) {
		struct opt_hostport a;
		job_ps_addr(j, i, &a);
		port[i] = (uint16_t)(a.port + ops->port_offset);
	}
	port[np] = caddr->port;
	rc = session_monitor(t, mt, n, port, (size_t)np + 1, caddr->port, mon);
	free(mt);
	free(port);
	return rc;
}

/* Where the launcher's workers meet: the launcher hosts the control
 * service itself (*own = 1), so that the figures outlive any PS, unless the
 * tfgb serve of a PS 0 started by hand already answers at the control
 * address (or that address is another host's): that one is used.  Something
 * else listening there is an error naming cluster.control.  TFGB_EXIT_OK or
 * the status of the error it printed. */
static int launcher_control(struct tfgb *t, const struct tr_ops *ops,
                            struct opt_hostport *caddr, int *own)
{
	const struct job *j = &t->job;
	struct opt_hostport ps0;

	*own = 0;
	if (job_control_addr(j, caddr) < 0) {
		tfgb_error("%s: PS 0's port %u has no port below it for the control service; "
		           "set cluster.control", t->cmd, caddr->port);
		return TFGB_EXIT_USAGE;
	}
	if (cluster_host_is_local(caddr->host) != 1)
		return TFGB_EXIT_OK;
	job_ps_addr(j, 0, &ps0);
	ps0.port = (uint16_t)(ps0.port + ops->port_offset);
	if (!cluster_tcp_probe(caddr, 200)) {
		*own = 1;
	} else if (!cluster_tcp_probe(&ps0, 200)) {
		tfgb_error("%s: control service: %s:%u is in use, and not by a PS 0 of this job; %s",
		           t->cmd, caddr->host, caddr->port, cluster_control_hint(j));
		return TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

/* The PSs the launcher started are its own children, in its monitor; the
 * others (started by hand, or by another run) are announced the run, and
 * asked for their own figures at its end. */
static void launcher_announce(struct tfgb *t, const struct tr_ops *ops,
                              const struct cluster_child *ps, int np)
{
	unsigned char *own = calloc((size_t)np, 1);
	int others = 0;

	if (!own)
		return; /* then no PS is asked: its figures would count twice */
	for (int i = 0; i < np; i++) {
		own[i] = ps[i].pid > 0;
		others += !own[i];
	}
	self.own = own;
	if (others)
		launch_ps_announce(&t->job, ops, own);
}

/* The job's limits on this host, and the placement of the processes
 * started here (a bad node is the job's error, said once, before any of
 * them starts; place: 0 the limits, 1 the placement): TFGB_EXIT_OK, or
 * TFGB_EXIT_USAGE (said). */
static int launcher_check(const struct job *j, int np, int nw, int place)
{
	struct err jerr;
	int bad;

	if (!place) /* the PSs and workers start on this host: each must fit in it */
		bad = limit_check_monitor(j, (int64_t)np + nw, &jerr) < 0 ||
		      limit_check_host(j, LIMIT_PS, &jerr) < 0 ||
		      limit_check_host(j, LIMIT_WORKER, &jerr) < 0;
	else
		bad = place_check(j, PLACE_WORKER, PLACE_NODE_DIR, &jerr) < 0 ||
		      place_check_local(j, PLACE_WORKER, nw - 1, "--task", &jerr) < 0 ||
		      place_check_local(j, PLACE_PS, np - 1, "--task", &jerr) < 0;
	if (!bad)
		return TFGB_EXIT_OK;
	tfgb_error("%s", jerr.msg);
	return TFGB_EXIT_USAGE;
}

/* This host's name (for messages) and a run id of the launch's own. */
static void launcher_ids(char *host, size_t len, uint64_t *run_id)
{
	if (gethostname(host, len) != 0)
		snprintf(host, len, "this host");
	host[len - 1] = 0;
	*run_id = 0;
	while (!*run_id)
		if (getrandom(run_id, sizeof *run_id, 0) != sizeof *run_id)
			*run_id = now_ns() ^ (uint64_t)getpid() << 32;
}

/* Starts the control service when the launcher hosts it (own) and
 * connects to it: TFGB_EXIT_OK or TFGB_EXIT_FAIL (said). */
static int launcher_connect(struct tfgb *t, const struct opt_hostport *caddr, int own,
                            struct ctrl_server **srv, struct ctrl_client **cc)
{
	const struct job *j = &t->job;
	struct err err;

	if (own && ctrl_server_start(caddr, &j->tls, j->token, t->verbose, 0, srv, &err) < 0) {
		tfgb_error("%s: control service: %s; %s", t->cmd, err.msg, cluster_control_hint(j));
		return TFGB_EXIT_FAIL;
	}
	if (ctrl_client_open(caddr, &j->tls, j->token, now_ns() + launch_start_ns(t), cc,
	                     &err) < 0) {
		tfgb_error("%s: %s%s", t->cmd, err.msg, launch_start_text(t));
		return TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

int launch_run(struct tfgb *t, const struct tr_ops *ops, const struct launch *l)
{
	const struct job *j = &t->job;
	int np = (int)j->ps_count, nw = (int)j->workers, rc = TFGB_EXIT_FAIL;
	struct cluster_child *ps = calloc((size_t)np, sizeof *ps);
	struct cluster_child *wk = calloc((size_t)nw, sizeof *wk);
	struct ctrl_client *cc = NULL;
	struct ctrl_server *srv = NULL;
	struct opt_hostport caddr;
	char host[64];
	uint64_t run_id = 0;
	int own_ctrl = 0;
	struct lprogress prog;
	struct watch w = {.note = "", .prog = &prog};
	struct monitor *mon = NULL;
	struct sysinfo_env env;

	sysinfo_collect(&env); /* the start time is the run's */
	lprogress_init(&prog, t, np, nw);
	if ((rc = launcher_check(j, np, nw, 0)) != TFGB_EXIT_OK ||
	    (rc = launch_net_up(t, np, np + nw)) != TFGB_EXIT_OK)
		goto out;
	rc = TFGB_EXIT_FAIL;
	if (!ps || !wk) {
		tfgb_error("%s: out of memory", t->cmd);
		goto out;
	}
	launcher_ids(host, sizeof host, &run_id);
	if ((rc = launcher_control(t, ops, &caddr, &own_ctrl)) != TFGB_EXIT_OK ||
	    (rc = launcher_check(j, np, nw, 1)) != TFGB_EXIT_OK)
		goto out;
	/* every fork happens here, before this process starts gRPC threads */
	lprogress_starting(&prog);
	if ((rc = session_start_servers(t, ops, np, own_ctrl ? CLUSTER_NO_CONTROL : 0, ps)) !=
	    TFGB_EXIT_OK ||
	    (rc = start_workers(t, ops, ps, np, wk, nw, run_id, &caddr, &mon)) != TFGB_EXIT_OK)
		goto out;
	lprogress_workers(&prog, wk); /* their "go"s, or closed */
	if ((rc = launcher_connect(t, &caddr, own_ctrl, &srv, &cc)) != TFGB_EXIT_OK)
		goto out;
	launcher_announce(t, ops, ps, np);

	/* watch the processes until every worker is done */
	watch(t, ps, np, wk, nw, mon, host, l->run_ns, &w);
	lprogress_end(&prog);
	monitor_stop(mon);
	rc = l->collect(t, ops, cc, run_id, (uint32_t)nw, w.failed || w.interrupted,
	                w.note[0] ? w.note : w.interrupted ? launch_interrupted : NULL,
	                w.lost.role ? &w.lost : NULL, &env, mon);
out:
	lprogress_end(&prog);
	monitor_free(mon);
	ctrl_client_close(cc);
	ctrl_server_stop(srv);
	for (int i = 0; wk && i < nw; i++)
		cluster_stop(&wk[i], 2000);
	if (ps)
		session_stop_servers(ps, np);
	free(ps);
	free(wk);
	free((unsigned char *)self.own);
	self.own = NULL;
	netem_stop();
	return rc;
}
