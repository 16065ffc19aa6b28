/* SPDX-License-Identifier: MIT */
/*
 * Bad input: every exported function of the liburing ABI (and rsuring's
 * extensions) called with NULL rings and pointers, zero and oversized
 * counts, unknown flags and opcodes, invalid fds and CPUs, rings that were
 * torn down, twice. Each call must return a defined value (-errno, NULL, 0
 * as its signature says) and never crash.
 *
 *   bad_input --lib LIB [--ref REF] [--markdown]
 *
 * Every case runs in a forked child that dlopen()s LIB, so one crash cannot
 * hide the others; the result (or the signal that killed the child) comes
 * back through a pipe. With --ref, the same case also runs against REF (e.g.
 * Debian's liburing.so.2, 2.3): an informative column, where "crash" means
 * the reference library would have killed the process. Symbols REF does not
 * have show as "absent".
 *
 * Exit status 0 when every result of LIB equals the expected one written in
 * the case, 1 otherwise. --markdown prints the table of docs/bad-input.md
 * (generated from the same cases, so it cannot drift: tests/reliability.rs
 * compares it with that file).
 *
 * The library is loaded with dlopen rather than linked so the reference
 * library, which lacks the 2.4+ symbols, can run the same binary; the
 * prototypes come from our header.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <liburing.h>
#include <rsuring.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

#define EXIT_ABSENT 93
#define EXIT_FIXTURE 94
#define CASE_TIMEOUT_S 3

/*
 * One case: function, input (as shown in the table), the result rsuring
 * must give ("-errno" accepts any negative errno), and, for a known library
 * bug, a note: its mismatch is reported but does not fail the run (and a
 * match says the mark can go).
 */
struct bcase {
	long order;
	const char *fn;
	const char *input;
	const char *expect;
	const char *known_bug;
	void (*run)(void);
};

#define CASE(fn, input, expect) CASE_(__COUNTER__, fn, input, expect, NULL)
#define CASE_BUG(fn, input, expect, bug) CASE_(__COUNTER__, fn, input, expect, bug)
#define CASE_(n, fn, input, expect, bug) CASE__(n, fn, input, expect, bug)
#define CASE__(n, fn_, input_, expect_, bug_)                             \
	static void case_##n(void);                                       \
	static const struct bcase bcase_##n                               \
		__attribute__((used, section("bad_input_cases"),          \
			       aligned(sizeof(void *)))) = {              \
			n, #fn_, input_, expect_, bug_, case_##n          \
		};                                                        \
	static void case_##n(void)

extern const struct bcase __start_bad_input_cases[];
extern const struct bcase __stop_bad_input_cases[];

/* ---- in the child ------------------------------------------------------ */

static void *g_lib;
static char g_out[256];

static void *resolve(const char *name)
{
	void *p = dlsym(g_lib, name);
	if (!p)
		_exit(EXIT_ABSENT);
	return p;
}

/* The function `fn` as exported by the library under test. */
#define F(fn) ((__typeof__(&fn))resolve(#fn))

static const char *errname(long v)
{
	static char buf[64];
	const char *n = v < 0 ? strerrorname_np((int)-v) : NULL;

	if (n)
		snprintf(buf, sizeof(buf), "-%s", n);
	else
		snprintf(buf, sizeof(buf), "%ld", v);
	return buf;
}

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g_out, sizeof(g_out), fmt, ap);
	va_end(ap);
}

#define RI(expr) out("%s", errname((long)(expr)))
#define RP(expr) out("%s", (expr) ? "non-NULL" : "NULL")
#define RB(expr) out("%s", (expr) ? "true" : "false")
#define RV(expr) ((expr), out("(returns)"))

static void fixture_fail(const char *what, int ret)
{
	fprintf(stderr, "fixture %s failed: %d\n", what, ret);
	_exit(EXIT_FIXTURE);
}

static struct io_uring g_ring, g_ring2;

/* A live ring: 8 entries, no flags. */
static struct io_uring *live(void)
{
	int ret = F(io_uring_queue_init)(8, &g_ring, 0);
	if (ret)
		fixture_fail("io_uring_queue_init", ret);
	return &g_ring;
}

static struct io_uring *live2(void)
{
	int ret = F(io_uring_queue_init)(8, &g_ring2, 0);
	if (ret)
		fixture_fail("io_uring_queue_init", ret);
	return &g_ring2;
}

/* A ring that was set up and torn down with io_uring_queue_exit. */
static struct io_uring *exited(void)
{
	live();
	F(io_uring_queue_exit)(&g_ring);
	return &g_ring;
}

static int a_memfd(void)
{
	int fd = memfd_create("bad_input", 0);
	if (fd < 0)
		fixture_fail("memfd_create", -errno);
	return fd;
}

static struct io_uring_params params(unsigned flags)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return p;
}

#define BIG 0x7fffffffU	/* oversized count */
#define UNKNOWN_SETUP_FLAG (1U << 30)

/* ---- setup ------------------------------------------------------------- */

CASE(io_uring_queue_init, "ring NULL", "-EFAULT")
{ RI(F(io_uring_queue_init)(8, NULL, 0)); }
CASE(io_uring_queue_init, "entries 0", "-EINVAL")
{ struct io_uring r; RI(F(io_uring_queue_init)(0, &r, 0)); }
CASE(io_uring_queue_init, "entries 2^31-1", "-EINVAL")
{ struct io_uring r; RI(F(io_uring_queue_init)(BIG, &r, 0)); }
CASE(io_uring_queue_init, "entries UINT_MAX", "-EINVAL")
{ struct io_uring r; RI(F(io_uring_queue_init)(UINT_MAX, &r, 0)); }
CASE(io_uring_queue_init, "entries 65536 with CLAMP", "0")
{ struct io_uring r; RI(F(io_uring_queue_init)(65536, &r, IORING_SETUP_CLAMP)); }
CASE(io_uring_queue_init, "unknown flag 1<<30", "-EINVAL")
{ struct io_uring r; RI(F(io_uring_queue_init)(8, &r, UNKNOWN_SETUP_FLAG)); }
CASE(io_uring_queue_init, "all flags 0xffffffff", "-EINVAL")
{ struct io_uring r; RI(F(io_uring_queue_init)(8, &r, 0xffffffffU)); }
CASE(io_uring_queue_init, "SQPOLL_PERCPU without SQPOLL", "-EINVAL")
{ struct io_uring r; RI(F(io_uring_queue_init)(8, &r, IORING_SETUP_SQPOLL_PERCPU)); }
CASE(io_uring_queue_init, "SQ_AFF without SQPOLL", "-EINVAL")
{ struct io_uring r; RI(F(io_uring_queue_init)(8, &r, IORING_SETUP_SQ_AFF)); }
CASE(io_uring_queue_init, "DEFER_TASKRUN without SINGLE_ISSUER", "-EINVAL")
{ struct io_uring r; RI(F(io_uring_queue_init)(8, &r, IORING_SETUP_DEFER_TASKRUN)); }

