#!/bin/sh
# bench/timeline.sh - what output.timeline costs a training step: `tfgb
# train` of a model, 1 PS x 3 workers over socket, synchronous, run with
# and without the timeline side by side in every round (with first in odd
# rounds, last in even ones).  The figure is the mean step time (the
# result's latency_us.avg, ms); a row gives the medians over rounds and
# the median of the rounds' ratios (with / without: 1.00 is free; issue
# 44 asks at most 1.02) with their range.
#   bench/timeline.sh [-m MODEL] [-n STEPS] [-r ROUNDS]
#   defaults: resnet50, 20 steps after 2 warm-up, 3 rounds
# Run from the top of a built tree (make tfgb).
# Exit status 0, 1 when a run failed, 2 on bad arguments.
set -e
model=resnet50
steps=20
rounds=3
while getopts m:n:r: opt; do
	case "$opt" in
	m) model=$OPTARG ;;
	n) steps=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '/^#   bench/,/^#   defaults/p' "$0" | sed 's/^# *//' >&2; exit 2 ;;
	esac
done
case "$steps$rounds" in '' | *[!0-9]*) echo "bench/timeline.sh: -n and -r take whole numbers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$steps" -ge 1 ] || { echo "bench/timeline.sh: -r and -n 1 or more" >&2; exit 2; }
port=$(/usr/bin/python3 -c 'import random; print(random.randrange(20000, 30000))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# step [TIMELINE]: the mean step (ms) of one run
step() {
	./tfgb train -q -f json -s job.transport=socket -s cluster.ps=127.0.0.1:$port \
		-s cluster.workers=3 -s train.model="$model" -s train.steps="$steps" \
		-s train.warmup_steps=2 -s output.timeline="$1" >"$tmp/r.json" ||
		{ echo "bench/timeline.sh: a run failed" >&2; exit 1; }
	port=$((port + 4))
	/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["latency_us"]["avg"] / 1e3)' "$tmp/r.json"
}

for r in $(seq "$rounds"); do
	if [ $((r % 2)) = 1 ]; then
		on=$(step "$tmp/tl.json") off=$(step "")
	else
		off=$(step "") on=$(step "$tmp/tl.json")
	fi
	echo "$on $off" >>"$tmp/rows"
done

/usr/bin/python3 "$(dirname "$0")/hostinfo.py" # the host the table was measured on
/usr/bin/python3 - "$tmp/rows" "$model" "$steps" "$rounds" <<'PY'
import statistics, sys
rows, model, steps, rounds = sys.argv[1:5]
v = [tuple(map(float, line.split())) for line in open(rows)]
r = [a / b for a, b in v]
print("# output.timeline's cost: %s, 1 PS x 3 workers, socket, %s steps, %s rounds side by side"
      % (model, steps, rounds))
print("%12s %12s %7s  %s" % ("with_ms", "without_ms", "ratio", "range"))
print("%12.2f %12.2f %7.3f  %.3f-%.3f" % (statistics.median(a for a, _ in v),
      statistics.median(b for _, b in v), statistics.median(r), min(r), max(r)))
PY
