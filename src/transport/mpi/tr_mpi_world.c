/* tr_mpi_world.c - the mpi transport's process-wide state (tr_mpi.h): MPI
 * started once, what it is (library, thread level, byte transport) for
 * the results, its buffers and its waits. */
#include "mp_conf.h"

#if TFGB_HAVE_MPI /* the whole file: Open MPI's mpi.h */
#include "tr_mpi.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "util.h"

struct mp_world mp_world = {.rank = -1};

/* How long a process's end waits for its goodbyes to leave. */
#define BYE_NS 2000000000ull

static const char *level_name(int level)
{
	switch (level) {
	case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
	case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
	case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
	case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
	default: return "an unknown thread level";
	}
}

/* Every rank of the launch, as the others name it when it dies: its pid
 * and host, gathered once at start; peer_line[r] the words of the line
 * that names it, made then (the SIGTERM handler only writes them). */
static struct mp_peer *peers;
static char (*peer_line)[160];
static char self_line[160];
static struct sigaction term_prev;

/* "PS i" or "worker j" into out: the rank's role in the launch. */
static void role_of(int rank, char *out, size_t cap)
{
	if (rank < mp_world.nservers)
		snprintf(out, cap, "PS %d", rank);
	else
		snprintf(out, cap, "worker %d", rank - mp_world.nservers);
}

/* text on stderr, from a signal handler: 0 or -1 */
static int say(const char *text)
{
	size_t n = strlen(text);

	return write(2, text, n) == (ssize_t)n ? 0 : -1;
}

/* The launcher's SIGTERM (Open MPI's orted stops the other ranks when one
 * dies, then kills them a second later): the ranks of this host whose
 * process is gone are named, with their role and host, and this rank
 * ends with status 1 at once (its MPI peers are gone: no MPI call
 * returns).  With none gone here, the ranks of the other hosts are named
 * as the ones that may have ended, then the usual stop.  A SIGTERM this
 * process sent itself (a server of one launch stops so once the run's
 * reports are in: src/run/serve.c) is that stop alone: its peers ended as
 * they should.  Only async-signal-safe calls: getpid, kill(pid, 0),
 * write, _exit. */
static void on_term(int sig, siginfo_t *si, void *uc)
{
	int gone = 0, remote = 0, saved = errno; /* kill's ESRCH: not the interrupted code's */
	int self = si && (si->si_code == SI_USER || si->si_code == SI_TKILL) &&
	           si->si_pid == getpid();

	(void)uc;
	for (int r = 0; peers && !self && r < mp_world.size; r++) {
		if (r == mp_world.rank)
			continue;
		if (strcmp(peers[r].host, peers[mp_world.rank].host)) {
			remote++;
			continue;
		}
		if (kill(peers[r].pid, 0) < 0 && errno == ESRCH) {
			say(self_line);
			say(peer_line[r]);
			say(" ended: this rank stops (exit 1)\n");
			gone++;
		}
	}
	if (gone)
		_exit(1);
	if (remote && say(self_line) == 0)
		for (int r = 0, n = 0; r < mp_world.size && n < 8; r++)
			if (strcmp(peers[r].host, peers[mp_world.rank].host) &&
			    (say(n++ ? "; " : "") < 0 || say(peer_line[r]) < 0))
				break;
	if (remote)
		say(" may have ended (stopped by the launcher: SIGTERM)\n");
	errno = saved;
	if (term_prev.sa_handler != SIG_DFL && term_prev.sa_handler != SIG_IGN)
		term_prev.sa_handler(sig);
	else if (term_prev.sa_handler == SIG_DFL)
		_exit(1);
}

void mp_term_watch(void)
{
	struct sigaction sa, now;

	if (!peers || sigaction(SIGTERM, NULL, &now) < 0 ||
	    ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_term))
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_term;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	term_prev = now;
	sigaction(SIGTERM, &sa, NULL);
}

/* Every rank's pid and host, whether it refused its launch, and the lines
 * that name them.  A failure leaves the launcher's own report alone. */
