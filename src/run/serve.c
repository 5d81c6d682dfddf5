/* serve.c - a parameter server of tfgb.v1.Bench: `tfgb serve`, and the
 * PS role of a launch of throughput or train (role.h).
 *
 * Binds the job's PS addresses that belong to this process (--task N: PS N
 * only; otherwise every PS whose host is this machine) and serves them with
 * the job's transport until SIGINT or SIGTERM, then stops gracefully.
 * The process that serves PS 0 also hosts the control service (ctrl.h) on
 * the control address (job_control_addr), bound right after the PS
 * addresses; failing to bind an explicit cluster.control fails the command
 * like a PS address, failing to bind the derived one (PS 0's port - 1) is
 * a warning (another hand-started server may hold it).
 *
 * Started by a benchmark for itself with TFGB_LEASE (lease.h), it serves
 * while any run holds a lease on it and stops by itself after the last.
 *
 * Readiness for a parent process: if TFGB_READY_FD names an open file
 * descriptor, the line "ready\n" is written to it once every address
 * (the control service's too) is bound, and it is closed; on failure it is
 * closed without a line.
 */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "ctrl.h"
#include "lease.h"
#include "limit.h"
#include "place.h"
#include "session.h"
#include "srvinfo.h"
#include "transport.h"
#include "util.h"

struct serve_ready {
	const struct tfgb *t;
	const struct opt_hostport *addrs;
	size_t naddrs;
	int threads;
	int fd; /* TFGB_READY_FD, or -1 */
	const struct opt_hostport *control; /* PS 0's process: the control address */
	struct ctrl_server *ctrl;           /* running control service */
	int ctrl_failed;                    /* it could not start: exit 1 */
	int polled;                         /* the transport polls for it (TR_CAP_SHARED_POLLER) */
	int ranks;                          /* its peers are the launch's ranks (TR_CAP_RANKS) */
};

static void print_addr(const struct opt_hostport *a, FILE *f)
{
	if (strchr(a->host, ':'))
		fprintf(f, "[%s]:%u", a->host, a->port);
	else
		fprintf(f, "%s:%u", a->host, a->port);
}

/* Called by the transport once the PS addresses are bound: starts the
 * control service, then announces readiness. */
static void on_ready(void *arg)
{
	struct serve_ready *r = arg;
	struct err err;

	if (r->control && ctrl_server_start(r->control, &r->t->job.tls, r->t->job.token,
	                                    r->t->verbose, r->polled,
	                                    &r->ctrl,
	                                    &err) < 0) {
		if (!r->t->job.control.n) {
			/* a derived address: this server is PS 0 of its own job only
			 * by default (hand-started servers on consecutive ports, each
			 * with its own cluster.ps); it serves on, without the service */
			tfgb_error("serve: warning: no control service: %s; a throughput run with "
			           "this server as PS 0 needs one: %s", err.msg,
			           cluster_control_hint(&r->t->job));
			r->control = NULL;
		} else {
			tfgb_error("serve: control service: %s; %s", err.msg,
			           cluster_control_hint(&r->t->job));
			r->ctrl_failed = 1;
			tfgb_stop = 1;
			return; /* no ready line: the descriptor is closed on the way out */
		}
	}
	if (!r->t->quiet) {
		/* a rank's peers reach it through the launch, not an address */
		fprintf(stderr, "tfgb serve: %s", r->ranks ? "serving the other ranks of this launch"
		                                           : "listening on ");
		for (size_t i = 0; !r->ranks && i < r->naddrs; i++) {
			if (i)
				fputs(", ", stderr);
			print_addr(&r->addrs[i], stderr);
		}
		fprintf(stderr, " (%s%s, %d thread%s)", job_transport_name(r->t->job.transport),
		        r->t->job.tls.cert ? " over TLS" : "", r->threads, r->threads == 1 ? "" : "s");
		if (r->control) {
			fputs("; control service on ", stderr);
			print_addr(r->control, stderr);
		}
		fputc('\n', stderr);
	}
	if (r->fd >= 0) {
		static const char line[] = "ready\n";
		ssize_t n;
		do
			n = write(r->fd, line, sizeof line - 1);
		while (n < 0 && errno == EINTR);
		close(r->fd);
		r->fd = -1;
	}
}

