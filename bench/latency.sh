#!/bin/sh
# bench/latency.sh - `tfgb latency` next to the hand-written gRPC core floor
# (bench/pingpong), against one `tfgb serve` on loopback.
#
# For each payload (1 x 10 B, and the default job's 10 iovecs) it runs ROUNDS
# rounds of: tfgb latency (N calls), then bench/pingpong (N calls, the same
# buffer sizes in the same order, the same warm-up time), and prints the
# median over rounds of each client's p50 and mean, the min-max spread, and
# the ratio tfgb/floor.  Both clients measure one Echo at a time on a fresh
# connection to the same server process.
#
# Usage (from the top of the tree):
#   bench/latency.sh [-r ROUNDS] [-n CALLS_SMALL] [-N CALLS_DEFAULT]
#                    [-w WARMUP_MS] [-W WARMUP_MS_DEFAULT] [-c CPU|split|none] [-k]
# Exit status: 0 when every run succeeded, 1 when a build or a run failed,
# 2 on bad arguments.  Every process it starts is stopped on exit.
# Figures on a shared 2-core VM are noisy: read the spread, not one round.

PY=/usr/bin/python3
ROUNDS=5
N_SMALL=20000
N_DEFAULT=300
WARM_SMALL=1000   # ms
WARM_DEFAULT=1000 # ms
KEEP=0
PIN=

usage() {
	echo "usage: bench/latency.sh [-r ROUNDS] [-n CALLS_SMALL] [-N CALLS_DEFAULT]" >&2
	echo "                        [-w WARMUP_MS] [-W WARMUP_MS_DEFAULT] [-c CPU|split|none] [-k]" >&2
	echo "  -r rounds of each client per payload (default 5)" >&2
	echo "  -n measured calls, 1 x 10 B payload (default 20000)" >&2
	echo "  -N measured calls, default payload (default 300)" >&2
	echo "  -w / -W warm-up in ms for each payload (default 1000 / 1000)" >&2
	echo "  -c where the server and the clients run: CPU pins all three to one CPU" >&2
	echo "     (default: the last CPU this script may use), split pins the server" >&2
	echo "     to the first and the clients to the last, none leaves it to Linux" >&2
	echo "  -k keep the per-round outputs and print where they are" >&2
	exit 2
}

ME=bench/latency.sh
. "$(dirname "$0")/lib.sh"

while getopts r:n:N:w:W:c:kh opt; do
	case "$opt" in
	r) ROUNDS=$OPTARG ;;
	n) N_SMALL=$OPTARG ;;
	N) N_DEFAULT=$OPTARG ;;
	w) WARM_SMALL=$OPTARG ;;
	W) WARM_DEFAULT=$OPTARG ;;
	c) PIN=$OPTARG ;;
	k) KEEP=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
for v in "$ROUNDS" "$N_SMALL" "$N_DEFAULT" "$WARM_SMALL" "$WARM_DEFAULT"; do
	isnum "$v" || usage
done
if [ "$ROUNDS" -lt 1 ] || [ "$N_SMALL" -lt 1 ] || [ "$N_DEFAULT" -lt 1 ]; then usage; fi

cd "$(dirname "$0")/.." || die "cannot enter the top of the tree"
[ -x "$PY" ] || die "'$PY' is needed for the JSON and the table"

bench_place
bench_tmpdir tfgb-latency
bench_host_start

# ---- build ----
make -s tfgb >"$out/make.log" 2>&1 || die "make tfgb failed: $(cat "$out/make.log")"
# the build line of bench/pingpong.c's header comment
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -std=c11 -D_GNU_SOURCE -o bench/pingpong bench/pingpong.c \
	$(pkg-config --cflags --libs grpc) >"$out/cc.log" 2>&1 ||
	die "building bench/pingpong failed: $(cat "$out/cc.log")"

# conf/tfgb.ini pins the default job: a ./tfgb.ini or ~/.config/tfgb/tfgb.ini
# must not change what "the default payload" means here
JOB=conf/tfgb.ini

# ---- one server for every run ----
bench_serve "$JOB"

