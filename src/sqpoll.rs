//! Per-CPU shared SQPOLL: every ring of the process bound to the same CPU
//! shares one kernel SQ poll thread.
//!
//! Layer 5 (see lib.rs): the poller registry and [`map_shared_ring`], which
//! maps a ring into its CPU's group. When a ring shares a poller (the
//! SQPOLL_PERCPU flag, `RSURING_SQPOLL*`) is the policy's decision, in
//! `crate::lifecycle`. Functions on the plain [`io_uring`] (its fd and the
//! address of its SQ head identify a member; nothing is dereferenced).
//!
//! The kernel shares an SQ thread between SQPOLL rings of one process when a
//! ring is created with IORING_SETUP_ATTACH_WQ and `wq_fd` naming a live ring
//! that already has one. This module keeps, per CPU (or for the one unbound
//! group), the live member rings, so a new ring can attach to any of them,
//! and the group survives its first ring closing.
//!
//! A member is known by its fd and its mapping, and the registry never
//! trusts the fd number alone: the application may close a member's fd and
//! the number may come back as another ring. Before a member anchors a new
//! ring, the kernel is asked which SQ thread that fd's ring has
//! (`/proc/self/fdinfo/FD`: `SqThread`, `SqThreadCpu`); a member whose fd
//! no longer leads to the group's thread is dropped.
//!
//! The registry is process-wide and guarded by a lock that only ring setup,
//! exit and queries take, never the submit/complete paths. A ring that
//! belongs to a group is marked by `rs_flags::SQPOLL_SHARED` in its own
//! `struct io_uring`, so exit knows to leave without a lookup for other rings.

use core::ffi::c_int;
use std::sync::OnceLock;

use crate::fork;
use crate::lock::ForkSafeLock;
use crate::procfs::{self, Process};
use crate::ring::{io_uring, rs_flags};
use crate::setup::SetupRequest;
use crate::uapi::{IORING_SETUP_ATTACH_WQ, IORING_SETUP_SQ_AFF};
use crate::{setup, stats};

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
        let (lo, hi) = crate::env::parse_cpu_range(part)?;
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

/// A member ring: its fd and, to tell it from a ring that later got the
/// same fd number, the address of its SQ head word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Member {
    fd: c_int,
    khead: usize,
}

impl Member {
    fn of(ring: &io_uring) -> Self {
        Member {
            fd: ring.ring_fd,
            khead: ring.sq.khead as usize,
        }
    }
}

/// One shared poller: its SQ thread and the live rings attached to it.
#[derive(Debug)]
struct Group {
    /// The CPU the thread is bound to; None for the unbound group.
    cpu: Option<u32>,
    /// The SQ thread's id as the kernel reports it in fdinfo (None if the
    /// kernel did not say).
    sq_thread: Option<i32>,
    members: Vec<Member>,
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

    fn remove(&mut self, member: Member) {
        for g in &mut self.groups {
            g.members.retain(|&m| m != member);
        }
        self.groups.retain(|g| !g.members.is_empty());
    }

    fn find(&self, member: Member) -> Option<&Group> {
        self.groups.iter().find(|g| g.members.contains(&member))
    }
}

/// The registry describes this process's rings; a fork()ed child cannot
/// attach to them (the kernel shares SQ threads only within one process),
/// so the child starts empty. The fds stay the application's to close.
static REGISTRY: ForkSafeLock<Registry> = ForkSafeLock::new(Registry { groups: Vec::new() });

static FORK_HANDLERS: fork::Handlers = fork::Handlers {
    prepare: Some(|| REGISTRY.lock_for_fork()),
    // SAFETY: the prepare handler took the lock in this thread.
    parent: Some(|| unsafe { REGISTRY.unlock_after_fork(None) }),
    // SAFETY: the prepare handler took the lock in this thread (copied
    // into the child).
    child: Some(|| unsafe { REGISTRY.unlock_after_fork(Some(|reg| *reg = Registry::default())) }),
};

/// Installs the fork handlers (see `crate::fork`); done by the first use
/// of the registry.
pub fn install_fork_handlers() {
    fork::install(fork::Part::PollerRegistry, &FORK_HANDLERS);
}

fn lock() -> crate::lock::Guard<'static, Registry> {
    install_fork_handlers();
    REGISTRY.lock()
}

/// What the kernel says about an fd's SQ thread: (thread id, CPU), from
/// `/proc/self/fdinfo/FD` (retried while the ring is busy, see
/// [`procfs::fdinfo`]). None when the fd is not an io_uring, has no SQ
/// thread, or the kernel printed nothing.
fn poller_of(fd: c_int) -> Option<(i32, i32)> {
    let info = procfs::fdinfo(Process::Current, fd)?;
    Some((info.sq_thread?, info.sq_thread_cpu.unwrap_or(-1)))
}

