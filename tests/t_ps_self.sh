#!/bin/sh
# t_ps_self.sh - a tfgb serve started by hand measures itself (srvinfo.h):
# on loopback, a server started first, then throughput runs against it
# (the two-step way):
#   1. one run, grpc: its JSON has ps_resources for PS 0 with the server's
#      pid, nonzero CPU over a window near the run's, runs 1, not shared;
#      the text report shows the server's own lines;
#   2. two runs at once against the same server: each result flags the
#      server shared (runs 2), in JSON and text;
#   3. the socket transport: the same figures (its own Info reply path);
#   4. a server with monitor.interval = 0 says it does not sample itself.
# A run that started its own server (the launcher's child) asks for none:
# the launcher samples it (t_throughput).
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3

out=$(mktemp -d)
srv=''
cleanup_on_exit "$out"

p1=$(free_ports 3) || fail "no free ports"
c1=$((p1 + 1)) c2=$((p1 + 2)) # the runs' own control services (p1 - 1: the server's)

# serve TRANSPORT [-s ...]: a server started by hand on p1, ready
serve() {
	tr=$1
	shift
	"$TFGB" serve -q -s cluster.ps=127.0.0.1:$p1 -s job.transport=$tr "$@" 2>"$out/srv.err" &
	srv=$!
	wait_listening $p1 20 || fail "tfgb serve ($tr) did not listen: $(cat "$out/srv.err")"
}

# stop: the server, gracefully, within a bounded time
stop() {
	kill -INT "$srv"
	i=0
	while kill -0 "$srv" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $((100 * SLOW)) ] && { kill -KILL "$srv"; fail "tfgb serve did not stop"; }
		sleep 0.1
	done
	wait "$srv"
	srv=''
}

# run NAME TRANSPORT CONTROL [-s ...]: a throughput run against the server
run() {
	name=$1 tr=$2 ctl=$3
	shift 3
	"$TFGB" throughput -q -s cluster.ps=127.0.0.1:$p1 -s cluster.control=127.0.0.1:$ctl \
		-s job.transport=$tr -s cluster.workers=1 -s job.warmup=0s -s job.duration=3s \
		-s payload.categories=small "$@" >"$out/$name" 2>"$out/$name.err" ||
		fail "$name: exit $?: $(cat "$out/$name.err")"
}

# 1. one run: its own figures, not shared
serve grpc
spid=$srv
run one.json grpc $c1 -f json
json_check 'len(d["ps_resources"]) == 1 and [(p["index"], p["pid"], p["samples_itself"], p["runs"],
 p["shared"], 2 <= p["window_s"] <= 60, p["samples"] >= 2, p["processes"][0]["role"],
 p["processes"][0]["pid"], p["summary"]["roles"][0]["user_s"] + p["summary"]["roles"][0]["sys_s"] > 0,
 p["net"]["scope"]) for p in d["ps_resources"]][0] == (0, '$spid', True, 1, False, True, True, "ps",
 '$spid', True, "host")' <"$out/one.json" || fail "one run: ps_resources: $(cat "$out/one.json")"
run one.txt grpc $c1
grep -q "^# PS 0 (pid $spid on .*), as it sampled itself over the run's [0-9.]*s:$" "$out/one.txt" ||
	fail "text: no line of the server's own figures: $(cat "$out/one.txt")"
grep -q "^# resources: ps x1: CPU [0-9.]*% of a core" "$out/one.txt" ||
	fail "text: no CPU line of the server: $(cat "$out/one.txt")"
grep -q "SHARED" "$out/one.txt" && fail "text: one run alone is flagged shared"
# its window is this run's: its counts per call (about one context switch
# per call of a unary round trip, and more over gRPC's threads)
json_check '[p["summary"]["roles"][0]["csw_per_rpc"] >= 0.5 and p["summary"]["calls"] > 0
 for p in d["ps_resources"]] == [True]' <"$out/one.json" ||
	fail "one run: the server's counts per call: $(cat "$out/one.json")"

# 2. two runs at once: each says the server was shared
run a.json grpc $c1 -f json &
a=$!
run b.txt grpc $c2 -s job.duration=4s
wait $a || fail "run a failed"
json_check '[p["shared"] and p["runs"] == 2 for p in d["ps_resources"]] == [True]' <"$out/a.json" ||
	fail "two runs at once: not flagged shared: $(cat "$out/a.json")"
json_check '[p["summary"]["roles"][0]["csw_per_rpc"] is None and p["summary"]["calls"] == 0
 for p in d["ps_resources"]] == [True]' <"$out/a.json" ||
	fail "two runs at once: per-call figures of a shared server: $(cat "$out/a.json")"
grep -q "SHARED with other runs" "$out/b.txt" && grep -q "^#   2 runs used this server" "$out/b.txt" ||
	fail "text of a shared run: $(cat "$out/b.txt")"
stop

# 3. socket: the same through its own Info path
serve socket
spid=$srv
run sock.json socket $c1 -f json
json_check '[p["pid"] == '$spid' and p["runs"] == 1 and '\
'p["summary"]["roles"][0]["user_s"] + p["summary"]["roles"][0]["sys_s"] > 0 for p in d["ps_resources"]] == [True]' <"$out/sock.json" ||
	fail "socket: ps_resources: $(cat "$out/sock.json")"
stop

# 4. a server that does not sample itself says so
serve grpc -s monitor.interval=0
run off.json grpc $c1 -f json
json_check '[not p["samples_itself"] and "does not sample itself" in p["why"] and "processes" not in p for p in d["ps_resources"]] == [True]' \
	<"$out/off.json" || fail "monitor.interval = 0: $(cat "$out/off.json")"
stop
echo "PASS: t_ps_self"
