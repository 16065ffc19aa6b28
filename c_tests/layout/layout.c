/* SPDX-License-Identifier: MIT */
/*
 * Layout probe: prints the size and alignment of every public liburing
 * structure and the offset and size of each of its fields, one line each,
 * in a fixed order.
 *
 * tests/layout.rs builds this file twice, once against the system's liburing
 * header (the reference) and once against rsuring's include/, and requires
 * identical output.  The file therefore uses only names both headers have.
 * Fields the kernel renamed after liburing 2.3 (same place, new name) are
 * printed under a combined label and resolved per header below; fields
 * that only the newer uapi has are checked against the field they alias
 * with static assertions, which print nothing.
 */
#include <stddef.h>
#include <stdio.h>
#include <liburing.h>

#define T_NO_WATCHDOG
#include "../rsuring_test.h"

/*
 * A header whose uapi has IORING_FEAT_MIN_TIMEOUT (6.12) also carries the
 * earlier renames: user_addr (6.5), buf_reg.flags (6.4), sync_cancel
 * opcode (6.6), getevents_arg.min_wait_usec (6.12).
 */
#ifdef IORING_FEAT_MIN_TIMEOUT
#define NEW_UAPI 1
#define SQOFF_USER_ADDR		user_addr
#define CQOFF_USER_ADDR		user_addr
#define BUF_REG_FLAGS		flags
#define BUF_REG_TAIL		min_left
#define GETEVENTS_MIN_WAIT	min_wait_usec
#define SYNC_CANCEL_TAIL	opcode
#else
#define SQOFF_USER_ADDR		resv2
#define CQOFF_USER_ADDR		resv2
#define BUF_REG_FLAGS		pad
#define BUF_REG_TAIL		resv
#define GETEVENTS_MIN_WAIT	pad
#define SYNC_CANCEL_TAIL	pad
#endif

#define MEMBER_SIZE(type, m)	sizeof(((type *) 0)->m)

/* whole structure */
#define S(type)								\
	printf("%s: size %zu align %zu\n", #type, sizeof(type),	\
	       (size_t) __alignof__(type))

/* field: offset and size */
#define F(type, m)							\
	printf("%s.%s: offset %zu size %zu\n", #type, #m,		\
	       offsetof(type, m), MEMBER_SIZE(type, m))

/* field under a fixed label: offset and size */
#define FL(type, label, m)						\
	printf("%s.%s: offset %zu size %zu\n", #type, label,		\
	       offsetof(type, m), MEMBER_SIZE(type, m))

