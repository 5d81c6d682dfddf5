#!/bin/sh
# tfgb plot on real results: a size sweep (its JSON and its CSV) drawn as
# lines on log axes, a grid of three keys as lines of a colour and a dash
# each, two result files as bars, runs of job.repeat with
# error bars and an empty result marked (SVG: the axis labels, the legend's
# entries and the marks are read back from its text); each PNG must start
# with the PNG signature and be large enough to hold a plot, and gnuplot
# must not complain.  Then the refusals: files that make no figure (exit
# 2, the file named), no gnuplot (exit 1, its package named, no file
# left).  Skips without gnuplot.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
command -v gnuplot >/dev/null 2>&1 || skip "no gnuplot (Debian: gnuplot-nox)"

port=$(free_port)
out=$(mktemp -d)
cleanup_on_exit "$out"

base="-s cluster.ps=127.0.0.1:$port -s job.warmup=$(slow 100)ms -s job.duration=$(slow 200)ms -q"

# is_png FILE: the signature, and more than a blank canvas's bytes
is_png() {
	[ -s "$1" ] || fail "no $1, or an empty one"
	[ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "$1 is not a PNG: $(od -An -c -N8 "$1")"
	[ "$(wc -c <"$1")" -gt 8000 ] || fail "$1: $(wc -c <"$1") bytes, too small to hold a plot"
}

# plot_ok FIGURE ARGS...: tfgb plot succeeds without a word from gnuplot
plot_ok() {
	fig=$1
	shift
	$TFGB plot -o "$fig" "$@" 2>"$out/err" || fail "plot -o $fig $* exited $?: $(cat "$out/err")"
	[ -s "$out/err" ] && fail "plot -o $fig $*: $(cat "$out/err")"
	case $fig in *.png) is_png "$fig" ;; esac
	ls "$fig".tmp-* >/dev/null 2>&1 && fail "a temporary file is left beside $fig"
}

# in_svg FILE TEXT...: each TEXT is in the SVG's text
in_svg() {
	f=$1
	shift
	for s in "$@"; do
		grep -qF "$s" "$f" || fail "$f has no '$s'"
	done
}

# 1. a size sweep, as JSON and as CSV: lines against the message size
$TFGB latency $base --sweep payload.size=1KiB:64KiB:*8 -f json -o "$out/size.json" \
	2>"$out/err" || fail "size sweep exited $?: $(cat "$out/err")"
$TFGB latency $base --sweep payload.size=1KiB:64KiB:*8 -f csv -o "$out/size.csv" \
	2>"$out/err" || fail "size sweep (csv) exited $?: $(cat "$out/err")"
plot_ok "$out/size.png" "$out/size.json"
plot_ok "$out/size-csv.svg" "$out/size.csv"
in_svg "$out/size-csv.svg" "message size (bytes; one buffer)" "median latency (µs)" "whiskers: up to the 99th percentile" \
	"1 KiB" "8 KiB" "64 KiB" "by message size" "grpc, non-serialized"

# 2. two result files differing in the transport: bars
for tr in grpc socket; do
	$TFGB latency $base -s job.transport=$tr -f json -o "$out/lat-$tr.json" 2>"$out/err" ||
		fail "latency ($tr) exited $?: $(cat "$out/err")"
done
plot_ok "$out/two.png" "$out/lat-grpc.json" "$out/lat-socket.json"
plot_ok "$out/two.svg" "$out/lat-grpc.json" "$out/lat-socket.json"
in_svg "$out/two.svg" "by transport" ">transport<" "median latency (" ">grpc<" ">socket<"

# 3. repeats: three runs per result, bars at their mean with error bars
#    from the smallest to the largest run; another scheme, a series per
#    transport
for tr in grpc socket; do
	$TFGB latency $base -s job.transport=$tr -s job.repeat=3 -s payload.scheme=skew -f json \
		-o "$out/rep-$tr.json" 2>"$out/err" || fail "repeat ($tr) exited $?: $(cat "$out/err")"
done
plot_ok "$out/rep.png" "$out"/rep-*.json "$out"/lat-*.json
plot_ok "$out/rep.svg" --errors minmax "$out"/rep-*.json "$out"/lat-*.json
in_svg "$out/rep.svg" "by payload scheme and transport" ">payload scheme<" ">grpc<" ">socket<" \
	">uniform<" ">skew<" "the mean of 3 runs; error bars: min to max of the runs"
plot_ok "$out/rep-sd.svg" --errors stddev "$out"/rep-*.json
in_svg "$out/rep-sd.svg" "error bars: mean +- one sample stddev"

