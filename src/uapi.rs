//! The kernel's user-space ABI as this library uses it: system call
//! numbers, and io_uring's constants and structs
//! (include/uapi/linux/io_uring.h). Checked against the C headers: see the
//! unit tests at the end and tests/kernel_abi.rs.

#![allow(non_camel_case_types)]

// ---------------------------------------------------------------------------
// System call numbers (asm/unistd.h)
// ---------------------------------------------------------------------------

#[cfg(target_arch = "x86_64")]
pub mod nr {
    pub const MMAP: i64 = 9;
    pub const MUNMAP: i64 = 11;
    pub const MADVISE: i64 = 28;
    pub const CLOSE: i64 = 3;
    pub const GETRLIMIT: i64 = 97;
    pub const SETRLIMIT: i64 = 160;
    pub const SCHED_YIELD: i64 = 24;
    pub const GETRESUID: i64 = 118;
    pub const GETRESGID: i64 = 120;
    pub const CAPGET: i64 = 125;
    pub const SCHED_GETAFFINITY: i64 = 204;
    pub const GETTID: i64 = 186;
}

#[cfg(target_arch = "aarch64")]
pub mod nr {
    pub const MMAP: i64 = 222;
    pub const MUNMAP: i64 = 215;
    pub const MADVISE: i64 = 233;
    pub const CLOSE: i64 = 57;
    pub const GETRLIMIT: i64 = 163;
    pub const SETRLIMIT: i64 = 164;
    pub const SCHED_YIELD: i64 = 124;
    pub const GETRESUID: i64 = 148;
    pub const GETRESGID: i64 = 150;
    pub const CAPGET: i64 = 90;
    pub const SCHED_GETAFFINITY: i64 = 123;
    pub const GETTID: i64 = 178;
}

pub const NR_IO_URING_SETUP: i64 = 425;
pub const NR_IO_URING_ENTER: i64 = 426;
pub const NR_IO_URING_REGISTER: i64 = 427;

// ---------------------------------------------------------------------------
// Kernel ABI types (include/uapi/linux/io_uring.h)
// ---------------------------------------------------------------------------

/// The kernel's `__u64`, named so that generated C prototypes say `__u64`
/// (not `uint64_t`, a different type in C on LP64).
pub type __u64 = u64;

/// `struct io_sqring_offsets`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_sqring_offsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub flags: u32,
    pub dropped: u32,
    pub array: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

/// `struct io_cqring_offsets`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_cqring_offsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub overflow: u32,
    pub cqes: u32,
    pub flags: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

/// `struct io_uring_params`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_params {
    pub sq_entries: u32,
    pub cq_entries: u32,
    pub flags: u32,
    pub sq_thread_cpu: u32,
    pub sq_thread_idle: u32,
    pub features: u32,
    pub wq_fd: u32,
    pub resv: [u32; 3],
    pub sq_off: io_sqring_offsets,
    pub cq_off: io_cqring_offsets,
}

/// `struct io_uring_sqe`, with the unions flattened to the members this
/// library itself writes (the C header has the full definition).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_sqe {
    pub opcode: u8,
    pub flags: u8,
    pub ioprio: u16,
    pub fd: i32,
    pub off: u64,
    pub addr: u64,
    pub len: u32,
    pub op_flags: u32,
    pub user_data: u64,
    pub buf_index: u16,
    pub personality: u16,
    pub splice_fd_in: i32,
    pub addr3: u64,
    pub pad2: u64,
}

/// `struct io_uring_cqe` (without the CQE32 tail).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_cqe {
    pub user_data: u64,
    pub res: i32,
    pub flags: u32,
}

/// `struct __kernel_timespec`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct __kernel_timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

/// `struct io_uring_getevents_arg`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_getevents_arg {
    pub sigmask: u64,
    pub sigmask_sz: u32,
    pub min_wait_usec: u32,
    pub ts: u64,
}

