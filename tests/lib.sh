# tests/lib.sh - helpers for the end-to-end shell tests (sourced, POSIX sh).
# Every test runs from the top of the source tree and cleans up after itself.

TFGB=./tfgb
PY=/usr/bin/python3

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }

# A TCP port P on 127.0.0.1 that nothing listens on right now, with P-1
# free too: a PS 0 started by hand hosts the control service one port below.
free_port() {
	free_ports 1
}

# 0 if something accepts connections on 127.0.0.1:$1.
listening() {
	$PY -c 'import socket, sys
s = socket.socket(); s.settimeout(0.5)
sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)' "$1"
}

# Waits up to $2 seconds (default 10) until 127.0.0.1:$1 accepts connections.
wait_listening() {
	i=0
	while ! listening "$1"; do
		i=$((i + 1))
		[ "$i" -gt $(( ${2:-10} * 10 )) ] && return 1
		sleep 0.1
	done
}

# Waits up to $2 seconds (default 10) until nothing listens on 127.0.0.1:$1.
wait_closed() {
	i=0
	while listening "$1"; do
		i=$((i + 1))
		[ "$i" -gt $(( ${2:-10} * 10 )) ] && return 1
		sleep 0.1
	done
}

# Fails unless a JSON document on stdin parses and the Python expression $1
# (over `d`) is true.
json_check() {
	$PY -c 'import json, sys
d = json.load(sys.stdin)
ok = eval("(" + sys.argv[1] + ")")
sys.exit(0 if ok else 1)' "$1"
}

# The pids of processes whose command line contains $1 (this test's own
# port or file name), excluding grep-like helpers.
pids_matching() {
	for d in /proc/[0-9]*; do
		c=$( { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null) || continue
		case "$c" in *"$1"*) echo "${d#/proc/}" ;; esac
	done | grep -vx "$$" || true
}

# A base port B such that B-1 .. B+$1-1 are all free on 127.0.0.1 (the
# control service sits one port below PS 0).
free_ports() {
	$PY -c 'import socket, random, sys
n = int(sys.argv[1])
for _ in range(200):
    b = random.randint(20000, 60000)
    socks = []
    try:
        for p in range(b - 1, b + n):
            s = socket.socket(); s.bind(("127.0.0.1", p)); socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks: s.close()
    print(b); sys.exit(0)
sys.exit(1)' "$1"
}
