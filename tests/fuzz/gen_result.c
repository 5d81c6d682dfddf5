/* gen_result.c - writes the seeds of the current result blob version into
 * tests/fuzz/corpus/result/ (file names v<N>_*), made by the real code:
 * figures from stats_record and wresult_from_engine, the worker's own
 * resource use from getrusage (wresult_res_of), its resource series from a
 * monitor sampling this process (monitor_pack), all encoded by
 * wresult_encode.  The older seeds stay in the corpus as inputs the
 * decoder must refuse (tests/check_result.c checks both).
 *
 * Build and run from the top of the tree when RESULT_VERSION changes:
 *   cc -Isrc/base -Isrc/job -Isrc/host -Isrc/payload -Isrc/transport -Isrc/engine -o /tmp/gen_result tests/fuzz/gen_result.c \
 *      src/engine/wresult.c src/transport/tr_counters.c src/base/stats.c src/base/bebuf.c \
 *      src/host/monitor.c \
 *      src/host/monitor_pack.c src/host/tcpbytes.c src/base/util.c src/base/err.c \
 *      -lm -lpthread && /tmp/gen_result tests/fuzz/corpus/result
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "wresult.h"

static struct wresult r;
static unsigned char blob[RESULT_BLOB_MAX];

static void spin_ms(long ms)
{
	struct timespec t0, t;
	volatile unsigned long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* An engine result of `calls` calls (latencies 50-150 us) over 1 s on nps
 * connections, nruns runs, as a worker's report of it. */
static void figures(uint64_t calls, uint32_t nps, uint32_t nruns, int open_loop)
{
	struct engine_result e = {0};
	uint64_t conn_calls[4] = {0};
	struct engine_run_fig runs[3] = {{0}};

	stats_init(&e.lat);
	stats_init(&e.svc);
	for (uint64_t i = 0; i < calls; i++) {
		stats_record(&e.lat, 50000 + (i * 7919) % 100000);
		if (open_loop)
			stats_record(&e.svc, 40000 + (i * 104729) % 60000);
		conn_calls[i % nps]++;
	}
	e.calls = calls;
	e.bytes = calls * 3176488;
	e.warmup_calls = calls / 10;
	e.warmup_ns = 200000000;
	e.window_ns = 1000000000;
	e.conn_calls = conn_calls;
	e.offered = open_loop ? calls + calls / 4 : 0;
	e.missed = open_loop ? calls / 8 : 0;
	for (uint32_t k = 0; k < nruns; k++) {
		runs[k] = (struct engine_run_fig){
			.calls = calls / nruns + (k == 0 ? calls % nruns : 0), .window_ns = 1000000000 / nruns,
			.lat_count = calls / nruns + (k == 0 ? calls % nruns : 0),
			.lat_sum_ns = e.lat.sum_ns / nruns + (k == 0 ? e.lat.sum_ns % nruns : 0)};
		runs[k].bytes = runs[k].calls * 3176488;
	}
	e.runs = runs;
	e.nruns = nruns;
	/* gRPC's channelz counters of a run: one stream and one message each
	 * way per call, the windows not known */
	e.tc = (struct tr_counters){.known = 0x3f, .sockets = nps, .calls = calls + calls / 10,
	                            .v = {calls + calls / 10, calls + calls / 10, 0,
	                                  calls + calls / 10, calls + calls / 10, 0},
	                            .source = "channelz",
	                            .why = "flow-control windows: not reported"};
	wresult_from_engine(&r, 3, &e, nps);
	snprintf(r.alloc, sizeof r.alloc, "glibc");
	snprintf(r.alloc_version, sizeof r.alloc_version, "2.41");
	snprintf(r.place.cpus, sizeof r.place.cpus, "0-1");
	snprintf(r.place.mempolicy, sizeof r.place.mempolicy, "default");
}

