/* gr_channelz.c - the gRPC transport's counters (struct tr_counters) from
 * gRPC core's channelz: the socket data of every connection of a client's
 * channels (channel -> subchannels -> sockets) or of this process's
 * servers, read through the JSON entry points of grpc/grpc.h
 * (grpc_channelz_get_*) after a run, never per call.
 *
 * gRPC core 1.51 renders a socket's streamsStarted, streamsSucceeded,
 * streamsFailed, messagesSent, messagesReceived and keepAlivesSent, each
 * left out while it is 0 (proto3's JSON mapping, int64 as a string); it
 * has fields for the flow-control windows (localFlowControlWindow,
 * remoteFlowControlWindow) that chttp2 does not fill, so those stay
 * unknown unless a socket has them.
 *
 * Threading: channelz's registry is the process's and takes its own lock;
 * these functions may run on any thread.
 */
#include "gr_channelz.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/grpc.h>
#include <grpc/support/alloc.h>

#include "jsonr.h"

/* The socket data's keys, by enum tr_cnt. */
static const char *const data_keys[TR_CNT_N] = {
	[TR_CNT_STREAMS_STARTED] = "streamsStarted",
	[TR_CNT_STREAMS_SUCCEEDED] = "streamsSucceeded",
	[TR_CNT_STREAMS_FAILED] = "streamsFailed",
	[TR_CNT_MSGS_SENT] = "messagesSent",
	[TR_CNT_MSGS_RECV] = "messagesReceived",
	[TR_CNT_KEEPALIVES] = "keepAlivesSent",
	[TR_CNT_LOCAL_WINDOW] = "localFlowControlWindow",
	[TR_CNT_REMOTE_WINDOW] = "remoteFlowControlWindow",
};
#define WINDOWS ((1u << TR_CNT_LOCAL_WINDOW) | (1u << TR_CNT_REMOTE_WINDOW))
#define COUNTS ((1u << TR_CNT_N) - 1 - WINDOWS)

/* A parsed channelz answer; text is gRPC's (gpr_free). */
struct cz {
	char *text;
	struct jsonr r;
};

static int cz_load(struct cz *z, char *text)
{
	z->text = text;
	memset(&z->r, 0, sizeof z->r);
	if (!text)
		return -1;
	if (jsonr_load(&z->r, text, strlen(text)) < 0) {
		gpr_free(text);
		z->text = NULL;
		return -1;
	}
	return 0;
}

static void cz_free(struct cz *z)
{
	jsonr_free(&z->r);
	if (z->text)
		gpr_free(z->text);
	z->text = NULL;
}

/* Token i (a number, or an int64 as a string) as an integer; -1 if absent. */
static long long cz_int(const struct cz *z, int i)
{
	const struct jsonr_tok *t;

	if (i < 0 || (jsonr_type(&z->r, i) != JSONR_NUMBER && jsonr_type(&z->r, i) != JSONR_STRING))
		return -1;
	t = &z->r.tok[i];
	char buf[32];
	size_t n = t->end - t->start < sizeof buf - 1 ? t->end - t->start : sizeof buf - 1;
	memcpy(buf, z->r.text + t->start, n);
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

/* An address as gRPC names a peer ("ipv4:127.0.0.1:36098",
 * "ipv6:[::1]:36098"): ip (len 4 or 16) and port; 0, or -1. */
struct peer {
	unsigned char ip[16];
	size_t len;
	long port;
};

static int peer_parse(const char *s, struct peer *p)
{
	char host[64];
	const char *colon = s ? strrchr(s, ':') : NULL;
	size_t n;

	if (!colon || (strncmp(s, "ipv4:", 5) && strncmp(s, "ipv6:", 5)))
		return -1;
	s += 5;
	if (*s == '[')
		s++;
	n = (size_t)(colon - s);
	if (n && s[n - 1] == ']')
		n--;
	if (n >= sizeof host)
		return -1;
	memcpy(host, s, n);
	host[n] = 0;
	p->port = strtol(colon + 1, NULL, 10);
	p->len = strchr(host, ':') ? 16 : 4;
	return inet_pton(p->len == 16 ? AF_INET6 : AF_INET, host, p->ip) == 1 ? 0 : -1;
}

/* Base64 (RFC 4648, padded) of up to 16 bytes into out: their number, or -1. */
static long b64_decode(const char *s, size_t n, unsigned char *out)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned long acc = 0;
	long len = 0;
	int bits = 0;

	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *c = memchr(abc, s[i], 64);
		if (!c)
			return -1;
		acc = acc << 6 | (unsigned long)(c - abc);
		if ((bits += 6) >= 8) {
			if (len == 16)
				return -1;
			out[len++] = (unsigned char)(acc >> (bits -= 8));
		}
	}
	return len;
}

/* 1 when socket z's remote end is p. */
static int is_peer(const struct cz *z, const struct peer *p)
{
	int a = jsonr_find(&z->r, 0, "socket.remote.tcpip_address");
	int ip = a < 0 ? -1 : jsonr_obj_get(&z->r, a, "ip_address");
	unsigned char got[16];
	long n;

	if (ip < 0 || jsonr_type(&z->r, ip) != JSONR_STRING ||
	    cz_int(z, jsonr_obj_get(&z->r, a, "port")) != p->port)
		return 0;
	n = b64_decode(z->r.text + z->r.tok[ip].start, z->r.tok[ip].end - z->r.tok[ip].start, got);
	return n == (long)p->len && !memcmp(got, p->ip, p->len);
}

