#!/bin/sh
# t_serve.sh - `tfgb serve` (gRPC) against an independent client written with
# python3-grpcio (tests/interop/wire_client.py): the wire contract (proto/tfgb.proto)'s methods and status
# codes, the readiness line on TFGB_READY_FD, a port already in use, --task
# out of range, no local address, and a graceful stop on SIGTERM.
# Run from the top of the tree; exit 0 pass, 77 skip (reason on the last
# line), anything else fail.
. tests/lib.sh
MAXMSG=1048576

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_serve.XXXXXX") || exit 1
srv=""
cleanup_on_exit "$tmp"

fail() {
	echo "FAIL: $*"
	if [ -s "$tmp/err" ]; then sed 's/^/    server: /' "$tmp/err"; fi
	exit 1
}

if [ ! -x "$TFGB" ]; then echo "skip: $TFGB is not built (make tfgb)"; exit 77; fi
if ! "$PY" -c 'import grpc' 2>/dev/null; then
	echo "skip: $PY cannot import grpc (Debian package python3-grpcio)"
	exit 77
fi

# start_server PORT: 0 when ready, 1 when it exited (status in $srv_rc), 2 on timeout
start_server() {
	: >"$tmp/ready"
	TFGB_READY_FD=3 "$TFGB" serve -s cluster.ps="127.0.0.1:$1" -s server.max_message=$MAXMSG \
		3>"$tmp/ready" 2>"$tmp/err" &
	srv=$!
	wait_ready "$tmp/ready" "$srv" 10
}

base=$((50100 + $$ % 1000))
start_on_free_port server $base 2 "$tmp/err" start_server
echo "server pid $srv on 127.0.0.1:$port"

grep -q "^tfgb serve: listening on 127.0.0.1:$port (grpc, [0-9]* threads*); control service on 127.0.0.1:$((port - 1))$" "$tmp/err" ||
	fail "no 'listening on' line naming 127.0.0.1:$port"

"$PY" tests/interop/wire_client.py --port $port --max-message $MAXMSG check ||
	fail "wire checks against tfgb serve"

# a second server on the same port: exit 1, naming the address, no ready line
: >"$tmp/ready2"
TFGB_READY_FD=4 timeout "$(slow 20)" "$TFGB" serve -s cluster.ps="127.0.0.1:$port" 4>"$tmp/ready2" \
	2>"$tmp/err2"
rc=$?
cat "$tmp/err2"
[ $rc = 1 ] || fail "second server on port $port: exit status $rc, want 1"
grep -q "127.0.0.1:$port" "$tmp/err2" || fail "second server's error does not name 127.0.0.1:$port"
[ ! -s "$tmp/ready2" ] || fail "second server wrote a ready line though it could not bind"
echo "ok: a second server on 127.0.0.1:$port fails with status 1"

# --task beyond ps_count is a usage error
timeout "$(slow 20)" "$TFGB" serve -s cluster.ps="127.0.0.1:$port" --task 1 2>"$tmp/err3"
rc=$?
cat "$tmp/err3"
[ $rc = 2 ] || fail "--task 1 with one PS: exit status $rc, want 2"
[ "$(wc -l <"$tmp/err3")" = 1 ] || fail "--task 1 with one PS: not one line"
grep -q "^tfgb: serve: --task 1 is out of range: the job has 1 parameter server (0\.\.0)$" \
	"$tmp/err3" || fail "--task 1 with one PS: the message does not give the range"
echo "ok: --task out of range is a usage error"

# no PS address on this machine (192.0.2.0/24 is TEST-NET-1)
timeout "$(slow 20)" "$TFGB" serve -s cluster.ps=192.0.2.1:$port 2>"$tmp/err4"
rc=$?
cat "$tmp/err4"
[ $rc = 1 ] || fail "no local address: exit status $rc, want 1"
grep -q "192.0.2.1:$port" "$tmp/err4" || fail "no-local-address error does not name 192.0.2.1:$port"
echo "ok: no local address fails with status 1"

# the first server still serves
"$PY" tests/interop/wire_client.py --port $port echo || fail "Echo after the failed starts"

# SIGTERM: graceful stop with status 0 within 5 s
kill -TERM "$srv"
i=0
while kill -0 "$srv" 2>/dev/null && [ $i -lt $((50 * SLOW)) ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$srv" 2>/dev/null && fail "server still running 5s after SIGTERM"
wait "$srv"
rc=$?
srv=""
[ $rc = 0 ] || fail "server exit status $rc after SIGTERM, want 0"
echo "ok: SIGTERM stops the server with status 0"
echo "pass"
