#!/bin/sh
# [job] repeat and --interval end to end: per-run entries that add up to the
# totals in every format (latency, bandwidth, throughput), repeat = 1 output
# unchanged, intervals that add up inside one JSON document (throughput's
# from every worker), NDJSON with --ndjson where every line parses alone,
# rerun and compare of such output, and --interval's range.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import json' 2>/dev/null || skip "no /usr/bin/python3"

base3=$(free_ports 3) || fail "no free ports"
port=$(free_port) || fail "no free port"
out=$(mktemp -d)
cleanup_on_exit "$out"

# small buffers: a window of a few hundred ms holds calls even on a loaded machine
L="-s cluster.ps=127.0.0.1:$port -s job.warmup=100ms -s payload.iovecs=3 -s payload.categories=small -q"

# 1. latency, repeat = 3: three runs whose calls, bytes and errors add up
$TFGB latency $L -s job.duration=300ms -s job.repeat=3 -f json >"$out/r.json" 2>"$out/err" ||
	fail "latency repeat=3 exited $?: $(cat "$out/err")"
json_check 'd["repeat"]["runs"] == 3 and len(d["repeat"]["per_run"]) == 3
and sum(r["calls"] for r in d["repeat"]["per_run"]) == d["calls"] > 0
and sum(r["bytes"] for r in d["repeat"]["per_run"]) == d["calls"] * d["payload"]["bytes"]
and all(r["calls"] > 0 and abs(r["duration_s"] - 0.3) < 1e-6 for r in d["repeat"]["per_run"])
and abs(d["duration_s"] - 0.9) < 1e-6
and set(d["repeat"]["figures"]) == {"rpc_per_s", "MBps", "avg_us", "p50_us", "p99_us"}
and all(f["ci95_low"] <= f["mean"] <= f["ci95_high"] and f["stddev"] >= 0
        for f in d["repeat"]["figures"].values())
and abs(d["repeat"]["figures"]["rpc_per_s"]["mean"]
        - sum(r["rpc_per_s"] for r in d["repeat"]["per_run"]) / 3) < 0.01
and d["status"] == "ok" and "repeat = 3" in d["job"]' <"$out/r.json" ||
	fail "bad repeat JSON: $(cat "$out/r.json")"

# 2. text and CSV forms; repeat = 1 adds nothing
$TFGB latency $L -s job.duration=200ms -s job.repeat=2 >"$out/r.txt" 2>"$out/err" ||
	fail "text: $(cat "$out/err")"
grep -q '^# repeat: 2 runs' "$out/r.txt" || fail "no repeat lines: $(cat "$out/r.txt")"
[ "$(grep -c '^ *rpc/s ' "$out/r.txt")" = 1 ] || fail "no rpc/s row: $(cat "$out/r.txt")"
$TFGB bandwidth $L -s job.duration=200ms -s job.repeat=2 -s job.inflight=4 -f csv \
	>"$out/r.csv" 2>"$out/err" || fail "csv: $(cat "$out/err")"
$PY -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r = rows[0]
sys.exit(0 if len(rows) == 1 and r["runs"] == "2" and r["status"] == "ok"
         and float(r["rpc_per_s_ci95_low"]) <= float(r["rpc_per_s_mean"])
         <= float(r["rpc_per_s_ci95_high"]) else 1)' "$out/r.csv" ||
	fail "bad repeat CSV: $(cat "$out/r.csv")"
$TFGB latency $L -s job.duration=100ms -f csv >"$out/one.csv" 2>"$out/err" ||
	fail "repeat=1: $(cat "$out/err")"
head -n 1 "$out/one.csv" | grep -q ',status$' || fail "repeat=1 CSV changed: $(head -n 1 "$out/one.csv")"
$TFGB latency $L -s job.duration=100ms -f json >"$out/one.json" 2>"$out/err" ||
	fail "repeat=1: $(cat "$out/err")"
json_check '"repeat" not in d and "type" not in d' <"$out/one.json" || fail "repeat=1 JSON changed"
$TFGB latency $L >"$out/o" 2>"$out/err" -s job.repeat=0
[ $? = 2 ] && grep -q 'repeat' "$out/err" || fail "repeat=0 accepted: $(cat "$out/err")"

# 3. --interval 0.5s over a 2s window, -f json: one document (json.load
#    reads it) with about 4 entries in "intervals"; their calls add up
$TFGB latency $L -s job.duration=2s --interval 0.5s -f json >"$out/d.json" 2>"$out/err" ||
	fail "--interval exited $?: $(cat "$out/err")"
json_check '"type" not in d and d["schema_version"] == 1 and d["interval_s"] == 0.5
 and 3 <= len(d["intervals"]) <= 5 and d["intervals_dropped"] == 0
 and [x["interval"] for x in d["intervals"]] == list(range(len(d["intervals"])))
 and sum(x["calls"] for x in d["intervals"]) == d["calls"] > 0
 and abs(d["intervals"][-1]["end_s"] - 2.0) < 0.05' <"$out/d.json" ||
	fail "bad intervals document: $(cat "$out/d.json")"
#    --ndjson: each interval a line of its own as it ends, then the result
#    on one line
$TFGB latency $L -s job.duration=2s --interval 0.5s -f json --ndjson >"$out/i.json" \
	2>"$out/err" || fail "--ndjson exited $?: $(cat "$out/err")"
