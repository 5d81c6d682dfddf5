/* check_plot.c - tfgb plot's reading of results (plot_read.c) and its
 * gnuplot script (plot_gp.c): CSV with the real header, sweeps, repeats,
 * null figures, and text that must not break the script or the SVG. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "plot.h"
#include "plot_fig.h"
#include "report.h"

static struct plot_set set;
static char path[64];
static struct err err;

static void plot_teardown(void)
{
	plot_set_free(&set);
	set.hist = 0;
	if (*path)
		unlink(path);
	path[0] = 0;
}

/* Writes text to a fresh file (path) and reads it into set as file 0. */
static int read_text(const char *text)
{
	FILE *f;
	int fd;

	if (*path)
		unlink(path);
	snprintf(path, sizeof path, "/tmp/check_plot.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	err.msg[0] = 0;
	return plot_read(&set, path, 0, &err);
}

/* The gnuplot script of fig (to free). */
static char *gp_text(const struct plot_fig *fig, const struct plot_set *s, const char *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	plot_gp_script(fig, s, out, 0, f);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

START_TEST(test_plot_csv_sweep)
{
	/* a sweep's CSV: the swept key, then the benchmark's own header; the
	 * last row measured nothing (empty figures), the mode is quoted */
	ck_assert_int_eq(read_text("payload.size," REPORT_CSV_HEADER "\n"
	                           "1024,latency,grpc,\"non,serialized\",custom,1,1024,1,0.1,0.2,"
	                           "10,0,1,40.5,40,41,42,43,44,1,5000,5.1,4.9,,,,ok\n"
	                           "65536,latency,grpc,\"non,serialized\",custom,1,65536,1,0.1,0.2,"
	                           "0,0,,,,,,,,,,,,,,,empty\n"), 0);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_str_eq(set.pt[0].sweep_key, "payload.size");
	ck_assert_str_eq(set.pt[0].sweep_unit, "B");
	ck_assert_str_eq(set.pt[0].key[PK_SWEEP], "1024");
	ck_assert_str_eq(set.pt[1].key[PK_SWEEP], "65536");
	ck_assert_str_eq(set.pt[0].key[PK_MODE], "non,serialized");
	ck_assert_str_eq(set.pt[0].bench, "latency");
	ck_assert(fabs(set.pt[0].y[PM_AVG] - 40.5) < 1e-9);
	ck_assert(fabs(set.pt[0].y[PM_GBPS] - 5.1 * 0.008) < 1e-9);
	ck_assert_str_eq(set.pt[1].status, "empty");
	/* null is no figure, never 0 */
	ck_assert(isnan(set.pt[1].y[PM_AVG]));
	ck_assert(isnan(set.pt[1].y[PM_MBPS]));
	ck_assert_uint_eq(set.pt[0].runs, 0);
}
END_TEST

START_TEST(test_plot_csv_runs)
{
	/* runs' CSV one after another, each with its header; the second a
	 * repeat with its spread columns */
	ck_assert_int_eq(read_text(REPORT_CSV_HEADER "\n"
	                           "bandwidth,socket,non-serialized,uniform,10,3176488,16,0.1,1,"
	                           "5,0,1,2,2,3,4,5,6,1,100,317.6,302.9,,,,ok\n"
	                           REPORT_CSV_HEADER ",runs,avg_us_mean,avg_us_stddev\n"
	                           "bandwidth,grpc,non-serialized,skew,10,9000000,16,0.1,1,"
	                           "5,0,1,2,2,3,4,5,6,1,100,900,858,,,,saturated,3,2.5,0.5\n"), 0);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_str_eq(set.pt[0].key[PK_SWEEP], "");
	ck_assert_str_eq(set.pt[0].sweep_key, "");
	ck_assert_str_eq(set.pt[1].key[PK_TRANSPORT], "grpc");
	ck_assert_str_eq(set.pt[1].status, "saturated");
	ck_assert_uint_eq(set.pt[1].runs, 3);
	ck_assert(fabs(set.pt[1].mean[PM_AVG] - 2.5) < 1e-9);
	ck_assert(fabs(set.pt[1].sd[PM_AVG] - 0.5) < 1e-9);
	ck_assert(isnan(set.pt[1].min[PM_AVG])); /* a CSV has no runs' extremes */
	ck_assert_uint_eq(set.pt[0].runs, 0);
}
END_TEST

#define RESULT(extra) \
	"{\"schema_version\": 1, \"tfgb\": {\"version\": \"x\"}, \"benchmark\": \"throughput\"," \
	" \"transport\": \"grpc\", \"mode\": \"non-serialized\", \"tls\": false," \
	" \"payload\": {\"scheme\": \"skew\", \"iovecs\": 10, \"bytes\": 123}," \
	" \"inflight\": 1, \"throughput\": {\"rpc\": \"push\", \"ps_count\": 2, \"workers\": 3}," \
	" \"latency_us\": null, \"rpc_per_s\": 70.5, \"MBps\": null, \"status\": \"ok\"," \
	extra " \"job\": \"[job]\\n\"}"

START_TEST(test_plot_json_result)
{
	ck_assert_int_eq(read_text(RESULT(" \"repeat\": {\"runs\": 3, \"figures\": {\"rpc_per_s\":"
	                                  " {\"mean\": 70, \"stddev\": 10}}, \"per_run\": ["
	                                  "{\"rpc_per_s\": 60}, {\"rpc_per_s\": 82.5},"
	                                  " {\"rpc_per_s\": 67.5}]},")), 0);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_str_eq(set.pt[0].key[PK_SHAPE], "2x3");
	ck_assert_str_eq(set.pt[0].key[PK_TLS], "plaintext");
	ck_assert_str_eq(set.pt[0].key[PK_RPC], "push");
	ck_assert_str_eq(set.pt[0].key[PK_BYTES], "123");
	ck_assert(isnan(set.pt[0].y[PM_AVG]));  /* "latency_us": null */
	ck_assert(isnan(set.pt[0].y[PM_MBPS])); /* null */
	ck_assert_uint_eq(set.pt[0].runs, 3);
	ck_assert(fabs(set.pt[0].mean[PM_RPC] - 70) < 1e-9);
	ck_assert(fabs(set.pt[0].min[PM_RPC] - 60) < 1e-9);
	ck_assert(fabs(set.pt[0].max[PM_RPC] - 82.5) < 1e-9);
	/* the file's name without directory and ending */
	ck_assert_str_eq(set.pt[0].key[PK_FILE], path + 5);
}
END_TEST

#define COLL_ROW(bytes, busbw) \
	"{\"bytes\": " bytes ", \"count\": 2, \"type\": \"float32\", \"iterations\": 20," \
	" \"time_us\": {\"p50\": 70.5, \"p99\": 94.5, \"mean\": 73.25, \"min\": 69, \"max\": 95}," \
	" \"algbw_GBps\": 0.0001, \"busbw_GBps\": " busbw ", \"verified\": 2, \"wrong\": 0}"
#define COLL(rows) \
	"{\"schema_version\": 1, \"tfgb\": {\"version\": \"x\"}, \"benchmark\": \"collective\"," \
	" \"transport\": \"socket\", \"collective\": {\"op\": \"allgather\", \"algorithm\": \"rhd\"," \
	" \"ranks\": 3, \"reduction\": \"sum\", \"bus_factor\": 0.666667, \"sizes\": [" rows "]}," \
	" \"status\": \"ok\", \"error\": null, \"environment\": {\"hostname\": \"h1\"}," \
	" \"job\": \"[job]\\n\"}"

/* A collective: a point per size, its figures where plot's metrics are,
 * what it does not record NAN; a figure that is a string refused with
 * its row named. */
START_TEST(test_plot_coll_read)
{
	ck_assert_int_eq(read_text(COLL(COLL_ROW("8", "0.000145") ", " COLL_ROW("64", "0.5"))), 0);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_str_eq(set.pt[0].bench, "collective");
	ck_assert_str_eq(set.pt[0].key[PK_OP], "allgather");
	ck_assert_str_eq(set.pt[0].key[PK_ALG], "rhd");
	ck_assert_str_eq(set.pt[0].key[PK_WORKERS], "3");
	ck_assert_str_eq(set.pt[0].key[PK_HOST], "h1");
	ck_assert_str_eq(set.pt[1].key[PK_BYTES], "64");
	ck_assert(fabs(set.pt[0].y[PM_BUSBW] - 0.000145) < 1e-12);
	ck_assert(fabs(set.pt[1].y[PM_BUSBW] - 0.5) < 1e-12);
	ck_assert(fabs(set.pt[0].y[PM_ALGBW] - 0.0001) < 1e-12);
	ck_assert(fabs(set.pt[0].y[PM_AVG] - 73.25) < 1e-9);
	ck_assert(fabs(set.pt[0].y[PM_P50] - 70.5) < 1e-9);
	ck_assert(fabs(set.pt[0].y[PM_P99] - 94.5) < 1e-9);
	ck_assert(isnan(set.pt[0].y[PM_P90]) && isnan(set.pt[0].y[PM_RPC]));
	ck_assert(set.pt[0].count == 20);
	ck_assert_str_eq(set.pt[0].count_what, "operations");
	plot_set_free(&set);
	ck_assert_int_eq(read_text(COLL(COLL_ROW("8", "0.1") ", " COLL_ROW("64", "\"0.5\""))), -1);
	ck_assert_msg(strstr(err.msg, "collective.sizes[1]") && strstr(err.msg, "busbw_GBps"), "%s",
	              err.msg);
	ck_assert_int_eq(read_text(COLL("")), -1);
	ck_assert_msg(strstr(err.msg, "no \"collective.sizes\" rows"), "%s", err.msg);
}
END_TEST

/* The all-reduce strategy: one point, its step time in us as a PS
 * result's latency_us, the strategy with its algorithm. */
START_TEST(test_plot_allreduce_read)
{
	ck_assert_int_eq(read_text("{\"schema_version\": 1, \"benchmark\": \"train\", \"transport\":"
	                           " \"socket\", \"train\": {\"strategy\": \"allreduce\", \"algorithm\":"
	                           " \"ring\", \"model\": \"m\", \"workers\": 4, \"steps\": 7,"
	                           " \"step_ms\": {\"p50\": 1.5, \"p99\": 2.25, \"mean\": 1.625,"
	                           " \"min\": 1, \"max\": 3}, \"algbw_GBps\": 1, \"busbw_GBps\": 1.5},"
	                           " \"status\": \"ok\", \"job\": \"\"}"), 0);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_str_eq(set.pt[0].key[PK_STRATEGY], "allreduce, ring");
	ck_assert_str_eq(set.pt[0].key[PK_MODEL], "m");
	ck_assert_str_eq(set.pt[0].key[PK_WORKERS], "4");
	ck_assert(fabs(set.pt[0].y[PM_AVG] - 1625) < 1e-9);
	ck_assert(fabs(set.pt[0].y[PM_P99] - 2250) < 1e-9);
	ck_assert(fabs(set.pt[0].y[PM_BUSBW] - 1.5) < 1e-12);
	ck_assert(isnan(set.pt[0].y[PM_RPC]));
	ck_assert(set.pt[0].count == 7);
	ck_assert_str_eq(set.pt[0].count_what, "steps");
	/* no link: as a PS result without one */
	ck_assert_str_eq(set.pt[0].key[PK_DELAY], "");
	ck_assert_str_eq(set.pt[0].key[PK_RATE], "0");
	plot_set_free(&set);
	/* a switch's link: named as a PS result's is */
	ck_assert_int_eq(read_text("{\"schema_version\": 1, \"benchmark\": \"train\", \"train\":"
	                           " {\"strategy\": \"allreduce\", \"algorithm\": \"ring\"},"
	                           " \"network\": {\"configured\": {\"delay_ms\": 1.0,"
	                           " \"rate_bps\": 100000000, \"loss_pct\": 0.0, \"congestion\":"
	                           " \"system\"}, \"mechanism\": {\"route\": \"tun\"}},"
	                           " \"status\": \"ok\", \"job\": \"\"}"), 0);
	ck_assert_str_eq(set.pt[0].key[PK_DELAY], "1");
	ck_assert_str_eq(set.pt[0].key[PK_RATE], "1e+08");
	ck_assert_str_eq(set.pt[0].route, "tun");
	plot_set_free(&set);
	/* a PS strategy that names itself is read as every PS result; an
	 * unknown one is refused */
	ck_assert_int_eq(read_text("{\"schema_version\": 1, \"benchmark\": \"train\", \"train\":"
	                           " {\"strategy\": \"ps\"}, \"latency_us\": {\"avg\": 5},"
	                           " \"status\": \"ok\", \"job\": \"\"}"), 0);
	ck_assert_str_eq(set.pt[0].key[PK_STRATEGY], "ps");
	ck_assert(fabs(set.pt[0].y[PM_AVG] - 5) < 1e-12);
	ck_assert_int_eq(read_text("{\"schema_version\": 1, \"benchmark\": \"train\", \"train\":"
	                           " {\"strategy\": \"gossip\"}, \"status\": \"ok\", \"job\": \"\"}"),
	                 -1);
	ck_assert_msg(strstr(err.msg, "\"gossip\" is none tfgb plot knows"), "%s", err.msg);
}
END_TEST

/* More sizes than tics (8 B to 128 MiB by 2: 25): a tic every second
 * size, from the smallest, as sizes. */
START_TEST(test_plot_gp_many_tics)
{
	static struct plot_fig fig;
	struct plot_item items[25];
	struct plot_point pts[25] = {{.status = "ok"}};
	struct plot_set s = {.pt = pts, .n = 25};
	char *text;

	for (int i = 0; i < 25; i++) {
		snprintf(pts[i].status, sizeof pts[i].status, "ok");
		/* in series order, not x order */
		items[i] = (struct plot_item){.point = (size_t)i, .x = (double)(8ull << (24 - i)),
		                              .y = 1, .lo = NAN, .hi = NAN};
	}
	fig.style = PLOT_LINES;
	fig.xkey = PK_BYTES;
	fig.logx = 1;
	fig.nseries = 1;
	fig.item = items;
	fig.nitem = 25;
	text = gp_text(&fig, &s, "p.png");
	ck_assert_msg(strstr(text, "set xtics (\"8 B\" 8, \"32 B\" 32, "), "%s", text);
	ck_assert_msg(strstr(text, ", \"128 MiB\" 134217728) noenhanced rotate by -30\n"), "%s", text);
	ck_assert_msg(!strstr(text, "\"16 B\""), "%s", text);
	free(text);
}
END_TEST

START_TEST(test_plot_json_sweep_ndjson)
{
	ck_assert_int_eq(read_text("{\"schema_version\": 1, \"sweep\": {\"key\": \"payload.scheme\","
	                           " \"values\": [\"skew\", \"uniform\"], \"unit\": \"\"},"
	                           " \"results\": [" RESULT("") ", " RESULT("") "]}"), 0);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_str_eq(set.pt[1].sweep_key, "payload.scheme");
	ck_assert_str_eq(set.pt[1].key[PK_SWEEP], "uniform");
	ck_assert(fabs(set.pt[1].y[PM_RPC] - 70.5) < 1e-9);
	plot_set_free(&set);
	/* --ndjson: intervals, then the result on the last line */
	ck_assert_int_eq(read_text("{\"type\":\"interval\",\"worker\":0}\n" RESULT("") "\n"), 0);
	ck_assert_uint_eq(set.n, 1);
}
END_TEST

/* Swept values with units: a duration, a rate, a percentage. */
START_TEST(test_plot_unit_value)
{
	double v;
	const char *u;

	ck_assert_int_eq(plot_unit_value("10ms", &v, &u), 0);
	ck_assert(fabs(v - 0.01) < 1e-15);
	ck_assert_str_eq(u, "s");
	ck_assert_int_eq(plot_unit_value("250Mbit", &v, &u), 0);
	ck_assert(fabs(v - 250e6) < 1e-6);
	ck_assert_str_eq(u, "bit/s");
	ck_assert_int_eq(plot_unit_value("1Gbit/s", &v, &u), 0);
	ck_assert(fabs(v - 1e9) < 1e-6);
	ck_assert_int_eq(plot_unit_value("1.5 s", &v, &u), 0);
	ck_assert(fabs(v - 1.5) < 1e-15);
	ck_assert_int_eq(plot_unit_value("10%", &v, &u), 0);
	ck_assert(fabs(v - 10) < 1e-15);
	ck_assert_str_eq(u, "%");
	ck_assert_int_eq(plot_unit_value("ms", &v, &u), -1);
	ck_assert_int_eq(plot_unit_value("10", &v, &u), -1);
	ck_assert_int_eq(plot_unit_value("10 parsecs", &v, &u), -1);
	ck_assert_int_eq(plot_unit_value("skew", &v, &u), -1);
}
END_TEST

/* A sweep over a rate written with its unit: numbers in bit/s; a train
 * result's model; a duration key's CSV sweep: seconds. */
START_TEST(test_plot_sweep_units)
{
	ck_assert_int_eq(read_text("{\"schema_version\": 1, \"sweep\": {\"key\": \"network.rate\","
	                           " \"values\": [\"250Mbit\", \"1Gbit\"], \"unit\": \"\"},"
	                           " \"results\": [" RESULT("\"train\": {\"model\": \"mnist_mlp\"},")
	                           ", " RESULT("") "]}"), 0);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_str_eq(set.pt[0].key[PK_SWEEP], "250000000");
	ck_assert_str_eq(set.pt[1].key[PK_SWEEP], "1000000000");
	ck_assert_str_eq(set.pt[0].sweep_unit, "bit/s");
	ck_assert_str_eq(set.pt[0].key[PK_MODEL], "mnist_mlp");
	ck_assert_str_eq(set.pt[1].key[PK_MODEL], "");
	plot_set_free(&set);
	ck_assert_int_eq(read_text("job.timeout," REPORT_CSV_HEADER "\n"
	                           "0.5,latency,grpc,non-serialized,custom,1,1024,1,0.1,0.2,"
	                           "10,0,1,40.5,40,41,42,43,44,1,5000,5.1,4.9,,,,ok\n"), 0);
	ck_assert_str_eq(set.pt[0].key[PK_SWEEP], "0.5");
	ck_assert_str_eq(set.pt[0].sweep_unit, "s");
}
END_TEST

/* A grid (repeated --sweep): its last numeric key on x, a key the
 * result carries (the model) left to it, another (grpc.compression) in
 * PK_GRID; a grid's points of the wrong length and its CSV are refused. */
#define GRID_KEYS \
	"{\"schema_version\": 1, \"sweep\": {\"keys\": [" \
	"{\"key\": \"train.model\", \"values\": [\"a\"], \"unit\": \"\"}, " \
	"{\"key\": \"network.delay\", \"values\": [0.001], \"unit\": \"s\"}, " \
	"{\"key\": \"grpc.compression\", \"values\": [\"none\", \"gzip\"], \"unit\": \"\"}], "
START_TEST(test_plot_grid_read)
{
	ck_assert_int_eq(read_text(GRID_KEYS "\"points\": [[\"a\", 0.001, \"none\"], "
	                           "[\"a\", 0.001, \"gzip\"]]}, \"results\": ["
	                           RESULT("\"train\": {\"model\": \"a\"},") ", "
	                           RESULT("\"train\": {\"model\": \"a\"},") "]}"), 0);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_str_eq(set.pt[1].sweep_key, "network.delay");
	ck_assert_str_eq(set.pt[1].key[PK_SWEEP], "0.001");
	ck_assert_str_eq(set.pt[1].sweep_unit, "s");
	ck_assert_str_eq(set.pt[0].key[PK_GRID], "grpc.compression=none");
	ck_assert_str_eq(set.pt[1].key[PK_GRID], "grpc.compression=gzip");
	ck_assert_str_eq(set.pt[1].key[PK_MODEL], "a");
	ck_assert_uint_eq(plot_series_keys(&set, PK_SWEEP), 1u << PK_GRID);
	plot_set_free(&set);
	ck_assert_int_eq(read_text(GRID_KEYS "\"points\": [[\"a\", 0.001]]}, \"results\": ["
	                           RESULT("") "]}"), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "no tfgb grid"), "%s", err.msg);
	ck_assert_int_eq(read_text("a,b," REPORT_CSV_HEADER "\n1,2,latency\n"), -1);
	ck_assert_msg(strstr(err.msg, "a grid's CSV (2 swept keys"), "%s", err.msg);
}
END_TEST

/* The unit a swept duration or rate is drawn in, and its log axis. */
START_TEST(test_plot_xunit)
{
	struct plot_point pt[3] = {0};
	struct plot_set s = {.pt = pt, .n = 3};
	struct plot_item it[3] = {{.x = 0.001}, {.x = 0.01}, {.x = 0.1}};
	struct plot_fig fig = {.style = PLOT_LINES, .xkey = PK_SWEEP, .item = it, .nitem = 3};

	for (int i = 0; i < 3; i++)
		strcpy(pt[i].sweep_unit, "s");
	plot_xunit(&s, &fig);
	ck_assert_str_eq(fig.xunit, "ms");
	ck_assert(it[0].x == 1 && it[1].x == 10 && it[2].x == 100);
	ck_assert_int_eq(fig.logx, 1);
	/* 0 ms in the sweep: a linear axis, the unit from the smallest other */
	memset(&fig.xunit, 0, sizeof fig.xunit);
	fig.logx = 0;
	it[0].x = 0;
	it[1].x = 0.01;
	it[2].x = 0.1;
	plot_xunit(&s, &fig);
	ck_assert_str_eq(fig.xunit, "ms");
	ck_assert_int_eq(fig.logx, 0);
	/* rates */
	memset(&fig.xunit, 0, sizeof fig.xunit);
	for (int i = 0; i < 3; i++)
		strcpy(pt[i].sweep_unit, "bit/s");
	it[0].x = 250e6;
	it[1].x = 500e6;
	it[2].x = 1e9;
	plot_xunit(&s, &fig);
	ck_assert_str_eq(fig.xunit, "Mbit/s");
	ck_assert(it[0].x == 250 && it[2].x == 1000);
	ck_assert_int_eq(fig.logx, 0);
	/* a plain number (workers) over 16 times: log; with a 0: linear */
	memset(&fig.xunit, 0, sizeof fig.xunit);
	for (int i = 0; i < 3; i++)
		strcpy(pt[i].sweep_unit, "");
	it[0].x = 1;
	it[1].x = 4;
	it[2].x = 32;
	plot_xunit(&s, &fig);
	ck_assert_str_eq(fig.xunit, "");
	ck_assert_int_eq(fig.logx, 1);
	it[0].x = 0;
	plot_xunit(&s, &fig);
	ck_assert_int_eq(fig.logx, 0);
	/* a size sweep keeps its own axis (bytes) */
	memset(&fig.xunit, 0, sizeof fig.xunit);
	for (int i = 0; i < 3; i++)
		strcpy(pt[i].sweep_unit, "B");
	plot_xunit(&s, &fig);
	ck_assert_str_eq(fig.xunit, "");
}
END_TEST

/* A 0 beside values over 16 times apart: evenly spaced, by rank; not
 * when they are close (0, 1, 2) or when the axis is a log one. */
START_TEST(test_plot_xcat)
{
	struct plot_item it[5] = {{.x = 10}, {.x = 0}, {.x = 100}, {.x = 1}, {.x = 10}};
	struct plot_fig fig = {.style = PLOT_LINES, .xkey = PK_SWEEP, .item = it, .nitem = 5};

	plot_xcat(&fig);
	ck_assert_int_eq(fig.ncat, 4);
	ck_assert(fig.xcat[0] == 0 && fig.xcat[1] == 1 && fig.xcat[2] == 10 && fig.xcat[3] == 100);
	ck_assert(it[0].x == 2 && it[1].x == 0 && it[2].x == 3 && it[3].x == 1 && it[4].x == 2);
	fig.ncat = 0;
	it[0].x = 0;
	it[1].x = 1;
	it[2].x = 2;
	fig.nitem = 3;
	plot_xcat(&fig);
	ck_assert_int_eq(fig.ncat, 0);
	ck_assert(it[2].x == 2);
}
END_TEST

/* Two series keys: colour by the first (transport), dash by the other
 * (strategy); one key: colours alone; bars: by index. */
START_TEST(test_plot_channels)
{
	static struct plot_fig fig;
	static const char *const kv[4][2] = {{"grpc", "ps"}, {"grpc", "allreduce, ring"},
	                                     {"socket", "ps"}, {"socket", "allreduce, ring"}};
	struct plot_point pt[4] = {0};
	struct plot_item it[4];
	struct plot_set s = {.pt = pt, .n = 4};

	for (int i = 0; i < 4; i++) {
		strcpy(pt[i].key[PK_TRANSPORT], kv[i][0]);
		strcpy(pt[i].key[PK_STRATEGY], kv[i][1]);
		it[i] = (struct plot_item){.point = (size_t)(3 - i), .series = i};
	}
	fig.style = PLOT_LINES;
	fig.nseries = 4;
	fig.item = it;
	fig.nitem = 4;
	plot_channels(&s, 1u << PK_TRANSPORT | 1u << PK_STRATEGY, &fig);
	ck_assert_int_eq(fig.channels, 1);
	/* series 0 is point 3: socket, allreduce */
	ck_assert(fig.colour[0] == 0 && fig.dash[0] == 0);
	ck_assert(fig.colour[1] == 0 && fig.dash[1] == 1);
	ck_assert(fig.colour[2] == 1 && fig.dash[2] == 0);
	ck_assert(fig.colour[3] == 1 && fig.dash[3] == 1);
	fig.channels = 0;
	plot_channels(&s, 1u << PK_TRANSPORT, &fig);
	ck_assert_int_eq(fig.channels, 0);
	fig.style = PLOT_BARS;
	plot_channels(&s, 1u << PK_TRANSPORT | 1u << PK_STRATEGY, &fig);
	ck_assert_int_eq(fig.channels, 0);
}
END_TEST

/* The subtitle of a training run names what the run is (model, strategy,
 * PSs x workers, transport) and not the micro-benchmarks' payload, calls
 * in flight and RPC pattern that its result also records; a throughput
 * result with the same keys keeps them. */
START_TEST(test_plot_train_notes)
{
	static struct plot_fig fig;
	static const struct { int k; const char *v; } kv[] = {
		{PK_TRANSPORT, "grpc"}, {PK_STRATEGY, "ps"}, {PK_MODE, "non-serialized"},
		{PK_SCHEME, "model"}, {PK_IOVECS, "6"}, {PK_BYTES, "2678824"}, {PK_SHAPE, "1x2"},
		{PK_WORKERS, "2"}, {PK_INFLIGHT, "1024"}, {PK_RPC, "pull, push"},
		{PK_TLS, "plaintext"}, {PK_MODEL, "mnist_mlp"}, {PK_HOST, "h"},
	};
	struct plot_point pt[1] = {{.bench = "train", .status = "ok"}};
	struct plot_set s = {.pt = pt, .n = 1};

	for (size_t i = 0; i < sizeof kv / sizeof *kv; i++)
		strcpy(pt[0].key[kv[i].k], kv[i].v);
	fig.xkey = PK_FILE;
	plot_notes(&s, 0, &fig);
	ck_assert_msg(!strncmp(fig.subtitle, "all runs: model mnist_mlp, parameter server, "
	                       "1 PS x 2 workers, grpc, non-serialized, plaintext, host h",
	                       strlen("all runs: model mnist_mlp, parameter server, 1 PS x 2 "
	                              "workers, grpc, non-serialized, plaintext, host h")),
	              "%s", fig.subtitle);
	ck_assert_msg(!strstr(fig.subtitle, "in flight") && !strstr(fig.subtitle, "push") &&
	              !strstr(fig.subtitle, "iovec") && !strstr(fig.subtitle, "MiB"), "%s",
	              fig.subtitle);
	strcpy(pt[0].bench, "throughput");
	fig.subtitle[0] = 0;
	plot_notes(&s, 0, &fig);
	ck_assert_msg(strstr(fig.subtitle, "1024 in flight, pull, push") &&
	              strstr(fig.subtitle, "6 iovecs, 2.55 MiB"), "%s", fig.subtitle);
}
END_TEST

/* Lines of two series whose highest values are 10 times apart or more
 * (a grid's small and large model against the delay) get a log y axis;
 * series close together, one series alone, bars, and a value at 0 keep a
 * linear one. */
START_TEST(test_plot_series_logy)
{
	static struct plot_fig fig;
	/* step times in ms: mnist_mlp then resnet50 at delays 0, 1, 10 ms */
	static const double y[6] = {2.2, 31.2, 60.6, 56.5, 668.5, 777.2};
	struct plot_item it[6];

	for (int i = 0; i < 6; i++)
		it[i] = (struct plot_item){.point = (size_t)i, .series = i / 3, .x = i % 3,
		                           .y = y[i], .lo = NAN, .hi = NAN};
	fig.style = PLOT_LINES;
	fig.nseries = 2;
	fig.item = it;
	fig.nitem = 6;
	plot_series_logy(&fig);
	ck_assert_int_eq(fig.logy, 1);
	/* 60.6 against 600: 9.9 times, not yet */
	fig.logy = 0;
	it[4].y = it[5].y = 600;
	plot_series_logy(&fig);
	ck_assert_int_eq(fig.logy, 0);
	it[5].y = 777.2;
	fig.style = PLOT_BARS;
	plot_series_logy(&fig);
	ck_assert_int_eq(fig.logy, 0);
	fig.style = PLOT_LINES;
	it[0].y = 0;
	plot_series_logy(&fig);
	ck_assert_int_eq(fig.logy, 0);
	/* one series spanning 350 times: linear, its shape is its own */
	it[0].y = 2.2;
	for (int i = 0; i < 6; i++)
		it[i].series = 0;
	fig.nseries = 1;
	plot_series_logy(&fig);
	ck_assert_int_eq(fig.logy, 0);
}
END_TEST

/* A point whose link went another way than most (veth among tun, or no
 * link at all) gets a square and its route's name; all one way: none. */
START_TEST(test_plot_route_marks)
{
	static struct plot_fig fig;
	struct plot_point pt[4] = {{.status = "ok"}, {.status = "ok", .route = "tun"},
	                           {.status = "ok", .route = "tun"}, {.status = "ok", .route = "veth"}};
	struct plot_item it[4];
	struct plot_set s = {.pt = pt, .n = 4};
	char *text;

	for (int i = 0; i < 4; i++)
		it[i] = (struct plot_item){.point = (size_t)i, .x = i, .y = 10 + i, .lo = NAN,
		                           .hi = NAN};
	ck_assert_str_eq(plot_route_usual(&s), "tun");
	fig.style = PLOT_LINES;
	fig.nseries = 1;
	fig.item = it;
	fig.nitem = 4;
	text = gp_text(&fig, &s, "p.png");
	ck_assert_msg(strstr(text, "$route << EOD\n0 10\n3 13\nEOD\n"), "%s", text);
	ck_assert_msg(strstr(text, "set label \"veth\" noenhanced at first 3, first 13"), "%s", text);
	ck_assert_msg(strstr(text, "set label \"no emulated link\" noenhanced at first 0"), "%s",
	              text);
	ck_assert_msg(strstr(text, "title \"another route\""), "%s", text);
	free(text);
	strcpy(pt[0].route, "tun");
	strcpy(pt[3].route, "tun");
	ck_assert_ptr_null(plot_route_usual(&s));
	/* no link anywhere: nothing to mark */
	for (int i = 0; i < 4; i++)
		pt[i].route[0] = 0;
	ck_assert_ptr_null(plot_route_usual(&s));
}
END_TEST

START_TEST(test_plot_read_refusals)
{
	ck_assert_int_eq(read_text("{\"a\": 1}"), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "not a tfgb result"), "%s", err.msg);
	ck_assert_int_eq(read_text("{\"schema_version\": 1, \"sweep\": {\"key\": \"k\"}, "
	                           "\"results\": []}"), -1);
	ck_assert_msg(strstr(err.msg, "sweep"), "%s", err.msg);
	/* a schema_version it does not read, absent or of another type */
	ck_assert_int_eq(read_text("{\"schema_version\": 2, \"benchmark\": \"latency\", "
	                           "\"job\": \"\"}"), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "schema_version 2 is not one"), "%s",
	              err.msg);
	ck_assert_int_eq(read_text("{\"benchmark\": \"latency\", \"job\": \"\"}"), -1);
	ck_assert_msg(strstr(err.msg, "no \"schema_version\""), "%s", err.msg);
	ck_assert_int_eq(read_text("{\"schema_version\": \"1\"}"), -1);
	ck_assert_msg(strstr(err.msg, "is a string, not an integer"), "%s", err.msg);
	ck_assert_int_eq(read_text("a,b\n1,2\n"), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "CSV"), "%s", err.msg);
	ck_assert_int_eq(read_text(REPORT_CSV_HEADER "\n"), -1);
	ck_assert_msg(strstr(err.msg, "no row after the header"), "%s", err.msg);
	ck_assert_int_eq(read_text("{\"benchmark\": "), -1);
	ck_assert_msg(strstr(err.msg, "line 1"), "%s", err.msg);
	ck_assert_msg(!strchr(err.msg, '\n'), "more than one line: %s", err.msg);
}
END_TEST

