/* launch_ranks.c - the one-machine launcher of a run whose every process
 * is a rank (launch_ranks.h). */
#include "launch_ranks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "launch.h"
#include "netem.h"
#include "util.h"

#define RANKS_POLL_NS 20000000ull  /* how often the launcher looks at its ranks */
#define RANKS_GRACE_NS 500000000ull /* after a failure: the others' ends, to name the first */
#define RANKS_STOP_MS 2000          /* SIGTERM, then SIGKILL after this */

struct rank_child {
	struct cluster_child c;
	int status, ended;
};

/* Starts rank i: `tfgb CMD -c JOB --task i -s output.file=`, rank 0's
 * standard output the report's stream (out_fd). */
static int rank_start(struct tfgb *t, const char *jobpath, int i, int out_fd,
                      struct rank_child *r)
{
	char task[16];
	char *argv[] = {"tfgb", (char *)t->cmd, "-c", (char *)jobpath, "--task", task, "-s",
	                "output.file=", t->quiet ? "-q" : NULL, NULL};
	static const char *const env[] = {"TFGB_LAUNCHER", "1", NULL};
	pid_t pid;

	snprintf(task, sizeof task, "%d", i);
	pid = cluster_exec(&(struct cluster_exec){.cmd = t->cmd, .argv = argv,
	                                          .stdout_fd = i == 0 ? out_fd : -1, .keep_fd = -1,
	                                          .env = env});
	if (pid < 0) {
		tfgb_error("%s: cannot start rank %d: fork: %s", t->cmd, i, strerror((int)-pid));
		return -1;
	}
	r->c = (struct cluster_child){.pid = pid, .ready_fd = -1, .index = i};
	return 0;
}

/* Reaps the ranks that ended: how many failed (not exit status 0). */
static int reap(struct rank_child *r, int n, int *running)
{
	int failed = 0;

	for (int i = 0; i < n; i++) {
		if (!r[i].ended && r[i].c.pid > 0 && waitpid(r[i].c.pid, &r[i].status, WNOHANG) ==
		                                         r[i].c.pid) {
			r[i].ended = 1;
			r[i].c.pid = 0;
			(*running)--;
		}
		failed += r[i].ended && r[i].status != 0;
	}
	return failed;
}

/* The rank to name: the first killed by a signal, else the first that
 * failed.  -1 when none did. */
static int culprit(const struct rank_child *r, int n)
{
	int first = -1;

	for (int i = 0; i < n; i++) {
		if (r[i].ended && WIFSIGNALED(r[i].status))
			return i;
		if (first < 0 && r[i].ended && r[i].status != 0)
			first = i;
	}
	return first;
}

/* Waits for every rank until the deadline: TFGB_EXIT_OK, or the status
 * after one line naming the rank that failed (the others are stopped). */
static int ranks_wait(struct tfgb *t, struct rank_child *r, int n, uint64_t run_ns)
{
	const uint64_t deadline_ns = now_ns() + run_ns;
	uint64_t fail_ns = 0;
	int running = n, bad, usage = 0;
	char how[96];

	while (running > 0) {
		if (reap(r, n, &running) && !fail_ns)
			fail_ns = now_ns();
		if (running == 0 || tfgb_stop || now_ns() >= deadline_ns ||
		    (fail_ns && now_ns() - fail_ns >= RANKS_GRACE_NS))
			break;
		nanosleep(&(struct timespec){0, RANKS_POLL_NS}, NULL);
	}
	for (int i = 0; i < n; i++)
		if (!r[i].ended && r[i].c.pid > 0)
			cluster_stop(&r[i].c, RANKS_STOP_MS);
	if ((bad = culprit(r, n)) >= 0) {
		cluster_exit_text(r[bad].status, how, sizeof how);
		usage = WIFEXITED(r[bad].status) && WEXITSTATUS(r[bad].status) == TFGB_EXIT_USAGE;
		tfgb_error("%s: rank %d %s: %s%s", t->cmd, bad, WIFSIGNALED(r[bad].status) ?
		           "died" : "failed", how, running > 0 ? "; the other ranks were stopped" : "");
		return usage ? TFGB_EXIT_USAGE : TFGB_EXIT_FAIL;
	}
	if (running > 0 && tfgb_stop) {
		tfgb_error("%s: interrupted: the ranks were stopped", t->cmd);
		return TFGB_EXIT_FAIL;
	}
	if (running > 0) {
		tfgb_error("%s: the ranks did not end within %.0fs; they were stopped", t->cmd,
		           (double)run_ns / 1e9);
		return TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

int launch_ranks(struct tfgb *t, uint64_t run_ns)
{
	const struct job *j = &t->job;
	int n = (int)j->workers, mfd = -1, rc = TFGB_EXIT_FAIL, started = 0;
	struct rank_child *r = calloc((size_t)n, sizeof *r);
	char *text = job_ini_string(j), jobpath[64];
	FILE *out = tfgb_out(t);

	if (!r || !text) {
		tfgb_error("%s: out of memory", t->cmd);
		goto out;
	}
	if (!out)
		goto out;
	fflush(out);
	/* per-host links: every rank on a host of the switch (netem.h); the
	 * pair has no side for ranks and is left alone */
	if (j->net_topology == JOB_NET_SWITCH && (rc = launch_net_up(t, 0, n)) != TFGB_EXIT_OK)
		goto out;
	rc = TFGB_EXIT_FAIL;
	if ((mfd = cluster_job_memfd(text, jobpath, sizeof jobpath)) < 0) {
		tfgb_error("%s: cannot pass the job to the ranks: %s", t->cmd, strerror(-mfd));
		goto out;
	}
	for (started = 0; started < n; started++) {
		struct err err;
		if (netem_switched() && netem_enter(started, &err) < 0) {
			tfgb_error("%s: %s", t->cmd, err.msg);
			break;
		}
		if (rank_start(t, jobpath, started, fileno(out), &r[started]) < 0)
			break;
	}
	close(mfd);
	if (started < n) {
		for (int i = 0; i < started; i++)
			cluster_stop(&r[i].c, RANKS_STOP_MS);
		goto out;
	}
	rc = ranks_wait(t, r, n, run_ns);
out:
	netem_stop();
	free(text);
	free(r);
	return rc;
}
