#!/bin/sh
# bench/straggler.sh - what one straggler costs each training strategy:
# `tfgb train` of a model with 4 workers, as
#   ps-sync   1 PS x 4 workers, synchronous (a barrier before each step)
#   ps-async  1 PS x 4 workers, asynchronous
#   allreduce 4 ranks, ring all-reduce of the gradients' buckets
# each without a fault and with a delay put in on worker 1 in each
# measured step ([fault], tfgb.ini(5)): fixed 10 ms, fixed 50 ms, and
# exponential with a mean of 10 ms.  The figure is a step's time with
# its waits, in ms: for ps-sync the slowest worker's measured window over
# its steps (every worker waits at the barriers, so they all agree), for
# ps-async the other workers' (the straggler's own beside it), for
# allreduce the mean of each step's slowest rank.  cost = the step with
# the fault - the step without, in the same round; cost/d its share of
# the delay's mean (1: the whole delay shows in every step; 0: none).
# Rounds run the cases in turn, each round in the opposite order of the
# one before; a row gives medians over rounds.
# -N runs every case under a network, a comma-separated list of -s
# settings as bench/strategy.sh takes (e.g.
# "network.topology=switch,network.rate=1gbit": each worker, PS and rank a
# NIC of its own, where a sleeping worker frees no one's wire).
#   bench/straggler.sh [-m MODELS] [-t TRANSPORT] [-n STEPS] [-r ROUNDS] [-N NETWORK]
#   defaults: resnet50,mnist_mlp, socket, 20 steps after 2 warm-up, 1 round
# Run from the top of a built tree (make tfgb).
# Exit status 0, 1 when a run failed, 2 on bad arguments.
set -e
models=resnet50,mnist_mlp
tr=socket
steps=20
rounds=1
net=
while getopts m:t:n:r:N: opt; do
	case "$opt" in
	N) net=$(echo "$OPTARG" | tr ',' '\n' | sed 's/^/-s /' | tr '\n' ' ') ;;
	m) models=$OPTARG ;;
	t) tr=$OPTARG ;;
	n) steps=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '/^#   bench/,/^#   defaults/p' "$0" | sed 's/^# *//' >&2; exit 2 ;;
	esac
done
case "$steps$rounds" in '' | *[!0-9]*) echo "bench/straggler.sh: -n and -r take whole numbers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$steps" -ge 2 ] || { echo "bench/straggler.sh: -r 1 or more, -n 2 or more" >&2; exit 2; }
port=$(/usr/bin/python3 -c 'import random; print(random.randrange(20000, 30000))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# run MODEL STRATEGY FAULT: one training run's JSON into $tmp/last.json
run() {
	case $2 in
	ps-sync) a="-s cluster.ps=127.0.0.1:$port -s train.sync=yes" ;;
	ps-async) a="-s cluster.ps=127.0.0.1:$port -s train.sync=no" ;;
	allreduce) a="-s collective.ranks=127.0.0.1:$port -s train.strategy=allreduce" ;;
	esac
	case $3 in
	none) k= ;;
	exp*) k="-s fault.rank=1 -s fault.distribution=exponential -s fault.delay=${3#exp}ms" ;;
	*) k="-s fault.rank=1 -s fault.delay=${3}ms" ;;
	esac
	# shellcheck disable=SC2086
	./tfgb train -q -f json -s job.transport="$tr" -s cluster.workers=4 -s train.model="$1" \
		-s train.steps="$steps" -s train.warmup_steps=2 $a $k $net >"$tmp/last.json" ||
		{ echo "bench/straggler.sh: $1 $2 fault $3: the run failed" >&2; exit 1; }
	port=$((port + 8))
}

# the step (and the straggler's own, or -) of the run in $tmp/last.json
figure() {
	/usr/bin/python3 - "$1" "$tmp/last.json" <<'PY'
import json, statistics, sys
how, d = sys.argv[1], json.load(open(sys.argv[2]))["train"]
if how == "allreduce":
    print(d["step_ms"]["mean"], "-")
elif how == "ps-sync":
    print(max(d["per_worker_period_ms"]), "-")
else:
    p = d["per_worker_period_ms"]
    print(statistics.mean(p[:1] + p[2:]), p[1])
PY
}

cases=""
for m in $(echo "$models" | tr , ' '); do
	for s in ps-sync ps-async allreduce; do
		for f in none 10 50 exp10; do
			cases="$cases $m/$s/$f"
		done
	done
done
rev=$(echo "$cases" | tr ' ' '\n' | sed '/^$/d' | tac | tr '\n' ' ')
for r in $(seq "$rounds"); do
	list=$cases
	[ $((r % 2)) = 0 ] && list=$rev
	for c in $list; do
		m=${c%%/*} rest=${c#*/}
		s=${rest%%/*} f=${rest#*/}
		run "$m" "$s" "$f"
		echo "$r $m $s $f $(figure "$s")" >>"$tmp/rows"
	done
done

/usr/bin/python3 "$(dirname "$0")/hostinfo.py" # the host the table was measured on
/usr/bin/python3 - "$tmp/rows" "$tr" "$steps" "$rounds" "${net:-loopback}" <<'PY'
import statistics, sys
rows, tr, steps, rounds, net = sys.argv[1:6]
got = {}
for line in open(rows):
    r, m, s, f, step, own = line.split()
    got.setdefault((m, s, f), []).append((int(r), float(step), None if own == "-" else float(own)))
mean_d = {"10": 10.0, "50": 50.0, "exp10": 10.0}
print("# one straggler (worker 1 of 4): step with waits, ms; transport %s, %s steps, %s rounds;"
      " network %s" % (tr, steps, rounds, net.strip()))
print("%-10s %-10s %-7s %10s %10s %7s %12s" % ("model", "strategy", "fault", "step_ms", "cost_ms",
                                              "cost/d", "straggler_ms"))
for (m, s, f), v in got.items():
    base = {r: st for r, st, _ in got.get((m, s, "none"), [])}
    step = statistics.median(st for _, st, _ in v)
    own = [o for _, _, o in v if o is not None]
    if f == "none":
        cost, share = "-", "-"
    else:
        c = statistics.median(st - base[r] for r, st, _ in v if r in base)
        cost, share = "%.2f" % c, "%.2f" % (c / mean_d[f])
    print("%-10s %-10s %-7s %10.2f %10s %7s %12s" % (
        m, s, f if f != "exp10" else "exp 10", step, cost, share,
        "%.2f" % statistics.median(own) if own else "-"))
PY
