#!/bin/sh
# TF-gRPC-PS-Throughput on one machine: the launcher with 2 PS x 3 workers,
# rpc echo/push/pull, per-PS and per-worker counts that add up, workers
# started by hand (--task) and by a launcher's environment (workers only,
# and servers and workers as one launch, SPMD and MPMD), a worker and
# PS 0 killed mid-window (named with pid and host, exit 1, the survivors'
# figures in a result of status partial), and no process left.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3
need_cmd ss iproute2

base=$(free_ports 3) || fail "no free ports"
out=$(mktemp -d)
bg=
cleanup_on_exit "$out"

cat >"$out/job.ini" <<INI
[job]
warmup = $(slow 100)ms
duration = $(slow 500)ms
timeout = $(slow 10)s
[cluster]
ps = 127.0.0.1:$base
ps_count = 2
workers = 3
[payload]
iovecs = 4
categories = small, medium
INI
J="-c $out/job.ini -q"
sums='d["throughput"]["reported"] == 3 and len(d["throughput"]["per_ps"]) == 2
and len(d["throughput"]["per_worker"]) == 3
and d["throughput"]["per_worker_host"] == [__import__("socket").gethostname()] * 3
and len(set(d["throughput"]["per_worker_pid"])) == 3
and sum(d["throughput"]["per_ps"]) == d["calls"] == sum(d["throughput"]["per_worker"])
and d["calls"] > 0 and min(d["throughput"]["per_ps"]) > 0 and min(d["throughput"]["per_worker"]) > 0
and d["status"] == "ok" and d["throughput"]["rpc_per_s"] > 0'
# Fails, naming them as $1, if any of the pids that follow still runs.
none_left() {
	what=$1
	shift
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && fail "$what left behind: pid $p"
	done
	return 0
}
all_closed() {
	for p in $((base - 1)) $base $((base + 1)); do wait_closed "$p" 5 || return 1; done
}

# 1. the launcher, every rpc
for rpc in push echo pull; do
	$TFGB throughput $J -s job.rpc=$rpc -f json >"$out/t.json" 2>"$out/err" ||
		fail "throughput rpc=$rpc exited $?: $(cat "$out/err")"
	json_check "$sums and d['throughput']['rpc'] == '$rpc'" <"$out/t.json" ||
		fail "rpc=$rpc: counts do not add up: $(cat "$out/t.json")"
	all_closed || fail "rpc=$rpc: a PS or the control service is still listening"
	# a PS answers a 20 KB Pull with 20 KB of pattern, not by first making
	# server.max_message (64 MiB) of it: its peak RSS stays far below that
	# (not under a sanitizer: its shadow memory and quarantine are in the RSS)
	[ $rpc = pull ] && [ -n "${TFGB_SANITIZE:-}" ] &&
		skip_part "the PS's Pull memory bound is not checked in a SANITIZE=$TFGB_SANITIZE build"
	[ $rpc = pull ] && [ -z "${TFGB_SANITIZE:-}" ] && { json_check '[x["rss_peak_bytes"] for x in d["resources"]["summary"]["roles"]
if x["role"] == "ps"][0] < 40 << 20' <"$out/t.json" ||
		fail "rpc=pull: a PS made max_message bytes for a small Pull: $(grep -A3 '"ps"' "$out/t.json")"; }
done
no_leftovers "$out/job.ini" "the launches"

# 1b. every process says where it ran, measured by itself: the workers
#     pinned to CPU 0 report exactly that, the PSs what they had
$TFGB throughput $J -s affinity.worker_cpus=0 -f json >"$out/p.json" 2>"$out/err" ||
	fail "worker_cpus=0: $(cat "$out/err")"
json_check '[(p["role"], p["index"]) for p in d["throughput"]["processes"]] ==
[("worker", 0), ("worker", 1), ("worker", 2), ("ps", 0), ("ps", 1)]
and all(p["cpus"] == "0" and p["user_s"] + p["sys_s"] > 0 and p["rss_peak_bytes"] > 1 << 20
        and p["span_s"] > 0 for p in d["throughput"]["processes"] if p["role"] == "worker")
and all(p["cpus"] not in ("", "unknown") and p["mempolicy"] not in ("", "unknown")
        for p in d["throughput"]["processes"])
and len(set(p["pid"] for p in d["throughput"]["processes"])) == 5' <"$out/p.json" ||
	fail "placement not recorded: $(cat "$out/p.json")"

