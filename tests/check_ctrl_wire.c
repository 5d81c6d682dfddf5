/* check_ctrl_wire.c - the control service's codecs (src/ctrl/ctrl_wire.c) on bare
 * bytes, without gRPC: every request decoder on good, truncated, oversized
 * and garbage bodies, the encoders against the decoders, the client's check
 * of a Collect reply, and the token comparison. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "ctrl_wire.h"
#include "util.h"

static char msg[MSG_MAX];

static int decode(int m, const void *b, size_t len, struct ctrl_req *rq)
{
	msg[0] = 0;
	return ctrl_req_decode(m, b, len, rq, msg, sizeof msg);
}

/* What ctrl_req_encode writes, ctrl_req_decode reads back, for each method. */
START_TEST(test_ctrl_wire_round_trip)
{
	struct ctrl_req in = {.run_id = 0x0102030405060708ull, .worker = 4095, .workers = 4096,
	                      .gen = 0xfffffffeu, .partial = 1, .blob_len = 3};
	unsigned char b[REQ_HDR_MAX + 3];
	struct ctrl_req out;
	size_t n;

	n = ctrl_req_encode(M_BARRIER, &in, b);
	ck_assert_uint_eq(n, BARRIER_LEN);
	ck_assert_int_eq(decode(M_BARRIER, b, n, &out), 0);
	ck_assert(out.run_id == in.run_id && out.worker == 4095 && out.workers == 4096);
	ck_assert_uint_eq(out.gen, 0xfffffffeu);
	ck_assert_ptr_null(out.blob);

	n = ctrl_req_encode(M_REPORT, &in, b);
	ck_assert_uint_eq(n, REPORT_HDR);
	memcpy(b + n, "abc", 3);
	ck_assert_int_eq(decode(M_REPORT, b, n + 3, &out), 0);
	ck_assert_uint_eq(out.blob_len, 3);
	ck_assert_ptr_eq(out.blob, b + REPORT_HDR);
	ck_assert_uint_eq(out.gen, 0);

	n = ctrl_req_encode(M_COLLECT, &in, b);
	ck_assert_uint_eq(n, COLLECT_LEN);
	ck_assert_int_eq(decode(M_COLLECT, b, n, &out), 0);
	ck_assert(out.run_id == in.run_id && out.workers == 4096 && out.partial == 1);
	ck_assert_uint_eq(out.worker, 0);

	/* an empty report is a report */
	in.blob_len = 0;
	n = ctrl_req_encode(M_REPORT, &in, b);
	ck_assert_int_eq(decode(M_REPORT, b, n, &out), 0);
	ck_assert_uint_eq(out.blob_len, 0);
}
END_TEST

/* Every length but the exact one is refused, with the lengths named. */
START_TEST(test_ctrl_wire_truncated)
{
	static const size_t want[M_COUNT] = {BARRIER_LEN, REPORT_HDR, COLLECT_LEN};
	struct ctrl_req in = {.run_id = 1, .worker = 0, .workers = 1};
	unsigned char b[64] = {0};
	struct ctrl_req out;

	for (int m = 0; m < M_COUNT; m++) {
		ctrl_req_encode(m, &in, b);
		for (size_t len = 0; len < want[m]; len++) {
			ck_assert_int_eq(decode(m, b, len, &out), -EINVAL);
			ck_assert_msg(strstr(msg, ctrl_method_wire[m]), "%s", msg);
		}
		/* NULL with no bytes: nothing is read */
		ck_assert_int_eq(decode(m, NULL, 0, &out), -EINVAL);
	}
	ck_assert_int_eq(decode(M_BARRIER, b, BARRIER_LEN + 1, &out), -EINVAL);
	ck_assert_str_eq(msg, "Barrier takes exactly 20 bytes, got 21");
	ck_assert_int_eq(decode(M_COLLECT, b, COLLECT_LEN + 1, &out), -EINVAL);
	ck_assert_int_eq(decode(M_REPORT, b, 7, &out), -EINVAL);
	ck_assert_str_eq(msg, "Report takes a 20-byte header and the blob, got 7 bytes");
	ck_assert_int_eq(decode(M_UNKNOWN, b, BARRIER_LEN, &out), -EINVAL);
	ck_assert_int_eq(decode(-1, b, BARRIER_LEN, &out), -EINVAL);
}
END_TEST

