#!/bin/sh
# tfgb train: 2 PSs x 3 workers on loopback, over grpc and socket, in the
# three modes: raw Pull and Ack with ResNet-50; PullTensorZeroCopy and
# AckTensorZeroCopy, PullTensor and AckTensor with MobileNet v1.  Every
# byte of every step is accounted for on both sides: the workers' bytes
# per PS equal the model's placement (computed here from its file in
# conf/models, independently of model.c) x steps x workers,
# each way, and the PSs' own counters (tfgb serve -v) agree, warm-up steps
# included.  Synchronous steps pass one barrier per step, asynchronous
# none; greedy and round-robin placement give the per-PS bytes --list
# (model.c) computes; refusals exit 2 with one line.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3

base=$(free_ports 3) || fail "no free ports"
out=$(mktemp -d)
bg=
cleanup_on_exit "$out"

steps=2
warm=1
cat >"$out/job.ini" <<INI
[job]
timeout = $(slow 60)s
[cluster]
ps = 127.0.0.1:$base
ps_count = 2
workers = 3
[monitor]
interval = 0
[train]
model = resnet50
steps = $steps
warmup_steps = $warm
INI
J="-c $out/job.ini -q"

# The placement of conf/models/$model.model (resnet50 unless model is
# set) over 2 PSs, as
# "vars0 bytes0 vars1 bytes1", computed from the file itself; with a mode
# (non-serialized, tensorflow, serialized) also the request and the reply
# body bytes of one step per PS, "sent0 recv0 sent1 recv1", the tensor
# modes' protobuf encodings worked out here (proto/tfgb.proto: a
# TensorPull, a one-tensor TensorBundle, a BundleAck).
model=resnet50
place() {
	$PY - "$1" "${2:-}" "$model" <<'PY'
import sys
how, mode, model = sys.argv[1], sys.argv[2], sys.argv[3]
size = {"float32": 4, "float16": 2, "uint8": 1, "int64": 8}
number = {"float32": 1, "float16": 19, "uint8": 4, "int64": 9}
def vlen(v):
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n
def field(n):  # a length-delimited field of n bytes, left out when empty
    return 1 + vlen(n) + n if n else 0
def wire(name, dt, dims, b):
    sb = sum(vlen(d) for d in dims)
    pull = field(len(name)) + 1 + vlen(number[dt]) + field(sb)
    tl = pull + field(b)
    bundle = 1 + vlen(tl) + tl
    ack = (1 + vlen(b) if b else 0) + 2
    if mode == "non-serialized":
        return 8 + b, b + 8
    return pull + bundle, bundle + ack
var = []
for line in open("conf/models/%s.model" % model):
    f = line.split()
    if not f or f[0].startswith("#") or f[0] == "model":
        continue
    dims = [] if f[2] == "scalar" else [int(d) for d in f[2].split(",")]
    n = 1
    for d in dims:
        n *= d
    var.append((f[0], f[1], dims, n * size[f[1]]))
load, cnt, io = [0, 0], [0, 0], [0, 0, 0, 0]
for i, (name, dt, dims, b) in enumerate(var):
    k = i % 2 if how == "round_robin" else (0 if load[0] <= load[1] else 1)
    load[k] += b
    cnt[k] += 1
    if mode:
        out, back = wire(name, dt, dims, b)
        io[2 * k] += out
        io[2 * k + 1] += back
print(cnt[0], load[0], cnt[1], load[1], *(io if mode else []))
PY
}
rr=$(place round_robin)
gr=$(place greedy)
[ "$rr" != "$gr" ] || fail "round_robin and greedy place resnet50 alike: $rr"

# --list (model.c) says the same per-PS bytes
for how in round_robin greedy; do
	want=$(place $how)
	got=$($TFGB train $J --list -s train.placement=$how |
		sed -n 's/^# PS [01]: \([0-9]*\) variables transferred, \([0-9]*\) bytes.*/\1 \2/p' |
		tr '\n' ' ')
	[ "$got" = "$want " ] || fail "--list $how: '$got', want '$want'"
done
$TFGB train $J --list | grep -q '^# Table 1 classes of the 267 transferred: small 60, medium 178, large 29, over large (> 10 MiB) 0$' ||
	fail "--list: Table 1 classes of resnet50 differ"

