//! Where the slots live, who owns them, and what fork() does to them.
//!
//! The first ring with statistics maps the process's [`Region`] (one
//! mapping, never unmapped, so a slot pointer stays valid for the life of
//! the process) and publishes it as `/dev/shm/rs-ringstats.<pid>` for
//! `rsuring-stat`; without a usable `/dev/shm` it stays private memory and
//! only the live view is lost. Processes without statistics never map,
//! create or read anything.
//!
//! The registry (which slots are live, where each ring's CQ head is) is
//! process-local and guarded by a lock that only ring setup, exit, fork and
//! process exit take, never the counting paths.
//!
//! fork(): the child must count into memory of its own, starting from zero.
//! Its atfork handler replaces the shared mapping with a private copy at the
//! same address (`mremap`, so every ring's slot pointer stays right), zeroes
//! the counters and marks the inherited rings. The child publishes its own
//! file when it sets up a ring with statistics itself.

use core::ffi::c_int;
use core::ptr;
use core::sync::atomic::{AtomicBool, Ordering};
use std::ffi::CString;
use std::sync::Once;

use crate::fork;
use crate::lock::{ForkSafeLock, Guard};

use super::cursor::{self, Tables};
use super::slot::{
    Header, Region, RingExt, RingInfo, Sqpoll, CAPACITY, MAGIC, REGION_LEN, VERSION,
};

/// Where the statistics files of processes are.
pub const SHM_DIR: &str = "/dev/shm";
/// File name prefix; the pid follows. (Without "uring" in it: people and
/// scripts find the io_uring library of a process by grepping its maps for
/// that word.)
pub const SHM_PREFIX: &str = "rs-ringstats.";

/// The statistics file of process `pid`.
pub fn shm_path(pid: u32) -> String {
    format!("{SHM_DIR}/{SHM_PREFIX}{pid}")
}

/// The pid a statistics file name stands for: the prefix and a pid in
/// canonical decimal (no sign, no leading zero), so that the name is
/// exactly `shm_path(pid)`.
pub fn pid_of_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix(SHM_PREFIX)?;
    let pid: u32 = digits.parse().ok()?;
    (pid != 0 && pid.to_string() == digits).then_some(pid)
}

/// What the process knows about one slot.
#[derive(Debug, Clone, Copy)]
pub struct Local {
    pub live: bool,
    /// The ring's CQ head, for a last look at process exit.
    pub khead: *const u32,
    /// The ring was set up before fork() by the parent.
    pub inherited: bool,
    /// Reported at process exit already.
    pub reported: bool,
}

const FREE: Local = Local {
    live: false,
    khead: ptr::null(),
    inherited: false,
    reported: false,
};

pub struct Registry {
    region: *mut Region,
    /// The region is the file under /dev/shm (not private memory).
    published: bool,
    local: [Local; CAPACITY],
    /// The rings' CQ cursors (see `super::cursor`).
    cursors: Tables,
}

