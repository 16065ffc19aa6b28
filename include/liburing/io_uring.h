/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * rsuring: the Linux io_uring user-space ABI, as of Linux 6.18.
 *
 * Every name and value here is the kernel's (include/uapi/linux/io_uring.h).
 * The include guard is the one the kernel's header and liburing's copy of it
 * use, so whichever copy a translation unit sees first wins and the other is
 * skipped instead of clashing.
 *
 * Nothing in this file may change layout: the kernel reads and writes these
 * structures directly.
 */
#ifndef LINUX_IO_URING_H
#define LINUX_IO_URING_H

#include <linux/fs.h>		/* __kernel_rwf_t */
#include <linux/types.h>

/*
 * struct __kernel_timespec.  A build without <linux/time_types.h> defines
 * the skip macro and provides the structure itself.
 */
#ifndef UAPI_LINUX_IO_URING_H_SKIP_LINUX_TIME_TYPES_H
#include <linux/time_types.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Submission queue entry (64 bytes; 128 with IORING_SETUP_SQE128)
 * ------------------------------------------------------------------------ */

struct io_uring_sqe {
	__u8	opcode;			/* IORING_OP_* */
	__u8	flags;			/* IOSQE_* */
	__u16	ioprio;			/* priority, or per-opcode flags */
	__s32	fd;			/* target file (or fixed-file index) */
	union {
		__u64	off;		/* file offset */
		__u64	addr2;
		struct {
			__u32	cmd_op;		/* IORING_OP_URING_CMD sub-op */
			__u32	__pad1;
		};
	};
	union {
		__u64	addr;		/* buffer, iovec array, path, ... */
		__u64	splice_off_in;
		struct {
			__u32	level;		/* socket option level */
			__u32	optname;	/* socket option name */
		};
	};
	__u32	len;			/* byte count, iovec count, ... */
	union {				/* per-opcode flags */
		__kernel_rwf_t	rw_flags;
		__u32		fsync_flags;
		__u16		poll_events;	/* legacy 16-bit poll mask */
		__u32		poll32_events;	/* halfword-swapped on BE */
		__u32		sync_range_flags;
		__u32		msg_flags;
		__u32		timeout_flags;
		__u32		accept_flags;
		__u32		cancel_flags;
		__u32		open_flags;
		__u32		statx_flags;
		__u32		fadvise_advice;
		__u32		splice_flags;
		__u32		rename_flags;
		__u32		unlink_flags;
		__u32		hardlink_flags;
		__u32		xattr_flags;
		__u32		msg_ring_flags;
		__u32		uring_cmd_flags;
		__u32		waitid_flags;
		__u32		futex_flags;
		__u32		install_fd_flags;
		__u32		nop_flags;
		__u32		pipe_flags;
	};
	__u64	user_data;		/* echoed back in the CQE */
	/* packed so that the ARM OABI does not pad this union to 4 bytes */
	union {
		__u16	buf_index;	/* registered buffer index */
		__u16	buf_group;	/* provided-buffer group id */
	} __attribute__((packed));
	__u16	personality;		/* registered credentials id, 0 = none */
	union {
		__s32	splice_fd_in;
		__u32	file_index;	/* direct-descriptor slot + 1 */
		__u32	zcrx_ifq_idx;
		__u32	optlen;
		struct {
			__u16	addr_len;
			__u16	__pad3[1];
		};
	};
	union {
		struct {
			__u64	addr3;
			__u64	__pad2[1];
		};
		struct {
			__u64	attr_ptr;	/* -> struct io_uring_attr_pi */
			__u64	attr_type_mask;	/* IORING_RW_ATTR_FLAG_* */
		};
		__u64	optval;
		/* SQE128 rings: 80 bytes of command payload start here */
		__u8	cmd[0];
	};
};

/* sqe->attr_type_mask */
#define IORING_RW_ATTR_FLAG_PI	(1U << 0)

/* Protection-information attribute for read/write (attr_ptr) */
struct io_uring_attr_pi {
	__u16	flags;
	__u16	app_tag;
	__u32	len;
	__u64	addr;
	__u64	seed;
	__u64	rsvd;
};

/*
 * sqe->file_index value asking the kernel to pick a free direct-descriptor
 * slot itself; the chosen slot comes back in cqe->res.
 */
#define IORING_FILE_INDEX_ALLOC		(~0U)

enum io_uring_sqe_flags_bit {
	IOSQE_FIXED_FILE_BIT,
	IOSQE_IO_DRAIN_BIT,
	IOSQE_IO_LINK_BIT,
	IOSQE_IO_HARDLINK_BIT,
	IOSQE_ASYNC_BIT,
	IOSQE_BUFFER_SELECT_BIT,
	IOSQE_CQE_SKIP_SUCCESS_BIT,
};

