/* report.h - a benchmark result as text (OSU style), CSV or JSON. */
#ifndef TFGB_REPORT_H
#define TFGB_REPORT_H

#include <stdio.h>

#include "engine.h"
#include "job.h"
#include "payload.h"

struct report {
	const char *benchmark;          /* "TF-gRPC-P2P-Latency" */
	const char *command;            /* "latency" */
	const struct job *job;
	const struct payload *payload;
	const char *transport_version;  /* "grpc core 29.0.0" */
	const struct engine_result *res;
	const struct opt_hostport *ps;  /* the PS addresses called */
	int nps;
};

/* Writes the report in job->format.  Returns 0, or -1 when out of memory. */
int report_print(const struct report *r, FILE *f);

#endif
