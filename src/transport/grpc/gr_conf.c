/* gr_conf.c - the [grpc] keys (gr_conf.h) and the channel arguments they
 * make.  Each numeric key's range is the one gRPC core 1.51 accepts for its
 * argument (grpc/impl/codegen/grpc_types.h and the chttp2 and TCP code that
 * reads them): outside it gRPC would clamp the value without a word, so the
 * job refuses it instead. */
#include "gr_conf.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <grpc/compression.h>

#include "grpcx.h"
#include "opt_table.h"

#define G(field) offsetof(struct gr_conf, field)
#define NONE_RANGE(lo, hi) .min = (lo), .max = (hi), \
	.flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_NONE

static const char *const preset_names[] = {
	[GR_PRESET_GRPC] = "grpc", [GR_PRESET_TENSORFLOW] = "tensorflow", NULL};
/* grpc_compression_algorithm's and grpc_compression_level's numbers */
static const char *const compression_names[] = {
	[GRPC_COMPRESS_NONE] = "none", [GRPC_COMPRESS_DEFLATE] = "deflate",
	[GRPC_COMPRESS_GZIP] = "gzip", NULL};
static const char *const level_names[] = {
	[GRPC_COMPRESS_LEVEL_NONE] = "none", [GRPC_COMPRESS_LEVEL_LOW] = "low",
	[GRPC_COMPRESS_LEVEL_MED] = "medium", [GRPC_COMPRESS_LEVEL_HIGH] = "high", NULL};

static const char *const channelz_names[] = {
	[GR_CZ_PRESET] = "preset", [GR_CZ_ON] = "on", [GR_CZ_OFF] = "off", NULL};

static const struct opt_def keys[] = {
	{"grpc", "preset", OPT_ENUM, G(preset), "grpc", .values = preset_names,
	 .help = "grpc transport: channel settings as tfgb ships them (grpc) or as TensorFlow "
	         "sets them (tensorflow)"},
	{"grpc", "channels", OPT_INT, G(channels), "1", .min = 1, .max = 64,
	 .flags = OPT_HAS_MIN | OPT_HAS_MAX,
	 .help = "grpc transport: HTTP/2 connections to each PS, used in turn "
	         "(TensorFlow's num_channels_per_target)"},
	{"grpc", "compression", OPT_ENUM, G(compression), "none", .values = compression_names,
	 .help = "grpc transport: message compression (TensorFlow's compression_algorithm)"},
	{"grpc", "compression_level", OPT_ENUM, G(compression_level), "none",
	 .values = level_names,
	 .help = "grpc transport: the server's reply compression level (TensorFlow's "
	         "compression_level)"},
	{"grpc", "max_frame_size", OPT_INT, G(max_frame_size), "none",
	 NONE_RANGE(16384, 16777215),
	 .help = "grpc transport: largest HTTP/2 frame each side accepts, bytes "
	         "(GRPC_ARG_HTTP2_MAX_FRAME_SIZE)"},
	{"grpc", "stream_window", OPT_INT, G(stream_window), "none", NONE_RANGE(5, INT32_MAX),
	 .help = "grpc transport: HTTP/2 initial stream window, bytes "
	         "(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES)"},
	{"grpc", "bdp_probe", OPT_BOOL, G(bdp_probe), "yes",
	 .help = "grpc transport: grow the windows by bandwidth-delay probing "
	         "(GRPC_ARG_HTTP2_BDP_PROBE)"},
	{"grpc", "write_buffer_size", OPT_INT, G(write_buffer_size), "none",
	 NONE_RANGE(0, 64 * MIB),
	 .help = "grpc transport: bytes a stream holds for the write-buffer hint "
	         "(GRPC_ARG_HTTP2_WRITE_BUFFER_SIZE)"},
	{"grpc", "read_chunk", OPT_INT, G(read_chunk), "none", NONE_RANGE(1, 32 * MIB),
	 .help = "grpc transport: bytes of the first TCP read buffer "
	         "(GRPC_ARG_TCP_READ_CHUNK_SIZE)"},
	{"grpc", "read_chunk_min", OPT_INT, G(read_chunk_min), "none", NONE_RANGE(1, 32 * MIB),
	 .help = "grpc transport: smallest TCP read buffer (GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE)"},
	{"grpc", "read_chunk_max", OPT_INT, G(read_chunk_max), "none", NONE_RANGE(1, 32 * MIB),
	 .help = "grpc transport: largest TCP read buffer (GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE)"},
	{"grpc", "tx_zerocopy", OPT_BOOL, G(tx_zerocopy), "no",
	 .help = "grpc transport: send with MSG_ZEROCOPY (GRPC_ARG_TCP_TX_ZEROCOPY_ENABLED)"},
	{"grpc", "tx_zerocopy_threshold", OPT_INT, G(tx_zerocopy_threshold), "none",
	 NONE_RANGE(0, INT32_MAX),
	 .help = "grpc transport: smallest zero-copy write "
	         "(GRPC_ARG_TCP_TX_ZEROCOPY_SEND_BYTES_THRESHOLD)"},
	{"grpc", "channelz", OPT_ENUM, G(channelz), "preset", .values = channelz_names,
	 .help = "grpc transport: gRPC core's channelz, its HTTP/2 counters in the result "
	         "(GRPC_ARG_ENABLE_CHANNELZ)"},
	{"grpc", "keepalive_time_ms", OPT_INT, G(keepalive_time_ms), "none",
	 NONE_RANGE(1, INT32_MAX),
	 .help = "grpc transport: ping the peer after this many ms (GRPC_ARG_KEEPALIVE_TIME_MS)"},
	{"grpc", "keepalive_timeout_ms", OPT_INT, G(keepalive_timeout_ms), "none",
	 NONE_RANGE(0, INT32_MAX),
	 .help = "grpc transport: ms a keepalive ping may wait for its answer "
	         "(GRPC_ARG_KEEPALIVE_TIMEOUT_MS)"},
	{0},
};

