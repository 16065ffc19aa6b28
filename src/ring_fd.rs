//! Registered ring fds: the application's own (`io_uring_register_ring_fd`)
//! and the ones rsuring makes invisibly for the rings it sets up.
//!
//! Layer 5 (see lib.rs). Functions on the plain [`io_uring`]: only its fds,
//! flags and registration key change, no ring memory is touched.
//!
//! The library's own registration is off unless `RSURING_REGISTER_RING_FD=1`
//! (issue 34, docs/compatibility.md): a program can tell it is there (a
//! ring torn down on another thread lives until the holder lets go; the
//! ring's `enter_ring_fd` and `int_flags` show it; a `close()`d ring fd
//! still submits), so by default every enter goes through the fd, as with
//! liburing.
//!
//! The kernel keeps registered ring fds in a small table per task (16
//! slots); an io_uring_enter that passes a slot index instead of the fd
//! skips the fd-table lookup. A registration made by the library on the
//! application's behalf must stay invisible, so three rules hold:
//!
//! - **Exact ownership.** A registration is the registering thread's:
//!   that thread records `slot → key` in a thread-local table and the ring
//!   stores the same key in liburing's 8-byte padding word. The key is the
//!   thread's pointer (`%fs:0` on x86-64, `tpidr_el0` on aarch64) with the
//!   slot index and the current *epoch* in bits a thread pointer never has
//!   (see [`TP_ZERO_BITS`]). An enter uses the slot when `thread pointer ^
//!   key ^ enter_ring_fd == epoch` (loads, xors and a compare, no
//!   thread-local access: the fast check; an `enter_ring_fd` the
//!   application rewrote fails it); otherwise, when
//!   the thread's table still maps the slot to the ring's key, the epoch has
//!   moved on and both are renewed (the slow check); otherwise it goes
//!   through the plain fd, as with liburing. The epoch moves on whenever a
//!   thread's slot may be lost without its ring being touched: a thread
//!   exits holding slots (a later thread may get its thread pointer, glibc
//!   reuses thread stacks), a forked child starts (same thread pointer, no
//!   registrations: its table is cleared), the library gives a slot back.
//!   So another thread, a thread that inherited an exited thread's stack,
//!   or a forked child goes through the fd. After 2^10 - 2 moves the epoch
//!   stops (every enter takes the slow check and new rings are not
//!   registered) rather than come round again.
//! - **The application comes first.** When the application's own
//!   registration finds the task's table full, the library gives its slots
//!   back (the ring that loses one goes back to its fd) and retries.
//! - **Teardown only where it is ours.** A ring that exits drops the
//!   library's slot only from the thread whose table holds it. Exited on
//!   another thread, its slot and key are retired: the holding thread drops the
//!   slot at its next ring setup or exit (until then, or until that thread
//!   exits, the kernel keeps the ring's file referenced). Nothing of the
//!   ring is cancelled or unregistered meanwhile: a dup() of its fd or a
//!   forked child may still use it, as they may with liburing.
//! - **Out of the application's way.** The library asks for slots 15 down
//!   to 8, never the low slots the kernel hands an application that asks
//!   for any; it registers nothing under a seccomp filter (a filter may kill
//!   on io_uring_register) or after the kernel refused the call once; an
//!   enter through a slot the calling task does not hold (a child made
//!   without fork's handlers) is made again through the fd.

use core::cell::Cell;
use core::ffi::c_int;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use crate::fork;
use crate::lock::{ForkSafeLock, Guard};
use crate::register::do_register;
use crate::ring::{int_flags, io_uring, rs_flags, EnterTarget, LiveRing};
use crate::uapi::{
    io_uring_rsrc_update, IORING_FEAT_REG_REG_RING, IORING_REGISTER_RING_FDS,
    IORING_UNREGISTER_RING_FDS,
};
use crate::{env, procfs};

/// Slots of the kernel's per-task registered-ring table.
const TASK_SLOTS: usize = 16;

/// The library takes at most this many slots of a thread's table on its
/// own, the top ones ([`AUTO_FIRST_SLOT`] and up), so an application that
/// registers rings itself (the kernel gives it the lowest free slot) rarely
/// meets one.
const AUTO_REGISTER_MAX: usize = 8;

