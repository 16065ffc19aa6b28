//! The SQE preparation helpers of include/liburing.h and the table they are
//! generated from (include/prep/prep.table):
//!
//! - the generated section of the header is what the table gives
//!   (`RSURING_BLESS=1 cargo test --test prep_table` rewrites it);
//! - the generator's view of struct io_uring_sqe is the compiler's;
//! - every helper fills all 128 bytes of an SQE exactly as the table says;
//! - every helper that liburing 2.3 has (Debian's /usr/include/liburing.h)
//!   fills the SQE byte for byte as that header's does;
//! - by hand, with a liburing checkout in RSURING_UPSTREAM_LIBURING (it is
//!   not reachable from CI): every helper of upstream's header fills the SQE
//!   as upstream's does, from a raw SQE and from an initialized one
//!   (`cargo test --release --test prep_table -- --ignored`);
//! - by hand, likewise: the hand-written inline helpers (peek, get_sqe,
//!   get_sqe128, for_each_cqe, cmsg walking, eventfd toggle, buffer rings,
//!   ...) return and write the same as upstream's on pseudo-random ring
//!   states (c_tests/prep_table/compare.c).
//!
//! Each comparison runs every helper with three argument sets (wide values,
//! all ones, small numbers) on an SQE filled with 0xa5, so a field written
//! that should not be, or not written that should be, shows.

mod common;

#[path = "../include/prep/dump.rs"]
mod dump;
#[path = "../include/prep/gen.rs"]
mod gen;
#[path = "../include/prep/table.rs"]
mod table;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use table::{Helper, Table};

