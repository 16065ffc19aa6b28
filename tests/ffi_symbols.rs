//! liburing-ffi's symbol set: every name of liburing 2.15's
//! `liburing-ffi.map` must resolve in `librsuring.so` (which is installed as
//! `liburing-ffi.so.2` too), under a version node, and the inline helpers
//! must work when called through their symbols, as an FFI caller would.
//!
//! The list below is upstream's map, node for node (names only).
//! liburing-ffi's first node (`LIBURING_2.4`) restates the functions that
//! liburing.so exports under other nodes (2.0 to 2.3, and 2.6 for the NAPI
//! pair); one library file cannot give a symbol two default versions, so
//! those names' default version is the node of our liburing.map, and
//! src/ffi/ffi_restated.c adds each as a non-default `name@LIBURING_2.4`, which
//! binaries linked against liburing's own liburing-ffi.so.2 reference. The
//! tests check that this is the only difference and that those entry points
//! work.

mod common;

use std::collections::BTreeMap;
use std::ffi::{c_int, c_uint, c_void, CStr, CString};
use std::path::Path;

const LIBURING_FFI_MAP: &[(&str, &[&str])] = &[
    (
        "LIBURING_2.4",
        &[
            "io_uring_get_probe",
            "io_uring_get_probe_ring",
            "io_uring_free_probe",
            "io_uring_get_sqe",
            "io_uring_peek_batch_cqe",
            "io_uring_queue_exit",
            "io_uring_queue_init",
            "io_uring_queue_init_params",
            "io_uring_queue_mmap",
            "io_uring_register_buffers",
            "io_uring_register_eventfd",
            "io_uring_register_eventfd_async",
            "io_uring_register_files",
            "io_uring_register_files_update",
            "io_uring_register_personality",
            "io_uring_register_probe",
            "io_uring_ring_dontfork",
            "io_uring_submit",
            "io_uring_submit_and_wait",
            "io_uring_unregister_buffers",
            "io_uring_unregister_eventfd",
            "io_uring_unregister_files",
            "io_uring_unregister_personality",
            "io_uring_wait_cqe_timeout",
            "io_uring_wait_cqes",
            "__io_uring_get_cqe",
            "__io_uring_sqring_wait",
            "io_uring_mlock_size_params",
            "io_uring_mlock_size",
            "io_uring_register_buffers_tags",
            "io_uring_register_buffers_update_tag",
            "io_uring_register_files_tags",
            "io_uring_register_files_update_tag",
            "io_uring_register_iowq_aff",
            "io_uring_unregister_iowq_aff",
            "io_uring_register_iowq_max_workers",
            "io_uring_submit_and_wait_timeout",
            "io_uring_register_ring_fd",
            "io_uring_unregister_ring_fd",
            "io_uring_register_files_sparse",
            "io_uring_register_buffers_sparse",
            "io_uring_register_buf_ring",
            "io_uring_unregister_buf_ring",
            "io_uring_close_ring_fd",
            "io_uring_setup_buf_ring",
            "io_uring_free_buf_ring",
            "io_uring_register_sync_cancel",
            "io_uring_register_file_alloc_range",
            "io_uring_enter",
            "io_uring_enter2",
            "io_uring_setup",
            "io_uring_register",
            "io_uring_get_events",
            "io_uring_submit_and_get_events",
            "io_uring_major_version",
            "io_uring_minor_version",
            "io_uring_check_version",
            "io_uring_peek_cqe",
            "io_uring_prep_timeout_update",
            "io_uring_buf_ring_init",
            "io_uring_prep_mkdirat",
            "io_uring_prep_recv_multishot",
            "io_uring_cq_advance",
            "io_uring_prep_multishot_accept",
            "io_uring_prep_fallocate",
            "io_uring_prep_link_timeout",
            "io_uring_prep_fsync",
            "io_uring_prep_openat_direct",
            "io_uring_prep_multishot_accept_direct",
            "io_uring_opcode_supported",
            "io_uring_prep_madvise",
            "io_uring_prep_send_set_addr",
            "io_uring_recvmsg_payload_length",
            "io_uring_prep_readv2",
            "io_uring_prep_msg_ring",
            "io_uring_prep_rename",
            "io_uring_prep_fadvise",
            "io_uring_prep_send_zc",
            "io_uring_buf_ring_advance",
            "io_uring_cqe_get_data",
            "io_uring_prep_symlinkat",
            "io_uring_prep_writev",
            "io_uring_cq_eventfd_toggle",
            "io_uring_prep_provide_buffers",
            "io_uring_cq_has_overflow",
            "io_uring_prep_cancel_fd",
            "io_uring_prep_socket",
            "io_uring_prep_close_direct",
            "io_uring_recvmsg_name",
            "io_uring_prep_timeout_remove",
            "io_uring_sqring_wait",
            "io_uring_cq_eventfd_enabled",
            "io_uring_prep_remove_buffers",
            "io_uring_prep_tee",
            "io_uring_prep_accept_direct",
            "io_uring_prep_nop",
            "io_uring_prep_getxattr",
            "io_uring_prep_link",
            "io_uring_prep_cancel",
            "io_uring_prep_readv",
            "io_uring_prep_connect",
            "io_uring_cq_ready",
            "io_uring_enable_rings",
            "io_uring_prep_shutdown",
            "io_uring_prep_openat",
            "io_uring_sq_space_left",
            "io_uring_recvmsg_payload",
            "io_uring_prep_send",
            "io_uring_buf_ring_add",
            "io_uring_prep_send_zc_fixed",
            "io_uring_prep_epoll_ctl",
            "io_uring_recvmsg_cmsg_firsthdr",
            "io_uring_prep_socket_direct",
            "io_uring_buf_ring_cq_advance",
            "__io_uring_buf_ring_cq_advance",
            "io_uring_prep_mkdir",
            "io_uring_wait_cqe_nr",
            "io_uring_prep_unlink",
            "io_uring_prep_writev2",
            "io_uring_prep_openat2_direct",
            "io_uring_sqe_set_flags",
            "io_uring_sqe_set_data",
            "io_uring_prep_accept",
            "io_uring_prep_poll_update",
            "io_uring_prep_splice",
            "io_uring_prep_poll_multishot",
            "io_uring_prep_symlink",
            "io_uring_sqe_set_data64",
            "io_uring_prep_cancel64",
            "io_uring_prep_fsetxattr",
            "io_uring_prep_recvmsg_multishot",
            "io_uring_cqe_seen",
            "io_uring_prep_sendmsg_zc",
            "io_uring_prep_read",
            "io_uring_prep_statx",
            "io_uring_prep_sendmsg",
            "io_uring_prep_unlinkat",
            "io_uring_prep_setxattr",
            "io_uring_cqe_get_data64",
            "io_uring_prep_renameat",
            "io_uring_prep_poll_remove",
            "io_uring_prep_close",
            "io_uring_sq_ready",
            "io_uring_prep_files_update",
            "io_uring_wait_cqe",
            "io_uring_prep_fgetxattr",
            "io_uring_prep_socket_direct_alloc",
            "io_uring_prep_sync_file_range",
            "io_uring_prep_read_fixed",
            "io_uring_prep_openat2",
            "io_uring_prep_recvmsg",
            "io_uring_recvmsg_cmsg_nexthdr",
            "io_uring_recvmsg_validate",
            "io_uring_prep_rw",
            "io_uring_prep_timeout",
            "io_uring_prep_linkat",
            "io_uring_prep_write_fixed",
            "io_uring_prep_poll_add",
            "io_uring_buf_ring_mask",
            "io_uring_register_restrictions",
            "io_uring_prep_write",
            "io_uring_prep_recv",
            "io_uring_prep_msg_ring_cqe_flags",
            "io_uring_prep_msg_ring_fd",
            "io_uring_prep_msg_ring_fd_alloc",
            "io_uring_prep_sendto",
            "io_uring_register_napi",
            "io_uring_unregister_napi",
        ],
    ),
    (
        "LIBURING_2.5",
        &[
            "io_uring_queue_init_mem",
            "io_uring_prep_cmd_sock",
            "io_uring_prep_read_multishot",
            "io_uring_prep_waitid",
            "io_uring_prep_futex_wake",
            "io_uring_prep_futex_wait",
            "io_uring_prep_futex_waitv",
        ],
    ),
    (
        "LIBURING_2.6",
        &[
            "io_uring_prep_fixed_fd_install",
            "io_uring_buf_ring_available",
            "io_uring_prep_ftruncate",
            "io_uring_prep_send_bundle",
        ],
    ),
    (
        "LIBURING_2.7",
        &[
            "io_uring_prep_fadvise64",
            "io_uring_prep_madvise64",
            "io_uring_prep_bind",
            "io_uring_prep_listen",
        ],
    ),
    (
        "LIBURING_2.8",
        &[
            "io_uring_register_clock",
            "io_uring_submit_and_wait_min_timeout",
            "io_uring_wait_cqes_min_timeout",
            "io_uring_clone_buffers",
            "io_uring_prep_cmd_discard",
            "io_uring_prep_open",
            "io_uring_prep_open_direct",
        ],
    ),
    (
        "LIBURING_2.9",
        &[
            "io_uring_resize_rings",
            "io_uring_register_wait_reg",
            "io_uring_submit_and_wait_reg",
            "io_uring_clone_buffers_offset",
            "io_uring_register_region",
            "io_uring_sqe_set_buf_group",
        ],
    ),
    (
        "LIBURING_2.10",
        &[
            "io_uring_register_ifq",
            "io_uring_prep_epoll_wait",
            "io_uring_prep_writev_fixed",
            "io_uring_prep_readv_fixed",
            "io_uring_prep_sendmsg_zc_fixed",
            "io_uring_set_iowait",
            "__io_uring_clone_buffers",
            "__io_uring_clone_buffers_offset",
        ],
    ),
    (
        "LIBURING_2.11",
        &[
            "io_uring_memory_size",
            "io_uring_memory_size_params",
            "io_uring_register_sync_msg",
        ],
    ),
    (
        "LIBURING_2.12",
        &[
            "io_uring_prep_pipe",
            "io_uring_prep_pipe_direct",
            "io_uring_cqe_nr",
        ],
    ),
    (
        "LIBURING_2.13",
        &[
            "io_uring_prep_nop128",
            "io_uring_prep_uring_cmd",
            "io_uring_prep_uring_cmd128",
            "io_uring_get_sqe128",
            "io_uring_prep_cmd_getsockname",
        ],
    ),
    ("LIBURING_2.14", &[]),
    (
        "LIBURING_2.15",
        &[
            "io_uring_register_bpf_filter",
            "io_uring_register_bpf_filter_task",
            "io_uring_cqe_iter_init",
            "io_uring_cqe_iter_next",
            "__io_uring_peek_cqe",
            "io_uring_register_zcrx_ctrl",
            "io_uring_register_query",
        ],
    ),
    ("LIBURING_2.16", &["io_uring_prep_cmd_zone_reset_all"]),
];

