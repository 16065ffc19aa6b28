/* SPDX-License-Identifier: MIT */
/*
 * The one helper header of rsuring's C test programs: every program in
 * tests/<driver>/ includes it as "../rsuring_test.h". It compiles
 * against rsuring's include/ and against Debian's liburing 2.3 header
 * alike (the rsuring.h helpers only when <rsuring.h> was included first).
 *
 * Every test is a standalone program that uses only the public liburing
 * API (and <rsuring.h> where it tests an extension). Exit status: 0 =
 * pass, 77 = skipped (the kernel lacks the feature; the test drivers make
 * that a failure under RSURING_STRICT=1), anything else = failure, with a
 * message on stderr naming the failing check, the current step (T_STEP)
 * and the process.
 *
 * A watchdog (SIGALRM, armed by a constructor) fails the program when it
 * makes no progress for T_WATCHDOG_SECS seconds (define it before the
 * include for another allowance), so a hang reports *where* it hung
 * instead of just being killed by the driver. Progress is a step change or
 * a T_PROGRESS() (e.g. a reaped completion); a slow but moving program is
 * left to the driver's overall timeout. A fork()ed child that needs its
 * own watchdog calls t_arm_watchdog().
 *
 * Sections: checks and the watchdog; rings (SQEs, CQEs, NOPs); data files;
 * skips under RSURING_STRICT; SQ threads of this process; I/O on rings
 * that may have an SQ thread; rsuring.h extensions; the RSURING_SQPOLL=1
 * contract (ring mode, credentials); and, with T_CASE_PROGRAM defined
 * before the include, programs made of cases that each run in a child
 * (the drop-in tests).
 */
#ifndef RSURING_TEST_HELPERS_H
#define RSURING_TEST_HELPERS_H

#include <liburing.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
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

/* ---- checks and the watchdog ------------------------------------------- */

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

/* ---- rings: SQEs, CQEs, NOPs ------------------------------------------- */

static inline struct io_uring_sqe *t_get_sqe_at(struct io_uring *ring,
						 const char *file, int line)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		t_fail_at(file, line, "io_uring_get_sqe returned NULL");
	return sqe;
}
#define t_get_sqe(ring) t_get_sqe_at((ring), __FILE__, __LINE__)

/*
 * t_queue(ring, user_data, io_uring_prep_read, fd, buf, len, off): the next
 * SQE, prepared by the io_uring_prep_* helper with the arguments that
 * follow it, with @user_data; returns the SQE (for flags). t_submit1 also
 * submits it, alone.
 */