/// `struct io_uring_rsrc_register`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_rsrc_register {
    pub nr: u32,
    pub flags: u32,
    pub resv2: u64,
    pub data: u64,
    pub tags: u64,
}

/// `struct io_uring_rsrc_update`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_rsrc_update {
    pub offset: u32,
    pub resv: u32,
    pub data: u64,
}

/// `struct io_uring_rsrc_update2`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_rsrc_update2 {
    pub offset: u32,
    pub resv: u32,
    pub data: u64,
    pub tags: u64,
    pub nr: u32,
    pub resv2: u32,
}

/// `struct io_uring_probe_op`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_probe_op {
    pub op: u8,
    pub resv: u8,
    pub flags: u16,
    pub resv2: u32,
}

/// `struct io_uring_probe` (header; `ops` follow it in memory).
#[repr(C)]
#[derive(Debug)]
pub struct io_uring_probe {
    pub last_op: u8,
    pub ops_len: u8,
    pub resv: u16,
    pub resv2: [u32; 3],
    pub ops: [io_uring_probe_op; 0],
}

/// `struct io_uring_restriction` (opcode-dependent union folded to bytes).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_restriction {
    pub opcode: u16,
    pub arg: u8,
    pub resv: u8,
    pub resv2: [u32; 3],
}

/// `struct io_uring_buf_reg`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_buf_reg {
    pub ring_addr: u64,
    pub ring_entries: u32,
    pub bgid: u16,
    pub flags: u16,
    pub resv: [u64; 3],
}

/// `struct io_uring_buf`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_buf {
    pub addr: u64,
    pub len: u32,
    pub bid: u16,
    pub resv: u16,
}

/// `struct io_uring_buf_ring`: the ring is an array of `io_uring_buf` whose
/// first entry's `resv` field doubles as the tail.
#[repr(C)]
#[derive(Debug)]
pub struct io_uring_buf_ring {
    pub bufs: [io_uring_buf; 0],
}

/// `struct io_uring_sync_cancel_reg`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_sync_cancel_reg {
    pub addr: u64,
    pub fd: i32,
    pub flags: u32,
    pub timeout: __kernel_timespec,
    pub opcode: u8,
    pub pad: [u8; 7],
    pub pad2: [u64; 3],
}

/// `struct io_uring_file_index_range`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_file_index_range {
    pub off: u32,
    pub len: u32,
    pub resv: u64,
}

// --- setup flags -----------------------------------------------------------
/// `sqe->flags`: chain the next SQE to this one.
pub const IOSQE_IO_LINK: u8 = 1 << 2;
/// `sqe->flags`: a chain link that survives this SQE's failure.
pub const IOSQE_IO_HARDLINK: u8 = 1 << 3;

pub const IORING_SETUP_IOPOLL: u32 = 1 << 0;
pub const IORING_SETUP_SQPOLL: u32 = 1 << 1;
pub const IORING_SETUP_SQ_AFF: u32 = 1 << 2;
pub const IORING_SETUP_CQSIZE: u32 = 1 << 3;
pub const IORING_SETUP_CLAMP: u32 = 1 << 4;
pub const IORING_SETUP_ATTACH_WQ: u32 = 1 << 5;
pub const IORING_SETUP_R_DISABLED: u32 = 1 << 6;
pub const IORING_SETUP_SUBMIT_ALL: u32 = 1 << 7;
pub const IORING_SETUP_COOP_TASKRUN: u32 = 1 << 8;
pub const IORING_SETUP_TASKRUN_FLAG: u32 = 1 << 9;
pub const IORING_SETUP_SQE128: u32 = 1 << 10;
pub const IORING_SETUP_CQE32: u32 = 1 << 11;
pub const IORING_SETUP_SINGLE_ISSUER: u32 = 1 << 12;
pub const IORING_SETUP_DEFER_TASKRUN: u32 = 1 << 13;
pub const IORING_SETUP_NO_MMAP: u32 = 1 << 14;
pub const IORING_SETUP_REGISTERED_FD_ONLY: u32 = 1 << 15;
pub const IORING_SETUP_NO_SQARRAY: u32 = 1 << 16;
pub const IORING_SETUP_HYBRID_IOPOLL: u32 = 1 << 17;
pub const IORING_SETUP_CQE_MIXED: u32 = 1 << 18;
pub const IORING_SETUP_SQE_MIXED: u32 = 1 << 19;
pub const IORING_SETUP_SQ_REWIND: u32 = 1 << 20;

