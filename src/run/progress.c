/* progress.c - the throughput launcher's progress line (progress.h). */
#include "progress.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

void lprogress_init(struct lprogress *p, const struct tfgb *t, int nps, int nw)
{
	const struct job *j = &t->job;

	*p = (struct lprogress){
		.on = !t->quiet && isatty(STDERR_FILENO), .nps = nps, .nw = nw,
		.warmup_ns = j->warmup_ns, .duration_ns = j->duration_ns,
		.iterations = (uint64_t)j->iterations, .repeat = (int)j->repeat, .label = t->cmd,
	};
}

/* Draws the phase's text over the line: "\r", the text, erase to its end. */
static void draw(struct lprogress *p, const char *text)
{
	if (p->drawn && !strcmp(text, p->last))
		return;
	snprintf(p->last, sizeof p->last, "%s", text);
	fprintf(stderr, "\r%s: %d PS x %d workers: %s\033[K", p->label, p->nps, p->nw, text);
	fflush(stderr);
	p->drawn = 1;
	p->next_ns = now_ns() + 1000000000ull / PROGRESS_HZ;
}

void lprogress_starting(struct lprogress *p)
{
	char text[64];

	if (!p->on)
		return;
	snprintf(text, sizeof text, "starting %d PS", p->nps);
	draw(p, text);
}

void lprogress_workers(struct lprogress *p, struct cluster_child *wk)
{
	for (int i = 0; !p->on && i < p->nw; i++)
		if (wk[i].ready_fd >= 0) {
			close(wk[i].ready_fd); /* a worker's "go" then finds no reader: ignored */
			wk[i].ready_fd = -1;
		}
}

/* Takes the "go" of every worker that sent it (or closed its pipe). */
static void read_gos(struct lprogress *p, struct cluster_child *wk)
{
	for (int i = 0; i < p->nw; i++) {
		struct pollfd pf = {.fd = wk[i].ready_fd, .events = POLLIN};
		char buf[8];

		if (pf.fd < 0 || poll(&pf, 1, 0) != 1)
			continue;
		if (read(pf.fd, buf, sizeof buf) > 0 && !p->go++)
			p->t_go = now_ns(); /* the barrier releases them all at once */
		close(pf.fd);
		wk[i].ready_fd = -1;
	}
}

void lprogress_tick(struct lprogress *p, struct cluster_child *wk, int done)
{
	uint64_t now = now_ns(), el, win;
	char text[128];

	if (!p->on)
		return;
	read_gos(p, wk);
	if (now < p->next_ns)
		return;
	el = p->go ? now - p->t_go : 0;
	win = p->duration_ns * (uint64_t)(p->repeat > 0 ? p->repeat : 1);
	if (p->go < p->nw && done == 0)
		snprintf(text, sizeof text, "waiting for %d workers (%d at the barrier)", p->nw,
		         p->go);
	else if (el < p->warmup_ns)
		snprintf(text, sizeof text, "warm-up %.0f/%.0fs", (double)el / 1e9,
		         (double)p->warmup_ns / 1e9);
	else if (done == 0 && p->iterations)
		snprintf(text, sizeof text, "measuring %llu calls a worker, %.0fs so far",
		         (unsigned long long)p->iterations, (double)(el - p->warmup_ns) / 1e9);
	else if (done == 0 && el - p->warmup_ns < win)
		snprintf(text, sizeof text, "window %.0f/%.0fs", (double)(el - p->warmup_ns) / 1e9,
		         (double)win / 1e9);
	else
		snprintf(text, sizeof text, "collecting (%d of %d workers done)", done, p->nw);
	draw(p, text);
}

void lprogress_end(struct lprogress *p)
{
	if (!p->drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->drawn = 0;
}

void lprogress_worker_go(void)
{
	const char *s = getenv("TFGB_READY_FD");
	char *end;
	long fd;
	ssize_t n;

	if (!getenv("TFGB_LAUNCHER") || !s || !*s)
		return;
	fd = strtol(s, &end, 10);
	if (*end || fd < 3 || fd > 65535)
		return;
	do
		n = write((int)fd, "go\n", 3); /* SIGPIPE is ignored: no reader is fine */
	while (n < 0 && errno == EINTR);
	close((int)fd);
	unsetenv("TFGB_READY_FD");
}
