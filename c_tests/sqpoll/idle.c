/* SPDX-License-Identifier: MIT */
/*
 * RSURING_SQPOLL_IDLE_MS=N sets sq_thread_idle for rings that chose none.
 * Observed through the kernel's IORING_SQ_NEED_WAKEUP flag in *sq.kflags,
 * which the SQ thread sets when it has been idle for sq_thread_idle and
 * goes to sleep. Three rings, each with its own SQ thread, watched at once
 * after a NOP round trip:
 *   A  plain SQPOLL ring, sq_thread_idle 0 (the variable applies)
 *   B  shared (PERCPU) SQPOLL ring, sq_thread_idle 0 (the variable applies)
 *   C  plain SQPOLL ring with sq_thread_idle = 2000 chosen by the program
 *      (the variable must not override it)
 * argv[1] says what the driver set:
 *   fast     N = 10: A and B sleep within FAST_MS (well under the kernel's
 *            default of 1000 ms)
 *   slow     N = 2000: A and B still awake after SLOW_MS (past the kernel's
 *            default), asleep by the end of the watch
 *   default  unset: the kernel default (1 s): asleep after DEFAULT_MIN_MS,
 *            by DEFAULT_MAX_MS
 * In every mode C is still awake after SLOW_MS. The margins are generous:
 * a flag can only appear late on a loaded machine, never early, so the
 * upper bounds are far above the expected times and the lower bounds well
 * below. Afterwards every ring still completes a NOP (the library must
 * wake the sleeping thread).
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define FAST_MS 700
#define SLOW_MS 1300
#define DEFAULT_MIN_MS 500
#define DEFAULT_MAX_MS 4000
#define WATCH_MS 8000

#define NRINGS 3

static int need_wakeup(struct io_uring *ring)
{
	return !!(IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_NEED_WAKEUP);
}

int main(int argc, char **argv)
{
	static const char *names[NRINGS] = { "A (plain, no idle)",
					     "B (shared, no idle)",
					     "C (plain, idle 2000)" };
	struct io_uring rings[NRINGS];
	struct io_uring_params p;
	unsigned long long t0;
	long long seen[NRINGS];
	int fds0 = count_fds();
	int i, ret, pending;
	const char *mode;

	if (argc != 2)
		T_FAIL("usage: %s fast|slow|default", argv[0]);
	mode = argv[1];
	if (strcmp(mode, "fast") && strcmp(mode, "slow") && strcmp(mode, "default"))
		T_FAIL("unknown mode %s", mode);

	T_STEP("setup");
	for (i = 0; i < NRINGS; i++) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQPOLL;
		if (i == 1)
			p.flags |= IORING_SETUP_SQPOLL_PERCPU;
		if (i == 2)
			p.sq_thread_idle = 2000;
		ret = io_uring_queue_init_params(8, &rings[i], &p);
		skip_if_no_io_uring(ret);
		CHECK_MSG(ret == 0, "ring %s: setup = %d (%s)", names[i], ret,
			  strerror(-ret));
	}
	CHECK_GROUP(&rings[1], -1, 1);
	CHECK_POLLERS(3, -1, -1, -1);

	T_STEP("watch NEED_WAKEUP");
	for (i = 0; i < NRINGS; i++)
		ring_nop(&rings[i], (unsigned long long)i);
	t0 = t_now_ms();
	for (i = 0; i < NRINGS; i++)
		seen[i] = -1;
	pending = NRINGS;
	while (pending && t_now_ms() - t0 < WATCH_MS) {
		for (i = 0; i < NRINGS; i++) {
			if (seen[i] < 0 && need_wakeup(&rings[i])) {
				seen[i] = t_now_ms() - t0;
				pending--;
			}
		}
		t_msleep(1);
	}
	for (i = 0; i < NRINGS; i++)
		printf("idle %s: %s NEED_WAKEUP after %lld ms\n", mode, names[i], seen[i]);

	T_STEP("judge (%s)", mode);
	for (i = 0; i < 2; i++) {
		if (!strcmp(mode, "fast")) {
			CHECK_MSG(seen[i] >= 0 && seen[i] <= FAST_MS,
				  "%s: NEED_WAKEUP after %lld ms (-1 = never), want <= %d ms with RSURING_SQPOLL_IDLE_MS=10",
				  names[i], seen[i], FAST_MS);
		} else if (!strcmp(mode, "slow")) {
			CHECK_MSG(seen[i] < 0 || seen[i] >= SLOW_MS,
				  "%s: NEED_WAKEUP after %lld ms, want >= %d ms with RSURING_SQPOLL_IDLE_MS=2000",
				  names[i], seen[i], SLOW_MS);
			CHECK_MSG(seen[i] >= 0,
				  "%s: the SQ thread never went idle within %d ms",
				  names[i], WATCH_MS);
		} else {
			CHECK_MSG(seen[i] >= DEFAULT_MIN_MS && seen[i] <= DEFAULT_MAX_MS,
				  "%s: NEED_WAKEUP after %lld ms (-1 = never), want the kernel default 1000 ms (%d..%d)",
				  names[i], seen[i], DEFAULT_MIN_MS, DEFAULT_MAX_MS);
		}
	}
	CHECK_MSG(seen[2] < 0 || seen[2] >= SLOW_MS,
		  "%s: NEED_WAKEUP after %lld ms: the environment overrode the idle time the program chose",
		  names[2], seen[2]);

	T_STEP("wake up and complete");
	for (i = 0; i < NRINGS; i++) {
		ring_nop(&rings[i], 100 + (unsigned long long)i);
		ring_nop(&rings[i], 200 + (unsigned long long)i);
	}
	exit_rings_no_leak(rings, NRINGS, fds0);
	printf("idle %s: ok\n", mode);
	return 0;
}
