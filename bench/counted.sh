#!/bin/sh
# bench/counted.sh - `make bench`'s counted mode: instructions, system calls
# and heap allocations per call of tfgb and of the hand-written peer
# (bench/peer) on the same rows, and their ratio tfgb / peer.  Counts are
# stable on a machine whose timings move by 10 % from run to run.
#
# Rows (gRPC, Echo, one call at a time):
#   serve, 1 x 10 B / default payload: the SERVER process counted, `tfgb
#     serve` (server.threads = 1, monitor.interval = 0) against `bench/peer
#     serve`, both called by the same uncounted client (`bench/peer latency`);
#   client, 1 x 10 B / default payload: the CLIENT process counted, `tfgb
#     latency` (job.iterations calls, no warm-up, monitor.interval = 0)
#     against `bench/peer latency`, both calling one uncounted `bench/peer
#     serve`.
# The default payload is the default job's 10 iovecs (genpayload's sizes).
# What is counted, all threads of the process, its whole life:
#   instructions: callgrind's Ir (valgrind; this VM has no hardware
#     instruction counter: `perf stat -e instructions` says not supported);
#   system calls: perf stat -e raw_syscalls:sys_enter (every system call);
#   allocations: malloc, calloc, realloc, memalign-family calls, counted by
#     bench/malloc_count.so (LD_PRELOAD).
# Per call = (count of a run of N2 calls - count of a run of N1 calls) /
# (N2 - N1): start-up, connection and shutdown cancel out.  Both sides run
# with the same GLIBC_TUNABLES (glibc keeps freed memory, as bench/compare.py
# sets it); a run under callgrind or the preloaded counter sees tfgb's
# allocator as "other" and leaves it as it is.  What time-driven threads do
# (gRPC's timer and executor threads) is counted too, and differs between
# the two runs by their difference in duration: the reason N2 - N1 is large.
#
# Usage (from anywhere; it runs from the top of the tree):
#   bench/counted.sh [-k] [-q]
#   -k keeps the raw outputs; -q uses fewer calls (a quick look, noisier).
# Needs valgrind, perf, cc, ./tfgb and bench/peer (`make bench COUNTED=1`
# installs and builds them, then runs this; BENCH_ARGS passes -k, -q).
# About 2-3 minutes on 2 vCPUs.  Exit 0, 1 when a run failed, 2 on bad
# arguments.  Everything it starts is stopped when it exits.

ME=bench/counted.sh
KEEP=0
QUICK=0
PIN=none
usage() {
	sed -n '/^# Usage/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
while getopts kqh opt; do
	case "$opt" in
	k) KEEP=1 ;;
	q) QUICK=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage

cd "$(dirname "$0")/.." || { echo "$ME: cannot enter the top of the tree" >&2; exit 1; }
. bench/lib.sh
for t in valgrind perf cc; do
	command -v $t >/dev/null 2>&1 || die "$t is needed (apt-get install valgrind linux-perf gcc)"
done
perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1 ||
	die "perf cannot count raw_syscalls:sys_enter here (tracefs, perf_event_paranoid)"
[ -x ./tfgb ] && [ -x bench/peer ] || die "build ./tfgb and bench/peer first (make bench)"
bench_tmpdir tfgb-counted
bench_host_start
cc -O2 -std=c11 -D_GNU_SOURCE -shared -fPIC -o "$out/malloc_count.so" bench/malloc_count.c ||
	die "cannot build bench/malloc_count.c"
JOB=conf/tfgb.ini
export GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=1073741824
small=$(./tfgb genpayload -c $JOB -f csv -s payload.iovecs=1 -s payload.categories=small |
	awk -F, 'NR > 1 { printf "%s%s", s, $3; s = "," }')
default=$(./tfgb genpayload -c $JOB -f csv | awk -F, 'NR > 1 { printf "%s%s", s, $3; s = "," }')
[ -n "$small" ] && [ -n "$default" ] || die "tfgb genpayload failed"
if [ "$QUICK" = 1 ]; then
	S1=200 S2=700 D1=5 D2=15
else
	S1=500 S2=4500 D1=20 D2=100
fi

# The client command of SIDE (tfgb, peer) for N calls of SIZES at ADDR.
client() {
	side=$1 n=$2 sizes=$3 addr=$4
	if [ "$side" = tfgb ]; then
		opt=''
		[ "$sizes" = "$small" ] && opt="-s payload.iovecs=1 -s payload.categories=small"
		echo "./tfgb latency -c $JOB -q -f json -s cluster.ps=$addr -s job.iterations=$n" \
			"-s job.warmup=0s -s monitor.interval=0 -s job.timeout=120s $opt"
	else
		echo "bench/peer latency -w 0 -n $n $addr $sizes"
	fi
}

# The server command of SIDE at ADDR.
server() {
	if [ "$1" = tfgb ]; then
		echo "./tfgb serve -c $JOB -q -s cluster.ps=$2 -s server.threads=1 -s monitor.interval=0"
	else
		echo "bench/peer serve $2"
	fi
}

