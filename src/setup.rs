//! Ring mapping: creating a kernel ring and mapping its memory, unmapping
//! it, and the sizes and layouts involved. No policy lives here (see
//! `crate::lifecycle` for what init and exit add on top).
//!
//! Layer 4 (see lib.rs). Functions taking the plain [`io_uring`]: this is
//! the module that sets and replaces a ring's pointers (where the kernel's
//! words are within a mapping is `crate::ring`'s); the ring methods are
//! ring.rs's and queue/'s.

use core::ffi::{c_int, c_void};
use core::ptr;
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::ring::{self, int_flags, io_uring, io_uring_cq, io_uring_sq};
use crate::sys;
use crate::uapi::{
    io_uring_cqe, io_uring_params, io_uring_sqe, IORING_FEAT_NATIVE_WORKERS,
    IORING_FEAT_SINGLE_MMAP, IORING_OFF_CQ_RING, IORING_OFF_SQES, IORING_OFF_SQ_RING,
    IORING_SETUP_CLAMP, IORING_SETUP_CQE32, IORING_SETUP_CQSIZE, IORING_SETUP_IOPOLL,
    IORING_SETUP_NO_MMAP, IORING_SETUP_NO_SQARRAY, IORING_SETUP_REGISTERED_FD_ONLY,
    IORING_SETUP_SQE128, IORING_SETUP_SQPOLL, KERN_MAX_CQ_ENTRIES, KERN_MAX_ENTRIES,
};

/// Room the kernel needs for the ring headers (head/tail/flags/...) in front
/// of the CQE array when the application provides the memory.
const KRING_HEADER: usize = 64;
const HUGE_PAGE: usize = 2 * 1024 * 1024;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions and does not fail for PAGESIZE.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 {
        v as usize
    } else {
        4096
    }
}

fn round_up(v: usize, to: usize) -> usize {
    (v + to - 1) & !(to - 1)
}

fn sqes_bytes(flags: u32, entries: u32) -> usize {
    let shift = (flags & IORING_SETUP_SQE128 != 0) as u32;
    ((entries as usize) << shift) * core::mem::size_of::<io_uring_sqe>()
}

fn cqes_bytes(flags: u32, entries: u32) -> usize {
    let shift = (flags & IORING_SETUP_CQE32 != 0) as u32;
    ((entries as usize) << shift) * core::mem::size_of::<io_uring_cqe>()
}

/// The SQ and CQ sizes the kernel will choose for `entries` and `p`.
fn sq_cq_entries(entries: u32, p: &io_uring_params) -> Result<(u32, u32), c_int> {
    if entries == 0 {
        return Err(-libc::EINVAL);
    }
    let clamp = p.flags & IORING_SETUP_CLAMP != 0;
    let mut sq = entries;
    if sq > KERN_MAX_ENTRIES {
        if !clamp {
            return Err(-libc::EINVAL);
        }
        sq = KERN_MAX_ENTRIES;
    }
    let sq = sq.next_power_of_two();
    let cq = if p.flags & IORING_SETUP_CQSIZE != 0 {
        let mut cq = p.cq_entries;
        if cq == 0 {
            return Err(-libc::EINVAL);
        }
        if cq > KERN_MAX_CQ_ENTRIES {
            if !clamp {
                return Err(-libc::EINVAL);
            }
            cq = KERN_MAX_CQ_ENTRIES;
        }
        let cq = cq.next_power_of_two();
        if cq < sq {
            return Err(-libc::EINVAL);
        }
        cq
    } else {
        2 * sq
    };
    Ok((sq, cq))
}

/// Unmaps the SQ and CQ ring mappings this library created.
///
/// # Safety
/// The mappings must be ours and unused from now on.
unsafe fn unmap_rings(sq: &io_uring_sq, cq: &io_uring_cq) {
    // SAFETY: forwarded contract; sizes are those we mapped.
    unsafe {
        if sq.ring_sz != 0 {
            sys::munmap(sq.ring_ptr, sq.ring_sz);
        }
        if !cq.ring_ptr.is_null() && cq.ring_sz != 0 && cq.ring_ptr != sq.ring_ptr {
            sys::munmap(cq.ring_ptr, cq.ring_sz);
        }
    }
}

/// Whether every ring field the params point at lies inside the mappings
/// (the kernel's own params always do; io_uring_queue_mmap takes them from
/// the application).
fn offsets_fit(p: &io_uring_params, sq_size: usize, cq_size: usize) -> bool {
    let o = &p.sq_off;
    let c = &p.cq_off;
    let fits = |off: u32, size: usize| off as usize + 4 <= size;
    let sq_ok = [
        o.head,
        o.tail,
        o.ring_mask,
        o.ring_entries,
        o.flags,
        o.dropped,
    ]
    .iter()
    .all(|&off| fits(off, sq_size));
    let cq_ok = [c.head, c.tail, c.ring_mask, c.ring_entries, c.overflow]
        .iter()
        .all(|&off| fits(off, cq_size))
        && (c.flags == 0 || fits(c.flags, cq_size));
    let entries_ok = p.sq_entries.is_power_of_two() && p.cq_entries.is_power_of_two();
    sq_ok && cq_ok && entries_ok
}

