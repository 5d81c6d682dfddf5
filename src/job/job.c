/* job.c - the job model: the [job] and [server] keys, the composition of
 * its own sections (job_cluster.c, job_payload.c ...: each with its keys and
 * rules) and of those other modules declare, and the inih front end. */
#include "job.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "input.h"
#include "job_int.h"

static const char *const mode_names[] = {
	[MODE_NONSERIALIZED] = "non-serialized", [MODE_SERIALIZED] = "serialized",
	[MODE_TENSORFLOW] = "tensorflow", [MODE_TENSORFLOW + 1] = NULL};
LAST_IS(mode_names, MODE_TENSORFLOW);
/* [job] transport's values, filled by job_register in registry order */
static const char *transport_names[JOB_TRANSPORTS_MAX + 1];
static int transport_built[JOB_TRANSPORTS_MAX];
static const char *const rpc_names[] = {
	[RPC_ECHO] = "echo", [RPC_PUSH] = "push", [RPC_PULL] = "pull", [RPC_PULL + 1] = NULL};
LAST_IS(rpc_names, RPC_PULL);
static const char *const arrival_names[] = {
	[ARRIVAL_CONSTANT] = "constant", [ARRIVAL_POISSON] = "poisson", [ARRIVAL_POISSON + 1] = NULL};
LAST_IS(arrival_names, ARRIVAL_POISSON);
/* [job] allocator: glibc as shipped, glibc keeping freed memory (mallopt),
 * and three preloaded from Debian packages (alloc.h) */
static const char *const allocator_names[] = {
	[ALLOC_GLIBC] = "glibc", [ALLOC_GLIBC_KEPT] = "glibc-kept", [ALLOC_JEMALLOC] = "jemalloc",
	[ALLOC_TCMALLOC] = "tcmalloc", [ALLOC_MIMALLOC] = "mimalloc", [ALLOC_COUNT] = NULL};
LAST_IS(allocator_names, ALLOC_MIMALLOC);

/* [job]: what a run does; defaults follow Table 2 of the TF-gRPC-Bench paper. */
static const struct opt_def job_keys_job[] = {
	{"job", "mode", OPT_ENUM, J(mode), "non-serialized", .values = mode_names,
	 .help = "payload transfer mode: raw iovec bytes, protobuf-c tensors, or TensorFlow's zero-copy encoding"},
	{"job", "transport", OPT_ENUM, J(transport), "grpc", .values = transport_names,
	 .help = "how calls travel: gRPC core, plain TCP, or RDMA verbs"},
	{"job", "warmup", OPT_DURATION, J(warmup_ns), "2s", RANGE(0, 3600 * SEC),
	 .help = "time spent calling before measuring; its calls are discarded"},
	{"job", "duration", OPT_DURATION, J(duration_ns), "10s", RANGE(SEC / 100, 86400 * SEC),
	 .help = "length of the measured window (used when iterations = 0)"},
	{"job", "iterations", OPT_INT, J(iterations), "0", RANGE(0, 1000000000000ll),
	 .help = "measure exactly this many calls instead of a time window; 0 uses duration"},
	{"job", "repeat", OPT_INT, J(repeat), "1", RANGE(1, 1000),
	 .help = "times the measured window runs after the one warm-up; reports add mean, stddev, 95% CI"},
	{"job", "seed", OPT_INT, J(seed), "1", RANGE(0, INT64_MAX),
	 .help = "seed of the payload layout (scheme random) and of the buffer contents"},
	{"job", "rpc", OPT_ENUM, J(rpc), "push", .values = rpc_names,
	 .help = "throughput: Echo the payload, push it (Ack), or pull it from the PS (Pull)"},
	{"job", "rate", OPT_INT, J(rate), "0", RANGE(0, 10000000),
	 .help = "throughput: calls per second per worker, sent on schedule (open loop); 0 is closed loop"},
	{"job", "arrival", OPT_ENUM, J(arrival), "constant", .values = arrival_names,
	 .help = "open loop only: evenly spaced calls, or a Poisson process of the same mean rate"},
	{"job", "inflight", OPT_INT, J(inflight), "1", RANGE(1, 1024),
	 .help = "calls kept outstanding per connection (bandwidth, throughput)"},
	{"job", "timeout", OPT_DURATION, J(timeout_ns), "10s", RANGE(SEC / 1000, 3600 * SEC),
	 .help = "longest wait for a reply, a connection or a server start before the run fails"},
	{"job", "verify", OPT_BOOL, J(verify), "no",
	 .help = "check every echoed byte; otherwise only the first and last calls are checked"},
	{"job", "allocator", OPT_ENUM, J(allocator), "glibc-kept", .values = allocator_names,
	 .help = "the malloc of every tfgb process of the run; see ALLOCATOR"},
	{0},
};

