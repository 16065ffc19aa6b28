/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness: random sequences of liburing calls on real rings,
 * served by rsuring, with invariants checked after every step.
 *
 * The input is a program: the first byte picks the ring (entries, CQ size,
 * setup flags), every following byte (with operand bytes after it) is one
 * operation: get_sqe + prep (NOP, read/write on a memfd, timeout, cancel,
 * timeout remove, link timeout, with IO_LINK / IO_DRAIN / ASYNC flags),
 * submit, submit_and_wait_timeout, wait, peek, peek_batch + advance,
 * for_each + advance, get_events, file / buffer / ring-fd registration,
 * probes, rsuring_wait_batch_cqe, io_uring_queue_exit with requests in
 * flight (and a new ring after it).
 *
 * Invariants (any violation aborts, which libFuzzer reports as a crash):
 *  - every CQE carries a user_data that was submitted and has not completed
 *    yet (none unknown, none duplicated); cancels and broken links complete
 *    their targets with -ECANCELED, which is still exactly one CQE;
 *  - at the end every submitted request has completed, within a deadline
 *    (every request the harness makes finishes on its own in ~1 ms);
 *  - sq_ready <= SQ entries, sq_space_left == entries - sq_ready, cq_ready
 *    <= CQ entries; without SQPOLL sq_ready equals the number of SQEs
 *    prepared and not yet consumed by the kernel;
 *  - SQE / CQE pointers handed out lie inside the ring's arrays.
 * Requests still in flight when the ring is torn down early are forgotten.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <rsuring.h>

#define MAX_UD 8192 /* requests per input */
#define NBUF 32
#define BUFSZ 4096

enum { ST_FREE = 0, ST_PREPARED, ST_INFLIGHT, ST_DONE };

static int memfd = -1;
static char bufs[NBUF][BUFSZ];
static struct iovec iovs[NBUF];
static struct __kernel_timespec ts_slot[MAX_UD];

static struct {
	struct io_uring ring;
	int live;
	int sqpoll;
	unsigned char state[MAX_UD];
	/* user_data of prepared SQEs not yet consumed by the kernel, in order */
	unsigned queue[MAX_UD];
	unsigned q_head, q_tail;
	unsigned next_ud;
	unsigned inflight;  /* prepared or submitted, not completed */
	unsigned submitted; /* consumed by the kernel, not completed */
	int files_registered;
	int bufs_registered;
	unsigned pending_flags; /* flags for the next SQE (IO_LINK etc.) */
} S;

#define FAIL(...)                                                         \
	do {                                                                  \
		fprintf(stderr, "ring_ops invariant: " __VA_ARGS__);              \
		fprintf(stderr, " (line %d)\n", __LINE__);                        \
		abort();                                                          \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("ring_ops", 0);
	if (memfd < 0 || ftruncate(memfd, 1 << 20) < 0) {
		perror("memfd");
		exit(1);
	}
	for (int i = 0; i < NBUF; i++) {
		iovs[i].iov_base = bufs[i];
		iovs[i].iov_len = BUFSZ;
	}
	return 0;
}

struct cursor {
	const uint8_t *p;
	size_t n;
};

static unsigned take(struct cursor *c)
{
	if (!c->n)
		return 0;
	c->n--;
	return *c->p++;
}

static void consumed(unsigned n);

static void check_indices(void)
{
	struct io_uring *r = &S.ring;
	unsigned sq_ready = io_uring_sq_ready(r);
	unsigned space = io_uring_sq_space_left(r);
	unsigned cq_ready = io_uring_cq_ready(r);

	if (sq_ready > r->sq.ring_entries)
		FAIL("sq_ready %u > %u entries", sq_ready, r->sq.ring_entries);
	/* (with SQPOLL the kernel moves the SQ head between the two reads) */
	if (space > r->sq.ring_entries ||
	    (!S.sqpoll && space != r->sq.ring_entries - sq_ready))
		FAIL("sq_space_left %u, %u entries, sq_ready %u", space,
		     r->sq.ring_entries, sq_ready);
	if (cq_ready > r->cq.ring_entries)
		FAIL("cq_ready %u > %u entries", cq_ready, r->cq.ring_entries);
	if (sq_ready > S.q_tail - S.q_head)
		FAIL("sq_ready %u but only %u SQEs prepared and not consumed",
		     sq_ready, S.q_tail - S.q_head);
	/* What the kernel consumed (its SQ head moved past) is in flight. */
	consumed(S.q_tail - S.q_head - sq_ready);
}

