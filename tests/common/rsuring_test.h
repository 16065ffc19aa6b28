/* SPDX-License-Identifier: MIT */
/*
 * The one helper header of rsuring's C test programs: the programs in
 * c_tests/ include it, the per-CPU SQPOLL and RSURING_SQPOLL=1 programs
 * through c_tests/sqpoll/sq_common.h. It compiles against rsuring's include/
 * and against Debian's liburing 2.3 header alike.
 *
 * Every test is a standalone program that uses only the public liburing
 * API (and <rsuring.h> where it tests an extension). Exit status: 0 =
 * pass, 77 = skipped (the kernel lacks the feature; the test drivers make
 * that a failure under RSURING_STRICT=1), anything else = failure, with a
 * message on stderr naming the failing check, the current step (T_STEP)
 * and the process.
 *
 * A watchdog (SIGALRM, armed by a constructor) fails the program when it
 * makes no progress for T_WATCHDOG_SECS seconds, so a hang reports *where*
 * it hung instead of just being killed by the driver. Progress is a step
 * change or a T_PROGRESS() (e.g. a reaped completion); a slow but moving
 * program is left to the driver's overall timeout. A fork()ed child that
 * needs its own watchdog calls t_arm_watchdog().
 */
#ifndef RSURING_TEST_HELPERS_H
#define RSURING_TEST_HELPERS_H

#include <liburing.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

#ifndef T_WATCHDOG_SECS
#define T_WATCHDOG_SECS 20
#endif

#define T_UNUSED __attribute__((unused))

/* Label of the current step, printed by the watchdog and by failures. */
static const char *volatile t_step T_UNUSED = "start";
static char t_step_buf[256];

/* Progress marks for the watchdog. */
static unsigned long t_progress_count;
static unsigned long t_progress_seen;
#define T_PROGRESS() __atomic_fetch_add(&t_progress_count, 1, __ATOMIC_RELAXED)

/* T_STEP("reading %d bytes", n): names the current step; counts as progress. */
#define T_STEP(...) t_set_step(__VA_ARGS__)

static void t_set_step(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), unused));
static void t_set_step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t_step_buf, sizeof(t_step_buf), fmt, ap);
	va_end(ap);
	t_step = t_step_buf;
	T_PROGRESS();
}

/*
 * Fails the program. _exit, not exit: a fork()ed child must not run its
 * parent's atexit handlers or flush its copy of the parent's stdio buffers
 * (stdout is line buffered, see t_install_watchdog).
 */
static void t_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4), unused));
static void t_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d [step: %s] [pid %d]: ", file, line, t_step,
		(int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(T_EXIT_FAIL);
}

#define T_FAIL(...) t_fail_at(__FILE__, __LINE__, __VA_ARGS__)

#define T_SKIP(...)							\
	do {								\
		fprintf(stderr, "SKIP [step: %s]: ", t_step);		\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		exit(T_EXIT_SKIP);					\
	} while (0)

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			T_FAIL("check failed: %s", #cond);		\
	} while (0)

#define CHECK_MSG(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "check failed: %s: ", #cond);	\
			T_FAIL(__VA_ARGS__);				\
		}							\
	} while (0)