# 2. text and CSV forms
$TFGB throughput $J >"$out/t.txt" 2>"$out/err" || fail "text: $(cat "$out/err")"
grep -q '^# TF-gRPC-PS-Throughput' "$out/t.txt" || fail "no text header"
grep -q '^# per-PS calls:' "$out/t.txt" || fail "no per-PS line"

# 3. servers started by hand, workers by a plain shell loop with --task;
#    worker 0 prints the aggregate, the others nothing
$TFGB serve $J --task 0 2>"$out/s0" & bg="$bg $!"
$TFGB serve $J --task 1 2>"$out/s1" & bg="$bg $!"
wait_listening "$base" && wait_listening $((base + 1)) && wait_listening $((base - 1)) ||
	fail "hand-started servers: $(cat "$out/s0" "$out/s1")"
for i in 2 1 0; do
	$TFGB throughput $J --task $i -f json >"$out/w$i.json" 2>"$out/w$i.err" & eval "w$i=\$!"
done
for i in 0 1 2; do
	eval "wait \$w$i" || fail "worker $i exited $?: $(cat "$out/w$i.err")"
done
json_check "$sums" <"$out/w0.json" || fail "--task run: $(cat "$out/w0.json")"
[ ! -s "$out/w1.json" ] && [ ! -s "$out/w2.json" ] || fail "workers 1 and 2 printed a report"

# 3b. a --task run in which a worker dies, then the same job launched
#     again: the control service starts the run over
for i in 2 1 0; do
	$TFGB throughput $J --task $i -s job.duration=$(slow 3)s -s job.timeout=$(slow 2)s -f json \
		>"$out/f$i.json" 2>"$out/f$i.err" & eval "f$i=\$!"
done
# the three are in their run: each has pushed 100 kB to PS 0
wait_in_run "$base" 3 20 || fail "3b: the workers did not push 100 kB to PS 0: $(cat "$out"/f?.err)"
kill -KILL "$f2"
rc=0; wait "$f0" || rc=$?
wait "$f1" "$f2" 2>/dev/null
[ "$rc" = 1 ] || fail "worker 0 of a run that lost a worker exited $rc: $(cat "$out/f0.err")"
json_check 'd["throughput"]["incomplete"] is True and d["throughput"]["reported"] == 2' \
	<"$out/f0.json" || fail "partial --task run: $(cat "$out/f0.json" "$out/f0.err")"
for i in 2 1 0; do
	$TFGB throughput $J --task $i -f json >"$out/w$i.json" 2>"$out/w$i.err" & eval "w$i=\$!"
done
for i in 0 1 2; do
	eval "wait \$w$i" || fail "relaunched worker $i exited $?: $(cat "$out/w$i.err")"
done
json_check "$sums" <"$out/w0.json" || fail "relaunch after a failure: $(cat "$out/w0.json")"

# 4. the same through a launcher's environment (as mpirun sets it)
for i in 2 1 0; do
	OMPI_COMM_WORLD_RANK=$i OMPI_COMM_WORLD_SIZE=3 $TFGB throughput $J -f json \
		>"$out/m$i.json" 2>"$out/m$i.err" & eval "m$i=\$!"
done
for i in 0 1 2; do
	eval "wait \$m$i" || fail "rank $i exited $?: $(cat "$out/m$i.err")"
done
json_check "$sums" <"$out/m0.json" || fail "launcher-env run: $(cat "$out/m0.json")"
# a launcher count that contradicts the job is refused
rc=0
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4 $TFGB throughput $J >/dev/null 2>"$out/err" || rc=$?
[ "$rc" = 2 ] || fail "size mismatch: exit $rc, expected 2"
grep -q "OMPI_COMM_WORLD_SIZE\|4 workers" "$out/err" || fail "mismatch message: $(cat "$out/err")"
for p in $bg; do kill "$p"; done
wait 2>/dev/null; bg=
all_closed || fail "hand-started servers did not stop"

# 4b. one launch: the 2 PS and 3 workers as the 5 ranks of one launcher
# (ranks 0 and 1 serve, rank 2 is worker 0), all of them `tfgb throughput`,
# then MPMD with `tfgb serve` as ranks 0 and 1; the servers end with the run
for form in one mpmd; do
	pids=
	for i in 4 3 2 1 0; do
		cmd="throughput -f json"
		# the servers' output format differs from the workers': one launch all the same
		[ $form = mpmd ] && [ $i -lt 2 ] && cmd=serve
		OMPI_COMM_WORLD_RANK=$i OMPI_COMM_WORLD_SIZE=5 OMPI_MCA_ess_base_jobid=$form$$ \
			timeout $(slow 60) $TFGB $cmd $J >"$out/o$i.json" 2>"$out/o$i.err" &
		pids="$pids $!"
	done
	i=4
	for p in $pids; do
		wait "$p" || fail "$form launch: rank $i exited $?: $(cat "$out"/o?.err)"
		i=$((i - 1))
	done
	json_check "$sums" <"$out/o2.json" || fail "$form launch: $(cat "$out/o2.json" "$out"/o?.err)"
	for i in 0 1 3 4; do
		[ ! -s "$out/o$i.json" ] || fail "$form launch: rank $i printed: $(cat "$out/o$i.json")"
	done
	all_closed || fail "$form launch: the servers did not stop with the run"
