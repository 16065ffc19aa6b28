/*
 * The io_uring interface by kernel version: which setup flag, feature bit,
 * io_uring_enter flag, io_uring_register opcode and SQE opcode each kernel
 * release introduced. The one table c_tests/oldkernel/supervise.c emulates
 * older kernels from (and docs/compatibility.md quotes).
 *
 * Versions are written MAJOR * 100 + MINOR (515 = 5.15). Sources: the
 * kernel's include/uapi/linux/io_uring.h history and liburing's man pages
 * io_uring_setup(2), io_uring_enter(2), io_uring_register(2), which give
 * "available since" for each name. The values are the uapi's.
 */
#ifndef OLDKERNEL_KERNELS_H
#define OLDKERNEL_KERNELS_H

enum since_kind { SETUP_FLAG, FEATURE, ENTER_FLAG, REGISTER_OP, SQE_OP };

struct since {
	enum since_kind kind;
	const char *name;
	unsigned value;	/* a bit for flags and features, the number for ops */
	unsigned since;	/* first kernel version that knows it */
};

#define B(n) (1U << (n))

static const struct since SINCE[] = {
	/* io_uring_setup(2) flags */
	{ SETUP_FLAG, "IOPOLL", B(0), 501 },
	{ SETUP_FLAG, "SQPOLL", B(1), 501 },
	{ SETUP_FLAG, "SQ_AFF", B(2), 501 },
	{ SETUP_FLAG, "CQSIZE", B(3), 505 },
	{ SETUP_FLAG, "CLAMP", B(4), 506 },
	{ SETUP_FLAG, "ATTACH_WQ", B(5), 506 },
	{ SETUP_FLAG, "R_DISABLED", B(6), 510 },
	{ SETUP_FLAG, "SUBMIT_ALL", B(7), 518 },
	{ SETUP_FLAG, "COOP_TASKRUN", B(8), 519 },
	{ SETUP_FLAG, "TASKRUN_FLAG", B(9), 519 },
	{ SETUP_FLAG, "SQE128", B(10), 519 },
	{ SETUP_FLAG, "CQE32", B(11), 519 },
	{ SETUP_FLAG, "SINGLE_ISSUER", B(12), 600 },
	{ SETUP_FLAG, "DEFER_TASKRUN", B(13), 601 },
	{ SETUP_FLAG, "NO_MMAP", B(14), 605 },
	{ SETUP_FLAG, "REGISTERED_FD_ONLY", B(15), 605 },
	{ SETUP_FLAG, "NO_SQARRAY", B(16), 606 },
	{ SETUP_FLAG, "HYBRID_IOPOLL", B(17), 613 },
	{ SETUP_FLAG, "CQE_MIXED", B(18), 618 },

	/* params.features */
	{ FEATURE, "SINGLE_MMAP", B(0), 504 },
	{ FEATURE, "NODROP", B(1), 505 },
	{ FEATURE, "SUBMIT_STABLE", B(2), 505 },
	{ FEATURE, "RW_CUR_POS", B(3), 506 },
	{ FEATURE, "CUR_PERSONALITY", B(4), 506 },
	{ FEATURE, "FAST_POLL", B(5), 507 },
	{ FEATURE, "POLL_32BITS", B(6), 509 },
	{ FEATURE, "SQPOLL_NONFIXED", B(7), 511 },
	{ FEATURE, "EXT_ARG", B(8), 511 },
	{ FEATURE, "NATIVE_WORKERS", B(9), 512 },
	{ FEATURE, "RSRC_TAGS", B(10), 513 },
	{ FEATURE, "CQE_SKIP", B(11), 517 },
	{ FEATURE, "LINKED_FILE", B(12), 517 },
	{ FEATURE, "REG_REG_RING", B(13), 603 },
	{ FEATURE, "RECVSEND_BUNDLE", B(14), 610 },
	{ FEATURE, "MIN_TIMEOUT", B(15), 612 },
	{ FEATURE, "RW_ATTR", B(16), 614 },
	{ FEATURE, "NO_IOWAIT", B(17), 615 },

	/* io_uring_enter(2) flags */
	{ ENTER_FLAG, "GETEVENTS", B(0), 501 },
	{ ENTER_FLAG, "SQ_WAKEUP", B(1), 501 },
	{ ENTER_FLAG, "SQ_WAIT", B(2), 510 },
	{ ENTER_FLAG, "EXT_ARG", B(3), 511 },
	{ ENTER_FLAG, "REGISTERED_RING", B(4), 518 },
	{ ENTER_FLAG, "ABS_TIMER", B(5), 612 },
	{ ENTER_FLAG, "EXT_ARG_REG", B(6), 613 },
	{ ENTER_FLAG, "NO_IOWAIT", B(7), 615 },

	/* io_uring_register(2) opcodes; the USE_REGISTERED_RING bit (1 << 31)
	 * of the opcode is accepted from 6.3, with REG_REG_RING. */
	{ REGISTER_OP, "REGISTER_BUFFERS", 0, 501 },
	{ REGISTER_OP, "UNREGISTER_BUFFERS", 1, 501 },
	{ REGISTER_OP, "REGISTER_FILES", 2, 501 },
	{ REGISTER_OP, "UNREGISTER_FILES", 3, 501 },
	{ REGISTER_OP, "REGISTER_EVENTFD", 4, 502 },
	{ REGISTER_OP, "UNREGISTER_EVENTFD", 5, 502 },
	{ REGISTER_OP, "REGISTER_FILES_UPDATE", 6, 505 },
	{ REGISTER_OP, "REGISTER_EVENTFD_ASYNC", 7, 506 },
	{ REGISTER_OP, "REGISTER_PROBE", 8, 506 },
	{ REGISTER_OP, "REGISTER_PERSONALITY", 9, 506 },
	{ REGISTER_OP, "UNREGISTER_PERSONALITY", 10, 506 },
	{ REGISTER_OP, "REGISTER_RESTRICTIONS", 11, 510 },
	{ REGISTER_OP, "REGISTER_ENABLE_RINGS", 12, 510 },
	{ REGISTER_OP, "REGISTER_FILES2", 13, 513 },
	{ REGISTER_OP, "REGISTER_FILES_UPDATE2", 14, 513 },
	{ REGISTER_OP, "REGISTER_BUFFERS2", 15, 513 },
	{ REGISTER_OP, "REGISTER_BUFFERS_UPDATE", 16, 513 },
	{ REGISTER_OP, "REGISTER_IOWQ_AFF", 17, 514 },
	{ REGISTER_OP, "UNREGISTER_IOWQ_AFF", 18, 514 },
	{ REGISTER_OP, "REGISTER_IOWQ_MAX_WORKERS", 19, 515 },
	{ REGISTER_OP, "REGISTER_RING_FDS", 20, 518 },
	{ REGISTER_OP, "UNREGISTER_RING_FDS", 21, 518 },
	{ REGISTER_OP, "REGISTER_PBUF_RING", 22, 519 },
	{ REGISTER_OP, "UNREGISTER_PBUF_RING", 23, 519 },
	{ REGISTER_OP, "REGISTER_SYNC_CANCEL", 24, 600 },
	{ REGISTER_OP, "REGISTER_FILE_ALLOC_RANGE", 25, 600 },
	{ REGISTER_OP, "REGISTER_PBUF_STATUS", 26, 608 },
	{ REGISTER_OP, "REGISTER_NAPI", 27, 609 },
	{ REGISTER_OP, "UNREGISTER_NAPI", 28, 609 },
	{ REGISTER_OP, "REGISTER_CLOCK", 29, 612 },
	{ REGISTER_OP, "REGISTER_CLONE_BUFFERS", 30, 612 },
	{ REGISTER_OP, "REGISTER_SEND_MSG_RING", 31, 613 },
	{ REGISTER_OP, "REGISTER_ZCRX_IFQ", 32, 615 },
	{ REGISTER_OP, "REGISTER_RESIZE_RINGS", 33, 613 },
	{ REGISTER_OP, "REGISTER_MEM_REGION", 34, 613 },

	/* SQE opcodes: the last one each kernel knows is what its
	 * IORING_REGISTER_PROBE reports as last_op. */
	{ SQE_OP, "LINKAT", 39, 515 },
	{ SQE_OP, "MSG_RING", 40, 518 },
	{ SQE_OP, "URING_CMD", 46, 519 },
	{ SQE_OP, "SEND_ZC", 47, 600 },
	{ SQE_OP, "SENDMSG_ZC", 48, 601 },
	{ SQE_OP, "FUTEX_WAITV", 53, 607 },
	{ SQE_OP, "FIXED_FD_INSTALL", 54, 608 },
	{ SQE_OP, "FTRUNCATE", 55, 609 },
	{ SQE_OP, "LISTEN", 57, 611 },
	{ SQE_OP, "WRITEV_FIXED", 61, 615 },
};

#undef B

#define REG_REG_RING_SINCE 603
#define USE_REGISTERED_RING_BIT (1U << 31)

/* The kernels the supervisor emulates (others may be named as N.M). */
static const unsigned EMULATED[] = { 515, 601, 606 };

#endif
