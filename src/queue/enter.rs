//! Entering the kernel: `io_uring_enter` on a ring, through its registered
//! index, its fd, or the transparent poller's hand-over, counted in the
//! statistics.

use super::*;

impl LiveRing {
    /// io_uring_enter on this ring with `args` (through its registered index
    /// when it has one, adding the ring's own enter flags), counted in the
    /// statistics.
    ///
    /// # Safety
    /// `args.arg`/`args.sz` must describe a valid sigmask or getevents
    /// argument (or an offset into the registered wait region, with
    /// `IORING_ENTER_EXT_ARG_REG`).
    #[inline(always)]
    pub(super) unsafe fn enter(&mut self, args: EnterArgs) -> c_int {
        // SAFETY: forwarded contract.
        unsafe { self.enter_with::<true, false>(args) }
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
    pub(super) unsafe fn enter_with<const EXT: bool, const AUTO: bool>(
        &mut self,
        args: EnterArgs,
    ) -> c_int {
        if EXT && self.rs_flags & rs_flags::ENTER_SLOW != 0 {
            // SAFETY: forwarded contract.
            return unsafe { self.enter_slow(args) };
        }
        if AUTO && !ring_fd::holds_current_key(self) {
            // Not the thread holding the registration, or the epoch moved on.
            // SAFETY: forwarded contract.
            return unsafe { self.enter_auto_recheck(args) };
        }
        let all = args.with_flags((self.int_flags & int_flags::ENTER_MASK) as u32);
        // SAFETY: forwarded contract.
        let ret = unsafe { sys::io_uring_enter2(self.enter_ring_fd as u32, all) };
        if AUTO && ret < 0 {
            // SAFETY: forwarded contract.
            return unsafe { self.enter_again_through_fd(ret, args) };
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
    pub(super) unsafe fn enter_again_through_fd(&mut self, ret: c_int, args: EnterArgs) -> c_int {
        match ring_fd::retry_through_fd(self, ret) {
            // SAFETY: forwarded contract.
            Some(t) => unsafe { sys::io_uring_enter2(t.fd, args.with_flags(t.flags)) },
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
    pub(super) unsafe fn enter_auto_recheck(&mut self, args: EnterArgs) -> c_int {
        let target = ring_fd::auto_enter_target_slow(self);
        // SAFETY: forwarded contract.
        unsafe { self.enter_through(target, args) }
    }

    /// One enter through `target` (a registered slot or the fd); an enter
    /// through a slot that the kernel refuses for this task is made again
    /// through the fd ([`Self::enter_again_through_fd`]).
    ///
    /// # Safety
    /// As for [`Self::enter`].
    #[inline(always)]
    pub(super) unsafe fn enter_through(&mut self, target: EnterTarget, args: EnterArgs) -> c_int {
        // SAFETY: forwarded contract.
        let ret = unsafe { sys::io_uring_enter2(target.fd, args.with_flags(target.flags)) };
        if ret < 0 && target.fd != self.ring_fd as u32 {
            // SAFETY: forwarded contract.
            return unsafe { self.enter_again_through_fd(ret, args) };
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
    pub(super) unsafe fn enter_slow(&mut self, args: EnterArgs) -> c_int {
        let target = ring_fd::enter_target(self);
        let started = stats::wait_started(self, args.flags);
        if self.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0 {
            let view = transparent::SqView::of(self);
            let from = self.sq.sqe_head;
            let mut made = transparent::Made::default();
            // SAFETY: forwarded contract.
            let ret = unsafe { transparent::enter(&view, target, from, args, &mut made) };
            if ret > 0 {
                self.set_sqe_head(from.wrapping_add(ret as u32));
            }
            stats::count_transparent(self, made.wakeups, made.waited.then_some(started), ret);
            return ret;
        }
        // SAFETY: forwarded contract.
        let ret = unsafe { self.enter_through(target, args) };
        stats::count_enter(self, args.flags | target.flags, ret, started);
        ret
    }
}
