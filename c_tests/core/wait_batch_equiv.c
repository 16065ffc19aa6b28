/* SPDX-License-Identifier: MIT */
/*
 * rsuring_wait_batch_cqe + one io_uring_cq_advance reaps exactly the CQEs
 * (user_data, res, flags, and on CQE32 rings the extra 16 bytes) that
 * liburing's loop reaps (io_uring_wait_cqe_nr, io_uring_for_each_cqe,
 * io_uring_cq_advance), in the same order: two rings set up alike get the
 * same operations, one is reaped each way, the two records must be equal.
 * Runs on a small CQ (8 SQ / 16 CQ entries) with batch sizes that do not
 * divide the ring, so heads wrap at every position; on a CQE32 ring; and
 * with the CQ overflowing (more completions than CQ entries, kept on the
 * kernel's overflow list and flushed by the reaping calls); and with
 * batches of 64 to 128 on a 256-entry CQ (the fill of large batches is a
 * code path of its own), where io_uring_peek_batch_cqe is checked too.
 */
#include "../rsuring_test.h"

#include <rsuring.h>

#define MAX_REC 8192
#define MAX_BATCH 256

struct rec {
	__u64 user_data;
	__s32 res;
	__u32 flags;
	__u64 big[2];
};

struct side {
	struct io_uring ring;
	struct rec recs[MAX_REC];
	unsigned n;
	bool cqe32;
};

static void record(struct side *s, const struct io_uring_cqe *cqe)
{
	struct rec *r;

	CHECK(s->n < MAX_REC);
	r = &s->recs[s->n++];
	r->user_data = cqe->user_data;
	r->res = cqe->res;
	r->flags = cqe->flags;
	r->big[0] = s->cqe32 ? cqe->big_cqe[0] : 0;
	r->big[1] = s->cqe32 ? cqe->big_cqe[1] : 0;
}

/* `n` operations with results that differ: NOPs injecting a result, NOPs,
 * and reads of a bad fd. */
static void queue_ops(struct side *s, unsigned n, __u64 base)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = t_get_sqe(&s->ring);
		__u64 ud = base + i;

		switch (ud % 3) {
		case 0:
			io_uring_prep_nop(sqe);
			sqe->nop_flags = IORING_NOP_INJECT_RESULT;
			sqe->len = (unsigned)(ud & 0xffff);
			break;
		case 1:
			io_uring_prep_nop(sqe);
			break;
		default:
			io_uring_prep_read(sqe, -1, NULL, 0, 0);
			break;
		}
		sqe->user_data = ud;
	}
	CHECK_EQ(io_uring_submit(&s->ring), (int)n);
}

/* liburing's loop: up to `max` CQEs, at least `min`. */
static unsigned reap_liburing(struct side *s, unsigned max, unsigned min)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	CHECK_EQ(io_uring_wait_cqe_nr(&s->ring, &cqe, min), 0);
	io_uring_for_each_cqe(&s->ring, head, cqe) {
		record(s, cqe);
		if (++n == max)
			break;
	}
	io_uring_cq_advance(&s->ring, n);
	return n;
}

static unsigned reap_wait_batch(struct side *s, unsigned max, unsigned min)
{
	struct io_uring_cqe *cqes[MAX_BATCH];
	int i, n;

	n = rsuring_wait_batch_cqe(&s->ring, cqes, max, min, NULL);
	CHECK_MSG(n >= (int)min && n <= (int)max, "rsuring_wait_batch_cqe -> %d", n);
	for (i = 0; i < n; i++)
		record(s, cqes[i]);
	io_uring_cq_advance(&s->ring, (unsigned)n);
	return (unsigned)n;
}

static void compare(const struct side *a, const struct side *b, const char *what)
{
	unsigned i;

	CHECK_MSG(a->n == b->n, "%s: %u CQEs reaped by liburing's loop, %u by wait_batch",
		  what, a->n, b->n);
	for (i = 0; i < a->n; i++) {
		const struct rec *x = &a->recs[i], *y = &b->recs[i];

		CHECK_MSG(x->user_data == y->user_data && x->res == y->res &&
			  x->flags == y->flags && x->big[0] == y->big[0] && x->big[1] == y->big[1],
			  "%s: CQE %u differs: user_data %llu/%llu res %d/%d flags 0x%x/0x%x",
			  what, i, (unsigned long long)x->user_data,
			  (unsigned long long)y->user_data, x->res, y->res, x->flags, y->flags);
	}
}

static void setup_side(struct side *s, unsigned sq, unsigned cq, unsigned flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags | IORING_SETUP_CQSIZE;
	p.cq_entries = cq;
	CHECK_EQ(io_uring_queue_init_params(sq, &s->ring, &p), 0);
	s->n = 0;
	s->cqe32 = flags & IORING_SETUP_CQE32;
}

static void setup_pair(struct side *a, struct side *b, unsigned sq, unsigned cq, unsigned flags)
{
	setup_side(a, sq, cq, flags);
	setup_side(b, sq, cq, flags);
}

/* Rounds of 1..8 operations, each reaped in batches of `max` (at least
 * `min` at a time): the heads move by odd steps and wrap many times. */