/* sqe->flags */
#define IOSQE_FIXED_FILE	(1U << IOSQE_FIXED_FILE_BIT)	/* fd is a fixed-file index */
#define IOSQE_IO_DRAIN		(1U << IOSQE_IO_DRAIN_BIT)	/* wait for all prior requests */
#define IOSQE_IO_LINK		(1U << IOSQE_IO_LINK_BIT)	/* chain to the next SQE */
#define IOSQE_IO_HARDLINK	(1U << IOSQE_IO_HARDLINK_BIT)	/* chain that survives errors */
#define IOSQE_ASYNC		(1U << IOSQE_ASYNC_BIT)		/* go straight to io-wq */
#define IOSQE_BUFFER_SELECT	(1U << IOSQE_BUFFER_SELECT_BIT)	/* pick from sqe->buf_group */
#define IOSQE_CQE_SKIP_SUCCESS	(1U << IOSQE_CQE_SKIP_SUCCESS_BIT) /* no CQE on success */

/* ------------------------------------------------------------------------
 * io_uring_setup(2) flags (io_uring_params.flags)
 * ------------------------------------------------------------------------ */

#define IORING_SETUP_IOPOLL		(1U << 0)	/* busy-poll for completions */
#define IORING_SETUP_SQPOLL		(1U << 1)	/* kernel thread polls the SQ */
#define IORING_SETUP_SQ_AFF		(1U << 2)	/* sq_thread_cpu is valid */
#define IORING_SETUP_CQSIZE		(1U << 3)	/* cq_entries is valid */
#define IORING_SETUP_CLAMP		(1U << 4)	/* clamp sizes instead of failing */
#define IORING_SETUP_ATTACH_WQ		(1U << 5)	/* share wq_fd's async backend */
#define IORING_SETUP_R_DISABLED		(1U << 6)	/* start disabled */
#define IORING_SETUP_SUBMIT_ALL		(1U << 7)	/* keep submitting after an error */
/* Run completion task work at the next kernel entry instead of by IPI. */
#define IORING_SETUP_COOP_TASKRUN	(1U << 8)
/* Raise IORING_SQ_TASKRUN when task work is pending (COOP/DEFER_TASKRUN). */
#define IORING_SETUP_TASKRUN_FLAG	(1U << 9)
#define IORING_SETUP_SQE128		(1U << 10)	/* 128-byte SQEs */
#define IORING_SETUP_CQE32		(1U << 11)	/* 32-byte CQEs */
/* Only one task ever submits to this ring. */
#define IORING_SETUP_SINGLE_ISSUER	(1U << 12)
/* Defer task work until the submitter asks for completions. */
#define IORING_SETUP_DEFER_TASKRUN	(1U << 13)
/* The application supplies the ring memory (sq_off/cq_off.user_addr). */
#define IORING_SETUP_NO_MMAP		(1U << 14)
/* setup returns a registered-ring index, not an fd (no fd is installed). */
#define IORING_SETUP_REGISTERED_FD_ONLY	(1U << 15)
/* No SQ index array: the SQ ring is indexed directly. */
#define IORING_SETUP_NO_SQARRAY		(1U << 16)
/* Sleep-then-poll hybrid IOPOLL. */
#define IORING_SETUP_HYBRID_IOPOLL	(1U << 17)
/* 16- and 32-byte CQEs on one ring; big ones carry IORING_CQE_F_32. */
#define IORING_SETUP_CQE_MIXED		(1U << 18)
/* 64- and 128-byte SQEs on one ring; big ones use a *128 opcode. */
#define IORING_SETUP_SQE_MIXED		(1U << 19)
/*
 * Every submission starts over at SQ slot 0: the head and tail indices go
 * unused and stay 0.  Only with NO_SQARRAY, never with SQPOLL.
 */
#define IORING_SETUP_SQ_REWIND		(1U << 20)

/* ------------------------------------------------------------------------
 * Opcodes (sqe->opcode)
 * ------------------------------------------------------------------------ */

