//! Per-CPU shared SQPOLL: drives the C programs in `c_tests/sqpoll/`.
//!
//! Two kinds of program:
//! - against OUR headers (`-I<repo>/include`, `<rsuring.h>`), linked to
//!   `<target-dir>/<profile>/librsuring.so`; an RPATH points at
//!   `<target-dir>/<profile>/sqpoll_tests/lib/`, which holds a
//!   `liburing.so.2` symlink to it, and `ldd` must confirm that the program
//!   resolves `liburing.so.2` to our file (the system has Debian's too);
//! - "unmodified binaries": compiled against Debian's `/usr/include/liburing.h`
//!   and linked with Debian's `-luring`, then run with
//!   `LD_PRELOAD=<abs path of librsuring.so>` and the `RSURING_*` variables.
//!
//! Every program runs in its own process group with a timeout, with all
//! `RSURING_*` variables, `LD_PRELOAD` and `LD_LIBRARY_PATH` (cargo points
//! it at the target directory) removed from the inherited environment, then
//! set as each scenario needs. Exit status: 0 pass,
//! 77 skip (the kernel lacks io_uring; reported, not a failure), anything
//! else fails with the program's output and a command line to reproduce.
//! Programs print nothing on stderr when they pass; where the library is
//! expected to warn (malformed variables) the exact lines are checked.
//!
//! Needs `cargo build --release` (or the same profile as the tests) first:
//! the README's test command is `cargo build --release && cargo test --release`.

use std::collections::HashMap;
mod common;

use std::fs;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);
const EXIT_SKIP: i32 = 77;
const DEBIAN_HEADER: &str = "/usr/include/liburing.h";

struct Env {
    repo: PathBuf,
    /// `<target-dir>/<profile>/librsuring.so`, canonicalized.
    lib: PathBuf,
    /// Holds the `liburing.so.2` symlink; the RPATH of our programs.
    lib_dir: PathBuf,
    bin_dir: PathBuf,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let lib = common::library();
        let lib_dir = common::library_dir("sqpoll_tests/lib", &lib);
        let bin_dir = common::profile_dir().join("sqpoll_tests/bin");
        fs::create_dir_all(&bin_dir).expect("create sqpoll_tests/bin");
        Env {
            repo: common::repo(),
            lib,
            lib_dir,
            bin_dir,
        }
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    /// Our `include/` (rsuring.h), linked to our library.
    Ours,
    /// Debian's `/usr/include/liburing.h` and `-luring`: an unmodified binary.
    Debian,
}

/// Compiles `c_tests/sqpoll/<name>.c` (once per test process) and returns
/// the binary.
fn build(name: &str, kind: Kind) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<(String, Kind), PathBuf>>> = OnceLock::new();
    let env = env();
    // A failed build panics with the lock held; the others still go on.
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(&(name.to_string(), kind)) {
        return p.clone();
    }
    if kind == Kind::Debian && !Path::new(DEBIAN_HEADER).exists() {
        panic!("{DEBIAN_HEADER} is missing: install liburing-dev (Debian's liburing)");
    }
    let src = env.repo.join("c_tests/sqpoll").join(format!("{name}.c"));
    let suffix = match kind {
        Kind::Ours => "",
        Kind::Debian => "-debian",
    };
    let out = env.bin_dir.join(format!("{name}{suffix}"));
    // Build under a private name, then rename: other test processes may be
    // running the previous binary.
    let tmp = env
        .bin_dir
        .join(format!(".{name}{suffix}.{}", std::process::id()));
    let mut cmd = common::c_compiler(2);
    cmd.args([
        "-Wall",
        "-Wextra",
        "-Werror",
        "-std=gnu11",
        "-D_GNU_SOURCE",
        "-pthread",
    ]);
    match kind {
        Kind::Ours => {
            cmd.arg(format!("-I{}", env.repo.join("include").display()));
            cmd.arg("-o").arg(&tmp).arg(&src).arg(&env.lib);
            // DT_RPATH (not RUNPATH), so LD_LIBRARY_PATH cannot redirect it.
            cmd.arg(format!(
                "-Wl,--disable-new-dtags,-rpath,{}",
                env.lib_dir.display()
            ));
        }
        Kind::Debian => {
            cmd.arg("-DSQ_DEBIAN");
            cmd.arg("-o").arg(&tmp).arg(&src).arg("-luring");
        }
    }
    let out_cmd = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let res = cmd.output().expect("run the C compiler");
    assert!(
        res.status.success(),
        "compiling {name} ({kind:?}) failed:\n{out_cmd}\n{}{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    fs::rename(&tmp, &out).expect("rename the binary");
    check_resolution(&out, kind);
    built.insert((name.to_string(), kind), out.clone());
    out
}

