/* check_input.c - input.c: a whole file read once from a pipe, a FIFO or
 * a regular file, at its size limits, and a FIFO nobody writes to ending
 * at its deadline. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "input.h"
#include "util.h"

static char *text;
static struct err err;
static size_t len;

/* A pipe holding `data` with its write end closed, as "/dev/fd/N"; the
 * read end's fd in *fd (closed by the caller). */
static const char *piped(const char *data, size_t n, int *fd)
{
	static char path[32];
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], data, n), (ssize_t)n);
	close(p[1]);
	*fd = p[0];
	snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
	return path;
}

START_TEST(test_input_pipe)
{
	int fd;
	const char *path = piped("[payload]\nscheme = skew\n", 24, &fd);

	ck_assert_int_eq(input_read(path, "job file", 100, 100, &text, &len, &err), 0);
	ck_assert_uint_eq(len, 24);
	ck_assert_str_eq(text, "[payload]\nscheme = skew\n");
	free(text);
	/* read once: the pipe is empty now */
	ck_assert_int_eq(input_read(path, "job file", 100, 100, &text, &len, &err), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(text, "");
	free(text);
	close(fd);
}
END_TEST

/* At the limit accepted, one byte past it refused; a JSON object has its
 * own limit, told by its first non-blank byte. */
START_TEST(test_input_limits)
{
	char big[200], want[128];
	const char *path;
	int fd;

	memset(big, ';', sizeof big);
	path = piped(big, 100, &fd);
	ck_assert_int_eq(input_read(path, "job file", 100, 150, &text, &len, &err), 0);
	ck_assert_uint_eq(len, 100);
	free(text);
	close(fd);
	path = piped(big, 101, &fd);
	ck_assert_int_eq(input_read(path, "job file", 100, 150, &text, &len, &err), -1);
	snprintf(want, sizeof want, "job file '%s' is too large (over 0 MiB)", path);
	ck_assert_str_eq(err.msg, want);
	ck_assert_ptr_null(text);
	close(fd);
	big[3] = '{';
	big[0] = big[1] = ' ';
	big[2] = '\n';
	path = piped(big, 150, &fd);
	ck_assert_int_eq(input_read(path, "job file", 100, 150, &text, &len, &err), 0);
	ck_assert_uint_eq(len, 150);
	free(text);
	close(fd);
	path = piped(big, 151, &fd);
	ck_assert_int_eq(input_read(path, "result", 100, 150, &text, &len, &err), -1);
	snprintf(want, sizeof want, "result '%s' is too large (over 0 MiB, a JSON result)", path);
	ck_assert_str_eq(err.msg, want);
	close(fd);
}
END_TEST

/* A FIFO: nobody writing ends at the deadline; a writer that comes late
 * is read whole. */
START_TEST(test_input_fifo)
{
	char path[64], want[160];
	uint64_t t0;
	pid_t pid;
	int st;

	snprintf(path, sizeof path, "/tmp/check_input.%d", (int)getpid());
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	t0 = now_ns();
	ck_assert_int_eq(input_read_wait(path, "job file", 100, 100, 300000000ull, &text, &len,
	                                 &err), -1);
	ck_assert_uint_ge(now_ns() - t0, 300000000ull);
	snprintf(want, sizeof want, "job file '%s': nothing to read for 0.3s; is anything "
	         "writing to it?", path);
	ck_assert_str_eq(err.msg, want);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd;
		usleep(100000);
		fd = open(path, O_WRONLY);
		_exit(fd < 0 || write(fd, "[job]\n", 6) != 6);
	}
	ck_assert_int_eq(input_read_wait(path, "job file", 100, 100, 30000000000ull, &text, &len,
	                                 &err), 0);
	ck_assert_str_eq(text, "[job]\n");
	free(text);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(path);
}
END_TEST

START_TEST(test_input_errors)
{
	ck_assert_int_eq(input_read("/nonexistent/x", "job file", 100, 100, &text, &len, &err), -1);
	ck_assert_str_eq(err.msg,
	                 "cannot open job file '/nonexistent/x': No such file or directory");
	ck_assert_int_eq(input_read("/", "result", 100, 100, &text, &len, &err), -1);
	ck_assert_str_eq(err.msg, "cannot read result '/': Is a directory");
}
END_TEST

Suite *make_input_suite(void)
{
	Suite *s = suite_create("input");
	TCase *tc = tcase_create("read");

	tcase_add_test(tc, test_input_pipe);
	tcase_add_test(tc, test_input_limits);
	tcase_add_test(tc, test_input_fifo);
	tcase_add_test(tc, test_input_errors);
	suite_add_tcase(s, tc);
	return s;
}
