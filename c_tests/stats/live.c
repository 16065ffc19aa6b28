/* SPDX-License-Identifier: MIT */
/*
 * A running program for `rsuring-stat` to look at (driven by
 * tests/stats.rs). Sets up, in this order: two SQPOLL|SQ_AFF rings on
 * CPU 0, one on CPU 1 (shared per-CPU pollers under
 * RSURING_SQPOLL_PERCPU=1), and one plain ring; ring i runs 10*(i+1)
 * NOPs. Then prints "ready pid=P fds=a,b,c,d" on stdout and waits for
 * stdin to close, and exits without tearing the rings down.
 *
 * Exit 77 when the machine has fewer than 2 CPUs or no SQPOLL.
 */
#define T_WATCHDOG_SECS 120
#include <liburing.h>
#include "../rsuring_test.h"

#define RINGS 4

static struct io_uring rings[RINGS];

static void nops(struct io_uring *ring, int n, int sqpoll)
{
	for (int i = 0; i < n; i++) {
		int ret;

		io_uring_prep_nop(t_get_sqe(ring));
		ret = io_uring_submit_and_wait(ring, 1);
		/* On an SQ poll ring the count is of the SQEs whose taking the
		 * kernel had not published in the SQ head when the call looked
		 * (as with liburing): 0 when a spinning thread took this one
		 * first, 2 when the head still counts the previous one (the
		 * kernel posts a batch's CQEs before it moves the head). */
		if (sqpoll)
			CHECK_MSG(ret >= 0 && ret <= 2,
				  "io_uring_submit_and_wait returned %d", ret);
		else
			CHECK_EQ(ret, 1);
		t_reap(ring);
	}
}

int main(void)
{
	static const int cpu[RINGS] = { 0, 0, 1, -1 };
	char buf[64];
	int i, ret;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		T_SKIP("needs 2 online CPUs");
	for (i = 0; i < RINGS; i++) {
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		if (cpu[i] >= 0) {
			p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
			p.sq_thread_cpu = cpu[i];
			p.sq_thread_idle = 50;
		}
		ret = io_uring_queue_init_params(32, &rings[i], &p);
		if (ret == -EPERM || ret == -EINVAL)
			T_SKIP("SQPOLL ring: %s", strerror(-ret));
		CHECK_OK(ret);
		nops(&rings[i], 10 * (i + 1), cpu[i] >= 0);
	}
	printf("ready pid=%d fds=%d,%d,%d,%d\n", getpid(), rings[0].ring_fd,
	       rings[1].ring_fd, rings[2].ring_fd, rings[3].ring_fd);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
