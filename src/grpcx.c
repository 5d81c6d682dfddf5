/* grpcx.c - gRPC core helpers shared by the transport and the control service. */
#include "grpcx.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/support/log.h>

#include "util.h"

static atomic_int log_quiet;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_line(gpr_log_func_args *a)
{
	const char *file = strrchr(a->file, '/');

	if (atomic_load(&log_quiet))
		return;
	fprintf(stderr, "tfgb: grpc: %s (%s:%d)\n", a->message, file ? file + 1 : a->file,
	        a->line);
}

static void log_set(void)
{
	gpr_set_log_function(log_line);
}

void grpcx_log_install(void)
{
	pthread_once(&log_once, log_set);
}

void grpcx_log_quiet(int quiet)
{
	atomic_store(&log_quiet, quiet);
}

int64_t grpcx_clock_offset(void)
{
	gpr_timespec g = gpr_now(GPR_CLOCK_MONOTONIC);
	uint64_t n = now_ns();

	return (int64_t)g.tv_sec * 1000000000 + g.tv_nsec - (int64_t)n;
}

gpr_timespec grpcx_deadline(int64_t offset, uint64_t deadline_ns)
{
	int64_t g;

	if (deadline_ns >= (uint64_t)INT64_MAX / 2)
		return gpr_inf_future(GPR_CLOCK_MONOTONIC);
	g = (int64_t)deadline_ns + offset;
	if (g <= 0)
		return gpr_inf_past(GPR_CLOCK_MONOTONIC);
	return gpr_time_from_nanos(g, GPR_CLOCK_MONOTONIC);
}

grpc_connectivity_state grpcx_wait_ready(grpc_channel *ch, int64_t offset, uint64_t deadline_ns)
{
	grpc_completion_queue *wcq = grpc_completion_queue_create_for_next(NULL);
	grpc_connectivity_state st;

	for (;;) {
		st = grpc_channel_check_connectivity_state(ch, 1);
		if (st == GRPC_CHANNEL_READY || st == GRPC_CHANNEL_SHUTDOWN ||
		    now_ns() >= deadline_ns)
			break;
		grpc_channel_watch_connectivity_state(ch, st, grpcx_deadline(offset, deadline_ns), wcq,
		                                      NULL);
		grpc_completion_queue_next(wcq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	}
	grpc_completion_queue_shutdown(wcq);
	grpcx_cq_drain(wcq);
	grpc_completion_queue_destroy(wcq);
	return st;
}

const char *grpcx_state_text(grpc_connectivity_state st)
{
	switch (st) {
	case GRPC_CHANNEL_TRANSIENT_FAILURE: return "nothing is listening";
	case GRPC_CHANNEL_CONNECTING: return "still connecting";
	case GRPC_CHANNEL_IDLE: return "the channel stayed idle";
	case GRPC_CHANNEL_SHUTDOWN: return "the channel shut down";
	default: return "not ready";
	}
}

void grpcx_cq_drain(grpc_completion_queue *cq)
{
	while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type !=
	       GRPC_QUEUE_SHUTDOWN)
		;
}

grpc_slice grpcx_body_slice(grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader rd;
	grpc_slice all;

	if (!grpc_byte_buffer_reader_init(&rd, bb))
		return grpc_empty_slice();
	all = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	return all;
}