#define t_queue(ring, user_data, prep, ...)				\
	({								\
		struct io_uring_sqe *t_sqe_ = t_get_sqe(ring);		\
		prep(t_sqe_, ##__VA_ARGS__);				\
		io_uring_sqe_set_data64(t_sqe_, (user_data));		\
		t_sqe_;							\
	})
#define t_submit1(ring, user_data, prep, ...)				\
	do {								\
		t_queue((ring), (user_data), prep, ##__VA_ARGS__);	\
		t_submit_expect((ring), 1);				\
	} while (0)

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

#define T_ANY_RES INT32_MIN

/* Reaps one CQE, which must be @user_data's, with @res (T_ANY_RES: any, for
 * the caller to check); returns it. */
static inline struct t_cqe t_reap_expect_at(struct io_uring *ring, uint64_t user_data,
					    int32_t res, const char *file, int line)
{
	struct t_cqe c = t_reap_at(ring, file, line);

	if (c.user_data != user_data)
		t_fail_at(file, line, "CQE user_data %llu (res %d), expected %llu",
			  (unsigned long long)c.user_data, c.res,
			  (unsigned long long)user_data);
	if (res != T_ANY_RES && c.res != res)
		t_fail_at(file, line, "user_data %llu: res %d (%s), expected %d",
			  (unsigned long long)c.user_data, c.res,
			  c.res < 0 ? strerror(-c.res) : "ok", res);
	return c;
}
#define t_reap_expect(ring, user_data, res)				\
	t_reap_expect_at((ring), (user_data), (res), __FILE__, __LINE__)

/*
 * Reaps one CQE for each of want[0..n), in whatever order they complete:
 * each user_data exactly once, each with its res (T_ANY_RES: any, for the
 * caller to check). got[i] (when got is not NULL) is want[i]'s CQE.
 *   t_reap_each(ring, NULL, { 10, -ECANCELED }, { 11, 0 });
 */
struct t_want {
	uint64_t user_data;
	int32_t res;
};

static inline void t_reap_each_at(struct io_uring *ring, const struct t_want *want,
				  unsigned n, struct t_cqe *got, const char *file,
				  int line)
{
	unsigned long long seen = 0;
	unsigned i, k;

	if (n > 64)
		t_fail_at(file, line, "t_reap_each: %u CQEs, at most 64", n);
	for (i = 0; i < n; i++) {
		struct t_cqe c = t_reap_at(ring, file, line);

		for (k = 0; k < n; k++)
			if (!(seen & (1ull << k)) && want[k].user_data == c.user_data)
				break;
		if (k == n)
			t_fail_at(file, line, "CQE %u of %u: unexpected user_data %llu (res %d)",
				  i + 1, n, (unsigned long long)c.user_data, c.res);
		if (want[k].res != T_ANY_RES && c.res != want[k].res)
			t_fail_at(file, line, "user_data %llu: res %d (%s), expected %d",
				  (unsigned long long)c.user_data, c.res,
				  c.res < 0 ? strerror(-c.res) : "ok", want[k].res);
		seen |= 1ull << k;
		if (got)
			got[k] = c;
	}
}
#define t_reap_each(ring, got, ...)					\
	t_reap_each_at((ring), (const struct t_want[]){ __VA_ARGS__ },	\
		       sizeof((const struct t_want[]){ __VA_ARGS__ }) /	\
			       sizeof(struct t_want),			\
		       (got), __FILE__, __LINE__)

/* A relative timeout of @ms milliseconds. */
static inline struct __kernel_timespec t_timeout_ms(long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	return ts;
}

/*
 * Waits up to @ms for one CQE and returns it (marked seen); fails, naming
 * @what, if none comes.
 */
static inline struct t_cqe t_reap_within_at(struct io_uring *ring, long ms,
					    const char *what, const char *file,
					    int line)
{
	struct __kernel_timespec ts = t_timeout_ms(ms);
	struct io_uring_cqe *cqe = NULL;
	struct t_cqe c;
	int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

	if (ret < 0 || !cqe)
		t_fail_at(file, line, "%s: no CQE within %ld ms (%d: %s)", what,
			  ms, ret, strerror(-ret));
	c.user_data = cqe->user_data;
	c.res = cqe->res;
	c.flags = cqe->flags;
	io_uring_cqe_seen(ring, cqe);
	T_PROGRESS();
	return c;
}
#define t_reap_within(ring, ms, what)					\
	t_reap_within_at((ring), (ms), (what), __FILE__, __LINE__)

/* Fails unless the CQ is empty (nothing should have completed). */
static inline void t_cq_empty_at(struct io_uring *ring, const char *what,
				 const char *file, int line)
{
	struct io_uring_cqe *cqe = NULL;

	if (io_uring_peek_cqe(ring, &cqe) == 0 && cqe)
		t_fail_at(file, line, "%s: unexpected CQE user_data=%llu (0x%llx) res=%d",
			  what, (unsigned long long)cqe->user_data,
			  (unsigned long long)cqe->user_data, cqe->res);
}
#define t_cq_empty(ring, what) t_cq_empty_at((ring), (what), __FILE__, __LINE__)
#define t_expect_no_cqe(ring) t_cq_empty_at((ring), #ring, __FILE__, __LINE__)

/* ---- data files ---------------------------------------------------------- */

/*
 * t_pattern(off, seed): the byte at @off of the data a test writes and
 * checks; t_tmpfile() creates an anonymous temp file in /tmp (unlinked at
 * once, so nothing is left behind even if the test fails) filled with
 * @size bytes of it.
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

/* The data file of the SQPOLL and RSURING_SQPOLL=1 tests: T_DATA_SIZE bytes
 * of t_pattern(off, T_DATA_SEED), on disk (fsync) before it is read. */
#define T_DATA_SIZE (512 * 1024)
#define T_CHUNK 4096
#define T_DATA_SEED 90

static T_UNUSED int t_data_file(void)
{
	int fd = t_tmpfile(T_DATA_SIZE, T_DATA_SEED);

	CHECK_SYS(fsync(fd));
	return fd;
}

/* Fails unless @buf holds the data file's @len bytes at @off. */
static T_UNUSED void t_check_data(const unsigned char *buf, size_t len, size_t off,
				  const char *what)
{
	long bad = t_verify(buf, len, off, T_DATA_SEED);

	if (bad >= 0)
		T_FAIL("%s: byte %ld of the read at offset %zu is 0x%02x, want 0x%02x",
		       what, bad, off, buf[bad],
		       t_pattern(off + (size_t)bad, T_DATA_SEED));
}

/* ---- processes, clocks, pipes -------------------------------------------- */

/* The file that serves io_uring_queue_init (liburing or rsuring), or NULL. */
static inline const char *t_library(void)
{
	Dl_info info;

	if (dladdr((void *)io_uring_queue_init, &info) && info.dli_fname)
		return info.dli_fname;
	return NULL;
}

/* "impl=<t_library()>", for a driver to check which library ran. */
static T_UNUSED void print_impl(void)
{
	const char *lib = t_library();

	CHECK_MSG(lib != NULL, "dladdr cannot name the file of io_uring_queue_init");
	printf("impl=%s\n", lib);
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
#define t_queue_nop(ring, data) t_queue_nops_at((ring), 1, (data), __FILE__, __LINE__)

/* Queues an SQE the kernel rejects at submission (an unknown opcode). */
static inline void t_queue_bad_at(struct io_uring *ring, uint64_t data,
				  const char *file, int line)
{
	struct io_uring_sqe *sqe = t_get_sqe_at(ring, file, line);

	io_uring_prep_nop(sqe);
	sqe->opcode = 0xff;
	io_uring_sqe_set_data64(sqe, data);
}
#define t_queue_bad(ring, data) t_queue_bad_at((ring), (data), __FILE__, __LINE__)

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

/*
 * io_uring_queue_init_params with params that are all zero but `flags`;
 * returns its result (the kernel's answer is left in *p).
 */
static inline int t_init_params(struct io_uring *ring, unsigned entries,
				struct io_uring_params *p, unsigned flags)
{
	memset(p, 0, sizeof(*p));
	p->flags = flags;
	return io_uring_queue_init_params(entries, ring, p);
}

/* ---- skips under RSURING_STRICT ---------------------------------------- */

/* RSURING_STRICT=1 (CI): a check that cannot run is a failure. */
static inline int t_strict(void)
{
	const char *s = getenv("RSURING_STRICT");

	return s && strcmp(s, "1") == 0;
}

/* A precondition is missing: skip, or fail under RSURING_STRICT=1. */
#define T_SKIP_OR_FAIL(...)						\
	do {								\
		if (t_strict())						\
			T_FAIL("RSURING_STRICT=1 and a check cannot run: " __VA_ARGS__); \
		T_SKIP(__VA_ARGS__);					\
	} while (0)

/* Teardown of a kernel SQ thread is asynchronous (a workqueue item): wait
 * this long for it. Usually milliseconds; generous for loaded CI machines. */
#define SQ_THREAD_GONE_MS 15000

/* ---- SQ threads of this process ----------------------------------------- */

/* Open file descriptors of this process (the directory's own fd included,
 * which cancels out when two counts are compared). */
static T_UNUSED int count_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	CHECK(d != NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * The number on the "<name>:" line of a /proc file (the last such line),
 * in @base (16 for the Cap* lines of status): 1 and *v when there is one,
 * 0 and *v untouched when not. Fails when the file cannot be read.
 */
static T_UNUSED int t_proc_value(const char *path, const char *name, int base,
				 long long *v)
{
	size_t len = strlen(name);
	char line[256];
	int found = 0;
	FILE *f = fopen(path, "r");

	CHECK_MSG(f != NULL, "open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			*v = base == 10 ? strtoll(line + len + 1, NULL, 10)
					: (long long)strtoull(line + len + 1, NULL, base);
			found = 1;
		}
	fclose(f);
	return found;
}

/* Whether fd @fd of this process is an io_uring instance (its
 * /proc/self/fd link says so even while its fdinfo is short). */
static T_UNUSED int t_is_io_uring_fd(int fd)
{
	static const char want[] = "anon_inode:[io_uring]";
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return !strcmp(target, want);
}

/*
 * t_proc_value of /proc/self/fdinfo/<fd> (SqThread, SqThreadCpu, ...).
 *
 * The kernel prints a ring's details (from SqMask on) only when it gets
 * the ring's lock at once; a ring's SQ poll thread holds it for each batch
 * it submits, and may still hold it when the batch's CQEs have already
 * been reaped. So while an io_uring fd's fdinfo has no SqHead line this
 * asks again: yielding first, then sleeping 1 ms, for about 2 s in all.
 */
static T_UNUSED int t_fdinfo_value(int fd, const char *name, long long *v)
{
	char path[64];
	long long head;
	int attempt;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	for (attempt = 0; attempt < 2100; attempt++) {
		if (t_proc_value(path, "SqHead", 10, &head) ||
		    !t_is_io_uring_fd(fd))
			break;
		if (attempt < 100)
			sched_yield();
		else
			usleep(1000);
	}
	return t_proc_value(path, name, 10, v);
}

#define SQ_PF_IO_WORKER 0x00000010	/* kernel PF_IO_WORKER task flag */

/* One pass over /proc/self/task: counts the SQ poll threads (comm
 * "iou-sqp-<pid>") and fills tids[] (up to max). Sets *settled to 0 when
 * some io_uring kernel thread (PF_IO_WORKER) has not named itself yet: a
 * new SQ thread carries its creator's comm until it first runs, so such a
 * snapshot may undercount. */
static T_UNUSED int sqp_snapshot(int *tids, int max, int *settled)
{
	char path[300], stat[512];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	CHECK(d != NULL);
	*settled = 1;
	while ((de = readdir(d))) {
		char *open_paren, *close_paren, *fields;
		unsigned long flags = 0;
		size_t len;
		FILE *f;
		int i;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* the thread just exited */
		len = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
		stat[len] = '\0';
		open_paren = strchr(stat, '(');
		close_paren = strrchr(stat, ')');
		if (!open_paren || !close_paren || close_paren < open_paren)
			continue;
		*close_paren = '\0';
		/* after ")": state ppid pgrp session tty_nr tpgid flags */
		fields = close_paren + 1;
		for (i = 0; i < 6 && fields; i++)
			fields = strchr(fields + 1, ' ');
		if (fields)
			flags = strtoul(fields + 1, NULL, 10);
		if (!strncmp(open_paren + 1, "iou-sqp-", 8)) {
			if (tids && n < max)
				tids[n] = atoi(de->d_name);
			n++;
		} else if ((flags & SQ_PF_IO_WORKER) &&
			   strncmp(open_paren + 1, "iou-", 4)) {
			*settled = 0;
		}
	}
	closedir(d);
	return n;
}

/* Lists the kernel SQ poll threads ("iou-sqp-<pid>") of this process:
 * returns how many; fills tids[] (up to max) when non-NULL. Retries (up to
 * 2 s) until no io_uring kernel thread is still unnamed. */
static T_UNUSED int list_sqp_threads(int *tids, int max)
{
	unsigned long long end = t_now_ms() + 2000;
	int settled, n;

	for (;;) {
		n = sqp_snapshot(tids, max, &settled);
		if (settled || t_now_ms() >= end)
			return n;
		t_msleep(1);
	}
}

static T_UNUSED int count_sqp_threads(void)
{
	return list_sqp_threads(NULL, 0);
}

/* Polls until the SQ thread count equals `want` or `timeout_ms` passes;
 * returns the last count seen. Thread exit is asynchronous in the kernel. */
static T_UNUSED int wait_sqp_threads(int want, long timeout_ms)
{
	unsigned long long end = t_now_ms() + timeout_ms;
	int n;

	for (;;) {
		n = count_sqp_threads();
		if (n == want || t_now_ms() >= end)
			return n;
		t_msleep(10);
	}
}

/* The CPU a thread is restricted to, from Cpus_allowed_list: the CPU number
 * when it is exactly one CPU, -1 when it may run on several, -2 if the
 * thread is gone. */
static T_UNUSED int thread_single_cpu(int tid)
{
	char path[100], line[256];
	FILE *f;
	int cpu = -2;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		char *v, *end;
		long c;

		if (strncmp(line, "Cpus_allowed_list:", 18))
			continue;
		v = line + 18;
		while (*v == ' ' || *v == '\t')
			v++;
		c = strtol(v, &end, 10);
		cpu = (end != v && (*end == '\n' || *end == '\0')) ? (int)c : -1;
		break;
	}
	fclose(f);
	return cpu;
}

/* Prints "<label>=c1,c2,..." : the CPU binding of each SQ thread (-1 =
 * unbound), sorted, for a driver to check. */
static T_UNUSED void print_sqp_cpus(const char *label)
{
	int tids[64], cpus[64];
	int n = list_sqp_threads(tids, 64);
	int i, j;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++) {
		int c = thread_single_cpu(tids[i]);

		for (j = i; j > 0 && cpus[j - 1] > c; j--)
			cpus[j] = cpus[j - 1];
		cpus[j] = c;
	}
	printf("%s=", label);
	for (i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", cpus[i]);
	printf("\n");
}

/* Checks there are exactly `n` SQ threads and that their CPU bindings are
 * the multiset cpus[0..n) (-1 = unbound). Waits for stragglers first. */
#define CHECK_POLLERS(n, ...)						\
	check_pollers_at(__FILE__, __LINE__, (n), (const int[]){ __VA_ARGS__ })

static T_UNUSED void check_pollers_at(const char *file, int line, int n,
				       const int *cpus)
{
	int tids[64], got[64], used[64] = { 0 };
	int count = wait_sqp_threads(n, SQ_THREAD_GONE_MS);
	int i, j;

	if (count != n)
		t_fail_at(file, line, "expected %d iou-sqp threads, found %d",
			   n, count);
	count = list_sqp_threads(tids, 64);
	if (count != n)
		t_fail_at(file, line, "iou-sqp thread count changed: %d -> %d",
			   n, count);
	for (i = 0; i < n; i++)
		got[i] = thread_single_cpu(tids[i]);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			if (!used[j] && got[j] == cpus[i])
				break;
		if (j == n) {
			char buf[200];
			int off = 0;

			for (j = 0; j < n && off < 180; j++)
				off += snprintf(buf + off, sizeof(buf) - off,
						" tid %d cpu %d;", tids[j], got[j]);
			t_fail_at(file, line,
				   "no iou-sqp thread bound to cpu %d (-1 = unbound); threads:%s",
				   cpus[i], buf);
		}
		used[j] = 1;
	}
}

/* Waits for all SQ threads of the process to be gone. */
#define CHECK_NO_POLLERS()						\
	do {								\
		int _n = wait_sqp_threads(0, SQ_THREAD_GONE_MS);	\
		if (_n != 0)						\
			T_FAIL("%d iou-sqp thread(s) still alive %d ms after "\
			     "the last ring closed", _n, SQ_THREAD_GONE_MS);\
	} while (0)

/* Closes rings[0..n), then nothing may be left: as many fds as @fds0
 * (count_fds() before the rings), no SQ thread. */
static T_UNUSED void exit_rings_no_leak(struct io_uring *rings, int n, int fds0)
{
	int i;

	for (i = 0; i < n; i++)
		io_uring_queue_exit(&rings[i]);
	CHECK_EQ(count_fds(), fds0);
	CHECK_NO_POLLERS();
}

/* ---- I/O on rings that may have an SQ thread ---------------------------- */

/*
 * io_uring_submit's count on an SQPOLL ring is "SQ tail minus the kernel's
 * SQ head", as in liburing: the kernel posts the CQEs of a batch before it
 * publishes the new SQ head, so right after reaping a completion the head
 * may still count the SQEs of that batch. At least the new SQEs, at most a
 * ring's worth, is all that can be asserted.
 */
#define CHECK_SUBMITTED(ret, want, what)				\
	CHECK_MSG((ret) >= (want) && (ret) <= 64,			\
		  "io_uring_submit(%s) = %d (%s), want >= %d", (what), (ret),\
		  (ret) < 0 ? strerror(-(ret)) : "", (want))

static T_UNUSED struct io_uring_cqe *wait_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe = NULL;
	int ret = io_uring_wait_cqe(ring, &cqe);

	CHECK_MSG(ret == 0, "io_uring_wait_cqe: %d (%s)", ret, strerror(-ret));
	CHECK(cqe != NULL);
	T_PROGRESS();
	return cqe;
}

/* One NOP round trip on a ring that may have an SQ thread (see
 * CHECK_SUBMITTED; t_nop_round_trip is the exact one for other rings). */
static T_UNUSED void ring_nop(struct io_uring *ring, unsigned long long tag)
{
	struct io_uring_cqe *cqe;
	int ret;

	t_queue_nops(ring, 1, tag);
	ret = io_uring_submit(ring);
	CHECK_SUBMITTED(ret, 1, "NOP");
	cqe = wait_one(ring);
	CHECK_MSG(cqe->user_data == tag, "NOP user_data %llu, want %llu",
		  (unsigned long long)cqe->user_data, tag);
	CHECK_MSG(cqe->res == 0, "NOP res %d", cqe->res);
	io_uring_cqe_seen(ring, cqe);
}

/* Queues a read of `len` bytes at `off` (no submit). */
static T_UNUSED void queue_read(struct io_uring *ring, int fd, void *buf,
				 unsigned len, size_t off, unsigned long long tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK_MSG(sqe != NULL, "no SQE for a read");
	io_uring_prep_read(sqe, fd, buf, len, (__u64)off);
	io_uring_sqe_set_data64(sqe, tag);
}

/* A real read of one chunk through `ring`, checked against the pattern;
 * plus a NOP. `which` varies the offset so rings read different data. */
static T_UNUSED void ring_io(struct io_uring *ring, int fd, unsigned which)
{
	unsigned char buf[T_CHUNK];
	size_t off = ((size_t)which * T_CHUNK * 3 + 512) % (T_DATA_SIZE - T_CHUNK);
	struct io_uring_cqe *cqe;
	int ret;

	memset(buf, 0, sizeof(buf));
	queue_read(ring, fd, buf, sizeof(buf), off, 0xbeef00 + which);
	ret = io_uring_submit(ring);
	CHECK_SUBMITTED(ret, 1, "read");
	cqe = wait_one(ring);
	CHECK_MSG(cqe->user_data == 0xbeef00 + which, "read user_data %llu",
		  (unsigned long long)cqe->user_data);
	CHECK_MSG(cqe->res == T_CHUNK, "read res %d (%s)", cqe->res,
		  cqe->res < 0 ? strerror(-cqe->res) : "short");
	io_uring_cqe_seen(ring, cqe);
	t_check_data(buf, sizeof(buf), off, "ring_io");
	ring_nop(ring, 0x1000 + which);
}

/* Reads through several rings at once: all submitted before any is reaped. */
static T_UNUSED void rings_io_concurrent(struct io_uring *rings, int n, int fd)
{
	static unsigned char bufs[64][2][T_CHUNK];
	int i, k, ret;

	CHECK(n <= 64);
	for (i = 0; i < n; i++) {
		memset(bufs[i], 0, sizeof(bufs[i]));
		for (k = 0; k < 2; k++)
			queue_read(&rings[i], fd, bufs[i][k], T_CHUNK,
				   (size_t)(i * 2 + k) * T_CHUNK, (unsigned long long)(i * 2 + k));
		ret = io_uring_submit(&rings[i]);
		CHECK_SUBMITTED(ret, 2, "2 reads");
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < 2; k++) {
			struct io_uring_cqe *cqe = wait_one(&rings[i]);
			unsigned long long ud = cqe->user_data;

			CHECK_MSG(ud / 2 == (unsigned long long)i,
				  "ring %d got user_data %llu", i, ud);
			CHECK_MSG(cqe->res == T_CHUNK, "ring %d read res %d", i, cqe->res);
			io_uring_cqe_seen(&rings[i], cqe);
			t_check_data(bufs[i][ud % 2], T_CHUNK, (size_t)ud * T_CHUNK,
				   "concurrent read");
		}
	}
}

