//! The hostile differential test (issue 34): what liburing's own suites
//! never try — forked children of every kind that use, exit or outlive an
//! inherited ring; threads that set up, use, register and exit rings in
//! every order; the application's own management of the kernel's
//! registered-ring table; `close`/`dup`/`dup2` on the ring fd; seccomp
//! filters that refuse, trap or kill `io_uring_register`; the fields of
//! `struct io_uring` another copy of liburing reads; fds that are not
//! rings; `RLIMIT_NOFILE` at its floor; 1,000 threads churning rings.
//!
//! One program (`c_tests/hostile/*.c`), built once against Debian's liburing
//! 2.3 header and linked with Debian's `-luring`, runs each section in a
//! process of its own on Debian's `liburing.so.2` (the reference) and on
//! rsuring, through `LD_LIBRARY_PATH` and through `LD_PRELOAD`:
//!
//! - by default the outputs must be identical;
//! - with `RSURING_REGISTER_RING_FD=1` (the opt-in registration) every line
//!   the program marks `* ` must still be identical (a forked child never
//!   harms its parent, no seccomp death, no submit that reaches a ring the
//!   caller did not name), the program must finish (no crash, no hang),
//!   and a section may differ elsewhere only if [`OPT_IN_MAY_DIFFER`]
//!   lists it with its reason; the differences are printed.
//!
//! A run that prints a `!!` line (a watchdog, a helper that failed) fails.
//! `c_tests/hostile/NOTES.md` says what each section prints and what it
//! leaves out. Needs `cargo build --release` first.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use common::two_libs;
use common::Run;

/// Every section has a 60 s watchdog; most take a second or two.
const TIMEOUT: Duration = Duration::from_secs(90);

/// The opt-in switch of the library's own ring-fd registration.
const OPT_IN: (&str, &str) = ("RSURING_REGISTER_RING_FD", "1");

/// Sections whose output may differ from liburing's under the opt-in
/// (their `* ` lines may not), each with the reason.
const OPT_IN_MAY_DIFFER: &[(&str, &str)] = &[
    (
        "threads",
        "a ring exited on a thread that does not hold its registered slot lives until the holder \
         sets up or exits a ring or ends (the DEFER_TASKRUN worker case sees no EOF)",
    ),
    (
        "sqpoll_exit",
        "the same for an SQPOLL ring exited off its creator thread: its SQ thread and registered \
         files stay while the creator holds the slot",
    ),
    (
        "full_table",
        "the library holds a slot (15..8) of the thread's table, so the application's 16th raw \
         registration at any offset gets -EBUSY",
    ),
    (
        "fd_games",
        "enters go through the registered slot: a close()d, reopened or dup2()ed-over ring fd \
         still submits to the ring, and a ring close()d instead of exited stays alive",
    ),
    (
        "fields",
        "enter_ring_fd holds the slot and int_flags 0x10, so a raw enter made from them as \
         liburing 2.3 makes it (a second liburing copy) fails",
    ),
    (
        "seccomp_allowlist",
        "the opt-in reads /proc/self/status (openat) to find a seccomp filter, a call an \
         allow-list of liburing's calls refuses",
    ),
];

/// The program, built once per test process.
fn program() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| two_libs::build_area("hostile"))
}

/// How the program gets its library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    Liburing,
    LibraryPath,
    Preload,
}

impl Via {
    fn name(self) -> &'static str {
        match self {
            Via::Liburing => "liburing",
            Via::LibraryPath => "rsuring-LD_LIBRARY_PATH",
            Via::Preload => "rsuring-LD_PRELOAD",
        }
    }
}

/// One section on one library, finished and served by the library asked
/// for; panics otherwise.
fn run(section: &str, via: Via, vars: &[(&str, &str)]) -> Run {
    let bin = program();
    let mut launch = common::launch(bin, &[section])
        .cwd(bin.parent().expect("binary in a directory"))
        .timeout(TIMEOUT);
    match via {
        Via::Liburing => {}
        Via::LibraryPath => {
            let dir = common::area().lib_dir.display().to_string();
            launch = launch.var("LD_LIBRARY_PATH", &dir);
        }
        Via::Preload => launch = launch.preload(),
    }
    let run = vars.iter().fold(launch, |l, (k, v)| l.var(k, v)).run();
    let Some(path) = run.stderr.lines().find_map(|l| l.strip_prefix("library: ")) else {
        panic!(
            "{section}: the program did not say which library served it:\n{}",
            run.describe()
        );
    };
    let ours = Path::new(path).canonicalize().ok().as_deref() == Some(common::library().as_path());
    assert!(
        ours == (via != Via::Liburing) && (ours || path.contains("liburing.so.2")),
        "{section}: asked for {}, served by {path}:\n{}",
        via.name(),
        run.describe()
    );
    assert!(
        run.ok() && !run.stdout.lines().any(|l| l.starts_with("!!")),
        "{section} on {} did not finish cleanly:\n{}",
        via.name(),
        run.describe()
    );
    run
}

