//! Submission and completion entry points (the hot path).

use core::ffi::{c_int, c_uint};
use core::ptr;

use super::{cqe_array, guard, live_ring, with_ring, with_ring_cqe, PANICKED};
use crate::ring::{io_uring, LiveRing};
use crate::uapi::{__kernel_timespec, io_uring_cqe, io_uring_sqe};

/// Returns the next free SQE, or NULL when the SQ ring is full.
///
/// # Safety
/// `ring` must be NULL or a live ring.
#[no_mangle]
pub unsafe extern "C" fn io_uring_get_sqe(ring: *mut io_uring) -> *mut io_uring_sqe {
    // SAFETY: forwarded contract.
    match unsafe { live_ring(ring) } {
        Some(r) => guard(ptr::null_mut(), || r.get_sqe()),
        None => ptr::null_mut(),
    }
}

/// Submits the queued SQEs; returns how many were submitted.
///
/// # Safety
/// `ring` must be NULL or a live ring.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit(ring: *mut io_uring) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_ring(ring, |r| submit_and_wait(r, 0)) }
}

/// The submit paths of io_uring_submit and io_uring_submit_and_wait: a
/// plain ring's inline, the extensions' through [`submit_ext`].
#[inline(always)]
fn submit_and_wait(r: &mut LiveRing, wait_nr: c_uint) -> c_int {
    if r.rs_flags != 0 {
        return submit_ext(r, wait_nr);
    }
    r.submit_plain(wait_nr)
}

/// The extensions' submit path with a panic boundary of its own. An
/// `extern "C"` function cannot unwind, so the entry points calling it
/// need no unwinding landing pad, and their plain-ring path saves no
/// registers for one (callgrind: 45 -> 39 instructions for a QD1
/// submit_and_wait).
extern "C" fn submit_ext(r: &mut LiveRing, wait_nr: c_uint) -> c_int {
    guard(PANICKED, || r.submit_ext(wait_nr, false))
}

/// Submits the queued SQEs and waits for `wait_nr` completions.
///
/// # Safety
/// `ring` must be NULL or a live ring.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_wait(ring: *mut io_uring, wait_nr: c_uint) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_ring(ring, |r| submit_and_wait(r, wait_nr)) }
}

/// Submits and waits for `wait_nr` completions or until `ts` passes;
/// returns the submitted count, `-ETIME`, or `-errno`.
///
/// # Safety
/// `ring` must be NULL or a live ring; `cqe_ptr` writable; `ts`/`sigmask` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_wait_timeout(
    ring: *mut io_uring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    ts: *mut __kernel_timespec,
    sigmask: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_ring_cqe(ring, cqe_ptr, |r, out| {
            r.submit_and_wait_timeout(out, wait_nr, ts, 0, sigmask)
        })
    }
}

/// Submits and, whether or not anything was queued, flushes completions.
///
/// # Safety
/// `ring` must be NULL or a live ring.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_get_events(ring: *mut io_uring) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_ring(ring, |r| r.submit_and_get_events()) }
}

/// Enters the kernel to flush overflowed completions and run task work.
///
/// # Safety
/// `ring` must be NULL or a live ring.
#[no_mangle]
pub unsafe extern "C" fn io_uring_get_events(ring: *mut io_uring) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_ring(ring, |r| r.get_events()) }
}

/// Waits for `wait_nr` completions, or until `ts` passes (`-ETIME`).
///
/// # Safety
/// `ring` must be NULL or a live ring; `cqe_ptr` writable; `ts`/`sigmask` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn io_uring_wait_cqes(
    ring: *mut io_uring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    ts: *mut __kernel_timespec,
    sigmask: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_ring_cqe(ring, cqe_ptr, |r, out| {
            r.wait_cqes(out, wait_nr, ts, sigmask)
        })
    }
}

