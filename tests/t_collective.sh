#!/bin/sh
# tfgb collective on real processes: 2, 3, 4 and 5 ranks over the socket
# transport (and 3 over mpi, under mpirun), every op and algorithm that
# fits, every element of every measured operation verified, sizes that
# are not multiples of the ranks; the JSON result valid and its rows
# complete; a rank killed mid-run ends the run with exit 1 naming it, and
# nothing is left; bad keys exit 2 with one line before any rank starts;
# tfgb train with train.strategy = allreduce, ring and rhd, every bucket
# verified and the bytes each worker sent a step those of the algorithm;
# faults put in on purpose (a straggler named, a rank killed at a step)
# and the timeline of the steps.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3

base=$(free_ports 6) || fail "no free ports"
out=$(mktemp -d)
cleanup_on_exit "$out"

J="-s job.transport=socket -s collective.ranks=127.0.0.1:$base -s job.timeout=$(slow 20)s -q"
# 4 B to 67228 B by 7: 6 sizes, most not a multiple of any rank count
S="-s collective.min_bytes=4 -s collective.max_bytes=100KiB -s collective.step_factor=7"
S="$S -s collective.iterations=3 -s collective.warmup_iterations=1 -s collective.verify=all"

# run N OP ALG: one run, its result checked
run() {
	$TFGB collective $J $S -s cluster.workers="$1" -s collective.op="$2" \
		-s collective.algorithm="$3" -f json >"$out/r.json" 2>"$out/e" ||
		fail "$2 $3 over $1 ranks: exit $?: $(cat "$out/e")"
	json_check "d['status'] == 'ok' and d['collective']['ranks'] == $1
and d['collective']['op'] == '$2' and d['collective']['algorithm'] == '$3'
and [r['bytes'] for r in d['collective']['sizes']] == [4, 28, 196, 1372, 9604, 67228]
and all(r['wrong'] == 0 and r['verified'] == 3 and r['iterations'] == 3 for r in d['collective']['sizes'])
and all(r['time_us']['min'] <= r['time_us']['p50'] <= r['time_us']['max'] for r in d['collective']['sizes'])
and abs(d['collective']['bus_factor'] - (2.0 if '$2' == 'allreduce' else 1.0) * ($1 - 1) / $1) < 1e-6
and all(abs(r['busbw_GBps'] - r['algbw_GBps'] * d['collective']['bus_factor']) < 1e-5 for r in d['collective']['sizes'])" \
		<"$out/r.json" || fail "$2 $3 over $1 ranks: bad result: $(cat "$out/r.json")"
}

if in_part exact; then
	# every op over 3 and 4 ranks, all-reduce over 2 and 5 too (the unit
	# suite, check_coll, runs every op over 2-7 ranks of a test transport)
	for n in 2 3 4 5; do
		for op in allreduce reduce_scatter allgather; do
			case $op.$n in allreduce.* | *.3 | *.4) run $n $op ring ;; *) continue ;; esac
			# rhd: all-reduce over any count, its halves over powers of two
			case $op.$n in allreduce.* | *.4) run $n $op rhd ;; esac
		done
	done
	no_leftovers "$base" "the runs of 2-5 ranks"
	echo "ok: 2-5 ranks over socket, every op and algorithm, every element verified"
fi

if in_part grpc; then
	# TensorFlow's form: each step's bytes pulled with a RecvBuf call,
	# parked by the sender until they are there
	J0=$J
	J="$J -s job.transport=grpc"
	run 3 allreduce ring
	run 3 allreduce rhd
	run 4 allgather rhd
	run 2 reduce_scatter ring
	# a rank's server under hostile calls, mid-run: malformed, stray and
	# unknown-method calls get their status, and the run ends right
	# (5000 operations of 4 KiB: a few seconds, more than the calls need)
	$TFGB collective $J $S -s cluster.workers=3 -s collective.iterations=5000 -s collective.min_bytes=4KiB \
		-s collective.max_bytes=4KiB -f json >"$out/h.json" 2>"$out/e" &
	hpid=$!
	wait_listening "$base" 20 || fail "grpc hostile: rank 0 never listened"
	$PY - "$base" <<'PY' || fail "grpc hostile: a call was not answered as the wire contract says"
