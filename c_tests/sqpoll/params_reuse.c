/* SPDX-License-Identifier: MIT */
/*
 * One struct io_uring_params reused for several rings, a common idiom:
 * io_uring_setup(2) only writes the output fields of the params (sizes,
 * features, offsets), so the application's inputs (flags, sq_thread_cpu,
 * wq_fd) still describe the same request the second time. The shared-SQPOLL
 * policy must not leak its own decisions into them.
 *
 * With <rsuring.h> (argv[1]):
 *  pinned  SQPOLL | SQ_AFF (cpu 1) | PERCPU, one params for 4 rings: after
 *          each setup p.flags still has PERCPU and no ATTACH_WQ, p.wq_fd and
 *          p.sq_thread_cpu are unchanged; all 4 rings are in one group
 *          (members 4) with one SQ thread bound to cpu 1; all do I/O.
 *  spread  RSURING_SQPOLL_CPUS=0,1, SQPOLL | PERCPU (no SQ_AFF), one params
 *          for 4 rings: p.flags gains no SQ_AFF; rings go to cpus 0,1,0,1;
 *          two SQ threads bound to 0 and 1.
 * Built against Debian's liburing.h (no rsuring.h; run under LD_PRELOAD
 * with RSURING_SQPOLL_PERCPU=1 RSURING_SQPOLL_CPUS=0,1):
 *  debian  SQPOLL only, one params for 4 rings, I/O on each; prints
 *          sqp_threads= and sqp_cpus= for the driver (want 2 and "0,1"),
 *          and impl= (the file providing io_uring_queue_init).
 *  debian-plain  (under RSURING_SQPOLL=1, unprivileged) flags 0, one params
 *          for 4 rings: every ring gets the shared poller while ring.flags
 *          and p.flags stay 0; the driver wants
 *          sqp_threads=1 (one shared unbound poller).
 */
#ifndef SQ_DEBIAN
#include <rsuring.h>
#endif
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define RINGS 4

static struct io_uring rings[RINGS];
static int leaks;

#define LEAK_IF(cond, ...)						\
	do {								\
		if (cond) {						\
			fprintf(stderr, "params leak: " __VA_ARGS__);	\
			fputc('\n', stderr);				\
			leaks++;					\
		}							\
	} while (0)

int main(int argc, char **argv)
{
	struct io_uring_params p;
	const char *mode = argc == 2 ? argv[1] : "";
	int data_fd = t_data_file();
	int fds0 = count_fds();
	int i, ret;

	print_impl();

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
#ifdef RSURING_H
	p.flags |= IORING_SETUP_SQPOLL_PERCPU;
	if (!strcmp(mode, "pinned")) {
		p.flags |= IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = 1;
	} else if (strcmp(mode, "spread")) {
		T_FAIL("usage: %s pinned|spread", argv[0]);
	}
#else
	if (!strcmp(mode, "debian-plain"))
		p.flags = 0;
	else if (strcmp(mode, "debian"))
		T_FAIL("usage: %s debian|debian-plain", argv[0]);
#endif
	const unsigned flags0 = p.flags, cpu0 = p.sq_thread_cpu, wq_fd0 = p.wq_fd;

	for (i = 0; i < RINGS; i++) {
		T_STEP("%s: ring %d from the same params", mode, i);
		ret = io_uring_queue_init_params(8, &rings[i], &p);
		skip_if_no_io_uring(ret);
		CHECK_MSG(ret == 0, "ring %d: setup = %d (%s)", i, ret, strerror(-ret));
		/*
		 * A transparent ring shows the plain setup it asked for; its
		 * poller shows in the thread count the driver checks.
		 */
		CHECK_MSG(!!(rings[i].flags & IORING_SETUP_SQPOLL) == (flags0 != 0),
			  "ring %d flags 0x%x", i, rings[i].flags);
		/* Recorded, not fatal: the consequences are checked below too. */
#ifdef RSURING_H
		LEAK_IF(!(p.flags & IORING_SETUP_SQPOLL_PERCPU),
			"ring %d: after setup, the application's p.flags 0x%x (was 0x%x) "
			"lost IORING_SETUP_SQPOLL_PERCPU", i, p.flags, flags0);
#endif
		LEAK_IF((p.flags & IORING_SETUP_SQPOLL) != (flags0 & IORING_SETUP_SQPOLL),
			"ring %d: after setup, p.flags 0x%x (was 0x%x): the SQPOLL the library "
			"chose leaked into the application's params", i, p.flags, flags0);
		LEAK_IF((p.flags & IORING_SETUP_ATTACH_WQ) || p.wq_fd != wq_fd0,
			"ring %d: after setup, p.flags 0x%x / p.wq_fd %u carry an attachment "
			"the application did not ask for", i, p.flags, p.wq_fd);
		LEAK_IF((p.flags & IORING_SETUP_SQ_AFF) != (flags0 & IORING_SETUP_SQ_AFF) ||
			p.sq_thread_cpu != cpu0,
			"ring %d: after setup, p.flags 0x%x (was 0x%x) / p.sq_thread_cpu %u "
			"(was %u): the library's CPU placement leaked into the application's "
			"params", i, p.flags, flags0, p.sq_thread_cpu, cpu0);
	}

	T_STEP("%s: groups and pollers", mode);
#ifdef RSURING_H
	if (!strcmp(mode, "pinned")) {
		for (i = 0; i < RINGS; i++)
			CHECK_GROUP(&rings[i], 1, RINGS);
		CHECK_POLLERS(1, 1);
	} else {
		for (i = 0; i < RINGS; i++)
			CHECK_GROUP(&rings[i], i % 2, RINGS / 2);
		CHECK_POLLERS(2, 0, 1);
	}
#endif
	T_STEP("%s: I/O", mode);
	for (i = 0; i < RINGS; i++)
		ring_io(&rings[i], data_fd, (unsigned)i);
	rings_io_concurrent(rings, RINGS, data_fd);
	printf("sqp_threads=%d\n", count_sqp_threads());
	print_sqp_cpus("sqp_cpus");

	T_STEP("%s: params", mode);
	CHECK_MSG(leaks == 0, "%d params leak(s), see above", leaks);

	T_STEP("%s: teardown", mode);
	for (i = 0; i < RINGS; i++)
		io_uring_queue_exit(&rings[i]);
	CHECK_EQ(count_fds(), fds0);
	CHECK_NO_POLLERS();
	close(data_fd);
	printf("params_reuse %s: ok\n", mode);
	return 0;
}
