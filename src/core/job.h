/* job.h - the job model: every key of a tfgb job file, parsed and checked.
 *
 * A job is built in three layers, each overriding the one before: the
 * defaults in the key table (Table 2 of the TF-gRPC-Bench paper), the job
 * file, and `-s SECTION.KEY=VALUE` overrides.  Every value remembers where
 * it came from so that errors found later (cross-key checks) can still name
 * the file and line.
 */
#ifndef TFGB_JOB_H
#define TFGB_JOB_H

#include <stdint.h>
#include <stdio.h>

#include "opt.h"

/* How the payload crosses the wire (see tfgb.ini(5), [job] mode):
 * raw iovec bytes; a TensorBundle packed and unpacked by protobuf-c; or the
 * same TensorBundle bytes encoded as TensorFlow's gRPC fast path does. */
enum job_mode { MODE_NONSERIALIZED, MODE_SERIALIZED, MODE_TENSORFLOW };
/* The element type a serialized tensor declares ([payload] dtype). */
enum job_dtype { DTYPE_UINT8, DTYPE_FLOAT32, DTYPE_FLOAT16, DTYPE_INT64 };
enum job_transport { TRANSPORT_GRPC, TRANSPORT_SOCKET, TRANSPORT_VERBS };
enum job_rpc { RPC_ECHO, RPC_PUSH, RPC_PULL };
enum job_arrival { ARRIVAL_CONSTANT, ARRIVAL_POISSON };
/* [job] allocator, in the order of its names (alloc.h applies it). */
enum job_allocator { ALLOC_GLIBC, ALLOC_GLIBC_KEPT, ALLOC_JEMALLOC, ALLOC_TCMALLOC,
                     ALLOC_MIMALLOC, ALLOC_COUNT };
enum payload_scheme { SCHEME_UNIFORM, SCHEME_RANDOM, SCHEME_SKEW, SCHEME_CUSTOM };
/* Table 1 categories; the order is that of `categories = small, medium, large`. */
enum payload_cat { CAT_SMALL, CAT_MEDIUM, CAT_LARGE, CAT_COUNT };
enum out_format { FMT_TEXT, FMT_CSV, FMT_JSON };
/* What the resource monitor samples ([monitor] resources), in the order of
 * its names; bit i of job_monitor_mask is value i (MONITOR_CPU ...). */
enum monitor_res { RES_CPU, RES_MEMORY, RES_NETWORK, RES_CSW, RES_COUNT };

/* Table 1 of the paper: Small [1 B, 1 KiB), Medium [1 KiB, 1 MiB),
 * Large [1 MiB, 10 MiB]. */
#define CAT_SMALL_MIN 1ull
#define CAT_MEDIUM_MIN (1ull << 10)
#define CAT_LARGE_MIN (1ull << 20)
#define CAT_LARGE_MAX (10ull << 20)

/* Most bytes one payload may hold: iovecs x sizes beyond this is a job error
 * naming the figure, never a failed allocation at run time. */
#define JOB_PAYLOAD_MAX (1ull << 30)

#define JOB_MAX_KEYS 64

/* The PEM text of [server] tls_cert, tls_key and tls_ca, read by
 * job_validate so that no file is opened once a run starts; NULL where the
 * key is empty.  A server uses TLS when cert (and key) are set, a client
 * when ca is set. */
struct job_tls {
	char *cert, *key, *ca;
};
#define JOB_NAME_MAX 256

struct job_origin {
	const char *file; /* job file name, "-s" for overrides, NULL for a default */
	int line;         /* line in the file, or the override's position */
};

struct job {
	/* [job] */
	int mode, transport, rpc, arrival;
	uint64_t warmup_ns, duration_ns, timeout_ns;
	int64_t iterations, seed, inflight, rate;
	int64_t repeat;       /* measured windows after the warm-up, 1..1000 */
	int verify;
	int allocator;        /* enum job_allocator */
	/* [cluster] */
	struct opt_hplist ps;
	int64_t ps_count, workers;
	struct opt_hplist control;
	char *token;          /* the control service's shared secret, or "" */
	/* [payload] */
	int scheme, bias, dtype;
	int64_t iovecs;
	struct opt_enumlist categories;
	uint64_t cat_size[CAT_COUNT]; /* small, medium, large */
	struct opt_sizelist iovec;
	/* [output] */
	int format;
	char *file;
	char *series;         /* CSV file for the sampled series, or "" */
	/* [monitor] */
	uint64_t monitor_ns;  /* resource sampling interval; 0: off */
	struct opt_enumlist monitor_res; /* enum monitor_res values */
	/* [server] */
	uint64_t max_message;
	int64_t threads;
	char *tls_cert, *tls_key, *tls_ca; /* PEM file names; "" is plaintext */
	struct job_tls tls;                /* their contents */
	/* [affinity] */
	char *ps_cpus, *worker_cpus;
	int64_t ps_numa_node, worker_numa_node; /* -1: none (unbound) */
	/* [socket] */
	uint64_t sock_sndbuf, sock_rcvbuf; /* bytes; 0: the kernel's autotuning */
	uint64_t sock_busy_poll_ns;        /* SO_BUSY_POLL, whole microseconds; 0: off */
	uint64_t sock_zerocopy;            /* MSG_ZEROCOPY from this many bytes; 0: off */
	/* [verbs]: read by the verbs transport through the key table, by name */
	char *verbs_device;
	int64_t verbs_port, verbs_gid_index;
	int verbs_mtu, verbs_poll;           /* indexes into "active", "256", ...; "busy", "event" */
	uint64_t verbs_inline, verbs_eager_max;
	int64_t verbs_send_depth, verbs_recv_depth;

