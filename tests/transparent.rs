//! The RSURING_SQPOLL=1 contract (issue 11): rings created without SQPOLL
//! get a shared SQ poll thread only where plain-ring semantics are kept;
//! every refusal is automatic and noted once on stderr. Drives the C
//! programs in `c_tests/transparent/` as real processes: as root, as
//! nobody (`setpriv`), as a setuid binary, under `taskset -c 0` and under
//! `strace`, with and without the variable, and against Debian's liburing.
//!
//! Programs are built and run by the shared harness (`tests/common`), like
//! those of `tests/sqpoll.rs`: against our headers and linked to our
//! library through an RPATH directory (checked with `ldd`), or against
//! Debian's header and `-luring` ("unmodified binaries", given our library
//! with `LD_PRELOAD`). Each runs in its own process group with a timeout
//! and an environment stripped of `RSURING_*`, `LD_PRELOAD` and
//! `LD_LIBRARY_PATH`. Exit 0 is a pass, 77 a skip (a failure when
//! `RSURING_STRICT=1`), anything else a failure shown with its output and a
//! command line to reproduce. A passing program writes nothing on stderr
//! itself: what is there is the library's notes, which the tests count.
//!
//! Needs root (the tests switch users) and `cargo build --release` first.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use common::{launch, unique, CProgram, Launch, Removed, Run, NOBODY};

const TIMEOUT: Duration = Duration::from_secs(60);
/// Words of which a credentials note must contain one (any case).
const CRED_REASON: &[&str] = &[
    "credential",
    "privilege",
    "root",
    "capabilit",
    "uid",
    "secure",
];
const CPU_REASON: &[&str] = &["cpu", "affinity"];
const FORK_REASON: &[&str] = &["fork", "child", "parent", "owner"];

fn require_root() {
    static ROOT: Once = Once::new();
    ROOT.call_once(|| {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        assert_eq!(euid, 0, "these tests switch users and must run as root");
    });
}

/// Compiles `c_tests/transparent/<name>.c` against our header and library
/// (once per test process) with the extra `-D` definitions.
fn build(name: &str, defines: &[&str]) -> PathBuf {
    require_root();
    let mut stem = name.to_string();
    for d in defines {
        stem.push('-');
        stem.push_str(&d.replace(['=', '/'], "_"));
    }
    let program = CProgram::new(&stem, format!("c_tests/transparent/{name}.c"));
    defines.iter().fold(program, |p, d| p.define(d)).build()
}

fn ours(name: &str) -> PathBuf {
    build(name, &[])
}

/// An unmodified binary: Debian's `<liburing.h>` and `-luring`.
fn debian(name: &str) -> PathBuf {
    require_root();
    CProgram::new(
        &format!("{name}-debian"),
        format!("c_tests/transparent/{name}.c"),
    )
    .debian()
    .define("SQ_DEBIAN")
    .build()
}

/// The launches these tests need, on top of the harness's.
trait Scenario {
    /// RSURING_SQPOLL=1 (without the step-aside rule: see
    /// [`stepping_aside`] for the tests of that).
    fn sqpoll(self) -> Self;
    /// RSURING_SQPOLL=1 where the contract grants it to an unprivileged
    /// process: the process runs on CPU 0 (taskset -c 0) and its poller
    /// gets CPU 1 (RSURING_SQPOLL_CPUS=1), so the two never compete.
    fn sqpoll_with_poller_cpu(self) -> Self;
    /// The process may run on CPU 0 only (taskset -c 0).
    fn pin_cpu0(self) -> Self;
    /// strace -f -e trace=io_uring_enter -o `out`, outermost.
    fn strace(self, out: &Path) -> Self;
    /// Runs it with TIMEOUT.
    fn go(self) -> Run;
}

impl Scenario for Launch {
    fn sqpoll(self) -> Self {
        // The contract is tested whatever the machine's load: the
        // step-aside rule, which depends on it, has tests of its own.
        self.var("RSURING_SQPOLL", "1")
            .var("RSURING_SQPOLL_STEP_ASIDE", "0")
    }

    fn sqpoll_with_poller_cpu(self) -> Self {
        self.sqpoll().var("RSURING_SQPOLL_CPUS", "1").pin_cpu0()
    }

    fn pin_cpu0(self) -> Self {
        self.cpus("0")
    }

    fn strace(self, out: &Path) -> Self {
        let out = out.display().to_string();
        self.wrap(&[
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=io_uring_enter",
            "-o",
            &out,
        ])
    }

    fn go(self) -> Run {
        self.timeout(TIMEOUT).run()
    }
}

/// What these tests read from a run, on top of the harness's.
trait Notes {
    /// Panics unless the program passed; false when it skipped (allowed
    /// only outside strict mode).
    fn passed(&self) -> bool;
    /// The library's lines on stderr (a passing program writes none).
    fn notes(&self) -> Vec<&str>;
    /// Passed with nothing on stderr.
    fn assert_silent(&self, what: &str);
    /// Exactly one note line, naming RSURING_SQPOLL (when `names_var`) and
    /// containing one of the `reason` words (any case). Returns it.
    fn assert_one_note(&self, what: &str, names_var: bool, reason: &[&str]) -> String;
    /// The program's output line that starts with `line=` (panics without a
    /// `line=` field).
    fn program_line(&self) -> String;
}

impl Notes for Run {
    fn passed(&self) -> bool {
        self.expect_pass()
    }

    fn program_line(&self) -> String {
        let field = self.field("line");
        self.stdout
            .lines()
            .find(|l| l.starts_with("line="))
            .map_or(field, str::to_string)
    }

    fn notes(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect()
    }

    fn assert_silent(&self, what: &str) {
        assert!(
            self.notes().is_empty(),
            "{what}: the library printed something (nothing expected):\n{}",
            self.describe()
        );
    }

