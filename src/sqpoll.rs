//! Per-CPU shared SQPOLL: every ring of the process bound to the same CPU
//! shares one kernel SQ poll thread.
//!
//! The kernel shares an SQ thread between SQPOLL rings of one process when a
//! ring is created with IORING_SETUP_ATTACH_WQ and `wq_fd` naming a live ring
//! that already has one. This module keeps, per CPU (or for the one unbound
//! group), the fds of the live member rings, so a new ring can attach to any
//! of them, and the group survives its first ring closing.
//!
//! The registry is process-wide and guarded by a lock that only ring setup,
//! exit and queries take, never the submit/complete paths. A ring that
//! belongs to a group is marked by `rs_flags::SQPOLL_SHARED` in its own
//! `struct io_uring`, so exit knows to leave without a lookup for other rings.

use core::cell::UnsafeCell;
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};

use crate::ring::{io_uring, rs_flags};
use crate::setup;
use crate::sys::{
    io_uring_params, IORING_SETUP_ATTACH_WQ, IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_R_DISABLED,
    IORING_SETUP_SINGLE_ISSUER, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF,
};

/// Library-level setup flag (never passed to the kernel): join the shared
/// poller of the ring's CPU. Requires IORING_SETUP_SQPOLL.
pub const IORING_SETUP_SQPOLL_PERCPU: u32 = 1 << 31;

/// Process configuration from the environment, read once.
#[derive(Debug, Default)]
pub struct Config {
    /// RSURING_SQPOLL_PERCPU=1: every SQPOLL ring shares its CPU's poller.
    pub percpu_all: bool,
    /// RSURING_SQPOLL=1: rings created without SQPOLL get a shared poller.
    pub transparent: bool,
    /// RSURING_SQPOLL_CPUS=LIST: where rings without SQ_AFF are placed.
    pub cpus: Option<Vec<u32>>,
    /// RSURING_SQPOLL_IDLE_MS=N: sq_thread_idle for rings that set none.
    pub idle_ms: Option<u32>,
}

/// Parses a CPU list such as `1,3,8-11`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        let range = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let lo: u32 = range
            .0
            .parse()
            .map_err(|_| format!("bad CPU number {:?}", range.0))?;
        let hi: u32 = range
            .1
            .parse()
            .map_err(|_| format!("bad CPU number {:?}", range.1))?;
        if lo > hi || hi >= libc::CPU_SETSIZE as u32 {
            return Err(format!("bad CPU range {part:?}"));
        }
        for cpu in lo..=hi {
            if !cpu_online(cpu) {
                return Err(format!("CPU {cpu} is not online"));
            }
            if !cpus.contains(&cpu) {
                cpus.push(cpu);
            }
        }
    }
    if cpus.is_empty() {
        return Err("empty list".into());
    }
    Ok(cpus)
}

impl Config {
    fn from_env() -> Self {
        Config {
            percpu_all: crate::env::flag(crate::env::SQPOLL_PERCPU),
            transparent: crate::env::flag(crate::env::SQPOLL),
            cpus: crate::env::parsed(crate::env::SQPOLL_CPUS, parse_cpu_list),
            idle_ms: crate::env::parsed(crate::env::SQPOLL_IDLE_MS, crate::env::parse_millis),
        }
    }
}

/// The process configuration (environment read on first use).
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(Config::from_env)
}

/// Whether `cpu` exists and is online.
pub fn cpu_online(cpu: u32) -> bool {
    // SAFETY: sysconf has no preconditions.
    let configured = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if configured > 0 && cpu as i64 >= configured {
        return false;
    }
    match std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/online")) {
        Ok(s) => s.trim() == "1",
        // CPUs that cannot be hot-unplugged (often cpu0) have no such file.
        Err(_) => std::path::Path::new(&format!("/sys/devices/system/cpu/cpu{cpu}")).exists(),
    }
}

/// One shared poller: the live rings attached to its SQ thread.
#[derive(Debug)]
struct Group {
    /// The CPU the thread is bound to; None for the unbound group.
    cpu: Option<u32>,
    /// Ring fds of the live members; any of them can anchor a new ring.
    members: Vec<c_int>,
}

#[derive(Debug, Default)]
struct Registry {
    groups: Vec<Group>,
}

impl Registry {
    fn group_mut(&mut self, cpu: Option<u32>) -> Option<&mut Group> {
        self.groups.iter_mut().find(|g| g.cpu == cpu)
    }

    fn members_on(&self, cpu: Option<u32>) -> usize {
        self.groups
            .iter()
            .find(|g| g.cpu == cpu)
            .map_or(0, |g| g.members.len())
    }

