/* cmd_genpayload.c - `tfgb genpayload`: print the payload layout of a job. */
#include "cmd.h"

#include <inttypes.h>
#include <stdlib.h>

#include "json.h"
#include "payload.h"

static void print_text(const struct tfgb *t, const struct payload *p, FILE *f)
{
	fprintf(f, "# tfgb genpayload: scheme %s, seed %" PRIu64 ", %zu iovecs, %" PRIu64 " bytes\n",
	        job_scheme_name(t->job.scheme), p->seed, p->n, p->total);
	fprintf(f, "# small %zu, medium %zu, large %zu\n", p->count[CAT_SMALL],
	        p->count[CAT_MEDIUM], p->count[CAT_LARGE]);
	fprintf(f, "%7s  %-8s %12s %12s\n", "# index", "category", "size", "offset");
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "%7zu  %-8s %12" PRIu64 " %12" PRIu64 "\n", i, job_cat_name(p->buf[i].cat),
		        p->buf[i].len, p->buf[i].off);
	fprintf(f, "%7s  %-8s %12" PRIu64 "\n", "# total", "", p->total);
}

static void print_csv(const struct payload *p, FILE *f)
{
	fprintf(f, "index,category,size_bytes,offset_bytes\n");
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "%zu,%s,%" PRIu64 ",%" PRIu64 "\n", i, job_cat_name(p->buf[i].cat),
		        p->buf[i].len, p->buf[i].off);
}

static void print_json(const struct tfgb *t, const struct payload *p, FILE *f)
{
	struct json w;

	json_init(&w, f, 0);
	json_obj_begin(&w, NULL);
	json_str(&w, "scheme", job_scheme_name(t->job.scheme));
	json_u64(&w, "seed", p->seed);
	payload_json(&w, p);
	json_arr_begin(&w, "buffers");
	for (size_t i = 0; i < p->n; i++) {
		json_obj_begin(&w, NULL);
		json_u64(&w, "index", i);
		json_str(&w, "category", job_cat_name(p->buf[i].cat));
		json_u64(&w, "size", p->buf[i].len);
		json_u64(&w, "offset", p->buf[i].off);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
	json_finish(&w);
}

/* A [payload] section that pins this exact layout as a custom list. */
static int print_ini(const struct tfgb *t, const struct payload *p, FILE *f)
{
	const struct opt_def *d = job_key_find("payload", "iovec");
	struct opt_sizelist l = {.n = p->n, .cap = p->n};

	l.v = malloc((p->n ? p->n : 1) * sizeof *l.v);
	if (!l.v)
		return -1;
	for (size_t i = 0; i < p->n; i++)
		l.v[i] = p->buf[i].len;
	fprintf(f, "; pinned by 'tfgb genpayload --ini' from %s (scheme %s, seed %" PRIu64 ")\n",
	        t->job_path ? t->job_path : "the built-in defaults",
	        job_scheme_name(t->job.scheme), p->seed);
	fprintf(f, "[payload]\nscheme = custom\niovecs = %zu\niovec = ", p->n);
	opt_format(d, &l, f);
	fputc('\n', f);
	free(l.v);
	return 0;
}

int cmd_genpayload(struct tfgb *t)
{
	struct payload p;
	int rc = TFGB_EXIT_OK;

	if (payload_layout(&t->job, &p) < 0) {
		tfgb_error("genpayload: out of memory for %lld buffers", (long long)t->job.iovecs);
		return TFGB_EXIT_FAIL;
	}
	FILE *out = tfgb_out(t);

	if (!out) {
		payload_free(&p);
		return TFGB_EXIT_FAIL;
	}
	if (t->ini) {
		if (print_ini(t, &p, out) < 0) {
			tfgb_error("genpayload: out of memory");
			rc = TFGB_EXIT_FAIL;
		}
	} else if (t->job.format == FMT_JSON) {
		print_json(t, &p, out);
	} else if (t->job.format == FMT_CSV) {
		print_csv(&p, out);
	} else {
		print_text(t, &p, out);
	}
	payload_free(&p);
	return rc;
}
