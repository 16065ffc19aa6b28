/* SPDX-License-Identifier: MIT */
/*
 * Links, drain, timeouts, cancellation and multishot poll.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <poll.h>
#include <time.h>

static void queue_read_ud(struct io_uring *ring, int fd, void *buf, unsigned len,
		       __u64 ud, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_read(sqe, fd, buf, len, 0);
	io_uring_sqe_set_data64(sqe, ud);
	sqe->flags |= (__u8)sqe_flags;
}

static void queue_poll(struct io_uring *ring, int fd, __u64 ud)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_poll_add(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, ud);
}

static void write_byte(int fd)
{
	if (write(fd, "x", 1) != 1)
		say("!! write to the pipe: %s", strerror(errno));
}

/*
 * Queues a link timeout of *ts (which must last until the submit) as ud
 * after the linked request already queued, submits both and shows their
 * CQEs.
 */
static void submit_link_timeout(struct io_uring *ring,
				struct __kernel_timespec *ts, __u64 ud)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_link_timeout(sqe, ts, 0);
	io_uring_sqe_set_data64(sqe, ud);
	show_ret("submit", io_uring_submit(ring));
	show_cqes(ring, 2, 2000, NULL);
}

void sec_links_drain(void)
{
	struct __kernel_timespec ts;
	struct io_uring ring;
	char buf[16];
	int p[2], i;

	make_pipe(p);
	need(init_ring(&ring, 16, 0, "init 16"), "init");

	for (i = 0; i < 2; i++) {
		unsigned flag = i ? IOSQE_IO_HARDLINK : IOSQE_IO_LINK;
		__u64 ud = 0x11 + 0x10 * i;

		STEP(i ? "hardlink with a failing member" : "link with a failing member");
		say("-- %s: nop -> read(fd -1) -> nop", i ? "IO_HARDLINK" : "IO_LINK");
		queue_nop(&ring, ud, flag);
		queue_read_ud(&ring, -1, buf, sizeof(buf), ud + 1, flag);
		queue_nop(&ring, ud + 2, 0);
		submit_show(&ring, "submit", 3);
	}

	STEP("link timeout that fires");
	say("-- read(empty pipe) -> link_timeout 20 ms");
	queue_read_ud(&ring, p[0], buf, sizeof(buf), 0x31, IOSQE_IO_LINK);
	ts = t_timeout_ms(20);
	submit_link_timeout(&ring, &ts, 0x32);

	STEP("link timeout that does not fire");
	say("-- nop -> link_timeout 5 s");
	queue_nop(&ring, 0x41, IOSQE_IO_LINK);
	ts = t_timeout_ms(5000);
	submit_link_timeout(&ring, &ts, 0x42);

	STEP("drain");
	say("-- poll(pipe) ; nop DRAIN ; nop, then a write to the pipe");
	queue_poll(&ring, p[0], 0x61);
	queue_nop(&ring, 0x62, IOSQE_IO_DRAIN);
	queue_nop(&ring, 0x63, 0);
	show_ret("submit", io_uring_submit(&ring));
	say("cq_ready before the write = %u", io_uring_cq_ready(&ring));
	write_byte(p[1]);
	show_cqes(&ring, 3, 2000, NULL);
	if (read(p[0], buf, sizeof(buf)) != 1)
		say("!! draining the pipe failed");

	STEP("CQE_SKIP_SUCCESS");
	say("-- CQE_SKIP_SUCCESS on a NOP and on a failing read");
	queue_nop(&ring, 0x51, IOSQE_CQE_SKIP_SUCCESS);
	queue_read_ud(&ring, -1, buf, sizeof(buf), 0x52, IOSQE_CQE_SKIP_SUCCESS);
	queue_nop(&ring, 0x53, 0);
	submit_show(&ring, "submit", 2);

	STEP("drain after CQE_SKIP_SUCCESS");
	say("-- nop DRAIN ; nop, on a ring that has used CQE_SKIP_SUCCESS");
	queue_nop(&ring, 0x71, IOSQE_IO_DRAIN);
	queue_nop(&ring, 0x72, 0);
	show_ret("submit", io_uring_submit(&ring));
	show_ret("sq_ready", io_uring_sq_ready(&ring));
	submit_show(&ring, "submit", 2);

	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
}

static void queue_timeout(struct io_uring *ring, struct __kernel_timespec *ts,
			  unsigned count, unsigned flags, __u64 ud,
			  unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_timeout(sqe, ts, count, flags);
	io_uring_sqe_set_data64(sqe, ud);
	sqe->flags |= (__u8)sqe_flags;
}

