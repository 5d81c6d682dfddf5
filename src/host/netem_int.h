/* netem_int.h - what netem.c (the link: namespaces, forwarder, routes)
 * and netem_measure.c (its calibration, counters and the result's
 * "network" object) share: the one link's state.  Not for other files:
 * netem.h is the interface.  Included after it. */
#ifndef TFGB_NETEM_INT_H
#define TFGB_NETEM_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <signal.h>

/* after netem.h (struct netem_cfg, struct netem_measured) */

#define MTU 1500
#define NETEM_SLOT 2048 /* bytes a queued packet takes: MTU and room */
#define NETEM_HOSTS_MAX 64 /* the switch's hosts at most (JOB_NET_HOSTS_MAX) */

/* The forwarder's counters, shared with the parent (a MAP_SHARED page). */
struct counters {
	volatile uint64_t packets[2], dropped[2], overflow[2], bytes[2];
	volatile uint64_t hold_ns; /* each packet's hold (+- jitter), set by the parent */
	volatile int no_loss;      /* set while calibration measures the link */
	/* the switch's forwarder: what arrived for each host, what it dropped */
	volatile uint64_t sw_seen[NETEM_HOSTS_MAX], sw_dropped[NETEM_HOSTS_MAX];
};

/* One NIC of the switch, counted where it is (its host's namespace):
 * what the host received and sent, its loss rule's packets, its TCP. */
struct netem_nic {
	uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;
	uint64_t seen, dropped; /* the loss's (arriving packets) */
	uint64_t dev_drops;     /* its TUN device's (the forwarder fell behind) */
	int64_t retrans;        /* TCP RetransSegs of the host's namespace; -1 unknown */
};

/* The link of this process (one at most). */
struct netem_state {
	int up;              /* netem_start succeeded and netem_stop not yet called */
	int kept;            /* the figures are there for the report */
	int orig_fd, ns[2];  /* the first namespace; the two sides' */
	int tun[2];          /* each side's TUN device */
	pid_t fwd;
	struct counters *cnt;
	struct netem_cfg cfg;
	struct netem_measured m;
	size_t queue;        /* packets per direction */
	char rate_how[32];   /* "tbf" or "none" */
	int route;           /* ROUTE_TUN or ROUTE_VETH */
	int kernel_netem;    /* 1: this kernel has netem (unused), 0: not */
	int offloads_on;     /* veth: bit 0 TSO, 1 GSO, 2 GRO still on (an end said so) */
	int loss_how;        /* LOSS_NONE, LOSS_FWD or LOSS_NFT */
	char loss_note[192]; /* why a loss the veth route could drop is the forwarder's */
	char cc_used[16];    /* the TCP congestion control the sides' namespaces use */
	uint64_t dev_base[2]; /* the TUN devices' drops when calibration ended */
	/* the switch (cfg.topology NETEM_TOPO_SWITCH): each host's namespace,
	 * the switch's, each NIC's counts (netem_switch.c) */
	int *hns, sw_ns;
	int *stun;            /* each host's TUN device (a delay or jitter) */
	struct netem_nic *nic, *nic_base; /* now, and when calibration ended */
	int imported;         /* the figures are a launcher's (NETEM_SWITCH_ENV) */
};
extern struct netem_state ne;

/* How the two sides are joined: through the forwarder (every knob), or,
 * without delay and jitter, a veth pair the kernel carries at its speed,
 * shaped by TBF and made lossy by nftables. */
enum { ROUTE_TUN, ROUTE_VETH };
/* Who drops: nobody (no loss asked), the forwarder (tun route), or an
 * nftables rule on each veth end (side_loss). */
enum { LOSS_NONE, LOSS_FWD, LOSS_NFT };

/* The forwarder's: its random numbers, and the signals that stop it. */
uint64_t netem_rnd(void);
extern volatile sig_atomic_t netem_fwd_stop, netem_fwd_orphan;
/* The forwarder's loop, in its child, until SIGTERM or 0.5 s after its
 * parent's death (never returns): step(arg, now) reads what arrived and
 * writes what is due, and says when the next packet is due (0: none);
 * between passes it waits for that or for one of pf's n devices. */
struct pollfd;
void netem_fwd_loop(struct pollfd *pf, unsigned long n, uint64_t (*step)(void *, uint64_t),
                    void *arg);
/* netem_swfwd.c: the switch's forwarder (never returns). */
void netem_switch_forward(void);

