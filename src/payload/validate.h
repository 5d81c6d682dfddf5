/* validate.h - every check of a job, once all its layers are applied.
 *
 * The rules that span modules live here, above them: the rules of the job
 * model's own sections (job_payload.c ...) and its registered sections'
 * checks (job_check_keys), then the payload layout (payload.c), the TLS
 * files (tls.c) and the limits (limit.c), each of which reads the job model
 * below it.  Nothing below calls back up.
 */
#ifndef TFGB_VALIDATE_H
#define TFGB_VALIDATE_H

#include "job.h"

/* Cross-key checks, done once every layer is applied.  Also settles what
 * follows from other keys (scheme custom: iovecs = the list's length), so
 * that --print-config always prints a job that re-parses, and reads the TLS
 * files into j->tls.  0, or -1 with err: one line naming the key, where it
 * was set and what is allowed. */
int job_validate(struct job *j, struct err *err);

#endif
