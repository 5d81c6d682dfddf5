#!/bin/sh
# bench/hosts.sh - grpc, socket and mpi between two "hosts" of this
# machine: network namespaces a (198.18.0.1, the PSs) and b (198.18.0.2,
# the workers) on a bridge (tests/netns.sh), every byte over the veths,
# nothing shaped.  The question of the DLoBD study (TensorFlow's MPI
# channel against gRPC across hosts) on one machine.
#
# Per round, per transport (the order rotates from round to round):
#   latency p50 (the default payload), bandwidth (inflight 16),
#   throughput 2 PSs x 3 workers (RPC/s) and the ResNet-50 step 2 x 3
#   (examples/train-resnet50.ini, step p50 in ms).
# grpc and socket: `tfgb serve` in a, the benchmark in b (throughput and
# train: `mpirun -np 3` in b starts the workers).  mpi: one mpirun in a
# whose rsh agent starts the daemon of b in b's namespace under its own
# host name (a UTS namespace), ranks 0.. the PSs on a, the others on b,
# Open MPI's btl tcp,self and its connections kept to 198.18.0.0/24, as
# tests/t_mpi_netns.sh does.  Prints one row per figure: the median over
# rounds (lowest-highest) per transport, and mpi / grpc per round.
#
# Usage (from anywhere; it runs from the top of the tree; root):
#   bench/hosts.sh [-r ROUNDS] [-d DURATION] [-k]
#   -r rounds (default 3), -d measured window (default 3s, warm-up 1s),
#   -k keep the raw results (their directory is printed).
# Needs ./tfgb built with the mpi transport, mpirun (openmpi-bin), ip
# (iproute2), unshare (util-linux) and /usr/bin/python3.
#
# Both hosts share this machine's CPUs: five MPI ranks busy-poll
# (tfgb-mpi(7)) on them at 2 x 3, where on real hosts each has its own.
# Read the 2 x 3 rows of mpi on a small machine as oversubscribed.

# shellcheck disable=SC2086 # $MPI, $M, $C, $PS2 and $RN are option lists
ME=bench/hosts.sh
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
. tests/netns.sh
ROUNDS=3 DUR=3s KEEP=0
usage() {
	sed -n '/^# Usage/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
while getopts r:d:kh opt; do
	case "$opt" in
	r) ROUNDS=$OPTARG ;;
	d) DUR=$OPTARG ;;
	k) KEEP=1 ;;
	*) usage ;;
	esac
done
die() { echo "$ME: $*" >&2; exit 1; }
why=$(netns_check)
[ -z "$why" ] || die "$why"
command -v mpirun >/dev/null 2>&1 || die "no mpirun (Debian package openmpi-bin)"
make -s tfgb >/dev/null || die "cannot build ./tfgb"
./tfgb version | grep -q '^mpi: compiled in' || die "./tfgb has no mpi transport (MPI=0)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

