//! `struct io_uring` exactly as C code allocates it, and [`LiveRing`], the
//! only way to reach the memory its pointers name.
//!
//! The C caller owns the memory; these definitions must stay byte-identical
//! to liburing's (checked by the const assertions below and by the C layout
//! test). All ring state lives here: there is no side table on the hot path.
//!
//! Where ring methods live: this module has the methods of [`io_uring`]
//! (geometry, pointer arithmetic that dereferences nothing) and of
//! [`LiveRing`] (every load and store of a kernel-shared ring word);
//! `crate::queue` adds the hot paths to [`LiveRing`]. Every other module
//! offers free functions that take the ring, so each use of a module shows
//! as an import (checked by tests/layering.rs).

#![allow(non_camel_case_types)]

use core::ffi::{c_int, c_void};
use core::ptr;
use core::sync::atomic::{AtomicU16, AtomicU32, Ordering};

use crate::fork;
use crate::uapi::{
    io_uring_cqe, io_uring_params, io_uring_sqe, IORING_SETUP_CQE32, IORING_SETUP_NO_SQARRAY,
    IORING_SETUP_SQE128,
};

/// Library-private bits of `io_uring::int_flags` (liburing's meanings).
pub mod int_flags {
    use crate::uapi::{IORING_ENTER_NO_IOWAIT, IORING_ENTER_REGISTERED_RING};
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
/// byte of liburing's `pad[3]`, which nothing else reads). A plain ring
/// set up by this library holds exactly [`rs_flags::LIVE`], so the hot
/// entry points tell "live, plain, no extension" from one byte compare.
pub mod rs_flags {
    /// Set up by this library's lifecycle (init, queue_mmap) and not
    /// exited (exit zeroes the ring): its pointers are the mapper's. A
    /// ring whose byte is exactly `LIVE` takes the entry points' short
    /// path, without a look at its pointers or setup flags; another with
    /// `LIVE` skips the pointer checks; any other (a zeroed, exited or
    /// foreign ring) takes the checked path.
    pub const LIVE: u8 = 32;
    /// The ring has an SQ thread, SQ_REWIND or IOPOLL without an SQ thread
    /// (`int_flags::CQ_ENTER`): the cases of the submit path that the
    /// short path leaves out.
    pub const FULL_SUBMIT: u8 = 64;
    /// The ring belongs to a shared per-CPU SQPOLL group.
    pub const SQPOLL_SHARED: u8 = 1;
    /// rsuring registered the ring fd by itself (at setup); the
    /// application did not ask for it and must not see it.
    pub const AUTO_REG: u8 = 2;
    /// SQPOLL was added by RSURING_SQPOLL=1, not asked for: the kernel
    /// ring has an SQ thread, `io_uring::flags` shows the plain setup the
    /// application asked for, and every enter goes through
    /// `crate::transparent`.
    pub const SQPOLL_TRANSPARENT: u8 = 4;
    /// Statistics are on ([`super::io_uring::stats_slot`] is set).
    pub const STATS: u8 = 8;
    /// A link chain longer than the kernel's per-round limit of a shared
    /// poller was seen on this ring (and the process-wide note printed):
    /// without statistics, its later submissions skip the scan.
    pub const LONG_CHAIN_NOTED: u8 = 16;
    /// Extensions an io_uring_enter has to look at.
    pub const ENTER_SLOW: u8 = AUTO_REG | STATS | SQPOLL_TRANSPARENT;
    /// Every extension bit.
    pub const EXT: u8 = SQPOLL_SHARED | AUTO_REG | SQPOLL_TRANSPARENT | STATS | LONG_CHAIN_NOTED;
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
    /// liburing's `pad`: low half of the statistics slot's address (NULL
    /// unless statistics are on; see [`io_uring::stats_slot`]).
    pub stats_lo: u32,
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
    /// liburing's `unsigned pad[2]`: the key of the ring's automatic ring
    /// fd registration, the holder thread's pointer with the slot index and
    /// the epoch it was checked in (see `crate::ring_fd`); 0 without one.
    /// Nothing else reads these bytes.
    pub reg_key: u64,
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
    /// liburing's `pad2`: high half of the statistics slot's address.
    pub stats_hi: u32,
}

const _: () = {
    assert!(core::mem::size_of::<io_uring_sq>() == 104);
    assert!(core::mem::size_of::<io_uring_cq>() == 88);
    assert!(core::mem::size_of::<io_uring>() == 216);
    assert!(core::mem::offset_of!(io_uring, flags) == 192);
    assert!(core::mem::offset_of!(io_uring, int_flags) == 208);
    assert!(core::mem::offset_of!(io_uring_cq, reg_key) == 80);
};

/// Counts fork()s (in the child): a forked child shares its parent's ring
/// memory but not its SQ poll threads.
static FORK_GENERATION: AtomicU16 = AtomicU16::new(0);

static FORK_HANDLERS: fork::Handlers = fork::Handlers {
    prepare: None,
    parent: None,
    child: Some(|| {
        FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
    }),
};

/// Installs the fork handler that counts generations (see `crate::fork`).
pub fn install_fork_handlers() {
    fork::install(fork::Part::ForkGeneration, &FORK_HANDLERS);
}

/// The current process generation (see [`FORK_GENERATION`]).
#[inline(always)]
pub fn fork_generation() -> u16 {
    install_fork_handlers();
    FORK_GENERATION.load(Ordering::Relaxed)
}

/// Where an io_uring_enter of a ring goes from the calling thread: the fd
/// or registered ring index, and the enter flags the ring adds to every
/// call (`int_flags::ENTER_MASK`: registered ring, no iowait). Made by
/// `crate::ring_fd`, used by the hot paths and `crate::transparent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnterTarget {
    pub fd: u32,
    pub flags: u32,
}

