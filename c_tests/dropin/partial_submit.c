/* SPDX-License-Identifier: MIT */
/*
 * Issue 10, deviation 1: a batch the kernel stops early.
 *
 * When one SQE of a batch fails at submission (here an unknown opcode) the
 * kernel posts its CQE, stops the batch and returns the count it consumed
 * without waiting. liburing's wait loop subtracts that count from what is
 * left to submit and enters again for the rest, so the remaining SQEs are
 * submitted and the wait is honoured.
 *
 * The expected return values are liburing's (2.3 and 2.15 share the loop):
 * the first io_uring_enter's count is what the call returns.
 */
#define T_CASE_PROGRAM 1
#define T_WATCHDOG_SECS 10
#include "../rsuring_test.h"

/* A new 8-entry ring with 4 SQEs queued, user_data 1..4: NOPs but for
 * @bad, which the kernel rejects. */
static void four_sqes(struct io_uring *ring, unsigned bad)
{
	unsigned i;

	t_queue_init(ring, 8, 0);
	for (i = 1; i <= 4; i++) {
		if (i == bad)
			t_queue_bad(ring, i);
		else
			t_queue_nop(ring, i);
	}
}

/*
 * four_sqes, then (step @step) io_uring_submit_and_wait_timeout for
 * @wait_nr CQEs, no timeout: it must return @bad (the first enter's count,
 * up to and including the bad SQE) and SQE 1's CQE, which is returned
 * here (not marked seen).
 */
static struct io_uring_cqe *four_sqes_submit_and_wait(struct io_uring *ring,
						       unsigned bad,
						       unsigned wait_nr,
						       const char *step)
{
	struct io_uring_cqe *cqe = NULL;
	int ret;

	four_sqes(ring, bad);
	T_STEP("%s", step);
	ret = io_uring_submit_and_wait_timeout(ring, &cqe, wait_nr, NULL, NULL);
	CHECK_EQ(ret, bad);
	CHECK(cqe != NULL);
	CHECK_EQ(cqe->user_data, 1);
	return cqe;
}

/* io_uring_submit_and_wait_timeout(ring, &cqe, 3, NULL, NULL), first of 4
 * bad: returns at once (1, the first enter's count) with all 4 posted. */
static void first_of_four_bad_wait_three(void)
{
	struct io_uring_cqe *cqes[8];
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	unsigned i, n;

	cqe = four_sqes_submit_and_wait(&ring, 1, 3,
		"submit_and_wait_timeout(3, no timeout), first SQE bad");
	CHECK_EQ(cqe->res, -EINVAL);
	CHECK_EQ(io_uring_sq_ready(&ring), 0);
	CHECK_EQ(io_uring_cq_ready(&ring), 4);

	n = io_uring_peek_batch_cqe(&ring, cqes, 8);
	CHECK_EQ(n, 4);
	for (i = 0; i < n; i++) {
		CHECK_EQ(cqes[i]->user_data, i + 1);
		CHECK_EQ(cqes[i]->res, i == 0 ? -EINVAL : 0);
	}
	io_uring_cq_advance(&ring, n);
	io_uring_queue_exit(&ring);
}

/* Second of 4 bad, wait_nr 1: returns 2 (the first enter's count), and
 * SQEs 3 and 4 were submitted too, so waiting for them finds them. */
static void second_of_four_bad_wait_one(void)
{
	struct io_uring ring;
	unsigned i;

	four_sqes_submit_and_wait(&ring, 2, 1,
		"submit_and_wait_timeout(1, no timeout), second SQE bad");
	CHECK_EQ(io_uring_sq_ready(&ring), 0);

	/* A hang here (SQEs 3 and 4 never submitted) ends in the watchdog. */
	T_STEP("io_uring_wait_cqe for each of the 4 CQEs");
	for (i = 1; i <= 4; i++) {
		struct t_cqe c = t_reap(&ring);

		CHECK_EQ(c.user_data, i);
		CHECK_EQ(c.res, i == 2 ? -EINVAL : 0);
	}
	t_cq_empty(&ring, "after the 4 CQEs");
	io_uring_queue_exit(&ring);
}

/* A submit count far beyond what is queued, with one SQE published but
 * not submitted (left behind by a batch the kernel stopped at a bad SQE):
 * the kernel takes it and returns without waiting; the loop then finds its
 * CQE and returns 1 with it. */
static void absurd_submit_count_one_queued(void)
{
	struct io_uring_cqe *cqe = NULL;
	struct io_uring ring;
	struct t_cqe c;
	int ret;

	t_queue_init(&ring, 8, 0);
	t_queue_bad(&ring, 7);
	t_queue_nop(&ring, 8);
	T_STEP("io_uring_submit, first of 2 bad");
	CHECK_EQ(io_uring_submit(&ring), 1);
	CHECK_EQ(io_uring_sq_ready(&ring), 1);
	c = t_reap_within(&ring, 5000, "the bad SQE's CQE");
	CHECK_EQ(c.user_data, 7);
	CHECK_EQ(c.res, -EINVAL);

	T_STEP("__io_uring_get_cqe(submit 2^31-1, wait_nr 1), 1 SQE left");
	ret = __io_uring_get_cqe(&ring, &cqe, 0x7fffffffu, 1, NULL);
	CHECK_EQ(ret, 1);
	CHECK(cqe != NULL);
	CHECK_EQ(cqe->user_data, 8);
	CHECK_EQ(cqe->res, 0);
	io_uring_cqe_seen(&ring, cqe);
	CHECK_EQ(io_uring_sq_ready(&ring), 0);
	io_uring_queue_exit(&ring);
}

/* Nothing queued, nothing to wait for, a submit count that can never be
 * met: the loop must give up (-EAGAIN, as the README's bad-input table
 * says) instead of entering the kernel forever. liburing 2.3 and 2.15
 * spin here (the table's liburing column says "hang"), so this case only
 * runs on rsuring; it guards the rule that keeps liburing's behaviour for
 * real batches from turning into a spin on an impossible count. */
static void absurd_submit_count_nothing_queued(void)
{
	struct io_uring_cqe *cqe = NULL;
	struct io_uring ring;
	int ret;

	if (!t_on_rsuring()) {
		fprintf(stderr, "note: absurd_submit_count_nothing_queued is "
				"not run on liburing, which spins here\n");
		return;
	}
	t_queue_init(&ring, 8, 0);
	T_STEP("__io_uring_get_cqe(submit 2^31-1, wait_nr 0), nothing queued");
	ret = __io_uring_get_cqe(&ring, &cqe, 0x7fffffffu, 0, NULL);
	CHECK_EQ(ret, -EAGAIN);
	CHECK(cqe == NULL);
	io_uring_queue_exit(&ring);
}

static const struct t_case cases[] = {
	{ "first_of_four_bad_wait_three", first_of_four_bad_wait_three },
	{ "second_of_four_bad_wait_one", second_of_four_bad_wait_one },
	{ "absurd_submit_count_one_queued", absurd_submit_count_one_queued },
	{ "absurd_submit_count_nothing_queued",
	  absurd_submit_count_nothing_queued },
};

T_CASES_MAIN(cases)
