#!/bin/sh
# t_jobinput.sh - a job file read from whatever -c names: a pipe through
# /dev/stdin, "-" for standard input, a shell's <(...), a FIFO, a JSON
# result on a pipe.  Each is read once and applied (checked with
# --print-config and with genpayload's layout); a FIFO nobody writes to ends
# with the deadline error (src/base/input.h, INPUT_WAIT_NS) and an oversized
# pipe is refused, each in one line naming the file, exit 2.
# Run from the top of the source tree; exits 0 (pass), 77 (skip) or 1.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
[ -x ./tfgb ] || skip "tfgb is not built; run 'make tfgb'"
top=$(pwd)
tfgb="$top/${TFGB#./}"
case $TFGB in /*) tfgb=$TFGB ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_jobinput.XXXXXX") || exit 1
writer=
trap '[ -n "$writer" ] && kill "$writer" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
# no job file from the environment: only what -c names
mkdir "$tmp/home" "$tmp/run"
HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config"
export HOME XDG_CONFIG_HOME
cd "$tmp/run" || exit 1

failed=0
bad() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}
JOB='[payload]\nscheme = skew\n'

# applied WHAT: the last run (stdout in $tmp/out, rc in $rc) used the job:
# genpayload prints "scheme skew", --print-config "scheme = skew"; the
# built-in default is uniform.
applied() {
	[ "$rc" = 0 ] || bad "$1: exit $rc: $(head -n 2 "$tmp/err")"
	grep -Eq 'scheme (= )?skew' "$tmp/out" ||
		bad "$1: the job was not applied: $(grep -m1 scheme "$tmp/out")"
}
# refused WHAT TEXT: exit 2, one line on stderr containing TEXT
refused() {
	[ "$rc" = 2 ] || bad "$1: exit $rc, want 2: $(head -n 2 "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "$1: not one line on stderr: $(cat "$tmp/err")"
	grep -qF -- "$2" "$tmp/err" || bad "$1: stderr lacks '$2': $(cat "$tmp/err")"
}

for cmd in "genpayload" "latency --print-config"; do
	# shellcheck disable=SC2086 # $cmd is a command and its option
	printf "$JOB" | "$tfgb" $cmd -c /dev/stdin >"$tmp/out" 2>"$tmp/err"
	rc=$?
	applied "$cmd -c /dev/stdin (a pipe)"
	# shellcheck disable=SC2086
	printf "$JOB" | "$tfgb" $cmd -c - >"$tmp/out" 2>"$tmp/err"
	rc=$?
	applied "$cmd -c - (a pipe)"
	printf "$JOB" >"$tmp/job.ini"
	# shellcheck disable=SC2086
	"$tfgb" $cmd -c - <"$tmp/job.ini" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	applied "$cmd -c - (a redirected file)"
	if command -v bash >/dev/null 2>&1; then
		# shellcheck disable=SC2016 # expanded by bash
		bash -c '"$1" $2 -c <(printf "$3")' sh "$tfgb" "$cmd" "$JOB" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		applied "$cmd -c <(...) (bash)"
	fi
	# a FIFO whose writer comes after tfgb opened it, then goes
	mkfifo "$tmp/fifo"
	# (each side bounded: a tfgb that opens it twice would wait forever)
	(sleep 0.3; timeout "$(slow 60)" sh -c 'printf "$1" >"$2"' sh "$JOB" "$tmp/fifo") &
	writer=$!
	# shellcheck disable=SC2086
	timeout "$(slow 60)" "$tfgb" $cmd -c "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	wait "$writer"
	writer=
	rm -f "$tmp/fifo"
	applied "$cmd -c FIFO"
done

# a JSON result on a pipe: its job, for -c and for rerun
printf '{"schema_version": 1, "tfgb": {"version": "0"}, "benchmark": "latency", "job": "%s"}\n' "$JOB" >"$tmp/r.json"
"$tfgb" latency --print-config -c - <"$tmp/r.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
applied "latency -c - (a JSON result)"
cat "$tmp/r.json" | "$tfgb" rerun --print-config /dev/stdin >"$tmp/out" 2>"$tmp/err"
rc=$?
applied "rerun /dev/stdin (a JSON result on a pipe)"
printf "$JOB" | "$tfgb" rerun --print-config - >"$tmp/out" 2>"$tmp/err"
rc=$?
refused "rerun - (a job file, not a result)" "'-' is not a tfgb result"

# a FIFO nobody writes to: the deadline, not a hang (timeout is the backstop)
mkfifo "$tmp/nowriter"
start=$(date +%s)
timeout "$(slow 60)" "$tfgb" genpayload -c "$tmp/nowriter" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 124 ] && bad "a FIFO with no writer: still waiting after $(slow 60)s"
refused "a FIFO with no writer" "job file '$tmp/nowriter': nothing to read for 10s"
[ $(($(date +%s) - start)) -ge 9 ] || bad "a FIFO with no writer: refused before its 10s"

# over the limit (16 MiB) on a pipe: refused, naming the file
awk 'BEGIN { for (i = 0; i < 300000; i++) printf "; %058d\n", i }' |
	"$tfgb" genpayload -c - >"$tmp/out" 2>"$tmp/err"
rc=$?
refused "a 18 MB job file on a pipe" "job file '-' (standard input) is too large (over 16 MiB)"
# ... and just under it, read whole
awk 'BEGIN { printf "[payload]\nscheme = skew\n"; for (i = 0; i < 260000; i++) printf "; %058d\n", i }' |
	"$tfgb" genpayload -c - >"$tmp/out" 2>"$tmp/err"
rc=$?
applied "a 15.6 MB job file on a pipe"

"$tfgb" genpayload -c "$tmp" >"$tmp/out" 2>"$tmp/err"
rc=$?
refused "a directory" "cannot read job file '$tmp': Is a directory"

[ "$failed" = 0 ] || exit 1
echo "t_jobinput: ok"
