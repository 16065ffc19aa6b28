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
#include "../common/rsuring_test.h"

#define RINGS 4

static struct io_uring rings[RINGS];

static void nops(struct io_uring *ring, int n)
{
	for (int i = 0; i < n; i++) {
		io_uring_prep_nop(t_get_sqe(ring));
		/* SQ poll rings return the SQEs the thread has not taken yet,
		 * which may include the previous one (as with liburing). */
		CHECK_GE(io_uring_submit_and_wait(ring, 1), 1);
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
		nops(&rings[i], 10 * (i + 1));
	}
	printf("ready pid=%d fds=%d,%d,%d,%d\n", getpid(), rings[0].ring_fd,
	       rings[1].ring_fd, rings[2].ring_fd, rings[3].ring_fd);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
