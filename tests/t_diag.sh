#!/bin/sh
# t_diag.sh - diagnostics told apart at once, on loopback, for the grpc and
# the socket transport (the verbs transport's are in check_peer, on the
# simulated device).  Each run has job.timeout = 20s and must end within
# FAST_S seconds with exit status 1 and a message that names the cause:
#   1. a PS host that does not resolve: "cannot resolve 'no-such-host.invalid'"
#      naming the process (worker 0: PS 0); `tfgb serve --task 0` likewise;
#   2. an unprivileged user asking for port 80 (setpriv to nobody):
#      "permission denied: port 80 needs privileges", never "address in use";
#   3. an HTTP server (python3 -m http.server): "it is an HTTP server";
#   4. a server's control port: the grpc transport says "control service
#      port (cluster.control)" and the port above it, the socket transport
#      that it speaks HTTP/2 and names cluster.control;
#   5. the other transport's server: "socket transport" / "HTTP/2";
#   6. a throughput worker whose cluster.control host does not resolve:
#      "cannot reach the control service at ...: cannot resolve ...";
#   7. SIGTERM to a worker waiting for its PS, or for the control service,
#      that do not listen: it ends at once, "interrupted while connecting",
#      not at its 20 s job.timeout.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import http.server' 2>/dev/null || skip "no /usr/bin/python3"

FAST_S=$((4 * SLOW)) # "at once": a connect, a look at the peer, the report
out=$(mktemp -d)
http='' srv=''
cleanup_on_exit "$out"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

QUICK="-s job.timeout=20s -s job.warmup=100ms -s job.duration=$(slow 300)ms"

# expect WHAT TEXT CMD...: CMD exits 1 within FAST_S seconds, saying TEXT;
# one that runs on is stopped (SIGTERM, then SIGKILL 2 s later: SIGTERM may
# be what it ignores) at FAST_S + 1 s, where it has failed
# already, instead of waiting out its 20 s job.timeout (exit status 124)
expect() {
	what=$1 text=$2
	shift 2
	t0=$(now_ms)
	rc=0
	timeout -k 2 $((FAST_S + 1)) "$@" >"$out/stdout" 2>"$out/stderr" || rc=$?
	took=$(($(now_ms) - t0))
	if [ "$rc" != 1 ]; then
		bad "$what: exit status $rc, not 1: $(cat "$out/stderr")"
	elif ! grep -qF -- "$text" "$out/stderr"; then
		bad "$what: no '$text' in: $(cat "$out/stderr")"
	elif [ "$took" -gt $((FAST_S * 1000)) ]; then
		bad "$what: took ${took} ms, more than ${FAST_S} s: $(cat "$out/stderr")"
	else
		echo "ok: $what ($took ms)"
	fi
}

# 1. a host that does not resolve
for tr in grpc socket; do
	expect "$tr: unresolvable PS host" "worker 0: PS 0: cannot resolve 'no-such-host.invalid'" \
		$TFGB latency -q $QUICK -s job.transport=$tr -s cluster.ps=no-such-host.invalid:50001
	expect "$tr: serve on an unresolvable host" "cannot resolve 'no-such-host.invalid'" \
		$TFGB serve -q -s job.transport=$tr -s cluster.ps=no-such-host.invalid:50001 --task 0
done

# 2. a privileged port, as an unprivileged user
first=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null || echo 0)
if [ "$(id -u)" != 0 ]; then
	skip_part "port 80 as nobody: needs root to switch to nobody"
elif [ "$first" -le 80 ]; then
	skip_part "port 80 as nobody: net.ipv4.ip_unprivileged_port_start is $first here"
elif ! command -v setpriv >/dev/null; then
	skip_part "port 80 as nobody: no setpriv (Debian package util-linux)"
else
	# a copy nobody can run, wherever the tree is
	mkdir "$out/bin" && cp "$TFGB" "$out/bin/tfgb" && chmod 755 "$out" "$out/bin" "$out/bin/tfgb"
	asnobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	for tr in grpc socket; do
		expect "$tr: port 80 as nobody" "permission denied: port 80 needs privileges" \
			$asnobody "$out/bin/tfgb" serve -q -s job.transport=$tr -s cluster.ps=127.0.0.1:80 \
			--task 0
		grep -q "address in use" "$out/stderr" && bad "$tr: port 80 said 'address in use'"
		# the server a latency run starts for itself says the same
		expect "$tr: latency on port 80 as nobody" "permission denied: port 80 needs privileges" \
			$asnobody "$out/bin/tfgb" latency -q $QUICK -s job.transport=$tr \
			-s cluster.ps=127.0.0.1:80
	done
