/* step.c - the pulls and pushes of training steps (see step.h). */
#include "step.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Per variable: its call (reused by both phases) and its requests. */
struct step_slot {
	struct tr_call call;
	struct iovec iov[2];
	unsigned char pull[8];  /* Pull body: the bytes asked for, big-endian */
	unsigned char ack[32];  /* Ack reply (8 bytes), or a BundleAck */
	uint64_t req_bytes;     /* the request body of the call in flight */
	/* the tensor modes: in the state's block */
	unsigned char *req;     /* the TensorPull (tensorflow: encoded once) */
	size_t req_len;
	unsigned char *hdr;     /* tensorflow: the push bundle up to its content */
	size_t hdr_len;
	unsigned char *buf;     /* the variable's buffer: the pull's reply lands here, */
	size_t cap;             /* a serialized push is packed here */
	size_t var;
};

struct step_state {
	const struct step_cfg *cfg;
	struct step_result *res;
	struct step_slot *slot;      /* nvars */
	size_t **queue;              /* per conn: its variables, creation order */
	size_t *nqueue;              /* per conn */
	size_t *next;                /* per conn: next variable of the phase to start */
	int *outstanding;            /* per conn */
	struct tr_call **done;       /* reap buffer */
	int ndone_max;
	struct iovec grad;
	unsigned char *block;        /* tensor modes: every slot's req, hdr and buf */
	struct codec_arena arena;    /* serialized: replies are unpacked here */
	uint64_t *ends;              /* the timeline's per connection ends of this phase, or NULL */
};

static int fail(struct step_state *s, int conn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct step_state *s, int conn, const char *fmt, ...)
{
	va_list ap;

	if (s->res->end == STEP_FAILED)
		return -1; /* keep the first */
	va_start(ap, fmt);
	vsnprintf(s->res->err.msg, sizeof s->res->err.msg, fmt, ap);
	va_end(ap);
	s->res->end = STEP_FAILED;
	s->res->failed_conn = conn;
	return -1;
}

/* Pull and Ack with raw bytes (non-serialized). */
static void call_raw(struct step_state *s, struct step_slot *sl, int push)
{
	if (push) {
		sl->call.method = TR_ACK;
		s->grad.iov_len = (size_t)s->cfg->var[sl->var].bytes;
		sl->iov[0] = s->grad;
		sl->call.resp_buf = sl->ack;
		sl->call.resp_cap = 8;
	} else {
		sl->call.method = TR_PULL;
		sl->iov[0] = (struct iovec){sl->pull, sizeof sl->pull};
		sl->call.resp_buf = NULL; /* checked by length, never copied */
		sl->call.resp_cap = 0;
	}
	sl->call.iovcnt = 1;
}

/* PullTensor and AckTensor (serialized: packed now), or their ZeroCopy
 * forms (tensorflow: encoded at setup, the gradient an iovec of its own). */
static void call_tensor(struct step_state *s, struct step_slot *sl, int push)
{
	const struct step_var *v = &s->cfg->var[sl->var];
	int tf = s->cfg->mode == MODE_TENSORFLOW;

	sl->call.iovcnt = 1;
	if (push) {
		sl->call.method = tf ? TR_ACK_TENSOR_ZC : TR_ACK_TENSOR;
		sl->call.resp_buf = sl->ack;
		sl->call.resp_cap = sizeof sl->ack;
		if (tf) {
			sl->iov[0] = (struct iovec){sl->hdr, sl->hdr_len};
			sl->iov[1] = (struct iovec){s->grad.iov_base, (size_t)v->bytes};
			sl->call.iovcnt = v->bytes ? 2 : 1;
		} else {
			sl->iov[0] = (struct iovec){sl->buf, codec_var_pack(&v->t, s->grad.iov_base,
			                                                       sl->buf)};
		}
		return;
	}
	sl->call.method = tf ? TR_PULL_TENSOR_ZC : TR_PULL_TENSOR;
	if (!tf)
		sl->req_len = codec_var_pull(&v->t, MODE_SERIALIZED, sl->req);
	sl->iov[0] = (struct iovec){sl->req, sl->req_len};
	sl->call.resp_buf = sl->buf;
	sl->call.resp_cap = sl->cap;
}

/* Starts transfers of the phase on conn until it has `inflight` out or none
 * is left. */
