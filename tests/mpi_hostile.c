/* mpi_hostile.c - a rank that joins a `tfgb serve` MPI job (rank 0, the
 * PS; this program rank 1) and sends it what tfgb's own worker never does,
 * by the wire of tfgb-mpi(7) (tr_mpi.h): a message shorter than a header,
 * a header whose lengths disagree, requests longer than the server's
 * max_message (sent inline, and as a header with its bytes under the data
 * tag; each in a shared-memory fragment's size and in one that takes
 * Open MPI's rendezvous), an unknown method, direct bytes longer and
 * shorter than their header said; then Echo calls as tfgb's worker makes
 * them.  Each reply must come with the status the server owes (tfgb-mpi(7),
 * "What the server answers"), the Echoes' with their bytes, and nothing
 * for what is not tfgb's.  It ends with its goodbye, as a worker does.
 *
 * Run by tests/t_mpi.sh:
 *   mpirun -np 1 tfgb serve -s job.transport=mpi -s server.max_message=1KiB
 *          : -np 1 mpi_hostile
 *   mpirun --mca btl tcp,self -np 1 tfgb serve -s job.transport=mpi
 *          -s server.max_message=1MiB -s mpi.body_timeout=1s
 *          : -np 1 mpi_hostile late
 * (late: requests whose rest comes late or never, instead; see late()).
 * Build: mpicc -std=c11 -D_GNU_SOURCE with tfgb's -I folders (t_mpi.sh).
 * Prints one "ok:" line per case; exit 0 when every reply was right, 1 with
 * the case that was not, each wait bounded (10 s).
 */
#include "tr_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_MSG 1024        /* the server's max_message in t_mpi.sh */
#define WAIT_S 10
#define BIG (1u << 20)      /* past shared memory's eager limit: a rendezvous */

static unsigned char buf[BIG + 2 * MP_HDR], reply[BIG + 2 * MP_HDR];

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	fprintf(stderr, "mpi_hostile: %s\n", what);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* Waits for r, at most WAIT_S seconds; fails naming what. */
static void wait_for(MPI_Request *r, MPI_Status *st, const char *what)
{
	double end = now_s() + WAIT_S;
	int flag = 0;

	while (!flag) {
		MPI_Test(r, &flag, st);
		if (!flag && now_s() > end) {
			char line[200];
			snprintf(line, sizeof line, "%s: nothing within %d s", what, WAIT_S);
			fail(line);
		}
	}
}

static void send_tag(const void *p, int n, int tag, const char *what)
{
	MPI_Request r;

	MPI_Isend(p, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r);
	wait_for(&r, MPI_STATUS_IGNORE, what);
}

/* A request: header (code, id, total, direct) and its inline bytes (total -
 * direct of the body at body), then its direct bytes as `sent` bytes. */
static void request(uint32_t code, uint32_t id, uint64_t total, uint64_t direct,
                    const unsigned char *body, uint64_t sent, const char *what)
{
	struct mp_hdr h = {.code = code, .id = id, .total = total, .direct = direct};

	memcpy(buf, &h, MP_HDR);
	memcpy(buf + MP_HDR, body, (size_t)(total - direct));
	send_tag(buf, MP_HDR + (int)(total - direct), MP_TAG_REQ, what);
	if (direct)
		send_tag(body, (int)sent, MP_TAG_DATA, what);
}

/* The next reply: its status and id must be these; an OK one carries the
 * n bytes at want (inline, or its header then the bytes under the data
 * tag when the server sends them direct). */
static void expect(unsigned status, uint32_t id, const unsigned char *want, uint64_t n,
                   const char *what)
{
	char line[300];
	MPI_Request r;
	MPI_Status st;
	struct mp_hdr h;
	int got = 0;

	MPI_Irecv(reply, (int)sizeof reply, MPI_BYTE, 0, MP_TAG_REPLY, MPI_COMM_WORLD, &r);
	wait_for(&r, &st, what);
	MPI_Get_count(&st, MPI_BYTE, &got);
	if (got < MP_HDR)
		fail(what);
	memcpy(&h, reply, MP_HDR);
	if (h.code != status || h.id != id) {
		snprintf(line, sizeof line, "%s: reply status %u id %u, want status %u id %u", what,
		         h.code, h.id, status, id);
		fail(line);
	}
	if (status != TR_OK) {
		if (h.total || got != MP_HDR)
			fail(what);
		printf("ok: %s: status %u\n", what, status);
		return;
	}
	if (h.total != n || h.direct > n || (uint64_t)got - MP_HDR != n - h.direct)
		fail(what);
	if (h.direct) {
		MPI_Irecv(reply + got, (int)h.direct, MPI_BYTE, 0, MP_TAG_DATA, MPI_COMM_WORLD, &r);
		wait_for(&r, MPI_STATUS_IGNORE, what);
	}
	if (memcmp(reply + MP_HDR, want, (size_t)n))
		fail(what);
	printf("ok: %s: OK, %llu bytes back\n", what, (unsigned long long)n);
}

/* What tfgb's worker never sends, each answered or dropped as the server
 * owes it (max_message 1 KiB). */