    fn assert_one_note(&self, what: &str, names_var: bool, reason: &[&str]) -> String {
        let notes = self.notes();
        assert_eq!(
            notes.len(),
            1,
            "{what}: want exactly one note on stderr (once per process, however many rings):\n{}",
            self.describe()
        );
        let note = notes[0];
        if names_var {
            assert!(
                note.contains("RSURING_SQPOLL"),
                "{what}: the note must name RSURING_SQPOLL:\n{}",
                self.describe()
            );
        }
        let lower = note.to_lowercase();
        assert!(
            reason.iter().any(|w| lower.contains(w)),
            "{what}: the note must say why (one of {reason:?}):\n{}",
            self.describe()
        );
        note.to_string()
    }
}

/// Builds and runs one program, requiring a pass; None when it skipped.
fn pass(l: Launch) -> Option<Run> {
    let r = l.go();
    r.passed().then_some(r)
}

// ---------------------------------------------------------------------------
// 1. Credentials

/// Root under RSURING_SQPOLL=1: three plain rings (no SqThread, no iou-sqp
/// thread), one note for the process.
#[test]
fn cred_root_process_gets_plain_rings_and_one_note() {
    let Some(r) = pass(launch(ours("rings"), &["plain"]).sqpoll()) else {
        return;
    };
    assert!(r.stdout.contains("uid=0/0/0"), "{}", r.describe());
    r.assert_one_note("root, 3 rings", true, CRED_REASON);
}

/// uids all 65534 but permitted capabilities kept (PR_SET_KEEPCAPS): it can
/// regain them, so it is refused like root.
#[test]
fn cred_permitted_capabilities_refuse_transparent_sqpoll() {
    if let Some(r) = pass(launch(ours("cred"), &["plain", "keepcaps"]).sqpoll()) {
        r.assert_one_note("permitted capabilities", true, CRED_REASON);
    }
}

/// uids 65534/65534/1000 and no capabilities: it can still switch to uid
/// 1000, so it is refused.
#[test]
fn cred_differing_saved_uid_refuses_transparent_sqpoll() {
    if let Some(r) = pass(launch(ours("cred"), &["plain", "saved-id"]).sqpoll()) {
        r.assert_one_note("saved uid differs", true, CRED_REASON);
    }
}

/// A setuid binary (AT_SECURE, uids 4242/65534/65534): plain rings. The
/// environment is read with secure_getenv, so RSURING_SQPOLL may not even
/// be seen; at most one note.
#[test]
fn cred_at_secure_setuid_binary_gets_plain_rings() {
    let bin = ours("rings");
    let dir = Removed(common::area().bin_dir.join(unique("suid")));
    fs::create_dir(&dir.0).expect("create the setuid directory");
    fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.0.join("rings");
    fs::copy(&bin, &copy).expect("copy the binary");
    std::os::unix::fs::chown(&copy, Some(NOBODY), Some(NOBODY)).expect("chown");
    // chown clears set-id bits: set them after it.
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o4755)).unwrap();
    let r = launch(&copy, &["plain"]).sqpoll().user(4242).go();
    if !r.passed() {
        return;
    }
    assert_eq!(r.field("at_secure"), "1", "{}", r.describe());
    assert_eq!(r.field("uid"), "4242/65534/65534", "{}", r.describe());
    assert!(r.notes().len() <= 1, "{}", r.describe());
}

/// The security scenario: the ring is created as root, a 0600 root file is
/// written, the process drops to nobody; an io_uring openat of that file
/// must give -EACCES (Debian's liburing does), the ring is plain, one note.
#[test]
fn cred_dropped_privileges_cannot_open_root_files_through_the_ring() {
    let args = ["plain", "drop-after-setup"];
    // Reference: Debian's liburing.
    let Some(r) = pass(launch(debian("cred"), &args)) else {
        return;
    };
    r.assert_silent("Debian's liburing");
    pass(launch(ours("cred"), &args))
        .unwrap()
        .assert_silent("rsuring without RSURING_SQPOLL");
    let r = pass(launch(ours("cred"), &args).sqpoll()).unwrap();
    r.assert_one_note("ring created as root", true, CRED_REASON);
    let r = pass(launch(debian("cred"), &args).preload().sqpoll()).unwrap();
    r.assert_one_note("unmodified binary, ring created as root", true, CRED_REASON);
}

/// nobody from exec on (setpriv): transparent rings (SqThread set, an
/// iou-sqp thread) whose reads return the right data; nothing printed.
#[test]
fn cred_unprivileged_process_gets_transparent_sqpoll() {
    let Some(r) = pass(
        launch(ours("rings"), &["transparent"])
            .sqpoll_with_poller_cpu()
            .nobody(),
    ) else {
        return;
    };
    r.assert_silent("unprivileged, transparent");
    pass(
        launch(debian("rings"), &["transparent"])
            .preload()
            .sqpoll_with_poller_cpu()
            .nobody(),
    )
    .unwrap()
    .assert_silent("unmodified binary, unprivileged, transparent");
}

/// A root parent that never touches io_uring forks a child that drops to
/// nobody for good before its first ring: the child's rings are
/// transparent. (Fails if the decision is taken at library load.)
#[test]
fn cred_unprivileged_fork_child_gets_transparent_sqpoll() {
    if let Some(r) =
        pass(launch(ours("cred"), &["transparent", "unpriv-fork"]).sqpoll_with_poller_cpu())
    {
        r.assert_silent("child dropped to nobody before its first ring");
    }
}

// ---------------------------------------------------------------------------
// 2. fork

/// The child of a live parent submits on the inherited transparent ring:
/// -EOWNERDEAD from io_uring_submit and io_uring_submit_and_wait, neither
/// buffer touched, no CQE anywhere, one note; the parent's ring keeps
/// working; the child's own new ring is transparent and works.
#[test]
fn fork_child_on_inherited_ring_fails_cleanly_while_parent_lives() {
    let args = ["parent-alive"];
    let Some(r) = pass(launch(ours("forkring"), &["plain", args[0]]).nobody()) else {
        return;
    };
    r.assert_silent("plain ring, child reads into its own memory");
    let r = pass(
        launch(ours("forkring"), &["transparent", args[0]])
            .sqpoll_with_poller_cpu()
            .nobody(),
    )
    .unwrap();
    r.assert_one_note("child on the inherited ring", true, FORK_REASON);
}

