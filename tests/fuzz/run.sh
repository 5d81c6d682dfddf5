#!/bin/sh
# tests/fuzz/run.sh [TARGET...] - builds the libFuzzer targets
# tests/fuzz/fuzz_<TARGET>.c with clang, ASan and UBSan, and runs each for
# FUZZ_TIME seconds (default 10) from its seed corpus tests/fuzz/corpus/<TARGET>/,
# FUZZ_JOBS targets at a time (default 2).  No argument: every target.
#
#   frame   the shared message header codec (src/transport/frame.c)
#   job     job file + -s overrides + job_validate + --print-config round trip
#   opt     the value parsers opt_parse_* and opt_parse over every key type
#   result  the worker result blob decoder, and encode -> decode round trips
#   ctrl    the control service's request decoders and Collect reply check
#           (src/ctrl/ctrl_wire.c), and its token comparison
#   bundle  the TensorBundle decoders of the tensor modes (src/payload/codec*.c):
#           the server's codec_serve and codec_tf_serve against the wire walker,
#           codec_pull_serve against codec_pull_tf (PullTensor), the worker's
#           codec_check of replies
#
# New inputs and crash files go to a temporary directory, kept and printed
# on a failure; the seed corpora are only read (FUZZ_OUT=DIR keeps each
# target's grown corpus in DIR/<TARGET>/ instead, e.g. to merge it into the
# seeds by hand).  A crash input moved into the seed corpus is a regression
# test: the target then fails at once until the bug is fixed.
# Prints one line per target: runs, coverage (cov: edges, ft: features).
# Run from the top of the tree.  Exit 0 pass, 77 skip (no clang or no
# libFuzzer runtime; the reason on the last line), anything else fail.
CLANG=${CLANG:-clang}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
FUZZ_TIME=${FUZZ_TIME:-10}
FUZZ_JOBS=${FUZZ_JOBS:-2}
ALL="frame job opt result ctrl bundle"

# what reading a job links: the key table and every check job_validate makes
JOBSRC="src/base/err.c src/job/job.c src/payload/validate.c src/job/opt.c src/job/opt_value.c src/payload/payload.c src/host/place.c src/job/tls.c src/payload/limit.c"
JOBSRC="$JOBSRC src/job/job_affinity.c src/job/job_cluster.c src/job/job_monitor.c src/job/job_network.c src/job/job_output.c src/job/job_payload.c src/job/job_print.c"
JOBSRC="$JOBSRC src/payload/codec.c src/payload/codec_serve.c src/payload/codec_var.c"
JOBSRC="$JOBSRC src/base/input.c src/base/rng.c src/base/json.c"
JOBSRC="$JOBSRC src/transport/socket/sk_conf.c src/transport/verbs/vb_conf.c"
JOBSRC="$JOBSRC gen/tfgb.pb-c.c"

# target -> sources beside tests/fuzz/fuzz_<target>.c, libraries, -max_len
srcs() {
	case $1 in
	frame) echo "src/transport/frame.c" ;;
	job | opt | bundle) echo "$JOBSRC" ;;
	result) echo "src/base/err.c src/engine/wresult.c src/transport/tr_counters.c src/base/stats.c src/base/bebuf.c src/host/monitor.c src/host/monitor_pack.c src/host/tcpbytes.c src/base/util.c" ;;
	ctrl) echo "src/ctrl/ctrl_wire.c src/base/sha256.c" ;;
	esac
}
libs() {
	case $1 in
	job | opt | bundle) $PKG_CONFIG --cflags --libs inih libprotobuf-c ;;
	result) echo "-lm -lpthread" ;;
	esac
}
maxlen() {
	case $1 in
	frame) echo 64 ;;
	job) echo 8192 ;;
	opt) echo 1024 ;;
	result) echo 65536 ;;
	ctrl) echo 1024 ;;
	bundle) echo 4096 ;;
	esac
}

targets=${*:-$ALL}
for t in $targets; do
	[ -f "tests/fuzz/fuzz_$t.c" ] || { echo "FAIL: no target tests/fuzz/fuzz_$t.c"; exit 1; }
done
command -v "$CLANG" >/dev/null 2>&1 || { echo "skip: no clang to build the fuzzers (Debian package clang)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tfgb-fuzz.XXXXXX") || exit 1
keep=0
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ $keep = 1 ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

