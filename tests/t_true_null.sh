#!/bin/sh
# t_true_null.sh - a figure that is not known is null (JSON), empty (CSV),
# "-" (text), never 0, and every result tfgb writes reads back or says what
# it is.  Zero-call runs: a socket run against an HTTP listener (latency,
# bandwidth with --interval, --repeat, throughput, train) and a latency run
# stopped by SIGINT in its warm-up; then rerun and compare of what tfgb
# writes (CSV, text, a sweep's JSON) and of hostile results (a figure of
# the wrong type, an unknown or missing schema_version).  Each case checks
# the exit status, the message, and leftovers (no process of the case's
# port, no stray file in the output directory).
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py socket python3

out=$(mktemp -d)
http=''
cases=0
cleanup_on_exit "$out"

# an HTTP listener: every connection gets a 400 and is closed
cat >"$out/http.py" <<'EOF'
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
def h(c):
    try:
        c.recv(65536)
        c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept(); threading.Thread(target=h, args=(c,), daemon=True).start()
EOF
hport=$(free_port)
$PY "$out/http.py" "$hport" &
http=$!
wait_listening "$hport" || fail "the HTTP listener did not start"
mkdir "$out/r"

# case NAME STATUS TEXT CMD...: CMD exits STATUS with TEXT on stderr; its
# stdout in $out/o; afterwards no process names port $port and the output
# directory holds only what the cases wrote on purpose
case_run() {
	name=$1 want=$2 text=$3
	shift 3
	run_in "$out" "$name" "$want" "$@" || return 1
	if [ -n "$text" ] && ! grep -qF -- "$text" "$out/e"; then
		bad "$name: no '$text' in: $(cat "$out/e")"
		return 1
	fi
	left=$(pids_matching "127.0.0.1:$port")
	[ -z "$left" ] || bad "$name: processes left: $left"
	stray=$(ls "$out/r" | grep -v '^keep-' || true)
	[ -z "$stray" ] || bad "$name: stray files in the output directory: $stray"
	return 0
}

# jcheck NAME EXPR: the JSON in $out/o is valid and EXPR holds
jcheck() {
	json_check "$2" <"$out/o" || bad "$1: not ($2): $(head -c 3000 "$out/o")"
}

# nozero NAME: the report in $out/o shows no 0.00-like figure where the
# figures are (comment lines aside, after each row's counts and times:
# CSV result rows after errors, interval rows after errors; text table
# rows after calls and errors, interval rows after errors, repeat rows
# after window_s, the across-runs rows after the figure's name)
nozero() {
	$PY -c 'import re, sys
skip = {14: 2, 12: 6, 9: 4, 5: 1}
bad = []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line or line.startswith("#") or line.startswith("benchmark,") or line.startswith("type,"):
        continue
    if "," in line:
        f = line.split(",")
        f = f[7:] if f[0] == "interval" else f[11:]
    else:
        f = line.split()
        f = f[skip.get(len(f), 0):]
    if any(re.fullmatch(r"0\.0+", x) for x in f):
        bad.append(line)
print("\n".join(bad))
sys.exit(1 if bad else 0)' "$out/o" >"$out/z" || bad "$1: a 0 figure: $(cat "$out/z")"
}

port=$hport
Z="-q -s job.transport=socket -s cluster.ps=127.0.0.1:$hport -s job.warmup=0 -s job.duration=1s"
HTTP="it is an HTTP server"

# 1-3. latency against HTTP: text, CSV, JSON
case_run "latency text" 1 "$HTTP" $TFGB latency $Z && {
	nozero "latency text"
	grep -qE '^ +0 +1 +- +- ' "$out/o" || bad "latency text: no row of '-': $(cat "$out/o")"
}
case_run "latency csv" 1 "$HTTP" $TFGB latency $Z -f csv && {
	nozero "latency csv"
	grep -qE '^latency,socket,.*,0,1,,,,,,,,,,,,,,,failed$' "$out/o" ||
		bad "latency csv: not empty cells: $(cat "$out/o")"
}
case_run "latency json" 1 "$HTTP" $TFGB latency $Z -f json && jcheck "latency json" \
	'd["calls"] == 0 and d["status"] == "failed" and d["latency_us"] is None
	 and d["rpc_per_s"] is None and d["MBps"] is None and d["Gbps"] is None
	 and d["histogram"]["min_ns"] is None and d["histogram"]["max_ns"] is None
	 and all(v is None for v in d["percentiles_us"].values())'

# 4-6. bandwidth with --interval: JSON, CSV and text interval rows
case_run "bandwidth interval json" 1 "$HTTP" $TFGB bandwidth $Z --interval 100ms -f json &&
	jcheck "bandwidth interval json" 'd["rpc_per_s"] is None and len(d["intervals"]) >= 1
	 and all(x["calls"] > 0 or (x["rpc_per_s"] is None and x["MBps"] is None
	         and set(x["latency_us"].values()) == {None}) for x in d["intervals"])'
