# tests/lib.sh - helpers for the end-to-end shell tests (sourced, POSIX sh).
# Every test runs from the top of the source tree and cleans up after itself.

TFGB=${TFGB:-./tfgb} # tests/valgrind.sh runs them with tfgb under valgrind
# Deadlines are multiplied by this (tests/valgrind.sh: tfgb runs many
# times slower); 1 otherwise.
SLOW=${TFGB_TEST_SLOW:-1}

# $1 (a number of seconds or milliseconds) times SLOW, for durations,
# timeouts and sleeps: job.duration=$(slow 300)ms, sleep $(slow 1.5).
slow() {
	awk -v n="$1" -v k="$SLOW" 'BEGIN { print n * k }'
}
PY=/usr/bin/python3

# load_slow: a TFGB_TEST_SLOW for this machine now, from the work of
# others only.  The tasks that want a CPU (state R, every thread) are
# counted six times over 0.6 s, leaving out this run's own: the processes
# whose environment holds this run's TFGB_TEST_RUN mark (tests/run.sh and
# tests/mutants.sh set it; the lanes, the tests and the tfgb processes they
# start inherit it).  With others wanting o CPUs per CPU, a test gets
# 1/(1+o) of what it was built for, so its deadlines and windows are
# stretched by 1+o, rounded, 1 to 10.  Past 10 a run is not worth making.
# Not the load average: it counts this run's own lanes and, for minutes
# after, the steps before it (CI's build and make check before mutants),
# which stretched windows that then loaded the machine further.  Without
# the rights to read another user's environment, its tasks count as
# others'.  tests/run.sh asks again before each script, tests/mutants.sh
# before each shell suite, when TFGB_TEST_SLOW is not given.
load_slow() {
	$PY - "${TFGB_TEST_RUN:-}" "$(nproc 2>/dev/null || echo 1)" <<'EOF' 2>/dev/null || echo 1
import os, sys, time
mark, ncpu = sys.argv[1].encode(), int(sys.argv[2])
me, ours, want, n = os.getpid(), {}, 0, 6
def is_ours(pid):
    if pid not in ours:
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            ours[pid] = bool(mark) and b"TFGB_TEST_RUN=" + mark in env
        except OSError:
            ours[pid] = False
    return ours[pid]
for i in range(n):
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            tids = os.listdir("/proc/%s/task" % pid)
        except OSError:
            continue
        for t in tids:
            try:
                with open("/proc/%s/task/%s/stat" % (pid, t), "rb") as f:
                    st = f.read()
            except OSError:
                continue
            if st[st.rfind(b")") + 2:][:1] == b"R" and not is_ours(pid):
                want += 1
    time.sleep(0.1)
k = int(1 + want / n / ncpu + 0.5)
print(min(max(k, 1), 10))
EOF
}

fail() { echo "FAIL: $*"; exit 1; }
# bad MESSAGE: one failed check; the test goes on, and ends with
# [ "$problems" = 0 ] || fail "$problems problem(s)".  TFGB_FAIL_FAST=1
# (tests/mutants.sh, where one failed check is all that is asked) ends the
# test at the first.
problems=0
bad() {
	echo "FAIL: $*"
	problems=$((problems + 1))
	[ -z "${TFGB_FAIL_FAST:-}" ] || exit 1
}
skip() { echo "$*"; exit 77; }
# run_in DIR WHAT STATUS CMD...: one case (counted in $cases): CMD exits
# STATUS, its stdout in DIR/o and stderr in DIR/e ($rc its exit status);
# 1 (said) when it exits otherwise
run_in() {
	ri_dir=$1 what=$2 ri_want=$3
	shift 3
	cases=$((cases + 1))
	rc=0
	"$@" >"$ri_dir/o" 2>"$ri_dir/e" || rc=$?
	[ "$rc" = "$ri_want" ] && return 0
	bad "$what: exit status $rc, not $ri_want: $(head -c 600 "$ri_dir/e")"
	return 1
}