/* Compare two integer expressions (any signedness), print both on failure. */
#define CHECK_EQ(a, b)							\
	do {								\
		long long t_a_ = (long long)(a);			\
		long long t_b_ = (long long)(b);			\
		if (t_a_ != t_b_)					\
			T_FAIL("%s == %s failed: %lld != %lld",		\
			       #a, #b, t_a_, t_b_);			\
	} while (0)

#define CHECK_GE(a, b)							\
	do {								\
		long long t_a_ = (long long)(a);			\
		long long t_b_ = (long long)(b);			\
		if (!(t_a_ >= t_b_))					\
			T_FAIL("%s >= %s failed: %lld < %lld",		\
			       #a, #b, t_a_, t_b_);			\
	} while (0)

/* A liburing call that returns 0 / >= 0 on success and -errno on failure. */
#define CHECK_OK(expr)							\
	do {								\
		long long t_r_ = (long long)(expr);			\
		if (t_r_ < 0)						\
			T_FAIL("%s failed: %lld (%s)", #expr, t_r_,	\
			       strerror((int)-t_r_));			\
	} while (0)

/* A libc call that returns -1 and sets errno on failure. */
#define CHECK_SYS(expr)							\
	do {								\
		if ((long long)(expr) < 0)				\
			T_FAIL("%s failed: %s", #expr, strerror(errno)); \
	} while (0)

static void t_watchdog(int sig)
{
	unsigned long now = __atomic_load_n(&t_progress_count, __ATOMIC_RELAXED);
	char msg[400];
	int n;

	(void)sig;
	if (now != t_progress_seen) {
		t_progress_seen = now;
		alarm(T_WATCHDOG_SECS);
		return;
	}
	n = snprintf(msg, sizeof(msg),
		     "FAIL watchdog: no progress for %d s (hang) [step: %s] [pid %d]\n",
		     T_WATCHDOG_SECS, t_step, (int)getpid());
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n);
	_exit(T_EXIT_FAIL);
}

/* Arms (or re-arms, e.g. in a fork()ed child) the watchdog. */
static T_UNUSED void t_arm_watchdog(void)
{
	t_progress_seen = __atomic_load_n(&t_progress_count, __ATOMIC_RELAXED);
	signal(SIGALRM, t_watchdog);
	alarm(T_WATCHDOG_SECS);
}

__attribute__((constructor)) static void t_install_watchdog(void)
{
	t_arm_watchdog();
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A peer closing a socket must fail a check, not kill us silently. */
	signal(SIGPIPE, SIG_IGN);
}

static inline struct io_uring_sqe *t_get_sqe_at(struct io_uring *ring,
						 const char *file, int line)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		t_fail_at(file, line, "io_uring_get_sqe returned NULL");
	return sqe;
}
#define t_get_sqe(ring) t_get_sqe_at((ring), __FILE__, __LINE__)

/* Submit and require that exactly @expect SQEs were consumed. */
#define t_submit_expect(ring, expect)					\
	do {								\
		int t_s_ = io_uring_submit(ring);			\
		if (t_s_ != (int)(expect))				\
			T_FAIL("io_uring_submit returned %d (%s), expected %d", \
			       t_s_, t_s_ < 0 ? strerror(-t_s_) : "ok",	\
			       (int)(expect));				\
	} while (0)

/* Wait for one CQE, fail on error; returns it (caller must mark it seen). */
static inline struct io_uring_cqe *t_wait_cqe_at(struct io_uring *ring,
						  const char *file, int line)
{
	struct io_uring_cqe *cqe = NULL;
	int ret = io_uring_wait_cqe(ring, &cqe);

	if (ret < 0)
		t_fail_at(file, line, "io_uring_wait_cqe failed: %d (%s)", ret,
			  strerror(-ret));
	if (!cqe)
		t_fail_at(file, line, "io_uring_wait_cqe returned 0 but no cqe");
	return cqe;
}
#define t_wait_cqe(ring) t_wait_cqe_at((ring), __FILE__, __LINE__)

/*
 * Wait for one CQE, copy out user_data / res / flags, and mark it seen.
 */
struct t_cqe {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
};

static inline struct t_cqe t_reap_at(struct io_uring *ring, const char *file,
				     int line)
{
	struct io_uring_cqe *cqe = t_wait_cqe_at(ring, file, line);
	struct t_cqe c;

	c.user_data = cqe->user_data;
	c.res = cqe->res;
	c.flags = cqe->flags;
	io_uring_cqe_seen(ring, cqe);
	return c;
}
#define t_reap(ring) t_reap_at((ring), __FILE__, __LINE__)

/* Fail if a CQE is already available (nothing should have completed). */
#define t_expect_no_cqe(ring)						\
	do {								\
		struct io_uring_cqe *t_c_ = NULL;			\
		int t_r_ = io_uring_peek_cqe(ring, &t_c_);		\
		if (t_r_ == 0 && t_c_)					\
			T_FAIL("unexpected cqe: user_data=%llu res=%d",	\
			       (unsigned long long)t_c_->user_data,	\
			       t_c_->res);				\
	} while (0)

/*
 * Create an anonymous temp file in /tmp (unlinked at once, so nothing is left
 * behind even if the test fails), filled with @size bytes of t_pattern().
 */
static inline unsigned char t_pattern(size_t off, unsigned seed)
{
	return (unsigned char)((off * 31u + seed * 7u + (off >> 8)) & 0xff);
}

static inline void t_fill(void *buf, size_t len, size_t off, unsigned seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = t_pattern(off + i, seed);
}

/* Returns -1 if it matches, else index of first mismatch. */
static inline long t_verify(const void *buf, size_t len, size_t off,
			    unsigned seed)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != t_pattern(off + i, seed))
			return (long)i;
	return -1;
}

