#!/bin/sh
# t_token.sh - [cluster] token end to end: a launcher run with a token works
# and its JSON result holds no trace of the token; against a hand-started
# PS 0 that has the token, a --task worker with a wrong or no token fails
# with status 1 within its timeout, naming PS 0 and the refused token, and
# the service goes on serving a correct run; `tfgb rerun` of the result says
# the token was left out, is refused by that PS 0 without it, and works with
# -s cluster.token= or once it starts its own PS 0; a bad token is a job
# error (status 2) that does not show the value.
# Run from the top of the tree; exit 0 pass, 77 skip, anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import json' 2>/dev/null || skip "skip: no /usr/bin/python3"

base=$(free_ports 1) || fail "no free ports"
out=$(mktemp -d "${TMPDIR:-/tmp}/t_token.XXXXXX") || exit 1
bg=
cleanup_on_exit "$out"

TOK=tfgbTestToken-4f1c9a0e7b
BAD=tfgbTestToken-0000000000
umask 077
cat >"$out/job.ini" <<INI
[job]
warmup = $(slow 100)ms
duration = $(slow 300)ms
timeout = $(slow 3)s
[cluster]
ps = 127.0.0.1:$base
workers = 1
token = $TOK
INI
J="-c $out/job.ini -q"
ok='d["status"] == "ok" and d["throughput"]["reported"] == 1 and d["calls"] > 0'

# 1. a launcher run with a token; the result keeps no trace of it
$TFGB throughput $J -f json >"$out/l.json" 2>"$out/err" ||
	fail "launcher run with a token exited $?: $(cat "$out/err")"
json_check "$ok" <"$out/l.json" || fail "launcher run: $(cat "$out/l.json")"
! grep -q "$TOK" "$out/l.json" || fail "the JSON result contains the token"
json_check 'd["job_withheld"] == ["cluster.token"] and "\ntoken =\n" in d["job"]' \
	<"$out/l.json" || fail "the result does not say the token was withheld"
$TFGB throughput $J --print-config | grep -qx "token = $TOK" ||
	fail "--print-config does not print the token"
wait_closed "$base" 5 && wait_closed $((base - 1)) 5 || fail "the launcher's PS 0 is still up"
echo "ok: launcher run with a token; result without it"

# 2. PS 0 by hand with the token; --task workers with a wrong and no token
$TFGB serve $J --task 0 2>"$out/s0" & bg="$bg $!"
wait_listening "$base" && wait_listening $((base - 1)) || fail "PS 0: $(cat "$out/s0")"
for t in "$BAD" ""; do
	start=$(date +%s)
	rc=0
	$TFGB throughput $J --task 0 -s cluster.token="$t" >"$out/w.json" 2>"$out/w.err" || rc=$?
	took=$(($(date +%s) - start))
	[ "$rc" = 1 ] || fail "worker with token '$t': exit $rc, expected 1: $(cat "$out/w.err")"
	[ "$took" -le 20 ] || fail "worker with token '$t' took ${took}s to fail"
	grep -q "worker 0: PS 0 (127.0.0.1:$base): control service at '127.0.0.1:$((base - 1))' refused the token" \
		"$out/w.err" || fail "worker with token '$t': $(cat "$out/w.err")"
	! grep -q -e "$TOK" -e "$BAD" "$out/w.err" || fail "an error shows a token: $(cat "$out/w.err")"
	[ ! -s "$out/w.json" ] || fail "a refused worker printed a report"
	why="sets none"
	[ -n "$t" ] && why="differs"
	grep -q "$why" "$out/w.err" || fail "worker with token '$t' is not told why: $(cat "$out/w.err")"
done
echo "ok: wrong and missing tokens refused, exit 1, PS 0 named"

# 3. the service keeps serving: a correct --task run
$TFGB throughput $J --task 0 -f json >"$out/w.json" 2>"$out/w.err" ||
	fail "correct --task run after refusals exited $?: $(cat "$out/w.err")"
json_check "$ok" <"$out/w.json" || fail "correct --task run: $(cat "$out/w.json")"
echo "ok: a correct run after the refused ones"

# 4. rerun: refused by this PS 0 without the token, fine with it
rc=0
$TFGB rerun "$out/l.json" -f json >"$out/r.json" 2>"$out/r.err" || rc=$?
[ "$rc" = 1 ] || fail "rerun without the token against PS 0: exit $rc: $(cat "$out/r.err")"
grep -q "note: .*cluster.token.*-s cluster.token=" "$out/r.err" ||
	fail "rerun does not say the token was left out: $(cat "$out/r.err")"
grep -q "refused the token" "$out/r.err" || fail "rerun refusal: $(cat "$out/r.err")"
$TFGB rerun "$out/l.json" -s cluster.token="$TOK" -f json >"$out/r.json" 2>"$out/r.err" ||
	fail "rerun with the token exited $?: $(cat "$out/r.err")"
json_check "$ok" <"$out/r.json" || fail "rerun with the token: $(cat "$out/r.json")"
! grep -q "note:" "$out/r.err" || fail "a note although the token was given: $(cat "$out/r.err")"
for p in $bg; do kill "$p"; done
wait 2>/dev/null
bg=
wait_closed "$base" 5 && wait_closed $((base - 1)) 5 || fail "PS 0 did not stop"
# with no PS 0 running the launcher starts its own, tokenless: it just runs
$TFGB rerun "$out/l.json" -f json >"$out/r.json" 2>"$out/r.err" ||
	fail "rerun with its own PS 0 exited $?: $(cat "$out/r.err")"
json_check "$ok" <"$out/r.json" || fail "rerun with its own PS 0: $(cat "$out/r.json")"
echo "ok: rerun of a result whose run had a token"

# 5. a bad token is a job error that does not show the value
for t in short-Token "0123456789abcdef!x"; do
	rc=0
	$TFGB throughput -q -s cluster.token="$t" --print-config >/dev/null 2>"$out/err" || rc=$?
	[ "$rc" = 2 ] || fail "token '$t': exit $rc, expected 2"
	grep -q "cluster.token = (.* characters, not shown): must be empty, or 16 to 128 characters" \
		"$out/err" || fail "token '$t': $(cat "$out/err")"
	! grep -q -e "$t" "$out/err" || fail "the error shows the token: $(cat "$out/err")"
done
echo ok
