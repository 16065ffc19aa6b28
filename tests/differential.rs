//! The differential test: one scripted sequence of liburing calls
//! (`c_tests/differential/*.c`) that prints every return value and every
//! CQE, built once against Debian's liburing 2.3 header. The same binary
//! runs on Debian's `liburing.so.2` and on rsuring (`LD_LIBRARY_PATH` to a
//! directory whose `liburing.so.2` is `librsuring.so`), in three
//! environments: plain, `RSURING_STATS=1` and `RSURING_SQPOLL_PERCPU=1`
//! (liburing ignores both variables). The outputs must be identical; a
//! mismatch fails with a unified diff (liburing is `---`, rsuring `+++`).
//!
//! What the program leaves out of its output because it depends on timing
//! or on the machine, and the places where liburing 2.3 and 2.15 disagree
//! (left out because rsuring follows 2.15), are listed in
//! `c_tests/differential/NOTES.md`.
//!
//! Needs `cargo build --release` first (the README's test command does it).

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use common::two_libs::{self, Lib};
use common::Run;

/// Every section has a 20 s watchdog; the whole program takes a few
/// seconds.
const TIMEOUT: Duration = Duration::from_secs(240);

/// The program, built once per test process.
fn program() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| two_libs::build_area("differential"))
}

/// Panics unless the program ran to its end.
fn completed(run: &Run, what: &str) {
    assert!(
        run.code == Some(0),
        "the differential program did not finish on {what}:\n{}",
        run.describe()
    );
}

/// The program on liburing and on rsuring with `vars`: same stdout.
fn same_output(name: &str, vars: &[(&str, &str)]) {
    if !two_libs::reference_available(&format!("differential {name}")) {
        return;
    }
    let bin = program();
    let reference = two_libs::run(bin, Lib::Liburing, vars, TIMEOUT);
    completed(&reference, "Debian's liburing");
    let ours = two_libs::run(bin, Lib::Rsuring, vars, TIMEOUT);
    completed(&ours, "rsuring");
    println!(
        "differential {name}: {} lines, liburing {:.2?}, rsuring {:.2?}",
        reference.stdout.lines().count(),
        reference.elapsed,
        ours.elapsed
    );
    if ours.stdout == reference.stdout {
        return;
    }
    // Rule out the program itself: liburing must give what it gave.
    let again = two_libs::run(bin, Lib::Liburing, vars, TIMEOUT);
    if again.stdout != reference.stdout {
        panic!(
            "the differential program is not deterministic on liburing (a test bug):\n{}",
            two_libs::unified_diff(
                name,
                ("liburing", &reference.stdout),
                ("liburing-again", &again.stdout)
            )
        );
    }
    // RSURING_STATS=1 prints a line per ring: keep the end.
    let lines: Vec<&str> = ours.stderr.lines().collect();
    let stderr_tail = lines[lines.len().saturating_sub(20)..].join("\n");
    panic!(
        "rsuring's output differs from liburing's ({}):\n{}\nrsuring's stderr (last lines):\n{stderr_tail}",
        ours.cmdline,
        two_libs::unified_diff(
            name,
            ("liburing", &reference.stdout),
            ("rsuring", &ours.stdout)
        ),
    );
}

#[test]
fn plain() {
    same_output("plain", &[]);
}

#[test]
fn with_statistics() {
    same_output("stats", &[("RSURING_STATS", "1")]);
}

#[test]
fn with_shared_sqpoll() {
    same_output("sqpoll_percpu", &[("RSURING_SQPOLL_PERCPU", "1")]);
}
