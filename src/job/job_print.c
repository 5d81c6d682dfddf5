/* job_print.c - a job written back as job-file text (--print-config, the
 * job text of results and of workers' command lines), its secrets, and the
 * job file tfgb reads when none is named. */
#include "job.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TFGB_DATADIR
#define TFGB_DATADIR "/usr/local/share/tfgb"
#endif

static void print_ini(const struct job *j, FILE *f, int public)
{
	const char *section = NULL;

	for (size_t i = 0; job_keys[i].name; i++) {
		const struct opt_def *d = &job_keys[i];
		if (!section || strcmp(section, d->section)) {
			fprintf(f, "%s[%s]\n", section ? "\n" : "", d->section);
			section = d->section;
		}
		fprintf(f, "%s =%s", d->name, public && (d->flags & OPT_SECRET) ? "" : " ");
		if (public && (d->flags & OPT_SECRET))
			; /* the value is left out */
		else if (d->off == offsetof(struct job, iovecs) && j->scheme == SCHEME_CUSTOM &&
		    j->iovec.n)
			fprintf(f, "%zu", j->iovec.n); /* what the payload will have */
		else
			opt_format(d, (const char *)j + d->off, f);
		fputc('\n', f);
	}
}

void job_print_ini(const struct job *j, FILE *f)
{
	print_ini(j, f, 0);
}

static char *ini_string(const struct job *j, int public)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	print_ini(j, f, public);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *job_ini_string(const struct job *j)
{
	return ini_string(j, 0);
}

char *job_ini_public(const struct job *j)
{
	return ini_string(j, 1);
}

int job_secrets_set(const struct job *j, const struct opt_def **out, int max)
{
	int n = 0;

	for (size_t i = 0; job_keys[i].name; i++) {
		const char *v;
		if (!(job_keys[i].flags & OPT_SECRET))
			continue;
		v = *(char *const *)((const char *)j + job_keys[i].off);
		if (v && *v && n++ < max)
			out[n - 1] = &job_keys[i];
	}
	return n;
}

int job_find_default(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char cand[3][4096];
	int n = 0;

	snprintf(cand[n++], sizeof cand[0], "tfgb.ini");
	if (xdg && *xdg)
		snprintf(cand[n++], sizeof cand[0], "%s/tfgb/tfgb.ini", xdg);
	else if (home && *home)
		snprintf(cand[n++], sizeof cand[0], "%s/.config/tfgb/tfgb.ini", home);
	snprintf(cand[n++], sizeof cand[0], "%s/tfgb.ini", TFGB_DATADIR);
	for (int i = 0; i < n; i++)
		if (access(cand[i], R_OK) == 0) {
			snprintf(buf, len, "%s", cand[i]);
			return 0;
		}
	return -1;
}
