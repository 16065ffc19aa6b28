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
pub const VERSION: u32 = 3;
/// Rings a process can have statistics for at the same time.
pub const CAPACITY: usize = super::cursor::ENTRIES;

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
    /// (from [`FIRST_REFUSALS`] on): the first in the last bytes version 1
    /// left zero, the next in the header's second cache line (version 3).
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
pub const REFUSAL_COUNTERS: usize = 8;
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
    "shared-memory",
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
    /// 1 when other processes may use the ring too: it was inherited
    /// across fork(), or this process forked while it lived. The counts
    /// stay this process's own either way.
    pub shared: AtomicU32,
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
    /// The CQ head (extended to 64 bits) after this process's last counted
    /// movement: how far the live view may assume this process has looked.
    /// (The head counted by all processes is the ring's cursor: `cursor`.)
    pub cq_seen: AtomicU64,
    /// CQEs this process consumed.
    pub cqes: AtomicU64,
    pub reap_batches: AtomicU64,
    pub reap_max: AtomicU64,
    pub enters_wait: AtomicU64,
    /// The kernel's count of CQEs it could not post (the ring's overflow
    /// word), as this process last read it: the kernel's, not per process.
    pub cq_overflow: AtomicU64,
}

/// Buckets of the size histograms: upper bounds 1, 2, 4, ... 2^16, and
/// one for anything larger (SQ and CQ rings hold at most 2^15 and 2^16).
pub const SIZE_BUCKETS: usize = 18;
/// Buckets of the wait histogram: upper bounds of 1, 2, 4, ... 2^22
/// microseconds (about 4.2 s), and one for anything longer.
pub const WAIT_BUCKETS: usize = 24;

/// A histogram of sizes (SQEs per submitting call, CQEs per reap):
/// bucket `k` counts values in (2^(k-1), 2^k]; not cumulative.
#[repr(C, align(64))]
pub struct SizeHist {
    pub buckets: [AtomicU64; SIZE_BUCKETS],
    pub sum: AtomicU64,
}

/// The time calls spent in io_uring_enter waiting for completions: bucket
/// `k` counts waits in (2^(k-1), 2^k] microseconds; `sum` is nanoseconds.
#[repr(C, align(64))]
pub struct WaitHist {
    pub buckets: [AtomicU64; WAIT_BUCKETS],
    pub sum: AtomicU64,
}

impl Default for SizeHist {
    fn default() -> Self {
        SizeHist {
            buckets: [const { AtomicU64::new(0) }; SIZE_BUCKETS],
            sum: AtomicU64::new(0),
        }
    }
}

impl Default for WaitHist {
    fn default() -> Self {
        WaitHist {
            buckets: [const { AtomicU64::new(0) }; WAIT_BUCKETS],
            sum: AtomicU64::new(0),
        }
    }
}

/// The bucket of a size `n` >= 1: the smallest `k` with `n <= 2^k`.
#[inline(always)]
pub fn size_bucket(n: u64) -> usize {
    let k = 64 - n.saturating_sub(1).leading_zeros() as usize;
    k.min(SIZE_BUCKETS - 1)
}

/// The bucket of a wait of `ns` nanoseconds (microseconds, rounded up).
#[inline(always)]
pub fn wait_bucket(ns: u64) -> usize {
    let us = ns.div_ceil(1000).max(1);
    let k = 64 - (us - 1).leading_zeros() as usize;
    k.min(WAIT_BUCKETS - 1)
}

/// One ring's slot. `io_uring::stats_slot` points at it while statistics are on.
#[repr(C)]
#[derive(Default)]
pub struct RingExt {
    pub id: Identity,
    pub submit: SubmitSide,
    pub reap: ReapSide,
    /// SQEs per io_uring_enter that submitted (submitting thread only).
    pub submit_hist: SizeHist,
    /// CQEs per counted reap batch.
    pub reap_hist: SizeHist,
    /// Time in io_uring_enter calls that waited for completions.
    pub wait_hist: WaitHist,
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
    /// [`Identity::shared`].
    pub shared: u32,
}

/// A histogram as plain values (see [`SizeHist`], [`WaitHist`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hist<const N: usize> {
    pub buckets: [u64; N],
    pub sum: u64,
}

impl<const N: usize> Default for Hist<N> {
    fn default() -> Self {
        Hist {
            buckets: [0; N],
            sum: 0,
        }
    }
}

impl<const N: usize> Hist<N> {
    fn load(buckets: &[AtomicU64; N], sum: &AtomicU64) -> Self {
        Hist {
            buckets: core::array::from_fn(|i| buckets[i].load(Relaxed)),
            sum: sum.load(Relaxed),
        }
    }

