#!/bin/sh
# bench/serialized.sh - what serialization adds to `tfgb latency`: the p50 of
# mode = non-serialized, tensorflow and serialized, against one `tfgb serve`
# on loopback.
#
# For each payload (the default job's 10 iovecs, and 10 x 10 B) it runs
# ROUNDS rounds; a round runs the three modes one after the other, N calls
# each after the same warm-up, in an order that rotates from round to round
# (N T S, T S N, S N T, ...), so that no mode always runs first or last.
# The table gives, per payload and mode, the median over rounds of each
# run's p50 (min-max), the ratio to non-serialized's median p50, the median
# of the per-round ratios, and the median over rounds of the mean encode
# and decode time per call that tfgb reports (timed on 1 call in 64).
#
# Usage (from anywhere; it works from the top of the tree):
#   bench/serialized.sh [-r ROUNDS] [-n CALLS_SMALL] [-N CALLS_DEFAULT]
#                       [-w WARMUP_MS] [-c CPU|split|none] [-k]
# Exit status: 0 when every run succeeded, 1 when a build or a run failed,
# 2 on bad arguments.  Every process it starts is stopped on exit.
# Figures on a shared 2-core VM are noisy: read the spread, not one round.

PY=/usr/bin/python3
ROUNDS=5
N_SMALL=10000
N_DEFAULT=300
WARM=1000 # ms
KEEP=0
PIN=

usage() {
	echo "usage: bench/serialized.sh [-r ROUNDS] [-n CALLS_SMALL] [-N CALLS_DEFAULT]" >&2
	echo "                           [-w WARMUP_MS] [-c CPU|split|none] [-k]" >&2
	echo "  -r rounds per payload, each running the three modes (default 5)" >&2
	echo "  -n measured calls, 10 x 10 B payload (default 10000)" >&2
	echo "  -N measured calls, default payload (default 300)" >&2
	echo "  -w warm-up in ms before each run (default 1000)" >&2
	echo "  -c where the server and the client run: CPU pins both to one CPU" >&2
	echo "     (default: the last CPU this script may use), split pins the server" >&2
	echo "     to the first and the client to the last, none leaves it to Linux" >&2
	echo "  -k keep the per-run outputs and print where they are" >&2
	exit 2
}

ME=bench/serialized.sh
. "$(dirname "$0")/lib.sh"

while getopts r:n:N:w:c:kh opt; do
	case "$opt" in
	r) ROUNDS=$OPTARG ;;
	n) N_SMALL=$OPTARG ;;
	N) N_DEFAULT=$OPTARG ;;
	w) WARM=$OPTARG ;;
	c) PIN=$OPTARG ;;
	k) KEEP=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
for v in "$ROUNDS" "$N_SMALL" "$N_DEFAULT" "$WARM"; do
	isnum "$v" || usage
done
if [ "$ROUNDS" -lt 1 ] || [ "$N_SMALL" -lt 1 ] || [ "$N_DEFAULT" -lt 1 ]; then usage; fi

cd "$(dirname "$0")/.." || die "cannot enter the top of the tree"
[ -x "$PY" ] || die "'$PY' is needed for the JSON and the table"

bench_place
bench_tmpdir tfgb-serialized
bench_host_start

make -s tfgb >"$out/make.log" 2>&1 || die "make tfgb failed: $(cat "$out/make.log")"

# conf/tfgb.ini pins the default job against a ./tfgb.ini or ~/.config one
JOB=conf/tfgb.ini

# ---- one server for every run ----
bench_serve "$JOB"

res="$out/results"
: >"$res"
MODES="non-serialized tensorflow serialized"
bench_payload() { # LABEL CALLS PAYLOAD_OPTS...
	label=$1 n=$2
	shift 2
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		# rotate the order: round r starts with mode (r - 1) mod 3
		order=$(echo $MODES | awk -v k=$(( (r - 1) % 3 )) '{ for (i = 0; i < NF; i++) printf "%s ", $((i + k) % NF + 1) }')
		for mode in $order; do
			# shellcheck disable=SC2086 # $on_cli is a command prefix
			run "$label-$mode-$r" $on_cli ./tfgb latency -c "$JOB" -q -f json \
				-s cluster.ps="$addr" -s job.mode="$mode" -s job.iterations="$n" \
				-s job.warmup="${WARM}ms" "$@"
			$PY - "$out/$label-$mode-$r.out" "$n" "$label" "$mode" "$r" >>"$res" <<'EOF' ||
import json, sys
path, n, label, mode, rnd = sys.argv[1:]
d = json.load(open(path))
if d["status"] != "ok" or d["errors"] != 0 or d["calls"] != int(n) or d["mode"] != mode:
    sys.exit("status %s, %s errors, %s calls, mode %s" % (d["status"], d["errors"], d["calls"], d["mode"]))
s = d.get("serialization", {})
enc = s.get("encode_us")
dec = s.get("decode_us")
print(label, mode, rnd, d["latency_us"]["p50"], d["latency_us"]["avg"],
      "-" if enc is None else enc, "-" if dec is None else dec, s.get("sampled_calls", 0),
      d["payload"]["bytes"])
EOF
				die "bad report in round $r ($label, $mode): $(cat "$out/$label-$mode-$r.out")"
		done
		r=$((r + 1))
	done
}

echo "bench/serialized.sh: $ROUNDS rounds per payload, server $addr (1 thread)," \
	"server CPU ${srv_pin:-any}, client CPU ${cli_pin:-any}" >&2
bench_payload default "$N_DEFAULT"
bench_payload 10x10B "$N_SMALL" -s payload.categories=small

bench_host_line
$PY - "$res" <<'EOF' || die "cannot make the table"
import statistics, sys
rows = {}
size = {}
for line in open(sys.argv[1]):
    label, mode, rnd, p50, mean, enc, dec, sampled, nbytes = line.split()
    rows.setdefault(label, {}).setdefault(mode, {})[int(rnd)] = (
        float(p50), float(mean), None if enc == "-" else float(enc),
        None if dec == "-" else float(dec), int(sampled))
    size[label] = int(nbytes)
med = statistics.median
def fmt(v): return "%.1f" % v if v >= 100 else "%.2f" % v
print("%-8s %-15s %6s  %-26s %8s %12s  %-9s %-9s %s" % ("payload", "mode", "rounds",
      "p50 us median (min-max)", "vs raw", "round ratio", "encode us", "decode us", "sampled"))
for label in ("default", "10x10B"):
    base = rows[label]["non-serialized"]
    for mode in ("non-serialized", "tensorflow", "serialized"):
        runs = rows[label][mode]
        p = [v[0] for v in runs.values()]
        ratio = med(p) / med([v[0] for v in base.values()])
        per = sorted(runs[r][0] / base[r][0] for r in runs if r in base)
        enc = [v[2] for v in runs.values() if v[2] is not None]
        dec = [v[3] for v in runs.values() if v[3] is not None]
        print("%-8s %-15s %6d  %-26s %8.3f %12s  %-9s %-9s %s" % (
            label, mode, len(p), "%s (%s-%s)" % (fmt(med(p)), fmt(min(p)), fmt(max(p))),
            ratio, "%.3f" % med(per) if mode != "non-serialized" else "-",
            "%.2f" % med(enc) if enc else "-", "%.2f" % med(dec) if dec else "-",
            sum(v[4] for v in runs.values()) if mode != "non-serialized" else "-"))
    print("%-8s payload of %d bytes in 10 iovecs" % ("", size[label]))
EOF
