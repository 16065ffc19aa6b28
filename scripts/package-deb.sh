#!/usr/bin/env bash
# Builds a Debian package of rsuring that installs beside Debian's liburing:
#
#   scripts/package-deb.sh [OUTDIR]        (or: make deb)
#
# Everything lives in rsuring's own directories, so no file is shared with
# liburing2 or liburing-dev:
#   /usr/lib/<triplet>/rsuring/     the libraries (liburing.so.2 -> ...),
#                                   pkgconfig/, fio/rsuring-engine.so
#   /usr/include/rsuring/           liburing.h, rsuring.h, liburing/
#   /usr/bin/rsuring-run            per program (LD_LIBRARY_PATH)
#   /usr/sbin/rsuring-ldconfig      machine-wide on/off (ld.so.conf.d)
#   /usr/share/man/man1, 3, 7, 8    rsuring's manual pages
#   /usr/share/doc/rsuring/examples/rsuring.conf
#                                   a systemd drop-in example (applied
#                                   to no service unless copied)
# Nothing changes which liburing a program gets until the user asks for it;
# removing the package turns the machine-wide switch off first.
#
# Writes OUTDIR/rsuring_<version>_<arch>.deb (default target/deb) and prints
# its path. Needs dpkg-dev (dpkg-architecture, dpkg-shlibdeps) and cargo.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/target/deb}
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
version=$(make -s -C "$root" print-version)
libdir=/usr/lib/$multiarch/rsuring

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/pkg

make -s -C "$root" >&2    # builds if stale; install itself builds nothing
make -s -C "$root" install DESTDIR="$pkg" prefix=/usr libdir="$libdir" \
	includedir=/usr/include/rsuring mandir=/usr/share/man >&2

# Debian's conventions: compressed manual pages, a copyright file.
find "$pkg/usr/share/man" -type f -exec gzip -9n {} +
install -d "$pkg/usr/share/doc/rsuring"
{
	echo "rsuring $version"
	echo
	echo "License: MIT"
	echo "Built from $(git -C "$root" describe --always --dirty 2>/dev/null || echo 'a source tree')"
} >"$pkg/usr/share/doc/rsuring/copyright"

# Run-time dependencies, as Debian computes them (a scratch debian/control
# is all dpkg-shlibdeps needs to run outside a source package).
mkdir -p "$stage/src/debian"
printf 'Source: rsuring\n\nPackage: rsuring\nArchitecture: any\n' >"$stage/src/debian/control"
depends=$(cd "$stage/src" && dpkg-shlibdeps -O "$pkg$libdir/librsuring.so.$version" 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

install -d "$pkg/DEBIAN"
cat >"$pkg/DEBIAN/control" <<CONTROL
Package: rsuring
Version: $version
Architecture: $arch
Maintainer: ${DEBFULLNAME:-rsuring developers} <${DEBEMAIL:-rsuring@localhost}>
Installed-Size: $(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
Depends: $depends
Suggests: liburing-dev, fio
Section: libs
Priority: optional
Description: liburing-compatible io_uring library with shared SQ polling
 rsuring takes the place of liburing (liburing.so.2, liburing 2.15's API
 and ABI) and adds per-CPU shared SQPOLL threads, batched completions and
 per-ring statistics. This package installs it beside Debian's liburing,
 in its own directory:
   $libdir
 Programs keep using liburing until they are started with rsuring-run
 (one program) or rsuring-ldconfig on (the whole machine).
CONTROL

# Turn the machine-wide switch off (a no-op when it is off) before the
# library goes away; an upgrade keeps it.
cat >"$pkg/DEBIAN/prerm" <<'PRERM'
#!/bin/sh
set -e
if [ "$1" = remove ]; then
	rsuring-ldconfig off >/dev/null
fi
PRERM
chmod 0755 "$pkg/DEBIAN/prerm"
(cd "$pkg" && find usr -type f -exec md5sum {} + | sort -k2) >"$pkg/DEBIAN/md5sums"

mkdir -p "$out"
deb=$out/rsuring_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >&2
echo "$deb"
