/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_SQ_REWIND: the kernel takes the SQEs from the start of the
 * SQ array on every submit and ignores the SQ head and tail, so each
 * submit hands the kernel SQEs 0..n-1 and starts the next batch at slot 0
 * again. A ring set up so takes the library's full submit path (not the
 * short path of plain rings, which leaves SQ_REWIND out): full batches
 * and partial ones, many more SQEs than the ring holds, with
 * io_uring_submit and io_uring_submit_and_wait, each batch's CQEs checked.
 */
#include "test_helpers.h"

#ifndef IORING_SETUP_SQ_REWIND
#define IORING_SETUP_SQ_REWIND (1U << 20)
#endif

static void batch(struct io_uring *ring, unsigned n, uint64_t base, bool and_wait)
{
	unsigned i, seen = 0;
	bool got[8] = { false };

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK_MSG(sqe != NULL, "get_sqe NULL after %u of %u", i, n);
		CHECK_MSG(sqe == &ring->sq.sqes[i], "SQE %u is not slot %u", i, i);
		io_uring_prep_nop(sqe);
		sqe->user_data = base + i;
	}
	if (and_wait)
		CHECK_EQ(io_uring_submit_and_wait(ring, n), (int)n);
	else
		t_submit_expect(ring, n);
	CHECK_EQ(ring->sq.sqe_tail, 0);
	while (seen < n) {
		struct t_cqe c = t_reap(ring);

		CHECK_MSG(c.user_data >= base && c.user_data < base + n,
			  "bad user_data %llu", (unsigned long long)c.user_data);
		CHECK_MSG(!got[c.user_data - base], "user_data %llu twice",
			  (unsigned long long)c.user_data);
		got[c.user_data - base] = true;
		CHECK_EQ(c.res, 0);
		seen++;
	}
	t_expect_no_cqe(ring);
}

int main(void)
{
	struct io_uring ring;
	unsigned round;
	int ret;

	T_STEP("set up an SQ_REWIND ring of 8");
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQ_REWIND);
	if (ret == -EINVAL)
		T_SKIP("the kernel has no IORING_SETUP_SQ_REWIND (6.18+)");
	CHECK_OK(ret);
	CHECK(ring.flags & IORING_SETUP_SQ_REWIND);
	for (round = 0; round < 12; round++) {
		T_STEP("round %u", round);
		batch(&ring, round % 3 ? 8 : 3 + round % 5, round * 10, round & 1);
	}
	io_uring_queue_exit(&ring);
	return 0;
}