/* TFGB_READY_FD: -1 when unset, -2 when it does not name an open descriptor. */
static int ready_fd_from_env(void)
{
	const char *s = getenv("TFGB_READY_FD");
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > INT_MAX || fcntl((int)v, F_GETFD) < 0)
		return -2;
	fcntl((int)v, F_SETFD, FD_CLOEXEC);
	return (int)v;
}

/* Fills addrs (ps_count entries) with the addresses this process binds and
 * sets *ps0 when PS 0 is one of them.  Returns how many, or -exit status
 * after printing the error. */
static int pick_addrs(const struct tfgb *t, struct opt_hostport *addrs, int *ps0)
{
	const struct job *j = &t->job;
	int *local, n = 0;

	if (t->task >= 0) {
		if (t->task >= j->ps_count) {
			tfgb_error("serve: --task %d is out of range: the job has %lld parameter "
			           "server%s (0..%lld)", t->task, (long long)j->ps_count,
			           j->ps_count == 1 ? "" : "s", (long long)j->ps_count - 1);
			return -TFGB_EXIT_USAGE;
		}
		job_ps_addr(j, t->task, &addrs[0]);
		*ps0 = t->task == 0;
		return 1;
	}
	local = calloc((size_t)j->ps_count, sizeof *local);
	if (!local) {
		tfgb_error("serve: out of memory");
		return -TFGB_EXIT_FAIL;
	}
	for (int i = 0; i < j->ps_count; i++) {
		struct opt_hostport a, b;

		job_ps_addr(j, i, &a);
		local[i] = -2;
		/* one lookup per distinct host */
		for (int k = i - 1; k >= 0 && local[i] == -2; k--) {
			job_ps_addr(j, k, &b);
			if (!strcmp(a.host, b.host))
				local[i] = local[k];
		}
		if (local[i] == -2)
			local[i] = cluster_host_is_local(a.host);
		if (local[i] == 1)
			addrs[n++] = a;
	}
	*ps0 = local[0] == 1;
	free(local);
	if (n == 0) {
		char list[400];
		size_t off = 0;
		for (int i = 0; i < j->ps_count && off < sizeof list - 8; i++) {
			struct opt_hostport a;
			job_ps_addr(j, i, &a);
			off += (size_t)snprintf(list + off, sizeof list - off, "%s'%s%s%s:%u'",
			                        i ? ", " : "", strchr(a.host, ':') ? "[" : "", a.host,
			                        strchr(a.host, ':') ? "]" : "", a.port);
		}
		if (off >= sizeof list - 8)
			snprintf(list + sizeof list - 8, 8, ", ...");
		tfgb_error("serve: no parameter-server address of the job is on this machine: %s; "
		           "set [cluster] ps or use --task N", list);
		return -TFGB_EXIT_FAIL;
	}
	return n;
}

/* Places this process (before the transport allocates: its buffers
 * follow the node) and, for PS 0, the control service's address in
 * ready->control.  TFGB_EXIT_OK or the status of the error it printed. */
static int place_and_control(struct tfgb *t, int ps0, struct opt_hostport *control,
                             struct serve_ready *ready)
{
	struct err jerr;
	struct err err;