/* A Report's len must be what follows and at most CTRL_BLOB_MAX. */
START_TEST(test_ctrl_wire_report_len)
{
	struct ctrl_req in = {.run_id = 2, .worker = 0, .workers = 1, .blob_len = 5};
	size_t total = REPORT_HDR + CTRL_BLOB_MAX + 1;
	unsigned char *b = calloc(1, total);
	struct ctrl_req out;

	ck_assert_ptr_nonnull(b);
	ctrl_req_encode(M_REPORT, &in, b);
	ck_assert_int_eq(decode(M_REPORT, b, REPORT_HDR + 4, &out), -EINVAL); /* len past the end */
	ck_assert_str_eq(msg, "Report: len 5 does not match the 4 bytes that follow");
	ck_assert_int_eq(decode(M_REPORT, b, REPORT_HDR + 6, &out), -EINVAL); /* bytes after it */
	be_put32(b + 16, 0xffffffffu);
	ck_assert_int_eq(decode(M_REPORT, b, REPORT_HDR, &out), -EINVAL);
	ck_assert_msg(strstr(msg, "exceeds"), "%s", msg);
	/* oversized: one byte over the limit, len saying so */
	be_put32(b + 16, CTRL_BLOB_MAX + 1);
	ck_assert_int_eq(decode(M_REPORT, b, total, &out), -EINVAL);
	ck_assert_msg(strstr(msg, "exceeds 262144"), "%s", msg);
	/* exactly the limit passes */
	be_put32(b + 16, CTRL_BLOB_MAX);
	ck_assert_int_eq(decode(M_REPORT, b, total - 1, &out), 0);
	ck_assert_uint_eq(out.blob_len, CTRL_BLOB_MAX);
	free(b);
}
END_TEST

/* Out-of-range fields of a body of the right size. */
START_TEST(test_ctrl_wire_fields)
{
	struct ctrl_req in = {.run_id = 3, .worker = 3, .workers = 3};
	unsigned char b[REQ_HDR_MAX];
	struct ctrl_req out;

	ctrl_req_encode(M_BARRIER, &in, b);
	ck_assert_int_eq(decode(M_BARRIER, b, BARRIER_LEN, &out), -EINVAL);
	ck_assert_str_eq(msg, "Barrier: worker 3 is not below workers 3");
	in.worker = 0;
	in.workers = 0;
	ctrl_req_encode(M_REPORT, &in, b);
	ck_assert_int_eq(decode(M_REPORT, b, REPORT_HDR, &out), -EINVAL);
	ck_assert_str_eq(msg, "Report: workers 0 is outside 1..4096");
	in.workers = CTRL_WORKERS_MAX + 1;
	ctrl_req_encode(M_COLLECT, &in, b);
	ck_assert_int_eq(decode(M_COLLECT, b, COLLECT_LEN, &out), -EINVAL);
	in.workers = 1;
	in.partial = 2;
	ctrl_req_encode(M_COLLECT, &in, b);
	ck_assert_int_eq(decode(M_COLLECT, b, COLLECT_LEN, &out), -EINVAL);
	ck_assert_str_eq(msg, "Collect: partial must be 0 or 1, got 2");
}
END_TEST

/* Garbage of every length up to 64 bytes: decoded or refused, never read
 * past (the buffer is exactly len bytes, for ASan), and what decodes is in
 * range. */
START_TEST(test_ctrl_wire_garbage)
{
	unsigned seed = 12345;

	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)(rand_r(&seed) % 65);
		unsigned char *b = malloc(len ? len : 1);
		struct ctrl_req out;

		ck_assert_ptr_nonnull(b);
		for (size_t i = 0; i < len; i++)
			b[i] = (unsigned char)(round & 1 ? rand_r(&seed) : rand_r(&seed) % 3);
		for (int m = 0; m < M_COUNT; m++) {
			if (decode(m, b, len, &out) < 0) {
				ck_assert(msg[0]);
				continue;
			}
			ck_assert(out.workers >= 1 && out.workers <= CTRL_WORKERS_MAX);
			ck_assert_uint_lt(out.worker, out.workers);
			ck_assert_uint_le(out.partial, 1);
			ck_assert(m != M_REPORT || out.blob_len == len - REPORT_HDR);
		}
		free(b);
	}
}
END_TEST

