/* check_engine.c - the call engine against an in-process fake transport.
 *
 * The fake completes calls in order after a fixed service time and can be
 * told to fail one call, corrupt an echo, or never answer; it stands in for
 * a transport only here, to test the engine's windows and checks. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "check_tfgb.h"
#include "engine.h"
#include "util.h"

#define FAKE_MAX 256

struct fake {
	struct tr_call *q[FAKE_MAX];
	uint64_t due[FAKE_MAX];  /* completion time: a serial server */
	uint64_t busy_until;
	int head, tail;
	uint64_t service_ns;
	uint64_t calls;
	uint64_t fail_at;     /* 1-based call number answered UNAVAILABLE, 0 none */
	uint64_t corrupt_at;  /* 1-based call number whose echo is altered */
	int silent;           /* never complete anything */
	uint64_t stop_at;     /* 1-based call number whose completion raises the stop flag */
	int max_outstanding;
	const struct payload *p;
};

static struct fake fk;
static volatile sig_atomic_t stop_flag;

static int fake_submit(struct tr_conn *conn, struct tr_call *c)
{
	(void)conn;
	uint64_t now = now_ns(), start;

	ck_assert_int_lt(fk.tail - fk.head, FAKE_MAX);
	start = now > fk.busy_until ? now : fk.busy_until;
	fk.busy_until = start + fk.service_ns;
	fk.due[fk.tail % FAKE_MAX] = fk.busy_until;
	fk.q[fk.tail++ % FAKE_MAX] = c;
	if (fk.tail - fk.head > fk.max_outstanding)
		fk.max_outstanding = fk.tail - fk.head;
	return 0;
}

static void complete(struct tr_call *c)
{
	uint64_t n = ++fk.calls, total = 0;

	for (int i = 0; i < c->iovcnt; i++)
		total += c->iov[i].iov_len;
	c->status = n == fk.fail_at ? TR_UNAVAILABLE : TR_OK;
	if (n == fk.stop_at)
		stop_flag = 1; /* as a Ctrl-C would */
	if (c->method == TR_ACK) {
		unsigned char b[8];
		for (int i = 7; i >= 0; i--, total >>= 8)
			b[i] = (unsigned char)total;
		memcpy(c->resp_buf, b, 8);
		c->resp_len = 8;
		return;
	}
	c->resp_len = total;
	if (c->resp_buf) {
		size_t off = 0;
		for (int i = 0; i < c->iovcnt; i++) {
			memcpy((char *)c->resp_buf + off, c->iov[i].iov_base, c->iov[i].iov_len);
			off += c->iov[i].iov_len;
		}
		if (n == fk.corrupt_at)
			((unsigned char *)c->resp_buf)[off - 1] ^= 1;
	}
}

