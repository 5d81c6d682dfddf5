/* gr_conf.h - the [grpc] section of a job: the gRPC transport's own keys
 * (tfgb.ini(5), The [grpc] section), TensorFlow's RPC options and gRPC
 * core's transport settings, declared here and composed into the job by
 * the transport registry (transport.c); gr_conf_args turns them into the
 * channel arguments of a client's channels and of `tfgb serve`'s server.
 *
 * Threading: the section is read-only once the job is validated.
 */
#ifndef TFGB_GR_CONF_H
#define TFGB_GR_CONF_H

#include <stddef.h>
#include <stdint.h>

#include <grpc/grpc.h>

#include "job.h"

enum gr_preset { GR_PRESET_GRPC, GR_PRESET_TENSORFLOW };
/* [grpc] channelz: the preset's (off with grpc, on with tensorflow), or set */
enum gr_channelz { GR_CZ_PRESET, GR_CZ_ON, GR_CZ_OFF };

/* The typed [grpc] section, as job_section_get(j, &tr_grpc_section)
 * returns it.  A numeric key of gRPC core is -1 ("none") when it keeps
 * libgrpc's own default: no channel argument is passed then. */
struct gr_conf {
	int preset;                    /* enum gr_preset */
	int compression;               /* grpc_compression_algorithm: none, deflate, gzip */
	int compression_level;         /* grpc_compression_level: none .. high */
	int bdp_probe;                 /* 0/1 */
	int tx_zerocopy;               /* 0/1 */
	int channelz;                  /* enum gr_channelz */
	int64_t channels;              /* HTTP/2 connections per PS, >= 1 */
	int64_t max_frame_size;        /* GRPC_ARG_HTTP2_MAX_FRAME_SIZE, or -1 */
	int64_t stream_window;         /* GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, or -1 */
	int64_t write_buffer_size;     /* GRPC_ARG_HTTP2_WRITE_BUFFER_SIZE, or -1 */
	int64_t read_chunk, read_chunk_min, read_chunk_max; /* GRPC_ARG_TCP_*READ_CHUNK_SIZE */
	int64_t tx_zerocopy_threshold; /* GRPC_ARG_TCP_TX_ZEROCOPY_SEND_BYTES_THRESHOLD, or -1 */
	int64_t keepalive_time_ms, keepalive_timeout_ms; /* or -1 */
};

extern const struct job_section tr_grpc_section;

/* 1 when c (NULL: the defaults) has gRPC core's channelz on: the
 * counters then are known (gr_channelz.h), each call costs gRPC a few more
 * clock reads. */
int gr_conf_channelz(const struct gr_conf *c);

/* The most arguments gr_conf_args writes. */
#define GR_CONF_ARGS_MAX 24

/* Writes the channel arguments of c (NULL: the defaults, preset grpc) into
 * out (GR_CONF_ARGS_MAX entries): the preset's, then every key not left to
 * libgrpc's default.  server: for `tfgb serve`'s server (max_message is
 * its receive limit), else for a client channel.  Returns how many; the
 * keys point at static strings, nothing to free. */
size_t gr_conf_args(const struct gr_conf *c, int server, uint64_t max_message, grpc_arg *out);

#endif
