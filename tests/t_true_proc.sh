#!/bin/sh
# t_true_proc.sh - every line about the run's processes true (#26): each
# case is judged by its exit status, a line of its output, and leftovers
# (no process of the case alive, no serve-PORT.* file of its ports in the
# lock directory):
#   1. a latency run whose PS tfgb starts says nothing of "no figures of
#      its own" (it does not ask that PS), nor does a throughput launch;
#   2. a hand-started server with monitor.interval = 0 is said not to
#      sample itself, in text and JSON (samples_itself false);
#   3. the context switches of a PS cover all its threads: at least one
#      for every four calls (its main thread alone showed 14 in 26k);
#   4. the throughput network line says what its connections are, PS
#      ones and control ones adding up to the total;
#   5. no serve-PORT.start/.lease left after a run on a hand-started
#      server, nor after two runs that shared a server one of them started;
#   6. SIGINT to a throughput launcher once every worker's window closed
#      (the workers held with SIGSTOP just after their last interval line):
#      complete, unmarked, exit 0, PSs asked, stderr says the signal came
#      late; SIGINT inside the window: "# INTERRUPTED", exit 1;
#   7. at scale: 8 PSs x 32 workers on this machine (socket, one 10-byte
#      buffer) complete, every worker reported; a worker of a launch that
#      cannot reach its control service waits job.timeout times the
#      launch's processes per CPU, and says so.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"

out=$(mktemp -d)
srv=''
cleanup_on_exit "$out"

cases=0
lockdir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/tfgb}
lockdir=${lockdir:-/tmp/tfgb-$(id -u)}
QUICK="-q -s job.timeout=20s -s job.warmup=100ms -s job.duration=$(slow 500)ms"

# run WHAT STATUS CMD...: CMD exits STATUS (stdout in $out/o, stderr $out/e)
run() { run_in "$out" "$@"; }

# has WHAT REGEX / hasnt WHAT REGEX: a line of $out/o matches / none does
has() { grep -q -- "$2" "$out/o" || bad "$1: no line '$2' in: $(head -c 1500 "$out/o")"; }
hasnt() { ! grep -q -- "$2" "$out/o" || bad "$1: '$(grep -- "$2" "$out/o" | head -1)'"; }

# clean WHAT PORT...: no process of PORT's servers or runs left, no lock
# file of PORT (waits up to 2 s: a leased server stops within 100 ms)
clean() {
	what=$1
	shift
	for p in "$@"; do
		i=0
		while [ -n "$(pids_matching "127.0.0.1:$p")" ] || ls "$lockdir" 2>/dev/null | grep -q "^serve-$p\."; do
			i=$((i + 1))
			if [ $i -gt $((20 * SLOW)) ]; then
				bad "$what: left behind on port $p: processes $(pids_matching "127.0.0.1:$p" | tr '\n' ' ')files $(ls "$lockdir" 2>/dev/null | grep "^serve-$p\." | tr '\n' ' ')"
				break
			fi
			sleep 0.1
		done
	done
}

# 1. servers tfgb starts are not said to lack figures
p=$(free_ports 2)
run "latency, own PS" 0 $TFGB latency $QUICK -s monitor.interval=100ms -s payload.iovecs=2 \
	-s cluster.ps=127.0.0.1:$p
hasnt "latency, own PS" "no figures of its own"
hasnt "latency, own PS" "^# PS 0 (pid"
has "latency, own PS: its PS watched" "^# resources: ps x1: "
clean "latency, own PS" $p
run "latency, own PS, JSON" 0 $TFGB latency $QUICK -s monitor.interval=100ms -s payload.iovecs=2 \
	-s cluster.ps=127.0.0.1:$p -f json
hasnt "latency, own PS, JSON" '"ps_resources"'
clean "latency, own PS, JSON" $p
run "throughput launch" 0 $TFGB throughput $QUICK -s monitor.interval=100ms -s payload.iovecs=1 \
	-s cluster.ps=127.0.0.1:$p -s cluster.ps_count=2 -s cluster.workers=2 -s job.transport=socket
hasnt "throughput launch" "no figures of its own"
# 4. what the connections are: 2 workers x 2 PSs over socket, control apart
has "throughput launch: connections" \
	"^# network, this run ([0-9]* connections, [0-9]* closed: [0-9]* to the PSs, the workers' data connections and any Info call; [0-9]* to the control service, the workers' and the launcher's): "
sed -n 's/^# network, this run (\([0-9]*\) connections, [0-9]* closed: \([0-9]*\) to the PSs[^;]*; \([0-9]*\) to the control.*/\1 \2 \3/p' \
	"$out/o" >"$out/n"