/* [server]: what the servers accept; their TLS files are read by job_validate. */
static const struct opt_def server_keys[] = {
	{"server", "max_message", OPT_SIZE, J(max_message), "64MiB", .min = 1 * KIB, .max = 2 * GIB,
	 .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_MAX_OPEN,
	 .help = "largest request or reply body the server accepts"},
	{"server", "threads", OPT_INT, J(threads), "0", RANGE(0, 256),
	 .help = "server threads; 0 is one for grpc, one per online CPU for socket"},
	{"server", "tls_cert", OPT_STRING, J(tls_cert), "",
	 .help = "grpc: PEM certificate chain the servers present; with tls_key, servers use TLS"},
	{"server", "tls_key", OPT_STRING, J(tls_key), "",
	 .help = "grpc: PEM private key of tls_cert"},
	{"server", "tls_ca", OPT_STRING, J(tls_ca), "",
	 .help = "grpc: PEM CA certificates the workers check servers with; set, workers use TLS"},
	{0},
};

static const struct job_core_section job_sec_job = {"job", job_keys_job, NULL};
static const struct job_core_section job_sec_server = {"server", server_keys, NULL};

/* The job model's own sections, each with its keys and rules in its own
 * file (job_payload.c ...).  Their order is the order of --print-config and
 * of tfgb.ini(5); registered sections follow. */
static const struct job_core_section *const core_sections[] = {
	&job_sec_job, &job_sec_cluster, &job_sec_payload, &job_sec_output, &job_sec_monitor,
	&job_sec_server, &job_sec_affinity, &job_sec_network, NULL,
};
/* The order their rules run in, so the order of a job's first error when it
 * has several (the payload's first: most jobs are about it). */
static const struct job_core_section *const rule_order[] = {
	&job_sec_payload, &job_sec_cluster, &job_sec_affinity, &job_sec_output, &job_sec_monitor,
	&job_sec_network, NULL,
};

/* The composed table: the core sections' keys, then each registered section's keys with
 * .off moved into struct job's sections[] (job_keys points here). */
static struct opt_def keys[JOB_MAX_KEYS + 1];
static size_t nkeys;
const struct opt_def *const job_keys = keys;

/* The registered sections and where each one's struct is in struct job. */
static struct {
	const struct job_section *s;
	size_t at;
} reg[JOB_SECTIONS_MAX];
static int nreg;
static size_t reg_bytes;
static int ntransports;

/* Every section name: the core ones in core_sections order, then reg[]. */
static const char *section_names[2 * JOB_SECTIONS_MAX + 1];
static int nsections;

/* Fills keys[] and section_names[] with the core sections, once.  They
 * fit: JOB_MAX_KEYS leaves room for the registered sections, and
 * job_register fails (a test catches it) when there is too little. */
static void core_init(void)
{
	if (nkeys)
		return;
	for (int s = 0; core_sections[s]; s++) {
		const struct opt_def *k = core_sections[s]->keys;
		section_names[nsections++] = core_sections[s]->name;
		for (; k->name && nkeys < JOB_MAX_KEYS; k++)
			keys[nkeys++] = *k;
	}
}
_Static_assert(JOB_SECTIONS_MAX <= sizeof section_names / sizeof section_names[0] / 2,
               "section_names holds the core sections and JOB_SECTIONS_MAX more");

