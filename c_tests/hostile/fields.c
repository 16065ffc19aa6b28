/* SPDX-License-Identifier: MIT */
/*
 * The fields of struct io_uring that another copy of liburing in the same
 * process (a dlopen()ed liburing-ffi.so.2, a program's own raw calls) reads:
 * ring_fd, enter_ring_fd, int_flags; and a raw io_uring_enter made the way
 * liburing 2.3 makes it from them.
 */
#define T_NO_WATCHDOG /* each section has its own (main.c) */
#include "../rsuring_test.h"

/* liburing 2.3's int_flags bit for a registered ring fd, and the flag it
 * passes to io_uring_enter for it. */
#define REG_RING_BIT 0x1

static long raw_enter(struct io_uring *ring, unsigned min, unsigned flags)
{
	if (ring->int_flags & REG_RING_BIT)
		flags |= IORING_ENTER_REGISTERED_RING;
	return sys_enter(ring->enter_ring_fd, 0, min, flags);
}

/*
 * After init and after unregister: the fields whole. While the application's
 * own registration stands, liburing 2.3 (int_flags bit 0x1, enter_ring_fd the
 * slot) and 2.4+ (bit 0x10 for the slot, 0x1 for a registered-ring register;
 * what rsuring follows) disagree on int_flags, so only enter_ring_fd is shown.
 */
static void show_fields(struct io_uring *ring, const char *when, int whole)
{
	if (whole)
		say("%s: enter_ring_fd == ring_fd: %s, int_flags: 0x%x", when,
		    ring->enter_ring_fd == ring->ring_fd ? "yes" : "no",
		    ring->int_flags);
	else
		say("%s: enter_ring_fd == ring_fd: %s", when,
		    ring->enter_ring_fd == ring->ring_fd ? "yes" : "no");
}

static void one(unsigned flags, const char *what)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int ret;

	STEP(what);
	say("-- %s", what);
	memset(&p, 0, sizeof(p));
	p.flags = flags;
	if (flags & IORING_SETUP_SQPOLL)
		p.sq_thread_idle = 50;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret < 0)
		die("io_uring_queue_init_params: %s", rstr(ret, 0));
	show_fields(&ring, "after init", 1);
	say("raw enter(enter_ring_fd, 0, 0) = %s", rstr(raw_enter(&ring, 0, 0), 0));
	queue_nop(&ring, 0x1, 0);
	ret = io_uring_submit(&ring);
	say("submit = %s", flags & IORING_SETUP_SQPOLL && ret >= 0 && ret <= 1 ?
				  "0..1" : rstr(ret, 0));
	say("raw enter(enter_ring_fd, min 1, GETEVENTS) = %s",
	    rstr(raw_enter(&ring, 1, IORING_ENTER_GETEVENTS), 0));
	cqe = NULL;
	ret = io_uring_peek_cqe(&ring, &cqe);
	if (ret == 0 && cqe) {
		say("peek: cqe ud=0x%llx res=%s",
		    (unsigned long long)cqe->user_data, rstr(cqe->res, 0));
		io_uring_cqe_seen(&ring, cqe);
	} else {
		say("peek = %s", rstr(ret, 0));
	}
	say("io_uring_register_ring_fd = %s",
	    rstr(io_uring_register_ring_fd(&ring), 0));
	show_fields(&ring, "after register_ring_fd", 0);
	say("raw enter(enter_ring_fd, 0, 0, REGISTERED_RING) = %s",
	    rstr(sys_enter(ring.enter_ring_fd, 0, 0,
			   IORING_ENTER_REGISTERED_RING),
		 0));
	say("%s", nop_roundtrip(&ring, 0x2));
	say("io_uring_unregister_ring_fd = %s",
	    rstr(io_uring_unregister_ring_fd(&ring), 0));
	show_fields(&ring, "after unregister_ring_fd", 1);
	say("raw enter(enter_ring_fd, 0, 0) = %s", rstr(raw_enter(&ring, 0, 0), 0));
	say("%s", nop_roundtrip(&ring, 0x3));
	io_uring_queue_exit(&ring);
}

void sec_fields(void)
{
	one(0, "plain ring");
	one(IORING_SETUP_SINGLE_ISSUER, "SINGLE_ISSUER");
	one(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	    "SINGLE_ISSUER|DEFER_TASKRUN");
	one(IORING_SETUP_COOP_TASKRUN, "COOP_TASKRUN");
	one(IORING_SETUP_SQPOLL, "SQPOLL");
}
