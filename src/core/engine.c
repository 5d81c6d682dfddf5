/* engine.c - warm-up, measured window, in-flight depth, submit/reap. */
#include "engine.h"

#include <errno.h>
#include <math.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "util.h"

#define REAP_BATCH 64
#define POLL_NS 100000000ull /* wake at least every 100 ms: signals, progress */

enum phase { PH_WARMUP, PH_MEASURE };

struct slot {
	struct tr_call call;
	int conn;
	int measured;           /* started inside the measured window */
	unsigned char ack[8];   /* Ack reply */
	unsigned char pull[8];  /* Pull request: N, big-endian */
	struct iovec pull_iov;
	/* serialized modes */
	unsigned char *req;     /* this call's packed request (serialized), or NULL */
	struct iovec req_iov;
	unsigned char *reply;   /* the reply lands here, is decoded here */
	int verify;             /* EchoTensor: compare every content byte of the reply */
	int sampled;            /* encode and decode timed */
	uint64_t enc_ns;
};

struct run {
	const struct engine_cfg *cfg;
	struct engine_result *res;
	struct slot *slots;
	int nslots;
	struct slot **pending;  /* submits refused with -EAGAIN, retried after a reap */
	int npending;
	int outstanding;
	int *conn_out;          /* calls outstanding per connection */
	uint64_t *conn_since;   /* per connection: its last reply, or the submit that
	                         * made it busy; a reply is due timeout_ns after it */
	unsigned char *verify_buf; /* one payload for first/last checks, or nslots for all */
	int verify_next;        /* the next Echo submitted carries verify_buf */
	/* serialized modes (NULL codec: non-serialized) */
	struct codec *codec;
	int wire;               /* TR_ECHO_TENSOR or TR_ACK_TENSOR */
	unsigned char *ser_mem; /* every slot's request and reply buffers */
	uint64_t nencoded;      /* calls encoded so far: picks the sampled ones */
	/* open loop (cfg->rate > 0): idle slots per connection, and the schedule */
	struct slot **idle;     /* connection c's idle slots: idle[c * inflight ...] */
	int *nidle;
	uint64_t sched_base;    /* the schedule's origin */
	uint64_t next_due;      /* intended start of the next call */
	uint64_t seq;           /* calls scheduled so far */
	struct payload_rng rng; /* Poisson gaps */
	/* repeats: this run's latencies, merged into res->lat at its end */
	struct stats *run_lat;
	int run;                /* 0-based, for the progress line */
	uint64_t last_end;      /* end of the last measured window */
	/* intervals (cfg->interval_ns > 0; else ivl_lat NULL, ivl_next 0) */
	struct stats *ivl_lat;
	uint64_t ivl_calls, ivl_errors;
	uint64_t ivl_origin, ivl_start, ivl_next;
	uint32_t ivl_index;
};

static void fail(struct run *r, int conn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct run *r, int conn, const char *fmt, ...)
{
	va_list ap;

	if (r->res->end == ENGINE_FAILED)
		return; /* keep the first failure */
	r->res->end = ENGINE_FAILED;
	r->res->failed_conn = conn;
	va_start(ap, fmt);
	vsnprintf(r->res->err, sizeof r->res->err, fmt, ap);
	va_end(ap);
}

/* Serialized modes: the request of one call, after its start time.  One
 * call in ENGINE_SAMPLE times its encode alone. */
static void encode(struct run *r, struct slot *s)
{
	uint64_t t;

	if (r->wire == TR_ECHO_TENSOR) {
		s->verify = r->cfg->verify_all || r->verify_next;
		r->verify_next = 0;
	}
	/* not the first call, which checks every byte of its reply */
	s->sampled = r->nencoded++ % ENGINE_SAMPLE == ENGINE_SAMPLE - 1;
	if (!s->sampled) {
		codec_encode(r->codec, s->req, &s->req_iov, &s->call.iov, &s->call.iovcnt);
		return;
	}
	t = now_ns();
	codec_encode(r->codec, s->req, &s->req_iov, &s->call.iov, &s->call.iovcnt);
	s->enc_ns = now_ns() - t;
}

