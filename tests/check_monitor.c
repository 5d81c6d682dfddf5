/* check_monitor.c - the resource monitor of monitor.c against processes of
 * known load: a child spinning on one core, an idle one, one holding a
 * known amount of memory, and bytes sent over loopback. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "json.h"
#include "jsonr.h"
#include "monitor.h"
#include "srvinfo.h"
#include "util.h"

/* Per-test state: a monitor and the children a test started. */
static struct monitor *m;
static pid_t kids[4];
static int nkids;

static void monitor_setup(void)
{
	m = NULL;
	nkids = 0;
}

static void monitor_teardown(void)
{
	monitor_free(m);
	for (int i = 0; i < nkids; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

enum kind { SPIN, IDLE, BIG, NAPS, SPIN_THEN_EXIT, THREAD_NAPS, THREAD_NAPS_THEN_ENDS };

/* A thread of a child: 1 ms naps, for ever (arg NULL) or for 600 ms. */
static void *napper(void *arg)
{
	for (int i = 0; !arg || i < 600; i++)
		sleep_ms(1);
	return NULL;
}

/* A child whose main thread waits while another one naps (until killed,
 * or for 600 ms and then ends). */
static _Noreturn void naps_in_a_thread(int ends)
{
	pthread_t th;

	if (pthread_create(&th, NULL, napper, ends ? &th : NULL) != 0)
		_exit(1);
	if (ends)
		pthread_join(th, NULL);
	for (;;)
		pause();
}

/* Starts a child doing `what` until killed.  BIG returns once the child
 * says it has touched all of its memory (a byte on a pipe; 10 s deadline,
 * times TFGB_TEST_SLOW), not after a guessed sleep. */
static pid_t child(enum kind what)
{
	int ready[2] = {-1, -1};
	pid_t pid;

	if (what == BIG)
		ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		volatile unsigned long spin = 0;
		struct timespec t0, t;
		char *mem;

		switch (what) {
		case SPIN:
			for (;;)
				spin++;
		case SPIN_THEN_EXIT:
			clock_gettime(CLOCK_MONOTONIC, &t0);
			do {
				for (int i = 0; i < 100000; i++)
					spin++;
				clock_gettime(CLOCK_MONOTONIC, &t);
			} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 400);
			_exit(0);
		case BIG:
			mem = malloc(64u << 20);
			if (!mem)
				_exit(1);
			/* through a volatile pointer: the stores must happen */
			for (size_t i = 0; i < (64u << 20); i += 512)
				((volatile char *)mem)[i] = 1;
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		case NAPS:
			for (;;)
				sleep_ms(1);
		case THREAD_NAPS:
		case THREAD_NAPS_THEN_ENDS:
			naps_in_a_thread(what == THREAD_NAPS_THEN_ENDS);
		case IDLE:
			for (;;)
				pause();
		}
		_exit(0);
	}
	kids[nkids++] = pid;
	if (what == BIG) {
		struct pollfd p = {.fd = ready[0], .events = POLLIN};
		char c;
		close(ready[1]);
		ck_assert_msg(poll(&p, 1, (int)(10000 * tfgb_test_slow())) == 1,
		              "the child did not touch its 64 MiB within 10 s");
		ck_assert_msg(read(ready[0], &c, 1) == 1, "the child died before touching its memory");
		close(ready[0]);
	}
	return pid;
}

/* Ends child pid (SIGKILL unless it already left) and returns the CPU
 * seconds the kernel says it used in all: the truth to hold the monitor
 * to, whatever share of a core the machine gave it. */