# check JSON TRANSPORT PLACEMENT SYNC [MODE]: the workers' bytes per PS
check() {
	set -- "$1" "$2" "$(place "$3" "${5:-non-serialized}")" "$4"
	$PY - "$@" "$steps" "$warm" <<'PY' || return 1
import json, sys
path, tr, plan, sync, steps, warm = sys.argv[1:7]
steps, warm, sync = int(steps), int(warm), sync == "yes"
n0, b0, n1, b1, s0, r0, s1, r1 = map(int, plan.split())
d = json.load(open(path))
t = d["train"]
def no(why):
    print(why); sys.exit(1)
if d["benchmark"] != "train" or d["transport"] != tr or d["status"] != "ok":
    no("not an ok train run over %s: %s %s" % (tr, d["benchmark"], d["status"]))
if d["calls"] != 3 * steps or d["warmup_calls"] != 3 * warm:
    no("steps: %d measured, %d warm-up" % (d["calls"], d["warmup_calls"]))
for k, (n, b, s, r) in enumerate([(n0, b0, s0, r0), (n1, b1, s1, r1)]):
    p = t["per_ps"][k]
    if (p["variables"], p["bytes_per_step"]) != (n, b):
        no("PS %d plan: %s, want %d vars %d bytes" % (k, p, n, b))
    if p["sent"] != 3 * steps * s or p["received"] != 3 * steps * r:
        no("PS %d: sent %d received %d, want %d and %d" % (k, p["sent"], p["received"],
                                                          3 * steps * s, 3 * steps * r))
    if d["throughput"]["per_ps"][k] != 2 * n * 3 * steps:
        no("PS %d: %d transfers" % (k, d["throughput"]["per_ps"][k]))
if t["transferred"] != n0 + n1 or t["sync"] != sync:
    no("transferred %d sync %s" % (t["transferred"], t["sync"]))
want = [steps + warm if sync else 0] * 3
if t["per_worker_barriers"] != want:
    no("barriers %s, want %s" % (t["per_worker_barriers"], want))
if t["imbalance"] < 1 or any(w is None or w["steps"] != steps for w in t["per_worker_step_ms"]):
    no("imbalance %s, per worker %s" % (t["imbalance"], t["per_worker_step_ms"]))
PY
	schema_check "$1" || return 1
}

# served ERRFILE PLACEMENT PS MODE: the PS's -v line agrees with the
# placement and the mode's methods, warm-up steps included
served() {
	line=$(grep 'tfgb serve: stopped: answered' "$1") || return 1
	set -- "$1" "$(place "$2" "$4")" "$3" "$4"
	$PY - "$line" "$2" "$3" "$steps" "$warm" "$4" <<'PY'
import re, sys
line, plan, k, steps, warm, mode = sys.argv[1:7]
k, all_steps = int(k), 3 * (int(steps) + int(warm))
plan = list(map(int, plan.split()))
n, s, r = plan[2 * k], plan[4 + 2 * k], plan[5 + 2 * k]
pull, push = {"non-serialized": ("Pull", "Ack"), "tensorflow": ("PullTensorZeroCopy", "AckTensorZeroCopy"),
              "serialized": ("PullTensor", "AckTensor")}[mode]
m = re.search(r"answered (\d+) calls \((.*)\), (\d+) request bytes, (\d+) reply bytes", line)
calls = dict((c.rsplit(" ", 1)[0], int(c.rsplit(" ", 1)[1])) for c in m.group(2).split(", "))
want = (2 * n * all_steps, n * all_steps, n * all_steps, all_steps * s, all_steps * r)
got = (int(m.group(1)), calls[pull], calls[push], int(m.group(3)), int(m.group(4)))
if got != want:
    print("PS %d served %s, want %s" % (k, got, want)); sys.exit(1)
PY
}