static void peers_gather(int refused)
{
	struct mp_peer me = {.pid = (int)getpid(), .refused = refused};
	char role[32];

	if (gethostname(me.host, sizeof me.host - 1) < 0)
		snprintf(me.host, sizeof me.host, "?");
	if (!(peers = calloc((size_t)mp_world.size, sizeof *peers)) ||
	    !(peer_line = calloc((size_t)mp_world.size, sizeof *peer_line)) ||
	    MPI_Allgather(&me, MP_PEER, MPI_BYTE, peers, MP_PEER, MPI_BYTE,
	                  mp_world.comm) != MPI_SUCCESS) {
		free(peers);
		free(peer_line);
		peers = NULL;
		return;
	}
	for (int r = 0; r < mp_world.size; r++) {
		role_of(r, role, sizeof role);
		snprintf(peer_line[r], sizeof peer_line[r], "rank %d (%s) on host %s, pid %d", r, role,
		         peers[r].host, peers[r].pid);
	}
	role_of(mp_world.rank, role, sizeof role);
	snprintf(self_line, sizeof self_line, "tfgb: rank %d (%s) on host %s: ", mp_world.rank, role,
	         me.host);
}

/* A client rank's goodbye to every server rank, then MPI's end: at exit,
 * so that every rank finalizes (Open MPI's mpirun counts a rank that
 * exits without it as failed). */
static void world_end(void)
{
	MPI_Request r[64];
	int n = 0;

	if (!mp_world.up)
		return;
	for (int s = 0; mp_world.rank >= mp_world.nservers && s < mp_world.nservers; s++) {
		if (MPI_Isend(NULL, 0, MPI_BYTE, s, MP_TAG_BYE, mp_world.comm, &r[n]) == MPI_SUCCESS)
			n++;
		if (n == 64 || s == mp_world.nservers - 1)
			for (; n > 0; n--)
				if (mp_wait(&r[n - 1], now_ns() + BYE_NS, NULL) < 0)
					MPI_Request_free(&r[n - 1]);
	}
	mp_world.up = 0;
	MPI_Finalize();
}

/* Whether a launcher started this process as a rank: Open MPI's mpirun,
 * PMIx (srun --mpi=pmix, prun) or PMI. */
static int launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

/* [mpi] btl into the environment Open MPI reads at MPI_Init; what was
 * asked, and by whom, into out. */
static void btl_choose(const struct mp_conf *o, char *out, size_t cap)
{
	const char *env = getenv("OMPI_MCA_btl");
	const char *want = o && o->btl != MP_BTL_AUTO ? mp_btl_names[o->btl] : NULL;

	if (want && env && strcmp(env, want))
		snprintf(out, cap, "btl %s (asked in [mpi] btl; the launcher's %s overridden)", want,
		         env);
	else if (want)
		snprintf(out, cap, "btl %s (asked in [mpi] btl)", want);
	else if (env)
		snprintf(out, cap, "btl %s (asked by the launcher: OMPI_MCA_btl)", env);
	else
		snprintf(out, cap, "btl as chosen by Open MPI");
	if (want)
		setenv("OMPI_MCA_btl", want, 1);
}

/* The version text: MPI_Get_library_version's first line, the thread
 * level obtained (and asked, when they differ), the byte transport. */
static void world_text(int asked, const char *btl)
{
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	const char *pml = getenv("OMPI_MCA_pml");
	int len = 0, local = 0;

	lib[0] = 0;
	MPI_Get_library_version(lib, &len);
	lib[strcspn(lib, "\n,")] = 0;
	snprintf(mp_world.text, sizeof mp_world.text, "%s, %s%s%s, %s%s%s", lib,
	         level_name(mp_world.thread_level),
	         mp_world.thread_level < asked ? " (asked " : "",
	         mp_world.thread_level < asked ? level_name(asked) : "",
	         mp_world.thread_level < asked ? ")" : "", btl, pml ? ", pml " : "");
	if (pml)
		snprintf(mp_world.text + strlen(mp_world.text),
		         sizeof mp_world.text - strlen(mp_world.text), "%s", pml);
	/* the ranks that share this host (by its name, gathered by
	 * peers_gather): those shared memory (vader) can reach; the others
	 * only a network btl */
	for (int r = 0; peers && r < mp_world.size; r++)
		local += !strcmp(peers[r].host, peers[mp_world.rank].host);
	if (peers)
		snprintf(mp_world.text + strlen(mp_world.text),
		         sizeof mp_world.text - strlen(mp_world.text), ", %d of %d ranks on this host",
		         local, mp_world.size);
}

/* Ranks [0, nservers) serve: a job's PSs when the launch is every PS and
 * worker (cluster.workers set), else one (latency, bandwidth). */
static int servers_of(const struct tr_setup *s, int size)
{
	if (s && s->workers_set && size == s->ps_count + s->workers)
		return s->ps_count;
	return 1;
}

/* Whether a rank of the world refused the launch (s->refused there:
 * tr_refuse), as the start's gather (peers_gather) told every rank before
 * any goes on to its first call: -1 with err then, so that no rank waits
 * for one that left, or names it as one that died (on_term) when the
 * launcher stops the rest. */