static void complete(const struct io_uring_cqe *cqe)
{
	struct io_uring *r = &S.ring;
	uint64_t ud = cqe->user_data;
	size_t cqe_sz = (r->flags & IORING_SETUP_CQE32) ? 32 : 16;
	uintptr_t lo = (uintptr_t)r->cq.cqes;
	uintptr_t hi = lo + (size_t)r->cq.ring_entries * cqe_sz;

	if ((uintptr_t)cqe < lo || (uintptr_t)cqe >= hi)
		FAIL("CQE %p outside the CQ array [%#lx, %#lx)", (void *)cqe,
		     (unsigned long)lo, (unsigned long)hi);
	if (ud == 0 || ud >= MAX_UD)
		FAIL("CQE with unknown user_data %llu (res %d)",
		     (unsigned long long)ud, cqe->res);
	switch (S.state[ud]) {
	case ST_INFLIGHT:
		break;
	case ST_DONE:
		FAIL("user_data %llu completed twice (res %d)",
		     (unsigned long long)ud, cqe->res);
	case ST_PREPARED:
		if (S.sqpoll) /* the poller consumed it before submit said so */
			break;
		FAIL("user_data %llu completed before it was submitted",
		     (unsigned long long)ud);
	default:
		FAIL("CQE for user_data %llu that was never prepared",
		     (unsigned long long)ud);
	}
	/* (an SQPOLL entry still PREPARED is skipped by consumed() later) */
	if (S.state[ud] == ST_INFLIGHT)
		S.submitted--;
	S.inflight--;
	S.state[ud] = ST_DONE;
}

/* The first n prepared SQEs were consumed by the kernel. */
static void consumed(unsigned n)
{
	while (n-- && S.q_head != S.q_tail) {
		unsigned ud = S.queue[S.q_head++ % MAX_UD];
		if (S.state[ud] == ST_PREPARED) {
			S.state[ud] = ST_INFLIGHT;
			S.submitted++;
		}
		/* (SQPOLL: may already be DONE) */
	}
}

static void reap_all_ready(void)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(&S.ring, head, cqe) {
		complete(cqe);
		n++;
	}
	io_uring_cq_advance(&S.ring, n);
}

static int do_submit(void)
{
	unsigned before = S.q_tail - S.q_head;
	int ret = io_uring_submit(&S.ring);
	if (ret >= 0) {
		/* Without SQPOLL the kernel consumed exactly what submit says
		 * (all that was queued, unless it stopped at an error). */
		if (!S.sqpoll && (unsigned)ret != before - io_uring_sq_ready(&S.ring))
			FAIL("io_uring_submit returned %d, but the SQ went from %u to %u",
			     ret, before, io_uring_sq_ready(&S.ring));
		check_indices();
	} else if (ret != -EBUSY && ret != -EAGAIN && ret != -EINTR) {
		FAIL("io_uring_submit: %d", ret);
	}
	return ret;
}

static void ring_exit(void)
{
	if (!S.live)
		return;
	io_uring_queue_exit(&S.ring);
	/* In-flight and unsubmitted requests of a ring torn down early are
	 * not checked; retire their ids so a late CQE can never match. */
	for (unsigned i = 1; i < S.next_ud; i++)
		if (S.state[i] == ST_PREPARED || S.state[i] == ST_INFLIGHT)
			S.state[i] = ST_DONE;
	S.live = 0;
	S.inflight = 0;
	S.submitted = 0;
	S.q_head = S.q_tail = 0;
	S.files_registered = S.bufs_registered = 0;
	S.pending_flags = 0;
}