START_TEST(test_plot_key_text)
{
	char b[64];

	plot_key_text(PK_BYTES, "3176488", b, sizeof b);
	ck_assert_str_eq(b, "3.03 MiB");
	plot_key_text(PK_BYTES, "512", b, sizeof b);
	ck_assert_str_eq(b, "512 B");
	plot_key_text(PK_SHAPE, "2x1", b, sizeof b);
	ck_assert_str_eq(b, "2 PS x 1 worker");
	plot_key_text(PK_IOVECS, "1", b, sizeof b);
	ck_assert_str_eq(b, "1 iovec");
	ck_assert_int_eq(plot_key_find("shape"), PK_SHAPE);
	ck_assert_int_eq(plot_key_find("nope"), -1);
	ck_assert_int_eq(plot_metric_find("Gbps"), PM_GBPS);
}
END_TEST

/* The script of a figure whose labels hold quotes, a backslash, a control
 * character, a byte that is not UTF-8 and gnuplot's markup; one null,
 * not-ok item; a single series, so no legend entry of its own. */
START_TEST(test_plot_gp_script_text)
{
	static struct plot_fig fig;
	struct plot_item items[2] = {
		{.point = 0, .series = 0, .group = 0, .x = 0, .y = 5, .lo = NAN, .hi = NAN},
		{.point = 1, .series = 0, .group = 1, .x = 1, .y = NAN, .lo = NAN, .hi = NAN},
	};
	struct plot_point pts[2] = {{.status = "ok"}, {.status = "empty"}};
	struct plot_set s = {.pt = pts, .n = 2};
	char *text;

	fig.style = PLOT_BARS;
	fig.nseries = 1;
	fig.ngroups = 2;
	snprintf(fig.series[0], sizeof fig.series[0], "s0");
	snprintf(fig.group[0], sizeof fig.group[0], "a\"b\\c\x01\xff%%d_{x}");
	snprintf(fig.group[1], sizeof fig.group[1], "g1");
	snprintf(fig.title, sizeof fig.title, "T");
	fig.item = items;
	fig.nitem = 2;
	text = gp_text(&fig, &s, "out\".png");
	/* a tic's label is a format: its '%' doubled; markup not interpreted */
	ck_assert_msg(strstr(text, "set xtics (\"a\\\"b\\\\c??%%d_{x}\" 0, \"g1\" 1) noenhanced"),
	              "%s", text);
	ck_assert_msg(strstr(text, "using 1:2 with boxes lc 1 notitle"), "%s", text);
	ck_assert_msg(strstr(text, "set label \"empty: no figure\" noenhanced"), "%s", text);
	ck_assert_msg(strstr(text, "set output \"out\\\".png\""), "%s", text);
	ck_assert_msg(strstr(text, "noenhanced at first"), "%s", text);
	ck_assert_msg(strstr(text, "title \"status not ok\""), "%s", text);
	/* the null item leaves a gap in the data, no 0 */
	ck_assert_msg(strstr(text, "$s0 << EOD\n0 5 nan nan nan\n\nEOD\n"), "%s", text);
	free(text);
}
END_TEST

