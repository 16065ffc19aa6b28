//! Transparent SQPOLL (`RSURING_SQPOLL=1`): a ring the application created
//! without SQPOLL gets a shared kernel SQ poll thread, and the program must
//! not be able to tell, except by speed.
//!
//! Layer 4 (see lib.rs). Which rings get it is decided in
//! `crate::lifecycle` with [`eligible`]; the enters here watch the ring's SQ
//! words through an [`SqView`] taken of a `LiveRing`.
//!
//! The kernel's SQ thread runs requests with its creator's credentials and
//! in its creator's address space and file table, consumes SQEs on its own
//! schedule, and makes `io_uring_enter` report `to_submit` whatever
//! happened. This module is the contract that hides that:
//!
//! - **Who gets it** ([`eligible`]): never a process that can change its
//!   credentials (root, any capability, AT_SECURE, differing real /
//!   effective / saved ids) — after a privilege drop its requests would
//!   still run with the old credentials; only where the poller can have a
//!   CPU the process does not run on (RSURING_SQPOLL_CPUS minus the
//!   process's affinity) — submission waits for the poller, and a poller
//!   busy-polling the submitter's own CPU would make every submit wait for
//!   a scheduler time slice; never setups
//!   whose semantics a poller changes or that the kernel refuses with one
//!   (IOPOLL, SINGLE_ISSUER, DEFER_TASKRUN, COOP_TASKRUN, TASKRUN_FLAG,
//!   R_DISABLED, ATTACH_WQ, SQ_REWIND). Each refusal leaves the ring plain, is counted,
//!   and is noted once per reason on stderr.
//! - **How an enter behaves** ([`enter`], and [`enter_by_fd`] for the
//!   exported `io_uring_enter`): as on a plain ring. The SQEs the call
//!   submits are handed to the poller (woken at most once) and the call
//!   returns only when the kernel has consumed them, so the SQ is free
//!   again and inline completions are posted; the count is the plain
//!   ring's (`min(to_submit, queued)`), and a partial submission skips the
//!   wait, as the kernel does.
//! - **fork**: the poller belongs to the process that created the ring. A
//!   forked child that submits on an inherited transparent ring gets
//!   `-EOWNERDEAD` (its SQEs are never published, so they can run neither
//!   in the parent's memory nor with the parent's files), noted once.
//!
//! Known limits, documented: a submission the kernel rejects mid-batch
//! stops a plain ring's submit early; the poller goes on with the rest, so
//! the count covers them all. A raw `syscall(__NR_io_uring_enter)` cannot be
//! intercepted, and neither can an exported `io_uring_enter` through a
//! registered ring index; both get the kernel's SQPOLL behaviour.

use core::ffi::{c_int, c_void};
use core::ptr;
use core::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::lock::ForkSafeLock;

use crate::ring::{fork_generation, io_uring, LiveRing, SqWords};
use crate::sys::{
    self, IORING_ENTER_GETEVENTS, IORING_ENTER_REGISTERED_RING, IORING_ENTER_SQ_WAIT,
    IORING_ENTER_SQ_WAKEUP, IORING_SETUP_ATTACH_WQ, IORING_SETUP_COOP_TASKRUN,
    IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_IOPOLL, IORING_SETUP_R_DISABLED,
    IORING_SETUP_SINGLE_ISSUER, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF, IORING_SETUP_SQ_REWIND,
    IORING_SETUP_TASKRUN_FLAG, IORING_SQ_NEED_WAKEUP, NSIG_BYTES,
};

/// Why a ring did not get (or a call was refused) transparent SQPOLL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Setup flags whose meaning an SQ thread changes.
    SetupFlags,
    /// The process can change its credentials.
    Privileged,
    /// No CPU of RSURING_SQPOLL_CPUS lies outside the CPUs the process may
    /// run on (or the variable is unset), so a poller could compete with it.
    NoPollerCpu,
    /// A forked child submitted on its parent's transparent ring.
    Fork,
    /// The kernel refused SQPOLL with this setup.
    Kernel,
}

const REFUSALS: usize = 5;

impl Refusal {
    fn index(self) -> usize {
        self as usize
    }