/// What [`io_uring::stats_slot`] points at: a statistics slot of `crate::stats`
/// (which casts it back to its own type). Opaque here, so the layout of
/// the ring does not depend on the statistics.
#[repr(C)]
#[derive(Debug)]
pub struct StatsSlot {
    _opaque: [u8; 0],
}

/// Reads a kernel-shared ring word with the given ordering.
///
/// # Safety
/// `p` must point into a live ring mapping.
#[inline(always)]
unsafe fn load(p: *const u32, order: Ordering) -> u32 {
    // SAFETY: ring words are naturally aligned u32s inside the mapping,
    // which outlives the call; the kernel accesses them atomically too.
    unsafe { AtomicU32::from_ptr(p.cast_mut()).load(order) }
}

/// Writes a kernel-shared ring word with the given ordering.
///
/// # Safety
/// `p` must point into a live ring mapping.
#[inline(always)]
unsafe fn store(p: *mut u32, v: u32, order: Ordering) {
    // SAFETY: as for `load`.
    unsafe { AtomicU32::from_ptr(p).store(v, order) }
}

impl io_uring {
    /// An all-zero ring, the state `queue_init` starts from.
    pub fn zeroed() -> Self {
        // SAFETY: every field is an integer or a raw pointer; zero is valid.
        unsafe { core::mem::zeroed() }
    }

    /// The statistics slot (`crate::stats`), NULL unless statistics are on.
    /// Its address is split over liburing's `sq.pad` and `pad2`, so that
    /// the one 8-byte padding word can hold the registration key the
    /// hot path compares (see `crate::ring_fd`).
    #[inline(always)]
    pub fn stats_slot(&self) -> *mut StatsSlot {
        (u64::from(self.stats_hi) << 32 | u64::from(self.sq.stats_lo)) as usize as *mut StatsSlot
    }

