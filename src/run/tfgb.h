/* tfgb.h - what the dispatcher hands to every subcommand, and what the
 * run layer (src/run: the launcher, the session, worker control, the
 * collectors, the role dispatch of role.h) takes of it: the job, the
 * report stream, the process's rank, the exit statuses. */
#ifndef TFGB_H
#define TFGB_H

#include <signal.h>
#include <stdio.h>

#include "job.h"
#include "util.h"
#include "version.h"


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
	CMD_ARGS = 1 << 5,   /* parses its own options: argv[0] is its name, argc all */
	CMD_LIST = 1 << 6,   /* takes --list */
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
	int local_rank;       /* its rank among its launch's processes on this host:
	                       * its CPU set of an affinity list (place.h); 0 alone */
	const char *local_source; /* what says so, for messages; NULL when alone */
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

/* SIGINT and SIGTERM set tfgb_stop (util.h; no SA_RESTART: a blocking wait
 * returns at once); SIGPIPE is ignored, a closed peer is a call's error. */
void tfgb_catch_signals(void);

#endif