static int submit(struct run *r, struct slot *s, uint64_t now, int measured)
{
	const struct engine_cfg *cfg = r->cfg;
	int rc;

	s->measured = measured;
	s->call.t_start_ns = now;
	if (r->codec) {
		encode(r, s);
	} else if (cfg->method == TR_ECHO) {
		if (cfg->verify_all) {
			s->call.resp_buf = r->verify_buf + (size_t)(s - r->slots) * cfg->payload->total;
			s->call.resp_cap = cfg->payload->total;
		} else if (r->verify_next) {
			s->call.resp_buf = r->verify_buf;
			s->call.resp_cap = cfg->payload->total;
			r->verify_next = 0;
		} else {
			s->call.resp_buf = NULL;
			s->call.resp_cap = 0;
		}
	}
	rc = cfg->ops->submit(cfg->conns[s->conn], &s->call);
	if (rc == -EAGAIN) {
		r->pending[r->npending++] = s;
		return 0;
	}
	if (rc < 0) {
		fail(r, s->conn, "cannot start a %s call on connection %d: %s",
		     tr_method_name(s->call.method), s->conn, strerror(-rc));
		return rc;
	}
	r->outstanding++;
	if (r->conn_out[s->conn]++ == 0)
		r->conn_since[s->conn] = now;
	return 0;
}

/* The connection that has had calls outstanding and no reply for longer
 * than the timeout (the one waiting longest), or -1. */
static int hung_conn(const struct run *r, uint64_t now)
{
	int hung = -1;

	for (int c = 0; c < r->cfg->nconns; c++)
		if (r->conn_out[c] && now - r->conn_since[c] > r->cfg->timeout_ns &&
		    (hung < 0 || r->conn_since[c] < r->conn_since[hung]))
			hung = c;
	return hung;
}

/* Checks a completed call against what the method promises. */
static int check(struct run *r, struct slot *s)
{
	const struct engine_cfg *cfg = r->cfg;
	const struct tr_call *c = &s->call;
	uint64_t want = cfg->payload->total;

	if (c->status != TR_OK) {
		const char *why = cfg->ops->conn_error ? cfg->ops->conn_error(cfg->conns[s->conn])
		                                      : NULL;
		fail(r, s->conn, "%s call failed with status %s (%d)%s%s", tr_method_name(c->method),
		     tr_status_name(c->status), c->status, why ? ": " : "", why ? why : "");
		return -1;
	}
	if (r->codec) {
		char why[256];
		if (c->resp_len > c->resp_cap) {
			fail(r, s->conn, "%s reply has %llu bytes, more than the %llu expected",
			     tr_method_name(c->method), (unsigned long long)c->resp_len,
			     (unsigned long long)c->resp_cap);
			return -1;
		}
		if (codec_check(r->codec, s->reply, (size_t)c->resp_len, s->verify, why,
		                sizeof why) < 0) {
			fail(r, s->conn, "%s reply: %s", tr_method_name(c->method), why);
			return -1;
		}
		return 0;
	}
	switch (cfg->method) {
	case TR_ECHO:
	case TR_PULL:
		if (c->resp_len != want) {
			fail(r, s->conn, "%s reply has %llu bytes, expected %llu",
			     tr_method_name(cfg->method), (unsigned long long)c->resp_len,
			     (unsigned long long)want);
			return -1;
		}
		if (c->resp_buf) {
			int64_t at = payload_compare(cfg->payload, 0, c->resp_buf, (size_t)want);
			if (at >= 0) {
				fail(r, s->conn, "Echo reply differs from the payload at byte %lld",
				     (long long)at);
				return -1;
			}
		}
		return 0;
	case TR_ACK:
		if (c->resp_len != 8 || be_get64(s->ack) != want) {
			fail(r, s->conn, "Ack reply counts %llu bytes (%llu-byte body), expected %llu",
			     c->resp_len == 8 ? (unsigned long long)be_get64(s->ack) : 0ull,
			     (unsigned long long)c->resp_len, (unsigned long long)want);
			return -1;
		}
		return 0;
	}
	return 0;
}

/* `calls`: measured in this run so far */
static void progress(const struct run *r, int phase, uint64_t now, uint64_t t_begin,
                     uint64_t calls)
{
	const struct engine_cfg *cfg = r->cfg;
	double el = (double)(now - t_begin) / 1e9;
	char run[32] = "";

	if (cfg->repeat > 1)
		snprintf(run, sizeof run, " run %d/%d", r->run + 1, cfg->repeat);
	if (phase == PH_WARMUP)
		fprintf(stderr, "\r%s: warm-up %.0f/%.0fs   ", cfg->label, el,
		        (double)cfg->warmup_ns / 1e9);
	else if (cfg->iterations)
		fprintf(stderr, "\r%s:%s measuring %llu/%llu calls   ", cfg->label, run,
		        (unsigned long long)calls, (unsigned long long)cfg->iterations);
	else
		fprintf(stderr, "\r%s:%s measuring %.0f/%.0fs, %llu calls   ", cfg->label, run, el,
		        (double)cfg->duration_ns / 1e9, (unsigned long long)calls);
	fflush(stderr);
}

