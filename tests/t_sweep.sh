#!/bin/sh
# --sweep: a real short latency sweep of payload.iovecs = 1, 2, 3 gives three
# rows as text and CSV and, as JSON, three full results whose jobs carry
# each value; a grid of two keys (--sweep twice) runs its four points in
# order, one table and one JSON document that rerun and compare read;
# bad sweeps and grids exit 2 with a one-line message before anything
# runs (an all-reduce [network] point on the pair too); a failing run
# stops the sweep with exit 1 naming its value; SIGINT stops the running
# child and the sweep, leaving no process behind.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"

port=$(free_port)
out=$(mktemp -d)
bogus=
cleanup() {
	[ -n "$bogus" ] && kill "$bogus" 2>/dev/null
	for p in $(pids_matching "127.0.0.1:$port"); do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

base="-s cluster.ps=127.0.0.1:$port -s job.warmup=0s -s job.duration=$(slow 300)ms -q"
sweep="--sweep payload.iovecs=1:3:1"

# text: a header, then one row per value, the value first
$TFGB latency $base $sweep >"$out/text" 2>"$out/err" || fail "text sweep exited $?: $(cat "$out/err")"
[ "$(grep -vc '^#' "$out/text")" = 3 ] || fail "expected 3 rows: $(cat "$out/text")"
[ "$(grep -v '^#' "$out/text" | awk '{printf "%s ", $1}')" = "1 2 3 " ] ||
	fail "the rows are not 1, 2, 3: $(cat "$out/text")"
grep -q '^#payload.iovecs .*calls .*avg_us .*p99_us' "$out/text" ||
	fail "no column header: $(cat "$out/text")"

# CSV: one header line, one row per value; the payload really has the value
$TFGB latency $base $sweep -f csv >"$out/csv" 2>"$out/err" || fail "csv sweep exited $?: $(cat "$out/err")"
[ "$(wc -l <"$out/csv")" = 4 ] || fail "expected a header and 3 rows: $(cat "$out/csv")"
head -n 1 "$out/csv" | grep -q '^payload.iovecs,benchmark,transport,.*,status$' ||
	fail "bad CSV header: $(head -n 1 "$out/csv")"
$PY - "$out/csv" <<'EOF' || fail "CSV rows do not match their values: $(cat "$out/csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["payload.iovecs"] for r in rows] == ["1", "2", "3"], rows
assert all(r["iovecs"] == r["payload.iovecs"] and r["status"] == "ok" for r in rows), rows
assert all(int(r["calls"]) > 0 for r in rows), rows
EOF

# JSON: every run's full result, its job text with the value
$TFGB latency $base $sweep -f json -o "$out/json" 2>"$out/err" ||
	fail "json sweep exited $?: $(cat "$out/err")"
json_check 'd["sweep"]["key"] == "payload.iovecs" and d["sweep"]["values"] == [1, 2, 3]
	and d["sweep"]["status"] == "ok" and len(d["results"]) == 3
	and all("\niovecs = %d\n" % (i + 1) in r["job"] and r["payload"]["iovecs"] == i + 1
	        and r["benchmark"] == "latency" and r["status"] == "ok"
	        for i, r in enumerate(d["results"]))' <"$out/json" ||
	fail "bad sweep JSON: $(head -c 600 "$out/json")"

# a result of the sweep, saved on its own, runs again
$PY -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["results"][1]))' \
	"$out/json" >"$out/one.json" || fail "cannot take a result out of the sweep"
$TFGB rerun "$out/one.json" -f csv >"$out/rerun" 2>"$out/err" || fail "rerun exited $?: $(cat "$out/err")"
[ "$(tail -n 1 "$out/rerun" | cut -d, -f5)" = 2 ] || fail "rerun of value 2: $(cat "$out/rerun")"

# a grid: --sweep twice runs the product, the first key outermost, one
# table with a column per key; its JSON holds every point's values, and
# rerun and compare read it back
grid="--sweep payload.iovecs=1,2 --sweep job.mode=serialized,non-serialized"
$TFGB latency $base -s job.duration=$(slow 150)ms $grid >"$out/grid" 2>"$out/err" ||
	fail "grid exited $?: $(cat "$out/err")"
