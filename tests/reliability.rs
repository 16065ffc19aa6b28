//! The reliability suite: rsuring under bad input, sanitizers, fuzzing,
//! stress, CQ overflow and signals, and real Debian programs. One test per
//! area; each compiles and runs its programs from `c_tests/reliability/` (and
//! `fuzz/`) with a timeout and says how long it took.
//!
//! Programs are built and run by the shared harness (`tests/common`):
//! linked to our library through an RPATH directory (checked with `ldd`),
//! run in their own process group with a timeout, without the caller's
//! `RSURING_*` / `LD_*` variables. A test skips (with a message; a failure
//! under `RSURING_STRICT=1`) only when a tool it needs is genuinely absent:
//! valgrind, clang's libFuzzer, Debian's liburing (for the comparisons),
//! the Debian programs. scripts/setup.sh installs all of them; no test
//! installs anything.
//!
//! Timings on the 2-core development machine: bad_input ~15 s, asan_ubsan
//! ~20 s, valgrind ~40 s, fuzz ~60 s (build included), stress ~15 s,
//! overflow_and_signals ~5 s, real_programs ~5 s.
//!
//! `RSURING_BLESS=1 cargo test --release --test reliability bad_input`
//! rewrites the table in docs/bad-input.md from the program's output.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{launch, tail, CProgram, Link, EXIT_SKIP};

/// "liburing 2.3 (Debian)" from the real file name (liburing.so.2.3).
fn debian_liburing_name(path: &Path) -> String {
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let file = real.file_name().unwrap_or_default().to_string_lossy();
    match file.strip_prefix("liburing.so.") {
        Some(v) => format!("liburing {v} (Debian)"),
        None => "liburing (Debian)".to_string(),
    }
}

/// A program of this suite built from `source` at `-O1` (`flags` may
/// raise it), linked to our library unless changed.
fn program(name: &str, source: impl AsRef<Path>, flags: &[&str]) -> CProgram {
    CProgram::new(name, source).opt_level(1).flags(flags)
}

/// Where this suite's programs and their files are.
fn out_dir() -> &'static Path {
    &common::area().bin_dir
}

/// A C program exiting 77 (the kernel lacks something) where the suite
/// expects a run: fine outside strict mode, a failure under it.
fn skip_failure(name: &str, stderr: &str) -> Option<String> {
    let why = stderr.lines().last().unwrap_or("(no reason given)");
    common::skip_or_fail(&format!("{name} exited {EXIT_SKIP}"), why).err()
}

// ---- 1. bad input ----------------------------------------------------------

/// Where the bad-input table is documented (its only table).
const BAD_INPUT_DOC: &str = "docs/bad-input.md";

/// The table rows of the document.
fn doc_table(doc: &str) -> Vec<String> {
    doc.lines()
        .filter(|l| l.starts_with('|'))
        .map(str::to_string)
        .collect()
}

/// The document with its table replaced by `table`.
fn doc_with_table(doc: &str, table: &[String]) -> String {
    let first = doc
        .find("\n|")
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{BAD_INPUT_DOC} has no table"));
    let mut last = first;
    for line in doc[first..].split_inclusive('\n') {
        if !line.starts_with('|') {
            break;
        }
        last += line.len();
    }
    let mut out = String::new();
    out.push_str(&doc[..first]);
    for row in table {
        out.push_str(row);
        out.push('\n');
    }
    out.push_str(&doc[last..]);
    out
}

/// Drops the reference column (the 4th) of a table row.
fn three_columns(row: &str) -> String {
    let cells: Vec<&str> = row.split(" | ").collect();
    if cells.len() >= 4 {
        format!("{} |", cells[..3].join(" | "))
    } else {
        row.to_string()
    }
}