impl Registry {
    /// The region, if statistics were ever on in this process.
    pub fn region(&self) -> Option<&'static Region> {
        // SAFETY: the region is mapped once and never unmapped.
        unsafe { self.region.as_ref() }
    }

    /// Takes a free slot for a ring described by `info` whose CQ head is at
    /// `khead`, now `head`. None when every slot is taken or no memory could
    /// be mapped.
    pub fn claim(
        &mut self,
        info: &RingInfo,
        khead: *const u32,
        head: u32,
    ) -> Option<&'static RingExt> {
        if self.region.is_null() {
            self.region = map_region()?;
            cursor::set_slots_at(self.region as usize + core::mem::offset_of!(Region, slots));
        }
        if !self.published {
            self.published = publish(self.region);
        }
        let region = self.region()?;
        let Some(idx) = self.local.iter().position(|l| !l.live) else {
            region.header.overflowed.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        let slot = &region.slots[idx];
        let id = &slot.id;
        id.ring_fd.store(info.ring_fd, Ordering::Relaxed);
        id.setup_flags.store(info.setup_flags, Ordering::Relaxed);
        id.sq_entries.store(info.sq_entries, Ordering::Relaxed);
        id.cq_entries.store(info.cq_entries, Ordering::Relaxed);
        id.sqpoll.store(info.sqpoll, Ordering::Relaxed);
        id.poller_cpu.store(info.poller_cpu, Ordering::Relaxed);
        id.poller_rings.store(info.poller_rings, Ordering::Relaxed);
        id.shared.store(0, Ordering::Relaxed);
        self.cursors.assign(idx, head as u64);
        slot.reset(head);
        // Odd: live. Release, so a reader that sees it sees the fields.
        id.generation.fetch_add(1, Ordering::Release);
        region
            .header
            .slots_used
            .fetch_max(idx as u32 + 1, Ordering::Release);
        self.local[idx] = Local {
            live: true,
            khead,
            ..FREE
        };
        Some(slot)
    }

    /// The index of a slot handed out by [`Self::claim`].
    pub fn index_of(&self, slot: &RingExt) -> usize {
        let base = self.region as usize + core::mem::offset_of!(Region, slots);
        (slot as *const RingExt as usize - base) / core::mem::size_of::<RingExt>()
    }

    pub fn local_mut(&mut self, idx: usize) -> &mut Local {
        &mut self.local[idx]
    }

    /// Gives a slot back.
    pub fn release(&mut self, slot: &RingExt) {
        let idx = self.index_of(slot);
        // Even: free.
        slot.id.generation.fetch_add(1, Ordering::Release);
        self.local[idx] = FREE;
        self.cursors.release(idx);
    }

    /// The live slots with what the process knows about them.
    pub fn live(&mut self) -> impl Iterator<Item = (&'static RingExt, &mut Local)> {
        let region = self.region();
        self.local
            .iter_mut()
            .enumerate()
            .filter(|(_, l)| l.live)
            .filter_map(move |(i, l)| Some((&region?.slots[i], l)))
    }

    /// Sets the member count of every live slot of shared poller `cpu`.
    pub fn set_group_rings(&mut self, cpu: i32, rings: u32) {
        for (slot, _) in self.live() {
            let id = &slot.id;
            if Sqpoll::from_raw(id.sqpoll.load(Ordering::Relaxed)) == Sqpoll::Shared
                && id.poller_cpu.load(Ordering::Relaxed) == cpu
            {
                id.poller_rings.store(rings, Ordering::Relaxed);
            }
        }
    }

    /// Removes the statistics file (process exit). The memory stays mapped:
    /// rings that outlive this may still count into it.
    pub fn unpublish(&mut self) {
        if self.published {
            self.published = false;
            if let Ok(path) = CString::new(shm_path(std::process::id())) {
                // SAFETY: a valid NUL-terminated path.
                unsafe { libc::unlink(path.as_ptr()) };
            }
        }
    }
}

// SAFETY: the pointers are to the process-wide region (mapped for the
// life of the process) and to rings' CQ heads, read only through
// `read_head_safely`; any thread may use them under the registry's lock.
unsafe impl Send for Registry {}

static REGISTRY: ForkSafeLock<Registry> = ForkSafeLock::new(Registry {
    region: ptr::null_mut(),
    published: false,
    local: [FREE; CAPACITY],
    cursors: Tables::new(),
});

/// fork(): the registry is locked across it; the child gets a private page.
/// Before it, the parent counts what it reaped so far (the child's first
/// look must not take the parent's last reaps for its own).
static FORK_HANDLERS: fork::Handlers = fork::Handlers {
    prepare: Some(|| {
        observe_before_fork();
        REGISTRY.lock_for_fork()
    }),
    // SAFETY: the prepare handler took the lock in this thread.
    parent: Some(|| unsafe { REGISTRY.unlock_after_fork(Some(after_fork_in_parent)) }),
    // SAFETY: the prepare handler took the lock in this thread (copied
    // into the child, whose only thread this is).
    child: Some(|| unsafe { REGISTRY.unlock_after_fork(Some(make_the_childs)) }),
};

