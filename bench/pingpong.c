/* pingpong.c - the floor for `tfgb latency`: a minimal gRPC core client that
 * calls /tfgb.v1.Bench/Echo on a running `tfgb serve`, one call at a time.
 *
 * Build (from the top of the tree; not part of `make`):
 *   cc -O2 -std=c11 -D_GNU_SOURCE -o bench/pingpong bench/pingpong.c \
 *      $(pkg-config --cflags --libs grpc)
 * Run:
 *   ./tfgb serve -s cluster.ps=127.0.0.1:50001 &
 *   bench/pingpong [-w WARMUP] [-t MS] [-n CALLS] 127.0.0.1:50001 10  # 1 x 10 B
 *   bench/pingpong 127.0.0.1:50001 10,10240,1048576                 # 3 iovecs
 *
 * Per call: one registered call, one batch of six ops, the request built
 * from static slices over preallocated buffers (no copy) in a reused byte
 * buffer, the completion taken with grpc_completion_queue_next.  It makes
 * the same gRPC core calls as tfgb's gRPC transport, with the same channel
 * arguments where they touch the call path (retries off), so the two differ
 * only by tfgb's engine and transport layer; its own choices are the
 * cheapest (an infinite wait, no engine).  Prints the p50 and mean latency in
 * microseconds over the measured calls (warm-up calls are discarded).
 * The warm-up lasts at least WARMUP calls (default 1000) and at least MS
 * milliseconds (default 0), so it can match `tfgb latency`'s timed warm-up.
 * Exit status 0, 1 on a failed call or connection, 2 on bad arguments.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/slice_buffer.h>
#include <grpc/support/time.h>

#include "floor.h"

#define MAX_IOV 1024

static int usage(void)
{
	fprintf(stderr, "usage: pingpong [-w WARMUP] [-t MS] [-n CALLS] HOST:PORT SIZE[,SIZE...]\n");
	return 2;
}

/* What every call reuses: the channel, the queue, the request byte buffer
 * (refilled with the static slices per call: a send takes its slices) and
 * the metadata arrays, so a call allocates only what gRPC core allocates. */
struct echo {
	grpc_channel *ch;
	void *method;
	grpc_completion_queue *cq;
	grpc_slice *slices;
	size_t nslices, total;
	grpc_byte_buffer *req;
	grpc_metadata_array md_initial, md_trailing;
};

