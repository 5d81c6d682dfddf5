/* tr_verbs_srv.h - what the verbs server's two files share: the
 * connection, worker and server state, and the few functions the acceptor
 * (tr_verbs_accept.c) calls in the serving side (tr_verbs_serve.c).
 * Internal to those two files.
 */
#ifndef TFGB_TR_VERBS_SRV_H
#define TFGB_TR_VERBS_SRV_H

#include "tr_verbs.h"

#include <pthread.h>
#include <stdatomic.h>

#include "bench.h"
#include "codec.h"

#define VB_IDLE_NS 50000000ull       /* a worker without connections sleeps this long */
#define VB_HELLO_NS 5000000000ull    /* longest hello exchange */
#define VB_THREADS_MAX 64
#define VB_BACKLOG 128
#define VB_REPLY_WRS 8               /* work requests of one reply: body WRITEs and header */

struct srv;
struct srv_thread;

struct sconn {
	struct srv_thread *t;
	struct sconn *in_next;         /* the worker's inbox */
	struct vb_ep ep;
	int fd;                        /* the side channel */
	uint32_t eager, peer_slot_size;
	uint32_t reply_wrs;            /* send entries the longest reply takes */
	uint32_t recvd, replied;       /* requests arrived, requests answered */
	int dead;
	char peer[OPT_HOST_MAX + 16];
	char why[ERR_MAX];
};

struct srv_thread {
	struct srv *s;
	pthread_t tid;
	int started;
	struct vdev_chan *ch;          /* poll = event */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic(struct sconn *) inbox; /* pushed and taken under lock; peeked without */
	atomic_int load;               /* connections, the inbox's included */
	struct sconn **conn;
	size_t nconn, capconn;
	struct codec_arena arena;      /* EchoTensor/AckTensor: the unpacked request ... */
	struct codec_buf out;          /* ... and its packed reply, for one call */
	struct codec_tf tf;            /* *TensorZeroCopy: the reply's pieces, for one call */
};

/* The Pull pattern, registered. */
struct pull_buf {
	unsigned char *p;
	size_t len;
	struct vdev_mr *mr;
};

struct srv {
	const struct vb_ctx *x;
	const struct tr_server_cfg *cfg;
	struct bench bench;            /* the method rules; Pull's bytes from pull (vb_pattern_of) */
	struct vdev *d;
	struct vdev_attr attr;
	struct srv_thread *t;
	int nt;
	atomic_int stop;
	pthread_mutex_t pull_lock;
	_Atomic(struct pull_buf *) pull;
	int *lfd;
	size_t nl;
};

/* Releases connection k: its endpoint and side channel.  k may be one
 * that vb_ep_open failed on.  Acceptor or k's worker. */
void vb_sconn_free(struct sconn *k);
/* bench's pattern callback: the registered Pull pattern of the server arg
 * (a struct srv), made on the first call; NULL when it cannot be. */
const void *vb_pattern_of(void *arg, uint64_t n);
/* Sets worker t of s up and starts it.  0, or -errno with err set; t is
 * vb_threads_stop's to clean up either way. */
int vb_thread_start(struct srv *s, struct srv_thread *t, struct err *err);
/* Stops the workers of s that vb_thread_start set up, and frees their state. */
void vb_threads_stop(struct srv *s);

#endif