case_run "bandwidth interval csv" 1 "$HTTP" $TFGB bandwidth $Z --interval 100ms -f csv && {
	nozero "bandwidth interval csv"
	grep -qE '^interval,0,0,[0-9.]+,[0-9.]+,0,[0-9]+,,,,,,$' "$out/o" ||
		bad "bandwidth interval csv: $(cat "$out/o")"
}
case_run "bandwidth interval text" 1 "$HTTP" $TFGB bandwidth $Z --interval 100ms && nozero \
	"bandwidth interval text"

# 7-8. --repeat: per-run figures and the figures across runs
case_run "repeat json" 1 "$HTTP" $TFGB latency $Z -s job.repeat=3 -f json && jcheck "repeat json" \
	'all(v is None for v in d["repeat"]["figures"].values())
	 and all(r["rpc_per_s"] is None and r["avg_us"] is None for r in d["repeat"]["per_run"])'
case_run "repeat text" 1 "$HTTP" $TFGB latency $Z -s job.repeat=3 && nozero "repeat text"

# 9-10. throughput: 2 workers, none completes a call
case_run "throughput json" 1 "$HTTP" $TFGB throughput $Z -s cluster.workers=2 -f json &&
	jcheck "throughput json" 'd["throughput"]["rpc_per_s"] is None
	 and d["throughput"]["worker_rpc_per_s_min"] is None
	 and d["throughput"]["worker_rpc_per_s_max"] is None and d["latency_us"] is None'
case_run "throughput text" 1 "$HTTP" $TFGB throughput $Z -s cluster.workers=2 && {
	nozero "throughput text"
	grep -q '^# worker rpc/s: slowest -, fastest -$' "$out/o" || bad "throughput text: $(cat "$out/o")"
}

# 11. train: no measured step, no MB/s per PS
case_run "train text" 1 "$HTTP" $TFGB train $Z -s cluster.workers=1 && {
	nozero "train text"
	grep -q '^# PS 0: .* - MB/s$' "$out/o" || bad "train text: $(cat "$out/o")"
}

# 12. SIGINT in the warm-up, against a server of this run's own
port=$(free_port)
cases=$((cases + 1))
$TFGB latency -q -s job.transport=socket -s cluster.ps=127.0.0.1:$port -s job.warmup=60s \
	-s job.duration=1s -f json >"$out/o" 2>"$out/e" &
run=$!
wait_listening "$port" 20 || bad "sigint: the server did not start"
sleep 0.5
kill -INT "$run"
rc=0
wait "$run" || rc=$?
if [ "$rc" != 1 ]; then
	bad "sigint in warm-up: exit status $rc, not 1: $(cat "$out/e")"
else
	grep -q "interrupted" "$out/e" || bad "sigint in warm-up: no 'interrupted' in $(cat "$out/e")"
	jcheck "sigint in warm-up" 'd["status"] == "interrupted" and d["calls"] == 0
	 and d["latency_us"] is None and d["rpc_per_s"] is None'
	wait_closed "$port" 10 || bad "sigint in warm-up: its server still listens"
fi

# results to read back: one run, a sweep, the CSV and text of one
port=$(free_port)
OK="-q -s job.transport=socket -s cluster.ps=127.0.0.1:$port -s job.warmup=0 -s job.duration=200ms -s payload.iovecs=2"
case_run "ok json" 0 "" $TFGB latency $OK -f json -o "$out/r/keep-ok.json"
case_run "ok csv" 0 "" $TFGB latency $OK -f csv -o "$out/r/keep-ok.csv" && {
	# warmup_s and duration_s with the same precision
	tail -1 "$out/r/keep-ok.csv" | grep -qE '^latency,socket,([^,]*,){5}0\.000000,0\.[0-9]{6},' ||
		bad "ok csv: warmup_s and duration_s differ in precision: $(cat "$out/r/keep-ok.csv")"
}
case_run "ok text" 0 "" $TFGB latency $OK -o "$out/r/keep-ok.txt"
case_run "sweep json" 0 "" $TFGB latency $OK --sweep payload.iovecs=1,2 -f json \
	-o "$out/r/keep-sw.json"
port=$hport
case_run "zero json" 1 "$HTTP" $TFGB latency $Z -f json -o "$out/r/keep-zero.json"
R=$out/r

