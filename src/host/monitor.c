/* monitor.c - samples /proc for a run's processes and the host's network. */
#include "monitor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "monitor_int.h"
#include "netem.h"
#include "util.h"
#include "tcpbytes.h"

/* the [monitor] section's resources (job.h, job_monitor_mask) are these bits */
_Static_assert(MONITOR_CPU == 1 << RES_CPU && MONITOR_MEMORY == 1 << RES_MEMORY &&
               MONITOR_NETWORK == 1 << RES_NETWORK && MONITOR_CSW == 1 << RES_CSW &&
               MONITOR_ALL == (1 << RES_COUNT) - 1, "enum monitor_res is the MONITOR_* bits");

/* ---- reading /proc ---- */

/* Reads a small file whole into buf (NUL-terminated); its length or -1. */
/* The read() calls slurp made in this process, every monitor's: taken
 * off this process's syscr, so that its figure is the run's, not the
 * monitor's reading of /proc. */
static _Atomic uint64_t own_reads;

static ssize_t slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while (got + 1 < len) {
		own_reads++;
		if ((r = read(fd, buf + got, len - 1 - got)) == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	buf[got] = 0;
	return (ssize_t)got;
}

/* The number after "name:" at the start of a line of text, or 0. */
static uint64_t field(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ':')
			return strtoull(p + n + 1, NULL, 10);
	return 0;
}

/* The entry of thread tid in t, added when new; NULL when out of memory. */
static struct tid_csw *tid_entry(struct tids *t, pid_t tid)
{
	struct tid_csw *e;

	for (size_t i = 0; i < t->n; i++)
		if (t->t[i].tid == tid)
			return &t->t[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 32;
		if (!(e = realloc(t->t, cap * sizeof *e)))
			return NULL;
		t->t = e;
		t->cap = cap;
	}
	t->t[t->n] = (struct tid_csw){.tid = tid};
	return &t->t[t->n++];
}

/* The context switches of all the threads of process pid into s: its
 * /proc/PID/status counts its main thread's only.  This process: the
 * kernel's account of all its threads, ended ones included (getrusage).
 * Another: the sum over /proc/PID/task/<tid>/status, and for each thread
 * that ended since the last read, the counts it had then (t).  0 when read. */
static int read_csw(pid_t pid, struct tids *t, struct psample *s)
{
	char path[64], buf[4096];
	struct rusage ru;
	struct dirent *d;
	DIR *dir;
	size_t k = 0;

	if (pid == getpid() && getrusage(RUSAGE_SELF, &ru) == 0) {
		s->vcsw = (uint64_t)ru.ru_nvcsw;
		s->ivcsw = (uint64_t)ru.ru_nivcsw;
		return 0;
	}
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if (!t || !(dir = opendir(path)))
		return -1;
	for (size_t i = 0; i < t->n; i++)
		t->t[i].seen = 0;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);
		struct tid_csw *e;
		if (tid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
		if (slurp(path, buf, sizeof buf) < 0 || !(e = tid_entry(t, tid)))
			continue; /* ended just now: its last counts stay */
		e->vcsw = field(buf, "voluntary_ctxt_switches");
		e->ivcsw = field(buf, "nonvoluntary_ctxt_switches");
		e->seen = 1;
	}
	closedir(dir);
	s->vcsw = t->gone_vcsw;
	s->ivcsw = t->gone_ivcsw;
	for (size_t i = 0; i < t->n; i++) {
		if (!t->t[i].seen) { /* ended: counted apart from now on */
			t->gone_vcsw += t->t[i].vcsw;
			t->gone_ivcsw += t->t[i].ivcsw;
		} else {
			t->t[k++] = t->t[i];
		}
		s->vcsw += t->t[i].vcsw;
		s->ivcsw += t->t[i].ivcsw;
	}
	t->n = k;
	return 0;
}