static void wrap_rounds(unsigned flags, const char *what)
{
	static struct side a, b;
	static const unsigned maxes[] = { 1, 3, 5, 7, 8, 16 };
	unsigned round, m;
	__u64 ud = 1;

	T_STEP("%s: wrap-around", what);
	setup_pair(&a, &b, 8, 16, flags);
	for (m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		unsigned max = maxes[m];

		for (round = 0; round < 40; round++) {
			unsigned n = 1 + (round * 5 + m) % 8, left_a = n, left_b = n;

			queue_ops(&a, n, ud);
			queue_ops(&b, n, ud);
			ud += n;
			while (left_a) {
				unsigned min = 1 + (left_a + round) % (left_a < max ? left_a : max);

				left_a -= reap_liburing(&a, max, min);
			}
			while (left_b) {
				unsigned min = 1 + (left_b + round) % (left_b < max ? left_b : max);

				left_b -= reap_wait_batch(&b, max, min);
			}
		}
	}
	CHECK(a.n > 1000);
	compare(&a, &b, what);
	io_uring_queue_exit(&a.ring);
	io_uring_queue_exit(&b.ring);
}

/* io_uring_peek_batch_cqe of up to `max`, then one advance. */
static unsigned reap_peek_batch(struct side *s, unsigned max)
{
	struct io_uring_cqe *cqes[MAX_BATCH];
	unsigned i, n;

	n = io_uring_peek_batch_cqe(&s->ring, cqes, max);
	for (i = 0; i < n; i++)
		record(s, cqes[i]);
	io_uring_cq_advance(&s->ring, n);
	return n;
}

/* 128 SQ / 256 CQ entries, rounds of 64..128 operations reaped whole (or in
 * two parts): each large batch starts at another ring position, and most
 * wrap inside the batch; odd and even counts. */
static void large_rounds(unsigned flags, const char *what)
{
	static struct side a, b, c;
	struct side *s[3] = { &a, &b, &c };
	unsigned round, i;
	__u64 ud = 1;

	T_STEP("%s: large batches", what);
	for (i = 0; i < 3; i++)
		setup_side(s[i], 128, 256, flags);
	for (round = 0; round < 50; round++) {
		unsigned n = 64 + (round * 37) % 65, max = round % 5 ? n : 64 + round % 7;
		unsigned left;

		for (i = 0; i < 3; i++)
			queue_ops(s[i], n, ud);
		ud += n;
		for (left = n; left;)
			left -= reap_liburing(&a, max, left < max ? left : max);
		for (left = n; left;)
			left -= reap_wait_batch(&b, max, left < max ? left : max);
		for (left = n; left;) {
			unsigned got = reap_peek_batch(&c, max);

			CHECK_MSG(got == (left < max ? left : max),
				  "io_uring_peek_batch_cqe: %u of %u ready", got, left);
			left -= got;
		}
	}
	CHECK(a.n > 4000);
	compare(&a, &b, what);
	compare(&a, &c, what);
	for (i = 0; i < 3; i++)
		io_uring_queue_exit(&s[i]->ring);
}

/* 4 SQ / 8 CQ entries, 40 operations before any reaping: 32 of them wait
 * on the kernel's overflow list, which the reaping calls must flush. */
static void overflow_rounds(unsigned flags, const char *what)
{
	static struct side a, b, c;
	unsigned i, left_a, left_b, left_c, round;
	__u64 ud = 1;

	T_STEP("%s: overflow", what);
	setup_pair(&a, &b, 4, 8, flags);
	setup_side(&c, 4, 8, flags);
	if (!(a.ring.features & IORING_FEAT_NODROP))
		T_SKIP("no IORING_FEAT_NODROP");
	for (round = 0; round < 5; round++) {
		for (i = 0; i < 10; i++) {
			queue_ops(&a, 4, ud);
			queue_ops(&b, 4, ud);
			queue_ops(&c, 4, ud);
			ud += 4;
		}
		CHECK(io_uring_cq_has_overflow(&a.ring));
		CHECK(io_uring_cq_has_overflow(&b.ring));
		for (left_a = 40; left_a;)
			left_a -= reap_liburing(&a, 3 + round, 1);
		for (left_b = 40; left_b;)
			left_b -= reap_wait_batch(&b, 3 + round, 1);
		/* io_uring_peek_batch_cqe flushes the overflow list itself when
		 * the CQ ring is empty: it finds CQEs until all 40 are reaped. */
		for (left_c = 40; left_c;) {
			unsigned got = reap_peek_batch(&c, 3 + round);

			CHECK_MSG(got > 0, "io_uring_peek_batch_cqe: none with %u left", left_c);
			left_c -= got;
		}
		CHECK(!io_uring_cq_has_overflow(&a.ring));
		CHECK(!io_uring_cq_has_overflow(&b.ring));
	}
	CHECK_EQ(*a.ring.cq.koverflow, 0);
	CHECK_EQ(*b.ring.cq.koverflow, 0);
	compare(&a, &b, what);
	compare(&a, &c, what);
	io_uring_queue_exit(&a.ring);
	io_uring_queue_exit(&b.ring);
	io_uring_queue_exit(&c.ring);
}

int main(void)
{
	struct io_uring probe;
	int ret;

	wrap_rounds(0, "plain ring");
	overflow_rounds(0, "plain ring");
	large_rounds(0, "plain ring");
	ret = io_uring_queue_init(4, &probe, IORING_SETUP_CQE32);
	if (ret == -EINVAL)
		T_SKIP("without IORING_SETUP_CQE32");
	CHECK_OK(ret);
	io_uring_queue_exit(&probe);
	wrap_rounds(IORING_SETUP_CQE32, "CQE32 ring");
	overflow_rounds(IORING_SETUP_CQE32, "CQE32 ring");
	large_rounds(IORING_SETUP_CQE32, "CQE32 ring");
	return 0;
}
