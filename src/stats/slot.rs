//! The statistics page of a process: a header and one slot per ring, laid
//! out identically for the library (which counts into it) and for
//! `rsuring-stat` (which maps the same file read-only).
//!
//! Every field is an atomic: the submitting and the reaping thread of a ring
//! count into the slot at the same time, and the live view reads it from
//! another process. Counters of the two sides live on separate cache lines.

use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};

/// First bytes of the file; a reader checks them with [`VERSION`].
pub const MAGIC: [u8; 8] = *b"RSURSTAT";
/// Layout version: bumped whenever [`Header`] or [`RingExt`] change.
pub const VERSION: u32 = 1;
/// Rings a process can have statistics for at the same time.
pub const CAPACITY: usize = 1024;

/// How a ring's submissions reach the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sqpoll {
    /// No SQ poll thread: io_uring_enter submits.
    No = 0,
    /// Its own SQ poll thread.
    Own = 1,
    /// A poll thread shared with the other rings of its group.
    Shared = 2,
    /// A shared poll thread that RSURING_SQPOLL=1 added to a ring the
    /// application set up plain.
    Transparent = 3,
}

impl Sqpoll {
    pub fn from_raw(v: u32) -> Self {
        match v {
            1 => Sqpoll::Own,
            2 => Sqpoll::Shared,
            3 => Sqpoll::Transparent,
            _ => Sqpoll::No,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Sqpoll::No => "no",
            Sqpoll::Own => "own",
            Sqpoll::Shared => "shared",
            Sqpoll::Transparent => "transparent",
        }
    }
}

/// The start of the page.
#[repr(C, align(64))]
pub struct Header {
    pub magic: [u8; 8],
    pub version: u32,
    /// `size_of::<RingExt>()`, so a reader can tell a layout it does not know.
    pub slot_size: u32,
    pub capacity: u32,
    /// One past the highest slot ever used: readers look no further.
    pub slots_used: AtomicU32,
    /// The process the counters belong to (a forked child rewrites it).
    pub pid: AtomicU32,
    /// Rings that found no free slot and have no statistics.
    pub overflowed: AtomicU32,
    /// RSURING_SQPOLL=1 refusals of this process by reason (in the order
    /// of `crate::transparent::CONDITIONS`; [`REFUSAL_NAMES`]). In bytes
    /// that version 1 left zero: a reader of an older page sees none.
    pub refused: [AtomicU32; FIRST_REFUSALS],
    /// Shared pollers whose SQ thread `/proc/self/fdinfo` does not show, so
    /// that no later ring could be verified to reach them (those rings got
    /// pollers of their own). Also in bytes version 1 left zero.
    pub unverified_pollers: AtomicU32,
    /// The refusal counters added after [`Header::unverified_pollers`]
    /// (from [`FIRST_REFUSALS`] on), in the last bytes version 1 left zero.
    pub refused_later: [AtomicU32; REFUSAL_COUNTERS - FIRST_REFUSALS],
}

impl Header {
    /// Refusal counter `i` ([`REFUSAL_NAMES`] order), wherever it lives.
    pub fn refusal(&self, i: usize) -> Option<&AtomicU32> {
        self.refused
            .get(i)
            .or_else(|| self.refused_later.get(i.checked_sub(FIRST_REFUSALS)?))
    }
}

/// Refusal counters of the page ([`Header::refusal`]).
pub const REFUSAL_COUNTERS: usize = 7;
/// The refusal counters that stand before `unverified_pollers`.
pub const FIRST_REFUSALS: usize = 6;

/// The names of [`Header::refused`]'s counters (the statistics keys are
/// `refused_` + the name with `_` for `-`). `crate::transparent`'s tests
/// check them against its list of conditions.
pub const REFUSAL_NAMES: [&str; REFUSAL_COUNTERS] = [
    "setup-flags",
    "privileged",
    "no-poller-cpu",
    "cpu-refused",
    "fork",
    "kernel",
    "poller-busy",
];

