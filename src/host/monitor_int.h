/* monitor_int.h - a monitor's samples, shared by monitor.c (sampling and
 * figures) and monitor_out.c (JSON, CSV and text).  Not for other modules:
 * monitor.h is the interface.  Include monitor.h first. */
#ifndef TFGB_MONITOR_INT_H
#define TFGB_MONITOR_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

struct tcpbytes_sum;

/* One process at one sample: the kernel's cumulative counters. */
struct psample {
	uint64_t utime, stime;      /* clock ticks */
	uint64_t rss, hwm;          /* bytes */
	uint64_t vcsw, ivcsw;
	uint64_t rchar, wchar;
	/* /proc/PID/io's syscr and syscw: the read- and write-class system
	 * calls of all its threads (read, readv, pread*, write, writev,
	 * pwrite*, sendfile, copy_file_range), not sendmsg, recvmsg, send,
	 * recv, poll or epoll */
	uint64_t syscr, syscw;
	unsigned char ok;           /* /proc/PID/stat and status were read */
	unsigned char io;           /* /proc/PID/io was read */
	unsigned char sysc;         /* syscr and syscw are known (io, and not
	                             * from a version 1 packed series) */
};

/* One interface at one sample. */
struct nsample {
	uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;
};

/* The context switches of another process's threads as last seen, so
 * that a thread that ends keeps what it had counted (monitor.c). */
struct tid_csw {
	pid_t tid;
	int seen;                   /* in the last read of /proc/PID/task */
	uint64_t vcsw, ivcsw;
};
struct tids {
	struct tid_csw *t;
	size_t n, cap;
	uint64_t gone_vcsw, gone_ivcsw; /* of its threads that ended */
};

struct proc {
	char role[MONITOR_ROLE_MAX];
	int index;
	pid_t pid;
	int exited;           /* monitor_exited told its final figures (under lock) */
	struct psample final;
};

struct monitor {
	struct proc *procs;
	size_t nprocs;
	char ifname[MONITOR_MAX_IFACES][MONITOR_IFACE_MAX];
	size_t nif;
	uint64_t interval0_ns;     /* as asked */
	uint64_t interval_ns;      /* now, after any thinning */
	size_t max, n;             /* samples kept per series, at most max */
	uint64_t *t;               /* [max] now_ns() of each sample */
	/* a merged monitor (monitor_merge): each process's own sample times,
	 * [nprocs][max], 0 past its last; t is then the network's.  NULL in a
	 * sampling monitor, whose processes share t */
	uint64_t *pt;
	uint64_t t0;               /* merged: the earliest time of all, t_s's zero */
	struct psample *ps;        /* [nprocs][max] */
	struct tids *tids;         /* [nprocs] of a sampling monitor, else NULL */
	struct nsample *ns;        /* [MONITOR_MAX_IFACES][max] */
	double tick_s;
	unsigned what;             /* MONITOR_* sampled and reported */
	int net_ns;                /* /proc/net/dev is one side of the emulated link's
	                            * namespace, not the host's (netem.h) */
	int net_switch;            /* ... of per-host links: PS 0's host's (netem.h) */
	int net_switch_ps;         /* the switch's PSs; 0 when not known or no switch */
	struct tcpbytes *wire;         /* the run's own connections (monitor_ports), or NULL */
	/* the thread */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;       /* on CLOCK_MONOTONIC */
	int running, stop, sync_ok;
	int ring;                  /* monitor_ring: n and the samples change under lock */
};

/* Process p's sample k (p < nprocs, k < max). */
static inline const struct psample *monitor_ps_at(const struct monitor *m, size_t p, size_t k)
{
	return &m->ps[p * m->max + k];
}

/* When sample k of process p was taken (its own time in a merged
 * monitor; 0 for a slot past its last). */
static inline uint64_t monitor_pt_at(const struct monitor *m, size_t p, size_t k)
{
	return m->pt ? m->pt[p * m->max + k] : m->t[k];
}

/* The time the series' t_s counts from. */
static inline uint64_t monitor_t_zero(const struct monitor *m)
{
	return m->pt ? m->t0 : m->t[0];
}

/* b - a of a counter that should only grow; 0 when it went back. */
static inline uint64_t monitor_delta(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0;
}

/* CPU % of one core of process p over the interval ending at sample k
 * (k >= 1, both ends read); user and system apart.  -1 when undefined. */
int monitor_interval_cpu(const struct monitor *m, size_t p, size_t k, double *user,
                         double *sys);
/* The run's own connections: ok 0 (with why) when not counted. */
void monitor_run_wire(const struct monitor *m, struct tcpbytes_sum *w);

#endif
