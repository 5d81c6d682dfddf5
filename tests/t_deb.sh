#!/bin/sh
# tfgb-flags: none (reads sources and scripts, or builds on its own: the same under any CFLAGS or SANITIZE)
# The Debian packaging (debian/, `make deb`).
#
# Always (make check, a second): debian/changelog's version is config.mk's
# VERSION; debian/control's Build-Depends are the Makefile's package lists
# (DEBS_BUILD without gcc and make, which build-essential brings, with
# libibverbs-dev, libnuma-dev and libopenmpi-dev; the rest of DEBS marked
# <!nocheck>);
# debian/copyright is DEP-5 and carries COPYING's license.
#
# With a package build's directory (`sh tests/t_deb.sh build/deb`, what
# `make deb` runs after dpkg-buildpackage and lintian; building takes
# minutes, so make check does not): the .deb holds the binary, every manual
# page, the default job, the schema, every model and the examples; its
# binary keeps dpkg-buildflags' hardening (hardening-check: PIE, stack
# protector, fortify, RELRO, BIND_NOW); extracted with dpkg-deb -x, it runs
# (`version`, `genpayload` on the packaged tfgb.ini: the default payload,
# as with conf/tfgb.ini; latency over grpc and socket and a 1 x 2
# throughput run on loopback, leaving no process behind) and names
# /usr/share/tfgb, its DATADIR, in its usage; its pages
# name the package's paths and pass mandoc -T lint; the build log shows
# that DEB_BUILD_OPTIONS was honoured (nocheck: no test ran; else make
# check passed; parallel=N or one job a CPU).
. tests/lib.sh

# 1. the packaging agrees with the tree
[ -f debian/control ] && [ -f debian/changelog ] && [ -x debian/rules ] ||
	fail "debian/control, debian/changelog or an executable debian/rules is missing"
version=$(sed -n 's/^VERSION *= *//p' config.mk)
deb_version=$(sed -n '1s/^tfgb (\([^)]*\)).*/\1/p' debian/changelog)
[ "$deb_version" = "$version" ] ||
	fail "debian/changelog says '$deb_version', config.mk VERSION '$version'"
[ "$(cat debian/source/format)" = "3.0 (native)" ] || fail "debian/source/format: $(cat debian/source/format)"

# the Makefile's lists, as make reads them: -p prints the variables, -n
# runs no recipe, in a scratch copy (this tree's .flags stay as they are)
# and with no MAKEFLAGS from a make around this test
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT INT TERM
cp Makefile config.mk "$x"/ || fail "cannot copy the Makefile"
mk=$(cd "$x" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -pn PKG_CONFIG=true deps 2>/dev/null)
list() { printf '%s\n' "$mk" | sed -n "s/^$1 = //p" | head -1 | tr ' ' '\n' | grep . | sort -u; }
debs_build=$(list DEBS_BUILD | grep -vx 'gcc\|make')
debs=$(list DEBS | grep -vx 'gcc\|make')
[ -n "$debs_build" ] && [ -n "$debs" ] || fail "no DEBS or DEBS_BUILD in the Makefile"
bd=$(sed -n '/^Build-Depends:/,/^[A-Z#]/{/^#/d;s/^Build-Depends://;p}' debian/control |
	tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep -v '^$\|^[A-Z]\|^debhelper-compat')
bd_all=$(printf '%s\n' "$bd" | sed 's/ .*//' | sort -u)
bd_build=$(printf '%s\n' "$bd" | grep -v '<!nocheck>' | sed 's/ .*//' | sort -u)
want_build=$(printf '%s\nlibibverbs-dev\nlibnuma-dev\nlibopenmpi-dev\n' "$debs_build" | sort -u)
[ "$bd_build" = "$want_build" ] ||
	fail "debian/control's Build-Depends (no profile) are '$(echo $bd_build)'," \
		"DEBS_BUILD with verbs, numa and mpi '$(echo $want_build)'"
[ "$bd_all" = "$debs" ] ||
	fail "debian/control's Build-Depends are '$(echo $bd_all)', DEBS '$(echo $debs)'"
grep -q 'debhelper-compat (= 13)' debian/control ||
	fail "debian/control does not ask for debhelper-compat (= 13)"

head -1 debian/copyright | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
	fail "debian/copyright is not DEP-5"
