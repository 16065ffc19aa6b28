//! Ring mapping: creating a kernel ring and mapping its memory, unmapping
//! it, and the sizes and layouts involved. No policy lives here (see
//! `crate::lifecycle` for what init and exit add on top).
//!
//! Layer 4 (see lib.rs). Functions taking the plain [`io_uring`]: this is
//! the module that sets and replaces a ring's pointers (where the kernel's
//! words are within a mapping is `crate::ring`'s); the ring methods are
//! ring.rs's and queue/'s.
//!
//! The files, one concept each: [`sizes`] (entries and bytes), [`mapping`]
//! (mapping and unmapping memory), [`sq_array`] (rings without an SQ index
//! array), [`new_ring`] (a new ring from a [`SetupRequest`]), [`resize`]
//! (the pointers after a resize).

use core::ffi::{c_int, c_void};
use core::ptr;
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::ring::{self, int_flags, io_uring, io_uring_cq, io_uring_sq};
use crate::sys;
use crate::uapi::{
    io_uring_cqe, io_uring_params, io_uring_sqe, IORING_FEAT_NATIVE_WORKERS,
    IORING_FEAT_SINGLE_MMAP, IORING_OFF_CQ_RING, IORING_OFF_SQES, IORING_OFF_SQ_RING,
    IORING_SETUP_CLAMP, IORING_SETUP_CQE32, IORING_SETUP_CQSIZE, IORING_SETUP_IOPOLL,
    IORING_SETUP_NO_MMAP, IORING_SETUP_NO_SQARRAY, IORING_SETUP_REGISTERED_FD_ONLY,
    IORING_SETUP_SQE128, IORING_SETUP_SQPOLL, KERN_MAX_CQ_ENTRIES, KERN_MAX_ENTRIES,
};

mod mapping;
mod new_ring;
mod resize;
mod sizes;
mod sq_array;

use self::sq_array::*;
pub use self::{mapping::*, new_ring::*, resize::*, sizes::*};

#[cfg(test)]
mod tests {
    //! The sizing and layout arithmetic, without a kernel. The rules are
    //! the kernel's (io_uring_setup(2)): entries round up to a power of
    //! two, at most 32768 SQ and 65536 CQ entries unless CLAMP, the CQ
    //! twice the SQ unless CQSIZE, never smaller than the SQ.

    use super::*;
    use crate::uapi::{io_cqring_offsets, io_sqring_offsets};

    const EINVAL: Result<(u32, u32), c_int> = Err(-libc::EINVAL);

    fn params(flags: u32, cq_entries: u32) -> io_uring_params {
        io_uring_params {
            flags,
            cq_entries,
            ..Default::default()
        }
    }

    #[test]
    fn round_up_goes_to_the_next_multiple() {
        assert_eq!(round_up(0, 4096), 0);
        assert_eq!(round_up(1, 4096), 4096);
        assert_eq!(round_up(4096, 4096), 4096);
        assert_eq!(round_up(4097, 4096), 8192);
        assert_eq!(round_up(65, 64), 128);
    }

    #[test]
    fn big_entries_take_two_slots() {
        assert_eq!(sqes_bytes(0, 8), 8 * 64);
        assert_eq!(sqes_bytes(IORING_SETUP_SQE128, 8), 8 * 128);
        assert_eq!(sqes_bytes(IORING_SETUP_CQE32, 8), 8 * 64);
        assert_eq!(cqes_bytes(0, 16), 16 * 16);
        assert_eq!(cqes_bytes(IORING_SETUP_CQE32, 16), 16 * 32);
        assert_eq!(cqes_bytes(IORING_SETUP_SQE128, 16), 16 * 16);
    }

    #[test]
    fn sq_entries_round_up_and_the_cq_is_twice_as_big() {
        let plain = params(0, 0);
        assert_eq!(sq_cq_entries(1, &plain), Ok((1, 2)));
        assert_eq!(sq_cq_entries(3, &plain), Ok((4, 8)));
        assert_eq!(sq_cq_entries(8, &plain), Ok((8, 16)));
        assert_eq!(sq_cq_entries(32768, &plain), Ok((32768, 65536)));
        assert_eq!(sq_cq_entries(0, &plain), EINVAL);
        assert_eq!(sq_cq_entries(32769, &plain), EINVAL);
        assert_eq!(sq_cq_entries(u32::MAX, &plain), EINVAL);
    }