enum io_uring_op {
	IORING_OP_NOP,
	IORING_OP_READV,
	IORING_OP_WRITEV,
	IORING_OP_FSYNC,
	IORING_OP_READ_FIXED,
	IORING_OP_WRITE_FIXED,
	IORING_OP_POLL_ADD,
	IORING_OP_POLL_REMOVE,
	IORING_OP_SYNC_FILE_RANGE,
	IORING_OP_SENDMSG,
	IORING_OP_RECVMSG,
	IORING_OP_TIMEOUT,
	IORING_OP_TIMEOUT_REMOVE,
	IORING_OP_ACCEPT,
	IORING_OP_ASYNC_CANCEL,
	IORING_OP_LINK_TIMEOUT,
	IORING_OP_CONNECT,
	IORING_OP_FALLOCATE,
	IORING_OP_OPENAT,
	IORING_OP_CLOSE,
	IORING_OP_FILES_UPDATE,
	IORING_OP_STATX,
	IORING_OP_READ,
	IORING_OP_WRITE,
	IORING_OP_FADVISE,
	IORING_OP_MADVISE,
	IORING_OP_SEND,
	IORING_OP_RECV,
	IORING_OP_OPENAT2,
	IORING_OP_EPOLL_CTL,
	IORING_OP_SPLICE,
	IORING_OP_PROVIDE_BUFFERS,
	IORING_OP_REMOVE_BUFFERS,
	IORING_OP_TEE,
	IORING_OP_SHUTDOWN,
	IORING_OP_RENAMEAT,
	IORING_OP_UNLINKAT,
	IORING_OP_MKDIRAT,
	IORING_OP_SYMLINKAT,
	IORING_OP_LINKAT,
	IORING_OP_MSG_RING,
	IORING_OP_FSETXATTR,
	IORING_OP_SETXATTR,
	IORING_OP_FGETXATTR,
	IORING_OP_GETXATTR,
	IORING_OP_SOCKET,
	IORING_OP_URING_CMD,
	IORING_OP_SEND_ZC,
	IORING_OP_SENDMSG_ZC,
	IORING_OP_READ_MULTISHOT,
	IORING_OP_WAITID,
	IORING_OP_FUTEX_WAIT,
	IORING_OP_FUTEX_WAKE,
	IORING_OP_FUTEX_WAITV,
	IORING_OP_FIXED_FD_INSTALL,
	IORING_OP_FTRUNCATE,
	IORING_OP_BIND,
	IORING_OP_LISTEN,
	IORING_OP_RECV_ZC,
	IORING_OP_EPOLL_WAIT,
	IORING_OP_READV_FIXED,
	IORING_OP_WRITEV_FIXED,
	IORING_OP_PIPE,
	IORING_OP_NOP128,
	IORING_OP_URING_CMD128,

	/* one past the highest opcode; keep last */
	IORING_OP_LAST,
};

/* ------------------------------------------------------------------------
 * Per-opcode flags
 * ------------------------------------------------------------------------ */

/* sqe->uring_cmd_flags (the top 8 bits are reserved for the kernel) */
#define IORING_URING_CMD_FIXED		(1U << 0)	/* use sqe->buf_index */
#define IORING_URING_CMD_MASK		IORING_URING_CMD_FIXED

/* sqe->fsync_flags */
#define IORING_FSYNC_DATASYNC		(1U << 0)

/*
 * sqe->timeout_flags.  IORING_TIMEOUT_IMMEDIATE_ARG: sqe->addr is the
 * duration itself, in ns, not the address of a struct __kernel_timespec.
 */
#define IORING_TIMEOUT_ABS		(1U << 0)
#define IORING_TIMEOUT_UPDATE		(1U << 1)
#define IORING_TIMEOUT_BOOTTIME		(1U << 2)
#define IORING_TIMEOUT_REALTIME		(1U << 3)
#define IORING_LINK_TIMEOUT_UPDATE	(1U << 4)
#define IORING_TIMEOUT_ETIME_SUCCESS	(1U << 5)
#define IORING_TIMEOUT_MULTISHOT	(1U << 6)
#define IORING_TIMEOUT_IMMEDIATE_ARG	(1U << 7)
#define IORING_TIMEOUT_CLOCK_MASK	(IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME)
#define IORING_TIMEOUT_UPDATE_MASK	(IORING_TIMEOUT_UPDATE | IORING_LINK_TIMEOUT_UPDATE)

/* sqe->splice_flags: splice(2) flags plus "splice_fd_in is a fixed file" */
#define SPLICE_F_FD_IN_FIXED		(1U << 31)

/*
 * IORING_OP_POLL_ADD / POLL_REMOVE command flags.  The poll mask occupies
 * the per-opcode flags word, so these travel in sqe->len.
 */
#define IORING_POLL_ADD_MULTI		(1U << 0)	/* multishot; CQEs carry F_MORE */
#define IORING_POLL_UPDATE_EVENTS	(1U << 1)	/* update the mask of sqe->addr */
#define IORING_POLL_UPDATE_USER_DATA	(1U << 2)	/* update the user_data of sqe->addr */
#define IORING_POLL_ADD_LEVEL		(1U << 3)	/* level triggered */

/* IORING_OP_ASYNC_CANCEL / IORING_REGISTER_SYNC_CANCEL match flags */
#define IORING_ASYNC_CANCEL_ALL		(1U << 0)	/* every match, not just the first */
#define IORING_ASYNC_CANCEL_FD		(1U << 1)	/* match on fd */
#define IORING_ASYNC_CANCEL_ANY		(1U << 2)	/* match anything */
#define IORING_ASYNC_CANCEL_FD_FIXED	(1U << 3)	/* fd is a fixed-file index */
#define IORING_ASYNC_CANCEL_USERDATA	(1U << 4)	/* match on user_data */
#define IORING_ASYNC_CANCEL_OP		(1U << 5)	/* match on opcode */