/// Installs the fork handlers (see `crate::fork`); done by the first
/// [`lock`] or [`lock_within`], before any slot exists.
pub fn install_fork_handlers() {
    fork::install(fork::Part::StatsRegistry, &FORK_HANDLERS);
}

/// Takes the registry lock.
pub fn lock() -> Guard<'static, Registry> {
    install_fork_handlers();
    REGISTRY.lock()
}

/// Takes the registry lock unless it stays taken for `patience`: process
/// exit must not hang on a lock held by a thread that will never run again
/// (exit() called from a signal handler that interrupted its holder).
pub fn lock_within(patience: std::time::Duration) -> Option<Guard<'static, Registry>> {
    install_fork_handlers();
    REGISTRY.lock_within(patience)
}

/// Folds the CQ head movement of every live ring that only this process
/// has used so far into its counts. (A ring already shared with a child
/// may have moved by the child's reaps: the first look after them,
/// whichever process makes it, counts them.)
fn observe_before_fork() {
    let Some(mut reg) = lock_within(std::time::Duration::from_millis(100)) else {
        return;
    };
    for (slot, local) in reg.live() {
        if slot.id.shared.load(Ordering::Relaxed) != 0 {
            continue;
        }
        if let Some(head) = read_head_safely(local.khead) {
            slot.observe_head(head);
        }
    }
}

/// In the parent after fork(): its live rings may now be used by the
/// child too (their cursors are never reused; the lines say `shared=yes`).
fn after_fork_in_parent(reg: &mut Registry) {
    reg.cursors.after_fork_in_parent();
    for (slot, _) in reg.live() {
        slot.id.shared.store(1, Ordering::Relaxed);
    }
}

/// Makes the registry the child's (in the child's only thread, the lock
/// held): only system calls and plain memory accesses here (no allocation).
fn make_the_childs(reg: &mut Registry) {
    reg.cursors.after_fork_in_child();
    if !reg.region.is_null() {
        if reg.published {
            reg.published = false;
            // SAFETY: the region is ours and mapped REGION_LEN long.
            if unsafe { !make_private(reg.region) } {
                // Out of memory: the inherited rings would count into the
                // parent's page. Give them fresh zero pages instead, and
                // never report or reuse their (now blank) slots.
                // SAFETY: replaces our own mapping at the same address.
                unsafe { map_anon(reg.region.cast(), libc::MAP_FIXED) };
                for l in reg.local.iter_mut().filter(|l| l.live) {
                    l.reported = true;
                }
            }
        }
        // SAFETY: the region is mapped (just above, or since setup).
        let region = unsafe { &*reg.region };
        region
            .header
            .pid
            .store(std::process::id(), Ordering::Relaxed);
        for (i, l) in reg.local.iter_mut().enumerate().filter(|(_, l)| l.live) {
            l.inherited = true;
            // The child counts from zero; the ring's cursor stays shared,
            // so CQEs the parent consumed are never the child's.
            region.slots[i].reset_counters();
            region.slots[i].id.shared.store(1, Ordering::Relaxed);
        }
    }
}

