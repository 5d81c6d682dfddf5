#!/bin/sh
# tests/soak.sh - a soak test (not part of `make check`; `make soak`): one
# long-lived `tfgb serve` per transport (grpc, socket) on loopback, and for
# SOAK_TIME seconds (default 180) a mix of clients against them, one after
# the other, transports alternating: latency (schemes uniform, random, skew,
# custom, verify = yes), bandwidth (inflight 1, 4, 16) and throughput (two
# workers started with --task, rpc echo, push, pull; the serve hosts the
# control service).  Every client must succeed.  Every SAMPLE_S seconds
# (default 3) each server's RSS (/proc/PID/status VmRSS) and open
# descriptors (/proc/PID/fd) are sampled.  After a warm-up of WARMUP_ROUNDS
# rounds (default 8: the mix repeats every 4 rounds of 6 clients, about 30 s)
# the RSS level (the median of the last third of the samples) may not exceed
# that of the first third by more than RSS_GROWTH_KIB (default 8192), and no
# descriptor count may exceed the warm-up's highest by more than FD_GROWTH
# (default 4).  The samples are kept in SOAK_LOG if set, and summed up at the
# end.  The servers must stop on SIGTERM with status 0.
#
# SOAK_VALGRIND=1 runs every tfgb (servers and clients) under
#   valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite
# for SOAK_ROUNDS rounds (default 1) of the mix instead of a time, with
# timeouts suited to valgrind and without the growth bounds: a client or a
# server (at its exit) with a memory error or a definite leak fails the run
# (`make valgrind`).  Valgrind's own messages are in the output.
# Run from the top of the tree.  Exit 0 pass, 77 skip, anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import json' 2>/dev/null || skip "no /usr/bin/python3"

SOAK_TIME=${SOAK_TIME:-180}
SAMPLE_S=${SAMPLE_S:-3}
WARMUP_ROUNDS=${WARMUP_ROUNDS:-8}
RSS_GROWTH_KIB=${RSS_GROWTH_KIB:-8192}
FD_GROWTH=${FD_GROWTH:-4}
VG=
timeout_s=5
if [ "${SOAK_VALGRIND:-0}" = 1 ]; then
	command -v valgrind >/dev/null 2>&1 || skip "no valgrind (Debian package valgrind)"
	VG="valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite"
	VG="$VG --show-leak-kinds=definite --num-callers=30"
	timeout_s=60
fi
out=$(mktemp -d)
pids=
sampler=
cleanup() {
	[ -n "$sampler" ] && kill "$sampler" 2>/dev/null
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# one serve per transport, each with its control service one port below
gport=$(free_ports 1) || fail "no free port"
sport=$(free_ports 1) || fail "no free port"
[ "$sport" != "$gport" ] && [ "$sport" != $((gport - 1)) ] && [ "$sport" != $((gport + 1)) ] ||
	sport=$(free_ports 1)
port_of() { if [ "$1" = grpc ]; then echo "$gport"; else echo "$sport"; fi; }
$VG $TFGB serve -s job.transport=grpc -s cluster.ps=127.0.0.1:$gport -q 2>"$out/grpc.err" &
grpc_pid=$!
$VG $TFGB serve -s job.transport=socket -s cluster.ps=127.0.0.1:$sport -q 2>"$out/socket.err" &
socket_pid=$!
pids="$grpc_pid $socket_pid"
wait_listening "$gport" $((timeout_s * 4)) || fail "grpc serve did not listen: $(cat "$out/grpc.err")"
wait_listening "$sport" $((timeout_s * 4)) || fail "socket serve did not listen: $(cat "$out/socket.err")"
wait_listening $((sport - 1)) $((timeout_s * 4)) || fail "socket serve: no control service"
echo "grpc serve: pid $grpc_pid on 127.0.0.1:$gport; socket serve: pid $socket_pid on 127.0.0.1:$sport"

# the sampler: "epoch-seconds rss_grpc fds_grpc rss_socket fds_socket" lines
(
	while :; do
		line="$(date +%s)"
		for p in $grpc_pid $socket_pid; do
			r=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$p/status" 2>/dev/null)
			f=$(ls "/proc/$p/fd" 2>/dev/null | wc -l)
			line="$line ${r:-0} $f"
		done
		echo "$line"
		sleep "$SAMPLE_S"
	done
) >"$out/samples" &
sampler=$!

# client TRANSPORT KIND N: one client run, counted; its output kept on failure
runs=0 failures=0
client() {
	tr=$1 kind=$2 n=$3
	p=$(port_of "$tr")
	b="-s job.transport=$tr -s cluster.ps=127.0.0.1:$p -s job.warmup=100ms -s job.duration=1s"
	b="$b -s job.timeout=${timeout_s}s -q -f json"
	case $kind in
	latency)
		case $((n % 4)) in
		0) opts="-s payload.scheme=uniform" ;;
		1) opts="-s payload.scheme=random -s job.seed=$n" ;;
		2) opts="-s payload.scheme=skew -s payload.bias=medium" ;;
		3) opts="-s payload.scheme=custom -s payload.iovec=7B,1KiB,100KiB,2MiB" ;;
		esac
		# shellcheck disable=SC2086
		$VG $TFGB latency $b $opts -s job.verify=yes >"$out/c.json" 2>"$out/c.err"
		;;
	bandwidth)
		case $((n % 4)) in 0) inf=1 ;; 1) inf=4 ;; 2) inf=16 ;; 3) inf=64 ;; esac
		# shellcheck disable=SC2086
		$VG $TFGB bandwidth $b -s job.inflight=$inf >"$out/c.json" 2>"$out/c.err"
		;;
	throughput)
		case $((n % 4)) in 0 | 3) rpc='echo' ;; 1) rpc='push' ;; 2) rpc='pull' ;; esac
		# shellcheck disable=SC2086
		$VG $TFGB throughput $b -s cluster.workers=2 -s job.rpc=$rpc --task 1 \
			>/dev/null 2>"$out/c1.err" &
		w1=$!
		# shellcheck disable=SC2086
		$VG $TFGB throughput $b -s cluster.workers=2 -s job.rpc=$rpc --task 0 \
			>"$out/c.json" 2>"$out/c.err"
		rc0=$?
		wait "$w1" || { rc0=1; cat "$out/c1.err" >>"$out/c.err"; }
		[ $rc0 = 0 ]
		;;
	esac
	rc=$?
	runs=$((runs + 1))
	if [ $rc = 0 ]; then
		json_check 'd["status"] == "ok" and d["calls"] > 0 and d["errors"] == 0' <"$out/c.json" || rc=99
	fi
	if [ $rc != 0 ]; then
		failures=$((failures + 1))
		echo "FAIL: $tr $kind #$n (exit $rc):"
		sed 's/^/    /' "$out/c.err" | tail -n 40
		head -c 400 "$out/c.json"
	fi
	for s in $grpc_pid $socket_pid; do
		kill -0 "$s" 2>/dev/null || fail "a server died: $(cat "$out/grpc.err" "$out/socket.err")"
	done
}