static int world_refused(struct err *err)
{
	for (int r = 0; peers && r < mp_world.size; r++)
		if (peers[r].refused) {
			err_set(err, "rank %d of this launch refused it (its line says why)", r);
			return -1;
		}
	return 0;
}

static int world_start(const struct tr_setup *s, struct err *err)
{
	const struct mp_conf *o = s ? s->section : NULL;
	/* every MPI call is made on the main thread (tr_mpi.h) and tfgb's
	 * other threads make none, all Open MPI's SINGLE needs; above SINGLE
	 * Open MPI 4.1 takes a mutex in every call (opal_using_threads), a
	 * third of a small call's round trip (tfgb-mpi(7)) */
	const int asked = o && o->thread_level == MP_THREAD_FUNNELED ? MPI_THREAD_FUNNELED
	                                                             : MPI_THREAD_SINGLE;
	char btl[200];
	int level = 0;

	btl_choose(o, btl, sizeof btl);
	if (MPI_Init_thread(NULL, NULL, asked, &level) != MPI_SUCCESS) {
		err_set(err, "MPI_Init_thread failed");
		return -EIO;
	}
	mp_world.comm = MPI_COMM_WORLD;
	MPI_Comm_rank(mp_world.comm, &mp_world.rank);
	MPI_Comm_size(mp_world.comm, &mp_world.size);
	/* errors come back as codes: a failure is said and the run ends */
	MPI_Comm_set_errhandler(mp_world.comm, MPI_ERRORS_RETURN);
	mp_world.thread_level = level;
	mp_world.nservers = servers_of(s, mp_world.size);
	mp_world.up = 1;
	peers_gather(s && s->refused);
	world_text(asked, btl);
	atexit(world_end);
	if (world_refused(err) < 0)
		return -ECANCELED;
	if (level < asked) {
		err_set(err, "MPI gives thread level %s, the transport needs %s", level_name(level),
		        level_name(asked));
		return -EIO;
	}
	return 0;
}

int mp_world_up(const struct tr_setup *s, struct err *err)
{
	if (mp_world.up)
		return world_refused(err) < 0 ? -ECANCELED : 0;
	if (!launched()) {
		long w = s && s->workers ? s->workers : 1, p = s && s->ps_count ? s->ps_count : 1;
		const char *cmd = cluster_launch_cmd();
		/* srun without an MPI plugin starts singletons: each would be
		 * rank 0 of a world of one, and wait for a peer for ever */
		err_set(err, "transport mpi runs every process as a rank of one MPI job%s: run "
		        "'%s 2 tfgb latency|bandwidth ...' (rank 0 the PS, rank 1 the worker), "
		        "or '%s %ld tfgb throughput|train ...' (ranks 0..%ld the PSs, the "
		        "others the %ld workers; cluster.workers set), or '%s %ld tfgb collective ...' "
		        "(every rank a worker)",
		        getenv("SLURM_STEP_ID") ? ", and srun started this one without an MPI plugin "
		                                  "(--mpi=none)" : "",
		        cmd, cmd, p + w, p - 1, w, cmd, w < 2 ? 2 : w);
		return -EINVAL;
	}
	return world_start(s, err);
}

int mp_buf_reserve(struct mp_buf *b, size_t cap, size_t keep)
{
	void *p;

	if (cap <= b->cap)
		return 0;
	if (cap < 4096)
		cap = 4096;
	if (cap > MP_MSG_LIMIT + 4096 ||
	    MPI_Alloc_mem((MPI_Aint)cap, MPI_INFO_NULL, &p) != MPI_SUCCESS)
		return -ENOMEM;
	if (keep && b->p)
		memcpy(p, b->p, keep < b->cap ? keep : b->cap);
	mp_buf_free(b);
	b->p = p;
	b->cap = cap;
	return 0;
}

void mp_buf_free(struct mp_buf *b)
{
	if (b->p && mp_world.up)
		MPI_Free_mem(b->p);
	b->p = NULL;
	b->cap = 0;
}

int mp_wait(MPI_Request *r, uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	for (unsigned spins = 0;; spins++) {
		int flag = 0;

		if (*r == MPI_REQUEST_NULL)
			return 0;
		if (MPI_Test(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -EIO;
		if (flag)
			return 0;
		if ((spins & 1023) == 1023 && ((stop && *stop) || now_ns() >= deadline_ns))
			return -ETIMEDOUT;
	}
}

#endif /* TFGB_HAVE_MPI */
