//! The hot paths: getting SQEs, submitting, and finding completions.
//!
//! Layer 6 (see lib.rs). The hot paths are methods of [`LiveRing`], the
//! only ring methods outside ring.rs: the ring words through ring.rs's
//! accessors, the extensions (statistics, transparent SQPOLL, shared
//! pollers, automatic ring fds) through their modules' functions, behind
//! one test of `rs_flags` (no `rs_flags::EXT` bit on a plain ring).
//!
//! The state machine is liburing's, because inline code compiled against
//! liburing's header shares it: `sq.sqe_tail` is the next SQE handed out,
//! `sq.sqe_head` what has been published to the kernel's tail; the CQ head is
//! advanced by the application (`io_uring_cq_advance`).

use core::ffi::{c_int, c_void};
use core::mem::MaybeUninit;
use core::ptr;
use core::sync::atomic::{fence, Ordering};

use crate::ring::{int_flags, io_uring, rs_flags, EnterTarget, LiveRing};
use crate::sys;
use crate::uapi::{
    self, __kernel_timespec, io_uring_cqe, io_uring_getevents_arg, io_uring_sqe, IORING_CQE_F_32,
    IORING_CQE_F_SKIP, IORING_ENTER_EXT_ARG, IORING_ENTER_GETEVENTS, IORING_ENTER_SQ_WAIT,
    IORING_ENTER_SQ_WAKEUP, IORING_FEAT_EXT_ARG, IORING_FEAT_MIN_TIMEOUT, IORING_OP_TIMEOUT,
    IORING_SETUP_CQE_MIXED, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_REWIND, IORING_SQ_CQ_OVERFLOW,
    IORING_SQ_NEED_WAKEUP, IORING_SQ_TASKRUN, LIBURING_UDATA_TIMEOUT, NSIG_BYTES,
};
use crate::{ring_fd, sqpoll, stats, transparent};

/// Where a CQE pointer is stored for the caller: a `struct io_uring_cqe *`
/// of the application's, possibly uninitialised until written.
pub type CqeOut = MaybeUninit<*mut io_uring_cqe>;

/// Asks the CPU to bring the head CQE's cache line in while the pointers
/// are stored and the call returns: the caller reads it next, and after
/// the kernel's copies (buffered reads) it is often out of the first-level
/// cache. A hint only (x86_64; nothing elsewhere).
#[inline(always)]
fn prefetch(cqe: *const io_uring_cqe) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no architectural effect,
    // whatever the address; SSE is part of x86_64's baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(cqe.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = cqe;
}

/// Stores `cqe`, `cqe + stride`, `cqe + 2 * stride`, ... (strides in CQEs)
/// into `out`: a store and an add per pointer, or, `WIDE` on x86_64, two
/// pointers a 16-byte store and one add per pair (SSE2 is part of the
/// architecture's baseline).
#[inline(always)]
fn fill_run<const WIDE: bool>(out: &mut [CqeOut], cqe: *mut io_uring_cqe, stride: usize) {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        use core::arch::x86_64::_mm_storeu_si128;
        use core::arch::x86_64::{__m128i, _mm_add_epi64, _mm_set1_epi64x, _mm_set_epi64x};
        let pairs = out.len() / 2;
        let bytes = stride * core::mem::size_of::<io_uring_cqe>();
        let first = cqe as usize;
        // SAFETY: SSE2 is always present on x86_64; these build values in
        // registers only.
        let (mut two, step) = unsafe {
            (
                _mm_set_epi64x(first.wrapping_add(bytes) as i64, first as i64),
                _mm_set1_epi64x((2 * bytes) as i64),
            )
        };
        let dst = out.as_mut_ptr().cast::<__m128i>();
        for pair in 0..pairs {
            // SAFETY: pair * 2 + 1 < out.len(), so the 16 bytes at pair
            // (two pointer slots of `out`, unaligned store) are in `out`.
            unsafe {
                _mm_storeu_si128(dst.add(pair), two);
                two = _mm_add_epi64(two, step);
            }
        }
        if let Some(last) = out.get_mut(pairs * 2) {
            last.write(cqe.wrapping_add(pairs * 2 * stride));
        }
        return;
    }
    let mut cqe = cqe;
    for slot in out {
        slot.write(cqe);
        cqe = cqe.wrapping_add(stride);
    }
}

/// Batches from this size on are filled with 16-byte stores; smaller ones a
/// pointer at a time (setting up the vectors costs more than it saves
/// there).
const WIDE_FILL_MIN: usize = 64;

/// The limits of a batch reap: room for at least one CQE, `min` at most
/// the room, a count that fits the C return type.
#[inline(always)]
fn batch_args_valid(out: &[CqeOut], min: u32) -> bool {
    let max = out.len();
    max != 0 && min as usize <= max && max <= i32::MAX as usize
}

/// CQ slots a CQE occupies: two for a 32-byte CQE on a mixed-size ring.
#[inline(always)]
fn cqe_slots(c: &io_uring_cqe) -> u32 {
    1 + (c.flags & IORING_CQE_F_32 != 0) as u32
}

extern "C" {
    /// include/liburing.h's `_io_uring_get_sqe`, compiled into the library
    /// by src/ffi/inline_ffi.c (where the exported io_uring_get_sqe calls it
    /// too): the inline code of programs built against the header, the
    /// exported symbol and the core hand out SQEs with the same code.
    fn _io_uring_get_sqe(ring: *mut io_uring) -> *mut io_uring_sqe;
}

/// The SQEs a wait call submits: how many, and [`GetData`]'s `fresh`.
#[derive(Clone, Copy)]
struct Published {
    count: u32,
    fresh: bool,
}

impl Published {
    const NONE: Self = Self {
        count: 0,
        fresh: false,
    };
}

