/* SPDX-License-Identifier: MIT */
/*
 * fork() and the poller registry:
 *  - part 1: the parent has two shared rings on cpu 0 (one SQ thread). In a
 *    fork()ed child the registry starts empty: a new shared ring on cpu 0
 *    gets its own poller (the child has exactly one iou-sqp thread, bound
 *    to cpu 0), rsuring_sqpoll_group reports members == 1, the ring reads
 *    the right data; a second child ring joins it (members 2, still one
 *    thread). After the child exits 0, the parent's group is unchanged
 *    (members 2, one thread) and its rings work.
 *  - part 2: fork while another thread churns shared rings (setup/exit in a
 *    loop, so the registry lock is often held): 50 forks; each child
 *    creates a shared ring on cpu 1, checks it is alone in its group, does
 *    a NOP, exits 0. The parent waits with a deadline per child; a child
 *    that hangs (deadlock on the registry lock) fails the test, and so does
 *    a churning thread that stops making progress between forks (the
 *    parent's lock left held by the atfork handlers). Each fork waits for
 *    one more churned ring, so the forks land all over the churn loop.
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define FORKS 50
#define CHILD_DEADLINE_MS 20000

static int data_fd;
static atomic_int stop_churn;
static atomic_long churned;

static void part1(void)
{
	struct io_uring p1, p2;
	pid_t pid;

	T_STEP("part 1: parent rings");
	shared_ring(&p1, 0);
	shared_ring(&p2, 0);
	CHECK_GROUP(&p2, 0, 2);
	CHECK_POLLERS(1, 0);
	ring_io(&p1, data_fd, 0);

	pid = fork();
	CHECK_MSG(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct io_uring c1, c2;

		t_arm_watchdog();
		T_STEP("part 1 child: first ring");
		CHECK_EQ(count_sqp_threads(), 0);
		shared_ring(&c1, 0);
		CHECK_GROUP(&c1, 0, 1);
		CHECK_POLLERS(1, 0);
		ring_io(&c1, data_fd, 1);
		T_STEP("part 1 child: second ring");
		second_ring_on_cpu0(&c2, &c1, data_fd);
		io_uring_queue_exit(&c1);
		io_uring_queue_exit(&c2);
		CHECK_NO_POLLERS();
		_exit(0);
	}
	t_wait_child(pid, CHILD_DEADLINE_MS * 2, "part 1");

	T_STEP("part 1: parent after the child");
	CHECK_GROUP(&p1, 0, 2);
	CHECK_GROUP(&p2, 0, 2);
	CHECK_POLLERS(1, 0);
	ring_io(&p1, data_fd, 3);
	ring_io(&p2, data_fd, 4);
	io_uring_queue_exit(&p1);
	io_uring_queue_exit(&p2);
	CHECK_NO_POLLERS();
}

static void *churn(void *arg)
{
	long i = 0;

	(void)arg;
	while (!atomic_load(&stop_churn)) {
		struct io_uring ring;
		int ret = shared_ring_init(&ring, (int)(i % 2), 4);

		CHECK_MSG(ret == 0, "churn: setup = %d (%s)", ret, strerror(-ret));
		if (i % 8 == 0)
			ring_nop(&ring, (unsigned long long)i);
		io_uring_queue_exit(&ring);
		i++;
		atomic_store(&churned, i);
	}
	return NULL;
}

/* Waits until the churn thread has finished another ring after `before`. */
static void wait_churn(long before, int fork_no)
{
	unsigned long long end = t_now_ms() + CHILD_DEADLINE_MS;

	while (atomic_load(&churned) == before) {
		if (t_now_ms() >= end)
			T_FAIL("after fork %d the churning thread made no progress for %d ms "
			     "(stuck in ring setup/exit?)", fork_no, CHILD_DEADLINE_MS);
		t_msleep(1);
	}
}

static void part2(void)
{
	pthread_t th;
	struct io_uring keep;
	long before;
	int i, ret;

	T_STEP("part 2: start the churn");
	/* A long-lived group on cpu 1 too, so children inherit a non-empty
	 * registry snapshot for the CPU they use. */
	shared_ring(&keep, 1);
	ret = pthread_create(&th, NULL, churn, NULL);
	CHECK_MSG(ret == 0, "pthread_create: %s", strerror(ret));
	wait_churn(0, -1);

	for (i = 0; i < FORKS; i++) {
		pid_t pid;

		T_STEP("part 2: fork %d", i);
		before = atomic_load(&churned);
		pid = fork();
		CHECK_MSG(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			struct io_uring ring;

			t_arm_watchdog();
			T_STEP("part 2 child %d: shared ring", i);
			shared_ring(&ring, 1);
			CHECK_GROUP(&ring, 1, 1);
			ring_nop(&ring, 42);
			io_uring_queue_exit(&ring);
			_exit(0);
		}
		t_wait_child(pid, CHILD_DEADLINE_MS, "part 2");
		/* Keep forks interleaved with the churn, not all in one gap. */
		wait_churn(before, i);
	}

	T_STEP("part 2: stop the churn");
	atomic_store(&stop_churn, 1);
	CHECK(pthread_join(th, NULL) == 0);
	CHECK_GROUP(&keep, 1, 1);
	ring_io(&keep, data_fd, 5);
	io_uring_queue_exit(&keep);
	CHECK_NO_POLLERS();
	printf("fork: %d forks during %ld churned rings\n", FORKS, atomic_load(&churned));
}

int main(void)
{
	int fds0;

	data_fd = t_data_file();
	fds0 = count_fds();
	part1();
	part2();
	CHECK_EQ(count_fds(), fds0);
	close(data_fd);
	printf("fork: ok\n");
	return 0;
}