/* send/sendmsg/recv/recvmsg flags, carried in sqe->ioprio */
#define IORING_RECVSEND_POLL_FIRST	(1U << 0)	/* arm poll before trying */
#define IORING_RECV_MULTISHOT		(1U << 1)	/* multishot receive */
#define IORING_RECVSEND_FIXED_BUF	(1U << 2)	/* registered buffer in buf_index */
#define IORING_SEND_ZC_REPORT_USAGE	(1U << 3)	/* report copy fallback in NOTIF res */
#define IORING_RECVSEND_BUNDLE		(1U << 4)	/* use several provided buffers */
#define IORING_SEND_VECTORIZED		(1U << 5)	/* send[_zc] takes an iovec array */

/* Bit set in the res of a zero-copy NOTIF CQE when the data was copied. */
#define IORING_NOTIF_USAGE_ZC_COPIED	(1U << 31)

/* accept flags, carried in sqe->ioprio */
#define IORING_ACCEPT_MULTISHOT		(1U << 0)
#define IORING_ACCEPT_DONTWAIT		(1U << 1)
#define IORING_ACCEPT_POLL_FIRST	(1U << 2)

/* IORING_OP_MSG_RING command, carried in sqe->addr */
enum io_uring_msg_ring_flags {
	IORING_MSG_DATA,	/* post a CQE: res = sqe->len, user_data = sqe->off */
	IORING_MSG_SEND_FD,	/* pass a direct descriptor to the target ring */
};

/* sqe->msg_ring_flags */
#define IORING_MSG_RING_CQE_SKIP	(1U << 0)	/* no CQE on the target ring */
#define IORING_MSG_RING_FLAGS_PASS	(1U << 1)	/* sqe->file_index -> cqe->flags */

/* sqe->install_fd_flags (IORING_OP_FIXED_FD_INSTALL) */
#define IORING_FIXED_FD_NO_CLOEXEC	(1U << 0)

/* sqe->nop_flags */
#define IORING_NOP_INJECT_RESULT	(1U << 0)
#define IORING_NOP_CQE32		(1U << 5)

/* ------------------------------------------------------------------------
 * Completion queue entry (16 bytes; 32 with IORING_SETUP_CQE32)
 * ------------------------------------------------------------------------ */

struct io_uring_cqe {
	__u64	user_data;	/* copied from the SQE */
	__s32	res;		/* result, or -errno */
	__u32	flags;		/* IORING_CQE_F_* */

	/* CQE32 rings (and F_32 entries on mixed rings): 16 extra bytes */
	__u64	big_cqe[];
};

/* cqe->flags */
#define IORING_CQE_F_BUFFER		(1U << 0)	/* upper 16 bits hold the buffer id */
#define IORING_CQE_F_MORE		(1U << 1)	/* more CQEs follow for this SQE */
#define IORING_CQE_F_SOCK_NONEMPTY	(1U << 2)	/* socket still has data */
#define IORING_CQE_F_NOTIF		(1U << 3)	/* zero-copy notification */
#define IORING_CQE_F_BUF_MORE		(1U << 4)	/* incremental buffer not used up */
#define IORING_CQE_F_SKIP		(1U << 5)	/* padding entry: ignore it */
#define IORING_CQE_F_32			(1U << 15)	/* 32-byte entry on a mixed ring */

#define IORING_CQE_BUFFER_SHIFT		16

/* ------------------------------------------------------------------------
 * mmap(2) offsets of the ring regions
 * ------------------------------------------------------------------------ */

#define IORING_OFF_SQ_RING		0ULL
#define IORING_OFF_CQ_RING		0x8000000ULL
#define IORING_OFF_SQES			0x10000000ULL
#define IORING_OFF_PBUF_RING		0x80000000ULL
#define IORING_OFF_PBUF_SHIFT		16
#define IORING_OFF_MMAP_MASK		0xf8000000ULL

/* Offsets of the SQ ring fields, filled in by io_uring_setup(2) */
struct io_sqring_offsets {
	__u32	head;
	__u32	tail;
	__u32	ring_mask;
	__u32	ring_entries;
	__u32	flags;
	__u32	dropped;
	__u32	array;
	__u32	resv1;
	__u64	user_addr;	/* IORING_SETUP_NO_MMAP: ring memory */
};

/* SQ ring flags word */
#define IORING_SQ_NEED_WAKEUP		(1U << 0)	/* SQPOLL thread sleeps */
#define IORING_SQ_CQ_OVERFLOW		(1U << 1)	/* CQEs wait in the overflow list */
#define IORING_SQ_TASKRUN		(1U << 2)	/* task work is pending */

