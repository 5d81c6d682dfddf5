/* err.h - the one error-message type of tfgb.
 *
 * A function that can fail returns 0 or a negative value and, when the
 * caller passed a struct err, writes one line into it: lowercase, problem
 * first, ready to print after "tfgb: " (the commands print, never the
 * modules).  Every layer uses this type, from the option parser to the
 * commands, so a message can be handed up and prefixed with context without
 * copying it between buffers of different sizes.
 *
 * ERR_MAX bounds a message with its terminating NUL.  The longest composed
 * today (a plot input's path with its JSON error, a --sweep value with the
 * option parser's reason, a job file's name and line before a key's range)
 * fits in 700 bytes; a longer one is cut, never overrun.  This header
 * includes nothing of tfgb: it is the bottom of the include graph.
 */
#ifndef TFGB_ERR_H
#define TFGB_ERR_H

#include <stdarg.h>

#define ERR_MAX 1024

struct err {
	char msg[ERR_MAX];
};

/* Sets e's message from a printf format (cut to ERR_MAX - 1 bytes). */
void err_set(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, from a va_list (a function of printf's shape passing its own). */
void err_vset(struct err *e, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Puts a printf-formatted context before e's message: with fmt "%s: " and
 * "verbs", "no device" becomes "verbs: no device". */
void err_prefix(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds printf-formatted text after e's message. */
void err_append(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
