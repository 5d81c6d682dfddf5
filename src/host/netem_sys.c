/* netem_sys.c - what the emulated links of [network] (netem.h) ask of the
 * system, whichever topology: network namespaces (and the user namespace
 * that lets a user make them), interfaces set by ioctl, the tools tc, ip
 * and nft run with a deadline, and /proc/sys files.  netem.c builds the
 * pair, netem_switch.c the switch, both with these. */
#include "netem.h"
#include "netem_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/* --- the namespaces ------------------------------------------------- */

int netem_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = -1;

	if (fd >= 0) {
		rc = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
		close(fd);
	}
	return rc;
}

/* 1 once this process made itself a user namespace: it cannot go back to
 * its first network namespace then (that one's owner is not its user
 * namespace), and stays in the link's last one, which nothing else holds. */
int netem_in_userns;

/* Without root, this process becomes root of a user namespace of its own
 * (its children too), which owns the network namespaces it makes next. */
static int user_ns(struct err *err)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (unshare(CLONE_NEWUSER) < 0) {
		err_set(err, "network: needs root, or user namespaces to make network namespaces "
		        "(unshare: %s); run as root or enable unprivileged user namespaces",
		        strerror(errno));
		return -1;
	}
	snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
	if (netem_write_file("/proc/self/setgroups", "deny") < 0 ||
	    netem_write_file("/proc/self/uid_map", map) < 0 ||
	    (snprintf(map, sizeof map, "0 %u 1", (unsigned)gid),
	     netem_write_file("/proc/self/gid_map", map) < 0)) {
		err_set(err, "network: cannot map this user into its user namespace: %s",
		        strerror(errno));
		return -1;
	}
	netem_in_userns = 1;
	return 0;
}

/* A new network namespace for the calling thread, its descriptor in *fd. */
int netem_new_ns(int *fd, struct err *err)
{
	if (unshare(CLONE_NEWNET) < 0) {
		if (errno != EPERM || geteuid() == 0 || user_ns(err) < 0 || unshare(CLONE_NEWNET) < 0) {
			if (errno == EPERM && geteuid() == 0)
				err_set(err, "network: cannot make a network namespace: %s",
				        strerror(errno));
			else if (errno)
				err_set(err, "network: cannot make a network namespace: %s",
				        strerror(errno));
			return -1;
		}
	}
	*fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		err_set(err, "network: /proc/self/ns/net: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int netem_if_ioctl(int s, unsigned long req, struct ifreq *r, const char *what,
                    struct err *err)
{
	if (ioctl(s, req, r) == 0)
		return 0;
	err_set(err, "network: %s %s: %s", r->ifr_name, what, strerror(errno));
	return -1;
}

void netem_addr_set(struct sockaddr *sa, const char *ip)
{
	struct sockaddr_in *in = (struct sockaddr_in *)sa;

	memset(in, 0, sizeof *in);
	in->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &in->sin_addr);
}

/* The current namespace's loopback up. */
int netem_lo_up(int s, struct err *err)
{
	struct ifreq r;

	memset(&r, 0, sizeof r);
	snprintf(r.ifr_name, sizeof r.ifr_name, "lo");
	r.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
	return netem_if_ioctl(s, SIOCSIFFLAGS, &r, "up", err);
}

/* A veth end without TSO, GSO and GRO: the pair carries packets of at most
 * the MTU, as a wire would, not 64 KiB segments (side_rate: how TBF counts). */
int netem_offloads_off(int s, const char *dev, struct err *err)
{
	static const uint32_t cmd[] = {ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO};
	static const uint32_t get[] = {ETHTOOL_GTSO, ETHTOOL_GGSO, ETHTOOL_GGRO};
	static const char *const what[] = {"TSO off", "GSO off", "GRO off"};

	for (size_t i = 0; i < sizeof cmd / sizeof cmd[0]; i++) {
		struct ethtool_value v = {.cmd = cmd[i], .data = 0};
		struct ifreq r;
		memset(&r, 0, sizeof r);
		snprintf(r.ifr_name, sizeof r.ifr_name, "%s", dev);
		r.ifr_data = (void *)&v;
		if (netem_if_ioctl(s, SIOCETHTOOL, &r, what[i], err) < 0)
			return -1;
		/* what the device says now, for the result */
		v = (struct ethtool_value){.cmd = get[i]};
		if (ioctl(s, SIOCETHTOOL, &r) < 0 || v.data)
			ne.offloads_on |= 1 << i;
	}
	return 0;
}


/* Waits until fd is ready for events by the deadline: 0, or -1. */
int netem_wait_fd(int fd, short events, uint64_t until)
{
	struct pollfd p = {.fd = fd, .events = events};

	for (uint64_t now = now_ns(); now < until && !tfgb_stop; now = now_ns()) {
		uint64_t ms = (until - now) / 1000000 + 1; /* 100 ms slices: a signal ends it */
		if (poll(&p, 1, ms > 100 ? 100 : (int)ms) > 0)
			return 0;
	}
	return -1;
}

/* Where a tool of the link (tc, ip, nft) is: the PATH's, else /usr/sbin's or
 * /sbin's (a user's PATH often lacks them, and the rootless route runs
 * them too).  1 with its path in buf, or 0. */
int netem_tool_find(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p = path ? path : "";
	char dirs[4096];

	snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/sbin", p);
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, size, "%s/%s", d, name);
		if (access(buf, X_OK) == 0)
			return 1;
	}
	return 0;
}

/* Runs argv (tc, ip, nft) in the current namespace within 5 s: 0, or -1
 * with its first line of errors in err.  Its output (errors included) in
 * out, when out is not NULL. */
int netem_run_out(char *const argv[], char *out, size_t size, struct err *err)
{
	int p[2], status = 0;
	char buf[4096] = "", path[512];
	uint64_t until = now_ns() + 5000000000ull;
	size_t got = 0;
	pid_t pid;

	if (!netem_tool_find(argv[0], path, sizeof path))
		return err_set(err, "%s: not found (PATH, /usr/sbin, /sbin)", argv[0]), -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_set(err, "pipe: %s", strerror(errno)), -1;
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(path, argv);
		dprintf(2, "%s: %s", path, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return err_set(err, "fork: %s", strerror(errno)), -1;
	}
	for (ssize_t n = 1; n > 0 && netem_wait_fd(p[0], POLLIN, until) == 0;) {
		n = read(p[0], buf + got, sizeof buf - 1 - got);
		got += n > 0 ? (size_t)n : 0;
		if (got == sizeof buf - 1)
			break;
	}
	buf[got] = 0;
	close(p[0]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ns() > until || tfgb_stop) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return err_set(err, "%s %s", argv[0], tfgb_stop ? "interrupted" : "took more than 5 s"), -1;
		}
		usleep(2000);
	}
	if (out)
		snprintf(out, size, "%s", buf);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	buf[strcspn(buf, "\n")] = 0;
	err_set(err, "%s", buf[0] ? buf : "failed");
	return -1;
}

int netem_run_cmd(char *const argv[], struct err *err)
{
	return netem_run_out(argv, NULL, 0, err);
}

/* A /proc/sys file's first line into buf (newline cut): 0, or -1. */
int netem_read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	int rc = f && fgets(buf, (int)size, f) ? 0 : -1;

	if (f)
		fclose(f);
	if (rc == 0)
		buf[strcspn(buf, "\n")] = 0;
	return rc;
}