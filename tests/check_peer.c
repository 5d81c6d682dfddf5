/* check_peer.c - telling what answers at a PS address (src/transport/peer.c),
 * and the verbs transport's use of it (its side channel answered by an HTTP
 * server, a host that does not resolve); the grpc and socket transports'
 * are end to end in tests/t_diag.sh. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "peer.h"
#include "util.h"
#include "vdev.h"

static const char http_reply[] = "HTTP/1.0 400 Bad request\r\nServer: test\r\n\r\n";

/* A fake server on 127.0.0.1:port: answers `accepts` connections with
 * http_reply after reading what the client sends first. */
struct fake {
	int lfd, accepts;
	pthread_t thread;
};

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	char buf[4096];

	for (int i = 0; i < f->accepts; i++) {
		struct pollfd p = {.fd = f->lfd, .events = POLLIN};
		int fd;

		if (poll(&p, 1, 5000) <= 0 || (fd = accept(f->lfd, NULL, NULL)) < 0)
			break;
		p = (struct pollfd){.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 2000) > 0 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0 &&
		    send(fd, http_reply, sizeof http_reply - 1, MSG_NOSIGNAL) < 0)
			i = f->accepts; /* the client is gone: stop */
		close(fd);
	}
	return NULL;
}

/* 0 when the fake server listens on port, -1 when the port is taken. */
static int fake_start(struct fake *f, uint16_t port, int accepts)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;

	f->accepts = accepts;
	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(f->lfd, 0);
	setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(f->lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(f->lfd, 4) < 0) {
		close(f->lfd);
		return -1;
	}
	ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_run, f), 0);
	return 0;
}

static void fake_stop(struct fake *f)
{
	shutdown(f->lfd, SHUT_RDWR); /* wakes its poll */
	pthread_join(f->thread, NULL);
	close(f->lfd);
}

START_TEST(test_peer_kind_of)
{
	static const unsigned char settings[] = {0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100};
	static const unsigned char goaway[] = {0, 0, 8, 7, 0, 0, 0, 0, 0};
	static const unsigned char tls[] = {0x15, 3, 3, 0, 2, 2, 70};
	static const unsigned char tfgb[] = {'T', 'F', 'G', 'B', 0x80, 6, 0, 0};
	static const unsigned char tfgv[] = {'T', 'F', 'G', 'V', 0, 1};

	ck_assert_int_eq(peer_kind_of(NULL, 0), PEER_NONE);
	ck_assert_int_eq(peer_kind_of((const unsigned char *)http_reply, sizeof http_reply - 1),
	                 PEER_HTTP1);
	ck_assert_int_eq(peer_kind_of((const unsigned char *)"<!DOCTYPE HTML>", 15), PEER_HTTP1);
	ck_assert_int_eq(peer_kind_of(settings, sizeof settings), PEER_HTTP2);
	ck_assert_int_eq(peer_kind_of(goaway, sizeof goaway), PEER_HTTP2);
	ck_assert_int_eq(peer_kind_of(tls, sizeof tls), PEER_TLS);
	ck_assert_int_eq(peer_kind_of(tfgb, sizeof tfgb), PEER_TFGB);
	ck_assert_int_eq(peer_kind_of(tfgv, sizeof tfgv), PEER_TFGV);
	ck_assert_int_eq(peer_kind_of((const unsigned char *)"SSH-2.0-OpenSSH", 15), PEER_OTHER);
	/* an HTTP/2 header with a stream id is not a server's first frame */
	ck_assert_int_eq(peer_kind_of((const unsigned char *)"\0\0\6\4\0\0\0\0\1", 9), PEER_OTHER);
}
END_TEST

START_TEST(test_peer_describe_printable)
{
	static const unsigned char junk[] = {0x00, 0xff, '\'', 'a', '\n', 'b'};
	char out[200];

	peer_describe(junk, sizeof junk, out, sizeof out);
	ck_assert_msg(strstr(out, "00 ff 27 61 0a 62") != NULL, "%s", out);
	for (const char *p = out; *p; p++)
		ck_assert_msg(*p >= 0x20 && *p < 0x7f, "unprintable byte in '%s'", out);
	ck_assert_msg(strstr(out, "'.'a'") == NULL, "a quote went through: %s", out);
	peer_describe((const unsigned char *)http_reply, sizeof http_reply - 1, out, sizeof out);
	ck_assert_msg(strstr(out, "HTTP server") && strstr(out, "'HTTP/1.0 400 Bad request'"),
	              "%s", out);
	peer_describe(NULL, 0, out, sizeof out);
	ck_assert_msg(strstr(out, "closed the connection") != NULL, "%s", out);
}
END_TEST

