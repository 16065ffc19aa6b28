//! A ring's life as the application sees it: init (policy, then the
//! mapping, then the invisible registrations, then statistics), resize,
//! fd closing, and exit (the same steps undone in reverse).
//!
//! Everything below this module does one thing each: `setup` maps,
//! `sqpoll` places rings on pollers, `transparent` keeps RSURING_SQPOLL=1
//! invisible, `ring_fd` registers ring fds, `stats` counts. Only this
//! module (and `ffi` above it) combines them: the policy that decides
//! whether a ring gets a shared poller (the SQPOLL_PERCPU flag and the
//! `RSURING_SQPOLL*` environment) lives here, and so do the calls that tell
//! the statistics about a ring's poller group.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::ring::{fork_generation, int_flags, io_uring, rs_flags, LiveRing};
use crate::setup::SetupRequest;
use crate::sqpoll::{self, IORING_SETUP_SQPOLL_PERCPU};
use crate::sys;
use crate::transparent;
use crate::uapi::{
    io_uring_params, IORING_FEAT_REG_REG_RING, IORING_SETUP_ATTACH_WQ, IORING_SETUP_COOP_TASKRUN,
    IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_NO_MMAP, IORING_SETUP_SINGLE_ISSUER,
    IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF, IORING_SETUP_SQ_REWIND, IORING_SETUP_TASKRUN_FLAG,
};
use crate::{register, ring_fd, setup, stats};

/// The live view of a ring the mapper has just set up (None if it is not).
fn just_mapped(ring: &mut io_uring) -> Option<&mut LiveRing> {
    // SAFETY: called right after setup::map_* succeeded on this ring, so
    // its pointers are the mapper's and mapped.
    unsafe { LiveRing::from_mut(ring) }
}

/// Creates a ring with the library's policy and extensions. Returns what
/// [`setup::map_new_ring`] returns.
fn init(req: &mut SetupRequest<'_>) -> c_int {
    let ret = map_with_policy(req);
    if ret < 0 {
        return ret;
    }
    mark_live(req.ring);
    ring_fd::auto_register_ring_fd(req.ring);
    if stats::enabled_by_env() {
        if let Some(live) = just_mapped(req.ring) {
            enable_stats(live);
            stats::set_transparent(live, transparent::verdict());
        }
    }
    ret
}

/// Creates a ring, applying the shared-poller policy: the SQPOLL_PERCPU
/// flag, the environment, and CPU placement. Everything else is
/// [`setup::map_new_ring`].
fn map_with_policy(req: &mut SetupRequest<'_>) -> c_int {
    // The policy's decisions (flags it adds or strips, placement, idle
    // time, attachment) belong to this ring only: applications commonly
    // reuse one params struct for several rings, so the fields they filled
    // in are given back as they were. The kernel's outputs stay.
    let input = (
        req.p.flags,
        req.p.sq_thread_cpu,
        req.p.sq_thread_idle,
        req.p.wq_fd,
    );
    let ret = apply_policy(req);
    (
        req.p.flags,
        req.p.sq_thread_cpu,
        req.p.sq_thread_idle,
        req.p.wq_fd,
    ) = input;
    ret
}