	/* where each key's value came from, by key-table index */
	struct job_origin origin[JOB_MAX_KEYS];
	char src[JOB_NAME_MAX]; /* the job file's name, or "(defaults)" */
};

/* Error from a job operation: one line, ready to print after "tfgb: ". */
#define JOB_ERR_MAX 512
struct job_err {
	char msg[JOB_ERR_MAX];
};

/* The key table, terminated by a row with name == NULL. */
extern const struct opt_def job_keys[];
size_t job_key_count(void);
const struct opt_def *job_key_find(const char *section, const char *name);

/* Sets every key to its default. Returns 0 or -1 (out of memory). */
int job_init(struct job *j);
void job_free(struct job *j);

/* Reads a job file over the current values.  -1 with err set on any error:
 * unreadable file, syntax, unknown section or key, bad value. */
int job_load_file(struct job *j, const char *path, struct job_err *err);
/* Same from a string; `name` is used in messages. */
int job_load_string(struct job *j, const char *name, const char *text, struct job_err *err);
/* Applies "section.key=value"; `pos` is the override's 1-based position. */
int job_override(struct job *j, const char *kv, int pos, struct job_err *err);
/* Cross-key checks, done once every layer is applied.  Also settles what
 * follows from other keys (scheme custom: iovecs = the list's length), so
 * that --print-config always prints a job that re-parses, and reads the TLS
 * files into j->tls (tls.c). */
int job_validate(struct job *j, struct job_err *err);

/* The effective job, one [section] per group, every key: a job file that
 * reproduces this job exactly. */
void job_print_ini(const struct job *j, FILE *f);
/* The same as a malloc'd string (NULL if out of memory). */
char *job_ini_string(const struct job *j);
/* The job as it may be shown and kept: job_ini_string with the values of
 * secret keys (cluster.token) left out, so that the key reads "token =".
 * Results record this text and hash it; it re-parses to the same job
 * without the secrets.  NULL if out of memory. */
char *job_ini_public(const struct job *j);
/* The secret keys the job sets, those job_ini_public leaves out: fills up
 * to max of them into out (which may be NULL when max is 0) and returns
 * how many there are. */
int job_secrets_set(const struct job *j, const struct opt_def **out, int max);

/* The search path for a job file when no -c is given: ./tfgb.ini,
 * $XDG_CONFIG_HOME/tfgb/tfgb.ini (or ~/.config/...), DATADIR/tfgb.ini.
 * Writes the first readable one into buf and returns 0, or -1 if none. */
int job_find_default(char *buf, size_t len);

/* [monitor] resources as a bit mask: bit i for enum monitor_res value i. */
unsigned job_monitor_mask(const struct job *j);

/* Names for enum values, for reports. */
const char *job_mode_name(int mode);
const char *job_transport_name(int transport);
const char *job_scheme_name(int scheme);
const char *job_cat_name(int cat);
const char *job_rpc_name(int rpc);
const char *job_arrival_name(int arrival);
const char *job_dtype_name(int dtype);
const char *job_allocator_name(int allocator);

/* Bytes per element of a dtype: 1, 4, 2, 8. */
unsigned job_dtype_size(int dtype);
/* TensorFlow's DataType number of a dtype: DT_UINT8 = 4, DT_FLOAT = 1,
 * DT_HALF = 19, DT_INT64 = 9. */
int job_dtype_number(int dtype);

/* Where key section.name's value came from, for messages that name a second
 * key: "job.ini:7", "-s #2" or "default". */
void job_key_where(const struct job *j, const char *section, const char *name, char *buf,
                   size_t len);

/* A job error about key section.name, placed where its value came from:
 * "file:line: section.name = value: <message>".  For checks a command
 * makes beyond job_validate.  Always returns -1. */
int job_key_err(const struct job *j, struct job_err *err, const char *section,
                const char *name, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
