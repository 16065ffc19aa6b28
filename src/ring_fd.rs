//! Registered ring fds: the application's own (`io_uring_register_ring_fd`)
//! and the ones rsuring makes invisibly for the rings it sets up.
//!
//! Layer 5 (see lib.rs). Functions on the plain [`io_uring`]: only its fds,
//! flags and token change, no ring memory is touched.
//!
//! The kernel keeps registered ring fds in a small table per task (16
//! slots); an io_uring_enter that passes a slot index instead of the fd
//! skips the fd-table lookup. A registration made by the library on the
//! application's behalf must stay invisible, so three rules hold:
//!
//! - **Exact ownership.** Each automatic registration gets a token that is
//!   never reused (a process-wide counter). The registering thread records
//!   `slot → token` in a thread-local table; the ring stores the token in
//!   liburing's padding. An enter uses the slot only when the calling
//!   thread's table maps that slot to this ring's token, so another thread,
//!   a thread that inherited an exited thread's `pthread_t`, or a forked
//!   child (whose table is cleared, as the kernel gives it no registrations)
//!   goes through the plain fd, as with liburing.
//! - **The application comes first.** When the application's own
//!   registration finds the task's table full, the library gives its slots
//!   back (the ring that loses one goes back to its fd) and retries.
//! - **Teardown only where it is ours.** A ring that exits drops the
//!   library's slot only from the thread whose table holds it. Exited on
//!   another thread, its token is retired: the holding thread drops the
//!   slot at its next ring setup or exit (until then, or until that thread
//!   exits, the kernel keeps the ring's file referenced).

use core::cell::Cell;
use core::ffi::c_int;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::fork;
use crate::lock::{ForkSafeLock, Guard};
use crate::register::do_register;
use crate::ring::{int_flags, io_uring, rs_flags, EnterTarget};
use crate::uapi::{
    io_uring_rsrc_update, io_uring_sync_cancel_reg, IORING_ASYNC_CANCEL_ALL,
    IORING_ASYNC_CANCEL_ANY, IORING_FEAT_REG_REG_RING, IORING_REGISTER_RING_FDS,
    IORING_REGISTER_SYNC_CANCEL, IORING_UNREGISTER_BUFFERS, IORING_UNREGISTER_EVENTFD,
    IORING_UNREGISTER_FILES, IORING_UNREGISTER_RING_FDS,
};

/// Slots of the kernel's per-task registered-ring table.
const TASK_SLOTS: usize = 16;

/// The library takes at most this many slots of a thread's table on its
/// own, so an application that registers rings itself rarely has to wait
/// for one to be given back.
const AUTO_REGISTER_MAX: usize = 8;

/// Token meaning "no automatic registration in this slot".
const NO_TOKEN: u64 = 0;

thread_local! {
    /// For each slot of this thread's kernel table: the token of the
    /// library's registration in it, or [`NO_TOKEN`].
    static AUTO_SLOTS: [Cell<u64>; TASK_SLOTS] = const { [const { Cell::new(NO_TOKEN) }; TASK_SLOTS] };
}

/// The kernel answered `-EINVAL` to an automatic registration (it has no
/// `IORING_REGISTER_RING_FDS`): later rings do not try.
static REGISTER_UNKNOWN: AtomicBool = AtomicBool::new(false);

/// Source of registration tokens; 0 is never handed out.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// Tokens of rings that exited on a thread other than their slot's holder.
static RETIRED: ForkSafeLock<Vec<u64>> = ForkSafeLock::new(Vec::new());
/// Whether [`RETIRED`] may be non-empty (read without the lock).
static RETIRED_PENDING: AtomicBool = AtomicBool::new(false);

/// Drops this thread's slots whose rings have exited elsewhere (setup and
/// exit only), through `via`'s fd.
fn drop_retired_slots(via: &io_uring) {
    if !RETIRED_PENDING.load(Ordering::Acquire) {
        return;
    }
    let mut retired = retired();
    for slot in 0..TASK_SLOTS {
        let token = AUTO_SLOTS.with(|slots| slots[slot].get());
        let Some(at) = retired.iter().position(|&t| t == token && t != NO_TOKEN) else {
            continue;
        };
        retired.swap_remove(at);
        let mut up = io_uring_rsrc_update {
            offset: slot as u32,
            resv: 0,
            data: 0,
        };
        ring_fds_op(via, IORING_UNREGISTER_RING_FDS, &mut up);
        AUTO_SLOTS.with(|slots| slots[slot].set(NO_TOKEN));
    }
    RETIRED_PENDING.store(!retired.is_empty(), Ordering::Release);
}

