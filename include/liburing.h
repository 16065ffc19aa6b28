/* SPDX-License-Identifier: MIT */
/*
 * rsuring: liburing-compatible C interface.
 *
 * Source compatible with liburing 2.x: the ring structures below are
 * byte-for-byte those of liburing (programs built against liburing's header
 * keep working with librsuring.so, and the other way round), and every
 * inline helper and macro of liburing's header is provided here with the
 * same name, signature and meaning.
 *
 * Layout of this file:
 *   1. system and uapi headers
 *   2. the ring structures (struct io_uring_sq, io_uring_cq, io_uring)
 *   3. the exported functions, generated from the Rust sources:
 *      liburing/rsuring_api.h
 *   4. inline helpers: CQ access, SQE preparation, ring state, SQE
 *      allocation, provided-buffer rings.
 *
 * The inline helpers are the hot path.  Every access to an index the
 * kernel also touches goes through liburing/barrier.h: the CQ tail is
 * loaded with acquire and the CQ head stored with release; the SQ head is
 * loaded with acquire when a kernel thread (SQPOLL) consumes the ring.
 */
#ifndef LIB_URING_H
#define LIB_URING_H

/*
 * liburing 2.x asked for GNU extensions (cpu_set_t in particular) when it
 * was the first header included; programs may depend on that.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* ------------------------------------------------------------------------
 * 1. Headers
 * ------------------------------------------------------------------------ */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/swab.h>
#include <linux/filter.h>	/* struct sock_filter, for BPF filters */

/* __kernel_timespec, open_how, block uring_cmd opcodes */
#include "liburing/compat.h"
#include "liburing/io_uring.h"
#include "liburing/io_uring/query.h"
#include "liburing/io_uring/bpf_filter.h"
#include "liburing/io_uring_version.h"
#include "liburing/barrier.h"

/*
 * If the system's <linux/io_uring.h> was included before this header, its
 * (possibly older) copy of the uapi won the include guard.  The core
 * helpers below only need these flag values beyond what kernels 6.1+
 * provide; helpers for newer opcodes are compiled only with a 6.18-level
 * uapi (see RSURING_UAPI_6_18).
 */
#ifndef IORING_SETUP_CQE_MIXED
#define IORING_SETUP_CQE_MIXED		(1U << 18)
#endif
#ifndef IORING_SETUP_SQE_MIXED
#define IORING_SETUP_SQE_MIXED		(1U << 19)
#endif
#ifndef IORING_CQE_F_SKIP
#define IORING_CQE_F_SKIP		(1U << 5)
#endif
#ifndef IORING_CQE_F_32
#define IORING_CQE_F_32			(1U << 15)
#endif
#if defined(IORING_SETUP_SQ_REWIND)
#define RSURING_UAPI_6_18 1
#endif

#ifndef uring_unlikely
#define uring_unlikely(cond)	__builtin_expect(!!(cond), 0)
#endif
#ifndef uring_likely
#define uring_likely(cond)	__builtin_expect(!!(cond), 1)
#endif

/* io_uring system call numbers, for C libraries that lack them */
#if defined(__alpha__)
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup		535
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter		536
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register		537
#endif
#elif defined(__mips__)
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup		(__NR_Linux + 425)
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter		(__NR_Linux + 426)
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register		(__NR_Linux + 427)
#endif
#else
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup		425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter		426
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register		427
#endif
#endif

/*
 * IOURINGINLINE: linkage of the public inline helpers.  A build that wants
 * them as real symbols defines it beforehand, empty: src/inline_ffi.c does,
 * which gives librsuring.so liburing-ffi's symbol set.
 * C++20 modules cannot export "static" functions, hence plain "inline"
 * there.  _LOCAL_INLINE: helpers that are never exported.
 */
#ifndef IOURINGINLINE
#if defined(__cplusplus) && __cplusplus >= 202002L
#define IOURINGINLINE inline
#else
#define IOURINGINLINE static inline
#endif
#define RSURING_UNDEF_IOURINGINLINE
#endif

#ifndef _LOCAL_INLINE
#if defined(__cplusplus) && __cplusplus >= 202002L
#define _LOCAL_INLINE inline
#else
#define _LOCAL_INLINE static inline
#endif
#define RSURING_UNDEF_LOCAL_INLINE
#endif

#ifndef LIBURING_NOEXCEPT
#ifdef __cplusplus
#define LIBURING_NOEXCEPT noexcept
#else
#define LIBURING_NOEXCEPT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * 2. Ring structures
 *
 * Allocated by the application, filled in by io_uring_queue_init*() and
 * read by the inline helpers.  Layout is ABI: identical to liburing 2.x.
 * ------------------------------------------------------------------------ */

struct io_uring_sq {
	unsigned *khead;		/* kernel: consumed up to here */
	unsigned *ktail;		/* us: published up to here */
	unsigned *kring_mask;		/* deprecated: use ring_mask */
	unsigned *kring_entries;	/* deprecated: use ring_entries */
	unsigned *kflags;		/* IORING_SQ_* */
	unsigned *kdropped;
	unsigned *array;		/* SQ index array (absent with NO_SQARRAY) */
	struct io_uring_sqe *sqes;

	unsigned sqe_head;		/* first SQE not yet published */
	unsigned sqe_tail;		/* next SQE to hand out */

	size_t ring_sz;
	void *ring_ptr;

	unsigned ring_mask;
	unsigned ring_entries;

	unsigned pad[2];
};

struct io_uring_cq {
	unsigned *khead;		/* us: consumed up to here */
	unsigned *ktail;		/* kernel: posted up to here */
	unsigned *kring_mask;		/* deprecated: use ring_mask */
	unsigned *kring_entries;	/* deprecated: use ring_entries */
	unsigned *kflags;		/* IORING_CQ_*, NULL on old kernels */
	unsigned *koverflow;
	struct io_uring_cqe *cqes;

	size_t ring_sz;
	void *ring_ptr;

	unsigned ring_mask;
	unsigned ring_entries;

	unsigned pad[2];
};

struct io_uring {
	struct io_uring_sq sq;
	struct io_uring_cq cq;
	unsigned flags;			/* IORING_SETUP_* the ring was made with */
	int ring_fd;

	unsigned features;		/* IORING_FEAT_* */
	int enter_ring_fd;		/* fd or registered index for enter */
	__u8 int_flags;			/* library-private state */
	__u8 pad[3];
	unsigned pad2;
};

/* Zero-copy receive refill queue, as mapped for the application */
struct io_uring_zcrx_rq {
	__u32 *khead;
	__u32 *ktail;
	__u32 rq_tail;
	unsigned ring_entries;

	struct io_uring_zcrx_rqe *rqes;
	void *ring_ptr;
};

/* ------------------------------------------------------------------------
 * 3. Exported functions (generated; do not declare them here)
 * ------------------------------------------------------------------------ */

#include "liburing/rsuring_api.h"

/* ------------------------------------------------------------------------
 * 4. Inline helpers
 * ------------------------------------------------------------------------ */

/*
 * user_data of the internal timeout CQEs that io_uring_wait_cqe*() posts
 * on kernels without IORING_FEAT_EXT_ARG; the peek helpers swallow them.
 */
#define LIBURING_UDATA_TIMEOUT	((__u64) -1)

/* The *_data64 helpers exist. */
#define LIBURING_HAVE_DATA64

struct epoll_event;
struct statx;
struct futex_waitv;

_LOCAL_INLINE __u64 uring_ptr_to_u64(const void *ptr) LIBURING_NOEXCEPT
{
	return (__u64) (uintptr_t) ptr;
}

/* Does the probe result say the kernel supports opcode op? */
IOURINGINLINE int io_uring_opcode_supported(const struct io_uring_probe *p,
					    int op) LIBURING_NOEXCEPT
{
	if (op < 0 || op > p->last_op)
		return 0;
	return (p->ops[op].flags & IO_URING_OP_SUPPORTED) != 0;
}

/* ---- CQ indexing ------------------------------------------------------ */

/*
 * CQEs are 16 bytes, 32 on CQE32 rings: a ring index converts to a
 * struct io_uring_cqe array index by shifting left by 0 or 1.
 */
