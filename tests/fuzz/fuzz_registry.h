/* fuzz_registry.h - the job model's transports and sections for the fuzz
 * targets, which link the sections' files (sk_conf.c, vb_conf.c) but not
 * the transports themselves: the rows of the registry in
 * src/transport/transport.c, by name and section, in its order. */
#ifndef FUZZ_REGISTRY_H
#define FUZZ_REGISTRY_H

#include "job.h"
#include "sk_conf.h"
#include "tls.h"
#include "vb_conf.h"

static inline int fuzz_registry_init(void)
{
	if (job_register("grpc", 1, NULL) < 0 || job_register("socket", 1, &tr_socket_section) < 0 ||
	    job_register("verbs", 1, &tr_verbs_section) < 0)
		return -1;
	tls_transport_allow(TRANSPORT_GRPC); /* its row's TR_CAP_TLS */
	return 0;
}

/* A target with its own set-up defines FUZZ_OWN_INITIALIZE and calls
 * fuzz_registry_init from it. */
#ifndef FUZZ_OWN_INITIALIZE
#include <stdlib.h>
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (fuzz_registry_init() < 0)
		abort();
	return 0;
}
#endif

#endif
