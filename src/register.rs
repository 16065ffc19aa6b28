//! io_uring_register(2) wrappers: resources, eventfds, probes, buffer rings.
//! (Registered ring fds are `crate::ring_fd`.)

use core::ffi::{c_int, c_void};
use core::ptr;

use crate::ring::{int_flags, io_uring};
use crate::sys::{self, io_uring_buf, io_uring_buf_reg, io_uring_buf_ring, io_uring_params};
use crate::sys::{
    io_uring_file_index_range, io_uring_probe, io_uring_probe_op, io_uring_rsrc_register,
    io_uring_rsrc_update, io_uring_rsrc_update2, IORING_REGISTER_BUFFERS2,
    IORING_REGISTER_BUFFERS_UPDATE, IORING_REGISTER_ENABLE_RINGS, IORING_REGISTER_FILES,
    IORING_REGISTER_FILES2, IORING_REGISTER_FILES_UPDATE2, IORING_REGISTER_FILE_ALLOC_RANGE,
    IORING_REGISTER_PBUF_RING, IORING_REGISTER_PROBE, IORING_REGISTER_USE_REGISTERED_RING,
    IORING_RSRC_REGISTER_SPARSE, IORING_UNREGISTER_PBUF_RING,
};

/// Registers through the ring's registered index when the kernel allows it,
/// otherwise through its fd.
///
/// # Safety
/// `arg` must be valid for `opcode` and `nr_args`.
pub unsafe fn do_register(ring: &io_uring, opcode: u32, arg: *const c_void, nr_args: u32) -> c_int {
    let (fd, opcode) = if ring.int_flags & int_flags::REG_REG_RING != 0 {
        (
            ring.enter_ring_fd,
            opcode | IORING_REGISTER_USE_REGISTERED_RING,
        )
    } else if ring.ring_fd < 0 {
        // fd -1 would ask the kernel for a ring-less ("blind") registration.
        return -libc::EBADF;
    } else {
        (ring.ring_fd, opcode)
    };
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_register(fd as u32, opcode, arg, nr_args) }
}

/// Raises RLIMIT_NOFILE by `nr` when registering `nr` files hit EMFILE.
fn raise_nofile(nr: u32) {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    if sys::getrlimit(libc::RLIMIT_NOFILE as c_int, &mut rl) < 0 {
        return;
    }
    if rl.rlim_cur < nr as u64 {
        rl.rlim_cur += nr as u64;
        sys::setrlimit(libc::RLIMIT_NOFILE as c_int, &rl);
    }
}

/// Registers a file table, retrying once with a raised fd limit on EMFILE
/// (the kernel charges registered files against RLIMIT_NOFILE).
///
/// # Safety
/// `arg` must be valid for `opcode` and `nr_args`.
unsafe fn register_files_retry(
    ring: &io_uring,
    opcode: u32,
    arg: *const c_void,
    nr_args: u32,
    nr_files: u32,
) -> c_int {
    // SAFETY: forwarded contract.
    let ret = unsafe { do_register(ring, opcode, arg, nr_args) };
    if ret != -libc::EMFILE {
        return ret;
    }
    raise_nofile(nr_files);
    // SAFETY: forwarded contract.
    unsafe { do_register(ring, opcode, arg, nr_args) }
}

/// `io_uring_register_files`.
///
/// # Safety
/// `files` must point to `nr` fds.
pub unsafe fn register_files(ring: &io_uring, files: *const c_int, nr: u32) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { register_files_retry(ring, IORING_REGISTER_FILES, files.cast(), nr, nr) }
}

/// The argument of IORING_REGISTER_FILES2 / BUFFERS2: `nr` entries of
/// `data` (fds or iovecs) with optional `tags`, or an empty sparse table.
fn rsrc_register(
    data: *const c_void,
    tags: *const u64,
    nr: u32,
    sparse: bool,
) -> io_uring_rsrc_register {
    io_uring_rsrc_register {
        nr,
        flags: if sparse {
            IORING_RSRC_REGISTER_SPARSE
        } else {
            0
        },
        resv2: 0,
        data: data as u64,
        tags: tags as u64,
    }
}