int job_register(const char *transport, int built, const struct job_section *s)
{
	size_t n = 0, at;

	core_init();
	for (int i = 0; transport && i < ntransports; i++)
		if (!strcmp(transport_names[i], transport))
			transport = NULL; /* already a value */
	if (transport) {
		if (ntransports == JOB_TRANSPORTS_MAX)
			return -1;
		transport_built[ntransports] = built;
		transport_names[ntransports++] = transport;
	}
	if (!s)
		return 0;
	for (int i = 0; i < nreg; i++)
		if (reg[i].s == s)
			return 0;
	while (s->keys[n].name)
		n++;
	at = (reg_bytes + 15) & ~(size_t)15;
	if (nreg == JOB_SECTIONS_MAX || nkeys + n > JOB_MAX_KEYS || at + s->size > JOB_SECTION_BYTES)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(s->keys[i].section, s->name) || s->keys[i].off >= s->size)
			return -1; /* a row of another section, or outside its struct */
		keys[nkeys + i] = s->keys[i];
		keys[nkeys + i].off += offsetof(struct job, sections) + at;
	}
	nkeys += n;
	reg[nreg].s = s;
	reg[nreg++].at = at;
	reg_bytes = at + s->size;
	section_names[nsections++] = s->name;
	return 0;
}

const void *job_section_get(const struct job *j, const struct job_section *s)
{
	for (int i = 0; i < nreg; i++)
		if (reg[i].s == s)
			return j->sections + reg[i].at;
	return NULL;
}

void job_section_free(const struct job_section *s, void *data)
{
	for (size_t i = 0; s->keys[i].name; i++)
		opt_free_value(&s->keys[i], (char *)data + s->keys[i].off);
}

int job_section_defaults(const struct job_section *s, void *data)
{
	struct err why;

	memset(data, 0, s->size);
	for (size_t i = 0; s->keys[i].name; i++)
		if (opt_parse(&s->keys[i], (char *)data + s->keys[i].off, s->keys[i].def, 0, &why) < 0) {
			job_section_free(s, data);
			return -1;
		}
	return 0;
}

const char *const *job_section_names(void)
{
	core_init();
	return section_names;
}

const char *const *job_transport_names(void)
{
	return transport_names;
}

int job_transport_built(int t)
{
	return t >= 0 && t < ntransports && transport_built[t];
}

/* The section list as the errors show it: "[job], [cluster], ... or [verbs]". */
static void section_list(char *buf, size_t len, const char *last_sep)
{
	size_t o = 0;

	buf[0] = 0;
	for (int i = 0; i < nsections && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s[%s]",
		                      !i ? "" : i == nsections - 1 ? last_sep : ", ",
		                      section_names[i]);
}

const char *job_mode_name(int m) { return mode_names[m]; }
const char *job_transport_name(int t)
{
	return t >= 0 && t < ntransports ? transport_names[t] : "?";
}
const char *job_rpc_name(int r) { return rpc_names[r]; }
const char *job_arrival_name(int a) { return arrival_names[a]; }
const char *job_allocator_name(int a) { return allocator_names[a]; }

/* Keys that moved, for a message that says where to: old job files and the
 * job text of older JSON results are refused, never read half right. */
static const struct {
	const char *old, *now;
} moved_keys[] = {
	{"output.monitor", "monitor.interval"},
	{NULL, NULL},
};

size_t job_key_count(void)
{
	core_init();
	return nkeys;
}

static int key_index(const char *section, const char *name)
{
	core_init();
	for (size_t i = 0; job_keys[i].name; i++)
		if (!strcasecmp(job_keys[i].section, section) && !strcasecmp(job_keys[i].name, name))
			return (int)i;
	return -1;
}