import struct, sys, grpc
ch = grpc.insecure_channel("127.0.0.1:%s" % sys.argv[1])
grpc.channel_ready_future(ch).result(timeout=20)
def status(method, body):
    try:
        ch.unary_unary(method)(body, timeout=10)
        return grpc.StatusCode.OK
    except grpc.RpcError as e:
        return e.code()
bad = [b"", b"junk", struct.pack(">IIQ", 0x54464752, 0, 0), struct.pack(">IIQ", 0x54464752, 99, 0),
       struct.pack(">IIQ", 0x12345678, 1, 0), b"x" * 100000]
for body in bad:
    got = status("/tfgb.v1.Collective/RecvBuf", body)
    if got != grpc.StatusCode.INVALID_ARGUMENT:
        print("RecvBuf %r: %s, want INVALID_ARGUMENT" % (body[:20], got)); sys.exit(1)
got = status("/tfgb.v1.Collective/Nothing", b"x")
if got != grpc.StatusCode.UNIMPLEMENTED:
    print("an unknown method: %s, want UNIMPLEMENTED" % got); sys.exit(1)
PY
	wait "$hpid" || fail "grpc hostile: the run failed: $(cat "$out/e")"
	json_check "d['status'] == 'ok' and d['collective']['sizes'][0]['wrong'] == 0" <"$out/h.json" ||
		fail "grpc hostile: $(cat "$out/h.json")"
	J=$J0
	no_leftovers "$base" "grpc"
	echo "ok: grpc, the receiver pulling every step (RecvBuf), every element verified"
fi

if in_part compare; then
	# tfgb compare: each size both results have, busbw and p50 side by side
	$TFGB collective $J $S -s cluster.workers=2 -f json >"$out/ca.json" 2>"$out/e" || fail "compare: $(cat "$out/e")"
	$TFGB collective $J $S -s cluster.workers=2 -s collective.max_bytes=1372 -f json >"$out/cb.json" 2>"$out/e" ||
		fail "compare: $(cat "$out/e")"
	$TFGB compare "$out/ca.json" "$out/cb.json" >"$out/cmp" 2>"$out/e" || fail "compare: exit $?: $(cat "$out/e")"
	$PY - "$out/ca.json" "$out/cb.json" "$out/cmp" <<'PY' || fail "compare: $(cat "$out/cmp")"
import json, sys
a, b = (json.load(open(p))["collective"]["sizes"] for p in sys.argv[1:3])
rows = [l.split() for l in open(sys.argv[3]) if l.startswith(("busbw", "time p50"))]
both = [r for r in a if r["bytes"] in [x["bytes"] for x in b]]
assert len(rows) == 2 * len(both) == 8, rows
for r, (bw, p50) in zip(both, zip(rows[0::2], rows[1::2])):
    x = [y for y in b if y["bytes"] == r["bytes"]][0]
    assert bw[2] == "%.0f" % r["bytes"] and abs(float(bw[4]) - r["busbw_GBps"]) < 1e-4, bw
    assert abs(float(p50[6]) - x["time_us"]["p50"]) < 0.01, p50
PY
	# rerun: the same job again; plot: a figure a collective does not
	# record (calls/s) refused, one line, exit 2 (its figures: t_plot_coll)
	$TFGB rerun "$out/cb.json" -q -f json >"$out/cc.json" 2>"$out/e" || fail "rerun: $(cat "$out/e")"
	$PY -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["job"] == b["job"] and [r["bytes"] for r in a["collective"]["sizes"]] == [r["bytes"] for r in b["collective"]["sizes"]]' \
		"$out/cb.json" "$out/cc.json" || fail "rerun: not the same job or sizes"
	$TFGB plot --metric rpc -o "$out/p.png" "$out/ca.json" >"$out/o" 2>"$out/e"
	rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$out/e")" = 1 ] && grep -q "ca.json' records no throughput" "$out/e" &&
		[ ! -e "$out/p.png" ] || fail "plot of a collective's calls/s: exit $rc: $(cat "$out/e")"
	echo "ok: compare puts the sizes both results have side by side; rerun runs the job again; plot refuses calls/s"
fi

