#!/bin/sh
# t_allocator.sh - job.allocator: every choice is the malloc that every
# process of the run actually had, as the result says (environment, the
# "# allocator" line, JSON allocators for the worker and the PS); a
# hand-started `tfgb serve` tells the worker its own through Info, over
# grpc and socket, and a server that does not know Info is "unknown" with
# the reason; a throughput launcher's report names each PS's and worker's;
# a missing library is refused with exit 2 naming file, line, key and the
# package (TFGB_ALLOC_LIBDIR points at an empty directory); a message after
# tfgb executed itself again still names the job file's line.
# Run from the top of the tree; exit 0 pass, 77 skip (reason on the last
# line), anything else fail.
. tests/lib.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_allocator.XXXXXX") || exit 1
srv=""
cleanup_on_exit "$tmp"

[ -x "$TFGB" ] || skip "skip: $TFGB is not built (make tfgb)"
mkdir "$tmp/empty"
short="-s job.warmup=0s -s job.duration=$(slow 200)ms -s payload.scheme=custom -s payload.iovec=64KiB"

# ---- a missing allocator: exit 2, one line naming file, line, key, package ----
printf '[job]\nwarmup = 0s\n\nallocator = jemalloc\n' >"$tmp/job.ini"
port=$(free_port) || fail "no free port"
for cmd in latency serve throughput train; do
	TFGB_ALLOC_LIBDIR="$tmp/empty" timeout "$(slow 30)" "$TFGB" "$cmd" -c "$tmp/job.ini" \
		-s cluster.ps=127.0.0.1:"$port" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] || fail "$cmd with a missing jemalloc: exit $rc, not 2: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "$cmd: not one line: $(cat "$tmp/err")"
	grep -qF "tfgb: $tmp/job.ini:4: job.allocator = jemalloc: jemalloc is not installed (no $tmp/empty/libjemalloc.so.2); apt-get install libjemalloc2" "$tmp/err" ||
		fail "$cmd: the refusal does not name file, line, key and package: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "$cmd: a report after the refusal: $(cat "$tmp/out")"
done
! listening "$port" || fail "a server was started for a refused job"

if "$TFGB" version | grep -q '^allocator: asan'; then
	skip "skip: a sanitizer build runs its own allocator; job.allocator is recorded as asan"
fi

