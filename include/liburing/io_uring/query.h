/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * rsuring: the io_uring query interface of the Linux uapi
 * (include/uapi/linux/io_uring/query.h), used with IORING_REGISTER_QUERY
 * and io_uring_register_query().
 *
 * Names, values and layouts are the kernel's; the include guard is the
 * kernel's too, so only one copy is ever seen.
 */
#ifndef LINUX_IO_URING_QUERY_H
#define LINUX_IO_URING_QUERY_H

#include <linux/types.h>

/*
 * One query in a chain: the kernel fills size bytes at query_data for
 * query_op, sets result, and follows next_entry (0 ends the chain).
 */
struct io_uring_query_hdr {
	__u64	next_entry;		/* address of the next header, or 0 */
	__u64	query_data;		/* address of the result structure */
	__u32	query_op;		/* IO_URING_QUERY_* */
	__u32	size;			/* bytes available at query_data */
	__s32	result;			/* 0 or -errno, set by the kernel */
	__u32	__resv[3];
};

enum {
	IO_URING_QUERY_OPCODES	= 0,	/* struct io_uring_query_opcode */
	IO_URING_QUERY_ZCRX	= 1,	/* struct io_uring_query_zcrx */
	IO_URING_QUERY_SCQ	= 2,	/* struct io_uring_query_scq */

	__IO_URING_QUERY_MAX,
};

/* What the kernel supports; answered without a ring. */
struct io_uring_query_opcode {
	__u32	nr_request_opcodes;	/* count of IORING_OP_* */
	__u32	nr_register_opcodes;	/* count of IORING_(UN)REGISTER_* */
	__u64	feature_flags;		/* IORING_FEAT_* mask */
	__u64	ring_setup_flags;	/* IORING_SETUP_* mask */
	__u64	enter_flags;		/* IORING_ENTER_* mask */
	__u64	sqe_flags;		/* IOSQE_* mask */
	__u32	nr_query_opcodes;	/* count of IO_URING_QUERY_* */
	__u32	__pad;
};

/* Zero-copy receive capabilities. */
struct io_uring_query_zcrx {
	__u64	register_flags;		/* ZCRX_REG_* mask */
	__u64	area_flags;		/* IORING_ZCRX_AREA_* mask */
	__u32	nr_ctrl_opcodes;	/* count of ZCRX_CTRL_* */
	__u32	features;		/* ZCRX_FEATURE_* mask */
	__u32	rq_hdr_size;		/* refill ring header size */
	__u32	rq_hdr_alignment;	/* and its alignment */
	__u64	__resv2;
};

/* SQ/CQ ring header geometry (for rings in user-provided memory). */
struct io_uring_query_scq {
	__u64	hdr_size;
	__u64	hdr_alignment;
};

#endif /* LINUX_IO_URING_QUERY_H */
