/* outfile.h - the files a command writes, checked before it does any work.
 *
 * A report found unwritable after the measurement loses the measurement,
 * and one written over an input (the job file itself, a result being
 * rerun or plotted, a model, a TLS key) loses the input.  So every place
 * a command will write is checked first: it is not a directory, not a
 * file the command reads (the same device and inode, whatever the name),
 * not the place of another of its outputs, and its folder exists and can
 * be written.  A FIFO must have a reader: nothing is written while the
 * run waits for one.
 */
#ifndef TFGB_OUTFILE_H
#define TFGB_OUTFILE_H

#include "tfgb.h"

/* What a command reads, to be kept from its outputs. */
struct outfile_input {
	const char *path;
	const char *what; /* "the job file", "the result rerun reads" */
};

/* The problem with writing at path, in why ("is a directory", "is the job
 * file"), or 0 when it can be written; ninputs inputs are compared by
 * device and inode.  *fifo is set to 1 when path is a FIFO (whose reader
 * only an open can find). */
int outfile_place(const char *path, const struct outfile_input *in, int ninputs, int *fifo,
                  struct err *why);

/* Checks output.file, output.series and output.hgrm of t's job against
 * each other and t's inputs (its job file or result, train.model's file,
 * the TLS files); a report on a FIFO is opened here, into t->out.  -1 to
 * go on, or the exit status of the error it printed. */
int outfile_check_job(struct tfgb *t);

#endif