    #[test]
    fn clamp_caps_the_sizes_instead_of_failing() {
        let clamp = params(IORING_SETUP_CLAMP, 0);
        assert_eq!(sq_cq_entries(32769, &clamp), Ok((32768, 65536)));
        assert_eq!(sq_cq_entries(u32::MAX, &clamp), Ok((32768, 65536)));
        assert_eq!(sq_cq_entries(0, &clamp), EINVAL);
        let cq = params(IORING_SETUP_CLAMP | IORING_SETUP_CQSIZE, u32::MAX);
        assert_eq!(sq_cq_entries(8, &cq), Ok((8, 65536)));
    }

    #[test]
    fn cqsize_sets_the_cq_within_the_limits() {
        let cq = |n| params(IORING_SETUP_CQSIZE, n);
        assert_eq!(sq_cq_entries(8, &cq(100)), Ok((8, 128)));
        assert_eq!(sq_cq_entries(8, &cq(8)), Ok((8, 8)));
        assert_eq!(sq_cq_entries(64, &cq(33)), Ok((64, 64)));
        assert_eq!(sq_cq_entries(8, &cq(65536)), Ok((8, 65536)));
        // Smaller than the SQ, empty, or too big.
        assert_eq!(sq_cq_entries(8, &cq(4)), EINVAL);
        assert_eq!(sq_cq_entries(8, &cq(0)), EINVAL);
        assert_eq!(sq_cq_entries(8, &cq(65537)), EINVAL);
        // cq_entries means nothing without CQSIZE.
        assert_eq!(sq_cq_entries(8, &params(0, 4)), Ok((8, 16)));
    }

    #[test]
    fn locked_charge_is_two_page_order_blocks() {
        // 4096 entries on 4 KiB pages: rings 320 + 8192 * 16 + 4096 * 4
        // bytes = 37 pages -> 64; SQEs 64 pages. liburing 2.3 says 524288.
        if page_size() == 4096 {
            assert_eq!(locked_charge(0, 4096, 8192), 524288);
            // 8 entries: one page each.
            assert_eq!(locked_charge(0, 8, 16), 2 * 4096);
            // CQE32: 128 CQEs of 32 bytes + 320 + 256 -> 2 pages.
            assert_eq!(locked_charge(IORING_SETUP_CQE32, 64, 128), 3 * 4096);
        }
        // Each block is a power of two pages, never less than the bytes.
        for sq in [1u32, 2, 64, 1024, 32768] {
            let bytes = locked_charge(0, sq, 2 * sq);
            assert!(bytes >= memory_size_params(sq, &params(0, 0)) as usize);
        }
    }

    #[test]
    fn memory_size_counts_cqes_ring_header_sq_array_and_sqes_in_pages() {
        let page = page_size();
        let pages =
            |ring: usize, sqes: usize| (round_up(ring, page) + round_up(sqes, page)) as isize;
        // 8 SQ and 16 CQ entries: 16 CQEs of 16 bytes, the 64-byte header,
        // 8 array slots of 4 bytes; 8 SQEs of 64 bytes.
        assert_eq!(
            memory_size_params(8, &params(0, 0)),
            pages(256 + 64 + 32, 512)
        );
        assert_eq!(
            memory_size_params(8, &params(IORING_SETUP_NO_SQARRAY, 0)),
            pages(256 + 64, 512)
        );
        assert_eq!(
            memory_size_params(8, &params(IORING_SETUP_CQE32 | IORING_SETUP_SQE128, 0)),
            pages(512 + 64 + 32, 1024)
        );
        // 4096 entries: 8192 CQEs span many pages.
        assert_eq!(
            memory_size_params(4096, &params(0, 0)),
            pages(8192 * 16 + 64 + 4096 * 4, 4096 * 64)
        );
        assert_eq!(
            memory_size_params(8, &params(IORING_SETUP_CQSIZE, 1024)),
            pages(1024 * 16 + 64 + 32, 512)
        );
        // Invalid sizes give the setup error.
        assert_eq!(memory_size_params(0, &params(0, 0)), -libc::EINVAL as isize);
        assert_eq!(
            memory_size_params(8, &params(IORING_SETUP_CQSIZE, 4)),
            -libc::EINVAL as isize
        );
    }