static int fake_reap(struct tr_client *cl, struct tr_call **done, int max, uint64_t deadline)
{
	int n = 0;
	(void)cl;
	for (;;) {
		uint64_t now = now_ns();
		while (!fk.silent && fk.head < fk.tail && n < max &&
		       now >= fk.due[fk.head % FAKE_MAX]) {
			struct tr_call *c = fk.q[fk.head++ % FAKE_MAX];
			complete(c);
			done[n++] = c;
		}
		if (n || now >= deadline)
			return n;
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
}

static const struct tr_ops fake_ops = {
	.name = "fake", .size = sizeof(struct tr_ops),
	.submit = fake_submit, .reap = fake_reap,
};

static struct job job;
static struct payload pl;
static struct tr_conn *conns[2];

static void setup(void)
{
	memset(&fk, 0, sizeof fk);
	fk.service_ns = 20000;
	stop_flag = 0;
	ck_assert_int_eq(job_init(&job), 0);
	job.iovecs = 3;
	job.cat_size[CAT_LARGE] = 1 << 20;
	ck_assert_int_eq(payload_layout(&job, &pl), 0);
	ck_assert_int_eq(payload_alloc(&pl), 0);
	fk.p = &pl;
}

static void teardown(void)
{
	payload_free(&pl);
	job_free(&job);
}

static struct engine_cfg cfg_of(int method, int inflight)
{
	struct engine_cfg c = {
		.ops = &fake_ops, .conns = conns, .nconns = 1, .method = method, .payload = &pl,
		.inflight = inflight, .warmup_ns = 0, .duration_ns = 0, .iterations = 0,
		.timeout_ns = 2000000000ull, .stop = &stop_flag, .label = "test",
	};
	return c;
}

START_TEST(test_engine_iterations_exact)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;

	c.iterations = 500;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.calls, 500);
	ck_assert_uint_eq(r.lat.count, 500);
	ck_assert_uint_eq(r.errors, 0);
	ck_assert_uint_eq(r.bytes, 500 * pl.total);
	ck_assert_uint_ge(r.lat.min_ns, fk.service_ns);
	ck_assert_int_eq(fk.max_outstanding, 1);
	/* 500 measured and one final verification call */
	ck_assert_uint_eq(fk.calls, 501);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_warmup_discarded)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;

	c.warmup_ns = 50000000ull; /* 50 ms */
	c.iterations = 100;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_gt(r.warmup_calls, 0);
	ck_assert_uint_eq(r.calls, 100);
	ck_assert_uint_eq(fk.calls, r.warmup_calls + 100 + 1);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_duration_window)
{
	struct engine_cfg c = cfg_of(TR_ACK, 4);
	struct engine_result r;

	c.duration_ns = 100000000ull; /* 100 ms */
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.window_ns, c.duration_ns);
	/* no warm-up: every call completed in the window was started in it,
	 * and the 4 outstanding when it closed are drained, timed, not counted
	 * (exact, however late a loaded machine reaps) */
	ck_assert_uint_eq(r.lat.count, r.calls + 4);
	ck_assert_int_eq(fk.max_outstanding, 4);
	/* the rates are calls and bytes over the 100 ms window, per second */
	ck_assert_double_eq_tol(engine_rate(&r), (double)r.calls * 10.0, 1e-6 * (double)r.calls);
	ck_assert_double_eq_tol(engine_bytes_per_s(&r), (double)r.bytes * 10.0,
	                        1e-6 * (double)r.bytes);
	ck_assert_uint_eq(r.conn_calls[0], r.calls);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_inflight_kept)
{
	struct engine_cfg c = cfg_of(TR_ACK, 16);
	struct engine_result r;

	c.iterations = 1000;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.calls, 1000);
	ck_assert_int_eq(fk.max_outstanding, 16);
	ck_assert_uint_eq(fk.calls, 1000); /* Ack needs no final echo check */
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_failed_status_stops)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;

	c.iterations = 100;
	fk.fail_at = 10;
	ck_assert_int_eq(engine_run(&c, &r), -1);
	ck_assert_int_eq(r.end, ENGINE_FAILED);
	ck_assert_uint_eq(r.errors, 1);
	ck_assert_uint_eq(r.calls, 9);
	ck_assert_ptr_nonnull(strstr(r.err.msg, "UNAVAILABLE"));
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_first_echo_verified)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;

	c.iterations = 10;
	fk.corrupt_at = 1;
	ck_assert_int_eq(engine_run(&c, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.err.msg, "differs"));
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_last_echo_verified)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;

	c.iterations = 10;
	fk.corrupt_at = 11; /* the final, untimed check */
	ck_assert_int_eq(engine_run(&c, &r), -1);
	ck_assert_uint_eq(r.calls, 10);
	ck_assert_ptr_nonnull(strstr(r.err.msg, "differs"));
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_middle_corruption_needs_verify)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;

	c.iterations = 10;
	fk.corrupt_at = 5;
	ck_assert_int_eq(engine_run(&c, &r), 0); /* not checked by default ... */
	engine_result_free(&r);
	memset(&fk, 0, sizeof fk);
	fk.service_ns = 20000;
	fk.corrupt_at = 5;
	c.verify_all = 1;
	ck_assert_int_eq(engine_run(&c, &r), -1); /* ... but with verify = yes */
	ck_assert_uint_eq(r.calls, 4);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_silent_server_times_out)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;
	uint64_t t0 = now_ns();

	c.iterations = 10;
	c.timeout_ns = 200000000ull;
	fk.silent = 1;
	ck_assert_int_eq(engine_run(&c, &r), -1);
	ck_assert_ptr_nonnull(strstr(r.err.msg, "no reply"));
	ck_assert_uint_lt(now_ns() - t0, (uint64_t)(2e9 * tfgb_test_slow()));
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_stop_flag_interrupts)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;

	c.duration_ns = 3600ull * 1000000000ull;
	stop_flag = 1;
	ck_assert_int_eq(engine_run(&c, &r), 1);
	ck_assert_int_eq(r.end, ENGINE_INTERRUPTED);
	engine_result_free(&r);
}
END_TEST

