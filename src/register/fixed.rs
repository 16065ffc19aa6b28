//! Fixed files and fixed buffers: the ring's registered resource tables
//! (plain, tagged, sparse, updated in place), and cloning buffers from one
//! ring to another.

use core::ffi::{c_int, c_void};
use core::ptr;

use super::{do_register, register_struct};
use crate::ring::{int_flags, io_uring};
use crate::sys;
use crate::uapi::{
    self, io_uring_file_index_range, io_uring_rsrc_register, io_uring_rsrc_update,
    io_uring_rsrc_update2, IORING_REGISTER_BUFFERS, IORING_REGISTER_BUFFERS2,
    IORING_REGISTER_BUFFERS_UPDATE, IORING_REGISTER_CLONE_BUFFERS, IORING_REGISTER_FILES,
    IORING_REGISTER_FILES2, IORING_REGISTER_FILES_UPDATE, IORING_REGISTER_FILES_UPDATE2,
    IORING_REGISTER_FILE_ALLOC_RANGE, IORING_REGISTER_SRC_REGISTERED, IORING_RSRC_REGISTER_SPARSE,
    IORING_UNREGISTER_BUFFERS, IORING_UNREGISTER_FILES,
};

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

/// Registers a table with IORING_REGISTER_FILES2 or BUFFERS2: `nr`
/// entries of `data` (fds or iovecs) with optional `tags`, or an empty
/// sparse table. A file table is retried once with a raised fd limit.
///
/// # Safety
/// `data` and `tags` must be NULL or point to `nr` entries.
unsafe fn register_table<T>(
    ring: &io_uring,
    opcode: u32,
    data: *const T,
    tags: *const u64,
    nr: u32,
    sparse: bool,
) -> c_int {
    let reg = io_uring_rsrc_register {
        nr,
        flags: if sparse {
            IORING_RSRC_REGISTER_SPARSE
        } else {
            0
        },
        resv2: 0,
        data: data as u64,
        tags: tags as u64,
    };
    let size = core::mem::size_of_val(&reg) as u32;
    if opcode == IORING_REGISTER_FILES2 {
        // SAFETY: `reg` is a valid rsrc_register; its pointers per the contract.
        unsafe { register_files_retry(ring, opcode, ptr::from_ref(&reg).cast(), size, nr) }
    } else {
        // SAFETY: as above.
        unsafe { register_struct(ring, opcode, &reg, size) }
    }
}

/// Updates `nr` entries of a table from `off` with `data` and optional
/// `tags` (the `*_update_tag` calls).
///
/// # Safety
/// `data` and `tags` must be NULL or point to `nr` entries.
unsafe fn update_table<T>(
    ring: &io_uring,
    opcode: u32,
    off: u32,
    data: *const T,
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
    unsafe { register_struct(ring, opcode, &up, size) }
}

/// `io_uring_register_files`.
///
/// # Safety
/// `files` must point to `nr` fds.
pub unsafe fn register_files(ring: &io_uring, files: *const c_int, nr: u32) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { register_files_retry(ring, IORING_REGISTER_FILES, files.cast(), nr, nr) }
}

/// The calls that pass a table of `nr` fds or iovecs with optional tags:
/// registering one (`*_tags`, IORING_REGISTER_FILES2/BUFFERS2) or
/// updating one from `off` (`*_update_tag`).
macro_rules! tagged_table {
    ($name:ident($data:ident: $ty:ty) registers $op:ident) => {
        #[doc = concat!("`io_uring_", stringify!($name), "`.")]
        ///
        /// # Safety
        #[doc = concat!("`", stringify!($data), "` and `tags` must be NULL or point to `nr` entries.")]
        pub unsafe fn $name(ring: &io_uring, $data: *const $ty, tags: *const u64, nr: u32) -> c_int {
            // SAFETY: forwarded contract.
            unsafe { register_table(ring, $op, $data, tags, nr, false) }
        }
    };
    ($name:ident($data:ident: $ty:ty) updates $op:ident) => {
        #[doc = concat!("`io_uring_", stringify!($name), "`.")]
        ///
        /// # Safety
        #[doc = concat!("`", stringify!($data), "` and `tags` must be NULL or point to `nr` entries.")]
        pub unsafe fn $name(
            ring: &io_uring,
            off: u32,
            $data: *const $ty,
            tags: *const u64,
            nr: u32,
        ) -> c_int {
            // SAFETY: forwarded contract.
            unsafe { update_table(ring, $op, off, $data, tags, nr) }
        }
    };
}

