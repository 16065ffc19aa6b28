#!/usr/bin/env bash
# The one test command (docs/testing.md): style, lints, the library, its Rust
# and C tests, the layout check, the fio engine, the install, manual pages
# and Debian package checks, and liburing's own test suite run against
# rsuring. Runs scripts/setup.sh first, which (as root) installs what is
# missing, so it works on a fresh machine. Exits non-zero if anything fails.
# A test that cannot run here reports "SKIPPED ...: why" and passes, unless
# RSURING_STRICT=1 (CI, .ci/run): then every skip is a failure.
#
# Each step is a stage with a short name; the seconds of each stage and a
# table of them at the end are printed. Stages that neither time anything
# nor pin to a CPU run beside others ("&" in the table): their output goes
# to target/test-logs/NAME.log and is printed when they have ended; a
# failed stage fails the run with its name and its log. The first failure
# stops the run (after the stages already running have ended).
set -euo pipefail
cd "$(dirname "$0")/.."

# The tools' RSURING_* variables: the library does not warn about them.
. scripts/lib-tooling.sh
# stage, stage_beside, join_stages, summary.
. scripts/lib-stages.sh

if [ "${RSURING_STRICT:-}" = 1 ]; then
	echo "RSURING_STRICT=1: every skipped test is a failure"
else
	echo "skipped tests are reported, not failed (RSURING_STRICT=1 makes them fail)"
fi

EMULATE_61=(target/oldkernel/supervise --kernel 6.1 --)
build_supervisor() {
	mkdir -p target/oldkernel
	cc -Wall -Wextra -Werror -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -ffunction-sections -fdata-sections -Wl,--gc-sections \
		-o target/oldkernel/supervise c_tests/oldkernel/supervise.c c_tests/rsuring_test.c
}
oldkernel_cargo_tests() {
	"${EMULATE_61[@]}" cargo test --release --no-fail-fast --test dropin --test differential --test sqpoll --test hostile -- --test-threads=1
	# Left out: the tests that run under strace (a traced process cannot be
	# traced twice), one that needs IORING_FEAT_MIN_TIMEOUT (6.12), and two
	# whose rings live in io_uring_queue_init_mem memory (IORING_SETUP_NO_MMAP,
	# 6.5; the struct-only case of the same program still runs).
	"${EMULATE_61[@]}" cargo test --release --test transparent -- --test-threads=1 \
		--skip at_most_one_wakeup_enter_per_submit --skip statistics_count_the_system_calls_that_were_made \
		--skip every_submit_variant_returns_after_consumption \
		--skip shared_memory_rings_of_a_multi_process_server_stay_plain_and_work \
		--skip rings_in_any_shared_memory_stay_plain_under_rsuring_sqpoll
}
oldkernel_compat() {
	# 30 s per test: the two tests that hang with Debian's liburing too stop sooner.
	RSURING_COMPAT_DIR=target/compat-6.1 RSURING_COMPAT_TIMEOUT=30 \
		"${EMULATE_61[@]}" bash scripts/compat-suite.sh --lib target/release/librsuring.so --headers debian --baseline
}

stage setup "packages, deb-src entry, rustup components, fio's source (scripts/setup.sh --fio-source)" \
	bash scripts/setup.sh --fio-source

stage fmt "cargo fmt --check" cargo fmt --check

stage build "build librsuring.so (release)" cargo build --release

# fio and the engine build while clippy checks (clippy compiles one crate at
# a time at the end, leaving a core to fio's make); fio-engine reuses them.
stage_beside fio-build "fio 3.33 from Debian's source and the engine (fio_engine/build.sh)" \
	env RSURING_SKIP_CARGO=1 bash fio_engine/build.sh

stage clippy "cargo clippy (all targets, warnings are errors)" \
	cargo clippy --all-targets --release -- -D warnings

join_stages fio-build || failed "$FAILED_STAGE"

stage cargo-test "cargo test (unit, ABI, header and kernel ABI freshness, C tests, shared SQPOLL, RSURING_SQPOLL=1, reliability)" \
	cargo test --release --no-fail-fast -- --test-threads=1

stage c-tests-percpu "C tests again with every SQPOLL ring on a shared per-CPU poller (RSURING_SQPOLL_PERCPU=1)" \
	env RSURING_SQPOLL_PERCPU=1 cargo test --release --test c_tests

stage c-tests-stats "C tests again with statistics on (RSURING_STATS=1)" \
	env RSURING_STATS=1 cargo test --release --test c_tests

# The fio engine's tests count system calls and SQ threads of their own
# fio processes, not time: they run beside liburing's suite (which, like
# them, leaves CPU 1 free of pinned work).
stage_beside fio-engine "fio engine: verify runs (fio 3.33 built here, and Debian's fio), option errors" \
	bash fio_engine/test.sh

stage compat "liburing 2.3 test suite linked to rsuring (Debian header, then ours)" \
	bash scripts/compat-suite.sh --lib target/release/librsuring.so --headers both

join_stages fio-engine || failed "$FAILED_STAGE"

# The file checks time nothing: beside the suite's PERCPU run (the struct
# layout check is a cargo test, tests/layout.rs). The install
# and package checks take turns (both install the library somewhere).
packaging_checks() {
	bash scripts/check-install.sh
	bash scripts/check-deb.sh
}
stage_beside man "manual pages: mandoc -T lint, man -l, one page per extension and variable" \
	bash scripts/check-man.sh
stage_beside packaging "make install DESTDIR=... prefix=/usr (pkg-config builds, uninstall), then the Debian package (build, dpkg -i, qemu-img through rsuring-run, dpkg -r)" \
	packaging_checks

stage compat-percpu "liburing 2.3 test suite with every SQPOLL ring on a shared per-CPU poller (RSURING_SQPOLL_PERCPU=1)" \
	env RSURING_SQPOLL_PERCPU=1 RSURING_COMPAT_DIR=target/compat-percpu \
	bash scripts/compat-suite.sh --lib target/release/librsuring.so --headers debian

join_stages || failed "$FAILED_STAGE"

# Alone: the tests on CPU 0, their pollers on CPU 1, which must be free.
stage compat-transparent "liburing 2.3 test suite under RSURING_SQPOLL=1, unprivileged on CPU 0 with pollers on CPU 1, against Debian's liburing run the same way" \
	bash scripts/compat-suite.sh --lib target/release/librsuring.so --headers debian --transparent

stage oldkernel-build "Linux 6.1's io_uring emulated (c_tests/oldkernel/supervise.c, docs/compatibility.md): the supervisor" \
	build_supervisor
stage oldkernel-tests "Linux 6.1 emulated: drop-in, differential, shared-SQPOLL and transparent tests" \
	oldkernel_cargo_tests
stage oldkernel-compat "Linux 6.1 emulated: liburing 2.3's suite judged against Debian's liburing under the same emulation" \
	oldkernel_compat

summary
