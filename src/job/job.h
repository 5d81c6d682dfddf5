/* job.h - the job model: every key of a tfgb job file, parsed and checked.
 *
 * A job is built in three layers, each overriding the one before: the
 * defaults in the key table (Table 2 of the TF-gRPC-Bench paper), the job
 * file, and `-s SECTION.KEY=VALUE` overrides.  Its sections are the job
 * model's own ([job] ... [affinity], fields of struct job, read across the
 * modules; each with its keys and rules in its own file: job_payload.c ...) and
 * those other modules declare (struct job_section: a transport's keys, in
 * its own files, registered by the transport registry).  Every value remembers where
 * it came from so that errors found later (cross-key checks) can still name
 * the file and line.
 */
#ifndef TFGB_JOB_H
#define TFGB_JOB_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "opt.h"

/* How the payload crosses the wire (see tfgb.ini(5), [job] mode):
 * raw iovec bytes; a TensorBundle packed and unpacked by protobuf-c; or the
 * same TensorBundle bytes encoded as TensorFlow's gRPC fast path does. */
enum job_mode { MODE_NONSERIALIZED, MODE_SERIALIZED, MODE_TENSORFLOW };
/* The element type a serialized tensor declares ([payload] dtype). */
enum job_dtype { DTYPE_UINT8, DTYPE_FLOAT32, DTYPE_FLOAT16, DTYPE_INT64 };
/* The built-in transports: the rows of the transport registry
 * (transport.c), whose order gives [job] transport its numbers. */
enum job_transport { TRANSPORT_GRPC, TRANSPORT_SOCKET, TRANSPORT_VERBS };
enum job_rpc { RPC_ECHO, RPC_PUSH, RPC_PULL };
enum job_arrival { ARRIVAL_CONSTANT, ARRIVAL_POISSON };
/* [job] allocator, in the order of its names (alloc.h applies it). */
enum job_allocator { ALLOC_GLIBC, ALLOC_GLIBC_KEPT, ALLOC_JEMALLOC, ALLOC_TCMALLOC,
                     ALLOC_MIMALLOC, ALLOC_COUNT };
enum payload_scheme { SCHEME_UNIFORM, SCHEME_RANDOM, SCHEME_SKEW, SCHEME_CUSTOM };
/* What the buffers hold ([payload] fill): the seeded pattern, which no
 * compressor shrinks, or zeros, which every compressor does. */
enum payload_fill { FILL_PATTERN, FILL_ZEROS };
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
/* One buffer of a custom layout (payload.iovec, --sweep payload.size): up
 * to 1 GiB, beyond Table 1's Large; server.max_message bounds the whole. */
#define PAYLOAD_BUF_MAX (1ull << 30)

/* Whether tfgb binds NUMA nodes (the Makefile's NUMA=1). */
#ifndef TFGB_HAVE_NUMA
#define TFGB_HAVE_NUMA 0
#endif

/* The highest NUMA node number a job may name: the kernel's MAX_NUMNODES
 * is at most 1 << 10. */
#define JOB_NODE_MAX 1023

/* Most bytes one payload may hold: iovecs x sizes beyond this is a job error
 * naming the figure, never a failed allocation at run time. */
#define JOB_PAYLOAD_MAX (1ull << 30)

/* Most keys of all sections; most bytes of the sections other modules
 * declare (JOB_SECTIONS_MAX of them, each aligned to 16 bytes). */
#define JOB_MAX_KEYS 128
#define JOB_SECTION_BYTES 512
#define JOB_SECTIONS_MAX 16
/* Most values of [job] transport: one per registered transport. */
#define JOB_TRANSPORTS_MAX 8

/* The PEM text of [server] tls_cert, tls_key and tls_ca, read by
 * job_validate so that no file is opened once a run starts; NULL where the
 * key is empty.  A server uses TLS when cert (and key) are set, a client
 * when ca is set. */
struct job_tls {
	char *cert, *key, *ca;
};
#define JOB_NAME_MAX 256

