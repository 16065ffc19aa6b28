//! The hot paths: getting SQEs, submitting, and finding completions.
//!
//! Layer 6 (see lib.rs). The hot paths are methods of [`LiveRing`], the
//! only ring methods outside ring.rs: the ring words through ring.rs's
//! accessors, the extensions (statistics, transparent SQPOLL, shared
//! pollers, automatic ring fds) through their modules' functions, behind
//! one test of `rs_flags` (no `rs_flags::EXT` bit on a plain ring).
//!
//! `LiveRing`'s methods here are split by concern, one file each: [`enter`]
//! (the system call), [`submit`] (SQEs and submitting), [`reap`] (one CQE
//! at a time), [`batch`] (batched reaping), [`wait`] (timeouts, minimum
//! waits, registered wait parameters). This file holds what they share:
//! the CQE output type, the CQE fill helpers, a wait's parameters.
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
use crate::sys::{self, EnterArgs};
use crate::uapi::{
    self, __kernel_timespec, io_uring_cqe, io_uring_getevents_arg, io_uring_sqe, IORING_CQE_F_32,
    IORING_CQE_F_SKIP, IORING_ENTER_EXT_ARG, IORING_ENTER_GETEVENTS, IORING_ENTER_SQ_WAIT,
    IORING_ENTER_SQ_WAKEUP, IORING_FEAT_EXT_ARG, IORING_FEAT_MIN_TIMEOUT, IORING_OP_TIMEOUT,
    IORING_SETUP_CQE_MIXED, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_REWIND, IORING_SQ_CQ_OVERFLOW,
    IORING_SQ_NEED_WAKEUP, IORING_SQ_TASKRUN, LIBURING_UDATA_TIMEOUT, NSIG_BYTES,
};
use crate::{ring_fd, sqpoll, stats, transparent};

mod batch;
mod enter;
mod reap;
mod submit;
mod wait;

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

/// The parameters of a wait for completions with a timeout, shared by
/// `io_uring_wait_cqes`, `io_uring_submit_and_wait_timeout` and their
/// minimum-wait variants; the wait paths take it whole and read what they
/// need.
#[derive(Clone, Copy)]
pub struct WaitArgs {
    /// How many completions to wait for.
    pub wait_nr: u32,
    /// NULL (no timeout), or how long to wait at most.
    pub ts: *const __kernel_timespec,
    /// The minimum wait in microseconds (`IORING_FEAT_MIN_TIMEOUT`, an
    /// EXT_ARG wait only): past it, the wait ends as soon as a completion
    /// is in, `wait_nr` of them or not; 0 for none.
    pub min_wait_usec: u32,
    /// NULL, or the signal mask the wait runs with.
    pub sigmask: *const libc::sigset_t,
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
