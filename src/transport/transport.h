/* transport.h - the one interface between the engine and a transport.
 *
 * A transport moves unary calls of the tfgb.v1.Bench service (the wire contract (proto/tfgb.proto)):
 * a request body given as an iovec list, a reply body, a gRPC status code.
 * The engine drives the client side with submit/reap and never includes a
 * transport's own headers; `tfgb serve` runs the server side through serve.
 *
 * Threading: a tr_client and its connections are used by one thread.
 * Errors: functions return 0 (or a count) on success and a negative errno
 * value on failure; where a message helps (connect, serve) the transport
 * writes one line into a struct err.
 */
#ifndef TFGB_TRANSPORT_H
#define TFGB_TRANSPORT_H

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/uio.h>

#include "err.h"
#include "job.h"
#include "payload.h"
#include "rpc.h"

struct sysinfo_env; /* sysinfo.h */

/* The longest Info reply a client takes (and a server sends): a
 * ServerInfo, with a server's own resource figures when asked (srvinfo.h). */
#define TR_INFO_MAX 16384
/* The bytes of an Info request a server reads (the rest is ignored). */
#define TR_INFO_REQ_MAX 64

/* Full method path for gRPC: "/tfgb.v1.Bench/Echo"; NULL if unknown. */
const char *tr_method_path(int method);
/* Short name "Echo"; "?" if unknown. */
const char *tr_method_name(int method);
/* "RESOURCE_EXHAUSTED" for 8, "status 99" style text for others. */
const char *tr_status_name(int status);

/* One call.  The engine owns the memory (preallocated, reused: no
 * allocation per call); the transport keeps its per-call state behind priv. */
struct tr_call {
	/* set by the engine before submit */
	int method;                /* enum tr_method */
	const struct iovec *iov;   /* request body: the concatenation, in order */
	int iovcnt;
	void *resp_buf;            /* if not NULL, the reply body is copied here ... */
	size_t resp_cap;           /* ... up to this many bytes */
	void *user;                /* the engine's cookie */
	uint64_t t_start_ns;       /* the engine's clock at submit */
	/* set by the transport when the call completes */
	int status;                /* enum tr_status */
	uint64_t resp_len;         /* reply body bytes (even beyond resp_cap) */
	/* the transport's own per-call state; NULL before the first submit */
	void *priv;
};

struct tr_client;
struct tr_conn;

/* What `tfgb serve` asks of a transport. */
struct tr_server_cfg {
	const struct opt_hostport *addrs; /* bind exactly these */
	size_t naddrs;
	uint64_t max_message;             /* the wire contract (proto/tfgb.proto): bigger requests get RESOURCE_EXHAUSTED */
	int threads;                      /* completion-queue / event-loop threads, >= 1 */
	volatile sig_atomic_t *stop;      /* serve returns soon after this becomes non-zero */
	void (*ready)(void *arg);         /* called once, when every address is bound */
	void *ready_arg;
	int verbose;
	const struct job_tls *tls;        /* grpc: TLS when it has cert and key */
	const void *info;                 /* the reply to Info (a packed ServerInfo), */
	size_t info_len;                  /* kept until serve returns */
	/* when not NULL, the reply to Info instead: called on a serving thread
	 * with the request's first bytes (at most TR_INFO_REQ_MAX), it packs
	 * the reply into out (cap bytes, at least 1024) and returns its length
	 * (0: the static info).  Only Info calls it: never on another method's path */
	size_t (*info_fn)(void *arg, const unsigned char *req, size_t req_len, unsigned char *out,
	                  size_t cap);
	void *info_arg;
	struct tr_serve_count *count;     /* what was served, or NULL */
};

/* What a server answered: calls answered OK per method (enum tr_method;
 * Info not counted), their request bodies' bytes and reply bodies' bytes.  Every serving thread adds to
 * it with relaxed atomics (one add per field per call, no lock); read it
 * once serve has returned. */
