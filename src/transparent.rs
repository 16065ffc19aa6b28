//! Transparent SQPOLL (`RSURING_SQPOLL=1`): a ring the application created
//! without SQPOLL gets a shared kernel SQ poll thread, and the program must
//! not be able to tell, except by speed.
//!
//! Layer 5 (see lib.rs). Which rings get it is decided in
//! `crate::lifecycle` with [`eligible`]; the enters here watch the ring's SQ
//! words through an [`SqView`] taken of a `LiveRing`.
//!
//! The kernel's SQ thread runs requests with its creator's credentials and
//! in its creator's address space and file table, consumes SQEs on its own
//! schedule, and makes `io_uring_enter` report `to_submit` whatever
//! happened. This module is the contract that hides that:
//!
//! - **Who gets it** ([`eligible`]): every ring not refused by one of
//!   [`CONDITIONS`], the one list of refusal conditions (credentials that
//!   can change, no CPU the poller can have to itself, the setup flags of
//!   [`PLAIN_SETUPS`], a cpuset that refuses the poller's CPU, a forked
//!   child, a kernel refusal, a poller's CPU measured busy: the
//!   step-aside rule of [`qualify`]; a ring in memory shared with other
//!   processes, [`shared_memory`]). docs/transparent-sqpoll.md and rsuring(7)
//!   hold the list as generated from it (the tests check both). Each
//!   refusal leaves the ring plain, is counted (statistics, rsuring-stat)
//!   and is noted once per reason on stderr.
//! - **How an enter behaves** ([`enter`], and [`enter_by_fd`] for the
//!   exported `io_uring_enter`): as on a plain ring. The SQEs the call
//!   submits are handed to the poller (woken at most once) and the call
//!   returns only when the kernel has consumed them, so the SQ is free
//!   again and inline completions are posted; the count is the plain
//!   ring's (`min(to_submit, queued)`), and a partial submission skips the
//!   wait, as the kernel does. The submit path takes no lock: where each
//!   ring's submitted SQEs end (for mixing library submits with the
//!   exported io_uring_enter) lives in a lock-free table ([`MARKS`]).
//! - **fork**: the poller belongs to the process that created the ring.
//!   Rings that other processes may use by design (their struct or ring
//!   memory shared) stay plain from setup on ([`Refusal::SharedMemory`]).
//!   A forked child that submits on an inherited transparent ring it holds
//!   a private copy of gets `-EOWNERDEAD` (its SQEs are never published,
//!   so they can run neither in the parent's memory nor with the parent's
//!   files), counted and noted once: nothing else could run them right.
//!
//! Known limits, documented: a submission the kernel rejects mid-batch
//! stops a plain ring's submit early; the poller goes on with the rest, so
//! the count covers them all. A raw `syscall(__NR_io_uring_enter)` cannot be
//! intercepted, and neither can an exported `io_uring_enter` through a
//! registered ring index; both get the kernel's SQPOLL behaviour.

use core::ffi::{c_int, c_void};
use core::ptr;
use core::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::fork;
use crate::lock::ForkSafeLock;

pub mod shared_memory;

use crate::ring::{fork_generation, io_uring, EnterTarget, LiveRing, SqWords};
use crate::sys;
use crate::uapi::{
    IORING_ENTER_GETEVENTS, IORING_ENTER_REGISTERED_RING, IORING_ENTER_SQ_WAIT,
    IORING_ENTER_SQ_WAKEUP, IORING_SETUP_ATTACH_WQ, IORING_SETUP_COOP_TASKRUN,
    IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_IOPOLL, IORING_SETUP_R_DISABLED,
    IORING_SETUP_SINGLE_ISSUER, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF, IORING_SETUP_SQ_REWIND,
    IORING_SETUP_TASKRUN_FLAG, IORING_SQ_NEED_WAKEUP, NSIG_BYTES,
};

/// Why a ring did not get (or a call was refused) transparent SQPOLL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Setup flags whose meaning an SQ thread changes ([`PLAIN_SETUPS`]).
    SetupFlags,
    /// The process can change its credentials.
    Privileged,
    /// No CPU the poller could have to itself: the process may run on
    /// every online CPU, or on every CPU of RSURING_SQPOLL_CPUS.
    NoPollerCpu,
    /// The kernel refused an SQ thread bound to the CPU chosen for it
    /// (a cpuset that excludes it).
    CpuRefused,
    /// A forked child submitted on its parent's transparent ring.
    Fork,
    /// The kernel refused SQPOLL with this setup.
    Kernel,
    /// The poller's CPU was measured busy: by others at ring setup, or by
    /// the hand-overs of this process's transparent rings ([`qualify`]).
    PollerBusy,
    /// The ring's struct or memory is shared with other processes
    /// ([`shared_memory`]).
    SharedMemory,
}

/// Reasons, and so per-process refusal counters.
pub const REFUSALS: usize = 8;

/// One refusal condition: the reason, its name (in statistics:
/// `transparent=refused:NAME`, `refused_NAME=N`), when it applies and what
/// it leaves plain. The documentation and the man page are generated from
/// [`CONDITIONS`] and [`PLAIN_SETUPS`] and checked against them by this
/// module's tests.
pub struct Condition {
    pub why: Refusal,
    pub name: &'static str,
    /// When a ring is refused, as the docs say it.
    pub when: &'static str,
    /// Why that has to be refused.
    pub because: &'static str,
    /// What stays plain.
    pub scope: &'static str,
}

