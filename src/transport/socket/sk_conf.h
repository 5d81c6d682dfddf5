/* sk_conf.h - the [socket] section of a job: the socket transport's own
 * keys (tfgb.ini(5), The [socket] section), declared here and composed
 * into the job by the transport registry (transport.c). */
#ifndef TFGB_SK_CONF_H
#define TFGB_SK_CONF_H

#include <stdint.h>

#include "job.h"

/* The typed [socket] section, as job_section_get(j, &tr_socket_section)
 * returns it. */
struct sk_conf {
	uint64_t sndbuf, rcvbuf; /* bytes; 0: the kernel's autotuning */
	uint64_t busy_poll_ns;   /* SO_BUSY_POLL, whole microseconds; 0: off */
	uint64_t zerocopy;       /* MSG_ZEROCOPY from this many bytes; 0: off */
};

extern const struct job_section tr_socket_section;

#endif
