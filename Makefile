# rsuring: build, install and uninstall it the way liburing's Makefile does.
#
#   make                      release build of the library (cargo), if stale
#   make install              install what `make` built under $(DESTDIR)$(prefix);
#                             builds nothing (so `sudo make install` never runs
#                             cargo or the fio build as root): "run make first"
#                             when the build is missing or older than its sources
#   make uninstall            remove exactly what `make install` installs
#   make deb                  Debian package in target/deb/ (scripts/package-deb.sh)
#   make fio-engine           the fio engine (fio_engine/build.sh): for Debian's fio
#                             3.33 by default (its source: scripts/setup.sh
#                             --fio-source), FIO_SRC=DIR for another fio's tree
#
# Variables (on the command line, as with liburing): DESTDIR, prefix
# (/usr/local), exec_prefix, bindir, sbindir, libdir, includedir, datadir,
# mandir, docdir, pkgconfigdir, enginedir; CARGO, STRIP, INSTALL; FIO (the fio
# whose engine to install; fio on PATH by default), FIO_ENGINE (the engine
# file to install; by default the one fio_engine/build.sh built for FIO);
# FORCE=1 installs even where the files belong to a dpkg package (below).
# libdir is $(prefix)/lib, or $(prefix)/lib/<multiarch triplet> when
# prefix is /usr on a multiarch system (Debian), as Debian's liburing has it.

prefix = /usr/local
exec_prefix = $(prefix)
bindir = $(exec_prefix)/bin
sbindir = $(exec_prefix)/sbin
includedir = $(prefix)/include
datadir = $(prefix)/share
mandir = $(datadir)/man
# The example files (the systemd drop-in): installed, never applied.
docdir = $(datadir)/doc/rsuring

MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || \
                     $(CC) -print-multiarch 2>/dev/null)
ifeq ($(and $(filter /usr,$(exec_prefix)),$(MULTIARCH)),)
libdir = $(exec_prefix)/lib
else
libdir = $(exec_prefix)/lib/$(MULTIARCH)
endif
pkgconfigdir = $(libdir)/pkgconfig
# fio ioengines of this library (fio --ioengine=external:$(enginedir)/...).
enginedir = $(libdir)/fio
# systemd units (rsuring-textfile.timer: rsuring-stat's metrics for
# node_exporter's textfile collector); installed, not enabled.
systemdunitdir = $(prefix)/lib/systemd/system

CARGO ?= cargo
STRIP ?= strip
INSTALL ?= install

# A relative directory would be taken relative to wherever the command runs
# and end up, wrong, in the .pc files and the scripts.
DIRS := $(prefix) $(exec_prefix) $(bindir) $(sbindir) $(libdir) $(includedir) \
        $(mandir) $(docdir) $(pkgconfigdir) $(enginedir) $(systemdunitdir)
ifneq ($(filter-out /%,$(DIRS)),)
$(error install directories must be absolute paths: $(sort $(filter-out /%,$(DIRS))))
endif

# One source of truth: the version in Cargo.toml ([package] comes first).
VERSION := $(shell sed -n 's/^version = "\([^"]*\)"/\1/p' Cargo.toml | head -n1)
# The liburing API level the headers implement, which liburing.pc reports.
API_VERSION := $(shell sed -n \
    's/^\#define IO_URING_VERSION_\(MAJOR\|MINOR\) *\([0-9]*\).*/\2/p' \
    include/liburing/io_uring_version.h | paste -sd.)

TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
LIB_SO := $(TARGET_DIR)/release/librsuring.so
LIB_A := $(TARGET_DIR)/release/librsuring.a
STAT_BIN := $(TARGET_DIR)/release/rsuring-stat
SONAME := liburing.so.2
REAL_SO := librsuring.so.$(VERSION)

# What Rust's staticlib needs from the system when linked statically:
# `cargo rustc --release --lib --crate-type staticlib -- --print
# native-static-libs` prints -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc on
# glibc. -lgcc_s is left out: there is no libgcc_s.a, so it would break
# every -static link, and the compiler driver already adds the unwinder
# (libgcc_eh for -static, libgcc_s as needed otherwise).
LIBS_PRIVATE := -lutil -lrt -lpthread -lm -ldl -lc