/// `io_uring_register_files_tags` / `_sparse` (NULL `files` and `sparse`).
///
/// # Safety
/// `files` and `tags` must be NULL or point to `nr` entries.
pub unsafe fn register_files_tags(
    ring: &io_uring,
    files: *const c_int,
    tags: *const u64,
    nr: u32,
    sparse: bool,
) -> c_int {
    let reg = rsrc_register(files.cast(), tags, nr, sparse);
    let size = core::mem::size_of_val(&reg) as u32;
    // SAFETY: `reg` is a valid rsrc_register; its pointers per the contract.
    unsafe {
        register_files_retry(
            ring,
            IORING_REGISTER_FILES2,
            ptr::from_ref(&reg).cast(),
            size,
            nr,
        )
    }
}

/// `io_uring_register_buffers_tags` / `_sparse`.
///
/// # Safety
/// `iovecs` and `tags` must be NULL or point to `nr` entries.
pub unsafe fn register_buffers_tags(
    ring: &io_uring,
    iovecs: *const libc::iovec,
    tags: *const u64,
    nr: u32,
    sparse: bool,
) -> c_int {
    let reg = rsrc_register(iovecs.cast(), tags, nr, sparse);
    let size = core::mem::size_of_val(&reg) as u32;
    // SAFETY: `reg` is a valid rsrc_register; its pointers per the contract.
    unsafe {
        do_register(
            ring,
            IORING_REGISTER_BUFFERS2,
            ptr::from_ref(&reg).cast(),
            size,
        )
    }
}

/// `io_uring_register_files_update_tag` / `io_uring_register_buffers_update_tag`.
///
/// # Safety
/// `data` and `tags` must be NULL or point to `nr` entries.
pub unsafe fn update_tag(
    ring: &io_uring,
    opcode: u32,
    off: u32,
    data: *const c_void,
    tags: *const u64,
    nr: u32,
) -> c_int {
    let up = io_uring_rsrc_update2 {
        offset: off,
        resv: 0,
        data: data as u64,
        tags: tags as u64,
        nr,
        resv2: 0,
    };
    let size = core::mem::size_of_val(&up) as u32;
    // SAFETY: `up` is a valid rsrc_update2; its pointers per the contract.
    unsafe { do_register(ring, opcode, ptr::from_ref(&up).cast(), size) }
}

/// The register opcodes of the two `*_update_tag` calls.
pub const FILES_UPDATE_TAG: u32 = IORING_REGISTER_FILES_UPDATE2;
pub const BUFFERS_UPDATE_TAG: u32 = IORING_REGISTER_BUFFERS_UPDATE;

/// `io_uring_register_files_update`.
///
/// # Safety
/// `files` must point to `nr` fds.
pub unsafe fn files_update(ring: &io_uring, off: u32, files: *const c_int, nr: u32) -> c_int {
    let up = io_uring_rsrc_update {
        offset: off,
        resv: 0,
        data: files as u64,
    };
    // SAFETY: `up` is valid; `files` per the contract.
    unsafe {
        do_register(
            ring,
            sys::IORING_REGISTER_FILES_UPDATE,
            ptr::from_ref(&up).cast(),
            nr,
        )
    }
}

/// `io_uring_enable_rings`.
pub fn enable_rings(ring: &io_uring) -> c_int {
    // SAFETY: no argument.
    unsafe { do_register(ring, IORING_REGISTER_ENABLE_RINGS, ptr::null(), 0) }
}

/// `io_uring_register_file_alloc_range`.
pub fn file_alloc_range(ring: &io_uring, off: u32, len: u32) -> c_int {
    let range = io_uring_file_index_range { off, len, resv: 0 };
    // SAFETY: `range` is a valid file_index_range.
    unsafe {
        do_register(
            ring,
            IORING_REGISTER_FILE_ALLOC_RANGE,
            ptr::from_ref(&range).cast(),
            0,
        )
    }
}

