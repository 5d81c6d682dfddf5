#!/bin/sh
# tfgb-flags: none (reads sources and scripts, or builds on its own: the same under any CFLAGS or SANITIZE)
# Build conventions, by `make -n` in a scratch copy of the build files (so
# this tree's .flags, and so its objects, are left alone): the user's
# CPPFLAGS, CFLAGS and LDFLAGS are appended after tfgb's own flags, which
# they never replace; -Werror only with WERROR=1; a change of an install
# path changes .flags (what every object depends on), and so the manual
# pages built with the paths; a target without
# __int128 (-m32) is refused by config.mk with one clear message.
. tests/lib.sh
command -v make >/dev/null 2>&1 || skip "no make"
command -v cc >/dev/null 2>&1 || skip "no cc"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
cp -R Makefile config.mk src proto man "$dir"/ || fail "cannot copy the build files"
cd "$dir" || fail "no scratch dir"
# PKG_CONFIG=true: no package look-ups, which are slow and beside the point
# the make running this test (make check WERROR=1, as .ci/run) passes its
# variables down in MAKEFLAGS: each probe starts from none of them
n() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u WERROR make -n -B V=1 PKG_CONFIG=true tfgb "$@" 2>&1; }

n CPPFLAGS=-DUSER_CPP "CFLAGS=-O1 -DUSER_C" LDFLAGS=-Wl,-z,now >out || fail "make -n: $(tail -3 out)"
cc_line=$(grep -m1 ' -c -o src/cmd/main.o ' out) || fail "no compile line: $(head -5 out)"
for f in -Igen -Isrc/base -DTFGB_VERSION= -D_GNU_SOURCE -std=c11 -Wall -DUSER_CPP -DUSER_C -O1; do
	case " $cc_line " in *" $f"*) ;; *) fail "compile line lacks $f: $cc_line" ;; esac
done
# the user's come after tfgb's: -DUSER_C after the warnings, -DUSER_CPP
# after tfgb's defines
case "$cc_line" in *-Wall*-DUSER_C*) ;; *) fail "CFLAGS not appended: $cc_line" ;; esac
case "$cc_line" in *-DTFGB_HAVE_NUMA*-DUSER_CPP*) ;; *) fail "CPPFLAGS not appended: $cc_line" ;; esac
case "$cc_line" in *-Werror*) fail "-Werror without WERROR=1: $cc_line" ;; esac
grep ' -o tfgb ' out | grep -q -- '-Wl,-z,now' || fail "LDFLAGS not on the link line"
grep ' -o gen/tfgb.pb-c.o \| -c -o gen/' out | grep -q -- '-DUSER_CPP' ||
	fail "generated code does not get CPPFLAGS"
# the two objects that carry the build's own facts get them: the system
# facts the build description (git describe, for results and `tfgb
# version`), the grpc transport gRPC's release
grep ' -c -o src/host/sysinfo.o ' out | grep -q -- '-DTFGB_BUILD=' ||
	fail "src/host/sysinfo.o is built without -DTFGB_BUILD"
grep ' -c -o src/transport/grpc/tr_grpc_lib.o ' out | grep -q -- '-DTFGB_GRPC_RELEASE=' ||
	fail "src/transport/grpc/tr_grpc_lib.o is built without -DTFGB_GRPC_RELEASE"

# Debian's own flags (dpkg-buildflags, as debian/rules has them: hardening
# all on) reach every compile and link line whole, after tfgb's; `make deb`
# builds with them and runs make check (tests/t_deb.sh checks the binary)
if command -v dpkg-buildflags >/dev/null 2>&1; then
	bf() { DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$1"; }
	n "CPPFLAGS=$(bf CPPFLAGS)" "CFLAGS=$(bf CFLAGS)" "LDFLAGS=$(bf LDFLAGS)" >out ||
		fail "make -n with dpkg-buildflags: $(tail -3 out)"
	cc_line=$(grep -m1 ' -c -o src/cmd/main.o ' out)
	for f in $(bf CPPFLAGS) $(bf CFLAGS); do
		case " $cc_line " in *" $f "*) ;; *) fail "dpkg-buildflags' $f is not on the compile line: $cc_line" ;; esac
	done
	case "$cc_line" in *-DTFGB_HAVE_NUMA*-D_FORTIFY_SOURCE*) ;; *) fail "FORTIFY not after tfgb's: $cc_line" ;; esac
	for f in $(bf LDFLAGS); do
		grep ' -o tfgb ' out | grep -q -- " $f" || fail "dpkg-buildflags' $f is not on the link line"
	done
else
	skip_part "dpkg-buildflags' flags: no dpkg-buildflags (Debian package dpkg-dev)"
fi

n WERROR=1 >out || fail "make -n WERROR=1: $(tail -3 out)"
grep -m1 ' -c -o src/cmd/main.o ' out | grep -q -- ' -Werror' || fail "WERROR=1 adds no -Werror"

# install paths are compiled in: changing one changes .flags
n PREFIX=/opt/a >/dev/null && cp .flags flags.a || fail "no .flags"
n PREFIX=/opt/b >/dev/null
cmp -s .flags flags.a && fail "a change of PREFIX leaves .flags as it was"
n DATADIR=/srv/tfgb >/dev/null
grep -q /srv/tfgb .flags || fail "DATADIR is not tracked in .flags"
# the manual names this build's paths, rebuilt when they change
m() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u WERROR make PKG_CONFIG=true "$@" >out 2>&1 ||
	fail "make $*: $(tail -3 out)"; }
m gen/man/tfgb.1
grep -q '^\.I /usr/local/share/tfgb/tfgb.ini$' gen/man/tfgb.1 || fail "gen/man/tfgb.1 lacks the default DATADIR"
m PREFIX=/usr gen/man/tfgb.1
grep -q '^\.I /usr/share/tfgb/tfgb.ini$' gen/man/tfgb.1 || fail "PREFIX=/usr: gen/man/tfgb.1 not rebuilt with /usr/share/tfgb"
grep -q '/usr/local/share' gen/man/tfgb.1 && fail "PREFIX=/usr: gen/man/tfgb.1 still names /usr/local/share"

# 32-bit: refused up front, one line naming the reason
n "CFLAGS=-m32 -O2" >out && fail "a -m32 build was not refused"
grep -q '32-bit builds are not supported' out || fail "no clear refusal: $(cat out)"
exit 0
