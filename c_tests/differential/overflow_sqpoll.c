/* SPDX-License-Identifier: MIT */
/*
 * A CQ that overflows (the kernel keeps the extra CQEs: NODROP), and
 * SQPOLL rings (on rsuring with RSURING_SQPOLL_PERCPU=1, shared ones).
 *
 * On an SQPOLL ring the poll thread may take SQEs before the library
 * counts them, so submit counts are printed as a range; the CQEs are not.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

#include <time.h>

static void show_overflow(struct io_uring *ring)
{
	say("sq CQ_OVERFLOW=%d cq_has_overflow=%d koverflow=%u cq_ready=%u",
	    !!(*ring->sq.kflags & IORING_SQ_CQ_OVERFLOW),
	    io_uring_cq_has_overflow(ring), *ring->cq.koverflow,
	    io_uring_cq_ready(ring));
}

static void fill(struct io_uring *ring, __u64 base, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		queue_nop(ring, base + i, 0);
	show_ret("submit", io_uring_submit(ring));
}

/* "<what> = <n>" for io_uring_peek_batch_cqe of up to 16, the CQEs, then
 * they are marked seen and the overflow state printed. */
static void peek_batch_show(struct io_uring *ring, const char *what)
{
	struct io_uring_cqe *cqes[16];
	unsigned n, i;

	n = io_uring_peek_batch_cqe(ring, cqes, 16);
	say("%s = %u", what, n);
	for (i = 0; i < n; i++)
		show_cqe("  batch", cqes[i]);
	io_uring_cq_advance(ring, n);
	show_overflow(ring);
}

static void overflow_on(unsigned flags, const char *name)
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret;

	STEP(name);
	say("-- overflow, %s: 4-entry CQ, 3 batches of 4 NOPs", name);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE | flags;
	p.cq_entries = 4;
	ret = io_uring_queue_init_params(4, &ring, &p);
	show_ret("init", ret);
	if (ret < 0)
		return;
	say("features NODROP=%d", !!(p.features & IORING_FEAT_NODROP));
	fill(&ring, 0x10, 4);
	fill(&ring, 0x20, 4);
	show_overflow(&ring);
	fill(&ring, 0x30, 4);
	show_overflow(&ring);
	peek_batch_show(&ring, "peek_batch_cqe(16)");
	peek_batch_show(&ring, "peek_batch_cqe(16), CQ empty, overflow pending");
	show_cqes(&ring, 4, 1000, NULL);
	show_overflow(&ring);

	say("-- overflow, %s: wait_cqe_timeout reaps all", name);
	fill(&ring, 0x40, 4);
	fill(&ring, 0x50, 4);
	show_cqes(&ring, 8, 2000, NULL);
	show_overflow(&ring);
	io_uring_queue_exit(&ring);
}

void sec_overflow(void)
{
	overflow_on(0, "plain");
	overflow_on(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		    "SINGLE_ISSUER|DEFER_TASKRUN");
	overflow_on(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		    "COOP_TASKRUN|TASKRUN_FLAG");
}

static int sqpoll_ring(struct io_uring *ring, unsigned flags, unsigned cpu,
		       int wq_fd, const char *what)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | flags;
	p.sq_thread_idle = 50;
	p.sq_thread_cpu = cpu;
	p.wq_fd = (__u32)wq_fd;
	ret = io_uring_queue_init_params(8, ring, &p);
	show_ret(what, ret);
	say("params: flags=0x%x sq_thread_cpu=%u sq_thread_idle=%u "
	    "wq_fd_kept=%d",
	    p.flags, p.sq_thread_cpu, p.sq_thread_idle, p.wq_fd == (__u32)wq_fd);
	if (ret == 0)
		say("ring: flags=0x%x", DIFF_RING_FLAGS(ring->flags));
	return ret;
}