    /// Stores the statistics slot's address (see [`Self::stats_slot`]).
    #[inline(always)]
    pub fn set_stats_slot(&mut self, slot: *mut StatsSlot) {
        let addr = slot as usize as u64;
        self.sq.stats_lo = addr as u32;
        self.stats_hi = (addr >> 32) as u32;
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

    /// Pointer to the CQE at ring position `pos` (not dereferenced).
    #[inline(always)]
    pub fn cqe_at(&self, pos: u32) -> *mut io_uring_cqe {
        let idx = ((pos & self.cq.ring_mask) << self.cqe_shift()) as usize;
        self.cq.cqes.wrapping_add(idx)
    }

    /// Pointer to the SQE at ring position `pos` (not dereferenced).
    #[inline(always)]
    pub fn sqe_at(&self, pos: u32) -> *mut io_uring_sqe {
        let idx = ((pos & self.sq.ring_mask) << self.sqe_shift()) as usize;
        self.sq.sqes.wrapping_add(idx)
    }
}

/// Points the SQ and CQ word pointers of a ring at the places the kernel's
/// offsets name, and reads the ring geometry (masks, entries) from there.
///
/// # Safety
/// `sq.ring_ptr` / `cq.ring_ptr` must be live mappings laid out as `p` says.
pub unsafe fn point_at_kernel_words(
    p: &io_uring_params,
    sq: &mut io_uring_sq,
    cq: &mut io_uring_cq,
) {
    let s = sq.ring_ptr.cast::<u8>();
    let c = cq.ring_ptr.cast::<u8>();
    // SAFETY: the kernel's offsets lie inside the mappings (forwarded contract).
    unsafe {
        let in_sq = |off: u32| s.add(off as usize).cast::<u32>();
        let in_cq = |off: u32| c.add(off as usize).cast::<u32>();
        let o = &p.sq_off;
        [sq.khead, sq.ktail, sq.kring_mask, sq.kring_entries] =
            [o.head, o.tail, o.ring_mask, o.ring_entries].map(in_sq);
        [sq.kflags, sq.kdropped] = [o.flags, o.dropped].map(in_sq);
        if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
            sq.array = in_sq(o.array);
        }
        let o = &p.cq_off;
        [cq.khead, cq.ktail, cq.kring_mask, cq.kring_entries] =
            [o.head, o.tail, o.ring_mask, o.ring_entries].map(in_cq);
        (cq.koverflow, cq.cqes) = (in_cq(o.overflow), in_cq(o.cqes).cast());
        if o.flags != 0 {
            cq.kflags = in_cq(o.flags);
        }
        sq.ring_mask = load(sq.kring_mask, Ordering::Relaxed);
        sq.ring_entries = load(sq.kring_entries, Ordering::Relaxed);
        cq.ring_mask = load(cq.kring_mask, Ordering::Relaxed);
        cq.ring_entries = load(cq.kring_entries, Ordering::Relaxed);
    }
}

/// Fills the kernel's SQ index array with the identity (slot i holds SQE
/// i), so submitting only has to move the tail.
///
/// # Safety
/// `sq.array` must be the kernel's array of `sq.ring_entries` slots in a
/// live SQ ring mapping.
pub unsafe fn fill_sq_array(sq: &io_uring_sq) {
    for i in 0..sq.ring_entries {
        // SAFETY: slot i < ring_entries lies in the array (forwarded contract).
        unsafe { store(sq.array.add(i as usize), i, Ordering::Relaxed) };
    }
}

/// A ring whose mappings are live: every pointer in it is one this
/// library's mapper set (the kernel's words, SQEs and CQEs of this ring)
/// and still mapped, and [`io_uring::stats_slot`] is NULL or a statistics
/// slot.
///
/// Only [`LiveRing::from_mut`] makes one, an `unsafe` promise that the FFI
/// layer's checks (and the lifecycle, right after the mapper succeeded)
/// make. With that promise kept, every method here is safe to call: this
/// type carries every access to the kernel-shared ring words, and no other
/// module loads or stores them. Through `Deref` the fields read as those of
/// an [`io_uring`]; none of them can be written through a `LiveRing`
/// except by the setters below, which change no pointer, or by the
/// `unsafe` [`LiveRing::fields_mut`].
#[repr(transparent)]
#[derive(Debug)]
pub struct LiveRing(io_uring);