static int ring_init(unsigned cfg, unsigned cfg2)
{
	struct io_uring_params p;
	unsigned entries = 1u << (cfg & 7); /* 1 .. 128 */
	int ret;

	memset(&p, 0, sizeof(p));
	if (cfg & 0x08) {
		p.flags |= IORING_SETUP_CQSIZE;
		p.cq_entries = entries << (cfg2 & 3);
	}
	switch ((cfg >> 4) & 7) {
	case 1:
		p.flags |= IORING_SETUP_SUBMIT_ALL;
		break;
	case 2:
		p.flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
		break;
	case 3:
		p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
		break;
	case 4:
		p.flags |= IORING_SETUP_NO_SQARRAY;
		break;
	case 5:
		if (cfg & 0x80) {
			p.flags |= IORING_SETUP_SQPOLL;
			p.sq_thread_idle = 10;
			if (cfg2 & 4) {
				p.flags |= IORING_SETUP_SQ_AFF |
					   IORING_SETUP_SQPOLL_PERCPU;
				p.sq_thread_cpu = (cfg2 >> 3) & 1;
			}
		}
		break;
	default:
		break;
	}
	ret = io_uring_queue_init_params(entries, &S.ring, &p);
	if (ret < 0) {
		if (ret == -EINVAL || ret == -ENOMEM)
			return ret; /* a combination this kernel refuses */
		FAIL("io_uring_queue_init_params(%u, flags %#x): %d", entries,
		     p.flags, ret);
	}
	S.live = 1;
	S.sqpoll = !!(S.ring.flags & IORING_SETUP_SQPOLL);
	check_indices();
	return 0;
}

/* A new SQE with the next user_data, or NULL (SQ full / ids exhausted). */
static struct io_uring_sqe *new_sqe(unsigned *ud_out)
{
	struct io_uring_sqe *sqe;
	struct io_uring *r = &S.ring;
	size_t sqe_sz = (r->flags & IORING_SETUP_SQE128) ? 128 : 64;
	unsigned ud;

	if (S.next_ud >= MAX_UD)
		return NULL;
	sqe = io_uring_get_sqe(r);
	if (!sqe) {
		if (!S.sqpoll && io_uring_sq_space_left(r))
			FAIL("get_sqe NULL with %u slots left",
			     io_uring_sq_space_left(r));
		return NULL;
	}
	if ((uintptr_t)sqe < (uintptr_t)r->sq.sqes ||
	    (uintptr_t)sqe >= (uintptr_t)r->sq.sqes + r->sq.ring_entries * sqe_sz)
		FAIL("SQE %p outside the SQE array", (void *)sqe);
	ud = S.next_ud++;
	S.state[ud] = ST_PREPARED;
	S.queue[S.q_tail++ % MAX_UD] = ud;
	S.inflight++;
	*ud_out = ud;
	return sqe;
}

static void finish_sqe(struct io_uring_sqe *sqe, unsigned ud, unsigned fl)
{
	io_uring_sqe_set_data64(sqe, ud);
	sqe->flags |= S.pending_flags;
	S.pending_flags = 0;
	if (fl & 1)
		sqe->flags |= IOSQE_IO_LINK;
	if ((fl & 0x0e) == 0x02)
		sqe->flags |= IOSQE_ASYNC;
	if ((fl & 0x0e) == 0x04)
		sqe->flags |= IOSQE_IO_DRAIN;
}

/* An earlier user_data of this input (for cancels). */
static unsigned pick_target(unsigned b)
{
	if (S.next_ud <= 1)
		return 1;
	return 1 + b % (S.next_ud - 1);
}

