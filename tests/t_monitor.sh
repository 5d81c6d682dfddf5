#!/bin/sh
# [monitor]: a real latency run sampling only memory and network reports
# exactly those (text, JSON "resources", --series CSV columns); interval 0
# reports none; a job or an older result that still sets [output] monitor
# is refused (exit 2) with a message naming monitor.interval.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"

port=$(free_port)
out=$(mktemp -d)
cleanup_on_exit "$out"

base="-s cluster.ps=127.0.0.1:$port -s job.warmup=0s -s job.duration=1s -q \
-s monitor.interval=100ms"

$TFGB latency $base -s monitor.resources=memory,network >"$out/text" 2>"$out/err" ||
	fail "text run exited $?: $(cat "$out/err")"
grep -q '^# resources: worker x1: RSS [0-9.]* MiB, peak' "$out/text" ||
	fail "no memory line: $(cat "$out/text")"
grep -q '^# network, host-wide, all traffic (' "$out/text" ||
	fail "no host network line: $(cat "$out/text")"
grep -q '^# network, this run ([0-9]* connection' "$out/text" ||
	fail "no run network line: $(cat "$out/text")"
grep -q 'CPU\|context switches' "$out/text" && fail "unselected figures: $(cat "$out/text")"

$TFGB latency $base -s monitor.resources=memory,network -f json -o "$out/r.json" \
	--series "$out/series.csv" 2>"$out/err" || fail "json run exited $?: $(cat "$out/err")"
json_check 'd["resources"]["selected"] == ["memory", "network"]
	and "net" in d["resources"] and "cpu_s_per_rpc" not in d["resources"]["summary"]
	and all("rss_peak_bytes" in r and "vcsw" not in r and "cpu_avg_pct" not in r
	        for r in d["resources"]["summary"]["roles"])
	and "\n[monitor]\ninterval = 100ms\nresources = memory, network\n" in d["job"]' \
	<"$out/r.json" || fail "bad resources: $(head -c 800 "$out/r.json")"
[ "$(head -n 1 "$out/series.csv")" = \
  "t_s,kind,role,index,pid,iface,rss_bytes,hwm_bytes,rchar,wchar,rx_bytes,rx_packets,tx_bytes,tx_packets,syscr,syscw" ] ||
	fail "bad series header: $(head -n 1 "$out/series.csv")"
grep -q ',net_host,' "$out/series.csv" || fail "no host network rows in the series"

# the counts that explain a CPU time, per call, of each role (all
# threads), over both transports: one context switch or more per call of a
# blocking unary round trip; system call counts known (numbers >= 0)
for tr in socket grpc; do
	$TFGB latency $base -s job.transport=$tr -s payload.iovecs=1 \
		-s payload.categories=small -f json 2>"$out/err" >"$out/c.json" ||
		fail "$tr run exited $?: $(cat "$out/err")"
	json_check 'all(r["csw_per_rpc"] >= 0.5 and r["syscr"] >= 0 and r["syscw"] >= 0
	        and abs(r["syscr_per_rpc"] - r["syscr"] / d["resources"]["summary"]["calls"]) < 0.002
	        for r in d["resources"]["summary"]["roles"])
	    and len(d["resources"]["summary"]["roles"]) == 2' <"$out/c.json" ||
		fail "$tr: per-call counts: $(head -c 1500 "$out/c.json")"
done

# off: no resources at all
$TFGB latency $base -s monitor.interval=0 -f json 2>"$out/err" |
	json_check '"resources" not in d' || fail "interval 0 still reports resources"

# the old key: a job file and an older result's job are refused, naming the new key
printf '[output]\nmonitor = 1s\n' >"$out/old.ini"
rc=0
$TFGB latency -c "$out/old.ini" >/dev/null 2>"$out/err" || rc=$?
[ "$rc" = 2 ] || fail "old job file: exit $rc"
grep -qx "tfgb: $out/old.ini:2: output.monitor is now monitor.interval (section \[monitor\]); rename it" \
	"$out/err" || fail "old job file: $(cat "$out/err")"
$PY - "$out/r.json" "$out/old.json" <<'EOF' || fail "cannot make an older result"
import json, sys
d = json.load(open(sys.argv[1]))
d["job"] = d["job"].replace("[output]\n", "[output]\nmonitor = 1s\n")
d["job"] = d["job"].replace("[monitor]\ninterval = 100ms\nresources = memory, network\n", "")
json.dump(d, open(sys.argv[2], "w"))
EOF
rc=0
$TFGB rerun "$out/old.json" >/dev/null 2>"$out/err" || rc=$?
[ "$rc" = 2 ] || fail "old result: exit $rc: $(cat "$out/err")"
grep -q "old.json#job:[0-9]*: output.monitor is now monitor.interval" "$out/err" ||
	fail "old result: $(cat "$out/err")"

echo "ok"
