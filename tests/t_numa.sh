#!/bin/sh
# tfgb-alone: pins processes to CPUs and checks which CPUs they ran on
# t_numa.sh - [affinity] ps_numa_node / worker_numa_node on real processes.
# A throughput launcher pinned to one CPU starts a tfgb serve and two
# workers bound to node 0: they run on node 0's CPUs (more than the
# launcher's one; the server only on ps_cpus, intersected with the node) and
# every mapping of theirs is bound to node 0 (/proc/PID/numa_maps "bind:0",
# the process's MPOL_BIND).  Without the keys the same processes keep the
# launcher's CPU and the default policy, so the checks can fail.  The
# latency worker and its PS likewise.  A node this machine lacks, or one
# sharing no CPU with the list, is refused with status 2 by serve, latency
# and throughput, naming the key, where it was set and the machine's nodes.
# A node per local rank ("0/0") binds each process to its rank's node and
# the result's processes record it; "0/N" with a node N this machine lacks
# is refused with status 2 naming the key and local rank 1.
# (Mems_allowed_list in /proc/PID/status is the cpuset's, which binding
# does not change: numa_maps shows the policy.)
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import json' 2>/dev/null || skip "no /usr/bin/python3"
$TFGB version | grep -q '^numa: compiled in' || skip "tfgb is built with NUMA=0"
nd=/sys/devices/system/node
[ -r $nd/online ] && [ -r $nd/node0/cpulist ] && [ -r /proc/self/numa_maps ] ||
	skip "this kernel has no NUMA support (no $nd/online or numa_maps)"
command -v taskset >/dev/null || skip "no taskset (util-linux)"