    /// The one-line note printed once per reason.
    fn note(self) -> &'static str {
        match self {
            Refusal::SetupFlags => {
                "ring left plain: IOPOLL, SINGLE_ISSUER, DEFER_TASKRUN, COOP_TASKRUN, R_DISABLED and ATTACH_WQ setups keep their own semantics"
            }
            Refusal::Privileged => {
                "rings left plain: this process can change its credentials (root, capabilities or set-id), and an SQ poll thread would keep the old ones"
            }
            Refusal::NoPollerCpu => {
                "rings left plain: a poller needs a CPU of its own; set RSURING_SQPOLL_CPUS to CPUs this process does not run on (e.g. taskset -c 0 with RSURING_SQPOLL_CPUS=1)"
            }
            Refusal::Fork => {
                "submission refused with -EOWNERDEAD: the ring's SQ poll thread belongs to the parent process"
            }
            Refusal::Kernel => "ring left plain: the kernel refused SQPOLL for this setup",
        }
    }

    /// Short name (for the tests' messages).
    #[cfg(test)]
    fn name(self) -> &'static str {
        match self {
            Refusal::SetupFlags => "setup-flags",
            Refusal::Privileged => "privileged",
            Refusal::NoPollerCpu => "no-poller-cpu",
            Refusal::Fork => "fork",
            Refusal::Kernel => "kernel",
        }
    }

    /// Every reason, in counter order.
    #[cfg(test)]
    const ALL: [Refusal; REFUSALS] = [
        Refusal::SetupFlags,
        Refusal::Privileged,
        Refusal::NoPollerCpu,
        Refusal::Fork,
        Refusal::Kernel,
    ];
}

static NOTED: [AtomicBool; REFUSALS] = [const { AtomicBool::new(false) }; REFUSALS];
static REFUSED: [AtomicU64; REFUSALS] = [const { AtomicU64::new(0) }; REFUSALS];

/// Counts a refusal and prints its note the first time (a documented
/// opt-in diagnostic: only processes that set RSURING_SQPOLL=1 see it).
#[cold]
pub fn refuse(why: Refusal) {
    REFUSED[why.index()].fetch_add(1, Ordering::Relaxed);
    if !NOTED[why.index()].swap(true, Ordering::Relaxed) {
        eprintln!("rsuring: RSURING_SQPOLL=1: {}", why.note());
    }
}

/// How often each reason refused transparent SQPOLL in this process.
#[cfg(test)]
fn refusal_counts() -> [(Refusal, u64); REFUSALS] {
    Refusal::ALL.map(|r| (r, REFUSED[r.index()].load(Ordering::Relaxed)))
}

/// Whether the process could change its credentials: then an SQ thread,
/// which keeps its creator's, could run requests with the wrong ones.
fn can_change_credentials() -> bool {
    // SAFETY: getauxval has no preconditions and does not fail for AT_SECURE.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return true;
    }
    let (uid, gid) = sys::resuid_resgid();
    let set_id = uid.iter().any(|&u| u != uid[0]) || gid.iter().any(|&g| g != gid[0]);
    set_id || uid.contains(&0) || sys::holds_capabilities()
}

/// Whether `cpu` is in a sched_getaffinity mask.
fn in_mask(mask: &[u64; 16], cpu: u32) -> bool {
    let word = cpu as usize / 64;
    word < mask.len() && mask[word] >> (cpu % 64) & 1 != 0
}