/// The lowest slot the library asks for.
const AUTO_FIRST_SLOT: usize = TASK_SLOTS - AUTO_REGISTER_MAX;

/// Key meaning "no automatic registration" (in a slot of the thread's
/// table, or in a ring); no thread pointer is 0.
const NO_KEY: u64 = 0;

/// The bits of a thread pointer that are always 0: the low 6 (glibc
/// aligns a thread's control block to 64 bytes) and the top 8 (no
/// user-space address reaches 2^56). A thread pointer with one of them set
/// gets no automatic registration. In a key they carry the slot index (the
/// low 4, so that a ring whose `enter_ring_fd` the application rewrote
/// fails the fast check) and the epoch ([`EPOCH_BITS`]).
const TP_ZERO_BITS: u64 = 0xff00_0000_0000_003f;

/// The bits of a key that carry the epoch: bits 4 and 5 and the top 8.
const EPOCH_BITS: u64 = 0xff00_0000_0000_0030;

/// The last epoch, every bit of [`EPOCH_BITS`]: it never moves on, and no
/// key is made in it, so no enter passes the fast check.
const EPOCH_STOPPED: u64 = EPOCH_BITS;

/// The current epoch (see the module comment), in [`EPOCH_BITS`].
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// For each slot of this thread's kernel table: the key of the
    /// library's registration in it, or [`NO_KEY`].
    static AUTO_SLOTS: [Cell<u64>; TASK_SLOTS] = const { [const { Cell::new(NO_KEY) }; TASK_SLOTS] };
    /// Moves the epoch on when this thread exits holding slots; touched by
    /// every automatic registration (that registers its destructor).
    static EXIT_HOOK: ExitHook = const { ExitHook };
}

/// See [`EXIT_HOOK`].
struct ExitHook;

impl Drop for ExitHook {
    fn drop(&mut self) {
        // The kernel drops this thread's slots with it, and a thread made
        // later may get this thread's pointer: keys made here must stop
        // passing the fast check.
        if AUTO_SLOTS.with(|slots| slots.iter().any(|s| s.get() != NO_KEY)) {
            advance_epoch();
        }
    }
}

/// The epoch after `e`: a 10-bit count spread over [`EPOCH_BITS`], ending
/// at [`EPOCH_STOPPED`].
const fn epoch_after(e: u64) -> u64 {
    if e == EPOCH_STOPPED {
        return e;
    }
    let count = ((e >> 4) & 3 | (e >> 56) << 2) + 1;
    (count & 3) << 4 | (count >> 2) << 56
}

/// Moves the epoch on: no key made before passes the fast check.
fn advance_epoch() {
    let _ = EPOCH.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |e| Some(epoch_after(e)));
}

/// The calling thread's pointer (the ABI's: it points at itself, and is
/// fixed for the thread's life); 0 on an architecture without one here.
#[inline(always)]
fn thread_pointer() -> u64 {
    let tp: u64;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: on x86-64 Linux the ELF TLS ABI keeps the thread pointer in
    // the word at %fs:0 (the TCB's pointer to itself); reading it has no
    // other effect.
    unsafe {
        core::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp,
            options(nostack, preserves_flags, readonly, pure));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: on aarch64 Linux tpidr_el0 holds the thread pointer;
    // reading it has no other effect.
    unsafe {
        core::arch::asm!("mrs {}, tpidr_el0", out(reg) tp,
            options(nostack, preserves_flags, nomem, pure));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        tp = 0;
    }
    tp
}

/// The key a registration made by the calling thread in `slot` now
/// carries, or None when there can be none (no usable thread pointer,
/// epoch stopped).
fn current_key(slot: usize) -> Option<u64> {
    let tp = thread_pointer();
    let epoch = EPOCH.load(Ordering::Relaxed);
    (tp != 0 && tp & TP_ZERO_BITS == 0 && epoch != EPOCH_STOPPED && slot < TASK_SLOTS)
        .then_some(tp | epoch | slot as u64)
}