# Two CPUs of node 0 this shell may use: c1 for the launcher, c2 for the PS.
set -- $($PY -c 'import sys
def cpus(s):
    out = set()
    for item in s.strip().split(","):
        if item:
            lo, _, hi = item.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    return out
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
usable = sorted(cpus(open(sys.argv[1]).read()) & cpus(status["Cpus_allowed_list"]))
print(*usable[:2])' $nd/node0/cpulist)
[ $# = 2 ] || skip "fewer than two usable CPUs on node 0"
c1=$1 c2=$2

port=$(free_ports 2) || fail "no free ports"
out=$(mktemp -d)
lpid=
cleanup() {
	[ -n "$lpid" ] && kill -INT "$lpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

cat >"$out/job.ini" <<INI
[job]
warmup = 0s
duration = 60s
[cluster]
ps = 127.0.0.1:$port
workers = 2
[payload]
categories = small
[monitor]
interval = 0
INI

# placement PID: "cpus=<Cpus_allowed_list> policies=<distinct numa_maps policies>"
placement() {
	c=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null) || return 1
	p=$(awk '{print $2}' "/proc/$1/numa_maps" 2>/dev/null | sort -u | tr '\n' ' ') || return 1
	echo "cpus=$c policies=${p% }"
}

# satisfies PLACEMENT WANT_CPUS WANT_POLICY: the CPU list WANT_CPUS is either
# "=LIST" (exactly) or "node0-not-LIST" (inside node 0 and more than LIST)
satisfies() {
	$PY -c 'import sys
def cpus(s):
    out = set()
    for item in s.strip().split(","):
        if item:
            lo, _, hi = item.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    return out
got = dict(kv.split("=", 1) for kv in sys.argv[1].split(" ", 1))
want, policy, node0 = sys.argv[2], sys.argv[3], cpus(open(sys.argv[4]).read())
have = cpus(got["cpus"])
if want.startswith("="):
    ok = have == cpus(want[1:])
else:
    ok = have <= node0 and have > cpus(want.split("-not-")[1])
sys.exit(0 if ok and got["policies"] == policy else 1)' "$1" "$2" "$3" $nd/node0/cpulist
}

# expect PID ROLE WANT_CPUS WANT_POLICY: waits up to 30 s for the process
# to show that placement (it places itself right after exec)
expect() {
	i=0
	while :; do
		got=$(placement "$1") || fail "$2 (pid $1) is gone: $(cat "$out/err")"
		satisfies "$got" "$3" "$4" && return 0
		i=$((i + 1))
		[ $i -gt $((300 * SLOW)) ] && fail "$2 (pid $1): $got; want cpus $3, policy $4"
		sleep 0.1
	done
}

# children PID PATTERN: waits up to 30 s (times SLOW) for N=$3 exec'd children whose
# command line contains PATTERN (before exec a child still shows ours)
children() {
	i=0
	while :; do
		k=$(for c in $(pgrep -P "$1"); do
			tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null | grep -q -- "$2" && echo "$c"
		done)
		[ "$(echo "$k" | grep -c .)" = "$3" ] && { echo "$k"; return 0; }
		i=$((i + 1))
		[ $i -gt $((300 * SLOW)) ] && return 1
		sleep 0.1
	done
}

# stop: SIGINT to the benchmark, which stops its children; every wait is bounded
stop() {
	kill -INT "$lpid" 2>/dev/null
	i=0
	while kill -0 "$lpid" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $((300 * SLOW)) ] && { kill -KILL "$lpid"; fail "$1 did not stop on SIGINT"; }
		sleep 0.1
	done
	wait "$lpid" 2>/dev/null
	lpid=
	wait_closed "$port" 10 || fail "$1: the PS still listens after the run"
	no_leftovers "$out/job.ini" "$1"
}

# 1. throughput bound to node 0, the PS also to CPU c2
taskset -c "$c1" $TFGB throughput -c "$out/job.ini" -q -f json -o "$out/tp.json" \
	-s affinity.ps_numa_node=0 -s affinity.worker_numa_node=0 -s affinity.ps_cpus="$c2" \
	2>"$out/err" &
lpid=$!
ps=$(children "$lpid" "serve " 1) || fail "no tfgb serve started: $(cat "$out/err")"
wk=$(children "$lpid" "throughput .*--task" 2) || fail "no 2 workers started: $(cat "$out/err")"
expect "$ps" "bound PS" "=$c2" "bind:0"
for w in $wk; do expect "$w" "bound worker" "node0-not-$c1" "bind:0"; done
stop "bound throughput"

# 2. the control: the same run without the keys keeps the launcher's CPU
taskset -c "$c1" $TFGB throughput -c "$out/job.ini" -q -f json -o "$out/tp.json" 2>"$out/err" &
lpid=$!
ps=$(children "$lpid" "serve " 1) || fail "control: no tfgb serve: $(cat "$out/err")"
wk=$(children "$lpid" "throughput .*--task" 2) || fail "control: no workers: $(cat "$out/err")"
expect "$ps" "unbound PS" "=$c1" "default"
for w in $wk; do expect "$w" "unbound worker" "=$c1" "default"; done
stop "unbound throughput"

# 3. latency: this process is the worker, its PS a child
taskset -c "$c1" $TFGB latency -c "$out/job.ini" -q -s affinity.worker_numa_node=0 \
	-s affinity.ps_numa_node=0 -s affinity.ps_cpus="$c2" >"$out/lat.txt" 2>"$out/err" &
lpid=$!
ps=$(children "$lpid" "serve " 1) || fail "latency: no tfgb serve: $(cat "$out/err")"
expect "$ps" "latency's PS" "=$c2" "bind:0"
expect "$lpid" "latency's worker" "node0-not-$c1" "bind:0"
stop "latency"

# 4. a node this machine lacks: status 2, naming the key, its line and the nodes
online=$(cat $nd/online)
bad=$($PY -c 'import sys; print(max(int(x) for x in sys.argv[1].replace("-", ",").split(",")) + 1)' \
	"$online")
case $online in *[-,]*) have="nodes $online" ;; *) have="node $online" ;; esac
{ cat "$out/job.ini"; printf '[affinity]\nps_numa_node = %s\n' "$bad"; } >"$out/bad.ini"
want="$out/bad.ini:$(wc -l <"$out/bad.ini"): affinity.ps_numa_node = $bad: this machine has NUMA $have"
for cmd in serve latency throughput; do
	$TFGB $cmd -c "$out/bad.ini" -q >/dev/null 2>"$out/err"
	rc=$?
	[ $rc = 2 ] || fail "$cmd with node $bad: exit $rc, want 2: $(cat "$out/err")"
	grep -qxF "tfgb: $want" "$out/err" || fail "$cmd: want '$want', got: $(cat "$out/err")"
