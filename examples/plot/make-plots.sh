#!/bin/sh
# make-plots.sh - runs a short set of tfgb jobs on this machine and renders
# the paper's figure styles as PNG files with gnuplot (Debian: gnuplot-nox).
#
#   sh examples/plot/make-plots.sh [OUTDIR]        (default: plots)
#
# From the top of the source tree (or with TFGB set to a tfgb binary).
# Every run is short, so the figures show the shape of the results, not
# figures to publish: use real job files and windows for those.
#   latency-schemes.png    latency per payload scheme and transport (Fig. 8, 9)
#   bandwidth-schemes.png  bandwidth per payload scheme and transport (Fig. 11, 12)
#   throughput-shapes.png  throughput per PS x worker shape (Fig. 13, 14)
#   latency-iovecs.png     latency against 2..10 buffers of 1 MiB (Fig. 10)
# The CSV each figure is drawn from is left next to it.
#
# Environment: TFGB (./tfgb), GNUPLOT (gnuplot), PORT (the first PS port;
# default 50101; throughput uses the ports up to PORT + 2 and PORT - 1),
# WARMUP (200ms), DURATION (1s), TRANSPORTS ("grpc socket"),
# SCHEMES ("uniform random skew"), SHAPES ("1x1 1x2 2x2"), IOVECS ("2 4 6 8 10").
# Exit status: 0 all rendered, 1 a run or a plot failed, 2 bad usage.
set -u
here=$(dirname "$0")
TFGB=${TFGB:-./tfgb}
GNUPLOT=${GNUPLOT:-gnuplot}
PORT=${PORT:-50101}
WARMUP=${WARMUP:-200ms}
DURATION=${DURATION:-1s}
TRANSPORTS=${TRANSPORTS:-grpc socket}
SCHEMES=${SCHEMES:-uniform random skew}
SHAPES=${SHAPES:-1x1 1x2 2x2}
IOVECS=${IOVECS:-2 4 6 8 10}
out=${1:-plots}

[ $# -le 1 ] || { echo "usage: make-plots.sh [OUTDIR]" >&2; exit 2; }
[ -x "$TFGB" ] || { echo "make-plots.sh: no tfgb at '$TFGB'; build it or set TFGB" >&2; exit 2; }
command -v "$GNUPLOT" >/dev/null 2>&1 ||
	{ echo "make-plots.sh: no gnuplot (Debian: apt-get install gnuplot-nox)" >&2; exit 2; }
mkdir -p "$out" || exit 1

common="-q -f csv -s cluster.ps=127.0.0.1:$PORT -s job.warmup=$WARMUP -s job.duration=$DURATION"

# run CSV [PREFIX] -- tfgb ARGS...: appends the run's row to CSV (with the
# header first when CSV is new), each line prefixed with PREFIX when given.
run() {
	csv=$1 prefix=$2
	shift 3
	echo "  $*" >&2
	row=$("$TFGB" "$@") || { echo "make-plots.sh: tfgb $* failed" >&2; exit 1; }
	if [ ! -s "$csv" ]; then
		if [ -n "$prefix" ]; then
			printf '%s,%s\n' shape "$(printf '%s\n' "$row" | head -n 1)" >"$csv"
		else
			printf '%s\n' "$row" | head -n 1 >"$csv"
		fi
	fi
	if [ -n "$prefix" ]; then
		printf '%s,%s\n' "$prefix" "$(printf '%s\n' "$row" | tail -n 1)" >>"$csv"
	else
		printf '%s\n' "$row" | tail -n 1 >>"$csv"
	fi
}

# plot SCRIPT PNG FILES TITLES
plot() {
	"$GNUPLOT" -e "files='$3'; titles='$4'; out='$2'" "$here/$1" ||
		{ echo "make-plots.sh: gnuplot $1 failed" >&2; exit 1; }
	echo "$2"
}

iovecs=$(echo $IOVECS | tr ' ' ',')
lat_files= bw_files= tp_files= iov_files= titles=
for tr in $TRANSPORTS; do
	rm -f "$out/latency-$tr.csv" "$out/bandwidth-$tr.csv" "$out/throughput-$tr.csv" \
		"$out/iovecs-$tr.csv"
	for scheme in $SCHEMES; do
		run "$out/latency-$tr.csv" "" -- latency $common -s job.transport=$tr \
			-s payload.scheme=$scheme
		run "$out/bandwidth-$tr.csv" "" -- bandwidth $common -s job.transport=$tr \
			-s payload.scheme=$scheme -s job.inflight=16
	done
	for shape in $SHAPES; do
		run "$out/throughput-$tr.csv" "$shape" -- throughput $common -s job.transport=$tr \
			-s cluster.ps_count=${shape%x*} -s cluster.workers=${shape#*x}
	done
	# one sweep: the header and a row per buffer count
	echo "  latency -c fig10-latency-iovecs.ini --sweep payload.iovecs=$iovecs ($tr)" >&2
	"$TFGB" latency -c "$here/../fig10-latency-iovecs.ini" $common -s job.transport=$tr \
		--sweep payload.iovecs=$iovecs >"$out/iovecs-$tr.csv" ||
		{ echo "make-plots.sh: the iovecs sweep ($tr) failed" >&2; exit 1; }
	lat_files="$lat_files $out/latency-$tr.csv"
	bw_files="$bw_files $out/bandwidth-$tr.csv"
	tp_files="$tp_files $out/throughput-$tr.csv"
	iov_files="$iov_files $out/iovecs-$tr.csv"
	titles="$titles $tr"
done

plot latency-schemes.gp "$out/latency-schemes.png" "$lat_files" "$titles"
plot bandwidth-schemes.gp "$out/bandwidth-schemes.png" "$bw_files" "$titles"
plot throughput-shapes.gp "$out/throughput-shapes.png" "$tp_files" "$titles"
plot latency-iovecs.gp "$out/latency-iovecs.png" "$iov_files" "$titles"
