//! The exported C ABI. Each function checks its pointers, crosses the panic
//! boundary and calls the core; nothing else happens here: which kernel
//! opcode, which argument struct, which flag is the core's choice (one
//! function per operation). The checks here turn the caller's pointers into
//! references, slices and [`LiveRing`]s, the types the core takes.
//!
//! cbindgen reads these files to generate include/liburing/rsuring_api.h
//! (`tests/header.rs`, which first unfolds the [`ffi_exports!`] tables).

use core::ffi::{c_int, c_uint};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::queue::CqeOut;
use crate::ring::{io_uring, rs_flags, LiveRing};
use crate::uapi::io_uring_cqe;

/// The body of an exported function: the caller's pointers checked in the
/// order written, then `body` behind the panic boundary. Most exports use
/// it through an [`ffi_exports!`] table, whose entries give it their bodies.
///
/// ```text
/// ffi_boundary!(CHECK; ... RING => body)
/// ```
///
/// Each CHECK refuses NULL with [`CReturn::from_errno`]`(EFAULT)` (`-EFAULT`,
/// or NULL where the function returns a pointer):
/// - `nonnull p;` — `p` stays a raw pointer;
/// - `ref p;` / `mut p;` — `p` is rebound as a shared / mutable reference;
/// - `out p;` — a `struct io_uring_cqe **` the function stores a CQE
///   pointer through, rebound as a `&mut` [`CqeOut`] (its old value unread).
///
/// RING is what `ring` (any name) must be; it is rebound for `body`:
/// - `live ring` — set up and not exited (`-EBADF`), a `&mut LiveRing`
///   ([`with_ring`]);
/// - `fields ring` — set up and not exited (`-EBADF`), a `&mut io_uring`
///   whose pointers `body` does not follow ([`with_ring_struct`]);
/// - `memory ring` — any memory for a `struct io_uring` (a ring being set
///   up, or exited), a `&mut io_uring` ([`with_ring_struct`]);
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
    (out $p:ident; $($rest:tt)+) => {{
        // SAFETY: a non-null pointer the caller passed is valid for writes
        // (the exported function's contract); `CqeOut` does not assume it
        // holds a valid pointer yet.
        let Some($p) = (unsafe { $p.cast::<$crate::queue::CqeOut>().as_mut() }) else {
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
        unsafe { $crate::ffi::with_ring_struct::<true, _>($ring, |$ring| $body) }
    };
    (memory $ring:ident => $body:expr) => {
        // SAFETY: forwarded contract (the exported function's).
        unsafe { $crate::ffi::with_ring_struct::<false, _>($ring, |$ring| $body) }
    };
    (unsafe => $body:expr) => {
        // SAFETY: forwarded contract (the exported function's).
        $crate::ffi::guard($crate::ffi::CReturn::panicked(), || unsafe { $body })
    };
    (=> $body:expr) => {
        $crate::ffi::guard($crate::ffi::CReturn::panicked(), || $body)
    };
}

/// A table of exported functions whose whole body is one [`ffi_boundary!`]:
/// each entry is written like the function it makes, with the boundary's
/// arguments as its body, and becomes a `#[no_mangle] pub extern "C"`
/// function (`unsafe` where the entry says so) with the entry's docs.
///
/// ```text
/// ffi_exports! {
///     /// Docs, with a `# Safety` section for an unsafe entry.
///     unsafe fn name(ring: *mut io_uring, n: c_uint) -> c_int { live ring => core::call(ring, n) }
/// }
/// ```
///
/// One line an entry, so the table reads as a table; the functions that do
/// more than the boundary (the hot paths) are written out below their
/// file's table. cbindgen does not expand macros: `tests/header.rs` turns
/// each entry back into the function it makes before it generates the
/// prototypes, so the headers see the same signatures.
macro_rules! ffi_exports {
    () => {};
    (
        $(#[$attr:meta])*
        unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? { $($body:tt)+ }
        $($rest:tt)*
    ) => {
        $(#[$attr])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
            ffi_boundary!($($body)+)
        }
        ffi_exports!($($rest)*);
    };
    (
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? { $($body:tt)+ }
        $($rest:tt)*
    ) => {
        $(#[$attr])*
        #[no_mangle]
        pub extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
            ffi_boundary!($($body)+)
        }
        ffi_exports!($($rest)*);
    };
}

/// The body of a hot exported function (submit, and the reaping calls whose
/// answer is often in the CQ ring already): [`ffi_boundary!`]'s contract
/// (pointer checks, `-errno`, no panic unwinding into C) with the commonest
/// ring served inline. The one other form an export may take.
///
/// ```text
/// ffi_hot!(SELECT ring => fast; else slow)
/// ffi_hot!(if cond, SELECT ring => fast; else slow)
/// ```
///
/// SELECT is [`auto_ring`], [`plain_ring`] or [`hot_reap_ring`], which
/// take the caller's ring, when `cond` holds, as a `&mut LiveRing` after
/// one byte compare of its `rs_flags`; `fast` then
/// runs with `ring` rebound, and is `Some(value)` to return or None to go
/// on. Everything else runs `slow`, in the unsafe context of the exported
/// function's contract: a call of an `#[inline(never)]` function that makes
/// [`with_ring`]'s checks behind the panic boundary ([`with_ring`] itself,
/// or the ring's `LIVE` mark first, then [`with_ring`]).
///
/// `fast` has no catching frame, on purpose: it is inline code over the
/// ring words and at most the system call (no allocation, no indexing, no
/// unwrap: nothing that panics), and a frame would cost the hot path saved
/// registers and a landing pad, and turn its tail call into `slow` into a
/// call. Should a bug make it panic all the same, the exported function is
/// `extern "C"`, which cannot unwind: Rust aborts the process rather than
/// unwind into C.
macro_rules! ffi_hot {
    (if $cond:expr, $select:ident $ring:ident => $fast:expr; else $slow:expr) => {{
        if $cond {
            // SAFETY: forwarded contract (the exported function's).
            if let Some($ring) = unsafe { $crate::ffi::$select($ring) } {
                if let Some(value) = $fast {
                    return value;
                }
            }
        }
        // SAFETY: forwarded contract (the exported function's).
        unsafe { $slow }
    }};
    ($select:ident $ring:ident => $fast:expr; else $slow:expr) => {
        ffi_hot!(if true, $select $ring => $fast; else $slow)
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

/// The caller's ring when it is a ring of this library whose `rs_flags`
/// is `FLAGS` give or take `OPTIONAL` ([`LiveRing::flagged_from_mut`]): one
/// byte compare after the NULL test, none of the pointer checks of
/// [`with_ring`]. The three uses: [`PLAIN`] (no SQ thread, no SQ_REWIND,
/// no extension), [`AUTO`] (that, with the library's automatic ring fd:
/// the commonest ring, see `ring_fd::auto_register_ring_fd`) and either
/// ([`PLAIN`], optional [`rs_flags::AUTO_REG`]) for the entry points whose
/// enters pick the registered slot or the fd themselves (peeks and waits).
///
/// # Safety
/// As for [`with_ring`].
#[inline(always)]
unsafe fn hot_ring<'a, const FLAGS: u8, const OPTIONAL: u8>(
    ring: *mut io_uring,
) -> Option<&'a mut LiveRing> {
    // SAFETY: forwarded contract (a non-null ring nobody else is using, set
    // up by this library if it carries its mark).
    unsafe {
        ring.as_mut()
            .and_then(|r| LiveRing::flagged_from_mut::<FLAGS, OPTIONAL>(r))
    }
}

/// `rs_flags` of a plain ring.
const PLAIN: u8 = rs_flags::LIVE;
/// `rs_flags` of a plain ring with the library's automatic ring fd.
const AUTO: u8 = rs_flags::LIVE | rs_flags::AUTO_REG;
/// What a reaping entry point lets through on top of [`PLAIN`].
const REAP_OPTIONAL: u8 = rs_flags::AUTO_REG;

/// The caller's ring when it is a plain ring with the library's automatic
/// ring fd (see [`hot_ring`]): the commonest ring, submitted inline.
///
/// # Safety
/// As for [`with_ring`].
#[inline(always)]
unsafe fn auto_ring<'a>(ring: *mut io_uring) -> Option<&'a mut LiveRing> {
    // SAFETY: forwarded contract.
    unsafe { hot_ring::<AUTO, 0>(ring) }
}

/// The caller's ring when it is a plain ring (see [`hot_ring`]).
///
/// # Safety
/// As for [`with_ring`].
#[inline(always)]
unsafe fn plain_ring<'a>(ring: *mut io_uring) -> Option<&'a mut LiveRing> {
    // SAFETY: forwarded contract.
    unsafe { hot_ring::<PLAIN, 0>(ring) }
}

/// The caller's ring when a reaping entry point may take it inline: a
/// plain ring, or one with only an automatic ring fd (see [`hot_ring`]).
///
/// # Safety
/// As for [`with_ring`].
#[inline(always)]
unsafe fn hot_reap_ring<'a>(ring: *mut io_uring) -> Option<&'a mut LiveRing> {
    // SAFETY: forwarded contract.
    unsafe { hot_ring::<PLAIN, REAP_OPTIONAL>(ring) }
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

/// Runs `f` on the plain struct of a ring: `-EFAULT` for NULL. `LIVE`:
/// for calls that change only a live ring's scalar fields (fds, flags) and
/// dereference none of its pointers (`-EBADF` for a ring not set up);
/// without it, for the memory of a ring being set up (or of any ring, for
/// calls that check it themselves).
///
/// # Safety
/// As for [`ring_mut`].
#[inline(always)]
unsafe fn with_ring_struct<const LIVE: bool, R: CReturn>(
    ring: *mut io_uring,
    f: impl FnOnce(&mut io_uring) -> R,
) -> R {
    // SAFETY: forwarded contract.
    match unsafe { ring_mut(ring) } {
        Some(r) if LIVE && !r.is_live() => R::from_errno(libc::EBADF),
        Some(r) => guard(R::panicked(), || f(r)),
        None => R::from_errno(libc::EFAULT),
    }
}