/// The fast check: whether the calling thread made (or renewed) `ring`'s
/// automatic registration, in the slot `enter_ring_fd` names, in the
/// current epoch. Exact: a thread pointer has no bit of [`TP_ZERO_BITS`],
/// so `tp ^ key ^ enter_ring_fd` equals the epoch only for the same thread
/// pointer and slot and epoch, and an epoch never comes back.
#[inline(always)]
pub fn holds_current_key(ring: &io_uring) -> bool {
    thread_pointer_xor_epoch() ^ ring.cq.reg_key ^ ring.enter_ring_fd as u32 as u64 == 0
}

/// [`thread_pointer`] xor the current [`EPOCH`] (a relaxed load).
#[inline(always)]
fn thread_pointer_xor_epoch() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let x: u64;
        // SAFETY: as in thread_pointer for %fs:0; the second operand is
        // EPOCH's 8 aligned bytes, read as one load, which on x86-64 is
        // what a relaxed atomic load of it is. (One instruction less than
        // a separate load and compare: the xor sets the flags the caller
        // branches on.)
        unsafe {
            core::arch::asm!(
                "mov {x}, qword ptr fs:[0]",
                "xor {x}, qword ptr [rip + {epoch}]",
                x = out(reg) x,
                epoch = sym EPOCH,
                options(nostack, readonly, pure),
            );
        }
        x
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        thread_pointer() ^ EPOCH.load(Ordering::Relaxed)
    }
}

/// The kernel refused an automatic registration in a way that will not
/// change (no `IORING_REGISTER_RING_FDS`: `-EINVAL`; a seccomp filter or
/// LSM: `-EPERM`, `-EACCES`, `-ENOSYS`): later rings do not try.
static REGISTER_UNKNOWN: AtomicBool = AtomicBool::new(false);

/// `RSURING_REGISTER_RING_FD`, read once: unknown, on, off.
static AUTO_MODE: AtomicU8 = AtomicU8::new(MODE_UNKNOWN);
const MODE_UNKNOWN: u8 = 0;
const MODE_ON: u8 = 1;
const MODE_OFF: u8 = 2;

/// Whether a ring set up now may get the library's registration: the
/// process asked for it, the kernel has not refused it, and no seccomp
/// filter watches the process (asked at each setup, since a filter can be
/// installed between two rings; setup is not a hot path).
fn auto_registration_allowed() -> bool {
    let mode = match AUTO_MODE.load(Ordering::Relaxed) {
        MODE_UNKNOWN => {
            let mode = if env::flag(env::REGISTER_RING_FD) {
                MODE_ON
            } else {
                MODE_OFF
            };
            AUTO_MODE.store(mode, Ordering::Relaxed);
            mode
        }
        known => known,
    };
    if mode != MODE_ON || REGISTER_UNKNOWN.load(Ordering::Relaxed) {
        return false;
    }
    if procfs::under_seccomp_filter() != Some(false) {
        // Filtered, or /proc could not say: a filter may kill the
        // process on io_uring_register, which liburing would not call.
        REGISTER_UNKNOWN.store(true, Ordering::Relaxed);
        return false;
    }
    true
}

/// Slots and keys of rings that exited on a thread other than their
/// slot's holder. (A key alone does not name a ring: one thread's rings
/// registered in one epoch share it; a slot and its key do.)
static RETIRED: ForkSafeLock<Vec<(usize, u64)>> = ForkSafeLock::new(Vec::new());
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
        let key = AUTO_SLOTS.with(|slots| slots[slot].get());
        let Some(at) = retired
            .iter()
            .position(|&r| r == (slot, key) && key != NO_KEY)
        else {
            continue;
        };
        retired.swap_remove(at);
        unregister_slot(via, slot);
        AUTO_SLOTS.with(|slots| slots[slot].set(NO_KEY));
    }
    RETIRED_PENDING.store(!retired.is_empty(), Ordering::Release);
}

/// Notes that the holder's `slot` with `key` belongs to an exited ring.
fn retire(slot: usize, key: u64) {
    retired().push((slot, key));
    RETIRED_PENDING.store(true, Ordering::Release);
}

/// Takes the lock of [`RETIRED`].
fn retired() -> Guard<'static, Vec<(usize, u64)>> {
    install_fork_handlers();
    RETIRED.lock()
}

