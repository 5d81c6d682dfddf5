/* check_socket.c - the socket transport: its header codec (suite "frame")
 * and its client and server on loopback, in one process (suite "socket"). */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "frame.h"
#include "payload.h"
#include "transport.h"
#include "util.h"

extern const struct tr_ops tr_socket_ops;

/* ---- frame: core ---- */

START_TEST(test_frame_encode_bytes)
{
	unsigned char b[FRAME_HDR_LEN];
	static const unsigned char want[FRAME_HDR_LEN] = {
		0x54, 0x46, 0x47, 0x42, 0x80, 0x03, 0x00, 0x0e,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	};

	frame_encode(b, FRAME_REPLY | 3, 14, 0x0102030405060708ull);
	ck_assert_mem_eq(b, want, sizeof want);
	frame_encode(b, 1, 0, 0);
	ck_assert_mem_eq(b, "TFGB\0\1\0\0\0\0\0\0\0\0\0\0", FRAME_HDR_LEN);
}
END_TEST

START_TEST(test_frame_decode_every_field)
{
	static const struct frame_hdr cases[] = {
		{FRAME_MAGIC, 0, 0, 0},
		{FRAME_MAGIC, 0xffff, 0xffff, UINT64_MAX},
		{FRAME_MAGIC, 0x8005, 8, 1ull << 40},
		{0xdeadbeef, 0x1234, 0x5678, 0x8000000000000001ull},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned char b[FRAME_HDR_LEN];
		struct frame_hdr h;

		frame_encode(b, cases[i].method, cases[i].status, cases[i].len);
		if (cases[i].magic != FRAME_MAGIC) { /* encode always writes the magic */
			b[0] = 0xde, b[1] = 0xad, b[2] = 0xbe, b[3] = 0xef;
		}
		frame_decode(b, &h);
		ck_assert_uint_eq(h.magic, cases[i].magic);
		ck_assert_uint_eq(h.method, cases[i].method);
		ck_assert_uint_eq(h.status, cases[i].status);
		ck_assert_uint_eq(h.len, cases[i].len);
	}
}
END_TEST

START_TEST(test_frame_parse_requests)
{
	for (unsigned m = FRAME_METHOD_MIN; m <= FRAME_METHOD_MAX; m++) {
		unsigned char b[FRAME_HDR_LEN];
		struct frame_hdr h;

		frame_encode(b, m, 0, 1000);
		ck_assert_int_eq(frame_parse(b, sizeof b, 0, 1000, &h), FRAME_OK);
		ck_assert_uint_eq(h.method, m);
		ck_assert_uint_eq(h.len, 1000);
	}
}
END_TEST

START_TEST(test_frame_parse_replies)
{
	unsigned char b[FRAME_HDR_LEN];
	struct frame_hdr h;

	for (unsigned m = FRAME_METHOD_MIN; m <= FRAME_METHOD_MAX; m++) {
		frame_encode(b, FRAME_REPLY | m, 0, 12345);
		ck_assert_int_eq(frame_parse(b, sizeof b, m, UINT64_MAX, &h), FRAME_OK);
		ck_assert_uint_eq(h.len, 12345);
		/* an error reply: any gRPC code, no body */
		frame_encode(b, FRAME_REPLY | m, TR_RESOURCE_EXHAUSTED, 0);
		ck_assert_int_eq(frame_parse(b, sizeof b, m, UINT64_MAX, &h), FRAME_OK);
		ck_assert_uint_eq(h.status, TR_RESOURCE_EXHAUSTED);
	}
}
END_TEST

/* ---- frame: limits ---- */

START_TEST(test_frame_limits_short)
{
	unsigned char b[FRAME_HDR_LEN + 4];
	struct frame_hdr h = {0};

	frame_encode(b, 1, 0, 4);
	for (size_t n = 0; n < FRAME_HDR_LEN; n++)
		ck_assert_int_eq(frame_parse(b, n, 0, 100, &h), FRAME_SHORT);
	ck_assert_int_eq(frame_parse(NULL, 0, 0, 100, &h), FRAME_SHORT);
	/* bytes after the header are the body's, not the header's */
	memset(b + FRAME_HDR_LEN, 0xff, 4);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, 100, &h), FRAME_OK);
}
END_TEST

