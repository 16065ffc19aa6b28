/* SPDX-License-Identifier: MIT */
/*
 * Every submit variant returns only after the kernel consumed the SQEs
 * (the wait variants with wait_nr 1 and 0):
 * right after the call io_uring_sq_space_left() is the whole SQ and a full
 * SQ's worth of io_uring_get_sqe() calls succeed. Each variant runs with 3
 * and with 8 (a full SQ) NOPs queued, with the SQ thread awake and after
 * 30 ms (asleep with RSURING_SQPOLL_IDLE_MS=10), and prints
 *   ret <variant> k=<queued> <awake|idle> = <return value>
 * so the driver can compare the transparent run with a plain one.
 *
 *   consume <plain|transparent>
 *
 * Registered wait regions need a ring created disabled (which
 * RSURING_SQPOLL=1 leaves plain); the variant runs on such a ring when the
 * kernel refuses the region on an enabled one, and the program prints
 *   wait_reg_ring=<enabled|disabled> <plain|sqpoll>
 * Under RSURING_SQPOLL=1 run it as an unprivileged user.
 */
#include <rsuring.h>
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#include <sys/mman.h>

#define ENTRIES 8

static struct __kernel_timespec one_second(void)
{
	struct __kernel_timespec ts = { 1, 0 };

	return ts;
}

static int v_submit(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr)
{
	(void)cqe;
	(void)wait_nr;
	return io_uring_submit(ring);
}

static int v_submit_and_wait(struct io_uring *ring, struct io_uring_cqe **cqe,
			     unsigned wait_nr)
{
	(void)cqe;
	return io_uring_submit_and_wait(ring, wait_nr);
}

static int v_timeout_null(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr)
{
	return io_uring_submit_and_wait_timeout(ring, cqe, wait_nr, NULL, NULL);
}

static int v_timeout_ts(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr)
{
	struct __kernel_timespec ts = one_second();

	return io_uring_submit_and_wait_timeout(ring, cqe, wait_nr, &ts, NULL);
}

static int v_min_timeout(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr)
{
	struct __kernel_timespec ts = one_second();

	return io_uring_submit_and_wait_min_timeout(ring, cqe, wait_nr, &ts, 1000, NULL);
}

static int v_get_events(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr)
{
	(void)cqe;
	(void)wait_nr;
	return io_uring_submit_and_get_events(ring);
}

static int v_wait_reg(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr)
{
	return io_uring_submit_and_wait_reg(ring, cqe, wait_nr, 0);
}

struct variant {
	const char *name;
	int (*call)(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr);
	unsigned wait_nr;
};

/* wait_nr 0 as well as 1: waiting for a CQE hides a submit that returns
 * before the SQ thread has consumed the rest of the batch. */
static const struct variant variants[] = {
	{ "io_uring_submit", v_submit, 0 },
	{ "io_uring_submit_and_wait(1)", v_submit_and_wait, 1 },
	{ "io_uring_submit_and_wait(0)", v_submit_and_wait, 0 },
	{ "io_uring_submit_and_wait_timeout(NULL,1)", v_timeout_null, 1 },
	{ "io_uring_submit_and_wait_timeout(NULL,0)", v_timeout_null, 0 },
	{ "io_uring_submit_and_wait_timeout(1s,1)", v_timeout_ts, 1 },
	{ "io_uring_submit_and_wait_timeout(1s,0)", v_timeout_ts, 0 },
	{ "io_uring_submit_and_wait_min_timeout(1s,1)", v_min_timeout, 1 },
	{ "io_uring_submit_and_wait_min_timeout(1s,0)", v_min_timeout, 0 },
	{ "io_uring_submit_and_get_events", v_get_events, 0 },
};

static int failures;

/* A broken contract is reported and counted, and the program goes on (after
 * letting the SQ drain) so that one run shows every variant. */
static void round_trip(struct io_uring *ring, const struct variant *v, unsigned k, int idle)
{
	const char *state = idle ? "asleep" : "awake";
	struct io_uring_cqe *cqe = NULL;
	unsigned space, i;
	unsigned long long end;
	int ret;

	T_STEP("%s with %u NOPs queued, SQ thread %s", v->name, k, state);
	if (idle)
		t_msleep(30);
	t_queue_nops(ring, k, 100);
	ret = v->call(ring, &cqe, v->wait_nr);
	space = io_uring_sq_space_left(ring);
	printf("ret %s k=%u %s = %d\n", v->name, k, idle ? "idle" : "awake", ret);
	if (ret < 0) {
		fprintf(stderr, "FAIL %s with %u NOPs queued (SQ thread %s): %d (%s)\n",
			v->name, k, state, ret, strerror(-ret));
		failures++;
		io_uring_submit(ring);
	} else if (space != ring->sq.ring_entries) {
		fprintf(stderr, "FAIL %s returned %d with %u NOPs queued (SQ thread %s) but "
			"only %u of %u SQ entries were free on return: it returned before the "
			"kernel consumed the SQEs\n", v->name, ret, k, state, space,
			ring->sq.ring_entries);
		failures++;
	}
	end = t_now_ms() + 2000;
	while (io_uring_sq_ready(ring) && t_now_ms() < end)
		t_msleep(1);
	for (i = 0; i < ring->sq.ring_entries; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK_MSG(sqe != NULL, "after %s: io_uring_get_sqe %u of %u failed", v->name,
			  i + 1, ring->sq.ring_entries);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 200 + i);
	}
	ret = io_uring_submit(ring);
	CHECK_MSG(ret == (int)ring->sq.ring_entries, "after %s: io_uring_submit of a full SQ "
		  "= %d", v->name, ret);
	reap_nops(ring, k + ring->sq.ring_entries);
	CHECK_EQ(io_uring_cq_ready(ring), 0);
}