/// An anonymous private mapping of REGION_LEN bytes (at `addr` with
/// MAP_FIXED); null on failure.
///
/// # Safety
/// With MAP_FIXED, `addr` must be a mapping of ours that may be replaced.
unsafe fn map_anon(addr: *mut libc::c_void, extra: c_int) -> *mut Region {
    // SAFETY: forwarded contract; otherwise a fresh mapping.
    let p = unsafe {
        libc::mmap(
            addr,
            REGION_LEN,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        ptr::null_mut()
    } else {
        p.cast()
    }
}

/// Bytes of the region worth copying: the header and the slots used.
fn used_len(region: &Region) -> usize {
    let used = region.header.slots_used.load(Ordering::Relaxed) as usize;
    core::mem::offset_of!(Region, slots) + used.min(CAPACITY) * core::mem::size_of::<RingExt>()
}

/// Replaces the (shared) region with a private copy at the same address.
///
/// # Safety
/// `region` must be our region; no other thread may use it meanwhile.
unsafe fn make_private(region: *mut Region) -> bool {
    // SAFETY: a fresh mapping.
    let copy = unsafe { map_anon(ptr::null_mut(), 0) };
    if copy.is_null() {
        return false;
    }
    // SAFETY: both are REGION_LEN-byte mappings; used_len <= REGION_LEN.
    unsafe {
        ptr::copy_nonoverlapping(region.cast::<u8>(), copy.cast::<u8>(), used_len(&*region));
        let moved = libc::mremap(
            copy.cast(),
            REGION_LEN,
            REGION_LEN,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            region.cast::<libc::c_void>(),
        );
        if moved == libc::MAP_FAILED {
            libc::munmap(copy.cast(), REGION_LEN);
            return false;
        }
    }
    true
}

/// Maps a new, private region with its header filled in.
fn map_region() -> Option<*mut Region> {
    // SAFETY: a fresh mapping.
    let region = unsafe { map_anon(ptr::null_mut(), 0) };
    if region.is_null() {
        return None;
    }
    // SAFETY: zero-filled memory of the right size; the header is ours.
    let h = unsafe { &mut (*region).header };
    h.magic = MAGIC;
    h.version = VERSION;
    h.slot_size = core::mem::size_of::<RingExt>() as u32;
    h.capacity = CAPACITY as u32;
    h.pid.store(std::process::id(), Ordering::Relaxed);
    Some(region)
}

/// Moves the region into `/dev/shm/rs-ringstats.<pid>` (same address,
/// same contents). False, and the region unchanged, when that fails.
///
/// The file is created `O_EXCL | O_NOFOLLOW`, mode 0600: never through a
/// symbolic link, never a file someone else made. /dev/shm is writable by
/// every user, so another user may have taken the name first; then the
/// statistics stay private memory (the exit report is unaffected, only
/// `rsuring-stat` cannot see them) and, with `RSURING_STATS` set, one line
/// says so.
fn publish(region: *mut Region) -> bool {
    remove_stale_files();
    let pid = std::process::id();
    let Ok(path) = CString::new(shm_path(pid)) else {
        return false;
    };
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    let mut fd = -1;
    for _ in 0..2 {
        // SAFETY: a valid path; the result is checked.
        fd = unsafe { libc::open(path.as_ptr(), flags, 0o600) };
        if fd >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
            break;
        }
        match taken_by(&path) {
            // Left by an earlier program of this pid and user (exec, or a
            // crash): ours to replace.
            // SAFETY: a valid path.
            None => unsafe { libc::unlink(path.as_ptr()) },
            Some(why) => {
                note_taken(&why);
                return false;
            }
        };
    }
    if fd < 0 {
        return false;
    }
    // SAFETY: `region` is our REGION_LEN mapping; the file is ours.
    let ok = unsafe {
        let len = used_len(&*region);
        libc::ftruncate(fd, REGION_LEN as libc::off_t) == 0
            && libc::pwrite(fd, region.cast(), len, 0) == len as isize
            && libc::mmap(
                region.cast(),
                REGION_LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                0,
            ) != libc::MAP_FAILED
    };
    // SAFETY: our fd; the mapping keeps the file.
    unsafe { libc::close(fd) };
    if !ok {
        // SAFETY: a valid path.
        unsafe { libc::unlink(path.as_ptr()) };
    }
    ok
}