#define TR_METHOD_SLOTS 16 /* > TR_METHOD_LAST */
struct tr_serve_count {
	_Atomic uint64_t calls[TR_METHOD_SLOTS];
	_Atomic uint64_t req_bytes, reply_bytes;
};

static inline void tr_serve_counted(struct tr_serve_count *c, int method, uint64_t req,
                                    uint64_t reply)
{
	if (!c || method < 0 || method >= TR_METHOD_SLOTS || method == TR_INFO)
		return;
	atomic_fetch_add_explicit(&c->calls[method], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->req_bytes, req, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->reply_bytes, reply, memory_order_relaxed);
}

/* What a client asks of a transport: the narrow view of the job the client
 * side needs (the server side's is tr_server_cfg).  tr_client_cfg_of
 * makes it from a job; tests make their own. */
struct tr_client_cfg {
	int inflight;                /* calls a connection keeps outstanding, >= 1 */
	uint64_t max_request;        /* the payload's bytes on the wire: the largest body a
	                              * request carries or (Pull) asks for */
	uint64_t max_reply;          /* largest reply body it expects; 0: acknowledgements only */
	uint32_t max_iov;            /* most iovecs a request body comes in (the payload's
	                              * buffers); 0: any number (a TensorBundle's encoding) */
	uint64_t timeout_ns;         /* longest wait for a connection or a reply */
	uint64_t link_rtt_ns;        /* the longest round trip of the emulated link to the
	                              * PSs ([network]), 0: none; a connection's handshake
	                              * takes a round trip or two of it */
	const struct job_tls *tls;   /* grpc: TLS when it has ca; NULL: plaintext */
	const void *section;         /* the transport's own job section (its registry row's,
	                              * job_section_get), or NULL: its defaults */
};

/* What a transport's init and probe are given: its own job section and
 * the few facts of the job's cluster that a transport of ranks needs
 * (which rank serves which PS address), never the whole job.
 * tr_setup_of makes it from a job; tests make their own (all zero: the
 * transport's defaults, one PS, one worker). */
struct tr_setup {
	const void *section; /* its own job section (its registry row's), or NULL: its defaults */
	int ps_count;        /* the job's parameter servers (0: one) */
	int workers;         /* its workers (0: one) */
	int workers_set;     /* cluster.workers was given: a launch may be every PS and worker */
	int refused;         /* this process refused its launch (its line said why): a transport
	                      * whose processes form one world (mpi) joins it only to tell the
	                      * others, whose probe then fails with -ECANCELED (tr_refuse) */
	/* PS i's address into *out (0 <= i < ps_count); NULL: none known */
	void (*ps_addr)(const void *src, int i, struct opt_hostport *out);
	const void *src;     /* ps_addr's first argument */
};

/* A transport's own counters of one side's connections (tr_ops.counters,
 * tr_ops.serve_counters), read after a run, never per call: for gRPC its
 * channelz socket data (HTTP/2 streams and messages on each connection).
 * A figure is known only when its bit is set in `known`; an unknown one
 * is reported null with `why`, never as 0. */
enum tr_cnt {
	TR_CNT_STREAMS_STARTED,   /* HTTP/2 streams started on these connections */
	TR_CNT_STREAMS_SUCCEEDED, /* ... that ended with an OK status */
	TR_CNT_STREAMS_FAILED,    /* ... that ended otherwise */
	TR_CNT_MSGS_SENT,         /* messages (request or reply bodies) sent */
	TR_CNT_MSGS_RECV,         /* ... received */
	TR_CNT_KEEPALIVES,        /* keepalive pings sent */
	TR_CNT_LOCAL_WINDOW,      /* smallest local flow-control window at the end, bytes */
	TR_CNT_REMOTE_WINDOW,     /* smallest remote flow-control window at the end, bytes */
	TR_CNT_N
};
#define TR_CNT_WHY_MAX 160
struct tr_counters {
	uint32_t known;              /* bit (1 << enum tr_cnt): v[] is known */
	uint32_t sockets;            /* connections read */
	uint64_t calls;              /* calls the side started (client) or answered (server),
	                              * the per-call figures' divisor; 0: not known */
	uint64_t v[TR_CNT_N];
	char source[16];             /* where they come from ("channelz"), "" when nothing */
	char why[TR_CNT_WHY_MAX];    /* why the figures not known are not, "" when all are */
};