grep -q '^License: BSD-3-Clause$' debian/copyright || fail "debian/copyright: no BSD-3-Clause"
grep -q '^BSD 3-Clause License' COPYING || fail "COPYING is no longer BSD-3-Clause: debian/copyright says it is"
# the license text, words only, is COPYING's
words() { tr -cs 'A-Za-z0-9' '\n' | grep -v '^$'; }
a=$(sed -n '/^Redistribution and use/,$p' COPYING | words)
b=$(sed -n '/^ Redistribution and use/,$p' debian/copyright | sed 's/^ \.$//' | words)
[ "$a" = "$b" ] || fail "debian/copyright's BSD-3-Clause text is not COPYING's"

dir=$1
[ -n "$dir" ] || exit 0

# 2. a package build: `make deb` passes its directory
need_cmd dpkg-deb dpkg
need_cmd hardening-check devscripts
deb=$(ls "$dir"/tfgb_"$version"_*.deb 2>/dev/null | head -1)
[ -f "$deb" ] || fail "no $dir/tfgb_${version}_*.deb"
dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's,^\./,/,' >"$x/list" || fail "dpkg-deb -c $deb"
for f in /usr/bin/tfgb /usr/share/tfgb/tfgb.ini /usr/share/tfgb/tfgb-result.schema.json \
	/usr/share/doc/tfgb/copyright /usr/share/doc/tfgb/examples/plot/make-plots.sh; do
	grep -qx "$f" "$x/list" || fail "$deb lacks $f"