/// Waits for one completion or until `ts` passes (`-ETIME`).
///
/// # Safety
/// `ring` must be NULL or a live ring; `cqe_ptr` writable; `ts` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn io_uring_wait_cqe_timeout(
    ring: *mut io_uring,
    cqe_ptr: *mut *mut io_uring_cqe,
    ts: *mut __kernel_timespec,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_ring_cqe(ring, cqe_ptr, |r, out| r.wait_cqe_timeout(out, ts)) }
}

/// Fills `cqes` with up to `count` ready completions without consuming them.
///
/// # Safety
/// `ring` must be NULL or a live ring; `cqes` must have room for `count` pointers.
#[no_mangle]
pub unsafe extern "C" fn io_uring_peek_batch_cqe(
    ring: *mut io_uring,
    cqes: *mut *mut io_uring_cqe,
    count: c_uint,
) -> c_uint {
    if cqes.is_null() {
        return 0;
    }
    // SAFETY: forwarded contract.
    match unsafe { live_ring(ring) } {
        Some(r) => {
            // SAFETY: `cqes` has room for `count` pointers (forwarded contract).
            let out = unsafe { cqe_array(cqes, count) };
            guard(0, || r.peek_batch_cqe(out))
        }
        None => 0,
    }
}

/// The engine behind io_uring_wait_cqe / peek_cqe / wait_cqe_nr: submit
/// `submit` SQEs and wait for `wait_nr` completions.
///
/// # Safety
/// `ring` must be NULL or a live ring; `cqe_ptr` writable; `sigmask` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn __io_uring_get_cqe(
    ring: *mut io_uring,
    cqe_ptr: *mut *mut io_uring_cqe,
    submit: c_uint,
    wait_nr: c_uint,
    sigmask: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_ring_cqe(ring, cqe_ptr, |r, out| {
            r.get_cqe(out, submit, wait_nr, sigmask)
        })
    }
}

/// Sleeps until the SQ thread has made room in the SQ ring.
///
/// # Safety
/// `ring` must be NULL or a live ring.
#[no_mangle]
pub unsafe extern "C" fn __io_uring_sqring_wait(ring: *mut io_uring) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_ring(ring, |r| r.sqring_wait()) }
}

/// Like io_uring_submit_and_wait_timeout, but once the first completion is
/// in, waits at most `min_wait` microseconds more for `wait_nr` of them
/// (`-EINVAL` on kernels without IORING_FEAT_MIN_TIMEOUT).
///
/// # Safety
/// `ring` NULL or live; `cqe_ptr` writable; `ts`/`sigmask` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_wait_min_timeout(
    ring: *mut io_uring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    ts: *mut __kernel_timespec,
    min_wait: c_uint,
    sigmask: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_ring_cqe(ring, cqe_ptr, |r, out| {
            r.submit_and_wait_min_timeout(out, wait_nr, ts, min_wait, sigmask)
        })
    }
}

/// Like io_uring_wait_cqes, with a minimum-wait timeout of `min_ts_usec`
/// (`-EINVAL` on kernels without IORING_FEAT_MIN_TIMEOUT).
///
/// # Safety
/// `ring` NULL or live; `cqe_ptr` writable; `ts`/`sigmask` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn io_uring_wait_cqes_min_timeout(
    ring: *mut io_uring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    ts: *mut __kernel_timespec,
    min_ts_usec: c_uint,
    sigmask: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_ring_cqe(ring, cqe_ptr, |r, out| {
            r.wait_cqes_min(out, wait_nr, ts, min_ts_usec, sigmask)
        })
    }
}

/// Submits and waits using the wait parameters in slot `reg_index` of the
/// ring's registered wait region.
///
/// # Safety
/// `ring` NULL or live; `cqe_ptr` writable.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_wait_reg(
    ring: *mut io_uring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    reg_index: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_ring_cqe(ring, cqe_ptr, |r, out| {
            r.submit_and_wait_reg(out, wait_nr, reg_index)
        })
    }
}