if in_part text; then
	# text: a head and a row per size as it ends; csv: a header and the rows
	$TFGB collective $J $S -s cluster.workers=3 >"$out/t" 2>"$out/e" || fail "text: $(cat "$out/e")"
	[ "$(grep -c '^ *[0-9]' "$out/t")" = 6 ] || fail "text: not 6 rows: $(cat "$out/t")"
	grep -q '^# TF-gRPC-Collective: allreduce (sum), ring, 3 ranks over socket' "$out/t" ||
		fail "text: no head: $(cat "$out/t")"
	# under each row, each rank's time in exchanges / out of them (#44)
	[ "$(grep -Ec '^#   in exchanges / out of them, per rank \(ms\):( [0-9]+\.[0-9]{3}/[0-9]+\.[0-9]{3}){3}$' \
		"$out/t")" = 6 ] || fail "text: not 6 lines of waits: $(cat "$out/t")"
	$TFGB collective $J $S -s cluster.workers=3 -f csv >"$out/c" 2>"$out/e" || fail "csv: $(cat "$out/e")"
	[ "$(wc -l <"$out/c")" = 7 ] && head -1 "$out/c" | grep -q '^op,algorithm,ranks,' ||
		fail "csv: $(cat "$out/c")"
	echo "ok: text and csv rows"
fi

# stopped NAME WORDS SIGNAL BOUND PID: sends SIGNAL to PID (a rank or the
# launcher of the run in the background, $lpid), then checks the launcher
# exits 1 within BOUND seconds saying WORDS, with nothing left
stopped() {
	sleep 0.5
	t0=$(date +%s)
	kill "-$3" "$5"
	wait "$lpid"
	rc=$?
	[ "$rc" = 1 ] || fail "$1: exit $rc, want 1: $(cat "$out/e")"
	grep -q "^tfgb: collective: $2" "$out/e" || fail "$1: not said: $(cat "$out/e")"
	[ $(($(date +%s) - t0)) -le $(slow "$4") ] || fail "$1: the run took over $(slow "$4")s to end"
	no_leftovers "$base" "$1"
}
# long_run: 3 ranks of a run that would last for ever, in the background
# ($lpid), once all three run
long_run() {
	$TFGB collective $J -s cluster.workers=3 -s collective.min_bytes=64KiB \
		-s collective.max_bytes=64KiB -s collective.iterations=1000000 \
		-s collective.warmup_iterations=0 -s collective.verify=none >"$out/d" 2>"$out/e" &
	lpid=$!
	for i in $(seq 100); do
		[ "$(children "$lpid" "--task" | wc -l)" = 3 ] && break
		sleep 0.1
	done
}

if in_part death; then
	# a rank killed mid-run: the launcher names it and stops the others
	long_run
	victim=$(children "$lpid" "--task 2")
	[ -n "$victim" ] || fail "death: no rank 2 to kill"
	stopped death "rank 2 died: killed by signal 9" KILL 10 "$victim"
	echo "ok: a killed rank is named (exit 1) and nothing is left"
fi

if in_part interrupt; then
	# SIGTERM to the launcher mid-run: its ranks stop within a second or two
	long_run
	stopped interrupt "interrupted: the ranks were stopped" TERM 5 "$lpid"
	echo "ok: SIGTERM stops the ranks (exit 1), nothing left"
fi

if in_part train; then
	# train.strategy = allreduce: every bucket on every worker verified, and
	# the bytes each worker sent a step are the ring's, worked out here
	# from the buckets: rank r sends every block but its own in the
	# reduce-scatter and every block but its right neighbour's in the
	# all-gather
	for alg in ring rhd; do
		$TFGB train $J -s train.strategy=allreduce -s cluster.workers=3 -s train.model=resnet50 \
			-s train.steps=2 -s train.warmup_steps=1 -s collective.algorithm=$alg -f json \
			-s output.series="$out/ser_$alg.csv" >"$out/ta_$alg.json" 2>"$out/e" || fail "train allreduce $alg: exit $?: $(cat "$out/e")"
		json_check "d['status'] == 'ok' and d['train']['strategy'] == 'allreduce'
and d['train']['wrong'] == 0 and d['train']['verified_steps'] == 2 and d['train']['workers'] == 3
and sum(d['train']['buckets']) == d['train']['gradient_bytes'] and len(d['train']['buckets']) >= 4
and max(d['train']['buckets']) <= 25 * 2**20 and d['train']['variables'] == 161
and d['train']['step_ms']['min'] > 0" <"$out/ta_$alg.json" ||
			fail "train allreduce $alg: bad result: $(cat "$out/ta_$alg.json")"
	done
	# its resources (#42): no launcher samples a rank, so each samples
	# itself and rank 0 merges them per host, as throughput's and the PS
	# strategy's workers without a launcher
	json_check "d['resources']['scope'] == 'hosts' and len(d['resources']['hosts']) == 1
