//! What the kernel says about a process's rings and SQ poll threads in
//! /proc: `/proc/PID/fdinfo/FD` of an io_uring fd, and
//! `/proc/PID/task/TID/{stat,status}` of a poll thread.
//!
//! The one reader of io_uring fdinfo, for the poller registry (which SQ
//! thread a member's fd leads to), the statistics (a bound poller's CPU)
//! and the live view (`rsuring-stat`), with one rule for telling an
//! io_uring fd ([`is_io_uring_fd`]) and one for retrying ([`fdinfo`]).

use core::ffi::c_int;

/// The fields of an io_uring fd's fdinfo that the statistics use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FdInfo {
    pub sq_head: u32,
    pub sq_tail: u32,
    pub cq_head: u32,
    pub cq_tail: u32,
    /// The SQ poll thread's tid, if the ring has one.
    pub sq_thread: Option<i32>,
    /// Its CPU: the bound one, or where an unbound thread started.
    pub sq_thread_cpu: Option<i32>,
    /// Its CPU time in µs (`SqTotalTime`), and the part spent submitting
    /// (`SqWorkTime`); kernels before 6.10 have neither.
    pub sq_total_us: Option<u64>,
    pub sq_work_us: Option<u64>,
    /// CQEs waiting in the kernel's overflow list (the CQ was full).
    pub cq_overflow: u32,
}

impl FdInfo {
    /// SQEs published and not yet consumed by the kernel.
    pub fn sq_fill(&self) -> u32 {
        self.sq_tail.wrapping_sub(self.sq_head)
    }

    /// CQEs posted and not yet consumed by the application.
    pub fn cq_fill(&self) -> u32 {
        self.cq_tail.wrapping_sub(self.cq_head)
    }
}

fn num(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Parses an io_uring fdinfo; None when it is not one.
pub fn parse_fdinfo(text: &str) -> Option<FdInfo> {
    let mut f = FdInfo::default();
    let mut seen_sq = false;
    let mut in_overflow = false;
    for line in text.lines() {
        if line.starts_with(char::is_whitespace) {
            // Entries of the list named by the last key.
            f.cq_overflow += in_overflow as u32;
            continue;
        }
        in_overflow = line.starts_with("CqOverflowList:");
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let v = num(value);
        match key.trim() {
            "SqHead" => {
                f.sq_head = v? as u32;
                seen_sq = true;
            }
            "SqTail" => f.sq_tail = v? as u32,
            "CqHead" => f.cq_head = v? as u32,
            "CqTail" => f.cq_tail = v? as u32,
            "SqThread" => f.sq_thread = v.map(|t| t as i32).filter(|&t| t > 0),
            "SqThreadCpu" => f.sq_thread_cpu = v.map(|c| c as i32),
            "SqTotalTime" => f.sq_total_us = v,
            "SqWorkTime" => f.sq_work_us = v,
            _ => {}
        }
    }
    if f.sq_thread.is_none() {
        f.sq_thread_cpu = None;
    }
    seen_sq.then_some(f)
}

/// Whose /proc entries are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    /// The calling process, as `/proc/self` (right in any pid namespace).
    Current,
    /// Another process, by its pid as this /proc numbers it.
    Pid(u32),
}

impl Process {
    fn dir(self) -> String {
        match self {
            Process::Current => "/proc/self".to_string(),
            Process::Pid(pid) => format!("/proc/{pid}"),
        }
    }
}

/// What an io_uring fd's link in `/proc/PID/fd` says.
const IO_URING_LINK: &str = "anon_inode:[io_uring]";

/// Whether fd `fd` of `process` is an io_uring instance (its fdinfo may
/// lack the ring's details while the ring is busy; the fd's link always
/// says what the file is).
pub fn is_io_uring_fd(process: Process, fd: c_int) -> bool {
    fd >= 0
        && std::fs::read_link(format!("{}/fd/{fd}", process.dir()))
            .is_ok_and(|target| target.as_os_str() == IO_URING_LINK)
}

