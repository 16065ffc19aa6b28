/* SPDX-License-Identifier: MIT */
/*
 * Registered ring fd: io_uring_register_ring_fd returns 1 and afterwards
 * submit, wait, wait with timeout, submit_and_wait, reads and register
 * calls keep working; io_uring_unregister_ring_fd returns 1 and the ring
 * still works after it; registering again works; queue_exit with the ring
 * fd still registered is fine.
 */
#include "../rsuring_test.h"

static void exercise(struct io_uring *ring, int fd, uint64_t tag)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000000LL };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned char buf[512];
	int i;

	T_STEP("nop via submit/wait");
	t_submit1(ring, tag, io_uring_prep_nop);
	t_reap_expect(ring, tag, 0);

	T_STEP("read via submit_and_wait");
	sqe = t_queue(ring, tag + 1, io_uring_prep_read, fd, buf, sizeof(buf), 1000);
	CHECK_EQ(io_uring_submit_and_wait(ring, 1), 1);
	t_reap_expect(ring, tag + 1, 512);
	CHECK_EQ(t_verify(buf, 512, 1000, 13), -1);

	T_STEP("wait_cqe_timeout -ETIME");
	CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), -ETIME);

	T_STEP("batch of nops");
	for (i = 0; i < 8; i++) {
		sqe = t_queue(ring, tag + 10 + (uint64_t)i, io_uring_prep_nop);
	}
	t_submit_expect(ring, 8);
	for (i = 0; i < 8; i++)
		CHECK_EQ(t_reap(ring).res, 0);

	T_STEP("register call");
	CHECK_EQ(io_uring_register_files(ring, &fd, 1), 0);
	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, 0, buf, 16, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	t_submit_expect(ring, 1);
	CHECK_EQ(t_reap(ring).res, 16);
	CHECK_EQ(io_uring_unregister_files(ring), 0);
}

int main(void)
{
	struct io_uring ring;
	int fd, ret;

	fd = t_tmpfile(8192, 13);
	t_queue_init(&ring, 8, 0);

	T_STEP("register_ring_fd");
	ret = io_uring_register_ring_fd(&ring);
	if (ret == -EINVAL)
		T_SKIP("IORING_REGISTER_RING_FDS not supported");
	CHECK_EQ(ret, 1);
	exercise(&ring, fd, 100);

	T_STEP("unregister_ring_fd");
	CHECK_EQ(io_uring_unregister_ring_fd(&ring), 1);
	exercise(&ring, fd, 200);

	T_STEP("register again");
	CHECK_EQ(io_uring_register_ring_fd(&ring), 1);
	exercise(&ring, fd, 300);

	T_STEP("queue_exit with registered ring fd");
	io_uring_queue_exit(&ring);

	T_STEP("second ring registers too");
	t_queue_init(&ring, 8, 0);
	CHECK_EQ(io_uring_register_ring_fd(&ring), 1);
	exercise(&ring, fd, 400);
	io_uring_queue_exit(&ring);
	close(fd);
	return T_EXIT_PASS;
}