/// What one wait asks of the kernel (liburing's `get_data`).
struct GetData {
    submit: u32,
    wait_nr: u32,
    get_flags: u32,
    arg: *const c_void,
    sz: usize,
    has_ts: bool,
    /// A transparent SQPOLL ring whose CQ was empty before this call
    /// published its SQEs to the poller: a CQE the first peek finds came
    /// from them, which a plain ring could not show before its submitting
    /// enter, so the first peek is taken as empty (the enter's count is
    /// then the call's result, as on a plain ring).
    fresh: bool,
}

impl LiveRing {
    /// io_uring_enter on this ring (through its registered index when it has
    /// one, adding the ring's own enter flags), counted in the statistics.
    ///
    /// # Safety
    /// `arg`/`sz` must describe a valid sigmask or getevents argument.
    #[inline(always)]
    unsafe fn enter(
        &mut self,
        submit: u32,
        wait_nr: u32,
        flags: u32,
        arg: *const c_void,
        sz: usize,
    ) -> c_int {
        // SAFETY: forwarded contract.
        unsafe { self.enter_with::<true, false>(submit, wait_nr, flags, arg, sz) }
    }

    /// [`Self::enter`]; `EXT` compiles in the test of the extensions that
    /// change an enter, so a caller that knows the ring uses none (a plain
    /// ring's submit) runs the system call alone. `AUTO`: the caller knows
    /// that the ring's only extension is an automatic ring fd registration
    /// (`rs_flags == LIVE | AUTO_REG`), whose slot is used when the calling
    /// thread holds it, inline.
    ///
    /// # Safety
    /// As for [`Self::enter`].
    #[inline(always)]
    unsafe fn enter_with<const EXT: bool, const AUTO: bool>(
        &mut self,
        submit: u32,
        wait_nr: u32,
        flags: u32,
        arg: *const c_void,
        sz: usize,
    ) -> c_int {
        if EXT && self.rs_flags & rs_flags::ENTER_SLOW != 0 {
            // SAFETY: forwarded contract.
            return unsafe { self.enter_slow(submit, wait_nr, flags, arg, sz) };
        }
        if AUTO && !ring_fd::holds_current_key(self) {
            // Not the thread holding the registration, or the epoch moved on.
            // SAFETY: forwarded contract.
            return unsafe { self.enter_auto_recheck(submit, wait_nr, flags, arg, sz) };
        }
        let all = flags | (self.int_flags & int_flags::ENTER_MASK) as u32;
        // SAFETY: forwarded contract.
        let ret = unsafe {
            sys::io_uring_enter2(self.enter_ring_fd as u32, submit, wait_nr, all, arg, sz)
        };
        if AUTO && ret < 0 {
            // SAFETY: forwarded contract.
            return unsafe { self.enter_again_through_fd(ret, submit, wait_nr, flags, arg, sz) };
        }
        ret
    }

    /// An enter through the library's automatic registration that the
    /// kernel refused because the calling task holds no such slot (see
    /// [`ring_fd::retry_through_fd`]) is made again through the fd;
    /// anything else returns `ret`.
    ///
    /// # Safety
    /// As for [`Self::enter`].
    #[cold]
    #[inline(never)]
    unsafe fn enter_again_through_fd(
        &mut self,
        ret: c_int,
        submit: u32,
        wait_nr: u32,
        flags: u32,
        arg: *const c_void,
        sz: usize,
    ) -> c_int {
        match ring_fd::retry_through_fd(self, ret) {
            // SAFETY: forwarded contract.
            Some(t) => unsafe {
                sys::io_uring_enter2(t.fd, submit, wait_nr, flags | t.flags, arg, sz)
            },
            None => ret,
        }
    }

    /// The enter of a ring with the library's automatic ring fd registration
    /// that failed the fast check: the slow check picks the slot or the fd.
    ///
    /// # Safety
    /// As for [`Self::enter`].
    #[cold]
    #[inline(never)]
    unsafe fn enter_auto_recheck(
        &mut self,
        submit: u32,
        wait_nr: u32,
        flags: u32,
        arg: *const c_void,
        sz: usize,
    ) -> c_int {
        let target = ring_fd::auto_enter_target_slow(self);
        // SAFETY: forwarded contract.
        unsafe { self.enter_through(target, submit, wait_nr, flags, arg, sz) }
    }

    /// One enter through `target` (a registered slot or the fd); an enter
    /// through a slot that the kernel refuses for this task is made again
    /// through the fd ([`Self::enter_again_through_fd`]).
    ///
    /// # Safety
    /// As for [`Self::enter`].
    #[inline(always)]
    unsafe fn enter_through(
        &mut self,
        target: EnterTarget,
        submit: u32,
        wait_nr: u32,
        flags: u32,
        arg: *const c_void,
        sz: usize,
    ) -> c_int {
        // SAFETY: forwarded contract.
        let ret = unsafe {
            sys::io_uring_enter2(target.fd, submit, wait_nr, flags | target.flags, arg, sz)
        };
        if ret < 0 && target.fd != self.ring_fd as u32 {
            // SAFETY: forwarded contract.
            return unsafe { self.enter_again_through_fd(ret, submit, wait_nr, flags, arg, sz) };
        }
        ret
    }

    /// [`Self::enter`] for rings with an automatic ring fd registration,
    /// statistics or transparent SQPOLL, kept out of line so plain rings
    /// pay one byte test.
    ///
    /// # Safety
    /// As for [`Self::enter`].
    #[cold]
    #[inline(never)]
    unsafe fn enter_slow(
        &mut self,
        submit: u32,
        wait_nr: u32,
        flags: u32,
        arg: *const c_void,
        sz: usize,
    ) -> c_int {
        let target = ring_fd::enter_target(self);
        let started = stats::wait_started(self, flags);
        if self.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0 {
            let view = transparent::SqView::of(self);
            let from = self.sq.sqe_head;
            let mut made = transparent::Made::default();
            // SAFETY: forwarded contract.
            let ret = unsafe {
                transparent::enter(
                    &view, target, from, submit, wait_nr, flags, arg, sz, &mut made,
                )
            };
            if ret > 0 {
                self.set_sqe_head(from.wrapping_add(ret as u32));
            }
            stats::count_transparent(self, made.wakeups, made.waited.then_some(started), ret);
            return ret;
        }
        // SAFETY: forwarded contract.
        let ret = unsafe { self.enter_through(target, submit, wait_nr, flags, arg, sz) };
        stats::count_enter(self, flags | target.flags, ret, started);
        ret
    }