static void bad_messages(const unsigned char *body)
{
	/* not tfgb's: dropped, no reply (the next reply is the next case's) */
	send_tag("short", 5, MP_TAG_REQ, "a message shorter than a header");
	{
		struct mp_hdr bad = {.code = TR_ECHO, .id = 1, .total = 10, .direct = 20};
		send_tag(&bad, MP_HDR, MP_TAG_REQ, "a header whose direct bytes exceed its total");
	}
	/* longer than max_message: refused without the server keeping them */
	request(TR_ECHO, 2, 4 * MAX_MSG, 0, body, 0, "4 KiB inline");
	expect(TR_RESOURCE_EXHAUSTED, 2, NULL, 0, "4 KiB inline, over max_message");
	request(TR_ECHO, 3, BIG, 0, body, 0, "1 MiB inline");
	expect(TR_RESOURCE_EXHAUSTED, 3, NULL, 0, "1 MiB inline (a rendezvous), over max_message");
	request(TR_ECHO, 4, 2 * MAX_MSG, 2 * MAX_MSG, body, 2 * MAX_MSG, "2 KiB direct");
	expect(TR_RESOURCE_EXHAUSTED, 4, NULL, 0, "2 KiB direct, over max_message");
	request(TR_ECHO, 5, BIG, BIG, body, BIG, "1 MiB direct");
	expect(TR_RESOURCE_EXHAUSTED, 5, NULL, 0, "1 MiB direct (a rendezvous), over max_message");
	request(99, 6, 10, 0, body, 0, "method 99");
	expect(TR_UNIMPLEMENTED, 6, NULL, 0, "an unknown method");
	/* direct bytes that are not what the header said */
	request(TR_ECHO, 7, 512, 512, body, 600, "600 direct bytes for 512");
	expect(TR_INVALID_ARGUMENT, 7, NULL, 0, "more direct bytes than announced");
	request(TR_ECHO, 11, 512, 512, body, BIG, "1 MiB direct bytes for 512");
	expect(TR_INVALID_ARGUMENT, 11, NULL, 0, "1 MiB direct bytes (a rendezvous) for 512");
	request(TR_ECHO, 8, 512, 512, body, 100, "100 direct bytes for 512");
	expect(TR_INVALID_ARGUMENT, 8, NULL, 0, "fewer direct bytes than announced");
}

/* With "late" instead of the cases above (over TCP, where the rest of a
 * long message moves only when its sender calls MPI; the server's
 * max_message 1 MiB, mpi.body_timeout 1 s): a header whose direct bytes
 * never come; 1 MiB of direct bytes (admitted: the server receives them
 * into its own buffer) and then a 2 MiB inline message (over max_message:
 * received to be let go), each with its start sent and its rest held 3 s
 * while this rank makes no MPI call.  The first two are answered
 * DEADLINE_EXCEEDED, the third (no header read yet) dropped; the server
 * serves on, its receives pending until the bytes come. */
static void late(void)
{
	static unsigned char big[MP_HDR + 2 * BIG];
	struct mp_hdr h = {.code = TR_ECHO, .id = 12, .total = 512, .direct = 512};
	MPI_Request r;

	send_tag(&h, MP_HDR, MP_TAG_REQ, "a header whose bytes never come");
	expect(TR_DEADLINE_EXCEEDED, 12, NULL, 0, "direct bytes that never come");
	h = (struct mp_hdr){.code = TR_ECHO, .id = 13, .total = BIG, .direct = BIG};
	send_tag(&h, MP_HDR, MP_TAG_REQ, "a header, its bytes late");
	MPI_Isend(big, BIG, MPI_BYTE, 0, MP_TAG_DATA, MPI_COMM_WORLD, &r);
	sleep(3);
	expect(TR_DEADLINE_EXCEEDED, 13, NULL, 0, "1 MiB of direct bytes whose rest comes 3 s late");
	wait_for(&r, MPI_STATUS_IGNORE, "direct bytes sent late");
	h = (struct mp_hdr){.code = TR_ECHO, .id = 14, .total = 2 * BIG, .direct = 0};
	memcpy(big, &h, MP_HDR);
	MPI_Isend(big, MP_HDR + 2 * BIG, MPI_BYTE, 0, MP_TAG_REQ, MPI_COMM_WORLD, &r);
	sleep(3);
	wait_for(&r, MPI_STATUS_IGNORE, "an inline message sent late");
	printf("ok: a 2 MiB inline message whose rest comes 3 s late: dropped, no answer\n");
}

int main(int argc, char **argv)
{
	static unsigned char body[BIG + 64];
	struct mp_peer me = {.pid = (int)getpid()}, *all;
	int size;

	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (size != 2)
		fail("run as rank 1 of 2, beside tfgb serve");
	gethostname(me.host, sizeof me.host - 1);
	if (!(all = calloc(2, sizeof *all)) ||
	    MPI_Allgather(&me, MP_PEER, MPI_BYTE, all, MP_PEER, MPI_BYTE, MPI_COMM_WORLD) !=
	            MPI_SUCCESS)
		fail("the start's MPI_Allgather");
	for (size_t i = 0; i < sizeof body; i++)
		body[i] = (unsigned char)(i * 7 + 1);

	if (argc > 1 && !strcmp(argv[1], "late"))
		late();
	else
		bad_messages(body);
	/* and then the server still serves, as tfgb's worker calls it */
	request(TR_ECHO, 9, 10, 0, body, 0, "Echo of 10 B");
	expect(TR_OK, 9, body, 10, "Echo of 10 B inline, after all that");
	request(TR_ECHO, 10, MAX_MSG, MAX_MSG, body, MAX_MSG, "Echo of 1 KiB direct");
	expect(TR_OK, 10, body, MAX_MSG, "Echo of 1 KiB direct");

	send_tag(NULL, 0, MP_TAG_BYE, "the goodbye");
	free(all);
	MPI_Finalize();
	return 0;
}