/* Skips when the kernel has no io_uring or forbids it here. */
static T_UNUSED void skip_if_no_io_uring(int ret)
{
	if (ret == -ENOSYS || ret == -EPERM)
		T_SKIP("io_uring unavailable: %s", strerror(-ret));
}

/* ---- rsuring.h extensions (with <rsuring.h> included first) -------------- */
#ifdef RSURING_H

/* Creates a shared SQPOLL ring; cpu >= 0 pins it (SQ_AFF), cpu < 0 leaves
 * placement to the library. Returns the setup result. */
static T_UNUSED int shared_ring_init(struct io_uring *ring, int cpu, unsigned entries)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQPOLL_PERCPU;
	if (cpu >= 0) {
		p.flags |= IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = (unsigned)cpu;
	}
	return io_uring_queue_init_params(entries, ring, &p);
}

static T_UNUSED void shared_ring(struct io_uring *ring, int cpu)
{
	int ret = shared_ring_init(ring, cpu, 8);

	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "shared ring on cpu %d: setup returned %d (%s)", cpu,
		  ret, strerror(-ret));
	CHECK_MSG(ring->flags & IORING_SETUP_SQPOLL, "ring.flags 0x%x lacks SQPOLL",
		  ring->flags);
	CHECK_MSG(!(ring->flags & IORING_SETUP_SQPOLL_PERCPU),
		  "ring.flags 0x%x shows the library-only PERCPU bit", ring->flags);
	CHECK_MSG(!(ring->flags & IORING_SETUP_ATTACH_WQ),
		  "ring.flags 0x%x shows ATTACH_WQ the application did not ask for",
		  ring->flags);
}

