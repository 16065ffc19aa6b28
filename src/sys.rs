//! Raw system calls, and what the process may do: its credentials,
//! capabilities and CPU affinity.
//!
//! System calls are issued directly (no libc wrapper) so that a failure comes
//! back as `-errno` and the caller's `errno` is never touched, which is what
//! liburing's exported functions promise. Their numbers and argument types
//! are the kernel's ABI, in [`crate::uapi`].

use core::ffi::{c_int, c_long, c_uint, c_void};

use crate::uapi::{
    io_uring_params, nr, NR_IO_URING_ENTER, NR_IO_URING_REGISTER, NR_IO_URING_SETUP, NSIG_BYTES,
};

/// Issues a system call with up to six arguments; returns the kernel's raw
/// result (`-errno` on failure).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn syscall6(n: i64, a: [usize; 6]) -> c_long {
    let ret: c_long;
    // SAFETY: the x86_64 Linux system-call convention: number in rax,
    // arguments in rdi, rsi, rdx, r10, r8, r9; rcx and r11 are clobbered.
    // The caller guarantees the arguments are valid for system call `n`.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") n as c_long => ret,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            in("r8") a[4],
            in("r9") a[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn syscall6(n: i64, a: [usize; 6]) -> c_long {
    let ret: c_long;
    // SAFETY: the aarch64 Linux system-call convention: number in x8,
    // arguments in x0..x5, result in x0. The caller guarantees the arguments
    // are valid for system call `n`.
    unsafe {
        core::arch::asm!(
            "svc 0",
            in("x8") n,
            inlateout("x0") a[0] => ret,
            in("x1") a[1],
            in("x2") a[2],
            in("x3") a[3],
            in("x4") a[4],
            in("x5") a[5],
            options(nostack),
        );
    }
    ret
}

/// `io_uring_setup(2)`: the new ring's fd, or `-errno`.
///
/// # Safety
/// `p` must point to a writable `io_uring_params`.
pub unsafe fn io_uring_setup(entries: c_uint, p: *mut io_uring_params) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        syscall6(
            NR_IO_URING_SETUP,
            [entries as usize, p as usize, 0, 0, 0, 0],
        ) as c_int
    }
}

/// What one `io_uring_enter(2)` asks of a ring, everything but the ring's
/// fd: the SQEs to submit, the completions to wait for, the enter flags,
/// and the extended argument (a sigmask or an `io_uring_getevents_arg`,
/// as `flags` says) with its size. One value that the enter paths hand on
/// whole, adding flags or changing a count where a path does; the fd is
/// the one part that each path picks for itself (the ring's, a registered
/// index, the poller's target).
#[derive(Clone, Copy)]
pub struct EnterArgs {
    /// SQEs the kernel is to consume from the SQ.
    pub to_submit: c_uint,
    /// Completions to wait for (with `IORING_ENTER_GETEVENTS`).
    pub min_complete: c_uint,
    /// `IORING_ENTER_*` flags.
    pub flags: c_uint,
    /// NULL, a sigmask, or what `flags` announces (`EXT_ARG`: an
    /// `io_uring_getevents_arg`, `EXT_ARG_REG`: an offset into the
    /// registered wait region).
    pub arg: *const c_void,
    /// The size of what `arg` points to.
    pub sz: usize,
}

impl EnterArgs {
    /// An enter that passes no argument (a NULL sigmask of the kernel's
    /// sigset size, as liburing passes it).
    #[inline(always)]
    pub const fn new(to_submit: c_uint, min_complete: c_uint, flags: c_uint) -> Self {
        Self {
            to_submit,
            min_complete,
            flags,
            arg: core::ptr::null(),
            sz: NSIG_BYTES,
        }
    }

    /// The same enter with the flags in `more` added.
    #[inline(always)]
    pub const fn with_flags(self, more: c_uint) -> Self {
        Self {
            flags: self.flags | more,
            ..self
        }
    }
}

/// `io_uring_enter(2)` on `fd` (a ring fd, or a registered index with
/// `IORING_ENTER_REGISTERED_RING` in the flags) with the arguments `args`.
///
/// # Safety
/// `args.arg` must be NULL or valid, for `args.sz` bytes, for the kind of
/// argument `args.flags` announces.
#[inline(always)]
pub unsafe fn io_uring_enter2(fd: c_uint, args: EnterArgs) -> c_int {
    let ret: c_long;
    // The four `unsigned int` arguments go as they are, in the low halves
    // of their registers: the kernel takes only those (its system-call
    // entry casts every argument to the declared type), so there is no
    // zero-extension to pay on the hot path.
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as for `syscall6`; the upper halves of rdi, rsi, rdx and r10
    // are not read by io_uring_enter. The caller guarantees `args.arg` and
    // `args.sz`.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") NR_IO_URING_ENTER as c_long => ret,
            in("rdi") fd,
            in("rsi") args.to_submit,
            in("rdx") args.min_complete,
            in("r10") args.flags,
            in("r8") args.arg,
            in("r9") args.sz,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as for `syscall6`; the upper halves of x0..x3 are not read
    // by io_uring_enter. The caller guarantees `args.arg` and `args.sz`.
    unsafe {
        core::arch::asm!(
            "svc 0",
            in("x8") NR_IO_URING_ENTER,
            inlateout("x0") fd => ret,
            in("x1") args.to_submit,
            in("x2") args.min_complete,
            in("x3") args.flags,
            in("x4") args.arg,
            in("x5") args.sz,
            options(nostack),
        );
    }
    ret as c_int
}