/* One Echo; 0 when it came back OK with the request's length. */
static int echo_once(struct echo *e)
{
	grpc_byte_buffer *resp = NULL;
	grpc_status_code status = GRPC_STATUS_UNKNOWN;
	grpc_slice details = grpc_empty_slice();
	grpc_call *call;
	grpc_event ev;
	int rc = -1;

	grpc_slice_buffer_reset_and_unref(&e->req->data.raw.slice_buffer);
	grpc_slice_buffer_addn(&e->req->data.raw.slice_buffer, e->slices, e->nslices);
	e->md_initial.count = e->md_trailing.count = 0;
	call = grpc_channel_create_registered_call(e->ch, NULL, GRPC_PROPAGATE_DEFAULTS, e->cq,
	                                           e->method, gpr_inf_future(GPR_CLOCK_REALTIME),
	                                           NULL);
	grpc_op ops[6] = {
		{.op = GRPC_OP_SEND_INITIAL_METADATA},
		{.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = e->req},
		{.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT},
		{.op = GRPC_OP_RECV_INITIAL_METADATA,
		 .data.recv_initial_metadata.recv_initial_metadata = &e->md_initial},
		{.op = GRPC_OP_RECV_MESSAGE, .data.recv_message.recv_message = &resp},
		{.op = GRPC_OP_RECV_STATUS_ON_CLIENT,
		 .data.recv_status_on_client = {.trailing_metadata = &e->md_trailing,
		                                .status = &status, .status_details = &details}},
	};
	if (grpc_call_start_batch(call, ops, 6, call, NULL) == GRPC_CALL_OK) {
		/* one call at a time: the next event is this call's */
		ev = grpc_completion_queue_next(e->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
		rc = ev.type == GRPC_OP_COMPLETE && ev.tag == call && ev.success &&
		     status == GRPC_STATUS_OK && resp &&
		     grpc_byte_buffer_length(resp) == e->total ? 0 : -1;
	}
	if (rc < 0)
		fprintf(stderr, "pingpong: Echo failed: status %d\n", (int)status);
	grpc_slice_unref(details);
	if (resp)
		grpc_byte_buffer_destroy(resp);
	grpc_call_unref(call);
	return rc;
}

int main(int argc, char **argv)
{
	long warmup = 1000, warmup_ms = 0, calls = 10000;
	size_t sizes[MAX_IOV], n = 0, total = 0;
	grpc_slice slices[MAX_IOV];
	int i = 1, rc = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-w"))
			warmup = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-t"))
			warmup_ms = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-n"))
			calls = atol(argv[i + 1]);
		else
			return usage();
	}
	if (argc - i != 2 || warmup < 0 || warmup_ms < 0 || calls < 1)
		return usage();
	for (char *s = argv[i + 1], *end; *s; s = end + (*end == ',')) {
		if (n == MAX_IOV)
			return usage();
		sizes[n] = strtoull(s, &end, 10);
		if (end == s || (*end && *end != ','))
			return usage();
		total += sizes[n++];
	}

	/* page-aligned buffers, allocated once */
	for (size_t k = 0; k < n; k++) {
		void *buf = NULL;
		if (posix_memalign(&buf, 4096, sizes[k] ? sizes[k] : 1) != 0)
			return 1;
		memset(buf, (int)('a' + k % 26), sizes[k]);
		slices[k] = grpc_slice_from_static_buffer(buf, sizes[k]);
	}

	grpc_init();
	{
		/* the channel arguments of tfgb's own connections that change the
		 * per-call path: no retry filter, no message size limits */
		grpc_arg arg[] = {
			{GRPC_ARG_INTEGER, (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, {.integer = -1}},
			{GRPC_ARG_INTEGER, (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, {.integer = -1}},
			{GRPC_ARG_INTEGER, (char *)GRPC_ARG_ENABLE_RETRIES, {.integer = 0}},
		};
		grpc_channel_args args = {sizeof arg / sizeof arg[0], arg};
		grpc_channel_credentials *creds = grpc_insecure_credentials_create();
		struct echo e = {.slices = slices, .nslices = n, .total = total};
		uint64_t *lat = malloc((size_t)calls * sizeof *lat), sum = 0;
		uint64_t warm_end;
		long warmed = 0;

		e.ch = grpc_channel_create(argv[i], creds, &args);
		grpc_channel_credentials_release(creds);
		e.method = grpc_channel_register_call(e.ch, "/tfgb.v1.Bench/Echo", NULL, NULL);
		e.cq = grpc_completion_queue_create_for_next(NULL);
		e.req = grpc_raw_byte_buffer_create(NULL, 0);
		grpc_metadata_array_init(&e.md_initial);
		grpc_metadata_array_init(&e.md_trailing);
		if (!lat)
			rc = -1;
		warm_end = mono_ns() + (uint64_t)warmup_ms * 1000000u;
		for (; rc == 0 && (warmed < warmup || mono_ns() < warm_end); warmed++)
			rc = echo_once(&e);
		for (long k = 0; k < calls && rc == 0; k++) {
			uint64_t t0 = mono_ns();
			rc = echo_once(&e);
			lat[k] = mono_ns() - t0;
			sum += lat[k];
		}
		if (rc == 0) {
			qsort(lat, (size_t)calls, sizeof *lat, cmp_u64);
			printf("pingpong: %zu iovec(s), %zu bytes, %ld calls after %ld warm-up: "
			       "p50 %.2f us, mean %.2f us\n", n, total, calls, warmed,
			       (double)lat[(calls - 1) / 2] / 1e3, (double)sum / (double)calls / 1e3);
		}
		free(lat);
		grpc_metadata_array_destroy(&e.md_initial);
		grpc_metadata_array_destroy(&e.md_trailing);
		grpc_byte_buffer_destroy(e.req);
		grpc_completion_queue_shutdown(e.cq);
		while (grpc_completion_queue_next(e.cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL)
		               .type != GRPC_QUEUE_SHUTDOWN)
			;
		grpc_completion_queue_destroy(e.cq);
		grpc_channel_destroy(e.ch);
	}
	grpc_shutdown();
	return rc == 0 ? 0 : 1;
}
