#!/bin/sh
# tests/mutants.sh - `make mutants`: deliberate one-line bugs that the tests
# must catch.  Each line of tests/mutants.txt is
#     FILE | SUITE | TEXT => REPLACEMENT
# (`#` starts a comment line): TEXT must occur on exactly one line of FILE,
# where it is replaced by REPLACEMENT; SUITE is a unit suite (CK_RUN_SUITE,
# e.g. stats) or a shell test (t_ctrl).
#
# The work tree is never touched: the tree is copied to a scratch directory
# (MUTANTS_DIR, default a new one under TMPDIR), built there once, every
# named suite must pass on the unmutated copy, and then each mutant is
# applied, rebuilt, its suite run, and the file put back.  The suites are
# dealt out to MUTANTS_JOBS shards (default one a CPU), each a copy of the
# built tree, which run side by side.  A mutant is
# killed when its suite fails; it survives when the suite passes.  Exit 0
# when every mutant is killed; 1 when one survived, a TEXT no longer matches
# exactly one line, a mutant does not compile, or a suite fails unmutated.
# MUTANTS=stats,result runs only the mutants of those suites; MUTANTS_LIST=FILE
# (a path from the top of the tree) reads another list.  MUTANTS_BASELINE=0
# leaves out the unmutated runs when the same tree just passed `make check`
# with the same flags (.ci/run): they would only repeat it.
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
list=${MUTANTS_LIST:-tests/mutants.txt}
[ -r "$list" ] || { echo "mutants: no $list"; exit 1; }
. tests/lib.sh
# the suites' deadlines and windows scale with others' load, as in make
# check (tests/lib.sh: load_slow), measured before each run of a shell
# suite; unit suites take Check's timeout from it
TFGB_TEST_RUN=${TFGB_TEST_RUN:-mutants.$$.$(date +%s)}
export TFGB_TEST_RUN
slow_given=${TFGB_TEST_SLOW:+1}
TFGB_TEST_SLOW=${TFGB_TEST_SLOW:-$(load_slow)}
SLOW=$TFGB_TEST_SLOW
export TFGB_TEST_SLOW
t0=$(date +%s)

scratch=${MUTANTS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/tfgb-mutants.XXXXXX")} || exit 1
[ -n "$MUTANTS_DIR" ] || trap 'rm -rf "$scratch"' EXIT
trap 'exit 1' HUP INT TERM
# the sources as they are now (committed or not), with the objects already
# built here so that the first build is short; -p keeps their times
tar -cf - --exclude=./tests/out --exclude='./tfgb-*' . | (cd "$scratch" && tar -xpf -) ||
	{ echo "mutants: cannot copy the tree to $scratch"; exit 1; }
cd "$scratch" || exit 1

# build [SUITE]: both programs, or the one SUITE runs (a shell test runs
# tfgb, a unit suite tests/check_tfgb): a mutant relinks one, not both
build() {
	case $1 in
	t_*) set -- tfgb ;;
	?*) set -- tests/check_tfgb ;;
	*) set -- tfgb tests/check_tfgb ;;
	esac
	make -j2 "$@" >build.log 2>&1 </dev/null
}
# run SUITE: 0 when it passes
run() {
	case $1 in
	t_*)
		if [ -z "$slow_given" ]; then
			TFGB_TEST_SLOW=$(load_slow) SLOW=$TFGB_TEST_SLOW
		fi
		timeout $((600 * SLOW)) sh "tests/$1.sh" >run.log 2>&1 </dev/null ;;
	*) CK_RUN_SUITE=$1 CK_DEFAULT_TIMEOUT=$((60 * SLOW)) timeout $((600 * SLOW)) \
		./tests/check_tfgb >run.log 2>&1 </dev/null ;;
	esac
}
# the mutants, one "file|text|replacement|suite" a line
entries() {
	grep -v '^[[:space:]]*\(#\|$\)' "$top/$list" | awk -F ' [|] ' -v only=",$MUTANTS," '
		NF < 3 || split($0, a, " => ") != 2 {
			printf "mutants: %s: not FILE | SUITE | TEXT => REPLACEMENT\n", $0 > "/dev/stderr"
			bad = 1; next }
		only == ",," || index(only, "," $2 ",") { print }
		END { exit bad }'
}
entries >"$scratch/list" || exit 1

build || { tail -n 30 build.log; echo "mutants: the unmutated tree does not build"; exit 1; }