done
$TFGB throughput -c "$out/job.ini" -q -s affinity.worker_numa_node="$bad" >/dev/null 2>"$out/err"
rc=$?
[ $rc = 2 ] || fail "throughput, worker node $bad: exit $rc, want 2"
grep -qF "affinity.worker_numa_node = $bad: this machine has NUMA $have" "$out/err" ||
	fail "worker node $bad: $(cat "$out/err")"
no_leftovers "$out/job.ini" "a refused job"
listening "$port" && fail "a refused job started a PS"

# 5. a node that shares no CPU with the list (a CPU outside node 0)
far=$($PY -c 'import sys
n = set()
for item in sys.argv[1].split(","):
    lo, _, hi = item.partition("-"); n.update(range(int(lo), int(hi or lo) + 1))
print(min(set(range(1024)) - n))' "$(cat $nd/node0/cpulist)")
$TFGB serve -c "$out/job.ini" -q -s affinity.ps_cpus="$far" -s affinity.ps_numa_node=0 \
	2>"$out/err"
rc=$?
[ $rc = 2 ] || fail "node 0 with ps_cpus $far: exit $rc, want 2: $(cat "$out/err")"
grep -qF "affinity.ps_numa_node = 0: NUMA node 0 has CPUs $(cat $nd/node0/cpulist), none of them in affinity.ps_cpus = $far (-s #1)" \
	"$out/err" || fail "intersection: $(cat "$out/err")"
# 6. a node per local rank: "0/0" binds each worker and the PS (the
# launcher's --task is the local rank) and each process records its node
$TFGB throughput -c "$out/job.ini" -q -f json -o "$out/rank.json" -s job.duration=1s \
	-s affinity.worker_numa_node=0/0 -s affinity.ps_numa_node=0/0 2>"$out/err" ||
	fail "node list 0/0: $(cat "$out/err")"
$PY - "$out/rank.json" <<'PYEOF' || fail "node list 0/0: processes do not record node 0"
import json, sys
d = json.load(open(sys.argv[1]))
procs = d["throughput"]["processes"]
roles = sorted((p["role"], p["index"]) for p in procs)
assert roles == [("ps", 0), ("worker", 0), ("worker", 1)], roles
for p in procs:
    assert p["numa_node"] == 0 and p["mempolicy"] == "bind:0", p
PYEOF
schema_check "$out/rank.json" || fail "node list 0/0: the result is not valid"
# without the keys the node is null
$TFGB throughput -c "$out/job.ini" -q -f json -o "$out/norank.json" -s job.duration=1s \
	2>"$out/err" || fail "unbound run: $(cat "$out/err")"
$PY -c 'import json, sys
procs = json.load(open(sys.argv[1]))["throughput"]["processes"]
sys.exit(0 if len(procs) == 3 and all(p["numa_node"] is None for p in procs) else 1)' \
	"$out/norank.json" || fail "unbound run: numa_node is not null"
# "0/$bad": local rank 1's node is refused before anything starts, naming the key
for key in worker_numa_node ps_numa_node; do
	$TFGB throughput -c "$out/job.ini" -q -s affinity.$key="0/$bad" >/dev/null 2>"$out/err"
	rc=$?
	[ $rc = 2 ] || fail "$key 0/$bad: exit $rc, want 2: $(cat "$out/err")"
	grep -qxF "tfgb: -s #1: affinity.$key = 0/$bad: this machine has NUMA $have (local rank 1's node $bad)" \
		"$out/err" || fail "$key 0/$bad: $(cat "$out/err")"
done
$TFGB serve -c "$out/job.ini" -q -s affinity.ps_numa_node="0/$bad" 2>"$out/err"
rc=$?
[ $rc = 2 ] || fail "serve, ps_numa_node 0/$bad: exit $rc, want 2"
grep -qF "affinity.ps_numa_node = 0/$bad: this machine has NUMA $have (local rank 1's node $bad)" \
	"$out/err" || fail "serve 0/$bad: $(cat "$out/err")"
no_leftovers "$out/job.ini" "a refused node list"
echo "PASS: t_numa"