static double reap_cpu_s(pid_t pid)
{
	struct rusage ru;
	int status;

	kill(pid, SIGKILL);
	ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
	for (int i = 0; i < nkids; i++)
		if (kids[i] == pid)
			kids[i] = 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The single role's summary. */
static struct monitor_role_sum role0(void)
{
	struct monitor_role_sum r[4];

	ck_assert_uint_ge(monitor_roles(m, r, 4), 1);
	return r[0];
}

/* Everything monitor_json writes, in a malloc'd string. */
static char *json_of(uint64_t calls, uint64_t bytes, size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	struct json w;

	ck_assert_ptr_nonnull(f);
	json_init(&w, f, 1);
	json_obj_begin(&w, NULL);
	monitor_json(m, &w, "resources", calls, bytes, 2 * bytes);
	json_obj_end(&w);
	json_finish(&w);
	fclose(f);
	return out;
}

/* --- core ---------------------------------------------------------- */

START_TEST(test_monitor_busy_child)
{
	struct monitor_target t = {"worker", 0, child(SPIN)};
	struct monitor_role_sum r;
	double per_call, truth_s, truth_pct, got_s;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 100000000, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(1000);
	monitor_stop(m);
	truth_s = reap_cpu_s(t.pid);
	r = role0();
	got_s = r.user_s + r.sys_s;
	truth_pct = 100.0 * truth_s / monitor_span_s(m);
	ck_assert_str_eq(r.role, "worker");
	ck_assert_uint_eq(r.procs, 1);
	/* the monitor agrees with the kernel's own account (the child's whole
	 * life is a few ms longer than the span, ticks are 10 ms) */
	ck_assert_msg(got_s <= truth_s + 0.02 && got_s >= truth_s - 0.08,
	              "monitor %.3fs, kernel %.3fs", got_s, truth_s);
	ck_assert_msg(fabs(r.cpu_avg_pct - truth_pct) <= 10, "monitor %.1f%%, kernel %.1f%%",
	              r.cpu_avg_pct, truth_pct);
	/* and in percent of one core, whatever share of it a loaded machine
	 * gave the child: its CPU seconds over the span, not over the CPUs
	 * (the kernel's figure above holds it to the truth) */
	ck_assert_msg(fabs(r.cpu_avg_pct - 100.0 * got_s / monitor_span_s(m)) <= 0.5,
	              "monitor %.1f%% for %.3fs of CPU in %.3fs", r.cpu_avg_pct, got_s,
	              monitor_span_s(m));
	ck_assert_double_le(r.cpu_avg_pct, 110);
	ck_assert_msg(r.user_s > r.sys_s, "user %.2fs, system %.2fs", r.user_s, r.sys_s);
	ck_assert_double_ge(r.cpu_peak_pct, r.cpu_avg_pct - 10);
	/* about 10 samples, 0.1s apart, spanning the second (later ones on a
	 * slow machine: TFGB_TEST_SLOW) */
	ck_assert_uint_ge(monitor_nsamples(m), 8 / tfgb_test_slow());
	ck_assert_uint_le(monitor_nsamples(m), 13 * tfgb_test_slow());
	ck_assert_double_ge(monitor_span_s(m), 0.95);
	ck_assert_double_le(monitor_span_s(m), 1.5 * tfgb_test_slow());
	/* CPU per call: its CPU seconds over 1000 calls */
	per_call = monitor_cpu_s_per_call(m, "worker", 1000);
	ck_assert_double_eq_tol(per_call, got_s / 1000, 1e-12);
	ck_assert(isnan(monitor_cpu_s_per_call(m, NULL, 0)));
	ck_assert_double_eq(monitor_cpu_s_per_call(m, "ps", 10), 0);
}
END_TEST

START_TEST(test_monitor_idle_child)
{
	struct monitor_target t = {"ps", 3, child(IDLE)};
	struct monitor_role_sum r;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 50000000, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(500);
	monitor_stop(m);
	r = role0();
	ck_assert_msg(r.cpu_avg_pct < 5, "idle child at %.1f%%", r.cpu_avg_pct);
	ck_assert_double_lt(r.cpu_peak_pct, 25);
	ck_assert_uint_gt(r.rss_avg_bytes, 0);
	ck_assert_uint_ge(r.rss_peak_bytes, r.rss_avg_bytes);
}
END_TEST

START_TEST(test_monitor_json)
{
	struct monitor_target t[2] = {{"worker", 0, child(SPIN)}, {"ps", 0, child(IDLE)}};
	struct jsonr r;
	char buf[32], *out;
	size_t len;
	double v;
	int samples;

	ck_assert_int_eq(monitor_new(&m, t, 2, 100000000, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(350);
	monitor_stop(m);
	out = json_of(100, 1000000, &len);
	ck_assert_int_eq(jsonr_load(&r, out, len), 0);
	ck_assert_int_ge(jsonr_get_str(&r, "resources.processes.0.role", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "worker");
	ck_assert_int_ge(jsonr_get_str(&r, "resources.processes.1.role", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "ps");
	ck_assert_int_eq(jsonr_get_num(&r, "resources.processes.1.pid", &v), 0);
	ck_assert_double_eq(v, (double)t[1].pid);
	samples = jsonr_find(&r, 0, "resources.processes.0.samples");
	ck_assert_int_eq(r.tok[samples].count, monitor_nsamples(m));
	/* the first sample has no interval: null; the next ones have figures */
	ck_assert_int_eq(jsonr_type(&r, jsonr_find(&r, samples, "0.cpu_pct")), JSONR_NULL);
	ck_assert_int_eq(jsonr_num(&r, jsonr_find(&r, samples, "1.cpu_pct"), &v), 0);
	ck_assert_int_eq(jsonr_num(&r, jsonr_find(&r, samples, "1.rss_bytes"), &v), 0);
	ck_assert_double_gt(v, 0);
	ck_assert_int_eq(jsonr_get_num(&r, "resources.interval_s", &v), 0);
	ck_assert_double_eq_tol(v, 0.1, 1e-9);
	ck_assert_int_eq(jsonr_get_num(&r, "resources.summary.roles.1.processes", &v), 0);
	ck_assert_double_eq(v, 1);
	ck_assert_int_eq(jsonr_get_num(&r, "resources.summary.cpu_s_per_rpc", &v), 0);
	ck_assert_double_gt(v, 0);
	ck_assert_int_eq(jsonr_type(&r, jsonr_find(&r, 0, "resources.net.interfaces")),
	                 JSONR_ARRAY);
	/* the host's counters say they are the host's */
	ck_assert_int_ge(jsonr_find(&r, 0, "resources.summary.host_tx_bytes_per_payload_byte"), 0);
	ck_assert_int_eq(jsonr_get_str(&r, "resources.net.scope", buf, sizeof buf), 4);
	ck_assert_str_eq(buf, "host");
	ck_assert_int_eq(jsonr_get_str(&r, "resources.summary.net_scope", buf, sizeof buf), 4);
	ck_assert_str_eq(buf, "host");
	/* no ports given: the run's own figure is not made up */
	ck_assert_int_eq(jsonr_get_str(&r, "resources.summary.run_wire.scope", buf, sizeof buf), 3);
	ck_assert_str_eq(buf, "run");
	ck_assert_int_lt(jsonr_find(&r, 0, "resources.summary.run_wire.bytes"), 0);
	jsonr_free(&r);
	free(out);
}
END_TEST

START_TEST(test_monitor_csv_text)
{
	struct monitor_target t = {"worker", 7, child(IDLE)};
	char *out = NULL, line[512];
	size_t len = 0, rows = 0, n;
	FILE *f;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 1000000000, 0), 0);
	monitor_sample(m);
	sleep_ms(50);
	monitor_sample(m);
	monitor_stop(m); /* never started: one more sample */
	n = monitor_nsamples(m);
	ck_assert_uint_eq(n, 3);
	f = open_memstream(&out, &len);
	ck_assert_int_eq(monitor_csv(m, f), 0);
	fclose(f);
	f = fmemopen(out, len, "r");
	ck_assert(fgets(line, sizeof line, f) != NULL);
	ck_assert_str_eq(line, "t_s,kind,role,index,pid,iface,cpu_pct,user_pct,sys_pct,rss_bytes,"
	                       "hwm_bytes,vcsw,ivcsw,rchar,wchar,rx_bytes,rx_packets,tx_bytes,"
	                       "tx_packets,syscr,syscw\n");
	while (fgets(line, sizeof line, f)) {
		int commas = 0;
		for (char *p = line; *p; p++)
			commas += *p == ',';
		ck_assert_int_eq(commas, 20);
		if (rows == 0)
			ck_assert(!strncmp(line, "0.000,proc,worker,7,", 20));
		rows++;
	}
	fclose(f);
	/* one row per sample for the process, and for each interface */
	ck_assert_uint_eq(rows % n, 0);
	ck_assert_uint_ge(rows, n);
	free(out);

	out = NULL;
	f = open_memstream(&out, &len);
	monitor_text(m, f, 10, 1000, 2000);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(out, "# resources: 3 samples"));
	ck_assert_ptr_nonnull(strstr(out, "# resources: worker x1: CPU "));
	ck_assert_ptr_nonnull(strstr(out, "# network, host-wide, all traffic ("));
	ck_assert_ptr_nonnull(strstr(out, "# network, this run: not measured ("));
	free(out);
}
END_TEST

/* monitor_select: what is left out is absent from the CSV, the JSON and
 * the text; the network is not even read without it. */
START_TEST(test_monitor_select)
{
	struct monitor_target t = {"worker", 0, child(IDLE)};
	char *out = NULL, line[512];
	size_t len = 0;
	struct jsonr r = {0};
	struct json w;
	FILE *f;
	int sel;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 1000000000, 0), 0);
	monitor_select(m, MONITOR_MEMORY | MONITOR_CSW);
	monitor_sample(m);
	sleep_ms(50);
	monitor_stop(m);
	f = open_memstream(&out, &len);
	ck_assert_int_eq(monitor_csv(m, f), 0);
	fclose(f);
	f = fmemopen(out, len, "r");
	ck_assert(fgets(line, sizeof line, f) != NULL);
	ck_assert_str_eq(line, "t_s,kind,role,index,pid,iface,rss_bytes,hwm_bytes,vcsw,ivcsw\n");
	while (fgets(line, sizeof line, f)) {
		int commas = 0;
		for (char *p = line; *p; p++)
			commas += *p == ',';
		ck_assert_int_eq(commas, 9);
		ck_assert_msg(!strstr(line, ",net,"), "a net row without network: %s", line);
	}
	fclose(f);
	free(out);

	out = NULL;
	f = open_memstream(&out, &len);
	json_init(&w, f, 0);
	json_obj_begin(&w, NULL);
	monitor_json(m, &w, "resources", 10, 1000, 2000);
	json_obj_end(&w);
	fclose(f);
	ck_assert_int_eq(jsonr_load(&r, out, len), 0);
	sel = jsonr_find(&r, 0, "resources.selected");
	ck_assert_int_eq(r.tok[sel].count, 2);
	ck_assert(jsonr_str_eq(&r, jsonr_find(&r, 0, "resources.selected.0"), "memory"));
	ck_assert(jsonr_str_eq(&r, jsonr_find(&r, 0, "resources.selected.1"), "context_switches"));
	ck_assert_int_eq(jsonr_find(&r, 0, "resources.net"), -1);
	ck_assert_int_eq(jsonr_find(&r, 0, "resources.summary.cpu_s_per_rpc"), -1);
	ck_assert_int_eq(jsonr_find(&r, 0, "resources.summary.roles.0.cpu_avg_pct"), -1);
	ck_assert_int_ge(jsonr_find(&r, 0, "resources.summary.roles.0.rss_peak_bytes"), 0);
	ck_assert_int_ge(jsonr_find(&r, 0, "resources.summary.roles.0.vcsw"), 0);
	ck_assert_int_eq(jsonr_find(&r, 0, "resources.processes.0.samples.1.cpu_pct"), -1);
	ck_assert_int_ge(jsonr_find(&r, 0, "resources.processes.0.samples.1.rss_bytes"), 0);
	jsonr_free(&r);
	free(out);

	out = NULL;
	f = open_memstream(&out, &len);
	monitor_text(m, f, 10, 1000, 2000);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(out, "# resources: worker x1: RSS "));
	ck_assert_ptr_nonnull(strstr(out, "; context switches "));
	ck_assert_ptr_null(strstr(out, "CPU"));
	ck_assert_ptr_null(strstr(out, "# network"));
	free(out);
}
END_TEST