    /// Observations (the sum of the buckets; None if that overflows,
    /// which counting never makes).
    pub fn count(&self) -> Option<u64> {
        self.buckets.iter().try_fold(0u64, |a, &b| a.checked_add(b))
    }
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
    /// [`ReapSide::cq_overflow`].
    pub cq_overflow: u64,
    /// SQEs per submitting io_uring_enter.
    pub submit_hist: Hist<SIZE_BUCKETS>,
    /// CQEs per reap batch.
    pub reap_hist: Hist<SIZE_BUCKETS>,
    /// Waits for completions in io_uring_enter (sum in nanoseconds).
    pub wait_hist: Hist<WAIT_BUCKETS>,
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
    /// The CQ head cursor this slot counts through (`super::cursor`).
    #[inline(always)]
    fn cursor(&self) -> &AtomicU64 {
        super::cursor::of(self, &self.reap.cq_seen)
    }

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
            shared: id.shared.load(Relaxed),
        }
    }

    pub fn counters(&self) -> Counters {
        let (s, r) = (&self.submit, &self.reap);
        Counters {
            sqes: s.sqes.load(Relaxed),
            cqes: r.cqes.load(Relaxed),
            enters_submit: s.enters_submit.load(Relaxed),
            enters_wait: r.enters_wait.load(Relaxed),
            enters_sqwait: s.enters_sqwait.load(Relaxed),
            wakeups: s.wakeups.load(Relaxed),
            reap_batches: r.reap_batches.load(Relaxed),
            reap_max: r.reap_max.load(Relaxed),
            chains_split: s.chains_split.load(Relaxed),
            cq_overflow: r.cq_overflow.load(Relaxed),
            submit_hist: Hist::load(&self.submit_hist.buckets, &self.submit_hist.sum),
            reap_hist: Hist::load(&self.reap_hist.buckets, &self.reap_hist.sum),
            wait_hist: Hist::load(&self.wait_hist.buckets, &self.wait_hist.sum),
        }
    }

    /// Folds the CQ head `head` (as the kernel shares it, 32 bits) into the
    /// counters: the movement since the ring's cursor (the head last
    /// counted, by any thread of any process: see `super::cursor`) is one
    /// reap batch of this process. The compare-exchange gives each movement
    /// to exactly one observer, and one holding an older head than the
    /// cursor counts nothing, so the counts of all threads and processes
    /// add up to the head's advance exactly.
    #[inline(always)]
    pub fn observe_head(&self, head: u32) {
        let cursor = self.cursor();
        let mut seen = cursor.load(Relaxed);
        loop {
            let moved = head.wrapping_sub(seen as u32);
            if moved == 0 || moved > i32::MAX as u32 {
                return;
            }
            let now = seen + moved as u64;
            match cursor.compare_exchange_weak(seen, now, Relaxed, Relaxed) {
                Ok(_) => {
                    // Where the cursor is the slot's own word (no cursor
                    // table), the exchange has published `now` already; a
                    // second, plain store could rewind it past a later
                    // observer's exchange and count that movement twice.
                    if !core::ptr::eq(cursor, &self.reap.cq_seen) {
                        self.reap.cq_seen.store(now, Relaxed);
                    }
                    return self.count_reaped(moved);
                }
                Err(v) => seen = v,
            }
        }
    }

    /// Counts `moved` CQEs consumed since the last look. One reap takes at
    /// most what the CQ holds, so a movement larger than the CQ (the
    /// application reaped several times in inline
    /// code between two library calls) counts as that many full batches
    /// and the rest: `reap_max` never exceeds `cq_entries`, and
    /// `reap_batches` is then a lower bound.
    #[inline(always)]
    fn count_reaped(&self, moved: u32) {
        let r = &self.reap;
        r.cqes.fetch_add(moved as u64, Relaxed);
        let cq = self.id.cq_entries.load(Relaxed).max(1);
        let (batches, largest) = if moved <= cq {
            (1, moved)
        } else {
            (moved.div_ceil(cq), cq)
        };
        r.reap_batches.fetch_add(batches as u64, Relaxed);
        if largest as u64 > r.reap_max.load(Relaxed) {
            r.reap_max.fetch_max(largest as u64, Relaxed);
        }
        let h = &self.reap_hist;
        h.sum.fetch_add(moved as u64, Relaxed);
        if moved <= cq {
            h.buckets[size_bucket(moved as u64)].fetch_add(1, Relaxed);
        } else {
            let (full, rest) = (moved / cq, moved % cq);
            h.buckets[size_bucket(cq as u64)].fetch_add(full as u64, Relaxed);
            if rest != 0 {
                h.buckets[size_bucket(rest as u64)].fetch_add(1, Relaxed);
            }
        }
    }

    /// Notes the kernel's overflow count of the ring (`koverflow`).
    #[inline(always)]
    pub fn note_overflow(&self, n: u32) {
        let r = &self.reap.cq_overflow;
        if r.load(Relaxed) != n as u64 {
            r.store(n as u64, Relaxed);
        }
    }

    /// Counts one io_uring_enter that submitted `n` SQEs (the submitting
    /// thread only).
    #[inline(always)]
    pub fn count_submitted(&self, n: u64) {
        bump(&self.submit.sqes, n);
        let h = &self.submit_hist;
        bump(&h.buckets[size_bucket(n)], 1);
        bump(&h.sum, n);
    }

    /// Counts a wait for completions of `ns` nanoseconds in io_uring_enter.
    #[inline(always)]
    pub fn count_wait(&self, ns: u64) {
        let h = &self.wait_hist;
        h.buckets[wait_bucket(ns)].fetch_add(1, Relaxed);
        h.sum.fetch_add(ns, Relaxed);
    }

    /// Starts counting from zero for a ring whose CQ head is `head` (a
    /// slot without a cursor of its own counts through `cq_seen`).
    pub fn reset(&self, head: u32) {
        self.reset_counters();
        self.reap.cq_seen.store(head as u64, Relaxed);
        self.cursor().store(head as u64, Relaxed);
    }

    /// Zeroes this process's counters (a forked child's inherited ring),
    /// keeping the ring's cursor: what was reaped before is counted
    /// already, by the process that reaped it.
    pub fn reset_counters(&self) {
        let (s, r) = (&self.submit, &self.reap);
        for c in [
            &s.sqes,
            &s.enters_submit,
            &s.enters_sqwait,
            &s.wakeups,
            &s.chains_split,
            &r.cqes,
            &r.reap_batches,
            &r.reap_max,
            &r.enters_wait,
            &r.cq_overflow,
            &self.submit_hist.sum,
            &self.reap_hist.sum,
            &self.wait_hist.sum,
        ] {
            c.store(0, Relaxed);
        }
        for c in self
            .submit_hist
            .buckets
            .iter()
            .chain(&self.reap_hist.buckets)
            .chain(&self.wait_hist.buckets)
        {
            c.store(0, Relaxed);
        }
        r.cq_seen.store(self.cursor().load(Relaxed), Relaxed);
    }

    /// The ring's CQ moved (resized rings) and its head is now `head`:
    /// the CQEs counted so far stay counted.
    pub fn rebase_head(&self, head: u32) {
        self.reap.cq_seen.store(head as u64, Relaxed);
        self.cursor().store(head as u64, Relaxed);
    }
}

