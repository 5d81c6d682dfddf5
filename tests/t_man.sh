#!/bin/sh
# The manual: every page passes `mandoc -T lint` without an error or a
# warning; `make` built gen/man with the version filled in (no @VERSION@
# left); `tfgb help PAGE` shows that built page, footer and all, before any
# `make install`.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
command -v mandoc >/dev/null 2>&1 || skip "no mandoc (apt-get install mandoc)"

for m in man/*.1 man/*.5 man/*.7; do
	out=$(mandoc -T lint -W warning "$m" 2>&1) || fail "mandoc -T lint: $out"
	[ -z "$out" ] || fail "mandoc -T lint: $out"
done

version=$(sed -n 's/^VERSION *= *//p' config.mk)
[ -n "$version" ] || fail "no VERSION in config.mk"
for m in man/*.1 man/*.5 man/*.7; do
	g=gen/man/${m#man/}
	[ -f "$g" ] || fail "$g is not built (make builds the manual)"
	grep -q '@VERSION@' "$g" && fail "$g still says @VERSION@"
	grep -q "^\.TH .*\"tfgb $version\"" "$g" || fail "$g: no 'tfgb $version' in .TH"
done

command -v man >/dev/null 2>&1 || skip "no man(1) (apt-get install man-db)"
for page in latency tfgb.ini; do
	MANPAGER=cat PAGER=cat MANWIDTH=80 $TFGB help $page >"${TMPDIR:-/tmp}/t_man.$$" 2>&1 ||
		{ rm -f "${TMPDIR:-/tmp}/t_man.$$"; fail "tfgb help $page failed"; }
	grep -q "tfgb $version" "${TMPDIR:-/tmp}/t_man.$$" ||
		{ rm -f "${TMPDIR:-/tmp}/t_man.$$"; fail "tfgb help $page does not show the built page"; }
	rm -f "${TMPDIR:-/tmp}/t_man.$$"
done
exit 0