impl core::ops::Deref for LiveRing {
    type Target = io_uring;
    #[inline(always)]
    fn deref(&self) -> &io_uring {
        &self.0
    }
}

impl LiveRing {
    /// The live view of `ring`, or None when it is not set up (zeroed or
    /// exited).
    ///
    /// # Safety
    /// A ring with non-null pointers must have been set up by this
    /// library's mapper and not exited or altered since (the contract of
    /// every exported function that takes a ring).
    #[inline(always)]
    pub unsafe fn from_mut(ring: &mut io_uring) -> Option<&mut LiveRing> {
        if !ring.is_live() {
            return None;
        }
        // SAFETY: LiveRing is a transparent wrapper of io_uring; the
        // invariant is the caller's promise.
        Some(unsafe { &mut *ptr::from_mut(ring).cast::<LiveRing>() })
    }

    /// The live view of a ring set up by this library whose `rs_flags` is
    /// exactly `FLAGS`, give or take the bits of `OPTIONAL`, or None for
    /// any other ring (the caller then takes the checked path). One byte
    /// compare: the hot entry points' test. `<LIVE, 0>`: a plain ring (no
    /// SQ thread, no SQ_REWIND, no extension); `<LIVE | AUTO_REG, 0>`: one
    /// whose only extension is the library's automatic ring fd;
    /// `<LIVE, AUTO_REG>`: either (the entry points whose enters go through
    /// [`crate::queue`]'s checked `enter`, which picks the slot or the fd).
    ///
    /// # Safety
    /// As for [`Self::from_mut`]: a ring marked [`rs_flags::LIVE`] must be
    /// the one this library set up, not exited (exit zeroes it) or altered.
    #[inline(always)]
    pub unsafe fn flagged_from_mut<const FLAGS: u8, const OPTIONAL: u8>(
        ring: &mut io_uring,
    ) -> Option<&mut LiveRing> {
        if ring.rs_flags | OPTIONAL != FLAGS | OPTIONAL {
            return None;
        }
        // SAFETY: as in from_mut; the lifecycle sets LIVE only on a ring
        // its mapper set up, and exit clears it with the pointers.
        Some(unsafe { &mut *ptr::from_mut(ring).cast::<LiveRing>() })
    }

    /// The live view of any ring this library's lifecycle set up (marked
    /// [`rs_flags::LIVE`]), without a look at its pointers; None for any
    /// other (then [`Self::from_mut`] decides).
    ///
    /// # Safety
    /// As for [`Self::flagged_from_mut`].
    #[inline(always)]
    pub unsafe fn marked_from_mut(ring: &mut io_uring) -> Option<&mut LiveRing> {
        if ring.rs_flags & rs_flags::LIVE == 0 {
            return None;
        }
        // SAFETY: as in flagged_from_mut.
        Some(unsafe { &mut *ptr::from_mut(ring).cast::<LiveRing>() })
    }

    /// The plain struct, for code that moves or replaces the mappings.
    ///
    /// # Safety
    /// When the borrow ends the ring must again satisfy the type's
    /// invariant (or not be used as a `LiveRing` again).
    #[inline(always)]
    pub unsafe fn fields_mut(&mut self) -> &mut io_uring {
        &mut self.0
    }

    /// The SQ head the kernel has consumed up to.
    #[inline(always)]
    pub fn sq_head(&self, order: Ordering) -> u32 {
        // SAFETY: khead is a word of the live SQ ring mapping (invariant).
        unsafe { load(self.0.sq.khead, order) }
    }

    /// The SQ tail published so far (only the application writes it).
    #[inline(always)]
    pub fn sq_tail(&self) -> u32 {
        // SAFETY: as for `sq_head`.
        unsafe { load(self.0.sq.ktail, Ordering::Relaxed) }
    }

