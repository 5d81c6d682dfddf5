#!/bin/sh
# t_serialized.sh - [job] mode = serialized and tensorflow end to end on
# loopback: latency, bandwidth and throughput (1 PS x 2 workers) against
# `tfgb serve`, over grpc and over socket, with the serialization figures
# in the report; [payload] dtype; the job errors of the modes;
# EchoTensor/AckTensor of `tfgb serve` called by python3-grpcio with real
# messages of classes protoc generates from proto/tfgb.proto
# (tests/interop/tensor_client.py) and over the socket framing by hand,
# bodies that do not parse answered INVALID_ARGUMENT while the server keeps
# serving; and tfgb's worker against tests/interop/wire_server.py parsing
# with those classes.  Every process it starts is stopped.
# Exit 0 pass, 77 skip (the reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed for $PY"
command -v protoc >/dev/null 2>&1 || skip "no protoc (Debian package protobuf-compiler)"
$PY -c 'import google.protobuf' 2>/dev/null || skip "python3-protobuf is not installed for $PY"

MAXMSG=8388608
out=$(mktemp -d)
srv= wsrv=
cleanup_on_exit "$out"

# ---- against tfgb serve ----
port=$(free_port)
TFGB_NO_CONTROL=1 $TFGB serve -s cluster.ps=127.0.0.1:$port -s server.max_message=$MAXMSG \
	-q 2>"$out/srv.err" &
srv=$!
wait_listening "$port" 10 || fail "tfgb serve did not listen: $(cat "$out/srv.err")"

base="-s cluster.ps=127.0.0.1:$port -s job.warmup=$(slow 100)ms"
base="$base -s job.timeout=$(slow 10)s -q -f json"
for mode in serialized tensorflow; do
	# the default payload (3 x 1 MiB, 3 x 10 KiB, 4 x 10 B)
	$TFGB latency $base -s job.mode=$mode -s job.duration=$(slow 300)ms \
		>"$out/lat.json" 2>"$out/err" ||
		fail "latency ($mode) exited $?: $(cat "$out/err")"
	json_check 'd["status"] == "ok" and d["mode"] == "'$mode'" and d["calls"] > 0
and d["errors"] == 0 and "serialization" in d and d["serialization"]["dtype"] == "uint8"
and d["serialization"]["sample_every"] == 64' <"$out/lat.json" ||
		fail "latency JSON ($mode): $(cat "$out/lat.json")"

	# 10 x 10 B, 130 calls: the first 32 sampled, then 1 in 64 (63, 127)
	$TFGB latency $base -s job.mode=$mode -s job.iterations=130 -s payload.categories=small \
		>"$out/lat.json" 2>"$out/err" || fail "latency 10 x 10 B ($mode): $(cat "$out/err")"
	json_check 'd["status"] == "ok" and d["calls"] == 130
and 33 <= d["serialization"]["sampled_calls"] <= 34 and d["serialization"]["sample_first"] == 32
and d["serialization"]["encode_us"] >= 0 and d["serialization"]["decode_us"] > 0' \
		<"$out/lat.json" || fail "latency 10 x 10 B JSON ($mode): $(cat "$out/lat.json")"

	# every byte checked, each dtype, a custom list
	for dt in uint8 float32 float16 int64; do
		$TFGB latency $base -s job.mode=$mode -s job.iterations=10 -s job.verify=yes \
			-s payload.dtype=$dt -s payload.small=16B >"$out/lat.json" 2>"$out/err" ||
			fail "latency ($mode, $dt): $(cat "$out/err")"
		json_check 'd["calls"] == 10 and d["errors"] == 0 and d["status"] == "ok"
