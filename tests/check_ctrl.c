/* check_ctrl.c - the control service (src/ctrl/ctrl_server.c) in-process on loopback.
 *
 * Each test runs in its own forked process (Check's default), where the
 * checked fixture starts a server on a free 127.0.0.1 port and stops it.
 * Invalid bodies are sent with a tiny raw gRPC client (raw_call) that knows
 * nothing of ctrl.c, so that the server's validation is tested on the wire.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "check_tfgb.h"
#include "ctrl.h"
#include "net.h"
#include "grpcx.h"
#include "util.h"

#define MS 1000000ull
#define SEC 1000000000ull

static struct ctrl_server *srv;
static struct opt_hostport addr;

/* A port nothing listens on now: bind port 0, read it, close. */
static uint16_t free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

static void start_server(void)
{
	struct err err;
	int rc = -1;

	snprintf(addr.host, sizeof addr.host, "127.0.0.1");
	for (int i = 0; i < 5 && rc < 0; i++) {
		addr.port = free_port();
		rc = ctrl_server_start(&addr, NULL, NULL, 0, 0, &srv, &err);
	}
	ck_assert_msg(rc == 0, "ctrl_server_start: %s", err.msg);
}

static void setup(void)
{
	start_server();
}

static void teardown(void)
{
	ctrl_server_stop(srv);
	srv = NULL;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static struct ctrl_client *open_client(void)
{
	struct ctrl_client *c;
	struct err err;
	int rc = ctrl_client_open(&addr, NULL, NULL, now_ns() + 5 * SEC, &c, &err);

	ck_assert_msg(rc == 0, "ctrl_client_open: %s", err.msg);
	return c;
}

/* ---- a raw client ------------------------------------------------------ */

/* Calls `method` with `len` bytes of body; returns the status and copies up
 * to *outlen reply bytes to out (*outlen: bytes received). */
static grpc_status_code raw_call(const char *method, const void *body, size_t len,
                                 unsigned char *out, size_t *outlen)
{
	char target[64];
	grpc_channel_credentials *cr;
	grpc_channel *ch;
	grpc_completion_queue *cq;
	grpc_call *call;
	grpc_slice m = grpc_slice_from_static_string(method), det = grpc_empty_slice();
	grpc_slice part = grpc_slice_from_copied_buffer(body, len);
	grpc_byte_buffer *req = grpc_raw_byte_buffer_create(&part, 1), *resp = NULL;
	grpc_metadata_array mi, mt;
	grpc_status_code st = GRPC_STATUS_UNKNOWN;
	size_t cap = outlen ? *outlen : 0;

	grpc_slice_unref(part);
	grpc_metadata_array_init(&mi);
	grpc_metadata_array_init(&mt);
	snprintf(target, sizeof target, "127.0.0.1:%u", addr.port);
	cr = grpc_insecure_credentials_create();
	ch = grpc_channel_create(target, cr, NULL);
	grpc_channel_credentials_release(cr);
	cq = grpc_completion_queue_create_for_pluck(NULL);
	call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, m, NULL,
	                                gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
	                                             gpr_time_from_seconds(5, GPR_TIMESPAN)),
	                                NULL);
	grpc_op ops[6] = {
		{.op = GRPC_OP_SEND_INITIAL_METADATA, .flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY},
		{.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = req},
		{.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT},
		{.op = GRPC_OP_RECV_INITIAL_METADATA, .data.recv_initial_metadata.recv_initial_metadata = &mi},
		{.op = GRPC_OP_RECV_MESSAGE, .data.recv_message.recv_message = &resp},
		{.op = GRPC_OP_RECV_STATUS_ON_CLIENT,
		 .data.recv_status_on_client = {.trailing_metadata = &mt, .status = &st,
		                                .status_details = &det}},
	};
	ck_assert_int_eq(grpc_call_start_batch(call, ops, 6, ops, NULL), GRPC_CALL_OK);
	grpc_completion_queue_pluck(cq, ops, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	if (outlen)
		*outlen = 0;
	if (resp && outlen) {
		grpc_byte_buffer_reader rd;
		grpc_slice all;
		ck_assert(grpc_byte_buffer_reader_init(&rd, resp));
		all = grpc_byte_buffer_reader_readall(&rd);
		*outlen = GRPC_SLICE_LENGTH(all);
		memcpy(out, GRPC_SLICE_START_PTR(all), *outlen < cap ? *outlen : cap);
		grpc_slice_unref(all);
		grpc_byte_buffer_reader_destroy(&rd);
	}
	if (resp)
		grpc_byte_buffer_destroy(resp);
	grpc_byte_buffer_destroy(req);
	grpc_call_unref(call);
	grpc_metadata_array_destroy(&mi);
	grpc_metadata_array_destroy(&mt);
	grpc_slice_unref(det);
	grpc_channel_destroy(ch);
	grpc_completion_queue_shutdown(cq);
	while (grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type !=
	       GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(cq);
	return st;
}

static size_t put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
	return 4;
}

