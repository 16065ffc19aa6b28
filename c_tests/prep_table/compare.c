/* SPDX-License-Identifier: MIT */
/*
 * Calls the hand-written inline helpers of rsuring's <liburing.h> (ours_*)
 * and of upstream liburing's (theirs_*, see wrappers.c) on the same
 * pseudo-random ring states and buffers, and counts every difference in
 * what they return or write.  Ring states are built in plain memory: no
 * kernel is involved, the helpers only read and write the ring words.
 *
 * Exit status 0 when both behave the same in every case; the first
 * differences are printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

#define JOIN2(a, b) a##b
#define JOIN(a, b) JOIN2(a, b)
/* The functions of wrappers.c, declared for one W() (one WRAP_PREFIX). */
#define WRAPPER_PROTOTYPES \
	void *W(validate)(void *buf, int len, struct msghdr *m); \
	void *W(firsthdr)(void *o, struct msghdr *m); \
	void *W(nexthdr)(void *o, struct msghdr *m, void *cmsg); \
	void *W(payload)(void *o, struct msghdr *m); \
	unsigned W(payload_length)(void *o, int len, struct msghdr *m); \
	int W(opcode_supported)(void *probe, int op); \
	int W(eventfd_toggle)(struct io_uring *ring, bool enabled); \
	int W(eventfd_enabled)(struct io_uring *ring); \
	void *W(get_sqe)(struct io_uring *ring); \
	void *W(get_sqe128)(struct io_uring *ring); \
	unsigned W(sq_state)(struct io_uring *ring); \
	int W(peek)(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned *nr); \
	void W(cqe_seen)(struct io_uring *ring, struct io_uring_cqe *cqe); \
	unsigned W(cq_ready)(struct io_uring *ring); \
	void W(for_each)(struct io_uring *ring, unsigned out[3]); \
	void W(iterate)(struct io_uring *ring, unsigned out[2]); \
	void W(buf_ring_add)(struct io_uring_buf_ring *br, void *addr, unsigned len, unsigned short bid, int mask, int offset, int count);

#define W(what) JOIN(ours_, what)
WRAPPER_PROTOTYPES
#undef W
#define W(what) JOIN(theirs_, what)
WRAPPER_PROTOTYPES
#undef W

#define CASES 100000

static unsigned long long prng_state = 0x9e3779b97f4a7c15ULL;
static int differences;

