/* SPDX-License-Identifier: MIT */
/*
 * Linked SQEs: an IOSQE_IO_LINK write->read->nop chain completes in order
 * with the read seeing the write's data; a failing head cancels the rest of
 * the chain with -ECANCELED; IOSQE_IO_HARDLINK keeps going after a failure.
 * Link timeouts: a poll that never fires linked to a link_timeout gets
 * -ECANCELED and the timeout -ETIME; a request that finishes first cancels
 * the link timeout (-ECANCELED on the timeout, or -ENOENT/-EALREADY raced).
 */
#include "../rsuring_test.h"
#include <poll.h>

static void test_chain_order(struct io_uring *ring)
{
	static unsigned char wbuf[4096], rbuf[4096];
	struct io_uring_sqe *sqe;
	int fd = t_tmpfile(0, 0);

	T_STEP("write->read->nop chain");
	t_fill(wbuf, sizeof(wbuf), 0, 77);
	sqe = t_get_sqe(ring);
	io_uring_prep_write(sqe, fd, wbuf, sizeof(wbuf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, fd, rbuf, sizeof(rbuf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 2;
	sqe = t_queue(ring, 3, io_uring_prep_nop);
	t_submit_expect(ring, 3);

	t_reap_expect(ring, 1, 4096);
	t_reap_expect(ring, 2, 4096);
	t_reap_expect(ring, 3, 0);
	CHECK_EQ(t_verify(rbuf, sizeof(rbuf), 0, 77), -1);
	close(fd);
}

static void test_chain_fail(struct io_uring *ring)
{
	char buf[64];
	struct io_uring_sqe *sqe;
	struct t_cqe c;
	int i;

	T_STEP("failed head cancels the rest of the chain");
	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, 9999, buf, sizeof(buf), 0);	/* -EBADF */
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 10;
	for (i = 0; i < 3; i++) {
		sqe = t_get_sqe(ring);
		io_uring_prep_nop(sqe);
		if (i < 2)
			sqe->flags |= IOSQE_IO_LINK;
		sqe->user_data = 11 + (uint64_t)i;
	}
	/* an independent nop after the chain must still succeed */
	sqe = t_queue(ring, 20, io_uring_prep_nop);
	t_submit_expect(ring, 5);

	{
		int seen_head = 0, cancelled = 0, indep = 0;

		for (i = 0; i < 5; i++) {
			c = t_reap(ring);
			if (c.user_data == 10) {
				CHECK_EQ(c.res, -EBADF);
				seen_head++;
			} else if (c.user_data >= 11 && c.user_data <= 13) {
				CHECK_MSG(c.res == -ECANCELED, "linked nop %llu res=%d",
					  (unsigned long long)c.user_data, c.res);
				CHECK_MSG(seen_head, "link cancelled before head completed");
				cancelled++;
			} else if (c.user_data == 20) {
				CHECK_EQ(c.res, 0);
				indep++;
			} else {
				T_FAIL("unexpected user_data %llu", (unsigned long long)c.user_data);
			}
		}
		CHECK_EQ(seen_head, 1);
		CHECK_EQ(cancelled, 3);
		CHECK_EQ(indep, 1);
	}

	T_STEP("hardlink continues after failure");
	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, 9999, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_IO_HARDLINK;
	sqe->user_data = 30;
	sqe = t_queue(ring, 31, io_uring_prep_nop);
	t_submit_expect(ring, 2);
	c = t_reap_expect(ring, 30, -EBADF);
	c = t_reap_expect(ring, 31, 0);
}

/*
 * Links sqe (as `ud`) to a link timeout of ts, queued as ud + 1.
 */
static void link_timeout_after(struct io_uring *ring, struct io_uring_sqe *sqe,
			       uint64_t ud, struct __kernel_timespec *ts)
{
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = ud;
	t_queue(ring, ud + 1, io_uring_prep_link_timeout, ts, 0);
}

static void test_link_timeout_fires(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 50 * 1000000LL };
	struct io_uring_sqe *sqe;
	int p[2];
	unsigned long long t0, el;

	T_STEP("link timeout fires on a poll that never triggers");
	t_pipe(p);
	sqe = t_get_sqe(ring);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	link_timeout_after(ring, sqe, 40, &ts);
	t0 = t_now_ms();
	t_submit_expect(ring, 2);
	t_reap_each(ring, NULL, { 40, -ECANCELED }, { 41, -ETIME });
	el = t_now_ms() - t0;
	CHECK_MSG(el >= 40 && el < 2000, "link timeout took %llu ms", el);

	T_STEP("link timeout fires on a pipe read");
	{
		char buf[16];

		sqe = t_get_sqe(ring);
		io_uring_prep_read(sqe, p[0], buf, sizeof(buf), 0);
		link_timeout_after(ring, sqe, 42, &ts);
		t_submit_expect(ring, 2);
		t_reap_each(ring, NULL, { 42, -ECANCELED }, { 43, -ETIME });
	}
	close(p[0]);
	close(p[1]);
}

static void test_link_timeout_not_fired(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 5, .tv_nsec = 0 };
	struct io_uring_sqe *sqe;
	struct t_cqe got[2];
	int p[2];
	unsigned long long t0;
	char buf[16];

	T_STEP("request completes before its link timeout (nop)");
	sqe = t_get_sqe(ring);
	io_uring_prep_nop(sqe);
	link_timeout_after(ring, sqe, 50, &ts);
	t0 = t_now_ms();
	t_submit_expect(ring, 2);
	t_reap_each(ring, got, { 50, 0 }, { 51, T_ANY_RES });
	CHECK_MSG(got[1].res == -ECANCELED || got[1].res == -ENOENT ||
		  got[1].res == -EALREADY, "link timeout res=%d", got[1].res);
	CHECK_MSG(t_now_ms() - t0 < 2000, "had to wait for the timeout");

	T_STEP("pipe read satisfied before its link timeout");
	t_pipe(p);
	sqe = t_get_sqe(ring);
	io_uring_prep_read(sqe, p[0], buf, sizeof(buf), 0);
	link_timeout_after(ring, sqe, 52, &ts);
	t_submit_expect(ring, 2);
	t_msleep(10);
	t_expect_no_cqe(ring);
	CHECK_EQ(write(p[1], "hello", 5), 5);
	t_reap_each(ring, NULL, { 52, 5 }, { 53, -ECANCELED });
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_MSG(t_now_ms() - t0 < 2000, "had to wait for the timeout");
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	struct io_uring ring;

	t_queue_init(&ring, 16, 0);
	test_chain_order(&ring);
	test_chain_fail(&ring);
	test_link_timeout_fires(&ring);
	test_link_timeout_not_fired(&ring);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