/// symbol -> version node, as our liburing.map declares them.
fn our_nodes() -> BTreeMap<String, String> {
    let map =
        std::fs::read_to_string(common::repo().join("src/ffi/liburing.map")).expect("liburing.map");
    let mut out = BTreeMap::new();
    let mut node = String::new();
    for raw in map.lines() {
        let line = raw.trim();
        if line.starts_with("/*") || line.starts_with('*') || line.contains(':') {
            continue;
        }
        if let Some(name) = line.strip_suffix('{') {
            node = name.trim().to_string();
        } else if let Some(sym) = line.strip_suffix(';') {
            if !sym.starts_with('}') && sym != "*" {
                out.insert(sym.trim().to_string(), node.clone());
            }
        }
    }
    out
}

struct Library(*mut c_void);

impl Library {
    fn open(path: &Path) -> Library {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; the library has no constructors
        // with preconditions.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(
            !handle.is_null(),
            "dlopen {}: {}",
            path.display(),
            dlerror()
        );
        Library(handle)
    }

    fn sym(&self, name: &str) -> *mut c_void {
        let c = CString::new(name).unwrap();
        // SAFETY: live handle, NUL-terminated name.
        unsafe { libc::dlsym(self.0, c.as_ptr()) }
    }

    fn vsym(&self, name: &str, version: &str) -> *mut c_void {
        let (c, v) = (CString::new(name).unwrap(), CString::new(version).unwrap());
        // SAFETY: live handle, NUL-terminated name and version.
        unsafe { libc::dlvsym(self.0, c.as_ptr(), v.as_ptr()) }
    }

    /// The function `name` as a `F` (a matching `extern "C" fn` type).
    ///
    /// # Safety
    /// `F` must be the C prototype of `name` from liburing.h.
    unsafe fn func<F: Copy>(&self, name: &str) -> F {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        let p = self.sym(name);
        assert!(!p.is_null(), "dlsym {name}: {}", dlerror());
        // SAFETY: F is a function pointer type of this size (asserted) and
        // `name`'s prototype (forwarded contract).
        unsafe { std::mem::transmute_copy(&p) }
    }

    /// The function `name@version` as a `F`, as `func` does.
    ///
    /// # Safety
    /// `F` must be the C prototype of `name` from liburing.h.
    unsafe fn vfunc<F: Copy>(&self, name: &str, version: &str) -> F {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        let p = self.vsym(name, version);
        assert!(!p.is_null(), "dlvsym {name}@{version}: {}", dlerror());
        // SAFETY: as in `func`.
        unsafe { std::mem::transmute_copy(&p) }
    }
}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "(no error)".into()
    } else {
        // SAFETY: non-null, so a NUL-terminated string until the next dl call.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

#[test]
fn every_liburing_ffi_symbol_resolves_with_its_version() {
    let lib = Library::open(&common::library());
    let ours = our_nodes();
    let mut count = 0;
    let mut restated = Vec::new();
    for (ffi_node, names) in LIBURING_FFI_MAP {
        for &name in *names {
            count += 1;
            let plain = lib.sym(name);
            assert!(!plain.is_null(), "{name} is not exported: {}", dlerror());
            let node = ours
                .get(name)
                .unwrap_or_else(|| panic!("{name} is exported but not in liburing.map"));
            if node != ffi_node {
                // Only liburing-ffi's first node restates older symbols.
                assert_eq!(
                    *ffi_node, "LIBURING_2.4",
                    "{name}: liburing-ffi has it in {ffi_node}, we in {node}"
                );
                restated.push(name);
            }
            let versioned = lib.vsym(name, node);
            assert_eq!(
                versioned, plain,
                "{name}@{node} does not resolve to the default {name}"
            );
            // What a binary linked against liburing's liburing-ffi.so.2 asks for.
            let ffi = lib.vsym(name, ffi_node);
            assert!(
                !ffi.is_null(),
                "{name}@{ffi_node} does not resolve: {}",
                dlerror()
            );
            if node != ffi_node {
                assert_ne!(
                    ffi, plain,
                    "{name}@{ffi_node} should be src/ffi/ffi_restated.c's entry point"
                );
            }
        }
    }
    assert_eq!(count, 223, "liburing 2.15's liburing-ffi.map has 223 names");
    assert_eq!(
        restated.len(),
        53,
        "liburing-ffi's LIBURING_2.4 restates 53 names: {restated:?}"
    );
    println!(
        "{count} liburing-ffi names resolve with liburing-ffi's version; {} also \
         (as default) under liburing.so's node: {restated:?}",
        restated.len()
    );
}

/// A ring driven only through the `@LIBURING_2.4` entry points, as a binary
/// linked against liburing's own liburing-ffi.so.2 drives it.
#[test]
fn restated_functions_work_through_their_liburing_ffi_version() {
    let lib = Library::open(&common::library());
    const V: &str = "LIBURING_2.4";
    // SAFETY: each type below is the function's prototype in liburing.h.
    unsafe {
        let queue_init: extern "C" fn(c_uint, *mut Ring, c_uint) -> c_int =
            lib.vfunc("io_uring_queue_init", V);
        let queue_exit: extern "C" fn(*mut Ring) = lib.vfunc("io_uring_queue_exit", V);
        let get_sqe: extern "C" fn(*mut Ring) -> *mut Sqe = lib.vfunc("io_uring_get_sqe", V);
        let prep_nop: extern "C" fn(*mut Sqe) = lib.vfunc("io_uring_prep_nop", V);
        let set_data64: extern "C" fn(*mut Sqe, u64) = lib.vfunc("io_uring_sqe_set_data64", V);
        let submit: extern "C" fn(*mut Ring) -> c_int = lib.vfunc("io_uring_submit", V);
        let get_cqe: extern "C" fn(*mut Ring, *mut *mut Cqe, c_uint, c_uint, *mut c_void) -> c_int =
            lib.vfunc("__io_uring_get_cqe", V);
        let peek_batch: extern "C" fn(*mut Ring, *mut *mut Cqe, c_uint) -> c_uint =
            lib.vfunc("io_uring_peek_batch_cqe", V);
        let cqe_seen: extern "C" fn(*mut Ring, *mut Cqe) = lib.vfunc("io_uring_cqe_seen", V);
        let mlock_size: extern "C" fn(c_uint, c_uint) -> isize =
            lib.vfunc("io_uring_mlock_size", V);

        assert!(mlock_size(8, 0) >= 0);

        let Some(mut ring) = live_ring(queue_init, &format!("io_uring_queue_init@{V}")) else {
            return;
        };
        let ring: *mut Ring = &mut *ring;

        let sqe = get_sqe(ring);
        assert!(!sqe.is_null(), "io_uring_get_sqe@{V}");
        prep_nop(sqe);
        set_data64(sqe, 0x2400);
        assert_eq!(submit(ring), 1, "io_uring_submit@{V}");
        let mut cqe: *mut Cqe = std::ptr::null_mut();
        assert_eq!(get_cqe(ring, &mut cqe, 0, 1, std::ptr::null_mut()), 0);
        assert!(!cqe.is_null());
        assert_eq!(((*cqe).user_data, (*cqe).res), (0x2400, 0));
        let mut batch = [std::ptr::null_mut::<Cqe>(); 4];
        assert_eq!(peek_batch(ring, batch.as_mut_ptr(), 4), 1);
        assert_eq!(batch[0], cqe);
        cqe_seen(ring, cqe);
        assert_eq!(peek_batch(ring, batch.as_mut_ptr(), 4), 0);
        queue_exit(ring);
    }
}

/// struct io_uring as opaque, suitably aligned storage (216 bytes in C).
#[repr(C, align(8))]
struct Ring([u8; 256]);

#[repr(C)]
struct Cqe {
    user_data: u64,
    res: i32,
    flags: u32,
}

/// struct io_uring_cqe_iter, returned by value from io_uring_cqe_iter_init.
#[repr(C)]
struct CqeIter {
    cqes: *mut Cqe,
    mask: c_uint,
    shift: c_uint,
    head: c_uint,
    tail: c_uint,
}

type Sqe = c_void;
type Probe = c_void;
const IORING_OP_NOP: c_int = 0;

/// An 8-entry ring set up through `queue_init` (`what` names it), or None
/// when io_uring is unavailable here (reported).
fn live_ring(
    queue_init: extern "C" fn(c_uint, *mut Ring, c_uint) -> c_int,
    what: &str,
) -> Option<Box<Ring>> {
    let mut ring = Box::new(Ring([0; 256]));
    let ret = queue_init(8, &mut *ring, 0);
    if ret == -libc::ENOSYS || ret == -libc::EPERM {
        println!("skipped the live part: io_uring unavailable ({ret})");
        return None;
    }
    assert_eq!(ret, 0, "{what}");
    Some(ring)
}

#[test]
fn inline_helpers_work_through_their_symbols() {
    let lib = Library::open(&common::library());
    // SAFETY: each type below is the function's prototype in liburing.h.
    unsafe {
        let queue_init: extern "C" fn(c_uint, *mut Ring, c_uint) -> c_int =
            lib.func("io_uring_queue_init");
        let queue_exit: extern "C" fn(*mut Ring) = lib.func("io_uring_queue_exit");
        let get_sqe: extern "C" fn(*mut Ring) -> *mut Sqe = lib.func("io_uring_get_sqe");
        let prep_nop: extern "C" fn(*mut Sqe) = lib.func("io_uring_prep_nop");
        let set_data64: extern "C" fn(*mut Sqe, u64) = lib.func("io_uring_sqe_set_data64");
        let sq_ready: extern "C" fn(*const Ring) -> c_uint = lib.func("io_uring_sq_ready");
        let submit: extern "C" fn(*mut Ring) -> c_int = lib.func("io_uring_submit");
        let wait_cqe: extern "C" fn(*mut Ring, *mut *mut Cqe) -> c_int =
            lib.func("io_uring_wait_cqe");
        let peek_cqe: extern "C" fn(*mut Ring, *mut *mut Cqe) -> c_int =
            lib.func("io_uring_peek_cqe");
        let get_data64: extern "C" fn(*const Cqe) -> u64 = lib.func("io_uring_cqe_get_data64");
        let cq_ready: extern "C" fn(*const Ring) -> c_uint = lib.func("io_uring_cq_ready");
        let cqe_seen: extern "C" fn(*mut Ring, *mut Cqe) = lib.func("io_uring_cqe_seen");
        let cq_advance: extern "C" fn(*mut Ring, c_uint) = lib.func("io_uring_cq_advance");
        let iter_init: extern "C" fn(*const Ring) -> CqeIter = lib.func("io_uring_cqe_iter_init");
        let iter_next: extern "C" fn(*mut CqeIter, *mut *mut Cqe) -> bool =
            lib.func("io_uring_cqe_iter_next");
        let get_probe_ring: extern "C" fn(*mut Ring) -> *mut Probe =
            lib.func("io_uring_get_probe_ring");
        let opcode_supported: extern "C" fn(*const Probe, c_int) -> c_int =
            lib.func("io_uring_opcode_supported");
        let free_probe: extern "C" fn(*mut Probe) = lib.func("io_uring_free_probe");
        let buf_ring_mask: extern "C" fn(u32) -> c_int = lib.func("io_uring_buf_ring_mask");

        assert_eq!(buf_ring_mask(64), 63);

        let Some(mut ring) = live_ring(queue_init, "io_uring_queue_init") else {
            return;
        };
        let ring: *mut Ring = &mut *ring;

        // One NOP: get_sqe (Rust), prep and data (C helpers), submit, wait, seen.
        let sqe = get_sqe(ring);
        assert!(!sqe.is_null());
        prep_nop(sqe);
        set_data64(sqe, 0xfeed);
        assert_eq!(sq_ready(ring), 1);
        assert_eq!(submit(ring), 1);
        let mut cqe: *mut Cqe = std::ptr::null_mut();
        assert_eq!(wait_cqe(ring, &mut cqe), 0);
        assert_eq!(get_data64(cqe), 0xfeed);
        assert_eq!((*cqe).res, 0);
        assert_eq!(cq_ready(ring), 1);
        cqe_seen(ring, cqe);
        assert_eq!(cq_ready(ring), 0);
        assert_eq!(peek_cqe(ring, &mut cqe), -libc::EAGAIN);

        // Two more, reaped with the by-value iterator and one advance.
        for data in [1u64, 2] {
            let sqe = get_sqe(ring);
            prep_nop(sqe);
            set_data64(sqe, data);
        }
        assert_eq!(submit(ring), 2);
        let mut seen = Vec::new();
        while seen.len() < 2 {
            let mut it = iter_init(ring);
            while iter_next(&mut it, &mut cqe) {
                seen.push((*cqe).user_data);
            }
        }
        assert_eq!(seen, [1, 2]);
        cq_advance(ring, 2);
        assert_eq!(cq_ready(ring), 0);

        let probe = get_probe_ring(ring);
        if !probe.is_null() {
            assert_eq!(opcode_supported(probe, IORING_OP_NOP), 1);
            assert_eq!(opcode_supported(probe, -1), 0);
            free_probe(probe);
        }
        queue_exit(ring);
    }
}