/// Daemonize after setup: the setup process exits, its SQ thread with it;
/// the child's submit returns -EOWNERDEAD at once (alarm: 5 s), one note;
/// its own new ring works.
#[test]
fn fork_child_on_inherited_ring_fails_promptly_after_parent_exit() {
    let Some(r) = pass(launch(ours("forkring"), &["plain", "parent-exited"]).nobody()) else {
        return;
    };
    r.assert_silent("plain ring, parent exited");
    let r = pass(
        launch(ours("forkring"), &["transparent", "parent-exited"])
            .sqpoll_with_poller_cpu()
            .nobody(),
    )
    .unwrap();
    r.assert_one_note("child on the ring of an exited parent", true, FORK_REASON);
}

// ---------------------------------------------------------------------------
// 2b. Rings that several processes use (issue 35)

const SHARED_REASON: &[&str] = &["shared-memory"];

/// The library's RSURING_SQPOLL=1 notes among a run's stderr lines (with
/// RSURING_STATS the statistics lines are there too).
fn sqpoll_notes(r: &Run) -> Vec<&str> {
    r.stderr
        .lines()
        .filter(|l| l.starts_with("rsuring: RSURING_SQPOLL=1:"))
        .collect()
}

/// A multi-process database's pattern, as the issue found it: the parent
/// creates 142 rings, each `struct io_uring` and its ring memory
/// (`io_uring_queue_init_mem`) in a MAP_SHARED region, before any submit,
/// and forks a worker per ring; each worker opens the data file itself and
/// reads it through its ring, one reaps another's ring, one is killed with
/// a read in flight and restarted, one forks again. Plain, and under
/// RSURING_SQPOLL=1 where the contract grants it (nobody, CPU 0, poller on
/// CPU 1, step-aside off): every ring stays plain and says why
/// (`transparent=refused:shared-memory`, `refused_shared_memory=144` for the
/// 142 rings and the two of the faults), one note, and the same program's
/// ring in private memory is transparent. Before the refusal, every worker's
/// first submit failed with -EOWNERDEAD.
#[test]
fn shared_memory_rings_of_a_multi_process_server_stay_plain_and_work() {
    let bin = ours("shared_rings");
    let Some(r) = pass(launch(&bin, &["plain", "anon", "both", "142"]).nobody()) else {
        return;
    };
    r.assert_silent("plain rsuring, 142 rings in MAP_SHARED memory");
    let r = pass(
        launch(&bin, &["transparent", "anon", "both", "142"])
            .sqpoll_with_poller_cpu()
            .nobody()
            .var("RSURING_STATS", "1"),
    )
    .unwrap();
    let line = r.program_line();
    assert!(
        line.contains(" sqpoll=no ") && line.contains(" transparent=refused:shared-memory "),
        "ring 0's statistics must say it was refused for shared memory: {line}\n{}",
        r.describe()
    );
    let notes = sqpoll_notes(&r);
    assert!(
        notes.len() == 1 && notes[0].contains("(shared-memory)"),
        "want one shared-memory note (once per process, however many rings):\n{}",
        r.describe()
    );
    let process: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("rsuring-process:"))
        .collect();
    assert!(
        process.len() == 1
            && process[0].contains(" refused_shared_memory=144 ")
            && process[0].contains(" refused_fork=0 "),
        "the parent's exit report counts 144 refusals (142 rings and the faults' 2), no fork refusal:\n{}",
        r.describe()
    );
}

/// Every kind of shared memory, and each of the struct and the ring memory
/// alone in it: SysV (shmget), POSIX (shm_open) and MAP_SHARED anonymous
/// memory; `struct` (the kernel maps the rings) and `mem` (each process
/// keeps a private copy of the structs, the rings are in shared memory).
/// The rings stay plain and work, with one note.
#[test]
fn rings_in_any_shared_memory_stay_plain_under_rsuring_sqpoll() {
    let bin = ours("shared_rings");
    for (memory, place) in [
        ("anon", "struct"),
        ("anon", "mem"),
        ("sysv", "both"),
        ("sysv", "struct"),
        ("posix", "both"),
        ("posix", "mem"),
    ] {
        let what = format!("{memory} shared memory, {place} in it");
        let Some(r) = pass(launch(&bin, &["plain", memory, place, "8"]).nobody()) else {
            return;
        };
        r.assert_silent(&what);
        let r = pass(
            launch(&bin, &["transparent", memory, place, "8"])
                .sqpoll_with_poller_cpu()
                .nobody(),
        )
        .unwrap();
        r.assert_one_note(&what, true, SHARED_REASON);
    }
}

/// An unmodified binary (Debian's header and -luring, our library by
/// LD_PRELOAD) with its structs in MAP_SHARED memory: the same, against
/// Debian's liburing as the reference.
#[test]
fn unmodified_binary_with_rings_in_shared_memory_stays_plain() {
    let bin = debian("shared_rings");
    let args = ["plain", "anon", "struct", "16"];
    let Some(r) = pass(launch(&bin, &args).nobody()) else {
        return;
    };
    r.assert_silent("Debian's liburing");
    let r = pass(
        launch(&bin, &["transparent", "anon", "struct", "16"])
            .preload()
            .sqpoll_with_poller_cpu()
            .nobody(),
    )
    .unwrap();
    r.assert_one_note(
        "unmodified binary, rings in MAP_SHARED memory",
        true,
        SHARED_REASON,
    );
}

// ---------------------------------------------------------------------------
// 3. The exported io_uring_enter