/// The one list of refusal conditions, in counter order.
pub const CONDITIONS: [Condition; REFUSALS] = [
    Condition {
        why: Refusal::SetupFlags,
        name: "setup-flags",
        when: "the setup has one of the flags of the table below",
        because: "these select completion, ownership or submission semantics that an SQ thread changes, or the kernel refuses them together with SQPOLL",
        scope: "that ring",
    },
    Condition {
        why: Refusal::Privileged,
        name: "privileged",
        when: "the process can change its credentials: uid 0 among its real, effective or saved uids, a capability in its effective or permitted set, differing real, effective and saved uids or gids, or AT_SECURE (a set-id program)",
        because: "the SQ thread runs every request with its creator's credentials; after a privilege drop an openat through the ring would still run with the old ones",
        scope: "every ring of the process",
    },
    Condition {
        why: Refusal::NoPollerCpu,
        name: "no-poller-cpu",
        when: "a poller needs a CPU of its own and none is left: with RSURING_SQPOLL_CPUS, none of its CPUs lies outside the CPUs the process may run on (sched_getaffinity at ring setup); without it, the process may run on every online CPU",
        because: "every submit waits until the poller has consumed its SQEs, and a poller busy-polling the submitter's own CPU makes each submit wait for a scheduler time slice",
        scope: "every ring of the process",
    },
    Condition {
        why: Refusal::CpuRefused,
        name: "cpu-refused",
        when: "the kernel refuses an SQ thread bound to the CPU chosen for the poller (a cpuset that excludes that CPU)",
        because: "an unbound poller could run on the submitter's CPU",
        scope: "that ring",
    },
    Condition {
        why: Refusal::Fork,
        name: "fork",
        when: "a forked child submits on a transparent ring it inherited with a private copy of its struct io_uring (rings whose struct or memory is shared were left plain at setup: shared-memory)",
        because: "the poller belongs to the parent and would run the child's requests in the parent's memory and with its files, and the kernel hands an SQPOLL ring's SQEs to nobody else",
        scope: "that submission fails with -EOWNERDEAD, counted in the child",
    },
    Condition {
        why: Refusal::Kernel,
        name: "kernel",
        when: "the kernel refuses SQPOLL for the setup",
        because: "the application gets the ring it asked for",
        scope: "that ring",
    },
    Condition {
        why: Refusal::PollerBusy,
        name: "poller-busy",
        when: "the poller's CPU is measured busy (unless RSURING_SQPOLL_STEP_ASIDE=0): at ring setup, other tasks kept each CPU the new poller could have busy for more than 25% of 50 ms (/proc/stat; a CPU that already runs a poller of the process is judged by its hand-overs instead), or the process's transparent rings have measured their submits' wait for the poller at more than 16 bare system calls (at least 4 microseconds) on average over at least 200 ms and 64 submits (or fewer submits that waited 100 ms in all)",
        because: "every submit waits until the poller has consumed its SQEs; a poller that shares its CPU makes that wait a scheduler time slice, and the mode loses (measured: qemu-storage-daemon at 0.05-0.52x of Debian's liburing with the poller's CPU busy)",
        scope: "that ring, and once hand-overs were measured slow every later ring of the process (rings already transparent stay so)",
    },
    Condition {
        why: Refusal::SharedMemory,
        name: "shared-memory",
        when: "the ring's struct io_uring, or the memory given to io_uring_queue_init_mem, lies in a mapping shared with other processes (MAP_SHARED, SysV or POSIX shared memory: an s in /proc/self/maps at ring setup), or /proc/self/maps cannot be read",
        because: "other processes may submit on the ring, and the poller, which belongs to this one, would run their requests in this process's memory and with its files (or, once it is gone, fail them with -EOWNERDEAD)",
        scope: "that ring",
    },
];

/// The setup flags that keep a ring plain ([`Refusal::SetupFlags`]), with
/// their names and why. (SQPOLL and SQ_AFF are no candidates at all: the
/// application chose SQPOLL itself, or the kernel must keep refusing
/// SQ_AFF without it.)
pub const PLAIN_SETUPS: [(u32, &str, &str); 8] = [
    (
        IORING_SETUP_IOPOLL,
        "IOPOLL",
        "the poller reaps polled completions itself: they are not posted when submit returns",
    ),
    (
        IORING_SETUP_SQ_REWIND,
        "SQ_REWIND",
        "restarts the SQ at index 0 on every submit, which only the submitting task can do",
    ),
    (
        IORING_SETUP_SINGLE_ISSUER,
        "SINGLE_ISSUER",
        "the poller, not the application's thread, would be the issuer",
    ),
    (
        IORING_SETUP_DEFER_TASKRUN,
        "DEFER_TASKRUN",
        "completion work runs in the submitting task's waits; the kernel refuses it with SQPOLL",
    ),
    (
        IORING_SETUP_COOP_TASKRUN,
        "COOP_TASKRUN",
        "the kernel refuses it with SQPOLL",
    ),
    (
        IORING_SETUP_TASKRUN_FLAG,
        "TASKRUN_FLAG",
        "the kernel refuses it with SQPOLL",
    ),
    (
        IORING_SETUP_R_DISABLED,
        "R_DISABLED",
        "the ring starts disabled and is enabled by a task of the application's choice",
    ),
    (
        IORING_SETUP_ATTACH_WQ,
        "ATTACH_WQ",
        "the application shares its workers with a ring of its choice",
    ),
];

/// The union of [`PLAIN_SETUPS`].
const PLAIN_SETUP_MASK: u32 = {
    let mut mask = 0;
    let mut i = 0;
    while i < PLAIN_SETUPS.len() {
        mask |= PLAIN_SETUPS[i].0;
        i += 1;
    }
    mask
};

impl Refusal {
    /// The counter index, the place in [`CONDITIONS`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The reason's row of [`CONDITIONS`].
    pub fn condition(self) -> &'static Condition {
        CONDITIONS
            .iter()
            .find(|c| c.why == self)
            .expect("every reason has its condition")
    }

    /// The reason with counter index `i`, if any.
    #[cfg(test)]
    pub fn from_index(i: usize) -> Option<Refusal> {
        CONDITIONS.get(i).map(|c| c.why)
    }

    /// The one-line note printed once per reason.
    fn note(self) -> String {
        let c = self.condition();
        let mut when = c.when.to_string();
        if self == Refusal::SetupFlags {
            let names: Vec<&str> = PLAIN_SETUPS.iter().map(|f| f.1).collect();
            when = format!("the setup has one of {}", names.join(", "));
        }
        let hint = if self == Refusal::NoPollerCpu {
            " (e.g. taskset -c 0 with RSURING_SQPOLL_CPUS=1)"
        } else {
            ""
        };
        // Every scope but fork's names what stays plain.
        let plain = if self == Refusal::Fork {
            ""
        } else {
            " left plain"
        };
        format!(
            "{}{plain} ({}): {}; {}{hint}",
            c.scope, c.name, when, c.because
        )
    }
}

static NOTED: [AtomicBool; REFUSALS] = [const { AtomicBool::new(false) }; REFUSALS];

thread_local! {
    /// What the last ring set up by this thread was told: 0 (nothing
    /// decided), [`VERDICT_ON`], or [`VERDICT_REFUSED`] + reason index.
    static VERDICT: core::cell::Cell<u32> = const { core::cell::Cell::new(0) };
}

/// A verdict word: the ring got transparent SQPOLL.
pub const VERDICT_ON: u32 = 1;
/// A verdict word: refused; the reason's index is added.
pub const VERDICT_REFUSED: u32 = 0x100;

/// Starts a ring setup: no verdict yet.
pub fn clear_verdict() {
    VERDICT.with(|v| v.set(0));
}

/// The verdict of this thread's last ring setup (see [`VERDICT_ON`]).
pub fn verdict() -> u32 {
    VERDICT.with(|v| v.get())
}

/// Records that the ring being set up got transparent SQPOLL.
pub fn engaged() {
    VERDICT.with(|v| v.set(VERDICT_ON));
}

