/* SPDX-License-Identifier: MIT */
/*
 * The inline helpers of include/liburing.h as real, exported functions:
 * the symbol set liburing ships as liburing-ffi.so.2, for callers that
 * cannot use C inline functions (Rust, Go, Python, Zig, ... FFI).
 *
 * There is one implementation of each helper, the header's.  Defining
 * IOURINGINLINE empty turns every public helper into an ordinary external
 * definition in this translation unit; _LOCAL_INLINE helpers stay static.
 * LIBURING_INTERNAL keeps the header's io_uring_get_sqe() a declaration:
 * that symbol is the Rust library's (it predates the inline version).
 *
 * build.rs compiles this file and links it whole into librsuring.so;
 * liburing.map gives each helper the version node liburing-ffi.map gives
 * it, and hides the few public helpers liburing-ffi does not export.
 */
#define IOURINGINLINE
#define LIBURING_INTERNAL

/* the header is the prototype: these definitions need no other */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#include "liburing.h"
#pragma GCC diagnostic pop
