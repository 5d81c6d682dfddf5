/* sweep_spec.c - the spec of `--sweep SECTION.KEY=VALUES` (sweep.h): a
 * range or a list, each value through the key's own parser and range, and
 * payload.size, the sweep's own key.  No run here: sweep.c runs them.
 */
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "payload.h"

/* One value through the key's own parser: range-checked, then written back
 * as a job file writes it. */
static int parse_value(const struct opt_def *d, const char *text, struct sweep_value *out,
                       struct err *why)
{
	union {
		int64_t i;
		uint64_t u;
		int e;
		char *s;
	} slot;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	memset(&slot, 0, sizeof slot);
	if (opt_parse(d, &slot, text, 0, why) < 0)
		return -1;
	out->v = d->type == OPT_INT ? slot.i : d->type == OPT_SIZE || d->type == OPT_DURATION ?
	         (int64_t)slot.u : 0;
	f = open_memstream(&buf, &len);
	if (f) {
		opt_format(d, &slot, f);
		if (fclose(f) != 0) {
			free(buf);
			buf = NULL;
		}
	}
	opt_free_value(d, &slot);
	if (!buf) {
		err_set(why, "out of memory");
		return -1;
	}
	snprintf(out->text, sizeof out->text, "%s", buf);
	free(buf);
	return 0;
}

int sweep_numeric(const struct opt_def *d)
{
	return d->type == OPT_INT || d->type == OPT_SIZE || d->type == OPT_DURATION;
}

/* A step: a number of the key's type (an int may be negative), or *N / xN. */
static int parse_step(const struct opt_def *d, const char *s, int64_t *step, int64_t *factor)
{
	uint64_t u;

	*step = 0;
	*factor = 0;
	if (*s == '*' || *s == 'x')
		return opt_parse_int(s + 1, factor) < 0 || *factor < 2 || *factor > 1000 ? -1 : 0;
	if (d->type == OPT_INT)
		return opt_parse_int(s, step);
	if ((d->type == OPT_SIZE ? opt_parse_size(s, &u) : opt_parse_duration(s, &u)) < 0 ||
	    u > INT64_MAX)
		return -1;
	*step = (int64_t)u;
	return 0;
}

static int add_value(struct sweep *s, const char *text, struct err *why)
{
	struct err r;

	if (s->n == SWEEP_MAX) {
		err_set(why, "--sweep %s: more than %d values", s->name, SWEEP_MAX);
		return -1;
	}
	if (parse_value(s->key, text, &s->val[s->n], &r) < 0) {
		err_set(why, "--sweep %s: value '%.64s': %s", s->name, text, r.msg);
		return -1;
	}
	s->n++;
	return 0;
}

