#!/usr/bin/env bash
# Installs rsuring into a prefix as a drop-in liburing:
#   PREFIX/lib/librsuring.so.<ver>  + liburing.so.2, liburing.so, librsuring.so links
#     and liburing-ffi.so.2, liburing-ffi.so links (the same file also carries
#     liburing-ffi's symbols: the header's inline helpers as real functions)
#   PREFIX/include/liburing.h, liburing/*.h, liburing/io_uring/*.h, rsuring.h
#   PREFIX/lib/pkgconfig/liburing.pc, liburing-ffi.pc (and rsuring.pc)
#   PREFIX/bin/rsuring-stat (live view of a process's rings)
# Usage: scripts/install.sh [PREFIX]   (default /usr/local; builds if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/usr/local}
libdir=${LIBDIR:-$prefix/lib}
incdir=$prefix/include
bindir=${BINDIR:-$prefix/bin}

[ -f target/release/librsuring.so ] && [ -f target/release/rsuring-stat ] || cargo build --release
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
api_minor=$(sed -n 's/^#define IO_URING_VERSION_MINOR[[:space:]]*\([0-9]*\).*/\1/p' include/liburing/io_uring_version.h)

install -d "$libdir/pkgconfig" "$incdir/liburing/io_uring" "$bindir"
install -m 0755 target/release/rsuring-stat "$bindir/rsuring-stat"
install -m 0755 target/release/librsuring.so "$libdir/librsuring.so.$version"
ln -sf "librsuring.so.$version" "$libdir/liburing.so.2"
ln -sf "liburing.so.2" "$libdir/liburing.so"
ln -sf "librsuring.so.$version" "$libdir/librsuring.so"
ln -sf "librsuring.so.$version" "$libdir/liburing-ffi.so.2"
ln -sf "liburing-ffi.so.2" "$libdir/liburing-ffi.so"
install -m 0644 target/release/librsuring.a "$libdir/librsuring.a"
install -m 0644 include/liburing.h "$incdir/liburing.h"
[ -f include/rsuring.h ] && install -m 0644 include/rsuring.h "$incdir/rsuring.h"
install -m 0644 include/liburing/*.h "$incdir/liburing/"
install -m 0644 include/liburing/io_uring/*.h "$incdir/liburing/io_uring/"

for name in liburing liburing-ffi rsuring; do
    lib=uring
    [ "$name" = liburing-ffi ] && lib=uring-ffi
    cat > "$libdir/pkgconfig/$name.pc" <<PC
prefix=$prefix
libdir=$libdir
includedir=$incdir

Name: $name
Description: rsuring, a liburing-compatible io_uring library (liburing 2.$api_minor API)
Version: 2.$api_minor
Libs: -L\${libdir} -l$lib
Cflags: -I\${includedir}
PC
done
echo "installed rsuring $version into $prefix"