	if (place_check(&t->job, PLACE_PS, PLACE_NODE_DIR, &jerr) < 0 ||
	    place_check_local(&t->job, PLACE_PS, t->local_rank,
	                      t->local_source ? t->local_source : "alone", &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	if (place_apply(&t->job, PLACE_PS, t->local_rank, &err) < 0) {
		tfgb_error("serve: %s", err.msg);
		return TFGB_EXIT_FAIL;
	}
	/* PS 0 hosts the control service, unless a point-to-point benchmark
	 * started this server for itself (it needs none) */
	if (ps0 && !getenv("TFGB_NO_CONTROL")) {
		if (job_control_addr(&t->job, control) < 0) {
			tfgb_error("serve: PS 0's port %u has no port below it for the control "
			           "service; set cluster.control", control->port);
			return TFGB_EXIT_USAGE;
		}
		ready->control = control;
	}
	return TFGB_EXIT_OK;
}

/* A server of one launch (tfgb-throughput(1)): it ends with the run. */
struct launch_end {
	const struct job *j;
	int ps;
	pthread_t thread;
	int started;
	struct monitor *mon; /* itself, from its start ([monitor] interval), or NULL */
};

/* Once every worker has reported: its own resources to the control
 * service, for the worker that prints the result (session.h). */
static void launch_end_res(struct ctrl_client *cc, void *arg)
{
	struct launch_end *e = arg;
	unsigned char *blob = malloc(CTRL_BLOB_MAX);
	struct err err;
	long n;

	monitor_stop(e->mon);
	if (!blob || (n = session_res_pack(e->mon, blob, CTRL_BLOB_MAX)) < 0 ||
	    ctrl_report(cc, cluster_run_id(NULL) ^ LAUNCH_RES_ID, (uint32_t)e->ps,
	                (uint32_t)e->j->ps_count, blob, (size_t)n, now_ns() + e->j->timeout_ns, &err) < 0)
		tfgb_error("serve: PS %d of one launch: its resources did not reach the control "
		           "service", e->ps);
	free(blob);
}

static void *launch_end_main(void *arg)
{
	struct launch_end *e = arg;
	uint64_t span = session_run_span_ns(e->j);
	int rc;

	rc = session_launch_end(e->j, e->ps, (int)e->j->ps_count, now_ns() + span,
	                        &tfgb_stop, launch_end_res, e);
	if (rc < 0 && !tfgb_stop)
		tfgb_error("serve: PS %d of one launch: the run did not end within %.0fs or the "
		           "control service went away; stopping", e->ps, (double)span / 1e9);
	if (!tfgb_stop)
		kill(getpid(), SIGTERM); /* as a launcher stops a server: gracefully */
	return NULL;
}

/* Its local rank (place.h) from the launcher's, or --task N's N. */
static void serve_local(struct tfgb *t, const struct cluster_rank *rk)
{
	if (t->local_source)
		return; /* set already: the tfgb throughput rank that runs this server */
	t->local_rank = rk->local >= 0 ? rk->local : 0;
	t->local_source = rk->local_source;
}

/* --task from the launcher's rank when this process is a server of one
 * launch (e->ps >= 0 then).  TFGB_EXIT_OK or the status of the error it
 * printed. */
static int serve_rank(struct tfgb *t, struct launch_end *e)
{
	struct cluster_rank rk;
	struct cluster_role role;
	struct err err;

	e->ps = -1;
	if (t->task >= 0) {
		cluster_rank(t->task, &rk, &err);
		serve_local(t, &rk);
		return TFGB_EXIT_OK;
	}
	if (cluster_rank(-1, &rk, &err) < 0 ||
	    cluster_role(&t->job, job_key_set(&t->job, "cluster", "workers"), 1, &rk, &role, &err) < 0) {
		if (cluster_speaks(&rk, 1, NULL)) /* one line for its part of the launch */
			tfgb_error("serve: %s", err.msg);
		return session_refused(t); /* the other ranks of an MPI world learn it */
	}
	if (role.one_launch) {
		serve_local(t, &rk);
		t->task = role.ps;
		e->ps = role.ps;
		e->j = &t->job;
	}
	return TFGB_EXIT_OK;
}

/* -v's last line: what the server answered (tr_serve_count). */
static void served_text(struct tr_serve_count *c)
{
	static const int m[] = {TR_PULL, TR_ACK, TR_ECHO, TR_ECHO_TENSOR, TR_ACK_TENSOR,
	                        TR_ECHO_TENSOR_ZC, TR_ACK_TENSOR_ZC, TR_PULL_TENSOR,
	                        TR_PULL_TENSOR_ZC};
	uint64_t all = 0;

	for (size_t i = 0; i < sizeof m / sizeof *m; i++)
		all += atomic_load(&c->calls[m[i]]);
	fprintf(stderr, "tfgb serve: stopped: answered %llu calls (", (unsigned long long)all);
	for (size_t i = 0; i < sizeof m / sizeof *m; i++)
		fprintf(stderr, "%s%s %llu", i ? ", " : "", tr_method_name(m[i]),
		        (unsigned long long)atomic_load(&c->calls[m[i]]));
	fprintf(stderr, "), %llu request bytes, %llu reply bytes\n",
	        (unsigned long long)atomic_load(&c->req_bytes),
	        (unsigned long long)atomic_load(&c->reply_bytes));
}

/* The transport's server configuration for the n addresses of addrs;
 * count gets what it answered (-v). */
static void serve_cfg(struct tfgb *t, const struct tr_ops *ops, struct opt_hostport *addrs, int n,
                      struct serve_ready *ready, struct tr_serve_count *count,
                      struct tr_server_cfg *cfg)
{
	static unsigned char info[TR_INFO_MAX];

	cfg->addrs = addrs;
	cfg->naddrs = (size_t)n;
	cfg->max_message = t->job.max_message;
	cfg->threads = (int)t->job.threads;
	if (cfg->threads <= 0 && ops->default_threads > 0) {
		cfg->threads = ops->default_threads; /* the transport's own (gRPC's one) */
	} else if (cfg->threads <= 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		cfg->threads = cpus > 0 ? (int)(cpus > 256 ? 256 : cpus) : 1;
	}
	cfg->stop = &tfgb_stop;
	cfg->ready = on_ready;
	cfg->ready_arg = ready;
	cfg->verbose = t->verbose;
	cfg->tls = &t->job.tls;
	cfg->info = info; /* who answers, for the workers' results */
	cfg->info_len = srvinfo_pack(ops->name, info, sizeof info);
	cfg->count = count;
	ready->addrs = addrs;
	ready->naddrs = (size_t)n;
	ready->threads = cfg->threads;
	ready->polled = !!(ops->caps & TR_CAP_SHARED_POLLER);
	ready->ranks = !!(ops->caps & TR_CAP_RANKS);
}

/* A server not of one launch samples itself into a ring, for the runs
 * that ask it for its figures over their window (srvinfo.h): Info's
 * replies come from there.  Without it (monitor.interval = 0, or out of
 * memory) it answers as before. */
static void serve_self(struct tfgb *t, const struct opt_hostport *first, struct tr_server_cfg *cfg,
                       struct srvself **self)
{
	int ps = 0;
	int rc;

	for (int i = 0; i < t->job.ps_count; i++) { /* its index: its first address's */
		struct opt_hostport a;
		job_ps_addr(&t->job, i, &a);
		if (a.port == first->port && !strcmp(a.host, first->host)) {
			ps = i;
			break;
		}
	}
	if ((rc = srvself_new(&t->job, ps, cfg->info, cfg->info_len, self)) < 0) {
		tfgb_error("serve: warning: it cannot sample itself: %s; runs get no figures of it",
		           strerror(-rc));
		return;
	}
	cfg->info_fn = srvself_reply;
	cfg->info_arg = *self;
}

/* The job's transport, if it can serve here; NULL when it cannot (said,
 * with the exit status in *status). */
static const struct tr_ops *server_ops(struct tfgb *t, int *status)
{
	const struct tr_ops *ops;

	if ((*status = session_transport(t, "serve", &ops)) != TFGB_EXIT_OK)
		return NULL;
	if (!(ops->caps & TR_CAP_SERVER) || !ops->serve) {
		tfgb_error("serve: transport '%s' has no server side", ops->name);
		*status = TFGB_EXIT_FAIL;
		return NULL;
	}
	return ops;
}

/* Serves with cfg until tfgb_stop, with what goes along: the lease of the
 * benchmark that started it, the sampling of itself for a launch (end);
 * then frees self and ends the transport (ctx).  The exit status. */
static int serve_run(struct tfgb *t, const struct tr_ops *ops, void *ctx,
                     const struct tr_server_cfg *cfg, struct serve_ready *ready,
                     struct launch_end *end, struct srvself *self)
{
	struct lease_watch *lw = NULL;
	struct err err = {{0}};
	int rc, status = TFGB_EXIT_OK;

	/* started by a benchmark for itself: up while any run holds its lease */
	if (getenv("TFGB_LEASE") && lease_watch_start(getenv("TFGB_LEASE"), &tfgb_stop, &lw) < 0)
		lw = NULL; /* then it stops with its starter, as its parent-death signal says */
	if (end->ps >= 0) { /* it samples itself for the result, as a worker does */
		struct monitor_target me = {"ps", end->ps, getpid()};
		if (session_monitor(t, &me, 1, NULL, 0, 0, &end->mon) != TFGB_EXIT_OK)
			end->mon = NULL; /* said; the run goes on without */
		end->started = pthread_create(&end->thread, NULL, launch_end_main, end) == 0;
	}
	rc = ops->serve(ctx, cfg, &err);
	if (end->started) /* it sees tfgb_stop within a second */
		pthread_join(end->thread, NULL);
	monitor_free(end->mon);
	srvself_free(self);
	ctrl_server_stop(ready->ctrl);
	if (rc < 0) {
		tfgb_error("serve: %s", err.msg);
		status = TFGB_EXIT_FAIL;
	} else if (ready->ctrl_failed) {
		status = TFGB_EXIT_FAIL;
	} else if (t->verbose) {
		served_text(cfg->count);
	}
	ops->fini(ctx);
	lease_watch_end(lw); /* its locks go now that the ports are closed */
	return status;
}

int run_serve(struct tfgb *t)
{
	const struct tr_ops *ops;
	struct tr_server_cfg cfg = {0};
	struct serve_ready ready = {.t = t, .fd = -1};
	struct launch_end end = {.ps = -1};
	struct opt_hostport *addrs, control;
	struct err err = {{0}};
	struct err jerr;
	static struct tr_serve_count count; /* what cfg.count points to: -v says it at the end */
	void *ctx = NULL;
	struct srvself *self = NULL;
	int n, ps0 = 0, status = TFGB_EXIT_OK;

	if (job_net_emulated(&t->job) && !t->job.net_ps_host[0]) {
		job_key_err(&t->job, &jerr, "network", job_net_key(&t->job),
		            "[network] emulates the link of a run that tfgb latency, bandwidth, "
		            "throughput or train launches on this machine, with the PSs it starts; "
		            "not of a tfgb serve started by hand");
		tfgb_error("serve: %s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	ready.fd = ready_fd_from_env();
	if (ready.fd == -2) {
		tfgb_error("serve: TFGB_READY_FD='%s' is not an open file descriptor",
		           getenv("TFGB_READY_FD"));
		return TFGB_EXIT_USAGE;
	}
	if ((status = serve_rank(t, &end)) != TFGB_EXIT_OK)
		goto out_fd;
	if (limit_check_host(&t->job, LIMIT_PS, &jerr) < 0) {
		tfgb_error("serve: %s", jerr.msg);
		status = TFGB_EXIT_USAGE;
		goto out_fd;
	}
	if (!(ops = server_ops(t, &status)))
		goto out_fd;
	addrs = calloc((size_t)t->job.ps_count, sizeof *addrs);
	if (!addrs) {
		tfgb_error("serve: out of memory");
		status = TFGB_EXIT_FAIL;
		goto out_fd;
	}
	n = pick_addrs(t, addrs, &ps0);
	if (n < 0) {
		status = -n;
		goto out_addrs;
	}
	if ((status = place_and_control(t, ps0, &control, &ready)) != TFGB_EXIT_OK)
		goto out_addrs;

	tfgb_catch_signals();

	if (tr_init(ops, &t->job, &ctx, &err) < 0) {
		tfgb_error("serve: %s", err.msg);
		status = TFGB_EXIT_FAIL;
		goto out_addrs;
	}
	serve_cfg(t, ops, addrs, n, &ready, &count, &cfg);
	if (end.ps < 0) /* not of one launch: it keeps its own figures for the runs that ask */
		serve_self(t, &addrs[0], &cfg, &self);
	if (ops->serve_counters) /* and its transport's counters in every Info reply */
		srvself_counters(self, ops->serve_counters, ctx);

	status = serve_run(t, ops, ctx, &cfg, &ready, &end, self);
out_addrs:
	free(addrs);
out_fd:
	if (ready.fd >= 0)
		close(ready.fd);
	return status;
}
