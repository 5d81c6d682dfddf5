#!/bin/sh
# rerun and compare end to end on loopback: a JSON result run again with
# exactly its job (and with -s on top), -c RESULT.json on a benchmark, the
# result file never written over, two results compared, and one-line
# errors with status 2 for files that are not tfgb results.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import json' 2>/dev/null || skip "no /usr/bin/python3"
$TFGB rerun -h >/dev/null 2>&1 || skip "this tfgb has no rerun command"

port=$(free_port)
out=$(mktemp -d)
cleanup_on_exit "$out"

# small and medium buffers: a 300 ms window holds calls even on a loaded machine
base="-s cluster.ps=127.0.0.1:$port -s job.warmup=100ms -s job.duration=300ms -s payload.categories=small,medium -q"

# The keys of a result's job other than [output]'s, one "section.key = value" a line.
job_keys() {
	$PY -c 'import json, sys
sec = ""
for line in json.load(open(sys.argv[1]))["job"].splitlines():
    s = line.strip()
    if s.startswith("["):
        sec = s.strip("[]")
    elif "=" in s and sec != "output":
        print(sec + "." + s)' "$1"
}

# 1. a result to start from, written with -o (so its job names the file)
$TFGB latency $base -s payload.scheme=random -s job.seed=7 -f json -o "$out/a.json" 2>"$out/err" ||
	fail "latency exited $?: $(cat "$out/err")"
json_check 'd["benchmark"] == "latency" and "file = '"$out"'/a.json" in d["job"]' <"$out/a.json" ||
	fail "the result's job does not name its file"
sum=$(cksum <"$out/a.json")

# 2. rerun: the same benchmark, the same job, on standard output (not over a.json)
$TFGB rerun "$out/a.json" -q >"$out/b.json" 2>"$out/err" || fail "rerun exited $?: $(cat "$out/err")"
[ "$(cksum <"$out/a.json")" = "$sum" ] || fail "rerun wrote over the result it read"
json_check 'd["benchmark"] == "latency" and d["status"] == "ok" and d["calls"] > 0
and d["payload"]["scheme"] == "random"' <"$out/b.json" || fail "bad rerun result: $(cat "$out/b.json")"
job_keys "$out/a.json" >"$out/a.keys"
job_keys "$out/b.json" >"$out/b.keys"
cmp -s "$out/a.keys" "$out/b.keys" || fail "the rerun's job differs: $(diff "$out/a.keys" "$out/b.keys")"
json_check 'd["payload"]["sizes"] == '"$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["payload"]["sizes"])' "$out/a.json")" \
	<"$out/b.json" || fail "the rerun's payload layout differs"
wait_closed "$port" 5 || fail "server left listening after rerun"

# 3. rerun with overrides, options after the file, and another format
$TFGB rerun "$out/a.json" -s payload.iovecs=4 -s job.duration=200ms -f json -o "$out/c.json" -q \
	2>"$out/err" || fail "rerun with -s exited $?: $(cat "$out/err")"
json_check 'd["payload"]["iovecs"] == 4 and "duration = 200ms" in d["job"]' <"$out/c.json" ||
	fail "overrides not applied: $(cat "$out/c.json")"
$TFGB rerun -q -f csv "$out/a.json" >"$out/c.csv" 2>"$out/err" || fail "rerun -f csv: $(cat "$out/err")"
tail -n 1 "$out/c.csv" | grep -q '^latency,grpc,non-serialized,random,' || fail "bad CSV: $(cat "$out/c.csv")"

# 4. --print-config shows the job it would run: the result's, output aside
$TFGB rerun "$out/a.json" --print-config >"$out/p.ini" || fail "rerun --print-config"
grep -q '^seed = 7$' "$out/p.ini" || fail "--print-config lacks the result's seed"
grep -q '^file = $' "$out/p.ini" || fail "--print-config keeps output.file: $(grep '^file' "$out/p.ini")"

# 5. -c RESULT.json on a benchmark: its job, this benchmark
$TFGB bandwidth -c "$out/a.json" -s job.inflight=4 -f json -q >"$out/bw.json" 2>"$out/err" ||
	fail "bandwidth -c RESULT.json exited $?: $(cat "$out/err")"
json_check 'd["benchmark"] == "bandwidth" and d["inflight"] == 4 and d["payload"]["scheme"] == "random"' \
	<"$out/bw.json" || fail "bad bandwidth result: $(cat "$out/bw.json")"

# 6. compare: figures side by side, ratios, the differences; exit 0
$TFGB compare "$out/a.json" "$out/c.json" >"$out/cmp" 2>"$out/err" ||
	fail "compare exited $?: $(cat "$out/err")"