// --- enter flags -----------------------------------------------------------
pub const IORING_ENTER_GETEVENTS: u32 = 1 << 0;
pub const IORING_ENTER_SQ_WAKEUP: u32 = 1 << 1;
pub const IORING_ENTER_SQ_WAIT: u32 = 1 << 2;
pub const IORING_ENTER_EXT_ARG: u32 = 1 << 3;
pub const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;
pub const IORING_ENTER_ABS_TIMER: u32 = 1 << 5;
pub const IORING_ENTER_EXT_ARG_REG: u32 = 1 << 6;
pub const IORING_ENTER_NO_IOWAIT: u32 = 1 << 7;

// --- SQ ring flags ---------------------------------------------------------
pub const IORING_SQ_NEED_WAKEUP: u32 = 1 << 0;
pub const IORING_SQ_CQ_OVERFLOW: u32 = 1 << 1;
pub const IORING_SQ_TASKRUN: u32 = 1 << 2;

// --- features --------------------------------------------------------------
pub const IORING_FEAT_SINGLE_MMAP: u32 = 1 << 0;
pub const IORING_FEAT_NODROP: u32 = 1 << 1;
pub const IORING_FEAT_EXT_ARG: u32 = 1 << 8;
pub const IORING_FEAT_NATIVE_WORKERS: u32 = 1 << 9;
pub const IORING_FEAT_REG_REG_RING: u32 = 1 << 13;
pub const IORING_FEAT_MIN_TIMEOUT: u32 = 1 << 15;
pub const IORING_FEAT_NO_IOWAIT: u32 = 1 << 17;

// --- async cancel flags ----------------------------------------------------
pub const IORING_ASYNC_CANCEL_ALL: u32 = 1 << 0;
pub const IORING_ASYNC_CANCEL_ANY: u32 = 1 << 2;

// --- mmap offsets ----------------------------------------------------------
pub const IORING_OFF_SQ_RING: u64 = 0;
pub const IORING_OFF_CQ_RING: u64 = 0x800_0000;
pub const IORING_OFF_SQES: u64 = 0x1000_0000;

