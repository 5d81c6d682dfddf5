/* alloc.c - [job] allocator: applied at start-up, detected for the record. */
#include "alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"

/* The environment of the executed image: the job's memfd, the name its
 * keys came from, their lines, and that it was executed (no second time). */
#define ENV_FD "TFGB_ALLOC_JOB_FD"
#define ENV_SRC "TFGB_ALLOC_JOB_SRC"
#define ENV_LINES "TFGB_ALLOC_JOB_LINES"
#define ENV_AGAIN "TFGB_ALLOC_EXECUTED"

static const struct {
	const char *name, *soname, *package, *symbol;
} preloaded[ALLOC_COUNT] = {
	[ALLOC_JEMALLOC] = {"jemalloc", "libjemalloc.so.2", "libjemalloc2", "mallctl"},
	[ALLOC_TCMALLOC] = {"tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4",
	                    "tc_version"},
	[ALLOC_MIMALLOC] = {"mimalloc", "libmimalloc.so.2", "libmimalloc2.0", "mi_version"},
};

/* Set once mallopt took glibc-kept's settings in this process. */
static int kept;

const char *alloc_package(int a) { return preloaded[a].package; }
const char *alloc_soname(int a) { return preloaded[a].soname; }

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* glibc read MALLOC_* (MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_, ...) or a
 * glibc.malloc tunable from the environment: the record says so. */
static int glibc_tuned(void)
{
	extern char **environ;
	const char *t = getenv("GLIBC_TUNABLES");

	if (t && strstr(t, "glibc.malloc."))
		return 1;
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "MALLOC_", 7))
			return 1;
	return 0;
}

void alloc_detect(struct alloc_info *a)
{
	void *m = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info di;
	const char *lib;

	memset(a, 0, sizeof *a);
	if (m && dladdr(m, &di) && di.dli_fname)
		snprintf(a->library, sizeof a->library, "%s", di.dli_fname);
	lib = base_name(a->library);
	if (dlsym(RTLD_DEFAULT, "__asan_init")) {
		snprintf(a->name, sizeof a->name, "asan");
		return;
	}
	for (int k = ALLOC_JEMALLOC; k < ALLOC_COUNT; k++) {
		void *sym;
		if (strncmp(lib, preloaded[k].soname, strcspn(preloaded[k].soname, ".")) != 0)
			continue;
		snprintf(a->name, sizeof a->name, "%s", preloaded[k].name);
		if (!(sym = dlsym(RTLD_DEFAULT, preloaded[k].symbol)))
			return;
		if (k == ALLOC_JEMALLOC) {
			int (*ctl)(const char *, void *, size_t *, void *, size_t) = (int (*)(
				const char *, void *, size_t *, void *, size_t))sym;
			const char *v = NULL;
			size_t len = sizeof v;
			if (ctl("version", &v, &len, NULL, 0) == 0 && v)
				snprintf(a->version, sizeof a->version, "%s", v);
		} else if (k == ALLOC_TCMALLOC) {
			const char *(*ver)(int *, int *, const char **) =
				(const char *(*)(int *, int *, const char **))sym;
			int maj, min;
			const char *patch;
			snprintf(a->version, sizeof a->version, "%s", ver(&maj, &min, &patch));
		} else {
			int (*ver)(void) = (int (*)(void))sym;
			int v = ver(); /* 209 is 2.0.9 */
			snprintf(a->version, sizeof a->version, "%d.%d.%d", v / 100, v / 10 % 10, v % 10);
		}
		return;
	}
	if (!strncmp(lib, "libc.so", 7)) {
		snprintf(a->name, sizeof a->name, "%s", kept ? "glibc-kept" : "glibc");
		snprintf(a->version, sizeof a->version, "%s%s", gnu_get_libc_version(),
		         glibc_tuned() ? " tuned by MALLOC_*/GLIBC_TUNABLES" : "");
		return;
	}
	snprintf(a->name, sizeof a->name, a->library[0] ? "other" : "");
}

void alloc_text(const struct alloc_info *a, char *buf, size_t len)
{
	if (!a->name[0])
		snprintf(buf, len, "unknown");
	else if (!strcmp(a->name, "other"))
		snprintf(buf, len, "other (malloc from %s)", a->library);
	else
		snprintf(buf, len, "%s%s%s", a->name, a->version[0] ? " " : "", a->version);
}

