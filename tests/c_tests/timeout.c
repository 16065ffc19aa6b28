/* SPDX-License-Identifier: MIT */
/*
 * Timeouts: relative timeout fires with -ETIME after (about) its duration;
 * absolute timeout (IORING_TIMEOUT_ABS, CLOCK_MONOTONIC) likewise; a timeout
 * with a completion count completes with res 0 as soon as that many other
 * CQEs were posted; timeout_remove cancels a pending timeout (-ECANCELED on
 * the timeout, 0 on the remove) and returns -ENOENT for an unknown one;
 * timeout_update re-arms a pending timeout with a shorter time.
 */
#include "test_helpers.h"

static void test_relative(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 60 * 1000000LL };
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	unsigned long long t0, el;

	T_STEP("relative timeout");
	sqe = t_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 1;
	t0 = t_now_ms();
	t_submit_expect(ring, 1);
	t_msleep(10);
	t_expect_no_cqe(ring);
	c = t_reap(ring);
	el = t_now_ms() - t0;
	CHECK_EQ(c.user_data, 1);
	CHECK_EQ(c.res, -ETIME);
	CHECK_MSG(el >= 55 && el < 2000, "relative 60ms timeout took %llu ms", el);
}

static void test_absolute(struct io_uring *ring)
{
	struct __kernel_timespec ts;
	struct timespec now;
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	unsigned long long t0, el;

	T_STEP("absolute timeout (CLOCK_MONOTONIC)");
	clock_gettime(CLOCK_MONOTONIC, &now);
	t0 = t_now_ms();
	now.tv_nsec += 80 * 1000000L;
	if (now.tv_nsec >= 1000000000L) {
		now.tv_sec++;
		now.tv_nsec -= 1000000000L;
	}
	ts.tv_sec = now.tv_sec;
	ts.tv_nsec = now.tv_nsec;
	sqe = t_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, IORING_TIMEOUT_ABS);
	sqe->user_data = 2;
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	el = t_now_ms() - t0;
	CHECK_EQ(c.user_data, 2);
	CHECK_EQ(c.res, -ETIME);
	CHECK_MSG(el >= 75 && el < 2000, "absolute +80ms timeout took %llu ms", el);

	T_STEP("absolute timeout in the past fires at once");
	ts.tv_sec = 1;
	ts.tv_nsec = 0;
	sqe = t_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, IORING_TIMEOUT_ABS);
	sqe->user_data = 3;
	t0 = t_now_ms();
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.user_data, 3);
	CHECK_EQ(c.res, -ETIME);
	CHECK_MSG(t_now_ms() - t0 < 1000, "past absolute timeout was slow");
}

static void test_count(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 5, .tv_nsec = 0 };
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	unsigned long long t0;
	int i, nops = 0, tos = 0;

	T_STEP("timeout with completion count 2");
	sqe = t_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 2, 0);
	sqe->user_data = 10;
	t0 = t_now_ms();
	t_submit_expect(ring, 1);
	t_msleep(5);
	t_expect_no_cqe(ring);

	/* one nop: not enough */
	sqe = t_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 11;
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.user_data, 11);
	t_msleep(5);
	t_expect_no_cqe(ring);

	/* second nop: timeout completes with res 0 */
	sqe = t_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 12;
	t_submit_expect(ring, 1);
	for (i = 0; i < 2; i++) {
		c = t_reap(ring);
		if (c.user_data == 12) {
			CHECK_EQ(c.res, 0);
			nops++;
		} else if (c.user_data == 10) {
			CHECK_EQ(c.res, 0);
			tos++;
		} else {
			T_FAIL("unexpected user_data %llu", (unsigned long long)c.user_data);
		}
	}
	CHECK_EQ(nops, 1);
	CHECK_EQ(tos, 1);
	CHECK_MSG(t_now_ms() - t0 < 2000, "count timeout waited for its time");
}

static void test_remove(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 5, .tv_nsec = 0 };
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	unsigned long long t0;
	int i;

	T_STEP("timeout_remove of a pending timeout");
	sqe = t_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 0x1234;
	t0 = t_now_ms();
	t_submit_expect(ring, 1);

	sqe = t_get_sqe(ring);
	io_uring_prep_timeout_remove(sqe, 0x1234, 0);
	sqe->user_data = 21;
	t_submit_expect(ring, 1);
	for (i = 0; i < 2; i++) {
		c = t_reap(ring);
		if (c.user_data == 0x1234)
			CHECK_EQ(c.res, -ECANCELED);
		else if (c.user_data == 21)
			CHECK_EQ(c.res, 0);
		else
			T_FAIL("unexpected user_data %llu", (unsigned long long)c.user_data);
	}
	CHECK_MSG(t_now_ms() - t0 < 2000, "timeout_remove did not remove");

	T_STEP("timeout_remove of unknown user_data -> -ENOENT");
	sqe = t_get_sqe(ring);
	io_uring_prep_timeout_remove(sqe, 0x9999, 0);
	sqe->user_data = 22;
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.user_data, 22);
	CHECK_EQ(c.res, -ENOENT);
}

static void test_update(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 5, .tv_nsec = 0 };
	struct __kernel_timespec short_ts = { .tv_sec = 0, .tv_nsec = 30 * 1000000LL };
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	unsigned long long t0;
	int i;

	T_STEP("timeout_update shortens a pending timeout");
	sqe = t_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 30;
	t0 = t_now_ms();
	t_submit_expect(ring, 1);
	sqe = t_get_sqe(ring);
	io_uring_prep_timeout_update(sqe, &short_ts, 30, 0);
	sqe->user_data = 31;
	t_submit_expect(ring, 1);
	for (i = 0; i < 2; i++) {
		c = t_reap(ring);
		if (c.user_data == 30)
			CHECK_EQ(c.res, -ETIME);
		else if (c.user_data == 31)
			CHECK_EQ(c.res, 0);
		else
			T_FAIL("unexpected user_data %llu", (unsigned long long)c.user_data);
	}
	CHECK_MSG(t_now_ms() - t0 < 2000, "updated timeout did not fire early");
}

int main(void)
{
	struct io_uring ring;

	t_queue_init(&ring, 8, 0);
	test_relative(&ring);
	test_absolute(&ring);
	test_count(&ring);
	test_remove(&ring);
	test_update(&ring);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
