# bench/lib.sh - what bench/latency.sh and bench/serialized.sh share: CPU
# placement, a temporary directory and the processes stopped on exit, one
# `tfgb serve` on a free loopback port, and running one measured client.
# Sourced by a bench script, whose caller sets ME (its name for messages),
# KEEP and PIN first and defines usage().  Free ports and listening checks
# come from the tests' helpers, tests/lib.sh (which also sets PY).

. "$(dirname "$0")/../tests/lib.sh"

die() { echo "$ME: $*" >&2; exit 1; }

isnum() { case "$1" in ''|*[!0-9]*) return 1 ;; esac; }

# Sets srv_pin/cli_pin and the command prefixes on_srv/on_cli from PIN:
# '' pins the server and the clients to the last CPU this process may use,
# split the server to the first and the clients to the last, a CPU number
# all of them to it, none leaves placement to Linux.
#
# On a VM, a reply that wakes a thread on another, idle vCPU costs tens of
# microseconds more than one on the same vCPU (1 x 10 B Echo: about 28 us on
# one vCPU against 75-90 us across two, measured here), and Linux moves the
# threads between those two cases from one run to the next, even within a
# run.  Left alone this bimodal noise is larger than the difference under
# study, so the clients and the server are pinned, the same way for all.
bench_place() {
	srv_pin='' cli_pin=''
	if [ "$PIN" != none ]; then
		command -v taskset >/dev/null 2>&1 || die "taskset (util-linux) is needed, or use -c none"
		cpus=$($PY -c 'import os; print(" ".join(str(c) for c in sorted(os.sched_getaffinity(0))))')
		first=${cpus%% *} last=${cpus##* }
		case "$PIN" in
		'') srv_pin=$last cli_pin=$last ;;
		split) srv_pin=$first cli_pin=$last ;;
		*) isnum "$PIN" || usage
		   case " $cpus " in *" $PIN "*) ;; *) die "CPU $PIN is not one of this process's CPUs ($cpus)" ;; esac
		   srv_pin=$PIN cli_pin=$PIN ;;
		esac
	fi
	# command prefixes, split into words where used (taskset execs the
	# command: $! stays the benchmark's pid)
	on_srv=${srv_pin:+taskset -c $srv_pin}
	on_cli=${cli_pin:+taskset -c $cli_pin}
}

# The host a table was measured on (bench/hostinfo.py: CPU, kernel,
# virtualisation, TCP congestion control, load average): bench_host_start
# keeps it with the load average at the start, bench_host_line prints it
# with the load average at the end, as the table's first line, so that
# figures of different hosts are never set side by side without it.
bench_host_start() {
	bench_host=$($PY bench/hostinfo.py)
}

bench_host_line() {
	echo "$bench_host at the start, $(cut -d ' ' -f 1 /proc/loadavg) at the end"
}

# Makes $out, a temporary directory removed on exit (kept with KEEP=1), and
# stops the server ($srv) and the running client ($cur) on exit or signal.
bench_tmpdir() {
	srv=
	cur=
	out=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || die "cannot make a temporary directory"
	trap bench_cleanup EXIT
	trap 'exit 1' INT TERM HUP
}

bench_cleanup() {
	trap - EXIT INT TERM HUP
	[ -n "$cur" ] && kill "$cur" 2>/dev/null && wait "$cur" 2>/dev/null
	[ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
	if [ "$KEEP" = 1 ]; then
		echo "per-run outputs kept in $out" >&2
	else
		rm -rf "$out"
	fi
}

# Starts `tfgb serve -c JOB ARGS...` on a free loopback port ($addr) on the
# server's CPU, as $srv, and waits up to 10 s for it to listen.  It hosts
# no control service (TFGB_NO_CONTROL): the point-to-point runs need none.
# server.threads=1: one completion-queue thread serves every call of every
# client the same way (with one thread per CPU, each call lands on one of
# several queues and wakes whichever thread polls it, jitter of its own), and
# the server adds one busy thread, not one per CPU, to a 2-core machine that
# the client and other people's work share.
bench_serve() {
	job=$1; shift
	port=$(free_port) || die "cannot find a free port"
	addr=127.0.0.1:$port
	# shellcheck disable=SC2086 # $on_srv is a command prefix
	TFGB_NO_CONTROL=1 $on_srv ./tfgb serve -c "$job" -s cluster.ps="$addr" -s server.threads=1 -q "$@" \
		>"$out/serve.log" 2>&1 &
	srv=$!
	i=0
	until listening "$port"; do
		kill -0 "$srv" 2>/dev/null || die "tfgb serve exited: $(cat "$out/serve.log")"
		i=$((i + 1))
		[ "$i" -le 100 ] || die "tfgb serve does not listen on $addr after 10 s"
		sleep 0.1
	done
}

# run NAME CMD...: runs CMD in the background (so that a signal reaches the
# trap at once), output in $out/NAME.out and .err, and fails with its stderr
# unless it exits 0 and the server is still up (a tfgb latency that finds
# no server would start its own).
run() {
	name=$1; shift
	"$@" >"$out/$name.out" 2>"$out/$name.err" &
	cur=$!
	wait "$cur"
	rc=$?
	cur=
	[ "$rc" -eq 0 ] || die "$name exited $rc: $* :: $(cat "$out/$name.err")"
	kill -0 "$srv" 2>/dev/null || die "tfgb serve died during $name: $(cat "$out/serve.log")"
}
