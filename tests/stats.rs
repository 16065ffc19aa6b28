//! Per-ring statistics in real programs: drives `c_tests/stats/*.c` (built
//! against our headers, linked to our library) and `rsuring-stat`.
//!
//! Every program runs with the `RSURING_*` variables, `LD_PRELOAD` and
//! `LD_LIBRARY_PATH` removed from the inherited environment and exactly the
//! ones a case names set. Exit status 77 means the machine lacks something
//! (io_uring, SQPOLL, a second CPU): reported as skipped, and a failure
//! under `RSURING_STRICT=1`.
//!
//! Needs `cargo build --release` first (the cdylib and `rsuring-stat`).

mod common;

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{launch, skip, CProgram, Run, EXIT_SKIP, NOBODY};

#[path = "stats/metrics.rs"]
mod metrics;
#[path = "stats/shared_rings.rs"]
mod shared_rings;

/// `rsuring-stat` of the same profile.
fn stat_tool() -> PathBuf {
    let p = common::profile_dir().join("rsuring-stat");
    assert!(
        p.exists(),
        "{} is missing: run `cargo build --release` first",
        p.display()
    );
    p
}

/// `c_tests/stats/<name>.c`, built once per test process.
fn build(name: &str) -> PathBuf {
    CProgram::new(name, format!("c_tests/stats/{name}.c")).build()
}

/// Runs `bin` with a clean `RSURING_*` environment plus `vars`.
fn run(bin: &Path, args: &[&str], vars: &[(&str, &str)]) -> Run {
    vars.iter()
        .fold(launch(bin, args), |l, (k, v)| l.var(k, v))
        .run()
}

/// What these tests read from a run's output.
trait StatsOutput {
    /// The `rsuring: pid=...` lines of stderr, as key → value maps.
    fn stat_lines(&self) -> Vec<HashMap<String, String>>;
    /// The lines of stderr that are not statistics lines.
    fn other_lines(&self) -> Vec<&str>;
}

impl StatsOutput for Run {
    fn stat_lines(&self) -> Vec<HashMap<String, String>> {
        stat_lines(&self.stderr, "rsuring: pid=")
    }

    fn other_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| !l.starts_with("rsuring: pid="))
            .collect()
    }
}

fn field(text: &str, key: &str) -> Option<String> {
    let prefix = format!("{key}=");
    text.split_whitespace()
        .find_map(|t| t.strip_prefix(&prefix).map(str::to_string))
}

fn stat_lines(text: &str, prefix: &str) -> Vec<HashMap<String, String>> {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .map(|l| rsuring::live_view::parse_line(l).into_iter().collect())
        .collect()
}

fn get<'a>(line: &'a HashMap<String, String>, key: &str) -> &'a str {
    line.get(key)
        .map_or_else(|| panic!("no {key} in {line:?}"), String::as_str)
}

/// Checks `key=value` pairs of a statistics line.
fn expect(line: &HashMap<String, String>, want: &[(&str, &str)], ctx: &Run) {
    for (k, v) in want {
        assert_eq!(get(line, k), *v, "{k} of {line:?}\n{}", ctx.describe());
    }
}

/// The line of ring `fd` (and pid `pid`).
fn line_of<'a>(
    lines: &'a [HashMap<String, String>],
    pid: &str,
    fd: &str,
    ctx: &Run,
) -> &'a HashMap<String, String> {
    let found: Vec<_> = lines
        .iter()
        .filter(|l| get(l, "pid") == pid && get(l, "ring") == fd)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "want one line for pid {pid} ring {fd}:\n{}",
        ctx.describe()
    );
    found[0]
}

const RING_A: &[(&str, &str)] = &[
    ("sqes", "1000"),
    ("cqes", "1000"),
    ("enters", "100"),
    ("enters_submit", "50"),
    ("enters_wait", "50"),
    ("enters_sqwait", "0"),
    ("wakeups", "0"),
    ("reap_batches", "100"),
    ("reap_mean", "10.0"),
    ("reap_max", "10"),
    ("sqpoll", "no"),
    ("poller_cpu", "none"),
    ("end", "process_exit"),
];

const RING_B: &[(&str, &str)] = &[
    ("sqes", "7"),
    ("cqes", "7"),
    ("enters", "1"),
    ("enters_wait", "1"),
    ("reap_batches", "1"),
    ("reap_max", "7"),
    ("end", "ring_exit"),
];

/// A program that exits without io_uring_queue_exit still reports its
/// ring, with exact counts for a known NOP workload, from the main thread
/// and from another thread calling exit().
#[test]
fn rings_never_torn_down_are_reported_at_process_exit() {
    let bin = build("exits");
    for mode in ["nop-exit", "thread-exit"] {
        let r = run(&bin, &[mode], &[("RSURING_STATS", "1")]);
        if !r.expect_pass() {
            return;
        }
        let lines = r.stat_lines();
        assert_eq!(lines.len(), 2, "want two lines:\n{}", r.describe());
        assert!(
            r.other_lines().is_empty(),
            "unexpected stderr:\n{}",
            r.describe()
        );
        let pid = r.field("pid");
        expect(line_of(&lines, &pid, &r.field("ring_a"), &r), RING_A, &r);
        expect(line_of(&lines, &pid, &r.field("ring_b"), &r), RING_B, &r);
    }
}

