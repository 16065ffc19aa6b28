//! liburing-ffi's symbol set: every name of liburing 2.15's `liburing-ffi.map` resolves in
//! librsuring.so (also installed as liburing-ffi.so.2) under its liburing-ffi node, and those
//! entry points drive a ring. Its LIBURING_2.4 restates 53 liburing.so functions of older nodes:
//! src/ffi/ffi_restated.c's non-default `name@LIBURING_2.4` (tests/abi.rs checks the defaults).

mod common;

use std::ffi::{c_int, c_uint, c_void, CStr, CString};
use std::ptr::null_mut;

/// Upstream's liburing-ffi.map node for node: `x` is `io_uring_x`, `__x` is `__io_uring_x`.
const FFI_MAP: &str = "
LIBURING_2.4: get_probe get_probe_ring free_probe get_sqe peek_batch_cqe queue_exit queue_init
    queue_init_params queue_mmap register_buffers register_eventfd register_eventfd_async
    register_files register_files_update register_personality register_probe ring_dontfork submit
    submit_and_wait unregister_buffers unregister_eventfd unregister_files unregister_personality
    wait_cqe_timeout wait_cqes __get_cqe __sqring_wait mlock_size_params mlock_size
    register_buffers_tags register_buffers_update_tag register_files_tags register_files_update_tag
    register_iowq_aff unregister_iowq_aff register_iowq_max_workers submit_and_wait_timeout
    register_ring_fd unregister_ring_fd register_files_sparse register_buffers_sparse
    register_buf_ring unregister_buf_ring close_ring_fd setup_buf_ring free_buf_ring
    register_sync_cancel register_file_alloc_range enter enter2 setup register get_events
    submit_and_get_events major_version minor_version check_version peek_cqe prep_timeout_update
    buf_ring_init prep_mkdirat prep_recv_multishot cq_advance prep_multishot_accept prep_fallocate
    prep_link_timeout prep_fsync prep_openat_direct prep_multishot_accept_direct opcode_supported
    prep_madvise prep_send_set_addr recvmsg_payload_length prep_readv2 prep_msg_ring prep_rename
    prep_fadvise prep_send_zc buf_ring_advance cqe_get_data prep_symlinkat prep_writev
    cq_eventfd_toggle prep_provide_buffers cq_has_overflow prep_cancel_fd prep_socket
    prep_close_direct recvmsg_name prep_timeout_remove sqring_wait cq_eventfd_enabled
    prep_remove_buffers prep_tee prep_accept_direct prep_nop prep_getxattr prep_link prep_cancel
    prep_readv prep_connect cq_ready enable_rings prep_shutdown prep_openat sq_space_left
    recvmsg_payload prep_send buf_ring_add prep_send_zc_fixed prep_epoll_ctl recvmsg_cmsg_firsthdr
    prep_socket_direct buf_ring_cq_advance __buf_ring_cq_advance prep_mkdir wait_cqe_nr prep_unlink
    prep_writev2 prep_openat2_direct sqe_set_flags sqe_set_data prep_accept prep_poll_update
    prep_splice prep_poll_multishot prep_symlink sqe_set_data64 prep_cancel64 prep_fsetxattr
    prep_recvmsg_multishot cqe_seen prep_sendmsg_zc prep_read prep_statx prep_sendmsg prep_unlinkat
    prep_setxattr cqe_get_data64 prep_renameat prep_poll_remove prep_close sq_ready
    prep_files_update wait_cqe prep_fgetxattr prep_socket_direct_alloc prep_sync_file_range
    prep_read_fixed prep_openat2 prep_recvmsg recvmsg_cmsg_nexthdr recvmsg_validate prep_rw
    prep_timeout prep_linkat prep_write_fixed prep_poll_add buf_ring_mask register_restrictions
    prep_write prep_recv prep_msg_ring_cqe_flags prep_msg_ring_fd prep_msg_ring_fd_alloc
    prep_sendto register_napi unregister_napi
LIBURING_2.5: queue_init_mem prep_cmd_sock prep_read_multishot prep_waitid prep_futex_wake
    prep_futex_wait prep_futex_waitv
LIBURING_2.6: prep_fixed_fd_install buf_ring_available prep_ftruncate prep_send_bundle
LIBURING_2.7: prep_fadvise64 prep_madvise64 prep_bind prep_listen
LIBURING_2.8: register_clock submit_and_wait_min_timeout wait_cqes_min_timeout clone_buffers
    prep_cmd_discard prep_open prep_open_direct
LIBURING_2.9: resize_rings register_wait_reg submit_and_wait_reg clone_buffers_offset
    register_region sqe_set_buf_group
LIBURING_2.10: register_ifq prep_epoll_wait prep_writev_fixed prep_readv_fixed
    prep_sendmsg_zc_fixed set_iowait __clone_buffers __clone_buffers_offset
LIBURING_2.11: memory_size memory_size_params register_sync_msg
LIBURING_2.12: prep_pipe prep_pipe_direct cqe_nr
LIBURING_2.13: prep_nop128 prep_uring_cmd prep_uring_cmd128 get_sqe128 prep_cmd_getsockname
LIBURING_2.14:
LIBURING_2.15: register_bpf_filter register_bpf_filter_task cqe_iter_init cqe_iter_next __peek_cqe
    register_zcrx_ctrl register_query
LIBURING_2.16: prep_cmd_zone_reset_all
";

/// (name, its node in liburing-ffi.map), in the map's order.
fn ffi_names() -> Vec<(String, &'static str)> {
    let (mut node, mut out) = ("", Vec::new());
    for token in FFI_MAP.split_whitespace() {
        match (token.strip_suffix(':'), token.strip_prefix("__")) {
            (Some(name), _) => node = name,
            (None, Some(rest)) => out.push((format!("__io_uring_{rest}"), node)),
            (None, None) => out.push((format!("io_uring_{token}"), node)),
        }
    }
    out
}

