#!/bin/sh
# tfgb-alone: MPI ranks busy-poll, one a CPU (three ranks in the throughput and train runs)
# t_mpi.sh - the mpi transport (tfgb-mpi(7)) on real Open MPI, every
# process a rank of one mpirun on loopback: latency over shared memory
# (btl vader,self) and bandwidth inflight 16 over TCP (tcp,self), each with
# verify = yes and its bytes accounted for on both sides (the worker's
# calls x payload = what the PS rank says it answered, tfgb serve -v's
# line); throughput 1 PS x 2 workers (per-PS calls = the workers' sum) and
# a short train run, in the non-serialized and serialized modes; the
# result names the MPI library, the thread level and the byte transport
# asked for; an MPMD launch (tfgb serve : tfgb latency).  Refusals:
# transport = mpi without mpirun, or with the wrong number of ranks, exits
# 2 at once naming the mpirun command; bad [mpi] keys exit 2 naming the
# key.  The PS rank killed mid-run: the worker names it and ends.  A
# hostile rank's messages answered with their statuses while the server
# serves on.  No process left behind.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
# Parts (tests/lib.sh: in_part; a mutant runs only the part that catches
# it): refusals (1), p2p (2), throughput (3), train (4), death (5),
# hostile (6).
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3
command -v mpirun >/dev/null 2>&1 || skip "no mpirun (Debian package openmpi-bin)"
$TFGB version | grep -q '^mpi: compiled in' ||
	skip "tfgb built without the mpi transport (MPI=0: needs libopenmpi-dev)"

# as root Open MPI wants to be told; a container may have fewer cores than ranks
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="mpirun --oversubscribe --bind-to none"

port=$(free_port)
out=$(mktemp -d)
cleanup_on_exit "$out"
mpi_leaks_unchecked # (tests/lib.sh: why)

J="-s job.transport=mpi -s cluster.ps=127.0.0.1:$port -s job.timeout=$(slow 20)s"
J="$J -s job.warmup=$(slow 100)ms -s job.duration=$(slow 400)ms -s monitor.interval=0"
P="-s payload.scheme=custom -s payload.iovec=10B,3KiB,100KiB"

# expect2 WHAT TEXT CMD...: exits 2 at once with TEXT in its one line
expect2() {
	what=$1 text=$2
	shift 2
	t0=$(date +%s)
	"$@" >"$out/o" 2>"$out/e"
	rc=$?
	[ $rc = 2 ] || fail "$what: exit $rc, want 2: $(cat "$out/e")"
	grep -qF -- "$text" "$out/e" || fail "$what: no '$text' in: $(cat "$out/e")"
	[ $(($(date +%s) - t0)) -le $(slow 10) ] || fail "$what: took more than $(slow 10)s"
}

