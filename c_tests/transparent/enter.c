/* SPDX-License-Identifier: MIT */
/*
 * A program that drives the ring itself: it writes SQEs into the mapped SQ
 * array, publishes the SQ tail through the pointers in struct io_uring and
 * calls the exported io_uring_enter(ring_fd, to_submit, min_complete,
 * flags, NULL); it reaps CQEs straight from the mapped CQ. On a transparent
 * ring that call must behave as on a plain ring: wake an idle SQ thread,
 * return the plain-ring count, and return only once the SQ is consumed.
 *
 *   enter <plain|transparent>
 *
 * Run with RSURING_SQPOLL_IDLE_MS=10 (the SQ thread sleeps after 10 ms);
 * each "idle" step first sleeps 100 ms and checks that the SQ thread asked
 * for a wake-up; the "no pause" steps follow the previous call at once
 * (the thread may or may not be awake). Under RSURING_SQPOLL=1 run it as
 * an unprivileged user. Every io_uring_enter runs under an alarm.
 */
#ifndef SQ_DEBIAN
#include <rsuring.h>
#endif
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define IDLE_SLEEP_MS 100
#define HANG_SECS 5

static unsigned sq_head(const struct io_uring *ring)
{
	return __atomic_load_n(ring->sq.khead, __ATOMIC_ACQUIRE);
}

static unsigned sq_tail(const struct io_uring *ring)
{
	return __atomic_load_n(ring->sq.ktail, __ATOMIC_RELAXED);
}

/* Writes a NOP into the next SQ slot and publishes the new tail. */
static void publish_nop(struct io_uring *ring, __u64 tag)
{
	unsigned tail = sq_tail(ring);
	unsigned index = tail & *ring->sq.kring_mask;
	struct io_uring_sqe *sqe = &ring->sq.sqes[index];

	CHECK_MSG(tail - sq_head(ring) < *ring->sq.kring_entries, "SQ full");
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = tag;
#ifdef IORING_SETUP_NO_SQARRAY
	if (!(ring->flags & IORING_SETUP_NO_SQARRAY))
#endif
		ring->sq.array[index] = index;
	__atomic_store_n(ring->sq.ktail, tail + 1, __ATOMIC_RELEASE);
}

static int failures;

/* A broken expectation: reported, counted, and the program goes on with
 * the next step (on a new ring) so one run shows every step. */
#define BROKEN(...)							\
	do {								\
		fprintf(stderr, "FAIL [step: %s]: ", t_step);		\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		failures++;						\
		return;							\
	} while (0)

static volatile sig_atomic_t alarm_fired;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
}

/* io_uring_enter with an alarm that interrupts it (no SA_RESTART): a call
 * that would hang returns -EINTR with alarm_fired set. */
static int enter(struct io_uring *ring, unsigned to_submit, unsigned min_complete,
		 unsigned flags)
{
	struct sigaction sa;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	alarm_fired = 0;
	alarm(HANG_SECS);
	ret = io_uring_enter((unsigned)ring->ring_fd, to_submit, min_complete, flags, NULL);
	alarm(0);
	t_arm_watchdog();
	return ret;
}

#define CHECK_ENTER(ret, want, call)					\
	do {								\
		if (alarm_fired)					\
			BROKEN("%s hung (interrupted after %d s)", call, HANG_SECS);\
		if ((ret) != (want))					\
			BROKEN("%s = %d (%s), want %d as on a plain ring", call, ret,\
			       (ret) < 0 ? strerror(-(ret)) : "", want);	\
	} while (0)

/* The SQ head equals the tail: everything published was consumed. */
#define CHECK_CONSUMED(ring, call)					\
	do {								\
		unsigned _h = sq_head(ring), _t = sq_tail(ring);	\
		if (_h != _t)						\
			BROKEN("%s returned with the SQ head at %u and the tail at %u: "\
			       "the SQE was not consumed yet", call, _h, _t);	\
	} while (0)

