#!/bin/sh
# t_genpayload.sh - tfgb genpayload end to end: the default job's layout as
# JSON, and --ini pinning a layout that a later run reproduces exactly.
#
# Run from the top of the source tree; exits 0 (pass), 77 (skip, reason on
# the last line) or 1 (fail).
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
tfgb="$top/tfgb"
if [ ! -x "$tfgb" ]; then
	echo "tfgb is not built; run 'make tfgb'"
	exit 77
fi
python=/usr/bin/python3
if [ ! -x "$python" ]; then
	echo "no $python to check the JSON output (apt-get install python3)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_genpayload.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
mkdir "$tmp/home" "$tmp/run"
HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config"
export HOME XDG_CONFIG_HOME
: >"$tmp/empty.ini"

failed=0
fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}

# run OUT ARGS...: tfgb genpayload ARGS > OUT, which must succeed quietly.
run() {
	o=$1
	shift
	if ! (cd "$tmp/run" && "$tfgb" genpayload "$@") >"$o" 2>"$tmp/err"; then
		fail "tfgb genpayload $*: $(head -n 3 "$tmp/err")"
		return 1
	fi
	[ ! -s "$tmp/err" ] || fail "tfgb genpayload $*: stderr: $(head -n 3 "$tmp/err")"
}

# --- the default job as JSON ------------------------------------------
# conf/tfgb.ini is the shipped default job; it must describe the built-in one.
if [ -f conf/tfgb.ini ]; then
	job="$top/conf/tfgb.ini"
else
	echo "note: no conf/tfgb.ini; using the built-in defaults"
	job="$tmp/empty.ini"
fi
run "$tmp/default.json" -c "$job" -f json
"$python" - "$tmp/default.json" <<'EOF' || fail "default job: JSON check failed"
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
bufs = d["buffers"]
cats = [b["category"] for b in bufs]
want = ["small", "medium", "large"] * 3 + ["small"]
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("default job:", what)
        ok = False
check(d["scheme"] == "uniform", "scheme is %r" % d["scheme"])
check(d["iovecs"] == 10 and len(bufs) == 10, "%d buffers" % len(bufs))
check(d["counts"] == {"small": 4, "medium": 3, "large": 3}, "counts %r" % d["counts"])
check(cats == want, "layout %r" % cats)
sizes = {"small": 10, "medium": 10240, "large": 1048576}
off = 0
for i, b in enumerate(bufs):
    check(b["index"] == i, "index %d" % i)
    check(b["size"] == sizes[b["category"]], "buffer %d size %d" % (i, b["size"]))
    check(b["offset"] == off, "buffer %d offset %d" % (i, b["offset"]))
    off += b["size"]
check(d["bytes"] == off, "bytes %d, sum %d" % (d["bytes"], off))
sys.exit(0 if ok else 1)
EOF
if [ "$job" != "$tmp/empty.ini" ]; then
	run "$tmp/conf.cfg" -c "$job" --print-config
	run "$tmp/builtin.cfg" -c "$tmp/empty.ini" --print-config
	cmp -s "$tmp/conf.cfg" "$tmp/builtin.cfg" ||
		fail "conf/tfgb.ini does not describe the built-in default job"
fi

# --- --ini pins a layout ----------------------------------------------
# pin NAME ARGS...: the CSV layout of ARGS equals that of its --ini output
# read back as a job file; the pinned file keeps inih's line limit.
pin() {
	name=$1
	shift
	run "$tmp/$name.csv" -c "$tmp/empty.ini" "$@" -f csv || return
	run "$tmp/$name.ini" -c "$tmp/empty.ini" "$@" --ini || return
	run "$tmp/$name.again.csv" -c "$tmp/$name.ini" -f csv || return
	cmp -s "$tmp/$name.csv" "$tmp/$name.again.csv" ||
		fail "$name: the --ini layout read back differs: $(diff "$tmp/$name.csv" "$tmp/$name.again.csv" | head -n 4)"
	long=$(awk 'length($0) > 198' "$tmp/$name.ini" | wc -l)
	[ "$long" -eq 0 ] || fail "$name: --ini wrote $long lines over 198 characters"
	grep -q '^scheme = custom$' "$tmp/$name.ini" || fail "$name: --ini has no 'scheme = custom'"
}
pin uniform -s payload.scheme=uniform
pin random -s payload.scheme=random -s job.seed=5
pin skew -s payload.scheme=skew -s payload.bias=medium
pin random300 -s payload.scheme=random -s payload.iovecs=300 -s job.seed=3 \
	-s payload.small=999B -s payload.medium=1000KiB
[ "$(wc -l <"$tmp/random300.csv")" -eq 301 ] || fail "random300: $(wc -l <"$tmp/random300.csv") CSV lines"
[ "$(grep -c '^    ' "$tmp/random300.ini")" -ge 30 ] ||
	fail "random300: the iovec list is not on indented continuation lines"

# the layouts differ as the schemes say
for c in small medium large; do
	grep -q ",$c," "$tmp/random300.csv" || fail "random300: no $c buffer"
done
[ "$(grep -c ',medium,' "$tmp/skew.csv")" -eq 6 ] || fail "skew with bias medium: not 6 medium"
cmp -s "$tmp/random.csv" "$tmp/uniform.csv" && fail "random and uniform give the same layout"

# the same job twice gives the same layout; another seed another one
run "$tmp/random.b.csv" -c "$tmp/empty.ini" -s payload.scheme=random -s job.seed=5 -f csv
cmp -s "$tmp/random.csv" "$tmp/random.b.csv" || fail "random: the same seed gave another layout"
run "$tmp/seed4.csv" -c "$tmp/empty.ini" -s payload.scheme=random -s payload.iovecs=300 \
	-s job.seed=4 -s payload.small=999B -s payload.medium=1000KiB -f csv
cmp -s "$tmp/random300.csv" "$tmp/seed4.csv" && fail "random300: seeds 3 and 4 give the same layout"

# a pinned file as JSON is valid too
run "$tmp/random300.json" -c "$tmp/random300.ini" -f json
"$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d["buffers"]) == 300 and d["scheme"] == "custom" else 1)' \
	"$tmp/random300.json" || fail "random300: pinned JSON is not 300 custom buffers"

echo "t_genpayload: $failed failures"
[ "$failed" = 0 ]
