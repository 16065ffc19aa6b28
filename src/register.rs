//! io_uring_register(2): one function per operation of liburing's API,
//! each choosing the kernel opcode and packing its argument. Eventfds,
//! personalities, probes, io-wq settings, restrictions, NAPI, clocks,
//! memory regions, zero-copy receive, BPF filters, queries and ring
//! resizing are here; fixed files and buffers are [`fixed`], provided-buffer
//! rings [`buf_ring`], registered ring fds `crate::ring_fd`.
//!
//! Layer 4 (see lib.rs). Functions taking the plain [`io_uring`]: a
//! registration reads only its fds and flags.
//!
//! Pointer arguments are the application's, passed to the kernel as they
//! are: the kernel checks their addresses (`-EFAULT`) and reads or writes
//! them as the operation defines. Each `unsafe` function's contract is only
//! that they are what the operation takes.

use core::ffi::{c_int, c_uint, c_void};
use core::ptr;

use crate::ring::{int_flags, io_uring};
use crate::sys;
use crate::uapi::{
    self, io_uring_bpf, io_uring_clock_register, io_uring_mem_region_reg, io_uring_napi,
    io_uring_params, io_uring_probe, io_uring_probe_op, io_uring_query_hdr, io_uring_restriction,
    io_uring_sqe, io_uring_sync_cancel_reg, io_uring_zcrx_ifq_reg, zcrx_ctrl,
    IORING_REGISTER_BPF_FILTER, IORING_REGISTER_CLOCK, IORING_REGISTER_ENABLE_RINGS,
    IORING_REGISTER_EVENTFD, IORING_REGISTER_EVENTFD_ASYNC, IORING_REGISTER_IOWQ_AFF,
    IORING_REGISTER_IOWQ_MAX_WORKERS, IORING_REGISTER_MEM_REGION, IORING_REGISTER_NAPI,
    IORING_REGISTER_PERSONALITY, IORING_REGISTER_PROBE, IORING_REGISTER_QUERY,
    IORING_REGISTER_RESIZE_RINGS, IORING_REGISTER_RESTRICTIONS, IORING_REGISTER_SEND_MSG_RING,
    IORING_REGISTER_SYNC_CANCEL, IORING_REGISTER_USE_REGISTERED_RING, IORING_REGISTER_ZCRX_CTRL,
    IORING_REGISTER_ZCRX_IFQ, IORING_UNREGISTER_EVENTFD, IORING_UNREGISTER_IOWQ_AFF,
    IORING_UNREGISTER_NAPI, IORING_UNREGISTER_PERSONALITY,
};

pub mod buf_ring;
pub mod fixed;

/// Registers through the ring's registered index when the kernel allows it,
/// otherwise through its fd.
///
/// # Safety
/// `arg` must be valid for `opcode` and `nr_args`.
pub unsafe fn do_register(ring: &io_uring, opcode: u32, arg: *const c_void, nr_args: u32) -> c_int {
    let (fd, opcode) = if ring.int_flags & int_flags::REG_REG_RING != 0 {
        (
            ring.enter_ring_fd,
            opcode | IORING_REGISTER_USE_REGISTERED_RING,
        )
    } else if ring.ring_fd < 0 {
        // fd -1 would ask the kernel for a ring-less ("blind") registration.
        return -libc::EBADF;
    } else {
        (ring.ring_fd, opcode)
    };
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_register(fd as u32, opcode, arg, nr_args) }
}

/// A registration that names no ring (fd -1, which the kernel takes as
/// "none" for the opcodes that allow it).
///
/// # Safety
/// As for [`do_register`].
unsafe fn register_without_ring(opcode: u32, arg: *const c_void, nr_args: u32) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_register(u32::MAX, opcode, arg, nr_args) }
}

/// Passes a struct argument built here; `size` or 1 as `nr_args`.
///
/// # Safety
/// The pointers inside `arg` must be valid for `opcode`.
pub(super) unsafe fn register_struct<T>(
    ring: &io_uring,
    opcode: u32,
    arg: &T,
    nr_args: u32,
) -> c_int {
    // SAFETY: `arg` is a live T for the call; its pointers per the contract.
    unsafe { do_register(ring, opcode, ptr::from_ref(arg).cast(), nr_args) }
}

// ---- eventfds and personalities ---------------------------------------------

/// `io_uring_register_eventfd`: signal `fd` on every completion.
pub fn register_eventfd(ring: &io_uring, fd: c_int) -> c_int {
    // SAFETY: an int argument.
    unsafe { register_struct(ring, IORING_REGISTER_EVENTFD, &fd, 1) }
}

/// `io_uring_register_eventfd_async`: signal `fd` for async completions.
pub fn register_eventfd_async(ring: &io_uring, fd: c_int) -> c_int {
    // SAFETY: an int argument.
    unsafe { register_struct(ring, IORING_REGISTER_EVENTFD_ASYNC, &fd, 1) }
}

