/* fuzz_result.c - libFuzzer target for the worker result blob (src/engine/wresult.c),
 * the bytes a worker hands the control service and the aggregating worker
 * decodes (cmd_throughput.c's agg_add).
 *
 * Input: a blob.  Checks, with the blob copied to a buffer of its exact
 * size so that ASan sees any read past it:
 *   - wresult_decode is deterministic and, on failure, returns -1;
 *   - what decodes is sane: host, err, the allocator and placement
 *     strings NUL-terminated within their arrays, end a valid enum
 *     engine_end, nps <= RESULT_PS_MAX, nivl <= RESULT_IVL_MAX with each
 *     interval's start <= end, a series (mon_len > 0) that unpacks, each
 *     histogram's (latencies, service times) buckets add up to its count,
 *     min <= max when count > 0, nruns <= RESULT_RUNS_MAX;
 *   - it encodes (wresult_encode) within RESULT_BLOB_MAX, the encoding
 *     decodes to the same result, and encoding that again gives the same
 *     bytes (the encoding is canonical);
 *   - what the aggregator then does with it is memory- and UB-safe:
 *     stats_merge into a running sum, quantiles, mean, stddev.
 * Build and run: tests/fuzz/run.sh result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wresult.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "fuzz_result: %s\n", #x); __builtin_trap(); } } while (0)

static struct wresult r1, r2, r3;
static struct stats sum;
static unsigned char enc1[RESULT_BLOB_MAX], enc2[RESULT_BLOB_MAX];

static int same_result(const struct wresult *a, const struct wresult *b)
{
	return a->worker == b->worker && a->pid == b->pid && !strcmp(a->host, b->host) &&
	       a->end == b->end && !strcmp(a->err.msg, b->err.msg) && a->calls == b->calls &&
	       a->errors == b->errors && a->warmup_calls == b->warmup_calls &&
	       a->bytes == b->bytes && a->window_ns == b->window_ns && a->offered == b->offered &&
	       a->warmup_ns == b->warmup_ns && a->missed == b->missed && a->nps == b->nps &&
	       !memcmp(a->ps_calls, b->ps_calls, a->nps * sizeof a->ps_calls[0]) &&
	       a->train == b->train && a->barriers == b->barriers &&
	       a->barrier_wait_ns == b->barrier_wait_ns &&
	       (!a->train || (!memcmp(a->ps_sent, b->ps_sent, a->nps * sizeof a->ps_sent[0]) &&
	                      !memcmp(a->ps_recv, b->ps_recv, a->nps * sizeof a->ps_recv[0]))) &&
	       !memcmp(&a->lat, &b->lat, sizeof a->lat) &&
	       !memcmp(&a->svc, &b->svc, sizeof a->svc) && a->nruns == b->nruns &&
	       !memcmp(a->runs, b->runs, a->nruns * sizeof a->runs[0]) &&
	       a->mon_len == b->mon_len && !memcmp(a->mon, b->mon, a->mon_len) &&
	       !strcmp(a->alloc, b->alloc) && !strcmp(a->alloc_version, b->alloc_version) &&
	       !strcmp(a->place.cpus, b->place.cpus) &&
	       !strcmp(a->place.mempolicy, b->place.mempolicy) &&
	       !memcmp(&a->res, &b->res, sizeof a->res) && a->nivl == b->nivl &&
	       a->tc.known == b->tc.known && a->tc.sockets == b->tc.sockets &&
	       a->tc.calls == b->tc.calls && !memcmp(a->tc.v, b->tc.v, sizeof a->tc.v) &&
	       !strcmp(a->tc.source, b->tc.source) && !strcmp(a->tc.why, b->tc.why) &&
	       a->ivl_dropped == b->ivl_dropped &&
	       !memcmp(a->ivl, b->ivl, a->nivl * sizeof a->ivl[0]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	stats_init(&sum);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *buf = malloc(size ? size : 1);
	uint64_t total = 0;
	long n1, n2;
	int rc;

	CHECK(buf);
	memcpy(buf, data, size);
	rc = wresult_decode(&r1, buf, size);
	CHECK(rc == 0 || rc == -1);
	CHECK(wresult_decode(&r2, buf, size) == rc);
	free(buf);
	if (rc < 0)
		return 0;

	CHECK(memchr(r1.host, 0, sizeof r1.host) && memchr(r1.err.msg, 0, sizeof r1.err.msg));
	CHECK(r1.end >= ENGINE_DONE && r1.end <= ENGINE_FAILED);
	CHECK(r1.nps <= RESULT_PS_MAX);
	CHECK(r1.nruns <= RESULT_RUNS_MAX);
	CHECK(memchr(r1.alloc, 0, sizeof r1.alloc) &&
	      memchr(r1.alloc_version, 0, sizeof r1.alloc_version));
	CHECK(memchr(r1.place.cpus, 0, sizeof r1.place.cpus) &&
	      memchr(r1.place.mempolicy, 0, sizeof r1.place.mempolicy));
	CHECK(r1.nivl <= RESULT_IVL_MAX && r1.mon_len <= MONITOR_PACK_MAX);
	for (uint32_t i = 0; i < r1.nivl; i++)
		CHECK(r1.ivl[i].start_ns <= r1.ivl[i].end_ns);
	if (r1.mon_len) {
		struct monitor *m = NULL;
		CHECK(monitor_unpack(r1.mon, r1.mon_len, &m) == 0 && m);
		monitor_free(m);
	}
	for (unsigned i = 0; i < STATS_BUCKETS; i++) {
		CHECK(r1.lat.bucket[i] <= UINT64_MAX - total);
		total += r1.lat.bucket[i];
	}
	CHECK(total == r1.lat.count);
	CHECK(!r1.lat.count || r1.lat.min_ns <= r1.lat.max_ns);
	total = 0;
	for (unsigned i = 0; i < STATS_BUCKETS; i++) {
		CHECK(r1.svc.bucket[i] <= UINT64_MAX - total);
		total += r1.svc.bucket[i];
	}
	CHECK(total == r1.svc.count);
	CHECK(!r1.svc.count || r1.svc.min_ns <= r1.svc.max_ns);
	CHECK(same_result(&r1, &r2));

	n1 = wresult_encode(&r1, enc1, sizeof enc1);
	CHECK(n1 > 0 && (size_t)n1 <= RESULT_BLOB_MAX);
	CHECK(wresult_decode(&r3, enc1, (size_t)n1) == 0);
	CHECK(same_result(&r1, &r3));
	n2 = wresult_encode(&r3, enc2, sizeof enc2);
	CHECK(n2 == n1 && !memcmp(enc1, enc2, (size_t)n1));
	/* a blob cut short never decodes */
	if (n1 > 0)
		CHECK(wresult_decode(&r3, enc1, (size_t)n1 - 1) == -1);

	/* the aggregator's use of it */
	if (sum.count > UINT64_MAX - r1.lat.count)
		stats_init(&sum);
	stats_merge(&sum, &r1.lat);
	for (int q = 0; q <= 100; q += 25)
		(void)stats_quantile(&r1.lat, q / 100.0);
	(void)stats_quantile(&r1.lat, 0.999);
	(void)stats_quantile(&sum, 0.5);
	(void)stats_mean(&r1.lat);
	(void)stats_stddev(&r1.lat);
	return 0;
}