/* The library file of allocator k: $TFGB_ALLOC_LIBDIR, else the C
 * library's directory (and /usr/<it> when that is /lib/...).  0 when it
 * exists, -1 with buf naming where it was looked for. */
static int lib_path(int k, char *buf, size_t len)
{
	const char *dir = getenv("TFGB_ALLOC_LIBDIR");
	char libc_dir[256] = "";
	Dl_info di;

	if (dir && *dir) {
		snprintf(buf, len, "%s/%s", dir, preloaded[k].soname);
		return access(buf, R_OK) == 0 ? 0 : -1;
	}
	if (dladdr((void *)gnu_get_libc_version, &di) && di.dli_fname && strrchr(di.dli_fname, '/'))
		snprintf(libc_dir, sizeof libc_dir, "%.*s",
		         (int)(strrchr(di.dli_fname, '/') - di.dli_fname), di.dli_fname);
	else
		snprintf(libc_dir, sizeof libc_dir, "/usr/lib");
	snprintf(buf, len, "%s/%s", libc_dir, preloaded[k].soname);
	if (access(buf, R_OK) == 0)
		return 0;
	if (!strncmp(libc_dir, "/lib", 4)) {
		snprintf(buf, len, "/usr%s/%s", libc_dir, preloaded[k].soname);
		if (access(buf, R_OK) == 0)
			return 0;
	}
	snprintf(buf, len, "%s/%s", libc_dir, preloaded[k].soname);
	return -1;
}

/* LD_PRELOAD with `first` (or nothing) in front and every allocator of
 * the table left out. */
static void preload_list(const char *first, char *buf, size_t len)
{
	const char *old = getenv("LD_PRELOAD");
	size_t o = 0;

	buf[0] = 0;
	if (first)
		o += (size_t)snprintf(buf, len, "%s", first);
	while (old && *old && o < len) {
		size_t n = strcspn(old, ": ");
		char item[512];
		int drop = 0;
		snprintf(item, sizeof item, "%.*s", (int)n, old);
		for (int k = ALLOC_JEMALLOC; k < ALLOC_COUNT; k++)
			drop |= !strncmp(base_name(item), preloaded[k].soname,
			                 strcspn(preloaded[k].soname, "."));
		if (n && !drop)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ":" : "", item);
		old += n + (old[n] != 0);
	}
}

/* Executes this program again with LD_PRELOAD = preload, the job on a
 * memfd.  Returns only on failure, with err set. */
static int exec_again(const struct job *j, char **argv, const char *preload, struct err *err)
{
	char *text = job_ini_string(j), path[64], num[16], lines[JOB_MAX_KEYS * 16];
	const char *src = NULL;
	size_t o = 0;
	int fd;

	if (!text) {
		err_set(err, "out of memory");
		return -1;
	}
	fd = cluster_job_memfd(text, path, sizeof path);
	free(text);
	if (fd < 0) {
		err_set(err, "cannot hand the job over for job.allocator: %s",
		         strerror(-fd));
		return -1;
	}
	/* where the job file's keys came from: the -s ones come again from argv */
	lines[0] = 0;
	for (size_t i = 0; i < job_key_count() && i < JOB_MAX_KEYS; i++) {
		const struct job_origin *g = &j->origin[i];
		if (!g->file || !strcmp(g->file, "-s") || g->line < 0) /* -s, -o: argv again */
			continue;
		src = g->file;
		o += (size_t)snprintf(lines + o, sizeof lines - o, "%s%zu:%d", o ? "," : "", i, g->line);
	}
	snprintf(num, sizeof num, "%d", fd);
	if (setenv(ENV_FD, num, 1) < 0 || setenv(ENV_SRC, src ? src : "", 1) < 0 ||
	    setenv(ENV_LINES, lines, 1) < 0 || setenv(ENV_AGAIN, "1", 1) < 0 ||
	    (preload[0] ? setenv("LD_PRELOAD", preload, 1) : unsetenv("LD_PRELOAD")) < 0) {
		err_set(err, "out of memory");
		close(fd);
		return -1;
	}
	fflush(NULL);
	execv(cluster_self_exe(), argv);
	err_set(err, "job.allocator: cannot execute %s again: %s",
	         cluster_self_exe(), strerror(errno));
	close(fd);
	return -1;
}

