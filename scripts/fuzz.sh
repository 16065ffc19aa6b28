#!/usr/bin/env bash
# Builds and runs a libFuzzer harness against rsuring: fuzz/ring_ops.c
# (the C ABI, the default) or fuzz/page.rs (--target page: the statistics
# page parser of rsuring-stat, which reads files other users can write).
#
#   scripts/fuzz.sh [--target ring_ops|page] [--build-only] [LIBFUZZER_ARGS...]
#   scripts/fuzz.sh --minimize     # fold target/fuzz/corpus into fuzz/corpus
#
# Examples:
#   scripts/fuzz.sh -max_total_time=600                  # by hand: 10 minutes
#   scripts/fuzz.sh -seed=1 -runs=3000 -max_total_time=45  # what the tests run
#   scripts/fuzz.sh --target page -seed=1 -max_total_time=20  # tests/stats.rs
#
# What it does:
#  1. builds librsuring.so with SanitizerCoverage instrumentation (stable
#     rustc flags: -Cpasses=sancov-module + inline 8-bit counters, PC table,
#     compare tracing) into target/fuzz-lib/, so libFuzzer's coverage
#     feedback covers the library's Rust code, not only the harness;
#  2. compiles the harness with clang -fsanitize=fuzzer,address and links it
#     to that library (RPATH to a liburing.so.2 symlink, checked with ldd);
#  3. runs it on a scratch corpus (target/fuzz/corpus, new inputs land there)
#     seeded from fuzz/corpus/ (committed seeds), crashes in target/fuzz/.
#     The committed seeds are only the inputs that add edge coverage: the
#     rest is what a run regenerates. --minimize rewrites fuzz/corpus/ as
#     the smallest set of the committed seeds and the scratch corpus that
#     reaches the same edges (libFuzzer -merge=1 without counters or
#     compare features); commit its result.
# For --target page, step 1 adds overflow checks (target/fuzz-page-lib/),
# step 2 compiles fuzz/page.rs as a static library against that rlib and
# links it with libFuzzer; its corpus is target/fuzz/page-corpus, seeded
# from fuzz/page-corpus/.
#
# Why clang + libFuzzer and not cargo-fuzz: the harness drives the C ABI the
# way C programs do (inline helpers from liburing.h + exported functions),
# which is what must not break; cargo-fuzz would fuzz Rust calls and needs a
# nightly toolchain for -Zsanitizer, while these flags work on stable.
# Needs: clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

build_only=0
minimize=0
target=ring_ops
if [ "${1:-}" = "--minimize" ]; then
    minimize=1
    shift
fi
if [ "${1:-}" = "--target" ]; then
    target=${2:?--target needs ring_ops or page}
    shift 2
fi
case $target in
ring_ops | page) ;;
*) echo "fuzz: unknown target '$target' (ring_ops or page)" >&2; exit 2 ;;
esac
if [ "${1:-}" = "--build-only" ]; then
    build_only=1
    shift
fi

clang=${CLANG:-$(command -v clang || true)}
if [ -z "$clang" ]; then
    echo "fuzz: skipped: clang not found (apt-get install clang libclang-rt-14-dev)" >&2
    exit 77
fi
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
    > /tmp/rsuring-fuzz-probe.$$.c
if ! "$clang" -fsanitize=fuzzer /tmp/rsuring-fuzz-probe.$$.c -o /tmp/rsuring-fuzz-probe.$$ 2>/dev/null; then
    rm -f /tmp/rsuring-fuzz-probe.$$*
    echo "fuzz: skipped: $clang has no libFuzzer runtime (Debian: apt-get install libclang-rt-14-dev)" >&2
    exit 77
fi
rm -f /tmp/rsuring-fuzz-probe.$$*

triple=$(rustc -vV | sed -n 's/^host: //p')
out=$repo/target/fuzz
mkdir -p "$out/lib" "$out/corpus"

# 1. The instrumented library. --target keeps RUSTFLAGS off build scripts.
unset CARGO_ENCODED_RUSTFLAGS
sancov="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=3 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares"
if [ "$target" = ring_ops ]; then
    RUSTFLAGS="$sancov" \
        cargo build --quiet --release --lib --target "$triple" --target-dir "$repo/target/fuzz-lib"
    lib=$repo/target/fuzz-lib/$triple/release/librsuring.so
    ln -sfn "$lib" "$out/lib/liburing.so.2"
