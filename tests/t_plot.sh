#!/bin/sh
# The gnuplot scripts of examples/plot/ on real output: a short latency run
# per scheme in tfgb's CSV, rendered by latency-schemes.gp, and a sweep of
# payload.iovecs rendered by latency-iovecs.gp; the PNG must
# exist, start with the PNG signature and not be empty.  Also the scripts'
# refusal without their -e settings.  Skips without gnuplot.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
command -v gnuplot >/dev/null 2>&1 || skip "no gnuplot (Debian: gnuplot-nox)"

port=$(free_port)
out=$(mktemp -d)
cleanup() {
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT INT TERM

base="-s cluster.ps=127.0.0.1:$port -s job.warmup=100ms -s job.duration=300ms -q -f csv"

# tfgb's CSV as it comes: the header once, a row per scheme
for scheme in uniform skew; do
	$TFGB latency $base -s payload.scheme=$scheme >"$out/run.csv" 2>"$out/err" ||
		fail "latency ($scheme) exited $?: $(cat "$out/err")"
	[ -s "$out/lat.csv" ] || head -n 1 "$out/run.csv" >"$out/lat.csv"
	tail -n 1 "$out/run.csv" >>"$out/lat.csv"
done
[ "$(wc -l <"$out/lat.csv")" = 3 ] || fail "expected a header and 2 rows: $(cat "$out/lat.csv")"

gnuplot -e "files='$out/lat.csv'; titles='grpc'; out='$out/lat.png'" \
	examples/plot/latency-schemes.gp 2>"$out/err" || fail "gnuplot exited $?: $(cat "$out/err")"
[ -s "$out/lat.png" ] || fail "no PNG, or an empty one"
[ "$(od -An -tx1 -N8 "$out/lat.png" | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "not a PNG: $(od -An -c -N8 "$out/lat.png")"
[ "$(wc -c <"$out/lat.png")" -gt 2000 ] || fail "a PNG too small to hold a plot"
grep -q 'warning\|error' "$out/err" && fail "gnuplot complained: $(cat "$out/err")"

# a sweep's CSV drawn against the buffer count
$TFGB latency $base --sweep payload.iovecs=1:3:1 >"$out/iov.csv" 2>"$out/err" ||
	fail "latency --sweep exited $?: $(cat "$out/err")"
[ "$(wc -l <"$out/iov.csv")" = 4 ] || fail "expected a header and 3 rows: $(cat "$out/iov.csv")"
gnuplot -e "files='$out/iov.csv'; out='$out/iov.png'; metric='p50_us'" \
	examples/plot/latency-iovecs.gp 2>"$out/err" || fail "latency-iovecs.gp: $(cat "$out/err")"
[ "$(od -An -tx1 -N8 "$out/iov.png" | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "latency-iovecs.gp made no PNG"

# without its settings a script says what it needs and draws nothing
for gp in examples/plot/*.gp; do
	rc=0
	gnuplot "$gp" >"$out/msg" 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "$gp without files and out: exit $rc"
	grep -q "files=" "$out/msg" || fail "$gp does not say what it needs: $(cat "$out/msg")"
done

echo "ok"