/// `ldd`: our programs must load our library as liburing.so.2; the Debian
/// ones Debian's (our library comes in only through LD_PRELOAD).
fn check_resolution(bin: &Path, kind: Kind) {
    let res = Command::new("ldd")
        .arg(bin)
        .env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run ldd");
    let text = String::from_utf8_lossy(&res.stdout);
    let resolved = text
        .lines()
        .find_map(|l| {
            let (name, rest) = l.trim().split_once(" => ")?;
            (name == "liburing.so.2").then(|| rest.split(" (").next().unwrap().trim().to_string())
        })
        .unwrap_or_else(|| panic!("ldd {}: no liburing.so.2 line:\n{text}", bin.display()));
    let resolved = Path::new(&resolved)
        .canonicalize()
        .unwrap_or_else(|e| panic!("ldd {}: {resolved}: {e}\n{text}", bin.display()));
    match kind {
        Kind::Ours => assert_eq!(
            resolved,
            env().lib,
            "{} resolves liburing.so.2 to {} instead of our library:\n{text}",
            bin.display(),
            resolved.display()
        ),
        Kind::Debian => assert_ne!(
            resolved,
            env().lib,
            "{} (linked with -luring) resolves liburing.so.2 to our library; \
             the Debian build must use Debian's:\n{text}",
            bin.display()
        ),
    }
}

struct Run {
    /// Exit code, or None if killed by a signal.
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// For failure messages: how to reproduce.
    cmdline: String,
    elapsed: Duration,
}

impl Run {
    fn describe(&self) -> String {
        format!(
            "$ {}\nexit: {:?} after {:.2?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.cmdline, self.code, self.elapsed, self.stdout, self.stderr
        )
    }

    fn skipped(&self) -> bool {
        if self.code == Some(EXIT_SKIP) {
            eprintln!("SKIPPED (kernel lacks a feature):\n{}", self.describe());
            return true;
        }
        false
    }

    /// Panics unless the program passed with a silent stderr. Returns false
    /// when it skipped.
    fn passed(&self) -> bool {
        if self.skipped() {
            return false;
        }
        assert!(self.code == Some(0), "program failed:\n{}", self.describe());
        assert!(
            self.stderr.is_empty(),
            "program passed but wrote to stderr (nothing expected):\n{}",
            self.describe()
        );
        true
    }

