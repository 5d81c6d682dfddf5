/* bench/coll_threads.c - tfgb's collective engine (src/engine/coll.c) over
 * the collective sides of two transports, N ranks as threads of this one
 * process: verbs over the simulated device (vdev_sim, which moves bytes
 * with memcpy inside the process) and socket over TCP on loopback.
 *
 * Why threads: the simulated device reaches only devices opened in the
 * same process, so simulated verbs cannot run between the processes of
 * `tfgb collective`; to set its figure beside socket's under the same
 * conditions, both run here the same way: one thread a rank, each with
 * its own link (verbs: its own simulated device and RC queue pairs,
 * socket: its own TCP mesh), the buffers registered once, the same
 * all-reduce (ring) code.  What the verbs figure measures is the
 * protocol (two RDMA writes with immediate a step, a clear-to-send's
 * round trip) over a memcpy fabric: not RDMA hardware.
 *
 * Per size: W warm-up operations, then I measured ones, every rank
 * starting each at a barrier; an operation's time is its slowest rank's
 * (nccl-tests'); printed: the median time, algbw = S / t and busbw =
 * algbw x 2(N-1)/N, in GB/s (1e9 bytes).  The first and last measured
 * operations are verified on every rank (coll_check).
 *
 *   bench/coll_threads [-n RANKS] [-i ITERS] [-w WARMUP] [-t socket,verbs]
 *                      [-e] MIN_BYTES MAX_BYTES
 * sizes MIN, x2, .. MAX; -e: verbs.poll = event (default busy).
 * Build: make bench/coll_threads.  Exit status 0, 1 when a run failed or
 * an element was wrong, 2 on bad arguments.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"
#include "tr_socket.h"
#include "tr_verbs.h"
#include "util.h"

#define RANKS_MAX 16
#define ITERS_MAX 1000

struct bench {
	int n, iters, warmup, event;
	const struct tr_coll_ops *ops;
	int verbs;
	struct opt_hostport addrs[RANKS_MAX];
	uint64_t bytes;
	pthread_barrier_t bar;
	uint64_t t_ns[RANKS_MAX][ITERS_MAX];
	uint64_t wrong;
	int failed;
};

struct rank {
	struct bench *b;
	int rank;
	pthread_t th;
};

static int rank_open(struct bench *b, int rank, void **ctx, struct coll *c, struct err *err)
{
	struct tr_link_cfg cfg = {.rank = rank, .nranks = b->n, .addrs = b->addrs,
	                          .timeout_ns = 60000000000ull};
	struct vb_opts o;
	int rc;

	*ctx = NULL;
	if (b->verbs) {
		vb_opts_default(&o);
		o.poll_event = b->event;
		if ((rc = tr_verbs_ctx_new(&o, &vdev_sim_ops, ctx, err)) < 0)
			return rc;
	}
	if ((rc = coll_init(c, rank, b->n, COLL_ALLREDUCE, COLL_RING, b->bytes)) < 0) {
		err_set(err, "out of memory");
		return rc;
	}
	c->ops = b->ops;
	c->timeout_ns = cfg.timeout_ns;
	if ((rc = b->ops->open(*ctx, &cfg, &c->link, err)) < 0)
		return rc;
	if (b->ops->reg && ((rc = b->ops->reg(c->link, c->buf, c->cap * sizeof(float), err)) < 0 ||
	                    (rc = b->ops->reg(c->link, c->scratch, c->cap * sizeof(float), err)) < 0))
		return rc;
	return 0;
}

static void *rank_main(void *arg)
{
	struct rank *r = arg;
	struct bench *b = r->b;
	struct err err = {{0}};
	struct coll c = {0};
	void *ctx;
	size_t count = (size_t)(b->bytes / sizeof(float)), bad;
	float got, want;
	int rc = rank_open(b, r->rank, &ctx, &c, &err);

	for (int i = 0; rc == 0 && i < b->warmup + b->iters; i++) {
		int m = i - b->warmup;
		uint64_t t0;
		coll_fill(&c, count);
		pthread_barrier_wait(&b->bar);
		t0 = now_ns();
		rc = coll_run(&c, count, &err);
		if (m >= 0)
			b->t_ns[r->rank][m] = now_ns() - t0;
		if (rc == 0 && (m == 0 || m == b->iters - 1))
			__atomic_add_fetch(&b->wrong, coll_check(&c, count, &bad, &got, &want),
			                   __ATOMIC_RELAXED);
	}
	if (rc < 0) {
		fprintf(stderr, "coll_threads: rank %d: %s\n", r->rank, err.msg);
		b->failed = 1;
		/* the others wait at the barrier or in a step: end the process */
		exit(1);
	}
	if (c.link)
		b->ops->close(c.link);
	coll_free(&c);
	free(ctx);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* n loopback ports free a moment ago. */
