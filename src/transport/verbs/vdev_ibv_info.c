/* vdev_ibv_info.c - `tfgb verbs-info`: every RDMA device, its limits, its
 * ports and their GID tables, with the entry verbs.gid_index = none takes
 * (the body of the command; see tfgb(1) and tfgb-verbs(7)).
 */
#include "vdev.h"

#include <errno.h>
#include <string.h>

#if TFGB_HAVE_VERBS

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "vdev_ibv.h"

static const char *link_name(uint8_t l)
{
	return l == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)"
	       : l == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "unspecified";
}

static const char *gid_type_name(int t)
{
	return t == VDEV_GID_ROCE_V2 ? "RoCE v2" : t == VDEV_GID_ROCE_V1 ? "RoCE v1" : "IB";
}

/* The port's GIDs, and the one tfgb takes with verbs.gid_index = none. */
static void info_gids(FILE *f, struct ibv_context *ctx, uint8_t port, int len, uint8_t link)
{
	struct vdev_attr a;
	int pick = -1;

	vdev_ibv_gid_table(ctx, port, len, link, &a);
	for (int i = 0; i < a.ngid; i++) {
		char text[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, a.gid[i].raw, text, sizeof text);
		fprintf(f, "      gid_index %-3d %-40s %s\n", a.gid[i].index, text,
		        gid_type_name(a.gid[i].type));
		if (pick < 0 && (link != IBV_LINK_LAYER_ETHERNET ? a.gid[i].index == 0
		                 : a.gid[i].type == VDEV_GID_ROCE_V2))
			pick = a.gid[i].index;
	}
	if (a.ngid == 0)
		fprintf(f, "      no GID: %s\n", link == IBV_LINK_LAYER_ETHERNET
		        ? "the interface has no IP address, RoCE cannot route" : "the port is not set up");
	else if (link == IBV_LINK_LAYER_ETHERNET)
		fprintf(f, "      gid_index none takes the RoCE v2 entry of the address the side "
		        "channel leaves from, else %d\n", pick >= 0 ? pick : a.gid[0].index);
	else
		fprintf(f, "      gid_index none takes %d\n", pick >= 0 ? pick : a.gid[0].index);
}

int vdev_ibv_info(FILE *f, struct err *err)
{
	struct ibv_device **list;
	int n = 0;

	list = vdev_ibv_device_list(&n);
	if (n <= 0) {
		if (n < 0)
			err_set(err, "cannot list RDMA devices: %s", strerror(-n));
		else
			err_set(err, "no RDMA device found (ibv_get_device_list returned 0 "
			        "devices)");
		if (list)
			ibv_free_device_list(list);
		return n < 0 ? n : -ENODEV;
	}
	for (int i = 0; i < n; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_device_attr da;
		struct ibv_pd *pd;

		fprintf(f, "device %s%s%s\n", ibv_get_device_name(list[i]),
		        i == 0 ? " (the first: used when verbs.device is empty)" : "",
		        list[i]->transport_type == IBV_TRANSPORT_IWARP ||
		        list[i]->node_type == IBV_NODE_RNIC ? ", iWARP: tfgb cannot use it" : "");
		if (!ctx || ibv_query_device(ctx, &da) != 0) {
			fprintf(f, "  cannot open or query it: %s\n", strerror(errno ? errno : EIO));
			if (ctx)
				ibv_close_device(ctx);
			continue;
		}
		pd = ibv_alloc_pd(ctx);
		fprintf(f, "  firmware %s, %d port%s\n", da.fw_ver, da.phys_port_cnt,
		        da.phys_port_cnt == 1 ? "" : "s");
		fprintf(f, "  max_sge %d, max_qp_wr %d, max_cqe %d, max_mr_size %llu, max_inline %u\n",
		        da.max_sge, da.max_qp_wr, da.max_cqe, (unsigned long long)da.max_mr_size,
		        pd ? vdev_ibv_probe_inline(ctx, pd) : 0);
		for (uint8_t p = 1; p <= da.phys_port_cnt; p++) {
			struct ibv_port_attr pa;
			if (ibv_query_port(ctx, p, &pa) != 0) {
				fprintf(f, "    port %u: cannot query it\n", p);
				continue;
			}
			fprintf(f, "    port %u: %s, %s, active MTU %u, LID %u, max_msg_sz %u\n", p,
			        ibv_port_state_str(pa.state), link_name(pa.link_layer),
			        vdev_ibv_mtu_bytes(pa.active_mtu), pa.lid, pa.max_msg_sz);
			info_gids(f, ctx, p, pa.gid_tbl_len, pa.link_layer);
		}
		if (pd)
			ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return 0;
}

#else /* !TFGB_HAVE_VERBS */

int vdev_ibv_info(FILE *f, struct err *err)
{
	(void)f;
	err_set(err, "tfgb was built without verbs (VERBS=0)");
	return -ENOSYS;
}

#endif