/* --- limits -------------------------------------------------------- */

START_TEST(test_monitor_thinning)
{
	struct monitor_target t = {"worker", 0, child(IDLE)};
	double span;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 10000000, 4), 0);
	for (int i = 0; i < 10; i++) {
		monitor_sample(m);
		ck_assert_uint_le(monitor_nsamples(m), 4);
		sleep_ms(10);
	}
	/* 10 samples into 4 slots: thinned twice (4 -> 2 + 1, 3 + 1 -> 2 + 1 ...) */
	ck_assert_double_ge(monitor_interval_s(m), 0.04 - 1e-9);
	/* the first sample stays: the series still spans the whole run */
	span = monitor_span_s(m);
	ck_assert_msg(span >= 0.07, "span %.3f", span);

	/* the thread thins too, and keeps sampling: 4 slots still span the
	 * 200 ms (without thinning they would fill in the first 20 ms).  Its
	 * resolution is not checked: a thread starved on a loaded machine may
	 * take only a few samples, none of them thinned */
	monitor_free(m);
	ck_assert_int_eq(monitor_new(&m, &t, 1, 5000000, 4), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(200);
	monitor_stop(m);
	ck_assert_uint_le(monitor_nsamples(m), 4);
	ck_assert_double_ge(monitor_span_s(m), 0.15);
}
END_TEST

