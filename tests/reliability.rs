//! The reliability suite: rsuring under bad input, sanitizers, fuzzing,
//! stress, CQ overflow and signals, and real Debian programs. One test per
//! area; each compiles and runs its programs from `tests/reliability/` (and
//! `fuzz/`) with a timeout and says how long it took.
//!
//! Programs linked to our library get an RPATH to
//! `<target-dir>/<profile>/reliability_lib/`, which holds a `liburing.so.2`
//! symlink to `librsuring.so`; `ldd` must confirm it. A test is skipped (with
//! a message) only when a tool it needs is genuinely absent: valgrind, clang's
//! libFuzzer, Debian's liburing (for the comparisons), the Debian programs.
//!
//! Timings on the 2-core development machine: bad_input ~15 s, asan_ubsan
//! ~20 s, valgrind ~40 s, fuzz ~60 s (build included), stress ~15 s,
//! overflow_and_signals ~5 s, real_programs ~5 s.
//!
//! `RSURING_BLESS=1 cargo test --release --test reliability bad_input`
//! rewrites the table in docs/bad-input.md from the program's output.

mod common;

use std::fs;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const EXIT_SKIP: i32 = 77;

/// Debian's liburing (2.3 on bookworm): the reference for comparisons.
const DEBIAN_LIBURING: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/liburing.so.2",
    "/lib/x86_64-linux-gnu/liburing.so.2",
    "/usr/lib/aarch64-linux-gnu/liburing.so.2",
];

/// rsuring's environment knobs: cleared for every program, so the results
/// do not depend on how the suite is invoked (test.sh runs the C tests with
/// some of them set).
const RSURING_ENV: &[&str] = &[
    "RSURING_SQPOLL",
    "RSURING_SQPOLL_PERCPU",
    "RSURING_SQPOLL_CPUS",
    "RSURING_SQPOLL_IDLE_MS",
    "RSURING_STATS",
];

struct Env {
    repo: PathBuf,
    /// `<target-dir>/<profile>/librsuring.so`, canonicalized.
    lib: PathBuf,
    /// Directory with the `liburing.so.2` symlink, used as RPATH.
    lib_dir: PathBuf,
    /// Where compiled programs and their files go.
    out: PathBuf,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let lib = common::library();
        let lib_dir = common::library_dir("reliability_lib", &lib);
        let out = common::profile_dir().join("reliability");
        fs::create_dir_all(&out).expect("create reliability");
        Env {
            repo: common::repo(),
            lib,
            lib_dir,
            out,
        }
    })
}

fn debian_liburing() -> Option<PathBuf> {
    DEBIAN_LIBURING
        .iter()
        .map(Path::new)
        .find(|p| p.exists())
        .map(|p| p.to_path_buf())
}

/// "liburing 2.3 (Debian)" from the real file name (liburing.so.2.3).
fn debian_liburing_name(path: &Path) -> String {
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let file = real.file_name().unwrap_or_default().to_string_lossy();
    match file.strip_prefix("liburing.so.") {
        Some(v) => format!("liburing {v} (Debian)"),
        None => "liburing (Debian)".to_string(),
    }
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool} >/dev/null")])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// How a program is linked.
enum Link {
    /// To our library, through the RPATH symlink directory.
    Rsuring,
    /// To the system's liburing (`-luring`), with the system header.
    System,
    /// Not at all (the program dlopen()s what it tests).
    None,
}

