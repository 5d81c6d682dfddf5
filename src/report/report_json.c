/* report_json.c - the JSON form of a benchmark result (report.h says what
 * it holds): one document, or with --ndjson one compact line, "type":
 * "result" first. */
#include "report.h"

#include <math.h>
#include <stdlib.h>

#include "hist.h"
#include "json.h"
#include "netem.h"
#include "report_int.h"
#include "version.h"

/* "numa_node": the node the job bound a process to; null when unbound,
 * "unknown" when an older server did not say. */
static void node_json(struct json *w, int node)
{
	if (node >= 0)
		json_i64(w, "numa_node", node);
	else if (node == -1)
		json_null(w, "numa_node");
	else
		json_str(w, "numa_node", "unknown");
}

/* "processes": every process of a throughput run that measured itself,
 * workers (their reports) then PSs (their Info replies): role, index,
 * host, pid, the CPUs and memory policy it ran with, and a worker's own
 * resource use over its run. */
static void tput_processes_json(struct json *w, const struct report_tput *tp,
                                const struct report_alloc *ra)
{
	json_arr_begin(w, "processes");
	for (uint32_t i = 0; tp->worker_place && i < tp->workers; i++) {
		const struct wresult_res *u = &tp->worker_res[i];
		double span = (double)u->span_ns / 1e9, cpu = (double)(u->user_ns + u->sys_ns) / 1e9;
		if (!tp->worker_host || !tp->worker_host[i])
			continue; /* no report */
		json_obj_begin(w, NULL);
		json_str(w, "role", "worker");
		json_i64(w, "index", i);
		json_str(w, "host", tp->worker_host[i]);
		json_i64(w, "pid", tp->worker_pid[i]);
		json_str(w, "cpus", tp->worker_place[i].cpus);
		json_str(w, "mempolicy", tp->worker_place[i].mempolicy);
		node_json(w, tp->worker_place[i].numa_node);
		json_f64(w, "span_s", span, 3);
		json_f64(w, "user_s", (double)u->user_ns / 1e9, 3);
		json_f64(w, "sys_s", (double)u->sys_ns / 1e9, 3);
		if (span > 0)
			json_f64(w, "cpu_avg_pct", 100.0 * cpu / span, 1);
		else
			json_null(w, "cpu_avg_pct");
		json_u64(w, "rss_peak_bytes", u->rss_peak_bytes);
		json_u64(w, "vcsw", u->vcsw);
		json_u64(w, "ivcsw", u->ivcsw);
		json_obj_end(w);
	}
	for (uint32_t i = 0; ra && ra->ps && i < ra->nps; i++) {
		const struct srvinfo *s = &ra->ps[i];
		if (!s->pid)
			continue; /* not asked, or it could not tell */
		json_obj_begin(w, NULL);
		json_str(w, "role", "ps");
		json_i64(w, "index", i);
		json_str(w, "host", s->host);
		json_i64(w, "pid", s->pid);
		json_str(w, "cpus", s->place.cpus[0] ? s->place.cpus : "unknown");
		json_str(w, "mempolicy", s->place.mempolicy[0] ? s->place.mempolicy : "unknown");
		node_json(w, s->place.numa_node);
		json_obj_end(w);
	}
	json_arr_end(w);
}

void report_hosts_text(const struct report_host_res *hosts, size_t n, uint64_t calls,
                       uint64_t bytes, uint64_t moved, FILE *f)
{
	for (size_t h = 0; h < n; h++) {
		fprintf(f, "# resources of host %s, as its processes sampled themselves:\n",
		        hosts[h].host);
		monitor_text(hosts[h].mon, f, calls, bytes, moved);
	}
}

