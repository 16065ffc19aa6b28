/* SPDX-License-Identifier: MIT */
/*
 * Rings with IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF |
 * IORING_SETUP_SQPOLL_PERCPU on one CPU share one kernel SQ thread:
 *  - for N = 1, 2, 8 rings on one CPU: exactly one iou-sqp thread, bound to
 *    that CPU; rsuring_sqpoll_group reports { cpu, N } for every ring; every
 *    ring reads the right data from a file (alone and all at once) and
 *    completes NOPs; closing them all leaves no thread and no fd;
 *  - rings on CPUs 0 and 1: two threads, one bound to each CPU, groups
 *    counted per CPU;
 *  - a plain SQPOLL ring (no PERCPU) on CPU 0 keeps its own thread and is
 *    in no group (-ENOENT); rsuring_sqpoll_group rejects NULL (-EFAULT);
 *  - ring.flags shows SQPOLL but neither the library-only PERCPU bit nor
 *    the ATTACH_WQ the library added.
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

static struct io_uring rings[16];

static void same_cpu(int cpu, int n, int data_fd)
{
	int fds0 = count_fds();
	int i;

	T_STEP("%d rings on cpu %d: setup", n, cpu);
	for (i = 0; i < n; i++) {
		shared_ring(&rings[i], cpu);
		CHECK_POLLERS(1, cpu);
	}
	T_STEP("%d rings on cpu %d: groups", n, cpu);
	for (i = 0; i < n; i++)
		CHECK_GROUP(&rings[i], cpu, n);
	T_STEP("%d rings on cpu %d: I/O", n, cpu);
	for (i = 0; i < n; i++)
		ring_io(&rings[i], data_fd, (unsigned)i);
	rings_io_concurrent(rings, n, data_fd);
	for (i = n - 1; i >= 0; i--)
		ring_io(&rings[i], data_fd, (unsigned)(i + 7));
	CHECK_POLLERS(1, cpu);

	T_STEP("%d rings on cpu %d: teardown", n, cpu);
	for (i = 0; i < n; i++)
		io_uring_queue_exit(&rings[i]);
	CHECK_EQ(count_fds(), fds0);
	CHECK_NO_POLLERS();
}

int main(void)
{
	struct rsuring_sqpoll_info info;
	struct io_uring plain;
	struct io_uring_params p;
	int data_fd = t_data_file();
	int fds0 = count_fds();
	int i, ret;

	CHECK_EQ(count_sqp_threads(), 0);

	same_cpu(1, 1, data_fd);
	same_cpu(1, 2, data_fd);
	same_cpu(1, 8, data_fd);
	same_cpu(0, 8, data_fd);

	T_STEP("two cpus");
	for (i = 0; i < 6; i++) {
		shared_ring(&rings[i], i % 2);
		if (i == 0)
			CHECK_POLLERS(1, 0);
		else
			CHECK_POLLERS(2, 0, 1);
	}
	for (i = 0; i < 6; i++)
		CHECK_GROUP(&rings[i], i % 2, 3);
	rings_io_concurrent(rings, 6, data_fd);
	for (i = 0; i < 6; i++)
		ring_io(&rings[i], data_fd, (unsigned)i);

	T_STEP("plain SQPOLL ring next to the shared ones");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
	p.sq_thread_cpu = 0;
	ret = io_uring_queue_init_params(8, &plain, &p);
	CHECK_MSG(ret == 0, "plain SQPOLL ring: %d", ret);
	CHECK_POLLERS(3, 0, 0, 1);
	CHECK_EQ(rsuring_sqpoll_group(&plain, &info), -ENOENT);
	CHECK_EQ(rsuring_sqpoll_group(&rings[0], NULL), -EFAULT);
	CHECK_EQ(rsuring_sqpoll_group(NULL, &info), -EFAULT);
	ring_io(&plain, data_fd, 3);
	for (i = 0; i < 6; i++)
		CHECK_GROUP(&rings[i], i % 2, 3);
	io_uring_queue_exit(&plain);
	CHECK_POLLERS(2, 0, 1);

	T_STEP("two cpus: close cpu 0's rings");
	for (i = 0; i < 6; i += 2)
		io_uring_queue_exit(&rings[i]);
	CHECK_POLLERS(1, 1);
	for (i = 1; i < 6; i += 2) {
		CHECK_GROUP(&rings[i], 1, 3);
		ring_io(&rings[i], data_fd, (unsigned)i);
	}
	for (i = 1; i < 6; i += 2)
		io_uring_queue_exit(&rings[i]);

	end_no_leak(fds0, data_fd);
	printf("share: ok\n");
	return 0;
}
