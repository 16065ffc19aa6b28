/* SPDX-License-Identifier: MIT */
/*
 * liburing-ffi's restated functions.
 *
 * liburing's liburing-ffi.map lists, in its first node (LIBURING_2.4), the
 * functions that liburing.so exports under LIBURING_2.0 ... 2.3 (and 2.6 for
 * the NAPI pair).  A binary linked against liburing's own liburing-ffi.so.2
 * therefore references e.g. io_uring_submit@LIBURING_2.4, while a binary
 * linked against liburing.so.2 references io_uring_submit@LIBURING_2.0.
 * librsuring.so serves as both libraries, and one symbol can have only one
 * default version, so liburing.map keeps liburing.so's node as the default
 * and this file adds each name once more as a non-default ("@", hidden from
 * the static linker) LIBURING_2.4 version: a wrapper with the exact
 * prototype that calls the real function.
 *
 * RSURING_FFI_RESTATED is the one list of those names (tests/abi.rs reads
 * it from this file): X(ret, name, params, args) for functions returning a
 * value, XV(void, name, params, args) for the void ones, one entry a line.
 * It is liburing 2.15's liburing-ffi.map LIBURING_2.4 node minus the names
 * that liburing.map also puts in LIBURING_2.4.
 */
#define LIBURING_INTERNAL /* io_uring_get_sqe: the library's, not the inline */
#include "liburing.h"