$PY -c 'import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
iv, res = lines[:-1], lines[-1]
ok = (3 <= len(iv) <= 5 and all(x["type"] == "interval" for x in iv)
      and [x["interval"] for x in iv] == list(range(len(iv)))
      and res["type"] == "result" and res["status"] == "ok" and "intervals" not in res
      and sum(x["calls"] for x in iv) == res["calls"] > 0
      and all(x["calls"] == 0 or x["latency_us"]["p50"] <= x["latency_us"]["max"] for x in iv)
      and abs(iv[-1]["end_s"] - 2.0) < 0.05)
sys.exit(0 if ok else 1)' "$out/i.json" || fail "bad NDJSON: $(cat "$out/i.json")"
$TFGB latency $L --ndjson >"$out/o" 2>"$out/err"
[ $? = 2 ] && grep -q -- '--ndjson' "$out/err" || fail "--ndjson with text: $(cat "$out/err")"
# such a file is still a result for rerun and compare
$TFGB compare "$out/i.json" "$out/r.json" >"$out/cmp" 2>"$out/err" ||
	fail "compare of NDJSON: $(cat "$out/err")"
grep -q '^rpc/s, mean of runs' "$out/cmp" || fail "compare shows no means: $(cat "$out/cmp")"
$TFGB rerun "$out/r.json" -s job.duration=100ms -s job.repeat=2 -f json -q >"$out/rr.json" \
	2>"$out/err" || fail "rerun of a repeat result: $(cat "$out/err")"
json_check 'd["repeat"]["runs"] == 2' <"$out/rr.json" || fail "rerun lost the runs"
$TFGB rerun "$out/i.json" -s job.duration=100ms -q >/dev/null 2>"$out/err" ||
	fail "rerun of NDJSON output: $(cat "$out/err")"
$TFGB compare "$out/d.json" "$out/i.json" >"$out/cmp" 2>"$out/err" ||
	fail "compare of a document and NDJSON: $(cat "$out/err")"
schema_check "$out/d.json" "$out/i.json" || fail "intervals results against the schema"
$TFGB rerun "$out/d.json" -s job.duration=100ms -q >/dev/null 2>"$out/err" ||
	fail "rerun of an intervals document: $(cat "$out/err")"

# 4. text and CSV intervals: a header, then rows before the report
$TFGB latency $L -s job.duration=400ms --interval 100ms -f csv >"$out/i.csv" 2>"$out/err" ||
	fail "csv intervals: $(cat "$out/err")"
head -n 1 "$out/i.csv" | grep -q '^type,worker,interval,start_s' || fail "no interval header"
n=$(grep -c '^interval,0,' "$out/i.csv")
[ "$n" -ge 2 ] && [ "$n" -le 6 ] || fail "$n CSV interval rows: $(cat "$out/i.csv")"
tail -n 2 "$out/i.csv" | head -n 1 | grep -q '^benchmark,' || fail "report not last"

# 5. --interval is checked
for bad in 50ms 0 abc; do
	$TFGB latency $L --interval $bad >"$out/o" 2>"$out/err"
	[ $? = 2 ] && grep -q -- '--interval' "$out/err" || fail "--interval $bad: $(cat "$out/err")"
done
$TFGB genpayload --interval 1s >"$out/o" 2>"$out/err"
[ $? = 2 ] || fail "genpayload took --interval"

# 6. throughput: 2 workers x 2 runs; the per-run aggregates add up, and each
#    worker's intervals, in the one document, add up to its calls
cat >"$out/t.ini" <<INI
[job]
warmup = 100ms
duration = 400ms
repeat = 2
[cluster]
ps = 127.0.0.1:$base3
ps_count = 2
workers = 2
[payload]
iovecs = 3
categories = small, medium
INI
$TFGB throughput -c "$out/t.ini" -q --interval 200ms -f json >"$out/t.json" 2>"$out/err" ||
	fail "throughput exited $?: $(cat "$out/err")"
$PY -c 'import json, sys
res = json.load(open(sys.argv[1]))
iv = res["intervals"]
runs = res["repeat"]["per_run"]
w = res["throughput"]["per_worker"]
ok = ("type" not in res and res["status"] == "ok" and res["repeat"]["runs"] == 2
      and res["intervals_dropped"] == 0
      and sum(r["calls"] for r in runs) == res["calls"] > 0
      and res["repeat"]["figures"]["p50_us"] is None and res["repeat"]["figures"]["avg_us"]
      and abs(sum(r["rpc_per_s"] for r in runs) / 2
              - res["repeat"]["figures"]["rpc_per_s"]["mean"]) < 0.01
      and {x["worker"] for x in iv} == {0, 1}
      and all(sum(x["calls"] for x in iv if x["worker"] == k) == w[k] for k in (0, 1)))
sys.exit(0 if ok else 1)' "$out/t.json" || fail "bad throughput intervals: $(cat "$out/t.json")"
schema_check "$out/t.json" || fail "throughput intervals against the schema"
$TFGB throughput -c "$out/t.ini" -q >"$out/t.txt" 2>"$out/err" || fail "text: $(cat "$out/err")"
grep -q '^# repeat: 2 runs' "$out/t.txt" || fail "no repeat lines: $(cat "$out/t.txt")"
exit 0