/* Checks rsuring_sqpoll_group(ring) = { cpu, members }. */
#define CHECK_GROUP(ring, want_cpu, want_members)			\
	do {								\
		struct rsuring_sqpoll_info _gi = { -7, 9999 };		\
		int _r = rsuring_sqpoll_group((ring), &_gi);		\
		if (_r != 0)						\
			T_FAIL("rsuring_sqpoll_group(%s) = %d (%s)", #ring, _r,\
			     strerror(-_r));				\
		if (_gi.cpu != (want_cpu) || _gi.members != (unsigned)(want_members))\
			T_FAIL("rsuring_sqpoll_group(%s): cpu %d members %u, want cpu %d members %u",\
			     #ring, _gi.cpu, _gi.members, (int)(want_cpu),	\
			     (unsigned)(want_members));			\
	} while (0)

#endif /* RSURING_H */

/* ---- the RSURING_SQPOLL=1 contract: ring mode, credentials --------------- */

/*
 * The transparent-mode programs take the expected ring mode as their first
 * argument where it matters: "plain" (no SQ thread: the library refused,
 * or RSURING_SQPOLL is unset) or "transparent" (the library gave the plain
 * ring a shared SQ thread). The ring mode is read from the kernel (fdinfo
 * SqThread, the process's iou-sqp threads), not only from ring.flags.
 * They print nothing on stderr themselves when they pass: whatever is
 * there is the library's (its notes), for the driver to count.
 */