# counted HOW NAME CMD...: runs CMD counted (HOW: cg, callgrind's Ir; sys,
# system calls and allocations), in the background as $cur; the counts
# land in $out/NAME.*.  Its pid (the counted process) in $cpid.
counted() {
	how=$1 name=$2
	shift 2
	if [ "$how" = cg ]; then
		valgrind --tool=callgrind --callgrind-out-file="$out/$name.cg" "$@" \
			>"$out/$name.out" 2>"$out/$name.err" &
		cur=$! cpid=$!
	else
		rm -f "$out/$name.pid"
		perf stat -x, -o "$out/$name.perf" -e raw_syscalls:sys_enter -- \
			sh -c 'echo $$ >"$0"; o=$1 p=$2; shift 2
				exec env MALLOC_COUNT_OUT="$o" LD_PRELOAD="$p" "$@"' \
			"$out/$name.pid" "$out/$name.mc" "$out/malloc_count.so" "$@" \
			>"$out/$name.out" 2>"$out/$name.err" &
		cur=$!
		i=0
		while [ ! -s "$out/$name.pid" ]; do
			i=$((i + 1))
			[ $i -gt 100 ] && die "$name: did not start"
			sleep 0.05
		done
		cpid=$(cat "$out/$name.pid")
	fi
}

# The three counts of run NAME (HOW): "ir", "sys allocs".
counts() {
	if [ "$1" = cg ]; then
		awk '/^(summary|totals):/ { print $2; exit }' "$out/$2.cg"
	else
		pid=$(cat "$out/$2.pid")
		s=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$out/$2.perf")
		a=$(awk -v p="$pid" '$1 == p { print $3 }' "$out/$2.mc")
		echo "${s:-x} ${a:-x}"
	fi
}

# One counted server run: SIDE HOW N SIZES; prints its counts.
srv_run() {
	side=$1 how=$2 n=$3 sizes=$4
	name=srv-$side-$how-$n-${#sizes}
	port=$(free_ports 2) || die "no free ports"
	port=$((port + 1)) # a tfgb serve hosts its control service just below
	counted "$how" "$name" $(server "$side" 127.0.0.1:$port)
	srv=$cur
	wait_listening $port 60 || die "$name: the server did not listen: $(cat "$out/$name.err")"
	$(client peer "$n" "$sizes" 127.0.0.1:$port) >"$out/$name.client" 2>&1 ||
		die "$name: the client failed: $(cat "$out/$name.client")"
	kill -INT "$cpid"
	wait "$srv" || die "$name: the server exited $?: $(tail -5 "$out/$name.err")"
	srv='' cur=''
	counts "$how" "$name"
}

# One counted client run against the peer server at $peer_port.
cli_run() {
	side=$1 how=$2 n=$3 sizes=$4
	name=cli-$side-$how-$n-${#sizes}
	counted "$how" "$name" $(client "$side" "$n" "$sizes" 127.0.0.1:$peer_port)
	wait "$cur" || die "$name: exited $?: $(tail -5 "$out/$name.err")"
	cur=''
	counts "$how" "$name"
}

# row KIND LABEL SIZES N1 N2: both sides, both counts, both call numbers;
# prints the table's rows of this kind and payload.
row() {
	kind=$1 label=$2 sizes=$3 n1=$4 n2=$5
	for side in tfgb peer; do
		for n in $n1 $n2; do
			echo "$side $n $(${kind}_run $side cg $n "$sizes") $(${kind}_run $side sys $n "$sizes")"
		done
	done >"$out/row.txt"
	# a run's die ends only its command substitution: a short line tells
	[ "$(awk 'NF != 5' "$out/row.txt")" = "" ] && [ "$(wc -l <"$out/row.txt")" -eq 4 ] ||
		die "$label: a run failed (its outputs: -k keeps them): $(cat "$out/row.txt")"
	$PY - "$label" "$n1" "$n2" "$out/row.txt" <<'EOF'
import sys
label, n1, n2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c = {}
for line in open(sys.argv[4]):
    side, n, *v = line.split()
    c[side, int(n)] = [None if x == "x" else int(x) for x in v]
for k, name in enumerate(["instructions (Ir)", "system calls", "allocations"]):
    per = []
    for side in ("tfgb", "peer"):
        a, b = c[side, n1][k], c[side, n2][k]
        per.append(None if a is None or b is None else (b - a) / (n2 - n1))
    ratio = "%.3f" % (per[0] / per[1]) if None not in per and per[1] > 0 else "-"
    ok = "" if ratio == "-" else ("yes" if per[0] <= per[1] else "NO")
    f = lambda x: "-" if x is None else "%.1f" % x
    print("%-30s %-18s %12s %12s %7s %4s" % (label, name, f(per[0]), f(per[1]), ratio, ok))
EOF
}

peer_port=$(free_port) || die "no free port"
bench/peer serve 127.0.0.1:$peer_port >"$out/peer-serve.log" 2>&1 &
peer_srv=$!
trap 'kill $peer_srv 2>/dev/null; bench_cleanup' EXIT
wait_listening $peer_port 30 || die "bench/peer serve did not listen"
bench_host_line # counts too differ from host to host (CPU, kernel, libraries)
printf '%-30s %-18s %12s %12s %7s %4s\n' "row (per call)" "count" "tfgb" "peer" "ratio" "<=1"
row srv "serve, 1 x 10 B" "$small" $S1 $S2
row srv "serve, default payload" "$default" $D1 $D2
row cli "client, 1 x 10 B" "$small" $S1 $S2
row cli "client, default payload" "$default" $D1 $D2