cat >"$scratch/apply.py" <<'EOF'
import sys
path, line = sys.argv[1], sys.argv[2]
text, repl = line.split(" | ", 2)[2].split(" => ")
src = open(path).read().split("\n")
hits = [i for i, l in enumerate(src) if text in l]
if len(hits) != 1:
    sys.exit("%d lines of %s have %r" % (len(hits), path, text))
if src[hits[0]].count(text) != 1:
    sys.exit("%r occurs more than once on %s:%d" % (text, path, hits[0] + 1))
src[hits[0]] = src[hits[0]].replace(text, repl)
open(path + ".mutant", "w").write("\n".join(src))
print(hits[0] + 1)
EOF

# shard LIST, in a built copy of the tree: every suite of LIST must pass
# unmutated; then each mutant of LIST is applied, built, its suite run and
# the file put back.  One line a mutant: killed, SURVIVED, STALE or NOBUILD.
shard() {
	[ "${MUTANTS_BASELINE:-1}" = 0 ] ||
		for s in $(awk -F ' [|] ' '{ print $2 }' "$1" | sort -u); do
			run "$s" || { tail -n 30 run.log; echo "UNMUTATED: suite $s fails unmutated"; return; }
		done
	while IFS= read -r line; do
		file=$(printf '%s\n' "$line" | awk -F ' [|] ' '{ print $1 }')
		# apply: TEXT on exactly one line (fixed strings, no escaping)
		if ! at=$(/usr/bin/python3 "$scratch/apply.py" "$file" "$line" 2>why); then
			echo "STALE: $line: $(cat why)"
			continue
		fi
		suite=$(printf '%s\n' "$line" | awk -F ' [|] ' '{ print $2 }')
		cp -p "$file" "$file.orig"
		mv "$file.mutant" "$file"
		m0=$(date +%s)
		if ! build "$suite"; then
			echo "NOBUILD: $file:$at: $line"; sed 's/^/    /' build.log | grep -m 5 error
		elif m1=$(date +%s) && TFGB_FAIL_FAST=1 run "$suite"; then
			echo "SURVIVED: $file:$at: $line"
		else
			echo "killed: $file:$at by $suite (build $((m1 - m0)) s, run $(($(date +%s) - m1)) s)"
		fi
		# put the file back with a new time, so that make rebuilds it
		mv "$file.orig" "$file"
		touch "$file"
	done <"$1"
	build || echo "NOBUILD: the shard's tree does not build again"
}

# MUTANTS_JOBS shards (default: one a CPU) run side by side, each in its own
# copy of the built tree.  A suite's mutants stay in one shard; the suites
# are dealt out by weight (a shell test's run counts ten of a unit
# suite's), heaviest first, each to the lightest shard so far.  Most of a
# shell test's time is spent waiting on windows and deadlines, not on CPU,
# and the deadlines scale with the load (SLOW) as in make check.
jobs=${MUTANTS_JOBS:-$(nproc 2>/dev/null || echo 1)}
awk -F ' [|] ' -v jobs="$jobs" -v dir="$scratch" '
	{ w[$2] += ($2 ~ /^t_/ ? 10 : 1); line[NR] = $0; suite[NR] = $2 }
	END {
		n = 0
		for (s in w) order[++n] = s
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (w[order[j]] > w[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
		for (k = 1; k <= jobs; k++) load[k] = 0
		for (i = 1; i <= n; i++) {
			best = 1
			for (k = 2; k <= jobs; k++) if (load[k] < load[best]) best = k
			to[order[i]] = best; load[best] += w[order[i]]
		}
		for (r = 1; r <= NR; r++) print line[r] > (dir "/list." to[suite[r]])
	}' "$scratch/list"
k=0
for l in "$scratch"/list.*; do
	[ -e "$l" ] || continue
	k=$((k + 1))
	mkdir "$scratch/shard$k" || exit 1
	tar -cf - --exclude='./shard*' --exclude='./list*' --exclude='./out.*' . |
		(cd "$scratch/shard$k" && tar -xpf -) || { echo "mutants: cannot copy $scratch"; exit 1; }
	(cd "$scratch/shard$k" && shard "$l" >"$scratch/out.$k" 2>&1) &
done
wait
n=$(wc -l <"$scratch/list")
cat "$scratch"/out.*
killed=$(cat "$scratch"/out.* | grep -c '^killed: ')
echo "mutants: $killed of $n killed, $((n - killed)) survived, stale, not building or not run, in $k shards, in $(($(date +%s) - t0)) s"
[ "$killed" = "$n" ] && [ "$n" -gt 0 ] && ! grep -q '^\(UNMUTATED\|NOBUILD\)' "$scratch"/out.*