static void read_proc(pid_t pid, struct tids *t, const struct psample *prev, struct psample *s,
                      int want_io)
{
	char path[64], buf[4096], *p;
	uint64_t self_reads;
	int k, zombie;

	*s = prev ? *prev : (struct psample){0};
	s->ok = s->io = s->sysc = 0;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (slurp(path, buf, sizeof buf) < 0 || !(p = strrchr(buf, ')')))
		return;
	/* after "pid (comm)": state is field 3, utime 14, stime 15 */
	p++;
	if (p[0] != ' ' || p[1] == 'X')
		return;
	/* a zombie still has its final CPU times and switches, not its memory */
	zombie = p[1] == 'Z';
	for (k = 3; k < 14 && p; k++)
		p = strchr(p + 1, ' ');
	if (!p)
		return;
	s->utime = strtoull(p + 1, &p, 10);
	s->stime = strtoull(p, NULL, 10);
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (slurp(path, buf, sizeof buf) < 0)
		return;
	if (!zombie) {
		s->rss = field(buf, "VmRSS") * 1024;
		s->hwm = field(buf, "VmHWM") * 1024;
	} else {
		s->rss = 0; /* not read again: role_add averages no copy of the last */
	}
	/* a zombie's threads are gone: its last counts stay (s is prev), until
	 * monitor_exited tells the kernel's final account */
	if (zombie && !prev) {
		s->vcsw = field(buf, "voluntary_ctxt_switches");
		s->ivcsw = field(buf, "nonvoluntary_ctxt_switches");
	} else if (!zombie && read_csw(pid, t, s) < 0) {
		return; /* gone since its stat was read */
	}
	s->ok = 1;
	if (zombie || !want_io)
		return;
	snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
	/* the kernel counts a read after it made the text: this one's not yet */
	self_reads = pid == getpid() ? own_reads : 0;
	if (slurp(path, buf, sizeof buf) >= 0) {
		s->rchar = field(buf, "rchar");
		s->wchar = field(buf, "wchar");
		s->syscr = field(buf, "syscr") - self_reads;
		s->syscw = field(buf, "syscw");
		s->sysc = strstr(buf, "syscw:") != NULL;
		s->io = 1;
	}
}

/* Reads /proc/net/dev into ns[i * max + k]; names the interfaces the
 * first time. */
static void read_net(struct monitor *m, size_t k)
{
	char buf[16384], *line, *save = NULL;
	int first = k == 0 && m->nif == 0;

	for (size_t i = 0; i < m->nif; i++)
		m->ns[i * m->max + k] = k ? m->ns[i * m->max + k - 1] : (struct nsample){0};
	if (slurp("/proc/net/dev", buf, sizeof buf) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *name = line;
		unsigned long long v[16];
		size_t i;

		if (!colon)
			continue; /* a header line */
		*colon = 0;
		while (*name == ' ')
			name++;
		if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
		           "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
		           &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13], &v[14], &v[15]) != 16)
			continue;
		for (i = 0; i < m->nif; i++)
			if (!strcmp(m->ifname[i], name))
				break;
		if (i == m->nif) {
			if (!first || m->nif == MONITOR_MAX_IFACES || strlen(name) >= MONITOR_IFACE_MAX)
				continue;
			snprintf(m->ifname[i], MONITOR_IFACE_MAX, "%s", name);
			m->nif++;
		}
		m->ns[i * m->max + k] = (struct nsample){.rx_bytes = v[0], .rx_packets = v[1],
		                                         .tx_bytes = v[8], .tx_packets = v[9]};
	}
}

/* ---- the buffer ---- */

/* Keeps samples 0, 2, 4, ... and doubles the interval. */
static void thin(struct monitor *m)
{
	size_t keep = (m->n + 1) / 2;

	for (size_t j = 1; j < keep; j++) {
		m->t[j] = m->t[2 * j];
		for (size_t p = 0; p < m->nprocs; p++)
			m->ps[p * m->max + j] = m->ps[p * m->max + 2 * j];
		for (size_t i = 0; i < m->nif; i++)
			m->ns[i * m->max + j] = m->ns[i * m->max + 2 * j];
	}
	m->n = keep;
	m->interval_ns *= 2;
}

/* Ring mode: drops the oldest quarter of the samples (under lock). */
static void drop_oldest(struct monitor *m)
{
	size_t drop = m->max / 4, keep = m->n - drop;

	pthread_mutex_lock(&m->lock);
	memmove(m->t, m->t + drop, keep * sizeof *m->t);
	for (size_t p = 0; p < m->nprocs; p++)
		memmove(&m->ps[p * m->max], &m->ps[p * m->max + drop], keep * sizeof *m->ps);
	for (size_t i = 0; i < m->nif; i++)
		memmove(&m->ns[i * m->max], &m->ns[i * m->max + drop], keep * sizeof *m->ns);
	m->n = keep;
	pthread_mutex_unlock(&m->lock);
}

