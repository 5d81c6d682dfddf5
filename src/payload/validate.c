/* validate.c - the checks of a job that span modules (validate.h). */
#include "validate.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "limit.h"
#include "payload.h"
#include "tls.h"

/* [payload] dtype: in the serialized modes every buffer holds whole
 * elements.  Checked on the layout itself, so that a category no buffer
 * uses is no error. */
static int check_dtype(const struct job *j, struct err *err)
{
	unsigned el = job_dtype_size(j->dtype);
	char where[JOB_NAME_MAX + 16];
	struct payload p;
	int rc = 0;

	if (el == 1 || j->mode == MODE_NONSERIALIZED) /* raw bytes declare no type */
		return 0;
	if (payload_layout(j, &p) < 0) {
		err_set(err, "out of memory checking payload.dtype");
		return -1;
	}
	job_key_where(j, "payload", "dtype", where, sizeof where);
	for (size_t i = 0; i < p.n && !rc; i++)
		if (p.buf[i].len % el)
			rc = job_key_err(j, err, "payload",
			                 j->scheme == SCHEME_CUSTOM ? "iovec" : job_cat_name(p.buf[i].cat),
			                 "buffer %zu is %llu bytes, not a whole number of %u-byte "
			                 "elements of payload.dtype = %s (%s)", i,
			                 (unsigned long long)p.buf[i].len, el, job_dtype_name(j->dtype),
			                 where);
	payload_free(&p);
	return rc;
}

/* The addresses a [cluster] host name stands for, as far as its text
 * tells without a lookup: a numeric address in one canonical form, the
 * names of this machine's loopback as both loopback addresses (a server on
 * "localhost" binds both), any other name as itself, lowercase. */
struct host_key {
	char a[2][INET6_ADDRSTRLEN > OPT_HOST_MAX ? INET6_ADDRSTRLEN : OPT_HOST_MAX];
};

static void host_key(const char *host, struct host_key *k)
{
	static const char *const loopback[] = {"localhost", "localhost.localdomain",
	                                       "ip6-localhost", "ip6-loopback", NULL};
	unsigned char bin[16];
	size_t n = strlen(host);

	k->a[1][0] = 0;
	for (int i = 0; loopback[i]; i++)
		if (!strcasecmp(host, loopback[i]) ||
		    (n && host[n - 1] == '.' && n - 1 == strlen(loopback[i]) &&
		     !strncasecmp(host, loopback[i], n - 1))) {
			snprintf(k->a[0], sizeof k->a[0], "127.0.0.1");
			snprintf(k->a[1], sizeof k->a[1], "::1");
			return;
		}
	if (inet_pton(AF_INET, host, bin) == 1)
		inet_ntop(AF_INET, bin, k->a[0], sizeof k->a[0]);
	else if (inet_pton(AF_INET6, host, bin) == 1)
		inet_ntop(AF_INET6, bin, k->a[0], sizeof k->a[0]);
	else {
		size_t i = 0;
		for (; host[i] && i + 1 < sizeof k->a[0]; i++)
			k->a[0][i] = (char)tolower((unsigned char)host[i]);
		k->a[0][i] = 0;
		if (i && k->a[0][i - 1] == '.') /* the root's dot: the same name */
			k->a[0][i - 1] = 0;
	}
}

static int same_key(const struct host_key *x, const struct host_key *y)
{
	for (int i = 0; i < 2 && x->a[i][0]; i++)
		for (int k = 0; k < 2 && y->a[k][0]; k++)
			if (!strcmp(x->a[i], y->a[k]))
				return 1;
	return 0;
}

/* Two processes of the job that would listen on one address: two PSs, or
 * the control service and a PS.  Known from the job's text alone, so it is
 * a job error at once rather than a bind that fails (or a server of the
 * same run taken for another run's) after job.timeout. */
static int check_addresses(const struct job *j, struct err *err)
{
	struct host_key *keys, ck;
	struct opt_hostport *ps, c;
	char at[OPT_HOST_MAX + 8], bt[OPT_HOST_MAX + 8];
	int np = (int)j->ps_count, rc = 0, derived = !j->control.n;

	keys = calloc((size_t)np, sizeof *keys);
	ps = calloc((size_t)np, sizeof *ps);
	if (!keys || !ps) {
		free(keys);
		free(ps);
		err_set(err, "out of memory checking cluster.ps");
		return -1;
	}
	for (int i = 0; i < np; i++) {
		job_ps_addr(j, i, &ps[i]);
		host_key(ps[i].host, &keys[i]);
	}
	/* one address with consecutive ports has no two alike */
	for (int i = 1; j->ps.n > 1 && i < np && !rc; i++)
		for (int k = 0; k < i && !rc; k++) {
			if (ps[i].port != ps[k].port || !same_key(&keys[i], &keys[k]))
				continue;
			opt_format_hostport(&ps[i], at, sizeof at);
			opt_format_hostport(&ps[k], bt, sizeof bt);
			rc = job_key_err(j, err, "cluster", "ps", "PS %d (%s) and PS %d (%s) are one "
			                 "address; each PS needs a port of its own", k, bt, i, at);
		}
	/* the control service: cluster.control, or PS 0's host one port below
	 * PS 0 (only a job of several PSs runs it next to them) */
	if (!rc && (!derived || np > 1) && job_control_addr(j, &c) == 0) {
		host_key(c.host, &ck);
		for (int i = 0; i < np && !rc; i++) {
			if (ps[i].port != c.port || !same_key(&keys[i], &ck))
				continue;
			opt_format_hostport(&ps[i], at, sizeof at);
			if (!derived)
				rc = job_key_err(j, err, "cluster", "control", "is the address of PS %d (%s)",
				                 i, at);
			else
				rc = job_key_err(j, err, "cluster", "ps", "PS %d (%s) is on the control "
				                 "service's port, PS 0's port - 1 (cluster.control is "
				                 "empty); set cluster.control or move PS %d", i, at, i);
		}
	}
	free(keys);
	free(ps);
	return rc;
}

int job_validate(struct job *j, struct err *err)
{
	if (job_check_keys(j, err) < 0 || check_addresses(j, err) < 0 || check_dtype(j, err) < 0 ||
	    tls_check(j, err) < 0)
		return -1;
	return limit_check_job(j, err);
}
