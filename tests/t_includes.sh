#!/bin/sh
# tests/t_includes.sh - no include cycle among the modules of src/.
#
# A module is a source's path without its extension (src/core/job for job.c
# and job.h).  Module A uses module B when A's .c or .h has #include "b.h"
# and src/ holds exactly one b.h.  The graph of uses must be acyclic: a
# lower module (core) never reaches back into one above it (transports,
# the control service, the commands).  Prints each cycle found and fails.
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
find src -name '*.[ch]' | sort >"$tmp.files"
# edges "user used", one per line
while read -r f; do
	m=${f%.[ch]}
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
	while read -r inc; do
		hit=$(grep "/${inc##*/}\$" "$tmp.files")
		[ "$(printf '%s\n' "$hit" | grep -c .)" = 1 ] || continue
		u=${hit%.h}
		[ "$u" = "$m" ] || echo "$m $u"
	done
done <"$tmp.files" | sort -u >"$tmp"
rm -f "$tmp.files"
# tsort(1) reports every cycle it breaks on standard error
if ! out=$(tsort "$tmp" 2>&1 >/dev/null) || [ -n "$out" ]; then
	echo "FAIL: include cycles among src/ modules (tsort):"
	printf '%s\n' "$out"
	exit 1
fi
echo "ok: $(wc -l <"$tmp") uses among $(cut -d' ' -f1 "$tmp" | sort -u | wc -l) modules, no cycle"