IOURINGINLINE unsigned io_uring_cqe_shift_from_flags(unsigned flags)
	LIBURING_NOEXCEPT
{
	return (flags & IORING_SETUP_CQE32) ? 1U : 0U;
}

IOURINGINLINE unsigned io_uring_cqe_shift(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return io_uring_cqe_shift_from_flags(ring->flags);
}

/* Array index in cq.cqes[] of ring position ptr. */
IOURINGINLINE unsigned io_uring_cqe_index(const struct io_uring *ring,
					  unsigned ptr, unsigned mask)
	LIBURING_NOEXCEPT
{
	return (ptr & mask) << io_uring_cqe_shift(ring);
}

/* Ring slots taken by this CQE: 2 for a big CQE on a CQE_MIXED ring. */
IOURINGINLINE unsigned io_uring_cqe_nr(const struct io_uring_cqe *cqe)
	LIBURING_NOEXCEPT
{
	return (cqe->flags & IORING_CQE_F_32) ? 2U : 1U;
}

/* Same, but trusting IORING_CQE_F_32 only on rings that can post it. */
_LOCAL_INLINE unsigned __rsuring_cqe_slots(const struct io_uring *ring,
					   const struct io_uring_cqe *cqe)
	LIBURING_NOEXCEPT
{
	if (uring_likely(!(ring->flags & IORING_SETUP_CQE_MIXED)))
		return 1;
	return io_uring_cqe_nr(cqe);
}

/* Release CQ slots: the kernel may reuse them once it sees the new head. */
IOURINGINLINE void io_uring_cq_advance(struct io_uring *ring, unsigned nr)
	LIBURING_NOEXCEPT
{
	if (nr) {
		struct io_uring_cq *cq = &ring->cq;

		/* the CQE reads above must complete before the head moves */
		io_uring_smp_store_release(cq->khead, *cq->khead + nr);
	}
}

/* Mark a CQE from io_uring_peek_cqe()/io_uring_wait_cqe() consumed. */
IOURINGINLINE void io_uring_cqe_seen(struct io_uring *ring,
				     struct io_uring_cqe *cqe)
	LIBURING_NOEXCEPT
{
	if (cqe)
		io_uring_cq_advance(ring, __rsuring_cqe_slots(ring, cqe));
}

/*
 * Walk the ready CQEs without consuming them; call io_uring_cq_advance()
 * afterwards.  head must be an unsigned lvalue, cqe a
 * struct io_uring_cqe pointer.  The kernel's tail is re-read (acquire)
 * before each entry, so entries posted during the walk are visited too.
 */
#define io_uring_for_each_cqe(ring, head, cqe)				\
	for ((head) = *(ring)->cq.khead;				\
	     ((cqe) = ((head) != io_uring_smp_load_acquire((ring)->cq.ktail) ? \
		&(ring)->cq.cqes[io_uring_cqe_index((ring), (head),	\
						    (ring)->cq.ring_mask)] \
		: NULL)) != NULL;					\
	     (head) += __rsuring_cqe_slots((ring), (cqe)))

/*
 * Snapshot iterator over the CQEs ready now:
 *
 *   struct io_uring_cqe_iter it = io_uring_cqe_iter_init(ring);
 *   while (io_uring_cqe_iter_next(&it, &cqe)) ...
 */
struct io_uring_cqe_iter {
	struct io_uring_cqe *cqes;
	unsigned mask;
	unsigned shift;
	unsigned head;
	unsigned tail;
};

IOURINGINLINE struct io_uring_cqe_iter
io_uring_cqe_iter_init(const struct io_uring *ring) LIBURING_NOEXCEPT
{
	struct io_uring_cqe_iter it;

	it.cqes = ring->cq.cqes;
	it.mask = ring->cq.ring_mask;
	it.shift = io_uring_cqe_shift(ring);
	it.head = *ring->cq.khead;
	/* acquire: the CQE contents up to tail are visible after this */
	it.tail = io_uring_smp_load_acquire(ring->cq.ktail);
	return it;
}

IOURINGINLINE bool io_uring_cqe_iter_next(struct io_uring_cqe_iter *iter,
					  struct io_uring_cqe **cqe)
	LIBURING_NOEXCEPT
{
	if (iter->head == iter->tail)
		return false;
	*cqe = &iter->cqes[(iter->head & iter->mask) << iter->shift];
	iter->head += io_uring_cqe_nr(*cqe);
	return true;
}

/* ---- SQE / CQE user data and flags ------------------------------------ */

IOURINGINLINE void io_uring_sqe_set_data(struct io_uring_sqe *sqe, void *data)
	LIBURING_NOEXCEPT
{
	sqe->user_data = (__u64) (uintptr_t) data;
}

IOURINGINLINE void *io_uring_cqe_get_data(const struct io_uring_cqe *cqe)
	LIBURING_NOEXCEPT
{
	return (void *) (uintptr_t) cqe->user_data;
}

IOURINGINLINE void io_uring_sqe_set_data64(struct io_uring_sqe *sqe,
					   __u64 data) LIBURING_NOEXCEPT
{
	sqe->user_data = data;
}

IOURINGINLINE __u64 io_uring_cqe_get_data64(const struct io_uring_cqe *cqe)
	LIBURING_NOEXCEPT
{
	return cqe->user_data;
}

IOURINGINLINE void io_uring_sqe_set_flags(struct io_uring_sqe *sqe,
					  unsigned flags) LIBURING_NOEXCEPT
{
	sqe->flags = (__u8) flags;
}

IOURINGINLINE void io_uring_sqe_set_buf_group(struct io_uring_sqe *sqe,
					      int bgid) LIBURING_NOEXCEPT
{
	sqe->buf_group = (__u16) bgid;
}

/* Direct-descriptor slots travel as slot + 1; 0 means "not direct". */
_LOCAL_INLINE void __io_uring_set_target_fixed_file(struct io_uring_sqe *sqe,
						    unsigned int file_index)
	LIBURING_NOEXCEPT
{
	sqe->file_index = file_index + 1;
}

/* Like the above, letting IORING_FILE_INDEX_ALLOC through unchanged. */
_LOCAL_INLINE void __rsuring_set_target_slot(struct io_uring_sqe *sqe,
					     unsigned int file_index)
	LIBURING_NOEXCEPT
{
	if (file_index == IORING_FILE_INDEX_ALLOC)
		file_index--;
	__io_uring_set_target_fixed_file(sqe, file_index);
}

/*
 * Clear the fields the prep helpers do not always set.  io_uring_get_sqe()
 * does this for every SQE it hands out, so a caller may set flags,
 * personality, ... before or after calling a prep helper.
 */
IOURINGINLINE void io_uring_initialize_sqe(struct io_uring_sqe *sqe)
	LIBURING_NOEXCEPT
{
	sqe->flags = 0;
	sqe->ioprio = 0;
	sqe->rw_flags = 0;
	sqe->buf_index = 0;
	sqe->personality = 0;
	sqe->file_index = 0;
	sqe->addr3 = 0;
	sqe->__pad2[0] = 0;
}

/* ---- SQE preparation -------------------------------------------------- */

/* The common core: opcode, fd, address, length, offset. */
IOURINGINLINE void io_uring_prep_rw(int op, struct io_uring_sqe *sqe, int fd,
				    const void *addr, unsigned len,
				    __u64 offset) LIBURING_NOEXCEPT
{
	sqe->opcode = (__u8) op;
	sqe->fd = fd;
	sqe->off = offset;
	sqe->addr = (__u64) (uintptr_t) addr;
	sqe->len = len;
}

/*
 * splice(2): one of fd_in/fd_out must be a pipe.  An offset of -1 means
 * "use and advance the file position" (and is required for a pipe).
 * SPLICE_F_FD_IN_FIXED in splice_flags marks fd_in as a fixed file.
 */
IOURINGINLINE void io_uring_prep_splice(struct io_uring_sqe *sqe,
					int fd_in, int64_t off_in,
					int fd_out, int64_t off_out,
					unsigned int nbytes,
					unsigned int splice_flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SPLICE, sqe, fd_out, NULL, nbytes,
			 (__u64) off_out);
	sqe->splice_off_in = (__u64) off_in;
	sqe->splice_fd_in = fd_in;
	sqe->splice_flags = splice_flags;
}

