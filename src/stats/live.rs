//! Reading another process's rings for `rsuring-stat`: its statistics page
//! (`/dev/shm/rs-ringstats.PID`, present while a ring of it has statistics
//! on), joined with what the kernel says in /proc about each io_uring fd and
//! each SQ poll thread. Rings without statistics still show what the kernel
//! knows (SQ/CQ indices, poll thread).

use core::sync::atomic::Ordering;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::time::Instant;

use super::procfs::{self, FdInfo, TaskStat};
use super::region::shm_path;
use super::slot::{Counters, Region, RingInfo, CAPACITY, MAGIC, REGION_LEN, VERSION};

/// Whether the process publishes statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// The page is there and mapped by the process.
    Live {
        overflowed: u32,
        /// RSURING_SQPOLL=1 refusals by reason (`slot::REFUSAL_NAMES`).
        refused: [u32; super::slot::REFUSAL_COUNTERS],
    },
    /// No statistics page: statistics are off (or /dev/shm is unusable).
    Missing,
    /// A page with this pid that the process does not map (it exec'd, or
    /// the pid was reused): ignored.
    Stale,
    /// A page of a layout this tool does not know.
    Foreign,
}

/// One ring of the process.
#[derive(Debug, Clone)]
pub struct Ring {
    /// The ring fd (-1: a ring known only by its registered index).
    pub fd: i32,
    /// (slot, generation): identifies the ring across snapshots.
    pub slot: Option<(usize, u32)>,
    pub info: Option<RingInfo>,
    pub counters: Option<Counters>,
    pub kernel: Option<FdInfo>,
}

/// One kernel SQ poll thread of the process.
#[derive(Debug, Clone)]
pub struct Poller {
    pub tid: i32,
    /// What the kernel reports as its CPU (the bound one when bound).
    pub cpu: i32,
    /// Bound to one CPU (its allowed list is a single CPU).
    pub bound: bool,
    pub ring_fds: Vec<i32>,
    pub task: Option<TaskStat>,
    pub total_us: Option<u64>,
    pub work_us: Option<u64>,
}

/// Everything about a process at one instant.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub pid: u32,
    pub comm: String,
    pub taken: Instant,
    pub page: Page,
    pub rings: Vec<Ring>,
    pub pollers: Vec<Poller>,
}

/// Whether process `pid` exists (and is visible).
pub fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The statistics pages under /dev/shm: the pids that publish one.
pub fn published_pids() -> Vec<u32> {
    let mut pids: Vec<u32> = std::fs::read_dir(super::region::SHM_DIR)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix(super::region::SHM_PREFIX)?
                .parse()
                .ok()
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// Whether `pid` maps its statistics page (it is current, not a leftover).
fn maps_page(pid: u32) -> bool {
    let path = shm_path(pid);
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map(|m| m.lines().any(|l| l.ends_with(&path)))
        .unwrap_or(false)
}

/// A live slot as read from the page.
struct Slot {
    index: usize,
    gen: u32,
    info: RingInfo,
    counters: Counters,
    /// The CQ head the library last observed (low 32 bits).
    cq_seen: u32,
}

/// The ring slots in the page of `pid`.
fn read_page(pid: u32) -> (Page, Vec<Slot>) {
    let Ok(path) = CString::new(shm_path(pid)) else {
        return (Page::Missing, Vec::new());
    };
    // SAFETY: a valid path; the result is checked.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return (Page::Missing, Vec::new());
    }
    // SAFETY: a read-only shared mapping of the whole page; the file is
    // never shorter (the library sizes it before publishing it).
    let map = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            REGION_LEN,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    // SAFETY: our fd; the mapping keeps the file.
    unsafe { libc::close(fd) };
    if map == libc::MAP_FAILED {
        return (Page::Foreign, Vec::new());
    }
    // SAFETY: REGION_LEN readable bytes laid out as a Region; every field
    // another process writes is an atomic, read here with plain atomic loads.
    let region = unsafe { &*(map as *const Region) };
    let result = read_region(pid, region);
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(map, REGION_LEN) };
    result
}

fn read_region(pid: u32, region: &Region) -> (Page, Vec<Slot>) {
    let h = &region.header;
    if h.magic != MAGIC
        || h.version != VERSION
        || h.slot_size as usize != core::mem::size_of::<super::slot::RingExt>()
        || h.capacity as usize != CAPACITY
    {
        return (Page::Foreign, Vec::new());
    }
    if h.pid.load(Ordering::Relaxed) != pid || !maps_page(pid) {
        return (Page::Stale, Vec::new());
    }
    let used = (h.slots_used.load(Ordering::Acquire) as usize).min(CAPACITY);
    let mut slots = Vec::new();
    for (i, slot) in region.slots[..used].iter().enumerate() {
        // A ring may take or leave the slot while we read: keep what was
        // read between two equal, odd generations.
        let gen = slot.id.generation.load(Ordering::Acquire);
        if gen % 2 == 0 {
            continue;
        }
        let (info, counters) = (slot.info(), slot.counters());
        let seen = slot.reap.cq_seen.load(Ordering::Relaxed) as u32;
        if slot.id.generation.load(Ordering::Acquire) == gen {
            slots.push(Slot {
                index: i,
                gen,
                info,
                counters,
                cq_seen: seen,
            });
        }
    }
    let overflowed = h.overflowed.load(Ordering::Relaxed);
    let refused = core::array::from_fn(|i| h.refused[i].load(Ordering::Relaxed));
    (
        Page::Live {
            overflowed,
            refused,
        },
        slots,
    )
}

