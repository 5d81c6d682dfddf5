/* job_int.h - what job.c shares with the files of the job model's own
 * sections (job_payload.c, job_cluster.c, job_output.c, job_monitor.c,
 * job_affinity.c, job_network.c): the shape of such a section and the helpers their key
 * tables and rules use.  Only those files include it.
 *
 * A section of the job model's own is like a registered struct job_section
 * (job.h), but its keys are fields of struct job, read across the modules,
 * and its rules may complete the job (scheme custom sets iovecs).
 */
#ifndef TFGB_JOB_INT_H
#define TFGB_JOB_INT_H

#include <stddef.h>

#include "opt_table.h"

/* Included after job.h, never including it: job.c includes this header,
 * and the include graph of src/ has no cycle (tests/t_includes.sh). */
struct err;
struct job;
struct opt_def;

struct job_core_section {
	const char *name;           /* "payload": the [name] of the job file */
	const struct opt_def *keys; /* NULL-name terminated, .off into struct job */
	/* The section's cross-key rules, run by job_check_keys, or NULL: 0, or
	 * -1 with err set by job_key_err (which names the key and where it was
	 * set). */
	int (*check)(struct job *j, struct err *err);
};

/* The sections, each defined in its own file; job.c lists them in file
 * order and runs their rules. */
extern const struct job_core_section job_sec_cluster, job_sec_payload, job_sec_output,
	job_sec_monitor, job_sec_affinity, job_sec_network;

/* The layer a key's value came from: 0 for a default, 1 for the job file, 2
 * for -s (or an option of its own): later layers win. */
int job_key_layer(const struct job *j, const char *section, const char *name);

/* Names of enum values, each bound to its enumerator; the assertions keep
 * the arrays exactly one NULL longer than their enums. */
#define LAST_IS(names, last) \
	_Static_assert(sizeof names / sizeof names[0] == (last) + 2, #names " matches its enum")

/* For the key tables (RANGE and the units: opt_table.h) */
#define J(field) offsetof(struct job, field)

#endif
