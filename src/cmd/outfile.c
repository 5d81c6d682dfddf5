/* outfile.c - the files a command writes, checked before it does any work
 * (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The folder path is in: "." for a bare name, "/" for "/name". */
static void folder_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/* A path that does not exist yet: its folder must exist and take files. */
static int new_place(const char *path, struct err *why)
{
	char dir[PATH_MAX + 1];
	struct stat st;

	if (path[strlen(path) - 1] == '/') {
		err_set(why, "the name ends in '/', a folder's");
		return -1;
	}
	folder_of(path, dir, sizeof dir);
	if (stat(dir, &st) < 0) {
		err_set(why, "folder '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		err_set(why, "'%s' is not a folder", dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		err_set(why, "cannot create a file in folder '%s': %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int outfile_place(const char *path, const struct outfile_input *in, int ninputs, int *fifo,
                  struct err *why)
{
	struct stat st, is;

	*fifo = 0;
	if (!*path) {
		err_set(why, "the name is empty");
		return -1;
	}
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? new_place(path, why) :
		       (err_set(why, "%s", strerror(errno)), -1);
	if (S_ISDIR(st.st_mode)) {
		err_set(why, "it is a directory");
		return -1;
	}
	if (S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode)) { /* a FIFO or a character device may be */
		err_set(why, "it is a %s", S_ISSOCK(st.st_mode) ? "socket" : "block device");
		return -1;
	}
	if (stat("/proc/self/exe", &is) == 0 && is.st_dev == st.st_dev && is.st_ino == st.st_ino) {
		err_set(why, "it is this tfgb program");
		return -1;
	}
	/* by device and inode: another name, a link, /dev/stdin, a ../ */
	for (int i = 0; i < ninputs; i++)
		if (in[i].path && *in[i].path && stat(in[i].path, &is) == 0 && S_ISREG(is.st_mode) &&
		    is.st_dev == st.st_dev && is.st_ino == st.st_ino) {
			err_set(why, "it is %s (%s%s%s), which this command reads", in[i].what,
			        strcmp(in[i].path, "/dev/stdin") ? "'" : "",
			        strcmp(in[i].path, "/dev/stdin") ? in[i].path : "standard input",
			        strcmp(in[i].path, "/dev/stdin") ? "'" : "");
			return -1;
		}
	if (access(path, W_OK) < 0) {
		err_set(why, "%s", strerror(errno));
		return -1;
	}
	*fifo = S_ISFIFO(st.st_mode);
	return 0;
}

/* 1 when outputs a and b are one file: the same regular file, or one not
 * there yet by the same last name in the same folder. */
static int same_output(const char *a, const char *b)
{
	struct stat sa, sb;
	char da[PATH_MAX + 1], db[PATH_MAX + 1];
	const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
	int ea = stat(a, &sa), eb = stat(b, &sb);

	if (ea == 0 && eb == 0)
		return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (ea == 0 || eb == 0 || strcmp(na ? na + 1 : a, nb ? nb + 1 : b))
		return 0;
	folder_of(a, da, sizeof da);
	folder_of(b, db, sizeof db);
	return stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The files t's command reads; returns how many (at most 5). */
static int job_inputs(const struct tfgb *t, struct outfile_input *in)
{
	const struct job *j = &t->job;
	const struct opt_def *m = job_key_find("train", "model");
	int n = 0;

	if (t->job_path)
		in[n++] = (struct outfile_input){!strcmp(t->job_path, "-") ? "/dev/stdin" : t->job_path,
		                                 !strcmp(t->cmd, "rerun") ? "the result it reruns" :
		                                 "the job file"};
	in[n++] = (struct outfile_input){j->tls_cert, "server.tls_cert"};
	in[n++] = (struct outfile_input){j->tls_key, "server.tls_key"};
	in[n++] = (struct outfile_input){j->tls_ca, "server.tls_ca"};
	if (m && !strcmp(t->cmd, "train"))
		in[n++] = (struct outfile_input){*(char *const *)((const char *)j + m->off),
		                                 "the model file (train.model)"};
	return n;
}

int outfile_check_job(struct tfgb *t)
{
	static const struct {
		const char *key, *noun;
	} outs[] = {{"file", "the report"}, {"series", "the resource series"},
	            {"hgrm", "the latency distribution"}, {"timeline", "the timeline"}};
	struct outfile_input in[5];
	const char *path[4] = {t->job.file, t->job.series, t->job.hgrm, t->job.timeline};
	int nin = job_inputs(t, in), fifo;
	struct err why, err;

	for (int i = 0; i < 4; i++) {
		if (!path[i] || !*path[i] || (i == 0 && !strcmp(path[i], "-"))) /* "-": stdout */
			continue;
		for (int k = 0; k < i; k++)
			if (path[k] && *path[k] && same_output(path[i], path[k])) {
				job_key_err(&t->job, &err, "output", outs[i].key, "is also output.%s; "
				            "%s and %s need a file each", outs[k].key, outs[k].noun,
				            outs[i].noun);
				tfgb_error("%s", err.msg);
				return TFGB_EXIT_USAGE;
			}
		if (outfile_place(path[i], in, nin, &fifo, &why) < 0) {
			job_key_err(&t->job, &err, "output", outs[i].key, "cannot write %s there: %s",
			            outs[i].noun, why.msg);
			tfgb_error("%s", err.msg);
			return TFGB_EXIT_USAGE;
		}
		/* the report opens now, so that a FIFO's reader is found (the
		 * series and distribution files find theirs when written) */
		if (i == 0 && fifo && !(t->out = util_fopen_w(path[i]))) {
			job_key_err(&t->job, &err, "output", "file", "cannot write the report there: %s",
			            errno == ENXIO ? "it is a FIFO and nothing reads it" : strerror(errno));
			tfgb_error("%s", err.msg);
			return TFGB_EXIT_USAGE;
		}
		if (i == 0 && !fifo)
			t->out = NULL; /* opened when the report is written (tfgb_out) */
	}
	return -1;
}
