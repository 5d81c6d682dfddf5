#!/bin/sh
# tfgb plot on the results whose figures are no calls (#41): real runs of
# tfgb collective (3 ranks over socket on loopback: all-reduce by ring and
# by rhd, all-gather by ring) drawn as nccl-tests' figure, busbw against
# the buffer size on a log2 axis, a line per (op, algorithm), the ranks and
# host in the title; then tfgb train's parameter-server strategy against
# its all-reduce strategy, step time against a cluster.workers sweep, a
# line per strategy, and a sweep of train.strategy itself as bars.  The
# gnuplot script is read back (a GNUPLOT that keeps it): the series, the
# log axis, the labels, and every drawn value equal to the JSON's.  Then
# the refusals: exit 2 and one line.  Runs without gnuplot too (the
# stand-in writes the figure's file); with gnuplot, the SVG is drawn.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3

base=$(free_ports 4) || fail "no free ports"
port=$(free_port)
out=$(mktemp -d)
cleanup_on_exit "$out"

# a gnuplot that keeps its script in $out/gp.txt (and draws it, if there is
# a gnuplot; else writes the figure's file as gnuplot would)
cat >"$out/gp" <<EOF
#!/bin/sh
cat >"$out/gp.txt"
if command -v gnuplot >/dev/null 2>&1; then exec gnuplot <"$out/gp.txt"; fi
sed -n 's/^set output "\(.*\)"\$/\1/p' "$out/gp.txt" | while read -r f; do echo figure >"\$f"; done
EOF
chmod +x "$out/gp"

# plot_ok FIGURE ARGS...: tfgb plot succeeds, without a word
plot_ok() {
	fig=$1
	shift
	GNUPLOT="$out/gp" $TFGB plot -o "$fig" "$@" 2>"$out/err" ||
		fail "plot -o $fig $* exited $?: $(cat "$out/err")"
	[ -s "$out/err" ] && fail "plot -o $fig $*: $(cat "$out/err")"
	[ -s "$fig" ] || fail "no $fig"
}
# in_gp TEXT...: each TEXT is in the script
in_gp() {
	for s in "$@"; do
		grep -qF -- "$s" "$out/gp.txt" || fail "the script has no '$s': $(cat "$out/gp.txt")"
	done
}
# refuse WHAT PATTERN ARGS...: exit 2, one line matching PATTERN, no figure
refuse() {
	what=$1 pattern=$2
	shift 2
	rc=0
	$TFGB plot -o "$out/x.png" "$@" >"$out/msg" 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "$what: exit $rc, not 2: $(cat "$out/msg")"
	[ "$(wc -l <"$out/msg")" = 1 ] || fail "$what: not one line: $(cat "$out/msg")"
	grep -q -- "$pattern" "$out/msg" || fail "$what: no '$pattern' in: $(cat "$out/msg")"
	[ -e "$out/x.png" ] && fail "$what: a figure was written"
	return 0
}
# same FIGURE.json... : each series' points in the script are the JSON's
# (expect.py prints "title|x|y|lo|hi" per point; the script's datablocks
# are matched to their titles from the plot line)
same() {
	$PY - "$out/gp.txt" "$@" <<'PY' || fail "the drawn values are not the results': $(cat "$out/gp.txt")"
import json, re, sys
gp = open(sys.argv[1]).read()
blocks = {m.group(1): [l.split() for l in m.group(2).strip().splitlines()]
          for m in re.finditer(r"^\$(s\d+) << EOD\n(.*?)^EOD", gp, re.S | re.M)}
titles = dict(re.findall(r"\$(s\d+) using 1:2 with \S+ .*?title \"([^\"]*)\"", gp))
want = eval(sys.argv[2])  # {title: [(x, y, lo, hi), ...]}
assert sorted(titles.values()) == sorted(want), (titles, list(want))
for s, t in titles.items():
    got = [tuple(float(v) for v in row[:4]) for row in blocks[s]]
    w = sorted(want[t])
    assert len(got) == len(w), (t, got, w)
    for g, e in zip(sorted(got), w):
        for a, b in zip(g, e):
            assert (a != a and b != b) or abs(a - b) <= 1e-9 * max(1.0, abs(b)), (t, g, e)
PY
}