[ "$(grep -v '^#' "$out/grid" | awk '{printf "%s/%s ", $1, $2}')" = \
	"1/serialized 1/non-serialized 2/serialized 2/non-serialized " ] ||
	fail "the grid's rows are not its points in order: $(cat "$out/grid")"
grep -q '^# .*, sweep of payload.iovecs x job.mode: 4 points' "$out/grid" &&
	grep -q '^# transport grpc, mode swept;' "$out/grid" &&
	grep -q '^#payload.iovecs       job.mode  *calls' "$out/grid" || fail "grid header: $(cat "$out/grid")"
$TFGB latency $base -s job.duration=$(slow 150)ms $grid -f json -o "$out/grid.json" 2>"$out/err" ||
	fail "grid JSON exited $?: $(cat "$out/err")"
json_check '"key" not in d["sweep"] and d["sweep"]["runs"] == 4
	and [(k["key"], k["values"]) for k in d["sweep"]["keys"]] ==
	    [("payload.iovecs", [1, 2]), ("job.mode", ["serialized", "non-serialized"])]
	and d["sweep"]["points"] == [[1, "serialized"], [1, "non-serialized"],
	                             [2, "serialized"], [2, "non-serialized"]]
	and all(r["payload"]["iovecs"] == p[0] and r["mode"] == p[1] and r["calls"] > 0
	        for p, r in zip(d["sweep"]["points"], d["results"]))' <"$out/grid.json" ||
	fail "bad grid JSON: $(head -c 900 "$out/grid.json")"
rc=0
$TFGB rerun "$out/grid.json" 2>"$out/err" || rc=$?
[ "$rc" = 2 ] && grep -qF -- "--sweep payload.iovecs=1,2 --sweep job.mode=serialized,non-serialized" \
	"$out/err" || fail "rerun of a grid: exit $rc: $(cat "$out/err")"
$TFGB compare "$out/grid.json" "$out/grid.json" >"$out/cmp" 2>"$out/err" ||
	fail "compare of grids exited $?: $(cat "$out/err")"
grep -q '^# grid of payload.iovecs x job.mode: 4 results in A, 4 in B, compared point by point' \
	"$out/cmp" && [ "$(grep -c '^## ' "$out/cmp")" = 4 ] &&
	grep -q '^## payload.iovecs = 2, job.mode = serialized$' "$out/cmp" &&
	! grep -q 'only in' "$out/cmp" || fail "compare of grids: $(head -n 5 "$out/cmp")"
rc=0
$TFGB compare "$out/grid.json" "$out/json" >/dev/null 2>"$out/err" || rc=$?
[ "$rc" = 2 ] && grep -q "sweeps payload.iovecs x job.mode and .* sweeps payload.iovecs:" "$out/err" ||
	fail "a grid compared with a sweep: exit $rc: $(cat "$out/err")"

# payload.size: one buffer per size, the OSU-style message-size table
$TFGB latency $base --sweep payload.size=1B:1KiB:*8 -f csv >"$out/size" 2>"$out/err" ||
	fail "size sweep exited $?: $(cat "$out/err")"
$PY - "$out/size" <<'EOF' || fail "size sweep rows: $(cat "$out/size")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["payload.size"] for r in rows] == ["1", "8", "64", "512"], rows
assert all(r["scheme"] == "custom" and r["iovecs"] == "1" and r["bytes"] == r["payload.size"]
           and r["status"] == "ok" and int(r["calls"]) > 0 for r in rows), rows
EOF
$TFGB bandwidth $base --sweep payload.size=1KiB,64KiB >"$out/size.txt" 2>"$out/err" ||
	fail "bandwidth size sweep: $(cat "$out/err")"
grep -q '^#payload.size .*MB/s .*Gbit/s' "$out/size.txt" || fail "no Gbit/s: $(cat "$out/size.txt")"
[ "$(grep -v '^#' "$out/size.txt" | awk '{printf "%s ", $1}')" = "1KiB 64KiB " ] ||
	fail "size rows: $(cat "$out/size.txt")"

