//! The shared test harness (`tests/common`) checks itself: skips fail
//! under `RSURING_STRICT=1`, warnings fail a C build, a timeout kills the
//! whole process group, and programs start without the caller's
//! `RSURING_*` / `LD_*` variables.

mod common;

use std::fs;
use std::time::Duration;

use common::{launch, CProgram, Removed};

/// Not run by itself: the child that `skips_fail_only_under_strict_mode`
/// starts.
#[test]
#[ignore = "run by skips_fail_only_under_strict_mode"]
fn skip_probe() {
    common::skip("skip_probe", "always skips");
}

#[test]
fn skips_fail_only_under_strict_mode() {
    let me = std::env::current_exe().expect("current_exe");
    let probe = |strict: &str| {
        launch(
            &me,
            &["--ignored", "--exact", "skip_probe", "--test-threads=1"],
        )
        .var("RSURING_STRICT", strict)
        .timeout(Duration::from_secs(60))
        .run()
    };
    let relaxed = probe("0");
    assert!(relaxed.ok(), "{}", relaxed.describe());
    assert!(
        relaxed.stderr.contains("SKIPPED skip_probe: always skips"),
        "a skip outside strict mode says why:\n{}",
        relaxed.describe()
    );
    let strict = probe("1");
    assert!(
        !strict.ok()
            && strict
                .stdout
                .contains("cannot be skipped under RSURING_STRICT=1"),
        "a skip under RSURING_STRICT=1 fails:\n{}",
        strict.describe()
    );
}

/// A program with an unused variable does not build (the `cc` crate's
/// `-w` once silenced every warning).
#[test]
fn warnings_fail_the_build() {
    let dir = Removed(common::area().bin_dir.join(common::unique("warning")));
    fs::create_dir_all(&dir.0).expect("create the directory");
    let source = dir.0.join("unused.c");
    fs::write(
        &source,
        "int main(void)\n{\n\tint unused;\n\treturn 0;\n}\n",
    )
    .unwrap();
    let name = format!("{}/unused", dir.0.file_name().unwrap().to_string_lossy());
    let built = std::panic::catch_unwind(|| CProgram::new(&name, &source).build());
    assert!(built.is_err(), "a warning did not fail the build");
}

/// A program that outlives its timeout is killed with its children, and
/// the run says so.
#[test]
fn a_timeout_kills_the_process_group() {
    let dir = Removed(common::area().bin_dir.join(common::unique("timeout")));
    fs::create_dir_all(&dir.0).expect("create the directory");
    let pid_file = dir.0.join("child.pid");
    let script = format!("sleep 600 & echo $! > {}; wait", pid_file.display());
    let run = launch("sh", &["-c", &script])
        .timeout(Duration::from_millis(500))
        .run();
    assert!(run.timed_out && !run.ok(), "{}", run.describe());
    assert!(run.how().contains("timed out"), "{}", run.how());
    let child: i32 = fs::read_to_string(&pid_file)
        .expect("the child's pid")
        .trim()
        .parse()
        .unwrap();
    // Dead: gone, or a zombie waiting for init to reap it. SIGKILL is
    // delivered asynchronously, so give it a moment to take effect.
    let alive = || {
        let state = fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        let running = state
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'));
        (running, state)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    let (mut running, mut state) = alive();
    while running && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        (running, state) = alive();
    }
    assert!(
        !running,
        "the child {child} of the timed-out program survived: {state}"
    );
}

/// The caller's RSURING_* (except RSURING_STRICT) and LD_* variables do
/// not reach the program; those the launch sets do (in strict mode also
/// RSURING_QUIET_UNKNOWN).
#[test]
fn programs_start_with_a_clean_environment() {
    let run = launch("env", &[]).var("RSURING_STATS", "1").run();
    assert!(run.ok(), "{}", run.describe());
    let vars: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("RSURING_") || l.starts_with("LD_"))
        .filter(|l| !l.starts_with("RSURING_STRICT="))
        .collect();
    // Under RSURING_STRICT=1 the launch also names that variable as one the
    // library is to stay quiet about (scripts/lib-tooling.sh).
    let expected: &[&str] = if std::env::var("RSURING_STRICT").as_deref() == Ok("1") {
        &["RSURING_QUIET_UNKNOWN=RSURING_STRICT", "RSURING_STATS=1"]
    } else {
        &["RSURING_STATS=1"]
    };
    assert_eq!(vars, expected, "{}", run.describe());
    // cargo sets LD_LIBRARY_PATH for the test process itself.
    assert!(std::env::var_os("LD_LIBRARY_PATH").is_some());
}