/// What a ring is; written when the ring takes the slot.
#[repr(C, align(64))]
#[derive(Default)]
pub struct Identity {
    /// Odd while a ring owns the slot; bumped when one takes or leaves it,
    /// so a reader sees a different value for a different ring.
    pub generation: AtomicU32,
    pub ring_fd: AtomicI32,
    pub setup_flags: AtomicU32,
    pub sq_entries: AtomicU32,
    pub cq_entries: AtomicU32,
    /// [`Sqpoll`].
    pub sqpoll: AtomicU32,
    /// The poll thread's CPU, -1 when unbound or without one.
    pub poller_cpu: AtomicI32,
    /// Rings sharing the poll thread, this one included (0 without one).
    pub poller_rings: AtomicU32,
    /// Under RSURING_SQPOLL=1: 0 (no verdict), 1 (transparent SQPOLL on),
    /// or 0x100 + the index of the reason it was refused
    /// ([`REFUSAL_NAMES`]). In bytes that version 1 left zero.
    pub transparent: AtomicU32,
}

/// Adds to a counter that only one thread at a time writes (the submitting
/// one): a plain atomic load and store, without a locked instruction.
#[inline(always)]
pub fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(n), Relaxed);
}

/// Counters of the submission side (one writer at a time: see [`bump`]).
#[repr(C, align(64))]
#[derive(Default)]
pub struct SubmitSide {
    pub sqes: AtomicU64,
    pub enters_submit: AtomicU64,
    pub enters_sqwait: AtomicU64,
    pub wakeups: AtomicU64,
    pub chains_split: AtomicU64,
}

/// Counters of the completion side (any thread: read-modify-writes).
#[repr(C, align(64))]
#[derive(Default)]
pub struct ReapSide {
    /// The CQ head as last observed, extended to 64 bits (it only grows).
    pub cq_seen: AtomicU64,
    /// `cq_seen` when counting started: CQEs reaped = `cq_seen - cq_base`.
    pub cq_base: AtomicU64,
    pub reap_batches: AtomicU64,
    pub reap_max: AtomicU64,
    pub enters_wait: AtomicU64,
}

/// One ring's slot. `io_uring::stats_slot` points at it while statistics are on.
#[repr(C)]
#[derive(Default)]
pub struct RingExt {
    pub id: Identity,
    pub submit: SubmitSide,
    pub reap: ReapSide,
}

/// The whole page.
#[repr(C)]
pub struct Region {
    pub header: Header,
    pub slots: [RingExt; CAPACITY],
}

/// Bytes of the mapping (whole pages).
pub const REGION_LEN: usize = (core::mem::size_of::<Region>() + 4095) & !4095;

/// A ring's description, as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RingInfo {
    pub ring_fd: i32,
    pub setup_flags: u32,
    pub sq_entries: u32,
    pub cq_entries: u32,
    pub sqpoll: u32,
    pub poller_cpu: i32,
    pub poller_rings: u32,
    /// [`Identity::transparent`].
    pub transparent: u32,
}

/// A ring's counters, as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    pub sqes: u64,
    pub cqes: u64,
    pub enters_submit: u64,
    pub enters_wait: u64,
    pub enters_sqwait: u64,
    pub wakeups: u64,
    pub reap_batches: u64,
    pub reap_max: u64,
    pub chains_split: u64,
}

impl Counters {
    /// All io_uring_enter calls.
    pub fn enters(&self) -> u64 {
        self.enters_submit + self.enters_wait + self.enters_sqwait + self.wakeups
    }

    /// Whether anything was counted at all.
    pub fn any(&self) -> bool {
        self.sqes != 0 || self.cqes != 0 || self.enters() != 0 || self.chains_split != 0
    }
}

impl RingExt {
    pub fn info(&self) -> RingInfo {
        let id = &self.id;
        RingInfo {
            ring_fd: id.ring_fd.load(Relaxed),
            setup_flags: id.setup_flags.load(Relaxed),
            sq_entries: id.sq_entries.load(Relaxed),
            cq_entries: id.cq_entries.load(Relaxed),
            sqpoll: id.sqpoll.load(Relaxed),
            poller_cpu: id.poller_cpu.load(Relaxed),
            poller_rings: id.poller_rings.load(Relaxed),
            transparent: id.transparent.load(Relaxed),
        }
    }

    pub fn counters(&self) -> Counters {
        let (s, r) = (&self.submit, &self.reap);
        Counters {
            sqes: s.sqes.load(Relaxed),
            cqes: r
                .cq_seen
                .load(Relaxed)
                .wrapping_sub(r.cq_base.load(Relaxed)),
            enters_submit: s.enters_submit.load(Relaxed),
            enters_wait: r.enters_wait.load(Relaxed),
            enters_sqwait: s.enters_sqwait.load(Relaxed),
            wakeups: s.wakeups.load(Relaxed),
            reap_batches: r.reap_batches.load(Relaxed),
            reap_max: r.reap_max.load(Relaxed),
            chains_split: s.chains_split.load(Relaxed),
        }
    }