/// fork(): [`RETIRED`] is locked across it; the child's (only) thread
/// clears its table, as the kernel gives a child no registered rings, and
/// moves the epoch on (it has its parent thread's pointer).
static FORK_HANDLERS: fork::Handlers = fork::Handlers {
    prepare: Some(|| RETIRED.lock_for_fork()),
    // SAFETY: the prepare handler took the lock in this thread.
    parent: Some(|| unsafe { RETIRED.unlock_after_fork(None) }),
    child: Some(|| {
        AUTO_SLOTS.with(|slots| slots.iter().for_each(|s| s.set(NO_KEY)));
        advance_epoch();
        // SAFETY: the prepare handler took the lock in this thread.
        unsafe { RETIRED.unlock_after_fork(None) }
    }),
};

/// Installs the fork handlers (see `crate::fork`); done by the first
/// automatic registration and the first use of [`RETIRED`].
pub fn install_fork_handlers() {
    fork::install(fork::Part::RingFds, &FORK_HANDLERS);
}

/// The slow check: whether the calling thread holds the library's
/// registration of `ring` (its table maps the ring's slot to the ring's
/// key), in any epoch.
#[inline(always)]
fn holds_auto_slot(ring: &io_uring) -> bool {
    let slot = ring.enter_ring_fd as usize;
    slot < TASK_SLOTS
        && ring.cq.reg_key != NO_KEY
        && AUTO_SLOTS.with(|slots| slots[slot].get()) == ring.cq.reg_key
}

/// The target of an enter through the ring's registered index.
#[inline(always)]
fn slot_target(ring: &io_uring) -> EnterTarget {
    EnterTarget {
        fd: ring.enter_ring_fd as u32,
        flags: (ring.int_flags & int_flags::ENTER_MASK) as u32,
    }
}

/// The fd (or registered index) and ring flags an io_uring_enter of `ring`
/// uses on the calling thread.
#[inline(always)]
pub fn enter_target(ring: &mut LiveRing) -> EnterTarget {
    if ring.rs_flags & rs_flags::AUTO_REG == 0 || holds_current_key(ring) {
        return slot_target(ring);
    }
    auto_enter_target_slow(ring)
}

/// [`enter_target`] for a ring with the library's automatic registration
/// (`rs_flags::AUTO_REG`) that failed the fast check
/// ([`holds_current_key`]); see [`recheck`].
#[cold]
#[inline(never)]
pub fn auto_enter_target_slow(ring: &mut LiveRing) -> EnterTarget {
    let (target, renewed) = recheck(ring);
    if let Some(key) = renewed {
        ring.set_reg_key(key);
    }
    target
}

/// The slow check of an automatically registered ring: its slot when the
/// calling thread holds it (the epoch has moved on: the thread's table
/// takes the current key, returned for the ring, so that the next enter
/// passes the fast check), its fd otherwise.
fn recheck(ring: &io_uring) -> (EnterTarget, Option<u64>) {
    if !holds_auto_slot(ring) {
        let fd = EnterTarget {
            fd: ring.ring_fd as u32,
            flags: (ring.int_flags & int_flags::NO_IOWAIT) as u32,
        };
        return (fd, None);
    }
    let slot = ring.enter_ring_fd as usize;
    let renewed = current_key(slot);
    if let Some(key) = renewed {
        AUTO_SLOTS.with(|slots| slots[slot].set(key));
    }
    (slot_target(ring), renewed)
}

/// Drops slot `slot` of the calling task's table, through `via`'s fd;
/// the kernel's answer (1 when it dropped one).
fn unregister_slot(via: &io_uring, slot: usize) -> c_int {
    let mut up = io_uring_rsrc_update {
        offset: slot as u32,
        resv: 0,
        data: 0,
    };
    ring_fds_op(via, IORING_UNREGISTER_RING_FDS, &mut up)
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
    ring.cq.reg_key = NO_KEY;
}