static int fill(struct step_state *s, int conn, int push)
{
	const struct step_cfg *cfg = s->cfg;

	while (s->outstanding[conn] < cfg->inflight && s->next[conn] < s->nqueue[conn]) {
		size_t v = s->queue[conn][s->next[conn]];
		struct step_slot *sl = &s->slot[v];
		int rc;

		if (cfg->mode == MODE_NONSERIALIZED)
			call_raw(s, sl, push);
		else
			call_tensor(s, sl, push);
		sl->call.iov = sl->iov;
		sl->req_bytes = sl->iov[0].iov_len + (sl->call.iovcnt > 1 ? sl->iov[1].iov_len : 0);
		sl->call.status = -1;
		sl->call.resp_len = 0;
		rc = cfg->ops->submit(cfg->conns[conn], &sl->call);
		if (rc == -EAGAIN)
			break; /* no room now: the next completion makes some */
		if (rc < 0) {
			const char *why = cfg->ops->conn_error ? cfg->ops->conn_error(cfg->conns[conn])
			                                       : NULL;
			return fail(s, conn, "%s of variable %zu to PS %d could not start: %s",
			            push ? "push" : "pull", v, conn, why ? why : strerror(-rc));
		}
		s->outstanding[conn]++;
		s->next[conn]++;
	}
	return 0;
}

/* Checks a tensor mode's reply, a status of OK. */
static int check_tensor(struct step_state *s, struct step_slot *sl, int push)
{
	const struct step_var *v = &s->cfg->var[sl->var];
	const struct tr_call *c = &sl->call;
	struct err err;

	if (c->resp_len > c->resp_cap)
		return fail(s, v->conn, "%s of variable %zu ('%s') to PS %d: a %llu-byte reply, "
		            "expected at most %zu", push ? "push" : "pull", sl->var, v->t.name, v->conn,
		            (unsigned long long)c->resp_len, c->resp_cap);
	if (codec_var_check(&v->t, s->cfg->mode, push, c->resp_buf, (size_t)c->resp_len, &s->arena,
	                    &err) < 0)
		return fail(s, v->conn, "%s of variable %zu to PS %d: the reply %s",
		            push ? "push" : "pull", sl->var, v->conn, err.msg);
	return 0;
}

/* Checks one completed transfer. */
static int check(struct step_state *s, struct step_slot *sl, int push)
{
	const struct step_var *v = &s->cfg->var[sl->var];
	const struct tr_call *c = &sl->call;

	if (c->status != TR_OK) {
		const char *why = s->cfg->ops->conn_error ?
		                  s->cfg->ops->conn_error(s->cfg->conns[v->conn]) : NULL;
		return fail(s, v->conn, "%s of variable %zu (%llu bytes) to PS %d: %s%s%s",
		            push ? "push" : "pull", sl->var, (unsigned long long)v->bytes, v->conn,
		            tr_status_name(c->status), why ? ": " : "", why ? why : "");
	}
	if (s->cfg->mode != MODE_NONSERIALIZED)
		return check_tensor(s, sl, push);
	if (push ? (c->resp_len != 8 || be_get64(sl->ack) != v->bytes) : c->resp_len != v->bytes)
		return fail(s, v->conn, "%s of variable %zu to PS %d: the PS %s %llu bytes, "
		            "expected %llu", push ? "push" : "pull", sl->var, v->conn,
		            push ? "acknowledged" : "sent",
		            (unsigned long long)(push ? (c->resp_len == 8 ? be_get64(sl->ack) : 0)
		                                      : c->resp_len),
		            (unsigned long long)v->bytes);
	return 0;
}

/* One phase: every variable's pull (push = 0) or push, all started at once
 * up to the bound.  0 or -1. */