#define NOBODY_ID 65534

/* The SqThread line of the ring's fdinfo: the SQ thread's tid, or -1 when
 * the ring has none (or the line is absent). */
static T_UNUSED long ring_sq_thread(int ring_fd)
{
	long long tid = -1;

	t_fdinfo_value(ring_fd, "SqThread", &tid);
	return (long)tid;
}

/* Whether `tid` is one of this process's SQ poll threads. */
static T_UNUSED int is_own_sqp_thread(long tid)
{
	char path[100], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "iou-sqp-", 8);
}

/* A plain ring: no SQPOLL in ring.flags, no SQ thread in fdinfo. (A
 * transparent ring shows no SQPOLL in ring.flags either: the application
 * sees the setup it asked for; only the kernel's fdinfo tells.) With
 * `whole_process`, no iou-sqp thread in the process either (only where the
 * program created no SQPOLL ring of its own). */
static T_UNUSED void check_plain_ring_at(const char *file, int line,
					  struct io_uring *ring, int whole_process)
{
	long tid = ring_sq_thread(ring->ring_fd);
	int threads;

	if (ring->flags & IORING_SETUP_SQPOLL)
		t_fail_at(file, line, "ring fd %d: ring.flags 0x%x has SQPOLL, want a plain ring",
			   ring->ring_fd, ring->flags);
	if (tid != -1)
		t_fail_at(file, line, "ring fd %d: fdinfo SqThread %ld, want -1 (plain ring)",
			   ring->ring_fd, tid);
	if (whole_process && (threads = count_sqp_threads()) != 0)
		t_fail_at(file, line, "%d iou-sqp thread(s) in a process whose rings must be plain",
			   threads);
}

