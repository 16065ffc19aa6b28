//! Per-ring statistics.
//!
//! Counters live in a side structure allocated at setup only when
//! statistics are on (RSURING_STATS=1, or `rsuring_stats_enable`). The ring
//! reaches it through the 8 bytes of `struct io_uring_cq`'s padding (see
//! `io_uring_cq::ext`), so the hot path pays one load and a predictable
//! branch when statistics are off, and plain (non-atomic) increments when
//! they are on: a ring is driven by one thread at a time, as in liburing.
//!
//! CQEs are counted by watching the CQ head move between library calls, so
//! completions consumed by inline header code (io_uring_cqe_seen,
//! io_uring_cq_advance) count too. A "reap batch" is one such movement.

use core::sync::atomic::Ordering;
use std::sync::OnceLock;

use crate::ring::{io_uring, load, rs_flags};

/// `struct rsuring_stats` (C layout; see include/rsuring.h).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct rsuring_stats {
    /// SQEs the kernel accepted.
    pub sqes_submitted: u64,
    /// CQEs the application consumed.
    pub cqes_reaped: u64,
    /// io_uring_enter calls made to submit only.
    pub enters_submit: u64,
    /// io_uring_enter calls that waited for or flushed completions.
    pub enters_wait: u64,
    /// io_uring_enter calls made to wake an idle SQ poll thread.
    pub enters_wakeup: u64,
    /// Times the CQ head was seen to move (reap batches).
    pub reap_batches: u64,
    /// Largest single reap batch.
    pub reap_max: u64,
}

/// Counters that `struct rsuring_stats` has no room for (its layout is
/// part of the C ABI).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ExtraStats {
    /// Link chains longer than a shared poller takes of a ring per round,
    /// published while the poller served other rings too.
    pub chains_split: u64,
}

/// Library state that liburing's `struct io_uring` has no field for.
#[derive(Debug, Default)]
pub struct RingExt {
    pub stats: rsuring_stats,
    pub extra: ExtraStats,
    /// CQ head at the last observation.
    last_head: u32,
}

/// Whether RSURING_STATS=1 was set (read once per process).
pub fn enabled_by_env() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| matches!(std::env::var("RSURING_STATS").as_deref(), Ok("1")))
}

/// Why an io_uring_enter was made, for the counters.
#[derive(Clone, Copy)]
pub enum EnterReason {
    Submit,
    Wait,
    Wakeup,
}

impl EnterReason {
    /// Classifies an enter by its flags.
    #[inline(always)]
    pub fn of(flags: u32) -> Self {
        if flags & crate::sys::IORING_ENTER_SQ_WAKEUP != 0 {
            EnterReason::Wakeup
        } else if flags & crate::sys::IORING_ENTER_GETEVENTS != 0 {
            EnterReason::Wait
        } else {
            EnterReason::Submit
        }
    }
}

impl io_uring {
    /// The statistics side structure, when statistics are on.
    #[inline(always)]
    fn ext_mut(&mut self) -> Option<&mut RingExt> {
        // SAFETY: `ext` is null or the Box we allocated in `enable_stats`,
        // owned by this ring until `release_ext`.
        unsafe { self.cq.ext.as_mut() }
    }

    /// Turns statistics on for this ring (idempotent).
    pub fn enable_stats(&mut self) {
        if self.cq.ext.is_null() {
            // SAFETY: khead points into the live CQ ring mapping.
            let head = unsafe { load(self.cq.khead, Ordering::Relaxed) };
            let ext = RingExt {
                last_head: head,
                ..Default::default()
            };
            self.cq.ext = Box::into_raw(Box::new(ext));
            self.rs_flags |= rs_flags::STATS;
        }
    }

    /// Folds any CQ head movement since the last look into the counters.
    #[inline(always)]
    pub fn stats_observe_cq(&mut self) {
        if self.rs_flags & rs_flags::STATS == 0 {
            return;
        }
        // SAFETY: khead points into the live CQ ring mapping.
        let head = unsafe { load(self.cq.khead, Ordering::Relaxed) };
        if let Some(ext) = self.ext_mut() {
            let moved = head.wrapping_sub(ext.last_head) as u64;
            if moved != 0 {
                ext.last_head = head;
                ext.stats.cqes_reaped += moved;
                ext.stats.reap_batches += 1;
                ext.stats.reap_max = ext.stats.reap_max.max(moved);
            }
        }
    }

    /// Counts one io_uring_enter and the SQEs it consumed. (On SQPOLL rings
    /// the kernel reports `to_submit` back, whoever consumes the SQEs, so
    /// those count when they are published: [`Self::stats_published`].)
    #[inline(always)]
    pub fn stats_enter(&mut self, flags: u32, ret: i32) {
        let sqpoll = self.flags & crate::sys::IORING_SETUP_SQPOLL != 0;
        if let Some(ext) = self.ext_mut() {
            match EnterReason::of(flags) {
                EnterReason::Submit => ext.stats.enters_submit += 1,
                EnterReason::Wait => ext.stats.enters_wait += 1,
                EnterReason::Wakeup => ext.stats.enters_wakeup += 1,
            }
            if ret > 0 && !sqpoll {
                ext.stats.sqes_submitted += ret as u64;
            }
        }
    }

    /// Counts SQEs newly published to an SQ poll thread.
    #[inline(always)]
    pub fn stats_published(&mut self, n: u32) {
        if self.rs_flags & rs_flags::STATS == 0 || self.flags & crate::sys::IORING_SETUP_SQPOLL == 0
        {
            return;
        }
        if let Some(ext) = self.ext_mut() {
            ext.stats.sqes_submitted += n as u64;
        }
    }

    /// Counts a link chain that a shared poller may split.
    pub fn stats_chain_split(&mut self) {
        if let Some(ext) = self.ext_mut() {
            ext.extra.chains_split += 1;
        }
    }

    /// A snapshot of the counters, or None when statistics are off.
    pub fn stats(&mut self) -> Option<rsuring_stats> {
        self.stats_observe_cq();
        self.ext_mut().map(|e| e.stats)
    }

    /// Prints the counters (RSURING_STATS=1) and frees the side structure.
    pub fn release_ext(&mut self) {
        if self.cq.ext.is_null() {
            return;
        }
        if enabled_by_env() {
            if let Some(s) = self.stats() {
                let mean = if s.reap_batches != 0 {
                    s.cqes_reaped as f64 / s.reap_batches as f64
                } else {
                    0.0
                };
                // Documented opt-in diagnostic (RSURING_STATS=1).
                eprintln!(
                    "rsuring: ring fd {}: sqes {} cqes {} enters {} (submit {} wait {} wakeup {}) reap batch mean {:.1} max {}",
                    self.ring_fd,
                    s.sqes_submitted,
                    s.cqes_reaped,
                    s.enters_submit + s.enters_wait + s.enters_wakeup,
                    s.enters_submit,
                    s.enters_wait,
                    s.enters_wakeup,
                    mean,
                    s.reap_max
                );
            }
        }
        // SAFETY: allocated by Box::into_raw in enable_stats, freed once.
        drop(unsafe { Box::from_raw(self.cq.ext) });
        self.cq.ext = core::ptr::null_mut();
        self.rs_flags &= !rs_flags::STATS;
    }
}
