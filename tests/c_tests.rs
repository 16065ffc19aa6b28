//! Drives the C scenario tests in `c_tests/*.c` against OUR library.
//!
//! Each C program is compiled with the system C compiler (found through the
//! `cc` crate) against `include/liburing.h`, linked to
//! `<target-dir>/<profile>/librsuring.so` and run with a timeout. The library's
//! SONAME is `liburing.so.2`, so the programs are given an RPATH pointing at
//! `<target-dir>/<profile>/c_tests_lib/`, which holds a `liburing.so.2`
//! symlink to our library; `ldd` then has to confirm that the program really
//! resolves `liburing.so.2` to our file and not to a system liburing.
//!
//! Exit status of a program: 0 = pass, 77 = skipped (kernel lacks the
//! feature; reported, not a failure), anything else = failure. Failures show
//! the program's stderr/stdout and the command line to reproduce.
//!
//! The programs that need nothing newer than liburing 2.3 are also built
//! against the system's `/usr/include/liburing.h` (Debian's liburing 2.3) and
//! run against our library (`system_header::*` tests): binaries built with an
//! older liburing header must keep working (skipped when that header is
//! absent).
//!
//! The environment is passed through, so e.g. `RSURING_SQPOLL_PERCPU=1 cargo
//! test --test c_tests` runs the programs under that mode.
//!
//! Programs in subdirectories of `c_tests/` are not ours and are not run.

mod common;

use std::fs;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(30);
const EXIT_SKIP: i32 = 77;

/// Paths shared by all tests, set up once per test process.
struct Env {
    repo: PathBuf,
    /// `<target-dir>/<profile>/librsuring.so`, canonicalized.
    lib: PathBuf,
    /// Directory with the `liburing.so.2` symlink, used as RPATH.
    lib_dir: PathBuf,
    /// Where compiled programs and their output go.
    bin_dir: PathBuf,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let lib = common::library();
        let lib_dir = common::library_dir("c_tests_lib", &lib);
        let bin_dir = common::profile_dir().join("c_tests_bin");
        fs::create_dir_all(&bin_dir).expect("create c_tests_bin");
        Env {
            repo: common::repo(),
            lib,
            lib_dir,
            bin_dir,
        }
    })
}

/// Which liburing.h a program is compiled against.
#[derive(Clone, Copy, PartialEq)]
enum Header {
    /// Ours: `<repo>/include/liburing.h`.
    Ours,
    /// The system's (e.g. Debian's liburing 2.3 `/usr/include/liburing.h`):
    /// checks that binaries built against another liburing header work
    /// unchanged with our library (struct layouts, inline helpers).
    System,
}

const SYSTEM_HEADER: &str = "/usr/include/liburing.h";

fn bin_name(name: &str, header: Header) -> String {
    match header {
        Header::Ours => name.to_string(),
        Header::System => format!("{name}.sysheader"),
    }
}

