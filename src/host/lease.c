/* lease.c - sharing an auto-started server between runs (lease.h). */
#include "lease.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int lease_paths(uint16_t port, char *start, char *lease, size_t len)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char dir[96];
	struct stat st;

	if (rt && *rt && strlen(rt) < 64)
		snprintf(dir, sizeof dir, "%s/tfgb", rt);
	else
		snprintf(dir, sizeof dir, "/tmp/tfgb-%u", (unsigned)getuid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* another user's directory is not ours to lock in */
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return -EPERM;
	snprintf(start, len, "%s/serve-%u.start", dir, port);
	snprintf(lease, len, "%s/serve-%u.lease", dir, port);
	return 0;
}

/* flock with a deadline: 0, or -errno (-EAGAIN at the deadline). */
static int lock_until(int fd, int how, uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	for (;;) {
		if (flock(fd, how | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if ((stop && *stop) || now_ns() >= deadline_ns)
			return -EAGAIN;
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	}
}

/* 1 when fd is the file at path now. */
static int same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Both locks held exclusively: the files go, so that ports used once do not
 * leave files behind. */
static void unlink_both(const char *lease_path)
{
	char start[160];
	size_t n = strlen(lease_path);

	if (n < 6 || n >= sizeof start)
		return;
	snprintf(start, sizeof start, "%.*s.start", (int)(n - 6), lease_path);
	unlink(lease_path);
	unlink(start);
}

int lease_take(uint16_t port, uint64_t deadline_ns, volatile sig_atomic_t *stop,
               struct lease *l, struct err *err)
{
	char start[sizeof l->path];
	int rc;

	l->start_fd = l->lease_fd = -1;
	l->last = 0;
	if ((rc = lease_paths(port, start, l->path, sizeof l->path)) < 0)
		return rc;
	/* the last user removes the files under both locks: a start lock
	 * taken on a file that is gone by then is taken again on the new one */
	for (;;) {
		if ((l->start_fd = open(start, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
			return -errno;
		if ((rc = lock_until(l->start_fd, LOCK_EX, deadline_ns, stop)) < 0)
			break;
		if (same_file(l->start_fd, start))
			break;
		close(l->start_fd);
	}
	if (rc == 0 && (l->lease_fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		rc = -errno;
		lease_close(l);
		return rc;
	}
	if (rc < 0 || (rc = lock_until(l->lease_fd, LOCK_SH, deadline_ns, stop)) < 0) {
		if (rc == -EAGAIN)
			err_set(err, "another run on port %u held %s for the whole job.timeout "
			        "(it was starting or stopping its server there)", port, start);
		lease_close(l);
		return rc;
	}
	return 0;
}

void lease_looked(struct lease *l)
{
	if (l->start_fd >= 0)
		flock(l->start_fd, LOCK_UN);
}

int lease_last(struct lease *l, uint64_t deadline_ns)
{
	if (l->start_fd < 0 || l->lease_fd < 0)
		return 1; /* no lease: the run owns its server alone, as before leases */
	if (lock_until(l->start_fd, LOCK_EX, deadline_ns, NULL) < 0)
		return 0; /* cannot decide: leave it, it stops by itself */
	/* under the start lock no run attaches and the server does not decide,
	 * so giving up the shared lease before asking for it whole is safe */
	flock(l->lease_fd, LOCK_UN);
	if (flock(l->lease_fd, LOCK_EX | LOCK_NB) == 0)
		return l->last = 1;
	lease_close(l);
	return 0;
}

/* 1 when a live server watches the lease file fd: lease_watch_start wrote
 * its pid there. */
static int watched(int fd)
{
	char buf[24] = "";
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	long pid = n > 0 ? strtol(buf, NULL, 10) : 0;

	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

void lease_leave(struct lease *l, uint64_t deadline_ns)
{
	if (l->start_fd >= 0 && l->lease_fd >= 0 &&
	    lock_until(l->start_fd, LOCK_EX, deadline_ns, NULL) == 0) {
		/* as lease_last: under the start lock nobody attaches */
		flock(l->lease_fd, LOCK_UN);
		l->last = flock(l->lease_fd, LOCK_EX | LOCK_NB) == 0 && !watched(l->lease_fd);
	}
	lease_close(l);
}

void lease_close(struct lease *l)
{
	if (l->last && l->start_fd >= 0 && l->lease_fd >= 0)
		unlink_both(l->path);
	l->last = 0;
	if (l->start_fd >= 0)
		close(l->start_fd);
	if (l->lease_fd >= 0)
		close(l->lease_fd);
	l->start_fd = l->lease_fd = -1;
}

int lease_idle(int start_fd, int lease_fd)
{
	if (flock(start_fd, LOCK_EX | LOCK_NB) < 0)
		return 0; /* a run is looking, or deciding */
	if (flock(lease_fd, LOCK_EX | LOCK_NB) == 0)
		return 1;
	flock(start_fd, LOCK_UN);
	return 0;
}

struct lease_watch {
	pthread_t thread;
	int start_fd, lease_fd;
	char path[160];
	volatile sig_atomic_t idle; /* it holds both locks: the files go at its end */
	pid_t parent;
	volatile sig_atomic_t *stop;
	volatile int quit;
};

static void *watch_run(void *arg)
{
	struct lease_watch *w = arg;
	int detached = 0;

	while (!w->quit && !*w->stop) {
		nanosleep(&(struct timespec){0, LEASE_POLL_MS * 1000000L}, NULL);
		if (!detached && getppid() != w->parent) {
			int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
				close(fd);
			}
			detached = 1;
		}
		if (lease_idle(w->start_fd, w->lease_fd)) {
			w->idle = 1;
			*w->stop = 1;
		}
	}
	return NULL;
}

int lease_watch_start(const char *lease_path, volatile sig_atomic_t *stop,
                      struct lease_watch **out)
{
	struct lease_watch *w = calloc(1, sizeof *w);
	char start[160];
	size_t n = strlen(lease_path);
	int rc;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	if (n < 6 || n >= sizeof start || strcmp(lease_path + n - 6, ".lease")) {
		free(w);
		return -EINVAL;
	}
	snprintf(start, sizeof start, "%.*s.start", (int)(n - 6), lease_path);
	w->start_fd = open(start, O_RDWR | O_CLOEXEC);
	w->lease_fd = open(lease_path, O_RDWR | O_CLOEXEC);
	w->parent = getppid();
	w->stop = stop;
	snprintf(w->path, sizeof w->path, "%s", lease_path);
	if (w->start_fd < 0 || w->lease_fd < 0) {
fail_errno:
		rc = -errno;
		goto fail;
	}
	{ /* its pid: a run that used it and ends last leaves the files to it */
		char pid[24];
		int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
		if (ftruncate(w->lease_fd, 0) < 0 || pwrite(w->lease_fd, pid, (size_t)len, 0) != len)
			goto fail_errno;
	}
	prctl(PR_SET_PDEATHSIG, 0); /* outlive the starter while others use it */
	if ((rc = -pthread_create(&w->thread, NULL, watch_run, w)) < 0)
		goto fail;
	*out = w;
	return 0;
fail:
	if (w->start_fd >= 0)
		close(w->start_fd);
	if (w->lease_fd >= 0)
		close(w->lease_fd);
	free(w);
	return rc;
}

void lease_watch_end(struct lease_watch *w)
{
	if (!w)
		return;
	w->quit = 1;
	pthread_join(w->thread, NULL);
	/* stopped by something else first (a signal, or its launch's end
	 * seen by another thread while the launcher's lock was still held):
	 * once nobody holds the lease, within five looks, the files go as
	 * well, or they are left behind for good */
	for (int i = 0; !w->idle && i < 5; i++) {
		if (i)
			nanosleep(&(struct timespec){0, LEASE_POLL_MS * 1000000L}, NULL);
		w->idle = lease_idle(w->start_fd, w->lease_fd);
	}
	if (w->idle)
		unlink_both(w->path);
	close(w->start_fd);
	close(w->lease_fd);
	free(w);
}
