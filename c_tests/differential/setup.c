/* SPDX-License-Identifier: MIT */
/*
 * Ring setup: the flag matrix, and the other ways to make a ring.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

struct setup_case {
	const char *name;
	unsigned entries;
	unsigned flags;
	unsigned cq_entries;
	unsigned sq_thread_cpu;
};

static const struct setup_case matrix[] = {
	{ "plain", 8, 0, 0, 0 },
	{ "entries 5 (rounded up)", 5, 0, 0, 0 },
	{ "entries 0", 0, 0, 0, 0 },
	{ "entries 65536 (too many)", 65536, 0, 0, 0 },
	{ "CLAMP, entries 65536", 65536, IORING_SETUP_CLAMP, 0, 0 },
	{ "CQSIZE 64", 8, IORING_SETUP_CQSIZE, 64, 0 },
	{ "CQSIZE 4 < entries", 8, IORING_SETUP_CQSIZE, 4, 0 },
	{ "CQSIZE 0", 8, IORING_SETUP_CQSIZE, 0, 0 },
	{ "CQSIZE|CLAMP 1<<30", 8, IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP,
	  1u << 30, 0 },
	{ "SQE128", 8, IORING_SETUP_SQE128, 0, 0 },
	{ "CQE32", 8, IORING_SETUP_CQE32, 0, 0 },
	{ "SQE128|CQE32", 8, IORING_SETUP_SQE128 | IORING_SETUP_CQE32, 0, 0 },
	{ "SINGLE_ISSUER", 8, IORING_SETUP_SINGLE_ISSUER, 0, 0 },
	{ "SINGLE_ISSUER|DEFER_TASKRUN", 8,
	  IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, 0, 0 },
	{ "DEFER_TASKRUN alone", 8, IORING_SETUP_DEFER_TASKRUN, 0, 0 },
	{ "COOP_TASKRUN", 8, IORING_SETUP_COOP_TASKRUN, 0, 0 },
	{ "COOP_TASKRUN|TASKRUN_FLAG", 8,
	  IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG, 0, 0 },
	{ "TASKRUN_FLAG alone", 8, IORING_SETUP_TASKRUN_FLAG, 0, 0 },
	{ "SUBMIT_ALL", 8, IORING_SETUP_SUBMIT_ALL, 0, 0 },
	{ "R_DISABLED", 8, IORING_SETUP_R_DISABLED, 0, 0 },
	{ "IOPOLL", 8, IORING_SETUP_IOPOLL, 0, 0 },
	{ "SQPOLL", 8, IORING_SETUP_SQPOLL, 0, 0 },
	{ "SQPOLL|SQ_AFF cpu 0", 8, IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF,
	  0, 0 },
	{ "SQPOLL|SQ_AFF cpu 4096", 8,
	  IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF, 0, 4096 },
	{ "SQPOLL|SINGLE_ISSUER", 8,
	  IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER, 0, 0 },
	{ "SQPOLL|DEFER_TASKRUN|SINGLE_ISSUER", 8,
	  IORING_SETUP_SQPOLL | IORING_SETUP_DEFER_TASKRUN |
		  IORING_SETUP_SINGLE_ISSUER,
	  0, 0 },
	{ "SQPOLL|SQE128|CQE32", 8,
	  IORING_SETUP_SQPOLL | IORING_SETUP_SQE128 | IORING_SETUP_CQE32, 0,
	  0 },
	{ "SQ_AFF without SQPOLL", 8, IORING_SETUP_SQ_AFF, 0, 0 },
	{ "unknown flag 1<<30", 8, 1u << 30, 0, 0 },
};

static void show_params(const struct io_uring_params *p)
{
	say("params: flags=0x%x sq_entries=%u cq_entries=%u features=0x%x "
	    "sq_thread_cpu=%u sq_thread_idle=%u wq_fd=%u",
	    p->flags, p->sq_entries, p->cq_entries, p->features,
	    p->sq_thread_cpu, p->sq_thread_idle, p->wq_fd);
}

static void show_ring(struct io_uring *ring)
{
	say("ring: flags=0x%x features=0x%x sq.ring_entries=%u "
	    "sq.ring_mask=0x%x cq.ring_entries=%u cq.ring_mask=0x%x",
	    DIFF_RING_FLAGS(ring->flags), ring->features, ring->sq.ring_entries,
	    ring->sq.ring_mask, ring->cq.ring_entries, ring->cq.ring_mask);
	say("sq_space_left=%u sq_ready=%u cq_ready=%u",
	    io_uring_sq_space_left(ring), io_uring_sq_ready(ring),
	    io_uring_cq_ready(ring));
}

/* Three NOPs through the ring, reaped with a timeout. */
static void smoke(struct io_uring *ring)
{
	int ret;

	queue_nop(ring, 1, 0);
	queue_nop(ring, 2, 0);
	queue_nop(ring, 3, 0);
	if (ring->flags & IORING_SETUP_SQPOLL) {
		show_ret_in("submit", io_uring_submit(ring), 0, 3);
	} else if (ring->flags & IORING_SETUP_IOPOLL) {
		show_ret("submit", io_uring_submit(ring));
	} else {
		struct io_uring_cqe *cqes[8];
		unsigned n, i;

		ret = io_uring_submit_and_wait(ring, 3);
		show_ret("submit_and_wait(3)", ret);
		say("cq_ready=%u", io_uring_cq_ready(ring));
		/* The library's own walk of the CQ (CQE32 strides). */
		n = io_uring_peek_batch_cqe(ring, cqes, 8);
		say("peek_batch_cqe(8) = %u", n);
		for (i = 0; i < n; i++)
			show_cqe("  batch", cqes[i]);
		io_uring_cq_advance(ring, n);
	}
	show_cqes(ring,
		  ring->flags & (IORING_SETUP_SQPOLL | IORING_SETUP_IOPOLL) ? 3 : 0,
		  2000, NULL);
	wait_sq_head(ring);
}

