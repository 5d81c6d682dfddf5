/* engine.c - the windows: warm-up, measurement, drain, the open-loop schedule. */
#include "engine.h"
#include "engine_int.h"

#include <errno.h>
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "util.h"

#define REAP_BATCH 64
#define POLL_NS 100000000ull /* wake at least every 100 ms: signals, progress */

static void progress(const struct run *r, uint64_t now)
{
	const struct engine_cfg *cfg = r->cfg;
	double el = (double)(now - (r->phase == PH_MEASURE ? r->t0 : r->t_begin)) / 1e9;
	unsigned long long calls = r->res->calls - r->r0.calls; /* in this run so far */
	char run[32] = "";

	if (cfg->repeat > 1)
		snprintf(run, sizeof run, " run %d/%d", r->run + 1, cfg->repeat);
	if (r->phase == PH_WARMUP || r->phase == PH_SETTLE)
		fprintf(stderr, "\r%s: warm-up %.0f/%.0fs   ", cfg->label, el,
		        (double)cfg->warmup_ns / 1e9);
	else if (r->phase == PH_DRAIN)
		return;
	else if (cfg->iterations)
		fprintf(stderr, "\r%s:%s measuring %llu/%llu calls   ", cfg->label, run,
		        (unsigned long long)r->submitted, (unsigned long long)cfg->iterations);
	else
		fprintf(stderr, "\r%s:%s measuring %.0f/%.0fs, %llu calls   ", cfg->label, run, el,
		        (double)cfg->duration_ns / 1e9, calls);
	fflush(stderr);
}

/* The intended start of call `seq` of the open-loop schedule: evenly spaced
 * (computed from the origin, so no rounding drift), or a Poisson process. */
static uint64_t schedule_next(struct run *r)
{
	const struct engine_cfg *cfg = r->cfg;

	r->seq++;
	if (cfg->arrival == ARRIVAL_POISSON) {
		/* exponential gap of mean 1/rate, from a uniform in (0, 1] */
		double u = (double)((rng_next(&r->rng) >> 11) + 1) / 9007199254740992.0;
		return r->next_due + (uint64_t)(-log(u) * 1e9 / (double)cfg->rate);
	}
	return r->sched_base +
	       (uint64_t)((unsigned __int128)r->seq * 1000000000u / cfg->rate);
}

/* Open loop: the schedule index of the first call intended at or after t,
 * found by running a copy of the schedule on from its next call (every
 * call before that one was intended before t: the callers look at t no
 * later than the first reap past it).  At a window's end, never per call. */
static uint64_t schedule_index(const struct run *r, uint64_t t)
{
	struct run c = *r;

	while (c.next_due < t)
		c.next_due = schedule_next(&c);
	return c.seq;
}

/* Open loop: whether a call may start now, schedule permitting: in the
 * warm-up, in a window until its calls are all out, and after the last
 * window the calls intended inside it, until r->late_until. */
static int may_issue(const struct run *r, uint64_t now)
{
	const struct engine_cfg *cfg = r->cfg;

	switch (r->phase) {
	case PH_WARMUP:
		return 1;
	case PH_MEASURE:
		return !cfg->iterations || r->submitted < cfg->iterations;
	case PH_DRAIN:
		return r->next_due < r->t_stop && now < r->late_until;
	default:
		return 0;
	}
}

/* Open loop: starts every call that is due and has an idle slot on its
 * connection.  A call whose connection has no idle slot stays due, and its
 * latency, counted from the intended start, grows: a stalled server shows
 * in the percentiles (no coordinated omission). */
static int issue_due(struct run *r, uint64_t now)
{
	const struct engine_cfg *cfg = r->cfg;
	int measured = r->phase != PH_WARMUP;

	while (r->next_due <= now && may_issue(r, now)) {
		int c = (int)(r->seq % (uint64_t)cfg->nconns);
		struct slot *s;

		if (!r->nidle[c])
			return 0;
		s = r->idle[c * cfg->inflight + --r->nidle[c]];
		r->submitted += (uint64_t)measured;
		if (engine_submit(r, s, r->next_due, now, measured) < 0)
			return -1;
		r->next_due = schedule_next(r);
	}
	return 0;
}

/* Intervals: hands the finished interval (ending at `now`) to the callback
 * and starts the next one.  At an interval boundary, never per call. */
