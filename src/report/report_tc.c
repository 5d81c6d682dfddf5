/* report_tc.c - the transport's own counters of a run's connections
 * (struct tr_counters: for gRPC, channelz's HTTP/2 streams and messages
 * on each socket), per call, in the report's text and JSON forms: the
 * counts that show how two settings differ, beside the times.  A figure
 * the transport does not know is null (JSON) or "unknown" (text), with
 * the transport's reason, never 0. */
#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

/* The JSON names of the counts, by enum tr_cnt (the windows are values at
 * the end, not counts: no per-call figure). */
static const char *const cnt_names[TR_CNT_N] = {
	[TR_CNT_STREAMS_STARTED] = "streams_started",
	[TR_CNT_STREAMS_SUCCEEDED] = "streams_succeeded",
	[TR_CNT_STREAMS_FAILED] = "streams_failed",
	[TR_CNT_MSGS_SENT] = "messages_sent",
	[TR_CNT_MSGS_RECV] = "messages_received",
	[TR_CNT_KEEPALIVES] = "keepalives_sent",
	[TR_CNT_LOCAL_WINDOW] = "local_window_bytes",
	[TR_CNT_REMOTE_WINDOW] = "remote_window_bytes",
};

/* what an engine result that never read them holds (all zero) means */
static const struct tr_counters not_read = {.why = "not read for this benchmark"};

static int is_window(int k)
{
	return k == TR_CNT_LOCAL_WINDOW || k == TR_CNT_REMOTE_WINDOW;
}

int report_tc_known(const struct tr_counters *tc, int k)
{
	return (tc->known >> k) & 1u;
}

void report_tc_json(struct json *w, const char *key, const char *role,
                    const struct tr_counters *tc)
{
	char name[64];

	if (!tc->known && !tc->why[0] && !tc->source[0])
		tc = &not_read;
	json_obj_begin(w, key);
	json_str(w, "role", role);
	if (tc->source[0])
		json_str(w, "source", tc->source);
	else
		json_null(w, "source");
	json_u64(w, "connections", tc->sockets);
	if (tc->calls)
		json_u64(w, "calls", tc->calls);
	else
		json_null(w, "calls");
	for (int k = 0; k < TR_CNT_N; k++) {
		if (report_tc_known(tc, k))
			json_u64(w, cnt_names[k], tc->v[k]);
		else
			json_null(w, cnt_names[k]);
		if (is_window(k))
			continue;
		snprintf(name, sizeof name, "%s_per_rpc", cnt_names[k]);
		if (report_tc_known(tc, k) && tc->calls)
			json_f64(w, name, (double)tc->v[k] / (double)tc->calls, 3);
		else
			json_null(w, name);
	}
	if (tc->why[0])
		json_str(w, "why", tc->why);
	else
		json_null(w, "why");
	json_obj_end(w);
}

/* "PRE1.000 name" per call (calls known), "PRE17 name" in all (calls not
 * known), or "PREname unknown". */
static void figure(FILE *f, const struct tr_counters *tc, int k, const char *pre,
                   const char *name)
{
	if (!report_tc_known(tc, k))
		fprintf(f, "%s%s unknown", pre, name);
	else if (tc->calls)
		fprintf(f, "%s%.3f %s", pre, (double)tc->v[k] / (double)tc->calls, name);
	else
		fprintf(f, "%s%" PRIu64 " %s", pre, tc->v[k], name);
}

void report_tc_text(FILE *f, const char *role, const struct tr_counters *tc)
{
	if (!tc->known && !tc->why[0] && !tc->source[0])
		tc = &not_read;
	if (!tc->known) {
		fprintf(f, "# %s, transport counters: none (%s)\n", role, tc->why);
		return;
	}
	fprintf(f, "# %s, %s over %u connection%s, ", role, tc->source, tc->sockets,
	        tc->sockets == 1 ? "" : "s");
	if (tc->calls)
		fprintf(f, "per RPC (%" PRIu64 " calls):", tc->calls);
	else
		fputs("in all (per RPC unknown):", f);
	figure(f, tc, TR_CNT_STREAMS_STARTED, " ", "HTTP/2 streams started");
	figure(f, tc, TR_CNT_STREAMS_SUCCEEDED, " (", "succeeded,");
	figure(f, tc, TR_CNT_STREAMS_FAILED, " ", "failed),");
	figure(f, tc, TR_CNT_MSGS_SENT, " ", "messages sent,");
	figure(f, tc, TR_CNT_MSGS_RECV, " ", "received;");
	if (report_tc_known(tc, TR_CNT_KEEPALIVES))
		fprintf(f, " keepalives sent %" PRIu64, tc->v[TR_CNT_KEEPALIVES]);
	for (int k = TR_CNT_LOCAL_WINDOW; k <= TR_CNT_REMOTE_WINDOW; k++)
		if (report_tc_known(tc, k))
			fprintf(f, "; %s %" PRIu64, cnt_names[k], tc->v[k]);
	if (tc->why[0])
		fprintf(f, "; %s", tc->why);
	fputc('\n', f);
}

/* PS i's counters as the report shows them: per call (calls) only when
 * its open connections carried exactly the workers' calls (the run's only
 * PS, every stream the workers started and no other), since channelz
 * forgets a connection once it closes and counts another run's calls
 * too; null per call otherwise, saying why. */
static int ps_tc(const struct report *r, uint32_t i, struct tr_counters *out)
{
	const struct srvinfo *s;
	const struct tr_counters *wk = &r->res->tc;

	if (!r->alloc || !r->alloc->ps || i >= r->alloc->nps)
		return -1;
	s = &r->alloc->ps[i];
	*out = s->tc;
	if (!s->tc_has || !report_tc_known(out, TR_CNT_STREAMS_STARTED))
		return 0; /* its why says why */
	out->calls = 0;
	if (r->alloc->nps != 1)
		snprintf(out->why, sizeof out->why, "per call unknown: the workers' calls to each "
		         "of %u PSs are not told apart", r->alloc->nps);
	else if (!wk->calls || out->v[TR_CNT_STREAMS_STARTED] != wk->calls)
		snprintf(out->why, sizeof out->why, "per call unknown: its open connections started "
		         "%llu streams, the workers %llu calls (a connection closed before it was "
		         "asked, or another run's)", (unsigned long long)out->v[TR_CNT_STREAMS_STARTED],
		         (unsigned long long)wk->calls);
	else
		out->calls = wk->calls;
	return 0;
}

void report_tc_all_json(const struct report *r, struct json *w)
{
	struct tr_counters tc;

	json_obj_begin(w, "transport_counters");
	report_tc_json(w, "worker", "worker", &r->res->tc);
	json_arr_begin(w, "ps");
	for (uint32_t i = 0; ps_tc(r, i, &tc) == 0; i++)
		report_tc_json(w, NULL, "ps", &tc);
	json_arr_end(w);
	json_obj_end(w);
}

void report_tc_all_text(const struct report *r, FILE *f)
{
	struct tr_counters tc;
	char role[32];

	report_tc_text(f, "worker", &r->res->tc);
	for (uint32_t i = 0; ps_tc(r, i, &tc) == 0; i++) {
		snprintf(role, sizeof role, "PS %u", i);
		report_tc_text(f, role, &tc);
	}
}
