#!/bin/sh
# tfgb-alone: it shapes every NIC of a switch and holds figures against the rate
# t_switch.sh - per-host links (#41): network.topology = switch gives every
# process of a run a namespace and a NIC of its own, all joined by one
# bridge, the rate per NIC each direction (src/host/netem.h).
#   - bad combinations (a jitter past the delay, the switch with tfgb
#     latency, more than 64 hosts, an unknown topology) exit 2 at once,
#     naming file or -s, key and why, and build nothing; so does a slow
#     NIC (fault.rate, #44) off the switch, with a delay or a random rank;
#   - one slow NIC: the ring all-reduce's busbw bounded by its rate, the
#     result naming it, the calibration through it measuring it;
#   - tfgb collective, 4 ranks over socket, ring all-reduce of 4 MiB at
#     100 Mbit/s per NIC: busbw <= the rate (each NIC carries 2(N-1)/N of S
#     each way: a busbw past the rate is a bug) and >= 70 % of it (a ring
#     is paced by its slowest step on a loaded 2-core machine; headers
#     and acknowledgements take 6 % of the wire); the result's network
#     object says switch, its calibration within 10 % and no OFF;
#   - 1 PS x 4 workers pushing at 100 Mbit/s per NIC: the workers' sum
#     <= 1.05 x the rate (the PS's one NIC bounds it; each worker has a
#     NIC of its own, 4 x the rate together) and >= 60 % of it, and the
#     PS's NIC received what the workers' sent; pulling, the same bound
#     on the PS's NIC's other direction;
#   - 2 PSs x 3 workers: both PSs served on their own hosts, and the
#     run's own connections (the launcher sees PS 0's alone) said not
#     measured;
#   - a delay: one forwarder between TUN devices; the round trip, the
#     ring's busbw, every NIC at once, the PS's port and its drops;
#   - Ctrl-C and SIGKILL of a switch run leave no namespace held.
# Run from the top of the source tree; exits 0 (pass), 77 (skip) or 1.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
[ -x ./tfgb ] || skip "tfgb is not built; run 'make tfgb'"
for tool in tc ip; do
	command -v $tool >/dev/null 2>&1 || [ -x /usr/sbin/$tool ] || [ -x /sbin/$tool ] ||
		skip "no $tool (iproute2): the switch needs it"
done
need_py json python3
unshare -n true 2>/dev/null || unshare -Urn true 2>/dev/null ||
	skip "neither root nor user namespaces: no network namespace can be made"
unshare -n sh -c 'ip link add t_switch type bridge' 2>/dev/null ||
	unshare -Urn sh -c 'ip link add t_switch type bridge' 2>/dev/null ||
	skip "no bridge in this kernel: the switch needs one"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_switch.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
PORT=$(free_port)
RPORT=$(free_port)
cat >"$tmp/job.ini" <<EOT
[job]
transport = socket
rpc = push
warmup = $(slow 300)ms
duration = $(slow 1500)ms
timeout = 10s
[payload]
scheme = custom
iovecs = 1
iovec = 256KiB
[cluster]
ps = localhost:$PORT
workers = 4
[collective]
ranks = localhost:$RPORT
min_bytes = 4MiB
max_bytes = 4MiB
iterations = 3
warmup_iterations = 1
[network]
topology = switch
rate = 100mbit
EOT
get() {
	$PY -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$tmp/$1.json" "$2"
}
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
held() { ls -l /proc/[0-9]*/ns/net /proc/[0-9]*/fd 2>/dev/null | grep -qF -- "-> $1"; }

# bad combinations: exit 2 at once, one line naming where and the key,
# and no namespace made (no unshare of a network namespace, under strace
# when there is one: counting the machine's namespaces races with others)
tracer=
command -v strace >/dev/null 2>&1 && tracer="strace -f -qq -e trace=unshare -o $tmp/trace"
err2() { # err2 NAME KEY WORDS CMD...: exit 2, the key and WORDS in its line
	name=$1 key=$2 words=$3
	shift 3
	: >"$tmp/trace"
	# LeakSanitizer cannot run under ptrace (it ends the process, exit 1):
	# the sanitizer pass of .ci/run leaves leaks to the runs not traced
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		timeout 20 $tracer "$@" >"$tmp/$name.out" 2>&1
	rc=$?
	! grep -q CLONE_NEWNET "$tmp/trace" || bad "$name: a network namespace was made before the refusal"
	[ $rc = 2 ] || bad "$name: exit $rc, not 2: $(cat "$tmp/$name.out")"
	grep -q "$key" "$tmp/$name.out" && grep -q "$words" "$tmp/$name.out" ||
		bad "$name: no line naming $key and '$words': $(cat "$tmp/$name.out")"
}
err2 jitter "network.jitter" 'at most network.delay' \
	$TFGB collective -c "$tmp/job.ini" -s network.delay=1ms -s network.jitter=2ms
{ cat "$tmp/job.ini"; echo "delay = 2ms"; echo "jitter = 3ms"; } >"$tmp/bad.ini" # in [network]
err2 jitterfile 'bad.ini:[0-9]*: network.jitter = 3ms' 'at most network.delay' \
	$TFGB throughput -c "$tmp/bad.ini"
