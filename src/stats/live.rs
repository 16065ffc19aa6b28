//! Reading another process's rings for `rsuring-stat`: its statistics page
//! (`/dev/shm/rs-ringstats.PID`, present while a ring of it has statistics
//! on), joined with what the kernel says in /proc about each io_uring fd and
//! each SQ poll thread. Rings without statistics still show what the kernel
//! knows (SQ/CQ indices, poll thread).

use core::sync::atomic::Ordering;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

use super::region::{pid_of_name, shm_path};
use super::slot::{
    Counters, Header, Region, RingExt, RingInfo, CAPACITY, MAGIC, REGION_LEN, VERSION,
};
use crate::procfs::{self, FdInfo, Process, TaskStat};

/// Whether the process publishes statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// The page is there and mapped by the process.
    Live {
        overflowed: u32,
        /// RSURING_SQPOLL=1 refusals by reason (`slot::REFUSAL_NAMES`).
        refused: [u32; super::slot::REFUSAL_COUNTERS],
        /// Shared pollers that could not be verified (`Header::unverified_pollers`).
        unverified_pollers: u32,
    },
    /// No statistics page: statistics are off (or /dev/shm is unusable).
    Missing,
    /// A page with this pid that the process does not map (it exec'd, or
    /// the pid was reused): ignored.
    Stale,
    /// A page of a layout this tool does not know.
    Foreign,
    /// Something under the page's name that is not read, and why (a
    /// symbolic link, not a regular file, another user's file, the wrong
    /// size, ...). /dev/shm is writable by every user: what is there may
    /// have been put there to crash, hang or fool a reader running as root.
    Rejected(String),
    /// A page this user may not read (another user's process, 0600).
    Unreadable,
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

/// The file `rsuring-stat` reads for process `pid`.
pub fn page_path(pid: u32) -> String {
    shm_path(pid)
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
        .filter_map(|e| pid_of_name(e.file_name().to_str()?))
        .collect();
    pids.sort_unstable();
    pids
}

/// Whether `pid` maps the file `(dev, ino)` under its page's name (the
/// file is its current page, not a leftover of an earlier program).
fn maps_page(pid: u32, dev: u64, ino: u64) -> bool {
    let path = shm_path(pid);
    let want_dev = format!("{:02x}:{:02x}", libc::major(dev), libc::minor(dev));
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
        return false;
    };
    maps.lines().any(|l| {
        let mut f = l.split_whitespace();
        let (dev_f, ino_f, path_f) = (f.nth(3), f.next(), f.next());
        let rest = f.next();
        path_f == Some(path.as_str())
            && rest.is_none()
            && dev_f == Some(want_dev.as_str())
            && ino_f.and_then(|i| i.parse::<u64>().ok()) == Some(ino)
    })
}

/// A live slot as read from the page.
#[derive(Debug, Clone)]
pub struct PageSlot {
    pub index: usize,
    pub gen: u32,
    pub info: RingInfo,
    pub counters: Counters,
    /// The CQ head the library last observed (low 32 bits).
    pub cq_seen: u32,
}

/// The page's layout, for tools and tests that build pages: the header's
/// length, a slot's length, the slots' offset, the number of slots and the
/// file's length.
pub const HEADER_LEN: usize = core::mem::size_of::<Header>();
pub const SLOT_LEN: usize = core::mem::size_of::<RingExt>();
pub const SLOTS_AT: usize = core::mem::offset_of!(Region, slots);
pub const SLOTS: usize = CAPACITY;
pub const PAGE_LEN: usize = REGION_LEN;
/// Where the header keeps the pid, the slot count and the overflow count.
pub const PID_AT: usize = core::mem::offset_of!(Header, pid);
pub const SLOTS_USED_AT: usize = core::mem::offset_of!(Header, slots_used);
pub const OVERFLOWED_AT: usize = core::mem::offset_of!(Header, overflowed);

