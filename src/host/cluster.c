/* cluster.c - PS addresses, locality, and child processes. */
#include "cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net.h"
#include "util.h"

int cluster_host_is_local(const char *host)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res, *ai;
	int local = 0;

	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return -1;
	for (ai = res; ai && !local; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		/* port 0: binding succeeds only for this machine's addresses */
		if (ai->ai_family == AF_INET)
			((struct sockaddr_in *)ai->ai_addr)->sin_port = 0;
		else if (ai->ai_family == AF_INET6)
			((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = 0;
		local = bind(fd, ai->ai_addr, ai->ai_addrlen) == 0;
		close(fd);
	}
	freeaddrinfo(res);
	return local;
}

int cluster_tcp_probe(const struct opt_hostport *addr, int timeout_ms)
{
	struct addrinfo *res;
	int fd;

	if (net_resolve(addr->host, addr->port, 0, &res, NULL) < 0)
		return 0;
	fd = net_connect_any(res, now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000);
	freeaddrinfo(res);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int cluster_spawn(const struct job *j, const char *cmd, int index, uint64_t run_id,
                  unsigned flags, struct cluster_child *c, struct err *err)
{
	char *text = job_ini_string(j);
	char jobpath[64], task[16], fdnum[16], runid[24];
	const char *role = strcmp(cmd, "serve") ? "worker" : "PS";
	char *argv[] = {"tfgb", (char *)cmd, "-c", NULL, "--task", NULL, "-q", "-s",
	                "output.file=", NULL};
	const char *env[11] = {"TFGB_READY_FD"};
	int pfd[2] = {-1, -1}, mfd = -1, rc = 0, n = 2;
	pid_t pid;

	c->pid = 0;
	c->ready_fd = -1;
	c->index = index;
	memset(&c->addr, 0, sizeof c->addr);
	if (!strcmp(cmd, "serve"))
		job_ps_addr(j, index, &c->addr);
	snprintf(runid, sizeof runid, "%016llx", (unsigned long long)run_id);
	if (!text) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	/* the child reads the job from a memfd: exactly this job, no temp file */
	if ((mfd = cluster_job_memfd(text, jobpath, sizeof jobpath)) < 0) {
		rc = mfd;
		err_set(err, "cannot pass the job to %s %d: %s", role, index, strerror(-rc));
		goto out;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		rc = -errno;
		err_set(err, "cannot create a pipe for %s %d: %s", role, index, strerror(errno));
		goto out;
	}
	snprintf(task, sizeof task, "%d", index);
	snprintf(fdnum, sizeof fdnum, "%d", pfd[1]);
	argv[3] = jobpath;
	argv[5] = task;
	env[1] = fdnum;
	if (run_id) {
		env[n++] = "TFGB_RUN_ID";
		env[n++] = runid;
		env[n++] = "TFGB_LAUNCHER"; /* the launcher collects */
		env[n++] = "1";
	}
	if (flags & CLUSTER_NO_CONTROL) {
		env[n++] = "TFGB_NO_CONTROL";
		env[n++] = "1";
	}
	/* a launch's worker (run_id) dies at once with its launcher, wherever
	 * it is (in a step, a wait): nobody is left to report to, and all it
	 * holds (connections, its link's namespace) goes with it; a PS ends in
	 * order on SIGTERM, giving its lease back (cmd_serve.c) */
	if ((pid = cluster_exec(&(struct cluster_exec){.cmd = cmd, .argv = argv, .stdout_fd = -1,
	                                               .keep_fd = pfd[1], .env = env,
	                                               .death_sig = run_id ? SIGKILL : 0})) < 0) {
		rc = (int)pid;
		err_set(err, "cannot start %s %d: fork: %s", role, index, strerror(-rc));
		goto out;
	}
	c->pid = pid;
	c->ready_fd = pfd[0];
	pfd[0] = -1;
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (mfd >= 0)
		close(mfd);
	free(text);
	return rc;
}

int cluster_job_memfd(const char *text, char *path, size_t len)
{
	size_t n = strlen(text);
	int fd = memfd_create("tfgb-job", 0), e;

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n) {
		e = errno ? errno : EIO;
		close(fd);
		return -e;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

int cluster_child_setup(pid_t parent, int death_sig)
{
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, death_sig ? death_sig : SIGTERM);
	return getppid() == parent ? 0 : -1; /* it died before the prctl: no signal comes */
}

pid_t cluster_exec(const struct cluster_exec *x)
{
	pid_t parent = getpid(), pid;
	const char *exe;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (cluster_child_setup(parent, x->death_sig) < 0)
			_exit(1);
		if (x->sig_default) { /* Ctrl-C comes to the parent, which stops it in order */
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
		}
		if (x->stdout_fd >= 0 && dup2(x->stdout_fd, STDOUT_FILENO) < 0)
			_exit(1);
		if (x->keep_fd >= 0)
			fcntl(x->keep_fd, F_SETFD, 0);
		for (size_t i = 0; x->env && x->env[i]; i += 2)
			setenv(x->env[i], x->env[i + 1], 1);
		exe = cluster_self_exe();
		execv(exe, x->argv);
		fprintf(stderr, "tfgb: %s: cannot execute %s: %s\n", x->cmd, exe, strerror(errno));
		_exit(1);
	}
	setpgid(pid, pid); /* also here, so that it holds before the child runs */
	return pid;
}

const char *cluster_self_exe(void)
{
	const char *exe = getenv("TFGB_EXEC");

	return exe && *exe ? exe : "/proc/self/exe";
}

void cluster_exit_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
}