/* The next CQE straight from the mapped CQ: must be there now. */
#define TAKE_CQE(ring, tag, call)					\
	do {								\
		unsigned _head = *(ring)->cq.khead;			\
		unsigned _tail = __atomic_load_n((ring)->cq.ktail, __ATOMIC_ACQUIRE);\
		struct io_uring_cqe *_cqe;				\
		if (_tail == _head)					\
			BROKEN("%s returned but no CQE is posted", call);	\
		_cqe = &(ring)->cq.cqes[_head & *(ring)->cq.kring_mask];\
		if (_cqe->user_data != (tag) || _cqe->res != 0)		\
			BROKEN("%s: CQE user_data %llu res %d, want %llu res 0", call,\
			       (unsigned long long)_cqe->user_data, _cqe->res,\
			       (unsigned long long)(tag));		\
		__atomic_store_n((ring)->cq.khead, _head + 1, __ATOMIC_RELEASE);\
		T_PROGRESS();						\
	} while (0)

static void pause_until_idle(struct io_uring *ring, int transparent)
{
	t_msleep(IDLE_SLEEP_MS);
	if (transparent)
		CHECK_MSG(IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_NEED_WAKEUP,
			  "the SQ thread is still awake %d ms after the last request "
			  "(RSURING_SQPOLL_IDLE_MS=10 expected)", IDLE_SLEEP_MS);
}

/* One NOP published, then io_uring_enter(fd, 1, 1, GETEVENTS): 1, with the
 * CQE posted and the SQ consumed. */
static void submit_and_wait_one(struct io_uring *ring)
{
	const char *call = "io_uring_enter(fd, 1, 1, GETEVENTS)";
	int ret;

	publish_nop(ring, 1);
	ret = enter(ring, 1, 1, IORING_ENTER_GETEVENTS);
	CHECK_ENTER(ret, 1, call);
	CHECK_CONSUMED(ring, call);
	TAKE_CQE(ring, 1, call);
}

/* One NOP published, then io_uring_enter(fd, 4, 0, 0): 1 on a plain ring
 * (the kernel submits what is there, up to to_submit). */
static void submit_four_of_one(struct io_uring *ring)
{
	const char *call = "io_uring_enter(fd, 4, 0, 0) with 1 SQE";
	int ret;

	publish_nop(ring, 2);
	ret = enter(ring, 4, 0, 0);
	CHECK_ENTER(ret, 1, call);
	CHECK_CONSUMED(ring, call);
	ret = enter(ring, 0, 1, IORING_ENTER_GETEVENTS);
	CHECK_ENTER(ret, 0, "io_uring_enter(fd, 0, 1, GETEVENTS)");
	TAKE_CQE(ring, 2, call);
}

static void nothing_to_do(struct io_uring *ring)
{
	int ret = enter(ring, 0, 0, 0);

	CHECK_ENTER(ret, 0, "io_uring_enter(fd, 0, 0, 0)");
}

struct step {
	const char *name;
	void (*run)(struct io_uring *ring);
	int idle;
};

int main(int argc, char **argv)
{
	static const struct step steps[] = {
		{ "enter(1, 1, GETEVENTS), no pause", submit_and_wait_one, 0 },
		{ "enter(1, 1, GETEVENTS), SQ thread idle", submit_and_wait_one, 1 },
		{ "enter(4, 0, 0) with 1 SQE, no pause", submit_four_of_one, 0 },
		{ "enter(4, 0, 0) with 1 SQE, SQ thread idle", submit_four_of_one, 1 },
		{ "enter(0, 0, 0), SQ thread idle", nothing_to_do, 1 },
	};
	int transparent = expect_transparent(argc, argv);
	unsigned i;

	if (transparent)
		check_unprivileged();
	/* Each step on a ring of its own: a failed step leaves its ring in a
	 * state the next step should not inherit. */
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct io_uring ring;
		int ret;

		T_STEP("%s", steps[i].name);
		ret = io_uring_queue_init(8, &ring, 0);
		skip_if_no_io_uring(ret);
		CHECK_MSG(ret == 0, "setup = %d (%s)", ret, strerror(-ret));
		CHECK_RING_MODE(&ring, transparent);
		if (steps[i].idle)
			pause_until_idle(&ring, transparent);
		steps[i].run(&ring);
		io_uring_queue_exit(&ring);
	}
	if (failures)
		T_FAIL("%d of %zu steps broke plain-ring behaviour (listed above)", failures,
		     sizeof(steps) / sizeof(steps[0]));
	printf("enter: ok\n");
	return 0;
}
