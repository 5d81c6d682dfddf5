#!/bin/sh
# tfgb plot on training sweeps, the network study's figure type: two models
# (mnist_mlp, mobilenet_v1) each swept over a duration key of this branch
# as the study sweeps the delay: 1ms, 10ms, 100ms (job.warmup, which train
# does not use: its warm-up is train.warmup_steps), one line per model, the
# mean step time against the swept value on a numeric axis in ms, whose
# label names the unit (a sweep records seconds: bars or a unit left out
# would show 0.001 and "(s)").  The SVG's text is read back: the title,
# both axes with their units, a legend entry per model, the tics at the
# swept values.  Skips without gnuplot.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
command -v gnuplot >/dev/null 2>&1 || skip "no gnuplot (Debian: gnuplot-nox)"

port=$(free_port)
out=$(mktemp -d)
cleanup_on_exit "$out"

base="-s cluster.ps=127.0.0.1:$port -s cluster.ps_count=1 -s cluster.workers=1 \
-s train.steps=3 -s train.warmup_steps=1 -q"

for m in mnist_mlp mobilenet_v1; do
	$TFGB train $base -s train.model=$m --sweep job.warmup=1ms,10ms,100ms -f json \
		-o "$out/warmup-$m.json" 2>"$out/err" || fail "train sweep ($m) exited $?: $(cat "$out/err")"
	grep -q "\"model\": *\"$m\"" "$out/warmup-$m.json" || fail "warmup-$m.json names no model $m"
done

$TFGB plot -o "$out/steps.svg" "$out"/warmup-*.json 2>"$out/err" ||
	fail "plot exited $?: $(cat "$out/err")"
[ -s "$out/err" ] && fail "plot: $(cat "$out/err")"
for s in "TF-gRPC-Train: mean step time by job.warmup and model" "job.warmup (ms)" \
	"mean step time (" ">mnist_mlp<" ">mobilenet_v1<" ">1<" ">10<" ">100<" \
	"whiskers: up to the 99th percentile step time"; do
	grep -qF "$s" "$out/steps.svg" || fail "steps.svg has no '$s'"
done
$TFGB plot --metric rpc -o "$out/rate.svg" "$out"/warmup-*.json 2>"$out/err" ||
	fail "plot --metric rpc exited $?: $(cat "$out/err")"
grep -qF "training steps (steps/s)" "$out/rate.svg" || fail "rate.svg has no steps/s axis"
echo "ok: step time and steps/s against a swept duration, a line per model"