/// Counts a refusal and prints its note the first time (a documented
/// opt-in diagnostic: only processes that set RSURING_SQPOLL=1 see it).
#[cold]
pub fn refuse(why: Refusal) {
    crate::stats::count_refusal(why.index());
    if why != Refusal::Fork {
        VERDICT.with(|v| v.set(VERDICT_REFUSED + why.index() as u32));
    }
    if !NOTED[why.index()].swap(true, Ordering::Relaxed) {
        eprintln!("rsuring: RSURING_SQPOLL=1: {}", why.note());
    }
}

#[cfg(test)]
/// How often each reason refused transparent SQPOLL in this process, in
/// [`CONDITIONS`] order.
pub fn refusal_counts() -> [u32; REFUSALS] {
    crate::stats::refusals()
}

#[cfg(test)]
/// The refusal conditions as a Markdown table (docs/transparent-sqpoll.md
/// holds this between its `refusals` markers; a test checks it).
pub fn conditions_markdown() -> String {
    let mut s = String::from("| reason | a ring stays plain when | why | what stays plain |\n| --- | --- | --- | --- |\n");
    for c in &CONDITIONS {
        s += &format!(
            "| `{}` | {} | {} | {} |\n",
            c.name, c.when, c.because, c.scope
        );
    }
    s += "\n| setup flag (`IORING_SETUP_`) | why it keeps the ring plain |\n| --- | --- |\n";
    for (_, name, why) in &PLAIN_SETUPS {
        s += &format!("| `{name}` | {why} |\n");
    }
    s
}

#[cfg(test)]
/// The same as roff for rsuring(7) (between its `refusals` comments).
pub fn conditions_roff() -> String {
    let esc = |t: &str| t.replace('-', "\\-");
    // Text lines of at most 72 bytes, as mandoc's style check wants.
    let wrap = |t: String| {
        let mut out = String::new();
        let mut line = String::new();
        for word in t.split(' ') {
            if !line.is_empty() && line.len() + 1 + word.len() > 72 {
                out += &line;
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line += word;
        }
        out + &line + "\n"
    };
    let mut s = String::new();
    for c in &CONDITIONS {
        s += &format!(".TP\n.B {}\n", esc(c.name));
        s += &wrap(format!(
            "{} ({}: {}).",
            esc(c.when),
            esc(c.scope),
            esc(c.because)
        ));
    }
    s += ".PP\nSetup flags that keep a ring plain:\n";
    for (_, name, why) in &PLAIN_SETUPS {
        s += &format!(".TP\n.B IORING_SETUP_{}\n", esc(name));
        s += &wrap(format!("{}.", esc(why)));
    }
    s
}

/// Whether the process could change its credentials: then an SQ thread,
/// which keeps its creator's, could run requests with the wrong ones.
fn can_change_credentials() -> bool {
    // SAFETY: getauxval has no preconditions and does not fail for AT_SECURE.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return true;
    }
    let (uid, gid) = sys::resuid_resgid();
    let set_id = uid.iter().any(|&u| u != uid[0]) || gid.iter().any(|&g| g != gid[0]);
    set_id || uid.contains(&0) || sys::holds_capabilities()
}

/// Whether `cpu` is in a sched_getaffinity mask.
fn in_mask(mask: &[u64; 16], cpu: u32) -> bool {
    let word = cpu as usize / 64;
    word < mask.len() && mask[word] >> (cpu % 64) & 1 != 0
}

/// The online CPUs (`/sys/devices/system/cpu/online`, e.g. `0-3,6`).
fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    parse_ranges(text.trim())
}

/// Parses a kernel CPU list (`0-3,6`); malformed parts are skipped.
fn parse_ranges(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        if let Ok((lo, hi)) = crate::env::parse_cpu_range(part) {
            cpus.extend(lo..=hi);
        }
    }
    cpus
}

/// Whether a ring with setup `flags` (the application's, before any
/// policy) may get transparent SQPOLL in this process: Ok with the CPUs its
/// poller may be placed on — those of `poller_cpus` (RSURING_SQPOLL_CPUS),
/// or without it the online CPUs, that the process cannot run on, so that
/// submitting, which waits for the poller, never competes with it for a
/// CPU — or the reason it may not, counted and noted ([`CONDITIONS`]).
/// Rings that asked for SQPOLL themselves, or for SQ_AFF without it (which
/// the kernel must keep refusing), are not candidates: `Err(SetupFlags)`
/// without a note. `places` are the ring's struct and the application's
/// ring memory (address, length): checked last, as the one condition that
/// reads a file per ring.
pub fn eligible(
    flags: u32,
    poller_cpus: Option<&[u32]>,
    places: &[(usize, usize)],
) -> Result<Vec<u32>, Refusal> {
    if flags & (IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF) != 0 {
        return Err(Refusal::SetupFlags);
    }
    let verdict = if flags & PLAIN_SETUP_MASK != 0 {
        Err(Refusal::SetupFlags)
    } else if can_change_credentials() {
        Err(Refusal::Privileged)
    } else {
        let mine = sys::cpu_affinity();
        let candidates = match poller_cpus {
            Some(list) => list.to_vec(),
            None => online_cpus(),
        };
        let spare: Vec<u32> = candidates
            .into_iter()
            .filter(|&cpu| mine.as_ref().is_some_and(|m| !in_mask(m, cpu)))
            .collect();
        if spare.is_empty() {
            Err(Refusal::NoPollerCpu)
        } else if shared_memory::shared(places) != Some(false) {
            Err(Refusal::SharedMemory)
        } else {
            Ok(spare)
        }
    };
    if let Err(why) = verdict {
        refuse(why);
    }
    verdict
}

/// Why the kernel refused the poller of a transparent ring on `cpus` (the
/// CPUs it could have had): [`Refusal::CpuRefused`] when none of them is
/// in the process's cpuset (which the kernel checks for SQ_AFF), otherwise
/// [`Refusal::Kernel`].
pub fn kernel_refusal(cpus: &[u32]) -> Refusal {
    // cgroup v2 names the file cpuset.cpus.effective, v1 (its cpuset
    // hierarchy) cpuset.effective_cpus.
    let allowed = std::fs::read_to_string("/proc/self/cpuset")
        .ok()
        .and_then(|cg| {
            let cg = cg.trim().trim_start_matches('/').to_string();
            [
                format!("/sys/fs/cgroup/{cg}/cpuset.cpus.effective"),
                format!("/sys/fs/cgroup/cpuset/{cg}/cpuset.effective_cpus"),
            ]
            .iter()
            .find_map(|path| std::fs::read_to_string(path).ok())
        })
        .map(|t| parse_ranges(t.trim()));
    match allowed {
        Some(allowed) if !cpus.iter().any(|c| allowed.contains(c)) => Refusal::CpuRefused,
        _ => Refusal::Kernel,
    }
}

