/* ctrl_client.c - the client half of the control service (ctrl.h): one
 * channel and one pluck completion queue per ctrl_client, used by one thread
 * at a time.  The wire contract is described in ctrl_server.c. */
#include "ctrl.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include "ctrl_wire.h"
#include "grpcx.h"
#include "peer.h"
#include "util.h"

/* ---- client ------------------------------------------------------------ */

struct ctrl_client {
	grpc_channel *ch;
	grpc_completion_queue *cq;    /* pluck */
	void *method[M_COUNT];
	int64_t gpr_off;              /* GPR_CLOCK_MONOTONIC minus now_ns() */
	grpc_metadata md;             /* the tfgb-token entry, when nmd = 1 */
	size_t nmd;
	char target[TARGET_MAX];
};

int ctrl_client_open(const struct opt_hostport *addr, const struct job_tls *tls,
                     const char *token, uint64_t deadline_ns, struct ctrl_client **out,
                     struct err *err)
{
	grpc_arg args[] = {GRPCX_CLIENT_ARGS}; /* the backoff notices PS 0 starting late */
	grpc_channel_args chargs = {sizeof args / sizeof args[0], args};
	grpc_channel_credentials *creds;
	grpc_connectivity_state st;
	uint64_t start_ns = now_ns();
	const sig_atomic_t stop0 = tfgb_stop;
	struct ctrl_client *c = calloc(1, sizeof *c);
	char within[32];

	*out = NULL;
	if (!c) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	opt_format_hostport(addr, c->target, sizeof c->target);
	/* a name that does not resolve never will: said at once, not after
	 * the channel has retried it until the deadline as "nothing is
	 * listening" (the data path's transports do the same, peer.h) */
	if (peer_resolve(addr->host, err) < 0) {
		err_prefix(err, "cannot reach the control service at '%s': ", c->target);
		free(c);
		return -EHOSTUNREACH;
	}
	grpc_init();
	c->gpr_off = grpcx_clock_offset();
	if (token && *token) {
		c->md.key = grpc_slice_from_static_string(CTRL_TOKEN_KEY);
		c->md.value = grpc_slice_from_copied_string(token);
		c->nmd = 1;
	}
	c->cq = grpc_completion_queue_create_for_pluck(NULL);
	creds = grpcx_channel_creds(tls);
	c->ch = grpc_channel_create(c->target, creds, &chargs);
	grpc_channel_credentials_release(creds);
	for (int m = 0; m < M_COUNT; m++)
		c->method[m] = grpc_channel_register_call(c->ch, ctrl_method_path[m], NULL, NULL);

	/* the channel keeps retrying with the backoff of GRPCX_CLIENT_ARGS */
	st = grpcx_wait_ready(c->ch, c->gpr_off, deadline_ns, stop0);
	if (st != GRPC_CHANNEL_READY && tfgb_stop != stop0) {
		err_set(err, "interrupted while connecting to the control service at '%s'", c->target);
		ctrl_client_close(c);
		return -EINTR;
	}
	if (st != GRPC_CHANNEL_READY) {
		grpcx_within(start_ns, deadline_ns, within, sizeof within);
		err_set(err, "cannot reach the control service at '%s' within %s: %s",
		         c->target, within, grpcx_fail_text(st, addr, tls));
		ctrl_client_close(c);
		return st == GRPC_CHANNEL_TRANSIENT_FAILURE ? -ECONNREFUSED : -ETIMEDOUT;
	}
	*out = c;
	return 0;
}

