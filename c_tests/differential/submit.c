/* SPDX-License-Identifier: MIT */
/*
 * Submit and wait variants, and batches the kernel stops at a bad SQE.
 *
 * On a plain ring a NOP completes while it is submitted, so how many CQEs
 * are ready after each call is fixed. Calls without a timeout are only
 * made where their CQEs are already posted or certain to be; the section
 * watchdog bounds them anyway.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <poll.h>
#include <signal.h>

static void show_counts(struct io_uring *ring)
{
	say("sq_ready=%u sq_space_left=%u cq_ready=%u",
	    io_uring_sq_ready(ring), io_uring_sq_space_left(ring),
	    io_uring_cq_ready(ring));
}

/* Waits that return a CQE pointer: print the result and the CQE, and
 * mark it seen when there is one. */
static void show_wait(struct io_uring *ring, const char *what, int ret,
		      struct io_uring_cqe **cqep)
{
	/* Read through the pointer: the wait (an argument) has run by now. */
	struct io_uring_cqe *cqe = *cqep;

	show_ret(what, ret);
	show_cqe("  returned", cqe);
	if (cqe && ret >= 0)
		io_uring_cqe_seen(ring, cqe);
}

/*
 * Calls wait (io_uring_wait_cqes or io_uring_submit_and_wait_timeout) for
 * wait_nr CQEs with a timeout of ms milliseconds (< 0: none) and prints
 * its result and the CQE it returned.
 */
static void show_timed(struct io_uring *ring, const char *what,
		       int (*wait)(struct io_uring *, struct io_uring_cqe **,
				   unsigned int, struct __kernel_timespec *,
				   sigset_t *),
		       unsigned int wait_nr, long ms, sigset_t *sigmask)
{
	struct __kernel_timespec ts = t_timeout_ms(ms < 0 ? 0 : ms);
	struct io_uring_cqe *cqe = NULL;

	show_ret(what, wait(ring, &cqe, wait_nr, ms < 0 ? NULL : &ts, sigmask));
	show_cqe("  returned", cqe);
}

