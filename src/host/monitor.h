/* monitor.h - resource use of a run's processes and of the host's network.
 *
 * The monitor samples, every interval, off the timed path (in a thread of
 * its own, or when its owner calls monitor_sample):
 *  - per process, from /proc/PID/stat, /proc/PID/status and /proc/PID/io
 *    when readable: user and system CPU time, VmRSS and VmHWM, voluntary
 *    and involuntary context switches, and the bytes passed to read- and
 *    write-like system calls (rchar, wchar: sendmsg/recvmsg do not count)
 *    and their number (syscr, syscw: read, readv, pread, write, writev,
 *    pwrite, sendfile; not sendmsg, recvmsg, send, recv, poll, epoll),
 *    each of all its threads: the context switches of this process from
 *    getrusage, another's summed over /proc/PID/task/TID/status (a thread
 *    that ends keeps the counts it had at the sample before);
 *  - per host, from /proc/net/dev of this network namespace: bytes and
 *    packets in and out of each interface (at most MONITOR_MAX_IFACES, in
 *    the kernel's order, as seen at the first sample).  These count every
 *    byte of the host, whoever moved it: every output labels them
 *    host-wide (text, "scope": "host" in JSON, kind net_host in CSV);
 *  - per run, when monitor_ports named its ports: the bytes of the run's
 *    own TCP connections (tcpbytes.h), the run's network figure.
 * A process that goes away keeps its last sample's figures: a zombie's
 * final CPU times and switches are still read, and a parent that reaps
 * its children gives the final account with monitor_exited.
 *
 * Memory is fixed when the monitor is made: max_samples per process and
 * per interface.  When the buffer fills up, every other sample is dropped
 * and the interval doubles, so the series always covers the whole run at
 * an even spacing (at most MONITOR_MAX_SAMPLES samples).
 *
 * Figures over an interval (CPU % of one core, counter increments) belong
 * to the sample that ends it; the first sample has none (null, empty).
 * CPU time comes in clock ticks (sysconf(_SC_CLK_TCK), usually 10 ms), so
 * one interval's CPU % is within 100 * tick / interval points (10 points
 * at 100 ms), and the run's average within 100 * tick / span.
 *
 * What is sampled and reported can be narrowed ([monitor] resources):
 * MONITOR_CPU (CPU times), MONITOR_MEMORY (VmRSS, VmHWM), MONITOR_NETWORK
 * (/proc/net/dev, and each process's rchar and wchar: the bytes its
 * system calls moved), MONITOR_CSW (context switches).  /proc/PID/stat and
 * status are read for any of them (they tell whether the process lives);
 * /proc/PID/io and /proc/net/dev only for the network.  Left-out figures
 * are absent from every output: JSON keys, CSV columns, text.
 *
 * Lifetime: monitor_new, monitor_start, (run), monitor_stop, then read the
 * figures, monitor_free.  Only monitor_start and monitor_stop touch the
 * thread; every reader must come after monitor_stop.
 */
#ifndef TFGB_MONITOR_H
#define TFGB_MONITOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "json.h"

#define MONITOR_MAX_PROCS 1024
#define MONITOR_MAX_IFACES 16
#define MONITOR_MAX_SAMPLES 65536
#define MONITOR_DEFAULT_SAMPLES 1024
#define MONITOR_ROLE_MAX 16  /* bytes of a role name, with the NUL */
#define MONITOR_IFACE_MAX 16 /* IFNAMSIZ */

/* A process to watch: its role ("worker", "ps"), index in the role, pid. */
struct monitor_target {
	const char *role;
	int index;
	pid_t pid;
};

struct monitor;

/* Bit i is value i of [monitor] resources (enum monitor_res of job.h). */
enum {
	MONITOR_CPU = 1 << 0,
	MONITOR_MEMORY = 1 << 1,
	MONITOR_NETWORK = 1 << 2,
	MONITOR_CSW = 1 << 3,
	MONITOR_ALL = (1 << 4) - 1,
};

/* Makes a monitor for n targets (0 to watch the network alone), sampling
 * every interval_ns (at least 1 ms), keeping at most max_samples (4 to
 * MONITOR_MAX_SAMPLES; 0 for MONITOR_DEFAULT_SAMPLES) per series.
 * Returns 0, -EINVAL for a bad argument, or -ENOMEM. */
int monitor_new(struct monitor **out, const struct monitor_target *t, size_t n,
                uint64_t interval_ns, size_t max_samples);
/* Chooses what is sampled and reported, MONITOR_* bits (MONITOR_ALL until
 * called); before monitor_start. */
