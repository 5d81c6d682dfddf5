#!/bin/sh
# tests/valgrind.sh - end-to-end tests with every tfgb process under valgrind
# memcheck (`make valgrind`): the ones the tests start ($TFGB) and the serve
# and worker processes tfgb starts itself (TFGB_EXEC).  Fails on a failed
# test, on any memcheck error, or on any byte definitely lost; prints the
# totals.  VALGRIND_TESTS names the tests (default below), TFGB_TEST_SLOW
# the multiplier of the tests' deadlines (default 10).
cd "$(dirname "$0")/.." || exit 1
command -v valgrind >/dev/null 2>&1 || { echo "no valgrind (Debian package valgrind)"; exit 77; }
[ -x ./tfgb ] || { echo "build ./tfgb first"; exit 1; }
tests=${VALGRIND_TESTS:-"t_latency t_serve t_socket t_throughput t_serialized"}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
trap 'exit 1' INT TERM HUP
export TFGB="$PWD/tests/vg-tfgb.sh" TFGB_EXEC="$PWD/tests/vg-tfgb.sh" TFGB_VG_BIN="$PWD/tfgb"
export TFGB_VG_SUPP="$PWD/tests/valgrind.supp" TFGB_TEST_SLOW=${TFGB_TEST_SLOW:-10}
start=$(date +%s)
pass=0 fail=0 skip=0 failed=""
for t in $tests; do
	mkdir -p "$log/$t"
	out="$log/$t/test.out"
	if TFGB_VG_LOG="$log/$t" timeout 1800 sh "tests/$t.sh" >"$out" 2>&1; then
		pass=$((pass + 1)); echo "PASS: $t"
	else
		rc=$?
		if [ "$rc" = 77 ]; then
			skip=$((skip + 1)); echo "SKIP: $t: $(tail -n 1 "$out")"
		else
			fail=$((fail + 1)); failed="$failed $t"
			echo "FAIL: $t (exit $rc)"; grep -A 3 '^FAIL' "$out" | sed 's/^/    /' | head -n 20
		fi
	fi
done
# the totals over every process's log; a process killed by a signal (the
# tests kill some on purpose) leaves a log without summaries
procs=$(ls "$log"/*/vg.* 2>/dev/null | wc -l)
summed=$(cat "$log"/*/vg.* 2>/dev/null | awk '
	/ERROR SUMMARY:/ { for (i = 1; i <= NF; i++) if ($i == "SUMMARY:") e += $(i + 1); n++ }
	/definitely lost:/ {
		for (i = 1; i <= NF; i++)
			if ($i == "lost:") { v = $(i + 1); gsub(",", "", v); d += v }
	}
	END { printf "%d %d %d", n, e, d }')
set -- $summed
echo "valgrind: $((pass + fail + skip)) tests ($pass passed, $fail failed, $skip skipped)," \
	"$procs tfgb processes ($1 with summaries), $2 errors, $3 bytes definitely lost," \
	"$(( $(date +%s) - start ))s"
if [ "$2" != 0 ] || [ "$3" != 0 ]; then
	for f in "$log"/*/vg.*; do
		grep -q "ERROR SUMMARY: [1-9]\|definitely lost: [1-9]" "$f" && { echo "== $f"; cat "$f"; }
	done
fi
[ "$fail" = 0 ] && [ "$2" = 0 ] && [ "$3" = 0 ]
