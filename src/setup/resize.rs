//! A ring's pointers after IORING_REGISTER_RESIZE_RINGS.

use super::*;

/// The layout of rings after IORING_REGISTER_RESIZE_RINGS. The kernel's
/// reply carries the new sizes and offsets but neither the ring's features
/// (SINGLE_MMAP) nor, for a ring with an SQ index array, where that array
/// now is: it follows the CQEs, cache-line aligned, as at setup. The ring's
/// own setup flags (CQE32, NO_SQARRAY) decide the rest.
pub(super) fn resized_layout(ring: &io_uring, reply: &io_uring_params) -> io_uring_params {
    let mut layout = *reply;
    layout.flags = ring.flags;
    layout.features = ring.features;
    if ring.flags & IORING_SETUP_NO_SQARRAY == 0 && layout.sq_off.array == 0 {
        let cq_end = layout.cq_off.cqes as usize
            + layout.cq_entries as usize * core::mem::size_of::<io_uring_cqe>();
        let shifted = cq_end << (ring.flags & IORING_SETUP_CQE32 != 0) as u32;
        layout.sq_off.array = round_up(shifted, 64) as u32;
    }
    layout
}

/// Maps the rings again after a successful IORING_REGISTER_RESIZE_RINGS
/// (`reply` is what the kernel wrote back) and carries the library's state
/// over: the SQE indices and the side data kept in liburing's padding.
/// (The statistics and poller registries follow in `crate::lifecycle`.)
///
/// # Safety
/// `ring` must be a live ring this library mapped; on success its old
/// mappings are gone.
pub unsafe fn remap_resized(ring: &mut io_uring, reply: &io_uring_params) -> c_int {
    let layout = resized_layout(ring, reply);
    let mut fresh = io_uring::zeroed();
    // SAFETY: `layout` describes the resized rings of this ring's fd.
    let ret = unsafe { map_rings(ring.ring_fd, &layout, &mut fresh.sq, &mut fresh.cq) };
    if ret != 0 {
        return ret;
    }
    // SAFETY: the old mappings are replaced below and never used again.
    unsafe {
        sys::munmap(ring.sq.sqes.cast(), ring.sq.sqes_sz as usize);
        unmap_rings(&ring.sq, &ring.cq);
    }
    fresh.sq.sqe_head = ring.sq.sqe_head;
    fresh.sq.sqe_tail = ring.sq.sqe_tail;
    fresh.sq.stats_lo = ring.sq.stats_lo;
    fresh.cq.reg_key = ring.cq.reg_key;
    let private_array = !ring.sq.array.is_null();
    ring.sq = fresh.sq;
    ring.cq = fresh.cq;
    if ring.flags & IORING_SETUP_NO_SQARRAY == 0 {
        // SAFETY: the new kernel array, ring_entries slots in the new mapping.
        unsafe { ring::fill_sq_array(&ring.sq) };
    } else if private_array {
        // NO_SQARRAY added by the library: still the private array.
        ring.sq.array = private_sq_array(ring.sq.ring_entries);
    }
    0
}