/// Maps the rings of ring fd `fd` (kernel-allocated memory).
///
/// # Safety
/// `p` must be what io_uring_setup returned for `fd`.
unsafe fn map_rings(
    fd: c_int,
    p: &io_uring_params,
    sq: &mut io_uring_sq,
    cq: &mut io_uring_cq,
) -> c_int {
    // Without an SQ index array the kernel leaves sq_off.array as the
    // caller passed it, so it says nothing about the mapping's size.
    sq.ring_sz = if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        p.sq_off.array as usize + p.sq_entries as usize * 4
    } else {
        0
    };
    cq.ring_sz = p.cq_off.cqes as usize + cqes_bytes(p.flags, p.cq_entries);
    if p.features & IORING_FEAT_SINGLE_MMAP != 0 {
        sq.ring_sz = sq.ring_sz.max(cq.ring_sz);
        cq.ring_sz = sq.ring_sz;
    }
    if !offsets_fit(p, sq.ring_sz, cq.ring_sz) {
        return -libc::EINVAL;
    }
    let map = |len: usize, off: u64| {
        // SAFETY: a new shared mapping of the ring fd's region at `off`.
        unsafe { sys::mmap(len, libc::MAP_SHARED | libc::MAP_POPULATE, fd, off) }
    };
    sq.ring_ptr = match map(sq.ring_sz, IORING_OFF_SQ_RING) {
        Ok(m) => m,
        Err(e) => {
            sq.ring_sz = 0;
            return e;
        }
    };
    cq.ring_ptr = if p.features & IORING_FEAT_SINGLE_MMAP != 0 {
        sq.ring_ptr
    } else {
        match map(cq.ring_sz, IORING_OFF_CQ_RING) {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: the SQ ring was mapped above and is not in use.
                unsafe { unmap_rings(sq, cq) };
                return e;
            }
        }
    };
    let sqes_sz = sqes_bytes(p.flags, p.sq_entries);
    sq.sqes_sz = sqes_sz as u32;
    match map(sqes_sz, IORING_OFF_SQES) {
        Ok(m) => sq.sqes = m.cast(),
        Err(e) => {
            // SAFETY: the rings were mapped above and are not in use.
            unsafe { unmap_rings(sq, cq) };
            return e;
        }
    }
    // SAFETY: both regions are mapped as `p` describes.
    unsafe { ring::point_at_kernel_words(p, sq, cq) };
    0
}

/// For IORING_SETUP_NO_MMAP: places the SQEs and rings in memory we (or the
/// application, when `buf` is given) provide. Returns the bytes used.
///
/// # Safety
/// `buf`, when non-null, must be `buf_size` writable bytes that outlive the ring.
unsafe fn alloc_app_rings(
    entries: u32,
    p: &mut io_uring_params,
    sq: &mut io_uring_sq,
    cq: &mut io_uring_cq,
    buf: *mut c_void,
    buf_size: usize,
) -> Result<usize, c_int> {
    let page = page_size();
    let (sq_entries, cq_entries) = sq_cq_entries(entries, p)?;
    let sqes_mem = round_up(sqes_bytes(p.flags, sq_entries), page);
    let mut ring_mem = KRING_HEADER + cqes_bytes(p.flags, cq_entries);
    if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        ring_mem += sq_entries as usize * 4;
    }
    let used = round_up(sqes_mem + ring_mem, page);

    let anon = |len: usize| -> Result<*mut c_void, c_int> {
        let huge = if len > page {
            libc::MAP_HUGETLB | (21 << libc::MAP_HUGE_SHIFT)
        } else {
            0
        };
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        unsafe { sys::mmap(len, libc::MAP_SHARED | libc::MAP_ANONYMOUS | huge, -1, 0) }
    };

    let (base, base_size) = if !buf.is_null() {
        if used > buf_size {
            return Err(-libc::ENOMEM);
        }
        (buf, buf_size)
    } else {
        if sqes_mem > HUGE_PAGE || ring_mem > HUGE_PAGE {
            return Err(-libc::ENOMEM);
        }
        let size = if sqes_mem <= page { page } else { HUGE_PAGE };
        (anon(size)?, size)
    };
    sq.sqes = base.cast();
    sq.sqes_sz = if buf.is_null() { base_size as u32 } else { 0 };
    if used <= base_size {
        // SAFETY: `used` bytes fit in the region, so the rings follow the SQEs inside it.
        sq.ring_ptr = unsafe { (base as *mut u8).add(sqes_mem) }.cast();
        sq.ring_sz = 0;
    } else {
        let size = if ring_mem <= page { page } else { HUGE_PAGE };
        match anon(size) {
            Ok(m) => {
                sq.ring_ptr = m;
                sq.ring_sz = size;
            }
            Err(e) => {
                if sq.sqes_sz != 0 {
                    // SAFETY: we mapped the SQE region above and nobody uses it yet.
                    unsafe { sys::munmap(base, sq.sqes_sz as usize) };
                }
                return Err(e);
            }
        }
    }
    cq.ring_ptr = sq.ring_ptr;
    cq.ring_sz = 0;
    p.sq_off.user_addr = sq.sqes as u64;
    p.cq_off.user_addr = sq.ring_ptr as u64;
    Ok(used)
}

