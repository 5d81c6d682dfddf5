/* json.h - a small typed JSON writer.
 *
 * Calls name their type (json_u64, json_str, ...), so callers never pass a
 * format string.  The writer tracks nesting (at most JSON_DEPTH levels) and
 * commas; keys are given to the value calls and ignored inside arrays.
 * Output is compact unless `pretty` is set, one key per line then.
 */
#ifndef TFGB_JSON_H
#define TFGB_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_DEPTH 16

struct json {
	FILE *f;
	int depth;
	int pretty;
	int first[JSON_DEPTH];  /* nothing written yet at this level */
	int in_array[JSON_DEPTH];
};

void json_init(struct json *w, FILE *f, int pretty);
/* key is NULL at the top level and inside arrays */
void json_obj_begin(struct json *w, const char *key);
void json_obj_end(struct json *w);
void json_arr_begin(struct json *w, const char *key);
void json_arr_end(struct json *w);
void json_str(struct json *w, const char *key, const char *s);
void json_u64(struct json *w, const char *key, uint64_t v);
void json_i64(struct json *w, const char *key, int64_t v);
/* finite values with `digits` decimals; NaN and infinities become null */
void json_f64(struct json *w, const char *key, double v, int digits);
void json_bool(struct json *w, const char *key, int v);
void json_null(struct json *w, const char *key);
/* a value already written as JSON text (len bytes, checked by the caller),
 * copied as it is: a child's whole result inside a sweep's report */
void json_raw(struct json *w, const char *key, const char *text, size_t len);
/* ends the document with a newline */
void json_finish(struct json *w);

#endif
