#!/bin/sh
# bench/timeline.sh - what output.timeline costs a training step or a
# collective's operation, run with and without the timeline side by side
# in every round (with first in odd rounds, last in even ones):
#   ps          `tfgb train` of a model, 1 PS x 3 workers over socket,
#               synchronous (the default)
#   allreduce   `tfgb train -s train.strategy=allreduce`, 3 ranks over
#               socket (its steps' exchanges on the timeline's threads)
#   collective  `tfgb collective`, all-reduce (ring) of 4 KiB over 3 ranks,
#               a step a measured operation: the smallest exchanges, where
#               a clock reading would show most
# With -b BASE, the pair is instead ./tfgb against the tfgb at BASE, both
# without a timeline: what the code that keeps the timeline costs when
# none is asked for.
# The figure is the mean step time (ms; the collective's mean operation);
# a row gives the medians over rounds and the median of the rounds'
# ratios (with / without, or ./tfgb / BASE: 1.00 is free; issue 44 asks
# at most 1.02) with their range.
#   bench/timeline.sh [-S ps|allreduce|collective] [-m MODEL] [-n STEPS] [-r ROUNDS] [-b BASE]
#   defaults: ps, resnet50, 20 steps after 2 warm-up, 3 rounds
# Run from the top of a built tree (make tfgb).
# Exit status 0, 1 when a run failed, 2 on bad arguments.
set -e
model=resnet50
steps=20
rounds=3
strategy=ps
base=
while getopts S:m:n:r:b: opt; do
	case "$opt" in
	S) strategy=$OPTARG ;;
	m) model=$OPTARG ;;
	n) steps=$OPTARG ;;
	r) rounds=$OPTARG ;;
	b) base=$OPTARG ;;
	*) sed -n '/^#   bench/,/^#   defaults/p' "$0" | sed 's/^# *//' >&2; exit 2 ;;
	esac
done
case "$steps$rounds" in '' | *[!0-9]*) echo "bench/timeline.sh: -n and -r take whole numbers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$steps" -ge 1 ] || { echo "bench/timeline.sh: -r and -n 1 or more" >&2; exit 2; }
case "$strategy" in ps | allreduce | collective) ;; *) echo "bench/timeline.sh: -S ps, allreduce or collective" >&2; exit 2 ;; esac
[ -z "$base" ] || [ -x "$base" ] || { echo "bench/timeline.sh: -b '$base' is not an executable" >&2; exit 2; }
port=$(/usr/bin/python3 -c 'import random; print(random.randrange(20000, 30000))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# run TFGB [TIMELINE]: the mean step (ms) of one run
run() {
	case $strategy in
	ps) "$1" train -q -f json -s job.transport=socket -s cluster.ps=127.0.0.1:$port \
		-s cluster.workers=3 -s train.model="$model" -s train.steps="$steps" \
		-s train.warmup_steps=2 -s output.timeline="$2" >"$tmp/r.json" ;;
	allreduce) "$1" train -q -f json -s job.transport=socket -s collective.ranks=127.0.0.1:$port \
		-s train.strategy=allreduce -s cluster.workers=3 -s train.model="$model" \
		-s train.steps="$steps" -s train.warmup_steps=2 -s output.timeline="$2" >"$tmp/r.json" ;;
	collective) "$1" collective -q -f json -s job.transport=socket -s collective.ranks=127.0.0.1:$port \
		-s cluster.workers=3 -s collective.min_bytes=4KiB -s collective.max_bytes=4KiB \
		-s collective.iterations="$steps" -s collective.verify=none \
		-s output.timeline="$2" >"$tmp/r.json" ;;
	esac || { echo "bench/timeline.sh: a run failed" >&2; exit 1; }
	port=$((port + 4))
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
if "collective" in d: print(d["collective"]["sizes"][0]["time_us"]["mean"] / 1e3)
elif d["train"].get("strategy") == "allreduce": print(d["train"]["step_ms"]["mean"])
else: print(d["latency_us"]["avg"] / 1e3)' "$tmp/r.json"
}

# step [TIMELINE]: ./tfgb's run; other: the other side of the pair
step() { run ./tfgb "$1"; }
other() { if [ -n "$base" ]; then run "$base" ""; else run ./tfgb "$tmp/tl.json"; fi; }

for r in $(seq "$rounds"); do
	if [ $((r % 2)) = 1 ]; then
		on=$(other) off=$(step "")
	else
		off=$(step "") on=$(other)
	fi
	echo "$on $off" >>"$tmp/rows"
done

/usr/bin/python3 "$(dirname "$0")/hostinfo.py" # the host the table was measured on
/usr/bin/python3 - "$tmp/rows" "$model" "$steps" "$rounds" "$strategy" "$base" <<'PY'
import statistics, sys
rows, model, steps, rounds, strategy, base = sys.argv[1:7]
v = [tuple(map(float, line.split())) for line in open(rows)]
if base:  # a row is "BASE ./tfgb": ./tfgb first, as its ratio is
    v = [(b, a) for a, b in v]
r = [a / b for a, b in v]
what = {"ps": "%s, 1 PS x 3 workers" % model, "allreduce": "%s, allreduce over 3 ranks" % model,
        "collective": "collective all-reduce of 4 KiB over 3 ranks"}[strategy]
if base:
    print("# without a timeline, ./tfgb against %s: %s, socket, %s steps, %s rounds side by side"
          % (base, what, steps, rounds))
    print("%12s %12s %7s  %s" % ("tfgb_ms", "base_ms", "ratio", "range"))
else:
    print("# output.timeline's cost: %s, socket, %s steps, %s rounds side by side"
          % (what, steps, rounds))
    print("%12s %12s %7s  %s" % ("with_ms", "without_ms", "ratio", "range"))
print("%12.2f %12.2f %7.3f  %.3f-%.3f" % (statistics.median(a for a, _ in v),
      statistics.median(b for _, b in v), statistics.median(r), min(r), max(r)))
PY
