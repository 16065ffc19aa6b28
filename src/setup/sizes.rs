//! The sizes a ring's memory takes: SQ/CQ entries from the params, the
//! bytes of each array, and what `io_uring_memory_size` and
//! `io_uring_mlock_size` report.

use super::*;

/// Room the kernel needs for the ring headers (head/tail/flags/...) in front
/// of the CQE array when the application provides the memory.
pub(super) const KRING_HEADER: usize = 64;
pub(super) const HUGE_PAGE: usize = 2 * 1024 * 1024;

pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions and does not fail for PAGESIZE.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 {
        v as usize
    } else {
        4096
    }
}

pub(super) fn round_up(v: usize, to: usize) -> usize {
    (v + to - 1) & !(to - 1)
}

pub(super) fn sqes_bytes(flags: u32, entries: u32) -> usize {
    let shift = (flags & IORING_SETUP_SQE128 != 0) as u32;
    ((entries as usize) << shift) * core::mem::size_of::<io_uring_sqe>()
}

pub(super) fn cqes_bytes(flags: u32, entries: u32) -> usize {
    let shift = (flags & IORING_SETUP_CQE32 != 0) as u32;
    ((entries as usize) << shift) * core::mem::size_of::<io_uring_cqe>()
}

/// The SQ and CQ sizes the kernel will choose for `entries` and `p`.
pub(super) fn sq_cq_entries(entries: u32, p: &io_uring_params) -> Result<(u32, u32), c_int> {
    if entries == 0 {
        return Err(-libc::EINVAL);
    }
    let clamp = p.flags & IORING_SETUP_CLAMP != 0;
    let mut sq = entries;
    if sq > KERN_MAX_ENTRIES {
        if !clamp {
            return Err(-libc::EINVAL);
        }
        sq = KERN_MAX_ENTRIES;
    }
    let sq = sq.next_power_of_two();
    let cq = if p.flags & IORING_SETUP_CQSIZE != 0 {
        let mut cq = p.cq_entries;
        if cq == 0 {
            return Err(-libc::EINVAL);
        }
        if cq > KERN_MAX_CQ_ENTRIES {
            if !clamp {
                return Err(-libc::EINVAL);
            }
            cq = KERN_MAX_CQ_ENTRIES;
        }
        let cq = cq.next_power_of_two();
        if cq < sq {
            return Err(-libc::EINVAL);
        }
        cq
    } else {
        2 * sq
    };
    Ok((sq, cq))
}

/// `io_uring_memory_size`: [`memory_size_params`] with only setup `flags`.
pub fn memory_size(entries: u32, flags: u32) -> isize {
    let p = io_uring_params {
        flags,
        ..Default::default()
    };
    memory_size_params(entries, &p)
}

/// `io_uring_mlock_size`: [`mlock_size_params`] with only setup `flags`.
pub fn mlock_size(entries: u32, flags: u32) -> isize {
    let p = io_uring_params {
        flags,
        ..Default::default()
    };
    mlock_size_params(entries, &p)
}

/// Bytes of ring memory a ring with these parameters occupies.
pub fn memory_size_params(entries: u32, p: &io_uring_params) -> isize {
    let (sq, cq) = match sq_cq_entries(entries, p) {
        Ok(v) => v,
        Err(e) => return e as isize,
    };
    let page = page_size();
    let mut cq_size = cqes_bytes(p.flags, cq) + KRING_HEADER;
    if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        cq_size += sq as usize * 4;
    }
    (round_up(cq_size, page) + round_up(sqes_bytes(p.flags, sq), page)) as isize
}

/// `io_uring_mlock_size_params`: locked memory a ring needs; 0 on kernels
/// that charge rings to the memory cgroup instead (5.12+, which announce
/// IORING_FEAT_NATIVE_WORKERS). The kernel's features come from a
/// throw-away ring that is never mapped and never sees the library's
/// policy. When that ring cannot be set up (most often because the
/// caller's locked memory is used up, which is what the caller wants to
/// know about), the features count as none and the size is computed all
/// the same, as liburing does: only invalid `entries` or `p` are an error.
pub fn mlock_size_params(entries: u32, p: &io_uring_params) -> isize {
    let mut probe_params = io_uring_params::default();
    // SAFETY: `probe_params` is a valid, writable params struct.
    let fd = unsafe { sys::io_uring_setup(entries, &mut probe_params) };
    if fd >= 0 {
        sys::close(fd);
        if probe_params.features & IORING_FEAT_NATIVE_WORKERS != 0 {
            return 0;
        }
    }
    match sq_cq_entries(entries, p) {
        Ok((sq, cq)) => locked_charge(p.flags, sq, cq) as isize,
        Err(e) => e as isize,
    }
}

/// What a kernel that charges rings to RLIMIT_MEMLOCK (5.11 and older)
/// charges for a ring: it allocates the ring headers + CQEs + SQ index
/// array as one block and the SQEs as another, each a power-of-two number
/// of pages (a page-order allocation). This is also liburing 2.3's figure
/// (liburing 2.15 returns the smaller `io_uring_memory_size`, which such a
/// kernel would refuse when the limit is that tight).
pub(super) fn locked_charge(flags: u32, sq: u32, cq: u32) -> usize {
    /// The kernel's `struct io_rings` in front of the CQEs.
    const KERNEL_RINGS_HEADER: usize = 320;
    let page = page_size();
    let order_pages = |bytes: usize| bytes.div_ceil(page).next_power_of_two();
    let rings = round_up(KERNEL_RINGS_HEADER + cqes_bytes(flags, cq), 64) + sq as usize * 4;
    (order_pages(rings) + order_pages(sqes_bytes(flags, sq))) * page
}
