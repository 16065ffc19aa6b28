//! `struct io_uring` exactly as C code allocates it.
//!
//! The C caller owns the memory; these definitions must stay byte-identical
//! to liburing's (checked by the const assertions below and by the C layout
//! test). All ring state lives here: there is no side table on the hot path.

#![allow(non_camel_case_types)]

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicU16, AtomicU32, Ordering};

use crate::sys::{io_uring_cqe, io_uring_sqe, IORING_SETUP_CQE32, IORING_SETUP_SQE128};

/// Library-private bits of `io_uring::int_flags` (liburing's meanings).
pub mod int_flags {
    use crate::sys::{IORING_ENTER_NO_IOWAIT, IORING_ENTER_REGISTERED_RING};
    /// The ring fd is registered; `enter_ring_fd` is its index.
    pub const REG_RING: u8 = IORING_ENTER_REGISTERED_RING as u8;
    /// Waits are not accounted as iowait.
    pub const NO_IOWAIT: u8 = IORING_ENTER_NO_IOWAIT as u8;
    /// io_uring_register may also use the registered index.
    pub const REG_REG_RING: u8 = 1;
    /// Ring memory belongs to the application (queue_init_mem).
    pub const APP_MEM: u8 = 2;
    /// Completions need io_uring_enter even when the CQ looks empty (IOPOLL).
    pub const CQ_ENTER: u8 = 4;
    /// The bits that are passed through as io_uring_enter flags.
    pub const ENTER_MASK: u8 = REG_RING | NO_IOWAIT;
}

/// rsuring's own per-ring flags, kept in `io_uring::rs_flags` (the first
/// byte of liburing's `pad[3]`, which nothing else reads). All zero for a
/// plain ring, so the hot paths test one byte to skip every extension.
pub mod rs_flags {
    /// The ring belongs to a shared per-CPU SQPOLL group.
    pub const SQPOLL_SHARED: u8 = 1;
    /// rsuring registered the ring fd by itself (SINGLE_ISSUER rings); the
    /// application did not ask for it and must not see it.
    pub const AUTO_REG: u8 = 2;
    /// SQPOLL was added by RSURING_SQPOLL=1, not asked for: the kernel
    /// ring has an SQ thread, `io_uring::flags` shows the plain setup the
    /// application asked for, and every enter goes through
    /// `crate::transparent`.
    pub const SQPOLL_TRANSPARENT: u8 = 4;
    /// Statistics are on (`io_uring_cq::ext` is set).
    pub const STATS: u8 = 8;
    /// A link chain longer than the kernel's per-round limit of a shared
    /// poller was seen on this ring (and the process-wide note printed):
    /// without statistics, its later submissions skip the scan.
    pub const LONG_CHAIN_NOTED: u8 = 16;
    /// Extensions an io_uring_enter has to look at.
    pub const ENTER_SLOW: u8 = AUTO_REG | STATS | SQPOLL_TRANSPARENT;
}

/// `struct io_uring_sq`.
#[repr(C)]
#[derive(Debug)]
pub struct io_uring_sq {
    pub khead: *mut u32,
    pub ktail: *mut u32,
    pub kring_mask: *mut u32,
    pub kring_entries: *mut u32,
    pub kflags: *mut u32,
    pub kdropped: *mut u32,
    pub array: *mut u32,
    pub sqes: *mut io_uring_sqe,
    pub sqe_head: u32,
    pub sqe_tail: u32,
    pub ring_sz: usize,
    pub ring_ptr: *mut c_void,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub sqes_sz: u32,
    /// liburing's `pad`: low half of the ring's automatic registration
    /// token (see `crate::ring_fd`).
    pub reg_token_lo: u32,
}

/// `struct io_uring_cq`.
#[repr(C)]
#[derive(Debug)]
pub struct io_uring_cq {
    pub khead: *mut u32,
    pub ktail: *mut u32,
    pub kring_mask: *mut u32,
    pub kring_entries: *mut u32,
    pub kflags: *mut u32,
    pub koverflow: *mut u32,
    pub cqes: *mut io_uring_cqe,
    pub ring_sz: usize,
    pub ring_ptr: *mut c_void,
    pub ring_mask: u32,
    pub ring_entries: u32,
    /// liburing's `unsigned pad[2]`: rsuring keeps its statistics pointer
    /// here (NULL unless statistics are on). Nothing else reads these bytes.
    pub ext: *mut crate::stats::RingExt,
}

/// `struct io_uring`.
#[repr(C)]
#[derive(Debug)]
pub struct io_uring {
    pub sq: io_uring_sq,
    pub cq: io_uring_cq,
    pub flags: u32,
    pub ring_fd: c_int,
    pub features: u32,
    pub enter_ring_fd: c_int,
    pub int_flags: u8,
    /// liburing's `pad[0]`: rsuring's own flags (see [`rs_flags`]).
    pub rs_flags: u8,
    /// liburing's `pad[1..3]`: the process generation (fork count, see
    /// [`fork_generation`]) that created the ring; a transparent SQPOLL
    /// ring refuses submissions from any other (see `crate::transparent`).
    pub fork_gen: u16,
    /// liburing's `pad2`: high half of the automatic registration token.
    pub reg_token_hi: u32,
}

const _: () = {
    assert!(core::mem::size_of::<io_uring_sq>() == 104);
    assert!(core::mem::size_of::<io_uring_cq>() == 88);
    assert!(core::mem::size_of::<io_uring>() == 216);
    assert!(core::mem::offset_of!(io_uring, flags) == 192);
    assert!(core::mem::offset_of!(io_uring, int_flags) == 208);
    assert!(core::mem::offset_of!(io_uring_cq, ext) == 80);
};