/* Ring mode keeps the newest samples at the interval asked (the oldest
 * quarter goes when it is full); a window of it starts at the last sample
 * before its start and keeps at most the samples asked, first and last. */
START_TEST(test_monitor_ring_window)
{
	struct monitor_target t = {"ps", 0, getpid()};
	struct monitor *w;
	uint64_t ts[20], mid;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 1000000, 8), 0);
	monitor_ring(m);
	for (int i = 0; i < 20; i++) {
		ts[i] = now_ns();
		monitor_sample(m);
		ck_assert_uint_le(monitor_nsamples(m), 8);
		sleep_ms(2);
	}
	ck_assert_double_eq_tol(monitor_interval_s(m), 0.001, 1e-12); /* never thinned */
	/* 20 samples in 8 slots: 8, 6 + 1, 6 + 2, ... samples 12 to 19 stay */
	ck_assert_uint_eq(monitor_nsamples(m), 8);
	ck_assert_int_eq(monitor_window(m, 0, ts[13], 16, &w), -ENOENT); /* 12 alone */
	ck_assert_int_eq(monitor_window(m, 0, ts[14], 16, &w), 0);
	ck_assert_uint_eq(monitor_nsamples(w), 2);
	monitor_free(w);
	/* samples 16 to 19 (taken after ts[i]) with 15 as their base */
	mid = ts[16];
	ck_assert_int_eq(monitor_window(m, mid, now_ns(), 16, &w), 0);
	ck_assert_uint_eq(monitor_nsamples(w), 5);
	ck_assert_double_lt(monitor_span_s(w), (double)(now_ns() - ts[15]) / 1e9);
	monitor_free(w);
	ck_assert_int_eq(monitor_window(m, mid, now_ns(), 2, &w), 0);
	ck_assert_uint_eq(monitor_nsamples(w), 2);
	ck_assert_double_gt(monitor_span_s(w), (double)(ts[19] - ts[16]) / 1e9);
	monitor_free(w);
	/* nothing there: before the ring's oldest, or past its newest */
	ck_assert_int_eq(monitor_window(m, 0, ts[0], 16, &w), -ENOENT);
	ck_assert_int_eq(monitor_window(m, now_ns(), now_ns() + 1000000000ull, 16, &w), -ENOENT);
	ck_assert_int_eq(monitor_window(m, 0, now_ns(), 1, &w), -EINVAL);
}
END_TEST

/* A server's own figures through its Info reply: the runs that overlap a
 * window are counted (two at once: shared), a request that is not an
 * InfoRequest gets the plain reply, and a begin none. */