/// Entries of [`PRIVATE_SQ_ARRAY`]: the largest SQ a ring can have.
const PRIVATE_SQ_ARRAY_LEN: usize = KERN_MAX_ENTRIES as usize;

/// What `sq.array` points at on rings that got IORING_SETUP_NO_SQARRAY from
/// this library rather than from the application. The kernel of such a ring
/// has no SQ index array: it takes SQE `head & mask` directly. Programs built
/// against liburing headers older than 2.6 may still store into `sq.array`
/// (the identity mapping, as liburing's own code once did); here those
/// stores land in process memory that nothing reads, so they are harmless.
/// One array serves every ring: each slot only ever holds its own index
/// unless a program writes something else, which no one reads either.
/// Untouched pages of it cost nothing (it lives in .bss).
static PRIVATE_SQ_ARRAY: [AtomicU32; PRIVATE_SQ_ARRAY_LEN] =
    [const { AtomicU32::new(0) }; PRIVATE_SQ_ARRAY_LEN];

/// Whether the kernel takes IORING_SETUP_NO_SQARRAY (Linux 6.6+), learnt
/// once per process: from the first ring that gets it, or, when a setup
/// with it fails with -EINVAL, from a one-entry ring set up with nothing
/// else (the -EINVAL may be about another flag). Rings on a kernel without
/// it then come up with the kernel's array straight away, and a setup that
/// the kernel refuses for another reason is refused once, as liburing's is.
static NO_SQARRAY_SUPPORT: AtomicU8 = AtomicU8::new(SUPPORT_UNKNOWN);
const SUPPORT_UNKNOWN: u8 = 0;
const SUPPORTED: u8 = 1;
const UNSUPPORTED: u8 = 2;

/// [`NO_SQARRAY_SUPPORT`], asking the kernel if nobody has yet. Unknown
/// when the kernel cannot say (e.g. the one-entry ring does not fit the
/// caller's locked memory).
fn no_sqarray_support() -> u8 {
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
fn keep_sq_array_by_env() -> bool {
    static KEEP: OnceLock<bool> = OnceLock::new();
    *KEEP.get_or_init(|| crate::env::flag(crate::env::SQARRAY))
}

/// The private SQ array for a ring of `entries` SQ entries, holding the
/// identity mapping a reader of `sq.array` would find on an old ring.
fn private_sq_array(entries: u32) -> *mut u32 {
    for (i, slot) in PRIVATE_SQ_ARRAY.iter().take(entries as usize).enumerate() {
        slot.store(i as u32, Ordering::Relaxed);
    }
    PRIVATE_SQ_ARRAY.as_ptr() as *mut u32
}

/// A new ring to set up: io_uring_setup's arguments, the ring to fill in,
/// and, with IORING_SETUP_NO_MMAP, the application's memory for the rings.
/// The mapper ([`map_new_ring`]), the poller registry
/// (`crate::sqpoll::map_shared_ring`) and the policy (`crate::lifecycle`)
/// pass it on whole.
pub struct SetupRequest<'a> {
    pub entries: u32,
    pub ring: &'a mut io_uring,
    pub p: &'a mut io_uring_params,
    /// The application's memory, or null (the library allocates).
    buf: *mut c_void,
    buf_size: usize,
}

impl<'a> SetupRequest<'a> {
    /// A ring in memory the library maps (or allocates, with NO_MMAP).
    pub fn new(entries: u32, ring: &'a mut io_uring, p: &'a mut io_uring_params) -> Self {
        SetupRequest {
            entries,
            ring,
            p,
            buf: ptr::null_mut(),
            buf_size: 0,
        }
    }

    /// A ring in the application's memory `buf` (`io_uring_queue_init_mem`).
    ///
    /// # Safety
    /// `buf`, when non-null, must be `buf_size` writable bytes that outlive
    /// the ring.
    pub unsafe fn in_memory(
        entries: u32,
        ring: &'a mut io_uring,
        p: &'a mut io_uring_params,
        buf: *mut c_void,
        buf_size: usize,
    ) -> Self {
        SetupRequest {
            entries,
            ring,
            p,
            buf,
            buf_size,
        }
    }

    /// Where the ring's state will live in the application's memory
    /// (address, length): the `struct io_uring`, and the memory given to
    /// `io_uring_queue_init_mem` if any.
    pub fn app_places(&self) -> [(usize, usize); 2] {
        let ring = (
            &*self.ring as *const io_uring as usize,
            core::mem::size_of::<io_uring>(),
        );
        let memory = if self.buf.is_null() {
            ring
        } else {
            (self.buf as usize, self.buf_size)
        };
        [ring, memory]
    }
}

