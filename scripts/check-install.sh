#!/usr/bin/env bash
# Installs into a temporary prefix, builds the demo through pkg-config and
# checks that it runs on rsuring (not on the system's liburing).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
bash scripts/install.sh "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o "$prefix/demo" examples/demo.c $(pkg-config --cflags --libs liburing) -Wl,-rpath,"$prefix/lib"
resolved=$(ldd "$prefix/demo" | awk '/liburing.so.2/ {print $3}')
if [ "$(readlink -f "$resolved")" != "$(readlink -f "$prefix/lib/liburing.so.2")" ]; then
    echo "FAIL: demo resolved liburing.so.2 to $resolved, not the installed rsuring" >&2
    exit 1
fi
"$prefix/demo" >/dev/null
echo "install check: ok (pkg-config build, liburing.so.2 -> rsuring, demo ran)"
