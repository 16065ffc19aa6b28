#!/usr/bin/env bash
# Installs what the test command (scripts/test.sh, which runs this first)
# needs on Debian, so that it works on a fresh machine by itself. As root it
# installs what is missing: the packages below, a deb-src entry (for
# `apt-get source liburing` / `fio`) and rustup's rustfmt and clippy.
# Otherwise it says what is missing and leaves the rest to the tests. When
# everything is there it changes nothing and touches no network.
set -euo pipefail

# liburing-dev, liburing2: the reference header and library (layout check,
#   Debian-built binaries, compat suite, bad-input comparison)
# dpkg-dev: apt-get source, dpkg-architecture, dpkg-shlibdeps (the .deb)
# gcc g++ make libc6-dev pkg-config binutils: C tests, fio and liburing's
#   suite from source, the install check (libc6-dev has libc.a for -static)
# valgrind, clang, libclang-rt-14-dev (libFuzzer): reliability tests
# qemu-utils, plocate: real Debian programs on rsuring; fio: fio's binary
# mandoc, man-db: the manual pages check
# ca-certificates xz-utils procps util-linux: downloads, archives, ps,
#   losetup
packages=(
	liburing-dev liburing2 dpkg-dev pkg-config gcc g++ make libc6-dev binutils
	valgrind clang libclang-rt-14-dev qemu-utils plocate fio mandoc man-db
	ca-certificates xz-utils procps util-linux
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
done
has_deb_src() {
	grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ || grep -qs '^deb-src' /etc/apt/sources.list
}
rust_missing=()
cargo fmt --version >/dev/null 2>&1 || rust_missing+=(rustfmt)
cargo clippy --version >/dev/null 2>&1 || rust_missing+=(clippy)

if [ "$(id -u)" != 0 ]; then
	[ ${#missing[@]} -eq 0 ] || echo "setup: not root; missing packages: ${missing[*]}" >&2
	has_deb_src || echo "setup: not root; no deb-src entry (apt-get source will fail)" >&2
	[ ${#rust_missing[@]} -eq 0 ] || echo "setup: missing rustup components: ${rust_missing[*]}" >&2
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
update=
if ! has_deb_src; then
	echo "setup: adding deb-src entries (/etc/apt/sources.list.d/debian-src.sources)"
	sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
		>/etc/apt/sources.list.d/debian-src.sources
	update=1
fi
# A deb-src entry is of no use until its index has been fetched.
ls /var/lib/apt/lists/*_Sources* >/dev/null 2>&1 || update=1
[ ${#missing[@]} -eq 0 ] || update=1
if [ -n "$update" ]; then
	apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#rust_missing[@]} -gt 0 ]; then
	echo "setup: rustup component add ${rust_missing[*]}"
	rustup component add "${rust_missing[@]}"
fi
