/* check_loop.c - a fourth transport, written as a test (suite "loop").
 *
 * "loop" answers every call in the calling process, as a server would:
 * Echo returns the request, Ack its byte count; it has its own job section
 * [loop] (fail_every: every Nth call fails with UNAVAILABLE).  It is added
 * the way a transport is added to tfgb, through its own files (this one)
 * and one registry row (tr_register, the registry's test hook), and then
 * runs through the job model, the worker session (session.c) and the
 * engine exactly as grpc, socket and verbs do: nothing in src/ names it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "engine.h"
#include "session.h"
#include "sysinfo.h"
#include "transport.h"
#include "util.h"
#include "validate.h"

/* ---- the transport ---- */

/* The [loop] section. */
struct loop_conf {
	int64_t fail_every; /* every Nth call fails with UNAVAILABLE; 0: none */
};

static const struct opt_def loop_keys[] = {
	{"loop", "fail_every", OPT_INT, offsetof(struct loop_conf, fail_every), "0",
	 .min = 0, .max = 1000000, .flags = OPT_HAS_MIN | OPT_HAS_MAX,
	 .help = "loop transport: every Nth call fails with UNAVAILABLE; 0 is none"},
	{0},
};

static const struct job_section loop_section = {
	.name = "loop", .keys = loop_keys, .size = sizeof(struct loop_conf),
};

#define LOOP_DONE_MAX 1024

struct tr_client {
	struct tr_client_cfg cfg;
	int64_t fail_every;
	uint64_t calls;
	struct tr_call *done[LOOP_DONE_MAX]; /* completed, not yet reaped: a ring */
	unsigned head, tail;
	struct tr_conn *conns;
};

struct tr_conn {
	struct tr_client *c;
	int outstanding;
	struct tr_conn *next;
};

static int loop_init(const struct tr_setup *s, void **ctx, struct err *err)
{
	(void)s;
	(void)err;
	*ctx = NULL;
	return 0;
}

static void loop_fini(void *ctx)
{
	(void)ctx;
}

static const char *loop_version(void)
{
	return "loop (in-process, tests/check_loop.c)";
}

static int loop_client_open(void *ctx, const struct tr_client_cfg *cfg, struct tr_client **out,
                            struct err *err)
{
	struct tr_client *c = calloc(1, sizeof *c);
	const struct loop_conf *lc = cfg->section;

	(void)ctx;
	if (!c) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	c->cfg = *cfg;
	c->fail_every = lc ? lc->fail_every : 0;
	*out = c;
	return 0;
}

static void loop_client_close(struct tr_client *c)
{
	while (c && c->conns) {
		struct tr_conn *k = c->conns;
		c->conns = k->next;
		free(k);
	}
	free(c);
}

static int loop_connect(struct tr_client *c, const struct opt_hostport *addr,
                        uint64_t deadline_ns, struct tr_conn **out, struct err *err)
{
	struct tr_conn *k = calloc(1, sizeof *k);

	(void)addr;
	(void)deadline_ns;
	if (!k) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	k->c = c;
	k->next = c->conns;
	c->conns = k;
	*out = k;
	return 0;
}

/* The server's answer, made at once: the call is complete when submit
 * returns, and waits in the ring for reap. */
static int loop_submit(struct tr_conn *k, struct tr_call *call)
{
	struct tr_client *c = k->c;
	uint64_t total = 0, off = 0;

	if (k->outstanding >= c->cfg.inflight || c->tail - c->head == LOOP_DONE_MAX)
		return -EAGAIN;
	for (int i = 0; i < call->iovcnt; i++)
		total += call->iov[i].iov_len;
	call->status = TR_OK;
	call->resp_len = 0;
	if (c->fail_every && ++c->calls % (uint64_t)c->fail_every == 0) {
		call->status = TR_UNAVAILABLE;
	} else if (call->method == TR_ECHO) {
		for (int i = 0; i < call->iovcnt && call->resp_buf; i++) {
			size_t n = call->iov[i].iov_len;
			if (off + n > call->resp_cap)
				n = off < call->resp_cap ? call->resp_cap - off : 0;
			memcpy((char *)call->resp_buf + off, call->iov[i].iov_base, n);
			off += n;
		}
		call->resp_len = total;
	} else if (call->method == TR_ACK && call->resp_cap >= 8) {
		be_put64(call->resp_buf, total);
		call->resp_len = 8;
	} else {
		call->status = TR_UNIMPLEMENTED;
	}
	call->priv = k;
	k->outstanding++;
	c->done[c->tail++ % LOOP_DONE_MAX] = call;
	return 0;
}

static int loop_reap(struct tr_client *c, struct tr_call **done, int max, uint64_t deadline_ns)
{
	int n = 0;

	(void)deadline_ns; /* every submitted call is complete already */
	while (n < max && c->head != c->tail) {
		struct tr_call *call = c->done[c->head++ % LOOP_DONE_MAX];
		((struct tr_conn *)call->priv)->outstanding--;
		done[n++] = call;
	}
	return n;
}

static const struct tr_ops loop_ops = {
	.name = "loop",
	.size = sizeof(struct tr_ops),
	.caps = TR_CAP_CLIENT,
	.init = loop_init,
	.fini = loop_fini,
	.version = loop_version,
	.client_open = loop_client_open,
	.client_close = loop_client_close,
	.connect = loop_connect,
	.submit = loop_submit,
	.reap = loop_reap,
};

/* The registry row: the only thing tfgb learns of the transport. */
static const struct tr_entry loop_row = {"loop", &loop_ops, &loop_section, NULL};