start=$(date +%s)
warm_end=
n=0
while :; do
	[ "$n" = "$WARMUP_ROUNDS" ] && warm_end=$(date +%s)
	if [ -n "$VG" ]; then
		[ "$n" -ge "${SOAK_ROUNDS:-1}" ] && break
	else
		[ $(($(date +%s) - start)) -ge "$SOAK_TIME" ] && break
	fi
	for kind in latency bandwidth throughput; do
		for tr in grpc socket; do
			client "$tr" "$kind" "$n"
		done
	done
	n=$((n + 1))
done
elapsed=$(($(date +%s) - start))
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
sampler=
[ -n "$SOAK_LOG" ] && cp "$out/samples" "$SOAK_LOG"

# the servers stop cleanly (under valgrind: with no error and no definite leak)
for tr in grpc socket; do
	if [ $tr = grpc ]; then p=$grpc_pid; else p=$socket_pid; fi
	kill -TERM "$p"
	rc=0
	wait "$p" || rc=$?
	if [ "$rc" != 0 ]; then
		failures=$((failures + 1))
		echo "FAIL: $tr serve: exit status $rc after SIGTERM:"
		sed 's/^/    /' "$out/$tr.err" | tail -n 60
	fi
done
pids=
echo "soak: $runs client runs in ${elapsed}s ($n rounds), $failures failures"

if [ -z "$VG" ]; then
	# growth after the warm-up, per server
	[ -n "$warm_end" ] || fail "the soak ended within its warm-up of $WARMUP_ROUNDS rounds: raise SOAK_TIME"
$PY - "$out/samples" "$warm_end" "$RSS_GROWTH_KIB" "$FD_GROWTH" "$start" <<'EOF' || failures=$((failures + 1))
import statistics, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 5]
warm, rss_bound, fd_bound, t0 = (int(a) for a in sys.argv[2:6])
bad = 0
for i, name in ((1, "grpc"), (3, "socket")):
    w = [r for r in rows if r[0] <= warm and r[i] > 0]
    a = [r for r in rows if r[0] > warm and r[i] > 0]
    if not w or len(a) < 6:
        print("FAIL: %s: too few samples (%d in the warm-up, %d after; raise SOAK_TIME)"
              % (name, len(w), len(a)))
        bad = 1
        continue
    # RSS moves with the calls in flight: compare the level (median) of the
    # first and the last third after the warm-up
    k = len(a) // 3
    first = statistics.median(r[i] for r in a[:k])
    last = statistics.median(r[i] for r in a[-k:])
    fw, fa = max(r[i + 1] for r in w), max(r[i + 1] for r in a)
    print("%s serve: RSS %d KiB at the start, %d KiB at the end of the warm-up (%ds in), "
          "median %d KiB in the first third after it, %d KiB in the last (bound +%d KiB), "
          "peak %d KiB; descriptors: warm-up peak %d, peak after %d (bound +%d); %d samples"
          % (name, w[0][i], w[-1][i], warm - t0, first, last, rss_bound, max(r[i] for r in rows),
             fw, fa, fd_bound, len(rows)))
    if last > first + rss_bound:
        print("FAIL: %s serve: RSS grew by %d KiB after the warm-up" % (name, last - first))
        bad = 1
    if fa > fw + fd_bound:
        print("FAIL: %s serve: %d more descriptors after the warm-up" % (name, fa - fw))
        bad = 1
sys.exit(bad)
EOF
fi
[ "$failures" = 0 ] || fail "$failures failures (above)"
echo ok