/// The fdinfo of fd `fd` of `process`, if it is an io_uring.
///
/// The kernel prints a ring's details only if it gets the ring's lock at
/// once, and a busy ring's submitter or SQ poll thread holds it for each
/// batch; so while the details are missing and the fd is an io_uring, this
/// keeps asking: yielding first, then sleeping a little (about 20 ms in
/// all). A file that is not an io_uring, or is gone, is None at once.
pub fn fdinfo(process: Process, fd: c_int) -> Option<FdInfo> {
    const TRIES: u32 = 400;
    const YIELDS: u32 = 100;
    if fd < 0 {
        return None;
    }
    let path = format!("{}/fdinfo/{fd}", process.dir());
    for attempt in 0..TRIES {
        let text = std::fs::read_to_string(&path).ok()?;
        if let Some(f) = parse_fdinfo(&text) {
            return Some(f);
        }
        if !is_io_uring_fd(process, fd) {
            return None;
        }
        if attempt < YIELDS {
            crate::sys::sched_yield();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
    None
}

/// The io_uring fds of `process`, in fd order.
pub fn io_uring_fds(process: Process) -> Vec<c_int> {
    let mut fds: Vec<c_int> = std::fs::read_dir(format!("{}/fd", process.dir()))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| is_io_uring_fd(process, fd))
        .collect();
    fds.sort_unstable();
    fds
}

/// What `/proc/PID/task/TID/stat` and `status` say about a thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskStat {
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
    /// The CPU it last ran on.
    pub last_cpu: i32,
    /// `Cpus_allowed_list`.
    pub allowed: String,
    /// The scheduler state letter (`R` running, `S` sleeping, ...).
    pub state: char,
}

/// Parses `/proc/.../stat`: (utime + stime, last CPU, state).
pub fn parse_task_stat(text: &str) -> Option<(u64, i32, char)> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): utime is field 14, stime 15, processor 39.
    let field = |n: usize| f.get(n - 3).copied();
    let utime: u64 = field(14)?.parse().ok()?;
    let stime: u64 = field(15)?.parse().ok()?;
    let cpu: i32 = field(39)?.parse().ok()?;
    let state = field(3)?.chars().next()?;
    Some((utime + stime, cpu, state))
}

/// The thread `tid` of process `pid`.
pub fn task_stat(pid: u32, tid: i32) -> Option<TaskStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    let (cpu_ticks, last_cpu, state) = parse_task_stat(&stat)?;
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap_or_default();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or("")
        .trim()
        .to_string();
    Some(TaskStat {
        cpu_ticks,
        last_cpu,
        allowed,
        state,
    })
}

/// The uids that own the files a process creates: (effective, filesystem),
/// from the `Uid:` line of `/proc/PID/status` (real, effective, saved, fs).
pub fn parse_file_uids(status: &str) -> Option<(u32, u32)> {
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    let ids: Vec<u32> = line
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    match ids[..] {
        [_, effective, _, fs] => Some((effective, fs)),
        _ => None,
    }
}

