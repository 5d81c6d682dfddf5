#!/bin/sh
# tfgb-alone: counts a server's wake-ups per call, which other work on its CPU disturbs
# t_serve_wakeups.sh - `tfgb serve` (gRPC, default server.threads: one
# completion-queue thread) hosting its control service, as PS 0 does by
# default, sleeps at most about once per call: one Echo at a time wakes its
# thread once (its epoll_wait).  A second thread of the process that polls
# gRPC (the control service's, before it waited on a non-polling queue, or a
# second completion-queue thread, the default on a 2-CPU machine before)
# takes gRPC's poller role in turn with it, and every call then costs two or
# three voluntary context switches (futex and eventfd hand-overs; 2.8 a call
# measured).
# Counted from /proc (voluntary_ctxt_switches of every thread), so the
# figure does not depend on how busy the machine is: a preempted thread
# switches involuntarily.
# Run from the top of the tree; exit 0 pass, 77 skip, anything else fail.
. tests/lib.sh
CALLS=3000

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_serve_wakeups.XXXXXX") || exit 1
srv=""
cleanup_on_exit "$tmp"

[ -x "$TFGB" ] || skip "skip: $TFGB is not built (make tfgb)"
# under valgrind (tests/valgrind.sh) the threads are serialized by valgrind itself
case "$TFGB" in *vg-tfgb.sh) skip "skip: context switches are not tfgb's own under valgrind" ;; esac
[ -d /proc/self/task ] || skip "skip: no /proc/PID/task"

# start_server PORT: 0 when ready, 1 when it exited (status in $srv_rc), 2 on timeout
start_server() {
	: >"$tmp/ready"
	TFGB_READY_FD=3 "$TFGB" serve -s cluster.ps="127.0.0.1:$1" 3>"$tmp/ready" 2>"$tmp/err" &
	srv=$!
	wait_ready "$tmp/ready" "$srv" 10
}

# voluntary context switches of every thread of the server so far
switches() {
	cat /proc/"$srv"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }'
}

base=$((52100 + $$ % 1000))
start_on_free_port server $base 2 "$tmp/err" start_server
grep -q "(grpc, 1 thread); control service on 127.0.0.1:$((port - 1))" "$tmp/err" ||
	fail "not one thread hosting the control service: $(cat "$tmp/err")"

before=$(switches)
"$TFGB" latency -q -f json -s cluster.ps="127.0.0.1:$port" -s job.iterations=$CALLS \
	-s job.warmup=0s -s payload.iovecs=1 -s payload.categories=small >"$tmp/out" 2>"$tmp/cerr" ||
	fail "tfgb latency: $(cat "$tmp/cerr")"
after=$(switches)
json_check "d['status'] == 'ok' and d['calls'] == $CALLS and d['errors'] == 0" <"$tmp/out" ||
	fail "latency run: $(cat "$tmp/out")"
kill -0 "$srv" 2>/dev/null || fail "the server died"

per=$(awk -v a="$before" -v b="$after" -v n=$CALLS 'BEGIN { printf "%.2f", (b - a) / n }')
echo "server: $((after - before)) voluntary context switches for $CALLS calls ($per a call)"
# one a call at most, with room for the connection's own and the timers'
awk -v p="$per" 'BEGIN { exit !(p < 1.5) }' ||
	fail "$per voluntary context switches a call (at most 1.5): threads hand gRPC's poller over"
echo "PASS"
