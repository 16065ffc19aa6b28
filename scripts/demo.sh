#!/usr/bin/env bash
# README.md, "Quick start": builds rsuring and a small liburing program, then runs it on
# rsuring: it copies a file through the ring and verifies the copy.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
out=target/demo
mkdir -p "$out"
ln -sf ../release/librsuring.so "$out/liburing.so.2"
cc -O2 -Wall -Wextra -Werror -Iinclude -o "$out/demo" docs/examples/demo.c \
    target/release/librsuring.so -Wl,-rpath,"$(pwd)/$out"
"$out/demo" "$@"