/// The share of a CPU (percent of [`BUSY_WINDOW`]) that other tasks may
/// keep busy for the CPU to take a new poller.
const BUSY_PERCENT_MAX: u64 = 25;
/// How long a CPU's load is measured at ring setup.
const BUSY_WINDOW: std::time::Duration = std::time::Duration::from_millis(50);
/// How long one measurement serves the setups that follow it.
const BUSY_VERDICT_LIFE: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether the step-aside rule ([`Refusal::PollerBusy`]) is on:
/// RSURING_SQPOLL_STEP_ASIDE, read once (unset: on).
fn step_aside_on() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        crate::env::parsed(crate::env::SQPOLL_STEP_ASIDE, |v| {
            crate::env::parse_bool(v)
                .ok_or_else(|| "expected 1/true/yes/on or 0/false/no/off".to_string())
        })
        .unwrap_or(true)
    })
}

/// Set once this process's transparent rings measured slow hand-overs:
/// later rings stay plain ([`Refusal::PollerBusy`]).
static STEPPED_BACK: AtomicBool = AtomicBool::new(false);
/// Whether submits time their hand-overs (the rule is on and has not
/// stepped back yet): one relaxed load on the submit path.
static WATCH: AtomicBool = AtomicBool::new(false);
/// The mean wait per hand-over (ns) above which a process steps back; 0
/// until calibrated at the first transparent ring ([`calibrate`]).
static HANDOVER_LIMIT_NS: AtomicU64 = AtomicU64::new(0);
/// A hand-over window is judged once it spans this long...
const WINDOW_NS: u64 = 200_000_000;
/// ... and holds at least this many hand-overs, or hand-overs that waited
/// half the window in all (a ring so slow that it makes few submits).
const WINDOW_HANDOVERS: u32 = 64;
/// The limit in bare system calls, and its floor.
const LIMIT_SYSCALLS: u64 = 16;
const LIMIT_FLOOR_NS: u64 = 4_000;

/// A CPU's time from `/proc/stat`, in clock ticks: idle (idle + iowait)
/// and the total of the states a CPU is in (guest time is part of user).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CpuTime {
    cpu: u32,
    idle: u64,
    total: u64,
}

/// The per-CPU lines of a `/proc/stat` text.
fn parse_cpu_times(text: &str) -> Vec<CpuTime> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_ascii_whitespace();
            let cpu = words.next()?.strip_prefix("cpu")?.parse().ok()?;
            let ticks: Vec<u64> = words.take(8).map_while(|w| w.parse().ok()).collect();
            if ticks.len() < 5 {
                return None;
            }
            Some(CpuTime {
                cpu,
                idle: ticks[3] + ticks[4],
                total: ticks.iter().sum(),
            })
        })
        .collect()
}