START_TEST(test_frame_limits_length)
{
	unsigned char b[FRAME_HDR_LEN];
	struct frame_hdr h;

	frame_encode(b, 2, 0, 1 << 20);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, 1 << 20, &h), FRAME_OK);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, (1 << 20) - 1, &h), FRAME_TOO_LONG);
	ck_assert_uint_eq(h.method, 2); /* filled: the server answers that method */
	frame_encode(b, 2, 0, 0);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, 0, &h), FRAME_OK);
	frame_encode(b, 2, 0, UINT64_MAX);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, UINT64_MAX, &h), FRAME_OK);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, UINT64_MAX - 1, &h), FRAME_TOO_LONG);
	/* the status range of a reply */
	frame_encode(b, FRAME_REPLY | 1, FRAME_STATUS_MAX, 0);
	ck_assert_int_eq(frame_parse(b, sizeof b, 1, 0, &h), FRAME_OK);
	frame_encode(b, FRAME_REPLY | 1, FRAME_STATUS_MAX + 1, 0);
	ck_assert_int_eq(frame_parse(b, sizeof b, 1, 0, &h), FRAME_BAD_STATUS);
}
END_TEST

/* ---- frame: errors, one per bad-header class ---- */

START_TEST(test_frame_err_magic)
{
	unsigned char b[FRAME_HDR_LEN];
	struct frame_hdr h;

	for (int i = 0; i < 4; i++) {
		frame_encode(b, 1, 0, 1);
		b[i] ^= 0x20; /* "tFGB", "TfGB", ... */
		ck_assert_int_eq(frame_parse(b, sizeof b, 0, 100, &h), FRAME_BAD_MAGIC);
		ck_assert_int_eq(frame_parse(b, sizeof b, 1, 100, &h), FRAME_BAD_MAGIC);
	}
	/* the first bad field wins: bad magic before a bad method */
	frame_encode(b, 99, 7, UINT64_MAX);
	b[0] = 'X';
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, 0, &h), FRAME_BAD_MAGIC);
}
END_TEST

START_TEST(test_frame_err_method)
{
	static const unsigned bad_req[] = {0, FRAME_METHOD_MAX + 1, 0x7fff, FRAME_REPLY | 1, 0xffff};
	unsigned char b[FRAME_HDR_LEN];
	struct frame_hdr h;

	for (size_t i = 0; i < sizeof bad_req / sizeof bad_req[0]; i++) {
		frame_encode(b, bad_req[i], 0, 0);
		ck_assert_int_eq(frame_parse(b, sizeof b, 0, 100, &h), FRAME_BAD_METHOD);
	}
	/* a reply must name the method of its call, with the reply bit */
	frame_encode(b, FRAME_REPLY | 2, 0, 8);
	ck_assert_int_eq(frame_parse(b, sizeof b, 1, 100, &h), FRAME_BAD_METHOD);
	frame_encode(b, 1, 0, 8);
	ck_assert_int_eq(frame_parse(b, sizeof b, 1, 100, &h), FRAME_BAD_METHOD);
	/* bad method before bad status and length */
	frame_encode(b, FRAME_METHOD_MAX + 1, 3, 1000);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, 10, &h), FRAME_BAD_METHOD);
}
END_TEST

START_TEST(test_frame_err_status)
{
	unsigned char b[FRAME_HDR_LEN];
	struct frame_hdr h;

	frame_encode(b, 1, 1, 0);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, 100, &h), FRAME_BAD_STATUS);
	frame_encode(b, 3, 0xffff, 8);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, 100, &h), FRAME_BAD_STATUS);
	/* bad status before too long */
	frame_encode(b, 1, 2, 1000);
	ck_assert_int_eq(frame_parse(b, sizeof b, 0, 10, &h), FRAME_BAD_STATUS);
}
END_TEST

START_TEST(test_frame_err_reply_body)
{
	unsigned char b[FRAME_HDR_LEN];
	struct frame_hdr h;

	frame_encode(b, FRAME_REPLY | 1, TR_UNIMPLEMENTED, 1);
	ck_assert_int_eq(frame_parse(b, sizeof b, 1, UINT64_MAX, &h), FRAME_BAD_LENGTH);
	/* the same length in a request or an OK reply is fine */
	frame_encode(b, FRAME_REPLY | 1, 0, 1);
	ck_assert_int_eq(frame_parse(b, sizeof b, 1, UINT64_MAX, &h), FRAME_OK);
}
END_TEST

