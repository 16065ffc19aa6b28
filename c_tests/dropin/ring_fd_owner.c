/* SPDX-License-Identifier: MIT */
/*
 * Issue 10, deviation 2: a ring's submissions go to that ring, whichever
 * thread made it and whatever glibc reuses.
 *
 * glibc hands an exited (joined) thread's pthread_t to the next thread it
 * creates. Thread A creates ring X (SINGLE_ISSUER | R_DISABLED: the thread
 * that enables it becomes its submitter) and exits. Thread B, which has
 * A's pthread_t, creates ring Y, enables X and submits on X, then on Y,
 * tears X down and submits on Y again. With liburing every submit returns
 * 1 and each CQE lands on the ring it was submitted to.
 */
#define T_CASE_PROGRAM 1
#define T_WATCHDOG_SECS 10
#include "../rsuring_test.h"

#include <pthread.h>

#define ATTEMPTS 50

static struct io_uring ring_x;
static pthread_t thread_a_id;

static void *thread_a(void *arg)
{
	struct io_uring_params p;
	int *ret = arg;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_R_DISABLED;
	*ret = io_uring_queue_init_params(8, &ring_x, &p);
	thread_a_id = pthread_self();
	return NULL;
}

/* Submits one NOP with @data on @ring; it must be 1 and land on @ring
 * alone. */
static void submit_lands_on(struct io_uring *ring, struct io_uring *other,
			    __u64 data, const char *what)
{
	struct t_cqe c;
	int ret;

	t_queue_nop(ring, data);
	ret = io_uring_submit(ring);
	if (ret != 1)
		T_FAIL("%s: io_uring_submit returned %d (%s), expected 1", what,
		       ret, ret < 0 ? strerror(-ret) : "no error");
	c = t_reap_within(ring, 2000, what);
	CHECK_EQ(c.user_data, data);
	CHECK_EQ(c.res, 0);
	if (other)
		t_cq_empty(other, what);
}

struct b_result {
	int same_id;
};

static void *thread_b(void *arg)
{
	struct b_result *res = arg;
	struct io_uring_params p;
	struct io_uring ring_y;

	res->same_id = pthread_equal(pthread_self(), thread_a_id);
	if (!res->same_id) {
		io_uring_queue_exit(&ring_x);
		return NULL;
	}
	T_STEP("thread B: create ring Y (SINGLE_ISSUER)");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER;
	CHECK_OK(io_uring_queue_init_params(8, &ring_y, &p));

	/* liburing 2.3 declares io_uring_enable_rings but does not export
	 * it; the register call is what it would make. */
	T_STEP("thread B: enable ring X");
	CHECK_OK(io_uring_register(ring_x.ring_fd, IORING_REGISTER_ENABLE_RINGS,
				   NULL, 0));

	T_STEP("thread B: submit on X");
	submit_lands_on(&ring_x, &ring_y, 0x11, "submit on X");
	T_STEP("thread B: submit on Y");
	submit_lands_on(&ring_y, &ring_x, 0x22, "submit on Y");

	T_STEP("thread B: tear X down, submit on Y");
	io_uring_queue_exit(&ring_x);
	submit_lands_on(&ring_y, NULL, 0x33, "submit on Y after X's exit");
	submit_lands_on(&ring_y, NULL, 0x44, "second submit on Y after X's exit");
	io_uring_queue_exit(&ring_y);
	return NULL;
}

static void reused_pthread_id(void)
{
	int attempt;

	for (attempt = 0; attempt < ATTEMPTS; attempt++) {
		struct b_result res = { 0 };
		pthread_t a, b;
		int init_ret = -1;

		T_STEP("thread A: create ring X (SINGLE_ISSUER|R_DISABLED)");
		CHECK_EQ(pthread_create(&a, NULL, thread_a, &init_ret), 0);
		CHECK_EQ(pthread_join(a, NULL), 0);
		if (init_ret == -EINVAL)
			T_SKIP("the kernel lacks IORING_SETUP_SINGLE_ISSUER");
		CHECK_OK(init_ret);

		CHECK_EQ(pthread_create(&b, NULL, thread_b, &res), 0);
		CHECK_EQ(pthread_join(b, NULL), 0);
		if (res.same_id)
			return;
	}
	T_SKIP_OR_FAIL("glibc never gave thread B thread A's pthread_t "
			    "in %d attempts", ATTEMPTS);
}

static const struct t_case cases[] = {
	{ "reused_pthread_id", reused_pthread_id },
};

T_CASES_MAIN(cases)