struct job_origin {
	const char *file; /* job file name, "-s" for overrides, NULL for a default,
	                   * or the option that set it ("-o"; then line is -1) */
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
	int fill;                  /* enum payload_fill */
	int64_t iovecs;
	struct opt_enumlist categories;
	uint64_t cat_size[CAT_COUNT]; /* small, medium, large */
	struct opt_sizelist iovec;
	/* [output] */
	int format;
	char *file;
	char *series;         /* CSV file for the sampled series, or "" */
	char *hgrm;           /* HdrHistogram percentile distribution file, or "" */
	char *timeline;       /* Trace Event JSON of every rank's steps, or "" */
	char *percentiles;    /* the reported percentiles (opt_parse_pctlist) */
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
	/* "none" (unbound), a node, or one per local rank ("0/1", opt.h's
	 * OPT_PER_RANK; place.h hands them out) */
	char *ps_numa_node, *worker_numa_node;
	/* [network] (job_network.c): the emulated worker-PS link */
	uint64_t net_delay_ns, net_jitter_ns; /* one-way, each direction */
	char *net_rate, *net_loss;            /* as written; job_net_rate, job_net_loss */
	char *net_cc;                         /* TCP congestion control of the link's
	                                       * namespaces: "system" or a kernel name */
	int net_topology;                     /* JOB_NET_PAIR or JOB_NET_SWITCH */
	/* Not a key: the address that stands for every PS host when this
	 * process is part of an emulated run (netem.h sets it), or "" */
	char net_ps_host[OPT_HOST_MAX];
	/* the sections other modules declare (job_register), each at its
	 * job_section_at() offset: no key of theirs is a field of struct job */
	_Alignas(16) unsigned char sections[JOB_SECTION_BYTES];

	/* where each key's value came from, by key-table index */
	struct job_origin origin[JOB_MAX_KEYS];
	char src[JOB_NAME_MAX]; /* the job file's name, or "(defaults)" */
};

/* A section of job keys declared by the module whose behaviour they set
 * (the [socket] keys by the socket transport), as fio's engines declare
 * their options and option_struct_size: its keys, the typed struct they
 * fill and its own checks.  job.c composes the sections, applies the
 * layers (defaults < job file < -s), prints them and names them in its
 * messages; the module reads its struct with job_section_get. */
struct job_section {
	const char *name;           /* "socket": the [name] of the job file */
	const struct opt_def *keys; /* NULL-name terminated; each .section is name
	                             * and each .off an offset into the struct */
	size_t size;                /* sizeof the section's struct */
	/* Optional: the section's own cross-key rules, run by job_validate
	 * (job_key_err names the key and where it was set).  0 or -1. */
	int (*check)(const struct job *j, const void *sec, struct err *err);
	/* Optional: writes what key `name`'s value does where its text alone
	 * does not say (grpc.channelz "preset": " (on: preset tensorflow)"),
	 * for the report's header; nothing otherwise. */
	void (*effect)(const void *sec, const char *name, FILE *f);
};

/* Adds a section after job.c's own sections (in --print-config order) and,
 * when transport is not NULL, `transport` as the next value of [job]
 * transport (its enum number is the order of registration).  built is 0
 * for a transport this tfgb has not compiled in: its name and keys are
 * still accepted, so that one job file reads the same in every build.
 * The transport registry (tr_registry_init) calls it before any job is
 * made; none of it is thread-safe.  Adding the same section again only
 * returns 0.  -1 when a table is full (JOB_SECTIONS_MAX, JOB_MAX_KEYS,
 * JOB_SECTION_BYTES, JOB_TRANSPORTS_MAX): a build error the tests catch. */
int job_register(const char *transport, int built, const struct job_section *s);

/* The section's struct in j, NULL when s was never registered. */
const void *job_section_get(const struct job *j, const struct job_section *s);

/* Fills data (s->size bytes) with the defaults of s's keys, for a module
 * that needs them without a job.  0, or -1 (out of memory) with nothing
 * left to free.  job_section_free releases what it holds. */
int job_section_defaults(const struct job_section *s, void *data);
void job_section_free(const struct job_section *s, void *data);

/* Every section name in file order, NULL-terminated: job.c's own, then the
 * registered ones.  What the section errors, --print-config, tfgb.ini(5)
 * (tests/check_doc.c) and the sections of `tfgb version` list. */
const char *const *job_section_names(void);

/* The values of [job] transport, NULL-terminated, and whether each is
 * compiled in (what sysinfo's features and `tfgb version` list). */
const char *const *job_transport_names(void);
int job_transport_built(int transport);

/* The key table of every section, terminated by a row with name == NULL;
 * a key's .off is its offset in struct job (a registered section's keys
 * are moved to where job_section_get finds them). */
