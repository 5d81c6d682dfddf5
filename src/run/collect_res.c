/* collect_res.c - the resources of a run that no launcher sampled
 * (collect_res.h). */
#include "collect_res.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "ctrl.h"
#include "session.h"
#include "util.h"

int res_self_monitor(struct tfgb *t, int index, struct monitor **mon)
{
	struct monitor_target me = {"worker", index, getpid()};

	*mon = NULL;
	if (getenv("TFGB_LAUNCHER"))
		return TFGB_EXIT_OK;
	return session_monitor(t, &me, 1, NULL, 0, 0, mon);
}

void res_self_pack(struct wresult *w, const struct monitor *mon)
{
	long n = mon ? monitor_pack(mon, w->mon, sizeof w->mon) : 0;

	w->mon_len = n > 0 ? (uint32_t)n : 0; /* < 2 samples: none */
}

int res_agg_init(struct res_agg *r, uint32_t workers, uint32_t nps, const char **host)
{
	memset(r, 0, sizeof *r);
	r->workers = workers;
	r->nps = nps;
	r->host = host;
	r->mon = calloc(workers + nps, sizeof *r->mon);
	r->ps_host = calloc(nps ? nps : 1, sizeof *r->ps_host);
	r->hosts = calloc(workers + nps, sizeof *r->hosts);
	return r->mon && r->ps_host && r->hosts ? 0 : -ENOMEM;
}

void res_agg_free(struct res_agg *r)
{
	for (uint32_t i = 0; r->mon && i < r->workers + r->nps; i++)
		monitor_free(r->mon[i]);
	for (size_t h = 0; h < r->nhosts; h++)
		monitor_free((struct monitor *)r->hosts[h].mon);
	free(r->mon);
	free(r->ps_host);
	free(r->hosts);
}

void res_agg_add(struct res_agg *r, uint32_t worker, const struct wresult *w)
{
	if (worker < r->workers && w->mon_len &&
	    monitor_unpack(w->mon, w->mon_len, &r->mon[worker]) < 0)
		r->mon[worker] = NULL; /* checked by wresult_decode: out of memory */
}

static int ps_res(void *arg, uint32_t ps, const void *blob, size_t len)
{
	struct res_agg *r = arg;

	if (ps < r->nps && !r->mon[r->workers + ps] &&
	    session_res_unpack(blob, len, r->ps_host[ps], &r->mon[r->workers + ps]) < 0)
		r->ps_host[ps][0] = 0; /* malformed: left out */
	return 0;
}

int res_agg_servers(struct tfgb *t, struct res_agg *r, int ps_lost)
{
	const struct job *j = &t->job;
	struct ctrl_client *cc = NULL;
	struct err err;
	uint32_t got = 0;
	int rc = 0;

	if (!ps_lost && session_launch_phase(j, &cc, (int)r->nps, (int)r->nps, 0,
	                                     now_ns() + j->timeout_ns, &tfgb_stop) == 0) {
		ctrl_collect(cc, cluster_run_id(NULL) ^ LAUNCH_RES_ID, r->nps, 0,
		             now_ns() + j->timeout_ns, ps_res, r, &got, &err);
	} else {
		session_launch_abort(j, &cc);
		rc = -1;
	}
	ctrl_client_close(cc);
	return rc;
}

/* Process i's host (workers, then the PSs of one launch), NULL when it
 * has no series. */
static const char *host_of(const struct res_agg *r, uint32_t i)
{
	return !r->mon[i] ? NULL : i < r->workers ? r->host[i] : r->ps_host[i - r->workers];
}

void res_agg_hosts(struct res_agg *r)
{
	uint32_t all = r->workers + r->nps;
	const struct monitor **parts = calloc(all ? all : 1, sizeof *parts);

	for (uint32_t i = 0; parts && i < all; i++) {
		const char *host = host_of(r, i);
		size_t n = 0, h = r->nhosts;
		struct monitor *m;
		int done = !host;
		for (uint32_t k = 0; k < i && !done; k++)
			done = host_of(r, k) && !strcmp(host_of(r, k), host);
		if (done)
			continue; /* merged with the host's first process */
		for (uint32_t k = i; k < all; k++)
			if (host_of(r, k) && !strcmp(host_of(r, k), host))
				parts[n++] = r->mon[k];
		if (monitor_merge(parts, n, &m) == 0) {
			r->hosts[h] = (struct report_host_res){.host = host, .mon = m};
			r->nhosts++;
		}
	}
	free(parts);
}

/* Each host's series to output.series, ".HOST" added when several: 0 or
 * -1 (said). */
static int hosts_csv(struct tfgb *t, const struct res_agg *r)
{
	const char *series = t->job.series;

	for (size_t h = 0; h < r->nhosts; h++) {
		char path[PATH_MAX];
		int rc;
		snprintf(path, sizeof path, "%s", series); /* what the error names */
		if (strchr(r->hosts[h].host, '/'))
			rc = -EINVAL; /* a host name is no path */
		else if (snprintf(path, sizeof path, "%s%s%s", series, r->nhosts > 1 ? "." : "",
		             r->nhosts > 1 ? r->hosts[h].host : "") >= (int)sizeof path)
			rc = -ENAMETOOLONG;
		else
			rc = monitor_csv_file(r->hosts[h].mon, path);
		if (rc < 0) {
			tfgb_error("%s: cannot write the resource series of host %s to '%s': %s",
			           t->cmd, r->hosts[h].host, path, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

int res_series(struct tfgb *t, const struct monitor *mon, const struct res_agg *r)
{
	const struct job *j = &t->job;
	int rc;

	if (!*j->series)
		return 0;
	if (!mon)
		return hosts_csv(t, r);
	if ((rc = monitor_csv_file(mon, j->series)) < 0) {
		tfgb_error("%s: cannot write the resource series to '%s': %s", t->cmd, j->series,
		           strerror(-rc));
		return -1;
	}
	return 0;
}