and d["serialization"]["dtype"] == "'$dt'"' <"$out/lat.json" ||
			fail "latency JSON ($mode, $dt): $(cat "$out/lat.json")"
	done
	$TFGB latency $base -s job.mode=$mode -s job.iterations=30 -s job.verify=yes \
		-s payload.scheme=custom -s payload.iovec=64KiB,8B,1MiB -s payload.dtype=int64 \
		>"$out/lat.json" 2>"$out/err" || fail "latency custom ($mode): $(cat "$out/err")"

	# bandwidth: AckTensor, 4 in flight, CSV with the serialization columns
	$TFGB bandwidth $base -s job.mode=$mode -s job.duration=$(slow 300)ms -s job.inflight=4 -f csv \
		>"$out/bw.csv" 2>"$out/err" || fail "bandwidth ($mode) exited $?: $(cat "$out/err")"
	head -n 1 "$out/bw.csv" | grep -q ',encode_us,decode_us,sampled_calls,status$' ||
		fail "CSV header: $(head -n 1 "$out/bw.csv")"
	tail -n 1 "$out/bw.csv" | grep -q "^bandwidth,grpc,$mode,uniform,10,3176488,4,.*,ok\$" ||
		fail "bandwidth CSV row ($mode): $(tail -n 1 "$out/bw.csv")"
done

# the text report names the mode and the figures
$TFGB latency -s cluster.ps=127.0.0.1:$port -s job.warmup=0s -s job.duration=$(slow 300)ms -q \
	-s job.mode=tensorflow -s payload.categories=small >"$out/lat.txt" 2>"$out/err" ||
	fail "latency text: $(cat "$out/err")"
grep -q '^# serialization (tensorflow, dtype uint8): encode [0-9.]* us, decode [0-9.]* us per call, mean of [0-9]* sampled calls (the first 32 of a run, then 1 in 64)$' \
	"$out/lat.txt" || fail "no serialization line: $(cat "$out/lat.txt")"

# python3-grpcio with generated classes: real messages, bad bodies, limits
$PY tests/interop/tensor_client.py --port "$port" --max-message $MAXMSG check >"$out/py" 2>&1 ||
	fail "tensor_client.py against tfgb serve: $(grep -v '^ok' "$out/py")"
$PY tests/interop/wire_client.py --port "$port" --max-message $MAXMSG --tensors check \
	>"$out/py" 2>&1 || fail "wire_client.py --tensors: $(grep -v '^ok' "$out/py")"
kill -0 "$srv" 2>/dev/null || fail "tfgb serve died: $(cat "$out/srv.err")"
$TFGB latency $base -s job.mode=serialized -s job.iterations=10 >/dev/null 2>"$out/err" ||
	fail "latency after the bad bodies: $(cat "$out/err")"
kill "$srv"; wait "$srv" 2>/dev/null; srv=

# ---- job errors (exit 2, naming the key and the place) ----
rc=0
$TFGB latency -s job.mode=serialized -s payload.dtype=float32 >/dev/null 2>"$out/err" || rc=$?
[ "$rc" = 2 ] || fail "dtype float32 with 10 B buffers: exit $rc, expected 2"
grep -q 'default: payload.small = 10B: buffer 0 is 10 bytes, not a whole number of 4-byte elements of payload.dtype = float32 (-s #2)' \
	"$out/err" || fail "dtype error: $(cat "$out/err")"
printf '[job]\nmode = tensorflow\nrpc = pull\n' >"$out/pull.ini"
rc=0
$TFGB throughput -c "$out/pull.ini" >/dev/null 2>"$out/err" || rc=$?
[ "$rc" = 2 ] || fail "rpc = pull with mode tensorflow: exit $rc, expected 2"
grep -q "$out/pull.ini:3: job.rpc = pull: has no serialized form" "$out/err" ||
	fail "rpc = pull error: $(cat "$out/err")"

# ---- throughput, 1 PS x 2 workers, the launcher starting everything ----
for mode in serialized tensorflow; do
	for rpc in echo push; do
		b=$(free_ports 1) || fail "no free ports"
		$TFGB throughput -s cluster.ps=127.0.0.1:$b -s cluster.workers=2 -s job.mode=$mode \
			-s job.rpc=$rpc -s job.warmup=$(slow 100)ms -s job.duration=$(slow 300)ms \
			-s payload.categories=small,medium -q -f json >"$out/tp.json" 2>"$out/err" ||
			fail "throughput ($mode, $rpc) exited $?: $(cat "$out/err")"
		json_check 'd["status"] == "ok" and d["mode"] == "'$mode'" and d["calls"] > 0
