//! Where each live transparent ring's submitted SQEs end: a lock-free
//! open-addressed table ([`MARKS`]) the submit path reads and writes.

use super::*;

/// Where the SQEs submitted on each live transparent ring end, for mixing
/// library submits with the exported io_uring_enter: an open-addressed
/// table keyed by the ring's SQ head address, read and written without a
/// lock on the submit path. Keys are claimed and given up only under
/// [`FD_TABLE`]'s lock (ring setup and exit), so the submit path only
/// finds its own ring's entry and stores into it.
pub(super) struct Mark {
    /// [`EMPTY`], [`GONE`] or the ring's key.
    pub(super) key: AtomicUsize,
    /// Where the SQEs submitted so far end.
    pub(super) to: AtomicU32,
    /// The step-aside rule's window of hand-overs ([`watch_handover`]):
    /// its start (coarse ns, 0: none yet), its hand-overs and their wait.
    pub(super) handovers: AtomicU32,
    pub(super) window_at: AtomicU64,
    pub(super) waited_ns: AtomicU64,
}

/// Entries of [`MARKS`] (a power of two); at most half are used, so a
/// lookup finds its key in a probe or two.
pub(super) const MARK_SLOTS: usize = 4096;
/// A slot never used: lookups stop here.
pub(super) const EMPTY: usize = 0;
/// A slot whose ring is gone: lookups go on past it, claims reuse it.
pub(super) const GONE: usize = 1;

pub(super) static MARKS: [Mark; MARK_SLOTS] = [const {
    Mark {
        key: AtomicUsize::new(EMPTY),
        to: AtomicU32::new(0),
        handovers: AtomicU32::new(0),
        window_at: AtomicU64::new(0),
        waited_ns: AtomicU64::new(0),
    }
}; MARK_SLOTS];

/// The first slot to probe for `key` (an aligned address: drop the low bits).
pub(super) fn mark_start(key: usize) -> usize {
    (key >> 6).wrapping_mul(0x9E37_79B9) % MARK_SLOTS
}

/// The mark of the live ring `key`, without a lock.
pub(super) fn find_mark(key: usize) -> Option<&'static Mark> {
    let start = mark_start(key);
    for i in 0..MARK_SLOTS {
        let m = &MARKS[(start + i) % MARK_SLOTS];
        match m.key.load(Ordering::Acquire) {
            k if k == key => return Some(m),
            EMPTY => return None,
            _ => {}
        }
    }
    None
}

/// Claims a mark for `key` (under FD_TABLE's lock). None when half the
/// table is used: that ring is then left without one (see [`track`]).
pub(super) fn claim_mark(key: usize, to: u32, used: usize) -> Option<&'static Mark> {
    if used >= MARK_SLOTS / 2 {
        return None;
    }
    let start = mark_start(key);
    for i in 0..MARK_SLOTS {
        let m = &MARKS[(start + i) % MARK_SLOTS];
        let k = m.key.load(Ordering::Relaxed);
        if k == EMPTY || k == GONE {
            m.to.store(to, Ordering::Relaxed);
            m.handovers.store(0, Ordering::Relaxed);
            m.window_at.store(0, Ordering::Relaxed);
            m.waited_ns.store(0, Ordering::Relaxed);
            m.key.store(key, Ordering::Release);
            return Some(m);
        }
    }
    None
}