#define CHECK_PLAIN_RING(ring) check_plain_ring_at(__FILE__, __LINE__, (ring), 1)

/* A transparent ring: ring.flags as the application asked (no SQPOLL) and
 * an SQ thread of this process in fdinfo. Returns the thread's tid. */
static T_UNUSED long check_transparent_ring_at(const char *file, int line,
						struct io_uring *ring)
{
	unsigned long long end = t_now_ms() + 2000;
	long tid = ring_sq_thread(ring->ring_fd);

	if (ring->flags & IORING_SETUP_SQPOLL)
		t_fail_at(file, line,
			   "ring fd %d: ring.flags 0x%x shows SQPOLL: a transparent ring must "
			   "look like the plain ring the application asked for",
			   ring->ring_fd, ring->flags);
	/* Until a new SQ thread first runs, fdinfo shows its creator's tid and
	 * the thread its creator's comm. */
	while (tid > 0 && !is_own_sqp_thread(tid) && t_now_ms() < end) {
		t_msleep(1);
		tid = ring_sq_thread(ring->ring_fd);
	}
	if (tid <= 0)
		t_fail_at(file, line, "ring fd %d: fdinfo SqThread %ld, want an SQ thread",
			   ring->ring_fd, tid);
	if (!is_own_sqp_thread(tid))
		t_fail_at(file, line, "ring fd %d: SqThread %ld is not an iou-sqp thread of pid %d",
			   ring->ring_fd, tid, (int)getpid());
	return tid;
}