/* Offsets of the CQ ring fields, filled in by io_uring_setup(2) */
struct io_cqring_offsets {
	__u32	head;
	__u32	tail;
	__u32	ring_mask;
	__u32	ring_entries;
	__u32	overflow;
	__u32	cqes;
	__u32	flags;
	__u32	resv1;
	__u64	user_addr;	/* IORING_SETUP_NO_MMAP: ring memory */
};

/* CQ ring flags word */
#define IORING_CQ_EVENTFD_DISABLED	(1U << 0)	/* no eventfd signalling */

/* ------------------------------------------------------------------------
 * io_uring_enter(2) flags
 * ------------------------------------------------------------------------ */

#define IORING_ENTER_GETEVENTS		(1U << 0)
#define IORING_ENTER_SQ_WAKEUP		(1U << 1)
#define IORING_ENTER_SQ_WAIT		(1U << 2)
#define IORING_ENTER_EXT_ARG		(1U << 3)
#define IORING_ENTER_REGISTERED_RING	(1U << 4)
#define IORING_ENTER_ABS_TIMER		(1U << 5)
#define IORING_ENTER_EXT_ARG_REG	(1U << 6)
#define IORING_ENTER_NO_IOWAIT		(1U << 7)

/* ------------------------------------------------------------------------
 * io_uring_setup(2) argument; updated in place by the kernel
 * ------------------------------------------------------------------------ */

struct io_uring_params {
	__u32	sq_entries;
	__u32	cq_entries;
	__u32	flags;
	__u32	sq_thread_cpu;
	__u32	sq_thread_idle;
	__u32	features;
	__u32	wq_fd;
	__u32	resv[3];
	struct io_sqring_offsets sq_off;
	struct io_cqring_offsets cq_off;
};

/* io_uring_params.features */
#define IORING_FEAT_SINGLE_MMAP		(1U << 0)
#define IORING_FEAT_NODROP		(1U << 1)
#define IORING_FEAT_SUBMIT_STABLE	(1U << 2)
#define IORING_FEAT_RW_CUR_POS		(1U << 3)
#define IORING_FEAT_CUR_PERSONALITY	(1U << 4)
#define IORING_FEAT_FAST_POLL		(1U << 5)
#define IORING_FEAT_POLL_32BITS		(1U << 6)
#define IORING_FEAT_SQPOLL_NONFIXED	(1U << 7)
#define IORING_FEAT_EXT_ARG		(1U << 8)
#define IORING_FEAT_NATIVE_WORKERS	(1U << 9)
#define IORING_FEAT_RSRC_TAGS		(1U << 10)
#define IORING_FEAT_CQE_SKIP		(1U << 11)
#define IORING_FEAT_LINKED_FILE		(1U << 12)
#define IORING_FEAT_REG_REG_RING	(1U << 13)
#define IORING_FEAT_RECVSEND_BUNDLE	(1U << 14)
#define IORING_FEAT_MIN_TIMEOUT		(1U << 15)
#define IORING_FEAT_RW_ATTR		(1U << 16)
#define IORING_FEAT_NO_IOWAIT		(1U << 17)

/* ------------------------------------------------------------------------
 * io_uring_register(2) opcodes
 * ------------------------------------------------------------------------ */

enum io_uring_register_op {
	IORING_REGISTER_BUFFERS			= 0,
	IORING_UNREGISTER_BUFFERS		= 1,
	IORING_REGISTER_FILES			= 2,
	IORING_UNREGISTER_FILES			= 3,
	IORING_REGISTER_EVENTFD			= 4,
	IORING_UNREGISTER_EVENTFD		= 5,
	IORING_REGISTER_FILES_UPDATE		= 6,
	IORING_REGISTER_EVENTFD_ASYNC		= 7,
	IORING_REGISTER_PROBE			= 8,
	IORING_REGISTER_PERSONALITY		= 9,
	IORING_UNREGISTER_PERSONALITY		= 10,
	IORING_REGISTER_RESTRICTIONS		= 11,
	IORING_REGISTER_ENABLE_RINGS		= 12,

	/* tagged resource variants */
	IORING_REGISTER_FILES2			= 13,
	IORING_REGISTER_FILES_UPDATE2		= 14,
	IORING_REGISTER_BUFFERS2		= 15,
	IORING_REGISTER_BUFFERS_UPDATE		= 16,

	/* io-wq worker CPU affinity */
	IORING_REGISTER_IOWQ_AFF		= 17,
	IORING_UNREGISTER_IOWQ_AFF		= 18,

	/* io-wq worker count limits */
	IORING_REGISTER_IOWQ_MAX_WORKERS	= 19,

	/* registered ring descriptors */
	IORING_REGISTER_RING_FDS		= 20,
	IORING_UNREGISTER_RING_FDS		= 21,

