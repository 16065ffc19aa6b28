/* SPDX-License-Identifier: MIT */
/*
 * Link chains on rings that share one SQ thread. With more than one ring
 * on a poller the kernel takes at most 8 SQEs of each ring per round, so a
 * longer chain is cut in pieces; the library sees the chain when it
 * publishes the tail and must say so: one stderr note per process naming
 * the ring (its fd) and the limit of 8, and a count in the ring's
 * statistics. Chains of 8 or fewer SQEs must pass silently.
 *
 *   chains <setup> short|long
 *
 * setup (two rings A and B, which must share one SQ thread):
 *   percpu-env   IORING_SETUP_SQPOLL | SQ_AFF on cpu 0, with
 *                RSURING_SQPOLL_PERCPU=1 in the environment
 *   percpu-flag  IORING_SETUP_SQPOLL | SQ_AFF | SQPOLL_PERCPU on cpu 0
 *   transparent  plain setups under RSURING_SQPOLL=1 (run unprivileged)
 * short: chains of 1, 2, 7 and 8 linked NOPs on A and B, twice.
 * long:  a chain of 8 on A, then chains of 20 on A, on B and on A again.
 * Every chain's CQEs are reaped and checked (NOPs, res 0).
 * Prints ring_a_fd=<fd> ring_b_fd=<fd>. Built with
 * -DSPLIT_CHAIN_FIELD=<member of struct rsuring_stats> it also checks that
 * counter on A (statistics enabled on both rings): 0 after "short", at
 * least 1 after "long", and prints split_chains_a=<value>.
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define ENTRIES 32

static void setup(struct io_uring *ring, const char *how)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	if (!strcmp(how, "percpu-env") || !strcmp(how, "percpu-flag")) {
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = 0;
		if (!strcmp(how, "percpu-flag"))
			p.flags |= IORING_SETUP_SQPOLL_PERCPU;
	} else if (strcmp(how, "transparent")) {
		fprintf(stderr, "unknown setup \"%s\"\n", how);
		exit(2);
	} else {
		check_unprivileged();
	}
	ret = io_uring_queue_init_params(ENTRIES, ring, &p);
	skip_if_no_io_uring(ret);
	CHECK_MSG(ret == 0, "%s: setup = %d (%s)", how, ret, strerror(-ret));
	CHECK_MSG(ring_sq_thread(ring->ring_fd) > 0, "%s: ring fd %d has no SQ thread", how,
		  ring->ring_fd);
#ifdef SPLIT_CHAIN_FIELD
	CHECK_EQ(rsuring_stats_enable(ring), 0);
#endif
}

static void chain(struct io_uring *ring, unsigned n, const char *name)
{
	unsigned i;
	int ret;

	T_STEP("chain of %u on ring %s (fd %d)", n, name, ring->ring_fd);
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK(sqe != NULL);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 500 + i);
		if (i + 1 < n)
			sqe->flags |= IOSQE_IO_LINK;
	}
	ret = io_uring_submit(ring);
	CHECK_SUBMITTED(ret, (int)n, "link chain");
	reap_nops(ring, n);
}

#ifdef SPLIT_CHAIN_FIELD
static unsigned long long split_chains(struct io_uring *ring)
{
	struct rsuring_stats st;

	memset(&st, 0, sizeof(st));
	CHECK_EQ(rsuring_ring_stats(ring, &st), 0);
	return (unsigned long long)st.SPLIT_CHAIN_FIELD;
}
#endif

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	const char *length = argc > 2 ? argv[2] : "";
	struct io_uring a, b;
	long tid_a, tid_b;

	setup(&a, how);
	setup(&b, how);
	printf("ring_a_fd=%d ring_b_fd=%d\n", a.ring_fd, b.ring_fd);
	tid_a = ring_sq_thread(a.ring_fd);
	tid_b = ring_sq_thread(b.ring_fd);
	CHECK_MSG(tid_a > 0 && tid_a == tid_b,
		  "%s: rings A and B must share one SQ thread (SqThread %ld and %ld)", how,
		  tid_a, tid_b);
	CHECK_EQ(count_sqp_threads(), 1);

	if (!strcmp(length, "short")) {
		static const unsigned lens[] = { 1, 2, 7, 8 };
		unsigned i, pass;

		for (pass = 0; pass < 2; pass++)
			for (i = 0; i < 4; i++) {
				chain(&a, lens[i], "A");
				chain(&b, lens[i], "B");
			}
#ifdef SPLIT_CHAIN_FIELD
		printf("split_chains_a=%llu\n", split_chains(&a));
		CHECK_MSG(split_chains(&a) == 0, "chains of 8 or fewer counted as split");
#endif
	} else if (!strcmp(length, "long")) {
		chain(&a, 8, "A");
		chain(&a, 20, "A");
		chain(&b, 20, "B");
		chain(&a, 20, "A");
#ifdef SPLIT_CHAIN_FIELD
		printf("split_chains_a=%llu\n", split_chains(&a));
		CHECK_MSG(split_chains(&a) >= 1, "two 20-SQE chains on a shared poller were "
			  "not counted as split chains");
#endif
	} else {
		fprintf(stderr, "usage: %s <setup> short|long\n", argv[0]);
		return 2;
	}
	io_uring_queue_exit(&a);
	io_uring_queue_exit(&b);
	printf("chains %s %s: ok\n", how, length);
	return 0;
}
