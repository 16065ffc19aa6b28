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
 * the exported symbol (which predates the inline version) is defined
 * below, as the header's _io_uring_get_sqe() behind the library's test for
 * a NULL or exited ring; the Rust core hands out its SQEs through
 * _io_uring_get_sqe() too, so there is one implementation.
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

/*
 * The exported io_uring_get_sqe: NULL for a NULL ring or one that is not
 * set up (zeroed, or exited: its SQ head pointer is NULL), as every
 * exported function of the library answers such a ring instead of
 * crashing; otherwise the header's inline code.
 */
struct io_uring_sqe *io_uring_get_sqe(struct io_uring *ring)
{
	if (!ring || !ring->sq.khead)
		return NULL;
	return _io_uring_get_sqe(ring);
}