const struct opt_def *job_key_find(const char *section, const char *name)
{
	int i = key_index(section, name);
	return i < 0 ? NULL : &job_keys[i];
}

static void *slot(struct job *j, const struct opt_def *d)
{
	return (char *)j + d->off;
}

int job_init(struct job *j)
{
	struct err why;

	memset(j, 0, sizeof *j);
	snprintf(j->src, sizeof j->src, "(defaults)");
	core_init();
	if (!ntransports) {
		/* a bug: [job] transport has no values yet */
		fprintf(stderr, "tfgb: job_init before tr_registry_init\n");
		return -1;
	}
	for (size_t i = 0; job_keys[i].name; i++) {
		const struct opt_def *d = &job_keys[i];
		if (opt_parse(d, slot(j, d), d->def, 0, &why) < 0) {
			job_free(j);
			return -1; /* a bad default is a bug; the tests catch it */
		}
	}
	return 0;
}

void job_free(struct job *j)
{
	for (size_t i = 0; job_keys[i].name; i++)
		opt_free_value(&job_keys[i], slot(j, &job_keys[i]));
	/* what job_validate read (tls.c) */
	free(j->tls.cert);
	free(j->tls.key);
	free(j->tls.ca);
	j->tls.cert = j->tls.key = j->tls.ca = NULL;
}

/* The place a value came from, for messages: "job.ini:7", "-s #2". */
static void origin_str(const struct job_origin *o, char *buf, size_t len)
{
	if (!o->file)
		snprintf(buf, len, "default");
	else if (o->line < 0) /* an option of its own: "-o" */
		snprintf(buf, len, "%s", o->file);
	else if (!strcmp(o->file, "-s"))
		snprintf(buf, len, "-s #%d", o->line);
	else
		snprintf(buf, len, "%s:%d", o->file, o->line);
}

/* Builds the list of "section.key" names for suggestions. */
static int suggest_key(const char *section, const char *name, char *out, size_t len)
{
	static char names[JOB_MAX_KEYS][64];
	const char *ptrs[JOB_MAX_KEYS + 1];
	char want[160];
	size_t n = 0;
	int at = -1;

	for (; job_keys[n].name; n++) {
		snprintf(names[n], sizeof names[n], "%s.%s", job_keys[n].section, job_keys[n].name);
		ptrs[n] = names[n];
	}
	ptrs[n] = NULL;
	/* a right key under the wrong section is a common slip: it beats
	 * any near miss of the full name */
	for (size_t i = 0; i < n && at < 0; i++)
		if (!strcasecmp(job_keys[i].name, name))
			at = (int)i;
	if (at < 0) {
		snprintf(want, sizeof want, "%s.%s", section, name);
		at = opt_suggest(want, ptrs);
	}
	if (at < 0)
		return -1;
	snprintf(out, len, "%s", names[at]);
	return 0;
}

