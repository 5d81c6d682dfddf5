#!/bin/sh
# t_interop_server.sh - the python3-grpcio server of the wire contract (proto/tfgb.proto)
# (tests/interop/wire_server.py) against the independent python client, so
# that both sides of the interop tests are known to follow the contract
# before tfgb's own worker is pointed at the server.
# Run from the top of the tree; exit 0 pass, 77 skip (reason on the last
# line), anything else fail.
. tests/lib.sh
MAXMSG=1048576

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_interop_server.XXXXXX") || exit 1
srv=""
cleanup_on_exit "$tmp"

fail() {
	echo "FAIL: $*"
	if [ -s "$tmp/err" ]; then sed 's/^/    server: /' "$tmp/err"; fi
	exit 1
}

if ! "$PY" -c 'import grpc' 2>/dev/null; then
	echo "skip: $PY cannot import grpc (Debian package python3-grpcio)"
	exit 77
fi

# start_server PORT: 0 when ready, 1 when it exited, 2 on timeout
start_server() {
	"$PY" tests/interop/wire_server.py --max-message $MAXMSG "$1" >"$tmp/out" 2>"$tmp/err" &
	srv=$!
	wait_ready "$tmp/out" "$srv" 15
}

base=$((51100 + $$ % 1000))
start_on_free_port wire_server.py $base 1 "$tmp/err" start_server
echo "wire_server.py pid $srv on 127.0.0.1:$port"

"$PY" tests/interop/wire_client.py --port $port --max-message $MAXMSG --tensors check ||
	fail "wire checks against wire_server.py"

kill -TERM "$srv"
i=0
while kill -0 "$srv" 2>/dev/null && [ $i -lt $((50 * SLOW)) ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$srv" 2>/dev/null && fail "wire_server.py still running 5s after SIGTERM"
wait "$srv"
rc=$?
srv=""
[ $rc = 0 ] || fail "wire_server.py exit status $rc after SIGTERM, want 0"
echo "ok: SIGTERM stops wire_server.py with status 0"
echo "pass"
