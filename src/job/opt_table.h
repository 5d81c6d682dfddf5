/* opt_table.h - shorthands for writing a key table (struct opt_def rows,
 * opt.h): the job model's own sections (job_int.h) and the sections of the
 * modules above it (a transport's [socket], [verbs], [mpi], [grpc]; the
 * engine's [train]).  Only the .c files that hold such a table include it,
 * after the header that brings opt.h: the short names stay out of every
 * other file.  Each table keeps its own offsetof shorthand (J, S, V, M, G),
 * as each is of its own struct.
 */
#ifndef TFGB_OPT_TABLE_H
#define TFGB_OPT_TABLE_H

/* A closed range [lo, hi] of an INT, SIZE or DURATION key, or of each item
 * of a list. */
#define RANGE(lo, hi) .min = (lo), .max = (hi), .flags = OPT_HAS_MIN | OPT_HAS_MAX

/* Bounds in the keys' own units: bytes, nanoseconds */
#define KIB (1ll << 10)
#define MIB (1ll << 20)
#define GIB (1ll << 30)
#define SEC 1000000000ll

#endif