/// A program that publishes the SQ tail itself and calls io_uring_enter:
/// after the SQ thread went idle, enter(fd, 1, 1, GETEVENTS) returns 1 with
/// the CQE there; enter(fd, 4, 0, 0) with 1 SQE returns 1; the SQ is
/// consumed on return. Same program on Debian's liburing as the reference.
#[test]
fn exported_io_uring_enter_behaves_as_on_a_plain_ring() {
    if pass(launch(debian("enter"), &["plain"])).is_none() {
        return;
    }
    pass(launch(ours("enter"), &["plain"]))
        .unwrap()
        .assert_silent("plain");
    for (bin, preload) in [(ours("enter"), false), (debian("enter"), true)] {
        let mut l = launch(&bin, &["transparent"])
            .sqpoll_with_poller_cpu()
            .var("RSURING_SQPOLL_IDLE_MS", "10")
            .nobody();
        if preload {
            l = l.preload();
        }
        pass(l).unwrap().assert_silent("transparent");
    }
}

// ---------------------------------------------------------------------------
// 4. Submit counts

/// Batches of 1, 7, 8, 9, 32, 64 NOPs (SQ thread awake and asleep):
/// io_uring_submit returns the batch size and io_uring_sq_ready() is 0.
#[test]
fn submit_counts_equal_a_plain_ring() {
    let args = |m| vec![m, "batches"];
    if pass(launch(debian("counts"), &args("plain"))).is_none() {
        return;
    }
    pass(launch(ours("counts"), &args("plain")))
        .unwrap()
        .assert_silent("plain");
    let idle = ("RSURING_SQPOLL_IDLE_MS", "10");
    pass(
        launch(ours("counts"), &args("transparent"))
            .sqpoll_with_poller_cpu()
            .var(idle.0, idle.1)
            .nobody(),
    )
    .unwrap()
    .assert_silent("transparent");
    pass(
        launch(debian("counts"), &args("transparent"))
            .preload()
            .sqpoll_with_poller_cpu()
            .var(idle.0, idle.1)
            .nobody(),
    )
    .unwrap()
    .assert_silent("unmodified binary, transparent");
}

/// 4 SQEs, the 2nd invalid: a plain ring returns 2 then 2 (rsuring plain
/// must equal Debian's liburing exactly). The transparent ring's sequence
/// is only printed (a candidate documented limitation: the SQ thread goes
/// on past the failed SQE); checked are the invariants: the returns add up
/// to 4, the 4 CQEs are right, nothing left queued.
#[test]
fn submit_counts_after_a_failing_sqe_mid_batch() {
    let args = |m| vec![m, "midfail"];
    let Some(reference) = pass(launch(debian("counts"), &args("plain"))) else {
        return;
    };
    let plain = pass(launch(ours("counts"), &args("plain"))).unwrap();
    plain.assert_silent("plain");
    for key in ["midfail_submits", "midfail_cqes"] {
        assert_eq!(
            plain.field(key),
            reference.field(key),
            "rsuring's plain ring differs from Debian's liburing:\n{}\n{}",
            plain.describe(),
            reference.describe()
        );
    }
    let t = pass(
        launch(ours("counts"), &args("transparent"))
            .sqpoll_with_poller_cpu()
            .nobody(),
    )
    .unwrap();
    t.assert_silent("transparent");
    eprintln!(
        "mid-batch failure: plain ring submits {} (CQEs {}); transparent ring submits {} (CQEs {})",
        plain.field("midfail_submits"),
        plain.field("midfail_cqes"),
        t.field("midfail_submits"),
        t.field("midfail_cqes")
    );
}

// ---------------------------------------------------------------------------
// 5. Consumption

/// Every submit variant, with 3 and 8 NOPs, SQ thread awake and asleep:
/// on return the SQ is empty and a full SQ of io_uring_get_sqe() succeeds
/// (checked by the program), and the return values equal a plain ring's.
#[test]
fn every_submit_variant_returns_after_consumption() {
    let bin = ours("consume");
    let Some(plain) = pass(launch(&bin, &["plain"]).nobody()) else {
        return;
    };
    plain.assert_silent("plain");
    let t = pass(
        launch(&bin, &["transparent"])
            .sqpoll_with_poller_cpu()
            .var("RSURING_SQPOLL_IDLE_MS", "10")
            .nobody(),
    )
    .unwrap();
    if t.stdout.contains("wait_reg_ring=disabled") {
        // The registered-wait ring is created R_DISABLED, which the
        // contract leaves plain, with its one note.
        t.assert_one_note("transparent, R_DISABLED wait ring", true, &["r_disabled"]);
    } else {
        t.assert_silent("transparent");
    }
    let rets = |r: &Run| -> Vec<String> {
        r.stdout
            .lines()
            .filter(|l| l.starts_with("ret "))
            .map(String::from)
            .collect()
    };
    assert!(!rets(&plain).is_empty(), "{}", plain.describe());
    assert_eq!(
        rets(&t),
        rets(&plain),
        "the transparent ring's return values differ from a plain ring's:\n{}\n{}",
        t.describe(),
        plain.describe()
    );
}

// ---------------------------------------------------------------------------
// 6. One CPU

/// Allowed one CPU (taskset -c 0), an unprivileged process under
/// RSURING_SQPOLL=1 without RSURING_SQPOLL_CPUS gets transparent rings
/// whose poller runs on a CPU the process gave up, and no note.
#[test]
fn single_cpu_affinity_gets_transparent_sqpoll_without_sqpoll_cpus() {
    // Issue 21: RSURING_SQPOLL=1 alone finds the CPUs the process gave up.
    if let Some(r) = pass(
        launch(ours("rings"), &["transparent"])
            .sqpoll()
            .nobody()
            .pin_cpu0(),
    ) {
        r.assert_silent("taskset -c 0, RSURING_SQPOLL_CPUS unset");
    }
}

/// Without RSURING_SQPOLL_CPUS the poller would be unbound, free to share
/// any CPU the process runs on: refused, one note naming the reason.
#[test]
fn unbound_poller_refuses_transparent_sqpoll() {
    if let Some(r) = pass(launch(ours("rings"), &["plain"]).sqpoll().nobody()) {
        r.assert_one_note("RSURING_SQPOLL_CPUS unset", true, CPU_REASON);
    }
}