/// Takes a snapshot of process `pid`; None when it does not exist.
pub fn snapshot(pid: u32) -> Option<Snapshot> {
    if !process_exists(pid) {
        return None;
    }
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim().to_string())
        .unwrap_or_default();
    let (page, slots) = read_page(pid);
    let mut by_fd: BTreeMap<i32, FdInfo> = BTreeMap::new();
    for fd in procfs::io_uring_fds(pid) {
        if let Some(f) = procfs::fdinfo(pid, fd) {
            by_fd.insert(fd, f);
        }
    }
    let mut rings = Vec::new();
    for Slot {
        index,
        gen,
        info,
        mut counters,
        cq_seen,
    } in slots
    {
        // A slot's fd is checked against the process's io_uring fds: the
        // application may have closed it without io_uring_queue_exit.
        let kernel = by_fd.remove(&info.ring_fd);
        // CQEs consumed by inline code since the library's last look: the
        // kernel's CQ head says how many.
        if let Some(k) = kernel {
            let unseen = k.cq_head.wrapping_sub(cq_seen);
            if unseen <= info.cq_entries {
                counters.cqes += unseen as u64;
            }
        }
        rings.push(Ring {
            fd: info.ring_fd,
            slot: Some((index, gen)),
            info: Some(info),
            counters: Some(counters),
            kernel,
        });
    }
    for (fd, f) in &by_fd {
        rings.push(Ring {
            fd: *fd,
            slot: None,
            info: None,
            counters: None,
            kernel: Some(*f),
        });
    }
    rings.sort_by_key(|r| (r.fd < 0, r.fd));
    let pollers = pollers_of(pid, &rings);
    Some(Snapshot {
        pid,
        comm,
        taken: Instant::now(),
        page,
        rings,
        pollers,
    })
}

/// Groups the rings by the SQ poll thread the kernel says serves them.
fn pollers_of(pid: u32, rings: &[Ring]) -> Vec<Poller> {
    let mut pollers: BTreeMap<i32, Poller> = BTreeMap::new();
    for r in rings {
        let Some(k) = r.kernel else { continue };
        let Some(tid) = k.sq_thread else { continue };
        let p = pollers.entry(tid).or_insert_with(|| {
            let task = procfs::task_stat(pid, tid);
            let bound = task.as_ref().is_some_and(|t| single_cpu(&t.allowed));
            Poller {
                tid,
                cpu: k.sq_thread_cpu.unwrap_or(-1),
                bound,
                ring_fds: Vec::new(),
                task,
                total_us: k.sq_total_us,
                work_us: k.sq_work_us,
            }
        });
        p.ring_fds.push(r.fd);
    }
    pollers.into_values().collect()
}

/// Whether a `Cpus_allowed_list` names exactly one CPU.
fn single_cpu(list: &str) -> bool {
    !list.is_empty() && !list.contains(',') && !list.contains('-')
}

/// Per-second rates of one ring between two snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RingRates {
    pub sqes: f64,
    pub cqes: f64,
    /// None for rings without statistics (the kernel does not count enters).
    pub enters: Option<f64>,
    pub wakeups: Option<f64>,
    pub sqwaits: Option<f64>,
    /// Mean CQEs per reap batch over the interval.
    pub batch: Option<f64>,
}

fn per_second(delta: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        delta as f64 / secs
    } else {
        0.0
    }
}

/// The rates of `now` since `before` (the same ring, or None).
pub fn ring_rates(before: Option<&Ring>, now: &Ring, secs: f64) -> Option<RingRates> {
    let before = before?;
    if let (Some(a), Some(b)) = (before.counters, now.counters) {
        let d = |x: u64, y: u64| y.saturating_sub(x);
        let batches = d(a.reap_batches, b.reap_batches);
        let cqes = d(a.cqes, b.cqes);
        return Some(RingRates {
            sqes: per_second(d(a.sqes, b.sqes), secs),
            cqes: per_second(cqes, secs),
            enters: Some(per_second(d(a.enters(), b.enters()), secs)),
            wakeups: Some(per_second(d(a.wakeups, b.wakeups), secs)),
            sqwaits: Some(per_second(d(a.enters_sqwait, b.enters_sqwait), secs)),
            batch: (batches != 0).then(|| cqes as f64 / batches as f64),
        });
    }
    let (a, b) = (before.kernel?, now.kernel?);
    Some(RingRates {
        sqes: per_second(b.sq_head.wrapping_sub(a.sq_head) as u64, secs),
        cqes: per_second(b.cq_tail.wrapping_sub(a.cq_tail) as u64, secs),
        ..Default::default()
    })
}

/// The same ring in an earlier snapshot.
pub fn find_ring<'a>(earlier: &'a Snapshot, ring: &Ring) -> Option<&'a Ring> {
    earlier.rings.iter().find(|r| match ring.slot {
        Some(key) => r.slot == Some(key),
        None => r.slot.is_none() && r.fd == ring.fd,
    })
}

/// A poll thread's CPU use between two snapshots: (CPU %, % of its CPU
/// time spent submitting), each None when unknown.
pub fn poller_usage(
    before: Option<&Poller>,
    now: &Poller,
    secs: f64,
) -> (Option<f64>, Option<f64>) {
    let Some(before) = before else {
        return (None, None);
    };
    let cpu = match (&before.task, &now.task) {
        (Some(a), Some(b)) if secs > 0.0 => Some(
            b.cpu_ticks.saturating_sub(a.cpu_ticks) as f64 * 100.0
                / procfs::ticks_per_second() as f64
                / secs,
        ),
        _ => None,
    };
    let work = match (before.total_us, now.total_us, before.work_us, now.work_us) {
        (Some(t0), Some(t1), Some(w0), Some(w1)) if t1 > t0 => {
            Some(w1.saturating_sub(w0) as f64 * 100.0 / (t1 - t0) as f64)
        }
        _ => None,
    };
    (cpu, work)
}
