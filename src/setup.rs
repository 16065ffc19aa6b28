//! Ring creation, mapping and teardown.

use core::ffi::{c_int, c_void};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

use crate::ring::{int_flags, io_uring, io_uring_cq, io_uring_sq};
use crate::sys::{self, io_uring_cqe, io_uring_params, io_uring_sqe};
use crate::sys::{
    IORING_FEAT_NATIVE_WORKERS, IORING_FEAT_SINGLE_MMAP, IORING_OFF_CQ_RING, IORING_OFF_SQES,
    IORING_OFF_SQ_RING, IORING_SETUP_CLAMP, IORING_SETUP_CQE32, IORING_SETUP_CQSIZE,
    IORING_SETUP_IOPOLL, IORING_SETUP_NO_MMAP, IORING_SETUP_NO_SQARRAY,
    IORING_SETUP_REGISTERED_FD_ONLY, IORING_SETUP_SQE128, IORING_SETUP_SQPOLL, KERN_MAX_CQ_ENTRIES,
    KERN_MAX_ENTRIES,
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

/// Fills the SQ/CQ pointers from the offsets the kernel returned.
///
/// # Safety
/// `sq.ring_ptr` / `cq.ring_ptr` must be live mappings laid out as `p` says.
unsafe fn set_ring_pointers(p: &io_uring_params, sq: &mut io_uring_sq, cq: &mut io_uring_cq) {
    let s = sq.ring_ptr as *mut u8;
    let c = cq.ring_ptr as *mut u8;
    // SAFETY: the kernel's offsets lie inside the mappings (forwarded contract).
    unsafe {
        sq.khead = s.add(p.sq_off.head as usize).cast();
        sq.ktail = s.add(p.sq_off.tail as usize).cast();
        sq.kring_mask = s.add(p.sq_off.ring_mask as usize).cast();
        sq.kring_entries = s.add(p.sq_off.ring_entries as usize).cast();
        sq.kflags = s.add(p.sq_off.flags as usize).cast();
        sq.kdropped = s.add(p.sq_off.dropped as usize).cast();
        if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
            sq.array = s.add(p.sq_off.array as usize).cast();
        }
        cq.khead = c.add(p.cq_off.head as usize).cast();
        cq.ktail = c.add(p.cq_off.tail as usize).cast();
        cq.kring_mask = c.add(p.cq_off.ring_mask as usize).cast();
        cq.kring_entries = c.add(p.cq_off.ring_entries as usize).cast();
        cq.koverflow = c.add(p.cq_off.overflow as usize).cast();
        cq.cqes = c.add(p.cq_off.cqes as usize).cast();
        if p.cq_off.flags != 0 {
            cq.kflags = c.add(p.cq_off.flags as usize).cast();
        }
        sq.ring_mask = *sq.kring_mask;
        sq.ring_entries = *sq.kring_entries;
        cq.ring_mask = *cq.kring_mask;
        cq.ring_entries = *cq.kring_entries;
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
    unsafe { set_ring_pointers(p, sq, cq) };
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

/// Set once a ring set up without NO_SQARRAY succeeded after the same setup
/// with it failed: the kernel predates the flag (Linux < 6.6), so later
/// rings skip the attempt that is bound to fail.
static KERNEL_LACKS_NO_SQARRAY: AtomicBool = AtomicBool::new(false);

/// `RSURING_SQARRAY=1` (read once per process): never add
/// IORING_SETUP_NO_SQARRAY, for programs that put their own, non-identity
/// indices into `sq.array` and submit behind the library's back.
fn keep_sq_array_by_env() -> bool {
    static KEEP: OnceLock<bool> = OnceLock::new();
    *KEEP.get_or_init(|| match std::env::var("RSURING_SQARRAY") {
        Ok(v) if v == "1" => true,
        Ok(v) if v == "0" || v.is_empty() => false,
        Ok(v) => {
            // Documented opt-in diagnostic: the user set the variable wrongly.
            eprintln!("rsuring: ignoring RSURING_SQARRAY={v:?}: expected 0 or 1");
            false
        }
        Err(_) => false,
    })
}

/// The private SQ array for a ring of `entries` SQ entries, holding the
/// identity mapping a reader of `sq.array` would find on an old ring.
fn private_sq_array(entries: u32) -> *mut u32 {
    for (i, slot) in PRIVATE_SQ_ARRAY.iter().take(entries as usize).enumerate() {
        slot.store(i as u32, Ordering::Relaxed);
    }
    PRIVATE_SQ_ARRAY.as_ptr() as *mut u32
}

/// Creates a ring into `ring`. Returns the bytes of application memory used
/// (NO_MMAP with `buf`), otherwise 0; or `-errno`, leaving `ring` zeroed.
///
/// Like liburing 2.6+, the ring gets IORING_SETUP_NO_SQARRAY where the
/// kernel has it (it saves the kernel an index load and a bounds check per
/// SQE), falling back to a plain setup when the kernel says `-EINVAL`. An
/// application that asked for NO_SQARRAY itself gets no fallback and a NULL
/// `sq.array`, as with liburing 2.6+. Otherwise `sq.array` points at
/// [`PRIVATE_SQ_ARRAY`], so binaries built against older headers that store
/// into it keep working. `RSURING_SQARRAY=1` keeps the kernel's array (for
/// programs that rely on non-identity indices; see the README).
///
/// # Safety
/// `buf`, when non-null, must be `buf_size` writable bytes that outlive the ring.
pub unsafe fn init_with_params(
    entries: u32,
    ring: &mut io_uring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> c_int {
    let asked = p.flags;
    if asked & IORING_SETUP_NO_SQARRAY != 0
        || keep_sq_array_by_env()
        || KERNEL_LACKS_NO_SQARRAY.load(Ordering::Relaxed)
    {
        // SAFETY: forwarded contract.
        return unsafe { init_once(entries, ring, p, buf, buf_size) };
    }
    p.flags |= IORING_SETUP_NO_SQARRAY;
    // SAFETY: forwarded contract.
    let ret = unsafe { init_once(entries, ring, p, buf, buf_size) };
    if ret >= 0 {
        ring.sq.array = private_sq_array(ring.sq.ring_entries);
        return ret;
    }
    if ret != -libc::EINVAL {
        p.flags = asked;
        return ret;
    }
    p.flags = asked;
    // SAFETY: forwarded contract.
    let ret = unsafe { init_once(entries, ring, p, buf, buf_size) };
    if ret >= 0 {
        KERNEL_LACKS_NO_SQARRAY.store(true, Ordering::Relaxed);
    }
    ret
}

/// One io_uring_setup attempt with exactly `p.flags`, and the mapping.
///
/// # Safety
/// As for [`init_with_params`].
unsafe fn init_once(
    entries: u32,
    ring: &mut io_uring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> c_int {
    *ring = io_uring::zeroed();
    if p.flags & IORING_SETUP_REGISTERED_FD_ONLY != 0 && p.flags & IORING_SETUP_NO_MMAP == 0 {
        return -libc::EINVAL;
    }
    let mut used = 0;
    if p.flags & IORING_SETUP_NO_MMAP != 0 {
        // SAFETY: forwarded contract on buf.
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
        unsafe { set_ring_pointers(p, &mut ring.sq, &mut ring.cq) };
    }

    if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        // Slot i always holds SQE i, so submission only has to move the tail.
        for i in 0..ring.sq.ring_entries {
            // SAFETY: the array has ring_entries slots in the SQ ring mapping.
            unsafe { *ring.sq.array.add(i as usize) = i };
        }
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
    if p.flags & crate::sys::IORING_SETUP_SINGLE_ISSUER != 0 {
        crate::register::auto_register_ring_fd(ring);
    }
    if crate::stats::enabled_by_env() {
        ring.enable_stats();
    }
    used as c_int
}

/// `io_uring_queue_init_params`.
pub fn queue_init_params(entries: u32, ring: &mut io_uring, p: &mut io_uring_params) -> c_int {
    // SAFETY: no application buffer is passed.
    let ret = unsafe { crate::sqpoll::init(entries, ring, p, ptr::null_mut(), 0) };
    ret.min(0)
}

/// `rsuring_queue_init_batched`: the best kernel-side completion batching
/// the kernel offers, without SQPOLL.
pub fn queue_init_batched(entries: u32, ring: &mut io_uring, flags: u32) -> c_int {
    use crate::sys::{
        IORING_SETUP_COOP_TASKRUN, IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_SINGLE_ISSUER,
        IORING_SETUP_TASKRUN_FLAG,
    };
    let tries: &[u32] = if flags & IORING_SETUP_SQPOLL != 0 {
        &[0]
    } else {
        &[
            // TASKRUN_FLAG: the kernel flags pending completion work in the
            // SQ ring, so a non-blocking peek knows to enter for it.
            IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
            IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
            0,
        ]
    };
    let mut ret = -libc::EINVAL;
    for extra in tries {
        let mut p = io_uring_params {
            flags: flags | extra,
            ..Default::default()
        };
        ret = queue_init_params(entries, ring, &mut p);
        if ret != -libc::EINVAL {
            break;
        }
    }
    ret
}

/// `io_uring_queue_mmap`: maps the rings of an fd the caller set up itself.
///
/// # Safety
/// `p` must be what io_uring_setup returned for `fd`.
pub unsafe fn queue_mmap(fd: c_int, p: &io_uring_params, ring: &mut io_uring) -> c_int {
    *ring = io_uring::zeroed();
    // Mapping some other kind of file at the ring offsets would "work" and
    // fault on first use; an empty io_uring_enter tells an io_uring fd
    // (anything else answers -EOPNOTSUPP, a closed fd -EBADF).
    // SAFETY: no argument is passed.
    let probe = unsafe { sys::io_uring_enter2(fd as u32, 0, 0, 0, ptr::null(), 0) };
    if probe == -libc::EOPNOTSUPP || probe == -libc::EBADF {
        return probe;
    }
    // SAFETY: forwarded contract.
    let ret = unsafe { map_rings(fd, p, &mut ring.sq, &mut ring.cq) };
    if ret == 0 {
        ring.flags = p.flags;
        ring.features = p.features;
        ring.ring_fd = fd;
        ring.enter_ring_fd = fd;
        if crate::stats::enabled_by_env() {
            ring.enable_stats();
        }
    } else {
        *ring = io_uring::zeroed();
    }
    ret
}

/// Unmaps whatever ring memory this library mapped for `ring`.
///
/// # Safety
/// The ring must not be used afterwards.
unsafe fn release_memory(ring: &mut io_uring) {
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

/// `io_uring_queue_exit`. Safe to call twice: the second call finds a
/// zeroed ring and does nothing.
pub fn queue_exit(ring: &mut io_uring) {
    if ring.sq.ring_ptr.is_null() && ring.sq.sqes.is_null() {
        return;
    }
    ring.release_ext();
    // SAFETY: the application hands the ring back; nothing uses it after.
    unsafe { release_memory(ring) };
    crate::sqpoll::leave(ring);
    crate::register::release_ring_fd_at_exit(ring);
    if ring.ring_fd >= 0 {
        sys::close(ring.ring_fd);
    }
    *ring = io_uring::zeroed();
    ring.ring_fd = -1;
    ring.enter_ring_fd = -1;
}

/// `io_uring_ring_dontfork`: keep the ring mappings out of fork()ed children.
pub fn ring_dontfork(ring: &mut io_uring) -> c_int {
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
/// that charge rings to the memory cgroup instead (5.12+).
pub fn mlock_size_params(entries: u32, p: &io_uring_params) -> isize {
    let mut probe_params = io_uring_params::default();
    let mut ring = io_uring::zeroed();
    if queue_init_params(entries, &mut ring, &mut probe_params) == 0 {
        queue_exit(&mut ring);
    }
    if probe_params.features & IORING_FEAT_NATIVE_WORKERS != 0 {
        return 0;
    }
    memory_size_params(entries, p)
}

/// `io_uring_queue_init_mem`: the rings live in `buf` (the application's
/// memory, e.g. a huge page). Returns the bytes used, or `-errno`.
///
/// # Safety
/// `buf` must be `buf_size` writable bytes that outlive the ring.
pub unsafe fn queue_init_mem(
    entries: u32,
    ring: &mut io_uring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> c_int {
    p.flags |= IORING_SETUP_NO_MMAP;
    // SAFETY: forwarded contract.
    unsafe { crate::sqpoll::init(entries, ring, p, buf, buf_size) }
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

/// `io_uring_resize_rings`: asks the kernel for new SQ/CQ sizes, maps the
/// new rings and carries the library's state over. `p->flags` is cleared
/// afterwards, as liburing does.
pub fn resize_rings(ring: &mut io_uring, p: &mut io_uring_params) -> c_int {
    if ring.flags & IORING_SETUP_NO_MMAP != 0 {
        return -libc::EINVAL;
    }
    p.sq_off = Default::default();
    p.cq_off = Default::default();
    // SAFETY: `p` is a valid params struct for the kernel to fill.
    let mut ret = unsafe {
        crate::register::do_register(
            ring,
            crate::sys::IORING_REGISTER_RESIZE_RINGS,
            ptr::from_mut(p).cast(),
            1,
        )
    };
    if ret >= 0 {
        let layout = resized_layout(ring, p);
        let mut fresh = io_uring::zeroed();
        // SAFETY: `layout` describes the resized rings of this ring's fd.
        ret = unsafe { map_rings(ring.ring_fd, &layout, &mut fresh.sq, &mut fresh.cq) };
        if ret == 0 {
            let old_sqes = (ring.sq.sqes, ring.sq.sqes_sz as usize);
            // SAFETY: the old mappings are replaced below and never used again.
            unsafe {
                sys::munmap(old_sqes.0.cast(), old_sqes.1);
                unmap_rings(&ring.sq, &ring.cq);
            }
            // Carry over what is ours, not the kernel's: the SQE indices
            // and the side data kept in liburing's padding.
            fresh.sq.sqe_head = ring.sq.sqe_head;
            fresh.sq.sqe_tail = ring.sq.sqe_tail;
            fresh.sq.owner_lo = ring.sq.owner_lo;
            fresh.cq.ext = ring.cq.ext;
            let private_array = !ring.sq.array.is_null();
            ring.sq = fresh.sq;
            ring.cq = fresh.cq;
            if ring.flags & IORING_SETUP_NO_SQARRAY == 0 {
                for i in 0..ring.sq.ring_entries {
                    // SAFETY: the new array has ring_entries slots.
                    unsafe { *ring.sq.array.add(i as usize) = i };
                }
            } else if private_array {
                // NO_SQARRAY added by the library: still the private array.
                ring.sq.array = private_sq_array(ring.sq.ring_entries);
            }
        }
    }
    p.flags = 0;
    ret
}