#define CHECK_TRANSPARENT_RING(ring) check_transparent_ring_at(__FILE__, __LINE__, (ring))

/* argv[1]: "plain" -> 0, "transparent" -> 1. */
static T_UNUSED int expect_transparent(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "transparent"))
		return 1;
	if (argc >= 2 && !strcmp(argv[1], "plain"))
		return 0;
	fprintf(stderr, "usage: %s plain|transparent [...]\n", argv[0]);
	exit(2);
}

static T_UNUSED void check_ring_mode_at(const char *file, int line,
					 struct io_uring *ring, int transparent)
{
	if (transparent)
		check_transparent_ring_at(file, line, ring);
	else
		check_plain_ring_at(file, line, ring, 1);
}

#define CHECK_RING_MODE(ring, transparent)				\
	check_ring_mode_at(__FILE__, __LINE__, (ring), (transparent))

/* A plain ring as the application asks for it (io_uring_queue_init with
 * flags 0), skipped without io_uring, checked to be in the expected mode. */
static T_UNUSED void contract_ring_at(const char *file, int line, struct io_uring *ring,
				       unsigned entries, int transparent)
{
	int ret = io_uring_queue_init(entries, ring, 0);

	skip_if_no_io_uring(ret);
	if (ret != 0)
		t_fail_at(file, line, "setup = %d (%s)", ret, strerror(-ret));
	check_ring_mode_at(file, line, ring, transparent);
}

#define CONTRACT_RING(ring, entries, transparent)			\
	contract_ring_at(__FILE__, __LINE__, (ring), (entries), (transparent))

/* One field of /proc/self/status as a number (hex for the Cap* lines). */
static T_UNUSED unsigned long long status_field(const char *name, int base)
{
	long long v = 0;

	CHECK_MSG(t_proc_value("/proc/self/status", name, base, &v),
		  "no %s in /proc/self/status", name);
	return (unsigned long long)v;
}

/* No capability in any set a process could use or regain. */
static T_UNUSED int has_no_capabilities(void)
{
	return status_field("CapPrm", 16) == 0 && status_field("CapEff", 16) == 0 &&
	       status_field("CapAmb", 16) == 0;
}

/* Drops a root process to nobody/nogroup for good: no supplementary
 * groups, all uids and gids 65534, no capabilities. Stays dumpable so its
 * /proc/self files remain readable to it. */
static T_UNUSED void become_nobody(void)
{
	uid_t r, e, s;

	CHECK_MSG(setgroups(0, NULL) == 0, "setgroups: %s", strerror(errno));
	CHECK_MSG(setresgid(NOBODY_ID, NOBODY_ID, NOBODY_ID) == 0, "setresgid: %s",
		  strerror(errno));
	CHECK_MSG(setresuid(NOBODY_ID, NOBODY_ID, NOBODY_ID) == 0, "setresuid: %s",
		  strerror(errno));
	CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0);
	CHECK(getresuid(&r, &e, &s) == 0);
	CHECK(r == NOBODY_ID && e == NOBODY_ID && s == NOBODY_ID);
	CHECK_MSG(has_no_capabilities(), "capabilities left after dropping to nobody");
}

/* The process cannot change its credentials: what the contract calls
 * unprivileged (checked before expecting a transparent ring). */
static T_UNUSED void check_unprivileged(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	CHECK(getresuid(&ru, &eu, &su) == 0 && getresgid(&rg, &eg, &sg) == 0);
	CHECK_MSG(ru != 0 && eu != 0 && su != 0, "uids %d/%d/%d: run this as an unprivileged user",
		  (int)ru, (int)eu, (int)su);
	CHECK_MSG(ru == eu && eu == su && rg == eg && eg == sg,
		  "uids %d/%d/%d gids %d/%d/%d differ", (int)ru, (int)eu, (int)su,
		  (int)rg, (int)eg, (int)sg);
	CHECK_MSG(has_no_capabilities(), "the process holds capabilities");
	CHECK_MSG(getauxval(AT_SECURE) == 0, "AT_SECURE is set");
}

/* SIGALRM after `secs`: fails the program naming `what` (a hang). */
static T_UNUSED const char *tp_alarm_what = "";