/// Whether a ring with setup `flags` (the application's, before any
/// policy) may get transparent SQPOLL in this process: Ok with the CPUs its
/// poller may be placed on — those of `poller_cpus` (RSURING_SQPOLL_CPUS)
/// that the process cannot run on, so that submitting, which waits for the
/// poller, never competes with it for a CPU — or the reason it may not,
/// counted and noted. Rings that asked for SQPOLL themselves, or for SQ_AFF
/// without it (which the kernel must keep refusing), are not candidates:
/// `Err(SetupFlags)` without a note.
pub fn eligible(flags: u32, poller_cpus: Option<&[u32]>) -> Result<Vec<u32>, Refusal> {
    if flags & (IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF) != 0 {
        return Err(Refusal::SetupFlags);
    }
    // COOP_TASKRUN and TASKRUN_FLAG: the kernel refuses them with SQPOLL;
    // SQ_REWIND restarts the SQ at index 0 on every submit, which only the
    // submitting task can do.
    // IOPOLL: a poller reaps polled completions itself, so completions of
    // the submitted requests are not posted by the time submit returns.
    let semantic = IORING_SETUP_SQ_REWIND
        | IORING_SETUP_IOPOLL
        | IORING_SETUP_ATTACH_WQ
        | IORING_SETUP_COOP_TASKRUN
        | IORING_SETUP_TASKRUN_FLAG
        | IORING_SETUP_DEFER_TASKRUN
        | IORING_SETUP_SINGLE_ISSUER
        | IORING_SETUP_R_DISABLED;
    let verdict = if flags & semantic != 0 {
        Err(Refusal::SetupFlags)
    } else if can_change_credentials() {
        Err(Refusal::Privileged)
    } else {
        let mine = sys::cpu_affinity();
        let spare: Vec<u32> = poller_cpus
            .unwrap_or(&[])
            .iter()
            .copied()
            .filter(|&cpu| mine.as_ref().is_some_and(|m| !in_mask(m, cpu)))
            .collect();
        if spare.is_empty() {
            Err(Refusal::NoPollerCpu)
        } else {
            Ok(spare)
        }
    };
    if let Err(why) = verdict {
        refuse(why);
    }
    verdict
}

/// What an enter on a transparent ring needs of it: the SQ ring words and
/// the process generation that created it.
///
/// A view is taken of a [`LiveRing`] and kept in the fd table until the
/// ring's exit or fd close removes it ([`untrack`], which `crate::lifecycle`
/// calls before the mapping goes): while a view exists, its ring is mapped.
#[derive(Debug, Clone, Copy)]
pub struct SqView {
    words: SqWords,
    fork_gen: u16,
}

impl SqView {
    /// The view of a live transparent ring.
    pub fn of(ring: &LiveRing) -> Self {
        SqView {
            words: ring.sq_words(),
            fork_gen: ring.fork_gen,
        }
    }

    fn head(&self) -> u32 {
        // SAFETY: the ring is mapped while its view exists (type invariant).
        unsafe { self.words.head() }
    }

    fn tail(&self) -> u32 {
        // SAFETY: as for `head`.
        unsafe { self.words.tail() }
    }

    fn needs_wakeup(&self) -> bool {
        // SAFETY: as for `head`.
        let flags = unsafe { self.words.flags() };
        flags & IORING_SQ_NEED_WAKEUP != 0
    }

    /// Whether the calling process is not the one that created the ring.
    #[inline]
    pub fn in_other_process(&self) -> bool {
        self.fork_gen != fork_generation()
    }
}

/// Where an enter goes: the fd or registered index, and the flags the ring
/// adds to every enter.
pub type EnterTarget = (u32, u32);

/// Spins before yielding the CPU while the poller picks SQEs up.
const SPINS_BEFORE_YIELD: u32 = 256;
/// Yields between re-checks of a poller that may have gone back to sleep.
const YIELDS_BEFORE_REWAKE: u32 = 4096;

/// Hands the `n` SQEs after SQ position `head` to the poller and waits
/// until it has consumed them. Wakes it at most once, unless it is found asleep again
/// after a long wait. Returns 0, or the `-errno` of a failed wake-up.
fn hand_over(view: &SqView, target: EnterTarget, head: u32, n: u32) -> c_int {
    // The tail store must be visible to the poller before we look at
    // whether it sleeps, or both sides could miss the other.
    fence(Ordering::SeqCst);
    let mut woke = false;
    let mut waited = 0u32;
    loop {
        if view.head().wrapping_sub(head) >= n {
            return 0;
        }
        if !woke && view.needs_wakeup() {
            woke = true;
            // SAFETY: no argument is passed.
            let ret = unsafe {
                sys::io_uring_enter2(
                    target.0,
                    0,
                    0,
                    IORING_ENTER_SQ_WAKEUP | target.1,
                    ptr::null(),
                    NSIG_BYTES,
                )
            };
            if ret < 0 {
                return ret;
            }
            continue;
        }
        waited += 1;
        if waited < SPINS_BEFORE_YIELD {
            core::hint::spin_loop();
        } else {
            sys::sched_yield();
            if waited % YIELDS_BEFORE_REWAKE == 0 {
                woke = false;
            }
        }
    }
}

