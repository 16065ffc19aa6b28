/* SPDX-License-Identifier: MIT */
/*
 * An unmodified liburing program that never asks for SQPOLL (built against
 * Debian's <liburing.h>, linked with Debian's -luring): 4 plain rings (two
 * via io_uring_queue_init, two via io_uring_queue_init_params) reading a
 * file with data checked and doing NOPs, alone and concurrently; then a
 * ring with IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN that
 * does the same; then rings with COOP_TASKRUN (and TASKRUN_FLAG), which
 * the kernel refuses together with SQPOLL, so they must be left as they
 * are. Prints facts for the driver to check:
 *   impl=<file that provides io_uring_queue_init>
 *   plain_rings=4 sqpoll_flag=<plain rings whose ring.flags has SQPOLL>
 *   sqp_threads=<iou-sqp threads while the plain rings are live>
 *   sqp_cpus=<sorted CPU binding of each of them, -1 = unbound>
 *   defer_sqpoll_flag=<0/1> sqp_threads_with_defer=<count>
 *   coop0_sqpoll_flag=<0/1> coop1_sqpoll_flag=<0/1>
 * Under RSURING_SQPOLL=1 (unprivileged) the plain rings share one poller
 * (1 thread) while ring.flags shows the plain setup they asked for (0
 * flagged); the DEFER_TASKRUN ring stays as it is.
 * Every ring must work in every configuration; nothing may leak.
 */
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define RINGS 4

int main(void)
{
	struct io_uring rings[RINGS], defer;
	struct io_uring_params p;
	int data_fd = t_data_file();
	int fds0 = count_fds();
	int i, ret, flagged = 0;

	print_impl();

	T_STEP("plain rings");
	for (i = 0; i < RINGS; i++) {
		if (i % 2 == 0) {
			ret = io_uring_queue_init(16, &rings[i], 0);
		} else {
			memset(&p, 0, sizeof(p));
			ret = io_uring_queue_init_params(16, &rings[i], &p);
		}
		skip_if_no_io_uring(ret);
		CHECK_MSG(ret == 0, "ring %d: setup = %d (%s)", i, ret, strerror(-ret));
		if (rings[i].flags & IORING_SETUP_SQPOLL)
			flagged++;
	}
	for (i = 0; i < RINGS; i++)
		ring_io(&rings[i], data_fd, (unsigned)i);
	rings_io_concurrent(rings, RINGS, data_fd);
	printf("plain_rings=%d sqpoll_flag=%d\n", RINGS, flagged);
	printf("sqp_threads=%d\n", count_sqp_threads());
	print_sqp_cpus("sqp_cpus");

	T_STEP("SINGLE_ISSUER | DEFER_TASKRUN ring");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(16, &defer, &p);
	if (ret == -EINVAL) {
		printf("defer_taskrun=unsupported\n");
	} else {
		CHECK_MSG(ret == 0, "DEFER_TASKRUN ring: setup = %d (%s)", ret,
			  strerror(-ret));
		printf("defer_sqpoll_flag=%d\n", !!(defer.flags & IORING_SETUP_SQPOLL));
		CHECK_MSG(defer.flags & IORING_SETUP_DEFER_TASKRUN,
			  "DEFER_TASKRUN ring.flags 0x%x lost DEFER_TASKRUN", defer.flags);
		ring_io(&defer, data_fd, 9);
		ring_io(&defer, data_fd, 10);
		printf("sqp_threads_with_defer=%d\n", count_sqp_threads());
		io_uring_queue_exit(&defer);
	}

	/*
	 * COOP_TASKRUN / TASKRUN_FLAG are rejected by the kernel together with
	 * SQPOLL (they are IPI settings), so such rings must be left alone:
	 * their setup has to succeed exactly as without the variable.
	 */
	for (i = 0; i < 2; i++) {
		static const unsigned coop_flags[2] = {
			IORING_SETUP_COOP_TASKRUN,
			IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		};
		struct io_uring coop;

		T_STEP("ring with setup flags 0x%x (COOP_TASKRUN%s)", coop_flags[i],
		     i ? " | TASKRUN_FLAG" : "");
		memset(&p, 0, sizeof(p));
		p.flags = coop_flags[i];
		ret = io_uring_queue_init_params(16, &coop, &p);
		CHECK_MSG(ret == 0, "setup with flags 0x%x = %d (%s): the library broke a ring "
			  "the application could create without it", coop_flags[i], ret,
			  strerror(-ret));
		printf("coop%d_sqpoll_flag=%d\n", i, !!(coop.flags & IORING_SETUP_SQPOLL));
		ring_io(&coop, data_fd, 11 + (unsigned)i);
		io_uring_queue_exit(&coop);
	}

	T_STEP("plain rings again, in reverse");
	for (i = RINGS - 1; i >= 0; i--)
		ring_io(&rings[i], data_fd, (unsigned)(i + 20));

	teardown_ok(rings, RINGS, fds0, data_fd, "transparent");
	return 0;
}
