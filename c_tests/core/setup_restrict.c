/* SPDX-License-Identifier: MIT */
/*
 * Setup features newer than liburing 2.3's exported symbols:
 *  - IORING_SETUP_R_DISABLED: submitting before io_uring_enable_rings
 *    fails (-EBADFD) and nothing runs; after enabling, the ring works;
 *    enabling twice -> -EBADFD;
 *  - io_uring_register_restrictions on a disabled ring: only NOP and READ
 *    allowed, only IORING_REGISTER_FILES allowed as register op, SQE flags
 *    limited to IOSQE_IO_LINK: a WRITE, an IOSQE_ASYNC NOP and a
 *    register_buffers are refused with -EACCES; registering restrictions
 *    again -> -EBUSY/-EBADFD;
 *  - IORING_SETUP_NO_SQARRAY (6.6+): NOPs and reads work across SQ wrap.
 */
#include "../rsuring_test.h"
#include <sys/uio.h>

static void test_disabled(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret;

	T_STEP("R_DISABLED ring refuses submissions");
	CHECK_OK(t_init_params(&ring, 8, &p, IORING_SETUP_R_DISABLED));
	t_queue(&ring, 1, io_uring_prep_nop);
	ret = io_uring_submit(&ring);
	CHECK_EQ(ret, -EBADFD);
	CHECK_EQ(io_uring_cq_ready(&ring), 0);

	T_STEP("enable_rings, then the pending SQE is submitted");
	CHECK_EQ(io_uring_enable_rings(&ring), 0);
	/* the SQE is still in the SQ ring: submitting now picks it up */
	ret = io_uring_submit_and_wait(&ring, 1);
	CHECK_MSG(ret == 1, "submit after enable: %d", ret);
	CHECK_EQ(t_reap(&ring).user_data, 1);
	t_nop_round_trip(&ring, 8, 10);
	t_nop_round_trip(&ring, 8, 20);

	T_STEP("enable twice -> -EBADFD");
	CHECK_EQ(io_uring_enable_rings(&ring), -EBADFD);
	io_uring_queue_exit(&ring);
}

static void test_restrictions(void)
{
	struct io_uring_restriction res[4];
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	char buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	int fd, ret;

	fd = t_tmpfile(1024, 5);
	T_STEP("register_restrictions");
	CHECK_OK(t_init_params(&ring, 8, &p, IORING_SETUP_R_DISABLED));
	memset(res, 0, sizeof(res));
	res[0].opcode = IORING_RESTRICTION_SQE_OP;
	res[0].sqe_op = IORING_OP_NOP;
	res[1].opcode = IORING_RESTRICTION_SQE_OP;
	res[1].sqe_op = IORING_OP_READ;
	res[2].opcode = IORING_RESTRICTION_REGISTER_OP;
	res[2].register_op = IORING_REGISTER_FILES;
	res[3].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[3].sqe_flags = IOSQE_IO_LINK;
	ret = io_uring_register_restrictions(&ring, res, 4);
	CHECK_EQ(ret, 0);

	T_STEP("restrictions again -> error");
	ret = io_uring_register_restrictions(&ring, res, 4);
	CHECK_MSG(ret == -EBUSY || ret == -EBADFD, "second restrictions: %d", ret);

	CHECK_EQ(io_uring_enable_rings(&ring), 0);

	T_STEP("allowed ops work");
	t_nop_round_trip(&ring, 4, 0);
	sqe = t_get_sqe(&ring);
	io_uring_prep_read(sqe, fd, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 100;
	sqe = t_queue(&ring, 101, io_uring_prep_nop);
	t_submit_expect(&ring, 2);
	t_reap_expect(&ring, 100, 64);
	CHECK_EQ(t_verify(buf, 64, 0, 5), -1);
	t_reap_expect(&ring, 101, 0);

	T_STEP("disallowed opcode -> -EACCES");
	t_submit1(&ring, 102, io_uring_prep_write, fd, buf, sizeof(buf), 0);
	t_reap_expect(&ring, 102, -EACCES);

	T_STEP("disallowed sqe flag -> -EACCES");
	sqe = t_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = 103;
	t_submit_expect(&ring, 1);
	t_reap_expect(&ring, 103, -EACCES);

	T_STEP("register op allowed / refused");
	CHECK_EQ(io_uring_register_files(&ring, &fd, 1), 0);
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), -EACCES);
	io_uring_queue_exit(&ring);
	close(fd);
}

static void test_no_sqarray(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	unsigned round;
	int ret, fd;

	T_STEP("NO_SQARRAY");
	ret = t_init_params(&ring, 4, &p, IORING_SETUP_NO_SQARRAY);
	if (ret == -EINVAL) {
		fprintf(stderr, "note: NO_SQARRAY not supported\n");
		return;
	}
	CHECK_OK(ret);
	CHECK(ring.flags & IORING_SETUP_NO_SQARRAY);
	for (round = 0; round < 10; round++)
		t_nop_round_trip(&ring, 1 + round % 4, round * 10);

	fd = t_tmpfile(8192, 66);
	for (round = 0; round < 6; round++) {
		unsigned char buf[512];
		struct io_uring_sqe *sqe = t_get_sqe(&ring);

		io_uring_prep_read(sqe, fd, buf, sizeof(buf), round * 512);
		sqe->user_data = 900 + round;
		t_submit_expect(&ring, 1);
		t_reap_expect(&ring, 900 + round, 512);
		CHECK_EQ(t_verify(buf, 512, round * 512, 66), -1);
	}
	close(fd);
	io_uring_queue_exit(&ring);
}

int main(void)
{
	test_disabled();
	test_restrictions();
	test_no_sqarray();
	return T_EXIT_PASS;
}