START_TEST(test_peer_errors_bind_text)
{
	char buf[200];
	struct err e;

	ck_assert_msg(strstr(peer_bind_text(EACCES, 80, buf, sizeof buf),
	                     "permission denied: port 80 needs privileges"), "%s", buf);
	ck_assert_str_eq(peer_bind_text(EADDRINUSE, 80, buf, sizeof buf), "address in use");
	ck_assert_int_eq(peer_resolve("localhost", &e), 0);
	ck_assert_int_eq(peer_resolve("no-such-host.invalid", &e), -EHOSTUNREACH);
	ck_assert_msg(strstr(e.msg, "cannot resolve 'no-such-host.invalid': "), "%s", e.msg);
}
END_TEST

/* peer_sniff against an HTTP server; against nothing, refused */
START_TEST(test_peer_errors_sniff)
{
	struct opt_hostport a = {.host = "127.0.0.1"};
	unsigned char got[256];
	struct fake f;
	int n;

	a.port = (uint16_t)(vt_free_ps_port() + VB_SIDE_PORT_OFFSET);
	if (fake_start(&f, a.port, 1) < 0)
		TFGB_SKIP("port %u was taken in the meantime", a.port);
	n = peer_sniff(&a, peer_h2_preface, peer_h2_preface_len, got, sizeof got, 5000);
	fake_stop(&f);
	ck_assert_int_eq(n, (int)sizeof http_reply - 1);
	ck_assert_int_eq(peer_kind_of(got, (size_t)n), PEER_HTTP1);
	ck_assert_int_eq(peer_sniff(&a, "x", 1, got, sizeof got, 1000), -ECONNREFUSED);
}
END_TEST

/* The verbs client, its side channel answered by an HTTP server: says so
 * at once; a host that does not resolve: says so, naming it. */
START_TEST(test_peer_errors_verbs)
{
	struct opt_hostport a = {.host = "127.0.0.1"};
	struct tr_client *c;
	struct tr_conn *k;
	struct err err = {{0}};
	struct vb_opts o;
	struct fake f;
	void *ctx;
	uint64_t t0;

	a.port = vt_free_ps_port();
	if (fake_start(&f, (uint16_t)(a.port + VB_SIDE_PORT_OFFSET), 2) < 0)
		TFGB_SKIP("port %u was taken in the meantime", a.port + VB_SIDE_PORT_OFFSET);
	vt_opts_sim(&o, 0);
	ck_assert_int_eq(tr_verbs_ctx_new(&o, &vdev_sim_ops, &ctx, &err), 0);
	ck_assert_int_eq(tr_verbs_ops.client_open(ctx, &(struct tr_client_cfg){.inflight = 1}, &c,
	                                          &err), 0);
	t0 = now_ns();
	ck_assert_int_lt(tr_verbs_ops.connect(c, &a, t0 + 20 * 1000000000ull, &k, &err), 0);
	ck_assert_uint_lt(now_ns() - t0, (uint64_t)(5e9 * tfgb_test_slow()));
	ck_assert_msg(strstr(err.msg, "it is an HTTP server") != NULL, "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "verbs side channel") != NULL, "%s", err.msg);
	fake_stop(&f);

	snprintf(a.host, sizeof a.host, "no-such-host.invalid");
	ck_assert_int_lt(tr_verbs_ops.connect(c, &a, now_ns() + 1000000000ull, &k, &err), 0);
	ck_assert_msg(strstr(err.msg, "cannot resolve 'no-such-host.invalid'") != NULL, "%s",
	              err.msg);
	tr_verbs_ops.client_close(c);
	tr_verbs_ops.fini(ctx);
}
END_TEST

Suite *make_peer_suite(void)
{
	Suite *s = suite_create("peer");
	TCase *tc = tcase_create("core");
	TCase *te = tcase_create("errors");

	tcase_add_test(tc, test_peer_kind_of);
	tcase_add_test(tc, test_peer_describe_printable);
	suite_add_tcase(s, tc);
	tcase_set_timeout(te, 60);
	tcase_add_test(te, test_peer_errors_bind_text);
	tcase_add_test(te, test_peer_errors_sniff);
	tcase_add_test(te, test_peer_errors_verbs);
	suite_add_tcase(s, te);
	return s;
}