void monitor_ring(struct monitor *m)
{
	m->ring = 1;
}

void monitor_sample(struct monitor *m)
{
	size_t k;

	if (m->n == m->max && m->ring)
		drop_oldest(m);
	else if (m->n == m->max)
		thin(m);
	k = m->n;
	m->t[k] = now_ns();
	for (size_t p = 0; p < m->nprocs; p++) {
		struct psample *s = &m->ps[p * m->max + k];
		int exited;

		pthread_mutex_lock(&m->lock);
		exited = m->procs[p].exited;
		pthread_mutex_unlock(&m->lock);
		if (exited) {
			*s = m->procs[p].final; /* written once, before exited was set */
			continue;
		}
		read_proc(m->procs[p].pid, m->tids ? &m->tids[p] : NULL, k ? s - 1 : NULL, s,
		          m->what & MONITOR_NETWORK);
	}
	if (m->what & MONITOR_NETWORK)
		read_net(m, k);
	if ((m->what & MONITOR_NETWORK) && m->wire)
		tcpbytes_sample(m->wire);
	if (m->ring) /* slot k is written: readers may see it now */
		pthread_mutex_lock(&m->lock);
	m->n = k + 1;
	if (m->ring)
		pthread_mutex_unlock(&m->lock);
}

int monitor_new(struct monitor **out, const struct monitor_target *t, size_t n,
                uint64_t interval_ns, size_t max_samples)
{
	struct monitor *m;
	long tick = sysconf(_SC_CLK_TCK);

	*out = NULL;
	if (max_samples == 0)
		max_samples = MONITOR_DEFAULT_SAMPLES;
	if ((n && !t) || n > MONITOR_MAX_PROCS || interval_ns < 1000000 || max_samples < 4 ||
	    max_samples > MONITOR_MAX_SAMPLES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!t[i].role || t[i].pid <= 0)
			return -EINVAL;
	m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	m->nprocs = n;
	m->max = max_samples;
	m->interval0_ns = m->interval_ns = interval_ns;
	m->tick_s = 1.0 / (double)(tick > 0 ? tick : 100);
	m->what = MONITOR_ALL;
	/* in an emulated run (the launcher sets NETEM_ENV when it builds the
	 * link, for itself and its children) every process is in one side's
	 * namespace: its interfaces are that side's (the launcher's thread is
	 * on the PSs') */
	m->net_ns = getenv(NETEM_ENV) != NULL;
	/* ... and on per-host links (the launcher's NETEM_SWITCH_ENV: hosts,
	 * then PSs), in PS 0's host's */
	if (getenv(NETEM_SWITCH_ENV)) {
		int hosts;
		m->net_switch = 1;
		if (sscanf(getenv(NETEM_SWITCH_ENV), "%d %d", &hosts, &m->net_switch_ps) != 2)
			m->net_switch_ps = 0;
	}
	m->procs = calloc(n ? n : 1, sizeof *m->procs);
	m->t = calloc(max_samples, sizeof *m->t);
	m->ps = calloc((n ? n : 1) * max_samples, sizeof *m->ps);
	m->ns = calloc(MONITOR_MAX_IFACES * max_samples, sizeof *m->ns);
	m->tids = calloc(n ? n : 1, sizeof *m->tids);
	if (!m->procs || !m->t || !m->ps || !m->ns || !m->tids)
		goto out_free;
	for (size_t i = 0; i < n; i++) {
		snprintf(m->procs[i].role, sizeof m->procs[i].role, "%s", t[i].role);
		m->procs[i].index = t[i].index;
		m->procs[i].pid = t[i].pid;
	}
	{
		pthread_condattr_t ca;
		if (pthread_condattr_init(&ca) != 0)
			goto out_free;
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		if (pthread_cond_init(&m->cond, &ca) != 0) {
			pthread_condattr_destroy(&ca);
			goto out_free;
		}
		pthread_condattr_destroy(&ca);
		if (pthread_mutex_init(&m->lock, NULL) != 0) {
			pthread_cond_destroy(&m->cond);
			goto out_free;
		}
		m->sync_ok = 1;
	}
	*out = m;
	return 0;
out_free:
	free(m->tids);
	free(m->ns);
	free(m->ps);
	free(m->t);
	free(m->procs);
	free(m);
	return -ENOMEM;
}