#[test]
fn bad_input() {
    let bin = program("bad_input", "c_tests/reliability/bad_input.c", &[])
        .link(Link::Dlopen)
        .build();
    let mut cmd = launch(&bin, &["--lib"])
        .arg(&common::area().lib)
        .arg("--markdown")
        .timeout(Duration::from_secs(240));
    let reference = common::debian_liburing();
    match &reference {
        Some(r) => {
            cmd = cmd
                .arg("--ref")
                .arg(r)
                .arg("--ref-name")
                .arg(debian_liburing_name(r));
        }
        None => common::skip(
            "bad_input: the comparison column (Debian's liburing)",
            "no Debian liburing.so.2 (Debian package liburing2)",
        ),
    }
    let r = cmd.run();
    println!("bad_input: {:.1}s", r.elapsed.as_secs_f64());
    for line in r.stderr.lines() {
        println!("    {line}");
    }
    assert!(r.ok(), "bad_input failed: {}", r.describe());

    let table: Vec<String> = r.stdout.lines().map(str::to_string).collect();
    let doc_path = common::repo().join(BAD_INPUT_DOC);
    let doc = fs::read_to_string(&doc_path).expect("read the bad-input document");
    if std::env::var_os("RSURING_BLESS").is_some() {
        fs::write(&doc_path, doc_with_table(&doc, &table)).expect("write the bad-input document");
        println!(
            "bad_input: {BAD_INPUT_DOC} table rewritten ({} rows)",
            table.len() - 2
        );
        return;
    }
    let documented = doc_table(&doc);
    let (ours, theirs): (Vec<String>, Vec<String>) = if reference.is_some() {
        (table, documented)
    } else {
        (
            table.iter().map(|r| three_columns(r)).collect(),
            documented.iter().map(|r| three_columns(r)).collect(),
        )
    };
    if ours != theirs {
        let diff: Vec<String> = ours
            .iter()
            .filter(|r| !theirs.contains(r))
            .map(|r| format!("+ {r}"))
            .chain(
                theirs
                    .iter()
                    .filter(|r| !ours.contains(r))
                    .map(|r| format!("- {r}")),
            )
            .take(40)
            .collect();
        panic!(
            "{BAD_INPUT_DOC}'s table is out of date (regenerate with \
             RSURING_BLESS=1 cargo test --release --test reliability bad_input):\n{}",
            diff.join("\n")
        );
    }
    println!(
        "bad_input: {} cases, {BAD_INPUT_DOC} table in sync",
        ours.len() - 2
    );
}

// ---- 2. sanitizers -----------------------------------------------------------

/// The C scenario tests (c_tests/core/*.c), as the c_tests driver runs them.
fn c_test_sources() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(common::repo().join("c_tests/core"))
        .expect("read c_tests/core/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "c"))
        .collect();
    v.sort();
    v
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// One error or leak report of a sanitizer / valgrind log, and whether any
/// of its frames is in rsuring (librsuring.so or one of our .rs sources).
struct Report {
    text: String,
    in_rsuring: bool,
    is_leak: bool,
}

fn frames_in_rsuring(text: &str) -> bool {
    text.contains("librsuring.so") || text.contains("rsuring::") || text.contains(".rs:")
}

/// Splits an LSan report into its leak blocks.
fn lsan_leaks(stderr: &str) -> Vec<Report> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in stderr.lines() {
        if line.starts_with("Direct leak") || line.starts_with("Indirect leak") {
            if let Some(t) = cur.take() {
                out.push(t);
            }
            cur = Some(String::new());
        } else if line.starts_with("SUMMARY:") {
            if let Some(t) = cur.take() {
                out.push(t);
            }
        }
        if let Some(t) = cur.as_mut() {
            t.push_str(line);
            t.push('\n');
        }
    }
    out.extend(cur);
    out.into_iter()
        .map(|text| Report {
            in_rsuring: frames_in_rsuring(&text),
            is_leak: true,
            text,
        })
        .collect()
}

