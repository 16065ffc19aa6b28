//! Per-ring statistics.
//!
//! Layer 4 (see lib.rs). Functions taking a `LiveRing` (the counters are
//! reached through it): queue calls the counting ones, the lifecycle
//! `enable`, `release` and the hooks, passing the ring's poller group in
//! (the registry is a later layer). No ring methods here.
//!
//! **When.** Statistics are on for every ring the application sets up when
//! `RSURING_STATS` is set to a true boolean word (stderr) or to `json:PATH`
//! (JSON lines appended to PATH), and for one ring after
//! `rsuring_stats_enable`. Under `RSURING_STATS`, each ring's line is
//! written once: when the ring exits, or at process exit (`exit()` from any
//! thread, or returning from `main`) for rings the program never tore down;
//! `_exit()` and fatal signals print nothing. The format is in [`format`].
//!
//! **Where.** A ring's counters are a slot of the process's statistics page
//! ([`slot`], [`region`]), whose address is kept in two of liburing's
//! padding words (`io_uring::stats_slot`; NULL while off). The
//! hot path pays a byte test when statistics are off; when on, it counts
//! with atomic instructions into memory that `rsuring-stat` reads from
//! outside. Only setup, exit, fork and process exit take the registry lock.
//!
//! **Threads.** liburing lets one thread submit while another reaps the
//! same ring (and several threads take turns only under the application's
//! own lock). The counters follow that split, and all of them are exact:
//! - what only submission does (SQEs, submit-only enters, waits for SQ
//!   space, wake-ups, split chains) has one writer at a time: a plain atomic
//!   load and store, no locked instruction;
//! - what both sides do (enters that wait, which submit_and_wait makes too,
//!   and looking at the CQ head, which submit does to catch completions
//!   consumed inline) uses atomic read-modify-writes, so concurrent updates
//!   are never lost.
//!
//! CQEs are counted by watching the CQ head move between library calls (so
//! completions consumed by the inline helpers count too); a compare-exchange
//! on the ring's cursor, the last head counted (`cursor`), gives each
//! movement to exactly one observer and ignores an observer holding an
//! older head, so `cqes` only grows and equals the head's total advance
//! once any library call (or process exit) has looked. A "reap batch" is
//! one observed movement, so with two threads the batch counts depend on
//! timing; a movement larger than the CQ counts as several batches (one
//! reap takes at most `cq_entries`), so `reap_max <= cq_entries` always.
//!
//! **Processes.** Every count is the reporting process's own. A forked
//! child counts into a private copy of the page with every counter at
//! zero: the parent's lines hold what the parent did, the child's what the
//! child did. The child reports an inherited ring only if it used it.
//! Rings that several processes use (inherited ones, or a `struct
//! io_uring` and ring memory in shared memory, as prefork servers keep
//! them) share one cursor across the processes, so a process that reaps
//! completions another submitted counts them as reaped (and not as
//! submitted), the sums over the processes equal the kernel's CQ advance,
//! and no process takes another's reaps, or the parent's history, for a
//! batch of its own. Such rings' lines say `shared=yes`.

pub mod cursor;
pub mod format;
pub mod live;
pub mod metrics;
pub mod region;
pub mod slot;

use core::ffi::c_int;
use core::ptr;
use core::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Once, OnceLock};

use crate::procfs::{self, Process};
use crate::ring::{io_uring, rs_flags, LiveRing, StatsSlot};
use crate::uapi::{
    IORING_ENTER_GETEVENTS, IORING_ENTER_SQ_WAIT, IORING_ENTER_SQ_WAKEUP, IORING_SETUP_SQPOLL,
    IORING_SETUP_SQ_AFF,
};
use format::End;
use slot::{Counters, RingExt, RingInfo, Sqpoll};

/// `struct rsuring_stats` (C layout; see include/rsuring.h).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct rsuring_stats {
    /// SQEs submitted (SQ poll rings: published to the poll thread).
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
    /// io_uring_enter calls that waited for SQ space (SQ poll rings).
    pub enters_sqwait: u64,
    /// Link chains a shared SQ poll thread had to split.
    pub chains_split: u64,
}

impl From<Counters> for rsuring_stats {
    fn from(c: Counters) -> Self {
        rsuring_stats {
            sqes_submitted: c.sqes,
            cqes_reaped: c.cqes,
            enters_submit: c.enters_submit,
            enters_wait: c.enters_wait,
            enters_wakeup: c.wakeups,
            reap_batches: c.reap_batches,
            reap_max: c.reap_max,
            enters_sqwait: c.enters_sqwait,
            chains_split: c.chains_split,
        }
    }
}