void monitor_select(struct monitor *m, unsigned what);
/* The run's ports (its PSs' and its control service's, ctl; 0: none): the
 * bytes of the connections on them are counted (tcpbytes.h) when the network
 * is selected.  Before monitor_start.  0 or -errno. */
int monitor_ports(struct monitor *m, const uint16_t *ports, size_t n, uint16_t ctl);
/* Takes the first sample now and starts the sampling thread.  0 or -errno. */
int monitor_start(struct monitor *m);
/* Takes one sample now; for an owner that samples without the thread
 * (never while the thread runs). */
void monitor_sample(struct monitor *m);
/* For a parent that reaps its children: child pid has exited and been
 * reaped with this rusage (wait4).  Its final CPU times, context switches
 * and peak RSS stand in for /proc from the next sample on, so that what it
 * did after the last sample still counts.  Safe while the thread runs. */
void monitor_exited(struct monitor *m, pid_t pid, const struct rusage *ru);
/* Stops the thread, then takes the last sample, which replaces the one
 * before when that is less than half an interval old (so that no interval
 * is short enough for tick noise to dominate).  Accepts a monitor that was
 * never started (it only samples then). */
void monitor_stop(struct monitor *m);
/* Accepts NULL; stops the thread first if it still runs. */
void monitor_free(struct monitor *m);
/* Ring mode, for a server that samples itself for as long as it runs
 * (tfgb-serve(1)): when the buffer fills up, its oldest quarter is dropped
 * instead of thinning, so it always holds the last max_samples samples at
 * the interval asked.  Before monitor_start. */
void monitor_ring(struct monitor *m);
/* A new stopped monitor of m's samples taken from from_ns to to_ns (the
 * now_ns() clock), with the last sample before from_ns as the counters'
 * base when m has one, at most max_samples (>= 2) spread evenly, the first
 * and last among them.  Safe while m's thread samples in ring mode (it
 * takes the monitor's lock, which only the sampler and readers take).
 * 0, -ENOENT when fewer than two samples fall there, or -ENOMEM. */
int monitor_window(struct monitor *m, uint64_t from_ns, uint64_t to_ns, size_t max_samples,
                   struct monitor **out);

/* Totals over the samples taken (last minus first), per role. */
struct monitor_role_sum {
	char role[MONITOR_ROLE_MAX];
	unsigned procs;           /* processes of this role */
	double user_s, sys_s;     /* CPU seconds, all its processes together */
	double cpu_avg_pct;       /* (user_s + sys_s) / span / procs, in % of one core */
	double cpu_peak_pct;      /* the highest one-interval figure of one process */
	uint64_t rss_avg_bytes;   /* mean VmRSS over its processes' samples that read one;
	                           * 0: none did (each ran between two samples) */
	unsigned rss_samples;     /* those samples, all its processes */
	uint64_t rss_peak_bytes;  /* the highest VmHWM */
	uint64_t vcsw, ivcsw;     /* context switches, all its processes */
	/* read- and write-class system calls (/proc/PID/io syscr, syscw: read,
	 * readv, pread, write, writev, pwrite, sendfile; not sendmsg, recvmsg,
	 * poll, epoll), all its processes' threads; known only with
	 * MONITOR_NETWORK and when every process's /proc/PID/io was read */
	int sys_known;
	uint64_t syscr, syscw;
	double span_s;            /* its processes' sampled spans, added up */
};

/* Samples taken, and seconds from the first to the last. */
size_t monitor_nsamples(const struct monitor *m);
double monitor_span_s(const struct monitor *m);
/* The interval between kept samples now (doubled by each thinning), s. */
double monitor_interval_s(const struct monitor *m);

/* Fills out[0, max) with one entry per role, in order of first
 * appearance; returns the number of roles (which may exceed max). */
size_t monitor_roles(const struct monitor *m, struct monitor_role_sum *out, size_t max);

/* Bytes and packets over every interface, in and out, over the span. */
void monitor_net_totals(const struct monitor *m, uint64_t *rx_bytes, uint64_t *rx_packets,
                        uint64_t *tx_bytes, uint64_t *tx_packets);

/* Derived figures; NaN when undefined (no calls, fewer than 2 samples).
 * Pass the calls and payload bytes of the time the monitor covered.
 * CPU seconds of the role's processes (NULL: every process) per call. */
double monitor_cpu_s_per_call(const struct monitor *m, const char *role, uint64_t calls);
/* Bytes sent on every interface of the host (so loopback traffic counts
 * once) per payload byte: host-wide, whoever sent them. */
