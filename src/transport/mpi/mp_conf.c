/* mp_conf.c - the [mpi] keys (mp_conf.h). */
#include "mp_conf.h"

#include <stddef.h>

#include "opt_table.h"

#define M(field) offsetof(struct mp_conf, field)

const char *const mp_btl_names[] = {
	[MP_BTL_AUTO] = "auto", [MP_BTL_VADER] = "vader,self", [MP_BTL_TCP] = "tcp,self",
	[MP_BTL_BOTH] = "vader,tcp,self", [MP_BTL_BOTH + 1] = NULL};

const char *const mp_thread_names[] = {
	[MP_THREAD_SINGLE] = "single", [MP_THREAD_FUNNELED] = "funneled", [MP_THREAD_FUNNELED + 1] = NULL};

static const struct opt_def keys[] = {
	{"mpi", "direct", OPT_BOOL, M(direct), "on",
	 .help = "mpi transport: large bodies as a header, then their bytes straight into place "
	         "(tag 3)"},
	{"mpi", "direct_min", OPT_SIZE, M(direct_min), "1KiB", RANGE(1, (long long)MP_MSG_LIMIT),
	 .help = "mpi transport: the smallest body the direct path takes"},
	{"mpi", "btl", OPT_ENUM, M(btl), "auto", .values = mp_btl_names,
	 .help = "mpi transport: Open MPI's byte transfer layers (OMPI_MCA_btl); auto: Open MPI's "
	         "choice"},
	{"mpi", "thread_level", OPT_ENUM, M(thread_level), "single", .values = mp_thread_names,
	 .help = "mpi transport: the thread level MPI_Init_thread asks for (funneled: Open MPI "
	         "locks in each call)"},
	{"mpi", "body_timeout", OPT_DURATION, M(body_timeout_ns), "30s", RANGE(SEC / 10, 3600 * SEC),
	 .help = "mpi transport: a server's wait for the rest of a request once its start has "
	         "come"},
	{0},
};

const struct job_section tr_mpi_section = {
	.name = "mpi",
	.keys = keys,
	.size = sizeof(struct mp_conf),
};
