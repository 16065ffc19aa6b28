/* SPDX-License-Identifier: MIT */
/*
 * What io_uring_submit returns on a transparent ring, against a plain one.
 *
 *   counts <plain|transparent> batches|midfail
 *
 * batches: NOP batches of 1, 7, 8, 9, 32 and 64 SQEs on a 64-entry ring,
 *   each once right after the previous batch (SQ thread awake) and once
 *   after 30 ms (asleep with RSURING_SQPOLL_IDLE_MS=10): io_uring_submit
 *   returns the batch size and io_uring_sq_ready() is 0 on return, as on a
 *   plain ring.
 * midfail: 4 NOPs, the 2nd with an invalid opcode. A plain ring stops at
 *   the failing SQE: io_uring_submit returns 2, the next call 2 more. The
 *   program submits until io_uring_sq_ready() is 0 and prints
 *     midfail_submits=<each return, comma-separated>
 *     midfail_cqes=<user_data:res of each CQE in arrival order>
 *   for the driver to compare; it checks itself only what any ring must
 *   give: the returns add up to 4 and the 4 CQEs are 3 NOPs with res 0 and
 *   the bad one with -EINVAL.
 * Under RSURING_SQPOLL=1 run it as an unprivileged user.
 */
#ifndef SQ_DEBIAN
#include <rsuring.h>
#endif
/* SQ threads start and stop asynchronously: a longer hang allowance. */
#define T_WATCHDOG_SECS 25
#include "../rsuring_test.h"

#define ENTRIES 64
#define BAD_OPCODE 250

static void batches(struct io_uring *ring)
{
	static const unsigned sizes[] = { 1, 7, 8, 9, 32, 64 };
	unsigned i, pass;
	int ret;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			unsigned n = sizes[i];

			T_STEP("batch of %u NOPs, SQ thread %s", n, pass ? "asleep" : "awake");
			if (pass)
				t_msleep(30);
			t_queue_nops(ring, n, (unsigned long long)n * 1000);
			ret = io_uring_submit(ring);
			CHECK_MSG(ret == (int)n, "batch of %u NOPs (%s): io_uring_submit = %d (%s), "
				  "want %u as on a plain ring", n, pass ? "idle" : "awake", ret,
				  ret < 0 ? strerror(-ret) : "", n);
			CHECK_MSG(io_uring_sq_ready(ring) == 0,
				  "batch of %u: io_uring_sq_ready() = %u after io_uring_submit",
				  n, io_uring_sq_ready(ring));
			reap_nops(ring, n);
		}
	}
	printf("batches: 1,7,8,9,32,64 x awake,asleep\n");
}

static void midfail(struct io_uring *ring)
{
	char submits[200] = "", cqes[200] = "";
	size_t off = 0, coff = 0;
	int total = 0, rounds = 0, ret, i, bad_seen = 0;

	T_STEP("4 SQEs, the 2nd with opcode %d", BAD_OPCODE);
	for (i = 1; i <= 4; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK(sqe != NULL);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, (__u64)i);
		if (i == 2)
			sqe->opcode = BAD_OPCODE;
	}
	do {
		ret = io_uring_submit(ring);
		CHECK_MSG(ret >= 0, "io_uring_submit = %d (%s)", ret, strerror(-ret));
		off += (size_t)snprintf(submits + off, sizeof(submits) - off, "%s%d",
					rounds ? "," : "", ret);
		total += ret;
		rounds++;
		CHECK_MSG(rounds <= 8, "io_uring_sq_ready() still %u after %d submits",
			  io_uring_sq_ready(ring), rounds);
	} while (io_uring_sq_ready(ring) != 0);
	/* One more: nothing left, as on a plain ring. */
	ret = io_uring_submit(ring);
	off += (size_t)snprintf(submits + off, sizeof(submits) - off, ",%d", ret);
	printf("midfail_submits=%s\n", submits);
	CHECK_MSG(total == 4, "the submits (%s) add up to %d, want 4", submits, total);

	for (i = 0; i < 4; i++) {
		struct __kernel_timespec ts = { 1, 0 };
		struct io_uring_cqe *cqe = NULL;

		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		CHECK_MSG(ret == 0, "CQE %d: %d (%s)", i, ret, strerror(-ret));
		coff += (size_t)snprintf(cqes + coff, sizeof(cqes) - coff, "%s%llu:%d",
					 i ? "," : "", (unsigned long long)cqe->user_data,
					 cqe->res);
		if (cqe->user_data == 2) {
			CHECK_MSG(cqe->res == -EINVAL, "invalid opcode: res %d", cqe->res);
			bad_seen = 1;
		} else {
			CHECK_MSG(cqe->res == 0, "NOP %llu: res %d",
				  (unsigned long long)cqe->user_data, cqe->res);
		}
		io_uring_cqe_seen(ring, cqe);
	}
	printf("midfail_cqes=%s\n", cqes);
	CHECK_MSG(bad_seen, "no CQE for the invalid SQE (%s)", cqes);
	CHECK_EQ(io_uring_cq_ready(ring), 0);
}

int main(int argc, char **argv)
{
	int transparent = expect_transparent(argc, argv);
	const char *scenario = argc > 2 ? argv[2] : "";
	struct io_uring ring;

	if (transparent)
		check_unprivileged();
	CONTRACT_RING(&ring, ENTRIES, transparent);
	if (!strcmp(scenario, "batches")) {
		batches(&ring);
	} else if (!strcmp(scenario, "midfail")) {
		midfail(&ring);
	} else {
		fprintf(stderr, "unknown scenario \"%s\"\n", scenario);
		return 2;
	}
	io_uring_queue_exit(&ring);
	printf("counts %s: ok\n", scenario);
	return 0;
}