read -r total ps ctl <"$out/n" || total=''
if [ -n "$total" ]; then
	[ "$((ps + ctl))" = "$total" ] || bad "connections: $ps + $ctl is not $total"
	[ "$ps" -ge 4 ] || bad "connections: $ps to the PSs, fewer than 2 workers x 2 PSs"
	[ "$ctl" -ge 2 ] || bad "connections: $ctl to the control service, fewer than the workers"
fi
clean "throughput launch" $p $((p + 1))

# 2. a hand-started server that does not sample itself says so, and only it
p=$(free_ports 1)
$TFGB serve -q -s cluster.ps=127.0.0.1:$p -s monitor.interval=0 >"$out/srv" 2>&1 &
srv=$!
wait_listening "$p" 10 || fail "the hand-started server did not listen on $p"
run "hand-started server, no sampling" 0 $TFGB throughput $QUICK -s payload.iovecs=1 \
	-s cluster.ps=127.0.0.1:$p -s cluster.workers=1 -f json
$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
ps = d.get("ps_resources")
assert ps and len(ps) == 1 and ps[0]["samples_itself"] is False, ps
assert "does not sample itself" in ps[0]["why"], ps' "$out/o" 2>"$out/py" ||
	bad "hand-started server, no sampling: $(tail -1 "$out/py")"
# 5. a run on a server it did not start leaves no lock file behind
[ -z "$(ls "$lockdir" 2>/dev/null | grep "^serve-$p\.")" ] ||
	bad "hand-started server: lock files left: $(ls "$lockdir" | grep "^serve-$p\.")"
cases=$((cases + 1))
run "latency on a hand-started server" 0 $TFGB latency $QUICK -s payload.iovecs=1 \
	-s cluster.ps=127.0.0.1:$p
hasnt "latency on a hand-started server" "no figures of its own"
[ -z "$(ls "$lockdir" 2>/dev/null | grep "^serve-$p\.")" ] ||
	bad "latency, hand-started server: lock files left: $(ls "$lockdir" | grep "^serve-$p\.")"
kill -0 "$srv" 2>/dev/null || bad "the hand-started server died"
kill "$srv"
wait "$srv" 2>/dev/null
srv=''
clean "hand-started server" $p

# 5. two runs share a server the first one started: the second ends last;
#    the server stops after it and the files go with it
p=$(free_ports 1)
$TFGB latency $QUICK -s job.duration=$(slow 1500)ms -s payload.iovecs=1 \
	-s cluster.ps=127.0.0.1:$p >"$out/a" 2>&1 &
first=$!
wait_listening "$p" 10 || bad "shared server: the first run's server did not listen"
run "shared server, second run" 0 $TFGB latency $QUICK -s job.duration=$(slow 2500)ms \
	-s payload.iovecs=1 -s cluster.ps=127.0.0.1:$p
wait "$first" || bad "shared server, first run: exit status $?: $(cat "$out/a")"
clean "shared server" $p

# 3. a PS's context switches are its threads', not its main thread's
p=$(free_ports 1)
run "switches of all threads" 0 $TFGB latency $QUICK -s job.duration=$(slow 1000)ms \
	-s payload.iovecs=1 -s monitor.interval=100ms \
	-s cluster.ps=127.0.0.1:$p -f json
$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
calls = d["calls"]
ps = [r for r in d["resources"]["summary"]["roles"] if r["role"] == "ps"][0]
assert calls > 100, calls
assert ps["vcsw"] >= calls / 4, ("%d voluntary switches for %d calls" % (ps["vcsw"], calls))' \
	"$out/o" 2>"$out/py" || bad "switches of all threads: $(tail -1 "$out/py")"
clean "switches of all threads" $p

# 6. a SIGINT just after the windows closed, and one inside them
p=$(free_ports 2)
: >"$out/o" # the trigger reads it: nothing of the run before
# (exec: $! is tfgb itself, not a shell waiting for it with SIGINT ignored)
(exec $TFGB throughput $QUICK --interval 250ms -s job.duration=1s -s payload.iovecs=1 \
	-s cluster.ps=127.0.0.1:$p -s cluster.ps_count=2 -s cluster.workers=3 -s job.transport=socket \
	>"$out/o" 2>"$out/e") &
l=$!
i=0
while [ "$(children $l "tfgb throughput" | wc -l)" -lt 3 ] && [ $i -lt $((200 * SLOW)) ]; do
	sleep 0.05
	i=$((i + 1))
done
# the workers stopped just after their last interval line (the window is
# over), the launcher signalled while it still waits for them
$PY -c 'import os, re, signal, sys, time
out, l, ws = sys.argv[1], int(sys.argv[2]), [int(w) for w in sys.argv[3:]]
last = re.compile(rb"^ +\d+ +\d+ +\S+ +1\.000 ", re.M)
end = time.time() + 30
while time.time() < end and not last.search(open(out, "rb").read()):
    time.sleep(0.001)