# ---- rounds: tfgb and floor alternate, ABAB... ----
res="$out/results"
: >"$res"
bench_payload() { # LABEL CALLS WARMUP_MS PAYLOAD_OPTS...
	label=$1 n=$2 warm=$3
	shift 3
	sizes=$(./tfgb genpayload -c "$JOB" -f csv "$@" | awk -F, 'NR > 1 { printf "%s%s", sep, $3; sep = "," }') ||
		die "tfgb genpayload failed for the $label payload"
	[ -n "$sizes" ] || die "no buffer sizes for the $label payload"
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		# shellcheck disable=SC2086 # $on_cli is a command prefix
		run "tfgb-$label-$r" $on_cli ./tfgb latency -c "$JOB" -q -f json -s cluster.ps="$addr" \
			-s job.iterations="$n" -s job.warmup="${warm}ms" "$@"
		$PY - "$out/tfgb-$label-$r.out" "$n" "$label" "$r" "$sizes" >>"$res" <<'EOF' ||
import json, sys
path, n, label, rnd, sizes = sys.argv[1:]
d = json.load(open(path))
got = ",".join(str(s) for s in d["payload"]["sizes"])
if d["status"] != "ok" or d["errors"] != 0 or d["calls"] != int(n) or got != sizes:
    sys.exit("status %s, %s errors, %s calls, sizes %s" % (d["status"], d["errors"], d["calls"], got))
print(label, "tfgb", rnd, d["latency_us"]["p50"], d["latency_us"]["avg"])
EOF
			die "bad tfgb report in round $r ($label): $(cat "$out/tfgb-$label-$r.out")"
		# shellcheck disable=SC2086 # $on_cli is a command prefix
		run "floor-$label-$r" $on_cli bench/pingpong -w 0 -t "$warm" -n "$n" "$addr" "$sizes"
		awk -v l="$label" -v r="$r" -v n="$n" '
			/^pingpong:/ && $0 ~ " " n " calls " {
				for (i = 1; i <= NF; i++) {
					if ($i == "p50") p = $(i + 1)
					if ($i == "mean") m = $(i + 1)
				}
			}
			END { if (p == "" || m == "") exit 1; print l, "floor", r, p, m }' \
			"$out/floor-$label-$r.out" >>"$res" ||
			die "bad pingpong output in round $r ($label): $(cat "$out/floor-$label-$r.out")"
		r=$((r + 1))
	done
	echo "$label sizes $sizes" >>"$out/sizes"
}

echo "bench/latency.sh: $ROUNDS rounds per client and payload, server $addr (1 thread)," \
	"server CPU ${srv_pin:-any}, client CPU ${cli_pin:-any}" >&2
bench_payload 1x10B "$N_SMALL" "$WARM_SMALL" -s payload.iovecs=1 -s payload.categories=small
bench_payload default "$N_DEFAULT" "$WARM_DEFAULT"

# ---- the table ----
bench_host_line
$PY - "$res" "$N_SMALL" "$N_DEFAULT" <<'EOF' || die "cannot make the table"
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, who, rnd, p50, mean = line.split()
    rows.setdefault(label, {}).setdefault(who, []).append((float(p50), float(mean)))
calls = {"1x10B": sys.argv[2], "default": sys.argv[3]}
def med(v): return statistics.median(v)
def fmt(v): return "%.1f" % v if v >= 100 else "%.2f" % v
print("%-9s %6s %6s  %-24s %-24s %7s  %s" % ("payload", "calls", "rounds",
      "tfgb p50 us (min-max)", "floor p50 us (min-max)", "ratio", "mean ratio"))
for label in ("1x10B", "default"):
    t, f = rows[label]["tfgb"], rows[label]["floor"]
    tp, fp = [x[0] for x in t], [x[0] for x in f]
    tm, fm = [x[1] for x in t], [x[1] for x in f]
    # per-round ratios too: a round's tfgb and floor ran next to each other
    pr = sorted(a / b for a, b in zip(tp, fp))
    print("%-9s %6s %6d  %-24s %-24s %7.3f  %.3f" % (label, calls[label], len(t),
          "%s (%s-%s)" % (fmt(med(tp)), fmt(min(tp)), fmt(max(tp))),
          "%s (%s-%s)" % (fmt(med(fp)), fmt(min(fp)), fmt(max(fp))),
          med(tp) / med(fp), med(tm) / med(fm)))
    print("%-9s per-round p50 ratio: median %.3f, range %.3f-%.3f" % ("", med(pr), pr[0], pr[-1]))
EOF
