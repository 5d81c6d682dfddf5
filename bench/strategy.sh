#!/bin/sh
# bench/strategy.sh - parameter server against all-reduce on the same
# bytes: `tfgb train` of each model with 4 workers, as
#   ps1x4, ps2x4, ps4x4   P PSs x 4 workers, synchronous
#   ar4                   4 ranks, ring all-reduce of the gradients' buckets
# over each transport (mpi: all-reduce only, one mpirun of 4 ranks; its PS
# strategy is tfgb-mpi(7)'s), under each network given.  The figure is
# the step time, p50 in ms (PS: every worker's steps; all-reduce: each
# step's slowest rank), the median over rounds; "-" where a run failed
# (its error on stderr).  A network is a comma-separated list of -s
# settings, e.g. "network.topology=switch,network.rate=1gbit" (tfgb.ini(5),
# NETWORK); "none" is this host's loopback.
#   bench/strategy.sh [-m MODELS] [-t TRANSPORTS] [-n STEPS] [-r ROUNDS] [NETWORK...]
#   defaults: resnet50,mobilenet_v1,mnist_mlp, grpc,socket,mpi, 5 steps
#   after 1 warm-up, 1 round, network none
# Run from the top of a built tree (make tfgb), as root for a network.
# Exit status 0, 2 on bad arguments.
models=resnet50,mobilenet_v1,mnist_mlp
trs=grpc,socket,mpi
steps=5
rounds=1
while getopts m:t:n:r: opt; do
	case "$opt" in
	m) models=$OPTARG ;;
	t) trs=$OPTARG ;;
	n) steps=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '/^#   bench/,/^#   after/p' "$0" | sed 's/^# *//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case "$steps$rounds" in '' | *[!0-9]*) echo "bench/strategy.sh: -n and -r take whole numbers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$steps" -ge 1 ] || { echo "bench/strategy.sh: -n and -r 1 or more" >&2; exit 2; }
[ $# -gt 0 ] || set -- none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
port=$(/usr/bin/python3 -c 'import random; print(random.randrange(20000, 30000))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# step NETWORK MODEL TRANSPORT SHAPE: the p50 step (ms) of one run, or -
step() {
	net=
	[ "$1" = none ] || net=$(echo "$1" | tr ',' '\n' | sed 's/^/-s /' | tr '\n' ' ')
	s="-q -f json -s train.model=$2 -s job.transport=$3 -s cluster.workers=4"
	s="$s -s train.steps=$steps -s train.warmup_steps=1 -s job.timeout=120s $net"
	case $4 in
	ps*) np=${4#ps} s="$s -s cluster.ps=127.0.0.1:$port -s cluster.ps_count=${np%x4}" ;;
	ar4) s="$s -s train.strategy=allreduce -s collective.ranks=127.0.0.1:$port" ;;
	esac
	port=$((port + 16))
	# shellcheck disable=SC2086
	if [ "$3" = mpi ]; then
		mpirun --oversubscribe --bind-to none -np 4 ./tfgb train $s
	else
		./tfgb train $s
	fi >"$tmp/r.json" 2>"$tmp/e" || { echo "bench/strategy.sh: $1 $2 $3 $4: $(tail -n 1 "$tmp/e")" >&2; echo -; return; }
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = d["train"]
print("%.2f" % (t["step_ms"]["p50"] if "strategy" in t else d["latency_us"]["p50"] / 1e3))' "$tmp/r.json"
}

for r in $(seq "$rounds"); do
	for net in "$@"; do
		for m in $(echo "$models" | tr , ' '); do
			for tr in $(echo "$trs" | tr , ' '); do
				for shape in ps1x4 ps2x4 ps4x4 ar4; do
					[ "$tr" = mpi ] && [ "$shape" != ar4 ] && continue
					echo "$net $m $tr $shape $(step "$net" "$m" "$tr" "$shape")" >>"$tmp/rows"
				done
			done
		done
	done
done

/usr/bin/python3 "$(dirname "$0")/hostinfo.py" # the host the table was measured on
/usr/bin/python3 - "$tmp/rows" "$steps" "$rounds" <<'PY'
import statistics, sys
rows, steps, rounds = sys.argv[1:4]
got, order = {}, []
for line in open(rows):
    net, m, tr, shape, v = line.split()
    key = (net, m, tr)
    if key not in got:
        order.append(key)
    got.setdefault(key, {}).setdefault(shape, []).append(v)
def med(v):
    n = [float(x) for x in v if x != "-"]
    return "%.1f" % statistics.median(n) if n else "-"
print("# step p50 ms, 4 workers; %s steps, %s rounds (median)" % (steps, rounds))
print("%-48s %-13s %-7s %9s %9s %9s %9s  %s" % ("network", "model", "tr", "ps1x4", "ps2x4",
                                              "ps4x4", "ar4", "faster"))
for key in order:
    s = got[key]
    v = {k: med(s.get(k, [])) for k in ("ps1x4", "ps2x4", "ps4x4", "ar4")}
    nums = {k: float(x) for k, x in v.items() if x != "-"}
    best = min(nums, key=nums.get) if nums else "-"
    print("%-48s %-13s %-7s %9s %9s %9s %9s  %s" % (key[0], key[1], key[2], v["ps1x4"],
          v["ps2x4"], v["ps4x4"], v["ar4"], best))
PY
