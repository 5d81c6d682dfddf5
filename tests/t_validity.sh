#!/bin/sh
# t_validity.sh - the figures mean what they say (issue 13), on loopback
# with short windows:
#  1. an open loop far above what the PS can serve completes calls, says
#     `saturated` (JSON, CSV, text), reports the calls offered and missed
#     and the uncorrected service times, and exits 0;
#  2. an open loop well below it achieves its offered rate within 5%, with
#     status ok and nothing missed;
#  3. bandwidth with 64 calls in flight gives the same MB/s over 1 s and
#     4 s windows, within 15% (socket transport; the median of the ratios of
#     five pairs run back to back, in alternating order, so that a loaded
#     machine's drift cancels; the old engine gave 0.42 to 0.48);
#  4. a serialized run of 40 calls reports its encode and decode times and
#     how many calls were sampled;
#  5. a run stopped (SIGINT) in its warm-up says how long the warm-up ran,
#     not how long was asked.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import json' 2>/dev/null || skip "no /usr/bin/python3"

out=$(mktemp -d)
bg=
cleanup() {
	for p in $bg; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

# small payload: a PS on loopback serves thousands of calls per second
small="-s payload.iovecs=4 -s payload.categories=small,medium"
tp() { # throughput over socket, 1 PS x 1 worker, on a fresh port
	port=$(free_port) || fail "no free port"
	$TFGB throughput -s job.transport=socket -s cluster.ps=127.0.0.1:$port \
		-s cluster.workers=1 -s job.warmup=$(slow 300)ms -s job.timeout=$(slow 10)s -q "$@"
}

# 1. far above saturation: the default payload (3 MB) at 100000 calls/s
tp -s job.rate=100000 -s job.duration=$(slow 1)s -f json >"$out/sat.json" 2>"$out/err" ||
	fail "saturated open loop exited $?: $(cat "$out/err")"
json_check "d['calls'] > 0 and d['status'] == 'saturated' and d['errors'] == 0
and d['throughput']['saturated'] is True and d['throughput']['offered_calls'] > 10 * d['calls']
and d['throughput']['missed_calls'] > 0 and d['latency_us']['p50'] > 0
and d['throughput']['service_time_us']['p50'] > 0
and d['throughput']['service_time_us']['p50'] <= d['latency_us']['p50']" <"$out/sat.json" ||
	fail "open loop above saturation: $(head -c 3000 "$out/sat.json")"
grep -q "saturated" "$out/err" || fail "no 'saturated' note on stderr: $(cat "$out/err")"
tp -s job.rate=100000 -s job.duration=$(slow 500)ms -f csv >"$out/sat.csv" 2>"$out/err" ||
	fail "saturated open loop (CSV) exited $?: $(cat "$out/err")"
tail -n 1 "$out/sat.csv" | grep -q ',saturated$' || fail "CSV status: $(cat "$out/sat.csv")"
tp -s job.rate=100000 -s job.duration=$(slow 500)ms >"$out/sat.txt" 2>"$out/err" ||
	fail "saturated open loop (text) exited $?: $(cat "$out/err")"
grep -q '^# open loop: [0-9]* calls offered in the window, [1-9][0-9]* completed in it, [1-9][0-9]* missed: SATURATED' \
	"$out/sat.txt" || fail "text: no saturation line: $(cat "$out/sat.txt")"
grep -q '^# service time (uncorrected' "$out/sat.txt" || fail "text: no service time: $(cat "$out/sat.txt")"

# 2. well below it: 200 calls/s of a 20 KB payload for 2 s
tp $small -s job.rate=200 -s job.duration=$(slow 2)s -f json >"$out/ok.json" 2>"$out/err" ||
	fail "open loop below saturation exited $?: $(cat "$out/err")"
json_check "d['status'] == 'ok' and d['throughput']['saturated'] is False
and d['throughput']['missed_calls'] == 0
and abs(d['rpc_per_s'] / d['throughput']['offered_rpc_per_s'] - 1) <= 0.05
and abs(d['calls'] / d['throughput']['offered_calls'] - 1) <= 0.05" <"$out/ok.json" ||
	fail "open loop below saturation: $(head -c 3000 "$out/ok.json")"

# 3. bandwidth at inflight 64: 1 s and 4 s windows, three pairs
bw() {
	port=$(free_port) || fail "no free port"
	$TFGB bandwidth -s job.transport=socket -s cluster.ps=127.0.0.1:$port -s job.inflight=64 \
		-s job.warmup=$(slow 1)s -s job.duration=$(slow "$1")s -s job.timeout=$(slow 10)s \
		-q -f json >"$out/bw.json" 2>"$out/err" || fail "bandwidth ($1 s) exited $?: $(cat "$out/err")"
	$PY -c 'import json, sys; d = json.load(sys.stdin); print(d["MBps"] if d["status"] == "ok" else 0)' \
		<"$out/bw.json"
}
ratios=
for i in 1 2 3 4 5; do
	if [ $((i % 2)) = 1 ]; then
		a=$(bw 1)
		b=$(bw 4)
	else
		b=$(bw 4)
		a=$(bw 1)
	fi
	ratios="$ratios $a/$b"
done
$PY -c 'import sys
r = sorted(float(a) / float(b) for a, b in (p.split("/") for p in sys.argv[1:]))
print("bandwidth 1 s / 4 s:", " ".join("%.3f" % x for x in r))
sys.exit(0 if abs(r[2] - 1) <= 0.15 else 1)' $ratios ||
	fail "bandwidth depends on the window (MB/s 1 s/4 s:$ratios)"

# 4. a serialized latency run of 40 calls
port=$(free_port) || fail "no free port"
$TFGB latency -s job.transport=socket -s cluster.ps=127.0.0.1:$port -s job.mode=serialized \
	-s job.warmup=0s -s job.iterations=40 -s job.timeout=$(slow 10)s -q -f json \
	>"$out/ser.json" 2>"$out/err" || fail "serialized latency exited $?: $(cat "$out/err")"
json_check "d['calls'] == 40 and d['serialization']['sampled_calls'] >= 32
and d['serialization']['encode_us'] is not None and d['serialization']['decode_us'] is not None
and d['serialization']['encode_us'] > 0" <"$out/ser.json" ||
	fail "serialized run of 40 calls: $(head -c 3000 "$out/ser.json")"

# 5. SIGINT in a 30 s warm-up: the header gives the warm-up as run
port=$(free_port) || fail "no free port"
$TFGB latency -s job.transport=socket -s cluster.ps=127.0.0.1:$port $small \
	-s job.warmup=30s -s job.timeout=$(slow 10)s -q >"$out/stop.txt" 2>"$out/err" &
pid=$!
bg=$pid
wait_listening "$port" 10 || fail "the latency run's PS never listened"
sleep "$(slow 1)"
kill -INT "$pid"
i=0
while kill -0 "$pid" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -gt $((100 * SLOW)) ] && fail "latency did not stop within 10 s of SIGINT"
	sleep 0.1
done
wait "$pid"
rc=$?
bg=
[ "$rc" -eq 1 ] || fail "interrupted latency exited $rc, not 1: $(cat "$out/err")"
line=$(grep '^# warm-up' "$out/stop.txt") || fail "no warm-up line: $(cat "$out/stop.txt")"
echo "$line" | grep -Eq '^# warm-up 30s asked, [0-9]+\.[0-9]{3}s run \([1-9][0-9]* calls\)' ||
	fail "the warm-up line after SIGINT: $line"
ran=$(echo "$line" | sed 's/.*asked, \([0-9.]*\)s run.*/\1/')
$PY -c "import sys; sys.exit(0 if 0 < $ran < 20 else 1)" || fail "warm-up ran ${ran}s of 30s?"
grep -q '^# INTERRUPTED' "$out/stop.txt" || fail "not marked interrupted: $(cat "$out/stop.txt")"
echo "ok: validity (open loop, bandwidth windows, serialization sampling, warm-up)"
