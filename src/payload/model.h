/* model.h - a model's variables and their placement over parameter servers.
 *
 * A model description (NAME.model in conf/models, its format described at
 * the top of conf/models/gen-models.py) lists the variables of a model in
 * the order the framework creates them, each a
 * name, a dtype, a shape and a kind: trainable (pulled from its PS and
 * pushed back as a gradient of the same size every step) or statistic (a
 * non-trainable variable, batch normalisation's moving mean and variance,
 * held on the PS).  Placement deals the variables out over P PSs the way
 * TensorFlow does: round-robin in creation order (replica_device_setter's
 * default strategy) or greedily by size (tf_cnn_benchmarks: each variable
 * to the PS holding the fewest bytes so far, the lowest index on a tie).
 *
 * Bounds: at most MODEL_VARS_MAX variables, names up to MODEL_NAME_MAX - 1
 * bytes, MODEL_DIMS_MAX dimensions of 1 .. 2^31 each, at most
 * MODEL_VAR_BYTES_MAX bytes per variable, a file of at most
 * MODEL_FILE_MAX bytes.  All arithmetic is 64-bit and checked.
 */
#ifndef TFGB_MODEL_H
#define TFGB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"

#define MODEL_VARS_MAX 65536
#define MODEL_NAME_MAX 256
#define MODEL_DIMS_MAX 8
#define MODEL_VAR_BYTES_MAX (1ull << 30)
#define MODEL_FILE_MAX (16u << 20)
/* Most parameter servers a placement spreads over (cluster.ps_count's bound). */
#define MODEL_PS_MAX 1024

enum model_kind { MODEL_TRAINABLE, MODEL_STATISTIC, MODEL_KIND_COUNT };
enum model_place { MODEL_PLACE_ROUND_ROBIN, MODEL_PLACE_GREEDY };

/* Size classes of a variable: Table 1's three (payload_cat order), then one
 * for variables above Large's 10 MiB (VGG-16's first dense layer). */
#define MODEL_CLASS_OVER CAT_COUNT
#define MODEL_CLASS_COUNT (CAT_COUNT + 1)

struct model_var {
	char *name;
	int dtype;                       /* enum job_dtype */
	int kind;                        /* enum model_kind */
	int ndims;                       /* 0 for a scalar */
	uint32_t dims[MODEL_DIMS_MAX];
	uint64_t elems;                  /* product of dims (1 for a scalar) */
	uint64_t bytes;                  /* elems x dtype size */
	int ps;                          /* set by model_place, else -1 */
};

struct model {
	char name[MODEL_NAME_MAX];       /* from the `model NAME` line */
	size_t n;
	struct model_var *var;           /* n entries, creation order */
	uint64_t elems[MODEL_KIND_COUNT];
	uint64_t bytes[MODEL_KIND_COUNT];
	size_t count[MODEL_KIND_COUNT];
};

/* Parses a description held in memory; `file` names it in messages
 * ("FILE:LINE: ..." one line).  0, or -1 with err set; m is empty on error. */
int model_parse(struct model *m, const char *file, const char *text, size_t len,
                struct err *err);

/* Reads and parses a file, read once and at most MODEL_FILE_MAX bytes.  A
 * `name` with a '/' or ending in ".model" is a path; any other names a
 * shipped model, looked up as TREE/conf/models/NAME.model (TREE: the
 * directory of the running tfgb, so a build tree finds its own; NULL to
 * skip) and then DATADIR/models/NAME.model.  0, or -1 with err set. */
int model_load(struct model *m, const char *name, const char *tree, struct err *err);

void model_free(struct model *m);

/* Places every variable on one of nps PSs (1 .. MODEL_PS_MAX) and, when
 * ps_bytes is not NULL, stores each PS's bytes in ps_bytes[0 .. nps-1].
 * 0, or -1 when nps is out of range. */
int model_place(struct model *m, int nps, enum model_place how, uint64_t *ps_bytes);

/* The size class of a variable of `bytes` bytes (CAT_SMALL .. MODEL_CLASS_OVER). */
int model_class(uint64_t bytes);

const char *model_kind_name(int kind);
const char *model_place_name(int how);

#endif
