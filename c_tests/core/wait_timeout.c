/* SPDX-License-Identifier: MIT */
/*
 * io_uring_wait_cqe_timeout: -ETIME (and no CQE) when nothing completes
 * within the timeout, after roughly the timeout; returns an already
 * available CQE at once; returns a CQE that completes during the wait
 * (a 30 ms timeout op, and a pipe read satisfied by another thread) long
 * before the wait's own timeout; a NULL timeout waits like io_uring_wait_cqe.
 * Also io_uring_wait_cqes with wait_nr > 1.
 */
#include "../rsuring_test.h"
#include <pthread.h>

static int pipe_w;

static int stagger_w[3];

/* writes to three pipes, 20 ms apart */
static void *stagger_writer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 3; i++) {
		t_msleep(20);
		if (write(stagger_w[i], "S", 1) != 1)
			abort();
	}
	return NULL;
}

/*
 * io_uring_wait_cqe_timeout with a timeout of `ms` milliseconds; *el: how
 * long it took, in ms.
 */
static int wait_ms(struct io_uring *ring, struct io_uring_cqe **cqe,
		   long long ms, unsigned long long *el)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000LL,
	};
	unsigned long long t0 = t_now_ms();
	int ret = io_uring_wait_cqe_timeout(ring, cqe, &ts);

	*el = t_now_ms() - t0;
	return ret;
}

static void *writer(void *arg)
{
	(void)arg;
	t_msleep(40);
	if (write(pipe_w, "Q", 1) != 1)
		abort();
	return NULL;
}

int main(void)
{
	struct __kernel_timespec ts;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned long long t0, el;
	int ret, p[2], i;

	t_queue_init(&ring, 8, 0);

	T_STEP("nothing pending: -ETIME after ~50ms");
	cqe = (void *)1;
	ret = wait_ms(&ring, &cqe, 50, &el);
	CHECK_EQ(ret, -ETIME);
	CHECK(cqe == NULL);
	CHECK_MSG(el >= 45 && el < 2000, "waited %llu ms", el);

	T_STEP("pending but never-completing poll: still -ETIME");
	t_pipe(p);
	t_submit1(&ring, 1, io_uring_prep_poll_add, p[0], 1 /* POLLIN */);
	ret = wait_ms(&ring, &cqe, 30, &el);
	CHECK_EQ(ret, -ETIME);
	CHECK_MSG(el >= 25 && el < 2000, "waited %llu ms", el);

	T_STEP("completion during the wait");
	{
		pthread_t th;

		pipe_w = p[1];
		CHECK_EQ(pthread_create(&th, NULL, writer, NULL), 0);
		ret = wait_ms(&ring, &cqe, 5000, &el);
		CHECK_EQ(ret, 0);
		CHECK(cqe != NULL);
		CHECK_EQ(cqe->user_data, 1);
		CHECK_MSG(cqe->res & 1, "poll res=0x%x", cqe->res);
		CHECK_MSG(el < 2000, "waited %llu ms for a 40ms completion", el);
		io_uring_cqe_seen(&ring, cqe);
		pthread_join(th, NULL);
	}

	T_STEP("already available CQE returned at once");
	t_submit1(&ring, 2, io_uring_prep_nop);
	ret = wait_ms(&ring, &cqe, 5000, &el);
	CHECK_EQ(ret, 0);
	CHECK(cqe != NULL);
	CHECK_EQ(cqe->user_data, 2);
	CHECK_MSG(el < 1000, "slow");
	io_uring_cqe_seen(&ring, cqe);

	T_STEP("timeout op completes during a longer wait");
	{
		struct __kernel_timespec op_ts = { .tv_sec = 0, .tv_nsec = 30 * 1000000LL };

		t_submit1(&ring, 3, io_uring_prep_timeout, &op_ts, 0, 0);
		ret = wait_ms(&ring, &cqe, 5000, &el);
		CHECK_EQ(ret, 0);
		CHECK(cqe != NULL);
		CHECK_EQ(cqe->user_data, 3);
		CHECK_EQ(cqe->res, -ETIME);
		CHECK_MSG(el >= 20 && el < 2000, "waited %llu ms", el);
		io_uring_cqe_seen(&ring, cqe);
	}

	T_STEP("NULL timeout behaves like wait_cqe");
	t_submit1(&ring, 4, io_uring_prep_nop);
	ret = io_uring_wait_cqe_timeout(&ring, &cqe, NULL);
	CHECK_EQ(ret, 0);
	CHECK(cqe != NULL);
	CHECK_EQ(cqe->user_data, 4);
	io_uring_cqe_seen(&ring, cqe);

	T_STEP("wait_cqes for 3 completions");
	/*
	 * Not timeout ops: a firing timeout op wakes every waiter in the
	 * kernel regardless of wait_nr. Polls on three pipes instead, made
	 * readable one after the other at ~20/40/60 ms by a thread.
	 */
	{
		int sp[3][2];
		pthread_t th;

		for (i = 0; i < 3; i++) {
			t_pipe(sp[i]);
			stagger_w[i] = sp[i][1];
			t_queue(&ring, 10 + (uint64_t)i, io_uring_prep_poll_add, sp[i][0], 1 /* POLLIN */);
		}
		t_submit_expect(&ring, 3);
		t_msleep(5);
		t_expect_no_cqe(&ring);
		CHECK_EQ(pthread_create(&th, NULL, stagger_writer, NULL), 0);
		ts.tv_sec = 5;
		ts.tv_nsec = 0;
		t0 = t_now_ms();
		ret = io_uring_wait_cqes(&ring, &cqe, 3, &ts, NULL);
		el = t_now_ms() - t0;
		pthread_join(th, NULL);
		CHECK_EQ(ret, 0);
		CHECK(cqe != NULL);
		CHECK_EQ(cqe->user_data, 10);
		CHECK_EQ(io_uring_cq_ready(&ring), 3);
		CHECK_MSG(el >= 50 && el < 2000, "waited %llu ms", el);
		for (i = 0; i < 3; i++) {
			close(sp[i][0]);
			close(sp[i][1]);
		}
	}
	io_uring_cq_advance(&ring, 3);

	t_expect_no_cqe(&ring);
	close(p[0]);
	close(p[1]);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
