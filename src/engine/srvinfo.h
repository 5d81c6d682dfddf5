/* srvinfo.h - who a server is: the Info call of tfgb.v1.Bench.
 *
 * A result names the malloc of every process it measured (alloc.h),
 * servers included, even one started by hand with another job.  The server
 * answers Info with a ServerInfo (proto/tfgb.proto) packed once when it
 * starts; a worker asks each PS once, before the warm-up, on a client and
 * connection of its own that it closes again, so that nothing of it
 * touches the measured connections (and a server that does not know Info,
 * which a socket server answers by closing the connection, breaks nothing).
 */
#ifndef TFGB_SRVINFO_H
#define TFGB_SRVINFO_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "place.h"
#include "transport.h"

struct monitor;
struct job;

struct srvinfo {
	struct alloc_info alloc;  /* name "" when not known */
	char version[32];         /* the server's tfgb version, or "" */
	char host[64];
	int64_t pid;              /* 0 when not known */
	struct place_seen place;  /* its CPUs, memory policy ("" when not known)
	                           * and node (-2 when not known) */
	char why[160];            /* why it is not known, or "" */
	/* its own figures, when asked for (SRVINFO_END): */
	int self;                 /* 1: it samples itself; 0: not, or an older server */
	uint32_t runs;            /* runs that overlapped the window, the asker's included */
	uint64_t window_ns;       /* the window it answered for */
	struct monitor *mon;      /* its samples over the window, or NULL (srvinfo_clear) */
	char res_why[120];        /* why mon is NULL, or "" */
	/* its transport's counters of its open connections but the asking one
	 * (ServerInfo.transport_counters), in every reply of a tfgb serve whose
	 * transport keeps them; tc_has 0: none in the reply (tc says why) */
	int tc_has;
	struct tr_counters tc;
};

/* Frees s->mon; accepts a zeroed srvinfo.  srvinfo_unpack and the
 * queries overwrite out whole: clear one that holds figures first. */
void srvinfo_clear(struct srvinfo *s);

/* An InfoRequest (proto/tfgb.proto): announces run_id, lasting at most
 * span_ns (SRVINFO_BEGIN), or asks the server's own figures over the span_ns
 * that ended ago_ns before it receives the call (SRVINFO_END). */
#define SRVINFO_REQ_LEN 32
#define SRVINFO_REQ_MAGIC 0x54464757u /* "TFGW" */
enum { SRVINFO_BEGIN = 1, SRVINFO_END = 2 };
void srvinfo_req_pack(unsigned char *buf, unsigned kind, uint64_t run_id, uint64_t span_ns,
                      uint64_t ago_ns);

/* The figures a server keeps of itself (srvself.c): a ring of its own
 * samples every [monitor] interval of its job (the last SRVSELF_SAMPLES: 17
 * minutes at 1s; about 600 KiB), taken by a thread of its own, and
 * the runs that announced themselves (the last SRVSELF_RUNS).  Its reply function is the
 * transport's info_fn (transport.h): only Info calls take its locks. */
#define SRVSELF_SAMPLES 1024
#define SRVSELF_RUNS 64
#define SRVSELF_REPLY_SAMPLES 16 /* samples of the window a reply carries at most */
struct srvself;
/* Starts sampling this process (role "ps", index ps) when j's monitor
 * interval is not 0; answers without figures otherwise.  info/info_len: the
 * packed plain ServerInfo its replies start with.  0, or -errno. */
int srvself_new(const struct job *j, int ps, const unsigned char *info, size_t info_len,
                struct srvself **out);
/* Adds the transport's counters (tr_ops.serve_counters, called with ctx on
 * the serving thread that answers) to every reply; accepts s NULL. */
void srvself_counters(struct srvself *s, void (*fn)(void *ctx, struct tr_counters *out),
                      void *ctx);
/* Stops the sampling; accepts NULL. */
void srvself_free(struct srvself *s);
/* tr_server_cfg's info_fn: the plain ServerInfo, with the fields of its own
 * figures for an InfoRequest of kind SRVINFO_END. */
size_t srvself_reply(void *arg, const unsigned char *req, size_t req_len, unsigned char *out,
                     size_t cap);

/* This process's ServerInfo, packed into buf (cap >= TR_INFO_MAX).  Returns
 * its length. */
size_t srvinfo_pack(const char *transport, unsigned char *buf, size_t cap);

/* Decodes a ServerInfo.  0, or -1 when it does not parse. */
int srvinfo_unpack(const unsigned char *buf, size_t len, struct srvinfo *out);

/* Asks the server at addr, within deadline_ns (now_ns() clock), through the
 * transport's own client: out->alloc.name is "" and out->why says why when
 * it cannot tell.  Never fails otherwise: the run goes on. */
void srvinfo_query(const struct tr_ops *ops, void *trctx, const struct job *j,
                   const struct opt_hostport *addr, uint64_t deadline_ns, struct srvinfo *out);
/* The same with an InfoRequest body (req, SRVINFO_REQ_LEN bytes; NULL: none). */
void srvinfo_query_req(const struct tr_ops *ops, void *trctx, const struct job *j,
                       const struct opt_hostport *addr, uint64_t deadline_ns,
                       const unsigned char *req, struct srvinfo *out);

/* "jemalloc 5.3.0" or "unknown (why)". */
void srvinfo_text(const struct srvinfo *s, char *buf, size_t len);

#endif
