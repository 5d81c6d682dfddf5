/* vb_conf.h - the [verbs] section of a job: the verbs transport's own keys
 * (tfgb.ini(5), The [verbs] section), declared here and composed into the
 * job by the transport registry (transport.c), and the bounds the
 * transport holds them to. */
#ifndef TFGB_VB_CONF_H
#define TFGB_VB_CONF_H

#include <stdint.h>

#include "job.h"

#define VB_EAGER_LIMIT (1u << 20)  /* largest eager_max: slots are this big */
#define VB_INLINE_LIMIT 1024u      /* largest inline */
#define VB_DEPTH_MIN 4u            /* send_depth: vb_ep_post's signaling needs 2 halves */
#define VB_DEPTH_LIMIT 32768u      /* largest send_depth and recv_depth */

/* The values of [verbs] mtu, in the order of their key's names ("active"
 * is 0: the port's active MTU). */
extern const unsigned vb_mtu_bytes[];

/* The values of [verbs] poll. */
enum vb_poll { VB_POLL_BUSY, VB_POLL_EVENT };

/* The typed [verbs] section, as job_section_get(j, &tr_verbs_section)
 * returns it. */
struct vb_conf {
	char *device;                  /* "" is the first device */
	int64_t port, gid_index;       /* gid_index -1: none, chosen per connection */
	int64_t traffic_class;
	int mtu;                       /* index into vb_mtu_bytes */
	int poll;                      /* enum vb_poll */
	uint64_t inline_max, eager_max;
	int64_t send_depth, recv_depth;
};

extern const struct job_section tr_verbs_section;

#endif
