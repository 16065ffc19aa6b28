/* SPDX-License-Identifier: MIT */
/*
 * Probe: io_uring_get_probe (no ring) and io_uring_get_probe_ring agree;
 * NOP/READV/WRITEV/READ/TIMEOUT are supported, an out-of-range opcode (and
 * one far beyond last_op) is not; io_uring_register_probe directly;
 * io_uring_free_probe.
 */
#include "../rsuring_test.h"

static void check_probe(struct io_uring_probe *p)
{
	CHECK(p != NULL);
	CHECK_GE(p->last_op, IORING_OP_TIMEOUT);
	CHECK(io_uring_opcode_supported(p, IORING_OP_NOP));
	CHECK(io_uring_opcode_supported(p, IORING_OP_READV));
	CHECK(io_uring_opcode_supported(p, IORING_OP_WRITEV));
	CHECK(io_uring_opcode_supported(p, IORING_OP_READ));
	CHECK(io_uring_opcode_supported(p, IORING_OP_TIMEOUT));
	CHECK(!io_uring_opcode_supported(p, p->last_op + 1));
	CHECK(!io_uring_opcode_supported(p, 200));
	CHECK(!io_uring_opcode_supported(p, 255));
	CHECK(!io_uring_opcode_supported(p, 1000));
	CHECK(p->ops[IORING_OP_NOP].flags & IO_URING_OP_SUPPORTED);
	CHECK_EQ(p->ops[IORING_OP_READV].op, IORING_OP_READV);
}

int main(void)
{
	struct io_uring_probe *p1, *p2, *p3;
	struct io_uring ring;
	int i;

	T_STEP("get_probe");
	p1 = io_uring_get_probe();
	if (!p1)
		T_SKIP("probe not supported");
	check_probe(p1);

	T_STEP("get_probe_ring");
	t_queue_init(&ring, 4, 0);
	p2 = io_uring_get_probe_ring(&ring);
	check_probe(p2);
	CHECK_EQ(p1->last_op, p2->last_op);
	CHECK_EQ(p1->ops_len, p2->ops_len);
	for (i = 0; i <= p1->last_op; i++)
		CHECK_EQ(io_uring_opcode_supported(p1, i),
			 io_uring_opcode_supported(p2, i));

	T_STEP("register_probe directly");
	p3 = calloc(1, sizeof(*p3) + 256 * sizeof(struct io_uring_probe_op));
	CHECK(p3 != NULL);
	CHECK_OK(io_uring_register_probe(&ring, p3, 256));
	CHECK_EQ(p3->last_op, p1->last_op);
	CHECK(p3->ops[IORING_OP_NOP].flags & IO_URING_OP_SUPPORTED);
	free(p3);

	T_STEP("free_probe");
	io_uring_free_probe(p1);
	io_uring_free_probe(p2);
	io_uring_queue_exit(&ring);
	return T_EXIT_PASS;
}
