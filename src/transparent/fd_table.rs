//! Live transparent rings by fd ([`FD_TABLE`]): tracked at setup,
//! untracked at exit, and the exported `io_uring_enter` on one of them
//! ([`enter_by_fd`]).

use super::*;

/// Live transparent rings by fd, for the exported io_uring_enter. An entry
/// is known by its mapping (`view.words`), unique while the ring lives.
pub(super) struct FdEntry {
    pub(super) fd: c_int,
    pub(super) view: SqView,
    /// Where the SQEs submitted (through the library or the exported
    /// io_uring_enter) end.
    pub(super) mark: &'static Mark,
}

/// The table survives fork: a child must still recognise its parent's
/// transparent rings in order to refuse them.
pub(super) static FD_TABLE: ForkSafeLock<Vec<FdEntry>> = ForkSafeLock::new(Vec::new());
/// Entries in [`FD_TABLE`] (read without the lock).
pub(super) static FD_TABLE_LEN: AtomicUsize = AtomicUsize::new(0);

pub(super) static FORK_HANDLERS: fork::Handlers = fork::Handlers {
    prepare: Some(|| FD_TABLE.lock_for_fork()),
    // SAFETY: the prepare handler took the lock in this thread.
    parent: Some(|| unsafe { FD_TABLE.unlock_after_fork(None) }),
    // SAFETY: as for `parent`, in the child's copy of this thread.
    child: Some(|| unsafe { FD_TABLE.unlock_after_fork(None) }),
};

/// Installs the fork handlers (see `crate::fork`); done by the first
/// [`track`], before which the table is never locked.
pub fn install_fork_handlers() {
    fork::install(fork::Part::TransparentRings, &FORK_HANDLERS);
}

/// Records a new transparent ring for [`enter_by_fd`]. A ring beyond the
/// 2048 live transparent rings the marks hold is not recorded: the
/// exported io_uring_enter then reaches the kernel on it unchanged (the
/// kernel's SQPOLL behaviour, as for a registered ring index).
pub fn track(ring: &LiveRing) {
    install_fork_handlers();
    if ring.ring_fd < 0 {
        return;
    }
    let mut table = FD_TABLE.lock();
    let key = ring.sq_words().key();
    let Some(mark) = claim_mark(key, ring.sq.sqe_head, table.len()) else {
        return;
    };
    table.push(FdEntry {
        fd: ring.ring_fd,
        view: SqView::of(ring),
        mark,
    });
    FD_TABLE_LEN.store(table.len(), Ordering::Release);
}

/// Records where the SQEs submitted on the ring with SQ words `words` now
/// end, so that an exported io_uring_enter after a library submit (or the
/// other way round) counts each SQE once, and adds the hand-over's times
/// (`took`, when watched) to the ring's window. No lock: a probe of
/// [`MARKS`].
#[inline]
pub(super) fn record_submitted(words: SqWords, to: u32, took: Option<(u64, u64)>) {
    if FD_TABLE_LEN.load(Ordering::Relaxed) == 0 {
        return;
    }
    if let Some(m) = find_mark(words.key()) {
        m.to.store(to, Ordering::Release);
        if let Some((t0, t1)) = took {
            watch_handover(m, t0, t1);
        }
    }
}

/// Forgets a transparent ring (at exit, before its memory is unmapped, or
/// when its fd is closed).
pub fn untrack(ring: &io_uring) {
    if FD_TABLE_LEN.load(Ordering::Acquire) == 0 {
        return;
    }
    let mut table = FD_TABLE.lock();
    table.retain(|e| {
        let keep = !e.view.words.of_ring(ring);
        if !keep {
            e.mark.key.store(GONE, Ordering::Release);
        }
        keep
    });
    FD_TABLE_LEN.store(table.len(), Ordering::Release);
}

/// The exported io_uring_enter (`args` on `fd`): a transparent ring's fd
/// gets plain-ring behaviour; everything else goes to the kernel
/// unchanged.
///
/// The fd number alone could have been closed and reused by the
/// application, so the emulation only applies when the recorded ring has
/// SQEs published since the last call; otherwise the kernel sees the call
/// as made (for a transparent ring with nothing queued that is the same).
/// Each enter on a transparent ring (this one or the library's) records
/// where its SQEs end, so mixing the two counts every SQE once.
///
/// # Safety
/// `args.arg`/`args.sz` must be valid for `args.flags`, as for
/// io_uring_enter(2).
pub unsafe fn enter_by_fd(fd: u32, args: EnterArgs) -> c_int {
    let registered = args.flags & IORING_ENTER_REGISTERED_RING != 0;
    let found = if FD_TABLE_LEN.load(Ordering::Acquire) == 0 || registered {
        None
    } else {
        let table = FD_TABLE.lock();
        table
            .iter()
            .find(|e| e.fd as u32 == fd)
            .map(|e| (e.view, e.mark.to.load(Ordering::Acquire)))
    };
    if let Some((view, from)) = found {
        let queued = view.tail().wrapping_sub(from);
        if view.in_other_process() || (args.to_submit != 0 && queued != 0) {
            let mut made = Made::default();
            let target = EnterTarget { fd, flags: 0 };
            // SAFETY: forwarded contract.
            return unsafe { enter(&view, target, from, args, &mut made) };
        }
    }
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_enter2(fd, args) }
}
