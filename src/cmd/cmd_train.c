/* cmd_train.c - `tfgb train`: the communication of training steps.
 *
 * P parameter servers and W workers, as `tfgb throughput` runs them (the
 * same one-machine launcher, control service, --task and launcher ranks:
 * launch.h), but each worker runs training steps of a model (step.h)
 * instead of a stream of calls: every step pulls every variable from the
 * PS that holds it and pushes a gradient of the same size back, all in
 * flight together up to [train] inflight per connection.  Synchronous
 * training meets the other workers at a barrier of the control service
 * before every step (generation step + 1; 0 is the registration).
 *
 * A worker's report travels as a throughput worker's (wresult.h): calls
 * are its measured steps, warmup_calls its warm-up steps, the latency
 * histogram its step times, the service-time one its pull phases, and
 * its training figures (train set) the bytes it sent to and received from
 * each PS, the barriers it passed and the nanoseconds it waited in them.  The collector (the launcher, or worker 0
 * without it) adds them up and prints them with the model's plan.
 */
#include "cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "collect_res.h"
#include "collect_train.h"
#include "ctrl.h"
#include "fault.h"
#include "launch.h"
#include "model.h"
#include "payload.h"
#include "report.h"
#include "role.h"
#include "wresult.h"
#include "session.h"
#include "srvinfo.h"
#include "step.h"
#include "train.h"
#include "train_ar.h"
#include "util.h"

/* The plan of the job: loaded from the tree of the running binary or
 * DATADIR.  0, or TFGB_EXIT_USAGE (said). */
static int load_plan(struct tfgb *t, struct train_plan *p)
{
	char tree[PATH_MAX];
	struct err err;

	if (train_plan(&t->job, tfgb_exe_dir(tree, sizeof tree) == 0 ? tree : NULL, p, &err) < 0) {
		tfgb_error("%s", err.msg);
		return TFGB_EXIT_USAGE;
	}
	return 0;
}

/* ---- --list: the model, its placement and Table 1's classes ---- */