    /// Hands out the next free SQE, or NULL when the SQ is full: the
    /// header's `_io_uring_get_sqe`, the one implementation (see below).
    #[inline]
    pub fn get_sqe(&mut self) -> *mut io_uring_sqe {
        // SAFETY: the header's function reads the ring's SQ words and
        // fields and writes `sq.sqe_tail` and the SQE it hands out, all of
        // a live ring (LiveRing) that `&mut self` holds exclusively.
        unsafe { _io_uring_get_sqe(ptr::from_mut(self).cast()) }
    }

    /// Publishes the SQEs handed out so far to the kernel's SQ tail; returns
    /// how many SQEs the kernel has not consumed yet.
    #[inline]
    pub fn flush_sq(&mut self) -> u32 {
        if self.rs_flags & rs_flags::EXT != 0 {
            self.flush_sq_with::<true, false>()
        } else {
            self.flush_sq_with::<false, false>()
        }
    }

    /// [`Self::flush_sq`]; `EXT` compiles in rsuring's extensions
    /// (statistics), so plain rings run a version without them; `PLAIN`:
    /// the ring holds `rs_flags::LIVE` alone (no SQ_REWIND, no SQ thread).
    #[inline(always)]
    fn flush_sq_with<const EXT: bool, const PLAIN: bool>(&mut self) -> u32 {
        let tail = self.sq.sqe_tail;
        if !PLAIN && self.flags & IORING_SETUP_SQ_REWIND != 0 {
            self.set_sqe_tail(0);
            return tail;
        }
        if EXT && self.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0 {
            return self.flush_transparent();
        }
        if self.sq.sqe_head != tail {
            if EXT {
                stats::count_published(self, tail.wrapping_sub(self.sq.sqe_head));
                if self.rs_flags & rs_flags::SQPOLL_SHARED != 0 {
                    self.check_chains(self.sq.sqe_head, tail);
                }
            }
            self.set_sqe_head(tail);
            self.publish_sq_tail(tail);
        }
        tail.wrapping_sub(self.sq_head(Ordering::Relaxed))
    }

    /// [`Self::flush_sq`] for a transparent SQPOLL ring. The poller takes
    /// what is published at once, so the published position (the kernel's
    /// SQ tail, which only we write) and the submitted position differ:
    /// `sq.sqe_head` stays where the SQEs submitted so far end, and the
    /// next enter (see `transparent::enter`) submits from there, counting
    /// them as a plain ring's enter would. Returns the SQEs to submit.
    fn flush_transparent(&mut self) -> u32 {
        let tail = self.sq.sqe_tail;
        let published = self.sq_tail();
        if published != tail {
            if !self.may_publish() {
                return 0;
            }
            if self.rs_flags & rs_flags::SQPOLL_SHARED != 0 {
                self.check_chains(published, tail);
            }
            self.publish_sq_tail(tail);
        }
        tail.wrapping_sub(self.sq.sqe_head)
    }

    /// Whether SQEs may be published to the kernel: not by a forked child
    /// on a transparent ring, whose poller would run them in the parent
    /// (the enter that follows reports `-EOWNERDEAD`).
    #[inline]
    fn may_publish(&self) -> bool {
        self.rs_flags & rs_flags::SQPOLL_TRANSPARENT == 0
            || !transparent::SqView::of(self).in_other_process()
    }

    /// Looks for link chains longer than a shared poller takes of one ring
    /// per round among the SQEs about to be published (`head..tail`).
    fn check_chains(&mut self, head: u32, tail: u32) {
        if self.rs_flags & rs_flags::LONG_CHAIN_NOTED != 0 && self.rs_flags & rs_flags::STATS == 0 {
            return;
        }
        let mut run = 0u32;
        let mut pos = head;
        while pos != tail {
            run += 1;
            if self.sqe_flags(pos) & (uapi::IOSQE_IO_LINK | uapi::IOSQE_IO_HARDLINK) == 0 {
                if run > sqpoll::SHARED_ROUND_SQES && sqpoll::long_chain_published(self, run) {
                    self.set_rs_flags(rs_flags::LONG_CHAIN_NOTED);
                    stats::count_chain_split(self);
                }
                run = 0;
            }
            pos = pos.wrapping_add(1);
        }
    }

    /// Whether submitting `submit` SQEs needs io_uring_enter; adds the
    /// wake-up flag when an idle SQ thread must be woken. `PLAIN`: the ring
    /// holds `rs_flags::LIVE` alone (no SQ thread).
    #[inline]
    fn sq_needs_enter<const PLAIN: bool>(&self, submit: u32, flags: &mut u32) -> bool {
        if submit == 0 {
            return false;
        }
        if PLAIN || self.flags & IORING_SETUP_SQPOLL == 0 {
            return true;
        }
        // The tail store must be visible to the SQ thread before we look at
        // whether it went to sleep; otherwise both sides could miss the other.
        fence(Ordering::SeqCst);
        if self.sq_flags() & IORING_SQ_NEED_WAKEUP != 0 {
            *flags |= IORING_ENTER_SQ_WAKEUP;
            return true;
        }
        false
    }

    /// Completions are stuck in the kernel (overflow list or pending task
    /// work) until we enter with GETEVENTS.
    #[inline]
    pub fn cq_needs_flush(&self) -> bool {
        self.sq_flags() & CQ_STUCK != 0
    }

    #[inline]
    fn cq_needs_enter(&self) -> bool {
        self.int_flags & int_flags::CQ_ENTER != 0 || self.cq_needs_flush()
    }