and sorted((p['role'], p['index']) for p in d['resources']['hosts'][0]['processes'])
    == [('worker', 0), ('worker', 1), ('worker', 2)]
and all(r['rss_avg_bytes'] > 0 for r in d['resources']['hosts'][0]['summary']['roles'])" \
		<"$out/ta_ring.json" || fail "train allreduce: no resources: $(cat "$out/ta_ring.json")"
	[ "$(cut -d, -f2,3,4 "$out/ser_ring.csv" | grep '^proc,worker,' | sort -u | wc -l)" = 3 ] ||
		fail "train allreduce: output.series has not the 3 workers: $(head "$out/ser_ring.csv")"
	$PY - "$out/ta_ring.json" "$out/ta_rhd.json" <<'PY' || fail "train allreduce: bytes sent are not the algorithm's"
import json, sys
def ring(r, c, n):
    ln = lambda b: c // n + (b < c % n)
    return (c - ln(r)) + (c - ln((r + 1) % n))
# rhd over 3 ranks: ranks 0 and 1 fold (rank 0 sends its bucket whole,
# rank 1 sends the sum back at the end), then ranks 1 and 2 halve and
# double over 2 blocks: each sends its half the other keeps, then its own
def rhd(r, c, n):
    if r == 0:
        return c
    return c + (c if r == 1 else 0)