static int phase(struct step_state *s, int push, int measured)
{
	const struct step_cfg *cfg = s->cfg;
	size_t left = cfg->nvars;

	for (int k = 0; k < cfg->nconns; k++) {
		s->next[k] = 0;
		s->outstanding[k] = 0;
	}
	for (int k = 0; k < cfg->nconns; k++)
		if (fill(s, k, push) < 0)
			return -1;
	while (left > 0) {
		int n = cfg->ops->reap(cfg->client, s->done, s->ndone_max,
		                       now_ns() + cfg->timeout_ns);

		if (n < 0)
			return fail(s, -1, "waiting for completions: %s", strerror(-n));
		if (n == 0) {
			for (int k = 0; k < cfg->nconns; k++)
				if (s->outstanding[k] > 0)
					return fail(s, k, "no answer from PS %d for %.3g s "
					            "(job.timeout) with %d transfers outstanding", k,
					            (double)cfg->timeout_ns / 1e9, s->outstanding[k]);
			return fail(s, -1, "no completion for %.3g s (job.timeout)",
			            (double)cfg->timeout_ns / 1e9);
		}
		for (int i = 0; i < n; i++) {
			struct step_slot *sl = s->done[i]->user;
			int conn = cfg->var[sl->var].conn;

			s->outstanding[conn]--;
			left--;
			if (check(s, sl, push) < 0)
				return -1;
			if (measured) {
				s->res->bytes_out[conn] += sl->req_bytes;
				s->res->bytes_in[conn] += sl->call.resp_len;
			}
			if (fill(s, conn, push) < 0)
				return -1;
			if (s->ends && !s->outstanding[conn] && s->next[conn] == s->nqueue[conn])
				s->ends[conn] = now_ns();
		}
	}
	return 0;
}

/* Where phase `push` of the step now starting puts its connections' ends:
 * the timeline's, while it has room for this measured step. */
static void phase_ends(struct step_state *s, int measured, int push)
{
	const struct step_cfg *cfg = s->cfg;
	size_t k = s->res->steps;

	s->ends = measured && cfg->marks && k < cfg->nmarks
	              ? cfg->conn_end + (2 * k + (size_t)push) * (size_t)cfg->nconns
	              : NULL;
	for (int c = 0; s->ends && c < cfg->nconns; c++)
		s->ends[c] = 0; /* a connection with no variable: none */
}

static void release(struct step_state *s)
{
	const struct step_cfg *cfg = s->cfg;

	if (s->slot)
		for (size_t i = 0; i < cfg->nvars; i++)
			cfg->ops->call_release(&s->slot[i].call);
	if (s->queue)
		for (int k = 0; k < cfg->nconns; k++)
			free(s->queue[k]);
	free(s->queue);
	free(s->nqueue);
	free(s->next);
	free(s->outstanding);
	free(s->done);
	free(s->slot);
	free(s->block);
	codec_arena_free(&s->arena);
}

void step_result_free(struct step_result *res)
{
	if (!res)
		return;
	free(res->bytes_out);
	free(res->bytes_in);
	res->bytes_out = res->bytes_in = NULL;
}

#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

/* The tensor modes: per variable its TensorPull, its push header and its
 * buffer (the bundle and slack for a peer that encodes it differently),
 * in one block; the serialized mode's arena. */
static int setup_tensors(struct step_state *s)
{
	const struct step_cfg *cfg = s->cfg;
	size_t total = 0, at = 0, most = 0;

	for (size_t i = 0; i < cfg->nvars; i++) {
		size_t h = CODEC_PULL_HDR_MAX(strlen(cfg->var[i].t.name));
		size_t b = (size_t)codec_var_bundle_len(&cfg->var[i].t) + STEP_REPLY_SLACK;

		total += 2 * ALIGN64(h) + ALIGN64(b);
		if (b > most)
			most = b;
	}
	if (!(s->block = malloc(total ? total : 1)))
		return -ENOMEM;
	for (size_t i = 0; i < cfg->nvars; i++) {
		struct step_slot *sl = &s->slot[i];
		const struct codec_var *t = &cfg->var[i].t;
		size_t h = ALIGN64(CODEC_PULL_HDR_MAX(strlen(t->name)));

		sl->req = s->block + at;
		sl->hdr = sl->req + h;
		sl->buf = sl->hdr + h;
		sl->cap = (size_t)codec_var_bundle_len(t) + STEP_REPLY_SLACK;
		at += 2 * h + ALIGN64(sl->cap);
		sl->req_len = codec_var_pull(t, MODE_TENSORFLOW, sl->req);
		sl->hdr_len = codec_var_header(t, sl->hdr);
	}
	return codec_arena_init(&s->arena, cfg->mode == MODE_SERIALIZED ? most + 4096 : 0);
}