# 1. PSs started by hand with -v; synchronous, round-robin; grpc, socket;
# each mode (the tensor modes: PullTensor* and AckTensor*).  ResNet-50's
# 98 MiB a step in the raw mode; the tensor modes move MobileNet v1's
# 16 MiB (137 variables): the same accounting for a sixth of the bytes
# (encoding ResNet-50 in the serialized mode took 5 of this script's
# 27 s, more under a sanitizer)
for tr in grpc socket; do
for mode in non-serialized tensorflow serialized; do
	model=resnet50
	[ $mode = non-serialized ] || model=mobilenet_v1
	M="-s train.model=$model"
	$TFGB serve $J $M -v -s job.transport=$tr --task 0 2>"$out/ps0.err" &
	p0=$!
	$TFGB serve $J $M -v -s job.transport=$tr --task 1 2>"$out/ps1.err" &
	p1=$!
	bg="$p0 $p1"
	wait_listening "$base" && wait_listening $((base + 1)) || fail "$tr: servers did not start"
	$TFGB train $J $M -s job.transport=$tr -s job.mode=$mode -f json >"$out/t.json" 2>"$out/err" ||
		fail "$tr $mode: train exited $?: $(cat "$out/err")"
	kill -TERM $p0 $p1
	wait $p0 $p1
	bg=
	why=$(check "$out/t.json" $tr round_robin yes $mode) || fail "$tr $mode: $why"
	for k in 0 1; do
		why=$(served "$out/ps$k.err" round_robin $k $mode) ||
			fail "$tr $mode: PS $k's counters: $why $(tail -n 2 "$out/ps$k.err")"
	done
done
done
model=resnet50

# 2. the launcher starts the PSs: asynchronous greedy over socket, text
$TFGB train $J -s job.transport=socket -s train.sync=no -s train.placement=greedy -f json \
	>"$out/a.json" 2>"$out/err" || fail "async: train exited $?: $(cat "$out/err")"
why=$(check "$out/a.json" socket greedy no) || fail "async greedy: $why"
for p in $((base - 1)) $base $((base + 1)); do
	wait_closed "$p" 5 || fail "port $p still open after the launcher's run"
done

# 3. --sweep over the workers, with a model of our own: a run per value
printf 'model tiny\na/kernel float32 64,64 trainable\na/bias float32 64 trainable\nbn/mean float32 64 statistic\n' \
	>"$out/tiny.model"
$TFGB train $J -s train.model="$out/tiny.model" --sweep cluster.workers=1,2 -f json \
	>"$out/s.json" 2>"$out/err" || fail "sweep exited $?: $(cat "$out/err")"
# round-robin: PS 0 holds a/kernel and bn/mean (16640 bytes), PS 1 a/bias (256)
json_check '[r["train"]["per_ps"][0]["sent"] for r in d["results"]] == [w * '$steps' * (16640 + 16) for w in (1, 2)]
and [r["train"]["per_ps"][1]["received"] for r in d["results"]] == [w * '$steps' * (256 + 8) for w in (1, 2)]
and all(r["status"] == "ok" for r in d["results"])' <"$out/s.json" ||
	fail "sweep: $(cat "$out/s.json")"

# 3b. servers and workers started by hand (--task): no launcher samples
# them, so each worker samples itself and worker 0's result has their
# host's resources (it once had none); hand-started servers serve on and
# are not merged into them, but asked for their own figures of the run
# (ps_resources, as throughput asks them)
T="$J -s train.model=$out/tiny.model -s cluster.workers=2 -s monitor.interval=100ms -f json"
$TFGB serve $T --task 0 2>"$out/ps0.err" & p0=$!
$TFGB serve $T --task 1 2>"$out/ps1.err" & p1=$!
bg="$p0 $p1"
wait_listening "$base" && wait_listening $((base + 1)) || fail "--task: servers did not start"
$TFGB train $T --task 1 >"$out/k1.json" 2>"$out/k1.err" & k1=$!
$TFGB train $T --task 0 >"$out/k0.json" 2>"$out/k0.err" || fail "--task: worker 0 exited $?: $(cat "$out/k0.err")"
wait $k1 || fail "--task: worker 1 exited $?: $(cat "$out/k1.err")"
kill -TERM $p0 $p1
wait $p0 $p1
bg=
json_check 'd["status"] == "ok" and d["resources"]["scope"] == "hosts"
and sorted((p["role"], p["index"]) for h in d["resources"]["hosts"] for p in h["processes"])
    == [("worker", 0), ("worker", 1)]
and [(p["index"], p["samples_itself"], p["runs"]) for p in d["ps_resources"]]
    == [(0, True, 1), (1, True, 1)]' <"$out/k0.json" ||
	fail "--task: no resources of the self-sampled workers: $(cat "$out/k0.json" "$out/k0.err")"