for path, alg in zip(sys.argv[1:], (ring, rhd)):
    t = json.load(open(path))["train"]
    for r in range(t["workers"]):
        want = sum(alg(r, b // 4, t["workers"]) for b in t["buckets"]) * 4
        if t["sent_bytes_per_step"][r] != want:
            print("%s: rank %d sent %d bytes a step, want %d" % (alg.__name__, r, t["sent_bytes_per_step"][r], want))
            sys.exit(1)
PY
	echo "ok: train with the all-reduce strategy, ring and rhd, verified, bytes counted"
fi


if in_part faults; then
	# a straggler put in on purpose: named the last to arrive (counts, not
	# times: at least 80 % of the operations here, where a loaded machine
	# can hold another rank back as long), and the operations wait for it
	# (a lower bound: at least 90 % of the delay)
	$TFGB collective $J -s cluster.workers=3 -s collective.min_bytes=64KiB -s collective.max_bytes=64KiB \
		-s collective.iterations=20 -s fault.delay=100ms -s fault.rank=1 -f json >"$out/f.json" 2>"$out/e" ||
		fail "faults: exit $?: $(cat "$out/e")"
	json_check "d['fault']['rank'] == 1 and d['fault']['delay_ms'] == 100
and d['collective']['sizes'][0]['stragglers']['last_rank'] == 1
and d['collective']['sizes'][0]['stragglers']['last_counts'][1] >= 16
and d['collective']['sizes'][0]['stragglers']['injected_ms'] == 2000
and d['collective']['sizes'][0]['time_us']['p50'] >= 90000" <"$out/f.json" ||
		fail "faults: the straggler was not named, or not waited for: $(cat "$out/f.json")"
	# who waited for whom, per size (#44): the operations are named for the
	# straggler (counts: at least 8 of 10), the others' time in exchanges
	# grows by about the delay (at least 90 % of it, a lower bound), the
	# straggler's does not (less than half)
	$TFGB collective $J -s cluster.workers=3 -s collective.min_bytes=1KiB -s collective.max_bytes=4KiB \
		-s collective.step_factor=4 -s collective.iterations=10 -s fault.delay=20ms -s fault.rank=1 \
		-f json >"$out/f.json" 2>"$out/e" || fail "faults: waits: exit $?: $(cat "$out/e")"
	json_check "len(d['collective']['sizes']) == 2 and all(
    s['waited_for']['rank'] == 1 and s['waited_for']['counts'][1] >= 8
    and s['waited_for']['operations'] == 10 and sum(s['waited_for']['counts']) == 10
    and min(s['per_rank_wait_ms'][0], s['per_rank_wait_ms'][2]) >= 18
    and s['per_rank_wait_ms'][1] < 10 and len(s['per_rank_work_ms']) == 3
    and all(x >= 0 for x in s['per_rank_work_ms']) for s in d['collective']['sizes'])" <"$out/f.json" ||
		fail "faults: waits: the straggler was not named as waited for: $(cat "$out/f.json")"
	# the same in training steps, with the timeline: its per-step spans (the
	# slowest worker's) add up to the reported step times
	$TFGB train $J -s train.strategy=allreduce -s cluster.workers=3 -s train.model=mnist_mlp \
		-s train.steps=10 -s fault.delay=100ms -s fault.rank=2 -s output.timeline="$out/tl.json" \
		-f json >"$out/t.json" 2>"$out/e" || fail "faults: train: exit $?: $(cat "$out/e")"
	# who waited for whom: the others' time in exchanges grows by about the
	# delay (at least 90 % of it), the straggler's does not (less than
	# half), and the steps are named for it (counts, as above)
	json_check "d['train']['stragglers']['last_rank'] == 2 and d['train']['stragglers']['last_counts'][2] >= 8
and d['train']['step_ms']['p50'] >= 90
and d['train']['waited_for']['rank'] == 2 and d['train']['waited_for']['counts'][2] >= 8
and d['train']['waited_for']['steps'] == 10 and sum(d['train']['waited_for']['counts']) == 10
and min(d['train']['per_worker_wait_ms'][:2]) >= 90 and d['train']['per_worker_wait_ms'][2] < 50
and all(x >= 0 for x in d['train']['per_worker_work_ms'])" <"$out/t.json" ||
		fail "faults: train: $(cat "$out/t.json")"
	$PY - "$out/tl.json" "$out/t.json" <<'PY' || fail "faults: the timeline does not hold the steps"
import json, sys
t, r = (json.load(open(p)) for p in sys.argv[1:3])
ev = t["traceEvents"]
meta = [e for e in ev if e["ph"] == "M"]
spans = [e for e in ev if e["ph"] == "X" and e["tid"] == 0]
assert sorted(e["pid"] for e in meta if e["name"] == "process_name") == [0, 1, 2]
assert sorted((e["pid"], e["tid"], e["args"]["name"]) for e in meta if e["name"] == "thread_name") == \
    sorted([(p, 0, "steps") for p in range(3)] + [(p, 1, "exchanges") for p in range(3)])
assert len(spans) == 3 * 10 and all(e["dur"] > 0 and "ts" in e for e in spans), spans[:3]
# every ring step of every measured step on thread 1: 2 x (3 - 1) a step,
# within its step (to the clocks' bound and 1 us of rounding), from the
# left neighbour, to the right one, and the
# first exchange of the straggler's right neighbour waited the delay for it
xs = [e for e in ev if e["ph"] == "X" and e["tid"] == 1]
assert t["otherData"]["capped"]["dropped"] == 0 and t["otherData"]["capped"]["cap"] == 2048
assert len(xs) == 3 * 10 * 4, len(xs)
err = t["otherData"]["clock_err_us"] + 1
step = {(e["pid"], e["args"]["index"]): e for e in spans}
for x in xs:
    a, s = x["args"], step[(x["pid"], x["args"]["index"])]
    assert a["from"] == (x["pid"] + 2) % 3 and a["to"] == (x["pid"] + 1) % 3, x
    assert s["ts"] - err <= x["ts"], (x, s)
    # a verified step's span is its time, the verification's left out
    assert a["index"] in (0, 9) or x["ts"] + x["dur"] <= s["ts"] + s["dur"] + err, (x, s)
first = [x for x in xs if x["pid"] == 0 and x["name"].startswith("reduce-scatter 0 ")]
assert len(first) == 10 and sum(x["args"]["waited_for"] == 2 and x["dur"] >= 90e3 for x in first) >= 8, first
steps = {}
for e in spans:
    steps.setdefault(e["args"]["index"], []).append(e["dur"])
mean_ms = sum(max(v) for v in steps.values()) / len(steps) / 1e3
want = r["train"]["step_ms"]["mean"]
assert abs(mean_ms - want) <= 0.01 * want, (mean_ms, want)
assert t["otherData"]["clock_err_us"] >= 0
PY
	# a collective's timeline: its exchanges kept up to 2048 a rank and
	# size, the rest counted in the metadata (520 operations of 4 ring
	# steps on each of 3 ranks: 32 past the bound on each)
	$TFGB collective $J -s cluster.workers=3 -s collective.min_bytes=64 -s collective.max_bytes=64 \
		-s collective.iterations=520 -s collective.warmup_iterations=1 -s output.timeline="$out/ctl.json" \
		-f json >"$out/c.json" 2>"$out/e" || fail "faults: collective timeline: exit $?: $(cat "$out/e")"
	$PY - "$out/ctl.json" <<'PY' || fail "faults: the collective's timeline does not count what it left out"
import json, sys
t = json.load(open(sys.argv[1]))
xs = [e for e in t["traceEvents"] if e["ph"] == "X" and e["tid"] == 1]
assert t["otherData"]["capped"] == {"what": t["otherData"]["capped"]["what"], "cap": 2048, "dropped": 96}, t["otherData"]
for r in range(3):
    mine = [x for x in xs if x["pid"] == r]
    assert len(mine) == 2048 and {x["args"]["index"] for x in mine} == set(range(512)), r
    assert all(x["name"].startswith("64 B ") for x in mine), mine[0]
PY
	# a rank killed at a step of its own: named, the others stopped
	$TFGB collective $J -s cluster.workers=3 -s collective.min_bytes=4KiB -s collective.max_bytes=4KiB \
		-s fault.kill_step=3 -s fault.rank=1 >"$out/k" 2>"$out/e"
	rc=$?
	[ "$rc" = 1 ] && grep -q "^tfgb: collective: rank 1 died: killed by signal 9" "$out/e" ||
		fail "faults: kill_step: exit $rc: $(cat "$out/e")"
	no_leftovers "$base" "faults"
	echo "ok: a straggler named and waited for, a timeline that adds up, a rank killed at a step"
fi

# expect2 WHAT WORDS ARGS...: exit 2 at once, one line, naming WORDS
expect2() {
	what=$1 words=$2
	shift 2
	"$@" >"$out/o" 2>"$out/e"
	rc=$?
	[ "$rc" = 2 ] || fail "$what: exit $rc, want 2: $(cat "$out/e")"
	[ "$(wc -l <"$out/e")" = 1 ] && grep -qF -- "$words" "$out/e" ||
		fail "$what: not one line naming '$words': $(cat "$out/e")"
}
if in_part refusals; then
	expect2 "one rank" "cluster.workers = 1: is the collective's number of ranks: it must be in [2, 1024]" \
		$TFGB collective $J -s cluster.workers=1
	expect2 "a size of 0" "collective.min_bytes" $TFGB collective $J -s collective.min_bytes=0
	expect2 "an unknown algorithm" "collective.algorithm" \
		$TFGB collective $J -s collective.algorithm=tree
	expect2 "rhd's halves over 3" "rhd runs allgather over a power of two" \
		$TFGB collective $J -s cluster.workers=3 -s collective.algorithm=rhd -s collective.op=allgather
	expect2 "min above max" "collective.min_bytes" \
		$TFGB collective $J -s collective.min_bytes=2KiB -s collective.max_bytes=1KiB
	expect2 "two addresses for three" "collective.ranks" \
		$TFGB collective $J -s cluster.workers=3 -s "collective.ranks=127.0.0.1:$base, 127.0.0.1:$((base + 1))"
	# the pair's link joins PSs to workers: ranks ran without it, silently
	expect2 "the pair's link for ranks" "network.delay = 1ms: [network]'s pair joins the PSs to the workers, and ranks are neither: set network.topology = switch" \
		$TFGB collective $J -s cluster.workers=2 -s network.delay=1ms
	expect2 "the pair's link for the all-reduce strategy" "network.rate = 100mbit: [network]'s pair" \
		$TFGB train $J -s cluster.workers=2 -s train.strategy=allreduce -s train.model=mnist_mlp -s network.rate=100mbit
	# verbs has a collective side (the unit suite runs it over the simulated
	# device, check_verbs_coll); a device it cannot open is a run-time
	# failure: exit 1, one line, before any rank starts (as t_cli's throughput)
	$TFGB collective $J -s cluster.workers=2 -s job.transport=verbs \
		-s verbs.device=no_such_device >"$out/o" 2>"$out/e"
	rc=$?
	if "$TFGB" version | grep -q "verbs: compiled in"; then words="no RDMA device"; else words="VERBS=0"; fi
	[ "$rc" = 1 ] && [ "$(wc -l <"$out/e")" = 1 ] && grep -q "^tfgb: collective: .*$words" "$out/e" ||
		fail "verbs without a device: exit $rc, want 1 and one line naming '$words': $(cat "$out/e")"
	no_leftovers "$base" "verbs without a device"
	expect2 "a fault past the ranks" "fault.rank = 3: is past the run's ranks" \
		$TFGB collective $J -s cluster.workers=3 -s fault.rank=3
	expect2 "a negative delay" "fault.delay = -1ms: must be in [0s, 1h]" \
		$TFGB collective $J -s fault.delay=-1ms
	expect2 "--task past the ranks" "--task 3 is out of range" \
		$TFGB collective $J -s cluster.workers=3 --task 3
	no_leftovers "$base" "refusals"
	echo "ok: refusals (exit 2, one line, nothing started)"
fi

if in_part mpi; then
	if ! command -v mpirun >/dev/null 2>&1 || ! $TFGB version | grep -q '^mpi: compiled in'; then
		skip_part "mpi: no mpirun (Debian package openmpi-bin) or a tfgb built without MPI"
	else
		# as root Open MPI wants to be told; 3 ranks on fewer cores
		export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
		mpi_leaks_unchecked
		for alg in ring rhd; do
			mpirun --oversubscribe --bind-to none -np 3 $TFGB collective $J $S \
				-s job.transport=mpi -s cluster.workers=3 -s collective.algorithm=$alg \
				-f json >"$out/m.json" 2>"$out/e" || fail "mpi $alg: exit $?: $(tail -5 "$out/e")"
			json_check "d['status'] == 'ok' and d['transport'] == 'mpi' and len(d['collective']['sizes']) == 6
and all(r['wrong'] == 0 and r['verified'] == 3 for r in d['collective']['sizes'])" <"$out/m.json" ||
				fail "mpi $alg: bad result: $(cat "$out/m.json")"
		done
		# one tfgb line, from the first rank (mpirun adds its own)
		mpirun --oversubscribe --bind-to none -np 2 $TFGB collective $J -s job.transport=mpi \
			-s cluster.workers=3 >"$out/o" 2>"$out/e"
		rc=$?
		[ "$rc" = 2 ] && [ "$(grep -c '^tfgb: ' "$out/e")" = 1 ] &&
			grep -q 'this launch has 2 ranks .* set -s cluster.workers=2' "$out/e" ||
			fail "mpi: a launch of 2 for a job of 3: exit $rc: $(cat "$out/e")"
		# all-reduce training under mpirun: each rank samples itself (a 4 MiB
		# bucket for 20 steps, so that some CPU is counted within a tick)
		printf 'model small\nb/kernel float32 1024,1024 trainable\n' >"$out/small.model"
		for f in json text; do
			mpirun --oversubscribe --bind-to none -np 3 $TFGB train $J -s job.transport=mpi \
				-s cluster.workers=3 -s train.strategy=allreduce -s train.model="$out/small.model" \
				-s train.steps=20 -s monitor.interval=100ms -f $f >"$out/mt.$f" 2>"$out/e" ||
				fail "mpi train allreduce, $f: exit $?: $(tail -5 "$out/e")"
		done
		json_check "d['resources']['scope'] == 'hosts'
and sorted((p['role'], p['index']) for h in d['resources']['hosts'] for p in h['processes'])
    == [('worker', 0), ('worker', 1), ('worker', 2)]
and all(r['rss_avg_bytes'] > 0 for h in d['resources']['hosts'] for r in h['summary']['roles'])
and any(r['user_s'] + r['sys_s'] > 0 for h in d['resources']['hosts'] for r in h['summary']['roles'])" \
			<"$out/mt.json" || fail "mpi train allreduce: no resources: $(cat "$out/mt.json")"
		grep -q '^# resources of host .*, as its processes sampled themselves:' "$out/mt.text" &&
			grep -q '^# resources: worker x3: CPU [0-9.]*% of a core.*; RSS [0-9.]* MiB' "$out/mt.text" ||
			fail "mpi train allreduce: the text has no resources: $(cat "$out/mt.text")"
		echo "ok: 3 ranks over mpi, ring and rhd; a launch of the wrong size refused; training's resources"
	fi
fi
exit 0