INC=$(for d in src/*/ src/transport/*/; do printf -- '-I%s ' "${d%/}"; done)
SAN="-g -O1 -fno-sanitize-recover=all -D_GNU_SOURCE $INC -Igen"
# jobobj: JOBSRC compiled once, FUZZ_JOBS files at a time, into $tmp/job/
# (instrumented, not linked with libFuzzer's main): three targets link it
# (each compiling it again took three times the CPU of this step)
jobobj() {
	mkdir -p "$tmp/job"
	# shellcheck disable=SC2086
	printf '%s\n' $JOBSRC | xargs -P "$FUZZ_JOBS" -I{} sh -c \
		'o="$1/job/$(echo "$2" | tr / _).o"; "$3" $4 -fsanitize=fuzzer-no-link,address,undefined -c -o "$o" "$2"' \
		sh "$tmp" {} "$CLANG" "$SAN" >"$tmp/job.cc.err" 2>&1
}
# build: one clang per target, FUZZ_JOBS at once
build() {
	t=$1
	# shellcheck disable=SC2046
	if [ "$(srcs "$t")" = "$JOBSRC" ]; then
		set -- "$tmp"/job/*.o
	else
		set -- $(srcs "$t")
	fi
	# shellcheck disable=SC2046,SC2086
	"$CLANG" $SAN -fsanitize=fuzzer,address,undefined -o "$tmp/fuzz_$t" "tests/fuzz/fuzz_$t.c" "$@" \
		$(libs "$t") 2>"$tmp/$t.cc.err"
	rc=$?
	# a shared object that did not compile: its error with the target's
	[ $rc = 0 ] || [ ! -s "$tmp/job.cc.err" ] || cat "$tmp/job.cc.err" >>"$tmp/$t.cc.err"
	echo $rc >"$tmp/$t.cc.rc"
}
# run: -timeout makes a hang a finding; the grown corpus goes to $tmp (or FUZZ_OUT)
run() {
	out=${FUZZ_OUT:+$FUZZ_OUT/$1}
	out=${out:-$tmp/corpus.$1}
	mkdir -p "$out" "$tmp/art.$1"
	"$tmp/fuzz_$1" -max_total_time="$FUZZ_TIME" -max_len="$(maxlen "$1")" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$tmp/art.$1/" "$out" "tests/fuzz/corpus/$1" \
		>"$tmp/$1.log" 2>&1
	echo $? >"$tmp/$1.rc"
}
# each "stage" is run for every target, FUZZ_JOBS at a time
stage() {
	n=0
	pids=
	for t in $targets; do
		"$1" "$t" &
		pids="$pids $!"
		n=$((n + 1))
		if [ "$n" -ge "$FUZZ_JOBS" ]; then
			wait
			n=0
			pids=
		fi
	done
	wait
	pids=
}

for t in $targets; do
	[ "$(srcs "$t")" != "$JOBSRC" ] || { jobobj; break; }
done
stage build
for t in $targets; do
	[ "$(cat "$tmp/$t.cc.rc")" = 0 ] && continue
	if grep -q -e 'libclang_rt.fuzzer' -e 'cannot find -l.*fuzzer' "$tmp/$t.cc.err"; then
		echo "skip: $CLANG has no libFuzzer runtime (Debian: libclang-rt-dev or clang's full install)"
		exit 77
	fi
	cat "$tmp/$t.cc.err"
	echo "FAIL: cannot build tests/fuzz/fuzz_$t.c"
	exit 1
done

stage run
failed=
for t in $targets; do
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$t.log")
	covft=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$tmp/$t.log" | tail -n 1)
	seeds=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
	if [ "$(cat "$tmp/$t.rc")" = 0 ]; then
		echo "ok: fuzz_$t: ${runs:-?} runs in ${FUZZ_TIME}s, ${covft:-no coverage line}, $seeds seeds"
	else
		failed="$failed $t"
		echo "FAIL: fuzz_$t found a problem (exit $(cat "$tmp/$t.rc")):"
		grep -v -e '^#[0-9]' -e '^INFO:' -e '^MS:' -e '^base unit:' -e '^ *#[0-9]* 0x' \
			-e 'NEW_FUNC' -e '^stat::' -e '^NOTE:' -e 'Combine libFuzzer' "$tmp/$t.log" |
			tail -n 30 | sed 's/^/    /'
		ls "$tmp/art.$t/" 2>/dev/null | sed "s|^|    input: $tmp/art.$t/|"
		# which kept crash inputs (regression tests) still fail, one by one
		for f in "tests/fuzz/corpus/$t"/crash_*; do
			[ -f "$f" ] || continue
			"$tmp/fuzz_$t" "$f" >/dev/null 2>&1 || echo "    regression input still failing: $f"
		done
	fi
done
if [ -n "$failed" ]; then
	keep=1
	echo "FAIL:$failed; logs, inputs and binaries kept in $tmp"
	exit 1
fi
exit 0
