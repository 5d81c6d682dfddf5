/* srvself.c - a server's own figures: its samples in a ring, the runs that
 * announced themselves, and the Info reply that hands them out (srvinfo.h).
 *
 * The sampler is a monitor in ring mode (monitor.h): a thread of its own
 * that takes the monitor's lock only to publish a sample.  The runs table
 * has a lock of its own.  Both are taken by Info calls alone, never on the
 * path of Echo, Ack, Pull or the tensor methods.
 */
#include "srvinfo.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfgb.pb-c.h"
#include "bebuf.h"
#include "job.h"
#include "monitor.h"
#include "util.h"

struct srvself_run {
	uint64_t id;
	uint64_t begin_ns, end_ns; /* end 0: not ended (counted until begin + span) */
	uint64_t span_ns;
};

struct srvself {
	struct monitor *mon;      /* NULL: it does not sample itself */
	const unsigned char *info; /* the plain ServerInfo */
	size_t info_len;
	pthread_mutex_t lock;     /* runs */
	struct srvself_run runs[SRVSELF_RUNS];
	/* the transport's counters (tr_ops.serve_counters), or NULL */
	void (*tc_fn)(void *ctx, struct tr_counters *out);
	void *tc_ctx;
};

void srvself_counters(struct srvself *s, void (*fn)(void *ctx, struct tr_counters *out),
                      void *ctx)
{
	if (!s)
		return;
	s->tc_fn = fn;
	s->tc_ctx = ctx;
}

/* Appends field 15, the transport's counters, to the reply of len bytes
 * in out: the new length, or len when they do not fit. */
static size_t reply_counters(struct srvself *s, size_t len, unsigned char *out, size_t cap)
{
	Tfgb__V1__ServerInfo m = TFGB__V1__SERVER_INFO__INIT;
	struct tr_counters tc;
	unsigned char blob[sizeof tc + 64];
	struct wbuf w = {blob, 0, sizeof blob, 0};

	s->tc_fn(s->tc_ctx, &tc);
	tr_counters_put(&w, &tc);
	m.resources_why = (char *)"";
	m.transport_counters.data = blob;
	m.transport_counters.len = w.len;
	if (w.over || len + tfgb__v1__server_info__get_packed_size(&m) > cap)
		return len;
	return len + tfgb__v1__server_info__pack(&m, out + len);
}

int srvself_new(const struct job *j, int ps, const unsigned char *info, size_t info_len,
                struct srvself **out)
{
	struct srvself *s = calloc(1, sizeof *s);
	struct monitor_target me = {"ps", ps, getpid()};
	int rc;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->info = info;
	s->info_len = info_len;
	pthread_mutex_init(&s->lock, NULL);
	if (j->monitor_ns) {
		rc = monitor_new(&s->mon, &me, 1, j->monitor_ns, SRVSELF_SAMPLES);
		if (rc == 0) {
			monitor_select(s->mon, job_monitor_mask(j));
			monitor_ring(s->mon);
			rc = monitor_start(s->mon);
		}
		if (rc < 0) {
			srvself_free(s);
			return rc;
		}
	}
	*out = s;
	return 0;
}

void srvself_free(struct srvself *s)
{
	if (!s)
		return;
	monitor_free(s->mon);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Notes a run's begin or end at `at` (its slot, or the oldest one's) and,
 * for an end, counts the runs whose time overlaps [from, at]: the asker's
 * included. */