START_TEST(test_monitor_server_self)
{
	static unsigned char out[TR_INFO_MAX];
	unsigned char info[TR_INFO_MAX], req[SRVINFO_REQ_LEN];
	struct srvself *s;
	struct srvinfo si = {0};
	struct job j;
	struct err e;
	size_t len, n;

	ck_assert_int_eq(job_init(&j), 0);
	ck_assert_int_eq(job_override(&j, "monitor.interval=10ms", 1, &e), 0);
	len = srvinfo_pack("grpc", info, sizeof info);
	ck_assert_int_eq(srvself_new(&j, 3, info, len, &s), 0);
	ck_assert_uint_eq(srvself_reply(s, NULL, 0, out, sizeof out), 0);
	srvinfo_req_pack(req, SRVINFO_BEGIN, 1, 60ull * 1000000000ull, 0);
	ck_assert_uint_eq(srvself_reply(s, req, sizeof req, out, sizeof out), 0);
	srvinfo_req_pack(req, SRVINFO_BEGIN, 2, 60ull * 1000000000ull, 0);
	ck_assert_uint_eq(srvself_reply(s, req, sizeof req, out, sizeof out), 0);
	req[0] ^= 1; /* not an InfoRequest */
	ck_assert_uint_eq(srvself_reply(s, req, sizeof req, out, sizeof out), 0);
	sleep_ms(100);
	/* run 1 ends, run 2 still goes: shared */
	srvinfo_req_pack(req, SRVINFO_END, 1, 90000000ull, 0);
	n = srvself_reply(s, req, sizeof req, out, sizeof out);
	ck_assert_uint_gt(n, len);
	ck_assert_mem_eq(out, info, len); /* the plain reply, then its own figures */
	ck_assert_int_eq(srvinfo_unpack(out, n, &si), 0);
	ck_assert_int_eq(si.self, 1);
	ck_assert_uint_eq(si.runs, 2);
	ck_assert_uint_eq(si.window_ns, 90000000ull);
	ck_assert_msg(si.mon, "no figures: %s", si.res_why);
	ck_assert_uint_ge(monitor_nsamples(si.mon), 2);
	ck_assert_uint_le(monitor_nsamples(si.mon), SRVSELF_REPLY_SAMPLES);
	srvinfo_clear(&si);
	/* run 2 ends; a run 3 after both is alone */
	srvinfo_req_pack(req, SRVINFO_END, 2, 90000000ull, 0);
	ck_assert_int_eq(srvinfo_unpack(out, srvself_reply(s, req, sizeof req, out, sizeof out),
	                                &si), 0);
	ck_assert_uint_eq(si.runs, 2);
	srvinfo_clear(&si);
	sleep_ms(50);
	srvinfo_req_pack(req, SRVINFO_BEGIN, 3, 60ull * 1000000000ull, 0);
	srvself_reply(s, req, sizeof req, out, sizeof out);
	sleep_ms(50);
	srvinfo_req_pack(req, SRVINFO_END, 3, 30000000ull, 0);
	ck_assert_int_eq(srvinfo_unpack(out, srvself_reply(s, req, sizeof req, out, sizeof out),
	                                &si), 0);
	ck_assert_uint_eq(si.runs, 1);
	srvinfo_clear(&si);
	/* a reply with no room for the series goes without it, and says so */
	srvinfo_req_pack(req, SRVINFO_END, 3, 90000000ull, 0);
	n = srvself_reply(s, req, sizeof req, out, len + 64);
	ck_assert_int_eq(srvinfo_unpack(out, n, &si), 0);
	ck_assert_ptr_null(si.mon);
	ck_assert_str_eq(si.res_why, "its series does not fit the transport's reply");
	srvself_free(s);
	/* without sampling (monitor.interval = 0) it says so */
	ck_assert_int_eq(job_override(&j, "monitor.interval=0", 2, &e), 0);
	ck_assert_int_eq(srvself_new(&j, 0, info, len, &s), 0);
	ck_assert_int_eq(srvinfo_unpack(out, srvself_reply(s, req, sizeof req, out, sizeof out),
	                                &si), 0);
	ck_assert_int_eq(si.self, 0);
	ck_assert_ptr_nonnull(strstr(si.res_why, "does not sample itself"));
	srvself_free(s);
	job_free(&j);
}
END_TEST

START_TEST(test_monitor_rss)
{
	struct monitor_target t = {"ps", 0, child(BIG)};
	struct monitor_role_sum r;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 50000000, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(150);
	monitor_stop(m);
	r = role0();
	ck_assert_msg(r.rss_avg_bytes >= (60u << 20), "rss %llu", (unsigned long long)r.rss_avg_bytes);
	ck_assert_uint_ge(r.rss_peak_bytes, 64u << 20);
	/* a sanity bound (a unit slip would be 1024 times off); generous
	 * because a sanitizer build's child inherits the shadow memory */
	ck_assert_uint_lt(r.rss_peak_bytes, 1024u << 20);
}
END_TEST

START_TEST(test_monitor_ctx_switches)
{
	struct monitor_target t = {"worker", 0, child(NAPS)};
	struct monitor_role_sum r;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 100000000, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(1500);
	monitor_stop(m);
	r = role0();
	/* a 1 ms nap is one voluntary switch: hundreds in 1.5 s, and still
	 * over 100 when a loaded machine runs the child a sixth of the time
	 * (92 in 0.5 s were seen under make check with a CPU hog) */
	ck_assert_msg(r.vcsw >= 100, "only %llu voluntary switches", (unsigned long long)r.vcsw);
}
END_TEST

/* /proc/PID/status counts the main thread's switches only: a child whose
 * main thread waits while another naps must show the napper's, and a
 * thread that ended must not take its switches away with it. */
START_TEST(test_monitor_ctx_switches_threads)
{
	struct monitor_target t[2] = {{"worker", 0, child(THREAD_NAPS)},
	                              {"ps", 0, child(THREAD_NAPS_THEN_ENDS)}};
	struct monitor_role_sum r[2];

	ck_assert_int_eq(monitor_new(&m, t, 2, 100000000, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(1500);
	monitor_stop(m);
	ck_assert_uint_eq(monitor_roles(m, r, 2), 2);
	ck_assert_str_eq(r[0].role, "worker");
	/* as test_monitor_ctx_switches: over 100 even on a loaded machine */
	ck_assert_msg(r[0].vcsw >= 100, "only %llu voluntary switches of a napping thread",
	              (unsigned long long)r[0].vcsw);
	/* 600 naps, at most 100 ms of them after its last sample: under load
	 * a third of them still */
	ck_assert_msg(r[1].vcsw >= 50, "only %llu voluntary switches of a thread that ended",
	              (unsigned long long)r[1].vcsw);
}
END_TEST

START_TEST(test_monitor_net_loopback)
{
	enum { TOTAL = 8 << 20 };
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	static char buf[1 << 16];
	int ls, c, s;
	size_t sent = 0, got = 0;
	uint64_t rxb, rxp, txb, txp;

	ck_assert_int_eq(monitor_new(&m, NULL, 0, 1000000000, 0), 0);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(ls, 0);
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(ls, 1), 0);
	ck_assert_int_eq(getsockname(ls, (struct sockaddr *)&a, &alen), 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&a, sizeof a), 0);
	s = accept(ls, NULL, NULL);
	ck_assert_int_ge(s, 0);
	monitor_sample(m);
	/* one thread both ends: never block on a full buffer */
	while (got < TOTAL) {
		ssize_t n;
		if (sent < TOTAL && (n = send(c, buf, sizeof buf, MSG_DONTWAIT)) > 0)
			sent += (size_t)n;
		if ((n = recv(s, buf, sizeof buf, sent < TOTAL ? MSG_DONTWAIT : 0)) > 0)
			got += (size_t)n;
	}
	monitor_stop(m);
	close(c);
	close(s);
	close(ls);
	monitor_net_totals(m, &rxb, &rxp, &txb, &txp);
	/* other traffic on the host only adds */
	ck_assert_uint_ge(txb, TOTAL);
	ck_assert_uint_ge(rxb, TOTAL);
	ck_assert_uint_gt(txp, 0);
	ck_assert_double_ge(monitor_wire_per_payload_byte(m, TOTAL), 1.0);
	ck_assert(isnan(monitor_wire_per_payload_byte(m, 0)));
}
END_TEST

