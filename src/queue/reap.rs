//! Finding completions one at a time: peeking the CQ head, liburing's
//! `__io_uring_get_cqe` loop, and flushing completions stuck in the kernel.

use super::*;

impl LiveRing {
    /// Completions are stuck in the kernel (overflow list or pending task
    /// work) until we enter with GETEVENTS.
    #[inline]
    pub fn cq_needs_flush(&self) -> bool {
        self.sq_flags() & CQ_STUCK != 0
    }

    #[inline]
    pub(super) fn cq_needs_enter(&self) -> bool {
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
    pub(super) fn get_cqe_loop(&mut self, cqe_ptr: &mut CqeOut, data: &mut GetData) -> c_int {
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
            let args = EnterArgs {
                to_submit: data.submit,
                min_complete: data.wait_nr,
                flags,
                arg: data.arg,
                sz: data.sz,
            };
            // SAFETY: data.arg/sz describe a valid sigmask or getevents arg.
            let ret = unsafe { self.enter(args) };
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
    pub(super) fn get_cqe_with(
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
    pub(super) fn transparent_cq_empty(&self) -> bool {
        self.rs_flags & rs_flags::SQPOLL_TRANSPARENT != 0 && self.cq_ready() == 0
    }

    /// `io_uring_get_events`: flush overflowed completions and run task work.
    pub fn get_events(&mut self) -> c_int {
        stats::observe_cq(self);
        // SAFETY: no argument is passed.
        unsafe { self.enter(EnterArgs::new(0, 0, IORING_ENTER_GETEVENTS)) }
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

    /// `stats::observe_cq`, with the statistics work out of line so the
    /// reaping functions of a ring without statistics stay small.
    #[inline(always)]
    pub(super) fn observe_cq(&self) {
        #[cold]
        #[inline(never)]
        fn observe(ring: &LiveRing) {
            stats::observe_cq(ring);
        }
        if self.rs_flags & rs_flags::STATS != 0 {
            observe(self);
        }
    }
}