/// After fork(), the child reports what it did (its own ring; not the
/// parent's ring it never used), the parent only what the parent did.
#[test]
fn a_forked_child_reports_its_own_activity() {
    let r = run(&build("exits"), &["fork"], &[("RSURING_STATS", "1")]);
    if !r.expect_pass() {
        return;
    }
    let lines = r.stat_lines();
    assert_eq!(
        lines.len(),
        2,
        "want one line per process:\n{}",
        r.describe()
    );
    let child = line_of(&lines, &r.field("child"), &r.field("ring_c"), &r);
    expect(
        child,
        &[
            ("sqes", "30"),
            ("cqes", "30"),
            ("enters", "30"),
            ("end", "process_exit"),
        ],
        &r,
    );
    let parent = line_of(&lines, &r.field("parent"), &r.field("ring_a"), &r);
    expect(
        parent,
        &[
            ("sqes", "150"),
            ("cqes", "150"),
            ("enters", "150"),
            ("reap_batches", "150"),
        ],
        &r,
    );
}

/// RSURING_STATS=json:PATH: the same fields as JSON lines in PATH, nothing
/// on stderr.
#[test]
fn json_lines_go_to_the_named_file() {
    let dir = tempdir();
    let path = dir.0.join("stats.jsonl");
    let spec = format!("json:{}", path.display());
    let r = run(&build("exits"), &["nop-exit"], &[("RSURING_STATS", &spec)]);
    if !r.expect_pass() {
        return;
    }
    assert!(
        r.stderr.is_empty(),
        "stderr must stay quiet:\n{}",
        r.describe()
    );
    let text = fs::read_to_string(&path).expect("the JSON file");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let a = lines
        .iter()
        .find(|l| l.contains(&format!("\"ring\":{},", r.field("ring_a"))))
        .unwrap_or_else(|| panic!("no line for ring A: {text}"));
    for part in [
        format!("{{\"pid\":{},", r.field("pid")),
        "\"sqpoll\":\"no\",\"poller_cpu\":null,".to_string(),
        "\"sqes\":1000,\"cqes\":1000,\"enters\":100,\"enters_submit\":50,\"enters_wait\":50,"
            .to_string(),
        "\"reap_batches\":100,\"reap_mean\":10.0,\"reap_max\":10,".to_string(),
        "\"end\":\"process_exit\"}".to_string(),
    ] {
        assert!(a.contains(&part), "{part} not in {a}");
    }
}

/// One thread submits 500,000 NOPs while another reaps them: the counts
/// are exact (they used to wrap to 4,295,167,296).
#[test]
fn one_submitter_and_one_reaper_count_exactly() {
    let bin = build("exits");
    let r = run(&bin, &["threads"], &[]);
    if !r.expect_pass() {
        return;
    }
    assert!(
        r.stderr.is_empty(),
        "rsuring_stats_enable alone prints nothing:\n{}",
        r.describe()
    );
    let r = run(&bin, &["threads"], &[("RSURING_STATS", "1")]);
    if !r.expect_pass() {
        return;
    }
    let lines = r.stat_lines();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    expect(
        &lines[0],
        &[("sqes", "500000"), ("cqes", "500000"), ("end", "ring_exit")],
        &r,
    );
}

/// rsuring_stats_format: snprintf-like length and truncation, errors.
#[test]
fn the_format_function_writes_the_same_line() {
    let bin = build("exits");
    for vars in [&[][..], &[("RSURING_STATS", "1")][..]] {
        let r = run(&bin, &["format"], vars);
        if !r.expect_pass() {
            return;
        }
        let line = r.stdout.lines().next().unwrap_or_default();
        let fields = rsuring::live_view::parse_line(line);
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "pid",
                "ring",
                "flags",
                "sq_entries",
                "cq_entries",
                "sqpoll",
                "poller_cpu",
                "poller_rings",
                "sqes",
                "cqes",
                "enters",
                "enters_submit",
                "enters_wait",
                "enters_sqwait",
                "wakeups",
                "reap_batches",
                "reap_mean",
                "reap_max",
                "chains_split",
                "cq_overflow",
                "submit_hist",
                "reap_hist",
                "wait_hist_us",
                "wait_ns"
            ],
            "{}",
            r.describe()
        );
    }
}