void sec_setup_matrix(void)
{
	size_t i;

	for (i = 0; i < sizeof(matrix) / sizeof(matrix[0]); i++) {
		const struct setup_case *c = &matrix[i];
		struct io_uring_params p;
		struct io_uring ring;
		int ret;

		STEP(c->name);
		say("-- %s", c->name);
		memset(&p, 0, sizeof(p));
		p.flags = c->flags;
		p.cq_entries = c->cq_entries;
		p.sq_thread_cpu = c->sq_thread_cpu;
		if (c->flags & IORING_SETUP_SQPOLL)
			p.sq_thread_idle = 50;
		ret = io_uring_queue_init_params(c->entries, &ring, &p);
		show_ret("io_uring_queue_init_params", ret);
		show_params(&p);
		if (ret < 0)
			continue;
		show_ring(&ring);
		if (c->flags & IORING_SETUP_R_DISABLED) {
			/* liburing 2.3 does not export io_uring_enable_rings. */
			show_ret("register ENABLE_RINGS",
				 io_uring_register(ring.ring_fd,
						   IORING_REGISTER_ENABLE_RINGS,
						   NULL, 0));
		}
		smoke(&ring);
		show_ring(&ring);
		io_uring_queue_exit(&ring);
	}
}

void sec_setup_other(void)
{
	struct io_uring ring, other;
	struct io_uring_params p;
	int fd, ret;

	STEP("io_uring_setup + io_uring_queue_mmap");
	say("-- io_uring_setup + io_uring_queue_mmap");
	memset(&p, 0, sizeof(p));
	fd = io_uring_setup(8, &p);
	show_ret_in("io_uring_setup", fd, 0, 1 << 30);
	need(fd, "io_uring_setup");
	memset(&ring, 0, sizeof(ring));
	ret = io_uring_queue_mmap(fd, &p, &ring);
	show_ret("io_uring_queue_mmap", ret);
	need(ret, "io_uring_queue_mmap");
	say("ring: flags=0x%x sq.ring_entries=%u cq.ring_entries=%u "
	    "ring_fd_is_setup_fd=%d",
	    DIFF_RING_FLAGS(ring.flags), ring.sq.ring_entries, ring.cq.ring_entries,
	    ring.ring_fd == fd);
	/* liburing (2.3 and 2.15) leaves the SQ index array of a ring set up
	 * this way to the application; rsuring fills it. Fill it as a
	 * liburing application must (see NOTES.md). */
	for (unsigned i = 0; i < ring.sq.ring_entries; i++)
		ring.sq.array[i] = i;
	smoke(&ring);
	io_uring_queue_exit(&ring);

	STEP("one params struct for two rings");
	say("-- one params struct for two rings");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 32;
	show_ret("first init", io_uring_queue_init_params(8, &ring, &p));
	show_ret("second init, same params",
		 io_uring_queue_init_params(8, &other, &p));
	say("cq entries: %u %u", ring.cq.ring_entries, other.cq.ring_entries);
	io_uring_queue_exit(&other);

	STEP("ATTACH_WQ");
	say("-- ATTACH_WQ to a plain ring");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_ATTACH_WQ;
	p.wq_fd = (__u32)ring.ring_fd;
	ret = io_uring_queue_init_params(8, &other, &p);
	show_ret("init ATTACH_WQ", ret);
	say("params: flags=0x%x wq_fd_kept=%d", p.flags,
	    p.wq_fd == (__u32)ring.ring_fd);
	if (ret == 0) {
		say("ring: flags=0x%x", DIFF_RING_FLAGS(other.flags));
		smoke(&other);
		io_uring_queue_exit(&other);
	}
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_ATTACH_WQ;
	p.wq_fd = (__u32)-1;
	show_ret("init ATTACH_WQ wq_fd -1",
		 io_uring_queue_init_params(8, &other, &p));

	STEP("dontfork, mlock size");
	say("-- io_uring_ring_dontfork, io_uring_mlock_size");
	show_ret("io_uring_ring_dontfork", io_uring_ring_dontfork(&ring));
	show_ret("io_uring_mlock_size(8, 0)", io_uring_mlock_size(8, 0));
	memset(&p, 0, sizeof(p));
	show_ret("io_uring_mlock_size_params(8)",
		 io_uring_mlock_size_params(8, &p));
	io_uring_queue_exit(&ring);

	STEP("init again");
	say("-- io_uring_queue_init on the struct of an exited ring");
	ret = io_uring_queue_init(4, &ring, 0);
	show_ret("io_uring_queue_init again", ret);
	if (ret == 0) {
		smoke(&ring);
		io_uring_queue_exit(&ring);
	}
}
