/* SPDX-License-Identifier: MIT */
/*
 * Older versions of rsuring's own extension ABI.
 *
 * RSURING_0.1's struct rsuring_stats had seven counters; RSURING_0.2 added
 * enters_sqwait and chains_split at the end. A program built against the
 * 0.1 header passes room for seven, so the RSURING_0.1 version of
 * rsuring_ring_stats fills exactly those (the default, RSURING_0.2, fills
 * the whole struct). tests/abi.rs reads the ".symver ... @RSURING_" lines of
 * this file as the list of such older versions.
 */
#include <string.h>
#include "rsuring.h"

/* The counters of RSURING_0.1, in that version's order. */
struct rsuring_stats_v0_1 {
	__u64 sqes_submitted;
	__u64 cqes_reaped;
	__u64 enters_submit;
	__u64 enters_wait;
	__u64 enters_wakeup;
	__u64 reap_batches;
	__u64 reap_max;
};

_Static_assert(sizeof(struct rsuring_stats_v0_1) == 7 * sizeof(__u64),
	       "RSURING_0.1 struct rsuring_stats had seven counters");
_Static_assert(__builtin_offsetof(struct rsuring_stats, reap_max) ==
		       __builtin_offsetof(struct rsuring_stats_v0_1, reap_max),
	       "RSURING_0.2 must keep RSURING_0.1's counters first, in order");

/* Global so the assembler can version it; liburing.map's "local: *" keeps
 * the plain name out of the dynamic symbol table. */
int rsuring_compat01_ring_stats(struct io_uring *ring, struct rsuring_stats_v0_1 *out);
__asm__(".symver rsuring_compat01_ring_stats, rsuring_ring_stats@RSURING_0.1");

int rsuring_compat01_ring_stats(struct io_uring *ring, struct rsuring_stats_v0_1 *out)
{
	struct rsuring_stats now;
	int ret;

	if (!out)
		return rsuring_ring_stats(ring, NULL);
	ret = rsuring_ring_stats(ring, &now);
	if (ret == 0)
		memcpy(out, &now, sizeof(*out));
	return ret;
}
