# tests/netns.sh - several "hosts" on one machine for the end-to-end tests
# (sourced after tests/lib.sh, POSIX sh, root only).
#
# A lab is a set of network namespaces named PREFIX-NAME: one switch,
# PREFIX-sw, holding the bridge br0, and one namespace per host, each with lo
# up and an interface eth0 (a veth whose other end is a port of br0) with
# one address of 198.18.0.0/24, inside 198.18.0.0/15, the range RFC 2544
# sets aside for benchmarking.  Nothing is created in the caller's own
# namespace, so two labs (two tests running at once) never collide even
# when they use the same addresses.  Pick a PREFIX no other lab uses, with
# the test's pid: tfgb-$$.
#
#   netns_check                      why a lab cannot be made here ("" if it can)
#   netns_switch PREFIX              the switch namespace and its bridge
#   netns_host PREFIX NAME ADDR      a host PREFIX-NAME with eth0 = ADDR/24
#   netns_wait_listening NS HOST PORT [SECONDS]
#   netns_mpirun PREFIX DIR A B NAME the start of an mpirun command across
#                                    hosts ha (address A) and hb (B)
#   netns_teardown PREFIX            kills every process in the lab and
#                                    deletes its namespaces; safe to repeat
#   netns_left PREFIX                the lab's namespaces still there

NETNS_HOSTS=

# Prints why no lab can be made here, nothing when one can.
netns_check() {
	if [ "$(id -u)" != 0 ]; then
		echo "not root: network namespaces need root"
	elif ! command -v ip >/dev/null 2>&1; then
		echo "no 'ip' command (Debian package iproute2)"
	elif ! ip netns list >/dev/null 2>&1; then
		echo "'ip netns' is not available: $(ip netns list 2>&1 | head -n 1)"
	fi
}

netns_switch() {
	ip netns add "$1-sw" || return 1
	NETNS_HOSTS="$NETNS_HOSTS sw"
	ip -n "$1-sw" link set lo up &&
		ip -n "$1-sw" link add br0 type bridge &&
		ip -n "$1-sw" link set br0 up
}

# The switch's end of the veth is named after the host (at most 15 bytes).
netns_host() {
	ip netns add "$1-$2" || return 1
	NETNS_HOSTS="$NETNS_HOSTS $2"
	ip link add eth0 netns "$1-$2" type veth peer name "$2" netns "$1-sw" &&
		ip -n "$1-$2" link set lo up &&
		ip -n "$1-$2" addr add "$3/24" dev eth0 &&
		ip -n "$1-$2" link set eth0 up &&
		ip -n "$1-sw" link set "$2" master br0 &&
		ip -n "$1-sw" link set "$2" up
}

# 0 if HOST:PORT accepts connections seen from namespace NS.
netns_listening() {
	ip netns exec "$1" "$PY" -c 'import socket, sys
s = socket.socket(); s.settimeout(0.5)
sys.exit(0 if s.connect_ex((sys.argv[1], int(sys.argv[2]))) == 0 else 1)' "$2" "$3" 2>/dev/null
}

# netns_mpirun PREFIX DIR A B NAME: prints the start of an mpirun command
# that runs in host PREFIX-ha (address A) and starts the daemon of B in
# PREFIX-hb through an rsh agent (written to DIR/agent) instead of ssh,
# under host name NAME (a UTS namespace of its own, as a second machine
# has); Open MPI's connections and the ranks' bytes kept to
# 198.18.0.0/24.  The hostfile and -np are the caller's.
netns_mpirun() {
	cat >"$2/agent" <<EOF || return 1
#!/bin/sh
host=\$1
shift
case \$host in
$3) exec ip netns exec $1-ha /bin/sh -c "\$*" ;;
$4) exec ip netns exec $1-hb unshare --uts /bin/sh -c "hostname $5 && \$*" ;;
*) echo "agent: no host \$host in this lab" >&2; exit 1 ;;
esac
EOF
	chmod +x "$2/agent" || return 1
	echo "ip netns exec $1-ha mpirun --mca plm_rsh_agent $2/agent --bind-to none" \
		"--mca oob_tcp_if_include 198.18.0.0/24 --mca btl_tcp_if_include 198.18.0.0/24"
}

netns_wait_listening() {
	i=0
	while ! netns_listening "$1" "$2" "$3"; do
		i=$((i + 1))
		[ "$i" -gt $(( ${4:-10} * 10 )) ] && return 1
		sleep 0.1
	done
}

# Every process still in one of the lab's namespaces was started by the
# test: SIGTERM, two seconds' grace, SIGKILL; then the namespaces go (their
# veths and the bridge with them).  A namespace is deleted only once it is
# empty, or it would live on unnamed with its processes.
netns_teardown() {
	for sig in TERM KILL; do
		any=
		for h in $NETNS_HOSTS; do
			for p in $(ip netns pids "$1-$h" 2>/dev/null); do
				kill -"$sig" "$p" 2>/dev/null && any=1
			done
		done
		[ -n "$any" ] || break
		i=0
		while [ "$i" -lt 20 ]; do
			left=
			for h in $NETNS_HOSTS; do
				[ -n "$(ip netns pids "$1-$h" 2>/dev/null)" ] && left=1
			done
			[ -n "$left" ] || break
			sleep 0.1
			i=$((i + 1))
		done
	done
	for h in $NETNS_HOSTS; do
		ip netns del "$1-$h" 2>/dev/null
	done
	NETNS_HOSTS=
}

netns_left() {
	ip netns list 2>/dev/null | awk -v p="$1-" 'index($1, p) == 1 { print $1 }'
}
