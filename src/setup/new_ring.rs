//! A new ring: [`SetupRequest`] from the policy to the mapper, and
//! `io_uring_setup` with the retries a request may need.

use super::*;

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
    pub(super) buf: *mut c_void,
    pub(super) buf_size: usize,
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
pub(super) fn init_once(req: &mut SetupRequest<'_>) -> c_int {
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
