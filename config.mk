# tfgb build settings; included by Makefile.  Override on the command line,
# e.g. `make VERBS=0 NUMA=0` or `make PREFIX=/opt/tfgb install`.

VERSION = 0.1.0

# install paths (every one is prefixed with $(DESTDIR) at install time)
PREFIX    = /usr/local
BINDIR    = $(PREFIX)/bin
MANPREFIX = $(PREFIX)/share/man
DATADIR   = $(PREFIX)/share/tfgb

# feature switches: 1 builds the feature, 0 leaves its library out
VERBS = 1
NUMA  = 1

PKG_CONFIG = pkg-config
PKGS = grpc inih libprotobuf-c
PKGS_VERBS = libibverbs
PKGS_NUMA  = numa

CC      = cc
OPT     = -O2 -g
WARN    = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS  = $(OPT) $(WARN) -std=c11
LDFLAGS =