    /// Looks at the CQ head without waiting. Returns (error, cqe, available).
    /// Internal timeout completions of the pre-EXT_ARG wait path are consumed
    /// here, as liburing's inline peek does.
    #[inline]
    pub fn peek_cqe(&mut self) -> (c_int, *mut io_uring_cqe, u32) {
        let mut err = 0;
        loop {
            let tail = self.cq_tail();
            let head = self.cq_head();
            let available = tail.wrapping_sub(head);
            if available == 0 {
                return (err, ptr::null_mut(), 0);
            }
            let cqe = self.cqe_at(head);
            // SAFETY: the CQE at head lies in the live CQ (LiveRing) and is
            // published (acquire on the tail above): the kernel is done with it.
            let c = unsafe { &*cqe };
            // Padding the kernel posts at the wrap of a mixed-size CQ.
            if c.flags & IORING_CQE_F_SKIP != 0 {
                self.cq_advance(cqe_slots(c));
                continue;
            }
            if self.features & IORING_FEAT_EXT_ARG == 0 && c.user_data == LIBURING_UDATA_TIMEOUT {
                if c.res < 0 {
                    err = c.res;
                }
                self.cq_advance(cqe_slots(c));
                if err == 0 {
                    continue;
                }
                return (err, ptr::null_mut(), available);
            }
            return (err, cqe, available);
        }
    }

    /// liburing's central wait loop: submit and/or wait as `data` says,
    /// entering the kernel only when needed.
    fn get_cqe_loop(&mut self, cqe_ptr: &mut CqeOut, data: &mut GetData) -> c_int {
        let mut cqe;
        let mut looped = false;
        let mut err = 0;
        stats::observe_cq(self);
        loop {
            let mut need_enter = false;
            let mut flags = 0;
            let (ret, mut c, mut nr_available) = self.peek_cqe();
            if data.fresh && !looped && data.submit != 0 {
                // See GetData::fresh: nothing yet, as on a plain ring.
                c = ptr::null_mut();
                nr_available = 0;
            }
            cqe = c;
            if ret != 0 {
                if err == 0 {
                    err = ret;
                }
                break;
            }
            if cqe.is_null() && data.wait_nr == 0 && data.submit == 0 {
                // Nothing to submit or wait for: enter only once, and only
                // if completions are stuck in the kernel.
                if looped || !self.cq_needs_enter() {
                    if err == 0 {
                        err = -libc::EAGAIN;
                    }
                    break;
                }
                need_enter = true;
            }
            if data.wait_nr > nr_available || need_enter {
                flags |= IORING_ENTER_GETEVENTS | data.get_flags;
                need_enter = true;
            }
            if self.sq_needs_enter::<false>(data.submit, &mut flags) {
                need_enter = true;
            }
            if !need_enter {
                break;
            }
            if looped && data.has_ts {
                // The kernel already waited the full timeout once.
                if data.get_flags & uapi::IORING_ENTER_EXT_ARG_REG != 0 {
                    if cqe.is_null() && err == 0 {
                        err = -libc::ETIME;
                    }
                } else {
                    // SAFETY: with has_ts and EXT_ARG, arg is our getevents arg.
                    let arg = unsafe { &*(data.arg as *const io_uring_getevents_arg) };
                    if cqe.is_null() && arg.ts != 0 && err == 0 {
                        err = -libc::ETIME;
                    }
                }
                break;
            }
            // SAFETY: data.arg/sz describe a valid sigmask or getevents arg.
            let ret = unsafe { self.enter(data.submit, data.wait_nr, flags, data.arg, data.sz) };
            if ret < 0 {
                if err == 0 {
                    err = ret;
                }
                break;
            }
            // As liburing: what the kernel took is off the count, and a
            // submission that stopped early (a failing SQE) is entered
            // again for the rest. A call that took nothing means nothing
            // is queued, so a count larger than the SQ holds cannot spin.
            data.submit = if ret == 0 {
                0
            } else {
                data.submit.saturating_sub(ret as u32)
            };
            if !cqe.is_null() {
                break;
            }
            if !looped {
                looped = true;
                err = ret;
            }
        }
        cqe_ptr.write(cqe);
        err
    }

    /// `__io_uring_get_cqe`.
    pub fn get_cqe(
        &mut self,
        cqe_ptr: &mut CqeOut,
        submit: u32,
        wait_nr: u32,
        sigmask: *const libc::sigset_t,
    ) -> c_int {
        self.get_cqe_with(cqe_ptr, submit, wait_nr, sigmask, false)
    }

    /// [`Self::get_cqe`], `fresh` as in [`GetData`].
    fn get_cqe_with(
        &mut self,
        cqe_ptr: &mut CqeOut,
        submit: u32,
        wait_nr: u32,
        sigmask: *const libc::sigset_t,
        fresh: bool,
    ) -> c_int {
        let mut data = GetData {
            submit,
            wait_nr,
            get_flags: 0,
            arg: sigmask.cast(),
            sz: NSIG_BYTES,
            has_ts: false,
            fresh,
        };
        self.get_cqe_loop(cqe_ptr, &mut data)
    }

    /// Whether a call about to publish SQEs makes its CQEs [`GetData`]'s
    /// `fresh`: a transparent SQPOLL ring with an empty CQ.
    fn transparent_cq_empty(&self) -> bool {
        self.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0 && self.cq_ready() == 0
    }

    /// `io_uring_get_events`: flush overflowed completions and run task work.
    pub fn get_events(&mut self) -> c_int {
        stats::observe_cq(self);
        let flags = IORING_ENTER_GETEVENTS;
        // SAFETY: no argument is passed.
        unsafe { self.enter(0, 0, flags, ptr::null(), NSIG_BYTES) }
    }

    /// Fills `out` with up to `out.len()` ready CQEs without consuming them.
    #[inline(always)]
    fn peek_batch_inner(&mut self, out: &mut [CqeOut]) -> u32 {
        if self.flags & IORING_SETUP_CQE_MIXED != 0 {
            return self.peek_batch_mixed(out);
        }
        self.peek_batch_plain(out)
    }