/* Capability flags (tr_ops.caps): what callers outside the transport ask
 * of it, so that none of them tests a transport's name. */
enum {
	TR_CAP_SERVER = 1 << 0,
	TR_CAP_CLIENT = 1 << 1,
	/* it runs over TLS: [server] tls_cert, tls_key and tls_ca are keys of
	 * its jobs (tls_check refuses them with any other transport) */
	TR_CAP_TLS = 1 << 2,
	/* its threads, a server's completion-queue threads and a client's
	 * reap, poll every gRPC file descriptor of the process while they run:
	 * a control service in the same process then runs polled (ctrl.h) */
	TR_CAP_SHARED_POLLER = 1 << 3,
	/* its library has a line of its own in `tfgb version` (its version
	 * text); another transport has a "NAME: compiled in" line there */
	TR_CAP_VERSION_LINE = 1 << 4,
	/* every process of a run is a rank of one launch (MPI): a command
	 * starts no server of its own; the PS ranks serve in the command the
	 * launcher ran (tfgb-mpi(7)) */
	TR_CAP_RANKS = 1 << 5,
};

/* A transport's collective side (tr_ops.coll): in a collective every
 * rank is a server and a client at once, and the transport only moves
 * bytes between two ranks; the algorithms live once, above it (coll.h).
 * A link is one rank's connections to the others of its run. */
struct tr_link;
struct tr_link_cfg {
	int rank, nranks;                 /* this rank, of nranks >= 2 */
	const struct opt_hostport *addrs; /* nranks: where each rank listens (a
	                                   * transport of ranks ignores them); the
	                                   * link keeps a copy of what it needs */
	uint64_t timeout_ns;              /* longest wait for a peer: to meet it, for a step */
	const void *section;              /* its own job section, or NULL: its defaults */
};
struct tr_coll_ops {
	/* Meets the other ranks: 0 with *out, or -errno with one line in err
	 * naming the rank it could not meet.  SIGINT or SIGTERM (tfgb_stop)
	 * ends the wait with -EINTR. */
	int (*open)(void *ctx, const struct tr_link_cfg *cfg, struct tr_link **out,
	            struct err *err);
	/* One step: sends slen bytes of sbuf to rank `to` while it receives
	 * rlen bytes from rank `from` into rbuf (to or from -1: that half is
	 * not there; the peers agree on every length, so nothing frames them).
	 * Returns when both are done: 0; or -errno with one line in err naming
	 * the peer (-ETIMEDOUT at deadline_ns, -EPIPE when it closed or died,
	 * -EINTR on tfgb_stop).  No allocation, no copy beyond the transport's. */
	int (*sendrecv)(struct tr_link *l, int to, const void *sbuf, size_t slen, int from,
	                void *rbuf, size_t rlen, uint64_t deadline_ns, struct err *err);
	void (*close)(struct tr_link *l); /* accepts NULL */
	/* Optional (NULL: nothing to do): registers [addr, addr + len), a
	 * buffer steps will send from and receive into, once after open, so
	 * that no step registers memory (verbs).  0, or -errno with err. */
	int (*reg)(struct tr_link *l, void *addr, size_t len, struct err *err);
	/* Optional (NULL: the transport's version): the version text of what
	 * the steps ride on, where it is not the transport's own framing. */
	const char *(*version)(void);
};


struct tr_ops {
	const char *name;
	size_t size; /* sizeof(struct tr_ops) the transport was built against */
	unsigned caps;

	/* process-wide set-up and tear-down (grpc_init/grpc_shutdown) */
	int (*init)(const struct tr_setup *s, void **ctx, struct err *err);
	void (*fini)(void *ctx);
	/* version text of the library underneath, e.g. "gRPC 1.51.1 (core 29.0.0)" */
	const char *(*version)(void);

