//! Handing out SQEs and submitting them: publishing the SQ tail (with the
//! checks a transparent or forked ring needs), deciding whether an enter
//! is needed, and the submit paths by `rs_flags`.

use super::*;

impl LiveRing {
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
    pub(super) fn flush_sq_with<const EXT: bool, const PLAIN: bool>(&mut self) -> u32 {
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
    pub(super) fn flush_transparent(&mut self) -> u32 {
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
    pub(super) fn may_publish(&self) -> bool {
        self.rs_flags & rs_flags::SQPOLL_TRANSPARENT == 0
            || !transparent::SqView::of(self).in_other_process()
    }

    /// Looks for link chains longer than a shared poller takes of one ring
    /// per round among the SQEs about to be published (`head..tail`).
    pub(super) fn check_chains(&mut self, head: u32, tail: u32) {
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
    pub(super) fn sq_needs_enter<const PLAIN: bool>(&self, submit: u32, flags: &mut u32) -> bool {
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

    /// Enters the kernel to submit `submitted` SQEs and/or wait for
    /// `wait_nr` completions, or skips the system call when neither the SQ
    /// (an awake SQ thread picks SQEs up itself) nor the CQ needs it.
    /// `EXT`: with rsuring's extensions; `PLAIN`: for a ring marked
    /// `rs_flags::LIVE` alone (no extension, no SQ thread, no SQ_REWIND,
    /// no IOPOLL without an SQ thread).
    /// `AUTO`: as `PLAIN`, with an automatic ring fd registration
    /// (`rs_flags == LIVE | AUTO_REG`, see [`Self::enter_with`]).
    #[inline(always)]
    pub(super) fn submit_with<const EXT: bool, const PLAIN: bool, const AUTO: bool>(
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
        unsafe { self.enter_with::<EXT, AUTO>(EnterArgs::new(submitted, wait_nr, flags)) }
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
        // SAFETY: no argument is passed.
        unsafe { self.enter(EnterArgs::new(0, 0, IORING_ENTER_SQ_WAIT)) }
    }
}