/// Gives one of this thread's automatic slots back to the kernel, through
/// `via`'s fd. Returns whether one was freed.
fn give_back_one_slot(via: &io_uring) -> bool {
    let Some(slot) = AUTO_SLOTS.with(|slots| slots.iter().position(|s| s.get() != NO_KEY)) else {
        return false;
    };
    let ret = unregister_slot(via, slot);
    // The ring that owned it no longer matches the table (nor, with the
    // epoch moved on, its key the fast check) and uses its fd.
    AUTO_SLOTS.with(|slots| slots[slot].set(NO_KEY));
    advance_epoch();
    ret == 1
}

/// `io_uring_register_ring_fd`.
pub fn register_ring_fd(ring: &mut io_uring) -> c_int {
    if ring.rs_flags & rs_flags::AUTO_REG != 0 {
        if holds_auto_slot(ring) {
            // The library's registration in this thread becomes the
            // application's, as if this call had made it.
            let slot = ring.enter_ring_fd as usize;
            AUTO_SLOTS.with(|slots| slots[slot].set(NO_KEY));
            ring.rs_flags &= !rs_flags::AUTO_REG;
            ring.cq.reg_key = NO_KEY;
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
    let ret = unregister_slot(ring, ring.enter_ring_fd as u32 as usize);
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
    if ring.int_flags & int_flags::REG_RING != 0 || ring.ring_fd < 0 || !auto_registration_allowed()
    {
        return;
    }
    if current_key(0).is_none() {
        return;
    }
    if EXIT_HOOK.try_with(|_| ()).is_err() {
        // The thread is exiting (a destructor sets a ring up): its exit
        // hook has run, and could not move the epoch on for this slot.
        return;
    }
    drop_retired_slots(ring);
    // The top slots, highest first, that this thread's table says are
    // free; a slot the kernel says is taken (the application's, or a
    // stale entry of ours) is skipped.
    let mut slot = None;
    for candidate in (AUTO_FIRST_SLOT..TASK_SLOTS).rev() {
        if AUTO_SLOTS.with(|slots| slots[candidate].get()) != NO_KEY {
            continue;
        }
        let mut up = io_uring_rsrc_update {
            offset: candidate as u32,
            resv: 0,
            data: ring.ring_fd as u64,
        };
        match ring_fds_op(ring, IORING_REGISTER_RING_FDS, &mut up) {
            1 => {
                slot = Some(candidate);
                break;
            }
            ret if ret == -libc::EBUSY => continue,
            ret if [-libc::EINVAL, -libc::EPERM, -libc::EACCES, -libc::ENOSYS].contains(&ret) => {
                // No such opcode (before 5.18), or a filter or LSM that
                // refuses it: one attempt per process.
                REGISTER_UNKNOWN.store(true, Ordering::Relaxed);
                return;
            }
            _ => return,
        }
    }
    let Some(slot) = slot else { return };
    let Some(key) = current_key(slot) else {
        // The epoch stopped meanwhile: no key, so no registration.
        unregister_slot(ring, slot);
        return;
    };
    install_fork_handlers();
    AUTO_SLOTS.with(|slots| slots[slot].set(key));
    ring.cq.reg_key = key;
    ring.enter_ring_fd = slot as c_int;
    ring.rs_flags |= rs_flags::AUTO_REG;
    // io_uring_register may be called from any thread: keep it on the fd.
    ring.int_flags = (ring.int_flags | int_flags::REG_RING) & !int_flags::REG_REG_RING;
}

/// Whether an enter through `ring`'s automatic registration that answered
/// `ret` found no slot of the calling task there (a child made without
/// fork's handlers, which the kernel gave no registered rings): the caller
/// makes it again through the fd, which is what liburing would have used.
/// Nothing was submitted: the kernel checks the index before anything else.
#[cold]
pub fn retry_through_fd(ring: &io_uring, ret: c_int) -> Option<EnterTarget> {
    if ring.rs_flags & rs_flags::AUTO_REG == 0 || (ret != -libc::EINVAL && ret != -libc::EBADF) {
        return None;
    }
    Some(EnterTarget {
        fd: ring.ring_fd as u32,
        flags: (ring.int_flags & int_flags::NO_IOWAIT) as u32,
    })
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
            retire(ring.enter_ring_fd as usize, ring.cq.reg_key);
            detach_auto(ring);
            return;
        }
        let slot = ring.enter_ring_fd as usize;
        AUTO_SLOTS.with(|slots| slots[slot].set(NO_KEY));
    }
    release_slot(ring);
}