/* The client's check of a Collect reply. */
START_TEST(test_ctrl_wire_collect_reply)
{
	unsigned char b[64];
	const unsigned char *blob;
	const char *what;
	uint32_t count, w, bl;
	size_t off = 0, n;

	ctrl_collect_count_encode(b, 2);
	ctrl_collect_entry_encode(b + 4, 0, 2);
	memcpy(b + 12, "hi", 2);
	ctrl_collect_entry_encode(b + 14, 2, 0);
	n = 22;
	ck_assert_int_eq(ctrl_collect_reply_check(b, n, 3, &count, &what), 0);
	ck_assert_uint_eq(count, 2);
	ck_assert_int_eq(ctrl_collect_reply_next(b, n, &off, &w, &blob, &bl), 0);
	ck_assert(w == 0 && bl == 2 && !memcmp(blob, "hi", 2));
	ck_assert_int_eq(ctrl_collect_reply_next(b, n, &off, &w, &blob, &bl), 0);
	ck_assert(w == 2 && bl == 0);
	ck_assert_int_eq(ctrl_collect_reply_next(b, n, &off, &w, &blob, &bl), -1);

	/* worker 2 is not below workers 2 */
	ck_assert_int_eq(ctrl_collect_reply_check(b, n, 2, &count, &what), -EPROTO);
	ck_assert_uint_eq(count, 0);
	/* every truncation, and a byte too many */
	for (size_t len = 0; len < n; len++)
		ck_assert_int_eq(ctrl_collect_reply_check(b, len, 3, &count, &what), -EPROTO);
	ck_assert_int_eq(ctrl_collect_reply_check(b, n + 1, 3, &count, &what), -EPROTO);
	ck_assert_str_eq(what, "bytes after the last report");
	/* workers out of order */
	ctrl_collect_entry_encode(b + 14, 0, 0);
	ck_assert_int_eq(ctrl_collect_reply_check(b, n, 3, &count, &what), -EPROTO);
	ck_assert_str_eq(what, "bad entry");
	/* a blob length that runs past the body */
	ctrl_collect_count_encode(b, 1);
	ctrl_collect_entry_encode(b + 4, 0, 0xfffffff0u);
	ck_assert_int_eq(ctrl_collect_reply_check(b, 12, 3, &count, &what), -EPROTO);
	off = 0;
	ck_assert_int_eq(ctrl_collect_reply_next(b, 12, &off, &w, &blob, &bl), -1);
	/* a count over workers */
	ctrl_collect_count_encode(b, 4);
	ck_assert_int_eq(ctrl_collect_reply_check(b, 4, 3, &count, &what), -EPROTO);
	ck_assert_str_eq(what, "bad count");

	ctrl_barrier_reply_encode(b, 77, 4095);
	ck_assert_int_eq(ctrl_barrier_reply_check(b, BARRIER_REPLY_LEN, 77, &w), 0);
	ck_assert_uint_eq(w, 4095);
	ck_assert_int_eq(ctrl_barrier_reply_check(b, BARRIER_REPLY_LEN, 77, NULL), 0);
	ck_assert_int_eq(ctrl_barrier_reply_check(b, BARRIER_REPLY_LEN, 78, &w), -EPROTO);
	ck_assert_int_eq(ctrl_barrier_reply_check(b, BARRIER_REPLY_LEN - 1, 77, &w), -EPROTO);
	ck_assert_int_eq(ctrl_barrier_reply_check(b, 8, 77, &w), -EPROTO); /* the old reply */
}
END_TEST

START_TEST(test_ctrl_wire_token)
{
	static const char tok[] = "0123456789abcdef-token";
	struct ctrl_token t;

	ctrl_token_init(&t, NULL);
	ck_assert(!t.set);
	ck_assert(ctrl_token_ok(&t, NULL, 0));
	ck_assert(ctrl_token_ok(&t, "anything", 8));
	ctrl_token_init(&t, "");
	ck_assert(!t.set);

	ctrl_token_init(&t, tok);
	ck_assert(t.set);
	ck_assert(ctrl_token_ok(&t, tok, strlen(tok)));
	ck_assert(!ctrl_token_ok(&t, NULL, 0));
	ck_assert(!ctrl_token_ok(&t, "", 0));
	ck_assert(!ctrl_token_ok(&t, tok, strlen(tok) - 1)); /* a prefix */
	ck_assert(!ctrl_token_ok(&t, "0123456789abcdef-tokeN", strlen(tok)));
	ck_assert(!ctrl_token_ok(&t, "0123456789abcdef-token\0", strlen(tok) + 1));
}
END_TEST

Suite *make_ctrl_wire_suite(void)
{
	Suite *s = suite_create("ctrl_wire");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ctrl_wire_round_trip);
	tcase_add_test(tc, test_ctrl_wire_truncated);
	tcase_add_test(tc, test_ctrl_wire_report_len);
	tcase_add_test(tc, test_ctrl_wire_fields);
	tcase_add_test(tc, test_ctrl_wire_garbage);
	tcase_add_test(tc, test_ctrl_wire_collect_reply);
	tcase_add_test(tc, test_ctrl_wire_token);
	suite_add_tcase(s, tc);
	return s;
}
