/* cmd_latency.c - `tfgb latency` and `tfgb bandwidth`: one worker, one PS.
 *
 * TF-gRPC-P2P-Latency: Echo with one call outstanding.
 * TF-gRPC-P2P-Bandwidth: Ack with [job] inflight calls outstanding; bytes
 * count only once the PS acknowledged exactly the bytes sent.
 * In the serialized modes ([job] mode) they are EchoTensor and AckTensor,
 * the payload carried as a TensorBundle (the engine and codec.h).
 */
#include "tfgb.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "engine.h"
#include "limit.h"
#include "monitor.h"
#include "payload.h"
#include "place.h"
#include "report.h"
#include "sysinfo.h"
#include "transport.h"
#include "util.h"

static int run_p2p(struct tfgb *t, int method, const char *title)
{
	const struct job *j = &t->job;
	const struct tr_ops *ops;
	struct cluster_child child = {.pid = 0, .ready_fd = -1};
	struct engine_result res = {0};
	struct engine_cfg cfg;
	struct payload p = {0};
	struct tr_client *client = NULL;
	struct tr_conn *conn = NULL;
	struct opt_hostport addr, probe;
	struct tr_err terr = {{0}};
	struct job_err jerr;
	char err[CLUSTER_ERR_MAX];
	struct sysinfo_env env;
	struct monitor *mon = NULL;
	struct report_ivl ivl = {.f = NULL, .format = j->format, .worker = 0};
	struct report_run *runs = NULL;
	struct srvinfo psinfo;
	struct report_alloc ra = {.nworkers = 1, .nps = 1, .worker = &env.alloc, .ps = &psinfo};
	void *trctx = NULL;
	int rc = TFGB_EXIT_FAIL, erc, mrc;

	sysinfo_collect(&env); /* the start time is the run's */

	if (limit_check_wire(j, &jerr) < 0 || limit_check_host(j, LIMIT_WORKER, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	ops = tr_find(j->transport, &terr);
	if (!ops || tr_probe(ops, j, &terr) < 0) {
		tfgb_error("%s: %s", t->cmd, terr.msg);
		return TFGB_EXIT_FAIL;
	}
	tfgb_catch_signals();
	cluster_ps_addr(j, 0, &addr);

	/* a local PS that nobody serves yet: start one (before any transport
	 * thread exists, so the fork is safe) */
	probe = addr; /* where a server of this transport listens */
	probe.port = (uint16_t)(addr.port + ops->port_offset);
	if (cluster_host_is_local(addr.host) == 1 && !cluster_tcp_probe(&probe, 200)) {
		if (place_check(j, PLACE_PS | PLACE_WORKER, PLACE_NODE_DIR, &jerr) < 0) {
			tfgb_error("%s", jerr.msg);
			rc = TFGB_EXIT_USAGE;
			goto out_child;
		}
		if (cluster_spawn_serve(j, 0, CLUSTER_NO_CONTROL, &child, err, sizeof err) < 0 ||
		    cluster_wait_ready(&child, now_ns() + j->timeout_ns, &tfgb_stop, err,
		                       sizeof err) < 0) {
			tfgb_error("%s: %s", t->cmd, err);
			goto out_child;
		}
		if (t->verbose)
			fprintf(stderr, "tfgb: %s: started PS 0 (pid %d) on %s:%u\n", t->cmd,
			        (int)child.pid, addr.host, addr.port);
	}
	/* this process is the worker; placed after the PS started (it places
	 * itself), before the payload exists (its pages come from the node) */
	if (place_check(j, PLACE_WORKER, PLACE_NODE_DIR, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		rc = TFGB_EXIT_USAGE;
		goto out_child;
	}
	if (place_apply(j, PLACE_WORKER, err, sizeof err) < 0) {
		tfgb_error("%s: worker 0: %s", t->cmd, err);
		goto out_child;
	}

	if (payload_layout(j, &p) < 0 || payload_alloc(&p) < 0) {
		tfgb_error("%s: out of memory for a %llu-byte payload", t->cmd,
		           (unsigned long long)p.total);
		goto out_payload;
	}
	if (ops->init(j, &trctx, &terr) < 0) {
		tfgb_error("%s: %s", t->cmd, terr.msg);
		goto out_payload;
	}
	if (ops->client_open(trctx, j, &client, &terr) < 0) {
		tfgb_error("%s: %s", t->cmd, terr.msg);
		goto out_tr;
	}
	if (ops->reg_mem && (erc = ops->reg_mem(client, p.mem, p.mem_len)) < 0) {
		tfgb_error("%s: cannot register the %zu-byte payload for %s: %s", t->cmd, p.mem_len,
		           ops->name, strerror(-erc));
		goto out_client;
	}
	if (ops->connect(client, &addr, now_ns() + j->timeout_ns, &conn, &terr) < 0) {
		tfgb_error("%s: worker 0 on this host: %s", t->cmd, terr.msg);
		goto out_client;
	}
	/* the PS's malloc for the result: one untimed call on its own connection */
	srvinfo_query(ops, trctx, j, &addr, now_ns() + j->timeout_ns, &psinfo);

	cfg = (struct engine_cfg){
		.ops = ops, .client = client, .conns = &conn, .nconns = 1, .method = method,
		.mode = j->mode, .dtype = j->dtype,
		.payload = &p, .inflight = method == TR_ECHO ? 1 : (int)j->inflight,
		.warmup_ns = j->warmup_ns, .duration_ns = j->duration_ns,
		.iterations = (uint64_t)j->iterations, .timeout_ns = j->timeout_ns,
		.verify_all = j->verify, .stop = &tfgb_stop,
		.progress = !t->quiet && isatty(STDERR_FILENO), .label = t->cmd,
		.repeat = (int)j->repeat, .interval_ns = t->interval_ns,
		.on_interval = report_interval, .interval_arg = &ivl,
	};
	if (t->interval_ns && j->format == FMT_JSON && !t->ndjson) {
		/* kept for the result's "intervals": one JSON document per run */
		if (report_ivl_keep(&ivl, REPORT_IVL_MAX) < 0) {
			tfgb_error("%s: out of memory", t->cmd);
			goto out_client;
		}
	} else if (t->interval_ns) {
		/* interval lines go to the report stream, ahead of the report */
		if (!(ivl.f = tfgb_out(t)))
			goto out_client;
		report_interval_header(ivl.f, j->format);
	}
	if (j->monitor_ns) {
		/* this process is the worker; the PS is watched when it is our child */
		struct monitor_target mt[2] = {{"worker", 0, getpid()}, {"ps", 0, child.pid}};
		mrc = monitor_new(&mon, mt, child.pid > 0 ? 2 : 1, j->monitor_ns, 0);
		if (mrc == 0) /* the run's own bytes: those of the connection to the PS */
			mrc = monitor_ports(mon, &probe.port, 1);
		if (mrc == 0) {
			monitor_select(mon, job_monitor_mask(j));
			mrc = monitor_start(mon);
		}
		if (mrc < 0) {
			tfgb_error("%s: cannot start the resource monitor: %s", t->cmd, strerror(-mrc));
			goto out_client;
		}
	}
	erc = engine_run(&cfg, &res);
	monitor_stop(mon);
	if (erc == -ENOMEM) {
		tfgb_error("%s: out of memory", t->cmd);
		goto out_client;
	}
	if (j->repeat > 1 && res.nruns > 0 && (runs = calloc(res.nruns, sizeof *runs)))
		for (uint32_t k = 0; k < res.nruns; k++)
			report_run_of(&res.runs[k], &runs[k]);
	{
		uint64_t seen = res.calls + res.warmup_calls; /* every call the monitor saw */
		struct report r = {.benchmark = title, .command = t->cmd, .job = j, .payload = &p,
		                   .transport_version = ops->version(), .res = &res, .ps = &addr,
		                   .nps = 1, .inflight = cfg.inflight, .env = &env, .alloc = &ra,
		                   .mon = mon,
		                   .mon_calls = seen, .mon_bytes = seen * p.total,
		                   .mon_moved = seen * p.total * (method == TR_ECHO ? 2 : 1),
		                   .runs = runs, .nruns = runs ? res.nruns : 0,
		                   .ndjson = t->ndjson, .interval_ns = t->interval_ns,
		                   .ivl = ivl.fig, .nivl = ivl.n, .ivl_dropped = ivl.dropped};
		FILE *out = tfgb_out(t);
		if (out && report_print(&r, out) < 0)
			tfgb_error("%s: out of memory writing the report", t->cmd);
		if (!out)
			erc = 2; /* tfgb_out said why */
		if (out && mon && *j->series && (mrc = monitor_csv_file(mon, j->series)) < 0) {
			tfgb_error("%s: cannot write the resource series to '%s': %s", t->cmd, j->series,
			           strerror(-mrc));
			erc = 2;
		}
		if (out && *j->hgrm && (mrc = report_hgrm_file(&r, j->hgrm)) < 0) {
			tfgb_error("%s: cannot write the latency distribution to '%s': %s", t->cmd,
			           j->hgrm, strerror(-mrc));
			erc = 2;
		}
	}
	if (erc == 0 && report_empty(&res))
		tfgb_error("%s: empty: no call completed in the %.3fs window; set a longer "
		           "job.duration", t->cmd, (double)res.window_ns / 1e9);
	else if (erc == 0)
		rc = TFGB_EXIT_OK;
	else if (erc == 1)
		tfgb_error("%s: interrupted; the partial result is marked as such", t->cmd);
	else if (erc < 0)
		tfgb_error("%s: worker 0 calling PS 0 at %s:%u: %s", t->cmd, addr.host, addr.port,
		           res.err);
	engine_result_free(&res);
	free(runs);
out_client:
	report_ivl_free(&ivl);
	monitor_free(mon);
	ops->client_close(client);
out_tr:
	ops->fini(trctx);
out_payload:
	payload_free(&p);
out_child:
	cluster_stop(&child, 5000);
	return rc;
}

int cmd_latency(struct tfgb *t)
{
	return run_p2p(t, TR_ECHO, "TF-gRPC-P2P-Latency");
}

int cmd_bandwidth(struct tfgb *t)
{
	return run_p2p(t, TR_ACK, "TF-gRPC-P2P-Bandwidth");
}
