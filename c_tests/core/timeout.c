/* SPDX-License-Identifier: MIT */
/*
 * Timeouts: relative timeout fires with -ETIME after (about) its duration;
 * absolute timeout (IORING_TIMEOUT_ABS, CLOCK_MONOTONIC) likewise; a timeout
 * with a completion count completes with res 0 as soon as that many other
 * CQEs were posted; timeout_remove cancels a pending timeout (-ECANCELED on
 * the timeout, 0 on the remove) and returns -ENOENT for an unknown one;
 * timeout_update re-arms a pending timeout with a shorter time.
 */
#include "../rsuring_test.h"

/* Queues a timeout as `ud` and submits it; returns the time it went in. */
static unsigned long long arm_timeout(struct io_uring *ring, __u64 ud,
				      struct __kernel_timespec *ts,
				      unsigned int count, unsigned int flags)
{
	unsigned long long t0;

	t_queue(ring, ud, io_uring_prep_timeout, ts, count, flags);
	t0 = t_now_ms();
	t_submit_expect(ring, 1);
	return t0;
}

/* A 5 s timeout as `ud` (count: 0 or completions), pending during a test. */
static unsigned long long arm_pending(struct io_uring *ring, __u64 ud,
				      unsigned int count)
{
	struct __kernel_timespec ts = { .tv_sec = 5, .tv_nsec = 0 };

	return arm_timeout(ring, ud, &ts, count, 0);
}

static void test_relative(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 60 * 1000000LL };
	struct t_cqe c;
	unsigned long long t0, el;

	T_STEP("relative timeout");
	t0 = arm_timeout(ring, 1, &ts, 0, 0);
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
	t_submit1(ring, 2, io_uring_prep_timeout, &ts, 0, IORING_TIMEOUT_ABS);
	c = t_reap(ring);
	el = t_now_ms() - t0;
	CHECK_EQ(c.user_data, 2);
	CHECK_EQ(c.res, -ETIME);
	CHECK_MSG(el >= 75 && el < 2000, "absolute +80ms timeout took %llu ms", el);

	T_STEP("absolute timeout in the past fires at once");
	ts.tv_sec = 1;
	ts.tv_nsec = 0;
	t0 = arm_timeout(ring, 3, &ts, 0, IORING_TIMEOUT_ABS);
	c = t_reap_expect(ring, 3, -ETIME);
	CHECK_MSG(t_now_ms() - t0 < 1000, "past absolute timeout was slow");
}

static void test_count(struct io_uring *ring)
{
	unsigned long long t0;

	T_STEP("timeout with completion count 2");
	t0 = arm_pending(ring, 10, 2);
	t_msleep(5);
	t_expect_no_cqe(ring);

	/* one nop: not enough */
	t_queue_nop(ring, 11);
	t_submit_expect(ring, 1);
	t_reap_expect(ring, 11, T_ANY_RES);
	t_msleep(5);
	t_expect_no_cqe(ring);

	/* second nop: timeout completes with res 0 */
	t_queue_nop(ring, 12);
	t_submit_expect(ring, 1);
	t_reap_each(ring, NULL, { 12, 0 }, { 10, 0 });
	CHECK_MSG(t_now_ms() - t0 < 2000, "count timeout waited for its time");
}

static void test_remove(struct io_uring *ring)
{
	unsigned long long t0;

	T_STEP("timeout_remove of a pending timeout");
	t0 = arm_pending(ring, 0x1234, 0);

	t_submit1(ring, 21, io_uring_prep_timeout_remove, 0x1234, 0);
	t_reap_each(ring, NULL, { 0x1234, -ECANCELED }, { 21, 0 });
	CHECK_MSG(t_now_ms() - t0 < 2000, "timeout_remove did not remove");

	T_STEP("timeout_remove of unknown user_data -> -ENOENT");
	t_submit1(ring, 22, io_uring_prep_timeout_remove, 0x9999, 0);
	t_reap_expect(ring, 22, -ENOENT);
}

static void test_update(struct io_uring *ring)
{
	struct __kernel_timespec short_ts = { .tv_sec = 0, .tv_nsec = 30 * 1000000LL };
	unsigned long long t0;

	T_STEP("timeout_update shortens a pending timeout");
	t0 = arm_pending(ring, 30, 0);
	t_submit1(ring, 31, io_uring_prep_timeout_update, &short_ts, 30, 0);
	t_reap_each(ring, NULL, { 30, -ETIME }, { 31, 0 });
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