/* The schedule never runs ahead of the rate: 500 calls at 2000 calls/s take
 * at least ~250 ms however fast the server is (a loaded machine only makes
 * it longer, so the lower bound is the robust check). */
START_TEST(test_engine_open_loop_rate)
{
	struct engine_cfg c = cfg_of(TR_ACK, 4);
	struct engine_result r;

	c.rate = 2000;
	c.iterations = 500;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.calls, 500);
	ck_assert_msg(r.window_ns >= 240000000ull, "500 calls in %llu ns",
	              (unsigned long long)r.window_ns);
	/* offered = the calls due within the window: about 500 on schedule,
	 * more when a loaded machine stretched the window, never more than the
	 * window's length at 2000 calls/s */
	ck_assert_uint_le(r.offered, r.window_ns / 500000 + 1);
	ck_assert_int_le(fk.max_outstanding, 4);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_open_loop_window)
{
	struct engine_cfg c = cfg_of(TR_ACK, 4);
	struct engine_result r;

	c.rate = 2000;
	c.duration_ns = 250000000ull; /* 500 calls due */
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.offered, 500);
	ck_assert_uint_le(r.calls, 500);
	ck_assert_uint_gt(r.calls, 0);
	ck_assert_uint_eq(r.lat.count + r.missed, r.offered);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_open_loop_poisson)
{
	/* 500 exponential gaps of mean 0.5 ms: 250 ms, standard deviation 11 ms */
	struct engine_cfg c = cfg_of(TR_ACK, 8);
	struct engine_result r;

	c.rate = 2000;
	c.arrival = ARRIVAL_POISSON;
	c.seed = 7;
	c.iterations = 500;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.calls, 500);
	ck_assert_msg(r.window_ns >= 190000000ull, "500 calls in %llu ns",
	              (unsigned long long)r.window_ns);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_open_loop_shows_stall)
{
	/* a server at 5 ms a call offered 1000 calls/s with one slot: the
	 * backlog grows, and latency from the intended start shows it */
	struct engine_cfg c = cfg_of(TR_ACK, 1);
	struct engine_result r;

	fk.service_ns = 5000000ull;
	c.rate = 1000;
	c.duration_ns = 300000000ull;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_lt(r.calls, r.offered / 2);
	ck_assert_uint_gt(stats_quantile(&r.lat, 0.99), 100000000ull); /* > 100 ms */
	ck_assert_uint_ge(r.lat.min_ns, fk.service_ns);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_open_loop_iterations)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 2);
	struct engine_result r;

	c.rate = 5000;
	c.iterations = 100;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.calls, 100);
	engine_result_free(&r);
}
END_TEST

/* Open loop past saturation, after a warm-up that left a backlog: the
 * window still measures the calls intended inside it (the schedule starts
 * afresh), says it is saturated, and keeps the service times apart.  On
 * the old engine the backlog's calls all had intended starts before the
 * window: 0 calls. */
START_TEST(test_engine_open_loop_saturated)
{
	struct engine_cfg c = cfg_of(TR_ACK, 1);
	struct engine_result r;

	fk.service_ns = 5000000ull; /* 200 calls/s at most */
	c.rate = 1000;
	c.warmup_ns = 100000000ull;
	c.duration_ns = 300000000ull;
	c.timeout_ns = 200000000ull; /* the late starts: at most 200 ms after the window */
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_gt(r.calls, 0);
	ck_assert_uint_eq(r.offered, 300);
	ck_assert_uint_gt(r.missed, 0);
	ck_assert_uint_le(r.calls, 300 / 5 + 1);
	ck_assert(engine_saturated(r.calls, r.offered, r.missed));
	/* every measured call has both latencies; the corrected one includes
	 * the queueing the service time leaves out */
	ck_assert_uint_gt(r.lat.count, 0);
	ck_assert_uint_eq(r.svc.count, r.lat.count);
	ck_assert_uint_eq(r.lat.count + r.missed, r.offered);
	ck_assert_uint_lt(stats_quantile(&r.svc, 0.5), (uint64_t)(20e6 * tfgb_test_slow()));
	ck_assert_uint_gt(stats_quantile(&r.lat, 0.99), 100000000ull);
	engine_result_free(&r);
}
END_TEST

