//! Registration entry points (io_uring_register(2) wrappers).

use core::ffi::{c_int, c_uint};
use core::ptr;

use crate::register::{self, buf_ring, fixed};
use crate::ring::io_uring;
use crate::uapi::{
    __u64, io_uring_bpf, io_uring_buf_reg, io_uring_buf_ring, io_uring_clock_register,
    io_uring_mem_region_reg, io_uring_napi, io_uring_probe, io_uring_query_hdr, io_uring_reg_wait,
    io_uring_restriction, io_uring_sqe, io_uring_sync_cancel_reg, io_uring_zcrx_ifq_reg, zcrx_ctrl,
    IORING_REGISTER_SRC_REGISTERED,
};
use crate::{lifecycle, ring_fd};

ffi_exports! {
    /// Registers `nr_iovecs` fixed buffers.
    ///
    /// # Safety
    /// `ring` NULL or live; `iovecs` points to `nr_iovecs` iovecs.
    unsafe fn io_uring_register_buffers(ring: *mut io_uring, iovecs: *const libc::iovec, nr_iovecs: c_uint) -> c_int { live ring => fixed::register_buffers(ring, iovecs, nr_iovecs) }

    /// Registers fixed buffers with per-buffer tags.
    ///
    /// # Safety
    /// `ring` NULL or live; `iovecs`/`tags` NULL or `nr` entries.
    unsafe fn io_uring_register_buffers_tags(ring: *mut io_uring, iovecs: *const libc::iovec, tags: *const __u64, nr: c_uint) -> c_int { live ring => fixed::register_buffers_tags(ring, iovecs, tags, nr) }

    /// Registers an empty (sparse) fixed-buffer table of `nr` slots.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_register_buffers_sparse(ring: *mut io_uring, nr: c_uint) -> c_int { live ring => fixed::register_buffers_sparse(ring, nr) }

    /// Replaces fixed buffers starting at slot `off`, with tags.
    ///
    /// # Safety
    /// `ring` NULL or live; `iovecs`/`tags` NULL or `nr` entries.
    unsafe fn io_uring_register_buffers_update_tag(ring: *mut io_uring, off: c_uint, iovecs: *const libc::iovec, tags: *const __u64, nr: c_uint) -> c_int { live ring => fixed::register_buffers_update_tag(ring, off, iovecs, tags, nr) }

    /// Drops all fixed buffers.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_unregister_buffers(ring: *mut io_uring) -> c_int { live ring => fixed::unregister_buffers(ring) }

    /// Registers `nr_files` fixed files.
    ///
    /// # Safety
    /// `ring` NULL or live; `files` points to `nr_files` fds.
    unsafe fn io_uring_register_files(ring: *mut io_uring, files: *const c_int, nr_files: c_uint) -> c_int { live ring => fixed::register_files(ring, files, nr_files) }

    /// Registers fixed files with per-file tags.
    ///
    /// # Safety
    /// `ring` NULL or live; `files`/`tags` NULL or `nr` entries.
    unsafe fn io_uring_register_files_tags(ring: *mut io_uring, files: *const c_int, tags: *const __u64, nr: c_uint) -> c_int { live ring => fixed::register_files_tags(ring, files, tags, nr) }

    /// Registers an empty (sparse) fixed-file table of `nr` slots.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_register_files_sparse(ring: *mut io_uring, nr: c_uint) -> c_int { live ring => fixed::register_files_sparse(ring, nr) }

    /// Replaces fixed files starting at slot `off`; returns the number updated.
    ///
    /// # Safety
    /// `ring` NULL or live; `files` points to `nr_files` fds.
    unsafe fn io_uring_register_files_update(ring: *mut io_uring, off: c_uint, files: *const c_int, nr_files: c_uint) -> c_int { live ring => fixed::register_files_update(ring, off, files, nr_files) }

    /// Replaces fixed files starting at slot `off`, with tags.
    ///
    /// # Safety
    /// `ring` NULL or live; `files`/`tags` NULL or `nr_files` entries.
    unsafe fn io_uring_register_files_update_tag(ring: *mut io_uring, off: c_uint, files: *const c_int, tags: *const __u64, nr_files: c_uint) -> c_int { live ring => fixed::register_files_update_tag(ring, off, files, tags, nr_files) }

    /// Drops all fixed files.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_unregister_files(ring: *mut io_uring) -> c_int { live ring => fixed::unregister_files(ring) }

    /// Signals `fd` (an eventfd) on every completion.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_register_eventfd(ring: *mut io_uring, fd: c_int) -> c_int { live ring => register::register_eventfd(ring, fd) }

    /// Signals `fd` only for completions that were handled asynchronously.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_register_eventfd_async(ring: *mut io_uring, fd: c_int) -> c_int { live ring => register::register_eventfd_async(ring, fd) }

    /// Removes the registered eventfd.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_unregister_eventfd(ring: *mut io_uring) -> c_int { live ring => register::unregister_eventfd(ring) }

    /// Registers the caller's credentials; returns the personality id.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_register_personality(ring: *mut io_uring) -> c_int { live ring => register::register_personality(ring) }

    /// Drops personality `id`.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_unregister_personality(ring: *mut io_uring, id: c_int) -> c_int { live ring => register::unregister_personality(ring, id) }

    /// Fills a caller-provided probe with `nr` opcode slots.
    ///
    /// # Safety
    /// `ring` NULL or live; `p` has room for `nr` ops.
    unsafe fn io_uring_register_probe(ring: *mut io_uring, p: *mut io_uring_probe, nr: c_uint) -> c_int { live ring => register::register_probe(ring, p, nr) }

    /// Returns a probe of the ring's kernel (free with io_uring_free_probe), or NULL.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_get_probe_ring(ring: *mut io_uring) -> *mut io_uring_probe { memory ring => register::get_probe_ring(ring) }

    /// Returns a probe of the running kernel (free with io_uring_free_probe), or NULL.
    fn io_uring_get_probe() -> *mut io_uring_probe { => register::get_probe() }

    /// Frees a probe from io_uring_get_probe{,_ring}.
    ///
    /// # Safety
    /// `probe` must be NULL or come from io_uring_get_probe{,_ring}.
    unsafe fn io_uring_free_probe(probe: *mut io_uring_probe) { unsafe => register::free_probe(probe) }

    /// Restricts the io-wq workers of this ring to the CPUs in `mask`.
    ///
    /// # Safety
    /// `ring` NULL or live; `mask` points to `cpusz` bytes.
    unsafe fn io_uring_register_iowq_aff(ring: *mut io_uring, cpusz: usize, mask: *const libc::cpu_set_t) -> c_int { live ring => register::register_iowq_aff(ring, cpusz, mask) }

    /// Removes the io-wq CPU affinity.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_unregister_iowq_aff(ring: *mut io_uring) -> c_int { live ring => register::unregister_iowq_aff(ring) }

    /// Sets (and returns the previous) bounded/unbounded io-wq worker limits.
    ///
    /// # Safety
    /// `ring` NULL or live; `values` points to two unsigned ints.
    unsafe fn io_uring_register_iowq_max_workers(ring: *mut io_uring, values: *mut c_uint) -> c_int { nonnull values; live ring => register::register_iowq_max_workers(ring, values) }

    /// Registers the ring fd so io_uring_enter can skip the fd lookup.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_register_ring_fd(ring: *mut io_uring) -> c_int { fields ring => ring_fd::register_ring_fd(ring) }

    /// Undoes io_uring_register_ring_fd.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_unregister_ring_fd(ring: *mut io_uring) -> c_int { fields ring => ring_fd::unregister_ring_fd(ring) }

    /// Closes the ring fd, keeping only its registered index.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_close_ring_fd(ring: *mut io_uring) -> c_int { live ring => lifecycle::close_ring_fd(ring) }

    /// Registers a provided-buffer ring described by `reg` (`flags` are or-ed in).
    ///
    /// # Safety
    /// `ring` NULL or live; `reg` a valid buf_reg.
    unsafe fn io_uring_register_buf_ring(ring: *mut io_uring, reg: *mut io_uring_buf_reg, flags: c_uint) -> c_int { mut reg; live ring => buf_ring::register_buf_ring(ring, reg, flags) }

    /// Unregisters provided-buffer ring group `bgid`.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_unregister_buf_ring(ring: *mut io_uring, bgid: c_int) -> c_int { live ring => buf_ring::unregister_buf_ring(ring, bgid) }
}