START_TEST(test_frame_err_names)
{
	for (int v = FRAME_OK; v <= FRAME_BAD_LENGTH; v++)
		ck_assert_str_ne(frame_verdict_name(v), "?");
	ck_assert_str_eq(frame_verdict_name(FRAME_BAD_MAGIC), "bad magic");
	ck_assert_str_eq(frame_verdict_name(-1), "?");
	ck_assert_str_eq(frame_verdict_name(FRAME_BAD_LENGTH + 1), "?");
}
END_TEST

Suite *make_frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *core = tcase_create("core"), *limits = tcase_create("limits");
	TCase *errors = tcase_create("errors");

	tcase_add_test(core, test_frame_encode_bytes);
	tcase_add_test(core, test_frame_decode_every_field);
	tcase_add_test(core, test_frame_parse_requests);
	tcase_add_test(core, test_frame_parse_replies);
	tcase_add_test(limits, test_frame_limits_short);
	tcase_add_test(limits, test_frame_limits_length);
	tcase_add_test(errors, test_frame_err_magic);
	tcase_add_test(errors, test_frame_err_method);
	tcase_add_test(errors, test_frame_err_status);
	tcase_add_test(errors, test_frame_err_reply_body);
	tcase_add_test(errors, test_frame_err_names);
	suite_add_tcase(s, core);
	suite_add_tcase(s, limits);
	suite_add_tcase(s, errors);
	return s;
}

/* ---- socket: a server thread on loopback, per test ---- */

#define MAXMSG (1u << 20)
#define WAIT_NS ((uint64_t)(5e9 * tfgb_test_slow()))

static struct {
	pthread_t thread;
	volatile sig_atomic_t stop;
	atomic_int ready, done;
	struct opt_hostport addr;
	struct tr_server_cfg cfg;
	struct err err;
	void *ctx;
	int rc;
	uint64_t stopped_ns;
} srv;

static struct tr_client *cl;
static void *cl_ctx;

static uint16_t free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void on_ready(void *arg)
{
	(void)arg;
	atomic_store(&srv.ready, 1);
}