# 1. refusals
if in_part refusals; then
	expect2 "latency without mpirun" "mpirun -np 2 tfgb latency" $TFGB latency $J -q
	expect2 "throughput without mpirun" "mpirun -np 3 tfgb throughput" \
		$TFGB throughput $J -s cluster.workers=2 -q
	expect2 "a bad mpi.btl" "mpi.btl" $TFGB latency $J -s mpi.btl=openib -q
	expect2 "an unknown [mpi] key" "mpi.bogus" $TFGB latency $J -s mpi.bogus=1 -q
	expect2 "a bad mpi.direct_min" "mpi.direct_min" $TFGB latency $J -s mpi.direct_min=0 -q
	expect2 "a bad mpi.thread_level" "mpi.thread_level" $TFGB latency $J -s mpi.thread_level=multiple -q
	expect2 "latency as 3 ranks" "mpirun -np 2 tfgb latency" $MPIRUN -np 3 $TFGB latency $J -q
	expect2 "throughput not one launch" "mpirun -np 2 tfgb throughput" \
		$MPIRUN -np 2 $TFGB throughput $J -q
	# an emulated link needs the PSs and workers tfgb starts: said by rank
	# 0 at once (the worker rank once built a link and waited for its PS)
	expect2 "[network] as ranks" "-s #7: network.delay = 1ms: [network] emulates a link" \
		$MPIRUN -np 2 $TFGB latency $J -s network.delay=1ms -s job.timeout=2s -q
	[ "$(grep -c '^tfgb: ' "$out/e")" = 1 ] || fail "[network] as ranks: not one line: $(cat "$out/e")"
	expect2 "[network] as ranks" "-s #8: network.congestion = reno: [network] emulates" \
		$MPIRUN -np 3 $TFGB throughput $J -s cluster.workers=2 -s network.congestion=reno \
		-s job.timeout=2s -q
	[ "$(grep -c '^tfgb: ' "$out/e")" = 1 ] || fail "[network] as ranks: not one line: $(cat "$out/e")"
	# a launch that fits neither shape of the job: one line, from rank 0,
	# naming the keys that fit the launch given
	expect2 "3 ranks for 1 PS x 4 workers" "for this launch set -s cluster.workers=2 (ranks 0..0 the servers) or -s cluster.workers=3 (the workers alone" \
		$MPIRUN -np 3 $TFGB throughput $J -s cluster.workers=4 -q
	[ "$(grep -c 'tfgb' "$out/e")" = 1 ] || fail "3 ranks for 1 x 4: not one line: $(cat "$out/e")"
	# a collective launched without cluster.workers: the line gives the
	# launch's own count (it once advised "4, say" under mpirun -np 3)
	expect2 "collective, workers unset" "(-s cluster.workers=3, the launch's processes)" \
		$MPIRUN -np 3 $TFGB collective $J -q
	[ "$(grep -c '^tfgb' "$out/e")" = 1 ] || fail "collective, workers unset: not one line: $(cat "$out/e")"
	# MPMD: too few ranks for the workers' side, and serve on the workers'
	# ranks: one line for each part of the launch
	expect2 "MPMD, 2 ranks for 1 x 3" "for this launch set -s cluster.workers=1 (ranks 0..0 the servers)" \
		$MPIRUN -np 1 $TFGB serve $J -s cluster.workers=3 -q : -np 1 $TFGB throughput $J \
		-s cluster.workers=3 -q
	[ "$(grep -c '^tfgb' "$out/e")" = 1 ] || fail "MPMD, too few: not one line: $(cat "$out/e")"
	expect2 "MPMD, serve on the workers' ranks" "serve: ranks 1..2 (OMPI_COMM_WORLD_RANK) of a launch of 3 are workers 0..1's" \
		$MPIRUN -np 1 $TFGB throughput $J -s cluster.workers=2 -q : -np 2 $TFGB serve $J \
		-s cluster.workers=2 -q
	[ "$(grep -c '^tfgb' "$out/e")" = 1 ] || fail "MPMD, serve on workers: not one line: $(cat "$out/e")"
	echo "ok: refusals: no mpirun, wrong rank counts, bad [mpi] keys, [network] (exit 2, one line)"
fi

# served FILE METHOD CALLS INFLIGHT REQ REPLY: the PS rank's -v line says
# it answered the worker's CALLS calls of METHOD (up to INFLIGHT more: the
# calls in flight when the window closed, which no figure counts), REQ
# request and REPLY reply bytes each
served() {
	$PY - "$@" <<'PY'
import re, sys
f, method = sys.argv[1], sys.argv[2]
calls, inflight, req, rep = (int(x) for x in sys.argv[3:7])
m = re.search(r"answered (\d+) calls \((.*)\), (\d+) request bytes, (\d+) reply bytes", open(f).read())
if not m:
    print("no 'answered' line"); sys.exit(1)
per = dict((c.rsplit(" ", 1)[0], int(c.rsplit(" ", 1)[1])) for c in m.group(2).split(", "))
n = per[method]
if not calls <= n <= calls + inflight or (int(m.group(3)), int(m.group(4))) != (n * req, n * rep):
    print("PS answered %d calls, %s bytes; the worker counted %d calls (+%d in flight) of %d and %d bytes"
          % (n, m.group(3, 4), calls, inflight, req, rep)); sys.exit(1)
PY
}

# p2p BENCH BTL MODE INFLIGHT METHOD LEVEL: one run, its result and its
# bytes; LEVEL the MPI thread level asked ([mpi] thread_level) and given
p2p() {
	$MPIRUN -np 2 $TFGB "$1" $J $P -s mpi.btl="$2" -s job.mode="$3" -s job.inflight="$4" \
		-s mpi.thread_level="$(echo "$6" | tr A-Z a-z)" \
		-s job.verify=yes -v -f json >"$out/r.json" 2>"$out/e" ||
		fail "$1 over $2 ($3): exit $?: $(tail -n 5 "$out/e")"
	json_check "d['status'] == 'ok' and d['calls'] > 0 and d['errors'] == 0
and d['transport'] == 'mpi' and d['inflight'] == $4
and 'Open MPI' in d['tfgb']['transport_version']
and 'MPI_THREAD_$6' in d['tfgb']['transport_version']
and 'btl $2 (asked in [mpi] btl)' in d['tfgb']['transport_version']" <"$out/r.json" ||
		fail "$1 over $2 ($3): bad result: $(cat "$out/r.json")"
	n=$($PY -c 'import json,sys; d=json.load(sys.stdin); print(d["calls"] + d["warmup_calls"])' \
		<"$out/r.json")
	[ "$3" = non-serialized ] || return 0
	# the payload's bytes each way (Echo) or one way and 8 back (Ack)
	b=$((10 + 3072 + 102400))
	if [ "$5" = Echo ]; then back=$b; else back=8; fi
	why=$(served "$out/e" "$5" "$n" "$4" $b $back) ||
		fail "$1 over $2: bytes: $why"
}
if in_part p2p; then
	p2p latency vader,self non-serialized 1 Echo SINGLE
	p2p bandwidth tcp,self non-serialized 16 Ack FUNNELED
	echo "ok: latency (vader,self) and bandwidth inflight 16 (tcp,self): verified, bytes of both sides agree"
	p2p latency tcp,self serialized 1 EchoTensor SINGLE
	p2p bandwidth vader,self serialized 16 AckTensor SINGLE
	# MPMD: the PS rank a tfgb serve of its own, the worker tfgb latency
	$MPIRUN -np 1 $TFGB serve $J $P -s mpi.direct=no -q : \
		-np 1 $TFGB latency $J $P -s mpi.direct=no -s job.verify=yes -q -f json \
		>"$out/r.json" 2>"$out/e" || fail "latency, direct = no, MPMD: exit $?: $(tail -n 5 "$out/e")"
	json_check "d['status'] == 'ok' and d['errors'] == 0 and d['calls'] > 0" <"$out/r.json" ||
		fail "direct = no, MPMD: bad result: $(cat "$out/r.json")"
	echo "ok: serialized latency and bandwidth; direct = no, launched MPMD (tfgb serve : tfgb latency)"