	/* ring-mapped provided buffers */
	IORING_REGISTER_PBUF_RING		= 22,
	IORING_UNREGISTER_PBUF_RING		= 23,

	/* synchronous cancelation */
	IORING_REGISTER_SYNC_CANCEL		= 24,

	/* fixed-file slot range used for IORING_FILE_INDEX_ALLOC */
	IORING_REGISTER_FILE_ALLOC_RANGE	= 25,

	/* head of a provided-buffer ring */
	IORING_REGISTER_PBUF_STATUS		= 26,

	/* NAPI busy polling */
	IORING_REGISTER_NAPI			= 27,
	IORING_UNREGISTER_NAPI			= 28,

	IORING_REGISTER_CLOCK			= 29,

	/* copy registered buffers from another ring */
	IORING_REGISTER_CLONE_BUFFERS		= 30,

	/* IORING_OP_MSG_RING without a source ring */
	IORING_REGISTER_SEND_MSG_RING		= 31,

	/* zero-copy receive interface queue */
	IORING_REGISTER_ZCRX_IFQ		= 32,

	/* resize the SQ/CQ rings */
	IORING_REGISTER_RESIZE_RINGS		= 33,

	IORING_REGISTER_MEM_REGION		= 34,

	/* capability queries (linux/io_uring/query.h) */
	IORING_REGISTER_QUERY			= 35,

	/* zero-copy receive control (enum zcrx_ctrl_op) */
	IORING_REGISTER_ZCRX_CTRL		= 36,

	/* BPF request filters */
	IORING_REGISTER_BPF_FILTER		= 37,

	/* one past the highest opcode; keep after the opcodes */
	IORING_REGISTER_LAST,

	/* OR-ed into the opcode: fd is a registered ring index */
	IORING_REGISTER_USE_REGISTERED_RING	= 1U << 31
};

/* io-wq worker classes (IORING_REGISTER_IOWQ_MAX_WORKERS array index) */
enum io_wq_type {
	IO_WQ_BOUND,
	IO_WQ_UNBOUND,
};

/* ------------------------------------------------------------------------
 * io_uring_register(2) arguments
 * ------------------------------------------------------------------------ */

/* Superseded by struct io_uring_rsrc_update; same layout. */
struct io_uring_files_update {
	__u32	offset;
	__u32	resv;
	__aligned_u64 fds;	/* __s32 * */
};

enum {
	/* region backed by user memory at user_addr */
	IORING_MEM_REGION_TYPE_USER		= 1,
};

struct io_uring_region_desc {
	__u64	user_addr;
	__u64	size;
	__u32	flags;
	__u32	id;
	__u64	mmap_offset;
	__u64	__resv[4];
};

enum {
	/* region holds struct io_uring_reg_wait entries */
	IORING_MEM_REGION_REG_WAIT_ARG		= 1,
};

/* IORING_REGISTER_MEM_REGION */
struct io_uring_mem_region_reg {
	__u64	region_uptr;	/* struct io_uring_region_desc * */
	__u64	flags;
	__u64	__resv[2];
};

/* Register an empty (all -1) table without passing an array. */
#define IORING_RSRC_REGISTER_SPARSE	(1U << 0)

/* IORING_REGISTER_FILES2 / IORING_REGISTER_BUFFERS2 */
struct io_uring_rsrc_register {
	__u32	nr;
	__u32	flags;
	__u64	resv2;
	__aligned_u64 data;
	__aligned_u64 tags;
};

/* IORING_REGISTER_FILES_UPDATE */
struct io_uring_rsrc_update {
	__u32	offset;
	__u32	resv;
	__aligned_u64 data;
};

/* IORING_REGISTER_FILES_UPDATE2 / IORING_REGISTER_BUFFERS_UPDATE */
struct io_uring_rsrc_update2 {
	__u32	offset;
	__u32	resv;
	__aligned_u64 data;
	__aligned_u64 tags;
	__u32	nr;
	__u32	resv2;
};

/*
 * Zero-copy send notification slots.  Never part of a released interface
 * after 6.1, but still present in that kernel's uapi and in liburing 2.3's
 * copy; kept so code written against those still compiles.
 */
struct io_uring_notification_slot {
	__u64	tag;
	__u64	resv[3];
};

struct io_uring_notification_register {
	__u32	nr_slots;
	__u32	resv;
	__u64	resv2;
	__u64	data;
	__u64	resv3;
};

/* Update value meaning "leave this fixed-file slot as it is". */
#define IORING_REGISTER_FILES_SKIP	(-2)

/* io_uring_probe_op.flags */
#define IO_URING_OP_SUPPORTED		(1U << 0)

struct io_uring_probe_op {
	__u8	op;
	__u8	resv;
	__u16	flags;		/* IO_URING_OP_* */
	__u32	resv2;
};