/// Creates a kernel ring and maps it into `req.ring`. Returns the bytes of
/// application memory used (NO_MMAP with the application's memory),
/// otherwise 0; or `-errno`, leaving the ring zeroed.
///
/// Like liburing 2.6+, the ring gets IORING_SETUP_NO_SQARRAY where the
/// kernel has it (it saves the kernel an index load and a bounds check per
/// SQE), falling back to a plain setup when the kernel says `-EINVAL`. An
/// application that asked for NO_SQARRAY itself gets no fallback and a NULL
/// `sq.array`, as with liburing 2.6+. Otherwise `sq.array` points at
/// [`PRIVATE_SQ_ARRAY`], so binaries built against older headers that store
/// into it keep working. `RSURING_SQARRAY=1` keeps the kernel's array (for
/// programs that rely on non-identity indices; see the README).
pub fn map_new_ring(req: &mut SetupRequest<'_>) -> c_int {
    let asked = req.p.flags;
    if asked & IORING_SETUP_NO_SQARRAY != 0
        || keep_sq_array_by_env()
        || NO_SQARRAY_SUPPORT.load(Ordering::Relaxed) == UNSUPPORTED
    {
        return init_once(req);
    }
    req.p.flags |= IORING_SETUP_NO_SQARRAY;
    let ret = init_once(req);
    if ret >= 0 {
        NO_SQARRAY_SUPPORT.store(SUPPORTED, Ordering::Relaxed);
        req.ring.sq.array = private_sq_array(req.ring.sq.ring_entries);
        return ret;
    }
    req.p.flags = asked;
    if ret != -libc::EINVAL || no_sqarray_support() == SUPPORTED {
        return ret;
    }
    // The kernel lacks the flag (or could not say): set up what was asked.
    init_once(req)
}

/// One io_uring_setup attempt with exactly `req.p.flags`, and the mapping.
fn init_once(req: &mut SetupRequest<'_>) -> c_int {
    let (entries, buf, buf_size) = (req.entries, req.buf, req.buf_size);
    let (ring, p) = (&mut *req.ring, &mut *req.p);
    *ring = io_uring::zeroed();
    if p.flags & IORING_SETUP_REGISTERED_FD_ONLY != 0 && p.flags & IORING_SETUP_NO_MMAP == 0 {
        return -libc::EINVAL;
    }
    let mut used = 0;
    if p.flags & IORING_SETUP_NO_MMAP != 0 {
        // SAFETY: `buf` is null or as SetupRequest::in_memory's contract says.
        match unsafe { alloc_app_rings(entries, p, &mut ring.sq, &mut ring.cq, buf, buf_size) } {
            Ok(n) => used = n,
            Err(e) => {
                *ring = io_uring::zeroed();
                return e;
            }
        }
        if !buf.is_null() {
            ring.int_flags |= int_flags::APP_MEM;
        }
    }

    // SAFETY: `p` is a valid, writable params struct.
    let fd = unsafe { sys::io_uring_setup(entries, p) };
    if fd < 0 {
        if p.flags & IORING_SETUP_NO_MMAP != 0 && ring.int_flags & int_flags::APP_MEM == 0 {
            // SAFETY: the regions were mapped above for this ring alone.
            unsafe { release_memory(ring) };
        }
        *ring = io_uring::zeroed();
        return fd;
    }

    if p.flags & IORING_SETUP_NO_MMAP == 0 {
        // SAFETY: `p` came back from io_uring_setup for `fd`.
        let err = unsafe { map_rings(fd, p, &mut ring.sq, &mut ring.cq) };
        if err != 0 {
            sys::close(fd);
            *ring = io_uring::zeroed();
            return err;
        }
    } else {
        // SAFETY: the kernel laid the rings out in our memory per `p`.
        unsafe { ring::point_at_kernel_words(p, &mut ring.sq, &mut ring.cq) };
    }

    if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        // SAFETY: the kernel's array, ring_entries slots in the SQ mapping.
        unsafe { ring::fill_sq_array(&ring.sq) };
    }
    ring.features = p.features;
    ring.flags = p.flags;
    ring.enter_ring_fd = fd;
    if p.flags & IORING_SETUP_REGISTERED_FD_ONLY != 0 {
        ring.ring_fd = -1;
        ring.int_flags |= int_flags::REG_RING | int_flags::REG_REG_RING;
    } else {
        ring.ring_fd = fd;
    }
    // IOPOLL completions are only found by entering the kernel, unless an
    // SQ thread polls for us.
    if p.flags & (IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL) == IORING_SETUP_IOPOLL {
        ring.int_flags |= int_flags::CQ_ENTER;
    }
    used as c_int
}