# by default latency is its median with a whisker up to p99, a repeat's
# figures those of all its runs together
plot_ok "$out/rep-p99.svg" "$out"/rep-*.json "$out"/lat-*.json
in_svg "$out/rep-p99.svg" "median latency by payload scheme" "repeats: the figures of all 3 runs"

# 4. an empty run (no call in its window) is marked, its null no bar
$TFGB latency -s cluster.ps=127.0.0.1:$port -s job.warmup=10ms -s job.duration=10ms \
	-s payload.scheme=custom -s payload.iovec=64MiB -s payload.iovecs=1 -q -f json \
	-o "$out/empty.json" 2>/dev/null
if grep -q '"status": *"empty"' "$out/empty.json" 2>/dev/null; then
	plot_ok "$out/empty.svg" "$out/lat-grpc.json" "$out/empty.json"
	in_svg "$out/empty.svg" "empty: no figure" "status not ok" "1 result not ok"
	# nothing else to draw: refused
	rc=0
	$TFGB plot -o "$out/x.png" "$out/empty.json" 2>"$out/err" || rc=$?
	[ "$rc" = 2 ] && grep -q "empty.json.*null" "$out/err" ||
		fail "only an empty result: exit $rc, $(cat "$out/err")"
else
	skip_part "a 64 MiB call fit in a 10 ms window here: no empty result to draw"
fi

# 5. the latency distribution from the recorded histograms: a line per
#    result against the percentile; a sweep's runs named by their size
plot_ok "$out/pct.svg" --figure percentiles "$out/lat-grpc.json" "$out/lat-socket.json"
in_svg "$out/pct.svg" "latency distribution by transport" ">90%<" ">grpc<" ">socket<" \
	"call latency (" "percentile (1/(1 - percentile) on a log scale)"
plot_ok "$out/pct-size.png" --figure percentiles "$out/size.json"
plot_ok "$out/pct-size.svg" --figure percentiles "$out/size.json"
in_svg "$out/pct-size.svg" "latency distribution by payload size" ">1 KiB<" ">64 KiB<"
# one figure's points: the rows output.hgrm writes for the same result
$TFGB latency $base -s payload.scheme=custom -s payload.iovec=4KiB -s payload.iovecs=1 \
	-f json -o "$out/h.json" -s output.hgrm="$out/h.hgrm" 2>"$out/err" ||
	fail "hgrm run exited $?: $(cat "$out/err")"
printf '#!/bin/sh\ntee "%s/h.gp" | gnuplot\n' "$out" >"$out/gp"
chmod +x "$out/gp"
GNUPLOT="$out/gp" plot_ok "$out/h.png" --figure percentiles "$out/h.json"
awk '/^\$s0 << EOD/ {on = 1; next} /^EOD/ {on = 0} on {print $1, $2}' \
	"$out/h.gp" >"$out/h.fig"
# the figure draws milliseconds once a latency reaches 10 ms (a loaded or
# sanitized run's tail), the hgrm file always microseconds with 3 decimals:
# its rows in the figure's unit, each value within half the hgrm file's
# last digit (the figure prints %.17g), 1/(1 - percentile) to 2 decimals
scale=1
grep -q 'call latency (ms)' "$out/h.gp" && scale=1000
awk '$1 ~ /^[0-9.]+$/ && $4 != "inf" {print $4, $1}' "$out/h.hgrm" >"$out/h.rows"
same_points() { # FIG ROWS
	awk -v s="$scale" 'NR == FNR { x[NR] = sprintf("%.2f", $1); y[NR] = $2; n = NR; next }
		{ m++; d = y[m] * s - $2; if (d < 0) d = -d
		  if (m > n || x[m] != sprintf("%.2f", $1) || d > 0.0005 + 1e-9 * $2) bad = 1 }
		END { exit bad || m != n || n == 0 }' "$1" "$2"
}
same_points "$out/h.fig" "$out/h.rows" ||
	fail "the percentile figure's points are not output.hgrm's rows: $(diff "$out/h.fig" "$out/h.rows" | head -5)"

# 5b. a grid of three keys (repeated --sweep), one file: x its last
#     numeric key, a colour per mode (a key of plot's own), a dash per
#     compression (a key it has not: named "grpc.compression=...")
$TFGB latency $base -s job.warmup=0s -s job.duration=$(slow 100)ms \
	--sweep job.mode=serialized,non-serialized --sweep grpc.compression=none,gzip \
	--sweep payload.iovecs=1,2 -f json -o "$out/grid.json" 2>"$out/err" ||
	fail "grid exited $?: $(cat "$out/err")"
