/* SPDX-License-Identifier: MIT */
/*
 * Issue 10, deviation 3: the application keeps every registered-ring slot.
 *
 * The kernel gives each thread 16 slots for registered ring fds. liburing
 * never takes one on its own, so a thread that already has 8
 * SINGLE_ISSUER rings can still register 16 rings of its own: 16 calls to
 * io_uring_register_ring_fd return 1 each. Every ring, registered or not,
 * keeps working, and each registration can be dropped again.
 */
#define T_CASE_PROGRAM 1
#define T_WATCHDOG_SECS 10
#include "../rsuring_test.h"

#define SINGLE_ISSUER_RINGS 8
#define APP_RINGS 16 /* the kernel's per-thread table size */

static void init_flags(struct io_uring *ring, unsigned flags)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	ret = io_uring_queue_init_params(4, ring, &p);
	if (ret == -EINVAL && (flags & IORING_SETUP_SINGLE_ISSUER))
		T_SKIP("the kernel lacks IORING_SETUP_SINGLE_ISSUER");
	CHECK_OK(ret);
}

static void round_trip(struct io_uring *ring, __u64 data, const char *what)
{
	struct t_cqe c;
	int ret;

	t_queue_nop(ring, data);
	ret = io_uring_submit(ring);
	if (ret != 1)
		T_FAIL("%s: io_uring_submit returned %d, expected 1", what, ret);
	c = t_reap_within(ring, 2000, what);
	CHECK_EQ(c.user_data, data);
	CHECK_EQ(c.res, 0);
}

/*
 * 8 SINGLE_ISSUER rings exist; the application then creates 16 rings
 * with @app_flags and registers each one's fd.
 */
static void sixteen_of_sixteen(unsigned app_flags)
{
	struct io_uring si[SINGLE_ISSUER_RINGS], app[APP_RINGS];
	char what[64];
	int i, ok = 0, first_error = 1, first_failed = 0;

	T_STEP("create the SINGLE_ISSUER rings");
	for (i = 0; i < SINGLE_ISSUER_RINGS; i++)
		init_flags(&si[i], IORING_SETUP_SINGLE_ISSUER);
	T_STEP("create the application's rings");
	for (i = 0; i < APP_RINGS; i++)
		init_flags(&app[i], app_flags);

	T_STEP("io_uring_register_ring_fd on each application ring");
	for (i = 0; i < APP_RINGS; i++) {
		int ret = io_uring_register_ring_fd(&app[i]);

		if (ret == 1) {
			ok++;
		} else if (first_error == 1) {
			first_error = ret;
			first_failed = i + 1;
		}
	}
	if (ok != APP_RINGS)
		T_FAIL("io_uring_register_ring_fd succeeded %d times of %d "
		       "(ring %d returned %d, %s)", ok, APP_RINGS, first_failed,
		       first_error, strerror(-first_error));

	T_STEP("every ring still works");
	for (i = 0; i < APP_RINGS; i++) {
		snprintf(what, sizeof(what), "application ring %d", i);
		round_trip(&app[i], 0x100 + (unsigned)i, what);
	}
	for (i = 0; i < SINGLE_ISSUER_RINGS; i++) {
		snprintf(what, sizeof(what), "SINGLE_ISSUER ring %d", i);
		round_trip(&si[i], 0x200 + (unsigned)i, what);
	}

	T_STEP("io_uring_unregister_ring_fd on each application ring");
	for (i = 0; i < APP_RINGS; i++)
		CHECK_EQ(io_uring_unregister_ring_fd(&app[i]), 1);
	for (i = 0; i < APP_RINGS; i++) {
		snprintf(what, sizeof(what), "unregistered ring %d", i);
		round_trip(&app[i], 0x300 + (unsigned)i, what);
		io_uring_queue_exit(&app[i]);
	}
	for (i = 0; i < SINGLE_ISSUER_RINGS; i++)
		io_uring_queue_exit(&si[i]);
}

static void plain_app_rings(void)
{
	sixteen_of_sixteen(0);
}

static void single_issuer_app_rings(void)
{
	sixteen_of_sixteen(IORING_SETUP_SINGLE_ISSUER);
}

/* The application fills the table first; SINGLE_ISSUER rings created
 * afterwards work all the same. */
static void table_full_before_single_issuer_rings(void)
{
	struct io_uring si[SINGLE_ISSUER_RINGS], app[APP_RINGS];
	char what[64];
	int i;

	for (i = 0; i < APP_RINGS; i++) {
		init_flags(&app[i], 0);
		CHECK_EQ(io_uring_register_ring_fd(&app[i]), 1);
	}
	for (i = 0; i < SINGLE_ISSUER_RINGS; i++) {
		init_flags(&si[i], IORING_SETUP_SINGLE_ISSUER);
		snprintf(what, sizeof(what), "SINGLE_ISSUER ring %d", i);
		round_trip(&si[i], 0x400 + (unsigned)i, what);
	}
	for (i = 0; i < APP_RINGS; i++) {
		snprintf(what, sizeof(what), "application ring %d", i);
		round_trip(&app[i], 0x500 + (unsigned)i, what);
		CHECK_EQ(io_uring_unregister_ring_fd(&app[i]), 1);
		io_uring_queue_exit(&app[i]);
	}
	for (i = 0; i < SINGLE_ISSUER_RINGS; i++)
		io_uring_queue_exit(&si[i]);
}

static const struct t_case cases[] = {
	{ "plain_app_rings", plain_app_rings },
	{ "single_issuer_app_rings", single_issuer_app_rings },
	{ "table_full_before_single_issuer_rings",
	  table_full_before_single_issuer_rings },
};

T_CASES_MAIN(cases)