CASE(io_uring_queue_init_params, "ring NULL", "-EFAULT")
{ struct io_uring_params p = params(0); RI(F(io_uring_queue_init_params)(8, NULL, &p)); }
CASE(io_uring_queue_init_params, "params NULL", "-EFAULT")
{ struct io_uring r; RI(F(io_uring_queue_init_params)(8, &r, NULL)); }
CASE(io_uring_queue_init_params, "entries 0", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(0); RI(F(io_uring_queue_init_params)(0, &r, &p)); }
CASE(io_uring_queue_init_params, "entries 2^31-1", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(0); RI(F(io_uring_queue_init_params)(BIG, &r, &p)); }
CASE(io_uring_queue_init_params, "unknown flag 1<<30", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(UNKNOWN_SETUP_FLAG); RI(F(io_uring_queue_init_params)(8, &r, &p)); }
CASE(io_uring_queue_init_params, "resv[] not zero", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(0); p.resv[0] = 1; RI(F(io_uring_queue_init_params)(8, &r, &p)); }
CASE(io_uring_queue_init_params, "SQPOLL|SQ_AFF, sq_thread_cpu 4096", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF); p.sq_thread_cpu = 4096; RI(F(io_uring_queue_init_params)(8, &r, &p)); }
CASE(io_uring_queue_init_params, "SQPOLL|SQ_AFF|SQPOLL_PERCPU, sq_thread_cpu 4096", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF | IORING_SETUP_SQPOLL_PERCPU); p.sq_thread_cpu = 4096; RI(F(io_uring_queue_init_params)(8, &r, &p)); }
CASE(io_uring_queue_init_params, "SQPOLL|SQ_AFF|SQPOLL_PERCPU, sq_thread_cpu UINT_MAX", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF | IORING_SETUP_SQPOLL_PERCPU); p.sq_thread_cpu = UINT_MAX; RI(F(io_uring_queue_init_params)(8, &r, &p)); }
CASE(io_uring_queue_init_params, "CQSIZE, cq_entries 0", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(IORING_SETUP_CQSIZE); RI(F(io_uring_queue_init_params)(8, &r, &p)); }
CASE(io_uring_queue_init_params, "CQSIZE, cq_entries 2^31-1", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(IORING_SETUP_CQSIZE); p.cq_entries = BIG; RI(F(io_uring_queue_init_params)(8, &r, &p)); }
CASE(io_uring_queue_init_params, "ATTACH_WQ, wq_fd -1", "-ENXIO")
{ struct io_uring r; struct io_uring_params p = params(IORING_SETUP_ATTACH_WQ); p.wq_fd = (unsigned)-1; RI(F(io_uring_queue_init_params)(8, &r, &p)); }
CASE(io_uring_queue_init_params, "ATTACH_WQ, wq_fd a memfd", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(IORING_SETUP_ATTACH_WQ); p.wq_fd = (unsigned)a_memfd(); RI(F(io_uring_queue_init_params)(8, &r, &p)); }

CASE(io_uring_queue_mmap, "fd -1", "-EBADF")
{ struct io_uring r; struct io_uring_params p = params(0); p.sq_entries = p.cq_entries = 8; RI(F(io_uring_queue_mmap)(-1, &p, &r)); }
CASE(io_uring_queue_mmap, "fd a memfd", "-EOPNOTSUPP")
{ struct io_uring r; struct io_uring_params p = params(0); p.sq_entries = p.cq_entries = 8; RI(F(io_uring_queue_mmap)(a_memfd(), &p, &r)); }
CASE(io_uring_queue_mmap, "ring fd, params with sq_off.head 1 GiB past the ring", "-EINVAL")
{ struct io_uring r; struct io_uring_params p = params(0); int fd = F(io_uring_setup)(8, &p); if (fd < 0) fixture_fail("io_uring_setup", fd); p.sq_off.head = 1U << 30; RI(F(io_uring_queue_mmap)(fd, &p, &r)); }
CASE(io_uring_queue_mmap, "params NULL", "-EFAULT")
{ struct io_uring r; RI(F(io_uring_queue_mmap)(0, NULL, &r)); }
CASE(io_uring_queue_mmap, "ring NULL (fd from io_uring_setup)", "-EFAULT")
{ struct io_uring_params p = params(0); int fd = F(io_uring_setup)(8, &p); if (fd < 0) fixture_fail("io_uring_setup", fd); RI(F(io_uring_queue_mmap)(fd, &p, NULL)); }

CASE(io_uring_queue_exit, "ring NULL", "(returns)")
{ RV(F(io_uring_queue_exit)(NULL)); }
CASE(io_uring_queue_exit, "twice", "(returns)")
{ struct io_uring *r = exited(); RV(F(io_uring_queue_exit)(r)); }
CASE(io_uring_queue_exit, "three times, then io_uring_queue_init on it", "0")
{ struct io_uring *r = exited(); F(io_uring_queue_exit)(r); F(io_uring_queue_exit)(r); RI(F(io_uring_queue_init)(8, r, 0)); }
CASE(io_uring_queue_exit, "zeroed ring never set up", "(returns)")
{ struct io_uring r; memset(&r, 0, sizeof(r)); r.ring_fd = r.enter_ring_fd = -1; RV(F(io_uring_queue_exit)(&r)); }

CASE(io_uring_ring_dontfork, "ring NULL", "-EFAULT")
{ RI(F(io_uring_ring_dontfork)(NULL)); }
CASE(io_uring_ring_dontfork, "exited ring", "-EBADF")
{ RI(F(io_uring_ring_dontfork)(exited())); }

CASE(io_uring_mlock_size, "entries 0", "-EINVAL")
{ RI(F(io_uring_mlock_size)(0, 0)); }
CASE(io_uring_mlock_size, "entries 2^31-1", "-EINVAL")
{ RI(F(io_uring_mlock_size)(BIG, 0)); }
CASE(io_uring_mlock_size, "unknown flag 1<<30", "0")
{ RI(F(io_uring_mlock_size)(8, UNKNOWN_SETUP_FLAG)); }
CASE(io_uring_mlock_size_params, "params NULL", "-EFAULT")
{ RI(F(io_uring_mlock_size_params)(8, NULL)); }
CASE(io_uring_mlock_size_params, "params NULL, entries 2^31-1", "-EFAULT")
{ RI(F(io_uring_mlock_size_params)(BIG, NULL)); }

CASE(io_uring_memory_size, "entries 0", "-EINVAL")
{ RI(F(io_uring_memory_size)(0, 0)); }
CASE(io_uring_memory_size, "entries 2^31-1", "-EINVAL")
{ RI(F(io_uring_memory_size)(BIG, 0)); }
CASE(io_uring_memory_size_params, "params NULL", "-EFAULT")
{ RI(F(io_uring_memory_size_params)(8, NULL)); }
CASE(io_uring_memory_size_params, "CQSIZE, cq_entries 0", "-EINVAL")
{ struct io_uring_params p = params(IORING_SETUP_CQSIZE); RI(F(io_uring_memory_size_params)(8, &p)); }

CASE(io_uring_queue_init_mem, "ring NULL", "-EFAULT")
{ static char buf[1 << 16]; struct io_uring_params p = params(0); RI(F(io_uring_queue_init_mem)(8, NULL, &p, buf, sizeof(buf))); }
CASE(io_uring_queue_init_mem, "params NULL", "-EFAULT")
{ static char buf[1 << 16]; struct io_uring r; RI(F(io_uring_queue_init_mem)(8, &r, NULL, buf, sizeof(buf))); }
CASE(io_uring_queue_init_mem, "buf NULL", "-EFAULT")
{ struct io_uring r; struct io_uring_params p = params(0); RI(F(io_uring_queue_init_mem)(8, &r, &p, NULL, 1 << 16)); }
CASE(io_uring_queue_init_mem, "buf_size 16", "-ENOMEM")
{ static char buf[16]; struct io_uring r; struct io_uring_params p = params(0); RI(F(io_uring_queue_init_mem)(8, &r, &p, buf, sizeof(buf))); }
CASE(io_uring_queue_init_mem, "entries 0", "-EINVAL")
{ static char buf[1 << 16]; struct io_uring r; struct io_uring_params p = params(0); RI(F(io_uring_queue_init_mem)(0, &r, &p, buf, sizeof(buf))); }

CASE(io_uring_resize_rings, "ring NULL", "-EFAULT")
{ struct io_uring_params p = params(0); p.sq_entries = 16; RI(F(io_uring_resize_rings)(NULL, &p)); }
CASE(io_uring_resize_rings, "params NULL", "-EFAULT")
{ RI(F(io_uring_resize_rings)(live(), NULL)); }
CASE(io_uring_resize_rings, "exited ring", "-EBADF")
{ struct io_uring_params p = params(0); p.sq_entries = 16; RI(F(io_uring_resize_rings)(exited(), &p)); }