# 1. collectives: 3 ranks, 8 B to 32 KiB by 8
J="-s job.transport=socket -s collective.ranks=127.0.0.1:$base -s cluster.workers=3"
J="$J -s job.timeout=$(slow 20)s -q -s collective.min_bytes=8 -s collective.max_bytes=32KiB"
J="$J -s collective.step_factor=8 -s collective.iterations=5 -s collective.warmup_iterations=1"
for c in allreduce:ring allreduce:rhd allgather:ring; do
	$TFGB collective $J -s collective.op=${c%:*} -s collective.algorithm=${c#*:} -f json \
		-o "$out/c-${c%:*}-${c#*:}.json" 2>"$out/err" || fail "collective $c exited $?: $(cat "$out/err")"
done
host=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["environment"]["hostname"])' \
	"$out/c-allreduce-ring.json")
# expect FIELD SCALE LO HI: the series of the three results as same() wants them
expect() {
	$PY - "$1" "$2" "$3" "$4" "$out"/c-*.json <<'PY'
import json, sys
f, lo, hi = sys.argv[1], sys.argv[3], sys.argv[4]
def get(r, p):
    for k in p.split("."):
        r = r[k]
    return r
want = {}
for p in sys.argv[5:]:
    d = json.load(open(p))
    t = "%s, %s" % (d["collective"]["op"], d["collective"]["algorithm"])
    want[t] = [(r["bytes"], get(r, f), get(r, f) if lo != "-" else float("nan"),
                get(r, hi) if hi != "-" else float("nan")) for r in d["collective"]["sizes"]]
print(repr(want).replace("nan", "float('nan')"))
PY
}
plot_ok "$out/busbw.svg" "$out"/c-*.json
in_gp "set logscale x 2" 'set xlabel "buffer size (bytes a rank, float32)"' \
	'set ylabel "bus bandwidth (GB/s, 1 GB = 10^{9} bytes)"' \
	"TF-gRPC-Collective: bus bandwidth by buffer size and collective operation, algorithm; 3 ranks on $host" \
	"all runs: socket" "each point: 5 operations" '"8 B" 8' '"32 KiB" 32768'
[ "$(grep -c '^\$s[0-9]* << EOD' "$out/gp.txt")" = 3 ] || fail "not 3 series: $(cat "$out/gp.txt")"
same "$(expect busbw_GBps 1 - -)"
# the time of an operation: its median, a whisker up to its p99
plot_ok "$out/p50.svg" --metric p50 "$out"/c-*.json
in_gp 'set ylabel "median time per operation (' "whiskers: up to the 99th percentile"
scale=1
grep -q 'time per operation (ms)' "$out/gp.txt" && scale=1000
[ $scale = 1 ] && same "$(expect time_us.p50 1 time_us.p50 time_us.p99)"
plot_ok "$out/algbw.svg" --metric algbw "$out"/c-*.json
same "$(expect algbw_GBps 1 - -)"
# the ranks differ: a line per rank count, named as ranks
mkdir "$out/r2"
$TFGB collective $J -s cluster.workers=2 -f json -o "$out/r2/c-2.json" 2>"$out/err" ||
	fail "collective over 2 ranks exited $?: $(cat "$out/err")"
plot_ok "$out/ranks.svg" "$out/c-allreduce-ring.json" "$out/r2/c-2.json"
in_gp "bus bandwidth by buffer size and ranks" 'title "2 ranks"' 'title "3 ranks"' \
	"all runs: socket, allreduce, ring, host $host"
echo "ok: busbw, algbw and time against the size, a line per op and algorithm, or rank count"