/* Serialized modes: a slot's request and reply buffers, cache-line aligned. */
static size_t req_bytes(const struct run *r)
{
	return (codec_slot_len(r->codec) + 63) & ~(size_t)63;
}

static size_t slot_bytes(const struct run *r)
{
	return req_bytes(r) + ((codec_reply_cap(r->codec) + 63) & ~(size_t)63);
}

/* Serialized modes: the codec, and the memory of every slot's request
 * (serialized) and reply buffers, allocated once. */
static int setup_serialized(struct run *r)
{
	const struct engine_cfg *cfg = r->cfg;
	int rc;

	if (cfg->method != TR_ECHO && cfg->method != TR_ACK) {
		fail(r, -1, "the %s method has no serialized form; use mode = non-serialized",
		     tr_method_name(cfg->method));
		return -EINVAL;
	}
	r->wire = cfg->method == TR_ECHO ? TR_ECHO_TENSOR : TR_ACK_TENSOR;
	rc = codec_open(&r->codec, cfg->payload, cfg->mode, cfg->dtype, r->wire);
	if (rc == -EINVAL) {
		fail(r, -1, "a payload buffer is not a whole number of %s elements",
		     job_dtype_name(cfg->dtype));
		return rc;
	}
	if (rc < 0)
		return rc;
	if (!(r->ser_mem = malloc(slot_bytes(r) * (size_t)r->nslots)))
		return -ENOMEM;
	r->verify_next = 1;
	return 0;
}

static int setup(struct run *r)
{
	const struct engine_cfg *cfg = r->cfg;
	size_t vbytes;
	int rc;

	r->nslots = cfg->nconns * cfg->inflight;
	r->slots = calloc((size_t)r->nslots, sizeof *r->slots);
	r->pending = calloc((size_t)r->nslots, sizeof *r->pending);
	r->res->conn_calls = calloc((size_t)cfg->nconns, sizeof *r->res->conn_calls);
	r->conn_out = calloc((size_t)cfg->nconns, sizeof *r->conn_out);
	r->conn_since = calloc((size_t)cfg->nconns, sizeof *r->conn_since);
	r->res->runs = calloc(cfg->repeat > 1 ? (size_t)cfg->repeat : 1, sizeof *r->res->runs);
	r->run_lat = malloc(sizeof *r->run_lat);
	if (!r->slots || !r->pending || !r->res->conn_calls || !r->conn_out || !r->conn_since ||
	    !r->res->runs || !r->run_lat)
		return -ENOMEM;
	stats_init(r->run_lat);
	if (cfg->interval_ns && cfg->on_interval) {
		if (!(r->ivl_lat = malloc(sizeof *r->ivl_lat)))
			return -ENOMEM;
		stats_init(r->ivl_lat);
	}
	if (cfg->rate) {
		r->idle = calloc((size_t)r->nslots, sizeof *r->idle);
		r->nidle = calloc((size_t)cfg->nconns, sizeof *r->nidle);
		if (!r->idle || !r->nidle)
			return -ENOMEM;
		payload_rng_seed(&r->rng, cfg->seed ^ 0x6f70656e6c6f6f70ull);
	}
	if (cfg->mode != MODE_NONSERIALIZED) {
		if ((rc = setup_serialized(r)) < 0)
			return rc;
	} else if (cfg->method == TR_ECHO) {
		vbytes = (size_t)cfg->payload->total * (cfg->verify_all ? (size_t)r->nslots : 1);
		r->verify_buf = malloc(vbytes ? vbytes : 1);
		if (!r->verify_buf)
			return -ENOMEM;
		r->verify_next = 1;
	}
	for (int i = 0; i < r->nslots; i++) {
		struct slot *s = &r->slots[i];
		s->conn = i % cfg->nconns;
		if (r->idle)
			r->idle[s->conn * cfg->inflight + r->nidle[s->conn]++] = s;
		s->call.user = s;
		if (r->codec) {
			/* the request is set by each encode */
			s->call.method = r->wire;
			s->req = req_bytes(r) ? r->ser_mem + slot_bytes(r) * (size_t)i : NULL;
			s->reply = r->ser_mem + slot_bytes(r) * (size_t)i + req_bytes(r);
			s->call.resp_buf = s->reply;
			s->call.resp_cap = codec_reply_cap(r->codec);
			continue;
		}
		s->call.method = cfg->method;
		switch (cfg->method) {
		case TR_PULL:
			be_put64(s->pull, cfg->payload->total);
			s->pull_iov.iov_base = s->pull;
			s->pull_iov.iov_len = 8;
			s->call.iov = &s->pull_iov;
			s->call.iovcnt = 1;
			break;
		case TR_ACK:
			s->call.resp_buf = s->ack;
			s->call.resp_cap = sizeof s->ack;
			/* fall through */
		default:
			s->call.iov = cfg->payload->iov;
			s->call.iovcnt = (int)cfg->payload->n;
			break;
		}
	}
	return 0;
}

