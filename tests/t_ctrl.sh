#!/bin/sh
# t_ctrl.sh - the control service (tfgb.v1.Control) that `tfgb serve` hosts
# for PS 0, against raw calls from python3-grpcio: it listens one port below
# PS 0, is part of the readiness line, answers malformed bodies, a huge len,
# an oversized report and an unknown method with their statuses and keeps
# serving, answers a held Barrier before its deadline with how many came, a
# control port in use fails `tfgb serve` with status 1, --task 1 has no
# control service, and SIGTERM stops it all with status 0.
# Run from the top of the tree; exit 0 pass, 77 skip, anything else fail.
. tests/lib.sh

[ -x "$TFGB" ] || skip "skip: $TFGB is not built (make tfgb)"
$PY -c 'import grpc' 2>/dev/null || skip "skip: $PY cannot import grpc (python3-grpcio)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_ctrl.XXXXXX") || exit 1
srv=""
cleanup_on_exit "$tmp"

# a PS port P with P - 1 free too
i=0
while :; do
	port=$(free_port)
	[ "$port" -gt 1024 ] && ! listening $((port - 1)) && break
	i=$((i + 1))
	[ $i -lt 20 ] || fail "no free pair of ports"
done
cport=$((port - 1))

: >"$tmp/ready"
TFGB_READY_FD=3 $TFGB serve -s cluster.ps="127.0.0.1:$port" 3>"$tmp/ready" 2>"$tmp/err" &
srv=$!
i=0
until grep -q '^ready$' "$tmp/ready"; do
	kill -0 "$srv" 2>/dev/null || fail "tfgb serve exited before it was ready: $(cat "$tmp/err")"
	i=$((i + 1))
	[ $i -lt $((100 * SLOW)) ] || fail "tfgb serve not ready within 10s"
	sleep 0.1
done
grep -q "^tfgb serve: listening on 127.0.0.1:$port (grpc, [0-9]* threads*); control service on 127.0.0.1:$cport\$" "$tmp/err" ||
	fail "the listening line does not name the control service on $cport: $(cat "$tmp/err")"
listening "$cport" || fail "nothing listens on the control port $cport"
echo "ok: PS 0 on $port, control service on $cport, ready after both"

$PY - "$cport" "$SLOW" <<'EOF' || fail "raw calls against the control service"
import struct, sys, time
import grpc

ch = grpc.insecure_channel("127.0.0.1:" + sys.argv[1],
                           options=[("grpc.max_send_message_length", -1)])
failed = 0


def call(method, body, timeout=10):
    stub = ch.unary_unary("/tfgb.v1.Control/" + method, request_serializer=None,
                          response_deserializer=None)
    try:
        return grpc.StatusCode.OK, stub(body, timeout=timeout), ""
    except grpc.RpcError as e:
        return e.code(), None, e.details()


def expect(what, got, code):
    global failed
    ok = got[0] == code
    print("ok:" if ok else "FAIL:", what, "" if ok else "(got %s %r)" % (got[0].name, got[2]))
    failed += not ok


def barrier(run, w, n, gen):
    return struct.pack(">QIII", run, w, n, gen)


def report(run, w, n, blob, ln=None):
    return struct.pack(">QIII", run, w, n, len(blob) if ln is None else ln) + blob


BAD = grpc.StatusCode.INVALID_ARGUMENT
expect("empty Barrier body", call("Barrier", b""), BAD)
expect("Barrier of 19 bytes", call("Barrier", barrier(1, 0, 1, 0)[:19]), BAD)
expect("Barrier of 21 bytes", call("Barrier", barrier(1, 0, 1, 0) + b"x"), BAD)
expect("Barrier worker 3 of 3", call("Barrier", barrier(1, 3, 3, 0)), BAD)
expect("Barrier of 0 workers", call("Barrier", barrier(1, 0, 0, 0)), BAD)
expect("Barrier of 4097 workers", call("Barrier", barrier(1, 0, 4097, 0)), BAD)
expect("Report with len 2^32-1", call("Report", report(2, 0, 1, b"abc", 0xFFFFFFFF)), BAD)
expect("Report with len past the body", call("Report", report(2, 0, 1, b"abc", 4)), BAD)
expect("Report with bytes after the blob", call("Report", report(2, 0, 1, b"abc", 2)), BAD)
expect("Report of 19 bytes", call("Report", b"\0" * 19), BAD)
expect("Report over the 256KiB blob limit",
       call("Report", report(2, 0, 1, bytes((256 << 10) + 1))), grpc.StatusCode.RESOURCE_EXHAUSTED)
expect("Collect with partial 2", call("Collect", struct.pack(">QII", 3, 1, 2)), BAD)
expect("Collect of 15 bytes", call("Collect", struct.pack(">QII", 3, 1, 1)[:15]), BAD)
expect("unknown method Nope", call("Nope", b"abc"), grpc.StatusCode.UNIMPLEMENTED)
expect("Barrier with 2 workers after one with 1",
       (call("Report", report(4, 0, 1, b"x")), call("Barrier", barrier(4, 0, 2, 0)))[1],
       grpc.StatusCode.FAILED_PRECONDITION)

got = call("Barrier", barrier(0x0102030405060708, 0, 1, 0))
expect("a good Barrier of 1 worker after the errors", got, grpc.StatusCode.OK)
# the run id, then the worker whose arrival completed it: worker 0 of 1
if got[0] == grpc.StatusCode.OK and got[1] != struct.pack(">QI", 0x0102030405060708, 0):
    print("FAIL: Barrier reply is not the run id and the last worker: %r" % got[1])
    failed += 1

