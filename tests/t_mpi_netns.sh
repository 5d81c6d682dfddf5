#!/bin/sh
# tfgb-alone: makes network namespaces and a bridge, which the whole machine sees; MPI ranks busy-poll
# t_mpi_netns.sh - the mpi transport (tfgb-mpi(7)) across two "hosts":
# network namespaces a (198.18.0.1) and b (198.18.0.2) joined by a bridge
# (tests/netns.sh).  One mpirun, started in a, places rank 0 (the PS) on
# a and rank 1 (the worker) on b: a hostfile names the two addresses and
# Open MPI's rsh launcher (plm_rsh_agent) is a script that runs the
# remote daemon's command in b's namespace instead of over ssh; Open
# MPI's own connections (oob) and the ranks' bytes (btl tcp) are kept to
# 198.18.0.0/24.  Latency (Echo) and bandwidth (Ack, inflight 16) with
# verify = yes: the result says each host holds one of the 2 ranks, and
# the bytes that crossed a's veth are at least what the calls carried.
# Throughput as one launch (the PS on a, two workers on b) ends well and
# names no rank as ended.  The worker rank killed on b: the PS on a names
# it, with b's host name.
# The namespaces and every process are gone afterwards, even on failure.
# Root only (skips otherwise); mpirun comes from Debian's openmpi-bin.
. tests/lib.sh
. tests/netns.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3
command -v mpirun >/dev/null 2>&1 || skip "no mpirun (Debian package openmpi-bin)"
$TFGB version | grep -q '^mpi: compiled in' ||
	skip "tfgb built without the mpi transport (MPI=0: needs libopenmpi-dev)"
why=$(netns_check)
[ -z "$why" ] || skip "$why"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_leaks_unchecked

lab=tfgb-$$
A=198.18.0.1 B=198.18.0.2 hb=tfgb-hb-$$
out=$(mktemp -d)
cleanup() {
	trap - EXIT INT TERM
	netns_teardown "$lab"
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

{ netns_switch "$lab" && netns_host "$lab" ha $A && netns_host "$lab" hb $B; } \
	>"$out/ip.err" 2>&1 || skip "cannot build the namespaces (veth, bridge): $(cat "$out/ip.err")"

# mpirun's "remote shell" runs b's daemon in b's namespace; b also gets a
# host name of its own, as a second machine has: what tfgb says about b's
# ranks must name b, not a
mpirun=$(netns_mpirun "$lab" "$out" $A $B "$hb") || fail "cannot write the rsh agent"
printf '%s slots=1\n%s slots=1\n' $A $B >"$out/hosts"
MPIRUN="$mpirun --hostfile $out/hosts -np 2"
MPIRUN_3="$mpirun --hostfile $out/hosts3 -np 3"
J="-s job.transport=mpi -s mpi.btl=tcp,self -s cluster.ps=$A:50001 -s job.timeout=$(slow 20)s"
J="$J -s job.warmup=$(slow 100)ms -s job.duration=$(slow 400)ms -s monitor.interval=0"
J="$J -s payload.scheme=custom -s payload.iovec=10B,3KiB,100KiB -s job.verify=yes"
b=$((10 + 3072 + 102400))

# veth BYTES: a's eth0 counters (received, sent)
veth() {
	echo $(($(ip netns exec "$lab-ha" cat /sys/class/net/eth0/statistics/rx_bytes))) \
		$(($(ip netns exec "$lab-ha" cat /sys/class/net/eth0/statistics/tx_bytes)))
}

# run BENCH INFLIGHT BACK: one run across the hosts; the calls' bytes
# (b each way, or b there and BACK back) crossed a's veth
run() {
	set -- "$1" "$2" "$3" $(veth)
	$MPIRUN $TFGB "$1" $J -s job.inflight="$2" -q -f json >"$out/r.json" 2>"$out/e" ||
		fail "$1 across the hosts: exit $?: $(tail -n 8 "$out/e")"
	json_check "d['status'] == 'ok' and d['calls'] > 0 and d['errors'] == 0
and d['transport'] == 'mpi'
and 'btl tcp,self' in d['tfgb']['transport_version']
and '1 of 2 ranks on this host' in d['tfgb']['transport_version']" <"$out/r.json" ||
		fail "$1 across the hosts: bad result: $(cat "$out/r.json")"
	n=$($PY -c 'import json,sys; d=json.load(sys.stdin); print(d["calls"] + d["warmup_calls"])' \
		<"$out/r.json")
	set -- "$@" $(veth)
	# rank 0 (the PS) is on a: it received the requests, sent the replies
	[ $(($6 - $4)) -ge $((n * b)) ] && [ $(($7 - $5)) -ge $((n * $3)) ] ||
		fail "$1: a's veth received $(($6 - $4)) B and sent $(($7 - $5)) B for $n calls of $b B"
}
run latency 1 $b
echo "ok: latency, PS on host a, worker on host b (btl tcp over the veths): verified, bytes crossed"
run bandwidth 16 8
echo "ok: bandwidth inflight 16 across the hosts: verified, bytes crossed"

# throughput as one launch, the PS on a and two workers on b: a run that
# ends well says nothing of ranks that ended (the PS of one launch stops
# itself with a SIGTERM once the reports are in, which the rank-death
# report once took for the launcher's and named b's ranks as dead)
printf '%s slots=1\n%s slots=2\n' $A $B >"$out/hosts3"
$MPIRUN_3 $TFGB throughput $J -s cluster.workers=2 -q -f json >"$out/tp.json" 2>"$out/e" ||
	fail "throughput across the hosts: exit $?: $(tail -n 8 "$out/e")"
json_check "d['status'] == 'ok' and d['calls'] > 0 and d['errors'] == 0" <"$out/tp.json" ||
	fail "throughput across the hosts: bad result: $(cat "$out/tp.json")"
! grep -q "ended" "$out/e" || fail "throughput across the hosts ended well but: $(cat "$out/e")"
echo "ok: throughput 1 PS (a) x 2 workers (b): no rank named as ended"

# the worker rank, on b, killed mid-run: the PS rank on a names it with
# b's host name.  It cannot see b's processes, so it says the rank may
# have ended, when the launcher stops it; mpirun's status is the dead
# rank's (tfgb-mpi(7)), and nothing is left on either host
$MPIRUN $TFGB latency $J -s job.duration=$(slow 30)s >"$out/o" 2>"$out/e" &
mpi=$!
mpi_kill_rank "cluster.ps=$A:50001" 1 "$out/e" $mpi
w=$mk_pid
grep -qF "tfgb: rank 0 (PS 0) on host $(hostname): rank 1 (worker 0) on host $hb, pid $w may have ended" \
	"$out/e" || fail "rank death: the PS does not name the worker on b: $(cat "$out/e")"
echo "ok: the worker rank on b killed: the PS on a names it (rank, role, b's host name)"

netns_teardown "$lab"
left=$(netns_left "$lab")
[ -z "$left" ] || fail "namespaces left: $left"
no_leftovers "cluster.ps=$A:50001" "the MPI runs"
echo "ok: no namespace or process left"