/// RSURING_STATS takes the boolean words every RSURING_* boolean takes; a
/// malformed value and a misspelt name each give one warning line.
#[test]
fn boolean_words_and_misspelt_names() {
    let bin = build("exits");
    // (environment, statistics lines, warning lines naming ...)
    type Case<'a> = (&'a [(&'a str, &'a str)], usize, &'a [&'a str]);
    let cases: &[Case] = &[
        (&[("RSURING_STATS", "yes")], 2, &[]),
        (&[("RSURING_STATS", " ON ")], 2, &[]),
        (&[("RSURING_STATS", "true")], 2, &[]),
        (&[("RSURING_STATS", "off")], 0, &[]),
        (&[("RSURING_STATS", "0")], 0, &[]),
        (&[("RSURING_STATS", "2")], 0, &["RSURING_STATS=\"2\""]),
        (
            &[("RSURING_STATS", "json:")],
            0,
            &["RSURING_STATS=\"json:\""],
        ),
        (
            &[("RSURING_SQPOLL", "maybe")],
            0,
            &["RSURING_SQPOLL=\"maybe\""],
        ),
        (
            &[("RSURING_STATS", "1"), ("RSURING_SQPOL", "1")],
            2,
            &["RSURING_SQPOL ignored (did you mean RSURING_SQPOLL?)"],
        ),
        (
            &[("RSURING_STATZ", "1")],
            0,
            &["RSURING_STATZ ignored (did you mean RSURING_STATS?)"],
        ),
        (
            &[("RSURING_BLESS", "1")],
            0,
            &["RSURING_BLESS ignored (rsuring reads RSURING_SQPOLL_PERCPU"],
        ),
        (
            &[
                ("RSURING_QUIET_UNKNOWN", "RSURING_STRICT,RSURING_BLESS"),
                ("RSURING_STRICT", "1"),
                ("RSURING_BLESS", "1"),
            ],
            0,
            &[],
        ),
        (
            &[("RSURING_QUIET_UNKNOWN", "1"), ("RSURING_STATZ", "1")],
            0,
            &[],
        ),
    ];
    for (vars, stat_lines, warnings) in cases {
        let r = run(&bin, &["nop-exit"], vars);
        if !r.expect_pass() {
            return;
        }
        assert_eq!(
            r.stat_lines().len(),
            *stat_lines,
            "statistics lines:\n{}",
            r.describe()
        );
        let other = r.other_lines();
        assert_eq!(
            other.len(),
            warnings.len(),
            "warning lines:\n{}",
            r.describe()
        );
        for (line, want) in other.iter().zip(warnings.iter()) {
            assert!(
                line.starts_with("rsuring: ") && line.contains(want),
                "{want}:\n{}",
                r.describe()
            );
        }
    }
}

/// In a set-id program (AT_SECURE) no RSURING_* variable is read, as with
/// secure_getenv: a setuid copy of the same program, run by another user
/// with RSURING_STATS=1 and a misspelt name, prints neither statistics nor
/// a warning, where the ordinary binary prints both.
#[test]
fn set_id_programs_read_no_variable() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("set-id program", "needs root to make a setuid copy");
        return;
    }
    let bin = build("exits");
    let vars = [("RSURING_STATS", "1"), ("RSURING_STATZ", "1")];
    let r = run(&bin, &["nop-exit"], &vars);
    if !r.expect_pass() {
        return;
    }
    assert_eq!(r.stat_lines().len(), 2, "{}", r.describe());
    assert_eq!(r.other_lines().len(), 1, "{}", r.describe());

    let dir = common::Removed(common::area().bin_dir.join(common::unique("suid")));
    fs::create_dir(&dir.0).expect("create the setuid directory");
    fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.0.join("exits");
    fs::copy(&bin, &copy).expect("copy the binary");
    std::os::unix::fs::chown(&copy, Some(common::NOBODY), Some(common::NOBODY)).expect("chown");
    // chown clears set-id bits: set them after it.
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o4755)).unwrap();
    let r = vars
        .iter()
        .fold(launch(&copy, &["nop-exit"]), |l, (k, v)| l.var(k, v))
        .user(4242)
        .run();
    if !r.expect_pass() {
        return;
    }
    assert_eq!(r.stat_lines().len(), 0, "{}", r.describe());
    assert_eq!(r.other_lines().len(), 0, "{}", r.describe());
}

/// A running program (kept alive until its stdin closes), killed if the
/// test fails.
struct Running {
    child: Child,
    ready: String,
    stderr: std::thread::JoinHandle<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        // SAFETY: signals the process group we created (no-op once reaped).
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// Starts `c_tests/stats/live.c`; None when it skipped.
fn start_live(vars: &[(&str, &str)]) -> Option<Running> {
    start_live_as(vars, None)
}

/// [`start_live`] as user `user` (root when None).
fn start_live_as(vars: &[(&str, &str)], user: Option<u32>) -> Option<Running> {
    let mut live = launch(build("live"), &[]);
    if let Some(id) = user {
        live = live.user(id);
    }
    let live = vars.iter().fold(live, |l, (k, v)| l.var(k, v));
    let (mut child, stderr) = live.spawn_talking("live");
    let mut ready = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .expect("read live's stdout");
    let mut running = Running {
        child,
        ready,
        stderr,
    };
    if !running.ready.starts_with("ready") {
        let status = running.child.wait().expect("wait");
        let err = std::mem::replace(&mut running.stderr, std::thread::spawn(String::new))
            .join()
            .unwrap();
        if status.code() == Some(EXIT_SKIP) {
            skip("c_tests/stats/live", &err);
            return None;
        }
        panic!("live did not start ({status}):\n{err}");
    }
    Some(running)
}

impl Running {
    fn pid(&self) -> String {
        field(&self.ready, "pid").expect("pid=")
    }