static void teardown(struct run *r)
{
	if (r->slots && r->cfg->ops->call_release)
		for (int i = 0; i < r->nslots; i++)
			r->cfg->ops->call_release(&r->slots[i].call);
	free(r->slots);
	free(r->pending);
	free(r->conn_out);
	free(r->conn_since);
	free(r->idle);
	free(r->nidle);
	free(r->verify_buf);
	free(r->ser_mem);
	free(r->run_lat);
	free(r->ivl_lat);
	codec_close(r->codec);
}

/* The intended start of call `seq` of the open-loop schedule: evenly spaced
 * (computed from the origin, so no rounding drift), or a Poisson process. */
static uint64_t schedule_next(struct run *r)
{
	const struct engine_cfg *cfg = r->cfg;

	r->seq++;
	if (cfg->arrival == ARRIVAL_POISSON) {
		/* exponential gap of mean 1/rate, from a uniform in (0, 1] */
		double u = (double)((payload_rng_next(&r->rng) >> 11) + 1) / 9007199254740992.0;
		return r->next_due + (uint64_t)(-log(u) * 1e9 / (double)cfg->rate);
	}
	return r->sched_base +
	       (uint64_t)((unsigned __int128)r->seq * 1000000000u / cfg->rate);
}

/* Open loop: starts every call that is due and has an idle slot on its
 * connection.  A call whose connection has no idle slot stays due, and its
 * latency, counted from the intended start, grows: a stalled server shows
 * in the percentiles (no coordinated omission). */
static int issue_due(struct run *r, uint64_t now, int measuring, uint64_t t0,
                     uint64_t *submitted_measured)
{
	const struct engine_cfg *cfg = r->cfg;

	while (r->next_due <= now) {
		int c = (int)(r->seq % (uint64_t)cfg->nconns), measured;
		struct slot *s;

		if (!r->nidle[c])
			return 0;
		measured = measuring && r->next_due >= t0;
		if (measured && cfg->iterations && *submitted_measured >= cfg->iterations)
			return 0;
		s = r->idle[c * cfg->inflight + --r->nidle[c]];
		*submitted_measured += (uint64_t)measured;
		if (submit(r, s, r->next_due, measured) < 0)
			return -1;
		r->next_due = schedule_next(r);
	}
	return 0;
}