/// ASan + UBSan: every c_tests/core program built with
/// -fsanitize=address,undefined and linked to our (uninstrumented) library;
/// ASan's interceptors still see every malloc/free the library makes, and
/// LeakSanitizer reports leaks with the library's frames symbolized. Leaks
/// whose stack has no frame in rsuring are reported but tolerated.
#[test]
fn asan_ubsan() {
    let start = Instant::now();
    let mut failures = Vec::new();
    let mut outside = 0;
    for source in c_test_sources() {
        let name = stem(&source);
        let bin = program(&format!("asan_{name}"), &source, SANITIZERS).build();
        let mut asan = String::from("detect_leaks=1:halt_on_error=1:exitcode=86");
        if name == "setup" {
            // setup.c checks MADV_DONTFORK by touching an unmapped ring in
            // a forked child and expecting SIGSEGV; ASan must let it die.
            asan.push_str(":handle_segv=0");
        }
        let r = launch(&bin, &[])
            .cwd(out_dir())
            .var("ASAN_OPTIONS", &asan)
            .var("LSAN_OPTIONS", "exitcode=87")
            .var("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
            .timeout(Duration::from_secs(60))
            .run();
        let leaks = lsan_leaks(&r.stderr);
        let ours = leaks.iter().filter(|l| l.in_rsuring).count();
        outside += leaks.len() - ours;
        let status = match r.code {
            _ if r.timed_out => "FAILED",
            Some(0) => "ok",
            Some(EXIT_SKIP) => match skip_failure(&format!("asan_ubsan {name}"), &r.stderr) {
                None => "skipped",
                Some(failure) => {
                    failures.push(failure);
                    "FAILED (skipped under strict mode)"
                }
            },
            Some(87) if ours == 0 => "ok (leaks outside rsuring only)",
            _ => "FAILED",
        };
        println!(
            "asan_ubsan {name} ... {status} ({:.2}s)",
            r.elapsed.as_secs_f64()
        );
        if status == "FAILED" {
            failures.push(format!("{name}: {}", r.describe()));
        }
        for l in leaks.iter().filter(|l| !l.in_rsuring) {
            println!("    leak outside rsuring (tolerated):\n{}", l.text);
        }
    }
    // The suite's own multi-threaded programs too: the shared-SQPOLL
    // registry under 8 threads (a shorter stress run), overflow and signals.
    for (name, source, args, defs) in [
        (
            "stress",
            "c_tests/reliability/stress.c",
            &["8", "300", "3"][..],
            &[][..],
        ),
        (
            "overflow_signals",
            "c_tests/reliability/overflow_signals.c",
            &[][..],
            &["-DWITH_RSURING"][..],
        ),
    ] {
        let bin = program(&format!("asan_{name}"), source, SANITIZERS)
            .flags(defs)
            .build();
        let r = launch(&bin, args)
            .var("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1:exitcode=86")
            .var("LSAN_OPTIONS", "exitcode=87")
            .var("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
            .timeout(Duration::from_secs(120))
            .run();
        let leaks = lsan_leaks(&r.stderr);
        let ok =
            r.ok() || (r.code == Some(87) && !r.timed_out && leaks.iter().all(|l| !l.in_rsuring));
        println!(
            "asan_ubsan {name} (reliability) ... {} ({:.2}s)",
            if ok { "ok" } else { "FAILED" },
            r.elapsed.as_secs_f64()
        );
        if !ok {
            failures.push(format!("{name}: {}", r.describe()));
        }
    }
    println!(
        "asan_ubsan: {} programs, {} failures, {outside} leaks outside rsuring, {:.1}s",
        c_test_sources().len() + 2,
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The compiler flags of the ASan + UBSan builds.
const SANITIZERS: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=undefined",
    "-fno-omit-frame-pointer",
];

/// c_tests/core programs not run under valgrind, and why.
const VALGRIND_SKIP: &[(&str, &str)] = &[(
    "wait_timeout",
    "asserts that completions land inside millisecond wait windows; \
     valgrind's 20-50x slowdown makes that fail by timing, not by memory",
)];

/// Splits a valgrind log into error and leak records ("==PID== X" blocks).
fn valgrind_reports(log: &str) -> Vec<Report> {
    let mut blocks: Vec<String> = Vec::new();
    let mut cur = String::new();
    for line in log.lines() {
        let body = match line.find("== ") {
            Some(i) if line.starts_with("==") => &line[i + 3..],
            _ => continue,
        };
        if body.trim().is_empty() {
            if !cur.is_empty() {
                blocks.push(std::mem::take(&mut cur));
            }
            continue;
        }
        cur.push_str(body);
        cur.push('\n');
    }
    if !cur.is_empty() {
        blocks.push(cur);
    }
    blocks
        .into_iter()
        .filter(|b| {
            VALGRIND_ERROR_STARTS.iter().any(|k| b.starts_with(k))
                || b.contains(" lost in loss record ")
        })
        .filter(|b| !b.contains("possibly lost") && !b.contains("still reachable"))
        .map(|text| Report {
            in_rsuring: frames_in_rsuring(&text),
            is_leak: text.contains(" lost in loss record "),
            text,
        })
        .collect()
}

/// How memcheck's error records begin (a program killed by a signal also
/// prints a stack, which is not an error record: its exit status tells).
const VALGRIND_ERROR_STARTS: &[&str] = &[
    "Invalid ",
    "Conditional jump",
    "Use of uninitialised",
    "Syscall param",
    "Mismatched free",
    "Source and destination overlap",
    "Argument ",
    "Jump to the invalid address",
];

/// valgrind memcheck over the c_tests/core programs (all but VALGRIND_SKIP),
/// linked to our library: no invalid access or uninitialised use anywhere,
/// and no definite/indirect leak with a frame in rsuring. The suppressions
/// in c_tests/reliability/valgrind.supp cover one thing only: memcheck cannot
/// see data the kernel writes into user buffers for io_uring requests, so a
/// test program checking that data looks like it branches on uninitialised
/// memory (see the file).
#[test]
fn valgrind() {
    if !common::require_tool("valgrind", "valgrind", "valgrind") {
        return;
    }
    let start = Instant::now();
    let supp = common::repo().join("c_tests/reliability/valgrind.supp");
    let mut failures = Vec::new();
    let mut count = 0;
    for source in c_test_sources() {
        let name = stem(&source);
        if let Some((_, why)) = VALGRIND_SKIP.iter().find(|(n, _)| *n == name) {
            println!("valgrind {name} ... not run: {why}");
            continue;
        }
        count += 1;
        // The suppressions match the test binaries by directory.
        let built = program(&format!("valgrind_bin/{name}"), &source, &[]).build();
        let valgrind = launch(
            "valgrind",
            &[
                "--error-exitcode=99",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite,indirect",
                "--show-leak-kinds=definite,indirect",
            ],
        )
        .arg(format!("--suppressions={}", supp.display()))
        .arg(&built)
        .cwd(out_dir())
        .timeout(Duration::from_secs(120));
        let mut r = valgrind.run();
        let mut reports = valgrind_reports(&r.stderr);
        if !r.ok() && !r.skipped() && reports.is_empty() {
            // No memory error, yet the program failed: its own timing
            // assertions under valgrind's slowdown. Memory is what this
            // test checks (the c_tests driver checks behaviour): one more try.
            println!("valgrind {name}: failed without a memcheck error, retrying once");
            r = valgrind.run();
            reports = valgrind_reports(&r.stderr);
        }
        let blocking: Vec<&Report> = reports
            .iter()
            .filter(|x| !x.is_leak || x.in_rsuring)
            .collect();
        let tolerated = reports.len() - blocking.len();
        let status = match r.code {
            _ if r.timed_out => "FAILED",
            Some(0) if blocking.is_empty() => "ok",
            Some(EXIT_SKIP) if blocking.is_empty() => {
                match skip_failure(&format!("valgrind {name}"), &r.stderr) {
                    None => "skipped",
                    Some(failure) => {
                        failures.push(failure);
                        "FAILED (skipped under strict mode)"
                    }
                }
            }
            Some(99) if blocking.is_empty() => "ok (leaks outside rsuring only)",
            _ => "FAILED",
        };
        println!(
            "valgrind {name} ... {status} ({:.2}s)",
            r.elapsed.as_secs_f64()
        );
        for x in reports.iter().filter(|x| x.is_leak && !x.in_rsuring) {
            println!("    leak outside rsuring (tolerated):\n{}", x.text);
        }
        if tolerated > 0 {
            println!("    {tolerated} leak(s) outside rsuring tolerated");
        }
        if status == "FAILED" {
            let details: Vec<&str> = blocking.iter().map(|x| x.text.as_str()).collect();
            failures.push(format!(
                "{name}: {}\n--- valgrind ---\n{}",
                r.describe(),
                tail(&details.join("\n"), 8000)
            ));
        }
    }
    println!(
        "valgrind: {count} programs, {} failures, {:.1}s",
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---- 3. fuzzing ----------------------------------------------------------------

/// A seeded libFuzzer run of fuzz/ring_ops.c (at most ~45 s of fuzzing).
#[test]
fn fuzz_seeded() {
    let r = common::launch::fuzz_script(&[
        "-seed=1",
        "-runs=4000",
        "-max_total_time=45",
        "-timeout=20",
    ]);
    if r.skipped() {
        common::skip("fuzz_seeded", r.stderr.trim());
        return;
    }
    let stats: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("stat::") || l.starts_with("Done ") || l.contains("DONE "))
        .collect();
    println!(
        "fuzz_seeded: {:.1}s (build included)",
        r.elapsed.as_secs_f64()
    );
    for s in &stats {
        println!("    {s}");
    }
    assert!(r.ok(), "fuzz run failed: {}", r.describe());
}

// ---- 4. stress ------------------------------------------------------------------

#[test]
fn stress() {
    let bin = program("stress", "c_tests/reliability/stress.c", &["-O2"]).build();
    let r = launch(&bin, &["8", "2000", "1"])
        .timeout(Duration::from_secs(300))
        .run();
    println!("{}", r.stdout.trim());
    assert!(r.ok(), "stress failed: {}", r.describe());
}

// ---- 5. overflow and signals -------------------------------------------------------

#[test]
fn overflow_and_signals() {
    let source = "c_tests/reliability/overflow_signals.c";
    let ours = program("overflow_signals", source, &["-O2", "-DWITH_RSURING"]).build();
    let r = launch(&ours, &[]).timeout(Duration::from_secs(120)).run();
    println!("overflow_and_signals: {:.1}s", r.elapsed.as_secs_f64());
    print!("{}", r.stdout);
    assert!(
        r.ok(),
        "overflow_signals on rsuring failed: {}",
        r.describe()
    );

    if common::debian_liburing().is_none() || !Path::new(common::DEBIAN_HEADER).exists() {
        common::skip(
            "overflow_and_signals: the comparison with Debian's liburing",
            "Debian's liburing is not installed (Debian packages liburing2, liburing-dev)",
        );
        return;
    }
    let theirs = program("overflow_signals.liburing", source, &["-O2"])
        .debian()
        .build();
    let l = launch(&theirs, &[]).timeout(Duration::from_secs(120)).run();
    assert!(
        l.ok(),
        "overflow_signals on Debian's liburing failed (the kernel, not rsuring?): {}",
        l.describe()
    );
    let missing: Vec<&str> = l
        .stdout
        .lines()
        .filter(|line| !r.stdout.lines().any(|o| o == *line))
        .collect();
    assert!(
        missing.is_empty(),
        "rsuring behaves differently from liburing; liburing's lines not matched:\n{}\n--- rsuring ---\n{}",
        missing.join("\n"),
        r.stdout
    );
    println!(
        "overflow_and_signals: all {} lines of Debian's liburing run match",
        l.stdout.lines().count()
    );
}

// ---- 6. real programs -----------------------------------------------------------------

#[test]
fn real_programs() {
    let work = out_dir().join("real_programs");
    let _ = fs::remove_dir_all(&work);
    let r = launch("bash", &[])
        .arg(common::repo().join("scripts/real_programs.sh"))
        .arg(&common::area().lib)
        .arg(&work)
        .timeout(Duration::from_secs(300))
        .run();
    print!("{}", r.stdout);
    if r.skipped() {
        // Some or all of the programs are missing (the lines say which);
        // those that ran passed.
        let missing: Vec<&str> = r.stderr.lines().filter(|l| l.contains("skipped")).collect();
        common::skip("real_programs", &missing.join("; "));
        return;
    }
    println!("real_programs: {:.1}s", r.elapsed.as_secs_f64());
    assert!(r.ok(), "real programs failed: {}", r.describe());
}
