//! Drop-in tests: the hostile scenarios of issue 10, each a C program in
//! `c_tests/dropin/` that encodes what liburing does.
//!
//! Each program is compiled against Debian's liburing 2.3 header and linked
//! with Debian's `-luring`; the same binary then runs on Debian's
//! `liburing.so.2` and on rsuring (`LD_LIBRARY_PATH` to a directory whose
//! `liburing.so.2` is `librsuring.so`). Both runs must pass: the first
//! proves the program describes liburing's behaviour, the second that
//! rsuring has it. Programs that use rsuring's extensions are also built
//! against our header and run on rsuring.
//!
//! A program runs its cases in forked children with a watchdog each, so a
//! hang fails the case that hung (named on stderr) instead of blocking.
//! Exit status 77 means a case was skipped (a kernel feature or a
//! precondition is missing); that fails the test under `RSURING_STRICT=1`.
//!
//! Needs `cargo build --release` first (the README's test command does it).

mod common;

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use common::two_libs::{self, Header, Lib};
use common::{Run, EXIT_SKIP};

const TIMEOUT: Duration = Duration::from_secs(90);

fn source(name: &str) -> PathBuf {
    common::repo()
        .join("c_tests/dropin")
        .join(format!("{name}.c"))
}

/// Whether the run passed; panics when it failed, or skipped in strict mode.
fn outcome(name: &str, what: &str, run: &Run) -> bool {
    let status = match run.code {
        Some(0) => "ok",
        Some(EXIT_SKIP) if !run.timed_out => "skipped",
        _ => "FAILED",
    };
    println!("dropin {name} ({what}) ... {status} ({:.2?})", run.elapsed);
    if status != "FAILED" {
        // Passing and skipped runs may leave notes; a failure shows all.
        for line in run.stdout.lines().chain(run.stderr.lines()) {
            if !line.starts_with("library: ") {
                println!("    {line}");
            }
        }
    }
    match status {
        "ok" => true,
        "skipped" if !common::strict() => false,
        "skipped" => panic!(
            "dropin {name} ({what}) skipped a case, which fails under RSURING_STRICT=1:\n{}",
            run.describe()
        ),
        _ => panic!("dropin {name} ({what}) failed:\n{}", run.describe()),
    }
}

/// Debian header, run on liburing (must pass: the program is right about
/// liburing), then on rsuring.
fn on_both(name: &str, vars: &[(&str, &str)]) {
    if !two_libs::reference_available(&format!("dropin {name}")) {
        return;
    }
    let bin = two_libs::build(&[source(name)], Header::Debian, name);
    let reference = two_libs::run(&bin, Lib::Liburing, vars, TIMEOUT);
    if !outcome(name, "Debian header, Debian's liburing", &reference) {
        return;
    }
    let ours = two_libs::run(&bin, Lib::Rsuring, vars, TIMEOUT);
    outcome(name, "Debian header, rsuring", &ours);
}

/// Our header (rsuring.h's extensions), run on rsuring.
fn on_rsuring_with_our_header(name: &str, vars: &[(&str, &str)]) {
    let bin_name = format!("{name}.ours");
    let bin = two_libs::build(&[source(name)], Header::Ours, &bin_name);
    let run = two_libs::run(&bin, Lib::Rsuring, vars, TIMEOUT);
    outcome(name, "our header, rsuring", &run);
}

/// Deviation 1: a batch the kernel stops at a bad SQE is finished by the
/// wait loop; an impossible submit count does not spin.
#[test]
fn partial_submit() {
    on_both("partial_submit", &[]);
}

/// Deviation 2: thread B with thread A's reused pthread_t submits on A's
/// ring and on its own; each lands on the right ring.
#[test]
fn ring_fd_owner() {
    on_both("ring_fd_owner", &[]);
}

/// Deviation 3: 8 SINGLE_ISSUER rings cost the application none of its 16
/// registered-ring slots.
#[test]
fn ring_fd_slots() {
    on_both("ring_fd_slots", &[]);
}

/// Deviation 4: a shared SQPOLL member's fd closed (or dup2()ed over) by
/// the application and reused by another ring.
#[test]
fn sqpoll_fd_reuse() {
    on_both("sqpoll_fd_reuse", &[("RSURING_SQPOLL_PERCPU", "1")]);
}

/// The same, asking for the shared poller with IORING_SETUP_SQPOLL_PERCPU.
#[test]
fn sqpoll_fd_reuse_our_header() {
    on_rsuring_with_our_header("sqpoll_fd_reuse", &[]);
}

/// Deviation 6: io_uring_get_probe and io_uring_mlock_size make no SQ
/// thread, whatever the environment asks for the application's rings.
#[test]
fn internal_rings() {
    on_both(
        "internal_rings",
        &[("RSURING_SQPOLL", "1"), ("RSURING_SQPOLL_PERCPU", "1")],
    );
}

/// Every program in c_tests/dropin/ has a test above.
#[test]
fn all_dropin_programs_are_listed() {
    const LISTED: &[&str] = &[
        "partial_submit",
        "ring_fd_owner",
        "ring_fd_slots",
        "sqpoll_fd_reuse",
        "internal_rings",
    ];
    let dir = common::repo().join("c_tests/dropin");
    for entry in fs::read_dir(&dir).expect("read c_tests/dropin") {
        let path = entry.expect("dir entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("c") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(
            LISTED.contains(&stem.as_str()),
            "c_tests/dropin/{stem}.c has no test in tests/dropin.rs"
        );
    }
}