IOURINGINLINE void io_uring_prep_tee(struct io_uring_sqe *sqe,
				     int fd_in, int fd_out,
				     unsigned int nbytes,
				     unsigned int splice_flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_TEE, sqe, fd_out, NULL, nbytes, 0);
	sqe->splice_off_in = 0;
	sqe->splice_fd_in = fd_in;
	sqe->splice_flags = splice_flags;
}

IOURINGINLINE void io_uring_prep_readv(struct io_uring_sqe *sqe, int fd,
				       const struct iovec *iovecs,
				       unsigned nr_vecs, __u64 offset)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READV, sqe, fd, iovecs, nr_vecs, offset);
}

IOURINGINLINE void io_uring_prep_readv2(struct io_uring_sqe *sqe, int fd,
					const struct iovec *iovecs,
					unsigned nr_vecs, __u64 offset,
					int flags) LIBURING_NOEXCEPT
{
	io_uring_prep_readv(sqe, fd, iovecs, nr_vecs, offset);
	sqe->rw_flags = flags;
}

IOURINGINLINE void io_uring_prep_read_fixed(struct io_uring_sqe *sqe, int fd,
					    void *buf, unsigned nbytes,
					    __u64 offset, int buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READ_FIXED, sqe, fd, buf, nbytes, offset);
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_writev(struct io_uring_sqe *sqe, int fd,
					const struct iovec *iovecs,
					unsigned nr_vecs, __u64 offset)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WRITEV, sqe, fd, iovecs, nr_vecs, offset);
}

IOURINGINLINE void io_uring_prep_writev2(struct io_uring_sqe *sqe, int fd,
					 const struct iovec *iovecs,
					 unsigned nr_vecs, __u64 offset,
					 int flags) LIBURING_NOEXCEPT
{
	io_uring_prep_writev(sqe, fd, iovecs, nr_vecs, offset);
	sqe->rw_flags = flags;
}

IOURINGINLINE void io_uring_prep_write_fixed(struct io_uring_sqe *sqe, int fd,
					     const void *buf, unsigned nbytes,
					     __u64 offset, int buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WRITE_FIXED, sqe, fd, buf, nbytes, offset);
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_recvmsg(struct io_uring_sqe *sqe, int fd,
					 struct msghdr *msg, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_RECVMSG, sqe, fd, msg, 1, 0);
	sqe->msg_flags = flags;
}

IOURINGINLINE void io_uring_prep_recvmsg_multishot(struct io_uring_sqe *sqe,
						   int fd, struct msghdr *msg,
						   unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_recvmsg(sqe, fd, msg, flags);
	sqe->ioprio |= IORING_RECV_MULTISHOT;
}

IOURINGINLINE void io_uring_prep_sendmsg(struct io_uring_sqe *sqe, int fd,
					 const struct msghdr *msg,
					 unsigned flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SENDMSG, sqe, fd, msg, 1, 0);
	sqe->msg_flags = flags;
}

/*
 * The kernel reads poll32_events as two swapped 16-bit halves on
 * big-endian machines (compatibility with the old 16-bit field).
 */
_LOCAL_INLINE unsigned __io_uring_prep_poll_mask(unsigned poll_mask)
	LIBURING_NOEXCEPT
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	poll_mask = __swahw32(poll_mask);
#endif
	return poll_mask;
}

IOURINGINLINE void io_uring_prep_poll_add(struct io_uring_sqe *sqe, int fd,
					  unsigned poll_mask) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_POLL_ADD, sqe, fd, NULL, 0, 0);
	sqe->poll32_events = __io_uring_prep_poll_mask(poll_mask);
}

IOURINGINLINE void io_uring_prep_poll_multishot(struct io_uring_sqe *sqe,
						int fd, unsigned poll_mask)
	LIBURING_NOEXCEPT
{
	io_uring_prep_poll_add(sqe, fd, poll_mask);
	sqe->len = IORING_POLL_ADD_MULTI;
}

IOURINGINLINE void io_uring_prep_poll_remove(struct io_uring_sqe *sqe,
					     __u64 user_data) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_POLL_REMOVE, sqe, -1, NULL, 0, 0);
	sqe->addr = user_data;
}

IOURINGINLINE void io_uring_prep_poll_update(struct io_uring_sqe *sqe,
					     __u64 old_user_data,
					     __u64 new_user_data,
					     unsigned poll_mask, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_POLL_REMOVE, sqe, -1, NULL, flags,
			 new_user_data);
	sqe->addr = old_user_data;
	sqe->poll32_events = __io_uring_prep_poll_mask(poll_mask);
}

IOURINGINLINE void io_uring_prep_fsync(struct io_uring_sqe *sqe, int fd,
				       unsigned fsync_flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FSYNC, sqe, fd, NULL, 0, 0);
	sqe->fsync_flags = fsync_flags;
}

IOURINGINLINE void io_uring_prep_nop(struct io_uring_sqe *sqe)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_NOP, sqe, -1, NULL, 0, 0);
}

/* Complete after count other completions, or when ts expires. */
IOURINGINLINE void io_uring_prep_timeout(struct io_uring_sqe *sqe,
					 const struct __kernel_timespec *ts,
					 unsigned count, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_TIMEOUT, sqe, -1, ts, 1, count);
	sqe->timeout_flags = flags;
}

IOURINGINLINE void io_uring_prep_timeout_remove(struct io_uring_sqe *sqe,
						__u64 user_data, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_TIMEOUT_REMOVE, sqe, -1, NULL, 0, 0);
	sqe->addr = user_data;
	sqe->timeout_flags = flags;
}

IOURINGINLINE void io_uring_prep_timeout_update(struct io_uring_sqe *sqe,
						const struct __kernel_timespec *ts,
						__u64 user_data, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_TIMEOUT_REMOVE, sqe, -1, NULL, 0,
			 uring_ptr_to_u64(ts));
	sqe->addr = user_data;
	sqe->timeout_flags = flags | IORING_TIMEOUT_UPDATE;
}

IOURINGINLINE void io_uring_prep_accept(struct io_uring_sqe *sqe, int fd,
					struct sockaddr *addr,
					socklen_t *addrlen, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_ACCEPT, sqe, fd, addr, 0,
			 uring_ptr_to_u64(addrlen));
	sqe->accept_flags = (__u32) flags;
}

/* Accept into direct-descriptor slot file_index (or IORING_FILE_INDEX_ALLOC). */
IOURINGINLINE void io_uring_prep_accept_direct(struct io_uring_sqe *sqe, int fd,
					       struct sockaddr *addr,
					       socklen_t *addrlen, int flags,
					       unsigned int file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_accept(sqe, fd, addr, addrlen, flags);
	__rsuring_set_target_slot(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_multishot_accept(struct io_uring_sqe *sqe,
						  int fd, struct sockaddr *addr,
						  socklen_t *addrlen, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_accept(sqe, fd, addr, addrlen, flags);
	sqe->ioprio |= IORING_ACCEPT_MULTISHOT;
}

/* Multishot accept into kernel-chosen direct-descriptor slots. */
IOURINGINLINE void io_uring_prep_multishot_accept_direct(struct io_uring_sqe *sqe,
							 int fd,
							 struct sockaddr *addr,
							 socklen_t *addrlen,
							 int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_multishot_accept(sqe, fd, addr, addrlen, flags);
	__io_uring_set_target_fixed_file(sqe, IORING_FILE_INDEX_ALLOC - 1);
}

IOURINGINLINE void io_uring_prep_cancel64(struct io_uring_sqe *sqe,
					  __u64 user_data, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_ASYNC_CANCEL, sqe, -1, NULL, 0, 0);
	sqe->addr = user_data;
	sqe->cancel_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_cancel(struct io_uring_sqe *sqe,
					const void *user_data, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_cancel64(sqe, uring_ptr_to_u64(user_data), flags);
}

IOURINGINLINE void io_uring_prep_cancel_fd(struct io_uring_sqe *sqe, int fd,
					   unsigned int flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_ASYNC_CANCEL, sqe, fd, NULL, 0, 0);
	sqe->cancel_flags = (__u32) flags | IORING_ASYNC_CANCEL_FD;
}

IOURINGINLINE void io_uring_prep_link_timeout(struct io_uring_sqe *sqe,
					      const struct __kernel_timespec *ts,
					      unsigned flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_LINK_TIMEOUT, sqe, -1, ts, 1, 0);
	sqe->timeout_flags = flags;
}