# The fio engine: of the ones fio_engine/build.sh has built (fio_engine/build/
# for Debian's 3.33, fio_engine/build/<fio version>/ for FIO_SRC=DIR builds;
# each records its fio in fio-version), the one for the fio on this machine
# (FIO, default: fio on PATH). An engine loads only into the fio it was
# built for. FIO_ENGINE=PATH installs that file instead.
FIO ?= $(shell command -v fio 2>/dev/null)
FIO_HERE_VERSION := $(if $(FIO),$(shell $(FIO) --version 2>/dev/null))
FIO_ENGINE_BUILT := $(foreach f,$(wildcard fio_engine/build/fio-version \
                                            fio_engine/build/*/fio-version),\
                      $(if $(wildcard $(dir $(f))rsuring-engine.so),$(f)))
FIO_ENGINE_BUILT_FOR := $(foreach f,$(FIO_ENGINE_BUILT),$(shell cat $(f)))
FIO_ENGINE ?= $(firstword $(foreach f,$(FIO_ENGINE_BUILT),\
                $(if $(and $(FIO_HERE_VERSION),$(filter $(FIO_HERE_VERSION),$(shell cat $(f)))),\
                     $(dir $(f))rsuring-engine.so)))

TOP_HEADERS := $(wildcard include/*.h)
URING_HEADERS := $(wildcard include/liburing/*.h)
UAPI_HEADERS := $(wildcard include/liburing/io_uring/*.h)
HEADERS := $(TOP_HEADERS) $(URING_HEADERS) $(UAPI_HEADERS)
MAN_PAGES := $(wildcard docs/man/man1/*.1 docs/man/man3/*.3 docs/man/man7/*.7 docs/man/man8/*.8)
MAN_SECTIONS := 1 3 7 8
# What the library is built from: when any of it is newer than the library,
# cargo runs again, so `make install` never installs an old build; when
# nothing is, `sudo make install` after `make` needs no cargo (root often
# has none).
LIB_SOURCES := Cargo.toml Cargo.lock build.rs scripts/linker.sh \
               $(wildcard .cargo/config.toml) $(shell find src include -type f)

.PHONY: all check-version check-built check-dpkg install uninstall deb print-version fio-engine
all: $(LIB_SO)

$(LIB_SO) $(LIB_A) $(STAT_BIN) &: $(LIB_SOURCES) | check-version
	$(CARGO) build --release --lib --bin rsuring-stat
	touch $(LIB_SO) $(LIB_A) $(STAT_BIN)

# include/rsuring.h carries the version for C code; it must say what
# Cargo.toml says, as a string and as numbers.
check-version:
	@h=include/rsuring.h; \
	num() { sed -n "s/^#define RSURING_VERSION_$$1[[:space:]]*\([0-9]*\)$$/\1/p" $$h; }; \
	str=$$(sed -n 's/^#define RSURING_VERSION[[:space:]]*"\(.*\)"$$/\1/p' $$h); \
	nums=$$(num MAJOR).$$(num MINOR).$$(num PATCH); \
	if [ "$$str" != "$(VERSION)" ] || [ "$$nums" != "$(VERSION)" ]; then \
	    echo "$$h says version '$$str' ($$nums), Cargo.toml says '$(VERSION)':" \
	         "update the RSURING_VERSION macros" >&2; exit 1; \
	fi

print-version:
	@echo $(VERSION)

# The .pc files are relocatable: when pkgconfigdir lies under prefix,
# prefix is written relative to the .pc file's own directory
# (${pcfiledir}/../..), so a DESTDIR staging or a moved tree finds its own
# headers and libraries through PKG_CONFIG_PATH alone.
PC_PREFIX := $(if $(filter $(prefix)/%,$(pkgconfigdir)),$${pcfiledir}/$(shell realpath -m --relative-to=$(pkgconfigdir) $(prefix)),$(prefix))

# pc FILE NAME LIB VERSION DESCRIPTION: writes a pkg-config file from
# packaging/pkgconfig.pc.in. Directories under $(prefix) are written
# relative to ${prefix}, itself relative to the file (PC_PREFIX).
define pc
	sed -e 's|@prefix@|$(PC_PREFIX)|' \
	    -e 's|@libdir@|$(patsubst $(prefix)/%,$${prefix}/%,$(libdir))|' \
	    -e 's|@includedir@|$(patsubst $(prefix)/%,$${prefix}/%,$(includedir))|' \
	    -e 's|@name@|$(2)|' -e 's|@lib@|$(3)|' -e 's|@version@|$(4)|' \
	    -e 's|@description@|$(5)|' -e 's|@libs_private@|$(LIBS_PRIVATE)|' \
	    packaging/pkgconfig.pc.in > $(1)
endef

# install builds nothing: what it installs must be there and newer than
# what it is built from (the library, rsuring-stat; the fio engine when one
# is installed), else the user runs make (or fio_engine/build.sh) first,
# as themselves.
check-built:
	@for f in $(LIB_SO) $(LIB_A) $(STAT_BIN); do \
	    [ -f "$$f" ] || { echo "make install: $$f is missing: run make first" >&2; exit 1; }; \
	done; \
	newer=$$(find $(LIB_SOURCES) -newer $(LIB_SO) 2>/dev/null | head -n 3 | paste -sd' '); \
	[ -z "$$newer" ] || { echo "make install: $(LIB_SO) is older than $$newer: run make first" >&2; exit 1; }; \
	if [ -n "$(FIO_ENGINE)" ]; then \
	    newer=$$(find fio_engine -maxdepth 1 \( -name '*.c' -o -name '*.h' \) -newer $(FIO_ENGINE) | head -n 3 | paste -sd' '); \
	    [ -z "$$newer" ] || { echo "make install: $(FIO_ENGINE) is older than $$newer: run fio_engine/build.sh first" >&2; exit 1; }; \
	fi

# Installing over files that dpkg owns (Debian's liburing2 / liburing-dev,
# with prefix=/usr) would be undone by the next upgrade of those packages
# and would leave dpkg's database wrong: refused unless FORCE=1. Staged
# installs (DESTDIR) write no system file and are not checked.
DPKG_CHECKED := $(libdir)/$(SONAME) $(libdir)/liburing.so $(libdir)/liburing.a \
                $(libdir)/liburing-ffi.so.2 $(pkgconfigdir)/liburing.pc \
                $(includedir)/liburing.h $(includedir)/liburing/io_uring.h
check-dpkg:
	@if [ -z "$(DESTDIR)" ] && [ "$(FORCE)" != 1 ] && command -v dpkg-query >/dev/null 2>&1; then \
	    owned=$$(dpkg-query -S $(DPKG_CHECKED) 2>/dev/null | sed -n 's/^\([^:]*\):[^ ]* \(\/.*\)$$/  \2 (\1)/p' | sort -u); \
	    if [ -n "$$owned" ]; then \
	        echo "make install: these files belong to Debian packages:" >&2; \
	        echo "$$owned" >&2; \
	        echo "the next upgrade of those packages would undo the install. Use the Debian" >&2; \
	        echo "package (make deb; it installs beside them), or prefix=/usr/local (the default)," >&2; \
	        echo "or FORCE=1 to install over them anyway." >&2; \
	        exit 1; \
	    fi; \
	fi

install: check-version check-built check-dpkg
	$(INSTALL) -d $(DESTDIR)$(libdir) $(DESTDIR)$(pkgconfigdir) \
	    $(DESTDIR)$(includedir)/liburing/io_uring \
	    $(addprefix $(DESTDIR)$(mandir)/man,$(MAN_SECTIONS)) \
	    $(DESTDIR)$(bindir) $(DESTDIR)$(sbindir) $(DESTDIR)$(docdir)/examples \
	    $(DESTDIR)$(systemdunitdir)
	$(INSTALL) -m 0755 $(LIB_SO) $(DESTDIR)$(libdir)/$(REAL_SO)
	$(STRIP) --strip-unneeded $(DESTDIR)$(libdir)/$(REAL_SO)
	ln -sf $(REAL_SO) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/liburing.so
	ln -sf $(REAL_SO) $(DESTDIR)$(libdir)/liburing-ffi.so.2
	ln -sf liburing-ffi.so.2 $(DESTDIR)$(libdir)/liburing-ffi.so
	$(INSTALL) -m 0644 $(LIB_A) $(DESTDIR)$(libdir)/librsuring.a
	$(STRIP) --strip-debug --enable-deterministic-archives $(DESTDIR)$(libdir)/librsuring.a
	ln -sf librsuring.a $(DESTDIR)$(libdir)/liburing.a
	ln -sf librsuring.a $(DESTDIR)$(libdir)/liburing-ffi.a
	$(call pc,$(DESTDIR)$(pkgconfigdir)/liburing.pc,liburing,uring,$(API_VERSION),io_uring library (rsuring $(VERSION)$(,) liburing $(API_VERSION) API))
	$(call pc,$(DESTDIR)$(pkgconfigdir)/liburing-ffi.pc,liburing-ffi,uring-ffi,$(API_VERSION),io_uring library for non-C languages (rsuring $(VERSION)$(,) liburing $(API_VERSION) API))
	$(call pc,$(DESTDIR)$(pkgconfigdir)/rsuring.pc,rsuring,uring,$(VERSION),liburing-compatible io_uring library with per-CPU shared SQPOLL and batched completions)
	$(INSTALL) -m 0644 $(TOP_HEADERS) $(DESTDIR)$(includedir)/
	$(INSTALL) -m 0644 $(URING_HEADERS) $(DESTDIR)$(includedir)/liburing/
	$(INSTALL) -m 0644 $(UAPI_HEADERS) $(DESTDIR)$(includedir)/liburing/io_uring/
	$(foreach n,$(MAN_SECTIONS),$(INSTALL) -m 0644 $(filter %.$(n),$(MAN_PAGES)) $(DESTDIR)$(mandir)/man$(n)/$(nl))
	sed -e 's|@libdir@|$(libdir)|g' -e 's|@version@|$(VERSION)|g' packaging/rsuring-run.in > $(DESTDIR)$(bindir)/rsuring-run
	sed -e 's|@libdir@|$(libdir)|g' -e 's|@version@|$(VERSION)|g' packaging/rsuring-ldconfig.in > $(DESTDIR)$(sbindir)/rsuring-ldconfig
	sed -e 's|@libdir@|$(libdir)|g' -e 's|@docdir@|$(docdir)|g' packaging/systemd-dropin.conf.in > $(DESTDIR)$(docdir)/examples/rsuring.conf
	chmod 0644 $(DESTDIR)$(docdir)/examples/rsuring.conf
	chmod 0755 $(DESTDIR)$(bindir)/rsuring-run $(DESTDIR)$(sbindir)/rsuring-ldconfig
	$(INSTALL) -m 0755 $(STAT_BIN) $(DESTDIR)$(bindir)/rsuring-stat
	$(STRIP) $(DESTDIR)$(bindir)/rsuring-stat
	sed -e 's|@bindir@|$(bindir)|g' packaging/systemd/rsuring-textfile.service.in \
	    > $(DESTDIR)$(systemdunitdir)/rsuring-textfile.service
	$(INSTALL) -m 0644 packaging/systemd/rsuring-textfile.timer $(DESTDIR)$(systemdunitdir)/
	chmod 0644 $(DESTDIR)$(systemdunitdir)/rsuring-textfile.service
	@if [ -n "$(FIO_ENGINE)" ]; then \
	    echo "$(INSTALL) -D -m 0755 $(FIO_ENGINE) $(DESTDIR)$(enginedir)/rsuring-engine.so"; \
	    $(INSTALL) -D -m 0755 $(FIO_ENGINE) $(DESTDIR)$(enginedir)/rsuring-engine.so && \
	    $(STRIP) --strip-unneeded $(DESTDIR)$(enginedir)/rsuring-engine.so; \
	elif [ -z "$(FIO_HERE_VERSION)" ]; then \
	    echo "fio engine not installed: no fio found (fio on PATH, or FIO=/path/to/fio)"; \
	elif [ -n "$(strip $(FIO_ENGINE_BUILT_FOR))" ]; then \
	    echo "fio engine not installed: built for $(strip $(FIO_ENGINE_BUILT_FOR)) only, not for $(FIO) ($(FIO_HERE_VERSION));" \
	         "build it from that fio's source tree (make fio-engine FIO_SRC=/path/to/fio), then make install again"; \
	else \
	    echo "fio engine not installed: not built for $(FIO) ($(FIO_HERE_VERSION)); build it with make fio-engine" \
	         "(fio 3.33: Debian's source from scripts/setup.sh --fio-source; another fio: FIO_SRC=/path/to/its/source)," \
	         "then make install again"; \
	fi
	@echo "installed rsuring $(VERSION) ($(SONAME), liburing $(API_VERSION) API) into $(DESTDIR)$(prefix)"

# The same lists as install; directories only this project creates go too.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(libdir)/,$(REAL_SO) $(SONAME) liburing.so \
	    liburing-ffi.so.2 liburing-ffi.so librsuring.a liburing.a liburing-ffi.a)
	rm -f $(addprefix $(DESTDIR)$(pkgconfigdir)/,liburing.pc liburing-ffi.pc rsuring.pc)
	rm -f $(addprefix $(DESTDIR)$(includedir)/,$(patsubst include/%,%,$(HEADERS)))
	rm -f $(addprefix $(DESTDIR)$(mandir)/,$(patsubst docs/man/%,%,$(MAN_PAGES)))
	rm -f $(DESTDIR)$(bindir)/rsuring-run $(DESTDIR)$(bindir)/rsuring-stat \
	    $(DESTDIR)$(sbindir)/rsuring-ldconfig
	rm -f $(DESTDIR)$(enginedir)/rsuring-engine.so $(DESTDIR)$(docdir)/examples/rsuring.conf
	rm -f $(addprefix $(DESTDIR)$(systemdunitdir)/,rsuring-textfile.service rsuring-textfile.timer)
	rmdir $(DESTDIR)$(includedir)/liburing/io_uring $(DESTDIR)$(includedir)/liburing \
	    $(DESTDIR)$(enginedir) $(DESTDIR)$(docdir)/examples $(DESTDIR)$(docdir) 2>/dev/null || true

deb:
	bash scripts/package-deb.sh

# The fio engine for Debian's fio 3.33, or FIO_SRC=DIR's fio (build.sh says
# where to get a source tree when there is none); run as yourself, before
# make install, which installs the engine built for the fio on PATH.
fio-engine: $(LIB_SO)
	RSURING_SKIP_CARGO=1 bash fio_engine/build.sh

# $(,) is a literal comma inside $(call ...) arguments.
, := ,
# $(nl) is a newline: one recipe line per $(foreach ...) item.
define nl


endef
