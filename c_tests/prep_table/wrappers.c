/* SPDX-License-Identifier: MIT */
/*
 * The hand-written inline helpers of a <liburing.h>, as functions named
 * WRAP_PREFIX + what: tests/prep_table.rs builds this file once against
 * rsuring's header and once against upstream liburing's, and
 * compare.c calls both sets on the same ring states.
 */
#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

#define JOIN2(a, b) a##b
#define JOIN(a, b) JOIN2(a, b)
#define W(what) JOIN(WRAP_PREFIX, what)

/* Declared for both prefixes in compare.c (WRAPPER_PROTOTYPES). */

void *W(validate)(void *buf, int len, struct msghdr *m)
{
	return io_uring_recvmsg_validate(buf, len, m);
}

void *W(firsthdr)(void *o, struct msghdr *m)
{
	return io_uring_recvmsg_cmsg_firsthdr(o, m);
}

void *W(nexthdr)(void *o, struct msghdr *m, void *cmsg)
{
	return io_uring_recvmsg_cmsg_nexthdr(o, m, cmsg);
}

void *W(payload)(void *o, struct msghdr *m)
{
	return io_uring_recvmsg_payload(o, m);
}

unsigned W(payload_length)(void *o, int len, struct msghdr *m)
{
	return io_uring_recvmsg_payload_length(o, len, m);
}

int W(opcode_supported)(void *probe, int op)
{
	return io_uring_opcode_supported(probe, op);
}

int W(eventfd_toggle)(struct io_uring *ring, bool enabled)
{
	return io_uring_cq_eventfd_toggle(ring, enabled);
}

int W(eventfd_enabled)(struct io_uring *ring)
{
	return io_uring_cq_eventfd_enabled(ring);
}

void *W(get_sqe)(struct io_uring *ring)
{
	return _io_uring_get_sqe(ring);
}

void *W(get_sqe128)(struct io_uring *ring)
{
	return io_uring_get_sqe128(ring);
}

unsigned W(sq_state)(struct io_uring *ring)
{
	return io_uring_sq_ready(ring) << 16 | io_uring_sq_space_left(ring);
}

int W(peek)(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned *nr)
{
	return __io_uring_peek_cqe(ring, cqe, nr);
}

void W(cqe_seen)(struct io_uring *ring, struct io_uring_cqe *cqe)
{
	io_uring_cqe_seen(ring, cqe);
}

unsigned W(cq_ready)(struct io_uring *ring)
{
	return io_uring_cq_ready(ring);
}

/* CQEs visited, the index of the last, and where head ended. */
void W(for_each)(struct io_uring *ring, unsigned out[3])
{
	struct io_uring_cqe *cqe;
	unsigned head;

	out[0] = out[1] = 0;
	io_uring_for_each_cqe(ring, head, cqe) {
		out[0]++;
		out[1] = (unsigned) (cqe - ring->cq.cqes);
	}
	out[2] = head;
}

/* CQEs the iterator visits, and the sum of their indexes. */
void W(iterate)(struct io_uring *ring, unsigned out[2])
{
	struct io_uring_cqe_iter it = io_uring_cqe_iter_init(ring);
	struct io_uring_cqe *cqe;

	out[0] = out[1] = 0;
	while (io_uring_cqe_iter_next(&it, &cqe)) {
		out[0]++;
		out[1] += (unsigned) (cqe - ring->cq.cqes);
	}
}

void W(buf_ring_add)(struct io_uring_buf_ring *br, void *addr, unsigned len,
		     unsigned short bid, int mask, int offset, int count)
{
	io_uring_buf_ring_add(br, addr, len, bid, mask, offset);
	io_uring_buf_ring_advance(br, count);
}