static void *sampler(void *arg)
{
	struct monitor *m = arg;
	uint64_t next = m->t[0] + m->interval_ns;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
		                      .tv_nsec = (long)(next % 1000000000ull)};
		uint64_t now;

		pthread_cond_timedwait(&m->cond, &m->lock, &ts);
		if (m->stop)
			break;
		now = now_ns();
		if (now < next)
			continue; /* woken early */
		pthread_mutex_unlock(&m->lock);
		monitor_sample(m);
		pthread_mutex_lock(&m->lock);
		next = m->t[m->n - 1] + m->interval_ns;
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

void monitor_select(struct monitor *m, unsigned what)
{
	m->what = what & MONITOR_ALL;
}

int monitor_start(struct monitor *m)
{
	sigset_t all, old;
	int rc;

	if (m->running)
		return -EBUSY;
	m->n = 0;
	m->nif = 0;
	m->stop = 0;
	m->interval_ns = m->interval0_ns;
	monitor_sample(m);
	/* signals are for the threads that act on them: the sampler takes none */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&m->thread, NULL, sampler, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -rc;
	m->running = 1;
	return 0;
}

void monitor_exited(struct monitor *m, pid_t pid, const struct rusage *ru)
{
	for (size_t p = 0; m && ru && p < m->nprocs; p++) {
		struct proc *pr = &m->procs[p];
		double hz = 1.0 / m->tick_s;

		if (pr->pid != pid)
			continue;
		pthread_mutex_lock(&m->lock);
		if (!pr->exited) {
			size_t k = m->n ? m->n - 1 : 0;
			/* the last sample's figures, the kernel's final account; no
			 * resident memory (role_add averages no copy of the last) */
			pr->final = m->n ? m->ps[p * m->max + k] : (struct psample){0};
			pr->final.rss = 0;
			pr->final.utime = (uint64_t)(((double)ru->ru_utime.tv_sec +
			                              (double)ru->ru_utime.tv_usec / 1e6) * hz + 0.5);
			pr->final.stime = (uint64_t)(((double)ru->ru_stime.tv_sec +
			                              (double)ru->ru_stime.tv_usec / 1e6) * hz + 0.5);
			pr->final.vcsw = (uint64_t)ru->ru_nvcsw;
			pr->final.ivcsw = (uint64_t)ru->ru_nivcsw;
			if ((uint64_t)ru->ru_maxrss * 1024 > pr->final.hwm)
				pr->final.hwm = (uint64_t)ru->ru_maxrss * 1024;
			pr->final.ok = 1;
			pr->final.io = 0;
			pr->exited = 1;
		}
		pthread_mutex_unlock(&m->lock);
	}
}

void monitor_stop(struct monitor *m)
{
	if (!m)
		return;
	if (m->running) {
		pthread_mutex_lock(&m->lock);
		m->stop = 1;
		pthread_cond_signal(&m->cond);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->thread, NULL);
		m->running = 0;
	}
	/* a last interval much shorter than the others would be mostly tick
	 * noise (one 10 ms tick in 5 ms reads as 200%): the final sample then
	 * replaces the one just before it, counters being cumulative */
	if (m->n >= 3 && now_ns() - m->t[m->n - 1] < m->interval_ns / 2)
		m->n--;
	monitor_sample(m);
	if ((m->what & MONITOR_NETWORK) && m->wire)
		tcpbytes_finish(m->wire); /* connections closed since then count to their end */
}

void monitor_free(struct monitor *m)
{
	if (!m)
		return;
	if (m->running)
		monitor_stop(m);
	if (m->sync_ok) {
		pthread_cond_destroy(&m->cond);
		pthread_mutex_destroy(&m->lock);
	}
	tcpbytes_free(m->wire);
	for (size_t p = 0; m->tids && p < m->nprocs; p++)
		free(m->tids[p].t);
	free(m->tids);
	free(m->ns);
	free(m->ps);
	free(m->pt);
	free(m->t);
	free(m->procs);
	free(m);
}

int monitor_ports(struct monitor *m, const uint16_t *ports, size_t n, uint16_t ctl)
{
	if (m->running || m->wire)
		return -EBUSY;
	return tcpbytes_new(&m->wire, ports, n, ctl);
}

/* ---- figures ---- */

size_t monitor_nsamples(const struct monitor *m)
{
	return m->n;
}