grep -q '^latency p50 (us) ' "$out/cmp" || fail "no p50 row: $(cat "$out/cmp")"
grep -q '^rpc/s ' "$out/cmp" || fail "no rpc/s row: $(cat "$out/cmp")"
awk '/^latency avg/ { if ($NF !~ /^[0-9]+\.[0-9]+$/) exit 1; found = 1 } END { exit !found }' \
	"$out/cmp" || fail "no B/A ratio: $(cat "$out/cmp")"
grep -q '^job: payload.iovecs: 10 -> 4$' "$out/cmp" || fail "iovecs difference not flagged: $(cat "$out/cmp")"
grep -q '^job: job.duration: 300ms -> 200ms$' "$out/cmp" || fail "duration difference not flagged"
grep -q '^payload: bytes: ' "$out/cmp" || fail "payload difference not flagged"
grep -q 'output' "$out/cmp" && fail "output.* keys are flagged: $(cat "$out/cmp")"
$TFGB compare "$out/a.json" "$out/b.json" >"$out/cmp" || fail "compare a b exited $?"
grep -q '^none: the same job, payload' "$out/cmp" || fail "a rerun should differ in nothing: $(cat "$out/cmp")"
# two benchmarks' figures are not compared (an Echo's latency is no Ack's,
# nor a training step's), as tfgb plot draws one benchmark (#42)
$TFGB compare "$out/a.json" "$out/bw.json" >"$out/cmp" 2>"$out/err" && fail "compare latency bandwidth exited 0"
grep -q "^tfgb: compare: '$out/a.json' holds latency results and '$out/bw.json' bandwidth ones: one comparison is of one benchmark$" \
	"$out/err" || fail "compare latency bandwidth: $(cat "$out/err")"
[ -s "$out/cmp" ] && fail "compare latency bandwidth printed: $(cat "$out/cmp")"

# 7. throughput reruns as throughput
tp="-s cluster.ps=127.0.0.1:$port -s cluster.ps_count=1 -s cluster.workers=1 -s job.warmup=100ms -s job.duration=300ms -s payload.categories=small,medium -q"
$TFGB throughput $tp -f json >"$out/t.json" 2>"$out/err" || fail "throughput exited $?: $(cat "$out/err")"
$TFGB rerun "$out/t.json" >"$out/t2.json" 2>"$out/err" || fail "rerun of throughput exited $?: $(cat "$out/err")"
json_check 'd["benchmark"] == "throughput" and d["throughput"]["workers"] == 1 and d["status"] == "ok"' \
	<"$out/t2.json" || fail "bad throughput rerun: $(cat "$out/t2.json")"

# 8. files that are not results: one line naming the file, exit 2, no run
printf '[job]\nduration = 1s\n' >"$out/job.ini"
printf '{"a": 1}\n' >"$out/other.json"
head -c 200 "$out/a.json" >"$out/cut.json"
$PY -c 'import json, sys
d = json.load(open(sys.argv[1])); d["benchmark"] = "serve"
json.dump(d, open(sys.argv[2], "w"))' "$out/a.json" "$out/serve.json"
for f in job.ini other.json cut.json missing.json; do
	for cmd in "rerun $out/$f" "compare $out/a.json $out/$f" "compare $out/$f $out/a.json"; do
		rc=0
		$TFGB $cmd >"$out/o" 2>"$out/err" || rc=$?
		[ "$rc" = 2 ] || fail "tfgb $cmd: exit $rc, expected 2"
		[ "$(wc -l <"$out/err")" = 1 ] || fail "tfgb $cmd: not one line: $(cat "$out/err")"
		grep -q "$f" "$out/err" || fail "tfgb $cmd: the message does not name the file: $(cat "$out/err")"
		[ -s "$out/o" ] && fail "tfgb $cmd: wrote a report"
	done
done
rc=0
$TFGB rerun "$out/serve.json" 2>"$out/err" || rc=$?
[ "$rc" = 2 ] && grep -q "benchmark 'serve' cannot be rerun" "$out/err" || fail "rerun of serve: $rc $(cat "$out/err")"
rc=0; $TFGB rerun 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "rerun without a file: exit $rc"
rc=0; $TFGB rerun "$out/a.json" "$out/b.json" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "rerun with two files: exit $rc"
rc=0; $TFGB compare "$out/a.json" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "compare with one file: exit $rc"
rc=0; $TFGB latency -c "$out/other.json" 2>"$out/err" || rc=$?
[ "$rc" = 2 ] && grep -q "other.json" "$out/err" || fail "latency -c non-result: exit $rc: $(cat "$out/err")"
wait_closed "$port" 5 || fail "server left listening"

echo "ok"
