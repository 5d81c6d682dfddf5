/* cluster.h - where the processes of a job live, and starting them.
 *
 * PS addresses: `[cluster] ps` lists either ps_count addresses or one
 * address that stands for ps_count consecutive ports on that host.
 */
#ifndef TFGB_CLUSTER_H
#define TFGB_CLUSTER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "job.h"


/* 1 if host names an address of this machine (it can be bound here), 0 if
 * not, -1 if it does not resolve. */
int cluster_host_is_local(const char *host);

/* 1 if something accepts TCP connections at addr within timeout_ms, else 0. */
int cluster_tcp_probe(const struct opt_hostport *addr, int timeout_ms);

struct lease;

/* A `tfgb serve` child started by a benchmark on this machine. */
struct cluster_child {
	pid_t pid;        /* 0 when not running */
	int ready_fd;     /* read end of the readiness pipe, -1 when closed */
	int index;        /* PS index */
	struct opt_hostport addr;
	struct lease *lease; /* the run's lease on the server at this PS (lease.h;
	                      * session.c), also when another run started it; or NULL */
};

/* Starts `tfgb CMD --task index` (CMD "serve" or "throughput") with the
 * effective job as a child, as cluster_spawn_serve does; run_id, when not 0,
 * is passed in TFGB_RUN_ID. */
int cluster_spawn(const struct job *j, const char *cmd, int index, uint64_t run_id,
                  unsigned flags, struct cluster_child *c, struct err *err);

/* Flags of cluster_spawn: the server hosts no control service even as PS 0
 * (a point-to-point benchmark's own server). */
enum { CLUSTER_NO_CONTROL = 1 << 0 };

/* Starts `tfgb serve --task index` with the effective job (passed through a
 * memfd, so the child runs exactly this job) as a child in its own process
 * group, killed with SIGTERM if this process dies.  Call it before any
 * transport starts threads.  Returns 0 or -errno with err set. */
int cluster_spawn_serve(const struct job *j, int index, unsigned flags, struct cluster_child *c,
                        struct err *err);

/* Waits until the child reports "ready" (it has bound its address), it
 * exits, *stop is set, or deadline_ns (now_ns clock) passes.  Returns 0 when
 * ready, else -1 with err saying why (naming the PS, address and status). */
int cluster_wait_ready(struct cluster_child *c, uint64_t deadline_ns,
                       volatile sig_atomic_t *stop, struct err *err);

/* Stops the child: SIGTERM, then SIGKILL after timeout_ms; reaps it.
 * Accepts a child that never started or already stopped. */
void cluster_stop(struct cluster_child *c, int timeout_ms);

/* What every tfgb that starts tfgb does (the launcher, a local PS, the
 * sweep): the job text on a memfd, its path ("/proc/self/fd/N") in path;
 * the memfd, or -errno. */
int cluster_job_memfd(const char *text, char *path, size_t len);
/* In a child just forked from `parent`: its own process group (a
 * terminal's Ctrl-C goes to the parent, which stops it in order) and death
 * with the parent: death_sig when the parent dies (0: SIGTERM, which a
 * tfgb takes as Ctrl-C).  -1 when the parent is already gone. */
int cluster_child_setup(pid_t parent, int death_sig);
/* A tfgb run again as a child (cluster_exec): its arguments (argv[0]
 * "tfgb"), the command named in its errors, and what the child sets up
 * between fork and exec. */
struct cluster_exec {
	const char *cmd;         /* names the command in the child's "cannot execute" */
	char *const *argv;       /* NULL-ended */
	int stdout_fd;           /* the child's standard output; -1: inherited */
	int keep_fd;             /* an O_CLOEXEC descriptor the child keeps; -1: none */
	const char *const *env;  /* NAME, VALUE pairs set in the child, NULL-ended; or NULL */
	int sig_default;         /* SIGINT and SIGTERM back to their default in the child */
	int death_sig;           /* the child's signal when this process dies; 0: SIGTERM */
};
/* Forks and executes cluster_self_exe() with x: the child is set up as
 * cluster_child_setup says, in its own process group (set on both sides,
 * so that it holds before the child runs); a child that cannot execute
 * says so on standard error and exits with 1.  Call it before any
 * transport starts threads.  The child's pid, or -errno when fork failed. */