/// Number of opcode slots a probe asks for (the kernel's opcode space).
const PROBE_OPS: usize = 256;

/// A malloc()ed probe filled by `register` (given the probe and its room
/// in ops), or NULL.
fn alloc_probe(register: impl FnOnce(*mut c_void, u32) -> c_int) -> *mut io_uring_probe {
    let len = core::mem::size_of::<io_uring_probe>()
        + PROBE_OPS * core::mem::size_of::<io_uring_probe_op>();
    // SAFETY: calloc has no preconditions; the result is checked.
    let probe = unsafe { libc::calloc(1, len) } as *mut io_uring_probe;
    if probe.is_null() {
        return probe;
    }
    if register(probe.cast(), PROBE_OPS as u32) < 0 {
        // SAFETY: allocated above with calloc.
        unsafe { libc::free(probe.cast()) };
        return ptr::null_mut();
    }
    probe
}

/// `io_uring_get_probe_ring`: a malloc()ed probe (free with free() or
/// io_uring_free_probe), or NULL.
pub fn get_probe_ring(ring: &io_uring) -> *mut io_uring_probe {
    // SAFETY: the probe has room for the ops passed.
    alloc_probe(|probe, ops| unsafe { do_register(ring, IORING_REGISTER_PROBE, probe, ops) })
}

/// `io_uring_get_probe`: probes with a throw-away kernel ring that is never
/// mapped and never sees the library's policy (no SQ thread, no
/// registration, no statistics).
pub fn get_probe() -> *mut io_uring_probe {
    let mut p = io_uring_params::default();
    // SAFETY: `p` is a valid, writable params struct.
    let fd = unsafe { sys::io_uring_setup(2, &mut p) };
    if fd < 0 {
        return ptr::null_mut();
    }
    // SAFETY: the probe has room for the ops passed; `fd` is our ring.
    let probe = alloc_probe(|probe, ops| unsafe {
        sys::io_uring_register(fd as u32, IORING_REGISTER_PROBE, probe, ops)
    });
    sys::close(fd);
    probe
}

/// `io_uring_setup_buf_ring`: allocates, registers and initialises a
/// provided-buffer ring of `nentries` buffers for group `bgid`.
pub fn setup_buf_ring(
    ring: &io_uring,
    nentries: u32,
    bgid: c_int,
    flags: u32,
) -> Result<*mut io_uring_buf_ring, c_int> {
    let size = nentries as usize * core::mem::size_of::<io_uring_buf>();
    // SAFETY: a fresh anonymous mapping.
    let br = unsafe { sys::mmap(size, libc::MAP_ANONYMOUS | libc::MAP_PRIVATE, -1, 0) }?;
    let mut reg = io_uring_buf_reg {
        ring_addr: br as u64,
        ring_entries: nentries,
        bgid: bgid as u16,
        flags: flags as u16,
        resv: [0; 3],
    };
    // SAFETY: `reg` describes the mapping made above.
    let ret = unsafe {
        do_register(
            ring,
            IORING_REGISTER_PBUF_RING,
            ptr::from_mut(&mut reg).cast(),
            1,
        )
    };
    if ret != 0 {
        // SAFETY: unmapping what we mapped; the kernel did not take it.
        unsafe { sys::munmap(br, size) };
        return Err(ret);
    }
    // The fresh mapping is zeroed, so the ring's tail already reads 0.
    Ok(br.cast())
}

/// `io_uring_register_buf_ring`.
///
/// # Safety
/// `reg` must be a valid buf_reg.
pub unsafe fn register_buf_ring(ring: &io_uring, reg: *mut io_uring_buf_reg, flags: u32) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        (*reg).flags |= flags as u16;
        do_register(ring, IORING_REGISTER_PBUF_RING, reg.cast(), 1)
    }
}