    fn fds(&self) -> Vec<String> {
        field(&self.ready, "fds")
            .expect("fds=")
            .split(',')
            .map(str::to_string)
            .collect()
    }

    /// Closes stdin and returns the program's stderr once it exited.
    fn finish(mut self) -> String {
        drop(self.child.stdin.take());
        let status = self.child.wait().expect("wait");
        let err = std::mem::replace(&mut self.stderr, std::thread::spawn(String::new))
            .join()
            .unwrap();
        assert!(status.success(), "live failed ({status}):\n{err}");
        err
    }
}

fn stat(args: &[&str]) -> Run {
    run(&stat_tool(), args, &[])
}

/// The rings and pollers `rsuring-stat --once` must list for live.c: ring
/// fd → (poller_cpu, poller_rings, sqes).
fn check_once(once: &Run, live: &Running, with_stats: bool) {
    assert_eq!(once.code, Some(0), "{}", once.describe());
    let rings = stat_lines(&once.stdout, "rsuring: pid=");
    let pollers = stat_lines(&once.stdout, "rsuring-poller: pid=");
    let fds = live.fds();
    assert_eq!(rings.len(), 4, "four rings:\n{}", once.describe());
    let ring = |fd: &str| {
        rings
            .iter()
            .find(|l| get(l, "ring") == fd)
            .unwrap_or_else(|| panic!("no ring {fd}:\n{}", once.describe()))
    };
    let want = [
        ("0", "2", "10"),
        ("0", "2", "20"),
        ("1", "1", "30"),
        ("none", "0", "40"),
    ];
    for (fd, (cpu, members, sqes)) in fds.iter().zip(want) {
        let l = ring(fd);
        assert_eq!(get(l, "pid"), live.pid());
        if with_stats {
            let sqpoll = if cpu == "none" { "no" } else { "shared" };
            let want = [
                ("sqpoll", sqpoll),
                ("poller_cpu", cpu),
                ("poller_rings", members),
                ("sqes", sqes),
                ("cqes", sqes),
                ("sq_fill", "0"),
                ("cq_fill", "0"),
            ];
            expect(l, &want, once);
        } else {
            expect(l, &[("stats", "off")], once);
        }
    }
    assert_eq!(
        get(ring(&fds[0]), "poller_tid"),
        get(ring(&fds[1]), "poller_tid")
    );
    assert!(
        !ring(&fds[3]).contains_key("poller_tid"),
        "{}",
        once.describe()
    );
    assert_eq!(
        pollers.len(),
        2,
        "two SQ poll threads:\n{}",
        once.describe()
    );
    for (cpu, members, ring_fds) in [
        ("0", "2", format!("{},{}", fds[0], fds[1])),
        ("1", "1", fds[2].clone()),
    ] {
        let p = pollers
            .iter()
            .find(|p| get(p, "cpu") == cpu)
            .unwrap_or_else(|| panic!("no poller on cpu {cpu}:\n{}", once.describe()));
        expect(
            p,
            &[
                ("bound", "yes"),
                ("rings", members),
                ("ring_fds", &ring_fds),
            ],
            once,
        );
        let tid = get(p, "tid");
        let served = fds
            .iter()
            .filter(|fd| ring(fd).get("poller_tid").map(String::as_str) == Some(tid));
        assert_eq!(served.count().to_string(), members, "{}", once.describe());
    }
}

/// `rsuring-stat --once PID` on a running program with rings on the shared
/// pollers of CPUs 0 and 1 (RSURING_SQPOLL_PERCPU=1) and a plain ring; the
/// interval view; the page removed at exit.
#[test]
fn rsuring_stat_lists_rings_and_pollers_of_a_running_program() {
    let vars = [("RSURING_STATS", "1"), ("RSURING_SQPOLL_PERCPU", "1")];
    let Some(live) = start_live(&vars) else {
        return;
    };
    let pid = live.pid();
    let page = PathBuf::from(format!("/dev/shm/rs-ringstats.{pid}"));
    assert!(page.exists(), "{} missing", page.display());
    check_once(&stat(&["--once", &pid]), &live, true);

    let watch = stat(&["-i", "0.2", "-n", "2", &pid]);
    assert_eq!(watch.code, Some(0), "{}", watch.describe());
    assert_eq!(
        watch.stdout.matches("SQE/s").count(),
        2,
        "{}",
        watch.describe()
    );
    assert_eq!(
        watch.stdout.matches("SQ tid").count(),
        2,
        "{}",
        watch.describe()
    );
    assert!(watch.stdout.contains("shared cpu1"), "{}", watch.describe());

    let list = stat(&[]);
    assert!(
        list.stdout
            .lines()
            .any(|l| l.split_whitespace().next() == Some(pid.as_str())),
        "the process list names {pid}:\n{}",
        list.describe()
    );

    let stderr = live.finish();
    let lines = stat_lines(&stderr, "rsuring: pid=");
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines.iter().all(|l| get(l, "end") == "process_exit"),
        "{stderr}"
    );
    assert!(!page.exists(), "{} left behind", page.display());
}