fn cpu_times() -> Vec<CpuTime> {
    parse_cpu_times(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
}

/// How busy (percent) `cpu` was between two samples; None when a sample
/// lacks it or no tick passed.
fn busy_percent(before: &[CpuTime], after: &[CpuTime], cpu: u32) -> Option<u64> {
    let a = before.iter().find(|t| t.cpu == cpu)?;
    let b = after.iter().find(|t| t.cpu == cpu)?;
    let total = b.total.checked_sub(a.total).filter(|&t| t > 0)?;
    let idle = b.idle.saturating_sub(a.idle).min(total);
    Some((total - idle) * 100 / total)
}

/// The last load measurement: when, and each measured CPU's busy percent.
struct LoadVerdict {
    at: std::time::Instant,
    busy: Vec<(u32, Option<u64>)>,
}

static LOAD: std::sync::Mutex<Option<LoadVerdict>> = std::sync::Mutex::new(None);

/// How busy each of `cpus` is (percent; None: not measurable), measured
/// over [`BUSY_WINDOW`] or taken from a measurement younger than
/// [`BUSY_VERDICT_LIFE`]. (A forked child whose parent held the lock
/// measures without the cache.)
fn cpu_load(cpus: &[u32]) -> Vec<(u32, Option<u64>)> {
    let mut cache = match LOAD.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    if let Some(Some(v)) = cache.as_deref() {
        if v.at.elapsed() < BUSY_VERDICT_LIFE
            && cpus.iter().all(|c| v.busy.iter().any(|b| b.0 == *c))
        {
            return v.busy.clone();
        }
    }
    let before = cpu_times();
    std::thread::sleep(BUSY_WINDOW);
    let after = cpu_times();
    let busy: Vec<(u32, Option<u64>)> = cpus
        .iter()
        .map(|&c| (c, busy_percent(&before, &after, c)))
        .collect();
    if let Some(cache) = cache.as_deref_mut() {
        *cache = Some(LoadVerdict {
            at: std::time::Instant::now(),
            busy: busy.clone(),
        });
    }
    busy
}

/// The cost of a bare system call (ns, the fastest of 16 getppid).
fn bare_syscall_ns() -> u64 {
    (0..16)
        .map(|_| {
            let t = std::time::Instant::now();
            // SAFETY: getppid has no arguments and cannot fail.
            unsafe { libc::syscall(libc::SYS_getppid) };
            t.elapsed().as_nanos() as u64
        })
        .min()
        .unwrap_or(0)
}

/// Sets the hand-over limit at the process's first transparent ring.
fn calibrate() {
    if HANDOVER_LIMIT_NS.load(Ordering::Relaxed) == 0 {
        let limit = (LIMIT_SYSCALLS * bare_syscall_ns()).max(LIMIT_FLOOR_NS);
        HANDOVER_LIMIT_NS.store(limit, Ordering::Relaxed);
    }
}

/// The step-aside rule for a ring that [`eligible`] let through, with the
/// CPUs its poller may be placed on: Ok with the CPUs that qualify, or
/// [`Refusal::PollerBusy`], counted and noted. A CPU qualifies when a
/// poller of this process already runs there (`ours`: its SQ thread keeps
/// the CPU busy, and its hand-overs are watched instead), or when other
/// tasks kept it busy for at most [`BUSY_PERCENT_MAX`] of [`BUSY_WINDOW`]
/// (a CPU that cannot be measured qualifies). Once this process's
/// hand-overs measured slow, no ring qualifies.
pub fn qualify(cpus: Vec<u32>, ours: impl Fn(u32) -> bool) -> Result<Vec<u32>, Refusal> {
    if !step_aside_on() {
        return Ok(cpus);
    }
    let verdict = if STEPPED_BACK.load(Ordering::Relaxed) {
        Err(Refusal::PollerBusy)
    } else {
        let unknown: Vec<u32> = cpus.iter().copied().filter(|&c| !ours(c)).collect();
        let load = if unknown.is_empty() {
            Vec::new()
        } else {
            cpu_load(&unknown)
        };
        let kept: Vec<u32> = cpus
            .into_iter()
            .filter(|c| {
                // Unmeasured (ours) or not measurable: qualifies.
                let busy = load.iter().find(|l| l.0 == *c).and_then(|l| l.1);
                busy.map_or(true, |busy| busy <= BUSY_PERCENT_MAX)
            })
            .collect();
        if kept.is_empty() {
            Err(Refusal::PollerBusy)
        } else {
            calibrate();
            WATCH.store(true, Ordering::Relaxed);
            Ok(kept)
        }
    };
    if let Err(why) = verdict {
        refuse(why);
    }
    verdict
}

/// Whether a window of `handovers` hand-overs that waited `waited_ns` in
/// all can be judged ([`WINDOW_HANDOVERS`]).
fn window_full(handovers: u32, waited_ns: u64) -> bool {
    handovers >= WINDOW_HANDOVERS || waited_ns >= WINDOW_NS / 2
}

/// Whether a window of `handovers` hand-overs that waited `waited_ns` in
/// all measured a loss against `limit_ns` per hand-over.
fn window_lost(handovers: u32, waited_ns: u64, limit_ns: u64) -> bool {
    window_full(handovers, waited_ns) && waited_ns > handovers as u64 * limit_ns
}

/// The coarse monotonic clock (ns): a read of the vDSO's cached time, with
/// the resolution of a scheduler tick. Over many hand-overs the sum of
/// their coarse durations is the sum of their real ones (a hand-over
/// crosses a tick with the probability of its length); the waits that
/// make the mode lose are the long ones anyway.
#[inline]
fn coarse_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out pointer; CLOCK_MONOTONIC_COARSE exists
    // on every kernel rsuring supports (2.6.32+), so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Adds one hand-over (from `t0` to `t1`, coarse ns) to its ring's window
/// and judges the window once it is long enough: a loss makes the process
/// step back. Relaxed loads and stores of the ring's own mark (one
/// submitter at a time, as for every ring's SQ); no lock, no allocation.
#[inline]
fn watch_handover(m: &Mark, t0: u64, t1: u64) {
    let start = m.window_at.load(Ordering::Relaxed);
    if start == 0 {
        m.window_at.store(t0.max(1), Ordering::Relaxed);
    }
    let n = m.handovers.load(Ordering::Relaxed) + 1;
    let waited = m.waited_ns.load(Ordering::Relaxed) + t1.saturating_sub(t0);
    if start != 0 && t1.saturating_sub(start) >= WINDOW_NS && window_full(n, waited) {
        if window_lost(n, waited, HANDOVER_LIMIT_NS.load(Ordering::Relaxed)) {
            STEPPED_BACK.store(true, Ordering::Relaxed);
            WATCH.store(false, Ordering::Relaxed);
        }
        m.window_at.store(t1.max(1), Ordering::Relaxed);
        m.handovers.store(0, Ordering::Relaxed);
        m.waited_ns.store(0, Ordering::Relaxed);
    } else {
        m.handovers.store(n, Ordering::Relaxed);
        m.waited_ns.store(waited, Ordering::Relaxed);
    }
}

/// What an enter on a transparent ring needs of it: the SQ ring words and
/// the process generation that created it.
///
/// A view is taken of a [`LiveRing`] and kept in the fd table until the
/// ring's exit or fd close removes it ([`untrack`], which `crate::lifecycle`
/// calls before the mapping goes): while a view exists, its ring is mapped.
#[derive(Debug, Clone, Copy)]
pub struct SqView {
    words: SqWords,
    fork_gen: u16,
}

impl SqView {
    /// The view of a live transparent ring.
    pub fn of(ring: &LiveRing) -> Self {
        SqView {
            words: ring.sq_words(),
            fork_gen: ring.fork_gen,
        }
    }

    fn head(&self) -> u32 {
        // SAFETY: the ring is mapped while its view exists (type invariant).
        unsafe { self.words.head() }
    }

    fn tail(&self) -> u32 {
        // SAFETY: as for `head`.
        unsafe { self.words.tail() }
    }

    fn needs_wakeup(&self) -> bool {
        // SAFETY: as for `head`.
        let flags = unsafe { self.words.flags() };
        flags & IORING_SQ_NEED_WAKEUP != 0
    }

    /// Whether the calling process is not the one that created the ring.
    #[inline]
    pub fn in_other_process(&self) -> bool {
        self.fork_gen != fork_generation()
    }
}

/// Spins before yielding the CPU while the poller picks SQEs up.
const SPINS_BEFORE_YIELD: u32 = 256;
/// Yields between re-checks of a poller that may have gone back to sleep.
const YIELDS_BEFORE_REWAKE: u32 = 4096;

/// The system calls one [`enter`] made, for the statistics: a transparent
/// ring's submit is a hand-over to the poller, not an io_uring_enter.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Made {
    /// io_uring_enter calls with IORING_ENTER_SQ_WAKEUP.
    pub wakeups: u32,
    /// Whether the call ended with an io_uring_enter that waits for or
    /// flushes completions (GETEVENTS).
    pub waited: bool,
}

/// Hands the `n` SQEs after SQ position `head` to the poller and waits
/// until it has consumed them. Wakes it at most once, unless it is found asleep again
/// after a long wait. Returns 0, or the `-errno` of a failed wake-up.
fn hand_over(view: &SqView, target: EnterTarget, head: u32, n: u32, made: &mut Made) -> c_int {
    // The tail store must be visible to the poller before we look at
    // whether it sleeps, or both sides could miss the other.
    fence(Ordering::SeqCst);
    let mut woke = false;
    let mut waited = 0u32;
    loop {
        if view.head().wrapping_sub(head) >= n {
            return 0;
        }
        if !woke && view.needs_wakeup() {
            woke = true;
            made.wakeups += 1;
            // SAFETY: no argument is passed.
            let ret = unsafe {
                sys::io_uring_enter2(
                    target.fd,
                    0,
                    0,
                    IORING_ENTER_SQ_WAKEUP | target.flags,
                    ptr::null(),
                    NSIG_BYTES,
                )
            };
            if ret < 0 {
                return ret;
            }
            continue;
        }
        waited += 1;
        if waited < SPINS_BEFORE_YIELD {
            core::hint::spin_loop();
        } else {
            sys::sched_yield();
            if waited % YIELDS_BEFORE_REWAKE == 0 {
                woke = false;
            }
        }
    }
}