static void *serve_thread(void *arg)
{
	(void)arg;
	srv.rc = tr_socket_ops.serve(srv.ctx, &srv.cfg, &srv.err);
	srv.stopped_ns = now_ns();
	atomic_store(&srv.done, 1);
	return NULL;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static void srv_setup(void)
{
	struct err err;
	uint64_t until = now_ns() + WAIT_NS;

	memset(&srv, 0, sizeof srv);
	snprintf(srv.addr.host, sizeof srv.addr.host, "127.0.0.1");
	srv.addr.port = free_port();
	ck_assert_int_eq(tr_socket_ops.init(NULL, &srv.ctx, &err), 0);
	srv.cfg = (struct tr_server_cfg){.addrs = &srv.addr, .naddrs = 1, .max_message = MAXMSG,
	                                 .threads = 2, .stop = &srv.stop, .ready = on_ready,
	                                 .info = "who-am-i", .info_len = 8};
	ck_assert_int_eq(pthread_create(&srv.thread, NULL, serve_thread, NULL), 0);
	while (!atomic_load(&srv.ready) && !atomic_load(&srv.done) && now_ns() < until)
		sleep_ms(5);
	ck_assert_msg(atomic_load(&srv.ready), "server not ready: %s", srv.err.msg);
	ck_assert_int_eq(tr_socket_ops.init(NULL, &cl_ctx, &err), 0);
	ck_assert_int_eq(tr_socket_ops.client_open(cl_ctx, NULL, &cl, &err), 0);
}

static void srv_teardown(void)
{
	tr_socket_ops.client_close(cl);
	cl = NULL;
	tr_socket_ops.fini(cl_ctx);
	srv.stop = 1;
	pthread_join(srv.thread, NULL);
	tr_socket_ops.fini(srv.ctx);
}

static struct tr_conn *conn_open(void)
{
	struct tr_conn *k = NULL;
	struct err err = {{0}};
	int rc = tr_socket_ops.connect(cl, &srv.addr, now_ns() + WAIT_NS, &k, &err);

	ck_assert_msg(rc == 0, "connect: %s", err.msg);
	return k;
}

/* Runs one call to completion. */
static void call_run(struct tr_conn *k, struct tr_call *c)
{
	struct tr_call *done[4];
	uint64_t until = now_ns() + WAIT_NS;
	int n = 0;

	ck_assert_int_eq(tr_socket_ops.submit(k, c), 0);
	while (n == 0 && now_ns() < until)
		n = tr_socket_ops.reap(cl, done, 4, until);
	ck_assert_int_eq(n, 1);
	ck_assert_ptr_eq(done[0], c);
}

static void put_be64(unsigned char *b, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		b[i] = (unsigned char)v;
}

static uint64_t get_be64(const unsigned char *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/* ---- socket: core ---- */

START_TEST(test_socket_echo)
{
	static const size_t sizes[] = {0, 1, 10, 4096, 65536, 300000, MAXMSG};
	struct tr_conn *k = conn_open();
	unsigned char *in = malloc(MAXMSG), *out = malloc(MAXMSG);
	struct tr_call c = {.method = TR_ECHO};

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	payload_pattern(7, 1, 0, in, MAXMSG);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		/* three iovecs: the concatenation comes back */
		size_t a = sizes[i] / 3, b = sizes[i] / 2;
		struct iovec iov[3] = {{in, a}, {in + a, b - a}, {in + b, sizes[i] - b}};
		memset(out, 0, MAXMSG);
		c.iov = iov;
		c.iovcnt = 3;
		c.resp_buf = out;
		c.resp_cap = MAXMSG;
		call_run(k, &c);
		ck_assert_int_eq(c.status, TR_OK);
		ck_assert_uint_eq(c.resp_len, sizes[i]);
		ck_assert_msg(!memcmp(in, out, sizes[i]), "echo of %zu bytes differs", sizes[i]);
	}
	/* a reply beyond resp_cap: the length is whole, the copy is cut */
	{
		struct iovec iov = {in, 5000};
		memset(out, 0, 200);
		c.iov = &iov;
		c.iovcnt = 1;
		c.resp_cap = 100;
		call_run(k, &c);
		ck_assert_uint_eq(c.resp_len, 5000);
		ck_assert_mem_eq(in, out, 100);
		ck_assert_uint_eq(out[100], 0);
		/* and without a buffer */
		c.resp_buf = NULL;
		c.resp_cap = 0;
		call_run(k, &c);
		ck_assert_int_eq(c.status, TR_OK);
		ck_assert_uint_eq(c.resp_len, 5000);
	}
	tr_socket_ops.call_release(&c);
	free(in);
	free(out);
}
END_TEST

START_TEST(test_socket_ack_and_pull)
{
	struct tr_conn *k = conn_open();
	static unsigned char body[200000];
	unsigned char ack[8], arg[8], *got = malloc(MAXMSG), *want = malloc(MAXMSG);
	struct iovec iov[2] = {{body, 150000}, {body + 150000, 50000}}, argv = {arg, 8};
	struct tr_call c = {.method = TR_ACK, .iov = iov, .iovcnt = 2, .resp_buf = ack,
	                    .resp_cap = sizeof ack};

	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_OK);
	ck_assert_uint_eq(c.resp_len, 8);
	ck_assert_uint_eq(get_be64(ack), 200000);

	/* Pull: N bytes of payload_pattern(0, 0, ...), N up to max_message */
	payload_pattern(0, 0, 0, want, MAXMSG);
	for (uint64_t n = 0; n <= MAXMSG; n = n ? n * 16 : 1) {
		put_be64(arg, n);
		c = (struct tr_call){.method = TR_PULL, .iov = &argv, .iovcnt = 1, .resp_buf = got,
		                     .resp_cap = MAXMSG, .priv = c.priv};
		call_run(k, &c);
		ck_assert_int_eq(c.status, TR_OK);
		ck_assert_uint_eq(c.resp_len, n);
		ck_assert_msg(!memcmp(got, want, (size_t)n), "Pull of %llu bytes differs",
		              (unsigned long long)n);
	}
	tr_socket_ops.call_release(&c);
	free(got);
	free(want);
}
END_TEST

