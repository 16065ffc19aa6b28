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

/// The body of an exported function: the caller's pointers checked in the
/// order written, then `body` behind the panic boundary. The signature
/// stays written out in full above it, for cbindgen and for the reader.
///
/// ```text
/// ffi_boundary!(CHECK; ... RING => body)
/// ```
///
/// Each CHECK refuses NULL with [`CReturn::from_errno`]`(EFAULT)` (`-EFAULT`,
/// or NULL where the function returns a pointer):
/// - `nonnull p;` — `p` stays a raw pointer;
/// - `ref p;` / `mut p;` — `p` is rebound as a shared / mutable reference.
///
/// RING is what `ring` (any name) must be; it is rebound for `body`:
/// - `live ring` — set up and not exited (`-EBADF`), a `&mut LiveRing`
///   ([`with_ring`]);
/// - `fields ring` — set up and not exited (`-EBADF`), a `&mut io_uring`
///   whose pointers `body` does not follow ([`with_ring_fields`]);
/// - `memory ring` — any memory for a `struct io_uring` (a ring being set
///   up, or exited), a `&mut io_uring` ([`with_ring_memory`]);
/// - nothing (`=> body`) — no ring; `unsafe => body` where `body` hands the
///   caller's raw pointers on.
///
/// A ring form's `body` runs in the unsafe context of the exported
/// function's contract, which it forwards (its `# Safety` section).
macro_rules! ffi_boundary {
    (nonnull $p:ident; $($rest:tt)+) => {{
        if $p.is_null() {
            return $crate::ffi::CReturn::from_errno(libc::EFAULT);
        }
        ffi_boundary!($($rest)+)
    }};
    (ref $p:ident; $($rest:tt)+) => {{
        // SAFETY: a non-null pointer the caller passed is valid for reads
        // (the exported function's contract).
        let Some($p) = (unsafe { $p.as_ref() }) else {
            return $crate::ffi::CReturn::from_errno(libc::EFAULT);
        };
        ffi_boundary!($($rest)+)
    }};
    (mut $p:ident; $($rest:tt)+) => {{
        // SAFETY: a non-null pointer the caller passed is valid for writes
        // and used by nothing else meanwhile (the exported function's
        // contract).
        let Some($p) = (unsafe { $p.as_mut() }) else {
            return $crate::ffi::CReturn::from_errno(libc::EFAULT);
        };
        ffi_boundary!($($rest)+)
    }};
    (live $ring:ident => $body:expr) => {
        // SAFETY: forwarded contract (the exported function's).
        unsafe { $crate::ffi::with_ring($ring, |$ring| $body) }
    };
    (fields $ring:ident => $body:expr) => {
        // SAFETY: forwarded contract (the exported function's).
        unsafe { $crate::ffi::with_ring_fields($ring, |$ring| $body) }
    };
    (memory $ring:ident => $body:expr) => {
        // SAFETY: forwarded contract (the exported function's).
        unsafe { $crate::ffi::with_ring_memory($ring, |$ring| $body) }
    };
    (unsafe => $body:expr) => {
        // SAFETY: forwarded contract (the exported function's).
        $crate::ffi::guard($crate::ffi::CReturn::panicked(), || unsafe { $body })
    };
    (=> $body:expr) => {
        $crate::ffi::guard($crate::ffi::CReturn::panicked(), || $body)
    };
}

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

/// What an exported function returns when [`ffi_boundary!`] refuses a
/// pointer or catches a panic, by its return type.
trait CReturn {
    /// For a caught panic: [`PANICKED`], NULL, or nothing.
    fn panicked() -> Self;
    /// For an argument refused with `errno`: `-errno`, NULL, or nothing.
    fn from_errno(errno: c_int) -> Self;
}

impl CReturn for c_int {
    #[inline(always)]
    fn panicked() -> Self {
        PANICKED
    }
    #[inline(always)]
    fn from_errno(errno: c_int) -> Self {
        -errno
    }
}

/// `ssize_t`.
impl CReturn for isize {
    #[inline(always)]
    fn panicked() -> Self {
        PANICKED as isize
    }
    #[inline(always)]
    fn from_errno(errno: c_int) -> Self {
        -errno as isize
    }
}

impl<T> CReturn for *mut T {
    #[inline(always)]
    fn panicked() -> Self {
        core::ptr::null_mut()
    }
    #[inline(always)]
    fn from_errno(_: c_int) -> Self {
        core::ptr::null_mut()
    }
}

/// A void function returns normally.
impl CReturn for () {
    #[inline(always)]
    fn panicked() -> Self {}
    #[inline(always)]
    fn from_errno(_: c_int) -> Self {}
}

/// A pointer or the `-errno` a function reports through an out-argument.
impl<T> CReturn for Result<T, c_int> {
    #[inline(always)]
    fn panicked() -> Self {
        Err(PANICKED)
    }
    #[inline(always)]
    fn from_errno(errno: c_int) -> Self {
        Err(-errno)
    }
}

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
unsafe fn with_ring_fields<R: CReturn>(
    ring: *mut io_uring,
    f: impl FnOnce(&mut io_uring) -> R,
) -> R {
    // SAFETY: forwarded contract.
    match unsafe { ring_mut(ring) } {
        Some(r) if r.is_live() => guard(R::panicked(), || f(r)),
        Some(_) => R::from_errno(libc::EBADF),
        None => R::from_errno(libc::EFAULT),
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

/// Runs `f` on the memory of a ring being set up (or of any ring, for
/// calls that check it themselves): `-EFAULT` for NULL.
///
/// # Safety
/// As for [`ring_mut`].
#[inline(always)]
unsafe fn with_ring_memory<R: CReturn>(
    ring: *mut io_uring,
    f: impl FnOnce(&mut io_uring) -> R,
) -> R {
    // SAFETY: forwarded contract.
    match unsafe { ring_mut(ring) } {
        Some(r) => guard(R::panicked(), || f(r)),
        None => R::from_errno(libc::EFAULT),
    }
}
