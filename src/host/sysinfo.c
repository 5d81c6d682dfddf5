/* sysinfo.c - the facts of the "environment" object of a result. */
#include "sysinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "job.h"
#include "sha256.h"
#include "version.h"

#ifndef TFGB_BUILD
#define TFGB_BUILD ""
#endif
#ifndef TFGB_HAVE_VERBS
#define TFGB_HAVE_VERBS 0
#endif
#ifndef TFGB_HAVE_NUMA
#define TFGB_HAVE_NUMA 0
#endif

/* What sysinfo_add_source registered, called in order by sysinfo_collect */
#define SOURCES_MAX 8
static void (*sources[SOURCES_MAX])(struct sysinfo_env *e);
static int nsources;

int sysinfo_add_source(void (*fill)(struct sysinfo_env *e))
{
	for (int i = 0; i < nsources; i++)
		if (sources[i] == fill)
			return 0;
	if (nsources == SOURCES_MAX)
		return -1;
	sources[nsources++] = fill;
	return 0;
}

void sysinfo_tls_library(char *buf, size_t len)
{
	/* gRPC loads its TLS library; tfgb does not link one itself, so ask
	 * the process for OpenSSL's (or BoringSSL's) own name, if present */
	const char *(*name)(int) = NULL;
	void *sym = dlsym(RTLD_DEFAULT, "OpenSSL_version");

	memcpy(&name, &sym, sizeof name < sizeof sym ? sizeof name : sizeof sym);
	snprintf(buf, len, "%s", name ? name(0) : ""); /* 0: OPENSSL_VERSION */
}

const char *const *sysinfo_features(void)
{
	/* the same list every call: rewriting it is harmless */
	static const char *f[16];
	size_t n = 0;

	for (int i = 0; job_transport_names()[i] && n < 13; i++)
		if (job_transport_built(i))
			f[n++] = job_transport_names()[i];
	f[n++] = "tls";
	if (TFGB_HAVE_NUMA)
		f[n++] = "numa";
	f[n] = NULL;
	return f;
}

const char *sysinfo_build(void)
{
	return TFGB_BUILD;
}

/* src cut to len - 1 bytes (uname's fields may be longer than ours) */
static void copy(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = 0;
}

/* Strips blanks at both ends, in place. */
static char *trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* The first line of a small file, trimmed, or "" when unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[256];

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(line, sizeof line, f))
		copy(buf, len, trim(line));
	fclose(f);
}

int sysinfo_cpu_model(const char *cpuinfo_path, char *buf, size_t len)
{
	/* in order of preference: x86, then other architectures' names */
	static const char *const keys[] = {"model name", "Processor", "cpu model", "cpu",
	                                   "Hardware"};
	enum { NKEYS = sizeof keys / sizeof keys[0] };
	char line[512], found[NKEYS][SYSINFO_STR];
	FILE *f;

	if (len)
		buf[0] = 0;
	memset(found, 0, sizeof found);
	f = fopen(cpuinfo_path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':'), *key, *val;
		if (!colon)
			continue;
		*colon = 0;
		key = trim(line);
		val = trim(colon + 1);
		if (!*val)
			continue;
		for (int i = 0; i < NKEYS; i++)
			if (!found[i][0] && !strcmp(key, keys[i]))
				copy(found[i], sizeof found[i], val);
	}
	fclose(f);
	for (int i = 0; i < NKEYS; i++)
		if (found[i][0]) {
			copy(buf, len, found[i]);
			return 0;
		}
	return -1;
}

int sysinfo_numa_nodes(const char *node_dir)
{
	DIR *d = opendir(node_dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		const char *p = de->d_name;
		if (strncmp(p, "node", 4) || !p[4])
			continue;
		for (p += 4; isdigit((unsigned char)*p); p++)
			;
		if (!*p)
			n++;
	}
	closedir(d);
	return n;
}

