//! One C program, two libraries: builds a program against Debian's liburing
//! 2.3 header and runs the same binary on Debian's `liburing.so.2` or on
//! rsuring (through `LD_LIBRARY_PATH`, a directory whose `liburing.so.2` is
//! our library). Used by `tests/dropin.rs` and `tests/differential.rs`.
//!
//! Every program prints `library: <path>` on stderr, the file that serves
//! `io_uring_queue_init` (from `dladdr`); a run whose library is not the
//! one asked for fails, so a wrong loader path can never pass as a result.

#![allow(dead_code)] // each driver uses its own subset

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{self, CProgram, Link, Run};

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

/// Whether Debian's liburing (the reference) is installed. Without it the
/// test is skipped, which fails under `RSURING_STRICT=1`.
pub fn reference_available(test: &str) -> bool {
    common::require_file(test, Path::new(common::DEBIAN_HEADER), "liburing-dev")
}

/// Compiles the C files `srcs` (with `-ldl`, for `dladdr`) into the test
/// crate's `bin/<name>` and returns the binary.
pub fn build(srcs: &[PathBuf], header: Header, name: &str) -> PathBuf {
    let (first, rest) = srcs.split_first().expect("at least one source");
    let program = rest
        .iter()
        .fold(CProgram::new(name, first), |p, src| p.source(src))
        .lib("-ldl");
    match header {
        Header::Debian => program.debian(),
        Header::Ours => program.link(Link::Rsuring),
    }
    .build()
}

/// Runs `bin` (in its own directory) on `lib` with exactly the
/// `RSURING_*` variables in `vars` (the harness's launch: `RSURING_STRICT`
/// passes through, the process group is killed after `timeout`). Panics if
/// the program was served by the other library.
pub fn run(bin: &Path, lib: Lib, vars: &[(&str, &str)], timeout: Duration) -> Run {
    let mut launch = common::launch(bin, &[])
        .cwd(bin.parent().expect("binary in a directory"))
        .timeout(timeout);
    if lib == Lib::Rsuring {
        let dir = common::area().lib_dir.display().to_string();
        launch = launch.var("LD_LIBRARY_PATH", &dir);
    }
    let run = vars.iter().fold(launch, |l, (k, v)| l.var(k, v)).run();
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

/// `diff -u` of two outputs `(label, text)` of program `name`, both saved
/// next to the program (`NAME.LABEL.out`) for a look afterwards.
pub fn unified_diff(name: &str, a: (&str, &str), b: (&str, &str)) -> String {
    let dir = &common::area().bin_dir;
    let [path_a, path_b] = [a, b].map(|(label, text)| {
        let path = dir.join(format!("{name}.{label}.out"));
        std::fs::write(&path, text).expect("save an output");
        path
    });
    match std::process::Command::new("diff")
        .arg("-u")
        .arg(&path_a)
        .arg(&path_b)
        .output()
    {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(e) => format!(
            "(diff could not run: {e}; the outputs are {} and {})",
            path_a.display(),
            path_b.display()
        ),
    }
}

/// The one program made of every `.c` file of `c_tests/AREA/`, against
/// Debian's header (a differential program: run on both libraries).
pub fn build_area(area: &str) -> PathBuf {
    let dir = common::repo().join("c_tests").join(area);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("read c_tests/{area}: {e}"));
    let mut srcs: Vec<PathBuf> = entries
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    srcs.sort();
    build(&srcs, Header::Debian, area)
}