void sec_submit_wait(void)
{
	struct io_uring_cqe *cqes[16];
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts;
	struct io_uring ring;
	sigset_t sigmask;
	unsigned n, i;

	sigemptyset(&sigmask);
	need(init_ring(&ring, 16, 0, "init 16"), "init");

	STEP("submit, wait_cqe, peek_cqe");
	say("-- submit 2, wait_cqe, peek_cqe");
	show_ret("submit (nothing queued)", io_uring_submit(&ring));
	queue_nop(&ring, 0x11, 0);
	queue_nop(&ring, 0x12, 0);
	show_counts(&ring);
	show_ret("submit", io_uring_submit(&ring));
	show_counts(&ring);
	cqe = NULL;
	show_wait(&ring, "wait_cqe", io_uring_wait_cqe(&ring, &cqe), &cqe);
	cqe = NULL;
	show_wait(&ring, "peek_cqe", io_uring_peek_cqe(&ring, &cqe), &cqe);
	cqe = NULL;
	show_wait(&ring, "peek_cqe (empty)", io_uring_peek_cqe(&ring, &cqe),
		  &cqe);

	STEP("submit_and_wait, wait_cqe_nr, peek_batch");
	say("-- submit_and_wait 3, wait_cqe_nr 3, peek_batch_cqe");
	for (i = 0; i < 3; i++)
		queue_nop(&ring, 0x21 + i, 0);
	show_ret("submit_and_wait(3)", io_uring_submit_and_wait(&ring, 3));
	show_counts(&ring);
	cqe = NULL;
	show_ret("wait_cqe_nr(3)", io_uring_wait_cqe_nr(&ring, &cqe, 3));
	show_cqe("  returned", cqe);
	n = io_uring_peek_batch_cqe(&ring, cqes, 2);
	say("peek_batch_cqe(2) = %u", n);
	for (i = 0; i < n; i++)
		show_cqe("  batch", cqes[i]);
	io_uring_cq_advance(&ring, n);
	n = io_uring_peek_batch_cqe(&ring, cqes, 16);
	say("peek_batch_cqe(16) = %u", n);
	for (i = 0; i < n; i++)
		show_cqe("  batch", cqes[i]);
	io_uring_cq_advance(&ring, n);
	say("peek_batch_cqe(16) on an empty CQ = %u",
	    io_uring_peek_batch_cqe(&ring, cqes, 16));

	STEP("wait_cqes");
	say("-- wait_cqes with and without timeout, sigmask");
	queue_nop(&ring, 0x31, 0);
	queue_nop(&ring, 0x32, 0);
	show_ret("submit", io_uring_submit(&ring));
	show_timed(&ring, "wait_cqes(2, no timeout)",
		   io_uring_wait_cqes, 2, -1, NULL);
	show_cqes(&ring, 2, 1000, NULL);
	queue_nop(&ring, 0x33, 0);
	show_ret("submit", io_uring_submit(&ring));
	show_timed(&ring, "wait_cqes(2, 20 ms), 1 ready",
		   io_uring_wait_cqes, 2, 20, NULL);
	show_timed(&ring, "wait_cqes(1, 20 ms, sigmask), 1 ready",
		   io_uring_wait_cqes, 1, 20, &sigmask);
	show_timed(&ring, "wait_cqes(1, no timeout, sigmask), 1 ready",
		   io_uring_wait_cqes, 1, -1, &sigmask);
	show_cqes(&ring, 1, 1000, NULL);

	STEP("wait_cqe_timeout");
	say("-- wait_cqe_timeout");
	ts = t_timeout_ms(10);
	cqe = NULL;
	show_wait(&ring, "wait_cqe_timeout(10 ms), empty",
		  io_uring_wait_cqe_timeout(&ring, &cqe, &ts), &cqe);
	queue_nop(&ring, 0x41, 0);
	show_ret("submit", io_uring_submit(&ring));
	ts = t_timeout_ms(1000);
	cqe = NULL;
	show_wait(&ring, "wait_cqe_timeout(1 s), 1 ready",
		  io_uring_wait_cqe_timeout(&ring, &cqe, &ts), &cqe);

	STEP("submit_and_wait_timeout");
	say("-- submit_and_wait_timeout");
	queue_nop(&ring, 0x51, 0);
	queue_nop(&ring, 0x52, 0);
	show_timed(&ring, "submit_and_wait_timeout(2, 1 s), 2 NOPs",
		   io_uring_submit_and_wait_timeout, 2, 1000, NULL);
	show_cqes(&ring, 2, 1000, NULL);
	queue_nop(&ring, 0x53, 0);
	show_timed(&ring, "submit_and_wait_timeout(3, 20 ms), 1 NOP",
		   io_uring_submit_and_wait_timeout, 3, 20, NULL);
	show_cqes(&ring, 1, 1000, NULL);
	queue_nop(&ring, 0x54, 0);
	show_timed(&ring, "submit_and_wait_timeout(1, 1 s, sigmask)",
		   io_uring_submit_and_wait_timeout, 1, 1000, &sigmask);
	show_cqes(&ring, 1, 1000, NULL);
	queue_nop(&ring, 0x55, 0);
	show_timed(&ring, "submit_and_wait_timeout(1, no timeout)",
		   io_uring_submit_and_wait_timeout, 1, -1, NULL);
	show_cqes(&ring, 1, 1000, NULL);
	show_timed(&ring, "submit_and_wait_timeout(1, 10 ms), nothing queued",
		   io_uring_submit_and_wait_timeout, 1, 10, NULL);

	STEP("get_events, __io_uring_get_cqe, io_uring_enter");
	say("-- get_events, submit_and_get_events, __io_uring_get_cqe, "
	    "io_uring_enter");
	show_ret("get_events", io_uring_get_events(&ring));
	queue_nop(&ring, 0x61, 0);
	queue_nop(&ring, 0x62, 0);
	show_ret("submit_and_get_events", io_uring_submit_and_get_events(&ring));
	show_counts(&ring);
	show_cqes(&ring, 2, 1000, NULL);
	cqe = NULL;
	show_ret("__io_uring_get_cqe(0, 0), empty",
		 __io_uring_get_cqe(&ring, &cqe, 0, 0, NULL));
	show_cqe("  returned", cqe);
	show_ret("io_uring_enter(0, 0, GETEVENTS)",
		 io_uring_enter((unsigned)ring.ring_fd, 0, 0,
				IORING_ENTER_GETEVENTS, NULL));
	io_uring_queue_exit(&ring);

	STEP("a full SQ");
	say("-- a full SQ");
	need(init_ring(&ring, 4, 0, "init 4"), "init");
	for (i = 0; i < 4; i++)
		queue_nop(&ring, 0x71 + i, 0);
	say("fifth get_sqe: %s", io_uring_get_sqe(&ring) ? "an SQE" : "NULL");
	show_counts(&ring);
	show_ret("submit", io_uring_submit(&ring));
	show_counts(&ring);
	show_cqes(&ring, 4, 1000, NULL);
	show_ret("__io_uring_sqring_wait", __io_uring_sqring_wait(&ring));
	io_uring_queue_exit(&ring);
}

