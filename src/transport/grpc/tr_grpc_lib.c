/* tr_grpc_lib.c - the gRPC library's versions (tr_grpc_lib.h). */
#include "tr_grpc_lib.h"

#include <grpc/grpc.h>
#include <stdio.h>

#ifndef TFGB_GRPC_RELEASE
#define TFGB_GRPC_RELEASE ""
#endif

void tr_grpc_version_text(char *buf, size_t len)
{
	if (*TFGB_GRPC_RELEASE)
		snprintf(buf, len, "gRPC %s (core %s)", TFGB_GRPC_RELEASE, grpc_version_string());
	else
		snprintf(buf, len, "gRPC core %s", grpc_version_string());
}

void tr_grpc_environment(struct sysinfo_env *e)
{
	/* cut to the field, as sysinfo cuts its own facts */
	snprintf(e->grpc, sizeof e->grpc, "%s", grpc_version_string());
	snprintf(e->grpc_release, sizeof e->grpc_release, "%s", TFGB_GRPC_RELEASE);
}
