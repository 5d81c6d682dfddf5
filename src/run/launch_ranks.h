/* launch_ranks.h - the one-machine launcher of a run whose every process
 * is a rank (a collective: role.h, RUN_RANKS).
 *
 * It starts cluster.workers processes of `tfgb CMD --task i` with the
 * effective job (a memfd: exactly this job), rank 0's standard output the
 * report's stream (output.file), and waits for them.  A rank that dies or
 * fails stops the others: the first killed by a signal is named (else the
 * first that failed), after half a second in which the ranks that noticed
 * end too.  SIGINT or SIGTERM stops them all.  Nothing is left running:
 * every rank is stopped (SIGTERM, SIGKILL after 2 s) and reaped, and a
 * rank dies with its launcher (cluster_child_setup).
 */
#ifndef TFGB_LAUNCH_RANKS_H
#define TFGB_LAUNCH_RANKS_H

#include <stdint.h>

#include "tfgb.h"

/* Runs the ranks for at most run_ns: TFGB_EXIT_OK when every rank ended
 * with status 0, else the status after one line naming the rank
 * (TFGB_EXIT_USAGE when that rank refused the job). */
int launch_ranks(struct tfgb *t, uint64_t run_ns);

#endif