/* Intervals of 250 ms over the window, as --interval keeps them. */
static void intervals(uint32_t n)
{
	r.nivl = n;
	for (uint32_t i = 0; i < n; i++)
		r.ivl[i] = (struct engine_ivl_fig){
			.worker = r.worker, .index = i, .start_ns = i * 250000000ull,
			.end_ns = (i + 1) * 250000000ull, .calls = r.calls / n, .bytes = r.bytes / n,
			.lat_count = r.lat.count / n, .lat_sum_ns = r.lat.sum_ns / n, .p50_ns = 100000,
			.p99_ns = 148000,
			.max_ns = 150000};
}

/* This process's resource use and series over about 300 ms of work. */
static int resources(void)
{
	struct monitor_target t = {"worker", 3, getpid()};
	struct monitor *m = NULL;
	struct rusage a, b;
	long n;

	getrusage(RUSAGE_SELF, &a);
	if (monitor_new(&m, &t, 1, 20000000, 0) < 0 || monitor_start(m) < 0)
		return -1;
	spin_ms(300);
	monitor_stop(m);
	getrusage(RUSAGE_SELF, &b);
	wresult_res_of(&r.res, &a, &b, 300000000);
	n = monitor_pack(m, r.mon, sizeof r.mon);
	monitor_free(m);
	if (n < 0)
		return -1;
	r.mon_len = (uint32_t)n;
	return 0;
}

static int put(const char *dir, const char *name)
{
	char path[512];
	long n = wresult_encode(&r, blob, sizeof blob);
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (n < 0 || !(f = fopen(path, "wb")) || fwrite(blob, 1, (size_t)n, f) != (size_t)n ||
	    fclose(f) != 0) {
		fprintf(stderr, "gen_result: cannot write '%s'\n", path);
		return -1;
	}
	printf("%s: %ld bytes\n", path, n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/fuzz/corpus/result";
	int bad = 0;

	/* a closed loop on one PS, its series and intervals */
	figures(5000, 1, 1, 0);
	intervals(4);
	if (resources() < 0) {
		fprintf(stderr, "gen_result: cannot sample this process\n");
		return 1;
	}
	bad |= put(dir, "v11_series_intervals");
	/* an open loop over two PSs, three runs, resources without a series */
	figures(3000, 2, 3, 1);
	r.mon_len = 0;
	bad |= put(dir, "v11_open_loop_runs");
	/* a failed worker: nothing measured, its error and host */
	figures(0, 1, 1, 0);
	r.end = ENGINE_FAILED;
	snprintf(r.host, sizeof r.host, "node-17.cluster.example");
	err_set(&r.err, "PS 0 (127.0.0.1:50051): no reply for 10.0s with 4 calls outstanding");
	r.alloc[0] = r.alloc_version[0] = 0;
	bad |= put(dir, "v11_failed");
	/* a training worker over two PSs: its bytes each way, its barriers, those
	 * it was the last one in and the delay put in on it */
	figures(200, 2, 1, 0);
	r.train = 1;
	for (uint32_t i = 0; i < r.nps; i++) {
		r.ps_calls[i] = 0;
		r.ps_sent[i] = 4000000ull * (i + 1);
		r.ps_recv[i] = 4000000ull * (i + 1) + 17;
	}
	r.barriers = 201;
	r.barrier_wait_ns = 3500000;
	r.closing = 199; /* of the 200 measured steps, the barriers after the first 199 */
	r.last_in = 190;
	r.injected_ns = 2000000000ull;
	/* and the timeline of its first three steps over its two PSs */
	r.zero_ns = 5000000000ull;
	r.nmarks = 3;
	r.mark_conns = 2;
	r.marks_dropped = 197;
	for (uint32_t k = 0; k < 3; k++) {
		uint64_t t = r.zero_ns + 1000000ull * (k + 1) * 10;
		r.marks[k] = (struct step_mark){t, t + 100000, t + 2000000, t + 3000000, t + 5000000};
		for (uint32_t c = 0; c < 2; c++) {
			r.conn_end[(2 * k) * 2 + c] = t + 1000000 + c * 1000000;
			r.conn_end[(2 * k + 1) * 2 + c] = t + 4000000 + c * 1000000;
		}
	}
	bad |= put(dir, "v11_train");
	return bad ? 1 : 0;
}
