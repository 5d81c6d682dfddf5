/* train_ar.h - `tfgb train` with train.strategy = allreduce (train_ar.c):
 * the workers' all-reduce of every gradient, no PS. */
#ifndef TFGB_TRAIN_AR_H
#define TFGB_TRAIN_AR_H

#include "tfgb.h"
#include "train.h"

/* Runs the plan pl's steps as the all-reduce strategy does, in the role
 * this process has (role.h): the exit status. */
int train_allreduce(struct tfgb *t, const struct train_plan *pl);

#endif