static void interval_flush(struct run *r, uint64_t now)
{
	const struct engine_cfg *cfg = r->cfg;
	struct engine_interval iv = {
		.index = r->ivl_index++, .start_ns = r->ivl_start - r->ivl_origin,
		.end_ns = now - r->ivl_origin, .calls = r->ivl_calls, .errors = r->ivl_errors,
		.bytes = r->ivl_calls * cfg->payload->total, .lat = r->ivl_lat,
	};

	cfg->on_interval(cfg->interval_arg, &iv);
	stats_init(r->ivl_lat);
	r->ivl_calls = r->ivl_errors = 0;
	r->ivl_start = now;
	while (r->ivl_next <= now)
		r->ivl_next += cfg->interval_ns;
}

/* Closes run k's latencies: its figures from the run histogram, which then
 * joins the overall one.  At a run boundary, never per call. */
static void run_lat_close(struct run *r, struct engine_run_fig *f)
{
	const struct stats *s = r->run_lat;

	f->lat_count = s->count;
	f->lat_sum_ns = s->sum_ns;
	f->min_ns = s->count ? s->min_ns : 0;
	f->p50_ns = stats_quantile(s, 0.50);
	f->p90_ns = stats_quantile(s, 0.90);
	f->p99_ns = stats_quantile(s, 0.99);
	f->p999_ns = stats_quantile(s, 0.999);
	f->max_ns = s->max_ns;
	stats_merge(&r->res->lat, s);
	stats_init(r->run_lat);
}

/* Opens run r->run's window at t: the counts before it; in an open loop a
 * fresh schedule (between windows of time it goes on); when `fresh` (no
 * call outstanding, none reaped and not yet handled: the start without a
 * warm-up, a window of calls), every slot started; otherwise the calls
 * outstanding go on as the window's. */
static int window_open(struct run *r, uint64_t t, uint64_t now, int fresh)
{
	const struct engine_cfg *cfg = r->cfg;
	struct engine_result *res = r->res;

	r->phase = PH_MEASURE;
	r->t0 = t;
	r->t_end = cfg->iterations ? 0 : t + cfg->duration_ns;
	r->submitted = 0;
	r->nencoded = 0;
	r->r0 = (struct engine_run_fig){.calls = res->calls, .errors = res->errors,
	                                .bytes = res->bytes};
	res->nruns = (uint32_t)r->run + 1;
	if (r->ivl_lat && !r->ivl_next) {
		/* intervals start with the first measured window */
		r->ivl_origin = r->ivl_start = t;
		r->ivl_next = t + cfg->interval_ns;
	}
	if (cfg->rate) {
		if (r->run == 0 || cfg->iterations) {
			r->sched_base = r->next_due = t;
			r->seq = r->seq_t0 = 0;
		}
		return issue_due(r, now); /* the loop's clock: see engine_hung_conn */
	}
	for (int i = 0; i < r->nslots && fresh; i++) {
		if (cfg->iterations && r->submitted >= cfg->iterations)
			break;
		r->submitted++;
		if (engine_submit(r, &r->slots[i], t, t, 1) < 0)
			return -1;
	}
	return 0;
}

/* Closes run r->run's window at t_end: its counts, length and offered
 * calls (not its latencies: see run_lat_close). */
static void window_close(struct run *r, uint64_t t_end)
{
	const struct engine_cfg *cfg = r->cfg;
	struct engine_result *res = r->res;
	struct engine_run_fig *f = &res->runs[r->run];
	uint64_t idx;

	f->calls = res->calls - r->r0.calls;
	f->errors = res->errors - r->r0.errors;
	f->bytes = res->bytes - r->r0.bytes;
	f->window_ns = t_end - r->t0;
	if (cfg->rate && cfg->iterations) {
		f->offered = (uint64_t)((unsigned __int128)f->window_ns * cfg->rate / 1000000000u);
	} else if (cfg->rate) {
		idx = schedule_index(r, t_end);
		f->offered = idx - r->seq_t0;
		r->seq_t0 = idx;
	}
	res->window_ns += f->window_ns;
	res->offered += f->offered;
	r->last_end = t_end;
}

/* The window's end, or a stop (interrupt, failure) at t: on to the drain.
 * Only the end of the last window of time lets the calls intended in it
 * start late (open loop). */
