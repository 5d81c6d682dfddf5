#!/bin/sh
# latency and bandwidth end to end on loopback: a server tfgb starts and
# stops itself, each payload scheme, JSON/CSV output, reuse of a running
# server, Ctrl-C with a partial result, and no process left behind.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3
need_cmd ss iproute2

port=$(free_port)
out=$(mktemp -d)
srv=
cleanup_on_exit "$out"

base="-s cluster.ps=127.0.0.1:$port -s job.warmup=$(slow 100)ms -s job.duration=$(slow 1)s"
base="$base -s job.timeout=$(slow 10)s -q"

# 1. latency with a server it starts itself, for every scheme
for scheme in uniform random skew; do
	$TFGB latency $base -s payload.scheme=$scheme -f json >"$out/lat.json" 2>"$out/err" ||
		fail "latency ($scheme) exited $?: $(cat "$out/err")"
	json_check 'd["benchmark"] == "latency" and d["calls"] > 0 and d["errors"] == 0
and d["payload"]["iovecs"] == 10 and d["payload"]["scheme"] == "'$scheme'"
and 0 < d["latency_us"]["min"] <= d["latency_us"]["p50"] <= d["latency_us"]["p99"] <= d["latency_us"]["max"]
and d["status"] == "ok" and "[payload]" in d["job"]' <"$out/lat.json" ||
		fail "bad latency JSON ($scheme): $(cat "$out/lat.json")"
	wait_closed "$port" 5 || fail "the server tfgb started still listens after the run"
done

# 2. bandwidth with a window of 16 calls, CSV
$TFGB bandwidth $base -s job.inflight=16 -f csv >"$out/bw.csv" 2>"$out/err" ||
	fail "bandwidth exited $?: $(cat "$out/err")"
head -n 1 "$out/bw.csv" | grep -q '^benchmark,transport,mode,scheme' || fail "no CSV header"
tail -n 1 "$out/bw.csv" | grep -q '^bandwidth,grpc,non-serialized,uniform,10,3176488,16,' ||
	fail "bad CSV row: $(tail -n 1 "$out/bw.csv")"
wait_closed "$port" 5 || fail "server left listening after bandwidth"

# 3. iterations instead of a duration, verify every byte, text output
$TFGB latency $base -s job.iterations=50 -s job.verify=yes >"$out/lat.txt" 2>"$out/err" ||
	fail "latency with iterations exited $?: $(cat "$out/err")"
grep -q '^# TF-gRPC-P2P-Latency' "$out/lat.txt" || fail "no text header"
# exactly one data row, and it counts the 50 calls
awk '!/^#/ { rows++; if ($1 != 50) exit 1 } END { exit rows != 1 }' "$out/lat.txt" ||
	fail "expected one row of 50 calls: $(cat "$out/lat.txt")"

# 4. a server that already listens is used, and left running
$TFGB serve -s cluster.ps=127.0.0.1:$port -q 2>"$out/srv.err" &
srv=$!
wait_listening "$port" 10 || fail "tfgb serve did not listen: $(cat "$out/srv.err")"
$TFGB latency $base -f json >"$out/lat.json" 2>"$out/err" || fail "latency against a running server: $(cat "$out/err")"
kill -0 "$srv" 2>/dev/null || fail "the running server was stopped by the benchmark"
listening "$port" || fail "the running server no longer listens"
kill "$srv"; wait "$srv" 2>/dev/null; srv=
wait_closed "$port" 5 || fail "server did not stop on SIGTERM"

# 5. Ctrl-C (SIGINT) in the measured window: partial result, marked, exit 1
$TFGB latency -s cluster.ps=127.0.0.1:$port -s job.warmup=0s -s job.duration=60s -q -f json \
	>"$out/int.json" 2>"$out/err" &
bench=$!
# two payloads' worth of replies came back (warmup 0s): calls were measured
wait_clients "$port" 1 $((2 * 3176488)) 20 || fail "no replies within 20 s: $(cat "$out/err")"
kill -INT "$bench"
rc=0; wait "$bench" || rc=$?
[ "$rc" = 1 ] || fail "interrupted run exited $rc, expected 1"
json_check 'd["status"] == "interrupted" and d["interrupted"] is True and d["calls"] > 0' \
	<"$out/int.json" || fail "interrupted JSON: $(cat "$out/int.json")"
grep -q 'interrupted' "$out/err" || fail "no interruption message"
wait_closed "$port" 5 || fail "server left behind after Ctrl-C"

# 6. the benchmark killed outright: its server dies with it
$TFGB latency -s cluster.ps=127.0.0.1:$port -s job.duration=60s -q >/dev/null 2>&1 &
bench=$!
wait_listening "$port" 10 || fail "no server started"
kill -KILL "$bench"; wait "$bench" 2>/dev/null
wait_closed "$port" 5 || fail "server orphaned after the benchmark was killed"

# 7. something listens that is not a gRPC server: a clear one-line error
#    naming the address, exit 1, within the timeout
$PY -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
conns = []
end = time.time() + 20
s.settimeout(0.2)
while time.time() < end:
    try: conns.append(s.accept()[0])
    except OSError: pass' "$port" &
srv=$!
wait_listening "$port" 10 || fail "dummy listener did not start"
rc=0
$TFGB latency -s cluster.ps=127.0.0.1:$port -s job.timeout=1s -q >/dev/null 2>"$out/err" || rc=$?
[ "$rc" = 1 ] || fail "non-gRPC PS: exit $rc, expected 1"
grep -q "127.0.0.1:$port" "$out/err" || fail "error does not name the address: $(cat "$out/err")"
[ "$(wc -l <"$out/err")" = 1 ] || fail "error is not one line: $(cat "$out/err")"
kill "$srv"; wait "$srv" 2>/dev/null; srv=

echo "ok"
