/* job_payload.c - the job model's [payload] section: its keys, the names of
 * its values and its rules (the chosen categories, the custom list, the
 * largest payload). */
#include "job.h"
#include "job_int.h"

#include <stdint.h>

static const char *const scheme_names[] = {
	[SCHEME_UNIFORM] = "uniform", [SCHEME_RANDOM] = "random", [SCHEME_SKEW] = "skew",
	[SCHEME_CUSTOM] = "custom", [SCHEME_CUSTOM + 1] = NULL};
LAST_IS(scheme_names, SCHEME_CUSTOM);
static const char *const cat_names[] = {
	[CAT_SMALL] = "small", [CAT_MEDIUM] = "medium", [CAT_LARGE] = "large", [CAT_COUNT] = NULL};
LAST_IS(cat_names, CAT_LARGE);
static const char *const dtype_names[] = {
	[DTYPE_UINT8] = "uint8", [DTYPE_FLOAT32] = "float32", [DTYPE_FLOAT16] = "float16",
	[DTYPE_INT64] = "int64", [DTYPE_INT64 + 1] = NULL};
LAST_IS(dtype_names, DTYPE_INT64);
static const char *const fill_names[] = {
	[FILL_PATTERN] = "pattern", [FILL_ZEROS] = "zeros", [FILL_ZEROS + 1] = NULL};
LAST_IS(fill_names, FILL_ZEROS);

/* Sizes and their ranges follow Table 1 of the TF-gRPC-Bench paper. */
static const struct opt_def payload_keys[] = {
	{"payload", "scheme", OPT_ENUM, J(scheme), "uniform", .values = scheme_names,
	 .help = "how iovec buffers are chosen: uniform, random, skew, or an explicit custom list"},
	{"payload", "iovecs", OPT_INT, J(iovecs), "10", RANGE(1, 65536),
	 .help = "number of iovec buffers in one payload"},
	{"payload", "categories", OPT_ENUM_LIST, J(categories), "small, medium, large",
	 .values = cat_names,
	 .help = "buffer categories to use, in layout order (random and skew need two or more)"},
	{"payload", "small", OPT_SIZE, J(cat_size[CAT_SMALL]), "10B",
	 .min = CAT_SMALL_MIN, .max = CAT_MEDIUM_MIN,
	 .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_MAX_OPEN,
	 .help = "size of a Small buffer"},
	{"payload", "medium", OPT_SIZE, J(cat_size[CAT_MEDIUM]), "10KiB",
	 .min = CAT_MEDIUM_MIN, .max = CAT_LARGE_MIN,
	 .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_MAX_OPEN,
	 .help = "size of a Medium buffer"},
	{"payload", "large", OPT_SIZE, J(cat_size[CAT_LARGE]), "1MiB",
	 RANGE(CAT_LARGE_MIN, CAT_LARGE_MAX),
	 .help = "size of a Large buffer"},
	{"payload", "bias", OPT_ENUM, J(bias), "large", .values = cat_names,
	 .help = "skew only: the category that gets 60% of the buffers"},
	{"payload", "iovec", OPT_SIZE_LIST, J(iovec), "", .min = CAT_SMALL_MIN, .max = PAYLOAD_BUF_MAX,
	 .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_LIST_APPEND, .max_items = 65536,
	 .help = "custom only: the buffer sizes, in order; continue long lists on indented lines"},
	{"payload", "dtype", OPT_ENUM, J(dtype), "uint8", .values = dtype_names,
	 .help = "serialized modes: element type each tensor declares; sizes must be whole elements"},
	{"payload", "fill", OPT_ENUM, J(fill), "pattern", .values = fill_names,
	 .help = "what the buffers hold: the seeded pattern (incompressible) or zeros"},
	{0},
};

const char *job_scheme_name(int s) { return scheme_names[s]; }
const char *job_cat_name(int c) { return cat_names[c]; }
const char *job_dtype_name(int d) { return dtype_names[d]; }

