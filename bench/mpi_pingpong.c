/* mpi_pingpong.c - the floor for `tfgb latency` and `tfgb bandwidth` over
 * transport = mpi: what a researcher would write with MPI alone, two ranks.
 *
 * Build (`make bench/mpi_pingpong`, or by hand):
 *   mpicc -O2 -std=c11 -D_GNU_SOURCE -o bench/mpi_pingpong bench/mpi_pingpong.c
 * Run:
 *   mpirun -np 2 bench/mpi_pingpong [-n CALLS] [-w WARMUP] [-b] [-i INFLIGHT] [-p | -P] SIZES
 *   SIZES: bytes of the payload's buffers, "10" or "10,10240,1048576"
 *
 * Ping-pong (default): rank 1 sends the payload to rank 0 and waits for it
 * back, one message at a time, blocking MPI_Send/MPI_Recv from buffers
 * allocated once; a payload of several buffers is packed into one message
 * first (as tfgb's transport copies a request of several iovecs), so both
 * move the same bytes.  Prints the p50 and mean round trip in
 * microseconds over CALLS calls after WARMUP.
 * Streaming bandwidth (-b): rank 1 keeps INFLIGHT payload messages
 * outstanding (MPI_Isend), rank 0 answers each with an 8-byte count, as
 * tfgb's Ack; prints the payload MB/s (10^6 bytes) over CALLS messages.
 * Matched probes (-p): every ping-pong message is taken as TensorFlow's
 * MPI channel takes it (and tfgb's transport), by polling MPI_Improbe on
 * any source, then MPI_Get_count and MPI_Mrecv, and sent with MPI_Isend
 * then MPI_Wait: the floor of that protocol, against the plain one's.
 * Posted receives (-P): every message is received by an MPI_Irecv from
 * its sender, polled with MPI_Test, and sent as with -p: non-blocking as
 * TensorFlow's channel is, without its probes, so that the protocol's
 * cost splits into the probes' share and the rest.
 * Exit status 0, 1 on an MPI failure, 2 on bad arguments.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floor.h"

#define MAX_INFLIGHT 256

/* The payload: the buffers of sizes, packed into out (every call packs
 * again: the copy tfgb's transport makes for a payload of several). */
struct payload {
	size_t n, total;
	size_t len[64];
	unsigned char *buf[64];
};

static void pack(const struct payload *p, unsigned char *out)
{
	size_t off = 0;

	if (p->n == 1)
		return; /* one buffer goes as it is */
	for (size_t i = 0; i < p->n; i++) {
		memcpy(out + off, p->buf[i], p->len[i]);
		off += p->len[i];
	}
}

/* How messages are taken: PLAIN blocking send and receive (the default),
 * PROBE matched probes and non-blocking sends (-p), POSTED posted
 * receives and non-blocking sends (-P) */
enum { PLAIN, PROBE, POSTED };
static int mode;

/* One message of up to n bytes from src under tag into msg. */
static void recv_msg(unsigned char *msg, int n, int src, int tag)
{
	MPI_Message m;
	MPI_Status st;
	MPI_Request r;
	int flag = 0, got = 0;

	if (mode == PLAIN) {
		MPI_Recv(msg, n, MPI_BYTE, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		return;
	}
	if (mode == POSTED) {
		MPI_Irecv(msg, n, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r);
		while (!flag)
			MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
		return;
	}
	while (!flag)
		MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &m, &st);
	MPI_Get_count(&st, MPI_BYTE, &got);
	MPI_Mrecv(msg, got, MPI_BYTE, &m, MPI_STATUS_IGNORE);
}