static void stop_at(struct run *r, uint64_t t, int late)
{
	const struct engine_cfg *cfg = r->cfg;

	if (r->phase == PH_DRAIN) {
		r->late_until = 0; /* a failure in the drain: nothing more starts */
		return;
	}
	if (r->phase == PH_WARMUP || r->phase == PH_SETTLE) {
		if (r->phase == PH_WARMUP)
			r->res->warmup_ns = t - r->t_begin;
	} else {
		window_close(r, t);
		r->t_stop = t;
		if (late && cfg->rate && !cfg->iterations)
			r->late_until = t + (cfg->timeout_ns < cfg->duration_ns ? cfg->timeout_ns
			                                                       : cfg->duration_ns);
	}
	r->phase = PH_DRAIN;
}

/* A window ended at t (seen at `now`): the next run's opens, or the drain
 * starts. */
static int window_end(struct run *r, uint64_t t, uint64_t now)
{
	if (r->run + 1 >= (r->cfg->repeat > 1 ? r->cfg->repeat : 1)) {
		stop_at(r, t, 1);
		return 0;
	}
	window_close(r, t);
	run_lat_close(r, &r->res->runs[r->run]);
	r->run++;
	return window_open(r, t, now, r->cfg->iterations != 0);
}

/* One completed call, at `now`: checked, counted when it completed inside
 * a window, its latency recorded when it started inside one, and (closed
 * loop) its slot started again unless the phase says otherwise. */
static void completed(struct run *r, struct slot *s, uint64_t now)
{
	const struct engine_cfg *cfg = r->cfg;
	struct engine_result *res = r->res;
	uint64_t lat, svc, dec_ns = 0, t_done = now;
	int bad;

	r->conn_out[s->conn]--;
	r->conn_since[s->conn] = now;
	if (r->codec) {
		/* the reply is decoded inside the call's latency (its end: t_done;
		 * `now`, the reap's, stays the clock of the run's bookkeeping) */
		uint64_t t = s->sampled ? now_ns() : 0;
		bad = engine_check(r, s) < 0;
		t_done = now_ns();
		if (s->sampled)
			dec_ns = t_done - t;
	} else {
		bad = engine_check(r, s) < 0;
	}
	lat = t_done - s->call.t_start_ns;
	svc = t_done - s->t_sent;
	if (bad) {
		res->errors++;
		r->ivl_errors += r->ivl_next != 0; /* not a warm-up call */
		stop_at(r, now, 0);
		return;
	}
	if (r->phase == PH_MEASURE) {
		res->calls++;
		res->conn_calls[s->conn]++;
		res->bytes += cfg->payload->total;
		r->ivl_calls += r->ivl_lat != NULL;
	} else if (!s->measured && r->phase != PH_DRAIN) {
		res->warmup_calls++;
	}
	if (s->measured) {
		stats_record(r->run_lat, lat);
		if (cfg->rate)
			stats_record(&res->svc, svc);
		if (r->ivl_lat)
			stats_record(r->ivl_lat, lat);
		if (s->sampled) {
			res->ser_sampled++;
			res->enc_ns += s->enc_ns;
			res->dec_ns += dec_ns;
		}
	}
	if (cfg->rate) {
		r->idle[s->conn * cfg->inflight + r->nidle[s->conn]++] = s;
		return;
	}
	if (r->phase == PH_WARMUP) {
		if (engine_submit(r, s, now, now, 0) < 0)
			stop_at(r, now, 0);
	} else if (r->phase == PH_MEASURE &&
	           (!cfg->iterations || r->submitted < cfg->iterations)) {
		r->submitted++;
		if (engine_submit(r, s, now, now, 1) < 0)
			stop_at(r, now, 0);
	}
}

/* Submits refused with -EAGAIN, again; dropped when no call may start
 * (an open loop's measured ones are then missed). */
static void resubmit_pending(struct run *r, uint64_t now)
{
	const struct engine_cfg *cfg = r->cfg;

	while (r->npending) {
		struct slot *s = r->pending[--r->npending];
		int rc;

		if (cfg->rate && may_issue(r, now))
			rc = engine_submit(r, s, s->call.t_start_ns, now, s->measured);
		else if (!cfg->rate && (r->phase == PH_WARMUP || r->phase == PH_MEASURE))
			rc = engine_submit(r, s, now, now, r->phase == PH_MEASURE);
		else {
			r->res->missed += cfg->rate && s->measured;
			if (cfg->rate)
				r->idle[s->conn * cfg->inflight + r->nidle[s->conn]++] = s;
			continue;
		}
		if (rc < 0) {
			stop_at(r, now, 0);
			r->npending = 0;
		}
		if (r->npending && r->pending[r->npending - 1] == s)
			break; /* refused again: retried after the next reap */
	}
}

