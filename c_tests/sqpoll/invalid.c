/* SPDX-License-Identifier: MIT */
/*
 * Invalid shared-SQPOLL setups fail cleanly:
 *  - IORING_SETUP_SQPOLL_PERCPU without IORING_SETUP_SQPOLL -> -EINVAL,
 *    through io_uring_queue_init and io_uring_queue_init_params, with and
 *    without SQ_AFF;
 *  - SQPOLL | SQ_AFF | PERCPU with a CPU that does not exist (4096, the
 *    first CPU past the configured ones) or is offline (when the machine
 *    has one) -> -EINVAL;
 * each time: the ring is left untouched or zeroed (no half-made ring), no
 * fd leaks, no SQ thread appears, and an existing group on a valid CPU is
 * unaffected (still one member, still working). Afterwards a valid shared
 * ring can still be created into the same struct.
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define FILL 0xa5

static unsigned char fill_pattern[sizeof(struct io_uring)];

/* The ring must be bytewise untouched, or zeroed (no live mappings). */
static void check_no_ring(const struct io_uring *ring, const char *what)
{
	if (!memcmp(ring, fill_pattern, sizeof(*ring)))
		return;
	CHECK_MSG(ring->sq.ring_ptr == NULL && ring->sq.sqes == NULL &&
		  ring->cq.ring_ptr == NULL && ring->sq.khead == NULL &&
		  ring->cq.khead == NULL && ring->cq.cqes == NULL &&
		  ring->sq.ring_sz == 0 && ring->cq.ring_sz == 0 &&
		  ring->flags == 0,
		  "%s: the failed setup left a half-made ring (sq.ring_ptr %p, "
		  "sqes %p, cq.ring_ptr %p, flags 0x%x)", what, ring->sq.ring_ptr,
		  (void *)ring->sq.sqes, ring->cq.ring_ptr, ring->flags);
}

static void expect_einval(unsigned flags, unsigned cpu, int use_params,
			  const char *what)
{
	struct io_uring ring;
	struct io_uring_params p;
	int fds0 = count_fds();
	int ret;

	T_STEP("%s", what);
	memset(&ring, FILL, sizeof(ring));
	if (use_params) {
		memset(&p, 0, sizeof(p));
		p.flags = flags;
		p.sq_thread_cpu = cpu;
		ret = io_uring_queue_init_params(8, &ring, &p);
	} else {
		ret = io_uring_queue_init(8, &ring, flags);
	}
	CHECK_MSG(ret == -EINVAL, "%s: setup returned %d (%s), want -EINVAL", what,
		  ret, ret < 0 ? strerror(-ret) : "success");
	check_no_ring(&ring, what);
	CHECK_MSG(count_fds() == fds0, "%s: fd count %d -> %d (leaked fd)", what,
		  fds0, count_fds());
}

/* A CPU listed as possible but not online, or -1. */
static int find_offline_cpu(void)
{
	char buf[512], *s;
	FILE *f = fopen("/sys/devices/system/cpu/offline", "r");
	long cpu;

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	s = buf;
	cpu = strtol(s, &s, 10);
	if (s == buf)
		return -1;	/* empty: every CPU is online */
	return (int)cpu;
}

int main(void)
{
	const unsigned sq = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF |
			    IORING_SETUP_SQPOLL_PERCPU;
	long nconf = sysconf(_SC_NPROCESSORS_CONF);
	struct io_uring anchor;
	int data_fd = t_data_file();
	int fds0 = count_fds();
	int offline = find_offline_cpu();
	char what[100];
	int round;

	memset(fill_pattern, FILL, sizeof(fill_pattern));
	CHECK(nconf >= 1);

	/* Round 0: no group exists. Round 1: a group lives on cpu 0. */
	for (round = 0; round < 2; round++) {
		expect_einval(IORING_SETUP_SQPOLL_PERCPU, 0, 0,
			      "PERCPU without SQPOLL (queue_init)");
		expect_einval(IORING_SETUP_SQPOLL_PERCPU, 0, 1,
			      "PERCPU without SQPOLL (queue_init_params)");
		expect_einval(IORING_SETUP_SQPOLL_PERCPU | IORING_SETUP_SQ_AFF, 0, 1,
			      "PERCPU | SQ_AFF without SQPOLL");
		expect_einval(sq, 4096, 1, "SQ_AFF cpu 4096");
		expect_einval(sq, (unsigned)nconf, 1, "SQ_AFF first cpu past the configured ones");
		expect_einval(sq, 0xffffffffu, 1, "SQ_AFF cpu 0xffffffff");
		if (offline >= 0) {
			snprintf(what, sizeof(what), "SQ_AFF offline cpu %d", offline);
			expect_einval(sq, (unsigned)offline, 1, what);
		} else if (round == 0) {
			printf("invalid: no offline CPU on this machine; offline case not run\n");
		}
		T_STEP("round %d: state after the failures", round);
		if (round == 0) {
			CHECK_EQ(count_sqp_threads(), 0);
			CHECK_EQ(count_fds(), fds0);
			shared_ring(&anchor, 0);
			CHECK_GROUP(&anchor, 0, 1);
		} else {
			CHECK_POLLERS(1, 0);
			CHECK_GROUP(&anchor, 0, 1);
			ring_io(&anchor, data_fd, 1);
		}
	}

	T_STEP("a valid ring into a struct that saw a failure");
	{
		struct io_uring ring;

		memset(&ring, FILL, sizeof(ring));
		CHECK_EQ(io_uring_queue_init(8, &ring, IORING_SETUP_SQPOLL_PERCPU), -EINVAL);
		second_ring_on_cpu0(&ring, &anchor, data_fd);
		io_uring_queue_exit(&ring);
	}
	io_uring_queue_exit(&anchor);

	end_no_leak(fds0, data_fd);
	printf("invalid: ok\n");
	return 0;
}
