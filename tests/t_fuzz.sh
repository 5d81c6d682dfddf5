#!/bin/sh
# tfgb-alone: runs two fuzzers at a time, one a CPU
# tfgb-flags: none (reads sources and scripts, or builds on its own: the same under any CFLAGS or SANITIZE)
# t_fuzz.sh - every libFuzzer target of tests/fuzz (job file and overrides,
# value parsers, worker result blobs, the socket frame header, control
# service requests, serialized-mode TensorBundles) for FUZZ_TIME
# seconds each (default 10), two at a time, from their seed corpora; the
# crash inputs kept in the corpora are regression tests.  See
# tests/fuzz/run.sh; `make fuzz FUZZ_TIME=600` runs them longer.
# Exit 0 pass, 77 skip (no clang or no libFuzzer runtime), anything else fail.
FUZZ_TIME=${FUZZ_TIME:-10} exec sh tests/fuzz/run.sh