# bad sweeps: exit 2, one line naming the key, the value and the range
expect2() {
	want=$1
	shift
	rc=0
	$TFGB latency $base "$@" >"$out/o" 2>"$out/e" || rc=$?
	[ "$rc" = 2 ] || fail "$*: exit $rc, not 2: $(cat "$out/e")"
	[ ! -s "$out/o" ] || fail "$*: a report although refused: $(cat "$out/o")"
	[ "$(wc -l <"$out/e")" = 1 ] || fail "$*: not one line: $(cat "$out/e")"
	grep -qF -- "$want" "$out/e" || fail "$*: '$(cat "$out/e")' lacks '$want'"
}
expect2 "payload.iovecs: step '0'" --sweep payload.iovecs=1:3:0
expect2 "end 1 is below start 3" --sweep payload.iovecs=3:1:1
expect2 "start '0': must be in [1, 65536]" --sweep payload.iovecs=0:3:1
expect2 "value '99999': must be in [1, 65536]" --sweep payload.iovecs=1,99999
expect2 "more than 1000" --sweep payload.iovecs=1:5000:1
expect2 "needs a numeric key" --sweep payload.scheme=1:3:1
expect2 "payload.size: start '0': must be in [1B, 1GiB]" --sweep payload.size=0:8:*2
expect2 "payload.size: end '2GiB': must be in [1B, 1GiB]" --sweep payload.size=1B:2GiB:*2
expect2 "unknown key 'payload.iovex'" --sweep payload.iovex=1:3:1
expect2 "start '0': must be" --print-config --sweep payload.iovecs=0:3:1
# a grid's own refusals: a key twice, too many points or keys, an empty
# list, payload.size beside a key it sets, a point that makes a bad job
expect2 "payload.iovecs is given twice" --sweep payload.iovecs=1,2 --sweep payload.iovecs=3
expect2 "the grid is 100 x 20 = 2000 points, more than 1000" \
	--sweep payload.iovecs=1:100:1 --sweep job.inflight=1:20:1
expect2 "job.inflight: no values after '='" --sweep payload.iovecs=1,2 --sweep job.inflight=
expect2 "job.inflight: an empty value in the list" --sweep payload.iovecs=1 --sweep job.inflight=1,,2
expect2 "more than 3 times: a grid sweeps 1 to 3 keys" --sweep payload.iovecs=1 \
	--sweep job.inflight=1 --sweep job.mode=serialized --sweep job.transport=grpc
expect2 "payload.size sets payload.scheme" --sweep payload.size=1B,2B --sweep payload.scheme=skew
expect2 "point payload.iovecs = 2000, job.inflight = 1: payload.iovecs = 2000: payload could reach" \
	-s payload.large=10MiB --sweep payload.iovecs=1,2000 --sweep job.inflight=1
# latency keeps one call in flight: job.inflight other than 1 is refused,
# from the job file, a -s or a point, before any run (#42)
printf '[job]\ninflight = 4\n' >"$out/inflight.ini"
expect2 "inflight.ini:2: job.inflight = 4: latency keeps one call in flight" -c "$out/inflight.ini"
expect2 "value 2: job.inflight = 2: latency keeps one call in flight" --sweep job.inflight=1,2
expect2 "point payload.iovecs = 1, job.inflight = 8: job.inflight = 8: latency keeps" \
	--sweep payload.iovecs=1 --sweep job.inflight=1,8
expect2 "output.series" --series "$out/series.csv" --sweep payload.iovecs=1,2
# a value that makes a bad job (a payload over 1 GiB) is refused up front
expect2 "value 2000: payload.iovecs = 2000: payload could reach" \
	-s payload.large=10MiB --sweep payload.iovecs=1,2000
# the all-reduce strategy on the pair cannot have [network]: refused before
# the first point runs (it ran the 0 ms point, then failed at 10 ms)
rc=0
$TFGB train -s cluster.workers=2 -s train.strategy=allreduce -s train.model=mnist_mlp \
	-s train.steps=1 -q --sweep network.delay=0ms,10ms >"$out/o" 2>"$out/e" || rc=$?