/* A result's histogram read back as output.hgrm's rows; one that is not
 * tfgb's refused; null: none. */
START_TEST(test_plot_json_hist)
{
	set.hist = 1;
	/* 4 calls: 1000 ns, 2000 ns twice, 100000 ns */
	ck_assert_int_eq(read_text(RESULT(" \"histogram\": {\"unit\": \"ns\", \"sub_buckets\": 128,"
	                                  " \"count\": 4, \"min_ns\": 1000, \"max_ns\": 100000,"
	                                  " \"sum_ns\": 105000, \"buckets\": [[1000, 1003, 1],"
	                                  " [2000, 2007, 2], [99840, 100351, 1]]},")), 0);
	ck_assert_int_eq(set.pt[0].hist_calls, 4);
	ck_assert_uint_ge(set.pt[0].npct, 4);
	ck_assert(set.pt[0].pct[0] == 0);   /* the 0% row: the smallest value */
	ck_assert(fabs(set.pt[0].pct[1] - 1.0) < 0.01);
	/* increasing percentiles and latencies, the last in the largest bucket */
	for (size_t k = 1; k < set.pt[0].npct; k++) {
		ck_assert(set.pt[0].pct[2 * k] > set.pt[0].pct[2 * k - 2]);
		ck_assert(set.pt[0].pct[2 * k + 1] >= set.pt[0].pct[2 * k - 1]);
	}
	ck_assert(fabs(set.pt[0].pct[2 * set.pt[0].npct - 1] - 100) < 1);
	plot_set_free(&set);
	/* counts that do not add up to "count" */
	ck_assert_int_eq(read_text(RESULT(" \"histogram\": {\"unit\": \"ns\", \"sub_buckets\": 128,"
	                                  " \"count\": 5, \"min_ns\": 1000, \"max_ns\": 1000,"
	                                  " \"sum_ns\": 1000, \"buckets\": [[1000, 1003, 1]]},")), -1);
	ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "\"histogram\" is not tfgb's"), "%s",
	              err.msg);
	plot_set_free(&set);
	/* no call: empty, even with null extremes */
	ck_assert_int_eq(read_text(RESULT(" \"histogram\": {\"unit\": \"ns\", \"sub_buckets\": 128,"
	                                  " \"count\": 0, \"min_ns\": null, \"max_ns\": null,"
	                                  " \"sum_ns\": 0, \"buckets\": []},")), 0);
	ck_assert_int_eq(set.pt[0].hist_calls, 0);
	ck_assert_uint_eq(set.pt[0].npct, 0);
	plot_set_free(&set);
	ck_assert_int_eq(read_text(RESULT(" \"histogram\": null,")), 0);
	ck_assert_int_eq(set.pt[0].hist_calls, -1);
	ck_assert_uint_eq(set.pt[0].npct, 0);
	plot_set_free(&set);
	/* not asked for: not read */
	set.hist = 0;
	ck_assert_int_eq(read_text(RESULT(" \"histogram\": {\"count\": 5},")), 0);
	ck_assert_int_eq(set.pt[0].hist_calls, -1);
}
END_TEST

