/* SPDX-License-Identifier: MIT */
/*
 * Placement of shared rings created without SQ_AFF (SQPOLL | PERCPU), by
 * the environment the driver sets; argv[1] names the expectation:
 *
 *  spread    RSURING_SQPOLL_CPUS=0,1 (or 0-1): least-loaded CPU first, ties
 *            to the earlier CPU: rings 1..6 go to cpus 0,1,0,1,0,1 (checked
 *            with rsuring_sqpoll_group after each), exactly 2 pollers bound
 *            to cpus 0 and 1; closing two cpu-0 rings makes cpu 0 the least
 *            loaded again, so the next two rings go to cpu 0, then the next
 *            to the earlier CPU on a tie; a ring with SQ_AFF=1 ignores the
 *            list (joins cpu 1). All rings read data / do NOPs.
 *  unbound   RSURING_SQPOLL_CPUS unset: all rings without SQ_AFF share one
 *            unbound poller (cpu -1, members counted); a ring with SQ_AFF=0
 *            gets a separate poller bound to cpu 0.
 *  malformed a malformed variable (driver checks the one warning line):
 *            rings still work, and with no usable CPU list they share the
 *            unbound poller as in `unbound`.
 *
 * Nothing leaks in any mode (fds and threads checked at the end).
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

static struct io_uring r[16];
static int data_fd;

static void spread(void)
{
	static const int want[6] = { 0, 1, 0, 1, 0, 1 };
	struct io_uring aff;
	int i;

	T_STEP("spread: 6 rings");
	for (i = 0; i < 6; i++) {
		shared_ring(&r[i], -1);
		CHECK_GROUP(&r[i], want[i], i / 2 + 1);
		CHECK_MSG(r[i].flags & IORING_SETUP_SQPOLL, "ring %d flags 0x%x", i,
			  r[i].flags);
	}
	for (i = 0; i < 6; i++)
		CHECK_GROUP(&r[i], want[i], 3);
	CHECK_POLLERS(2, 0, 1);
	rings_io_concurrent(r, 6, data_fd);

	T_STEP("spread: close two cpu-0 rings, refill");
	io_uring_queue_exit(&r[0]);
	io_uring_queue_exit(&r[2]);
	CHECK_GROUP(&r[4], 0, 1);
	CHECK_GROUP(&r[1], 1, 3);
	shared_ring(&r[0], -1);
	CHECK_GROUP(&r[0], 0, 2);
	shared_ring(&r[2], -1);
	CHECK_GROUP(&r[2], 0, 3);
	shared_ring(&r[6], -1);		/* 3 vs 3: the earlier CPU */
	CHECK_GROUP(&r[6], 0, 4);
	shared_ring(&r[7], -1);
	CHECK_GROUP(&r[7], 1, 4);
	CHECK_POLLERS(2, 0, 1);

	T_STEP("spread: SQ_AFF ignores the list");
	shared_ring(&aff, 1);
	CHECK_GROUP(&aff, 1, 5);
	shared_ring(&r[8], -1);		/* cpu 0 has 4, cpu 1 has 5 */
	CHECK_GROUP(&r[8], 0, 5);
	CHECK_POLLERS(2, 0, 1);
	for (i = 0; i < 9; i++)
		ring_io(&r[i], data_fd, (unsigned)i);
	ring_io(&aff, data_fd, 9);

	io_uring_queue_exit(&aff);
	for (i = 0; i < 9; i++)
		io_uring_queue_exit(&r[i]);
}

static void unbound(void)
{
	struct io_uring aff;
	int i;

	T_STEP("unbound: 4 rings");
	for (i = 0; i < 4; i++) {
		shared_ring(&r[i], -1);
		CHECK_GROUP(&r[i], -1, i + 1);
		CHECK_POLLERS(1, -1);
	}
	CHECK_GROUP(&r[0], -1, 4);
	rings_io_concurrent(r, 4, data_fd);

	T_STEP("unbound: a pinned ring gets its own poller");
	shared_ring(&aff, 0);
	CHECK_GROUP(&aff, 0, 1);
	CHECK_GROUP(&r[3], -1, 4);
	CHECK_POLLERS(2, -1, 0);
	ring_io(&aff, data_fd, 7);

	T_STEP("unbound: the group survives its creator");
	io_uring_queue_exit(&r[0]);
	shared_ring(&r[4], -1);
	CHECK_GROUP(&r[4], -1, 4);
	CHECK_POLLERS(2, -1, 0);
	for (i = 1; i < 5; i++)
		ring_io(&r[i], data_fd, (unsigned)i);

	io_uring_queue_exit(&aff);
	for (i = 1; i < 5; i++)
		io_uring_queue_exit(&r[i]);
}

int main(int argc, char **argv)
{
	int fds0;

	if (argc != 2)
		T_FAIL("usage: %s spread|unbound|malformed", argv[0]);
	data_fd = t_data_file();
	fds0 = count_fds();

	if (!strcmp(argv[1], "spread"))
		spread();
	else if (!strcmp(argv[1], "unbound") || !strcmp(argv[1], "malformed"))
		unbound();
	else
		T_FAIL("unknown mode %s", argv[1]);

	end_no_leak(fds0, data_fd);
	printf("placement %s: ok\n", argv[1]);
	return 0;
}
