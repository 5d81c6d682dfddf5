/* netem.h - the emulated link of [network] (tfgb.ini(5), NETWORK): the
 * PSs on one side, the workers on the other, each side in a network
 * namespace of its own, joined by a link that delays, drops and shapes.
 *
 * How it is built (no netem needed; this kernel has none): each side has a
 * TUN device, 198.18.0.1 (the PSs) and 198.18.0.2 (the workers), point to
 * point.  A forwarder process, forked from the caller, reads each packet a
 * side sends, drops it with the loss probability, holds it for the delay
 * (+- jitter, uniform, never reordering) in a queue sized from the
 * bandwidth-delay product, and writes it into the other side.  The route
 * itself takes time (two TUN devices and the forwarder's wake-ups each
 * way, some 0.1 ms a direction here): calibration measures it with a
 * short hold and takes half of it out of each direction's hold, so that
 * the round trip is twice the delay (netem_calibrate).  Each TUN device's
 * queue is as long as the forwarder's (a TUN device drops what its queue
 * cannot take, 500 packets by default); what either drops is counted.  The rate is
 * a TBF on each TUN device's egress (tc), so a packet is shaped, then
 * delayed.  TUN devices carry MTU-sized packets (no segmentation offload),
 * so the forwarder and the loss see what the wire would (TBF sees TCP's
 * GSO packets and charges their wire bytes: netem.c, side_rate).  The "tun"
 * route.  Without delay and jitter no packet needs the forwarder (which
 * stops near half a Gbit/s): the "veth" route joins the sides with a veth
 * pair (ip link add), its ends at the same addresses in a /30, TSO, GSO
 * and GRO off (ethtool ioctls: the pair carries wire-sized packets), the
 * same TBF on each end, and for the loss an nftables rule in each side's
 * namespace that drops packets arriving on its end at random (the nft
 * program, run as tc and ip are; no library).  Where nft is missing or
 * cannot drop, the loss takes the tun route instead, said on stderr and
 * in the result (mechanism.loss_note): the forwarder's loss is as right,
 * only a rate near a Gbit/s is not reached, and that is flagged OFF.  The
 * kernel's netem is looked for and recorded, not used:
 * no machine of this project has it, so such a route could not be tested.
 *
 * Each side's namespace starts its connections with network.congestion's
 * TCP congestion control (its default, tcp_congestion_control), or the
 * host's when it is "system"; the result records the one used.
 *
 * The namespaces have no names: they live as long as a process or a
 * descriptor holds them, so a run that ends in any way (error, Ctrl-C,
 * SIGKILL) leaves nothing behind; the forwarder dies 0.5 s after its parent
 * (PR_SET_PDEATHSIG SIGHUP), once the last packets of the processes that
 * died with it crossed.  Root is needed, or user namespaces: without root,
 * netem_start makes this process root of a user namespace of its own
 * first, which it can only do before it starts threads; netem_stop then
 * leaves the thread in the link's last namespace (it cannot go back to one
 * its user namespace does not own); tc, ip and nft run in that user
 * namespace too.  The tun route also needs /dev/net/tun open to the
 * user.
 *
 * The switch (network.topology = switch): every process of a run is a
 * host of its own, host h in a namespace of its own with one NIC, "tfgb<h>",
 * at 198.18.1.<h+1>/24 (job_net_host: PS i is host i, worker w host
 * ps_count + w, rank r host r), the host end of a veth pair whose other
 * end, "sw<h>", is a port of one Linux bridge in a switch namespace (no
 * address there).  The rate is a TBF on both ends' egress, the same as the
 * pair's (side_rate): the host end shapes what the host sends, the switch
 * end what it receives, so that four workers pushing to one PS share that
 * PS's one NIC and a ring moves no more than the rate through any NIC.
 * The loss is the pair's nftables rule in each host's namespace, on what
 * arrives at its NIC: a packet between two hosts is dropped with the
 * probability once, as on the pair.  Offloads are off on every end, as on
 * the pair's.  With a delay or jitter (the kernel has no netem) the switch
 * is a forwarder instead (netem_swfwd.c): each host's NIC is a TUN device,
 * one process reads them all and writes each packet into the TUN device of
 * the host it is addressed to; each receiving NIC is a queue of its own,
 * drained at the rate and held for the delay; the TBF on each TUN device
 * shapes what its host sends, the forwarder drops the loss.  One process
 * for every NIC carries about half a Gbit/s in all on one core, so that
 * route suits rates of a few hundred Mbit/s summed over the NICs that move
 * at once; calibration flags what it did not reach.  Calibration measures
 * host 1 -> host 0 through host 0's NIC (netem_calibrate, unchanged: host
 * 0 stands for the PS side, host 1 for the workers'), the thread ends in
 * host 0's namespace, where the launcher and its control service live.
 * The processes a run starts print the result of a run of ranks; they get
 * the calibration's figures through NETEM_SWITCH_ENV (netem_export), and
 * their "network" object says the per-NIC counts are the launcher's,
 * which it does not see.
 *
 * One emulated link per process; not thread-safe: call it from the
 * launcher's one thread, before any transport starts threads.
 */
