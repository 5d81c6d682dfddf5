#!/bin/sh
# bench/allocator.sh - the figures of one job under each job.allocator,
# side by side in one run (tfgb.ini(5), ALLOCATOR).
#
# For each transport (grpc, socket) it measures, with the default job's
# payload (10 iovecs, 3176488 B): latency p50 (tfgb latency), bandwidth MB/s
# (tfgb bandwidth, job.inflight 4) and throughput RPC/s (tfgb throughput,
# 1 PS x 1 worker, rpc push).  Every benchmark starts its own servers, which
# run the same allocator as the worker (the job's), on free 127.0.0.1
# ports.  A round runs every figure once under every allocator, the
# allocators back to back so that they share the machine's state, in an
# order rotated from one round to the next; the table gives the median over
# rounds, and a second one each allocator's median over glibc's of the same
# round (the median of the per-round ratios).  Each run's result must name
# the allocator asked for in every process (environment and allocators),
# or the script stops: a figure is only kept for what really ran.
#
# Usage (from anywhere; it runs from the top of the tree):
#   bench/allocator.sh [-r ROUNDS] [-w WARMUP] [-d DURATION] [-a LIST] [-t LIST] [-k]
#   -r rounds (default 3), -w warm-up (default 1s), -d measured window
#   (default 3s), -a allocators (default "glibc glibc-kept jemalloc
#   tcmalloc mimalloc"), -t transports (default "grpc socket"), -k keep the
#   raw outputs.
# Needs ./tfgb (it runs `make tfgb`), /usr/bin/python3, and the Debian
# packages of the allocators listed (libjemalloc2, libtcmalloc-minimal4,
# libmimalloc2.0: make deps).
# Exit status 0, 1 when a run failed, 2 on bad arguments.  Everything it
# starts is stopped when it exits, however it exits.  On a shared 2-core
# machine read the ratios (neighbouring runs) before the medians.

PY=/usr/bin/python3
TFGB=./tfgb
JOB=conf/tfgb.ini
ROUNDS=3
WARM=1s
DUR=3s
ALLOCS="glibc glibc-kept jemalloc tcmalloc mimalloc"
TRANSPORTS="grpc socket"
KEEP=0

usage() {
	sed -n '/^# Usage/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while getopts r:w:d:a:t:kh opt; do
	case "$opt" in
	r) ROUNDS=$OPTARG ;;
	w) WARM=$OPTARG ;;
	d) DUR=$OPTARG ;;
	a) ALLOCS=$OPTARG ;;
	t) TRANSPORTS=$OPTARG ;;
	k) KEEP=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
case "$ROUNDS" in ''|*[!0-9]*|0) usage ;; esac
for a in $ALLOCS; do
	case "$a" in glibc|glibc-kept|jemalloc|tcmalloc|mimalloc) ;; *) usage ;; esac
done
for t in $TRANSPORTS; do
	case "$t" in grpc|socket) ;; *) usage ;; esac
done

ME=bench/allocator.sh
cd "$(dirname "$0")/.." || { echo "$ME: cannot enter the top of the tree" >&2; exit 1; }
# die, free_ports, and $out with the run in progress ($cur) stopped on
# exit (its servers die with it: PR_SET_PDEATHSIG)
. bench/lib.sh
[ -x "$PY" ] || die "'$PY' is needed for the JSON and the table"
bench_tmpdir tfgb-allocator
bench_host_start

make -s tfgb >"$out/make.log" 2>&1 || die "make tfgb failed: $(cat "$out/make.log")"