[ ! -s "$out/k1.json" ] || fail "--task: worker 1 printed a report: $(cat "$out/k1.json")"

# 4. refusals: one line, exit 2, naming the key and where it was set
refuse() {
	want=$1
	shift
	$TFGB train $J "$@" >"$out/r.out" 2>"$out/r.err"
	rc=$?
	[ $rc -eq 2 ] || fail "train $*: exit $rc, want 2: $(cat "$out/r.err")"
	[ "$(wc -l <"$out/r.err")" -eq 1 ] || fail "train $*: not one line: $(cat "$out/r.err")"
	grep -q "$want" "$out/r.err" || fail "train $*: '$(cat "$out/r.err")' lacks '$want'"
	[ ! -s "$out/r.out" ] || fail "train $*: printed a report"
}
refuse 'train.model = nosuch: .*no such shipped model' -s train.model=nosuch
refuse 'train.placement = spread: must be one of round_robin | greedy' -s train.placement=spread
printf 'model broken\nw float32 3,x trainable\n' >"$out/bad.model"
refuse "train.model = $out/bad.model: $out/bad.model:2: " -s train.model="$out/bad.model"
refuse 'server.max_message = 1MiB: is smaller than the largest variable of model .[a-z0-9_]*. (9437184 bytes)' \
	-s server.max_message=1MiB
# the tensor modes carry a bundle: its header too must fit
refuse 'server.max_message = 9MiB: is smaller than the largest variable.s bundle of model .[a-z0-9_]*. (94372[0-9][0-9] bytes)' \
	-s server.max_message=9437184 -s job.mode=tensorflow

# 5. SIGTERM to a worker held at a step barrier (another worker stopped)
# ends it within seconds, not at job.timeout
$TFGB train $J -s job.transport=socket -s train.steps=1000000 -s job.timeout=$(slow 60)s \
	>"$out/s.txt" 2>"$out/s.err" &
L=$!
bg=$L
i=0
while [ "$(ps -o args= --ppid $L | grep -c ' train ')" -lt 3 ]; do
	i=$((i + 1))
	[ $i -gt $((100 * SLOW)) ] && fail "the launcher's three workers did not start: $(cat "$out/s.err")"
	sleep 0.1
done
w0=$(ps -o pid=,args= --ppid $L | awk '/ train .*--task 0 / { print $1 }')
w1=$(ps -o pid=,args= --ppid $L | awk '/ train .*--task 1 / { print $1 }')
[ -n "$w0" ] && [ -n "$w1" ] || fail "workers 0 and 1 not found: $(ps -o pid=,args= --ppid $L)"
sleep "$(slow 1)"
kill -STOP "$w1"
sleep "$(slow 1)"
kill -TERM "$w0"
i=0
while kill -0 "$w0" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt $((100 * SLOW)) ] && { kill -CONT "$w1"; fail "worker 0 still at its step barrier 10 s x $SLOW after SIGTERM"; }
	sleep 0.1
done
kill -CONT "$w1"
kill -TERM "$L"
wait "$L"
bg=
echo "ok: SIGTERM ends a worker's wait at a step barrier"

# 6. a straggler put in on a worker (fault.h): under synchronous training
# every barrier reply names the worker last in, and every worker's step
# with waits holds the delay; asynchronous, the straggler's alone does.
# Counts and lower bounds (a loaded machine can hold another worker back
# once in a while), and one upper bound far from the delay: an
# asynchronous worker 0 takes a few ms a step here, not 200.
F="-s cluster.ps_count=1 -s job.transport=socket -s train.model=mnist_mlp -s fault.rank=1"
$TFGB train $J $F -s train.steps=20 -s fault.delay=100ms -f json >"$out/f.json" 2>"$out/err" ||
	fail "straggler, sync: exit $?: $(cat "$out/err")"
json_check 'd["train"]["waited_for"]["last_worker"] == 1 and d["train"]["waited_for"]["barriers"] == 19
and d["train"]["waited_for"]["last_counts"][1] >= 16
and d["train"]["per_worker_injected_ms"] == [0, 2000, 0] and d["fault"]["rank"] == 1
and all(p >= 90 for p in d["train"]["per_worker_period_ms"])' <"$out/f.json" ||
	fail "straggler, sync: not named or not waited for: $(cat "$out/f.json")"