/* netem_sys.c: what both topologies ask of the system.  Each returns 0,
 * or -1 with err (the file and tool helpers: -1, errno set). */
/* 1 once this process made itself a user namespace (netem_new_ns): it
 * cannot go back to its first network namespace then. */
extern int netem_in_userns;
int netem_write_file(const char *path, const char *text);
/* A /proc/sys file's first line into buf (newline cut). */
int netem_read_line(const char *path, char *buf, size_t size);
/* A new network namespace for the calling thread, its descriptor in *fd. */
int netem_new_ns(int *fd, struct err *err);
struct ifreq;
int netem_if_ioctl(int s, unsigned long req, struct ifreq *r, const char *what,
                   struct err *err);
/* The current namespace's loopback up (s: any AF_INET socket of it). */
int netem_lo_up(int s, struct err *err);
/* A veth end without TSO, GSO and GRO (ne.offloads_on says what stayed on). */
int netem_offloads_off(int s, const char *dev, struct err *err);
/* Where tc, ip or nft is: 1 with its path in buf, or 0. */
int netem_tool_find(const char *name, char *buf, size_t size);
/* Runs argv in the current namespace within 5 s, its output in out (when
 * not NULL); -1 with its first line of errors in err. */
int netem_run_out(char *const argv[], char *out, size_t size, struct err *err);
int netem_run_cmd(char *const argv[], struct err *err);

/* netem.c's helpers that the measurements use too. */
void netem_addr_set(struct sockaddr *sa, const char *ip);
/* Waits until fd is ready for events by the deadline: 0, or -1 (also
 * within 0.1 s of a signal: tfgb_stop, util.h). */
int netem_wait_fd(int fd, short events, uint64_t until);
/* The packets side_loss's rule saw and dropped in the calling thread's
 * namespace so far: 0, or -1. */
int netem_loss_count(uint64_t *seen, uint64_t *dropped);
/* The veth route's loss rules taken away (off 1) and made again, counters
 * at 0 (off 0), on both sides; the thread ends on the PS side.  0, or -1
 * with err. */
int netem_loss_hold(int off, struct err *err);
/* netem_measure.c: the link's packet counts into ne.m while it is up
 * (netem_stop takes them last). */
void netem_counters_take(void);
/* Flags the loss OFF (ne.m.off bit 2) when ne.m's count of packets [0]
 * and drops of them is more than 10 % and three standard deviations from
 * the loss asked. */
void netem_loss_off(void);
/* The counters of device dev in the calling thread's namespace: v[0]
 * bytes and v[1] packets received, v[2] bytes and v[3] packets sent.  0,
 * or -1. */
int netem_dev_counts(const char *dev, uint64_t v[4]);
/* The packets TUN device "tfgb<side>" (in the switch: host side's NIC)
 * dropped on its way out so far, its queue full (the forwarder did not read
 * it in time); the thread moves to that side.  0 when unknown. */
uint64_t netem_tun_drops(int side);
/* Flags the loss OFF (ne.m.off bit 2) when the packets the emulator
 * dropped itself (extra, of sent) are past a tenth of the loss asked and
 * 0.1 % of what was sent, and past 10 packets. */
void netem_extra_off(double sent, double extra);
/* TCP segments retransmitted in the calling thread's namespace, or -1. */
int64_t netem_retrans_here(void);
/* netem_switch.c: the switch's counts (each NIC's, into ne.nic, and the
 * loss's sums into ne.m), its "network" object and text line. */
void netem_switch_take(void);
/* Host h's NIC's rate, each direction (netem_cfg: slow_host's, or
 * rate_bps); 0: unlimited. */
int64_t netem_nic_rate(int h);
/* The "network" object's shared parts: a figure or null when negative;
 * congestion control, offloads, the forwarder's queue and hold,
 * kernel_netem, the end of "mechanism" and the calibration's figures at
 * the start of "measured"; the "off" list and the object's end. */
void netem_opt_f64(struct json *w, const char *key, double v, int digits);
void netem_tail_json(struct json *w);
void netem_off_json(struct json *w);
/* The NICs' counts now are the run's zero (calibration's end). */
void netem_switch_base(void);
void netem_switch_json(struct json *w);
void netem_switch_text(FILE *f);
/* The figures a launcher exported (NETEM_SWITCH_ENV) into ne, kept: 0, or
 * -1 when there are none. */
int netem_import(void);

#endif
