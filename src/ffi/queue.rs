//! Submission and completion entry points (the hot path). The hot ones
//! (submit, peeks, the `__io_uring_get_cqe` engine) are [`ffi_hot!`]
//! bodies, the rest [`ffi_boundary!`] bodies. Which submit path a ring
//! takes past its pointer checks is the core's choice
//! ([`LiveRing::submit_and_wait_with`]); what is chosen here is only how
//! much checking a ring's `rs_flags` lets the entry point skip.

use core::ffi::{c_int, c_uint};

use super::{cqe_array, guard, hot_reap_ring, live_ring, with_ring, PANICKED};
use crate::queue::{CqeOut, WaitArgs};
use crate::ring::{io_uring, LiveRing};
use crate::uapi::{__kernel_timespec, io_uring_cqe};

// io_uring_get_sqe is the header's _io_uring_get_sqe, exported by
// src/ffi/inline_ffi.c (one implementation for the inline and the exported
// symbol).

/// [`with_ring`] for the hot entry points that reap (waits): a plain ring,
/// or one with only an automatic ring fd (see [`super::hot_ring`]), runs `f` at
/// once; every other ring (NULL: `-EFAULT`, not set up:
/// `-EBADF`, a ring using an extension, a ring another liburing set up)
/// goes through [`with_ring`]'s checks, out of line.
///
/// # Safety
/// As for [`with_ring`].
#[inline(always)]
pub(super) unsafe fn with_hot_ring<F>(ring: *mut io_uring, f: F) -> c_int
where
    F: FnOnce(&mut LiveRing) -> c_int,
{
    // SAFETY: forwarded contract.
    if let Some(r) = unsafe { hot_reap_ring(ring) } {
        return guard(PANICKED, || f(r));
    }
    #[inline(never)]
    unsafe fn checked<F: FnOnce(&mut LiveRing) -> c_int>(ring: *mut io_uring, f: F) -> c_int {
        // SAFETY: forwarded contract.
        unsafe { with_marked_ring(ring, f) }
    }
    // SAFETY: forwarded contract.
    unsafe { checked(ring, f) }
}

/// [`with_ring`], but a ring this library marked live (`rs_flags::LIVE`)
/// runs `f` without the pointer checks: the rings using an extension,
/// SQPOLL and SQ_REWIND rings pay one bit test instead.
///
/// # Safety
/// As for [`with_ring`].
#[inline(always)]
unsafe fn with_marked_ring<F: FnOnce(&mut LiveRing) -> c_int>(ring: *mut io_uring, f: F) -> c_int {
    // SAFETY: forwarded contract (a ring marked live is one this library
    // set up and has not exited).
    if let Some(r) = unsafe { ring.as_mut().and_then(|r| LiveRing::marked_from_mut(r)) } {
        return guard(PANICKED, || f(r));
    }
    // SAFETY: forwarded contract.
    unsafe { with_ring(ring, f) }
}

/// Submits the queued SQEs; returns how many were submitted.
///
/// # Safety
/// `ring` must be NULL or a live ring.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit(ring: *mut io_uring) -> c_int {
    ffi_hot!(auto_ring ring => Some(ring.submit_auto(0)); else submit_not_auto(ring, 0))
}

/// The submit path of io_uring_submit and io_uring_submit_and_wait for
/// every ring but the commonest (a plain ring with the library's automatic
/// ring fd), out of line so that the commonest pays one compare: a plain
/// ring without it (its fd registered by the application, or not at all)
/// inline, the others through [`submit_checked`].
///
/// # Safety
/// As for [`with_ring`].
#[inline(never)]
unsafe fn submit_not_auto(ring: *mut io_uring, wait_nr: c_uint) -> c_int {
    ffi_hot!(plain_ring ring => Some(ring.submit_plain(wait_nr)); else submit_checked(ring, wait_nr))
}

