#!/bin/sh
# tfgb's worker against a foreign server: python3-grpcio's implementation of
# the wire contract (proto/tfgb.proto) (tests/interop/wire_server.py), not tfgb's code.  Latency (Echo)
# and bandwidth (Ack) must complete with every byte checked.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed for $PY"
[ -f tests/interop/wire_server.py ] || fail "tests/interop/wire_server.py is missing"

port=$(free_port)
out=$(mktemp -d)
srv=
cleanup_on_exit "$out"

$PY tests/interop/wire_server.py "$port" >"$out/srv.out" 2>&1 &
srv=$!
wait_listening "$port" 20 || fail "python server did not start: $(cat "$out/srv.out")"

base="-s cluster.ps=127.0.0.1:$port -s job.warmup=0s -q -f json"
for scheme in uniform skew; do
	$TFGB latency $base -s job.iterations=20 -s job.verify=yes -s payload.scheme=$scheme \
		>"$out/lat.json" 2>"$out/err" || fail "latency against grpcio ($scheme): $(cat "$out/err")"
	json_check 'd["calls"] == 20 and d["errors"] == 0 and d["status"] == "ok"' <"$out/lat.json" ||
		fail "latency JSON: $(cat "$out/lat.json")"
done
$TFGB bandwidth $base -s job.iterations=40 -s job.inflight=4 >"$out/bw.json" 2>"$out/err" ||
	fail "bandwidth against grpcio: $(cat "$out/err")"
json_check 'd["calls"] == 40 and d["MBps"] > 0' <"$out/bw.json" || fail "bandwidth JSON: $(cat "$out/bw.json")"
kill -0 "$srv" 2>/dev/null || fail "tfgb stopped a server it did not start"
echo "ok"
