/* SPDX-License-Identifier: MIT */
/*
 * Tiny shared helpers for the rsuring C tests.
 *
 * Every test is a standalone program that uses only the public liburing API.
 * Exit status: 0 = pass, 77 = skipped (kernel lacks the feature), anything
 * else = failure, with a message on stderr naming the failing check.
 *
 * A watchdog (SIGALRM, installed by a constructor) fails the test if it runs
 * for more than T_WATCHDOG_SECS seconds, so a hang reports *where* it hung
 * (the last T_STEP label) instead of just being killed by the driver.
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
static const char *t_step T_UNUSED = "start";
#define T_STEP(name) (t_step = (name))

static void t_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4), unused));
static void t_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d [step: %s]: ", file, line, t_step);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	exit(T_EXIT_FAIL);
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
	char buf[256];
	int n;

	(void)sig;
	n = snprintf(buf, sizeof(buf),
		     "FAIL: watchdog: test still running after %d s [step: %s]\n",
		     T_WATCHDOG_SECS, t_step);
	if (n > 0)
		(void)!write(STDERR_FILENO, buf, (size_t)n);
	_exit(T_EXIT_FAIL);
}

__attribute__((constructor)) static void t_install_watchdog(void)
{
	signal(SIGALRM, t_watchdog);
	alarm(T_WATCHDOG_SECS);
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

static inline void t_queue_init(struct io_uring *ring, unsigned entries,
				unsigned flags)
{
	int ret = io_uring_queue_init(entries, ring, flags);

	if (ret < 0)
		T_FAIL("io_uring_queue_init(%u, flags=0x%x) failed: %d (%s)",
		       entries, flags, ret, strerror(-ret));
}

#endif /* RSURING_TEST_HELPERS_H */
