//! Who gets transparent SQPOLL: the credentials, CPU and setup-flag
//! conditions checked at ring setup ([`eligible`]), and the reading of a
//! kernel refusal.

use super::*;

/// Whether the process could change its credentials: then an SQ thread,
/// which keeps its creator's, could run requests with the wrong ones.
pub(super) fn can_change_credentials() -> bool {
    // SAFETY: getauxval has no preconditions and does not fail for AT_SECURE.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return true;
    }
    let (uid, gid) = sys::resuid_resgid();
    let set_id = uid.iter().any(|&u| u != uid[0]) || gid.iter().any(|&g| g != gid[0]);
    set_id || uid.contains(&0) || sys::holds_capabilities()
}

/// Whether `cpu` is in a sched_getaffinity mask.
pub(super) fn in_mask(mask: &[u64; 16], cpu: u32) -> bool {
    let word = cpu as usize / 64;
    word < mask.len() && mask[word] >> (cpu % 64) & 1 != 0
}

/// The online CPUs (`/sys/devices/system/cpu/online`, e.g. `0-3,6`).
pub(super) fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    parse_ranges(text.trim())
}

/// Parses a kernel CPU list (`0-3,6`); malformed parts are skipped.
pub(super) fn parse_ranges(text: &str) -> Vec<u32> {
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