/// Allocates and registers a provided-buffer ring; NULL with `*err` set on failure.
///
/// # Safety
/// `ring` NULL or live; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn io_uring_setup_buf_ring(
    ring: *mut io_uring,
    nentries: c_uint,
    bgid: c_int,
    flags: c_uint,
    err: *mut c_int,
) -> *mut io_uring_buf_ring {
    let result =
        ffi_boundary!(memory ring => buf_ring::setup_buf_ring(ring, nentries, bgid, flags));
    let (br, code) = match result {
        Ok(br) => (br, 0),
        Err(e) => (ptr::null_mut(), e),
    };
    // SAFETY: forwarded contract.
    if let Some(e) = unsafe { err.as_mut() } {
        *e = code;
    }
    br
}

ffi_exports! {
    /// Unregisters and frees a ring from io_uring_setup_buf_ring.
    ///
    /// # Safety
    /// `ring` NULL or live; `br` from io_uring_setup_buf_ring with `nentries`.
    unsafe fn io_uring_free_buf_ring(ring: *mut io_uring, br: *mut io_uring_buf_ring, nentries: c_uint, bgid: c_int) -> c_int { nonnull br; live ring => buf_ring::free_buf_ring(ring, br, nentries, bgid) }

    /// Cancels matching requests synchronously.
    ///
    /// # Safety
    /// `ring` NULL or live; `reg` a valid sync_cancel_reg.
    unsafe fn io_uring_register_sync_cancel(ring: *mut io_uring, reg: *mut io_uring_sync_cancel_reg) -> c_int { nonnull reg; live ring => register::register_sync_cancel(ring, reg) }

    /// Sets the range of fixed-file slots the kernel allocates from.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_register_file_alloc_range(ring: *mut io_uring, off: c_uint, len: c_uint) -> c_int { live ring => fixed::register_file_alloc_range(ring, off, len) }

    /// Restricts what a disabled ring may do once enabled.
    ///
    /// # Safety
    /// `ring` NULL or live; `res` points to `nr_res` restrictions.
    unsafe fn io_uring_register_restrictions(ring: *mut io_uring, res: *mut io_uring_restriction, nr_res: c_uint) -> c_int { live ring => register::register_restrictions(ring, res, nr_res) }

    /// Enables a ring created with IORING_SETUP_R_DISABLED.
    ///
    /// # Safety
    /// `ring` NULL or live.
    unsafe fn io_uring_enable_rings(ring: *mut io_uring) -> c_int { live ring => register::enable_rings(ring) }

    /// Reads the kernel's head of provided-buffer group `buf_group` into `*head`.
    ///
    /// # Safety
    /// `ring` NULL or live; `head` NULL or writable.
    unsafe fn io_uring_buf_ring_head(ring: *mut io_uring, buf_group: c_int, head: *mut u16) -> c_int { mut head; live ring => buf_ring::buf_ring_head(ring, buf_group, head) }

    /// Enables NAPI busy polling with the settings in `napi`.
    ///
    /// # Safety
    /// `ring` NULL or live; `napi` a valid struct io_uring_napi.
    unsafe fn io_uring_register_napi(ring: *mut io_uring, napi: *mut io_uring_napi) -> c_int { live ring => register::register_napi(ring, napi) }

    /// Disables NAPI busy polling; the previous settings land in `napi`.
    ///
    /// # Safety
    /// `ring` NULL or live; `napi` NULL or a writable struct io_uring_napi.
    unsafe fn io_uring_unregister_napi(ring: *mut io_uring, napi: *mut io_uring_napi) -> c_int { live ring => register::unregister_napi(ring, napi) }

    /// Selects the clock used for waits with timeouts.
    ///
    /// # Safety
    /// `ring` NULL or live; `arg` a valid struct io_uring_clock_register.
    unsafe fn io_uring_register_clock(ring: *mut io_uring, arg: *mut io_uring_clock_register) -> c_int { live ring => register::register_clock(ring, arg) }

    /// Clones `nr` registered buffers of `src` (from `src_off`) into `dst` (at
    /// `dst_off`); `flags` as the kernel defines them.
    ///
    /// # Safety
    /// `dst` and `src` NULL or live rings.
    unsafe fn __io_uring_clone_buffers_offset(dst: *mut io_uring, src: *mut io_uring, dst_off: c_uint, src_off: c_uint, nr: c_uint, flags: c_uint) -> c_int { ref src; live dst => fixed::clone_buffers_with_flags(dst, src, dst_off, src_off, nr, flags) }

    /// As __io_uring_clone_buffers_offset, naming `src` by its registered index
    /// where possible.
    ///
    /// # Safety
    /// `dst` and `src` NULL or live rings.
    unsafe fn io_uring_clone_buffers_offset(dst: *mut io_uring, src: *mut io_uring, dst_off: c_uint, src_off: c_uint, nr: c_uint, flags: c_uint) -> c_int { ref src; live dst => fixed::clone_buffers_with_flags(dst, src, dst_off, src_off, nr, flags | IORING_REGISTER_SRC_REGISTERED) }

    /// Clones all registered buffers of `src` into `dst`.
    ///
    /// # Safety
    /// `dst` and `src` NULL or live rings.
    unsafe fn io_uring_clone_buffers(dst: *mut io_uring, src: *mut io_uring) -> c_int { ref src; live dst => fixed::clone_buffers(dst, src) }

    /// Clones all registered buffers of `src` into `dst` with `flags`.
    ///
    /// # Safety
    /// `dst` and `src` NULL or live rings.
    unsafe fn __io_uring_clone_buffers(dst: *mut io_uring, src: *mut io_uring, flags: c_uint) -> c_int { ref src; live dst => fixed::clone_all_buffers_with_flags(dst, src, flags) }

    /// Superseded by memory regions (io_uring_register_region): always
    /// `-EINVAL`, as in liburing.
    ///
    /// # Safety
    /// No pointer is dereferenced.
    unsafe fn io_uring_register_wait_reg(_ring: *mut io_uring, _reg: *mut io_uring_reg_wait, _nr: c_int) -> c_int { => register::register_wait_reg() }

    /// Registers a memory region (e.g. for registered wait arguments).
    ///
    /// # Safety
    /// `ring` NULL or live; `reg` a valid struct io_uring_mem_region_reg.
    unsafe fn io_uring_register_region(ring: *mut io_uring, reg: *mut io_uring_mem_region_reg) -> c_int { live ring => register::register_region(ring, reg) }

    /// Registers a zero-copy receive interface queue.
    ///
    /// # Safety
    /// `ring` NULL or live; `reg` a valid struct io_uring_zcrx_ifq_reg.
    unsafe fn io_uring_register_ifq(ring: *mut io_uring, reg: *mut io_uring_zcrx_ifq_reg) -> c_int { live ring => register::register_ifq(ring, reg) }

    /// Zero-copy receive control operation.
    ///
    /// # Safety
    /// `ring` NULL or live; `ctrl` a valid struct zcrx_ctrl.
    unsafe fn io_uring_register_zcrx_ctrl(ring: *mut io_uring, ctrl: *mut zcrx_ctrl) -> c_int { live ring => register::register_zcrx_ctrl(ring, ctrl) }

    /// Sends a MSG_RING request described by `sqe` without a source ring.
    ///
    /// # Safety
    /// `sqe` a valid struct io_uring_sqe.
    unsafe fn io_uring_register_sync_msg(sqe: *mut io_uring_sqe) -> c_int { unsafe => register::register_sync_msg(sqe) }

    /// Installs a BPF filter on the ring's requests.
    ///
    /// # Safety
    /// `ring` NULL or live; `bpf` a valid struct io_uring_bpf.
    unsafe fn io_uring_register_bpf_filter(ring: *mut io_uring, bpf: *mut io_uring_bpf) -> c_int { live ring => register::register_bpf_filter(ring, bpf) }

    /// Installs a BPF filter for every ring of the calling task.
    ///
    /// # Safety
    /// `bpf` a valid struct io_uring_bpf.
    unsafe fn io_uring_register_bpf_filter_task(bpf: *mut io_uring_bpf) -> c_int { unsafe => register::register_bpf_filter_task(bpf) }

    /// Queries io_uring capabilities (a chain of query headers).
    ///
    /// # Safety
    /// `query` a valid struct io_uring_query_hdr chain.
    unsafe fn io_uring_register_query(query: *mut io_uring_query_hdr) -> c_int { unsafe => register::register_query(query) }
}
