/* sweep.c - `--sweep SECTION.KEY=VALUES`: one child run per value, one row each.
 *
 * Why child processes: each value is a complete, ordinary run of this
 * binary with its own job, so every row has a full JSON result that `tfgb
 * rerun` can reproduce, and a run's state (transport, PS, monitor) never
 * leaks into the next one.  The children run one after another, never side
 * by side: a sweep measures the key, not contention between its values.
 * The spec's parser is sweep_spec.c.
 */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster.h"
#include "json.h"
#include "jsonr.h"
#include "report.h"
#include "tfgb.h"
#include "util.h"
#include "validate.h"

/* ---- one child run ---- */


struct run {
	pid_t pid;
	int fd;           /* the child's stdout */
	char *out;        /* all it wrote */
	size_t len;
	int status;       /* from waitpid */
	int timed_out;
};

/* Starts `tfgb CMD -c /proc/self/fd/N ... -f json` on the job text. */
static int start_child(struct tfgb *t, const char *job, struct run *r)
{
	char jobpath[64], *argv[16];
	int pfd[2], mfd, argc = 0;

	if ((mfd = cluster_job_memfd(job, jobpath, sizeof jobpath)) < 0) {
		tfgb_error("%s: --sweep: cannot pass the job to a run: %s", t->cmd, strerror(-mfd));
		return -1;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		tfgb_error("%s: --sweep: cannot create a pipe: %s", t->cmd, strerror(errno));
		close(mfd);
		return -1;
	}
	argv[argc++] = "tfgb";
	argv[argc++] = (char *)t->cmd;
	argv[argc++] = "-c";
	argv[argc++] = jobpath;
	/* the report comes back on the pipe; a series file would be written
	 * over by every value, so the sweep refuses it up front */
	argv[argc++] = "-s";
	argv[argc++] = "output.file=";
	argv[argc++] = "-f";
	argv[argc++] = "json";
	if (t->quiet)
		argv[argc++] = "-q";
	for (int i = 0; i < t->verbose && i < 3; i++)
		argv[argc++] = "-v";
	argv[argc] = NULL;
	/* Ctrl-C comes to the sweep, which stops the run in order */
	r->pid = cluster_exec(&(struct cluster_exec){.cmd = t->cmd, .argv = argv,
	                                             .stdout_fd = pfd[1], .keep_fd = -1,
	                                             .sig_default = 1});
	if (r->pid < 0) {
		tfgb_error("%s: --sweep: cannot start a run: fork: %s", t->cmd, strerror(-r->pid));
		r->pid = -1;
		close(pfd[0]);
		close(pfd[1]);
		close(mfd);
		return -1;
	}
	close(pfd[1]);
	close(mfd);
	r->fd = pfd[0];
	return 0;
}

/* Reads the child's stdout to its end and reaps it.  On a signal the run's
 * process group gets SIGINT (the run stops and reports what it measured)
 * and `grace_ns` to finish; past the deadline it is killed. */