/* Below saturation the achieved calls match the offered ones, nothing is
 * missed, and it is not called saturated.  The calls a loaded machine
 * starts late near the window's end complete after it: the window is 400 ms
 * times TFGB_TEST_SLOW, so that they stay under the 5% of a saturation. */
START_TEST(test_engine_open_loop_keeps_up)
{
	struct engine_cfg c = cfg_of(TR_ACK, 4);
	struct engine_result r;
	uint64_t due = (uint64_t)(400 * tfgb_test_slow());

	c.rate = 1000;
	c.warmup_ns = 50000000ull;
	c.duration_ns = due * 1000000ull;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.offered, due);
	ck_assert_uint_eq(r.missed, 0);
	ck_assert_uint_eq(r.lat.count, due);
	ck_assert_uint_ge(r.calls, due - due / 20);
	ck_assert_uint_le(r.calls, due + 4);
	ck_assert(!engine_saturated(r.calls, r.offered, r.missed));
	ck_assert_uint_eq(r.svc.count, r.lat.count);
	ck_assert_uint_le(r.svc.max_ns, r.lat.max_ns);
	engine_result_free(&r);
}
END_TEST

/* A window of time counts the calls that complete inside it, whenever
 * they started: with 32 calls in flight (a server of 1 ms a call: 32 ms of
 * latency) each slot's first completion in the window is a warm-up call
 * (counted, not timed) and its last call started in the window completes in
 * the drain (timed, not counted), so the calls counted equal the latencies
 * recorded, exactly, over 100 ms as over 400 ms: calls / window does not
 * depend on the window's length.  Counts, not rates, so a loaded machine
 * cannot fail it.  The old engine counted only the calls started in the
 * window (32 fewer: about 68% of the rate at 100 ms); counting the drained
 * ones, or draining the warm-up first, is 32 apart the other way. */
START_TEST(test_engine_window_edges_exact)
{
	struct engine_cfg c = cfg_of(TR_ACK, 32);
	struct engine_result r;

	fk.service_ns = 1000000ull;
	c.warmup_ns = 60000000ull;
	for (uint64_t ms = 100; ms <= 400; ms += 300) {
		memset(&fk, 0, sizeof fk);
		fk.service_ns = 1000000ull;
		fk.p = &pl;
		c.duration_ns = ms * 1000000ull;
		ck_assert_int_eq(engine_run(&c, &r), 0);
		ck_assert_uint_eq(r.window_ns, c.duration_ns);
		ck_assert_msg(r.lat.count == r.calls, "%llu ms: %llu calls counted, %llu timed",
		              (unsigned long long)ms, (unsigned long long)r.calls,
		              (unsigned long long)r.lat.count);
		ck_assert_uint_eq(r.bytes, r.calls * pl.total);
		ck_assert_int_eq(fk.max_outstanding, 32);
		engine_result_free(&r);
	}
}
END_TEST

/* Repeated windows of time follow each other without a drain: the calls
 * in flight cross each boundary, counted in the run they complete in, so
 * over the runs the calls counted equal the latencies recorded exactly (the
 * old engine drained and refilled each run: 32 more timed than counted at
 * each boundary). */
START_TEST(test_engine_repeat_windows_continuous)
{
	struct engine_cfg c = cfg_of(TR_ACK, 32);
	struct engine_result r;
	uint64_t lats = 0, calls = 0;

	fk.service_ns = 1000000ull;
	c.warmup_ns = 60000000ull;
	c.duration_ns = 100000000ull;
	c.repeat = 3;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.nruns, 3);
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_eq(r.runs[k].window_ns, c.duration_ns);
		lats += r.runs[k].lat_count;
		calls += r.runs[k].calls;
	}
	ck_assert_uint_eq(lats, r.lat.count);
	ck_assert_uint_eq(calls, r.calls);
	ck_assert_msg(r.lat.count == r.calls, "%llu calls counted, %llu timed",
	              (unsigned long long)r.calls, (unsigned long long)r.lat.count);
	ck_assert_int_eq(fk.max_outstanding, 32);
	engine_result_free(&r);
}
END_TEST