static void dims_text(const struct model_var *v, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	if (v->ndims == 0)
		snprintf(buf, len, "scalar");
	for (int d = 0; d < v->ndims && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%" PRIu32, d ? "x" : "", v->dims[d]);
}

static int list_model(struct tfgb *t, const struct train_plan *p)
{
	const struct train_conf *c = train_conf_of(&t->job);
	const struct model *m = &p->m;
	size_t cls[MODEL_CLASS_COUNT] = {0};
	FILE *f = tfgb_out(t);
	char shape[96];

	if (!f)
		return TFGB_EXIT_FAIL;
	fprintf(f, "# model %s: %zu variables, %" PRIu64 " trainable parameters (%" PRIu64
	        " bytes), %" PRIu64 " statistics (%" PRIu64 " bytes)\n", m->name, m->n,
	        m->elems[MODEL_TRAINABLE], m->bytes[MODEL_TRAINABLE], m->elems[MODEL_STATISTIC],
	        m->bytes[MODEL_STATISTIC]);
	fprintf(f, "# placement %s over %d PS; %s\n", model_place_name(c->placement), p->nps,
	        c->statistics ? "every variable travels" : "the statistics stay on their PS");
	fprintf(f, "%-5s %-48s %-8s %-16s %-9s %12s %-10s %s\n", "#idx", "name", "dtype", "shape",
	        "kind", "bytes", "class", "ps");
	for (size_t i = 0; i < m->n; i++) {
		const struct model_var *v = &m->var[i];
		int k = model_class(v->bytes);

		dims_text(v, shape, sizeof shape);
		fprintf(f, "%-5zu %-48s %-8s %-16s %-9s %12" PRIu64 " %-10s %d\n", i, v->name,
		        job_dtype_name(v->dtype), shape, model_kind_name(v->kind), v->bytes,
		        train_class_name(k), v->ps);
		if (v->kind == MODEL_TRAINABLE || c->statistics)
			cls[k]++;
	}
	for (int i = 0; i < p->nps; i++)
		fprintf(f, "# PS %d: %zu variables transferred, %" PRIu64 " bytes per step each way\n",
		        i, p->ps_vars[i], p->ps_bytes[i]);
	fprintf(f, "# Table 1 classes of the %zu transferred: small %zu, medium %zu, large %zu, "
	        "over large (> 10 MiB) %zu\n", p->nvars, cls[CAT_SMALL], cls[CAT_MEDIUM],
	        cls[CAT_LARGE], cls[MODEL_CLASS_OVER]);
	return TFGB_EXIT_OK;
}

/* ---- the report ---- */

/* The payload of one step: every transferred variable, one buffer each. */
static int step_payload(const struct train_plan *pl, struct payload *p)
{
	memset(p, 0, sizeof *p);
	if (!(p->buf = calloc(pl->nvars, sizeof *p->buf)))
		return -1;
	p->n = pl->nvars;
	for (size_t i = 0; i < pl->nvars; i++) {
		int k = model_class(pl->var[i].bytes);

		p->buf[i] = (struct payload_buf){.cat = k == MODEL_CLASS_OVER ? CAT_LARGE : k,
		                                 .len = pl->var[i].bytes, .off = p->total};
		p->count[p->buf[i].cat]++;
		p->total += pl->var[i].bytes;
	}
	return 0;
}

static void train_fig(const struct tfgb *t, const struct train_plan *pl, const struct train_agg *a,
                      struct report_train *tr)
{
	const struct train_conf *c = train_conf_of(&t->job);

	*tr = (struct report_train){
		.model = pl->m.name, .vars = pl->m.n, .nvars = pl->nvars, .placement = c->placement,
		.sync = c->sync, .statistics = c->statistics, .inflight = c->inflight,
		.nps = a->c.nps, .workers = a->c.workers, .plan_bytes = pl->ps_bytes,
		.plan_vars = pl->ps_vars, .ps_sent = a->sent, .ps_recv = a->recv,
		.worker_steps = a->c.per_worker, .worker_step = a->wstep, .pull = &a->pull,
		.worker_barriers = a->barriers, .barrier_wait_ns = a->barrier_wait_ns,
		.window_ns = a->c.sum.window_ns, .closing = a->closing, .last_in = a->last_in,
		.injected_ns = a->injected_ns, .worker_rps = a->c.worker_rps,
	};
	for (size_t i = 0; i < pl->nvars; i++)
		tr->classes[model_class(pl->var[i].bytes)]++;
}

static int print_train(struct tfgb *t, const struct tr_ops *ops, const struct train_plan *pl,
                       const struct train_agg *a, const char *why, const struct opt_hostport *ps,
                       const struct srvinfo *psinfo, const struct sysinfo_env *env,
                       const struct monitor *mon)
{
	const struct job *j = &t->job;
	struct report_alloc ra = {.nworkers = a->c.workers, .nps = a->c.nps, .worker = a->c.alloc,
	                          .ps = psinfo};
	struct report_tput tp = {
		.workers = a->c.workers, .reported = a->c.reported, .nps = a->c.nps, .per_ps = a->calls,
		.per_worker = a->c.per_worker, .worker_rps = a->c.worker_rps, .worker_host = a->c.host,
		.worker_pid = a->c.pid, .rps = a->c.rps, .bytes_per_s = a->c.bps,
		.incomplete = why[0] != 0, .note = why[0] ? why : NULL,
	};
	/* every transfer the monitor saw: warm-up steps too */
	uint64_t steps = a->c.sum.calls + a->c.sum.warmup_calls;
	struct report_train tr;
	struct payload p;
	struct report r;
	FILE *out = tfgb_out(t);
	int rc = -1;

	if (!out || step_payload(pl, &p) < 0)
		return -1;
	train_fig(t, pl, a, &tr);
	r = (struct report){.benchmark = "TF-gRPC-Train", .command = t->cmd, .job = j,
	                    .verbose = t->verbose, .payload = &p, .transport_version = ops->version(), .res = &a->c.sum,
	                    .ps = ps, .nps = (int)j->ps_count, .inflight = (int)tr.inflight,
	                    .tput = &tp, .train = &tr, .env = env, .alloc = &ra, .mon = mon,
	                    .mon_calls = steps * pl->nvars * 2, .mon_bytes = steps * pl->step_bytes,
	                    .mon_moved = steps * pl->step_bytes * 2,
	                    .hosts = mon ? NULL : a->c.res.hosts, .nhosts = mon ? 0 : a->c.res.nhosts};
	if (report_print(&r, out) < 0)
		tfgb_error("%s: out of memory writing the report", t->cmd);
	else
		rc = 0;
	free(p.buf);
	return rc;
}

/* Collects the run's reports and prints them: the exit status.  mon: the
 * launcher's (NULL: the workers sampled themselves); one_launch: a
 * worker's, as tput_view's (NULL for the launcher). */
static int collect_print(struct tfgb *t, const struct tr_ops *ops, struct ctrl_client *cc,
                         uint64_t run_id, uint32_t workers, int partial, const char *note,
                         const struct report_lost *lost, const struct sysinfo_env *env,
                         const struct monitor *mon, int *one_launch)
{
	const struct job *j = &t->job;
	char why[1024];
	struct train_plan pl;
	struct opt_hostport *ps = NULL;
	struct srvinfo *psinfo = NULL;
	struct train_agg a;
	int status = TFGB_EXIT_FAIL, erc;

	if ((status = load_plan(t, &pl)) != 0)
		return status;
	status = TFGB_EXIT_FAIL;
	if (train_agg_init(&a, workers, &pl, *j->timeline != 0) < 0 ||
	    !(ps = calloc((size_t)j->ps_count, sizeof *ps)) ||
	    !(psinfo = calloc((size_t)j->ps_count, sizeof *psinfo))) {
		tfgb_error("%s: out of memory collecting results", t->cmd);
		goto out;
	}
	for (int i = 0; i < j->ps_count; i++)
		job_ps_addr(j, i, &ps[i]);
	if (train_collect(t, cc, run_id, workers, partial, note, lost, mon, one_launch, &a, why,
	                  sizeof why) < 0)
		goto out;
	launch_ps_allocators(j, ops, !why[0], psinfo, 1);
	if (print_train(t, ops, &pl, &a, why, ps, psinfo, env, mon) < 0 ||
	    res_series(t, mon, &a.c.res) < 0)
		goto out;
	if (*j->timeline && (erc = train_timeline(&a, j->timeline)) < 0) {
		tfgb_error("%s: cannot write the timeline to '%s': %s", t->cmd, j->timeline,
		           strerror(-erc));
		goto out;
	}
	if (why[0]) {
		tfgb_error("%s: incomplete: %s", t->cmd, why);
	} else {
		session_late_signal(t);
		status = TFGB_EXIT_OK;
	}
out:
	free(ps);
	for (int i = 0; psinfo && i < j->ps_count; i++)
		srvinfo_clear(&psinfo[i]); /* a PS's own figures, when it sent them */
	free(psinfo);
	train_agg_free(&a);
	train_plan_free(&pl);
	return status;
}

/* The launcher's collector (launch_collect_fn). */
static int collect_train(struct tfgb *t, const struct tr_ops *ops, struct ctrl_client *cc,
                         uint64_t run_id, uint32_t workers, int partial, const char *note,
                         const struct report_lost *lost, const struct sysinfo_env *env,
                         const struct monitor *mon)
{
	return collect_print(t, ops, cc, run_id, workers, partial, note, lost, env, mon, NULL);
}

/* ---- a worker ---- */

/* A training worker's own: its control client and barriers, who it waited
 * for, the fault it puts in and its timeline's marks. */
struct tworker {
	struct ctrl_client *cc;
	uint64_t run_id, timeout_ns;
	uint32_t index, workers;
	uint64_t passed, wait_ns;   /* barriers passed, time spent in them */
	uint64_t warmup_steps;
	/* of the barriers that closed a measured step (step k's closes step
	 * k - 1): how many, and at how many this worker was the last in */
	uint64_t closing, last_in;
	const struct fault_conf *fault;
	/* output.timeline: the marks of the first nmarks measured steps
	 * (step.h), from zero_ns, the first barrier's release */
	uint64_t zero_ns;
	struct step_mark *marks;
	uint64_t *conn_end;
	size_t nmarks;
};

/* step_cfg.barrier: generation step + 1 of the control service's barrier,
 * entered in slices of a second (a newer call of a worker replaces its
 * older one, ctrl_server.c) so that SIGINT or SIGTERM ends the wait within
 * about a second rather than at job.timeout. */
static int step_barrier(void *arg, uint64_t step, struct err *err)
{
	struct tworker *b = arg;
	uint64_t t0 = now_ns(), deadline = t0 + b->timeout_ns;
	uint32_t last = UINT32_MAX;
	int rc = -ETIMEDOUT;

	while (rc == -ETIMEDOUT && !tfgb_stop && now_ns() < deadline) {
		uint64_t slice = now_ns() + 1000000000ull;
		rc = ctrl_barrier_last(b->cc, b->run_id, b->index, b->workers, (uint32_t)(step + 1),
		                       slice < deadline ? slice : deadline, &last, err);
	}
	if (rc != 0) {
		if (tfgb_stop)
			err_set(err, "interrupted at the barrier of step %llu",
			        (unsigned long long)step);
		return -1;
	}
	b->passed++;
	b->wait_ns += now_ns() - t0;
	if (step > b->warmup_steps) {
		b->closing++;
		b->last_in += last == b->index;
	}
	return 0;
}

/* step_cfg.compute: the fault put in on this worker, if any (fault.h). */
static uint64_t step_fault(void *arg, uint64_t step)
{
	const struct tworker *b = arg;

	return fault_apply(b->fault, step, (int)b->index, (int)b->workers, &tfgb_stop);
}

/* Hands the worker's figures to the control service, with its series
 * mon when it sampled itself: 0 or -1 (said). */
static int report_steps(struct tfgb *t, const struct tworker *b, const struct step_result *sr,
                        int np, const struct monitor *mon)
{
	struct engine_result res = {.end = sr->end, .calls = sr->steps,
	                            .warmup_calls = sr->warmup_steps, .window_ns = sr->window_ns,
	                            .lat = sr->step, .svc = sr->pull};
	struct wresult *wr = malloc(sizeof *wr);
	struct alloc_info al;
	int rc = -1;

	snprintf(res.err.msg, sizeof res.err.msg, "%s", sr->err.msg);
	if (wr) {
		for (int i = 0; sr->bytes_out && i < np; i++)
			res.bytes += sr->bytes_out[i] + sr->bytes_in[i];
		wresult_from_engine(wr, b->index, &res, (uint32_t)np);
		wr->train = 1;
		for (uint32_t i = 0; i < wr->nps; i++) {
			wr->ps_sent[i] = sr->bytes_out ? sr->bytes_out[i] : 0;
			wr->ps_recv[i] = sr->bytes_out ? sr->bytes_in[i] : 0;
		}
		wr->barriers = b->passed;
		wr->barrier_wait_ns = b->wait_ns;
		wr->closing = b->closing;
		wr->last_in = b->last_in;
		wr->injected_ns = sr->injected_ns;
		wr->zero_ns = b->zero_ns;
		wr->nmarks = (uint32_t)sr->nmarks;
		wr->mark_conns = sr->nmarks ? (uint32_t)np : 0;
		wr->marks_dropped = sr->steps - sr->nmarks;
		if (sr->nmarks) {
			memcpy(wr->marks, b->marks, sr->nmarks * sizeof *b->marks);
			memcpy(wr->conn_end, b->conn_end, 2 * sr->nmarks * (size_t)np * sizeof *b->conn_end);
		}
		alloc_detect(&al);
		snprintf(wr->alloc, sizeof wr->alloc, "%s", al.name);
		snprintf(wr->alloc_version, sizeof wr->alloc_version, "%s", al.version);
		res_self_pack(wr, mon);
		rc = launch_send(t, b->cc, b->run_id, b->workers, wr);
	} else {
		tfgb_error("%s: worker %u: reporting: out of memory", t->cmd, b->index);
	}
	free(wr);
	return rc;
}

/* output.timeline: room for the marks of as many measured steps as a
 * report holds (wresult.h).  0, or -1 (said). */
static int marks_alloc(struct tfgb *t, struct tworker *b, int np)
{
	uint64_t steps = (uint64_t)train_conf_of(&t->job)->steps;
	size_t n = RESULT_MARK_ENDS_MAX / (2 * (size_t)np);

	n = n < RESULT_MARKS_MAX ? n : RESULT_MARKS_MAX;
	b->nmarks = steps < n ? (size_t)steps : n;
	if (!*t->job.timeline || !b->nmarks)
		return 0;
	b->marks = calloc(b->nmarks, sizeof *b->marks);
	b->conn_end = calloc(2 * b->nmarks * (size_t)np, sizeof *b->conn_end);
	if (b->marks && b->conn_end)
		return 0;
	tfgb_error("%s: worker %u: out of memory for the timeline", t->cmd, b->index);
	return -1;
}

/* The gradient every push sends: max_bytes, page-aligned, registered with
 * the transport.  NULL (said) on failure. */
static void *grad_alloc(struct tfgb *t, const struct session *s, uint64_t bytes)
{
	size_t len = ((size_t)bytes + 4095) & ~(size_t)4095;
	void *g = aligned_alloc(4096, len);
	int erc;

	if (!g) {
		tfgb_error("%s: worker %d: out of memory for a %zu-byte gradient", t->cmd, s->index,
		           len);
		return NULL;
	}
	memset(g, 0x5a, len);
	if (s->ops->reg_mem && (erc = s->ops->reg_mem(s->client, g, len)) < 0) {
		tfgb_error("%s: worker %d: cannot register the %zu-byte gradient for %s: %s", t->cmd,
		           s->index, len, s->ops->name, strerror(-erc));
		free(g);
		return NULL;
	}
	return g;
}

/* The worker's steps, configured from the job and its plan. */
static int steps_run(struct tfgb *t, const struct session *s, const struct train_plan *pl,
                     const void *grad, struct tworker *b, struct step_result *sr)
{
	const struct train_conf *c = train_conf_of(&t->job);
	struct step_cfg cfg = {
		.ops = s->ops, .client = s->client, .conns = s->conns, .nconns = s->nconns,
		.var = pl->var, .nvars = pl->nvars, .grad = grad, .mode = t->job.mode,
		.inflight = (int)c->inflight,
		.warmup_steps = (uint64_t)c->warmup_steps, .steps = (uint64_t)c->steps,
		.timeout_ns = t->job.timeout_ns, .stop = &tfgb_stop,
		.barrier = c->sync ? step_barrier : NULL, .barrier_arg = b,
		.compute = fault_any(b->fault) ? step_fault : NULL, .compute_arg = b,
		.marks = b->marks, .conn_end = b->conn_end, .nmarks = b->nmarks,
	};

	return step_run(&cfg, sr);
}

static void say_failure(struct tfgb *t, int index, const struct step_result *sr)
{
	struct opt_hostport addr;

	if (sr->failed_conn >= 0 && sr->failed_conn < t->job.ps_count) {
		job_ps_addr(&t->job, sr->failed_conn, &addr);
		tfgb_error("%s: worker %d: PS %d (%s:%u): %s", t->cmd, index, sr->failed_conn,
		           addr.host, addr.port, sr->err.msg);
	} else {
		tfgb_error("%s: worker %d: %s", t->cmd, index, sr->err.msg);
	}
}

/* A training worker of the plan arg (role.h). */
static int run_worker(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                      int one_launch, void *arg)
{
	const struct train_plan *pl = arg;
	const struct job *j = &t->job;
	int collector = !getenv("TFGB_LAUNCHER") && rk->index == 0;
	int workers = rk->size, rc, src, np = (int)j->ps_count, one = one_launch;
	struct tworker b = {.timeout_ns = j->timeout_ns, .index = (uint32_t)rk->index,
	                     .warmup_steps = (uint64_t)train_conf_of(j)->warmup_steps,
	                     .fault = fault_conf_of(j)};
	struct step_result sr = {0};
	struct session s = {0};
	struct sysinfo_env env;
	struct monitor *mon = NULL;
	void *grad = NULL;

	if ((rc = launch_worker_id(t, rk, workers, &b.run_id)) != TFGB_EXIT_OK)
		return rc;
	if (collector)
		sysinfo_collect(&env);
	b.workers = (uint32_t)workers;
	if ((rc = session_open_sized(&s, t, ops, rk->index, TR_PULL,
	                             (int)train_conf_of(j)->inflight, np,
	                             train_plan_wire_max(j, pl) +
	                             (j->mode == MODE_NONSERIALIZED ? 0 : STEP_REPLY_SLACK))) !=
	    TFGB_EXIT_OK)
		goto out;
	rc = TFGB_EXIT_FAIL;
	if (!(grad = grad_alloc(t, &s, pl->max_bytes)) || marks_alloc(t, &b, np) < 0)
		goto out;
	if (collector && !one_launch) /* the servers of one launch sample themselves */
		launch_ps_announce(j, ops, NULL);
	if ((rc = launch_barrier(t, rk, workers, b.run_id, &b.cc)) != TFGB_EXIT_OK)
		goto out;
	b.zero_ns = now_ns();
	/* the launcher samples its workers; without it each samples itself */
	if ((rc = res_self_monitor(t, rk->index, &mon)) != TFGB_EXIT_OK)
		goto out;
	src = steps_run(t, &s, pl, grad, &b, &sr);
	monitor_stop(mon);
	rc = TFGB_EXIT_FAIL;
	if (src == -ENOMEM) {
		tfgb_error("%s: worker %d: out of memory", t->cmd, rk->index);
		goto out;
	}
	if (report_steps(t, &b, &sr, np, mon) < 0)
		goto out;
	if (collector)
		rc = collect_print(t, ops, b.cc, b.run_id, (uint32_t)workers, 0, NULL, NULL, &env,
		                   NULL, &one);
	else
		rc = src == 0 ? TFGB_EXIT_OK : TFGB_EXIT_FAIL;
	if (src < 0)
		say_failure(t, rk->index, &sr);
out:
	step_result_free(&sr);
	monitor_free(mon);
	free(b.marks);
	free(b.conn_end);
	ctrl_client_close(b.cc);
	session_close(&s); /* deregisters before the gradient goes */
	free(grad);
	if (collector && one_launch) /* the servers of the launch stop now */
		launch_end(j, one);
	return rc;
}

/* The job's checks of a training run: the plan fits the wire. */
static int train_check(struct tfgb *t, void *arg)
{
	struct err jerr;

	if (train_plan_fits(&t->job, arg, &jerr) < 0 || fault_fits(&t->job, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	return TFGB_EXIT_OK;
}

int cmd_train(struct tfgb *t)
{
	struct train_plan pl;
	struct run_roles r = {
		.check = train_check, .worker = run_worker, .arg = &pl,
		.launch = {.collect = collect_train, .run_ns = 86400ull * 1000000000ull},
	};
	int rc;

	if ((rc = load_plan(t, &pl)) != 0)
		return rc;
	if (t->list)
		rc = list_model(t, &pl);
	else if (train_conf_of(&t->job)->strategy == TRAIN_ALLREDUCE)
		rc = train_allreduce(t, &pl);
	else
		rc = run_roles(t, &r);
	train_plan_free(&pl);
	return rc;
}
