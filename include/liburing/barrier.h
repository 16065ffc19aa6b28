/* SPDX-License-Identifier: MIT */
/*
 * rsuring: memory-ordering helpers for the rings shared with the kernel.
 *
 * The kernel publishes with release stores and consumes with acquire
 * loads; the application must do the same on its side:
 *
 *   CQ: load the kernel's tail with acquire before reading any CQE, and
 *       store our head with release after the CQEs have been read.
 *   SQ: store our tail with release after the SQEs are written; under
 *       SQPOLL load the kernel's head with acquire before reusing an SQE.
 *   Flags words shared with the kernel are read and written "once"
 *       (relaxed atomics), never torn or cached by the compiler.
 *
 * The helpers are plain macros over the compiler's __atomic builtins, so
 * they work on ordinary (non-_Atomic) objects identically in C and C++ and
 * accept any mix of integer argument types.
 */
#ifndef LIBURING_BARRIER_H
#define LIBURING_BARRIER_H

/*
 * liburing's copy pulls in the language's atomics header; code written
 * against it may rely on that, so keep doing it.
 */
#if defined(__cplusplus)
#include <atomic>
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && \
	!defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
#endif

/* Single, untorn access to a shared word; no ordering. */
#define IO_URING_WRITE_ONCE(var, val)					\
	__atomic_store_n(&(var), (val), __ATOMIC_RELAXED)
#define IO_URING_READ_ONCE(var)						\
	__atomic_load_n(&(var), __ATOMIC_RELAXED)

/* Publish *p = v after every earlier load and store. */
#define io_uring_smp_store_release(p, v)				\
	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Read *p before every later load and store. */
#define io_uring_smp_load_acquire(p)					\
	__atomic_load_n((p), __ATOMIC_ACQUIRE)

/* Full barrier. */
#define io_uring_smp_mb()						\
	__atomic_thread_fence(__ATOMIC_SEQ_CST)

#endif /* LIBURING_BARRIER_H */