/// [`map_with_policy`] without giving the caller's fields back.
fn apply_policy(req: &mut SetupRequest<'_>) -> c_int {
    let cfg = sqpoll::config();
    let asked = req.p.flags & IORING_SETUP_SQPOLL_PERCPU != 0;
    req.p.flags &= !IORING_SETUP_SQPOLL_PERCPU;
    if asked && req.p.flags & IORING_SETUP_SQPOLL == 0 {
        *req.ring = io_uring::zeroed();
        return -libc::EINVAL;
    }
    let requested = *req.p;
    let mut shared = asked || (cfg.percpu_all && req.p.flags & IORING_SETUP_SQPOLL != 0);
    // For a transparent ring: the CPUs its poller may use.
    transparent::clear_verdict();
    let spare = if cfg.transparent {
        transparent::eligible(req.p.flags, cfg.cpus.as_deref(), &req.app_places())
            .and_then(|cpus| transparent::qualify(cpus, sqpoll::serves_cpu))
            .ok()
    } else {
        None
    };
    let transparent = spare.is_some();
    if transparent {
        req.p.flags |= IORING_SETUP_SQPOLL;
        shared = true;
    }
    if req.p.flags & IORING_SETUP_SQPOLL != 0 && req.p.sq_thread_idle == 0 {
        if let Some(ms) = cfg.idle_ms {
            req.p.sq_thread_idle = ms;
        }
    }
    // An application that attaches rings itself keeps full control.
    let ret = if !shared || req.p.flags & IORING_SETUP_ATTACH_WQ != 0 {
        setup::map_new_ring(req)
    } else {
        let placement = spare.as_deref().or(cfg.cpus.as_deref());
        sqpoll::map_shared_ring(placement, req)
    };
    if !transparent {
        return ret;
    }
    if ret < 0 {
        if ret == -libc::ENOSYS {
            // io_uring is disabled (kernel.io_uring_disabled=2): a plain
            // ring would get the same answer.
            return ret;
        }
        // The kernel refuses SQPOLL with some setups (memory, an LSM, a
        // CPU): give the application the ring it asked for. When that
        // fails too, the refusal was not SQPOLL's: no note, no count.
        *req.p = requested;
        let plain = setup::map_new_ring(req);
        if plain >= 0 {
            transparent::refuse(transparent::kernel_refusal(spare.as_deref().unwrap_or(&[])));
        }
        return plain;
    }
    // The application sees the plain ring it asked for (with what setup
    // adds to every ring, NO_SQARRAY); the poller is rsuring's business
    // (see crate::transparent).
    req.ring.flags &= !(IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF);
    req.ring.fork_gen = fork_generation();
    req.ring.rs_flags |= rs_flags::SQPOLL_TRANSPARENT;
    transparent::engaged();
    if let Some(live) = just_mapped(req.ring) {
        transparent::track(live);
    }
    ret
}

/// Marks a ring the mapper has just set up as this library's
/// ([`rs_flags::LIVE`]), and whether its submissions need the full path
/// ([`rs_flags::FULL_SUBMIT`]: an SQ thread, SQ_REWIND, or completions
/// that need an enter, `int_flags::CQ_ENTER`).
fn mark_live(ring: &mut io_uring) {
    ring.rs_flags |= rs_flags::LIVE;
    if ring.flags & (IORING_SETUP_SQPOLL | IORING_SETUP_SQ_REWIND) != 0
        || ring.int_flags & int_flags::CQ_ENTER != 0
    {
        ring.rs_flags |= rs_flags::FULL_SUBMIT;
    }
}

/// `io_uring_queue_init_params`.
pub fn queue_init_params(entries: u32, ring: &mut io_uring, p: &mut io_uring_params) -> c_int {
    let ret = init(&mut SetupRequest::new(entries, ring, p));
    ret.min(0)
}

/// `io_uring_queue_init`: [`queue_init_params`] with only setup `flags`.
pub fn queue_init(entries: u32, ring: &mut io_uring, flags: u32) -> c_int {
    let mut p = io_uring_params {
        flags,
        ..Default::default()
    };
    queue_init_params(entries, ring, &mut p)
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
    init(&mut unsafe { SetupRequest::in_memory(entries, ring, p, buf, buf_size) })
}

/// The setups [`queue_init_batched`] tries, best first.
const BATCHED_TIERS: [u32; 3] = [
    // TASKRUN_FLAG: the kernel flags pending completion work in the SQ
    // ring, so a non-blocking peek knows to enter for it.
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
    IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
    0,
];

/// The first of [`BATCHED_TIERS`] worth trying in this process: the tiers
/// before it failed with -EINVAL where a later one then worked with the same
/// flags, so the kernel lacks what they add (DEFER_TASKRUN before 6.1,
/// COOP_TASKRUN before 5.19). Only ever raised.
static BATCHED_FIRST_TIER: AtomicUsize = AtomicUsize::new(0);