    /// Folds the CQ head `head` (as the kernel shares it, 32 bits) into the
    /// counters: the movement since the last observation is one reap batch.
    /// Several threads may observe at once (one submits, another reaps):
    /// the compare-exchange gives each movement to exactly one of them, and
    /// a thread holding an older head than the last observation counts
    /// nothing, so the counters only grow and add up exactly.
    #[inline(always)]
    pub fn observe_head(&self, head: u32) {
        let r = &self.reap;
        let mut seen = r.cq_seen.load(Relaxed);
        loop {
            let moved = head.wrapping_sub(seen as u32);
            if moved == 0 || moved > i32::MAX as u32 {
                return;
            }
            match r
                .cq_seen
                .compare_exchange_weak(seen, seen + moved as u64, Relaxed, Relaxed)
            {
                Ok(_) => {
                    r.reap_batches.fetch_add(1, Relaxed);
                    if moved as u64 > r.reap_max.load(Relaxed) {
                        r.reap_max.fetch_max(moved as u64, Relaxed);
                    }
                    return;
                }
                Err(now) => seen = now,
            }
        }
    }

    /// Starts counting from zero for a ring whose CQ head is `head`.
    pub fn reset(&self, head: u32) {
        self.reset_counters();
        self.reap.cq_seen.store(head as u64, Relaxed);
        self.reap.cq_base.store(head as u64, Relaxed);
    }

    /// Zeroes the counters, keeping the CQ head observation.
    pub fn reset_counters(&self) {
        let (s, r) = (&self.submit, &self.reap);
        for c in [
            &s.sqes,
            &s.enters_submit,
            &s.enters_sqwait,
            &s.wakeups,
            &s.chains_split,
            &r.reap_batches,
            &r.reap_max,
            &r.enters_wait,
        ] {
            c.store(0, Relaxed);
        }
        r.cq_base.store(r.cq_seen.load(Relaxed), Relaxed);
    }

    /// The ring's CQ moved (resized rings) and its head is now `head`:
    /// the CQEs counted so far stay counted.
    pub fn rebase_head(&self, head: u32) {
        let r = &self.reap;
        let counted = r
            .cq_seen
            .load(Relaxed)
            .wrapping_sub(r.cq_base.load(Relaxed));
        r.cq_seen.store(head as u64, Relaxed);
        r.cq_base
            .store((head as u64).wrapping_sub(counted), Relaxed);
    }
}

const _: () = {
    // Version 1's layout: the new fields live in its padding.
    assert!(core::mem::size_of::<Header>() == 64);
    assert!(core::mem::size_of::<Identity>() == 64);
    assert!(core::mem::size_of::<RingExt>() == 192);
    assert!(core::mem::offset_of!(Region, slots) == 64);
    // The counters that version 1 readers know stay where they were.
    assert!(core::mem::offset_of!(Header, refused) == 32);
    assert!(core::mem::offset_of!(Header, unverified_pollers) == 56);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_observations_count_each_movement_once() {
        let s = RingExt::default();
        s.reset(u32::MAX - 2);
        s.observe_head(u32::MAX - 2);
        s.observe_head(1); // wrapped: 4 CQEs
        s.observe_head(0); // older than what was seen: nothing
        s.observe_head(11);
        let c = s.counters();
        assert_eq!((c.cqes, c.reap_batches, c.reap_max), (14, 2, 10));
        s.rebase_head(500);
        s.observe_head(505);
        assert_eq!(s.counters().cqes, 19);
    }

    #[test]
    fn two_observers_add_up_exactly() {
        let s = std::sync::Arc::new(RingExt::default());
        s.reset(0);
        let head = std::sync::Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let (s, head) = (s.clone(), head.clone());
                std::thread::spawn(move || {
                    for _ in 0..100_000 {
                        if t == 0 {
                            head.fetch_add(1, Relaxed);
                        }
                        s.observe_head(head.load(Relaxed));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        s.observe_head(head.load(Relaxed));
        let c = s.counters();
        assert_eq!(c.cqes, 100_000);
        assert!(c.reap_batches <= 100_000 && c.reap_max <= 100_000, "{c:?}");
    }
}
