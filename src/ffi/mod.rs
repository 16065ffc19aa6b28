//! The exported C ABI. Each function checks its pointers, crosses the panic
//! boundary and calls the core; nothing else happens here: which kernel
//! opcode, which argument struct, which flag is the core's choice (one
//! function per operation). The checks here turn the caller's pointers into
//! references, slices and [`LiveRing`]s, the types the core takes.
//!
//! cbindgen reads these files to generate include/liburing/rsuring_api.h.

use core::ffi::{c_int, c_uint};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::queue::CqeOut;
use crate::ring::{io_uring, LiveRing};
use crate::uapi::io_uring_cqe;

mod queue;
mod register;
mod rsuring;
mod setup;
mod syscall;

/// Runs `f`, turning a Rust panic into `fallback` so it never unwinds into C.
#[inline(always)]
fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// The value returned for a panic that was caught at the boundary (a bug in
/// rsuring, never the caller's doing): `-ENOTRECOVERABLE`, which no
/// io_uring call returns, so it cannot be mistaken for a bad pointer
/// (`-EFAULT`) or a kernel error. Functions returning a pointer give NULL,
/// void functions return normally.
const PANICKED: c_int = -libc::ENOTRECOVERABLE;

/// Borrows the caller's ring, or None for NULL.
///
/// # Safety
/// A non-null `ring` must point to a `struct io_uring` nobody else is using.
#[inline(always)]
unsafe fn ring_mut<'a>(ring: *mut io_uring) -> Option<&'a mut io_uring> {
    // SAFETY: forwarded contract.
    unsafe { ring.as_mut() }
}

/// Borrows the caller's ring if it is set up (not zeroed, not exited), as
/// a [`LiveRing`]: the one place, with the lifecycle right after mapping,
/// where that type is made.
///
/// # Safety
/// As for [`ring_mut`]; a set-up ring must be one this library set up and
/// has not torn down (every entry point's contract).
#[inline(always)]
unsafe fn live_ring<'a>(ring: *mut io_uring) -> Option<&'a mut LiveRing> {
    // SAFETY: forwarded contract (both).
    unsafe { ring_mut(ring).and_then(|r| LiveRing::from_mut(r)) }
}

/// Runs `f` on the caller's set-up ring: `-EFAULT` for NULL, `-EBADF` for a
/// ring that was never set up or has exited; panic-safe.
///
/// # Safety
/// As for [`live_ring`].
#[inline(always)]
unsafe fn with_ring(ring: *mut io_uring, f: impl FnOnce(&mut LiveRing) -> c_int) -> c_int {
    // SAFETY: forwarded contract.
    match unsafe { ring_mut(ring) } {
        // SAFETY: forwarded contract.
        Some(r) => match unsafe { LiveRing::from_mut(r) } {
            Some(live) => guard(PANICKED, || f(live)),
            None => -libc::EBADF,
        },
        None => -libc::EFAULT,
    }
}

/// [`with_ring`] for calls that change only the ring's scalar fields (fds,
/// flags) and dereference none of its pointers: `f` gets the plain struct.
///
/// # Safety
/// As for [`ring_mut`].
#[inline(always)]
unsafe fn with_ring_fields(ring: *mut io_uring, f: impl FnOnce(&mut io_uring) -> c_int) -> c_int {
    // SAFETY: forwarded contract.
    match unsafe { ring_mut(ring) } {
        Some(r) if r.is_live() => guard(PANICKED, || f(r)),
        Some(_) => -libc::EBADF,
        None => -libc::EFAULT,
    }
}

/// Runs `f` on the caller's set-up ring and CQE output pointer: `-EFAULT`
/// for either NULL, otherwise as [`with_ring`].
///
/// # Safety
/// As for [`live_ring`]; a non-null `cqe_ptr` must be writable.
#[inline(always)]
unsafe fn with_ring_cqe(
    ring: *mut io_uring,
    cqe_ptr: *mut *mut io_uring_cqe,
    f: impl FnOnce(&mut LiveRing, &mut CqeOut) -> c_int,
) -> c_int {
    // SAFETY: forwarded contract (a writable, possibly uninitialised pointer).
    let Some(out) = (unsafe { cqe_ptr.cast::<CqeOut>().as_mut() }) else {
        return -libc::EFAULT;
    };
    // SAFETY: forwarded contract.
    unsafe { with_ring(ring, |r| f(r, out)) }
}

/// The caller's array of `len` CQE pointers as a slice (possibly
/// uninitialised); `ptr` is non-null.
///
/// # Safety
/// `ptr` must have room for `len` pointers, used by nothing else meanwhile.
#[inline(always)]
unsafe fn cqe_array<'a>(ptr: *mut *mut io_uring_cqe, len: c_uint) -> &'a mut [CqeOut] {
    // SAFETY: forwarded contract; CqeOut has the layout of a pointer.
    unsafe { core::slice::from_raw_parts_mut(ptr.cast::<CqeOut>(), len as usize) }
}

/// Runs `f` on the memory of a ring being set up: `-EFAULT` for NULL.
///
/// # Safety
/// As for [`ring_mut`].
#[inline(always)]
unsafe fn with_ring_memory(ring: *mut io_uring, f: impl FnOnce(&mut io_uring) -> c_int) -> c_int {
    // SAFETY: forwarded contract.
    match unsafe { ring_mut(ring) } {
        Some(r) => guard(PANICKED, || f(r)),
        None => -libc::EFAULT,
    }
}