and d["errors"] == 0 and d["throughput"]["reported"] == 2 and "serialization" in d' \
			<"$out/tp.json" || fail "throughput JSON ($mode, $rpc): $(cat "$out/tp.json")"
		wait_closed "$b" 5 || fail "throughput left its PS running"
	done
done

# ---- the socket transport: the same, over plain TCP ----
sport=$(free_port)
TFGB_NO_CONTROL=1 $TFGB serve -s job.transport=socket -s cluster.ps=127.0.0.1:$sport \
	-s server.max_message=$MAXMSG -s server.threads=2 -q 2>"$out/ssrv.err" &
srv=$!
wait_listening "$sport" 10 || fail "tfgb serve (socket) did not listen: $(cat "$out/ssrv.err")"
sbase="-s job.transport=socket -s cluster.ps=127.0.0.1:$sport -s job.warmup=$(slow 100)ms"
sbase="$sbase -s job.timeout=$(slow 10)s -q -f json"
for mode in serialized tensorflow; do
	$TFGB latency $sbase -s job.mode=$mode -s job.iterations=30 -s job.verify=yes \
		-s payload.dtype=float16 -s payload.small=16B >"$out/lat.json" 2>"$out/err" ||
		fail "latency over socket ($mode): $(cat "$out/err")"
	json_check 'd["calls"] == 30 and d["errors"] == 0 and d["status"] == "ok"
and d["transport"] == "socket"' <"$out/lat.json" ||
		fail "latency JSON over socket ($mode): $(cat "$out/lat.json")"
	$TFGB bandwidth $sbase -s job.mode=$mode -s job.duration=$(slow 300)ms -s job.inflight=8 \
		>"$out/bw.json" 2>"$out/err" || fail "bandwidth over socket ($mode): $(cat "$out/err")"
	json_check 'd["status"] == "ok" and d["calls"] > 0 and d["errors"] == 0' <"$out/bw.json" ||
		fail "bandwidth JSON over socket ($mode): $(cat "$out/bw.json")"
done
# the socket framing by hand: bad bodies, pipelined large bundles, a body
# over max_message; the connection (or, for the last, the server) goes on
$PY - "$sport" $MAXMSG >"$out/py" 2>&1 <<'PYEOF' || fail "socket EchoTensor/AckTensor: $(cat "$out/py")"
import socket, struct, sys, threading
port, maxmsg = int(sys.argv[1]), int(sys.argv[2])
def hdr(m, n): return struct.pack(">IHHQ", 0x54464742, m, 0, n)
def conn():
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(20); return s
def recv_exact(s, n):
    b = bytearray()
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: sys.exit("connection closed after %d of %d bytes" % (len(b), n))
        b += c
    return bytes(b)
def reply(s):
    m, st, n = struct.unpack(">IHHQ", recv_exact(s, 16))[1:]
    return m, st, recv_exact(s, n)
def ld(f, b):
    n, v = len(b), bytearray()
    while True:
        v.append((n & 0x7f) | (0x80 if n > 0x7f else 0)); n >>= 7
        if not n: break
    return bytes([f << 3 | 2]) + bytes(v) + b
def bundle(sizes):
    return b"".join(ld(1, ld(1, b"iov/%d" % i) + b"\x10\x04" + ld(3, bytes([sz & 0x7f | 0x80, sz >> 7]) if sz > 127 else bytes([sz])) + ld(4, bytes([i]) * sz)) for i, sz in enumerate(sizes))