CASE(io_uring_set_iowait, "ring NULL", "-EFAULT")
{ RI(F(io_uring_set_iowait)(NULL, false)); }

CASE(io_uring_setup, "params NULL", "-EFAULT")
{ RI(F(io_uring_setup)(8, NULL)); }
CASE(io_uring_setup, "entries 0", "-EINVAL")
{ struct io_uring_params p = params(0); RI(F(io_uring_setup)(0, &p)); }
CASE(io_uring_setup, "entries 2^31-1", "-EINVAL")
{ struct io_uring_params p = params(0); RI(F(io_uring_setup)(BIG, &p)); }
CASE(io_uring_setup, "unknown flag 1<<30", "-EINVAL")
{ struct io_uring_params p = params(UNKNOWN_SETUP_FLAG); RI(F(io_uring_setup)(8, &p)); }
CASE(io_uring_setup, "SQPOLL|SQ_AFF, sq_thread_cpu 4096", "-EINVAL")
{ struct io_uring_params p = params(IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF); p.sq_thread_cpu = 4096; RI(F(io_uring_setup)(8, &p)); }

/* ---- submission and completion ------------------------------------------ */

CASE(io_uring_get_sqe, "ring NULL", "NULL")
{ RP(F(io_uring_get_sqe)(NULL)); }
CASE(io_uring_get_sqe, "exited ring", "NULL")
{ RP(F(io_uring_get_sqe)(exited())); }
CASE(io_uring_get_sqe, "9th SQE of an 8-entry ring", "NULL")
{ struct io_uring *r = live(); for (int i = 0; i < 8; i++) if (!F(io_uring_get_sqe)(r)) fixture_fail("get_sqe", i); RP(F(io_uring_get_sqe)(r)); }

CASE(io_uring_submit, "ring NULL", "-EFAULT")
{ RI(F(io_uring_submit)(NULL)); }
CASE(io_uring_submit, "exited ring", "-EBADF")
{ RI(F(io_uring_submit)(exited())); }
CASE(io_uring_submit, "nothing queued", "0")
{ RI(F(io_uring_submit)(live())); }
CASE(io_uring_submit_and_wait, "ring NULL", "-EFAULT")
{ RI(F(io_uring_submit_and_wait)(NULL, 1)); }
CASE(io_uring_submit_and_wait, "exited ring", "-EBADF")
{ RI(F(io_uring_submit_and_wait)(exited(), 1)); }
CASE(io_uring_submit_and_wait_timeout, "ring NULL", "-EFAULT")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_submit_and_wait_timeout)(NULL, &c, 1, &ts, NULL)); }
CASE(io_uring_submit_and_wait_timeout, "cqe_ptr NULL", "-EFAULT")
{ struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_submit_and_wait_timeout)(live(), NULL, 1, &ts, NULL)); }
CASE(io_uring_submit_and_wait_timeout, "tv_nsec -1", "-ETIME")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, -1 }; RI(F(io_uring_submit_and_wait_timeout)(live(), &c, 1, &ts, NULL)); }
CASE(io_uring_submit_and_wait_timeout, "exited ring", "-EBADF")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_submit_and_wait_timeout)(exited(), &c, 1, &ts, NULL)); }
CASE(io_uring_submit_and_get_events, "ring NULL", "-EFAULT")
{ RI(F(io_uring_submit_and_get_events)(NULL)); }
CASE(io_uring_get_events, "ring NULL", "-EFAULT")
{ RI(F(io_uring_get_events)(NULL)); }
CASE(io_uring_get_events, "exited ring", "-EBADF")
{ RI(F(io_uring_get_events)(exited())); }

CASE(io_uring_wait_cqes, "ring NULL", "-EFAULT")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqes)(NULL, &c, 1, &ts, NULL)); }
CASE(io_uring_wait_cqes, "cqe_ptr NULL", "-EFAULT")
{ struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqes)(live(), NULL, 1, &ts, NULL)); }
CASE(io_uring_wait_cqes, "wait_nr 2^31-1, 1 us timeout", "-ETIME")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqes)(live(), &c, BIG, &ts, NULL)); }
CASE(io_uring_wait_cqes, "tv_nsec 2e9", "-ETIME")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 2000000000LL }; RI(F(io_uring_wait_cqes)(live(), &c, 1, &ts, NULL)); }
CASE(io_uring_wait_cqes, "exited ring", "-EBADF")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqes)(exited(), &c, 1, &ts, NULL)); }
CASE(io_uring_wait_cqe_timeout, "ring NULL", "-EFAULT")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqe_timeout)(NULL, &c, &ts)); }
CASE(io_uring_wait_cqe_timeout, "cqe_ptr NULL", "-EFAULT")
{ struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqe_timeout)(live(), NULL, &ts)); }
CASE(io_uring_wait_cqe_timeout, "tv_sec -1", "-ETIME")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { -1, 0 }; RI(F(io_uring_wait_cqe_timeout)(live(), &c, &ts)); }
CASE(io_uring_wait_cqe_timeout, "1 us timeout, empty ring", "-ETIME")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqe_timeout)(live(), &c, &ts)); }
CASE(io_uring_peek_batch_cqe, "ring NULL", "0")
{ struct io_uring_cqe *c[4]; RI(F(io_uring_peek_batch_cqe)(NULL, c, 4)); }
CASE(io_uring_peek_batch_cqe, "cqes NULL", "0")
{ RI(F(io_uring_peek_batch_cqe)(live(), NULL, 4)); }
CASE(io_uring_peek_batch_cqe, "count 0", "0")
{ struct io_uring_cqe *c[4]; RI(F(io_uring_peek_batch_cqe)(live(), c, 0)); }
CASE(io_uring_peek_batch_cqe, "exited ring", "0")
{ struct io_uring_cqe *c[4]; RI(F(io_uring_peek_batch_cqe)(exited(), c, 4)); }
CASE(__io_uring_get_cqe, "ring NULL", "-EFAULT")
{ struct io_uring_cqe *c; RI(F(__io_uring_get_cqe)(NULL, &c, 0, 0, NULL)); }
CASE(__io_uring_get_cqe, "cqe_ptr NULL", "-EFAULT")
{ RI(F(__io_uring_get_cqe)(live(), NULL, 0, 0, NULL)); }
CASE(__io_uring_get_cqe, "submit 2^31-1, nothing queued, wait_nr 0", "-EAGAIN")
{ struct io_uring_cqe *c; RI(F(__io_uring_get_cqe)(live(), &c, BIG, 0, NULL)); }
CASE(__io_uring_get_cqe, "exited ring", "-EBADF")
{ struct io_uring_cqe *c; RI(F(__io_uring_get_cqe)(exited(), &c, 0, 1, NULL)); }
CASE(__io_uring_sqring_wait, "ring NULL", "-EFAULT")
{ RI(F(__io_uring_sqring_wait)(NULL)); }
CASE(__io_uring_sqring_wait, "ring without SQPOLL", "0")
{ RI(F(__io_uring_sqring_wait)(live())); }
CASE(io_uring_submit_and_wait_min_timeout, "ring NULL", "-EFAULT")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_submit_and_wait_min_timeout)(NULL, &c, 1, &ts, 10, NULL)); }
CASE(io_uring_submit_and_wait_min_timeout, "cqe_ptr NULL", "-EFAULT")
{ struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_submit_and_wait_min_timeout)(live(), NULL, 1, &ts, 10, NULL)); }
CASE(io_uring_wait_cqes_min_timeout, "ring NULL", "-EFAULT")
{ struct io_uring_cqe *c; struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqes_min_timeout)(NULL, &c, 1, &ts, 10, NULL)); }
CASE(io_uring_wait_cqes_min_timeout, "cqe_ptr NULL", "-EFAULT")
{ struct __kernel_timespec ts = { 0, 1000 }; RI(F(io_uring_wait_cqes_min_timeout)(live(), NULL, 1, &ts, 10, NULL)); }
CASE(io_uring_submit_and_wait_reg, "ring NULL", "-EFAULT")
{ struct io_uring_cqe *c; RI(F(io_uring_submit_and_wait_reg)(NULL, &c, 1, 0)); }
CASE(io_uring_submit_and_wait_reg, "cqe_ptr NULL", "-EFAULT")
{ RI(F(io_uring_submit_and_wait_reg)(live(), NULL, 1, 0)); }
CASE(io_uring_submit_and_wait_reg, "no wait region registered", "-EFAULT")
{ struct io_uring_cqe *c; RI(F(io_uring_submit_and_wait_reg)(live(), &c, 1, 0)); }
CASE(io_uring_submit_and_wait_reg, "reg_index -1", "-EFAULT")
{ struct io_uring_cqe *c; RI(F(io_uring_submit_and_wait_reg)(live(), &c, 1, -1)); }