/* A timeout (count 0, @flags, @ud), submitted: "submit = <ret>". */
static void submit_timeout(struct io_uring *ring, struct __kernel_timespec *ts,
			   unsigned flags, __u64 ud)
{
	queue_timeout(ring, ts, 0, flags, ud, 0);
	show_ret("submit", io_uring_submit(ring));
}

void sec_timeouts(void)
{
	struct __kernel_timespec rel, far, abs_ts, upd;
	struct io_uring ring;
	struct timespec now;

	need(init_ring(&ring, 16, 0, "init 16"), "init");

	STEP("relative timeout");
	say("-- relative timeout 20 ms");
	rel = t_timeout_ms(20);
	submit_timeout(&ring, &rel, 0, 0x11);
	show_cqes(&ring, 1, 2000, NULL);

	STEP("count timeout");
	say("-- timeout 10 s with count 2, then 2 NOPs");
	far = t_timeout_ms(10000);
	queue_timeout(&ring, &far, 2, 0, 0x21, 0);
	queue_nop(&ring, 0x22, 0);
	queue_nop(&ring, 0x23, 0);
	show_ret("submit", io_uring_submit(&ring));
	show_cqes(&ring, 3, 2000, NULL);

	STEP("absolute timeout");
	say("-- absolute timeout, now + 20 ms (CLOCK_MONOTONIC)");
	clock_gettime(CLOCK_MONOTONIC, &now);
	abs_ts.tv_sec = now.tv_sec;
	abs_ts.tv_nsec = now.tv_nsec + 20000000L;
	if (abs_ts.tv_nsec >= 1000000000L) {
		abs_ts.tv_sec++;
		abs_ts.tv_nsec -= 1000000000L;
	}
	submit_timeout(&ring, &abs_ts, IORING_TIMEOUT_ABS, 0x31);
	show_cqes(&ring, 1, 2000, NULL);

	STEP("timeout remove");
	say("-- timeout 10 s, then timeout_remove");
	submit_timeout(&ring, &far, 0, 0x41);
	queue_op(&ring, 0x42, io_uring_prep_timeout_remove, 0x41, 0);
	show_ret("submit remove", io_uring_submit(&ring));
	show_cqes(&ring, 2, 2000, NULL);

	STEP("timeout update");
	say("-- timeout 10 s, then timeout_update to 20 ms");
	submit_timeout(&ring, &far, 0, 0x51);
	upd = t_timeout_ms(20);
	queue_op(&ring, 0x52, io_uring_prep_timeout_update, &upd, 0x51, 0);
	show_ret("submit update", io_uring_submit(&ring));
	show_cqes(&ring, 2, 2000, NULL);

	STEP("remove of an unknown timeout");
	say("-- timeout_remove and timeout_update of an unknown timeout");
	queue_op(&ring, 0x61, io_uring_prep_timeout_remove, 0x999, 0);
	queue_op(&ring, 0x62, io_uring_prep_timeout_update, &upd, 0x999, 0);
	submit_show(&ring, "submit", 2);

	STEP("ETIME_SUCCESS in a link");
	say("-- timeout 20 ms ETIME_SUCCESS -> nop");
	rel = t_timeout_ms(20);
	queue_timeout(&ring, &rel, 0, IORING_TIMEOUT_ETIME_SUCCESS, 0x71,
		      IOSQE_IO_LINK);
	queue_nop(&ring, 0x72, 0);
	show_ret("submit", io_uring_submit(&ring));
	show_cqes(&ring, 2, 2000, NULL);

	STEP("bad timeout flags");
	say("-- timeout with unknown flags");
	queue_timeout(&ring, &rel, 0, 1u << 30, 0x81, 0);
	submit_show(&ring, "submit", 1);
	io_uring_queue_exit(&ring);
}

static void queue_cancel(struct io_uring *ring, __u64 target, int flags,
			 __u64 ud)
{
	struct io_uring_sqe *sqe = sqe_of(ring);

	io_uring_prep_cancel64(sqe, target, flags);
	io_uring_sqe_set_data64(sqe, ud);
}

/* Submits what is queued ("submit = <ret>"), then an ASYNC_CANCEL of
 * @target with @flags (user_data @ud) and shows @expected CQEs. */