/// [`parse_file_uids`] of process `pid`; None when it is gone.
pub fn file_uids(pid: u32) -> Option<(u32, u32)> {
    parse_file_uids(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// Whether a `/proc/PID/status` text says the process runs in a seccomp
/// mode (its `Seccomp:` line is not 0); None without such a line.
pub fn parse_seccomp(status: &str) -> Option<bool> {
    let mode = status.lines().find_map(|l| l.strip_prefix("Seccomp:"))?;
    Some(mode.trim().parse::<u32>().ok()? != 0)
}

/// [`parse_seccomp`] of the calling process; None when /proc cannot say.
/// errno is left as it was (the callers are liburing functions).
pub fn under_seccomp_filter() -> Option<bool> {
    // SAFETY: errno is thread-local and always readable and writable.
    let saved = unsafe { *libc::__errno_location() };
    let status = std::fs::read_to_string("/proc/self/status").ok();
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved };
    parse_seccomp(&status?)
}

/// Clock ticks per second of /proc times.
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seccomp_line() {
        use super::parse_seccomp;
        assert_eq!(parse_seccomp("Name:\tx\nSeccomp:\t0\n"), Some(false));
        assert_eq!(
            parse_seccomp("Seccomp:\t2\nSeccomp_filters:\t1\n"),
            Some(true)
        );
        assert_eq!(parse_seccomp("Name:\tx\n"), None);
        assert_eq!(parse_seccomp("Seccomp:\tx\n"), None);
    }

    use super::*;

    const SQPOLL_RING: &str = "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t114288\n\
        SqMask:\t0x7\nSqHead:\t1\nSqTail:\t3\nCachedSqHead:\t1\nCqMask:\t0xf\nCqHead:\t0\n\
        CqTail:\t1\nCachedCqTail:\t1\nSQEs:\t0\nCQEs:\t1\n    0: user_data:0, res:0, flag:0\n\
        SqThread:\t11540\nSqThreadCpu:\t1\nSqTotalTime:\t99652\nSqWorkTime:\t12\n\
        UserFiles:\t0\nUserBufs:\t0\nPollList:\nCqOverflowList:\nNAPI:\tdisabled\n";

    #[test]
    fn fdinfo_of_an_sqpoll_ring() {
        let f = parse_fdinfo(SQPOLL_RING).unwrap();
        assert_eq!((f.sq_fill(), f.cq_fill()), (2, 1));
        assert_eq!((f.sq_thread, f.sq_thread_cpu), (Some(11540), Some(1)));
        assert_eq!((f.sq_total_us, f.sq_work_us), (Some(99652), Some(12)));
        assert_eq!(f.cq_overflow, 0);
        let ovf = SQPOLL_RING.replace(
            "CqOverflowList:\n",
            "CqOverflowList:\n  user_data=1, res=0, flags=0\n  user_data=2, res=0, flags=0\n",
        );
        assert_eq!(parse_fdinfo(&ovf).unwrap().cq_overflow, 2);
    }

    #[test]
    fn fdinfo_of_a_plain_ring_and_of_other_files() {
        let plain = SQPOLL_RING
            .replace("SqThread:\t11540", "SqThread:\t-1")
            .replace("SqThreadCpu:\t1", "SqThreadCpu:\t-1");
        let f = parse_fdinfo(&plain).unwrap();
        assert_eq!((f.sq_thread, f.sq_thread_cpu), (None, None));
        assert_eq!(parse_fdinfo("pos:\t0\nflags:\t02\nmnt_id:\t1\n"), None);
    }

    #[test]
    fn io_uring_fds_are_told_from_other_files() {
        let mut params = crate::uapi::io_uring_params::default();
        // SAFETY: `params` is a writable params struct.
        let ring = unsafe { crate::sys::io_uring_setup(4, &mut params) };
        assert!(ring >= 0, "io_uring_setup: {ring}");
        let mut pipe = [0; 2];
        // SAFETY: `pipe` has room for the two fds.
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);

        assert!(is_io_uring_fd(Process::Current, ring));
        let pid = Process::Pid(std::process::id());
        assert!(is_io_uring_fd(pid, ring));
        let info = fdinfo(Process::Current, ring).expect("a ring's fdinfo");
        assert_eq!(
            (info.sq_fill(), info.cq_fill(), info.sq_thread),
            (0, 0, None)
        );
        assert!(io_uring_fds(pid).contains(&ring));
        for fd in [pipe[0], -1] {
            assert!(!is_io_uring_fd(Process::Current, fd), "{fd}");
            assert_eq!(fdinfo(Process::Current, fd), None, "{fd}");
            assert!(!io_uring_fds(Process::Current).contains(&fd), "{fd}");
        }
        for fd in [ring, pipe[0], pipe[1]] {
            crate::sys::close(fd);
        }
    }

    #[test]
    fn uids_of_a_status_file() {
        let status = "Name:\tx\nUmask:\t0022\nUid:\t1000\t0\t0\t65534\nGid:\t1\t1\t1\t1\n";
        assert_eq!(parse_file_uids(status), Some((0, 65534)));
        assert_eq!(parse_file_uids("Uid:\t1\t2\n"), None);
        assert_eq!(parse_file_uids("Uid:\t1\tx\t3\t4\n"), None);
        assert_eq!(parse_file_uids("Name:\tx\n"), None);
    }

    #[test]
    fn task_stat_fields() {
        let stat = "11540 (iou-sqp-1 (x)) S 1 2 3 0 -1 4194368 0 0 0 0 7 93 0 0 20 0 1 0 \
                    100 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(parse_task_stat(stat), Some((100, 1, 'S')));
    }
}
