# tfgb build settings; included by Makefile.  Override on the command line,
# e.g. `make VERBS=0 NUMA=0`, `make WERROR=1` or `make PREFIX=/opt/tfgb install`
# (a change of any of them, or of the flags, rebuilds what depends on it).

VERSION = 0.1.0

# install paths (every one is prefixed with $(DESTDIR) at install time)
PREFIX    = /usr/local
BINDIR    = $(PREFIX)/bin
MANPREFIX = $(PREFIX)/share/man
DATADIR   = $(PREFIX)/share/tfgb
DOCDIR    = $(PREFIX)/share/doc/tfgb

# feature switches: 1 builds the feature, 0 leaves its library out
VERBS = 1
NUMA  = 1
MPI   = 1

PKG_CONFIG = pkg-config
PKGS = grpc inih libprotobuf-c
PKGS_VERBS = libibverbs
PKGS_NUMA  = numa
PKGS_MPI   = ompi-c

CC      = cc
# The user's flags, from the command line or the environment (a
# distribution's: CFLAGS="$(dpkg-buildflags --get CFLAGS)" ...); tfgb's own
# (include paths, defines, -std=c11, warnings) are in the Makefile's TFGB_*
# variables and go in front, so these are kept, appended, and win.
CFLAGS   ?= -O2 -g
CPPFLAGS ?=
LDFLAGS  ?=
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# 1 makes every warning an error (.ci/run and developers); off for users,
# whose newer compiler may warn about what this one does not.
WERROR   = 0

# tfgb counts in unsigned __int128 (exact sums of squares, 64x64-bit
# products): a target without it (32-bit x86 and ARM, -m32) is refused
# here, before anything is compiled.
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
ifeq ($(shell echo __SIZEOF_INT128__ | $(CC) $(CPPFLAGS) $(CFLAGS) -E -P -x c - 2>/dev/null),__SIZEOF_INT128__)
$(error tfgb needs a 64-bit target with unsigned __int128 (x86-64, arm64, ppc64el, riscv64, s390x); '$(CC) $(CFLAGS)' has none, so 32-bit builds are not supported)
endif
endif
