#!/bin/sh
# tfgb-flags: none (reads sources and scripts, or builds on its own: the same under any CFLAGS or SANITIZE)
# tests/t_includes.sh - the include graph of src/: no cycle, and layers.
#
# A module is a source's path without its extension (src/job/job for job.c
# and job.h).  Module A uses module B when A's .c or .h has #include "b.h"
# and the tree holds exactly one b.h.  Two rules:
# - the graph of uses is acyclic (tsort(1) finds no cycle);
# - the folders are layers, lowest first: src/base, src/job, src/host,
#   src/payload, src/transport (with its transports' folders), src/engine,
#   src/report, src/ctrl, src/run, src/cmd (the Makefile's LAYERS, read from it).  A
#   module uses none of a layer after its own, with no exception, and every
#   folder of src/ is one of the layers.
# And capabilities, not names: outside src/transport no code compares with
# a transport's name (strcmp with one of the registry's names, == or != a
# TRANSPORT_ value: it asks tr_ops for a field or flag instead), and
# outside src/transport/grpc and src/ctrl (the control service, built on
# gRPC) no code includes a gRPC header.
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

# the layers, lowest first, as the Makefile lists them
LAYERS=$(sed -n 's/^LAYERS *= *//p' Makefile)
[ "$(echo $LAYERS | wc -w)" -ge 9 ] || fail "no LAYERS line in the Makefile: '$LAYERS'"

# layer_of MODULE: its layer's rank, 0 (the lowest) up; 99 outside them
layer_of() {
	r=0
	for l in $LAYERS; do
		case $1 in "$l"/*) echo $r; return ;; esac
		r=$((r + 1))
	done
	echo 99
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
	# every folder holding sources is a layer or inside one
	for d in $(cd "$1" && find src -name '*.[ch]' | sed 's,/[^/]*$,,' | sort -u); do
		[ "$(layer_of "$d/x")" != 99 ] && continue
		echo "layer: $d is not a layer of the Makefile's LAYERS"
		bad=1
	done
	while read -r a b; do
		if [ "$(layer_of "$a")" -lt "$(layer_of "$b")" ]; then
			echo "layer: $a uses $b, a module above it"
			bad=1
		fi
	done <"$tmp/uses"
	return $bad
}

# names DIR: each line outside src/transport of DIR that tests a
# transport's name (the registry's rows in src/transport/transport.c)
names() {
	list=$(sed -n 's/^[[:space:]]*{"\([a-z0-9_]*\)", .*/\1/p' "$1/src/transport/transport.c" | paste -sd'|')
	[ -n "$list" ] || { echo "no registry rows in src/transport/transport.c"; return; }
	(cd "$1" && find src -name '*.[ch]' ! -path 'src/transport/*' | sort |
		xargs grep -nE "strn?cmp\(.*\"($list)\"|[!=]= *TRANSPORT_[A-Z]|TRANSPORT_[A-Z]+ *[!=]=")
}

# grpc_headers DIR: each #include of a gRPC header outside the grpc
# transport and the control service
grpc_headers() {
	(cd "$1" && find src -name '*.[ch]' ! -path 'src/transport/grpc/*' ! -path 'src/ctrl/*' |
		sort | xargs grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*<grpc')
}

# the rules can fail: a copy with a cycle, a copy with a use upwards
mkdir "$tmp/cyc" "$tmp/up"
cp -R src "$tmp/cyc/" && cp -R src "$tmp/up/" || fail "cannot copy src/"
printf '#include "report.h"\n' >>"$tmp/cyc/src/base/hist.h"
printf '#include "tr_socket.h"\n' >>"$tmp/up/src/base/hist.c"
check "$tmp/cyc" | grep -q 'cycles' || fail "an include cycle (hist.h -> report.h -> hist.h) goes unseen"
check "$tmp/up" | grep -q 'layer: src/base/hist uses src/transport/socket/tr_socket' ||
	fail "the base including a transport's header goes unseen"
# the engine's interface to the transports is no exception below them
mkdir "$tmp/tr" "$tmp/dir"
cp -R src "$tmp/tr/" && cp -R src "$tmp/dir/" || fail "cannot copy src/"
printf '#include "transport.h"\n' >>"$tmp/tr/src/payload/payload.c"
check "$tmp/tr" | grep -q 'layer: src/payload/payload uses src/transport/transport' ||
	fail "the payload including transport.h goes unseen"
# nor is a folder outside the layers
mkdir "$tmp/dir/src/misc" && printf 'int misc;\n' >"$tmp/dir/src/misc/misc.c"
check "$tmp/dir" | grep -q 'layer: src/misc is not a layer' || fail "a folder outside the layers goes unseen"

# and a copy with a name test, a copy with a gRPC header
mkdir "$tmp/name" "$tmp/hdr"
cp -R src "$tmp/name/" && cp -R src "$tmp/hdr/" || fail "cannot copy src/"
printf 'static int is_grpc(const char *n) { return !strcmp(n, "grpc"); }\n' >>"$tmp/name/src/run/wctl.c"
printf '#include <grpc/grpc.h>\n' >>"$tmp/hdr/src/base/hist.c"
names "$tmp/name" | grep -q '^src/run/wctl.c:.*"grpc"' ||
	fail "a strcmp with a transport's name outside src/transport goes unseen"
grpc_headers "$tmp/hdr" | grep -q '^src/base/hist.c:' ||
	fail "a gRPC header included outside src/transport/grpc and src/ctrl goes unseen"

out=$(check .) || fail "$out"
out=$(names .) && fail "transports tested by name, not by their tr_ops fields:
$out"
out=$(grpc_headers .) && fail "gRPC headers outside src/transport/grpc and src/ctrl:
$out"
echo "ok: $(wc -l <"$tmp/uses") uses among $(cut -d' ' -f1 "$tmp/uses" | sort -u | wc -l) modules, no cycle, layers kept, no transport known by name"