/// Compiles C `sources` into `<out>/<name>` with -Wall -Wextra -Werror.
fn compile(name: &str, sources: &[PathBuf], link: Link, extra: &[&str]) -> PathBuf {
    let env = env();
    let bin = env.out.join(name);
    let file = bin.file_name().unwrap().to_string_lossy().into_owned();
    let tmp = bin.with_file_name(format!(".{file}.tmp{}", std::process::id()));
    let mut cmd = common::c_compiler(1);
    cmd.args(["-Wall", "-Wextra", "-Werror", "-std=gnu11", "-D_GNU_SOURCE"]);
    cmd.args(extra);
    if !matches!(link, Link::System) {
        cmd.arg(format!("-I{}", env.repo.join("include").display()));
    }
    cmd.arg("-o").arg(&tmp).args(sources);
    match link {
        Link::Rsuring => {
            cmd.arg(&env.lib)
                .arg("-lpthread")
                .arg("-Wl,--disable-new-dtags")
                .arg(format!("-Wl,-rpath,{}", env.lib_dir.display()));
        }
        Link::System => {
            cmd.args(["-luring", "-lpthread"]);
        }
        Link::None => {
            cmd.arg("-ldl");
        }
    }
    let shown = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler ({shown}): {e}"));
    assert!(
        output.status.success(),
        "compiling {name} failed\ncommand: {shown}\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    fs::rename(&tmp, &bin).expect("rename binary into place");
    if matches!(link, Link::Rsuring) {
        verify_linkage(&bin);
    }
    bin
}

/// `ldd` must resolve liburing.so.2 of `bin` to our library.
fn verify_linkage(bin: &Path) {
    let env = env();
    let output = Command::new("ldd").arg(bin).output().expect("ldd");
    let text = String::from_utf8_lossy(&output.stdout);
    let resolved: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("liburing.so.2 => "))
        .map(|rest| rest.split(" (").next().unwrap_or(rest).trim())
        .collect();
    assert_eq!(
        resolved.len(),
        1,
        "{}: ldd shows no single liburing.so.2:\n{text}",
        bin.display()
    );
    let path = Path::new(resolved[0]).canonicalize().expect("canonicalize");
    assert_eq!(
        path,
        env.lib,
        "{}: liburing.so.2 resolves to {}, not our library\n{text}",
        bin.display(),
        path.display()
    );
}

struct Run {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Run {
    fn ok(&self) -> bool {
        self.code == Some(0)
    }