/* IORING_REGISTER_PROBE */
struct io_uring_probe {
	__u8	last_op;	/* highest opcode the kernel knows */
	__u8	ops_len;	/* entries filled in ops[] */
	__u16	resv;
	__u32	resv2[3];
	struct io_uring_probe_op ops[];
};

/* IORING_REGISTER_RESTRICTIONS */
struct io_uring_restriction {
	__u16	opcode;		/* IORING_RESTRICTION_* */
	union {
		__u8	register_op;	/* IORING_RESTRICTION_REGISTER_OP */
		__u8	sqe_op;		/* IORING_RESTRICTION_SQE_OP */
		__u8	sqe_flags;	/* IORING_RESTRICTION_SQE_FLAGS_* */
	};
	__u8	resv;
	__u32	resv2[3];
};

struct io_uring_task_restriction {
	__u16	flags;
	__u16	nr_res;
	__u32	resv[3];
	struct io_uring_restriction restrictions[0];
};

/* IORING_REGISTER_CLOCK */
struct io_uring_clock_register {
	__u32	clockid;
	__u32	__resv[3];
};

/* io_uring_clone_buffers.flags */
enum {
	IORING_REGISTER_SRC_REGISTERED	= (1U << 0),
	IORING_REGISTER_DST_REPLACE	= (1U << 1),
};

/* IORING_REGISTER_CLONE_BUFFERS */
struct io_uring_clone_buffers {
	__u32	src_fd;
	__u32	flags;
	__u32	src_off;
	__u32	dst_off;
	__u32	nr;
	__u32	pad[3];
};

/* One entry of a provided-buffer ring */
struct io_uring_buf {
	__u64	addr;
	__u32	len;
	__u16	bid;
	__u16	resv;
};

/*
 * A provided-buffer ring.  The tail shares storage with the resv field of
 * bufs[0], so the ring needs no header space of its own.
 */
struct io_uring_buf_ring {
	union {
		struct {
			__u64	resv1;
			__u32	resv2;
			__u16	resv3;
			__u16	tail;
		};
		struct io_uring_buf	bufs[0];
	};
};

/*
 * io_uring_buf_reg.flags:
 * IOU_PBUF_RING_MMAP	the kernel allocates the ring; map it at
 *			IORING_OFF_PBUF_RING | (bgid << IORING_OFF_PBUF_SHIFT)
 * IOU_PBUF_RING_INC	buffers may be consumed piecemeal (see
 *			IORING_CQE_F_BUF_MORE)
 */
enum io_uring_register_pbuf_ring_flags {
	IOU_PBUF_RING_MMAP	= 1,
	IOU_PBUF_RING_INC	= 2,
};

/* IORING_REGISTER_PBUF_RING / IORING_UNREGISTER_PBUF_RING */
struct io_uring_buf_reg {
	__u64	ring_addr;
	__u32	ring_entries;
	__u16	bgid;
	__u16	flags;		/* IOU_PBUF_RING_* */
	__u32	min_left;
	__u32	resv[5];
};

/* IORING_REGISTER_PBUF_STATUS */
struct io_uring_buf_status {
	__u32	buf_group;	/* in */
	__u32	head;		/* out */
	__u32	resv[8];
};

/* IORING_REGISTER_NAPI / IORING_UNREGISTER_NAPI */
struct io_uring_napi {
	__u32	busy_poll_to;
	__u8	prefer_busy_poll;
	__u8	pad[3];
	__u64	resv;
};

/* io_uring_restriction.opcode */
enum io_uring_register_restriction_op {
	IORING_RESTRICTION_REGISTER_OP		= 0,	/* allow a register opcode */
	IORING_RESTRICTION_SQE_OP		= 1,	/* allow an SQE opcode */
	IORING_RESTRICTION_SQE_FLAGS_ALLOWED	= 2,	/* allow these sqe flags */
	IORING_RESTRICTION_SQE_FLAGS_REQUIRED	= 3,	/* require these sqe flags */

	IORING_RESTRICTION_LAST
};

/* io_uring_reg_wait.flags */
enum {
	IORING_REG_WAIT_TS		= (1U << 0),
};

/*
 * Wait argument living in a registered region; io_uring_enter(2) with
 * IORING_ENTER_EXT_ARG_REG passes its index instead of a pointer.
 */
struct io_uring_reg_wait {
	struct __kernel_timespec	ts;
	__u32				min_wait_usec;
	__u32				flags;
	__u64				sigmask;
	__u32				sigmask_sz;
	__u32				pad[3];
	__u64				pad2[2];
};

/* io_uring_enter(2) argument with IORING_ENTER_EXT_ARG */
struct io_uring_getevents_arg {
	__u64	sigmask;
	__u32	sigmask_sz;
	__u32	min_wait_usec;
	__u64	ts;
};