/// Notes that the slot holding `token` belongs to an exited ring.
fn retire(token: u64) {
    retired().push(token);
    RETIRED_PENDING.store(true, Ordering::Release);
}

/// Takes the lock of [`RETIRED`].
fn retired() -> Guard<'static, Vec<u64>> {
    install_fork_handlers();
    RETIRED.lock()
}

/// fork(): [`RETIRED`] is locked across it; the child's (only) thread
/// clears its table, as the kernel gives a child no registered rings.
static FORK_HANDLERS: fork::Handlers = fork::Handlers {
    prepare: Some(|| RETIRED.lock_for_fork()),
    // SAFETY: the prepare handler took the lock in this thread.
    parent: Some(|| unsafe { RETIRED.unlock_after_fork(None) }),
    child: Some(|| {
        AUTO_SLOTS.with(|slots| slots.iter().for_each(|s| s.set(NO_TOKEN)));
        // SAFETY: the prepare handler took the lock in this thread.
        unsafe { RETIRED.unlock_after_fork(None) }
    }),
};

/// Installs the fork handlers (see `crate::fork`); done by the first
/// automatic registration and the first use of [`RETIRED`].
pub fn install_fork_handlers() {
    fork::install(fork::Part::RingFds, &FORK_HANDLERS);
}

fn ring_token(ring: &io_uring) -> u64 {
    (ring.reg_token_hi as u64) << 32 | ring.sq.reg_token_lo as u64
}

fn set_ring_token(ring: &mut io_uring, token: u64) {
    ring.sq.reg_token_lo = token as u32;
    ring.reg_token_hi = (token >> 32) as u32;
}

/// Whether the calling thread holds the library's registration of `ring`.
#[inline(always)]
fn holds_auto_slot(ring: &io_uring) -> bool {
    let slot = ring.enter_ring_fd as usize;
    slot < TASK_SLOTS && AUTO_SLOTS.with(|slots| slots[slot].get()) == ring_token(ring)
}

/// The fd (or registered index) and ring flags an io_uring_enter of `ring`
/// uses on the calling thread.
#[inline(always)]
pub fn enter_target(ring: &io_uring) -> EnterTarget {
    if ring.rs_flags & rs_flags::AUTO_REG != 0 {
        return auto_enter_target(ring);
    }
    EnterTarget {
        fd: ring.enter_ring_fd as u32,
        flags: (ring.int_flags & int_flags::ENTER_MASK) as u32,
    }
}

/// [`enter_target`] for a ring the caller knows to hold the library's
/// automatic registration (`rs_flags::AUTO_REG`): its slot on the thread
/// that holds it, its fd on any other.
#[inline(always)]
pub fn auto_enter_target(ring: &io_uring) -> EnterTarget {
    if holds_auto_slot(ring) {
        return EnterTarget {
            fd: ring.enter_ring_fd as u32,
            flags: (ring.int_flags & int_flags::ENTER_MASK) as u32,
        };
    }
    EnterTarget {
        fd: ring.ring_fd as u32,
        flags: (ring.int_flags & int_flags::NO_IOWAIT) as u32,
    }
}

/// Registers or unregisters one slot through `ring`'s fd (the table is the
/// calling task's, whichever ring the call goes through).
fn ring_fds_op(ring: &io_uring, opcode: u32, up: &mut io_uring_rsrc_update) -> c_int {
    // SAFETY: `up` is a valid rsrc_update for one entry.
    unsafe { do_register(ring, opcode, ptr::from_mut(up).cast(), 1) }
}

/// Forgets the library's registration of `ring` (the ring goes back to its
/// fd); the kernel slot is left as it is.
fn detach_auto(ring: &mut io_uring) {
    ring.rs_flags &= !rs_flags::AUTO_REG;
    ring.int_flags &= !(int_flags::REG_RING | int_flags::REG_REG_RING);
    ring.enter_ring_fd = ring.ring_fd;
    set_ring_token(ring, NO_TOKEN);
}

/// Gives one of this thread's automatic slots back to the kernel, through
/// `via`'s fd. Returns whether one was freed.
fn give_back_one_slot(via: &io_uring) -> bool {
    let Some(slot) = AUTO_SLOTS.with(|slots| slots.iter().position(|s| s.get() != NO_TOKEN)) else {
        return false;
    };
    let mut up = io_uring_rsrc_update {
        offset: slot as u32,
        resv: 0,
        data: 0,
    };
    let ret = ring_fds_op(via, IORING_UNREGISTER_RING_FDS, &mut up);
    // The ring that owned it no longer matches the table and uses its fd.
    AUTO_SLOTS.with(|slots| slots[slot].set(NO_TOKEN));
    ret == 1
}

