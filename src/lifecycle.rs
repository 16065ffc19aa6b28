//! A ring's life as the application sees it: init (policy, then the
//! mapping, then the invisible registrations, then statistics), resize,
//! fd closing, and exit (the same steps undone in reverse).
//!
//! Everything below this module does one thing each: `setup` maps,
//! `sqpoll` places rings on pollers, `transparent` keeps RSURING_SQPOLL=1
//! invisible, `ring_fd` registers ring fds, `stats` counts. Only this
//! module (and `ffi` above it) combines them.

use core::ffi::{c_int, c_void};
use core::ptr;

use crate::ring::{io_uring, rs_flags};
use crate::sys::{
    self, io_uring_params, IORING_FEAT_REG_REG_RING, IORING_SETUP_COOP_TASKRUN,
    IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_NO_MMAP, IORING_SETUP_SINGLE_ISSUER,
    IORING_SETUP_SQPOLL, IORING_SETUP_TASKRUN_FLAG,
};
use crate::{register, ring_fd, setup, sqpoll, stats, transparent};

/// Creates a ring with the library's policy and extensions. Returns what
/// [`setup::map_new_ring`] returns.
///
/// # Safety
/// `buf`, when non-null, must be `buf_size` writable bytes that outlive the ring.
unsafe fn init(
    entries: u32,
    ring: &mut io_uring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> c_int {
    // SAFETY: forwarded contract.
    let ret = unsafe { sqpoll::init(entries, ring, p, buf, buf_size) };
    if ret < 0 {
        return ret;
    }
    if ring.flags & IORING_SETUP_SINGLE_ISSUER != 0 {
        ring_fd::auto_register_ring_fd(ring);
    }
    if stats::enabled_by_env() {
        ring.enable_stats();
    }
    ret
}

/// `io_uring_queue_init_params`.
pub fn queue_init_params(entries: u32, ring: &mut io_uring, p: &mut io_uring_params) -> c_int {
    // SAFETY: no application buffer is passed.
    let ret = unsafe { init(entries, ring, p, ptr::null_mut(), 0) };
    ret.min(0)
}

/// `io_uring_queue_init_mem`: the rings live in `buf` (the application's
/// memory, e.g. a huge page). Returns the bytes used, or `-errno`.
///
/// # Safety
/// `buf` must be `buf_size` writable bytes that outlive the ring.
pub unsafe fn queue_init_mem(
    entries: u32,
    ring: &mut io_uring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> c_int {
    p.flags |= IORING_SETUP_NO_MMAP;
    // SAFETY: forwarded contract.
    unsafe { init(entries, ring, p, buf, buf_size) }
}

/// `rsuring_queue_init_batched`: the best kernel-side completion batching
/// the kernel offers, without SQPOLL.
pub fn queue_init_batched(entries: u32, ring: &mut io_uring, flags: u32) -> c_int {
    let tries: &[u32] = if flags & IORING_SETUP_SQPOLL != 0 {
        &[0]
    } else {
        &[
            // TASKRUN_FLAG: the kernel flags pending completion work in the
            // SQ ring, so a non-blocking peek knows to enter for it.
            IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
            IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
            0,
        ]
    };
    let mut ret = -libc::EINVAL;
    for extra in tries {
        let mut p = io_uring_params {
            flags: flags | extra,
            ..Default::default()
        };
        ret = queue_init_params(entries, ring, &mut p);
        if ret != -libc::EINVAL {
            break;
        }
    }
    ret
}

/// `io_uring_queue_mmap`: maps the rings of an fd the caller set up itself.
///
/// # Safety
/// `p` must be what io_uring_setup returned for `fd`.
pub unsafe fn queue_mmap(fd: c_int, p: &io_uring_params, ring: &mut io_uring) -> c_int {
    // SAFETY: forwarded contract.
    let ret = unsafe { setup::map_existing_ring(fd, p, ring) };
    if ret == 0 && stats::enabled_by_env() {
        ring.enable_stats();
    }
    ret
}

/// Takes `ring` out of every process-wide table that knows it by fd (its
/// poller group, the transparent-SQPOLL fd table).
fn forget_fd(ring: &mut io_uring) {
    if ring.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0 {
        transparent::untrack(ring);
    }
    sqpoll::leave(ring);
}

/// `io_uring_queue_exit`. Safe to call twice: the second call finds a
/// zeroed ring and does nothing.
pub fn queue_exit(ring: &mut io_uring) {
    if ring.sq.ring_ptr.is_null() && ring.sq.sqes.is_null() {
        return;
    }
    ring.release_ext();
    forget_fd(ring);
    // SAFETY: the application hands the ring back; nothing uses it after.
    unsafe { setup::release_memory(ring) };
    ring_fd::release_at_exit(ring);
    if ring.ring_fd >= 0 {
        sys::close(ring.ring_fd);
    }
    *ring = io_uring::zeroed();
    ring.ring_fd = -1;
    ring.enter_ring_fd = -1;
}

/// `io_uring_close_ring_fd`: keep only the registered index.
pub fn close_ring_fd(ring: &mut io_uring) -> c_int {
    if ring.features & IORING_FEAT_REG_REG_RING == 0 {
        return -libc::EOPNOTSUPP;
    }
    if ring.int_flags & crate::ring::int_flags::REG_RING == 0
        || ring.rs_flags & rs_flags::AUTO_REG != 0
    {
        return -libc::EINVAL;
    }
    if ring.ring_fd == -1 {
        return -libc::EBADF;
    }
    // Without its fd the ring can no longer anchor its poller group, nor be
    // found by the exported io_uring_enter.
    forget_fd(ring);
    ring.stats_fd_closed();
    sys::close(ring.ring_fd);
    ring.ring_fd = -1;
    1
}

/// `io_uring_resize_rings`: asks the kernel for new SQ/CQ sizes, maps the
/// new rings and carries the library's state over. `p->flags` is cleared
/// afterwards, as liburing does.
pub fn resize_rings(ring: &mut io_uring, p: &mut io_uring_params) -> c_int {
    if ring.flags & IORING_SETUP_NO_MMAP != 0 {
        return -libc::EINVAL;
    }
    p.sq_off = Default::default();
    p.cq_off = Default::default();
    // SAFETY: `p` is a valid params struct for the kernel to fill.
    let mut ret = unsafe {
        register::do_register(
            ring,
            sys::IORING_REGISTER_RESIZE_RINGS,
            ptr::from_mut(p).cast(),
            1,
        )
    };
    if ret >= 0 {
        let transparent = ring.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0;
        if transparent {
            transparent::untrack(ring);
        }
        ret = setup::remap_resized(ring, p);
        if transparent {
            transparent::track(ring);
        }
    }
    p.flags = 0;
    ret
}
