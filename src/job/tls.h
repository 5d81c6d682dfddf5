/* tls.h - the TLS keys of a job ([server] tls_cert, tls_key, tls_ca).
 *
 * Only the transports that say so (tls_transport_allow: the transport
 * registry, for those with TR_CAP_TLS) and the control service use TLS.  The PEM files
 * are read once, when the job is validated, so that a bad file is a job
 * error (exit status 2) naming the key and where it was set, and nothing is
 * read from disk once a run starts.
 */
#ifndef TFGB_TLS_H
#define TFGB_TLS_H

#include "job.h"

/* Largest PEM file read: a certificate chain is a few KiB. */
#define TLS_PEM_MAX (1u << 20)

/* The cross-key rules of the TLS keys, then reads the files they name into
 * j->tls (replacing what an earlier call read).  0, or -1 with err. */
int tls_check(struct job *j, struct err *err);

/* Makes TLS keys valid with [job] transport's value transport; the
 * registry calls it once per transport that runs over TLS, before any job
 * is checked.  Not thread-safe: set-up only. */
void tls_transport_allow(int transport);

/* Frees what tls_check read; accepts a zeroed struct. */
void tls_free(struct job_tls *t);

#endif
