/* mp_conf.h - the [mpi] section of a job: the mpi transport's own keys
 * (tfgb.ini(5), The [mpi] section; tfgb-mpi(7)), declared here and
 * composed into the job by the transport registry (transport.c).  Always
 * built: a job file with an [mpi] section parses (and is checked) in a
 * build without Open MPI too, which then says the transport is not
 * compiled in. */
#ifndef TFGB_MP_CONF_H
#define TFGB_MP_CONF_H

#include <stdint.h>

#include "job.h"

/* The most bytes of one MPI message: MPI counts are ints. */
#define MP_MSG_LIMIT ((1ull << 31) - 64)

/* [mpi] btl: MP_BTL_AUTO leaves the choice to Open MPI; the others set
 * OMPI_MCA_btl to their name (mp_btl_names) before MPI_Init. */
enum mp_btl { MP_BTL_AUTO, MP_BTL_VADER, MP_BTL_TCP, MP_BTL_BOTH };
extern const char *const mp_btl_names[];

/* [mpi] thread_level: what MPI_Init_thread is asked (mp_thread_names). */
enum mp_thread { MP_THREAD_SINGLE, MP_THREAD_FUNNELED };
extern const char *const mp_thread_names[];

/* The typed [mpi] section, as job_section_get(j, &tr_mpi_section) returns it. */
struct mp_conf {
	int direct;          /* the metadata-then-bytes path for large bodies */
	uint64_t direct_min; /* ... of at least this many bytes */
	int btl;             /* enum mp_btl: Open MPI's byte transfer layers */
	int thread_level;    /* enum mp_thread */
	uint64_t body_timeout_ns; /* a server's wait for the rest of a request (tfgb-mpi(7)) */
};

extern const struct job_section tr_mpi_section;

#endif