    /// The value of `key=value` on stdout (first occurrence).
    fn field(&self, key: &str) -> String {
        let prefix = format!("{key}=");
        self.stdout
            .split_whitespace()
            .find_map(|tok| tok.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {key}= in the output:\n{}", self.describe()))
            .to_string()
    }
}

/// Pseudo-variable for [`run`]: run the program as the unprivileged user
/// nobody (uid/gid 65534, no supplementary groups), the kind of process
/// that RSURING_SQPOLL=1 serves.
const AS_NOBODY: (&str, &str) = ("AS_NOBODY", "1");

/// Pseudo-variable for [`run`]: pin the program to CPU 0, so that CPU 1
/// can carry a transparent ring's poller (RSURING_SQPOLL_CPUS=1).
const ON_CPU0: (&str, &str) = ("ON_CPU0", "1");

/// Runs `bin` with `args` and exactly the given RSURING_* / LD_PRELOAD
/// variables, killing its whole process group after TIMEOUT.
fn run(bin: &Path, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(bin);
    if vars.contains(&AS_NOBODY) {
        use std::os::unix::process::CommandExt;
        // std drops the supplementary groups when root changes uid.
        cmd.uid(65534).gid(65534);
    }
    if vars.contains(&ON_CPU0) {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(0, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, _) in std::env::vars_os() {
        if let Some(k) = k.to_str() {
            if k.starts_with("RSURING_") || k == "LD_PRELOAD" || k == "LD_LIBRARY_PATH" {
                cmd.env_remove(k);
            }
        }
    }
    let mut cmdline = String::new();
    for (k, v) in vars {
        if (*k, *v) == AS_NOBODY || (*k, *v) == ON_CPU0 {
            cmdline.push_str(&format!("({k}) "));
            continue;
        }
        cmd.env(k, v);
        cmdline.push_str(&format!("{k}={v} "));
    }
    cmdline.push_str(&bin.display().to_string());
    for a in args {
        cmdline.push(' ');
        cmdline.push_str(a);
    }

    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()));
    let pid = child.id() as libc::pid_t;
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out_t = reader(Box::new(child.stdout.take().unwrap()));
    let err_t = reader(Box::new(child.stderr.take().unwrap()));
    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for the program") {
            break st;
        }
        if start.elapsed() > TIMEOUT {
            timed_out = true;
            // SAFETY: kill(2) on the program's own process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            break child.wait().expect("wait for the killed program");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // Forked children that outlived the program would hold the pipes open.
    // SAFETY: as above; ESRCH when the group is already gone.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let elapsed = start.elapsed();
    eprintln!("[{elapsed:>8.2?}] exit {:?}: {cmdline}", status.code());
    let r = Run {
        code: status.code(),
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
        cmdline,
        elapsed,
    };
    assert!(
        !timed_out,
        "program timed out after {TIMEOUT:?} (killed):\n{}",
        r.describe()
    );
    if let Some(sig) = status.signal() {
        panic!("program killed by signal {sig}:\n{}", r.describe());
    }
    r
}

fn lib_str() -> String {
    env().lib.display().to_string()
}

/// Our program, plain environment: must pass silently.
fn run_ours(name: &str, args: &[&str], vars: &[(&str, &str)]) -> Option<Run> {
    let bin = build(name, Kind::Ours);
    let r = run(&bin, args, vars);
    r.passed().then_some(r)
}

// ---------------------------------------------------------------------------
// 1-5: the API, against rsuring.h

/// N = 1, 2, 8 rings on one CPU share one SQ thread (bound to it); two CPUs
/// give two threads; every ring reads the right data; group info is right.
#[test]
fn rings_on_one_cpu_share_one_sq_thread() {
    run_ours("share", &[], &[]);
}

/// PERCPU without SQPOLL, and SQ_AFF with a CPU that is not there: -EINVAL,
/// no half-made ring, no fd, no thread, existing group untouched.
#[test]
fn invalid_setups_fail_cleanly() {
    run_ours("invalid", &[], &[]);
}

/// The group outlives its creator and its next anchor; new rings join the
/// same thread; the last close leaves no fd and no thread.
#[test]
fn poller_group_outlives_its_creator() {
    run_ours("lifetime", &[], &[]);
}

/// 8 threads creating/destroying shared rings at once on cpus 0/1: one
/// poller per CPU at the end, no leaked fd or thread.
#[test]
fn concurrent_setup_and_exit() {
    run_ours("concurrency", &[], &[]);
}

/// A fork()ed child starts with an empty registry (own poller, members 1);
/// 50 forks while a thread churns rings never deadlock.
#[test]
fn fork_resets_the_registry_and_never_deadlocks() {
    run_ours("fork", &[], &[]);
}

