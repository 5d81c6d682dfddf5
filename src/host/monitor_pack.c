/* monitor_pack.c - a monitor's series in a bounded binary form, and the
 * series of several processes of one host merged (monitor.h).
 *
 * Layout, all integers big-endian:
 *   u32 magic "TFGM", u32 version 2, u32 what (MONITOR_* bits),
 *   u64 interval_ns, u64 clock tick in ns,
 *   u32 nprocs (<= MONITOR_PACK_PROCS) x {u16 len + role, i32 index, i32 pid},
 *   u32 nif (<= MONITOR_MAX_IFACES) x {u16 len + name},
 *   u32 n (2 .. MONITOR_PACK_SAMPLES) x {u64 t_ns,
 *     nprocs x {u64 utime, stime, rss, hwm, vcsw, ivcsw, rchar, wchar,
 *               u64 syscr, syscw, u8 flags: 1 read, 2 its io read,
 *               4 syscr and syscw known},
 *     nif x {u64 rx_bytes, rx_packets, tx_bytes, tx_packets}},
 *   times increasing.
 * Version 1 (tfgb before syscr and syscw) is still read: the same without
 * the two system call counts and flag 4, which are then unknown.
 * The samples kept are spread evenly over the series, its first and last
 * always among them: counters being cumulative, the totals over the span
 * are those of every sample.
 */
#include "monitor.h"
#include "monitor_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bebuf.h"

#define MONITOR_MAGIC 0x5446474du /* "TFGM" */
#define MONITOR_VERSION 2u

/* A monitor that samples nothing: nprocs processes, max samples each,
 * with per-process times (pt) when merged. */
static struct monitor *mon_alloc(size_t nprocs, size_t max, int merged)
{
	struct monitor *m = calloc(1, sizeof *m);

	if (!m)
		return NULL;
	m->nprocs = nprocs;
	m->max = max;
	m->procs = calloc(nprocs ? nprocs : 1, sizeof *m->procs);
	m->t = calloc(max, sizeof *m->t);
	m->ps = calloc((nprocs ? nprocs : 1) * max, sizeof *m->ps);
	m->ns = calloc(MONITOR_MAX_IFACES * max, sizeof *m->ns);
	if (merged)
		m->pt = calloc((nprocs ? nprocs : 1) * max, sizeof *m->pt);
	if (!m->procs || !m->t || !m->ps || !m->ns || (merged && !m->pt)) {
		monitor_free(m);
		return NULL;
	}
	return m;
}

long monitor_pack(const struct monitor *m, unsigned char *buf, size_t cap)
{
	struct wbuf w = {buf, 0, cap, 0};
	size_t n = m->n < MONITOR_PACK_SAMPLES ? m->n : MONITOR_PACK_SAMPLES;

	if (m->pt || m->nprocs > MONITOR_PACK_PROCS || m->n < 2)
		return -EINVAL;
	be_put(&w, MONITOR_MAGIC, 4);
	be_put(&w, MONITOR_VERSION, 4);
	be_put(&w, m->what, 4);
	be_put(&w, m->interval_ns, 8);
	be_put(&w, (uint64_t)(m->tick_s * 1e9 + 0.5), 8);
	be_put(&w, m->nprocs, 4);
	for (size_t p = 0; p < m->nprocs; p++) {
		be_put_str(&w, m->procs[p].role, MONITOR_ROLE_MAX);
		be_put(&w, (uint32_t)m->procs[p].index, 4);
		be_put(&w, (uint32_t)m->procs[p].pid, 4);
	}
	be_put(&w, m->nif, 4);
	for (size_t i = 0; i < m->nif; i++)
		be_put_str(&w, m->ifname[i], MONITOR_IFACE_MAX);
	be_put(&w, n, 4);
	for (size_t j = 0; j < n; j++) {
		size_t k = j * (m->n - 1) / (n - 1); /* 0 and n - 1 among them */
		be_put(&w, m->t[k], 8);
		for (size_t p = 0; p < m->nprocs; p++) {
			const struct psample *s = &m->ps[p * m->max + k];
			be_put(&w, s->utime, 8);
			be_put(&w, s->stime, 8);
			be_put(&w, s->rss, 8);
			be_put(&w, s->hwm, 8);
			be_put(&w, s->vcsw, 8);
			be_put(&w, s->ivcsw, 8);
			be_put(&w, s->rchar, 8);
			be_put(&w, s->wchar, 8);
			be_put(&w, s->syscr, 8);
			be_put(&w, s->syscw, 8);
			be_put(&w, (uint64_t)(s->ok ? 1 : 0) | (s->io ? 2 : 0) | (s->sysc ? 4 : 0), 1);
		}
		for (size_t i = 0; i < m->nif; i++) {
			const struct nsample *s = &m->ns[i * m->max + k];
			be_put(&w, s->rx_bytes, 8);
			be_put(&w, s->rx_packets, 8);
			be_put(&w, s->tx_bytes, 8);
			be_put(&w, s->tx_packets, 8);
		}
	}
	return w.over ? -ENOSPC : (long)w.len;
}