    /// Publishes SQEs up to `tail` (release: their contents must be
    /// visible to the kernel before the tail is).
    #[inline(always)]
    pub fn publish_sq_tail(&self, tail: u32) {
        // SAFETY: as for `sq_head`.
        unsafe { store(self.0.sq.ktail, tail, Ordering::Release) }
    }

    /// The SQ ring flags the kernel publishes.
    #[inline(always)]
    pub fn sq_flags(&self) -> u32 {
        // SAFETY: as for `sq_head`.
        unsafe { load(self.0.sq.kflags, Ordering::Relaxed) }
    }

    /// The CQ head (only the application writes it).
    #[inline(always)]
    pub fn cq_head(&self) -> u32 {
        // SAFETY: khead is a word of the live CQ ring mapping (invariant).
        unsafe { load(self.0.cq.khead, Ordering::Relaxed) }
    }

    /// The CQ tail, with acquire: the CQEs before it are visible.
    #[inline(always)]
    pub fn cq_tail(&self) -> u32 {
        // SAFETY: as for `cq_head`.
        unsafe { load(self.0.cq.ktail, Ordering::Acquire) }
    }

    /// Number of CQEs ready to be reaped (acquire on the kernel's tail, so
    /// their contents are visible).
    #[inline(always)]
    pub fn cq_ready(&self) -> u32 {
        self.cq_tail().wrapping_sub(self.cq_head())
    }

    /// The kernel's count of CQEs it could not post for lack of room
    /// (`koverflow`).
    #[inline(always)]
    pub fn cq_overflow(&self) -> u32 {
        // SAFETY: koverflow is a word of the live CQ ring mapping (invariant).
        unsafe { load(self.0.cq.koverflow, Ordering::Relaxed) }
    }

    /// Marks `nr` CQEs as consumed (release, so the kernel sees us done
    /// reading them before it reuses the slots).
    #[inline(always)]
    pub fn cq_advance(&self, nr: u32) {
        if nr != 0 {
            let head = self.cq_head();
            // SAFETY: as for `cq_head`; only the application writes it.
            unsafe { store(self.0.cq.khead, head.wrapping_add(nr), Ordering::Release) };
        }
    }

    /// The `flags` byte of the SQE at ring position `pos`, which the
    /// application filled and is submitting.
    #[inline(always)]
    pub fn sqe_flags(&self, pos: u32) -> u8 {
        // SAFETY: the position is masked into the live SQE array
        // (invariant); the kernel only reads SQEs.
        unsafe { (*self.sqe_at(pos)).flags }
    }

    /// The SQ words a transparent SQPOLL ring's enters watch.
    #[inline(always)]
    pub fn sq_words(&self) -> SqWords {
        SqWords {
            khead: self.0.sq.khead,
            ktail: self.0.sq.ktail,
            kflags: self.0.sq.kflags,
        }
    }

    /// Sets where the SQEs submitted so far end (`sq.sqe_head`).
    #[inline(always)]
    pub fn set_sqe_head(&mut self, head: u32) {
        self.0.sq.sqe_head = head;
    }

    /// Sets the next SQE to hand out (`sq.sqe_tail`).
    #[inline(always)]
    pub fn set_sqe_tail(&mut self, tail: u32) {
        self.0.sq.sqe_tail = tail;
    }

    /// Sets bits of [`io_uring::rs_flags`].
    #[inline(always)]
    pub fn set_rs_flags(&mut self, bits: u8) {
        self.0.rs_flags |= bits;
    }

    /// Clears bits of [`io_uring::rs_flags`].
    #[inline(always)]
    pub fn clear_rs_flags(&mut self, bits: u8) {
        self.0.rs_flags &= !bits;
    }

    /// Sets the statistics slot ([`io_uring::stats_slot`]).
    ///
    /// # Safety
    /// `ext` must be NULL or a slot of `crate::stats` that stays mapped for
    /// the life of the process.
    #[inline(always)]
    pub unsafe fn set_stats_slot(&mut self, ext: *mut StatsSlot) {
        self.0.set_stats_slot(ext);
    }