    fn describe(&self) -> String {
        let how = if self.timed_out {
            "timed out".to_string()
        } else if let Some(c) = self.code {
            format!("exit status {c}")
        } else {
            format!("killed by signal {}", self.signal.unwrap_or(0))
        };
        format!(
            "{how} after {:.1}s\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.took.as_secs_f64(),
            tail(&self.stdout, 6000),
            tail(&self.stderr, 6000)
        )
    }
}

fn tail(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut start = s.len() - n;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Runs `cmd` (environment cleaned of rsuring's knobs) with a timeout,
/// collecting its output; the whole process group is killed on timeout.
fn run(mut cmd: Command, timeout: Duration) -> Run {
    for var in RSURING_ENV {
        cmd.env_remove(var);
    }
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {:?}: {e}", cmd.get_program()));
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            // SAFETY: kill(2) on the child's own process group.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = start.elapsed();
    Run {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        took,
    }
}

fn src(rel: &str) -> PathBuf {
    env().repo.join(rel)
}

// ---- 1. bad input ----------------------------------------------------------

/// Where the bad-input table is documented (its only table).
const BAD_INPUT_DOC: &str = "docs/bad-input.md";

/// The table rows of the document.
fn doc_table(doc: &str) -> Vec<String> {
    doc.lines()
        .filter(|l| l.starts_with('|'))
        .map(str::to_string)
        .collect()
}

/// The document with its table replaced by `table`.
fn doc_with_table(doc: &str, table: &[String]) -> String {
    let first = doc
        .find("\n|")
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{BAD_INPUT_DOC} has no table"));
    let mut last = first;
    for line in doc[first..].split_inclusive('\n') {
        if !line.starts_with('|') {
            break;
        }
        last += line.len();
    }
    let mut out = String::new();
    out.push_str(&doc[..first]);
    for row in table {
        out.push_str(row);
        out.push('\n');
    }
    out.push_str(&doc[last..]);
    out
}

/// Drops the reference column (the 4th) of a table row.
fn three_columns(row: &str) -> String {
    let cells: Vec<&str> = row.split(" | ").collect();
    if cells.len() >= 4 {
        format!("{} |", cells[..3].join(" | "))
    } else {
        row.to_string()
    }
}

#[test]
fn bad_input() {
    let env = env();
    let bin = compile(
        "bad_input",
        &[src("tests/reliability/bad_input.c")],
        Link::None,
        &[],
    );
    let mut cmd = Command::new(&bin);
    cmd.arg("--lib").arg(&env.lib).arg("--markdown");
    let reference = debian_liburing();
    match &reference {
        Some(r) => {
            cmd.arg("--ref")
                .arg(r)
                .arg("--ref-name")
                .arg(debian_liburing_name(r));
        }
        None => println!("bad_input: no Debian liburing: the comparison column is not checked"),
    }
    let r = run(cmd, Duration::from_secs(240));
    println!("bad_input: {:.1}s", r.took.as_secs_f64());
    for line in r.stderr.lines() {
        println!("    {line}");
    }
    assert!(r.ok(), "bad_input failed: {}", r.describe());

    let table: Vec<String> = r.stdout.lines().map(str::to_string).collect();
    let doc_path = env.repo.join(BAD_INPUT_DOC);
    let doc = fs::read_to_string(&doc_path).expect("read the bad-input document");
    if std::env::var_os("RSURING_BLESS").is_some() {
        fs::write(&doc_path, doc_with_table(&doc, &table)).expect("write the bad-input document");
        println!(
            "bad_input: {BAD_INPUT_DOC} table rewritten ({} rows)",
            table.len() - 2
        );
        return;
    }
    let documented = doc_table(&doc);
    let (ours, theirs): (Vec<String>, Vec<String>) = if reference.is_some() {
        (table, documented)
    } else {
        (
            table.iter().map(|r| three_columns(r)).collect(),
            documented.iter().map(|r| three_columns(r)).collect(),
        )
    };
    if ours != theirs {
        let diff: Vec<String> = ours
            .iter()
            .filter(|r| !theirs.contains(r))
            .map(|r| format!("+ {r}"))
            .chain(
                theirs
                    .iter()
                    .filter(|r| !ours.contains(r))
                    .map(|r| format!("- {r}")),
            )
            .take(40)
            .collect();
        panic!(
            "{BAD_INPUT_DOC}'s table is out of date (regenerate with \
             RSURING_BLESS=1 cargo test --release --test reliability bad_input):\n{}",
            diff.join("\n")
        );
    }
    println!(
        "bad_input: {} cases, {BAD_INPUT_DOC} table in sync",
        ours.len() - 2
    );
}

// ---- 2. sanitizers -----------------------------------------------------------

/// The C scenario tests (c_tests/*.c), as tests/c_tests.rs runs them.
fn c_test_sources() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(env().repo.join("c_tests"))
        .expect("read c_tests/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "c"))
        .collect();
    v.sort();
    v
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// One error or leak report of a sanitizer / valgrind log, and whether any
/// of its frames is in rsuring (librsuring.so or one of our .rs sources).
struct Report {
    text: String,
    in_rsuring: bool,
    is_leak: bool,
}

fn frames_in_rsuring(text: &str) -> bool {
    text.contains("librsuring.so") || text.contains("rsuring::") || text.contains(".rs:")
}

/// Splits an LSan report into its leak blocks.
fn lsan_leaks(stderr: &str) -> Vec<Report> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in stderr.lines() {
        if line.starts_with("Direct leak") || line.starts_with("Indirect leak") {
            if let Some(t) = cur.take() {
                out.push(t);
            }
            cur = Some(String::new());
        } else if line.starts_with("SUMMARY:") {
            if let Some(t) = cur.take() {
                out.push(t);
            }
        }
        if let Some(t) = cur.as_mut() {
            t.push_str(line);
            t.push('\n');
        }
    }
    out.extend(cur);
    out.into_iter()
        .map(|text| Report {
            in_rsuring: frames_in_rsuring(&text),
            is_leak: true,
            text,
        })
        .collect()
}

/// ASan + UBSan: every c_tests program built with
/// -fsanitize=address,undefined and linked to our (uninstrumented) library;
/// ASan's interceptors still see every malloc/free the library makes, and
/// LeakSanitizer reports leaks with the library's frames symbolized. Leaks
/// whose stack has no frame in rsuring are reported but tolerated.
#[test]
fn asan_ubsan() {
    let start = Instant::now();
    let mut failures = Vec::new();
    let mut outside = 0;
    for source in c_test_sources() {
        let name = stem(&source);
        let bin = compile(
            &format!("asan_{name}"),
            std::slice::from_ref(&source),
            Link::Rsuring,
            &[
                "-fsanitize=address,undefined",
                "-fno-sanitize-recover=undefined",
                "-fno-omit-frame-pointer",
            ],
        );
        let mut asan = String::from("detect_leaks=1:halt_on_error=1:exitcode=86");
        if name == "setup" {
            // setup.c checks MADV_DONTFORK by touching an unmapped ring in
            // a forked child and expecting SIGSEGV; ASan must let it die.
            asan.push_str(":handle_segv=0");
        }
        let mut cmd = Command::new(&bin);
        cmd.current_dir(&env().out)
            .env("ASAN_OPTIONS", &asan)
            .env("LSAN_OPTIONS", "exitcode=87")
            .env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1");
        let r = run(cmd, Duration::from_secs(60));
        let leaks = lsan_leaks(&r.stderr);
        let ours = leaks.iter().filter(|l| l.in_rsuring).count();
        outside += leaks.len() - ours;
        let status = match r.code {
            Some(0) | Some(EXIT_SKIP) => "ok",
            Some(87) if ours == 0 => "ok (leaks outside rsuring only)",
            _ => "FAILED",
        };
        println!(
            "asan_ubsan {name} ... {status} ({:.2}s)",
            r.took.as_secs_f64()
        );
        if status == "FAILED" {
            failures.push(format!("{name}: {}", r.describe()));
        }
        for l in leaks.iter().filter(|l| !l.in_rsuring) {
            println!("    leak outside rsuring (tolerated):\n{}", l.text);
        }
    }
    // The suite's own multi-threaded programs too: the shared-SQPOLL
    // registry under 8 threads (a shorter stress run), overflow and signals.
    for (name, source, args, defs) in [
        (
            "stress",
            "tests/reliability/stress.c",
            &["8", "300", "3"][..],
            &[][..],
        ),
        (
            "overflow_signals",
            "tests/reliability/overflow_signals.c",
            &[][..],
            &["-DWITH_RSURING"][..],
        ),
    ] {
        let mut flags = vec![
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=undefined",
            "-fno-omit-frame-pointer",
        ];
        flags.extend_from_slice(defs);
        let bin = compile(
            &format!("asan_{name}"),
            &[src(source)],
            Link::Rsuring,
            &flags,
        );
        let mut cmd = Command::new(&bin);
        cmd.args(args)
            .env("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1:exitcode=86")
            .env("LSAN_OPTIONS", "exitcode=87")
            .env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1");
        let r = run(cmd, Duration::from_secs(120));
        let leaks = lsan_leaks(&r.stderr);
        let ok = r.ok() || (r.code == Some(87) && leaks.iter().all(|l| !l.in_rsuring));
        println!(
            "asan_ubsan {name} (reliability) ... {} ({:.2}s)",
            if ok { "ok" } else { "FAILED" },
            r.took.as_secs_f64()
        );
        if !ok {
            failures.push(format!("{name}: {}", r.describe()));
        }
    }
    println!(
        "asan_ubsan: {} programs, {} failures, {outside} leaks outside rsuring, {:.1}s",
        c_test_sources().len() + 2,
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `valgrind ARGS...`, run in the output directory.
fn valgrind_command(args: &[String]) -> Command {
    let mut cmd = Command::new("valgrind");
    cmd.current_dir(&env().out).args(args);
    cmd
}

/// c_tests programs not run under valgrind, and why.
const VALGRIND_SKIP: &[(&str, &str)] = &[(
    "wait_timeout",
    "asserts that completions land inside millisecond wait windows; \
     valgrind's 20-50x slowdown makes that fail by timing, not by memory",
)];

/// Splits a valgrind log into error and leak records ("==PID== X" blocks).
fn valgrind_reports(log: &str) -> Vec<Report> {
    let mut blocks: Vec<String> = Vec::new();
    let mut cur = String::new();
    for line in log.lines() {
        let body = match line.find("== ") {
            Some(i) if line.starts_with("==") => &line[i + 3..],
            _ => continue,
        };
        if body.trim().is_empty() {
            if !cur.is_empty() {
                blocks.push(std::mem::take(&mut cur));
            }
            continue;
        }
        cur.push_str(body);
        cur.push('\n');
    }
    if !cur.is_empty() {
        blocks.push(cur);
    }
    blocks
        .into_iter()
        .filter(|b| {
            VALGRIND_ERROR_STARTS.iter().any(|k| b.starts_with(k))
                || b.contains(" lost in loss record ")
        })
        .filter(|b| !b.contains("possibly lost") && !b.contains("still reachable"))
        .map(|text| Report {
            in_rsuring: frames_in_rsuring(&text),
            is_leak: text.contains(" lost in loss record "),
            text,
        })
        .collect()
}

/// How memcheck's error records begin (a program killed by a signal also
/// prints a stack, which is not an error record: its exit status tells).
const VALGRIND_ERROR_STARTS: &[&str] = &[
    "Invalid ",
    "Conditional jump",
    "Use of uninitialised",
    "Syscall param",
    "Mismatched free",
    "Source and destination overlap",
    "Argument ",
    "Jump to the invalid address",
];

/// valgrind memcheck over the c_tests programs (all but VALGRIND_SKIP),
/// linked to our library: no invalid access or uninitialised use anywhere,
/// and no definite/indirect leak with a frame in rsuring. The suppressions
/// in tests/reliability/valgrind.supp cover one thing only: memcheck cannot
/// see data the kernel writes into user buffers for io_uring requests, so a
/// test program checking that data looks like it branches on uninitialised
/// memory (see the file).
#[test]
fn valgrind() {
    if !have("valgrind") {
        println!("valgrind: skipped: valgrind is not installed (apt-get install valgrind)");
        return;
    }
    let env = env();
    let start = Instant::now();
    let supp = src("tests/reliability/valgrind.supp");
    // The suppressions match the test binaries by directory.
    let dir = env.out.join("valgrind_bin");
    fs::create_dir_all(&dir).expect("create valgrind_bin");
    let mut failures = Vec::new();
    let mut count = 0;
    for source in c_test_sources() {
        let name = stem(&source);
        if let Some((_, why)) = VALGRIND_SKIP.iter().find(|(n, _)| *n == name) {
            println!("valgrind {name} ... not run: {why}");
            continue;
        }
        count += 1;
        let built = compile(
            &format!("valgrind_bin/{name}"),
            std::slice::from_ref(&source),
            Link::Rsuring,
            &[],
        );
        let args: Vec<String> = vec![
            "--error-exitcode=99".into(),
            "--leak-check=full".into(),
            "--errors-for-leak-kinds=definite,indirect".into(),
            "--show-leak-kinds=definite,indirect".into(),
            format!("--suppressions={}", supp.display()),
            built.display().to_string(),
        ];
        let mut r = run(valgrind_command(&args), Duration::from_secs(120));
        let mut reports = valgrind_reports(&r.stderr);
        if !r.ok() && r.code != Some(EXIT_SKIP) && reports.is_empty() {
            // No memory error, yet the program failed: its own timing
            // assertions under valgrind's slowdown. Memory is what this
            // test checks (c_tests checks behaviour): one more try.
            println!("valgrind {name}: failed without a memcheck error, retrying once");
            r = run(valgrind_command(&args), Duration::from_secs(120));
            reports = valgrind_reports(&r.stderr);
        }
        let blocking: Vec<&Report> = reports
            .iter()
            .filter(|x| !x.is_leak || x.in_rsuring)
            .collect();
        let tolerated = reports.len() - blocking.len();
        let status = match r.code {
            Some(0) | Some(EXIT_SKIP) if blocking.is_empty() => "ok",
            Some(99) if blocking.is_empty() => "ok (leaks outside rsuring only)",
            _ => "FAILED",
        };
        println!(
            "valgrind {name} ... {status} ({:.2}s)",
            r.took.as_secs_f64()
        );
        for x in reports.iter().filter(|x| x.is_leak && !x.in_rsuring) {
            println!("    leak outside rsuring (tolerated):\n{}", x.text);
        }
        if tolerated > 0 {
            println!("    {tolerated} leak(s) outside rsuring tolerated");
        }
        if status == "FAILED" {
            let details: Vec<&str> = blocking.iter().map(|x| x.text.as_str()).collect();
            failures.push(format!(
                "{name}: {}\n--- valgrind ---\n{}",
                r.describe(),
                tail(&details.join("\n"), 8000)
            ));
        }
    }
    println!(
        "valgrind: {count} programs, {} failures, {:.1}s",
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---- 3. fuzzing ----------------------------------------------------------------

/// A seeded libFuzzer run of fuzz/ring_ops.c (at most ~45 s of fuzzing).
#[test]
fn fuzz_seeded() {
    let env = env();
    let mut cmd = Command::new("bash");
    cmd.current_dir(&env.repo)
        .env("RSURING_FUZZ_FRESH", "1")
        .args([
            "fuzz/run.sh",
            "-seed=1",
            "-runs=4000",
            "-max_total_time=45",
            "-timeout=20",
        ]);
    let r = run(cmd, Duration::from_secs(420));
    if r.code == Some(EXIT_SKIP) {
        println!("fuzz_seeded: skipped: {}", r.stderr.trim());
        return;
    }
    let stats: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("stat::") || l.starts_with("Done ") || l.contains("DONE "))
        .collect();
    println!("fuzz_seeded: {:.1}s (build included)", r.took.as_secs_f64());
    for s in &stats {
        println!("    {s}");
    }
    assert!(r.ok(), "fuzz run failed: {}", r.describe());
}

// ---- 4. stress ------------------------------------------------------------------

#[test]
fn stress() {
    let bin = compile(
        "stress",
        &[src("tests/reliability/stress.c")],
        Link::Rsuring,
        &["-O2"],
    );
    let mut cmd = Command::new(&bin);
    cmd.args(["8", "2000", "1"]);
    let r = run(cmd, Duration::from_secs(300));
    println!("{}", r.stdout.trim());
    assert!(r.ok(), "stress failed: {}", r.describe());
}

// ---- 5. overflow and signals -------------------------------------------------------

#[test]
fn overflow_and_signals() {
    let source = src("tests/reliability/overflow_signals.c");
    let ours = compile(
        "overflow_signals",
        std::slice::from_ref(&source),
        Link::Rsuring,
        &["-O2", "-DWITH_RSURING"],
    );
    let r = run(Command::new(&ours), Duration::from_secs(120));
    println!("overflow_and_signals: {:.1}s", r.took.as_secs_f64());
    print!("{}", r.stdout);
    assert!(
        r.ok(),
        "overflow_signals on rsuring failed: {}",
        r.describe()
    );

    if debian_liburing().is_none() || !Path::new("/usr/include/liburing.h").exists() {
        println!("overflow_and_signals: no Debian liburing(-dev): no comparison");
        return;
    }
    let theirs = compile(
        "overflow_signals.liburing",
        &[source],
        Link::System,
        &["-O2"],
    );
    let l = run(Command::new(&theirs), Duration::from_secs(120));
    assert!(
        l.ok(),
        "overflow_signals on Debian's liburing failed (the kernel, not rsuring?): {}",
        l.describe()
    );
    let missing: Vec<&str> = l
        .stdout
        .lines()
        .filter(|line| !r.stdout.lines().any(|o| o == *line))
        .collect();
    assert!(
        missing.is_empty(),
        "rsuring behaves differently from liburing; liburing's lines not matched:\n{}\n--- rsuring ---\n{}",
        missing.join("\n"),
        r.stdout
    );
    println!(
        "overflow_and_signals: all {} lines of Debian's liburing run match",
        l.stdout.lines().count()
    );
}

// ---- 6. real programs -----------------------------------------------------------------

#[test]
fn real_programs() {
    let env = env();
    let work = env.out.join("real_programs");
    let _ = fs::remove_dir_all(&work);
    let mut cmd = Command::new("bash");
    cmd.arg(src("tests/reliability/real_programs.sh"))
        .arg(&env.lib)
        .arg(&work);
    let r = run(cmd, Duration::from_secs(300));
    print!("{}", r.stdout);
    if r.code == Some(EXIT_SKIP) {
        println!("real_programs: skipped: {}", r.stderr.trim());
        return;
    }
    println!("real_programs: {:.1}s", r.took.as_secs_f64());
    assert!(r.ok(), "real programs failed: {}", r.describe());
}
