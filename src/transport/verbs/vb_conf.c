/* vb_conf.c - the [verbs] keys (vb_conf.h). */
#include "vb_conf.h"

#include <stddef.h>

#include "opt_table.h"

#define V(field) offsetof(struct vb_conf, field)

static const char *const mtu_names[] = {"active", "256", "512", "1024", "2048", "4096", NULL};
const unsigned vb_mtu_bytes[] = {0, 256, 512, 1024, 2048, 4096};
_Static_assert(sizeof mtu_names / sizeof mtu_names[0] - 1 ==
               sizeof vb_mtu_bytes / sizeof vb_mtu_bytes[0], "one size per mtu name");
static const char *const poll_names[] = {
	[VB_POLL_BUSY] = "busy", [VB_POLL_EVENT] = "event", [VB_POLL_EVENT + 1] = NULL};

static const struct opt_def keys[] = {
	{"verbs", "device", OPT_STRING, V(device), "",
	 .help = "verbs transport: the RDMA device, as ibv_devices names it; empty is the first one"},
	{"verbs", "port", OPT_INT, V(port), "1", RANGE(1, 255),
	 .help = "verbs transport: port of the RDMA device"},
	{"verbs", "gid_index", OPT_INT, V(gid_index), "none", .min = 0, .max = 255,
	 .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_NONE,
	 .help = "verbs transport: GID table entry; none: 0 on InfiniBand, the RoCE v2 one of the IP "
	         "on Ethernet"},
	{"verbs", "traffic_class", OPT_INT, V(traffic_class), "0", RANGE(0, 255),
	 .help = "verbs transport: traffic class of routed packets (RoCE: DSCP x 4 + ECN)"},
	{"verbs", "mtu", OPT_ENUM, V(mtu), "active", .values = mtu_names,
	 .help = "verbs transport: path MTU in bytes; active is the port's active MTU"},
	{"verbs", "inline", OPT_SIZE, V(inline_max), "64B", RANGE(0, VB_INLINE_LIMIT),
	 .help = "verbs transport: messages up to this size, header included, are sent inline"},
	{"verbs", "eager_max", OPT_SIZE, V(eager_max), "16KiB", RANGE(0, VB_EAGER_LIMIT),
	 .help = "verbs transport: largest body sent eagerly through a registered slot; larger by "
	         "rendezvous"},
	{"verbs", "send_depth", OPT_INT, V(send_depth), "256", RANGE(16, VB_DEPTH_LIMIT),
	 .help = "verbs transport: send-queue entries per connection"},
	{"verbs", "recv_depth", OPT_INT, V(recv_depth), "64", RANGE(1, VB_DEPTH_LIMIT / 2),
	 .help = "verbs transport: receive slots per connection, the most calls in flight on it"},
	{"verbs", "poll", OPT_ENUM, V(poll), "busy", .values = poll_names,
	 .help = "verbs transport: wait for completions by spinning on the CQ or by channel events"},
	{0},
};

const struct job_section tr_verbs_section = {
	.name = "verbs",
	.keys = keys,
	.size = sizeof(struct vb_conf),
};