    /// [`Self::peek_batch_inner`] for a ring whose CQEs all take one slot.
    #[inline(always)]
    fn peek_batch_plain(&mut self, out: &mut [CqeOut]) -> u32 {
        let (head, n) = self.ready_upto(out.len());
        self.fill_ready(head, &mut out[..n])
    }

    /// The CQ head and how many CQEs are ready from it, at most `max`:
    /// one read of the head (only the application writes it), then the
    /// tail with acquire.
    #[inline(always)]
    fn ready_upto(&self, max: usize) -> (u32, usize) {
        let head = self.cq_head();
        (head, (self.cq_tail().wrapping_sub(head) as usize).min(max))
    }

    /// Stores the pointers of the `out.len()` ready CQEs from `head`;
    /// returns their count.
    #[inline(always)]
    fn fill_ready(&self, head: u32, out: &mut [CqeOut]) -> u32 {
        match out {
            [] => 0,
            // The commonest small batch (a submit of one): no loop at all.
            [one] => {
                one.write(self.cqe_at(head));
                1
            }
            _ => self.fill_many(head, out),
        }
    }

    /// [`Self::fill_ready`] of two or more CQEs, out of line (a tail call),
    /// so that the entry points keep no registers for the loops; from
    /// [`WIDE_FILL_MIN`] on with 16-byte stores.
    #[inline(never)]
    fn fill_many(&self, head: u32, out: &mut [CqeOut]) -> u32 {
        if out.len() >= WIDE_FILL_MIN {
            self.fill_strided::<true>(head, out);
        } else {
            self.fill_strided::<false>(head, out);
        }
        out.len() as u32
    }

    /// Stores the pointers of the `out.len()` CQEs from ring position
    /// `head` (all ready, at most the ring size). They run from the head to
    /// the end of the ring and go on at its start: two runs of evenly
    /// spaced slots, so each pointer is the previous one plus a stride (a
    /// store and an add) instead of a masked, shifted ring position.
    #[inline(always)]
    fn fill_strided<const WIDE: bool>(&self, head: u32, out: &mut [CqeOut]) {
        let first = head & self.cq.ring_mask;
        let stride = 1usize << self.cqe_shift();
        let before_wrap = out.len().min((self.cq.ring_mask - first) as usize + 1);
        let (to_end, from_start) = out.split_at_mut(before_wrap);
        prefetch(self.cq.cqes.wrapping_add(first as usize * stride));
        fill_run::<WIDE>(
            to_end,
            self.cq.cqes.wrapping_add(first as usize * stride),
            stride,
        );
        fill_run::<WIDE>(from_start, self.cq.cqes, stride);
    }

    /// [`Self::peek_batch_inner`] for CQE_MIXED rings, where a CQE takes one
    /// or two slots and the kernel pads the wrap with skip entries: returns
    /// real CQEs only, consuming a skip entry at the head, and stops before
    /// one further on (it can only be consumed once it is at the head).
    /// Out of line: the plain rings' reap keeps its registers.
    #[cold]
    #[inline(never)]
    fn peek_batch_mixed(&mut self, out: &mut [CqeOut]) -> u32 {
        let ready = self.cq_ready();
        let mut head = self.cq_head();
        let last = head.wrapping_add(ready);
        let mut n = 0;
        while head != last && n < out.len() {
            let cqe = self.cqe_at(head);
            // SAFETY: the CQE lies in the live CQ (LiveRing); entries in
            // [head, tail) are published (acquire in cq_ready).
            let c = unsafe { &*cqe };
            if c.flags & IORING_CQE_F_SKIP != 0 {
                if n != 0 {
                    break;
                }
                self.cq_advance(1);
                head = head.wrapping_add(1);
                continue;
            }
            head = head.wrapping_add(cqe_slots(c));
            out[n].write(cqe);
            n += 1;
        }
        n as u32
    }

    /// `io_uring_peek_batch_cqe`: up to `out.len()` CQEs.
    #[inline(always)]
    pub fn peek_batch_cqe(&mut self, out: &mut [CqeOut]) -> u32 {
        self.observe_cq();
        let n = self.peek_batch_inner(out);
        if n != 0 || out.is_empty() || !self.cq_needs_flush() {
            return n;
        }
        self.flush_and_peek_batch(out)
    }

    /// [`Self::peek_batch_cqe`] of a ring with one-slot CQEs when it needs
    /// no enter: the count, or None when the CQ is mixed-size or nothing is
    /// ready and completions wait in the kernel (the full call flushes
    /// them). Whether any is ready is decided before a pointer is stored,
    /// so that the fill is the last step (a tail call for batches); inline
    /// code that cannot unwind, so the entry point needs no catching frame.
    #[inline(always)]
    pub fn peek_batch_ready(&mut self, out: &mut [CqeOut]) -> Option<u32> {
        if self.flags & IORING_SETUP_CQE_MIXED != 0 {
            return None;
        }
        let (head, n) = self.ready_upto(out.len());
        if n == 0 {
            if out.is_empty() || !self.cq_needs_flush() {
                return Some(0);
            }
            return None;
        }
        Some(self.fill_ready(head, &mut out[..n]))
    }

    /// [`Self::peek_batch_cqe`] when the CQ looked empty but completions
    /// wait on the overflow list or in task work: one enter, then a peek.
    #[cold]
    #[inline(never)]
    fn flush_and_peek_batch(&mut self, out: &mut [CqeOut]) -> u32 {
        self.get_events();
        self.peek_batch_inner(out)
    }

    /// `stats::observe_cq`, with the statistics work out of line so the
    /// reaping functions of a ring without statistics stay small.
    #[inline(always)]
    fn observe_cq(&self) {
        #[cold]
        #[inline(never)]
        fn observe(ring: &LiveRing) {
            stats::observe_cq(ring);
        }
        if self.rs_flags & rs_flags::STATS != 0 {
            observe(self);
        }
    }