#define RSURING_FFI_RESTATED(X, XV) \
	X(struct io_uring_probe *, io_uring_get_probe, (void), ()) \
	X(struct io_uring_probe *, io_uring_get_probe_ring, (struct io_uring *ring), (ring)) \
	XV(void, io_uring_free_probe, (struct io_uring_probe *probe), (probe)) \
	X(struct io_uring_sqe *, io_uring_get_sqe, (struct io_uring *ring), (ring)) \
	X(unsigned int, io_uring_peek_batch_cqe, (struct io_uring *ring, struct io_uring_cqe **cqes, unsigned int count), (ring, cqes, count)) \
	XV(void, io_uring_queue_exit, (struct io_uring *ring), (ring)) \
	X(int, io_uring_queue_init, (unsigned int entries, struct io_uring *ring, unsigned int flags), (entries, ring, flags)) \
	X(int, io_uring_queue_init_params, (unsigned int entries, struct io_uring *ring, struct io_uring_params *p), (entries, ring, p)) \
	X(int, io_uring_queue_mmap, (int fd, struct io_uring_params *p, struct io_uring *ring), (fd, p, ring)) \
	X(int, io_uring_register_buffers, (struct io_uring *ring, const struct iovec *iovecs, unsigned int nr_iovecs), (ring, iovecs, nr_iovecs)) \
	X(int, io_uring_register_eventfd, (struct io_uring *ring, int fd), (ring, fd)) \
	X(int, io_uring_register_eventfd_async, (struct io_uring *ring, int fd), (ring, fd)) \
	X(int, io_uring_register_files, (struct io_uring *ring, const int *files, unsigned int nr_files), (ring, files, nr_files)) \
	X(int, io_uring_register_files_update, (struct io_uring *ring, unsigned int off, const int *files, unsigned int nr_files), (ring, off, files, nr_files)) \
	X(int, io_uring_register_personality, (struct io_uring *ring), (ring)) \
	X(int, io_uring_register_probe, (struct io_uring *ring, struct io_uring_probe *p, unsigned int nr), (ring, p, nr)) \
	X(int, io_uring_ring_dontfork, (struct io_uring *ring), (ring)) \
	X(int, io_uring_submit, (struct io_uring *ring), (ring)) \
	X(int, io_uring_submit_and_wait, (struct io_uring *ring, unsigned int wait_nr), (ring, wait_nr)) \
	X(int, io_uring_unregister_buffers, (struct io_uring *ring), (ring)) \
	X(int, io_uring_unregister_eventfd, (struct io_uring *ring), (ring)) \
	X(int, io_uring_unregister_files, (struct io_uring *ring), (ring)) \
	X(int, io_uring_unregister_personality, (struct io_uring *ring, int id), (ring, id)) \
	X(int, io_uring_wait_cqe_timeout, (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, struct __kernel_timespec *ts), (ring, cqe_ptr, ts)) \
	X(int, io_uring_wait_cqes, (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned int wait_nr, struct __kernel_timespec *ts, sigset_t *sigmask), (ring, cqe_ptr, wait_nr, ts, sigmask)) \
	X(int, __io_uring_get_cqe, (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned int submit, unsigned int wait_nr, sigset_t *sigmask), (ring, cqe_ptr, submit, wait_nr, sigmask)) \
	X(int, __io_uring_sqring_wait, (struct io_uring *ring), (ring)) \
	X(ssize_t, io_uring_mlock_size_params, (unsigned int entries, struct io_uring_params *p), (entries, p)) \
	X(ssize_t, io_uring_mlock_size, (unsigned int entries, unsigned int flags), (entries, flags)) \
	X(int, io_uring_register_buffers_tags, (struct io_uring *ring, const struct iovec *iovecs, const __u64 *tags, unsigned int nr), (ring, iovecs, tags, nr)) \
	X(int, io_uring_register_buffers_update_tag, (struct io_uring *ring, unsigned int off, const struct iovec *iovecs, const __u64 *tags, unsigned int nr), (ring, off, iovecs, tags, nr)) \
	X(int, io_uring_register_files_tags, (struct io_uring *ring, const int *files, const __u64 *tags, unsigned int nr), (ring, files, tags, nr)) \
	X(int, io_uring_register_files_update_tag, (struct io_uring *ring, unsigned int off, const int *files, const __u64 *tags, unsigned int nr_files), (ring, off, files, tags, nr_files)) \
	X(int, io_uring_register_iowq_aff, (struct io_uring *ring, size_t cpusz, const cpu_set_t *mask), (ring, cpusz, mask)) \
	X(int, io_uring_unregister_iowq_aff, (struct io_uring *ring), (ring)) \
	X(int, io_uring_register_iowq_max_workers, (struct io_uring *ring, unsigned int *values), (ring, values)) \
	X(int, io_uring_submit_and_wait_timeout, (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned int wait_nr, struct __kernel_timespec *ts, sigset_t *sigmask), (ring, cqe_ptr, wait_nr, ts, sigmask)) \
	X(int, io_uring_register_ring_fd, (struct io_uring *ring), (ring)) \
	X(int, io_uring_unregister_ring_fd, (struct io_uring *ring), (ring)) \
	X(int, io_uring_register_files_sparse, (struct io_uring *ring, unsigned int nr), (ring, nr)) \
	X(int, io_uring_register_buffers_sparse, (struct io_uring *ring, unsigned int nr), (ring, nr)) \
	X(int, io_uring_register_buf_ring, (struct io_uring *ring, struct io_uring_buf_reg *reg, unsigned int flags), (ring, reg, flags)) \
	X(int, io_uring_unregister_buf_ring, (struct io_uring *ring, int bgid), (ring, bgid)) \
	X(int, io_uring_register_sync_cancel, (struct io_uring *ring, struct io_uring_sync_cancel_reg *reg), (ring, reg)) \
	X(int, io_uring_register_file_alloc_range, (struct io_uring *ring, unsigned int off, unsigned int len), (ring, off, len)) \
	X(int, io_uring_enter, (unsigned int fd, unsigned int to_submit, unsigned int min_complete, unsigned int flags, sigset_t *sig), (fd, to_submit, min_complete, flags, sig)) \
	X(int, io_uring_enter2, (unsigned int fd, unsigned int to_submit, unsigned int min_complete, unsigned int flags, void *arg, size_t sz), (fd, to_submit, min_complete, flags, arg, sz)) \
	X(int, io_uring_setup, (unsigned int entries, struct io_uring_params *p), (entries, p)) \
	X(int, io_uring_register, (unsigned int fd, unsigned int opcode, const void *arg, unsigned int nr_args), (fd, opcode, arg, nr_args)) \
	X(int, io_uring_get_events, (struct io_uring *ring), (ring)) \
	X(int, io_uring_submit_and_get_events, (struct io_uring *ring), (ring)) \
	X(int, io_uring_register_napi, (struct io_uring *ring, struct io_uring_napi *napi), (ring, napi)) \
	X(int, io_uring_unregister_napi, (struct io_uring *ring, struct io_uring_napi *napi), (ring, napi))

/*
 * rsuring_ffi24_<name>: global so that the assembler can version it, hidden
 * from the dynamic symbol table by liburing.map's "local: *".  The static
 * assertion keeps each prototype identical to the header's declaration of
 * the real function.
 */
#define RSURING_WRAPPER_HEAD(ret, name, params) \
	ret rsuring_ffi24_##name params; \
	_Static_assert(__builtin_types_compatible_p( \
			       __typeof__(&rsuring_ffi24_##name), \
			       __typeof__(&name)), \
		       "prototype of " #name " differs from liburing.h"); \
	__asm__(".symver rsuring_ffi24_" #name ", " #name "@LIBURING_2.4");

#define RSURING_WRAPPER(ret, name, params, args) \
	RSURING_WRAPPER_HEAD(ret, name, params) \
	ret rsuring_ffi24_##name params \
	{ \
		return name args; \
	}

#define RSURING_WRAPPER_VOID(ret, name, params, args) \
	RSURING_WRAPPER_HEAD(ret, name, params) \
	ret rsuring_ffi24_##name params \
	{ \
		name args; \
	}

RSURING_FFI_RESTATED(RSURING_WRAPPER, RSURING_WRAPPER_VOID)
