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

/// The system-call instruction of this architecture, as an expression:
/// `raw_syscall!(number; a0, a1, a2, a3, a4, a5)` gives the kernel's raw
/// result (a `c_long`, `-errno` on failure). Each argument goes in its
/// register as it is: a 32-bit value fills the low half only, which is all
/// the kernel reads of an argument it declares 32-bit (on aarch64 the first
/// is widened, as x0 also brings the result back). Must be used inside
/// an `unsafe` block whose caller guarantees the arguments are valid for
/// system call `number`. The conventions: x86_64, number in rax, arguments
/// in rdi, rsi, rdx, r10, r8, r9, result in rax, rcx and r11 clobbered;
/// aarch64, number in x8, arguments in x0..x5, result in x0.
#[cfg(target_arch = "x86_64")]
#[rustfmt::skip]
macro_rules! raw_syscall {
    ($n:expr; $a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr, $a5:expr) => {{
        let ret: c_long;
        core::arch::asm!("syscall", inlateout("rax") $n as c_long => ret, in("rdi") $a0, in("rsi") $a1, in("rdx") $a2, in("r10") $a3, in("r8") $a4, in("r9") $a5, lateout("rcx") _, lateout("r11") _, options(nostack));
        ret
    }};
}

#[cfg(target_arch = "aarch64")]
#[rustfmt::skip]
macro_rules! raw_syscall {
    ($n:expr; $a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr, $a5:expr) => {{
        let ret: c_long;
        core::arch::asm!("svc 0", in("x8") $n as c_long, inlateout("x0") $a0 as usize => ret, in("x1") $a1, in("x2") $a2, in("x3") $a3, in("x4") $a4, in("x5") $a5, options(nostack));
        ret
    }};
}

/// Issues a system call with up to six arguments; returns the kernel's raw
/// result (`-errno` on failure).
#[inline(always)]
unsafe fn syscall6(n: i64, a: [usize; 6]) -> c_long {
    // SAFETY: `raw_syscall!` is this architecture's system-call convention;
    // the caller guarantees the arguments are valid for system call `n`.
    unsafe { raw_syscall!(n; a[0], a[1], a[2], a[3], a[4], a[5]) }
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
    // The four `unsigned int` arguments go as they are, in the low halves
    // of their registers (see `raw_syscall!`): no zero-extension to pay on
    // the hot path.
    // SAFETY: `raw_syscall!` is this architecture's system-call convention;
    // the caller guarantees `args.arg` and `args.sz`.
    let ret = unsafe {
        raw_syscall!(NR_IO_URING_ENTER; fd, args.to_submit, args.min_complete, args.flags, args.arg, args.sz)
    };
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
    (
        real_effective_saved(nr::GETRESUID),
        real_effective_saved(nr::GETRESGID),
    )
}

/// The three ids `getresuid(2)` or `getresgid(2)` (system call `call`)
/// stores through its three pointers.
fn real_effective_saved(call: i64) -> [u32; 3] {
    let mut ids = [0u32; 3];
    let [a, b, c] = &mut ids;
    let args = [a, b, c].map(|id| id as *mut u32 as usize);
    // SAFETY: each pointer names a writable u32 of `ids`.
    unsafe { syscall6(call, [args[0], args[1], args[2], 0, 0, 0]) };
    ids
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

#[cfg(test)]
mod tests {
    /// The raw calls give the ids libc's wrappers give, and, where the test
    /// may change its ids (root), three different ones in the right order.
    #[test]
    fn resuid_resgid_matches_libc() {
        let (mut u, mut g) = ([0u32; 3], [0u32; 3]);
        // SAFETY: each pointer names a writable u32 of the arrays above.
        let ok = unsafe {
            libc::getresuid(&mut u[0], &mut u[1], &mut u[2]) == 0
                && libc::getresgid(&mut g[0], &mut g[1], &mut g[2]) == 0
        };
        assert!(ok);
        assert_eq!(super::resuid_resgid(), (u, g));
        if u[1] != 0 {
            return;
        }
        // SAFETY: the child only makes system calls and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: plain system calls on the child's own credentials.
            let set = unsafe { libc::setresgid(4, 5, 6) == 0 && libc::setresuid(1, 2, 3) == 0 };
            let right = set && super::resuid_resgid() == ([1, 2, 3], [4, 5, 6]);
            // SAFETY: ends the forked child without running the parent's
            // exit handlers.
            unsafe { libc::_exit(if right { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert_eq!(
            status, 0,
            "the ids read back in a child after setresuid/setresgid"
        );
    }
}