static size_t put_u64(unsigned char *p, uint64_t v)
{
	put_u32(p, (uint32_t)(v >> 32));
	return 4 + put_u32(p + 4, (uint32_t)v);
}

/* Barrier body: run, worker, workers, gen. */
static size_t barrier_body(unsigned char *b, uint64_t run, uint32_t w, uint32_t n, uint32_t gen)
{
	size_t o = put_u64(b, run);
	o += put_u32(b + o, w);
	o += put_u32(b + o, n);
	return o + put_u32(b + o, gen);
}

/* ---- barrier threads --------------------------------------------------- */

struct bar_arg {
	uint64_t run;
	uint32_t worker, workers;
	int ngen;                 /* barriers 0 .. ngen-1 */
	unsigned delay_ms;        /* before each barrier */
	uint64_t timeout_ns;
	atomic_int opened;        /* its client is open: the first call is next */
	uint64_t t_arrive[2], t_return[2];
	int rc[2];
	uint32_t last[2];         /* who completed each barrier, as its reply says */
	struct err err;
};

static void *bar_thread(void *p)
{
	struct bar_arg *a = p;
	struct ctrl_client *c;

	if (ctrl_client_open(&addr, NULL, NULL, now_ns() + 5 * SEC, &c, &a->err) < 0) {
		a->rc[0] = -999;
		return NULL;
	}
	atomic_store(&a->opened, 1);
	for (int g = 0; g < a->ngen; g++) {
		sleep_ms(a->delay_ms);
		a->t_arrive[g] = now_ns();
		a->last[g] = UINT32_MAX;
		a->rc[g] = ctrl_barrier_last(c, a->run, a->worker, a->workers, (uint32_t)g,
		                             now_ns() + a->timeout_ns, &a->last[g], &a->err);
		a->t_return[g] = now_ns();
		if (a->rc[g] < 0)
			break;
	}
	ctrl_client_close(c);
	return NULL;
}

/* ---- collecting -------------------------------------------------------- */

struct walk {
	uint32_t n, worker[8];
	size_t len[8];
	unsigned char sum[8];     /* xor of the blob bytes */
	int bad;                  /* a blob that is not blob_fill's */
};

static void blob_fill(unsigned char *b, size_t len, uint32_t worker, uint64_t run)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 7 + worker * 31 + run);
}

static uint64_t walk_run; /* the run blobs are checked against */

static int walk_fn(void *arg, uint32_t worker, const void *blob, size_t len)
{
	struct walk *w = arg;
	const unsigned char *b = blob;

	ck_assert_uint_lt(w->n, 8);
	w->worker[w->n] = worker;
	w->len[w->n] = len;
	for (size_t i = 0; i < len; i++)
		if (b[i] != (unsigned char)(i * 7 + worker * 31 + walk_run))
			w->bad = 1;
	w->n++;
	return 0;
}

static void report(struct ctrl_client *c, uint64_t run, uint32_t worker, uint32_t workers,
                   size_t len)
{
	unsigned char *b = malloc(len ? len : 1);
	struct err err;
	int rc;

	ck_assert_ptr_nonnull(b);
	blob_fill(b, len, worker, run);
	rc = ctrl_report(c, run, worker, workers, b, len, now_ns() + 5 * SEC, &err);
	ck_assert_msg(rc == 0, "ctrl_report: %s", err.msg);
	free(b);
}

/* ---- core -------------------------------------------------------------- */

START_TEST(test_ctrl_barrier_releases_together)
{
	struct bar_arg a[3];
	pthread_t t[3];

	for (uint32_t i = 0; i < 3; i++) {
		a[i] = (struct bar_arg){.run = 0x1234, .worker = i, .workers = 3, .ngen = 2,
		                        .delay_ms = 100 * i, .timeout_ns = 10 * SEC};
		ck_assert_int_eq(pthread_create(&t[i], NULL, bar_thread, &a[i]), 0);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int g = 0; g < 2; g++) {
		uint64_t last_arrive = 0, first_return = UINT64_MAX;
		for (int i = 0; i < 3; i++) {
			ck_assert_msg(a[i].rc[g] == 0, "worker %d gen %d: %d %s", i, g, a[i].rc[g],
			              a[i].err.msg);
			if (a[i].t_arrive[g] > last_arrive)
				last_arrive = a[i].t_arrive[g];
			if (a[i].t_return[g] < first_return)
				first_return = a[i].t_return[g];
		}
		/* none returned before the last one arrived */
		ck_assert_uint_ge(first_return, last_arrive);
		/* and every one was told it was worker 2, 100 ms behind worker 1 */
		for (int i = 0; i < 3; i++)
			ck_assert_msg(a[i].last[g] == 2, "worker %d gen %d: last %u, not 2", i, g,
			              a[i].last[g]);
	}
}
END_TEST