pid_t cluster_exec(const struct cluster_exec *x);

/* The program that runs tfgb again: TFGB_EXEC when set (a wrapper taking
 * tfgb's arguments, as make valgrind's: valgrind cannot follow
 * /proc/self/exe, which names the tool under it), else /proc/self/exe. */
const char *cluster_self_exe(void);

/* How a child ended, from its wait status: "exit status 1", "killed by
 * signal 9 (Killed)". */
void cluster_exit_text(int status, char *buf, size_t len);

/* What to do when the control address cannot be bound: the advice, naming
 * the key (cluster.control) and, when it is empty, how it was derived. */
const char *cluster_control_hint(const struct job *j);

/* This process's rank in its launch: --task N (task >= 0; its local rank
 * is N too), else the first launcher whose rank variable is set, in this
 * order: Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK), PMI (PMI_RANK,
 * PMI_SIZE, MPI_LOCALRANKID), Slurm (SLURM_PROCID, SLURM_NTASKS,
 * SLURM_LOCALID; not in an sbatch batch script, see
 * cluster_slurm_batch_step), PMIx (PMIX_RANK, PMIX_LOCAL_RANK).
 * index = -1 when none applies.  -1 with err for a malformed variable. */
struct cluster_rank {
	int index;
	int size;           /* -1 when the launcher does not say */
	int local;          /* rank among the launch's processes on this node; -1: unknown */
	const char *source; /* "--task" or the variable's name */
	const char *size_source; /* the count's variable, NULL when size is -1 */
	const char *local_source; /* the local rank's, NULL when local is -1 */
	int batch_step;     /* Slurm's variables were those of a batch script: ignored */
};
int cluster_rank(int task, struct cluster_rank *r, struct err *err);

/* Whether rank r speaks for its part of the launch, where every rank of
 * it finds the same error: the first rank of its application context
 * (Open MPI's MPMD, "mpirun -np 1 A : -np 3 B": OMPI_APP_CTX_NUM_PROCS).
 * Where the launcher does not say, every rank when `each` (its line names
 * it: a rank that is not the command's), else rank 0 (or no rank).
 * *last (may be NULL) is set to the part's last rank (r's own when not
 * known and each). */
int cluster_speaks(const struct cluster_rank *r, int each, int *last);

/* 1 in the batch script of sbatch(1): SLURM_PROCID and SLURM_JOB_ID are
 * set but no step id (SLURM_STEP_ID, SLURM_STEPID), or the batch step's. */
int cluster_slurm_batch_step(void);

/* The launch command that starts one process per rank here, for the
 * messages that give it: "srun --mpi=pmix -n" inside a Slurm job (a step
 * of srun, or its batch script) that Open MPI's mpirun did not start,
 * else "mpirun -np".  A static string. */
const char *cluster_launch_cmd(void);
/* The number of processes the launcher that started this one started (its
 * size variable, read where a rank variable is set too), or 0: none. */
long cluster_launch_size(void);

/* What a process of a launch is (tfgb-throughput(1), "One launch").  With
 * a launcher's count N (rank R) and cluster.workers set (workers_set):
 * N == ps_count + workers is one launch: ranks below ps_count serve PS R,
 * the others are worker R - ps_count; N == workers: every rank is worker
 * R.  Without workers_set, N is the number of workers.  A `tfgb serve`
 * (serve = 1) outside one launch takes no PS from its rank (ps = -1: the
 * PS addresses of its host), except with --task.  -1 with err for a count
 * that fits no rule, or a serve rank that is a worker's (exit status 2). */
struct cluster_role {
	int ps;         /* the PS this process serves, or -1 */
	int worker;     /* the worker it is, or -1 */
	int workers;    /* the run's number of workers */
	int one_launch; /* servers and workers started together */
};
int cluster_role(const struct job *j, int workers_set, int serve, const struct cluster_rank *r,
                 struct cluster_role *out, struct err *err);

/* The id every worker of one launch shares: TFGB_RUN_ID when set (the
 * one-machine launcher sets it), else a hash of the job text and of the
 * launcher's job ids (SLURM_JOB_ID, SLURM_STEP_ID, OMPI_MCA_ess_base_jobid,
 * PMIX_NAMESPACE); job_text NULL: those ids alone. */
uint64_t cluster_run_id(const char *job_text);

#endif