/// [`poller_of`] for a ring this thread has just created as the first of a
/// group. Until the new SQ thread first runs, the kernel reports its
/// creator's id in its place, so this waits (briefly: the thread is
/// runnable) until the id differs from the calling thread's.
fn new_poller_of(fd: c_int) -> Option<i32> {
    const TRIES: u32 = 2000;
    let me = crate::sys::gettid();
    for i in 0..TRIES {
        match poller_of(fd) {
            Some((thread, _)) if thread != me => return Some(thread),
            Some(_) if i < TRIES / 2 => crate::sys::sched_yield(),
            Some(_) => std::thread::sleep(std::time::Duration::from_micros(100)),
            None => return None,
        }
    }
    None
}

/// Whether `member`'s fd still leads to `group`'s SQ thread.
fn anchors(group: &Group, member: Member) -> bool {
    let Some(expected) = group.sq_thread else {
        return false;
    };
    match poller_of(member.fd) {
        Some((thread, cpu)) => {
            thread == expected && group.cpu.map_or(true, |want| cpu == want as i32)
        }
        None => false,
    }
}

/// Creates an SQPOLL ring in the poller group of its CPU, attaching it to a
/// live member's SQ thread when the group has one. Rings without SQ_AFF go
/// to the least-loaded CPU of `placement`, or to the unbound group. (When
/// a ring shares a poller at all is the policy's choice, in
/// `crate::lifecycle`.)
pub fn map_shared_ring(placement: Option<&[u32]>, req: &mut SetupRequest<'_>) -> c_int {
    let mut reg = lock();
    let cpu = if req.p.flags & IORING_SETUP_SQ_AFF != 0 {
        if !cpu_online(req.p.sq_thread_cpu) {
            *req.ring = io_uring::zeroed();
            return -libc::EINVAL;
        }
        Some(req.p.sq_thread_cpu)
    } else if let Some(list) = placement {
        // Least-loaded CPU first; ties go to the earlier CPU in the list.
        let cpu = *list
            .iter()
            .min_by_key(|&&c| reg.members_on(Some(c)))
            .expect("non-empty list");
        req.p.flags |= IORING_SETUP_SQ_AFF;
        req.p.sq_thread_cpu = cpu;
        Some(cpu)
    } else {
        None
    };

    // A live member whose fd still leads to the group's thread; members
    // whose fd the application closed (or that now names another ring)
    // are dropped on the way.
    let anchor = loop {
        let Some(group) = reg.group_mut(cpu) else {
            break None;
        };
        let Some(&candidate) = group.members.first() else {
            break None;
        };
        if anchors(group, candidate) {
            break Some(candidate.fd);
        }
        reg.remove(candidate);
    };

    let requested = (req.p.flags, req.p.wq_fd);
    if let Some(fd) = anchor {
        req.p.flags |= IORING_SETUP_ATTACH_WQ;
        req.p.wq_fd = fd as u32;
    }
    // The lock is held across the setup so the anchor cannot leave (and
    // close) while the kernel attaches.
    let ret = setup::map_new_ring(req);
    if anchor.is_some() {
        // The attachment is ours, not the application's request.
        (req.p.flags, req.p.wq_fd) = requested;
        req.ring.flags &= !IORING_SETUP_ATTACH_WQ;
    }
    // A REGISTERED_FD_ONLY ring has no fd to anchor others with; it shares
    // the poller but cannot be found in the registry.
    if ret < 0 || req.ring.ring_fd < 0 {
        return ret;
    }
    let member = Member::of(req.ring);
    match reg.group_mut(cpu) {
        Some(group) => group.members.push(member),
        None => {
            let sq_thread = new_poller_of(member.fd);
            if sq_thread.is_none() {
                note_unverifiable(member.fd);
                stats::count_unverified_poller();
            }
            reg.groups.push(Group {
                cpu,
                sq_thread,
                members: vec![member],
            })
        }
    }
    req.ring.rs_flags |= rs_flags::SQPOLL_SHARED;
    ret
}

/// The kernel does not show a new poller's SQ thread in `/proc/self/fdinfo`,
/// so no later ring can be verified to reach it: they get pollers of their
/// own (each ring's statistics then show `poller_rings=1`, and the process
/// line `pollers_unverified=N`). Noted once per process.
#[cold]
fn note_unverifiable(fd: c_int) {
    static NOTED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    if !NOTED.swap(true, core::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "rsuring: shared SQPOLL: /proc/self/fdinfo/{fd} does not show the ring's SQ thread; \
             rings that would share its poller get pollers of their own"
        );
    }
}

/// Takes a ring out of its poller group (before its fd is closed).
pub fn leave(ring: &mut io_uring) {
    if ring.rs_flags & rs_flags::SQPOLL_SHARED == 0 {
        return;
    }
    ring.rs_flags &= !rs_flags::SQPOLL_SHARED;
    if ring.ring_fd >= 0 {
        lock().remove(Member::of(ring));
    }
}