/// [`submit_not_auto`] for every ring but a plain one, out of line, with
/// [`with_ring`]'s checks; the core picks the path
/// ([`LiveRing::submit_and_wait_with`]), the extensions' one through
/// [`submit_ext`].
///
/// # Safety
/// As for [`with_ring`].
#[inline(never)]
unsafe fn submit_checked(ring: *mut io_uring, wait_nr: c_uint) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_marked_ring(ring, |r| {
            r.submit_and_wait_with(wait_nr, |r| submit_ext(r, wait_nr))
        })
    }
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
    ffi_hot!(auto_ring ring => Some(ring.submit_auto(wait_nr)); else submit_not_auto(ring, wait_nr))
}

ffi_exports! {
    /// Submits and waits for `wait_nr` completions or until `ts` passes;
    /// returns the submitted count, `-ETIME`, or `-errno`.
    ///
    /// # Safety
    /// `ring` must be NULL or a live ring; `cqe_ptr` writable; `ts`/`sigmask` NULL or valid.
    unsafe fn io_uring_submit_and_wait_timeout(ring: *mut io_uring, cqe_ptr: *mut *mut io_uring_cqe, wait_nr: c_uint, ts: *mut __kernel_timespec, sigmask: *mut libc::sigset_t) -> c_int { out cqe_ptr; live ring => ring.submit_and_wait_timeout(cqe_ptr, WaitArgs { wait_nr, ts, min_wait_usec: 0, sigmask }) }

    /// Submits and, whether or not anything was queued, flushes completions.
    ///
    /// # Safety
    /// `ring` must be NULL or a live ring.
    unsafe fn io_uring_submit_and_get_events(ring: *mut io_uring) -> c_int { live ring => ring.submit_and_get_events() }

    /// Enters the kernel to flush overflowed completions and run task work.
    ///
    /// # Safety
    /// `ring` must be NULL or a live ring.
    unsafe fn io_uring_get_events(ring: *mut io_uring) -> c_int { live ring => ring.get_events() }

    /// Waits for `wait_nr` completions, or until `ts` passes (`-ETIME`).
    ///
    /// # Safety
    /// `ring` must be NULL or a live ring; `cqe_ptr` writable; `ts`/`sigmask` NULL or valid.
    unsafe fn io_uring_wait_cqes(ring: *mut io_uring, cqe_ptr: *mut *mut io_uring_cqe, wait_nr: c_uint, ts: *mut __kernel_timespec, sigmask: *mut libc::sigset_t) -> c_int { out cqe_ptr; live ring => ring.wait_cqes(cqe_ptr, wait_nr, ts, sigmask) }

    /// Waits for one completion or until `ts` passes (`-ETIME`).
    ///
    /// # Safety
    /// `ring` must be NULL or a live ring; `cqe_ptr` writable; `ts` NULL or valid.
    unsafe fn io_uring_wait_cqe_timeout(ring: *mut io_uring, cqe_ptr: *mut *mut io_uring_cqe, ts: *mut __kernel_timespec) -> c_int { out cqe_ptr; live ring => ring.wait_cqe_timeout(cqe_ptr, ts) }
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
    // SAFETY: `cqes` has room for `count` pointers (forwarded contract).
    let out = unsafe { cqe_array(cqes, count) };
    ffi_hot!(hot_reap_ring ring => ring.peek_batch_ready(out); else peek_batch_checked(ring, out))
}