static void submit_then_cancel(struct io_uring *ring, __u64 target,
			       int flags, __u64 ud, unsigned expected)
{
	show_ret("submit", io_uring_submit(ring));
	queue_cancel(ring, target, flags, ud);
	submit_show(ring, "submit cancel", expected);
}

void sec_cancel(void)
{
	struct io_uring_sync_cancel_reg reg;
	struct io_uring ring;
	int a[2], b[2];
	char buf[16];

	make_pipe(a);
	make_pipe(b);
	need(init_ring(&ring, 16, 0, "init 16"), "init");

	STEP("cancel by user_data");
	say("-- poll, cancel by user_data");
	queue_poll(&ring, a[0], 0x11);
	submit_then_cancel(&ring, 0x11, 0, 0x12, 2);

	STEP("cancel any");
	say("-- two polls, cancel ANY");
	queue_poll(&ring, a[0], 0x21);
	queue_poll(&ring, b[0], 0x22);
	submit_then_cancel(&ring, 0, IORING_ASYNC_CANCEL_ANY, 0x23, 3);

	STEP("cancel by fd");
	say("-- polls on two pipes, cancel by fd, then by fd ALL");
	queue_poll(&ring, a[0], 0x31);
	queue_poll(&ring, a[0], 0x32);
	queue_poll(&ring, b[0], 0x33);
	show_ret("submit", io_uring_submit(&ring));
	queue_op(&ring, 0x34, io_uring_prep_cancel_fd, a[0], 0);
	submit_show(&ring, "submit cancel fd", 2);
	queue_op(&ring, 0x35, io_uring_prep_cancel_fd, a[0],
		 IORING_ASYNC_CANCEL_ALL);
	submit_show(&ring, "submit cancel fd ALL", 2);
	queue_cancel(&ring, 0x33, 0, 0x36);
	submit_show(&ring, "submit cancel", 2);

	STEP("cancel of nothing");
	say("-- cancel an unknown user_data");
	queue_cancel(&ring, 0x999, 0, 0x41);
	submit_show(&ring, "submit", 1);

	STEP("cancel a read");
	say("-- read(empty pipe), cancel by user_data");
	queue_op(&ring, 0x51, io_uring_prep_read, a[0], buf, sizeof(buf), 0);
	submit_then_cancel(&ring, 0x51, 0, 0x52, 2);

	STEP("sync cancel");
	say("-- poll, io_uring_register_sync_cancel");
	queue_poll(&ring, a[0], 0x61);
	show_ret("submit", io_uring_submit(&ring));
	memset(&reg, 0, sizeof(reg));
	reg.addr = 0x61;
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	show_ret("register_sync_cancel", io_uring_register_sync_cancel(&ring, &reg));
	show_cqes(&ring, 1, 1000, NULL);
	reg.addr = 0x999;
	show_ret("register_sync_cancel (unknown)",
		 io_uring_register_sync_cancel(&ring, &reg));

	io_uring_queue_exit(&ring);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

void sec_multishot_poll(void)
{
	struct io_uring ring;
	int p[2], i;

	make_pipe(p);
	need(init_ring(&ring, 16, 0, "init 16"), "init");

	STEP("multishot poll");
	say("-- multishot poll on a pipe, 3 writes, then poll_remove");
	queue_op(&ring, 0x11, io_uring_prep_poll_multishot, p[0], POLLIN);
	show_ret("submit", io_uring_submit(&ring));
	say("cq_ready before any write = %u", io_uring_cq_ready(&ring));
	for (i = 0; i < 3; i++) {
		write_byte(p[1]);
		show_cqes(&ring, 1, 2000, NULL);
	}
	queue_op(&ring, 0x12, io_uring_prep_poll_remove, 0x11);
	submit_show(&ring, "submit poll_remove", 2);

	STEP("poll update");
	say("-- multishot poll, poll_update to one-shot, a write");
	queue_op(&ring, 0x21, io_uring_prep_poll_multishot, p[0], POLLIN);
	show_ret("submit", io_uring_submit(&ring));
	/* The pipe still holds the 3 bytes: readable at once. */
	show_cqes(&ring, 1, 2000, NULL);
	queue_op(&ring, 0x23, io_uring_prep_poll_update, 0x21, 0x22, POLLIN,
		 IORING_POLL_UPDATE_USER_DATA | IORING_POLL_UPDATE_EVENTS);
	submit_show(&ring, "submit poll_update", 2);
	queue_op(&ring, 0x24, io_uring_prep_poll_remove, 0x22);
	submit_show(&ring, "submit poll_remove", 2);

	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
}
