#!/bin/sh
# bench/grpc_knobs.sh - the gRPC settings table: PS throughput over gRPC as
# tfgb ships it, as TensorFlow configures it (grpc.preset = tensorflow), and
# with candidate [grpc] settings, each against the socket transport in the
# same round.
#
# For P x W in 1x1 and 2x3 and two payloads, the default job's (10 iovecs,
# 3176488 B) and 1 x 10 B, every round runs `tfgb throughput` (the
# one-machine launcher, rpc = push, inflight 1) once per setting: socket,
# grpc as shipped, grpc preset tensorflow, then each candidate of -s (a
# list of space-free "KEY=VALUE,KEY=VALUE" settings of [grpc]).  It prints
# one row per payload, configuration and setting: the median RPC/s over
# rounds (lowest-highest), the median of each round's ratio to that
# round's socket run, and the ratio's range; then, per payload and
# configuration, the candidate with the highest median ratio ("best").
# Then, per round and setting, a ResNet-50 training run of 2 PSs x 3 workers
# (examples/train-resnet50.ini; payload "resnet50-step"): the median step
# time (its p50 in ms), its ratio to socket's (lower is better here), and
# the best candidate is the lowest.
# -p counts too (perf stat, inherited by the launcher's PS and workers):
# system calls and context switches per call, the whole run (start-up and
# drain included) over its warm-up and window calls, so that a difference
# between two settings shows as a count as well as a rate; medians over
# rounds.  The start-up's few thousand system calls weigh on runs of few
# calls (the default payload at 1x1): compare rows of one payload only.
#
# Usage (from anywhere; it runs from the top of the tree):
#   bench/grpc_knobs.sh [-r ROUNDS] [-w WARMUP] [-d DURATION] [-c LIST] [-s "CAND ..."] [-p] [-k] [-T]
#   -r rounds (default 3), -w warm-up (default 1s), -d measured window
#   (default 3s), -c the P x W list (default "1x1 2x3"), -s the candidates
#   (default below), -p count with perf, -k keep the raw outputs, -T
#   leaves out the training rows.
# Needs ./tfgb (it runs `make tfgb`) and /usr/bin/python3.
# Exit status 0, 1 when a run failed, 2 on bad arguments.  Everything it
# starts is stopped when it exits, however it exits.  On a machine shared
# with other work the RPC/s move from round to round: read the ratios,
# whose two runs ran next to each other.

TFGB=./tfgb
JOB=conf/tfgb.ini
ROUNDS=3
WARM=1s
DUR=3s
CONFIGS="1x1 2x3"
# more connections per PS; bigger TCP reads; no BDP probing with the
# largest window and frames; the last two together
CANDS="channels=2 read_chunk=1048576,read_chunk_min=65536,read_chunk_max=8388608
bdp_probe=no,stream_window=16777216,max_frame_size=16777215
channels=2,read_chunk=1048576,read_chunk_min=65536,read_chunk_max=8388608,bdp_probe=no,stream_window=16777216,max_frame_size=16777215"
KEEP=0
PERF=0
TRAIN=1

usage() {
	sed -n '/^# Usage/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while getopts r:w:d:c:s:pkTh opt; do
	case "$opt" in
	r) ROUNDS=$OPTARG ;;
	w) WARM=$OPTARG ;;
	d) DUR=$OPTARG ;;
	c) CONFIGS=$OPTARG ;;
	s) CANDS=$OPTARG ;;
	k) KEEP=1 ;;
	p) PERF=1 ;;
	T) TRAIN=0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
case "$ROUNDS" in ''|*[!0-9]*|0) usage ;; esac
for c in $CONFIGS; do
	case "$c" in [1-9]*x[1-9]*) ;; *) usage ;; esac
	case "${c%x*}${c#*x}" in *[!0-9]*) usage ;; esac
done

cd "$(dirname "$0")/.." || { echo "bench/grpc_knobs.sh: cannot enter the top of the tree" >&2; exit 1; }
ME=bench/grpc_knobs.sh
# die, free_ports (tests/lib.sh, which sets PY), and $out with the run in
# progress ($cur) stopped on exit (its servers die with it: PR_SET_PDEATHSIG)
. bench/lib.sh
[ -x "$PY" ] || die "'$PY' is needed for the JSON and the table"
if [ "$PERF" = 1 ]; then
	perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1 ||
		die "-p needs perf (Debian package linux-perf) with the raw_syscalls tracepoint"
fi
count=
bench_tmpdir tfgb-grpc-knobs
bench_host_start

make -s tfgb >"$out/make.log" 2>&1 || die "make tfgb failed: $(cat "$out/make.log")"

# One launcher run: NAME P W [options...]; the JSON in $out/NAME.json.
run() {
	name=$1 np=$2 nw=$3
	shift 3
	base=$(free_ports $((np + 1))) || die "no $((np + 1)) free consecutive ports"
	[ "$PERF" = 1 ] && count="perf stat -x, -o $out/$name.perf -e raw_syscalls:sys_enter -e context-switches --"
	$count $TFGB throughput -c "$JOB" -q -f json -s cluster.ps=127.0.0.1:"$base" \
		-s cluster.ps_count="$np" -s cluster.workers="$nw" -s job.warmup="$WARM" \
		-s job.duration="$DUR" -s job.timeout=30s "$@" \
		>"$out/$name.json" 2>"$out/$name.err" &
	cur=$!
	wait "$cur" || die "run $name failed: $(cat "$out/$name.err")"
	cur=''
}

