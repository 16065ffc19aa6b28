//! Mapping a ring's memory and unmapping it: the kernel's mappings, the
//! application's memory (IORING_SETUP_NO_MMAP), an existing ring by fd,
//! and MADV_DONTFORK.

use super::*;

/// Unmaps the SQ and CQ ring mappings this library created.
///
/// # Safety
/// The mappings must be ours and unused from now on.
pub(super) unsafe fn unmap_rings(sq: &io_uring_sq, cq: &io_uring_cq) {
    // SAFETY: forwarded contract; sizes are those we mapped.
    unsafe {
        if sq.ring_sz != 0 {
            sys::munmap(sq.ring_ptr, sq.ring_sz);
        }
        if !cq.ring_ptr.is_null() && cq.ring_sz != 0 && cq.ring_ptr != sq.ring_ptr {
            sys::munmap(cq.ring_ptr, cq.ring_sz);
        }
    }
}

/// Whether every ring field the params point at lies inside the mappings
/// (the kernel's own params always do; io_uring_queue_mmap takes them from
/// the application).
pub(super) fn offsets_fit(p: &io_uring_params, sq_size: usize, cq_size: usize) -> bool {
    let o = &p.sq_off;
    let c = &p.cq_off;
    let fits = |off: u32, size: usize| off as usize + 4 <= size;
    let sq_ok = [
        o.head,
        o.tail,
        o.ring_mask,
        o.ring_entries,
        o.flags,
        o.dropped,
    ]
    .iter()
    .all(|&off| fits(off, sq_size));
    let cq_ok = [c.head, c.tail, c.ring_mask, c.ring_entries, c.overflow]
        .iter()
        .all(|&off| fits(off, cq_size))
        && (c.flags == 0 || fits(c.flags, cq_size));
    let entries_ok = p.sq_entries.is_power_of_two() && p.cq_entries.is_power_of_two();
    sq_ok && cq_ok && entries_ok
}

/// Maps the rings of ring fd `fd` (kernel-allocated memory).
///
/// # Safety
/// `p` must be what io_uring_setup returned for `fd`.
pub(super) unsafe fn map_rings(
    fd: c_int,
    p: &io_uring_params,
    sq: &mut io_uring_sq,
    cq: &mut io_uring_cq,
) -> c_int {
    // Without an SQ index array the kernel leaves sq_off.array as the
    // caller passed it, so it says nothing about the mapping's size.
    sq.ring_sz = if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        p.sq_off.array as usize + p.sq_entries as usize * 4
    } else {
        0
    };
    cq.ring_sz = p.cq_off.cqes as usize + cqes_bytes(p.flags, p.cq_entries);
    if p.features & IORING_FEAT_SINGLE_MMAP != 0 {
        sq.ring_sz = sq.ring_sz.max(cq.ring_sz);
        cq.ring_sz = sq.ring_sz;
    }
    if !offsets_fit(p, sq.ring_sz, cq.ring_sz) {
        return -libc::EINVAL;
    }
    let map = |len: usize, off: u64| {
        // SAFETY: a new shared mapping of the ring fd's region at `off`.
        unsafe { sys::mmap(len, libc::MAP_SHARED | libc::MAP_POPULATE, fd, off) }
    };
    sq.ring_ptr = match map(sq.ring_sz, IORING_OFF_SQ_RING) {
        Ok(m) => m,
        Err(e) => {
            sq.ring_sz = 0;
            return e;
        }
    };
    cq.ring_ptr = if p.features & IORING_FEAT_SINGLE_MMAP != 0 {
        sq.ring_ptr
    } else {
        match map(cq.ring_sz, IORING_OFF_CQ_RING) {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: the SQ ring was mapped above and is not in use.
                unsafe { unmap_rings(sq, cq) };
                return e;
            }
        }
    };
    let sqes_sz = sqes_bytes(p.flags, p.sq_entries);
    sq.sqes_sz = sqes_sz as u32;
    match map(sqes_sz, IORING_OFF_SQES) {
        Ok(m) => sq.sqes = m.cast(),
        Err(e) => {
            // SAFETY: the rings were mapped above and are not in use.
            unsafe { unmap_rings(sq, cq) };
            return e;
        }
    }
    // SAFETY: both regions are mapped as `p` describes.
    unsafe { ring::point_at_kernel_words(p, sq, cq) };
    0
}