// --- register opcodes ------------------------------------------------------
pub const IORING_REGISTER_BUFFERS: u32 = 0;
pub const IORING_UNREGISTER_BUFFERS: u32 = 1;
pub const IORING_REGISTER_FILES: u32 = 2;
pub const IORING_UNREGISTER_FILES: u32 = 3;
pub const IORING_REGISTER_EVENTFD: u32 = 4;
pub const IORING_UNREGISTER_EVENTFD: u32 = 5;
pub const IORING_REGISTER_FILES_UPDATE: u32 = 6;
pub const IORING_REGISTER_EVENTFD_ASYNC: u32 = 7;
pub const IORING_REGISTER_PROBE: u32 = 8;
pub const IORING_REGISTER_PERSONALITY: u32 = 9;
pub const IORING_UNREGISTER_PERSONALITY: u32 = 10;
pub const IORING_REGISTER_RESTRICTIONS: u32 = 11;
pub const IORING_REGISTER_ENABLE_RINGS: u32 = 12;
pub const IORING_REGISTER_FILES2: u32 = 13;
pub const IORING_REGISTER_FILES_UPDATE2: u32 = 14;
pub const IORING_REGISTER_BUFFERS2: u32 = 15;
pub const IORING_REGISTER_BUFFERS_UPDATE: u32 = 16;
pub const IORING_REGISTER_IOWQ_AFF: u32 = 17;
pub const IORING_UNREGISTER_IOWQ_AFF: u32 = 18;
pub const IORING_REGISTER_IOWQ_MAX_WORKERS: u32 = 19;
pub const IORING_REGISTER_RING_FDS: u32 = 20;
pub const IORING_UNREGISTER_RING_FDS: u32 = 21;
pub const IORING_REGISTER_PBUF_RING: u32 = 22;
pub const IORING_UNREGISTER_PBUF_RING: u32 = 23;
pub const IORING_REGISTER_SYNC_CANCEL: u32 = 24;
pub const IORING_REGISTER_FILE_ALLOC_RANGE: u32 = 25;
pub const IORING_REGISTER_PBUF_STATUS: u32 = 26;
pub const IORING_REGISTER_NAPI: u32 = 27;
pub const IORING_UNREGISTER_NAPI: u32 = 28;
pub const IORING_REGISTER_CLOCK: u32 = 29;
pub const IORING_REGISTER_CLONE_BUFFERS: u32 = 30;
pub const IORING_REGISTER_SEND_MSG_RING: u32 = 31;
pub const IORING_REGISTER_ZCRX_IFQ: u32 = 32;
pub const IORING_REGISTER_RESIZE_RINGS: u32 = 33;
pub const IORING_REGISTER_MEM_REGION: u32 = 34;
pub const IORING_REGISTER_QUERY: u32 = 35;
pub const IORING_REGISTER_ZCRX_CTRL: u32 = 36;
pub const IORING_REGISTER_BPF_FILTER: u32 = 37;
pub const IORING_REGISTER_USE_REGISTERED_RING: u32 = 1 << 31;

/// `IORING_REGISTER_CLONE_BUFFERS` flag: `src_fd` is a registered ring index.
pub const IORING_REGISTER_SRC_REGISTERED: u32 = 1 << 0;

/// `struct io_uring_buf_status` (IORING_REGISTER_PBUF_STATUS).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_buf_status {
    pub buf_group: u32,
    pub head: u32,
    pub resv: [u32; 8],
}

/// `struct io_uring_clone_buffers` (IORING_REGISTER_CLONE_BUFFERS).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct io_uring_clone_buffers {
    pub src_fd: u32,
    pub flags: u32,
    pub src_off: u32,
    pub dst_off: u32,
    pub nr: u32,
    pub pad: [u32; 3],
}

/// Declares register arguments the library passes through to the kernel
/// untouched, zero-sized: their layouts are in the C headers, and the
/// generated prototypes name them. `tests/kernel_abi.rs` reads this table
/// (each one must exist in the C header), and `tests/header.rs` tells
/// cbindgen they are structs.
macro_rules! passed_through {
    ($(struct $name:ident;)*) => {$(
        #[doc = concat!("`struct ", stringify!($name), "` (passed through; defined in the C header).")]
        #[repr(C)]
        #[derive(Debug)]
        pub struct $name {
            _opaque: [u8; 0],
        }
    )*};
}

passed_through! {
    struct io_uring_napi;
    struct io_uring_clock_register;
    struct io_uring_zcrx_ifq_reg;
    struct zcrx_ctrl;
    struct io_uring_mem_region_reg;
    struct io_uring_reg_wait;
    struct io_uring_bpf;
    struct io_uring_query_hdr;
}

pub const IORING_RSRC_REGISTER_SPARSE: u32 = 1 << 0;

// --- CQE flags ---------------------------------------------------------------
/// A padding entry of a mixed-size CQ: not a completion.
pub const IORING_CQE_F_SKIP: u32 = 1 << 5;
/// A 32-byte CQE (two slots) on a mixed-size CQ.
pub const IORING_CQE_F_32: u32 = 1 << 15;

