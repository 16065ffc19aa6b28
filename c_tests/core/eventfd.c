/* SPDX-License-Identifier: MIT */
/*
 * eventfd notification: io_uring_register_eventfd gets signalled on
 * completion (inline NOP and a pipe read completing later, waited for with
 * poll(2) on the eventfd); io_uring_cq_eventfd_toggle / _enabled turn it off
 * and on; a second register -> -EBUSY; after io_uring_unregister_eventfd no
 * signal, and unregistering again -> -ENXIO; io_uring_register_eventfd_async
 * only signals for completions from async (io-wq) context: IOSQE_ASYNC NOP
 * signals, an inline NOP does not.
 */
#include "../rsuring_test.h"
#include <poll.h>
#include <sys/eventfd.h>

/* returns the eventfd counter, 0 if not signalled */
static uint64_t ev_read(int efd)
{
	uint64_t v = 0;
	ssize_t r = read(efd, &v, sizeof(v));

	if (r < 0 && errno == EAGAIN)
		return 0;
	CHECK_EQ(r, 8);
	return v;
}

static void nop_and_reap(struct io_uring *ring, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = t_get_sqe(ring);

	io_uring_prep_nop(sqe);
	sqe->flags |= (unsigned char)sqe_flags;
	sqe->user_data = 42;
	t_submit_expect(ring, 1);
	t_reap_expect(ring, 42, 0);
}

int main(void)
{
	struct io_uring ring;
	struct pollfd pfd;
	int efd, p[2], ret;
	char buf[8];

	t_queue_init(&ring, 8, 0);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK_SYS(efd);

	T_STEP("register_eventfd");
	CHECK_EQ(io_uring_register_eventfd(&ring, efd), 0);
	CHECK_EQ(ev_read(efd), 0);
	nop_and_reap(&ring, 0);
	CHECK_GE(ev_read(efd), 1);
	CHECK_EQ(ev_read(efd), 0);

	T_STEP("double register -> -EBUSY");
	CHECK_EQ(io_uring_register_eventfd(&ring, efd), -EBUSY);

	T_STEP("eventfd signalled by a later pipe read completion");
	t_pipe(p);
	t_submit1(&ring, 7, io_uring_prep_read, p[0], buf, sizeof(buf), 0);
	t_msleep(5);
	CHECK_EQ(ev_read(efd), 0);
	CHECK_EQ(write(p[1], "hi", 2), 2);
	pfd.fd = efd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	ret = poll(&pfd, 1, 2000);
	CHECK_EQ(ret, 1);
	CHECK(pfd.revents & POLLIN);
	CHECK_GE(ev_read(efd), 1);
	{
		struct t_cqe c = t_reap(&ring);

		CHECK_EQ(c.user_data, 7);
		CHECK_EQ(c.res, 2);
	}

	T_STEP("cq_eventfd_toggle off/on");
	CHECK(io_uring_cq_eventfd_enabled(&ring));
	ret = io_uring_cq_eventfd_toggle(&ring, false);
	if (ret == -EOPNOTSUPP)
		goto skip_toggle;
	CHECK_EQ(ret, 0);
	CHECK(!io_uring_cq_eventfd_enabled(&ring));
	nop_and_reap(&ring, 0);
	CHECK_EQ(ev_read(efd), 0);
	CHECK_EQ(io_uring_cq_eventfd_toggle(&ring, true), 0);
	CHECK(io_uring_cq_eventfd_enabled(&ring));
	nop_and_reap(&ring, 0);
	CHECK_GE(ev_read(efd), 1);
skip_toggle:

	T_STEP("unregister_eventfd");
	CHECK_EQ(io_uring_unregister_eventfd(&ring), 0);
	nop_and_reap(&ring, 0);
	CHECK_EQ(ev_read(efd), 0);
	CHECK_EQ(io_uring_unregister_eventfd(&ring), -ENXIO);

	T_STEP("register_eventfd_async");
	CHECK_EQ(io_uring_register_eventfd_async(&ring, efd), 0);
	nop_and_reap(&ring, 0);
	CHECK_MSG(ev_read(efd) == 0, "async eventfd signalled for inline completion");
	nop_and_reap(&ring, IOSQE_ASYNC);
	/* The io-wq worker publishes the CQE before it signals the eventfd:
	 * the reaper can get there first, so give the signal a moment. */
	pfd.fd = efd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	CHECK_EQ(poll(&pfd, 1, 2000), 1);
	CHECK_MSG(ev_read(efd) >= 1, "async eventfd not signalled for io-wq completion");
	CHECK_EQ(io_uring_unregister_eventfd(&ring), 0);

	close(p[0]);
	close(p[1]);
	close(efd);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