/* IORING_REGISTER_SYNC_CANCEL */
struct io_uring_sync_cancel_reg {
	__u64				addr;
	__s32				fd;
	__u32				flags;
	struct __kernel_timespec	timeout;
	__u8				opcode;
	__u8				pad[7];
	__u64				pad2[3];
};

/* IORING_REGISTER_FILE_ALLOC_RANGE: slots [off, off + len) */
struct io_uring_file_index_range {
	__u32	off;
	__u32	len;
	__u64	resv;
};

/* Header the kernel writes in front of a multishot recvmsg payload */
struct io_uring_recvmsg_out {
	__u32	namelen;
	__u32	controllen;
	__u32	payloadlen;
	__u32	flags;
};

/* cmd_op values of IORING_OP_URING_CMD on a socket */
enum io_uring_socket_op {
	SOCKET_URING_OP_SIOCINQ		= 0,
	SOCKET_URING_OP_SIOCOUTQ,
	SOCKET_URING_OP_GETSOCKOPT,
	SOCKET_URING_OP_SETSOCKOPT,
	SOCKET_URING_OP_TX_TIMESTAMP,
	SOCKET_URING_OP_GETSOCKNAME,
};

/* SOCKET_URING_OP_TX_TIMESTAMP: timestamp kind is encoded in cqe->flags */
#define IORING_TIMESTAMP_HW_SHIFT	16
#define IORING_TIMESTAMP_TYPE_SHIFT	(IORING_TIMESTAMP_HW_SHIFT + 1)
#define IORING_CQE_F_TSTAMP_HW		((__u32)1 << IORING_TIMESTAMP_HW_SHIFT)

struct io_timespec {
	__u64	tv_sec;
	__u64	tv_nsec;
};

/* ------------------------------------------------------------------------
 * Zero-copy receive (zcrx)
 * ------------------------------------------------------------------------ */

/* Refill queue entry */
struct io_uring_zcrx_rqe {
	__u64	off;
	__u32	len;
	__u32	__pad;
};

/* Extra CQE half of an IORING_OP_RECV_ZC completion */
struct io_uring_zcrx_cqe {
	__u64	off;
	__u64	__pad;
};

/* The area id lives in the bits of an offset from this shift up. */
#define IORING_ZCRX_AREA_SHIFT		48
#define IORING_ZCRX_AREA_MASK		(~(((__u64)1 << IORING_ZCRX_AREA_SHIFT) - 1))

struct io_uring_zcrx_offsets {
	__u32	head;
	__u32	tail;
	__u32	rqes;
	__u32	__resv2;
	__u64	__resv[2];
};

enum io_uring_zcrx_area_flags {
	IORING_ZCRX_AREA_DMABUF		= 1,
};

struct io_uring_zcrx_area_reg {
	__u64	addr;
	__u64	len;
	__u64	rq_area_token;
	__u32	flags;
	__u32	dmabuf_fd;
	__u64	__resv2[2];
};

enum zcrx_reg_flags {
	ZCRX_REG_IMPORT		= 1,
	/* no net device: data is always copied, refills may need flushing */
	ZCRX_REG_NODEV		= 2,
};

enum zcrx_features {
	/* io_uring_zcrx_ifq_reg.rx_buf_len is honoured */
	ZCRX_FEATURE_RX_PAGE_SIZE	= 1 << 0,
};

/* IORING_REGISTER_ZCRX_IFQ */
struct io_uring_zcrx_ifq_reg {
	__u32	if_idx;
	__u32	if_rxq;
	__u32	rq_entries;
	__u32	flags;

	__u64	area_ptr;	/* struct io_uring_zcrx_area_reg * */
	__u64	region_ptr;	/* struct io_uring_region_desc * */

	struct io_uring_zcrx_offsets offsets;
	__u32	zcrx_id;
	__u32	rx_buf_len;
	__u64	__resv[3];
};

/* IORING_REGISTER_ZCRX_CTRL operations */
enum zcrx_ctrl_op {
	ZCRX_CTRL_FLUSH_RQ,
	ZCRX_CTRL_EXPORT,

	__ZCRX_CTRL_LAST,
};

struct zcrx_ctrl_flush_rq {
	__u64	__resv[6];
};

struct zcrx_ctrl_export {
	__u32	zcrx_fd;
	__u32	__resv1[11];
};

/* IORING_REGISTER_ZCRX_CTRL */
struct zcrx_ctrl {
	__u32	zcrx_id;
	__u32	op;		/* enum zcrx_ctrl_op */
	__u64	__resv[2];

	union {
		struct zcrx_ctrl_export		zc_export;
		struct zcrx_ctrl_flush_rq	zc_flush;
	};
};

#ifdef __cplusplus
}
#endif

#endif /* LINUX_IO_URING_H */
