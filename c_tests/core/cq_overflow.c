/* SPDX-License-Identifier: MIT */
/*
 * CQ overflow with IORING_FEAT_NODROP: a ring of 4 SQ / 8 CQ entries gets
 * 240 NOPs over 60 submits without any reaping. The kernel keeps the excess
 * on its overflow list (IORING_SQ_CQ_OVERFLOW, io_uring_cq_has_overflow) and
 * nothing is dropped (*cq.koverflow stays 0). Reaping afterwards (wait_cqe /
 * peek_cqe, which must flush the overflow list into the CQ ring) returns
 * every user_data exactly once. A second round reaps with peek_batch_cqe.
 */
#include "../rsuring_test.h"

#define SUBMITS 60
#define PER 4
#define TOTAL (SUBMITS * PER)

static void overflow_round(struct io_uring *ring, int use_batch)
{
	static unsigned char seen[TOTAL];
	struct io_uring_cqe *cqe;
	unsigned got = 0, i, j;
	int ret;

	memset(seen, 0, sizeof(seen));
	T_STEP("submit many NOPs without reaping");
	for (i = 0; i < SUBMITS; i++) {
		for (j = 0; j < PER; j++) {
			t_queue(ring, i * PER + j, io_uring_prep_nop);
		}
		ret = io_uring_submit(ring);
		CHECK_MSG(ret == PER, "submit #%u returned %d (%s)", i, ret,
			  ret < 0 ? strerror(-ret) : "short");
	}
	CHECK_EQ(io_uring_cq_ready(ring), ring->cq.ring_entries);
	CHECK_MSG(io_uring_cq_has_overflow(ring),
		  "IORING_SQ_CQ_OVERFLOW not set with %u CQEs outstanding", TOTAL);
	CHECK_EQ(*ring->cq.koverflow, 0);

	T_STEP("reap everything");
	if (!use_batch) {
		for (;;) {
			ret = io_uring_peek_cqe(ring, &cqe);
			if (ret == -EAGAIN)
				break;
			CHECK_OK(ret);
			CHECK(cqe != NULL);
			CHECK_EQ(cqe->res, 0);
			CHECK_MSG(cqe->user_data < TOTAL, "bad user_data %llu",
				  (unsigned long long)cqe->user_data);
			CHECK_MSG(!seen[cqe->user_data], "user_data %llu twice",
				  (unsigned long long)cqe->user_data);
			seen[cqe->user_data] = 1;
			got++;
			io_uring_cqe_seen(ring, cqe);
			CHECK_MSG(got <= TOTAL, "more CQEs than submitted");
		}
	} else {
		struct io_uring_cqe *cqes[16];
		unsigned n;

		for (;;) {
			n = io_uring_peek_batch_cqe(ring, cqes, 16);
			if (!n) {
				/* peek_batch flushes the overflow on its own
				 * when the kernel flags it; make sure */
				if (!io_uring_cq_has_overflow(ring))
					break;
				CHECK_OK(io_uring_get_events(ring));
				continue;
			}
			for (i = 0; i < n; i++) {
				uint64_t ud = cqes[i]->user_data;

				CHECK_EQ(cqes[i]->res, 0);
				CHECK_MSG(ud < TOTAL, "bad user_data %llu",
					  (unsigned long long)ud);
				CHECK_MSG(!seen[ud], "user_data %llu twice",
					  (unsigned long long)ud);
				seen[ud] = 1;
				got++;
			}
			io_uring_cq_advance(ring, n);
			CHECK_MSG(got <= TOTAL, "more CQEs than submitted");
		}
	}
	for (i = 0; i < TOTAL; i++)
		CHECK_MSG(seen[i], "user_data %u lost (got %u of %u)", i, got, TOTAL);
	CHECK_EQ(got, TOTAL);
	CHECK(!io_uring_cq_has_overflow(ring));
	CHECK_EQ(*ring->cq.koverflow, 0);
	CHECK_EQ(io_uring_cq_ready(ring), 0);
}

static void overflow_then_wait(struct io_uring *ring)
{
	unsigned i, j, got = 0;

	T_STEP("overflow then reap with wait_cqe only");
	for (i = 0; i < 10; i++) {
		for (j = 0; j < PER; j++) {
			t_queue(ring, 5000 + got++, io_uring_prep_nop);
		}
		t_submit_expect(ring, PER);
	}
	CHECK(io_uring_cq_has_overflow(ring));
	for (i = 0; i < got; i++) {
		struct t_cqe c = t_reap(ring);

		CHECK_EQ(c.user_data, 5000 + i); /* nops complete in order */
	}
	t_expect_no_cqe(ring);
	CHECK(!io_uring_cq_has_overflow(ring));
}

int main(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret;

	memset(&p, 0, sizeof(p));
	ret = io_uring_queue_init_params(4, &ring, &p);
	CHECK_OK(ret);
	if (!(p.features & IORING_FEAT_NODROP))
		T_SKIP("no IORING_FEAT_NODROP");
	CHECK_EQ(ring.sq.ring_entries, 4);
	CHECK_EQ(ring.cq.ring_entries, 8);
	CHECK_EQ(ring.features, p.features);
	overflow_round(&ring, 0);
	overflow_round(&ring, 1);
	overflow_then_wait(&ring);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