/// What `RSURING_STATS` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Off,
    /// One line per ring on stderr.
    Stderr,
    /// One JSON object per ring appended to this file.
    Json(std::ffi::CString),
}

/// `RSURING_STATS=1|true|yes|on` (stderr) or `json:PATH`; anything else is
/// off (malformed values are reported). Read once per process.
pub fn mode() -> &'static Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    MODE.get_or_init(|| {
        crate::env::parsed(crate::env::STATS, |v| {
            if let Some(path) = v.strip_prefix("json:") {
                return std::ffi::CString::new(path)
                    .ok()
                    .filter(|p| !p.is_empty())
                    .map(Mode::Json)
                    .ok_or_else(|| "json: needs a file path".to_string());
            }
            match crate::env::parse_bool(v) {
                Some(true) => Ok(Mode::Stderr),
                Some(false) => Ok(Mode::Off),
                None => Err("expected 1/true/yes/on, 0/false/no/off, or json:PATH".into()),
            }
        })
        .unwrap_or(Mode::Off)
    })
}

/// Whether `RSURING_STATS` turns statistics on for every ring.
pub fn enabled_by_env() -> bool {
    *mode() != Mode::Off
}

/// Keeps errno as the application left it: this module's setup-time calls
/// into libc (files, mappings) may set it, and liburing's functions never do.
struct KeepErrno(c_int);

impl KeepErrno {
    fn new() -> Self {
        // SAFETY: errno is thread-local and always readable.
        KeepErrno(unsafe { *libc::__errno_location() })
    }
}

impl Drop for KeepErrno {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = self.0 };
    }
}

/// Why an io_uring_enter was made, for the counters.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EnterReason {
    Submit,
    Wait,
    SqWait,
    Wakeup,
}

impl EnterReason {
    /// Classifies an enter by its flags.
    #[inline(always)]
    pub fn of(flags: u32) -> Self {
        if flags & IORING_ENTER_SQ_WAKEUP != 0 {
            EnterReason::Wakeup
        } else if flags & IORING_ENTER_GETEVENTS != 0 {
            EnterReason::Wait
        } else if flags & IORING_ENTER_SQ_WAIT != 0 {
            EnterReason::SqWait
        } else {
            EnterReason::Submit
        }
    }
}

/// The shared poller a ring belongs to, as the caller found it in the
/// poller registry (`crate::sqpoll`, above this module, which therefore
/// passes it in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedPoller {
    /// The poller's CPU, or None when unbound.
    pub cpu: Option<u32>,
    /// Live rings sharing the poller, this one included.
    pub rings: u32,
}

impl SharedPoller {
    /// The CPU as the statistics page stores it (-1: unbound).
    fn cpu_word(&self) -> i32 {
        self.cpu.map_or(-1, |c| c as i32)
    }
}

/// The poll thread of a ring: (kind, CPU or -1, rings it serves).
fn poller_of(ring: &io_uring, shared: Option<SharedPoller>) -> (Sqpoll, i32, u32) {
    if ring.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0 {
        let g = shared.unwrap_or(SharedPoller {
            cpu: None,
            rings: 1,
        });
        return (Sqpoll::Transparent, g.cpu_word(), g.rings);
    }
    if ring.flags & IORING_SETUP_SQPOLL == 0 {
        return (Sqpoll::No, -1, 0);
    }
    if let Some(g) = shared {
        return (Sqpoll::Shared, g.cpu_word(), g.rings);
    }
    let cpu = if ring.flags & IORING_SETUP_SQ_AFF != 0 {
        procfs::fdinfo(Process::Current, ring.ring_fd)
            .and_then(|f| f.sq_thread_cpu)
            .unwrap_or(-1)
    } else {
        -1
    };
    (Sqpoll::Own, cpu, 1)
}

/// Writes one report for `slot` where `RSURING_STATS` says.
fn report(slot: &RingExt, end: End) {
    let fields = format::ring_fields(
        std::process::id(),
        &slot.info(),
        &slot.counters(),
        Some(end),
    );
    write_report("rsuring:", &fields);
}

