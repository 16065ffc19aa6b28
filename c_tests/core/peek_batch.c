/* SPDX-License-Identifier: MIT */
/*
 * io_uring_peek_batch_cqe + io_uring_cq_advance and io_uring_for_each_cqe,
 * over many rounds on a small CQ (8 SQ / 16 CQ entries) so the CQ head and
 * tail wrap around the ring many times: every CQE seen exactly once and in
 * submission order (NOPs complete inline, in order); peek_batch with a count
 * smaller than what is ready; empty CQ -> 0; cq_ready bookkeeping. The same
 * rounds on a CQE32 ring, where each CQE takes two 16-byte slots: every
 * pointer peek_batch_cqe returns is the slot of its ring position.
 */
#include "../rsuring_test.h"

static uint64_t next_ud = 1, expect_ud = 1;

static void submit_nops(struct io_uring *ring, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = next_ud++;
	}
	t_submit_expect(ring, n);
}

static void check_cqe(struct io_uring_cqe *cqe)
{
	CHECK_EQ(cqe->res, 0);
	CHECK_MSG(cqe->user_data == expect_ud, "got user_data %llu, expected %llu",
		  (unsigned long long)cqe->user_data,
		  (unsigned long long)expect_ud);
	expect_ud++;
}

int main(void)
{
	struct io_uring_cqe *cqes[32];
	struct io_uring ring;
	unsigned round, n, i, head, cnt, cq_entries;

	t_queue_init(&ring, 8, 0);
	cq_entries = ring.cq.ring_entries;
	CHECK_EQ(cq_entries, 16);

	T_STEP("empty CQ");
	CHECK_EQ(io_uring_peek_batch_cqe(&ring, cqes, 32), 0);

	T_STEP("peek_batch_cqe rounds across wrap-around");
	for (round = 0; round < 50; round++) {
		unsigned k = 1 + round % 8;

		submit_nops(&ring, k);
		CHECK_EQ(io_uring_cq_ready(&ring), k);
		n = io_uring_peek_batch_cqe(&ring, cqes, 32);
		CHECK_EQ(n, k);
		for (i = 0; i < n; i++)
			check_cqe(cqes[i]);
		/* peeking does not consume */
		CHECK_EQ(io_uring_cq_ready(&ring), k);
		io_uring_cq_advance(&ring, n);
		CHECK_EQ(io_uring_cq_ready(&ring), 0);
	}

	T_STEP("peek_batch_cqe with count < ready, CQ filled completely");
	for (round = 0; round < 10; round++) {
		submit_nops(&ring, 8);
		submit_nops(&ring, 8);	/* CQ is now exactly full */
		CHECK_EQ(io_uring_cq_ready(&ring), cq_entries);
		while (io_uring_cq_ready(&ring)) {
			unsigned ready = io_uring_cq_ready(&ring);

			n = io_uring_peek_batch_cqe(&ring, cqes, 3);
			CHECK_EQ(n, ready < 3 ? ready : 3);
			for (i = 0; i < n; i++)
				check_cqe(cqes[i]);
			io_uring_cq_advance(&ring, n);
		}
	}

	T_STEP("io_uring_for_each_cqe across wrap-around");
	for (round = 0; round < 40; round++) {
		unsigned k = 1 + (round * 5) % 8;

		submit_nops(&ring, k);
		cnt = 0;
		io_uring_for_each_cqe(&ring, head, cqes[0]) {
			check_cqe(cqes[0]);
			cnt++;
		}
		CHECK_EQ(cnt, k);
		io_uring_cq_advance(&ring, cnt);
	}

	T_STEP("mixed cqe_seen / advance");
	for (round = 0; round < 20; round++) {
		struct io_uring_cqe *cqe;

		submit_nops(&ring, 5);
		CHECK_OK(io_uring_peek_cqe(&ring, &cqe));
		check_cqe(cqe);
		io_uring_cqe_seen(&ring, cqe);
		n = io_uring_peek_batch_cqe(&ring, cqes, 2);
		CHECK_EQ(n, 2);
		for (i = 0; i < n; i++)
			check_cqe(cqes[i]);
		io_uring_cq_advance(&ring, 2);
		CHECK_OK(io_uring_wait_cqe(&ring, &cqe));
		check_cqe(cqe);
		io_uring_cqe_seen(&ring, cqe);
		cnt = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			check_cqe(cqe);
			cnt++;
		}
		CHECK_EQ(cnt, 1);
		io_uring_cq_advance(&ring, 1);
	}
	CHECK_EQ(io_uring_peek_batch_cqe(&ring, cqes, 32), 0);
	CHECK_EQ(expect_ud, next_ud);
	/* the CQ went around many times */
	CHECK_GE(expect_ud - 1, 20 * cq_entries);
	io_uring_queue_exit(&ring);

	T_STEP("CQE32 ring: peek_batch_cqe across wrap-around");
	{
		int ret = io_uring_queue_init(8, &ring, IORING_SETUP_CQE32);

		if (ret == -EINVAL)
			T_SKIP("kernel without IORING_SETUP_CQE32");
		CHECK_OK(ret);
	}
	for (round = 0; round < 50; round++) {
		unsigned k = 1 + (round * 3) % 8, mask = ring.cq.ring_mask;

		submit_nops(&ring, k);
		head = *ring.cq.khead;
		n = io_uring_peek_batch_cqe(&ring, cqes, 32);
		CHECK_EQ(n, k);
		for (i = 0; i < n; i++) {
			CHECK(cqes[i] == &ring.cq.cqes[((head + i) & mask) << 1]);
			check_cqe(cqes[i]);
		}
		io_uring_cq_advance(&ring, n);
	}
	CHECK_EQ(expect_ud, next_ud);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
