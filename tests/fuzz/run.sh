#!/bin/sh
# tests/fuzz/run.sh - builds the libFuzzer target for the socket transport's
# header decoder (tests/fuzz/fuzz_frame.c) with clang, ASan and UBSan, and
# runs it for FUZZ_TIME seconds (default 20) from the seed corpus in
# tests/fuzz/corpus/frame/.  New inputs and crash files go to a temporary
# directory (kept and printed on a failure); the seed corpus is only read.
# Run from the top of the tree.  Exit 0 pass, 77 skip (no clang or no
# libFuzzer runtime; the reason on the last line), anything else fail.
CLANG=${CLANG:-clang}
FUZZ_TIME=${FUZZ_TIME:-20}

command -v "$CLANG" >/dev/null 2>&1 || { echo "skip: no clang to build the fuzzer"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz_frame.XXXXXX") || exit 1
keep=0
trap '[ $keep = 1 ] || rm -rf "$tmp"' EXIT

if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc \
	-o "$tmp/fuzz_frame" tests/fuzz/fuzz_frame.c src/frame.c 2>"$tmp/cc.err"; then
	if grep -q -e 'libclang_rt.fuzzer' -e 'cannot find' "$tmp/cc.err"; then
		echo "skip: $CLANG has no libFuzzer runtime (Debian: libclang-rt-dev or clang's full install)"
		exit 77
	fi
	cat "$tmp/cc.err"
	echo "FAIL: cannot build tests/fuzz/fuzz_frame.c"
	exit 1
fi
mkdir -p "$tmp/corpus"
if ! "$tmp/fuzz_frame" -max_total_time="$FUZZ_TIME" -max_len=64 -print_final_stats=1 \
	-artifact_prefix="$tmp/" "$tmp/corpus" tests/fuzz/corpus/frame >"$tmp/log" 2>&1; then
	keep=1
	tail -n 30 "$tmp/log"
	echo "FAIL: the frame decoder fuzzer found a problem; inputs and log in $tmp"
	exit 1
fi
grep -E '^stat::number_of_executed_runs|^Done' "$tmp/log" | head -n 2
echo "ok: fuzz_frame ran ${FUZZ_TIME}s without a finding"