/// Maps the rings of an fd the caller set up itself (`io_uring_queue_mmap`).
///
/// # Safety
/// `p` must be what io_uring_setup returned for `fd`.
pub unsafe fn map_existing_ring(fd: c_int, p: &io_uring_params, ring: &mut io_uring) -> c_int {
    *ring = io_uring::zeroed();
    // Mapping some other kind of file at the ring offsets can "work" and
    // fault on first use (a memfd: SIGBUS); an empty io_uring_enter tells
    // an io_uring fd (anything else answers -EOPNOTSUPP, a closed fd
    // -EBADF). For a file that is not a ring, the error is the one mmap()
    // gives, as with liburing (a pipe: -EACCES), and -EOPNOTSUPP only where
    // mmap() would have succeeded.
    // SAFETY: no argument is passed.
    let probe = unsafe { sys::io_uring_enter2(fd as u32, 0, 0, 0, ptr::null(), 0) };
    if probe == -libc::EBADF {
        return probe;
    }
    if probe == -libc::EOPNOTSUPP {
        let len = (p.sq_off.array as usize + p.sq_entries as usize * 4).max(1);
        // SAFETY: a new shared mapping of the fd, unmapped at once unused.
        return match unsafe { sys::mmap(len, libc::MAP_SHARED, fd, IORING_OFF_SQ_RING) } {
            Err(e) => e,
            Ok(m) => {
                // SAFETY: `m` is the mapping just made, of `len` bytes.
                unsafe { sys::munmap(m, len) };
                probe
            }
        };
    }
    // SAFETY: forwarded contract.
    let ret = unsafe { map_rings(fd, p, &mut ring.sq, &mut ring.cq) };
    if ret == 0 {
        ring.flags = p.flags;
        ring.features = p.features;
        ring.ring_fd = fd;
        ring.enter_ring_fd = fd;
    } else {
        *ring = io_uring::zeroed();
    }
    ret
}

/// Unmaps whatever ring memory this library mapped for `ring`.
///
/// # Safety
/// The ring must not be used afterwards.
pub unsafe fn release_memory(ring: &mut io_uring) {
    if ring.int_flags & int_flags::APP_MEM != 0 {
        return;
    }
    // SAFETY: the sizes are those we mapped; the caller gives the ring up.
    unsafe {
        if !ring.sq.sqes.is_null() && ring.sq.sqes_sz != 0 {
            sys::munmap(ring.sq.sqes.cast(), ring.sq.sqes_sz as usize);
        }
        unmap_rings(&ring.sq, &ring.cq);
    }
}

/// `io_uring_ring_dontfork`: keep the ring mappings out of fork()ed children.
pub fn ring_dontfork(ring: &io_uring) -> c_int {
    if ring.sq.ring_ptr.is_null() || ring.sq.sqes.is_null() || ring.cq.ring_ptr.is_null() {
        return -libc::EINVAL;
    }
    let sqes_len = sqes_bytes(ring.flags, ring.sq.ring_entries);
    // SAFETY: the ranges are this ring's live mappings.
    unsafe {
        let ret = sys::madvise(ring.sq.sqes.cast(), sqes_len, libc::MADV_DONTFORK);
        if ret < 0 {
            return ret;
        }
        let ret = sys::madvise(ring.sq.ring_ptr, ring.sq.ring_sz, libc::MADV_DONTFORK);
        if ret < 0 {
            return ret;
        }
        if ring.cq.ring_ptr != ring.sq.ring_ptr {
            let ret = sys::madvise(ring.cq.ring_ptr, ring.cq.ring_sz, libc::MADV_DONTFORK);
            if ret < 0 {
                return ret;
            }
        }
    }
    0
}

/// `io_uring_memory_size`: [`memory_size_params`] with only setup `flags`.
pub fn memory_size(entries: u32, flags: u32) -> isize {
    let p = io_uring_params {
        flags,
        ..Default::default()
    };
    memory_size_params(entries, &p)
}

/// `io_uring_mlock_size`: [`mlock_size_params`] with only setup `flags`.
pub fn mlock_size(entries: u32, flags: u32) -> isize {
    let p = io_uring_params {
        flags,
        ..Default::default()
    };
    mlock_size_params(entries, &p)
}

/// Bytes of ring memory a ring with these parameters occupies.
pub fn memory_size_params(entries: u32, p: &io_uring_params) -> isize {
    let (sq, cq) = match sq_cq_entries(entries, p) {
        Ok(v) => v,
        Err(e) => return e as isize,
    };
    let page = page_size();
    let mut cq_size = cqes_bytes(p.flags, cq) + KRING_HEADER;
    if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        cq_size += sq as usize * 4;
    }
    (round_up(cq_size, page) + round_up(sqes_bytes(p.flags, sq), page)) as isize
}

/// `io_uring_mlock_size_params`: locked memory a ring needs; 0 on kernels
/// that charge rings to the memory cgroup instead (5.12+, which announce
/// IORING_FEAT_NATIVE_WORKERS). The kernel's features come from a
/// throw-away ring that is never mapped and never sees the library's
/// policy. When that ring cannot be set up (most often because the
/// caller's locked memory is used up, which is what the caller wants to
/// know about), the features count as none and the size is computed all
/// the same, as liburing does: only invalid `entries` or `p` are an error.
pub fn mlock_size_params(entries: u32, p: &io_uring_params) -> isize {
    let mut probe_params = io_uring_params::default();
    // SAFETY: `probe_params` is a valid, writable params struct.
    let fd = unsafe { sys::io_uring_setup(entries, &mut probe_params) };
    if fd >= 0 {
        sys::close(fd);
        if probe_params.features & IORING_FEAT_NATIVE_WORKERS != 0 {
            return 0;
        }
    }
    match sq_cq_entries(entries, p) {
        Ok((sq, cq)) => locked_charge(p.flags, sq, cq) as isize,
        Err(e) => e as isize,
    }
}

