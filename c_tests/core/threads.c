/* SPDX-License-Identifier: MIT */
/*
 * Rings and threads / processes (liburing semantics without explicit ring
 * fd registration: any thread may drive a ring, one at a time):
 *  - a ring created by the main thread is driven by another thread, then by
 *    the main thread again;
 *  - a ring (plain, and SQPOLL) created by a thread that has exited keeps
 *    working from the main thread;
 *  - 8 threads each create, use (2000 NOPs, reads) and destroy their own
 *    rings concurrently, several times over (process-wide library state);
 *  - a forked child can drive a ring the parent created (fd and mappings
 *    are inherited), and a child can create and use its own ring.
 */
#include "../rsuring_test.h"
#include <pthread.h>
#include <sys/wait.h>

static void *drive_ring(void *arg)
{
	struct io_uring *ring = arg;
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000000LL };
	struct io_uring_cqe *cqe;

	t_nop_round_trip(ring, 4, 100);
	CHECK_EQ(io_uring_submit_and_wait(ring, 0), 0);
	CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), -ETIME);
	t_nop_round_trip(ring, 4, 200);
	return NULL;
}

static void *create_ring(void *arg)
{
	struct io_uring *ring = arg;
	unsigned flags = ring->flags;	/* smuggled in by the caller */
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	p.sq_thread_idle = 50;
	CHECK_OK(io_uring_queue_init_params(8, ring, &p));
	t_nop_round_trip(ring, 2, 300);
	return NULL;
}

#define NTHREADS 8

static void *own_ring(void *arg)
{
	unsigned round, id = (unsigned)(uintptr_t)arg;
	int fd = t_tmpfile(4096, id);

	for (round = 0; round < 4; round++) {
		struct io_uring ring;
		unsigned i;

		t_queue_init(&ring, 16, 0);
		for (i = 0; i < 2000 / 16; i++)
			t_nop_round_trip(&ring, 16, (uint64_t)id << 32 | i * 16);
		{
			unsigned char buf[128];
			struct io_uring_sqe *sqe = t_get_sqe(&ring);
			struct t_cqe c;

			io_uring_prep_read(sqe, fd, buf, sizeof(buf), 64 * round);
			t_submit_expect(&ring, 1);
			c = t_reap(&ring);
			CHECK_EQ(c.res, 128);
			CHECK_EQ(t_verify(buf, 128, 64 * round, id), -1);
		}
		io_uring_queue_exit(&ring);
	}
	close(fd);
	return NULL;
}

int main(void)
{
	struct io_uring ring;
	pthread_t th[NTHREADS];
	int i, status;
	pid_t pid;

	T_STEP("ring driven by another thread");
	t_queue_init(&ring, 8, 0);
	t_nop_round_trip(&ring, 3, 0);
	CHECK_EQ(pthread_create(&th[0], NULL, drive_ring, &ring), 0);
	pthread_join(th[0], NULL);
	t_nop_round_trip(&ring, 8, 10);
	io_uring_queue_exit(&ring);

	T_STEP("ring created by a thread that has exited");
	memset(&ring, 0, sizeof(ring));
	CHECK_EQ(pthread_create(&th[0], NULL, create_ring, &ring), 0);
	pthread_join(th[0], NULL);
	t_nop_round_trip(&ring, 8, 20);
	t_nop_round_trip(&ring, 8, 30);
	io_uring_queue_exit(&ring);

	T_STEP("SQPOLL ring created by a thread that has exited");
	memset(&ring, 0, sizeof(ring));
	ring.flags = IORING_SETUP_SQPOLL;
	CHECK_EQ(pthread_create(&th[0], NULL, create_ring, &ring), 0);
	pthread_join(th[0], NULL);
	t_nop_round_trip(&ring, 8, 40);
	t_msleep(120);		/* let the poller go idle: submit must wake it */
	t_nop_round_trip(&ring, 8, 50);
	io_uring_queue_exit(&ring);

	T_STEP("threads with their own rings, concurrently");
	for (i = 0; i < NTHREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, own_ring,
					(void *)(uintptr_t)(i + 1)), 0);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);

	T_STEP("forked child drives the parent's ring");
	t_queue_init(&ring, 8, 0);
	t_nop_round_trip(&ring, 4, 60);
	fflush(stderr);
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		t_nop_round_trip(&ring, 4, 70);
		_exit(0);
	}
	CHECK_SYS(waitpid(pid, &status, 0));
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child using the parent's ring failed (status 0x%x)", status);
	/* the parent's private SQ/CQ bookkeeping is now stale: only exit */
	io_uring_queue_exit(&ring);

	T_STEP("forked child creates its own ring");
	t_queue_init(&ring, 8, 0);
	t_nop_round_trip(&ring, 2, 80);
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		struct io_uring child_ring;

		t_queue_init(&child_ring, 8, 0);
		t_nop_round_trip(&child_ring, 8, 90);
		io_uring_queue_exit(&child_ring);
		_exit(0);
	}
	CHECK_SYS(waitpid(pid, &status, 0));
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child with its own ring failed (status 0x%x)", status);
	t_nop_round_trip(&ring, 8, 95);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
