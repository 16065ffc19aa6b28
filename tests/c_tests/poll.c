/* SPDX-License-Identifier: MIT */
/*
 * Poll: poll_add on a pipe that becomes readable (res carries POLLIN);
 * poll on an already-writable fd completes at once; poll_remove of a pending
 * poll (-ECANCELED on the poll, 0 on the remove) and of an unknown one
 * (-ENOENT); multishot poll posts several CQEs with IORING_CQE_F_MORE and a
 * final one without it when removed; poll_update changes the user_data.
 */
#include "test_helpers.h"
#include <poll.h>

static void drain(int fd)
{
	char buf[256];

	CHECK(read(fd, buf, sizeof(buf)) > 0);
}

static void test_oneshot(struct io_uring *ring, int p[2])
{
	struct io_uring_sqe *sqe;
	struct t_cqe c;

	T_STEP("poll_add then pipe becomes readable");
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	sqe->user_data = 1;
	t_submit_expect(ring, 1);
	t_msleep(10);
	t_expect_no_cqe(ring);
	CHECK_EQ(write(p[1], "a", 1), 1);
	c = t_reap(ring);
	CHECK_EQ(c.user_data, 1);
	CHECK_MSG(c.res > 0 && (c.res & POLLIN), "poll res=0x%x", c.res);
	CHECK(!(c.flags & IORING_CQE_F_MORE));
	drain(p[0]);

	T_STEP("poll on already-writable fd");
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_add(sqe, p[1], POLLOUT);
	sqe->user_data = 2;
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.user_data, 2);
	CHECK_MSG(c.res & POLLOUT, "poll res=0x%x", c.res);
}

static void test_remove(struct io_uring *ring, int p[2])
{
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	int i, got_p = 0, got_r = 0;

	T_STEP("poll_remove a pending poll");
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	sqe->user_data = 10;
	t_submit_expect(ring, 1);
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_remove(sqe, 10);
	sqe->user_data = 11;
	t_submit_expect(ring, 1);
	for (i = 0; i < 2; i++) {
		c = t_reap(ring);
		if (c.user_data == 10) {
			CHECK_EQ(c.res, -ECANCELED);
			got_p++;
		} else if (c.user_data == 11) {
			CHECK_EQ(c.res, 0);
			got_r++;
		} else {
			T_FAIL("unexpected user_data %llu", (unsigned long long)c.user_data);
		}
	}
	CHECK_EQ(got_p, 1);
	CHECK_EQ(got_r, 1);

	T_STEP("poll_remove unknown -> -ENOENT");
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_remove(sqe, 12345);
	sqe->user_data = 12;
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.user_data, 12);
	CHECK_EQ(c.res, -ENOENT);
}

static void test_multishot(struct io_uring *ring, int p[2])
{
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	int i, got_p = 0, got_r = 0;

	T_STEP("multishot poll");
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_multishot(sqe, p[0], POLLIN);
	sqe->user_data = 20;
	t_submit_expect(ring, 1);
	t_msleep(5);
	t_expect_no_cqe(ring);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(write(p[1], "b", 1), 1);
		c = t_reap(ring);
		CHECK_EQ(c.user_data, 20);
		if (c.res == -EINVAL && i == 0)
			T_SKIP("multishot poll not supported");
		CHECK_MSG(c.res & POLLIN, "multishot res=0x%x", c.res);
		CHECK_MSG(c.flags & IORING_CQE_F_MORE, "no F_MORE on shot %d", i);
		drain(p[0]);
		t_msleep(2);
		t_expect_no_cqe(ring);
	}

	T_STEP("poll_update changes multishot user_data");
	sqe = t_get_sqe(ring);
	/* events are not updated, so the mask must be 0 (kernel: -EINVAL otherwise) */
	io_uring_prep_poll_update(sqe, 20, 21, 0, IORING_POLL_UPDATE_USER_DATA);
	sqe->user_data = 22;
	t_submit_expect(ring, 1);
	c = t_reap(ring);
	CHECK_EQ(c.user_data, 22);
	CHECK_EQ(c.res, 0);
	CHECK_EQ(write(p[1], "c", 1), 1);
	c = t_reap(ring);
	CHECK_EQ(c.user_data, 21);
	CHECK_MSG(c.res & POLLIN, "res=0x%x", c.res);
	CHECK(c.flags & IORING_CQE_F_MORE);
	drain(p[0]);

	T_STEP("remove multishot poll: final CQE without F_MORE");
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_remove(sqe, 21);
	sqe->user_data = 23;
	t_submit_expect(ring, 1);
	for (i = 0; i < 2; i++) {
		c = t_reap(ring);
		if (c.user_data == 21) {
			CHECK_EQ(c.res, -ECANCELED);
			CHECK(!(c.flags & IORING_CQE_F_MORE));
			got_p++;
		} else if (c.user_data == 23) {
			CHECK_EQ(c.res, 0);
			got_r++;
		} else {
			T_FAIL("unexpected user_data %llu", (unsigned long long)c.user_data);
		}
	}
	CHECK_EQ(got_p, 1);
	CHECK_EQ(got_r, 1);
	CHECK_EQ(write(p[1], "d", 1), 1);
	t_msleep(5);
	t_expect_no_cqe(ring);
	drain(p[0]);
}

int main(void)
{
	struct io_uring ring;
	int p[2];

	t_queue_init(&ring, 8, 0);
	t_pipe(p);
	test_oneshot(&ring, p);
	test_remove(&ring, p);
	test_multishot(&ring, p);
	close(p[0]);
	close(p[1]);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