/// Counts fork()s (in the child): a forked child shares its parent's ring
/// memory but not its SQ poll threads.
static FORK_GENERATION: AtomicU16 = AtomicU16::new(0);

extern "C" fn after_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The current process generation (see [`FORK_GENERATION`]).
#[inline(always)]
pub fn fork_generation() -> u16 {
    static HANDLER: std::sync::Once = std::sync::Once::new();
    HANDLER.call_once(|| {
        // SAFETY: the handler is a plain function valid for the whole process.
        unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
    });
    FORK_GENERATION.load(Ordering::Relaxed)
}

/// Reads a kernel-shared ring index with the given ordering.
///
/// # Safety
/// `p` must point into a live ring mapping.
#[inline(always)]
pub unsafe fn load(p: *const u32, order: Ordering) -> u32 {
    // SAFETY: ring indices are naturally aligned u32s inside the mapping,
    // which outlives the call; the kernel accesses them atomically too.
    unsafe { AtomicU32::from_ptr(p as *mut u32).load(order) }
}

/// Writes a kernel-shared ring index with the given ordering.
///
/// # Safety
/// `p` must point into a live ring mapping.
#[inline(always)]
pub unsafe fn store(p: *mut u32, v: u32, order: Ordering) {
    // SAFETY: as for `load`.
    unsafe { AtomicU32::from_ptr(p).store(v, order) }
}

impl io_uring {
    /// An all-zero ring, the state `queue_init` starts from.
    pub fn zeroed() -> Self {
        // SAFETY: every field is an integer or a raw pointer; zero is valid.
        unsafe { core::mem::zeroed() }
    }

    /// Whether the ring is set up: its mappings exist (a zeroed or exited
    /// ring has none).
    #[inline(always)]
    pub fn is_live(&self) -> bool {
        !self.sq.khead.is_null() && !self.cq.khead.is_null()
    }

    /// log2 of SQE slots per entry (SQE128 entries take two 64-byte slots).
    #[inline(always)]
    pub fn sqe_shift(&self) -> u32 {
        (self.flags & IORING_SETUP_SQE128 != 0) as u32
    }

    /// log2 of CQE slots per entry (CQE32 entries take two 16-byte slots).
    #[inline(always)]
    pub fn cqe_shift(&self) -> u32 {
        (self.flags & IORING_SETUP_CQE32 != 0) as u32
    }

    /// The SQ ring flags the kernel publishes.
    #[inline(always)]
    pub fn sq_flags(&self) -> u32 {
        // SAFETY: kflags points into the live SQ ring mapping.
        unsafe { load(self.sq.kflags, Ordering::Relaxed) }
    }

    /// Number of CQEs ready to be reaped (acquire on the kernel's tail, so
    /// their contents are visible).
    #[inline(always)]
    pub fn cq_ready(&self) -> u32 {
        // SAFETY: ktail and khead point into the live CQ ring mapping.
        unsafe {
            load(self.cq.ktail, Ordering::Acquire)
                .wrapping_sub(load(self.cq.khead, Ordering::Relaxed))
        }
    }

    /// Pointer to the CQE at ring position `pos`.
    #[inline(always)]
    pub fn cqe_at(&self, pos: u32) -> *mut io_uring_cqe {
        let idx = ((pos & self.cq.ring_mask) << self.cqe_shift()) as usize;
        self.cq.cqes.wrapping_add(idx)
    }

    /// Marks `nr` CQEs as consumed (release, so the kernel sees us done
    /// reading them before it reuses the slots).
    #[inline(always)]
    pub fn cq_advance(&mut self, nr: u32) {
        if nr != 0 {
            // SAFETY: khead points into the live CQ ring mapping; only the
            // application writes it.
            unsafe {
                let head = load(self.cq.khead, Ordering::Relaxed);
                store(self.cq.khead, head.wrapping_add(nr), Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Ring geometry helpers on rings that were never set up.

    use super::*;

    #[test]
    fn a_zeroed_ring_is_not_live() {
        assert!(!io_uring::zeroed().is_live());
    }

    #[test]
    fn big_entries_shift_by_one_slot() {
        let mut ring = io_uring::zeroed();
        assert_eq!((ring.sqe_shift(), ring.cqe_shift()), (0, 0));
        ring.flags = IORING_SETUP_SQE128;
        assert_eq!((ring.sqe_shift(), ring.cqe_shift()), (1, 0));
        ring.flags = IORING_SETUP_CQE32;
        assert_eq!((ring.sqe_shift(), ring.cqe_shift()), (0, 1));
    }

    #[test]
    fn cqe_at_wraps_the_position_by_the_mask() {
        let mut ring = io_uring::zeroed();
        ring.cq.ring_mask = 7;
        let base = ring.cq.cqes as usize;
        let at = |ring: &io_uring, pos| ring.cqe_at(pos) as usize - base;
        assert_eq!(at(&ring, 0), 0);
        assert_eq!(at(&ring, 1), 16);
        assert_eq!(at(&ring, 9), 16, "position 9 of 8 slots is slot 1");
        assert_eq!(at(&ring, u32::MAX), 7 * 16);
        ring.flags = IORING_SETUP_CQE32;
        assert_eq!(at(&ring, 9), 32, "a 32-byte CQE takes two 16-byte slots");
    }
}
