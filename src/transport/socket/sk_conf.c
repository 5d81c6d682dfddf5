/* sk_conf.c - the [socket] keys (sk_conf.h). */
#include "sk_conf.h"

#include <stddef.h>

#include "opt_table.h"

#define S(field) offsetof(struct sk_conf, field)

static const struct opt_def keys[] = {
	{"socket", "sndbuf", OPT_SIZE, S(sndbuf), "0B", RANGE(0, GIB),
	 .help = "socket transport: SO_SNDBUF of each connection; 0 keeps the kernel's autotuning"},
	{"socket", "rcvbuf", OPT_SIZE, S(rcvbuf), "0B", RANGE(0, GIB),
	 .help = "socket transport: SO_RCVBUF of each connection; 0 keeps the kernel's autotuning"},
	{"socket", "busy_poll", OPT_DURATION, S(busy_poll_ns), "0s", RANGE(0, SEC),
	 .help = "socket transport: SO_BUSY_POLL, how long a receive spins on the device queue; 0 is off"},
	{"socket", "zerocopy", OPT_SIZE, S(zerocopy), "0B", RANGE(0, GIB),
	 .help = "socket transport: send with MSG_ZEROCOPY from this many bytes; 0 is off"},
	{0},
};

const struct job_section tr_socket_section = {
	.name = "socket",
	.keys = keys,
	.size = sizeof(struct sk_conf),
};