unsigned job_dtype_size(int d)
{
	static const unsigned size[] = {[DTYPE_UINT8] = 1, [DTYPE_FLOAT32] = 4,
	                                [DTYPE_FLOAT16] = 2, [DTYPE_INT64] = 8};
	return size[d];
}

int job_dtype_number(int d)
{
	/* tensorflow/core/framework/types.proto */
	static const int number[] = {[DTYPE_UINT8] = 4, [DTYPE_FLOAT32] = 1,
	                             [DTYPE_FLOAT16] = 19, [DTYPE_INT64] = 9};
	return number[d];
}

/* scheme custom: the list is the layout, and sets iovecs. */
static int custom_check(struct job *j, struct err *err)
{
	uint64_t total = 0;

	if (j->iovec.n == 0 && job_key_set(j, "payload", "iovec"))
		return job_key_err(j, err, "payload", "iovec",
		                   "scheme custom needs a list of buffer sizes");
	if (j->iovec.n == 0)
		return job_key_err(j, err, "payload", "scheme",
		                   "needs a list of buffer sizes in payload.iovec");
	/* the list sets the count; an iovecs from the same or a later layer
	 * (file < -s) than the list must agree with it, one from an earlier
	 * layer (a full job file under -s payload.iovec=...) gives way */
	if (job_key_layer(j, "payload", "iovecs") >= job_key_layer(j, "payload", "iovec") &&
	    job_key_layer(j, "payload", "iovecs") > 0 &&
	    (uint64_t)j->iovecs != j->iovec.n)
		return job_key_err(j, err, "payload", "iovecs",
		                   "scheme custom lists %zu sizes in payload.iovec; "
		                   "drop iovecs or make it match", j->iovec.n);
	j->iovecs = (int64_t)j->iovec.n;
	for (size_t i = 0; i < j->iovec.n; i++)
		total += j->iovec.v[i];
	if (total > JOB_PAYLOAD_MAX)
		return job_key_err(j, err, "payload", "iovec",
		                   "payload would be %llu bytes; the most is %llu (1GiB)",
		                   (unsigned long long)total, (unsigned long long)JOB_PAYLOAD_MAX);
	return 0;
}

/* The schemes that draw from the categories. */
static int categories_check(struct job *j, struct err *err)
{
	uint64_t biggest = 0, total;

	if (j->iovec.n)
		return job_key_err(j, err, "payload", "iovec",
		                   "is used only with scheme = custom (scheme is %s)",
		                   scheme_names[j->scheme]);
	for (int i = 0; i < j->categories.n; i++)
		if (j->cat_size[j->categories.v[i]] > biggest)
			biggest = j->cat_size[j->categories.v[i]];
	total = biggest * (uint64_t)j->iovecs; /* the worst case of scheme random */
	if (total > JOB_PAYLOAD_MAX)
		return job_key_err(j, err, "payload", "iovecs",
		                   "payload could reach %llu bytes; the most is %llu (1GiB)",
		                   (unsigned long long)total, (unsigned long long)JOB_PAYLOAD_MAX);
	return 0;
}

static int payload_check(struct job *j, struct err *err)
{
	int ncat = j->categories.n;

	if (ncat == 0)
		return job_key_err(j, err, "payload", "categories",
		                   "name at least one of small, medium, large");
	if ((j->scheme == SCHEME_RANDOM || j->scheme == SCHEME_SKEW) && ncat < 2)
		return job_key_err(j, err, "payload", "categories",
		                   "scheme %s needs at least two categories", scheme_names[j->scheme]);
	if (j->scheme == SCHEME_SKEW) {
		int found = 0;
		for (int i = 0; i < ncat; i++)
			found |= j->categories.v[i] == j->bias;
		if (!found)
			return job_key_err(j, err, "payload", "bias",
			                   "must be one of the chosen categories");
	}
	return j->scheme == SCHEME_CUSTOM ? custom_check(j, err) : categories_check(j, err);
}

const struct job_core_section job_sec_payload = {"payload", payload_keys, payload_check};