static void send_msg(const unsigned char *msg, int n, int dst, int tag)
{
	MPI_Request r;

	if (mode == PLAIN) {
		MPI_Send(msg, n, MPI_BYTE, dst, tag, MPI_COMM_WORLD);
		return;
	}
	MPI_Isend(msg, n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static int pingpong(const struct payload *p, unsigned char *msg, long warm, long calls, int rank)
{
	uint64_t *lat = rank == 1 ? malloc((size_t)calls * sizeof *lat) : NULL;
	unsigned char *send = p->n == 1 ? p->buf[0] : msg;
	double sum = 0;

	if (rank == 1 && !lat)
		return 1;
	for (long i = 0; i < warm + calls; i++) {
		if (rank == 0) {
			recv_msg(msg, (int)p->total, 1, 1);
			send_msg(msg, (int)p->total, 1, 2);
			continue;
		}
		uint64_t t0 = mono_ns();
		pack(p, msg);
		send_msg(send, (int)p->total, 0, 1);
		recv_msg(msg, (int)p->total, 0, 2);
		if (i >= warm)
			lat[i - warm] = mono_ns() - t0;
	}
	if (rank == 1) {
		for (long i = 0; i < calls; i++)
			sum += (double)lat[i];
		qsort(lat, (size_t)calls, sizeof *lat, cmp_u64);
		printf("pingpong%s %zu bytes: p50 %.2f us, mean %.2f us over %ld calls\n",
		       mode == PROBE ? " (matched probes)" : mode == POSTED ? " (posted receives)" : "",
		       p->total,
		       (double)lat[calls / 2] / 1e3, sum / (double)calls / 1e3, calls);
	}
	free(lat);
	return 0;
}

/* Rank 0: each payload message answered with its length, 8 bytes. */
static void stream_server(const struct payload *p, unsigned char *msg, long total)
{
	uint64_t ack = p->total;

	for (long i = 0; i < total; i++) {
		MPI_Recv(msg, (int)p->total, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(&ack, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
	}
}

static int stream(const struct payload *p, unsigned char *msg, long warm, long calls, int inflight,
                  int rank)
{
	static unsigned char sbuf[MAX_INFLIGHT][1], *bufs[MAX_INFLIGHT];
	MPI_Request sreq[MAX_INFLIGHT], rreq[MAX_INFLIGHT];
	uint64_t acks[MAX_INFLIGHT], t0 = 0;
	long sent = 0, done = 0, total = warm + calls;

	(void)sbuf;
	if (rank == 0) {
		stream_server(p, msg, total);
		return 0;
	}
	for (int k = 0; k < inflight; k++) { /* one buffer per message in flight */
		if (!(bufs[k] = malloc(p->total ? p->total : 1)))
			return 1;
		pack(p, bufs[k]);
		if (p->n == 1)
			memcpy(bufs[k], p->buf[0], p->total);
	}
	for (int k = 0; k < inflight && sent < total; k++, sent++) {
		MPI_Irecv(&acks[k], 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rreq[k]);
		MPI_Isend(bufs[k], (int)p->total, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &sreq[k]);
	}
	while (done < total) {
		int k;
		MPI_Waitany(inflight, rreq, &k, MPI_STATUS_IGNORE);
		MPI_Wait(&sreq[k], MPI_STATUS_IGNORE);
		if (++done == warm)
			t0 = mono_ns();
		if (sent < total) {
			pack(p, bufs[k]);
			MPI_Irecv(&acks[k], 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rreq[k]);
			MPI_Isend(bufs[k], (int)p->total, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &sreq[k]);
			sent++;
		}
	}
	printf("stream %zu bytes, inflight %d: %.2f MB/s over %ld messages\n", p->total, inflight,
	       (double)p->total * (double)calls / ((double)(mono_ns() - t0) / 1e9) / 1e6, calls);
	for (int k = 0; k < inflight; k++)
		free(bufs[k]);
	return 0;
}

static int sizes(const char *arg, struct payload *p)
{
	char *end;

	for (const char *s = arg; *s && p->n < 64; s = *end ? end + 1 : end) {
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s || (*end && *end != ','))
			return -1;
		p->len[p->n] = (size_t)v;
		if (!(p->buf[p->n] = malloc(v ? v : 1)))
			return -1;
		memset(p->buf[p->n], 'a' + (int)p->n, v);
		p->total += v;
		p->n++;
	}
	return p->n && p->total < (1ull << 31) ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct payload p = {0};
	long calls = 10000, warm = 1000;
	int opt, bw = 0, inflight = 16, rank, size, rc;
	unsigned char *msg;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	while ((opt = getopt(argc, argv, "n:w:bi:pP")) != -1) {
		if (opt == 'n')
			calls = atol(optarg);
		else if (opt == 'w')
			warm = atol(optarg);
		else if (opt == 'b')
			bw = 1;
		else if (opt == 'i')
			inflight = atoi(optarg);
		else if (opt == 'p')
			mode = PROBE;
		else if (opt == 'P')
			mode = POSTED;
	}
	if (size != 2 || optind != argc - 1 || calls < 1 || warm < 0 || inflight < 1 ||
	    inflight > MAX_INFLIGHT || sizes(argv[optind], &p) < 0) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 mpi_pingpong [-n CALLS] [-w WARMUP] [-b] "
			        "[-i INFLIGHT] [-p | -P] SIZES\n");
		MPI_Finalize();
		return 2;
	}
	if (!(msg = malloc(p.total ? p.total : 1)))
		MPI_Abort(MPI_COMM_WORLD, 1);
	rc = bw ? stream(&p, msg, warm, calls, inflight, rank) : pingpong(&p, msg, warm, calls, rank);
	free(msg);
	MPI_Finalize();
	return rc;
}
