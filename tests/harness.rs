//! The test harness (`tests/common`) checks itself: strict skips, C
//! warnings, timeouts, clean environments, the one C helper pair.

mod common;

use common::{launch, CProgram, Removed};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The child that `skips_fail_only_under_strict_mode` starts.
#[test]
#[ignore = "run by skips_fail_only_under_strict_mode"]
fn skip_probe() {
    common::skip("skip_probe", "always skips");
}

#[test]
fn skips_fail_only_under_strict_mode() {
    let me = std::env::current_exe().expect("current_exe");
    let args = ["--ignored", "--exact", "skip_probe", "--test-threads=1"];
    let probe = |strict| launch(&me, &args).var("RSURING_STRICT", strict).run();
    let (relaxed, strict) = (probe("0"), probe("1"));
    let skipped = relaxed.stderr.contains("SKIPPED skip_probe: always skips");
    assert!(relaxed.ok() && skipped, "{}", relaxed.describe());
    let failed = strict.stdout.contains("cannot be skipped under");
    assert!(!strict.ok() && failed, "{}", strict.describe());
}

fn scratch(name: &str) -> Removed {
    let dir = Removed(common::area().bin_dir.join(common::unique(name)));
    fs::create_dir_all(&dir.0).expect("create the directory");
    dir
}

/// An unused variable fails the C build (the `cc` crate's `-w` once hid all).
#[test]
fn warnings_fail_the_build() {
    let dir = scratch("warning");
    let source = dir.0.join("unused.c");
    fs::write(&source, "int main(void) { int unused; return 0; }\n").unwrap();
    let name = format!("{}/unused", dir.0.file_name().unwrap().to_string_lossy());
    let built = std::panic::catch_unwind(|| CProgram::new(&name, &source).build());
    assert!(built.is_err(), "a warning did not fail the build");
}

/// A program that outlives its timeout is killed with its children.
#[test]
fn a_timeout_kills_the_process_group() {
    let dir = scratch("timeout");
    let pid_file = dir.0.join("child.pid");
    let script = format!("sleep 600 & echo $! > {}; wait", pid_file.display());
    let limit = Duration::from_millis(500);
    let run = launch("sh", &["-c", &script]).timeout(limit).run();
    let said = run.how().contains("timed out");
    assert!(run.timed_out && !run.ok() && said, "{}", run.describe());
    let child = fs::read_to_string(&pid_file).expect("the child's pid");
    let stat_file = format!("/proc/{}/stat", child.trim());
    let stat = || fs::read_to_string(&stat_file).unwrap_or_default();
    // Dead: gone, or a zombie. SIGKILL is delivered asynchronously.
    let running = |s: String| s.rsplit_once(") ").is_some_and(|r| !r.1.starts_with('Z'));
    let deadline = Instant::now() + Duration::from_secs(2);
    while running(stat()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!running(stat()), "the child lives: {}", stat());
}

/// The caller's RSURING_* (but _STRICT) and LD_* stay out; the launch's get in.
#[test]
fn programs_start_with_a_clean_environment() {
    let run = launch("env", &[]).var("RSURING_STATS", "1").run();
    assert!(run.ok(), "{}", run.describe());
    let ours = |l: &&str| l.starts_with("RSURING_") || l.starts_with("LD_");
    let strict_var = |l: &&str| l.starts_with("RSURING_STRICT=");
    let vars: Vec<&str> = run.stdout.lines().filter(ours).collect();
    let vars: Vec<&str> = vars.into_iter().filter(|l| !strict_var(l)).collect();
    let quiet = Some("RSURING_QUIET_UNKNOWN=RSURING_STRICT").filter(|_| common::strict());
    let expected: Vec<&str> = quiet.into_iter().chain(["RSURING_STATS=1"]).collect();
    assert_eq!(vars, expected, "{}", run.describe());
    // cargo sets LD_LIBRARY_PATH for the test process itself.
    assert!(std::env::var_os("LD_LIBRARY_PATH").is_some());
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let list = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    list.map(|e| e.unwrap().path()).collect()
}

const HELPER: &str = "#include \"../rsuring_test.h\"";

/// `c_tests/`: `rsuring_test.{h,c}` (cbuild.rs links the .c) and area folders
/// whose C files include it and no other local file; no header or script.
#[test]
fn every_c_test_uses_the_one_helper_pair() {
    let root = common::repo().join("c_tests");
    let (areas, mut top): (Vec<_>, Vec<_>) = entries(&root).into_iter().partition(|p| p.is_dir());
    top.sort(); // the files at the top
    let pair = [root.join("rsuring_test.c"), root.join("rsuring_test.h")];
    let linked = common::cbuild::helpers() == pair[0];
    assert!(top == pair && linked, "{top:?}");
    let files: Vec<PathBuf> = areas.iter().flat_map(|a| entries(a)).collect();
    let mut c_files = 0;
    for path in files.iter().chain(&entries(&common::repo().join("tests"))) {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let shown = path.display();
        let misplaced = matches!(ext, "sh" | "py") || (ext == "h" && path.starts_with(&root));
        assert!(!misplaced, "{shown}: a header or script out of place");
        if ext == "c" {
            c_files += 1;
            let text = fs::read_to_string(path).unwrap();
            let mut local = text.lines().filter(|l| l.starts_with("#include \""));
            let one = local.next() == Some(HELPER) && local.next().is_none();
            assert!(one, "{shown}: includes a local file other than {HELPER}");
        }
    }
    assert!(c_files > 90, "only {c_files} C files under c_tests/");
}