/// The lines that must hold under the opt-in too.
fn critical(out: &str) -> String {
    out.lines()
        .filter(|l| l.starts_with("* ") || l.starts_with("== ") || l.starts_with("-- "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Panics with the diff when liburing does not give what it gave before
/// (then the program, not rsuring, is at fault).
fn reference_is_stable(section: &str, reference: &str) {
    let again = run(section, Via::Liburing, &[]);
    if again.stdout != reference {
        panic!(
            "{section}: the program is not deterministic on liburing (a test bug):\n{}",
            two_libs::unified_diff(
                section,
                ("liburing", reference),
                ("liburing-again", &again.stdout)
            )
        );
    }
}

/// The section on liburing, then on rsuring by default (identical output)
/// and with the opt-in (identical `* ` lines; identical output unless
/// listed in [`OPT_IN_MAY_DIFFER`]).
fn check(section: &str) {
    if !two_libs::reference_available(&format!("hostile {section}")) {
        return;
    }
    let reference = run(section, Via::Liburing, &[]);
    let mut failures = Vec::new();
    for via in [Via::LibraryPath, Via::Preload] {
        let ours = run(section, via, &[]);
        println!(
            "hostile {section} ({}): liburing {:.2?}, rsuring {:.2?}",
            via.name(),
            reference.elapsed,
            ours.elapsed
        );
        if ours.stdout != reference.stdout {
            reference_is_stable(section, &reference.stdout);
            failures.push(format!(
                "rsuring ({}, default) differs from liburing ({}):\n{}",
                via.name(),
                ours.cmdline,
                two_libs::unified_diff(
                    section,
                    ("liburing", &reference.stdout),
                    (via.name(), &ours.stdout)
                )
            ));
        }
    }
    let allowed = OPT_IN_MAY_DIFFER.iter().find(|(s, _)| *s == section);
    for via in [Via::LibraryPath, Via::Preload] {
        let ours = run(section, via, &[OPT_IN]);
        let name = format!("{}-opt-in", via.name());
        if ours.stdout == reference.stdout {
            if let Some((_, why)) = allowed {
                println!("hostile {section} ({name}): identical to liburing, though listed as allowed to differ ({why})");
            }
            continue;
        }
        let diff = two_libs::unified_diff(
            section,
            ("liburing", &reference.stdout),
            (&name, &ours.stdout),
        );
        if critical(&ours.stdout) != critical(&reference.stdout) {
            reference_is_stable(section, &reference.stdout);
            failures.push(format!(
                "with {}={}, rsuring ({}) breaks a line that must hold (\"* \"):\n{diff}",
                OPT_IN.0,
                OPT_IN.1,
                via.name()
            ));
        } else if let Some((_, why)) = allowed {
            println!("hostile {section} ({name}): differs as allowed ({why}):\n{diff}");
        } else {
            reference_is_stable(section, &reference.stdout);
            failures.push(format!(
                "with {}={}, rsuring ({}) differs in a section not listed in OPT_IN_MAY_DIFFER:\n{diff}",
                OPT_IN.0,
                OPT_IN.1,
                via.name()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "hostile {section}:\n{}",
        failures.join("\n")
    );
}

/// One test per section, and [`SECTIONS`], the sections in the program's
/// order (`hostile list` must agree).
macro_rules! sections {
    ($($name:ident),* $(,)?) => {
        const SECTIONS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*
    };
}

sections!(
    fork,
    fork_atfork,
    fork_outlive,
    threads,
    sqpoll_exit,
    churn,
    raw_slots,
    full_table,
    fd_games,
    seccomp,
    seccomp_allowlist,
    fields,
    bad_input,
    mmap_not_a_ring,
    nofile,
);

/// The program's sections, the driver's list and the allowed differences
/// name the same sections.
#[test]
fn every_section_is_checked() {
    if !two_libs::reference_available("hostile every_section_is_checked") {
        return;
    }
    let run = common::launch(program(), &["list"]).run();
    assert!(run.ok(), "{}", run.describe());
    let listed: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        listed, SECTIONS,
        "c_tests/hostile's sections and SECTIONS disagree"
    );
    for (section, _) in OPT_IN_MAY_DIFFER {
        assert!(
            SECTIONS.contains(section),
            "OPT_IN_MAY_DIFFER names {section}, which is not a section"
        );
    }
}
