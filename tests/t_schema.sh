#!/bin/sh
# The JSON results of real runs against proto/tfgb-result.schema.json:
# latency, bandwidth (serialized, repeats, intervals), throughput with two
# workers and intervals, --ndjson lines, a sweep, an interrupted run; a
# Latin-1 byte in a path still gives valid UTF-8 that Python's json module
# reads; and the schema is no rubber stamp: results with a key missing, a
# bad status or no schema_version are rejected.  (Every test's json_check
# validates the results it reads too: tests/lib.sh.)
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import jsonschema' 2>/dev/null || skip "no python3-jsonschema (apt-get install python3-jsonschema)"

port=$(free_port) || fail "no free port"
base3=$(free_ports 2) || fail "no free ports"
out=$(mktemp -d)
cleanup() {
	for p in $(pids_matching "127.0.0.1:$port") $(pids_matching "127.0.0.1:$base3"); do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

L="-s cluster.ps=127.0.0.1:$port -s job.warmup=0 -s job.duration=300ms -s payload.iovecs=3 -s payload.categories=small -q -f json"

$TFGB latency $L -s monitor.interval=100ms >"$out/lat.json" 2>"$out/err" ||
	fail "latency: $(cat "$out/err")"
$TFGB bandwidth $L -s job.mode=serialized -s job.repeat=2 --interval 100ms >"$out/bw.json" \
	2>"$out/err" || fail "bandwidth: $(cat "$out/err")"
$TFGB latency $L --interval 100ms --ndjson >"$out/nd.json" 2>"$out/err" ||
	fail "ndjson: $(cat "$out/err")"
$TFGB latency $L -s job.duration=100ms --sweep payload.iovecs=1:2:1 >"$out/sweep.json" \
	2>"$out/err" || fail "sweep: $(cat "$out/err")"
$TFGB throughput -s cluster.ps=127.0.0.1:$base3 -s cluster.workers=2 -s job.warmup=0 \
	-s job.duration=300ms -s payload.iovecs=3 -q -f json --interval 100ms >"$out/tp.json" \
	2>"$out/err" || fail "throughput: $(cat "$out/err")"
schema_check "$out/lat.json" "$out/bw.json" "$out/nd.json" "$out/sweep.json" "$out/tp.json" ||
	fail "a result the schema rejects"
# interrupted: SIGINT halfway through a long window
$TFGB latency $L -s job.duration=30s >"$out/int.json" 2>"$out/err" &
pid=$!
sleep "$(slow 1.5)"
kill -INT $pid
wait $pid
[ $? = 1 ] || fail "interrupted run did not exit 1: $(cat "$out/err")"
json_check 'd["status"] == "interrupted" and d["interrupted"]' <"$out/int.json" ||
	fail "interrupted result: $(cat "$out/int.json")"
schema_check "$out/int.json" || fail "the interrupted result against the schema"

# a Latin-1 byte (0xe9) in the series path: the result is valid UTF-8
lat1=$(printf "$out/r\351sultat.csv")
$TFGB latency $L -s monitor.interval=100ms --series "$lat1" >"$out/l1.json" 2>"$out/err" ||
	fail "latin-1 path: $(cat "$out/err")"
[ -s "$lat1" ] || fail "no series at the Latin-1 path"
$PY -c 'import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
sys.exit(0 if "r\ufffdsultat.csv" in d["job"] else 1)' "$out/l1.json" ||
	fail "the Latin-1 path is not U+FFFD in valid UTF-8: $(grep -a series "$out/l1.json")"
schema_check "$out/l1.json" || fail "the Latin-1 result against the schema"

# the schema rejects what a reader could not use
for edit in 'del d["schema_version"]' 'd["status"] = "fine"' 'del d["latency_us"]["p99"]' \
	'd["calls"] = -1' 'd["intervals"][0]["calls"] = "7"' 'd["schema_version"] = 2'; do
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[3], "w"))' "$out/bw.json" "$edit" "$out/bad.json" || fail "edit $edit"
	if schema_check "$out/bad.json" 2>/dev/null; then fail "the schema accepts: $edit"; fi
done
exit 0