int sysinfo_iso8601(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		if (len)
			buf[0] = 0;
		return -1;
	}
	return 0;
}

int sysinfo_collect(struct sysinfo_env *e)
{
	struct utsname u;

	memset(e, 0, sizeof *e);
	e->start = time(NULL);
	sysinfo_iso8601(e->start, e->start_utc, sizeof e->start_utc);
	copy(e->version, sizeof e->version, TFGB_VERSION);
	copy(e->build, sizeof e->build, TFGB_BUILD);
	sysinfo_tls_library(e->tls, sizeof e->tls);
	copy(e->protobuf_c, sizeof e->protobuf_c, protobuf_c_version());
	if (uname(&u) == 0) {
		copy(e->sysname, sizeof e->sysname, u.sysname);
		copy(e->release, sizeof e->release, u.release);
		copy(e->kversion, sizeof e->kversion, u.version);
		copy(e->machine, sizeof e->machine, u.machine);
	}
	sysinfo_cpu_model("/proc/cpuinfo", e->cpu_model, sizeof e->cpu_model);
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
	          e->clocksource, sizeof e->clocksource);
	read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", e->governor,
	          sizeof e->governor);
	if (gethostname(e->hostname, sizeof e->hostname) != 0)
		e->hostname[0] = 0;
	e->hostname[sizeof e->hostname - 1] = 0;
	e->cores_online = sysconf(_SC_NPROCESSORS_ONLN);
	e->cores_configured = sysconf(_SC_NPROCESSORS_CONF);
	e->numa_nodes = sysinfo_numa_nodes("/sys/devices/system/node");
	alloc_detect(&e->alloc);
	for (int i = 0; i < nsources; i++)
		sources[i](e);
	return 0;
}

/* a string, or null when unknown */
static void str_or_null(struct json *w, const char *key, const char *s)
{
	if (s && *s)
		json_str(w, key, s);
	else
		json_null(w, key);
}

static void count_or_null(struct json *w, const char *key, long v)
{
	if (v >= 0)
		json_i64(w, key, v);
	else
		json_null(w, key);
}

void sysinfo_json(struct json *w, const char *key, const struct sysinfo_env *e,
                  const char *job_text)
{
	char hex[SHA256_HEX_LEN + 1], kernel[sizeof e->sysname + sizeof e->release + 1];

	json_obj_begin(w, key);
	json_str(w, "tfgb_version", e->version);
	str_or_null(w, "build", e->build);
	str_or_null(w, "grpc_core", e->grpc);
	str_or_null(w, "grpc_release", e->grpc_release);
	str_or_null(w, "tls_library", e->tls);
	str_or_null(w, "protobuf_c", e->protobuf_c);
	json_arr_begin(w, "features");
	for (const char *const *f = sysinfo_features(); *f; f++)
		json_str(w, NULL, *f);
	json_arr_end(w);
	snprintf(kernel, sizeof kernel, "%s%s%s", e->sysname, e->sysname[0] ? " " : "", e->release);
	str_or_null(w, "kernel", kernel);
	str_or_null(w, "kernel_version", e->kversion);
	str_or_null(w, "machine", e->machine);
	str_or_null(w, "cpu_model", e->cpu_model);
	count_or_null(w, "cores_online", e->cores_online);
	count_or_null(w, "cores_configured", e->cores_configured);
	count_or_null(w, "numa_nodes", e->numa_nodes);
	str_or_null(w, "clocksource", e->clocksource);
	str_or_null(w, "cpu_governor", e->governor);
	str_or_null(w, "hostname", e->hostname);
	str_or_null(w, "start_utc", e->start_utc);
	str_or_null(w, "allocator", e->alloc.name);
	str_or_null(w, "allocator_version", e->alloc.version);
	str_or_null(w, "allocator_library", e->alloc.library);
	if (job_text) {
		sha256_hex(job_text, strlen(job_text), hex);
		json_str(w, "job_sha256", hex);
	}
	json_obj_end(w);
}
