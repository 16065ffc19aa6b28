//! rsuring on the kernels people run, and under the limits they run with.
//!
//! - `mlock_size_with_memlock_used_up`: as nobody whose rings used up
//!   RLIMIT_MEMLOCK, `io_uring_mlock_size` and friends return what Debian's
//!   liburing 2.3 returns (`c_tests/oldkernel/mlock.c`, built twice).
//! - The `emulated_*` tests run programs under `c_tests/oldkernel/supervise.c`,
//!   which makes the real kernel's io_uring answer as an older kernel's
//!   would (its tables: `SINCE` in `c_tests/oldkernel/supervise.c`; what it cannot
//!   emulate: docs/compatibility.md).

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{launch, CProgram, Launch, Link, Removed, Run};

fn fields(run: &Run) -> BTreeMap<String, String> {
    run.stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn debian_ready(what: &str) -> bool {
    common::require_file(what, Path::new(common::DEBIAN_HEADER), "liburing-dev")
        && common::debian_liburing().is_some()
        && common::require_tool(what, "setpriv", "util-linux")
}

#[test]
fn mlock_size_with_memlock_used_up() {
    let what = "oldkernel mlock_size as nobody";
    if !debian_ready(what) {
        return;
    }
    let src = "c_tests/oldkernel/mlock.c";
    let ours = CProgram::new("mlock", src).build();
    let theirs = CProgram::new("mlock.debian", src).debian().build();
    let run = |bin: &Path| {
        let run = launch(bin, &[])
            .nobody()
            .timeout(Duration::from_secs(30))
            .run();
        assert!(run.ok(), "{}", run.describe());
        run
    };
    let (a, b) = (run(&ours), run(&theirs));
    let (got, want) = (fields(&a), fields(&b));
    assert_eq!(
        got,
        want,
        "rsuring (left) and liburing 2.3 (right) differ:\n{}\n{}",
        a.describe(),
        b.describe()
    );
    // The case of the issue: the probe ring cannot be set up, the size is
    // computed all the same (two 64-page blocks on 4 KiB pages).
    assert_eq!(got["probe_errno"], libc::ENOMEM.to_string());
    assert_eq!(got["queue_init"], (-libc::ENOMEM).to_string());
    // SAFETY: sysconf has no preconditions.
    if unsafe { libc::sysconf(libc::_SC_PAGESIZE) } == 4096 {
        assert_eq!(got["mlock_size_4096"], "524288");
    }
}

// ---- the emulation ----

/// `c_tests/oldkernel/supervise.c`, built once.
fn supervisor() -> PathBuf {
    CProgram::new("supervise", "c_tests/oldkernel/supervise.c")
        .link(Link::Dlopen)
        .build()
}

/// The kernels the long tests emulate: `RSURING_OLDKERNELS` (e.g.
/// "5.15 6.1 6.6"), Debian 12's 6.1 by default.
fn kernels() -> Vec<String> {
    std::env::var("RSURING_OLDKERNELS")
        .unwrap_or_else(|_| "6.1".into())
        .split([' ', ','])
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect()
}

/// `launch` under the emulation of `kernel`, logging to `log`.
fn emulated(launch: Launch, kernel: &str, extra: &[&str], log: &Path) -> Launch {
    let sup = supervisor().display().to_string();
    let log = log.display().to_string();
    let mut argv = vec![sup.as_str(), "--kernel", kernel, "--log", log.as_str()];
    argv.extend_from_slice(extra);
    argv.push("--");
    launch.wrap(&argv)
}

/// A fresh log file for one run (removed when dropped).
fn log_file(name: &str) -> Removed {
    let dir = common::area().bin_dir.join("logs");
    fs::create_dir_all(&dir).expect("log directory");
    let path = dir.join(common::unique(name));
    let _ = fs::remove_file(&path);
    Removed(path)
}

fn read_log(log: &Path) -> String {
    fs::read_to_string(log).unwrap_or_default()
}

/// The log's lines per process image (a pid's lines split at its execs).
fn per_image(log: &str) -> Vec<Vec<&str>> {
    let mut images: BTreeMap<&str, Vec<Vec<&str>>> = BTreeMap::new();
    for line in log.lines() {
        let Some(pid) = line.strip_prefix("pid ").and_then(|l| l.split(' ').next()) else {
            continue;
        };
        let list = images.entry(pid).or_default();
        if line.ends_with(" exec") || list.is_empty() {
            list.push(Vec::new());
        }
        list.last_mut().unwrap().push(line);
    }
    images.into_values().flatten().collect()
}

#[test]
fn tables_give_each_kernels_interface() {
    // The masks supervise.c's SINCE table yields, restated from the kernels' uapi headers.
    let want = [
        ("5.15", "setup_flags=0x7f features=0x7ff enter_flags=0xf register_ops=20 reg_reg_ring=0 last_op=39"),
        ("6.1", "setup_flags=0x3fff features=0x1fff enter_flags=0x1f register_ops=26 reg_reg_ring=0 last_op=48"),
        ("6.6", "setup_flags=0x1ffff features=0x3fff enter_flags=0x1f register_ops=26 reg_reg_ring=1 last_op=48"),
    ];
    for (kernel, masks) in want {
        let run = launch(supervisor(), &["--kernel", kernel, "--tables"]).run();
        assert!(run.ok(), "{}", run.describe());
        assert_eq!(run.stdout.trim(), format!("kernel={kernel} {masks}"));
    }
    let run = launch(supervisor(), &["--kernel", "4.19", "--tables"]).run();
    assert_eq!(
        run.code,
        Some(125),
        "a kernel the table cannot describe is refused"
    );
}

#[test]
fn emulation_answers_as_the_old_kernel_in_threads_and_children() {
    let bin = CProgram::new("emulation", "c_tests/oldkernel/emulation.c")
        .link(Link::Dlopen)
        .build();
    let native = launch(&bin, &[]).run();
    assert!(native.ok(), "{}", native.describe());
    let native = fields(&native);
    // (kernel, what must differ from 6.18: key -> value)
    let expect: [(&str, &[(&str, &str)]); 3] = [
        (
            "5.15",
            &[
                ("no_sqarray", "-22"),
                ("defer_taskrun", "-22"),
                ("submit_all", "-22"),
                ("features", "0x7ff"),
                ("last_op", "39"),
                ("ops_len", "40"),
                ("supported", "40"),
                ("register_ring_fds", "-22"),
                ("register_use_registered", "-22"),
                ("enter_abs_timer", "-22"),
            ],
        ),
        (
            "6.1",
            &[
                ("no_sqarray", "-22"),
                ("features", "0x1fff"),
                ("last_op", "48"),
                ("ops_len", "49"),
                ("supported", "49"),
                ("register_use_registered", "-22"),
                ("enter_abs_timer", "-22"),
            ],
        ),
        (
            "6.6",
            &[
                ("features", "0x3fff"),
                ("last_op", "48"),
                ("ops_len", "49"),
                ("supported", "49"),
                ("enter_abs_timer", "-22"),
            ],
        ),
    ];
    for (kernel, diffs) in expect {
        for how in ["main", "thread", "fork"] {
            let log = log_file("emulation.log");
            let run = emulated(launch(&bin, &[how]), kernel, &[], &log.0).run();
            assert!(run.ok(), "{kernel} {how}: {}", run.describe());
            let mut want = native.clone();
            for (k, v) in diffs {
                want.insert(k.to_string(), v.to_string());
            }
            assert_eq!(fields(&run), want, "{kernel} {how}: {}", run.describe());
        }
    }
}

/// C tests that cannot pass on a kernel, with the reason they give
/// (exit 77): the feature they test is not there.
const EXPECTED_SKIPS: &[(&str, &str, &str)] = &[
    // The emulation is a seccomp filter, under which the library's opt-in
    // registration registers nothing (docs/compatibility.md).
    ("5.15", "auto_ring_fd", "under a seccomp filter"),
    ("6.1", "auto_ring_fd", "under a seccomp filter"),
    ("6.6", "auto_ring_fd", "under a seccomp filter"),
    ("5.15", "buf_ring", "buf rings not supported"),
    ("5.15", "buf_ring_setup", "buffer rings not supported"),
    ("5.15", "cancel", "sync cancel not supported"),
    ("5.15", "close_ring_fd", "no IORING_FEAT_REG_REG_RING"),
    ("5.15", "peek_batch", "without IORING_SETUP_CQE32"),
    ("5.15", "ring_fd", "IORING_REGISTER_RING_FDS not supported"),
    ("5.15", "sq_array", "no IORING_SETUP_NO_SQARRAY"),
    ("5.15", "wait_batch_equiv", "without IORING_SETUP_CQE32"),
    ("6.1", "close_ring_fd", "no IORING_FEAT_REG_REG_RING"),
    ("6.1", "sq_array", "no IORING_SETUP_NO_SQARRAY"),
    // Its last steps need ring resizing (6.13).
    ("6.6", "sq_array", "the kernel cannot resize rings"),
];

/// C tests that set up rings with IORING_SETUP_NO_SQARRAY themselves, and
/// how many.
const APP_NO_SQARRAY: &[(&str, usize)] = &[("setup_restrict", 1)];

#[test]
fn c_tests_under_older_kernels() {
    let dir = common::repo().join("c_tests/core");
    let mut tests: Vec<String> = fs::read_dir(&dir)
        .expect("c_tests/core/")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "c").then(|| path.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    tests.sort();
    let mut failures = Vec::new();
    for kernel in kernels() {
        for test in &tests {
            let bin = CProgram::new(test, format!("c_tests/core/{test}.c")).build();
            let log = log_file(&format!("{test}.log"));
            let expected = EXPECTED_SKIPS
                .iter()
                .find(|(k, t, _)| *k == kernel && t == test)
                .map(|e| e.2);
            // A skip named in EXPECTED_SKIPS is this kernel's, not a missing
            // tool: the program may report it as a skip even in strict mode
            // (sq_array turns its skips into failures under RSURING_STRICT=1).
            let mut program = launch(&bin, &[]);
            if expected.is_some() {
                program = program.var("RSURING_STRICT", "0");
            }
            let run = emulated(program, &kernel, &[], &log.0)
                .cwd(&common::area().bin_dir)
                .timeout(Duration::from_secs(60))
                .run();
            let verdict = match expected {
                None if run.ok() => Ok("ok".to_string()),
                Some(why) if run.skipped() && run.last_stderr_line().contains(why) => {
                    Ok(format!("expected skip: {why}"))
                }
                _ => Err(format!("{kernel} {test}: {}", run.describe())),
            };
            match verdict {
                Ok(v) => println!("{kernel} {test} ... {v}"),
                Err(e) => failures.push(e),
            }
            // One NO_SQARRAY detection per process: at most the ring that
            // found out and the library's one-entry check, plus the rings
            // that asked for NO_SQARRAY themselves.
            let own = APP_NO_SQARRAY
                .iter()
                .find(|(t, _)| t == test)
                .map_or(0, |a| a.1);
            let log = read_log(&log.0);
            for image in per_image(&log) {
                let refused = image
                    .iter()
                    .filter(|l| l.contains("flags 0x10000 unknown"))
                    .count();
                if refused > 2 + own {
                    failures.push(format!(
                        "{kernel} {test}: {refused} NO_SQARRAY setups refused in one process:\n{}",
                        image.join("\n")
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn disabled_io_uring_fails_every_setup_as_liburing_does() {
    let what = "oldkernel io_uring_disabled";
    if !debian_ready(what) {
        return;
    }
    let src = "c_tests/oldkernel/disabled.c";
    let ours = CProgram::new("disabled", src).build();
    let theirs = CProgram::new("disabled.debian", src).debian().build();
    for (mode, errno) in [("1", -libc::EPERM), ("2", -libc::ENOSYS)] {
        let run = |bin: &Path, sqpoll: bool| {
            let log = log_file("disabled.log");
            // Unprivileged on CPU 0 with pollers on CPU 1, as RSURING_SQPOLL=1
            // needs to engage.
            let mut l = launch(bin, &[]).nobody().cpus("0");
            if sqpoll {
                l = l
                    .var("RSURING_SQPOLL", "1")
                    .var("RSURING_SQPOLL_STEP_ASIDE", "0")
                    .var("RSURING_SQPOLL_CPUS", "1");
            }
            let run = emulated(l, "6.1", &["--disabled", mode], &log.0).run();
            assert!(run.ok(), "{}", run.describe());
            let setups = read_log(&log.0)
                .lines()
                .filter(|l| l.contains("setup"))
                .count();
            (run, setups)
        };
        let (b, b_setups) = run(&theirs, false);
        for sqpoll in [false, true] {
            let (a, a_setups) = run(&ours, sqpoll);
            assert_eq!(
                fields(&a),
                fields(&b),
                "disabled={mode}:\n{}\n{}",
                a.describe(),
                b.describe()
            );
            // A transparent ring refused with -EPERM is tried once more
            // plain (an LSM may refuse SQPOLL alone); -ENOSYS is final.
            // Here: queue_init and queue_init_params (the other setups ask
            // for flags that keep a ring plain, or are not the library's).
            let extra = if sqpoll && mode == "1" { 2 } else { 0 };
            assert_eq!(
                a_setups - extra,
                b_setups,
                "io_uring_setup calls as in liburing: {}",
                a.describe()
            );
            // Nothing printed but RSURING_SQPOLL=1's documented notes, once
            // each, and none claiming that SQPOLL was what the kernel refused.
            let notes: Vec<&str> = a.stderr.lines().collect();
            let mut unique = notes.clone();
            unique.dedup();
            assert!(
                notes.len() == unique.len()
                    && notes.iter().all(|n| sqpoll
                        && n.starts_with("rsuring: RSURING_SQPOLL=1: ")
                        && !n.contains("refused SQPOLL")),
                "only documented notes: {}",
                a.describe()
            );
        }
        assert_eq!(fields(&b)["queue_init"], errno.to_string());
    }
}

#[test]
fn transparent_ring_whose_sqpoll_setup_is_refused_comes_up_plain() {
    let what = "oldkernel SQPOLL refused for memory";
    if !common::require_tool(what, "setpriv", "util-linux")
        || !common::require_tool(what, "taskset", "util-linux")
    {
        return;
    }
    let bin = CProgram::new("sqpoll_refused", "c_tests/oldkernel/sqpoll_refused.c").build();
    let log = log_file("sqpoll_refused.log");
    let l = launch(&bin, &[])
        .var("RSURING_SQPOLL", "1")
        .var("RSURING_SQPOLL_STEP_ASIDE", "0")
        .var("RSURING_SQPOLL_CPUS", "1")
        .nobody()
        .cpus("0");
    let run = emulated(l, "6.1", &["--sqpoll-error", "12"], &log.0).run();
    assert!(run.ok(), "{}", run.describe());
    let got = fields(&run);
    for ring in ["ring0", "ring1"] {
        assert_eq!(
            got[&format!("{ring}_flags")],
            "0",
            "a plain ring: {}",
            run.describe()
        );
        assert_eq!(got[&format!("{ring}_nops")], "4", "{}", run.describe());
    }
    let log = read_log(&log.0);
    let refused = log
        .lines()
        .filter(|l| l.contains("setup refused: SQPOLL: -12"))
        .count();
    assert_eq!(
        refused, 2,
        "each ring tried SQPOLL once, then came up plain:\n{log}"
    );
    let notes: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        notes,
        [
            "rsuring: RSURING_SQPOLL=1: that ring left plain (kernel): the kernel refuses SQPOLL \
          for the setup; the application gets the ring it asked for"
        ],
        "one note for both refusals"
    );
}

#[test]
fn batched_init_degrades_per_kernel_and_learns_once() {
    let bin = CProgram::new("batched", "c_tests/oldkernel/batched.c").build();
    // (kernel, the rings' flags, setups refused for the tiers, first ring only)
    let cases = [
        // Neither DEFER_TASKRUN (6.1) nor COOP_TASKRUN (5.19): the first
        // ring tries DEFER_TASKRUN with and without NO_SQARRAY, then COOP.
        ("5.15", "0", 3),
        ("6.1", "0x3200", 0), // SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG
    ];
    for (kernel, flags, refused_tiers) in cases {
        let log = log_file("batched.log");
        let run = emulated(launch(&bin, &[]), kernel, &[], &log.0).run();
        assert!(run.ok(), "{kernel}: {}", run.describe());
        let got = fields(&run);
        for i in 0..3 {
            assert_eq!(
                got[&format!("ring{i}_flags")],
                flags,
                "{kernel}: {}",
                run.describe()
            );
            assert_eq!(
                got[&format!("ring{i}_nop")],
                "0",
                "{kernel}: {}",
                run.describe()
            );
        }
        let log = read_log(&log.0);
        // Refusals other than the NO_SQARRAY-only ones (see
        // c_tests_under_older_kernels for those).
        let tiers = log
            .lines()
            .filter(|l| l.contains("setup refused") && !l.contains("flags 0x10000 "))
            .count();
        assert_eq!(
            tiers, refused_tiers,
            "{kernel}: refused tiers, first ring only:\n{log}"
        );
    }
}

#[test]
fn rings_in_application_memory_need_6_5() {
    let bin = CProgram::new("no_mmap", "c_tests/oldkernel/no_mmap.c").build();
    let native = launch(&bin, &[]).run();
    assert!(native.ok(), "{}", native.describe());
    assert_eq!(fields(&native)["nop"], "0", "{}", native.describe());
    for (kernel, want) in [("6.1", "-22"), ("6.6", "0")] {
        let log = log_file("no_mmap.log");
        let run = emulated(launch(&bin, &[]), kernel, &[], &log.0).run();
        assert!(run.ok(), "{kernel}: {}", run.describe());
        assert_eq!(
            fields(&run)["init_mem"],
            want,
            "{kernel}: {}",
            run.describe()
        );
    }
}

#[test]
fn shared_poller_that_cannot_be_verified_degrades_to_dedicated() {
    let bin = CProgram::new("unverified_poller", "c_tests/oldkernel/unverified_poller.c").build();
    let note = "rsuring: shared SQPOLL: /proc/self/fdinfo/";
    // Seen: the two rings share one poller, nothing printed.
    let run = launch(&bin, &[]).var("RSURING_SQPOLL_PERCPU", "1").run();
    assert!(run.ok(), "{}", run.describe());
    assert_eq!(fields(&run)["sq_threads"], "1", "{}", run.describe());
    assert!(!run.stderr.contains(note), "{}", run.describe());
    // Hidden: a poller each, both rings work, one note, and both pollers
    // counted as unverified in the exit report.
    let log = log_file("unverified_poller.log");
    let l = launch(&bin, &[])
        .var("RSURING_SQPOLL_PERCPU", "1")
        .var("RSURING_STATS", "1");
    let run = emulated(l, "6.6", &["--hide-fdinfo"], &log.0).run();
    assert!(run.ok(), "{}", run.describe());
    let got = fields(&run);
    assert_eq!(got["sq_threads"], "2", "{}", run.describe());
    assert_eq!(
        (got["ring0_nop"].as_str(), got["ring1_nop"].as_str()),
        ("0", "0")
    );
    assert_eq!(
        run.stderr.matches(note).count(),
        1,
        "one note: {}",
        run.describe()
    );
    assert!(
        read_log(&log.0).contains("fdinfo hidden"),
        "the supervisor hid fdinfo"
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("rsuring-process:") && l.contains(" pollers_unverified=2 ")),
        "the exit report counts the unverified pollers: {}",
        run.describe()
    );
}
