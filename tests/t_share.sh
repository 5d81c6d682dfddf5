#!/bin/sh
# t_share.sh - runs that share one port's server (src/host/lease.h), for the
# grpc and the socket transport, on loopback:
#   1. two latency runs started at once on a port where nothing listens:
#      both complete (status ok, calls measured, no error), one server
#      served both, and once both ended nothing listens there within
#      DEADLINE_S and no server process is left;
#   2. run B starts while run A (which started the server) is measuring and
#      ends after it: A's end does not stop the server under B (B completes
#      with its calls), the server is still there between the two ends,
#      and it is gone within DEADLINE_S after B's;
#   3. a server started by hand survives two runs at once.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3

DEADLINE_S=$((5 * SLOW)) # a server's own stop after its last run: 100 ms a look
out=$(mktemp -d)
srv='' a='' b=''
cleanup_on_exit "$out"

# servers PORT: pids of tfgb serve processes whose lease is PORT's (their
# environment names it), one a line
servers() {
	for d in /proc/[0-9]*; do
		{ tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -q "^TFGB_LEASE=.*/serve-$1.lease$" &&
			echo "${d#/proc/}"
	done
}

# ok_run NAME FILE: the JSON result in FILE is a complete run with calls
ok_run() {
	json_check 'd["status"] == "ok" and d["calls"] > 0 and d["errors"] == 0' <"$2" ||
		bad "$1: not a complete run: $(head -c 300 "$2"; cat "$2.err")"
}

# gone PORT WHAT: nothing listens at PORT and no leased server is left
gone() {
	wait_closed "$1" "$DEADLINE_S" || bad "$2: something still listens on $1"
	[ -z "$(servers "$1")" ] || bad "$2: a server is left: $(servers "$1")"
}

# at_once WHAT: two latency runs of $job started together both complete
at_once() {
	$TFGB latency $job -s job.duration=$(slow 1)s >"$out/a" 2>"$out/a.err" &
	a=$!
	$TFGB latency $job -s job.duration=$(slow 1)s >"$out/b" 2>"$out/b.err" &
	b=$!
	wait "$a" || bad "$1: run A exited $?: $(cat "$out/a.err")"
	wait "$b" || bad "$1: run B exited $?: $(cat "$out/b.err")"
	a='' b=''
	ok_run "$1: A" "$out/a"
	ok_run "$1: B" "$out/b"
}

for tr in grpc socket; do
	port=$(free_port) || fail "no free port"
	job="-q -f json -s job.transport=$tr -s cluster.ps=127.0.0.1:$port
	     -s job.warmup=$(slow 100)ms -s job.timeout=$(slow 20)s -s payload.iovecs=2"

	# 1. two at once
	at_once "$tr: at once"
	gone "$port" "$tr: at once"

	# 2. B starts during A and ends after it
	$TFGB latency $job -s job.duration=$(slow 2)s >"$out/a" 2>"$out/a.err" &
	a=$!
	wait_listening "$port" 20 || bad "$tr: A's server never listened"
	$TFGB latency $job -s job.duration=$(slow 4)s >"$out/b" 2>"$out/b.err" &
	b=$!
	wait "$a" || bad "$tr: overlapping: run A exited $?: $(cat "$out/a.err")"
	a=''
	if kill -0 "$b" 2>/dev/null; then
		listening "$port" || bad "$tr: A's end stopped the server B uses"
	else
		bad "$tr: B ended before A: the overlap was not tested"
	fi
	wait "$b" || bad "$tr: overlapping: run B exited $?: $(cat "$out/b.err")"
	b=''
	ok_run "$tr: overlapping: A" "$out/a"
	ok_run "$tr: overlapping: B" "$out/b"
	gone "$port" "$tr: overlapping"

	# 3. a hand-started server survives runs
	$TFGB serve -q -s job.transport=$tr -s cluster.ps=127.0.0.1:$port >"$out/srv" 2>&1 &
	srv=$!
	wait_listening "$port" 20 || bad "$tr: the hand-started server never listened"
	at_once "$tr: hand-started"
	kill -0 "$srv" 2>/dev/null || bad "$tr: a run stopped the hand-started server"
	listening "$port" || bad "$tr: the hand-started server no longer listens"
	kill "$srv"
	wait "$srv" 2>/dev/null
	srv=''
	echo "ok: $tr"
done

# 4. a leased server stopped by SIGTERM just after its last user let go,
# before its next look at the lease (100 ms a look): nobody holds the
# lease, so its files go too (they were left for good when the signal
# came first: a killed train launcher's PS, seen under ASan)
if command -v flock >/dev/null 2>&1; then
	port=$(free_port) || fail "no free port"
	lease="$out/serve-$port.lease"
	: >"$out/serve-$port.start"
	: >"$lease"
	flock -s "$lease" sleep 1 &
	holder=$!
	TFGB_LEASE="$lease" $TFGB serve -q -s job.transport=socket -s cluster.ps=127.0.0.1:$port \
		>"$out/srv" 2>&1 &
	srv=$!
	wait_listening "$port" 20 || bad "leased: the server never listened: $(cat "$out/srv")"
	wait "$holder"
	kill -TERM "$srv"
	wait "$srv" 2>/dev/null
	srv=''
	[ ! -e "$lease" ] && [ ! -e "$out/serve-$port.start" ] ||
		bad "leased, stopped by a signal with nobody holding it: files left: $(ls "$out")"
	echo "ok: a leased server's files go when a signal stops it first"
fi

[ "$problems" = 0 ] || fail "$problems problem(s)"
echo "t_share: ok"