fi

# 3. throughput, 1 PS x 2 workers in one launch
if in_part throughput; then
	$MPIRUN -np 3 $TFGB throughput $J $P -s cluster.workers=2 -s mpi.btl=vader,self -q -f json \
		>"$out/t.json" 2>"$out/e" || fail "throughput: exit $?: $(tail -n 5 "$out/e")"
	json_check "d['status'] == 'ok' and d['errors'] == 0 and d['calls'] > 0
	and d['transport'] == 'mpi'" <"$out/t.json" || fail "throughput: bad result: $(cat "$out/t.json")"
	echo "ok: throughput 1 PS x 2 workers (vader,self)"
	# MPMD over socket with cluster.workers on the workers' side only: the
	# server finds its launch's workers (it once served on until killed)
	t0=$(date +%s)
	timeout $((60 * SLOW)) $MPIRUN -np 1 $TFGB serve $J -s job.transport=socket -q : -np 2 $TFGB \
		throughput $J -s job.transport=socket -s cluster.workers=2 -q -f json >"$out/t.json" \
		2>"$out/e" || fail "MPMD socket, the key on one side: exit $?: $(tail -n 5 "$out/e")"
	json_check "d['status'] == 'ok' and d['calls'] > 0" <"$out/t.json" ||
		fail "MPMD socket: bad result: $(cat "$out/t.json")"
	[ $(($(date +%s) - t0)) -le $(slow 20) ] || fail "MPMD socket: took $(($(date +%s) - t0)) s"
	echo "ok: MPMD over socket, cluster.workers on the workers' side only: the server ends with the run"
fi

# 4. train: a tiny model, 1 PS x 2 workers, tensorflow mode over TCP
if in_part train; then
	printf 'model tiny\na/kernel float32 64,64 trainable\na/bias float32 64 trainable\n' >"$out/tiny.model"
	$MPIRUN -np 3 $TFGB train $J -s cluster.workers=2 -s train.model="$out/tiny.model" \
		-s train.steps=3 -s train.warmup_steps=1 -s job.mode=tensorflow -s mpi.btl=tcp,self -q \
		-f json >"$out/tr.json" 2>"$out/e" || fail "train: exit $?: $(tail -n 5 "$out/e")"
	json_check "d['status'] == 'ok' and d['errors'] == 0 and d['transport'] == 'mpi'" \
		<"$out/tr.json" || fail "train: bad result: $(cat "$out/tr.json")"
	echo "ok: train, tiny model, 1 PS x 2 workers, tensorflow mode (tcp,self)"
	# no launcher sampled them: each worker samples itself and the server of
	# the launch hands in its own series, merged into their host (JSON and
	# text, as throughput's); it once had no resources at all.  A 4 MiB
	# tensor for 20 steps: 3 steps of the tiny model can end inside one
	# 10 ms clock tick, and a fast machine then counts no CPU at all
	printf 'model small\nb/kernel float32 1024,1024 trainable\n' >"$out/small.model"
	for f in json text; do
		$MPIRUN -np 3 $TFGB train $J -s cluster.workers=2 -s train.model="$out/small.model" \
			-s train.steps=20 -s train.warmup_steps=1 -s monitor.interval=100ms -q -f $f \
			>"$out/trm.$f" 2>"$out/e" || fail "train, monitored, $f: exit $?: $(tail -n 5 "$out/e")"
	done
	json_check "d['resources']['scope'] == 'hosts' and len(d['resources']['hosts']) == 1
	and sorted((p['role'], p['index']) for h in d['resources']['hosts'] for p in h['processes'])
	    == [('ps', 0), ('worker', 0), ('worker', 1)]
	and all(r['rss_avg_bytes'] and r['rss_avg_bytes'] > 0
	        for h in d['resources']['hosts'] for r in h['summary']['roles'])
	and any(r['user_s'] + r['sys_s'] > 0 for h in d['resources']['hosts']
	        for r in h['summary']['roles'])" <"$out/trm.json" ||
		fail "train: no resources of its self-sampled processes: $(cat "$out/trm.json")"
	grep -q '^# resources of host .*, as its processes sampled themselves:' "$out/trm.text" &&
		grep -q '^# resources: worker x2: CPU [0-9.]*% of a core.*; RSS [0-9.]* MiB' "$out/trm.text" &&
		grep -q '^# resources: ps x1: CPU ' "$out/trm.text" ||
		fail "train: the text has no resources of its hosts: $(cat "$out/trm.text")"
	! grep -q 'RSS 0.0 MiB' "$out/trm.text" || fail "train: RSS 0.0 MiB: $(cat "$out/trm.text")"
	echo "ok: train without a launcher: its workers and server sampled themselves (JSON and text)"
