//! One C program, two libraries: builds a program against Debian's liburing
//! 2.3 header and runs the same binary on Debian's `liburing.so.2` or on
//! rsuring (through `LD_LIBRARY_PATH`, a directory whose `liburing.so.2` is
//! our library). Shared by `tests/dropin.rs` and `tests/differential.rs`
//! (each includes this file with `#[path]`).
//!
//! Every program prints `library: <path>` on stderr, the file that serves
//! `io_uring_queue_init` (from `dladdr`); a run whose library is not the
//! one asked for fails, so a wrong loader path can never pass as a result.

#![allow(dead_code)] // each driver uses its own subset

use std::fs;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common;

pub const DEBIAN_HEADER: &str = "/usr/include/liburing.h";
/// A program's exit status for "skipped" (a missing kernel feature).
pub const EXIT_SKIP: i32 = 77;

/// Which liburing.h a program is compiled against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    /// Debian's `/usr/include/liburing.h`, linked with Debian's `-luring`.
    Debian,
    /// Ours (`-I<repo>/include`, `<rsuring.h>` available), linked to our
    /// library; runs only on rsuring.
    Ours,
}

/// Which library serves the program's liburing calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lib {
    Liburing,
    Rsuring,
}

/// `RSURING_STRICT=1` (CI): a skip is a failure.
pub fn strict() -> bool {
    std::env::var("RSURING_STRICT").is_ok_and(|v| v == "1")
}

/// Whether Debian's liburing (the reference) is installed. Without it a
/// test is skipped, which fails under `RSURING_STRICT=1`.
pub fn reference_available(test: &str) -> bool {
    if Path::new(DEBIAN_HEADER).is_file() {
        return true;
    }
    assert!(
        !strict(),
        "{test}: {DEBIAN_HEADER} is missing (install liburing-dev, Debian's liburing); \
         RSURING_STRICT=1 does not allow skipping"
    );
    println!("{test} ... skipped: no {DEBIAN_HEADER} (install liburing-dev)");
    false
}

/// The directory whose `liburing.so.2` is our library.
fn rsuring_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| common::area().lib_dir.clone())
}

/// Compiles the C files `srcs` into `<profile>/<bin_dir>/<name>` and
/// returns the binary.
pub fn build(srcs: &[PathBuf], header: Header, bin_dir: &str, name: &str) -> PathBuf {
    for src in srcs {
        assert!(src.is_file(), "{} does not exist", src.display());
    }
    if header == Header::Debian {
        assert!(
            Path::new(DEBIAN_HEADER).is_file(),
            "{DEBIAN_HEADER} is missing: install liburing-dev (Debian's liburing, the reference)"
        );
    }
    let dir = common::profile_dir().join(bin_dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    let out = dir.join(name);
    // Build under a private name and rename it into place: another test
    // process may be running the previous binary.
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let mut cmd = common::c_compiler(2);
    cmd.args([
        "-Wall",
        "-Wextra",
        "-Werror",
        "-std=gnu11",
        "-D_GNU_SOURCE",
        "-pthread",
    ]);
    match header {
        Header::Debian => {
            cmd.arg("-o").arg(&tmp).args(srcs).arg("-luring");
        }
        Header::Ours => {
            cmd.arg(format!("-I{}", common::repo().join("include").display()));
            // DT_NEEDED becomes our SONAME, liburing.so.2; run() points the
            // loader at our file.
            cmd.arg("-o").arg(&tmp).args(srcs).arg(common::library());
        }
    }
    cmd.arg("-ldl");
    let shown = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let res = cmd
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler ({shown}): {e}"));
    assert!(
        res.status.success(),
        "compiling {name} failed:\n{shown}\n{}{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    fs::rename(&tmp, &out)
        .unwrap_or_else(|e| panic!("rename {} to {}: {e}", tmp.display(), out.display()));
    out
}

/// What one run of a program did.
pub struct Run {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    /// A shell command line that reproduces the run.
    pub cmdline: String,
    pub elapsed: Duration,
}

impl Run {
    pub fn describe(&self) -> String {
        let how = if self.timed_out {
            "timed out (killed)".to_string()
        } else if let Some(s) = self.signal {
            format!("killed by signal {s}")
        } else {
            format!("exit status {:?}", self.code)
        };
        format!(
            "$ {}\n{how} after {:.2?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.cmdline, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// Runs `bin` on `lib` with exactly the `RSURING_*` variables in `vars`
/// (`RSURING_STRICT` passes through), killing its process group after
/// `timeout`. Panics if the program was served by the other library.
pub fn run(bin: &Path, lib: Lib, vars: &[(&str, &str)], timeout: Duration) -> Run {
    let mut cmd = Command::new(bin);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .current_dir(bin.parent().expect("binary in a directory"))
        .process_group(0);
    for (k, _) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if (k.starts_with("RSURING_") && k != "RSURING_STRICT")
            || k == "LD_PRELOAD"
            || k == "LD_LIBRARY_PATH"
        {
            cmd.env_remove(k);
        }
    }
    let mut cmdline = String::new();
    let mut set = |k: &str, v: &str| {
        cmd.env(k, v);
        cmdline.push_str(&format!("{k}={v} "));
    };
    if lib == Lib::Rsuring {
        set("LD_LIBRARY_PATH", &rsuring_dir().display().to_string());
    }
    for (k, v) in vars {
        set(k, v);
    }
    cmdline.push_str(&bin.display().to_string());

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
    let out = reader(Box::new(child.stdout.take().expect("stdout pipe")));
    let err = reader(Box::new(child.stderr.take().expect("stderr pipe")));
    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for the program") {
            break st;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            // SAFETY: kill(2) on the program's own process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            break child.wait().expect("wait for the killed program");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // The programs fork a child per case; one that outlived its parent
    // would hold the pipes open.
    // SAFETY: as above; ESRCH when the group is already gone.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let run = Run {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        cmdline,
        elapsed: start.elapsed(),
    };
    check_library(&run, lib);
    run
}

/// The `library: <path>` line must name the library the run asked for.
fn check_library(run: &Run, lib: Lib) {
    let Some(path) = run.stderr.lines().find_map(|l| l.strip_prefix("library: ")) else {
        panic!(
            "the program did not say which library it runs on:\n{}",
            run.describe()
        );
    };
    let resolved = Path::new(path).canonicalize().ok();
    let ours = resolved.as_deref() == Some(common::library().as_path());
    match lib {
        Lib::Rsuring => assert!(
            ours,
            "asked for rsuring, ran on {path}:\n{}",
            run.describe()
        ),
        Lib::Liburing => assert!(
            !ours && path.contains("liburing.so.2"),
            "asked for Debian's liburing, ran on {path}:\n{}",
            run.describe()
        ),
    }
}