/* start:end:step, each of start and end in the key's range. */
static int parse_range(struct sweep *s, char *spec, struct err *why)
{
	const struct opt_def *d = s->key;
	char *a = spec, *b = strchr(a, ':'), *c = b ? strchr(b + 1, ':') : NULL, num[48];
	struct err r;
	struct sweep_value lo, hi;
	int64_t step, factor;
	uint64_t count;

	if (!sweep_numeric(d)) {
		err_set(why, "--sweep %s: start:end:step needs a numeric key (int, "
		         "size or duration); list this key's values with commas", s->name);
		return -1;
	}
	if (!b || !c || strchr(c + 1, ':')) {
		err_set(why, "--sweep %s=%.64s: a range is start:end:step "
		         "(e.g. payload.iovecs=2:10:2)", s->name, spec);
		return -1;
	}
	*b++ = 0;
	*c++ = 0;
	if (parse_value(d, a, &lo, &r) < 0) {
		err_set(why, "--sweep %s: start '%.64s': %s", s->name, a, r.msg);
		return -1;
	}
	if (parse_value(d, b, &hi, &r) < 0) {
		err_set(why, "--sweep %s: end '%.64s': %s", s->name, b, r.msg);
		return -1;
	}
	if (parse_step(d, c, &step, &factor) < 0 || (!factor && step == 0)) {
		err_set(why, "--sweep %s: step '%.64s' must be a %s other than 0, "
		         "or *N (N in [2, 1000]) to multiply", s->name, c,
		         d->type == OPT_INT ? "whole number" : d->type == OPT_SIZE ? "size" :
		         "duration");
		return -1;
	}
	if ((factor || step > 0) ? hi.v < lo.v : hi.v > lo.v) {
		err_set(why, "--sweep %s: end %s is %s start %s, so step %s gives "
		         "no value", s->name, hi.text, hi.v < lo.v ? "below" : "above", lo.text, c);
		return -1;
	}
	if (factor) {
		if (lo.v <= 0) {
			err_set(why, "--sweep %s: step %s multiplies, so start "
			         "must be above 0", s->name, c);
			return -1;
		}
		for (int64_t v = lo.v;; v *= factor) {
			snprintf(num, sizeof num, "%lld%s", (long long)v, d->type == OPT_DURATION ?
			         "ns" : "");
			if (add_value(s, num, why) < 0)
				return -1;
			if (v > hi.v / factor)
				return 0;
		}
	}
	/* the distance in unsigned arithmetic: no overflow on any int64 pair */
	count = (step > 0 ? (uint64_t)hi.v - (uint64_t)lo.v : (uint64_t)lo.v - (uint64_t)hi.v) /
	        (step > 0 ? (uint64_t)step : -(uint64_t)step) + 1;
	if (count > SWEEP_MAX) {
		err_set(why, "--sweep %s: %s:%s:%s is %llu values, more than %d",
		         s->name, lo.text, hi.text, c, (unsigned long long)count, SWEEP_MAX);
		return -1;
	}
	for (uint64_t i = 0; i < count; i++) {
		int64_t v = (int64_t)((uint64_t)lo.v + i * (uint64_t)step);
		snprintf(num, sizeof num, "%lld%s", (long long)v,
		         d->type == OPT_DURATION ? "ns" : "");
		if (add_value(s, num, why) < 0)
			return -1;
	}
	return 0;
}

/* v1,v2,...: any scalar key. */
static int parse_list(struct sweep *s, char *spec, struct err *why)
{
	for (char *p = spec, *comma;; p = comma + 1) {
		char *e;
		comma = strchr(p, ',');
		if (comma)
			*comma = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strlen(p);
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = 0;
		if (!*p) {
			err_set(why, "--sweep %s: an empty value in the list", s->name);
			return -1;
		}
		if (add_value(s, p, why) < 0)
			return -1;
		if (!comma)
			return 0;
	}
}

/* payload.size: the size of the one buffer of a single-buffer payload, in
 * payload.iovec's range (apply() turns it into that key). */
static const struct opt_def size_key = {
	"payload", "size", OPT_SIZE, 0, "", .min = CAT_SMALL_MIN, .max = PAYLOAD_BUF_MAX,
	.flags = OPT_HAS_MIN | OPT_HAS_MAX,
	.help = "one buffer of this size (--sweep only)",
};