/// Why the existing file at `path` is not ours to replace, or None when it
/// is a regular file of this user (a statistics page or not: the name is
/// this pid's, and nobody else can have put it there).
fn taken_by(path: &CString) -> Option<String> {
    // SAFETY: an all-zero stat is a valid value; lstat fills it in.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: a valid path and a stat buffer of ours; never follows a link.
    if unsafe { libc::lstat(path.as_ptr(), &mut st) } != 0 {
        return Some(format!(
            "cannot stat it: {}",
            std::io::Error::last_os_error()
        ));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Some("it is not a regular file".into());
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    (st.st_uid != me).then(|| format!("uid {} owns it", st.st_uid))
}

/// Says once per process, when `RSURING_STATS` asked for statistics, that
/// the page could not be published.
fn note_taken(why: &str) {
    static NOTED: AtomicBool = AtomicBool::new(false);
    // RSURING_STATS on, as `super::mode` reads it (not called from here:
    // this module sits below it).
    let asked = crate::env::get(crate::env::STATS)
        .is_some_and(|v| v.starts_with("json:") || crate::env::parse_bool(&v) == Some(true));
    if asked && !NOTED.swap(true, Ordering::Relaxed) {
        crate::env::warn(&format!(
            "{} already exists ({why}): this process's statistics stay private \
             (rsuring-stat cannot show them; the exit report is unaffected)",
            shm_path(std::process::id())
        ));
    }
}

/// Removes statistics files of processes that no longer exist (killed
/// programs cannot remove their own). Once per process.
///
/// Only what is certainly such a file goes: a regular file (never followed
/// through a link), owned by this process's effective user (as root too:
/// another user's file is never touched), exactly a page long, starting with
/// a page header of the pid its name says, and that pid gone.
fn remove_stale_files() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Ok(dir) = std::fs::read_dir(SHM_DIR) else {
            return;
        };
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(pid_of_name) else {
                continue;
            };
            let Ok(path) = CString::new(shm_path(pid)) else {
                continue;
            };
            if is_own_page_of(&path, pid) && process_gone(pid) {
                // SAFETY: a valid path.
                unsafe { libc::unlink(path.as_ptr()) };
            }
        }
    });
}

/// Whether process `pid` no longer exists.
fn process_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let ret = unsafe { libc::kill(pid, 0) };
    ret != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Whether `path` is a statistics page of process `pid` that this user
/// made (see [`remove_stale_files`]).
fn is_own_page_of(path: &CString, pid: u32) -> bool {
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    // SAFETY: a valid path; the result is checked.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    if fd < 0 {
        return false;
    }
    // SAFETY: all-zero stat and header bytes are valid values.
    let (mut st, mut header): (libc::stat, [u8; 64]) = (unsafe { core::mem::zeroed() }, [0; 64]);
    // SAFETY: our descriptor, our buffers (the read is at most 64 bytes).
    let ok = unsafe {
        libc::fstat(fd, &mut st) == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFREG
            && st.st_uid == libc::geteuid()
            && st.st_size == REGION_LEN as libc::off_t
            && libc::pread(fd, header.as_mut_ptr().cast(), 64, 0) == 64
    };
    // SAFETY: the descriptor opened above.
    unsafe { libc::close(fd) };
    let at = |off: usize| {
        u32::from_ne_bytes([
            header[off],
            header[off + 1],
            header[off + 2],
            header[off + 3],
        ])
    };
    ok && header[..8] == MAGIC
        && at(core::mem::offset_of!(Header, version)) == VERSION
        && at(core::mem::offset_of!(Header, pid)) == pid
}

/// Reads a ring's CQ head at process exit without trusting that the
/// application left the mapping in place: None if it is gone.
pub fn read_head_safely(khead: *const u32) -> Option<u32> {
    let mut value = 0u32;
    let local = libc::iovec {
        iov_base: ptr::from_mut(&mut value).cast(),
        iov_len: 4,
    };
    let remote = libc::iovec {
        iov_base: khead as *mut libc::c_void,
        iov_len: 4,
    };
    // SAFETY: reads 4 bytes of our own address space into `value`; the
    // kernel checks the source address and fails instead of faulting.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (n == 4).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_carry_a_canonical_pid() {
        assert_eq!(pid_of_name("rs-ringstats.4242"), Some(4242));
        for name in [
            "rs-ringstats.",
            "rs-ringstats.0",
            "rs-ringstats.+5",
            "rs-ringstats.05",
            "rs-ringstats.-5",
            "rs-ringstats.5x",
            "rs-ringstats.99999999999",
            "xrs-ringstats.5",
        ] {
            assert_eq!(pid_of_name(name), None, "{name}");
        }
    }
}
