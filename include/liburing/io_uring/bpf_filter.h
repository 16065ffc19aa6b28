/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * rsuring: io_uring's BPF request filters, as in the Linux uapi
 * (include/uapi/linux/io_uring/bpf_filter.h); registered with
 * io_uring_register_bpf_filter() and io_uring_register_bpf_filter_task().
 *
 * Names, values and layouts are the kernel's; the include guard is the
 * kernel's too, so only one copy is ever seen.
 */
#ifndef LINUX_IO_URING_BPF_FILTER_H
#define LINUX_IO_URING_BPF_FILTER_H

#include <linux/types.h>

/* The context a filter program runs on, one per request. */
struct io_uring_bpf_ctx {
	__u64	user_data;
	__u8	opcode;
	__u8	sqe_flags;
	__u8	pdu_size;		/* bytes of opcode-specific data below */
	__u8	pad[5];
	union {
		struct {		/* IORING_OP_SOCKET */
			__u32	family;
			__u32	type;
			__u32	protocol;
		} socket;
		struct {		/* IORING_OP_OPENAT* */
			__u64	flags;
			__u64	mode;
			__u64	resolve;
		} open;
	};
};

/* io_uring_bpf_filter.flags */
enum {
	/* deny every opcode that has no filter of its own */
	IO_URING_BPF_FILTER_DENY_REST	= 1,
	/* fail registration when pdu_size disagrees with the kernel's */
	IO_URING_BPF_FILTER_SZ_STRICT	= 2,
};

struct io_uring_bpf_filter {
	__u32	opcode;			/* IORING_OP_* the filter applies to */
	__u32	flags;			/* IO_URING_BPF_FILTER_* */
	__u32	filter_len;		/* number of instructions */
	__u8	pdu_size;		/* pdu size the filter expects */
	__u8	resv[3];
	__u64	filter_ptr;		/* address of the instructions */
	__u64	resv2[5];
};

/* io_uring_bpf.cmd_type */
enum {
	IO_URING_BPF_CMD_FILTER	= 1,
};

struct io_uring_bpf {
	__u16	cmd_type;		/* IO_URING_BPF_CMD_* */
	__u16	cmd_flags;		/* none defined yet */
	__u32	resv;
	union {
		struct io_uring_bpf_filter	filter;
	};
};

#endif /* LINUX_IO_URING_BPF_FILTER_H */