/// [`io_uring_peek_batch_cqe`] for every ring but a plain one, and for a
/// plain one whose CQ looked empty with completions waiting in the kernel
/// (the full call flushes them), out of line: a NULL or dead ring reaps
/// nothing.
///
/// # Safety
/// As for [`live_ring`].
#[inline(never)]
unsafe fn peek_batch_checked(ring: *mut io_uring, out: &mut [CqeOut]) -> c_uint {
    // SAFETY: forwarded contract (a ring marked live is one this library
    // set up and has not exited).
    let marked = unsafe { ring.as_mut().and_then(|r| LiveRing::marked_from_mut(r)) };
    // SAFETY: forwarded contract.
    match marked.or_else(|| unsafe { live_ring(ring) }) {
        Some(r) => guard(0, || r.peek_batch_cqe(out)),
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
    // SAFETY: forwarded contract (a writable, possibly uninitialised pointer).
    let Some(out) = (unsafe { cqe_ptr.cast::<CqeOut>().as_mut() }) else {
        return -libc::EFAULT;
    };
    // Enough CQEs ready and nothing to submit (io_uring_wait_cqe_nr's
    // commonest call): the head CQE at once, in code that cannot unwind.
    let ready = |cqe| {
        out.write(cqe);
        0
    };
    ffi_hot!(if submit == 0, hot_reap_ring ring => ring.ready_head_cqe(wait_nr).map(ready);
        else get_cqe_full(ring, out, submit, wait_nr, sigmask))
}

/// [`__io_uring_get_cqe`] past its inline case: liburing's whole loop, out
/// of line (the inline case saves no registers and has no catching frame).
///
/// # Safety
/// As for [`__io_uring_get_cqe`].
#[inline(never)]
unsafe fn get_cqe_full(
    ring: *mut io_uring,
    out: &mut CqeOut,
    submit: c_uint,
    wait_nr: c_uint,
    sigmask: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_hot_ring(ring, move |r| r.get_cqe(out, submit, wait_nr, sigmask)) }
}

ffi_exports! {
    /// Sleeps until the SQ thread has made room in the SQ ring.
    ///
    /// # Safety
    /// `ring` must be NULL or a live ring.
    unsafe fn __io_uring_sqring_wait(ring: *mut io_uring) -> c_int { live ring => ring.sqring_wait() }

    /// Like io_uring_submit_and_wait_timeout, but once the first completion is
    /// in, waits at most `min_wait` microseconds more for `wait_nr` of them
    /// (`-EINVAL` on kernels without IORING_FEAT_MIN_TIMEOUT).
    ///
    /// # Safety
    /// `ring` NULL or live; `cqe_ptr` writable; `ts`/`sigmask` NULL or valid.
    unsafe fn io_uring_submit_and_wait_min_timeout(ring: *mut io_uring, cqe_ptr: *mut *mut io_uring_cqe, wait_nr: c_uint, ts: *mut __kernel_timespec, min_wait: c_uint, sigmask: *mut libc::sigset_t) -> c_int { out cqe_ptr; live ring => ring.wait_min_timeout(true, cqe_ptr, WaitArgs { wait_nr, ts, min_wait_usec: min_wait, sigmask }) }

    /// Like io_uring_wait_cqes, with a minimum-wait timeout of `min_ts_usec`
    /// (`-EINVAL` on kernels without IORING_FEAT_MIN_TIMEOUT).
    ///
    /// # Safety
    /// `ring` NULL or live; `cqe_ptr` writable; `ts`/`sigmask` NULL or valid.
    unsafe fn io_uring_wait_cqes_min_timeout(ring: *mut io_uring, cqe_ptr: *mut *mut io_uring_cqe, wait_nr: c_uint, ts: *mut __kernel_timespec, min_ts_usec: c_uint, sigmask: *mut libc::sigset_t) -> c_int { out cqe_ptr; live ring => ring.wait_min_timeout(false, cqe_ptr, WaitArgs { wait_nr, ts, min_wait_usec: min_ts_usec, sigmask }) }

    /// Submits and waits using the wait parameters in slot `reg_index` of the
    /// ring's registered wait region.
    ///
    /// # Safety
    /// `ring` NULL or live; `cqe_ptr` writable.
    unsafe fn io_uring_submit_and_wait_reg(ring: *mut io_uring, cqe_ptr: *mut *mut io_uring_cqe, wait_nr: c_uint, reg_index: c_int) -> c_int { out cqe_ptr; live ring => ring.submit_and_wait_reg(cqe_ptr, wait_nr, reg_index) }
}
