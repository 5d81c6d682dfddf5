/* cmd_rerun.h - a JSON result taken for a job file (cmd_rerun.c): what the
 * dispatcher needs for CMD_RESULT (tfgb.h); resultfile.h reads the file. */
#ifndef TFGB_CMD_RERUN_H
#define TFGB_CMD_RERUN_H

#include <stddef.h>

#include "err.h"

/* 1 when the text's first non-blank byte is '{' (a JSON result, never a
 * job file), else 0. */
int rerun_is_result(const char *text);
/* Parses a tfgb JSON result's text (len bytes, NUL-terminated, as read
 * from path): its "benchmark" and its "job" text without output.file and
 * output.series (running it never writes over them), each malloc'd
 * (either pointer may be NULL).  A sweep's document gives its first
 * result's, unless `one` (tfgb rerun: one job), which refuses it saying
 * how to run the sweep again.  0, or -1 with a one-line err naming the
 * file. */
int rerun_read(const char *path, const char *text, size_t len, int one, char **benchmark,
               char **job_text, struct err *err);
/* The secret keys the result's run set but its "job" leaves out
 * ("job_withheld", e.g. cluster.token), as "section.key, ..." in buf
 * (empty when none or unparsable). */
void rerun_withheld(const char *path, const char *text, size_t tlen, char *buf, size_t len);

#endif
