//! The refusal conditions of transparent SQPOLL, the one list
//! ([`CONDITIONS`], [`PLAIN_SETUPS`]): reasons, notes, counts, and the
//! verdict a ring setup leaves for the statistics.

use super::*;

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
pub(super) const PLAIN_SETUP_MASK: u32 = {
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
    pub(super) fn note(self) -> String {
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

pub(super) static NOTED: [AtomicBool; REFUSALS] = [const { AtomicBool::new(false) }; REFUSALS];

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