/// Compiles `c_tests/<name>.c` and returns the path of the binary.
fn compile(name: &str, header: Header) -> PathBuf {
    let env = env();
    let src = env.repo.join("c_tests").join(format!("{name}.c"));
    assert!(src.is_file(), "{} does not exist", src.display());
    let out = env.bin_dir.join(bin_name(name, header));
    // Build under a private name and rename it into place, so that test
    // processes running at the same time never execute a half-written file.
    let tmp_out = env.bin_dir.join(format!(
        ".{}.tmp{}",
        bin_name(name, header),
        std::process::id()
    ));
    let mut cmd = common::c_compiler(2);
    cmd.args(["-Wall", "-Wextra", "-Werror", "-std=gnu11", "-D_GNU_SOURCE"]);
    if header == Header::Ours {
        cmd.arg(format!("-I{}", env.repo.join("include").display()));
    }
    cmd.arg("-o")
        .arg(&tmp_out)
        .arg(&src)
        // Link our library by path: DT_NEEDED becomes its SONAME,
        // liburing.so.2, which the RPATH below resolves to our file.
        .arg(&env.lib)
        .arg("-lpthread")
        // DT_RPATH (not RUNPATH) so that LD_LIBRARY_PATH cannot override it.
        .arg("-Wl,--disable-new-dtags")
        .arg(format!("-Wl,-rpath,{}", env.lib_dir.display()));
    // Debug of a Command lists the whole environment; show only argv.
    let shown = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler ({shown}): {e}"));
    if !output.status.success() {
        panic!(
            "c_test {}: compilation failed ({})\ncommand: {shown}\n{}{}",
            bin_name(name, header),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    fs::rename(&tmp_out, &out)
        .unwrap_or_else(|e| panic!("rename {} to {}: {e}", tmp_out.display(), out.display()));
    out
}

/// Asserts that the dynamic loader resolves liburing.so.2 of `bin` to our
/// library (and not, say, /usr/lib/x86_64-linux-gnu/liburing.so.2).
fn verify_linkage(name: &str, bin: &Path) {
    let env = env();
    let output = Command::new("ldd")
        .arg(bin)
        .output()
        .unwrap_or_else(|e| panic!("running ldd: {e}"));
    let text = String::from_utf8_lossy(&output.stdout);
    let resolved = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("liburing.so.2 => "))
        .map(|rest| rest.split(" (").next().unwrap_or(rest).trim().to_string())
        .collect::<Vec<_>>();
    assert!(
        resolved.len() == 1,
        "c_test {name}: ldd does not show exactly one liburing.so.2:\n{text}"
    );
    let path = Path::new(&resolved[0])
        .canonicalize()
        .unwrap_or_else(|e| panic!("c_test {name}: ldd resolved {}: {e}\n{text}", resolved[0]));
    assert_eq!(
        path,
        env.lib,
        "c_test {name}: liburing.so.2 resolves to {} instead of our library\n{text}",
        path.display()
    );
    // Nothing else may provide liburing symbols (e.g. a system liburing).
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("liburing") && !l.starts_with("liburing.so.2 => ") {
            panic!("c_test {name}: unexpected liburing in ldd output: {l}\n{text}");
        }
    }
}

enum Outcome {
    Exited(ExitStatus),
    TimedOut,
}

/// Runs `bin` with a timeout, collecting its stdout and stderr.
fn run(name: &str, bin: &Path) -> (Outcome, String, String) {
    let env = env();
    let mut child = Command::new(bin)
        .current_dir(&env.bin_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("c_test {name}: spawn {}: {e}", bin.display()));
    // Drain both pipes on their own threads so a chatty program never blocks.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let outcome = loop {
        match child.try_wait().expect("try_wait") {
            Some(status) => break Outcome::Exited(status),
            None if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break Outcome::TimedOut;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    // A killed program's own children could keep the pipes open; don't
    // wait for them forever.
    let join = |h: std::thread::JoinHandle<String>| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !h.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if h.is_finished() {
            h.join().unwrap_or_default()
        } else {
            String::from("(output not collected: pipe still open)\n")
        }
    };
    (outcome, join(out), join(err))
}

fn run_c_test(name: &str) {
    run_c_test_with(name, Header::Ours);
}

fn run_c_test_system_header(name: &str) {
    if !Path::new(SYSTEM_HEADER).is_file() {
        println!("c_test {name} (system header) ... skipped: no {SYSTEM_HEADER}");
        return;
    }
    run_c_test_with(name, Header::System);
}