err2 latency 'network.topology = switch' 'use topology = pair' \
	$TFGB latency -c "$tmp/job.ini"
err2 hosts 'network.topology = switch' 'at most 64 hosts' \
	$TFGB collective -c "$tmp/job.ini" -s cluster.workers=65 -s collective.max_bytes=1MiB \
	-s collective.min_bytes=1MiB
err2 topo 'network.topology = ring' 'pair | switch' \
	$TFGB collective -c "$tmp/job.ini" -s network.topology=ring
# a slow NIC (fault.rate, #44): the switch's, one rank's for the whole run
err2 slowpair 'fault.rate = 25mbit' 'network.topology = switch' \
	$TFGB collective -c "$tmp/job.ini" -s network.topology=pair -s fault.rate=25mbit
err2 slowrandom 'fault.rate = 25mbit' 'fault.random_rank' \
	$TFGB collective -c "$tmp/job.ini" -s fault.rate=25mbit -s fault.random_rank=yes
err2 slowdelay 'fault.rate = 25mbit' 'network.delay' \
	$TFGB collective -c "$tmp/job.ini" -s fault.rate=25mbit -s network.delay=1ms

# a ring all-reduce over 4 ranks, 100 Mbit/s per NIC
if timeout 60 $TFGB collective -c "$tmp/job.ini" -f json -o "$tmp/coll.json" >"$tmp/coll.out" 2>&1
then
	bus=$(get coll "round(d['collective']['sizes'][0]['busbw_GBps'] * 8e3, 1)")
	within "$bus" 70 100 || bad "ring busbw $bus Mbit/s at 100 Mbit/s per NIC: not 70-100"
	[ "$(get coll 'd["network"]["topology"], d["network"]["configured"]["hosts"], d["network"]["off"]')" = \
		"('switch', 4, [])" ] || bad "collective: network object: $(get coll 'd["network"]')"
	r=$(get coll 'd["network"]["measured"]["rate_bps"] / 1e6')
	within "$r" 90 110 || bad "collective: calibrated $r Mbit/s through one NIC, not 90-110"
	[ "$(get coll 'd["network"]["measured"]["nics"]')" = None ] ||
		bad "a rank's result claims the launcher's NIC counts"
else
	bad "collective over the switch failed: $(tail -3 "$tmp/coll.out")"
fi

# one slow NIC (fault.rate, #44): rank 1's at 25 Mbit/s, the others' at
# 100: the ring moves at most the slow NIC's rate, at least half of it (3
# operations of 6 steps of 256 KiB each, a step's start and end waiting on
# TCP through the slow TBF: 67 % once on a loaded machine), far from the
# 70-100 the NICs carry above; the calibration, through host 1's NIC,
# measures it
if timeout 60 $TFGB collective -c "$tmp/job.ini" -s collective.min_bytes=1MiB \
	-s collective.max_bytes=1MiB -s fault.rate=25mbit -s fault.rank=1 -f json \
	-o "$tmp/slow.json" >"$tmp/slow.out" 2>&1
then
	sbus=$(get slow "round(d['collective']['sizes'][0]['busbw_GBps'] * 8e3, 1)")
	within "$sbus" 12.5 25 || bad "ring busbw $sbus Mbit/s with one NIC at 25 Mbit/s: not 12.5-25"
	[ "$(get slow 'd["network"]["configured"]["slow_nic"], d["fault"]["rate_bps"], d["network"]["off"]')" = \
		"({'host': 1, 'rate_bps': 25000000}, 25000000, [])" ] ||
		bad "slow NIC: not in the result: $(get slow 'd["network"], d["fault"]')"
	r=$(get slow 'd["network"]["measured"]["rate_bps"] / 1e6')
	within "$r" 22.5 27.5 || bad "slow NIC: calibrated $r Mbit/s through it, not 22.5-27.5"
