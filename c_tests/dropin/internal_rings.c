/* SPDX-License-Identifier: MIT */
/*
 * Issue 10, deviation 6: the rings a library makes for itself are plain.
 *
 * io_uring_get_probe() and io_uring_mlock_size() create a temporary ring.
 * The driver runs this program with RSURING_SQPOLL=1 and
 * RSURING_SQPOLL_PERCPU=1 (liburing ignores both): those switches are for
 * the application's rings, so the temporary rings must still get no SQ
 * thread.
 *
 * How that is checked, without timing anything: the case runs as the first
 * process of a new PID namespace, where PIDs are handed out one after the
 * other to this process's tasks only. A thread started before and one
 * started after the calls show how many tasks were created in between; an
 * SQ thread is such a task (iou-sqp-N), whether or not it is still there
 * when we look. A control ring with SQPOLL shows that the count sees one.
 * In addition, the iou-sqp-* threads in /proc/self/task are counted after
 * every call.
 */
#define T_CASE_PROGRAM 1
#define T_WATCHDOG_SECS 10
#include "../rsuring_test.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>

#define PROBES 500

static void *report_tid(void *arg)
{
	*(long *)arg = syscall(SYS_gettid);
	return NULL;
}

/* The PID namespace's next PID, as a new thread sees it. */
static long next_tid(void)
{
	pthread_t t;
	long tid = -1;

	CHECK_EQ(pthread_create(&t, NULL, report_tid, &tid), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK(tid > 0);
	return tid;
}

/* iou-sqp-* threads of this process right now. */
static int sq_threads_now(void)
{
	int n = t_count_sq_threads();

	if (n < 0)
		T_FAIL("opendir /proc/self/task: %s", strerror(errno));
	return n;
}

static int max_sq_threads_seen;

static void look_for_sq_threads(void)
{
	int n = sq_threads_now();

	if (n > max_sq_threads_seen)
		max_sq_threads_seen = n;
}

static void probe_many(void)
{
	int i;

	for (i = 0; i < PROBES; i++) {
		struct io_uring_probe *probe = io_uring_get_probe();

		if (!probe)
			T_FAIL("io_uring_get_probe call %d returned NULL", i);
		CHECK(io_uring_opcode_supported(probe, IORING_OP_NOP));
		io_uring_free_probe(probe);
		look_for_sq_threads();
	}
}

static void mlock_sizes(void)
{
	struct io_uring_params p;

	CHECK_EQ(io_uring_mlock_size(8, 0), 0);
	look_for_sq_threads();
	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_mlock_size_params(8, &p), 0);
	look_for_sq_threads();
}

static struct io_uring control;

static void control_sqpoll_ring(void)
{
	struct io_uring_params p;
	struct t_cqe c;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	ret = io_uring_queue_init_params(8, &control, &p);
	if (ret == -EPERM)
		T_SKIP_OR_FAIL("SQPOLL rings need privileges here");
	CHECK_OK(ret);
	t_queue_nop(&control, 1);
	CHECK_GE(io_uring_submit(&control), 0);
	c = t_reap_within(&control, 5000, "control ring NOP");
	CHECK_EQ(c.user_data, 1);
}

/* Tasks created while @fn ran. */
static long tasks_created_by(void (*fn)(void))
{
	long before = next_tid();

	fn();
	return next_tid() - before - 1;
}

static void in_new_pid_namespace(void)
{
	long probes, mlock, controls;

	alarm(T_WATCHDOG_SECS);
	T_STEP("500 io_uring_get_probe calls");
	probes = tasks_created_by(probe_many);
	T_STEP("io_uring_mlock_size, io_uring_mlock_size_params");
	mlock = tasks_created_by(mlock_sizes);
	T_STEP("control: one SQPOLL ring");
	controls = tasks_created_by(control_sqpoll_ring);

	T_STEP("the counts");
	if (controls < 1)
		T_FAIL("the control SQPOLL ring created %ld tasks: the count "
		       "does not see SQ threads", controls);
	if (probes || mlock || max_sq_threads_seen)
		T_FAIL("tasks created by %d io_uring_get_probe calls: %ld, by "
		       "io_uring_mlock_size(_params): %ld; most iou-sqp "
		       "threads seen at once: %d (expected 0, 0, 0)",
		       PROBES, probes, mlock, max_sq_threads_seen);
	io_uring_queue_exit(&control);
}

static void probe_and_mlock_size_make_no_sq_thread(void)
{
	int status = 0;
	pid_t pid;

	if (unshare(CLONE_NEWPID) < 0)
		T_SKIP_OR_FAIL("unshare(CLONE_NEWPID): %s",
				    strerror(errno));
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		in_new_pid_namespace();
		fflush(stdout);
		_exit(T_EXIT_PASS);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status))
		T_FAIL("the namespace's first process died (status 0x%x)",
		       status);
	if (WEXITSTATUS(status) != T_EXIT_PASS)
		exit(WEXITSTATUS(status));
}

static const struct t_case cases[] = {
	{ "probe_and_mlock_size_make_no_sq_thread",
	  probe_and_mlock_size_make_no_sq_thread },
};

T_CASES_MAIN(cases)
