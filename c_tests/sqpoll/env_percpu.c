/* SPDX-License-Identifier: MIT */
/*
 * An unmodified liburing program (built against Debian's <liburing.h>,
 * linked with Debian's -luring; it knows nothing of rsuring): 4 SQPOLL rings
 * pinned with SQ_AFF to cpu 1, each reading a file (data checked) and doing
 * NOPs, all concurrently too. Prints facts for the driver to check:
 *   impl=<file that provides io_uring_queue_init>
 *   rings=4 sqpoll_flag=<rings whose ring.flags has SQPOLL>
 *   sqp_threads=<iou-sqp threads while the 4 rings are live>
 *   sqp_cpus=<sorted CPU binding of each of them, -1 = unbound>
 * Under LD_PRELOAD=librsuring.so RSURING_SQPOLL_PERCPU=1 the rings share one
 * SQ thread (1); without the variable, each has its own (4).
 * After closing the rings no SQ thread and no fd may be left.
 */
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define RINGS 4

int main(void)
{
	struct io_uring rings[RINGS];
	int data_fd = t_data_file();
	int fds0 = count_fds();
	int i, ret, sqp, flagged = 0;

	print_impl();

	T_STEP("setup");
	for (i = 0; i < RINGS; i++) {
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = 1;
		ret = io_uring_queue_init_params(8, &rings[i], &p);
		skip_if_no_io_uring(ret);
		CHECK_MSG(ret == 0, "ring %d: setup = %d (%s)", i, ret, strerror(-ret));
		if (rings[i].flags & IORING_SETUP_SQPOLL)
			flagged++;
	}
	T_STEP("I/O");
	for (i = 0; i < RINGS; i++)
		ring_io(&rings[i], data_fd, (unsigned)i);
	rings_io_concurrent(rings, RINGS, data_fd);
	sqp = count_sqp_threads();
	printf("rings=%d sqpoll_flag=%d\n", RINGS, flagged);
	printf("sqp_threads=%d\n", sqp);
	print_sqp_cpus("sqp_cpus");
	for (i = 0; i < RINGS; i++)
		ring_io(&rings[i], data_fd, (unsigned)(i + 4));

	teardown_ok(rings, RINGS, fds0, data_fd, "env_percpu");
	return 0;
}