fi

# 3. an HTTP/1.x server
port=$(free_port) || fail "no free port"
$PY -m http.server "$port" --bind 127.0.0.1 --directory "$out" >"$out/http.log" 2>&1 &
http=$!
wait_listening "$port" || fail "python3 -m http.server did not listen on $port"
for tr in grpc socket; do
	expect "$tr: an HTTP server" "it is an HTTP server, not a tfgb server" \
		$TFGB latency -q $QUICK -s job.transport=$tr -s cluster.ps=127.0.0.1:$port
done
kill "$http"
wait "$http" 2>/dev/null
http=''

# 4. and 5. a server's control port; the other transport's server
for tr in grpc socket; do
	port=$(free_port) || fail "no free port"
	$TFGB serve -s job.transport=$tr -s cluster.ps=127.0.0.1:$port >"$out/serve.log" 2>&1 &
	srv=$!
	wait_line "$out/serve.log" "listening on" 10 || fail "$tr: serve did not start"
	ctl=$((port - 1))
	if [ $tr = grpc ]; then
		expect "grpc: the control port" "control service port (cluster.control)" \
			$TFGB latency -q $QUICK -s job.transport=grpc -s cluster.ps=127.0.0.1:$ctl
		grep -qF "one above ($port)" "$out/stderr" || bad "grpc: the control port: no '($port)'"
		expect "socket client, grpc server" "it speaks HTTP/2" \
			$TFGB latency -q $QUICK -s job.transport=socket -s cluster.ps=127.0.0.1:$port
	else
		expect "socket: the control port" "cluster.control" \
			$TFGB latency -q $QUICK -s job.transport=socket -s cluster.ps=127.0.0.1:$ctl
		expect "grpc client, socket server" "a tfgb server of the socket transport" \
			$TFGB latency -q $QUICK -s job.transport=grpc -s cluster.ps=127.0.0.1:$port
	fi
	# 6. a worker whose control service host does not resolve (its PS
	#    answers): said at once, naming the control service
	expect "$tr: unresolvable control host" \
		"worker 0: cannot reach the control service at 'no-such-host.invalid:$ctl': cannot resolve 'no-such-host.invalid'" \
		$TFGB throughput -q $QUICK --task 0 -s job.transport=$tr -s cluster.ps=127.0.0.1:$port \
		-s cluster.control=no-such-host.invalid:$ctl
	# none of it stopped the hand-started server
	kill -0 "$srv" 2>/dev/null || bad "$tr: the hand-started server died"
	kill "$srv"
	wait "$srv" 2>/dev/null
	srv=''
done

# 7. SIGTERM (as Ctrl-C's SIGINT) 1 s into a wait for a connection; SIGKILL
#    1 s later ends one that ignores it (exit 137)
port=$(free_port) || fail "no free port"
for tr in grpc socket; do
	expect "$tr: SIGTERM while waiting for the PS" \
		"worker 0: PS 0: interrupted while connecting to '127.0.0.1:$port'" \
		timeout -k 1 --preserve-status 1 $TFGB throughput -q $QUICK --task 0 -s job.transport=$tr \
		-s cluster.ps=127.0.0.1:$port
done
ps_port=$(free_port) || fail "no free port"
$TFGB serve -s cluster.ps=127.0.0.1:$ps_port >"$out/serve.log" 2>&1 &
srv=$!
wait_line "$out/serve.log" "listening on" 10 || fail "serve did not start"
expect "SIGTERM while waiting for the control service" \
	"worker 0: interrupted while connecting to the control service at '127.0.0.1:$port'" \
	timeout -k 1 --preserve-status 1 $TFGB throughput -q $QUICK --task 0 -s cluster.ps=127.0.0.1:$ps_port \
	-s cluster.control=127.0.0.1:$port
kill "$srv"
wait "$srv" 2>/dev/null
srv=''

[ "$problems" = 0 ] || fail "$problems problem(s)"
echo "t_diag: ok"