/// `io_uring_unregister_eventfd`.
pub fn unregister_eventfd(ring: &io_uring) -> c_int {
    // SAFETY: no argument.
    unsafe { do_register(ring, IORING_UNREGISTER_EVENTFD, ptr::null(), 0) }
}

/// `io_uring_register_personality`: returns the new personality id.
pub fn register_personality(ring: &io_uring) -> c_int {
    // SAFETY: no argument.
    unsafe { do_register(ring, IORING_REGISTER_PERSONALITY, ptr::null(), 0) }
}

/// `io_uring_unregister_personality`.
pub fn unregister_personality(ring: &io_uring, id: c_int) -> c_int {
    // SAFETY: no argument (the id goes in nr_args).
    unsafe {
        do_register(
            ring,
            IORING_UNREGISTER_PERSONALITY,
            ptr::null(),
            id as c_uint,
        )
    }
}

// ---- probes -------------------------------------------------------------------

/// Number of opcode slots a probe asks for (the kernel's opcode space).
const PROBE_OPS: usize = 256;

/// `io_uring_register_probe`: fills the caller's probe with `nr` op slots.
///
/// # Safety
/// `probe` must have room for `nr` ops.
pub unsafe fn register_probe(ring: &io_uring, probe: *mut io_uring_probe, nr: u32) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { do_register(ring, IORING_REGISTER_PROBE, probe.cast(), nr) }
}

/// A malloc()ed probe filled by `register` (given the probe and its room
/// in ops), or NULL.
fn alloc_probe(register: impl FnOnce(*mut c_void, u32) -> c_int) -> *mut io_uring_probe {
    let len = core::mem::size_of::<io_uring_probe>()
        + PROBE_OPS * core::mem::size_of::<io_uring_probe_op>();
    // SAFETY: calloc has no preconditions; the result is checked.
    let probe = unsafe { libc::calloc(1, len) } as *mut io_uring_probe;
    if probe.is_null() {
        return probe;
    }
    if register(probe.cast(), PROBE_OPS as u32) < 0 {
        // SAFETY: allocated above with calloc.
        unsafe { libc::free(probe.cast()) };
        return ptr::null_mut();
    }
    probe
}

/// `io_uring_get_probe_ring`: a malloc()ed probe (free with
/// [`free_probe`]), or NULL.
pub fn get_probe_ring(ring: &io_uring) -> *mut io_uring_probe {
    // SAFETY: the probe has room for the ops passed.
    alloc_probe(|probe, ops| unsafe { do_register(ring, IORING_REGISTER_PROBE, probe, ops) })
}

/// `io_uring_get_probe`: probes with a throw-away kernel ring that is never
/// mapped and never sees the library's policy (no SQ thread, no
/// registration, no statistics).
pub fn get_probe() -> *mut io_uring_probe {
    let mut p = io_uring_params::default();
    // SAFETY: `p` is a valid, writable params struct.
    let fd = unsafe { sys::io_uring_setup(2, &mut p) };
    if fd < 0 {
        return ptr::null_mut();
    }
    // SAFETY: the probe has room for the ops passed; `fd` is our ring.
    let probe = alloc_probe(|probe, ops| unsafe {
        sys::io_uring_register(fd as u32, IORING_REGISTER_PROBE, probe, ops)
    });
    sys::close(fd);
    probe
}

/// `io_uring_free_probe`.
///
/// # Safety
/// `probe` must be NULL or come from [`get_probe`] / [`get_probe_ring`]
/// (calloc) and not be used afterwards.
pub unsafe fn free_probe(probe: *mut io_uring_probe) {
    // SAFETY: forwarded contract; free(NULL) does nothing.
    unsafe { libc::free(probe.cast()) }
}

// ---- io-wq, restrictions, enabling ----------------------------------------------

/// `io_uring_register_iowq_aff`: the io-wq workers' CPUs (`cpusz` bytes
/// of mask; sizes that do not fit the kernel's argument are `-EINVAL`).
///
/// # Safety
/// `mask` must point to `cpusz` bytes.
pub unsafe fn register_iowq_aff(
    ring: &io_uring,
    cpusz: usize,
    mask: *const libc::cpu_set_t,
) -> c_int {
    if cpusz >= 1 << 31 {
        return -libc::EINVAL;
    }
    // SAFETY: forwarded contract.
    unsafe { do_register(ring, IORING_REGISTER_IOWQ_AFF, mask.cast(), cpusz as c_uint) }
}

/// `io_uring_unregister_iowq_aff`.
pub fn unregister_iowq_aff(ring: &io_uring) -> c_int {
    // SAFETY: no argument.
    unsafe { do_register(ring, IORING_UNREGISTER_IOWQ_AFF, ptr::null(), 0) }
}