/* When the reap wakes up at the latest: the phase's end, the next call due
 * (open loop, with a slot for it), the next interval, and POLL_NS. */
static uint64_t wake_at(const struct run *r, uint64_t now)
{
	const struct engine_cfg *cfg = r->cfg;
	uint64_t deadline = now + POLL_NS;

	if (r->phase == PH_WARMUP && r->t_begin + cfg->warmup_ns < deadline)
		deadline = r->t_begin + cfg->warmup_ns;
	else if (r->phase == PH_MEASURE && r->t_end && r->t_end < deadline)
		deadline = r->t_end;
	if (cfg->rate && may_issue(r, now) && r->nidle[r->seq % (uint64_t)cfg->nconns] &&
	    r->next_due < deadline)
		deadline = r->next_due;
	if (cfg->rate && r->phase == PH_DRAIN && r->late_until > now && r->late_until < deadline)
		deadline = r->late_until;
	if (r->ivl_next && r->ivl_next < deadline)
		deadline = r->ivl_next;
	return deadline;
}

/* run_windows' start: the warm-up's first calls, or with no warm-up the
 * first window.  *opened: 1 when a window was opened.  Returns the start,
 * r->t_begin. */
static uint64_t run_start(struct run *r, int *opened)
{
	const struct engine_cfg *cfg = r->cfg;
	uint64_t now = r->t_begin = now_ns();

	*opened = !cfg->warmup_ns;
	if (cfg->warmup_ns) {
		r->phase = PH_WARMUP;
		r->sched_base = r->next_due = now;
		for (int i = 0; i < r->nslots && !cfg->rate; i++)
			if (engine_submit(r, &r->slots[i], now, now, 0) < 0) {
				stop_at(r, now, 0);
				break;
			}
		if (cfg->rate && issue_due(r, now) < 0)
			stop_at(r, now, 0);
	} else if (window_open(r, now, now, 1) < 0) {
		stop_at(r, now, 0);
	}
	return now;
}

/* run_windows' end, once nothing is outstanding: the open loop's calls
 * never started, the last run's latencies (opened: a window was). */
static void run_finish(struct run *r, int opened)
{
	const struct engine_cfg *cfg = r->cfg;
	struct engine_result *res = r->res;

	if (cfg->rate && r->t_stop && !cfg->iterations) {
		/* intended inside the window(s), never started */
		uint64_t idx = schedule_index(r, r->t_stop);
		res->missed += idx > r->seq ? idx - r->seq : 0;
	}
	if (opened)
		run_lat_close(r, &res->runs[r->run]); /* the last run's drain is its own */
}

/* The warm-up, then every window, then the drain: on return nothing is
 * outstanding unless the run failed. */