const _: () = {
    // Version 2's layout: version 1's slot, then the histograms; version 3
    // gives the header a second cache line (the eighth refusal counter).
    assert!(core::mem::size_of::<Header>() == 128);
    assert!(core::mem::size_of::<Identity>() == 64);
    assert!(core::mem::size_of::<RingExt>() == 832);
    assert!(core::mem::offset_of!(Region, slots) == 128);
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
        s.id.cq_entries.store(16, Relaxed);
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
        // 40 CQEs between two looks on a 16-entry CQ: at least 3 reaps.
        s.observe_head(545);
        let c = s.counters();
        assert_eq!((c.cqes, c.reap_batches, c.reap_max), (59, 6, 16));
        assert_eq!(c.reap_hist.sum, 59);
        // 4 -> bucket 2, 10 -> 4, 5 -> 3, 16 16 -> 4, 8 -> 3.
        assert_eq!(&c.reap_hist.buckets[..6], &[0, 0, 1, 2, 3, 0]);
        assert_eq!(c.reap_hist.count(), Some(6));
    }

    #[test]
    fn buckets_are_powers_of_two() {
        let sizes = [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (65536, 16)];
        for (n, k) in sizes {
            assert_eq!(size_bucket(n), k, "{n}");
        }
        assert_eq!(size_bucket(65537), SIZE_BUCKETS - 1);
        assert_eq!(size_bucket(u64::MAX), SIZE_BUCKETS - 1);
        for (ns, k) in [(0, 0), (1, 0), (1000, 0), (1001, 1), (2000, 1), (3000, 2)] {
            assert_eq!(wait_bucket(ns), k, "{ns}");
        }
        assert_eq!(wait_bucket(4_194_304_000), 22);
        assert_eq!(wait_bucket(4_194_304_001), WAIT_BUCKETS - 1);
        assert_eq!(wait_bucket(u64::MAX), WAIT_BUCKETS - 1);
    }

    #[test]
    fn two_observers_add_up_exactly() {
        let s = std::sync::Arc::new(RingExt::default());
        s.id.cq_entries.store(1 << 20, Relaxed);
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
