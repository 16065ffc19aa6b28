/* SPDX-License-Identifier: MIT */
/*
 * The statistics count the system calls that were made: N NOP round trips
 * (one io_uring_submit, one io_uring_wait_cqe each) on one ring with
 * statistics on, in three modes:
 *
 *   syscalls plain|transparent|move|sqpoll N [gap_ms]
 *
 * plain: a plain ring; sqpoll: IORING_SETUP_SQPOLL (run it with
 * RSURING_SQPOLL_PERCPU=1 for a shared poller); transparent: a plain setup
 * that must have become transparent (RSURING_SQPOLL=1, run as an
 * unprivileged user pinned away from the poller's CPU). With gap_ms, the
 * program sleeps that long before every 8th submit, so that the SQ thread
 * is asleep and must be woken (RSURING_SQPOLL_IDLE_MS below gap_ms).
 * move: as transparent, but after half the round trips the program moves
 * itself onto every CPU (the poller's included) and goes on: every round
 * trip must still complete, correctly counted.
 *
 * Prints the ring's statistics line (rsuring_stats_format) as
 * `line=rsuring: ...` and the counters as `sqes=`, `enters=`,
 * `enters_submit=`, `enters_wait=`, `wakeups=`; the driver compares
 * `enters` with the io_uring_enter calls strace counted.
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"
#include <sched.h>

int main(int argc, char **argv)
{
	struct io_uring_params p = { 0 };
	struct rsuring_stats st;
	struct io_uring ring;
	char line[1024];
	int transparent, n, gap, i, ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s plain|transparent|sqpoll N [gap_ms]\n", argv[0]);
		return 2;
	}
	int move = !strcmp(argv[1], "move");

	transparent = move || !strcmp(argv[1], "transparent");
	if (!strcmp(argv[1], "sqpoll"))
		p.flags = IORING_SETUP_SQPOLL;
	n = atoi(argv[2]);
	gap = argc > 3 ? atoi(argv[3]) : 0;
	if (transparent)
		check_unprivileged();
	ret = io_uring_queue_init_params(8, &ring, &p);
	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "setup = %d (%s)", ret, strerror(-ret));
	if (!p.flags)
		CHECK_RING_MODE(&ring, transparent);
	CHECK_EQ(rsuring_stats_enable(&ring), 0);
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;

		if (gap && i % 8 == 0)
			t_msleep(gap);
		if (move && i == n / 2) {
			cpu_set_t all;
			int cpu;

			CPU_ZERO(&all);
			for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
				CPU_SET(cpu, &all);
			CHECK_MSG(sched_setaffinity(0, sizeof(all), &all) == 0,
				  "sched_setaffinity(all CPUs): %s", strerror(errno));
			printf("moved=%d\n", i);
		}
		sqe = io_uring_get_sqe(&ring);
		CHECK(sqe != NULL);
		io_uring_prep_nop(sqe);
		sqe->user_data = (unsigned long long)i;
		ret = io_uring_submit(&ring);
		/*
		 * On an SQPOLL ring io_uring_submit returns the SQEs the SQ
		 * thread has not taken yet (liburing: tail - khead), which
		 * includes the previous NOP when the thread posted its CQE
		 * before publishing its SQ head.
		 */
		CHECK_MSG(ret == 1 || (p.flags & IORING_SETUP_SQPOLL && ret == 2),
			  "NOP %d: io_uring_submit = %d (%s)", i, ret,
			  ret < 0 ? strerror(-ret) : "");
		ret = io_uring_wait_cqe(&ring, &cqe);
		CHECK_MSG(ret == 0, "NOP %d: io_uring_wait_cqe = %d (%s)", i, ret, strerror(-ret));
		CHECK_EQ(cqe->user_data, (unsigned long long)i);
		CHECK_EQ(cqe->res, 0);
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(rsuring_ring_stats(&ring, &st), 0);
	ret = rsuring_stats_format(&ring, line, sizeof(line));
	CHECK_MSG(ret > 0 && ret < (int)sizeof(line), "rsuring_stats_format = %d", ret);
	printf("line=%s\n", line);
	printf("sqes=%llu\nenters=%llu\nenters_submit=%llu\nenters_wait=%llu\nwakeups=%llu\n",
	       (unsigned long long)st.sqes_submitted,
	       (unsigned long long)(st.enters_submit + st.enters_wait + st.enters_wakeup +
				    st.enters_sqwait),
	       (unsigned long long)st.enters_submit, (unsigned long long)st.enters_wait,
	       (unsigned long long)st.enters_wakeup);
	CHECK_EQ(st.sqes_submitted, (unsigned long long)n);
	CHECK_EQ(st.cqes_reaped, (unsigned long long)n);
	io_uring_queue_exit(&ring);
	return 0;
}
