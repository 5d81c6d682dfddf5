/* plot_grid.c - a grid's document (repeated --sweep) read back as points
 * for `tfgb plot` (plot.h): which of its keys goes on x, and how each
 * point carries its other keys' values. */
#include "plot.h"

#include <string.h>

#include "jsonr.h"

/* Whether every value of the array at token vals is a number, or a
 * number with a unit ("250Mbit"): a key to draw lines against. */
static int all_numeric(const struct jsonr *r, int vals)
{
	char v[PLOT_TEXT_MAX];
	const char *u;
	double x;

	for (size_t i = 0; i < r->tok[vals].count; i++) {
		int one = jsonr_arr_get(r, vals, i);
		plot_jtext(r, one, "", v, sizeof v);
		if (jsonr_type(r, one) != JSONR_NUMBER && plot_unit_value(v, &x, &u) < 0)
			return 0;
	}
	return 1;
}

/* A grid's key on x: the last of its keys whose values are numbers, else
 * its last key.  Its token in "sweep.keys". */
int plot_grid_x(const struct jsonr *r, int gkeys)
{
	size_t n = r->tok[gkeys].count;

	for (size_t k = n; k-- > 0;)
		if (all_numeric(r, jsonr_find(r, jsonr_arr_get(r, gkeys, k), "values")))
			return (int)k;
	return (int)n - 1;
}

/* The key of plot's own that a result's value of job key `key` fills
 * (json_point), or -1: a grid's keys off x that it tells apart. */
static int grid_own(const char *key)
{
	static const struct { const char *job; int key; } own[] = {
		{"job.transport", PK_TRANSPORT}, {"train.strategy", PK_STRATEGY},
		{"job.mode", PK_MODE}, {"payload.scheme", PK_SCHEME}, {"payload.iovecs", PK_IOVECS},
		{"payload.size", PK_BYTES}, {"cluster.ps_count", PK_SHAPE},
		{"cluster.workers", PK_WORKERS}, {"job.inflight", PK_INFLIGHT}, {"job.rpc", PK_RPC},
		{"train.model", PK_MODEL}, {"network.delay", PK_DELAY}, {"network.rate", PK_RATE},
		{"network.loss", PK_LOSS}, {"network.congestion", PK_CC},
	};

	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (!strcmp(own[i].job, key))
			return own[i].key;
	return -1;
}

/* Point p of grid r (points[i], x its key on x): the value on x, and each
 * other key that no key of plot's own carries ("train.model" is the
 * model's, "grpc.compression" none, a train result's cluster.ps_count
 * none) in PK_GRID. */
void plot_grid_point(struct plot_point *p, const struct jsonr *r, size_t i, int x)
{
	int gkeys = jsonr_find(r, 0, "sweep.keys");
	int pt = jsonr_arr_get(r, jsonr_find(r, 0, "sweep.points"), i);
	char key[136], unit[8], v[PLOT_TEXT_MAX];

	for (size_t k = 0; k < r->tok[gkeys].count; k++) {
		int at = jsonr_arr_get(r, gkeys, k), own;
		plot_jtext(r, at, "key", key, sizeof key);
		plot_jtext(r, jsonr_arr_get(r, pt, k), "", v, sizeof v);
		if ((int)k == x) {
			plot_jtext(r, at, "unit", unit, sizeof unit);
			snprintf(p->sweep_key, sizeof p->sweep_key, "%s", key);
			plot_sweep_value(p, v, unit);
			continue;
		}
		own = grid_own(key);
		/* the result's own value of that key tells them apart (a link's
		 * "" too: no emulated link), where the result records it */
		if (own >= 0 && (*p->key[own] || (own >= PK_DELAY && own <= PK_CC)))
			continue;
		snprintf(p->key[PK_GRID] + strlen(p->key[PK_GRID]),
		         PLOT_TEXT_MAX - strlen(p->key[PK_GRID]), "%s%s=%s",
		         *p->key[PK_GRID] ? ", " : "", key, v);
	}
}
