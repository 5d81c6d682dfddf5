/* cmd.h - the subcommands, one file each (cmd_NAME.c), as the dispatcher
 * (main.c) lists them.  Each is its options, its worker and its report;
 * what the multi-process ones share is the run layer's (src/run: role.h
 * resolves a process's role and serves, launches or runs the worker). */
#ifndef TFGB_CMD_H
#define TFGB_CMD_H

#include "tfgb.h"

int cmd_genpayload(struct tfgb *t);
int cmd_serve(struct tfgb *t);
int cmd_latency(struct tfgb *t);
int cmd_bandwidth(struct tfgb *t);
int cmd_throughput(struct tfgb *t);
int cmd_train(struct tfgb *t);
int cmd_collective(struct tfgb *t);
int cmd_rerun(struct tfgb *t);
int cmd_compare(struct tfgb *t);
int cmd_plot(struct tfgb *t);

/* What latency refuses of a job that job_validate accepts: a job.inflight
 * other than 1 (latency keeps one call in flight by definition).  Its run
 * and --sweep, for every point before any runs, ask it.  0, or -1 with
 * err naming where the key was set (job_key_err). */
int latency_job_fits(const struct job *j, struct err *err);

#endif
