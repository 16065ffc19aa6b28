//! A small lock for process-wide library state that a fork()ed child can
//! still take.
//!
//! `std::sync::Mutex` is not fork-safe: if another thread holds it when
//! the process forks, the child's copy stays locked forever. The owner of a
//! [`ForkSafeLock`] installs fork handlers (`crate::fork`, which says in
//! which order the locks are taken) that take the lock before fork
//! ([`ForkSafeLock::lock_for_fork`]) and release it in both processes
//! ([`ForkSafeLock::unlock_after_fork`]), so the state is consistent in the
//! child and the lock free. It is only taken on setup,
//! exit and other cold paths, never on a submit or reap hot path.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};

/// A spin-then-yield lock around `T`.
pub struct ForkSafeLock<T> {
    locked: AtomicBool,
    data: UnsafeCell<T>,
}

// SAFETY: `data` is only reached through a `Guard` (or by the fork handlers
// while they hold the lock), which serialises access.
unsafe impl<T: Send> Sync for ForkSafeLock<T> {}

/// Proof that the lock is held; gives access to the data.
pub struct Guard<'a, T> {
    lock: &'a ForkSafeLock<T>,
}

impl<T> ForkSafeLock<T> {
    pub const fn new(value: T) -> Self {
        ForkSafeLock {
            locked: AtomicBool::new(false),
            data: UnsafeCell::new(value),
        }
    }

    fn acquire(&self) {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            crate::sys::sched_yield();
        }
    }

    /// Takes the lock.
    pub fn lock(&self) -> Guard<'_, T> {
        self.acquire();
        Guard { lock: self }
    }

    /// Takes the lock unless it stays taken for `patience` (for paths that
    /// must not hang on a holder that will never run again, such as process
    /// exit called from a signal handler that interrupted the holder).
    pub fn lock_within(&self, patience: std::time::Duration) -> Option<Guard<'_, T>> {
        let start = std::time::Instant::now();
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            if start.elapsed() > patience {
                return None;
            }
            crate::sys::sched_yield();
        }
        Some(Guard { lock: self })
    }

    /// For a `pthread_atfork` prepare handler: takes the lock without a
    /// guard; [`Self::unlock_after_fork`] releases it.
    pub fn lock_for_fork(&self) {
        self.acquire();
    }

    /// For the parent and child `pthread_atfork` handlers. `in_child`, if
    /// given, runs on the data first (the lock is still held).
    ///
    /// # Safety
    /// The calling thread must hold the lock from [`Self::lock_for_fork`].
    pub unsafe fn unlock_after_fork(&self, in_child: Option<fn(&mut T)>) {
        if let Some(f) = in_child {
            // SAFETY: the caller holds the lock, so nothing else reaches the data.
            f(unsafe { &mut *self.data.get() });
        }
        self.locked.store(false, Ordering::Release);
    }
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves the lock is held.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves the lock is held exclusively.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}