[ "$rc" = 2 ] && [ ! -s "$out/o" ] && [ "$(wc -l <"$out/e")" = 1 ] &&
	grep -q "sweep network.delay, value 10ms: network.delay = 10ms: .*network.topology = switch" \
	"$out/e" || fail "allreduce --sweep network.delay: exit $rc: $(cat "$out/o" "$out/e")"
# the all-reduce strategy's table: its steps and times, which its result
# keeps under "train" (it once printed "-" in every column, "mode " empty)
$TFGB train -s cluster.workers=2 -s train.strategy=allreduce -s train.model=mnist_mlp \
	-s train.steps=3 -s collective.ranks=127.0.0.1:$(free_port) --sweep train.bucket_bytes=1MiB,25MiB \
	>"$out/ar" 2>"$out/e" || fail "allreduce --sweep train.bucket_bytes: exit $?: $(cat "$out/e")"
grep -q '^# transport grpc, strategy allreduce;' "$out/ar" &&
	[ "$(awk '!/^#/ && NF == 7 && $2 == 3 && $4 > 0 && $7 >= $4' "$out/ar" | wc -l)" = 2 ] ||
	fail "allreduce sweep table: $(cat "$out/ar")"
rc=0
$TFGB serve --sweep payload.iovecs=1,2 >/dev/null 2>"$out/e" || rc=$?
[ "$rc" = 2 ] && grep -q "not used by 'serve'" "$out/e" || fail "serve --sweep: exit $rc $(cat "$out/e")"

# a failing run stops the sweep: a "PS" that accepts and hangs up at once
$PY -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, _ = s.accept(); c.close()' "$port" &
bogus=$!
wait_listening "$port" || fail "the hang-up listener did not start"
rc=0
$TFGB latency $base -s job.transport=socket -s job.timeout=2s --sweep payload.iovecs=1,2 -f csv \
	>"$out/o" 2>"$out/e" || rc=$?
[ "$rc" = 1 ] || fail "a failing run: exit $rc, not 1: $(cat "$out/e")"
grep -q "sweep stopped: the run of payload.iovecs = 1 failed (exit status 1)" "$out/e" ||
	fail "the failure does not name the value: $(cat "$out/e")"
kill "$bogus"
wait "$bogus" 2>/dev/null
bogus=
wait_closed "$port" || fail "the hang-up listener did not go"

# SIGINT: the running child stops (its partial row is kept), the sweep exits 1
$TFGB latency $base -s job.duration=60s --sweep payload.iovecs=1,2,3 -f csv >"$out/o" 2>"$out/e" &
sw=$!
i=0
until listening "$port"; do
	i=$((i + 1))
	[ "$i" -gt $((200 * SLOW)) ] && fail "the sweep's first run did not start: $(cat "$out/e")"
	sleep 0.1
done
sleep 0.5
kids=$(pgrep -P "$sw")
for k in $kids; do kids="$kids $(pgrep -P "$k")"; done
[ -n "$kids" ] || fail "the sweep has no running child"
kill -INT "$sw"
i=0
while kill -0 "$sw" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -gt $((300 * SLOW)) ] && fail "the sweep did not stop within $((30 * SLOW)) s of SIGINT"
	sleep 0.1
done
rc=0
wait "$sw" || rc=$?
[ "$rc" = 1 ] || fail "interrupted sweep: exit $rc, not 1: $(cat "$out/e")"
grep -q "sweep interrupted at payload.iovecs = 1" "$out/e" || fail "no interruption message: $(cat "$out/e")"
[ "$(wc -l <"$out/o")" = 2 ] && tail -n 1 "$out/o" | grep -q ',interrupted$' ||
	fail "no partial row: $(cat "$out/o")"
wait_closed "$port" || fail "the PS of the interrupted run still listens"
for k in $kids; do
	kill -0 "$k" 2>/dev/null && fail "process $k of the sweep left behind: $(cat /proc/$k/cmdline)"
done

echo "ok"
