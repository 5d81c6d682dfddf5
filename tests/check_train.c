/* check_train.c - the [train] section and a run's plan (train.c): what
 * travels, each PS's share, and the job errors a plan can raise. */
#include <string.h>

#include "check_tfgb.h"
#include "train.h"

static struct job j;
static struct train_plan p;

static void train_setup(void)
{
	ck_assert_int_eq(job_init(&j), 0);
}

static void train_teardown(void)
{
	train_plan_free(&p);
	job_free(&j);
}

static void set(const char *kv)
{
	struct err err;

	ck_assert_msg(job_override(&j, kv, 1, &err) == 0, "%s", err.msg);
}

static int plan(struct err *err)
{
	train_plan_free(&p);
	return train_plan(&j, TFGB_SRCDIR, &p, err);
}

/* Every variable of ResNet-50 travels by default; without the statistics
 * 106 of them stay (53,120 floats), and the PS shares add up to the step. */
START_TEST(test_train_plan_statistics)
{
	struct err err;
	uint64_t all, sum = 0;

	set("cluster.ps_count=2");
	ck_assert_msg(plan(&err) == 0, "%s", err.msg);
	ck_assert_uint_eq(p.nvars, 267);
	all = p.step_bytes;
	ck_assert_uint_eq(all, (25557032ull + 53120ull) * 4);
	set("train.statistics=no");
	ck_assert_msg(plan(&err) == 0, "%s", err.msg);
	ck_assert_uint_eq(p.nvars, 267 - 106);
	ck_assert_uint_eq(p.step_bytes, 25557032ull * 4);
	for (int k = 0; k < p.nps; k++)
		sum += p.ps_bytes[k];
	ck_assert_uint_eq(sum, p.step_bytes);
	ck_assert_uint_eq(p.ps_vars[0] + p.ps_vars[1], p.nvars);
	ck_assert_uint_eq(p.max_bytes, 3ull * 3 * 512 * 512 * 4); /* res5 3x3 convolutions */
}
END_TEST

/* Greedy evens VGG-16's PSs out better than round-robin, which puts every
 * kernel on PS 0 (kernels and biases alternate). */
START_TEST(test_train_plan_vgg16_imbalance)
{
	struct err err;
	uint64_t rr1;

	set("cluster.ps_count=2");
	set("train.model=vgg16");
	set("server.max_message=512MiB");
	ck_assert_msg(plan(&err) == 0, "%s", err.msg);
	rr1 = p.ps_bytes[1];
	ck_assert_uint_eq(rr1, (64 + 64 + 128 + 128 + 256 * 3 + 512 * 6 + 4096 * 2 + 1000) * 4);
	set("train.placement=greedy");
	ck_assert_msg(plan(&err) == 0, "%s", err.msg);
	ck_assert_uint_gt(p.ps_bytes[0] < p.ps_bytes[1] ? p.ps_bytes[0] : p.ps_bytes[1], rr1);
}
END_TEST

/* A variable above server.max_message is the job's error, naming the key
 * (--list shows such a model all the same). */
START_TEST(test_train_plan_max_message)
{
	struct err err;

	set("train.model=vgg16");
	ck_assert_msg(plan(&err) == 0, "%s", err.msg);
	ck_assert_int_eq(train_plan_fits(&j, &p, &err), -1);
	ck_assert_msg(strstr(err.msg, "server.max_message = 64MiB: is smaller than the largest "
	                              "variable of model 'vgg16' (411041792 bytes)") != NULL,
	              "%s", err.msg);
	set("server.max_message=392MiB");
	ck_assert_int_eq(train_plan_fits(&j, &p, &err), 0);
}
END_TEST

START_TEST(test_train_plan_unknown_model)
{
	struct err err;

	set("train.model=lenet");
	ck_assert_int_eq(plan(&err), -1);
	ck_assert_msg(strstr(err.msg, "train.model = lenet: lenet: no such shipped model") != NULL,
	              "%s", err.msg);
}
END_TEST

Suite *make_train_suite(void)
{
	Suite *s = suite_create("train");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, train_setup, train_teardown);
	tcase_add_test(core, test_train_plan_statistics);
	tcase_add_test(core, test_train_plan_vgg16_imbalance);
	suite_add_tcase(s, core);
	tcase_add_checked_fixture(errors, train_setup, train_teardown);
	tcase_add_test(errors, test_train_plan_max_message);
	tcase_add_test(errors, test_train_plan_unknown_model);
	suite_add_tcase(s, errors);
	return s;
}