// ---------------------------------------------------------------------------
// 6: unmodified binaries (Debian's header and -luring) under LD_PRELOAD

fn run_debian(name: &str, args: &[&str], vars: &[(&str, &str)]) -> Option<Run> {
    let bin = build(name, Kind::Debian);
    let r = run(&bin, args, vars);
    if !r.passed() {
        return None;
    }
    let preloaded = vars.iter().any(|(k, _)| *k == "LD_PRELOAD");
    let implementation = PathBuf::from(r.field("impl"));
    let implementation = implementation.canonicalize().unwrap_or(implementation);
    if preloaded {
        assert_eq!(
            implementation,
            env().lib,
            "under LD_PRELOAD the liburing functions must come from our library:\n{}",
            r.describe()
        );
    } else {
        assert_ne!(implementation, env().lib, "{}", r.describe());
    }
    Some(r)
}

/// RSURING_SQPOLL_PERCPU=1: 4 SQPOLL rings pinned to cpu 1 share 1 thread;
/// without the variable they have 4 (also under LD_PRELOAD, and with
/// Debian's own library as the reference).
#[test]
fn env_percpu_shares_pollers_of_unmodified_binaries() {
    let lib = lib_str();
    // Reference: Debian's liburing itself.
    let Some(r) = run_debian("env_percpu", &[], &[]) else {
        return;
    };
    assert_eq!(r.field("sqp_threads"), "4", "{}", r.describe());

    let r = run_debian("env_percpu", &[], &[("LD_PRELOAD", &lib)]).unwrap();
    assert_eq!(r.field("sqpoll_flag"), "4", "{}", r.describe());
    assert_eq!(
        r.field("sqp_threads"),
        "4",
        "without RSURING_SQPOLL_PERCPU each SQPOLL ring keeps its own thread:\n{}",
        r.describe()
    );
    assert_eq!(r.field("sqp_cpus"), "1,1,1,1", "{}", r.describe());

    for on in ["1", "yes"] {
        let r = run_debian(
            "env_percpu",
            &[],
            &[("LD_PRELOAD", &lib), ("RSURING_SQPOLL_PERCPU", on)],
        )
        .unwrap();
        assert_eq!(r.field("sqpoll_flag"), "4", "{}", r.describe());
        assert_eq!(
            r.field("sqp_threads"),
            "1",
            "RSURING_SQPOLL_PERCPU={on}: the 4 rings on cpu 1 must share one SQ thread:\n{}",
            r.describe()
        );
        assert_eq!(r.field("sqp_cpus"), "1", "{}", r.describe());
    }

    let r = run_debian(
        "env_percpu",
        &[],
        &[("LD_PRELOAD", &lib), ("RSURING_SQPOLL_PERCPU", "0")],
    )
    .unwrap();
    assert_eq!(r.field("sqp_threads"), "4", "{}", r.describe());
}

