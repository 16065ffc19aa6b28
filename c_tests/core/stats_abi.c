/* SPDX-License-Identifier: MIT */
/*
 * rsuring_ring_stats keeps its RSURING_0.1 ABI: a program built against the
 * 0.1 header (seven counters in struct rsuring_stats) binds to
 * rsuring_ring_stats@RSURING_0.1, which must fill exactly those seven and
 * nothing after them; the default version (RSURING_0.2) fills the whole
 * struct, and both agree on the common counters for the same ring.
 */
#include <dlfcn.h>
#include "../rsuring_test.h"
#include <rsuring.h>

#define OLD_COUNTERS 7
#define CANARY 0x5a5a5a5a5a5a5a5aULL

typedef int (*ring_stats_fn)(struct io_uring *, void *);

int main(void)
{
	struct io_uring ring;
	struct rsuring_stats now;
	__u64 old[OLD_COUNTERS + 4];
	ring_stats_fn v01, v02;
	int i;

	T_STEP("both versions resolve");
	v01 = (ring_stats_fn)dlvsym(RTLD_DEFAULT, "rsuring_ring_stats", "RSURING_0.1");
	v02 = (ring_stats_fn)dlvsym(RTLD_DEFAULT, "rsuring_ring_stats", "RSURING_0.2");
	CHECK(v01 != NULL);
	CHECK(v02 != NULL);
	CHECK(v01 != v02);
	CHECK(v02 == (ring_stats_fn)rsuring_ring_stats);

	T_STEP("a ring with statistics and known work");
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0);
	CHECK_EQ(rsuring_stats_enable(&ring), 0);
	for (i = 0; i < 5; i++)
		t_nop_round_trip(&ring, 1, (uint64_t)i);

	T_STEP("RSURING_0.1 fills seven counters and nothing after them");
	for (i = 0; i < OLD_COUNTERS + 4; i++)
		old[i] = CANARY;
	CHECK_EQ(v01(&ring, old), 0);
	for (i = OLD_COUNTERS; i < OLD_COUNTERS + 4; i++)
		CHECK_MSG(old[i] == CANARY, "word %d after the old struct was written", i);
	CHECK_EQ(v02(&ring, &now), 0);
	CHECK_EQ(old[0], now.sqes_submitted);
	CHECK_EQ(old[1], now.cqes_reaped);
	CHECK_EQ(old[6], now.reap_max);
	CHECK_EQ(now.sqes_submitted, 5);
	CHECK_EQ(now.cqes_reaped, 5);

	T_STEP("bad input is the same in both");
	CHECK_EQ(v01(&ring, NULL), -EFAULT);
	CHECK_EQ(v01(NULL, old), -EFAULT);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
