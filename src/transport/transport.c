/* transport.c - the transport registry and the wire contract (proto/tfgb.proto)'s names.
 *
 * Optional transports are the only #if in the engine's reach, and they live
 * here: an entry is NULL when its transport is not compiled in. */
#include "transport.h"

#include <stdio.h>

extern const struct tr_ops tr_grpc_ops;
extern const struct tr_ops tr_socket_ops;
#if TFGB_HAVE_VERBS
extern const struct tr_ops tr_verbs_ops;
#endif

static const struct {
	int id;
	const struct tr_ops *ops;
	const char *why; /* when ops is NULL */
} registry[] = {
	{TRANSPORT_GRPC, &tr_grpc_ops, "is not compiled in"},
	{TRANSPORT_SOCKET, &tr_socket_ops, NULL},
#if TFGB_HAVE_VERBS
	{TRANSPORT_VERBS, &tr_verbs_ops, NULL},
#else
	{TRANSPORT_VERBS, NULL, "is not compiled in (built with VERBS=0)"},
#endif
};

const struct tr_ops *tr_find(int transport, struct tr_err *err)
{
	for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
		if (registry[i].id != transport)
			continue;
		if (registry[i].ops && registry[i].ops->size != sizeof(struct tr_ops)) {
			snprintf(err->msg, sizeof err->msg, "transport '%s' was built against another "
			         "interface version", registry[i].ops->name);
			return NULL;
		}
		if (!registry[i].ops || !registry[i].ops->name)
			snprintf(err->msg, sizeof err->msg, "transport '%s' %s; use transport = grpc",
			         job_transport_name(transport), registry[i].why);
		return registry[i].ops;
	}
	snprintf(err->msg, sizeof err->msg, "unknown transport %d", transport);
	return NULL;
}

int tr_probe(const struct tr_ops *ops, const struct job *j, struct tr_err *err)
{
	return ops->probe ? ops->probe(j, err) : 0;
}

static const char *const method_names[] = {
	[TR_ECHO] = "Echo", [TR_ACK] = "Ack", [TR_PULL] = "Pull",
	[TR_ECHO_TENSOR] = "EchoTensor", [TR_ACK_TENSOR] = "AckTensor", [TR_INFO] = "Info",
};

static const char *const method_paths[] = {
	[TR_ECHO] = "/tfgb.v1.Bench/Echo", [TR_ACK] = "/tfgb.v1.Bench/Ack",
	[TR_PULL] = "/tfgb.v1.Bench/Pull", [TR_ECHO_TENSOR] = "/tfgb.v1.Bench/EchoTensor",
	[TR_ACK_TENSOR] = "/tfgb.v1.Bench/AckTensor", [TR_INFO] = "/tfgb.v1.Bench/Info",
};

const char *tr_method_path(int m)
{
	return m >= TR_ECHO && m <= TR_INFO ? method_paths[m] : NULL;
}

const char *tr_method_name(int m)
{
	return m >= TR_ECHO && m <= TR_INFO ? method_names[m] : "?";
}

const char *tr_status_name(int s)
{
	static const char *const names[] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
		"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
		"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
		"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
	};
	return s >= 0 && s <= 16 ? names[s] : "UNKNOWN_STATUS";
}