/* xorshift64*: reproducible across libcs */
static unsigned rnd(void)
{
	prng_state ^= prng_state >> 12;
	prng_state ^= prng_state << 25;
	prng_state ^= prng_state >> 27;
	return (unsigned) ((prng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

#define EXPECT_SAME(cond, ...)						\
	do {								\
		if (!(cond) && differences++ < 20) {			\
			printf(__VA_ARGS__);				\
			putchar('\n');					\
		}							\
	} while (0)

static unsigned char buf[4096] __attribute__((aligned(16)));

/* A multishot recvmsg buffer with plausible and implausible lengths. */
static void recvmsg_buffers(void)
{
	struct io_uring_recvmsg_out *o = (void *) buf;
	int i, k;

	for (i = 0; i < CASES; i++) {
		struct msghdr m = { 0 };
		int len = (int) (rnd() % 600) - 20;
		unsigned char *control;
		void *a, *b;

		m.msg_namelen = rnd() % 4 ? rnd() % 64 : rnd();
		m.msg_controllen = rnd() % 4 ? rnd() % 256 : rnd();
		for (k = 0; k < 1024; k++)
			buf[k] = (unsigned char) rnd();
		o->controllen = rnd() % 3 ? rnd() % 200 : rnd() % 20;

		a = ours_validate(buf, len, &m);
		b = theirs_validate(buf, len, &m);
		EXPECT_SAME(a == b, "validate(len %d, namelen %u, controllen %zu): %p vs %p",
			    len, m.msg_namelen, m.msg_controllen, a, b);
		EXPECT_SAME(ours_payload_length(buf, len, &m) == theirs_payload_length(buf, len, &m),
			    "payload_length(len %d, namelen %u, controllen %zu)",
			    len, m.msg_namelen, m.msg_controllen);
		if (m.msg_namelen >= 64)
			continue;	/* the walk below stays inside buf */

		/*
		 * Headers sit at 8-byte steps from the control area's start;
		 * give each a length the kernel could have written (a wild
		 * one would send upstream's pointer arithmetic off the buffer).
		 */
		control = buf + sizeof(*o) + m.msg_namelen;
		for (k = 0; k < 40; k++) {
			size_t cmsg_len = rnd() % 48;

			memcpy(control + 8 * k, &cmsg_len, sizeof(cmsg_len));
		}
		EXPECT_SAME(ours_payload(o, &m) == theirs_payload(o, &m), "payload");
		a = ours_firsthdr(o, &m);
		b = theirs_firsthdr(o, &m);
		EXPECT_SAME(a == b, "cmsg_firsthdr: %p vs %p", a, b);
		for (k = 0; a && a == b && k < 16; k++) {
			a = ours_nexthdr(o, &m, a);
			b = theirs_nexthdr(o, &m, b);
			EXPECT_SAME(a == b, "cmsg_nexthdr step %d: %p vs %p", k, a, b);
		}
	}
}

static struct io_uring_sqe sqes[128];
static struct io_uring_cqe cqes[128];
static unsigned khead, ktail, sq_kflags, cq_kflags;

static void sq_ring(struct io_uring *ring, unsigned flags, unsigned entries,
		    unsigned head, unsigned tail)
{
	memset(ring, 0, sizeof(*ring));
	ring->flags = flags;
	ring->sq.ring_entries = entries;
	ring->sq.ring_mask = entries - 1;
	ring->sq.sqes = sqes;
	ring->sq.khead = &khead;
	ring->sq.kflags = &sq_kflags;
	ring->sq.sqe_tail = tail;
	khead = head;
}

/* SQE acquisition on plain, SQE128, SQE_MIXED and SQPOLL rings. */
static void getting_sqes(void)
{
	static unsigned char after_ours[sizeof(sqes)];
	int i;

	for (i = 0; i < CASES; i++) {
		unsigned entries = 1U << (rnd() % 6 + 1);
		unsigned flags = (rnd() % 2 ? IORING_SETUP_SQPOLL : 0) |
				 (rnd() % 3 == 0 ? IORING_SETUP_SQE128 :
				  rnd() % 2 ? IORING_SETUP_SQE_MIXED : 0);
		unsigned head = rnd(), tail = head + rnd() % (entries + 1);
		bool big = rnd() % 2;
		struct io_uring a, b;
		void *pa, *pb;

		memset(sqes, 0x5a, sizeof(sqes));
		sq_ring(&a, flags, entries, head, tail);
		pa = big ? ours_get_sqe128(&a) : ours_get_sqe(&a);
		memcpy(after_ours, sqes, sizeof(sqes));
		memset(sqes, 0x5a, sizeof(sqes));
		sq_ring(&b, flags, entries, head, tail);
		pb = big ? theirs_get_sqe128(&b) : theirs_get_sqe(&b);
		EXPECT_SAME(pa == pb && a.sq.sqe_tail == b.sq.sqe_tail &&
			    !memcmp(after_ours, sqes, sizeof(sqes)),
			    "get_sqe%s(flags %#x, entries %u, head %u, tail %u): %p vs %p, tail %u vs %u",
			    big ? "128" : "", flags, entries, head, tail, pa, pb,
			    a.sq.sqe_tail, b.sq.sqe_tail);
		sq_ring(&a, flags, entries, head, tail);
		EXPECT_SAME(ours_sq_state(&a) == theirs_sq_state(&a), "sq_ready/space_left");
	}
}

static void cq_ring(struct io_uring *ring, unsigned flags, unsigned features,
		    unsigned entries, unsigned head, unsigned tail)
{
	memset(ring, 0, sizeof(*ring));
	ring->flags = flags;
	ring->features = features;
	ring->cq.ring_entries = entries;
	ring->cq.ring_mask = entries - 1;
	ring->cq.cqes = cqes;
	ring->cq.khead = &khead;
	ring->cq.ktail = &ktail;
	ring->cq.kflags = &cq_kflags;
	ring->sq.kflags = &sq_kflags;
	khead = head;
	ktail = tail;
}

/*
 * CQ contents: application CQEs, internal timeouts (some failed), skip
 * padding, and on CQE_MIXED rings 32-byte entries (never straddling the
 * tail, as the kernel posts them).
 */
static void fill_cq(struct io_uring_cqe *cq, unsigned flags, unsigned entries,
		    unsigned head, unsigned tail)
{
	unsigned shift = (flags & IORING_SETUP_CQE32) ? 1 : 0;
	unsigned pos;
	int k;

	for (k = 0; k < 128; k++) {
		cq[k].user_data = rnd() % 4 ? rnd() : LIBURING_UDATA_TIMEOUT;
		cq[k].res = rnd() % 3 ? 0 : -(int) (rnd() % 100);
		cq[k].flags = (rnd() % 4 == 0 ? IORING_CQE_F_SKIP : 0) |
			      (rnd() & 0xffff0000U);
	}
	if (!(flags & IORING_SETUP_CQE_MIXED))
		return;
	for (pos = head; pos != tail; pos++) {
		if (tail - pos >= 2 && rnd() % 3 == 0) {
			cq[(pos & (entries - 1)) << shift].flags |= IORING_CQE_F_32;
			pos++;
		}
	}
}

/* Peeking, walking and consuming CQEs. */
static void reaping_cqes(void)
{
	static struct io_uring_cqe contents[128];
	int i;

	for (i = 0; i < CASES; i++) {
		unsigned entries = 1U << (rnd() % 5 + 1);
		unsigned flags = (rnd() % 3 == 0 ? IORING_SETUP_CQE32 : 0) |
				 (rnd() % 2 ? IORING_SETUP_CQE_MIXED : 0);
		unsigned features = rnd() % 2 ? IORING_FEAT_EXT_ARG : 0;
		unsigned head = rnd(), tail = head + rnd() % (entries + 1);
		struct io_uring_cqe *ca, *cb;
		unsigned na = 7, nb = 7, ha, wa[3], wb[3];
		struct io_uring a, b;
		int ea, eb;

		fill_cq(contents, flags, entries, head, tail);
		memcpy(cqes, contents, sizeof(cqes));
		cq_ring(&a, flags, features, entries, head, tail);
		ea = ours_peek(&a, &ca, &na);
		ha = khead;
		memcpy(cqes, contents, sizeof(cqes));
		cq_ring(&b, flags, features, entries, head, tail);
		eb = theirs_peek(&b, &cb, &nb);
		EXPECT_SAME(ea == eb && ca == cb && na == nb && ha == khead,
			    "peek(flags %#x, features %#x): err %d vs %d, cqe %p vs %p, available %u vs %u, head %u vs %u",
			    flags, features, ea, eb, (void *) ca, (void *) cb, na, nb, ha, khead);

		cq_ring(&a, flags, features, entries, head, tail);
		ours_for_each(&a, wa);
		cq_ring(&b, flags, features, entries, head, tail);
		theirs_for_each(&b, wb);
		EXPECT_SAME(!memcmp(wa, wb, sizeof(wa)), "for_each_cqe(flags %#x)", flags);
		cq_ring(&a, flags, features, entries, head, tail);
		ours_iterate(&a, wa);
		theirs_iterate(&a, wb);
		EXPECT_SAME(!memcmp(wa, wb, 2 * sizeof(wa[0])), "cqe_iter(flags %#x)", flags);
		EXPECT_SAME(ours_cq_ready(&a) == theirs_cq_ready(&a), "cq_ready");

		if (ca) {
			cq_ring(&a, flags, features, entries, head, tail);
			ours_cqe_seen(&a, ca);
			ha = khead;
			cq_ring(&b, flags, features, entries, head, tail);
			theirs_cqe_seen(&b, ca);
			EXPECT_SAME(ha == khead, "cqe_seen: head %u vs %u", ha, khead);
		}
	}
}

static void probes_eventfd_buffers(void)
{
	static unsigned char probe[sizeof(struct io_uring_probe) +
				   256 * sizeof(struct io_uring_probe_op)];
	static unsigned char br_ours[16 * 64], br_theirs[16 * 64];
	size_t k;
	int i;

	for (i = 0; i < CASES; i++) {
		int op = (int) (rnd() % 300) - 20;

		for (k = 0; k < sizeof(probe); k += 61)
			probe[k] = (unsigned char) rnd();
		EXPECT_SAME(ours_opcode_supported(probe, op) == theirs_opcode_supported(probe, op),
			    "opcode_supported(%d)", op);
	}
	for (i = 0; i < CASES; i++) {
		unsigned start = rnd();
		bool enable = rnd() % 2;
		struct io_uring ring;
		unsigned after;
		int ra, rb;

		memset(&ring, 0, sizeof(ring));
		ring.cq.kflags = rnd() % 4 ? &cq_kflags : NULL;
		cq_kflags = start;
		EXPECT_SAME(ours_eventfd_enabled(&ring) == theirs_eventfd_enabled(&ring),
			    "eventfd_enabled");
		ra = ours_eventfd_toggle(&ring, enable);
		after = cq_kflags;
		cq_kflags = start;
		rb = theirs_eventfd_toggle(&ring, enable);
		EXPECT_SAME(ra == rb && after == cq_kflags, "eventfd_toggle(%d) from %#x", enable, start);
	}
	for (i = 0; i < CASES; i++) {
		void *addr = (void *) (uintptr_t) rnd();
		unsigned len = rnd();
		unsigned short bid = (unsigned short) rnd();
		int offset = (int) (rnd() % 200) - 100, count = (int) (rnd() % 200) - 100;

		for (k = 0; k < sizeof(br_ours); k++)
			br_ours[k] = br_theirs[k] = (unsigned char) rnd();
		ours_buf_ring_add((void *) br_ours, addr, len, bid, 63, offset, count);
		theirs_buf_ring_add((void *) br_theirs, addr, len, bid, 63, offset, count);
		EXPECT_SAME(!memcmp(br_ours, br_theirs, sizeof(br_ours)),
			    "buf_ring_add/advance(offset %d, count %d)", offset, count);
	}
}

int main(void)
{
	recvmsg_buffers();
	getting_sqes();
	reaping_cqes();
	probes_eventfd_buffers();
	printf("%d differences in %d cases\n", differences, 5 * CASES);
	return differences != 0;
}