for w in ws:
    try: os.kill(w, signal.SIGSTOP)
    except OSError: pass
held = [w for w in ws if os.path.exists("/proc/%d" % w)]
try:
    os.kill(l, signal.SIGINT)
except ProcessLookupError:
    held = [] # the run ended before the signal (seen on a loaded machine)
time.sleep(0.3)
for w in ws:
    try: os.kill(w, signal.SIGCONT)
    except OSError: pass
print(len(held))' "$out/o" $l $(children $l "tfgb throughput") >"$out/held"
cases=$((cases + 1))
rc=0
wait $l || rc=$?
[ "$rc" = 0 ] || bad "SIGINT after the windows: exit status $rc, not 0: $(cat "$out/e")"
hasnt "SIGINT after the windows" "^# INCOMPLETE"
hasnt "SIGINT after the windows" "^# INTERRUPTED"
hasnt "SIGINT after the windows" "not asked"
has "SIGINT after the windows: the PSs asked" "^# allocator: 3 workers .*; 2 PS "
echo "SIGINT after the windows: $(cat "$out/held") of 3 workers held before they ended"
[ "$(cat "$out/held")" != 0 ] ||
	skip_part "SIGINT after the windows: every worker had ended before the signal: the launcher's wait was not interrupted"
# the workers were held before they ended: the launcher was still waiting
# for them and took the signal
[ "$(cat "$out/held")" = 0 ] || grep -q "interrupted after every measured window had closed: the figures are complete" "$out/e" ||
	bad "SIGINT after the windows: not said: $(cat "$out/e")"
clean "SIGINT after the windows" $p $((p + 1))
: >"$out/o"
(exec $TFGB throughput $QUICK --interval 250ms -s job.duration=$(slow 5)s -s payload.iovecs=1 \
	-s cluster.ps=127.0.0.1:$p -s cluster.workers=2 -s job.transport=socket \
	>"$out/o" 2>"$out/e") &
l=$!
wait_line "$out/o" "0.250 " 20 || bad "SIGINT in the window: no interval line"
kill -INT $l
cases=$((cases + 1))
rc=0
wait $l || rc=$?
[ "$rc" = 1 ] || bad "SIGINT in the window: exit status $rc, not 1: $(cat "$out/e")"
has "SIGINT in the window" "^# INTERRUPTED"
grep -q "interrupted after every measured window" "$out/e" &&
	bad "SIGINT in the window: said to be late: $(cat "$out/e")"
clean "SIGINT in the window" $p

# 7. at scale: 41 processes starting at once must not fail for slowness
p=$(free_ports 8)
run "8 PSs x 32 workers" 0 $TFGB throughput -q -s job.timeout=20s -s job.warmup=100ms \
	-s job.duration=$(slow 500)ms -s payload.iovecs=1 -s job.transport=socket \
	-s cluster.ps=127.0.0.1:$p -s cluster.ps_count=8 -s cluster.workers=32 -f json
$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = d["throughput"]
assert t["workers"] == 32 and t["reported"] == 32 and d["status"] == "ok", \
    (t["workers"], t["reported"], d["status"])' "$out/o" 2>"$out/py" ||
	bad "8 PSs x 32 workers: $(tail -1 "$out/py")"
clean "8 PSs x 32 workers" $p $((p + 7))
p=$(free_ports 1)
$TFGB serve -q -s cluster.ps=127.0.0.1:$p >"$out/srv" 2>&1 &
srv=$!
wait_listening "$p" 10 || fail "the hand-started server did not listen on $p"
c=$(free_ports 1)
t0=$(date +%s)
TFGB_LAUNCHER=1 TFGB_START_PROCS=6 TFGB_START_CPUS=2 run "a launch's worker, no control service" 1 \
	$TFGB throughput -q --task 0 -s job.timeout=1s -s cluster.workers=1 \
	-s cluster.ps=127.0.0.1:$p -s cluster.control=127.0.0.1:$c
took=$(($(date +%s) - t0))
grep -q "worker 0: cannot reach the control service at '127.0.0.1:$c' within 3s: nothing is listening, a wait of job.timeout x 3: 6 processes starting on 2 CPUs" "$out/e" ||
	bad "a launch's worker, no control service: $(cat "$out/e")"
[ "$took" -le $((3 + 4 * SLOW)) ] || bad "a launch's worker, no control service: took ${took}s"
kill "$srv"
wait "$srv" 2>/dev/null
srv=''
clean "a launch's worker, no control service" $p

[ "$problems" = 0 ] || fail "$problems problem(s)"
echo "cases: $cases"
echo "t_true_proc: ok"
