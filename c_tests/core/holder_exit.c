/* SPDX-License-Identifier: MIT */
/*
 * A ring that outlives the thread that set it up. rsuring registers every
 * ring's fd for the thread that set it up, and tells that thread from
 * others by its thread pointer. glibc gives a new thread the cached stack,
 * and with it the thread pointer, of a thread that was joined: such a
 * thread, whose own ring got the same slot index in its own table, must
 * still reach the ring it names, never its own.
 */
#include "../rsuring_test.h"

#include <pthread.h>

#define SUBMITS 4

struct setter {
	struct io_uring *ring;
	pthread_t self;
};

/* Sets a ring up, uses it, and exits without tearing it down. */
static void *set_up(void *arg)
{
	struct setter *s = arg;

	CHECK_OK(io_uring_queue_init(8, s->ring, 0));
	t_nop_round_trip(s->ring, 1, 1);
	s->self = pthread_self();
	return NULL;
}

struct user {
	struct io_uring *theirs;
	pthread_t self;
	int submitted[SUBMITS];
	unsigned own_cqes;
};

/* With a ring of its own, submits NOPs to the exited thread's ring. */
static void *use_theirs(void *arg)
{
	struct user *u = arg;
	struct io_uring own;

	u->self = pthread_self();
	CHECK_OK(io_uring_queue_init(8, &own, 0));
	t_nop_round_trip(&own, 1, 2);
	for (int i = 0; i < SUBMITS; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(u->theirs);

		CHECK(sqe != NULL);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 0xbad);
		u->submitted[i] = io_uring_submit(u->theirs);
	}
	u->own_cqes = io_uring_cq_ready(&own);
	t_nop_round_trip(&own, 1, 3);
	io_uring_queue_exit(&own);
	return NULL;
}

int main(void)
{
	struct io_uring ring;
	struct setter s = { .ring = &ring };
	struct user u = { .theirs = &ring };
	struct io_uring_cqe *cqe;
	pthread_t thread;

	/* The registration is opt-in: ask for it before the first ring. */
	setenv("RSURING_REGISTER_RING_FD", "1", 1);
	T_STEP("a thread sets a ring up and exits, the ring stays");
	CHECK_EQ(pthread_create(&thread, NULL, set_up, &s), 0);
	CHECK_EQ(pthread_join(thread, NULL), 0);

	T_STEP("a thread on the exited one's stack submits to that ring");
	CHECK_EQ(pthread_create(&thread, NULL, use_theirs, &u), 0);
	CHECK_EQ(pthread_join(thread, NULL), 0);
	/* The premise: glibc reused the joined thread's stack (its cache). */
	CHECK(pthread_equal(s.self, u.self));
	for (int i = 0; i < SUBMITS; i++)
		CHECK_EQ(u.submitted[i], 1);
	CHECK_EQ(u.own_cqes, 0);

	T_STEP("every NOP completed on the ring it was submitted to");
	for (int i = 0; i < SUBMITS; i++) {
		CHECK_OK(io_uring_wait_cqe(&ring, &cqe));
		CHECK_EQ(cqe->user_data, 0xbad);
		CHECK_EQ(cqe->res, 0);
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(io_uring_cq_ready(&ring), 0);
	t_nop_round_trip(&ring, 1, 4);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
