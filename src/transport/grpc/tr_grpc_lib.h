/* tr_grpc_lib.h - what the gRPC library underneath the grpc transport says
 * of itself: its version text and a result's environment facts.
 *
 * No errors: a fact the build did not find is "".  Thread-safe (reads
 * constants and gRPC's own static string).
 */
#ifndef TFGB_TR_GRPC_LIB_H
#define TFGB_TR_GRPC_LIB_H

#include <stddef.h>

#include "sysinfo.h"

/* "gRPC 1.51.1 (core 29.0.0)", or "gRPC core 29.0.0" when the build found
 * no release: what results and `tfgb version` name as the library. */
void tr_grpc_version_text(char *buf, size_t len);

/* Fills e->grpc (the core's version, grpc_version_string()) and
 * e->grpc_release (the release as its users know it, as the build found
 * it: TFGB_GRPC_RELEASE, pkg-config's grpc++, else the Debian package). */
void tr_grpc_environment(struct sysinfo_env *e);

#endif
