#!/bin/sh
# bench/socket.sh - the socket transport next to the gRPC transport and next
# to standard tools from Debian (the floor), on loopback.
#
# Payloads: 1 x 10 B, 1 x 64 KiB and the default job's payload (10 iovecs,
# 3176488 B).  For each: `tfgb latency` p50 and p99, and `tfgb bandwidth`
# with inflight 1 and 16, for transport grpc and transport socket, one
# `tfgb serve` of each kind started once; then the floor:
#   latency    sockperf ping-pong (TCP) with messages of the socket
#              transport's wire size (payload + its 16-byte header); sockperf
#              prints RTT/2, doubled here.  sockperf takes at most 65507 B, so
#              64 KiB uses 65507 B (45 B less); for the default payload the
#              floor is 2 x wire bytes / iperf3's one-stream bandwidth.
#   bandwidth  iperf3, one stream, writes of the wire size (at most 1 MiB,
#              iperf3's largest block), as payload bytes per second.
# Rounds alternate the transports (ABAB: grpc first in odd rounds, socket
# first in even ones).  The table shows medians over rounds, then the
# ratios socket/grpc and socket/floor as medians of per-round ratios: the
# two runs of a pair are seconds apart, so a busy spell on a shared machine
# moves both (latency: lower is better, a ratio under 1.10 is "within 10%
# of the floor"; bandwidth: higher is better).  The 10 B bandwidth floor is
# a one-way stream of one write per message, no replies: for reference only.
#
# Usage (from the top of the tree, after `make tfgb`):
#   bench/socket.sh [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-c none|one|split] [-k]
#   -r rounds (default 3), -d measured seconds per run (default 1),
#   -w tfgb warm-up (default 300ms), -c CPU placement: none (default), one
#   (everything on the last CPU), split (servers on the first CPU, clients
#   on the last), -k keep the raw outputs.
# Needs: ./tfgb, /usr/bin/python3, sockperf and iperf3 (Debian packages).
# Exit status 0, 1 when a run failed, 2 on bad arguments.  Every process it
# starts is stopped on exit.  A shared 2-core VM is noisy: use -r 5 or more
# before trusting a ratio within a few percent.

PY=/usr/bin/python3
TFGB=./tfgb
ROUNDS=3
DUR=1
WARM=300ms
PIN=none
KEEP=0

usage() {
	sed -n '/^# Usage/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while getopts r:d:w:c:kh opt; do
	case "$opt" in
	r) ROUNDS=$OPTARG ;;
	d) DUR=$OPTARG ;;
	w) WARM=$OPTARG ;;
	c) PIN=$OPTARG ;;
	k) KEEP=1 ;;
	*) usage ;;
	esac
done
case "$ROUNDS$DUR" in *[!0-9]*|'') usage ;; esac
case "$PIN" in none|one|split) ;; *) usage ;; esac
cd "$(dirname "$0")/.." || exit 1
[ -x "$TFGB" ] || { echo "bench/socket.sh: build ./tfgb first (make tfgb)" >&2; exit 1; }
for t in sockperf iperf3 "$PY"; do
	command -v "$t" >/dev/null 2>&1 ||
		{ echo "bench/socket.sh: '$t' not found (apt-get install sockperf iperf3 python3)" >&2; exit 1; }
done

ncpu=$(nproc)
last=$((ncpu - 1))
case "$PIN" in
none) SRV_PIN= ; CLI_PIN= ;;
one) SRV_PIN="taskset -c $last" ; CLI_PIN="taskset -c $last" ;;
split) SRV_PIN="taskset -c 0" ; CLI_PIN="taskset -c $last" ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_socket.XXXXXX") || exit 1
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	if [ "$KEEP" = 1 ]; then echo "raw outputs kept in $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

