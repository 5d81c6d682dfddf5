#!/bin/sh
# tfgb train: 2 PSs x 3 workers with ResNet-50 on loopback, over grpc and
# socket.  Every byte of every step is accounted for on both sides: the
# workers' bytes per PS equal the model's placement (computed here from
# conf/models/resnet50.model, independently of model.c) x steps x workers,
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
cleanup() {
	for p in $bg; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

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

# The placement of conf/models/resnet50.model over 2 PSs, as
# "vars0 bytes0 vars1 bytes1", computed from the file itself.
place() {
	$PY - "$1" <<'PY'
import sys
how = sys.argv[1]
size = {"float32": 4, "float16": 2, "uint8": 1, "int64": 8}
var = []
for line in open("conf/models/resnet50.model"):
    f = line.split()
    if not f or f[0].startswith("#") or f[0] == "model":
        continue
    n = 1
    if f[2] != "scalar":
        for d in f[2].split(","):
            n *= int(d)
    var.append(n * size[f[1]])
load, cnt = [0, 0], [0, 0]
for i, b in enumerate(var):
    k = i % 2 if how == "round_robin" else (0 if load[0] <= load[1] else 1)
    load[k] += b
    cnt[k] += 1
print(cnt[0], load[0], cnt[1], load[1])
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

# check JSON TRANSPORT PLACEMENT SYNC: the workers' bytes per PS
check() {
	set -- "$1" "$2" "$(place "$3")" "$4"
	$PY - "$@" "$steps" "$warm" <<'PY' || return 1
import json, sys
path, tr, plan, sync, steps, warm = sys.argv[1:7]
steps, warm, sync = int(steps), int(warm), sync == "yes"
n0, b0, n1, b1 = map(int, plan.split())
d = json.load(open(path))
t = d["train"]
def no(why):
    print(why); sys.exit(1)
if d["benchmark"] != "train" or d["transport"] != tr or d["status"] != "ok":
    no("not an ok train run over %s: %s %s" % (tr, d["benchmark"], d["status"]))
if d["calls"] != 3 * steps or d["warmup_calls"] != 3 * warm:
    no("steps: %d measured, %d warm-up" % (d["calls"], d["warmup_calls"]))
for k, (n, b) in enumerate([(n0, b0), (n1, b1)]):
    p = t["per_ps"][k]
    want = 3 * steps * (b + 8 * n)
    if (p["variables"], p["bytes_per_step"]) != (n, b):
        no("PS %d plan: %s, want %d vars %d bytes" % (k, p, n, b))
    if p["sent"] != want or p["received"] != want:
        no("PS %d: sent %d received %d, want %d each" % (k, p["sent"], p["received"], want))
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

# served ERRFILE PLACEMENT: the PS's -v line agrees with the placement,
# warm-up steps included
served() {
	line=$(grep 'tfgb serve: stopped: answered' "$1") || return 1
	set -- "$1" "$(place "$2")" "$3"
	$PY - "$line" "$2" "$3" "$steps" "$warm" <<'PY'
import re, sys
line, plan, k, steps, warm = sys.argv[1:6]
k, all_steps = int(k), 3 * (int(steps) + int(warm))
n, b = list(map(int, plan.split()))[2 * k: 2 * k + 2]
m = re.search(r"answered (\d+) calls \(Pull (\d+), Ack (\d+), .*\), (\d+) request bytes, "
              r"(\d+) reply bytes", line)
want = (2 * n * all_steps, n * all_steps, n * all_steps, all_steps * (b + 8 * n),
        all_steps * (b + 8 * n))
got = tuple(map(int, m.groups()))
if got != want:
    print("PS %d served %s, want %s" % (k, got, want)); sys.exit(1)
PY
}

# 1. PSs started by hand with -v; synchronous, round-robin; grpc, socket
for tr in grpc socket; do
	$TFGB serve $J -v -s job.transport=$tr --task 0 2>"$out/ps0.err" &
	p0=$!
	$TFGB serve $J -v -s job.transport=$tr --task 1 2>"$out/ps1.err" &
	p1=$!
	bg="$p0 $p1"
	wait_listening "$base" && wait_listening $((base + 1)) || fail "$tr: servers did not start"
	$TFGB train $J -s job.transport=$tr -f json >"$out/t.json" 2>"$out/err" ||
		fail "$tr: train exited $?: $(cat "$out/err")"
	kill -TERM $p0 $p1
	wait $p0 $p1
	bg=
	why=$(check "$out/t.json" $tr round_robin yes) || fail "$tr: $why"
	for k in 0 1; do
		why=$(served "$out/ps$k.err" round_robin $k) ||
			fail "$tr: PS $k's counters: $why $(tail -n 2 "$out/ps$k.err")"
	done
done

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

# 3. refusals: one line, exit 2, naming the key and where it was set
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
refuse 'server.max_message = 1MiB: is smaller than model .* largest variable (9437184 bytes)' \
	-s server.max_message=1MiB
refuse 'job.mode = serialized: ' -s job.mode=serialized
printf '[train]\nsteps = 0\n' >"$out/zero.ini"
$TFGB train -c "$out/zero.ini" 2>"$out/r.err"
[ $? -eq 2 ] && grep -q "zero.ini:2: train.steps = 0: " "$out/r.err" ||
	fail "steps = 0: $(cat "$out/r.err")"
exit 0