# 2. the training strategies: step time against the workers
T="-s cluster.ps=127.0.0.1:$port -s job.transport=socket -s train.model=mnist_mlp"
T="$T -s train.steps=3 -s train.warmup_steps=1 -s job.timeout=$(slow 20)s -q"
for s in ps allreduce; do
	$TFGB train $T -s train.strategy=$s --sweep cluster.workers=2,3 -f json -o "$out/t-$s.json" \
		2>"$out/err" || fail "train $s sweep exited $?: $(cat "$out/err")"
done
plot_ok "$out/strategy.svg" "$out/t-ps.json" "$out/t-allreduce.json"
in_gp 'set xlabel "workers (cluster.workers)"' 'set ylabel "mean step time (ms)"' \
	"TF-gRPC-Train: mean step time by workers and training strategy" \
	"each point: " "step time: parameter server, each worker's step; all-reduce, the slowest worker's" \
	'title "parameter server"' 'title "all-reduce, ring"'
want=$($PY - "$out/t-ps.json" "$out/t-allreduce.json" <<'PY'
import json, sys
ps, ar = (json.load(open(p)) for p in sys.argv[1:3])
print(repr({
    "parameter server": [(v, r["latency_us"]["avg"] / 1e3, r["latency_us"]["avg"] / 1e3,
                          r["latency_us"]["p99"] / 1e3) for v, r in zip(ps["sweep"]["values"], ps["results"])],
    "all-reduce, ring": [(v, r["train"]["step_ms"]["mean"], r["train"]["step_ms"]["mean"],
                          r["train"]["step_ms"]["p99"]) for v, r in zip(ar["sweep"]["values"], ar["results"])]}))
PY
) || fail "no expected values"
same "$want"
# one sweep of the strategy itself: bars, a group per strategy
$TFGB train $T -s cluster.workers=2 --sweep train.strategy=ps,allreduce -f json -o "$out/t-both.json" \
	2>"$out/err" || fail "train.strategy sweep exited $?: $(cat "$out/err")"
plot_ok "$out/both.svg" "$out/t-both.json"
in_gp 'set xlabel "training strategy (train.strategy)"' '"ps" 0' '"allreduce" 1' "with boxes"
echo "ok: parameter server against all-reduce, against the workers and as bars"

# 3. refusals
# the all-reduce strategy on the pair's link is refused (ranks are neither
# PSs nor workers); a tfgb before that ran it without a link and recorded
# none: such a sweep, made here from a sweep of the workers, is refused
rc=0
$TFGB train $T -s cluster.workers=2 -s train.strategy=allreduce --sweep network.delay=0ms,1ms \
	-f json -o "$out/t-net.json" 2>"$out/err" || rc=$?
[ "$rc" = 2 ] && grep -q "network.delay = 1ms: \[network\]'s pair joins the PSs to the workers, and ranks are neither" "$out/err" ||
	fail "an all-reduce sweep of the pair's delay: exit $rc: $(cat "$out/err")"
$PY - "$out/t-allreduce.json" "$out/t-net.json" <<'PY' || fail "no old-style sweep"
import json, sys
d = json.load(open(sys.argv[1]))
d["sweep"]["key"] = "network.delay"
d["sweep"]["values"] = ["0ms", "1ms"][:len(d["results"])]
d["results"] = d["results"][:2]
for r in d["results"]:
    r["network"] = None
json.dump(d, open(sys.argv[2], "w"))
PY
refuse "a collective beside training" "collective ones: one figure draws one benchmark" \
	"$out/t-ps.json" "$out/c-allreduce-ring.json"
refuse "a collective's calls/s" "records no throughput" --metric rpc "$out/c-allreduce-ring.json"
refuse "a collective's percentiles" "c-allreduce-ring.json' records no latency histogram" \
	--figure percentiles "$out/c-allreduce-ring.json"
refuse "busbw of a PS" "t-ps.json' records no bus bandwidth" --metric busbw "$out/t-ps.json"
refuse "steps/s of all-reduce" "t-allreduce.json' records no throughput" --metric rpc \
	"$out/t-ps.json" "$out/t-allreduce.json"
