//! Per-CPU shared SQPOLL: drives the C programs in `c_tests/sqpoll/`.
//!
//! Two kinds of program, built by the shared harness (`tests/common`):
//! - against OUR headers (`<rsuring.h>`), linked to our library through
//!   an RPATH directory; `ldd` must confirm that the program resolves
//!   `liburing.so.2` to our file (the system has Debian's too);
//! - "unmodified binaries": compiled against Debian's `/usr/include/liburing.h`
//!   and linked with Debian's `-luring`, then run with
//!   `LD_PRELOAD=<abs path of librsuring.so>` and the `RSURING_*` variables.
//!
//! Every program runs in its own process group with a timeout, with all
//! `RSURING_*` variables, `LD_PRELOAD` and `LD_LIBRARY_PATH` removed from
//! the inherited environment, then set as each scenario needs. Exit
//! status: 0 pass, 77 skip (the kernel lacks io_uring; reported, a failure
//! under `RSURING_STRICT=1`), anything else fails with the program's output
//! and a command line to reproduce. Programs print nothing on stderr when
//! they pass; where the library is expected to warn (malformed variables)
//! the exact lines are checked.
//!
//! Needs root (some scenarios run as nobody) and `cargo build --release`
//! (or the same profile as the tests) first.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{launch, CProgram, Launch, Run};

const TIMEOUT: Duration = Duration::from_secs(60);

/// `c_tests/sqpoll/<name>.c` against our header and library.
fn ours(name: &str) -> PathBuf {
    CProgram::new(name, format!("c_tests/sqpoll/{name}.c")).build()
}

/// `c_tests/sqpoll/<name>.c` as an unmodified binary: Debian's header and
/// `-luring`.
fn debian(name: &str) -> PathBuf {
    CProgram::new(
        &format!("{name}-debian"),
        format!("c_tests/sqpoll/{name}.c"),
    )
    .debian()
    .define("SQ_DEBIAN")
    .build()
}

/// Runs it with TIMEOUT; a timeout or a signal fails the test.
fn run(l: Launch) -> Run {
    let r = l.timeout(TIMEOUT).run();
    assert!(
        !r.timed_out,
        "program timed out (killed):\n{}",
        r.describe()
    );
    if let Some(sig) = r.signal {
        panic!("program killed by signal {sig}:\n{}", r.describe());
    }
    r
}

/// Panics unless the program passed with a silent stderr. Returns false
/// when it skipped.
fn passed(r: &Run) -> bool {
    if !r.expect_pass() {
        return false;
    }
    assert!(
        r.stderr.is_empty(),
        "program passed but wrote to stderr (nothing expected):\n{}",
        r.describe()
    );
    true
}

/// `launch` with the variables `vars`.
fn with_vars(bin: &Path, args: &[&str], vars: &[(&str, &str)]) -> Launch {
    vars.iter().fold(launch(bin, args), |l, (k, v)| l.var(k, v))
}

fn lib_str() -> String {
    common::area().lib.display().to_string()
}

/// Our program, plain environment: must pass silently.
fn run_ours(name: &str, args: &[&str], vars: &[(&str, &str)]) -> Option<Run> {
    let r = run(with_vars(&ours(name), args, vars));
    passed(&r).then_some(r)
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

/// An unmodified binary (see [`debian`]) launched as `l`: must pass
/// silently, served by our library exactly when `l` preloads it.
fn run_debian(l: Launch) -> Option<Run> {
    let preloaded = l.has_var("LD_PRELOAD");
    let r = run(l);
    if !passed(&r) {
        return None;
    }
    let implementation = PathBuf::from(r.field("impl"));
    let implementation = implementation.canonicalize().unwrap_or(implementation);
    if preloaded {
        assert_eq!(
            implementation,
            common::area().lib,
            "under LD_PRELOAD the liburing functions must come from our library:\n{}",
            r.describe()
        );
    } else {
        assert_ne!(implementation, common::area().lib, "{}", r.describe());
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
    let bin = debian("env_percpu");
    let Some(r) = run_debian(launch(&bin, &[])) else {
        return;
    };
    assert_eq!(r.field("sqp_threads"), "4", "{}", r.describe());

    let r = run_debian(launch(&bin, &[]).var("LD_PRELOAD", &lib)).unwrap();
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
            launch(&bin, &[])
                .var("LD_PRELOAD", &lib)
                .var("RSURING_SQPOLL_PERCPU", on),
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
        launch(&bin, &[])
            .var("LD_PRELOAD", &lib)
            .var("RSURING_SQPOLL_PERCPU", "0"),
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
    let bin = debian("transparent");
    let Some(r) = run_debian(launch(&bin, &[]).nobody()) else {
        return;
    };
    assert_eq!(r.field("sqp_threads"), "0", "{}", r.describe());

    let r = run_debian(launch(&bin, &[]).preload().nobody()).unwrap();
    assert_eq!(r.field("sqpoll_flag"), "0", "{}", r.describe());
    assert_eq!(r.field("sqp_threads"), "0", "{}", r.describe());

    // Unprivileged, on CPU 0, its poller on CPU 1.
    // Without the step-aside rule, which depends on the machine's load.
    let sqpoll = || {
        launch(&bin, &[])
            .preload()
            .var("RSURING_SQPOLL", "1")
            .var("RSURING_SQPOLL_STEP_ASIDE", "0")
    };
    let r = run(sqpoll().var("RSURING_SQPOLL_CPUS", "1").cpus("0").nobody());
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
        (
            sqpoll().var("RSURING_SQPOLL_CPUS", "1").cpus("0"),
            "can change its credentials",
        ),
        (sqpoll().nobody(), "a poller needs a CPU of its own"),
        (
            sqpoll().var("RSURING_SQPOLL_CPUS", "1").nobody(),
            "a poller needs a CPU of its own",
        ),
    ];
    for (l, why) in refused {
        let r = run(l);
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
                let l = launch(debian("params_reuse"), &["debian"])
                    .var("LD_PRELOAD", &lib)
                    .var("RSURING_SQPOLL_PERCPU", "1")
                    .var("RSURING_SQPOLL_CPUS", "0,1");
                if let Some(r) = run_debian(l) {
                    assert_eq!(r.field("sqp_threads"), "2", "{}", r.describe());
                    assert_eq!(r.field("sqp_cpus"), "0,1", "{}", r.describe());
                }
            }),
        ),
        (
            "debian-plain",
            Box::new(move || {
                let l = launch(debian("params_reuse"), &["debian-plain"])
                    .var("LD_PRELOAD", &lib2)
                    .var("RSURING_SQPOLL", "1")
                    .var("RSURING_SQPOLL_STEP_ASIDE", "0")
                    .var("RSURING_SQPOLL_CPUS", "1")
                    .cpus("0")
                    .nobody();
                if let Some(r) = run_debian(l) {
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
    let bin = ours("placement");
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
        let r = run(with_vars(&bin, &["malformed"], vars));
        if !r.expect_pass() {
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
