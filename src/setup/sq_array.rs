//! The SQ index array of rings without one (IORING_SETUP_NO_SQARRAY): the
//! private identity array old programs may read, and whether the kernel
//! supports the flag.

use super::*;

/// Entries of [`PRIVATE_SQ_ARRAY`]: the largest SQ a ring can have.
pub(super) const PRIVATE_SQ_ARRAY_LEN: usize = KERN_MAX_ENTRIES as usize;

/// What `sq.array` points at on rings that got IORING_SETUP_NO_SQARRAY from
/// this library rather than from the application. The kernel of such a ring
/// has no SQ index array: it takes SQE `head & mask` directly. Programs built
/// against liburing headers older than 2.6 may still store into `sq.array`
/// (the identity mapping, as liburing's own code once did); here those
/// stores land in process memory that nothing reads, so they are harmless.
/// One array serves every ring: each slot only ever holds its own index
/// unless a program writes something else, which no one reads either.
/// Untouched pages of it cost nothing (it lives in .bss).
pub(super) static PRIVATE_SQ_ARRAY: [AtomicU32; PRIVATE_SQ_ARRAY_LEN] =
    [const { AtomicU32::new(0) }; PRIVATE_SQ_ARRAY_LEN];

/// Whether the kernel takes IORING_SETUP_NO_SQARRAY (Linux 6.6+), learnt
/// once per process: from the first ring that gets it, or, when a setup
/// with it fails with -EINVAL, from a one-entry ring set up with nothing
/// else (the -EINVAL may be about another flag). Rings on a kernel without
/// it then come up with the kernel's array straight away, and a setup that
/// the kernel refuses for another reason is refused once, as liburing's is.
pub(super) static NO_SQARRAY_SUPPORT: AtomicU8 = AtomicU8::new(SUPPORT_UNKNOWN);
pub(super) const SUPPORT_UNKNOWN: u8 = 0;
pub(super) const SUPPORTED: u8 = 1;
pub(super) const UNSUPPORTED: u8 = 2;

/// [`NO_SQARRAY_SUPPORT`], asking the kernel if nobody has yet. Unknown
/// when the kernel cannot say (e.g. the one-entry ring does not fit the
/// caller's locked memory).
pub(super) fn no_sqarray_support() -> u8 {
    let known = NO_SQARRAY_SUPPORT.load(Ordering::Relaxed);
    if known != SUPPORT_UNKNOWN {
        return known;
    }
    let mut p = io_uring_params {
        flags: IORING_SETUP_NO_SQARRAY,
        ..Default::default()
    };
    // SAFETY: `p` is a valid, writable params struct.
    let fd = unsafe { sys::io_uring_setup(1, &mut p) };
    let learnt = if fd >= 0 {
        sys::close(fd);
        SUPPORTED
    } else if fd == -libc::EINVAL {
        UNSUPPORTED
    } else {
        return SUPPORT_UNKNOWN;
    };
    NO_SQARRAY_SUPPORT.store(learnt, Ordering::Relaxed);
    learnt
}

/// `RSURING_SQARRAY=1` (read once per process): never add
/// IORING_SETUP_NO_SQARRAY, for programs that put their own, non-identity
/// indices into `sq.array` and submit behind the library's back.
pub(super) fn keep_sq_array_by_env() -> bool {
    static KEEP: OnceLock<bool> = OnceLock::new();
    *KEEP.get_or_init(|| crate::env::flag(crate::env::SQARRAY))
}

/// The private SQ array for a ring of `entries` SQ entries, holding the
/// identity mapping a reader of `sq.array` would find on an old ring.
pub(super) fn private_sq_array(entries: u32) -> *mut u32 {
    for (i, slot) in PRIVATE_SQ_ARRAY.iter().take(entries as usize).enumerate() {
        slot.store(i as u32, Ordering::Relaxed);
    }
    PRIVATE_SQ_ARRAY.as_ptr() as *mut u32
}