static void op_prep(unsigned kind, struct cursor *c)
{
	unsigned a = take(c), b = take(c), fl = take(c), ud;
	struct io_uring_sqe *sqe = new_sqe(&ud);

	if (!sqe) {
		do_submit();
		reap_all_ready();
		return;
	}
	switch (kind) {
	case 0:
		io_uring_prep_nop(sqe);
		break;
	case 1:
	case 2: {
		unsigned len = 1 + (a * 16) % BUFSZ;
		off_t off = (off_t)b * 512;
		int fixed_buf = S.bufs_registered && (fl & 0x10);
		int fixed_file = S.files_registered && (fl & 0x20);
		if (fixed_buf) {
			if (kind == 1)
				io_uring_prep_read_fixed(sqe, fixed_file ? 0 : memfd,
							 bufs[a % NBUF], len, off, a % NBUF);
			else
				io_uring_prep_write_fixed(sqe, fixed_file ? 0 : memfd,
							  bufs[a % NBUF], len, off, a % NBUF);
		} else if (kind == 1) {
			io_uring_prep_read(sqe, fixed_file ? 0 : memfd, bufs[a % NBUF],
					   len, off);
		} else {
			io_uring_prep_write(sqe, fixed_file ? 0 : memfd, bufs[a % NBUF],
					    len, off);
		}
		if (fixed_file)
			sqe->flags |= IOSQE_FIXED_FILE;
		break;
	}
	case 3:
		ts_slot[ud].tv_sec = 0;
		ts_slot[ud].tv_nsec = (long long)a * 4000; /* 0 .. ~1 ms */
		io_uring_prep_timeout(sqe, &ts_slot[ud], b & 3, 0);
		break;
	case 4:
		io_uring_prep_cancel64(sqe, pick_target(a << 8 | b),
				       (fl & 0x40) ? IORING_ASYNC_CANCEL_ALL : 0);
		break;
	case 5:
		io_uring_prep_timeout_remove(sqe, pick_target(a << 8 | b), 0);
		break;
	case 6:
		ts_slot[ud].tv_sec = 0;
		ts_slot[ud].tv_nsec = (long long)a * 4000;
		io_uring_prep_link_timeout(sqe, &ts_slot[ud], 0);
		break;
	}
	finish_sqe(sqe, ud, fl);
}

static void op_wait(unsigned a)
{
	struct io_uring_cqe *cqe = NULL;
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 2000000 };
	int ret;

	if (!S.submitted && !S.sqpoll && (a & 3) != 1)
		a = 2; /* nothing can arrive: peek instead of sleeping */
	switch (a & 3) {
	case 0:
		ret = io_uring_wait_cqe_timeout(&S.ring, &cqe, &ts);
		break;
	case 1:
		/* (returns -ETIME on timeout even though it submitted) */
		ret = io_uring_submit_and_wait_timeout(&S.ring, &cqe,
						       1 + (a >> 2) % 4, &ts, NULL);
		check_indices();
		break;
	case 2:
		ret = io_uring_peek_cqe(&S.ring, &cqe);
		break;
	default:
		ret = io_uring_wait_cqes(&S.ring, &cqe, 1 + (a >> 2) % 4, &ts, NULL);
		break;
	}
	if (ret >= 0 && cqe) {
		complete(cqe);
		io_uring_cqe_seen(&S.ring, cqe);
	} else if (ret < 0 && ret != -ETIME && ret != -EAGAIN &&
		   ret != -EBUSY && ret != -EINTR) {
		FAIL("wait variant %u: %d", a & 3, ret);
	}
}

static void op_peek_batch(unsigned a)
{
	struct io_uring_cqe *cqes[16];
	unsigned want = 1 + a % 16, n;

	if (a & 0x80) {
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 1000000 };
		int ret = rsuring_wait_batch_cqe(&S.ring, cqes, want,
						 S.submitted ? 1 : 0, &ts);
		if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EBUSY)
			FAIL("rsuring_wait_batch_cqe: %d", ret);
		n = ret < 0 ? 0 : (unsigned)ret;
		if (n > want)
			FAIL("rsuring_wait_batch_cqe returned %u > max %u", n, want);
	} else {
		n = io_uring_peek_batch_cqe(&S.ring, cqes, want);
		if (n > want)
			FAIL("peek_batch returned %u > %u", n, want);
	}
	for (unsigned i = 0; i < n; i++)
		complete(cqes[i]);
	io_uring_cq_advance(&S.ring, n);
}

