//! An enter on a transparent ring: its SQEs handed to the poller (woken at
//! most once), the call returning when the kernel has consumed them, with
//! a plain ring's result ([`enter`]).

use super::*;

/// What an enter on a transparent ring needs of it: the SQ ring words and
/// the process generation that created it.
///
/// A view is taken of a [`LiveRing`] and kept in the fd table until the
/// ring's exit or fd close removes it ([`untrack`], which `crate::lifecycle`
/// calls before the mapping goes): while a view exists, its ring is mapped.
#[derive(Debug, Clone, Copy)]
pub struct SqView {
    pub(super) words: SqWords,
    pub(super) fork_gen: u16,
}

impl SqView {
    /// The view of a live transparent ring.
    pub fn of(ring: &LiveRing) -> Self {
        SqView {
            words: ring.sq_words(),
            fork_gen: ring.fork_gen,
        }
    }

    pub(super) fn head(&self) -> u32 {
        // SAFETY: the ring is mapped while its view exists (type invariant).
        unsafe { self.words.head() }
    }

    pub(super) fn tail(&self) -> u32 {
        // SAFETY: as for `head`.
        unsafe { self.words.tail() }
    }

    pub(super) fn needs_wakeup(&self) -> bool {
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

/// Spins before yielding the CPU while the poller picks SQEs up.
pub(super) const SPINS_BEFORE_YIELD: u32 = 256;
/// Yields between re-checks of a poller that may have gone back to sleep.
pub(super) const YIELDS_BEFORE_REWAKE: u32 = 4096;

/// The system calls one [`enter`] made, for the statistics: a transparent
/// ring's submit is a hand-over to the poller, not an io_uring_enter.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Made {
    /// io_uring_enter calls with IORING_ENTER_SQ_WAKEUP.
    pub wakeups: u32,
    /// Whether the call ended with an io_uring_enter that waits for or
    /// flushes completions (GETEVENTS).
    pub waited: bool,
}

/// Hands the `n` SQEs after SQ position `head` to the poller and waits
/// until it has consumed them. Wakes it at most once, unless it is found asleep again
/// after a long wait. Returns 0, or the `-errno` of a failed wake-up.
pub(super) fn hand_over(
    view: &SqView,
    target: EnterTarget,
    head: u32,
    n: u32,
    made: &mut Made,
) -> c_int {
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
            made.wakeups += 1;
            let wake = EnterArgs::new(0, 0, IORING_ENTER_SQ_WAKEUP | target.flags);
            // SAFETY: no argument is passed.
            let ret = unsafe { sys::io_uring_enter2(target.fd, wake) };
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

/// io_uring_enter with `args` on a transparent ring, with a plain ring's
/// result; the system calls it made are added to `made`.
///
/// `from` is where the SQEs that earlier calls submitted end: the ones
/// after it, up to the published tail, are this call's to submit (the
/// poller may have taken some already; a plain ring's kernel would take
/// them now, so they count now).
///
/// # Safety
/// `args.arg`/`args.sz` must be valid for `args.flags`, as for
/// io_uring_enter(2).
pub unsafe fn enter(
    view: &SqView,
    target: EnterTarget,
    from: u32,
    args: EnterArgs,
    made: &mut Made,
) -> c_int {
    if view.in_other_process() {
        refuse(Refusal::Fork);
        return -libc::EOWNERDEAD;
    }
    let queued = view.tail().wrapping_sub(from);
    let submitted = args.to_submit.min(queued);
    if submitted != 0 {
        let watch = WATCH.load(Ordering::Relaxed);
        let t0 = if watch { coarse_now_ns() } else { 0 };
        let ret = hand_over(view, target, from, submitted, made);
        if ret < 0 {
            return ret;
        }
        let took = watch.then(|| (t0, coarse_now_ns()));
        record_submitted(view.words, from.wrapping_add(submitted), took);
    }
    // A plain ring does not wait after a short submission.
    if args.flags & IORING_ENTER_GETEVENTS == 0 || submitted != args.to_submit {
        return submitted as c_int;
    }
    let wait = EnterArgs {
        to_submit: 0,
        flags: (args.flags & !(IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT)) | target.flags,
        ..args
    };
    made.waited = true;
    // SAFETY: forwarded contract.
    let ret = unsafe { sys::io_uring_enter2(target.fd, wait) };
    if submitted != 0 {
        submitted as c_int
    } else {
        ret
    }
}