START_TEST(test_ctrl_report_collect)
{
	static const size_t len[3] = {10, CTRL_BLOB_MAX, 0};
	struct ctrl_client *c = open_client();
	struct walk w = {0};
	struct err err;
	uint32_t got = 99;
	int rc;

	walk_run = 77;
	report(c, 77, 2, 3, len[2]);
	report(c, 77, 0, 3, len[0]);
	report(c, 77, 1, 3, 5);    /* replaced by the next one */
	report(c, 77, 1, 3, len[1]);
	rc = ctrl_collect(c, 77, 3, 0, now_ns() + 5 * SEC, walk_fn, &w, &got, &err);
	ck_assert_msg(rc == 0, "ctrl_collect: %s", err.msg);
	ck_assert_uint_eq(got, 3);
	ck_assert_uint_eq(w.n, 3);
	ck_assert(!w.bad);
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(w.worker[i], i);
		ck_assert_uint_eq(w.len[i], len[i]);
	}
	ctrl_client_close(c);
}
END_TEST

struct collect_arg {
	uint64_t run;
	uint32_t workers, got;
	uint64_t t_return;
	atomic_int opened;
	int rc;
	struct walk w;
	struct err err;
};

static void *collect_thread(void *p)
{
	struct collect_arg *a = p;
	struct ctrl_client *c;

	if ((a->rc = ctrl_client_open(&addr, NULL, NULL, now_ns() + 5 * SEC, &c, &a->err)) < 0)
		return NULL;
	atomic_store(&a->opened, 1);
	a->rc = ctrl_collect(c, a->run, a->workers, 0, now_ns() + 10 * SEC, walk_fn, &a->w,
	                     &a->got, &a->err);
	a->t_return = now_ns();
	ctrl_client_close(c);
	return NULL;
}

START_TEST(test_ctrl_collect_waits_for_all)
{
	struct collect_arg a = {.run = 5, .workers = 3};
	struct ctrl_client *c = open_client();
	uint64_t t_last;
	pthread_t t;

	walk_run = 5;
	ck_assert_int_eq(pthread_create(&t, NULL, collect_thread, &a), 0);
	for (uint32_t i = 0; i < 3; i++) {
		sleep_ms(100);
		t_last = now_ns();
		report(c, 5, i, 3, 100 + i);
	}
	pthread_join(t, NULL);
	ck_assert_msg(a.rc == 0, "ctrl_collect: %s", a.err.msg);
	ck_assert_uint_ge(a.t_return, t_last);
	ck_assert_uint_eq(a.got, 3);
	ck_assert(!a.w.bad);
	ctrl_client_close(c);
}
END_TEST