/// `io_uring_register_ring_fd`.
pub fn register_ring_fd(ring: &mut io_uring) -> c_int {
    if ring.rs_flags & rs_flags::AUTO_REG != 0 {
        if holds_auto_slot(ring) {
            // The library's registration in this thread becomes the
            // application's, as if this call had made it.
            let slot = ring.enter_ring_fd as usize;
            AUTO_SLOTS.with(|slots| slots[slot].set(NO_TOKEN));
            ring.rs_flags &= !rs_flags::AUTO_REG;
            set_ring_token(ring, NO_TOKEN);
            if ring.features & IORING_FEAT_REG_REG_RING != 0 {
                ring.int_flags |= int_flags::REG_REG_RING;
            }
            return 1;
        }
        // Registered by another thread (or given back): make the one the
        // application asks for here.
        detach_auto(ring);
    }
    if ring.int_flags & int_flags::REG_RING != 0 {
        return -libc::EEXIST;
    }
    let ret = loop {
        let mut up = io_uring_rsrc_update {
            offset: u32::MAX,
            resv: 0,
            data: ring.ring_fd as u64,
        };
        let ret = ring_fds_op(ring, IORING_REGISTER_RING_FDS, &mut up);
        if ret == 1 {
            ring.enter_ring_fd = up.offset as c_int;
            break ret;
        }
        // The task's table is full: the application's registration wins
        // over the library's.
        if ret != -libc::EBUSY || !give_back_one_slot(ring) {
            break ret;
        }
    };
    if ret == 1 {
        ring.int_flags |= int_flags::REG_RING;
        if ring.features & IORING_FEAT_REG_REG_RING != 0 {
            ring.int_flags |= int_flags::REG_REG_RING;
        }
    }
    ret
}

/// `io_uring_unregister_ring_fd`.
pub fn unregister_ring_fd(ring: &mut io_uring) -> c_int {
    if ring.int_flags & int_flags::REG_RING == 0 || ring.rs_flags & rs_flags::AUTO_REG != 0 {
        // Never registered, as far as the application knows.
        return -libc::EINVAL;
    }
    release_slot(ring)
}

/// Drops the registration held in `ring.enter_ring_fd`.
fn release_slot(ring: &mut io_uring) -> c_int {
    let mut up = io_uring_rsrc_update {
        offset: ring.enter_ring_fd as u32,
        resv: 0,
        data: 0,
    };
    let ret = ring_fds_op(ring, IORING_UNREGISTER_RING_FDS, &mut up);
    if ret == 1 {
        detach_auto(ring);
    }
    ret
}

/// Registers the fd of a ring the library set up, on the application's
/// behalf: the registration serves the creating thread, every other thread
/// keeps using the fd (see [`enter_target`]). An enter through a registered
/// index skips the kernel's file lookup and reference count (about 10% of
/// a NOP round trip on this project's machine; `bench/hotpath/results.md`).
/// Failure (table full, old kernel) is silent: the ring simply uses its fd.
pub fn auto_register_ring_fd(ring: &mut io_uring) {
    if ring.int_flags & int_flags::REG_RING != 0
        || ring.ring_fd < 0
        || REGISTER_UNKNOWN.load(Ordering::Relaxed)
    {
        return;
    }
    drop_retired_slots(ring);
    let held = AUTO_SLOTS.with(|slots| slots.iter().filter(|s| s.get() != NO_TOKEN).count());
    if held >= AUTO_REGISTER_MAX {
        return;
    }
    let mut up = io_uring_rsrc_update {
        offset: u32::MAX,
        resv: 0,
        data: ring.ring_fd as u64,
    };
    let ret = ring_fds_op(ring, IORING_REGISTER_RING_FDS, &mut up);
    if ret == -libc::EINVAL {
        // A kernel before 5.18 does not know the opcode: one attempt per
        // process.
        REGISTER_UNKNOWN.store(true, Ordering::Relaxed);
    }
    if ret != 1 {
        return;
    }
    let slot = up.offset as usize;
    if slot >= TASK_SLOTS {
        // A kernel with a larger table than we track: give it back.
        let mut up = io_uring_rsrc_update {
            offset: slot as u32,
            resv: 0,
            data: 0,
        };
        ring_fds_op(ring, IORING_UNREGISTER_RING_FDS, &mut up);
        return;
    }
    install_fork_handlers();
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    AUTO_SLOTS.with(|slots| slots[slot].set(token));
    set_ring_token(ring, token);
    ring.enter_ring_fd = slot as c_int;
    ring.rs_flags |= rs_flags::AUTO_REG;
    // io_uring_register may be called from any thread: keep it on the fd.
    ring.int_flags = (ring.int_flags | int_flags::REG_RING) & !int_flags::REG_REG_RING;
}

