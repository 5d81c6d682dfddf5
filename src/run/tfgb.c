/* tfgb.c - the dispatcher's helpers for every subcommand: messages, the
 * report stream, the one signal set-up and its stop flag. */
#include "tfgb.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>

#include "util.h"

void tfgb_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("tfgb: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

FILE *tfgb_out(struct tfgb *t)
{
	if (!t->out && !(t->out = util_fopen_w(t->job.file)))
		tfgb_error("cannot write report to '%s': %s", t->job.file, strerror(errno));
	return t->out;
}

static void tfgb_on_signal(int sig)
{
	(void)sig;
	if (tfgb_stop < 100)
		tfgb_stop = tfgb_stop + 1; /* counted: util.h */
}

void tfgb_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = tfgb_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

int tfgb_exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}