/* 16 calls of mixed methods in flight on one connection, then again. */
START_TEST(test_socket_pipeline)
{
	enum { N = 16 };
	struct tr_conn *k = conn_open();
	static unsigned char body[N][3000], resp[N][3000], ack[N][8];
	struct iovec iov[N];
	struct tr_call c[N], *done[N];

	for (int round = 0; round < 3; round++) {
		int got = 0;
		uint64_t until = now_ns() + WAIT_NS;

		for (int i = 0; i < N; i++) {
			void *priv = round ? c[i].priv : NULL;
			memset(body[i], 'a' + i, sizeof body[i]);
			iov[i] = (struct iovec){body[i], 100 * (size_t)(i + 1) + (size_t)round};
			c[i] = (struct tr_call){.method = i % 2 ? TR_ACK : TR_ECHO, .iov = &iov[i],
			                        .iovcnt = 1, .resp_buf = i % 2 ? ack[i] : resp[i],
			                        .resp_cap = i % 2 ? 8 : sizeof resp[i], .priv = priv};
			ck_assert_int_eq(tr_socket_ops.submit(k, &c[i]), 0);
		}
		while (got < N && now_ns() < until) {
			int n = tr_socket_ops.reap(cl, done + got, N - got, until);
			ck_assert_int_ge(n, 0);
			got += n;
		}
		ck_assert_int_eq(got, N);
		for (int i = 0; i < N; i++) {
			ck_assert_ptr_eq(done[i], &c[i]); /* replies in request order */
			ck_assert_int_eq(c[i].status, TR_OK);
			if (i % 2) {
				ck_assert_uint_eq(get_be64(ack[i]), iov[i].iov_len);
			} else {
				ck_assert_uint_eq(c[i].resp_len, iov[i].iov_len);
				ck_assert_mem_eq(resp[i], body[i], iov[i].iov_len);
			}
		}
	}
	for (int i = 0; i < N; i++)
		tr_socket_ops.call_release(&c[i]);
}
END_TEST

static size_t varint_put(unsigned char *b, uint64_t v)
{
	size_t n = 0;

	for (; v >= 0x80; v >>= 7)
		b[n++] = (unsigned char)(v | 0x80);
	b[n++] = (unsigned char)v;
	return n;
}

/* A canonical TensorBundle of n uint8 tensors of sz bytes each ("iov/<i>",
 * shape [sz], content from payload_pattern); malloc'd, its length in *len. */
static unsigned char *bundle_make(size_t n, size_t sz, size_t *len)
{
	unsigned char *b = malloc(n * (sz + 48) + 1), *q = b;

	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++) {
		unsigned char h[48];
		size_t hl = 0, tl;
		char name[24];
		size_t nl = (size_t)snprintf(name, sizeof name, "iov/%zu", i);
		unsigned char dim[10];
		size_t dl = varint_put(dim, sz);
		h[hl++] = 0x0a;
		h[hl++] = (unsigned char)nl;
		memcpy(h + hl, name, nl);
		hl += nl;
		h[hl++] = 0x10;
		h[hl++] = 4;
		h[hl++] = 0x1a;
		h[hl++] = (unsigned char)dl;
		memcpy(h + hl, dim, dl);
		hl += dl;
		h[hl++] = 0x22;
		hl += varint_put(h + hl, sz);
		tl = hl + sz;
		*q++ = 0x0a;
		q += varint_put(q, tl);
		memcpy(q, h, hl);
		q += hl;
		payload_pattern(3, (uint32_t)i, 0, q, sz);
		q += sz;
	}
	*len = (size_t)(q - b);
	return b;
}

/* EchoTensorZeroCopy and AckTensorZeroCopy, 8 in flight on one
 * connection: bundles that arrive whole in the input buffer, that have
 * more pieces than the reply ring holds, and that go to the tensor input
 * buffer; an EchoTensor's reply is its (canonical) request again. */