free_port() {
	$PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_port() {
	$PY - "$1" <<'EOF'
import socket, sys, time
end = time.time() + 10
while time.time() < end:
    s = socket.socket()
    if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0:
        sys.exit(0)
    s.close()
    time.sleep(0.1)
sys.exit(1)
EOF
}

P_GRPC=$(free_port); P_SOCK=$(free_port); P_SP=$(free_port); P_IP=$(free_port)
$SRV_PIN $TFGB serve -s cluster.ps=127.0.0.1:$P_GRPC -q 2>"$tmp/srv_grpc.err" &
pids="$pids $!"
$SRV_PIN $TFGB serve -s job.transport=socket -s cluster.ps=127.0.0.1:$P_SOCK -q \
	2>"$tmp/srv_socket.err" &
pids="$pids $!"
$SRV_PIN sockperf sr --tcp -i 127.0.0.1 -p $P_SP >"$tmp/sockperf_srv.log" 2>&1 &
pids="$pids $!"
$SRV_PIN iperf3 -s -B 127.0.0.1 -p $P_IP >"$tmp/iperf3_srv.log" 2>&1 &
pids="$pids $!"
for p in $P_GRPC $P_SOCK $P_SP $P_IP; do
	wait_port $p || { echo "bench/socket.sh: a server did not start on port $p" >&2; exit 1; }
done

# name, tfgb payload options, payload bytes
SIZES="small medium default"
opts_small="-s payload.iovecs=1 -s payload.categories=small -s payload.small=10B"
bytes_small=10
opts_medium="-s payload.iovecs=1 -s payload.categories=medium -s payload.medium=64KiB"
bytes_medium=65536
opts_default=""
bytes_default=3176488

failed=0
tfgb_run() { # cmd transport size inflight round
	eval "o=\$opts_$3"
	port=$P_GRPC
	[ "$2" = socket ] && port=$P_SOCK
	# shellcheck disable=SC2086
	if $CLI_PIN $TFGB "$1" -s job.transport="$2" -s cluster.ps=127.0.0.1:$port \
		-s job.warmup=$WARM -s job.duration=${DUR}s -s job.inflight="$4" $o -q -f csv \
		>"$tmp/run.csv" 2>"$tmp/run.err"; then
		head -n 1 "$tmp/run.csv" >"$tmp/hdr.csv"
		tail -n 1 "$tmp/run.csv" | sed "s/^/$1,$2,$3,$4,$5,/" >>"$tmp/tfgb.csv"
	else
		echo "bench/socket.sh: tfgb $1 $2 $3 inflight $4 failed: $(cat "$tmp/run.err")" >&2
		failed=1
	fi
}

host=$($PY bench/hostinfo.py) # the host and its load now: the table's first line
r=1
while [ $r -le "$ROUNDS" ]; do
	if [ $((r % 2)) = 1 ]; then order="grpc socket"; else order="socket grpc"; fi
	echo "round $r/$ROUNDS ($order first)" >&2
	for size in $SIZES; do
		eval "b=\$bytes_$size"
		wire=$((b + 16))
		for tr in $order; do tfgb_run latency "$tr" "$size" 1 $r; done
		if [ $wire -le 65507 ] || [ "$size" = medium ]; then
			m=$wire
			[ $m -gt 65507 ] && m=65507
			$CLI_PIN sockperf pp --tcp -i 127.0.0.1 -p $P_SP -m $m -t "$DUR" \
				>"$tmp/sp.out" 2>&1 || { echo "sockperf -m $m failed" >&2; failed=1; }
			p50=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$tmp/sp.out")
			p99=$(sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p' "$tmp/sp.out")
			echo "sockperf,$size,$m,$p50,$p99,$r" >>"$tmp/floor.csv"
		fi
		for inf in 1 16; do
			for tr in $order; do tfgb_run bandwidth "$tr" "$size" $inf $r; done
		done
		l=$wire
		[ $l -gt 1048576 ] && l=1048576
		if $CLI_PIN iperf3 -c 127.0.0.1 -p $P_IP -l $l -t "$DUR" -J >"$tmp/ip.json" 2>&1; then
			bps=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' "$tmp/ip.json")
			echo "iperf3,$size,$l,$bps,$r" >>"$tmp/floor.csv"
		else
			echo "iperf3 -l $l failed: $(tail -n 3 "$tmp/ip.json")" >&2
			failed=1
		fi
	done
	r=$((r + 1))
done

echo "$host at the start, $(cut -d ' ' -f 1 /proc/loadavg) at the end"
$PY - "$tmp/tfgb.csv" "$tmp/floor.csv" "$bytes_small" "$bytes_medium" "$bytes_default" \
	"$tmp/hdr.csv" <<'EOF'
import csv, statistics, sys

hdr = next(csv.reader(open(sys.argv[6])))  # tfgb's CSV columns, by name
runs = {}   # (cmd, transport, size, inflight) -> {round: record}
for row in csv.reader(open(sys.argv[1])):
    cmd, tr, size, inf, rnd = row[:5]
    rec = dict(zip(hdr, row[5:]))
    if rec.get("status") == "ok":
        runs.setdefault((cmd, tr, size, inf), {})[rnd] = rec
floor = {}  # (tool, size) -> {round: fields}
for row in csv.reader(open(sys.argv[2])):
    floor.setdefault((row[0], row[1]), {})[row[-1]] = row[2:-1]
nbytes = dict(zip(["small", "medium", "default"], map(int, sys.argv[3:6])))
label = {"small": "1 x 10 B", "medium": "1 x 64 KiB", "default": "default 10 iov, 3176488 B"}

def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None

def tf(cmd, tr, size, inf, col):  # {round: value}
    return {r: float(rec[col]) for r, rec in runs.get((cmd, tr, size, inf), {}).items()}

def iperf_Bps(size):  # {round: payload bytes per second at iperf3's message rate}
    wire = nbytes[size] + 16
    return {r: float(f[1]) / 8 * nbytes[size] / wire
            for r, f in floor.get(("iperf3", size), {}).items()}

def ratio(a, b):
    """median over rounds of a/b, each round's pair measured seconds apart"""
    return med([a[r] / b[r] for r in a if r in b and b[r]])

def fmt(v, nd=1):
    return "-" if v is None else f"{v:.{nd}f}"

lines = []
for size in ["small", "medium", "default"]:
    for q, col, fi in [("p50", "p50_us", 1), ("p99", "p99_us", 2)]:
        g, s = tf("latency", "grpc", size, "1", col), tf("latency", "socket", size, "1", col)
        sp = floor.get(("sockperf", size))
        if sp:
            fl = {r: 2 * float(f[fi]) for r, f in sp.items() if f[fi]}
            src = "sockperf pp -m %s" % next(iter(sp.values()))[0]
        elif q == "p50":
            fl = {r: 2 * (nbytes[size] + 16) / v * 1e6 for r, v in iperf_Bps(size).items() if v}
            src = "2 x size / iperf3"
        else:
            fl, src = {}, "-"
        lines.append((f"latency {q} us, {label[size]}", med(g.values()), med(s.values()),
                      med(fl.values()), ratio(s, g), ratio(s, fl), src))
    for inf in ["1", "16"]:
        g = tf("bandwidth", "grpc", size, inf, "MBps")
        s = tf("bandwidth", "socket", size, inf, "MBps")
        fl = {r: v / 1e6 for r, v in iperf_Bps(size).items()}
        rows = floor.get(("iperf3", size), {})
        lines.append((f"bandwidth MB/s inflight {inf}, {label[size]}", med(g.values()),
                      med(s.values()), med(fl.values()), ratio(s, g), ratio(s, fl),
                      "iperf3 -l %s" % next(iter(rows.values()))[0] if rows else "-"))

w = max(len(l[0]) for l in lines)
print(f"{'':{w}}  {'grpc':>9} {'socket':>9} {'floor':>9}  {'socket/grpc':>11} {'socket/floor':>12}  floor from")
for name, g, s, fl, r1, r2, src in lines:
    print(f"{name:{w}}  {fmt(g):>9} {fmt(s):>9} {fmt(fl):>9}  {fmt(r1, 2):>11} {fmt(r2, 2):>12}  {src}")
print("values: medians over rounds; ratios: medians of the per-round ratios")
EOF
exit $failed
