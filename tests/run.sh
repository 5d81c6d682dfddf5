#!/bin/sh
# Runs the Check unit tests (tests/check_tfgb), then every tests/t_*.sh
# end-to-end test, from the top of the source tree, and says what it skipped.
#
# A script exits 0 (pass), 77 (skipped: the reason on its last line) or
# anything else (fail); a passing script that left a part out prints
# `SKIP-PART: reason` lines (tests/lib.sh: skip_part).  Every skip and
# partial skip is printed with its reason and its script.  The closing lines
# are Check's form and the plain "N passed, N failed, N skipped" CI parsers
# read; a partial skip counts as passed and is named beside it.
#
# Environment: TFGB_STRICT=1 fails on any skip or partial skip (CI on a
# machine with every package has none); TFGB_SKIP_UNIT=REASON when the unit
# runner could not be built and TFGB_SKIP_NOTES="what: reason|..." for parts
# left out of the build (the Makefile names the missing package);
# TFGB_TESTS="t_cli t_serve" runs only those scripts; TFGB_KEEP_LOGS=DIR
# keeps the whole output of each failing script there (DIR/t_foo.log);
# TFGB_FLAGGED_ONLY=1 leaves out the scripts marked `# tfgb-flags: none`
# (they read no object built with this build's flags, so a second pass of
# the same tree with other flags, as .ci/run's SANITIZE pass, would only
# repeat them) and names each one it left out.  TFGB_JOBS=N runs N lanes
# of tests side by side (default 2 where there are two CPUs or more; 1
# runs one test at a time, as before lanes).
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 skip=0 part=0 failed="" skips=""

# A loaded machine (other builds and tests beside this one) stretches every
# run: unless TFGB_TEST_SLOW is given, deadlines and measured windows are
# scaled by what others ask of the CPUs (tests/lib.sh: load_slow; this
# run's own lanes and processes, marked by TFGB_TEST_RUN, do not count: a
# test beside another is what the lanes are built for), measured again
# before each script (the load of a long run changes), and Check's own
# timeouts by the same factor (CK_TIMEOUT_MULTIPLIER, unless given).
# Bounds on counts and plateaus do not change.
. tests/lib.sh
TFGB_TEST_RUN=${TFGB_TEST_RUN:-run.$$.$(date +%s)}
export TFGB_TEST_RUN
slow_given=${TFGB_TEST_SLOW:+1} slow_was=1
# measure_slow: TFGB_TEST_SLOW for what runs next; says so when it changed
measure_slow() {
	[ -n "$slow_given" ] && return
	TFGB_TEST_SLOW=$(load_slow)
	[ "$TFGB_TEST_SLOW" = "$slow_was" ] ||
		echo "TFGB_TEST_SLOW=$TFGB_TEST_SLOW: others' load (load average $(cut -d' ' -f1,2 /proc/loadavg) on $(nproc) CPUs)"
	slow_was=$TFGB_TEST_SLOW
}
lanes=${TFGB_JOBS:-$(n=$(nproc 2>/dev/null || echo 1); [ "$n" -ge 2 ] && echo 2 || echo 1)}
measure_slow
export TFGB_TEST_SLOW

# note KIND WHAT REASON: one skip line now, and again in the closing list
note() {
	echo "$1: $2: $3"
	skips="$skips
$1: $2: $3"
}

# 0. what the Makefile left out of the build (TFGB_SKIP_NOTES: "what:
#    reason|" for each), each a skip
old_ifs=$IFS IFS='|'
for n in $TFGB_SKIP_NOTES; do
	[ -n "$n" ] || continue
	skip=$((skip + 1)); note SKIP "${n%%: *}" "${n#*: }"
done
IFS=$old_ifs

# The unit tests and the scripts run in TFGB_JOBS lanes side by side
# (default: 2 on a machine of two CPUs or more, else 1): each lane takes
# the next job nobody has taken (mkdir is the lock), unit tests first;
# one test alone leaves CPU time idle between its runs (start-up,
# deadlines), two lanes keep both CPUs busy (seen: 0 to 2 % idle).  A script marked `# tfgb-alone: REASON`
# (it starts machine-wide daemons, pins or counts CPUs, or loads both CPUs
# itself) runs after the lanes, by itself.  Each job's PASS, SKIP or FAIL
# line is printed when it ends; a failure's output and the totals follow
# once every job has ended, in the order of the names.
res=$(mktemp -d "${TMPDIR:-/tmp}/tfgb-run.XXXXXX") || exit 1
trap 'rm -rf "$res"' EXIT
trap 'exit 1' HUP INT TERM