/* ---- registration ------------------------------------------------------- */

static struct iovec one_iov(void)
{
	static char buf[4096];
	struct iovec v = { buf, sizeof(buf) };
	return v;
}

CASE(io_uring_register_buffers, "ring NULL", "-EFAULT")
{ struct iovec v = one_iov(); RI(F(io_uring_register_buffers)(NULL, &v, 1)); }
CASE(io_uring_register_buffers, "iovecs NULL", "-EFAULT")
{ RI(F(io_uring_register_buffers)(live(), NULL, 1)); }
CASE(io_uring_register_buffers, "nr 0", "-EINVAL")
{ struct iovec v = one_iov(); RI(F(io_uring_register_buffers)(live(), &v, 0)); }
CASE(io_uring_register_buffers, "nr 2^31-1", "-EFAULT")
{ RI(F(io_uring_register_buffers)(live(), NULL, BIG)); }
CASE(io_uring_register_buffers, "exited ring", "-EBADF")
{ struct iovec v = one_iov(); RI(F(io_uring_register_buffers)(exited(), &v, 1)); }
CASE(io_uring_register_buffers_tags, "ring NULL", "-EFAULT")
{ struct iovec v = one_iov(); __u64 t = 1; RI(F(io_uring_register_buffers_tags)(NULL, &v, &t, 1)); }
CASE(io_uring_register_buffers_tags, "iovecs NULL", "-EINVAL")
{ __u64 t = 1; RI(F(io_uring_register_buffers_tags)(live(), NULL, &t, 1)); }
CASE(io_uring_register_buffers_tags, "nr 0", "-EINVAL")
{ struct iovec v = one_iov(); __u64 t = 1; RI(F(io_uring_register_buffers_tags)(live(), &v, &t, 0)); }
CASE(io_uring_register_buffers_sparse, "ring NULL", "-EFAULT")
{ RI(F(io_uring_register_buffers_sparse)(NULL, 4)); }
CASE(io_uring_register_buffers_sparse, "nr 0", "-EINVAL")
{ RI(F(io_uring_register_buffers_sparse)(live(), 0)); }
CASE(io_uring_register_buffers_sparse, "nr 2^31-1", "-EINVAL")
{ RI(F(io_uring_register_buffers_sparse)(live(), BIG)); }
CASE(io_uring_register_buffers_update_tag, "ring NULL", "-EFAULT")
{ struct iovec v = one_iov(); __u64 t = 1; RI(F(io_uring_register_buffers_update_tag)(NULL, 0, &v, &t, 1)); }
CASE(io_uring_register_buffers_update_tag, "no buffer table", "-ENXIO")
{ struct iovec v = one_iov(); __u64 t = 1; RI(F(io_uring_register_buffers_update_tag)(live(), 0, &v, &t, 1)); }
CASE(io_uring_register_buffers_update_tag, "offset 2^31-1 in a 4-slot table", "-EINVAL")
{ struct io_uring *r = live(); struct iovec v = one_iov(); __u64 t = 1; F(io_uring_register_buffers_sparse)(r, 4); RI(F(io_uring_register_buffers_update_tag)(r, BIG, &v, &t, 1)); }
CASE(io_uring_unregister_buffers, "ring NULL", "-EFAULT")
{ RI(F(io_uring_unregister_buffers)(NULL)); }
CASE(io_uring_unregister_buffers, "nothing registered", "-ENXIO")
{ RI(F(io_uring_unregister_buffers)(live())); }

CASE(io_uring_register_files, "ring NULL", "-EFAULT")
{ int fd = 0; RI(F(io_uring_register_files)(NULL, &fd, 1)); }
CASE(io_uring_register_files, "files NULL", "-EFAULT")
{ RI(F(io_uring_register_files)(live(), NULL, 1)); }
CASE(io_uring_register_files, "nr 0", "-EINVAL")
{ int fd = 0; RI(F(io_uring_register_files)(live(), &fd, 0)); }
CASE(io_uring_register_files, "fd -5", "-EBADF")
{ int fd = -5; RI(F(io_uring_register_files)(live(), &fd, 1)); }
CASE(io_uring_register_files, "fd 1000000", "-EBADF")
{ int fd = 1000000; RI(F(io_uring_register_files)(live(), &fd, 1)); }
CASE(io_uring_register_files, "the ring's own fd", "-EBADF")
{ struct io_uring *r = live(); int fd = r->ring_fd; RI(F(io_uring_register_files)(r, &fd, 1)); }
CASE(io_uring_register_files_tags, "ring NULL", "-EFAULT")
{ int fd = 0; __u64 t = 1; RI(F(io_uring_register_files_tags)(NULL, &fd, &t, 1)); }
CASE(io_uring_register_files_tags, "files NULL", "-EINVAL")
{ __u64 t = 1; RI(F(io_uring_register_files_tags)(live(), NULL, &t, 1)); }
CASE(io_uring_register_files_tags, "nr 0", "-EINVAL")
{ int fd = 0; __u64 t = 1; RI(F(io_uring_register_files_tags)(live(), &fd, &t, 0)); }
CASE(io_uring_register_files_sparse, "ring NULL", "-EFAULT")
{ RI(F(io_uring_register_files_sparse)(NULL, 4)); }
CASE(io_uring_register_files_sparse, "nr 0", "-EINVAL")
{ RI(F(io_uring_register_files_sparse)(live(), 0)); }
CASE(io_uring_register_files_sparse, "nr 2^31-1", "-EMFILE")
{ RI(F(io_uring_register_files_sparse)(live(), BIG)); }
CASE(io_uring_register_files_update, "ring NULL", "-EFAULT")
{ int fd = 0; RI(F(io_uring_register_files_update)(NULL, 0, &fd, 1)); }
CASE(io_uring_register_files_update, "no file table", "-ENXIO")
{ int fd = 0; RI(F(io_uring_register_files_update)(live(), 0, &fd, 1)); }
CASE(io_uring_register_files_update, "files NULL", "-ENXIO")
{ RI(F(io_uring_register_files_update)(live(), 0, NULL, 1)); }
CASE(io_uring_register_files_update, "offset 2^31-1 in a 4-slot table", "-EINVAL")
{ struct io_uring *r = live(); int fd = 0; F(io_uring_register_files_sparse)(r, 4); RI(F(io_uring_register_files_update)(r, BIG, &fd, 1)); }
CASE(io_uring_register_files_update_tag, "ring NULL", "-EFAULT")
{ int fd = 0; __u64 t = 1; RI(F(io_uring_register_files_update_tag)(NULL, 0, &fd, &t, 1)); }
CASE(io_uring_register_files_update_tag, "no file table", "-ENXIO")
{ int fd = 0; __u64 t = 1; RI(F(io_uring_register_files_update_tag)(live(), 0, &fd, &t, 1)); }
CASE(io_uring_unregister_files, "ring NULL", "-EFAULT")
{ RI(F(io_uring_unregister_files)(NULL)); }
CASE(io_uring_unregister_files, "nothing registered", "-ENXIO")
{ RI(F(io_uring_unregister_files)(live())); }