int cluster_wait_ready(struct cluster_child *c, uint64_t deadline_ns,
                       volatile sig_atomic_t *stop, struct err *err)
{
	char buf[16], how[96];
	const char *host = c->addr.host;
	size_t got = 0;
	int status;

	for (;;) {
		uint64_t now = now_ns();
		struct pollfd pfd = {.fd = c->ready_fd, .events = POLLIN};
		int ms, n;

		if (*stop) {
			err_set(err, "interrupted while PS %d (%s:%u) was starting", c->index,
			         host, c->addr.port);
			return -1;
		}
		if (now >= deadline_ns) {
			err_set(err, "PS %d (tfgb serve, pid %d) did not listen on %s:%u "
			         "within the timeout", c->index, (int)c->pid, host, c->addr.port);
			return -1;
		}
		ms = (int)((deadline_ns - now) / 1000000) + 1;
		if (ms > 100)
			ms = 100;
		n = poll(&pfd, 1, ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		n = (int)read(c->ready_fd, buf + got, sizeof buf - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the child closed the pipe without "ready": it failed */
		got += (size_t)n;
		buf[got] = 0;
		if (strstr(buf, "ready\n")) {
			close(c->ready_fd);
			c->ready_fd = -1;
			return 0;
		}
		if (got >= sizeof buf - 1)
			break;
	}
	/* it failed: its own message is already on stderr; add how it ended */
	if (waitpid(c->pid, &status, 0) == c->pid) {
		cluster_exit_text(status, how, sizeof how);
		c->pid = 0;
	} else {
		snprintf(how, sizeof how, "no readiness report");
	}
	err_set(err, "PS %d (tfgb serve on %s:%u) failed to start: %s", c->index, host,
	         c->addr.port, how);
	return -1;
}

void cluster_stop(struct cluster_child *c, int timeout_ms)
{
	int status;

	if (c->ready_fd >= 0) {
		close(c->ready_fd);
		c->ready_fd = -1;
	}
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGTERM);
	kill(c->pid, SIGCONT); /* a stopped child gets its SIGTERM now */
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		if (waitpid(c->pid, &status, WNOHANG) == c->pid) {
			c->pid = 0;
			return;
		}
		usleep(10000);
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
	c->pid = 0;
}

int cluster_spawn_serve(const struct job *j, int index, unsigned flags, struct cluster_child *c,
                        struct err *err)
{
	return cluster_spawn(j, "serve", index, 0, flags, c, err);
}

const char *cluster_control_hint(const struct job *j)
{
	return j->control.n ? "set cluster.control to a free address of this host" :
	       "set cluster.control to a free address of this host (by default it is PS 0's "
	       "host at PS 0's port - 1)";
}

/* Launchers and the variables that carry a process's rank, the count and
 * the rank among the processes of its node.  An MPI launcher's come first:
 * mpirun under Slurm starts its daemons with srun, so its ranks inherit a
 * SLURM_PROCID that numbers nodes, not ranks. */
static const struct {
	const char *name, *rank, *size, *local;
} launchers[] = {
	{"open mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
	{"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
	{"pmix", "PMIX_RANK", NULL, "PMIX_LOCAL_RANK"},
};

static int env_int(const char *name, long max, long *out)
{
	const char *v = name ? getenv(name) : NULL;
	int64_t x;

	if (!v || !*v)
		return 0;
	if (opt_parse_int(v, &x) < 0 || x < 0 || x > max)
		return -1;
	*out = (long)x;
	return 1;
}

int cluster_slurm_batch_step(void)
{
	const char *step = getenv("SLURM_STEP_ID");

	if (!step || !*step)
		step = getenv("SLURM_STEPID");
	/* slurmd gives the batch script the job's variables and SLURM_PROCID=0
	 * but no step id (Slurm 22.05; later ones may name the batch step by
	 * SLURM_BATCH_SCRIPT, 4294967291) */
	return getenv("SLURM_PROCID") && getenv("SLURM_JOB_ID") &&
	       (!step || !*step || !strcmp(step, "4294967291") || !strcmp(step, "batch"));
}

long cluster_launch_size(void)
{
	for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
		long n;
		if (env_int(launchers[i].rank, 65535, &n) > 0 &&
		    env_int(launchers[i].size, 65536, &n) > 0)
			return n;
	}
	return 0;
}

const char *cluster_launch_cmd(void)
{
	/* mpirun's ranks in a Slurm job inherit SLURM_JOB_ID from the srun
	 * that started its daemons, and have Open MPI's count besides */
	return getenv("SLURM_JOB_ID") && !getenv("OMPI_COMM_WORLD_SIZE") ? "srun --mpi=pmix -n"
	                                                                  : "mpirun -np";
}

/* One launcher's variables into r: 1 when its rank is set, 0 when not, -1
 * with err when one is malformed. */
static int rank_from(size_t i, struct cluster_rank *r, struct err *err)
{
	long idx, size, local;
	int got = env_int(launchers[i].rank, 65535, &idx);

	if (got <= 0) {
		if (got < 0)
			err_set(err, "environment variable %s is not a rank in [0, 65535]",
			         launchers[i].rank);
		return got;
	}
	r->index = (int)idx;
	r->source = launchers[i].rank;
	got = env_int(launchers[i].size, 65536, &size);
	if (got < 0 || (got > 0 && size < 1)) {
		err_set(err, "environment variable %s is not a count in [1, 65536]",
		         launchers[i].size);
		return -1;
	}
	if (got > 0) {
		r->size = (int)size;
		r->size_source = launchers[i].size;
	}
	if ((got = env_int(launchers[i].local, 65535, &local)) < 0) {
		err_set(err, "environment variable %s is not a rank in [0, 65535]",
		         launchers[i].local);
		return -1;
	}
	if (got > 0) {
		r->local = (int)local;
		r->local_source = launchers[i].local;
	}
	return 1;
}

int cluster_rank(int task, struct cluster_rank *r, struct err *err)
{
	*r = (struct cluster_rank){.index = -1, .size = -1, .local = -1};
	if (task >= 0) {
		r->index = task;
		r->source = "--task";
		r->local = task; /* one machine's processes, or a hand-started one */
		r->local_source = "--task";
		return 0;
	}
	for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
		int got;
		if (!strcmp(launchers[i].name, "slurm") && cluster_slurm_batch_step()) {
			r->batch_step = 1; /* not a task of a step: no rank */
			continue;
		}
		if ((got = rank_from(i, r, err)) != 0)
			return got < 0 ? -1 : 0;
	}
	return 0;
}

int cluster_speaks(const struct cluster_rank *r, int each, int *last)
{
	const char *v = getenv("OMPI_APP_CTX_NUM_PROCS");
	long first = 0, n;
	char *end;

	if (last)
		*last = r->size > 0 && !each ? r->size - 1 : r->index;
	if (!v || !r->source || strncmp(r->source, "OMPI_", 5) != 0)
		return each || r->index <= 0;
	/* the contexts' sizes, in rank order: "1 3" */
	while ((n = strtol(v, &end, 10)) > 0 && end != v) {
		if (r->index < first + n) {
			if (last)
				*last = (int)(first + n - 1);
			return r->index == first;
		}
		first += n;
		v = end;
	}
	return 0; /* past every context: the variable does not describe this launch */
}

int cluster_role(const struct job *j, int workers_set, int serve, const struct cluster_rank *r,
                 struct cluster_role *out, struct err *err)
{
	long np = (long)j->ps_count, nw = (long)j->workers;
	int last;

	*out = (struct cluster_role){.ps = -1, .worker = -1, .workers = (int)nw};
	if (r->index < 0 || !strcmp(r->source, "--task")) {
		(serve ? &out->ps : &out->worker)[0] = r->index;
		return 0;
	}
	if (serve && !workers_set && r->size > np) /* MPMD, the key on the workers' side only */
		out->workers = (int)(nw = r->size - np);
	if (r->size > 0 && (workers_set || serve) && r->size == np + nw) { /* one launch */
		out->one_launch = 1;
		if (r->index < np)
			out->ps = r->index;
		else if (serve)
			goto worker_rank;
		else
			out->worker = (int)(r->index - np);
		return 0;
	}
	if (serve)
		return 0; /* a server of its own step: the PS addresses of its host */
	if (r->size > 0 && workers_set && r->size != nw) {
		char fit[96] = "";
		if (r->size > np) /* the launch as it is: its first np ranks the servers */
			snprintf(fit, sizeof fit, "-s cluster.workers=%ld (ranks 0..%ld the servers) or ",
			         r->size - np, np - 1);
		err_set(err, "the launcher runs %d processes (%s) but the job has %ld "
		         "parameter server%s and %ld workers: for this launch set %s-s "
		         "cluster.workers=%d (the workers alone, servers started apart); or "
		         "launch %ld (every PS and worker) or %ld (the workers)", r->size,
		         r->size_source, np, np == 1 ? "" : "s", nw, fit, r->size, np + nw, nw);
		return -1;
	}
	if (r->size > 0)
		out->workers = r->size;
	out->worker = r->index;
	return 0;
worker_rank:
	cluster_speaks(r, 1, &last); /* this part of the launch: one line for all of it */
	if (last > r->index)
		err_set(err, "ranks %d..%d (%s) of a launch of %d are workers %ld..%ld's (ranks "
		        "0..%ld are the parameter servers): start tfgb throughput there",
		        r->index, last, r->source, r->size, r->index - np, last - np, np - 1);
	else
		err_set(err, "rank %d (%s) of a launch of %d is worker %ld's (ranks 0..%ld are "
		        "the parameter servers): start tfgb throughput there", r->index, r->source,
		        r->size, r->index - np, np - 1);
	return -1;
}

uint64_t cluster_run_id(const char *job_text)
{
	/* FNV-1a over the job and whatever names this launch, so that every
	 * worker of one launch computes the same id and the next launch another */
	static const char *const ids[] = {"TFGB_RUN_ID", "SLURM_JOB_ID", "SLURM_STEP_ID",
	                                  "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", NULL};
	uint64_t h = 0xcbf29ce484222325ull;
	const char *v = getenv("TFGB_RUN_ID");
	unsigned long long given;

	if (v && sscanf(v, "%16llx", &given) == 1 && given)
		return given;
	for (const char *p = job_text; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	for (int i = 1; ids[i]; i++)
		for (const char *p = getenv(ids[i]); p && *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return h ? h : 1;
}