extern const struct opt_def *const job_keys;
size_t job_key_count(void);
const struct opt_def *job_key_find(const char *section, const char *name);

/* Sets every key to its default. Returns 0 or -1 (out of memory). */
int job_init(struct job *j);
void job_free(struct job *j);

/* The largest job file, in bytes. */
#define JOB_TEXT_MAX (16u << 20)

/* Reads a job file over the current values: read once, whatever kind of
 * file (input.h: a pipe, a FIFO, "-" for standard input).  -1 with err set
 * on any error: unreadable file, syntax, unknown section or key, bad value. */
int job_load_file(struct job *j, const char *path, struct err *err);
/* Same from a job file's text already read (len bytes, NUL-terminated):
 * refused over JOB_TEXT_MAX or with a NUL byte inside. */
int job_load_text(struct job *j, const char *name, const char *text, size_t len,
                  struct err *err);
/* Same from a string; `name` is used in messages. */
int job_load_string(struct job *j, const char *name, const char *text, struct err *err);
/* Applies "section.key=value"; `pos` is the override's 1-based position. */
int job_override(struct job *j, const char *kv, int pos, struct err *err);
/* The cross-key rules of the job model's own keys and every registered
 * section's check, done once every layer is applied.  Also settles what
 * follows from other keys (scheme custom: iovecs = the list's length), so
 * that --print-config always prints a job that re-parses.  The rules that
 * need other modules (payload layout, TLS files, limits) are job_validate's
 * (validate.h), which calls this first. */
int job_check_keys(struct job *j, struct err *err);

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

/* 1 when the key was set (by the job file or -s), 0 when it has its default. */
int job_key_set(const struct job *j, const char *section, const char *name);
/* Marks key section.name, just set by job_override, as set by a command-line
 * option of its own (option: "-o", a string that outlives the job), so that
 * messages name the option rather than an -s position. */
void job_key_option(struct job *j, const char *section, const char *name, const char *option);
/* Where key section.name's value came from, for messages that name a second
 * key: "job.ini:7", "-s #2" or "default". */
void job_key_where(const struct job *j, const char *section, const char *name, char *buf,
                   size_t len);

/* A job error about key section.name, placed where its value came from:
 * "file:line: section.name = value: <message>".  For checks a command
 * makes beyond job_validate.  Always returns -1. */
int job_key_err(const struct job *j, struct err *err, const char *section,
                const char *name, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* [network] rate in bits per second (0: unlimited) and loss in parts per
 * million (0.0001 %): 0, or -1 when the text is out of the section's
 * range.  job_net_emulated: 1 when any [network] knob is set; job_net_key
 * names the first that is (delay, jitter, rate, loss, congestion), or is
 * NULL. */
int job_net_rate(const char *s, int64_t *bps);
int job_net_loss(const char *s, int64_t *ppm);
/* 1 when s can be a TCP congestion control's name (or "system"). */
int job_net_cc_ok(const char *s);
int job_net_emulated(const struct job *j);
const char *job_net_key(const struct job *j);
/* Whether a run of ranks (tfgb collective, train.strategy = allreduce) can
 * have the job's [network]: none, or the switch's; the pair joins the PSs
 * to the workers, and ranks are neither.  0, or -1 with err naming the
 * key that builds the pair's link. */
int job_net_ranks_fit(const struct job *j, struct err *err);

/* network.topology: the PSs' namespace and the workers' joined by one
 * link (pair), or one namespace and NIC for each process of the run, all
 * joined by one switch (switch; netem.h).  In the switch, host h (PS i is
 * host i, worker w host ps_count + w; rank r of a run of ranks host r) is
 * at job_net_host's address, one of at most JOB_NET_HOSTS_MAX. */
enum { JOB_NET_PAIR, JOB_NET_SWITCH };
#define JOB_NET_HOSTS_MAX 64
void job_net_host(int host, char *out, size_t size);
/* 1 when this process is part of an emulated run over the switch: every
 * PS, rank and the control service is at its host's address. */
int job_net_switched(const struct job *j);

/* The address of PS `index` (0 <= index < ps_count): cluster.ps's entry,
 * or its one address with the port counted up from it. */
void job_ps_addr(const struct job *j, int index, struct opt_hostport *out);
/* The control service's address: [cluster] control, or PS 0's host one
 * port below PS 0.  -1 when that is needed and PS 0's port is 1. */
int job_control_addr(const struct job *j, struct opt_hostport *out);

#endif