	/* Server: binds cfg->addrs, serves until *cfg->stop, then drains or
	 * cancels in-flight calls and returns 0; -errno with err on failure
	 * (e.g. an address in use). */
	int (*serve)(void *ctx, const struct tr_server_cfg *cfg, struct err *err);

	/* Client. */
	int (*client_open)(void *ctx, const struct tr_client_cfg *cfg, struct tr_client **out,
	                   struct err *err);
	void (*client_close)(struct tr_client *c); /* closes its connections too */
	/* Opens a connection and waits until it is ready or deadline_ns
	 * (now_ns() clock) passes; SIGINT or SIGTERM during the wait (tfgb_stop,
	 * util.h) end it early with -EINTR, err "interrupted while connecting". */
	int (*connect)(struct tr_client *c, const struct opt_hostport *addr,
	               uint64_t deadline_ns, struct tr_conn **out, struct err *err);
	/* Starts a call; 0 when started, -EAGAIN when the connection has no
	 * room now (retry after a reap), other -errno on failure. */
	int (*submit)(struct tr_conn *conn, struct tr_call *call);
	/* Waits until at least one call completes or deadline_ns passes; stores
	 * up to max completed calls in done[] and returns how many (0 on
	 * timeout), or -errno. */
	int (*reap)(struct tr_client *c, struct tr_call **done, int max, uint64_t deadline_ns);
	/* Releases the transport's per-call state (priv); accepts priv == NULL. */
	void (*call_release)(struct tr_call *call);

	/* Optional (NULL: nothing to check).  Whether this process can use the
	 * transport for the job s describes at all (a device, a library),
	 * called by every command right after tr_find and before it starts any
	 * process.  0, or -errno with one line in err: -EINVAL when the run is
	 * launched wrong (a usage error, exit status 2: tr_probe_status);
	 * -ECANCELED when another process of the launch refused it (s->refused
	 * there): that one's line says why. */
	int (*probe)(const struct tr_setup *s, struct err *err);
	/* Optional: registers [addr, addr + len) (the payload) once, before any
	 * call, so that no call registers memory.  0 or -errno. */
	int (*reg_mem)(struct tr_client *c, void *addr, size_t len);
	/* Optional: why a connection failed, one line, or NULL while it works;
	 * for the message of a call that failed with a transport status. */
	const char *(*conn_error)(const struct tr_conn *conn);
	/* A server of this transport listens (TCP) on the PS port plus this:
	 * what a command probes to find a server already running. */
	unsigned port_offset;
	/* `tfgb serve`'s server threads when [server] threads is 0; 0: one per
	 * online CPU (at most 256). */
	int default_threads;
	/* Optional: a command of its own that lists what it would use (the
	 * devices, ports): `tfgb NAME` (info_command) runs info, which writes
	 * on f and returns 0, or -errno with one line in err (the command
	 * prints it and exits 1).  tr_info finds it. */
	const char *info_command;
	int (*info)(FILE *f, struct err *err);
	/* Optional: fills the facts of its library in a result's "environment"
	 * (gRPC's versions); called by sysinfo_collect once tr_registry_init
	 * registered it (sysinfo_add_source). */
	void (*environment)(struct sysinfo_env *e);
	/* Optional: the transport's own counters of client c's connections
	 * (struct tr_counters), read once its calls are done and before
	 * client_close; out is filled whole (what is not known says why). */
	void (*counters)(struct tr_client *c, struct tr_counters *out);
	/* Optional: the same for the server of this process (`tfgb serve`),
	 * called from a serving thread while it answers Info. */
	void (*serve_counters)(void *ctx, struct tr_counters *out);
	/* Optional: the collective side (NULL: `tfgb collective` refuses the
	 * transport, naming the ones that have it). */
	const struct tr_coll_ops *coll;
};