/// For IORING_SETUP_NO_MMAP: places the SQEs and rings in memory we (or the
/// application, when `buf` is given) provide. Returns the bytes used.
///
/// # Safety
/// `buf`, when non-null, must be `buf_size` writable bytes that outlive the ring.
pub(super) unsafe fn alloc_app_rings(
    entries: u32,
    p: &mut io_uring_params,
    sq: &mut io_uring_sq,
    cq: &mut io_uring_cq,
    buf: *mut c_void,
    buf_size: usize,
) -> Result<usize, c_int> {
    let page = page_size();
    let (sq_entries, cq_entries) = sq_cq_entries(entries, p)?;
    let sqes_mem = round_up(sqes_bytes(p.flags, sq_entries), page);
    let mut ring_mem = KRING_HEADER + cqes_bytes(p.flags, cq_entries);
    if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        ring_mem += sq_entries as usize * 4;
    }
    let used = round_up(sqes_mem + ring_mem, page);

    let anon = |len: usize| -> Result<*mut c_void, c_int> {
        let huge = if len > page {
            libc::MAP_HUGETLB | (21 << libc::MAP_HUGE_SHIFT)
        } else {
            0
        };
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        unsafe { sys::mmap(len, libc::MAP_SHARED | libc::MAP_ANONYMOUS | huge, -1, 0) }
    };

    let (base, base_size) = if !buf.is_null() {
        if used > buf_size {
            return Err(-libc::ENOMEM);
        }
        (buf, buf_size)
    } else {
        if sqes_mem > HUGE_PAGE || ring_mem > HUGE_PAGE {
            return Err(-libc::ENOMEM);
        }
        let size = if sqes_mem <= page { page } else { HUGE_PAGE };
        (anon(size)?, size)
    };
    sq.sqes = base.cast();
    sq.sqes_sz = if buf.is_null() { base_size as u32 } else { 0 };
    if used <= base_size {
        // SAFETY: `used` bytes fit in the region, so the rings follow the SQEs inside it.
        sq.ring_ptr = unsafe { (base as *mut u8).add(sqes_mem) }.cast();
        sq.ring_sz = 0;
    } else {
        let size = if ring_mem <= page { page } else { HUGE_PAGE };
        match anon(size) {
            Ok(m) => {
                sq.ring_ptr = m;
                sq.ring_sz = size;
            }
            Err(e) => {
                if sq.sqes_sz != 0 {
                    // SAFETY: we mapped the SQE region above and nobody uses it yet.
                    unsafe { sys::munmap(base, sq.sqes_sz as usize) };
                }
                return Err(e);
            }
        }
    }
    cq.ring_ptr = sq.ring_ptr;
    cq.ring_sz = 0;
    p.sq_off.user_addr = sq.sqes as u64;
    p.cq_off.user_addr = sq.ring_ptr as u64;
    Ok(used)
}

/// Maps the rings of an fd the caller set up itself (`io_uring_queue_mmap`).
///
/// # Safety
/// `p` must be what io_uring_setup returned for `fd`.
pub unsafe fn map_existing_ring(fd: c_int, p: &io_uring_params, ring: &mut io_uring) -> c_int {
    *ring = io_uring::zeroed();
    // Mapping some other kind of file at the ring offsets can "work" and
    // fault on first use (a memfd: SIGBUS); an empty io_uring_enter tells
    // an io_uring fd (anything else answers -EOPNOTSUPP, a closed fd
    // -EBADF). For a file that is not a ring, the error is the one mmap()
    // gives, as with liburing (a pipe: -EACCES), and -EOPNOTSUPP only where
    // mmap() would have succeeded.
    let nothing = sys::EnterArgs {
        sz: 0,
        ..sys::EnterArgs::new(0, 0, 0)
    };
    // SAFETY: no argument is passed.
    let probe = unsafe { sys::io_uring_enter2(fd as u32, nothing) };
    if probe == -libc::EBADF {
        return probe;
    }
    if probe == -libc::EOPNOTSUPP {
        let len = (p.sq_off.array as usize + p.sq_entries as usize * 4).max(1);
        // SAFETY: a new shared mapping of the fd, unmapped at once unused.
        return match unsafe { sys::mmap(len, libc::MAP_SHARED, fd, IORING_OFF_SQ_RING) } {
            Err(e) => e,
            Ok(m) => {
                // SAFETY: `m` is the mapping just made, of `len` bytes.
                unsafe { sys::munmap(m, len) };
                probe
            }
        };
    }
    // SAFETY: forwarded contract.
    let ret = unsafe { map_rings(fd, p, &mut ring.sq, &mut ring.cq) };
    if ret == 0 {
        ring.flags = p.flags;
        ring.features = p.features;
        ring.ring_fd = fd;
        ring.enter_ring_fd = fd;
    } else {
        *ring = io_uring::zeroed();
    }
    ret
}

/// Unmaps whatever ring memory this library mapped for `ring`.
///
/// # Safety
/// The ring must not be used afterwards.
pub unsafe fn release_memory(ring: &mut io_uring) {
    if ring.int_flags & int_flags::APP_MEM != 0 {
        return;
    }
    // SAFETY: the sizes are those we mapped; the caller gives the ring up.
    unsafe {
        if !ring.sq.sqes.is_null() && ring.sq.sqes_sz != 0 {
            sys::munmap(ring.sq.sqes.cast(), ring.sq.sqes_sz as usize);
        }
        unmap_rings(&ring.sq, &ring.cq);
    }
}

/// `io_uring_ring_dontfork`: keep the ring mappings out of fork()ed children.
pub fn ring_dontfork(ring: &io_uring) -> c_int {
    if ring.sq.ring_ptr.is_null() || ring.sq.sqes.is_null() || ring.cq.ring_ptr.is_null() {
        return -libc::EINVAL;
    }
    let sqes_len = sqes_bytes(ring.flags, ring.sq.ring_entries);
    // SAFETY: the ranges are this ring's live mappings.
    unsafe {
        let ret = sys::madvise(ring.sq.sqes.cast(), sqes_len, libc::MADV_DONTFORK);
        if ret < 0 {
            return ret;
        }
        let ret = sys::madvise(ring.sq.ring_ptr, ring.sq.ring_sz, libc::MADV_DONTFORK);
        if ret < 0 {
            return ret;
        }
        if ring.cq.ring_ptr != ring.sq.ring_ptr {
            let ret = sys::madvise(ring.cq.ring_ptr, ring.cq.ring_sz, libc::MADV_DONTFORK);
            if ret < 0 {
                return ret;
            }
        }
    }
    0
}
