/* SPDX-License-Identifier: MIT */
/*
 * With RSURING_REGISTER_RING_FD=1 (set below) rsuring registers the fd of
 * every ring it sets up by itself. That must not get in the way: the liburing calls that manage ring fd
 * registration keep liburing's answers, other threads and fork()ed
 * children get the kernel's own answers (never another ring's), and the
 * application still finds room to register rings of its own.
 */
#include "../rsuring_test.h"

#include <pthread.h>
#include <sys/wait.h>

/* Reaps the one NOP another thread or a child submitted. */
static void reap_foreign(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;

	CHECK_OK(io_uring_wait_cqe(ring, &cqe));
	CHECK_EQ(cqe->user_data, 0xbad);
	io_uring_cqe_seen(ring, cqe);
	CHECK_EQ(io_uring_cq_ready(ring), 0);
}

/* Submits the SQE a refused submitter left in the SQ and reaps it. */
static void flush_refused(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;

	CHECK_EQ(io_uring_submit(ring), 1);
	CHECK_OK(io_uring_wait_cqe(ring, &cqe));
	CHECK_EQ(cqe->user_data, 0xbad);
	io_uring_cqe_seen(ring, cqe);
}

/* Queues one NOP and submits it; returns io_uring_submit's result. */
static int try_submit(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 0xbad);
	return io_uring_submit(ring);
}

struct other_thread {
	struct io_uring *creators_ring;
	int submit_ret;
	unsigned own_ring_cqes;
};

/*
 * Another thread with a registered ring of its own (so a registered index
 * from the creator's table would name *this* ring here): submitting to the
 * creator's single-issuer ring must fail as the kernel says (-EEXIST) and
 * must not land on the thread's own ring.
 */
static void *other_thread_main(void *arg)
{
	struct other_thread *t = arg;
	struct io_uring own;

	CHECK_OK(io_uring_queue_init(8, &own, 0));
	CHECK_EQ(io_uring_register_ring_fd(&own), 1);
	t->submit_ret = try_submit(t->creators_ring);
	t->own_ring_cqes = io_uring_cq_ready(&own);
	io_uring_queue_exit(&own);
	return NULL;
}

/* Whether a seccomp filter confines this process (the library then
 * registers nothing: docs/compatibility.md). */
static int under_seccomp(void)
{
	char line[128];
	int mode = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode != 0;
}