double monitor_span_s(const struct monitor *m)
{
	uint64_t last = m->n ? m->t[m->n - 1] : 0;

	for (size_t p = 0; m->pt && p < m->nprocs; p++)
		for (size_t k = 0; k < m->n; k++)
			if (monitor_pt_at(m, p, k) > last)
				last = monitor_pt_at(m, p, k);
	return m->n >= 2 && last > monitor_t_zero(m) ?
	       (double)(last - monitor_t_zero(m)) / 1e9 : 0.0;
}

double monitor_interval_s(const struct monitor *m)
{
	return (double)m->interval_ns / 1e9;
}

/* The first and last readable samples of process p; -1 if it never was. */
static int ok_range(const struct monitor *m, size_t p, size_t *first, size_t *last)
{
	size_t f = 0, l;

	while (f < m->n && !monitor_ps_at(m, p, f)->ok)
		f++;
	if (f == m->n)
		return -1;
	for (l = m->n - 1; !monitor_ps_at(m, p, l)->ok; l--)
		;
	*first = f;
	*last = l;
	return 0;
}

/* CPU % of one core of process p over the interval ending at sample k
 * (k >= 1, both ends read); user and system apart.  -1 when undefined. */
int monitor_interval_cpu(const struct monitor *m, size_t p, size_t k, double *user,
                         double *sys)
{
	const struct psample *a = monitor_ps_at(m, p, k - 1), *b = monitor_ps_at(m, p, k);
	double dt = (double)(monitor_pt_at(m, p, k) - monitor_pt_at(m, p, k - 1)) / 1e9;

	if (!a->ok || !b->ok || !monitor_pt_at(m, p, k - 1) || dt <= 0)
		return -1;
	*user = 100.0 * (double)monitor_delta(a->utime, b->utime) * m->tick_s / dt;
	*sys = 100.0 * (double)monitor_delta(a->stime, b->stime) * m->tick_s / dt;
	return 0;
}

/* Adds a process's system calls from sample a to b to r: the role's
 * figures are unknown (sys_known 0) as soon as one process's are. */
static void role_add_sys(const struct psample *a, const struct psample *b,
                         struct monitor_role_sum *r)
{
	if (r->procs == 1)
		r->sys_known = 1;
	if (!a->sysc || !b->sysc) {
		r->sys_known = 0;
		return;
	}
	r->syscr += monitor_delta(a->syscr, b->syscr);
	r->syscw += monitor_delta(a->syscw, b->syscw);
}

/* Adds process p to r; returns its mean VmRSS over its samples that read
 * one, or -1 when none did (it ran between two samples). */
static double role_add(const struct monitor *m, size_t p, struct monitor_role_sum *r)
{
	size_t f, l, nrss = 0;
	double rss_sum = 0;

	/* a sampling monitor's processes share its span, a merged one's each
	 * has its own */
	r->procs++;
	if (!m->pt)
		r->span_s += monitor_span_s(m);
	if (ok_range(m, p, &f, &l) < 0) {
		r->sys_known = 0;
		return -1;
	}
	if (m->pt)
		r->span_s += (double)(monitor_pt_at(m, p, l) - monitor_pt_at(m, p, f)) / 1e9;
	r->user_s += (double)monitor_delta(monitor_ps_at(m, p, f)->utime, monitor_ps_at(m, p, l)->utime) * m->tick_s;
	r->sys_s += (double)monitor_delta(monitor_ps_at(m, p, f)->stime, monitor_ps_at(m, p, l)->stime) * m->tick_s;
	r->vcsw += monitor_delta(monitor_ps_at(m, p, f)->vcsw, monitor_ps_at(m, p, l)->vcsw);
	r->ivcsw += monitor_delta(monitor_ps_at(m, p, f)->ivcsw, monitor_ps_at(m, p, l)->ivcsw);
	role_add_sys(monitor_ps_at(m, p, f), monitor_ps_at(m, p, l), r);
	for (size_t k = f; k <= l; k++) {
		const struct psample *s = monitor_ps_at(m, p, k);
		double u, y;
		if (!s->ok)
			continue;
		/* a zombie's sample and the kernel's final account have no
		 * resident memory (0, never a living process's): not averaged */
		if (s->rss) {
			rss_sum += (double)s->rss;
			nrss++;
			r->rss_samples++;
		}
		if (s->hwm > r->rss_peak_bytes)
			r->rss_peak_bytes = s->hwm;
		if (s->rss > r->rss_peak_bytes)
			r->rss_peak_bytes = s->rss;
		if (k > f && monitor_interval_cpu(m, p, k, &u, &y) == 0 && u + y > r->cpu_peak_pct)
			r->cpu_peak_pct = u + y;
	}
	return nrss ? rss_sum / (double)nrss : -1;
}

