//! What fork() does to the library's process-wide state: one
//! `pthread_atfork` registration, which calls each part's handlers in one
//! documented order.
//!
//! A part is state that a forked child must not inherit as it is (the
//! poller registry, whose SQ threads stay with the parent; the statistics
//! page, which the child must not count into; the thread's registered ring
//! fds, which the kernel does not copy), or a lock that must not be held
//! in the child (the child has one thread: a lock another thread held at
//! fork() would stay taken for ever). Each part's module installs its
//! [`Handlers`] on first use ([`install`]); the child's handlers run in the
//! child's only thread, so they do no allocation.
//!
//! **Lock order.** Before fork() the prepare handlers take every installed
//! part's lock in the order of [`Part`]; after it, parent and child release
//! them in the reverse order. Code that holds one of these locks only calls
//! into lower layers (the poller registry stays taken while the statistics
//! count an unverified poller, which takes the statistics registry), so the
//! order is from the highest layer down, the order in which code nests
//! them: a prepare handler never waits for a lock whose holder waits for
//! one the handler has already taken. Parts of one layer never nest.
//! docs/design.md states the same order; the unit test below forks while
//! every lock is contended.

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Once;

/// The parts with fork handlers, in lock order (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// `transparent`'s table of transparent rings by fd (layer 5; a lock).
    TransparentRings,
    /// `ring_fd`'s retired registrations (layer 5; a lock) and the
    /// thread's table of automatic registrations (cleared in the child).
    RingFds,
    /// `sqpoll`'s poller registry (layer 5; a lock, emptied in the child).
    /// Held while the statistics count, so before [`Part::StatsRegistry`].
    PollerRegistry,
    /// `stats`'s slot registry (layer 4; a lock; the child gets a private
    /// page of its own).
    StatsRegistry,
    /// `ring`'s process generation (layer 3; no lock, counted in the child).
    ForkGeneration,
}

/// Every part, in lock order.
pub const PARTS: [Part; 5] = [
    Part::TransparentRings,
    Part::RingFds,
    Part::PollerRegistry,
    Part::StatsRegistry,
    Part::ForkGeneration,
];

/// One part's handlers. `prepare` takes the part's lock (if it has one),
/// `parent` releases it, `child` makes the state the child's and releases
/// the lock.
#[derive(Debug)]
pub struct Handlers {
    pub prepare: Option<fn()>,
    pub parent: Option<fn()>,
    pub child: Option<fn()>,
}

/// The installed handlers, by `Part as usize`; set once, never cleared.
static INSTALLED: [AtomicPtr<Handlers>; PARTS.len()] =
    [const { AtomicPtr::new(ptr::null_mut()) }; PARTS.len()];

/// The parts whose prepare handlers ran before the fork in progress (a
/// bit per part): parent and child release exactly those, even if another
/// part is installed meanwhile. (The C library runs one fork's handlers
/// at a time, and ours hold the locks from prepare to parent/child.)
static PREPARED: AtomicU32 = AtomicU32::new(0);

/// Installs `part`'s handlers (once; later calls are a load). Call it
/// before the part's state or lock is first used.
#[inline]
pub fn install(part: Part, handlers: &'static Handlers) {
    let slot = &INSTALLED[part as usize];
    if !slot.load(Ordering::Acquire).is_null() {
        return;
    }
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: the handlers are plain functions valid for the whole
        // process (the library is never unloaded while a ring lives).
        unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    });
    slot.store(ptr::from_ref(handlers).cast_mut(), Ordering::Release);
}

fn handlers(part: Part) -> Option<&'static Handlers> {
    // SAFETY: only `install` stores, and only pointers to statics.
    unsafe { INSTALLED[part as usize].load(Ordering::Acquire).as_ref() }
}

extern "C" fn prepare() {
    let mut prepared = 0;
    for part in PARTS {
        if let Some(h) = handlers(part) {
            prepared |= 1 << part as u32;
            if let Some(f) = h.prepare {
                f();
            }
        }
    }
    PREPARED.store(prepared, Ordering::Relaxed);
}

/// Runs the prepared parts' `which` handler, in reverse lock order.
fn release(which: fn(&Handlers) -> Option<fn()>) {
    let prepared = PREPARED.load(Ordering::Relaxed);
    for part in PARTS.iter().rev() {
        if prepared & (1 << *part as u32) == 0 {
            continue;
        }
        if let Some(f) = handlers(*part).and_then(which) {
            f();
        }
    }
}

extern "C" fn parent() {
    release(|h| h.parent);
}

extern "C" fn child() {
    release(|h| h.child);
}

#[cfg(test)]
mod tests {
    //! fork() while every lock of the library is contended: threads hold
    //! and release each one (through its own prepare and parent handlers)
    //! and others set up and tear down rings that take them in their real
    //! nesting. Each child must still set up rings, count statistics and
    //! exit; a lock the hub left taken would hang it.