/* One untimed call with every byte checked: the "last call" check. */
static int final_check(struct run *r)
{
	struct slot *s = &r->slots[0];
	struct tr_call *done[1];
	uint64_t deadline;
	int n;

	r->verify_next = 1;
	if (submit(r, s, now_ns(), 0) < 0)
		return -1;
	deadline = now_ns() + r->cfg->timeout_ns;
	while (r->outstanding) {
		n = r->cfg->ops->reap(r->cfg->client, done, 1, deadline);
		if (n < 0 || (n == 0 && now_ns() >= deadline)) {
			fail(r, s->conn, "no reply to the final verification call within %.1fs",
			     (double)r->cfg->timeout_ns / 1e9);
			return -1;
		}
		r->outstanding -= n;
	}
	return check(r, s);
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

/* Closes run k: its figures from the run histogram, which then joins the
 * overall one.  At a run boundary, never per call. */
static void run_close(struct run *r, struct engine_run_fig *f, const struct engine_run_fig *r0)
{
	struct engine_result *res = r->res;
	const struct stats *s = r->run_lat;

	f->calls = res->calls - r0->calls;
	f->errors = res->errors - r0->errors;
	f->bytes = res->bytes - r0->bytes;
	f->lat_sum_ns = s->sum_ns;
	f->min_ns = s->count ? s->min_ns : 0;
	f->p50_ns = stats_quantile(s, 0.50);
	f->p90_ns = stats_quantile(s, 0.90);
	f->p99_ns = stats_quantile(s, 0.99);
	f->p999_ns = stats_quantile(s, 0.999);
	f->max_ns = s->max_ns;
	res->window_ns += f->window_ns;
	res->offered += f->offered;
	stats_merge(&res->lat, s);
	stats_init(r->run_lat);
}

/* One measured window, after the warm-up when `warmup` is set, drained:
 * on return nothing is outstanding unless the run failed.  Counts go to
 * r->res, latencies to r->run_lat, the window's length and offered calls
 * to f. */
static void window(struct run *r, int warmup, struct engine_run_fig *f)
{
	const struct engine_cfg *cfg = r->cfg;
	struct engine_result *res = r->res;
	struct tr_call *done[REAP_BATCH];
	uint64_t now, t_begin, t0 = 0, t_end = 0, last_done, next_progress, next_hang_check = 0;
	uint64_t submitted_measured = 0, calls0 = res->calls;
	int phase, stopping = 0, hung;

	now = t_begin = last_done = now_ns();
	next_progress = now + 1000000000ull;
	phase = warmup && cfg->warmup_ns ? PH_WARMUP : PH_MEASURE;
	if (phase == PH_MEASURE)
		t0 = now;
	r->sched_base = r->next_due = now;
	r->seq = 0;
	for (int i = 0; i < r->nslots && !stopping && !cfg->rate; i++) {
		int measured = phase == PH_MEASURE;
		if (measured && cfg->iterations && submitted_measured >= cfg->iterations)
			break;
		submitted_measured += (uint64_t)measured;
		stopping = submit(r, &r->slots[i], now, measured) < 0;
	}

	if (cfg->rate)
		stopping |= issue_due(r, now, phase == PH_MEASURE, t0, &submitted_measured) < 0;
	while (r->outstanding > 0 || r->npending > 0 || (cfg->rate && !stopping)) {
		uint64_t deadline = now + POLL_NS;
		int n;

		if (phase == PH_WARMUP && t_begin + cfg->warmup_ns < deadline)
			deadline = t_begin + cfg->warmup_ns;
		else if (phase == PH_MEASURE && !cfg->iterations && !stopping &&
		         t0 + cfg->duration_ns < deadline)
			deadline = t0 + cfg->duration_ns;
		if (cfg->rate && !stopping && r->next_due < deadline &&
		    r->nidle[r->seq % (uint64_t)cfg->nconns])
			deadline = r->next_due;
		if (r->ivl_next && r->ivl_next < deadline)
			deadline = r->ivl_next;
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
			fail(r, -1, "waiting for replies failed: %s", strerror(-n));
			break;
		}
		if (n > 0)
			last_done = now;
		r->outstanding -= n;

		/* phase changes happen before the completions are resubmitted */
		if (phase == PH_WARMUP && now >= t_begin + cfg->warmup_ns) {
			phase = PH_MEASURE;
			t0 = now;
		}
		if (phase == PH_MEASURE && r->ivl_lat && !r->ivl_next) {
			/* intervals start with the first measured window */
			r->ivl_origin = r->ivl_start = t0;
			r->ivl_next = t0 + cfg->interval_ns;
		}
		if (r->ivl_next && now >= r->ivl_next)
			interval_flush(r, now); /* this reap's calls are the next interval's */
		if (phase == PH_MEASURE && !cfg->iterations && !stopping &&
		    now >= t0 + cfg->duration_ns) {
			stopping = 1;
			t_end = t0 + cfg->duration_ns;
		}
		if (*cfg->stop && !stopping) {
			stopping = 1;
			res->end = ENGINE_INTERRUPTED;
			t_end = now;
		}

		for (int i = 0; i < n; i++) {
			struct slot *s = done[i]->user;
			uint64_t lat = now - s->call.t_start_ns, dec_ns = 0;
			int bad;

			r->conn_out[s->conn]--;
			r->conn_since[s->conn] = now;

			if (r->codec) {
				/* the reply is decoded inside the call's latency */
				uint64_t t = s->sampled ? now_ns() : 0, t_done;
				bad = check(r, s) < 0;
				t_done = now_ns();
				lat = t_done - s->call.t_start_ns;
				if (s->sampled)
					dec_ns = t_done - t;
			} else {
				bad = check(r, s) < 0;
			}
			if (bad) {
				res->errors++;
				r->ivl_errors += r->ivl_next != 0; /* not a warm-up call */
				stopping = 1;
				if (!t_end)
					t_end = now;
				continue;
			}
			if (!s->measured) {
				res->warmup_calls++;
			} else if (!t_end || now <= t_end) {
				stats_record(r->run_lat, lat);
				if (r->ivl_lat) {
					stats_record(r->ivl_lat, lat);
					r->ivl_calls++;
				}
				res->calls++;
				if (s->sampled) {
					res->ser_sampled++;
					res->enc_ns += s->enc_ns;
					res->dec_ns += dec_ns;
				}
				res->conn_calls[s->conn]++;
				res->bytes += cfg->payload->total;
			}
			if (cfg->rate) {
				r->idle[s->conn * cfg->inflight + r->nidle[s->conn]++] = s;
				continue;
			}
			if (stopping)
				continue;
			if (phase == PH_MEASURE && cfg->iterations &&
			    submitted_measured >= cfg->iterations)
				continue;
			submitted_measured += phase == PH_MEASURE;
			if (submit(r, s, now, phase == PH_MEASURE) < 0)
				stopping = 1;
		}
		while (r->npending && !stopping) {
			struct slot *s = r->pending[--r->npending];
			if (submit(r, s, now, s->measured) < 0)
				stopping = 1;
		}
		if (stopping)
			r->npending = 0;
		if (cfg->rate && !stopping &&
		    issue_due(r, now, phase == PH_MEASURE, t0, &submitted_measured) < 0)
			stopping = 1;
		if (cfg->rate && cfg->iterations && phase == PH_MEASURE &&
		    submitted_measured >= cfg->iterations && !stopping)
			stopping = 1; /* every measured call is out: drain */

		/* every 10 ms at most: hung_conn looks at every connection */
		if (r->outstanding && now >= next_hang_check &&
		    (next_hang_check = now + 10000000ull, hung = hung_conn(r, now)) >= 0) {
			fail(r, hung, "no reply for %.1fs with %d calls outstanding",
			     (double)cfg->timeout_ns / 1e9, r->conn_out[hung]);
			break;
		}
		if (cfg->progress && now >= next_progress) {
			progress(r, phase, now, phase == PH_WARMUP ? t_begin : t0,
			         res->calls - calls0);
			next_progress = now + 1000000000ull;
		}
	}

	if (phase == PH_MEASURE) {
		if (cfg->iterations && !t_end)
			t_end = last_done;
		f->window_ns = (t_end ? t_end : now) - t0;
		if (cfg->rate)
			f->offered = (uint64_t)((unsigned __int128)f->window_ns * cfg->rate /
			                        1000000000u);
		r->last_end = t0 + f->window_ns;
	}
}

