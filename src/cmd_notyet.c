/* cmd_notyet.c - commands whose engine is not built yet.  They are in the
 * command table from the start so that scripts and job files written for
 * them get a clear answer, not "unknown command". */
#include "tfgb.h"

static int not_built(const struct tfgb *t)
{
	tfgb_error("%s: not built yet in tfgb %s; 'tfgb genpayload' works today", t->cmd,
	           TFGB_VERSION);
	return TFGB_EXIT_FAIL;
}

int cmd_throughput(struct tfgb *t) { return not_built(t); }