/// io_uring_enter on a transparent ring, with a plain ring's result; the
/// system calls it made are added to `made`.
///
/// `from` is where the SQEs that earlier calls submitted end: the ones
/// after it, up to the published tail, are this call's to submit (the
/// poller may have taken some already; a plain ring's kernel would take
/// them now, so they count now).
///
/// # Safety
/// `arg`/`sz` must be valid for `flags`, as for io_uring_enter(2).
#[allow(clippy::too_many_arguments)]
pub unsafe fn enter(
    view: &SqView,
    target: EnterTarget,
    from: u32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const c_void,
    sz: usize,
    made: &mut Made,
) -> c_int {
    if view.in_other_process() {
        refuse(Refusal::Fork);
        return -libc::EOWNERDEAD;
    }
    let queued = view.tail().wrapping_sub(from);
    let submitted = to_submit.min(queued);
    if submitted != 0 {
        let watch = WATCH.load(Ordering::Relaxed);
        let t0 = if watch { coarse_now_ns() } else { 0 };
        let ret = hand_over(view, target, from, submitted, made);
        if ret < 0 {
            return ret;
        }
        let took = watch.then(|| (t0, coarse_now_ns()));
        record_submitted(view.words, from.wrapping_add(submitted), took);
    }
    // A plain ring does not wait after a short submission.
    if flags & IORING_ENTER_GETEVENTS == 0 || submitted != to_submit {
        return submitted as c_int;
    }
    let flags = (flags & !(IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT)) | target.flags;
    made.waited = true;
    // SAFETY: forwarded contract.
    let ret = unsafe { sys::io_uring_enter2(target.fd, 0, min_complete, flags, arg, sz) };
    if submitted != 0 {
        submitted as c_int
    } else {
        ret
    }
}

/// Where the SQEs submitted on each live transparent ring end, for mixing
/// library submits with the exported io_uring_enter: an open-addressed
/// table keyed by the ring's SQ head address, read and written without a
/// lock on the submit path. Keys are claimed and given up only under
/// [`FD_TABLE`]'s lock (ring setup and exit), so the submit path only
/// finds its own ring's entry and stores into it.
struct Mark {
    /// [`EMPTY`], [`GONE`] or the ring's key.
    key: AtomicUsize,
    /// Where the SQEs submitted so far end.
    to: AtomicU32,
    /// The step-aside rule's window of hand-overs ([`watch_handover`]):
    /// its start (coarse ns, 0: none yet), its hand-overs and their wait.
    handovers: AtomicU32,
    window_at: AtomicU64,
    waited_ns: AtomicU64,
}

/// Entries of [`MARKS`] (a power of two); at most half are used, so a
/// lookup finds its key in a probe or two.
const MARK_SLOTS: usize = 4096;
/// A slot never used: lookups stop here.
const EMPTY: usize = 0;
/// A slot whose ring is gone: lookups go on past it, claims reuse it.
const GONE: usize = 1;

static MARKS: [Mark; MARK_SLOTS] = [const {
    Mark {
        key: AtomicUsize::new(EMPTY),
        to: AtomicU32::new(0),
        handovers: AtomicU32::new(0),
        window_at: AtomicU64::new(0),
        waited_ns: AtomicU64::new(0),
    }
}; MARK_SLOTS];

/// The first slot to probe for `key` (an aligned address: drop the low bits).
fn mark_start(key: usize) -> usize {
    (key >> 6).wrapping_mul(0x9E37_79B9) % MARK_SLOTS
}

/// The mark of the live ring `key`, without a lock.
fn find_mark(key: usize) -> Option<&'static Mark> {
    let start = mark_start(key);
    for i in 0..MARK_SLOTS {
        let m = &MARKS[(start + i) % MARK_SLOTS];
        match m.key.load(Ordering::Acquire) {
            k if k == key => return Some(m),
            EMPTY => return None,
            _ => {}
        }
    }
    None
}

/// Claims a mark for `key` (under FD_TABLE's lock). None when half the
/// table is used: that ring is then left without one (see [`track`]).
fn claim_mark(key: usize, to: u32, used: usize) -> Option<&'static Mark> {
    if used >= MARK_SLOTS / 2 {
        return None;
    }
    let start = mark_start(key);
    for i in 0..MARK_SLOTS {
        let m = &MARKS[(start + i) % MARK_SLOTS];
        let k = m.key.load(Ordering::Relaxed);
        if k == EMPTY || k == GONE {
            m.to.store(to, Ordering::Relaxed);
            m.handovers.store(0, Ordering::Relaxed);
            m.window_at.store(0, Ordering::Relaxed);
            m.waited_ns.store(0, Ordering::Relaxed);
            m.key.store(key, Ordering::Release);
            return Some(m);
        }
    }
    None
}

/// Live transparent rings by fd, for the exported io_uring_enter. An entry
/// is known by its mapping (`view.words`), unique while the ring lives.
struct FdEntry {
    fd: c_int,
    view: SqView,
    /// Where the SQEs submitted (through the library or the exported
    /// io_uring_enter) end.
    mark: &'static Mark,
}

/// The table survives fork: a child must still recognise its parent's
/// transparent rings in order to refuse them.
static FD_TABLE: ForkSafeLock<Vec<FdEntry>> = ForkSafeLock::new(Vec::new());
/// Entries in [`FD_TABLE`] (read without the lock).
static FD_TABLE_LEN: AtomicUsize = AtomicUsize::new(0);

static FORK_HANDLERS: fork::Handlers = fork::Handlers {
    prepare: Some(|| FD_TABLE.lock_for_fork()),
    // SAFETY: the prepare handler took the lock in this thread.
    parent: Some(|| unsafe { FD_TABLE.unlock_after_fork(None) }),
    // SAFETY: as for `parent`, in the child's copy of this thread.
    child: Some(|| unsafe { FD_TABLE.unlock_after_fork(None) }),
};

/// Installs the fork handlers (see `crate::fork`); done by the first
/// [`track`], before which the table is never locked.
pub fn install_fork_handlers() {
    fork::install(fork::Part::TransparentRings, &FORK_HANDLERS);
}

/// Records a new transparent ring for [`enter_by_fd`]. A ring beyond the
/// 2048 live transparent rings the marks hold is not recorded: the
/// exported io_uring_enter then reaches the kernel on it unchanged (the
/// kernel's SQPOLL behaviour, as for a registered ring index).
pub fn track(ring: &LiveRing) {
    install_fork_handlers();
    if ring.ring_fd < 0 {
        return;
    }
    let mut table = FD_TABLE.lock();
    let key = ring.sq_words().key();
    let Some(mark) = claim_mark(key, ring.sq.sqe_head, table.len()) else {
        return;
    };
    table.push(FdEntry {
        fd: ring.ring_fd,
        view: SqView::of(ring),
        mark,
    });
    FD_TABLE_LEN.store(table.len(), Ordering::Release);
}

