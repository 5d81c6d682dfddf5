/* input.h - reading a whole input file (a job file, a JSON result) once,
 * whatever kind of file its name gives.
 *
 * A job may come from a regular file, a pipe, a FIFO, /dev/stdin, a shell's
 * process substitution <(...) or, named "-", standard input.  A pipe can be
 * read once only, so the file is read here exactly once, into memory, and
 * everything after (JSON detection, parsing, --print-config, sweeps, the
 * children's memfds) works on that text.
 */
#ifndef TFGB_INPUT_H
#define TFGB_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* How long a pipe, FIFO or device may stay silent (no byte, no end of file)
 * before the read is given up: a FIFO nobody writes to ends with an error
 * naming the file instead of a hang. */
#define INPUT_WAIT_NS (10ull * 1000000000ull)

/* Reads the whole of `path` ("-": standard input, left open) into a
 * malloc'd, NUL-terminated *text of *len bytes (the text may itself hold
 * NUL bytes: the caller checks).  At most `max` bytes, or `json_max` when
 * the text is a JSON object (its first non-blank byte '{': a result); more
 * is an error.  A terminal is refused (a job typed by hand has no end a
 * benchmark can wait for).  `what` names the kind of file in messages
 * ("job file", "result").  0, or -1 with one line in err naming the file. */
int input_read(const char *path, const char *what, size_t max, size_t json_max, char **text,
               size_t *len, struct err *err);

/* The same, with the silence allowed given (tests use a short one). */
int input_read_wait(const char *path, const char *what, size_t max, size_t json_max,
                    uint64_t wait_ns, char **text, size_t *len, struct err *err);

#endif
