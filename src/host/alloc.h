/* alloc.h - the malloc a tfgb process runs with ([job] allocator).
 *
 * glibc's malloc as shipped gives freed memory back to the kernel and
 * faults it in again on the next call, which with large payloads decides
 * the gRPC figures (tfgb.ini(5), ALLOCATOR).  So the allocator is a
 * dimension of the job: every process tfgb starts runs the job's, and every
 * result names the one each process measured actually had.
 *
 *  glibc       glibc's malloc untouched
 *  glibc-kept  glibc's malloc told at start-up, before any thread, to keep
 *              freed memory (mallopt: trim threshold 1GiB, top pad 64MiB,
 *              mmap threshold 32MiB, the most glibc takes, and one arena:
 *              glibc unmaps a thread arena's heap once it is empty)
 *  jemalloc, tcmalloc, mimalloc
 *              the Debian library (libjemalloc2, libtcmalloc-minimal4,
 *              libmimalloc2.0) preloaded: the process executes itself again
 *              with the library first in LD_PRELOAD, before any thread;
 *              the job goes to the new image on a memfd (never read from
 *              its file again: a pipe can be read once), with where each
 *              key came from, so that later messages still name the file,
 *              the line and the key.  Children inherit LD_PRELOAD.
 *
 * The libraries are looked for in the directory of the C library, or in
 * $TFGB_ALLOC_LIBDIR when set (the tests point it at an empty directory to
 * see the refusal of a missing allocator).
 *
 * Detection (alloc_detect) does not trust the request: the allocator is
 * the object that defines `malloc` in this process (dladdr), confirmed by a
 * symbol only it exports (mallctl, tc_version, mi_version) for its
 * version.  A sanitizer build runs its own allocator ("asan"), and so does
 * a process under valgrind or with a malloc preloaded that tfgb does not
 * know ("other", with the library): they are left alone, the job's choice
 * cannot apply there and the record says so.
 */
#ifndef TFGB_ALLOC_H
#define TFGB_ALLOC_H

#include <stddef.h>

#include "job.h"

struct alloc_info {
	char name[16];     /* "glibc", "glibc-kept", "jemalloc", "tcmalloc", "mimalloc",
	                    * "asan", "other", or "" when not known */
	char version[64];  /* "2.36", "5.3.0-0-g54eaed1d", or "" */
	char library[192]; /* the file that defines malloc, or "" */
};

/* Applies j->allocator to this process, early (after the job is loaded,
 * before any thread).  Returns 0 to go on; does not return when it executes
 * tfgb again with the allocator preloaded; -2 with err set (exit status 2)
 * when the allocator is not installed; -1 with err set when it could not be
 * applied (exit status 1).  argv is main's. */
int alloc_apply(const struct job *j, char **argv, struct err *err);

/* When this process is the image alloc_apply executed: loads the job it
 * handed over (effective text and the keys' origins) into j, named `name`
 * in messages, and returns 1; 0 when there is none; -1 with err set. */
int alloc_job_inherited(struct job *j, const char *name, struct err *err);

/* The allocator this process runs with. */
void alloc_detect(struct alloc_info *a);

/* "jemalloc 5.3.0-0-g54eaed1d" or "unknown"; the name alone without a
 * version. */
void alloc_text(const struct alloc_info *a, char *buf, size_t len);

/* The Debian package and library file of a preloaded allocator, NULL for
 * glibc and glibc-kept. */
const char *alloc_package(int allocator);
const char *alloc_soname(int allocator);

#endif
