/* SPDX-License-Identifier: MIT */
/*
 * Poll: poll_add on a pipe that becomes readable (res carries POLLIN);
 * poll on an already-writable fd completes at once; poll_remove of a pending
 * poll (-ECANCELED on the poll, 0 on the remove) and of an unknown one
 * (-ENOENT); multishot poll posts several CQEs with IORING_CQE_F_MORE and a
 * final one without it when removed; poll_update changes the user_data.
 */
#include "../rsuring_test.h"
#include <poll.h>

static void drain(int fd)
{
	char buf[256];

	CHECK(read(fd, buf, sizeof(buf)) > 0);
}

static void test_oneshot(struct io_uring *ring, int p[2])
{
	struct t_cqe c;

	T_STEP("poll_add then pipe becomes readable");
	t_submit1(ring, 1, io_uring_prep_poll_add, p[0], POLLIN);
	t_msleep(10);
	t_expect_no_cqe(ring);
	CHECK_EQ(write(p[1], "a", 1), 1);
	c = t_reap_expect(ring, 1, T_ANY_RES);
	CHECK_MSG(c.res > 0 && (c.res & POLLIN), "poll res=0x%x", c.res);
	CHECK(!(c.flags & IORING_CQE_F_MORE));
	drain(p[0]);

	T_STEP("poll on already-writable fd");
	t_submit1(ring, 2, io_uring_prep_poll_add, p[1], POLLOUT);
	c = t_reap_expect(ring, 2, T_ANY_RES);
	CHECK_MSG(c.res & POLLOUT, "poll res=0x%x", c.res);
}

static void test_remove(struct io_uring *ring, int p[2])
{
	T_STEP("poll_remove a pending poll");
	t_submit1(ring, 10, io_uring_prep_poll_add, p[0], POLLIN);
	t_submit1(ring, 11, io_uring_prep_poll_remove, 10);
	t_reap_each(ring, NULL, { 10, -ECANCELED }, { 11, 0 });

	T_STEP("poll_remove unknown -> -ENOENT");
	t_submit1(ring, 12, io_uring_prep_poll_remove, 12345);
	t_reap_expect(ring, 12, -ENOENT);
}

static void test_multishot(struct io_uring *ring, int p[2])
{
	struct io_uring_sqe *sqe;
	struct t_cqe c, got[2];
	int i;

	T_STEP("multishot poll");
	t_submit1(ring, 20, io_uring_prep_poll_multishot, p[0], POLLIN);
	t_msleep(5);
	t_expect_no_cqe(ring);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(write(p[1], "b", 1), 1);
		c = t_reap_expect(ring, 20, T_ANY_RES);
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
	c = t_reap_expect(ring, 22, 0);
	CHECK_EQ(write(p[1], "c", 1), 1);
	c = t_reap_expect(ring, 21, T_ANY_RES);
	CHECK_MSG(c.res & POLLIN, "res=0x%x", c.res);
	CHECK(c.flags & IORING_CQE_F_MORE);
	drain(p[0]);

	T_STEP("remove multishot poll: final CQE without F_MORE");
	t_submit1(ring, 23, io_uring_prep_poll_remove, 21);
	t_reap_each(ring, got, { 21, -ECANCELED }, { 23, 0 });
	CHECK(!(got[0].flags & IORING_CQE_F_MORE));
	CHECK_EQ(write(p[1], "d", 1), 1);
	t_msleep(5);
	t_expect_no_cqe(ring);
	drain(p[0]);
}

int main(void)
{
	static void (*const tests[])(struct io_uring *, int[2]) = {
		test_oneshot, test_remove, test_multishot,
	};
	struct io_uring ring;
	int p[2];
	size_t i;

	t_queue_init(&ring, 8, 0);
	t_pipe(p);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		tests[i](&ring, p);
	close(p[0]);
	close(p[1]);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