/// Records where the SQEs submitted on the ring with SQ words `words` now
/// end, so that an exported io_uring_enter after a library submit (or the
/// other way round) counts each SQE once, and adds the hand-over's times
/// (`took`, when watched) to the ring's window. No lock: a probe of
/// [`MARKS`].
#[inline]
fn record_submitted(words: SqWords, to: u32, took: Option<(u64, u64)>) {
    if FD_TABLE_LEN.load(Ordering::Relaxed) == 0 {
        return;
    }
    if let Some(m) = find_mark(words.key()) {
        m.to.store(to, Ordering::Release);
        if let Some((t0, t1)) = took {
            watch_handover(m, t0, t1);
        }
    }
}

/// Forgets a transparent ring (at exit, before its memory is unmapped, or
/// when its fd is closed).
pub fn untrack(ring: &io_uring) {
    if FD_TABLE_LEN.load(Ordering::Acquire) == 0 {
        return;
    }
    let mut table = FD_TABLE.lock();
    table.retain(|e| {
        let keep = !e.view.words.of_ring(ring);
        if !keep {
            e.mark.key.store(GONE, Ordering::Release);
        }
        keep
    });
    FD_TABLE_LEN.store(table.len(), Ordering::Release);
}

/// The exported io_uring_enter: a transparent ring's fd gets plain-ring
/// behaviour; everything else goes to the kernel unchanged.
///
/// The fd number alone could have been closed and reused by the
/// application, so the emulation only applies when the recorded ring has
/// SQEs published since the last call; otherwise the kernel sees the call
/// as made (for a transparent ring with nothing queued that is the same).
/// Each enter on a transparent ring (this one or the library's) records
/// where its SQEs end, so mixing the two counts every SQE once.
///
/// # Safety
/// `arg`/`sz` must be valid for `flags`, as for io_uring_enter(2).
pub unsafe fn enter_by_fd(
    fd: u32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const c_void,
    sz: usize,
) -> c_int {
    let found =
        if FD_TABLE_LEN.load(Ordering::Acquire) == 0 || flags & IORING_ENTER_REGISTERED_RING != 0 {
            None
        } else {
            let table = FD_TABLE.lock();
            table
                .iter()
                .find(|e| e.fd as u32 == fd)
                .map(|e| (e.view, e.mark.to.load(Ordering::Acquire)))
        };
    if let Some((view, from)) = found {
        let queued = view.tail().wrapping_sub(from);
        if view.in_other_process() || (to_submit != 0 && queued != 0) {
            let mut made = Made::default();
            // SAFETY: forwarded contract.
            let ret = unsafe {
                enter(
                    &view,
                    EnterTarget { fd, flags: 0 },
                    from,
                    to_submit,
                    min_complete,
                    flags,
                    arg,
                    sz,
                    &mut made,
                )
            };
            return ret;
        }
    }
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_enter2(fd, to_submit, min_complete, flags, arg, sz) }
}

#[cfg(test)]
mod tests {
    //! The CPU mask helper and the refusal bookkeeping, without a ring.

    use super::*;
    use std::sync::Mutex;

    /// The refusal counters are process-wide: the tests that read them
    /// take turns.
    static COUNTERS: Mutex<()> = Mutex::new(());

    #[test]
    fn in_mask_reads_the_bit_of_each_cpu() {
        let mut mask = [0u64; 16];
        mask[0] = 0b101;
        mask[1] = 1;
        mask[15] = 1 << 63;
        for cpu in [0, 2, 64, 1023] {
            assert!(in_mask(&mask, cpu), "cpu {cpu}");
        }
        for cpu in [1, 3, 63, 65, 1022] {
            assert!(!in_mask(&mask, cpu), "cpu {cpu}");
        }
        // Past the 1024 CPUs the mask holds: not in it (no panic).
        assert!(!in_mask(&[u64::MAX; 16], 1024));
        assert!(!in_mask(&[u64::MAX; 16], u32::MAX));
    }

    #[test]
    fn refusals_have_distinct_names_and_notes_in_counter_order() {
        for (i, c) in CONDITIONS.iter().enumerate() {
            assert_eq!(c.why.index(), i, "{:?}", c.why);
            assert_eq!(Refusal::from_index(i), Some(c.why));
            for other in &CONDITIONS[i + 1..] {
                assert_ne!(c.name, other.name);
                assert_ne!(c.why.note(), other.why.note());
            }
        }
        assert_eq!(Refusal::from_index(REFUSALS), None);
    }

    /// The statistics page and format name the counters with this list.
    #[test]
    fn statistics_name_the_refusals_of_the_one_list() {
        let names: Vec<&str> = CONDITIONS.iter().map(|c| c.name).collect();
        assert_eq!(names, crate::stats::slot::REFUSAL_NAMES);
        for (i, c) in CONDITIONS.iter().enumerate() {
            let word = crate::stats::format::transparent_word(VERDICT_REFUSED + i as u32);
            assert_eq!(word.unwrap(), format!("refused:{}", c.name));
        }
        let word = crate::stats::format::transparent_word;
        assert_eq!(word(VERDICT_ON).as_deref(), Some("on"));
        assert_eq!(word(0), None);
    }

    /// The setup-flags note names every flag of the list.
    #[test]
    fn the_setup_flags_note_names_every_flag() {
        let note = Refusal::SetupFlags.note();
        for (_, name, _) in &PLAIN_SETUPS {
            assert!(note.contains(name), "{name} missing from {note:?}");
        }
    }

    /// What lies between `begin` and `end` in the repository file `path`.
    fn generated_block(path: &str, begin: &str, end: &str) -> String {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{path}: {e}"));
        let from = text
            .find(begin)
            .unwrap_or_else(|| panic!("{path} lacks the line {begin:?}"));
        let body = &text[from + begin.len()..];
        let to = body
            .find(end)
            .unwrap_or_else(|| panic!("{path} lacks the line {end:?}"));
        body[..to].trim_start_matches('\n').to_string()
    }

    const DOCS: (&str, &str, &str) = (
        "docs/transparent-sqpoll.md",
        "<!-- refusals: generated from src/transparent.rs CONDITIONS; checked by its tests -->",
        "<!-- refusals: end -->",
    );
    const MAN: (&str, &str, &str) = (
        "docs/man/man7/rsuring.7",
        ".\\\" refusals: generated from src/transparent.rs CONDITIONS; checked by its tests",
        ".\\\" refusals: end",
    );