/* gRPC core reads a minimum above its maximum without complaint (each is
 * clamped alone); a job that asks for it is refused. */
static int gr_check(const struct job *j, const void *sec, struct err *err)
{
	const struct gr_conf *c = sec;

	/* while it probes, gRPC 1.51 announces a window and a frame size of
	 * its own (4 MiB - 1 at first) whatever these ask: refused, not dropped */
	if (c->bdp_probe && c->stream_window >= 0)
		return job_key_err(j, err, "grpc", "stream_window",
		                   "takes effect only with grpc.bdp_probe = no (gRPC sizes the "
		                   "windows itself while it probes); range: none | [5, 2147483647]");
	if (c->bdp_probe && c->max_frame_size >= 0)
		return job_key_err(j, err, "grpc", "max_frame_size",
		                   "takes effect only with grpc.bdp_probe = no (gRPC sizes the "
		                   "frames itself while it probes); range: none | [16384, 16777215]");
	if (c->read_chunk_min >= 0 && c->read_chunk_max >= 0 &&
	    c->read_chunk_min > c->read_chunk_max)
		return job_key_err(j, err, "grpc", "read_chunk_min",
		                   "is above grpc.read_chunk_max (%lld); range: none | [1, read_chunk_max]",
		                   (long long)c->read_chunk_max);
	/* gRPC closes a connection whose ping is not answered in time: in no
	 * time at all it never is, and calls fail with "Transport closed" at
	 * random, as soon as the first ping goes out */
	if (c->keepalive_time_ms >= 0 && c->keepalive_timeout_ms == 0)
		return job_key_err(j, err, "grpc", "keepalive_timeout_ms",
		                   "is 0 with grpc.keepalive_time_ms = %lld: every ping would have "
		                   "to be answered in no time, and gRPC closes the connection when "
		                   "it is not; range with keepalive_time_ms: none | [1, 2147483647]",
		                   (long long)c->keepalive_time_ms);
	return 0;
}

/* job_section.effect: channelz "preset" says on or off, and whose. */
static void gr_effect(const void *sec, const char *name, FILE *f)
{
	const struct gr_conf *c = sec;

	if (strcmp(name, "channelz") == 0 && c->channelz == GR_CZ_PRESET)
		fprintf(f, " (%s: preset %s)", gr_conf_channelz(c) ? "on" : "off",
		        preset_names[c->preset]);
}

const struct job_section tr_grpc_section = {
	.name = "grpc",
	.keys = keys,
	.size = sizeof(struct gr_conf),
	.check = gr_check,
	.effect = gr_effect,
};

static grpc_arg arg_int(const char *key, int64_t v)
{
	return (grpc_arg){GRPC_ARG_INTEGER, (char *)key, {.integer = (int)v}};
}