/// Follows a member ring whose mapping moved (io_uring_resize_rings).
pub fn moved(ring: &io_uring, old_khead: *mut u32) {
    if ring.rs_flags & rs_flags::SQPOLL_SHARED == 0 {
        return;
    }
    let old = Member {
        fd: ring.ring_fd,
        khead: old_khead as usize,
    };
    let mut reg = lock();
    for g in &mut reg.groups {
        for m in &mut g.members {
            if *m == old {
                *m = Member::of(ring);
            }
        }
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
    reg.find(Member::of(ring)).map(|g| GroupInfo {
        cpu: g.cpu,
        members: g.members.len(),
    })
}

/// Whether this process has a shared poller bound to `cpu` (one that
/// serves live rings): its own SQ thread keeps that CPU busy, so the
/// transparent policy judges such a CPU by its hand-overs, not its load.
pub fn serves_cpu(cpu: u32) -> bool {
    lock().members_on(Some(cpu)) > 0
}

/// SQEs of one ring that a shared SQ thread takes per round: a link chain
/// longer than this is submitted in pieces, each as if complete.
pub const SHARED_ROUND_SQES: u32 = 8;

/// A link chain of `len` SQEs was published on a ring that shares its
/// poller. Whether the kernel will split it: true when the poller serves
/// other rings too (only then does it cap each round); noted once per
/// process. The caller counts it and marks the ring
/// (`rs_flags::LONG_CHAIN_NOTED`).
#[cold]
pub fn long_chain_published(ring: &io_uring, len: u32) -> bool {
    if !group_of(ring).is_some_and(|g| g.members > 1) {
        return false;
    }
    static NOTED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    if !NOTED.swap(true, core::sync::atomic::Ordering::Relaxed) {
        // Documented diagnostic of the shared-poller extensions, once per
        // process (the statistics count every such chain).
        eprintln!(
            "rsuring: ring fd {}: a link chain of {len} SQEs on a shared SQ poll thread: the kernel \
             takes at most {SHARED_ROUND_SQES} SQEs of each ring per round and submits a cut chain \
             as if complete (later links may run unlinked); keep chains to {SHARED_ROUND_SQES} or \
             give this ring its own poller",
            ring.ring_fd
        );
    }
    true
}

#[cfg(test)]
mod tests {
    //! RSURING_SQPOLL_CPUS parsing, without a kernel ring. CPU 0 is always
    //! online; a CPU past the configured count never is.

    use super::*;

    fn absent_cpu() -> u32 {
        // SAFETY: sysconf has no preconditions.
        let configured = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        assert!(configured > 0, "sysconf(_SC_NPROCESSORS_CONF) failed");
        configured as u32
    }

    #[test]
    fn cpu_lists_of_single_cpus_and_ranges() {
        assert_eq!(parse_cpu_list("0"), Ok(vec![0]));
        assert_eq!(parse_cpu_list("0-0"), Ok(vec![0]));
        assert_eq!(
            parse_cpu_list(" 0 , 0 - 0 "),
            Ok(vec![0]),
            "spaces are allowed"
        );
        assert_eq!(parse_cpu_list("0,0,0-0"), Ok(vec![0]), "each CPU once");
        if cpu_online(1) {
            assert_eq!(parse_cpu_list("1,0"), Ok(vec![1, 0]), "in the order given");
            assert_eq!(parse_cpu_list("0-1,1"), Ok(vec![0, 1]));
        }
    }

    #[test]
    fn malformed_cpu_lists_say_why() {
        for (list, why) in [
            ("", "bad CPU number"),
            (",", "bad CPU number"),
            ("abc", "bad CPU number \"abc\""),
            ("0,x", "bad CPU number \"x\""),
            ("-1", "bad CPU number \"\""),
            ("0-", "bad CPU number \"\""),
            ("1-0", "bad CPU range \"1-0\""),
            ("4096", "bad CPU range \"4096\""),
            ("0-4096", "bad CPU range"),
            ("0 1", "bad CPU number"),
            ("0x1", "bad CPU number"),
        ] {
            match parse_cpu_list(list) {
                Err(e) => assert!(e.contains(why), "{list:?}: {e:?} does not say {why:?}"),
                Ok(cpus) => panic!("{list:?} parsed as {cpus:?}"),
            }
        }
    }

    #[test]
    fn offline_cpus_are_refused() {
        let absent = absent_cpu();
        assert!(!cpu_online(absent));
        assert!(cpu_online(0));
        let list = format!("0,{absent}");
        assert_eq!(
            parse_cpu_list(&list),
            Err(format!("CPU {absent} is not online"))
        );
    }
}
