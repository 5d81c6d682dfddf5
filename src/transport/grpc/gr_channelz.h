/* gr_channelz.h - the gRPC transport's counters (struct tr_counters,
 * transport.h) from gRPC core's channelz, read after a run (gr_channelz.c).
 *
 * Errors: what channelz does not answer is left unknown (out->known), never
 * counted as 0.  Threading: any thread (channelz locks its own registry).
 */
#ifndef TFGB_GR_CHANNELZ_H
#define TFGB_GR_CHANNELZ_H

#include <stdint.h>

#include "transport.h"

/* The channelz id of the newest top channel to target (as the channel was
 * made with), or 0 when channelz has none: called right after the channel
 * is made, it is that channel's. */
int64_t gr_channelz_newest(const char *target);
/* Adds the sockets of channel uuid's subchannels to out. */
void gr_channelz_channel(int64_t uuid, struct tr_counters *out);
/* The channelz id of the newest server of this process, or 0: called
 * right after a server is made, it is that one's (a control service in the
 * same process has one of its own). */
int64_t gr_channelz_newest_server(void);
/* Adds the sockets of server uuid to out, but the one whose remote end is
 * skip_peer (gRPC's name of a call's peer, "ipv4:127.0.0.1:36098"; NULL:
 * none).  Server sockets list at most 100 connections (channelz's page). */
void gr_channelz_server(int64_t uuid, const char *skip_peer, struct tr_counters *out);
/* Sets out's source and why once its sockets are added: on is whether
 * channelz was on for them. */
void gr_channelz_why(struct tr_counters *out, int on);

#endif