/// io_uring_enter on a transparent ring, with a plain ring's result.
///
/// `from` is where the SQEs that earlier calls submitted end: the ones
/// after it, up to the published tail, are this call's to submit (the
/// poller may have taken some already; a plain ring's kernel would take
/// them now, so they count now).
///
/// # Safety
/// `arg`/`sz` must be valid for `flags`, as for io_uring_enter(2).
#[allow(clippy::too_many_arguments)]
pub unsafe fn enter(
    view: &SqView,
    target: EnterTarget,
    from: u32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const c_void,
    sz: usize,
) -> c_int {
    if view.in_other_process() {
        refuse(Refusal::Fork);
        return -libc::EOWNERDEAD;
    }
    let queued = view.tail().wrapping_sub(from);
    let submitted = to_submit.min(queued);
    if submitted != 0 {
        let ret = hand_over(view, target, from, submitted);
        if ret < 0 {
            return ret;
        }
        record_submitted(view.words, from.wrapping_add(submitted));
    }
    // A plain ring does not wait after a short submission.
    if flags & IORING_ENTER_GETEVENTS == 0 || submitted != to_submit {
        return submitted as c_int;
    }
    let flags = (flags & !(IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT)) | target.1;
    // SAFETY: forwarded contract.
    let ret = unsafe { sys::io_uring_enter2(target.0, 0, min_complete, flags, arg, sz) };
    if submitted != 0 {
        submitted as c_int
    } else {
        ret
    }
}

/// Live transparent rings by fd, for the exported io_uring_enter. An entry
/// is known by its mapping (`view.words`), unique while the ring lives.
struct FdEntry {
    fd: c_int,
    view: SqView,
    /// Where the SQEs submitted through the exported io_uring_enter end.
    submitted_to: u32,
}

/// The table survives fork: a child must still recognise its parent's
/// transparent rings in order to refuse them.
static FD_TABLE: ForkSafeLock<Vec<FdEntry>> = ForkSafeLock::new(Vec::new());
/// Entries in [`FD_TABLE`] (read without the lock).
static FD_TABLE_LEN: AtomicUsize = AtomicUsize::new(0);

extern "C" fn table_before_fork() {
    FD_TABLE.lock_for_fork();
}

extern "C" fn table_after_fork() {
    // SAFETY: table_before_fork took the lock in this thread.
    unsafe { FD_TABLE.unlock_after_fork(None) };
}

/// Records a new transparent ring for [`enter_by_fd`].
pub fn track(ring: &LiveRing) {
    static ATFORK: std::sync::Once = std::sync::Once::new();
    ATFORK.call_once(|| {
        // SAFETY: the handlers are plain functions valid for the whole process.
        unsafe {
            libc::pthread_atfork(
                Some(table_before_fork),
                Some(table_after_fork),
                Some(table_after_fork),
            )
        };
    });
    if ring.ring_fd < 0 {
        return;
    }
    let mut table = FD_TABLE.lock();
    table.push(FdEntry {
        fd: ring.ring_fd,
        view: SqView::of(ring),
        submitted_to: ring.sq.sqe_head,
    });
    FD_TABLE_LEN.store(table.len(), Ordering::Release);
}

/// Records where the SQEs submitted on the ring with SQ words `words` now
/// end, so that an exported io_uring_enter after a library submit (or the
/// other way round) counts each SQE once.
fn record_submitted(words: SqWords, to: u32) {
    if FD_TABLE_LEN.load(Ordering::Acquire) == 0 {
        return;
    }
    let mut table = FD_TABLE.lock();
    if let Some(e) = table.iter_mut().find(|e| e.view.words == words) {
        e.submitted_to = to;
    }
}

/// Forgets a transparent ring (at exit, before its memory is unmapped, or
/// when its fd is closed).
pub fn untrack(ring: &io_uring) {
    if FD_TABLE_LEN.load(Ordering::Acquire) == 0 {
        return;
    }
    let mut table = FD_TABLE.lock();
    table.retain(|e| !e.view.words.of_ring(ring));
    FD_TABLE_LEN.store(table.len(), Ordering::Release);
}

