#!/bin/sh
# make-plots.sh - runs a short set of tfgb jobs on this machine and draws
# the paper's figure types from their results with `tfgb plot` (which runs
# gnuplot; Debian: gnuplot-nox).
#
#   sh examples/plot/make-plots.sh [OUTDIR]        (default: plots)
#
# From the top of the source tree (or with TFGB set to a tfgb binary).
# Every run is short, so the figures show the shape of the results, not
# figures to publish: use real job files and windows for those, and draw
# their results with `tfgb plot` (tfgb-plot(1)) the same way.
#   latency-schemes.png    latency per payload scheme and transport (Fig. 8, 9):
#                          median, whisker up to p99
#   latency-percentiles.png  the same results' latency distributions, a line each
#   bandwidth-schemes.png  bandwidth per payload scheme and transport (Fig. 11, 12)
#   throughput-shapes.png  throughput per PS x worker shape and transport (Fig. 13, 14)
#   latency-iovecs.png     latency against 2..10 buffers of 1 MiB (Fig. 10)
#   latency-size.svg       latency against the message size, log axes (OSU's table)
#   collective-busbw.svg   all-reduce's bus bandwidth against the buffer size, ring
#                          and rhd over each transport, 3 ranks (nccl-tests' figure)
#   strategy-steps.svg     training's step time against the workers (2, 3), the
#                          parameter server against all-reduce over each transport
# The JSON results each figure is drawn from are left in OUTDIR/results.
#
# Environment: TFGB (./tfgb), PORT (the first PS port; default 50101;
# throughput uses the ports up to PORT + 2 and PORT - 1), WARMUP (200ms),
# DURATION (1s), REPEAT (2: error bars from the runs), TRANSPORTS
# ("grpc socket"), SCHEMES ("uniform random skew"), SHAPES ("1x1 1x2 2x2"),
# IOVECS ("2 4 6 8 10"), SIZES ("1B:4MiB:*8"), COLL_MAX (4MiB: the largest
# all-reduce), MODEL (mobilenet_v1).
# Exit status: 0 all drawn, 1 a run or a figure failed, 2 bad usage.
set -u
here=$(dirname "$0")
TFGB=${TFGB:-./tfgb}
PORT=${PORT:-50101}
WARMUP=${WARMUP:-200ms}
DURATION=${DURATION:-1s}
REPEAT=${REPEAT:-2}
TRANSPORTS=${TRANSPORTS:-grpc socket}
SCHEMES=${SCHEMES:-uniform random skew}
SHAPES=${SHAPES:-1x1 1x2 2x2}
IOVECS=${IOVECS:-2 4 6 8 10}
SIZES=${SIZES:-1B:4MiB:*8}
COLL_MAX=${COLL_MAX:-4MiB}
MODEL=${MODEL:-mobilenet_v1}
out=${1:-plots}

[ $# -le 1 ] || { echo "usage: make-plots.sh [OUTDIR]" >&2; exit 2; }
[ -x "$TFGB" ] || { echo "make-plots.sh: no tfgb at '$TFGB'; build it or set TFGB" >&2; exit 2; }
res=$out/results
mkdir -p "$res" || exit 1

common="-q -f json -s cluster.ps=127.0.0.1:$PORT -s job.warmup=$WARMUP -s job.duration=$DURATION"

# run FILE tfgb ARGS...: one result
run() {
	file=$1
	shift
	echo "  tfgb $*" >&2
	"$TFGB" "$@" -o "$file" || { echo "make-plots.sh: tfgb $* failed" >&2; exit 1; }
}

# draw FIGURE RESULTS... [-- OPTIONS]: tfgb plot
draw() {
	fig=$1
	shift
	"$TFGB" plot -o "$fig" "$@" || { echo "make-plots.sh: tfgb plot -o $fig failed" >&2; exit 1; }
	echo "$fig"
}

iovecs=$(echo $IOVECS | tr ' ' ',')
rm -f "$res"/*.json
for tr in $TRANSPORTS; do
	for scheme in $SCHEMES; do
		run "$res/latency-$tr-$scheme.json" latency $common -s job.transport=$tr \
			-s payload.scheme=$scheme -s job.repeat=$REPEAT
		run "$res/bandwidth-$tr-$scheme.json" bandwidth $common -s job.transport=$tr \
			-s payload.scheme=$scheme -s job.inflight=16 -s job.repeat=$REPEAT
	done
	for shape in $SHAPES; do
		run "$res/throughput-$tr-$shape.json" throughput $common -s job.transport=$tr \
			-s cluster.ps_count=${shape%x*} -s cluster.workers=${shape#*x}
	done
	run "$res/iovecs-$tr.json" latency -c "$here/../fig10-latency-iovecs.ini" $common \
		-s job.transport=$tr --sweep payload.iovecs=$iovecs
	run "$res/size-$tr.json" latency $common -s job.transport=$tr --sweep payload.size=$SIZES
	for alg in ring rhd; do
		run "$res/coll-$tr-$alg.json" collective -q -f json -s job.transport=$tr \
			-s cluster.workers=3 -s collective.algorithm=$alg -s collective.max_bytes=$COLL_MAX
	done
	for strategy in ps allreduce; do
		run "$res/train-$tr-$strategy.json" train -q -f json -s cluster.ps=127.0.0.1:$PORT \
			-s job.transport=$tr -s train.model=$MODEL -s train.steps=10 \
			-s train.strategy=$strategy --sweep cluster.workers=2,3
	done
done

draw "$out/latency-schemes.png" "$res"/latency-*.json
draw "$out/latency-percentiles.png" --figure percentiles "$res"/latency-*.json
draw "$out/bandwidth-schemes.png" "$res"/bandwidth-*.json
draw "$out/throughput-shapes.png" "$res"/throughput-*.json
draw "$out/latency-iovecs.png" "$res"/iovecs-*.json
draw "$out/latency-size.svg" "$res"/size-*.json
draw "$out/collective-busbw.svg" "$res"/coll-*.json
draw "$out/strategy-steps.svg" "$res"/train-*.json