/// Writes one line of `fields` where `RSURING_STATS` says (`prefix` on
/// stderr; JSON has none).
fn write_report(prefix: &str, fields: &format::Fields) {
    let (fd, line) = match mode() {
        Mode::Off => return,
        Mode::Stderr => (2, format::text(prefix, fields) + "\n"),
        Mode::Json(path) => {
            let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC;
            // SAFETY: a valid NUL-terminated path; the result is checked.
            let fd = unsafe { libc::open(path.as_ptr(), flags, 0o644) };
            if fd < 0 {
                return;
            }
            (fd, format::json(fields) + "\n")
        }
    };
    // One write per line: lines of concurrent processes never interleave.
    // SAFETY: a valid buffer; a failed diagnostic write is ignored.
    unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
    if fd != 2 {
        // SAFETY: the fd opened above.
        unsafe { libc::close(fd) };
    }
}

/// Whether a live ring's line belongs in this process's report.
fn worth_reporting(slot: &RingExt, local: &region::Local) -> bool {
    !local.reported && (!local.inherited || slot.counters().any())
}

/// atexit handler: reports the rings still alive.
extern "C" fn at_process_exit() {
    let _errno = KeepErrno::new();
    let Some(mut reg) = region::lock_within(std::time::Duration::from_secs(1)) else {
        return;
    };
    for (slot, local) in reg.live() {
        if let Some(head) = region::read_head_safely(local.khead) {
            slot.observe_head(head);
        }
        if enabled_by_env() && worth_reporting(slot, local) {
            report(slot, End::ProcessExit);
        }
        local.reported = true;
    }
    if enabled_by_env() && (crate::env::flag(crate::env::SQPOLL) || unverified_pollers() != 0) {
        let overflowed = reg
            .region()
            .map_or(0, |r| r.header.overflowed.load(Relaxed));
        let fields = format::process_fields(
            std::process::id(),
            &refusals(),
            overflowed,
            unverified_pollers(),
            true,
        );
        write_report("rsuring-process:", &fields);
    }
    reg.unpublish();
}

/// The statistics slot of `ring`, when statistics are on.
#[inline(always)]
fn slot_of(ring: &LiveRing) -> Option<&'static RingExt> {
    // SAFETY: the slot address is NULL or was set by `enable` to a slot of the
    // statistics region, which stays mapped for the life of the process
    // (LiveRing's invariant: nothing else writes it).
    unsafe { ring.stats_slot().cast::<RingExt>().as_ref() }
}

/// Turns statistics on for `ring` (idempotent); `shared` is its poller
/// group, if any. 0, or `-ENOMEM` when the process has no free slot
/// (reported once on stderr under `RSURING_STATS`).
pub fn enable(ring: &mut LiveRing, shared: Option<SharedPoller>) -> c_int {
    if !ring.stats_slot().is_null() {
        return 0;
    }
    let _errno = KeepErrno::new();
    let (sqpoll, poller_cpu, poller_rings) = poller_of(ring, shared);
    let info = RingInfo {
        ring_fd: ring.ring_fd,
        setup_flags: ring.flags,
        sq_entries: ring.sq.ring_entries,
        cq_entries: ring.cq.ring_entries,
        sqpoll: sqpoll as u32,
        poller_cpu,
        poller_rings,
        transparent: 0,
        shared: 0,
    };
    let mut reg = region::lock();
    let Some(slot) = reg.claim(&info, ring.cq.khead, ring.cq_head()) else {
        static WARNED: AtomicBool = AtomicBool::new(false);
        if enabled_by_env() && !WARNED.swap(true, Relaxed) {
            crate::env::warn(&format!(
                "statistics are limited to {} rings at a time; further rings have none",
                slot::CAPACITY
            ));
        }
        return -libc::ENOMEM;
    };
    // A transparent ring says so; other verdicts (refusals) are known only
    // at setup (`set_transparent`). A reused slot carries no old verdict.
    let on = (sqpoll == Sqpoll::Transparent) as u32;
    slot.id.transparent.store(on, Relaxed);
    sync_refusals(&reg);
    if matches!(sqpoll, Sqpoll::Shared | Sqpoll::Transparent) {
        reg.set_group_rings(poller_cpu, poller_rings);
    }
    drop(reg);
    report_at_process_exit();
    // SAFETY: a slot of the region, mapped for the life of the process.
    unsafe { ring.set_stats_slot(ptr::from_ref(slot).cast_mut().cast::<StatsSlot>()) };
    ring.set_rs_flags(rs_flags::STATS);
    0
}