/// With statistics off the library creates nothing; `rsuring-stat` still
/// shows the rings and pollers the kernel reports.
#[test]
fn statistics_off_leave_no_trace_but_the_kernel_view_remains() {
    let Some(live) = start_live(&[("RSURING_SQPOLL_PERCPU", "1")]) else {
        return;
    };
    let pid = live.pid();
    assert!(!Path::new(&format!("/dev/shm/rs-ringstats.{pid}")).exists());
    let maps = fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    assert!(!maps.contains("ringstats"), "{maps}");
    let once = stat(&["--once", &pid]);
    assert!(
        once.stderr.contains("publishes no statistics"),
        "{}",
        once.describe()
    );
    check_once(&once, &live, false);
    assert_eq!(live.finish(), "");
}

#[test]
fn rsuring_stat_rejects_what_it_cannot_show() {
    let r = stat(&["--once", "999999999"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    let r = stat(&["--bogus"]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
    let r = stat(&["-i", "0", "1"]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn tempdir() -> TempDir {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rsuring-stats-test.{}.{n}", std::process::id()));
    fs::create_dir_all(&dir).expect("create a temp dir");
    TempDir(dir)
}

// ---- hostile local users -------------------------------------------------------
//
// /dev/shm is writable by every user and `rsuring-stat` is run as root:
// what another user leaves under a page's name must not crash, hang or
// fool it, nor displace a process's page or get removed as a stale one.

use rsuring::live_view::live::{self as page, PAGE_LEN};

/// Root, and setpriv to act as nobody; otherwise a skip.
fn hostile_setup(what: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip(
            what,
            "needs root (rsuring-stat as root against files of nobody)",
        );
        return false;
    }
    common::require_tool(what, "setpriv", "util-linux")
}

/// Runs `script` with `sh -c` as nobody; panics when it fails.
fn as_nobody(script: &str) {
    let r = launch("sh", &["-c", script])
        .nobody()
        .timeout(Duration::from_secs(20))
        .run();
    assert!(r.ok(), "as nobody: {}", r.describe());
}

/// The page path of `pid`, removed (whatever it is) when dropped.
struct PageName(PathBuf);

impl PageName {
    fn of(pid: u32) -> Self {
        let p = PageName(PathBuf::from(page::page_path(pid)));
        p.clear();
        p
    }

    fn clear(&self) {
        let _ = fs::remove_file(&self.0);
    }

    fn as_str(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for PageName {
    fn drop(&mut self) {
        self.clear();
    }
}

/// A `sleep` as root or nobody (same pid: setpriv execs), killed on drop.
struct Sleeper(Child);

impl Sleeper {
    fn start(user: Option<u32>) -> Self {
        let mut l = launch("sleep", &["300"]);
        if let Some(id) = user {
            l = l.user(id);
        }
        Sleeper(
            l.command()
                .stdin(Stdio::null())
                .spawn()
                .expect("start sleep"),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        // SAFETY: signals the process group we created.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// `rsuring-stat ARGS` with a deadline: a hang is a failure, not a stuck test.
fn stat_within(args: &[&str], secs: u64) -> Run {
    launch(stat_tool(), args)
        .timeout(Duration::from_secs(secs))
        .run()
}

/// A page of `pid` whose header claims every slot in use and whose slots
/// are all 0xff (odd generations: every slot live; rings of fd -1 with
/// 2^32-1 entries) but for the counters' bytes, all `counters`: 0xff makes
/// their sum overflow, 0x3f does not.
fn page_claiming_everything(pid: u32, counters: u8) -> Vec<u8> {
    let mut b = page::blank_page(pid);
    b[page::SLOTS_USED_AT..page::SLOTS_USED_AT + 4].copy_from_slice(&u32::MAX.to_ne_bytes());
    b[page::OVERFLOWED_AT..page::OVERFLOWED_AT + 4].copy_from_slice(&u32::MAX.to_ne_bytes());
    let slots = &mut b[page::SLOTS_AT..page::SLOTS_AT + page::SLOTS * page::SLOT_LEN];
    for slot in slots.chunks_mut(page::SLOT_LEN) {
        // The identity is the first 64 bytes; the counters follow.
        slot[..64].fill(0xff);
        slot[64..].fill(counters);
    }
    b
}

/// Writes `bytes` to a file nobody can read, in `dir`.
fn stage(dir: &TempDir, name: &str, bytes: &[u8]) -> String {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.0.join(name);
    fs::write(&path, bytes).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    path.to_str().unwrap().to_string()
}

/// As nobody: an empty file, a FIFO, a symbolic link to /etc/shadow, a
/// well-formed page under a root process's pid, a page its own process does
/// not map, random bytes. `rsuring-stat --once` and the process list, as
/// root, each give one line naming the reason, exit 0, within 10 s, and the
/// list still shows the process with real statistics.
#[test]
fn hostile_files_under_a_page_name_are_refused_cleanly() {
    if !hostile_setup("hostile_files_under_a_page_name_are_refused_cleanly") {
        return;
    }
    let vars = [("RSURING_STATS", "1"), ("RSURING_SQPOLL_PERCPU", "1")];
    let Some(live) = start_live(&vars) else {
        return;
    };
    let real = fs::read(page::page_path(live.pid().parse().unwrap())).expect("live's page");
    assert_eq!(real.len(), PAGE_LEN);
    let (root, nobody) = (Sleeper::start(None), Sleeper::start(Some(NOBODY)));
    let dir = tempdir();
    let mut forged = real.clone();
    forged[page::PID_AT..page::PID_AT + 4].copy_from_slice(&root.pid().to_ne_bytes());
    let forged_root = stage(&dir, "forged-root", &forged);
    let unmapped = stage(&dir, "unmapped", &page::blank_page(nobody.pid()));
    let len = PAGE_LEN.to_string();
    let no_stats = "publishes no statistics";
    // (what, whose pid, the script as nobody (F: the page's path), the reason)
    let cases: &[(&str, u32, String, &str)] = &[
        (
            "an empty file",
            root.pid(),
            ": > F".into(),
            "owned by uid 65534",
        ),
        (
            "an empty file of the process's user",
            nobody.pid(),
            ": > F".into(),
            "0 bytes long",
        ),
        ("a FIFO", root.pid(), "mkfifo F".into(), "a FIFO"),
        (
            "a FIFO of the process's user",
            nobody.pid(),
            "mkfifo F".into(),
            "a FIFO",
        ),
        (
            "a symlink to /etc/shadow",
            root.pid(),
            "ln -s /etc/shadow F".into(),
            "a symbolic link",
        ),
        (
            "a symlink to its page",
            nobody.pid(),
            format!("ln -s {unmapped} F"),
            "a symbolic link",
        ),
        (
            "another user's page",
            root.pid(),
            format!("cp {forged_root} F"),
            "owned by uid 65534",
        ),
        (
            "a page not mapped",
            nobody.pid(),
            format!("cp {unmapped} F"),
            no_stats,
        ),
        (
            "random bytes",
            nobody.pid(),
            format!("head -c {len} /dev/urandom > F"),
            no_stats,
        ),
    ];
    for (what, pid, script, reason) in cases {
        let name = PageName::of(*pid);
        as_nobody(&script.replace('F', name.as_str()));
        let pid = pid.to_string();
        let once = stat_within(&["--once", &pid], 10);
        let ctx = format!("{what}:\n{}", once.describe());
        assert_eq!(once.code, Some(0), "{ctx}");
        let err: Vec<&str> = once.stderr.lines().collect();
        assert_eq!(err.len(), 1, "one line on stderr: {ctx}");
        assert!(
            err[0].starts_with("rsuring-stat: ") && err[0].contains(reason),
            "{ctx}"
        );
        if *reason != no_stats {
            assert!(err[0].contains(name.as_str()), "names the file: {ctx}");
        }
        let list = stat_within(&[], 10);
        let ctx = format!("{what}:\n{}", list.describe());
        assert_eq!(list.code, Some(0), "{ctx}");
        let about: Vec<&str> = list
            .stderr
            .lines()
            .filter(|l| l.contains(name.as_str()))
            .collect();
        if *reason == no_stats {
            assert!(about.is_empty(), "{ctx}");
        } else {
            assert_eq!(about.len(), 1, "{ctx}");
            assert!(about[0].contains(reason), "{ctx}");
        }
        assert!(
            list.stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(&live.pid())),
            "the listing goes on: {ctx}"
        );
        assert!(
            !list
                .stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(&pid)),
            "{ctx}"
        );
        assert!(
            fs::symlink_metadata(&name.0).is_ok(),
            "the reader removes nothing: {ctx}"
        );
    }
    // nobody looking at root's page (0600): one line, the list stays quiet.
    let as_nobody_stat = |args: &[&str]| {
        launch(stat_tool(), args)
            .nobody()
            .timeout(Duration::from_secs(10))
            .run()
    };
    let once = as_nobody_stat(&["--once", &live.pid()]);
    assert_eq!(once.code, Some(0), "{}", once.describe());
    assert_eq!(once.stderr.lines().count(), 1, "{}", once.describe());
    assert!(once.stderr.contains("may not read"), "{}", once.describe());
    let list = as_nobody_stat(&[]);
    assert_eq!(list.code, Some(0), "{}", list.describe());
    assert!(!list.stderr.contains(&live.pid()), "{}", list.describe());
    live.finish();
}

/// A page truncated to nothing, grown back to zeros, rewritten with
/// counters whose sum overflows, then rewritten to claim every slot with
/// huge counts, by its own user (nobody), while `rsuring-stat -i` watches
/// as root: the view goes on to its count, one stderr line per change of
/// state, no signal; `--once` meanwhile exits 0, with one line per slot and
/// per kernel ring for the last page. Then the original bytes go back and
/// the process exits normally.
#[test]
fn a_live_view_survives_its_page_truncated_and_rewritten() {
    if !hostile_setup("a_live_view_survives_its_page_truncated_and_rewritten") {
        return;
    }
    let Some(live) = start_live_as(&[("RSURING_STATS", "1")], Some(NOBODY)) else {
        return;
    };
    let pid = live.pid();
    let file = page::page_path(pid.parse().unwrap());
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(fs::metadata(&file).expect("live's page").uid(), NOBODY);
    }
    let dir = tempdir();
    let overflowing = stage(
        &dir,
        "overflowing",
        &page_claiming_everything(pid.parse().unwrap(), 0xff),
    );
    let hostile = stage(
        &dir,
        "hostile",
        &page_claiming_everything(pid.parse().unwrap(), 0x3f),
    );
    let original = stage(&dir, "original", &fs::read(&file).unwrap());
    let count = 100;
    let watcher = {
        let watch = launch(stat_tool(), &["-i", "0.1", "-n", &count.to_string(), &pid])
            .timeout(Duration::from_secs(60));
        std::thread::spawn(move || watch.run())
    };
    let pause = || std::thread::sleep(Duration::from_millis(700));
    pause();
    as_nobody(&format!("truncate -s 0 {file}"));
    pause();
    as_nobody(&format!("truncate -s {PAGE_LEN} {file}"));
    pause();
    as_nobody(&format!(
        "dd if={overflowing} of={file} bs=1M conv=notrunc status=none"
    ));
    pause();
    let once = stat_within(&["--once", &pid], 20);
    assert_eq!(once.code, Some(0), "{}", once.describe());
    assert!(
        once.stderr.contains("counts more than 2^64"),
        "{}",
        once.describe()
    );
    as_nobody(&format!(
        "dd if={hostile} of={file} bs=1M conv=notrunc status=none"
    ));
    pause();
    let once = stat_within(&["--once", &pid], 20);
    assert_eq!(once.code, Some(0), "{}", once.describe());
    let rings = once
        .stdout
        .lines()
        .filter(|l| l.starts_with("rsuring: pid="))
        .count();
    assert!(
        rings == page::SLOTS + 4,
        "{rings} ring lines:\n{}",
        tail(&once.stdout, 2000)
    );
    // Back to what the process wrote: the view calms down.
    as_nobody(&format!(
        "dd if={original} of={file} bs=1M conv=notrunc status=none"
    ));
    let watch = watcher.join().unwrap();
    let ctx = watch.describe();
    assert_eq!(watch.code, Some(0), "{ctx}");
    assert_eq!(watch.stdout.matches("SQE/s").count(), count, "{ctx}");
    // One line per change of state, not per refresh. A rewrite (dd) can
    // meet a refresh half-done (tmpfs reads do not wait for writes): the
    // torn page is a state of its own and may add one line per rewrite, so
    // each kind shows once or twice and the lines stay far below the 100
    // refreshes; the same line never twice in a row.
    let lines_with = |what: &str| watch.stderr.lines().filter(|l| l.contains(what)).count();
    for what in [
        "0 bytes long",
        "does not know",
        "found no statistics slot",
        "counts more than 2^64",
    ] {
        let n = lines_with(what);
        assert!((1..=2).contains(&n), "{n} lines with {what:?}: {ctx}");
    }
    let lines: Vec<&str> = watch.stderr.lines().collect();
    assert!(lines.len() <= 2 * 5, "{} stderr lines: {ctx}", lines.len());
    assert!(
        lines.windows(2).all(|w| w[0] != w[1]),
        "a line repeated with no change: {ctx}"
    );
    // The page is the process's own: it exits normally, reports its four
    // rings and removes it.
    let stderr = live.finish();
    assert_eq!(stat_lines(&stderr, "rsuring: pid=").len(), 4, "{stderr}");
    assert!(!Path::new(&file).exists());
}

/// The last part of `s`.
fn tail(s: &str, n: usize) -> &str {
    common::tail(s, n)
}

/// Runs `exits nop-exit` with statistics on, under a pid whose page name
/// `prepare` (given the pid) has taken first: `sh` waits for a line on
/// stdin, then execs the program (same pid).
fn exits_under_a_taken_name(prepare: impl FnOnce(u32)) -> (std::process::ExitStatus, String) {
    let bin = build("exits");
    let mut child = launch(
        "sh",
        &[
            "-c",
            "read go && exec \"$0\" nop-exit",
            bin.to_str().unwrap(),
        ],
    )
    .var("RSURING_STATS", "1")
    .command()
    .stdin(Stdio::piped())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start sh");
    // (If `prepare` panics, dropping `child` closes sh's stdin: it exits.)
    let group = child.id() as i32;
    prepare(child.id());
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"go\n").unwrap();
    }
    let mut err = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            // SAFETY: our child's process group.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            panic!("exits hung under a taken page name");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (status, stderr.join().unwrap())
}

/// Another user took the page's name first (an empty file, a FIFO, a
/// symbolic link to a file of root's): the process keeps its statistics
/// private, prints its exit report, says why once, and leaves the file and
/// what a link points at alone. A leftover regular file of its own user
/// is replaced without a word.
#[test]
fn a_page_name_taken_by_another_user_keeps_the_statistics_private() {
    if !hostile_setup("a_page_name_taken_by_another_user_keeps_the_statistics_private") {
        return;
    }
    let dir = tempdir();
    let target = stage(&dir, "root-file", b"root's data\n");
    let cases: &[(&str, String)] = &[
        ("an empty file", ": > F".into()),
        ("a FIFO", "mkfifo F".into()),
        ("a symlink", format!("ln -s {target} F")),
        ("our own leftover", String::new()),
    ];
    for (what, script) in cases {
        let mut name = None;
        let (status, stderr) = exits_under_a_taken_name(|pid| {
            let n = PageName::of(pid);
            if script.is_empty() {
                fs::write(&n.0, b"left by an earlier program").unwrap();
            } else {
                as_nobody(&script.replace('F', n.as_str()));
            }
            name = Some(n);
        });
        let name = name.unwrap();
        let ctx = format!("{what}: {status}\n{stderr}");
        assert!(status.success(), "{ctx}");
        let stats = stat_lines(&stderr, "rsuring: pid=");
        assert_eq!(stats.len(), 2, "the exit report: {ctx}");
        let notes: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.starts_with("rsuring: pid="))
            .collect();
        if script.is_empty() {
            assert!(notes.is_empty(), "{ctx}");
            assert!(
                !name.0.exists(),
                "the page replaced it and went at exit: {ctx}"
            );
            continue;
        }
        assert_eq!(notes.len(), 1, "one note: {ctx}");
        assert!(
            notes[0].starts_with("rsuring: ")
                && notes[0].contains(name.as_str())
                && notes[0].contains("stay private"),
            "{ctx}"
        );
        assert!(fs::symlink_metadata(&name.0).is_ok(), "left alone: {ctx}");
        assert_eq!(fs::read(&target).unwrap(), b"root's data\n", "{ctx}");
    }
}

/// The stale sweep (a process publishing its page removes pages of dead
/// processes) removes only a page of a dead process of its own user: not
/// another user's page, a file of the wrong size, a page naming another
/// pid, a symbolic link, a FIFO (without hanging), a page of a live process.
#[test]
fn the_stale_sweep_removes_only_dead_pages_of_its_own_user() {
    if !hostile_setup("the_stale_sweep_removes_only_dead_pages_of_its_own_user") {
        return;
    }
    let dead: Vec<u32> = (0..6)
        .map(|_| {
            let mut c = std::process::Command::new("true").spawn().unwrap();
            c.wait().unwrap();
            c.id()
        })
        .collect();
    let alive = Sleeper::start(None);
    let dir = tempdir();
    let names: Vec<PageName> = dead.iter().map(|&p| PageName::of(p)).collect();
    let alive_name = PageName::of(alive.pid());
    let own = |pid: u32| page::blank_page(pid);
    let nobody_page = stage(&dir, "nobody-page", &own(dead[1]));
    let linked = stage(&dir, "linked", &own(dead[4]));
    fs::write(&names[0].0, own(dead[0])).unwrap();
    as_nobody(&format!("cp {nobody_page} {}", names[1].as_str()));
    fs::write(&names[2].0, b"short").unwrap();
    fs::write(&names[3].0, own(dead[3] ^ 1)).unwrap();
    std::os::unix::fs::symlink(&linked, &names[4].0).unwrap();
    let fifo = std::ffi::CString::new(names[5].as_str()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    fs::write(&alive_name.0, own(alive.pid())).unwrap();

    let r = launch(build("exits"), &["nop-exit"])
        .var("RSURING_STATS", "1")
        .timeout(Duration::from_secs(30))
        .run();
    if !r.expect_pass() {
        return;
    }
    assert!(
        !names[0].0.exists(),
        "a dead page of root's stays:\n{}",
        r.describe()
    );
    for (n, what) in names[1..].iter().zip([
        "another user's page",
        "a file of the wrong size",
        "a page naming another pid",
        "a symbolic link",
        "a FIFO",
    ]) {
        assert!(fs::symlink_metadata(&n.0).is_ok(), "{what} was removed");
    }
    assert!(Path::new(&linked).exists(), "the link's target was removed");
    assert!(alive_name.0.exists(), "a live process's page was removed");
}

/// A seeded libFuzzer run of fuzz/page.rs, the page parser (20 s of
/// fuzzing; the instrumented library is shared with the reliability
/// suite's fuzz run).
#[test]
fn the_page_parser_survives_fuzzing() {
    let r = common::launch::fuzz_script(&[
        "--target",
        "page",
        "-seed=1",
        "-max_total_time=20",
        "-timeout=10",
    ]);
    if r.skipped() {
        skip("the_page_parser_survives_fuzzing", r.stderr.trim());
        return;
    }
    println!(
        "page fuzz: {:.1}s (build included)",
        r.elapsed.as_secs_f64()
    );
    for s in r
        .stderr
        .lines()
        .filter(|l| l.starts_with("stat::") || l.starts_with("Done "))
    {
        println!("    {s}");
    }
    assert!(r.ok(), "fuzz run failed: {}", r.describe());
}