#ifndef TFGB_NETEM_H
#define TFGB_NETEM_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "err.h"

struct json;

#define NETEM_PS_ADDR "198.18.0.1"
#define NETEM_WORKER_ADDR "198.18.0.2"
/* The environment variable that tells a child of an emulated run that its
 * PSs are at NETEM_PS_ADDR (its value). */
#define NETEM_ENV "TFGB_NET_PS_HOST"
/* ... and, in a switch, the calibration's figures (netem_export) */
#define NETEM_SWITCH_ENV "TFGB_NET_SWITCH"

enum { NETEM_TOPO_PAIR, NETEM_TOPO_SWITCH };

struct netem_cfg {
	uint64_t delay_ns, jitter_ns; /* one-way, each direction */
	int64_t rate_bps;             /* each direction; 0: unlimited */
	int64_t loss_ppm;             /* each direction, parts per million */
	uint64_t seed;                /* of the loss and jitter draws */
	char cc[16];                  /* TCP congestion control of both sides; "": the host's */
	int topology;                 /* NETEM_TOPO_PAIR or NETEM_TOPO_SWITCH */
	int hosts, ps_hosts;          /* the switch's hosts (2..64), the first ps_hosts the PSs */
	/* the switch: host slow_host's NIC at slow_rate_bps rather than
	 * rate_bps (fault.rate), each direction; slow_rate_bps 0: none */
	int slow_host;
	int64_t slow_rate_bps;
};

/* What calibration measured (netem_calibrate); a figure not measured is
 * negative. */
struct netem_measured {
	double rtt_ms;        /* median round trip of a 1-byte TCP echo */
	double own_rtt_ms;    /* the tun route's own round trip (forwarder, TUN
	                       * devices, wake-ups), held out of the delay */
	uint64_t hold_ns;     /* what the forwarder holds a packet: delay less half of own_rtt_ms */
	double rate_bps;      /* a bulk TCP transfer workers -> PSs: IP bytes on the link */
	double goodput_bps;   /* the same transfer's TCP payload */
	double all_goodput_bps; /* the switch's forwarder: every host to the next at once,
	                         * their payload summed; -1 not measured */
	double loss_pct[2];   /* drops / packets (forwarder's or nftables'): [0] workers -> PSs, [1] back */
	uint64_t packets[2], dropped[2], overflow[2]; /* over the whole run */
	uint64_t dev_drops[2]; /* dropped by the sending side's TUN device (its queue full) */
	int64_t retrans[2];   /* TCP RetransSegs of each side's namespace ([NETEM_PS], ...) */
	int off;              /* bit 0 delay, 1 rate, 2 loss: more than 10 % off */
};

enum { NETEM_PS = 0, NETEM_WORKER = 1 };

/* Builds the link and leaves the calling thread in the PS side's
 * namespace.  0; -1 with err when the link cannot be had here (the
 * message names the knob or the rights and why: a job error, exit 2); -2
 * with err on a run-time failure. */
int netem_start(const struct netem_cfg *cfg, struct err *err);
/* Moves the calling thread into a side's namespace (children forked then
 * start there; in the switch, side is a host's index): 0, or -1 with err. */
int netem_enter(int side, struct err *err);
/* Measures the link (a few round trips; with a rate, a bulk transfer of
 * about half a second): 0, or -1 with err. */
int netem_calibrate(struct err *err);
/* Whether the tun route's forwarder has ended before netem_stop: pid and
 * status of a child the caller reaped (its own wait of any child), or pid
 * 0 to ask here.  1 with err naming the link and how it ended (the
 * workers' failures that follow are its doing); 0 while it runs, for
 * another pid, and on the veth route (no forwarder). */
int netem_lost(pid_t pid, int status, struct err *err);
/* Stops the forwarder, closes the namespaces and returns the thread to its
 * first namespace.  Safe to call twice, or without netem_start. */
void netem_stop(void);

/* The "network" object of a result (configured, how it is built,
 * measured), and the report's line; nothing when no link was built. */
void netem_json(struct json *w);
void netem_text(FILE *f);
/* 1 while a link is up or its figures are kept. */
int netem_active(void);
/* 1 while the link is the switch (netem_enter takes a host's index). */
int netem_switched(void);
/* In a switch: the calibration's figures into NETEM_SWITCH_ENV, for the
 * processes of the run that print its result; its first two numbers are
 * the switch's hosts and PSs (the monitor reads them). */
void netem_export(void);

#endif