int engine_run(const struct engine_cfg *cfg, struct engine_result *res)
{
	struct run r = {.cfg = cfg, .res = res};
	int rc, repeat = cfg->repeat > 1 ? cfg->repeat : 1;

	memset(res, 0, sizeof *res);
	stats_init(&res->lat);
	res->failed_conn = -1;
	if ((rc = setup(&r)) < 0) {
		teardown(&r);
		return rc == -EINVAL ? -1 : rc; /* -EINVAL: res->err says why */
	}

	for (int k = 0; k < repeat && res->end == ENGINE_DONE; k++) {
		/* the counts before this run */
		struct engine_run_fig r0 = {.calls = res->calls, .errors = res->errors,
		                            .bytes = res->bytes};
		r.run = k;
		window(&r, k == 0, &res->runs[k]);
		run_close(&r, &res->runs[k], &r0);
		res->nruns = (uint32_t)k + 1;
	}
	if (cfg->progress)
		fprintf(stderr, "\r%*s\r", 60, "");
	if (r.ivl_next && r.last_end > r.ivl_start)
		interval_flush(&r, r.last_end); /* the last, partial interval */

	if (res->end == ENGINE_DONE && cfg->method == TR_ECHO && !cfg->verify_all &&
	    r.outstanding == 0)
		final_check(&r);
	teardown(&r);
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
	return f->calls ? (double)f->lat_sum_ns / (double)f->calls : 0.0;
}