    /// Params as the kernel lays out a small ring: SQ fields at 0..24,
    /// CQ fields at 64..84, 8 SQ and 16 CQ entries.
    fn kernel_like_params() -> io_uring_params {
        let mut p = params(0, 16);
        p.sq_entries = 8;
        p.sq_off = io_sqring_offsets {
            head: 0,
            tail: 4,
            ring_mask: 8,
            ring_entries: 12,
            flags: 16,
            dropped: 20,
            array: 320,
            ..Default::default()
        };
        p.cq_off = io_cqring_offsets {
            head: 64,
            tail: 68,
            ring_mask: 72,
            ring_entries: 76,
            overflow: 80,
            cqes: 128,
            flags: 84,
            ..Default::default()
        };
        p
    }

    #[test]
    fn offsets_fit_accepts_fields_inside_the_mappings() {
        let p = kernel_like_params();
        assert!(offsets_fit(&p, 352, 384));
        // The last 4 bytes of a mapping are still inside it.
        assert!(offsets_fit(&p, 24, 88));
        // No CQ flags word (old kernels report offset 0): not checked.
        let mut q = p;
        q.cq_off.flags = 0;
        assert!(offsets_fit(&q, 24, 84));
    }

    #[test]
    fn offsets_fit_refuses_fields_outside_or_odd_sizes() {
        let p = kernel_like_params();
        assert!(!offsets_fit(&p, 23, 384), "dropped ends at 24");
        assert!(!offsets_fit(&p, 352, 87), "cq flags end at 88");
        let mut q = p;
        q.sq_off.head = u32::MAX - 1;
        assert!(!offsets_fit(&q, 352, 384));
        let mut q = p;
        q.cq_off.overflow = 4096;
        assert!(!offsets_fit(&q, 352, 384));
        for (sq, cq) in [(6, 16), (8, 12), (0, 16), (8, 0)] {
            let mut q = p;
            q.sq_entries = sq;
            q.cq_entries = cq;
            assert!(!offsets_fit(&q, 352, 384), "entries {sq}/{cq}");
        }
    }

    fn ring_with(flags: u32, features: u32) -> io_uring {
        let mut ring = io_uring::zeroed();
        ring.flags = flags;
        ring.features = features;
        ring
    }

    /// A resize reply: 32 CQ entries with the CQEs at 64, no SQ array
    /// offset, and flags the ring did not set up with.
    fn resize_reply() -> io_uring_params {
        let mut reply = params(IORING_SETUP_CQSIZE, 32);
        reply.sq_entries = 16;
        reply.cq_off.cqes = 64;
        reply
    }

    #[test]
    fn resized_layout_puts_the_sq_array_after_the_cqes() {
        let ring = ring_with(0, IORING_FEAT_SINGLE_MMAP);
        let layout = resized_layout(&ring, &resize_reply());
        // 64 + 32 * 16 = 576, a multiple of 64 already.
        assert_eq!(layout.sq_off.array, 576);
        assert_eq!(layout.flags, 0, "the ring's own setup flags");
        assert_eq!(layout.features, IORING_FEAT_SINGLE_MMAP);
        assert_eq!((layout.sq_entries, layout.cq_entries), (16, 32));

        // Rounded up to a cache line: 64 + 3 * 16 = 112 -> 128.
        let mut reply = resize_reply();
        reply.cq_entries = 3;
        assert_eq!(resized_layout(&ring, &reply).sq_off.array, 128);
    }

    #[test]
    fn resized_layout_doubles_the_cq_region_for_big_cqes() {
        // The kernel doubles the whole CQ region (header and CQEs) for
        // CQE32: (64 + 32 * 16) * 2 = 1152.
        let ring = ring_with(IORING_SETUP_CQE32, 0);
        assert_eq!(resized_layout(&ring, &resize_reply()).sq_off.array, 1152);
    }

    #[test]
    fn resized_layout_keeps_an_array_offset_the_kernel_gave() {
        let ring = ring_with(0, 0);
        let mut reply = resize_reply();
        reply.sq_off.array = 4096;
        assert_eq!(resized_layout(&ring, &reply).sq_off.array, 4096);
        // No SQ array at all: nothing to place.
        let ring = ring_with(IORING_SETUP_NO_SQARRAY, 0);
        let layout = resized_layout(&ring, &resize_reply());
        assert_eq!(layout.sq_off.array, 0);
        assert_eq!(layout.flags, IORING_SETUP_NO_SQARRAY);
    }
}
