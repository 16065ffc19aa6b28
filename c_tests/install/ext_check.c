/* SPDX-License-Identifier: MIT */
/*
 * ext_check: uses every rsuring extension through an installed <rsuring.h>
 * and pkg-config's rsuring, as an application would. The install check
 * builds it with -DEXPECT_VERSION='"x.y.z"' (pkg-config --modversion
 * rsuring) so the header's version macros are checked against the .pc.
 * Prints "extensions: ok ..." and exits 0, or says what failed.
 */
#include <errno.h>
#include <rsuring.h>
#include <stdio.h>
#include <string.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

#define NOPS 32

static int failures;

#define EXPECT(cond, ...)                                     \
	do {                                                 \
		if (!(cond)) {                               \
			fprintf(stderr, "ext_check: " __VA_ARGS__); \
			fputc('\n', stderr);                 \
			failures++;                          \
		}                                            \
	} while (0)

/* NOPs reaped in batches with rsuring_wait_batch_cqe, counted by the stats. */
static void batched_ring(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqes[NOPS];
	struct __kernel_timespec ts = { .tv_sec = 5 };
	struct rsuring_stats st;
	int ret, reaped = 0;

	ret = rsuring_queue_init_batched(64, &ring, 0);
	EXPECT(ret == 0, "rsuring_queue_init_batched: %d", ret);
	if (ret)
		return;
	ret = rsuring_stats_enable(&ring);
	EXPECT(ret == 0, "rsuring_stats_enable: %d", ret);
	for (int i = 0; i < NOPS; i++)
		io_uring_prep_nop(io_uring_get_sqe(&ring));
	ret = io_uring_submit(&ring);
	EXPECT(ret == NOPS, "io_uring_submit: %d", ret);
	while (reaped < NOPS) {
		ret = rsuring_wait_batch_cqe(&ring, cqes, NOPS, NOPS - reaped, &ts);
		EXPECT(ret > 0, "rsuring_wait_batch_cqe: %d", ret);
		if (ret <= 0)
			break;
		for (int i = 0; i < ret; i++)
			EXPECT(cqes[i]->res == 0, "NOP result %d", cqes[i]->res);
		io_uring_cq_advance(&ring, ret);
		reaped += ret;
	}
	ret = rsuring_ring_stats(&ring, &st);
	EXPECT(ret == 0, "rsuring_ring_stats: %d", ret);
	EXPECT(st.sqes_submitted == NOPS && st.cqes_reaped == NOPS,
	      "stats: %llu SQEs, %llu CQEs, expected %d each",
	      (unsigned long long)st.sqes_submitted,
	      (unsigned long long)st.cqes_reaped, NOPS);
	io_uring_queue_exit(&ring);
}

/* Two IORING_SETUP_SQPOLL_PERCPU rings on CPU 0 share one poller. */
static void shared_poller(void)
{
	struct io_uring a, b;
	struct io_uring_params p = {
		.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF |
			 IORING_SETUP_SQPOLL_PERCPU,
		.sq_thread_cpu = 0,
	};
	struct rsuring_sqpoll_info info = { -2, 0 };
	int ret;

	ret = io_uring_queue_init_params(8, &a, &p);
	EXPECT(ret == 0, "first SQPOLL_PERCPU ring: %d", ret);
	if (ret)
		return;
	ret = io_uring_queue_init_params(8, &b, &p);
	EXPECT(ret == 0, "second SQPOLL_PERCPU ring: %d", ret);
	if (ret == 0) {
		ret = rsuring_sqpoll_group(&b, &info);
		EXPECT(ret == 0 && info.cpu == 0 && info.members == 2,
		      "rsuring_sqpoll_group: %d, cpu %d, %u members", ret, info.cpu,
		      info.members);
		io_uring_queue_exit(&b);
	}
	io_uring_queue_exit(&a);
}

int main(void)
{
	EXPECT(strcmp(RSURING_VERSION, EXPECT_VERSION) == 0,
	      "RSURING_VERSION is %s, rsuring.pc says %s", RSURING_VERSION, EXPECT_VERSION);
	EXPECT(io_uring_major_version() == IO_URING_VERSION_MAJOR &&
		      io_uring_minor_version() == IO_URING_VERSION_MINOR,
	      "library API %d.%d, header %d.%d", io_uring_major_version(),
	      io_uring_minor_version(), IO_URING_VERSION_MAJOR, IO_URING_VERSION_MINOR);
	batched_ring();
	shared_poller();
	if (failures)
		return 1;
	printf("extensions: ok (rsuring %s, liburing API %d.%d)\n", RSURING_VERSION,
	       IO_URING_VERSION_MAJOR, IO_URING_VERSION_MINOR);
	return 0;
}
