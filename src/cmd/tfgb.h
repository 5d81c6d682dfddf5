/* tfgb.h - what the dispatcher hands to every subcommand. */
#ifndef TFGB_H
#define TFGB_H

#include <stdio.h>

#include "job.h"

#ifndef TFGB_VERSION
#define TFGB_VERSION "unknown"
#endif

/* Exit status of every command (see EXIT STATUS in tfgb(1)). */
enum {
	TFGB_EXIT_OK = 0,
	TFGB_EXIT_FAIL = 1,  /* run-time failure */
	TFGB_EXIT_USAGE = 2, /* bad command line or job file */
};

/* Command flags: what the dispatcher prepares before calling the command. */
enum {
	CMD_JOB = 1 << 0,  /* takes -c/-s/-f/-o/--print-config and gets a validated job */
	CMD_TASK = 1 << 1, /* takes --task N */
	CMD_INI = 1 << 2,  /* takes --ini */
	CMD_RESULT = 1 << 3, /* with CMD_JOB: its one operand, a JSON result, stands for -c */
	CMD_SWEEP = 1 << 4,  /* takes --sweep SECTION.KEY=VALUES (sweep.h) */
	CMD_LIST = 1 << 5,   /* takes --list */
};

/* The shortest --interval. */
#define TFGB_INTERVAL_MIN_NS 100000000ull

struct tfgb {
	const char *prog;     /* argv[0] */
	const char *cmd;      /* the subcommand's name */
	struct job job;       /* valid when the command has CMD_JOB */
	const char *job_path; /* the job file read, or NULL for built-in defaults */
	char *job_text;       /* its text, read once (input.h); NULL with job_path */
	size_t job_len;
	FILE *out;            /* the report: stdout, or output.file once opened */
	int quiet, verbose;
	int task;             /* --task N, or -1 */
	int ini;              /* --ini */
	int list;             /* --list */
	uint64_t interval_ns; /* --interval: report each interval; 0 off */
	int ndjson;           /* --ndjson: JSON lines, intervals as they end */
	int argc;             /* operands left after the options */
	char **argv;
};

/* The report stream: stdout, or output.file opened (and truncated) on the
 * first call.  NULL, with the error printed, if it cannot be opened. */
FILE *tfgb_out(struct tfgb *t);

/* The directory holding the running binary (a source tree's man pages
 * and models): 0, or -1. */
int tfgb_exe_dir(char *buf, size_t len);

/* Prints "tfgb: <message>" on stderr. */
void tfgb_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Subcommands, one file each. */
int cmd_genpayload(struct tfgb *t);
int cmd_serve(struct tfgb *t);
int cmd_latency(struct tfgb *t);
int cmd_bandwidth(struct tfgb *t);
int cmd_throughput(struct tfgb *t);
int cmd_train(struct tfgb *t);
int cmd_rerun(struct tfgb *t);
int cmd_compare(struct tfgb *t);

/* JSON results read back (cmd_rerun.c). */

/* 1 when the text's first non-blank byte is '{' (a JSON result, never a
 * job file), else 0. */
int rerun_is_result(const char *text);
/* Parses a tfgb JSON result's text (len bytes, NUL-terminated, as read
 * from path): its "benchmark" and its "job" text without output.file and
 * output.series (running it never writes over them), each malloc'd
 * (either pointer may be NULL).  0, or -1 with a one-line err naming the
 * file. */
int rerun_read(const char *path, const char *text, size_t len, char **benchmark,
               char **job_text, char *err, size_t errlen);
/* The secret keys the result's run set but its "job" leaves out
 * ("job_withheld", e.g. cluster.token), as "section.key, ..." in buf
 * (empty when none or unparsable). */
void rerun_withheld(const char *path, const char *text, size_t tlen, char *buf, size_t len);

#endif