static void run_windows(struct run *r)
{
	const struct engine_cfg *cfg = r->cfg;
	struct engine_result *res = r->res;
	struct tr_call *done[REAP_BATCH];
	int hung, n, opened;
	uint64_t now = run_start(r, &opened), next_progress = now + 1000000000ull;
	uint64_t next_hang_check = 0;

	while (r->phase != PH_DRAIN || r->outstanding > 0 || r->npending > 0 ||
	       (cfg->rate && may_issue(r, now))) {
		uint64_t deadline = wake_at(r, now);

		if (r->outstanding) {
			n = cfg->ops->reap(cfg->client, done, REAP_BATCH, deadline);
		} else {
			/* open loop, nothing in flight: sleep until the next call is due */
			struct timespec ts;
			uint64_t wait = deadline > now ? deadline - now : 0;
			ts.tv_sec = (time_t)(wait / 1000000000u);
			ts.tv_nsec = (long)(wait % 1000000000u);
			nanosleep(&ts, NULL);
			n = 0;
		}
		now = now_ns();
		if (n < 0) {
			engine_fail(r, -1, "waiting for replies failed: %s", strerror(-n));
			stop_at(r, now, 0);
			break;
		}
		r->outstanding -= n;

		/* boundaries come before this reap's calls are counted or restarted */
		if (r->phase == PH_WARMUP && now >= r->t_begin + cfg->warmup_ns) {
			res->warmup_ns = now - r->t_begin;
			r->phase = PH_SETTLE; /* a window of calls starts with nothing out */
			if (!cfg->iterations && (opened = 1, window_open(r, now, now, 0) < 0))
				stop_at(r, now, 0);
		}
		if (r->phase == PH_MEASURE && r->t_end && now >= r->t_end &&
		    window_end(r, r->t_end, now) < 0)
			stop_at(r, now, 0);
		/* this reap's calls are the next interval's; after the last window
		 * only the last, partial one, ending with it (engine_run) */
		if (r->ivl_next && now >= r->ivl_next && r->phase != PH_DRAIN)
			interval_flush(r, now);
		if (*cfg->stop && r->phase != PH_DRAIN) {
			res->end = ENGINE_INTERRUPTED;
			stop_at(r, now, 0);
		}

		for (int i = 0; i < n; i++)
			completed(r, done[i]->user, now);
		resubmit_pending(r, now);
		if (cfg->rate && issue_due(r, now) < 0)
			stop_at(r, now, 0);
		if (r->phase == PH_SETTLE && !r->outstanding && !r->npending &&
		    (opened = 1, window_open(r, now, now, 1) < 0))
			stop_at(r, now, 0);
		if (r->phase == PH_MEASURE && cfg->iterations && r->submitted >= cfg->iterations &&
		    !r->outstanding && !r->npending && window_end(r, now, now) < 0)
			stop_at(r, now, 0); /* a window of calls ends at its last completion */

		/* every 10 ms at most: hung_conn looks at every connection */
		if (r->outstanding && now >= next_hang_check &&
		    (next_hang_check = now + 10000000ull, hung = engine_hung_conn(r, now)) >= 0) {
			engine_fail(r, hung, "no reply for %.1fs with %d calls outstanding",
			     (double)cfg->timeout_ns / 1e9, r->conn_out[hung]);
			stop_at(r, now, 0);
			break;
		}
		if (cfg->progress && now >= next_progress) {
			progress(r, now);
			next_progress = now + 1000000000ull;
		}
	}
	run_finish(r, opened);
}

int engine_run(const struct engine_cfg *cfg, struct engine_result *res)
{
	struct run r = {.cfg = cfg, .res = res};
	int rc;

	memset(res, 0, sizeof *res);
	stats_init(&res->lat);
	stats_init(&res->svc);
	res->failed_conn = -1;
	if ((rc = engine_setup(&r)) < 0) {
		engine_teardown(&r);
		return rc == -EINVAL ? -1 : rc; /* -EINVAL: res->err.msg says why */
	}

	run_windows(&r);
	if (cfg->progress)
		fprintf(stderr, "\r%*s\r", 60, "");
	if (r.ivl_next && r.last_end > r.ivl_start)
		interval_flush(&r, r.last_end); /* the last, partial interval */

	if (res->end == ENGINE_DONE && cfg->method == TR_ECHO && !cfg->verify_all &&
	    r.outstanding == 0)
		engine_final_check(&r);
	/* the transport's own counters, once the last call is done */
	if (cfg->ops->counters)
		cfg->ops->counters(cfg->client, &res->tc);
	else
		tr_counters_none(&res->tc, "this transport keeps no counters of its own");
	engine_teardown(&r);
	return res->end == ENGINE_DONE ? 0 : res->end == ENGINE_INTERRUPTED ? 1 : -1;
}

void engine_result_free(struct engine_result *res)
{
	free(res->conn_calls);
	res->conn_calls = NULL;
	free(res->runs);
	res->runs = NULL;
}

double engine_rate(const struct engine_result *res)
{
	return res->window_ns ? (double)res->calls * 1e9 / (double)res->window_ns : 0.0;
}

double engine_bytes_per_s(const struct engine_result *res)
{
	return res->window_ns ? (double)res->bytes * 1e9 / (double)res->window_ns : 0.0;
}

double engine_run_rate(const struct engine_run_fig *f)
{
	return f->window_ns ? (double)f->calls * 1e9 / (double)f->window_ns : 0.0;
}

double engine_run_bytes_per_s(const struct engine_run_fig *f)
{
	return f->window_ns ? (double)f->bytes * 1e9 / (double)f->window_ns : 0.0;
}

double engine_run_mean_ns(const struct engine_run_fig *f)
{
	return f->lat_count ? (double)f->lat_sum_ns / (double)f->lat_count : 0.0;
}

int engine_saturated(uint64_t calls, uint64_t offered, uint64_t missed)
{
	/* calls < offered * (1 - tol), without rounding */
	return missed > 0 || (unsigned __int128)calls * 100 <
	                     (unsigned __int128)offered * (100 - ENGINE_SAT_TOL_PCT);
}
