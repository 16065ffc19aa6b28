/* SPDX-License-Identifier: MIT */
/*
 * Shared by the drop-in tests (the programs in c_tests/dropin/, driven by
 * tests/dropin.rs).
 *
 * Each program encodes what liburing does in one hostile scenario. It is
 * built against Debian's liburing 2.3 header and run twice, once on
 * Debian's liburing.so.2 and once on rsuring; both runs must pass, which
 * proves the program describes liburing's behaviour and not ours.
 * Some programs are also built against rsuring's own header (they then
 * include <rsuring.h> and use its extensions).
 *
 * A program is a list of cases. Each case runs in its own fork()ed child
 * with its own watchdog, so a case that hangs (the bugs under test hang)
 * is reported by name and the others still run. Exit status of the
 * program: 0 all cases passed, 1 a case failed, 77 a case was skipped
 * (a kernel feature or a precondition is missing; the driver turns that
 * into a failure under RSURING_STRICT=1) and none failed.
 */
#ifndef RSURING_DROPIN_H
#define RSURING_DROPIN_H

#define T_WATCHDOG_SECS 10
#include "../test_helpers.h"

#if __has_include(<rsuring.h>)
#include <rsuring.h>
#define DROPIN_RSURING_HEADER 1
#endif

#include <dlfcn.h>
#include <sys/wait.h>

/* Which library serves liburing's calls: the driver checks this line. */
__attribute__((constructor)) static void dropin_report_library(void)
{
	Dl_info info;

	if (dladdr((void *)io_uring_queue_init, &info) && info.dli_fname)
		fprintf(stderr, "library: %s\n", info.dli_fname);
	else
		fprintf(stderr, "library: unknown\n");
}

/* rsuring exports its extensions; liburing has none of them. */
static inline int dropin_on_rsuring(void)
{
	return dlsym(RTLD_DEFAULT, "rsuring_sqpoll_group") != NULL;
}

struct dropin_case {
	const char *name;
	void (*run)(void);
};

/*
 * Runs every case in a child of its own; prints one line per case on
 * stdout. Returns the program's exit status.
 */
static int dropin_run_cases(const struct dropin_case *cases, size_t n)
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

#define DROPIN_MAIN(cases)						\
	int main(void)							\
	{								\
		return dropin_run_cases(cases,				\
					sizeof(cases) / sizeof(cases[0])); \
	}

/* A relative timeout of @ms milliseconds. */
static inline struct __kernel_timespec dropin_ms(long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	return ts;
}

/*
 * Waits up to @ms for one CQE on @ring and returns it (marked seen);
 * fails the case if none comes.
 */
static inline struct t_cqe dropin_reap_within(struct io_uring *ring, long ms,
					      const char *what)
{
	struct __kernel_timespec ts = dropin_ms(ms);
	struct io_uring_cqe *cqe = NULL;
	struct t_cqe c;
	int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

	if (ret < 0 || !cqe)
		T_FAIL("%s: no CQE within %ld ms (%d: %s)", what, ms, ret,
		       strerror(-ret));
	c.user_data = cqe->user_data;
	c.res = cqe->res;
	c.flags = cqe->flags;
	io_uring_cqe_seen(ring, cqe);
	return c;
}

/* Fails unless @ring's CQ is empty (nothing posted to it). */
static inline void dropin_cq_empty(struct io_uring *ring, const char *what)
{
	struct io_uring_cqe *cqe = NULL;

	if (io_uring_peek_cqe(ring, &cqe) == 0 && cqe)
		T_FAIL("%s: unexpected CQE user_data=0x%llx res=%d", what,
		       (unsigned long long)cqe->user_data, cqe->res);
}

/* Queues a NOP with @data on @ring (fails the case if the SQ is full). */
static inline void dropin_queue_nop(struct io_uring *ring, __u64 data)
{
	struct io_uring_sqe *sqe = t_get_sqe(ring);

	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, data);
}

/* Queues an SQE the kernel rejects at submission (an unknown opcode). */
static inline void dropin_queue_bad(struct io_uring *ring, __u64 data)
{
	struct io_uring_sqe *sqe = t_get_sqe(ring);

	io_uring_prep_nop(sqe);
	sqe->opcode = 0xff;
	io_uring_sqe_set_data64(sqe, data);
}

/* RSURING_STRICT=1: a skipped precondition must fail instead. */
static inline int dropin_strict(void)
{
	const char *s = getenv("RSURING_STRICT");

	return s && strcmp(s, "1") == 0;
}

#define DROPIN_SKIP_OR_FAIL(...)					\
	do {								\
		if (dropin_strict())					\
			T_FAIL(__VA_ARGS__);				\
		T_SKIP(__VA_ARGS__);					\
	} while (0)

#endif /* RSURING_DROPIN_H */