IOURINGINLINE void io_uring_prep_connect(struct io_uring_sqe *sqe, int fd,
					 const struct sockaddr *addr,
					 socklen_t addrlen) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_CONNECT, sqe, fd, addr, 0, addrlen);
}

IOURINGINLINE void io_uring_prep_files_update(struct io_uring_sqe *sqe,
					      int *fds, unsigned nr_fds,
					      int offset) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FILES_UPDATE, sqe, -1, fds, nr_fds,
			 (__u64) offset);
}

IOURINGINLINE void io_uring_prep_fallocate(struct io_uring_sqe *sqe, int fd,
					   int mode, __u64 offset, __u64 len)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FALLOCATE, sqe, fd, NULL,
			 (unsigned int) mode, offset);
	sqe->addr = len;
}

IOURINGINLINE void io_uring_prep_openat(struct io_uring_sqe *sqe, int dfd,
					const char *path, int flags,
					mode_t mode) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_OPENAT, sqe, dfd, path, mode, 0);
	sqe->open_flags = (__u32) flags;
}

/* Open into direct-descriptor slot file_index (or IORING_FILE_INDEX_ALLOC). */
IOURINGINLINE void io_uring_prep_openat_direct(struct io_uring_sqe *sqe,
					       int dfd, const char *path,
					       int flags, mode_t mode,
					       unsigned file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_openat(sqe, dfd, path, flags, mode);
	__rsuring_set_target_slot(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_open(struct io_uring_sqe *sqe,
				      const char *path, int flags, mode_t mode)
	LIBURING_NOEXCEPT
{
	io_uring_prep_openat(sqe, AT_FDCWD, path, flags, mode);
}

IOURINGINLINE void io_uring_prep_open_direct(struct io_uring_sqe *sqe,
					     const char *path, int flags,
					     mode_t mode, unsigned file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_openat_direct(sqe, AT_FDCWD, path, flags, mode,
				    file_index);
}

IOURINGINLINE void io_uring_prep_close(struct io_uring_sqe *sqe, int fd)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_CLOSE, sqe, fd, NULL, 0, 0);
}

IOURINGINLINE void io_uring_prep_close_direct(struct io_uring_sqe *sqe,
					      unsigned file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_close(sqe, 0);
	__io_uring_set_target_fixed_file(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_read(struct io_uring_sqe *sqe, int fd,
				      void *buf, unsigned nbytes, __u64 offset)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READ, sqe, fd, buf, nbytes, offset);
}

IOURINGINLINE void io_uring_prep_write(struct io_uring_sqe *sqe, int fd,
				       const void *buf, unsigned nbytes,
				       __u64 offset) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WRITE, sqe, fd, buf, nbytes, offset);
}

IOURINGINLINE void io_uring_prep_statx(struct io_uring_sqe *sqe, int dfd,
				       const char *path, int flags,
				       unsigned mask, struct statx *statxbuf)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_STATX, sqe, dfd, path, mask,
			 uring_ptr_to_u64(statxbuf));
	sqe->statx_flags = (__u32) flags;
}

/*
 * len is 32 bits on the wire (liburing before 2.7 declared it off_t); see
 * io_uring_prep_fadvise64() for longer ranges.
 */
IOURINGINLINE void io_uring_prep_fadvise(struct io_uring_sqe *sqe, int fd,
					 __u64 offset, __u32 len, int advice)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FADVISE, sqe, fd, NULL, (__u32) len, offset);
	sqe->fadvise_advice = (__u32) advice;
}

IOURINGINLINE void io_uring_prep_madvise(struct io_uring_sqe *sqe, void *addr,
					 __u32 length, int advice)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MADVISE, sqe, -1, addr, (__u32) length, 0);
	sqe->fadvise_advice = (__u32) advice;
}

/* 64-bit length variants (the kernel reads it from sqe->addr / sqe->off). */
IOURINGINLINE void io_uring_prep_fadvise64(struct io_uring_sqe *sqe, int fd,
					   __u64 offset, off_t len, int advice)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FADVISE, sqe, fd, NULL, 0, offset);
	sqe->addr = (__u64) len;
	sqe->fadvise_advice = (__u32) advice;
}

IOURINGINLINE void io_uring_prep_madvise64(struct io_uring_sqe *sqe,
					   void *addr, off_t length, int advice)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MADVISE, sqe, -1, addr, 0, (__u64) length);
	sqe->fadvise_advice = (__u32) advice;
}

IOURINGINLINE void io_uring_prep_send(struct io_uring_sqe *sqe, int sockfd,
				      const void *buf, size_t len, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SEND, sqe, sockfd, buf, (__u32) len, 0);
	sqe->msg_flags = (__u32) flags;
}

/* Destination address for send / send_zc on an unconnected socket. */
IOURINGINLINE void io_uring_prep_send_set_addr(struct io_uring_sqe *sqe,
					       const struct sockaddr *dest_addr,
					       __u16 addr_len) LIBURING_NOEXCEPT
{
	sqe->addr2 = uring_ptr_to_u64(dest_addr);
	sqe->addr_len = addr_len;
}

IOURINGINLINE void io_uring_prep_sendto(struct io_uring_sqe *sqe, int sockfd,
					const void *buf, size_t len, int flags,
					const struct sockaddr *addr,
					socklen_t addrlen) LIBURING_NOEXCEPT
{
	io_uring_prep_send(sqe, sockfd, buf, len, flags);
	io_uring_prep_send_set_addr(sqe, addr, (__u16) addrlen);
}

IOURINGINLINE void io_uring_prep_send_zc(struct io_uring_sqe *sqe, int sockfd,
					 const void *buf, size_t len, int flags,
					 unsigned zc_flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SEND_ZC, sqe, sockfd, buf, (__u32) len, 0);
	sqe->msg_flags = (__u32) flags;
	sqe->ioprio = (__u16) zc_flags;
}