    /// Queues an internal timeout SQE so a wait returns after `ts` on kernels
    /// without EXT_ARG. Returns the number of SQEs to submit.
    fn submit_timeout(&mut self, wait_nr: u32, ts: *const __kernel_timespec) -> c_int {
        let mut sqe = self.get_sqe();
        if sqe.is_null() {
            let ret = self.submit_and_wait(0);
            if ret < 0 {
                return ret;
            }
            sqe = self.get_sqe();
            if sqe.is_null() {
                return -libc::EAGAIN;
            }
        }
        // SAFETY: get_sqe returned a valid slot that we own until flushed.
        unsafe {
            let s = &mut *sqe;
            s.opcode = IORING_OP_TIMEOUT;
            s.fd = -1;
            s.off = wait_nr as u64;
            s.addr = ts as u64;
            s.len = 1;
            s.user_data = LIBURING_UDATA_TIMEOUT;
        }
        self.flush_sq() as c_int
    }

    /// Waits with an EXT_ARG timeout (and optional minimum wait).
    fn wait_cqes_ext(
        &mut self,
        cqe_ptr: &mut CqeOut,
        submit: Published,
        wait_nr: u32,
        ts: *const __kernel_timespec,
        min_wait_usec: u32,
        sigmask: *const libc::sigset_t,
    ) -> c_int {
        let arg = io_uring_getevents_arg {
            sigmask: sigmask as u64,
            sigmask_sz: NSIG_BYTES as u32,
            min_wait_usec,
            ts: ts as u64,
        };
        let mut data = GetData {
            submit: submit.count,
            wait_nr,
            get_flags: IORING_ENTER_EXT_ARG,
            arg: (&arg as *const io_uring_getevents_arg).cast(),
            sz: core::mem::size_of::<io_uring_getevents_arg>(),
            has_ts: !ts.is_null(),
            fresh: submit.fresh,
        };
        self.get_cqe_loop(cqe_ptr, &mut data)
    }

    /// `io_uring_wait_cqes`.
    pub fn wait_cqes(
        &mut self,
        cqe_ptr: &mut CqeOut,
        wait_nr: u32,
        ts: *const __kernel_timespec,
        sigmask: *const libc::sigset_t,
    ) -> c_int {
        let mut to_submit = 0;
        if !ts.is_null() {
            if self.features & IORING_FEAT_EXT_ARG != 0 {
                return self.wait_cqes_ext(cqe_ptr, Published::NONE, wait_nr, ts, 0, sigmask);
            }
            to_submit = self.submit_timeout(wait_nr, ts);
            if to_submit < 0 {
                return to_submit;
            }
        }
        self.get_cqe(cqe_ptr, to_submit as u32, wait_nr, sigmask)
    }

    /// `io_uring_wait_cqe_timeout`: one CQE, or `-ETIME` after `ts`.
    pub fn wait_cqe_timeout(
        &mut self,
        cqe_ptr: &mut CqeOut,
        ts: *const __kernel_timespec,
    ) -> c_int {
        self.wait_cqes(cqe_ptr, 1, ts, ptr::null())
    }

    /// `io_uring_wait_cqes_min_timeout`: always the EXT_ARG path; `-EINVAL`
    /// on kernels without IORING_FEAT_MIN_TIMEOUT.
    pub fn wait_cqes_min(
        &mut self,
        cqe_ptr: &mut CqeOut,
        wait_nr: u32,
        ts: *const __kernel_timespec,
        min_wait_usec: u32,
        sigmask: *const libc::sigset_t,
    ) -> c_int {
        if self.features & IORING_FEAT_MIN_TIMEOUT == 0 {
            return -libc::EINVAL;
        }
        self.wait_cqes_ext(
            cqe_ptr,
            Published::NONE,
            wait_nr,
            ts,
            min_wait_usec,
            sigmask,
        )
    }

    /// `io_uring_submit_and_wait_min_timeout`; `-EINVAL` on kernels without
    /// IORING_FEAT_MIN_TIMEOUT.
    pub fn submit_and_wait_min_timeout(
        &mut self,
        cqe_ptr: &mut CqeOut,
        wait_nr: u32,
        ts: *const __kernel_timespec,
        min_wait_usec: u32,
        sigmask: *const libc::sigset_t,
    ) -> c_int {
        if self.features & IORING_FEAT_MIN_TIMEOUT == 0 {
            return -libc::EINVAL;
        }
        self.submit_and_wait_timeout(cqe_ptr, wait_nr, ts, min_wait_usec, sigmask)
    }

    /// `io_uring_submit_and_wait_timeout` (and the min-timeout variant).
    pub fn submit_and_wait_timeout(
        &mut self,
        cqe_ptr: &mut CqeOut,
        wait_nr: u32,
        ts: *const __kernel_timespec,
        min_wait_usec: u32,
        sigmask: *const libc::sigset_t,
    ) -> c_int {
        let to_submit;
        let fresh = self.transparent_cq_empty();
        if !ts.is_null() {
            if self.features & IORING_FEAT_EXT_ARG != 0 {
                let submit = Published {
                    count: self.flush_sq(),
                    fresh,
                };
                return self.wait_cqes_ext(cqe_ptr, submit, wait_nr, ts, min_wait_usec, sigmask);
            }
            to_submit = self.submit_timeout(wait_nr, ts);
            if to_submit < 0 {
                return to_submit;
            }
        } else {
            to_submit = self.flush_sq() as c_int;
        }
        self.get_cqe_with(cqe_ptr, to_submit as u32, wait_nr, sigmask, fresh)
    }

