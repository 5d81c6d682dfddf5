/* check_model.c - model descriptions (model.c): the shipped models' totals
 * against their published parameter counts, placement, malformed files. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "model.h"

static struct model m;

static void model_teardown(void)
{
	model_free(&m);
}

static void load(const char *name)
{
	struct err err;

	ck_assert_msg(model_load(&m, name, TFGB_SRCDIR, &err) == 0, "%s", err.msg);
}

/* Parses text expected to fail; returns the message. */
static const char *bad(const char *text)
{
	static struct err err;

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(model_parse(&m, "t.model", text, strlen(text), &err), -1);
	ck_assert_ptr_null(m.var);
	return err.msg;
}

/* The published totals, each with the convention the file's header names.
 * ResNet-50: torchvision's 25,557,032 (convolutions without bias); Keras's
 * 25,636,712 is that plus 53,120 statistics plus 26,560 convolution biases. */
START_TEST(test_model_resnet50_totals)
{
	load("resnet50");
	ck_assert_str_eq(m.name, "resnet50_v1");
	ck_assert_uint_eq(m.elems[MODEL_TRAINABLE], 25557032);
	ck_assert_uint_eq(m.elems[MODEL_STATISTIC], 53120);
	ck_assert_uint_eq(m.bytes[MODEL_TRAINABLE], 4 * 25557032ull);
	/* 53 convolutions, 53 batch normalisations (4 variables), 1 dense (2) */
	ck_assert_uint_eq(m.n, 53 + 53 * 4 + 2);
	ck_assert_uint_eq(m.count[MODEL_STATISTIC], 53 * 2);
	/* creation order: the stem first, the classifier last */
	ck_assert_str_eq(m.var[0].name, "conv1/kernel");
	ck_assert_int_eq(m.var[0].ndims, 4);
	ck_assert_uint_eq(m.var[0].elems, 7 * 7 * 3 * 64);
	ck_assert_str_eq(m.var[m.n - 1].name, "fc1000/bias");
	ck_assert_uint_eq(m.var[m.n - 2].elems, 2048 * 1000);
}
END_TEST

START_TEST(test_model_vgg16_totals)
{
	load("vgg16");
	ck_assert_uint_eq(m.elems[MODEL_TRAINABLE], 138357544);
	ck_assert_uint_eq(m.count[MODEL_STATISTIC], 0);
	ck_assert_uint_eq(m.n, 32);
}
END_TEST

START_TEST(test_model_alexnet_totals)
{
	load("alexnet");
	ck_assert_uint_eq(m.elems[MODEL_TRAINABLE], 61100840);
	ck_assert_uint_eq(m.n, 16);
}
END_TEST

START_TEST(test_model_inception_v3_totals)
{
	load("inception_v3");
	/* Keras: 23,851,784 in all, 34,432 of them batch-norm statistics */
	ck_assert_uint_eq(m.elems[MODEL_TRAINABLE] + m.elems[MODEL_STATISTIC], 23851784);
	ck_assert_uint_eq(m.elems[MODEL_STATISTIC], 34432);
	/* 94 convolutions, each with beta, mean and variance; the dense layer */
	ck_assert_uint_eq(m.n, 94 * 4 + 2);
}
END_TEST

/* MobileNet v1 (1.0, 224): Keras's 4,253,864 in all, 4,231,976 of them
 * trainable; the rest, 21,888, the batch normalisations' statistics. */