IOURINGINLINE void io_uring_prep_send_zc_fixed(struct io_uring_sqe *sqe,
					       int sockfd, const void *buf,
					       size_t len, int flags,
					       unsigned zc_flags,
					       unsigned buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_send_zc(sqe, sockfd, buf, len, flags, zc_flags);
	sqe->ioprio |= IORING_RECVSEND_FIXED_BUF;
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_sendmsg_zc(struct io_uring_sqe *sqe, int fd,
					    const struct msghdr *msg,
					    unsigned flags) LIBURING_NOEXCEPT
{
	io_uring_prep_sendmsg(sqe, fd, msg, flags);
	sqe->opcode = IORING_OP_SENDMSG_ZC;
}

IOURINGINLINE void io_uring_prep_sendmsg_zc_fixed(struct io_uring_sqe *sqe,
						  int fd,
						  const struct msghdr *msg,
						  unsigned flags,
						  unsigned buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_sendmsg_zc(sqe, fd, msg, flags);
	sqe->ioprio |= IORING_RECVSEND_FIXED_BUF;
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_recv(struct io_uring_sqe *sqe, int sockfd,
				      void *buf, size_t len, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_RECV, sqe, sockfd, buf, (__u32) len, 0);
	sqe->msg_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_recv_multishot(struct io_uring_sqe *sqe,
						int sockfd, void *buf,
						size_t len, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_recv(sqe, sockfd, buf, len, flags);
	sqe->ioprio |= IORING_RECV_MULTISHOT;
}

/*
 * Multishot recvmsg buffers hold, in order: struct io_uring_recvmsg_out,
 * msg_namelen bytes of name, msg_controllen bytes of control data, then
 * the payload.  These helpers take such a buffer apart.
 */

/* The header of buf, or NULL if buf_len cannot hold header, name, control. */
IOURINGINLINE struct io_uring_recvmsg_out *
io_uring_recvmsg_validate(void *buf, int buf_len, struct msghdr *msgh)
	LIBURING_NOEXCEPT
{
	unsigned long room, hdr = sizeof(struct io_uring_recvmsg_out);

	if (buf_len < 0 || (unsigned long) buf_len < hdr)
		return NULL;
	room = (unsigned long) buf_len - hdr;
	/* one term at a time, so that no sum can wrap */
	if ((unsigned long) msgh->msg_namelen > room)
		return NULL;
	room -= msgh->msg_namelen;
	if ((unsigned long) msgh->msg_controllen > room)
		return NULL;
	return (struct io_uring_recvmsg_out *) buf;
}

IOURINGINLINE void *io_uring_recvmsg_name(struct io_uring_recvmsg_out *o)
	LIBURING_NOEXCEPT
{
	return (void *) &o[1];
}

IOURINGINLINE struct cmsghdr *
io_uring_recvmsg_cmsg_firsthdr(struct io_uring_recvmsg_out *o,
			       struct msghdr *msgh) LIBURING_NOEXCEPT
{
	if (o->controllen < sizeof(struct cmsghdr))
		return NULL;
	return (struct cmsghdr *) ((unsigned char *) io_uring_recvmsg_name(o) +
				   msgh->msg_namelen);
}

IOURINGINLINE struct cmsghdr *
io_uring_recvmsg_cmsg_nexthdr(struct io_uring_recvmsg_out *o,
			      struct msghdr *msgh, struct cmsghdr *cmsg)
	LIBURING_NOEXCEPT
{
	unsigned char *end;

	if (cmsg->cmsg_len < sizeof(struct cmsghdr))
		return NULL;
	end = (unsigned char *) io_uring_recvmsg_cmsg_firsthdr(o, msgh) +
		o->controllen;
	cmsg = (struct cmsghdr *) ((unsigned char *) cmsg +
				   CMSG_ALIGN(cmsg->cmsg_len));
	if ((unsigned char *) (cmsg + 1) > end)
		return NULL;
	if ((unsigned char *) cmsg + CMSG_ALIGN(cmsg->cmsg_len) > end)
		return NULL;
	return cmsg;
}

IOURINGINLINE void *io_uring_recvmsg_payload(struct io_uring_recvmsg_out *o,
					     struct msghdr *msgh)
	LIBURING_NOEXCEPT
{
	return (void *) ((unsigned char *) io_uring_recvmsg_name(o) +
			 msgh->msg_namelen + msgh->msg_controllen);
}

IOURINGINLINE unsigned int
io_uring_recvmsg_payload_length(struct io_uring_recvmsg_out *o,
				int buf_len, struct msghdr *msgh)
	LIBURING_NOEXCEPT
{
	unsigned long start, end;

	if (buf_len < 0)
		return 0;
	start = (unsigned long) io_uring_recvmsg_payload(o, msgh);
	end = (unsigned long) o + (unsigned long) buf_len;
	if (start >= end)
		return 0;
	return (unsigned int) (end - start);
}

IOURINGINLINE void io_uring_prep_openat2(struct io_uring_sqe *sqe, int dfd,
					 const char *path,
					 const struct open_how *how)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_OPENAT2, sqe, dfd, path, sizeof(*how),
			 uring_ptr_to_u64(how));
}

IOURINGINLINE void io_uring_prep_openat2_direct(struct io_uring_sqe *sqe,
						int dfd, const char *path,
						const struct open_how *how,
						unsigned file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_openat2(sqe, dfd, path, how);
	__rsuring_set_target_slot(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_epoll_ctl(struct io_uring_sqe *sqe, int epfd,
					   int fd, int op,
					   const struct epoll_event *ev)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_EPOLL_CTL, sqe, epfd, ev, (__u32) op,
			 (__u32) fd);
}

IOURINGINLINE void io_uring_prep_provide_buffers(struct io_uring_sqe *sqe,
						 void *addr, int len, int nr,
						 int bgid, int bid)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_PROVIDE_BUFFERS, sqe, nr, addr, (__u32) len,
			 (__u64) bid);
	sqe->buf_group = (__u16) bgid;
}

IOURINGINLINE void io_uring_prep_remove_buffers(struct io_uring_sqe *sqe,
						int nr, int bgid)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_REMOVE_BUFFERS, sqe, nr, NULL, 0, 0);
	sqe->buf_group = (__u16) bgid;
}

IOURINGINLINE void io_uring_prep_shutdown(struct io_uring_sqe *sqe, int fd,
					  int how) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SHUTDOWN, sqe, fd, NULL, (__u32) how, 0);
}

IOURINGINLINE void io_uring_prep_unlinkat(struct io_uring_sqe *sqe, int dfd,
					  const char *path, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_UNLINKAT, sqe, dfd, path, 0, 0);
	sqe->unlink_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_unlink(struct io_uring_sqe *sqe,
					const char *path, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_unlinkat(sqe, AT_FDCWD, path, flags);
}

IOURINGINLINE void io_uring_prep_renameat(struct io_uring_sqe *sqe, int olddfd,
					  const char *oldpath, int newdfd,
					  const char *newpath,
					  unsigned int flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_RENAMEAT, sqe, olddfd, oldpath,
			 (__u32) newdfd, uring_ptr_to_u64(newpath));
	sqe->rename_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_rename(struct io_uring_sqe *sqe,
					const char *oldpath,
					const char *newpath) LIBURING_NOEXCEPT
{
	io_uring_prep_renameat(sqe, AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
}

IOURINGINLINE void io_uring_prep_sync_file_range(struct io_uring_sqe *sqe,
						 int fd, unsigned len,
						 __u64 offset, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SYNC_FILE_RANGE, sqe, fd, NULL, len, offset);
	sqe->sync_range_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_mkdirat(struct io_uring_sqe *sqe, int dfd,
					 const char *path, mode_t mode)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MKDIRAT, sqe, dfd, path, mode, 0);
}

IOURINGINLINE void io_uring_prep_mkdir(struct io_uring_sqe *sqe,
				       const char *path, mode_t mode)
	LIBURING_NOEXCEPT
{
	io_uring_prep_mkdirat(sqe, AT_FDCWD, path, mode);
}

IOURINGINLINE void io_uring_prep_symlinkat(struct io_uring_sqe *sqe,
					   const char *target, int newdirfd,
					   const char *linkpath)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SYMLINKAT, sqe, newdirfd, target, 0,
			 uring_ptr_to_u64(linkpath));
}

IOURINGINLINE void io_uring_prep_symlink(struct io_uring_sqe *sqe,
					 const char *target,
					 const char *linkpath) LIBURING_NOEXCEPT
{
	io_uring_prep_symlinkat(sqe, target, AT_FDCWD, linkpath);
}

IOURINGINLINE void io_uring_prep_linkat(struct io_uring_sqe *sqe, int olddfd,
					const char *oldpath, int newdfd,
					const char *newpath, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_LINKAT, sqe, olddfd, oldpath, (__u32) newdfd,
			 uring_ptr_to_u64(newpath));
	sqe->hardlink_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_link(struct io_uring_sqe *sqe,
				      const char *oldpath, const char *newpath,
				      int flags) LIBURING_NOEXCEPT
{
	io_uring_prep_linkat(sqe, AT_FDCWD, oldpath, AT_FDCWD, newpath, flags);
}

/* Post a CQE (res = len, user_data = data) on the ring behind fd. */
IOURINGINLINE void io_uring_prep_msg_ring(struct io_uring_sqe *sqe, int fd,
					  unsigned int len, __u64 data,
					  unsigned int flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MSG_RING, sqe, fd, NULL, len, data);
	sqe->msg_ring_flags = flags;
}

/* Install our direct descriptor source_fd in slot target_fd of ring fd. */
IOURINGINLINE void io_uring_prep_msg_ring_fd(struct io_uring_sqe *sqe, int fd,
					     int source_fd, int target_fd,
					     __u64 data, unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MSG_RING, sqe, fd,
			 (void *) (uintptr_t) IORING_MSG_SEND_FD, 0, data);
	sqe->addr3 = (__u64) source_fd;
	__rsuring_set_target_slot(sqe, (unsigned int) target_fd);
	sqe->msg_ring_flags = flags;
}

IOURINGINLINE void io_uring_prep_msg_ring_fd_alloc(struct io_uring_sqe *sqe,
						   int fd, int source_fd,
						   __u64 data,
						   unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_msg_ring_fd(sqe, fd, source_fd,
				  (int) IORING_FILE_INDEX_ALLOC, data, flags);
}