    fn add(&mut self, cpu: Option<u32>, fd: c_int) {
        match self.group_mut(cpu) {
            Some(g) => g.members.push(fd),
            None => self.groups.push(Group {
                cpu,
                members: vec![fd],
            }),
        }
    }

    fn remove(&mut self, fd: c_int) {
        for g in &mut self.groups {
            g.members.retain(|&m| m != fd);
        }
        self.groups.retain(|g| !g.members.is_empty());
    }

    fn find(&self, fd: c_int) -> Option<&Group> {
        self.groups.iter().find(|g| g.members.contains(&fd))
    }
}

/// A lock that a fork()ed child can reset: the registry describes the
/// parent's rings, which the child cannot attach to (the kernel shares SQ
/// threads only within one process), so the child starts empty.
struct RegistryLock {
    locked: AtomicBool,
    data: UnsafeCell<Registry>,
}

// SAFETY: `data` is only reached through `lock()`, which serialises access.
unsafe impl Sync for RegistryLock {}

static REGISTRY: RegistryLock = RegistryLock {
    locked: AtomicBool::new(false),
    data: UnsafeCell::new(Registry { groups: Vec::new() }),
};

struct Guard;

impl core::ops::Deref for Guard {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        // SAFETY: the guard proves we hold the lock.
        unsafe { &*REGISTRY.data.get() }
    }
}

impl core::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut Registry {
        // SAFETY: the guard proves we hold the lock exclusively.
        unsafe { &mut *REGISTRY.data.get() }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        REGISTRY.locked.store(false, Ordering::Release);
    }
}

fn raw_lock() {
    while REGISTRY
        .locked
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::thread::yield_now();
    }
}

extern "C" fn before_fork() {
    raw_lock();
}

extern "C" fn after_fork_parent() {
    REGISTRY.locked.store(false, Ordering::Release);
}

extern "C" fn after_fork_child() {
    // We hold the lock (taken in before_fork), so the data is consistent;
    // the parent's groups mean nothing here. Their fds are the child's
    // copies of the parent's rings and stay the application's to close.
    // SAFETY: the lock is held by this (the only) thread.
    unsafe { *REGISTRY.data.get() = Registry::default() };
    REGISTRY.locked.store(false, Ordering::Release);
}

fn lock() -> Guard {
    static ATFORK: Once = Once::new();
    ATFORK.call_once(|| {
        // SAFETY: the handlers are plain functions valid for the whole process.
        unsafe {
            libc::pthread_atfork(
                Some(before_fork),
                Some(after_fork_parent),
                Some(after_fork_child),
            )
        };
    });
    raw_lock();
    Guard
}

/// Whether the fd still refers to an io_uring instance.
fn is_io_uring_fd(fd: c_int) -> bool {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.to_string_lossy().contains("io_uring"))
        .unwrap_or(false)
}

/// Setups that must not be given an SQ thread behind the application's back
/// (SQ_AFF without SQPOLL must keep failing with -EINVAL, as the kernel
/// says).
fn transparent_ok(flags: u32) -> bool {
    flags
        & (IORING_SETUP_SQPOLL
            | IORING_SETUP_SQ_AFF
            | IORING_SETUP_ATTACH_WQ
            | IORING_SETUP_DEFER_TASKRUN
            | IORING_SETUP_SINGLE_ISSUER
            | IORING_SETUP_R_DISABLED)
        == 0
}