# One run: FIGURE TRANSPORT ALLOCATOR ROUND; its JSON in $out, checked.
run() {
	fig=$1 tr=$2 al=$3 rd=$4
	name=$fig-$tr-$al-$rd
	case "$fig" in
	latency) set -- latency ;;
	bandwidth) set -- bandwidth -s job.inflight=4 ;;
	throughput) set -- throughput -s cluster.ps_count=1 -s cluster.workers=1 -s job.rpc=push ;;
	esac
	# a free port can be taken by someone else before the server binds it:
	# then once more on other ports, at most three times
	for try in 1 2 3; do
		base=$(free_ports 2) || die "no 3 free consecutive ports"
		$TFGB "$@" -c "$JOB" -q -f json -s cluster.ps=127.0.0.1:"$base" -s job.transport="$tr" \
			-s job.allocator="$al" -s job.warmup="$WARM" -s job.duration="$DUR" \
			-s job.timeout=30s -s monitor.interval=0 >"$out/$name.json" 2>"$out/$name.err" &
		cur=$!
		wait "$cur"
		rc=$?
		cur=
		[ "$rc" -ne 0 ] && grep -q "address in use" "$out/$name.err" || break
	done
	[ "$rc" -eq 0 ] || die "$name exited $rc (try $try): $(cat "$out/$name.err")"
	$PY - "$out/$name.json" "$al" <<'EOF' || die "$name: $(cat "$out/$name.json")"
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2]
procs = d["allocators"]["workers"] + d["allocators"]["ps"]
if d["status"] != "ok" or d["errors"] or not d["calls"]:
    sys.exit("not a complete run")
if d["environment"]["allocator"] != want or any(p["name"] != want for p in procs):
    sys.exit("asked for %s, ran %s" % (want, [p["name"] for p in procs]))
EOF
}

set -- $ALLOCS
nalloc=$#
echo "bench/allocator.sh: $ROUNDS rounds, warm-up $WARM, window $DUR;" \
	"allocators: $ALLOCS; transports: $TRANSPORTS" >&2
r=1
while [ "$r" -le "$ROUNDS" ]; do
	# this round's order: the list rotated by r - 1
	order=$ALLOCS
	i=1
	while [ "$i" -lt "$r" ]; do
		first=${order%% *}
		order="${order#* } $first"
		[ "$nalloc" -gt 1 ] || order=$first
		i=$((i + 1))
	done
	echo "  round $r: $order" >&2
	for tr in $TRANSPORTS; do
		for fig in latency bandwidth throughput; do
			for al in $order; do
				run "$fig" "$tr" "$al" "$r"
			done
		done
	done
	r=$((r + 1))
done

# shellcheck disable=SC2086 # one argument per allocator
bench_host_line
$PY - "$out" "$ROUNDS" "$TRANSPORTS" $ALLOCS <<'EOF' || die "cannot make the table"
import json, statistics, sys
out, rounds, transports, allocs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
figs = [("latency", "latency p50, ms", lambda d: d["latency_us"]["p50"] / 1000, "%.2f"),
        ("bandwidth", "bandwidth, inflight 4, MB/s", lambda d: d["MBps"], "%.0f"),
        ("throughput", "throughput 1 PS x 1 worker, push, RPC/s", lambda d: d["rpc_per_s"], "%.0f")]
def val(fig, tr, al, r, of):
    return of(json.load(open("%s/%s-%s-%s-%d.json" % (out, fig, tr, al, r))))
rows = []
for tr in transports:
    for fig, title, of, fmt in figs:
        v = {al: [val(fig, tr, al, r, of) for r in range(1, rounds + 1)] for al in allocs}
        rows.append((tr, title, fmt, v))
w = max(len(tr) + len(t) + 3 for tr, t, _, _ in rows)
print("%-*s | %s" % (w, "figure (median of %d rounds)" % rounds,
                     " | ".join("%-12s" % a for a in allocs)))
print("-" * w + "-|" + "|".join("-" * 14 for _ in allocs))
for tr, title, fmt, v in rows:
    print("%-*s | %s" % (w, "%s, %s" % (tr, title),
                         " | ".join("%-12s" % (fmt % statistics.median(v[a])) for a in allocs)))
if "glibc" in allocs:
    print()
    print("%-*s | %s" % (w, "over glibc, median of per-round ratios",
                         " | ".join("%-12s" % a for a in allocs)))
    print("-" * w + "-|" + "|".join("-" * 14 for _ in allocs))
    for tr, title, fmt, v in rows:
        cells = []
        for a in allocs:
            rs = [x / g for x, g in zip(v[a], v["glibc"]) if g]
            cells.append("%-12s" % ("%.2fx" % statistics.median(rs) if rs else "-"))
        print("%-*s | %s" % (w, "%s, %s" % (tr, title), " | ".join(cells)))
EOF