int sweep_parse(const char *spec, struct sweep *s, struct err *why)
{
	const char *eq = strchr(spec, '='), *dot = strchr(spec, '.');
	char section[64], name[64], *values;
	int rc;

	memset(s, 0, sizeof *s);
	if (!eq || !dot || dot > eq || dot == spec || eq == dot + 1 ||
	    (size_t)(dot - spec) >= sizeof section || (size_t)(eq - dot - 1) >= sizeof name) {
		err_set(why, "--sweep '%.64s' is not SECTION.KEY=VALUES "
		         "(e.g. payload.iovecs=2:10:2 or payload.scheme=uniform,skew)", spec);
		return -1;
	}
	memcpy(section, spec, (size_t)(dot - spec));
	section[dot - spec] = 0;
	memcpy(name, dot + 1, (size_t)(eq - dot - 1));
	name[eq - dot - 1] = 0;
	s->size = !strcmp(section, "payload") && !strcmp(name, "size");
	s->key = s->size ? &size_key : job_key_find(section, name);
	if (!s->key) {
		err_set(why, "--sweep: unknown key '%s.%s' (keys are listed in "
		         "tfgb.ini(5))", section, name);
		return -1;
	}
	snprintf(s->name, sizeof s->name, "%s.%s", s->key->section, s->key->name);
	if (!eq[1]) {
		err_set(why, "--sweep %s: no values after '='", s->name);
		return -1;
	}
	if (s->key->type == OPT_ENUM_LIST || s->key->type == OPT_SIZE_LIST ||
	    s->key->type == OPT_HOSTPORT_LIST) {
		err_set(why, "--sweep %s: a list key cannot be swept (its values "
		         "hold commas themselves)", s->name);
		return -1;
	}
	s->val = calloc(SWEEP_MAX, sizeof *s->val);
	values = strdup(eq + 1);
	if (!s->val || !values) {
		free(values);
		err_set(why, "--sweep: out of memory");
		return -1;
	}
	rc = strchr(values, ':') ? parse_range(s, values, why) : parse_list(s, values, why);
	free(values);
	return rc;
}

void sweep_free(struct sweep *s)
{
	free(s->val);
	s->val = NULL;
	s->n = 0;
}

/* payload.size sets these itself (sweep.c's apply): swept beside it, one
 * of the two settings would silently win */
static int size_clash(const struct sweep *a, const struct sweep *b)
{
	return a->size && !strcmp(b->key->section, "payload") &&
	       (!strcmp(b->key->name, "scheme") || !strcmp(b->key->name, "iovec") ||
	        !strcmp(b->key->name, "iovecs"));
}

int sweep_grid_add(struct sweep_grid *g, const char *spec, struct err *why)
{
	struct sweep *s = &g->key[g->nkeys];
	size_t n = 1;

	if (g->nkeys == SWEEP_KEYS_MAX) {
		err_set(why, "--sweep is given more than %d times: a grid sweeps 1 to %d keys",
		        SWEEP_KEYS_MAX, SWEEP_KEYS_MAX);
		return -1;
	}
	g->nkeys++; /* freed by sweep_grid_free, also after an error */
	if (sweep_parse(spec, s, why) < 0)
		return -1;
	for (int k = 0; k < g->nkeys - 1; k++) {
		if (!strcmp(g->key[k].name, s->name)) {
			err_set(why, "--sweep %s is given twice: a grid sweeps each key once "
			        "(list all its values in one --sweep)", s->name);
			return -1;
		}
		if (size_clash(s, &g->key[k]) || size_clash(&g->key[k], s)) {
			err_set(why, "--sweep %s and --sweep %s: payload.size sets payload.scheme, "
			        "payload.iovec and payload.iovecs itself; sweep one of the two",
			        g->key[k].name, s->name);
			return -1;
		}
	}
	for (int k = 0; k < g->nkeys; k++)
		n *= g->key[k].n; /* each at most SWEEP_MAX: no overflow in 3 */
	if (n > SWEEP_MAX) {
		char counts[64] = "";
		for (int k = 0; k < g->nkeys; k++)
			snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "%s%zu",
			         k ? " x " : "", g->key[k].n);
		err_set(why, "--sweep %s: the grid is %s = %zu points, more than %d (the product "
		        "of the keys' value counts is at most %d)", s->name, counts, n, SWEEP_MAX,
		        SWEEP_MAX);
		return -1;
	}
	g->n = n;
	return 0;
}

void sweep_grid_free(struct sweep_grid *g)
{
	for (int k = 0; k < g->nkeys; k++)
		sweep_free(&g->key[k]);
	g->nkeys = 0;
	g->n = 0;
}

size_t sweep_at(const struct sweep_grid *g, size_t p, int k)
{
	for (int i = g->nkeys - 1; i > k; i--)
		p /= g->key[i].n;
	return p % g->key[k].n;
}