    /// Enters the kernel to submit `submitted` SQEs and/or wait for
    /// `wait_nr` completions, or skips the system call when neither the SQ
    /// (an awake SQ thread picks SQEs up itself) nor the CQ needs it.
    /// `EXT`: with rsuring's extensions; `PLAIN`: for a ring marked
    /// `rs_flags::LIVE` alone (no extension, no SQ thread, no SQ_REWIND,
    /// no IOPOLL without an SQ thread).
    /// `AUTO`: as `PLAIN`, with an automatic ring fd registration
    /// (`rs_flags == LIVE | AUTO_REG`, see [`Self::enter_with`]).
    #[inline(always)]
    fn submit_with<const EXT: bool, const PLAIN: bool, const AUTO: bool>(
        &mut self,
        wait_nr: u32,
        getevents: bool,
    ) -> c_int {
        if EXT && !self.may_publish() {
            transparent::refuse(transparent::Refusal::Fork);
            return -libc::EOWNERDEAD;
        }
        let submitted = self.flush_sq_with::<EXT, PLAIN>();
        if EXT {
            stats::observe_cq(self);
        }
        let flags = if getevents || wait_nr != 0 {
            // The enter is certain (a branch of its own, so that the
            // commonest submit-and-wait tests nothing more): GETEVENTS,
            // and the wake-up flag an idle SQ thread needs.
            let mut flags = IORING_ENTER_GETEVENTS;
            let _ = self.sq_needs_enter::<PLAIN>(submitted, &mut flags);
            flags
        } else if PLAIN {
            // No SQ thread and no CQ_ENTER (that sets FULL_SUBMIT): an
            // enter when there is something to submit, with GETEVENTS (a
            // bool's 0 or 1 times the flag, no branch) when completions
            // wait in the kernel; nothing to submit is a branch of its own.
            if submitted == 0 {
                if self.sq_flags() & CQ_STUCK == 0 {
                    return 0;
                }
                IORING_ENTER_GETEVENTS
            } else {
                // GETEVENTS (1) when either bit (2 or 4) is set, without a
                // compare: 0 + 6 and 2 + 6, 4 + 6, 6 + 6 on either side of 8.
                ((self.sq_flags() & CQ_STUCK) + CQ_STUCK) >> 3
            }
        } else {
            let cq_needs_enter = self.cq_needs_enter();
            let mut flags = 0;
            if !self.sq_needs_enter::<PLAIN>(submitted, &mut flags) && !cq_needs_enter {
                return submitted as c_int;
            }
            if cq_needs_enter {
                flags |= IORING_ENTER_GETEVENTS;
            }
            flags
        };
        // SAFETY: no argument is passed.
        unsafe { self.enter_with::<EXT, AUTO>(submitted, wait_nr, flags, ptr::null(), NSIG_BYTES) }
    }

    /// Submission for rings using rsuring's extensions, out of line.
    #[inline(never)]
    pub fn submit_ext(&mut self, wait_nr: u32, getevents: bool) -> c_int {
        self.submit_with::<true, false, false>(wait_nr, getevents)
    }

    /// Submission for a ring holding `rs_flags::LIVE` alone (the caller checked:
    /// no extension, no SQ thread, no SQ_REWIND): inline code and the
    /// system call only, nothing that can unwind.
    #[inline(always)]
    pub fn submit_plain(&mut self, wait_nr: u32) -> c_int {
        self.submit_with::<false, true, false>(wait_nr, false)
    }

    /// [`Self::submit_plain`] for a ring whose only extension is the
    /// library's automatic ring fd registration (`rs_flags == LIVE |
    /// AUTO_REG`): the same code with the slot-or-fd choice of
    /// [`ring_fd::enter_target`] before the enter.
    #[inline(always)]
    pub fn submit_auto(&mut self, wait_nr: u32) -> c_int {
        self.submit_with::<false, true, true>(wait_nr, false)
    }

    /// Submission for a ring that uses none of rsuring's extensions (no
    /// bit of `rs_flags::EXT`, the caller checked), of any setup.
    #[inline(always)]
    pub fn submit_no_ext(&mut self, wait_nr: u32) -> c_int {
        self.submit_with::<false, false, false>(wait_nr, false)
    }

    /// `io_uring_submit_and_wait`'s choice of path, made here only: the
    /// extensions' (`ext`: [`Self::submit_ext`], through a panic boundary
    /// of its own where the FFI layer calls) or the plain one of any setup.
    #[inline(always)]
    pub fn submit_and_wait_with(
        &mut self,
        wait_nr: u32,
        ext: impl FnOnce(&mut Self) -> c_int,
    ) -> c_int {
        if self.rs_flags & rs_flags::EXT != 0 {
            return ext(self);
        }
        self.submit_no_ext(wait_nr)
    }

    /// `io_uring_submit_and_wait`, for the library's own calls.
    #[inline]
    pub fn submit_and_wait(&mut self, wait_nr: u32) -> c_int {
        self.submit_and_wait_with(wait_nr, |r| r.submit_ext(wait_nr, false))
    }

    /// `io_uring_submit_and_get_events`.
    pub fn submit_and_get_events(&mut self) -> c_int {
        if self.rs_flags & rs_flags::EXT != 0 {
            return self.submit_ext(0, true);
        }
        self.submit_with::<false, false, false>(0, true)
    }

    /// `__io_uring_sqring_wait`: sleep until the SQ thread frees SQ space.
    pub fn sqring_wait(&mut self) -> c_int {
        let flags = IORING_ENTER_SQ_WAIT;
        // SAFETY: no argument is passed.
        unsafe { self.enter(0, 0, flags, ptr::null(), NSIG_BYTES) }
    }

    /// `rsuring_wait_batch_cqe`: at most one io_uring_enter, waiting until
    /// `min` CQEs are ready or `ts` passes, then up to `out.len()` CQE
    /// pointers in `out`, head untouched (the caller advances once for the
    /// batch).
    /// Returns the count; `-ETIME` (or `-EINTR`, ...) only when none is ready.
    #[inline(never)]
    pub fn wait_batch_cqe(
        &mut self,
        out: &mut [CqeOut],
        min: u32,
        ts: *const __kernel_timespec,
    ) -> c_int {
        if !batch_args_valid(out, min) {
            return -libc::EINVAL;
        }
        self.observe_cq();
        let n = self.peek_batch_inner(out);
        // With DEFER_TASKRUN, completions only reach the CQ when the owner
        // enters; without TASKRUN_FLAG nothing says they are pending, so an
        // empty non-blocking reap enters once to run them.
        let deferred = self.flags & uapi::IORING_SETUP_DEFER_TASKRUN != 0;
        if n >= min && !(n == 0 && (self.cq_needs_enter() || deferred)) {
            return n as c_int;
        }
        self.wait_batch_enter(out, min, ts)
    }