static int finish_child(struct tfgb *t, struct run *r, uint64_t deadline, uint64_t grace_ns)
{
	size_t cap = 0;
	int sent = 0, rc = 0;

	for (;;) {
		struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
		uint64_t now = now_ns();
		ssize_t n;

		if (tfgb_stop && !sent) {
			kill(-r->pid, SIGINT);
			sent = 1;
			if (deadline > now + grace_ns)
				deadline = now + grace_ns;
		}
		if (now >= deadline) {
			r->timed_out = 1;
			break;
		}
		if (poll(&pfd, 1, 100) <= 0)
			continue; /* EINTR: a signal, seen at the top */
		if (r->len + 65536 + 1 > cap) {
			char *more;
			if (cap > JSONR_MAX_LEN) {
				tfgb_error("%s: --sweep: a run wrote more than %u MiB", t->cmd,
				           JSONR_MAX_LEN >> 20);
				rc = -1;
				break;
			}
			cap = cap ? cap * 2 : 262144;
			if (!(more = realloc(r->out, cap))) {
				tfgb_error("%s: --sweep: out of memory", t->cmd);
				rc = -1;
				break;
			}
			r->out = more;
		}
		n = read(r->fd, r->out + r->len, cap - r->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		r->len += (size_t)n;
	}
	if (r->out)
		r->out[r->len] = 0;
	close(r->fd);
	r->fd = -1;
	/* its stdout is closed: it is exiting, or gets SIGKILL after 10 s */
	for (uint64_t end = now_ns() + 10ull * 1000000000; !r->timed_out && rc == 0;) {
		pid_t w = waitpid(r->pid, &r->status, WNOHANG);
		if (w == r->pid) {
			r->pid = 0;
			return 0;
		}
		if (now_ns() >= end) {
			tfgb_error("%s: --sweep: a run (pid %d) closed its output but did not exit "
			           "within 10 s; killed", t->cmd, (int)r->pid);
			break;
		}
		usleep(10000);
	}
	kill(-r->pid, SIGKILL);
	while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
		;
	r->pid = 0;
	return -1;
}

/* ---- the report ---- */

enum { B_LAT = 1, B_BW = 2, B_TP = 4, B_ALL = 7, B_TRAIN = 8 };

/* The text table's columns: each benchmark's main figures, from its JSON
 * (as written, or times `scale` to 3 decimals: a training step's time, kept
 * in microseconds, is shown in milliseconds as the train report shows it). */
static const struct col {
	const char *head, *path;
	int width;
	unsigned bench;
	double scale;
} text_cols[] = {
	{"steps", "calls", 12, B_TRAIN, 0},
	{"min_step_ms", "latency_us.min", 12, B_TRAIN, 1e-3},
	{"avg_step_ms", "latency_us.avg", 12, B_TRAIN, 1e-3},
	{"p50_step_ms", "latency_us.p50", 12, B_TRAIN, 1e-3},
	{"p99_step_ms", "latency_us.p99", 12, B_TRAIN, 1e-3},
	{"max_step_ms", "latency_us.max", 12, B_TRAIN, 1e-3},
	{"calls", "calls", 12, B_ALL, 0},
	{"min_us", "latency_us.min", 10, B_LAT, 0},
	{"avg_us", "latency_us.avg", 10, B_ALL, 0},
	{"p50_us", "latency_us.p50", 10, B_LAT, 0},
	{"p90_us", "latency_us.p90", 10, B_LAT, 0},
	{"p99_us", "latency_us.p99", 10, B_ALL, 0},
	{"p99.9_us", "latency_us.p999", 10, B_LAT, 0},
	{"max_us", "latency_us.max", 10, B_LAT, 0},
	{"stddev_us", "latency_us.stddev", 10, B_LAT, 0},
	{"bytes", "payload.bytes", 12, B_BW, 0},
	{"rpc/s", "rpc_per_s", 12, B_BW | B_TP, 0},
	{"MB/s", "MBps", 10, B_BW | B_TP, 0},
	{"MiB/s", "MiBps", 10, B_BW, 0},
	{"Gbit/s", "Gbps", 10, B_BW | B_TP, 0},
	{"slowest_rpc/s", "throughput.worker_rpc_per_s_min", 14, B_TP, 0},
	{"fastest_rpc/s", "throughput.worker_rpc_per_s_max", 14, B_TP, 0},
	{NULL, NULL, 0, 0, 0},
};

/* The CSV's columns after the swept key: those of the benchmark's own CSV
 * (REPORT_CSV_HEADER, in its order; check_sweep.c holds the two together). */
static const char *const csv_paths[] = {
	"benchmark", "transport", "mode", "payload.scheme", "payload.iovecs", "payload.bytes",
	"inflight", "warmup_s", "duration_s", "calls", "errors", "latency_us.min",
	"latency_us.avg", "latency_us.p50", "latency_us.p90", "latency_us.p99",
	"latency_us.p999", "latency_us.max", "latency_us.stddev", "rpc_per_s", "MBps", "MiBps",
	"serialization.encode_us", "serialization.decode_us", "serialization.sampled_calls",
	"status", NULL,
};

const char *const *sweep_csv_paths(void)
{
	return csv_paths;
}

/* A value of the result as text: a number exactly as the run wrote it, a
 * string decoded, "" for null or absent. */
static void field(const struct jsonr *j, const char *path, char *buf, size_t len)
{
	int i = jsonr_find(j, 0, path);

	buf[0] = 0;
	switch (jsonr_type(j, i)) {
	case JSONR_STRING:
		jsonr_str(j, i, buf, len);
		break;
	case JSONR_NUMBER:
	case JSONR_TRUE:
	case JSONR_FALSE:
		snprintf(buf, len, "%.*s", (int)(j->tok[i].end - j->tok[i].start),
		         j->text + j->tok[i].start);
		break;
	default:
		break;
	}
}

/* The swept value as a CSV or JSON number: bytes, seconds, or the integer. */
static void csv_value(const struct sweep *s, size_t i, char *buf, size_t len)
{
	if (s->key->type == OPT_DURATION)
		snprintf(buf, len, "%.9g", (double)s->val[i].v / 1e9);
	else if (sweep_numeric(s->key))
		snprintf(buf, len, "%lld", (long long)s->val[i].v);
	else
		snprintf(buf, len, "%s", s->val[i].text);
}

static void csv_field(FILE *f, const char *v)
{
	if (strpbrk(v, ",\"\n")) {
		fputc('"', f);
		for (; *v; v++) {
			if (*v == '"')
				fputc('"', f);
			fputc(*v, f);
		}
		fputc('"', f);
	} else {
		fputs(v, f);
	}
}

static unsigned bench_of(const char *cmd)
{
	return !strcmp(cmd, "latency") ? B_LAT : !strcmp(cmd, "bandwidth") ? B_BW :
	       !strcmp(cmd, "train") ? B_TRAIN : B_TP;
}

static int key_width(const struct sweep *s)
{
	int w = (int)strlen(s->name) + 1;

	for (size_t i = 0; i < s->n; i++)
		if ((int)strlen(s->val[i].text) > w)
			w = (int)strlen(s->val[i].text);
	return w;
}

/* Text: the header (from the first result) before the first row. */
static void text_row(struct tfgb *t, const struct sweep *s, size_t i, const struct jsonr *j,
                     FILE *f)
{
	unsigned b = bench_of(t->cmd);
	int kw = key_width(s);
	char v[256], tr[64], mode[64], title[128];

	if (i == 0) {
		field(j, "title", title, sizeof title);
		field(j, "transport", tr, sizeof tr);
		field(j, "mode", mode, sizeof mode);
		fprintf(f, "# %s, sweep of %s: %zu values (tfgb %s)\n", title, s->name, s->n,
		        TFGB_VERSION);
		fprintf(f, "# transport %s, mode %s; every run's full result: -f json\n", tr, mode);
		fprintf(f, "#%*s", kw - 1, s->name);
		for (const struct col *c = text_cols; c->head; c++)
			if (c->bench & b)
				fprintf(f, " %*s", c->width, c->head);
		fputc('\n', f);
	}
	fprintf(f, "%*s", kw, s->val[i].text);
	for (const struct col *c = text_cols; c->head; c++)
		if (c->bench & b) {
			field(j, c->path, v, sizeof v);
			if (c->scale && *v)
				snprintf(v, sizeof v, "%.3f", strtod(v, NULL) * c->scale);
			fprintf(f, " %*s", c->width, *v ? v : "-");
		}
	field(j, "status", v, sizeof v);
	if (strcmp(v, "ok"))
		fprintf(f, "  # %s", v);
	fputc('\n', f);
}

static void csv_row(const struct sweep *s, size_t i, const struct jsonr *j, FILE *f)
{
	char v[256];

	if (i == 0)
		fprintf(f, "%s,%s\n", s->name, REPORT_CSV_HEADER);
	csv_value(s, i, v, sizeof v);
	csv_field(f, v);
	for (const char *const *p = csv_paths; *p; p++) {
		field(j, *p, v, sizeof v);
		fputc(',', f);
		csv_field(f, v);
	}
	fputc('\n', f);
}

static void json_report(const struct sweep *s, char **out, const size_t *len, size_t done,
                        const char *status, FILE *f)
{
	struct json w;

	json_init(&w, f, 1);
	json_obj_begin(&w, NULL);
	json_u64(&w, "schema_version", REPORT_SCHEMA_VERSION);
	json_obj_begin(&w, "sweep");
	json_str(&w, "key", s->name);
	json_arr_begin(&w, "values");
	for (size_t i = 0; i < s->n; i++) {
		if (s->key->type == OPT_DURATION) {
			json_f64(&w, NULL, (double)s->val[i].v / 1e9, 9);
		} else if (sweep_numeric(s->key)) {
			json_i64(&w, NULL, s->val[i].v);
		} else {
			json_str(&w, NULL, s->val[i].text);
		}
	}
	json_arr_end(&w);
	json_str(&w, "unit", s->key->type == OPT_DURATION ? "s" : s->key->type == OPT_SIZE ?
	         "B" : "");
	json_u64(&w, "runs", done);
	json_str(&w, "status", status);
	json_obj_end(&w);
	json_arr_begin(&w, "results");
	for (size_t i = 0; i < done; i++) {
		size_t n = len[i];
		while (n && (out[i][n - 1] == '\n' || out[i][n - 1] == ' '))
			n--;
		json_raw(&w, NULL, out[i], n);
	}
	json_arr_end(&w);
	json_obj_end(&w);
	json_finish(&w);
}

/* ---- the driver ---- */

/* Applies value i to the job and checks the whole job.  0, or -1 with the
 * error printed. */
static int apply(struct job *j, const struct sweep *s, size_t i)
{
	char kv[SWEEP_TEXT_MAX + 160];
	struct err e;

	if (s->size) {
		/* one buffer of this size: a custom layout of one entry */
		snprintf(kv, sizeof kv, "payload.iovec=%s", s->val[i].text);
		if (job_override(j, "payload.scheme=custom", 1, &e) == 0 &&
		    job_override(j, kv, 1, &e) == 0 && job_override(j, "payload.iovecs=1", 1, &e) == 0 &&
		    job_validate(j, &e) == 0)
			return 0;
	} else {
		snprintf(kv, sizeof kv, "%s=%s", s->name, s->val[i].text);
		if (job_override(j, kv, 1, &e) == 0 && job_validate(j, &e) == 0)
			return 0;
	}
	/* the override's place says nothing to the user: name the sweep */
	tfgb_error("--sweep %s, value %s: %s", s->name, s->val[i].text,
	           strncmp(e.msg, "-s #1: ", 7) ? e.msg : e.msg + 7);
	return -1;
}

/* What --sweep refuses before any run: 0, or -1 (said). */
static int sweep_check(struct tfgb *t, struct sweep *s)
{
	struct job *j = &t->job;

	if (*j->series) {
		tfgb_error("%s: --sweep: output.series = %s would be written over by every run; "
		           "leave it empty (every run's resources are in its JSON result)", t->cmd,
		           j->series);
		return -1;
	}
	if (*j->hgrm) {
		tfgb_error("%s: --sweep: output.hgrm = %s would be written over by every run; "
		           "leave it empty (every run's histogram is in its JSON result)", t->cmd,
		           j->hgrm);
		return -1;
	}
	if (t->task >= 0) {
		tfgb_error("%s: --sweep runs whole benchmarks; it takes no --task", t->cmd);
		return -1;
	}
	/* every value, up front: nothing runs when any would be refused */
	for (size_t i = 0; i < s->n; i++)
		if (apply(j, s, i) < 0)
			return -1;
	return 0;
}

/* Starts the run of value i into r, with its deadline (UINT64_MAX for a
 * counted run).  TFGB_EXIT_OK or the status of the error it printed. */
static int start_run(struct tfgb *t, struct sweep *s, size_t i, struct run *r,
                     uint64_t *deadline)
{
	struct job *j = &t->job;
	char *text;
	int rc;

	if (apply(j, s, i) < 0) /* checked up front: not seen */
		return TFGB_EXIT_USAGE;
	if (!(text = job_ini_string(j))) {
		tfgb_error("%s: --sweep: out of memory", t->cmd);
		return TFGB_EXIT_FAIL;
	}
	if (t->verbose)
		fprintf(stderr, "tfgb: %s: --sweep %s = %s (%zu of %zu)\n", t->cmd, s->name,
		        s->val[i].text, i + 1, s->n);
	/* a timed run has a known length; a counted one (iterations) is
	 * bounded by its own per-call timeout */
	*deadline = UINT64_MAX;
	if (!j->iterations)
		*deadline = now_ns() + j->warmup_ns + j->duration_ns + 3 * j->timeout_ns +
		            60ull * 1000000000;
	rc = start_child(t, text, r) < 0 ? TFGB_EXIT_FAIL : TFGB_EXIT_OK;
	free(text);
	return rc;
}

/* Says why the run of value i gave no result (ok: it exited 0) and
 * returns the sweep's exit status; *status is the JSON document's. */
static int run_failed(struct tfgb *t, struct sweep *s, size_t i, const struct run *r, int ok,
                      const char **status)
{
	char how[96];

	if (r->timed_out)
		snprintf(how, sizeof how, "no result within its deadline; killed");
	else if (ok)
		snprintf(how, sizeof how, "its output is not a JSON result");
	else
		cluster_exit_text(r->status, how, sizeof how);
	if (tfgb_stop)
		tfgb_error("%s: --sweep interrupted at %s = %s (%zu of %zu values done)",
		           t->cmd, s->name, s->val[i].text, i, s->n);
	else
		tfgb_error("%s: --sweep stopped: the run of %s = %s failed (%s)", t->cmd,
		           s->name, s->val[i].text, how);
	*status = tfgb_stop ? "interrupted" : "failed";
	return !tfgb_stop && WIFEXITED(r->status) && WEXITSTATUS(r->status) == TFGB_EXIT_USAGE ?
	       TFGB_EXIT_USAGE : TFGB_EXIT_FAIL;
}

/* The results that came back: JSON documents kept for the one document
 * at the end, rows printed as they come. */
struct sweep_out {
	char **outs;  /* JSON: the results' documents, done of them */
	size_t *lens;
	size_t done;
	FILE *f;      /* the report, once opened */
	int format;   /* the job's, before any value applies */
};

/* Prints or keeps the result of value i (its document res, r->out taken
 * when kept): 0, or -1 when the report cannot be opened (said). */
static int keep_result(struct tfgb *t, const struct sweep *s, size_t i,
                       const struct jsonr *res, struct run *r, struct sweep_out *o)
{
	const int format = o->format;

	if (format != FMT_JSON && !o->f && !(o->f = tfgb_out(t)))
		return -1;
	if (format == FMT_TEXT)
		text_row(t, s, i, res, o->f);
	else if (format == FMT_CSV)
		csv_row(s, i, res, o->f);
	if (o->f)
		fflush(o->f);
	if (format == FMT_JSON) { /* kept for the one document at the end */
		o->outs[o->done] = r->out;
		o->lens[o->done] = r->len;
		r->out = NULL;
	}
	o->done++;
	return 0;
}

/* Runs value i and keeps its result: TFGB_EXIT_OK to go on, else the
 * sweep's exit status with *status the JSON document's. */
static int sweep_one(struct tfgb *t, struct sweep *s, size_t i, struct sweep_out *o,
                     const char **status)
{
	struct run r = {.fd = -1};
	struct jsonr res = {0};
	uint64_t deadline, grace = t->job.timeout_ns + 15ull * 1000000000;
	int ok, parsed, rc;

	if ((rc = start_run(t, s, i, &r, &deadline)) != TFGB_EXIT_OK)
		return rc;
	if (finish_child(t, &r, deadline, grace) < 0 && !r.timed_out) {
		free(r.out);
		*status = "failed";
		return TFGB_EXIT_FAIL;
	}
	ok = !r.timed_out && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
	parsed = r.out && jsonr_load(&res, r.out, r.len) == 0 &&
	         jsonr_type(&res, jsonr_find(&res, 0, "job")) == JSONR_STRING;
	/* an interrupted run still reports what it measured: keep its row */
	rc = parsed && keep_result(t, s, i, &res, &r, o) < 0 ? TFGB_EXIT_FAIL : TFGB_EXIT_OK;
	jsonr_free(&res);
	free(r.out);
	if (rc != TFGB_EXIT_OK || (ok && parsed))
		return rc;
	return run_failed(t, s, i, &r, ok, status);
}

int sweep_run(struct tfgb *t, struct sweep *s)
{
	const int format = t->job.format;
	struct sweep_out o = {.format = format};
	const char *status = "ok";
	int rc = TFGB_EXIT_OK;

	if (sweep_check(t, s) < 0)
		return TFGB_EXIT_USAGE;
	o.outs = calloc(s->n, sizeof *o.outs);
	o.lens = calloc(s->n, sizeof *o.lens);
	if (!o.outs || !o.lens) {
		tfgb_error("%s: --sweep: out of memory", t->cmd);
		free(o.outs);
		free(o.lens);
		return TFGB_EXIT_FAIL;
	}
	tfgb_catch_signals(); /* no SA_RESTART: poll() returns at once */
	tfgb_stop = 0;
	for (size_t i = 0; i < s->n && !tfgb_stop && rc == TFGB_EXIT_OK; i++)
		rc = sweep_one(t, s, i, &o, &status);
	if (tfgb_stop && rc == TFGB_EXIT_OK) {
		tfgb_error("%s: --sweep interrupted after %zu of %zu values", t->cmd, o.done, s->n);
		status = "interrupted";
		rc = TFGB_EXIT_FAIL;
	}
	/* JSON: one document, with every result that came back */
	if (format == FMT_JSON && (o.done || rc == TFGB_EXIT_OK)) {
		if ((o.f = tfgb_out(t)))
			json_report(s, o.outs, o.lens, o.done, status, o.f);
		else
			rc = TFGB_EXIT_FAIL;
	}
	for (size_t i = 0; i < s->n; i++)
		free(o.outs[i]);
	free(o.outs);
	free(o.lens);
	return rc;
}
