/* train.c - the [train] keys and a training run's plan (train.h). */
#include "train.h"

#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "fault.h"
#include "payload.h"
#include "opt_table.h"
#include "transport.h"

#define S(field) offsetof(struct train_conf, field)

static const char *const placements[] = {"round_robin", "greedy", NULL};
static const char *const strategies[] = {"ps", "allreduce", NULL};

static const struct opt_def keys[] = {
	{"train", "model", OPT_STRING, S(model), "resnet50",
	 .help = "train: a shipped model (alexnet, inception_v3, mnist_mlp, mobilenet_v1, "
	         "resnet50, vgg16) or a path"},
	{"train", "placement", OPT_ENUM, S(placement), "round_robin", .values = placements,
	 .help = "train: variables over the PSs round-robin in creation order, or greedily by size"},
	{"train", "sync", OPT_BOOL, S(sync), "true",
	 .help = "train: synchronous steps (every worker waits for the others before each step)"},
	{"train", "steps", OPT_INT, S(steps), "10", RANGE(1, 1000000),
	 .help = "train: measured steps per worker"},
	{"train", "warmup_steps", OPT_INT, S(warmup_steps), "2", RANGE(0, 1000000),
	 .help = "train: steps run first and not measured"},
	{"train", "inflight", OPT_INT, S(inflight), "1024", RANGE(1, 65536),
	 .help = "train: transfers a worker keeps outstanding per PS connection"},
	{"train", "statistics", OPT_BOOL, S(statistics), "true",
	 .help = "train: the batch-norm moving statistics are pulled and pushed too"},
	{"train", "strategy", OPT_ENUM, S(strategy), "ps", .values = strategies,
	 .help = "train: parameter servers, or an all-reduce of the gradients among the workers"},
	{"train", "bucket_bytes", OPT_SIZE, S(bucket_bytes), "25MiB", RANGE(4, GIB),
	 .help = "train: allreduce: gradients fused into buckets of at most this many bytes"},
	{0},
};

const struct job_section train_section = {
	.name = "train",
	.keys = keys,
	.size = sizeof(struct train_conf),
};

int train_registry_init(void)
{
	if (tr_registry_init() < 0 || job_register(NULL, 1, &train_section) < 0 ||
	    job_register(NULL, 1, &coll_section) < 0 || job_register(NULL, 1, &fault_section) < 0)
		return -1;
	return 0;
}

const struct train_conf *train_conf_of(const struct job *j)
{
	return job_section_get(j, &train_section);
}

static const char *const class_names[MODEL_CLASS_COUNT] = {
	[CAT_SMALL] = "small", [CAT_MEDIUM] = "medium", [CAT_LARGE] = "large",
	[MODEL_CLASS_OVER] = "over_large",
};

const char *train_class_name(int cls)
{
	return cls >= 0 && cls < MODEL_CLASS_COUNT ? class_names[cls] : "?";
}

uint64_t train_plan_wire_max(const struct job *j, const struct train_plan *p)
{
	return j->mode == MODE_NONSERIALIZED ? p->max_bytes : p->max_bundle;
}

int train_plan_fits(const struct job *j, const struct train_plan *p, struct err *err)
{
	uint64_t need = train_plan_wire_max(j, p);

	if (need <= j->max_message)
		return 0;
	return job_key_err(j, err, "server", "max_message", "is smaller than the largest "
	                   "%s of model '%s' (%llu bytes); set it to at least that",
	                   j->mode == MODE_NONSERIALIZED ? "variable" : "variable's bundle",
	                   p->m.name, (unsigned long long)need);
}

void train_plan_free(struct train_plan *p)
{
	if (!p)
		return;
	model_free(&p->m);
	free(p->var);
	free(p->ps_bytes);
	free(p->ps_vars);
	memset(p, 0, sizeof *p);
}

/* Lists the transferred variables of a placed model. */
static int plan_vars(struct train_plan *p, int statistics)
{
	p->var = calloc(p->m.n ? p->m.n : 1, sizeof *p->var);
	p->ps_bytes = calloc((size_t)p->nps, sizeof *p->ps_bytes);
	p->ps_vars = calloc((size_t)p->nps, sizeof *p->ps_vars);
	if (!p->var || !p->ps_bytes || !p->ps_vars)
		return -1;
	for (size_t i = 0; i < p->m.n; i++) {
		const struct model_var *v = &p->m.var[i];

		if (v->kind == MODEL_STATISTIC && !statistics)
			continue;
		struct step_var *sv = &p->var[p->nvars++];

		*sv = (struct step_var){.conn = v->ps, .bytes = v->bytes,
		                        .t = {.name = v->name, .dtype = job_dtype_number(v->dtype),
		                              .nshape = (size_t)v->ndims, .bytes = v->bytes}};
		for (int d = 0; d < v->ndims; d++)
			sv->t.shape[d] = v->dims[d];
		p->ps_bytes[v->ps] += v->bytes;
		p->ps_vars[v->ps]++;
		p->step_bytes += v->bytes;
		if (v->bytes > p->max_bytes)
			p->max_bytes = v->bytes;
		if (codec_var_bundle_len(&sv->t) > p->max_bundle)
			p->max_bundle = codec_var_bundle_len(&sv->t);
	}
	return 0;
}

int train_plan(const struct job *j, const char *tree, struct train_plan *p, struct err *err)
{
	const struct train_conf *c = train_conf_of(j);
	struct err merr;

	memset(p, 0, sizeof *p);
	p->nps = (int)j->ps_count;
	if (model_load(&p->m, c->model, tree, &merr) < 0) {
		job_key_err(j, err, "train", "model", "%s", merr.msg);
		return -1;
	}
	if (model_place(&p->m, p->nps, (enum model_place)c->placement, NULL) < 0) {
		job_key_err(j, err, "cluster", "ps_count", "more PSs than a placement spreads over "
		            "(at most %d)", MODEL_PS_MAX);
		goto fail;
	}
	if (plan_vars(p, c->statistics) < 0) {
		err_set(err, "train: out of memory for model '%s'", p->m.name);
		goto fail;
	}
	if (p->nvars == 0) {
		job_key_err(j, err, "train", "model", "model '%s' has no variable to transfer",
		            p->m.name);
		goto fail;
	}
	return 0;
fail:
	train_plan_free(p);
	return -1;
}

int train_buckets(const struct train_plan *p, uint64_t cap, uint64_t *count, size_t *n)
{
	size_t b = 0;
	int open = 0;

	for (size_t k = p->m.n; k-- > 0;) {
		const struct model_var *v = &p->m.var[k];
		uint64_t elems = (v->bytes + sizeof(float) - 1) / sizeof(float);
		if (v->kind != MODEL_TRAINABLE)
			continue;
		if (open && (count[b] + elems) * sizeof(float) > cap) {
			b++;
			open = 0;
		}
		if (!open) {
			if (b >= *n)
				return -1;
			count[b] = 0;
			open = 1;
		}
		count[b] += elems;
	}
	*n = b + open;
	return 0;
}
