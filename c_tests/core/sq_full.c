/* SPDX-License-Identifier: MIT */
/*
 * SQ full: io_uring_get_sqe hands out exactly sq.ring_entries SQEs and then
 * returns NULL (sq_space_left 0, sq_ready == entries); after submit it works
 * again. Repeated over several rounds so the SQ indices wrap, with a
 * non-power-of-two requested size (rounded up by the kernel), and with SQEs
 * returned in pieces (partial fill, submit, fill the rest).
 */
#include "../rsuring_test.h"

static void fill_and_drain(struct io_uring *ring, unsigned entries,
			   uint64_t base)
{
	struct io_uring_sqe *sqe;
	unsigned i;

	for (i = 0; i < entries; i++) {
		sqe = io_uring_get_sqe(ring);
		CHECK_MSG(sqe != NULL, "get_sqe NULL after only %u of %u", i, entries);
		io_uring_prep_nop(sqe);
		sqe->user_data = base + i;
		CHECK_EQ(io_uring_sq_space_left(ring), entries - i - 1);
	}
	CHECK_EQ(io_uring_sq_ready(ring), entries);
	CHECK_EQ(io_uring_sq_space_left(ring), 0);
	sqe = io_uring_get_sqe(ring);
	CHECK_MSG(sqe == NULL, "get_sqe returned an SQE beyond %u entries", entries);
	/* still NULL when asked again */
	CHECK(io_uring_get_sqe(ring) == NULL);
	t_submit_expect(ring, entries);
	CHECK_EQ(io_uring_sq_space_left(ring), entries);
	CHECK_EQ(io_uring_sq_ready(ring), 0);
	for (i = 0; i < entries; i++) {
		struct t_cqe c = t_reap(ring);

		CHECK_MSG(c.user_data >= base && c.user_data < base + entries,
			  "bad user_data %llu", (unsigned long long)c.user_data);
		CHECK_EQ(c.res, 0);
	}
	t_expect_no_cqe(ring);
}

/*
 * Sets up a ring asking for `asked` entries, checks it got `want`, and
 * fills and drains it `rounds` times.
 */
static void init_and_cycle(struct io_uring *ring, unsigned asked,
			   unsigned want, unsigned rounds, unsigned ud_step)
{
	unsigned round;

	t_queue_init(ring, asked, 0);
	CHECK_EQ(ring->sq.ring_entries, want);
	for (round = 0; round < rounds; round++)
		fill_and_drain(ring, want, round * ud_step);
}

int main(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	unsigned entries, i;

	T_STEP("ring of 8");
	init_and_cycle(&ring, 8, 8, 5, 100);
	entries = ring.sq.ring_entries;

	T_STEP("partial fill, submit, fill to full again");
	for (i = 0; i < 5; i++) {
		sqe = t_queue(&ring, 1000 + i, io_uring_prep_nop);
	}
	t_submit_expect(&ring, 5);
	/* the kernel consumed them: a full ring's worth is available again */
	CHECK_EQ(io_uring_sq_space_left(&ring), entries);
	for (i = 0; i < entries; i++) {
		sqe = io_uring_get_sqe(&ring);
		CHECK_MSG(sqe != NULL, "get_sqe NULL at %u after partial submit", i);
		io_uring_prep_nop(sqe);
		sqe->user_data = 2000 + i;
	}
	CHECK(io_uring_get_sqe(&ring) == NULL);
	t_submit_expect(&ring, entries);
	for (i = 0; i < 5 + entries; i++) {
		struct t_cqe c = t_reap(&ring);

		CHECK_EQ(c.res, 0);
	}
	t_expect_no_cqe(&ring);
	io_uring_queue_exit(&ring);

	T_STEP("non power of two entries (5 -> 8)");
	init_and_cycle(&ring, 5, 8, 3, 100);
	io_uring_queue_exit(&ring);

	T_STEP("ring of 1");
	init_and_cycle(&ring, 1, 1, 4, 1);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
