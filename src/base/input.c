/* input.c - reading a whole input file once, whatever kind of file it is. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* "'x'" or, for "-", "'-' (standard input)": how messages name the file. */
static void shown_name(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "'%s'%s", path, strcmp(path, "-") ? "" : " (standard input)");
}

/* Waits until fd has something to read (a byte or its end), at most
 * wait_ns: 1 ready, 0 timed out, -1 with errno.  A signal that interrupts
 * it restarts the wait (none is caught while a job is read). */
static int wait_readable(int fd, uint64_t wait_ns)
{
	uint64_t ms = (wait_ns + 999999) / 1000000;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int rc = poll(&p, 1, ms > INT32_MAX ? INT32_MAX : (int)ms);
		if (rc >= 0)
			return rc > 0;
		if (errno != EINTR)
			return -1;
	}
}

/* fd's kind, into st: -1 with err set for what cannot be read as a text (a
 * directory, a terminal). */
static int readable_kind(int fd, struct stat *st, const char *what, const char *name,
                         struct err *err)
{
	if (fstat(fd, st) < 0) {
		err_set(err, "cannot read %s %s: %s", what, name, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st->st_mode)) {
		err_set(err, "cannot read %s %s: %s", what, name, strerror(EISDIR));
		return -1;
	}
	if (isatty(fd)) {
		err_set(err, "%s %s is a terminal; give a file, or pipe one in", what, name);
		return -1;
	}
	return 0;
}

/* Doubles *buf (*cap bytes) up to lim + 2: one byte over the limit tells
 * "too large".  -1 when out of memory, *buf unchanged. */
static int grow(char **buf, size_t *cap, size_t lim)
{
	size_t want = *cap ? *cap * 2 : 8192;
	char *more;

	if (want > lim + 2)
		want = lim + 2;
	if (!(more = realloc(*buf, want)))
		return -1;
	*buf = more;
	*cap = want;
	return 0;
}

int input_read_wait(const char *path, const char *what, size_t max, size_t json_max,
                    uint64_t wait_ns, char **text, size_t *len, struct err *err)
{
	int stdin_ = !strcmp(path, "-");
	int fd = stdin_ ? 0 : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char name[4200], *buf = NULL;
	/* the larger limit until the first non-blank byte (at `blank`) tells
	 * which kind of text it is */
	size_t n = 0, cap = 0, blank = 0, lim = max > json_max ? max : json_max;
	struct stat st;
	int streamed;

	*text = NULL;
	*len = 0;
	shown_name(path, name, sizeof name);
	/* O_NONBLOCK: opening a FIFO blocks until a writer comes, with no deadline */
	if (fd < 0) {
		err_set(err, "cannot open %s %s: %s", what, name, strerror(errno));
		return -1;
	}
	if (readable_kind(fd, &st, what, name, err) < 0)
		goto close_fd;
	/* a pipe, FIFO, socket or device: every read waits with a deadline.  A
	 * FIFO that never had a writer polls as not readable (Linux reports its
	 * hang-up only once a writer has come and gone), so it times out. */
	streamed = !S_ISREG(st.st_mode);
	for (;;) {
		ssize_t got;

		if (n + 1 >= cap && grow(&buf, &cap, lim) < 0) { /* full: n bytes and the NUL */
			err_set(err, "%s %s: out of memory reading it", what, name);
			goto free_buf;
		}
		if (streamed) {
			int w = wait_readable(fd, wait_ns);
			if (w == 0) {
				err_set(err, "%s %s: nothing to read for %gs; is anything "
				        "writing to it?", what, name, (double)wait_ns / 1e9);
				goto free_buf;
			}
			if (w < 0)
				goto read_error;
		}
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			goto read_error;
		if (got == 0)
			break;
		n += (size_t)got;
		while (blank < n && strchr(" \t\r\n", buf[blank]) && buf[blank])
			blank++;
		if (blank < n)
			lim = buf[blank] == '{' ? json_max : max;
		if (n > lim) {
			err_set(err, "%s %s is too large (over %zu MiB%s)", what, name,
			        lim >> 20, lim == json_max && lim != max ? ", a JSON result" : "");
			goto free_buf;
		}
	}
	if (!stdin_)
		close(fd);
	if (!buf && !(buf = malloc(1))) {
		err_set(err, "%s %s: out of memory reading it", what, name);
		return -1;
	}
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
read_error:
	err_set(err, "cannot read %s %s: %s", what, name, strerror(errno));
free_buf:
	free(buf);
close_fd:
	if (!stdin_)
		close(fd);
	return -1;
}

int input_read(const char *path, const char *what, size_t max, size_t json_max, char **text,
               size_t *len, struct err *err)
{
	return input_read_wait(path, what, max, json_max, INPUT_WAIT_NS, text, len, err);
}
