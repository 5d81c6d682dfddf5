#!/bin/sh
# t_progress.sh - the throughput launcher's progress line (src/run/progress.h):
#   1. standard error on a terminal (a pty, python3's pty module): the line
#      shows the phases (waiting for the workers, warm-up, the window) drawn
#      in place ("\r"), at most PROGRESS_HZ (4) times a second plus one per
#      phase, and is erased before the report; the run is complete;
#   2. -q on the terminal: no line;
#   3. standard error not a terminal (a file): no line.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py pty python3

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
trap 'exit 1' INT TERM HUP

base=$(free_ports 2) || fail "no free ports"
job="-s cluster.ps=127.0.0.1:$base -s cluster.ps_count=1 -s cluster.workers=2
     -s job.warmup=$(slow 1)s -s job.duration=$(slow 2)s -s payload.iovecs=2
     -s job.timeout=$(slow 20)s"

# onpty REPORT ARGS...: runs ARGS with standard error on a pty, standard
# output into REPORT; prints what the pty got (Python bytes repr) and then
# "seconds S" on a line of its own; exits with the command's status
onpty() {
	$PY -c 'import os, pty, subprocess, sys, time
m, s = pty.openpty()
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL,
                     stdout=open(sys.argv[1], "wb"), stderr=s)
os.close(s)
data = b""
while True:
    try:
        chunk = os.read(m, 4096)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
rc = p.wait()
print(repr(data))
print("seconds %.1f" % (time.monotonic() - t0))
sys.exit(rc)' "$@"
}

report_ok() {
	grep -q '^ *[1-9][0-9]* *0 ' "$1" || fail "$2: no complete report: $(cat "$1")"
}

# 1. on a terminal
onpty "$out/report" $TFGB throughput $job >"$out/pty" || fail "on a pty: exit $?: $(cat "$out/pty")"
report_ok "$out/report" "on a pty"
for phase in "starting 1 PS" "warm-up" "window"; do
	grep -qF "$phase" "$out/pty" || fail "on a pty: no '$phase' in: $(cat "$out/pty")"
done
grep -qF '\r' "$out/pty" || fail "on a pty: the line is not drawn in place"
head -n 1 "$out/pty" | grep -q '\\r\\x1b\[K.$' || fail "on a pty: the line is not erased at the end"
draws=$(head -n 1 "$out/pty" | grep -o 'throughput: ' | wc -l)
secs=$(sed -n 's/^seconds //p' "$out/pty")
max=$(awk -v s="$secs" 'BEGIN { print int(4 * s) + 6 }')
[ "$draws" -le "$max" ] || fail "on a pty: $draws draws in ${secs}s, more than $max"
echo "ok: on a pty: $draws draws in ${secs}s"

# 2. -q on a terminal
onpty "$out/report" $TFGB throughput -q $job >"$out/pty" || fail "-q on a pty: exit $?"
report_ok "$out/report" "-q on a pty"
grep -qF "throughput: 1 PS" "$out/pty" && fail "-q on a pty: a progress line: $(cat "$out/pty")"

# 3. not a terminal
$TFGB throughput $job >"$out/report" 2>"$out/err" </dev/null || fail "no tty: exit $?: $(cat "$out/err")"
report_ok "$out/report" "no tty"
grep -q "waiting for\|window\|$(printf '\r')" "$out/err" && fail "no tty: a progress line: $(cat "$out/err")"
echo "t_progress: ok"