/// Installs [`at_process_exit`] (once per process; a forked child inherits
/// it, as it inherits the rings).
fn report_at_process_exit() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a plain function valid for the whole process (the library
        // is never unloaded while a ring lives).
        unsafe { libc::atexit(at_process_exit) };
    });
}

/// Folds any CQ head movement since the last look into the counters.
#[inline(always)]
pub fn observe_cq(ring: &LiveRing) {
    if ring.rs_flags & rs_flags::STATS == 0 {
        return;
    }
    if let Some(slot) = slot_of(ring) {
        slot.observe_head(ring.cq_head());
        slot.note_overflow(ring.cq_overflow());
    }
}

/// The clock at the start of an io_uring_enter that may wait for
/// completions, on a ring with statistics: 0 (and no clock read) for
/// any other.
#[inline(always)]
pub fn wait_started(ring: &LiveRing, flags: u32) -> u64 {
    if ring.rs_flags & rs_flags::STATS == 0 || flags & IORING_ENTER_GETEVENTS == 0 {
        return 0;
    }
    now_ns()
}

/// CLOCK_MONOTONIC in nanoseconds (never 0: 0 means "not timed").
#[inline]
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec of ours; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
        .max(1)
}

/// Adds the wait that started at `started` ([`wait_started`]; 0: not
/// timed) to the ring's wait histogram.
#[inline(always)]
fn count_wait(slot: &RingExt, started: u64) {
    if started != 0 {
        slot.count_wait(now_ns().saturating_sub(started));
    }
}

/// Counts one io_uring_enter and the SQEs it consumed. (On SQPOLL rings
/// the kernel reports `to_submit` back, whoever consumes the SQEs, so
/// those count when they are published: [`count_published`].)
#[inline(always)]
pub fn count_enter(ring: &LiveRing, flags: u32, ret: i32, started: u64) {
    let Some(slot) = slot_of(ring) else { return };
    let s = &slot.submit;
    match EnterReason::of(flags) {
        EnterReason::Wait => {
            slot.reap.enters_wait.fetch_add(1, Relaxed);
            count_wait(slot, started);
        }
        EnterReason::Submit => slot::bump(&s.enters_submit, 1),
        EnterReason::SqWait => slot::bump(&s.enters_sqwait, 1),
        EnterReason::Wakeup => slot::bump(&s.wakeups, 1),
    }
    // Only an enter that submits returns a positive count: the
    // submitting thread's.
    if ret > 0 && ring.flags & IORING_SETUP_SQPOLL == 0 {
        slot.count_submitted(ret as u64);
    }
}

/// Counts one enter on a transparent SQPOLL ring by the system calls it
/// made (its submit hands SQEs to the poller without one): `wakeups`
/// io_uring_enter calls to wake the poller and, when `waited` is Some,
/// one that waited for completions (started then: [`wait_started`]).
/// `ret` > 0 is the SQEs it submitted.
#[inline(always)]
pub fn count_transparent(ring: &LiveRing, wakeups: u32, waited: Option<u64>, ret: i32) {
    let Some(slot) = slot_of(ring) else { return };
    let s = &slot.submit;
    if wakeups != 0 {
        slot::bump(&s.wakeups, wakeups as u64);
    }
    if let Some(started) = waited {
        slot.reap.enters_wait.fetch_add(1, Relaxed);
        count_wait(slot, started);
    }
    // Handed to the poller without a system call of their own: no
    // sample of the SQEs-per-submitting-call histogram.
    if ret > 0 {
        slot::bump(&s.sqes, ret as u64);
    }
}

/// Records what RSURING_SQPOLL=1 decided for `ring` (a word of
/// `Identity::transparent`: 1 on, 0x100 + reason refused).
pub fn set_transparent(ring: &LiveRing, verdict: u32) {
    if let Some(slot) = slot_of(ring) {
        slot.id.transparent.store(verdict, Relaxed);
    }
}

/// RSURING_SQPOLL=1 refusals of this process by reason (the order of
/// `slot::REFUSAL_NAMES`); mirrored into the statistics page's header.
static REFUSED: [core::sync::atomic::AtomicU32; slot::REFUSAL_COUNTERS] =
    [const { core::sync::atomic::AtomicU32::new(0) }; slot::REFUSAL_COUNTERS];

/// Counts a refusal of reason `index` for the exit report and the page.
pub fn count_refusal(index: usize) {
    let Some(counter) = REFUSED.get(index) else {
        return;
    };
    counter.fetch_add(1, Relaxed);
    let _errno = KeepErrno::new();
    if let Some(reg) = region::lock_within(std::time::Duration::from_millis(100)) {
        sync_refusals(&reg);
    }
}