/// `io_uring_unregister_buf_ring`.
pub fn unregister_buf_ring(ring: &io_uring, bgid: c_int) -> c_int {
    let reg = io_uring_buf_reg {
        bgid: bgid as u16,
        ..Default::default()
    };
    // SAFETY: `reg` is a valid buf_reg.
    unsafe {
        do_register(
            ring,
            IORING_UNREGISTER_PBUF_RING,
            ptr::from_ref(&reg).cast(),
            1,
        )
    }
}

/// `io_uring_free_buf_ring`.
///
/// # Safety
/// `br` must come from setup_buf_ring with the same `nentries`.
pub unsafe fn free_buf_ring(
    ring: &io_uring,
    br: *mut io_uring_buf_ring,
    nentries: u32,
    bgid: c_int,
) -> c_int {
    let ret = unregister_buf_ring(ring, bgid);
    if ret != 0 {
        return ret;
    }
    // SAFETY: forwarded contract: the mapping is ours and unregistered now.
    unsafe {
        sys::munmap(
            br.cast(),
            nentries as usize * core::mem::size_of::<io_uring_buf>(),
        )
    };
    0
}

/// `io_uring_buf_ring_head`: the kernel's head of provided-buffer group
/// `bgid`, stored in `*head`.
pub fn buf_ring_head(ring: &io_uring, bgid: c_int, head: &mut u16) -> c_int {
    let mut status = sys::io_uring_buf_status {
        buf_group: bgid as u32,
        ..Default::default()
    };
    // SAFETY: `status` is a valid buf_status for one entry.
    let ret = unsafe {
        do_register(
            ring,
            sys::IORING_REGISTER_PBUF_STATUS,
            ptr::from_mut(&mut status).cast(),
            1,
        )
    };
    if ret == 0 {
        *head = status.head as u16;
    }
    ret
}

/// `__io_uring_clone_buffers_offset`: copies `nr` registered buffers of
/// `src` (from `src_off`) into `dst` (at `dst_off`); nr 0 means all.
pub fn clone_buffers(
    dst: &io_uring,
    src: &io_uring,
    dst_off: u32,
    src_off: u32,
    nr: u32,
    flags: u32,
) -> c_int {
    let mut arg = sys::io_uring_clone_buffers {
        flags,
        src_off,
        dst_off,
        nr,
        ..Default::default()
    };
    // The source can be named by its registered index only where the kernel
    // accepts that for io_uring_register and the calling thread owns it.
    if flags & sys::IORING_REGISTER_SRC_REGISTERED != 0
        && src.int_flags & int_flags::REG_REG_RING != 0
    {
        arg.src_fd = src.enter_ring_fd as u32;
    } else {
        arg.src_fd = src.ring_fd as u32;
        arg.flags &= !sys::IORING_REGISTER_SRC_REGISTERED;
    }
    // SAFETY: `arg` is a valid clone_buffers argument.
    unsafe {
        do_register(
            dst,
            sys::IORING_REGISTER_CLONE_BUFFERS,
            ptr::from_ref(&arg).cast(),
            1,
        )
    }
}

/// IORING_REGISTER_RESIZE_RINGS: asks the kernel for the sizes in `p`,
/// which it fills with the new layout (the remapping is
/// `crate::lifecycle::resize_rings`).
pub fn resize_rings(ring: &io_uring, p: &mut io_uring_params) -> c_int {
    // SAFETY: `p` is a valid params struct for the kernel to fill.
    unsafe {
        do_register(
            ring,
            sys::IORING_REGISTER_RESIZE_RINGS,
            ptr::from_mut(p).cast(),
            1,
        )
    }
}

/// `io_uring_set_iowait`: whether waits on this ring count as iowait.
pub fn set_iowait(ring: &mut io_uring, enable: bool) -> c_int {
    if ring.features & sys::IORING_FEAT_NO_IOWAIT == 0 {
        return -libc::EOPNOTSUPP;
    }
    if enable {
        ring.int_flags &= !int_flags::NO_IOWAIT;
    } else {
        ring.int_flags |= int_flags::NO_IOWAIT;
    }
    0
}