/* The samples of a packed series of version ver into m (allocated for
 * them): -1 when malformed. */
static int unpack_samples(struct rbuf *b, struct monitor *m, unsigned ver)
{
	for (size_t k = 0; k < m->n; k++) {
		m->t[k] = be_get(b, 8);
		if (k && m->t[k] <= m->t[k - 1])
			return -1;
		for (size_t p = 0; p < m->nprocs; p++) {
			struct psample *s = &m->ps[p * m->max + k];
			unsigned flags;
			s->utime = be_get(b, 8);
			s->stime = be_get(b, 8);
			s->rss = be_get(b, 8);
			s->hwm = be_get(b, 8);
			s->vcsw = be_get(b, 8);
			s->ivcsw = be_get(b, 8);
			s->rchar = be_get(b, 8);
			s->wchar = be_get(b, 8);
			if (ver >= 2) {
				s->syscr = be_get(b, 8);
				s->syscw = be_get(b, 8);
			}
			flags = (unsigned)be_get(b, 1);
			if (flags > (ver >= 2 ? 7u : 3u))
				return -1;
			s->ok = flags & 1;
			s->io = (flags & 2) != 0;
			s->sysc = (flags & 4) != 0;
		}
		for (size_t i = 0; i < m->nif; i++) {
			struct nsample *s = &m->ns[i * m->max + k];
			s->rx_bytes = be_get(b, 8);
			s->rx_packets = be_get(b, 8);
			s->tx_bytes = be_get(b, 8);
			s->tx_packets = be_get(b, 8);
		}
	}
	return b->bad ? -1 : 0;
}

int monitor_unpack(const unsigned char *buf, size_t len, struct monitor **out)
{
	struct rbuf b = {buf, len, 0, 0};
	struct monitor head = {0}, *m = NULL;
	struct proc procs[MONITOR_PACK_PROCS];
	uint64_t tick_ns;
	size_t nprocs, n;
	unsigned ver;

	*out = NULL;
	if (be_get(&b, 4) != MONITOR_MAGIC)
		return -EPROTO;
	ver = (unsigned)be_get(&b, 4);
	if (ver < 1 || ver > MONITOR_VERSION)
		return -EPROTO;
	head.what = (unsigned)be_get(&b, 4);
	head.interval_ns = be_get(&b, 8);
	tick_ns = be_get(&b, 8);
	nprocs = (size_t)be_get(&b, 4);
	if (b.bad || (head.what & ~(unsigned)MONITOR_ALL) || !tick_ns || tick_ns > 1000000000u ||
	    nprocs > MONITOR_PACK_PROCS)
		return -EPROTO;
	memset(procs, 0, sizeof procs);
	for (size_t p = 0; p < nprocs; p++) {
		be_get_str(&b, procs[p].role, MONITOR_ROLE_MAX);
		procs[p].index = (int)(int32_t)be_get(&b, 4);
		procs[p].pid = (pid_t)(int32_t)be_get(&b, 4);
	}
	head.nif = (size_t)be_get(&b, 4);
	if (b.bad || head.nif > MONITOR_MAX_IFACES)
		return -EPROTO;
	for (size_t i = 0; i < head.nif; i++)
		be_get_str(&b, head.ifname[i], MONITOR_IFACE_MAX);
	n = (size_t)be_get(&b, 4);
	if (b.bad || n < 2 || n > MONITOR_PACK_SAMPLES)
		return -EPROTO;
	if (!(m = mon_alloc(nprocs, n, 0)))
		return -ENOMEM;
	memcpy(m->procs, procs, nprocs * sizeof *procs);
	memcpy(m->ifname, head.ifname, sizeof m->ifname);
	m->nif = head.nif;
	m->what = head.what;
	m->interval0_ns = m->interval_ns = head.interval_ns;
	m->tick_s = (double)tick_ns / 1e9;
	m->n = n;
	if (unpack_samples(&b, m, ver) < 0 || b.at != len) {
		monitor_free(m);
		return -EPROTO;
	}
	*out = m;
	return 0;
}