expect("Report of worker 1 of 2", call("Report", report(5, 1, 2, b"hello")), grpc.StatusCode.OK)
got = call("Collect", struct.pack(">QII", 5, 2, 1))
want = struct.pack(">III", 1, 1, 5) + b"hello"
expect("partial Collect", got, grpc.StatusCode.OK)
if got[0] == grpc.StatusCode.OK and got[1] != want:
    print("FAIL: Collect reply %r, want %r" % (got[1], want))
    failed += 1

t0 = time.monotonic()
got = call("Barrier", barrier(6, 0, 2, 0), timeout=2)
took = time.monotonic() - t0
expect("a lone Barrier of 2 workers", got, grpc.StatusCode.DEADLINE_EXCEEDED)
if got[2] != "1 of 2 workers arrived" or not 1.2 < took < 2.0 * float(sys.argv[2]):
    print("FAIL: held Barrier answered %r after %.2fs, want '1 of 2 workers arrived' "
          "about 0.5s before its 2s deadline" % (got[2], took))
    failed += 1
sys.exit(1 if failed else 0)
EOF
echo "ok: statuses, and the service keeps serving"

# a held Barrier whose client dies is dropped.  Two clients enter as worker
# 0 of a 3-worker barrier: the server aborts whichever came first
# ("superseded"), so the other is held for certain; that one is killed.
# Worker 1 then reports "2 of 3" while the dead call is still counted and
# "1 of 3" once it is dropped: it asks again until then, within a deadline.
cat >"$tmp/barrier.py" <<'EOF'
import struct, sys
import grpc
stub = grpc.insecure_channel("127.0.0.1:" + sys.argv[1]).unary_unary(
    "/tfgb.v1.Control/Barrier", request_serializer=None, response_deserializer=None)
try:
    stub(struct.pack(">QIII", 7, int(sys.argv[3]), 3, 0), timeout=float(sys.argv[2]))
    print("released")
except grpc.RpcError as e:
    print(e.code().name, e.details())
EOF
: >"$tmp/b1"
: >"$tmp/b2"
$PY "$tmp/barrier.py" "$cport" 60 0 >"$tmp/b1" 2>&1 &
b1=$!
$PY "$tmp/barrier.py" "$cport" 60 0 >"$tmp/b2" 2>&1 &
b2=$!
i=0 held=
while [ -z "$held" ]; do
	grep -q "^ABORTED superseded" "$tmp/b1" && held=$b2
	grep -q "^ABORTED superseded" "$tmp/b2" && held=$b1
	[ -n "$held" ] && break
	i=$((i + 1))
	if [ $i -gt $((200 * SLOW)) ]; then
		kill $b1 $b2 2>/dev/null
		fail "neither Barrier client superseded the other in 20 s: '$(cat "$tmp/b1")' '$(cat "$tmp/b2")'"
	fi
	sleep 0.1
done
kill -KILL "$held"
wait $b1 $b2 2>/dev/null
i=0
while :; do
	got=$($PY "$tmp/barrier.py" "$cport" 1 1)
	[ "$got" = "DEADLINE_EXCEEDED 1 of 3 workers arrived" ] && break
	[ "$got" = "DEADLINE_EXCEEDED 2 of 3 workers arrived" ] ||
		fail "worker 1 after worker 0's client was killed: '$got'"
	i=$((i + 1))
	[ $i -lt $((10 * SLOW)) ] || fail "the killed client's Barrier still counts after 10 tries"
done
echo "ok: a held Barrier of a killed client is dropped"

# a control port in use: exit 1, naming it, no ready line
other=$(free_port)
: >"$tmp/ready2"
TFGB_READY_FD=4 timeout "$(slow 20)" $TFGB serve -s cluster.ps="127.0.0.1:$other" \
	-s cluster.control="127.0.0.1:$cport" 4>"$tmp/ready2" 2>"$tmp/err2"
rc=$?
cat "$tmp/err2"
[ $rc = 1 ] || fail "control port in use: exit status $rc, want 1"
grep -q "control service: cannot listen on '127.0.0.1:$cport'" "$tmp/err2" ||
	fail "the error does not name the control address 127.0.0.1:$cport"
[ ! -s "$tmp/ready2" ] || fail "a ready line though the control port could not be bound"
wait_closed "$other" 5 || fail "PS port $other still listens after the failed start"
echo "ok: a control port in use fails tfgb serve with status 1"

# PS 1 alone hosts no control service
timeout "$(slow 20)" $TFGB serve -s cluster.ps="127.0.0.1:$other" -s cluster.ps_count=2 --task 1 \
	2>"$tmp/err3" &
p1=$!
wait_listening $((other + 1)) 10 || fail "PS 1 did not listen: $(cat "$tmp/err3")"
grep -q "control service" "$tmp/err3" && fail "PS 1 started a control service: $(cat "$tmp/err3")"
kill -TERM $p1
wait $p1 || fail "PS 1 exit status $? after SIGTERM"
echo "ok: --task 1 has no control service"

# SIGTERM: status 0, nothing left on either port
kill -TERM "$srv"
i=0
while kill -0 "$srv" 2>/dev/null && [ $i -lt $((50 * SLOW)) ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$srv" 2>/dev/null && fail "tfgb serve still running 5s after SIGTERM"
wait "$srv"
rc=$?
srv=""
[ $rc = 0 ] || fail "exit status $rc after SIGTERM, want 0: $(cat "$tmp/err")"
wait_closed "$port" 5 || fail "PS port $port still listens"
wait_closed "$cport" 5 || fail "control port $cport still listens"
echo "ok: SIGTERM stops PS 0 and the control service with status 0"
echo "pass"