/// `name@version` in librsuring.so, or `name`'s default version where `version` is empty.
fn sym(name: &str, version: &str) -> *mut c_void {
    let lib = common::library();
    let c = [lib.to_str().unwrap(), name, version].map(|s| CString::new(s).unwrap());
    // SAFETY: NUL-terminated strings; dlerror's string is read before any other dl call.
    unsafe {
        let lib = libc::dlopen(c[0].as_ptr(), libc::RTLD_NOW);
        assert!(!lib.is_null(), "{:?}", CStr::from_ptr(libc::dlerror()));
        match version {
            "" => libc::dlsym(lib, c[1].as_ptr()),
            _ => libc::dlvsym(lib, c[1].as_ptr(), c[2].as_ptr()),
        }
    }
}

#[test]
fn every_liburing_ffi_symbol_resolves_with_its_version() {
    let (names, mut restated) = (ffi_names(), Vec::new());
    for (name, node) in &names {
        let (plain, ffi) = (sym(name, ""), sym(name, node));
        assert!(!plain.is_null() && !ffi.is_null(), "{name}@{node}");
        if ffi != plain {
            // Not the default: src/ffi/ffi_restated.c's entry point.
            assert_eq!(*node, "LIBURING_2.4", "{name}@{node}");
            restated.push(name);
        }
    }
    // liburing 2.15's liburing-ffi.map: 223 names, 53 of them restated.
    assert_eq!((names.len(), restated.len()), (223, 53), "{restated:?}");
}

/// struct io_uring as storage (216 bytes in C), struct io_uring_cqe, struct io_uring_cqe_iter.
type Ring = [u64; 32];
#[repr(C)]
struct Cqe(u64, i32, u32);
#[repr(C)]
struct CqeIter(*mut Cqe, [c_uint; 4]);

/// NOPs through inline helpers (one returning a struct by value) and restated functions, each
/// at its liburing-ffi version, as binaries linked against liburing's liburing-ffi.so.2 call them.
#[test]
fn liburing_ffi_entry_points_drive_a_ring() {
    let names = ffi_names();
    macro_rules! bind {
        ($($name:ident($($arg:ty),*) $(-> $ret:ty)?;)*) => {$(
            let $name = {
                let name = stringify!($name);
                let p = sym(name, names.iter().find(|(n, _)| n == name).expect("in the map").1);
                assert!(!p.is_null(), "{name}");
                type F = extern "C" fn($($arg),*) $(-> $ret)?;
                // SAFETY: the prototype given is the function's in liburing.h.
                unsafe { std::mem::transmute::<*mut c_void, F>(p) }
            };
        )*};
    }
    bind! {
        io_uring_mlock_size(c_uint, c_uint) -> isize;
        io_uring_queue_init(c_uint, *mut Ring, c_uint) -> c_int;
        io_uring_queue_exit(*mut Ring);
        io_uring_get_sqe(*mut Ring) -> *mut c_void;
        io_uring_prep_nop(*mut c_void);
        io_uring_sqe_set_data64(*mut c_void, u64);
        io_uring_submit(*mut Ring) -> c_int;
        __io_uring_get_cqe(*mut Ring, *mut *mut Cqe, c_uint, c_uint, *mut c_void) -> c_int;
        io_uring_wait_cqe(*mut Ring, *mut *mut Cqe) -> c_int;
        io_uring_peek_batch_cqe(*mut Ring, *mut *mut Cqe, c_uint) -> c_uint;
        io_uring_cqe_get_data64(*const Cqe) -> u64;
        io_uring_cqe_iter_init(*const Ring) -> CqeIter;
        io_uring_cqe_iter_next(*mut CqeIter, *mut *mut Cqe) -> bool;
        io_uring_cqe_seen(*mut Ring, *mut Cqe);
        io_uring_cq_advance(*mut Ring, c_uint);
        io_uring_cq_ready(*const Ring) -> c_uint;
    }
    assert!(io_uring_mlock_size(8, 0) >= 0);
    let ring: *mut Ring = &mut [0; 32];
    let ret = io_uring_queue_init(8, ring, 0);
    if ret == -libc::ENOSYS || ret == -libc::EPERM {
        return println!("skipped the live part: io_uring unavailable ({ret})");
    }
    assert_eq!(ret, 0);
    for data in [1, 2] {
        let sqe = io_uring_get_sqe(ring);
        assert!(!sqe.is_null());
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, data);
    }
    assert_eq!(io_uring_submit(ring), 2);
    let (mut cqe, mut batch) = (null_mut(), [null_mut(); 4]);
    assert_eq!(__io_uring_get_cqe(ring, &mut cqe, 0, 2, null_mut()), 0);
    assert_eq!(io_uring_wait_cqe(ring, &mut cqe), 0);
    assert_eq!(io_uring_cqe_get_data64(cqe), 1);
    assert_eq!(io_uring_peek_batch_cqe(ring, batch.as_mut_ptr(), 4), 2);
    assert_eq!(batch[0], cqe);
    let (mut it, mut seen) = (io_uring_cqe_iter_init(ring), Vec::new());
    while io_uring_cqe_iter_next(&mut it, &mut cqe) {
        // SAFETY: the iterator yields the ring's CQEs, not yet seen.
        seen.push(unsafe { ((*cqe).0, (*cqe).1) });
    }
    assert_eq!(seen, [(1, 0), (2, 0)]);
    io_uring_cqe_seen(ring, batch[0]);
    io_uring_cq_advance(ring, 1);
    assert_eq!(io_uring_cq_ready(ring), 0);
    io_uring_queue_exit(ring);
}