START_TEST(test_model_mobilenet_v1_totals)
{
	load("mobilenet_v1");
	ck_assert_str_eq(m.name, "mobilenet_v1");
	ck_assert_uint_eq(m.elems[MODEL_TRAINABLE], 4231976);
	ck_assert_uint_eq(m.elems[MODEL_TRAINABLE] + m.elems[MODEL_STATISTIC], 4253864);
	/* 27 convolutions (the stem, 13 depthwise, 13 pointwise), each with
	 * a batch normalisation (4 variables); the classifier's kernel and bias */
	ck_assert_uint_eq(m.n, 27 * 5 + 2);
	ck_assert_uint_eq(m.count[MODEL_STATISTIC], 27 * 2);
	ck_assert_str_eq(m.var[5].name, "conv_dw_1/depthwise_kernel");
	ck_assert_uint_eq(m.var[5].elems, 3 * 3 * 32);
	ck_assert_str_eq(m.var[m.n - 1].name, "conv_preds/bias");
	ck_assert_uint_eq(m.var[m.n - 2].elems, 1024 * 1000);
}
END_TEST

/* Keras's mnist_mlp: 784-512-512-10 with biases, 669,706 parameters. */
START_TEST(test_model_mnist_mlp_totals)
{
	load("mnist_mlp");
	ck_assert_str_eq(m.name, "mnist_mlp");
	ck_assert_uint_eq(m.elems[MODEL_TRAINABLE], 669706);
	ck_assert_uint_eq(m.count[MODEL_STATISTIC], 0);
	ck_assert_uint_eq(m.n, 6);
	ck_assert_uint_eq(m.var[0].elems, 784 * 512);
	ck_assert_uint_eq(m.var[5].elems, 10);
}
END_TEST

START_TEST(test_model_round_robin)
{
	uint64_t ps[3], sum = 0;
	const char *text = "model t\na float32 10 trainable\nb float32 20 trainable\n"
	                   "c float32 30 trainable\nd float32 40 statistic\ne uint8 5 trainable\n";
	struct err err;

	ck_assert_msg(model_parse(&m, "t", text, strlen(text), &err) == 0, "%s", err.msg);
	ck_assert_int_eq(model_place(&m, 3, MODEL_PLACE_ROUND_ROBIN, ps), 0);
	/* the variable's index modulo 3, statistics included */
	for (size_t i = 0; i < m.n; i++)
		ck_assert_int_eq(m.var[i].ps, (int)(i % 3));
	ck_assert_uint_eq(ps[0], 40 + 160);
	ck_assert_uint_eq(ps[1], 80 + 5);
	ck_assert_uint_eq(ps[2], 120);
	for (int i = 0; i < 3; i++)
		sum += ps[i];
	ck_assert_uint_eq(sum, m.bytes[MODEL_TRAINABLE] + m.bytes[MODEL_STATISTIC]);
}
END_TEST

START_TEST(test_model_greedy)
{
	uint64_t ps[2];
	/* bytes 400, 40, 40, 400, 4: greedy puts a on 0, b on 1, c on 1 (80 <
	 * 400), d on 1 (80 < 400), e on 0 (400 < 480) */
	const char *text = "model t\na float32 100 trainable\nb float32 10 trainable\n"
	                   "c float32 10 trainable\nd float32 100 trainable\ne float32 1 trainable\n";
	const int want[] = {0, 1, 1, 1, 0};
	struct err err;

	ck_assert_msg(model_parse(&m, "t", text, strlen(text), &err) == 0, "%s", err.msg);
	ck_assert_int_eq(model_place(&m, 2, MODEL_PLACE_GREEDY, ps), 0);
	for (size_t i = 0; i < m.n; i++)
		ck_assert_int_eq(m.var[i].ps, want[i]);
	ck_assert_uint_eq(ps[0], 404);
	ck_assert_uint_eq(ps[1], 480);
	ck_assert_int_eq(model_place(&m, 0, MODEL_PLACE_GREEDY, ps), -1);
	ck_assert_int_eq(model_place(&m, MODEL_PS_MAX + 1, MODEL_PLACE_GREEDY, NULL), -1);
}
END_TEST

/* Greedy balances a real model better than round-robin: VGG-16's bytes
 * sit in three dense layers, round-robin lands two of them on one PS. */
