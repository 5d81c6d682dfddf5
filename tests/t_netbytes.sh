#!/bin/sh
# tfgb-alone: its traffic generator loads a CPU, and it compares host-wide counters
# t_netbytes.sh - the network figure is the run's own (src/host/tcpbytes.h):
# while another process pushes traffic over loopback, a run's wire bytes
# (its own TCP connections, both directions) stay within 1.0 to 1.2 times
# the payload bytes its calls moved (an echo moves its payload twice), and
# the host-wide /proc/net/dev figures, which do see the other traffic, are
# labelled "scope": "host".  Socket transport, so framing is small and known.
# Run from the top of the source tree; exits 0 (pass), 77 (skip) or 1.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
[ -x ./tfgb ] || skip "tfgb is not built; run 'make tfgb'"
[ -r /proc/net/dev ] || skip "no /proc/net/dev"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_netbytes.XXXXXX") || exit 1
noise=
trap '[ -n "$noise" ] && kill "$noise" 2>/dev/null; wait; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# other traffic on loopback meanwhile: one connection sending as fast as it
# can for at most 120 s (killed at the end), to a sink in the same process
NOISE_PORT=$(free_port)
$PY - "$NOISE_PORT" >"$tmp/noise.log" 2>&1 <<'EOF' &
import socket, sys, threading, time
port = int(sys.argv[1])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(1)
def sink():
    c, _ = srv.accept()
    while c.recv(1 << 20):
        pass
threading.Thread(target=sink, daemon=True).start()
out = socket.create_connection(("127.0.0.1", port))
buf = b"x" * (1 << 20)
end = time.monotonic() + 120
print("sending", flush=True)
while time.monotonic() < end:
    out.sendall(buf)
EOF
noise=$!
wait_line "$tmp/noise.log" sending "$(slow 10)" || fail "the traffic generator did not start: $(cat "$tmp/noise.log")"

PORT=$(free_port)
base="-s cluster.ps=127.0.0.1:$PORT -s job.transport=socket -s job.warmup=$(slow 200)ms -s job.duration=$(slow 1000)ms
      -s monitor.interval=100ms -s job.timeout=$(slow 20)s -f json"

# check NAME ECHO < result.json: the run's own figure in range and whole,
# the host's labelled and, with the other traffic, 32 MiB or more above
# it.  Before the run's own count the only figure was the host-wide one
# (tx bytes per payload byte of one direction): it is checked in its
# place, divided by ECHO (2 for an echo, which moves its payload twice),
# so that this test fails on a tfgb without the run's own count.
check() {
	$PY -c '
import json, sys
d = json.load(sys.stdin)
echo = int(sys.argv[2])
s = d["resources"]["summary"]
host = s["net_tx_bytes"]
if "run_wire" in s:
    w = s["run_wire"]
    assert w["scope"] == "run" and w["measured"] and not w["partial"], w
    assert d["resources"]["net"]["scope"] == "host" and s["net_scope"] == "host", s
    ratio, own = w["bytes_per_payload_byte"], w["bytes"]
else:
    ratio, own = s["wire_bytes_per_payload_byte"] / echo, s["payload_bytes"] * echo
# the other traffic was there: the host moved at least 32 MiB more than
# this run (the generator sends GB/s on loopback when it runs at all; a
# share of the own bytes is no bound: on a loaded machine the run can take
# most of the CPU, and the generator little of it)
assert host >= own + (32 << 20), ("%s: no background traffic seen" % sys.argv[1], host, own)
assert 1.0 <= ratio <= 1.2, ("%s: wire bytes per payload byte" % sys.argv[1], ratio)
' "$@" || fail "$1: see above; result: $(head -c 300 "$tmp/$1.json")"
}

# latency: one connection, open to the end of the run
$TFGB latency $base >"$tmp/latency.json" 2>"$tmp/err" ||
	fail "latency exited $?: $(cat "$tmp/err")"
check latency 2 <"$tmp/latency.json"

# throughput, echo: the workers' connections close before the last sample
# (the kernel's destroy notices count them to their end)
$TFGB throughput $base -s job.rpc=echo >"$tmp/throughput.json" \
	2>"$tmp/err" || fail "throughput exited $?: $(cat "$tmp/err")"
check throughput 2 <"$tmp/throughput.json"

# bandwidth: Ack calls carry the payload one way
$TFGB bandwidth $base -s job.inflight=4 >"$tmp/bandwidth.json" 2>"$tmp/err" ||
	fail "bandwidth exited $?: $(cat "$tmp/err")"
check bandwidth 1 <"$tmp/bandwidth.json"

# the text says which figure is whose
$TFGB latency $base -f text >"$tmp/text" 2>"$tmp/err" || fail "text run exited $?: $(cat "$tmp/err")"
grep -q '^# network, this run ([0-9]* connections* of the worker to the PS, 0 closed): .* wire bytes per payload byte moved$' \
	"$tmp/text" || fail "no run network line: $(grep network "$tmp/text")"
grep -q '^# network, host-wide, all traffic (' "$tmp/text" ||
	fail "no host-wide network line: $(grep network "$tmp/text")"
echo "t_netbytes: ok"
