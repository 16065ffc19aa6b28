//! The step-aside rule: a poller's CPU measured busy at setup refuses the
//! ring ([`qualify`]), and hand-overs that cost more than the system calls
//! they save make the process step back.

use super::*;

/// The share of a CPU (percent of [`BUSY_WINDOW`]) that other tasks may
/// keep busy for the CPU to take a new poller.
pub(super) const BUSY_PERCENT_MAX: u64 = 25;
/// How long a CPU's load is measured at ring setup.
pub(super) const BUSY_WINDOW: std::time::Duration = std::time::Duration::from_millis(50);
/// How long one measurement serves the setups that follow it.
pub(super) const BUSY_VERDICT_LIFE: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether the step-aside rule ([`Refusal::PollerBusy`]) is on:
/// RSURING_SQPOLL_STEP_ASIDE, read once (unset: on).
pub(super) fn step_aside_on() -> bool {
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
pub(super) static STEPPED_BACK: AtomicBool = AtomicBool::new(false);
/// Whether submits time their hand-overs (the rule is on and has not
/// stepped back yet): one relaxed load on the submit path.
pub(super) static WATCH: AtomicBool = AtomicBool::new(false);
/// The mean wait per hand-over (ns) above which a process steps back; 0
/// until calibrated at the first transparent ring ([`calibrate`]).
pub(super) static HANDOVER_LIMIT_NS: AtomicU64 = AtomicU64::new(0);
/// A hand-over window is judged once it spans this long...
pub(super) const WINDOW_NS: u64 = 200_000_000;
/// ... and holds at least this many hand-overs, or hand-overs that waited
/// half the window in all (a ring so slow that it makes few submits).
pub(super) const WINDOW_HANDOVERS: u32 = 64;
/// The limit in bare system calls, and its floor.
pub(super) const LIMIT_SYSCALLS: u64 = 16;
pub(super) const LIMIT_FLOOR_NS: u64 = 4_000;

/// A CPU's time from `/proc/stat`, in clock ticks: idle (idle + iowait)
/// and the total of the states a CPU is in (guest time is part of user).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CpuTime {
    pub(super) cpu: u32,
    pub(super) idle: u64,
    pub(super) total: u64,
}

/// The per-CPU lines of a `/proc/stat` text.
pub(super) fn parse_cpu_times(text: &str) -> Vec<CpuTime> {
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

pub(super) fn cpu_times() -> Vec<CpuTime> {
    parse_cpu_times(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
}

/// How busy (percent) `cpu` was between two samples; None when a sample
/// lacks it or no tick passed.
pub(super) fn busy_percent(before: &[CpuTime], after: &[CpuTime], cpu: u32) -> Option<u64> {
    let a = before.iter().find(|t| t.cpu == cpu)?;
    let b = after.iter().find(|t| t.cpu == cpu)?;
    let total = b.total.checked_sub(a.total).filter(|&t| t > 0)?;
    let idle = b.idle.saturating_sub(a.idle).min(total);
    Some((total - idle) * 100 / total)
}

/// The last load measurement: when, and each measured CPU's busy percent.
pub(super) struct LoadVerdict {
    pub(super) at: std::time::Instant,
    pub(super) busy: Vec<(u32, Option<u64>)>,
}

pub(super) static LOAD: std::sync::Mutex<Option<LoadVerdict>> = std::sync::Mutex::new(None);

/// How busy each of `cpus` is (percent; None: not measurable), measured
/// over [`BUSY_WINDOW`] or taken from a measurement younger than
/// [`BUSY_VERDICT_LIFE`]. (A forked child whose parent held the lock
/// measures without the cache.)
pub(super) fn cpu_load(cpus: &[u32]) -> Vec<(u32, Option<u64>)> {
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
pub(super) fn bare_syscall_ns() -> u64 {
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
pub(super) fn calibrate() {
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
pub(super) fn window_full(handovers: u32, waited_ns: u64) -> bool {
    handovers >= WINDOW_HANDOVERS || waited_ns >= WINDOW_NS / 2
}

/// Whether a window of `handovers` hand-overs that waited `waited_ns` in
/// all measured a loss against `limit_ns` per hand-over.
pub(super) fn window_lost(handovers: u32, waited_ns: u64, limit_ns: u64) -> bool {
    window_full(handovers, waited_ns) && waited_ns > handovers as u64 * limit_ns
}

/// The coarse monotonic clock (ns): a read of the vDSO's cached time, with
/// the resolution of a scheduler tick. Over many hand-overs the sum of
/// their coarse durations is the sum of their real ones (a hand-over
/// crosses a tick with the probability of its length); the waits that
/// make the mode lose are the long ones anyway.
#[inline]
pub(super) fn coarse_now_ns() -> u64 {
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
pub(super) fn watch_handover(m: &Mark, t0: u64, t1: u64) {
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