/// RSURING_SQPOLL=1: plain rings of an unprivileged unmodified binary that
/// runs on CPU 0 get one shared poller on CPU 1 (RSURING_SQPOLL_CPUS=1)
/// while `ring.flags` still shows the plain setup they asked for, and still
/// read correct data; SINGLE_ISSUER|DEFER_TASKRUN and
/// COOP_TASKRUN(|TASKRUN_FLAG) rings are left alone and work. Run as root
/// (which could change credentials), or without a CPU of its own for the
/// poller, every ring stays plain and one note says why.
#[test]
fn env_sqpoll_makes_plain_rings_share_a_poller() {
    let lib = lib_str();
    let Some(r) = run_debian("transparent", &[], &[AS_NOBODY]) else {
        return;
    };
    assert_eq!(r.field("sqp_threads"), "0", "{}", r.describe());

    let r = run_debian("transparent", &[], &[("LD_PRELOAD", &lib), AS_NOBODY]).unwrap();
    assert_eq!(r.field("sqpoll_flag"), "0", "{}", r.describe());
    assert_eq!(r.field("sqp_threads"), "0", "{}", r.describe());

    let vars = [
        ("LD_PRELOAD", lib.as_str()),
        ("RSURING_SQPOLL", "1"),
        ("RSURING_SQPOLL_CPUS", "1"),
        ON_CPU0,
        AS_NOBODY,
    ];
    let bin = build("transparent", Kind::Debian);
    let r = run(&bin, &[], &vars);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert_eq!(
        r.field("sqpoll_flag"),
        "0",
        "RSURING_SQPOLL=1: ring.flags must show the plain setup the program asked for:\n{}",
        r.describe()
    );
    assert_eq!(
        r.field("sqp_threads"),
        "1",
        "RSURING_SQPOLL=1: the plain rings must share one SQ thread:\n{}",
        r.describe()
    );
    assert_eq!(r.field("sqp_cpus"), "1", "{}", r.describe());
    if !r.stdout.contains("defer_taskrun=unsupported") {
        assert_eq!(r.field("defer_sqpoll_flag"), "0", "{}", r.describe());
        assert_eq!(r.field("sqp_threads_with_defer"), "1", "{}", r.describe());
    }
    for coop in ["coop0_sqpoll_flag", "coop1_sqpoll_flag"] {
        assert_eq!(r.field(coop), "0", "{}", r.describe());
    }
    // The only stderr output: the one note for the DEFER_TASKRUN ring.
    let notes: Vec<&str> = r.stderr.lines().collect();
    assert!(
        notes.len() == 1
            && notes[0].contains("RSURING_SQPOLL=1")
            && notes[0].contains("SINGLE_ISSUER"),
        "expected exactly one note about the DEFER_TASKRUN ring:\n{}",
        r.describe()
    );

    let refused = [
        (&vars[..4], "can change its credentials"),
        (
            &[vars[0], vars[1], AS_NOBODY][..],
            "a poller needs a CPU of its own",
        ),
        (
            &[vars[0], vars[1], vars[2], AS_NOBODY][..],
            "a poller needs a CPU of its own",
        ),
    ];
    for (vars, why) in refused {
        let r = run(&bin, &[], vars);
        assert_eq!(r.code, Some(0), "{}", r.describe());
        assert_eq!(
            r.field("sqp_threads"),
            "0",
            "transparent SQPOLL must be refused:\n{}",
            r.describe()
        );
        let notes = r.stderr.lines().filter(|l| l.contains(why)).count();
        assert_eq!(notes, 1, "one note, once:\n{}", r.describe());
    }
}

/// One io_uring_params reused for several rings: the library must not leak
/// its decisions (PERCPU stripped, SQ_AFF/sq_thread_cpu from placement,
/// SQPOLL from RSURING_SQPOLL=1, ATTACH_WQ/wq_fd) into the application's
/// params, or the later rings stop sharing / all land on the first CPU /
/// get private pollers.
type Check = Box<dyn Fn() + std::panic::RefUnwindSafe>;

#[test]
fn reused_params_keep_sharing_and_spreading() {
    // Independent checks; run them all so a failure shows every symptom.
    let lib = lib_str();
    let lib2 = lib.clone();
    let parts: Vec<(&str, Check)> = vec![
        (
            "pinned",
            Box::new(|| {
                run_ours("params_reuse", &["pinned"], &[]);
            }),
        ),
        (
            "spread",
            Box::new(|| {
                run_ours(
                    "params_reuse",
                    &["spread"],
                    &[("RSURING_SQPOLL_CPUS", "0,1")],
                );
            }),
        ),
        (
            "debian",
            Box::new(move || {
                let vars = [
                    ("LD_PRELOAD", lib.as_str()),
                    ("RSURING_SQPOLL_PERCPU", "1"),
                    ("RSURING_SQPOLL_CPUS", "0,1"),
                ];
                if let Some(r) = run_debian("params_reuse", &["debian"], &vars) {
                    assert_eq!(r.field("sqp_threads"), "2", "{}", r.describe());
                    assert_eq!(r.field("sqp_cpus"), "0,1", "{}", r.describe());
                }
            }),
        ),
        (
            "debian-plain",
            Box::new(move || {
                let vars = [
                    ("LD_PRELOAD", lib2.as_str()),
                    ("RSURING_SQPOLL", "1"),
                    ("RSURING_SQPOLL_CPUS", "1"),
                    ON_CPU0,
                    AS_NOBODY,
                ];
                if let Some(r) = run_debian("params_reuse", &["debian-plain"], &vars) {
                    assert_eq!(r.field("sqp_threads"), "1", "{}", r.describe());
                    assert_eq!(r.field("sqp_cpus"), "1", "{}", r.describe());
                }
            }),
        ),
    ];
    let failed: Vec<&str> = parts
        .iter()
        .filter(|(_, f)| std::panic::catch_unwind(f).is_err())
        .map(|(name, _)| *name)
        .collect();
    assert!(failed.is_empty(), "params_reuse failed in: {failed:?}");
}

