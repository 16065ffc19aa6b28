/* SPDX-License-Identifier: MIT */
/*
 * io_uring_submit_and_wait (returns the number submitted, CQEs ready after),
 * io_uring_submit_and_wait_timeout (submitted count + CQE; -ETIME with
 * nothing to submit and nothing completing), io_uring_submit_and_get_events
 * and io_uring_get_events, the latter two also on an
 * IORING_SETUP_DEFER_TASKRUN ring where completions are only posted when the
 * task asks for events.
 */
#include "../rsuring_test.h"
#include <poll.h>

static void test_submit_and_wait(struct io_uring *ring)
{
	struct __kernel_timespec op_ts = { .tv_sec = 0, .tv_nsec = 30 * 1000000LL };
	unsigned long long t0, el;
	int ret;

	T_STEP("submit_and_wait(4) with 4 nops");
	t_queue_nops(ring, 4, 0);
	ret = io_uring_submit_and_wait(ring, 4);
	CHECK_EQ(ret, 4);
	CHECK_EQ(io_uring_cq_ready(ring), 4);
	io_uring_cq_advance(ring, 4);

	T_STEP("submit_and_wait(1) blocks until a 30ms timeout fires");
	t_queue(ring, 9, io_uring_prep_timeout, &op_ts, 0, 0);
	t0 = t_now_ms();
	ret = io_uring_submit_and_wait(ring, 1);
	el = t_now_ms() - t0;
	CHECK_EQ(ret, 1);
	CHECK_EQ(io_uring_cq_ready(ring), 1);
	CHECK_MSG(el >= 25 && el < 2000, "waited %llu ms", el);
	{
		struct t_cqe c = t_reap(ring);

		CHECK_EQ(c.user_data, 9);
		CHECK_EQ(c.res, -ETIME);
	}

	T_STEP("submit_and_wait(0) == submit");
	t_queue_nops(ring, 3, 20);
	CHECK_EQ(io_uring_submit_and_wait(ring, 0), 3);
	for (ret = 0; ret < 3; ret++)
		(void)t_reap(ring);
}

static void test_submit_and_wait_timeout(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 2, .tv_nsec = 0 };
	struct __kernel_timespec op_ts = { .tv_sec = 0, .tv_nsec = 30 * 1000000LL };
	struct io_uring_cqe *cqe = NULL;
	unsigned long long t0, el;
	int ret;

	T_STEP("submit_and_wait_timeout: 4 nops, wait 4");
	t_queue_nops(ring, 4, 100);
	ret = io_uring_submit_and_wait_timeout(ring, &cqe, 4, &ts, NULL);
	CHECK_EQ(ret, 4);
	CHECK(cqe != NULL);
	CHECK_EQ(cqe->user_data, 100);
	CHECK_EQ(io_uring_cq_ready(ring), 4);
	io_uring_cq_advance(ring, 4);

	T_STEP("submit_and_wait_timeout: op completes before the wait timeout");
	t_queue(ring, 110, io_uring_prep_timeout, &op_ts, 0, 0);
	cqe = NULL;
	t0 = t_now_ms();
	ret = io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
	el = t_now_ms() - t0;
	CHECK_EQ(ret, 1);
	CHECK(cqe != NULL);
	CHECK_EQ(cqe->user_data, 110);
	CHECK_EQ(cqe->res, -ETIME);
	CHECK_MSG(el >= 25 && el < 1500, "waited %llu ms", el);
	io_uring_cqe_seen(ring, cqe);

	T_STEP("submit_and_wait_timeout: nothing to do -> -ETIME");
	ts.tv_sec = 0;
	ts.tv_nsec = 40 * 1000000LL;
	t0 = t_now_ms();
	ret = io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
	el = t_now_ms() - t0;
	CHECK_EQ(ret, -ETIME);
	CHECK_MSG(el >= 35 && el < 2000, "waited %llu ms", el);
}

static void test_get_events(struct io_uring *ring)
{
	int ret;

	T_STEP("submit_and_get_events / get_events on a normal ring");
	t_queue_nops(ring, 2, 200);
	ret = io_uring_submit_and_get_events(ring);
	CHECK_EQ(ret, 2);
	CHECK_EQ(io_uring_cq_ready(ring), 2);
	io_uring_cq_advance(ring, 2);
	CHECK_EQ(io_uring_get_events(ring), 0);
	CHECK_EQ(io_uring_cq_ready(ring), 0);
	CHECK_EQ(io_uring_submit_and_get_events(ring), 0);
}

static void test_defer_taskrun(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	char buf[8];
	int ret, pfd[2];

	T_STEP("DEFER_TASKRUN ring");
	ret = t_init_params(&ring, 8, &p, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (ret == -EINVAL)
		return;	/* kernel < 6.1: nothing more to test here */
	CHECK_OK(ret);

	t_pipe(pfd);
	t_submit1(&ring, 300, io_uring_prep_read, pfd[0], buf, sizeof(buf), 0);
	CHECK_EQ(write(pfd[1], "abc", 3), 3);
	t_msleep(20);
	/* the completion is deferred to us: not in the CQ ring yet */
	CHECK_EQ(io_uring_cq_ready(&ring), 0);
	T_STEP("get_events runs deferred work and posts the CQE");
	CHECK_EQ(io_uring_get_events(&ring), 0);
	CHECK_EQ(io_uring_cq_ready(&ring), 1);
	{
		struct t_cqe c = t_reap(&ring);

		CHECK_EQ(c.user_data, 300);
		CHECK_EQ(c.res, 3);
		CHECK(memcmp(buf, "abc", 3) == 0);
	}

	T_STEP("submit_and_get_events posts deferred CQE and new nop CQE");
	t_submit1(&ring, 301, io_uring_prep_read, pfd[0], buf, sizeof(buf), 0);
	CHECK_EQ(write(pfd[1], "de", 2), 2);
	t_msleep(20);
	CHECK_EQ(io_uring_cq_ready(&ring), 0);
	t_queue_nops(&ring, 1, 302);
	ret = io_uring_submit_and_get_events(&ring);
	CHECK_EQ(ret, 1);
	CHECK_EQ(io_uring_cq_ready(&ring), 2);
	t_reap_each(&ring, NULL, { 301, 2 }, { 302, T_ANY_RES });
	close(pfd[0]);
	close(pfd[1]);
	io_uring_queue_exit(&ring);
}

int main(void)
{
	struct io_uring ring;

	t_queue_init(&ring, 8, 0);
	test_submit_and_wait(&ring);
	test_submit_and_wait_timeout(&ring);
	test_get_events(&ring);
	io_uring_queue_exit(&ring);
	test_defer_taskrun();
	return T_EXIT_PASS;
}