static inline int t_tmpfile(size_t size, unsigned seed)
{
	char path[] = "/tmp/rsuring-test-XXXXXX";
	unsigned char buf[4096];
	size_t off = 0;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		T_FAIL("mkstemp: %s", strerror(errno));
	unlink(path);
	while (off < size) {
		size_t n = size - off < sizeof(buf) ? size - off : sizeof(buf);
		ssize_t w;

		t_fill(buf, n, off, seed);
		w = pwrite(fd, buf, n, (off_t)off);
		if (w != (ssize_t)n)
			T_FAIL("pwrite to tmpfile: %s", strerror(errno));
		off += n;
	}
	return fd;
}

static inline void t_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		T_FAIL("pipe: %s", strerror(errno));
}

static inline unsigned long long t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000ull +
	       (unsigned long long)ts.tv_nsec / 1000000ull;
}

static inline void t_msleep(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Waits up to `ms` for child `pid` to exit 0. A child still running then is
 * killed (a hang, e.g. a deadlock after fork) and the test fails, as it
 * does when the child fails or dies of a signal.
 */
static inline void t_wait_child(pid_t pid, long ms, const char *what)
{
	unsigned long long end = t_now_ms() + (unsigned long long)ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		CHECK_MSG(r == 0, "waitpid(%s): %s", what, strerror(errno));
		if (t_now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			T_FAIL("%s (pid %d) still running after %ld ms (a hang?)",
			       what, (int)pid, ms);
		}
		t_msleep(2);
	}
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "%s failed (status 0x%x: %s %d)", what, status,
		  WIFEXITED(status) ? "exit" : "signal",
		  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* Queues @n NOPs with user_data base, base + 1, ...; fails if the SQ is full. */
static inline void t_queue_nops_at(struct io_uring *ring, unsigned n,
				   uint64_t base, const char *file, int line)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = t_get_sqe_at(ring, file, line);

		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, base + i);
	}
}
#define t_queue_nops(ring, n, base)					\
	t_queue_nops_at((ring), (n), (base), __FILE__, __LINE__)

/*
 * The NOP round trip: @n NOPs (user_data base, base + 1, ...), one submit
 * that must take all of them, then each CQE in order with res 0.
 */
static inline void t_nop_round_trip_at(struct io_uring *ring, unsigned n,
				       uint64_t base, const char *file, int line)
{
	unsigned i;
	int ret;

	t_queue_nops_at(ring, n, base, file, line);
	ret = io_uring_submit(ring);
	if (ret != (int)n)
		t_fail_at(file, line, "io_uring_submit returned %d (%s), expected %u",
			  ret, ret < 0 ? strerror(-ret) : "ok", n);
	for (i = 0; i < n; i++) {
		struct t_cqe c = t_reap_at(ring, file, line);

		if (c.user_data != base + i || c.res != 0)
			t_fail_at(file, line,
				  "NOP %u of %u: user_data %llu res %d, expected user_data %llu res 0",
				  i, n, (unsigned long long)c.user_data, c.res,
				  (unsigned long long)(base + i));
	}
}
#define t_nop_round_trip(ring, n, base)					\
	t_nop_round_trip_at((ring), (n), (base), __FILE__, __LINE__)

static inline void t_queue_init(struct io_uring *ring, unsigned entries,
				unsigned flags)
{
	int ret = io_uring_queue_init(entries, ring, flags);

	if (ret < 0)
		T_FAIL("io_uring_queue_init(%u, flags=0x%x) failed: %d (%s)",
		       entries, flags, ret, strerror(-ret));
}

#endif /* RSURING_TEST_HELPERS_H */