// ---------------------------------------------------------------------------
// 7: placement of rings without SQ_AFF

/// RSURING_SQPOLL_CPUS=0,1 (and 0-1): least-loaded CPU first.
#[test]
fn cpu_list_spreads_rings_least_loaded_first() {
    for list in ["0,1", "0-1", " 0 , 1 "] {
        run_ours("placement", &["spread"], &[("RSURING_SQPOLL_CPUS", list)]);
    }
}

/// Without RSURING_SQPOLL_CPUS: one shared unbound poller (cpu -1).
#[test]
fn no_cpu_list_means_one_unbound_poller() {
    run_ours("placement", &["unbound"], &[]);
}

/// A malformed variable is reported once on stderr (one line naming it) and
/// ignored: rings work and are placed as if it were unset.
#[test]
fn malformed_variables_warn_once_and_are_ignored() {
    let bin = build("placement", Kind::Ours);
    let cases: &[&[(&str, &str)]] = &[
        &[("RSURING_SQPOLL_CPUS", "abc")],
        &[("RSURING_SQPOLL_CPUS", "0,x")],
        &[("RSURING_SQPOLL_CPUS", "1-0")],
        &[("RSURING_SQPOLL_CPUS", "4096")],
        &[("RSURING_SQPOLL_IDLE_MS", "x")],
        &[("RSURING_SQPOLL_IDLE_MS", "-5")],
        &[("RSURING_SQPOLL_PERCPU", "maybe")],
        &[("RSURING_SQPOLL", "2")],
        &[
            ("RSURING_SQPOLL_CPUS", "abc"),
            ("RSURING_SQPOLL_IDLE_MS", "x"),
        ],
    ];
    for vars in cases {
        let r = run(&bin, &["malformed"], vars);
        if r.skipped() {
            return;
        }
        assert!(r.code == Some(0), "program failed:\n{}", r.describe());
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            vars.len(),
            "want exactly one warning line per malformed variable:\n{}",
            r.describe()
        );
        for (k, v) in vars.iter() {
            let n = lines
                .iter()
                .filter(|l| l.contains(k) && l.contains(v.trim()))
                .count();
            assert_eq!(
                n,
                1,
                "want one stderr line naming {k} and its value {v:?}:\n{}",
                r.describe()
            );
        }
    }
}

// ---------------------------------------------------------------------------
// 8: RSURING_SQPOLL_IDLE_MS

/// RSURING_SQPOLL_IDLE_MS applies to rings that chose no sq_thread_idle and
/// only to those (observed through IORING_SQ_NEED_WAKEUP; generous margins).
#[test]
fn idle_ms_sets_the_sq_thread_idle_time() {
    if run_ours("idle", &["fast"], &[("RSURING_SQPOLL_IDLE_MS", "10")]).is_none() {
        return;
    }
    run_ours("idle", &["slow"], &[("RSURING_SQPOLL_IDLE_MS", "2000")]);
    run_ours("idle", &["default"], &[]);
}