$TFGB train $J $F -s train.steps=10 -s fault.delay=200ms -s train.sync=no -f json >"$out/f.json" \
	2>"$out/err" || fail "straggler, async: exit $?: $(cat "$out/err")"
json_check 'd["train"]["waited_for"] is None and d["train"]["per_worker_period_ms"][1] >= 180
and max(d["train"]["per_worker_period_ms"][0::2]) < 100' <"$out/f.json" ||
	fail "straggler, async: the others waited, or it did not: $(cat "$out/f.json")"
$TFGB train $J $F -s train.steps=20 -s fault.kill_step=2 >"$out/o" 2>"$out/err"
rc=$?
[ $rc = 1 ] && grep -q "worker 1 (pid [0-9]* on .*) died: killed by signal 9" "$out/err" ||
	fail "a worker killed at a step: exit $rc: $(cat "$out/err")"
$TFGB train $J -s fault.rank=3 2>"$out/err"
[ $? -eq 2 ] && grep -q "fault.rank = 3: is past the run's ranks: cluster.workers is 3 (ranks 0..2)" \
	"$out/err" || fail "fault.rank past the workers: $(cat "$out/err")"
echo "ok: a straggler worker named and waited for (sync), alone (async), killed at a step"

# 7. the timeline of a 1 PS x 3 workers ResNet-50 run (output.timeline):
# Trace Event JSON, a track per worker, a thread for its steps and one for
# its PS; its step spans are the reported step times (their mean the
# result's, to 1 %; each worker's shortest and longest its own)
$TFGB train $J -s cluster.ps_count=1 -s job.transport=socket -s train.steps=4 \
	-s output.timeline="$out/tl.json" -f json >"$out/t.json" 2>"$out/err" ||
	fail "timeline: exit $?: $(cat "$out/err")"
$PY - "$out/tl.json" "$out/t.json" <<'PY' || fail "timeline: does not hold the steps"
import json, sys
t, r = (json.load(open(p)) for p in sys.argv[1:3])
ev = t["traceEvents"]
names = {(e["pid"], e["tid"], e["name"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
for w in range(3):
    assert names[(w, 0, "process_name")] == "worker %d" % w, names
    assert names[(w, 0, "thread_name")] == "steps" and names[(w, 1, "thread_name")] == "PS 0", names
spans = [e for e in ev if e["ph"] == "X"]
assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans), spans[:3]
steps = [e for e in spans if e["name"].startswith("step #")]
assert len(steps) == 3 * 4, len(steps)
mean_us = sum(e["dur"] for e in steps) / len(steps)
want = r["latency_us"]["avg"]
assert abs(mean_us - want) <= 0.01 * want, (mean_us, want)
for w in range(3):
    mine = [e["dur"] / 1e3 for e in steps if e["pid"] == w]
    ms = r["train"]["per_worker_step_ms"][w]
    assert abs(min(mine) - ms["min"]) < 0.01 and abs(max(mine) - ms["max"]) < 0.01, (w, mine, ms)
    # each step's pulls and pushes on the PS thread lie within it
    for e in steps:
        if e["pid"] != w:
            continue
        i = e["args"]["index"]
        for x in spans:
            if x["pid"] == w and x["tid"] == 1 and x["args"]["index"] == i:
                assert e["ts"] - 0.002 <= x["ts"] and x["ts"] + x["dur"] <= e["ts"] + e["dur"] + 0.002, (e, x)
    # a barrier before every step (synchronous), on the steps' thread
    assert sum(1 for x in spans if x["pid"] == w and x["name"].startswith("barrier #")) == 4
assert t["otherData"]["clock_err_us"] == 0 and t["otherData"]["tfgb"] == "tfgb train, parameter server"
assert t["otherData"]["capped"]["cap"] == 2048 and t["otherData"]["capped"]["dropped"] == 0, t["otherData"]
PY
echo "ok: the timeline of a ResNet-50 run holds its steps, pulls and pushes"

printf '[train]\nsteps = 0\n' >"$out/zero.ini"
$TFGB train -c "$out/zero.ini" 2>"$out/r.err"
[ $? -eq 2 ] && grep -q "zero.ini:2: train.steps = 0: " "$out/r.err" ||
	fail "steps = 0: $(cat "$out/r.err")"
exit 0