// --- opcodes and user data the library itself uses ---------------------------
pub const IORING_OP_TIMEOUT: u8 = 11;

/// user_data of the internal timeout SQE used by the pre-EXT_ARG wait path.
pub const LIBURING_UDATA_TIMEOUT: u64 = u64::MAX;

/// Largest SQ size the kernel accepts (CQ: twice that).
pub const KERN_MAX_ENTRIES: u32 = 32768;
pub const KERN_MAX_CQ_ENTRIES: u32 = 2 * KERN_MAX_ENTRIES;

/// Size of the signal mask the kernel expects (`_NSIG / 8`).
pub const NSIG_BYTES: usize = 8;

const _: () = {
    assert!(core::mem::size_of::<io_uring_params>() == 120);
    assert!(core::mem::size_of::<io_uring_sqe>() == 64);
    assert!(core::mem::size_of::<io_uring_cqe>() == 16);
    assert!(core::mem::size_of::<io_uring_sync_cancel_reg>() == 64);
    assert!(core::mem::size_of::<io_uring_buf_reg>() == 40);
    assert!(core::mem::size_of::<io_uring_restriction>() == 16);
    assert!(core::mem::size_of::<io_uring_probe>() == 16);
};

#[cfg(test)]
mod tests {
    //! The kernel ABI of this file against the C headers, the one source
    //! of truth: `tests/kernel_abi/expected.rs` holds, for every constant,
    //! type and field defined above, the value the C side gives (generated
    //! by `tests/kernel_abi.rs`, which fails when it is stale) next to the
    //! Rust expression for the same thing.

    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    include!("../tests/kernel_abi/expected.rs");

    #[test]
    fn constants_match_the_c_headers() {
        let syscalls = SYSCALL_NUMBERS.unwrap_or_else(|| {
            panic!(
                "tests/kernel_abi/expected.rs has no system call numbers for {}: \
                 regenerate it on this architecture",
                std::env::consts::ARCH
            )
        });
        let wrong: Vec<String> = CONSTANTS
            .iter()
            .chain(syscalls)
            .filter(|(_, c, rust)| c != rust)
            .map(|(name, c, rust)| format!("{name}: {rust} here, {c} in C"))
            .collect();
        assert!(
            wrong.is_empty(),
            "src/uapi.rs disagrees with the C headers:\n{}",
            wrong.join("\n")
        );
        assert!(
            CONSTANTS.len() + syscalls.len() >= 100,
            "the table lost its constants"
        );
    }

    #[test]
    fn layouts_match_the_c_headers() {
        let mut wrong = Vec::new();
        for (name, c_size, size, c_align, align) in LAYOUTS {
            if (c_size, c_align) != (size, align) {
                wrong.push(format!(
                    "{name}: size {size} align {align} here, size {c_size} align {c_align} in C"
                ));
            }
        }
        for (name, c_off, off, c_size, size) in FIELDS {
            if (c_off, c_size) != (off, size) {
                wrong.push(format!(
                    "{name}: offset {off} size {size} here, offset {c_off} size {c_size} in C"
                ));
            }
        }
        for (name, c_size, size, c_align, align) in VIEWS {
            if size > c_size || c_align != align {
                wrong.push(format!(
                    "{name}: size {size} align {align} here, size {c_size} align {c_align} in C \
                     (a view may be smaller, never bigger)"
                ));
            }
        }
        for (name, c_size, size, _, _) in OPAQUE {
            if *size != 0 || *c_size == 0 {
                wrong.push(format!(
                    "{name}: declared opaque (zero-sized) here, size {size}; {c_size} in C"
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "src/uapi.rs disagrees with the C headers:\n{}",
            wrong.join("\n")
        );
        assert!(
            LAYOUTS.len() >= 20 && FIELDS.len() >= 100,
            "the table lost its structs"
        );
    }
}