START_TEST(test_socket_tensor_zero_copy)
{
	enum { N = 8 };
	static const size_t shape[][2] = {{3, 2000}, {300, 1500}, {3, 300000}, {40, 16}};
	struct tr_conn *k = conn_open();
	struct tr_call c[N], *done[N];

	memset(c, 0, sizeof c);
	for (size_t sh = 0; sh < sizeof shape / sizeof shape[0]; sh++) {
		size_t len;
		unsigned char *req = bundle_make(shape[sh][0], shape[sh][1], &len), *resp[N];
		struct iovec iov = {req, len};
		uint64_t until = now_ns() + WAIT_NS;
		int got = 0;

		ck_assert_uint_le(len, MAXMSG);
		for (int i = 0; i < N; i++) {
			ck_assert_ptr_nonnull(resp[i] = calloc(1, len + 1));
			c[i] = (struct tr_call){.method = i % 2 ? TR_ACK_TENSOR_ZC : TR_ECHO_TENSOR_ZC,
			                        .iov = &iov, .iovcnt = 1, .resp_buf = resp[i],
			                        .resp_cap = len, .priv = c[i].priv};
			ck_assert_int_eq(tr_socket_ops.submit(k, &c[i]), 0);
		}
		while (got < N && now_ns() < until)
			got += tr_socket_ops.reap(cl, done + got, N - got, until);
		ck_assert_msg(got == N, "bundle %zu: %d of %d replies", sh, got, N);
		for (int i = 0; i < N; i++) {
			ck_assert_int_eq(c[i].status, TR_OK);
			if (i % 2) {
				unsigned char want[32], *q = want;
				*q++ = 0x08;
				q += varint_put(q, shape[sh][0] * shape[sh][1]);
				*q++ = 0x10;
				q += varint_put(q, shape[sh][0]);
				ck_assert_uint_eq(c[i].resp_len, (size_t)(q - want));
				ck_assert_mem_eq(resp[i], want, (size_t)(q - want));
			} else {
				ck_assert_uint_eq(c[i].resp_len, len);
				ck_assert_msg(!memcmp(resp[i], req, len), "bundle %zu: echo differs", sh);
			}
			free(resp[i]);
		}
		free(req);
	}
	for (int i = 0; i < N; i++)
		tr_socket_ops.call_release(&c[i]);
}
END_TEST

/* ---- socket: limits ---- */

START_TEST(test_socket_limits_max_message)
{
	struct tr_conn *k = conn_open();
	unsigned char *big = calloc(1, MAXMSG + 1), arg[8];
	struct iovec iov = {big, MAXMSG}, argv = {arg, 8};
	struct tr_call c = {.method = TR_ACK, .iov = &iov, .iovcnt = 1};

	/* exactly max_message is fine */
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_OK);
	/* Pull of max_message + 1 bytes: RESOURCE_EXHAUSTED, the connection goes on */
	put_be64(arg, MAXMSG + 1ull);
	c.method = TR_PULL;
	c.iov = &argv;
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_RESOURCE_EXHAUSTED);
	ck_assert_uint_eq(c.resp_len, 0);
	/* a request of max_message + 1 bytes is refused, then the connection
	 * ends: the server does not read a body it will not keep */
	iov.iov_len = MAXMSG + 1;
	c.method = TR_ECHO;
	c.iov = &iov;
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_RESOURCE_EXHAUSTED);
	c.method = TR_ACK;
	iov.iov_len = 10;
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_UNAVAILABLE);
	/* a new connection works */
	k = conn_open();
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_OK);
	tr_socket_ops.call_release(&c);
	free(big);
}
END_TEST

START_TEST(test_socket_limits_stop)
{
	struct tr_conn *k = conn_open();
	static unsigned char body[64];
	struct iovec iov = {body, sizeof body};
	struct tr_call c = {.method = TR_ECHO, .iov = &iov, .iovcnt = 1};
	uint64_t t0;

	call_run(k, &c);
	t0 = now_ns();
	srv.stop = 1;
	while (!atomic_load(&srv.done) && now_ns() < t0 + WAIT_NS)
		sleep_ms(1);
	ck_assert(atomic_load(&srv.done));
	ck_assert_int_eq(srv.rc, 0);
	ck_assert_msg(srv.stopped_ns - t0 < 200000000ull * tfgb_test_slow(),
	              "serve took %llu ms to stop",
	              (unsigned long long)(srv.stopped_ns - t0) / 1000000);
	/* the server closed the connection: the next call fails, UNAVAILABLE */
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_UNAVAILABLE);
	tr_socket_ops.call_release(&c);
}
END_TEST

/* ---- socket: errors ---- */

/* Info: the server's reply as given, whatever the request, and the
 * connection goes on (job.allocator: a worker learns each PS's malloc). */