    /// Sets the key of the ring's automatic ring fd registration (see
    /// `crate::ring_fd`); changes no pointer.
    #[inline(always)]
    pub fn set_reg_key(&mut self, key: u64) {
        self.0.cq.reg_key = key;
    }
}

/// Copies of the SQ word pointers of a live ring, for the enters of a
/// transparent SQPOLL ring, which may find the ring by fd (see
/// `crate::transparent`) rather than through a [`LiveRing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqWords {
    khead: *const u32,
    ktail: *const u32,
    kflags: *const u32,
}

// SAFETY: the pointers are only dereferenced by the unsafe methods, whose
// callers vouch that the ring is still mapped; the words are atomics that
// any thread may read.
unsafe impl Send for SqWords {}

impl SqWords {
    /// The kernel's SQ head, with acquire.
    ///
    /// # Safety
    /// The ring these words come from must still be mapped.
    #[inline(always)]
    pub unsafe fn head(&self) -> u32 {
        // SAFETY: forwarded contract.
        unsafe { load(self.khead, Ordering::Acquire) }
    }

    /// The published SQ tail, with acquire.
    ///
    /// # Safety
    /// As for [`Self::head`].
    #[inline(always)]
    pub unsafe fn tail(&self) -> u32 {
        // SAFETY: forwarded contract.
        unsafe { load(self.ktail, Ordering::Acquire) }
    }

    /// The SQ ring flags.
    ///
    /// # Safety
    /// As for [`Self::head`].
    #[inline(always)]
    pub unsafe fn flags(&self) -> u32 {
        // SAFETY: forwarded contract.
        unsafe { load(self.kflags, Ordering::Relaxed) }
    }

    /// Whether these are the words of `ring` (compares addresses only).
    #[inline]
    pub fn of_ring(&self, ring: &io_uring) -> bool {
        self.khead == ring.sq.khead.cast_const()
    }

    /// The ring's identity while it lives: the address of its SQ head word.
    #[inline(always)]
    pub fn key(&self) -> usize {
        self.khead as usize
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
    fn only_a_ring_marked_live_and_nothing_else_takes_the_short_path() {
        let views = |ring: &mut io_uring| {
            // SAFETY: the functions read `rs_flags` only; the views they
            // may return are not used.
            unsafe {
                (
                    LiveRing::flagged_from_mut::<{ rs_flags::LIVE }, 0>(ring).is_some(),
                    LiveRing::marked_from_mut(ring).is_some(),
                    LiveRing::flagged_from_mut::<{ rs_flags::LIVE }, { rs_flags::AUTO_REG }>(ring)
                        .is_some(),
                )
            }
        };
        let mut ring = io_uring::zeroed();
        assert_eq!(views(&mut ring), (false, false, false), "zeroed");
        for bit in [1, 2, 4, 8, 16, rs_flags::FULL_SUBMIT] {
            ring.rs_flags = rs_flags::LIVE | bit;
            let reap = bit == rs_flags::AUTO_REG;
            assert_eq!(views(&mut ring), (false, true, reap), "bit {bit}");
            ring.rs_flags = bit;
            assert_eq!(views(&mut ring), (false, false, false), "bit {bit} alone");
            ring.rs_flags = rs_flags::LIVE | rs_flags::AUTO_REG | bit;
            let reap = bit == rs_flags::AUTO_REG;
            assert_eq!(
                views(&mut ring),
                (false, true, reap),
                "bit {bit} with AUTO_REG"
            );
        }
        for bit in [1, 2, 4, 8, 16] {
            assert!(rs_flags::EXT & bit != 0, "extension bit {bit} is in EXT");
        }
        assert_eq!(rs_flags::EXT & (rs_flags::LIVE | rs_flags::FULL_SUBMIT), 0);
        ring.rs_flags = rs_flags::LIVE;
        assert_eq!(views(&mut ring), (true, true, true));
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
