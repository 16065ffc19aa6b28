#!/usr/bin/env bash
# Linker wrapper for cargo (see .cargo/config.toml).
# rustc hands the linker an anonymous version script listing every exported
# symbol; liburing's ABI needs named version nodes (LIBURING_2.0, ...). When
# build.rs has added our own script (liburing.map), rustc's is dropped so ours
# decides both the versions and what is exported. Every other link (tests,
# build scripts, dependencies) passes through unchanged.
own=0
for arg in "$@"; do
    case "$arg" in -Wl,--version-script=*/liburing.map) own=1 ;; esac
done
args=()
for arg in "$@"; do
    if [ "$own" = 1 ]; then
        case "$arg" in -Wl,--version-script=*/list) continue ;; esac
    fi
    args+=("$arg")
done
exec "${RSURING_CC:-cc}" "${args[@]}"