else
	bad "collective with a slow NIC failed: $(tail -3 "$tmp/slow.out")"
fi

# 1 PS x 4 workers: the PS's one NIC bounds their sum.  The sum is of
# each worker's rate over its own window: a loaded machine that starts one
# worker late lets the others share the NIC for part of theirs (once seen:
# 112 % at a load of 12), so a sum out of bounds is measured once more; a
# NIC left unshaped is 4 x the rate every time
tput() { # tput NAME ARGS...: the run's JSON in $tmp/NAME.json, its sum in $sum
	name=$1
	shift
	for try in 1 2; do
		timeout 60 $TFGB throughput -c "$tmp/job.ini" -f json -o "$tmp/$name.json" "$@" \
			>"$tmp/$name.out" 2>&1 || return 1
		sum=$(get $name "round(d['Gbps'] * 1e3, 1)")
		! within "$sum" 60 105 || break
	done
}
if tput ps; then
	push=$sum
	within "$sum" 60 105 || bad "4 workers into 1 PS moved $sum Mbit/s at 100 Mbit/s per NIC: not 60-105"
	[ "$(get ps '[n["role"] for n in d["network"]["measured"]["nics"]]')" = \
		"['ps 0', 'worker 0', 'worker 1', 'worker 2', 'worker 3']" ] ||
		bad "throughput: the NICs: $(get ps 'd["network"]["measured"]["nics"]')"
	# what the PS's NIC received is what the workers' NICs sent (ACKs
	# and the control service's few bytes apart)
	ratio=$(get ps 'd["network"]["measured"]["nics"][0]["rx_bytes"] / sum(n["tx_bytes"] for n in d["network"]["measured"]["nics"][1:])')
	within "$ratio" 0.9 1.01 || bad "the PS's NIC received $ratio of what the workers' sent"
else
	bad "throughput over the switch failed: $(tail -3 "$tmp/ps.out")"
fi
# ... and pulling from it, its NIC's other direction (the host end's TBF;
# each worker's NIC alone would let 4 x the rate out of the PS)
if tput pull -s job.rpc=pull; then
	pull=$sum
	within "$pull" 60 105 || bad "4 workers pulled $pull Mbit/s from 1 PS at 100 Mbit/s per NIC: not 60-105"
else
	bad "pull throughput over the switch failed: $(tail -3 "$tmp/pull.out")"
fi

# 2 PSs x 3 workers: each PS on a host of its own, both served and both
# received (a PS whose address is not the launcher's is still started);
# the run's own connections, of which the launcher sees PS 0's alone, are
# said not measured rather than summed in part
if timeout 60 $TFGB throughput -c "$tmp/job.ini" -s cluster.ps_count=2 -s cluster.workers=3 \
	-f json -o "$tmp/ps2.json" >"$tmp/ps2.out" 2>&1; then
	[ "$(get ps2 'min(d["throughput"]["per_ps"]) > 0 and min(n["rx_bytes"] for n in d["network"]["measured"]["nics"][:2]) > 1e6')" = True ] ||
		bad "2 PSs: not both served: $(get ps2 'd["throughput"]["per_ps"]')"
	two=$(get ps2 "round(d['Gbps'] * 1e3, 1)")
	within "$two" 60 210 || bad "3 workers into 2 PSs moved $two Mbit/s at 100 Mbit/s per NIC: not 60-210"
	$TFGB throughput -c "$tmp/job.ini" -s cluster.ps_count=2 -s cluster.workers=3 \
		-s job.duration=$(slow 300)ms >"$tmp/ps2.txt" 2>&1
	grep -q "^# network, this run: not measured (network.topology = switch" "$tmp/ps2.txt" ||
		bad "2 PSs: the run's connections not said unmeasured: $(grep '^# network' "$tmp/ps2.txt")"
else
	bad "2 PSs x 3 workers over the switch failed: $(tail -3 "$tmp/ps2.out")"
fi