/// The bytes of an empty page of process `pid` in this layout (a header,
/// no ring), for tests and fuzz seeds that build pages.
pub fn blank_page(pid: u32) -> Vec<u8> {
    let mut page = vec![0u8; REGION_LEN];
    let mut put = |at: usize, v: u32| page[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    put(core::mem::offset_of!(Header, version), VERSION);
    put(core::mem::offset_of!(Header, slot_size), SLOT_LEN as u32);
    put(core::mem::offset_of!(Header, capacity), CAPACITY as u32);
    put(PID_AT, pid);
    page[..MAGIC.len()].copy_from_slice(&MAGIC);
    page
}

/// How the reader opens a page: never through a symbolic link, never
/// blocking (a FIFO under the name), never leaked into a child.
pub const OPEN_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;

/// The ring slots in the page of `pid`.
fn read_page(pid: u32) -> (Page, Vec<PageSlot>) {
    read_page_checked(pid).unwrap_or_else(|page| (page, Vec::new()))
}

/// Opens the page of `pid` and checks what it is before reading a byte:
/// a regular file owned by the process's user (or root), exactly as long
/// as the layout, mapped by the process. Then reads it with `pread` into
/// private memory (nothing is mapped: a file truncated meanwhile gives a
/// short read, never SIGBUS) and parses the copy.
fn read_page_checked(pid: u32) -> Result<(Page, Vec<PageSlot>), Page> {
    let path = shm_path(pid);
    let Ok(cpath) = CString::new(path.as_str()) else {
        return Err(Page::Missing);
    };
    // SAFETY: a valid path; the result is checked.
    let raw = unsafe { libc::open(cpath.as_ptr(), OPEN_FLAGS) };
    if raw < 0 {
        let err = std::io::Error::last_os_error();
        return Err(match err.raw_os_error() {
            Some(libc::ENOENT) => Page::Missing,
            Some(libc::ELOOP) => Page::Rejected("a symbolic link".into()),
            Some(libc::EACCES) => Page::Unreadable,
            _ => Page::Rejected(format!("cannot open it: {err}")),
        });
    }
    // SAFETY: a descriptor just opened and owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: an all-zero stat is a valid value; fstat fills it in.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: a valid descriptor and a stat buffer of ours.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(Page::Rejected(format!("cannot stat it: {err}")));
    }
    check_file(pid, &st)?;
    if !maps_page(pid, st.st_dev, st.st_ino) {
        return Err(Page::Stale);
    }
    let header = pread_exact(&fd, HEADER_LEN, 0)?;
    let used = header_slots(pid, &header)?;
    // A ring may take or leave a slot while we read: the generations of a
    // first copy, the fields of a second, the generations of a third; a
    // slot counts when both generations are the same odd number.
    let len = used * SLOT_LEN;
    let copies = [
        pread_exact(&fd, len, SLOTS_AT)?,
        pread_exact(&fd, len, SLOTS_AT)?,
        pread_exact(&fd, len, SLOTS_AT)?,
    ];
    Ok(parse_page(
        pid,
        &header,
        [&copies[0], &copies[1], &copies[2]],
    ))
}

/// What the metadata of the file under the page's name must say.
fn check_file(pid: u32, st: &libc::stat) -> Result<(), Page> {
    let kind = st.st_mode & libc::S_IFMT;
    if kind != libc::S_IFREG {
        let what = match kind {
            libc::S_IFIFO => "a FIFO",
            libc::S_IFSOCK => "a socket",
            libc::S_IFCHR => "a character device",
            libc::S_IFBLK => "a block device",
            libc::S_IFDIR => "a directory",
            _ => "not a regular file",
        };
        return Err(Page::Rejected(what.into()));
    }
    let Some((euid, fsuid)) = procfs::file_uids(pid) else {
        // The process is gone (or hidden): nothing to show as its page.
        return Err(Page::Stale);
    };
    if st.st_uid != 0 && st.st_uid != euid && st.st_uid != fsuid {
        return Err(Page::Rejected(format!(
            "owned by uid {}, but process {pid} runs as uid {euid}",
            st.st_uid
        )));
    }
    if st.st_size != REGION_LEN as libc::off_t {
        return Err(Page::Rejected(format!(
            "{} bytes long, not the {REGION_LEN} of a statistics page",
            st.st_size
        )));
    }
    Ok(())
}

/// `len` bytes at `offset`; a short read (the file shrank) rejects it.
fn pread_exact(fd: &OwnedFd, len: usize, offset: usize) -> Result<Vec<u8>, Page> {
    let mut buf = vec![0u8; len];
    let mut done = 0;
    while done < len {
        // SAFETY: writes at most `len - done` bytes into our buffer.
        let n = unsafe {
            libc::pread(
                fd.as_raw_fd(),
                buf[done..].as_mut_ptr().cast(),
                len - done,
                (offset + done) as libc::off_t,
            )
        };
        match n {
            n if n > 0 => done += n as usize,
            0 => return Err(Page::Rejected("truncated while being read".into())),
            _ => {
                let err = std::io::Error::last_os_error();
                if err.kind() != std::io::ErrorKind::Interrupted {
                    return Err(Page::Rejected(format!("cannot read it: {err}")));
                }
            }
        }
    }
    Ok(buf)
}