done
for m in man/*.[157]; do
	p=${m#man/}
	grep -qx "/usr/share/man/man${p##*.}/$p.gz" "$x/list" || fail "$deb lacks the page $p"
done
for m in conf/models/*.model; do
	grep -qx "/usr/share/tfgb/models/${m##*/}" "$x/list" || fail "$deb lacks the model ${m##*/}"
done
for e in examples/*.ini; do
	grep -qx "/usr/share/doc/tfgb/$e" "$x/list" || fail "$deb lacks the example $e"
done
grep -q '^/usr/local' "$x/list" && fail "$deb installs under /usr/local: $(grep -m1 '^/usr/local' "$x/list")"

dpkg-deb -x "$deb" "$x/root" || fail "dpkg-deb -x $deb"
for m in conf/models/*.model; do
	cmp -s "$m" "$x/root/usr/share/tfgb/models/${m##*/}" || fail "the packaged ${m##*/} is not $m"
done

out=$(hardening-check --nocfprotection "$x/root/usr/bin/tfgb" 2>&1) ||
	fail "hardening-check: $out"
for h in 'Position Independent Executable: yes' 'Stack protected: yes' \
	'Fortify Source functions: yes' 'Read-only relocations: yes' 'Immediate binding: yes'; do
	printf '%s\n' "$out" | grep -q "$h" || fail "hardening-check: no '$h': $out"
done

bin=$x/root/usr/bin/tfgb
"$bin" version >"$x/version" 2>&1 || fail "the packaged tfgb version: $(cat "$x/version")"
grep -qx "tfgb $version" "$x/version" || fail "the packaged tfgb says: $(head -1 "$x/version")"
"$bin" genpayload -c "$x/root/usr/share/tfgb/tfgb.ini" >"$x/layout" 2>&1 ||
	fail "the packaged tfgb genpayload: $(cat "$x/layout")"
"$bin" genpayload -c conf/tfgb.ini >"$x/layout.tree" 2>&1 ||
	fail "the packaged tfgb genpayload -c conf/tfgb.ini: $(cat "$x/layout.tree")"
cmp -s "$x/layout" "$x/layout.tree" ||
	fail "the packaged tfgb.ini gives another payload than conf/tfgb.ini: $(diff "$x/layout.tree" "$x/layout" | head -5)"
grep -q '^# tfgb genpayload: scheme uniform, seed 1, 10 iovecs, 3176488 bytes$' "$x/layout" ||
	fail "the packaged default job is not the paper's: $(head -1 "$x/layout")"
"$bin" latency --help 2>&1 | grep -q ' /usr/share/tfgb/tfgb.ini' ||
	fail "the packaged tfgb does not look in /usr/share/tfgb: $("$bin" latency --help 2>&1 | grep tfgb.ini)"
grep -q '/usr/local' "$x/root/usr/share/tfgb/tfgb.ini" && fail "the packaged tfgb.ini names /usr/local"

# the packaged binary measures: latency over grpc and socket, and a 1 x 2
# throughput run, each on loopback with the servers it starts itself (the
# packaged tfgb executes itself for them).  make deb without nocheck runs
# the whole suite on this binary; with nocheck (.ci/run, right after make
# check passed on the same tree) these runs are what checks the hardened
# build end to end.
job=$x/root/usr/share/tfgb/tfgb.ini
for tr in grpc socket; do
	p=$(free_port)
	"$bin" latency -c "$job" -q -f json -o "$x/lat-$tr.json" -s job.transport=$tr \
		-s cluster.ps=127.0.0.1:$p -s job.warmup=$(slow 100)ms -s job.duration=$(slow 300)ms \
		>"$x/lat.log" 2>&1 || fail "the packaged tfgb latency over $tr: $(cat "$x/lat.log")"
	json_check 'd["status"] == "ok" and d["calls"] > 0 and d["latency_us"]["p50"] > 0' \
		<"$x/lat-$tr.json" || fail "the packaged tfgb's $tr latency result: $(head -c 300 "$x/lat-$tr.json")"
done
p=$(free_ports 2)
"$bin" throughput -c "$job" -q -f json -o "$x/tput.json" -s job.transport=socket \
	-s cluster.ps=127.0.0.1:$p -s cluster.workers=2 -s job.warmup=$(slow 100)ms \
	-s job.duration=$(slow 300)ms >"$x/tput.log" 2>&1 ||
	fail "the packaged tfgb throughput 1 x 2: $(cat "$x/tput.log")"
json_check 'd["status"] == "ok" and d["calls"] > 0' <"$x/tput.json" ||
	fail "the packaged tfgb's throughput result: $(head -c 300 "$x/tput.json")"
no_leftovers "$x/root/usr/bin/tfgb" "the packaged tfgb"

# each page under its own name: mandoc takes a page's section from the
# character after the last dot of its path, which for "$x/page" was the
# first of mktemp's random suffix (a digit now and then: "filename/section
# mismatch: *.1 vs TH ... 5", a failure one run in six)
mkdir "$x/pages" || fail "cannot make $x/pages"
for m in "$x"/root/usr/share/man/man*/*.gz; do
	page=$(basename "$m" .gz)
	gzip -dc "$m" >"$x/pages/$page" || fail "cannot read $m"
	grep -q "^\.TH .*\"tfgb $version\"" "$x/pages/$page" || fail "${m#"$x"/root}: no 'tfgb $version' in .TH"
	grep -q '@VERSION@\|/usr/local/share/tfgb\|/usr/local/share/doc' "$x/pages/$page" &&
		fail "${m#"$x"/root} names @VERSION@ or /usr/local: $(grep -m1 '@VERSION@\|/usr/local/share' "$x/pages/$page")"
	if command -v mandoc >/dev/null 2>&1; then
		o=$(mandoc -T lint -W warning "$x/pages/$page" 2>&1) && [ -z "$o" ] || fail "${m#"$x"/root}: $o"
	fi
done

# the build log of make deb: DEB_BUILD_OPTIONS honoured
log=$dir/build.log
[ -f "$log" ] || fail "no $log"
case " $DEB_BUILD_OPTIONS " in
*" nocheck "*)
	grep -q '^ *debian/rules override_dh_auto_test$\|^[0-9]* passed, [0-9]* failed' "$log" &&
		fail "nocheck, yet the tests ran: $log"
	;;
*)
	grep -q '^[0-9]* passed, 0 failed, [0-9]* skipped$' "$log" || fail "make check did not pass in the build: $log"
	;;
esac
jobs=$(printf '%s\n' "$DEB_BUILD_OPTIONS" | sed -n 's/.*parallel=\([0-9]*\).*/\1/p')
[ -n "$jobs" ] || jobs=$(nproc)
if [ "$jobs" -gt 1 ]; then
	grep -q "make -j$jobs " "$log" || fail "the build did not run make -j$jobs: $(grep -m1 'make -j' "$log")"
else
	grep -q 'make -j' "$log" && ! grep -q 'make -j1 ' "$log" && fail "parallel=1, yet: $(grep -m1 'make -j' "$log")"
fi
exit 0
