/* sk_serve_int.h - what the socket transport's server shares between its
 * two files: the connection (struct sconn) with its parsing and replies in
 * tr_socket_serve.c, and the threads, listeners and serve loop (struct
 * sthread, struct srv, struct slisten, sk_serve) in tr_socket_loop.c.
 * tr_socket_serve.c's opening comment describes the server.
 *
 * Internal to src/transport/socket; a connection and its thread's state are
 * only touched by that thread.
 */
#ifndef TFGB_SK_SERVE_INT_H
#define TFGB_SK_SERVE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"
#include "codec.h"
#include "frame.h"
#include "tr_socket.h"

#define SRV_BUF (256u * 1024)            /* input buffer per connection */
#define SRV_OSEG 64                      /* reply segments queued per connection */
#define SRV_EVENTS 64
#define SRV_TICK_MS 50                   /* *stop and timers are checked this often */
#define SRV_LINGER_NS 2000000000ull      /* discarding after a last reply, at most */
#define SRV_ACCEPT_BATCH 8
#define SRV_ACCEPT_PAUSE_NS 100000000ull /* out of descriptors: stop accepting this long */
#define SRV_BLOCK_ROUNDS 64              /* blocking reads between two epoll_waits */
#define SRV_SCRATCH (1u << 20)           /* per thread: dropped body bytes */
#define SRV_SKIP_MIN (64u * 1024)        /* bodies left to drop that go there */

enum { EP_LISTEN = 1, EP_CONN };
enum { RQ_HDR, RQ_BODY };
enum { BODY_ECHO, BODY_ACK, BODY_PULL, BODY_TENSOR, BODY_INFO, BODY_DROP };
enum {
	CS_OPEN,    /* reading requests */
	CS_DRAIN,   /* the peer closed its side: write what is queued, then close */
	CS_REFUSE,  /* an oversized request: write the error reply, then linger */
	CS_LINGER,  /* our side is shut: discard input until EOF or the deadline */
};

/* One piece of reply: inline bytes (a header, an Ack), echo bytes in the
 * input buffer (an Echo's reply header among them), or Pull pattern bytes. */
struct oseg {
	const unsigned char *p;
	size_t len;
	unsigned char inbuf; /* points into the connection's input buffer */
	unsigned char tout;  /* points into a tensor buffer of the connection (tin, tout, tf) */
	unsigned char zc;    /* send with MSG_ZEROCOPY */
	unsigned char inl[FRAME_HDR_LEN + 8];
};

struct srv;
struct sthread;

struct sconn {
	int kind;                    /* EP_CONN: first, as epoll data */
	struct sthread *t;
	struct sconn *prev, *next;   /* the thread's connections */
	int fd;
	int state;                   /* CS_* */
	uint32_t ev;                 /* the epoll mask in force */
	uint64_t deadline_ns;        /* CS_DRAIN, CS_REFUSE, CS_LINGER: close by then */
	unsigned char *buf;          /* SRV_BUF bytes; unparsed input is [head, tail) */
	size_t head, tail;
	unsigned bufrefs;            /* queued segments that point into buf */
	int rq, body;                /* RQ_*, BODY_* */
	unsigned method;
	unsigned drop_status;        /* BODY_DROP: the status of its reply */
	uint64_t left, total;        /* body bytes still to read, body length */
	uint64_t nreq;               /* requests answered: progress, for sconn_advance */
	unsigned rstatus;            /* the status of the last reply header queued */
	unsigned char arg[TR_INFO_REQ_MAX]; /* Pull's request, Info's first bytes */
	/* EchoTensor and AckTensor */
	const unsigned char *tbody;  /* the whole body, in buf or in tin */
	struct codec_buf tin;        /* a body that did not arrive whole in buf */
	struct codec_buf tout;       /* an EchoTensor reply, until it has left */
	struct codec_tf tf;          /* a *TensorZeroCopy reply in pieces, until it has left */
	size_t tf_next, tf_end;      /* its pieces not yet queued: [tf_next, tf_end) */
	unsigned trefs;              /* queued segments that point into tin, tout or tf */
	struct oseg out[SRV_OSEG];   /* ring */
	unsigned ohead, ocount;
	size_t ooff;                 /* bytes of out[ohead] already written */
};

struct slisten {
	int kind;                    /* EP_LISTEN */
	int fd;
};

struct sthread {
	struct srv *s;
	int epfd;
	pthread_t thread;
	int started;
	struct sconn conns;          /* list head */
	int nconn;
	int block_rounds;            /* see sconn_block */
	unsigned char *scratch;      /* SRV_SCRATCH bytes, or NULL */
	struct codec_arena arena;    /* EchoTensor/AckTensor: the unpacked request */
	uint64_t accept_resume_ns;   /* 0: accepting */
	int rc;
};

struct srv {
	const struct tr_server_cfg *cfg;
	struct sk_opts o;
	struct slisten *ls;
	size_t nls;
	struct sthread *t;
	int nt;
	atomic_int quit;             /* a thread failed: everyone stops */
	struct bench bench;          /* the method rules; its Pull pattern shared by every thread */
};

/* tr_socket_serve.c: the connection's side, called by the serve loop. */

/* Unlinks, unmaps and closes k and frees it. */
void sconn_close(struct sconn *k);
/* Makes room in the input buffer; the free bytes at its end. */
size_t sconn_room(struct sconn *k);
/* One read: `flags` 0 waits (sconn_block), MSG_DONTWAIT does not; with
 * `discard` the bytes are dropped.  1 when bytes came, 0 when none are
 * there now, -1 at EOF or on an error. */
int sconn_recv(struct sconn *k, int discard, int flags);
/* Runs the connection's state machine after a read that returned r
 * (sconn_recv's value; 0 when nothing was read).  0, or -1 when it was
 * closed. */
int sconn_advance(struct sconn *k, int r);

#endif