/* The percentile figure's script: x = 1/(1 - p) on a log axis with
 * percentile tics, y the latency; a result without a call a legend entry
 * alone, its status named. */
START_TEST(test_plot_gp_percentiles)
{
	static struct plot_fig fig;
	double pct[] = {0, 10, 0.5, 20, 0.99, 40, 0.999, 80};
	struct plot_item items[2] = {
		{.point = 0, .series = 0, .y = NAN, .lo = NAN, .hi = NAN},
		{.point = 1, .series = 1, .y = NAN, .lo = NAN, .hi = NAN},
	};
	struct plot_point pts[2] = {{.status = "ok", .pct = pct, .npct = 4, .hist_calls = 1000},
	                            {.status = "empty", .hist_calls = 0}};
	struct plot_set s = {.pt = pts, .n = 2};
	char *text;

	fig.style = PLOT_PERCENTILES;
	fig.nseries = 2;
	snprintf(fig.series[0], sizeof fig.series[0], "grpc");
	snprintf(fig.series[1], sizeof fig.series[1], "socket");
	fig.item = items;
	fig.nitem = 2;
	text = gp_text(&fig, &s, "p.png");
	ck_assert_msg(strstr(text, "set logscale x 10\n"), "%s", text);
	ck_assert_msg(strstr(text, "$s0 << EOD\n1 10\n2 20\n99.999999999999915 40\n"), "%s", text);
	ck_assert_msg(strstr(text, "\"99%%\" 100, \"99.9%%\" 1000)"), "%s", text);
	ck_assert_msg(!strstr(text, "\"99.99%%\""), "%s", text);
	ck_assert_msg(strstr(text, "keyentry with lines lw 2 lc 2 dt 1 title \"socket (empty: no call)\""),
	              "%s", text);
	ck_assert_msg(!strstr(text, "unset key"), "%s", text);
	free(text);
	/* one result, ok: no legend at all */
	fig.nseries = 1;
	fig.nitem = 1;
	text = gp_text(&fig, &s, "p.png");
	ck_assert_msg(strstr(text, "unset key\nplot $s0 using 1:2 with lines lw 2 lc 1 dt 1 notitle"),
	              "%s", text);
	free(text);
}
END_TEST

