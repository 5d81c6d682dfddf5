#!/bin/sh
# tfgb-flags: none (reads sources and scripts, or builds on its own: the same under any CFLAGS or SANITIZE)
# tests/t_funclen.sh - no function of src/ over 80 lines.
#
# The style of the tree: a function's body opens with "{" alone in column 0
# and closes with "}" in column 0; its length counts the lines from the
# signature's first line to the closing brace.  The check is first shown to
# fail on a made-up function of 81 lines.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
MAX=80

# long FILE...: "file:line: name() N lines" for each function over MAX
long() {
	awk -v max=$MAX '
	FNR == 1 { sig = 0; inb = 0 }
	!inb && /^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { sig = FNR; name = $0 }
	!inb && /^\{/ && sig { inb = 1; start = sig }
	inb && /^\}/ { n = FNR - start + 1; inb = 0; sig = 0
		sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
		if (n > max) printf "%s:%d: %s() %d lines\n", FILENAME, start, name, n }
	' "$@"
}

tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
{
	echo "static int made_up(int a)"
	echo "{"
	i=0
	while [ $i -lt 78 ]; do echo "	a++;"; i=$((i + 1)); done
	echo "}"
} >"$tmp"
long "$tmp" | grep -q 'made_up() 81 lines' || fail "a function of 81 lines goes unseen"

files=$(find src -name '*.c' | sort)
out=$(long $files)
[ -z "$out" ] || fail "functions over $MAX lines in src/ (split them along their steps):
$out"
echo "ok: no function over $MAX lines in src/ ($(echo "$files" | wc -l) files)"
