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
#include "cmd.h"
#include "json.h"
#include "jsonr.h"
#include "report.h"
#include "tfgb.h"
#include "train.h"
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
 * in microseconds, is shown in milliseconds as the train report shows it).
 * A result without `path` gives `alt` (times `alt_scale`): the all-reduce
 * strategy's training keeps its steps under "train", in milliseconds. */
static const struct col {
	const char *head, *path;
	int width;
	unsigned bench;
	double scale;
	const char *alt;
	double alt_scale;
} text_cols[] = {
	{"steps", "calls", 12, B_TRAIN, 0, "train.steps", 0},
	{"min_step_ms", "latency_us.min", 12, B_TRAIN, 1e-3, "train.step_ms.min", 1},
	{"avg_step_ms", "latency_us.avg", 12, B_TRAIN, 1e-3, "train.step_ms.mean", 1},
	{"p50_step_ms", "latency_us.p50", 12, B_TRAIN, 1e-3, "train.step_ms.p50", 1},
	{"p99_step_ms", "latency_us.p99", 12, B_TRAIN, 1e-3, "train.step_ms.p99", 1},
	{"max_step_ms", "latency_us.max", 12, B_TRAIN, 1e-3, "train.step_ms.max", 1},
	{"calls", "calls", 12, B_ALL, 0, NULL, 0},
	{"min_us", "latency_us.min", 10, B_LAT, 0, NULL, 0},
	{"avg_us", "latency_us.avg", 10, B_ALL, 0, NULL, 0},
	{"p50_us", "latency_us.p50", 10, B_LAT, 0, NULL, 0},
	{"p90_us", "latency_us.p90", 10, B_LAT, 0, NULL, 0},
	{"p99_us", "latency_us.p99", 10, B_ALL, 0, NULL, 0},
	{"p99.9_us", "latency_us.p999", 10, B_LAT, 0, NULL, 0},
	{"max_us", "latency_us.max", 10, B_LAT, 0, NULL, 0},
	{"stddev_us", "latency_us.stddev", 10, B_LAT, 0, NULL, 0},
	{"bytes", "payload.bytes", 12, B_BW, 0, NULL, 0},
	{"rpc/s", "rpc_per_s", 12, B_BW | B_TP, 0, NULL, 0},
	{"MB/s", "MBps", 10, B_BW | B_TP, 0, NULL, 0},
	{"MiB/s", "MiBps", 10, B_BW, 0, NULL, 0},
	{"Gbit/s", "Gbps", 10, B_BW | B_TP, 0, NULL, 0},
	{"slowest_rpc/s", "throughput.worker_rpc_per_s_min", 14, B_TP, 0, NULL, 0},
	{"fastest_rpc/s", "throughput.worker_rpc_per_s_max", 14, B_TP, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
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

static int field_has(const struct jsonr *j, const char *path)
{
	return jsonr_find(j, 0, path) >= 0;
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

/* Key k's column: its name (the first after '#') or its widest value. */
static int key_width(const struct sweep_grid *g, int k)
{
	const struct sweep *s = &g->key[k];
	int w = (int)strlen(s->name) + (k == 0);

	for (size_t i = 0; i < s->n; i++)
		if ((int)strlen(s->val[i].text) > w)
			w = (int)strlen(s->val[i].text);
	return w;
}

/* Whether key (section.key) is one of the grid's. */
static int swept(const struct sweep_grid *g, const char *key)
{
	for (int k = 0; k < g->nkeys; k++)
		if (!strcmp(g->key[k].name, key))
			return 1;
	return 0;
}

/* "a", "a x b", "a x b x c": the keys of the grid */
static void grid_names(const struct sweep_grid *g, char *buf, size_t len)
{
	buf[0] = 0;
	for (int k = 0; k < g->nkeys; k++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", k ? " x " : "", g->key[k].name);
}

/* "a = 1" for one key's sweep, "a = 1, b = 10ms" for point p of a grid */
static void point_text(const struct sweep_grid *g, size_t p, char *buf, size_t len)
{
	buf[0] = 0;
	for (int k = 0; k < g->nkeys; k++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s = %s", k ? ", " : "",
		         g->key[k].name, g->key[k].val[sweep_at(g, p, k)].text);
}

/* Text: the header (from the first result) before the first row; a
 * column per swept key, then the benchmark's. */
static void text_row(struct tfgb *t, const struct sweep_grid *g, size_t i, const struct jsonr *j,
                     FILE *f)
{
	unsigned b = bench_of(t->cmd);
	char v[256], tr[64], mode[64], title[128], names[3 * 140];

	if (i == 0) {
		field(j, "title", title, sizeof title);
		field(j, "transport", tr, sizeof tr);
		field(j, "mode", mode, sizeof mode);
		if (!*mode) /* the all-reduce strategy's steps have no mode */
			field(j, "train.strategy", mode, sizeof mode);
		grid_names(g, names, sizeof names);
		fprintf(f, "# %s, sweep of %s: %zu %s (tfgb %s)\n", title, names, g->n,
		        g->nkeys > 1 ? "points" : "values", TFGB_VERSION);
		/* the first run's, unless swept: then each row's is its own */
		fprintf(f, "# transport %s, %s %s; every run's full result: -f json\n",
		        swept(g, "job.transport") ? "swept" : tr, field_has(j, "mode") ? "mode" :
		        "strategy", swept(g, "job.mode") ? "swept" : mode);
		for (int k = 0; k < g->nkeys; k++)
			fprintf(f, k ? " %*s" : "#%*s", key_width(g, k) - !k, g->key[k].name);
		for (const struct col *c = text_cols; c->head; c++)
			if (c->bench & b)
				fprintf(f, " %*s", c->width, c->head);
		fputc('\n', f);
	}
	for (int k = 0; k < g->nkeys; k++)
		fprintf(f, k ? " %*s" : "%*s", key_width(g, k), g->key[k].val[sweep_at(g, i, k)].text);
	for (const struct col *c = text_cols; c->head; c++)
		if (c->bench & b) {
			double scale = c->scale;
			field(j, c->path, v, sizeof v);
			if (!*v && c->alt) {
				field(j, c->alt, v, sizeof v);
				scale = c->alt_scale;
			}
			if (scale && *v)
				snprintf(v, sizeof v, "%.3f", strtod(v, NULL) * scale);
			fprintf(f, " %*s", c->width, *v ? v : "-");
		}
	field(j, "status", v, sizeof v);
	if (strcmp(v, "ok"))
		fprintf(f, "  # %s", v);
	fputc('\n', f);
}

static void csv_row(const struct sweep_grid *g, size_t i, const struct jsonr *j, FILE *f)
{
	char v[256];

	for (int k = 0; i == 0 && k < g->nkeys; k++)
		fprintf(f, "%s,", g->key[k].name);
	if (i == 0)
		fprintf(f, "%s\n", REPORT_CSV_HEADER);
	for (int k = 0; k < g->nkeys; k++) {
		csv_value(&g->key[k], sweep_at(g, i, k), v, sizeof v);
		fputs(k ? "," : "", f);
		csv_field(f, v);
	}
	for (const char *const *p = csv_paths; *p; p++) {
		field(j, *p, v, sizeof v);
		fputc(',', f);
		csv_field(f, v);
	}
	fputc('\n', f);
}

/* Value i of s as JSON: seconds, bytes, the integer, or the text. */
static void json_value(struct json *w, const struct sweep *s, size_t i)
{
	if (s->key->type == OPT_DURATION)
		json_f64(w, NULL, (double)s->val[i].v / 1e9, 9);
	else if (sweep_numeric(s->key))
		json_i64(w, NULL, s->val[i].v);
	else
		json_str(w, NULL, s->val[i].text);
}

/* "key", "values" and "unit" of one swept key, into the open object. */
static void json_key(struct json *w, const struct sweep *s)
{
	json_str(w, "key", s->name);
	json_arr_begin(w, "values");
	for (size_t i = 0; i < s->n; i++)
		json_value(w, s, i);
	json_arr_end(w);
	json_str(w, "unit", s->key->type == OPT_DURATION ? "s" : s->key->type == OPT_SIZE ?
	         "B" : "");
}

/* A grid's keys and its points, each point its value of every key. */
static void json_grid(struct json *w, const struct sweep_grid *g)
{
	json_arr_begin(w, "keys");
	for (int k = 0; k < g->nkeys; k++) {
		json_obj_begin(w, NULL);
		json_key(w, &g->key[k]);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_arr_begin(w, "points");
	for (size_t p = 0; p < g->n; p++) {
		json_arr_begin(w, NULL);
		for (int k = 0; k < g->nkeys; k++)
			json_value(w, &g->key[k], sweep_at(g, p, k));
		json_arr_end(w);
	}
	json_arr_end(w);
}

static void json_report(const struct sweep_grid *g, char **out, const size_t *len, size_t done,
                        const char *status, FILE *f)
{
	struct json w;

	json_init(&w, f, 1);
	json_obj_begin(&w, NULL);
	json_u64(&w, "schema_version", REPORT_SCHEMA_VERSION);
	json_obj_begin(&w, "sweep");
	if (g->nkeys == 1)
		json_key(&w, &g->key[0]);
	else
		json_grid(&w, g);
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

/* The job error e of point p, naming the point (the override's place,
 * "-s #1", says nothing to the user). */
static void point_error(const struct sweep_grid *g, size_t p, const struct err *e)
{
	char pt[3 * (136 + SWEEP_TEXT_MAX)];
	const char *msg = strncmp(e->msg, "-s #1: ", 7) ? e->msg : e->msg + 7;

	if (g->nkeys == 1) {
		tfgb_error("--sweep %s, value %s: %s", g->key[0].name, g->key[0].val[p].text, msg);
	} else {
		point_text(g, p, pt, sizeof pt);
		tfgb_error("--sweep, point %s: %s", pt, msg);
	}
}

/* Sets value i of key s in the job: 0, or -1 with e set. */
static int apply_key(struct job *j, const struct sweep *s, size_t i, struct err *e)
{
	char kv[SWEEP_TEXT_MAX + 160];

	if (s->size) {
		/* one buffer of this size: a custom layout of one entry */
		snprintf(kv, sizeof kv, "payload.iovec=%s", s->val[i].text);
		return job_override(j, "payload.scheme=custom", 1, e) == 0 &&
		       job_override(j, kv, 1, e) == 0 &&
		       job_override(j, "payload.iovecs=1", 1, e) == 0 ? 0 : -1;
	}
	snprintf(kv, sizeof kv, "%s=%s", s->name, s->val[i].text);
	return job_override(j, kv, 1, e);
}

/* Applies point p to the job and checks the whole job.  0, or -1 with the
 * error printed. */
static int apply(struct job *j, const struct sweep_grid *g, size_t p)
{
	struct err e;
	int k = 0;

	while (k < g->nkeys && apply_key(j, &g->key[k], sweep_at(g, p, k), &e) == 0)
		k++;
	if (k == g->nkeys && job_validate(j, &e) == 0)
		return 0;
	point_error(g, p, &e);
	return -1;
}

/* What the command refuses of a job beyond job_validate, as its own run
 * does (role.h's check), asked here before the sweep starts rather than at
 * a point after the others ran: a [network] of a run of ranks
 * (train.strategy = allreduce) on the pair, whose link ranks cannot have;
 * a job.inflight other than 1 for latency.  0, or -1 with e set. */
static int cmd_fits(const struct tfgb *t, struct err *e)
{
	if (!strcmp(t->cmd, "train") && train_conf_of(&t->job)->strategy == TRAIN_ALLREDUCE)
		return job_net_ranks_fit(&t->job, e);
	if (!strcmp(t->cmd, "latency"))
		return latency_job_fits(&t->job, e);
	return 0;
}

/* cmd_fits of point p (applied): 0, or -1 (said). */
static int point_refused(const struct tfgb *t, const struct sweep_grid *g, size_t p)
{
	struct err e;

	if (cmd_fits(t, &e) == 0)
		return 0;
	point_error(g, p, &e);
	return -1;
}

/* What --sweep refuses before any run: 0, or -1 (said). */
static int sweep_check(struct tfgb *t, struct sweep_grid *g)
{
	struct job *j = &t->job;
	struct err e;

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
	/* the job as -c and -s gave it, then every point, up front: nothing
	 * runs when any would be refused */
	if (cmd_fits(t, &e) < 0) {
		tfgb_error("%s", e.msg);
		return -1;
	}
	for (size_t i = 0; i < g->n; i++)
		if (apply(j, g, i) < 0 || point_refused(t, g, i) < 0)
			return -1;
	return 0;
}

/* Starts the run of point i into r, with its deadline (UINT64_MAX for a
 * counted run).  TFGB_EXIT_OK or the status of the error it printed. */
static int start_run(struct tfgb *t, struct sweep_grid *g, size_t i, struct run *r,
                     uint64_t *deadline)
{
	struct job *j = &t->job;
	char *text, pt[3 * (136 + SWEEP_TEXT_MAX)];
	int rc;

	if (apply(j, g, i) < 0) /* checked up front: not seen */
		return TFGB_EXIT_USAGE;
	if (!(text = job_ini_string(j))) {
		tfgb_error("%s: --sweep: out of memory", t->cmd);
		return TFGB_EXIT_FAIL;
	}
	if (t->verbose) {
		point_text(g, i, pt, sizeof pt);
		fprintf(stderr, "tfgb: %s: --sweep %s (%zu of %zu)\n", t->cmd, pt, i + 1, g->n);
	}
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

/* Says why the run of point i gave no result (ok: it exited 0) and
 * returns the sweep's exit status; *status is the JSON document's. */
static int run_failed(struct tfgb *t, struct sweep_grid *g, size_t i, const struct run *r, int ok,
                      const char **status)
{
	char how[96], pt[3 * (136 + SWEEP_TEXT_MAX)];

	if (r->timed_out)
		snprintf(how, sizeof how, "no result within its deadline; killed");
	else if (ok)
		snprintf(how, sizeof how, "its output is not a JSON result");
	else
		cluster_exit_text(r->status, how, sizeof how);
	point_text(g, i, pt, sizeof pt);
	if (tfgb_stop)
		tfgb_error("%s: --sweep interrupted at %s (%zu of %zu %s done)", t->cmd, pt, i, g->n,
		           g->nkeys > 1 ? "points" : "values");
	else
		tfgb_error("%s: --sweep stopped: the run of %s failed (%s)", t->cmd, pt, how);
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
static int keep_result(struct tfgb *t, const struct sweep_grid *g, size_t i,
                       const struct jsonr *res, struct run *r, struct sweep_out *o)
{
	const int format = o->format;

	if (format != FMT_JSON && !o->f && !(o->f = tfgb_out(t)))
		return -1;
	if (format == FMT_TEXT)
		text_row(t, g, i, res, o->f);
	else if (format == FMT_CSV)
		csv_row(g, i, res, o->f);
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
static int sweep_one(struct tfgb *t, struct sweep_grid *g, size_t i, struct sweep_out *o,
                     const char **status)
{
	struct run r = {.fd = -1};
	struct jsonr res = {0};
	uint64_t deadline, grace = t->job.timeout_ns + 15ull * 1000000000;
	int ok, parsed, rc;

	if ((rc = start_run(t, g, i, &r, &deadline)) != TFGB_EXIT_OK)
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
	rc = parsed && keep_result(t, g, i, &res, &r, o) < 0 ? TFGB_EXIT_FAIL : TFGB_EXIT_OK;
	jsonr_free(&res);
	free(r.out);
	if (rc != TFGB_EXIT_OK || (ok && parsed))
		return rc;
	return run_failed(t, g, i, &r, ok, status);
}

int sweep_run(struct tfgb *t, struct sweep_grid *g)
{
	const int format = t->job.format;
	struct sweep_out o = {.format = format};
	const char *status = "ok";
	int rc = TFGB_EXIT_OK;

	if (sweep_check(t, g) < 0)
		return TFGB_EXIT_USAGE;
	o.outs = calloc(g->n, sizeof *o.outs);
	o.lens = calloc(g->n, sizeof *o.lens);
	if (!o.outs || !o.lens) {
		tfgb_error("%s: --sweep: out of memory", t->cmd);
		free(o.outs);
		free(o.lens);
		return TFGB_EXIT_FAIL;
	}
	tfgb_catch_signals(); /* no SA_RESTART: poll() returns at once */
	tfgb_stop = 0;
	for (size_t i = 0; i < g->n && !tfgb_stop && rc == TFGB_EXIT_OK; i++)
		rc = sweep_one(t, g, i, &o, &status);
	if (tfgb_stop && rc == TFGB_EXIT_OK) {
		tfgb_error("%s: --sweep interrupted after %zu of %zu %s", t->cmd, o.done, g->n,
		           g->nkeys > 1 ? "points" : "values");
		status = "interrupted";
		rc = TFGB_EXIT_FAIL;
	}
	/* JSON: one document, with every result that came back */
	if (format == FMT_JSON && (o.done || rc == TFGB_EXIT_OK)) {
		if ((o.f = tfgb_out(t)))
			json_report(g, o.outs, o.lens, o.done, status, o.f);
		else
			rc = TFGB_EXIT_FAIL;
	}
	for (size_t i = 0; i < g->n; i++)
		free(o.outs[i]);
	free(o.outs);
	free(o.lens);
	return rc;
}
