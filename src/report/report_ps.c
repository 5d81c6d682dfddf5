/* report_ps.c - the servers' own figures (srvinfo.h): what a server that
 * samples itself used over the run's window, as it measured it on its own
 * clock, in the report's text and JSON forms.  A server that served more
 * than one run in the window is flagged shared: its figures are not the
 * run's own. */
#include "report.h"

#include <string.h>

#include "json.h"
#include "monitor.h"
#include "srvinfo.h"

/* PS i was asked for its own figures (it answered with them or said why). */
static int asked(const struct srvinfo *s)
{
	return s->pid && (s->mon || s->res_why[0]);
}

/* The first PS before i that is the same process (a server of several
 * PS addresses answers for each), or -1. */
static int same_as(const struct report_alloc *ra, uint32_t i)
{
	for (uint32_t k = 0; k < i; k++)
		if (ra->ps[k].mon && ra->ps[k].pid == ra->ps[i].pid &&
		    !strcmp(ra->ps[k].host, ra->ps[i].host))
			return (int)k;
	return -1;
}

int report_ps_has(const struct report *r)
{
	for (uint32_t i = 0; r->alloc && r->alloc->ps && i < r->alloc->nps; i++)
		if (asked(&r->alloc->ps[i]))
			return 1;
	return 0;
}

/* The calls a PS's own figures are divided by: the run's, when it is the
 * run's only PS and no other run used it in its window (the window is the
 * run's); 0 otherwise (the per-call figures are null: which of the calls
 * it served in its window is not known). */
static uint64_t ps_calls(const struct report *r, const struct srvinfo *s)
{
	return r->alloc->nps == 1 && s->runs == 1 ? r->mon_calls : 0;
}

void report_ps_json(const struct report *r, struct json *w)
{
	const struct report_alloc *ra = r->alloc;

	if (!report_ps_has(r))
		return;
	json_arr_begin(w, "ps_resources");
	for (uint32_t i = 0; i < ra->nps; i++) {
		const struct srvinfo *s = &ra->ps[i];
		int same = same_as(ra, i);
		if (!asked(s))
			continue;
		json_obj_begin(w, NULL);
		json_i64(w, "index", i);
		json_str(w, "host", s->host);
		json_i64(w, "pid", s->pid);
		json_bool(w, "samples_itself", s->self);
		json_f64(w, "window_s", (double)s->window_ns / 1e9, 3);
		json_u64(w, "runs", s->runs);
		json_bool(w, "shared", s->runs > 1);
		if (same >= 0) {
			json_i64(w, "same_process_as", same);
		} else if (s->mon) {
			/* per-call figures: see ps_calls */
			monitor_json_keys(s->mon, w, ps_calls(r, s), 0, 0);
		} else {
			json_str(w, "why", s->res_why);
		}
		json_obj_end(w);
	}
	json_arr_end(w);
}

void report_ps_text(const struct report *r, FILE *f)
{
	const struct report_alloc *ra = r->alloc;

	for (uint32_t i = 0; report_ps_has(r) && i < ra->nps; i++) {
		const struct srvinfo *s = &ra->ps[i];
		int same = same_as(ra, i);
		if (!asked(s))
			continue;
		if (same >= 0) {
			fprintf(f, "# PS %u (pid %lld on %s): the process of PS %d\n", i,
			        (long long)s->pid, s->host, same);
		} else if (!s->mon) {
			fprintf(f, "# PS %u (pid %lld on %s): no figures of its own: %s\n", i,
			        (long long)s->pid, s->host, s->res_why);
		} else {
			fprintf(f, "# PS %u (pid %lld on %s), as it sampled itself over the run's "
			        "%.3fs%s:\n", i, (long long)s->pid, s->host, (double)s->window_ns / 1e9,
			        s->runs > 1 ? "; SHARED with other runs in that time, not this run's "
			        "own" : "");
			if (s->runs > 1)
				fprintf(f, "#   %u runs used this server in the window\n", s->runs);
			monitor_text(s->mon, f, ps_calls(r, s), 0, 0);
		}
	}
}