    /// The CQE at the head when `__io_uring_get_cqe` with nothing to
    /// submit would return it without entering: at least `wait_nr` (and at
    /// least one) CQEs are ready, and the head is an ordinary CQE (no
    /// mixed-size CQ, whose skip entries the full loop consumes; EXT_ARG,
    /// so no internal timeout CQE). Whatever the ring's setup, liburing's
    /// loop enters for none of these (it needs more CQEs than are ready,
    /// or none, or something to submit); None sends the call there.
    /// Inline code that cannot unwind.
    #[inline(always)]
    pub fn ready_head_cqe(&self, wait_nr: u32) -> Option<*mut io_uring_cqe> {
        if self.flags & IORING_SETUP_CQE_MIXED != 0 || self.features & IORING_FEAT_EXT_ARG == 0 {
            return None;
        }
        let head = self.cq_head();
        let ready = self.cq_tail().wrapping_sub(head);
        if ready < wait_nr.max(1) {
            return None;
        }
        Some(self.cqe_at(head))
    }

    /// [`Self::wait_batch_cqe`] without a system call, for a ring without
    /// statistics (the caller checked `rs_flags`): the count when the
    /// ready CQEs are enough (or the arguments are wrong), None when the
    /// call has to enter or the ring's CQ is mixed-size (then
    /// [`Self::wait_batch_cqe`] does it all). Inline code that cannot
    /// unwind, so that the entry point's reap of ready CQEs needs no
    /// catching frame.
    #[inline(always)]
    pub fn wait_batch_ready(&mut self, out: &mut [CqeOut], min: u32) -> Option<c_int> {
        if !batch_args_valid(out, min) {
            return Some(-libc::EINVAL);
        }
        if self.flags & IORING_SETUP_CQE_MIXED != 0 {
            return None;
        }
        // Whether to return is decided before a pointer is stored: the way
        // out to the full call keeps no more than the arguments.
        let (head, n) = self.ready_upto(out.len());
        let deferred = self.flags & uapi::IORING_SETUP_DEFER_TASKRUN != 0;
        if (n as u32) < min || (n == 0 && (self.cq_needs_enter() || deferred)) {
            return None;
        }
        Some(self.fill_ready(head, &mut out[..n]) as c_int)
    }

    /// [`Self::wait_batch_cqe`] when it has to enter: one io_uring_enter,
    /// then the peek again. Out of line, so that a reap of ready CQEs saves
    /// no registers for the system call.
    #[inline(never)]
    fn wait_batch_enter(
        &mut self,
        out: &mut [CqeOut],
        min: u32,
        ts: *const __kernel_timespec,
    ) -> c_int {
        let mut flags = IORING_ENTER_GETEVENTS;
        let arg = io_uring_getevents_arg {
            sigmask: 0,
            sigmask_sz: NSIG_BYTES as u32,
            min_wait_usec: 0,
            ts: ts as u64,
        };
        let ret = if ts.is_null() {
            // SAFETY: no argument is passed.
            unsafe { self.enter(0, min, flags, ptr::null(), NSIG_BYTES) }
        } else {
            if self.features & IORING_FEAT_EXT_ARG == 0 {
                // A timeout would need an extra internal SQE and enter.
                return -libc::EINVAL;
            }
            flags |= IORING_ENTER_EXT_ARG;
            let sz = core::mem::size_of::<io_uring_getevents_arg>();
            // SAFETY: `arg` is a valid getevents argument for the call.
            unsafe {
                self.enter(
                    0,
                    min,
                    flags,
                    (&arg as *const io_uring_getevents_arg).cast(),
                    sz,
                )
            }
        };
        let n = self.peek_batch_inner(out);
        if n == 0 && ret < 0 {
            return ret;
        }
        n as c_int
    }

    /// `io_uring_submit_and_wait_reg`: submit and wait with the wait
    /// parameters in registered wait region slot `reg_index`.
    pub fn submit_and_wait_reg(
        &mut self,
        cqe_ptr: &mut CqeOut,
        wait_nr: u32,
        reg_index: c_int,
    ) -> c_int {
        if self.features & IORING_FEAT_EXT_ARG == 0 {
            return -libc::EINVAL;
        }
        let offset = (reg_index as isize as usize).wrapping_mul(REG_WAIT_SIZE);
        let fresh = self.transparent_cq_empty();
        let mut data = GetData {
            submit: self.flush_sq(),
            wait_nr,
            get_flags: IORING_ENTER_EXT_ARG | uapi::IORING_ENTER_EXT_ARG_REG,
            arg: offset as *const c_void,
            sz: REG_WAIT_SIZE,
            has_ts: true,
            fresh,
        };
        self.get_cqe_loop(cqe_ptr, &mut data)
    }
}

/// The SQ flags that say completions are stuck in the kernel (overflow
/// list, pending task work).
const CQ_STUCK: u32 = IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN;
const _: () = assert!(CQ_STUCK == 6 && IORING_ENTER_GETEVENTS == 1);

/// `sizeof(struct io_uring_reg_wait)`: a __kernel_timespec, min_wait_usec,
/// flags, sigmask, sigmask_sz and padding.
const REG_WAIT_SIZE: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_32_byte_cqe_of_a_mixed_ring_takes_two_slots() {
        let mut cqe = io_uring_cqe::default();
        assert_eq!(cqe_slots(&cqe), 1);
        cqe.flags = IORING_CQE_F_32;
        assert_eq!(cqe_slots(&cqe), 2);
        cqe.flags = !IORING_CQE_F_32;
        assert_eq!(cqe_slots(&cqe), 1, "no other flag counts");
    }
}