IOURINGINLINE void io_uring_prep_getxattr(struct io_uring_sqe *sqe,
					  const char *name, char *value,
					  const char *path, unsigned int len)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_GETXATTR, sqe, 0, name, len,
			 uring_ptr_to_u64(value));
	sqe->addr3 = uring_ptr_to_u64(path);
	sqe->xattr_flags = 0;
}

IOURINGINLINE void io_uring_prep_setxattr(struct io_uring_sqe *sqe,
					  const char *name, const char *value,
					  const char *path, int flags,
					  unsigned int len) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SETXATTR, sqe, 0, name, len,
			 uring_ptr_to_u64(value));
	sqe->addr3 = uring_ptr_to_u64(path);
	sqe->xattr_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_fgetxattr(struct io_uring_sqe *sqe, int fd,
					   const char *name, char *value,
					   unsigned int len) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FGETXATTR, sqe, fd, name, len,
			 uring_ptr_to_u64(value));
	sqe->xattr_flags = 0;
}

IOURINGINLINE void io_uring_prep_fsetxattr(struct io_uring_sqe *sqe, int fd,
					   const char *name, const char *value,
					   int flags, unsigned int len)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FSETXATTR, sqe, fd, name, len,
			 uring_ptr_to_u64(value));
	sqe->xattr_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_socket(struct io_uring_sqe *sqe, int domain,
					int type, int protocol,
					unsigned int flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SOCKET, sqe, domain, NULL,
			 (unsigned) protocol, (__u64) type);
	sqe->rw_flags = (__kernel_rwf_t) flags;
}

IOURINGINLINE void io_uring_prep_socket_direct(struct io_uring_sqe *sqe,
					       int domain, int type,
					       int protocol,
					       unsigned file_index,
					       unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_socket(sqe, domain, type, protocol, flags);
	__rsuring_set_target_slot(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_socket_direct_alloc(struct io_uring_sqe *sqe,
						     int domain, int type,
						     int protocol,
						     unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_socket(sqe, domain, type, protocol, flags);
	__io_uring_set_target_fixed_file(sqe, IORING_FILE_INDEX_ALLOC - 1);
}

/* IORING_OP_URING_CMD-style request: the command goes in sqe->cmd_op. */
IOURINGINLINE void __io_uring_prep_uring_cmd(struct io_uring_sqe *sqe,
					     int op, __u32 cmd_op, int fd)
	LIBURING_NOEXCEPT
{
	sqe->opcode = (__u8) op;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
	sqe->__pad1 = 0;
	sqe->addr = 0;
	sqe->len = 0;
}

IOURINGINLINE void io_uring_prep_uring_cmd(struct io_uring_sqe *sqe,
					   int cmd_op, int fd)
	LIBURING_NOEXCEPT
{
	__io_uring_prep_uring_cmd(sqe, IORING_OP_URING_CMD, (__u32) cmd_op, fd);
}

/* Block-device commands (BLOCK_URING_CMD_*). */
IOURINGINLINE void io_uring_prep_cmd_discard(struct io_uring_sqe *sqe,
					     int fd, uint64_t offset,
					     uint64_t nbytes) LIBURING_NOEXCEPT
{
	io_uring_prep_uring_cmd(sqe, (int) BLOCK_URING_CMD_DISCARD, fd);
	sqe->addr = offset;
	sqe->addr3 = nbytes;
}

IOURINGINLINE void io_uring_prep_cmd_zone_reset_all(struct io_uring_sqe *sqe,
						    int fd) LIBURING_NOEXCEPT
{
	io_uring_prep_uring_cmd(sqe, (int) BLOCK_URING_CMD_ZONE_RESET_ALL, fd);
}

#ifdef RSURING_UAPI_6_18
/*
 * Helpers for opcodes and SQE fields newer than kernel 6.1; compiled only
 * when the full 6.18-level uapi above is in effect.
 */

IOURINGINLINE void io_uring_prep_readv_fixed(struct io_uring_sqe *sqe, int fd,
					     const struct iovec *iovecs,
					     unsigned nr_vecs, __u64 offset,
					     int flags, int buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_readv2(sqe, fd, iovecs, nr_vecs, offset, flags);
	sqe->opcode = IORING_OP_READV_FIXED;
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_writev_fixed(struct io_uring_sqe *sqe, int fd,
					      const struct iovec *iovecs,
					      unsigned nr_vecs, __u64 offset,
					      int flags, int buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_writev2(sqe, fd, iovecs, nr_vecs, offset, flags);
	sqe->opcode = IORING_OP_WRITEV_FIXED;
	sqe->buf_index = (__u16) buf_index;
}

/* Multishot read into buffers of group buf_group. */
IOURINGINLINE void io_uring_prep_read_multishot(struct io_uring_sqe *sqe,
						int fd, unsigned nbytes,
						__u64 offset, int buf_group)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READ_MULTISHOT, sqe, fd, NULL, nbytes,
			 offset);
	sqe->buf_group = (__u16) buf_group;
	sqe->flags = IOSQE_BUFFER_SELECT;
}

/* A NOP that takes a 128-byte slot on an SQE_MIXED ring. */
IOURINGINLINE void io_uring_prep_nop128(struct io_uring_sqe *sqe)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_NOP128, sqe, -1, NULL, 0, 0);
}

IOURINGINLINE void io_uring_prep_uring_cmd128(struct io_uring_sqe *sqe,
					      int cmd_op, int fd)
	LIBURING_NOEXCEPT
{
	__io_uring_prep_uring_cmd(sqe, IORING_OP_URING_CMD128, (__u32) cmd_op,
				  fd);
}

IOURINGINLINE void io_uring_prep_bind(struct io_uring_sqe *sqe, int fd,
				      const struct sockaddr *addr,
				      socklen_t addrlen) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_BIND, sqe, fd, addr, 0, addrlen);
}

IOURINGINLINE void io_uring_prep_listen(struct io_uring_sqe *sqe, int fd,
					int backlog) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_LISTEN, sqe, fd, NULL, (unsigned) backlog, 0);
}

IOURINGINLINE void io_uring_prep_epoll_wait(struct io_uring_sqe *sqe, int fd,
					    struct epoll_event *events,
					    int maxevents, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_EPOLL_WAIT, sqe, fd, events,
			 (unsigned) maxevents, 0);
	sqe->rw_flags = (__kernel_rwf_t) flags;
}

/* Send as many provided buffers as the group offers (IOSQE_BUFFER_SELECT). */
IOURINGINLINE void io_uring_prep_send_bundle(struct io_uring_sqe *sqe,
					     int sockfd, size_t len, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_send(sqe, sockfd, NULL, len, flags);
	sqe->ioprio |= IORING_RECVSEND_BUNDLE;
}

/* Same, choosing the target CQE's flags too. */
IOURINGINLINE void io_uring_prep_msg_ring_cqe_flags(struct io_uring_sqe *sqe,
						    int fd, unsigned int len,
						    __u64 data,
						    unsigned int flags,
						    unsigned int cqe_flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MSG_RING, sqe, fd, NULL, len, data);
	sqe->msg_ring_flags = IORING_MSG_RING_FLAGS_PASS | flags;
	sqe->file_index = cqe_flags;
}

/* Socket commands: SOCKET_URING_OP_* with sockopt-style arguments. */
IOURINGINLINE void io_uring_prep_cmd_sock(struct io_uring_sqe *sqe,
					  int cmd_op, int fd, int level,
					  int optname, void *optval,
					  int optlen) LIBURING_NOEXCEPT
{
	io_uring_prep_uring_cmd(sqe, cmd_op, fd);
	sqe->optval = uring_ptr_to_u64(optval);
	sqe->optname = (__u32) optname;
	sqe->optlen = (__u32) optlen;
	sqe->level = (__u32) level;
}

/* getsockname (peer == 0) or getpeername (peer != 0) */
IOURINGINLINE void io_uring_prep_cmd_getsockname(struct io_uring_sqe *sqe,
						 int fd,
						 struct sockaddr *sockaddr,
						 socklen_t *sockaddr_len,
						 int peer) LIBURING_NOEXCEPT
{
	io_uring_prep_uring_cmd(sqe, SOCKET_URING_OP_GETSOCKNAME, fd);
	sqe->addr = uring_ptr_to_u64(sockaddr);
	sqe->addr3 = uring_ptr_to_u64(sockaddr_len);
	sqe->optlen = (__u32) peer;
}

