# tfgb - TF-gRPC-Bench in C.  See README and config.mk.
include config.mk

# Debian packages the build and the tests need (`make deps` installs them).
DEBS = gcc make pkg-config libgrpc-dev libinih-dev check \
       python3 python3-grpcio man-db mandoc iproute2 procps openmpi-bin
ifeq ($(VERBS),1)
DEBS += libibverbs-dev
PKGS += $(PKGS_VERBS)
endif
ifeq ($(NUMA),1)
DEBS += libnuma-dev
PKGS += $(PKGS_NUMA)
endif

# Deferred: pkg-config runs when a recipe needs the flags, after `deps`.
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS   = $(shell $(PKG_CONFIG) --libs $(PKGS))
CPPFLAGS = -D_GNU_SOURCE -DTFGB_VERSION='"$(VERSION)"' \
           -DTFGB_DATADIR='"$(DATADIR)"' -DTFGB_MANDIR='"$(MANPREFIX)"' \
           -DTFGB_HAVE_VERBS=$(VERBS) -DTFGB_HAVE_NUMA=$(NUMA)
ALL_CFLAGS = $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS)

SRC    = $(wildcard src/*.c)
LIBSRC = $(filter-out src/main.c,$(SRC))
LIBOBJ = $(LIBSRC:.c=.o)
HDR    = $(wildcard src/*.h)
TSRC   = $(wildcard tests/check_*.c)
MAN1   = $(wildcard man/*.1)
MAN5   = $(wildcard man/*.5)

all: tfgb

# `make V=1` shows the full command lines
Q = $(if $(V),,@)

src/%.o: src/%.c $(HDR) config.mk
	@$(if $(V),:,echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

libtfgb.a: $(LIBOBJ)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $(LIBOBJ)

tfgb: src/main.o libtfgb.a
	@$(if $(V),:,echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ src/main.o libtfgb.a $(PKG_LIBS) -lm

tests/check_tfgb: $(TSRC) tests/check_tfgb.h libtfgb.a
	@$(if $(V),:,echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -DTFGB_SRCDIR='"$(CURDIR)"' -Isrc $(shell $(PKG_CONFIG) --cflags check) -o $@ $(TSRC) \
		libtfgb.a $(PKG_LIBS) $(shell $(PKG_CONFIG) --libs check) -lm

# Installs the Debian packages above when any is missing (root only).
deps:
	@missing=$$(for p in $(DEBS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' \
		|| printf '%s ' $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "tfgb: missing Debian packages; as root run:"; \
		echo "  apt-get update && apt-get install -y --no-install-recommends $$missing"; \
		exit 1; fi; \
	echo "installing: $$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing

# Builds, then runs the default job of conf/tfgb.ini on this machine.
run: deps
	$(MAKE) tfgb
	./tfgb latency -c conf/tfgb.ini

# Builds and runs every test: Check unit tests, then the shell tests.
check: deps
	$(MAKE) tfgb tests/check_tfgb
	CK_DEFAULT_TIMEOUT=60 ./tests/check_tfgb
	sh tests/run.sh

install: tfgb
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANPREFIX)/man1 \
		$(DESTDIR)$(MANPREFIX)/man5 $(DESTDIR)$(DATADIR)
	cp -f tfgb $(DESTDIR)$(BINDIR)/tfgb
	chmod 755 $(DESTDIR)$(BINDIR)/tfgb
	for m in $(MAN1); do sed 's/@VERSION@/$(VERSION)/g' $$m > $(DESTDIR)$(MANPREFIX)/man1/$${m#man/}; done
	for m in $(MAN5); do sed 's/@VERSION@/$(VERSION)/g' $$m > $(DESTDIR)$(MANPREFIX)/man5/$${m#man/}; done
	cp -f conf/tfgb.ini $(DESTDIR)$(DATADIR)/tfgb.ini
	chmod 644 $(DESTDIR)$(DATADIR)/tfgb.ini
	mkdir -p $(DESTDIR)$(DATADIR)/examples
	cp -f examples/*.ini $(DESTDIR)$(DATADIR)/examples/
	chmod 644 $(DESTDIR)$(DATADIR)/examples/*.ini

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tfgb $(DESTDIR)$(DATADIR)/tfgb.ini
	rm -rf $(DESTDIR)$(DATADIR)/examples
	for m in $(MAN1); do rm -f $(DESTDIR)$(MANPREFIX)/man1/$${m#man/}; done
	for m in $(MAN5); do rm -f $(DESTDIR)$(MANPREFIX)/man5/$${m#man/}; done
	-rmdir $(DESTDIR)$(DATADIR)

dist: clean
	mkdir -p tfgb-$(VERSION)
	cp -R Makefile config.mk README COPYING src conf tests man examples proto bench \
		tfgb-$(VERSION)
	tar -cf - tfgb-$(VERSION) | gzip -c > tfgb-$(VERSION).tar.gz
	rm -rf tfgb-$(VERSION)

clean:
	rm -f tfgb libtfgb.a src/*.o tests/check_tfgb tfgb-$(VERSION).tar.gz
	rm -rf tests/out

.PHONY: all deps run check install uninstall dist clean
