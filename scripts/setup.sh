#!/usr/bin/env bash
# Installs what the test command (scripts/test.sh, which runs this first)
# needs on Debian, so that it works on a fresh machine by itself. As root it
# installs what is missing: the packages below, a deb-src entry (for
# `apt-get source liburing` / `fio`) and rustup's rustfmt and clippy.
# Otherwise it says what is missing and leaves the rest to the tests (which
# skip, or fail under RSURING_STRICT=1; then this fails at once). When
# everything is there it changes nothing and touches no network. No test
# installs anything itself: every package a test uses is listed here.
#
#   scripts/setup.sh [--fio-source]
#
# --fio-source: also fetch fio's Debian source (`apt-get source fio`, 3.33
#   on bookworm) into target/fio-src/, the tree fio_engine/build.sh builds
#   fio and the engine from by default (a no-op when it is there already).
set -euo pipefail

fio_source=
for arg in "$@"; do
	case $arg in
	--fio-source) fio_source=1 ;;
	*) echo "setup: unknown argument $arg (only --fio-source)" >&2; exit 2 ;;
	esac
done
# has_deb_src, ensure_deb_src, apt_update, fetch_fio_source (FIO_TREE).
# shellcheck source=lib-common.sh
. "$(dirname "$0")/lib-common.sh"

# liburing-dev, liburing2: the reference header and library (layout check,
#   Debian-built binaries, compat suite, bad-input comparison)
# dpkg-dev: apt-get source, dpkg-architecture, dpkg-shlibdeps (the .deb)
# gcc g++ make libc6-dev pkg-config binutils: C tests, fio and liburing's
#   suite from source, the install check (libc6-dev has libc.a for -static)
# valgrind, clang, libclang-rt-14-dev (libFuzzer): reliability tests
# qemu-utils (qemu-img, qemu-io), plocate: real Debian programs on rsuring
#   (scripts/real_programs.sh) and the Debian package check
# fio: fio's binary loading the engine (fio_engine/test.sh)
# strace: counting io_uring_enter calls (tests/transparent.rs)
# mandoc, man-db: the manual pages check (man also for install and .deb)
# util-linux: setpriv and taskset (tests/sqpoll.rs, tests/transparent.rs),
#   losetup (fio engine, liburing's suite)
# ca-certificates xz-utils procps: downloads, archives, ps
# python3: docs/performance.md's generator (tests/docs.rs), the fio engine's checks
# systemd: systemd-analyze verify of the shipped drop-in (scripts/check-install.sh)
# prometheus (promtool), prometheus-node-exporter: rsuring-stat's metrics
#   checked by Prometheus's parsers and served by node_exporter (tests/stats.rs)
packages=(
	liburing-dev liburing2 dpkg-dev pkg-config gcc g++ make libc6-dev binutils
	valgrind clang libclang-rt-14-dev qemu-utils plocate fio strace mandoc man-db
	ca-certificates xz-utils procps util-linux python3 systemd
	prometheus prometheus-node-exporter
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
done
rust_missing=()
cargo fmt --version >/dev/null 2>&1 || rust_missing+=(rustfmt)
cargo clippy --version >/dev/null 2>&1 || rust_missing+=(clippy)

if [ "$(id -u)" != 0 ]; then
	incomplete=
	[ ${#missing[@]} -eq 0 ] || { echo "setup: not root; missing packages: ${missing[*]}" >&2; incomplete=1; }
	has_deb_src || { echo "setup: not root; no deb-src entry (apt-get source will fail)" >&2; incomplete=1; }
	[ ${#rust_missing[@]} -eq 0 ] || { echo "setup: missing rustup components: ${rust_missing[*]}" >&2; incomplete=1; }
	if [ -n "$fio_source" ] && [ ! -x "$FIO_TREE/configure" ]; then
		if has_deb_src; then
			fetch_fio_source || incomplete=1
		else
			echo "setup: not root; no deb-src entry: cannot fetch fio's source" >&2
			incomplete=1
		fi
	fi
	if [ -n "$incomplete" ] && [ "${RSURING_STRICT:-}" = 1 ]; then
		echo "setup: FAIL: under RSURING_STRICT=1 the tests would fail for what is missing" >&2
		exit 1
	fi
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
ensure_deb_src
# A deb-src entry is of no use until its index has been fetched.
ls /var/lib/apt/lists/*_Sources* >/dev/null 2>&1 || apt_update
if [ ${#missing[@]} -gt 0 ]; then
	apt_update
	echo "setup: installing ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#rust_missing[@]} -gt 0 ]; then
	echo "setup: rustup component add ${rust_missing[*]}"
	rustup component add "${rust_missing[@]}"
fi
if [ -n "$fio_source" ]; then
	fetch_fio_source
fi
