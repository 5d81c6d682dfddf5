#!/bin/sh
# bench/switch.sh - per-host links (network.topology = switch, tfgb.ini(5)
# "Per-host links"): what a ring all-reduce and a PS fan-in reach against
# one NIC's rate, on this machine.  For each rate (a tc rate; 0 is an
# unshaped switch: what this machine carries), R rounds of
#   ring    tfgb collective, N ranks over socket, ring all-reduce of S
#           bytes: busbw, and busbw / rate (goal 85-100 %: a busbw past
#           the rate is a bug)
#   push    tfgb throughput, 1 PS x N workers pushing 256 KiB: the
#           workers' sum, and sum / rate (the PS's one NIC bounds it)
#   pull    the same pulling from the PS (its NIC's other direction)
# with the calibration's rate through one NIC.  A row gives the median over
# rounds and the range.  The load average is printed before and after:
# the machine is shared, say it with the figures.
#   bench/switch.sh [-n RANKS] [-s BYTES] [-r ROUNDS] [RATE...]
#   defaults: 4 ranks, 67108864 bytes (64 MiB), 3 rounds, rate 1gbit
# Run from the top of a built tree (make tfgb), as root or with user
# namespaces.  Exit status 0, 1 when a run failed, 2 on bad arguments.
set -e
n=4
size=67108864
rounds=3
while getopts n:s:r: opt; do
	case "$opt" in
	n) n=$OPTARG ;;
	s) size=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '/^#   bench/,/^#   defaults/p' "$0" | sed 's/^# *//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case "$n$size$rounds" in '' | *[!0-9]*) echo "bench/switch.sh: options take whole numbers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$n" -ge 2 ] || { echo "bench/switch.sh: -r 1 or more, -n 2 or more" >&2; exit 2; }
[ $# -gt 0 ] || set -- 1gbit
port=$(/usr/bin/python3 -c 'import random; print(random.randrange(20000, 30000))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
S="-s network.topology=switch -q -f json"
C="-s job.transport=socket -s cluster.workers=$n -s collective.min_bytes=$size"
C="$C -s collective.max_bytes=$size -s collective.iterations=5 -s collective.warmup_iterations=2"
C="$C -s collective.verify=none -s collective.ranks=127.0.0.1:$port"
T="-s job.transport=socket -s cluster.workers=$n -s cluster.ps=127.0.0.1:$((port + 100))"
T="$T -s payload.scheme=custom -s payload.iovecs=1 -s payload.iovec=256KiB"
T="$T -s job.warmup=1s -s job.duration=3s"
py() { /usr/bin/python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }
# med FILE: "median (min-max)" of the numbers in FILE
med() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.1f (%.1f-%.1f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

echo "# bench/switch.sh: $n ranks / 1 PS x $n workers, ${size} B, $rounds rounds, $(uname -r), $(nproc) CPUs"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-26s %-22s %-26s %-22s %-26s %-22s %s\n' rate "ring busbw Mbit/s" "% of rate" \
	"push sum Mbit/s" "% of rate" "pull sum Mbit/s" "% of rate" "calibrated Mbit/s"
for rate in "$@"; do
	: >"$tmp/ring"; : >"$tmp/push"; : >"$tmp/pull"; : >"$tmp/cal"
	: >"$tmp/ringp"; : >"$tmp/pushp"; : >"$tmp/pullp"
	# the rate in bit/s, tc's decimal units (0: unshaped, no percent)
	bps=$(/usr/bin/python3 -c "
import re, sys
m = re.fullmatch(r'([0-9.]+)([kmg]?)(bit)?', sys.argv[1].lower())
print(float(m.group(1)) * {'': 1, 'k': 1e3, 'm': 1e6, 'g': 1e9}[m.group(2)] if m else 0)" "$rate")
	for _ in $(seq "$rounds"); do
		# shellcheck disable=SC2086
		./tfgb collective $C $S -s network.rate="$rate" >"$tmp/c.json" || exit 1
		py 'd["collective"]["sizes"][0]["busbw_GBps"] * 8e3' <"$tmp/c.json" >>"$tmp/ring"
		py '(d["network"]["measured"]["rate_bps"] or 0) / 1e6' <"$tmp/c.json" >>"$tmp/cal"
		for rpc in push pull; do
			# shellcheck disable=SC2086
			./tfgb throughput $T $S -s job.rpc=$rpc -s network.rate="$rate" >"$tmp/t.json" || exit 1
			py 'd["Gbps"] * 1e3' <"$tmp/t.json" >>"$tmp/$rpc"
		done
	done
	for f in ring push pull; do
		awk -v b="$bps" '{ print (b > 0 ? 100 * $1 * 1e6 / b : 0) }' "$tmp/$f" >"$tmp/${f}p"
	done
	printf '%-8s %-26s %-22s %-26s %-22s %-26s %-22s %s\n' "$rate" "$(med "$tmp/ring")" \
		"$(med "$tmp/ringp")" "$(med "$tmp/push")" "$(med "$tmp/pushp")" "$(med "$tmp/pull")" \
		"$(med "$tmp/pullp")" "$(med "$tmp/cal")"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
