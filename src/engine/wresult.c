/* wresult.c - a worker's figures in a bounded, checked binary form.
 *
 * Layout, all integers big-endian:
 *   u32 magic "TFGR", u32 version 5, u32 worker, i32 pid, i32 end,
 *   u16 hostlen + host, u16 errlen + err,
 *   u64 calls, errors, warmup_calls, bytes, window_ns, offered,
 *   u64 warmup_ns, missed,
 *   u64 ser_sampled, enc_ns, dec_ns,
 *   u32 nps + nps x u64 ps_calls,
 *   u32 train (0 or 1) + when 1: nps x {u64 ps_sent, ps_recv}, u64 barriers,
 *     barrier_wait_ns, closing, last_in (last_in <= closing <= barriers),
 *     injected_ns,
 *   histogram lat, histogram svc, each:
 *     u64 count, min_ns, max_ns, sum_ns, sumsq_hi, sumsq_lo,
 *     u32 nbuckets + nbuckets x {u32 index, u64 count}, indexes increasing,
 *   u32 nruns + nruns x {u64 calls, errors, bytes, window_ns, lat_count,
 *     lat_sum_ns} (nruns <= RESULT_RUNS_MAX, 0 for one run, else the runs'
 *     calls add up to calls and their lat_count to lat's count),
 *   u16 len + allocator name, u16 len + its version (the worker's malloc
 *     as alloc_detect found it; empty when not known),
 *   u16 len + CPU list, u16 len + memory policy (place_measure: where the
 *     worker ran, as it saw itself), i32 NUMA node it was bound to by the
 *     job (-1: none; -1 .. PLACE_NODE_MAX),
 *   u64 span_ns, user_ns, sys_ns, rss_peak_bytes, vcsw, ivcsw (its own
 *     resource use, wresult_res; span_ns 0 when not measured),
 *   the transport's counters (tr_counters_put, transport.h),
 *   u32 mon_len + mon_len bytes (its resource series, monitor_pack; 0 when
 *     not sampled or when the blob has no room for it),
 *   u32 nmarks, u32 mark_conns, u64 marks_dropped, u64 zero_ns, nmarks x
 *     {u64 bar, start, pulled, computed, end}, nmarks x 2 x mark_conns x
 *     u64 conn_end (a training worker's timeline, step.h; nmarks <=
 *     RESULT_MARKS_MAX and what the blob has room for with the intervals'
 *     header, bar <= start <= pulled <= computed <= end, a connection's
 *     pulls done in [start, pulled] and its pushes in [computed, end], or
 *     0: it had none; mark_conns is nps, or 0 with no marks),
 *   u32 nivl + u64 ivl_dropped + nivl x {u32 index, u64 start_ns, end_ns,
 *     calls, errors, bytes, lat_count, lat_sum_ns, p50_ns, p99_ns, max_ns}
 *     (--interval; nivl <= RESULT_IVL_MAX and what the blob has room for,
 *     start <= end).
 * Version 4 added warmup_ns, missed, svc and the runs' lat_count (issue 13:
 * calls are counted by completion, latencies per started call); version 5
 * the allocator (job.allocator) and the intervals; version 6 the
 * placement and the resource use (issue 17: every process measured);
 * version 7 the resource series; version 8 the NUMA node (a node per
 * local rank) and the intervals' lat_count (their mean latency); version 9
 * a training worker's figures, typed; version 10 the transport's counters;
 * version 11 the barriers a training worker was last in, the delay put
 * in on it (fault.h) and its timeline.  Only the processes of one run exchange
 * blobs: another version is refused, and counted as a malformed report.
 */
#include "wresult.h"

#include "bebuf.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RESULT_MAGIC 0x54464752u /* "TFGR" */
#define RESULT_VERSION 11u

