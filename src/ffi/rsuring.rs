//! rsuring's extensions to the liburing API (declared in rsuring.h).

use core::ffi::{c_char, c_int, c_uint};

use core::mem::MaybeUninit;

use super::cqe_array;
use super::queue::with_hot_ring;
use crate::queue::CqeOut;
use crate::ring::io_uring;
use crate::stats::{self, rsuring_stats};
use crate::uapi::{__kernel_timespec, io_uring_cqe};
use crate::{lifecycle, sqpoll};

/// `struct rsuring_sqpoll_info`: the shared SQ poller a ring belongs to.
#[repr(C)]
#[derive(Debug, Default)]
pub struct rsuring_sqpoll_info {
    /// CPU the poller thread is bound to, or -1 when unbound.
    pub cpu: c_int,
    /// Live rings sharing the poller, this one included.
    pub members: c_uint,
}

/// Reports the shared SQ poller group of `ring`: 0 and `*info` filled, or
/// `-ENOENT` when the ring is not in a shared group, `-EFAULT` for NULL.
///
/// # Safety
/// `ring` NULL or a live ring; `info` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsuring_sqpoll_group(
    ring: *mut io_uring,
    info: *mut rsuring_sqpoll_info,
) -> c_int {
    ffi_boundary!(mut info; live ring => match sqpoll::group_of(ring) {
        Some(g) => {
            info.cpu = g.cpu.map_or(-1, |c| c as c_int);
            info.members = g.members as c_uint;
            0
        }
        None => -libc::ENOENT,
    })
}

/// Waits (one io_uring_enter at most) until at least `min` CQEs are ready
/// or `ts` passes, then stores up to `max` CQE pointers in `cqes` without
/// consuming them; the caller calls io_uring_cq_advance(ring, n) once.
/// Returns the count, `-ETIME` when the timeout passed with nothing ready,
/// or `-errno` (`-EINVAL` for max 0, min > max, or a timeout on a kernel
/// without IORING_FEAT_EXT_ARG).
///
/// # Safety
/// `ring` NULL or a live ring; `cqes` room for `max` pointers; `ts` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn rsuring_wait_batch_cqe(
    ring: *mut io_uring,
    cqes: *mut *mut io_uring_cqe,
    max: c_uint,
    min: c_uint,
    ts: *mut __kernel_timespec,
) -> c_int {
    // The caller's array as CQE slots, None for NULL (both paths take it
    // so; the slow one answers `-EFAULT`).
    // SAFETY: a non-NULL `cqes` has room for `max` pointers (forwarded
    // contract).
    let mut out = (!cqes.is_null()).then(|| unsafe { cqe_array(cqes, max) });
    // CQEs that are ready already, on a plain ring: inline code that
    // cannot unwind (no catching frame, no saved registers); anything else
    // out of line, where a frame catches.
    ffi_hot!(if out.is_some(), hot_reap_ring ring => {
        out.as_deref_mut().and_then(|slots| ring.wait_batch_ready(slots, min))
    }; else wait_batch_slow(ring, out, min, ts))
}

/// [`rsuring_wait_batch_cqe`] when it has to enter, or for any ring but a
/// plain one: the caller's CQE array comes as the slots the export made of
/// it (`None` for a NULL array: `-EFAULT`), the rest as passed.
///
/// # Safety
/// As for [`rsuring_wait_batch_cqe`] (`ring` NULL or a live ring, `ts`
/// NULL or valid).
#[inline(never)]
unsafe fn wait_batch_slow(
    ring: *mut io_uring,
    out: Option<&mut [CqeOut]>,
    min: c_uint,
    ts: *mut __kernel_timespec,
) -> c_int {
    let Some(out) = out else {
        return -libc::EFAULT;
    };
    // SAFETY: forwarded contract.
    unsafe { with_hot_ring(ring, move |r| r.wait_batch_cqe(out, min, ts)) }
}

/// Turns per-ring statistics on (they are on for every ring under
/// RSURING_STATS). Returns 0, `-ENOMEM` when the process has statistics for
/// as many rings as it can hold, or `-EFAULT` for NULL.
///
/// # Safety
/// `ring` NULL or a live ring.
#[no_mangle]
pub unsafe extern "C" fn rsuring_stats_enable(ring: *mut io_uring) -> c_int {
    ffi_boundary!(live ring => lifecycle::enable_stats(ring))
}

/// Formats the ring's statistics line (the format RSURING_STATS prints,
/// without `end=` and without a newline) into `buf`, truncated to `len - 1`
/// bytes and NUL-terminated when `len > 0`. Returns the length of the whole
/// line (as snprintf does: a result >= `len` means it was truncated), or
/// `-ENOENT` when statistics are off for this ring, `-EFAULT` for a NULL
/// ring or a NULL `buf` with `len > 0`.
///
/// # Safety
/// `ring` NULL or a live ring; `buf` NULL or `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn rsuring_stats_format(
    ring: *mut io_uring,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    let out: &mut [MaybeUninit<u8>] = if len == 0 {
        &mut []
    } else if buf.is_null() {
        return -libc::EFAULT;
    } else {
        // SAFETY: `buf` has `len` writable bytes (forwarded contract).
        unsafe { core::slice::from_raw_parts_mut(buf.cast(), len) }
    };
    ffi_boundary!(live ring => match lifecycle::stats_line(ring) {
        Some(line) => stats::format::copy_c_string(&line, out),
        None => -libc::ENOENT,
    })
}

/// Copies the ring's statistics into `*out`: 0, or `-ENOENT` when
/// statistics are off for this ring, `-EFAULT` for NULL.
///
/// # Safety
/// `ring` NULL or a live ring; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rsuring_ring_stats(ring: *mut io_uring, out: *mut rsuring_stats) -> c_int {
    ffi_boundary!(mut out; live ring => match stats::snapshot(ring) {
        Some(s) => {
            *out = s;
            0
        }
        None => -libc::ENOENT,
    })
}

/// Creates a ring whose completions are run in one batch when the owner
/// reaps: IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
/// IORING_SETUP_TASKRUN_FLAG (only the creating thread may submit and
/// wait), falling back to
/// IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG and then to `flags`
/// alone on kernels without them. SQPOLL rings keep `flags` (their poll
/// thread already runs completions in batches). Returns 0 or `-errno`.
///
/// # Safety
/// `ring` must point to writable memory for a `struct io_uring`.
#[no_mangle]
pub unsafe extern "C" fn rsuring_queue_init_batched(
    entries: c_uint,
    ring: *mut io_uring,
    flags: c_uint,
) -> c_int {
    ffi_boundary!(memory ring => lifecycle::queue_init_batched(entries, ring, flags))
}