/* field whose size is not comparable (flexible array, retyped): offset */
#define FO(type, label, m)						\
	printf("%s.%s: offset %zu\n", #type, label, offsetof(type, m))

#define SAME_PLACE(type, a, b)						\
	_Static_assert(offsetof(type, a) == offsetof(type, b) &&	\
		       MEMBER_SIZE(type, a) == MEMBER_SIZE(type, b),	\
		       #type "." #a " must alias " #type "." #b)

#ifdef NEW_UAPI
/* SQE fields of the newer uapi overlay existing ones exactly. */
SAME_PLACE(struct io_uring_sqe, waitid_flags, rw_flags);
SAME_PLACE(struct io_uring_sqe, futex_flags, rw_flags);
SAME_PLACE(struct io_uring_sqe, install_fd_flags, rw_flags);
SAME_PLACE(struct io_uring_sqe, nop_flags, rw_flags);
SAME_PLACE(struct io_uring_sqe, pipe_flags, rw_flags);
SAME_PLACE(struct io_uring_sqe, optlen, file_index);
SAME_PLACE(struct io_uring_sqe, zcrx_ifq_idx, file_index);
SAME_PLACE(struct io_uring_sqe, optval, addr3);
SAME_PLACE(struct io_uring_sqe, attr_ptr, addr3);
SAME_PLACE(struct io_uring_sqe, attr_type_mask, __pad2);
_Static_assert(offsetof(struct io_uring_sqe, level) ==
	       offsetof(struct io_uring_sqe, addr), "sqe.level placement");
_Static_assert(offsetof(struct io_uring_sqe, optname) ==
	       offsetof(struct io_uring_sqe, addr) + 4, "sqe.optname placement");
#endif

int main(void)
{
	/* ---- library ring state ---- */
	S(struct io_uring_sq);
	F(struct io_uring_sq, khead);
	F(struct io_uring_sq, ktail);
	F(struct io_uring_sq, kring_mask);
	F(struct io_uring_sq, kring_entries);
	F(struct io_uring_sq, kflags);
	F(struct io_uring_sq, kdropped);
	F(struct io_uring_sq, array);
	F(struct io_uring_sq, sqes);
	F(struct io_uring_sq, sqe_head);
	F(struct io_uring_sq, sqe_tail);
	F(struct io_uring_sq, ring_sz);
	F(struct io_uring_sq, ring_ptr);
	F(struct io_uring_sq, ring_mask);
	F(struct io_uring_sq, ring_entries);
	F(struct io_uring_sq, pad);

	S(struct io_uring_cq);
	F(struct io_uring_cq, khead);
	F(struct io_uring_cq, ktail);
	F(struct io_uring_cq, kring_mask);
	F(struct io_uring_cq, kring_entries);
	F(struct io_uring_cq, kflags);
	F(struct io_uring_cq, koverflow);
	F(struct io_uring_cq, cqes);
	F(struct io_uring_cq, ring_sz);
	F(struct io_uring_cq, ring_ptr);
	F(struct io_uring_cq, ring_mask);
	F(struct io_uring_cq, ring_entries);
	F(struct io_uring_cq, pad);

	S(struct io_uring);
	F(struct io_uring, sq);
	F(struct io_uring, cq);
	F(struct io_uring, flags);
	F(struct io_uring, ring_fd);
	F(struct io_uring, features);
	F(struct io_uring, enter_ring_fd);
	F(struct io_uring, int_flags);
	F(struct io_uring, pad);
	F(struct io_uring, pad2);

	/* ---- submission / completion entries ---- */
	S(struct io_uring_sqe);
	F(struct io_uring_sqe, opcode);
	F(struct io_uring_sqe, flags);
	F(struct io_uring_sqe, ioprio);
	F(struct io_uring_sqe, fd);
	F(struct io_uring_sqe, off);
	F(struct io_uring_sqe, addr2);
	F(struct io_uring_sqe, cmd_op);
	F(struct io_uring_sqe, __pad1);
	F(struct io_uring_sqe, addr);
	F(struct io_uring_sqe, splice_off_in);
	F(struct io_uring_sqe, len);
	F(struct io_uring_sqe, rw_flags);
	F(struct io_uring_sqe, fsync_flags);
	F(struct io_uring_sqe, poll_events);
	F(struct io_uring_sqe, poll32_events);
	F(struct io_uring_sqe, sync_range_flags);
	F(struct io_uring_sqe, msg_flags);
	F(struct io_uring_sqe, timeout_flags);
	F(struct io_uring_sqe, accept_flags);
	F(struct io_uring_sqe, cancel_flags);
	F(struct io_uring_sqe, open_flags);
	F(struct io_uring_sqe, statx_flags);
	F(struct io_uring_sqe, fadvise_advice);
	F(struct io_uring_sqe, splice_flags);
	F(struct io_uring_sqe, rename_flags);
	F(struct io_uring_sqe, unlink_flags);
	F(struct io_uring_sqe, hardlink_flags);
	F(struct io_uring_sqe, xattr_flags);
	F(struct io_uring_sqe, msg_ring_flags);
	F(struct io_uring_sqe, uring_cmd_flags);
	F(struct io_uring_sqe, user_data);
	F(struct io_uring_sqe, buf_index);
	F(struct io_uring_sqe, buf_group);
	F(struct io_uring_sqe, personality);
	F(struct io_uring_sqe, splice_fd_in);
	F(struct io_uring_sqe, file_index);
	F(struct io_uring_sqe, addr_len);
	F(struct io_uring_sqe, __pad3);
	F(struct io_uring_sqe, addr3);
	F(struct io_uring_sqe, __pad2);
	FO(struct io_uring_sqe, "cmd", cmd);

	S(struct io_uring_cqe);
	F(struct io_uring_cqe, user_data);
	F(struct io_uring_cqe, res);
	F(struct io_uring_cqe, flags);
	FO(struct io_uring_cqe, "big_cqe", big_cqe);

	/* ---- setup ---- */
	S(struct io_sqring_offsets);
	F(struct io_sqring_offsets, head);
	F(struct io_sqring_offsets, tail);
	F(struct io_sqring_offsets, ring_mask);
	F(struct io_sqring_offsets, ring_entries);
	F(struct io_sqring_offsets, flags);
	F(struct io_sqring_offsets, dropped);
	F(struct io_sqring_offsets, array);
	F(struct io_sqring_offsets, resv1);
	FL(struct io_sqring_offsets, "user_addr|resv2", SQOFF_USER_ADDR);

	S(struct io_cqring_offsets);
	F(struct io_cqring_offsets, head);
	F(struct io_cqring_offsets, tail);
	F(struct io_cqring_offsets, ring_mask);
	F(struct io_cqring_offsets, ring_entries);
	F(struct io_cqring_offsets, overflow);
	F(struct io_cqring_offsets, cqes);
	F(struct io_cqring_offsets, flags);
	F(struct io_cqring_offsets, resv1);
	FL(struct io_cqring_offsets, "user_addr|resv2", CQOFF_USER_ADDR);

	S(struct io_uring_params);
	F(struct io_uring_params, sq_entries);
	F(struct io_uring_params, cq_entries);
	F(struct io_uring_params, flags);
	F(struct io_uring_params, sq_thread_cpu);
	F(struct io_uring_params, sq_thread_idle);
	F(struct io_uring_params, features);
	F(struct io_uring_params, wq_fd);
	F(struct io_uring_params, resv);
	F(struct io_uring_params, sq_off);
	F(struct io_uring_params, cq_off);

	/* ---- register arguments ---- */
	S(struct io_uring_probe_op);
	F(struct io_uring_probe_op, op);
	F(struct io_uring_probe_op, resv);
	F(struct io_uring_probe_op, flags);
	F(struct io_uring_probe_op, resv2);

	S(struct io_uring_probe);
	F(struct io_uring_probe, last_op);
	F(struct io_uring_probe, ops_len);
	F(struct io_uring_probe, resv);
	F(struct io_uring_probe, resv2);
	FO(struct io_uring_probe, "ops", ops);

	S(struct io_uring_files_update);
	F(struct io_uring_files_update, offset);
	F(struct io_uring_files_update, resv);
	F(struct io_uring_files_update, fds);

	S(struct io_uring_rsrc_register);
	F(struct io_uring_rsrc_register, nr);
	F(struct io_uring_rsrc_register, flags);
	F(struct io_uring_rsrc_register, resv2);
	F(struct io_uring_rsrc_register, data);
	F(struct io_uring_rsrc_register, tags);

	S(struct io_uring_rsrc_update);
	F(struct io_uring_rsrc_update, offset);
	F(struct io_uring_rsrc_update, resv);
	F(struct io_uring_rsrc_update, data);

	S(struct io_uring_rsrc_update2);
	F(struct io_uring_rsrc_update2, offset);
	F(struct io_uring_rsrc_update2, resv);
	F(struct io_uring_rsrc_update2, data);
	F(struct io_uring_rsrc_update2, tags);
	F(struct io_uring_rsrc_update2, nr);
	F(struct io_uring_rsrc_update2, resv2);

	S(struct io_uring_notification_slot);
	F(struct io_uring_notification_slot, tag);
	F(struct io_uring_notification_slot, resv);

	S(struct io_uring_notification_register);
	F(struct io_uring_notification_register, nr_slots);
	F(struct io_uring_notification_register, resv);
	F(struct io_uring_notification_register, resv2);
	F(struct io_uring_notification_register, data);
	F(struct io_uring_notification_register, resv3);

	S(struct io_uring_restriction);
	F(struct io_uring_restriction, opcode);
	F(struct io_uring_restriction, register_op);
	F(struct io_uring_restriction, sqe_op);
	F(struct io_uring_restriction, sqe_flags);
	F(struct io_uring_restriction, resv);
	F(struct io_uring_restriction, resv2);

	S(struct io_uring_buf);
	F(struct io_uring_buf, addr);
	F(struct io_uring_buf, len);
	F(struct io_uring_buf, bid);
	F(struct io_uring_buf, resv);

	S(struct io_uring_buf_ring);
	F(struct io_uring_buf_ring, resv1);
	F(struct io_uring_buf_ring, resv2);
	F(struct io_uring_buf_ring, resv3);
	F(struct io_uring_buf_ring, tail);
	FO(struct io_uring_buf_ring, "bufs", bufs);

	S(struct io_uring_buf_reg);
	F(struct io_uring_buf_reg, ring_addr);
	F(struct io_uring_buf_reg, ring_entries);
	F(struct io_uring_buf_reg, bgid);
	FL(struct io_uring_buf_reg, "flags|pad", BUF_REG_FLAGS);
	FO(struct io_uring_buf_reg, "min_left|resv", BUF_REG_TAIL);

	S(struct io_uring_getevents_arg);
	F(struct io_uring_getevents_arg, sigmask);
	F(struct io_uring_getevents_arg, sigmask_sz);
	FL(struct io_uring_getevents_arg, "min_wait_usec|pad",
	   GETEVENTS_MIN_WAIT);
	F(struct io_uring_getevents_arg, ts);

	S(struct io_uring_sync_cancel_reg);
	F(struct io_uring_sync_cancel_reg, addr);
	F(struct io_uring_sync_cancel_reg, fd);
	F(struct io_uring_sync_cancel_reg, flags);
	F(struct io_uring_sync_cancel_reg, timeout);
	FO(struct io_uring_sync_cancel_reg, "opcode|pad", SYNC_CANCEL_TAIL);

	S(struct io_uring_file_index_range);
	F(struct io_uring_file_index_range, off);
	F(struct io_uring_file_index_range, len);
	F(struct io_uring_file_index_range, resv);

	S(struct io_uring_recvmsg_out);
	F(struct io_uring_recvmsg_out, namelen);
	F(struct io_uring_recvmsg_out, controllen);
	F(struct io_uring_recvmsg_out, payloadlen);
	F(struct io_uring_recvmsg_out, flags);

	return 0;
}