size_t monitor_roles(const struct monitor *m, struct monitor_role_sum *out, size_t max)
{
	size_t nroles = 0;

	for (size_t p = 0; p < m->nprocs; p++) {
		size_t r, q, nrss = 0;
		double rss_sum = 0;
		int seen = 0;

		for (q = 0; q < p; q++)
			if (!strcmp(m->procs[q].role, m->procs[p].role)) {
				seen = 1;
				break;
			}
		if (seen)
			continue;
		r = nroles++;
		if (r >= max)
			continue;
		memset(&out[r], 0, sizeof out[r]);
		snprintf(out[r].role, sizeof out[r].role, "%s", m->procs[p].role);
		for (q = p; q < m->nprocs; q++)
			if (!strcmp(m->procs[q].role, m->procs[p].role)) {
				double rss = role_add(m, q, &out[r]);
				if (rss >= 0) {
					rss_sum += rss;
					nrss++;
				}
			}
		out[r].rss_avg_bytes = nrss ? (uint64_t)(rss_sum / nrss) : 0;
		out[r].cpu_avg_pct = out[r].span_s > 0 ?
		                     100.0 * (out[r].user_s + out[r].sys_s) / out[r].span_s : 0;
	}
	return nroles;
}

void monitor_net_totals(const struct monitor *m, uint64_t *rx_bytes, uint64_t *rx_packets,
                        uint64_t *tx_bytes, uint64_t *tx_packets)
{
	*rx_bytes = *rx_packets = *tx_bytes = *tx_packets = 0;
	if (m->n < 2)
		return;
	for (size_t i = 0; i < m->nif; i++) {
		const struct nsample *a = &m->ns[i * m->max], *b = &m->ns[i * m->max + m->n - 1];
		*rx_bytes += monitor_delta(a->rx_bytes, b->rx_bytes);
		*rx_packets += monitor_delta(a->rx_packets, b->rx_packets);
		*tx_bytes += monitor_delta(a->tx_bytes, b->tx_bytes);
		*tx_packets += monitor_delta(a->tx_packets, b->tx_packets);
	}
}

double monitor_cpu_s_per_call(const struct monitor *m, const char *role, uint64_t calls)
{
	double cpu = 0;

	if (!calls || m->n < 2)
		return NAN;
	for (size_t p = 0; p < m->nprocs; p++) {
		struct monitor_role_sum one = {0};
		if (role && strcmp(role, m->procs[p].role))
			continue;
		role_add(m, p, &one);
		cpu += one.user_s + one.sys_s;
	}
	return cpu / (double)calls;
}

double monitor_wire_per_payload_byte(const struct monitor *m, uint64_t payload_bytes)
{
	uint64_t rxb, rxp, txb, txp;

	if (!payload_bytes || m->n < 2)
		return NAN;
	monitor_net_totals(m, &rxb, &rxp, &txb, &txp);
	return (double)txb / (double)payload_bytes;
}

/* The run's own connections: ok 0 (with why) when not counted. */
void monitor_run_wire(const struct monitor *m, struct tcpbytes_sum *w)
{
	if (m->wire && m->net_switch_ps > 1) {
		/* each PS on a host of its own: this namespace, PS 0's host,
		 * sees only the connections that end at PS 0 */
		memset(w, 0, sizeof *w);
		snprintf(w->why, sizeof w->why, "network.topology = switch puts each of the %d PSs "
		         "on a host of its own, and the launcher sees PS 0's alone",
		         m->net_switch_ps);
	} else if (m->wire) {
		tcpbytes_totals(m->wire, w);
	} else {
		memset(w, 0, sizeof *w);
		snprintf(w->why, sizeof w->why, "the run's ports are not known here");
	}
}

double monitor_run_wire_per_payload_byte(const struct monitor *m, uint64_t moved_bytes)
{
	struct tcpbytes_sum w;

	monitor_run_wire(m, &w);
	if (!w.ok || !moved_bytes)
		return NAN;
	return (double)(w.to_ps + w.from_ps) / (double)moved_bytes;
}
