/* tr_verbs_gid.c - what the verbs transport checks of a device before it
 * uses it: whether a connection routes by GID (vb_global) and the GID it
 * routes with (chosen as perftest chooses it, checked against the peer's
 * in the hello), the device's transport
 * (iWARP is refused) and its asynchronous events (a port gone down ends
 * the connections at once instead of at their deadline).
 */
#include "tr_verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

const char *vb_gid_type_str(int type)
{
	return type == VDEV_GID_ROCE_V2 ? "RoCE v2" : type == VDEV_GID_ROCE_V1 ? "RoCE v1"
	       : type == VDEV_GID_IB ? "IB" : "unknown type";
}

char *vb_gid_text(const uint8_t raw[16], int index, int type, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, raw, a, sizeof a))
		snprintf(a, sizeof a, "?");
	snprintf(buf, len, "index %d %s (%s)", index, a, vb_gid_type_str(type));
	return buf;
}

/* The 16 bytes a GID holding the address of sa has: IPv4 mapped
 * (::ffff:a.b.c.d), IPv6 as it is.  0, or -1 for another family. */
static int addr_gid(const struct sockaddr *sa, uint8_t g[16])
{
	memset(g, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		g[10] = g[11] = 0xff;
		memcpy(g + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa && sa->sa_family == AF_INET6) {
		memcpy(g, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 0;
	}
	return -1;
}

const struct vdev_gid *vb_gid_pick(const struct vdev_attr *a, int want,
                                   const struct sockaddr *local, struct err *why)
{
	const struct vdev_gid *v2 = NULL;
	uint8_t mine[16];
	int have_addr = addr_gid(local, mine) == 0;

	if (want >= 0) {
		for (int i = 0; i < a->ngid; i++)
			if (a->gid[i].index == want)
				return &a->gid[i];
		err_set(why, "GID index %d of '%s' is empty; set verbs.gid_index to a %s "
		        "entry, or to none to let tfgb choose ('tfgb verbs-info' lists them)", want,
		        a->name, a->link_layer == VDEV_LINK_ETH ? "RoCE v2" : "valid");
		return NULL;
	}
	if (a->ngid == 0) {
		err_set(why, "the GID table of '%s' is empty%s ('tfgb verbs-info' lists the "
		        "ports)", a->name, a->link_layer == VDEV_LINK_ETH
		        ? ": the Ethernet port has no IP address" : "");
		return NULL;
	}
	if (a->link_layer != VDEV_LINK_ETH) {
		for (int i = 0; i < a->ngid; i++)
			if (a->gid[i].index == 0)
				return &a->gid[i];
		return &a->gid[0];
	}
	for (int i = 0; i < a->ngid; i++) {
		if (a->gid[i].type != VDEV_GID_ROCE_V2)
			continue;
		if (have_addr && !memcmp(a->gid[i].raw, mine, 16))
			return &a->gid[i];
		if (!v2)
			v2 = &a->gid[i];
	}
	return v2 ? v2 : &a->gid[0];
}

int vb_global(const struct vdev_attr *attr, uint16_t peer_lid)
{
	return attr->link_layer == VDEV_LINK_ETH || attr->lid == 0 || peer_lid == 0;
}

int vb_gid_check(const struct vb_ep *e, const struct vdev_attr *attr, const struct vb_hello *p,
                 const char *peer, struct err *why)
{
	char m[VB_GID_TEXT], o[VB_GID_TEXT];

	if (!vb_global(attr, p->lid) || p->gid_type == e->gid.type)
		return 0;
	err_set(why, "the GID types differ: this host routes with GID %s, %s with GID %s; "
	        "RoCE v1 and v2 packets never meet: set verbs.gid_index on both hosts to entries "
	        "of one type (RoCE v2), or to none ('tfgb verbs-info' lists them)",
	        vb_gid_text(e->gid.raw, e->gid.index, e->gid.type, m, sizeof m), peer,
	        vb_gid_text(p->gid, p->gid_index, p->gid_type, o, sizeof o));
	return -EPROTO;
}

int vb_device_check(const struct vdev_attr *attr, struct err *err)
{
	if (attr->transport == VDEV_TRANSPORT_IB)
		return 0;
	err_set(err, "RDMA device '%s' is %s: the verbs transport needs InfiniBand or "
	        "RoCE (connections without the RDMA connection manager, RDMA WRITE with "
	        "immediate); use transport = socket, or set verbs.device to another device",
	        attr->name, attr->transport == VDEV_TRANSPORT_IWARP ? "an iWARP device"
	        : "of an unknown transport");
	return -EPROTONOSUPPORT;
}

int vb_async_fatal(const struct vdev_ops *dev, struct vdev *d, struct err *why)
{
	return dev->async_poll && dev->async_poll(d, why) > 0;
}