START_TEST(test_socket_info)
{
	struct tr_conn *k = conn_open();
	unsigned char junk[5] = {1, 2, 3, 4, 5}, reply[64];
	struct iovec iov = {junk, sizeof junk};
	struct tr_call c = {.method = TR_INFO, .resp_buf = reply, .resp_cap = sizeof reply};

	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_OK);
	ck_assert_uint_eq(c.resp_len, 8);
	ck_assert_mem_eq(reply, "who-am-i", 8);
	c.iov = &iov; /* a body is read and ignored */
	c.iovcnt = 1;
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_OK);
	ck_assert_uint_eq(c.resp_len, 8);
	c.method = TR_ECHO;
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_OK);
	ck_assert_uint_eq(c.resp_len, 5);
	ck_assert_mem_eq(reply, junk, 5);
	tr_socket_ops.call_release(&c);
}
END_TEST

START_TEST(test_socket_err_statuses)
{
	struct tr_conn *k = conn_open();
	unsigned char arg[9] = {0};
	struct iovec iov = {arg, 7};
	struct tr_call c = {.method = TR_PULL, .iov = &iov, .iovcnt = 1};

	call_run(k, &c); /* Pull's request is exactly 8 bytes */
	ck_assert_int_eq(c.status, TR_INVALID_ARGUMENT);
	iov.iov_len = 9;
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_INVALID_ARGUMENT);
	/* 9 zero bytes: no TensorBundle (nor TensorPull), for every tensor
	 * method (the in-place twins refuse it alike) */
	for (int m = TR_ECHO_TENSOR; m <= TR_PULL_TENSOR_ZC; m++) {
		if (m == TR_INFO)
			continue;
		c.method = m;
		call_run(k, &c);
		ck_assert_int_eq(c.status, TR_INVALID_ARGUMENT);
		ck_assert_uint_eq(c.resp_len, 0);
	}
	/* and the connection still serves */
	c.method = TR_ECHO;
	call_run(k, &c);
	ck_assert_int_eq(c.status, TR_OK);
	ck_assert_uint_eq(c.resp_len, 9);
	ck_assert_int_eq(tr_socket_ops.submit(k, &(struct tr_call){.method = TR_METHOD_LAST + 1}),
	                 -EINVAL);
	tr_socket_ops.call_release(&c);
}
END_TEST

/* A raw client sends a bad header: that connection is closed, the others
 * go on. */
START_TEST(test_socket_err_bad_header_closes)
{
	static const struct {
		const char *what;
		unsigned char hdr[FRAME_HDR_LEN];
	} bad[] = {
		{"bad magic", "GET / HTTP/1.1\r\n"},
		{"method 0", "TFGB\0\0\0\0\0\0\0\0\0\0\0\0"},
		{"method 11", "TFGB\0\13\0\0\0\0\0\0\0\0\0\0"},
		{"a reply as request", "TFGB\x80\1\0\0\0\0\0\0\0\0\0\0"},
		{"status 1", "TFGB\0\1\0\1\0\0\0\0\0\0\0\0"},
	};
	struct tr_conn *k = conn_open();
	static unsigned char body[10];
	struct iovec iov = {body, sizeof body};
	struct tr_call c = {.method = TR_ECHO, .iov = &iov, .iovcnt = 1};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(srv.addr.port),
		                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		struct timeval tv = {5, 0};
		char buf[64];
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		ck_assert_int_eq(send(fd, bad[i].hdr, FRAME_HDR_LEN, MSG_NOSIGNAL), FRAME_HDR_LEN);
		ck_assert_msg(recv(fd, buf, sizeof buf, 0) <= 0, "%s: got a reply", bad[i].what);
		close(fd);
		call_run(k, &c);
		ck_assert_msg(c.status == TR_OK, "%s: another connection failed", bad[i].what);
	}
	tr_socket_ops.call_release(&c);
}
END_TEST

START_TEST(test_socket_err_connect)
{
	struct opt_hostport a = {.host = "127.0.0.1", .port = free_port()};
	struct tr_conn *k = NULL;
	struct err err = {{0}};
	char want[64];
	uint64_t t0 = now_ns();
	int rc = tr_socket_ops.connect(cl, &a, t0 + 300000000ull, &k, &err);

	ck_assert_int_eq(rc, -ECONNREFUSED);
	snprintf(want, sizeof want, "'127.0.0.1:%u'", a.port);
	ck_assert_msg(strstr(err.msg, want), "'%s' does not name %s", err.msg, want);
	ck_assert_msg(strstr(err.msg, "refused"), "'%s'", err.msg);
	ck_assert_uint_lt(now_ns() - t0, WAIT_NS / 5);
	/* an unknown host */
	snprintf(a.host, sizeof a.host, "no-such-host.invalid");
	rc = tr_socket_ops.connect(cl, &a, now_ns() + 300000000ull, &k, &err);
	ck_assert_int_lt(rc, 0);
	ck_assert_msg(strstr(err.msg, "no-such-host.invalid"), "'%s'", err.msg);
}
END_TEST