/// Creates a ring, applying the shared-poller policy: the SQPOLL_PERCPU
/// flag, the environment, and CPU placement. Everything else is
/// [`setup::init_with_params`].
///
/// # Safety
/// As for [`setup::init_with_params`].
pub unsafe fn init(
    entries: u32,
    ring: &mut io_uring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> c_int {
    // The policy's decisions (flags it adds or strips, placement, idle
    // time, attachment) belong to this ring only: applications commonly
    // reuse one params struct for several rings, so the fields they filled
    // in are given back as they were. The kernel's outputs stay.
    let input = (p.flags, p.sq_thread_cpu, p.sq_thread_idle, p.wq_fd);
    // SAFETY: forwarded contract.
    let ret = unsafe { init_policy(entries, ring, p, buf, buf_size) };
    (p.flags, p.sq_thread_cpu, p.sq_thread_idle, p.wq_fd) = input;
    ret
}

/// [`init`] without giving the caller's fields back.
///
/// # Safety
/// As for [`setup::init_with_params`].
unsafe fn init_policy(
    entries: u32,
    ring: &mut io_uring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> c_int {
    let cfg = config();
    let asked = p.flags & IORING_SETUP_SQPOLL_PERCPU != 0;
    p.flags &= !IORING_SETUP_SQPOLL_PERCPU;
    if asked && p.flags & IORING_SETUP_SQPOLL == 0 {
        *ring = io_uring::zeroed();
        return -libc::EINVAL;
    }
    let requested = *p;
    let mut shared = asked || (cfg.percpu_all && p.flags & IORING_SETUP_SQPOLL != 0);
    let transparent = cfg.transparent && transparent_ok(p.flags);
    if transparent {
        p.flags |= IORING_SETUP_SQPOLL;
        shared = true;
    }
    if p.flags & IORING_SETUP_SQPOLL != 0 && p.sq_thread_idle == 0 {
        if let Some(ms) = cfg.idle_ms {
            p.sq_thread_idle = ms;
        }
    }
    // An application that attaches rings itself keeps full control.
    let ret = if !shared || p.flags & IORING_SETUP_ATTACH_WQ != 0 {
        // SAFETY: forwarded contract.
        unsafe { setup::init_with_params(entries, ring, p, buf, buf_size) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { init_shared(cfg, entries, ring, p, buf, buf_size) }
    };
    if !transparent {
        return ret;
    }
    if ret < 0 {
        // The kernel refuses SQPOLL with some setups: give the application
        // the ring it asked for.
        *p = requested;
        // SAFETY: forwarded contract.
        return unsafe { setup::init_with_params(entries, ring, p, buf, buf_size) };
    }
    ring.rs_flags |= rs_flags::SQPOLL_TRANSPARENT;
    ret
}

/// Creates an SQPOLL ring in the poller group of its CPU, attaching it to a
/// live member's SQ thread when the group exists.
///
/// # Safety
/// As for [`setup::init_with_params`].
unsafe fn init_shared(
    cfg: &Config,
    entries: u32,
    ring: &mut io_uring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> c_int {
    let mut reg = lock();
    let cpu = if p.flags & IORING_SETUP_SQ_AFF != 0 {
        if !cpu_online(p.sq_thread_cpu) {
            *ring = io_uring::zeroed();
            return -libc::EINVAL;
        }
        Some(p.sq_thread_cpu)
    } else if let Some(list) = &cfg.cpus {
        // Least-loaded CPU first; ties go to the earlier CPU in the list.
        let cpu = *list
            .iter()
            .min_by_key(|&&c| reg.members_on(Some(c)))
            .expect("non-empty list");
        p.flags |= IORING_SETUP_SQ_AFF;
        p.sq_thread_cpu = cpu;
        Some(cpu)
    } else {
        None
    };

    let requested = (p.flags, p.wq_fd);
    loop {
        (p.flags, p.wq_fd) = requested;
        let anchor = reg.group_mut(cpu).map(|g| g.members[0]);
        if let Some(fd) = anchor {
            p.flags |= IORING_SETUP_ATTACH_WQ;
            p.wq_fd = fd as u32;
        }
        // SAFETY: forwarded contract. The lock is held across the setup so
        // the anchor cannot leave (and close) while the kernel attaches.
        let ret = unsafe { setup::init_with_params(entries, ring, p, buf, buf_size) };
        if anchor.is_some() {
            // The attachment is ours, not the application's request.
            p.flags &= !IORING_SETUP_ATTACH_WQ;
            p.wq_fd = requested.1;
            ring.flags &= !IORING_SETUP_ATTACH_WQ;
        }
        if ret >= 0 {
            // A REGISTERED_FD_ONLY ring has no fd to anchor others with; it
            // shares the poller but cannot be found in the registry.
            if ring.ring_fd >= 0 {
                reg.add(cpu, ring.ring_fd);
                ring.rs_flags |= rs_flags::SQPOLL_SHARED;
            }
            return ret;
        }
        match anchor {
            // The application closed an anchor's fd behind our back: forget
            // it and try the next member, or start a new group.
            Some(fd) if !is_io_uring_fd(fd) => reg.remove(fd),
            _ => return ret,
        }
    }
}

/// Takes a ring out of its poller group (before its fd is closed).
pub fn leave(ring: &mut io_uring) {
    if ring.rs_flags & rs_flags::SQPOLL_SHARED == 0 {
        return;
    }
    ring.rs_flags &= !rs_flags::SQPOLL_SHARED;
    if ring.ring_fd >= 0 {
        lock().remove(ring.ring_fd);
    }
}

/// What [`group_of`] reports about a ring's poller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupInfo {
    /// The poller's CPU, or None when unbound.
    pub cpu: Option<u32>,
    /// Live rings sharing the poller (this one included).
    pub members: usize,
}

/// The shared poller group of `ring`, if it is in one.
pub fn group_of(ring: &io_uring) -> Option<GroupInfo> {
    if ring.rs_flags & rs_flags::SQPOLL_SHARED == 0 {
        return None;
    }
    let reg = lock();
    reg.find(ring.ring_fd).map(|g| GroupInfo {
        cpu: g.cpu,
        members: g.members.len(),
    })
}