double monitor_wire_per_payload_byte(const struct monitor *m, uint64_t payload_bytes);
/* The run's own connections' bytes, both directions, per payload byte the
 * calls moved both directions (moved_bytes: an echo moves its payload
 * twice, push, pull and ack once): 1 plus the framing's share. */
double monitor_run_wire_per_payload_byte(const struct monitor *m, uint64_t moved_bytes);

/* The binary form of a monitor's series, for a process that measured
 * itself to hand them to the one that prints the result (wresult.h): at
 * most MONITOR_PACK_SAMPLES samples, spread evenly from the first to the
 * last, of at most MONITOR_PACK_PROCS processes and every interface:
 * MONITOR_PACK_MAX bytes at most. */
#define MONITOR_PACK_SAMPLES 64
#define MONITOR_PACK_PROCS 4
#define MONITOR_PACK_MAX (40 + MONITOR_PACK_PROCS * 26 + MONITOR_MAX_IFACES * 18 + \
                          MONITOR_PACK_SAMPLES * (8 + MONITOR_PACK_PROCS * 81 +    \
                                                  MONITOR_MAX_IFACES * 32))
/* Packs a stopped monitor of at least two samples into buf (cap bytes):
 * the length, or -EINVAL (not packable: merged, too many processes, fewer
 * than two samples), -ENOSPC (cap too small). */
long monitor_pack(const struct monitor *m, unsigned char *buf, size_t cap);
/* A monitor (stopped: read it, then monitor_free) from a packed form,
 * every length and value checked first: 0, -EPROTO when malformed, or
 * -ENOMEM. */
int monitor_unpack(const unsigned char *buf, size_t len, struct monitor **out);
/* One monitor of the processes of parts[0, n) (processes of one host,
 * whose monotonic clocks agree): each process keeps its own sample times,
 * t_s counts from the earliest sample of all, and the network series
 * (host-wide) is that of the part with the most samples.  0, -EINVAL, or
 * -ENOMEM. */
int monitor_merge(const struct monitor *const *parts, size_t n, struct monitor **out);

/* Writes the object "resources" under key: selected (the names of the
 * resources sampled), interval_s, span_s, samples,
 * samples_max, clock_tick_s, processes [{role, index, pid, samples: [{t_s,
 * cpu_pct, user_pct, sys_pct, rss_bytes, hwm_bytes, vcsw, ivcsw, rchar,
 * wchar, syscr, syscw}]}], net {scope as net_scope, interfaces: [{name, samples: [{t_s,
 * rx_bytes, rx_packets, tx_bytes, tx_packets}]}]} and summary {roles:
 * [... with csw_per_rpc, syscr, syscw, syscr_per_rpc, syscw_per_rpc:
 * null when unknown or calls is 0], net_scope "host" (or "namespace": one
 * side of an emulated link's, netem.h), net totals, cpu_s_per_rpc,
 * host_tx_bytes_per_payload_byte, run_wire {scope "run", measured,
 * connections, closed, to_ps_bytes, from_ps_bytes, bytes,
 * payload_bytes_moved, bytes_per_payload_byte, partial, why}}.  Counters
 * in samples are increments over the interval ending at t_s. */
void monitor_json(const struct monitor *m, struct json *w, const char *key, uint64_t calls,
                  uint64_t payload_bytes, uint64_t moved_bytes);
/* The same keys into the object open in w. */
void monitor_json_keys(const struct monitor *m, struct json *w, uint64_t calls,
                       uint64_t payload_bytes, uint64_t moved_bytes);
/* Writes the series as CSV, one row per process or interface and sample:
 * t_s,kind,role,index,pid,iface,cpu_pct,user_pct,sys_pct,rss_bytes,
 * hwm_bytes,vcsw,ivcsw,rchar,wchar,rx_bytes,rx_packets,tx_bytes,tx_packets,
 * syscr,syscw (kind "proc" or "net_host", the host-wide interface counters; the other
 * kind's fields empty; net_host rows and the
 * columns of resources not selected left out).  0, or -1 when
 * the stream reports an error. */
int monitor_csv(const struct monitor *m, FILE *f);
/* monitor_csv into a new file at path.  0 or -errno. */
int monitor_csv_file(const struct monitor *m, const char *path);
/* Comment lines for the text report: per role averages and peaks, then
 * the network and the derived figures. */
void monitor_text(const struct monitor *m, FILE *f, uint64_t calls, uint64_t payload_bytes,
                  uint64_t moved_bytes);

#endif
