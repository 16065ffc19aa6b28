/* SPDX-License-Identifier: MIT */
/*
 * Cancellation: io_uring_prep_cancel on a pending poll and on a pending pipe
 * read (target -> -ECANCELED, cancel -> 0); cancel of an unknown user_data
 * -> -ENOENT; io_uring_prep_cancel64; cancel by fd with
 * IORING_ASYNC_CANCEL_ALL returning the number cancelled;
 * io_uring_register_sync_cancel (0 when found, -ENOENT when not).
 */
#include "../rsuring_test.h"
#include <poll.h>

static void test_cancel_poll(struct io_uring *ring, int p[2])
{
	struct io_uring_sqe *sqe;
	static int marker;

	T_STEP("cancel a pending poll (prep_cancel by pointer)");
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	io_uring_sqe_set_data(sqe, &marker);
	t_submit_expect(ring, 1);
	t_msleep(5);
	t_expect_no_cqe(ring);

	t_submit1(ring, 2, io_uring_prep_cancel, &marker, 0);
	t_reap_each(ring, NULL, { (uint64_t)(uintptr_t)&marker, -ECANCELED }, { 2, 0 });
}

static void test_cancel_read(struct io_uring *ring, int p[2])
{
	char buf[32];

	T_STEP("cancel a pending pipe read (prep_cancel64)");
	t_submit1(ring, 0xabcdef0123ULL, io_uring_prep_read, p[0], buf, sizeof(buf), 0);
	t_msleep(5);
	t_expect_no_cqe(ring);

	t_submit1(ring, 4, io_uring_prep_cancel64, 0xabcdef0123ULL, 0);
	t_reap_each(ring, NULL, { 0xabcdef0123ULL, -ECANCELED }, { 4, 0 });

	T_STEP("pipe is still usable and nothing was consumed by the cancelled read");
	CHECK_EQ(write(p[1], "xyz", 3), 3);
	t_submit1(ring, 5, io_uring_prep_read, p[0], buf, sizeof(buf), 0);
	t_reap_expect(ring, 5, 3);
	CHECK(memcmp(buf, "xyz", 3) == 0);
}

static void test_cancel_unknown(struct io_uring *ring)
{
	T_STEP("cancel of unknown user_data -> -ENOENT");
	t_submit1(ring, 6, io_uring_prep_cancel64, 0x7777777ULL, 0);
	t_reap_expect(ring, 6, -ENOENT);
}

static void test_cancel_fd_all(struct io_uring *ring, int p[2])
{
	struct t_cqe c;
	int i, cancelled = 0, got_cancel = 0;

	T_STEP("cancel by fd, all matches");
	for (i = 0; i < 3; i++) {
		t_queue(ring, 100 + (uint64_t)i, io_uring_prep_poll_add, p[0], POLLIN);
	}
	t_submit_expect(ring, 3);
	t_msleep(5);
	t_expect_no_cqe(ring);

	t_submit1(ring, 200, io_uring_prep_cancel_fd, p[0], IORING_ASYNC_CANCEL_ALL);
	for (i = 0; i < 4; i++) {
		c = t_reap(ring);
		if (c.user_data == 200) {
			if (c.res == -EINVAL)
				T_SKIP("IORING_ASYNC_CANCEL_FD not supported");
			CHECK_EQ(c.res, 3);
			got_cancel++;
		} else if (c.user_data >= 100 && c.user_data < 103) {
			CHECK_EQ(c.res, -ECANCELED);
			cancelled++;
		} else {
			T_FAIL("unexpected user_data %llu", (unsigned long long)c.user_data);
		}
	}
	CHECK_EQ(got_cancel, 1);
	CHECK_EQ(cancelled, 3);
}

static void test_sync_cancel(struct io_uring *ring, int p[2])
{
	struct io_uring_sync_cancel_reg reg;
	char buf[8];
	int ret;

	T_STEP("register_sync_cancel of a pending read");
	t_submit1(ring, 300, io_uring_prep_read, p[0], buf, sizeof(buf), 0);
	t_msleep(5);
	t_expect_no_cqe(ring);

	memset(&reg, 0, sizeof(reg));
	reg.addr = 300;
	reg.fd = -1;
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	ret = io_uring_register_sync_cancel(ring, &reg);
	if (ret == -EINVAL)
		T_SKIP("sync cancel not supported");
	CHECK_EQ(ret, 0);
	/* the target CQE is posted by the time sync cancel returns */
	t_reap_expect(ring, 300, -ECANCELED);

	T_STEP("register_sync_cancel of unknown -> -ENOENT");
	memset(&reg, 0, sizeof(reg));
	reg.addr = 301;
	reg.fd = -1;
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	CHECK_EQ(io_uring_register_sync_cancel(ring, &reg), -ENOENT);
}

int main(void)
{
	struct io_uring ring;
	int p[2];

	t_queue_init(&ring, 16, 0);
	t_pipe(p);
	test_cancel_poll(&ring, p);
	test_cancel_read(&ring, p);
	test_cancel_unknown(&ring);
	test_cancel_fd_all(&ring, p);
	test_sync_cancel(&ring, p);
	t_expect_no_cqe(&ring);
	close(p[0]);
	close(p[1]);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