/// What a kernel that charges rings to RLIMIT_MEMLOCK (5.11 and older)
/// charges for a ring: it allocates the ring headers + CQEs + SQ index
/// array as one block and the SQEs as another, each a power-of-two number
/// of pages (a page-order allocation). This is also liburing 2.3's figure
/// (liburing 2.15 returns the smaller `io_uring_memory_size`, which such a
/// kernel would refuse when the limit is that tight).
fn locked_charge(flags: u32, sq: u32, cq: u32) -> usize {
    /// The kernel's `struct io_rings` in front of the CQEs.
    const KERNEL_RINGS_HEADER: usize = 320;
    let page = page_size();
    let order_pages = |bytes: usize| bytes.div_ceil(page).next_power_of_two();
    let rings = round_up(KERNEL_RINGS_HEADER + cqes_bytes(flags, cq), 64) + sq as usize * 4;
    (order_pages(rings) + order_pages(sqes_bytes(flags, sq))) * page
}

/// The layout of rings after IORING_REGISTER_RESIZE_RINGS. The kernel's
/// reply carries the new sizes and offsets but neither the ring's features
/// (SINGLE_MMAP) nor, for a ring with an SQ index array, where that array
/// now is: it follows the CQEs, cache-line aligned, as at setup. The ring's
/// own setup flags (CQE32, NO_SQARRAY) decide the rest.
fn resized_layout(ring: &io_uring, reply: &io_uring_params) -> io_uring_params {
    let mut layout = *reply;
    layout.flags = ring.flags;
    layout.features = ring.features;
    if ring.flags & IORING_SETUP_NO_SQARRAY == 0 && layout.sq_off.array == 0 {
        let cq_end = layout.cq_off.cqes as usize
            + layout.cq_entries as usize * core::mem::size_of::<io_uring_cqe>();
        let shifted = cq_end << (ring.flags & IORING_SETUP_CQE32 != 0) as u32;
        layout.sq_off.array = round_up(shifted, 64) as u32;
    }
    layout
}

/// Maps the rings again after a successful IORING_REGISTER_RESIZE_RINGS
/// (`reply` is what the kernel wrote back) and carries the library's state
/// over: the SQE indices and the side data kept in liburing's padding.
/// (The statistics and poller registries follow in `crate::lifecycle`.)
///
/// # Safety
/// `ring` must be a live ring this library mapped; on success its old
/// mappings are gone.
pub unsafe fn remap_resized(ring: &mut io_uring, reply: &io_uring_params) -> c_int {
    let layout = resized_layout(ring, reply);
    let mut fresh = io_uring::zeroed();
    // SAFETY: `layout` describes the resized rings of this ring's fd.
    let ret = unsafe { map_rings(ring.ring_fd, &layout, &mut fresh.sq, &mut fresh.cq) };
    if ret != 0 {
        return ret;
    }
    // SAFETY: the old mappings are replaced below and never used again.
    unsafe {
        sys::munmap(ring.sq.sqes.cast(), ring.sq.sqes_sz as usize);
        unmap_rings(&ring.sq, &ring.cq);
    }
    fresh.sq.sqe_head = ring.sq.sqe_head;
    fresh.sq.sqe_tail = ring.sq.sqe_tail;
    fresh.sq.stats_lo = ring.sq.stats_lo;
    fresh.cq.reg_key = ring.cq.reg_key;
    let private_array = !ring.sq.array.is_null();
    ring.sq = fresh.sq;
    ring.cq = fresh.cq;
    if ring.flags & IORING_SETUP_NO_SQARRAY == 0 {
        // SAFETY: the new kernel array, ring_entries slots in the new mapping.
        unsafe { ring::fill_sq_array(&ring.sq) };
    } else if private_array {
        // NO_SQARRAY added by the library: still the private array.
        ring.sq.array = private_sq_array(ring.sq.ring_entries);
    }
    0
}

#[cfg(test)]
mod tests {
    //! The sizing and layout arithmetic, without a kernel. The rules are
    //! the kernel's (io_uring_setup(2)): entries round up to a power of
    //! two, at most 32768 SQ and 65536 CQ entries unless CLAMP, the CQ
    //! twice the SQ unless CQSIZE, never smaller than the SQ.

    use super::*;
    use crate::uapi::{io_cqring_offsets, io_sqring_offsets};

    const EINVAL: Result<(u32, u32), c_int> = Err(-libc::EINVAL);

    fn params(flags: u32, cq_entries: u32) -> io_uring_params {
        io_uring_params {
            flags,
            cq_entries,
            ..Default::default()
        }
    }

    #[test]
    fn round_up_goes_to_the_next_multiple() {
        assert_eq!(round_up(0, 4096), 0);
        assert_eq!(round_up(1, 4096), 4096);
        assert_eq!(round_up(4096, 4096), 4096);
        assert_eq!(round_up(4097, 4096), 8192);
        assert_eq!(round_up(65, 64), 128);
    }