# an allocator's library is there (make deps installs all three), where
# tfgb looks: the C library's directory, or /usr/ in front of it
have() {
	case "$1" in
	glibc|glibc-kept) return 0 ;;
	jemalloc) so=libjemalloc.so.2 ;;
	tcmalloc) so=libtcmalloc_minimal.so.4 ;;
	mimalloc) so=libmimalloc.so.2 ;;
	esac
	for d in /lib/*-linux-gnu /usr/lib/*-linux-gnu /lib64 /usr/lib64; do
		[ -r "$d/$so" ] && return 0
	done
	return 1
}

# ---- each choice, in the worker and in the PS it starts ----
checked=0
for a in glibc glibc-kept jemalloc tcmalloc mimalloc; do
	if ! have "$a"; then
		echo "note: $a is not installed here (make deps); its case is left out"
		continue
	fi
	for tr in socket grpc; do
		[ "$tr" = grpc ] && [ "$a" != glibc-kept ] && [ "$a" != jemalloc ] && continue
		port=$(free_port) || fail "no free port"
		# shellcheck disable=SC2086 # $short is a list of options
		timeout "$(slow 60)" "$TFGB" latency -s job.allocator="$a" -s job.transport="$tr" \
			-s cluster.ps=127.0.0.1:"$port" $short -f json >"$tmp/$a.json" 2>"$tmp/err" ||
			fail "latency with $a over $tr: $(cat "$tmp/err")"
		json_check "d['environment']['allocator'] == '$a' and
		            d['environment']['allocator_library'] and
		            d['allocators']['workers'][0]['name'] == '$a' and
		            d['allocators']['ps'][0]['name'] == '$a' and
		            d['allocators']['ps'][0]['version'] == d['environment']['allocator_version'] and
		            'allocator = $a' in d['job']" <"$tmp/$a.json" ||
			fail "$a over $tr: the result does not name $a everywhere: $(cat "$tmp/$a.json")"
		checked=$((checked + 1))
	done
	# text: the header line
	port=$(free_port) || fail "no free port"
	# shellcheck disable=SC2086 # $short is a list of options
	timeout "$(slow 60)" "$TFGB" bandwidth -s job.allocator="$a" -s job.transport=socket \
		-s cluster.ps=127.0.0.1:"$port" $short >"$tmp/$a.txt" 2>"$tmp/err" ||
		fail "bandwidth with $a: $(cat "$tmp/err")"
	grep -q "^# allocator: worker $a [^;]*; PS $a " "$tmp/$a.txt" ||
		fail "bandwidth with $a: no '# allocator: worker $a ...; PS $a ...' line: $(cat "$tmp/$a.txt")"
done
[ "$checked" -ge 3 ] || fail "only $checked allocator cases ran"

# ---- a hand-started serve with another allocator than the worker's ----
if have mimalloc; then other=mimalloc; else other=glibc; fi
for tr in grpc socket; do
	start_server() {
		: >"$tmp/ready"
		TFGB_READY_FD=3 TFGB_NO_CONTROL=1 "$TFGB" serve -s job.allocator="$other" \
			-s job.transport="$tr" -s cluster.ps="127.0.0.1:$1" 3>"$tmp/ready" 2>"$tmp/serr" &
		srv=$!
		wait_ready "$tmp/ready" "$srv" 10
	}
	start_on_free_port "serve ($tr)" "$(free_port)" 2 "$tmp/serr" start_server
	# shellcheck disable=SC2086 # $short is a list of options
	timeout "$(slow 60)" "$TFGB" latency -s job.allocator=glibc-kept -s job.transport="$tr" \
		-s cluster.ps=127.0.0.1:"$port" $short -f json >"$tmp/hand.json" 2>"$tmp/err" ||
		fail "latency against a hand-started serve ($tr): $(cat "$tmp/err")"
	json_check "d['allocators']['ps'][0]['name'] == '$other' and
	            d['allocators']['workers'][0]['name'] == 'glibc-kept' and
	            d['environment']['allocator'] == 'glibc-kept'" <"$tmp/hand.json" ||
		fail "$tr: the hand-started serve's $other is not in the worker's result: $(cat "$tmp/hand.json")"
	kill -TERM "$srv"
	wait "$srv" || fail "serve ($tr) did not stop cleanly"
	srv=""
done

# ---- a peer that does not know Info: unknown, with the reason ----
if "$PY" -c 'import grpc' 2>/dev/null; then
	start_py() {
		"$PY" tests/interop/wire_server.py "$1" >"$tmp/ready" 2>"$tmp/serr" &
		srv=$!
		wait_ready "$tmp/ready" "$srv" 20
	}
	start_on_free_port wire_server.py "$(free_port)" 1 "$tmp/serr" start_py
	# shellcheck disable=SC2086 # $short is a list of options
	timeout "$(slow 60)" "$TFGB" latency -s cluster.ps=127.0.0.1:"$port" $short -f json \
		>"$tmp/py.json" 2>"$tmp/err" || fail "latency against wire_server.py: $(cat "$tmp/err")"
	json_check "d['status'] == 'ok' and d['allocators']['ps'][0]['name'] is None and
	            'UNIMPLEMENTED' in d['allocators']['ps'][0]['why']" <"$tmp/py.json" ||
		fail "a server without Info is not 'unknown' with its reason: $(cat "$tmp/py.json")"
	kill -TERM "$srv"
	wait "$srv"
	srv=""
else
	echo "note: $PY cannot import grpc (python3-grpcio): the non-tfgb peer case is left out"
fi

# ---- throughput: every worker's and every PS's allocator reaches the report ----
if have tcmalloc; then a=tcmalloc; else a=glibc; fi
base=$(free_ports 3) || fail "no free ports"
# shellcheck disable=SC2086 # $short is a list of options
timeout "$(slow 90)" "$TFGB" throughput -s job.allocator="$a" -s cluster.ps=127.0.0.1:"$base" \
	-s cluster.ps_count=2 -s cluster.workers=2 -s job.transport=socket $short -f json \
	>"$tmp/tp.json" 2>"$tmp/err" || fail "throughput with $a: $(cat "$tmp/err")"
json_check "[w['name'] for w in d['allocators']['workers']] == ['$a', '$a'] and
            [p['name'] for p in d['allocators']['ps']] == ['$a', '$a'] and
            d['environment']['allocator'] == '$a'" <"$tmp/tp.json" ||
	fail "throughput: not every process's $a in the report: $(cat "$tmp/tp.json")"

# ---- train: the launcher and every worker, not only the PSs ----
# glibc-kept, the default, is the case that was lost: train's processes
# took glibc's malloc as shipped whatever the job said
base=$(free_ports 2) || fail "no free ports"
timeout "$(slow 90)" "$TFGB" train -s job.allocator=glibc-kept -s cluster.ps=127.0.0.1:"$base" \
	-s cluster.ps_count=1 -s cluster.workers=2 -s job.transport=socket -s train.model=mnist_mlp \
	-s train.steps=1 -s train.warmup_steps=0 -f json >"$tmp/train.json" 2>"$tmp/err" ||
	fail "train with glibc-kept: $(cat "$tmp/err")"
json_check "[w['name'] for w in d['allocators']['workers']] == ['glibc-kept', 'glibc-kept'] and
            [p['name'] for p in d['allocators']['ps']] == ['glibc-kept'] and
            d['environment']['allocator'] == 'glibc-kept'" <"$tmp/train.json" ||
	fail "train: not every process's glibc-kept in the report: $(cat "$tmp/train.json")"

# ---- executed again: later messages still name the job file's line ----
if have jemalloc; then
	printf '[job]\nallocator = jemalloc\n[cluster]\nps = 127.0.0.1:%s\n[affinity]\nworker_numa_node = 4000\n' \
		"$(free_port)" >"$tmp/numa.ini"
	timeout "$(slow 30)" "$TFGB" latency -c "$tmp/numa.ini" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] || fail "an unplaceable worker under jemalloc: exit $rc: $(cat "$tmp/err")"
	grep -q "^tfgb: $tmp/numa.ini:6: affinity.worker_numa_node = 4000: " "$tmp/err" ||
		fail "after executing again the message lost the file's line: $(cat "$tmp/err")"
fi
echo "ok: $checked allocator cases"
