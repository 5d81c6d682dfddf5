/* transport.c - the transport registry and the wire contract (proto/tfgb.proto)'s names.
 *
 * Optional transports are the only #if in the engine's reach, and they live
 * here: an entry is NULL when its transport is not compiled in. */
#include "transport.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mp_conf.h"
#include "sk_conf.h"
#include "sysinfo.h"
#include "tls.h"
#include "vb_conf.h"

extern const struct tr_ops tr_grpc_ops;
extern const struct job_section tr_grpc_section; /* gr_conf.h, which brings gRPC's headers */
extern const struct tr_ops tr_socket_ops;
extern const struct tr_ops tr_verbs_ops; /* built without VERBS=1: its info says why */
extern const struct tr_ops tr_mpi_ops;   /* only with MPI=1 */

/* The registry: one row per transport, in the order of [job] transport's
 * values (enum job_transport); each row's section joins the job's sections
 * (tr_registry_init).  Adding a transport is its own files and one row. */
static struct tr_entry registry[JOB_TRANSPORTS_MAX] = {
	{"grpc", &tr_grpc_ops, &tr_grpc_section, "is not compiled in"},
	{"socket", &tr_socket_ops, &tr_socket_section, NULL},
#if TFGB_HAVE_VERBS
	{"verbs", &tr_verbs_ops, &tr_verbs_section, NULL},
#else
	{"verbs", NULL, &tr_verbs_section, "is not compiled in (built with VERBS=0)"},
#endif
#if TFGB_HAVE_MPI
	{"mpi", &tr_mpi_ops, &tr_mpi_section, NULL},
#else
	{"mpi", NULL, &tr_mpi_section,
	 "is not compiled in (built with MPI=0: it needs Open MPI's libopenmpi-dev)"},
#endif
};
/* The ops of the rows not compiled in as transports whose info command
 * still answers, saying why it has nothing to list (tr_info). */
static const struct tr_ops *const info_only[] = {
#if !TFGB_HAVE_VERBS
	&tr_verbs_ops,
#endif
	NULL,
};
static int nregistry = 4;
static int registered; /* rows [0, registered) are in the job model */

int tr_registry_init(void)
{
	for (; registered < nregistry; registered++) {
		const struct tr_entry *e = &registry[registered];
		if (job_register(e->name, e->ops != NULL, e->section) < 0)
			return -1;
		if (job_transport_names()[registered] != e->name)
			return -1; /* registered before: [job] transport's numbers would shift */
		/* what the lower layers ask of it, told them once */
		if (e->ops && (e->ops->caps & TR_CAP_TLS))
			tls_transport_allow(registered);
		if (e->ops && e->ops->environment && sysinfo_add_source(e->ops->environment) < 0)
			return -1;
	}
	return 0;
}

int tr_register(const struct tr_entry *e)
{
	for (int i = 0; i < nregistry; i++)
		if (!strcmp(registry[i].name, e->name))
			return registry[i].ops == e->ops && registry[i].section == e->section ? 0 : -1;
	if (nregistry == JOB_TRANSPORTS_MAX)
		return -1;
	registry[nregistry++] = *e;
	return tr_registry_init();
}

const struct tr_ops *tr_find(int transport, struct err *err)
{
	const struct tr_entry *e = transport >= 0 && transport < registered ? &registry[transport]
	                                                                    : NULL;

	if (!e) {
		err_set(err, "unknown transport %d", transport);
		return NULL;
	}
	if (e->ops && e->ops->size != sizeof(struct tr_ops)) {
		err_set(err, "transport '%s' was built against another "
		         "interface version", e->name);
		return NULL;
	}
	if (!e->ops || !e->ops->name)
		err_set(err, "transport '%s' %s; use transport = grpc",
		         e->name, e->why);
	return e->ops;
}

void tr_client_cfg_of(const struct job *j, const struct payload *p, uint64_t wire, int method,
                      int inflight, struct tr_client_cfg *cfg)
{
	const struct tr_entry *e = j->transport >= 0 && j->transport < registered
	                           ? &registry[j->transport] : NULL;

	*cfg = (struct tr_client_cfg){
		.inflight = inflight < 1 ? 1 : inflight,
		.max_request = wire, /* a Pull's 8 bytes name a reply this big */
		.max_reply = method == TR_ACK || method == TR_ACK_TENSOR || method == TR_ACK_TENSOR_ZC
	             ? 0 : wire,
		.max_iov = j->mode == MODE_NONSERIALIZED ? (uint32_t)p->n : 0,
		.timeout_ns = j->timeout_ns,
		.link_rtt_ns = j->net_ps_host[0] ? 2 * (j->net_delay_ns + j->net_jitter_ns) : 0,
		.tls = &j->tls,
		.section = e && e->section ? job_section_get(j, e->section) : NULL,
	};
}

const struct job_section *tr_section(int transport)
{
	return transport >= 0 && transport < registered ? registry[transport].section : NULL;
}

