/* monitor_out.c - a monitor's samples and figures as JSON, CSV and text
 * lines (monitor.c samples them). */
#include "monitor.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "monitor_int.h"
#include "util.h"
#include "tcpbytes.h"

/* The names of the MONITOR_* bits, as [monitor] resources writes them:
 * name i for bit i (job_monitor.c binds the bits to enum monitor_res). */
static const char *const res_names[] = {"cpu", "memory", "network", "context_switches", NULL};
_Static_assert(MONITOR_ALL == (1 << (sizeof res_names / sizeof res_names[0] - 1)) - 1,
               "one name per MONITOR_* bit");

static double t_s(const struct monitor *m, uint64_t t)
{
	return (double)(t - monitor_t_zero(m)) / 1e9;
}

static void json_proc(const struct monitor *m, struct json *w, size_t p)
{
	json_obj_begin(w, NULL);
	json_str(w, "role", m->procs[p].role);
	json_i64(w, "index", m->procs[p].index);
	json_i64(w, "pid", m->procs[p].pid);
	json_arr_begin(w, "samples");
	for (size_t k = 0; k < m->n && monitor_pt_at(m, p, k); k++) {
		const struct psample *s = monitor_ps_at(m, p, k), *a = k ? monitor_ps_at(m, p, k - 1) : NULL;
		double u, y;
		int have = k && monitor_interval_cpu(m, p, k, &u, &y) == 0;

		json_obj_begin(w, NULL);
		json_f64(w, "t_s", t_s(m, monitor_pt_at(m, p, k)), 3);
		if ((m->what & MONITOR_CPU) && have) {
			json_f64(w, "cpu_pct", u + y, 1);
			json_f64(w, "user_pct", u, 1);
			json_f64(w, "sys_pct", y, 1);
		} else if (m->what & MONITOR_CPU) {
			json_null(w, "cpu_pct");
			json_null(w, "user_pct");
			json_null(w, "sys_pct");
		}
		if ((m->what & MONITOR_MEMORY) && s->ok) {
			json_u64(w, "rss_bytes", s->rss);
			json_u64(w, "hwm_bytes", s->hwm);
		} else if (m->what & MONITOR_MEMORY) {
			json_null(w, "rss_bytes");
			json_null(w, "hwm_bytes");
		}
		if ((m->what & MONITOR_CSW) && have) {
			json_u64(w, "vcsw", monitor_delta(a->vcsw, s->vcsw));
			json_u64(w, "ivcsw", monitor_delta(a->ivcsw, s->ivcsw));
		} else if (m->what & MONITOR_CSW) {
			json_null(w, "vcsw");
			json_null(w, "ivcsw");
		}
		if ((m->what & MONITOR_NETWORK) && have && a->io && s->io) {
			json_u64(w, "rchar", monitor_delta(a->rchar, s->rchar));
			json_u64(w, "wchar", monitor_delta(a->wchar, s->wchar));
		} else if (m->what & MONITOR_NETWORK) {
			json_null(w, "rchar");
			json_null(w, "wchar");
		}
		if ((m->what & MONITOR_NETWORK) && have && a->sysc && s->sysc) {
			json_u64(w, "syscr", monitor_delta(a->syscr, s->syscr));
			json_u64(w, "syscw", monitor_delta(a->syscw, s->syscw));
		} else if (m->what & MONITOR_NETWORK) {
			json_null(w, "syscr");
			json_null(w, "syscw");
		}
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}

/* What /proc/net/dev counted: the host's interfaces, or, in a run over an
 * emulated link, those of one side's namespace. */
static const char *net_scope(const struct monitor *m)
{
	return m->net_ns ? "namespace" : "host";
}

static void json_net(const struct monitor *m, struct json *w)
{
	json_obj_begin(w, "net");
	/* every byte of this host (or link side), not only the run's */
	json_str(w, "scope", net_scope(m));
	json_arr_begin(w, "interfaces");
	for (size_t i = 0; i < m->nif; i++) {
		json_obj_begin(w, NULL);
		json_str(w, "name", m->ifname[i]);
		json_arr_begin(w, "samples");
		for (size_t k = 0; k < m->n; k++) {
			const struct nsample *s = &m->ns[i * m->max + k];
			const struct nsample *a = k ? s - 1 : NULL;
			json_obj_begin(w, NULL);
			json_f64(w, "t_s", t_s(m, m->t[k]), 3);
			if (a) {
				json_u64(w, "rx_bytes", monitor_delta(a->rx_bytes, s->rx_bytes));
				json_u64(w, "rx_packets", monitor_delta(a->rx_packets, s->rx_packets));
				json_u64(w, "tx_bytes", monitor_delta(a->tx_bytes, s->tx_bytes));
				json_u64(w, "tx_packets", monitor_delta(a->tx_packets, s->tx_packets));
			} else {
				json_null(w, "rx_bytes");
				json_null(w, "rx_packets");
				json_null(w, "tx_bytes");
				json_null(w, "tx_packets");
			}
			json_obj_end(w);
		}
		json_arr_end(w);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}

/* "run_wire": the run's own connections (tcpbytes.h). */
static void json_run_wire(const struct monitor *m, struct json *w, uint64_t moved_bytes)
{
	struct tcpbytes_sum s;

	monitor_run_wire(m, &s);
	json_obj_begin(w, "run_wire");
	json_str(w, "scope", "run");
	json_bool(w, "measured", s.ok);
	if (s.ok) {
		json_u64(w, "connections", s.conns);
		json_u64(w, "closed", s.closed);
		json_u64(w, "ps_connections", s.conns - s.ctl_conns);
		json_u64(w, "control_connections", s.ctl_conns);
		json_u64(w, "to_ps_bytes", s.to_ps);
		json_u64(w, "from_ps_bytes", s.from_ps);
		json_u64(w, "bytes", s.to_ps + s.from_ps);
		json_u64(w, "payload_bytes_moved", moved_bytes);
		json_f64(w, "bytes_per_payload_byte",
		         monitor_run_wire_per_payload_byte(m, moved_bytes), 4);
		json_bool(w, "partial", s.partial);
	}
	if (!s.ok || s.partial)
		json_str(w, "why", s.why);
	json_obj_end(w);
}

/* n per call, or null when calls is 0 or n unknown. */
static void json_per_call(struct json *w, const char *key, int known, uint64_t n,
                          uint64_t calls)
{
	if (known && calls)
		json_f64(w, key, (double)n / (double)calls, 3);
	else
		json_null(w, key);
}

/* A role's context switches and read/write-class system calls per call
 * (all threads of all its processes), the counts that explain a CPU time:
 * null when the calls are not this window's (calls 0) or a count is not
 * known. */
static void json_role_counts(const struct monitor *m, struct json *w,
                             const struct monitor_role_sum *s, uint64_t calls)
{
	if (m->what & MONITOR_CSW)
		json_per_call(w, "csw_per_rpc", 1, s->vcsw + s->ivcsw, calls);
	if (!(m->what & MONITOR_NETWORK))
		return;
	if (s->sys_known) {
		json_u64(w, "syscr", s->syscr);
		json_u64(w, "syscw", s->syscw);
	} else {
		json_null(w, "syscr");
		json_null(w, "syscw");
	}
	json_per_call(w, "syscr_per_rpc", s->sys_known, s->syscr, calls);
	json_per_call(w, "syscw_per_rpc", s->sys_known, s->syscw, calls);
}

void monitor_json(const struct monitor *m, struct json *w, const char *key, uint64_t calls,
                  uint64_t payload_bytes, uint64_t moved_bytes)
{
	json_obj_begin(w, key);
	monitor_json_keys(m, w, calls, payload_bytes, moved_bytes);
	json_obj_end(w);
}

void monitor_json_keys(const struct monitor *m, struct json *w, uint64_t calls,
                       uint64_t payload_bytes, uint64_t moved_bytes)
{
	struct monitor_role_sum roles[16];
	size_t nroles = monitor_roles(m, roles, 16);
	uint64_t rxb, rxp, txb, txp;

	if (nroles > 16)
		nroles = 16;
	monitor_net_totals(m, &rxb, &rxp, &txb, &txp);
	json_arr_begin(w, "selected");
	for (int i = 0; res_names[i]; i++)
		if (m->what & 1u << i)
			json_str(w, NULL, res_names[i]);
	json_arr_end(w);
	json_f64(w, "interval_s", monitor_interval_s(m), 3);
	json_f64(w, "span_s", monitor_span_s(m), 3);
	json_u64(w, "samples", m->n);
	json_u64(w, "samples_max", m->max);
	json_f64(w, "clock_tick_s", m->tick_s, 4);
	json_arr_begin(w, "processes");
	for (size_t p = 0; p < m->nprocs; p++)
		json_proc(m, w, p);
	json_arr_end(w);
	if (m->what & MONITOR_NETWORK)
		json_net(m, w);
	json_obj_begin(w, "summary");
	json_arr_begin(w, "roles");
	for (size_t r = 0; r < nroles; r++) {
		json_obj_begin(w, NULL);
		json_str(w, "role", roles[r].role);
		json_u64(w, "processes", roles[r].procs);
		if (m->what & MONITOR_CPU) {
			json_f64(w, "user_s", roles[r].user_s, 3);
			json_f64(w, "sys_s", roles[r].sys_s, 3);
			json_f64(w, "cpu_avg_pct", roles[r].cpu_avg_pct, 1);
			json_f64(w, "cpu_peak_pct", roles[r].cpu_peak_pct, 1);
		}
		if (m->what & MONITOR_MEMORY) {
			if (roles[r].rss_avg_bytes) /* 0: no sample while they ran */
				json_u64(w, "rss_avg_bytes", roles[r].rss_avg_bytes);
			else
				json_null(w, "rss_avg_bytes");
			json_u64(w, "rss_peak_bytes", roles[r].rss_peak_bytes);
		}
		if (m->what & MONITOR_CSW) {
			json_u64(w, "vcsw", roles[r].vcsw);
			json_u64(w, "ivcsw", roles[r].ivcsw);
		}
		if (m->what & MONITOR_CPU)
			json_f64(w, "cpu_s_per_rpc", monitor_cpu_s_per_call(m, roles[r].role, calls),
			         9);
		json_role_counts(m, w, &roles[r], calls);
		json_obj_end(w);
	}
	json_arr_end(w);
	if (m->what & MONITOR_NETWORK) {
		json_str(w, "net_scope", net_scope(m));
		json_u64(w, "net_rx_bytes", rxb);
		json_u64(w, "net_rx_packets", rxp);
		json_u64(w, "net_tx_bytes", txb);
		json_u64(w, "net_tx_packets", txp);
	}
	json_u64(w, "calls", calls);
	json_u64(w, "payload_bytes", payload_bytes);
	if (m->what & MONITOR_CPU)
		json_f64(w, "cpu_s_per_rpc", monitor_cpu_s_per_call(m, NULL, calls), 9);
	if (m->what & MONITOR_NETWORK) {
		json_f64(w, "host_tx_bytes_per_payload_byte",
		         monitor_wire_per_payload_byte(m, payload_bytes), 4);
		json_run_wire(m, w, moved_bytes);
	}
	json_obj_end(w);
}

/* The CSV columns of each resource, after t_s,kind,role,index,pid,iface. */
static const struct {
	unsigned what;
	const char *cols;
	int n;
} csv_groups[] = {
	{MONITOR_CPU, "cpu_pct,user_pct,sys_pct", 3},
	{MONITOR_MEMORY, "rss_bytes,hwm_bytes", 2},
	{MONITOR_CSW, "vcsw,ivcsw", 2},
	{MONITOR_NETWORK, "rchar,wchar,rx_bytes,rx_packets,tx_bytes,tx_packets,syscr,syscw", 8},
};

int monitor_csv(const struct monitor *m, FILE *f)
{
	const unsigned w = m->what;

	fputs("t_s,kind,role,index,pid,iface", f);
	for (size_t g = 0; g < sizeof csv_groups / sizeof csv_groups[0]; g++)
		if (w & csv_groups[g].what)
			fprintf(f, ",%s", csv_groups[g].cols);
	fputc('\n', f);
	for (size_t p = 0; p < m->nprocs; p++)
		for (size_t k = 0; k < m->n && monitor_pt_at(m, p, k); k++) {
			const struct psample *s = monitor_ps_at(m, p, k), *a = k ? monitor_ps_at(m, p, k - 1) : NULL;
			double u, y;
			int have = k && monitor_interval_cpu(m, p, k, &u, &y) == 0;

			fprintf(f, "%.3f,proc,%s,%d,%d,", t_s(m, monitor_pt_at(m, p, k)), m->procs[p].role,
			        m->procs[p].index, (int)m->procs[p].pid);
			if ((w & MONITOR_CPU) && have)
				fprintf(f, ",%.1f,%.1f,%.1f", u + y, u, y);
			else if (w & MONITOR_CPU)
				fputs(",,,", f);
			if ((w & MONITOR_MEMORY) && s->ok)
				fprintf(f, ",%llu,%llu", (unsigned long long)s->rss,
				        (unsigned long long)s->hwm);
			else if (w & MONITOR_MEMORY)
				fputs(",,", f);
			if ((w & MONITOR_CSW) && have)
				fprintf(f, ",%llu,%llu", (unsigned long long)monitor_delta(a->vcsw, s->vcsw),
				        (unsigned long long)monitor_delta(a->ivcsw, s->ivcsw));
			else if (w & MONITOR_CSW)
				fputs(",,", f);
			if ((w & MONITOR_NETWORK) && have && a->io && s->io)
				fprintf(f, ",%llu,%llu,,,,",
				        (unsigned long long)monitor_delta(a->rchar, s->rchar),
				        (unsigned long long)monitor_delta(a->wchar, s->wchar));
			else if (w & MONITOR_NETWORK)
				fputs(",,,,,,", f);
			if ((w & MONITOR_NETWORK) && have && a->sysc && s->sysc)
				fprintf(f, ",%llu,%llu",
				        (unsigned long long)monitor_delta(a->syscr, s->syscr),
				        (unsigned long long)monitor_delta(a->syscw, s->syscw));
			else if (w & MONITOR_NETWORK)
				fputs(",,", f);
			fputc('\n', f);
		}
	for (size_t i = 0; (w & MONITOR_NETWORK) && i < m->nif; i++)
		for (size_t k = 0; k < m->n; k++) {
			const struct nsample *s = &m->ns[i * m->max + k];
			/* kind net_host: the interface's every byte, not only the run's */
			fprintf(f, "%.3f,net_host,,,,%s", t_s(m, m->t[k]), m->ifname[i]);
			for (size_t g = 0; g < sizeof csv_groups / sizeof csv_groups[0]; g++) {
				unsigned what = csv_groups[g].what;
				if ((w & what) && what != MONITOR_NETWORK)
					fprintf(f, "%.*s", csv_groups[g].n, ",,,,,,,,");
			}
			if (k)
				fprintf(f, ",,,%llu,%llu,%llu,%llu,,\n",
				        (unsigned long long)monitor_delta(s[-1].rx_bytes, s->rx_bytes),
				        (unsigned long long)monitor_delta(s[-1].rx_packets, s->rx_packets),
				        (unsigned long long)monitor_delta(s[-1].tx_bytes, s->tx_bytes),
				        (unsigned long long)monitor_delta(s[-1].tx_packets, s->tx_packets));
			else
				fputs(",,,,,,,,\n", f);
		}
	return ferror(f) ? -1 : 0;
}

int monitor_csv_file(const struct monitor *m, const char *path)
{
	FILE *f = util_fopen_w(path);
	int rc;

	if (!f)
		return -errno;
	rc = monitor_csv(m, f);
	if (fclose(f) != 0 || rc < 0)
		return -(errno ? errno : EIO);
	return 0;
}

/* "# network, this run": the run's own connections (tcpbytes.h), what they are. */
static void text_run_wire(const struct monitor *m, FILE *f, uint64_t moved_bytes)
{
	struct tcpbytes_sum ws;
	double run = monitor_run_wire_per_payload_byte(m, moved_bytes);

	monitor_run_wire(m, &ws);
	if (ws.ok) {
		if (ws.has_ctl) /* what each connection is: tfgb-throughput(1) */
			fprintf(f, "# network, this run (%u connections, %u closed: %u to the "
			        "PSs, the workers' data connections and any Info call; %u to the "
			        "control service, the workers' and the launcher's)", ws.conns,
			        ws.closed, ws.conns - ws.ctl_conns, ws.ctl_conns);
		else
			fprintf(f, "# network, this run (%u connection%s of the worker to the PS, "
			        "%u closed)", ws.conns, ws.conns == 1 ? "" : "s", ws.closed);
		fprintf(f, ": to the PSs %.3f MB, back %.3f MB",
		        (double)ws.to_ps / 1e6,
		        (double)ws.from_ps / 1e6);
		if (isfinite(run))
			fprintf(f, "; %.3f wire bytes per payload byte moved", run);
		if (ws.partial)
			fprintf(f, "; partial: %s", ws.why);
		fputc('\n', f);
	} else {
		fprintf(f, "# network, this run: not measured (%s)\n", ws.why);
	}
}

/* "#   per RPC: ...": a role's counts per call, when they are this
 * window's calls (calls > 0); the system calls when known. */
static void text_role_counts(const struct monitor *m, FILE *f,
                             const struct monitor_role_sum *s, uint64_t calls)
{
	const char *sep = "";

	if (!(m->what & (MONITOR_CSW | MONITOR_NETWORK)))
		return;
	fprintf(f, "#   %s, all threads:", s->role);
	if (m->what & MONITOR_CSW) {
		if (calls)
			fprintf(f, " %.3f context switches per RPC",
			        (double)(s->vcsw + s->ivcsw) / (double)calls);
		else
			fputs(" context switches per RPC unknown (not this run's calls)", f);
		sep = ";";
	}
	if (!(m->what & MONITOR_NETWORK)) {
		fputc('\n', f);
		return;
	}
	if (!s->sys_known)
		fprintf(f, "%s read/write-class system calls unknown (/proc/PID/io not read)", sep);
	else if (calls)
		fprintf(f, "%s read-class system calls %llu (%.3f per RPC), write-class %llu "
		        "(%.3f per RPC)", sep, (unsigned long long)s->syscr,
		        (double)s->syscr / (double)calls, (unsigned long long)s->syscw,
		        (double)s->syscw / (double)calls);
	else
		fprintf(f, "%s read-class system calls %llu, write-class %llu", sep,
		        (unsigned long long)s->syscr, (unsigned long long)s->syscw);
	fputs(" (read/write-class: read, readv, write, writev, pread, pwrite; not sendmsg, "
	      "recvmsg, poll, epoll)\n", f);
}

void monitor_text(const struct monitor *m, FILE *f, uint64_t calls, uint64_t payload_bytes,
                  uint64_t moved_bytes)
{
	struct monitor_role_sum roles[16];
	size_t nroles = monitor_roles(m, roles, 16);
	uint64_t rxb, rxp, txb, txp;
	double cpu = monitor_cpu_s_per_call(m, NULL, calls);
	double wire = monitor_wire_per_payload_byte(m, payload_bytes);

	if (nroles > 16)
		nroles = 16;
	fprintf(f, "# resources: %zu samples over %.3fs, every %.3fs\n", m->n, monitor_span_s(m),
	        monitor_interval_s(m));
	for (size_t r = 0; r < nroles; r++) {
		const struct monitor_role_sum *s = &roles[r];
		double per = s->span_s;
		const char *sep = "";
		if (!(m->what & (MONITOR_CPU | MONITOR_MEMORY | MONITOR_CSW)))
			break;
		fprintf(f, "# resources: %s x%u: ", s->role, s->procs);
		if (m->what & MONITOR_CPU) {
			fprintf(f, "CPU %.1f%% of a core (user %.1f%%, system %.1f%%), peak %.1f%%",
			        s->cpu_avg_pct, per > 0 ? 100.0 * s->user_s / per : 0.0,
			        per > 0 ? 100.0 * s->sys_s / per : 0.0, s->cpu_peak_pct);
			sep = "; ";
		}
		if (m->what & MONITOR_MEMORY && s->rss_avg_bytes) {
			fprintf(f, "%sRSS %.1f MiB", sep, (double)s->rss_avg_bytes / 1048576.0);
			if (s->rss_samples < 2 * s->procs) /* say on how few it rests */
				fprintf(f, " (%u samples: they ran mostly between samples)",
				        s->rss_samples);
			fprintf(f, ", peak %.1f MiB", (double)s->rss_peak_bytes / 1048576.0);
		} else if (m->what & MONITOR_MEMORY) /* the kernel's final account has the peak */
			fprintf(f, "%sRSS not sampled while it ran, peak %.1f MiB", sep,
			        (double)s->rss_peak_bytes / 1048576.0);
		sep = m->what & MONITOR_MEMORY ? "; " : sep;
		if (m->what & MONITOR_CSW)
			fprintf(f, "%scontext switches (all threads) %llu voluntary, %llu involuntary", sep,
			        (unsigned long long)s->vcsw, (unsigned long long)s->ivcsw);
		fputc('\n', f);
		text_role_counts(m, f, s, calls);
	}
	if (m->what & MONITOR_NETWORK) {
		text_run_wire(m, f, moved_bytes);
		monitor_net_totals(m, &rxb, &rxp, &txb, &txp);
		fprintf(f, "# network, %s, all traffic (%zu interfaces): in %.3f MB, "
		        "%llu packets; out %.3f MB, "
		        "%llu packets",
		        !m->net_ns ? "host-wide" : m->net_switch ? "PS 0's host of the switch (its "
		        "namespace)" : "one side of the emulated link (its namespace)", m->nif, (double)rxb / 1e6, (unsigned long long)rxp,
		        (double)txb / 1e6, (unsigned long long)txp);
		/* the emulated link's side carries this run alone; the host's
		 * counters carry whatever else it did, never put per byte of this
		 * run (the run's own connections are text_run_wire's) */
		if (m->net_ns && isfinite(wire))
			fprintf(f, "; %.3f bytes out per payload byte", wire);
		fputc('\n', f);
	}
	/* the CPU time of this run's processes (its own line: not the host's) */
	if ((m->what & MONITOR_CPU) && isfinite(cpu))
		fprintf(f, "# resources: CPU %.1f us per RPC (this run's processes)\n", cpu * 1e6);
}