refuse "a link all-reduce did not emulate" "records no emulated link" "$out/t-net.json"
$TFGB train $T -s cluster.workers=2 -s train.strategy=allreduce -f json -o "$out/t-one.json" \
	2>"$out/err" || fail "train allreduce exited $?: $(cat "$out/err")"
refuse "a sweep beside a single run" "a single run and .* a sweep of cluster.workers" \
	"$out/t-one.json" "$out/t-ps.json"
echo "ok: refusals"

# 4. a timeline (output.timeline, #44): each worker's step times over its
# steps and, synchronous, its barrier waits: a datablock per worker and
# panel holding the timeline's own durations (ms), in the order run
$TFGB train $T -s cluster.workers=2 -s train.steps=6 -s output.timeline="$out/tl.json" -q \
	>/dev/null 2>"$out/err" || fail "train with a timeline exited $?: $(cat "$out/err")"
plot_ok "$out/tl.svg" "$out/tl.json"
in_gp 'set multiplot layout 2,1 title "tfgb train, parameter server" noenhanced' \
	'set ylabel "step time (ms)"' 'set ylabel "barrier wait (ms)"' 'title "worker 1" noenhanced'
$PY - "$out/tl.json" "$out/gp.txt" <<'PY' || fail "the timeline's figure is not its spans"
import json, re, sys
t = json.load(open(sys.argv[1]))
gp = open(sys.argv[2]).read()
blocks = dict(re.findall(r"\$(\w+) << EOD\n(.*?)EOD\n", gp, re.S))
for w in (0, 1):
    for kind, block in (("step #", "s%d" % w), ("barrier #", "w%d" % w)):
        want = [e["dur"] / 1e3 for e in t["traceEvents"]
                if e["ph"] == "X" and e["pid"] == w and e["tid"] == 0 and e["name"].startswith(kind)]
        got = [float(l.split()[1]) for l in blocks[block].splitlines()]
        assert len(want) == 6 and len(got) == 6, (block, want, got)
        assert all(abs(a - b) < 1e-3 for a, b in zip(want, got)), (block, want, got)
PY
refuse "a timeline with --metric" "is a timeline: it draws each track's step time" --metric p50 \
	"$out/tl.json"
echo "ok: a timeline: each worker's steps and barrier waits"

# 5. a collective's timeline (#44): each rank's operations, one size after
# the other, and below each operation's time in exchanges: the sum of its
# exchanges' spans (thread 1), at the operation's place in the order run
$TFGB collective $J -s collective.max_bytes=64 -s output.timeline="$out/ctl.json" >/dev/null \
	2>"$out/err" || fail "collective with a timeline exited $?: $(cat "$out/err")"
plot_ok "$out/ctl.svg" "$out/ctl.json"
in_gp 'set ylabel "time in exchanges (ms)"' 'title "rank 2" noenhanced'
$PY - "$out/ctl.json" "$out/gp.txt" <<'PY' || fail "the exchanges' figure is not their spans"
import json, re, sys
t = json.load(open(sys.argv[1]))
gp = open(sys.argv[2]).read()
blocks = dict(re.findall(r"\$(\w+) << EOD\n(.*?)EOD\n", gp, re.S))
for r in range(3):
    want = {}
    for e in t["traceEvents"]:
        if e["ph"] == "X" and e["pid"] == r and e["tid"] == 1:
            size = 0 if e["name"].startswith("8 B ") else 1
            x = size * 5 + e["args"]["index"]
            want[x] = want.get(x, 0) + e["dur"] / 1e3
    got = {int(l.split()[0]): float(l.split()[1]) for l in blocks["w%d" % r].splitlines()}
    assert sorted(got) == list(range(10)) == sorted(want), (r, got, want)
    assert all(abs(got[x] - want[x]) < 1e-3 for x in got), (r, got, want)
PY
echo "ok: a collective's timeline: each rank's operations and its time in exchanges"