/// Drops the ring fd registration at teardown: the application's always,
/// the library's only from the thread that holds it (elsewhere the index
/// names that thread's own registrations; the kernel drops it when the
/// holder exits).
pub fn release_at_exit(ring: &mut io_uring) {
    if ring.ring_fd >= 0 {
        drop_retired_slots(ring);
    }
    if ring.int_flags & int_flags::REG_RING == 0 {
        return;
    }
    if ring.rs_flags & rs_flags::AUTO_REG != 0 {
        if !holds_auto_slot(ring) {
            quiesce_held_elsewhere(ring);
            retire(ring_token(ring));
            detach_auto(ring);
            return;
        }
        let slot = ring.enter_ring_fd as usize;
        AUTO_SLOTS.with(|slots| slots[slot].set(NO_TOKEN));
    }
    release_slot(ring);
}

/// A ring exited on a thread other than the one holding its automatic
/// registration: the close that follows does not free it, since the
/// holder's slot keeps the kernel's file referenced until that thread drops
/// it (at its next ring setup or exit, or when it exits). What the
/// application could notice of the ring living on is undone here, as the
/// kernel's teardown would: its pending requests are cancelled (a
/// synchronous cancel of every request, without waiting for those already
/// running) and its registered files, buffers and eventfd are given back,
/// so the files and sockets it held close with the application's last
/// descriptor. Results are ignored (a kernel without one of these, or a
/// ring without such registrations, answers an error).
fn quiesce_held_elsewhere(ring: &io_uring) {
    if ring.ring_fd < 0 {
        return;
    }
    let mut cancel = io_uring_sync_cancel_reg {
        fd: -1,
        flags: IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL,
        ..Default::default()
    };
    // SAFETY: `cancel` is a valid sync-cancel argument for one call; the
    // register calls below take no argument.
    unsafe {
        do_register(
            ring,
            IORING_REGISTER_SYNC_CANCEL,
            ptr::from_mut(&mut cancel).cast(),
            1,
        );
        for opcode in [
            IORING_UNREGISTER_FILES,
            IORING_UNREGISTER_BUFFERS,
            IORING_UNREGISTER_EVENTFD,
        ] {
            do_register(ring, opcode, ptr::null_mut(), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Registration tokens and enter targets, on rings that were never set
    //! up (each test runs on its own thread: the slot table is the
    //! thread's).

    use super::*;

    fn target(fd: u32, flags: u32) -> EnterTarget {
        EnterTarget { fd, flags }
    }

    #[test]
    fn the_token_is_split_over_liburings_two_padding_words() {
        let mut ring = io_uring::zeroed();
        for token in [1, 0xdead_beef, 0x1234_5678_9abc_def0, u64::MAX] {
            set_ring_token(&mut ring, token);
            assert_eq!(ring_token(&ring), token);
            assert_eq!(ring.sq.reg_token_lo, token as u32);
            assert_eq!(ring.reg_token_hi, (token >> 32) as u32);
        }
    }

    #[test]
    fn rings_enter_through_their_registered_index_with_the_enter_bits() {
        let mut ring = io_uring::zeroed();
        ring.ring_fd = 9;
        ring.enter_ring_fd = 3;
        ring.int_flags = int_flags::REG_RING | int_flags::NO_IOWAIT | int_flags::CQ_ENTER;
        let enter_bits = (int_flags::REG_RING | int_flags::NO_IOWAIT) as u32;
        assert_eq!(enter_target(&ring), target(3, enter_bits));
    }

    #[test]
    fn an_automatic_registration_is_used_only_by_the_thread_holding_it() {
        let mut ring = io_uring::zeroed();
        ring.ring_fd = 9;
        ring.enter_ring_fd = 3;
        ring.int_flags = int_flags::REG_RING | int_flags::NO_IOWAIT;
        ring.rs_flags = rs_flags::AUTO_REG;
        set_ring_token(&mut ring, 77);
        // Another thread's registration: the plain fd, no REG_RING.
        assert_eq!(enter_target(&ring), target(9, int_flags::NO_IOWAIT as u32));
        AUTO_SLOTS.with(|slots| slots[3].set(77));
        let enter_bits = (int_flags::REG_RING | int_flags::NO_IOWAIT) as u32;
        assert_eq!(enter_target(&ring), target(3, enter_bits));
        // A slot holding another ring's token is not this ring's.
        AUTO_SLOTS.with(|slots| slots[3].set(78));
        assert_eq!(enter_target(&ring), target(9, int_flags::NO_IOWAIT as u32));
        AUTO_SLOTS.with(|slots| slots[3].set(NO_TOKEN));
    }
}
