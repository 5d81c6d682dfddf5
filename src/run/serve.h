/* serve.h - a parameter server of tfgb.v1.Bench (serve.c): what `tfgb
 * serve` runs, and what a process whose role is a PS of one launch of
 * throughput or train runs (role.h). */
#ifndef TFGB_SERVE_H
#define TFGB_SERVE_H

#include "tfgb.h"

/* Serves the job's PS addresses of this process (--task N, the launch's
 * rank, or every PS whose host is this machine) with the job's transport
 * until SIGINT or SIGTERM (or, for a PS of one launch, the run's end).
 * Returns the exit status, after one line on failure. */
int run_serve(struct tfgb *t);

#endif