fn run_c_test_with(test: &str, header: Header) {
    let name_owned = bin_name(test, header);
    let name = name_owned.as_str();
    let bin = compile(test, header);
    verify_linkage(name, &bin);
    let start = Instant::now();
    let (outcome, stdout, stderr) = run(name, &bin);
    let took = start.elapsed();
    let repro = format!(
        "reproduce: cd {} && {}",
        env().bin_dir.display(),
        bin.display()
    );
    match outcome {
        Outcome::Exited(status) if status.success() => {
            println!("c_test {name} ... ok ({:.2}s)", took.as_secs_f64());
            // Passing programs may leave notes (a sub-check the kernel
            // could not do); show them.
            for line in stderr.lines() {
                println!("    {name}: {line}");
            }
        }
        Outcome::Exited(status) if status.code() == Some(EXIT_SKIP) => {
            println!(
                "c_test {name} ... skipped: {}",
                stderr.lines().last().unwrap_or("(no reason given)")
            );
        }
        Outcome::Exited(status) => {
            let how = match (status.code(), status.signal()) {
                (Some(c), _) => format!("exit status {c}"),
                (None, Some(s)) => format!("killed by signal {s}"),
                _ => format!("{status}"),
            };
            println!("c_test {name} ... FAILED ({how})");
            panic!(
                "c_test {name} failed: {how}\n--- stderr ---\n{stderr}--- stdout ---\n{stdout}{repro}"
            );
        }
        Outcome::TimedOut => {
            println!("c_test {name} ... FAILED (timeout)");
            panic!(
                "c_test {name} timed out after {}s and was killed\n--- stderr ---\n{stderr}--- stdout ---\n{stdout}{repro}",
                TIMEOUT.as_secs()
            );
        }
    }
}

macro_rules! c_tests {
    ($($name:ident),* $(,)?) => {
        const C_TESTS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                run_c_test(stringify!($name));
            }
        )*
    };
}

c_tests! {
    auto_ring_fd,
    buf_ring,
    buf_ring_setup,
    cancel,
    close_ring_fd,
    cq_overflow,
    eventfd,
    fixed,
    link,
    nop,
    peek_batch,
    poll,
    probe,
    register_misc,
    ring_fd,
    rw,
    setup,
    setup_restrict,
    socket,
    sq_array,
    sq_full,
    sqpoll,
    submit_wait,
    threads,
    timeout,
    version,
    wait_timeout,
}

/// The same programs compiled against the system's liburing.h (Debian's
/// liburing 2.3 here) and linked to our library: binaries built against an
/// older liburing header must work unchanged. Only programs that use no API
/// newer than liburing 2.3 are listed.
mod system_header {
    use super::run_c_test_system_header;

    macro_rules! system_header_c_tests {
        ($($name:ident),* $(,)?) => {
            pub(super) const LISTED: &[&str] = &[$(stringify!($name)),*];
            $(
                #[test]
                fn $name() {
                    run_c_test_system_header(stringify!($name));
                }
            )*
        };
    }

    system_header_c_tests! {
        buf_ring,
        cancel,
        cq_overflow,
        eventfd,
        fixed,
        link,
        nop,
        peek_batch,
        poll,
        probe,
        register_misc,
        ring_fd,
        rw,
        setup,
        socket,
        sq_array,
        sq_full,
        sqpoll,
        submit_wait,
        threads,
        timeout,
        wait_timeout,
    }
}

/// Every `c_tests/*.c` must be listed above, so none is silently skipped
/// (files in subdirectories of c_tests/ are not ours).
#[test]
fn all_c_files_are_listed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("c_tests");
    let mut missing = Vec::new();
    for entry in fs::read_dir(&dir).expect("read c_tests/") {
        let path = entry.expect("dir entry").path();
        if !path.is_file() || path.extension().and_then(|e| e.to_str()) != Some("c") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if !C_TESTS.contains(&stem.as_str()) {
            missing.push(stem);
        }
    }
    assert!(
        missing.is_empty(),
        "c_tests/*.c not listed in tests/c_tests.rs: {missing:?}"
    );
    for name in system_header::LISTED {
        assert!(
            C_TESTS.contains(name),
            "system_header lists {name}, which is not in C_TESTS"
        );
    }
    for name in C_TESTS {
        assert!(
            dir.join(format!("{name}.c")).is_file(),
            "tests/c_tests.rs lists {name} but c_tests/{name}.c does not exist"
        );
    }
}