/// A plain-data value copied from `bytes` (exactly its size), or None.
///
/// # Safety
/// Every byte pattern of `size_of::<T>()` bytes must be a valid `T`.
unsafe fn copy_plain<T>(bytes: &[u8]) -> Option<T> {
    if bytes.len() != core::mem::size_of::<T>() {
        return None;
    }
    let mut value = core::mem::MaybeUninit::<T>::zeroed();
    // SAFETY: `bytes` has exactly size_of::<T>() bytes; the destination is
    // our own value, which the caller promises any bytes make valid.
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), value.as_mut_ptr().cast(), bytes.len());
        Some(value.assume_init())
    }
}

/// The header's checks: the number of slots to read, bounded by the
/// layout's capacity.
fn header_slots(pid: u32, header: &[u8]) -> Result<usize, Page> {
    let bytes = header.get(..HEADER_LEN).ok_or(Page::Foreign)?;
    // SAFETY: Header is bytes, u32s and atomic u32s: any bytes are valid.
    let h = unsafe { copy_plain::<Header>(bytes) }.ok_or(Page::Foreign)?;
    if h.magic != MAGIC
        || h.version != VERSION
        || h.slot_size as usize != SLOT_LEN
        || h.capacity as usize != CAPACITY
    {
        return Err(Page::Foreign);
    }
    if h.pid.load(Ordering::Relaxed) != pid {
        return Err(Page::Stale);
    }
    Ok((h.slots_used.load(Ordering::Relaxed) as usize).min(CAPACITY))
}

