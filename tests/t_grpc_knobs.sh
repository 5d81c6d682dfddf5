#!/bin/sh
# t_grpc_knobs.sh - each [grpc] key reaches the wire (tfgb.ini(5), The
# [grpc] section): grpc.channels = 3 is three established TCP connections
# to the PS in `ss -tn` while a run moves data, and the text report says
# so; grpc.compression = gzip (a --sweep against none) sends a compressible
# payload (payload.fill = zeros) in a small share of its bytes and the
# pattern, which does not compress, in as many as without; the frame size
# and the stream window are in the HTTP/2 SETTINGS a peer receives from a
# client (a python3 listener reading its preface) and from `tfgb serve`
# (nghttp -nv), and gRPC's own sizes when BDP probing is on; with
# grpc.channelz = on both sides count one HTTP/2 stream and one message each
# way per call, and grpc.channels = 3 three connections each; bad values are
# refused with file or -s position, key and range (exit 2).
# Parts (tests/lib.sh: in_part; a mutant runs only the part that catches
# it): channels, compression, settings, channelz.
# Run from the top of the source tree; exits 0 (pass), 77 (skip) or 1.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
[ -x ./tfgb ] || skip "tfgb is not built; run 'make tfgb'"
need_cmd ss iproute2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_grpc_knobs.XXXXXX") || exit 1
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; wait; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

PORT=$(free_port) || fail "no free port"
base="-s cluster.ps=127.0.0.1:$PORT -s job.timeout=$(slow 20)s"

# ---- channels: three connections to the one PS, each carrying calls
if in_part channels; then
	$TFGB throughput $base -s grpc.channels=3 -s job.warmup=$(slow 300)ms \
		-s job.duration=$(slow 3000)ms -f text >"$tmp/ch.txt" 2>"$tmp/ch.err" &
	run=$!
	pids="$run"
	if wait_in_run "$PORT" 3 15 "$run"; then
		# Info's connections carry under 2 kB: the busy ones are the run's
		n=$(conn_bytes "$PORT" bytes_acked | awk '$1 >= 100000' | wc -l)
		[ "$n" = 3 ] || bad "channels = 3: $n connections to the PS carry calls, want 3: $(ss -tn "( dport = :$PORT )")"
	else
		bad "channels = 3: not three busy connections to the PS: $(ss -tn "( dport = :$PORT )")"
	fi
	wait "$run" || bad "channels = 3: throughput exited $?: $(cat "$tmp/ch.err")"
	pids=
	grep -q '^# \[grpc\] channels 3; the other 15 at their defaults (-v names them)$' "$tmp/ch.txt" ||
		bad "the text report does not name the [grpc] setting: $(head -4 "$tmp/ch.txt")"
	# -v names every key, and what channelz left to the preset does
	$TFGB latency $base -v -s grpc.preset=tensorflow -s job.warmup=0 -s job.duration=200ms \
		-f text >"$tmp/v.txt" 2>"$tmp/v.err" || bad "latency -v exited $?: $(cat "$tmp/v.err")"
	grep -q '^# \[grpc\] preset tensorflow, channels 1, .*, channelz preset (on: preset tensorflow), ' \
		"$tmp/v.txt" || bad "-v: the [grpc] line: $(grep '^# \[' "$tmp/v.txt")"
fi

# ---- compression: wire bytes per payload byte moved, by the run's own count
if in_part compression; then
	cmp_run() { # NAME FILL: a sweep of compression none and gzip, JSON
		$TFGB throughput $base -s payload.fill="$2" -s job.warmup=$(slow 200)ms \
			-s job.duration=$(slow 1000)ms --sweep grpc.compression=none,gzip -f json \
			>"$tmp/$1.json" 2>"$tmp/$1.err" || bad "$1: sweep exited $?: $(cat "$tmp/$1.err")"
	}
	cmp_run zeros zeros
	cmp_run pattern pattern
	$PY - "$tmp/zeros.json" "$tmp/pattern.json" <<'EOF' || bad "compression: see above"
import json, re, sys
def ratios(path):
    d = json.load(open(path))
    out = {}
    for r in d["results"]:
        comp = re.search(r"^compression = (\w+)$", r["job"], re.M).group(1)
        w = r["resources"]["summary"]["run_wire"]
        assert w["measured"] and not w["partial"] and w["payload_bytes_moved"] > 0, w
        out[comp] = w["bytes_per_payload_byte"]
    return out
