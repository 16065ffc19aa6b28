/* SPDX-License-Identifier: MIT */
/*
 * The one helper pair of rsuring's C test programs: every program in
 * c_tests/<area>/ includes this header as "../rsuring_test.h" and is
 * linked with c_tests/rsuring_test.c, which holds the function bodies
 * (tests/common/cbuild.rs compiles it into every program, with
 * -ffunction-sections and --gc-sections, so a program carries only the
 * helpers it calls). Both compile against rsuring's include/ and against
 * Debian's liburing 2.3 header alike (the rsuring.h helpers only when
 * <rsuring.h> was included first). The declarations are hidden: a shared
 * object built with them (an LD_PRELOAD shim) exports none of them.
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
 * own watchdog calls t_arm_watchdog(). A program that handles SIGALRM
 * itself, or is not a process of its own (an LD_PRELOAD shim), or must
 * keep its stdio and signals as they are, defines T_NO_WATCHDOG before
 * the include: it then has no watchdog, line-buffered stdout or ignored
 * SIGPIPE from this header.
 *
 * Sections: checks and the watchdog; rings (SQEs, CQEs, NOPs); data files;
 * skips under RSURING_STRICT; SQ threads of this process; I/O on rings
 * that may have an SQ thread; rsuring.h extensions; the RSURING_SQPOLL=1
 * contract (ring mode, credentials); programs made of cases that each
 * run in a child (the drop-in tests; T_CASE_PROGRAM defined before the
 * include adds the library report); printed differentials (the
 * differential and hostile programs, each run on two libraries with
 * their outputs compared).
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
#include <sys/syscall.h>
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

#pragma GCC visibility push(hidden)

/* ---- checks and the watchdog ------------------------------------------- */

/* Label of the current step, printed by the watchdog and by failures. */
extern const char *volatile t_step;

/* Progress marks for the watchdog. */
extern unsigned long t_progress_count;
#define T_PROGRESS() __atomic_fetch_add(&t_progress_count, 1, __ATOMIC_RELAXED)

/* T_STEP("reading %d bytes", n): names the current step; counts as progress. */
#define T_STEP(...) t_set_step(__VA_ARGS__)

