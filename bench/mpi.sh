#!/bin/sh
# bench/mpi.sh - `tfgb latency` and `tfgb bandwidth` over transport = mpi
# next to the floor, bench/mpi_pingpong.c (what MPI alone gives two ranks),
# on this machine, btl as Open MPI chooses (or MPI_BTL=tcp,self): p50 at
# 1 x 10 B and at the default payload (4 x 10 B, 3 x 10 KiB, 3 x 1 MiB),
# payload MB/s at inflight 16; each latency also against the floor with
# TensorFlow's matched probes (mpi_pingpong -p), the part of the ratio
# that is the protocol's, and against non-blocking posted receives
# (mpi_pingpong -P), the part of that which is the probes'.
#
# Every round runs each figure's tfgb run and its floors next to each
# other, with the same number of measured calls, tfgb first in odd rounds
# and last in even ones.  One row per figure: the median over rounds of
# tfgb and of the floor, then the median of the rounds' ratios tfgb /
# floor (bandwidth: higher is better) and their range.  On a shared VM a
# whole run can land in a slow mode (here the default payload's round
# trip takes 600-700 us in some runs of the same program and 1,300-2,200
# us in others): read the ratios, whose runs ran side by side, and their
# range, not one round.
#   bench/mpi.sh [-d SECONDS] [-r ROUNDS]
#   -d the measured window of tfgb's runs (default 3), -r rounds (default 3)
# Run from the top of a built tree (make tfgb bench/mpi_pingpong).
# Exit status 0, 1 when a run failed, 2 on bad arguments.
set -e
dur=3
rounds=3
while getopts d:r: opt; do
	case "$opt" in
	d) dur=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '/^#   bench/,/^#   -d/p' "$0" | sed 's/^# *//' >&2; exit 2 ;;
	esac
done
case "$dur$rounds" in '' | *[!0-9]*) echo "bench/mpi.sh: -d and -r take whole numbers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || { echo "bench/mpi.sh: -r takes 1 or more" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run="mpirun --oversubscribe --bind-to none -np 2"
[ -n "$MPI_BTL" ] && run="$run --mca btl $MPI_BTL"
def=10,10,10,10,10240,10240,10240,1048576,1048576,1048576
J="-s job.transport=mpi -s job.warmup=1s -s job.duration=${dur}s -s monitor.interval=0 -q -f json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fig() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# the floor's figure from its one line: p50 us, or MB/s
floor_p50() { sed -n 's/.*p50 \([0-9.]*\) us.*/\1/p'; }
floor_mbps() { sed -n 's/.*: \([0-9.]*\) MB\/s.*/\1/p'; }

# tfgb's run of the figure in TFGB_CMD: its figure (JSON EXPR) into t
tfgb_run() {
	# shellcheck disable=SC2086
	$run ./tfgb $TFGB_CMD <&3 >"$tmp/t.json"
	t=$(fig "$tmp/t.json" "$expr")
}

# One round of figure NAME: tfgb (TFGB_CMD, its JSON figure EXPR) and
# each floor (lines "LABEL|ARGS|PARSER" in FLOORS), run next to each
# other, with tfgb's number of calls; appends "NAME LABEL tfgb floor" to
# $tmp/rows.  An odd round runs tfgb first and keeps that number in
# $tmp/n.NAME; an even one runs tfgb last, its floors taking the number
# of the odd round before.
round() {
	name=$1 round=$2 expr=$3
	if [ $((round % 2)) = 1 ]; then
		tfgb_run
		fig "$tmp/t.json" "d['calls']" >"$tmp/n.$name"
	fi
	n=$(cat "$tmp/n.$name")
	echo "$FLOORS" | while IFS='|' read -r label args parse; do
		# shellcheck disable=SC2086
		$run bench/mpi_pingpong -n "$n" -w $((n / 10 + 1)) $args <&3 | $parse >"$tmp/f.$label"
		[ -s "$tmp/f.$label" ] || { echo "bench/mpi.sh: mpi_pingpong $args gave no figure" >&2; exit 1; }
	done
	if [ $((round % 2)) = 0 ]; then
		tfgb_run
	fi
	echo "$FLOORS" | while IFS='|' read -r label args parse; do
		echo "$name $label $t $(cat "$tmp/f.$label")" >>"$tmp/rows"
	done
}

: >"$tmp/rows"
# mpirun passes its standard input on to rank 0: every run gets none (fd
# 3), not the floors' list being read
exec 3</dev/null
for r in $(seq 1 "$rounds"); do
	TFGB_CMD="latency $J -s payload.scheme=custom -s payload.iovec=10B"
	FLOORS="plain|10|floor_p50
probe|-p 10|floor_p50
posted|-P 10|floor_p50"
	round lat10 "$r" "d['latency_us']['p50']"
	TFGB_CMD="latency $J"
	FLOORS="plain|$def|floor_p50
probe|-p $def|floor_p50
posted|-P $def|floor_p50"
	round latdef "$r" "d['latency_us']['p50']"
	TFGB_CMD="bandwidth $J -s job.inflight=16"
	FLOORS="plain|-b -i 16 $def|floor_mbps"
	round bw16 "$r" "d['MBps']"
done

/usr/bin/python3 "$(dirname "$0")/hostinfo.py" # the host the table was measured on
/usr/bin/python3 - "$tmp/rows" "$rounds" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, label, t, f = line.split()
    rows.setdefault((name, label), []).append((float(t), float(f)))
title = {("lat10", "plain"): ("latency p50 1 x 10 B", "us"),
         ("lat10", "probe"): ("  vs matched-probe floor", "us"),
         ("lat10", "posted"): ("  vs posted-receive floor", "us"),
         ("latdef", "plain"): ("latency p50 default", "us"),
         ("latdef", "probe"): ("  vs matched-probe floor", "us"),
         ("latdef", "posted"): ("  vs posted-receive floor", "us"),
         ("bw16", "plain"): ("bandwidth inflight 16", "MB/s")}
print("%-26s %14s %14s %7s  %s" % ("figure (%s rounds)" % sys.argv[2], "tfgb", "floor",
                                   "ratio", "range"))
for key in [("lat10", "plain"), ("lat10", "probe"), ("lat10", "posted"), ("latdef", "plain"),
            ("latdef", "probe"), ("latdef", "posted"), ("bw16", "plain")]:
    v = rows.get(key, [])
    if not v:
        continue
    name, unit = title[key]
    ratios = [t / f for t, f in v]
    print("%-26s %9.2f %-4s %9.2f %-4s %7.2f  %.2f-%.2f" % (
        name, statistics.median(t for t, _ in v), unit, statistics.median(f for _, f in v),
        unit, statistics.median(ratios), min(ratios), max(ratios)))
EOF
echo "# transport: $(fig "$tmp/t.json" "d['tfgb']['transport_version']")"
