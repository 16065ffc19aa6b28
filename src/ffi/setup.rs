//! Ring setup and teardown entry points.

use core::ffi::{c_int, c_uint, c_void};

use crate::ring::io_uring;
use crate::uapi::io_uring_params;
use crate::{lifecycle, register, setup};

ffi_exports! {
    /// Creates a ring with `entries` SQEs and setup `flags`.
    ///
    /// # Safety
    /// `ring` must point to writable memory for a `struct io_uring`.
    unsafe fn io_uring_queue_init(entries: c_uint, ring: *mut io_uring, flags: c_uint) -> c_int { memory ring => lifecycle::queue_init(entries, ring, flags) }

    /// Creates a ring as described by `p`; `p` is updated as io_uring_setup(2) does.
    ///
    /// # Safety
    /// `ring` and `p` must point to writable structs of their types.
    unsafe fn io_uring_queue_init_params(entries: c_uint, ring: *mut io_uring, p: *mut io_uring_params) -> c_int { mut p; memory ring => lifecycle::queue_init_params(entries, ring, p) }

    /// Maps the rings of an fd created with io_uring_setup(2).
    ///
    /// # Safety
    /// `p` must be the params io_uring_setup returned for `fd`; `ring` writable.
    unsafe fn io_uring_queue_mmap(fd: c_int, p: *mut io_uring_params, ring: *mut io_uring) -> c_int { ref p; memory ring => lifecycle::queue_mmap(fd, p, ring) }

    /// Tears a ring down: unmaps it and closes its fd. A second call is a no-op.
    ///
    /// # Safety
    /// `ring` must be NULL or a ring set up by this library, not in use elsewhere.
    unsafe fn io_uring_queue_exit(ring: *mut io_uring) { memory ring => lifecycle::queue_exit(ring) }

    /// Keeps the ring's mappings out of fork()ed children.
    ///
    /// # Safety
    /// `ring` must be NULL or a live ring.
    unsafe fn io_uring_ring_dontfork(ring: *mut io_uring) -> c_int { live ring => setup::ring_dontfork(ring) }

    /// Locked memory a ring of `entries` with `flags` needs (0 on 5.12+ kernels).
    fn io_uring_mlock_size(entries: c_uint, flags: c_uint) -> libc::ssize_t { => setup::mlock_size(entries, flags) }

    /// Locked memory a ring described by `p` needs (0 on 5.12+ kernels).
    ///
    /// # Safety
    /// `p` must be NULL or a valid `struct io_uring_params`.
    unsafe fn io_uring_mlock_size_params(entries: c_uint, p: *mut io_uring_params) -> libc::ssize_t { ref p; => setup::mlock_size_params(entries, p) }

    /// Creates a ring whose SQEs and rings live in the caller's memory `buf`
    /// (`buf_size` bytes, e.g. a huge page). Returns the bytes used, or `-errno`
    /// (`-ENOMEM` when `buf` is too small).
    ///
    /// # Safety
    /// `ring` and `p` writable; `buf` `buf_size` writable bytes outliving the ring.
    unsafe fn io_uring_queue_init_mem(entries: c_uint, ring: *mut io_uring, p: *mut io_uring_params, buf: *mut c_void, buf_size: usize) -> c_int { mut p; nonnull buf; memory ring => lifecycle::queue_init_mem(entries, ring, p, buf, buf_size) }

    /// Bytes of ring memory a ring of `entries` with setup `flags` occupies.
    fn io_uring_memory_size(entries: c_uint, flags: c_uint) -> libc::ssize_t { => setup::memory_size(entries, flags) }

    /// Bytes of ring memory a ring described by `p` occupies.
    ///
    /// # Safety
    /// `p` must be NULL or a valid `struct io_uring_params`.
    unsafe fn io_uring_memory_size_params(entries: c_uint, p: *mut io_uring_params) -> libc::ssize_t { ref p; => setup::memory_size_params(entries, p) }

    /// Resizes the SQ and CQ rings to the sizes in `p` and remaps them.
    ///
    /// # Safety
    /// `ring` NULL or live; `p` NULL or a writable params struct.
    unsafe fn io_uring_resize_rings(ring: *mut io_uring, p: *mut io_uring_params) -> c_int { mut p; live ring => lifecycle::resize_rings(ring, p) }

    /// Whether waits on this ring count as iowait (`-EOPNOTSUPP` on kernels
    /// without IORING_FEAT_NO_IOWAIT).
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_set_iowait(ring: *mut io_uring, enable_iowait: bool) -> c_int { fields ring => register::set_iowait(ring, enable_iowait) }
}