void ctrl_client_close(struct ctrl_client *c)
{
	if (!c)
		return;
	grpc_channel_destroy(c->ch);
	grpc_completion_queue_shutdown(c->cq);
	while (grpc_completion_queue_pluck(c->cq, NULL, gpr_inf_future(GPR_CLOCK_MONOTONIC),
	                                   NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(c->cq);
	if (c->nmd)
		grpc_slice_unref(c->md.value);
	free(c);
	grpc_shutdown();
}

/* gRPC status -> -errno, and its name for messages. */
static const struct {
	int err;
	const char *name;
} status_map[] = {
	[GRPC_STATUS_OK] = {0, "OK"},
	[GRPC_STATUS_CANCELLED] = {-ECANCELED, "CANCELLED"},
	[GRPC_STATUS_UNKNOWN] = {-EIO, "UNKNOWN"},
	[GRPC_STATUS_INVALID_ARGUMENT] = {-EINVAL, "INVALID_ARGUMENT"},
	[GRPC_STATUS_DEADLINE_EXCEEDED] = {-ETIMEDOUT, "DEADLINE_EXCEEDED"},
	[GRPC_STATUS_NOT_FOUND] = {-ENOENT, "NOT_FOUND"},
	[GRPC_STATUS_ALREADY_EXISTS] = {-EEXIST, "ALREADY_EXISTS"},
	[GRPC_STATUS_PERMISSION_DENIED] = {-EACCES, "PERMISSION_DENIED"},
	[GRPC_STATUS_RESOURCE_EXHAUSTED] = {-ENOBUFS, "RESOURCE_EXHAUSTED"},
	[GRPC_STATUS_FAILED_PRECONDITION] = {-EPROTO, "FAILED_PRECONDITION"},
	[GRPC_STATUS_ABORTED] = {-ECONNABORTED, "ABORTED"},
	[GRPC_STATUS_OUT_OF_RANGE] = {-ERANGE, "OUT_OF_RANGE"},
	[GRPC_STATUS_UNIMPLEMENTED] = {-ENOSYS, "UNIMPLEMENTED"},
	[GRPC_STATUS_INTERNAL] = {-EIO, "INTERNAL"},
	[GRPC_STATUS_UNAVAILABLE] = {-ECONNREFUSED, "UNAVAILABLE"},
	[GRPC_STATUS_DATA_LOSS] = {-EIO, "DATA_LOSS"},
	[GRPC_STATUS_UNAUTHENTICATED] = {-EACCES, "UNAUTHENTICATED"},
};

/* A call of method m that ended with status st (not OK) and details: its
 * -errno, with err saying what the service or gRPC answered. */
static int call_failed(const struct ctrl_client *c, int m, grpc_status_code st,
                       grpc_slice details, uint64_t start_ns, uint64_t deadline_ns,
                       struct err *err)
{
	char d[MSG_MAX], within[32];
	unsigned k, n;

	if ((unsigned)st >= sizeof status_map / sizeof status_map[0])
		st = GRPC_STATUS_UNKNOWN;
	snprintf(d, sizeof d, "%.*s",
	         (int)(GRPC_SLICE_LENGTH(details) < sizeof d ? GRPC_SLICE_LENGTH(details) : sizeof d - 1),
	         (const char *)GRPC_SLICE_START_PTR(details));
	if (st == GRPC_STATUS_DEADLINE_EXCEEDED) {
		grpcx_within(start_ns, deadline_ns, within, sizeof within);
		if (sscanf(d, "%u of %u", &k, &n) == 2) /* the service's own answer */
			err_set(err, "control service at '%s': %s: %s within %s", c->target,
			         ctrl_method_name[m], d, within);
		else
			err_set(err, "control service at '%s': %s: no reply within %s",
			         c->target, ctrl_method_name[m], within);
	} else if (st == GRPC_STATUS_UNAUTHENTICATED) {
		err_set(err, "control service at '%s' refused the token (%s): %s: %s",
		         c->target, c->nmd ? "cluster.token differs from the service's" :
		         "it requires a cluster.token and this job sets none",
		         ctrl_method_name[m], d[0] ? d : "no details");
	} else {
		err_set(err, "control service at '%s': %s: %s (%s)", c->target,
		         ctrl_method_name[m], d[0] ? d : "no details", status_map[st].name);
	}
	return status_map[st].err;
}

/* Makes one call; 0 with *reply (the caller destroys it; may be NULL), or
 * -errno with err set. */
static int client_call(struct ctrl_client *c, int m, grpc_slice *parts, size_t nparts,
                       uint64_t deadline_ns, grpc_byte_buffer **reply, struct err *err)
{
	uint64_t start_ns = now_ns();
	uint64_t call_ns = deadline_ns > UINT64_MAX - CTRL_GRACE_MS * 1000000ull
	                       ? UINT64_MAX
	                       : deadline_ns + CTRL_GRACE_MS * 1000000ull;
	grpc_byte_buffer *req = grpc_raw_byte_buffer_create(parts, nparts), *resp = NULL;
	grpc_metadata_array md_initial, md_trailing;
	grpc_status_code st = GRPC_STATUS_UNKNOWN;
	grpc_slice details = grpc_empty_slice();
	grpc_call *call;
	grpc_event ev;
	int rc;

	*reply = NULL;
	grpc_metadata_array_init(&md_initial);
	grpc_metadata_array_init(&md_trailing);
	call = grpc_channel_create_registered_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq,
	                                           c->method[m], grpcx_deadline(c->gpr_off, call_ns), NULL);
	grpc_op ops[6] = {
		{.op = GRPC_OP_SEND_INITIAL_METADATA,
		 .data.send_initial_metadata = {.count = c->nmd, .metadata = &c->md}},
		{.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = req},
		{.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT},
		{.op = GRPC_OP_RECV_INITIAL_METADATA,
		 .data.recv_initial_metadata.recv_initial_metadata = &md_initial},
		{.op = GRPC_OP_RECV_MESSAGE, .data.recv_message.recv_message = &resp},
		{.op = GRPC_OP_RECV_STATUS_ON_CLIENT,
		 .data.recv_status_on_client = {.trailing_metadata = &md_trailing,
		                                .status = &st, .status_details = &details}},
	};
	if (!call || grpc_call_start_batch(call, ops, 6, ops, NULL) != GRPC_CALL_OK) {
		err_set(err, "control service at '%s': %s: cannot start the call", c->target,
		         ctrl_method_name[m]);
		rc = -EIO;
		goto out;
	}
	ev = grpc_completion_queue_pluck(c->cq, ops, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	if (ev.type != GRPC_OP_COMPLETE || (!ev.success && st == GRPC_STATUS_OK))
		st = GRPC_STATUS_UNAVAILABLE;
	if (st == GRPC_STATUS_OK) {
		*reply = resp;
		resp = NULL;
		rc = 0;
		goto out;
	}
	rc = call_failed(c, m, st, details, start_ns, deadline_ns, err);
out:
	if (call)
		grpc_call_unref(call);
	if (resp)
		grpc_byte_buffer_destroy(resp);
	grpc_byte_buffer_destroy(req);
	grpc_metadata_array_destroy(&md_initial);
	grpc_metadata_array_destroy(&md_trailing);
	grpc_slice_unref(details);
	return rc;
}

/* -EINVAL with err unless 1 <= workers <= max and worker < workers. */
static int client_check(const struct ctrl_client *c, int m, uint32_t worker, uint32_t workers,
                        struct err *err)
{
	if (workers >= 1 && workers <= CTRL_WORKERS_MAX && worker < workers)
		return 0;
	err_set(err, "control service at '%s': %s: worker %u of %u workers is out of "
	         "range (1..%u workers)", c->target, ctrl_method_name[m], worker, workers,
	         CTRL_WORKERS_MAX);
	return -EINVAL;
}

static int client_bad_reply(const struct ctrl_client *c, int m, const char *what, struct err *err)
{
	err_set(err, "control service at '%s': %s: malformed reply: %s", c->target,
	         ctrl_method_name[m], what);
	return -EPROTO;
}

int ctrl_barrier(struct ctrl_client *c, uint64_t run_id, uint32_t worker, uint32_t workers,
                 uint32_t gen, uint64_t deadline_ns, struct err *err)
{
	return ctrl_barrier_last(c, run_id, worker, workers, gen, deadline_ns, NULL, err);
}

int ctrl_barrier_last(struct ctrl_client *c, uint64_t run_id, uint32_t worker, uint32_t workers,
                      uint32_t gen, uint64_t deadline_ns, uint32_t *last, struct err *err)
{
	struct ctrl_req rq = {.run_id = run_id, .worker = worker, .workers = workers, .gen = gen};
	unsigned char b[REQ_HDR_MAX];
	grpc_byte_buffer *reply;
	grpc_slice part, all;
	int rc;

	if ((rc = client_check(c, M_BARRIER, worker, workers, err)) < 0)
		return rc;
	part = grpc_slice_from_static_buffer(b, ctrl_req_encode(M_BARRIER, &rq, b));
	rc = client_call(c, M_BARRIER, &part, 1, deadline_ns, &reply, err);
	if (rc < 0)
		return rc;
	all = reply ? grpcx_body_slice(reply) : grpc_empty_slice();
	if (ctrl_barrier_reply_check(GRPC_SLICE_START_PTR(all), GRPC_SLICE_LENGTH(all), run_id,
	                             last) < 0)
		rc = client_bad_reply(c, M_BARRIER, "not the run id and the last worker (12 bytes)",
		                      err);
	grpc_slice_unref(all);
	if (reply)
		grpc_byte_buffer_destroy(reply);
	return rc;
}

int ctrl_report(struct ctrl_client *c, uint64_t run_id, uint32_t worker, uint32_t workers,
                const void *blob, size_t len, uint64_t deadline_ns, struct err *err)
{
	struct ctrl_req rq = {.run_id = run_id, .worker = worker, .workers = workers,
	                      .blob_len = (uint32_t)len};
	unsigned char b[REQ_HDR_MAX];
	grpc_slice parts[2];
	grpc_byte_buffer *reply;
	int rc;

	if ((rc = client_check(c, M_REPORT, worker, workers, err)) < 0)
		return rc;
	if (len > CTRL_BLOB_MAX) {
		err_set(err, "control service at '%s': report: %zu bytes exceed the "
		         "limit of %u", c->target, len, CTRL_BLOB_MAX);
		return -EMSGSIZE;
	}
	parts[0] = grpc_slice_from_static_buffer(b, ctrl_req_encode(M_REPORT, &rq, b));
	parts[1] = grpc_slice_from_static_buffer(len ? blob : "", len);
	rc = client_call(c, M_REPORT, parts, 2, deadline_ns, &reply, err);
	if (reply)
		grpc_byte_buffer_destroy(reply);
	return rc;
}

int ctrl_collect(struct ctrl_client *c, uint64_t run_id, uint32_t workers, int partial,
                 uint64_t deadline_ns, ctrl_report_fn fn, void *arg, uint32_t *got, struct err *err)
{
	struct ctrl_req rq = {.run_id = run_id, .workers = workers, .partial = partial ? 1 : 0};
	unsigned char b[REQ_HDR_MAX];
	const unsigned char *blob;
	grpc_slice part, all;
	grpc_byte_buffer *reply;
	const char *what;
	uint32_t count, w, bl;
	size_t off = 0;
	int rc;

	*got = 0;
	if ((rc = client_check(c, M_COLLECT, 0, workers, err)) < 0)
		return rc;
	part = grpc_slice_from_static_buffer(b, ctrl_req_encode(M_COLLECT, &rq, b));
	rc = client_call(c, M_COLLECT, &part, 1, deadline_ns, &reply, err);
	if (rc < 0)
		return rc;
	all = reply ? grpcx_body_slice(reply) : grpc_empty_slice();
	/* check it all before the first callback */
	if (ctrl_collect_reply_check(GRPC_SLICE_START_PTR(all), GRPC_SLICE_LENGTH(all), workers,
	                             &count, &what) < 0)
		rc = client_bad_reply(c, M_COLLECT, what, err);
	while (rc == 0 && *got < count &&
	       ctrl_collect_reply_next(GRPC_SLICE_START_PTR(all), GRPC_SLICE_LENGTH(all), &off, &w,
	                               &blob, &bl) == 0) {
		if (fn)
			rc = fn(arg, w, blob, bl);
		++*got;
	}
	grpc_slice_unref(all);
	if (reply)
		grpc_byte_buffer_destroy(reply);
	return rc;
}
