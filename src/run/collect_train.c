/* collect_train.c - the collector of a training run (collect_train.h). */
#include "collect_train.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_trace.h"
#include "wresult.h"

void train_agg_free(struct train_agg *a)
{
	launch_agg_free(&a->c);
	free(a->sent);
	free(a->recv);
	free(a->calls);
	free(a->barriers);
	free(a->last_in);
	free(a->injected_ns);
	free(a->wstep);
	for (uint32_t w = 0; a->marks && w < a->c.workers; w++) {
		free(a->marks[w].m);
		free(a->marks[w].ends);
	}
	free(a->marks);
}

int train_agg_init(struct train_agg *a, uint32_t workers, const struct train_plan *p,
                   int timeline)
{
	uint32_t nps = (uint32_t)p->nps;

	memset(a, 0, sizeof *a);
	if (launch_agg_init(&a->c, workers, nps) < 0)
		return -ENOMEM;
	a->ps_vars = p->ps_vars;
	a->sent = calloc(nps, sizeof *a->sent);
	a->recv = calloc(nps, sizeof *a->recv);
	a->calls = calloc(nps, sizeof *a->calls);
	a->barriers = calloc(workers, sizeof *a->barriers);
	a->last_in = calloc(workers, sizeof *a->last_in);
	a->injected_ns = calloc(workers, sizeof *a->injected_ns);
	a->wstep = calloc(workers, sizeof *a->wstep);
	if (timeline && !(a->marks = calloc(workers, sizeof *a->marks)))
		return -ENOMEM;
	stats_init(&a->pull);
	for (uint32_t i = 0; a->wstep && i < workers; i++)
		stats_init(&a->wstep[i]);
	return a->sent && a->recv && a->calls && a->barriers && a->last_in && a->injected_ns &&
	       a->wstep ? 0 : -ENOMEM;
}

/* A worker's timeline, copied out of its report: 0, or -ENOMEM. */
static int keep_marks(struct train_marks *k, const struct wresult *w)
{
	size_t ends = 2 * (size_t)w->nmarks * w->mark_conns;

	free(k->m);
	free(k->ends);
	*k = (struct train_marks){.zero_ns = w->zero_ns, .dropped = w->marks_dropped,
	                          .n = w->nmarks, .conns = w->mark_conns};
	snprintf(k->host, sizeof k->host, "%s", w->host);
	if (!(k->m = malloc(w->nmarks * sizeof *k->m)) ||
	    !(k->ends = malloc((ends ? ends : 1) * sizeof *k->ends)))
		return -ENOMEM;
	memcpy(k->m, w->marks, w->nmarks * sizeof *k->m);
	memcpy(k->ends, w->conn_end, ends * sizeof *k->ends);
	return 0;
}

static int tagg_add(void *arg, uint32_t worker, const void *blob, size_t len)
{
	struct train_agg *a = arg;
	const struct wresult *w = launch_agg_add(&a->c, worker, blob, len, 1);

	if (!w)
		return 0;
	for (uint32_t i = 0; i < a->c.nps; i++) {
		a->sent[i] += w->ps_sent[i];
		a->recv[i] += w->ps_recv[i];
		a->calls[i] += 2 * a->ps_vars[i] * w->calls; /* a step completes every transfer */
	}
	a->barriers[worker] = w->barriers;
	a->barrier_wait_ns += w->barrier_wait_ns;
	a->last_in[worker] = w->last_in;
	a->injected_ns[worker] = w->injected_ns;
	if (w->closing > a->closing)
		a->closing = w->closing;
	a->wstep[worker] = w->lat;
	stats_merge(&a->pull, &w->svc);
	return a->marks && w->nmarks ? keep_marks(&a->marks[worker], w) : 0;
}

