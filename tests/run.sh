#!/bin/sh
# Runs every tests/t_*.sh end-to-end test from the top of the source tree.
# Each test exits 0 (pass), 77 (skipped: says why) or anything else (fail).
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 skip=0 failed=""
for t in tests/t_*.sh; do
	[ -e "$t" ] || continue
	out=$(mktemp)
	if timeout 300 sh "$t" >"$out" 2>&1; then
		pass=$((pass + 1)); echo "PASS: $t"
	else
		rc=$?
		if [ "$rc" = 77 ]; then
			skip=$((skip + 1)); echo "SKIP: $t: $(tail -n 1 "$out")"
		else
			fail=$((fail + 1)); failed="$failed $t"
			echo "FAIL: $t (exit $rc)"; sed 's/^/    /' "$out" | tail -n 40
		fi
	fi
	rm -f "$out"
done
echo "shell: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
