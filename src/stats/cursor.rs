//! The CQ head cursor of each ring: how far the ring's completions have
//! been counted, by any process.
//!
//! A ring may be used by several processes: a forked child inherits its
//! parent's rings, and a server may keep `struct io_uring` and the ring
//! memory in shared memory, so that one process reaps completions another
//! submitted. Each process counts into a page of its own (see `region`),
//! but the CQ head is one word for all of them. If every process kept its
//! own "last head seen", each would count the others' reaps as its own
//! (and the first look after a while as one giant batch).
//!
//! So the last head counted lives here, in a shared anonymous mapping that
//! fork() does not copy: a compare-exchange on it hands every movement of
//! the head to exactly one observer, in whichever process looks first, and
//! the counts of all processes add up to the head's total advance.
//!
//! A process maps one table of [`ENTRIES`] cursors and hands them out to
//! the rings it sets up statistics for ([`CURSOR_OF`], by slot index, is
//! process memory: a forked child inherits the pointers, and so keeps
//! sharing its parent's cursors for the rings it inherited). The child
//! maps a table of its own for rings it sets up. The parent never reuses a
//! cursor that a child may still use (one that was handed out before a
//! fork): such a cursor is retired when its ring is released, and a new
//! table is mapped when the current one has no free cursor left (old
//! tables are never unmapped: a child may still count through them).

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Cursors in one table: as many as a process can have rings with
/// statistics at once (the slots of `super::slot` are counted by this).
pub const ENTRIES: usize = 1024;

/// The cursor of each statistics slot of this process (by slot index);
/// null: the slot counts through its own `cq_seen` (no table could be
/// mapped). Written under the registry lock, read by the counting paths.
static CURSOR_OF: [AtomicPtr<AtomicU64>; ENTRIES] =
    [const { AtomicPtr::new(ptr::null_mut()) }; ENTRIES];

/// The address of the process's first slot (`Region::slots`), 0 before
/// the region is mapped: the slot index of a slot pointer.
static SLOTS_AT: AtomicUsize = AtomicUsize::new(0);

/// Records where the slots are (once the region is mapped).
pub fn set_slots_at(addr: usize) {
    SLOTS_AT.store(addr, Relaxed);
}

/// The cursor `slot` (one of the region's slots, of type `S`) counts
/// through: its entry of [`CURSOR_OF`], or `own`, the slot's own word, for
/// a slot outside the region (unit tests) or without a table.
#[inline(always)]
pub fn of<'a, S>(slot: &'a S, own: &'a AtomicU64) -> &'a AtomicU64 {
    let at = (slot as *const S as usize).wrapping_sub(SLOTS_AT.load(Relaxed));
    let index = at / core::mem::size_of::<S>().max(1);
    if let Some(p) = CURSOR_OF.get(index) {
        // SAFETY: a non-null entry points into a cursor table, which is
        // mapped for the life of the process (tables are never unmapped).
        if let Some(c) = unsafe { p.load(Relaxed).as_ref() } {
            return c;
        }
    }
    own
}

/// What became of a cursor of the current table.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    Used,
    /// Handed out before a fork: a child may use it; retired when released.
    UsedAcrossFork,
    Retired,
}

/// The process's cursor tables (part of the registry, under its lock).
pub struct Tables {
    /// The table new cursors come from; null until the first is needed.
    current: *mut AtomicU64,
    state: [State; ENTRIES],
}

impl Tables {
    pub const fn new() -> Self {
        Tables {
            current: ptr::null_mut(),
            state: [State::Free; ENTRIES],
        }
    }

    /// Gives slot `index` a cursor at `head` (extended to 64 bits). A slot
    /// without one (no memory) counts through its own word.
    pub fn assign(&mut self, index: usize, head: u64) {
        let cursor = self.take().unwrap_or(ptr::null_mut());
        if let Some(c) = cursor_ref(cursor) {
            c.store(head, Relaxed);
        }
        if let Some(p) = CURSOR_OF.get(index) {
            p.store(cursor, Relaxed);
        }
    }

    /// A free cursor, mapping a new table when the current one has none.
    fn take(&mut self) -> Option<*mut AtomicU64> {
        let free = self.state.iter().position(|s| *s == State::Free);
        let i = match (self.current.is_null(), free) {
            (false, Some(i)) => i,
            _ => {
                self.current = map_table()?;
                self.state = [State::Free; ENTRIES];
                0
            }
        };
        self.state[i] = State::Used;
        // SAFETY: i < ENTRIES, inside the table.
        Some(unsafe { self.current.add(i) })
    }

    /// Slot `index` leaves its ring: its cursor goes back to the table, or
    /// is retired if a child may still count through it.
    pub fn release(&mut self, index: usize) {
        let Some(p) = CURSOR_OF.get(index) else {
            return;
        };
        let cursor = p.swap(ptr::null_mut(), Relaxed);
        let at = (cursor as usize).wrapping_sub(self.current as usize) / 8;
        if cursor.is_null() || self.current.is_null() || at >= ENTRIES {
            return; // an older table's: a child may use it, never reused
        }
        self.state[at] = match self.state[at] {
            State::Used => State::Free,
            _ => State::Retired,
        };
    }

    /// In the parent after fork(): every cursor handed out so far may be
    /// used by the child too.
    pub fn after_fork_in_parent(&mut self) {
        for s in self.state.iter_mut().filter(|s| **s == State::Used) {
            *s = State::UsedAcrossFork;
        }
    }

    /// In the child after fork(): the inherited cursors stay (shared with
    /// the parent), but new ones come from a table of the child's own.
    /// No allocation, no system call.
    pub fn after_fork_in_child(&mut self) {
        self.current = ptr::null_mut();
    }
}

fn cursor_ref<'a>(p: *mut AtomicU64) -> Option<&'a AtomicU64> {
    // SAFETY: null or a cursor of a table mapped for the life of the process.
    unsafe { p.as_ref() }
}

/// A new table: shared anonymous memory, so that forked children see the
/// same cursors. Null on failure.
fn map_table() -> Option<*mut AtomicU64> {
    // SAFETY: a fresh mapping; the result is checked.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            ENTRIES * 8,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p.cast())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_handed_out_before_a_fork_are_never_reused() {
        let mut t = Tables::new();
        t.assign(ENTRIES - 1, 5);
        let first = CURSOR_OF[ENTRIES - 1].load(Relaxed);
        assert!(!first.is_null());
        // SAFETY: a cursor of a live table.
        assert_eq!(unsafe { (*first).load(Relaxed) }, 5);
        t.release(ENTRIES - 1);
        t.assign(ENTRIES - 1, 6);
        assert_eq!(CURSOR_OF[ENTRIES - 1].load(Relaxed), first, "reused");
        t.after_fork_in_parent();
        t.release(ENTRIES - 1);
        t.assign(ENTRIES - 1, 7);
        let second = CURSOR_OF[ENTRIES - 1].load(Relaxed);
        assert_ne!(second, first, "a child may still use the first");
        // SAFETY: as above; the retired cursor keeps its value.
        assert_eq!(unsafe { (*first).load(Relaxed) }, 6);
        t.after_fork_in_child();
        t.release(ENTRIES - 1);
        t.assign(ENTRIES - 1, 8);
        let third = CURSOR_OF[ENTRIES - 1].load(Relaxed);
        assert!(third != first && third != second, "the child's own table");
        t.release(ENTRIES - 1);
    }
}