START_TEST(test_socket_err_addr_in_use)
{
	struct tr_server_cfg cfg = srv.cfg;
	volatile sig_atomic_t stop = 1;
	struct err err = {{0}};
	char want[64];

	cfg.stop = &stop;
	cfg.ready = NULL;
	ck_assert_int_eq(tr_socket_ops.serve(srv.ctx, &cfg, &err), -EADDRINUSE);
	snprintf(want, sizeof want, "cannot listen on '127.0.0.1:%u'", srv.addr.port);
	ck_assert_msg(strstr(err.msg, want), "'%s'", err.msg);
}
END_TEST

/* The peer closes: the calls in flight fail UNAVAILABLE, and so do later
 * ones on that connection. */
START_TEST(test_socket_err_peer_closes)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	struct opt_hostport hp = {.host = "127.0.0.1"};
	struct tr_conn *k = NULL;
	struct err err;
	static unsigned char body[100];
	struct iovec iov = {body, sizeof body};
	struct tr_call c[2] = {{.method = TR_ECHO, .iov = &iov, .iovcnt = 1},
	                       {.method = TR_ACK, .iov = &iov, .iovcnt = 1}};
	struct tr_call *done[2];
	uint64_t until = now_ns() + WAIT_NS;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd, got = 0;
	char junk[256];

	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	getsockname(lfd, (struct sockaddr *)&a, &len);
	hp.port = ntohs(a.sin_port);
	ck_assert_int_eq(tr_socket_ops.connect(cl, &hp, now_ns() + WAIT_NS, &k, &err), 0);
	fd = accept(lfd, NULL, NULL);
	ck_assert_int_eq(tr_socket_ops.submit(k, &c[0]), 0);
	ck_assert_int_eq(tr_socket_ops.submit(k, &c[1]), 0);
	ck_assert_int_gt(recv(fd, junk, sizeof junk, 0), 0);
	close(fd);
	while (got < 2 && now_ns() < until)
		got += tr_socket_ops.reap(cl, done + got, 2 - got, until);
	ck_assert_int_eq(got, 2);
	ck_assert_int_eq(c[0].status, TR_UNAVAILABLE);
	ck_assert_int_eq(c[1].status, TR_UNAVAILABLE);
	call_run(k, &c[0]);
	ck_assert_int_eq(c[0].status, TR_UNAVAILABLE);
	/* releasing a call in flight on a live connection is safe */
	k = conn_open();
	ck_assert_int_eq(tr_socket_ops.submit(k, &c[1]), 0);
	tr_socket_ops.call_release(&c[1]);
	tr_socket_ops.call_release(&c[0]);
	close(lfd);
}
END_TEST

Suite *make_socket_suite(void)
{
	Suite *s = suite_create("socket");
	TCase *core = tcase_create("core"), *limits = tcase_create("limits");
	TCase *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, srv_setup, srv_teardown);
	tcase_add_checked_fixture(limits, srv_setup, srv_teardown);
	tcase_add_checked_fixture(errors, srv_setup, srv_teardown);
	tcase_set_timeout(core, 30);
	tcase_set_timeout(limits, 30);
	tcase_set_timeout(errors, 30);
	tcase_add_test(core, test_socket_echo);
	tcase_add_test(core, test_socket_ack_and_pull);
	tcase_add_test(core, test_socket_pipeline);
	tcase_add_test(core, test_socket_tensor_zero_copy);
	tcase_add_test(core, test_socket_info);
	tcase_add_test(limits, test_socket_limits_max_message);
	tcase_add_test(limits, test_socket_limits_stop);
	tcase_add_test(errors, test_socket_err_statuses);
	tcase_add_test(errors, test_socket_err_bad_header_closes);
	tcase_add_test(errors, test_socket_err_connect);
	tcase_add_test(errors, test_socket_err_addr_in_use);
	tcase_add_test(errors, test_socket_err_peer_closes);
	suite_add_tcase(s, core);
	suite_add_tcase(s, limits);
	suite_add_tcase(s, errors);
	return s;
}
