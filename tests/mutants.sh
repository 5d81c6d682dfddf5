#!/bin/sh
# tests/mutants.sh - `make mutants`: deliberate one-line bugs that the tests
# must catch.  Each line of tests/mutants.txt is
#     FILE | SUITE | TEXT => REPLACEMENT
# (`#` starts a comment line): TEXT must occur on exactly one line of FILE,
# where it is replaced by REPLACEMENT; SUITE is a unit suite (CK_RUN_SUITE,
# e.g. stats), a shell test (t_ctrl) or one part of a shell test that
# has parts (t_true_input:outputs, its cases that catch the mutant: a
# whole run of the script took a minute a mutant).
#
# The work tree is never touched: the tree is copied to a scratch directory
# (MUTANTS_DIR, default a new one under TMPDIR), built there once, every
# named suite must pass on the unmutated copy, and then each mutant is
# applied, rebuilt, its suite run, and the file put back.  MUTANTS_JOBS
# shards (default one a CPU), each a copy of the built tree, run side by
# side and take the mutants from one queue.  A mutant is
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
		# t_foo:PART runs t_foo's PART only (tests/lib.sh: in_part); a
		# script marked tfgb-alone (daemons, namespaces, CPU pinning: see
		# tests/run.sh) waits for another shard's to end: side by side,
		# one could fail for the other's sake and count a false kill
		(
			grep -q '^# tfgb-alone: ' "tests/${1%%:*}.sh" && flock 8
			TFGB_TEST_PART=${1#"${1%%:*}"} TFGB_TEST_PART=${TFGB_TEST_PART#:} \
				timeout $((600 * SLOW)) sh "tests/${1%%:*}.sh" >run.log 2>&1 </dev/null
		) 8>"$scratch/alone.lock" ;;
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

# The mutants wait in one queue, the shell suites' first (a run of a
# script takes seconds to a minute, a unit suite's about one), and
# MUTANTS_JOBS shards (default one a CPU), each in its own copy of the
# built tree, take the next one when they are free: no shard waits idle
# while another still has a long list (shards dealt out beforehand by a
# guessed weight ended minutes apart).
# The tfgb-alone scripts' mutants (one at a time, run above) alternate
# with the others, so that a shard seldom waits for the other's.
: >"$scratch/q.alone"
: >"$scratch/q.shell"
: >"$scratch/q.unit"
while IFS= read -r line; do
	suite=$(printf '%s\n' "$line" | awk -F ' [|] ' '{ print $2 }')
	case $suite in
	t_*) if grep -q '^# tfgb-alone: ' "tests/${suite%%:*}.sh"; then q=alone; else q=shell; fi ;;
	*) q=unit ;;
	esac
	printf '%s\n' "$line" >>"$scratch/q.$q"
done <"$scratch/list"
cat "$scratch/q.unit" >>"$scratch/q.shell"
awk 'NR == FNR { a[++na] = $0; next } { o[++no] = $0 }
	END { for (i = 1; i <= na || i <= no; i++) { if (i <= na) print a[i]; if (i <= no) print o[i] } }' \
	"$scratch/q.alone" "$scratch/q.shell" >"$scratch/queue"
echo 0 >"$scratch/taken"
# take: the next line of the queue, or nothing when it is empty
take() {
	flock 9 || return 1
	n=$(($(cat "$scratch/taken") + 1))
	echo "$n" >"$scratch/taken"
	sed -n "${n}p" "$scratch/queue"
} 9>"$scratch/queue.lock"

# shard, in a built copy of the tree: takes mutants until the queue is
# empty; the first time it meets a suite, the suite must pass unmutated
# (unless MUTANTS_BASELINE=0); each mutant is applied, built, its suite
# run and the file put back.  One line a mutant: killed, SURVIVED, STALE,
# NOBUILD or UNMUTATED.
shard() {
	: >seen
	: >broken
	while line=$(take) && [ -n "$line" ]; do
		file=$(printf '%s\n' "$line" | awk -F ' [|] ' '{ print $1 }')
		suite=$(printf '%s\n' "$line" | awk -F ' [|] ' '{ print $2 }')
		if [ "${MUTANTS_BASELINE:-1}" != 0 ] && ! grep -qx "$suite" seen; then
			echo "$suite" >>seen
			run "$suite" || {
				tail -n 30 run.log
				echo "$suite" >>broken
			}
		fi
		if grep -qx "$suite" broken; then
			echo "UNMUTATED: suite $suite fails unmutated: $line"
			continue
		fi
		# apply: TEXT on exactly one line (fixed strings, no escaping)
		if ! at=$(/usr/bin/python3 "$scratch/apply.py" "$file" "$line" 2>why); then
			echo "STALE: $line: $(cat why)"
			continue
		fi
		cp -p "$file" "$file.orig"
		# a source's own object is kept (its .d too) and put back with
		# the source: the next build relinks instead of compiling the
		# original again (a header has no object of its own: the
		# objects that include it are compiled again)
		obj=
		case $file in *.c) [ -e "${file%.c}.o" ] && obj=${file%.c} ;; esac
		[ -z "$obj" ] || { cp -p "$obj.o" "$obj.o.orig" && cp -p "$obj.d" "$obj.d.orig"; } ||
			obj=
		mv "$file.mutant" "$file"
		m0=$(date +%s)
		if ! build "$suite"; then
			echo "NOBUILD: $file:$at: $line"; sed 's/^/    /' build.log | grep -m 5 error
		elif m1=$(date +%s) && TFGB_FAIL_FAST=1 run "$suite"; then
			echo "SURVIVED: $file:$at: $line"
		else
			echo "killed: $file:$at by $suite (build $((m1 - m0)) s, run $(($(date +%s) - m1)) s)"
		fi
		# put the file back: with its object, the source keeps its old
		# time and the object gets a new one (newer than the library
		# that holds the mutant's object: make archives and links it
		# again, no compile); without, the source gets a new time and
		# make compiles what includes it
		mv "$file.orig" "$file"
		if [ -n "$obj" ]; then
			mv "$obj.d.orig" "$obj.d"
			cp "$obj.o.orig" "$obj.o" && rm -f "$obj.o.orig"
		else
			touch "$file"
		fi
	done
	build || echo "NOBUILD: the shard's tree does not build again"
}

jobs=${MUTANTS_JOBS:-$(nproc 2>/dev/null || echo 1)}
k=0
while [ "$k" -lt "$jobs" ]; do
	k=$((k + 1))
	mkdir "$scratch/shard$k" || exit 1
	tar -cf - --exclude='./shard*' --exclude='./list*' --exclude='./queue*' --exclude='./taken' \
		--exclude='./out.*' . | (cd "$scratch/shard$k" && tar -xpf -) ||
		{ echo "mutants: cannot copy $scratch"; exit 1; }
	(cd "$scratch/shard$k" && shard >"$scratch/out.$k" 2>&1) &
done
wait
n=$(wc -l <"$scratch/list")
cat "$scratch"/out.*
killed=$(cat "$scratch"/out.* | grep -c '^killed: ')
echo "mutants: $killed of $n killed, $((n - killed)) survived, stale, not building or not run, in $k shards, in $(($(date +%s) - t0)) s"
[ "$killed" = "$n" ] && [ "$n" -gt 0 ] && ! grep -q '^\(UNMUTATED\|NOBUILD\)' "$scratch"/out.*