z, p = ratios(sys.argv[1]), ratios(sys.argv[2])
print("wire bytes per payload byte: zeros %s, pattern %s" % (z, p))
ok = True
if not 1.0 <= z["none"] <= 1.2:
    print("FAIL: zeros without compression: %s, want 1.0-1.2" % z["none"]); ok = False
if not z["gzip"] < 0.1:
    print("FAIL: zeros with gzip: %s, want under 0.1" % z["gzip"]); ok = False
if not (1.0 <= p["none"] <= 1.2 and 0.95 <= p["gzip"] <= 1.6):
    print("FAIL: the pattern does not compress: %s, want 1.0-1.2 and 0.95-1.6" % p); ok = False
sys.exit(0 if ok else 1)
EOF
fi

# ---- SETTINGS a client sends: a listener reads its preface
if in_part settings; then
	settings_client() { # NAME OPTIONS...: the SETTINGS of the first HTTP/2 preface
		name=$1
		shift
		$PY - "$PORT" >"$tmp/$name.peer" 2>&1 <<'EOF' &
import socket, struct, sys, time
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(sys.argv[1])))
srv.listen(16)
srv.settimeout(15)
print("listening", flush=True)
PRE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
while True:  # the command's probe connects first and sends nothing
    c, _ = srv.accept()
    c.settimeout(2)
    buf, end = b"", time.monotonic() + 2
    while time.monotonic() < end and (len(buf) < 33 or len(buf) < 33 + int.from_bytes(buf[24:27], "big")):
        try:
            d = c.recv(4096)
        except socket.timeout:
            break
        if not d:
            break
        buf += d
    if buf[:24] == PRE:
        break
assert buf[27] == 4, "first frame is not SETTINGS"
body = buf[33:33 + int.from_bytes(buf[24:27], "big")]
for i in range(0, len(body) - 5, 6):
    print("SETTINGS %d %d" % struct.unpack(">HI", body[i:i + 6]))
EOF
		peer=$!
		pids="$peer"
		wait_line "$tmp/$name.peer" listening 10 || fail "the listener did not start: $(cat "$tmp/$name.peer")"
		$TFGB latency -s cluster.ps=127.0.0.1:$PORT -s job.timeout=$(slow 2)s "$@" \
			>/dev/null 2>&1 # it fails: the listener is no gRPC server
		wait "$peer" || bad "$name: the listener failed: $(cat "$tmp/$name.peer")"
		pids=
	}
	settings_client set -s grpc.bdp_probe=no -s grpc.max_frame_size=65536 -s grpc.stream_window=1048576
	grep -q '^SETTINGS 5 65536$' "$tmp/set.peer" && grep -q '^SETTINGS 4 1048576$' "$tmp/set.peer" ||
		bad "client SETTINGS lack max_frame_size 65536 and window 1048576: $(cat "$tmp/set.peer")"
	settings_client bdp
	grep -q '^SETTINGS 4 4194303$' "$tmp/bdp.peer" ||
		bad "client SETTINGS with BDP probing: not gRPC's own window: $(cat "$tmp/bdp.peer")"

	# ---- SETTINGS `tfgb serve` sends
	if command -v nghttp >/dev/null 2>&1; then
		$TFGB serve -s cluster.ps=127.0.0.1:$PORT -s grpc.bdp_probe=no -s grpc.max_frame_size=32768 \
			-s grpc.stream_window=2097152 >"$tmp/serve.out" 2>&1 &
		srv=$!
		pids="$srv"
		wait_listening "$PORT" 10 || fail "tfgb serve did not listen: $(cat "$tmp/serve.out")"
		timeout 10 nghttp -nv "http://127.0.0.1:$PORT/" >"$tmp/nghttp.out" 2>&1
		grep -q 'SETTINGS_MAX_FRAME_SIZE(0x05):32768' "$tmp/nghttp.out" &&
			grep -q 'SETTINGS_INITIAL_WINDOW_SIZE(0x04):2097152' "$tmp/nghttp.out" ||
			bad "server SETTINGS: $(grep -A6 'recv SETTINGS' "$tmp/nghttp.out" | head -8)"
		kill "$srv"
		wait "$srv"
		pids=
	else
		skip_part "nghttp (Debian package nghttp2-client) is not installed: the server's SETTINGS unchecked"
	fi