static T_UNUSED void tp_alarm_fired(int sig)
{
	char msg[300];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg), "FAIL hang: %s did not return within the alarm [pid %d]\n",
		     tp_alarm_what, (int)getpid());
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		_exit(T_EXIT_FAIL);
	_exit(T_EXIT_FAIL);
}

static T_UNUSED void hang_alarm(unsigned secs, const char *what)
{
	tp_alarm_what = what;
	signal(SIGALRM, tp_alarm_fired);
	alarm(secs);
}

/* Back to the progress watchdog. */
static T_UNUSED void hang_alarm_off(void)
{
	t_arm_watchdog();
}

/* Reaps `n` CQEs of NOPs (1 s timeout each), each with res 0. */
static T_UNUSED void reap_nops(struct io_uring *ring, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct t_cqe c = t_reap_within(ring, 1000, "a NOP's CQE");

		CHECK_MSG(c.res == 0, "CQE %u of %u (user_data %llu): res %d", i, n,
			  (unsigned long long)c.user_data, c.res);
	}
}

/* 3 rings as the process is: each in the expected mode (checked when it is
 * created, with the others live), each reads the data file correctly. */
static T_UNUSED void use_rings(int transparent)
{
	struct io_uring ring[3];
	int data_fd = t_data_file();
	int i;

	for (i = 0; i < 3; i++) {
		T_STEP("ring %d", i);
		CONTRACT_RING(&ring[i], 8, transparent);
		ring_io(&ring[i], data_fd, (unsigned)i);
	}
	for (i = 0; i < 3; i++)
		ring_io(&ring[i], data_fd, (unsigned)i + 3);
	for (i = 0; i < 3; i++)
		io_uring_queue_exit(&ring[i]);
	close(data_fd);
}

/* ---- programs made of cases (T_CASE_PROGRAM) ---------------------------- */
#ifdef T_CASE_PROGRAM

/*
 * A program is a list of cases. Each case runs in its own fork()ed child
 * with its own watchdog, so a case that hangs (the bugs under test hang)
 * is reported by name and the others still run. Exit status of the
 * program: 0 all cases passed, 1 a case failed, 77 a case was skipped
 * (a kernel feature or a precondition is missing; the driver turns that
 * into a failure under RSURING_STRICT=1) and none failed.
 *
 * The drop-in tests (c_tests/dropin/, driven by tests/dropin.rs) are such
 * programs: built against Debian's liburing 2.3 header, each runs on
 * Debian's liburing.so.2 and on rsuring, and both runs must pass, which
 * proves the program describes liburing's behaviour and not ours. Built
 * against rsuring's header, T_RSURING_HEADER is defined and <rsuring.h>'s
 * extensions are there.
 */
#if __has_include(<rsuring.h>)
#include <rsuring.h>
#define T_RSURING_HEADER 1
#endif

/* Which library serves liburing's calls: the driver checks this line. */
__attribute__((constructor)) static void t_report_library(void)
{
	const char *lib = t_library();

	fprintf(stderr, "library: %s\n", lib ? lib : "unknown");
}

/* rsuring exports its extensions; liburing has none of them. */
static inline int t_on_rsuring(void)
{
	return dlsym(RTLD_DEFAULT, "rsuring_sqpoll_group") != NULL;
}

struct t_case {
	const char *name;
	void (*run)(void);
};

/*
 * Runs every case in a child of its own; prints one line per case on
 * stdout. Returns the program's exit status.
 */
static int t_run_cases(const struct t_case *cases, size_t n)
{
	int failed = 0, skipped = 0;
	size_t i;

	/* The children have their own watchdogs; the driver times us out. */
	alarm(0);
	for (i = 0; i < n; i++) {
		int status = 0;
		pid_t pid;

		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "fork: %s\n", strerror(errno));
			return T_EXIT_FAIL;
		}
		if (pid == 0) {
			T_STEP(cases[i].name);
			alarm(T_WATCHDOG_SECS);
			cases[i].run();
			fflush(stdout);
			_exit(T_EXIT_PASS);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) && WEXITSTATUS(status) == T_EXIT_PASS) {
			printf("case %s: ok\n", cases[i].name);
		} else if (WIFEXITED(status) &&
			   WEXITSTATUS(status) == T_EXIT_SKIP) {
			printf("case %s: skipped\n", cases[i].name);
			skipped++;
		} else {
			if (WIFSIGNALED(status))
				printf("case %s: FAILED (signal %d)\n",
				       cases[i].name, WTERMSIG(status));
			else
				printf("case %s: FAILED\n", cases[i].name);
			failed++;
		}
	}
	fflush(stdout);
	if (failed)
		return T_EXIT_FAIL;
	return skipped ? T_EXIT_SKIP : T_EXIT_PASS;
}

#define T_CASES_MAIN(cases)						\
	int main(void)							\
	{								\
		return t_run_cases(cases,				\
					sizeof(cases) / sizeof(cases[0])); \
	}

#endif /* T_CASE_PROGRAM */

#endif /* RSURING_TEST_HELPERS_H */