/* Sets one key; `where` names the place for messages. */
static int set_key(struct job *j, const char *file, int line, const char *section,
                   const char *name, const char *value, int continuation, struct err *err)
{
	struct err why;
	char loc[JOB_NAME_MAX + 16], hint[80];
	struct job_origin o = {file, line};
	const struct opt_def *d;
	int idx, append = 0;

	origin_str(&o, loc, sizeof loc);
	idx = key_index(section, name);
	if (idx < 0) {
		char ss[68], sn[68], full[140];
		opt_shown(section, ss, sizeof ss, 1);
		opt_shown(name, sn, sizeof sn, 1);
		snprintf(full, sizeof full, "%s.%s", section, name);
		for (int i = 0; moved_keys[i].old; i++)
			if (!strcasecmp(moved_keys[i].old, full)) {
				err_set(err, "%s: %s is now %s (section [%.*s]); rename it", loc,
				       moved_keys[i].old, moved_keys[i].now,
				       (int)strcspn(moved_keys[i].now, "."), moved_keys[i].now);
				return -1;
			}
		if (suggest_key(section, name, hint, sizeof hint) == 0)
			err_set(err, "%s: unknown key '%s.%s'; did you mean '%s'?", loc, ss, sn, hint);
		else
			err_set(err, "%s: unknown key '%s.%s'", loc, ss, sn);
		return -1;
	}
	d = &job_keys[idx];
	if (file && j->origin[idx].file == file && strcmp(file, "-s")) {
		if (!continuation) {
			err_set(err, "%s: %s.%s is set twice (first on line %d)", loc, d->section,
			       d->name, j->origin[idx].line);
			return -1;
		}
		if (!(d->flags & OPT_LIST_APPEND)) {
			err_set(err, "%s: %s.%s takes one value; only list keys continue on indented lines",
			       loc, d->section, d->name);
			return -1;
		}
		append = 1;
	}
	if (opt_parse(d, slot(j, d), value, append, &why) < 0) {
		char shown[104];
		if (d->flags & OPT_SECRET)
			snprintf(shown, sizeof shown, "(%zu characters, not shown)", strlen(value));
		else
			opt_shown(value, shown, sizeof shown, 1);
		err_set(err, "%s: %s.%s = %s: %s", loc, d->section, d->name, shown, why.msg);
		return -1;
	}
	if (!append)
		j->origin[idx] = o;
	return 0;
}

/* inih reads through this so that we know line numbers (Debian's inih has
 * no INI_HANDLER_LINENO), see lines longer than its INI_MAX_LINE instead of
 * misparsing them, and check section names even for empty sections. */
struct reader {
	struct job *job;
	const char *file;
	const char *p;      /* next unread byte of the text */
	int line;           /* number of the line last handed to inih */
	int indented;       /* that line starts with white space */
	int after_key;      /* a key came since the last [section]: inih then
	                     * takes an indented line as a continuation */
	int failed;         /* an error is in err, found on line fail_line */
	int fail_line;
	struct err *err;
};

static char *reader_next(char *str, int num, void *stream)
{
	struct reader *r = stream;
	const char *nl, *s;
	size_t len, body;

	if (r->failed || !*r->p)
		return NULL;
	nl = strchr(r->p, '\n');
	len = nl ? (size_t)(nl - r->p) + 1 : strlen(r->p);
	body = len - (nl ? 1 : 0);
	if (body && r->p[body - 1] == '\r')
		body--;
	r->line++;
	/* inih's buffer of num bytes holds the text, a newline and a NUL;
	 * the same limit with or without a final newline or a CR */
	if (body + 2 > (size_t)num) {
		err_set(r->err, "%s:%d: line is %zu characters long, more than inih's limit of %d; "
		       "split long lists over indented continuation lines",
		       r->file, r->line, body, num - 2);
		r->failed = 1;
		r->fail_line = r->line;
		return NULL;
	}
	memcpy(str, r->p, body);
	if (nl)
		str[body++] = '\n';
	str[body] = 0;
	r->p += len;
	r->indented = body && (str[0] == ' ' || str[0] == '\t');

	/* section headers: check the name here, so that an unknown empty
	 * section is still an error */
	s = str;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '[' && !(r->indented && r->after_key)) { /* else inih continues a value */
		char name[64];
		const char *e = strchr(s, ']');
		size_t n = e ? (size_t)(e - s - 1) : 0;
		int ok = 0;

		if (e && n < sizeof name) {
			memcpy(name, s + 1, n);
			name[n] = 0;
			for (int i = 0; section_names[i]; i++)
				ok |= !strcasecmp(section_names[i], name);
			if (!ok) {
				int at = opt_suggest(name, section_names);
				char list[ERR_MAX / 2];
				section_list(list, sizeof list, ", ");
				if (at >= 0)
					err_set(r->err, "%s:%d: unknown section '[%s]'; did you mean '[%s]'?",
					       r->file, r->line, name, section_names[at]);
				else
					err_set(r->err, "%s:%d: unknown section '[%s]'; sections are %s",
					       r->file, r->line, name, list);
				r->failed = 1;
				r->fail_line = r->line;
				return NULL;
			}
		}
		r->after_key = 0;
	}
	return str;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct reader *r = user;

	if (r->failed)
		return 0;
	if (!*section) {
		char list[ERR_MAX / 2];
		section_list(list, sizeof list, " or ");
		err_set(r->err, "%s:%d: key '%s' is outside any section; put it under %s",
		       r->file, r->line, name, list);
		r->failed = 1;
		r->fail_line = r->line;
		return 0;
	}
	if (set_key(r->job, r->file, r->line, section, name, value,
	            r->indented && r->after_key, r->err) < 0) {
		r->failed = 1;
		r->fail_line = r->line;
		return 0;
	}
	r->after_key = 1;
	return 1;
}

