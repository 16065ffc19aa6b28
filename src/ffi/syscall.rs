//! Raw system calls and version queries (LIBURING_2.3 / 2.4 nodes).

use core::ffi::{c_int, c_uint, c_void};

use crate::sys::{self, EnterArgs};
use crate::uapi::io_uring_params;
use crate::{transparent, version};

ffi_exports! {
    /// io_uring_setup(2); `-errno` on failure.
    ///
    /// # Safety
    /// `p` must point to a writable `struct io_uring_params`.
    unsafe fn io_uring_setup(entries: c_uint, p: *mut io_uring_params) -> c_int { nonnull p; unsafe => sys::io_uring_setup(entries, p) }
}

/// io_uring_enter(2) with an optional signal mask; `-errno` on failure. On
/// a ring that got transparent SQPOLL it behaves as on a plain ring.
///
/// # Safety
/// `sig` must be NULL or a valid sigset_t.
#[no_mangle]
pub unsafe extern "C" fn io_uring_enter(
    fd: c_uint,
    to_submit: c_uint,
    min_complete: c_uint,
    flags: c_uint,
    sig: *mut libc::sigset_t,
) -> c_int {
    let args = EnterArgs {
        arg: sig.cast(),
        ..EnterArgs::new(to_submit, min_complete, flags)
    };
    // SAFETY: the kernel validates the fd and copies the mask.
    unsafe { transparent::enter_by_fd(fd, args) }
}

/// io_uring_enter(2) with an extended argument of `sz` bytes.
///
/// # Safety
/// `arg` must be NULL or valid for the argument kind `flags` names.
#[no_mangle]
pub unsafe extern "C" fn io_uring_enter2(
    fd: c_uint,
    to_submit: c_uint,
    min_complete: c_uint,
    flags: c_uint,
    arg: *mut c_void,
    sz: usize,
) -> c_int {
    let args = EnterArgs {
        to_submit,
        min_complete,
        flags,
        arg,
        sz,
    };
    // SAFETY: forwarded contract; the kernel validates the rest.
    unsafe { transparent::enter_by_fd(fd, args) }
}

/// io_uring_register(2); `-errno` on failure.
///
/// # Safety
/// `arg` must be valid for `opcode` and `nr_args`.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register(
    fd: c_uint,
    opcode: c_uint,
    arg: *const c_void,
    nr_args: c_uint,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_register(fd, opcode, arg, nr_args) }
}

/// The liburing major version this library provides.
#[no_mangle]
pub extern "C" fn io_uring_major_version() -> c_int {
    version::MAJOR
}

/// The liburing minor version this library provides.
#[no_mangle]
pub extern "C" fn io_uring_minor_version() -> c_int {
    version::MINOR
}

/// True when this library is OLDER than `major.minor` (liburing's meaning:
/// "the check fails").
#[no_mangle]
pub extern "C" fn io_uring_check_version(major: c_int, minor: c_int) -> bool {
    version::older_than(major, minor)
}