START_TEST(test_model_placement_imbalance)
{
	uint64_t rr[2], gr[2];

	load("vgg16");
	ck_assert_int_eq(model_place(&m, 2, MODEL_PLACE_ROUND_ROBIN, rr), 0);
	/* fc1's 411 MB kernel is variable 26 and fc2's 67 MB kernel 28: both
	 * even, both on PS 0 */
	ck_assert_str_eq(m.var[26].name, "fc1/kernel");
	ck_assert_int_eq(m.var[26].ps, 0);
	ck_assert_int_eq(m.var[28].ps, 0);
	ck_assert_int_eq(model_place(&m, 2, MODEL_PLACE_GREEDY, gr), 0);
	ck_assert_uint_eq(rr[0] + rr[1], m.bytes[MODEL_TRAINABLE]);
	ck_assert_uint_eq(gr[0] + gr[1], m.bytes[MODEL_TRAINABLE]);
	/* greedy puts fc1 alone on one PS: the other gets everything else */
	ck_assert_int_ne(m.var[26].ps, m.var[28].ps);
	ck_assert_uint_gt(rr[0] > rr[1] ? rr[0] : rr[1], gr[0] > gr[1] ? gr[0] : gr[1]);
}
END_TEST

START_TEST(test_model_class)
{
	ck_assert_int_eq(model_class(1), CAT_SMALL);
	ck_assert_int_eq(model_class(1023), CAT_SMALL);
	ck_assert_int_eq(model_class(1024), CAT_MEDIUM);
	ck_assert_int_eq(model_class((1u << 20) - 1), CAT_MEDIUM);
	ck_assert_int_eq(model_class(1u << 20), CAT_LARGE);
	ck_assert_int_eq(model_class(10u << 20), CAT_LARGE);
	ck_assert_int_eq(model_class((10u << 20) + 1), MODEL_CLASS_OVER);
}
END_TEST