/// The exported io_uring_enter: a transparent ring's fd gets plain-ring
/// behaviour; everything else goes to the kernel unchanged.
///
/// The fd number alone could have been closed and reused by the
/// application, so the emulation only applies when the recorded ring has
/// SQEs published since the last call; otherwise the kernel sees the call
/// as made (for a transparent ring with nothing queued that is the same).
/// Each enter on a transparent ring (this one or the library's) records
/// where its SQEs end, so mixing the two counts every SQE once.
///
/// # Safety
/// `arg`/`sz` must be valid for `flags`, as for io_uring_enter(2).
pub unsafe fn enter_by_fd(
    fd: u32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const c_void,
    sz: usize,
) -> c_int {
    let found =
        if FD_TABLE_LEN.load(Ordering::Acquire) == 0 || flags & IORING_ENTER_REGISTERED_RING != 0 {
            None
        } else {
            let table = FD_TABLE.lock();
            table
                .iter()
                .find(|e| e.fd as u32 == fd)
                .map(|e| (e.view, e.submitted_to))
        };
    if let Some((view, from)) = found {
        let queued = view.tail().wrapping_sub(from);
        if view.in_other_process() || (to_submit != 0 && queued != 0) {
            // SAFETY: forwarded contract.
            let ret = unsafe {
                enter(
                    &view,
                    (fd, 0),
                    from,
                    to_submit,
                    min_complete,
                    flags,
                    arg,
                    sz,
                )
            };
            return ret;
        }
    }
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_enter2(fd, to_submit, min_complete, flags, arg, sz) }
}

#[cfg(test)]
mod tests {
    //! The CPU mask helper and the refusal bookkeeping, without a ring.

    use super::*;
    use std::sync::Mutex;

    /// The refusal counters are process-wide: the tests that read them
    /// take turns.
    static COUNTERS: Mutex<()> = Mutex::new(());

    #[test]
    fn in_mask_reads_the_bit_of_each_cpu() {
        let mut mask = [0u64; 16];
        mask[0] = 0b101;
        mask[1] = 1;
        mask[15] = 1 << 63;
        for cpu in [0, 2, 64, 1023] {
            assert!(in_mask(&mask, cpu), "cpu {cpu}");
        }
        for cpu in [1, 3, 63, 65, 1022] {
            assert!(!in_mask(&mask, cpu), "cpu {cpu}");
        }
        // Past the 1024 CPUs the mask holds: not in it (no panic).
        assert!(!in_mask(&[u64::MAX; 16], 1024));
        assert!(!in_mask(&[u64::MAX; 16], u32::MAX));
    }

    #[test]
    fn refusals_have_distinct_names_and_notes_in_counter_order() {
        for (i, r) in Refusal::ALL.iter().enumerate() {
            assert_eq!(r.index(), i, "{r:?}");
            for other in &Refusal::ALL[i + 1..] {
                assert_ne!(r.name(), other.name());
                assert_ne!(r.note(), other.note());
            }
        }
    }

    #[test]
    fn rings_that_chose_sqpoll_or_sq_aff_are_no_candidates_and_not_noted() {
        let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        let before = refusal_counts();
        for flags in [IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF] {
            assert_eq!(eligible(flags, Some(&[1])), Err(Refusal::SetupFlags));
        }
        assert_eq!(refusal_counts(), before, "nothing counted");
    }

    #[test]
    fn setups_with_their_own_semantics_are_refused_and_counted() {
        let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        for flags in [
            IORING_SETUP_ATTACH_WQ,
            IORING_SETUP_COOP_TASKRUN,
            IORING_SETUP_TASKRUN_FLAG,
            IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
            IORING_SETUP_SINGLE_ISSUER,
            IORING_SETUP_R_DISABLED,
        ] {
            let count = |counts: [(Refusal, u64); REFUSALS]| counts[Refusal::SetupFlags.index()].1;
            let before = count(refusal_counts());
            assert_eq!(
                eligible(flags, Some(&[1])),
                Err(Refusal::SetupFlags),
                "{flags:#x}"
            );
            assert!(count(refusal_counts()) > before, "{flags:#x} counted");
        }
    }
}
