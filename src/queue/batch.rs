//! Reaping in batches: `io_uring_peek_batch_cqe` and
//! `rsuring_wait_batch_cqe` (CQE pointers filled in runs, the head left to
//! the caller).

use super::*;

impl LiveRing {
    /// Fills `out` with up to `out.len()` ready CQEs without consuming them.
    #[inline(always)]
    pub(super) fn peek_batch_inner(&mut self, out: &mut [CqeOut]) -> u32 {
        if self.flags & IORING_SETUP_CQE_MIXED != 0 {
            return self.peek_batch_mixed(out);
        }
        self.peek_batch_plain(out)
    }

    /// [`Self::peek_batch_inner`] for a ring whose CQEs all take one slot.
    #[inline(always)]
    pub(super) fn peek_batch_plain(&mut self, out: &mut [CqeOut]) -> u32 {
        let (head, n) = self.ready_upto(out.len());
        self.fill_ready(head, &mut out[..n])
    }

    /// The CQ head and how many CQEs are ready from it, at most `max`:
    /// one read of the head (only the application writes it), then the
    /// tail with acquire.
    #[inline(always)]
    pub(super) fn ready_upto(&self, max: usize) -> (u32, usize) {
        let head = self.cq_head();
        (head, (self.cq_tail().wrapping_sub(head) as usize).min(max))
    }

    /// Stores the pointers of the `out.len()` ready CQEs from `head`;
    /// returns their count.
    #[inline(always)]
    pub(super) fn fill_ready(&self, head: u32, out: &mut [CqeOut]) -> u32 {
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
    pub(super) fn fill_many(&self, head: u32, out: &mut [CqeOut]) -> u32 {
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
    pub(super) fn fill_strided<const WIDE: bool>(&self, head: u32, out: &mut [CqeOut]) {
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
    pub(super) fn peek_batch_mixed(&mut self, out: &mut [CqeOut]) -> u32 {
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
    pub(super) fn flush_and_peek_batch(&mut self, out: &mut [CqeOut]) -> u32 {
        self.get_events();
        self.peek_batch_inner(out)
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
    pub(super) fn wait_batch_enter(
        &mut self,
        out: &mut [CqeOut],
        min: u32,
        ts: *const __kernel_timespec,
    ) -> c_int {
        let args = EnterArgs::new(0, min, IORING_ENTER_GETEVENTS);
        let arg = io_uring_getevents_arg {
            sigmask: 0,
            sigmask_sz: NSIG_BYTES as u32,
            min_wait_usec: 0,
            ts: ts as u64,
        };
        let ret = if ts.is_null() {
            // SAFETY: no argument is passed.
            unsafe { self.enter(args) }
        } else {
            if self.features & IORING_FEAT_EXT_ARG == 0 {
                // A timeout would need an extra internal SQE and enter.
                return -libc::EINVAL;
            }
            let args = EnterArgs {
                arg: (&arg as *const io_uring_getevents_arg).cast(),
                sz: core::mem::size_of::<io_uring_getevents_arg>(),
                ..args.with_flags(IORING_ENTER_EXT_ARG)
            };
            // SAFETY: `arg` is a valid getevents argument for the call.
            unsafe { self.enter(args) }
        };
        let n = self.peek_batch_inner(out);
        if n == 0 && ret < 0 {
            return ret;
        }
        n as c_int
    }
}