    /// Rewrites the generated blocks of the docs and the man page:
    /// `cargo test --lib -- --ignored regenerate_refusal_docs`.
    #[test]
    #[ignore]
    fn regenerate_refusal_docs() {
        for ((path, begin, end), body) in [(DOCS, conditions_markdown()), (MAN, conditions_roff())]
        {
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
            let text = std::fs::read_to_string(&file).unwrap();
            let a = text.find(begin).expect("begin marker") + begin.len();
            let b = a + text[a..].find(end).expect("end marker");
            let new = format!("{}\n{body}{}", &text[..a], &text[b..]);
            std::fs::write(&file, new).unwrap();
        }
    }

    /// docs/transparent-sqpoll.md holds the refusal conditions as this
    /// module generates them; on a mismatch the message gives the text.
    #[test]
    fn the_docs_state_the_refusal_conditions_of_the_code() {
        let want = conditions_markdown();
        let have = generated_block(DOCS.0, DOCS.1, DOCS.2);
        assert!(
            have == want,
            "docs/transparent-sqpoll.md disagrees with src/transparent.rs (regenerate: cargo test --lib -- --ignored regenerate_refusal_docs):\n{want}"
        );
    }

    /// rsuring(7)'s RSURING_SQPOLL section likewise.
    #[test]
    fn the_man_page_states_the_refusal_conditions_of_the_code() {
        let want = conditions_roff();
        let have = generated_block(MAN.0, MAN.1, MAN.2);
        assert!(
            have == want,
            "docs/man/man7/rsuring.7 disagrees with src/transparent.rs (regenerate: cargo test --lib -- --ignored regenerate_refusal_docs):\n{want}"
        );
    }

    #[test]
    fn proc_stat_gives_each_cpus_idle_and_total_ticks() {
        let text = "cpu  10 0 10 100 5 0 0 0 0 0\n\
                    cpu0 1 2 3 40 5 6 7 8 9 10\n\
                    cpu1 5 0 5 50 0\n\
                    cpu2 x\n\
                    intr 1 2\n";
        let want = [
            CpuTime {
                cpu: 0,
                idle: 45,
                total: 72,
            },
            CpuTime {
                cpu: 1,
                idle: 50,
                total: 60,
            },
        ];
        assert_eq!(parse_cpu_times(text), want);
        assert!(cpu_times().iter().any(|t| t.cpu == 0), "this machine's");
    }

    #[test]
    fn busy_share_is_the_non_idle_part_of_the_ticks_between_samples() {
        let at = |idle, total| {
            [CpuTime {
                cpu: 1,
                idle,
                total,
            }]
        };
        assert_eq!(busy_percent(&at(50, 60), &at(80, 100), 1), Some(25));
        assert_eq!(busy_percent(&at(50, 60), &at(50, 70), 1), Some(100));
        assert_eq!(busy_percent(&at(50, 60), &at(60, 70), 1), Some(0));
        // No tick passed, or the CPU is missing: not measurable.
        assert_eq!(busy_percent(&at(50, 60), &at(50, 60), 1), None);
        assert_eq!(busy_percent(&at(50, 60), &at(80, 100), 2), None);
        // Counters that went backwards (a CPU back from offline) do not panic.
        assert_eq!(busy_percent(&at(50, 60), &at(10, 20), 1), None);
    }

    #[test]
    fn a_window_loses_when_its_mean_wait_exceeds_the_limit() {
        assert!(!window_lost(WINDOW_HANDOVERS - 1, 1_000_000, 1), "too few");
        // Few hand-overs that waited half the window: judged.
        assert!(window_lost(3, WINDOW_NS / 2, 4000));
        assert!(!window_lost(3, WINDOW_NS / 2 - 1, 4000));
        let n = WINDOW_HANDOVERS;
        assert!(!window_lost(n, n as u64 * 4000, 4000));
        assert!(window_lost(n, n as u64 * 4000 + 1, 4000));
    }

    /// A ring's window: fast hand-overs never step back, however many; one
    /// window of slow ones over 200 ms does, and stops the watching.
    #[test]
    fn slow_hand_overs_over_a_window_step_back() {
        let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        let limit = HANDOVER_LIMIT_NS.swap(4_000, Ordering::Relaxed);
        let mark = Mark {
            key: AtomicUsize::new(EMPTY),
            to: AtomicU32::new(0),
            handovers: AtomicU32::new(0),
            window_at: AtomicU64::new(0),
            waited_ns: AtomicU64::new(0),
        };
        // 10,000 hand-overs of 1 us each, 25 us apart: 250 ms.
        let mut t = 1_000_000_000u64;
        for _ in 0..10_000 {
            watch_handover(&mark, t, t + 1_000);
            t += 25_000;
        }
        assert!(!STEPPED_BACK.load(Ordering::Relaxed));
        // 100 hand-overs that each waited 3 ms for the poller.
        WATCH.store(true, Ordering::Relaxed);
        for _ in 0..100 {
            watch_handover(&mark, t, t + 3_000_000);
            t += 3_100_000;
        }
        assert!(STEPPED_BACK.swap(false, Ordering::Relaxed));
        assert!(!WATCH.swap(false, Ordering::Relaxed));
        HANDOVER_LIMIT_NS.store(limit, Ordering::Relaxed);
    }

    #[test]
    fn kernel_cpu_lists_parse() {
        assert_eq!(parse_ranges("0-3,6"), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_ranges("1"), vec![1]);
        assert_eq!(parse_ranges(""), Vec::<u32>::new());
        assert_eq!(parse_ranges("x,2"), vec![2]);
        assert!(online_cpus().contains(&0));
    }

    #[test]
    fn rings_that_chose_sqpoll_or_sq_aff_are_no_candidates_and_not_noted() {
        let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        let before = refusal_counts();
        for flags in [IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF] {
            assert_eq!(eligible(flags, Some(&[1]), &[]), Err(Refusal::SetupFlags));
        }
        assert_eq!(refusal_counts(), before, "nothing counted");
    }

    #[test]
    fn setups_with_their_own_semantics_are_refused_and_counted() {
        let _turn = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        for flags in [
            IORING_SETUP_IOPOLL,
            IORING_SETUP_SQ_REWIND,
            IORING_SETUP_ATTACH_WQ,
            IORING_SETUP_COOP_TASKRUN,
            IORING_SETUP_TASKRUN_FLAG,
            IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
            IORING_SETUP_SINGLE_ISSUER,
            IORING_SETUP_R_DISABLED,
        ] {
            let count = |counts: [u32; REFUSALS]| counts[Refusal::SetupFlags.index()];
            let before = count(refusal_counts());
            assert_eq!(
                eligible(flags, Some(&[1]), &[]),
                Err(Refusal::SetupFlags),
                "{flags:#x}"
            );
            assert!(count(refusal_counts()) > before, "{flags:#x} counted");
        }
    }
}