fn table() -> Table {
    let path = common::repo().join("include/prep/prep.table");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    table::parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// The environment asks that nothing be skipped (CI).
fn strict() -> bool {
    std::env::var_os("RSURING_STRICT").is_some_and(|v| v == "1")
}

/// A directory for one test's programs, under the target directory.
fn work_dir(name: &str) -> PathBuf {
    let dir = common::profile_dir().join("prep_table").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}

/// Compiles `sources` (C files, or objects) into `out`, with `-c` among
/// `flags` for an object.
fn compile(out: &Path, sources: &[&Path], include: Option<&Path>, flags: &[&str]) {
    let mut cc = common::c_compiler(1);
    cc.args(["-std=gnu11", "-Wall", "-Wextra", "-Werror"]);
    if let Some(include) = include {
        cc.arg("-I").arg(include);
    }
    cc.args(flags).arg("-o").arg(out).args(sources);
    let built = cc.output().expect("run the C compiler");
    assert!(
        built.status.success(),
        "{sources:?} do not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
}

/// Runs a program, returning its standard output; it must exit 0.
fn run(bin: &Path) -> String {
    let run = Command::new(bin).output().expect("run the program");
    let stdout = String::from_utf8(run.stdout).expect("utf-8 output");
    assert!(
        run.status.success(),
        "{} failed ({:?}):\n{stdout}",
        bin.display(),
        run.status
    );
    stdout
}

/// Writes `source` to `dir/name.c`, builds it with `-Ddefine`s and runs it
/// (a "define" `RSURING_NO_ERROR=W` stands for `-Wno-error=W` instead).
fn build_and_run(
    dir: &Path,
    name: &str,
    source: &str,
    include: Option<&Path>,
    defines: &[&str],
) -> String {
    let src = dir.join(format!("{name}.c"));
    let bin = dir.join(name);
    fs::write(&src, source).expect("write C source");
    let flags: Vec<String> = defines
        .iter()
        .map(|d| match d.strip_prefix("RSURING_NO_ERROR=") {
            Some(warning) => format!("-Wno-error={warning}"),
            None => format!("-D{d}"),
        })
        .collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    compile(&bin, &[&src], include, &flags);
    run(&bin)
}

/// `name set` -> the SQE bytes (hex), from a dump program's output.
fn sqes(output: &str) -> Sqes {
    output
        .lines()
        .map(|l| {
            let mut parts = l.split(' ');
            let name = parts.next().expect("name").to_string();
            let set = parts.next().and_then(|s| s.chars().next()).expect("set");
            ((name, set), parts.next().expect("bytes").to_string())
        })
        .collect()
}

/// The fields whose bytes differ between two hex dumps.
fn differing_fields(a: &str, b: &str) -> String {
    fn byte(s: &str, i: usize) -> &str {
        &s[2 * i..2 * i + 2]
    }
    let differ: Vec<usize> = (0..a.len() / 2)
        .filter(|&i| byte(a, i) != byte(b, i))
        .collect();
    let mut names: Vec<String> = table::SQE_FIELDS
        .iter()
        .filter(|f| {
            differ
                .iter()
                .any(|&i| (f.offset..f.offset + f.size).contains(&i))
        })
        .map(|f| f.name.to_string())
        .collect();
    if differ.iter().any(|&i| i >= 64) {
        names.push("bytes 64..128".into());
    }
    names.join("/")
}

/// An SQE dump: (helper, argument set) -> bytes.
type Sqes = BTreeMap<(String, char), String>;

/// Every (helper, argument set) of `ours` must be in `theirs` with the same
/// bytes, except those `excused` lists (helper, set, reason).
fn compare(what: &str, ours: &Sqes, theirs: &Sqes, excused: &[(&str, char, &str)]) {
    let mut bad = Vec::new();
    for ((name, set), bytes) in ours {
        if excused.iter().any(|(n, s, _)| n == name && s == set) {
            continue;
        }
        match theirs.get(&(name.clone(), *set)) {
            Some(t) if t == bytes => {}
            Some(t) => bad.push(format!(
                "{name} [{set}] differs in {}:\n  ours   {bytes}\n  theirs {t}",
                differing_fields(bytes, t)
            )),
            None => bad.push(format!("{name} [{set}] missing from {what}")),
        }
    }
    assert!(
        bad.is_empty(),
        "{what}: {} SQEs differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
    eprintln!(
        "{what}: {} SQEs identical ({} excused)",
        ours.len() - excused.len(),
        excused.len()
    );
}

/// Names of the functions a header defines inline, read from its text.
fn inline_functions(header: &str) -> BTreeSet<String> {
    let lines: Vec<&str> = header.lines().collect();
    let mut names = BTreeSet::new();
    for (i, line) in lines.iter().enumerate() {
        let starts = ["static inline", "IOURINGINLINE", "_LOCAL_INLINE"];
        if !starts.iter().any(|s| line.starts_with(s)) || line.contains("#define") {
            continue;
        }
        let decl = if line.contains('(') {
            line
        } else {
            lines.get(i + 1).copied().unwrap_or("")
        };
        let Some(open) = decl.find('(') else { continue };
        let name: String = decl[..open]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        names.insert(name);
    }
    names
}

fn helpers_named<'a>(table: &'a Table, names: &BTreeSet<String>) -> Vec<&'a Helper> {
    table
        .helpers
        .iter()
        .filter(|h| names.contains(&h.name))
        .collect()
}

/// The generated section of include/liburing.h: (text before, section, after).
fn split_header(header: &str) -> (&str, &str, &str) {
    let begin = header
        .find(gen::SECTION_BEGIN)
        .expect("generated section begin marker");
    let end = header
        .find(gen::SECTION_END)
        .expect("generated section end marker")
        + gen::SECTION_END.len();
    (&header[..begin], &header[begin..end], &header[end..])
}

#[test]
fn generated_section_is_current() {
    let path = common::repo().join("include/liburing.h");
    let header = fs::read_to_string(&path).expect("read include/liburing.h");
    let generated = gen::header_section(&table());
    let (before, committed, after) = split_header(&header);
    if committed == generated {
        return;
    }
    if std::env::var_os("RSURING_BLESS").is_some() {
        fs::write(&path, format!("{before}{generated}{after}")).expect("write include/liburing.h");
        return;
    }
    panic!(
        "the prep helpers in include/liburing.h are not what include/prep/prep.table gives: \
         run `RSURING_BLESS=1 cargo test --test prep_table` and commit the header"
    );
}

#[test]
fn field_offsets_are_the_compilers() {
    let dir = work_dir("layout");
    let include = common::repo().join("include");
    let out = build_and_run(&dir, "layout", &dump::layout_program(), Some(&include), &[]);
    let mut wrong = Vec::new();
    for (line, f) in out.lines().zip(table::SQE_FIELDS) {
        let want = format!("{} {} {}", f.name, f.offset, f.size);
        if line != want {
            wrong.push(format!("generator says `{want}`, compiler `{line}`"));
        }
    }
    assert_eq!(out.lines().count(), table::SQE_FIELDS.len());
    assert!(
        wrong.is_empty(),
        "include/prep/gen.rs SQE_FIELDS is wrong:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_helper_does_what_the_table_says() {
    let table = table();
    let all: Vec<&Helper> = table.helpers.iter().collect();
    let dir = work_dir("table");
    let include = common::repo().join("include");
    let helper_prog = dump::dump_program(&table, &all, dump::Fill::Helper);
    let table_prog = dump::dump_program(&table, &all, dump::Fill::Table);
    for init in ["0", "1"] {
        let define = format!("RSURING_DUMP_INIT={init}");
        let ours = build_and_run(
            &dir,
            &format!("helpers{init}"),
            &helper_prog,
            Some(&include),
            &[&define],
        );
        let meant = build_and_run(
            &dir,
            &format!("table{init}"),
            &table_prog,
            Some(&include),
            &[&define],
        );
        let what = format!("the table's meaning (initialized SQE: {init})");
        compare(&what, &sqes(&ours), &sqes(&meant), &[]);
    }
}

/// Where liburing 2.3's helpers differ from 2.15's, which rsuring follows.
const DIFFERS_FROM_2_3: &[(&str, char, &str)] = &[
    // 2.3 stored slot + 1 for IORING_FILE_INDEX_ALLOC as well (0, "no
    // slot"); 2.15 passes IORING_FILE_INDEX_ALLOC through, asking the kernel
    // to pick a free slot, as io_uring_prep_openat(3) etc. document.
    // Argument set B passes IORING_FILE_INDEX_ALLOC.
    ("io_uring_prep_accept_direct", 'B', ALLOC_PASSED_THROUGH),
    ("io_uring_prep_openat_direct", 'B', ALLOC_PASSED_THROUGH),
    ("io_uring_prep_openat2_direct", 'B', ALLOC_PASSED_THROUGH),
    ("io_uring_prep_socket_direct", 'B', ALLOC_PASSED_THROUGH),
];
const ALLOC_PASSED_THROUGH: &str = "IORING_FILE_INDEX_ALLOC is passed through since liburing 2.4";

/// Runs `prog` against rsuring's header from an initialized SQE (what
/// io_uring_get_sqe() hands out) and from a raw one, and returns for each
/// helper the run that models a fresh SQE being prepared: initialized for
/// helpers that set an opcode (liburing before 2.5 cleared those fields in
/// every such helper), raw for those that only set fields of an SQE the
/// application already prepared.
fn ours_as_prepared(table: &Table, dir: &Path, prog: &str) -> Sqes {
    let include = common::repo().join("include");
    let init = sqes(&build_and_run(
        dir,
        "ours1",
        prog,
        Some(&include),
        &["RSURING_DUMP_INIT=1"],
    ));
    let raw = sqes(&build_and_run(
        dir,
        "ours0",
        prog,
        Some(&include),
        &["RSURING_DUMP_INIT=0"],
    ));
    let sets_opcode = |name: &str| {
        table
            .helpers
            .iter()
            .any(|h| h.name == name && h.opcode(table).is_some())
    };
    init.into_iter()
        .map(|(key, bytes)| {
            let bytes = if sets_opcode(&key.0) {
                bytes
            } else {
                raw[&key].clone()
            };
            (key, bytes)
        })
        .collect()
}

#[test]
fn helpers_fill_sqes_like_liburing_2_3() {
    let system = Path::new("/usr/include/liburing.h");
    let Ok(text) = fs::read_to_string(system) else {
        assert!(
            !strict(),
            "RSURING_STRICT=1: {} is missing (install liburing-dev)",
            system.display()
        );
        eprintln!(
            "skipped: {} is missing (install liburing-dev)",
            system.display()
        );
        return;
    };
    let table = table();
    let theirs_names = inline_functions(&text);
    let helpers = helpers_named(&table, &theirs_names);
    let missing: Vec<&String> = theirs_names
        .iter()
        .filter(|n| n.starts_with("io_uring_prep_") || n.starts_with("io_uring_sqe_set_"))
        .filter(|n| !table.helpers.iter().any(|h| &h.name == *n))
        .collect();
    assert!(
        missing.is_empty(),
        "liburing 2.3 helpers missing from the table: {missing:?}"
    );

    let dir = work_dir("liburing-2.3");
    let prog = dump::dump_program(&table, &helpers, dump::Fill::Helper);
    let ours = ours_as_prepared(&table, &dir, &prog);
    // 2.3 has no io_uring_initialize_sqe(): its helpers clear the SQE
    // 2.3 declared a few pointer parameters without the `const` that
    // later headers (and the table) give them; the calls pass the same
    // values, so that warning is not an error for this one build.
    let theirs = sqes(&build_and_run(
        &dir,
        "theirs",
        &prog,
        None,
        &[
            "RSURING_DUMP_INIT=0",
            "RSURING_NO_ERROR=discarded-qualifiers",
        ],
    ));
    compare("liburing 2.3's header", &ours, &theirs, DIFFERS_FROM_2_3);
}

/// A configured copy of a liburing checkout, removed when dropped.
struct Upstream {
    tree: PathBuf,
}

impl Upstream {
    /// `tag` keeps the copies of tests running at once apart.
    fn configure(checkout: &Path, tag: &str) -> Upstream {
        let name = format!("rsuring-{tag}-upstream-{}", std::process::id());
        let tree = std::env::temp_dir().join(name);
        let _ = fs::remove_dir_all(&tree);
        let copy = Command::new("cp")
            .arg("-a")
            .arg(checkout)
            .arg(&tree)
            .status()
            .expect("cp");
        let upstream = Upstream { tree };
        assert!(copy.success(), "copying {} failed", checkout.display());
        let conf = Command::new("./configure")
            .current_dir(&upstream.tree)
            .output()
            .expect("configure");
        assert!(
            conf.status.success(),
            "configure failed:\n{}",
            String::from_utf8_lossy(&conf.stdout)
        );
        upstream
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.tree);
    }
}

#[test]
#[ignore = "needs a liburing checkout in RSURING_UPSTREAM_LIBURING (not reachable from CI)"]
fn helpers_fill_sqes_like_upstream() {
    let checkout =
        PathBuf::from(std::env::var_os("RSURING_UPSTREAM_LIBURING").expect(
            "set RSURING_UPSTREAM_LIBURING to a liburing checkout (e.g. /work/ref/liburing)",
        ));
    let upstream = Upstream::configure(&checkout, "prep");
    let their_include = upstream.tree.join("src/include");
    let text = fs::read_to_string(their_include.join("liburing.h")).expect("upstream liburing.h");
    let table = table();
    let theirs_names = inline_functions(&text);
    let missing: Vec<&String> = theirs_names
        .iter()
        .filter(|n| n.contains("_prep_") || n.starts_with("io_uring_sqe_set_"))
        .filter(|n| n.as_str() != "__io_uring_prep_poll_mask")
        .filter(|n| !table.helpers.iter().any(|h| &h.name == *n))
        .collect();
    assert!(
        missing.is_empty(),
        "upstream helpers missing from the table: {missing:?}"
    );
    let helpers = helpers_named(&table, &theirs_names);
    assert_eq!(
        helpers.len(),
        table.helpers.len(),
        "the table has helpers upstream does not"
    );

    let dir = work_dir("upstream");
    let include = common::repo().join("include");
    let prog = dump::dump_program(&table, &helpers, dump::Fill::Helper);
    for init in ["0", "1"] {
        let define = format!("RSURING_DUMP_INIT={init}");
        let ours = build_and_run(
            &dir,
            &format!("ours{init}"),
            &prog,
            Some(&include),
            &[&define],
        );
        let theirs = build_and_run(
            &dir,
            &format!("theirs{init}"),
            &prog,
            Some(&their_include),
            &[&define],
        );
        let what = format!("upstream's header (initialized SQE: {init})");
        compare(&what, &sqes(&ours), &sqes(&theirs), &[]);
    }
}

#[test]
#[ignore = "needs a liburing checkout in RSURING_UPSTREAM_LIBURING (not reachable from CI)"]
fn inline_helpers_behave_like_upstream() {
    let checkout =
        PathBuf::from(std::env::var_os("RSURING_UPSTREAM_LIBURING").expect(
            "set RSURING_UPSTREAM_LIBURING to a liburing checkout (e.g. /work/ref/liburing)",
        ));
    let upstream = Upstream::configure(&checkout, "inline");
    let their_include = upstream.tree.join("src/include");
    let src = common::repo().join("c_tests/prep_table");
    let dir = work_dir("inline-helpers");
    let wrappers = src.join("wrappers.c");
    let (ours, theirs, bin) = (
        dir.join("ours.o"),
        dir.join("theirs.o"),
        dir.join("compare"),
    );
    let include = common::repo().join("include");
    compile(
        &ours,
        &[&wrappers],
        Some(&include),
        &["-c", "-DWRAP_PREFIX=ours_"],
    );
    // upstream's header is not -Wextra clean; its warnings are not ours to fix
    compile(
        &theirs,
        &[&wrappers],
        Some(&their_include),
        &["-c", "-w", "-DWRAP_PREFIX=theirs_"],
    );
    // With the helper pair's bodies, like every C test program (what it
    // does not call is dropped at link time: this program links no liburing).
    let helpers = common::repo().join("c_tests/rsuring_test.c");
    compile(
        &bin,
        &[&src.join("compare.c"), &helpers, &ours, &theirs],
        Some(&include),
        &["-D_GNU_SOURCE", "-pthread"]
            .iter()
            .chain(common::cbuild::GC_FLAGS)
            .copied()
            .collect::<Vec<_>>(),
    );
    eprint!("{}", run(&bin));
}