static uint32_t runs_note(struct srvself *s, unsigned kind, uint64_t id, uint64_t span,
                          uint64_t from, uint64_t at)
{
	struct srvself_run *r = NULL;
	uint32_t n = 0;

	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < SRVSELF_RUNS && !r; i++)
		if (s->runs[i].id == id && s->runs[i].begin_ns)
			r = &s->runs[i];
	for (int i = 0; i < SRVSELF_RUNS && !r; i++)
		if (!s->runs[i].begin_ns)
			r = &s->runs[i];
	if (!r) { /* the one that began longest ago goes */
		r = &s->runs[0];
		for (int i = 1; i < SRVSELF_RUNS; i++)
			if (s->runs[i].begin_ns < r->begin_ns)
				r = &s->runs[i];
	}
	if (kind == SRVINFO_BEGIN || r->id != id || !r->begin_ns)
		*r = (struct srvself_run){.id = id, .span_ns = span,
		                          .begin_ns = kind == SRVINFO_BEGIN ? at : from};
	if (kind == SRVINFO_END) {
		r->end_ns = at;
		for (int i = 0; i < SRVSELF_RUNS; i++) {
			const struct srvself_run *o = &s->runs[i];
			uint64_t end = o->end_ns ? o->end_ns : o->begin_ns + o->span_ns;
			n += o->begin_ns && o->begin_ns <= at && end >= from;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* The fields of its own figures over [from, to], appended to the plain
 * ServerInfo in out (protobuf fields of one message concatenate): the
 * length of the whole, or 0 when even the plain one does not fit. */
static size_t reply_self(struct srvself *s, uint32_t runs, uint64_t from, uint64_t to,
                         unsigned char *out, size_t cap)
{
	Tfgb__V1__ServerInfo m = TFGB__V1__SERVER_INFO__INIT;
	unsigned char *series = NULL;
	struct monitor *w = NULL;
	long n = 0;
	int rc;

	if (s->info_len > cap)
		return 0;
	memcpy(out, s->info, s->info_len);
	m.samples_itself = s->mon != NULL;
	m.runs = runs;
	m.window_ns = to - from;
	m.resources_why = (char *)"";
	if (s->mon && (rc = monitor_window(s->mon, from, to, SRVSELF_REPLY_SAMPLES, &w)) < 0)
		m.resources_why = (char *)(rc == -ENOENT ? "fewer than two of its samples in the "
		                           "window (shorter than two monitor intervals, or older than "
		                           "its ring)" : "out of memory");
	if (w && !(series = malloc(cap)))
		m.resources_why = (char *)"out of memory";
	else if (w && (n = monitor_pack(w, series, cap)) < 0)
		m.resources_why = (char *)"its series does not fit the transport's reply";
	m.resources.data = series;
	m.resources.len = n > 0 ? (size_t)n : 0;
	if (s->info_len + tfgb__v1__server_info__get_packed_size(&m) > cap) {
		/* a transport with a smaller reply (verbs: its slot) */
		m.resources.len = 0;
		m.resources_why = (char *)"its series does not fit the transport's reply";
	}
	n = (long)(s->info_len + tfgb__v1__server_info__pack(&m, out + s->info_len));
	free(series);
	monitor_free(w);
	return (size_t)n;
}

/* The reply of kind-less requests and of kinds BEGIN and END (see
 * srvself_reply): 0 for the plain ServerInfo. */
static size_t reply_kind(struct srvself *s, const unsigned char *req, size_t req_len,
                         unsigned char *out, size_t cap)
{
	struct rbuf b = {req, req_len, 0, 0};
	uint64_t now = now_ns(), id, span, ago, to, from;
	unsigned kind;
	uint32_t runs;

	if (req_len != SRVINFO_REQ_LEN || be_get(&b, 4) != SRVINFO_REQ_MAGIC)
		return 0; /* the plain ServerInfo */
	kind = (unsigned)be_get(&b, 4);
	id = be_get(&b, 8);
	span = be_get(&b, 8);
	ago = be_get(&b, 8);
	if (kind != SRVINFO_BEGIN && kind != SRVINFO_END)
		return 0;
	to = ago < now ? now - ago : 0;
	from = span < to ? to - span : 0;
	runs = runs_note(s, kind, id, span, from, kind == SRVINFO_BEGIN ? now : to);
	if (kind == SRVINFO_BEGIN)
		return 0;
	return reply_self(s, runs, from, to, out, cap);
}

size_t srvself_reply(void *arg, const unsigned char *req, size_t req_len, unsigned char *out,
                     size_t cap)
{
	struct srvself *s = arg;
	size_t len = reply_kind(s, req, req_len, out, cap);

	if (!s->tc_fn || !out)
		return len;
	if (!len) { /* the plain one, with the counters after it */
		if (s->info_len > cap)
			return 0;
		memcpy(out, s->info, s->info_len);
		len = s->info_len;
	}
	return reply_counters(s, len, out, cap);
}
