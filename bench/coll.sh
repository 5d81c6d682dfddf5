#!/bin/sh
# bench/coll.sh - `tfgb collective` (all-reduce, ring) next to its floors,
# Open MPI's own MPI_Allreduce (bench/mpi_allreduce.c), on this machine:
#   socket  tfgb over transport = socket   / Open MPI's ring over its TCP
#           byte transport (pml ob1, btl tcp,self, coll_tuned algorithm 4)
#   mpi     tfgb over transport = mpi      / MPI_Allreduce as Open MPI
#           chooses it (shared memory; Rabenseifner at these sizes)
#   mpi     tfgb over transport = mpi      / Open MPI's ring, forced
# The figure is busbw (GB/s) of one size, nccl-tests' (tfgb-collective(1));
# higher is better, so a ratio is tfgb / floor.  Every round runs each
# pair next to each other, tfgb first in odd rounds and last in even ones;
# a row gives the medians over rounds and the median of the rounds' ratios
# with their range.  N ranks on fewer cores are oversubscribed: read the
# ratios, not one round.
#   bench/coll.sh [-n RANKS] [-s BYTES] [-i ITERS] [-r ROUNDS]
#   defaults: 4 ranks, 67108864 bytes (64 MiB), 10 iterations after 3
#   warm-up, 3 rounds
# Run from the top of a built tree (make tfgb bench/mpi_allreduce).
# Exit status 0, 1 when a run failed, 2 on bad arguments.
set -e
n=4
size=67108864
iters=10
rounds=3
while getopts n:s:i:r: opt; do
	case "$opt" in
	n) n=$OPTARG ;;
	s) size=$OPTARG ;;
	i) iters=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '/^#   bench/,/^#   warm-up/p' "$0" | sed 's/^# *//' >&2; exit 2 ;;
	esac
done
case "$n$size$iters$rounds" in '' | *[!0-9]*) echo "bench/coll.sh: options take whole numbers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$n" -ge 2 ] || { echo "bench/coll.sh: -r 1 or more, -n 2 or more" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun="mpirun --oversubscribe --bind-to none -np $n"
ring="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4"
tcp="--mca pml ob1 --mca btl tcp,self"
port=$(/usr/bin/python3 -c 'import random; print(random.randrange(20000, 30000))')
C="-s cluster.workers=$n -s collective.min_bytes=$size -s collective.max_bytes=$size"
C="$C -s collective.iterations=$iters -s collective.warmup_iterations=3 -s collective.verify=none"
C="$C -s collective.ranks=127.0.0.1:$port -q -f json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# tfgb's busbw, from its JSON on stdin
tfgb_bw() { /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["collective"]["sizes"][0]["busbw_GBps"])'; }
floor_bw() { sed -n 's/.*busbw \([0-9.]*\) GB\/s.*/\1/p'; }

socket_tfgb() { ./tfgb collective -s job.transport=socket $C | tfgb_bw; }
mpi_tfgb() { $mpirun ./tfgb collective -s job.transport=mpi $C | tfgb_bw; }
# shellcheck disable=SC2086
tcp_ring() { $mpirun $tcp $ring bench/mpi_allreduce -n "$iters" -w 3 "$size" | floor_bw; }
# shellcheck disable=SC2086
shm_default() { $mpirun bench/mpi_allreduce -n "$iters" -w 3 "$size" | floor_bw; }
# shellcheck disable=SC2086
shm_ring() { $mpirun $ring bench/mpi_allreduce -n "$iters" -w 3 "$size" | floor_bw; }

# pair NAME TFGB FLOOR ROUND: both, in the round's order; "NAME tfgb floor"
pair() {
	if [ $(($4 % 2)) = 1 ]; then
		t=$($2) f=$($3)
	else
		f=$($3) t=$($2)
	fi
	[ -n "$t" ] && [ -n "$f" ] || { echo "bench/coll.sh: $1: a run failed" >&2; exit 1; }
	echo "$1 $t $f" >>"$tmp/rows"
}

for r in $(seq "$rounds"); do
	pair socket/tcp-ring socket_tfgb tcp_ring "$r"
	pair mpi/default mpi_tfgb shm_default "$r"
	pair mpi/ring mpi_tfgb shm_ring "$r"
done

/usr/bin/python3 "$(dirname "$0")/hostinfo.py" # the host the table was measured on
/usr/bin/python3 - "$tmp/rows" "$n" "$size" "$rounds" <<'PY'
import statistics, sys
rows, n, size, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
what = {
    "socket/tcp-ring": ("tfgb socket, ring", "Open MPI ring, TCP btl"),
    "mpi/default": ("tfgb mpi, ring", "MPI_Allreduce, Open MPI's choice"),
    "mpi/ring": ("tfgb mpi, ring", "Open MPI ring, forced"),
}
got = {}
for line in open(rows):
    name, t, f = line.split()
    got.setdefault(name, []).append((float(t), float(f)))
print("# all-reduce busbw (GB/s), %s ranks, %s bytes, %s rounds side by side" % (n, size, rounds))
print("%-34s %-34s %8s %8s %7s  %s" % ("tfgb", "floor", "tfgb", "floor", "ratio", "range"))
for name, (a, b) in what.items():
    v = got.get(name, [])
    if not v:
        continue
    ratios = [t / f for t, f in v if f > 0]
    print("%-34s %-34s %8.3f %8.3f %7.2f  %.2f-%.2f" % (
        a, b, statistics.median(t for t, _ in v), statistics.median(f for _, f in v),
        statistics.median(ratios), min(ratios), max(ratios)))
PY