#[cfg(test)]
mod tests {
    //! Registration keys, epochs and enter targets, on rings that were
    //! never set up (each test runs on its own thread: the slot table is
    //! the thread's).

    use super::*;

    fn target(fd: u32, flags: u32) -> EnterTarget {
        EnterTarget { fd, flags }
    }

    /// A ring with the library's registration in slot 3, key `key`.
    fn auto_ring(key: u64) -> io_uring {
        let mut ring = io_uring::zeroed();
        ring.ring_fd = 9;
        ring.enter_ring_fd = 3;
        ring.int_flags = int_flags::REG_RING | int_flags::NO_IOWAIT;
        ring.rs_flags = rs_flags::AUTO_REG;
        ring.cq.reg_key = key;
        ring
    }

    const SLOT: EnterTarget = EnterTarget {
        fd: 3,
        flags: (int_flags::REG_RING | int_flags::NO_IOWAIT) as u32,
    };
    const FD: EnterTarget = EnterTarget {
        fd: 9,
        flags: int_flags::NO_IOWAIT as u32,
    };

    #[test]
    fn epochs_stay_in_their_bits_never_repeat_and_stop() {
        let mut seen = std::collections::HashSet::new();
        let mut e = 0;
        while e != EPOCH_STOPPED {
            assert_eq!(e & !EPOCH_BITS, 0);
            assert!(seen.insert(e), "epoch {e:#x} came back");
            e = epoch_after(e);
        }
        assert_eq!(seen.len(), (1 << 10) - 1);
        assert_eq!(epoch_after(EPOCH_STOPPED), EPOCH_STOPPED);
    }

    #[test]
    fn a_thread_pointer_leaves_the_epoch_bits_free() {
        let tp = thread_pointer();
        assert_ne!(tp, 0);
        assert_eq!(tp & TP_ZERO_BITS, 0, "{tp:#x}");
        let other = std::thread::spawn(thread_pointer).join().unwrap();
        assert_ne!(other, tp);
        assert_eq!(other & TP_ZERO_BITS, 0, "{other:#x}");
    }

    #[test]
    fn the_fast_check_passes_for_this_thread_in_this_epoch_only() {
        let key = current_key(3).unwrap();
        let ring = auto_ring(key);
        assert!(holds_current_key(&ring));
        let elsewhere = std::thread::spawn(move || holds_current_key(&auto_ring(key)));
        assert!(!elsewhere.join().unwrap(), "another thread passed");
        assert!(!holds_current_key(&auto_ring(key ^ 1)));
        assert!(!holds_current_key(&auto_ring(NO_KEY)));
    }

    #[test]
    fn the_slow_check_renews_the_key_of_the_holder_only() {
        let key = current_key(3).unwrap();
        let ring = auto_ring(key);
        // Not in this thread's table: the fd, no renewal.
        assert_eq!(recheck(&ring), (FD, None));
        AUTO_SLOTS.with(|slots| slots[3].set(key));
        advance_epoch();
        assert!(!holds_current_key(&ring), "a key of an old epoch passed");
        let (t, renewed) = recheck(&ring);
        assert_eq!(t, SLOT);
        let renewed = renewed.unwrap();
        assert_ne!(renewed, key);
        assert_eq!(AUTO_SLOTS.with(|slots| slots[3].get()), renewed);
        assert!(holds_current_key(&auto_ring(renewed)));
        // A slot holding another ring's key is not this ring's.
        assert_eq!(recheck(&auto_ring(key)).0, FD);
        AUTO_SLOTS.with(|slots| slots[3].set(NO_KEY));
        assert_eq!(recheck(&auto_ring(renewed)), (FD, None));
    }

    #[test]
    fn rings_without_a_key_never_match_an_empty_slot() {
        assert_eq!(recheck(&auto_ring(NO_KEY)), (FD, None));
    }

    #[test]
    fn the_slot_target_has_the_enter_bits() {
        let mut ring = auto_ring(NO_KEY);
        ring.int_flags |= int_flags::CQ_ENTER;
        assert_eq!(slot_target(&ring), target(3, SLOT.flags));
    }
}
