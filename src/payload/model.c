/* model.c - model descriptions: parsing, totals, placement over PSs. */
#include "model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef TFGB_DATADIR
#define TFGB_DATADIR "/usr/local/share/tfgb"
#endif

static const char *const kind_names[MODEL_KIND_COUNT] = {
	[MODEL_TRAINABLE] = "trainable",
	[MODEL_STATISTIC] = "statistic",
};
static const char *const place_names[] = {
	[MODEL_PLACE_ROUND_ROBIN] = "round_robin",
	[MODEL_PLACE_GREEDY] = "greedy",
};

const char *model_kind_name(int kind) { return kind_names[kind]; }
const char *model_place_name(int how) { return place_names[how]; }

static int fail(struct err *err, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct err *err, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(err, fmt, ap);
	va_end(ap);
	if (line > 0)
		err_prefix(err, "%s:%d: ", file, line);
	else
		err_prefix(err, "%s: ", file);
	return -1;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->var[i].name);
	free(m->var);
	memset(m, 0, sizeof *m);
}

int model_class(uint64_t bytes)
{
	if (bytes < CAT_MEDIUM_MIN)
		return CAT_SMALL;
	if (bytes < CAT_LARGE_MIN)
		return CAT_MEDIUM;
	return bytes <= CAT_LARGE_MAX ? CAT_LARGE : MODEL_CLASS_OVER;
}

/* The next whitespace-separated word of [*p, end) as a NUL-terminated
 * string in buf (at most cap - 1 bytes); NULL at the end of the line. */
static const char *word(const char **p, const char *end, char *buf, size_t cap, int *toolong)
{
	const char *s = *p, *w;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end)
		return *p = s, NULL;
	w = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	*p = s;
	if ((size_t)(s - w) >= cap) {
		*toolong = 1;
		return NULL;
	}
	memcpy(buf, w, (size_t)(s - w));
	buf[s - w] = '\0';
	return buf;
}

static int parse_dims(struct model_var *v, const char *s, const char *file, int line,
                      struct err *err)
{
	const char *shape = s; /* quoted as written */

	v->ndims = 0;
	v->elems = 1;
	if (strcmp(s, "scalar") == 0)
		return 0;
	for (;;) {
		char *end;
		unsigned long long d;

		if (*s < '0' || *s > '9')
			return fail(err, file, line, "shape '%s': dimension %d is %s; want dimensions "
			            "like 3,3,64,128 (each 1 .. 2147483648) or 'scalar'", shape,
			            v->ndims + 1, *s == ',' || !*s ? "empty" : "not a number");
		errno = 0;
		d = strtoull(s, &end, 10);
		if (errno || d < 1 || d > (1ull << 31))
			return fail(err, file, line, "shape '%s': dimension %.*s out of range "
			            "[1, 2147483648]", shape, (int)(end - s), s);
		if (v->ndims == MODEL_DIMS_MAX)
			return fail(err, file, line, "more than %d dimensions", MODEL_DIMS_MAX);
		v->dims[v->ndims++] = (uint32_t)d;
		if (__builtin_mul_overflow(v->elems, (uint64_t)d, &v->elems))
			return fail(err, file, line, "more than 2^64 elements");
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return fail(err, file, line, "shape '%s': '%c' where ',' or the end was "
			            "expected", shape, *end);
		s = end + 1;
	}
}

static int parse_var(struct model *m, const char *p, const char *end, const char *file,
                     int line, struct err *err)
{
	char name[MODEL_NAME_MAX], dt[16], shape[128], kind[16], extra[2];
	int toolong = 0, d, k;
	struct model_var *v;
	uint64_t bytes;

	if (!word(&p, end, name, sizeof name, &toolong) ||
	    !word(&p, end, dt, sizeof dt, &toolong) ||
	    !word(&p, end, shape, sizeof shape, &toolong) ||
	    !word(&p, end, kind, sizeof kind, &toolong) || toolong) {
		if (toolong)
			return fail(err, file, line, "a field is too long (names up to %d bytes)",
			            MODEL_NAME_MAX - 1);
		return fail(err, file, line, "want 'NAME DTYPE SHAPE KIND' "
		            "(e.g. conv1/kernel float32 7,7,3,64 trainable)");
	}
	if (word(&p, end, extra, sizeof extra, &toolong) || toolong)
		return fail(err, file, line, "more than 4 fields");
	for (d = 0; d < 4 && strcmp(dt, job_dtype_name(d)) != 0; d++)
		;
	if (d == 4)
		return fail(err, file, line, "dtype '%s': want uint8, float32, float16 or int64", dt);
	for (k = 0; k < MODEL_KIND_COUNT && strcmp(kind, kind_names[k]) != 0; k++)
		;
	if (k == MODEL_KIND_COUNT)
		return fail(err, file, line, "kind '%s': want trainable or statistic", kind);
	for (size_t i = 0; name[i]; i++)
		if ((unsigned char)name[i] < 0x21 || name[i] == 0x7f)
			return fail(err, file, line, "variable name with a control character");
	if (m->n == MODEL_VARS_MAX)
		return fail(err, file, line, "more than %d variables", MODEL_VARS_MAX);

	if (m->n % 64 == 0) {
		struct model_var *nv = realloc(m->var, (m->n + 64) * sizeof *nv);
		if (!nv)
			return fail(err, file, line, "out of memory");
		m->var = nv;
	}
	v = &m->var[m->n];
	memset(v, 0, sizeof *v);
	v->ps = -1;
	v->dtype = d;
	v->kind = k;
	if (parse_dims(v, shape, file, line, err) < 0)
		return -1;
	if (__builtin_mul_overflow(v->elems, (uint64_t)job_dtype_size(d), &bytes) ||
	    bytes > MODEL_VAR_BYTES_MAX)
		return fail(err, file, line, "variable '%s' is larger than %llu bytes", name,
		            (unsigned long long)MODEL_VAR_BYTES_MAX);
	v->bytes = bytes;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->var[i].name, name) == 0)
			return fail(err, file, line, "variable '%s' listed twice", name);
	if (!(v->name = strdup(name)))
		return fail(err, file, line, "out of memory");
	m->n++;
	m->elems[k] += v->elems; /* <= 2^16 variables of <= 2^30 bytes: no overflow */
	m->bytes[k] += v->bytes;
	m->count[k]++;
	return 0;
}