TFGB=$(pwd)/tfgb
lab=tfgbh-$$
A=198.18.0.1 B=198.18.0.2
out=$(mktemp -d "${TMPDIR:-/tmp}/tfgb-hosts.XXXXXX") || exit 1
srv=''
cleanup() {
	trap - EXIT INT TERM
	[ -n "$srv" ] && kill -TERM "$srv" 2>/dev/null
	netns_teardown "$lab"
	wait 2>/dev/null
	if [ "$KEEP" = 1 ]; then echo "raw results in $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
{ netns_switch "$lab" && netns_host "$lab" ha $A && netns_host "$lab" hb $B; } \
	>"$out/ip.err" 2>&1 || die "cannot build the namespaces: $(cat "$out/ip.err")"
MPI=$(netns_mpirun "$lab" "$out" $A $B "$lab-b") || die "cannot write the rsh agent"
printf '%s slots=1\n%s slots=1\n' $A $B >"$out/hosts2"
printf '%s slots=2\n%s slots=3\n' $A $B >"$out/hosts5"
M="-s job.transport=mpi -s mpi.btl=tcp,self -s cluster.ps=$A:50001"
C="-s job.warmup=1s -s job.duration=$DUR -s monitor.interval=0 -s job.timeout=30s -q -f json"
PS2="-s cluster.ps_count=2 -s cluster.workers=3"
RN="-c examples/train-resnet50.ini -s job.timeout=60s -q -f json"

# serve TRANSPORT PORT [options...]: one tfgb serve in a, listening
serve() {
	t=$1 port=$2
	shift 2
	ip netns exec $lab-ha "$TFGB" serve -s job.transport="$t" -s cluster.ps=$A:"$port" "$@" \
		>"$out/serve.out" 2>&1 &
	srv=$!
	netns_wait_listening $lab-ha $A "$port" 10 || die "serve ($t): $(cat "$out/serve.out")"
}
unserve() {
	kill -TERM "$srv"
	wait "$srv"
	srv=''
}
# each NAME CMD...: one run, its JSON in $out/NAME.json; stops on a failure
each() {
	name=$1
	shift
	"$@" >"$out/$name.json" 2>"$out/$name.err" || die "$name: exit $?: $(tail -n 5 "$out/$name.err")"
}
# round R TRANSPORT: the four figures
round() {
	r=$1 t=$2
	case $t in
	mpi)
		each "lat-$t-$r" $MPI --hostfile "$out/hosts2" -np 2 "$TFGB" latency $M $C
		each "bw-$t-$r" $MPI --hostfile "$out/hosts2" -np 2 "$TFGB" bandwidth $M -s job.inflight=16 $C
		each "tp-$t-$r" $MPI --hostfile "$out/hosts5" -np 5 "$TFGB" throughput $M $PS2 $C
		each "tr-$t-$r" $MPI --hostfile "$out/hosts5" -np 5 "$TFGB" train $M $PS2 $RN ;;
	*)
		if [ "$t" = grpc ]; then p=51001; else p=52001; fi
		serve "$t" $p
		each "lat-$t-$r" ip netns exec $lab-hb "$TFGB" latency -s job.transport="$t" \
			-s cluster.ps=$A:$p $C
		each "bw-$t-$r" ip netns exec $lab-hb "$TFGB" bandwidth -s job.transport="$t" \
			-s cluster.ps=$A:$p -s job.inflight=16 $C
		unserve
		serve "$t" $((p + 10)) $PS2
		each "tp-$t-$r" ip netns exec $lab-hb mpirun --bind-to none --oversubscribe -np 3 \
			"$TFGB" throughput -s job.transport="$t" -s cluster.ps=$A:$((p + 10)) $PS2 $C
		unserve
		serve "$t" $((p + 20)) -c examples/train-resnet50.ini $PS2
		each "tr-$t-$r" ip netns exec $lab-hb mpirun --bind-to none --oversubscribe -np 3 \
			"$TFGB" train -s job.transport="$t" -s cluster.ps=$A:$((p + 20)) $PS2 $RN
		unserve ;;
	esac
}

echo "$ME: $ROUNDS rounds, warm-up 1s, window $DUR; a: PSs, b: workers (veths, a bridge)"
for r in $(seq 1 "$ROUNDS"); do
	case $((r % 3)) in
	1) order="grpc socket mpi" ;;
	2) order="socket mpi grpc" ;;
	*) order="mpi grpc socket" ;;
	esac
	for t in $order; do
		echo "  round $r/$ROUNDS: $t"
		round "$r" "$t"
	done
done
/usr/bin/python3 bench/hostinfo.py # the host the table was measured on
/usr/bin/python3 - "$out" <<'PY'
import glob, json, statistics, sys
res, ver = {}, None
for f in glob.glob(sys.argv[1] + "/*-*-*.json"):
    b, t, r = f.rsplit("/", 1)[1][:-5].split("-")
    d = json.load(open(f))
    if d["status"] != "ok":
        sys.exit("%s: status %s" % (f, d["status"]))
    v = {"lat": lambda: d["latency_us"]["p50"], "bw": lambda: d["MBps"],
         "tp": lambda: d["rpc_per_s"], "tr": lambda: d["train"]["step_ms"]["p50"]}[b]()
    res.setdefault((b, t), {})[int(r)] = v
    if t == "mpi" and b == "tp":
        ver = d["tfgb"]["transport_version"]
names = {"lat": "latency p50 us, default payload", "bw": "bandwidth MB/s, inflight 16",
         "tp": "throughput 2x3 RPC/s", "tr": "ResNet-50 step 2x3 p50 ms"}
print("%-32s %-24s %-24s %-24s %s" % ("figure", "grpc", "socket", "mpi", "mpi/grpc per round"))
for b in ("lat", "bw", "tp", "tr"):
    cells = []
    for t in ("grpc", "socket", "mpi"):
        v = list(res[(b, t)].values())
        cells.append("%.0f (%.0f-%.0f)" % (statistics.median(v), min(v), max(v)))
    m, g = res[(b, "mpi")], res[(b, "grpc")]
    print("%-32s %-24s %-24s %-24s %s" % (names[b], *cells,
          " ".join("%.2f" % (m[r] / g[r]) for r in sorted(m))))
print("# mpi:", ver)
PY