CASE(io_uring_register_eventfd, "ring NULL", "-EFAULT")
{ RI(F(io_uring_register_eventfd)(NULL, 0)); }
CASE(io_uring_register_eventfd, "fd -1", "-EBADF")
{ RI(F(io_uring_register_eventfd)(live(), -1)); }
CASE(io_uring_register_eventfd, "fd a memfd", "-EINVAL")
{ RI(F(io_uring_register_eventfd)(live(), a_memfd())); }
CASE(io_uring_register_eventfd, "twice", "-EBUSY")
{ struct io_uring *r = live(); int fd = eventfd(0, 0); F(io_uring_register_eventfd)(r, fd); RI(F(io_uring_register_eventfd)(r, fd)); }
CASE(io_uring_register_eventfd_async, "ring NULL", "-EFAULT")
{ RI(F(io_uring_register_eventfd_async)(NULL, 0)); }
CASE(io_uring_register_eventfd_async, "fd -1", "-EBADF")
{ RI(F(io_uring_register_eventfd_async)(live(), -1)); }
CASE(io_uring_unregister_eventfd, "ring NULL", "-EFAULT")
{ RI(F(io_uring_unregister_eventfd)(NULL)); }
CASE(io_uring_unregister_eventfd, "none registered", "-ENXIO")
{ RI(F(io_uring_unregister_eventfd)(live())); }

CASE(io_uring_register_personality, "ring NULL", "-EFAULT")
{ RI(F(io_uring_register_personality)(NULL)); }
CASE(io_uring_unregister_personality, "ring NULL", "-EFAULT")
{ RI(F(io_uring_unregister_personality)(NULL, 1)); }
CASE(io_uring_unregister_personality, "unknown id 12345", "-EINVAL")
{ RI(F(io_uring_unregister_personality)(live(), 12345)); }
CASE(io_uring_unregister_personality, "id -1", "-EINVAL")
{ RI(F(io_uring_unregister_personality)(live(), -1)); }

CASE(io_uring_register_probe, "ring NULL", "-EFAULT")
{ static char p[4096]; RI(F(io_uring_register_probe)(NULL, (struct io_uring_probe *)p, 4)); }
CASE(io_uring_register_probe, "probe NULL", "-EINVAL")
{ RI(F(io_uring_register_probe)(live(), NULL, 4)); }
CASE(io_uring_register_probe, "nr 2^31-1, probe NULL", "-EINVAL")
{ RI(F(io_uring_register_probe)(live(), NULL, BIG)); }
CASE(io_uring_get_probe_ring, "ring NULL", "NULL")
{ RP(F(io_uring_get_probe_ring)(NULL)); }
CASE(io_uring_get_probe_ring, "exited ring", "NULL")
{ RP(F(io_uring_get_probe_ring)(exited())); }
CASE(io_uring_get_probe, "(no arguments)", "non-NULL")
{ struct io_uring_probe *p = F(io_uring_get_probe)(); RP(p); F(io_uring_free_probe)(p); }
CASE(io_uring_free_probe, "probe NULL", "(returns)")
{ RV(F(io_uring_free_probe)(NULL)); }

CASE(io_uring_register_iowq_aff, "ring NULL", "-EFAULT")
{ cpu_set_t m; CPU_ZERO(&m); CPU_SET(0, &m); RI(F(io_uring_register_iowq_aff)(NULL, sizeof(m), &m)); }
CASE(io_uring_register_iowq_aff, "mask NULL", "-EINVAL")
{ RI(F(io_uring_register_iowq_aff)(live(), sizeof(cpu_set_t), NULL)); }
CASE(io_uring_register_iowq_aff, "cpusz 0", "-EINVAL")
{ cpu_set_t m; CPU_ZERO(&m); CPU_SET(0, &m); RI(F(io_uring_register_iowq_aff)(live(), 0, &m)); }
CASE(io_uring_register_iowq_aff, "cpusz 2^31", "-EINVAL")
{ cpu_set_t m; CPU_ZERO(&m); RI(F(io_uring_register_iowq_aff)(live(), (size_t)1 << 31, &m)); }
CASE(io_uring_register_iowq_aff, "only CPU 4095", "0")
{ static unsigned char m[512]; m[511] = 0x80; RI(F(io_uring_register_iowq_aff)(live(), sizeof(m), (cpu_set_t *)m)); }
CASE(io_uring_unregister_iowq_aff, "ring NULL", "-EFAULT")
{ RI(F(io_uring_unregister_iowq_aff)(NULL)); }
CASE(io_uring_register_iowq_max_workers, "ring NULL", "-EFAULT")
{ unsigned v[2] = { 0, 0 }; RI(F(io_uring_register_iowq_max_workers)(NULL, v)); }
CASE(io_uring_register_iowq_max_workers, "values NULL", "-EFAULT")
{ RI(F(io_uring_register_iowq_max_workers)(live(), NULL)); }

CASE(io_uring_register_ring_fd, "ring NULL", "-EFAULT")
{ RI(F(io_uring_register_ring_fd)(NULL)); }
CASE(io_uring_register_ring_fd, "twice", "-EEXIST")
{ struct io_uring *r = live(); F(io_uring_register_ring_fd)(r); RI(F(io_uring_register_ring_fd)(r)); }
CASE(io_uring_register_ring_fd, "exited ring", "-EBADF")
{ RI(F(io_uring_register_ring_fd)(exited())); }
CASE(io_uring_unregister_ring_fd, "ring NULL", "-EFAULT")
{ RI(F(io_uring_unregister_ring_fd)(NULL)); }
CASE(io_uring_unregister_ring_fd, "not registered", "-EINVAL")
{ RI(F(io_uring_unregister_ring_fd)(live())); }
CASE(io_uring_close_ring_fd, "ring NULL", "-EFAULT")
{ RI(F(io_uring_close_ring_fd)(NULL)); }
CASE(io_uring_close_ring_fd, "ring fd not registered", "-EINVAL")
{ RI(F(io_uring_close_ring_fd)(live())); }

CASE(io_uring_register_buf_ring, "ring NULL", "-EFAULT")
{ struct io_uring_buf_reg g; memset(&g, 0, sizeof(g)); RI(F(io_uring_register_buf_ring)(NULL, &g, 0)); }
CASE(io_uring_register_buf_ring, "reg NULL", "-EFAULT")
{ RI(F(io_uring_register_buf_ring)(live(), NULL, 0)); }
CASE(io_uring_register_buf_ring, "ring_addr 0, 8 entries", "-EFAULT")
{ struct io_uring_buf_reg g; memset(&g, 0, sizeof(g)); g.ring_entries = 8; RI(F(io_uring_register_buf_ring)(live(), &g, 0)); }
CASE(io_uring_register_buf_ring, "3 entries (not a power of 2)", "-EINVAL")
{ static char mem[4096] __attribute__((aligned(4096))); struct io_uring_buf_reg g; memset(&g, 0, sizeof(g)); g.ring_addr = (unsigned long)mem; g.ring_entries = 3; RI(F(io_uring_register_buf_ring)(live(), &g, 0)); }
CASE(io_uring_register_buf_ring, "unknown flags 0xffff", "-EINVAL")
{ static char mem[4096] __attribute__((aligned(4096))); struct io_uring_buf_reg g; memset(&g, 0, sizeof(g)); g.ring_addr = (unsigned long)mem; g.ring_entries = 8; RI(F(io_uring_register_buf_ring)(live(), &g, 0xffff)); }
CASE(io_uring_unregister_buf_ring, "ring NULL", "-EFAULT")
{ RI(F(io_uring_unregister_buf_ring)(NULL, 0)); }
CASE(io_uring_unregister_buf_ring, "unknown group 999", "-ENOENT")
{ RI(F(io_uring_unregister_buf_ring)(live(), 999)); }
CASE(io_uring_setup_buf_ring, "ring NULL", "NULL, *err -EFAULT")
{ int err = 1; void *br = F(io_uring_setup_buf_ring)(NULL, 8, 0, 0, &err); out("%s, *err %s", br ? "non-NULL" : "NULL", errname(err)); }
CASE(io_uring_setup_buf_ring, "nentries 0", "NULL, *err -EINVAL")
{ int err = 1; void *br = F(io_uring_setup_buf_ring)(live(), 0, 0, 0, &err); out("%s, *err %s", br ? "non-NULL" : "NULL", errname(err)); }
CASE(io_uring_setup_buf_ring, "nentries 3", "NULL, *err -EINVAL")
{ int err = 1; void *br = F(io_uring_setup_buf_ring)(live(), 3, 0, 0, &err); out("%s, *err %s", br ? "non-NULL" : "NULL", errname(err)); }
CASE(io_uring_setup_buf_ring, "nentries 2^31", "NULL, *err -ENOMEM")
{ int err = 1; void *br = F(io_uring_setup_buf_ring)(live(), 1U << 31, 0, 0, &err); out("%s, *err %s", br ? "non-NULL" : "NULL", errname(err)); }
CASE(io_uring_setup_buf_ring, "nentries 0, err NULL", "NULL")
{ RP(F(io_uring_setup_buf_ring)(live(), 0, 0, 0, NULL)); }
CASE(io_uring_setup_buf_ring, "same group twice", "NULL, *err -EEXIST")
{ int err = 1; struct io_uring *r = live(); F(io_uring_setup_buf_ring)(r, 8, 7, 0, &err); void *br = F(io_uring_setup_buf_ring)(r, 8, 7, 0, &err); out("%s, *err %s", br ? "non-NULL" : "NULL", errname(err)); }
CASE(io_uring_free_buf_ring, "ring NULL", "-EFAULT")
{ static char mem[4096]; RI(F(io_uring_free_buf_ring)(NULL, (struct io_uring_buf_ring *)mem, 8, 0)); }
CASE(io_uring_free_buf_ring, "br NULL", "-EFAULT")
{ RI(F(io_uring_free_buf_ring)(live(), NULL, 8, 0)); }