/*
 * A completion that arrives as task work (a poll woken by a write): when
 * it reaches the CQ depends on the ring's mode and on which calls enter
 * the kernel.
 */
static void task_work_on(unsigned flags, const char *name)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts;
	struct io_uring ring;
	char what[96], c;
	int p[2];

	say("-- task work, %s", name);
	snprintf(what, sizeof(what), "init %s", name);
	if (init_ring(&ring, 8, flags, what) < 0)
		return;
	make_pipe(p);
	for (int round = 0; round < 3; round++) {
		queue_op(&ring, 0x10 + (unsigned)round, io_uring_prep_poll_add,
			 p[0], POLLIN);
		show_ret("submit poll", io_uring_submit(&ring));
		if (write(p[1], "x", 1) != 1)
			say("!! write to the pipe failed");
		say("after the write: cq_ready=%u sq TASKRUN=%d",
		    io_uring_cq_ready(&ring),
		    !!(*ring.sq.kflags & IORING_SQ_TASKRUN));
		cqe = NULL;
		if (round == 0) {
			show_wait(&ring, "peek_cqe", io_uring_peek_cqe(&ring, &cqe),
				  &cqe);
			show_ret("get_events", io_uring_get_events(&ring));
			say("cq_ready=%u", io_uring_cq_ready(&ring));
		} else if (round == 1) {
			ts = t_timeout_ms(1000);
			show_wait(&ring, "wait_cqe_timeout(1 s)",
				  io_uring_wait_cqe_timeout(&ring, &cqe, &ts), &cqe);
		} else {
			queue_nop(&ring, 0x20, 0);
			show_ret("submit a NOP", io_uring_submit(&ring));
			say("cq_ready=%u", io_uring_cq_ready(&ring));
			show_ret("submit_and_get_events (nothing queued)",
				 io_uring_submit_and_get_events(&ring));
			say("cq_ready=%u", io_uring_cq_ready(&ring));
		}
		show_cqes(&ring, round == 2 ? 2 : 0, 1000, NULL);
		if (read(p[0], &c, 1) != 1)
			say("!! read from the pipe failed");
	}
	close(p[0]);
	close(p[1]);
	io_uring_queue_exit(&ring);
}

void sec_task_work(void)
{
	task_work_on(0, "plain");
	task_work_on(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		     "COOP_TASKRUN|TASKRUN_FLAG");
	task_work_on(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		     "SINGLE_ISSUER|DEFER_TASKRUN");
	task_work_on(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			     IORING_SETUP_TASKRUN_FLAG,
		     "SINGLE_ISSUER|DEFER_TASKRUN|TASKRUN_FLAG");
}

/* Queues nop, bad, nop, nop (bad at @bad_at) with user_data base+1.. */
static void queue_batch(struct io_uring *ring, __u64 base, int bad_at,
			unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if ((int)i == bad_at)
			queue_bad(ring, base + i + 1, 0);
		else
			queue_nop(ring, base + i + 1, 0);
	}
}

/*
 * After a batch of 3 whose first SQE is bad: the CQEs of what the kernel
 * took (all 3 with SUBMIT_ALL, else the bad one), then a submit of the
 * rest (none left with SUBMIT_ALL, else 2).
 */
static void show_stopped_batch(struct io_uring *ring, unsigned all)
{
	show_cqes(ring, all ? 3 : 1, 200, NULL);
	submit_show(ring, "submit", all ? 0 : 2);
}