START_TEST(test_model_scalar_and_comments)
{
	const char *text = "# a comment\n\n  model   t  \r\n"
	                   "step int64 scalar statistic # not a comment: 5 fields\n";
	const char *ok = "# c\nmodel t\n\tstep int64 scalar statistic\r\nw float16 2,3 trainable";
	struct err err;

	ck_assert_ptr_nonnull(strstr(bad(text), "t.model:4: more than 4 fields"));
	ck_assert_msg(model_parse(&m, "t", ok, strlen(ok), &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_int_eq(m.var[0].ndims, 0);
	ck_assert_uint_eq(m.var[0].bytes, 8);
	ck_assert_uint_eq(m.var[1].bytes, 12);
	ck_assert_uint_eq(m.var[1].dims[1], 3);
}
END_TEST

START_TEST(test_model_errors)
{
	ck_assert_str_eq(bad("w float32 3 trainable\n"),
	                 "t.model:1: the first line must be 'model NAME'");
	ck_assert_str_eq(bad("# only comments\n"),
	                 "t.model: no 'model NAME' line: not a model description");
	ck_assert_str_eq(bad("model t\n"), "t.model: model 't' lists no variable");
	ck_assert_str_eq(bad("model t\nw float64 3 trainable\n"),
	                 "t.model:2: dtype 'float64': want uint8, float32, float16 or int64");
	ck_assert_str_eq(bad("model t\nw float32 3 frozen\n"),
	                 "t.model:2: kind 'frozen': want trainable or statistic");
	ck_assert_str_eq(bad("model t\nw float32 0,3 trainable\n"),
	                 "t.model:2: shape '0,3': dimension 0 out of range [1, 2147483648]");
	ck_assert_str_eq(bad("model t\nw float32 3;4 trainable\n"),
	                 "t.model:2: shape '3;4': ';' where ',' or the end was expected");
	/* the shape quoted as written, not from the fault on (#42) */
	ck_assert_str_eq(bad("model t\nw float32 4,,4 trainable\n"),
	                 "t.model:2: shape '4,,4': dimension 2 is empty; want dimensions like "
	                 "3,3,64,128 (each 1 .. 2147483648) or 'scalar'");
	ck_assert_str_eq(bad("model t\nw float32 4,x trainable\n"),
	                 "t.model:2: shape '4,x': dimension 2 is not a number; want dimensions "
	                 "like 3,3,64,128 (each 1 .. 2147483648) or 'scalar'");
	ck_assert_str_eq(bad("model t\nw float32 4, trainable\n"),
	                 "t.model:2: shape '4,': dimension 2 is empty; want dimensions like "
	                 "3,3,64,128 (each 1 .. 2147483648) or 'scalar'");
	ck_assert_str_eq(bad("model t\nw float32 3\n"),
	                 "t.model:2: want 'NAME DTYPE SHAPE KIND' "
	                 "(e.g. conv1/kernel float32 7,7,3,64 trainable)");
	ck_assert_str_eq(bad("model t\nw float32 3 trainable\nw float32 4 trainable\n"),
	                 "t.model:3: variable 'w' listed twice");
	ck_assert_str_eq(bad("model t\nw float32 1,2,3,4,5,6,7,8,9 trainable\n"),
	                 "t.model:2: more than 8 dimensions");
	/* 2^15 x 2^15 float32 = 4 GiB: over the 1 GiB a variable may hold */
	ck_assert_str_eq(bad("model t\nw float32 32768,32768 trainable\n"),
	                 "t.model:2: variable 'w' is larger than 1073741824 bytes");
	/* products that overflow 64 bits are refused, never wrapped */
	ck_assert_str_eq(bad("model t\nw uint8 2147483648,2147483648,2147483648 trainable\n"),
	                 "t.model:2: more than 2^64 elements");
	ck_assert_ptr_nonnull(strstr(bad("model t\nw\001 float32 3 trainable\n"), "control"));
}
END_TEST

START_TEST(test_model_load_errors)
{
	struct err err;

	ck_assert_int_eq(model_load(&m, "resnet", TFGB_SRCDIR, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "no such shipped model"));
	ck_assert_ptr_nonnull(strstr(err.msg, "resnet50"));
	ck_assert_int_eq(model_load(&m, "Res Net", TFGB_SRCDIR, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "not a shipped model name"));
	ck_assert_int_eq(model_load(&m, "/nonexistent/x.model", NULL, &err), -1);
	ck_assert_str_eq(err.msg, "/nonexistent/x.model: cannot open: No such file or directory");
	ck_assert_int_eq(model_load(&m, "/dev/null/", NULL, &err), -1);
	/* a path to a shipped file works as well as its name */
	ck_assert_msg(model_load(&m, TFGB_SRCDIR "/conf/models/alexnet.model", NULL, &err) == 0,
	              "%s", err.msg);
	ck_assert_uint_eq(m.elems[MODEL_TRAINABLE], 61100840);
}
END_TEST

Suite *make_model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, NULL, model_teardown);
	tcase_add_test(core, test_model_resnet50_totals);
	tcase_add_test(core, test_model_vgg16_totals);
	tcase_add_test(core, test_model_alexnet_totals);
	tcase_add_test(core, test_model_inception_v3_totals);
	tcase_add_test(core, test_model_mobilenet_v1_totals);
	tcase_add_test(core, test_model_mnist_mlp_totals);
	tcase_add_test(core, test_model_round_robin);
	tcase_add_test(core, test_model_greedy);
	tcase_add_test(core, test_model_placement_imbalance);
	tcase_add_test(core, test_model_class);
	tcase_add_test(core, test_model_scalar_and_comments);
	suite_add_tcase(s, core);
	tcase_add_checked_fixture(errors, NULL, model_teardown);
	tcase_add_test(errors, test_model_errors);
	tcase_add_test(errors, test_model_load_errors);
	suite_add_tcase(s, errors);
	return s;
}