tagged_table!(register_files_tags(files: c_int) registers IORING_REGISTER_FILES2);
tagged_table!(register_files_update_tag(files: c_int) updates IORING_REGISTER_FILES_UPDATE2);
tagged_table!(register_buffers_tags(iovecs: libc::iovec) registers IORING_REGISTER_BUFFERS2);
tagged_table!(register_buffers_update_tag(iovecs: libc::iovec) updates IORING_REGISTER_BUFFERS_UPDATE);

/// An empty (sparse) table of `nr` slots, with IORING_REGISTER_FILES2 or
/// BUFFERS2.
fn register_sparse(ring: &io_uring, opcode: u32, nr: u32) -> c_int {
    // SAFETY: a sparse table carries no pointers.
    unsafe { register_table(ring, opcode, ptr::null::<c_void>(), ptr::null(), nr, true) }
}

/// `io_uring_register_files_sparse`: an empty table of `nr` slots.
pub fn register_files_sparse(ring: &io_uring, nr: u32) -> c_int {
    register_sparse(ring, IORING_REGISTER_FILES2, nr)
}

/// `io_uring_register_files_update`.
///
/// # Safety
/// `files` must point to `nr` fds.
pub unsafe fn register_files_update(
    ring: &io_uring,
    off: u32,
    files: *const c_int,
    nr: u32,
) -> c_int {
    let up = io_uring_rsrc_update {
        offset: off,
        resv: 0,
        data: files as u64,
    };
    // SAFETY: `files` per the contract.
    unsafe { register_struct(ring, IORING_REGISTER_FILES_UPDATE, &up, nr) }
}

/// `io_uring_unregister_files`.
pub fn unregister_files(ring: &io_uring) -> c_int {
    // SAFETY: no argument.
    unsafe { do_register(ring, IORING_UNREGISTER_FILES, ptr::null(), 0) }
}

/// `io_uring_register_file_alloc_range`.
pub fn register_file_alloc_range(ring: &io_uring, off: u32, len: u32) -> c_int {
    let range = io_uring_file_index_range { off, len, resv: 0 };
    // SAFETY: a file_index_range carries no pointers.
    unsafe { register_struct(ring, IORING_REGISTER_FILE_ALLOC_RANGE, &range, 0) }
}

/// `io_uring_register_buffers`.
///
/// # Safety
/// `iovecs` must point to `nr` iovecs.
pub unsafe fn register_buffers(ring: &io_uring, iovecs: *const libc::iovec, nr: u32) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { do_register(ring, IORING_REGISTER_BUFFERS, iovecs.cast(), nr) }
}

/// `io_uring_register_buffers_sparse`: an empty table of `nr` slots.
pub fn register_buffers_sparse(ring: &io_uring, nr: u32) -> c_int {
    register_sparse(ring, IORING_REGISTER_BUFFERS2, nr)
}

/// `io_uring_unregister_buffers`.
pub fn unregister_buffers(ring: &io_uring) -> c_int {
    // SAFETY: no argument.
    unsafe { do_register(ring, IORING_UNREGISTER_BUFFERS, ptr::null(), 0) }
}

/// `__io_uring_clone_buffers_offset`: copies `nr` registered buffers of
/// `src` (from `src_off`) into `dst` (at `dst_off`); nr 0 means all.
pub fn clone_buffers_with_flags(
    dst: &io_uring,
    src: &io_uring,
    dst_off: u32,
    src_off: u32,
    nr: u32,
    flags: u32,
) -> c_int {
    let mut arg = uapi::io_uring_clone_buffers {
        flags,
        src_off,
        dst_off,
        nr,
        ..Default::default()
    };
    // The source can be named by its registered index only where the kernel
    // accepts that for io_uring_register and the calling thread owns it.
    if flags & IORING_REGISTER_SRC_REGISTERED != 0 && src.int_flags & int_flags::REG_REG_RING != 0 {
        arg.src_fd = src.enter_ring_fd as u32;
    } else {
        arg.src_fd = src.ring_fd as u32;
        arg.flags &= !IORING_REGISTER_SRC_REGISTERED;
    }
    // SAFETY: a clone_buffers argument carries no pointers.
    unsafe { register_struct(dst, IORING_REGISTER_CLONE_BUFFERS, &arg, 1) }
}

/// `__io_uring_clone_buffers`: all of `src`'s buffers, with `flags`.
pub fn clone_all_buffers_with_flags(dst: &io_uring, src: &io_uring, flags: u32) -> c_int {
    clone_buffers_with_flags(dst, src, 0, 0, 0, flags)
}

/// `io_uring_clone_buffers`: all of `src`'s buffers, naming `src` by its
/// registered index where possible.
pub fn clone_buffers(dst: &io_uring, src: &io_uring) -> c_int {
    clone_buffers_with_flags(dst, src, 0, 0, 0, IORING_REGISTER_SRC_REGISTERED)
}