int alloc_apply(const struct job *j, char **argv, struct err *err)
{
	struct alloc_info now;
	char path[512], preload[4096], host[256] = "?";
	int want = j->allocator, again = getenv(ENV_AGAIN) != NULL;

	unsetenv(ENV_AGAIN);
	alloc_detect(&now);
	path[0] = 0;
	if (want != ALLOC_GLIBC && want != ALLOC_GLIBC_KEPT && lib_path(want, path, sizeof path) < 0) {
		job_key_err(j, err, "job", "allocator", "%s is not installed (no %s); apt-get "
		            "install %s, or choose glibc or glibc-kept", preloaded[want].name, path,
		            preloaded[want].package);
		return -2;
	}
	/* a tool's malloc (a sanitizer's, valgrind's, one the user preloaded
	 * that tfgb does not know): recorded as it is, never replaced */
	if (!strcmp(now.name, "asan") || !strcmp(now.name, "other"))
		return 0;
	if (want == ALLOC_GLIBC || want == ALLOC_GLIBC_KEPT) {
		if (!strcmp(now.name, "glibc")) {
			/* before any thread and any allocation of the run; one
			 * arena, because glibc unmaps a thread arena's heap as
			 * soon as it is empty, whatever the trim threshold */
			if (want == ALLOC_GLIBC_KEPT && mallopt(M_TRIM_THRESHOLD, 1 << 30) &&
			    mallopt(M_TOP_PAD, 64 << 20) && mallopt(M_MMAP_THRESHOLD, 32 << 20) &&
			    mallopt(M_ARENA_MAX, 1))
				kept = 1;
			if (want == ALLOC_GLIBC_KEPT && !kept) {
				gethostname(host, sizeof host);
				err_set(err, "pid %d on %s: job.allocator = "
				         "glibc-kept: mallopt refused the settings", (int)getpid(), host);
				return -1;
			}
			return 0;
		}
	} else if (!strcmp(now.name, preloaded[want].name)) {
		return 0;
	}
	if (again) {
		char t[300];
		alloc_text(&now, t, sizeof t);
		gethostname(host, sizeof host);
		err_set(err, "pid %d on %s: job.allocator = %s did not take "
		         "effect: after executing again with LD_PRELOAD=%s malloc is %s",
		         (int)getpid(), host, job_allocator_name(want), getenv("LD_PRELOAD") ?
		         getenv("LD_PRELOAD") : "", t);
		return -1;
	}
	preload_list(path[0] ? path : NULL, preload, sizeof preload);
	return exec_again(j, argv, preload, err);
}

int alloc_job_inherited(struct job *j, const char *name, struct err *err)
{
	const char *fdv = getenv(ENV_FD), *src = getenv(ENV_SRC), *lines = getenv(ENV_LINES);
	char *text = NULL;
	size_t len = 0, cap = 0;
	int fd, rc = -1;
	ssize_t n;

	if (!fdv || !*fdv)
		return 0;
	fd = atoi(fdv);
	unsetenv(ENV_FD); /* children get their own job */
	if (lseek(fd, 0, SEEK_SET) < 0) {
		err_set(err, "job.allocator: the job handed over is gone: %s",
		         strerror(errno));
		return -1;
	}
	do {
		if (len + 4096 + 1 > cap) {
			char *p = realloc(text, cap = cap ? cap * 2 : 16384);
			if (!p) {
				err_set(err, "out of memory");
				goto out;
			}
			text = p;
		}
		n = read(fd, text + len, cap - len - 1);
		len += n > 0 ? (size_t)n : 0;
	} while (n > 0 || (n < 0 && errno == EINTR));
	text[len] = 0;
	if (job_load_string(j, src && *src ? src : name ? name : "(job)", text, err) < 0)
		goto out;
	/* the origins as they were: a key the file did not set is a default */
	for (size_t i = 0; i < job_key_count() && i < JOB_MAX_KEYS; i++) {
		const char *p = lines;
		int line = 0;
		while (p && *p) {
			char *end;
			unsigned long k = strtoul(p, &end, 10);
			if (*end == ':' && k == i)
				line = atoi(end + 1);
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		if (line)
			j->origin[i].line = line;
		else
			j->origin[i] = (struct job_origin){NULL, 0};
	}
	rc = 1;
out:
	unsetenv(ENV_SRC);
	unsetenv(ENV_LINES);
	free(text);
	close(fd);
	return rc;
}