IOURINGINLINE void io_uring_prep_waitid(struct io_uring_sqe *sqe,
					idtype_t idtype, id_t id,
					siginfo_t *infop, int options,
					unsigned int flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WAITID, sqe, (int) id, NULL,
			 (unsigned) idtype, 0);
	sqe->waitid_flags = flags;
	sqe->file_index = (__u32) options;
	sqe->addr2 = uring_ptr_to_u64(infop);
}

IOURINGINLINE void io_uring_prep_futex_wake(struct io_uring_sqe *sqe,
					    const uint32_t *futex, uint64_t val,
					    uint64_t mask, uint32_t futex_flags,
					    unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FUTEX_WAKE, sqe, (int) futex_flags, futex,
			 0, val);
	sqe->futex_flags = flags;
	sqe->addr3 = mask;
}

IOURINGINLINE void io_uring_prep_futex_wait(struct io_uring_sqe *sqe,
					    const uint32_t *futex, uint64_t val,
					    uint64_t mask, uint32_t futex_flags,
					    unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FUTEX_WAIT, sqe, (int) futex_flags, futex,
			 0, val);
	sqe->futex_flags = flags;
	sqe->addr3 = mask;
}

IOURINGINLINE void io_uring_prep_futex_waitv(struct io_uring_sqe *sqe,
					     const struct futex_waitv *futex,
					     uint32_t nr_futex,
					     unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FUTEX_WAITV, sqe, 0, futex, nr_futex, 0);
	sqe->futex_flags = flags;
}

/* Turn direct descriptor fd into a regular one (returned in cqe->res). */
IOURINGINLINE void io_uring_prep_fixed_fd_install(struct io_uring_sqe *sqe,
						  int fd, unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FIXED_FD_INSTALL, sqe, fd, NULL, 0, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->install_fd_flags = flags;
}

#ifdef _GNU_SOURCE
IOURINGINLINE void io_uring_prep_ftruncate(struct io_uring_sqe *sqe,
					   int fd, loff_t len)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FTRUNCATE, sqe, fd, NULL, 0, (__u64) len);
}
#endif

IOURINGINLINE void io_uring_prep_pipe(struct io_uring_sqe *sqe, int *fds,
				      int pipe_flags) LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_PIPE, sqe, 0, fds, 0, 0);
	sqe->pipe_flags = (__u32) pipe_flags;
}

IOURINGINLINE void io_uring_prep_pipe_direct(struct io_uring_sqe *sqe,
					     int *fds, int pipe_flags,
					     unsigned int file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_pipe(sqe, fds, pipe_flags);
	__rsuring_set_target_slot(sqe, file_index);
}
#endif /* RSURING_UAPI_6_18 */

/* ---- SQ state ----------------------------------------------------------- */

/*
 * The kernel's SQ head.  With SQPOLL a kernel thread advances it
 * concurrently, so it is loaded with acquire: once we see an entry
 * consumed, the kernel is done reading it and it may be reused.
 * Otherwise it only moves inside our own io_uring_enter() calls and a
 * single untorn load (as cheap as a plain one) is enough.
 */
IOURINGINLINE unsigned io_uring_load_sq_head(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	if (ring->flags & IORING_SETUP_SQPOLL)
		return io_uring_smp_load_acquire(ring->sq.khead);
	return IO_URING_READ_ONCE(*ring->sq.khead);
}

/* SQEs handed out but not yet consumed by the kernel. */
IOURINGINLINE unsigned io_uring_sq_ready(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return ring->sq.sqe_tail - io_uring_load_sq_head(ring);
}

/* SQEs that io_uring_get_sqe() can still hand out. */
IOURINGINLINE unsigned io_uring_sq_space_left(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return ring->sq.ring_entries - io_uring_sq_ready(ring);
}

/* SQEs are 64 bytes, 128 on SQE128 rings: shift an index by 0 or 1. */
IOURINGINLINE unsigned io_uring_sqe_shift_from_flags(unsigned flags)
	LIBURING_NOEXCEPT
{
	return (flags & IORING_SETUP_SQE128) ? 1U : 0U;
}

IOURINGINLINE unsigned io_uring_sqe_shift(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return io_uring_sqe_shift_from_flags(ring->flags);
}

/*
 * SQPOLL only: wait until the kernel thread has freed at least one SQ
 * entry.  Returns at once when there is room, or without SQPOLL.
 */
IOURINGINLINE int io_uring_sqring_wait(struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	if (!(ring->flags & IORING_SETUP_SQPOLL))
		return 0;
	if (io_uring_sq_space_left(ring))
		return 0;
	return __io_uring_sqring_wait(ring);
}

/* ---- CQ state ----------------------------------------------------------- */

/* CQEs posted and not yet consumed. */
IOURINGINLINE unsigned io_uring_cq_ready(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return io_uring_smp_load_acquire(ring->cq.ktail) - *ring->cq.khead;
}

/* Are completions waiting in the kernel's overflow list? */
IOURINGINLINE bool io_uring_cq_has_overflow(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return (IO_URING_READ_ONCE(*ring->sq.kflags) &
		IORING_SQ_CQ_OVERFLOW) != 0;
}

IOURINGINLINE bool io_uring_cq_eventfd_enabled(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	if (!ring->cq.kflags)
		return true;
	return !(IO_URING_READ_ONCE(*ring->cq.kflags) &
		 IORING_CQ_EVENTFD_DISABLED);
}

/* Switch eventfd signalling of a registered eventfd on or off. */
IOURINGINLINE int io_uring_cq_eventfd_toggle(struct io_uring *ring,
					     bool enabled) LIBURING_NOEXCEPT
{
	unsigned flags;

	if (enabled == io_uring_cq_eventfd_enabled(ring))
		return 0;
	if (!ring->cq.kflags)
		return -EOPNOTSUPP;

	flags = IO_URING_READ_ONCE(*ring->cq.kflags);
	if (enabled)
		flags &= ~IORING_CQ_EVENTFD_DISABLED;
	else
		flags |= IORING_CQ_EVENTFD_DISABLED;
	IO_URING_WRITE_ONCE(*ring->cq.kflags, flags);
	return 0;
}

/* ---- Getting completions ------------------------------------------------ */

/* Wait for wait_nr completions and return the first (0 or -errno). */
IOURINGINLINE int io_uring_wait_cqe_nr(struct io_uring *ring,
				       struct io_uring_cqe **cqe_ptr,
				       unsigned wait_nr) LIBURING_NOEXCEPT
{
	return __io_uring_get_cqe(ring, cqe_ptr, 0, wait_nr, NULL);
}

/*
 * Consume cqe if it is library-internal: a padding entry of a CQE_MIXED
 * ring, or the completion of the timeout that the wait functions queue on
 * kernels without IORING_FEAT_EXT_ARG.  True when it was consumed and the
 * caller should look at the next one; false for an application CQE (left
 * in place), or for a failed internal timeout (consumed, its error in
 * *err).
 */
_LOCAL_INLINE bool io_uring_skip_cqe(struct io_uring *ring,
				     struct io_uring_cqe *cqe, int *err)
	LIBURING_NOEXCEPT
{
	if (!(ring->flags & IORING_SETUP_CQE_MIXED) ||
	    !(cqe->flags & IORING_CQE_F_SKIP)) {
		if (ring->features & IORING_FEAT_EXT_ARG)
			return false;
		if (cqe->user_data != LIBURING_UDATA_TIMEOUT)
			return false;
		if (cqe->res < 0)
			*err = cqe->res;
	}
	io_uring_cq_advance(ring, __rsuring_cqe_slots(ring, cqe));
	return !*err;
}

/*
 * Building block of the peek/wait helpers: the first ready CQE (or NULL)
 * in *cqe_ptr, the number ready in *nr_available.  Internal CQEs are
 * consumed on the way.  Returns 0 or -errno.
 */
