/* SPDX-License-Identifier: MIT */
/*
 * io_uring_close_ring_fd (liburing >= 2.4): without a registered ring fd ->
 * -EINVAL; after io_uring_register_ring_fd (a second register -> -EEXIST)
 * it returns 1, the old fd number is closed and ring.ring_fd is -1, closing
 * again -> -EBADF; the ring keeps working only through the registered
 * index: submit, wait, timeouts, reads and register calls
 * (IORING_REGISTER_USE_REGISTERED_RING); queue_exit cleans up.
 */
#include "../rsuring_test.h"

int main(void)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000000LL };
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned char buf[256];
	struct t_cqe c;
	int ret, oldfd, fd, i;

	fd = t_tmpfile(4096, 71);
	memset(&p, 0, sizeof(p));
	CHECK_OK(io_uring_queue_init_params(8, &ring, &p));
	if (!(p.features & IORING_FEAT_REG_REG_RING))
		T_SKIP("no IORING_FEAT_REG_REG_RING");

	T_STEP("close_ring_fd without registration -> -EINVAL");
	CHECK_EQ(io_uring_close_ring_fd(&ring), -EINVAL);

	T_STEP("register_ring_fd, twice -> -EEXIST");
	CHECK_EQ(io_uring_register_ring_fd(&ring), 1);
	CHECK_EQ(io_uring_register_ring_fd(&ring), -EEXIST);

	T_STEP("close_ring_fd");
	oldfd = ring.ring_fd;
	CHECK(oldfd >= 0);
	CHECK_EQ(io_uring_close_ring_fd(&ring), 1);
	CHECK_EQ(ring.ring_fd, -1);
	CHECK(fcntl(oldfd, F_GETFD) < 0 && errno == EBADF);
	CHECK_EQ(io_uring_close_ring_fd(&ring), -EBADF);

	T_STEP("nops after close");
	for (i = 0; i < 8; i++) {
		sqe = t_queue(&ring, (uint64_t)i, io_uring_prep_nop);
	}
	t_submit_expect(&ring, 8);
	for (i = 0; i < 8; i++) {
		c = t_reap(&ring);
		CHECK_EQ(c.res, 0);
	}

	T_STEP("read + submit_and_wait after close");
	sqe = t_queue(&ring, 50, io_uring_prep_read, fd, buf, sizeof(buf), 512);
	CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1);
	c = t_reap_expect(&ring, 50, 256);
	CHECK_EQ(t_verify(buf, 256, 512, 71), -1);

	T_STEP("wait_cqe_timeout after close");
	ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	CHECK_EQ(ret, -ETIME);

	T_STEP("register calls after close");
	CHECK_EQ(io_uring_register_files(&ring, &fd, 1), 0);
	sqe = t_get_sqe(&ring);
	io_uring_prep_read(sqe, 0, buf, 16, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = 51;
	t_submit_expect(&ring, 1);
	c = t_reap(&ring);
	CHECK_EQ(c.res, 16);
	CHECK_EQ(t_verify(buf, 16, 0, 71), -1);
	CHECK_EQ(io_uring_unregister_files(&ring), 0);

	T_STEP("queue_exit after close");
	io_uring_queue_exit(&ring);
	close(fd);
	return T_EXIT_PASS;
}
