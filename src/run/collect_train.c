/* collect_train.c - the collector of a training run (collect_train.h). */
#include "collect_train.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
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
}

int train_agg_init(struct train_agg *a, uint32_t workers, const struct train_plan *p)
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
	stats_init(&a->pull);
	for (uint32_t i = 0; a->wstep && i < workers; i++)
		stats_init(&a->wstep[i]);
	return a->sent && a->recv && a->calls && a->barriers && a->last_in && a->injected_ns &&
	       a->wstep ? 0 : -ENOMEM;
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
	return 0;
}

int train_collect(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                  int partial, const char *note, const struct report_lost *lost,
                  struct train_agg *a, char *why, size_t len)
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
	return 0;
}