int tr_info(const char *command, FILE *f, struct err *err)
{
	for (int i = 0; i < nregistry; i++) {
		const struct tr_ops *o = registry[i].ops;
		if (o && o->info && o->info_command && !strcmp(o->info_command, command))
			return o->info(f, err);
	}
	for (int i = 0; info_only[i]; i++)
		if (info_only[i]->info && !strcmp(info_only[i]->info_command, command))
			return info_only[i]->info(f, err);
	err_set(err, "no transport has the command '%s'", command);
	return -ENOENT;
}

static void setup_ps_addr(const void *src, int i, struct opt_hostport *out)
{
	job_ps_addr(src, i, out);
}

void tr_setup_of(const struct job *j, struct tr_setup *s)
{
	const struct job_section *sec = tr_section(j->transport);

	*s = (struct tr_setup){
		.section = sec ? job_section_get(j, sec) : NULL,
		.ps_count = (int)j->ps_count,
		.workers = (int)j->workers,
		.workers_set = job_key_set(j, "cluster", "workers"),
		.ps_addr = setup_ps_addr,
		.src = j,
	};
}

int tr_probe(const struct tr_ops *ops, const struct job *j, struct err *err)
{
	struct tr_setup s;

	if (!ops->probe)
		return 0;
	tr_setup_of(j, &s);
	return ops->probe(&s, err);
}

void tr_refuse(const struct tr_ops *ops, const struct job *j)
{
	struct tr_setup s;
	struct err err;

	if (!ops->probe)
		return;
	tr_setup_of(j, &s);
	s.refused = 1;
	ops->probe(&s, &err); /* its own refusal comes back: said already */
}

int tr_init(const struct tr_ops *ops, const struct job *j, void **ctx, struct err *err)
{
	struct tr_setup s;

	tr_setup_of(j, &s);
	return ops->init(&s, ctx, err);
}

static const char *const method_names[] = {
	[TR_ECHO] = "Echo", [TR_ACK] = "Ack", [TR_PULL] = "Pull",
	[TR_ECHO_TENSOR] = "EchoTensor", [TR_ACK_TENSOR] = "AckTensor", [TR_INFO] = "Info",
	[TR_ECHO_TENSOR_ZC] = "EchoTensorZeroCopy", [TR_ACK_TENSOR_ZC] = "AckTensorZeroCopy",
	[TR_PULL_TENSOR] = "PullTensor", [TR_PULL_TENSOR_ZC] = "PullTensorZeroCopy",
};

static const char *const method_paths[] = {
	[TR_ECHO] = "/tfgb.v1.Bench/Echo", [TR_ACK] = "/tfgb.v1.Bench/Ack",
	[TR_PULL] = "/tfgb.v1.Bench/Pull", [TR_ECHO_TENSOR] = "/tfgb.v1.Bench/EchoTensor",
	[TR_ACK_TENSOR] = "/tfgb.v1.Bench/AckTensor", [TR_INFO] = "/tfgb.v1.Bench/Info",
	[TR_ECHO_TENSOR_ZC] = "/tfgb.v1.Bench/EchoTensorZeroCopy",
	[TR_ACK_TENSOR_ZC] = "/tfgb.v1.Bench/AckTensorZeroCopy",
	[TR_PULL_TENSOR] = "/tfgb.v1.Bench/PullTensor",
	[TR_PULL_TENSOR_ZC] = "/tfgb.v1.Bench/PullTensorZeroCopy",
};

const char *tr_method_path(int m)
{
	return m >= TR_ECHO && m <= TR_METHOD_LAST ? method_paths[m] : NULL;
}

const char *tr_method_name(int m)
{
	return m >= TR_ECHO && m <= TR_METHOD_LAST ? method_names[m] : "?";
}

const char *tr_status_name(int s)
{
	/* every gRPC code, 0 to 16; those of enum tr_status bound to it */
	static const char *const names[] = {
		[TR_OK] = "OK", [TR_CANCELLED] = "CANCELLED", [TR_UNKNOWN] = "UNKNOWN",
		[TR_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
		[TR_DEADLINE_EXCEEDED] = "DEADLINE_EXCEEDED", [5] = "NOT_FOUND",
		[6] = "ALREADY_EXISTS", [7] = "PERMISSION_DENIED",
		[TR_RESOURCE_EXHAUSTED] = "RESOURCE_EXHAUSTED", [9] = "FAILED_PRECONDITION",
		[10] = "ABORTED", [11] = "OUT_OF_RANGE", [TR_UNIMPLEMENTED] = "UNIMPLEMENTED",
		[TR_INTERNAL] = "INTERNAL", [TR_UNAVAILABLE] = "UNAVAILABLE", [15] = "DATA_LOSS",
		[16] = "UNAUTHENTICATED",
	};
	return s >= 0 && s < (int)(sizeof names / sizeof names[0]) ? names[s] : "UNKNOWN_STATUS";
}


const char *tr_coll_version(const struct tr_ops *ops)
{
	return ops->coll && ops->coll->version ? ops->coll->version() : ops->version();
}
