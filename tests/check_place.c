/* check_place.c - the [affinity] NUMA node keys: parsing, the machine's
 * nodes from a fixture node directory, the job errors of place_check, and
 * place_apply on this test's own (forked) process. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "job.h"
#include "payload.h"
#include "place.h"
#include "validate.h"

#if TFGB_HAVE_NUMA
#include <numaif.h>
#endif

/* Per-test state: a job at its defaults and a fixture node directory. */
static struct job job;
static struct err err;
static char dir[64];

static void place_setup(void)
{
	ck_assert_int_eq(job_init(&job), 0);
	memset(&err, 0, sizeof err);
	snprintf(dir, sizeof dir, "/tmp/check_place.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void place_teardown(void)
{
	char cmd[128];

	job_free(&job);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "check_place: cannot remove %s\n", dir);
}

/* Writes text to dir/name, creating dir/nodeN on the way. */
static void fixture(const char *name, const char *text)
{
	char path[160];
	const char *slash = strchr(name, '/');
	FILE *f;

	if (slash) {
		snprintf(path, sizeof path, "%s/%.*s", dir, (int)(slash - name), name);
		mkdir(path, 0755);
	}
	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Two nodes: 0 with CPUs 0-3, 1 with CPUs 4-7. */
static void two_nodes(void)
{
	fixture("online", "0-1\n");
	fixture("node0/cpulist", "0-3\n");
	fixture("node1/cpulist", "4-7\n");
}

static void set(const char *kv, int pos)
{
	ck_assert_msg(job_override(&job, kv, pos, &err) == 0, "%s: %s", kv, err.msg);
}

/* place_check's error for roles, or NULL. */
static const char *checked(unsigned roles)
{
	err.msg[0] = 0;
	return place_check(&job, roles, dir, &err) == 0 ? NULL : err.msg;
}

/* 1 when this build and kernel bind memory by node: then a fixture with
 * two nodes (two_nodes) has two; otherwise place_check sees node 0 alone. */
static int numa_here(void)
{
	struct job probe;
	struct err e;
	int ok;

	ck_assert_int_eq(job_init(&probe), 0);
	ck_assert_int_eq(job_override(&probe, "affinity.ps_numa_node=1", 1, &e), 0);
	ok = place_check(&probe, PLACE_PS, dir, &e) == 0;
	job_free(&probe);
	return ok;
}

/* --- core ---------------------------------------------------------- */

START_TEST(test_place_keys_parse)
{
	const struct opt_def *d = job_key_find("affinity", "ps_numa_node");
	char range[96], *ini;

	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(job.ps_numa_node, "none");
	ck_assert_str_eq(job.worker_numa_node, "none");
	opt_format_range(d, range, sizeof range);
	ck_assert_str_eq(range, "none | [0, 1023], one per local rank separated by /");
	set("affinity.ps_numa_node=3", 1);
	set("affinity.worker_numa_node= 0 ", 2);
	ck_assert_str_eq(job.ps_numa_node, "3");
	ck_assert_str_eq(job.worker_numa_node, "0");
	ini = job_ini_string(&job);
	ck_assert_ptr_nonnull(strstr(ini, "\nps_numa_node = 3\nworker_numa_node = 0\n"));
	free(ini);
	set("affinity.ps_numa_node=None", 3);
	ck_assert_str_eq(job.ps_numa_node, "none");
	ini = job_ini_string(&job);
	ck_assert_ptr_nonnull(strstr(ini, "\nps_numa_node = none\n"));
	free(ini);
	set("affinity.worker_numa_node=1023", 4);
	ck_assert_str_eq(job.worker_numa_node, "1023");
	/* one per local rank, stored canonical */
	set("affinity.worker_numa_node= 0 / 1/NONE", 5);
	ck_assert_str_eq(job.worker_numa_node, "0/1/none");
	ck_assert_int_eq(opt_rank_int("1"), 1);
	ck_assert_int_eq(opt_rank_int("none"), -1);
	ck_assert_int_eq(opt_rank_int(""), -1);
}
END_TEST

START_TEST(test_place_keys_bad)
{
	ck_assert_int_eq(job_override(&job, "affinity.ps_numa_node=1024", 1, &err), -1);
	ck_assert_str_eq(err.msg, "-s #1: affinity.ps_numa_node = 1024: must be none or in [0, 1023]");
	ck_assert_int_eq(job_override(&job, "affinity.worker_numa_node=-1", 2, &err), -1);
	ck_assert_str_eq(err.msg,
	                 "-s #2: affinity.worker_numa_node = -1: must be none or in [0, 1023]");
	ck_assert_int_eq(job_override(&job, "affinity.ps_numa_node=nodes", 3, &err), -1);
	ck_assert_str_eq(err.msg,
	                 "-s #3: affinity.ps_numa_node = nodes: neither none nor a whole number; "
	                 "must be none or in [0, 1023]");
	/* the word belongs to these keys only */
	ck_assert_int_eq(job_override(&job, "server.threads=none", 4, &err), -1);
	ck_assert_str_eq(err.msg, "-s #4: server.threads = none: not a whole number; must be in [0, 256]");
	/* a list: the item and the rank it is for */
	ck_assert_int_eq(job_override(&job, "affinity.ps_numa_node=0/1024", 5, &err), -1);
	ck_assert_str_eq(err.msg, "-s #5: affinity.ps_numa_node = 0/1024: must be none or in "
	                 "[0, 1023] (item 2 of the /-separated list, local rank 1's)");
	ck_assert_int_eq(job_override(&job, "affinity.worker_numa_node=0//1", 6, &err), -1);
	ck_assert_str_eq(err.msg, "-s #6: affinity.worker_numa_node = 0//1: neither none nor a "
	                 "whole number; must be none or in [0, 1023] (item 2 of the /-separated list, "
	                 "local rank 1's)");
}
END_TEST

START_TEST(test_place_validate_build)
{
	set("affinity.worker_numa_node=0", 1);
	if (TFGB_HAVE_NUMA) {
		ck_assert_msg(job_validate(&job, &err) == 0, "%s", err.msg);
	} else {
		ck_assert_int_eq(job_validate(&job, &err), -1);
		ck_assert_str_eq(err.msg, "-s #1: affinity.worker_numa_node = 0: this tfgb was built "
		                 "without NUMA support (NUMA=0); only none is accepted");
	}
}
END_TEST

START_TEST(test_place_nodes)
{
	unsigned char m[OPT_CPU_MAX / 8] = {0};
	char sub[96];

	fixture("online", "0-1,3\n");
	ck_assert_int_eq(place_nodes(dir, m), 0);
	ck_assert_uint_eq(m[0], 0x0b);
	ck_assert_uint_eq(m[1], 0);
	/* no directory: a kernel without NUMA, node 0 alone */
	memset(m, 0, sizeof m);
	snprintf(sub, sizeof sub, "%s/absent", dir);
	ck_assert_int_eq(place_nodes(sub, m), 0);
	ck_assert_uint_eq(m[0], 0x01);
	fixture("online", "zero\n");
	ck_assert_int_eq(place_nodes(dir, m), -1);
	fixture("online", "\n");
	ck_assert_int_eq(place_nodes(dir, m), -1);
}
END_TEST

/* --- errors -------------------------------------------------------- */

START_TEST(test_place_check_absent_node)
{
	const char *e;

	two_nodes();
	ck_assert_int_eq(job_load_string(&job, "t.ini", "[affinity]\nps_cpus = 1\n"
	                                 "ps_numa_node = 2\n", &err), 0);
	e = checked(PLACE_PS);
	ck_assert_ptr_nonnull(e);
	if (numa_here())
		ck_assert_str_eq(e, "t.ini:3: affinity.ps_numa_node = 2: this machine has NUMA "
		                 "nodes 0-1");
	else
		ck_assert_str_eq(e, "t.ini:3: affinity.ps_numa_node = 2: this machine has NUMA "
		                 "node 0 (its kernel has no NUMA support)");
	/* only the roles asked for are checked */
	ck_assert_ptr_null(checked(PLACE_WORKER));
	set("affinity.worker_numa_node=7", 1);
	e = checked(PLACE_WORKER);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(strstr(e, "-s #1: affinity.worker_numa_node = 7: this machine has "
	                             "NUMA node"));
	set("affinity.ps_numa_node=none", 2);
	set("affinity.worker_numa_node=none", 3);
	ck_assert_ptr_null(checked(PLACE_PS | PLACE_WORKER));
}
END_TEST

START_TEST(test_place_check_one_node)
{
	char want[160];
	int here;

	two_nodes();
	here = numa_here();
	fixture("online", "0\n");
	set("affinity.worker_numa_node=1", 1);
	snprintf(want, sizeof want, "-s #1: affinity.worker_numa_node = 1: this machine has NUMA "
	         "node 0%s", here ? "" : " (its kernel has no NUMA support)");
	ck_assert_str_eq(checked(PLACE_WORKER), want);
	set("affinity.worker_numa_node=0", 2);
	ck_assert_ptr_null(checked(PLACE_WORKER));
}
END_TEST

START_TEST(test_place_check_cpus)
{
	two_nodes();
	set("affinity.ps_cpus=8-9,12", 1);
	set("affinity.ps_numa_node=0", 2);
	ck_assert_str_eq(checked(PLACE_PS), "-s #2: affinity.ps_numa_node = 0: NUMA node 0 has "
	                 "CPUs 0-3, none of them in affinity.ps_cpus = 8-9,12 (-s #1)");
	set("affinity.ps_cpus=3,8", 3);
	ck_assert_ptr_null(checked(PLACE_PS));
	if (!numa_here()) {
		TFGB_SKIP_PART("node 1 not checked: no NUMA here (tfgb built with NUMA=0, or the "
		               "kernel has no NUMA support)");
		return;
	}
	ck_assert_int_eq(job_load_string(&job, "w.ini", "[affinity]\nworker_cpus = 0-3\n"
	                                 "worker_numa_node = 1\n", &err), 0);
	ck_assert_str_eq(checked(PLACE_WORKER), "w.ini:3: affinity.worker_numa_node = 1: NUMA "
	                 "node 1 has CPUs 4-7, none of them in affinity.worker_cpus = 0-3 (w.ini:2)");
	/* a node of memory alone binds memory only: no CPUs to intersect */
	fixture("node1/cpulist", "\n");
	ck_assert_ptr_null(checked(PLACE_WORKER));
}
END_TEST

START_TEST(test_place_check_unreadable)
{
	char want[200];

	two_nodes();
	if (!numa_here()) /* node 0 alone, without reading the directory */
		TFGB_SKIP("no NUMA here (tfgb built with NUMA=0, or the kernel has no NUMA "
		          "support)");
	fixture("online", "0-x\n");
	set("affinity.ps_numa_node=0", 1);
	snprintf(want, sizeof want, "-s #1: affinity.ps_numa_node = 0: cannot read this machine's "
	         "NUMA nodes from %s/online", dir);
	ck_assert_str_eq(checked(PLACE_PS), want);
}
END_TEST

/* --- apply: on this forked test process ---------------------------- */

/* The CPUs this process may run on, as a sched mask. */
static void allowed(cpu_set_t *s)
{
	CPU_ZERO(s);
	ck_assert_int_eq(sched_getaffinity(0, sizeof *s, s), 0);
}

START_TEST(test_place_apply)
{
	unsigned char node0[OPT_CPU_MAX / 8] = {0};
	char buf[256], kv[48];
	struct err e;
	struct err why;
	cpu_set_t before, after;
	int last = -1, n = 0;
	FILE *f;

	f = fopen(PLACE_NODE_DIR "/node0/cpulist", "r");
	if (!f || !TFGB_HAVE_NUMA) {
		if (f)
			fclose(f);
		TFGB_SKIP("nothing to bind to: %s", TFGB_HAVE_NUMA ? "no " PLACE_NODE_DIR
		          "/node0/cpulist" : "tfgb built with NUMA=0 (libnuma-dev)");
	}
	ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	ck_assert_int_eq(opt_parse_cpulist(buf, node0, &why), 0);
	allowed(&before);
	/* the last CPU of node 0 this process may use */
	for (int c = 0; c < OPT_CPU_MAX && c < CPU_SETSIZE; c++)
		if ((node0[c / 8] >> (c % 8) & 1) && CPU_ISSET(c, &before))
			last = c;
	if (last < 0)
		TFGB_SKIP("this process may run on no CPU of NUMA node 0");
	snprintf(kv, sizeof kv, "affinity.worker_cpus=%d", last);
	set(kv, 1);
	set("affinity.worker_numa_node=0", 2);
	ck_assert_msg(place_apply(&job, PLACE_WORKER, 0, &e) == 0, "%s", e.msg);
	allowed(&after);
	for (int c = 0; c < CPU_SETSIZE; c++)
		n += CPU_ISSET(c, &after);
	ck_assert_int_eq(n, 1);
	ck_assert(CPU_ISSET(last, &after));
#if TFGB_HAVE_NUMA
	{
		unsigned long mask[16] = {0};
		struct payload p = {0};
		int mode = -1;

		ck_assert_int_eq(get_mempolicy(&mode, mask, 8 * sizeof mask + 1, NULL, 0), 0);
		ck_assert_int_eq(mode, MPOL_BIND);
		ck_assert_uint_eq(mask[0], 1);
		/* the payload carries its own policy, set before its first touch */
		ck_assert_int_eq(set_mempolicy(MPOL_DEFAULT, NULL, 0), 0);
		ck_assert_int_eq(job_validate(&job, &err), 0);
		ck_assert_int_eq(payload_layout(&job, &p), 0);
		ck_assert_int_eq(payload_alloc(&p), 0);
		mask[0] = 0;
		ck_assert_int_eq(get_mempolicy(&mode, mask, 8 * sizeof mask + 1, p.mem,
		                               MPOL_F_ADDR), 0);
		ck_assert_int_eq(mode, MPOL_BIND);
		ck_assert_uint_eq(mask[0], 1);
		payload_free(&p);
	}
#endif
	ck_assert_int_eq(sched_setaffinity(0, sizeof before, &before), 0);
}
END_TEST

START_TEST(test_place_apply_bad_cpu)
{
	struct err e;

	set("affinity.ps_cpus=1000", 1);
	ck_assert_int_eq(place_apply(&job, PLACE_PS, 0, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "cannot run on CPUs '1000': Invalid argument");
}
END_TEST

/* Per local rank: "A/B" is a set each, one set serves every rank, and a
 * list too short for a rank is the job's error naming the key. */
START_TEST(test_place_local_sets)
{
	char buf[64];

	ck_assert_int_eq(opt_cpusets_pick("0-3/4-7", 1, buf, sizeof buf), 2);
	ck_assert_str_eq(buf, "4-7");
	ck_assert_int_eq(opt_cpusets_pick("0-3/4-7", 2, buf, sizeof buf), 2);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(opt_cpusets_pick("0,1", 0, buf, sizeof buf), 1);
	ck_assert_str_eq(buf, "0,1");
	set("affinity.worker_cpus=0-3/4-7", 1);
	ck_assert_int_eq(job_validate(&job, &err), 0);
	ck_assert_int_eq(place_check_local(&job, PLACE_WORKER, 1, "SLURM_LOCALID", &err), 0);
	ck_assert_int_eq(place_check_local(&job, PLACE_WORKER, 2, "SLURM_LOCALID", &err), -1);
	ck_assert_msg(strstr(err.msg, "affinity.worker_cpus") && strstr(err.msg, "2 CPU sets") &&
	              strstr(err.msg, "local rank 2 (SLURM_LOCALID)"), "%s", err.msg);
	ck_assert_int_eq(place_check_local(&job, PLACE_PS, 7, "--task", &err), 0); /* unset */
	set("affinity.ps_cpus=2", 2);
	ck_assert_int_eq(place_check_local(&job, PLACE_PS, 7, "--task", &err), 0); /* one set */
	ck_assert_int_eq(job_override(&job, "affinity.ps_cpus=0-3/x", 3, &err), 0);
	ck_assert_int_eq(job_validate(&job, &err), -1);
	ck_assert_msg(strstr(err.msg, "affinity.ps_cpus") && strstr(err.msg, "CPU set"), "%s",
	              err.msg);
}
END_TEST

/* NUMA nodes per local rank, handed out and refused as the CPU sets are. */
START_TEST(test_place_local_nodes)
{
	set("affinity.worker_numa_node=0/1", 1);
	ck_assert_int_eq(place_check_local(&job, PLACE_WORKER, 1, "SLURM_LOCALID", &err), 0);
	ck_assert_int_eq(place_check_local(&job, PLACE_WORKER, 2, "SLURM_LOCALID", &err), -1);
	ck_assert_str_eq(err.msg, "-s #1: affinity.worker_numa_node = 0/1: has 2 NUMA nodes (one "
	                 "per local rank, separated by '/'), too few for local rank 2 "
	                 "(SLURM_LOCALID): give at least 3, or one for every rank");
	/* one node serves every rank; the CPU list is checked first */
	set("affinity.worker_numa_node=0", 2);
	ck_assert_int_eq(place_check_local(&job, PLACE_WORKER, 9, "--task", &err), 0);
	set("affinity.worker_cpus=0/1", 3);
	ck_assert_int_eq(place_check_local(&job, PLACE_WORKER, 2, "--task", &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "affinity.worker_cpus = 0/1: has 2 CPU sets"));
	ck_assert_int_eq(place_check_local(&job, PLACE_PS, 5, "--task", &err), 0);
}
END_TEST

/* Every rank's node against the machine's: the one that lacks names its rank. */
START_TEST(test_place_check_rank_nodes)
{
	two_nodes();
	if (!numa_here())
		TFGB_SKIP("no NUMA here (tfgb built with NUMA=0, or the kernel has no NUMA "
		          "support): node 1 is refused for any rank");
	set("affinity.ps_numa_node=0/1", 1);
	ck_assert_ptr_null(checked(PLACE_PS));
	set("affinity.ps_numa_node=1/0/2", 2);
	ck_assert_str_eq(checked(PLACE_PS), "-s #2: affinity.ps_numa_node = 1/0/2: this machine "
	                 "has NUMA nodes 0-1 (local rank 2's node 2)");
	/* each rank's CPU set against its own node: rank 1 runs on 4-7, node 1 */
	set("affinity.ps_cpus=0-3/4-7", 3);
	set("affinity.ps_numa_node=0/1", 4);
	ck_assert_ptr_null(checked(PLACE_PS));
	set("affinity.ps_numa_node=1/0", 5);
	ck_assert_str_eq(checked(PLACE_PS), "-s #5: affinity.ps_numa_node = 1/0: NUMA node 1 has "
	                 "CPUs 4-7, none of them in affinity.ps_cpus = 0-3 (-s #3) (local rank "
	                 "0's node 1)");
}
END_TEST

/* Local rank 1 of "none/0" is bound to node 0 and says so; rank 0 is not. */
START_TEST(test_place_apply_rank_node)
{
	struct place_seen seen;
	cpu_set_t before;
	struct err e;

	if (!TFGB_HAVE_NUMA)
		TFGB_SKIP("tfgb built with NUMA=0 (libnuma-dev)");
	allowed(&before);
	set("affinity.worker_numa_node=none/0", 1);
	ck_assert_msg(place_apply(&job, PLACE_WORKER, 0, &e) == 0, "%s", e.msg);
	place_measure(&seen);
	ck_assert_int_eq(seen.numa_node, -1);
	ck_assert_msg(place_apply(&job, PLACE_WORKER, 1, &e) == 0, "%s", e.msg);
	place_measure(&seen);
	ck_assert_int_eq(seen.numa_node, 0);
	ck_assert_int_eq(sched_setaffinity(0, sizeof before, &before), 0);
}
END_TEST

/* Local rank 1 of "first/last" runs on the last CPU alone, rank 0 on the first. */
START_TEST(test_place_apply_local)
{
	cpu_set_t before, after;
	int first = -1, last = -1;
	char kv[64];
	struct err e;

	allowed(&before);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &before)) {
			if (first < 0)
				first = c;
			last = c;
		}
	if (first == last)
		TFGB_SKIP("this process may run on one CPU only");
	snprintf(kv, sizeof kv, "affinity.worker_cpus=%d/%d", first, last);
	set(kv, 1);
	for (int local = 0; local < 2; local++) {
		int want = local ? last : first;
		ck_assert_msg(place_apply(&job, PLACE_WORKER, local, &e) == 0, "%s", e.msg);
		allowed(&after);
		ck_assert_int_eq(CPU_COUNT(&after), 1);
		ck_assert(CPU_ISSET(want, &after));
		ck_assert_int_eq(sched_setaffinity(0, sizeof before, &before), 0);
	}
}
END_TEST

Suite *make_place_suite(void)
{
	Suite *s = suite_create("place");
	TCase *tc_core = tcase_create("core");
	TCase *tc_errors = tcase_create("errors");
	TCase *tc_apply = tcase_create("apply");

	tcase_add_checked_fixture(tc_core, place_setup, place_teardown);
	tcase_add_test(tc_core, test_place_keys_parse);
	tcase_add_test(tc_core, test_place_keys_bad);
	tcase_add_test(tc_core, test_place_validate_build);
	tcase_add_test(tc_core, test_place_nodes);
	tcase_add_test(tc_core, test_place_local_sets);
	tcase_add_test(tc_core, test_place_local_nodes);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_errors, place_setup, place_teardown);
	tcase_add_test(tc_errors, test_place_check_absent_node);
	tcase_add_test(tc_errors, test_place_check_one_node);
	tcase_add_test(tc_errors, test_place_check_cpus);
	tcase_add_test(tc_errors, test_place_check_unreadable);
	tcase_add_test(tc_errors, test_place_check_rank_nodes);
	suite_add_tcase(s, tc_errors);

	tcase_add_checked_fixture(tc_apply, place_setup, place_teardown);
	tcase_add_test(tc_apply, test_place_apply);
	tcase_add_test(tc_apply, test_place_apply_bad_cpu);
	tcase_add_test(tc_apply, test_place_apply_local);
	tcase_add_test(tc_apply, test_place_apply_rank_node);
	suite_add_tcase(s, tc_apply);
	return s;
}