CASE(io_uring_register_sync_cancel, "ring NULL", "-EFAULT")
{ struct io_uring_sync_cancel_reg g; memset(&g, 0, sizeof(g)); RI(F(io_uring_register_sync_cancel)(NULL, &g)); }
CASE(io_uring_register_sync_cancel, "reg NULL", "-EFAULT")
{ RI(F(io_uring_register_sync_cancel)(live(), NULL)); }
CASE(io_uring_register_sync_cancel, "unknown flags", "-EINVAL")
{ struct io_uring_sync_cancel_reg g; memset(&g, 0, sizeof(g)); g.flags = 0x80000000U; g.timeout.tv_sec = g.timeout.tv_nsec = -1; RI(F(io_uring_register_sync_cancel)(live(), &g)); }
CASE(io_uring_register_sync_cancel, "no such request", "-ENOENT")
{ struct io_uring_sync_cancel_reg g; memset(&g, 0, sizeof(g)); g.addr = 42; g.timeout.tv_sec = g.timeout.tv_nsec = -1; RI(F(io_uring_register_sync_cancel)(live(), &g)); }
CASE(io_uring_register_file_alloc_range, "ring NULL", "-EFAULT")
{ RI(F(io_uring_register_file_alloc_range)(NULL, 0, 1)); }
CASE(io_uring_register_file_alloc_range, "off+len overflow", "-EOVERFLOW")
{ RI(F(io_uring_register_file_alloc_range)(live(), UINT_MAX, 2)); }
CASE(io_uring_register_file_alloc_range, "no file table", "-EINVAL")
{ RI(F(io_uring_register_file_alloc_range)(live(), 0, 1)); }
CASE(io_uring_register_restrictions, "ring NULL", "-EFAULT")
{ struct io_uring_restriction res; memset(&res, 0, sizeof(res)); RI(F(io_uring_register_restrictions)(NULL, &res, 1)); }
CASE(io_uring_register_restrictions, "ring not disabled", "-EBADFD")
{ struct io_uring_restriction res; memset(&res, 0, sizeof(res)); res.opcode = IORING_RESTRICTION_SQE_OP; RI(F(io_uring_register_restrictions)(live(), &res, 1)); }
CASE(io_uring_register_restrictions, "res NULL on an R_DISABLED ring", "-EINVAL")
{ struct io_uring r; int ret = F(io_uring_queue_init)(8, &r, IORING_SETUP_R_DISABLED); if (ret) fixture_fail("R_DISABLED ring", ret); RI(F(io_uring_register_restrictions)(&r, NULL, 1)); }
CASE(io_uring_register_restrictions, "nr 2^31-1 on an R_DISABLED ring", "-EINVAL")
{ struct io_uring r; struct io_uring_restriction res; memset(&res, 0, sizeof(res)); int ret = F(io_uring_queue_init)(8, &r, IORING_SETUP_R_DISABLED); if (ret) fixture_fail("R_DISABLED ring", ret); RI(F(io_uring_register_restrictions)(&r, &res, BIG)); }
CASE(io_uring_enable_rings, "ring NULL", "-EFAULT")
{ RI(F(io_uring_enable_rings)(NULL)); }
CASE(io_uring_enable_rings, "ring already enabled", "-EBADFD")
{ RI(F(io_uring_enable_rings)(live())); }
CASE(io_uring_buf_ring_head, "ring NULL", "-EFAULT")
{ uint16_t h; RI(F(io_uring_buf_ring_head)(NULL, 0, &h)); }
CASE(io_uring_buf_ring_head, "head NULL", "-EFAULT")
{ RI(F(io_uring_buf_ring_head)(live(), 0, NULL)); }
CASE(io_uring_buf_ring_head, "unknown group 999", "-ENOENT")
{ uint16_t h; RI(F(io_uring_buf_ring_head)(live(), 999, &h)); }
CASE(io_uring_register_napi, "ring NULL", "-EFAULT")
{ struct io_uring_napi n; memset(&n, 0, sizeof(n)); RI(F(io_uring_register_napi)(NULL, &n)); }
CASE(io_uring_register_napi, "napi NULL", "-EINVAL")
{ RI(F(io_uring_register_napi)(live(), NULL)); }
CASE(io_uring_unregister_napi, "ring NULL", "-EFAULT")
{ RI(F(io_uring_unregister_napi)(NULL, NULL)); }
CASE(io_uring_register_clock, "ring NULL", "-EFAULT")
{ struct io_uring_clock_register c; memset(&c, 0, sizeof(c)); RI(F(io_uring_register_clock)(NULL, &c)); }
CASE(io_uring_register_clock, "arg NULL", "-EINVAL")
{ RI(F(io_uring_register_clock)(live(), NULL)); }
CASE(io_uring_register_clock, "clockid 99", "-EINVAL")
{ struct io_uring_clock_register c; memset(&c, 0, sizeof(c)); c.clockid = 99; RI(F(io_uring_register_clock)(live(), &c)); }

CASE(io_uring_clone_buffers, "dst NULL", "-EFAULT")
{ RI(F(io_uring_clone_buffers)(NULL, live())); }
CASE(io_uring_clone_buffers, "src NULL", "-EFAULT")
{ RI(F(io_uring_clone_buffers)(live(), NULL)); }
CASE(io_uring_clone_buffers, "src without buffers", "-ENXIO")
{ RI(F(io_uring_clone_buffers)(live(), live2())); }
CASE(__io_uring_clone_buffers, "dst NULL", "-EFAULT")
{ RI(F(__io_uring_clone_buffers)(NULL, live(), 0)); }
CASE(__io_uring_clone_buffers, "src NULL", "-EFAULT")
{ RI(F(__io_uring_clone_buffers)(live(), NULL, 0)); }
CASE(io_uring_clone_buffers_offset, "dst NULL", "-EFAULT")
{ RI(F(io_uring_clone_buffers_offset)(NULL, live(), 0, 0, 1, 0)); }
CASE(io_uring_clone_buffers_offset, "src NULL", "-EFAULT")
{ RI(F(io_uring_clone_buffers_offset)(live(), NULL, 0, 0, 1, 0)); }
CASE(__io_uring_clone_buffers_offset, "dst NULL", "-EFAULT")
{ RI(F(__io_uring_clone_buffers_offset)(NULL, live(), 0, 0, 1, 0)); }
CASE(__io_uring_clone_buffers_offset, "src NULL", "-EFAULT")
{ RI(F(__io_uring_clone_buffers_offset)(live(), NULL, 0, 0, 1, 0)); }
CASE(__io_uring_clone_buffers_offset, "unknown flags", "-EINVAL")
{ RI(F(__io_uring_clone_buffers_offset)(live(), live2(), 0, 0, 1, 0x80000000U)); }