void t_set_step(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * Fails the program. _exit, not exit: a fork()ed child must not run its
 * parent's atexit handlers or flush its copy of the parent's stdio buffers
 * (stdout is line buffered, see t_install_watchdog).
 */
void t_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

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

/* The watchdog's allowance in seconds: T_WATCHDOG_SECS of the program. */
extern unsigned t_watchdog_secs;

void t_watchdog(int sig);

/* Arms (or re-arms, e.g. in a fork()ed child) the watchdog. */
void t_arm_watchdog(void);

#ifndef T_NO_WATCHDOG
__attribute__((constructor)) static void t_install_watchdog(void)
{
	t_watchdog_secs = T_WATCHDOG_SECS;
	t_arm_watchdog();
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A peer closing a socket must fail a check, not kill us silently. */
	signal(SIGPIPE, SIG_IGN);
}
#endif

/* ---- rings: SQEs, CQEs, NOPs ------------------------------------------- */

struct io_uring_sqe *t_get_sqe_at(struct io_uring *ring,
						 const char *file, int line);
#define t_get_sqe(ring) t_get_sqe_at((ring), __FILE__, __LINE__)

/*
 * t_queue(ring, user_data, io_uring_prep_read, fd, buf, len, off): the next
 * SQE, prepared by the io_uring_prep_* helper with the arguments that
 * follow it, with @user_data; returns the SQE (for flags). t_submit1 also
 * submits it, alone.
 */
#define t_queue(ring, user_data, prep, ...)				\
	t_prep_sqe_(t_get_sqe(ring), (user_data), prep, ##__VA_ARGS__)
/* The SQE @sqe_expr yields, prepared, with @user_data; the SQE. */
#define t_prep_sqe_(sqe_expr, user_data, prep, ...)			\
	({								\
		struct io_uring_sqe *t_sqe_ = (sqe_expr);		\
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
struct io_uring_cqe *t_wait_cqe_at(struct io_uring *ring,
						  const char *file, int line);
#define t_wait_cqe(ring) t_wait_cqe_at((ring), __FILE__, __LINE__)

/*
 * Wait for one CQE, copy out user_data / res / flags, and mark it seen.
 */
struct t_cqe {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
};

struct t_cqe t_reap_at(struct io_uring *ring, const char *file,
				     int line);
#define t_reap(ring) t_reap_at((ring), __FILE__, __LINE__)

#define T_ANY_RES INT32_MIN

/* Reaps one CQE, which must be @user_data's, with @res (T_ANY_RES: any, for
 * the caller to check); returns it. */
struct t_cqe t_reap_expect_at(struct io_uring *ring, uint64_t user_data,
					    int32_t res, const char *file, int line);
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

void t_reap_each_at(struct io_uring *ring, const struct t_want *want,
				  unsigned n, struct t_cqe *got, const char *file,
				  int line);
#define t_reap_each(ring, got, ...)					\
	t_reap_each_at((ring), (const struct t_want[]){ __VA_ARGS__ },	\
		       sizeof((const struct t_want[]){ __VA_ARGS__ }) /	\
			       sizeof(struct t_want),			\
		       (got), __FILE__, __LINE__)

/* A relative timeout of @ms milliseconds. */
struct __kernel_timespec t_timeout_ms(long ms);

/*
 * Waits up to @ms for one CQE and returns it (marked seen); fails, naming
 * @what, if none comes.
 */
struct t_cqe t_reap_within_at(struct io_uring *ring, long ms,
					    const char *what, const char *file,
					    int line);
#define t_reap_within(ring, ms, what)					\
	t_reap_within_at((ring), (ms), (what), __FILE__, __LINE__)

/* Fails unless the CQ is empty (nothing should have completed). */
void t_cq_empty_at(struct io_uring *ring, const char *what,
				 const char *file, int line);
#define t_cq_empty(ring, what) t_cq_empty_at((ring), (what), __FILE__, __LINE__)
#define t_expect_no_cqe(ring) t_cq_empty_at((ring), #ring, __FILE__, __LINE__)

/* ---- data files ---------------------------------------------------------- */

/*
 * t_pattern(off, seed): the byte at @off of the data a test writes and
 * checks; t_tmpfile() creates an anonymous temp file in /tmp (unlinked at
 * once, so nothing is left behind even if the test fails) filled with
 * @size bytes of it.
 */
unsigned char t_pattern(size_t off, unsigned seed);

void t_fill(void *buf, size_t len, size_t off, unsigned seed);

/* Returns -1 if it matches, else index of first mismatch. */
long t_verify(const void *buf, size_t len, size_t off,
			    unsigned seed);

int t_tmpfile(size_t size, unsigned seed);

/* The data file of the SQPOLL and RSURING_SQPOLL=1 tests: T_DATA_SIZE bytes
 * of t_pattern(off, T_DATA_SEED), on disk (fsync) before it is read. */
#define T_DATA_SIZE (512 * 1024)
#define T_CHUNK 4096
#define T_DATA_SEED 90

int t_data_file(void);

/* Fails unless @buf holds the data file's @len bytes at @off. */
void t_check_data(const unsigned char *buf, size_t len, size_t off,
				  const char *what);

/* ---- processes, clocks, pipes -------------------------------------------- */

/* The file that serves io_uring_queue_init (liburing or rsuring), or NULL. */
const char *t_library(void);

/* "impl=<t_library()>", for a driver to check which library ran. */
void print_impl(void);

void t_pipe(int fds[2]);

unsigned long long t_now_ms(void);

void t_msleep(unsigned ms);

/*
 * Waits up to `ms` for child `pid` to exit 0. A child still running then is
 * killed (a hang, e.g. a deadlock after fork) and the test fails, as it
 * does when the child fails or dies of a signal.
 */
void t_wait_child(pid_t pid, long ms, const char *what);

/* Queues @n NOPs with user_data base, base + 1, ...; fails if the SQ is full. */
void t_queue_nops_at(struct io_uring *ring, unsigned n,
				   uint64_t base, const char *file, int line);
#define t_queue_nops(ring, n, base)					\
	t_queue_nops_at((ring), (n), (base), __FILE__, __LINE__)
#define t_queue_nop(ring, data) t_queue_nops_at((ring), 1, (data), __FILE__, __LINE__)

/* Queues an SQE the kernel rejects at submission (an unknown opcode). */
void t_queue_bad_at(struct io_uring *ring, uint64_t data,
				  const char *file, int line);
#define t_queue_bad(ring, data) t_queue_bad_at((ring), (data), __FILE__, __LINE__)

/*
 * The NOP round trip: @n NOPs (user_data base, base + 1, ...), one submit
 * that must take all of them, then each CQE in order with res 0.
 */
void t_nop_round_trip_at(struct io_uring *ring, unsigned n,
				       uint64_t base, const char *file, int line);
#define t_nop_round_trip(ring, n, base)					\
	t_nop_round_trip_at((ring), (n), (base), __FILE__, __LINE__)

void t_queue_init(struct io_uring *ring, unsigned entries,
				unsigned flags);

/*
 * io_uring_queue_init_params with params that are all zero but `flags`;
 * returns its result (the kernel's answer is left in *p).
 */
int t_init_params(struct io_uring *ring, unsigned entries,
				struct io_uring_params *p, unsigned flags);

/* ---- skips under RSURING_STRICT ---------------------------------------- */

/* RSURING_STRICT=1 (CI): a check that cannot run is a failure. */
int t_strict(void);

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
int count_fds(void);

/*
 * The number on the "<name>:" line of a /proc file (the last such line),
 * in @base (16 for the Cap* lines of status): 1 and *v when there is one,
 * 0 and *v untouched when not. Fails when the file cannot be read.
 */
int t_proc_value(const char *path, const char *name, int base,
				 long long *v);

/* Whether fd @fd of this process is an io_uring instance (its
 * /proc/self/fd link says so even while its fdinfo is short). */
int t_is_io_uring_fd(int fd);

/*
 * t_proc_value of /proc/self/fdinfo/<fd> (SqThread, SqThreadCpu, ...).
 *
 * The kernel prints a ring's details (from SqMask on) only when it gets
 * the ring's lock at once; a ring's SQ poll thread holds it for each batch
 * it submits, and may still hold it when the batch's CQEs have already
 * been reaped. So while an io_uring fd's fdinfo has no SqHead line this
 * asks again: yielding first, then sleeping 1 ms, for about 2 s in all.
 */
int t_fdinfo_value(int fd, const char *name, long long *v);

#define SQ_PF_IO_WORKER 0x00000010	/* kernel PF_IO_WORKER task flag */

/* One pass over /proc/self/task: counts the SQ poll threads (comm
 * "iou-sqp-<pid>") and fills tids[] (up to max). Sets *settled to 0 when
 * some io_uring kernel thread (PF_IO_WORKER) has not named itself yet: a
 * new SQ thread carries its creator's comm until it first runs, so such a
 * snapshot may undercount. */
int sqp_snapshot(int *tids, int max, int *settled);

/* Lists the kernel SQ poll threads ("iou-sqp-<pid>") of this process:
 * returns how many; fills tids[] (up to max) when non-NULL. Retries (up to
 * 2 s) until no io_uring kernel thread is still unnamed. */
int list_sqp_threads(int *tids, int max);

int count_sqp_threads(void);

/* Polls until the SQ thread count equals `want` or `timeout_ms` passes;
 * returns the last count seen. Thread exit is asynchronous in the kernel. */
int wait_sqp_threads(int want, long timeout_ms);

/* The CPU a thread is restricted to, from Cpus_allowed_list: the CPU number
 * when it is exactly one CPU, -1 when it may run on several, -2 if the
 * thread is gone. */
int thread_single_cpu(int tid);

/* Prints "<label>=c1,c2,..." : the CPU binding of each SQ thread (-1 =
 * unbound), sorted, for a driver to check. */
void print_sqp_cpus(const char *label);

/* Checks there are exactly `n` SQ threads and that their CPU bindings are
 * the multiset cpus[0..n) (-1 = unbound). Waits for stragglers first. */
#define CHECK_POLLERS(n, ...)						\
	check_pollers_at(__FILE__, __LINE__, (n), (const int[]){ __VA_ARGS__ })

void check_pollers_at(const char *file, int line, int n,
				       const int *cpus);

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
void exit_rings_no_leak(struct io_uring *rings, int n, int fds0);

/* Step "teardown": exit_rings_no_leak, the data file closed, then
 * "<name>: ok" on stdout. */
void teardown_ok(struct io_uring *rings, int n, int fds0, int data_fd,
		 const char *name);

/* The end of an SQ-thread program (step "end"): no SQ thread left, as many
 * fds as @fds0 (count_fds() at the start), then the data file is closed. */
void end_no_leak(int fds0, int data_fd);

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

struct io_uring_cqe *wait_one(struct io_uring *ring);

/* One NOP round trip on a ring that may have an SQ thread (see
 * CHECK_SUBMITTED; t_nop_round_trip is the exact one for other rings). */
void ring_nop(struct io_uring *ring, unsigned long long tag);

/* Queues a read of `len` bytes at `off` (no submit). */
void queue_read(struct io_uring *ring, int fd, void *buf,
				 unsigned len, size_t off, unsigned long long tag);

/* A real read of one chunk through `ring`, checked against the pattern;
 * plus a NOP. `which` varies the offset so rings read different data. */
void ring_io(struct io_uring *ring, int fd, unsigned which);

/* Reads through several rings at once: all submitted before any is reaped. */
void rings_io_concurrent(struct io_uring *rings, int n, int fd);

/* Skips when the kernel has no io_uring or forbids it here. */
void skip_if_no_io_uring(int ret);

/* ---- rsuring.h extensions (with <rsuring.h> included first) -------------- */
#ifdef RSURING_H

/* Creates a shared SQPOLL ring; cpu >= 0 pins it (SQ_AFF), cpu < 0 leaves
 * placement to the library. Returns the setup result. */
int shared_ring_init(struct io_uring *ring, int cpu, unsigned entries);

void shared_ring(struct io_uring *ring, int cpu);

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

/* @ring joins @first (a shared ring on CPU 0, alone in its group) as the
 * group's second member: both report { cpu 0, 2 members }, one SQ thread,
 * bound to CPU 0, and a read through @ring (ring_io, which 2) is right. */
void second_ring_on_cpu0(struct io_uring *ring, struct io_uring *first,
			 int data_fd);

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
long ring_sq_thread(int ring_fd);

/* Whether `tid` is one of this process's SQ poll threads. */
int is_own_sqp_thread(long tid);

/* A plain ring: no SQPOLL in ring.flags, no SQ thread in fdinfo. (A
 * transparent ring shows no SQPOLL in ring.flags either: the application
 * sees the setup it asked for; only the kernel's fdinfo tells.) With
 * `whole_process`, no iou-sqp thread in the process either (only where the
 * program created no SQPOLL ring of its own). */
void check_plain_ring_at(const char *file, int line,
					  struct io_uring *ring, int whole_process);

#define CHECK_PLAIN_RING(ring) check_plain_ring_at(__FILE__, __LINE__, (ring), 1)

/* A transparent ring: ring.flags as the application asked (no SQPOLL) and
 * an SQ thread of this process in fdinfo. Returns the thread's tid. */
long check_transparent_ring_at(const char *file, int line,
						struct io_uring *ring);

#define CHECK_TRANSPARENT_RING(ring) check_transparent_ring_at(__FILE__, __LINE__, (ring))

/* argv[1]: "plain" -> 0, "transparent" -> 1. */
int expect_transparent(int argc, char **argv);

void check_ring_mode_at(const char *file, int line,
					 struct io_uring *ring, int transparent);

#define CHECK_RING_MODE(ring, transparent)				\
	check_ring_mode_at(__FILE__, __LINE__, (ring), (transparent))

/* A plain ring as the application asks for it (io_uring_queue_init with
 * flags 0), skipped without io_uring, checked to be in the expected mode. */
void contract_ring_at(const char *file, int line, struct io_uring *ring,
				       unsigned entries, int transparent);

#define CONTRACT_RING(ring, entries, transparent)			\
	contract_ring_at(__FILE__, __LINE__, (ring), (entries), (transparent))

/* One field of /proc/self/status as a number (hex for the Cap* lines). */
unsigned long long status_field(const char *name, int base);

/* No capability in any set a process could use or regain. */
int has_no_capabilities(void);

/* Drops a root process to nobody/nogroup for good: no supplementary
 * groups, all uids and gids 65534, no capabilities. Stays dumpable so its
 * /proc/self files remain readable to it. */
void become_nobody(void);

/* The process cannot change its credentials: what the contract calls
 * unprivileged (checked before expecting a transparent ring). */
void check_unprivileged(void);

/* SIGALRM after `secs`: fails the program naming `what` (a hang). */

void tp_alarm_fired(int sig);

void hang_alarm(unsigned secs, const char *what);

/* Back to the progress watchdog. */
void hang_alarm_off(void);

/* Reaps `n` CQEs of NOPs (1 s timeout each), each with res 0. */
void reap_nops(struct io_uring *ring, unsigned n);

/* 3 rings as the process is: each in the expected mode (checked when it is
 * created, with the others live), each reads the data file correctly. */
void use_rings(int transparent);

/* ---- programs made of cases ------------------------------------------- */

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

/* rsuring exports its extensions; liburing has none of them. */
int t_on_rsuring(void);

struct t_case {
	const char *name;
	void (*run)(void);
};

/*
 * Runs every case in a child of its own; prints one line per case on
 * stdout. Returns the program's exit status.
 */
int t_run_cases(const struct t_case *cases, size_t n);

#define T_CASES_MAIN(cases)						\
	int main(void)							\
	{								\
		return t_run_cases(cases,				\
					sizeof(cases) / sizeof(cases[0])); \
	}

/* ---- printed differentials (differential, hostile) ---------------------- */

/*
 * The differential and hostile programs print what they see (return values
 * with their errno names, CQEs), never what changes from run to run (fd
 * numbers, addresses, times); their drivers run them on Debian's liburing
 * and on rsuring and compare the outputs. A line that starts with "!!" is
 * a failure of the program itself and fails every run.
 */

/* Where the section is, for the watchdog's message and die(). */
#define STEP(s) (t_step = (s))

/* user_data bit: the CQE's res is a new fd, printed as "fd". */
#define UD_FD (1ULL << 62)

/*
 * ring.flags as printed: without IORING_SETUP_NO_SQARRAY, which rsuring adds
 * to every ring where the kernel has it, as liburing 2.6+ does, and Debian's
 * 2.3 does not (c_tests/differential/NOTES.md). The bit's value is the
 * kernel's (1U << 16); the 2.3 header has no name for it.
 */
#define DIFF_RING_FLAGS(flags) ((unsigned)(flags) & ~(1U << 16))

/* One output line. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One output line that must hold under RSURING_REGISTER_RING_FD=1 too
 * ("* " prefix; the hostile program). */
void crit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Ends the program with a "!!" line (a failure of the test itself), after
 * killing the children track_child() knows. */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* Ends the section (with a line) when @ret < 0. */
void need(int ret, const char *what);

/* "<what> = <ret>", with the errno name when negative. */
void show_ret(const char *what, long long ret);
/* show_ret(what, expr), then expr once more: show_ret("<what> again"). */
#define show_ret_twice(what, expr)					\
	do {								\
		show_ret((what), (expr));				\
		show_ret(what " again", (expr));			\
	} while (0)
/* A count the kernel may legitimately report lower on an SQPOLL ring (the
 * poll thread took SQEs before the library looked): in range or not. */
void show_ret_in(const char *what, long long ret, long long lo, long long hi);
/* "<n>" or "<n> (ENAME)" for a negative value, in a static buffer of
 * @slot (0..3), so that up to four fit in one line. */
const char *rstr(long long ret, int slot);

/*
 * Collects CQEs until @expected have arrived or @timeout_ms have passed,
 * then any that are already posted besides; prints them sorted by
 * user_data (a request's own CQEs keep their order), one a line.
 * Returns the number collected. res values of UD_FD requests that are
 * >= 0 are stored in @fds (when not NULL, up to 16) in arrival order.
 */
unsigned show_cqes(struct io_uring *ring, unsigned expected, long timeout_ms,
		   int *fds);
/*
 * On an SQPOLL ring, waits (2 s at most) until the SQ thread has published
 * its SQ head for every SQE it took: it may do so after posting their
 * CQEs, with any library, so output that depends on the head (counts of
 * pending SQEs, what a submit call reports) waits for it first.
 */
void wait_sq_head(struct io_uring *ring);
/*
 * show_ret of io_uring_submit (as @what), then show_cqes of @expected CQEs
 * within 1 s.
 */
void submit_show(struct io_uring *ring, const char *what, unsigned expected);
/* Prints one CQE pointer a wait returned (NULL allowed). */
void show_cqe(const char *what, const struct io_uring_cqe *cqe);

/* The next SQE; ends the program with a line if the SQ is full. */
struct io_uring_sqe *sqe_of(struct io_uring *ring);
/*
 * queue_op(ring, ud, io_uring_prep_read, fd, buf, len, off): the next SQE
 * (sqe_of), prepared by the io_uring_prep_* helper with the arguments that
 * follow it, then given @ud; returns the SQE.
 */
#define queue_op(ring, ud, prep, ...)					\
	t_prep_sqe_(sqe_of(ring), (ud), prep, ##__VA_ARGS__)
/* Queues one NOP with @ud and @sqe_flags. */
void queue_nop(struct io_uring *ring, __u64 ud, unsigned sqe_flags);
/* An SQE the kernel rejects when it is submitted (unknown opcode). */
void queue_bad(struct io_uring *ring, __u64 ud, unsigned sqe_flags);
/*
 * Waits at most @ms for one CQE; on success stores it, marks it seen and
 * returns 0, else the wait's result (-ETIME when none came).
 */
int wait_one_within(struct io_uring *ring, int ms, __u64 *ud, int *res);
/* "cqe ud=0x.. res=.." or "no cqe (<why>)" for a wait_one_within of @ms. */
const char *cqe_str(struct io_uring *ring, int ms);
/* Queues a NOP (@ud), submits it and waits 1 s for its CQE: a line. */
const char *nop_roundtrip(struct io_uring *ring, __u64 ud);

/* An 8-entry ring (io_uring_queue_init, no flags), or die. */
void init_or_die(struct io_uring *ring);
/* An 8-entry ring from io_uring_queue_init_params with @p zeroed but for
 * @flags (the kernel's answer is left in *p), or die. */
void init_params_or_die(struct io_uring *ring, struct io_uring_params *p,
			unsigned flags);
/* An 8-entry ring (io_uring_queue_init, no flags), its result printed as
 * "io_uring_queue_init = <ret>" (with crit() when @critical, else say()),
 * or die. */
void init_shown(struct io_uring *ring, int critical);

/* io_uring_queue_init_params with @flags; prints the result and what the
 * kernel and the library report about the ring. Returns the result. */
int init_ring(struct io_uring *ring, unsigned entries, unsigned flags,
	      const char *what);

/* A blocking pipe (O_CLOEXEC), or die. */
void make_pipe(int fds[2]);
/* An unlinked temporary file holding @size bytes of pattern_at(), or die. */
int make_pattern_file(size_t size);
/* A byte of that pattern. */
unsigned char pattern_at(size_t off);
/* An unlinked temporary file of 4096 bytes 'a'..'z' repeated, or die. */
int make_letters_file(void);

/*
 * Whether the pipe's read end @rfd reaches end of file within @ms (data
 * still in it is read and dropped): "eof" or "no-eof".
 */
const char *eof_within(int rfd, int ms);
/* Threads of this process whose name starts with "iou-sqp-"; ends the
 * program with a line when /proc/self/task cannot be read. */
int sq_threads(void);
/* The same count, or -1 (errno set) when /proc/self/task cannot be read. */
int t_count_sq_threads(void);

/*
 * The section runners (differential, hostile): names the section and arms
 * its watchdog, which after @secs seconds prints "!! watchdog: section
 * <name> still running after <secs> s [step: <t_step>]", kills the
 * children track_child() knows and exits 3.
 */
void start_section_watchdog(const char *name, unsigned secs);
/* "library: <file>" on stderr: the file that serves io_uring_queue_init,
 * when dladdr names it. */
void report_library(void);

/* Children: remembered so that a watchdog can kill them. */
void track_child(pid_t pid);
/* Kills every child track_child() knows. */
void kill_children(void);
/*
 * Waits at most @ms for @pid; then kills it. Returns "exit N",
 * "signal N (NAME)" or "hung (killed)".
 */
const char *reap_child(pid_t pid, int ms);

/* Raw system calls, as an application that bypasses the library makes
 * them. */
long sys_register(int fd, unsigned op, const void *arg, unsigned nr);
long sys_enter(int fd, unsigned to_submit, unsigned min, unsigned flags);
/* Registers ring fd @ring_fd at @offset (-1U: the kernel chooses); the
 * call's result, and the offset the kernel used in *@got. */
long raw_register_ring(int ring_fd, unsigned offset, unsigned *got);
/* Unregisters slot @offset of the calling task's table (@any_ring_fd: any
 * io_uring fd, the call needs one). */
long raw_unregister_ring(int any_ring_fd, unsigned offset);

#pragma GCC visibility pop

/* With T_CASE_PROGRAM defined before the include: the case program's
 * library report, and <rsuring.h> where the header is rsuring's. */
#ifdef T_CASE_PROGRAM
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
#endif /* T_CASE_PROGRAM */

#endif /* RSURING_TEST_HELPERS_H */
