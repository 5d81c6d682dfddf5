/* err.c - the one error-message type of tfgb. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void err_vset(struct err *e, const char *fmt, va_list ap)
{
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
}

void err_set(struct err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, fmt, ap);
	va_end(ap);
}

void err_prefix(struct err *e, const char *fmt, ...)
{
	char old[ERR_MAX];
	va_list ap;
	int n;

	memcpy(old, e->msg, sizeof old);
	old[sizeof old - 1] = 0;
	va_start(ap, fmt);
	n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - (size_t)n, "%s", old);
}

void err_append(struct err *e, const char *fmt, ...)
{
	size_t n = strnlen(e->msg, sizeof e->msg - 1);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
	va_end(ap);
}