/* Stopped in the warm-up: the warm-up as run, not as asked. */
START_TEST(test_engine_warmup_as_run)
{
	struct engine_cfg c = cfg_of(TR_ACK, 1);
	struct engine_result r;

	fk.service_ns = 1000000ull;
	fk.stop_at = 20;
	c.warmup_ns = 5000000000ull;
	c.duration_ns = 1000000000ull;
	ck_assert_int_eq(engine_run(&c, &r), 1);
	ck_assert_int_eq(r.end, ENGINE_INTERRUPTED);
	ck_assert_uint_gt(r.warmup_ns, 15000000ull);
	ck_assert_uint_lt(r.warmup_ns, (uint64_t)(2e9 * tfgb_test_slow()));
	ck_assert_uint_ge(r.warmup_calls, 19);
	ck_assert_uint_eq(r.calls, 0);
	ck_assert_uint_eq(r.window_ns, 0);
	engine_result_free(&r);
}
END_TEST

/* [job] repeat: every run measures its own window, drained before the
 * next; the runs add up to the whole */
START_TEST(test_engine_repeat_iterations)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;
	uint64_t lat = 0;

	c.warmup_ns = 20000000ull;
	c.iterations = 100;
	c.repeat = 3;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.nruns, 3);
	ck_assert_uint_eq(r.calls, 300);
	ck_assert_uint_eq(r.lat.count, 300);
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_eq(r.runs[k].calls, 100);
		ck_assert_uint_eq(r.runs[k].bytes, 100 * pl.total);
		ck_assert_uint_eq(r.runs[k].errors, 0);
		ck_assert_uint_gt(r.runs[k].window_ns, 0);
		ck_assert_uint_ge(r.runs[k].min_ns, fk.service_ns);
		ck_assert_uint_le(r.runs[k].p50_ns, r.runs[k].p99_ns);
		ck_assert_uint_le(r.runs[k].p99_ns, r.runs[k].max_ns);
		lat += r.runs[k].lat_sum_ns;
	}
	ck_assert_uint_eq(lat, r.lat.sum_ns);
	ck_assert_uint_eq(r.window_ns, r.runs[0].window_ns + r.runs[1].window_ns +
	                                   r.runs[2].window_ns);
	/* one warm-up only, and one final verification call */
	ck_assert_uint_eq(fk.calls, r.warmup_calls + 300 + 1);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_repeat_duration)
{
	struct engine_cfg c = cfg_of(TR_ACK, 4);
	struct engine_result r;
	uint64_t calls = 0;

	c.duration_ns = 50000000ull; /* 50 ms */
	c.repeat = 4;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_uint_eq(r.nruns, 4);
	/* no warm-up: each run's completions are counted and timed in the run
	 * they are reaped in (a loaded machine may leave a run empty), and the
	 * last run's drain is the last run's, timed and not counted */
	for (int k = 0; k < 4; k++) {
		ck_assert_uint_eq(r.runs[k].window_ns, c.duration_ns);
		ck_assert_uint_eq(r.runs[k].lat_count, r.runs[k].calls + (k == 3 ? 4 : 0));
		calls += r.runs[k].calls;
	}
	ck_assert_uint_eq(calls, r.calls);
	ck_assert_uint_gt(r.calls, 0);
	ck_assert_uint_eq(r.conn_calls[0], r.calls);
	ck_assert_uint_eq(r.window_ns, 4 * c.duration_ns);
	ck_assert_int_eq(fk.max_outstanding, 4);
	engine_result_free(&r);
}
END_TEST

START_TEST(test_engine_repeat_stops_at_failure)
{
	struct engine_cfg c = cfg_of(TR_ECHO, 1);
	struct engine_result r;

	c.iterations = 10;
	c.repeat = 5;
	fk.fail_at = 15; /* in run 2 */
	ck_assert_int_eq(engine_run(&c, &r), -1);
	ck_assert_uint_eq(r.nruns, 2);
	ck_assert_uint_eq(r.runs[0].calls, 10);
	ck_assert_uint_eq(r.runs[1].calls, 4);
	ck_assert_uint_eq(r.runs[1].errors, 1);
	ck_assert_uint_eq(r.calls, 14);
	engine_result_free(&r);
}
END_TEST