CASE(io_uring_register_wait_reg, "ring NULL, reg NULL", "-EINVAL")
{ RI(F(io_uring_register_wait_reg)(NULL, NULL, 1)); }
CASE(io_uring_register_region, "ring NULL", "-EFAULT")
{ struct io_uring_mem_region_reg m; memset(&m, 0, sizeof(m)); RI(F(io_uring_register_region)(NULL, &m)); }
CASE(io_uring_register_region, "reg NULL", "-EINVAL")
{ RI(F(io_uring_register_region)(live(), NULL)); }
CASE(io_uring_register_ifq, "ring NULL", "-EFAULT")
{ struct io_uring_zcrx_ifq_reg z; memset(&z, 0, sizeof(z)); RI(F(io_uring_register_ifq)(NULL, &z)); }
CASE(io_uring_register_ifq, "reg NULL", "-EINVAL")
{ RI(F(io_uring_register_ifq)(live(), NULL)); }
CASE(io_uring_register_zcrx_ctrl, "ring NULL", "-EFAULT")
{ struct zcrx_ctrl z; memset(&z, 0, sizeof(z)); RI(F(io_uring_register_zcrx_ctrl)(NULL, &z)); }
CASE(io_uring_register_zcrx_ctrl, "ctrl NULL", "-EINVAL")
{ RI(F(io_uring_register_zcrx_ctrl)(live(), NULL)); }
CASE(io_uring_register_sync_msg, "sqe NULL", "-EINVAL")
{ RI(F(io_uring_register_sync_msg)(NULL)); }
CASE(io_uring_register_sync_msg, "target fd -1", "-EBADF")
{ struct io_uring_sqe s; memset(&s, 0, sizeof(s)); s.opcode = IORING_OP_MSG_RING; s.fd = -1; RI(F(io_uring_register_sync_msg)(&s)); }
CASE(io_uring_register_bpf_filter, "ring NULL", "-EFAULT")
{ struct io_uring_bpf b; memset(&b, 0, sizeof(b)); RI(F(io_uring_register_bpf_filter)(NULL, &b)); }
CASE(io_uring_register_bpf_filter, "bpf NULL", "-EINVAL")
{ RI(F(io_uring_register_bpf_filter)(live(), NULL)); }
CASE(io_uring_register_bpf_filter_task, "bpf NULL", "-EINVAL")
{ RI(F(io_uring_register_bpf_filter_task)(NULL)); }
CASE(io_uring_register_query, "query NULL", "0")
{ RI(F(io_uring_register_query)(NULL)); }

/* ---- raw system calls and versions --------------------------------------- */

CASE(io_uring_enter, "fd -1", "-EBADF")
{ RI(F(io_uring_enter)((unsigned)-1, 1, 0, 0, NULL)); }
CASE(io_uring_enter, "fd a memfd", "-EOPNOTSUPP")
{ RI(F(io_uring_enter)((unsigned)a_memfd(), 1, 0, 0, NULL)); }
CASE(io_uring_enter, "unknown flag 1<<31", "-EINVAL")
{ RI(F(io_uring_enter)((unsigned)live()->ring_fd, 0, 0, 1U << 31, NULL)); }
CASE(io_uring_enter, "to_submit 2^31-1, nothing queued", "0")
{ RI(F(io_uring_enter)((unsigned)live()->ring_fd, BIG, 0, 0, NULL)); }
CASE(io_uring_enter2, "fd -1", "-EBADF")
{ RI(F(io_uring_enter2)((unsigned)-1, 0, 0, 0, NULL, 0)); }
CASE(io_uring_enter2, "EXT_ARG, arg NULL, size 1", "-EINVAL")
{ RI(F(io_uring_enter2)((unsigned)live()->ring_fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, NULL, 1)); }
CASE(io_uring_enter2, "EXT_ARG, arg 0x1 (bad address)", "-EFAULT")
{ RI(F(io_uring_enter2)((unsigned)live()->ring_fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, (void *)1, sizeof(struct io_uring_getevents_arg))); }
CASE(io_uring_register, "fd -1", "-EINVAL")
{ RI(F(io_uring_register)((unsigned)-1, IORING_REGISTER_PROBE, NULL, 0)); }
CASE(io_uring_register, "fd a memfd", "-EOPNOTSUPP")
{ RI(F(io_uring_register)((unsigned)a_memfd(), IORING_REGISTER_PROBE, NULL, 0)); }
CASE(io_uring_register, "unknown opcode 9999", "-EINVAL")
{ RI(F(io_uring_register)((unsigned)live()->ring_fd, 9999, NULL, 0)); }
CASE(io_uring_register, "unknown opcode 255", "-EINVAL")
{ RI(F(io_uring_register)((unsigned)live()->ring_fd, 255, NULL, 0)); }
CASE(io_uring_register, "opcode UINT_MAX", "-EINVAL")
{ RI(F(io_uring_register)((unsigned)live()->ring_fd, UINT_MAX, NULL, 0)); }
CASE(io_uring_major_version, "(no arguments)", "2")
{ RI(F(io_uring_major_version)()); }
CASE(io_uring_check_version, "major INT_MAX", "true")
{ RB(F(io_uring_check_version)(INT_MAX, 0)); }
CASE(io_uring_check_version, "major -1, minor -1", "false")
{ RB(F(io_uring_check_version)(-1, -1)); }
CASE(io_uring_minor_version, "(no arguments)", ">= 4")
{ int m = F(io_uring_minor_version)(); out("%s", m >= 4 ? ">= 4" : "< 4"); }

/* ---- rsuring extensions --------------------------------------------------- */