    use super::*;
    use crate::lifecycle;
    use crate::ring::{io_uring, LiveRing};
    use crate::sqpoll::IORING_SETUP_SQPOLL_PERCPU;
    use crate::uapi::{IORING_SETUP_SINGLE_ISSUER, IORING_SETUP_SQPOLL};
    use crate::{ring, ring_fd, sqpoll, stats, transparent};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Sets up a ring with `flags`, statistics on, runs one NOP through it
    /// and tears it down; None when a step fails.
    fn use_a_ring(flags: u32) -> Option<String> {
        let mut ring = io_uring::zeroed();
        if lifecycle::queue_init(8, &mut ring, flags) != 0 {
            return None;
        }
        // SAFETY: queue_init succeeded, so the ring is mapped.
        let live = unsafe { LiveRing::from_mut(&mut ring) }?;
        let mut line = None;
        if lifecycle::enable_stats(live) == 0 {
            let sqe = live.get_sqe();
            if !sqe.is_null() {
                // SAFETY: a free SQE of this ring; all-zero is a NOP.
                unsafe { sqe.write(Default::default()) };
                if live.submit_and_wait(1) == 1 {
                    let (ret, cqe, _) = live.peek_cqe();
                    if ret == 0 && !cqe.is_null() {
                        live.cq_advance(1);
                        line = lifecycle::stats_line(live);
                    }
                }
            }
        }
        // SAFETY: the ring was set up above and is not used afterwards.
        unsafe { lifecycle::queue_exit(&mut ring) };
        line
    }

    /// Rings that take each lock: the statistics registry (every kind),
    /// the poller registry (a shared SQPOLL ring) and the registered ring
    /// fds (touched by the ring registry's fork handlers whether or not
    /// `RSURING_REGISTER_RING_FD` registers the ring).
    const RING_KINDS: [u32; 3] = [
        0,
        IORING_SETUP_SQPOLL | IORING_SETUP_SQPOLL_PERCPU,
        IORING_SETUP_SINGLE_ISSUER,
    ];

    /// What a child does: 0 when every kind of ring worked and counted its
    /// NOP, otherwise 10 + the kind that failed.
    fn child_work() -> i32 {
        for (i, flags) in RING_KINDS.into_iter().enumerate() {
            if !use_a_ring(flags).is_some_and(|line| line.contains(" sqes=1 ")) {
                return 10 + i as i32;
            }
        }
        0
    }

    /// Waits up to `patience` for child `pid`; its exit status, or None if
    /// it hung (then it is killed).
    fn wait_for(pid: libc::pid_t, patience: Duration) -> Option<i32> {
        let start = Instant::now();
        let mut status = 0;
        loop {
            // SAFETY: our child; `status` is writable.
            let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if got == pid {
                return Some(if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else {
                    -1
                });
            }
            if start.elapsed() > patience {
                // SAFETY: our child, still running.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_child_forked_while_every_lock_is_contended_sets_up_rings_and_exits() {
        transparent::install_fork_handlers();
        ring_fd::install_fork_handlers();
        sqpoll::install_fork_handlers();
        stats::region::install_fork_handlers();
        ring::install_fork_handlers();
        for part in PARTS {
            assert!(handlers(part).is_some(), "{part:?} has no handlers");
        }
        // Each kind of ring once first, so that what is read once per
        // process (the environment) is read before any thread may hold a
        // lock of the standard library at a fork.
        assert_eq!(child_work(), 0, "the rings do not work here");

        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for part in PARTS {
            let h = handlers(part).unwrap();
            let (Some(take), Some(give)) = (h.prepare, h.parent) else {
                continue;
            };
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    take();
                    std::thread::sleep(Duration::from_micros(200));
                    give();
                    std::thread::yield_now();
                }
            }));
        }
        for flags in RING_KINDS {
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    use_a_ring(flags);
                }
            }));
        }

        let mut failures = Vec::new();
        for round in 0..20 {
            std::thread::sleep(Duration::from_millis(3));
            // SAFETY: the child only runs `child_work` and exits.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let code = std::panic::catch_unwind(child_work).unwrap_or(20);
                // SAFETY: ends the child, running its exit handlers (the
                // statistics' process-exit path) as a program would.
                unsafe { libc::exit(code) };
            }
            assert!(pid > 0, "fork failed");
            let outcome = wait_for(pid, Duration::from_secs(10));
            let _ = std::fs::remove_file(stats::region::shm_path(pid as u32));
            match outcome {
                Some(0) => continue,
                Some(code) => failures.push(format!("round {round}: child exited {code}")),
                None => failures.push(format!("round {round}: child hung")),
            }
            break;
        }
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        assert!(failures.is_empty(), "{failures:?}");
    }
}