struct ivl_seen {
	uint32_t n;
	uint64_t calls, last_end, every_ns, last_boundary;
	int bad;
};

static void on_ivl(void *arg, const struct engine_interval *iv)
{
	struct ivl_seen *v = arg;

	/* in order, contiguous; the calls counted are those completed in it,
	 * the latencies those of measured calls: apart by at most the calls in
	 * flight at a window's start (2) */
	if (iv->index != v->n || iv->start_ns != v->last_end || iv->end_ns <= iv->start_ns ||
	    iv->lat->count > iv->calls + 2 || iv->calls > iv->lat->count + 2 ||
	    iv->bytes != iv->calls * pl.total)
		v->bad = 1;
	/* each ends at or past a boundary (of every_ns) of its own: a loaded
	 * machine may merge late boundaries, never split one */
	if (iv->end_ns / v->every_ns <= v->last_boundary)
		v->bad = 1;
	v->last_boundary = iv->end_ns / v->every_ns;
	v->n++;
	v->calls += iv->calls;
	v->last_end = iv->end_ns;
}

START_TEST(test_engine_intervals)
{
	struct engine_cfg c = cfg_of(TR_ACK, 2);
	struct engine_result r;
	struct ivl_seen v = {.every_ns = 25000000ull};

	c.warmup_ns = 20000000ull;
	c.duration_ns = 100000000ull; /* 2 runs of 100 ms: 8 intervals of 25 ms */
	c.repeat = 2;
	c.interval_ns = v.every_ns;
	c.on_interval = on_ivl;
	c.interval_arg = &v;
	ck_assert_int_eq(engine_run(&c, &r), 0);
	ck_assert_msg(!v.bad, "interval %u out of order or inconsistent", v.n);
	/* they tile the measured time, at most one per boundary */
	ck_assert_uint_ge(v.n, 1);
	ck_assert_uint_le(v.n, 9);
	ck_assert_uint_eq(v.last_end, r.window_ns);
	ck_assert_uint_eq(v.calls, r.calls); /* warm-up calls excluded, nothing lost */
	engine_result_free(&r);
}
END_TEST

Suite *make_engine_suite(void)
{
	Suite *su = suite_create("engine");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, setup, teardown);
	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_add_test(core, test_engine_iterations_exact);
	tcase_add_test(core, test_engine_warmup_discarded);
	tcase_add_test(core, test_engine_duration_window);
	tcase_add_test(core, test_engine_inflight_kept);
	tcase_add_test(core, test_engine_open_loop_rate);
	tcase_add_test(core, test_engine_open_loop_window);
	tcase_add_test(core, test_engine_open_loop_poisson);
	tcase_add_test(core, test_engine_open_loop_shows_stall);
	tcase_add_test(core, test_engine_open_loop_iterations);
	tcase_add_test(core, test_engine_open_loop_saturated);
	tcase_add_test(core, test_engine_open_loop_keeps_up);
	tcase_add_test(core, test_engine_window_edges_exact);
	tcase_add_test(core, test_engine_repeat_windows_continuous);
	tcase_add_test(core, test_engine_warmup_as_run);
	tcase_add_test(core, test_engine_repeat_iterations);
	tcase_add_test(core, test_engine_repeat_duration);
	tcase_add_test(core, test_engine_intervals);
	tcase_add_test(errors, test_engine_repeat_stops_at_failure);
	tcase_add_test(errors, test_engine_failed_status_stops);
	tcase_add_test(errors, test_engine_first_echo_verified);
	tcase_add_test(errors, test_engine_last_echo_verified);
	tcase_add_test(errors, test_engine_middle_corruption_needs_verify);
	tcase_add_test(errors, test_engine_silent_server_times_out);
	tcase_add_test(errors, test_engine_stop_flag_interrupts);
	suite_add_tcase(su, core);
	suite_add_tcase(su, errors);
	return su;
}