# unit: the unit tests; $res/unit.out (their output), .rc, .time.
# Under AddressSanitizer they share one process (CK_FORK=no, unless
# CK_FORK is given): each forked test's exit ran LeakSanitizer over the
# whole process, about 0.2 s a test, 100 s of the 170 s the 469 tests
# took; one process checks every test's leftovers once, at its exit (a
# leak makes it exit non-zero: a failure below, with LeakSanitizer's
# report).  Check's per-test timeouts need the fork: the whole run has
# one instead, 10 minutes (times TFGB_TEST_SLOW).
unit() {
	t0=$(date +%s)
	fork=${CK_FORK:-} limit=
	case ${TFGB_SANITIZE:-} in *address*)
		fork=${CK_FORK:-no}
		[ "$fork" != no ] || limit="timeout -k 10 $((600 * TFGB_TEST_SLOW))" ;;
	esac
	CK_FORK=$fork CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60} \
		CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-$TFGB_TEST_SLOW} \
		TFGB_STRICT=0 $limit ./tests/check_tfgb >"$res/unit.out" 2>&1
	echo $? >"$res/unit.rc"
	echo "TIME: tests/check_tfgb $(($(date +%s) - t0)) s"
}

# script T: one shell test; $res/NAME.out, .rc, and its one-line status
script() {
	n=$(basename "$1" .sh) out=$res/$n.out
	measure_slow
	# a server that found its port taken (another test on this machine
	# drew the same one between free_ports and listen) is not this test's
	# failure: the script runs again, at most twice, on fresh ports
	try=1 t0=$(date +%s)
	while :; do
		timeout $((300 * TFGB_TEST_SLOW)) sh "$1" >"$out" 2>&1
		rc=$?
		[ "$rc" != 0 ] && [ "$rc" != 77 ] && [ $try -lt 3 ] &&
			grep -qi "cannot listen on\|address already in use\|address in use" "$out" || break
		echo "RETRY: $1: a port was taken: $(grep -i -m 1 "cannot listen on\|address.*in use" "$out")"
		try=$((try + 1))
	done
	echo "$rc $TFGB_TEST_SLOW" >"$res/$n.rc"
	case $rc in
	0) echo "PASS: $1 ($(($(date +%s) - t0)) s)" ;;
	77) echo "SKIP: $1: $(tail -n 1 "$out")" ;;
	*) echo "FAIL: $1 (exit $rc, TFGB_TEST_SLOW=$TFGB_TEST_SLOW, $(($(date +%s) - t0)) s): its output when all have ended" ;;
	esac
}

# the jobs: "unit" and the scripts asked for, in lanes or alone
jobs= alone=
[ -n "$TFGB_SKIP_UNIT" ] || [ ! -x tests/check_tfgb ] || jobs=unit
for t in tests/t_*.sh; do
	[ -e "$t" ] || continue
	if [ -n "$TFGB_TESTS" ]; then
		case " $TFGB_TESTS " in *" $(basename "$t" .sh) "*) ;; *) continue ;; esac
	fi
	if [ -n "$TFGB_FLAGGED_ONLY" ] && grep -q '^# tfgb-flags: none' "$t"; then
		echo "SAME: $t: independent of the build's flags (TFGB_FLAGGED_ONLY): left out"
		continue
	fi
	if [ "$lanes" -gt 1 ] && grep -q '^# tfgb-alone: ' "$t"; then
		alone="$alone $t"
	else
		jobs="$jobs $t"
	fi
done
# lane: takes the jobs nobody has taken yet, one at a time
lane() {
	for j in $jobs; do
		mkdir "$res/taken.$(basename "$j" .sh)" 2>/dev/null || continue
		case $j in unit) unit ;; *) script "$j" ;; esac
	done
}
i=0
while [ $i -lt "$lanes" ]; do
	lane &
	i=$((i + 1))
done
wait
for t in $alone; do
	script "$t"
done

# 1. the unit tests' totals
if [ -n "$TFGB_SKIP_UNIT" ]; then
	skip=$((skip + 1)); note SKIP tests/check_tfgb "$TFGB_SKIP_UNIT"
