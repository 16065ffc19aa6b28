/* SPDX-License-Identifier: MIT */
/*
 * io_uring_setup_buf_ring / io_uring_free_buf_ring (liburing >= 2.4):
 * the library allocates, registers and initialises the buffer ring;
 * recv with IOSQE_BUFFER_SELECT on a socketpair picks buffers in order with
 * the data in them; multishot recv keeps posting IORING_CQE_F_MORE CQEs,
 * each with its own buffer, until the buffers run out (final CQE -ENOBUFS
 * without F_MORE); recycling with io_uring_buf_ring_add/advance;
 * a non-power-of-2 size and a duplicate bgid fail with NULL and *err set;
 * free_buf_ring unregisters (the group is then unknown: -ENOBUFS).
 */
#include "../rsuring_test.h"
#include <sys/socket.h>

#define NB 8
#define BS 128
#define BGID 12

static char bufs[NB][BS];

int main(void)
{
	struct io_uring ring;
	struct io_uring_buf_ring *br, *br2;
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	int sv[2], err, i, mask = io_uring_buf_ring_mask(NB);

	t_queue_init(&ring, 16, 0);
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));

	T_STEP("setup_buf_ring");
	err = 12345;
	br = io_uring_setup_buf_ring(&ring, NB, BGID, 0, &err);
	if (!br && err == -EINVAL)
		T_SKIP("buffer rings not supported");
	CHECK_MSG(br != NULL, "setup_buf_ring failed: %d", err);
	for (i = 0; i < NB; i++)
		io_uring_buf_ring_add(br, bufs[i], BS, (unsigned short)i, mask, i);
	io_uring_buf_ring_advance(br, NB);

	T_STEP("setup_buf_ring errors");
	err = 0;
	br2 = io_uring_setup_buf_ring(&ring, 6, BGID + 1, 0, &err);
	CHECK(br2 == NULL);
	CHECK_EQ(err, -EINVAL);
	err = 0;
	br2 = io_uring_setup_buf_ring(&ring, NB, BGID, 0, &err);
	CHECK(br2 == NULL);
	CHECK_EQ(err, -EEXIST);

	T_STEP("single-shot recv with buffer select");
	for (i = 0; i < 3; i++) {
		char msg[32];
		int len = snprintf(msg, sizeof(msg), "single %d", i);
		unsigned bid;

		CHECK_EQ(send(sv[1], msg, (size_t)len, 0), len);
		sqe = t_get_sqe(&ring);
		io_uring_prep_recv(sqe, sv[0], NULL, BS, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = BGID;
		sqe->user_data = (uint64_t)i;
		t_submit_expect(&ring, 1);
		c = t_reap(&ring);
		CHECK_EQ(c.res, len);
		CHECK(c.flags & IORING_CQE_F_BUFFER);
		bid = c.flags >> IORING_CQE_BUFFER_SHIFT;
		CHECK_EQ(bid, i);
		CHECK(memcmp(bufs[bid], msg, (size_t)len) == 0);
	}

	T_STEP("multishot recv until buffers run out");
	sqe = t_get_sqe(&ring);
	io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	sqe->user_data = 77;
	t_submit_expect(&ring, 1);
	t_msleep(5);
	t_expect_no_cqe(&ring);
	/* 5 buffers left (3..7): 5 messages fill them, the 6th -> ENOBUFS */
	for (i = 0; i < 6; i++) {
		char msg[32];
		int len = snprintf(msg, sizeof(msg), "multi %d", i);
		unsigned bid;

		CHECK_EQ(send(sv[1], msg, (size_t)len, 0), len);
		c = t_reap_expect(&ring, 77, T_ANY_RES);
		if (i == 0 && c.res == -EINVAL)
			T_SKIP("multishot recv not supported");
		if (i < 5) {
			CHECK_MSG(c.res == len, "shot %d res=%d", i, c.res);
			CHECK_MSG(c.flags & IORING_CQE_F_MORE, "shot %d lacks F_MORE", i);
			CHECK(c.flags & IORING_CQE_F_BUFFER);
			bid = c.flags >> IORING_CQE_BUFFER_SHIFT;
			CHECK_EQ(bid, 3 + i);
			CHECK(memcmp(bufs[bid], msg, (size_t)len) == 0);
		} else {
			CHECK_EQ(c.res, -ENOBUFS);
			CHECK(!(c.flags & IORING_CQE_F_MORE));
		}
	}

	T_STEP("recycle a buffer and read the pending message");
	io_uring_buf_ring_add(br, bufs[0], BS, 0, mask, 0);
	io_uring_buf_ring_advance(br, 1);
	sqe = t_get_sqe(&ring);
	io_uring_prep_recv(sqe, sv[0], NULL, BS, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	sqe->user_data = 88;
	t_submit_expect(&ring, 1);
	c = t_reap_expect(&ring, 88, 7);
	CHECK_EQ(c.flags >> IORING_CQE_BUFFER_SHIFT, 0);
	CHECK(memcmp(bufs[0], "multi 5", 7) == 0);

	T_STEP("free_buf_ring");
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, NB, BGID), 0);
	CHECK_EQ(send(sv[1], "x", 1, 0), 1);
	sqe = t_get_sqe(&ring);
	io_uring_prep_recv(sqe, sv[0], NULL, BS, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	t_submit_expect(&ring, 1);
	c = t_reap(&ring);
	CHECK_EQ(c.res, -ENOBUFS);

	T_STEP("setup again with the same bgid after free");
	br = io_uring_setup_buf_ring(&ring, 4, BGID, 0, &err);
	CHECK_MSG(br != NULL, "setup again: %d", err);
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 4, BGID), 0);

	close(sv[0]);
	close(sv[1]);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