fi

# 5. a rank that dies: the PS rank killed mid-run.  The worker names it
# (rank, role, host, pid) and ends with status 1; mpirun's own status is
# the dead rank's, 128 + 9 (tfgb-mpi(7): the first rank to end abnormally
# decides it, and nothing a survivor does comes first)
if in_part death; then
	$MPIRUN -np 2 $TFGB latency $J -s job.duration=$(slow 30)s -s mpi.btl=vader,self \
		>"$out/o" 2>"$out/e" &
	mpi=$!
	mpi_kill_rank "cluster.ps=127.0.0.1:$port" 0 "$out/e" $mpi
	ps0=$mk_pid
	h=$(hostname)
	grep -qF "tfgb: rank 1 (worker 0) on host $h: rank 0 (PS 0) on host $h, pid $ps0 ended" "$out/e" ||
		fail "rank death: no line naming the dead rank: $(cat "$out/e")"
	echo "ok: the PS rank killed: the worker names it (rank, role, host), mpirun exits 137"
fi

# 6. a hostile rank (tests/mpi_hostile.c) beside tfgb serve: messages no
# tfgb worker sends, each answered as tfgb-mpi(7) says (What the server
# answers) or dropped, over shared memory (eager and rendezvous sizes)
# and TCP; then Echoes still answered with their bytes, and the server
# ends at the rank's goodbye with status 0, having counted only them.
# Over TCP also requests whose rest comes late or never (mpi.body_timeout
# 1 s): answered DEADLINE_EXCEEDED, or dropped when no header came
if in_part hostile; then
	command -v mpicc >/dev/null 2>&1 || fail "no mpicc (Debian package libopenmpi-dev)"
	inc=$(for d in gen src/*/ src/transport/*/; do printf -- '-I%s ' "${d%/}"; done)
	# shellcheck disable=SC2086
	mpicc -std=c11 -D_GNU_SOURCE -DTFGB_HAVE_MPI=1 $inc -o "$out/mpi_hostile" \
		tests/mpi_hostile.c 2>"$out/e" || fail "cannot build tests/mpi_hostile.c: $(cat "$out/e")"
	# hostile BTL MAX_MESSAGE CASES [late]: one launch, CASES answers
	hostile() {
		$MPIRUN --mca btl "$1" -np 1 $TFGB serve $J -s server.max_message="$2" \
			-s mpi.body_timeout=1s -v : -np 1 "$out/mpi_hostile" ${4:-} >"$out/o" 2>"$out/e" \
			</dev/null || fail "hostile rank ($*): exit $?: $(tail -n 5 "$out/o" "$out/e")"
		[ "$(grep -c '^ok: ' "$out/o")" = "$3" ] ||
			fail "hostile rank ($*): not every case answered: $(cat "$out/o")"
		grep -q "answered 2 calls (.*Echo 2,.*), 1034 request bytes, 1034 reply bytes" "$out/e" ||
			fail "hostile rank ($*): the server counted other calls: $(tail -n 2 "$out/e")"
	}
	hostile vader,self 1KiB 10
	hostile tcp,self 1KiB 10
	hostile tcp,self 1MiB 5 late
	echo "ok: a hostile rank: short, inconsistent, oversized (inline and direct), unknown, mis-sized and late messages answered or dropped; the server serves on (vader, tcp)"
fi

no_leftovers "cluster.ps=127.0.0.1:$port" "the MPI runs"
echo "ok: no rank left behind"