IOURINGINLINE int __io_uring_peek_cqe(struct io_uring *ring,
				      struct io_uring_cqe **cqe_ptr,
				      unsigned *nr_available) LIBURING_NOEXCEPT
{
	struct io_uring_cqe *cqe;
	unsigned mask = ring->cq.ring_mask;
	unsigned shift = io_uring_cqe_shift(ring);
	unsigned available;
	int err = 0;

	for (;;) {
		/* acquire pairs with the kernel's release of new CQEs */
		unsigned tail = io_uring_smp_load_acquire(ring->cq.ktail);
		/* only we write the head: a plain load will do */
		unsigned head = *ring->cq.khead;

		cqe = NULL;
		available = tail - head;
		if (!available)
			break;

		cqe = &ring->cq.cqes[(head & mask) << shift];
		if (!io_uring_skip_cqe(ring, cqe, &err)) {
			/* a failed internal timeout is gone already */
			if (err)
				cqe = NULL;
			break;
		}
		cqe = NULL;
	}

	*cqe_ptr = cqe;
	if (nr_available)
		*nr_available = available;
	return err;
}

/*
 * A ready CQE without blocking: 0 with *cqe_ptr set, -EAGAIN if none, or
 * -errno.  The kernel is entered only when it may hold completions that
 * are not in the ring yet (IOPOLL, overflow, pending task work).
 */
IOURINGINLINE int io_uring_peek_cqe(struct io_uring *ring,
				    struct io_uring_cqe **cqe_ptr)
	LIBURING_NOEXCEPT
{
	if (!__io_uring_peek_cqe(ring, cqe_ptr, NULL)) {
		if (*cqe_ptr)
			return 0;
		if (!(ring->flags & IORING_SETUP_IOPOLL) &&
		    !(IO_URING_READ_ONCE(*ring->sq.kflags) &
		      (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN)))
			return -EAGAIN;
	}
	return io_uring_wait_cqe_nr(ring, cqe_ptr, 0);
}

/* A CQE, blocking until one is ready: 0 with *cqe_ptr set, or -errno. */
IOURINGINLINE int io_uring_wait_cqe(struct io_uring *ring,
				    struct io_uring_cqe **cqe_ptr)
	LIBURING_NOEXCEPT
{
	if (!__io_uring_peek_cqe(ring, cqe_ptr, NULL) && *cqe_ptr)
		return 0;
	return io_uring_wait_cqe_nr(ring, cqe_ptr, 1);
}

/* ---- Getting SQEs ------------------------------------------------------- */

/*
 * The next free SQE, cleared by io_uring_initialize_sqe(), or NULL when
 * the SQ is full.  It is submitted by the next io_uring_submit*().
 */
IOURINGINLINE struct io_uring_sqe *_io_uring_get_sqe(struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned head = io_uring_load_sq_head(ring);
	unsigned tail = sq->sqe_tail;
	struct io_uring_sqe *sqe;

	if (tail - head >= sq->ring_entries)
		return NULL;

	sqe = &sq->sqes[(tail & sq->ring_mask) << io_uring_sqe_shift(ring)];
	sq->sqe_tail = tail + 1;
	io_uring_initialize_sqe(sqe);
	return sqe;
}

/*
 * liburing.so keeps an exported io_uring_get_sqe for binaries built
 * before it became inline; the library itself (LIBURING_INTERNAL) sees the
 * declaration, everyone else the inline.
 */
#ifndef LIBURING_INTERNAL
IOURINGINLINE struct io_uring_sqe *io_uring_get_sqe(struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return _io_uring_get_sqe(ring);
}
#else
struct io_uring_sqe *io_uring_get_sqe(struct io_uring *ring);
#endif

/*
 * A 128-byte SQE: any SQE on an SQE128 ring; on an SQE_MIXED ring two
 * adjacent 64-byte slots (the request must use a *128 opcode).  When only
 * the last slot before the wrap is left, it is filled with a NOP whose
 * CQE is skipped, so the big entry starts at slot 0.  NULL when there is
 * no room or the ring supports neither mode.
 */
IOURINGINLINE struct io_uring_sqe *io_uring_get_sqe128(struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned head, tail;
	struct io_uring_sqe *sqe;

	if (ring->flags & IORING_SETUP_SQE128)
		return _io_uring_get_sqe(ring);
	if (!(ring->flags & IORING_SETUP_SQE_MIXED))
		return NULL;

	head = io_uring_load_sq_head(ring);
	tail = sq->sqe_tail;
	if (((tail + 1) & sq->ring_mask) == 0) {
		/* last slot: pad it, the big entry goes to the start */
		if ((tail + 2) - head >= sq->ring_entries)
			return NULL;
		sqe = _io_uring_get_sqe(ring);
		io_uring_prep_nop(sqe);
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
		tail = sq->sqe_tail;
	} else if ((tail + 1) - head >= sq->ring_entries) {
		return NULL;
	}

	sqe = &sq->sqes[tail & sq->ring_mask];
	sq->sqe_tail = tail + 2;
	io_uring_initialize_sqe(sqe);
	return sqe;
}

/* ---- Provided-buffer rings ---------------------------------------------- */

/* Index mask of a buffer ring with ring_entries (a power of two) entries. */
IOURINGINLINE int io_uring_buf_ring_mask(__u32 ring_entries)
	LIBURING_NOEXCEPT
{
	return (int) (ring_entries - 1);
}

IOURINGINLINE void io_uring_buf_ring_init(struct io_uring_buf_ring *br)
	LIBURING_NOEXCEPT
{
	br->tail = 0;
}

/*
 * Fill entry tail + buf_offset with a buffer.  Invisible to the kernel
 * until io_uring_buf_ring_advance() moves the tail past it.
 */
IOURINGINLINE void io_uring_buf_ring_add(struct io_uring_buf_ring *br,
					 void *addr, unsigned int len,
					 unsigned short bid, int mask,
					 int buf_offset) LIBURING_NOEXCEPT
{
	struct io_uring_buf *buf =
		&br->bufs[(br->tail + buf_offset) & mask];

	buf->addr = uring_ptr_to_u64(addr);
	buf->len = len;
	buf->bid = bid;
}

/* Hand count added buffers to the kernel (release: entries first). */
IOURINGINLINE void io_uring_buf_ring_advance(struct io_uring_buf_ring *br,
					     int count) LIBURING_NOEXCEPT
{
	unsigned short new_tail = (unsigned short) (br->tail + count);

	io_uring_smp_store_release(&br->tail, new_tail);
}

IOURINGINLINE void __io_uring_buf_ring_cq_advance(struct io_uring *ring,
						  struct io_uring_buf_ring *br,
						  int cq_count, int buf_count)
	LIBURING_NOEXCEPT
{
	io_uring_buf_ring_advance(br, buf_count);
	io_uring_cq_advance(ring, (unsigned) cq_count);
}

/*
 * Return count buffers to the ring and consume count CQEs in one go, for
 * the common "each CQE used one buffer, recycle it" loop.
 */
IOURINGINLINE void io_uring_buf_ring_cq_advance(struct io_uring *ring,
						struct io_uring_buf_ring *br,
						int count) LIBURING_NOEXCEPT
{
	__io_uring_buf_ring_cq_advance(ring, br, count, count);
}

/*
 * Buffers the application has added to buffer group bgid that the kernel
 * has not consumed yet (from the kernel's head, io_uring_buf_ring_head()),
 * or -errno.
 */
IOURINGINLINE int io_uring_buf_ring_available(struct io_uring *ring,
					      struct io_uring_buf_ring *br,
					      unsigned short bgid)
	LIBURING_NOEXCEPT
{
	uint16_t head;
	int ret = io_uring_buf_ring_head(ring, bgid, &head);

	if (ret)
		return ret;
	/* both are 16-bit ring positions: the difference wraps correctly */
	return (uint16_t) (br->tail - head);
}

#ifdef __cplusplus
}
#endif

#ifdef RSURING_UNDEF_IOURINGINLINE
#undef RSURING_UNDEF_IOURINGINLINE
#undef IOURINGINLINE
#endif
#ifdef RSURING_UNDEF_LOCAL_INLINE
#undef RSURING_UNDEF_LOCAL_INLINE
#undef _LOCAL_INLINE
#endif

#endif /* LIB_URING_H */
