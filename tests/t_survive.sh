#!/bin/sh
# No figures lost to one death, without a launcher process: 2 PS x 3
# workers as the 5 ranks of one launch (the servers `tfgb serve`, ranks 0
# and 1; workers 0..2, ranks 2..4, each a separate process with the rank
# environment Open MPI's mpirun sets), killing in turn PS 0, PS 1, worker 0
# and worker 2 mid-window (SIGKILL).  Each time the survivors' figures reach
# a result printed by worker 0 (worker 1 when worker 0 died), of status
# partial, naming the dead process (role, index, host, and pid for a
# worker), with calls from every surviving worker, exit 1, and every
# process ends with the run.  Counts and states only: no timing bound.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3
need_cmd ss iproute2

base=$(free_ports 3) || fail "no free ports"
out=$(mktemp -d)
pids=
cleanup_on_exit "$out"

# a window long enough to kill in (a worker's death leaves the others to
# run theirs out), a timeout short enough for the missing report's wait
cat >"$out/job.ini" <<INI
[job]
warmup = $(slow 200)ms
duration = $(slow 2)s
timeout = $(slow 3)s
[cluster]
ps = 127.0.0.1:$base
ps_count = 2
workers = 3
INI
J="-c $out/job.ini -q"
host=$(hostname)

# ends PIDS...: 0 once none of them runs (a child that exited and is not
# waited for yet is a zombie: ended), 1 (naming them) after 60 s x SLOW
ends() {
	i=0
	while :; do
		left=
		for p in "$@"; do
			st=$(awk '/^State:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
			[ -n "$st" ] && [ "$st" != Z ] && left="$left $p"
		done
		[ -z "$left" ] && return 0
		i=$((i + 1))
		[ "$i" -gt $((600 * SLOW)) ] && { echo "$left"; return 1; }
		sleep 0.1
	done
}

# run_case VICTIM_RANK PRINTER_RANK ROLE INDEX
run_case() {
	victim=$1 printer=$2 role=$3 index=$4
	rm -f "$out"/r*
	pids=
	for r in 0 1 2 3 4; do
		cmd="throughput -f json"
		[ $r -lt 2 ] && cmd=serve
		OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=5 OMPI_MCA_ess_base_jobid=surv$victim$$ \
			$TFGB $cmd $J >"$out/r$r.out" 2>"$out/r$r.err" &
		eval "p$r=\$!"
		pids="$pids $!"
	done
	# every worker has pushed 100 kB to PS 0 (past its barrier), then a warm-up more: in the window
	wait_in_run "$base" 3 30 || fail "kill rank $victim: the workers did not push 100 kB to PS 0: $(cat "$out"/r*.err)"
	sleep "$(slow 0.4)"
	eval "vp=\$p$victim"
	kill -KILL "$vp"
	for r in 0 1 2 3 4; do
		eval "p=\$p$r"
		[ $r = "$victim" ] && continue
		rc=0
		left=$(ends "$p") || fail "kill rank $victim: rank $r still runs: $(cat "$out"/r*.err)"
		wait "$p" || rc=$?
		eval "rc$r=$rc"
	done
	wait "$vp" 2>/dev/null
	pids=
	eval "prc=\$rc$printer"
	[ "$prc" = 1 ] || fail "kill rank $victim: rank $printer exited $prc, expected 1: $(cat "$out"/r*.err)"
	for r in 2 3 4; do
		[ $r = "$printer" ] || [ ! -s "$out/r$r.out" ] ||
			fail "kill rank $victim: rank $r printed too: $(cat "$out/r$r.out")"
	done
	lostpid=None
	[ "$role" = worker ] && lostpid=$vp
	json_check 'd["status"] == "partial" and d["throughput"]["incomplete"] is True
and d["throughput"]["lost"]["role"] == "'"$role"'" and d["throughput"]["lost"]["index"] == '"$index"'
and d["throughput"]["lost"]["pid"] == '"$lostpid"'
and d["throughput"]["lost"]["host"] == ("127.0.0.1" if "'"$role"'" == "ps" else "'"$host"'")
and all(d["throughput"]["per_worker"][w] > 0 for w in range(3) if w != '"$((victim - 2))"')
and d["throughput"]["reported"] == (2 if "'"$role"'" == "worker" else 3)' <"$out/r$printer.out" ||
		fail "kill rank $victim: $(grep -A8 '"lost"\|"per_worker"' "$out/r$printer.out"; cat "$out"/r*.err)"
	grep -q "PARTIAL\|partial: " "$out/r$printer.err" ||
		fail "kill rank $victim: no partial line: $(cat "$out/r$printer.err")"
	for p in $((base - 1)) $base $((base + 1)); do
		wait_closed "$p" 5 || fail "kill rank $victim: port $p still open"
	done
}

run_case 0 2 ps 0     # PS 0, which hosts the control service
run_case 1 2 ps 1
run_case 2 3 worker 0 # worker 0, which hosts its own: worker 1 prints
run_case 4 2 worker 2
exit 0
