/* resultfile.h - a JSON result file read back: parsed and checked, never
 * run (tfgb rerun, compare and plot read it).
 *
 * A result file is what `-f json` writes: one result ("tfgb", "benchmark",
 * "job" and its figures), a sweep's document ("sweep" {key, values} and
 * "results", one result per value; a grid's, "sweep" {keys: [{key, values},
 * ...], points: [[a value per key], ...]} and "results", one per point), or
 * NDJSON whose last line is the
 * result (--interval --ndjson).  The reader checks its "schema_version"
 * and the types of the keys its readers use, so that a wrong file is one
 * line of error naming it, not a wrong figure.
 *
 * Errors: -1 with a one-line err naming the file.  Ownership: a struct
 * resultfile owns its parse (and, from resultfile_open, its text) until
 * resultfile_close.  Threading: none shared; a resultfile is one thread's.
 */
#ifndef TFGB_RESULTFILE_H
#define TFGB_RESULTFILE_H

#include <stddef.h>

#include "err.h"
#include "jsonr.h"

/* The "schema_version" this tfgb reads: the one it writes (report.h's
 * REPORT_SCHEMA_VERSION, which the commands check is the same). */
#define RESULTFILE_SCHEMA_VERSION 1

/* The longest value of a result rerun and compare show; longer ones are
 * cut. */
#define RESULTFILE_SHOWN_MAX 160

struct resultfile {
	const char *path;
	char *text;  /* resultfile_open's, else NULL (the caller's) */
	size_t len;
	struct jsonr r;
	int root;    /* the result's object: 0, or results[0] of a sweep's document */
	int sweep;   /* a sweep's document: "sweep" {key, values} and "results" */
	int nkeys;   /* a sweep's keys: 1, or a grid's 2 to RESULTFILE_GRID_KEYS_MAX */
};

#define RESULTFILE_GRID_KEYS_MAX 3

/* Checks a result's text (len bytes, NUL-terminated, read from path; not
 * owned by res): a result, or a sweep's document (res->sweep, res->root its
 * first result).  0, or -1 with err. */
int resultfile_parse(struct resultfile *res, const char *path, const char *text, size_t len,
                     struct err *err);
/* Reads the file once (input.h: a pipe or FIFO too) and checks it, as
 * resultfile_parse.  0, or -1 with err. */
int resultfile_open(struct resultfile *res, const char *path, struct err *err);
/* Frees what parse or open kept. */
void resultfile_close(struct resultfile *res);

/* A result's "schema_version" (at the document's top): 0 when it is the
 * one this tfgb reads (RESULTFILE_SCHEMA_VERSION), else -1 with err saying
 * what is wrong (absent, not an integer, another). */
int resultfile_check_version(const struct jsonr *r, const char *path, struct err *err);
/* Output of a run with --interval --ndjson is NDJSON: interval lines, then
 * the result on the last line.  The offset of the result's text: that last
 * line when the text starts with an interval line, else 0. */
size_t resultfile_ndjson(const char *text, size_t len);

/* A scalar at path under token `from` as text into buf ("" when absent,
 * "null" for null). */
void resultfile_text_at(const struct resultfile *res, int from, const char *path, char *buf,
                        size_t len);
/* A grid's "sweep.keys" (2 to RESULTFILE_GRID_KEYS_MAX of {"key",
 * "values"}) and "sweep.points" (each an array of a scalar per key): the
 * number of points, or -1 when the shape is not that. */
int resultfile_grid_points(const struct jsonr *r);
/* A sweep's key k (< res->nkeys): the token of the object holding its
 * "key", "values" and "unit" ("sweep" itself for one key).  Result i's
 * value of key k: its token. */
int resultfile_sweep_key(const struct resultfile *res, int k);
int resultfile_sweep_value(const struct resultfile *res, size_t i, int k);
/* "a", or a grid's "a x b"; result i's point, "a = 1" or "a = 1, b = 0.01"
 * (each value as the document writes it). */
void resultfile_sweep_names(const struct resultfile *res, char *buf, size_t len);
void resultfile_sweep_point(const struct resultfile *res, size_t i, char *buf, size_t len);

/* The number at path under token `from`: 0, or -1 when there is none. */
int resultfile_num_at(const struct jsonr *r, int from, const char *path, double *v);

/* A figure at path under token `from` (a result; where names it in a
 * sweep, "results[3]", or is NULL): 0 when it is a number not below 0,
 * null or absent; else -1 with err naming file, where, path and what it is
 * (a string, an object, a negative number). */
int resultfile_figure_check(const struct jsonr *r, int from, const char *path, const char *file,
                            const char *where, struct err *err);

/* The figures of a result that the reader checks are numbers (or null)
 * and compare shows: a number at path, shown times scale with digits
 * decimals. */
struct resultfile_figure {
	const char *label, *path;
	double scale;
	int digits;
};
extern const struct resultfile_figure resultfile_figures[];
extern const size_t resultfile_nfigures;

#endif