static void mid_batch_on(unsigned flags, const char *name)
{
	/* With SUBMIT_ALL the kernel does not stop at the bad SQE. */
	unsigned all = (flags & IORING_SETUP_SUBMIT_ALL) != 0;
	struct io_uring ring;
	char what[96];

	say("-- %s", name);
	snprintf(what, sizeof(what), "init %s", name);
	if (init_ring(&ring, 16, flags, what) < 0)
		return;

	STEP("submit, second of 4 bad");
	queue_batch(&ring, 0x100, 1, 4);
	show_ret("submit, second of 4 bad", io_uring_submit(&ring));
	show_counts(&ring);
	show_ret("submit again", io_uring_submit(&ring));
	show_counts(&ring);
	show_cqes(&ring, 4, 1000, NULL);

	STEP("submit_and_wait(3), first of 3 bad");
	queue_batch(&ring, 0x200, 0, 3);
	show_ret("submit_and_wait(3), first of 3 bad",
		 io_uring_submit_and_wait(&ring, 3));
	show_counts(&ring);
	show_stopped_batch(&ring, all);

	STEP("submit_and_wait_timeout(3, 1 s), first of 4 bad");
	queue_batch(&ring, 0x300, 0, 4);
	show_timed(&ring, "submit_and_wait_timeout(3, 1 s), first of 4 bad",
		   io_uring_submit_and_wait_timeout, 3, 1000, NULL);
	show_counts(&ring);
	submit_show(&ring, "submit", 4);

	STEP("submit_and_wait_timeout(1, no timeout), second of 4 bad");
	queue_batch(&ring, 0x400, 1, 4);
	show_timed(&ring, "submit_and_wait_timeout(1, no timeout), second of 4 bad",
		   io_uring_submit_and_wait_timeout, 1, -1, NULL);
	show_counts(&ring);
	show_cqes(&ring, 4, 1000, NULL);
	show_counts(&ring);

	STEP("wait_cqes(2, 1 s) after a partial submit");
	queue_batch(&ring, 0x500, 0, 3);
	show_ret("submit, first of 3 bad", io_uring_submit(&ring));
	show_timed(&ring, "wait_cqes(2, 200 ms)", io_uring_wait_cqes, 2, 200,
		   NULL);
	show_counts(&ring);
	show_stopped_batch(&ring, all);

	STEP("a bad SQE inside a link");
	queue_nop(&ring, 0x601, IOSQE_IO_LINK);
	queue_bad(&ring, 0x602, IOSQE_IO_LINK);
	queue_nop(&ring, 0x603, 0);
	queue_nop(&ring, 0x604, 0);
	show_ret("submit, link nop->bad->nop, nop", io_uring_submit(&ring));
	show_counts(&ring);
	submit_show(&ring, "submit again", 4);
	io_uring_queue_exit(&ring);
}

void sec_mid_batch_failure(void)
{
	mid_batch_on(0, "plain");
	mid_batch_on(IORING_SETUP_SUBMIT_ALL, "SUBMIT_ALL");
	mid_batch_on(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		     "SINGLE_ISSUER|DEFER_TASKRUN");
	mid_batch_on(IORING_SETUP_COOP_TASKRUN, "COOP_TASKRUN");
}

/*
 * io_uring_submit_and_wait_timeout(3, no timeout) with the first of 4 SQEs
 * bad: liburing submits the rest and returns once they completed; then
 * io_uring_wait_cqe without a timeout for each CQE. Bounded only by the
 * section's watchdog.
 */
void sec_untimed_wait_after_bad_sqe(void)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	unsigned i;
	int ret;

	need(init_ring(&ring, 8, 0, "init 8"), "init");
	STEP("submit_and_wait_timeout(3, no timeout), first of 4 bad");
	queue_batch(&ring, 0x10, 0, 4);
	show_timed(&ring, "submit_and_wait_timeout(3, no timeout), first of 4 bad",
		   io_uring_submit_and_wait_timeout, 3, -1, NULL);
	show_counts(&ring);
	STEP("wait_cqe, no timeout, for each of the 4");
	for (i = 0; i < 4; i++) {
		cqe = NULL;
		ret = io_uring_wait_cqe(&ring, &cqe);
		show_wait(&ring, "wait_cqe", ret, &cqe);
	}
	io_uring_queue_exit(&ring);
}
