//! rsuring's extensions to the liburing API (declared in rsuring.h).

use core::ffi::{c_int, c_uint};

use super::with_ring;
use crate::ring::io_uring;
use crate::sqpoll;

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
    // SAFETY: forwarded contract.
    let Some(info) = (unsafe { info.as_mut() }) else {
        return -libc::EFAULT;
    };
    // SAFETY: forwarded contract.
    unsafe {
        with_ring(ring, |r| match sqpoll::group_of(r) {
            Some(g) => {
                info.cpu = g.cpu.map_or(-1, |c| c as c_int);
                info.members = g.members as c_uint;
                0
            }
            None => -libc::ENOENT,
        })
    }
}