/// RSURING_SQPOLL_CPUS=0 while the process may run on CPU 0 only: refused
/// too.
#[test]
fn sqpoll_cpus_on_the_only_allowed_cpu_refuses_transparent_sqpoll() {
    let l = launch(ours("rings"), &["plain"])
        .sqpoll()
        .var("RSURING_SQPOLL_CPUS", "0")
        .nobody()
        .pin_cpu0();
    if let Some(r) = pass(l) {
        r.assert_one_note("RSURING_SQPOLL_CPUS=0 under taskset -c 0", true, CPU_REASON);
    }
}

/// The control: pinned to CPU 0 with the pollers on CPU 1, no CPU is
/// shared, so the rings stay transparent (needs 2 online CPUs).
#[test]
fn sqpoll_cpus_on_another_cpu_keeps_transparent_sqpoll() {
    if !Path::new("/sys/devices/system/cpu/cpu1").exists() {
        common::skip(
            "sqpoll_cpus_on_another_cpu_keeps_transparent_sqpoll",
            "needs a CPU 1",
        );
        return;
    }
    let l = launch(ours("rings"), &["transparent"])
        .sqpoll_with_poller_cpu()
        .nobody();
    if let Some(r) = pass(l) {
        r.assert_silent("poller on CPU 1, program on CPU 0");
    }
}

/// 20 single reads 50 ms apart with RSURING_SQPOLL_IDLE_MS=10: at most one
/// IORING_ENTER_SQ_WAKEUP io_uring_enter per submit call (counted with
/// strace -f), on a ring that is transparent (checked by the program).
#[test]
fn at_most_one_wakeup_enter_per_submit() {
    if !common::require_tool("at_most_one_wakeup_enter_per_submit", "strace", "strace") {
        return;
    }
    let out = Removed(common::area().bin_dir.join(unique("strace")));
    let r = launch(ours("wakeups"), &["transparent"])
        .sqpoll_with_poller_cpu()
        .var("RSURING_SQPOLL_IDLE_MS", "10")
        .nobody()
        .strace(&out.0)
        .go();
    let trace = fs::read_to_string(&out.0).unwrap_or_default();
    if !r.passed() {
        return;
    }
    r.assert_silent("transparent, spaced reads");
    let submits: usize = r.field("submits").parse().unwrap();
    let (enters, wakeups) = enter_calls(&trace);
    eprintln!(
        "{} io_uring_enter calls, {wakeups} with SQ_WAKEUP, for {submits} submits",
        enters.len()
    );
    assert!(
        wakeups <= submits,
        "{wakeups} wake-up io_uring_enter calls for {submits} submit calls (at most one each):\n{}\n{}",
        enters.iter().take(40).copied().collect::<Vec<_>>().join("\n"),
        r.describe()
    );
}

// ---------------------------------------------------------------------------
// 7. Long link chains on a shared poller

/// The three ways two rings come to share a poller, and how to launch them.
fn chain_setups(bin: &Path, length: &str) -> Vec<(&'static str, Launch)> {
    vec![
        (
            "RSURING_SQPOLL_PERCPU=1",
            launch(bin, &["percpu-env", length]).var("RSURING_SQPOLL_PERCPU", "1"),
        ),
        (
            "IORING_SETUP_SQPOLL_PERCPU",
            launch(bin, &["percpu-flag", length]),
        ),
        (
            "RSURING_SQPOLL=1",
            launch(bin, &["transparent", length])
                .sqpoll_with_poller_cpu()
                .nobody(),
        ),
    ]
}