fi

# ---- channelz: the counters of each side, per call; channels shows in them
if in_part channelz; then
$TFGB latency $base -s grpc.channelz=on -s job.iterations=100 -s job.warmup=0 \
	--sweep grpc.channels=1,3 -f json >"$tmp/cz.json" 2>"$tmp/cz.err" ||
	bad "channelz: sweep exited $?: $(cat "$tmp/cz.err")"
$TFGB latency $base -s job.iterations=20 -s job.warmup=0 -f json >"$tmp/czoff.json" \
	2>"$tmp/czoff.err" || bad "channelz off: latency exited $?: $(cat "$tmp/czoff.err")"
$PY - "$tmp/cz.json" "$tmp/czoff.json" <<'EOF' || bad "channelz: see above"
import json, re, sys
ok = True
def want(cond, what):
    global ok
    if not cond:
        print("FAIL: channelz: " + what); ok = False
for r in json.load(open(sys.argv[1]))["results"]:
    ch = int(re.search(r"^channels = (\d+)$", r["job"], re.M).group(1))
    tc = r["transport_counters"]
    w, ps = tc["worker"], tc["ps"][0]
    n = r["calls"] + r["warmup_calls"]
    # every call the worker started is one stream, one message each way (the
    # PS may also hold an idle connection the sweep's previous run left)
    want(w["source"] == "channelz" and w["connections"] == ch and ps["connections"] >= ch,
         "channels = %d: connections worker %s, ps %s" % (ch, w["connections"], ps["connections"]))
    want(w["calls"] >= n >= 100 and w["streams_started"] == w["calls"] == ps["calls"]
         and ps["streams_started"] == w["calls"], "streams: worker %s, ps %s, calls %d" % (w, ps, n))
    for side in (w, ps):
        want(all(side[k] == 1.0 for k in ("streams_started_per_rpc", "streams_succeeded_per_rpc",
                                          "messages_sent_per_rpc", "messages_received_per_rpc"))
             and side["streams_failed"] == 0 and side["keepalives_sent"] == 0,
             "per call, %s: %s" % (side["role"], side))
        # gRPC 1.51 keeps no windows in channelz: null with why, never 0
        want(side["local_window_bytes"] is None and "flow-control" in side["why"],
             "windows: %s" % side)
off = json.load(open(sys.argv[2]))["transport_counters"]
for side in (off["worker"], off["ps"][0]):
    want(side["streams_started"] is None and side["messages_sent_per_rpc"] is None
         and "channelz is off" in side["why"], "channelz off (the preset's): %s" % side)
sys.exit(0 if ok else 1)
EOF
fi

# ---- bad values: exit 2, where, the key and its range
refuse() { # WANT ARGS...: exit 2 and a message matching WANT
	want=$1
	shift
	$TFGB throughput --print-config "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 2 ] && grep -q "$want" "$tmp/err" || bad "$*: exit $rc, want 2 and '$want': $(cat "$tmp/err")"
}
refuse '^tfgb: -s #1: grpc.max_frame_size = 100: must be none or in \[16384, 16777215\]$' \
	-s grpc.max_frame_size=100
refuse 'grpc.stream_window = 65536: takes effect only with grpc.bdp_probe = no' \
	-s grpc.stream_window=65536
refuse 'grpc.read_chunk_min = 9000: is above grpc.read_chunk_max (4096)' \
	-s grpc.read_chunk_min=9000 -s grpc.read_chunk_max=4096
refuse 'grpc.compression = lz4: must be one of none | deflate | gzip' -s grpc.compression=lz4
printf '[grpc]\npreset = tensorflow\nchannels = 0\n' >"$tmp/bad.ini"
refuse "^tfgb: $tmp/bad.ini:3: grpc.channels = 0: must be in \[1, 64\]$" -c "$tmp/bad.ini"

[ "$problems" = 0 ] || fail "$problems problem(s)"
echo "t_grpc_knobs: ok"