int main(void)
{
	struct io_uring ring, many[12], apps[8];
	struct other_thread t = { 0 };
	pthread_t thread;
	int ret, status;
	pid_t pid;

	/* The registration is opt-in: ask for it before the first ring. */
	setenv("RSURING_REGISTER_RING_FD", "1", 1);
	T_STEP("opted in: the ring is registered in one of the top slots 8..15");
	CHECK_OK(io_uring_queue_init(8, &ring, 0));
	if (ring.enter_ring_fd == ring.ring_fd && under_seccomp())
		T_SKIP("no automatic registration under a seccomp filter (as documented)");
	if (ring.enter_ring_fd == ring.ring_fd)
		T_SKIP("no automatic registration (IORING_REGISTER_RING_FDS not supported?)");
	CHECK_MSG(ring.enter_ring_fd >= 8 && ring.enter_ring_fd < 16,
		  "automatic slot %d is not one of 8..15", ring.enter_ring_fd);
	t_nop_round_trip(&ring, 1, 1);
	io_uring_queue_exit(&ring);

	T_STEP("plain ring: register/unregister keep liburing's answers");
	CHECK_OK(io_uring_queue_init(8, &ring, 0));
	ret = io_uring_register_ring_fd(&ring);
	if (ret == -EINVAL)
		T_SKIP("IORING_REGISTER_RING_FDS not supported");
	CHECK_EQ(ret, 1);
	CHECK_EQ(io_uring_register_ring_fd(&ring), -EEXIST);
	t_nop_round_trip(&ring, 1, 2);
	CHECK_EQ(io_uring_unregister_ring_fd(&ring), 1);
	CHECK_EQ(io_uring_unregister_ring_fd(&ring), -EINVAL);
	t_nop_round_trip(&ring, 1, 3);
	io_uring_queue_exit(&ring);

	T_STEP("plain ring: the application rewrites ring_fd and enter_ring_fd with a dup()");
	CHECK_OK(io_uring_queue_init(8, &ring, 0));
	t_nop_round_trip(&ring, 1, 1);
	ret = dup(ring.ring_fd);
	CHECK_SYS(ret);
	close(ring.ring_fd);
	/* liburing 2.3's sq-poll-dup does this: the enters must go to the fd. */
	ring.ring_fd = ring.enter_ring_fd = ret;
	t_nop_round_trip(&ring, 1, 2);
	t_nop_round_trip(&ring, 4, 3);
	io_uring_queue_exit(&ring);

	T_STEP("plain ring: another thread submits through the fd, to this ring");
	CHECK_OK(io_uring_queue_init(8, &ring, 0));
	t_nop_round_trip(&ring, 1, 1);
	CHECK_EQ(io_uring_unregister_ring_fd(&ring), -EINVAL);
	t.creators_ring = &ring;
	CHECK_EQ(pthread_create(&thread, NULL, other_thread_main, &t), 0);
	CHECK_EQ(pthread_join(thread, NULL), 0);
	CHECK_EQ(t.submit_ret, 1);
	CHECK_EQ(t.own_ring_cqes, 0);
	reap_foreign(&ring);

	T_STEP("plain ring: a fork()ed child submits through the fd");
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0)
		_exit(try_submit(&ring) == 1 ? 0 : 1);
	CHECK_SYS(waitpid(pid, &status, 0));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	reap_foreign(&ring);
	/* The child's SQE was queued in its copy of the struct: ours is behind. */
	io_uring_queue_exit(&ring);

	T_STEP("single-issuer ring works");
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SINGLE_ISSUER);
	if (ret == -EINVAL)
		T_SKIP("IORING_SETUP_SINGLE_ISSUER not supported");
	CHECK_OK(ret);
	t_nop_round_trip(&ring, 1, 1);

	T_STEP("the application never registered: unregister/close say so");
	CHECK_EQ(io_uring_unregister_ring_fd(&ring), -EINVAL);
	/* Before Linux 6.3 (no REG_REG_RING) liburing answers -EOPNOTSUPP. */
	CHECK_EQ(io_uring_close_ring_fd(&ring),
		 ring.features & IORING_FEAT_REG_REG_RING ? -EINVAL : -EOPNOTSUPP);
	CHECK(ring.ring_fd >= 0);
	t_nop_round_trip(&ring, 1, 2);

	T_STEP("another thread gets the kernel's -EEXIST, not another ring");
	t.creators_ring = &ring;
	CHECK_EQ(pthread_create(&thread, NULL, other_thread_main, &t), 0);
	CHECK_EQ(pthread_join(thread, NULL), 0);
	CHECK_EQ(t.submit_ret, -EEXIST);
	CHECK_EQ(t.own_ring_cqes, 0);
	/* The kernel left the refused SQE queued; the owner submits it. */
	flush_refused(&ring);
	t_nop_round_trip(&ring, 1, 3);

	T_STEP("a fork()ed child gets the kernel's -EEXIST");
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0)
		_exit(try_submit(&ring) == -EEXIST ? 0 : 1);
	CHECK_SYS(waitpid(pid, &status, 0));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	t_nop_round_trip(&ring, 1, 4);	/* the child's SQE was queued in its copy */

	T_STEP("register/unregister keep liburing's answers");
	CHECK_EQ(io_uring_register_ring_fd(&ring), 1);
	CHECK_EQ(io_uring_register_ring_fd(&ring), -EEXIST);
	t_nop_round_trip(&ring, 1, 5);
	CHECK_EQ(io_uring_unregister_ring_fd(&ring), 1);
	t_nop_round_trip(&ring, 1, 6);
	CHECK_EQ(io_uring_register_ring_fd(&ring), 1);
	if (ring.features & IORING_FEAT_REG_REG_RING) {
		CHECK_EQ(io_uring_close_ring_fd(&ring), 1);
		CHECK_EQ(ring.ring_fd, -1);
	} else {
		CHECK_EQ(io_uring_close_ring_fd(&ring), -EOPNOTSUPP);
	}
	t_nop_round_trip(&ring, 1, 7);
	io_uring_queue_exit(&ring);

	T_STEP("many single-issuer rings, and room for the application's own");
	for (int i = 0; i < 12; i++) {
		CHECK_OK(io_uring_queue_init(4, &many[i], IORING_SETUP_SINGLE_ISSUER));
		t_nop_round_trip(&many[i], 1, 100 + i);
	}
	for (int i = 0; i < 8; i++) {
		CHECK_OK(io_uring_queue_init(4, &apps[i], 0));
		CHECK_EQ(io_uring_register_ring_fd(&apps[i]), 1);
		t_nop_round_trip(&apps[i], 1, 200 + i);
	}
	for (int i = 0; i < 12; i++) {
		t_nop_round_trip(&many[i], 1, 300 + i);
		io_uring_queue_exit(&many[i]);
	}
	for (int i = 0; i < 8; i++)
		io_uring_queue_exit(&apps[i]);

	T_STEP("DEFER_TASKRUN ring waits through the registration");
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SINGLE_ISSUER |
						IORING_SETUP_DEFER_TASKRUN);
	if (ret == -EINVAL)
		T_SKIP("IORING_SETUP_DEFER_TASKRUN not supported");
	CHECK_OK(ret);
	for (int i = 0; i < 16; i++)
		t_nop_round_trip(&ring, 1, 400 + i);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