/* --- errors -------------------------------------------------------- */

START_TEST(test_monitor_bad_arguments)
{
	struct monitor_target ok = {"worker", 0, getpid()}, nopid = {"worker", 0, 0},
	                      norole = {NULL, 0, getpid()};

	ck_assert_int_eq(monitor_new(&m, &ok, 1, 999999, 0), -EINVAL);
	ck_assert_int_eq(monitor_new(&m, &ok, 1, 1000000, 3), -EINVAL);
	ck_assert_int_eq(monitor_new(&m, &ok, 1, 1000000, MONITOR_MAX_SAMPLES + 1), -EINVAL);
	ck_assert_int_eq(monitor_new(&m, &nopid, 1, 1000000, 0), -EINVAL);
	ck_assert_int_eq(monitor_new(&m, &norole, 1, 1000000, 0), -EINVAL);
	ck_assert_int_eq(monitor_new(&m, NULL, 1, 1000000, 0), -EINVAL);
	ck_assert_int_eq(monitor_new(&m, &ok, MONITOR_MAX_PROCS + 1, 1000000, 0), -EINVAL);
	ck_assert_ptr_null(m);
	monitor_free(NULL);
	monitor_stop(NULL);
	/* a role longer than the limit is cut, not refused */
	ok.role = "a-very-long-role-name-indeed";
	ck_assert_int_eq(monitor_new(&m, &ok, 1, 1000000, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	ck_assert_int_eq(monitor_start(m), -EBUSY);
	monitor_stop(m);
	ck_assert_uint_eq(strlen(role0().role), MONITOR_ROLE_MAX - 1);
}
END_TEST

START_TEST(test_monitor_gone_process)
{
	struct monitor_target t[2] = {{"worker", 0, 0}, {"worker", 1, 0}};
	struct monitor_role_sum r;
	pid_t gone = fork();
	char *out;
	size_t len;
	struct jsonr jr;
	double truth_s;

	ck_assert_int_ge(gone, 0);
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	t[0].pid = gone;                  /* never there */
	t[1].pid = child(SPIN_THEN_EXIT); /* leaves in the middle */
	ck_assert_int_eq(monitor_new(&m, t, 2, 50000000, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(800);
	monitor_stop(m);
	truth_s = reap_cpu_s(t[1].pid);
	r = role0();
	ck_assert_uint_eq(r.procs, 2);
	/* the one that left keeps what it used (up to 0.4 s, as the machine
	 * allowed), all but what it did before the first sample */
	ck_assert_msg(r.user_s + r.sys_s <= truth_s + 0.02 && r.user_s + r.sys_s >= truth_s - 0.06,
	              "monitor %.3fs, kernel %.3fs", r.user_s + r.sys_s, truth_s);
	ck_assert_double_gt(r.user_s + r.sys_s, 0.02);
	/* the one never seen is null throughout */
	out = json_of(0, 0, &len);
	ck_assert_int_eq(jsonr_load(&jr, out, len), 0);
	ck_assert_int_eq(jsonr_type(&jr, jsonr_find(&jr, 0, "resources.processes.0.samples.1.rss_bytes")),
	                 JSONR_NULL);
	ck_assert_int_eq(jsonr_type(&jr, jsonr_find(&jr, 0, "resources.summary.cpu_s_per_rpc")),
	                 JSONR_NULL);
	jsonr_free(&jr);
	free(out);
}
END_TEST

/* A child reaped by its parent between two samples: its final account
 * (monitor_exited) counts, not just what the last sample saw. */
START_TEST(test_monitor_reaped_child)
{
	struct monitor_target t = {"worker", 0, child(SPIN_THEN_EXIT)};
	struct monitor_role_sum r;
	struct rusage ru;
	double truth_s;
	int status;

	/* one sample at the start and one at the stop, none in between */
	ck_assert_int_eq(monitor_new(&m, &t, 1, 10000000000ull, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	ck_assert_int_eq(wait4(t.pid, &status, 0, &ru), t.pid);
	kids[0] = 0;
	monitor_exited(m, t.pid, &ru);
	monitor_exited(m, t.pid + 100000, &ru); /* not watched: ignored */
	monitor_exited(NULL, t.pid, &ru);
	sleep_ms(100); /* its pid is gone from /proc now */
	monitor_stop(m);
	truth_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	          (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	r = role0();
	ck_assert_uint_eq(monitor_nsamples(m), 2);
	ck_assert_msg(r.user_s + r.sys_s <= truth_s + 0.02 && r.user_s + r.sys_s >= truth_s - 0.06,
	              "monitor %.3fs, kernel %.3fs", r.user_s + r.sys_s, truth_s);
	ck_assert_uint_ge(r.rss_peak_bytes, (uint64_t)ru.ru_maxrss * 1024);
}
END_TEST

/* An exited child not reaped yet (a zombie) still gives its CPU times. */
START_TEST(test_monitor_zombie_child)
{
	struct monitor_target t = {"worker", 0, child(SPIN_THEN_EXIT)};
	struct monitor_role_sum r;
	double truth_s;

	ck_assert_int_eq(monitor_new(&m, &t, 1, 10000000000ull, 0), 0);
	ck_assert_int_eq(monitor_start(m), 0);
	sleep_ms(700); /* it spins for 400 ms of wall time and exits */
	monitor_stop(m);
	truth_s = reap_cpu_s(t.pid);
	r = role0();
	ck_assert_msg(r.user_s + r.sys_s <= truth_s + 0.02 && r.user_s + r.sys_s >= truth_s - 0.06,
	              "monitor %.3fs, kernel %.3fs", r.user_s + r.sys_s, truth_s);
}
END_TEST

/* A series packed and unpacked keeps its totals (first and last samples
 * are always among those kept), at most MONITOR_PACK_SAMPLES of them; two
 * of them merged keep each process's own figures; every cut or changed
 * magic is refused. */
START_TEST(test_monitor_pack_merge)
{
	struct monitor_target a = {"worker", 0, child(SPIN)}, b = {"worker", 1, child(IDLE)};
	struct monitor *mb = NULL, *ua = NULL, *ub = NULL, *host = NULL, *bad = NULL;
	const struct monitor *parts[2];
	struct monitor_role_sum r0, r1, rh;
	static unsigned char buf[MONITOR_PACK_MAX], bufb[MONITOR_PACK_MAX];
	long n, nb;

	ck_assert_int_eq(monitor_new(&m, &a, 1, 1000000, 0), 0);
	ck_assert_int_eq(monitor_new(&mb, &b, 1, 1000000, 0), 0);
	for (int i = 0; i < 100; i++) {
		monitor_sample(m);
		monitor_sample(mb);
		sleep_ms(2);
	}
	n = monitor_pack(m, buf, sizeof buf);
	nb = monitor_pack(mb, bufb, sizeof bufb);
	ck_assert_int_gt(n, 0);
	ck_assert_int_gt(nb, 0);
	ck_assert_int_eq(monitor_pack(m, buf, 40), -ENOSPC);
	ck_assert_int_eq(monitor_unpack(buf, (size_t)n, &ua), 0);
	ck_assert_int_eq(monitor_unpack(bufb, (size_t)nb, &ub), 0);
	ck_assert_uint_eq(monitor_nsamples(ua), MONITOR_PACK_SAMPLES);
	ck_assert_double_eq_tol(monitor_span_s(ua), monitor_span_s(m), 1e-9);
	r0 = role0();
	ck_assert_uint_eq(monitor_roles(ua, &r1, 1), 1);
	ck_assert_double_eq_tol(r0.user_s + r0.sys_s, r1.user_s + r1.sys_s, 1e-9);
	ck_assert_uint_eq(r0.vcsw, r1.vcsw);
	ck_assert_double_gt(r1.user_s + r1.sys_s, 0);

	parts[0] = ua;
	parts[1] = ub;
	ck_assert_int_eq(monitor_merge(parts, 2, &host), 0);
	ck_assert_uint_eq(monitor_roles(host, &rh, 1), 1);
	ck_assert_uint_eq(rh.procs, 2);
	monitor_roles(ub, &r0, 1);
	ck_assert_double_eq_tol(rh.user_s + rh.sys_s, r1.user_s + r1.sys_s + r0.user_s + r0.sys_s,
	                        1e-9);
	ck_assert_int_eq(monitor_pack(host, buf, sizeof buf), -EINVAL); /* merged */

	for (long cut = 0; cut < n; cut += 7)
		ck_assert_int_eq(monitor_unpack(buf, (size_t)cut, &bad), -EPROTO);
	n = monitor_pack(m, buf, sizeof buf);
	buf[0] ^= 1;
	ck_assert_int_eq(monitor_unpack(buf, (size_t)n, &bad), -EPROTO);
	ck_assert_ptr_null(bad);
	monitor_free(host);
	monitor_free(ua);
	monitor_free(ub);
	monitor_free(mb);
}
END_TEST

/* A version 2 series of one process as version 1 would have packed it:
 * without its samples' syscr and syscw (16 bytes before the flags). */
static size_t pack_as_v1(const unsigned char *in, size_t len, unsigned char *out)
{
	size_t at = 32, o, nif, n;

	ck_assert_uint_eq(in[31], 1); /* one process */
	at += 2 + ((size_t)in[at] << 8 | in[at + 1]) + 8;
	nif = (size_t)in[at + 2] << 8 | in[at + 3];
	at += 4;
	for (size_t i = 0; i < nif; i++)
		at += 2 + ((size_t)in[at] << 8 | in[at + 1]);
	n = (size_t)in[at + 2] << 8 | in[at + 3];
	at += 4;
	memcpy(out, in, at);
	out[7] = 1;
	o = at;
	for (size_t k = 0; k < n; k++) {
		memcpy(out + o, in + at, 8 + 64); /* time, utime .. wchar */
		o += 72;
		at += 72 + 16;
		out[o++] = in[at++] & 3;
		memcpy(out + o, in + at, nif * 32);
		o += nif * 32;
		at += nif * 32;
	}
	ck_assert_uint_eq(at, len);
	return o;
}

/* This process's read- and write-class system calls (/proc/PID/io syscr,
 * syscw) over a window of known writes and reads: counted, per call in
 * JSON and text, kept by a packed series, unknown (null) from a version 1
 * series and per call without calls. */
START_TEST(test_monitor_syscalls)
{
	struct monitor_target t = {"worker", 0, getpid()};
	struct monitor *u = NULL;
	struct monitor_role_sum r, ru;
	static unsigned char buf[MONITOR_PACK_MAX], v1[MONITOR_PACK_MAX];
	char c = 0, *out = NULL;
	struct jsonr jr;
	int done = 0;
	double v;
	size_t len;
	long n;
	int fd = open("/dev/null", O_RDWR);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(monitor_new(&m, &t, 1, 1000000000, 0), 0);
	monitor_sample(m);
	/* no check between the sample (each writes to check's pipe) */
	for (int i = 0; i < 300; i++)
		done += write(fd, &c, 1) == 1;
	for (int i = 0; i < 40; i++)
		done += read(fd, &c, 1) == 0;
	for (int i = 0; i < 20; i++) /* its own reads of /proc are not counted */
		monitor_sample(m);
	monitor_stop(m);
	close(fd);
	ck_assert_int_eq(done, 340);
	ck_assert_uint_eq(monitor_roles(m, &r, 1), 1);
	ck_assert_int_eq(r.sys_known, 1);
	ck_assert_uint_ge(r.syscw, 300);
	ck_assert_uint_lt(r.syscw, 400);
	ck_assert_uint_ge(r.syscr, 40);
	ck_assert_uint_lt(r.syscr, 100);

	out = json_of(100, 0, &len);
	ck_assert_int_eq(jsonr_load(&jr, out, len), 0);
	ck_assert_int_eq(jsonr_get_num(&jr, "resources.summary.roles.0.syscw_per_rpc", &v), 0);
	ck_assert_double_ge(v, 3.0);
	ck_assert_double_lt(v, 4.0);
	ck_assert_int_eq(jsonr_get_num(&jr, "resources.summary.roles.0.syscr_per_rpc", &v), 0);
	ck_assert_double_ge(v, 0.4);
	ck_assert_int_eq(jsonr_get_num(&jr, "resources.summary.roles.0.csw_per_rpc", &v), 0);
	ck_assert_double_ge(v, 0);
	jsonr_free(&jr);
	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	monitor_text(m, f, 100, 0, 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(out, "#   worker, all threads: "));
	ck_assert_ptr_nonnull(strstr(out, " per RPC), write-class "));
	free(out);

	n = monitor_pack(m, buf, sizeof buf);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(monitor_unpack(buf, (size_t)n, &u), 0);
	monitor_roles(u, &ru, 1);
	ck_assert_int_eq(ru.sys_known, 1);
	ck_assert_uint_eq(ru.syscw, r.syscw);
	ck_assert_uint_eq(ru.syscr, r.syscr);
	monitor_free(u);
	u = NULL;
	len = pack_as_v1(buf, (size_t)n, v1);
	ck_assert_int_eq(monitor_unpack(v1, len, &u), 0);
	monitor_roles(u, &ru, 1);
	ck_assert_int_eq(ru.sys_known, 0);
	ck_assert_uint_eq(ru.vcsw, r.vcsw);
	{ /* json_of writes m */
		struct monitor *keep = m;
		m = u;
		out = json_of(100, 0, &len);
		m = keep;
	}
	ck_assert_int_eq(jsonr_load(&jr, out, len), 0);
	ck_assert_int_eq(jsonr_type(&jr, jsonr_find(&jr, 0, "resources.summary.roles.0.syscw")),
	                 JSONR_NULL);
	ck_assert_int_eq(jsonr_type(&jr, jsonr_find(&jr, 0, "resources.summary.roles.0.syscr_per_rpc")),
	                 JSONR_NULL);
	jsonr_free(&jr);
	free(out);
	monitor_free(u);
}
END_TEST

Suite *make_monitor_suite(void)
{
	Suite *s = suite_create("monitor");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_checked_fixture(tc_core, monitor_setup, monitor_teardown);
	tcase_set_timeout(tc_core, 20);
	tcase_add_test(tc_core, test_monitor_busy_child);
	tcase_add_test(tc_core, test_monitor_idle_child);
	tcase_add_test(tc_core, test_monitor_json);
	tcase_add_test(tc_core, test_monitor_csv_text);
	tcase_add_test(tc_core, test_monitor_select);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_limits, monitor_setup, monitor_teardown);
	tcase_set_timeout(tc_limits, 20);
	tcase_add_test(tc_limits, test_monitor_thinning);
	tcase_add_test(tc_limits, test_monitor_ring_window);
	tcase_add_test(tc_limits, test_monitor_server_self);
	tcase_add_test(tc_limits, test_monitor_rss);
	tcase_add_test(tc_limits, test_monitor_ctx_switches);
	tcase_add_test(tc_limits, test_monitor_ctx_switches_threads);
	tcase_add_test(tc_limits, test_monitor_net_loopback);
	tcase_add_test(tc_limits, test_monitor_pack_merge);
	tcase_add_test(tc_limits, test_monitor_syscalls);
	suite_add_tcase(s, tc_limits);

	tcase_add_checked_fixture(tc_errors, monitor_setup, monitor_teardown);
	tcase_set_timeout(tc_errors, 20);
	tcase_add_test(tc_errors, test_monitor_bad_arguments);
	tcase_add_test(tc_errors, test_monitor_gone_process);
	tcase_add_test(tc_errors, test_monitor_reaped_child);
	tcase_add_test(tc_errors, test_monitor_zombie_child);
	suite_add_tcase(s, tc_errors);
	return s;
}