# 13-16. compare with a side that completed no call
case_run "compare zero" 0 "" $TFGB compare "$R/keep-ok.json" "$R/keep-zero.json" && {
	grep -qE '^latency avg \(us\) +[0-9.]+ +- +-$' "$out/o" || bad "compare zero: $(cat "$out/o")"
	grep -qE '^rpc/s +[0-9.]+ +- +-$' "$out/o" || bad "compare zero: rpc/s: $(cat "$out/o")"
	grep -q "^# note: B (.*keep-zero.json) completed no call (status failed)" "$out/o" ||
		bad "compare zero: no note naming B: $(cat "$out/o")"
	# (a process's CPU of 0.0% is measured: its ratio may be 0)
	grep -E '^(latency|rpc/s|MB/s|CPU per RPC|wire)' "$out/o" | grep -q ' 0\.000$' &&
		bad "compare zero: a ratio of 0.000: $(cat "$out/o")"
}
# a result of a tfgb that wrote 0 for a run without a call: still "-"
$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["latency_us"] = dict.fromkeys(["min", "avg", "p50", "p90", "p99", "p999", "max", "stddev"], 0.0)
d["rpc_per_s"] = d["MBps"] = 0.0
json.dump(d, open(sys.argv[2], "w"))' "$R/keep-zero.json" "$R/keep-old0.json"
case_run "compare old zeros" 0 "" $TFGB compare "$R/keep-old0.json" "$R/keep-ok.json" && {
	grep -qE '^latency p50 \(us\) +- +[0-9.]+ +-$' "$out/o" || bad "compare old zeros: $(cat "$out/o")"
	grep -q "^# note: A " "$out/o" || bad "compare old zeros: no note naming A"
}
case_run "compare sweeps" 0 "" $TFGB compare "$R/keep-sw.json" "$R/keep-sw.json" && {
	grep -q '^# sweep of payload.iovecs: 2 results in A, 2 in B' "$out/o" &&
	grep -q '^## payload.iovecs = 1$' "$out/o" && grep -q '^## payload.iovecs = 2$' "$out/o" ||
		bad "compare sweeps: $(cat "$out/o")"
}
case_run "compare sweep with one" 2 "is a sweep's document and" \
	$TFGB compare "$R/keep-sw.json" "$R/keep-ok.json"

# 17-19. rerun of a sweep, the CSV, the text
case_run "rerun sweep" 2 "--sweep payload.iovecs=1,2" $TFGB rerun "$R/keep-sw.json" &&
	grep -q "is a sweep's document (2 results), not one result" "$out/e" ||
	bad "rerun sweep: $(cat "$out/e")"
case_run "rerun csv" 2 "is tfgb's CSV report, which does not keep the job" \
	$TFGB rerun "$R/keep-ok.csv"
case_run "compare text" 2 "is tfgb's text report" $TFGB compare "$R/keep-ok.txt" "$R/keep-ok.json"
# the command the sweep's message gives runs it again
port=$(free_port)
case_run "sweep again" 0 "" $TFGB latency -c "$R/keep-sw.json" --sweep payload.iovecs=1,2 \
	-s cluster.ps=127.0.0.1:$port -q -f json && jcheck "sweep again" \
	'[r["payload"]["iovecs"] for r in d["results"]] == [1, 2]'
port=$hport

# 20-25. hostile results: wrong types, schema_version
edit() { # edit NAME PYTHON: keep-ok.json changed by PYTHON (on d) into keep-NAME.json
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))' "$R/keep-ok.json" "$R/keep-$1.json" "$2"
}
edit str 'd["rpc_per_s"] = "12"'
edit arr 'd["latency_us"] = [1]'
edit v2 'd["schema_version"] = 2'
edit vstr 'd["schema_version"] = "1"'
edit nov 'del d["schema_version"]'
case_run "compare string figure" 2 '"rpc_per_s" is a string, not a number or null' \
	$TFGB compare "$R/keep-ok.json" "$R/keep-str.json"
case_run "compare array latency" 2 '"latency_us" is an array, not an object or null' \
	$TFGB compare "$R/keep-arr.json" "$R/keep-ok.json"
case_run "compare schema 2" 2 "schema_version 2 is not one tfgb" \
	$TFGB compare "$R/keep-ok.json" "$R/keep-v2.json"
case_run "rerun schema string" 2 '"schema_version" is a string, not an integer' \
	$TFGB rerun "$R/keep-vstr.json"
case_run "rerun no schema" 2 'no "schema_version"' $TFGB rerun "$R/keep-nov.json"
case_run "plot schema 2" 2 "schema_version 2 is not one tfgb" \
	$TFGB plot -o "$out/p.svg" "$R/keep-v2.json"
[ -e "$out/p.svg" ] && bad "plot schema 2: wrote a figure"
$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["results"][1]["MBps"] = True
json.dump(d, open(sys.argv[2], "w"))' "$R/keep-sw.json" "$R/keep-swbad.json"
case_run "compare sweep bad row" 2 'results[1]: "MBps" is a boolean' \
	$TFGB compare "$R/keep-swbad.json" "$R/keep-sw.json"

# every JSON document written above is valid under the schema
schema_check "$R/keep-ok.json" "$R/keep-zero.json" "$R/keep-sw.json" ||
	bad "a result against the schema"

echo "cases: $cases"
[ "$problems" = 0 ] || fail "$problems problem(s)"
exit 0