# in_part NAME: 0 when the script's checks of part NAME are to run: always,
# unless TFGB_TEST_PART names another part (tests/mutants.sh, for a mutant
# whose line names the part of the script that catches it, SUITE:PART,
# leaves the other parts' cases out; make check runs every part)
in_part() { [ -z "${TFGB_TEST_PART:-}" ] || [ "$TFGB_TEST_PART" = "$1" ]; }

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
		[ "$i" -gt $(( ${2:-10} * 10 * SLOW )) ] && return 1
		sleep 0.1
	done
}

# Waits up to $2 seconds (default 10) until nothing listens on 127.0.0.1:$1.
wait_closed() {
	i=0
	while listening "$1"; do
		i=$((i + 1))
		[ "$i" -gt $(( ${2:-10} * 10 * SLOW )) ] && return 1
		sleep 0.1
	done
}

# Fails unless a JSON document on stdin parses and the Python expression $1
# (over `d`) is true; a tfgb result or sweep document must also be valid
# under proto/tfgb-result.schema.json (when python3-jsonschema is there).
json_check() {
	$PY -c 'import json, sys
d = json.load(sys.stdin)
sys.path.insert(0, "tests")
import schema
schema.check_doc(d, "stdin")
ok = eval("(" + sys.argv[1] + ")")
sys.exit(0 if ok else 1)' "$1"
}

# schema_check FILE...: every tfgb JSON result in the files (documents,
# or NDJSON lines) is valid under proto/tfgb-result.schema.json; fails
# naming the file and the first error.
schema_check() {
	$PY tests/schema.py "$@"
}

# The pids of processes whose command line (its arguments joined by
# spaces) contains $1 (this test's own port or file name), except this
# shell.  One process reads every /proc/PID/cmdline: a tr for each of a few
# hundred processes took 19 s on a loaded machine.  The word travels in the
# environment, so the reader's own command line does not match it.
pids_matching() {
	TFGB_PM_WORD=$1 TFGB_PM_SELF=$$ $PY -c 'import os
w, me, own = os.environ["TFGB_PM_WORD"], os.environ["TFGB_PM_SELF"], str(os.getpid())
for p in os.listdir("/proc"):
    if not p.isdigit() or p in (me, own):
        continue
    try:
        c = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        continue
    if w in c:
        print(p)'
}

# children PPID WORDS: pids of PPID's children whose command line has WORDS
# (a launcher's own PSs and workers, not those of a concurrent run)
children() {
	for f in $(grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null); do
		d=${f%/status}
		case "$( { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null)" in
		*"$2"*) echo "${d#/proc/}" ;;
		esac
	done
}

# stop_procs PID...: stops processes this test started in the background
# (servers, launchers, clients): SIGTERM and SIGCONT (a test may have
# stopped one) to each, up to 10 s (times SLOW) for them all to end, then
# SIGKILL to any still there; each is waited for.  An empty list, or a
# PID already ended, is no error.
stop_procs() {
	for sp_p in "$@"; do
		kill -TERM "$sp_p" 2>/dev/null && kill -CONT "$sp_p" 2>/dev/null
	done
	sp_i=0
	for sp_p in "$@"; do
		while kill -0 "$sp_p" 2>/dev/null && [ $sp_i -lt $((100 * SLOW)) ]; do
			sleep 0.1
			sp_i=$((sp_i + 1))
		done
		kill -KILL "$sp_p" 2>/dev/null
		wait "$sp_p" 2>/dev/null
	done
	return 0
}

# cleanup_on_exit DIR: however the test ends (its last line, fail, exit,
# SIGHUP, SIGINT, SIGTERM), stops every job it left in the background
# (stop_procs: its servers, launchers, clients) and removes DIR, its
# scratch folder.  Call it once DIR exists.
cleanup_on_exit() {
	co_dir=$1
	trap test_cleanup EXIT
	trap 'exit 1' HUP INT TERM
}