/// Parses a page from bytes read out of it: its header, and three copies
/// of its slots (see [`read_page_checked`]). Nothing in the bytes is
/// trusted: the slot count is bounded by the capacity and by what was
/// read, every slot is taken only whole. (Public for the fuzz target.)
pub fn parse_page(pid: u32, header: &[u8], copies: [&[u8]; 3]) -> (Page, Vec<PageSlot>) {
    let used = match header_slots(pid, header) {
        Ok(used) => used,
        Err(page) => return (page, Vec::new()),
    };
    let slot = |copy: &[u8], i: usize| -> Option<RingExt> {
        let bytes = copy.get(i * SLOT_LEN..(i + 1) * SLOT_LEN)?;
        // SAFETY: RingExt is integer atomics and padding: any bytes are
        // valid. (A field of another kind would make this unsound: keep
        // the slot plain integers.)
        unsafe { copy_plain::<RingExt>(bytes) }
    };
    let mut slots = Vec::new();
    for i in 0..used {
        let (Some(first), Some(fields), Some(last)) =
            (slot(copies[0], i), slot(copies[1], i), slot(copies[2], i))
        else {
            break;
        };
        let gen = first.id.generation.load(Ordering::Relaxed);
        if gen % 2 == 0 || last.id.generation.load(Ordering::Relaxed) != gen {
            continue;
        }
        let counters = fields.counters();
        // The one sum taken of the counters (`Counters::enters`): a page
        // whose parts overflow it was not written by counting.
        let enters = [
            counters.enters_wait,
            counters.enters_sqwait,
            counters.wakeups,
        ]
        .iter()
        .try_fold(counters.enters_submit, |sum, &n| sum.checked_add(n));
        if enters.is_none() {
            let why = format!("slot {i} counts more than 2^64 io_uring_enter calls");
            return (Page::Rejected(why), Vec::new());
        }
        slots.push(PageSlot {
            index: i,
            gen,
            info: fields.info(),
            counters,
            cq_seen: fields.reap.cq_seen.load(Ordering::Relaxed) as u32,
        });
    }
    // SAFETY: as in header_slots (checked there to be whole).
    let h = unsafe { copy_plain::<Header>(&header[..HEADER_LEN]) };
    let overflowed = h
        .as_ref()
        .map_or(0, |h| h.overflowed.load(Ordering::Relaxed));
    let refused = core::array::from_fn(|i| {
        h.as_ref()
            .and_then(|h| h.refusal(i))
            .map_or(0, |w| w.load(Ordering::Relaxed))
    });
    let unverified_pollers = h
        .as_ref()
        .map_or(0, |h| h.unverified_pollers.load(Ordering::Relaxed));
    (
        Page::Live {
            overflowed,
            refused,
            unverified_pollers,
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
    for fd in procfs::io_uring_fds(Process::Pid(pid)) {
        if let Some(f) = procfs::fdinfo(Process::Pid(pid), fd) {
            by_fd.insert(fd, f);
        }
    }
    let rings = join_rings(slots, by_fd);
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

/// The rings of a process from its page's slots and the kernel's view of
/// its io_uring fds (public for tests that build snapshots from pages).
pub fn join_rings(slots: Vec<PageSlot>, mut by_fd: BTreeMap<i32, FdInfo>) -> Vec<Ring> {
    let mut rings = Vec::new();
    for PageSlot {
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
        // (Not for a ring other processes use: their reaps are theirs.)
        if let Some(k) = kernel.filter(|_| info.shared == 0) {
            let unseen = k.cq_head.wrapping_sub(cq_seen);
            if unseen != 0 && unseen <= info.cq_entries {
                // Counted as the library's next look will count them.
                counters.cqes = counters.cqes.saturating_add(unseen as u64);
                counters.reap_batches = counters.reap_batches.saturating_add(1);
                counters.reap_max = counters.reap_max.max(unseen as u64);
                let h = &mut counters.reap_hist;
                let b = &mut h.buckets[super::slot::size_bucket(unseen as u64)];
                *b = b.saturating_add(1);
                h.sum = h.sum.saturating_add(unseen as u64);
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
    rings
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of pid 7 with `used` slots in use, slot `i` with generation
    /// `gens[i]` and ring fd 100 + i.
    fn page(used: u32, gens: &[u32]) -> Vec<u8> {
        let mut b = blank_page(7);
        b[SLOTS_USED_AT..SLOTS_USED_AT + 4].copy_from_slice(&used.to_ne_bytes());
        for (i, gen) in gens.iter().enumerate() {
            let at = SLOTS_AT + i * SLOT_LEN;
            b[at..at + 4].copy_from_slice(&gen.to_ne_bytes());
            b[at + 4..at + 8].copy_from_slice(&(100 + i as i32).to_ne_bytes());
        }
        b
    }

    fn parse(b: &[u8], pid: u32) -> (Page, Vec<PageSlot>) {
        let slots = &b[SLOTS_AT..];
        parse_page(pid, &b[..HEADER_LEN], [slots, slots, slots])
    }

    #[test]
    fn live_slots_are_the_odd_generations_below_slots_used() {
        let b = page(3, &[1, 2, 5, 7]);
        let (p, slots) = parse(&b, 7);
        assert!(matches!(p, Page::Live { overflowed: 0, .. }), "{p:?}");
        let fds: Vec<i32> = slots.iter().map(|s| s.info.ring_fd).collect();
        assert_eq!(fds, [100, 102], "slot 3 is past slots_used");
        assert_eq!((slots[1].index, slots[1].gen), (2, 5));
    }

    #[test]
    fn a_slot_that_changed_between_copies_is_skipped() {
        let (a, b) = (page(2, &[1, 3]), page(2, &[1, 5]));
        let (p, slots) = parse_page(
            7,
            &a[..HEADER_LEN],
            [&a[SLOTS_AT..], &a[SLOTS_AT..], &b[SLOTS_AT..]],
        );
        assert!(matches!(p, Page::Live { overflowed: 0, .. }), "{p:?}");
        assert_eq!(slots.len(), 1);
        assert_eq!(slots[0].index, 0);
    }

    #[test]
    fn counts_from_the_page_are_bounded() {
        let b = page(u32::MAX, &vec![1; CAPACITY]);
        assert_eq!(parse(&b, 7).1.len(), CAPACITY);
        // Copies shorter than slots_used says: only whole slots, no panic.
        let short = &b[SLOTS_AT..SLOTS_AT + 2 * SLOT_LEN + 5];
        let (_, slots) = parse_page(7, &b[..HEADER_LEN], [short, short, short]);
        assert_eq!(slots.len(), 2);
        let (_, slots) = parse_page(7, &b[..HEADER_LEN], [short, &[], short]);
        assert!(slots.is_empty());
    }

    #[test]
    fn counters_that_cannot_add_up_reject_the_page() {
        use crate::stats::slot::SubmitSide;
        let mut b = page(1, &[1]);
        let submit = SLOTS_AT + core::mem::offset_of!(RingExt, submit);
        for (field, v) in [
            (core::mem::offset_of!(SubmitSide, enters_submit), u64::MAX),
            (core::mem::offset_of!(SubmitSide, wakeups), 1),
        ] {
            b[submit + field..submit + field + 8].copy_from_slice(&v.to_ne_bytes());
        }
        let (p, slots) = parse(&b, 7);
        assert!(
            matches!(&p, Page::Rejected(why) if why.contains("2^64")),
            "{p:?}"
        );
        assert!(slots.is_empty());
    }

    #[test]
    fn headers_of_other_layouts_pids_and_lengths() {
        let b = page(1, &[1]);
        assert_eq!(parse(&b, 8).0, Page::Stale);
        for (at, value) in [(0, 0u32), (8, VERSION + 1), (12, 1), (16, 1)] {
            let mut bad = b.clone();
            bad[at..at + 4].copy_from_slice(&value.to_ne_bytes());
            assert_eq!(parse(&bad, 7).0, Page::Foreign, "byte {at}");
        }
        for len in [0, 1, HEADER_LEN - 1] {
            assert_eq!(parse_page(7, &b[..len], [&[], &[], &[]]).0, Page::Foreign);
        }
    }
}