int train_collect(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                  int partial, const char *note, const struct report_lost *lost,
                  const struct monitor *mon, int *one_launch, struct train_agg *a, char *why,
                  size_t len)
{
	struct err err;

	if (launch_collect(t, cc, run_id, workers, partial, tagg_add, a, &err) < 0) {
		tfgb_error("%s: %s%scollecting results: %s", t->cmd, note ? note : "",
		           note ? "; no results: " : "", err.msg);
		return -1;
	}
	why[0] = 0;
	note = launch_note(note, !lost && a->c.reported == workers && !a->c.failed &&
	                   !a->c.bad_blobs);
	if (lost) /* the figures are the survivors' */
		snprintf(why, len, "partial: %s %d (pid %d on %s) died: %s", lost->role,
		         lost->index, lost->pid, lost->host, lost->how);
	else if (note)
		snprintf(why, len, "%s", note);
	else if (a->c.reported < workers)
		snprintf(why, len, "%u of %u workers reported", a->c.reported, workers);
	else if (a->c.failed)
		snprintf(why, len, "%s", a->c.first_err.msg);
	else if (a->c.bad_blobs)
		snprintf(why, len, "%d malformed reports were ignored", a->c.bad_blobs);
	a->c.sum.window_ns = a->c.reported ? a->c.window_total / a->c.reported : 0;
	if (one_launch && *one_launch == LAUNCH_ONE)
		*one_launch = launch_agg_servers(t, &a->c, lost && !strcmp(lost->role, "ps"));
	if (!mon)
		res_agg_hosts(&a->c.res);
	return 0;
}

/* One worker's spans: thread 0 its barriers, steps and compute (a fault's
 * delay), thread 1 + c its pulls from and pushes to PS c. */
static void marks_trace(struct report_trace *t, uint32_t w, const struct train_marks *k,
                        uint64_t zero)
{
	char name[32];

	report_trace_thread(t, (int)w, 0, "steps");
	for (uint32_t c = 0; c < k->conns; c++) {
		snprintf(name, sizeof name, "PS %u", c);
		report_trace_thread(t, (int)w, (int)c + 1, name);
	}
	for (uint32_t i = 0; i < k->n; i++) {
		const struct step_mark *m = &k->m[i];
		const uint64_t *pull = k->ends + 2 * (size_t)i * k->conns, *push = pull + k->conns;

		if (m->bar < m->start)
			report_trace_span(t, (int)w, "barrier", i, m->bar - zero, m->start - m->bar);
		report_trace_span(t, (int)w, "step", i, m->start - zero, m->end - m->start);
		if (m->pulled < m->computed)
			report_trace_span(t, (int)w, "compute", i, m->pulled - zero,
			                  m->computed - m->pulled);
		for (uint32_t c = 0; c < k->conns; c++) {
			if (pull[c])
				report_trace_span_on(t, (int)w, (int)c + 1, "pull", i, m->start - zero,
				                     pull[c] - m->start);
			if (push[c])
				report_trace_span_on(t, (int)w, (int)c + 1, "push", i, m->computed - zero,
				                     push[c] - m->computed);
		}
	}
}

int train_timeline(const struct train_agg *a, const char *path)
{
	uint32_t n = a->c.workers;
	uint64_t zero = UINT64_MAX, dropped = 0;
	int shared = 1, rc;
	const char *host = NULL;
	char what[160];
	struct report_trace t;

	for (uint32_t w = 0; w < n; w++) {
		const struct train_marks *k = &a->marks[w];
		if (!k->n)
			continue;
		shared &= !host || strcmp(host, k->host) == 0;
		host = host ? host : k->host;
		zero = k->zero_ns < zero ? k->zero_ns : zero;
		dropped += k->dropped;
	}
	if (dropped)
		snprintf(what, sizeof what, "tfgb train, parameter server: %" PRIu64 " measured "
		         "steps left out (past what a worker's report holds)", dropped);
	else
		snprintf(what, sizeof what, "tfgb train, parameter server");
	rc = report_trace_open(&t, path, (int)n, "worker", what, shared
	                       ? "the workers' host's CLOCK_MONOTONIC, from the first release "
	                         "by the run's first barrier"
	                       : "each worker's CLOCK_MONOTONIC, from its release by the run's "
	                         "first barrier (other hosts: apart by that barrier's replies' "
	                         "spread, not measured)",
	                       shared ? 0 : UINT64_MAX, 0);
	if (rc < 0)
		return rc;
	t.capped = "a worker's measured steps, at most (fewer when its report has less room)";
	t.cap = RESULT_MARKS_MAX;
	t.dropped = dropped;
	for (uint32_t w = 0; w < n; w++)
		if (a->marks[w].n)
			marks_trace(&t, w, &a->marks[w], shared ? zero : a->marks[w].zero_ns);
	return report_trace_close(&t);
}