# test_cleanup: what cleanup_on_exit runs at the exit.  A second signal
# (a second Ctrl-C, a timeout's SIGTERM) does not cut it short: it would
# leave the jobs and the folder behind, and stop_procs has a deadline.
# The shell's jobs are listed into a file: $(jobs -p) would list those of
# a subshell, none.
test_cleanup() {
	trap '' HUP INT TERM
	{ jobs -p >"$co_dir/.jobs"; } 2>/dev/null
	# shellcheck disable=SC2046 # a list of pids
	stop_procs $(cat "$co_dir/.jobs" 2>/dev/null)
	rm -rf "$co_dir"
}

# no_leftovers WORD WHAT: fails the test, naming them, when processes
# whose command line has WORD (this test's port, job file or folder) are
# still there: WHAT left them behind.
no_leftovers() {
	nl_left=$(pids_matching "$1" | tr '\n' ' ')
	[ -z "$nl_left" ] || fail "$2 left processes behind: $nl_left"
}

# A base port B such that B-1 .. B+$1-1 are all free on 127.0.0.1 (the
# control service sits one port below PS 0).  Drawn outside the kernel's
# ephemeral range (ip_local_port_range), where every outgoing connection on
# this shared machine takes its port: only another test's draw can collide,
# and tests/run.sh runs a script again when its server found its port taken.
free_ports() {
	$PY -c 'import socket, random, sys
n = int(sys.argv[1])
try:
    lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
except (OSError, ValueError):
    lo, hi = 32768, 60999
ranges = [r for r in ((10000, lo - n - 2), (hi + 2, 65534 - n)) if r[1] - r[0] > 1000]
if not ranges:
    ranges = [(20000, 60000)]
size = sum(r[1] - r[0] for r in ranges)
for _ in range(200):
    k = random.randrange(size)
    for r in ranges:
        if k < r[1] - r[0]:
            b = r[0] + k
            break
        k -= r[1] - r[0]
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

# wait_line FILE TEXT SECONDS: 0 once FILE (which may not exist yet) has a
# line containing TEXT, 1 after SECONDS (times SLOW): a server writes it
# just after it listens.
wait_line() {
	i=0
	until grep -qsF "$2" "$1"; do
		i=$((i + 1))
		[ "$i" -gt $(($3 * 10 * SLOW)) ] && return 1
		sleep 0.1
	done
}

# wait_ready FILE PID SECONDS: 0 once FILE has the line "ready" (a server's
# readiness report), 1 if PID exits first (its status in $srv_rc, $srv
# emptied), 2 after SECONDS (times SLOW).
wait_ready() {
	i=0
	while [ $i -lt $(($3 * 10 * SLOW)) ]; do
		grep -q '^ready$' "$1" && return 0
		if ! kill -0 "$2" 2>/dev/null; then
			wait "$2"; srv_rc=$?; srv=""
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 2
}

# start_on_free_port NAME BASE STEP ERRFILE FUNC: calls FUNC PORT (starts a
# server in the background and returns as wait_ready does) for PORT = BASE,
# BASE+STEP, ... up to BASE+20 until one starts, moving on only when
# ERRFILE says the port was taken.  Sets $port.
start_on_free_port() {
	port=$2
	while :; do
		"$5" "$port"
		case $? in
		0) return 0 ;;
		2) fail "$1 on port $port not ready in time" ;;
		esac
		grep -q "cannot listen on '127.0.0.1:$port'" "$4" ||
			fail "$1 exited with status $srv_rc before it was ready"
		port=$((port + $3))
		[ $port -le $(($2 + 20)) ] || fail "no free port in $2..$(($2 + 20))"
	done
}

# conn_bytes PORT FIELD: one line per established TCP connection from this
# machine to port PORT: the client end's ss -ti counter FIELD so far
# (bytes_received, bytes_acked; Debian package iproute2).
conn_bytes() {
	ss -tinH state established "( dport = :$1 )" 2>/dev/null | awk -v f="$2:" '
		/^[^ \t]/ { if (n++) print b; b = 0; next }
		match($0, f "[0-9]+") { b = substr($0, RSTART + length(f), RLENGTH - length(f)) }
		END { if (n) print b }'
}