/// Whole-number tokens of a line.
fn numbers(line: &str) -> Vec<&str> {
    line.split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Chains of 20 linked SQEs on two rings sharing a poller: one note per
/// process, naming ring A's fd and the limit of 8.
#[test]
fn long_link_chain_on_a_shared_poller_is_noted_once() {
    let bin = ours("chains");
    let mut failed = Vec::new();
    for (how, l) in chain_setups(&bin, "long") {
        let r = l.go();
        if !r.passed() {
            return;
        }
        let notes = r.notes();
        let fd = r.field("ring_a_fd");
        let ok = notes.len() == 1 && {
            let nums = numbers(notes[0]);
            nums.contains(&fd.as_str()) && nums.contains(&"8")
        };
        if !ok {
            failed.push(format!(
                "{how}: want one note naming fd {fd} and the limit 8:\n{}",
                r.describe()
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// Chains of at most 8 SQEs on the same rings: nothing printed.
#[test]
fn short_link_chains_on_a_shared_poller_print_nothing() {
    let bin = ours("chains");
    for (how, l) in chain_setups(&bin, "short") {
        if let Some(r) = pass(l) {
            r.assert_silent(how);
        }
    }
}

/// The member of struct rsuring_stats (include/rsuring.h) that counts
/// split link chains: the first `__u64` whose name mentions a chain.
fn split_chain_field() -> Option<String> {
    let header = fs::read_to_string(common::repo().join("include/rsuring.h")).expect("rsuring.h");
    let body = header
        .split("struct rsuring_stats {")
        .nth(1)?
        .split("};")
        .next()?;
    body.lines().find_map(|l| {
        let decl = l.trim().strip_prefix("__u64")?.trim();
        let name = decl.split(';').next()?.trim();
        name.contains("chain").then(|| name.to_string())
    })
}

/// With statistics on, the split-chain counter of ring A is 0 after short
/// chains and at least 1 after two 20-SQE chains.
#[test]
fn split_link_chains_are_counted_in_statistics() {
    let field = split_chain_field().unwrap_or_else(|| {
        panic!(
            "struct rsuring_stats in include/rsuring.h has no counter of split link \
             chains (no __u64 member whose name contains \"chain\")"
        )
    });
    let bin = build("chains", &[&format!("SPLIT_CHAIN_FIELD={field}")]);
    for length in ["short", "long"] {
        for (how, l) in chain_setups(&bin, length) {
            if let Some(r) = pass(l) {
                eprintln!("{how} {length}: {field} = {}", r.field("split_chains_a"));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Without RSURING_SQPOLL nothing is ever printed.

#[test]
fn plain_programs_without_rsuring_sqpoll_print_nothing() {
    let cases: Vec<(PathBuf, Vec<&str>, bool)> = vec![
        (ours("rings"), vec!["plain"], false),
        (ours("rings"), vec!["plain"], true),
        (ours("cred"), vec!["plain", "keepcaps"], false),
        (ours("cred"), vec!["plain", "saved-id"], false),
        (ours("cred"), vec!["plain", "unpriv-fork"], false),
        (ours("cred"), vec!["plain", "drop-after-setup"], false),
        (ours("enter"), vec!["plain"], true),
        (ours("counts"), vec!["plain", "batches"], true),
        (ours("wakeups"), vec!["plain"], true),
    ];
    for (bin, args, nobody) in cases {
        let mut l = launch(&bin, &args).var("RSURING_SQPOLL_IDLE_MS", "10");
        if nobody {
            l = l.nobody();
        }
        if let Some(r) = pass(l) {
            r.assert_silent("plain ring, RSURING_SQPOLL unset");
        }
    }
    for pinned in [false, true] {
        let mut l = launch(ours("rings"), &["plain"]).nobody();
        if pinned {
            l = l.pin_cpu0();
        }
        if let Some(r) = pass(l) {
            r.assert_silent("plain ring, RSURING_SQPOLL unset");
        }
    }
}

// ---------------------------------------------------------------------------
// 8. Statistics that tell the truth (issue 21)

/// The io_uring_enter calls in an strace -f output, and how many of them
/// woke an SQ thread (resumed halves of interrupted calls carry no name
/// with "(" and are not counted twice).
fn enter_calls(trace: &str) -> (Vec<&str>, usize) {
    let calls: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("io_uring_enter("))
        .collect();
    let wakeups = calls
        .iter()
        .filter(|l| l.contains("IORING_ENTER_SQ_WAKEUP"))
        .count();
    (calls, wakeups)
}

/// Runs `syscalls` under strace and returns the run and the calls counted,
/// None when it skipped.
fn counted(what: &str, l: Launch) -> Option<(Run, u64, u64)> {
    let out = Removed(common::area().bin_dir.join(unique("strace")));
    let r = l.strace(&out.0).go();
    let trace = fs::read_to_string(&out.0).unwrap_or_default();
    if !r.passed() {
        return None;
    }
    let (calls, wakeups) = enter_calls(&trace);
    let (calls, wakeups) = (calls.len() as u64, wakeups as u64);
    eprintln!(
        "{what}: strace {calls} io_uring_enter ({wakeups} wake-ups); {}",
        r.field("line")
    );
    Some((r, calls, wakeups))
}

/// 800 NOP round trips (every 8th after a 10 ms pause, so the SQ thread
/// is asleep and must be woken) on a plain ring, a PERCPU-shared SQPOLL
/// ring and a transparent one: `enters` equals the io_uring_enter calls
/// strace counted, `wakeups` the calls with SQ_WAKEUP; the transparent
/// ring says `sqpoll=transparent poller_cpu=1 transparent=on` and makes no
/// submit-only enter (its submits are hand-overs, not system calls).
#[test]
fn statistics_count_the_system_calls_that_were_made() {
    if !common::require_tool(
        "statistics_count_the_system_calls_that_were_made",
        "strace",
        "strace",
    ) {
        return;
    }
    let bin = ours("syscalls");
    let args = ["800", "10"];
    let cases = [
        (
            "plain",
            "no",
            launch(&bin, &["plain", args[0], args[1]])
                .nobody()
                .pin_cpu0(),
        ),
        (
            "percpu",
            "shared",
            launch(&bin, &["sqpoll", args[0], args[1]])
                .var("RSURING_SQPOLL_PERCPU", "1")
                .var("RSURING_SQPOLL_CPUS", "1")
                .var("RSURING_SQPOLL_IDLE_MS", "5")
                .nobody()
                .pin_cpu0(),
        ),
        (
            "transparent",
            "transparent",
            launch(&bin, &["transparent", args[0], args[1]])
                .sqpoll_with_poller_cpu()
                .var("RSURING_SQPOLL_IDLE_MS", "5")
                .nobody(),
        ),
    ];
    for (what, sqpoll, l) in cases {
        let Some((r, calls, wakeups)) = counted(what, l) else {
            continue;
        };
        let num = |k: &str| -> u64 { r.field(k).parse().unwrap() };
        assert_eq!(
            num("enters"),
            calls,
            "{what}: the statistics count {} io_uring_enter calls, strace {calls}:\n{}",
            num("enters"),
            r.describe()
        );
        assert_eq!(
            num("wakeups"),
            wakeups,
            "{what}: wake-ups:\n{}",
            r.describe()
        );
        let line = r.stdout.lines().find(|l| l.starts_with("line=")).unwrap();
        assert!(
            line.contains(&format!(" sqpoll={sqpoll} ")),
            "{what}: want sqpoll={sqpoll}: {line}"
        );
        if what == "transparent" {
            for want in [" poller_cpu=1 ", " transparent=on ", " enters_submit=0 "] {
                assert!(line.contains(want), "{what}: want{want}in {line}");
            }
            assert!(
                wakeups > 0,
                "{what}: the pauses put the poller to sleep: {line}"
            );
        }
        r.assert_silent(what);
    }
}

/// A refused ring says why on its statistics line
/// (`transparent=refused:REASON`), and the exit report ends with the
/// process's refusal counts (`rsuring-process: ... refused_REASON=N`).
#[test]
fn refused_rings_say_why_and_the_exit_report_counts_refusals() {
    let bin = ours("syscalls");
    let cases = [
        // Allowed on every CPU: no CPU for a poller.
        (
            "no-poller-cpu",
            launch(&bin, &["plain", "10"]).sqpoll().nobody(),
        ),
        // Root can change its credentials.
        (
            "privileged",
            launch(&bin, &["plain", "10"]).sqpoll().pin_cpu0(),
        ),
    ];
    for (reason, l) in cases {
        let Some(r) = pass(l.var("RSURING_STATS", "1")) else {
            continue;
        };
        let line = r.program_line();
        let want = format!(" transparent=refused:{reason} ");
        assert!(line.contains(&want), "{reason}: want{want}in {line}");
        assert!(line.contains(" sqpoll=no "), "{reason}: {line}");
        let process: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("rsuring-process:"))
            .collect();
        assert_eq!(
            process.len(),
            1,
            "{reason}: one process line:\n{}",
            r.describe()
        );
        let key = format!(" refused_{}=1 ", reason.replace('-', "_"));
        assert!(
            process[0].contains(&key) && process[0].ends_with(" end=process_exit"),
            "{reason}: want{key}in {}",
            process[0]
        );
    }
}

/// Without RSURING_SQPOLL_CPUS, a process pinned to CPU 0 gets its poller
/// on a CPU it does not run on (CPU 1 here), least-loaded first.
#[test]
fn pinned_process_finds_a_poller_cpu_without_sqpoll_cpus() {
    let bin = ours("syscalls");
    let l = launch(&bin, &["transparent", "100"])
        .sqpoll()
        .pin_cpu0()
        .nobody();
    let Some(r) = pass(l) else { return };
    let line = r.program_line();
    assert!(
        line.contains(" sqpoll=transparent ") && !line.contains(" poller_cpu=0 "),
        "want a transparent ring whose poller is not on CPU 0: {line}"
    );
    r.assert_silent("pinned, no RSURING_SQPOLL_CPUS");
}

/// An unknown CPU in RSURING_SQPOLL_CPUS: the variable is reported and
/// ignored, and the ring keeps working (here transparent, on the CPU found
/// as without the variable).
#[test]
fn unknown_cpu_in_sqpoll_cpus_is_reported_and_rings_keep_working() {
    let bin = ours("syscalls");
    for list in ["4095", "1,4000", "1-"] {
        let l = launch(&bin, &["transparent", "100"])
            .sqpoll()
            .var("RSURING_SQPOLL_CPUS", list)
            .pin_cpu0()
            .nobody();
        let Some(r) = pass(l) else { continue };
        let notes = r.notes();
        assert_eq!(
            notes.len(),
            1,
            "{list}: one note about the variable:\n{}",
            r.describe()
        );
        assert!(
            notes[0].contains("RSURING_SQPOLL_CPUS"),
            "{list}: {}",
            notes[0]
        );
        assert_eq!(r.field("sqes"), "100", "{list}");
    }
}

/// An application thread that later moves onto its poller's CPU: every
/// round trip still completes, in order, and is counted once.
#[test]
fn thread_moving_onto_the_poller_cpu_keeps_working() {
    let bin = ours("syscalls");
    let l = launch(&bin, &["move", "2000"])
        .sqpoll_with_poller_cpu()
        .nobody();
    let Some(r) = pass(l) else { return };
    assert_eq!(r.field("moved"), "1000");
    assert_eq!(r.field("sqes"), "2000");
    r.assert_silent("moved onto the poller's CPU");
}

/// A cgroup with a cpuset of CPU 0 only (v1's cpuset hierarchy or v2),
/// removed on drop; None when the machine has no cpuset controller.
struct Cpuset {
    dir: PathBuf,
    procs: &'static str,
}

impl Cpuset {
    fn cpu0() -> Option<Cpuset> {
        let name = unique("rsuring-tp-cpuset");
        let v1 = Path::new("/sys/fs/cgroup/cpuset");
        let v2 = Path::new("/sys/fs/cgroup");
        let (dir, procs) = if v1.join("cpuset.cpus").exists() {
            (v1.join(&name), "tasks")
        } else if fs::read_to_string(v2.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "cpuset"))
        {
            fs::write(v2.join("cgroup.subtree_control"), "+cpuset").ok()?;
            (v2.join(&name), "cgroup.procs")
        } else {
            return None;
        };
        fs::create_dir(&dir).ok()?;
        let set = Cpuset { dir, procs };
        fs::write(set.dir.join("cpuset.cpus"), "0").ok()?;
        fs::write(set.dir.join("cpuset.mems"), "0").ok()?;
        Some(set)
    }

    /// `sh -c` that moves itself into the cpuset, then runs the launch.
    fn wrapper(&self) -> Vec<String> {
        let procs = self.dir.join(self.procs).display().to_string();
        vec![
            "sh".into(),
            "-c".into(),
            format!("echo $$ > {procs} && exec \"$@\""),
            "sh".into(),
        ]
    }
}

impl Drop for Cpuset {
    fn drop(&mut self) {
        // The test's processes have exited; the empty cgroup can go.
        let _ = fs::remove_dir(&self.dir);
    }
}

/// A cpuset that excludes the CPU chosen for the poller: the kernel
/// refuses the bound SQ thread, so the ring stays plain, works, and says
/// `transparent=refused:cpu-refused`, with one note.
#[test]
fn cpuset_refusing_the_poller_cpu_leaves_the_ring_plain() {
    require_root();
    let Some(set) = Cpuset::cpu0() else {
        common::skip(
            "cpuset_refusing_the_poller_cpu_leaves_the_ring_plain",
            "no cpuset cgroup controller",
        );
        return;
    };
    let wrap = set.wrapper();
    let wrap: Vec<&str> = wrap.iter().map(String::as_str).collect();
    let l = launch(ours("syscalls"), &["plain", "100"])
        .sqpoll()
        .var("RSURING_STATS", "1")
        .pin_cpu0()
        .nobody()
        .wrap(&wrap);
    let Some(r) = pass(l) else { return };
    let line = r.stdout.lines().find(|l| l.starts_with("line=")).unwrap();
    assert!(
        line.contains(" sqpoll=no ") && line.contains(" transparent=refused:cpu-refused "),
        "{line}\n{}",
        r.describe()
    );
    assert_eq!(r.field("sqes"), "100");
    let notes: Vec<&str> = r
        .notes()
        .into_iter()
        .filter(|l| l.contains("RSURING_SQPOLL=1:"))
        .collect();
    assert_eq!(notes.len(), 1, "one note:\n{}", r.describe());
    assert!(notes[0].contains("cpuset"), "{}", notes[0]);
}

// ---------------------------------------------------------------------------
// The step-aside rule (poller-busy)

/// Threads that keep `cpu` busy until dropped.
struct BusyCpu {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyCpu {
    fn on(cpu: usize, threads: usize) -> BusyCpu {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let threads = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET
                    // and sched_setaffinity get valid pointers to it.
                    unsafe {
                        let mut set: libc::cpu_set_t = core::mem::zeroed();
                        libc::CPU_SET(cpu, &mut set);
                        libc::sched_setaffinity(0, core::mem::size_of_val(&set), &set);
                    }
                    while !stop.load(Ordering::Relaxed) {
                        core::hint::spin_loop();
                    }
                })
            })
            .collect();
        // Let them get there before the program measures.
        std::thread::sleep(Duration::from_millis(100));
        BusyCpu { stop, threads }
    }
}

impl Drop for BusyCpu {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// What a held run of `c_tests/transparent/stepaside.c` gave: its stdout,
/// `rsuring-stat --once PID` while it held its rings, and its stderr.
struct Held {
    stdout: String,
    stat: String,
    stderr: String,
}

impl Held {
    fn field(&self, key: &str) -> String {
        let prefix = format!("{key}=");
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {key}= in:\n{}", self.stdout))
            .to_string()
    }

    /// The library's RSURING_SQPOLL=1 notes.
    fn notes(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.contains("RSURING_SQPOLL=1:"))
            .collect()
    }

    /// Checks that the process counted one poller-busy refusal, in its
    /// exit report and in rsuring-stat's view, and noted it once.
    fn assert_one_poller_busy_refusal(&self, what: &str) {
        let all = format!(
            "stdout:\n{}\nstderr:\n{}\nrsuring-stat:\n{}",
            self.stdout, self.stderr, self.stat
        );
        let report: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| l.starts_with("rsuring-process:"))
            .collect();
        assert_eq!(report.len(), 1, "{what}: one exit report line\n{all}");
        assert!(
            report[0].contains(" refused_poller_busy=1 "),
            "{what}: {all}"
        );
        assert!(
            self.stat.contains(" refused_poller_busy=1 "),
            "{what}: rsuring-stat --once must show the refusal\n{all}"
        );
        let notes = self.notes();
        assert_eq!(notes.len(), 1, "{what}: one note\n{all}");
        assert!(notes[0].contains("(poller-busy)"), "{what}: {all}");
    }
}

/// Runs stepaside.c with `args` as the contract grants RSURING_SQPOLL=1
/// (nobody on CPU 0, poller on CPU 1), statistics on and the rule on;
/// looks at it with rsuring-stat while it holds its rings. None: skipped.
fn stepping_aside(args: &[&str]) -> Option<Held> {
    use std::io::{BufRead, BufReader};
    let stat_tool = common::profile_dir().join("rsuring-stat");
    assert!(
        stat_tool.exists(),
        "{}: run cargo build --release",
        stat_tool.display()
    );
    let l = launch(ours("stepaside"), args)
        .var("RSURING_SQPOLL", "1")
        .var("RSURING_SQPOLL_CPUS", "1")
        .var("RSURING_STATS", "1")
        .pin_cpu0()
        .nobody();
    let cmdline = l.cmdline();
    let (mut child, stderr) = l.spawn_talking("stepaside");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut stdout = String::new();
    let mut pid = None;
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if let Some(p) = line.trim().strip_prefix("ready pid=") {
            pid = Some(p.to_string());
            break;
        }
        stdout += &line;
    }
    let stat = match &pid {
        Some(pid) => {
            let r = launch(&stat_tool, &["--once", pid])
                .timeout(Duration::from_secs(10))
                .run();
            format!("{}{}", r.stdout, r.stderr)
        }
        None => String::new(),
    };
    drop(child.stdin.take());
    let status = child.wait().expect("wait for stepaside");
    let stderr = stderr.join().unwrap();
    if status.code() == Some(common::EXIT_SKIP) {
        common::skip("stepaside", &stderr);
        return None;
    }
    assert!(
        status.success() && pid.is_some(),
        "stepaside {args:?} failed ({status}):\n{cmdline}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    Some(Held {
        stdout,
        stat,
        stderr,
    })
}

/// A poller's CPU measured busy at ring setup (two threads spin on CPU 1):
/// the ring stays plain, works, says `transparent=refused:poller-busy`,
/// and the process counts the refusal (exit report, rsuring-stat) and
/// notes it once.
#[test]
fn busy_poller_cpu_at_setup_leaves_the_ring_plain() {
    require_root();
    let busy = BusyCpu::on(1, 2);
    let Some(held) = stepping_aside(&["setup", "100"]) else {
        return;
    };
    drop(busy);
    let line = held.field("line_a");
    assert!(
        line.contains(" sqpoll=no ") && line.contains(" transparent=refused:poller-busy "),
        "{line}"
    );
    assert_eq!(held.field("a_round_trips"), "100");
    held.assert_one_poller_busy_refusal("CPU 1 busy at setup");
}

/// Hand-overs measured slow (three processes share the poller's CPU with
/// it while a transparent ring submits): the process steps back, so the
/// next ring stays plain (`transparent=refused:poller-busy`, counted and
/// noted once), while the transparent ring stays transparent; every round
/// trip on both completes in order.
#[test]
fn slow_hand_overs_make_the_process_step_back() {
    require_root();
    let Some(held) = stepping_aside(&["slow", "3", "2"]) else {
        return;
    };
    let a = held.field("line_a");
    let b = held.field("line_b");
    assert!(
        a.contains(" sqpoll=transparent ") && a.contains(" transparent=on "),
        "{a}"
    );
    assert!(
        b.contains(" sqpoll=no ") && b.contains(" transparent=refused:poller-busy "),
        "{b}"
    );
    assert_eq!(held.field("b_round_trips"), "100");
    held.assert_one_poller_busy_refusal("slow hand-overs");
}