# a delay: the switch is one forwarder (a TUN device a NIC, a queue a
# receiving port).  3 ranks at 100 Mbit/s and 5 ms: the round trip is
# twice the delay, the ring's busbw within the rate, every NIC at once
# carried (the forwarder keeps up at 3 x 100 Mbit/s, or the run says
# OFF); then 1 PS x 3 workers pushing: the PS's port bounds their sum,
# what its queue dropped is the switch's congestion, not "off"
if timeout 60 $TFGB collective -c "$tmp/job.ini" -s cluster.workers=3 -s network.delay=5ms \
	-f json -o "$tmp/fwd.json" >"$tmp/fwd.out" 2>&1; then
	[ "$(get fwd 'd["network"]["mechanism"]["route"], d["network"]["configured"]["delay_ms"]')" = \
		"('tun-forwarder', 5.0)" ] || bad "delayed switch: mechanism: $(get fwd 'd["network"]["mechanism"]')"
	rtt=$(get fwd 'd["network"]["measured"]["rtt_ms"]')
	within "$rtt" 9 11 || bad "delayed switch: round trip $rtt ms at a 5 ms delay, not 9-11"
	fbus=$(get fwd "round(d['collective']['sizes'][0]['busbw_GBps'] * 8e3, 1)")
	off=$(get fwd 'd["network"]["off"]')
	within "$fbus" 1 100 || bad "delayed switch: ring busbw $fbus Mbit/s at 100 Mbit/s per NIC"
	all=$(get fwd 'd["network"]["measured"]["all_nics_goodput_bps"] / 1e6')
	# every NIC at once: either the forwarder carried 90 % of 3 x one NIC's
	# payload, or the rate is flagged OFF (a loaded machine)
	within "$all" 243 330 || [ "$off" != "[]" ] ||
		bad "delayed switch: every NIC at once carried $all Mbit/s of 3 x 100, and no OFF"
else
	bad "collective over the delayed switch failed: $(tail -3 "$tmp/fwd.out")"
fi
if timeout 60 $TFGB throughput -c "$tmp/job.ini" -s cluster.workers=3 -s network.delay=1ms \
	-f json -o "$tmp/fwdp.json" >"$tmp/fwdp.out" 2>&1; then
	fpush=$(get fwdp "round(d['Gbps'] * 1e3, 1)")
	within "$fpush" 50 105 || bad "delayed switch: 3 workers into 1 PS moved $fpush Mbit/s: not 50-105"
	[ "$(get fwdp 'd["network"]["measured"]["port_queue_drops"] >= 0 and d["network"]["measured"]["device_drops"] >= 0 and "loss" not in d["network"]["off"]')" = True ] ||
		bad "delayed switch: drops: $(get fwdp 'd["network"]["measured"]')"
	ratio=$(get fwdp 'd["network"]["measured"]["nics"][0]["rx_bytes"] / sum(n["tx_bytes"] for n in d["network"]["measured"]["nics"][1:])')
	within "$ratio" 0.85 1.01 || bad "delayed switch: the PS's NIC received $ratio of what the workers' sent"
else
	bad "throughput over the delayed switch failed: $(tail -3 "$tmp/fwdp.out")"
fi
# a forwarder outlives its run by 0.5 s at most; any whose parent is not
# a tfgb then is an orphan (other runs on the machine keep theirs)
sleep 1
for f in $(pgrep -x tfgb-link); do
	pp=$(ps -o ppid= -p "$f" | tr -d ' ')
	[ -z "$pp" ] || [ "$(ps -o comm= -p "$pp")" = tfgb ] || bad "a forwarder (tfgb-link $f) outlived its run"
done

# Ctrl-C and SIGKILL: no namespace of the run held afterwards
for sig in INT KILL; do
	$TFGB collective -c "$tmp/job.ini" -s collective.iterations=1000 >"$tmp/int.out" 2>&1 &
	tp=$!
	rk=
	for _ in $(seq 100); do
		rk=$(pgrep -f "tfgb collective -c /proc" -P $tp | head -1) && [ -n "$rk" ] && break
		sleep 0.1
	done
	[ -n "$rk" ] || bad "no rank under the switch run ($sig)"
	nsr="$(readlink "/proc/$tp/ns/net") $(readlink "/proc/$rk/ns/net" 2>/dev/null)"
	sleep 1
	kill -$sig $tp
	wait $tp
	sleep $(slow 1)
	for n in $nsr; do
		[ "$n" = "$(readlink /proc/self/ns/net)" ] && bad "the switch run ($sig) stayed in this namespace"
		held "$n" && bad "a process still holds the switch run's $n after SIG$sig"
	done
done
ip link 2>/dev/null | grep -q ' \(tfgb\|sw\)[0-9]*[:@]' && bad "a NIC of the switch in this namespace"

[ "$problems" = 0 ] || fail "$problems problem(s)"
echo "ok: switch: ring busbw $bus Mbit/s, 1 PS x 4 workers push $push, pull $pull Mbit/s at 100 Mbit/s per NIC; one NIC at 25, ring $sbus; with 5 ms, ring $fbus, every NIC $all; errors; nothing left"