Suite *make_plot_suite(void)
{
	Suite *s = suite_create("plot");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, NULL, plot_teardown);
	tcase_add_checked_fixture(errors, NULL, plot_teardown);
	tcase_add_test(core, test_plot_csv_sweep);
	tcase_add_test(core, test_plot_csv_runs);
	tcase_add_test(core, test_plot_json_result);
	tcase_add_test(core, test_plot_json_sweep_ndjson);
	tcase_add_test(core, test_plot_coll_read);
	tcase_add_test(core, test_plot_allreduce_read);
	tcase_add_test(core, test_plot_gp_many_tics);
	tcase_add_test(core, test_plot_key_text);
	tcase_add_test(core, test_plot_gp_script_text);
	tcase_add_test(core, test_plot_json_hist);
	tcase_add_test(core, test_plot_gp_percentiles);
	tcase_add_test(core, test_plot_unit_value);
	tcase_add_test(core, test_plot_sweep_units);
	tcase_add_test(core, test_plot_grid_read);
	tcase_add_test(core, test_plot_xunit);
	tcase_add_test(core, test_plot_xcat);
	tcase_add_test(core, test_plot_channels);
	tcase_add_test(core, test_plot_route_marks);
	tcase_add_test(core, test_plot_train_notes);
	tcase_add_test(core, test_plot_series_logy);
	tcase_add_test(errors, test_plot_read_refusals);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}
