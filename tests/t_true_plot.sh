#!/bin/sh
# t_true_plot.sh - tfgb plot against hostile input: options that do not fit
# together, histograms that are not tfgb's (counts that do not add up,
# buckets out of order or not its own, wrong types, null), results with
# null figures, text from the results and the command line that gnuplot
# would read as markup or as a format (_ ^ { } @ %), output paths that
# cannot be written, a gnuplot that writes nothing, is killed, complains or
# hangs until Ctrl-C, and the figure's mode under three umasks.  Each case
# is judged by its exit status, its message (one line when it fails) and
# its leftovers: no figure and no temporary file beside it after a failure,
# no gnuplot left running, nothing of plot's in /tmp/tfgb-UID.
# Prints "cases: N".  Skips without gnuplot.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
command -v gnuplot >/dev/null 2>&1 || skip "no gnuplot (Debian: gnuplot-nox)"
[ -x "$PY" ] || skip "needs $PY (Debian package python3)"

port=$(free_port)
out=$(mktemp -d)
figs=$out/figs
cleanup() {
	for p in $(pids_matching "$out/"); do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

base="-s cluster.ps=127.0.0.1:$port -s job.warmup=$(slow 100)ms -s job.duration=$(slow 300)ms -q"
small="-s payload.scheme=custom -s payload.iovec=4KiB -s payload.iovecs=1"
$TFGB latency $base $small -f json -o "$out/a.json" 2>"$out/err" ||
	fail "latency exited $?: $(cat "$out/err")"
$TFGB latency $base $small -f csv -o "$out/a.csv" 2>"$out/err" ||
	fail "latency (csv) exited $?: $(cat "$out/err")"

# edit NAME PYTHON: a copy of a.json as NAME.json, d (the result) changed
# by the Python statements
edit() {
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
h = d["histogram"]
exec(sys.argv[2])
json.dump(d, open(sys.argv[3], "w"))' "$out/a.json" "$2" "$out/$1.json" || fail "edit $1"
}

edit sock 'd["transport"] = "socket"'
edit count 'h["count"] += 1'
edit order 'h["buckets"].reverse(); h["buckets"].insert(0, h["buckets"][-1]) if len(h["buckets"]) < 2 else None'
edit notours 'h["buckets"][0][0] += 1'
edit zero 'h["buckets"][0][2] = 0'
edit huge 'h["buckets"][-1][1] = 1e300'
edit strcount 'h["count"] = "12"'
edit histstr 'd["histogram"] = "buckets"'
edit histnull 'd["histogram"] = None'
edit empty 'd.update(status="empty", calls=0, latency_us=None, transport="socket"); d["histogram"].update(count=0, min_ns=0, max_ns=0, sum_ns=0, buckets=[])'
edit p99null 'd["latency_us"]["p99"] = None; d["transport"] = "socket"'
edit p50null 'd["latency_us"]["p50"] = None; d["transport"] = "verbs"'
edit markup 'd["transport"] = "gr_pc^{2}@x%d"'
edit coinc 'd["transport"] = "socket"; d["payload"]["scheme"] = "uniform"'
cp "$out/a.json" "$out/f_{1}^%d.json"
cp "$out/a.json" "$out/g@2.json"

# a gnuplot that writes nothing, one killed by a signal, one that warns,
# one that hangs; each named by its path (found again by pids_matching)
mk() { printf '#!/bin/sh\n%s\n' "$2" >"$out/$1" && chmod +x "$out/$1"; }
mk gp-nothing 'cat >/dev/null; exit 0'
mk gp-killed 'kill -9 $$'
mk gp-warns 'echo "warning: look here" >&2; exec gnuplot'
mk gp-hangs 'exec sleep 60'
mk gp-tee "tee '$out/script.gp' | gnuplot"

cases=0
# check WHAT STATUS PATTERN ARGS...: `tfgb plot ARGS` exits STATUS and its
# stderr matches PATTERN (grep -E; "-": stderr empty); a failure says one
# line and leaves nothing in $figs; no gnuplot of ours is left running
check() {
	what=$1 want=$2 pattern=$3
	shift 3
	cases=$((cases + 1))
	rm -rf "$figs" && mkdir "$figs" || fail "cannot make $figs"
	rc=0
	$TFGB plot "$@" >"$out/stdout" 2>"$out/stderr" || rc=$?
	if [ "$rc" != "$want" ]; then
		bad "$what: exit $rc, not $want: $(cat "$out/stderr")"
	elif [ "$pattern" = - ] && [ -s "$out/stderr" ]; then
		bad "$what: said $(cat "$out/stderr")"
	elif [ "$pattern" != - ] && ! grep -qE -- "$pattern" "$out/stderr"; then
		bad "$what: no '$pattern' in: $(cat "$out/stderr")"
	elif [ "$want" != 0 ] && [ "$(wc -l <"$out/stderr")" != 1 ]; then
		bad "$what: not one line: $(cat "$out/stderr")"
	elif [ "$want" != 0 ] && [ -n "$(ls -A "$figs")" ]; then
		bad "$what: left $(ls -A "$figs")"
	elif ls "$figs" | grep -q '\.tmp-'; then
		bad "$what: left a temporary file: $(ls "$figs")"
	elif [ -n "$(pids_matching "$out/gp-")" ]; then
		bad "$what: a gnuplot of ours is still running"
	else
		echo "ok: $what"
	fi
}
fig=$figs/x.png
svg=$figs/x.svg

# 1. options that do not fit
check "--figure pie" 2 "--figure pie: must be one of lines, bars, percentiles" \
	-o "$fig" --figure pie "$out/a.json"
check "--errors p95" 2 "--errors p95: must be one of minmax, stddev, p99" \
	-o "$fig" --errors p95 "$out/a.json"
check "p99 whisker on p999" 2 "needs a latency below it .*not --metric p999" \
	-o "$fig" --metric p999 --errors p99 "$out/a.json"
check "p99 whisker on RPC/s" 2 "not --metric rpc" -o "$fig" --metric rpc --errors p99 "$out/a.json"
check "percentiles with --metric" 2 "^tfgb: --metric: --figure percentiles draws every" \
	-o "$fig" --figure percentiles --metric p50 "$out/a.json"
check "percentiles with --x" 2 "^tfgb: --x: --figure percentiles" \
	-o "$fig" --figure percentiles --x transport "$out/a.json"
check "percentiles with --errors" 2 "^tfgb: --errors: --figure percentiles" \
	-o "$fig" --figure percentiles --errors minmax "$out/a.json"
check "--figure without a value" 2 "." -o "$fig" "$out/a.json" --figure

# 2. histograms that are not tfgb's, or none
for h in count order notours zero huge strcount histstr; do
	check "histogram: $h" 2 "'$out/$h.json': \"histogram\" is not tfgb's" \
		-o "$fig" --figure percentiles "$out/a.json" "$out/$h.json"
done
check "histogram: null" 2 "'$out/histnull.json' records no latency histogram" \
	-o "$fig" --figure percentiles "$out/a.json" "$out/histnull.json"
check "percentiles of a CSV" 2 "'$out/a.csv' records no latency histogram \(tfgb's CSV" \
	-o "$fig" --figure percentiles "$out/a.csv"
check "percentiles, no call at all" 2 "'$out/empty.json': no call measured in any result" \
	-o "$fig" --figure percentiles "$out/empty.json"
check "percentiles, one result twice" 2 "alike in every key" \
	-o "$fig" --figure percentiles "$out/a.json" "$out/a.json"
# the histograms are read only for the percentile figure
check "bars ignore a broken histogram" 0 - -o "$fig" "$out/count.json" "$out/sock.json"

# 3. an empty result beside a real one: a legend entry alone, never a 0
check "percentiles with an empty result" 0 - \
	-o "$svg" --figure percentiles "$out/a.json" "$out/empty.json"
grep -qF "socket (empty: no call)" "$svg" || bad "no legend entry for the empty result"
# second LINE of $s0 (one series, the second file's bar), or "none"
second() {
	awk '/^\$s0 << EOD/ {on = 1; next} on && /^EOD/ {exit} on && ++n == 2 {print "[" $0 "]"}' \
		"$out/script.gp" | grep . || echo none
}
GNUPLOT=$out/gp-tee check "a null p99: no whisker" 0 - -o "$fig" "$out/a.json" "$out/p99null.json"
second | grep -qE '^\[[0-9.e+-]+ [0-9.e+-]+ nan nan nan\]$' ||
	bad "a null p99 drawn as a whisker: $(second)"
GNUPLOT=$out/gp-tee check "a null p50: no bar" 0 - -o "$fig" "$out/a.json" "$out/p50null.json"
[ "$(second)" = "[]" ] || bad "a null p50 drawn: $(second)"

# a transport that happens to follow from the scheme on x is still named
check "a coincidence not hidden" 0 - -o "$svg" "$out/a.json" "$out/coinc.json"
grep -qF ">socket<" "$svg" && grep -qF ">grpc<" "$svg" ||
	bad "the transports of a socket-uniform and a gRPC-custom result are not named"

# 4. markup and formats from the results and the command line, drawn as text
check "markup in a transport" 0 - -o "$svg" "$out/a.json" "$out/markup.json"
grep -qF ">gr_pc^{2}@x%d<" "$svg" || bad "the transport's text was read as markup or a format"
check "markup in file names" 0 - -o "$svg" "$out/f_{1}^%d.json" "$out/g@2.json"
grep -qF ">f_{1}^%d<" "$svg" && grep -qF ">g@2<" "$svg" || bad "a file name was read as markup"
check "markup in --title" 0 - -o "$svg" --title 'T_{x}^2 @a %d %s' "$out/a.json"
grep -qF "T_{x}^2 @a %d %s" "$svg" || bad "--title was read as markup"
check "markup in --title, percentiles" 0 - -o "$svg" --figure percentiles --title 'a_b^c' \
	"$out/a.json" "$out/markup.json"
grep -qF "a_b^c" "$svg" && grep -qF ">gr_pc^{2}@x%d<" "$svg" || bad "percentiles: text read as markup"

# 5. where the figure goes
check "a directory that does not exist" 2 "-o $figs/no/x.png: cannot write the figure there: folder '$figs/no'" \
	-o "$figs/no/x.png" "$out/a.json"
mkdir "$out/d.png"
check "a directory named like the figure" 2 "-o $out/d.png: cannot write the figure there: it is a directory" \
	-o "$out/d.png" "$out/a.json"
ls "$out" | grep -q '^d\.png\.tmp-' && bad "a temporary file left beside $out/d.png"
check "a name with a quote and a backslash" 0 - -o "$figs/q\"b\\c.png" "$out/a.json"
[ -s "$figs/q\"b\\c.png" ] || bad "no figure named q\"b\\c.png"
check "a name with a newline" 2 "control character" -o "$figs/a
b.png" "$out/a.json"
check "a PDF" 2 "PNG or SVG" -o "$figs/x.pdf" "$out/a.json"
for m in 022:644 077:600 002:664; do
	(umask "${m%:*}" && $TFGB plot -o "$fig" "$out/a.json") 2>"$out/stderr" ||
		bad "umask ${m%:*}: exit $?: $(cat "$out/stderr")"
	[ "$(stat -c %a "$fig")" = "${m#*:}" ] ||
		bad "umask ${m%:*}: the figure is $(stat -c %a "$fig"), not ${m#*:}"
	rm -f "$fig"
	cases=$((cases + 1))
done

# 6. gnuplot misbehaving
GNUPLOT=$out/gp-nothing check "gnuplot writes nothing" 1 "gnuplot wrote no figure" \
	-o "$fig" "$out/a.json"
GNUPLOT=$out/gp-killed check "gnuplot killed" 1 "gnuplot failed: .*killed by signal 9" \
	-o "$fig" "$out/a.json"
GNUPLOT=$out/gp-warns check "gnuplot warns" 0 "gnuplot says: warning: look here" \
	-o "$fig" "$out/a.json"
GNUPLOT=$out/gp-warns check "gnuplot warns, -q" 0 - -q -o "$fig" "$out/a.json"
GNUPLOT=$out/no-such-gnuplot check "no gnuplot there" 1 "no gnuplot to run .*gnuplot-nox" \
	-o "$fig" "$out/a.json"
# Ctrl-C while gnuplot hangs: killed, nothing left, exit 1 at once
cases=$((cases + 1))
rm -rf "$figs" && mkdir "$figs"
GNUPLOT=$out/gp-hangs $TFGB plot -o "$fig" "$out/a.json" 2>"$out/stderr" &
pid=$!
for i in $(seq 100); do
	[ -n "$(pids_matching "$out/gp-hangs")" ] && break
	sleep 0.05
done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
if [ "$rc" != 1 ]; then
	bad "Ctrl-C: exit $rc, not 1: $(cat "$out/stderr")"
elif ! grep -q "^tfgb: plot: interrupted: gnuplot killed, no figure written$" "$out/stderr"; then
	bad "Ctrl-C: $(cat "$out/stderr")"
elif [ -n "$(ls -A "$figs")" ] || [ -n "$(pids_matching "$out/gp-hangs")" ]; then
	bad "Ctrl-C: left $(ls -A "$figs") $(pids_matching "$out/gp-hangs")"
else
	echo "ok: Ctrl-C while gnuplot runs"
fi

# nothing of plot's under tfgb's runtime directory
ls "/tmp/tfgb-$(id -u)" 2>/dev/null | grep -i plot && bad "plot left files in /tmp/tfgb-$(id -u)"
echo "cases: $cases"
[ "$problems" = 0 ] || fail "$problems problem(s)"
echo "ok"