CASE(rsuring_sqpoll_group, "ring NULL", "-EFAULT")
{ struct rsuring_sqpoll_info i; RI(F(rsuring_sqpoll_group)(NULL, &i)); }
CASE(rsuring_sqpoll_group, "info NULL", "-EFAULT")
{ RI(F(rsuring_sqpoll_group)(live(), NULL)); }
CASE(rsuring_sqpoll_group, "ring without SQPOLL", "-ENOENT")
{ struct rsuring_sqpoll_info i; RI(F(rsuring_sqpoll_group)(live(), &i)); }
CASE(rsuring_sqpoll_group, "exited ring", "-EBADF")
{ struct rsuring_sqpoll_info i; RI(F(rsuring_sqpoll_group)(exited(), &i)); }
CASE(rsuring_wait_batch_cqe, "ring NULL", "-EFAULT")
{ struct io_uring_cqe *c[4]; RI(F(rsuring_wait_batch_cqe)(NULL, c, 4, 1, NULL)); }
CASE(rsuring_wait_batch_cqe, "cqes NULL", "-EFAULT")
{ RI(F(rsuring_wait_batch_cqe)(live(), NULL, 4, 1, NULL)); }
CASE(rsuring_wait_batch_cqe, "max 0", "-EINVAL")
{ struct io_uring_cqe *c[4]; RI(F(rsuring_wait_batch_cqe)(live(), c, 0, 0, NULL)); }
CASE(rsuring_wait_batch_cqe, "min 5 > max 4", "-EINVAL")
{ struct io_uring_cqe *c[4]; RI(F(rsuring_wait_batch_cqe)(live(), c, 4, 5, NULL)); }
CASE(rsuring_wait_batch_cqe, "1 us timeout, empty ring", "-ETIME")
{ struct io_uring_cqe *c[4]; struct __kernel_timespec ts = { 0, 1000 }; RI(F(rsuring_wait_batch_cqe)(live(), c, 4, 1, &ts)); }
CASE(rsuring_wait_batch_cqe, "exited ring", "-EBADF")
{ struct io_uring_cqe *c[4]; struct __kernel_timespec ts = { 0, 1000 }; RI(F(rsuring_wait_batch_cqe)(exited(), c, 4, 1, &ts)); }
CASE(rsuring_stats_enable, "ring NULL", "-EFAULT")
{ RI(F(rsuring_stats_enable)(NULL)); }
CASE(rsuring_ring_stats, "ring NULL", "-EFAULT")
{ struct rsuring_stats s; RI(F(rsuring_ring_stats)(NULL, &s)); }
CASE(rsuring_ring_stats, "out NULL", "-EFAULT")
{ RI(F(rsuring_ring_stats)(live(), NULL)); }
CASE(rsuring_ring_stats, "statistics off", "-ENOENT")
{ struct rsuring_stats s; RI(F(rsuring_ring_stats)(live(), &s)); }
CASE(rsuring_stats_format, "ring NULL", "-EFAULT")
{ char b[64]; RI(F(rsuring_stats_format)(NULL, b, sizeof(b))); }
CASE(rsuring_stats_format, "buf NULL, len 64", "-EFAULT")
{ RI(F(rsuring_stats_format)(live(), NULL, 64)); }
CASE(rsuring_stats_format, "statistics off", "-ENOENT")
{ char b[64]; RI(F(rsuring_stats_format)(live(), b, sizeof(b))); }
CASE(rsuring_stats_format, "exited ring", "-EBADF")
{ char b[64]; RI(F(rsuring_stats_format)(exited(), b, sizeof(b))); }
CASE(rsuring_queue_init_batched, "ring NULL", "-EFAULT")
{ RI(F(rsuring_queue_init_batched)(8, NULL, 0)); }
CASE(rsuring_queue_init_batched, "entries 0", "-EINVAL")
{ struct io_uring r; RI(F(rsuring_queue_init_batched)(0, &r, 0)); }
CASE(rsuring_queue_init_batched, "unknown flag 1<<30", "-EINVAL")
{ struct io_uring r; RI(F(rsuring_queue_init_batched)(8, &r, UNKNOWN_SETUP_FLAG)); }

/* ---- driver ---------------------------------------------------------------- */

/* Runs case `c` against `lib` in a child; the result or what went wrong. */
static void run_case(const struct bcase *c, const char *lib, char *res, size_t len)
{
	int fds[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(fds) < 0) {
		perror("pipe");
		exit(2);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		close(fds[0]);
		alarm(CASE_TIMEOUT_S);
		g_lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!g_lib) {
			fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
			_exit(EXIT_FIXTURE);
		}
		c->run();
		if (write(fds[1], g_out, strlen(g_out)) < 0)
			_exit(EXIT_FIXTURE);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], res, len - 1);
	res[n > 0 ? n : 0] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status)) {
		const char *sig = sigabbrev_np(WTERMSIG(status));
		if (WTERMSIG(status) == SIGALRM)
			snprintf(res, len, "hang (killed after %d s)", CASE_TIMEOUT_S);
		else
			snprintf(res, len, "crash (SIG%s)", sig ? sig : "?");
	} else if (WEXITSTATUS(status) == EXIT_ABSENT) {
		snprintf(res, len, "absent");
	} else if (WEXITSTATUS(status) == EXIT_FIXTURE) {
		snprintf(res, len, "fixture failed");
	} else if (WEXITSTATUS(status) != 0 || n <= 0) {
		snprintf(res, len, "exit %d", WEXITSTATUS(status));
	}
}

/* `s` with the table separator escaped, for a Markdown cell. */
static const char *md(const char *s)
{
	static char buf[512];
	size_t j = 0;

	for (; *s && j + 2 < sizeof(buf); s++) {
		if (*s == '|')
			buf[j++] = '\\';
		buf[j++] = *s;
	}
	buf[j] = 0;
	return buf;
}

static int by_order(const void *a, const void *b)
{
	long x = (*(const struct bcase *const *)a)->order;
	long y = (*(const struct bcase *const *)b)->order;
	return (x > y) - (x < y);
}

/* "-errno" in an expectation accepts any negative errno name. */
static int matches(const char *got, const char *expect)
{
	if (!strcmp(expect, "-errno"))
		return got[0] == '-' && got[1] == 'E';
	return !strcmp(got, expect);
}

int main(int argc, char **argv)
{
	const char *lib = NULL, *ref = NULL, *ref_name = "reference";
	int markdown = 0, failures = 0, total = 0, known = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--lib") && i + 1 < argc)
			lib = argv[++i];
		else if (!strcmp(argv[i], "--ref") && i + 1 < argc)
			ref = argv[++i];
		else if (!strcmp(argv[i], "--ref-name") && i + 1 < argc)
			ref_name = argv[++i];
		else if (!strcmp(argv[i], "--markdown"))
			markdown = 1;
		else {
			fprintf(stderr,
				"usage: %s --lib LIB [--ref REF [--ref-name NAME]] [--markdown]\n",
				argv[0]);
			return 2;
		}
	}
	if (!lib) {
		fprintf(stderr, "--lib is required\n");
		return 2;
	}
	/* Results must not depend on how the caller's environment sets rsuring up. */
	unsetenv("RSURING_SQPOLL");
	unsetenv("RSURING_SQPOLL_PERCPU");
	unsetenv("RSURING_SQPOLL_CPUS");
	unsetenv("RSURING_SQPOLL_IDLE_MS");
	unsetenv("RSURING_STATS");

	if (markdown) {
		if (ref)
			printf("| function | input | rsuring | %s |\n| --- | --- | --- | --- |\n",
			       ref_name);
		else
			printf("| function | input | rsuring |\n| --- | --- | --- |\n");
	}
	size_t ncases = (size_t)(__stop_bad_input_cases - __start_bad_input_cases);
	const struct bcase **order = calloc(ncases, sizeof(*order));
	for (size_t i = 0; i < ncases; i++)
		order[i] = &__start_bad_input_cases[i];
	/* the linker may lay the section out in any order: use source order */
	qsort(order, ncases, sizeof(*order), by_order);
	for (size_t i = 0; i < ncases; i++) {
		const struct bcase *c = order[i];
		char got[256], theirs[256] = "";
		int ok;

		run_case(c, lib, got, sizeof(got));
		if (ref)
			run_case(c, ref, theirs, sizeof(theirs));
		ok = matches(got, c->expect);
		total++;
		if (!ok && c->known_bug) {
			known++;
			fprintf(stderr, "known bug %s(%s): got %s, want %s [%s]\n",
				c->fn, c->input, got, c->expect, c->known_bug);
		} else if (!ok) {
			failures++;
			fprintf(stderr, "MISMATCH %s(%s): expected %s, got %s\n",
				c->fn, c->input, c->expect, got);
		} else if (c->known_bug) {
			fprintf(stderr, "FIXED %s(%s): now %s; drop the known-bug mark [%s]\n",
				c->fn, c->input, got, c->known_bug);
		}
		if (markdown && ref)
			printf("| `%s` | %s | %s | %s |\n", c->fn, md(c->input), got, theirs);
		else if (markdown)
			printf("| `%s` | %s | %s |\n", c->fn, md(c->input), got);
		else
			printf("%-4s %s(%s) = %s%s%s\n", ok ? "ok" : c->known_bug ? "BUG" : "FAIL",
			       c->fn, c->input, got, ref ? "   ref: " : "", theirs);
	}
	free(order);
	fprintf(stderr, "bad_input: %d cases, %d mismatches, %d known bugs\n",
		total, failures, known);
	return failures ? 1 : 0;
}