    #[test]
    fn big_entries_take_two_slots() {
        assert_eq!(sqes_bytes(0, 8), 8 * 64);
        assert_eq!(sqes_bytes(IORING_SETUP_SQE128, 8), 8 * 128);
        assert_eq!(sqes_bytes(IORING_SETUP_CQE32, 8), 8 * 64);
        assert_eq!(cqes_bytes(0, 16), 16 * 16);
        assert_eq!(cqes_bytes(IORING_SETUP_CQE32, 16), 16 * 32);
        assert_eq!(cqes_bytes(IORING_SETUP_SQE128, 16), 16 * 16);
    }

    #[test]
    fn sq_entries_round_up_and_the_cq_is_twice_as_big() {
        let plain = params(0, 0);
        assert_eq!(sq_cq_entries(1, &plain), Ok((1, 2)));
        assert_eq!(sq_cq_entries(3, &plain), Ok((4, 8)));
        assert_eq!(sq_cq_entries(8, &plain), Ok((8, 16)));
        assert_eq!(sq_cq_entries(32768, &plain), Ok((32768, 65536)));
        assert_eq!(sq_cq_entries(0, &plain), EINVAL);
        assert_eq!(sq_cq_entries(32769, &plain), EINVAL);
        assert_eq!(sq_cq_entries(u32::MAX, &plain), EINVAL);
    }

    #[test]
    fn clamp_caps_the_sizes_instead_of_failing() {
        let clamp = params(IORING_SETUP_CLAMP, 0);
        assert_eq!(sq_cq_entries(32769, &clamp), Ok((32768, 65536)));
        assert_eq!(sq_cq_entries(u32::MAX, &clamp), Ok((32768, 65536)));
        assert_eq!(sq_cq_entries(0, &clamp), EINVAL);
        let cq = params(IORING_SETUP_CLAMP | IORING_SETUP_CQSIZE, u32::MAX);
        assert_eq!(sq_cq_entries(8, &cq), Ok((8, 65536)));
    }

    #[test]
    fn cqsize_sets_the_cq_within_the_limits() {
        let cq = |n| params(IORING_SETUP_CQSIZE, n);
        assert_eq!(sq_cq_entries(8, &cq(100)), Ok((8, 128)));
        assert_eq!(sq_cq_entries(8, &cq(8)), Ok((8, 8)));
        assert_eq!(sq_cq_entries(64, &cq(33)), Ok((64, 64)));
        assert_eq!(sq_cq_entries(8, &cq(65536)), Ok((8, 65536)));
        // Smaller than the SQ, empty, or too big.
        assert_eq!(sq_cq_entries(8, &cq(4)), EINVAL);
        assert_eq!(sq_cq_entries(8, &cq(0)), EINVAL);
        assert_eq!(sq_cq_entries(8, &cq(65537)), EINVAL);
        // cq_entries means nothing without CQSIZE.
        assert_eq!(sq_cq_entries(8, &params(0, 4)), Ok((8, 16)));
    }

    #[test]
    fn locked_charge_is_two_page_order_blocks() {
        // 4096 entries on 4 KiB pages: rings 320 + 8192 * 16 + 4096 * 4
        // bytes = 37 pages -> 64; SQEs 64 pages. liburing 2.3 says 524288.
        if page_size() == 4096 {
            assert_eq!(locked_charge(0, 4096, 8192), 524288);
            // 8 entries: one page each.
            assert_eq!(locked_charge(0, 8, 16), 2 * 4096);
            // CQE32: 128 CQEs of 32 bytes + 320 + 256 -> 2 pages.
            assert_eq!(locked_charge(IORING_SETUP_CQE32, 64, 128), 3 * 4096);
        }
        // Each block is a power of two pages, never less than the bytes.
        for sq in [1u32, 2, 64, 1024, 32768] {
            let bytes = locked_charge(0, sq, 2 * sq);
            assert!(bytes >= memory_size_params(sq, &params(0, 0)) as usize);
        }
    }

    #[test]
    fn memory_size_counts_cqes_ring_header_sq_array_and_sqes_in_pages() {
        let page = page_size();
        let pages =
            |ring: usize, sqes: usize| (round_up(ring, page) + round_up(sqes, page)) as isize;
        // 8 SQ and 16 CQ entries: 16 CQEs of 16 bytes, the 64-byte header,
        // 8 array slots of 4 bytes; 8 SQEs of 64 bytes.
        assert_eq!(
            memory_size_params(8, &params(0, 0)),
            pages(256 + 64 + 32, 512)
        );
        assert_eq!(
            memory_size_params(8, &params(IORING_SETUP_NO_SQARRAY, 0)),
            pages(256 + 64, 512)
        );
        assert_eq!(
            memory_size_params(8, &params(IORING_SETUP_CQE32 | IORING_SETUP_SQE128, 0)),
            pages(512 + 64 + 32, 1024)
        );
        // 4096 entries: 8192 CQEs span many pages.
        assert_eq!(
            memory_size_params(4096, &params(0, 0)),
            pages(8192 * 16 + 64 + 4096 * 4, 4096 * 64)
        );
        assert_eq!(
            memory_size_params(8, &params(IORING_SETUP_CQSIZE, 1024)),
            pages(1024 * 16 + 64 + 32, 512)
        );
        // Invalid sizes give the setup error.
        assert_eq!(memory_size_params(0, &params(0, 0)), -libc::EINVAL as isize);
        assert_eq!(
            memory_size_params(8, &params(IORING_SETUP_CQSIZE, 4)),
            -libc::EINVAL as isize
        );
    }