static int setup(struct step_state *s)
{
	const struct step_cfg *cfg = s->cfg;
	int n = cfg->nconns;

	s->slot = calloc(cfg->nvars, sizeof *s->slot);
	s->queue = calloc((size_t)n, sizeof *s->queue);
	s->nqueue = calloc((size_t)n, sizeof *s->nqueue);
	s->next = calloc((size_t)n, sizeof *s->next);
	s->outstanding = calloc((size_t)n, sizeof *s->outstanding);
	s->ndone_max = n * cfg->inflight;
	s->done = calloc((size_t)s->ndone_max, sizeof *s->done);
	s->res->bytes_out = calloc((size_t)n, sizeof *s->res->bytes_out);
	s->res->bytes_in = calloc((size_t)n, sizeof *s->res->bytes_in);
	if (!s->slot || !s->queue || !s->nqueue || !s->next || !s->outstanding || !s->done ||
	    !s->res->bytes_out || !s->res->bytes_in)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->nvars; i++)
		s->nqueue[cfg->var[i].conn]++;
	for (int k = 0; k < n; k++)
		if (s->nqueue[k] && !(s->queue[k] = calloc(s->nqueue[k], sizeof **s->queue)))
			return -ENOMEM;
	for (int k = 0; k < n; k++)
		s->nqueue[k] = 0;
	for (size_t i = 0; i < cfg->nvars; i++) {
		int k = cfg->var[i].conn;

		s->queue[k][s->nqueue[k]++] = i;
		s->slot[i].var = i;
		s->slot[i].call.user = &s->slot[i];
		be_put64(s->slot[i].pull, cfg->var[i].bytes);
		s->res->bytes += 2 * cfg->var[i].bytes;
	}
	s->grad.iov_base = (void *)cfg->grad;
	return cfg->mode == MODE_NONSERIALIZED ? 0 : setup_tensors(s);
}

int step_run(const struct step_cfg *cfg, struct step_result *res)
{
	struct step_state s = {.cfg = cfg, .res = res};
	uint64_t total = cfg->warmup_steps + cfg->steps, first = 0;
	int rc = 0;

	memset(res, 0, sizeof *res);
	stats_init(&res->step);
	stats_init(&res->pull);
	stats_init(&res->push);
	res->failed_conn = -1;
	for (size_t i = 0; i < cfg->nvars; i++)
		if (cfg->var[i].conn < 0 || cfg->var[i].conn >= cfg->nconns) {
			snprintf(res->err.msg, sizeof res->err.msg, "variable %zu placed on PS %d of %d", i,
			         cfg->var[i].conn, cfg->nconns);
			res->end = STEP_FAILED;
			return -1;
		}
	if (setup(&s) < 0) {
		release(&s);
		step_result_free(res);
		return -ENOMEM;
	}
	for (uint64_t k = 0; k < total; k++) {
		int measured = k >= cfg->warmup_steps;
		/* the barrier's call, for the timeline alone */
		uint64_t t0, t1, tc, t2, tb = cfg->marks && cfg->barrier ? now_ns() : 0;

		if (cfg->stop && *cfg->stop) {
			res->end = STEP_INTERRUPTED;
			rc = 1;
			break;
		}
		if (cfg->barrier && cfg->barrier(cfg->barrier_arg, k, &res->err) != 0) {
			res->end = STEP_FAILED;
			rc = -1;
			break;
		}
		t0 = now_ns();
		if (measured && res->steps == 0)
			first = t0;
		phase_ends(&s, measured, 0);
		if (phase(&s, 0, measured) < 0) {
			rc = -1;
			break;
		}
		t1 = tc = now_ns();
		if (measured && cfg->compute) {
			uint64_t d = cfg->compute(cfg->compute_arg, res->steps);
			res->injected_ns += d;
			tc = d ? now_ns() : t1;
		}
		phase_ends(&s, measured, 1);
		if (phase(&s, 1, measured) < 0) {
			rc = -1;
			break;
		}
		t2 = now_ns();
		if (!measured) {
			res->warmup_steps++;
			continue;
		}
		stats_record(&res->step, t2 - t0);
		stats_record(&res->pull, t1 - t0);
		stats_record(&res->push, t2 - tc);
		if (cfg->marks && res->steps < cfg->nmarks) {
			cfg->marks[res->steps] = (struct step_mark){tb ? tb : t0, t0, t1, tc, t2};
			res->nmarks = res->steps + 1;
		}
		res->steps++;
		res->window_ns = t2 - first;
	}
	if (rc < 0 && cfg->stop && *cfg->stop && res->end == STEP_FAILED && res->failed_conn < 0) {
		res->end = STEP_INTERRUPTED;
		rc = 1;
	}
	release(&s);
	return rc;
}