elif [ -x tests/check_tfgb ]; then
	out=$res/unit.out rc=$(cat "$res/unit.rc" 2>/dev/null || echo 1)
	grep -v '^SKIP' "$out"
	# unit: P passed, F failed, S skipped (tests/check_main.c)
	set -- $(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$out")
	if [ $# = 3 ]; then
		pass=$((pass + $1)) fail=$((fail + $2)) skip=$((skip + $3))
	fi
	if [ $# != 3 ] || { [ "$rc" != 0 ] && [ "$2" = 0 ]; }; then
		fail=$((fail + 1)) # crashed before its summary
		echo "FAIL: tests/check_tfgb (exit $rc, no summary)"
	fi
	[ "$rc" = 0 ] || failed="$failed tests/check_tfgb"
	while IFS= read -r l; do
		t=${l#* }
		case $l in
		"SKIP "*) note SKIP "unit ${t%%: *}" "${t#*: }" ;;
		"SKIP-PART "*) part=$((part + 1)); note SKIP-PART "unit ${t%%: *}" "${t#*: }" ;;
		esac
	done <<EOT
$(grep '^SKIP' "$out")
EOT
else
	fail=$((fail + 1)); failed="$failed tests/check_tfgb"
	echo "FAIL: tests/check_tfgb is not built (make tests/check_tfgb)"
fi

# 2. the shell tests' totals, in the order of their names
for t in tests/t_*.sh; do
	n=$(basename "$t" .sh)
	[ -e "$res/$n.rc" ] || continue
	read -r rc slow <"$res/$n.rc"
	out=$res/$n.out
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
		while IFS= read -r l; do
			[ -n "$l" ] || continue
			part=$((part + 1)); note SKIP-PART "$t" "${l#SKIP-PART: }"
		done <<EOT
$(grep '^SKIP-PART: ' "$out")
EOT
	elif [ "$rc" = 77 ]; then
		skip=$((skip + 1)); skips="$skips
SKIP: $t: $(tail -n 1 "$out")"
	else
		fail=$((fail + 1)); failed="$failed $t"
		echo "FAIL: $t (exit $rc, TFGB_TEST_SLOW=$slow)"; sed 's/^/    /' "$out" | tail -n 40
		[ -z "$TFGB_KEEP_LOGS" ] || cp "$out" "$TFGB_KEEP_LOGS/$n.log"
	fi
done

# leftovers: a process of this run (its environment has the run's mark)
# alive after every test ended is killed, so that it spins no CPU under
# later steps, and named.  Under a sanitizer build one was seen that is
# not tfgb's: LeakSanitizer's exit-time leak check deadlocked with its own
# tracer (the process traced by its child), spinning for good.
left=$($PY - "$TFGB_TEST_RUN" <<'EOF'
import os, sys
mark = b"TFGB_TEST_RUN=" + sys.argv[1].encode()
skip, p = set(), os.getpid()
while p > 1:  # this one and its ancestors carry the mark too
    skip.add(p)
    try:
        p = int(open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        break
for d in os.listdir("/proc"):
    if not d.isdigit() or int(d) in skip:
        continue
    try:
        if mark in open("/proc/%s/environ" % d, "rb").read().split(b"\0"):
            st = open("/proc/%s/status" % d).read()
            tracer = int(st.split("TracerPid:")[1].split()[0])
            cmd = open("/proc/%s/cmdline" % d, "rb").read().replace(b"\0", b" ")
            print(d, "lsan" if tracer else "-", cmd.decode(errors="replace")[:120])
    except (OSError, ValueError, IndexError):
        pass
EOF
)
[ -z "$left" ] || echo "$left" | while read -r pid why cmd; do
	kill -9 "$pid" 2>/dev/null
	[ "$why" = lsan ] && why=", traced by its child (a LeakSanitizer leak check that hung)" || why=
	echo "LEFTOVER (killed): pid $pid$why: $cmd"
done

[ -z "$skips" ] || echo "skipped, with the reasons:$skips"
[ -z "$failed" ] || echo "failed:$failed"
echo "Checks: $((pass + fail + skip)), Failures: $fail, Skipped: $skip, Skipped in part: $part"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] || exit 1
if [ "${TFGB_STRICT:-0}" = 1 ] && [ $((skip + part)) -gt 0 ]; then
	echo "STRICT=1: $skip skipped and $part skipped in part: failing"
	exit 1
fi
exit 0