/* Adds one socket's data to out, unless its remote end is skip (NULL:
 * none); the windows as the smallest seen. */
static void socket_add(intptr_t id, const struct peer *skip, struct tr_counters *out)
{
	struct cz z;
	int data;

	if (cz_load(&z, grpc_channelz_get_socket(id)) < 0)
		return;
	if ((data = jsonr_find(&z.r, 0, "socket.data")) >= 0 && !(skip && is_peer(&z, skip))) {
		out->sockets++;
		out->known |= COUNTS; /* a count left out is 0 */
		for (int k = 0; k < TR_CNT_N; k++) {
			int i = jsonr_obj_get(&z.r, data, data_keys[k]);
			long long v;
			if (i >= 0 && jsonr_type(&z.r, i) == JSONR_OBJECT) /* Int64Value {"value": n} */
				i = jsonr_obj_get(&z.r, i, "value");
			if ((v = cz_int(&z, i)) < 0)
				continue;
			if (!(WINDOWS & 1u << k))
				out->v[k] += (uint64_t)v;
			else if (!(out->known & 1u << k) || (uint64_t)v < out->v[k])
				out->v[k] = (uint64_t)v;
			out->known |= 1u << k;
		}
	}
	cz_free(&z);
}

/* Adds the sockets of the refs in array key of object obj ("socketRef"). */
static void sockets_add(const struct cz *z, int obj, const struct peer *skip,
                        struct tr_counters *out)
{
	int arr = jsonr_obj_get(&z->r, obj, "socketRef");

	for (size_t i = 0; arr >= 0 && (int)i < (int)z->r.tok[arr].count; i++) {
		long long id = cz_int(z, jsonr_obj_get(&z->r, jsonr_arr_get(&z->r, arr, i),
		                                       "socketId"));
		if (id > 0)
			socket_add((intptr_t)id, skip, out);
	}
}

void gr_channelz_channel(int64_t uuid, struct tr_counters *out)
{
	struct cz ch, sub;
	int arr;

	if (uuid <= 0 || cz_load(&ch, grpc_channelz_get_channel((intptr_t)uuid)) < 0)
		return;
	arr = jsonr_find(&ch.r, 0, "channel.subchannelRef");
	for (size_t i = 0; arr >= 0 && (int)i < (int)ch.r.tok[arr].count; i++) {
		long long id = cz_int(&ch, jsonr_obj_get(&ch.r, jsonr_arr_get(&ch.r, arr, i),
		                                         "subchannelId"));
		if (id <= 0 || cz_load(&sub, grpc_channelz_get_subchannel((intptr_t)id)) < 0)
			continue;
		sockets_add(&sub, jsonr_find(&sub.r, 0, "subchannel"), NULL, out);
		cz_free(&sub);
	}
	cz_free(&ch);
}

int64_t gr_channelz_newest(const char *target)
{
	int64_t best = 0, start = 0;

	for (int page = 0; page < 1000; page++) { /* channelz pages 100 at a time */
		struct cz z;
		int arr, last;
		if (cz_load(&z, grpc_channelz_get_top_channels((intptr_t)start)) < 0)
			break;
		arr = jsonr_find(&z.r, 0, "channel");
		for (size_t i = 0; arr >= 0 && (int)i < (int)z.r.tok[arr].count; i++) {
			int c = jsonr_arr_get(&z.r, arr, i);
			long long id = cz_int(&z, jsonr_find(&z.r, c, "ref.channelId"));
			if (id > best && jsonr_str_eq(&z.r, jsonr_find(&z.r, c, "data.target"), target))
				best = id;
			if (id >= start)
				start = id + 1;
		}
		last = arr < 0 || jsonr_type(&z.r, jsonr_find(&z.r, 0, "end")) != JSONR_FALSE;
		cz_free(&z);
		if (last)
			break;
	}
	return best;
}

int64_t gr_channelz_newest_server(void)
{
	struct cz z;
	int64_t best = 0;
	int arr;

	if (cz_load(&z, grpc_channelz_get_servers(0)) < 0)
		return 0;
	arr = jsonr_find(&z.r, 0, "server");
	for (size_t i = 0; arr >= 0 && (int)i < (int)z.r.tok[arr].count; i++) {
		long long id = cz_int(&z, jsonr_find(&z.r, jsonr_arr_get(&z.r, arr, i),
		                                     "ref.serverId"));
		if (id > best)
			best = id;
	}
	cz_free(&z);
	return best;
}

void gr_channelz_server(int64_t uuid, const char *skip_peer, struct tr_counters *out)
{
	struct cz s;
	struct peer skip;
	int skipping = peer_parse(skip_peer, &skip) == 0;

	if (uuid <= 0 || cz_load(&s, grpc_channelz_get_server_sockets((intptr_t)uuid, 0, 0)) < 0)
		return;
	sockets_add(&s, 0, skipping ? &skip : NULL, out);
	cz_free(&s);
}

void gr_channelz_why(struct tr_counters *out, int on)
{
	snprintf(out->source, sizeof out->source, "channelz");
	if (!on)
		snprintf(out->why, sizeof out->why, "grpc.channelz is off: gRPC core counts nothing");
	else if (!out->sockets)
		snprintf(out->why, sizeof out->why, "channelz listed no connection");
	else if ((out->known & WINDOWS) != WINDOWS)
		snprintf(out->why, sizeof out->why, "flow-control windows: this gRPC's channelz "
		         "does not report them");
}
