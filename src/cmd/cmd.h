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

#endif