/// Shared pollers that could not be verified (`crate::sqpoll`); mirrored
/// into the page's header like the refusals.
static UNVERIFIED_POLLERS: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// Counts a shared poller whose SQ thread the kernel does not show.
pub fn count_unverified_poller() {
    UNVERIFIED_POLLERS.fetch_add(1, Relaxed);
    let _errno = KeepErrno::new();
    if let Some(reg) = region::lock_within(std::time::Duration::from_millis(100)) {
        sync_refusals(&reg);
    }
}

/// How many shared pollers could not be verified so far.
pub fn unverified_pollers() -> u32 {
    UNVERIFIED_POLLERS.load(Relaxed)
}

/// The refusal counts so far.
pub fn refusals() -> [u32; slot::REFUSAL_COUNTERS] {
    core::array::from_fn(|i| REFUSED[i].load(Relaxed))
}

/// Copies the refusal counts into the page's header, when there is a page.
fn sync_refusals(reg: &region::Registry) {
    if let Some(region) = reg.region() {
        for (i, n) in refusals().into_iter().enumerate() {
            if let Some(word) = region.header.refusal(i) {
                word.store(n, Relaxed);
            }
        }
        region
            .header
            .unverified_pollers
            .store(unverified_pollers(), Relaxed);
    }
}

/// Counts SQEs newly published to an SQ poll thread.
#[inline(always)]
pub fn count_published(ring: &LiveRing, n: u32) {
    if ring.rs_flags & rs_flags::STATS == 0 || ring.flags & IORING_SETUP_SQPOLL == 0 {
        return;
    }
    if let Some(slot) = slot_of(ring) {
        slot::bump(&slot.submit.sqes, n as u64);
    }
}

/// Counts a link chain that a shared SQ poll thread had to split.
#[inline]
pub fn count_chain_split(ring: &LiveRing) {
    if let Some(slot) = slot_of(ring) {
        slot::bump(&slot.submit.chains_split, 1);
    }
}

/// A snapshot of the counters, or None when statistics are off.
pub fn snapshot(ring: &LiveRing) -> Option<rsuring_stats> {
    observe_cq(ring);
    slot_of(ring).map(|s| s.counters().into())
}

/// The ring's statistics line (the exit report's format, without `end`),
/// or None when statistics are off; `shared` is its poller group now.
pub fn line(ring: &LiveRing, shared: Option<SharedPoller>) -> Option<String> {
    observe_cq(ring);
    let slot = slot_of(ring)?;
    let mut info = slot.info();
    if let Some(g) = shared {
        info.poller_rings = g.rings;
    }
    let fields = format::ring_fields(std::process::id(), &info, &slot.counters(), None);
    Some(format::text("rsuring:", &fields))
}

/// io_uring_close_ring_fd: the ring has no fd any more (and the number may
/// soon name another file).
pub fn fd_closed(ring: &LiveRing) {
    if let Some(slot) = slot_of(ring) {
        slot.id.ring_fd.store(-1, Relaxed);
    }
}

/// io_uring_resize_rings: the CQ ring moved.
pub fn ring_moved(ring: &LiveRing) {
    let Some(slot) = slot_of(ring) else { return };
    let mut reg = region::lock();
    let idx = reg.index_of(slot);
    reg.local_mut(idx).khead = ring.cq.khead;
    slot.rebase_head(ring.cq_head());
}

/// Ring exit (before the ring leaves its poller group `shared`): reports
/// the counters under `RSURING_STATS` and gives the slot back.
pub fn release(ring: &mut LiveRing, shared: Option<SharedPoller>) {
    let Some(slot) = slot_of(ring) else { return };
    let _errno = KeepErrno::new();
    observe_cq(ring);
    if let Some(g) = shared {
        slot.id.poller_rings.store(g.rings, Relaxed);
    }
    let mut reg = region::lock();
    let idx = reg.index_of(slot);
    if enabled_by_env() && worth_reporting(slot, reg.local_mut(idx)) {
        report(slot, End::RingExit);
    }
    reg.release(slot);
    if let Some(g) = shared {
        reg.set_group_rings(g.cpu_word(), g.rings.saturating_sub(1));
    }
    drop(reg);
    // SAFETY: NULL: statistics off.
    unsafe { ring.set_stats_slot(ptr::null_mut()) };
    ring.clear_rs_flags(rs_flags::STATS);
}