/* ---- the tests ---- */

static struct err jerr;

/* A job of transport loop, with the overrides of set (NULL-terminated). */
static void loop_job(struct tfgb *t, const char *const *set)
{
	ck_assert_int_eq(tr_register(&loop_row), 0);
	memset(t, 0, sizeof *t);
	t->cmd = "loop";
	t->task = -1;
	ck_assert_int_eq(job_init(&t->job), 0);
	ck_assert_msg(job_override(&t->job, "job.transport=loop", 1, &jerr) == 0, "%s", jerr.msg);
	for (int i = 0; set && set[i]; i++)
		ck_assert_msg(job_override(&t->job, set[i], i + 2, &jerr) == 0, "%s", jerr.msg);
	ck_assert_msg(job_validate(&t->job, &jerr) == 0, "%s", jerr.msg);
}

/* The job model knows the transport and its section from the row alone:
 * the value of [job] transport, the section's keys, range errors,
 * --print-config and the sections the messages list. */
START_TEST(test_loop_job_model)
{
	static const char *const set[] = {"loop.fail_every=7", NULL};
	struct tfgb t;
	const struct loop_conf *lc;
	struct err err = {{0}};
	char *text;
	int found = 0;

	loop_job(&t, set);
	ck_assert_str_eq(job_transport_name(t.job.transport), "loop");
	ck_assert_ptr_eq(tr_find(t.job.transport, &err), &loop_ops);
	ck_assert_ptr_nonnull(lc = job_section_get(&t.job, &loop_section));
	ck_assert_int_eq(lc->fail_every, 7);
	ck_assert_ptr_nonnull(text = job_ini_string(&t.job));
	ck_assert_ptr_nonnull(strstr(text, "\n[loop]\nfail_every = 7\n"));
	free(text);
	for (const char *const *s = job_section_names(); *s; s++)
		found |= !strcmp(*s, "loop");
	ck_assert(found);
	ck_assert_int_eq(job_override(&t.job, "loop.fail_every=-1", 9, &jerr), -1);
	ck_assert_str_eq(jerr.msg, "-s #9: loop.fail_every = -1: must be in [0, 1000000]");
	ck_assert_int_eq(job_load_string(&t.job, "t.ini", "[lop]\n", &jerr), -1);
	ck_assert_str_eq(jerr.msg, "t.ini:1: unknown section '[lop]'; did you mean '[loop]'?");
	job_free(&t.job);
	/* the same row again is no second transport; another under its name is refused */
	ck_assert_int_eq(tr_register(&loop_row), 0);
	ck_assert_int_eq(tr_register(&(struct tr_entry){"loop", &loop_ops, NULL, NULL}), -1);
}
END_TEST

/* A loop job's worker session, calling method with inflight calls on nps
 * connections, and the engine's configuration for it. */
static void loop_session(struct tfgb *t, const char *const *set, int method, int inflight,
                         int nps, struct session *s, struct engine_cfg *cfg)
{
	loop_job(t, set);
	ck_assert_int_eq(session_open(s, t, tr_find(t->job.transport, &(struct err){{0}}), 0,
	                              method, inflight, nps), TFGB_EXIT_OK);
	session_engine_cfg(s, cfg);
}

/* A worker session over it: the payload, the client configuration from
 * the job (its section included), the connections, and the engine. */
START_TEST(test_loop_session_runs)
{
	static const char *const set[] = {"job.iterations=200", "job.warmup=0s",
	                                  "job.inflight=4", "monitor.interval=0", NULL};
	struct tfgb t;
	struct session s;
	struct engine_cfg cfg;
	struct engine_result res = {0};

	loop_session(&t, set, TR_ACK, 4, 2, &s, &cfg);
	ck_assert_int_eq(s.nconns, 2);
	ck_assert_int_eq(s.client->cfg.inflight, 4);
	ck_assert_uint_eq(s.client->cfg.max_request, s.p.total);
	ck_assert_int_eq(engine_run(&cfg, &res), 0);
	ck_assert_uint_eq(res.calls, 200);
	ck_assert_uint_eq(res.errors, 0);
	ck_assert_uint_eq(res.bytes, 200 * s.p.total);
	engine_result_free(&res);
	session_close(&s);
	job_free(&t.job);
}
END_TEST

/* Its own key reaches it through tr_client_cfg: a failing call is the
 * run's error, named by its status. */
START_TEST(test_loop_section_reaches_client)
{
	static const char *const set[] = {"job.iterations=50", "job.warmup=0s",
	                                  "loop.fail_every=10", "monitor.interval=0", NULL};
	struct tfgb t;
	struct session s;
	struct engine_cfg cfg;
	struct engine_result res = {0};

	loop_session(&t, set, TR_ECHO, 1, 1, &s, &cfg);
	ck_assert_int_eq(s.client->fail_every, 10);
	ck_assert_int_lt(engine_run(&cfg, &res), 0);
	ck_assert_uint_eq(res.calls, 9);
	ck_assert_msg(strstr(res.err.msg, "UNAVAILABLE") != NULL, "%s", res.err.msg);
	engine_result_free(&res);
	session_close(&s);
	job_free(&t.job);
}
END_TEST

Suite *make_loop_suite(void)
{
	Suite *s = suite_create("loop");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_loop_job_model);
	tcase_add_test(tc, test_loop_session_runs);
	tcase_add_test(tc, test_loop_section_reaches_client);
	suite_add_tcase(s, tc);
	return s;
}
