/* engine_call.c - the engine's slots: their setup, and the start and check
 * of one call (see engine.h for what the timed path may do). */
#include "engine.h"
#include "engine_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "util.h"

void engine_fail(struct run *r, int conn, const char *fmt, ...)
{
	va_list ap;

	if (r->res->end == ENGINE_FAILED)
		return; /* keep the first failure */
	r->res->end = ENGINE_FAILED;
	r->res->failed_conn = conn;
	va_start(ap, fmt);
	vsnprintf(r->res->err.msg, sizeof r->res->err.msg, fmt, ap);
	va_end(ap);
}

/* Serialized modes: the request of one call, after its start time.  The
 * first ENGINE_SAMPLE_FIRST measured calls of a run, then one in
 * ENGINE_SAMPLE, time their encode alone. */
static void encode(struct run *r, struct slot *s)
{
	uint64_t t, n;

	if (tr_method_echoes(r->wire)) {
		s->verify = r->cfg->verify_all || r->verify_next;
		r->verify_next = 0;
	}
	/* not a call that checks every byte of its reply when the others do
	 * not (the first and the last): its decode is not the usual one */
	s->sampled = 0;
	if (s->measured && (r->cfg->verify_all || !s->verify)) {
		n = r->nencoded++;
		s->sampled = n < ENGINE_SAMPLE_FIRST || n % ENGINE_SAMPLE == ENGINE_SAMPLE - 1;
	}
	if (!s->sampled) {
		codec_encode(r->codec, s->req, &s->req_iov, &s->call.iov, &s->call.iovcnt);
		return;
	}
	t = now_ns();
	codec_encode(r->codec, s->req, &s->req_iov, &s->call.iov, &s->call.iovcnt);
	s->enc_ns = now_ns() - t;
}

/* Starts a call intended to start at `due` (a closed loop: now). */
int engine_submit(struct run *r, struct slot *s, uint64_t due, uint64_t now, int measured)
{
	const struct engine_cfg *cfg = r->cfg;
	int rc;

	s->measured = measured;
	s->call.t_start_ns = due;
	s->t_sent = now;
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
		engine_fail(r, s->conn, "cannot start a %s call on connection %d: %s",
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
int engine_hung_conn(const struct run *r, uint64_t now)
{
	int hung = -1;

	for (int c = 0; c < r->cfg->nconns; c++)
		if (r->conn_out[c] && now > r->conn_since[c] &&
		    now - r->conn_since[c] > r->cfg->timeout_ns &&
		    (hung < 0 || r->conn_since[c] < r->conn_since[hung]))
			hung = c;
	return hung;
}

/* Checks a completed call against what the method promises. */
int engine_check(struct run *r, struct slot *s)
{
	const struct engine_cfg *cfg = r->cfg;
	const struct tr_call *c = &s->call;
	uint64_t want = cfg->payload->total;

	if (c->status != TR_OK) {
		const char *why = cfg->ops->conn_error ? cfg->ops->conn_error(cfg->conns[s->conn])
		                                      : NULL;
		engine_fail(r, s->conn, "%s call failed with status %s (%d)%s%s", tr_method_name(c->method),
		     tr_status_name(c->status), c->status, why ? ": " : "", why ? why : "");
		return -1;
	}
	if (r->codec) {
		struct err why;
		if (c->resp_len > c->resp_cap) {
			engine_fail(r, s->conn, "%s reply has %llu bytes, more than the %llu expected",
			     tr_method_name(c->method), (unsigned long long)c->resp_len,
			     (unsigned long long)c->resp_cap);
			return -1;
		}
		if (codec_check(r->codec, s->reply, (size_t)c->resp_len, s->verify, &why) < 0) {
			engine_fail(r, s->conn, "%s reply: %s", tr_method_name(c->method), why.msg);
			return -1;
		}
		return 0;
	}
	switch (cfg->method) {
	case TR_ECHO:
	case TR_PULL:
		if (c->resp_len != want) {
			engine_fail(r, s->conn, "%s reply has %llu bytes, expected %llu",
			     tr_method_name(cfg->method), (unsigned long long)c->resp_len,
			     (unsigned long long)want);
			return -1;
		}
		if (c->resp_buf) {
			int64_t at = payload_compare(cfg->payload, 0, c->resp_buf, (size_t)want);
			if (at >= 0) {
				engine_fail(r, s->conn, "Echo reply differs from the payload at byte %lld",
				     (long long)at);
				return -1;
			}
		}
		return 0;
	case TR_ACK:
		if (c->resp_len != 8 || be_get64(s->ack) != want) {
			engine_fail(r, s->conn, "Ack reply counts %llu bytes (%llu-byte body), expected %llu",
			     c->resp_len == 8 ? (unsigned long long)be_get64(s->ack) : 0ull,
			     (unsigned long long)c->resp_len, (unsigned long long)want);
			return -1;
		}
		return 0;
	}
	return 0;
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
		engine_fail(r, -1, "the %s method has no serialized form; use mode = non-serialized",
		     tr_method_name(cfg->method));
		return -EINVAL;
	}
	/* the tensorflow mode calls the in-place twins, so that the server
	 * answers as TensorFlow would (codec.h) */
	if (cfg->mode == MODE_TENSORFLOW)
		r->wire = cfg->method == TR_ECHO ? TR_ECHO_TENSOR_ZC : TR_ACK_TENSOR_ZC;
	else
		r->wire = cfg->method == TR_ECHO ? TR_ECHO_TENSOR : TR_ACK_TENSOR;
	rc = codec_open(&r->codec, cfg->payload, cfg->mode, cfg->dtype, r->wire);
	if (rc == -EINVAL) {
		engine_fail(r, -1, "a payload buffer is not a whole number of %s elements",
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

int engine_setup(struct run *r)
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
		rng_seed(&r->rng, cfg->seed ^ 0x6f70656e6c6f6f70ull);
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

void engine_teardown(struct run *r)
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

/* One untimed call with every byte checked: the "last call" check. */
int engine_final_check(struct run *r)
{
	struct slot *s = &r->slots[0];
	struct tr_call *done[1];
	uint64_t deadline;
	int n;

	uint64_t now = now_ns();

	r->verify_next = 1;
	if (engine_submit(r, s, now, now, 0) < 0)
		return -1;
	deadline = now_ns() + r->cfg->timeout_ns;
	while (r->outstanding) {
		n = r->cfg->ops->reap(r->cfg->client, done, 1, deadline);
		if (n < 0 || (n == 0 && now_ns() >= deadline)) {
			engine_fail(r, s->conn, "no reply to the final verification call within %.1fs",
			     (double)r->cfg->timeout_ns / 1e9);
			return -1;
		}
		r->outstanding -= n;
	}
	return engine_check(r, s);
}