static int free_ports(struct opt_hostport *a, int n)
{
	int fd[RANKS_MAX];

	for (int i = 0; i < n; i++) {
		struct sockaddr_in s = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof s;
		if ((fd[i] = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    bind(fd[i], (struct sockaddr *)&s, sizeof s) < 0 ||
		    getsockname(fd[i], (struct sockaddr *)&s, &len) < 0)
			return -1;
		snprintf(a[i].host, sizeof a[i].host, "127.0.0.1");
		a[i].port = ntohs(s.sin_port);
	}
	for (int i = 0; i < n; i++)
		close(fd[i]);
	return 0;
}

/* One size over one transport: a row, or -1. */
static int run_size(struct bench *b, const char *name)
{
	struct rank r[RANKS_MAX];
	uint64_t op[ITERS_MAX], t;
	double gbs;

	if (free_ports(b->addrs, b->n) < 0 || pthread_barrier_init(&b->bar, NULL, (unsigned)b->n))
		return -1;
	b->wrong = 0;
	for (int i = 0; i < b->n; i++) {
		r[i] = (struct rank){.b = b, .rank = i};
		if (pthread_create(&r[i].th, NULL, rank_main, &r[i]))
			return -1;
	}
	for (int i = 0; i < b->n; i++)
		pthread_join(r[i].th, NULL);
	pthread_barrier_destroy(&b->bar);
	for (int m = 0; m < b->iters; m++) {
		op[m] = 0;
		for (int i = 0; i < b->n; i++)
			op[m] = b->t_ns[i][m] > op[m] ? b->t_ns[i][m] : op[m];
	}
	qsort(op, (size_t)b->iters, sizeof *op, cmp_u64);
	t = op[b->iters / 2];
	gbs = (double)(b->bytes / sizeof(float) * sizeof(float)) / (double)t;
	printf("%-7s %2d %10llu %12.1f %8.3f %8.3f %s\n", name, b->n, (unsigned long long)b->bytes,
	       (double)t / 1e3, gbs, gbs * 2.0 * (b->n - 1) / b->n, b->wrong ? "WRONG" : "ok");
	fflush(stdout);
	return b->wrong ? -1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench/coll_threads [-n RANKS] [-i ITERS] [-w WARMUP] "
	        "[-t socket,verbs] [-e] MIN_BYTES MAX_BYTES\n");
	return 2;
}

int main(int argc, char **argv)
{
	static struct bench b = {.n = 4, .iters = 10, .warmup = 3};
	const char *list = "socket,verbs";
	uint64_t lo, hi;
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "n:i:w:t:e")) != -1) {
		switch (opt) {
		case 'n': b.n = atoi(optarg); break;
		case 'i': b.iters = atoi(optarg); break;
		case 'w': b.warmup = atoi(optarg); break;
		case 't': list = optarg; break;
		case 'e': b.event = 1; break;
		default: return usage();
		}
	}
	if (argc - optind != 2 || b.n < 2 || b.n > RANKS_MAX || b.iters < 1 ||
	    b.iters > ITERS_MAX || b.warmup < 0)
		return usage();
	lo = strtoull(argv[optind], NULL, 0);
	hi = strtoull(argv[optind + 1], NULL, 0);
	if (lo < sizeof(float) || hi < lo)
		return usage();
	vdev_sim_reset(NULL);
	printf("# %d ranks as threads, all-reduce ring, median of %d after %d warm-up; "
	       "verbs: simulated device, poll %s\n", b.n, b.iters, b.warmup, b.event ? "event" : "busy");
	printf("%-7s %2s %10s %12s %8s %8s %s\n", "tr", "N", "bytes", "time_us", "algbw", "busbw",
	       "check");
	for (uint64_t s = lo; s <= hi && rc == 0; s *= 2)
		for (const char *t = list; *t && rc == 0; t += strcspn(t, ",") + (t[strcspn(t, ",")] != 0)) {
			b.bytes = s;
			b.verbs = strncmp(t, "verbs", 5) == 0;
			b.ops = b.verbs ? &vb_coll_ops : &sk_coll_ops;
			rc = run_size(&b, b.verbs ? "verbs" : "socket");
		}
	return rc ? 1 : 0;
}