static void nops(struct io_uring *ring, __u64 base, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		queue_nop(ring, base + i, 0);
	show_ret_in("submit", io_uring_submit(ring), 0, n);
	show_cqes(ring, n, 2000, NULL);
	wait_sq_head(ring);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void sec_sqpoll(void)
{
	struct io_uring a, b, c, d;
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts;
	unsigned char buf[16];
	struct io_uring_sqe *sqe;
	int fd;

	STEP("SQPOLL ring");
	say("-- SQPOLL ring: NOPs, an idle poller woken, a failing SQE");
	need(sqpoll_ring(&a, 0, 0, -1, "init SQPOLL"), "init");
	nops(&a, 0x10, 4);
	sleep_ms(200); /* the poller goes idle after 50 ms */
	nops(&a, 0x20, 1);
	queue_nop(&a, 0x31, 0);
	queue_bad(&a, 0x32, 0);
	queue_nop(&a, 0x33, 0);
	show_ret_in("submit nop, bad, nop", io_uring_submit(&a), 0, 3);
	show_cqes(&a, 3, 2000, NULL);
	wait_sq_head(&a);
	show_ret_in("__io_uring_sqring_wait", __io_uring_sqring_wait(&a), 0, 8);

	STEP("SQPOLL waits");
	say("-- SQPOLL: wait_cqes, submit_and_wait_timeout");
	queue_nop(&a, 0x41, 0);
	queue_nop(&a, 0x42, 0);
	show_ret_in("submit", io_uring_submit(&a), 0, 2);
	ts = t_timeout_ms(2000);
	cqe = NULL;
	show_ret("wait_cqes(2, 2 s)", io_uring_wait_cqes(&a, &cqe, 2, &ts, NULL));
	show_cqe("  returned", cqe);
	show_cqes(&a, 2, 1000, NULL);
	/* Else the submit below may count 0x41 and 0x42 as pending too. */
	wait_sq_head(&a);
	queue_nop(&a, 0x43, 0);
	ts = t_timeout_ms(2000);
	cqe = NULL;
	show_ret_in("submit_and_wait_timeout(1, 2 s)",
		    io_uring_submit_and_wait_timeout(&a, &cqe, 1, &ts, NULL), 0,
		    1);
	show_cqes(&a, 1, 1000, NULL);
	wait_sq_head(&a);

	STEP("SQPOLL registered file");
	say("-- SQPOLL: a registered file");
	fd = make_pattern_file(4096);
	show_ret("register_files", io_uring_register_files(&a, &fd, 1));
	sqe = sqe_of(&a);
	io_uring_prep_read(sqe, 0, buf, sizeof(buf), 8);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, 0x51);
	show_ret_in("submit", io_uring_submit(&a), 0, 1);
	show_cqes(&a, 1, 2000, NULL);
	say("data ok = %d", buf[0] == pattern_at(8) && buf[15] == pattern_at(23));
	show_ret("unregister_files", io_uring_unregister_files(&a));
	close(fd);

	STEP("SQPOLL rings on CPU 0");
	say("-- two SQPOLL|SQ_AFF rings on CPU 0, used in turn");
	need(sqpoll_ring(&b, IORING_SETUP_SQ_AFF, 0, -1, "init CPU 0 (1)"),
	     "init");
	need(sqpoll_ring(&c, IORING_SETUP_SQ_AFF, 0, -1, "init CPU 0 (2)"),
	     "init");
	nops(&b, 0x60, 2);
	nops(&c, 0x70, 2);
	nops(&b, 0x80, 1);
	io_uring_queue_exit(&b);
	nops(&c, 0x90, 1);

	STEP("SQPOLL ATTACH_WQ");
	say("-- an SQPOLL ring the application attaches itself");
	need(sqpoll_ring(&d, IORING_SETUP_ATTACH_WQ, 0, a.ring_fd,
			 "init ATTACH_WQ to the first"),
	     "init");
	nops(&d, 0xa0, 2);
	nops(&a, 0xb0, 1);
	io_uring_queue_exit(&a);
	nops(&d, 0xc0, 1);
	io_uring_queue_exit(&d);
	io_uring_queue_exit(&c);
}