void report_hosts_json(const struct report_host_res *hosts, size_t n, uint64_t calls,
                       uint64_t bytes, uint64_t moved, struct json *w)
{
	json_obj_begin(w, "resources");
	json_str(w, "scope", "hosts");
	json_arr_begin(w, "hosts");
	for (size_t h = 0; h < n; h++) {
		json_obj_begin(w, NULL);
		json_str(w, "host", hosts[h].host);
		monitor_json_keys(hosts[h].mon, w, calls, bytes, moved);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}

/* A figure that is not known (no call measured, no window): JSON null,
 * never 0. */
static void num_json(struct json *w, const char *key, int known, double v, int digits)
{
	if (known)
		json_f64(w, key, v, digits);
	else
		json_null(w, key);
}

/* The latencies of s as an object, or null when s has none. */
static void lat_json(struct json *w, const char *name, const struct stats *s)
{
	struct lat_us u;
	const struct lat_us *l = &u;

	if (!s->count) {
		json_null(w, name);
		return;
	}
	report_lat_us(s, &u);
	json_obj_begin(w, name);
	json_f64(w, "min", l->min, 3);
	json_f64(w, "avg", l->avg, 3);
	json_f64(w, "p50", l->p50, 3);
	json_f64(w, "p90", l->p90, 3);
	json_f64(w, "p99", l->p99, 3);
	json_f64(w, "p999", l->p999, 3);
	json_f64(w, "max", l->max, 3);
	json_f64(w, "stddev", l->sd, 3);
	json_obj_end(w);
}

static void pct_json(const struct report *r, struct json *w)
{
	struct report_pct p[OPT_PCT_MAX];
	int n = report_pcts(r, p);

	json_obj_begin(w, "percentiles_us");
	for (int i = 0; i < n; i++) {
		if (p[i].known)
			json_f64(w, p[i].name, p[i].us, 3);
		else
			json_null(w, p[i].name);
	}
	json_obj_end(w);
	hist_json(w, "histogram", &r->res->lat);
}

static void alloc_json_one(struct json *w, const struct alloc_info *a, const char *why)
{
	json_obj_begin(w, NULL);
	if (a->name[0]) {
		json_str(w, "name", a->name);
		if (a->version[0])
			json_str(w, "version", a->version);
		else
			json_null(w, "version");
	} else {
		json_null(w, "name");
		json_str(w, "why", why && *why ? why : "not known");
	}
	json_obj_end(w);
}

static void alloc_json(struct json *w, const struct report_alloc *a)
{
	json_obj_begin(w, "allocators");
	json_arr_begin(w, "workers");
	for (uint32_t i = 0; i < a->nworkers; i++)
		alloc_json_one(w, &a->worker[i], "no report");
	json_arr_end(w);
	json_arr_begin(w, "ps");
	for (uint32_t i = 0; i < a->nps; i++)
		alloc_json_one(w, &a->ps[i].alloc, a->ps[i].why);
	json_arr_end(w);
	json_obj_end(w);
}

/* The run: versions, what was benchmarked over what, the payload. */
/* report_print_json's blocks, in the order of the result: each writes its
 * keys to w. */

static void head_json(const struct report *r, struct json *w)
{
	const struct job *j = r->job;
	const struct payload *p = r->payload;
	char hp[300];

	json_u64(w, "schema_version", REPORT_SCHEMA_VERSION);
	json_obj_begin(w, "tfgb");
	json_str(w, "version", TFGB_VERSION);
	json_str(w, "transport_version", r->transport_version);
	json_obj_end(w);
	json_str(w, "benchmark", r->command);
	json_str(w, "title", r->benchmark);
	json_str(w, "transport", job_transport_name(j->transport));
	json_bool(w, "tls", j->tls.ca != NULL); /* the worker's calls; never key material */
	json_str(w, "mode", job_mode_name(j->mode));
	json_arr_begin(w, "ps");
	for (int i = 0; i < r->nps; i++) {
		opt_format_hostport(&r->ps[i], hp, sizeof hp);
		json_str(w, NULL, hp);
	}
	json_arr_end(w);
	json_obj_begin(w, "payload");
	/* train: the payload of one step, every transferred variable */
	json_str(w, "scheme", r->train ? "model" : job_scheme_name(j->scheme));
	payload_json(w, p);
	json_arr_begin(w, "sizes");
	for (size_t i = 0; i < p->n; i++)
		json_u64(w, NULL, p->buf[i].len);
	json_arr_end(w);
	json_obj_end(w);
}

/* The calls of the run and their figures. */
static void calls_json(const struct report *r, const struct figures *g, struct json *w)
{
	const struct engine_result *res = r->res;

	json_i64(w, "inflight", r->inflight);
	json_f64(w, "warmup_s", (double)res->warmup_ns / 1e9, 6); /* as run */
	json_f64(w, "duration_s", (double)res->window_ns / 1e9, 6);
	json_u64(w, "warmup_calls", res->warmup_calls);
	json_u64(w, "calls", res->calls);
	json_u64(w, "errors", res->errors);
	if (g->has_lat)
		lat_json(w, "latency_us", &res->lat);
	else
		json_null(w, "latency_us"); /* no figure: null, never 0 */
	num_json(w, "rpc_per_s", g->has_rate, g->rps, 2);
	num_json(w, "MBps", g->has_rate, g->mbps, 3);
	num_json(w, "MiBps", g->has_rate, g->mibps, 3);
	/* Gbps: for comparing with link rates */
	num_json(w, "Gbps", g->has_rate, g->mbps * 8 / 1e3, 4);
	pct_json(r, w);
	if (report_repeated(r))
		report_rep_json(r, w);
	if (r->interval_ns && !r->ndjson)
		report_ivl_json(r, w);
}

/* What encoding and decoding cost, in the serialized modes. */
static void ser_json(const struct report *r, const struct figures *g, struct json *w)
{
	const struct job *j = r->job;

	json_obj_begin(w, "serialization");
	json_str(w, "dtype", job_dtype_name(j->dtype));
	if (g->sampled) {
		json_f64(w, "encode_us", g->enc_us, 3);
		json_f64(w, "decode_us", g->dec_us, 3);
	} else {
		json_null(w, "encode_us");
		json_null(w, "decode_us");
	}
	json_u64(w, "sampled_calls", g->sampled);
	json_u64(w, "sample_first", ENGINE_SAMPLE_FIRST);
	json_u64(w, "sample_every", ENGINE_SAMPLE);
	json_obj_end(w);
}

/* Each worker's calls, rate, status, host and pid. */
static void tput_workers_json(const struct report_tput *tp, struct json *w)
{
	json_arr_begin(w, "per_worker_rpc_per_s");
	for (uint32_t i = 0; i < tp->workers; i++) {
		if (tp->per_worker[i])
			json_f64(w, NULL, tp->worker_rps[i], 2);
		else
			json_null(w, NULL); /* empty or missing: no rate */
	}
	json_arr_end(w);
	/* each worker: ok, empty (reported, no call in its window), missing */
	json_arr_begin(w, "per_worker_status");
	for (uint32_t i = 0; i < tp->workers; i++)
		json_str(w, NULL, tp->worker_host && !tp->worker_host[i] ? "missing" :
		         tp->per_worker[i] ? "ok" : "empty");
	json_arr_end(w);
	/* where every worker ran: a result names each process's host */
	json_arr_begin(w, "per_worker_host");
	for (uint32_t i = 0; i < tp->workers; i++) {
		if (tp->worker_host && tp->worker_host[i])
			json_str(w, NULL, tp->worker_host[i]);
		else
			json_null(w, NULL);
	}
	json_arr_end(w);
	json_arr_begin(w, "per_worker_pid");
	for (uint32_t i = 0; i < tp->workers; i++) {
		if (tp->worker_host && tp->worker_host[i])
			json_i64(w, NULL, tp->worker_pid[i]);
		else
			json_null(w, NULL);
	}
	json_arr_end(w);
}

/* The process whose loss ended the run early. */
static void lost_json(const struct report_tput *tp, struct json *w)
{
	json_obj_begin(w, "lost");
	json_str(w, "role", tp->lost->role);
	json_i64(w, "index", tp->lost->index);
	if (tp->lost->pid > 0)
		json_i64(w, "pid", tp->lost->pid);
	else
		json_null(w, "pid"); /* not known */
	json_str(w, "host", tp->lost->host);
	json_str(w, "end", tp->lost->how);
	json_obj_end(w);
}

static void tput_json(const struct report *r, const struct figures *g, struct json *w)
{
	const struct job *j = r->job;
	const struct engine_result *res = r->res;
	const struct report_tput *tp = r->tput;
	double lo, hi;

	json_obj_begin(w, "throughput");
	json_str(w, "rpc", r->train ? "pull, push" : job_rpc_name(j->rpc));
	json_u64(w, "workers", tp->workers);
	json_u64(w, "reported", tp->reported);
	json_u64(w, "ps_count", tp->nps);
	num_json(w, "rpc_per_s", g->has_rate, tp->rps, 2);
	num_json(w, "MBps", g->has_rate, tp->bytes_per_s / 1e6, 3);
	json_arr_begin(w, "per_ps");
	for (uint32_t i = 0; i < tp->nps; i++)
		json_u64(w, NULL, tp->per_ps[i]);
	json_arr_end(w);
	json_arr_begin(w, "per_worker");
	for (uint32_t i = 0; i < tp->workers; i++)
		json_u64(w, NULL, tp->per_worker[i]);
	json_arr_end(w);
	tput_workers_json(tp, w);
	tput_processes_json(w, tp, r->alloc);
	report_worker_span(tp, &lo, &hi);
	num_json(w, "worker_rpc_per_s_min", !isnan(lo), lo, 2);
	num_json(w, "worker_rpc_per_s_max", !isnan(hi), hi, 2);
	if (tp->offered_rps > 0) {
		json_str(w, "arrival", job_arrival_name(j->arrival));
		json_f64(w, "offered_rpc_per_s", tp->offered_rps, 2);
		json_u64(w, "offered_calls", res->offered);
		json_u64(w, "missed_calls", res->missed);
		json_bool(w, "saturated",
		          engine_saturated(res->calls, res->offered, res->missed));
		json_u64(w, "saturation_tolerance_pct", ENGINE_SAT_TOL_PCT);
		lat_json(w, "service_time_us", &res->svc);
	}
	json_bool(w, "incomplete", tp->incomplete);
	if (tp->note)
		json_str(w, "note", tp->note);
	if (tp->lost)
		lost_json(tp, w);
	json_obj_end(w);
}

/* How the run ended, where it ran, and its job (text without secrets). */
static void tail_json(const struct report *r, const char *text, struct json *w)
{
	const struct job *j = r->job;
	const struct engine_result *res = r->res;
	const struct opt_def *sec[JOB_MAX_KEYS];
	int nsec;

	if (r->train) {
		report_train_json(r->train, w);
		report_fault_json(w, j);
	}
	json_str(w, "status", report_status(r));
	json_bool(w, "interrupted", report_interrupted(r));
	if (res->end == ENGINE_FAILED)
		json_str(w, "error", res->err.msg);
	else
		json_null(w, "error");
	if (r->alloc)
		alloc_json(w, r->alloc);
	if (r->env)
		sysinfo_json(w, "environment", r->env, text);
	if (r->mon)
		monitor_json(r->mon, w, "resources", r->mon_calls, r->mon_bytes, r->mon_moved);
	else if (r->nhosts)
		report_hosts_json(r->hosts, r->nhosts, r->mon_calls, r->mon_bytes, r->mon_moved, w);
	report_ps_json(r, w);
	report_tc_all_json(r, w);
	netem_json(w);
	json_str(w, "job", text);
	/* the secret keys set but left out of "job", for tfgb rerun to say so */
	if ((nsec = job_secrets_set(j, sec, JOB_MAX_KEYS)) > 0) {
		json_arr_begin(w, "job_withheld");
		for (int i = 0; i < nsec && i < JOB_MAX_KEYS; i++) {
			char name[64];
			snprintf(name, sizeof name, "%s.%s", sec[i]->section, sec[i]->name);
			json_str(w, NULL, name);
		}
		json_arr_end(w);
	}
}

int report_print_json(const struct report *r, const struct figures *g, FILE *f)
{
	char *text = job_ini_public(r->job); /* what a result keeps: no secrets */
	struct json w;

	if (!text)
		return -1;
	json_init(&w, f, !r->ndjson);
	json_obj_begin(&w, NULL);
	if (r->ndjson)
		json_str(&w, "type", "result");
	head_json(r, &w);
	calls_json(r, g, &w);
	if (g->ser)
		ser_json(r, g, &w);
	if (r->tput)
		tput_json(r, g, &w);
	tail_json(r, text, &w);
	json_obj_end(&w);
	json_finish(&w);
	free(text);
	return 0;
}
