//! Waiting with a timeout, a minimum wait or registered wait parameters:
//! the `io_uring_wait_cqes` / `io_uring_submit_and_wait_*` family (EXT_ARG,
//! or an internal timeout SQE on kernels without it).

use super::*;

impl LiveRing {
    /// Queues an internal timeout SQE so a wait returns after `ts` on kernels
    /// without EXT_ARG. Returns the number of SQEs to submit.
    pub(super) fn submit_timeout(&mut self, wait_nr: u32, ts: *const __kernel_timespec) -> c_int {
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

    /// Waits as `wait` says with an EXT_ARG argument (timeout, minimum
    /// wait and signal mask in one `io_uring_getevents_arg`).
    pub(super) fn wait_cqes_ext(
        &mut self,
        cqe_ptr: &mut CqeOut,
        submit: Published,
        wait: WaitArgs,
    ) -> c_int {
        let arg = io_uring_getevents_arg {
            sigmask: wait.sigmask as u64,
            sigmask_sz: NSIG_BYTES as u32,
            min_wait_usec: wait.min_wait_usec,
            ts: wait.ts as u64,
        };
        let mut data = GetData {
            submit: submit.count,
            wait_nr: wait.wait_nr,
            get_flags: IORING_ENTER_EXT_ARG,
            arg: (&arg as *const io_uring_getevents_arg).cast(),
            sz: core::mem::size_of::<io_uring_getevents_arg>(),
            has_ts: !wait.ts.is_null(),
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
                let wait = WaitArgs {
                    wait_nr,
                    ts,
                    min_wait_usec: 0,
                    sigmask,
                };
                return self.wait_cqes_ext(cqe_ptr, Published::NONE, wait);
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

    /// `io_uring_wait_cqes_min_timeout` (always the EXT_ARG path), or with
    /// `submit` `io_uring_submit_and_wait_min_timeout`, waiting as `wait`
    /// says; `-EINVAL` on kernels without IORING_FEAT_MIN_TIMEOUT.
    pub fn wait_min_timeout(
        &mut self,
        submit: bool,
        cqe_ptr: &mut CqeOut,
        wait: WaitArgs,
    ) -> c_int {
        if self.features & IORING_FEAT_MIN_TIMEOUT == 0 {
            return -libc::EINVAL;
        }
        if submit {
            return self.submit_and_wait_timeout(cqe_ptr, wait);
        }
        self.wait_cqes_ext(cqe_ptr, Published::NONE, wait)
    }

    /// `io_uring_submit_and_wait_timeout` (and the min-timeout variant):
    /// submits, then waits as `wait` says.
    pub fn submit_and_wait_timeout(&mut self, cqe_ptr: &mut CqeOut, wait: WaitArgs) -> c_int {
        let to_submit;
        let fresh = self.transparent_cq_empty();
        if !wait.ts.is_null() {
            if self.features & IORING_FEAT_EXT_ARG != 0 {
                let submit = Published {
                    count: self.flush_sq(),
                    fresh,
                };
                return self.wait_cqes_ext(cqe_ptr, submit, wait);
            }
            to_submit = self.submit_timeout(wait.wait_nr, wait.ts);
            if to_submit < 0 {
                return to_submit;
            }
        } else {
            to_submit = self.flush_sq() as c_int;
        }
        self.get_cqe_with(cqe_ptr, to_submit as u32, wait.wait_nr, wait.sigmask, fresh)
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