/* The preset's arguments: tfgb's (grpcx.h), or TensorFlow's
 * (core/distributed_runtime/rpc/grpc_channel.cc: the receive limit INT32_MAX
 * and a 1 s maximum reconnect backoff, everything else gRPC's defaults:
 * retries and channelz on).  A server's receive limit is always
 * max_message, the wire contract (proto/tfgb.proto). */
static size_t preset_args(int preset, int server, uint64_t max_message, grpc_arg *out)
{
	static const grpc_arg tfgb_client[] = {GRPCX_CLIENT_ARGS};
	size_t n = 0;

	/* the channelz argument is gr_conf_args's, from grpc.channelz */
	if (server) {
		out[n++] = arg_int(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, (int64_t)max_message);
		out[n++] = arg_int(GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, -1);
		/* a second server on a port in use must fail, not share it */
		out[n++] = arg_int(GRPC_ARG_ALLOW_REUSEPORT, 0);
		return n;
	}
	if (preset == GR_PRESET_TENSORFLOW) {
		out[n++] = arg_int(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, INT32_MAX);
		out[n++] = arg_int(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
		return n;
	}
	for (size_t i = 0; i < sizeof tfgb_client / sizeof tfgb_client[0]; i++)
		if (strcmp(tfgb_client[i].key, GRPC_ARG_ENABLE_CHANNELZ) != 0)
			out[n++] = tfgb_client[i];
	return n;
}

int gr_conf_channelz(const struct gr_conf *c)
{
	if (!c || c->channelz == GR_CZ_PRESET)
		return c && c->preset == GR_PRESET_TENSORFLOW;
	return c->channelz == GR_CZ_ON;
}

size_t gr_conf_args(const struct gr_conf *conf, int server, uint64_t max_message, grpc_arg *out)
{
	static const struct gr_conf defaults = {.channels = 1, .bdp_probe = 1,
	                                        .max_frame_size = -1, .stream_window = -1,
	                                        .write_buffer_size = -1, .read_chunk = -1,
	                                        .read_chunk_min = -1, .read_chunk_max = -1,
	                                        .tx_zerocopy_threshold = -1,
	                                        .keepalive_time_ms = -1,
	                                        .keepalive_timeout_ms = -1};
	const struct gr_conf *c = conf ? conf : &defaults;
	const struct {
		const char *key;
		int64_t v;
	} opt[] = {
		{GRPC_ARG_HTTP2_MAX_FRAME_SIZE, c->max_frame_size},
		{GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, c->stream_window},
		{GRPC_ARG_HTTP2_WRITE_BUFFER_SIZE, c->write_buffer_size},
		{GRPC_ARG_TCP_READ_CHUNK_SIZE, c->read_chunk},
		{GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE, c->read_chunk_min},
		{GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, c->read_chunk_max},
		{GRPC_ARG_TCP_TX_ZEROCOPY_SEND_BYTES_THRESHOLD, c->tx_zerocopy_threshold},
		{GRPC_ARG_KEEPALIVE_TIME_MS, c->keepalive_time_ms},
		{GRPC_ARG_KEEPALIVE_TIMEOUT_MS, c->keepalive_timeout_ms},
		/* a server strikes a client that pings more often than this (5 min
		 * by default) and closes its connection: it allows its own interval */
		{GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
		 server ? c->keepalive_time_ms : -1},
		{GRPC_COMPRESSION_CHANNEL_DEFAULT_ALGORITHM, c->compression ? c->compression : -1},
		{GRPC_COMPRESSION_CHANNEL_DEFAULT_LEVEL,
		 c->compression_level ? c->compression_level : -1},
	};
	size_t n = preset_args(c->preset, server, max_message, out);

	/* off: four clock reads less per call on each side (grpcx.h) */
	out[n++] = arg_int(GRPC_ARG_ENABLE_CHANNELZ, gr_conf_channelz(conf));
	out[n++] = arg_int(GRPC_ARG_HTTP2_BDP_PROBE, c->bdp_probe);
	out[n++] = arg_int(GRPC_ARG_TCP_TX_ZEROCOPY_ENABLED, c->tx_zerocopy);
	for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
		if (opt[i].v >= 0)
			out[n++] = arg_int(opt[i].key, opt[i].v);
	return n;
}