done
# a tfgb serve given a worker's rank of one launch is refused, naming it
rc=0
OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=5 $TFGB serve $J 2>"$out/err" || rc=$?
[ "$rc" = 2 ] || fail "serve as rank 3 of 5: exit $rc, expected 2: $(cat "$out/err")"
grep -q "rank 3 (OMPI_COMM_WORLD_RANK) of a launch of 5 is worker 1's" "$out/err" ||
	fail "serve as a worker's rank: $(cat "$out/err")"

# 5. a worker killed mid-window: named, the others stopped, partial, exit 1
$TFGB throughput $J -s job.duration=$(slow 20)s -f json >"$out/k.json" 2>"$out/err" &
l=$!
# every worker has pushed 100 kB to PS 0 (past its barrier), then a warm-up more: in the window
wait_in_run "$base" 3 20 || fail "5: the workers did not push 100 kB to PS 0: $(cat "$out/err")"
sleep "$(slow 0.2)"
victim=
kids=$(children "$l" "throughput -c /proc/self/fd")
for p in $kids; do
	victim=$p
done
[ -n "$victim" ] || fail "no worker process found"
kill -KILL "$victim"
rc=0; wait "$l" || rc=$?
[ "$rc" = 1 ] || fail "killed worker: exit $rc, expected 1: $(cat "$out/err")"
grep -q "worker [0-9] (pid $victim" "$out/err" || fail "the dead worker is not named: $(cat "$out/err")"
grep -q "signal 9" "$out/err" || fail "the signal is not named: $(cat "$out/err")"
json_check 'd["status"] == "partial" and d["throughput"]["incomplete"] is True
and d["throughput"]["reported"] == 2 and d["throughput"]["lost"]["role"] == "worker"
and d["throughput"]["lost"]["pid"] == '"$victim"' and d["calls"] > 0
and d["throughput"]["lost"]["host"] == __import__("socket").gethostname()
and sorted(d["throughput"]["per_worker_status"]) == ["missing", "ok", "ok"]' \
	<"$out/k.json" || fail "partial result: $(cat "$out/k.json")"
all_closed || fail "processes left after a worker died"
none_left "workers" $kids

# 6. PS 0 killed mid-window: the launcher hosts the control service, so
#    the three workers' figures up to then still reach the report
$TFGB throughput $J -s job.duration=$(slow 20)s -s job.timeout=$(slow 2)s -f json \
	>"$out/k.json" 2>"$out/err" &
l=$!
wait_in_run "$base" 3 20 || fail "6: the workers did not push 100 kB to PS 0: $(cat "$out/err")"
sleep "$(slow 0.2)"
kids=$(children "$l" "-c /proc/self/fd")
victim=
for p in $(children "$l" "serve -c /proc/self/fd"); do
	tr '\0' ' ' <"/proc/$p/cmdline" | grep -q -- "--task 0 " && victim=$p
done
[ -n "$victim" ] || fail "no PS 0 process found"
kill -KILL "$victim"
rc=0; wait "$l" || rc=$?
[ "$rc" = 1 ] || fail "killed PS: exit $rc, expected 1"
grep -q "partial: PS 0 (pid $victim on $(hostname)" "$out/err" ||
	fail "the dead PS 0 (pid $victim) is not named: $(cat "$out/err")"
json_check 'd["status"] == "partial" and d["throughput"]["reported"] == 3
and d["throughput"]["lost"] == {"role": "ps", "index": 0, "pid": '"$victim"',
    "host": __import__("socket").gethostname(), "end": "killed by signal 9 (Killed)"}
and min(d["throughput"]["per_worker"]) > 0 and d["throughput"]["per_ps"][0] > 0' \
	<"$out/k.json" || fail "PS 0 died: no partial result: $(cat "$out/k.json")"
all_closed || fail "processes left after a PS died"
none_left "processes" $kids
echo ok
