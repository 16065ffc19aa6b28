/* SPDX-License-Identifier: MIT */
/*
 * NOP: a single nop, a batch of many, user_data round-trip through
 * io_uring_sqe_set_data/io_uring_cqe_get_data and set_data64/get_data64,
 * IOSQE_CQE_SKIP_SUCCESS-free basics, and sq/cq ready counters.
 */
#include "../rsuring_test.h"

#define ENTRIES 64

static void test_single(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;

	T_STEP("single nop");
	CHECK_EQ(io_uring_sq_ready(ring), 0);
	t_queue(ring, 0xdeadbeefcafef00dULL, io_uring_prep_nop);
	CHECK_EQ(io_uring_sq_ready(ring), 1);
	CHECK_EQ(io_uring_sq_space_left(ring), ENTRIES - 1);
	t_submit_expect(ring, 1);
	CHECK_EQ(io_uring_sq_ready(ring), 0);
	cqe = t_wait_cqe(ring);
	CHECK_EQ(cqe->res, 0);
	CHECK(cqe->user_data == 0xdeadbeefcafef00dULL);
	CHECK_EQ(io_uring_cq_ready(ring), 1);
	io_uring_cqe_seen(ring, cqe);
	CHECK_EQ(io_uring_cq_ready(ring), 0);
	t_expect_no_cqe(ring);
}

static void test_batch(struct io_uring *ring)
{
	static int markers[ENTRIES];
	unsigned char seen[ENTRIES];
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int i, round;

	for (round = 0; round < 4; round++) {
		T_STEP("batch of nops");
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < ENTRIES; i++) {
			sqe = t_get_sqe(ring);
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data(sqe, &markers[i]);
		}
		CHECK_EQ(io_uring_sq_ready(ring), ENTRIES);
		CHECK_EQ(io_uring_sq_space_left(ring), 0);
		t_submit_expect(ring, ENTRIES);

		T_STEP("reap batch");
		for (i = 0; i < ENTRIES; i++) {
			int *p;
			long idx;

			cqe = t_wait_cqe(ring);
			CHECK_EQ(cqe->res, 0);
			p = io_uring_cqe_get_data(cqe);
			CHECK(p != NULL);
			idx = p - markers;
			CHECK_MSG(idx >= 0 && idx < ENTRIES, "bad user_data %p", (void *)p);
			CHECK_MSG(!seen[idx], "user_data %ld seen twice", idx);
			seen[idx] = 1;
			io_uring_cqe_seen(ring, cqe);
		}
		for (i = 0; i < ENTRIES; i++)
			CHECK_MSG(seen[i], "nop %d never completed", i);
		t_expect_no_cqe(ring);
	}
}

static void test_data64(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned i;
	uint64_t mask = 0;

	T_STEP("set_data64/get_data64");
	for (i = 0; i < 8; i++) {
		sqe = t_get_sqe(ring);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, (1ULL << 60) | i);
	}
	t_submit_expect(ring, 8);
	for (i = 0; i < 8; i++) {
		uint64_t v;

		cqe = t_wait_cqe(ring);
		v = io_uring_cqe_get_data64(cqe);
		CHECK_MSG((v >> 60) == 1 && (v & 0xff) < 8, "bad data64 %llx",
			  (unsigned long long)v);
		mask |= 1ULL << (v & 0xff);
		CHECK_EQ(cqe->res, 0);
		io_uring_cqe_seen(ring, cqe);
	}
	CHECK_EQ(mask, 0xff);
}

static void test_wait_nr(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	unsigned i;

	T_STEP("submit_and_wait + wait_cqe_nr");
	for (i = 0; i < 16; i++) {
		t_queue(ring, 100 + i, io_uring_prep_nop);
	}
	CHECK_EQ(io_uring_submit_and_wait(ring, 16), 16);
	CHECK_EQ(io_uring_cq_ready(ring), 16);
	CHECK_OK(io_uring_wait_cqe_nr(ring, &cqe, 16));
	CHECK(cqe != NULL);
	io_uring_cq_advance(ring, 16);
	CHECK_EQ(io_uring_cq_ready(ring), 0);
}

static void test_empty_submit(struct io_uring *ring)
{
	T_STEP("empty submit");
	CHECK_EQ(io_uring_submit(ring), 0);
}

int main(void)
{
	struct io_uring ring;

	t_queue_init(&ring, ENTRIES, 0);
	CHECK_EQ(ring.sq.ring_entries, ENTRIES);
	CHECK_EQ(ring.cq.ring_entries, 2 * ENTRIES);
	CHECK(ring.ring_fd >= 0);
	test_single(&ring);
	test_batch(&ring);
	test_data64(&ring);
	test_wait_nr(&ring);
	test_empty_submit(&ring);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