# wait_conns PORT N BYTES SECONDS FIELD: 0 once N connections to PORT have
# each a FIELD counter (conn_bytes) of at least BYTES, 1 after SECONDS
# (times SLOW).
wait_conns() {
	i=0
	until [ "$(conn_bytes "$1" "$5" | awk -v b="$3" '$1 >= b' | wc -l)" -ge "$2" ]; do
		i=$((i + 1))
		[ "$i" -gt $(($4 * 10 * SLOW)) ] && return 1
		[ -n "${6:-}" ] && ! kill -0 "$6" 2>/dev/null && return 1
		sleep 0.1
	done
}

# wait_clients PORT N BYTES SECONDS: 0 once N connections to PORT have each
# received at least BYTES, 1 after SECONDS (times SLOW).
wait_clients() {
	wait_conns "$1" "$2" "$3" "$4" bytes_received
}

# wait_in_run PORT N SECONDS [PID]: 0 once N connections to PORT have each
# had at least 100 kB of their requests acknowledged, 1 after SECONDS (times
# SLOW), or at once when PID (the run) has ended: the workers are in their
# run.  Before it (the connect, the server's Info
# call, the control service's barrier) a connection carries under 2 kB, and
# a gRPC connection receives the server's SETTINGS at once, so bytes
# received say nothing; 100 kB is several pushed payloads of the shell
# tests' jobs (20500 B at least).
wait_in_run() {
	wait_conns "$1" "$2" 100000 "$3" bytes_acked "${4:-}"
}

# skip_part REASON: this script passes but left a part out; tests/run.sh
# prints the reason with the script's name (and TFGB_STRICT=1 fails).
skip_part() {
	echo "SKIP-PART: $*"
}

# mpi_leaks_unchecked [WHERE]: in a sanitizer build (TFGB_SANITIZE), the
# MPI ranks started from here on do not check leaks, and the part says so.
# LeakSanitizer: Open MPI keeps about 120 kB in 3,000 allocations of its
# own past MPI_Finalize, in libraries built without frame pointers, so
# their stacks end in "unknown module" and no suppression can name them.
# The address and undefined-behaviour checks still run.
mpi_leaks_unchecked() {
	[ -n "${TFGB_SANITIZE:-}" ] || return 0
	export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	skip_part "leaks not checked in the MPI ranks${1:+ $1} (SANITIZE=$TFGB_SANITIZE): Open MPI's own allocations past MPI_Finalize have no names to suppress"
}

# mpi_kill_rank WORD RANK ERR MPIRUN_PID: once the launch whose stderr is
# ERR serves, kills MPI rank RANK (among the processes whose command line
# has WORD) with SIGKILL and waits for mpirun; fails unless mpirun ends
# within 10 s (scaled) with the dead rank's status, 137 (tfgb-mpi(7)).
# The killed rank's pid is left in mk_pid (not printed: a command
# substitution's subshell could not wait for mpirun).
mpi_kill_rank() {
	mk_pid=
	wait_line "$3" "serving the other ranks" 10 || fail "rank death: the PS rank never served"
	sleep 0.3
	for p in $(pids_matching "$1"); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" &&
			mk_pid=$p
	done
	[ -n "$mk_pid" ] || fail "rank death: no process of rank $2"
	mk_t0=$(date +%s)
	kill -9 "$mk_pid"
	wait "$4"
	mk_rc=$?
	[ $mk_rc = 137 ] || fail "rank death: mpirun's exit $mk_rc, want 137 (the killed rank's): $(cat "$3")"
	[ $(($(date +%s) - mk_t0)) -le $(slow 10) ] ||
		fail "rank death: the run took more than $(slow 10)s to end"
}

# need_cmd COMMAND PACKAGE: skips the whole script unless COMMAND exists,
# naming the Debian package that has it.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 || skip "needs $1 (Debian package $2)"
}

# need_py MODULE PACKAGE: skips the whole script unless $PY imports MODULE.
need_py() {
	[ -x "$PY" ] || skip "needs $PY (Debian package python3)"
	$PY -c "import $1" 2>/dev/null || skip "needs the Python module $1 (Debian package $2)"
}