/* File names referenced by origins must outlive the job: keep them here.
 * Each load gets its own slot, as set_key tells "set twice in this load"
 * by the pointer: loading the same name again is not a duplicate.  Slots
 * are reused after JOB_LOADS_MAX loads (only tests load that many). */
#define JOB_LOADS_MAX 64
static const char *intern_name(const char *name)
{
	static char names[JOB_LOADS_MAX][JOB_NAME_MAX];
	static int next;
	char *slot_name = names[next];

	next = (next + 1) % JOB_LOADS_MAX;
	snprintf(slot_name, JOB_NAME_MAX, "%s", name);
	return slot_name;
}

int job_load_string(struct job *j, const char *name, const char *text, struct err *err)
{
	struct reader r = {.job = j, .file = intern_name(name), .p = text, .err = err};
	int rc;

	rc = ini_parse_stream(reader_next, &r, handler, &r);
	/* inih goes on after a line it cannot parse: the first error wins */
	if (r.failed && !(rc > 0 && rc < r.fail_line))
		return -1;
	if (rc > 0) {
		err_set(err, "%s:%d: cannot parse this line; expected '[section]', 'key = value' "
		       "or a comment starting with ';' or '#'", r.file, rc);
		return -1;
	}
	if (rc < 0) {
		err_set(err, "%s: out of memory while parsing", r.file);
		return -1;
	}
	snprintf(j->src, sizeof j->src, "%s", name);
	return 0;
}

int job_load_text(struct job *j, const char *name, const char *text, size_t len,
                  struct err *err)
{
	if (len > JOB_TEXT_MAX) {
		err_set(err, "job file '%s' is too large (over %u MiB)", name, JOB_TEXT_MAX >> 20);
		return -1;
	}
	if (strlen(text) != len) {
		err_set(err, "job file '%s' contains a NUL byte; is it a text file?", name);
		return -1;
	}
	return job_load_string(j, name, text, err);
}

int job_load_file(struct job *j, const char *path, struct err *err)
{
	char *text;
	size_t len;
	int rc;

	if (input_read(path, "job file", JOB_TEXT_MAX, JOB_TEXT_MAX, &text, &len, err) < 0)
		return -1;
	rc = job_load_text(j, path, text, len, err);
	free(text);
	return rc;
}

