#!/bin/sh
# tfgb-flags: none (reads sources and scripts, or builds on its own: the same under any CFLAGS or SANITIZE)
# tests/t_includes.sh - the include graph of src/: no cycle, and layers.
#
# A module is a source's path without its extension (src/core/job for job.c
# and job.h).  Module A uses module B when A's .c or .h has #include "b.h"
# and the tree holds exactly one b.h.  Two rules:
# - the graph of uses is acyclic (tsort(1) finds no cycle);
# - layers, lowest first: src/core, src/transport, src/ctrl, src/cmd.  A
#   module uses none of a higher layer, except that the core may use
#   src/transport/transport (transport.h: the interface the engine drives,
#   never a transport's own files).
# Each rule is first shown to fail on a copy of src/ with a use added that
# breaks it, so that the test cannot pass by finding nothing.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# uses DIR: the edges "user used" of the tree DIR (its src/), one a line
uses() {
	(cd "$1" && find src -name '*.[ch]' | sort | xargs grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"') |
	awk -v list="$(cd "$1" && find src -name '*.h' | sort)" '
	BEGIN { n = split(list, h, "\n")
		for (i = 1; i <= n; i++) { b = h[i]; sub(/.*\//, "", b); cnt[b]++; path[b] = h[i] } }
	{ f = $0; sub(/:.*/, "", f); m = f; sub(/\.[ch]$/, "", m)
	  inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc); sub(/.*\//, "", inc)
	  if (cnt[inc] != 1) next
	  u = path[inc]; sub(/\.h$/, "", u)
	  if (u != m) print m, u }' | sort -u
}

# rank MODULE: its layer, 0 (core) to 3 (cmd)
layer_of() {
	case $1 in
	src/core/*) echo 0 ;;
	src/transport/*) echo 1 ;;
	src/ctrl/*) echo 2 ;;
	src/cmd/*) echo 3 ;;
	*) echo 9 ;;
	esac
}

# check DIR: prints each cycle and each use against the layers; 0 if none
check() {
	uses "$1" >"$tmp/uses"
	bad=0
	# tsort(1) reports every cycle it breaks on standard error
	if ! out=$(tsort "$tmp/uses" 2>&1 >/dev/null) || [ -n "$out" ]; then
		echo "include cycles among src/ modules (tsort):"
		printf '%s\n' "$out"
		bad=1
	fi
	while read -r a b; do
		[ "$b" = src/transport/transport ] && [ "$(layer_of "$a")" = 0 ] && continue
		if [ "$(layer_of "$a")" -lt "$(layer_of "$b")" ]; then
			echo "layer: $a uses $b, a module above it"
			bad=1
		fi
	done <"$tmp/uses"
	return $bad
}

# the rules can fail: a copy with a cycle, a copy with a use upwards
mkdir "$tmp/cyc" "$tmp/up"
cp -R src "$tmp/cyc/" && cp -R src "$tmp/up/" || fail "cannot copy src/"
printf '#include "report.h"\n' >>"$tmp/cyc/src/core/hist.h"
printf '#include "tr_socket.h"\n' >>"$tmp/up/src/core/hist.c"
check "$tmp/cyc" | grep -q 'cycles' || fail "an include cycle (hist.h -> report.h -> hist.h) goes unseen"
check "$tmp/up" | grep -q 'layer: src/core/hist uses src/transport/socket/tr_socket' ||
	fail "core including a transport's header goes unseen"

out=$(check .) || fail "$out"
echo "ok: $(wc -l <"$tmp/uses") uses among $(cut -d' ' -f1 "$tmp/uses" | sort -u | wc -l) modules, no cycle, layers kept"