/// `rsuring_queue_init_batched`: the best kernel-side completion batching
/// the kernel offers, without SQPOLL.
pub fn queue_init_batched(entries: u32, ring: &mut io_uring, flags: u32) -> c_int {
    if flags & IORING_SETUP_SQPOLL != 0 {
        return queue_init(entries, ring, flags);
    }
    let first = BATCHED_FIRST_TIER.load(Ordering::Relaxed);
    let mut ret = -libc::EINVAL;
    for (tier, extra) in BATCHED_TIERS.iter().enumerate().skip(first) {
        ret = queue_init(entries, ring, flags | extra);
        if ret == 0 && tier > first {
            BATCHED_FIRST_TIER.fetch_max(tier, Ordering::Relaxed);
        }
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
    if ret == 0 {
        mark_live(ring);
    }
    if ret == 0 && stats::enabled_by_env() {
        if let Some(live) = just_mapped(ring) {
            enable_stats(live);
        }
    }
    ret
}

/// The shared poller group of `ring` as the statistics describe it.
fn shared_poller(ring: &io_uring) -> Option<stats::SharedPoller> {
    sqpoll::group_of(ring).map(|g| stats::SharedPoller {
        cpu: g.cpu,
        rings: g.members as u32,
    })
}

/// `rsuring_stats_enable` (and every ring under `RSURING_STATS`).
pub fn enable_stats(ring: &mut LiveRing) -> c_int {
    let shared = shared_poller(ring);
    stats::enable(ring, shared)
}

/// The ring's statistics line for `rsuring_stats_format`, with its poller
/// group as it is now.
pub fn stats_line(ring: &LiveRing) -> Option<String> {
    stats::line(ring, shared_poller(ring))
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
///
/// # Safety
/// A ring with non-null pointers must be one this library set up (the
/// contract of the exported function).
pub unsafe fn queue_exit(ring: &mut io_uring) {
    if ring.sq.ring_ptr.is_null() && ring.sq.sqes.is_null() {
        return;
    }
    // SAFETY: forwarded contract.
    if let Some(live) = unsafe { LiveRing::from_mut(ring) } {
        let shared = shared_poller(live);
        stats::release(live, shared);
    }
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
pub fn close_ring_fd(ring: &mut LiveRing) -> c_int {
    if ring.features & IORING_FEAT_REG_REG_RING == 0 {
        return -libc::EOPNOTSUPP;
    }
    if ring.int_flags & int_flags::REG_RING == 0 || ring.rs_flags & rs_flags::AUTO_REG != 0 {
        return -libc::EINVAL;
    }
    if ring.ring_fd == -1 {
        return -libc::EBADF;
    }
    // Without its fd the ring can no longer anchor its poller group, nor be
    // found by the exported io_uring_enter.
    // SAFETY: forget_fd changes no pointer of the ring (only rs_flags).
    forget_fd(unsafe { ring.fields_mut() });
    stats::fd_closed(ring);
    sys::close(ring.ring_fd);
    // SAFETY: only the fd changes; the mappings stay.
    unsafe { ring.fields_mut() }.ring_fd = -1;
    1
}

/// `io_uring_resize_rings`: asks the kernel for new SQ/CQ sizes, maps the
/// new rings and carries the library's state over. `p->flags` is cleared
/// afterwards, as liburing does.
pub fn resize_rings(ring: &mut LiveRing, p: &mut io_uring_params) -> c_int {
    if ring.flags & IORING_SETUP_NO_MMAP != 0 {
        return -libc::EINVAL;
    }
    p.sq_off = Default::default();
    p.cq_off = Default::default();
    let mut ret = register::resize_rings(ring, p);
    if ret >= 0 {
        let transparent = ring.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0;
        if transparent {
            transparent::untrack(ring);
        }
        let old_khead = ring.sq.khead;
        // SAFETY: the ring is live and this library's; remap_resized
        // leaves it live again (the new mappings), or unchanged on failure.
        ret = unsafe { setup::remap_resized(ring.fields_mut(), p) };
        if ret == 0 {
            sqpoll::moved(ring, old_khead);
            stats::ring_moved(ring);
        }
        if transparent {
            transparent::track(ring);
        }
    }
    p.flags = 0;
    ret
}