for e, a in ((4, 5), (7, 8)):  # EchoTensor, AckTensor; their in-place forms
    s = conn()
    for m, body in ((e, b"\xff\xff"), (a, b"\x0a\x05ab"), (e, bundle([100, 3000])[:50])):
        s.sendall(hdr(m, len(body)) + body)
        got = reply(s)
        if got != (0x8000 | m, 3, b""): sys.exit("bad body %r: got %r" % (body[:8], got[:2]))
    small = bundle([10, 1000])
    s.sendall(hdr(e, len(small)) + small)
    if reply(s) != (0x8000 | e, 0, small): sys.exit("method %d after the bad bodies" % e)
    big = bundle([10000] * 100)  # 1 MB: received into tin, not the input buffer
    n = 6
    t = threading.Thread(target=lambda: [s.sendall(hdr(e if i % 2 == 0 else a, len(big)) + big) for i in range(n)])
    t.start()
    for i in range(n):
        m, st, r = reply(s)
        want = (0x8000 | e, 0, big) if i % 2 == 0 else (0x8000 | a, 0, b"\x08\xc0\x84\x3d\x10\x64")
        if (m, st, r) != want: sys.exit("pipelined call %d: got %#x %d, %d bytes" % (i, m, st, len(r)))
    t.join()
    s.close()
s = conn()
s.sendall(hdr(4, maxmsg + 1))
if reply(s)[:2] != (0x8004, 8): sys.exit("EchoTensor over max_message is not RESOURCE_EXHAUSTED")
s.close()
print("ok")
PYEOF
kill -0 "$srv" 2>/dev/null || fail "tfgb serve (socket) died: $(cat "$out/ssrv.err")"
$TFGB latency $sbase -s job.mode=serialized -s job.iterations=10 >/dev/null 2>"$out/err" ||
	fail "latency over socket after the bad bodies: $(cat "$out/err")"
kill "$srv"; wait "$srv" 2>/dev/null; srv=
for mode in serialized tensorflow; do
	b=$(free_ports 1) || fail "no free ports"
	$TFGB throughput -s job.transport=socket -s cluster.ps=127.0.0.1:$b -s cluster.workers=2 \
		-s job.mode=$mode -s job.rpc=echo -s job.inflight=4 -s job.warmup=$(slow 100)ms \
		-s job.duration=$(slow 500)ms -q -f json >"$out/tp.json" 2>"$out/err" ||
		fail "throughput over socket ($mode) exited $?: $(cat "$out/err")"
	json_check 'd["status"] == "ok" and d["calls"] > 0 and d["throughput"]["reported"] == 2' \
		<"$out/tp.json" || fail "throughput JSON over socket ($mode): $(cat "$out/tp.json")"
done

# ---- tfgb's worker against python3-grpcio parsing with generated classes ----
wport=$(free_port)
$PY tests/interop/wire_server.py --proto proto/tfgb.proto --max-message $MAXMSG "$wport" \
	>"$out/ws.out" 2>&1 &
wsrv=$!
wait_listening "$wport" 20 || fail "wire_server.py did not start: $(cat "$out/ws.out")"
wbase="-s cluster.ps=127.0.0.1:$wport -s job.warmup=0s -s job.timeout=$(slow 10)s -q -f json"
for mode in serialized tensorflow; do
	$TFGB latency $wbase -s job.mode=$mode -s job.iterations=10 -s job.verify=yes \
		-s payload.dtype=float16 -s payload.small=16B >"$out/lat.json" 2>"$out/err" ||
		fail "latency ($mode) against wire_server.py: $(cat "$out/err")"
	json_check 'd["calls"] == 10 and d["errors"] == 0 and d["status"] == "ok"' \
		<"$out/lat.json" || fail "latency JSON against grpcio ($mode): $(cat "$out/lat.json")"
	$TFGB bandwidth $wbase -s job.mode=$mode -s job.iterations=16 -s job.inflight=4 \
		>"$out/bw.json" 2>"$out/err" ||
		fail "bandwidth ($mode) against wire_server.py: $(cat "$out/err")"
	json_check 'd["calls"] == 16 and d["MBps"] > 0' <"$out/bw.json" ||
		fail "bandwidth JSON against grpcio ($mode): $(cat "$out/bw.json")"
done
kill -0 "$wsrv" 2>/dev/null || fail "tfgb stopped a server it did not start"
echo "ok"