/// Operations that hand the kernel one pointer of the application's, as
/// it is, with a fixed count: one function each, from this table.
macro_rules! pointer_ops {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $ty:ty) => $op:ident, $nr:literal;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        #[doc = concat!("`", stringify!($arg), "` must be what the operation takes (module doc).")]
        pub unsafe fn $name(ring: &io_uring, $arg: *mut $ty) -> c_int {
            // SAFETY: forwarded contract.
            unsafe { do_register(ring, $op, $arg.cast(), $nr) }
        }
    )*};
}

pointer_ops! {
    /// `io_uring_register_iowq_max_workers`: sets, and returns in place, the
    /// bounded and unbounded worker limits.
    register_iowq_max_workers(values: c_uint) => IORING_REGISTER_IOWQ_MAX_WORKERS, 2;
    /// `io_uring_register_sync_cancel`.
    register_sync_cancel(reg: io_uring_sync_cancel_reg) => IORING_REGISTER_SYNC_CANCEL, 1;
    /// `io_uring_register_napi`.
    register_napi(napi: io_uring_napi) => IORING_REGISTER_NAPI, 1;
    /// `io_uring_unregister_napi`: the previous settings land in `napi`.
    unregister_napi(napi: io_uring_napi) => IORING_UNREGISTER_NAPI, 1;
    /// `io_uring_register_clock`.
    register_clock(clock: io_uring_clock_register) => IORING_REGISTER_CLOCK, 0;
    /// `io_uring_register_region`.
    register_region(reg: io_uring_mem_region_reg) => IORING_REGISTER_MEM_REGION, 1;
    /// `io_uring_register_ifq`: a zero-copy receive interface queue.
    register_ifq(reg: io_uring_zcrx_ifq_reg) => IORING_REGISTER_ZCRX_IFQ, 1;
    /// `io_uring_register_zcrx_ctrl`.
    register_zcrx_ctrl(ctrl: zcrx_ctrl) => IORING_REGISTER_ZCRX_CTRL, 0;
    /// `io_uring_register_bpf_filter`: a filter on this ring's requests.
    register_bpf_filter(bpf: io_uring_bpf) => IORING_REGISTER_BPF_FILTER, 1;
}

/// `io_uring_register_restrictions`.
///
/// # Safety
/// `res` must point to `nr` restrictions.
pub unsafe fn register_restrictions(
    ring: &io_uring,
    res: *mut io_uring_restriction,
    nr: u32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { do_register(ring, IORING_REGISTER_RESTRICTIONS, res.cast(), nr) }
}

/// `io_uring_enable_rings`.
pub fn enable_rings(ring: &io_uring) -> c_int {
    // SAFETY: no argument.
    unsafe { do_register(ring, IORING_REGISTER_ENABLE_RINGS, ptr::null(), 0) }
}

// ---- NAPI, clocks, regions, zero-copy receive, BPF, queries -----------------

/// `io_uring_register_wait_reg`: superseded by memory regions
/// ([`register_region`]); always `-EINVAL`, as in liburing.
pub fn register_wait_reg() -> c_int {
    -libc::EINVAL
}

/// `io_uring_register_bpf_filter_task`: a filter for every ring of the
/// calling task.
///
/// # Safety
/// `bpf` must be a valid io_uring_bpf.
pub unsafe fn register_bpf_filter_task(bpf: *mut io_uring_bpf) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { register_without_ring(IORING_REGISTER_BPF_FILTER, bpf.cast(), 1) }
}

/// `io_uring_register_sync_msg`: a MSG_RING request without a source ring.
///
/// # Safety
/// `sqe` must be a valid SQE.
pub unsafe fn register_sync_msg(sqe: *mut io_uring_sqe) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { register_without_ring(IORING_REGISTER_SEND_MSG_RING, sqe.cast(), 1) }
}

/// `io_uring_register_query`: a chain of query headers.
///
/// # Safety
/// `query` must be a valid io_uring_query_hdr chain.
pub unsafe fn register_query(query: *mut io_uring_query_hdr) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { register_without_ring(IORING_REGISTER_QUERY, query.cast(), 0) }
}

// ---- ring state -------------------------------------------------------------------

/// IORING_REGISTER_RESIZE_RINGS: asks the kernel for the sizes in `p`,
/// which it fills with the new layout (the remapping is
/// `crate::lifecycle::resize_rings`).
pub fn resize_rings(ring: &io_uring, p: &mut io_uring_params) -> c_int {
    // SAFETY: `p` is a valid params struct for the kernel to fill.
    unsafe {
        do_register(
            ring,
            IORING_REGISTER_RESIZE_RINGS,
            ptr::from_mut(p).cast(),
            1,
        )
    }
}

/// `io_uring_set_iowait`: whether waits on this ring count as iowait.
pub fn set_iowait(ring: &mut io_uring, enable: bool) -> c_int {
    if ring.features & uapi::IORING_FEAT_NO_IOWAIT == 0 {
        return -libc::EOPNOTSUPP;
    }
    if enable {
        ring.int_flags &= !int_flags::NO_IOWAIT;
    } else {
        ring.int_flags |= int_flags::NO_IOWAIT;
    }
    0
}
