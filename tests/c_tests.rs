//! Drives the C scenario tests in `c_tests/core/*.c` against OUR library.
//!
//! Each program is compiled against `include/liburing.h` and linked to
//! `<target-dir>/<profile>/librsuring.so` through an RPATH directory whose
//! `liburing.so.2` is our library (`tests/common`: `ldd` must confirm that
//! the program resolves `liburing.so.2` to our file and to no other), then
//! run with a 30 s timeout.
//!
//! Exit status of a program: 0 = pass, 77 = skipped (the kernel lacks the
//! feature; reported, and a failure under `RSURING_STRICT=1`), anything
//! else = failure, shown with the program's output and a command line to
//! reproduce.
//!
//! The programs that need nothing newer than liburing 2.3 (`+
//! system_header` in the list below) are also built against Debian's
//! `/usr/include/liburing.h` and run against our library
//! (`system_header::*`): binaries built with an older liburing header must
//! keep working (a skip when that header is absent).
//!
//! The caller's `RSURING_*` variables are passed through, so e.g.
//! `RSURING_SQPOLL_PERCPU=1 cargo test --test c_tests` runs the programs
//! under that mode (scripts/test.sh does).

mod common;

use std::fs;
use std::path::Path;
use std::time::Duration;

use common::{launch, CProgram, Header};

const TIMEOUT: Duration = Duration::from_secs(30);

fn run_c_test(test: &str, header: Header) {
    let name = match header {
        Header::Ours => test.to_string(),
        Header::Debian => format!("{test}.sysheader"),
    };
    let what = format!("c_test {name}");
    if header == Header::Debian
        && !common::require_file(&what, Path::new(common::DEBIAN_HEADER), "liburing-dev")
    {
        return;
    }
    let bin = CProgram::new(&name, format!("c_tests/core/{test}.c"))
        .header(header)
        .build();
    let run = launch(&bin, &[])
        .keep_rsuring_env()
        .cwd(&common::area().bin_dir)
        .timeout(TIMEOUT)
        .run();
    if run.ok() {
        println!("{what} ... ok ({:.2}s)", run.elapsed.as_secs_f64());
        // Passing programs may leave notes (a sub-check the kernel could
        // not do); show them.
        for line in run.stderr.lines() {
            println!("    {name}: {line}");
        }
    } else if run.skipped() {
        common::skip(&what, run.last_stderr_line());
    } else {
        println!("{what} ... FAILED ({})", run.how());
        panic!("{what} failed: {}", run.describe());
    }
}

/// `stringify!` of the first of two names (lets the list's optional `+
/// system_header` drive a repetition of the test name).
macro_rules! first_of {
    ($first:ident, $second:ident) => {
        stringify!($first)
    };
}

/// The one list of C scenario tests: `name` runs `c_tests/core/name.c` built
/// against our header; `name + system_header` also against Debian's
/// (`system_header::name`), for the programs that use no API newer than
/// liburing 2.3.
macro_rules! c_tests {
    ($($name:ident $(+ $also:ident)?),* $(,)?) => {
        const C_TESTS: &[&str] = &[$(stringify!($name)),*];
        /// What follows `+` in the list (must be `system_header`).
        const ALSO: &[&str] = &[$($(stringify!($also),)?)*];
        $(
            #[test]
            fn $name() {
                run_c_test(stringify!($name), Header::Ours);
            }
        )*
        /// The same programs compiled against the system's liburing.h
        /// (Debian's liburing 2.3 here) and linked to our library.
        mod system_header {
            use super::{run_c_test, Header};
            pub(super) const LISTED: &[&str] = &[$($(first_of!($name, $also),)?)*];
            $($(
                #[test]
                fn $name() {
                    run_c_test(first_of!($name, $also), Header::Debian);
                }
            )?)*
        }
    };
}

c_tests! {
    auto_ring_fd,
    buf_ring + system_header,
    buf_ring_setup,
    cancel + system_header,
    close_ring_fd,
    cq_overflow + system_header,
    eventfd + system_header,
    exit_elsewhere,
    fixed + system_header,
    holder_exit,
    link + system_header,
    nop + system_header,
    peek_batch + system_header,
    poll + system_header,
    probe + system_header,
    register_misc + system_header,
    ring_fd + system_header,
    rw + system_header,
    setup + system_header,
    setup_restrict,
    socket + system_header,
    sq_array + system_header,
    sq_full + system_header,
    sqpoll + system_header,
    stats_abi,
    submit_wait + system_header,
    threads + system_header,
    timeout + system_header,
    version,
    wait_batch_equiv,
    wait_timeout + system_header,
}

/// Every `c_tests/core/*.c` is in the list above, so none is silently
/// left out, and every entry has its program.
#[test]
fn all_c_files_are_listed() {
    let dir = common::repo().join("c_tests/core");
    let mut missing = Vec::new();
    for entry in fs::read_dir(&dir).expect("read c_tests/core/") {
        let path = entry.expect("dir entry").path();
        if !path.is_file() || path.extension().and_then(|e| e.to_str()) != Some("c") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if !C_TESTS.contains(&stem.as_str()) {
            missing.push(stem);
        }
    }
    assert!(
        missing.is_empty(),
        "c_tests/core/*.c not listed in this driver (c_tests.rs): {missing:?}"
    );
    for name in C_TESTS {
        assert!(
            dir.join(format!("{name}.c")).is_file(),
            "c_tests.rs lists {name} but c_tests/core/{name}.c does not exist"
        );
    }
    assert!(
        ALSO.iter().all(|a| *a == "system_header"),
        "c_tests.rs: `name + X` knows only X = system_header: {ALSO:?}"
    );
    assert_eq!(system_header::LISTED.len(), ALSO.len());
}