/// `io_uring_register(2)`.
///
/// # Safety
/// `arg` must be valid for `opcode` and `nr_args`.
pub unsafe fn io_uring_register(
    fd: c_uint,
    opcode: c_uint,
    arg: *const c_void,
    nr_args: c_uint,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        syscall6(
            NR_IO_URING_REGISTER,
            [
                fd as usize,
                opcode as usize,
                arg as usize,
                nr_args as usize,
                0,
                0,
            ],
        ) as c_int
    }
}

/// A new read-write mapping of `len` bytes (`fd`/`off`, or anonymous with
/// fd -1), or `-errno`.
///
/// # Safety
/// As for mmap(2) with a NULL address hint: no existing memory is touched,
/// but mapping a file shares it with whoever else maps it.
pub unsafe fn mmap(len: usize, flags: c_int, fd: c_int, off: u64) -> Result<*mut c_void, c_int> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: forwarded contract.
    let ret = unsafe {
        syscall6(
            nr::MMAP,
            [
                0,
                len,
                prot as usize,
                flags as usize,
                fd as usize,
                off as usize,
            ],
        )
    };
    // The kernel returns -errno in the last page of the address space.
    if (-4095..0).contains(&ret) {
        Err(ret as c_int)
    } else {
        Ok(ret as *mut c_void)
    }
}

/// `munmap(2)`.
///
/// # Safety
/// The range must be a mapping this library owns and nobody uses any more.
pub unsafe fn munmap(addr: *mut c_void, len: usize) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { syscall6(nr::MUNMAP, [addr as usize, len, 0, 0, 0, 0]) as c_int }
}

/// `madvise(2)`.
///
/// # Safety
/// As for madvise(2).
pub unsafe fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { syscall6(nr::MADVISE, [addr as usize, len, advice as usize, 0, 0, 0]) as c_int }
}

/// `close(2)`.
pub fn close(fd: c_int) -> c_int {
    // SAFETY: closing an fd has no memory-safety preconditions.
    unsafe { syscall6(nr::CLOSE, [fd as usize, 0, 0, 0, 0, 0]) as c_int }
}

/// `getrlimit(2)`.
pub fn getrlimit(resource: c_int, rlim: &mut libc::rlimit) -> c_int {
    // SAFETY: `rlim` is a valid, writable rlimit.
    unsafe {
        syscall6(
            nr::GETRLIMIT,
            [resource as usize, rlim as *mut _ as usize, 0, 0, 0, 0],
        ) as c_int
    }
}

/// `setrlimit(2)`.
pub fn setrlimit(resource: c_int, rlim: &libc::rlimit) -> c_int {
    // SAFETY: `rlim` is a valid rlimit.
    unsafe {
        syscall6(
            nr::SETRLIMIT,
            [resource as usize, rlim as *const _ as usize, 0, 0, 0, 0],
        ) as c_int
    }
}

/// `gettid(2)`: the calling thread's id.
pub fn gettid() -> i32 {
    // SAFETY: no arguments, no memory touched.
    unsafe { syscall6(nr::GETTID, [0; 6]) as i32 }
}

/// `sched_yield(2)`.
pub fn sched_yield() {
    // SAFETY: no arguments, no memory touched.
    unsafe { syscall6(nr::SCHED_YIELD, [0; 6]) };
}

/// The real, effective and saved user ids (`getresuid(2)`), then the same
/// for group ids (`getresgid(2)`).
pub fn resuid_resgid() -> ([u32; 3], [u32; 3]) {
    let mut uid = [0u32; 3];
    let mut gid = [0u32; 3];
    // SAFETY: each pointer names a writable u32 of the arrays above.
    unsafe {
        let [a, b, c] = &mut uid;
        syscall6(
            nr::GETRESUID,
            [
                a as *mut u32 as usize,
                b as *mut u32 as usize,
                c as *mut u32 as usize,
                0,
                0,
                0,
            ],
        );
        let [a, b, c] = &mut gid;
        syscall6(
            nr::GETRESGID,
            [
                a as *mut u32 as usize,
                b as *mut u32 as usize,
                c as *mut u32 as usize,
                0,
                0,
                0,
            ],
        );
    }
    (uid, gid)
}

/// Whether the calling thread holds any capability in its effective or
/// permitted set (`capget(2)`, version 3: two 32-bit words per set). A
/// failing call counts as "holds some", the cautious answer.
pub fn holds_capabilities() -> bool {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: both pointers name writable structs of the sizes capget
    // expects for version 3.
    let ret = unsafe {
        syscall6(
            nr::CAPGET,
            [
                &mut header as *mut Header as usize,
                data.as_mut_ptr() as usize,
                0,
                0,
                0,
                0,
            ],
        )
    };
    ret != 0 || data.iter().any(|d| d.effective | d.permitted != 0)
}

/// The CPUs the calling thread may run on (`sched_getaffinity(2)`), as a
/// bit set of up to 1024 CPUs; None if the call fails.
pub fn cpu_affinity() -> Option<[u64; 16]> {
    let mut mask = [0u64; 16];
    // SAFETY: the mask is writable and its size is passed.
    let ret = unsafe {
        syscall6(
            nr::SCHED_GETAFFINITY,
            [
                0,
                core::mem::size_of_val(&mask),
                mask.as_mut_ptr() as usize,
                0,
                0,
                0,
            ],
        )
    };
    (ret > 0).then_some(mask)
}