void wresult_from_engine(struct wresult *r, uint32_t worker, const struct engine_result *res,
                         uint32_t nps)
{
	memset(r, 0, offsetof(struct wresult, ps_calls));
	r->nivl = 0;
	r->ivl_dropped = 0;
	r->zero_ns = r->marks_dropped = 0;
	r->nmarks = r->mark_conns = 0;
	r->worker = worker;
	r->place.numa_node = -1; /* not placed until the caller says */
	r->pid = (int32_t)getpid();
	if (gethostname(r->host, sizeof r->host) != 0)
		strcpy(r->host, "?");
	r->host[sizeof r->host - 1] = 0;
	r->end = res->end;
	err_set(&r->err, "%.*s", RESULT_ERR_WIRE - 1, res->err.msg);
	r->calls = res->calls;
	r->errors = res->errors;
	r->warmup_calls = res->warmup_calls;
	r->bytes = res->bytes;
	r->window_ns = res->window_ns;
	r->offered = res->offered;
	r->warmup_ns = res->warmup_ns;
	r->missed = res->missed;
	r->ser_sampled = res->ser_sampled;
	r->enc_ns = res->enc_ns;
	r->dec_ns = res->dec_ns;
	r->tc = res->tc;
	r->nps = nps > RESULT_PS_MAX ? RESULT_PS_MAX : nps;
	for (uint32_t i = 0; i < r->nps; i++)
		r->ps_calls[i] = res->conn_calls ? res->conn_calls[i] : 0;
	r->lat = res->lat;
	r->svc = res->svc;
	if (res->nruns > 1 && res->runs) {
		r->nruns = res->nruns > RESULT_RUNS_MAX ? RESULT_RUNS_MAX : res->nruns;
		for (uint32_t k = 0; k < r->nruns; k++)
			r->runs[k] = (struct wresult_run){
				.calls = res->runs[k].calls, .errors = res->runs[k].errors,
				.bytes = res->runs[k].bytes, .window_ns = res->runs[k].window_ns,
				.lat_count = res->runs[k].lat_count,
				.lat_sum_ns = res->runs[k].lat_sum_ns,
			};
	}
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

static uint64_t delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

void wresult_res_of(struct wresult_res *out, const struct rusage *a, const struct rusage *b,
                    uint64_t span_ns)
{
	*out = (struct wresult_res){
		.span_ns = span_ns,
		.user_ns = delta(tv_ns(&a->ru_utime), tv_ns(&b->ru_utime)),
		.sys_ns = delta(tv_ns(&a->ru_stime), tv_ns(&b->ru_stime)),
		.rss_peak_bytes = (uint64_t)(b->ru_maxrss > 0 ? b->ru_maxrss : 0) * 1024u,
		.vcsw = delta((uint64_t)a->ru_nvcsw, (uint64_t)b->ru_nvcsw),
		.ivcsw = delta((uint64_t)a->ru_nivcsw, (uint64_t)b->ru_nivcsw),
	};
}

/* A histogram, its buckets sparse. */
static void put_stats(struct wbuf *w, const struct stats *s)
{
	uint32_t nb = 0;

	be_put(w, s->count, 8);
	be_put(w, s->min_ns, 8);
	be_put(w, s->max_ns, 8);
	be_put(w, s->sum_ns, 8);
	be_put(w, (uint64_t)(s->sumsq_ns >> 64), 8);
	be_put(w, (uint64_t)s->sumsq_ns, 8);
	for (unsigned i = 0; i < STATS_BUCKETS; i++)
		nb += s->bucket[i] != 0;
	be_put(w, nb, 4);
	for (unsigned i = 0; i < STATS_BUCKETS; i++)
		if (s->bucket[i]) {
			be_put(w, i, 4);
			be_put(w, s->bucket[i], 8);
		}
}

/* The per-PS counters, a training worker's with them. */
static void put_ps(struct wbuf *w, const struct wresult *r)
{
	be_put(w, r->nps, 4);
	for (uint32_t i = 0; i < r->nps && i < RESULT_PS_MAX; i++)
		be_put(w, r->ps_calls[i], 8);
	be_put(w, r->train ? 1 : 0, 4);
	for (uint32_t i = 0; r->train && i < r->nps && i < RESULT_PS_MAX; i++) {
		be_put(w, r->ps_sent[i], 8);
		be_put(w, r->ps_recv[i], 8);
	}
	if (r->train) {
		be_put(w, r->barriers, 8);
		be_put(w, r->barrier_wait_ns, 8);
		be_put(w, r->closing, 8);
		be_put(w, r->last_in, 8);
		be_put(w, r->injected_ns, 8);
	}
}

/* The timeline's marks that fit with the intervals' header after them
 * (12 bytes); the rest are counted as dropped. */
static void put_marks(struct wbuf *w, const struct wresult *r)
{
	uint32_t n = r->nmarks < RESULT_MARKS_MAX ? r->nmarks : RESULT_MARKS_MAX;
	size_t per = 40 + 16 * (size_t)r->mark_conns, room;

	if (r->mark_conns && n > RESULT_MARK_ENDS_MAX / (2 * (size_t)r->mark_conns))
		n = (uint32_t)(RESULT_MARK_ENDS_MAX / (2 * (size_t)r->mark_conns));
	room = w->len + 24 + 12 <= w->cap ? (w->cap - w->len - 24 - 12) / per : 0;
	if (n > room)
		n = (uint32_t)room;
	be_put(w, n, 4);
	be_put(w, n ? r->mark_conns : 0, 4);
	be_put(w, r->marks_dropped + (r->nmarks - n), 8);
	be_put(w, r->zero_ns, 8);
	for (uint32_t k = 0; k < n; k++) {
		be_put(w, r->marks[k].bar, 8);
		be_put(w, r->marks[k].start, 8);
		be_put(w, r->marks[k].pulled, 8);
		be_put(w, r->marks[k].computed, 8);
		be_put(w, r->marks[k].end, 8);
	}
	for (size_t k = 0; k < 2 * (size_t)n * r->mark_conns; k++)
		be_put(w, r->conn_end[k], 8);
}

/* The timeline's marks, each in order and its ends within it: 0 or -1. */
static int get_marks(struct rbuf *b, struct wresult *r)
{
	r->nmarks = (uint32_t)be_get(b, 4);
	r->mark_conns = (uint32_t)be_get(b, 4);
	r->marks_dropped = be_get(b, 8);
	r->zero_ns = be_get(b, 8);
	/* mark_conns is nps, or 0 with no marks: a count with none (2^31,
	 * say) once reached put_marks, whose 2 x mark_conns wrapped to 0 */
	if (b->bad || r->nmarks > RESULT_MARKS_MAX ||
	    r->mark_conns != (r->nmarks ? r->nps : 0) ||
	    (r->nmarks && r->mark_conns > RESULT_MARK_ENDS_MAX / (2 * r->nmarks)))
		return -1;
	for (uint32_t k = 0; k < r->nmarks; k++) {
		struct step_mark *m = &r->marks[k];
		m->bar = be_get(b, 8);
		m->start = be_get(b, 8);
		m->pulled = be_get(b, 8);
		m->computed = be_get(b, 8);
		m->end = be_get(b, 8);
		if (m->bar > m->start || m->start > m->pulled || m->pulled > m->computed ||
		    m->computed > m->end)
			return -1;
	}
	for (size_t k = 0; k < 2 * (size_t)r->nmarks * r->mark_conns; k++) {
		const struct step_mark *m = &r->marks[k / (2 * r->mark_conns)];
		int push = (int)(k / r->mark_conns % 2);
		uint64_t e = r->conn_end[k] = be_get(b, 8);
		if (e && (push ? e < m->computed || e > m->end : e < m->start || e > m->pulled))
			return -1;
	}
	return b->bad ? -1 : 0;
}

/* one interval's bytes in the blob */
#define RESULT_IVL_BYTES (4 + 10 * 8)

/* The intervals that fit: the rest are counted as dropped. */
static void put_ivl(struct wbuf *w, const struct wresult *r)
{
	size_t room;
	uint32_t nivl;

	room = w->len + 12 <= w->cap ? (w->cap - w->len - 12) / RESULT_IVL_BYTES : 0;
	nivl = r->nivl < RESULT_IVL_MAX ? r->nivl : RESULT_IVL_MAX;
	if (nivl > room)
		nivl = (uint32_t)room;
	be_put(w, nivl, 4);
	be_put(w, r->ivl_dropped + (r->nivl - nivl), 8);
	for (uint32_t k = 0; k < nivl; k++) {
		const struct engine_ivl_fig *v = &r->ivl[k];
		be_put(w, v->index, 4);
		be_put(w, v->start_ns, 8);
		be_put(w, v->end_ns, 8);
		be_put(w, v->calls, 8);
		be_put(w, v->errors, 8);
		be_put(w, v->bytes, 8);
		be_put(w, v->lat_count, 8);
		be_put(w, v->lat_sum_ns, 8);
		be_put(w, v->p50_ns, 8);
		be_put(w, v->p99_ns, 8);
		be_put(w, v->max_ns, 8);
	}
}

long wresult_encode(const struct wresult *r, unsigned char *buf, size_t cap)
{
	struct wbuf w = {buf, 0, cap, 0};
	uint32_t mon_len;

	be_put(&w, RESULT_MAGIC, 4);
	be_put(&w, RESULT_VERSION, 4);
	be_put(&w, r->worker, 4);
	be_put(&w, (uint32_t)r->pid, 4);
	be_put(&w, (uint32_t)r->end, 4);
	be_put_str(&w, r->host, sizeof r->host);
	be_put_str(&w, r->err.msg, RESULT_ERR_WIRE);
	be_put(&w, r->calls, 8);
	be_put(&w, r->errors, 8);
	be_put(&w, r->warmup_calls, 8);
	be_put(&w, r->bytes, 8);
	be_put(&w, r->window_ns, 8);
	be_put(&w, r->offered, 8);
	be_put(&w, r->warmup_ns, 8);
	be_put(&w, r->missed, 8);
	be_put(&w, r->ser_sampled, 8);
	be_put(&w, r->enc_ns, 8);
	be_put(&w, r->dec_ns, 8);
	put_ps(&w, r);
	put_stats(&w, &r->lat);
	put_stats(&w, &r->svc);
	be_put(&w, r->nruns, 4);
	for (uint32_t k = 0; k < r->nruns && k < RESULT_RUNS_MAX; k++) {
		be_put(&w, r->runs[k].calls, 8);
		be_put(&w, r->runs[k].errors, 8);
		be_put(&w, r->runs[k].bytes, 8);
		be_put(&w, r->runs[k].window_ns, 8);
		be_put(&w, r->runs[k].lat_count, 8);
		be_put(&w, r->runs[k].lat_sum_ns, 8);
	}
	be_put_str(&w, r->alloc, sizeof r->alloc);
	be_put_str(&w, r->alloc_version, sizeof r->alloc_version);
	be_put_str(&w, r->place.cpus, sizeof r->place.cpus);
	be_put_str(&w, r->place.mempolicy, sizeof r->place.mempolicy);
	be_put(&w, (uint32_t)r->place.numa_node, 4);
	be_put(&w, r->res.span_ns, 8);
	be_put(&w, r->res.user_ns, 8);
	be_put(&w, r->res.sys_ns, 8);
	be_put(&w, r->res.rss_peak_bytes, 8);
	be_put(&w, r->res.vcsw, 8);
	be_put(&w, r->res.ivcsw, 8);
	tr_counters_put(&w, &r->tc);
	/* the series when it fits with the timeline's and the intervals'
	 * headers after it */
	mon_len = r->mon_len <= MONITOR_PACK_MAX && w.len + 4 + r->mon_len + 24 + 12 <= cap ?
	          r->mon_len : 0;
	be_put(&w, mon_len, 4);
	if (!w.over) {
		memcpy(w.p + w.len, r->mon, mon_len);
		w.len += mon_len;
	}
	put_marks(&w, r);
	put_ivl(&w, r);
	return w.over ? -1 : (long)w.len;
}

/* A histogram: buckets in increasing order, none empty, adding up to the
 * count; min <= max when not empty.  Returns 0 or -1. */
static int get_stats(struct rbuf *b, struct stats *s)
{
	uint64_t hi, lo, total = 0;
	uint32_t nb, last = 0;

	stats_init(s);
	s->count = be_get(b, 8);
	s->min_ns = be_get(b, 8);
	s->max_ns = be_get(b, 8);
	s->sum_ns = be_get(b, 8);
	hi = be_get(b, 8);
	lo = be_get(b, 8);
	s->sumsq_ns = (unsigned __int128)hi << 64 | lo;
	nb = (uint32_t)be_get(b, 4);
	if (b->bad || nb > STATS_BUCKETS)
		return -1;
	for (uint32_t k = 0; k < nb; k++) {
		uint32_t i = (uint32_t)be_get(b, 4);
		uint64_t c = be_get(b, 8);
		if (b->bad || i >= STATS_BUCKETS || (k && i <= last) || c == 0 ||
		    c > UINT64_MAX - total)
			return -1;
		s->bucket[i] = c;
		total += c;
		last = i;
	}
	if (b->bad || total != s->count || (s->count && s->min_ns > s->max_ns))
		return -1;
	if (!s->count)
		s->min_ns = UINT64_MAX;
	return 0;
}

/* The resource series, checked whole (monitor_unpack): 0 or -1. */
static int get_mon(struct rbuf *b, struct wresult *r)
{
	struct monitor *m = NULL;

	r->mon_len = (uint32_t)be_get(b, 4);
	if (b->bad || r->mon_len > MONITOR_PACK_MAX || b->len - b->at < r->mon_len)
		return -1;
	if (!r->mon_len)
		return 0;
	memcpy(r->mon, b->p + b->at, r->mon_len);
	b->at += r->mon_len;
	if (monitor_unpack(r->mon, r->mon_len, &m) < 0)
		return -1;
	monitor_free(m);
	return 0;
}

/* The fixed head up to the per-PS counters: 0 or -1. */
static int get_head(struct rbuf *b, struct wresult *r)
{
	if (be_get(b, 4) != RESULT_MAGIC || be_get(b, 4) != RESULT_VERSION)
		return -1;
	r->worker = (uint32_t)be_get(b, 4);
	r->pid = (int32_t)be_get(b, 4);
	r->end = (int32_t)be_get(b, 4);
	if (r->end < ENGINE_DONE || r->end > ENGINE_FAILED)
		return -1;
	be_get_str(b, r->host, sizeof r->host);
	be_get_str(b, r->err.msg, RESULT_ERR_WIRE);
	r->calls = be_get(b, 8);
	r->errors = be_get(b, 8);
	r->warmup_calls = be_get(b, 8);
	r->bytes = be_get(b, 8);
	r->window_ns = be_get(b, 8);
	r->offered = be_get(b, 8);
	r->warmup_ns = be_get(b, 8);
	r->missed = be_get(b, 8);
	r->ser_sampled = be_get(b, 8);
	r->enc_ns = be_get(b, 8);
	r->dec_ns = be_get(b, 8);
	return b->bad ? -1 : 0;
}

/* The per-PS counters, a training worker's with them: 0 or -1. */
static int get_ps(struct rbuf *b, struct wresult *r)
{
	r->nps = (uint32_t)be_get(b, 4);
	if (b->bad || r->nps > RESULT_PS_MAX)
		return -1;
	for (uint32_t i = 0; i < r->nps; i++)
		r->ps_calls[i] = be_get(b, 8);
	r->train = (uint32_t)be_get(b, 4);
	if (b->bad || r->train > 1)
		return -1;
	if (!r->train)
		return 0;
	for (uint32_t i = 0; i < r->nps; i++) {
		r->ps_sent[i] = be_get(b, 8);
		r->ps_recv[i] = be_get(b, 8);
	}
	r->barriers = be_get(b, 8);
	r->barrier_wait_ns = be_get(b, 8);
	r->closing = be_get(b, 8);
	r->last_in = be_get(b, 8);
	r->injected_ns = be_get(b, 8);
	return b->bad || r->last_in > r->closing || r->closing > r->barriers ? -1 : 0;
}

/* The runs of a repeated window, adding up to calls and lat's count as
 * checked at the end (their sums in *calls, *lats): 0 or -1. */
static int get_runs(struct rbuf *b, struct wresult *r, uint64_t *run_calls, uint64_t *run_lats)
{
	r->nruns = (uint32_t)be_get(b, 4);
	if (b->bad || r->nruns > RESULT_RUNS_MAX)
		return -1;
	for (uint32_t k = 0; k < r->nruns; k++) {
		struct wresult_run *u = &r->runs[k];
		u->calls = be_get(b, 8);
		u->errors = be_get(b, 8);
		u->bytes = be_get(b, 8);
		u->window_ns = be_get(b, 8);
		u->lat_count = be_get(b, 8);
		u->lat_sum_ns = be_get(b, 8);
		if (u->calls > UINT64_MAX - *run_calls || u->lat_count > UINT64_MAX - *run_lats)
			return -1;
		*run_calls += u->calls;
		*run_lats += u->lat_count;
	}
	return 0;
}

/* The allocator, the placement and the resource use: 0 or -1. */
static int get_self(struct rbuf *b, struct wresult *r)
{
	be_get_str(b, r->alloc, sizeof r->alloc);
	be_get_str(b, r->alloc_version, sizeof r->alloc_version);
	be_get_str(b, r->place.cpus, sizeof r->place.cpus);
	be_get_str(b, r->place.mempolicy, sizeof r->place.mempolicy);
	r->place.numa_node = (int)(int32_t)be_get(b, 4);
	if (r->place.numa_node < -1 || r->place.numa_node > PLACE_NODE_MAX)
		return -1;
	r->res.span_ns = be_get(b, 8);
	r->res.user_ns = be_get(b, 8);
	r->res.sys_ns = be_get(b, 8);
	r->res.rss_peak_bytes = be_get(b, 8);
	r->res.vcsw = be_get(b, 8);
	r->res.ivcsw = be_get(b, 8);
	tr_counters_get(b, &r->tc);
	return b->bad ? -1 : 0;
}

/* The intervals: 0 or -1. */
static int get_ivl(struct rbuf *b, struct wresult *r)
{
	r->nivl = (uint32_t)be_get(b, 4);
	r->ivl_dropped = be_get(b, 8);
	if (b->bad || r->nivl > RESULT_IVL_MAX)
		return -1;
	for (uint32_t k = 0; k < r->nivl; k++) {
		struct engine_ivl_fig *v = &r->ivl[k];
		v->worker = r->worker;
		v->index = (uint32_t)be_get(b, 4);
		v->start_ns = be_get(b, 8);
		v->end_ns = be_get(b, 8);
		v->calls = be_get(b, 8);
		v->errors = be_get(b, 8);
		v->bytes = be_get(b, 8);
		v->lat_count = be_get(b, 8);
		v->lat_sum_ns = be_get(b, 8);
		v->p50_ns = be_get(b, 8);
		v->p99_ns = be_get(b, 8);
		v->max_ns = be_get(b, 8);
		if (v->start_ns > v->end_ns)
			return -1;
	}
	return 0;
}

int wresult_decode(struct wresult *r, const unsigned char *buf, size_t len)
{
	struct rbuf b = {buf, len, 0, 0};
	uint64_t run_calls = 0, run_lats = 0;

	if (len > RESULT_BLOB_MAX)
		return -1;
	memset(r, 0, offsetof(struct wresult, ps_calls));
	stats_init(&r->lat);
	stats_init(&r->svc);
	if (get_head(&b, r) < 0 || get_ps(&b, r) < 0 || get_stats(&b, &r->lat) < 0 ||
	    get_stats(&b, &r->svc) < 0 || get_runs(&b, r, &run_calls, &run_lats) < 0 ||
	    get_self(&b, r) < 0 || get_mon(&b, r) < 0 || get_marks(&b, r) < 0 ||
	    get_ivl(&b, r) < 0)
		return -1;
	if (b.bad || b.at != len ||
	    (r->nruns && (run_calls != r->calls || run_lats != r->lat.count)))
		return -1;
	return 0;
}
