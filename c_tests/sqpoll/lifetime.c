/* SPDX-License-Identifier: MIT */
/*
 * A poller group outlives the ring that created it:
 *  - rings A (the creator), B, C on cpu 1; closing A leaves B and C working
 *    (reads + NOPs) and the group at 2 members, same SQ thread (same tid);
 *    the closed ring is no ring any more (-EBADF);
 *  - a ring D created afterwards on cpu 1 joins that same thread (count
 *    stays 1, tid unchanged); then closing B (the next anchor) and creating
 *    E still joins it;
 *  - io_uring_close_ring_fd on a member (after io_uring_register_ring_fd)
 *    takes it out of the group (members drop), the ring keeps working via
 *    its registered index, and a new ring still joins the same thread;
 *  - closing the last member leaves no fd behind (/proc/self/fd counted
 *    before and after) and the SQ thread goes away;
 *  - a ring created after that starts a fresh group (members 1).
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define CPU 1

static int data_fd;

static int the_sqp_tid(void)
{
	int tids[8];
	int n;

	CHECK_POLLERS(1, CPU);
	n = list_sqp_threads(tids, 8);
	CHECK_EQ(n, 1);
	return tids[0];
}

int main(void)
{
	struct io_uring a, b, c, d, e, f, g;
	int fds0, tid, ret;

	data_fd = t_data_file();
	fds0 = count_fds();

	T_STEP("create A, B, C");
	shared_ring(&a, CPU);
	tid = the_sqp_tid();
	shared_ring(&b, CPU);
	shared_ring(&c, CPU);
	CHECK_GROUP(&a, CPU, 3);
	CHECK_EQ(the_sqp_tid(), tid);
	ring_io(&a, data_fd, 0);

	T_STEP("close the creator A");
	io_uring_queue_exit(&a);
	{
		struct rsuring_sqpoll_info gi;

		CHECK_EQ(rsuring_sqpoll_group(&a, &gi), -EBADF);
	}
	CHECK_GROUP(&b, CPU, 2);
	CHECK_GROUP(&c, CPU, 2);
	ring_io(&b, data_fd, 1);
	ring_io(&c, data_fd, 2);
	CHECK_EQ(the_sqp_tid(), tid);

	T_STEP("D joins after the creator left");
	shared_ring(&d, CPU);
	CHECK_GROUP(&d, CPU, 3);
	CHECK_EQ(the_sqp_tid(), tid);
	ring_io(&d, data_fd, 3);
	ring_io(&b, data_fd, 4);

	T_STEP("close B, E joins");
	io_uring_queue_exit(&b);
	CHECK_GROUP(&c, CPU, 2);
	shared_ring(&e, CPU);
	CHECK_GROUP(&e, CPU, 3);
	CHECK_EQ(the_sqp_tid(), tid);
	ring_io(&c, data_fd, 5);
	ring_io(&d, data_fd, 6);
	ring_io(&e, data_fd, 7);

	T_STEP("close_ring_fd takes a ring out of the group");
	shared_ring(&f, CPU);
	CHECK_GROUP(&f, CPU, 4);
	ret = io_uring_register_ring_fd(&f);
	/* io_uring_close_ring_fd needs REG_REG_RING (6.3), as in liburing. */
	if (ret >= 0 && !(f.features & IORING_FEAT_REG_REG_RING)) {
		printf("lifetime: no IORING_FEAT_REG_REG_RING; close_ring_fd case not run\n");
		io_uring_queue_exit(&f);
	} else if (ret == -EINVAL || ret == -EOPNOTSUPP) {
		printf("lifetime: ring fd registration unsupported (%d); close_ring_fd case not run\n", ret);
		io_uring_queue_exit(&f);
	} else {
		CHECK_MSG(ret == 1, "io_uring_register_ring_fd = %d", ret);
		ret = io_uring_close_ring_fd(&f);
		CHECK_MSG(ret == 1, "io_uring_close_ring_fd = %d", ret);
		CHECK_GROUP(&c, CPU, 3);
		ring_io(&f, data_fd, 8);
		shared_ring(&g, CPU);
		CHECK_GROUP(&g, CPU, 4);
		CHECK_EQ(the_sqp_tid(), tid);
		ring_io(&g, data_fd, 9);
		io_uring_queue_exit(&g);
		io_uring_queue_exit(&f);
	}
	CHECK_GROUP(&c, CPU, 3);

	T_STEP("close the rest");
	io_uring_queue_exit(&c);
	CHECK_GROUP(&d, CPU, 2);
	ring_io(&e, data_fd, 10);
	io_uring_queue_exit(&e);
	CHECK_GROUP(&d, CPU, 1);
	ring_io(&d, data_fd, 11);
	CHECK_EQ(the_sqp_tid(), tid);
	io_uring_queue_exit(&d);
	CHECK_EQ(count_fds(), fds0);
	CHECK_NO_POLLERS();

	T_STEP("a new ring starts a fresh group");
	shared_ring(&a, CPU);
	CHECK_GROUP(&a, CPU, 1);
	CHECK_POLLERS(1, CPU);
	ring_io(&a, data_fd, 12);
	io_uring_queue_exit(&a);
	CHECK_EQ(count_fds(), fds0);
	CHECK_NO_POLLERS();

	close(data_fd);
	printf("lifetime: ok\n");
	return 0;
}