/* Copies the processes of src into m from process slot *np on, with their
 * own sample times. */
static void merge_procs(struct monitor *m, const struct monitor *src, size_t *np)
{
	for (size_t p = 0; p < src->nprocs; p++, (*np)++) {
		m->procs[*np] = src->procs[p];
		for (size_t k = 0; k < src->n; k++) {
			m->ps[*np * m->max + k] = src->ps[p * src->max + k];
			m->pt[*np * m->max + k] = src->pt ? src->pt[p * src->max + k] : src->t[k];
		}
		if (src->t[0] < m->t0)
			m->t0 = src->t[0];
	}
}

int monitor_merge(const struct monitor *const *parts, size_t n, struct monitor **out)
{
	size_t nprocs = 0, max = 2, np = 0;
	const struct monitor *net;
	struct monitor *m;

	*out = NULL;
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		nprocs += parts[i]->nprocs;
		if (parts[i]->n > max)
			max = parts[i]->n;
	}
	if (nprocs > MONITOR_MAX_PROCS)
		return -EINVAL;
	if (!(m = mon_alloc(nprocs, max, 1)))
		return -ENOMEM;
	/* the host's network: the view of the part with the most samples, so
	 * that its times cover the merged series' slots */
	net = parts[0];
	for (size_t i = 1; i < n; i++)
		if (parts[i]->n > net->n)
			net = parts[i];
	m->what = net->what;
	m->net_ns = net->net_ns;
	m->interval0_ns = net->interval0_ns;
	m->interval_ns = net->interval_ns;
	m->tick_s = net->tick_s;
	m->n = net->n;
	m->nif = net->nif;
	memcpy(m->ifname, net->ifname, sizeof m->ifname);
	memcpy(m->t, net->t, net->n * sizeof *m->t);
	for (size_t i = 0; i < net->nif; i++)
		memcpy(&m->ns[i * m->max], &net->ns[i * net->max], net->n * sizeof *m->ns);
	m->t0 = net->n ? net->t[0] : 0;
	for (size_t i = 0; i < n; i++) {
		m->what &= parts[i]->what;
		merge_procs(m, parts[i], &np);
	}
	*out = m;
	return 0;
}

int monitor_window(struct monitor *m, uint64_t from_ns, uint64_t to_ns, size_t max_samples,
                   struct monitor **out)
{
	size_t f = 0, l, count, n;
	struct monitor *w;

	*out = NULL;
	if (max_samples < 2)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	/* the last sample at or before from_ns is the base; l the last by to_ns */
	while (f + 1 < m->n && m->t[f + 1] <= from_ns)
		f++;
	for (l = f; l + 1 < m->n && m->t[l + 1] <= to_ns; l++)
		;
	count = m->n && m->t[f] <= to_ns ? l - f + 1 : 0;
	if (count < 2) {
		pthread_mutex_unlock(&m->lock);
		return -ENOENT;
	}
	n = count < max_samples ? count : max_samples;
	if (!(w = mon_alloc(m->nprocs, n, 0))) {
		pthread_mutex_unlock(&m->lock);
		return -ENOMEM;
	}
	memcpy(w->procs, m->procs, m->nprocs * sizeof *m->procs);
	memcpy(w->ifname, m->ifname, sizeof w->ifname);
	w->nif = m->nif;
	w->what = m->what;
	w->tick_s = m->tick_s;
	w->interval0_ns = m->interval0_ns;
	w->interval_ns = m->interval_ns * ((count - 1) / (n - 1));
	w->n = n;
	for (size_t j = 0; j < n; j++) {
		size_t k = f + j * (count - 1) / (n - 1);
		w->t[j] = m->t[k];
		for (size_t p = 0; p < m->nprocs; p++)
			w->ps[p * n + j] = m->ps[p * m->max + k];
		for (size_t i = 0; i < m->nif; i++)
			w->ns[i * n + j] = m->ns[i * m->max + k];
	}
	pthread_mutex_unlock(&m->lock);
	*out = w;
	return 0;
}