int model_parse(struct model *m, const char *file, const char *text, size_t len,
                struct err *err)
{
	const char *p = text, *end = text + len;
	int line = 0;

	memset(m, 0, sizeof *m);
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;

		if (!eol)
			eol = end;
		line++;
		q = p;
		while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (memchr(p, '\0', (size_t)(eol - p))) {
			fail(err, file, line, "a NUL byte: not a model description");
			goto bad;
		}
		if (q < eol && *q != '#') {
			const char *e = eol;

			while (e > q && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			if (!m->name[0]) {
				char kw[8], nm[MODEL_NAME_MAX], extra[2];
				int toolong = 0;
				const char *r = q;

				if (!word(&r, e, kw, sizeof kw, &toolong) || strcmp(kw, "model") != 0 ||
				    !word(&r, e, nm, sizeof nm, &toolong) || toolong ||
				    word(&r, e, extra, sizeof extra, &toolong)) {
					fail(err, file, line, "the first line must be 'model NAME'");
					goto bad;
				}
				memcpy(m->name, nm, strlen(nm) + 1);
			} else if (parse_var(m, q, e, file, line, err) < 0) {
				goto bad;
			}
		}
		p = eol + (eol < end);
	}
	if (!m->name[0]) {
		fail(err, file, 0, "no 'model NAME' line: not a model description");
		goto bad;
	}
	if (m->n == 0) {
		fail(err, file, 0, "model '%s' lists no variable", m->name);
		goto bad;
	}
	return 0;
bad:
	model_free(m);
	return -1;
}

static int read_all(const char *path, char **out, size_t *len, struct err *err)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0;
	struct stat st;

	if (!f)
		return fail(err, path, 0, "cannot open: %s", strerror(errno));
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		fclose(f);
		return fail(err, path, 0, "not a regular file");
	}
	if (!(buf = malloc(MODEL_FILE_MAX + 1))) {
		fclose(f);
		return fail(err, path, 0, "out of memory");
	}
	n = fread(buf, 1, MODEL_FILE_MAX + 1, f);
	if (ferror(f)) {
		fail(err, path, 0, "cannot read: %s", strerror(errno));
		goto bad;
	}
	if (n > MODEL_FILE_MAX) {
		fail(err, path, 0, "larger than %u bytes", MODEL_FILE_MAX);
		goto bad;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
bad:
	fclose(f);
	free(buf);
	return -1;
}

int model_load(struct model *m, const char *name, const char *tree, struct err *err)
{
	char path[4096];
	size_t nl = strlen(name);
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(m, 0, sizeof *m);
	if (nl == 0)
		return fail(err, "model", 0, "empty model name");
	if (strchr(name, '/') || (nl > 6 && strcmp(name + nl - 6, ".model") == 0)) {
		snprintf(path, sizeof path, "%s", name);
	} else {
		struct stat st;
		int found = 0;

		for (size_t i = 0; i < nl; i++)
			if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
			      name[i] == '_' || name[i] == '-'))
				return fail(err, name, 0, "not a shipped model name ([a-z0-9_-]) "
				            "nor a path (a path has a '/' or ends in .model)");
		if (tree && (size_t)snprintf(path, sizeof path, "%s/conf/models/%s.model", tree,
		                             name) < sizeof path && stat(path, &st) == 0)
			found = 1;
		if (!found && (size_t)snprintf(path, sizeof path, "%s/models/%s.model",
		                               TFGB_DATADIR, name) < sizeof path &&
		    stat(path, &st) == 0)
			found = 1;
		if (!found)
			return fail(err, name, 0, "no such shipped model (looked in %s%s%s/models); "
			            "shipped: alexnet, inception_v3, mnist_mlp, mobilenet_v1, resnet50, vgg16",
			            tree ? tree : "", tree ? "/conf/models and " : "", TFGB_DATADIR);
	}
	if (read_all(path, &text, &len, err) < 0)
		return -1;
	rc = model_parse(m, path, text, len, err);
	free(text);
	return rc;
}

int model_place(struct model *m, int nps, enum model_place how, uint64_t *ps_bytes)
{
	uint64_t load[MODEL_PS_MAX] = {0};

	if (nps < 1 || nps > MODEL_PS_MAX)
		return -1;
	for (size_t i = 0; i < m->n; i++) {
		int ps = 0;

		if (how == MODEL_PLACE_ROUND_ROBIN) {
			ps = (int)(i % (size_t)nps);
		} else {
			for (int k = 1; k < nps; k++)
				if (load[k] < load[ps])
					ps = k;
		}
		m->var[i].ps = ps;
		load[ps] += m->var[i].bytes;
	}
	if (ps_bytes)
		memcpy(ps_bytes, load, (size_t)nps * sizeof *ps_bytes);
	return 0;
}
