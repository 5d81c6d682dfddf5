/* cmd_serve.c - `tfgb serve`: a parameter server, started by hand, by a
 * benchmark for itself or as a rank of a launch.  The server is the run
 * layer's (serve.h), since a launch of throughput or train serves its PSs
 * with it too (role.h); the command has no options or report of its own
 * beyond the job's. */
#include "cmd.h"

#include "serve.h"

int cmd_serve(struct tfgb *t)
{
	return run_serve(t);
}
