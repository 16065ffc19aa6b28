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

use common::{launch, skip, CProgram, Run, EXIT_SKIP};

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
                "chains_split"
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
    let mut child = vars
        .iter()
        .fold(launch(build("live"), &[]), |l, (k, v)| l.var(k, v))
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start live");
    let mut err = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
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
    let base = std::env::temp_dir().join(format!("rsuring-stats-test.{}", std::process::id()));
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let dir = base.with_extension(
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .to_string(),
    );
    fs::create_dir_all(&dir).expect("create a temp dir");
    TempDir(dir)
}