    /// Params as the kernel lays out a small ring: SQ fields at 0..24,
    /// CQ fields at 64..84, 8 SQ and 16 CQ entries.
    fn kernel_like_params() -> io_uring_params {
        let mut p = params(0, 16);
        p.sq_entries = 8;
        p.sq_off = io_sqring_offsets {
            head: 0,
            tail: 4,
            ring_mask: 8,
            ring_entries: 12,
            flags: 16,
            dropped: 20,
            array: 320,
            ..Default::default()
        };
        p.cq_off = io_cqring_offsets {
            head: 64,
            tail: 68,
            ring_mask: 72,
            ring_entries: 76,
            overflow: 80,
            cqes: 128,
            flags: 84,
            ..Default::default()
        };
        p
    }

    #[test]
    fn offsets_fit_accepts_fields_inside_the_mappings() {
        let p = kernel_like_params();
        assert!(offsets_fit(&p, 352, 384));
        // The last 4 bytes of a mapping are still inside it.
        assert!(offsets_fit(&p, 24, 88));
        // No CQ flags word (old kernels report offset 0): not checked.
        let mut q = p;
        q.cq_off.flags = 0;
        assert!(offsets_fit(&q, 24, 84));
    }

    #[test]
    fn offsets_fit_refuses_fields_outside_or_odd_sizes() {
        let p = kernel_like_params();
        assert!(!offsets_fit(&p, 23, 384), "dropped ends at 24");
        assert!(!offsets_fit(&p, 352, 87), "cq flags end at 88");
        let mut q = p;
        q.sq_off.head = u32::MAX - 1;
        assert!(!offsets_fit(&q, 352, 384));
        let mut q = p;
        q.cq_off.overflow = 4096;
        assert!(!offsets_fit(&q, 352, 384));
        for (sq, cq) in [(6, 16), (8, 12), (0, 16), (8, 0)] {
            let mut q = p;
            q.sq_entries = sq;
            q.cq_entries = cq;
            assert!(!offsets_fit(&q, 352, 384), "entries {sq}/{cq}");
        }
    }

    fn ring_with(flags: u32, features: u32) -> io_uring {
        let mut ring = io_uring::zeroed();
        ring.flags = flags;
        ring.features = features;
        ring
    }

    /// A resize reply: 32 CQ entries with the CQEs at 64, no SQ array
    /// offset, and flags the ring did not set up with.
    fn resize_reply() -> io_uring_params {
        let mut reply = params(IORING_SETUP_CQSIZE, 32);
        reply.sq_entries = 16;
        reply.cq_off.cqes = 64;
        reply
    }

    #[test]
    fn resized_layout_puts_the_sq_array_after_the_cqes() {
        let ring = ring_with(0, IORING_FEAT_SINGLE_MMAP);
        let layout = resized_layout(&ring, &resize_reply());
        // 64 + 32 * 16 = 576, a multiple of 64 already.
        assert_eq!(layout.sq_off.array, 576);
        assert_eq!(layout.flags, 0, "the ring's own setup flags");
        assert_eq!(layout.features, IORING_FEAT_SINGLE_MMAP);
        assert_eq!((layout.sq_entries, layout.cq_entries), (16, 32));

        // Rounded up to a cache line: 64 + 3 * 16 = 112 -> 128.
        let mut reply = resize_reply();
        reply.cq_entries = 3;
        assert_eq!(resized_layout(&ring, &reply).sq_off.array, 128);
    }

    #[test]
    fn resized_layout_doubles_the_cq_region_for_big_cqes() {
        // The kernel doubles the whole CQ region (header and CQEs) for
        // CQE32: (64 + 32 * 16) * 2 = 1152.
        let ring = ring_with(IORING_SETUP_CQE32, 0);
        assert_eq!(resized_layout(&ring, &resize_reply()).sq_off.array, 1152);
    }

    #[test]
    fn resized_layout_keeps_an_array_offset_the_kernel_gave() {
        let ring = ring_with(0, 0);
        let mut reply = resize_reply();
        reply.sq_off.array = 4096;
        assert_eq!(resized_layout(&ring, &reply).sq_off.array, 4096);
        // No SQ array at all: nothing to place.
        let ring = ring_with(IORING_SETUP_NO_SQARRAY, 0);
        let layout = resized_layout(&ring, &resize_reply());
        assert_eq!(layout.sq_off.array, 0);
        assert_eq!(layout.flags, IORING_SETUP_NO_SQARRAY);
    }
}