/* Fills out for a transport that has no counters of its own: nothing
 * known, why saying so. */
void tr_counters_none(struct tr_counters *out, const char *why);

/* Their wire form (a worker's result, a server's Info reply), big-endian:
 * u32 known, u32 sockets, u64 calls, TR_CNT_N x u64, u16 len + source,
 * u16 len + why.  tr_counters_get fills out whole; the rbuf turns bad on
 * anything malformed (a known bit past TR_CNT_N). */
struct wbuf;
struct rbuf;
void tr_counters_put(struct wbuf *w, const struct tr_counters *c);
void tr_counters_get(struct rbuf *b, struct tr_counters *out);
/* Adds b's counts to a (the same side of several workers): the sums of
 * the counts known in both, the smaller of the windows; a figure unknown
 * in either is unknown (with b's why when a has none). */
void tr_counters_add(struct tr_counters *a, const struct tr_counters *b);

/* The version text of ops's collective side (its own, or ops->version). */
const char *tr_coll_version(const struct tr_ops *ops);

/* The setup of job j for its transport (its section, its cluster's
 * counts and PS addresses); j must outlive *s. */
void tr_setup_of(const struct job *j, struct tr_setup *s);
/* ops->probe with tr_setup_of(j) if the transport has one, else 0. */
int tr_probe(const struct tr_ops *ops, const struct job *j, struct err *err);
/* ops->init with tr_setup_of(j): 0, or -errno with err. */
int tr_init(const struct tr_ops *ops, const struct job *j, void **ctx, struct err *err);
/* This process refused its launch (a usage error it has said): ops->probe
 * with s.refused set, so that a transport of one world of ranks (mpi)
 * tells every other rank before any leaves (their probe: -ECANCELED).
 * Without it they would run on until the launcher killed them, and name
 * this process as one that died. */
void tr_refuse(const struct tr_ops *ops, const struct job *j);
/* The exit status of a failed tr_find or tr_probe (its return rc): 2 for
 * a launch that is wrong (-EINVAL) or that another process refused
 * (-ECANCELED), else 1. */
static inline int tr_probe_status(int rc)
{
	return rc == -EINVAL || rc == -ECANCELED ? 2 : 1;
}

/* A row of the transport registry (transport.c). */
struct tr_entry {
	const char *name;                  /* its value of [job] transport */
	const struct tr_ops *ops;          /* NULL: not compiled in, see why */
	const struct job_section *section; /* its own keys, or NULL */
	const char *why;                   /* when ops is NULL */
};

/* Makes the registry's transports values of [job] transport and their
 * sections sections of the job (job_register), in row order.  Every
 * program calls it once before its first job_init (tfgb's main, the test
 * runner).  0, or -1 when the job model's tables are full. */
int tr_registry_init(void);

/* For the tests: adds a row after the built-in ones and registers it, so
 * that a transport written in tests/ runs through the same registry.
 * Call before any job_init.  Adding the same row again only returns 0;
 * -1 when the registry is full or another row has the name. */
int tr_register(const struct tr_entry *e);

/* The client configuration of job j for its transport: a worker whose
 * payload p is `wire` bytes on the wire (codec_wire_len) keeping inflight
 * calls of method (enum tr_method) outstanding per connection. */
void tr_client_cfg_of(const struct job *j, const struct payload *p, uint64_t wire, int method,
                      int inflight, struct tr_client_cfg *cfg);

/* The registry: the ops of a compiled-in transport, or NULL (with err
 * saying why: not built, or not compiled in). */
const struct tr_ops *tr_find(int transport, struct err *err);

/* The job section of transport (its [job] transport number): its own keys,
 * or NULL when it has none. */
const struct job_section *tr_section(int transport);

/* Runs the info hook of the transport whose info_command is command
 * (`tfgb verbs-info`), writing on f.  0, or -errno with err: the hook's,
 * or -ENOENT when no transport has that command. */
int tr_info(const char *command, FILE *f, struct err *err);

#endif