plot_ok "$out/grid.png" "$out/grid.json"
plot_ok "$out/grid.svg" "$out/grid.json"
in_svg "$out/grid.svg" "by iovec count and mode, grpc.compression" "iovec count (payload.iovecs)" \
	">serialized, grpc.compression=none<" ">non-serialized, grpc.compression=gzip<" \
	"stroke-dasharray"
[ "$(grep -o '>[a-z-]*serialized, grpc.compression=[a-z]*<' "$out/grid.svg" | sort -u | wc -l)" = 4 ] ||
	fail "not 4 series of mode and compression in $out/grid.svg"
# its series close together: a linear y axis; the serialized ones made 30
# times slower (a large model's steps beside a small one's): a log y axis,
# tics as powers of ten (#42)
grep -qF 'dy="-6.00px">' "$out/grid.svg" && fail "grid.svg: a log y axis for series close together"
need_py json python3
$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
for p, r in zip(d["sweep"]["points"], d["results"]):
    if p[0] == "serialized":
        r["latency_us"] = {k: v * 30 for k, v in r["latency_us"].items()}
json.dump(d, open(sys.argv[2], "w"))' "$out/grid.json" "$out/grid30.json" || fail "no grid30.json"
plot_ok "$out/grid30.svg" "$out/grid30.json"
grep -qF 'dy="-6.00px">' "$out/grid30.svg" || fail "grid30.svg: no log y axis for series 30 times apart"

# 6. refusals: exit 2 and one line naming the file
refuse() { # WHAT PATTERN ARGS...
	what=$1 pattern=$2
	shift 2
	rc=0
	$TFGB plot "$@" >"$out/msg" 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "$what: exit $rc, not 2: $(cat "$out/msg")"
	[ "$(wc -l <"$out/msg")" = 1 ] || fail "$what: not one line: $(cat "$out/msg")"
	grep -q -- "$pattern" "$out/msg" || fail "$what: no '$pattern' in: $(cat "$out/msg")"
	ls "$out/x.png" "$out"/x.png.tmp-* >/dev/null 2>&1 && fail "$what: a figure was written"
	return 0
}
printf 'not,a,result\n1,2,3\n' >"$out/junk.csv"
$TFGB bandwidth $base -f json -o "$out/bw.json" 2>"$out/err" ||
	fail "bandwidth exited $?: $(cat "$out/err")"
refuse "no -o" "-o FIGURE.png" "$out/size.json"
refuse "a pdf" "PNG or SVG" -o "$out/x.pdf" "$out/size.json"
refuse "no files" "needs result files" -o "$out/x.png"
refuse "not a result" "junk.csv' is not a tfgb result" -o "$out/x.png" "$out/junk.csv"
refuse "two benchmarks" "and '.*bw.json' bandwidth" -o "$out/x.png" "$out/lat-grpc.json" "$out/bw.json"
refuse "a sweep and a run" "a sweep of payload.size" -o "$out/x.png" "$out/lat-grpc.json" \
	"$out/size.json"
refuse "one result twice" "alike in every key" -o "$out/x.png" "$out/lat-grpc.json" \
	"$out/lat-grpc.json"
refuse "lines on schemes" "not a number" -o "$out/x.png" --figure lines --x scheme \
	"$out"/rep-grpc.json "$out"/lat-grpc.json
refuse "a bad metric" "must be one of" -o "$out/x.png" --metric p42 "$out/size.json"
refuse "percentiles of a CSV" "size.csv' records no latency histogram" -o "$out/x.png" \
	--figure percentiles "$out/size.csv"
refuse "a whisker above p99" "needs a latency below it" -o "$out/x.png" --metric p999 \
	--errors p99 "$out/size.json"

# 7. no gnuplot, or one that fails: exit 1, nothing written
rc=0
PATH=/nonexistent $TFGB plot -o "$out/x.png" "$out/size.json" >"$out/msg" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "without gnuplot: exit $rc, not 1: $(cat "$out/msg")"
grep -q "gnuplot-nox" "$out/msg" || fail "without gnuplot: no package named: $(cat "$out/msg")"
rc=0
GNUPLOT=false $TFGB plot -o "$out/x.png" "$out/size.json" >"$out/msg" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "gnuplot failed" "$out/msg" ||
	fail "a failing gnuplot: exit $rc, $(cat "$out/msg")"
ls "$out/x.png" "$out"/x.png.tmp-* >/dev/null 2>&1 && fail "a failed gnuplot left a file"

echo "ok"