fi

if [ "$target" = page ]; then
    # 1'. The page parser runs in rsuring-stat, whose debug builds check
    # arithmetic overflow: so does this build of the library (its own
    # target directory, to leave ring_ops' build alone; only the rlib).
    # (Without LTO: an rlib built for LTO holds bitcode the final link,
    # done by clang here, would not read.)
    RUSTFLAGS="$sancov -Coverflow-checks=on" CARGO_PROFILE_RELEASE_LTO=false \
        cargo rustc --quiet --release --lib --crate-type rlib --target "$triple" \
        --target-dir "$repo/target/fuzz-page-lib"
    libdir=$repo/target/fuzz-page-lib/$triple/release
    # 2'. The page parser's harness: Rust, on that instrumented rlib.
    # shellcheck disable=SC2086 # $sancov is a list of flags
    rustc --edition 2021 -O -Coverflow-checks=on --crate-type staticlib --crate-name page_fuzz \
        --target "$triple" $sancov --extern rsuring="$libdir/librsuring.rlib" \
        -L dependency="$libdir/deps" fuzz/page.rs -o "$out/libpage_fuzz.a"
    "$clang" -fsanitize=fuzzer "$out/libpage_fuzz.a" -lpthread -ldl -lm -o "$out/page.tmp"
    mv "$out/page.tmp" "$out/page"
    [ "$build_only" = 1 ] && { echo "$out/page"; exit 0; }
    if [ -n "${RSURING_FUZZ_FRESH:-}" ]; then
        rm -rf "$out/page-corpus"
    fi
    mkdir -p "$out/page-corpus"
    cd "$out"
    exec ./page -artifact_prefix="$out/page-" -max_len=4096 -print_final_stats=1 \
        "$@" "$out/page-corpus" "$repo/fuzz/page-corpus"
fi

# 2. The harness. -rdynamic exports libFuzzer's coverage callbacks to the
# instrumented library.
"$clang" -g -O1 -std=gnu11 -Wall -Wextra -Werror -fsanitize=fuzzer,address \
    -I"$repo/include" fuzz/ring_ops.c "$lib" -rdynamic \
    -Wl,--disable-new-dtags -Wl,-rpath,"$out/lib" -o "$out/ring_ops.tmp"
mv "$out/ring_ops.tmp" "$out/ring_ops"
resolved=$(ldd "$out/ring_ops" | sed -n 's/^\s*liburing\.so\.2 => \(\S*\).*/\1/p')
if [ "$(readlink -f "$resolved")" != "$(readlink -f "$lib")" ]; then
    echo "fuzz: ring_ops resolves liburing.so.2 to '$resolved', not $lib" >&2
    exit 1
fi
[ "$build_only" = 1 ] && { echo "$out/ring_ops"; exit 0; }
if [ "$minimize" = 1 ]; then
    fresh=$out/corpus-min
    rm -rf "$fresh"
    mkdir -p "$fresh"
    (cd "$out" && ./ring_ops -merge=1 -use_counters=0 -use_cmp=0 -max_len=1024 \
        "$fresh" "$repo/fuzz/corpus" "$out/corpus")
    rm -rf "$repo/fuzz/corpus"
    mv "$fresh" "$repo/fuzz/corpus"
    echo "fuzz: fuzz/corpus now holds $(find "$repo/fuzz/corpus" -type f | wc -l) seeds"
    exit 0
fi

# 3. Run. New inputs go to the scratch corpus, never into fuzz/corpus/
# (RSURING_FUZZ_FRESH=1 starts it empty, as the tests do).
if [ -n "${RSURING_FUZZ_FRESH:-}" ]; then
    rm -rf "$out/corpus"
    mkdir -p "$out/corpus"
fi
cd "$out"
exec ./ring_ops -artifact_prefix="$out/" -max_len=1024 -len_control=50 -print_final_stats=1 \
    "$@" "$out/corpus" "$repo/fuzz/corpus"
