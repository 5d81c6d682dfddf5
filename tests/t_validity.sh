#!/bin/sh
# tfgb-alone: saturates the PS on purpose and judges figures against that
# t_validity.sh - the figures mean what they say (issue 13), on loopback
# with short windows:
#  1. an open loop far above what the PS can serve completes calls, says
#     `saturated` (JSON, CSV, text), reports the calls offered and missed
#     and the uncorrected service times, and exits 0;
#  2. an open loop well below it achieves its offered rate within 5%, with
#     status ok and nothing missed;
#  3. bandwidth with 64 calls in flight counts the calls carried into a
#     window of time exactly as many as it carries out, over 1 s and 4 s
#     windows (socket transport): the calls counted (completed in the
#     window) equal the latencies recorded (started in it, drained ones
#     included), and the rates are those counts over the window asked.
#     Counts, not rates across runs, so a loaded machine cannot fail it;
#     the old engine's edge miscount (0.42 to 0.48 of the 4 s rate at 1 s)
#     is 64 calls apart here;
#  4. a serialized run of 40 calls reports its encode and decode times and
#     how many calls were sampled;
#  5. a run stopped (SIGINT) in its warm-up says how long the warm-up ran,
#     not how long was asked, and still asks the PS for its allocator.
# Parts (tests/lib.sh: in_part; a mutant runs only the part that catches
# it): open (1, 2), windows (3), serialized (4), warmup (5).
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import json' 2>/dev/null || skip "no /usr/bin/python3"

out=$(mktemp -d)
bg=
cleanup_on_exit "$out"

# small payload: a PS on loopback serves thousands of calls per second
small="-s payload.iovecs=4 -s payload.categories=small,medium"
tp() { # throughput over socket, 1 PS x 1 worker, on a fresh port
	port=$(free_port) || fail "no free port"
	$TFGB throughput -s job.transport=socket -s cluster.ps=127.0.0.1:$port \
		-s cluster.workers=1 -s job.warmup=$(slow 300)ms -s job.timeout=$(slow 10)s -q "$@"
}

# 1. far above saturation: the default payload (3 MB) at 100000 calls/s
if in_part open; then
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
fi

# 3. bandwidth at inflight 64 over windows of 1 s and 4 s.  Each of the 64
#    slots' first completion in a window is a call started in the warm-up
#    (counted, not timed) and its last call started in the window completes
#    in the drain (timed, not counted): calls == histogram count exactly,
#    however the machine's load stretches the calls.  Counting only the
#    calls started in the window, or counting the drained ones, or draining
#    the warm-up before the window, moves them 64 apart.  The 4 s run keeps
#    its intervals: they add up to the window's calls and tile it.
if in_part windows; then
	bw() { # bw SECONDS [ARGS...]: one run, its JSON in $out/bw$1.json
		d=$1
		shift
		port=$(free_port) || fail "no free port"
		$TFGB bandwidth -s job.transport=socket -s cluster.ps=127.0.0.1:$port -s job.inflight=64 \
			-s job.warmup=$(slow 1)s -s job.duration="$d"s -s job.timeout=$(slow 10)s "$@" \
			-q -f json >"$out/bw$d.json" 2>"$out/err" || fail "bandwidth ($d s) exited $?: $(cat "$out/err")"
	}
	bw 1
	bw 4 --interval 500ms
	for d in 1 4; do
		$PY -c 'import json, sys
d, asked = json.load(open(sys.argv[1])), float(sys.argv[2])
n, h, b, w = d["calls"], d["histogram"]["count"], d["payload"]["bytes"], d["duration_s"]
print("bandwidth %g s: %d calls counted, %d timed, %.1f MB/s" % (asked, n, h, d["MBps"]))
ok = d["status"] == "ok" and d["errors"] == 0 and n > 0 and n == h and w == asked
ok = ok and abs(d["rpc_per_s"] - n / w) <= 0.01 and abs(d["MBps"] - n * b / w / 1e6) <= 0.001
iv = d.get("intervals")
if iv is not None:
    ok = ok and d["intervals_dropped"] == 0 and sum(i["calls"] for i in iv) == n
    ok = ok and iv[0]["start_s"] == 0 and all(a["end_s"] == z["start_s"] for a, z in zip(iv, iv[1:]))
    ok = ok and len(iv) >= 2 and iv[-1]["end_s"] == w
sys.exit(0 if ok else 1)' "$out/bw$d.json" "$d" ||
			fail "bandwidth over $d s: calls carried in and out of the window do not match: $(head -c 1500 "$out/bw$d.json")"
	done
fi

# 4. a serialized latency run of 40 calls
if in_part serialized; then
	port=$(free_port) || fail "no free port"
	$TFGB latency -s job.transport=socket -s cluster.ps=127.0.0.1:$port -s job.mode=serialized \
		-s job.warmup=0s -s job.iterations=40 -s job.timeout=$(slow 10)s -q -f json \
		>"$out/ser.json" 2>"$out/err" || fail "serialized latency exited $?: $(cat "$out/err")"
	json_check "d['calls'] == 40 and d['serialization']['sampled_calls'] >= 32
	and d['serialization']['encode_us'] is not None and d['serialization']['decode_us'] is not None
	and d['serialization']['encode_us'] > 0" <"$out/ser.json" ||
		fail "serialized run of 40 calls: $(head -c 3000 "$out/ser.json")"
fi

# 5. SIGINT in a 30 s warm-up: the header gives the warm-up as run
if in_part warmup; then
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
	# the PS is asked for its allocator on a connection opened after the
	# signal: a signal ends the waits it interrupts, not the later ones
	grep -q '^# allocator: .*; PS ' "$out/stop.txt" && ! grep -q '^# allocator: .*; PS unknown' "$out/stop.txt" ||
		fail "the interrupted run did not ask the PS: $(grep allocator "$out/stop.txt")"
fi

echo "ok: validity (open loop, bandwidth windows, serialization sampling, warm-up)"