static void op_register(unsigned a)
{
	int ret;

	switch (a & 7) {
	case 0:
		if (S.files_registered) {
			ret = io_uring_unregister_files(&S.ring);
			S.files_registered = 0;
		} else {
			ret = io_uring_register_files(&S.ring, &memfd, 1);
			S.files_registered = ret == 0;
		}
		if (ret < 0 && ret != -EBUSY && ret != -EINTR)
			FAIL("files (un)register: %d", ret);
		break;
	case 1:
		if (S.bufs_registered) {
			ret = io_uring_unregister_buffers(&S.ring);
			S.bufs_registered = ret < 0;
		} else {
			ret = io_uring_register_buffers(&S.ring, iovs, NBUF);
			S.bufs_registered = ret == 0;
		}
		if (ret < 0 && ret != -EBUSY && ret != -ENOMEM && ret != -EINTR)
			FAIL("buffers (un)register: %d", ret);
		break;
	case 2: {
		struct io_uring_probe *p = io_uring_get_probe_ring(&S.ring);
		if (!p)
			FAIL("io_uring_get_probe_ring: NULL");
		if (!io_uring_opcode_supported(p, IORING_OP_NOP))
			FAIL("probe says NOP is unsupported");
		io_uring_free_probe(p);
		break;
	}
	case 3:
		ret = io_uring_register_ring_fd(&S.ring);
		if (ret < 0 && ret != -EEXIST && ret != -EINVAL && ret != -EBUSY)
			FAIL("register_ring_fd: %d", ret);
		break;
	case 4:
		ret = io_uring_unregister_ring_fd(&S.ring);
		if (ret < 0 && ret != -EINVAL)
			FAIL("unregister_ring_fd: %d", ret);
		break;
	case 5:
		ret = io_uring_get_events(&S.ring);
		if (ret < 0 && ret != -EBUSY && ret != -EINTR && ret != -EAGAIN)
			FAIL("get_events: %d", ret);
		break;
	case 6:
		ret = io_uring_submit_and_get_events(&S.ring);
		check_indices();
		if (ret < 0 && ret != -EBUSY && ret != -EINTR && ret != -EAGAIN)
			FAIL("submit_and_get_events: %d", ret);
		break;
	default:
		if (S.sqpoll) {
			ret = io_uring_sqring_wait(&S.ring);
			if (ret < 0 && ret != -EINTR)
				FAIL("sqring_wait: %d", ret);
		}
		break;
	}
}

/* Submit what is queued and wait until every submitted request is done. */
static void drain(void)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	S.pending_flags = 0;
	for (;;) {
		if (S.q_head != S.q_tail)
			do_submit();
		if (!S.inflight && S.q_head == S.q_tail)
			break;
		op_wait(0);
		reap_all_ready();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 5)
			FAIL("%u requests never completed (%u not consumed)",
			     S.inflight, S.q_tail - S.q_head);
	}
	check_indices();
	if (io_uring_cq_ready(&S.ring))
		FAIL("%u CQEs left after every request completed",
		     io_uring_cq_ready(&S.ring));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, size };

	memset(&S, 0, sizeof(S));
	S.next_ud = 1;
	if (ring_init(take(&c), take(&c)) < 0)
		return 0;
	while (c.n) {
		unsigned op = take(&c);
		if (!S.live) {
			if (ring_init(op, take(&c)) < 0)
				return 0;
			continue;
		}
		switch (op % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5: case 6:
			op_prep(op % 16, &c);
			break;
		case 7:
			S.pending_flags |= IOSQE_IO_LINK;
			break;
		case 8: case 9:
			do_submit();
			break;
		case 10: case 11:
			op_wait(take(&c));
			break;
		case 12:
			op_peek_batch(take(&c));
			break;
		case 13:
			reap_all_ready();
			break;
		case 14:
			op_register(take(&c));
			break;
		case 15:
			if ((op >> 4) == 0xf) /* early exit, requests in flight */
				ring_exit();
			else
				do_submit();
			break;
		}
		if (S.live)
			check_indices();
	}
	if (S.live) {
		drain();
		ring_exit();
	}
	return 0;
}