START_TEST(test_ctrl_runs_interleave)
{
	struct bar_arg a[4];
	pthread_t t[4];
	struct ctrl_client *c = open_client();
	struct err err;
	uint32_t got;

	/* threads 0, 1 in run 100; 2, 3 in run 200; arrivals interleave */
	for (uint32_t i = 0; i < 4; i++) {
		a[i] = (struct bar_arg){.run = i < 2 ? 100 : 200, .worker = i % 2, .workers = 2,
		                        .ngen = 2, .delay_ms = 50 * i, .timeout_ns = 10 * SEC};
		ck_assert_int_eq(pthread_create(&t[i], NULL, bar_thread, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++)
		for (int g = 0; g < 2; g++)
			ck_assert_msg(a[i].rc[g] == 0, "thread %d gen %d: %s", i, g, a[i].err.msg);
	report(c, 100, 1, 2, 11);
	report(c, 200, 0, 2, 22);
	report(c, 100, 0, 2, 33);
	report(c, 200, 1, 2, 44);
	for (uint64_t run = 100; run <= 200; run += 100) {
		struct walk w = {0};
		walk_run = run;
		ck_assert_int_eq(ctrl_collect(c, run, 2, 0, now_ns() + 5 * SEC, walk_fn, &w, &got, &err), 0);
		ck_assert_uint_eq(got, 2);
		ck_assert(!w.bad);
		ck_assert_uint_eq(w.len[0], run == 100 ? 33 : 22);
		ck_assert_uint_eq(w.len[1], run == 100 ? 11 : 44);
	}
	ctrl_client_close(c);
}
END_TEST

/* ---- limits ------------------------------------------------------------ */

START_TEST(test_ctrl_collect_partial)
{
	struct ctrl_client *c = open_client();
	struct walk w = {0};
	struct err err;
	uint32_t got;
	int rc;

	walk_run = 9;
	rc = ctrl_collect(c, 9, 3, 1, now_ns() + 5 * SEC, walk_fn, &w, &got, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	ck_assert_uint_eq(got, 0);
	report(c, 9, 2, 3, 20);
	report(c, 9, 0, 3, 10);
	rc = ctrl_collect(c, 9, 3, 1, now_ns() + 5 * SEC, walk_fn, &w, &got, &err);
	ck_assert_msg(rc == 0, "%s", err.msg);
	ck_assert_uint_eq(got, 2);
	ck_assert_uint_eq(w.worker[0], 0);
	ck_assert_uint_eq(w.worker[1], 2);
	ck_assert_uint_eq(w.len[1], 20);
	ck_assert(!w.bad);
	/* without partial it waits for worker 1, in vain */
	rc = ctrl_collect(c, 9, 3, 0, now_ns() + 700 * MS, walk_fn, &w, &got, &err);
	ck_assert_int_eq(rc, -ETIMEDOUT);
	ck_assert_msg(strstr(err.msg, "collect: 2 of 3 reports arrived within 700ms"), "%s", err.msg);
	ctrl_client_close(c);
}
END_TEST

START_TEST(test_ctrl_barrier_timeout)
{
	struct bar_arg a[2];
	pthread_t t[2];
	char want[128];

	for (uint32_t i = 0; i < 2; i++) {
		a[i] = (struct bar_arg){.run = 42, .worker = i, .workers = 3, .ngen = 1,
		                        .timeout_ns = 1 * SEC};
		ck_assert_int_eq(pthread_create(&t[i], NULL, bar_thread, &a[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	snprintf(want, sizeof want, "control service at '127.0.0.1:%u': barrier: 2 of 3 workers "
	         "arrived within 1s", addr.port);
	for (int i = 0; i < 2; i++) {
		uint64_t took = a[i].t_return[0] - a[i].t_arrive[0];
		ck_assert_int_eq(a[i].rc[0], -ETIMEDOUT);
		ck_assert_msg(!strcmp(a[i].err.msg, want), "got '%s'", a[i].err.msg);
		ck_assert_msg(took >= 900 * MS && took < 2 * SEC, "took %llu ms",
		              (unsigned long long)(took / MS));
	}
}
END_TEST

START_TEST(test_ctrl_lru_eviction)
{
	struct collect_arg a = {.run = 1, .workers = 2};
	struct ctrl_client *c = open_client();
	struct walk w = {0};
	struct err err;
	uint32_t got;
	pthread_t t;

	report(c, 1, 0, 2, 8);
	ck_assert_int_eq(pthread_create(&t, NULL, collect_thread, &a), 0);
	while (!atomic_load(&a.opened) && a.rc == 0)
		sleep_ms(10);
	sleep_ms(300); /* the collect of run 1 is held */
	for (uint64_t run = 2; run <= CTRL_RUNS + 1; run++)
		report(c, run, 0, 1, 4);
	pthread_join(t, NULL);
	ck_assert_int_eq(a.rc, -ECONNABORTED);
	ck_assert_msg(strstr(a.err.msg, "run 0x1 was dropped"), "%s", a.err.msg);
	/* run 2 is still there, run 1 starts anew (and evicts run 2) */
	walk_run = 2;
	ck_assert_int_eq(ctrl_collect(c, 2, 1, 1, now_ns() + 5 * SEC, walk_fn, &w, &got, &err), 0);
	ck_assert_uint_eq(got, 1);
	ck_assert_int_eq(ctrl_collect(c, 1, 2, 1, now_ns() + 5 * SEC, NULL, NULL, &got, &err), 0);
	ck_assert_uint_eq(got, 0);
	ctrl_client_close(c);
}
END_TEST

/* A held Barrier whose client goes away is dropped, never counted. */
START_TEST(test_ctrl_cancelled_call_dropped)
{
	unsigned char b[20];
	struct err err;
	char target[64];
	struct ctrl_client *c = open_client();
	grpc_channel_credentials *cr;
	grpc_channel *ch;
	grpc_completion_queue *cq;
	grpc_call *call;
	grpc_slice part;
	grpc_byte_buffer *req, *resp = NULL;
	grpc_metadata_array mi, mt;
	grpc_status_code st;
	grpc_slice det;
	int rc;

	grpc_init();
	barrier_body(b, 0xabc, 0, 2, 0);
	part = grpc_slice_from_copied_buffer((const char *)b, sizeof b);
	req = grpc_raw_byte_buffer_create(&part, 1);
	grpc_slice_unref(part);
	grpc_metadata_array_init(&mi);
	grpc_metadata_array_init(&mt);
	snprintf(target, sizeof target, "127.0.0.1:%u", addr.port);
	cr = grpc_insecure_credentials_create();
	ch = grpc_channel_create(target, cr, NULL);
	grpc_channel_credentials_release(cr);
	cq = grpc_completion_queue_create_for_pluck(NULL);
	call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
	                                grpc_slice_from_static_string("/tfgb.v1.Control/Barrier"),
	                                NULL, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	grpc_op ops[6] = {
		{.op = GRPC_OP_SEND_INITIAL_METADATA, .flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY},
		{.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = req},
		{.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT},
		{.op = GRPC_OP_RECV_INITIAL_METADATA, .data.recv_initial_metadata.recv_initial_metadata = &mi},
		{.op = GRPC_OP_RECV_MESSAGE, .data.recv_message.recv_message = &resp},
		{.op = GRPC_OP_RECV_STATUS_ON_CLIENT,
		 .data.recv_status_on_client = {.trailing_metadata = &mt, .status = &st,
		                                .status_details = &det}},
	};
	ck_assert_int_eq(grpc_call_start_batch(call, ops, 6, ops, NULL), GRPC_CALL_OK);
	sleep_ms(500); /* held by now */
	grpc_call_cancel(call, NULL);
	grpc_completion_queue_pluck(cq, ops, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	ck_assert_int_eq(st, GRPC_STATUS_CANCELLED);
	sleep_ms(300); /* the server has seen the cancellation */

	/* worker 1 alone: had worker 0's call been kept, this would release */
	rc = ctrl_barrier(c, 0xabc, 1, 2, 0, now_ns() + 800 * MS, &err);
	ck_assert_int_eq(rc, -ETIMEDOUT);
	ck_assert_msg(strstr(err.msg, "1 of 2 workers arrived"), "%s", err.msg);

	if (resp)
		grpc_byte_buffer_destroy(resp);
	grpc_byte_buffer_destroy(req);
	grpc_call_unref(call);
	grpc_metadata_array_destroy(&mi);
	grpc_metadata_array_destroy(&mt);
	grpc_slice_unref(det);
	grpc_channel_destroy(ch);
	grpc_completion_queue_shutdown(cq);
	while (grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type !=
	       GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(cq);
	ctrl_client_close(c);
	grpc_shutdown();
}
END_TEST

/* Stopping answers held calls instead of leaving them hanging. */
START_TEST(test_ctrl_stop_with_held_call)
{
	struct bar_arg a = {.run = 3, .worker = 0, .workers = 2, .ngen = 1,
	                    .timeout_ns = (uint64_t)(20 * SEC * tfgb_test_slow())};
	pthread_t t;
	uint64_t t0;

	ck_assert_int_eq(pthread_create(&t, NULL, bar_thread, &a), 0);
	while (!atomic_load(&a.opened) && a.rc[0] == 0)
		sleep_ms(10);
	sleep_ms(300); /* the Barrier is held */
	t0 = now_ns();
	ctrl_server_stop(srv);
	srv = NULL;
	pthread_join(t, NULL);
	ck_assert_int_eq(a.rc[0], -ECONNREFUSED);
	ck_assert_msg(strstr(a.err.msg, "stopping"), "%s", a.err.msg);
	ck_assert_uint_lt(now_ns() - t0, a.timeout_ns / 6); /* answered, not timed out */
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

START_TEST(test_ctrl_invalid_bodies)
{
	unsigned char b[64], out[16];
	unsigned char *big;
	size_t o, outlen;

	grpc_init();
#define EXPECT(method, len, want) \
	ck_assert_int_eq(raw_call("/tfgb.v1.Control/" method, b, (len), NULL, NULL), (want))
	memset(b, 0, sizeof b);
	EXPECT("Barrier", 0, GRPC_STATUS_INVALID_ARGUMENT);
	barrier_body(b, 1, 0, 1, 0);
	EXPECT("Barrier", 19, GRPC_STATUS_INVALID_ARGUMENT);
	EXPECT("Barrier", 21, GRPC_STATUS_INVALID_ARGUMENT);
	barrier_body(b, 1, 3, 3, 0);
	EXPECT("Barrier", 20, GRPC_STATUS_INVALID_ARGUMENT);          /* worker >= workers */
	barrier_body(b, 1, 0, 0, 0);
	EXPECT("Barrier", 20, GRPC_STATUS_INVALID_ARGUMENT);          /* workers 0 */
	barrier_body(b, 1, 0, CTRL_WORKERS_MAX + 1, 0);
	EXPECT("Barrier", 20, GRPC_STATUS_INVALID_ARGUMENT);

	o = barrier_body(b, 2, 0, 1, 0);                              /* Report header */
	put_u32(b + 16, 0xffffffffu);
	EXPECT("Report", o, GRPC_STATUS_INVALID_ARGUMENT);            /* huge len */
	put_u32(b + 16, 5);
	EXPECT("Report", o + 4, GRPC_STATUS_INVALID_ARGUMENT);        /* len past the body */
	EXPECT("Report", o + 6, GRPC_STATUS_INVALID_ARGUMENT);        /* bytes after it */
	EXPECT("Report", 19, GRPC_STATUS_INVALID_ARGUMENT);
	big = calloc(1, 20 + CTRL_BLOB_MAX + 1);
	ck_assert_ptr_nonnull(big);
	memcpy(big, b, 16);
	put_u32(big + 16, CTRL_BLOB_MAX + 1);
	ck_assert_int_eq(raw_call("/tfgb.v1.Control/Report", big, 20 + CTRL_BLOB_MAX + 1, NULL,
	                          NULL), GRPC_STATUS_RESOURCE_EXHAUSTED);
	free(big);

	o = put_u64(b, 3);
	o += put_u32(b + o, 2);
	o += put_u32(b + o, 2);                                       /* partial 2 */
	EXPECT("Collect", o, GRPC_STATUS_INVALID_ARGUMENT);
	EXPECT("Collect", o - 1, GRPC_STATUS_INVALID_ARGUMENT);
	put_u32(b + 12, 1);
	put_u32(b + 8, 0);
	EXPECT("Collect", o, GRPC_STATUS_INVALID_ARGUMENT);           /* workers 0 */
	EXPECT("Nope", 4, GRPC_STATUS_UNIMPLEMENTED);
	ck_assert_int_eq(raw_call("/other.Service/Barrier", b, 20, NULL, NULL),
	                 GRPC_STATUS_UNIMPLEMENTED);
#undef EXPECT

	/* the service still answers a good call */
	barrier_body(b, 0x0102030405060708ull, 0, 1, 0);
	outlen = sizeof out;
	ck_assert_int_eq(raw_call("/tfgb.v1.Control/Barrier", b, 20, out, &outlen), GRPC_STATUS_OK);
	ck_assert_uint_eq(outlen, 12);
	ck_assert(!memcmp(out, b, 8));
	ck_assert(!memcmp(out + 8, "\0\0\0\0", 4)); /* worker 0 of 1: the last one in */
	grpc_shutdown();
}
END_TEST

START_TEST(test_ctrl_workers_mismatch)
{
	struct ctrl_client *c = open_client();
	struct err err;
	uint32_t got;
	int rc;

	report(c, 0x77, 0, 3, 1);
	rc = ctrl_barrier(c, 0x77, 0, 4, 0, now_ns() + 5 * SEC, &err);
	ck_assert_int_eq(rc, -EPROTO);
	ck_assert_msg(strstr(err.msg, "run 0x77 has 3 workers, this call says 4"), "%s", err.msg);
	rc = ctrl_collect(c, 0x77, 2, 1, now_ns() + 5 * SEC, NULL, NULL, &got, &err);
	ck_assert_int_eq(rc, -EPROTO);
	/* a generation that has passed */
	ck_assert_int_eq(ctrl_barrier(c, 0x78, 0, 1, 0, now_ns() + 5 * SEC, &err), 0);
	ck_assert_int_eq(ctrl_barrier(c, 0x78, 0, 1, 1, now_ns() + 5 * SEC, &err), 0);
	rc = ctrl_barrier(c, 0x78, 0, 1, 1, now_ns() + 5 * SEC, &err);
	ck_assert_int_eq(rc, -EPROTO);
	ck_assert_msg(strstr(err.msg, "has passed"), "%s", err.msg);
	/* bad arguments never reach the wire */
	ck_assert_int_eq(ctrl_barrier(c, 1, 2, 2, 0, now_ns() + SEC, &err), -EINVAL);
	ck_assert_int_eq(ctrl_report(c, 1, 0, 1, "", CTRL_BLOB_MAX + 1, now_ns() + SEC, &err), -EMSGSIZE);
	ctrl_client_close(c);
}
END_TEST

START_TEST(test_ctrl_open_nothing_listening)
{
	struct opt_hostport a = {.host = "127.0.0.1"};
	struct ctrl_client *c = (void *)1;
	struct err err;
	char want[64];
	int rc;

	a.port = free_port();
	rc = ctrl_client_open(&a, NULL, NULL, now_ns() + 400 * MS, &c, &err);
	ck_assert(rc == -ECONNREFUSED || rc == -ETIMEDOUT);
	ck_assert_ptr_null(c);
	snprintf(want, sizeof want, "'127.0.0.1:%u'", a.port);
	ck_assert_msg(strstr(err.msg, want), "%s", err.msg);
}
END_TEST

static int late_rc;

static void *late_server(void *p)
{
	struct err err;

	(void)p;
	sleep_ms(500);
	late_rc = ctrl_server_start(&addr, NULL, NULL, 0, 0, &srv, &err);
	return NULL;
}

/* A client started before the service waits for it. */
START_TEST(test_ctrl_open_before_server)
{
	struct err err;
	struct ctrl_client *c;
	pthread_t t;
	int rc;

	/* pick the port first, so the client knows it */
	snprintf(addr.host, sizeof addr.host, "127.0.0.1");
	addr.port = free_port();
	ck_assert_int_eq(pthread_create(&t, NULL, late_server, NULL), 0);
	rc = ctrl_client_open(&addr, NULL, NULL, now_ns() + 5 * SEC, &c, &err);
	pthread_join(t, NULL);
	ck_assert_int_eq(late_rc, 0);
	ck_assert_msg(rc == 0, "%s", err.msg);
	ck_assert_int_eq(ctrl_barrier(c, 8, 0, 1, 0, now_ns() + 5 * SEC, &err), 0);
	ctrl_client_close(c);
	ctrl_server_stop(srv);
	srv = NULL;
}
END_TEST

START_TEST(test_ctrl_port_in_use)
{
	struct ctrl_server *s2 = (void *)1;
	struct err err;
	char want[64];

	ck_assert_int_eq(ctrl_server_start(&addr, NULL, NULL, 0, 0, &s2, &err), -EADDRINUSE);
	ck_assert_ptr_null(s2);
	snprintf(want, sizeof want, "cannot listen on '127.0.0.1:%u'", addr.port);
	ck_assert_msg(strstr(err.msg, want), "%s", err.msg);
}
END_TEST

/* Port 0 (worker 0's own service, src/run/wctl.c): the kernel picks a
 * port, ctrl_server_port says which, and a client reaches it there at the
 * address net_route_host gives for a route to a loopback peer. */
START_TEST(test_ctrl_port_zero)
{
	struct opt_hostport a = {.port = 0};
	struct ctrl_server *s2 = NULL;
	struct ctrl_client *c;
	struct err err;

	ck_assert_int_eq(net_route_host("127.0.0.1", 9, a.host, sizeof a.host, &err), 0);
	ck_assert_str_eq(a.host, "127.0.0.1");
	ck_assert_int_eq(ctrl_server_start(&a, NULL, NULL, 0, 0, &s2, &err), 0);
	a.port = ctrl_server_port(s2);
	ck_assert_uint_gt(a.port, 0);
	ck_assert_uint_ne(a.port, addr.port);
	ck_assert_int_eq(ctrl_client_open(&a, NULL, NULL, now_ns() + 5 * SEC, &c, &err), 0);
	ck_assert_int_eq(ctrl_barrier(c, 9, 0, 1, 0, now_ns() + 5 * SEC, &err), 0);
	ctrl_client_close(c);
	ctrl_server_stop(s2);
	ck_assert_uint_eq(ctrl_server_port(srv), addr.port);
	ck_assert_int_eq(net_route_host("no-such-host.invalid", 9, a.host, sizeof a.host, &err), -1);
	ck_assert_msg(strstr(err.msg, "no-such-host.invalid"), "%s", err.msg);
}
END_TEST

/* With a token, a call must present it: none or a wrong one is refused
 * UNAUTHENTICATED, named as a token problem, and the service keeps serving. */
START_TEST(test_ctrl_token)
{
	static const char tok[] = "s3cret-Token_0123";
	struct ctrl_client *c;
	struct err err;
	uint32_t got;
	unsigned char b[20];

	ctrl_server_stop(srv);
	ck_assert_int_eq(ctrl_server_start(&addr, NULL, tok, 0, 0, &srv, &err), 0);
	ck_assert_int_eq(ctrl_client_open(&addr, NULL, NULL, now_ns() + 5 * SEC, &c, &err), 0);
	ck_assert_int_eq(ctrl_barrier(c, 5, 0, 1, 0, now_ns() + 5 * SEC, &err), -EACCES);
	ck_assert_msg(strstr(err.msg, "refused the token") && strstr(err.msg, "sets none") &&
	              strstr(err.msg, "no tfgb-token"), "%s", err.msg);
	ctrl_client_close(c);
	ck_assert_int_eq(ctrl_client_open(&addr, NULL, "s3cret-Token_0124", now_ns() + 5 * SEC, &c, &err), 0);
	ck_assert_int_eq(ctrl_report(c, 5, 0, 1, "x", 1, now_ns() + 5 * SEC, &err),
	                 -EACCES);
	ck_assert_msg(strstr(err.msg, "differs") && strstr(err.msg, "wrong token") && !strstr(err.msg, tok),
	              "%s", err.msg);
	ck_assert_int_eq(ctrl_collect(c, 5, 1, 1, now_ns() + 5 * SEC, NULL, NULL, &got, &err), -EACCES);
	ctrl_client_close(c);
	grpc_init();
	barrier_body(b, 5, 0, 1, 0);
	ck_assert_int_eq(raw_call("/tfgb.v1.Control/Barrier", b, sizeof b, NULL, NULL),
	                 GRPC_STATUS_UNAUTHENTICATED);
	grpc_shutdown();
	/* the refused calls left nothing behind: run 5 starts clean */
	ck_assert_int_eq(ctrl_client_open(&addr, NULL, tok, now_ns() + 5 * SEC, &c, &err), 0);
	ck_assert_int_eq(ctrl_barrier(c, 5, 0, 1, 0, now_ns() + 5 * SEC, &err), 0);
	ck_assert_int_eq(ctrl_collect(c, 5, 1, 1, now_ns() + 5 * SEC, NULL, NULL, &got, &err), 0);
	ck_assert_uint_eq(got, 0);
	ctrl_client_close(c);

	/* a service without a token takes calls that carry one */
	ctrl_server_stop(srv);
	ck_assert_int_eq(ctrl_server_start(&addr, NULL, NULL, 0, 0, &srv, &err), 0);
	ck_assert_int_eq(ctrl_client_open(&addr, NULL, tok, now_ns() + 5 * SEC, &c, &err), 0);
	ck_assert_int_eq(ctrl_barrier(c, 6, 0, 1, 0, now_ns() + 5 * SEC, &err), 0);
	ctrl_client_close(c);
}
END_TEST

/* The Abseil that libgrpc loads is found and its mutex deadlock detector
 * set off (grpcx.h): should Debian's Abseil rename the symbol, this fails
 * instead of every gRPC lock quietly paying for the detector again. */
START_TEST(test_ctrl_absl_nodeadlock)
{
	ck_assert_int_eq(grpcx_absl_nodeadlock(), 1);
}
END_TEST

Suite *make_ctrl_suite(void)
{
	Suite *s = suite_create("ctrl");
	TCase *core = tcase_create("core"), *limits = tcase_create("limits"),
	      *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, setup, teardown);
	tcase_set_timeout(core, 30);
	tcase_add_test(core, test_ctrl_barrier_releases_together);
	tcase_add_test(core, test_ctrl_report_collect);
	tcase_add_test(core, test_ctrl_collect_waits_for_all);
	tcase_add_test(core, test_ctrl_runs_interleave);
	tcase_add_test(core, test_ctrl_absl_nodeadlock);
	suite_add_tcase(s, core);

	tcase_add_checked_fixture(limits, setup, teardown);
	tcase_set_timeout(limits, 30);
	tcase_add_test(limits, test_ctrl_collect_partial);
	tcase_add_test(limits, test_ctrl_barrier_timeout);
	tcase_add_test(limits, test_ctrl_lru_eviction);
	tcase_add_test(limits, test_ctrl_cancelled_call_dropped);
	tcase_add_test(limits, test_ctrl_stop_with_held_call);
	suite_add_tcase(s, limits);

	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_set_timeout(errors, 30);
	tcase_add_test(errors, test_ctrl_invalid_bodies);
	tcase_add_test(errors, test_ctrl_workers_mismatch);
	tcase_add_test(errors, test_ctrl_open_nothing_listening);
	tcase_add_test(errors, test_ctrl_port_in_use);
	tcase_add_test(errors, test_ctrl_port_zero);
	tcase_add_test(errors, test_ctrl_token);
	suite_add_tcase(s, errors);

	/* no fixture: it starts its own server late */
	TCase *late = tcase_create("late");
	tcase_set_timeout(late, 30);
	tcase_add_test(late, test_ctrl_open_before_server);
	suite_add_tcase(s, late);
	return s;
}
