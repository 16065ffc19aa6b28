//! Provided-buffer rings (`io_uring_setup_buf_ring` and friends): the
//! kernel picks receive buffers from a ring the application refills.

use core::ffi::c_int;
use core::ptr;

use super::do_register;
use crate::ring::io_uring;
use crate::sys;
use crate::uapi::{
    self, io_uring_buf, io_uring_buf_reg, io_uring_buf_ring, IORING_REGISTER_PBUF_RING,
    IORING_UNREGISTER_PBUF_RING,
};

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

/// `io_uring_register_buf_ring`: registers the ring `reg` describes, with
/// `flags` or-ed into its flags.
///
/// # Safety
/// `reg.ring_addr` must be a buffer ring of `reg.ring_entries` entries
/// that stays mapped while it is registered (the kernel writes its head).
pub unsafe fn register_buf_ring(ring: &io_uring, reg: &mut io_uring_buf_reg, flags: u32) -> c_int {
    reg.flags |= flags as u16;
    // SAFETY: `reg` is a valid buf_reg; its ring per the contract.
    unsafe {
        do_register(
            ring,
            IORING_REGISTER_PBUF_RING,
            ptr::from_mut(reg).cast(),
            1,
        )
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
    let mut status = uapi::io_uring_buf_status {
        buf_group: bgid as u32,
        ..Default::default()
    };
    // SAFETY: `status` is a valid buf_status for one entry.
    let ret = unsafe {
        do_register(
            ring,
            uapi::IORING_REGISTER_PBUF_STATUS,
            ptr::from_mut(&mut status).cast(),
            1,
        )
    };
    if ret == 0 {
        *head = status.head as u16;
    }
    ret
}