int job_override(struct job *j, const char *kv, int pos, struct err *err)
{
	char section[64], name[64], shown[104], ss[68];
	const char *dot = strchr(kv, '.'), *eq = strchr(kv, '=');
	size_t sl, nl;

	opt_shown(kv, shown, sizeof shown, 1);
	if (!dot || !eq || dot > eq) {
		err_set(err, "-s #%d: '%s' is not SECTION.KEY=VALUE (e.g. -s payload.iovecs=4)", pos, shown);
		return -1;
	}
	sl = (size_t)(dot - kv);
	nl = (size_t)(eq - dot - 1);
	while (nl && isspace((unsigned char)dot[nl]))
		nl--;
	if (!sl || !nl || sl >= sizeof section || nl >= sizeof name) {
		err_set(err, "-s #%d: '%s' is not SECTION.KEY=VALUE (e.g. -s payload.iovecs=4)", pos, shown);
		return -1;
	}
	memcpy(section, kv, sl);
	section[sl] = 0;
	memcpy(name, dot + 1, nl);
	name[nl] = 0;
	if (key_index(section, name) < 0) {
		int at = opt_suggest(section, section_names);
		opt_shown(section, ss, sizeof ss, 1);
		if (at < 0 || strcasecmp(section_names[at], section) != 0) {
			if (at >= 0)
				err_set(err, "-s #%d: unknown section '%s'; did you mean '%s'?", pos, ss,
				       section_names[at]);
			else
				err_set(err, "-s #%d: unknown section '%s'", pos, ss);
			return -1;
		}
	}
	eq++;
	while (isspace((unsigned char)*eq))
		eq++;
	{
		/* blanks around the value go, as inih strips them in files */
		size_t vl = strlen(eq);
		char *value;
		int rc;
		while (vl && isspace((unsigned char)eq[vl - 1]))
			vl--;
		if (!(value = strndup(eq, vl))) {
			err_set(err, "-s #%d: out of memory", pos);
			return -1;
		}
		rc = set_key(j, "-s", pos, section, name, value, 0, err);
		free(value);
		return rc;
	}
}

static const struct job_origin *origin_of(const struct job *j, const char *section,
                                          const char *name)
{
	return &j->origin[key_index(section, name)];
}

int job_key_set(const struct job *j, const char *section, const char *name)
{
	return origin_of(j, section, name)->file != NULL;
}

void job_key_option(struct job *j, const char *section, const char *name, const char *option)
{
	int i = key_index(section, name);

	if (i >= 0 && j->origin[i].file) {
		j->origin[i].file = option;
		j->origin[i].line = -1;
	}
}

void job_key_where(const struct job *j, const char *section, const char *name, char *buf,
                   size_t len)
{
	origin_str(origin_of(j, section, name), buf, len);
}

int job_key_err(const struct job *j, struct err *err, const char *section,
                const char *name, const char *fmt, ...)
{
	struct err msg;
	char loc[JOB_NAME_MAX + 16];
	const struct opt_def *d = job_key_find(section, name);
	va_list ap;

	origin_str(origin_of(j, section, name), loc, sizeof loc);
	va_start(ap, fmt);
	vsnprintf(msg.msg, sizeof msg.msg, fmt, ap);
	va_end(ap);
	{
		/* the value as in a job file, but on one line and shortened:
		 * lists wrap onto indented lines */
		char val[128] = "", *full = NULL;
		size_t flen = 0, o = 0;
		FILE *f = open_memstream(&full, &flen);
		if (f) {
			opt_format(d, (const char *)j + d->off, f);
			if (fclose(f) != 0) {
				free(full);
				full = NULL;
			}
		}
		for (const char *p = full; p && *p; p++) {
			if (o + 4 >= sizeof val) {
				memcpy(val + o, "...", 4);
				break;
			}
			if (*p == '\n') {
				val[o++] = ' ';
				while (p[1] == ' ' || p[1] == '\t')
					p++;
			} else {
				val[o++] = *p;
				val[o] = 0;
			}
		}
		free(full);
		err_set(err, "%s: %s.%s = %s: %s", loc, section, name, val, msg.msg);
	}
	return -1;
}

int job_key_layer(const struct job *j, const char *section, const char *name)
{
	const struct job_origin *o = origin_of(j, section, name);

	return !o->file ? 0 : strcmp(o->file, "-s") && o->line >= 0 ? 1 : 2;
}

int job_check_keys(struct job *j, struct err *err)
{
	for (int i = 0; rule_order[i]; i++)
		if (rule_order[i]->check(j, err) < 0)
			return -1;
	for (int i = 0; i < nreg; i++)
		if (reg[i].s->check && reg[i].s->check(j, j->sections + reg[i].at, err) < 0)
			return -1;
	return 0;
}