# One ResNet-50 training run, 2 PSs x 3 workers (examples/train-resnet50.ini:
# 2 warm-up steps, 10 measured): NAME [options...]; the JSON in $out/NAME.json.
run_train() {
	name=$1
	shift
	base=$(free_ports 3) || die "no 3 free consecutive ports"
	$TFGB train -c examples/train-resnet50.ini -q -f json -s cluster.ps=127.0.0.1:"$base" \
		-s job.timeout=60s "$@" >"$out/$name.json" 2>"$out/$name.err" &
	cur=$!
	wait "$cur" || die "run $name failed: $(cat "$out/$name.err")"
	cur=''
}

# The -s options of one setting: socket, shipped, tensorflow or a candidate.
opts() {
	case "$1" in
	socket) echo "-s job.transport=socket" ;;
	shipped) echo "-s job.transport=grpc" ;;
	tensorflow) echo "-s job.transport=grpc -s grpc.preset=tensorflow" ;;
	*) echo "-s job.transport=grpc $(echo "$1" | tr ',' '\n' | sed 's/^/-s grpc./' | tr '\n' ' ')" ;;
	esac
}

small="-s payload.iovecs=1 -s payload.categories=small"
echo "bench/grpc_knobs.sh: $ROUNDS rounds, warm-up $WARM, window $DUR, PS x workers: $CONFIGS" >&2
res=$out/results
: >"$res"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	echo "  round $r/$ROUNDS" >&2
	for p in default 1x10B; do
		for c in $CONFIGS; do
			i=0
			for s in socket shipped tensorflow $CANDS; do
				i=$((i + 1))
				pl=
				[ "$p" = default ] || pl=$small
				# shellcheck disable=SC2046,SC2086 # option lists
				run "$p-$c-$i-$r" "${c%x*}" "${c#*x}" $pl $(opts "$s")
				$PY -c 'import json, os, sys
d = json.load(open(sys.argv[1]))
n = d["calls"] + d["warmup_calls"]
sc = cs = -1
perf = sys.argv[1][:-5] + ".perf"
if os.path.exists(perf):
    for l in open(perf):
        f = l.split(",")
        if len(f) > 2 and f[0].isdigit():
            if f[2] == "raw_syscalls:sys_enter": sc = int(f[0]) / n
            if f[2] == "context-switches": cs = int(f[0]) / n
print(*sys.argv[2:], d["throughput"]["rpc_per_s"], sc, cs)' \
					"$out/$p-$c-$i-$r.json" "$p" "$c" "$r" "$s" >>"$res" ||
					die "cannot read $out/$p-$c-$i-$r.json"
			done
		done
	done
	# the training step: its p50 in ms, lower is better
	if [ "$TRAIN" = 1 ]; then
		i=0
		for s in socket shipped tensorflow $CANDS; do
			i=$((i + 1))
			# shellcheck disable=SC2046 # option lists
			run_train "train-$i-$r" $(opts "$s")
			$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(*sys.argv[2:], d["train"]["step_ms"]["p50"], -1, -1)' \
				"$out/train-$i-$r.json" resnet50-step 2x3 "$r" "$s" >>"$res" ||
				die "cannot read $out/train-$i-$r.json"
		done
	fi
	r=$((r + 1))
done

bench_host_line
$PY - "$res" <<'EOF'
import statistics as st, sys
runs, counts = {}, {}
for line in open(sys.argv[1]):
    p, c, r, s, rps, sc, cs = line.split()
    runs.setdefault((p, c), {}).setdefault(s, {})[r] = float(rps)
    counts.setdefault((p, c, s), []).append((float(sc), float(cs)))
print("%-13s %-5s %-44s %26s %7s %13s %9s %8s" % ("payload", "PxW", "setting",
      "RPC/s or step ms (min-max)", "ratio", "ratio range", "sys/call", "cs/call"))
for (p, c), by in runs.items():
    best = None
    for s, rs in by.items():
        v = list(rs.values())
        # a step time: grpc / socket (lower is better); a rate: the same
        ratios = [rs[r] / by["socket"][r] for r in rs if by["socket"].get(r)]
        step = p.endswith("-step")
        m = st.median(ratios)
        k = counts[(p, c, s)]
        sc, cs = st.median(x[0] for x in k), st.median(x[1] for x in k)
        print("%-13s %-5s %-44s %10.0f (%6.0f-%6.0f) %7.2f %6.2f-%-6.2f %9s %8s" % (
            p, c, s[:44], st.median(v), min(v), max(v), m, min(ratios), max(ratios),
            "%.1f" % sc if sc >= 0 else "-", "%.2f" % cs if cs >= 0 else "-"))
        if s not in ("socket", "shipped", "tensorflow") and (
                best is None or (m < best[1] if step else m > best[1])):
            best = (s, m)
    if best:
        print("%-13s %-5s best: %s (%.2f x socket)" % (p, c, best[0], best[1]))
EOF
