#!/bin/sh
# bench/mpi.sh - `tfgb latency` and `tfgb bandwidth` over transport = mpi
# next to the floor, bench/mpi_pingpong.c (what MPI alone gives two ranks),
# on this machine, btl as Open MPI chooses (or MPI_BTL=tcp,self): p50 at
# 1 x 10 B and at the default payload (4 x 10 B, 3 x 10 KiB, 3 x 1 MiB),
# payload MB/s at inflight 16.  One run of each; prints one row per figure
# with the ratio tfgb / floor (bandwidth: tfgb / floor, higher is better);
# each latency also against the floor with TensorFlow's matched probes
# (mpi_pingpong -p), the part of the ratio that is the protocol's.
#   bench/mpi.sh [-d SECONDS]
# Run from the top of a built tree (make tfgb bench/mpi_pingpong).
set -e
dur=3
[ "$1" = -d ] && dur=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run="mpirun --oversubscribe --bind-to none -np 2"
[ -n "$MPI_BTL" ] && run="$run --mca btl $MPI_BTL"
def=10,10,10,10,10240,10240,10240,1048576,1048576,1048576
J="-s job.transport=mpi -s job.warmup=1s -s job.duration=${dur}s -s monitor.interval=0 -q -f json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fig() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

printf '%-28s %14s %14s %7s\n' figure tfgb floor ratio
# latency p50, 1 x 10 B and the default payload
for pl in 10 default; do
	if [ $pl = 10 ]; then opts="-s payload.scheme=custom -s payload.iovec=10B"; sizes=10
	else opts=; sizes=$def; fi
	# shellcheck disable=SC2086
	$run ./tfgb latency $J $opts >"$tmp/t.json"
	t=$(fig "$tmp/t.json" "d['latency_us']['p50']")
	n=$(fig "$tmp/t.json" "d['calls']")
	f=$($run bench/mpi_pingpong -n "$n" -w $((n / 10 + 1)) $sizes | sed 's/.*p50 \([0-9.]*\) us.*/\1/')
	printf '%-28s %11.2f us %11.2f us %7.2f\n' "latency p50 $pl" "$t" "$f" \
		"$(echo "$t $f" | awk '{print $1 / $2}')"
	# the floor of TensorFlow's protocol (matched probes, MPI_Isend): how
	# much of the ratio is the protocol's, how much tfgb's own
	f=$($run bench/mpi_pingpong -p -n "$n" -w $((n / 10 + 1)) $sizes |
		sed 's/.*p50 \([0-9.]*\) us.*/\1/')
	printf '%-28s %11.2f us %11.2f us %7.2f\n' "  vs matched-probe floor" "$t" "$f" \
		"$(echo "$t $f" | awk '{print $1 / $2}')"
done
# bandwidth, default payload, inflight 16
$run ./tfgb bandwidth $J -s job.inflight=16 >"$tmp/b.json"
t=$(fig "$tmp/b.json" "d['MBps']")
n=$(fig "$tmp/b.json" "d['calls']")
f=$($run bench/mpi_pingpong -b -i 16 -n "$n" -w $((n / 10 + 1)) $def |
	sed 's/.*: \([0-9.]*\) MB\/s.*/\1/')
printf '%-28s %9.1f MB/s %9.1f MB/s %7.2f\n' "bandwidth inflight 16" "$t" "$f" \
	"$(echo "$t $f" | awk '{print $1 / $2}')"
echo "# transport: $(fig "$tmp/b.json" "d['tfgb']['transport_version']")"