static void run_variant(struct io_uring *ring, const struct variant *v)
{
	static const unsigned ks[] = { 3, ENTRIES };
	unsigned i;
	int idle;

	for (idle = 0; idle < 2; idle++)
		for (i = 0; i < 2; i++)
			round_trip(ring, v, ks[i], idle);
}

/* A ring with one registered wait argument (1 s timeout) at index 0. */
static int wait_reg_ring(struct io_uring *ring, struct io_uring_reg_wait *reg,
			 unsigned setup_flags)
{
	struct io_uring_region_desc rd;
	struct io_uring_mem_region_reg mr;
	int ret;

	ret = io_uring_queue_init(ENTRIES, ring, setup_flags);
	CHECK_MSG(ret == 0, "wait_reg ring: setup = %d (%s)", ret, strerror(-ret));
	memset(&rd, 0, sizeof(rd));
	rd.user_addr = (__u64)(uintptr_t)reg;
	rd.size = (__u64)sysconf(_SC_PAGESIZE);
	rd.flags = IORING_MEM_REGION_TYPE_USER;
	memset(&mr, 0, sizeof(mr));
	mr.region_uptr = (__u64)(uintptr_t)&rd;
	mr.flags = IORING_MEM_REGION_REG_WAIT_ARG;
	ret = io_uring_register_region(ring, &mr);
	if (ret == 0 && (setup_flags & IORING_SETUP_R_DISABLED))
		CHECK_EQ(io_uring_enable_rings(ring), 0);
	if (ret != 0)
		io_uring_queue_exit(ring);
	return ret;
}

static void registered_wait(int transparent)
{
	static const struct variant regs[] = {
		{ "io_uring_submit_and_wait_reg(1)", v_wait_reg, 1 },
		{ "io_uring_submit_and_wait_reg(0)", v_wait_reg, 0 },
	};
	long page = sysconf(_SC_PAGESIZE);
	struct io_uring_reg_wait *reg;
	struct io_uring ring;
	const char *how = "enabled";
	int ret;

	T_STEP("registered wait region");
	reg = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	CHECK(reg != MAP_FAILED);
	memset(reg, 0, (size_t)page);
	reg[0].ts.tv_sec = 1;
	reg[0].flags = IORING_REG_WAIT_TS;
	ret = wait_reg_ring(&ring, reg, 0);
	if (ret == -EINVAL) {
		how = "disabled";
		ret = wait_reg_ring(&ring, reg, IORING_SETUP_R_DISABLED);
	}
	if (ret == -EINVAL) {
		printf("wait_reg=unsupported\n");
		munmap(reg, (size_t)page);
		return;
	}
	CHECK_MSG(ret == 0, "io_uring_register_region = %d (%s)", ret, strerror(-ret));
	printf("wait_reg_ring=%s %s\n", how, ring_sq_thread(ring.ring_fd) > 0 ? "sqpoll" : "plain");
	/* A disabled ring is left plain by RSURING_SQPOLL=1; an enabled one
	 * follows the expectation. */
	if (!strcmp(how, "enabled"))
		CHECK_RING_MODE(&ring, transparent);
	run_variant(&ring, &regs[0]);
	run_variant(&ring, &regs[1]);
	io_uring_queue_exit(&ring);
	munmap(reg, (size_t)page);
}

int main(int argc, char **argv)
{
	int transparent = expect_transparent(argc, argv);
	struct io_uring ring;
	unsigned i;

	if (transparent)
		check_unprivileged();
	CONTRACT_RING(&ring, ENTRIES, transparent);
	CHECK_EQ(ring.sq.ring_entries, ENTRIES);
	if (!(ring.features & IORING_FEAT_MIN_TIMEOUT))
		T_SKIP("the kernel lacks IORING_FEAT_MIN_TIMEOUT");
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		run_variant(&ring, &variants[i]);
	io_uring_queue_exit(&ring);
	registered_wait(transparent);
	if (failures)
		T_FAIL("%d submit calls broke the contract (listed above)", failures);
	printf("consume: ok\n");
	return 0;
}
