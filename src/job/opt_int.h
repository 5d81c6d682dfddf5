/* opt_int.h - the scanning helpers opt.c shares with opt_value.c.  Only
 * those two files include it. */
#ifndef TFGB_OPT_INT_H
#define TFGB_OPT_INT_H

#include <stdint.h>

/* s past any leading white space. */
const char *opt_skip_ws(const char *s);

/* Parses a leading unsigned decimal integer; *end is set past it.
 * -1 when s starts with no digit or the number is past UINT64_MAX. */
int opt_u64_prefix(const char *s, uint64_t *out, const char **end);

#endif
